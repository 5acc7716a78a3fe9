// Reductions (any set of axes), cumsum, sort and top-k, threaded over output positions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "backends/cpu/kernels.h"
#include "backends/cpu/simd.h"
#include "codegen/host_math.h"
#include "codegen/reduce.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// Splits a shape into kept and reduced dims: the base offset of every output element and the
// offsets of every element of one reduction window.
struct ReducePlan {
  std::vector<int64_t> base, window;
};

ReducePlan plan_reduce(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  std::vector<int64_t> st = contiguous_strides(shape);
  std::vector<int64_t> kept_dims, kept_st, red_dims, red_st;
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? red_dims : kept_dims).push_back(shape[d]);
    (reduced[d] ? red_st : kept_st).push_back(st[d]);
  }
  auto offsets = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<int64_t> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = 0;
      for (size_t d = dims.size(); d-- > 0;) {
        off += (rem % dims[d]) * strides[d];
        rem /= dims[d];
      }
      out[static_cast<size_t>(i)] = off;
    }
    return out;
  };
  return {offsets(kept_dims, kept_st), offsets(red_dims, red_st)};
}

template <class T>
bool greater_nan_first(T a, T b) {  // a > b with NaN above everything: sort's order (no indices)
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return false;
    if (std::isnan(a)) return true;
  }
  return a > b;
}


template <class T>
void reduce_typed(const KernelArgs& a, const std::string& kind, const ReducePlan& p) {
  const T* x = a.in[0].as<T>();
  int64_t n_out = static_cast<int64_t>(p.base.size());
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  if (kind == "argmax" || kind == "argmin") {
    int64_t* y = a.out[0].as<int64_t>();
    bool mx = kind == "argmax";
    parallel_items(n_out, 16, [&](int64_t o) {
      const T* row = x + p.base[static_cast<size_t>(o)];
      int64_t best = 0;
      for (size_t k = 1; k < p.window.size(); ++k)
        if (codegen::wins(codegen::HostMachine<T>{}, mx, row[p.window[k]], static_cast<int64_t>(k), row[p.window[static_cast<size_t>(best)]], best))
          best = static_cast<int64_t>(k);
      y[o] = best;
    });
    return;
  }
  // The other kinds fold with codegen's op of the kind (a constant in each loop), sums and
  // products in Acc, from the op's identity.
  T* y = a.out[0].as<T>();
  auto fold = [&](auto op, auto identity) {
    constexpr Op kOp = decltype(op)::value;
    parallel_items(n_out, 16, [&](int64_t o) {
      const T* row = x + p.base[static_cast<size_t>(o)];
      auto acc = identity;
      for (int64_t off : p.window) acc = codegen::eval_scalar<decltype(acc)>(kOp, acc, static_cast<decltype(acc)>(row[off]));
      y[o] = static_cast<T>(acc);
    });
  };
  using codegen::Reduction;
  if (kind == "sum") fold(std::integral_constant<Op, codegen::fold_op(Reduction::sum)>{}, Acc(0));
  else if (kind == "prod") fold(std::integral_constant<Op, codegen::fold_op(Reduction::prod)>{}, Acc(1));
  else {
    bool mx = kind == "max";
    T lo = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    T hi = std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    if (std::is_same_v<T, uint8_t> && a.in[0].dtype == DType::boolean) lo = 0, hi = 1;
    if (mx) fold(std::integral_constant<Op, codegen::fold_op(Reduction::max)>{}, lo);
    else fold(std::integral_constant<Op, codegen::fold_op(Reduction::min)>{}, hi);
  }
}

// f32 sums over one contiguous block of axes with kept axes after it, y[o, i] = Σ_r x[o, r, i]:
// whole rows added into double accumulators in the generic loop's order (the same sums), a
// vector loop over i instead of a strided walk per output — bias gradients (axis 0) and mean
// pooling (axis 1). False when the shape is not of that form.
bool sum_block_of_rows(const KernelArgs& a, const std::vector<bool>& reduced) {
  const std::vector<int64_t>& shape = a.in[0].shape;
  int64_t first = -1, last = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) {
      if (first < 0) first = static_cast<int64_t>(d);
      else if (last + 1 != static_cast<int64_t>(d)) return false;  // not one block
      last = static_cast<int64_t>(d);
    }
  if (first < 0) return false;
  int64_t O = 1, R = 1, I = 1;
  for (size_t d = 0; d < shape.size(); ++d) (static_cast<int64_t>(d) < first ? O : static_cast<int64_t>(d) <= last ? R : I) *= shape[d];
  if (I < 16 || R == 0) return false;
  const float* x = a.in[0].as<float>();
  float* y = a.out[0].as<float>();
  constexpr int64_t kChunk = 256;
  const int64_t chunks = (I + kChunk - 1) / kChunk;
  rlx::parallel_for(O * chunks, std::max<int64_t>(1, 4096 / std::max<int64_t>(R, 1)), [&](int64_t lo, int64_t hi) {
    double acc[kChunk];
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / chunks, i0 = (t % chunks) * kChunk, n = std::min(kChunk, I - i0);
      for (int64_t i = 0; i < n; ++i) acc[i] = 0;
      const float* base = x + o * R * I + i0;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<double>(base[r * I + i]);
      for (int64_t i = 0; i < n; ++i) y[o * I + i0 + i] = static_cast<float>(acc[i]);
    }
  });
  return true;
}

