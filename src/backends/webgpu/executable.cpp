// A planned LIR on WebGPU: the memory plan's arena, each input's and constant's own buffer, and
// every node's launches — the vulkan device's kernels in their HLSL flavour, compiled to SPIR-V
// and printed as WGSL — made into one program of bind groups in the runner when the plan is
// made. A run writes the inputs, clears the error words, runs the program (one compute pass:
// WebGPU orders dispatches that share a buffer) and reads back.
#include <algorithm>
#include <cstring>

#include "backends/vulkan/hlsl.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/placement.h"
#include "backends/webgpu/bridge.h"
#include "backends/webgpu/webgpu.h"
#include "codegen/wgsl/from_spirv.h"
#include "rlx/error.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::webgpu {

namespace {

using vulkan::Launch;
using vulkan::Operand;
using Location = vulkan::Placed<uint32_t>;  // a buffer id of the runner's

class WebgpuExecutable : public runtime::Executable {
 public:
  explicit WebgpuExecutable(const ir::Graph& lir) : lir_(lir), b_(Bridge::get()) {
    try {
      build();
    } catch (...) {
      release();
      throw;
    }
  }
  ~WebgpuExecutable() override {
    try {
      release();
    } catch (...) {  // the runner is gone: nothing left to free
    }
  }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    std::lock_guard<std::mutex> lock(mu_);  // one program, one set of buffers
    const auto& ins = lir_.inputs();
    if (inputs.size() != ins.size()) throw Error(ErrorKind::invalid_argument, cat("webgpu: ", inputs.size(), " inputs for a plan of ", ins.size()));
    for (size_t i = 0; i < ins.size(); ++i) {
      const ir::Type& t = lir_.type(ins[i]);
      const size_t want = dtype_bytes(t.dtype, shape_numel(t.shape).value());
      if (inputs[i].dtype() != t.dtype || inputs[i].nbytes() != want)
        throw Error(ErrorKind::invalid_argument, cat("webgpu: input ", i, " is ", dtype_name(inputs[i].dtype()), " of ", inputs[i].nbytes(),
                                                     " bytes; the plan takes ", ir::type_str(t)));
      check_fits_class(inputs[i], cat("input ", i));
      const Tensor x = inputs[i].contiguous();
      const Location& l = loc_[static_cast<size_t>(ins[i])];
      if (want) b_.write(l.buffer, l.offset, x.data(), want);
    }
    const uint32_t zero[16] = {};
    b_.write(errors_, 0, zero, sizeof zero);
    if (program_) b_.run(program_);
    uint32_t e[6] = {};
    b_.read(errors_, 0, e, sizeof e);
    vulkan::throw_index_error(e, [&](uint32_t s) { return s < step_nodes_.size() ? vulkan::node_label(lir_.node(step_nodes_[s]), step_nodes_[s]) : std::string("a step"); });
    const auto& outs = lir_.outputs();
    outputs.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::Type& t = lir_.type(outs[i]);
      if (!outputs[i].defined()) outputs[i] = Tensor::zeros(t.dtype, vulkan::dims(t));
      const Location& l = loc_[static_cast<size_t>(outs[i])];
      if (outputs[i].nbytes()) b_.read(l.buffer, l.offset, outputs[i].data(), outputs[i].nbytes());
    }
  }

 private:
  // The kernels' integer class is 32-bit (hlsl.h): i64 values must fit it. (An i64 the kernels
  // write is a word pair, low word then its sign: the little-endian int64 itself.)
  static void check_fits_class(const Tensor& x, const std::string& what) { vulkan::check_fits_int32_class(x, "webgpu", what); }

  uint32_t new_buffer(size_t bytes, const void* data = nullptr) {
    const WebgpuInfo& info = b_.info();
    const size_t size = std::max<size_t>((bytes + 3) / 4 * 4, 16);
    if (info.max_binding_bytes && size > info.max_binding_bytes)
      throw Error(ErrorKind::out_of_memory, cat("webgpu: a buffer of ", size, " bytes is larger than one binding of ", info.adapter, " may be (", info.max_binding_bytes, " bytes)"));
    const uint32_t id = b_.new_id();
    b_.buffer(id, size);
    buffers_.push_back(id);
    if (data && bytes) b_.write(id, 0, data, bytes);
    return id;
  }

  void build() {
    const uint32_t arena = new_buffer(static_cast<size_t>(std::max<int64_t>(lir_.arena_bytes, 16)));
    loc_ = vulkan::place_values<uint32_t>(
        lir_, arena, [&](size_t, const ir::Type& t) { return new_buffer(dtype_bytes(t.dtype, shape_numel(t.shape).value())); },
        [&](const Tensor& value) {
          check_fits_class(value, "a constant");
          return std::pair<uint32_t, size_t>{new_buffer(value.nbytes(), value.nbytes() ? value.data() : nullptr), 0};
        });
    errors_ = new_buffer(64);
    plan();
  }


  // A launch's WGSL: its HLSL compiled by glslang (cached SPIR-V), printed by codegen/wgsl.
  static std::string wgsl_of(const Launch& l, const std::string& name) {
    const std::vector<uint32_t> spirv = vulkan::compile_compute_hlsl(l.source, name);
    try {
      return codegen::wgsl::from_spirv(spirv).wgsl;
    } catch (const Error& e) {
      throw Error(e.kind(), cat(e.what(), " (in ", name, ")"));
    }
  }

  void plan() {
    vulkan::ScopedTarget target(webgpu_target());
    size_t scratch_max = 0;
    std::vector<vulkan::NodeLaunches> planned = vulkan::graph_launches(lir_, scratch_max);
    const uint32_t scratch = scratch_max ? new_buffer(scratch_max) : 0;
    const WebgpuInfo& info = b_.info();
    std::vector<uint32_t> prog = {0};  // the dispatch count, then each (runner.mjs)
    for (auto& [i, ls] : planned) {
      const ir::Node& n = lir_.node(i);
      if (ls.empty()) continue;
      const uint32_t step = static_cast<uint32_t>(step_nodes_.size());
      step_nodes_.push_back(i);
      try {
        for (Launch& l : ls) {
          auto bound = vulkan::bind_launch("webgpu", n, l, step, loc_, [&](ir::ValueId v, uint32_t elem, uint32_t& off) { return vulkan::whole_buffer("webgpu", lir_, loc_, v, elem, off); },
                                           scratch ? std::optional<uint32_t>(scratch) : std::nullopt, errors_, 16);
          if (!bound) continue;
          if (uint64_t{l.groups[0]} * l.groups[1] * l.groups[2] == 0) continue;
          vulkan::add_hlsl_tail(l, step, *bound, errors_);
          std::vector<uint32_t>& args = bound->bindings;
          std::vector<uint32_t>& words = bound->words;
          const std::string name = cat(l.name, " for ", vulkan::node_label(n, i));
          if (info.max_storage_buffers && args.size() > info.max_storage_buffers)
            throw Error(ErrorKind::unsupported, cat("webgpu: ", name, " binds ", args.size(), " buffers; ", info.adapter, " allows ", info.max_storage_buffers, " in a compute stage"));
          for (int d = 0; d < 3; ++d)
            if (info.max_groups && l.groups[static_cast<size_t>(d)] > info.max_groups)
              throw Error(ErrorKind::unsupported, cat("webgpu: ", name, " dispatches ", l.groups[static_cast<size_t>(d)], " workgroups along one dimension; the limit is ", info.max_groups));
          if (debug_at(3)) log_line(cat("webgpu: ", name, ":\n", l.source));
          const std::string wgsl = wgsl_of(l, name);
          if (debug_at(4)) log_line(cat("webgpu: the WGSL of ", name, ":\n", wgsl));
          prog.push_back(b_.pipeline(wgsl, static_cast<uint32_t>(args.size()), name));
          prog.push_back(static_cast<uint32_t>(args.size()));
          prog.insert(prog.end(), args.begin(), args.end());
          prog.push_back(static_cast<uint32_t>(words.size()));
          prog.insert(prog.end(), words.begin(), words.end());
          prog.insert(prog.end(), {l.groups[0], l.groups[1], l.groups[2]});
          ++prog[0];
        }
      } catch (const Error& e) {
        throw Error(e.kind(), cat(vulkan::node_label(n, i), ": ", e.what()));
      }
    }
    if (prog[0]) {
      program_ = b_.new_id();
      b_.program(program_, prog);
    }
    if (debug_at(1)) log_line(cat("webgpu: graph @", lir_.name, ": ", prog[0], " dispatches, arena ", lir_.arena_bytes, " bytes"));
  }

  void release() {
    if (program_) b_.free(Bridge::Kind::program, program_);
    program_ = 0;
    for (uint32_t id : buffers_) b_.free(Bridge::Kind::buffer, id);
    buffers_.clear();
  }

  ir::Graph lir_;
  Bridge& b_;
  std::vector<Location> loc_;
  std::vector<uint32_t> buffers_;
  uint32_t errors_ = 0, program_ = 0;
  std::vector<int> step_nodes_;
  std::mutex mu_;
};

}  // namespace

vulkan::KernelTarget webgpu_target() {
  vulkan::KernelTarget t;
  t.api = vulkan::KernelApi::hlsl;  // printed as HLSL first: its SPIR-V is what becomes WGSL
  t.features.int64 = t.features.int32_class = true;
  t.features.storage8 = t.features.storage16 = t.features.int8 = t.features.int16 = true;
  t.features.max_storage_range = uint64_t{1} << 27;  // WebGPU's default maxStorageBufferBindingSize
  t.features.max_push_bytes = 256;                   // a uniform buffer: no push-constant limit
  t.features.max_shared_bytes = 16384;               // the default maxComputeWorkgroupStorageSize
  return t;
}

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir) { return std::make_unique<WebgpuExecutable>(lir); }

}  // namespace rlx::backends::webgpu
