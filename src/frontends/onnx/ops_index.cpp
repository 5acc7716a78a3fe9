// Indexing operators composed from mir.gather/scatter on flattened data: Gather,
// GatherElements, GatherND, Scatter/ScatterElements, ScatterND, OneHot, Compress,
// ReverseSequence, MaxUnpool.
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

std::vector<int64_t> strides_of(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Flat positions in `data` (static shape ds) of elements addressed like GatherElements:
// coordinates of `idx` everywhere except `axis`, where the index value is used.
ValueId element_positions(FoldingBuilder& b, const std::vector<int64_t>& ds, ValueId idx, int64_t axis) {
  Shape is = b.shape(idx);
  std::vector<int64_t> st = strides_of(ds);
  ValueId i64 = wrap_negative(b, b.cast(idx, DType::i64), Dim(ds[static_cast<size_t>(axis)]));
  ValueId flat = b.mul(i64, b.scalar(DType::i64, static_cast<double>(st[static_cast<size_t>(axis)])));
  for (size_t d = 0; d < is.size(); ++d) {
    if (static_cast<int64_t>(d) == axis || st[d] == 0) continue;
    ValueId coord = b.iota(is, DType::i64, static_cast<int64_t>(d));
    flat = b.add(flat, b.mul(coord, b.scalar(DType::i64, static_cast<double>(st[d]))));
  }
  return flat;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

ValueId gather_elements(FoldingBuilder& b, ValueId data, ValueId idx, int64_t axis, const std::vector<int64_t>& ds) {
  ValueId flat = element_positions(b, ds, idx, axis);
  return b.gather(reshape_to(b, data, {product(ds)}), flat, 0);
}

std::vector<ValueId> gather(NodeCtx& c) {
  ValueId x = c.in(0), idx = c.in(1);
  int64_t axis = c.axis(c.attr_i("axis", 0), c.rank(x));
  if (c.dtype(idx) != DType::i64 && c.dtype(idx) != DType::i32) idx = c.b.cast(idx, DType::i64);
  idx = wrap_negative(c.b, idx, c.shape(x)[static_cast<size_t>(axis)]);
  return one(c.b.gather(x, idx, axis));
}

std::vector<ValueId> gather_elements_op(NodeCtx& c) {
  ValueId x = c.in(0);
  auto ds = c.static_shape(x, "GatherElements data");
  int64_t axis = c.axis(c.attr_i("axis", 0), c.rank(x));
  return one(gather_elements(c.b, x, c.in(1), axis, ds));
}

std::string reduction_of(NodeCtx& c) {
  std::string r = c.attr_s("reduction", "none");
  if (r == "none" || r == "add" || r == "max" || r == "min" || r == "mul") return r;
  c.invalid(cat("reduction '", r, "'"));
}

// scatter along axis 0 of flattened data; "mul" (which mir.scatter lacks) multiplies data by the
// product of the updates at each position, accumulated as sums of logs and of negative signs.
ValueId scatter_flat(NodeCtx& c, ValueId data, ValueId idx, ValueId upd, const std::string& red) {
  FoldingBuilder& b = c.b;
  if (red != "mul") return b.emit1(Op::scatter, {data, idx, upd}, Attrs{{"axis", int64_t{0}}, {"reduce", red}});
  if (!is_float(c.dtype(data))) c.fail("reduction 'mul' on integers");
  ValueId zeros = full(b, c.dtype(data), b.shape(data), 0.0);
  Attrs add{{"axis", int64_t{0}}, {"reduce", std::string("add")}};
  ValueId logs = b.emit1(Op::scatter, {zeros, idx, b.unary(Op::log, b.unary(Op::abs, upd))}, add);
  ValueId negs = b.emit1(Op::scatter, {zeros, idx, b.cast(b.binary(Op::lt, upd, like(b, upd, 0.0)), c.dtype(data))}, add);
  ValueId sign = b.sub(like(b, negs, 1.0), b.mul(b.binary(Op::rem, negs, like(b, negs, 2.0)), like(b, negs, 2.0)));
  return b.mul(data, b.mul(b.unary(Op::exp, logs), sign));
}

std::vector<ValueId> scatter_elements(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  auto ds = c.static_shape(x, "ScatterElements data");
  int64_t axis = c.axis(c.attr_i("axis", 0), c.rank(x));
  ValueId flat = element_positions(b, ds, c.in(1), axis);
  int64_t m = shape_numel(b.shape(flat)).value();
  ValueId y = scatter_flat(c, reshape_to(b, x, {product(ds)}), reshape_to(b, flat, {m}), reshape_to(b, c.in(2), {m}), reduction_of(c));
  return one(reshape_to(b, y, ds));
}

// Flat index over data dims [first, first + k) from the last axis of `indices`.
ValueId nd_positions(FoldingBuilder& b, const std::vector<int64_t>& ds, ValueId indices, int64_t first, int64_t k) {
  Shape is = b.shape(indices);
  Shape lead(is.begin(), is.end() - 1);
  ValueId idx = b.cast(indices, DType::i64);
  ValueId flat = b.scalar(DType::i64, 0);
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    int64_t n = ds[static_cast<size_t>(first + j)];
    ValueId col = b.reshape(b.slice_axis(idx, static_cast<int64_t>(is.size()) - 1, Dim(j), Dim(j + 1)), lead);
    col = wrap_negative(b, col, Dim(n));
    flat = b.add(flat, b.mul(col, b.scalar(DType::i64, static_cast<double>(stride))));
    stride *= n;
  }
  return b.broadcast(flat, lead);
}

std::vector<ValueId> gather_nd(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), indices = c.in(1);
  c.require_rank(indices, 1, 8, "indices");
  auto ds = c.static_shape(x, "GatherND data");
  auto is = c.static_shape(indices, "GatherND indices");
  int64_t bd = c.attr_i("batch_dims", 0);
  int64_t k = is.back();
  int64_t r = static_cast<int64_t>(ds.size());
  if (bd < 0 || k < 0 || bd >= static_cast<int64_t>(is.size()) || bd + k > r) c.invalid(cat("indices address ", k, " dims after ", bd, " batch dims of a rank-", r, " tensor"));
  ValueId flat = nd_positions(b, ds, indices, bd, k);
  int64_t span = 1;
  for (int64_t j = bd; j < bd + k; ++j) span *= ds[static_cast<size_t>(j)];
  int64_t batch = 1;
  for (int64_t j = 0; j < bd; ++j) batch *= ds[static_cast<size_t>(j)];
  if (bd > 0) {
    // Batch coordinate of every index row, from the leading dims of `indices`.
    Shape lead = b.shape(flat);
    std::vector<int64_t> bshape(is.begin(), is.begin() + bd);
    std::vector<int64_t> bst = strides_of(bshape);
    for (int64_t j = 0; j < bd; ++j)
      flat = b.add(flat, b.mul(b.iota(lead, DType::i64, j), b.scalar(DType::i64, static_cast<double>(bst[static_cast<size_t>(j)] * span))));
  }
  std::vector<int64_t> flat_data = {batch * span};
  flat_data.insert(flat_data.end(), ds.begin() + bd + k, ds.end());
  return one(b.gather(reshape_to(b, x, flat_data), flat, 0));
}

