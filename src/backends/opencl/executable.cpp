// A planned LIR on OpenCL: the memory plan's arena, each input's and constant's own buffer, and
// every node's launches — the vulkan device's kernels in their OpenCL C flavour (c_like.h) —
// built once into kernels whose arguments are set when the plan is made. A run writes the
// inputs, enqueues every kernel on the in-order queue (which orders them) and reads back.
#include <algorithm>
#include <cstring>

#include "backends/opencl/opencl.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/placement.h"
#include "backends/vulkan/target.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::opencl {

namespace {

using Placement = ir::Placement;
using vulkan::Launch;

using Location = vulkan::Placed<cl_mem>;

class ClExecutable : public runtime::Executable {
  struct Step {
    cl_kernel kernel = nullptr;
    size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  };

 public:
  explicit ClExecutable(const ir::Graph& lir) : lir_(lir), c_(Context::get()) {
    try {
      build();
    } catch (...) {
      release();
      throw;
    }
  }
  ~ClExecutable() override { release(); }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    const Cl& cl = c_.cl();
    cl_command_queue q = c_.queue();
    const auto& ins = lir_.inputs();
    if (inputs.size() != ins.size()) throw Error(ErrorKind::invalid_argument, cat("gpu: ", inputs.size(), " inputs for a plan of ", ins.size()));
    std::vector<Tensor> staged;  // alive until the writes complete
    for (size_t i = 0; i < ins.size(); ++i) {
      const ir::Type& t = lir_.type(ins[i]);
      const size_t want = dtype_bytes(t.dtype, shape_numel(t.shape).value());
      if (inputs[i].dtype() != t.dtype || inputs[i].nbytes() != want)
        throw Error(ErrorKind::invalid_argument, cat("gpu: input ", i, " is ", dtype_name(inputs[i].dtype()), " of ", inputs[i].nbytes(),
                                                     " bytes; the plan takes ", ir::type_str(t)));
      staged.push_back(inputs[i].contiguous());
      const Location& l = loc_[static_cast<size_t>(ins[i])];
      if (want) c_.check(cl.clEnqueueWriteBuffer(q, l.buffer, CL_FALSE, l.offset, want, staged.back().data(), 0, nullptr, nullptr), cat("writing input ", i));
    }
    const cl_uint zero = 0;
    c_.check(cl.clEnqueueFillBuffer(q, errors_, &zero, sizeof zero, 0, 64, 0, nullptr, nullptr), "clearing the error word");
    for (const Step& s : steps_) c_.check(cl.clEnqueueNDRangeKernel(q, s.kernel, 3, nullptr, s.global, s.local, 0, nullptr, nullptr), "enqueueing a kernel");
    uint32_t e[6] = {};
    c_.check(cl.clEnqueueReadBuffer(q, errors_, CL_TRUE, 0, sizeof e, e, 0, nullptr, nullptr), "a run's kernels");
    vulkan::throw_index_error(e, [&](uint32_t s) { return s < step_nodes_.size() ? vulkan::node_label(lir_.node(step_nodes_[s]), step_nodes_[s]) : std::string("a step"); });
    const auto& outs = lir_.outputs();
    outputs.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::Type& t = lir_.type(outs[i]);
      if (!outputs[i].defined()) outputs[i] = Tensor::zeros(t.dtype, vulkan::dims(t));
      const Location& l = loc_[static_cast<size_t>(outs[i])];
      if (outputs[i].nbytes())
        c_.check(cl.clEnqueueReadBuffer(q, l.buffer, CL_FALSE, l.offset, outputs[i].nbytes(), outputs[i].data(), 0, nullptr, nullptr), cat("reading output ", i));
    }
    c_.check(cl.clFinish(q), "reading the outputs");
  }

 private:
  cl_mem new_buffer(size_t bytes, const void* data = nullptr) {
    cl_int err = CL_SUCCESS;
    const size_t size = std::max<size_t>(bytes, 16);
    if (size > c_.info().max_alloc)
      throw Error(ErrorKind::out_of_memory, cat("gpu: a buffer of ", size, " bytes is larger than ", c_.info().device, " allocates at once (", c_.info().max_alloc, " bytes)"));
    cl_mem m = c_.cl().clCreateBuffer(c_.context(), data ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE, size, const_cast<void*>(data), &err);
    c_.check(err, cat("allocating ", size, " bytes"));
    buffers_.push_back(m);
    return m;
  }

  void build() {
    const cl_mem arena = new_buffer(static_cast<size_t>(std::max<int64_t>(lir_.arena_bytes, 16)));
    loc_ = vulkan::place_values<cl_mem>(
        lir_, arena, [&](size_t, const ir::Type& t) { return new_buffer(dtype_bytes(t.dtype, shape_numel(t.shape).value())); },
        [&](const Tensor& value) { return std::pair<cl_mem, size_t>{new_buffer(value.nbytes(), value.nbytes() ? value.data() : nullptr), 0}; });
    errors_ = new_buffer(64);
    plan();
  }


  void plan() {
    vulkan::ScopedTarget target(cl_target());
    size_t scratch_max = 0;
    std::vector<vulkan::NodeLaunches> planned = vulkan::graph_launches(lir_, scratch_max);
    const cl_mem scratch = scratch_max ? new_buffer(scratch_max) : nullptr;
    const Cl& cl = c_.cl();
    for (auto& [i, ls] : planned) {
      const ir::Node& n = lir_.node(i);
      if (ls.empty()) continue;
      const uint32_t step = static_cast<uint32_t>(step_nodes_.size());
      step_nodes_.push_back(i);
      try {
        for (Launch& l : ls) {
          auto bound = vulkan::bind_launch("gpu", n, l, step, loc_, [&](ir::ValueId v, uint32_t elem, uint32_t& off) { return vulkan::whole_buffer("gpu", lir_, loc_, v, elem, off); },
                                           scratch ? std::optional<cl_mem>(scratch) : std::nullopt, errors_);
          if (!bound) continue;
          const std::vector<cl_mem>& args = bound->bindings;
          std::vector<uint32_t> push = std::move(bound->words);
          if (push.empty()) push.push_back(0);  // the words struct is never empty
          if (debug_at(3)) log_line(cat("gpu: ", l.name, " for ", vulkan::node_label(n, i), ":\n", l.source));
          cl_program prog = c_.program(l.source, cat(l.name, " for ", vulkan::node_label(n, i)));
          cl_int err = CL_SUCCESS;
          Step s;
          s.kernel = cl.clCreateKernel(prog, "rlx_kernel", &err);
          c_.check(err, cat("creating ", l.name));
          kernels_.push_back(s.kernel);
          for (size_t a = 0; a < args.size(); ++a) c_.check(cl.clSetKernelArg(s.kernel, static_cast<cl_uint>(a), sizeof(cl_mem), &args[a]), cat("binding ", l.name, "'s operand ", a));
          c_.check(cl.clSetKernelArg(s.kernel, static_cast<cl_uint>(args.size()), push.size() * 4, push.data()), cat("setting ", l.name, "'s words"));
          size_t local[3] = {};
          c_.check(cl.clGetKernelWorkGroupInfo(s.kernel, nullptr, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof local, local, nullptr), cat("reading ", l.name, "'s group size"));
          for (int d = 0; d < 3; ++d) s.local[d] = std::max<size_t>(local[d], 1), s.global[d] = s.local[d] * l.groups[static_cast<size_t>(d)];
          if (s.global[0] * s.global[1] * s.global[2] == 0) continue;
          steps_.push_back(s);
        }
      } catch (const Error& e) {
        throw Error(e.kind(), cat(vulkan::node_label(n, i), ": ", e.what()));
      }
    }
    if (debug_at(1)) log_line(cat("gpu: graph @", lir_.name, ": ", steps_.size(), " kernels, arena ", lir_.arena_bytes, " bytes"));
  }

  void release() {
    const Cl& cl = c_.cl();
    for (cl_kernel k : kernels_) cl.clReleaseKernel(k);
    kernels_.clear();
    for (cl_mem m : buffers_) cl.clReleaseMemObject(m);
    buffers_.clear();
  }

  ir::Graph lir_;
  Context& c_;
  std::vector<Location> loc_;
  std::vector<cl_mem> buffers_;
  std::vector<cl_kernel> kernels_;
  cl_mem errors_ = nullptr;
  std::vector<Step> steps_;
  std::vector<int> step_nodes_;
};

}  // namespace

vulkan::KernelTarget cl_target() {
  vulkan::KernelTarget t;
  t.api = vulkan::KernelApi::opencl;
  // claims read the same whether or not an OpenCL device is here (docs/ops.md): the device is
  // available only where a full profile (64-bit integers) is, and OpenCL 1.1+ stores bytes
  t.features.int64 = t.features.int16 = t.features.int8 = true;
  t.features.storage8 = t.features.storage16 = true;
  const ClInfo& i = Context::get().info();
  t.features.max_storage_range = i.max_alloc ? i.max_alloc : uint64_t{1} << 28;  // OpenCL's minimum of the larger of ¼ memory and 128 MB
  t.features.max_shared_bytes = static_cast<uint32_t>(i.local_bytes ? i.local_bytes : 32768);
  return t;
}

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir) { return std::make_unique<ClExecutable>(lir); }

}  // namespace rlx::backends::opencl
