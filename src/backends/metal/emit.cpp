// A planned LIR as a Metal program's files. The buffers are the executables' (opengl, opencl):
// the memory plan's arena, one per graph input, the constants (all in weights.bin, each at a
// 256-byte aligned offset), the steps' scratch and the index-error words. Every dispatch binds
// whole buffers in its kernel's order, and its words — each operand's element offset, then the
// kernel's own — are resolved here, so a host only copies inputs in, encodes the dispatches in
// order (a barrier between each) and copies outputs out.
#include <cstring>

#include "backends/metal/metal.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/placement.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::metal {

namespace {

using Placement = ir::Placement;
using vulkan::Launch;

using Location = vulkan::Placed<std::string>;  // buffers by name: "arena", "input0", "weights"

std::string shape_json(const ir::Type& t) {
  std::vector<std::string> d;
  for (int64_t x : vulkan::dims(t)) d.push_back(std::to_string(x));
  return cat("[", join(d, ", "), "]");
}

// The threads per threadgroup metal_source notes above its entry point.
std::array<uint32_t, 3> threads_of(const std::string& msl) {
  const std::string key = "// threads per threadgroup: ";
  const size_t at = msl.rfind(key);
  std::array<uint32_t, 3> t{1, 1, 1};
  if (at == std::string::npos || std::sscanf(msl.c_str() + at + key.size(), "%u x %u x %u", &t[0], &t[1], &t[2]) != 3)
    throw Error(ErrorKind::internal, "metal: a kernel without its threadgroup size");
  return t;
}

const char* kReadme = R"(# A Metal program emitted by RLX

`rlx export --target metal` wrote this directory from a compiled plan. It was **not run** where it
was made (no Apple GPU there): the kernels are the ones RLX's vulkan, opengl and gpu (OpenCL)
devices run and test, printed as MSL 2.

- `kernels/kNNN.metal` — one compute kernel each, `kernel void rlx_kernel`, buffers at
  `[[buffer(0…)]]` in the order a dispatch lists them, then its words (uint32s) as a constant
  struct at the next index.
- `weights.bin` — every constant of the graph, at the offsets `plan.json` gives.
- `plan.json` — `buffers` (name and bytes: the arena, one per input, the weights, the scratch,
  the 64-byte error words), `inputs` and `outputs` (buffer, byte offset, dtype, shape), and
  `dispatches` in order: kernel file, buffer names, words, threadgroups and threads per
  threadgroup.

To run it: make one MTLBuffer per entry of `buffers` (weights from `weights.bin`), copy each input
in, encode every dispatch in order on one compute encoder with a memory barrier between them,
zero the error words first and, after the command buffer completes, report an error when
`error[0]` is not 0 (`error[1]` is the step, `error[2..5]` the value and bound as lo/hi words),
then copy each output out.
)";

}  // namespace

vulkan::KernelTarget metal_target() {
  vulkan::KernelTarget t;
  t.api = vulkan::KernelApi::metal;
  t.features.int64 = t.features.int16 = t.features.int8 = true;
  t.features.storage8 = t.features.storage16 = true;
  t.features.max_storage_range = uint64_t{1} << 32;
  t.features.max_shared_bytes = 32768;
  return t;
}

