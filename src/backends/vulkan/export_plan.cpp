#include "backends/vulkan/export_plan.h"

#include <algorithm>
#include <cstdio>

#include "backends/vulkan/kernels.h"
#include "backends/vulkan/placement.h"
#include "backends/vulkan/target.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

using Location = Placed<std::string>;  // buffers by name: "arena", "input0", "weights"

// The threads per group the kernel notes above its entry point.
std::array<uint32_t, 3> threads_of(const std::string& src, const std::string& device, const std::string& key) {
  const size_t at = src.rfind(key);
  std::array<uint32_t, 3> t{1, 1, 1};
  const char* from = at == std::string::npos ? nullptr : src.c_str() + at + key.size();
  if (!from || (std::sscanf(from, "%u x %u x %u", &t[0], &t[1], &t[2]) != 3 && std::sscanf(from, "%u, %u, %u", &t[0], &t[1], &t[2]) != 3))
    throw Error(ErrorKind::internal, cat(device, ": a kernel without its group size"));
  return t;
}

std::string shape_json(const std::vector<int64_t>& shape) {
  std::vector<std::string> d;
  for (int64_t x : shape) d.push_back(std::to_string(x));
  return cat("[", join(d, ", "), "]");
}

std::string tensor_json(const ExportTensor& t) {
  return cat("{\"name\": ", json_quote(t.name), ", \"buffer\": ", json_quote(t.buffer), ", \"offset\": ", t.offset, ", \"dtype\": \"", dtype_name(t.dtype),
             "\", \"shape\": ", shape_json(t.shape), "}");
}

}  // namespace

ExportedPlan export_plan(const ir::Graph& lir, const std::string& device, const std::string& ext, const std::string& threads_key,
                         const ExportOptions& options) {
  ExportedPlan p;
  p.graph = lir.name;
  if (!options.own_buffers) p.buffers.push_back({"arena", static_cast<size_t>(std::max<int64_t>(lir.arena_bytes, 16))});
  size_t constants = 0;
  const std::vector<Location> loc = place_values_with<std::string>(
      lir,
      [&](ir::ValueId v, size_t bytes) {
        if (!options.own_buffers) return std::pair<std::string, size_t>{"arena", static_cast<size_t>(lir.placement[static_cast<size_t>(v)].offset)};
        p.buffers.push_back({cat("v", v), std::max<size_t>((bytes + 3) / 4 * 4, 16)});
        return std::pair<std::string, size_t>{p.buffers.back().name, 0};
      },
      [&](size_t i, const ir::Type& t) {
        if (!shape_is_static(t.shape)) throw Error(ErrorKind::invalid_argument, cat(device, ": input ", i, " has a symbolic shape; bind it (--bind)"));
        const size_t bytes = dtype_bytes(t.dtype, shape_numel(t.shape).value());
        p.buffers.push_back({cat("input", i), std::max<size_t>(bytes, 16)});
        p.inputs.push_back({lir.value(lir.inputs()[i]).name, cat("input", i), 0, bytes, t.dtype, dims(t)});
        return cat("input", i);
      },
      [&](const Tensor& value) {
        p.weights.resize((p.weights.size() + 255) / 256 * 256, '\0');
        const size_t offset = p.weights.size();
        p.weights.append(static_cast<const char*>(value.data()), value.nbytes());
        if (!options.own_buffers) return std::pair<std::string, size_t>{"weights", offset};
        p.buffers.push_back({cat("c", constants++), std::max<size_t>((value.nbytes() + 3) / 4 * 4, 16), offset});
        return std::pair<std::string, size_t>{p.buffers.back().name, 0};
      });
  if (!options.own_buffers) p.buffers.push_back({"weights", std::max<size_t>(p.weights.size(), 16)});
  size_t scratch_max = 0;
  std::vector<NodeLaunches> planned = graph_launches(lir, scratch_max);
  if (scratch_max) p.buffers.push_back({"scratch", scratch_max});
  p.buffers.push_back({"error", 64});
  auto where = [&](ir::ValueId v) -> const Location& {
    const Location& l = loc.at(static_cast<size_t>(v));
    if (l.buffer.empty()) throw Error(ErrorKind::internal, cat(device, ": %", v, " has no placement"));
    return l;
  };
  std::map<std::string, size_t> kernel_of;  // source → index
  uint32_t step = 0;
  for (auto& [i, ls] : planned) {
    const ir::Node& n = lir.node(i);
    if (ls.empty()) continue;
    try {
      for (Launch& l : ls) {
        auto bound = bind_launch(
            device.c_str(), n, l, step, loc,
            [&](ir::ValueId v, uint32_t elem_bytes, uint32_t& off) {
              const Location& at = where(v);
              const size_t elem = elem_bytes ? elem_bytes : static_cast<size_t>(std::max(1, dtype_bits(lir.type(v).dtype) / 8));
              if (at.offset % elem) throw Error(ErrorKind::internal, cat(device, ": %", v, " starts ", at.offset, " bytes in, not a whole element of ", elem, " bytes"));
              off = static_cast<uint32_t>(at.offset / elem);
              return at.buffer;
            },
            scratch_max ? std::optional<std::string>("scratch") : std::nullopt, std::string("error"), current_target().api == KernelApi::hlsl ? 16 : 0);
        if (!bound) continue;
        std::vector<bool> writes;
        for (const Operand& o : l.operands) writes.push_back(o.kind != Operand::Kind::input);
        if (current_target().api == KernelApi::hlsl) add_hlsl_tail(l, step, *bound, std::string("error"), &writes);
        auto [it, fresh] = kernel_of.emplace(l.source, p.kernels.size());
        if (fresh) p.kernels.push_back({cat("kernels/k", it->second, ext), cat("// ", l.name, " (first for ", node_label(n, i), "), emitted by rlx\n", l.source)});
        ExportDispatch d;
        d.kernel_index = it->second;
        d.kernel = p.kernels[it->second].first;
        d.name = l.name;
        d.node = node_label(n, i);
        d.step = step;
        d.buffers = bound->bindings;
        d.writes = writes;
        d.words = bound->words;
        d.groups = {l.groups[0], l.groups[1], l.groups[2]};
        d.threads = threads_of(l.source, device, threads_key);
        p.dispatches.push_back(std::move(d));
      }
    } catch (const Error& e) {
      throw Error(e.kind(), cat(node_label(n, i), ": ", e.what()));
    }
    ++step;
  }
  for (size_t o = 0; o < lir.outputs().size(); ++o) {
    const ir::ValueId v = lir.outputs()[o];
    const Location& at = where(v);
    const ir::Type& t = lir.type(v);
    p.outputs.push_back({lir.value(v).name, at.buffer, at.offset, dtype_bytes(t.dtype, shape_numel(t.shape).value()), t.dtype, dims(t)});
  }
  return p;
}