// f32 sums over trailing axes with long rows (a gradient summed back to a scalar: Σ over [N] or
// [N, 3] → [1]), where one output per thread would leave every core but one idle: each row in
// fixed chunks of kChunk elements summed in parallel (eight double accumulators a chunk), then
// each row's chunk sums added in order — the same result whatever the thread count.
bool sum_long_rows(const KernelArgs& a, const std::vector<bool>& reduced) {
  const std::vector<int64_t>& shape = a.in[0].shape;
  size_t first = shape.size();
  while (first > 0 && reduced[first - 1]) --first;
  for (size_t d = 0; d < first; ++d)
    if (reduced[d]) return false;  // not the trailing axes alone
  int64_t O = 1, R = 1;
  for (size_t d = 0; d < shape.size(); ++d) (d < first ? O : R) *= shape[d];
  constexpr int64_t kChunk = 16384;
  if (R < 2 * kChunk || O > 64) return false;
  const int64_t chunks = (R + kChunk - 1) / kChunk;
  const float* x = a.in[0].as<float>();
  std::vector<double> partial(static_cast<size_t>(O * chunks));
  rlx::parallel_for(O * chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / chunks, c0 = (t % chunks) * kChunk, n = std::min(kChunk, R - c0);
      const float* row = x + o * R + c0;
      double acc[8] = {};
      int64_t i = 0;
      for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(row[i + k]);
      for (; i < n; ++i) acc[0] += static_cast<double>(row[i]);
      partial[static_cast<size_t>(t)] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    }
  });
  float* y = a.out[0].as<float>();
  for (int64_t o = 0; o < O; ++o) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(o * chunks + c)];
    y[o] = static_cast<float>(s);
  }
  return true;
}

// max, min, argmax and argmin of f32 along trailing axes — each output a contiguous line (a
// row's max|x| for int8 scales, a softmax's max, a greedy step's argmax over the vocabulary):
// vector loops (simd.h), with no per-run offset tables. NaN is tracked beside the loop so it
// still wins; an arg kind then takes the first index holding the extreme (or the first NaN):
// the order of codegen::wins.
bool f32_lines(const KernelArgs& a, const std::string& kind, const std::vector<bool>& reduced) {
  bool mx = kind == "max" || kind == "argmax", arg = kind == "argmax" || kind == "argmin";
  if (a.in[0].dtype != DType::f32 || !(arg || kind == "max" || kind == "min")) return false;
  const std::vector<int64_t>& shape = a.in[0].shape;
  size_t first = shape.size();
  while (first > 0 && reduced[first - 1]) --first;
  for (size_t d = 0; d < first; ++d)
    if (reduced[d]) return false;  // not a trailing run of axes
  int64_t n = 1, rows = 1;
  for (size_t d = 0; d < shape.size(); ++d) (d < first ? rows : n) *= shape[d];
  if (n == 0) return false;
  const float* x = a.in[0].as<float>();
  parallel_items(rows, 16, [&](int64_t o) {
    const float* row = x + o * n;
    float ext = simd::extreme(row, n, mx);
    if (arg) a.out[0].as<int64_t>()[o] = simd::first_equal(row, n, ext);
    else a.out[0].as<float>()[o] = ext;
  });
  return true;
}

HostKernel make_reduce(const ir::Node& n, const ir::Graph&) {
  std::string kind = n.attrs.s("kind");
  std::vector<int64_t> axes = n.attrs.ints("axes");
  return [kind, axes](const KernelArgs& a) {
    std::vector<bool> reduced(a.in[0].shape.size(), false);
    for (int64_t ax : axes) reduced[static_cast<size_t>(normalize_axis(ax, reduced.size()))] = true;
    if (kind == "sum" && a.in[0].dtype == DType::f32 && (sum_block_of_rows(a, reduced) || sum_long_rows(a, reduced))) return;
    if (f32_lines(a, kind, reduced)) return;
    ReducePlan p = plan_reduce(a.in[0].shape, reduced);
    dispatch_typed(a.in[0].dtype, [&](auto tag) { reduce_typed<decltype(tag)>(a, kind, p); });
  };
}

