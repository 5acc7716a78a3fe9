// Attention (GQA, causal / sliding-window / additive masks, softcap) and rotary embeddings.
#include <cmath>
#include <limits>

#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using ir::Type;

// Layout bhsd (default): q[B, Hq, Sq, D], k[B, Hkv, Skv, D], v[B, Hkv, Skv, Dv] → [B, Hq, Sq, Dv].
// Layout bshd: the same with heads and positions swapped ([B, S, H, D]), as projections produce
// them — no transposes around the op. The bias is always broadcastable to [B, Hq, Sq, Skv].
// Causal masks align the query block with the end of the keys (KV cache): query i sits at
// position i + Skv - Sq. sliding_window also hides keys at or before position - window.
Type swap_heads(Type t) {
  std::swap(t.shape[1], t.shape[2]);
  return t;
}

std::vector<Type> infer_attention_bhsd(Op op, const std::vector<Type>& in, const Attrs& a);

std::vector<Type> infer_attention(Op op, const std::vector<Type>& in, const Attrs& a) {
  for (int i = 0; i < 3; ++i) require_rank(op, in[i], 4, i == 0 ? "q" : i == 1 ? "k" : "v");
  Type y;
  if (a.s("layout") == "bhsd") {
    y = infer_attention_bhsd(op, in, a)[0];
  } else {
    std::vector<Type> t = in;
    for (int i = 0; i < 3; ++i) t[i] = swap_heads(in[i]);
    y = swap_heads(infer_attention_bhsd(op, t, a)[0]);
  }
  if (a.has("out")) {
    if (!is_float(a.dtype("out"))) type_error(op, cat("out must be a float type, got ", dtype_name(a.dtype("out"))));
    y.dtype = a.dtype("out");
  }
  return {y};
}

std::vector<Type> infer_attention_bhsd(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_same_dtype(op, in, 0, 2);
  require_dtype(op, in[0], is_float(in[0].dtype), "a float type", "q");
  const Shape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
  if (q[0] != k[0] || k[0] != v[0]) type_error(op, "q, k and v must share the batch dim");
  if (q[3] != k[3]) type_error(op, cat("q head dim ", q[3].str(), " differs from k's ", k[3].str()));
  if (k[1] != v[1] || k[2] != v[2]) type_error(op, "k and v must agree on heads and length");
  auto hq = q[1].try_value(), hk = k[1].try_value();
  if (!hq || !hk) type_error(op, "head counts must be static");
  if (*hk == 0 || *hq % *hk) type_error(op, cat(*hq, " query heads are not a multiple of ", *hk, " key/value heads"));
  if (!q[3].is_static()) type_error(op, "the head dim must be static");
  const std::string& mask = a.s("mask");
  if (mask == "additive" && in.size() < 4) type_error(op, "mask=additive needs a fourth input (the bias)");
  if (mask == "sliding_window" && a.i("window") <= 0) type_error(op, "mask=sliding_window needs window > 0");
  if ((mask == "causal" || mask == "sliding_window")) {
    auto sq = q[2].try_value(), sk = k[2].try_value();
    if (sq && sk && *sq > *sk) type_error(op, cat("a causal mask needs at least as many keys (", *sk, ") as queries (", *sq, ")"));
  }
  if (a.has("compute")) {
    DType c = a.dtype("compute");
    if (!is_float(c)) type_error(op, cat("compute must be a float type, got ", dtype_name(c)));
  }
  if (in.size() == 4) {
    if (in[3].dtype != in[0].dtype && in[3].dtype != DType::f32) type_error(op, "the bias must have q's dtype or f32");
    broadcast_shapes(op, in[3].shape, Shape{q[0], q[1], q[2], k[2]});
  }
  return {{in[0].dtype, {q[0], q[1], q[2], v[3]}}};
}

ValueId repeat_heads(Builder& b, ValueId x, int64_t groups) {
  if (groups == 1) return x;
  Shape s = b.shape(x);
  ValueId r = b.reshape(x, {s[0], s[1], Dim(1), s[2], s[3]});
  r = b.broadcast(r, {s[0], s[1], Dim(groups), s[2], s[3]});
  return b.reshape(r, {s[0], s[1] * Dim(groups), s[2], s[3]});
}