std::vector<ValueId> scatter_nd(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), indices = c.in(1), upd = c.in(2);
  c.require_rank(indices, 1, 8, "indices");
  auto ds = c.static_shape(x, "ScatterND data");
  auto is = c.static_shape(indices, "ScatterND indices");
  int64_t k = is.back();
  if (k > static_cast<int64_t>(ds.size())) c.invalid(cat("indices address ", k, " dims of a rank-", ds.size(), " tensor"));
  ValueId flat = nd_positions(b, ds, indices, 0, k);
  int64_t m = product(std::vector<int64_t>(is.begin(), is.end() - 1));
  int64_t span = 1;
  for (int64_t j = 0; j < k; ++j) span *= ds[static_cast<size_t>(j)];
  std::vector<int64_t> rest(ds.begin() + k, ds.end());
  std::vector<int64_t> data2 = {span}, upd2 = {m};
  data2.insert(data2.end(), rest.begin(), rest.end());
  upd2.insert(upd2.end(), rest.begin(), rest.end());
  ValueId y = scatter_flat(c, reshape_to(b, x, data2), reshape_to(b, flat, {m}), reshape_to(b, upd, upd2), reduction_of(c));
  return one(reshape_to(b, y, ds));
}

std::vector<ValueId> one_hot(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId idx = c.in(0), vals = c.in(2);
  int64_t depth = static_cast<int64_t>(c.scalar(1, "depth"));
  if (depth <= 0 || depth > kMaxImportTable) c.invalid(cat("depth ", depth, " is out of range"));
  Shape is = c.shape(idx);
  int64_t r = static_cast<int64_t>(is.size()) + 1;
  int64_t axis = c.axis(c.attr_i("axis", -1), r);
  ValueId i = wrap_negative(b, b.cast(idx, DType::i64), Dim(depth));
  Shape os = is;
  os.insert(os.begin() + axis, Dim(depth));
  ValueId hot = b.binary(Op::eq, b.iota(os, DType::i64, axis), insert_axes(b, i, {axis}));
  ValueId off = b.reshape(b.slice_axis(vals, 0, Dim(0), Dim(1)), {});
  ValueId on = b.reshape(b.slice_axis(vals, 0, Dim(1), Dim(2)), {});
  return one(b.select(hot, on, off));
}

