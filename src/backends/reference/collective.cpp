// all_reduce and all_gather: the bytes go to the job's communicator (runtime/collective.h).
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

}  // namespace

void register_collective(KernelTable& t) {
  t[static_cast<size_t>(ir::Op::all_reduce)] = all_reduce;
  t[static_cast<size_t>(ir::Op::all_gather)] = all_gather;
}

}  // namespace rlx::backends::reference