std::vector<ValueId> decompose_attention(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  if (a.has("out")) {  // the attention in q's type, then the cast
    Attrs plain = a;
    plain.erase("out");
    return {b.cast(b.emit1(Op::attention, in, plain), a.dtype("out"))};
  }
  if (a.s("layout") == "bshd") {
    // transpose to bhsd, attend (resolved again for the device), transpose back
    std::vector<ValueId> t = in;
    for (int i = 0; i < 3; ++i) t[static_cast<size_t>(i)] = b.transpose(in[static_cast<size_t>(i)], {0, 2, 1, 3});
    Attrs bh = a;
    bh.set("layout", std::string("bhsd"));
    return {b.transpose(b.emit1(Op::attention, t, bh), {0, 2, 1, 3})};
  }
  DType d = b.dtype(in[0]);
  DType cd = (d == DType::f16 || d == DType::bf16) ? DType::f32 : d;
  const Shape& qs = b.shape(in[0]);
  const Shape& ks = b.shape(in[1]);
  int64_t groups = qs[1].value() / ks[1].value();
  ValueId k = repeat_heads(b, in[1], groups);
  ValueId v = repeat_heads(b, in[2], groups);
  // compute: the dtype the two matmuls take their operands in (accumulating in f32 or wider)
  DType md = a.has("compute") ? a.dtype("compute") : d;
  ValueId q = in[0];
  if (md != d) {
    q = b.cast(q, md);
    k = b.cast(k, md);
    v = b.cast(v, md);
  }
  auto dot = [&](ValueId x, ValueId y, ir::Intss batch, ir::Intss contract) {
    if (md == d) return b.dot_general(x, y, std::move(batch), std::move(contract));
    return b.emit1(Op::dot_general, {x, y}, Attrs{{"batch", std::move(batch)}, {"contract", std::move(contract)}, {"out", cd}});
  };
  ValueId s = b.cast(dot(q, k, {{0, 1}, {0, 1}}, {{3}, {3}}), cd);
  double scale = a.f("scale");
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(qs[3].value()));
  s = b.mul(s, b.scalar(cd, scale));
  if (double cap = a.f("softcap"); cap > 0) s = b.mul(b.unary(Op::tanh, b.mul(s, b.scalar(cd, 1.0 / cap))), b.scalar(cd, cap));
  if (in.size() == 4) s = b.add(s, b.cast(in[3], cd));
  const std::string& mask = a.s("mask");
  if (mask == "causal" || mask == "sliding_window") {
    const Dim& sq = qs[2];
    const Dim& sk = ks[2];
    ValueId cols = b.iota({Dim(1), sk}, DType::i64, 1);
    ValueId pos = b.slice_axis(b.iota({sk}, DType::i64, 0), 0, sk - sq, sk);
    ValueId rows = b.reshape(pos, {sq, Dim(1)});
    ValueId allowed = b.binary(Op::le, cols, rows);
    if (mask == "sliding_window") {
      ValueId lo = b.sub(rows, b.scalar(DType::i64, static_cast<double>(a.i("window"))));
      allowed = b.binary(Op::logical_and, allowed, b.binary(Op::gt, cols, lo));
    }
    s = b.select(allowed, s, b.scalar(cd, -std::numeric_limits<double>::infinity()));
  }
  ValueId p = b.cast(b.emit1(Op::softmax, {s}, Attrs{{"axis", int64_t{-1}}}), md);
  return {b.cast(dot(p, v, {{0, 1}, {0, 1}}, {{3}, {2}}), d)};
}

// rope(x[…, S, D], positions[S] or [B, S]): rotates the first `dims` features (all when 0).
// Non-interleaved pairs feature i with i + dims/2 (Hugging Face "rotate_half"); interleaved
// pairs 2i with 2i+1 (GPT-J). Frequencies theta^(-2i/dims) are computed in f32.
std::vector<Type> infer_rope(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_dtype(op, in[0], is_float(in[0].dtype), "a float type");
  require_dtype(op, in[1], in[1].dtype == DType::i32 || in[1].dtype == DType::i64, "i32 or i64", "positions");
  const Shape& x = in[0].shape;
  const Shape& p = in[1].shape;
  if (x.size() < 2) type_error(op, "input must be [..., S, D]");
  auto D = x.back().try_value();
  if (!D) type_error(op, "the feature dim must be static");
  int64_t dims = a.i("dims") ? a.i("dims") : *D;
  if (dims <= 0 || dims > *D || dims % 2) type_error(op, cat("dims=", dims, " must be even and at most ", *D));
  const Dim& S = x[x.size() - 2];
  bool ok = (p.size() == 1 && p[0] == S) || (p.size() == 2 && x.size() == 4 && p[0] == x[0] && p[1] == S);
  if (!ok) type_error(op, cat("positions must be [S] or [B, S] for input ", shape_str(x), ", got ", shape_str(p)));
  const bool normed = a.has("norm_eps"), append = a.has("append_axis");
  if (in.size() != 2 + size_t{normed} + size_t{append})
    type_error(op, cat("takes x, positions", normed ? ", the norm weight" : "", append ? ", the cache" : "", "; got ", in.size(), " inputs"));
  if (normed && (in[2].dtype != in[0].dtype || in[2].shape != Shape{Dim(*D)}))
    type_error(op, cat("the norm weight must be ", dtype_name(in[0].dtype), "[", *D, "], got ", ir::type_str(in[2])));
  if (!append) return {in[0]};
  const Type& c = in.back();
  int64_t axis = a.i("append_axis"), rank = static_cast<int64_t>(x.size());
  if (axis != rank - 2 && axis != -2) type_error(op, cat("append_axis must be the rows axis (", rank - 2, "), got ", axis));
  if (p.size() != 1) type_error(op, "appending to a cache needs positions [S]");
  bool same = c.dtype == in[0].dtype && c.shape.size() == x.size();
  for (size_t d = 0; same && d < x.size(); ++d)
    if (d != x.size() - 2) same = c.shape[d] == x[d];
  if (!same) type_error(op, cat("the cache must be ", dtype_name(in[0].dtype), " shaped like ", shape_str(x), " but for its rows, got ", ir::type_str(c)));
  return {c};
}

