// Operators whose output shape depends on input values: NonZero, Unique and
// NonMaxSuppression. The importer reads the values it needs to size the output (a constant, or
// a graph input given to it: the graph is then specialised to them, as for any static
// argument); the device still computes the outputs — selections through topk over masked
// positions, comparisons as matrices.
#include <algorithm>
#include <map>
#include <numeric>

#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

// Positions (ascending) of the k true elements of a 1-D bool mask of length n, as i64 [k].
ValueId true_positions(FoldingBuilder& b, ValueId mask, int64_t n, int64_t k) {
  ValueId pos = b.iota({Dim(n)}, DType::i64, 0);
  // Larger scores for earlier true positions; false positions score −1.
  ValueId score = b.select(mask, b.sub(b.scalar(DType::i64, static_cast<double>(n)), pos), b.scalar(DType::i64, -1));
  return b.emit(Op::topk, {score}, Attrs{{"k", k}, {"axis", int64_t{0}}, {"largest", true}})[1];
}

std::vector<ValueId> nonzero(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Tensor v = c.value(0, "input (its non-zero count is the output's shape)");
  int64_t n = v.numel(), k = 0;
  for (int64_t i = 0; i < n; ++i) k += v.at_f64(i) != 0;
  auto xs = v.shape();
  int64_t r = static_cast<int64_t>(xs.size());
  if (k == 0) return {b.constant(Tensor::zeros(DType::i64, {std::max<int64_t>(r, 1), 0}))};
  ValueId flat = b.reshape(x, {Dim(n)});
  ValueId mask = b.binary(Op::ne, flat, b.scalar(c.dtype(x), 0));
  ValueId pos = true_positions(b, mask, n, k);
  if (r == 0) return {b.reshape(b.mul(pos, b.scalar(DType::i64, 0)), {Dim(1), Dim(k)})};
  std::vector<ValueId> rows;
  int64_t stride = n;
  for (int64_t d = 0; d < r; ++d) {
    stride /= std::max<int64_t>(xs[static_cast<size_t>(d)], 1);
    ValueId coord = b.binary(Op::rem, b.div(pos, b.scalar(DType::i64, static_cast<double>(stride))), b.scalar(DType::i64, static_cast<double>(xs[static_cast<size_t>(d)])));
    rows.push_back(b.reshape(coord, {Dim(1), Dim(k)}));
  }
  return {b.concat(rows, 0)};
}