// Calls f(base, stride, n) for every line along `axis`.
template <class F>
void lines(const std::vector<int64_t>& shape, int64_t axis, F f) {
  int64_t n = shape[static_cast<size_t>(axis)], inner = 1, outer = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  if (n == 0) return;
  parallel_items(outer * inner, 64, [&](int64_t oi) { f((oi / inner) * n * inner + oi % inner, inner, n); });
}

HostKernel make_cumsum(const ir::Node& node, const ir::Graph&) {
  int64_t axis_attr = node.attrs.i("axis");
  bool exclusive = node.attrs.b("exclusive"), reverse = node.attrs.b("reverse");
  return [=](const KernelArgs& a) {
    int64_t axis = normalize_axis(axis_attr, a.in[0].shape.size());
    dispatch_typed(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      const T* x = a.in[0].as<T>();
      T* y = a.out[0].as<T>();
      lines(a.in[0].shape, axis, [&](int64_t base, int64_t st, int64_t n) {
        Acc s = 0;
        for (int64_t k = 0; k < n; ++k) {
          int64_t j = base + (reverse ? n - 1 - k : k) * st;
          T v = x[j];
          if (exclusive) y[j] = static_cast<T>(s);
          s = static_cast<Acc>(s + v);
          if (!exclusive) y[j] = static_cast<T>(s);
        }
      });
    });
  };
}

template <class T>
void sorted_order(const T* x, int64_t base, int64_t st, int64_t n, bool descending, std::vector<int64_t>& idx) {
  idx.resize(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
    T u = x[base + p * st], v = x[base + q * st];
    return descending ? greater_nan_first(u, v) : greater_nan_first(v, u);
  });
}

HostKernel make_sort(const ir::Node& node, const ir::Graph&) {
  int64_t axis_attr = node.attrs.i("axis");
  bool desc = node.attrs.b("descending");
  return [=](const KernelArgs& a) {
    int64_t axis = normalize_axis(axis_attr, a.in[0].shape.size());
    dispatch_typed(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = a.in[0].as<T>();
      T* y = a.out[0].as<T>();
      int64_t* ix = a.out[1].as<int64_t>();
      lines(a.in[0].shape, axis, [&](int64_t base, int64_t st, int64_t n) {
        std::vector<int64_t> idx;
        sorted_order(x, base, st, n, desc, idx);
        for (int64_t k = 0; k < n; ++k) {
          y[base + k * st] = x[base + idx[static_cast<size_t>(k)] * st];
          ix[base + k * st] = idx[static_cast<size_t>(k)];
        }
      });
    });
  };
}

HostKernel make_topk(const ir::Node& node, const ir::Graph&) {
  int64_t axis_attr = node.attrs.i("axis"), k = node.attrs.i("k");
  bool largest = node.attrs.b("largest");
  return [=](const KernelArgs& a) {
    const auto& shape = a.in[0].shape;
    int64_t axis = normalize_axis(axis_attr, shape.size());
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    int64_t n = shape[static_cast<size_t>(axis)];
    dispatch_typed(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = a.in[0].as<T>();
      T* y = a.out[0].as<T>();
      int64_t* ix = a.out[1].as<int64_t>();
      lines(shape, axis, [&](int64_t base, int64_t st, int64_t) {
        std::vector<int64_t> idx;
        sorted_order(x, base, st, n, largest, idx);
        int64_t outer_i = base / (n * inner), inner_i = base % inner;
        int64_t obase = outer_i * k * inner + inner_i;
        for (int64_t j = 0; j < k; ++j) {
          y[obase + j * inner] = x[base + idx[static_cast<size_t>(j)] * st];
          ix[obase + j * inner] = idx[static_cast<size_t>(j)];
        }
      });
    });
  };
}

const std::initializer_list<DType> kArith = {DType::f32, DType::f64, DType::i32, DType::i64};

bool claims_reduce(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& a) {
  const std::string& kind = a.s("kind");
  if (in[0].dtype == DType::boolean) return kind == "max" || kind == "min";
  return is_one_of(in[0].dtype, kArith);
}

bool claims_arith(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, kArith);
}

}  // namespace

void register_reduce(KernelTable& t) {
  t[static_cast<size_t>(Op::reduce)] = {claims_reduce, make_reduce};
  t[static_cast<size_t>(Op::cumsum)] = {claims_arith, make_cumsum};
  t[static_cast<size_t>(Op::sort)] = {claims_arith, make_sort};
  t[static_cast<size_t>(Op::topk)] = {claims_arith, make_topk};
}

}  // namespace rlx::backends::cpu