std::vector<ValueId> decompose_rope(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  if (a.has("append_axis")) {
    Attrs plain = a;
    plain.erase("append_axis");
    std::vector<ValueId> args(in.begin(), in.end() - 1);
    ValueId rows = b.emit1(Op::rope, args, plain);
    return {b.emit1(Op::scatter, {in.back(), in[1], rows}, Attrs{{"axis", a.i("append_axis")}})};
  }
  ValueId x = a.has("norm_eps") ? b.emit1(Op::rms_norm, {in[0], in[2]}, Attrs{{"eps", a.f("norm_eps")}}) : in[0];
  DType d = b.dtype(x);
  Shape xs = b.shape(x);
  int64_t D = xs.back().value();
  int64_t dims = a.i("dims") ? a.i("dims") : D;
  int64_t half = dims / 2;
  float theta = static_cast<float>(a.f("theta"));
  std::vector<float> inv(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i)
    inv[static_cast<size_t>(i)] = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(dims));
  ValueId inv_freq = b.constant(Tensor::from_vector(inv, {half}));
  Shape ps = b.shape(in[1]);
  Shape ps1 = ps;
  ps1.push_back(Dim(1));
  ValueId pos = b.reshape(b.cast(in[1], DType::f32), ps1);
  ValueId ang = b.mul(pos, inv_freq);  // [S, half] or [B, S, half]
  if (ps.size() == 2) ang = b.reshape(ang, {ps[0], Dim(1), ps[1], Dim(half)});
  // Angles are f32 by definition; cos/sin are taken at f64 when x is f64.
  if (d == DType::f64) ang = b.cast(ang, DType::f64);
  int64_t last = static_cast<int64_t>(xs.size()) - 1;
  ValueId xr = b.slice_axis(x, last, Dim(0), Dim(dims));
  ValueId out;
  if (!a.b("interleaved")) {
    ValueId emb = b.concat({ang, ang}, -1);
    ValueId c = b.cast(b.unary(Op::cos, emb), d), s = b.cast(b.unary(Op::sin, emb), d);
    ValueId x1 = b.slice_axis(xr, last, Dim(0), Dim(half));
    ValueId x2 = b.slice_axis(xr, last, Dim(half), Dim(dims));
    ValueId rot = b.concat({b.unary(Op::neg, x2), x1}, -1);
    out = b.add(b.mul(xr, c), b.mul(rot, s));
  } else {
    Shape pairs(xs.begin(), xs.end() - 1);
    pairs.push_back(Dim(half));
    pairs.push_back(Dim(2));
    ValueId xp = b.reshape(xr, pairs);
    int64_t pl = last + 1;
    ValueId x0 = b.slice_axis(xp, pl, Dim(0), Dim(1));
    ValueId x1 = b.slice_axis(xp, pl, Dim(1), Dim(2));
    Shape as = b.shape(ang);
    as.push_back(Dim(1));
    ValueId angp = b.reshape(ang, as);
    ValueId c = b.cast(b.unary(Op::cos, angp), d), s = b.cast(b.unary(Op::sin, angp), d);
    ValueId o0 = b.sub(b.mul(x0, c), b.mul(x1, s));
    ValueId o1 = b.add(b.mul(x1, c), b.mul(x0, s));
    Shape flat(xs.begin(), xs.end() - 1);
    flat.push_back(Dim(dims));
    out = b.reshape(b.concat({o0, o1}, -1), flat);
  }
  if (dims < D) out = b.concat({out, b.slice_axis(x, last, Dim(dims), Dim(D))}, -1);
  return {out};
}

}  // namespace

void register_attention(RuleTable& t) {
  t[static_cast<size_t>(Op::attention)] = {infer_attention, decompose_attention};
  t[static_cast<size_t>(Op::rope)] = {infer_rope, decompose_rope};
}

}  // namespace rlx::ops
