// Reductions (any axes), cumulative sums and sorting on the cuda device.
#include "backends/cuda/kernels.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

bool real_numeric(DType d) { return !is_complex(d) && d != DType::i4 && d != DType::boolean; }

bool claims_reduce(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return !is_complex(in[0].dtype) && in[0].dtype != DType::i4;
}

bool claims_cumsum(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) { return real_numeric(in[0].dtype); }

// Sorting keeps a whole line in shared memory.
bool claims_sort(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& a) {
  if (!real_numeric(in[0].dtype)) return false;
  const Dim& n = in[0].shape[static_cast<size_t>(norm_axis(a.i("axis"), in[0].shape.size()))];
  return n.is_static() && n.value() <= kMaxSortLine;
}

Kernel make_reduce(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  std::vector<bool> reduced(x.size(), false);
  for (int64_t ax : n.attrs.ints("axes")) reduced[static_cast<size_t>(norm_axis(ax, x.size()))] = true;
  ReduceSpaces sp = reduce_spaces(x, reduced, "mir.reduce");
  Red kind = red_of(n.attrs.s("kind"));
  Dt dt = to_dt(in_type(g, n, 0).dtype), od = to_dt(out_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_reduce(kind, dt, od, a.in[0].data, a.out[0].data, sp.kept, sp.ks, sp.red, sp.rs, a.scratch, a.stream); },
          reduce_scratch_bytes(kind, dt, sp.kept, sp.ks, sp.red, sp.rs)};
}

void split_at(const std::vector<int64_t>& shape, size_t axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  n = shape[axis];
}

Kernel make_cumsum(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  int64_t outer, len, inner;
  split_at(x, static_cast<size_t>(norm_axis(n.attrs.i("axis"), x.size())), outer, len, inner);
  bool exclusive = n.attrs.b("exclusive"), reverse = n.attrs.b("reverse");
  Dt dt = to_dt(in_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_cumsum(dt, a.in[0].data, a.out[0].data, outer, len, inner, exclusive, reverse, a.stream); }};
}

Kernel make_sort(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  int64_t outer, len, inner;
  split_at(x, static_cast<size_t>(norm_axis(n.attrs.i("axis"), x.size())), outer, len, inner);
  bool topk = n.op == Op::topk;
  int64_t k = topk ? n.attrs.i("k") : len;
  bool desc = topk ? n.attrs.b("largest") : n.attrs.b("descending");
  Dt dt = to_dt(in_type(g, n, 0).dtype), idt = to_dt(out_type(g, n, 1).dtype);
  return {[=](const LaunchArgs& a) { launch_sort(dt, a.in[0].data, a.out[0].data, a.out[1].data, idt, outer, len, inner, k, desc, a.stream); }};
}

}  // namespace

Red red_of(const std::string& kind) {
  if (kind == "sum") return Red::sum;
  if (kind == "prod") return Red::prod;
  if (kind == "max") return Red::max;
  if (kind == "min") return Red::min;
  if (kind == "argmax") return Red::argmax;
  return Red::argmin;
}

ReduceSpaces reduce_spaces(const std::vector<int64_t>& shape, const std::vector<bool>& reduced, const char* what) {
  std::vector<int64_t> cs = contiguous_strides(shape), kshape, kst, rshape, rst;
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? rshape : kshape).push_back(shape[d]);
    (reduced[d] ? rst : kst).push_back(cs[d]);
  }
  collapse(kshape, {&kst}, what);
  collapse(rshape, {&rst}, what);
  return {make_space(kshape), make_space(rshape), make_strides(kst), make_strides(rst)};
}

void register_reduce(KernelTable& t) {
  t[static_cast<size_t>(Op::reduce)] = {claims_reduce, make_reduce};
  t[static_cast<size_t>(Op::cumsum)] = {claims_cumsum, make_cumsum};
  t[static_cast<size_t>(Op::sort)] = {claims_sort, make_sort};
  t[static_cast<size_t>(Op::topk)] = {claims_sort, make_sort};
}

}  // namespace rlx::backends::cuda
