// Small emitters shared by the converters (all in terms of MIR/HIR ops through the builder).
#pragma once
#include <cmath>
#include <limits>
#include <numeric>

#include "frontends/onnx/importer.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

inline ValueId scalar_of(FoldingBuilder& b, DType d, double v) { return b.scalar(d, v); }
inline ValueId like(FoldingBuilder& b, ValueId x, double v) { return b.scalar(b.dtype(x), v); }

inline Ints iota_ints(int64_t n, int64_t from = 0) {
  Ints r(static_cast<size_t>(std::max<int64_t>(n - from, 0)));
  std::iota(r.begin(), r.end(), from);
  return r;
}

inline ValueId reshape_to(FoldingBuilder& b, ValueId x, const std::vector<int64_t>& s) { return b.reshape(x, shape_of(s)); }

// Inserts size-1 dims at the (output) positions `axes` (already normalized, any order).
inline ValueId insert_axes(FoldingBuilder& b, ValueId x, Ints axes) {
  Shape s = b.shape(x);
  std::sort(axes.begin(), axes.end());
  for (int64_t a : axes) s.insert(s.begin() + a, Dim(1));
  return b.reshape(x, s);
}

// Removes the size-1 dims at `axes` (normalized).
inline ValueId remove_axes(FoldingBuilder& b, ValueId x, const Ints& axes) {
  Shape s = b.shape(x), out;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) out.push_back(s[i]);
  return b.reshape(x, out);
}

// [d0 … d(axis-1)] × [d(axis) …] as a 2-D matrix.
inline ValueId flatten2d(FoldingBuilder& b, ValueId x, int64_t axis) {
  Shape s = b.shape(x);
  Dim outer(1), inner(1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (static_cast<int64_t>(i) < axis) outer = outer * s[i];
    else inner = inner * s[i];
  }
  return b.reshape(x, {outer, inner});
}

inline ValueId full(FoldingBuilder& b, DType d, const Shape& s, double v) { return b.broadcast(b.scalar(d, v), s); }

// Indices in [-n, n) made non-negative: idx + n where idx < 0.
inline ValueId wrap_negative(FoldingBuilder& b, ValueId idx, const Dim& n) {
  if (const Tensor* t = b.constant_value(idx)) {
    bool any = false;
    for (int64_t v : tensor_ints(*t)) any = any || v < 0;
    if (!any) return idx;
  }
  DType d = b.dtype(idx);
  ValueId nv;
  if (n.is_static()) nv = b.scalar(d, static_cast<double>(n.value()));
  else nv = b.cast(b.reduce(b.broadcast(b.scalar(DType::i64, 1), {n}), "sum", {0}, false), d);
  ValueId neg = b.binary(Op::lt, idx, b.scalar(d, 0));
  return b.select(neg, b.add(idx, nv), idx);
}

// Smallest / largest value of a dtype (±inf for floats).
inline double lowest_of(DType d) {
  switch (d) {
    case DType::u8: return 0;
    case DType::i8: return -128;
    case DType::i16: return -32768;
    case DType::i32: return -2147483648.0;
    case DType::i64: return -9.2233720368547758e18;
    case DType::boolean: return 0;
    default: return -std::numeric_limits<double>::infinity();
  }
}
inline double highest_of(DType d) {
  switch (d) {
    case DType::u8: return 255;
    case DType::i8: return 127;
    case DType::i16: return 32767;
    case DType::i32: return 2147483647.0;
    case DType::i64: return 9.2233720368547758e18;
    case DType::boolean: return 1;
    default: return std::numeric_limits<double>::infinity();
  }
}

// A Dim as an i64 scalar value of the graph (a reduce over a broadcast when symbolic).
inline ValueId dim_value(FoldingBuilder& b, const Dim& d) {
  if (d.is_static()) return b.scalar(DType::i64, static_cast<double>(d.value()));
  return b.reduce(b.broadcast(b.scalar(DType::i64, 1), {d}), "sum", {0}, false);
}

// numpy broadcast of two shapes (1s stretch).
inline Shape broadcast_shape(const Shape& a, const Shape& c) {
  size_t r = std::max(a.size(), c.size());
  Shape out(r, Dim(1));
  for (size_t i = 0; i < r; ++i) {
    Dim x = i + a.size() >= r ? a[i + a.size() - r] : Dim(1);
    Dim y = i + c.size() >= r ? c[i + c.size() - r] : Dim(1);
    out[i] = x == Dim(1) ? y : x;
  }
  return out;
}

// Index and weight tables the importer builds on the host are sized by shapes and attributes a
// file controls: refuse absurd ones with a clear error instead of exhausting memory.
constexpr int64_t kMaxImportTable = int64_t{1} << 26;
inline int64_t checked_table(NodeCtx& c, int64_t n, const char* what) {
  if (n < 0 || n > kMaxImportTable) c.fail(cat("a ", what, " of ", n, " elements (the importer's tables stop at ", kMaxImportTable, ")"));
  return n;
}

// Converts a float tensor to the ONNX-style i64 index list.
inline std::vector<double> tensor_doubles(const Tensor& t) { return t.to_f64(); }

}  // namespace rlx::frontends::onnx
