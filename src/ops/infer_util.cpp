#include "ops/infer_util.h"

namespace rlx::ops {

int64_t normalize_axis(ir::Op op, int64_t axis, size_t rank, const char* what) {
  int64_t r = static_cast<int64_t>(rank);
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) type_error(op, cat(what, " ", axis, " is out of range for rank ", rank));
  return a;
}

std::vector<int64_t> normalize_axes(ir::Op op, const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    int64_t n = normalize_axis(op, a, rank);
    if (seen[static_cast<size_t>(n)]) type_error(op, cat("axis ", a, " is listed twice"));
    seen[static_cast<size_t>(n)] = true;
    out.push_back(n);
  }
  return out;
}

Shape broadcast_shapes(ir::Op op, const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const Dim* da = i < r - a.size() ? nullptr : &a[i - (r - a.size())];
    const Dim* db = i < r - b.size() ? nullptr : &b[i - (r - b.size())];
    if (!da) out[i] = *db;
    else if (!db) out[i] = *da;
    else if (*da == *db) out[i] = *da;
    else if (*da == Dim(1)) out[i] = *db;
    else if (*db == Dim(1)) out[i] = *da;
    else type_error(op, cat("shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast (dim ", i, ": ", da->str(), " vs ", db->str(), ")"));
  }
  return out;
}

void require_same_dtype(ir::Op op, const std::vector<ir::Type>& in, size_t first, size_t last) {
  for (size_t i = first + 1; i <= last && i < in.size(); ++i)
    if (in[i].dtype != in[first].dtype)
      type_error(op, cat("inputs ", first, " and ", i, " must have the same dtype, got ", dtype_name(in[first].dtype), " and ",
                         dtype_name(in[i].dtype), " (insert a mir.cast)"));
}

void require_dtype(ir::Op op, const ir::Type& t, bool ok, const char* what, const char* role) {
  if (!ok) type_error(op, cat(role, " must be ", what, ", got ", dtype_name(t.dtype)));
}

void require_rank(ir::Op op, const ir::Type& t, size_t rank, const char* role) {
  if (t.shape.size() != rank) type_error(op, cat(role, " must have rank ", rank, ", got ", ir::type_str(t)));
}

Dim window_out_dim(ir::Op op, const Dim& size, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t stride, int64_t dilation) {
  if (stride <= 0 || dilation <= 0 || kernel <= 0) type_error(op, "kernel, stride and dilation must be positive");
  int64_t pad_total = 0, span = 0;
  if (__builtin_add_overflow(pad_lo, pad_hi, &pad_total) || __builtin_mul_overflow(dilation, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span))
    type_error(op, cat("window geometry out of range (padding ", pad_lo, " + ", pad_hi, ", kernel ", kernel, ", dilation ", dilation, ")"));
  if (auto s = size.try_value()) {
    int64_t avail = 0;
    if (__builtin_add_overflow(*s, pad_total, &avail) || __builtin_sub_overflow(avail, span, &avail))
      type_error(op, cat("window geometry out of range (input size ", *s, ", padding ", pad_total, ", window extent ", span, ")"));
    if (avail < 0) type_error(op, cat("window of extent ", span, " does not fit input size ", *s, " with padding ", pad_total));
    return Dim(avail / stride + 1);
  }
  if (stride != 1) type_error(op, cat("symbolic spatial size ", size.str(), " needs stride 1"));
  int64_t delta = 0;
  if (__builtin_sub_overflow(pad_total, span - 1, &delta)) type_error(op, cat("window geometry out of range (padding ", pad_total, ", window extent ", span, ")"));
  return size + Dim(delta);
}

}  // namespace rlx::ops