std::string plan_json(const ExportedPlan& p, const std::string& format) {
  std::vector<std::string> buffers, inputs, outputs, dispatches;
  for (const auto& b : p.buffers) buffers.push_back(cat("{\"name\": \"", b.name, "\", \"bytes\": ", b.bytes, "}"));
  for (const auto& t : p.inputs) inputs.push_back(tensor_json(t));
  for (const auto& t : p.outputs) outputs.push_back(tensor_json(t));
  for (const auto& d : p.dispatches) {
    std::vector<std::string> names, w;
    for (const std::string& b : d.buffers) names.push_back(json_quote(b));
    for (uint32_t x : d.words) w.push_back(std::to_string(x));
    dispatches.push_back(cat("{\"kernel\": ", json_quote(d.kernel), ", \"name\": ", json_quote(d.name), ", \"node\": ", json_quote(d.node), ", \"buffers\": [",
                             join(names, ", "), "], \"words\": [", join(w, ", "), "], \"threadgroups\": [", d.groups[0], ", ", d.groups[1], ", ", d.groups[2],
                             "], \"threads\": [", d.threads[0], ", ", d.threads[1], ", ", d.threads[2], "]}"));
  }
  return cat("{\n  \"format\": \"", format, "\",\n  \"graph\": ", json_quote(p.graph), ",\n  \"buffers\": [\n    ", join(buffers, ",\n    "), "\n  ],\n  \"inputs\": [",
             join(inputs, ", "), "],\n  \"outputs\": [", join(outputs, ", "), "],\n  \"dispatches\": [\n    ", join(dispatches, ",\n    "), "\n  ]\n}\n");
}

size_t buffer_index(const ExportedPlan& p, const std::string& name) {
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].name == name) return i;
  throw Error(ErrorKind::internal, cat("export: no buffer ", name));
}

}  // namespace rlx::backends::vulkan
