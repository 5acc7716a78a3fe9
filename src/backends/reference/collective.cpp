// all_reduce, all_gather, reduce_scatter, broadcast_from: the bytes go to the job's communicator (runtime/collective.h).
#include "backends/reference/kernels.h"
#include "runtime/collective.h"

namespace rlx::backends::reference {

namespace {

void all_reduce(const KernelArgs& a) { runtime::all_reduce_host(a.in[0], a.out[0], runtime::collective_reduce(a.node.attrs.s("op"))); }

void all_gather(const KernelArgs& a) {
  int64_t axis = a.node.attrs.i("axis");
  if (axis < 0) axis += static_cast<int64_t>(a.in[0].shape.size());
  runtime::all_gather_host(a.in[0], a.out[0], axis, a.node.attrs.i("ranks"));
}

void reduce_scatter(const KernelArgs& a) {
  int64_t axis = a.node.attrs.i("axis");
  if (axis < 0) axis += static_cast<int64_t>(a.in[0].shape.size());
  runtime::reduce_scatter_host(a.in[0], a.out[0], runtime::collective_reduce(a.node.attrs.s("op")), axis, a.node.attrs.i("ranks"));
}

void broadcast_from(const KernelArgs& a) { runtime::broadcast_host(a.in[0], a.out[0], a.node.attrs.i("root")); }

}  // namespace

void register_collective(KernelTable& t) {
  t[static_cast<size_t>(ir::Op::reduce_scatter)] = reduce_scatter;
  t[static_cast<size_t>(ir::Op::broadcast_from)] = broadcast_from;
  t[static_cast<size_t>(ir::Op::all_reduce)] = all_reduce;
  t[static_cast<size_t>(ir::Op::all_gather)] = all_gather;
}

}  // namespace rlx::backends::reference