// Unique over rows R [n, m] (slices along `axis`, or single elements): pairwise equality and
// lexicographic order as [n, n] matrices; k (the unique count) is read from the values.
std::vector<ValueId> unique(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Tensor v = c.value(0, "input (its number of unique values is the output's shape)");
  auto xs = v.shape();
  bool has_axis = c.has_attr("axis");
  int64_t axis = has_axis ? c.axis(c.attr_i("axis", 0), static_cast<int64_t>(xs.size())) : 0;
  bool sorted = c.attr_i("sorted", 1) != 0;
  int64_t n, m;
  ValueId rows;
  Ints perm;
  if (has_axis) {
    perm.push_back(axis);
    for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); ++d)
      if (d != axis) perm.push_back(d);
    n = xs[static_cast<size_t>(axis)];
    m = v.numel() / std::max<int64_t>(n, 1);
    rows = b.reshape(b.transpose(x, perm), {Dim(n), Dim(m)});
  } else {
    n = v.numel();
    m = 1;
    rows = b.reshape(x, {Dim(n), Dim(1)});
  }
  // k from the values on the host.
  Tensor hv = has_axis ? v.transpose(perm).contiguous() : v.contiguous();
  std::vector<double> d = hv.to_f64();
  std::vector<std::vector<double>> keys;
  for (int64_t i = 0; i < n; ++i) keys.emplace_back(d.begin() + i * m, d.begin() + (i + 1) * m);
  std::vector<std::vector<double>> uniq = keys;
  std::sort(uniq.begin(), uniq.end());
  int64_t k = std::unique(uniq.begin(), uniq.end()) - uniq.begin();
  if (n == 0) c.fail("an empty input");
  DType dt = c.dtype(x);
  ValueId ri = b.reshape(rows, {Dim(n), Dim(1), Dim(m)}), rj = b.reshape(rows, {Dim(1), Dim(n), Dim(m)});
  ValueId ne = b.binary(Op::ne, ri, rj);                               // [n, n, m]
  ValueId eq = b.unary(Op::logical_not, b.reduce(ne, "max", {2}, false));  // [n, n]
  ValueId ii = b.iota({Dim(n), Dim(n)}, DType::i64, 0), jj = b.iota({Dim(n), Dim(n)}, DType::i64, 1);
  // first[i]: no earlier equal row
  ValueId earlier_eq = b.binary(Op::logical_and, eq, b.binary(Op::lt, jj, ii));
  ValueId first = b.unary(Op::logical_not, b.reduce(earlier_eq, "max", {1}, false));  // [n]
  ValueId rank;  // [n]: output slot of each first occurrence
  if (sorted) {
    // lt[i, j]: row j < row i lexicographically, decided at their first differing element
    ValueId fd = b.reduce(b.cast(ne, DType::i32), "argmax", {2}, true);  // [n, n, 1]
    ValueId hot = b.binary(Op::eq, b.iota({Dim(n), Dim(n), Dim(m)}, DType::i64, 2), fd);
    ValueId zero = b.scalar(dt, 0);
    ValueId vi = b.reduce(b.select(hot, b.broadcast(ri, {Dim(n), Dim(n), Dim(m)}), zero), "sum", {2}, false);
    ValueId vj = b.reduce(b.select(hot, b.broadcast(rj, {Dim(n), Dim(n), Dim(m)}), zero), "sum", {2}, false);
    ValueId j_less = b.binary(Op::logical_and, b.unary(Op::logical_not, eq), b.binary(Op::lt, vj, vi));
    ValueId counted = b.binary(Op::logical_and, j_less, b.reshape(first, {Dim(1), Dim(n)}));
    rank = b.reduce(b.cast(counted, DType::i64), "sum", {1}, false);
  } else {
    rank = b.sub(b.emit1(Op::cumsum, {b.cast(first, DType::i64)}, Attrs{{"axis", int64_t{0}}}), b.scalar(DType::i64, 1));
  }
  // idx[r]: the first occurrence with rank r
  ValueId slot = b.binary(Op::logical_and, b.binary(Op::eq, b.iota({Dim(k), Dim(n)}, DType::i64, 0), b.reshape(rank, {Dim(1), Dim(n)})),
                          b.reshape(first, {Dim(1), Dim(n)}));
  ValueId idx = b.reduce(b.cast(slot, DType::i32), "argmax", {1}, false);  // [k]
  ValueId y = has_axis ? b.gather(x, idx, axis) : b.gather(b.reshape(x, {Dim(n)}), idx, 0);
  // inverse[i] = rank of the first row equal to row i
  ValueId first_eq = b.reduce(b.cast(eq, DType::i32), "argmax", {1}, false);  // [n]
  ValueId inverse = b.gather(rank, first_eq, 0);
  ValueId counts = b.reduce(b.cast(b.binary(Op::eq, b.reshape(inverse, {Dim(1), Dim(n)}), b.iota({Dim(k), Dim(1)}, DType::i64, 0)), DType::i64), "sum", {1}, false);
  return {y, idx, inverse, counts};
}