std::map<std::string, std::string> emit_program(const ir::Graph& lir) {
  vulkan::ScopedTarget target(metal_target());
  std::map<std::string, std::string> files;
  std::string weights;
  std::vector<std::string> buffers = {cat("{\"name\": \"arena\", \"bytes\": ", std::max<int64_t>(lir.arena_bytes, 16), "}")};
  std::vector<std::string> inputs, outputs;
  const std::vector<Location> loc = vulkan::place_values<std::string>(
      lir, std::string("arena"),
      [&](size_t i, const ir::Type& t) {
        if (!shape_is_static(t.shape)) throw Error(ErrorKind::invalid_argument, cat("metal: input ", i, " has a symbolic shape; bind it (--bind)"));
        const size_t bytes = dtype_bytes(t.dtype, shape_numel(t.shape).value());
        buffers.push_back(cat("{\"name\": \"input", i, "\", \"bytes\": ", std::max<size_t>(bytes, 16), "}"));
        inputs.push_back(cat("{\"name\": ", json_quote(lir.value(lir.inputs()[i]).name), ", \"buffer\": \"input", i, "\", \"offset\": 0, \"dtype\": \"",
                             dtype_name(t.dtype), "\", \"shape\": ", shape_json(t), "}"));
        return cat("input", i);
      },
      [&](const Tensor& value) {
        weights.resize((weights.size() + 255) / 256 * 256, '\0');
        const size_t offset = weights.size();
        weights.append(static_cast<const char*>(value.data()), value.nbytes());
        return std::pair<std::string, size_t>{"weights", offset};
      });
  buffers.push_back(cat("{\"name\": \"weights\", \"bytes\": ", std::max<size_t>(weights.size(), 16), "}"));
  size_t scratch_max = 0;
  std::vector<vulkan::NodeLaunches> planned = vulkan::graph_launches(lir, scratch_max);
  if (scratch_max) buffers.push_back(cat("{\"name\": \"scratch\", \"bytes\": ", scratch_max, "}"));
  buffers.push_back("{\"name\": \"error\", \"bytes\": 64}");
  auto where = [&](ir::ValueId v) -> const Location& {
    const Location& l = loc.at(static_cast<size_t>(v));
    if (l.buffer.empty()) throw Error(ErrorKind::internal, cat("metal: %", v, " has no placement"));
    return l;
  };
  std::map<std::string, std::string> kernel_file;  // source → file
  std::vector<std::string> dispatches;
  uint32_t step = 0;
  for (auto& [i, ls] : planned) {
    const ir::Node& n = lir.node(i);
    if (ls.empty()) continue;
    try {
      for (Launch& l : ls) {
        auto bound = vulkan::bind_launch(
            "metal", n, l, step, loc,
            [&](ir::ValueId v, uint32_t elem_bytes, uint32_t& off) {
              const Location& at = where(v);
              const size_t elem = elem_bytes ? elem_bytes : static_cast<size_t>(std::max(1, dtype_bits(lir.type(v).dtype) / 8));
              if (at.offset % elem) throw Error(ErrorKind::internal, cat("metal: %", v, " starts ", at.offset, " bytes in, not a whole element of ", elem, " bytes"));
              off = static_cast<uint32_t>(at.offset / elem);
              return at.buffer;
            },
            scratch_max ? std::optional<std::string>("scratch") : std::nullopt, std::string("error"));
        if (!bound) continue;
        std::vector<std::string> names, w;
        for (const std::string& b : bound->bindings) names.push_back(json_quote(b));
        for (uint32_t x : bound->words) w.push_back(std::to_string(x));
        auto [it, fresh] = kernel_file.emplace(l.source, cat("kernels/k", kernel_file.size(), ".metal"));
        if (fresh) files[it->second] = cat("// ", l.name, " (first for ", vulkan::node_label(n, i), "), emitted by rlx\n", l.source);
        const auto threads = threads_of(l.source);
        dispatches.push_back(cat("{\"kernel\": ", json_quote(it->second), ", \"name\": ", json_quote(l.name), ", \"node\": ", json_quote(vulkan::node_label(n, i)),
                                 ", \"buffers\": [", join(names, ", "), "], \"words\": [", join(w, ", "), "], \"threadgroups\": [", l.groups[0], ", ", l.groups[1], ", ",
                                 l.groups[2], "], \"threads\": [", threads[0], ", ", threads[1], ", ", threads[2], "]}"));
      }
    } catch (const Error& e) {
      throw Error(e.kind(), cat(vulkan::node_label(n, i), ": ", e.what()));
    }
    ++step;
  }
  for (size_t o = 0; o < lir.outputs().size(); ++o) {
    const ir::ValueId v = lir.outputs()[o];
    const Location& at = where(v);
    outputs.push_back(cat("{\"name\": ", json_quote(lir.value(v).name), ", \"buffer\": ", json_quote(at.buffer), ", \"offset\": ", at.offset, ", \"dtype\": \"",
                          dtype_name(lir.type(v).dtype), "\", \"shape\": ", shape_json(lir.type(v)), "}"));
  }
  files["plan.json"] = cat("{\n  \"format\": \"rlx-metal-plan-1\",\n  \"graph\": ", json_quote(lir.name), ",\n  \"buffers\": [\n    ", join(buffers, ",\n    "),
                           "\n  ],\n  \"inputs\": [", join(inputs, ", "), "],\n  \"outputs\": [", join(outputs, ", "), "],\n  \"dispatches\": [\n    ",
                           join(dispatches, ",\n    "), "\n  ]\n}\n");
  files["weights.bin"] = weights;
  files["README.md"] = kReadme;
  return files;
}

}  // namespace rlx::backends::metal