std::vector<ValueId> compress(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Tensor cond = c.value(1, "condition (it decides the output's shape)");
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (cond.at_f64(i) != 0) keep.push_back(i);
  int64_t axis = 0;
  if (c.has_attr("axis")) {
    axis = c.axis(c.attr_i("axis", 0), c.rank(x));
  } else {
    x = b.reshape(x, {shape_numel(c.shape(x))});
  }
  int64_t n = static_cast<int64_t>(keep.size());
  Dim len = c.shape(x)[static_cast<size_t>(axis)];
  if (n > 0 && len.is_static() && keep.back() >= len.value()) c.invalid(cat("condition selects element ", keep.back(), " of an axis of ", len.value()));
  return one(b.gather(x, b.constant(Tensor::from_vector(keep, {n})), axis));
}

std::vector<ValueId> reverse_sequence(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  auto ds = c.static_shape(x, "ReverseSequence input");
  c.require_rank(x, 2, 8, "the input");
  int64_t bax = c.axis(c.attr_i("batch_axis", 1), c.rank(x)), tax = c.axis(c.attr_i("time_axis", 0), c.rank(x));
  if (bax == tax || c.rank(c.in(1)) != 1) c.invalid("needs distinct batch and time axes and 1-D sequence_lens");
  Shape s = c.shape(x);
  ValueId t = b.iota(s, DType::i64, tax);
  // lens along the batch axis, broadcast over the rest
  Shape ls(s.size(), Dim(1));
  ls[static_cast<size_t>(bax)] = s[static_cast<size_t>(bax)];
  ValueId len = b.reshape(b.cast(c.in(1), DType::i64), ls);
  ValueId rev = b.sub(b.sub(len, b.scalar(DType::i64, 1)), t);
  ValueId idx = b.select(b.binary(Op::lt, t, len), rev, t);
  return one(gather_elements(b, x, idx, tax, ds));
}