// Corners (ymin, xmin, ymax, xmax) of ONNX boxes: [y1, x1, y2, x2] in any order, or
// [x_center, y_center, width, height] with center_point_box=1.
struct Box {
  double y0, x0, y1, x1;
};
Box corners(const double* p, bool center) {
  if (center) return {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}
bool suppresses(const Box& a, const Box& c, double thr) {
  double ih = std::min(a.y1, c.y1) - std::max(a.y0, c.y0), iw = std::min(a.x1, c.x1) - std::max(a.x0, c.x0);
  double inter = std::max(ih, 0.0) * std::max(iw, 0.0);
  if (inter <= 0) return false;
  double a1 = (a.y1 - a.y0) * (a.x1 - a.x0), a2 = (c.y1 - c.y0) * (c.x1 - c.x0), uni = a1 + a2 - inter;
  if (a1 <= 0 || a2 <= 0 || uni <= 0) return false;
  return inter / uni > thr;
}

// NonMaxSuppression as ONNX Runtime does it: per (batch, class), candidates by descending
// score (ties: lower index first) above score_threshold, greedily kept unless an already kept
// box overlaps with IoU > iou_threshold, at most max_output_boxes_per_class.
std::vector<ValueId> nms(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId boxes = c.in(0), scores = c.in(1);
  Tensor bv = c.value(0, "boxes (they decide how many boxes are selected)"), sv = c.value(1, "scores (they decide how many boxes are selected)");
  int64_t max_out = c.has(2) ? c.int_scalar(2, "max_output_boxes_per_class") : 0;
  double thr = c.has(3) ? c.scalar(3, "iou_threshold") : 0.0;
  bool has_st = c.has(4);
  double st = has_st ? c.scalar(4, "score_threshold") : 0.0;
  bool center = c.attr_i("center_point_box", 0) != 0;
  if (bv.rank() != 3 || bv.shape()[2] != 4 || sv.rank() != 3 || sv.shape()[0] != bv.shape()[0] || sv.shape()[2] != bv.shape()[1])
    c.invalid("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
  int64_t B = bv.shape()[0], N = bv.shape()[1], C = sv.shape()[1];
  if (N * N * B * C > (int64_t{1} << 16)) c.fail(cat(N, " boxes (the unrolled selection stops at 256 per class)"));
  // How many boxes are selected: on the host, from the values.
  std::vector<double> bd = bv.contiguous().to_f64(), sd = sv.contiguous().to_f64();
  int64_t k = 0;
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t ci = 0; ci < C; ++ci) {
      std::vector<int64_t> order;
      for (int64_t i = 0; i < N; ++i)
        if (!has_st || sd[static_cast<size_t>((bi * C + ci) * N + i)] > st) order.push_back(i);
      const double* srow = &sd[static_cast<size_t>((bi * C + ci) * N)];
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t z) { return srow[a] > srow[z]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool ok = true;
        for (int64_t j : kept) ok = ok && !suppresses(corners(&bd[static_cast<size_t>((bi * N + j) * 4)], center), corners(&bd[static_cast<size_t>((bi * N + i) * 4)], center), thr);
        if (ok) kept.push_back(i);
      }
      k += static_cast<int64_t>(kept.size());
    }
  if (k == 0) return {b.constant(Tensor::zeros(DType::i64, {0, 3}))};
  // The same selection on the device.
  DType d = c.dtype(boxes);
  auto coord = [&](ValueId bx, int64_t j) { return remove_axes(b, b.slice_axis(bx, 1, Dim(j), Dim(j + 1)), {1}); };  // [N]
  std::vector<ValueId> flags, rows;
  for (int64_t bi = 0; bi < B; ++bi) {
    ValueId bx = remove_axes(b, b.slice_axis(boxes, 0, Dim(bi), Dim(bi + 1)), {0});  // [N, 4]
    ValueId y0, x0, y1, x1;
    if (center) {
      ValueId half = b.scalar(d, 0.5);
      ValueId xc = coord(bx, 0), yc = coord(bx, 1), w = b.mul(coord(bx, 2), half), h = b.mul(coord(bx, 3), half);
      y0 = b.sub(yc, h), x0 = b.sub(xc, w), y1 = b.add(yc, h), x1 = b.add(xc, w);
    } else {
      ValueId a = coord(bx, 0), p = coord(bx, 1), q = coord(bx, 2), r = coord(bx, 3);
      y0 = b.min(a, q), y1 = b.max(a, q), x0 = b.min(p, r), x1 = b.max(p, r);
    }
    auto col = [&](ValueId v) { return b.reshape(v, {Dim(N), Dim(1)}); };
    auto row = [&](ValueId v) { return b.reshape(v, {Dim(1), Dim(N)}); };
    ValueId zero = b.scalar(d, 0);
    ValueId ih = b.sub(b.min(col(y1), row(y1)), b.max(col(y0), row(y0))), iw = b.sub(b.min(col(x1), row(x1)), b.max(col(x0), row(x0)));
    ValueId inter = b.mul(b.max(ih, zero), b.max(iw, zero));
    ValueId area = b.mul(b.sub(y1, y0), b.sub(x1, x0));
    ValueId uni = b.sub(b.add(col(area), row(area)), inter);
    ValueId ok = b.binary(Op::logical_and, b.binary(Op::gt, inter, zero),
                          b.binary(Op::logical_and, b.binary(Op::logical_and, b.binary(Op::gt, col(area), zero), b.binary(Op::gt, row(area), zero)),
                                   b.binary(Op::gt, uni, zero)));
    ValueId sup = b.binary(Op::logical_and, ok, b.binary(Op::gt, b.div(inter, b.select(ok, uni, b.scalar(d, 1))), b.scalar(d, thr)));  // [N, N]
    for (int64_t ci = 0; ci < C; ++ci) {
      ValueId s = b.reshape(b.slice(scores, {Dim(bi), Dim(ci), Dim(0)}, {Dim(bi + 1), Dim(ci + 1), Dim(N)}, {1, 1, 1}), {Dim(N)});
      // rank[i] = #{j : s_j > s_i or (s_j = s_i and j < i)}; order[t] = the i with rank t
      ValueId si = col(s), sj = row(s);
      ValueId before = b.binary(Op::logical_or, b.binary(Op::gt, sj, si),
                                b.binary(Op::logical_and, b.binary(Op::eq, sj, si), b.binary(Op::lt, b.iota({Dim(N), Dim(N)}, DType::i64, 1), b.iota({Dim(N), Dim(N)}, DType::i64, 0))));
      ValueId rank = b.reduce(b.cast(before, DType::i64), "sum", {1}, false);
      ValueId order = b.reduce(b.cast(b.binary(Op::eq, row(rank), b.iota({Dim(N), Dim(1)}, DType::i64, 0)), DType::i32), "argmax", {1}, false);
      ValueId ss = b.gather(s, order, 0);
      ValueId valid = has_st ? b.binary(Op::gt, ss, b.scalar(d, st)) : b.broadcast(b.scalar(DType::boolean, 1), {Dim(N)});
      ValueId sp = b.gather(b.gather(sup, order, 0), order, 1);  // [N, N] in score order
      ValueId sel = b.broadcast(b.scalar(DType::boolean, 0), {Dim(N)});
      ValueId cnt = b.scalar(DType::i64, 0);
      for (int64_t t = 0; t < N; ++t) {
        ValueId blocked = b.reduce(b.binary(Op::logical_and, sel, b.reshape(b.slice_axis(sp, 1, Dim(t), Dim(t + 1)), {Dim(N)})), "max", {0}, false);
        ValueId take = b.binary(Op::logical_and, b.binary(Op::logical_and, b.reshape(b.slice_axis(valid, 0, Dim(t), Dim(t + 1)), {}), b.unary(Op::logical_not, blocked)),
                                b.binary(Op::lt, cnt, b.scalar(DType::i64, static_cast<double>(max_out))));
        ValueId hot = b.binary(Op::eq, b.iota({Dim(N)}, DType::i64, 0), b.scalar(DType::i64, static_cast<double>(t)));
        sel = b.select(b.binary(Op::logical_and, hot, take), b.broadcast(b.scalar(DType::boolean, 1), {Dim(N)}), sel);
        cnt = b.add(cnt, b.cast(take, DType::i64));
      }
      flags.push_back(sel);
      ValueId bc = b.constant(Tensor::from_vector(std::vector<int64_t>{bi, ci}, {1, 2}));
      rows.push_back(b.concat({b.broadcast(bc, {Dim(N), Dim(2)}), b.reshape(order, {Dim(N), Dim(1)})}, 1));  // [N, 3]
    }
  }
  int64_t total = B * C * N;
  ValueId pos = true_positions(b, b.concat(flags, 0), total, k);
  return {b.gather(b.concat(rows, 0), pos, 0)};
}

}  // namespace

void register_dynamic(OpTable& t) {
  t.insert(t.end(), {
                        {"", "NonZero", 9, nonzero},
                        {"", "Unique", 11, unique},
                        {"", "NonMaxSuppression", 10, nms},
                    });
}

}  // namespace rlx::frontends::onnx
