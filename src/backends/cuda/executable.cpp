// Running an LIR on the GPU. A run context owns one device allocation laid out as
// [arena | inputs | scratch | error word] and one stream; since nothing in it moves, every
// kernel's device views are resolved once when the context is made, and a run is: copy the
// inputs in, launch the steps, copy the outputs out, synchronize. Contexts are pooled, so
// concurrent runs never share one and steady-state runs allocate nothing.
//
// Small inputs and outputs (token ids, positions, a greedy step's next token, the error word)
// pass through a pinned staging block the context owns: the host copies them into it, and their
// device copies are part of the CUDA graph, so a run of a small graph is one graph launch and
// one synchronization rather than a driver call (and a pageable bounce) per tensor.
//
// An input whose host tensor is kept on the device (resident.h: a KV cache) is bound to that
// device copy instead of the context's own slot and not copied in; an output written into such
// a tensor (a donated one, computed in place) is not copied out. The views are resolved again
// (and the CUDA graph captured again) only when those bindings change.
#include "backends/cuda/executable.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "backends/cuda/constants.h"
#include "backends/cuda/device.h"
#include "backends/cuda/host_pins.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/megakernel.h"
#include "backends/cuda/megakernel_plan.h"
#include "backends/cuda/resident.h"
#include "backends/cuda/step_order.h"
#include "util/profile.h"
#include "passes/memory_plan.h"
#include "util/flags.h"
#include "rlx/error.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Placement;

constexpr size_t kAlign = 256;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Step {
  int node;
  Launch launch;
  MegaFill mega;          // the step as an op of the megakernel, where it can be one
  size_t scratch = 0;     // bytes of the run's scratch it uses
  size_t scratch_at = 0;  // where they start in the context's scratch
  std::string label;   // for RLX_CUDA_PROFILE
};

constexpr size_t kStageMax = size_t{64} << 10;  // inputs and outputs up to this size are staged
struct Staged {
  size_t at = 0, bytes = 0;  // bytes 0: not staged (too large, or empty)
};
constexpr int kCaptureStreams = 4;  // independent kernels overlap over this many streams
constexpr size_t kMaxConcurrentSteps = 20000;  // the order analysis is quadratic: larger graphs capture in program order
// Steps that share scratch bytes must run one after the other, so consecutive users of scratch
// take turns over up to kCaptureStreams copies of it, as long as the copies cost at most this.
constexpr size_t kScratchCopiesMax = size_t{256} << 20;

// A stretch of consecutive steps run as one megakernel (megakernel.h): ops and counters in the
// context's device memory.
struct MegaRun : MegaStretch {
  const MegaOp* ops = nullptr;
  unsigned* counters = nullptr;
};

struct RunContext {
  std::unique_ptr<DeviceBuffer> mem;
  cudaStream_t stream = nullptr;
  ErrorWord* error = nullptr;  // device
  uint8_t* stage = nullptr;    // pinned: the staged inputs, outputs and the error word
  std::vector<void*> ptr;           // per value
  std::vector<void*> bound;         // per input: the resident device copy it reads, or null (own slot)
  std::vector<std::vector<DeviceView>> in, out;  // per step
  int runs = 0;
  cudaGraphExec_t graph = nullptr;  // the steps, captured on the second run
  bool graph_failed = false;
  std::vector<cudaStream_t> side;     // more streams the capture forks to (step_order.h)
  std::vector<cudaEvent_t> finished;  // per step, recorded behind it during a capture
  std::vector<cudaEvent_t> events;  // RLX_CUDA_PROFILE: one before and one after each step
  cudaStream_t comm = nullptr;           // collectives, beside the kernels (RLX_COLLECTIVE_OVERLAP)
  std::vector<cudaEvent_t> comm_events;  // per step: the compute before a collective / the collective done
  std::vector<std::vector<size_t>> joins;  // per step (and one past the last): the collectives to wait for first
  int* flag = nullptr;              // RLX_CUDA_PROFILE: mapped host word the stream waits on
  std::vector<MegaRun> mega;        // RLX_CUDA_MEGAKERNEL: the stretches of steps run as one kernel
  std::vector<int> mega_at;         // per step: the stretch it starts, or -1
  std::unique_ptr<DeviceBuffer> mega_mem;  // their ops and counters
  ~RunContext() {
    if (flag) cudaFreeHost(flag);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    for (cudaEvent_t e : finished) cudaEventDestroy(e);
    for (cudaEvent_t e : comm_events)
      if (e) cudaEventDestroy(e);  // only collectives' are made (a null one would leave a sticky error)
    if (comm) cudaStreamDestroy(comm);
    for (cudaStream_t t : side) cudaStreamDestroy(t);
    if (graph) cudaGraphExecDestroy(graph);
    if (stream) cudaStreamDestroy(stream);
    if (stage) cudaFreeHost(stage);
  }
};

