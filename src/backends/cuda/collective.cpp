// all_reduce and all_gather on device memory. With an engine that reduces device memory (NCCL)
// the call is enqueued on the run's stream; with one that moves host memory (Gloo, MPI) the
// bytes go to the host, through the engine and back — correct anywhere, fast only with NCCL.
// Executables with collectives are launched step by step, never captured in a CUDA graph.
#include <cstring>
#include <vector>

#include "backends/cuda/device.h"
#include "backends/cuda/kernels.h"
#include "runtime/collective.h"
#include "rlx/error.h"
#include "rlx/tensor.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

size_t bytes_of(const DeviceView& v) { return static_cast<size_t>(v.numel) * dtype_size(v.dtype); }

runtime::HostView host_view(std::vector<char>& buf, const DeviceView& v) {
  buf.resize(bytes_of(v));
  return {buf.data(), v.dtype, v.shape, v.numel};
}

void to_host(std::vector<char>& buf, const DeviceView& v, cudaStream_t s) {
  buf.resize(bytes_of(v));
  check(cudaMemcpyAsync(buf.data(), v.data, buf.size(), cudaMemcpyDeviceToHost, s), "staging a collective's input");
  check(cudaStreamSynchronize(s), "staging a collective's input");
}

bool claims_reduction(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::f32, DType::f64, DType::i32, DType::i64});
}
bool claims_any(Op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) { return true; }

Kernel make_all_reduce(const ir::Node& node, const ir::Graph&) {
  runtime::CollectiveReduce op = runtime::collective_reduce(node.attrs.s("op"));
  return Kernel([op](const LaunchArgs& a) {
    runtime::CollectiveGroup& g = runtime::collective_group("all_reduce");
    const DeviceView &x = a.in[0], &y = a.out[0];
    if (x.data != y.data) check(cudaMemcpyAsync(y.data, x.data, bytes_of(x), cudaMemcpyDeviceToDevice, a.stream), "copying an all_reduce's input");
    if (g.all_reduce_device(y.data, y.numel, y.dtype, op, a.stream)) return;
    std::vector<char> buf;
    to_host(buf, y, a.stream);
    runtime::HostView h = host_view(buf, y);
    runtime::all_reduce_host(h, h, op);
    check(cudaMemcpyAsync(y.data, buf.data(), buf.size(), cudaMemcpyHostToDevice, a.stream), "returning an all_reduce's result");
    check(cudaStreamSynchronize(a.stream), "returning an all_reduce's result");  // buf dies here
  }, 0, "all_reduce");
}

Kernel make_all_gather(const ir::Node& node, const ir::Graph& lir) {
  int64_t axis_attr = node.attrs.i("axis"), ranks = node.attrs.i("ranks");
  size_t gathered = dtype_size(lir.type(node.outputs[0]).dtype);  // the engine's blocks, before interleaving
  for (int64_t d : static_shape(lir, node.outputs[0])) gathered *= static_cast<size_t>(d);
  return Kernel([axis_attr, ranks](const LaunchArgs& a) {
    runtime::CollectiveGroup& g = runtime::collective_group("all_gather");
    const DeviceView &x = a.in[0], &y = a.out[0];
    int64_t axis = norm_axis(axis_attr, x.shape.size());
    if (g.size() != ranks)
      throw Error(ErrorKind::invalid_argument, cat("all_gather: the graph gathers over ", ranks, " ranks but the job has ", g.size()));
    int64_t outer = 1, row = static_cast<int64_t>(dtype_size(x.dtype));
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis); d < x.shape.size(); ++d) row *= x.shape[d];
    if (outer == 1 && g.all_gather_device(x.data, y.data, x.numel, x.dtype, a.stream)) return;  // blocks are the concatenation
    if (outer > 1 && a.scratch && g.all_gather_device(x.data, a.scratch, x.numel, x.dtype, a.stream)) {
      // [ranks][outer][row] → [outer][ranks][row]: one strided copy per rank
      for (int64_t r = 0; r < ranks; ++r)
        check(cudaMemcpy2DAsync(static_cast<char*>(y.data) + r * row, static_cast<size_t>(ranks * row), static_cast<char*>(a.scratch) + r * outer * row,
                                static_cast<size_t>(row), static_cast<size_t>(row), static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, a.stream),
              "interleaving an all_gather");
      return;
    }
    std::vector<char> in, out;
    to_host(in, x, a.stream);
    runtime::HostView hout = host_view(out, y);
    runtime::all_gather_host(host_view(in, x), hout, axis, ranks);
    check(cudaMemcpyAsync(y.data, out.data(), out.size(), cudaMemcpyHostToDevice, a.stream), "returning an all_gather's result");
    check(cudaStreamSynchronize(a.stream), "returning an all_gather's result");
  }, gathered, "all_gather");
}

// reduce_scatter and broadcast_from stage through the host on every engine (NCCL has both; not
// wired yet: nothing on the GPU sends them).
Kernel make_reduce_scatter(const ir::Node& node, const ir::Graph&) {
  runtime::CollectiveReduce op = runtime::collective_reduce(node.attrs.s("op"));
  int64_t axis_attr = node.attrs.i("axis"), ranks = node.attrs.i("ranks");
  return Kernel([op, axis_attr, ranks](const LaunchArgs& a) {
    const DeviceView &x = a.in[0], &y = a.out[0];
    std::vector<char> in, out;
    to_host(in, x, a.stream);
    runtime::HostView hout = host_view(out, y);
    runtime::reduce_scatter_host(host_view(in, x), hout, op, norm_axis(axis_attr, x.shape.size()), ranks);
    check(cudaMemcpyAsync(y.data, out.data(), out.size(), cudaMemcpyHostToDevice, a.stream), "returning a reduce_scatter's result");
    check(cudaStreamSynchronize(a.stream), "returning a reduce_scatter's result");
  }, 0, "reduce_scatter");
}

Kernel make_broadcast_from(const ir::Node& node, const ir::Graph&) {
  int64_t root = node.attrs.i("root");
  return Kernel([root](const LaunchArgs& a) {
    const DeviceView &x = a.in[0], &y = a.out[0];
    std::vector<char> buf;
    to_host(buf, x, a.stream);
    runtime::HostView h = host_view(buf, x);
    runtime::broadcast_host(h, h, root);
    check(cudaMemcpyAsync(y.data, buf.data(), buf.size(), cudaMemcpyHostToDevice, a.stream), "returning a broadcast's result");
    check(cudaStreamSynchronize(a.stream), "returning a broadcast's result");
  }, 0, "broadcast_from");
}

}  // namespace

void register_collective(KernelTable& t) {
  t[static_cast<size_t>(Op::reduce_scatter)] = {claims_reduction, make_reduce_scatter};
  t[static_cast<size_t>(Op::broadcast_from)] = {claims_any, make_broadcast_from};
  t[static_cast<size_t>(Op::all_reduce)] = {claims_reduction, make_all_reduce};
  t[static_cast<size_t>(Op::all_gather)] = {claims_any, make_all_gather};
}

}  // namespace rlx::backends::cuda