std::vector<ValueId> max_unpool(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), idx = c.in(1);
  c.require_rank(x, 3, 8, "the input");
  auto xs = c.static_shape(x, "MaxUnpool input");
  // Indices address the shape MaxPool's input had (the inferred one); an explicit
  // output_shape only pads the result at the end.
  auto k = c.attr_ints("kernel_shape");
  size_t sp = xs.size() - 2;
  auto st = c.attr_ints("strides", std::vector<int64_t>(sp, 1));
  auto pads = c.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (k.size() != sp || st.size() != sp || pads.size() != 2 * sp) c.invalid("kernel_shape, strides and pads must match the spatial dims");
  std::vector<int64_t> out = {xs[0], xs[1]};
  for (size_t i = 0; i < sp; ++i) out.push_back((xs[2 + i] - 1) * st[i] + k[i] - pads[i] - pads[sp + i]);
  int64_t total = product(out), m = product(xs);
  ValueId zeros = full(b, c.dtype(x), {Dim(total)}, 0.0);
  ValueId y = b.emit1(Op::scatter, {zeros, reshape_to(b, b.cast(idx, DType::i64), {m}), reshape_to(b, x, {m})},
                      Attrs{{"axis", int64_t{0}}, {"reduce", std::string("none")}});
  y = reshape_to(b, y, out);
  if (c.has(2)) {
    std::vector<int64_t> want = c.ints(2, "output_shape");
    if (want.size() != out.size()) c.invalid(cat("output_shape has ", want.size(), " entries for rank ", out.size()));
    Ints lo(out.size(), 0), hi(out.size(), 0);
    for (size_t i = 0; i < out.size(); ++i) hi[i] = want[i] - out[i];
    y = b.emit1(Op::pad, {y}, Attrs{{"lo", lo}, {"hi", hi}, {"value", 0.0}});
  }
  return one(y);
}