class CudaExecutable : public runtime::Executable {
 public:
  explicit CudaExecutable(const ir::Graph& lir) : lir_(lir) {
    use_device();
    const KernelTable& table = kernel_table();
    size_t nv = lir_.num_values();
    shapes_.resize(nv);
    for (size_t v = 0; v < nv; ++v) shapes_[v] = shape_values(lir_.value(static_cast<ir::ValueId>(v)).type.shape);
    const_ptr_.assign(nv, nullptr);
    for (int i = 0; i < lir_.num_nodes(); ++i) {
      const ir::Node& n = lir_.node(i);
      // a collective meets the other ranks from the host (and may stage through it): never captured
      collectives_ = collectives_ || ir::has_trait(n.op, ir::kCollective);
      host_synced_ = host_synced_ || syncs_with_host(n.op);
      if (n.op == ir::Op::constant) {
        Tensor t = n.attrs.tensor("value").contiguous();
        auto c = device_constant(t);
        const_ptr_[static_cast<size_t>(n.outputs[0])] = c->buffer.data();
        constants_.push_back(std::move(c));
        continue;
      }
      bool all_views = true;
      for (ir::ValueId v : n.outputs) all_views = all_views && lir_.placement[static_cast<size_t>(v)].kind == Placement::Kind::view;
      if (all_views) continue;  // a reshape of contiguous memory: no work
      const KernelEntry& e = table[static_cast<size_t>(n.op)];
      Kernel k = e.make ? e.make(n, lir_) : Kernel{};
      if (!k.launch) throw Error(ErrorKind::internal, cat("device cuda has no kernel for ", node_label(n), " although it claimed it"));
      scratch_ = std::max(scratch_, k.scratch);
      std::string label = cat(ir::op_keyword(n.op), " ", ir::type_str(lir_.type(n.outputs[0])), k.label.empty() ? "" : " (" + k.label + ")");
      steps_.push_back({i, std::move(k.launch), std::move(k.mega), k.scratch, 0, std::move(label)});
    }
    if (flags().RLX_CUDA_MEGAKERNEL > 0) mega_grid_ = megakernel_grid();
    size_t slot = align_up(scratch_), slots = 1;
    if (slot) slots = std::min<size_t>(kCaptureStreams, 1 + kScratchCopiesMax / slot);
    size_t turn = 0;
    for (Step& st : steps_)
      if (st.scratch) st.scratch_at = slot * (turn++ % slots);
    scratch_ = slot * std::min(slots, std::max<size_t>(turn, 1));
    // the context block: arena, then each input, then scratch, then the error word
    size_t off = align_up(static_cast<size_t>(lir_.arena_bytes));
    for (ir::ValueId v : lir_.inputs()) {
      input_offset_.push_back(off);
      off += align_up(dtype_bytes(lir_.type(v).dtype, numel(shapes_[static_cast<size_t>(v)])));
    }
    scratch_offset_ = off;
    error_offset_ = off + align_up(scratch_);
    block_bytes_ = error_offset_ + align_up(sizeof(ErrorWord));
    // the staging block: small inputs, then small outputs, then the error word
    auto stage = [&](ir::ValueId v) {
      size_t bytes = dtype_bytes(lir_.type(v).dtype, numel(shapes_[static_cast<size_t>(v)]));
      if (bytes > kStageMax || bytes == 0) return Staged{};
      Staged s{stage_bytes_, bytes};
      stage_bytes_ += align_up(bytes);
      return s;
    };
    for (ir::ValueId v : lir_.inputs()) stage_in_.push_back(stage(v));
    for (ir::ValueId v : lir_.outputs()) stage_out_.push_back(stage(v));
    stage_error_ = stage_bytes_;
    stage_bytes_ += align_up(sizeof(ErrorWord));
    if (debug_at(1))
      log_line(cat("cuda: graph @", lir_.name, ": ", steps_.size(), " kernels, ", block_bytes_, " device bytes per run context (arena ",
                   lir_.arena_bytes, ", scratch ", scratch_, "), ", constants_.size(), " constants"));
  }

