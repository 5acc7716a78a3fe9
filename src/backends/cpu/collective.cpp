// all_reduce, all_gather, reduce_scatter and broadcast_from on the job's communicator (runtime/collective.h); the engines
// reduce the dtypes Gloo and MPI have (f32, f64, i32, i64; narrower ones are widened to them);
// a gather moves bytes of any dtype.
#include "backends/cpu/kernels.h"
#include "runtime/collective.h"

namespace rlx::backends::cpu {

namespace {

bool claims_reduction(ir::Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::f32, DType::f64, DType::i32, DType::i64});
}

bool claims_any(ir::Op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) { return true; }  // bytes

HostKernel make_all_reduce(const ir::Node& node, const ir::Graph&) {
  runtime::CollectiveReduce op = runtime::collective_reduce(node.attrs.s("op"));
  return [op](const KernelArgs& a) { runtime::all_reduce_host(a.in[0], a.out[0], op); };
}

HostKernel make_all_gather(const ir::Node& node, const ir::Graph&) {
  int64_t axis = node.attrs.i("axis"), ranks = node.attrs.i("ranks");
  return [axis, ranks](const KernelArgs& a) {
    runtime::all_gather_host(a.in[0], a.out[0], axis < 0 ? axis + static_cast<int64_t>(a.in[0].shape.size()) : axis, ranks);
  };
}

HostKernel make_reduce_scatter(const ir::Node& node, const ir::Graph&) {
  int64_t axis = node.attrs.i("axis"), ranks = node.attrs.i("ranks");
  runtime::CollectiveReduce op = runtime::collective_reduce(node.attrs.s("op"));
  return [axis, ranks, op](const KernelArgs& a) {
    runtime::reduce_scatter_host(a.in[0], a.out[0], op, axis < 0 ? axis + static_cast<int64_t>(a.in[0].shape.size()) : axis, ranks);
  };
}

HostKernel make_broadcast_from(const ir::Node& node, const ir::Graph&) {
  int64_t root = node.attrs.i("root");
  return [root](const KernelArgs& a) { runtime::broadcast_host(a.in[0], a.out[0], root); };
}

}  // namespace

void register_collective(KernelTable& t) {
  t[static_cast<size_t>(ir::Op::reduce_scatter)] = {claims_reduction, make_reduce_scatter};
  t[static_cast<size_t>(ir::Op::broadcast_from)] = {claims_any, make_broadcast_from};
  t[static_cast<size_t>(ir::Op::all_reduce)] = {claims_reduction, make_all_reduce};
  t[static_cast<size_t>(ir::Op::all_gather)] = {claims_any, make_all_gather};
}

}  // namespace rlx::backends::cpu