// TfIdfVectorizer over integer tokens: for each n-gram length and skip distance the windows of
// tokens are gathered (constant indices), compared with the pool's n-grams and counted; each
// skip distance counts separately, unigrams once. Counts land on ngram_indexes through a
// constant one-hot matrix; IDF/TFIDF weight them.
std::vector<ValueId> tfidf(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  if (c.has_attr("pool_strings")) c.fail("string pools");
  c.require_rank(x, 1, 2, "the tokens");
  bool one_d = c.rank(x) == 1;
  if (one_d) x = insert_axes(b, x, {0});
  auto xs = c.static_shape(x, "the tokens");
  int64_t N = xs[0], C = xs[1];
  int64_t min_n = c.attr_i("min_gram_length", 1), max_n = c.attr_i("max_gram_length", 1), max_skip = c.attr_i("max_skip_count", 0);
  Ints counts = c.attr_ints("ngram_counts"), indexes = c.attr_ints("ngram_indexes"), pool = c.attr_ints("pool_int64s");
  std::vector<float> weights = c.attr_floats("weights");
  std::string mode = c.attr_s("mode", "TF");
  if (min_n < 1 || max_n < min_n || max_skip < 0) c.invalid("needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  int64_t pool_n = static_cast<int64_t>(pool.size()), grams_total = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    int64_t n = static_cast<int64_t>(level) + 1;
    int64_t start = counts[level], end = level + 1 < counts.size() ? counts[level + 1] : pool_n;
    if (start < 0 || end < start || end > pool_n || (end - start) % n) c.invalid("ngram_counts do not partition pool_int64s into n-grams");
    grams_total += (end - start) / n;
  }
  if (static_cast<int64_t>(indexes.size()) < grams_total) c.invalid(cat("ngram_indexes has ", indexes.size(), " entries for ", grams_total, " n-grams"));
  int64_t size = 0;
  for (int64_t i : indexes) {
    if (i < 0 || i >= kMaxImportTable) c.invalid(cat("ngram index ", i, " is out of range"));
    size = std::max(size, i + 1);
  }
  std::vector<ValueId> per_gram;  // [N, G_n] for each length, in pool order
  std::vector<int64_t> gram_out;  // output index of each gram, in pool order
  int64_t gram_no = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    int64_t n = static_cast<int64_t>(level) + 1;
    int64_t start = counts[level], end = level + 1 < counts.size() ? counts[level + 1] : static_cast<int64_t>(pool.size());
    int64_t G = (end - start) / n;
    if (G <= 0) continue;
    for (int64_t g = 0; g < G; ++g) gram_out.push_back(indexes[static_cast<size_t>(gram_no + g)]);
    gram_no += G;
    if (n < min_n || n > max_n) {
      per_gram.push_back(full(b, DType::f32, {Dim(N), Dim(G)}, 0.0));
      continue;
    }
    std::vector<int64_t> grams(pool.begin() + start, pool.begin() + end);
    ValueId gv = b.reshape(b.cast(b.constant(Tensor::from_vector(grams, {G, n})), c.dtype(x)), {Dim(1), Dim(1), Dim(G), Dim(n)});
    ValueId total = kNoValue;
    for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip) {
      int64_t d = skip + 1, W = C - (n - 1) * d;
      if (W <= 0) break;  // longer skips do not fit either
      checked_table(c, W * n, "window index table");
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < W; ++i)
        for (int64_t j = 0; j < n; ++j) idx.push_back(i + j * d);
      ValueId win = b.gather(x, b.constant(Tensor::from_vector(idx, {W, n})), 1);  // [N, W, n]
      ValueId hit = b.reduce(b.binary(Op::eq, b.reshape(win, {Dim(N), Dim(W), Dim(1), Dim(n)}), gv), "min", {3}, false);
      ValueId cnt = b.reduce(b.cast(hit, DType::f32), "sum", {1}, false);  // [N, G]
      total = total == kNoValue ? cnt : b.add(total, cnt);
    }
    per_gram.push_back(total == kNoValue ? full(b, DType::f32, {Dim(N), Dim(G)}, 0.0) : total);
  }
  int64_t G_all = static_cast<int64_t>(gram_out.size());
  ValueId y;
  if (G_all == 0) {
    y = full(b, DType::f32, {Dim(N), Dim(size)}, 0.0);
  } else {
    ValueId all = b.concat(per_gram, 1);  // [N, G_all]
    if (mode == "IDF" || mode == "TFIDF") {
      std::vector<float> w(static_cast<size_t>(G_all), 1.0f);
      for (size_t i = 0; i < weights.size() && i < w.size(); ++i) w[i] = weights[i];
      ValueId wv = b.constant(Tensor::from_vector(w, {G_all}));
      if (mode == "IDF") all = b.mul(b.cast(b.binary(Op::gt, all, like(b, all, 0.0)), DType::f32), wv);
      else all = b.mul(all, wv);
    } else if (mode != "TF") {
      c.invalid(cat("mode '", mode, "'"));
    }
    std::vector<float> hot(static_cast<size_t>(checked_table(c, G_all * size, "n-gram output map")), 0.0f);
    for (int64_t g = 0; g < G_all; ++g) hot[static_cast<size_t>(g * size + gram_out[static_cast<size_t>(g)])] = 1.0f;
    y = b.dot_general(all, b.constant(Tensor::from_vector(hot, {G_all, size})), {{}, {}}, {{1}, {0}});
  }
  return one(one_d ? remove_axes(b, y, {0}) : y);
}

}  // namespace

void register_index(OpTable& t) {
  t.insert(t.end(), {
                        {"", "Gather", 1, gather},
                        {"", "GatherElements", 11, gather_elements_op},
                        {"", "GatherND", 11, gather_nd},
                        {"", "Scatter", 9, scatter_elements},
                        {"", "ScatterElements", 11, scatter_elements},
                        {"", "ScatterND", 11, scatter_nd},
                        {"", "OneHot", 9, one_hot},
                        {"", "Compress", 9, compress},
                        {"", "ReverseSequence", 10, reverse_sequence},
                        {"", "MaxUnpool", 9, max_unpool},
                        {"", "TfIdfVectorizer", 9, tfidf},
                    });
}

}  // namespace rlx::frontends::onnx