  // An output left in device memory: a buffer of its own, freed with the last tensor viewing it.
  static Tensor device_tensor(DType dt, const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    auto buf = std::make_shared<DeviceBuffer>(std::max<size_t>(dtype_bytes(dt, n), 1), "an output left on the device");
    return Tensor::wrap_device(dt, shape, buf->data(), cat("cuda:", kDeviceIndex), buf);
  }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    if (inputs.size() != lir_.inputs().size())
      throw Error(ErrorKind::invalid_argument, cat("expected ", lir_.inputs().size(), " inputs, got ", inputs.size()));
    use_device();
    std::unique_ptr<RunContext> ctx = acquire();
    cudaStream_t s = ctx->stream;
    bool profiling = flags().RLX_CUDA_PROFILE && ctx->runs > 0;  // the first run pays for lazy loading
    auto t0 = std::chrono::steady_clock::now();
    auto phase = [&](const char* what) {
      if (!profiling) return;
      check(cudaStreamSynchronize(s), "profiling");
      auto t1 = std::chrono::steady_clock::now();
      profile_add("cuda", cat("run: ", what, " (host wall time)"), std::chrono::duration<double, std::milli>(t1 - t0).count());
      t0 = t1;
    };
    std::vector<void*> bound(inputs.size(), nullptr);
    bool device_io = false;  // a caller's CUDA tensor in: outputs stay on the device too
    for (size_t k = 0; k < inputs.size(); ++k) {
      ir::ValueId v = lir_.inputs()[k];
      if (inputs[k].dtype() != lir_.type(v).dtype || inputs[k].shape() != shapes_[static_cast<size_t>(v)] || !inputs[k].is_contiguous()) {
        release(std::move(ctx));
        throw Error(ErrorKind::invalid_argument, cat("input ", k, " of graph @", lir_.name, " must be a contiguous ", ir::type_str(lir_.type(v))));
      }
      if (!inputs[k].on_host()) {  // the caller's device memory: kernels read it where it is
        if (inputs[k].device() != cat("cuda:", kDeviceIndex)) {
          release(std::move(ctx));
          throw Error(ErrorKind::invalid_argument, cat("input ", k, " of graph @", lir_.name, " is in ", inputs[k].device(), " memory; this device is cuda:", kDeviceIndex));
        }
        bound[k] = inputs[k].device_data();
        device_io = true;
        continue;
      }
      bound[k] = resident_ptr(inputs[k]);
    }
    if (bound != ctx->bound) rebind(*ctx, std::move(bound));
    for (size_t k = 0; k < inputs.size(); ++k) {
      size_t bytes = inputs[k].nbytes();
      if (ctx->bound[k] || !bytes) continue;  // resident: the device copy is the data
      if (stage_in_[k].bytes) {
        std::memcpy(ctx->stage + stage_in_[k].at, inputs[k].data(), bytes);  // copied on by the graph
        continue;
      }
      pin_host_tensor(inputs[k]);
      check(cudaMemcpyAsync(ctx->ptr[static_cast<size_t>(lir_.inputs()[k])], inputs[k].data(), bytes, cudaMemcpyHostToDevice, s), "copying an input to the device");
    }
    phase("copy the inputs in");
    if (profiling) launch_eagerly(*ctx, true);
    else if (ctx->graph) check(cudaGraphLaunch(ctx->graph, s), "launching the CUDA graph");
    else if (ctx->runs >= 1 && !ctx->graph_failed && flags().RLX_CUDA_GRAPHS && !collectives_ && !host_synced_) capture(*ctx);
    else launch_eagerly(*ctx, false);
    ++ctx->runs;
    phase("kernels");
    outputs.resize(lir_.outputs().size());
    std::vector<bool> from_stage(outputs.size(), false);
    for (size_t k = 0; k < outputs.size(); ++k) {
      ir::ValueId v = lir_.outputs()[k];
      DType dt = lir_.type(v).dtype;
      const std::vector<int64_t>& shape = shapes_[static_cast<size_t>(v)];
      Tensor& o = outputs[k];
      if (!o.defined()) o = device_io ? device_tensor(dt, shape) : Tensor::zeros(dt, shape);
      else if (o.dtype() != dt || o.shape() != shape || !o.is_contiguous())
        throw Error(ErrorKind::invalid_argument, cat("output ", k, " of graph @", lir_.name, " is ", dtype_name(dt), " of ", shape.size(),
                                                     " dims; the tensor given for it does not match (or is not contiguous)"));
      if (!o.on_host()) {  // device memory (the caller's or a fresh buffer): a copy on the device
        void* src = ctx->ptr[static_cast<size_t>(v)];
        if (o.device_data() != src && o.nbytes()) check(cudaMemcpyAsync(o.device_data(), src, o.nbytes(), cudaMemcpyDeviceToDevice, s), "writing an output in device memory");
        continue;
      }
      if (void* r = resident_ptr(o)) {  // kept on the device: updated there (in place when donated)
        void* src = ctx->ptr[static_cast<size_t>(v)];
        if (r != src && o.nbytes()) check(cudaMemcpyAsync(r, src, o.nbytes(), cudaMemcpyDeviceToDevice, s), "updating a tensor kept on the device");
        continue;
      }
      if (stage_out_[k].bytes) {
        from_stage[k] = true;  // the graph copied it to the staging block
        continue;
      }
      pin_host_tensor(o);
      if (o.nbytes()) check(cudaMemcpyAsync(o.data(), ctx->ptr[static_cast<size_t>(v)], o.nbytes(), cudaMemcpyDeviceToHost, s), "copying an output to the host");
    }
    check(cudaStreamSynchronize(s), cat("running graph @", lir_.name).c_str());
    for (size_t k = 0; k < outputs.size(); ++k)
      if (from_stage[k]) std::memcpy(outputs[k].data(), ctx->stage + stage_out_[k].at, stage_out_[k].bytes);
    phase("copy the outputs out");
    ErrorWord err;
    std::memcpy(&err, ctx->stage + stage_error_, sizeof err);
    release(std::move(ctx));
    if (err.code) {
      const ir::Node& n = lir_.node(err.node);
      std::string matrix = cat(node_label(n), ": matrix ", err.value, " of the batch ");
      switch (err.code) {
        case kNotPositiveDefinite:
          throw Error(ErrorKind::runtime, cat(matrix, "is not positive definite (its leading minor of order ", err.bound, " is not positive)"));
        case kSingular: throw Error(ErrorKind::runtime, cat(matrix, "is singular"));
        case kNotConverged: throw Error(ErrorKind::runtime, cat(matrix, "did not converge (cuSOLVER info ", err.bound, ")"));
        default: throw Error(ErrorKind::runtime, cat(node_label(n), ": index ", err.value, " is out of range [0, ", err.bound, ")"));
      }
    }
  }

 private:
  // The staged inputs onto the device and the error word cleared; then, after the steps, the
  // staged outputs and the error word back to the staging block. Inside a capture they become
  // nodes of the graph (the staging block never moves).
  void stage_in(RunContext& ctx) {
    for (size_t k = 0; k < stage_in_.size(); ++k) {
      if (!stage_in_[k].bytes || ctx.bound[k]) continue;
      check(cudaMemcpyAsync(ctx.ptr[static_cast<size_t>(lir_.inputs()[k])], ctx.stage + stage_in_[k].at, stage_in_[k].bytes, cudaMemcpyHostToDevice, ctx.stream),
            "copying an input to the device");
    }
    check(cudaMemsetAsync(ctx.error, 0, sizeof(ErrorWord), ctx.stream), "clearing the error word");
  }
  void stage_out(RunContext& ctx) {
    for (size_t k = 0; k < stage_out_.size(); ++k) {
      if (!stage_out_[k].bytes) continue;
      check(cudaMemcpyAsync(ctx.stage + stage_out_[k].at, ctx.ptr[static_cast<size_t>(lir_.outputs()[k])], stage_out_[k].bytes, cudaMemcpyDeviceToHost, ctx.stream),
            "copying an output to the host");
    }
    check(cudaMemcpyAsync(ctx.stage + stage_error_, ctx.error, sizeof(ErrorWord), cudaMemcpyDeviceToHost, ctx.stream), "reading the error word");
  }

  // Without a graph (the first run, profiling, a capture that failed): the same copies around
  // the steps launched one by one.
  void launch_eagerly(RunContext& ctx, bool profiled) {
    stage_in(ctx);
    if (profiled) launch_profiled(ctx);
    else launch_steps(ctx);
    stage_out(ctx);
  }

  void launch_steps(RunContext& ctx) {
    if (collectives_ && flags().RLX_COLLECTIVE_OVERLAP) return launch_overlapped(ctx);
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (!ctx.mega_at.empty() && ctx.mega_at[i] >= 0) {
        const MegaRun& r = ctx.mega[static_cast<size_t>(ctx.mega_at[i])];
        launch_megakernel(r.ops, static_cast<int>(r.end - r.first), r.counters, mega_grid_, r.x, r.w, ctx.error, ctx.stream);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)  // in a capture that cannot take it, capture() runs the steps eagerly
          throw Error(ErrorKind::runtime, cat("graph @", lir_.name, ": the megakernel over steps ", r.first, "–", r.end - 1, " did not launch: ", cudaGetErrorString(e)));
        i = r.end - 1;
        continue;
      }
      LaunchArgs a{lir_.node(steps_[i].node), steps_[i].node, ctx.in[i], ctx.out[i], ctx.stream, scratch_of(ctx, i), ctx.error};
      steps_[i].launch(a);
      check_launch(a);
    }
  }

  bool is_collective(size_t step) const { return ir::has_trait(lir_.node(steps_[step].node).op, ir::kCollective); }

  // Per step (and one past the last): the collectives the context's stream must wait for before
  // it — each before the first later step that reads what it writes or writes what it touches.
  std::vector<std::vector<size_t>> collective_joins(const RunContext& ctx) const {
    std::vector<StepAccess> acc = accesses(ctx);
    auto overlaps = [](const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
      for (const ByteRange& x : a)
        for (const ByteRange& y : b)
          if (x.lo < y.hi && y.lo < x.hi) return true;
      return false;
    };
    std::vector<std::vector<size_t>> joins(steps_.size() + 1);
    for (size_t c = 0; c < steps_.size(); ++c) {
      if (!is_collective(c)) continue;
      size_t j = c + 1;
      for (; j < steps_.size(); ++j)
        if (!is_collective(j) && (overlaps(acc[j].reads, acc[c].writes) || overlaps(acc[j].writes, acc[c].writes) || overlaps(acc[j].writes, acc[c].reads))) break;
      joins[j].push_back(c);
    }
    return joins;
  }

  // The steps in order on the context's stream, but each collective on a stream of its own: it
  // starts once the kernels before it are done, and the context's stream waits for it only before
  // the first later step that touches its bytes (reads what it writes, or writes what it reads or
  // writes) — so an NCCL all-reduce of a gradient bucket runs while the backward goes on. A
  // collective that stages through the host (Gloo, MPI) blocks the launching thread: in order,
  // correct, not overlapped. Collectives keep their order on their one stream, as NCCL needs.
  void launch_overlapped(RunContext& ctx) {
    if (!ctx.comm) {
      check(cudaStreamCreateWithFlags(&ctx.comm, cudaStreamNonBlocking), "creating the collectives' stream");
      ctx.comm_events.resize(2 * steps_.size());
      for (size_t i = 0; i < steps_.size(); ++i)
        if (is_collective(i)) {
          check(cudaEventCreateWithFlags(&ctx.comm_events[2 * i], cudaEventDisableTiming), "creating an event");
          check(cudaEventCreateWithFlags(&ctx.comm_events[2 * i + 1], cudaEventDisableTiming), "creating an event");
        }
    }
    if (ctx.joins.empty()) ctx.joins = collective_joins(ctx);  // until the bindings change (rebind)
    for (size_t i = 0; i < steps_.size(); ++i) {
      for (size_t c : ctx.joins[i]) check(cudaStreamWaitEvent(ctx.stream, ctx.comm_events[2 * c + 1], 0), "joining a collective");
      const bool comm = is_collective(i);
      if (comm) {
        check(cudaEventRecord(ctx.comm_events[2 * i], ctx.stream), "ordering a collective");
        check(cudaStreamWaitEvent(ctx.comm, ctx.comm_events[2 * i], 0), "ordering a collective");
      }
      LaunchArgs a{lir_.node(steps_[i].node), steps_[i].node, ctx.in[i], ctx.out[i], comm ? ctx.comm : ctx.stream, scratch_of(ctx, i), ctx.error};
      steps_[i].launch(a);
      check_launch(a);
      if (comm) check(cudaEventRecord(ctx.comm_events[2 * i + 1], ctx.comm), "ordering a collective");
    }
    for (size_t c : ctx.joins[steps_.size()]) check(cudaStreamWaitEvent(ctx.stream, ctx.comm_events[2 * c + 1], 0), "joining a collective");
  }

  void* scratch_of(const RunContext& ctx, size_t step) const {
    return static_cast<uint8_t*>(ctx.mem->data()) + scratch_offset_ + steps_[step].scratch_at;
  }

  // The device bytes every step reads and writes in this context (its scratch counts as written).
  std::vector<StepAccess> accesses(const RunContext& ctx, bool with_scratch = true) const {
    auto range = [](const DeviceView& v) {
      auto lo = reinterpret_cast<uintptr_t>(v.data);
      return ByteRange{lo, lo + dtype_bytes(v.dtype, v.numel)};
    };
    std::vector<StepAccess> acc(steps_.size());
    for (size_t i = 0; i < steps_.size(); ++i) {
      for (const DeviceView& v : ctx.in[i]) acc[i].reads.push_back(range(v));
      for (const DeviceView& v : ctx.out[i]) acc[i].writes.push_back(range(v));
      auto scratch = reinterpret_cast<uintptr_t>(scratch_of(ctx, i));
      if (with_scratch && steps_[i].scratch) acc[i].writes.push_back({scratch, scratch + steps_[i].scratch});
    }
    return acc;
  }

  // The steps launched over several streams, each waiting only for the steps whose bytes it
  // depends on (step_order.h); inside a capture this records a graph whose independent kernels
  // run side by side. Every stream joins the context's own at the end.
  void launch_concurrent(RunContext& ctx) {
    StreamPlan plan = plan_streams(step_dependencies(accesses(ctx)), kCaptureStreams);
    while (static_cast<int>(ctx.side.size()) + 1 < plan.used) {
      cudaStream_t t = nullptr;
      check(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking), "creating a stream");
      ctx.side.push_back(t);
    }
    if (ctx.finished.size() < steps_.size()) {
      size_t had = ctx.finished.size();
      ctx.finished.resize(steps_.size());
      for (size_t i = had; i < steps_.size(); ++i) check(cudaEventCreateWithFlags(&ctx.finished[i], cudaEventDisableTiming), "creating an event");
    }
    auto stream = [&](int k) { return k == 0 ? ctx.stream : ctx.side[static_cast<size_t>(k - 1)]; };
    cudaEvent_t fork = nullptr;
    check(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "creating an event");
    check(cudaEventRecord(fork, ctx.stream), "forking the capture");
    std::vector<int> tail(static_cast<size_t>(plan.used), -1);
    for (int k = 1; k < plan.used; ++k) check(cudaStreamWaitEvent(stream(k), fork, 0), "forking the capture");
    for (size_t i = 0; i < steps_.size(); ++i) {
      cudaStream_t s = stream(plan.stream[i]);
      for (int w : plan.waits[i]) check(cudaStreamWaitEvent(s, ctx.finished[static_cast<size_t>(w)], 0), "ordering the kernels");
      LaunchArgs a{lir_.node(steps_[i].node), steps_[i].node, ctx.in[i], ctx.out[i], s, scratch_of(ctx, i), ctx.error};
      steps_[i].launch(a);
      check_launch(a);
      check(cudaEventRecord(ctx.finished[i], s), "ordering the kernels");
      tail[static_cast<size_t>(plan.stream[i])] = static_cast<int>(i);
    }
    for (int k = 1; k < plan.used; ++k)
      if (tail[static_cast<size_t>(k)] >= 0) check(cudaStreamWaitEvent(ctx.stream, ctx.finished[static_cast<size_t>(tail[static_cast<size_t>(k)])], 0), "joining the capture");
      else check(cudaStreamWaitEvent(ctx.stream, fork, 0), "joining the capture");
    cudaEventDestroy(fork);
    if (debug_at(1)) log_line(cat("cuda: graph @", lir_.name, ": ", steps_.size(), " kernels over ", plan.used, " streams"));
  }

  // The second run records the steps into a CUDA graph (the first ran them eagerly, so every
  // lazy initialization is done) and later runs replay it: one launch instead of one per step.
  void capture(RunContext& ctx) {
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeThreadLocal), "beginning a stream capture");
    try {
      stage_in(ctx);
      if (flags().RLX_CUDA_CONCURRENT && steps_.size() <= kMaxConcurrentSteps && ctx.mega.empty()) launch_concurrent(ctx);
      else launch_steps(ctx);
      stage_out(ctx);
    } catch (...) {
      cudaStreamEndCapture(ctx.stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      if (ctx.mega.empty()) throw;
      // a capture that could not take the (cooperative) megakernel: the steps run eagerly
      cudaGetLastError();
      ctx.graph_failed = true;
      if (debug_at(1)) log_line(cat("cuda: graph @", lir_.name, ": the megakernel could not be captured; launching eagerly"));
      launch_eagerly(ctx, false);
      return;
    }
    cudaError_t e = cudaStreamEndCapture(ctx.stream, &graph);
    if (e == cudaSuccess) e = cudaGraphInstantiate(&ctx.graph, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
      cudaGetLastError();
      ctx.graph = nullptr;
      ctx.graph_failed = true;
      if (debug_at(1)) log_line(cat("cuda: graph @", lir_.name, " could not be captured (", cudaGetErrorString(e), "); launching kernels one by one"));
      launch_eagerly(ctx, false);
      return;
    }
    check(cudaGraphLaunch(ctx.graph, ctx.stream), "launching the CUDA graph");
  }

  // Every step between two events, enqueued behind a kernel that waits for the host: the steps
  // then run back to back and the event times are device time, not launch gaps. In chunks, so
  // that the queue of pending launches never fills while the GPU waits (that would deadlock).
  void launch_profiled(RunContext& ctx) {
    if (!ctx.mega.empty()) return launch_profiled_mega(ctx);
    constexpr size_t kChunk = 128;
    size_t n = steps_.size();
    if (ctx.events.empty()) {
      ctx.events.resize(2 * n);
      for (auto& e : ctx.events) check(cudaEventCreate(&e), "creating an event");
      check(cudaHostAlloc(reinterpret_cast<void**>(&ctx.flag), sizeof(int), cudaHostAllocMapped), "allocating a mapped word");
    }
    int* flag_dev = nullptr;
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev), ctx.flag, 0), "mapping a host word");
    for (size_t c = 0; c < n; c += kChunk) {
      check(cudaStreamSynchronize(ctx.stream), "profiling");
      *reinterpret_cast<volatile int*>(ctx.flag) = 0;
      launch_wait_flag(flag_dev, ctx.stream);
      for (size_t i = c; i < std::min(n, c + kChunk); ++i) {
        // a step that waits for the device mid-launch (syncs_with_host) would wait forever behind
        // the held stream: release what is queued first, and hold the stream again after it
        bool syncs = syncs_with_host(lir_.node(steps_[i].node).op);
        if (syncs) __atomic_store_n(ctx.flag, 1, __ATOMIC_SEQ_CST);
        check(cudaEventRecord(ctx.events[2 * i], ctx.stream), "recording an event");
        LaunchArgs a{lir_.node(steps_[i].node), steps_[i].node, ctx.in[i], ctx.out[i], ctx.stream, scratch_of(ctx, i), ctx.error};
        steps_[i].launch(a);
        check_launch(a);
        check(cudaEventRecord(ctx.events[2 * i + 1], ctx.stream), "recording an event");
        if (syncs) {
          check(cudaStreamSynchronize(ctx.stream), "profiling");
          *reinterpret_cast<volatile int*>(ctx.flag) = 0;
          launch_wait_flag(flag_dev, ctx.stream);
        }
      }
      __atomic_store_n(ctx.flag, 1, __ATOMIC_SEQ_CST);
    }
    check(cudaStreamSynchronize(ctx.stream), "profiling");
    std::vector<double> ms(n);
    for (size_t i = 0; i < n; ++i) {
      float t = 0;
      cudaEventElapsedTime(&t, ctx.events[2 * i], ctx.events[2 * i + 1]);
      ms[i] = t;
      profile_add("cuda", steps_[i].label, t);
    }
    profile_critical_path(ctx, ms);
  }

  // Profiling with megakernels: the other steps between events, each megakernel with device
  // timestamps per op — its ops' rows in the profile are the time from the first block having
  // the op's inputs to the last block finishing it (ops overlap), and RLX_DEBUG=1 prints the
  // timeline of the first run profiled: when each op began and ended after the kernel began.
  void launch_profiled_mega(RunContext& ctx) {
    const size_t n = steps_.size();
    if (ctx.events.empty()) {
      ctx.events.resize(2 * n);
      for (auto& e : ctx.events) check(cudaEventCreate(&e), "creating an event");
    }
    size_t longest = 0;
    for (const MegaRun& r : ctx.mega) longest = std::max(longest, r.end - r.first);
    DeviceBuffer times(sizeof(unsigned long long) * (2 * longest + 2), "the megakernel's timeline");
    std::vector<unsigned long long> t(2 * longest + 2);
    for (size_t i = 0; i < n; ++i) {
      if (ctx.mega_at[i] < 0) {
        check(cudaEventRecord(ctx.events[2 * i], ctx.stream), "recording an event");
        LaunchArgs a{lir_.node(steps_[i].node), steps_[i].node, ctx.in[i], ctx.out[i], ctx.stream, scratch_of(ctx, i), ctx.error};
        steps_[i].launch(a);
        check_launch(a);
        check(cudaEventRecord(ctx.events[2 * i + 1], ctx.stream), "recording an event");
        cudaEvent_t done = ctx.events[2 * i + 1];
        check(cudaEventSynchronize(done), "profiling");
        float ms = 0;
        cudaEventElapsedTime(&ms, ctx.events[2 * i], done);
        profile_add("cuda", steps_[i].label, ms);
        continue;
      }
      const MegaRun& r = ctx.mega[static_cast<size_t>(ctx.mega_at[i])];
      const size_t ops = r.end - r.first;
      for (size_t k = 0; k <= ops; ++k) {
        t[2 * k] = ~0ull;
        t[2 * k + 1] = 0;
      }
      check(cudaStreamSynchronize(ctx.stream), "profiling");
      check(cudaMemcpy(times.data(), t.data(), sizeof(unsigned long long) * (2 * ops + 2), cudaMemcpyHostToDevice), "profiling");
      launch_megakernel(r.ops, static_cast<int>(ops), r.counters, mega_grid_, r.x, r.w, ctx.error, ctx.stream, static_cast<unsigned long long*>(times.data()));
      check(cudaGetLastError(), "launching the megakernel");
      check(cudaStreamSynchronize(ctx.stream), "profiling");
      check(cudaMemcpy(t.data(), times.data(), sizeof(unsigned long long) * (2 * ops + 2), cudaMemcpyDeviceToHost), "profiling");
      const unsigned long long t0 = t[2 * ops];
      profile_add("cuda", cat("megakernel of ", ops, " ops (first block in to last block out)"), static_cast<double>(t[2 * ops + 1] - t0) * 1e-6);
      std::string timeline;
      for (size_t k = 0; k < ops; ++k) {
        const Step& st = steps_[r.first + k];
        const double began = static_cast<double>(t[2 * k] - t0) * 1e-3, ended = static_cast<double>(t[2 * k + 1] - t0) * 1e-3;
        profile_add("cuda", cat("megakernel: ", st.label), (ended - began) * 1e-3);
        char span[64];
        std::snprintf(span, sizeof span, "%8.1f → %8.1f us  ", began, ended);
        timeline += cat("\n  ", span, st.label);
      }
      if (debug_at(1) && !timeline_logged_.exchange(true))
        log_line(cat("cuda: graph @", lir_.name, ": megakernel timeline of steps ", r.first, "–", r.end - 1, " (µs after its first block began; ",
                     "from the first block having the op's inputs to the last block finishing it):", timeline));
      i = r.end - 1;
    }
  }

  // The graph's kernels overlap (launch_concurrent), so their sum is not what a run waits for:
  // the longest chain of dependent kernels is. Its time and length are a row of the profile,
  // and RLX_DEBUG=1 lists its kernels once.
  void profile_critical_path(const RunContext& ctx, const std::vector<double>& ms) {
    std::vector<std::vector<int>> deps = step_dependencies(accesses(ctx));
    size_t n = ms.size();
    std::vector<double> finish(n);
    std::vector<int> from(n, -1);
    for (size_t j = 0; j < n; ++j) {
      double start = 0;
      for (int i : deps[j])
        if (finish[static_cast<size_t>(i)] > start) {
          start = finish[static_cast<size_t>(i)];
          from[j] = i;
        }
      finish[j] = start + ms[j];
    }
    if (n == 0) return;
    int last = static_cast<int>(std::max_element(finish.begin(), finish.end()) - finish.begin());
    std::vector<int> chain;
    for (int k = last; k >= 0; k = from[static_cast<size_t>(k)]) chain.push_back(k);
    profile_add("cuda", cat("run: the longest chain of dependent kernels (", chain.size(), " of ", n, ")"), finish[static_cast<size_t>(last)]);
    if (debug_at(1) && !critical_logged_.exchange(true)) {
      std::string list;
      for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        list += cat("\n  ", static_cast<int>(ms[static_cast<size_t>(*it)] * 1000 + 0.5), " us  ", steps_[static_cast<size_t>(*it)].label);
      log_line(cat("cuda: graph @", lir_.name, ": the longest chain of dependent kernels (device time, no launch gaps):", list));
    }
  }

  static int64_t numel(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  }

  std::unique_ptr<RunContext> acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!pool_.empty()) {
        auto c = std::move(pool_.back());
        pool_.pop_back();
        return c;
      }
    }
    auto c = std::make_unique<RunContext>();
    c->mem = std::make_unique<DeviceBuffer>(block_bytes_, cat("the run context of graph @", lir_.name).c_str());
    check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "creating a stream");
    check(cudaMallocHost(reinterpret_cast<void**>(&c->stage), stage_bytes_), "allocating pinned memory");
    c->error = reinterpret_cast<ErrorWord*>(static_cast<uint8_t*>(c->mem->data()) + error_offset_);
    c->bound.assign(lir_.inputs().size(), nullptr);
    resolve(*c);
    return c;
  }

  // Every value's device address and every step's views, from the context's block and bindings.
  void resolve(RunContext& c) const {
    auto* base = static_cast<uint8_t*>(c.mem->data());
    size_t nv = lir_.num_values();
    c.ptr.assign(nv, nullptr);
    for (size_t v = 0; v < nv; ++v) {
      const Placement& p = lir_.placement[v];
      switch (p.kind) {
        case Placement::Kind::input: {
          auto k = static_cast<size_t>(p.index);
          c.ptr[v] = c.bound[k] ? c.bound[k] : base + input_offset_[k];
          break;
        }
        case Placement::Kind::arena: c.ptr[v] = base + p.offset; break;
        case Placement::Kind::constant: c.ptr[v] = const_ptr_[v]; break;
        default: break;
      }
    }
    for (size_t v = 0; v < nv; ++v)
      if (lir_.placement[v].kind == Placement::Kind::view) {
        auto id = static_cast<ir::ValueId>(v);
        c.ptr[v] = static_cast<uint8_t*>(c.ptr[static_cast<size_t>(passes::placement_root(lir_, id))]) + passes::placement_offset(lir_, id);
      }
    c.in.clear();
    c.out.clear();
    for (const Step& st : steps_) {
      const ir::Node& n = lir_.node(st.node);
      std::vector<DeviceView> in, out;
      for (ir::ValueId v : n.inputs) in.push_back(view_of(c, v));
      for (ir::ValueId v : n.outputs) out.push_back(view_of(c, v));
      c.in.push_back(std::move(in));
      c.out.push_back(std::move(out));
    }
    plan_megakernel(c);
  }

  // RLX_CUDA_MEGAKERNEL = n: every stretch of at least n consecutive steps that can be megakernel
  // ops becomes one, each op listing the earlier ops of its stretch whose bytes it touches.
  void plan_megakernel(RunContext& c) const {
    c.mega.clear();
    c.mega_at.clear();
    c.mega_mem.reset();
    const int min_run = flags().RLX_CUDA_MEGAKERNEL;
    if (min_run <= 0 || collectives_ || host_synced_ || mega_grid_ <= 0) return;
    const size_t n = steps_.size();
    std::vector<MegaOp> ops(n);
    std::vector<bool> ok(n, false);
    for (size_t i = 0; i < n; ++i) {
      if (!steps_[i].mega) continue;
      LaunchArgs a{lir_.node(steps_[i].node), steps_[i].node, c.in[i], c.out[i], c.stream, nullptr, c.error};
      ok[i] = steps_[i].mega(a, ops[i]) && ops[i].tiles > 0 && megakernel_needs(ops[i]).ok && megakernel_kind_chosen(ops[i].kind);
      ops[i].node = steps_[i].node;
    }
    const std::vector<MegaStretch> runs = plan_mega_stretches(ops, ok, accesses(c, false), mega_grid_, min_run);
    if (runs.empty()) return;
    size_t total = 0, work_bytes = 0;
    for (auto& r : runs) {
      total += r.end - r.first;
      for (size_t i = r.first; i < r.end; ++i) work_bytes += align_up(ops[i].workspace_bytes);
    }
    const size_t ops_bytes = align_up(total * sizeof(MegaOp)), count_bytes = align_up((total + runs.size()) * kMegaCounterStride * sizeof(unsigned));
    c.mega_mem = std::make_unique<DeviceBuffer>(ops_bytes + count_bytes + work_bytes, "the megakernel's ops");
    auto* base = static_cast<uint8_t*>(c.mega_mem->data());
    check(cudaMemset(base + ops_bytes, 0, count_bytes + work_bytes), "zeroing the megakernel's counters");
    uint8_t* work = base + ops_bytes + count_bytes;  // the ops' own workspaces
    for (auto& r : runs)
      for (size_t i = r.first; i < r.end; ++i)
        if (ops[i].workspace_bytes) {
          ops[i].workspace = work;
          work += align_up(ops[i].workspace_bytes);
        }
    c.mega_at.assign(n, -1);
    size_t at = 0, counter = 0;
    for (const MegaStretch& st : runs) {
      MegaRun r{st, reinterpret_cast<const MegaOp*>(base) + at, reinterpret_cast<unsigned*>(base + ops_bytes) + counter * kMegaCounterStride};
      const size_t len = st.end - st.first;
      check(cudaMemcpy(const_cast<MegaOp*>(r.ops), ops.data() + st.first, len * sizeof(MegaOp), cudaMemcpyHostToDevice), "uploading the megakernel's ops");
      c.mega_at[st.first] = static_cast<int>(c.mega.size());
      c.mega.push_back(r);
      at += len;
      counter += len + 1;
    }
    if (debug_at(1)) {
      std::string list;
      for (const MegaRun& r : c.mega) list += cat(list.empty() ? "" : ", ", r.first, "–", r.end - 1);
      log_line(cat("cuda: graph @", lir_.name, ": ", total, " of ", n, " steps in ", c.mega.size(), " megakernel run(s) (steps ", list, ") on ", mega_grid_, " blocks"));
    }
  }

  // Other inputs are resident now (or no longer): new addresses, so a new CUDA graph too.
  void rebind(RunContext& c, std::vector<void*> bound) {
    c.bound = std::move(bound);
    resolve(c);
    c.joins.clear();  // the steps' bytes moved
    if (c.graph) cudaGraphExecDestroy(c.graph);
    c.graph = nullptr;
    c.graph_failed = false;
  }

  DeviceView view_of(const RunContext& c, ir::ValueId v) const {
    DeviceView d;
    d.data = c.ptr[static_cast<size_t>(v)];
    d.dtype = lir_.type(v).dtype;
    d.shape = shapes_[static_cast<size_t>(v)];
    d.numel = numel(d.shape);
    return d;
  }

  void release(std::unique_ptr<RunContext> c) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_.push_back(std::move(c));
  }

  ir::Graph lir_;
  bool collectives_ = false;  // the program has all_reduce / all_gather nodes
  bool host_synced_ = false;  // the program has nodes that wait for the device mid-run (syncs_with_host)
  int mega_grid_ = 0;         // the megakernel's resident blocks (RLX_CUDA_MEGAKERNEL), 0: none
  std::vector<Step> steps_;
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<std::shared_ptr<DeviceConstant>> constants_;
  std::vector<void*> const_ptr_;
  std::vector<size_t> input_offset_;
  std::vector<Staged> stage_in_, stage_out_;  // per input / output: its place in the staging block
  size_t stage_error_ = 0, stage_bytes_ = 0;
  size_t scratch_ = 0, scratch_offset_ = 0, error_offset_ = 0, block_bytes_ = 0;
  std::mutex mu_;
  std::vector<std::unique_ptr<RunContext>> pool_;
  std::atomic<bool> critical_logged_{false};
  std::atomic<bool> timeline_logged_{false};
};

}  // namespace

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir) { return std::make_unique<CudaExecutable>(lir); }

}  // namespace rlx::backends::cuda
