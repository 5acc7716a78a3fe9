// Activations, Gemm/MatMul/Einsum and the training-domain optimizers (ai.onnx.preview.training).
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <map>
#include <set>

#include "frontends/onnx/ops_util.h"
#include "passes/autodiff.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

std::vector<ValueId> leaky_relu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  ValueId neg = b.binary(Op::lt, x, like(b, x, 0.0));
  return one(b.select(neg, b.mul(x, like(b, x, c.attr_f("alpha", 0.01f))), x));
}

std::vector<ValueId> prelu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), slope = c.in(1);
  // Old exporters give one slope per channel as [C] for an [N, C, …] input.
  Shape xs = c.shape(x), ss = c.shape(slope);
  if (ss.size() == 1 && xs.size() > 2 && ss[0] == xs[1] && ss[0] != xs.back()) {
    Shape t = {ss[0]};
    for (size_t i = 2; i < xs.size(); ++i) t.push_back(Dim(1));
    slope = b.reshape(slope, t);
  }
  ValueId neg = b.binary(Op::lt, x, like(b, x, 0.0));
  return one(b.select(neg, b.mul(x, slope), x));
}

std::vector<ValueId> elu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  ValueId neg = b.binary(Op::lt, x, like(b, x, 0.0));
  return one(b.select(neg, b.mul(b.unary(Op::expm1, x), like(b, x, c.attr_f("alpha", 1.0f))), x));
}

std::vector<ValueId> selu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  double alpha = c.attr_f("alpha", 1.67326319217681884765625f), gamma = c.attr_f("gamma", 1.05070102214813232421875f);
  ValueId neg = b.binary(Op::le, x, like(b, x, 0.0));
  ValueId y = b.select(neg, b.mul(b.unary(Op::expm1, x), like(b, x, alpha)), x);
  return one(b.mul(y, like(b, x, gamma)));
}

std::vector<ValueId> celu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  double alpha = c.attr_f("alpha", 1.0f);
  ValueId e = b.mul(b.unary(Op::expm1, b.div(x, like(b, x, alpha))), like(b, x, alpha));
  return one(b.add(b.max(x, like(b, x, 0.0)), b.min(e, like(b, x, 0.0))));
}

// log(1 + eˣ) = max(x, 0) + log1p(e^−|x|), without overflow.
std::vector<ValueId> softplus(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  ValueId t = b.unary(Op::log1p, b.unary(Op::exp, b.unary(Op::neg, b.unary(Op::abs, x))));
  return one(b.add(b.max(x, like(b, x, 0.0)), t));
}

std::vector<ValueId> softsign(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  return one(b.div(x, b.add(b.unary(Op::abs, x), like(b, x, 1.0))));
}

ValueId hard_sigmoid(FoldingBuilder& b, ValueId x, double alpha, double beta) {
  ValueId y = b.add(b.mul(x, like(b, x, alpha)), like(b, x, beta));
  return b.max(b.min(y, like(b, x, 1.0)), like(b, x, 0.0));
}

std::vector<ValueId> hardsigmoid(NodeCtx& c) { return one(hard_sigmoid(c.b, c.in(0), c.attr_f("alpha", 0.2f), c.attr_f("beta", 0.5f))); }

std::vector<ValueId> hardswish(NodeCtx& c) {
  ValueId x = c.in(0);
  return one(c.b.mul(x, hard_sigmoid(c.b, x, 1.0 / 6.0, 0.5)));
}

std::vector<ValueId> thresholded_relu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  return one(b.select(b.binary(Op::gt, x, like(b, x, c.attr_f("alpha", 1.0f))), x, like(b, x, 0.0)));
}

std::vector<ValueId> shrink(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  double bias = c.attr_f("bias", 0.0f), lambd = c.attr_f("lambd", 0.5f);
  ValueId xd = is_float(c.dtype(x)) ? x : b.cast(x, DType::f64);
  ValueId lo = b.binary(Op::lt, xd, like(b, xd, -lambd)), hi = b.binary(Op::gt, xd, like(b, xd, lambd));
  ValueId y = b.select(lo, b.add(xd, like(b, xd, bias)), b.select(hi, b.sub(xd, like(b, xd, bias)), like(b, xd, 0.0)));
  return one(b.cast(y, c.dtype(x)));
}

std::vector<ValueId> gelu(NodeCtx& c) {
  std::string approx = c.attr_s("approximate", "none");
  return one(c.b.emit1(approx == "tanh" ? Op::gelu_tanh : Op::gelu, {c.in(0)}));
}

// Y = alpha·op(A)·op(B) + beta·C, contracting without materializing transposes.
std::vector<ValueId> gemm(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId a = c.in(0), w = c.in(1);
  if (c.rank(a) != 2 || c.rank(w) != 2) {
    // Gemm before opset 9 flattened higher-rank inputs.
    if (c.rank(a) != 2) a = flatten2d(b, a, 1);
    if (c.rank(w) != 2) w = flatten2d(b, w, 1);
  }
  int64_t ta = c.attr_i("transA", 0), tb = c.attr_i("transB", 0);
  ValueId y = b.dot_general(a, w, {{}, {}}, {{ta ? 0 : 1}, {tb ? 1 : 0}});
  double alpha = c.attr_f("alpha", 1.0f), beta = c.attr_f("beta", 1.0f);
  if (alpha != 1.0) y = b.mul(y, like(b, y, alpha));
  if (c.has(2) && beta != 0.0) {
    ValueId bias = c.in(2);
    if (beta != 1.0) bias = b.mul(bias, like(b, bias, beta));
    y = b.add(y, bias);
  }
  return one(y);
}

std::vector<ValueId> matmul(NodeCtx& c) { return one(c.b.emit1(Op::matmul, {c.in(0), c.in(1)})); }

// ---- Einsum: per operand take diagonals of repeated letters and sum letters used nowhere
// else, then contract operands pairwise with dot_general and transpose to the output order.

struct Term {
  ValueId v;
  std::string letters;
};

ValueId take_diagonal(FoldingBuilder& b, ValueId x, int64_t i, int64_t j) {
  // Gather the flattened (i, j) pair at k·n + k, putting the diagonal where i was.
  Shape s = b.shape(x);
  int64_t r = static_cast<int64_t>(s.size());
  Ints perm;
  for (int64_t k = 0; k < r; ++k)
    if (k != i && k != j) perm.push_back(k);
  perm.push_back(i);
  perm.push_back(j);
  ValueId t = b.transpose(x, perm);
  int64_t n = s[i].value();
  if (n * n > kMaxImportTable) throw Error(ErrorKind::unsupported, cat("an einsum diagonal of ", n, "x", n));
  Shape fs(s.size() - 2);
  for (size_t k = 0, m = 0; k < s.size(); ++k)
    if (static_cast<int64_t>(k) != i && static_cast<int64_t>(k) != j) fs[m++] = s[k];
  Shape flat = fs;
  flat.push_back(Dim(n * n));
  t = b.reshape(t, flat);
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < n; ++k) idx.push_back(k * n + k);
  t = b.gather(t, b.constant(Tensor::from_vector(idx, {n})), static_cast<int64_t>(fs.size()));
  // now [others…, n]: move the diagonal back to position i (j removed)
  int64_t rr = r - 1;
  Ints back(static_cast<size_t>(rr));
  int64_t pos_i = i < j ? i : i - 1;
  for (int64_t k = 0, m = 0; k < rr; ++k) back[static_cast<size_t>(k)] = k == pos_i ? rr - 1 : m++;
  return b.transpose(t, back);
}

std::vector<ValueId> einsum(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  std::string eq;
  for (char ch : c.attr_s("equation", ""))
    if (ch != ' ') eq += ch;
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  if (auto p = eq.find("->"); p != std::string::npos) {
    lhs = eq.substr(0, p);
    rhs = eq.substr(p + 2);
    explicit_out = true;
  }
  std::vector<std::string> specs = split(lhs, ',');
  if (specs.size() != c.num_inputs()) c.invalid(cat("equation '", eq, "' names ", specs.size(), " operands for ", c.num_inputs(), " inputs"));
  // Ellipsis → upper-case letters (ONNX equations use lower-case letters).
  int64_t ell_rank = 0;
  for (size_t k = 0; k < specs.size(); ++k)
    if (auto p = specs[k].find("..."); p != std::string::npos)
      ell_rank = std::max<int64_t>(ell_rank, c.rank(c.in(k)) - static_cast<int64_t>(specs[k].size() - 3));
  std::string ell;
  for (int64_t k = 0; k < ell_rank; ++k) ell += static_cast<char>('A' + k);
  std::vector<Term> terms;
  for (size_t k = 0; k < specs.size(); ++k) {
    std::string s = specs[k];
    if (auto p = s.find("..."); p != std::string::npos) {
      int64_t n = c.rank(c.in(k)) - static_cast<int64_t>(s.size() - 3);
      s = s.substr(0, p) + ell.substr(static_cast<size_t>(ell_rank - n)) + s.substr(p + 3);
    }
    if (static_cast<int64_t>(s.size()) != c.rank(c.in(k))) c.invalid(cat("operand ", k, " has rank ", c.rank(c.in(k)), " but '", specs[k], "'"));
    terms.push_back({c.in(k), s});
  }
  if (explicit_out) {
    if (auto p = rhs.find("..."); p != std::string::npos) rhs = rhs.substr(0, p) + ell + rhs.substr(p + 3);
  } else {
    std::map<char, int> count;
    for (const auto& t : terms)
      for (char ch : t.letters) count[ch]++;
    rhs = ell;
    for (auto [ch, n] : count)
      if (n == 1 && !(ch >= 'A' && ch <= 'Z')) rhs += ch;
  }
  auto used_elsewhere = [&](char ch, size_t self) {
    if (rhs.find(ch) != std::string::npos) return true;
    for (size_t k = 0; k < terms.size(); ++k)
      if (k != self && terms[k].letters.find(ch) != std::string::npos) return true;
    return false;
  };
  for (size_t k = 0; k < terms.size(); ++k) {
    Term& t = terms[k];
    for (bool again = true; again;) {  // repeated letters: diagonals
      again = false;
      for (size_t i = 0; i < t.letters.size() && !again; ++i)
        for (size_t j = i + 1; j < t.letters.size() && !again; ++j)
          if (t.letters[i] == t.letters[j]) {
            t.v = take_diagonal(b, t.v, static_cast<int64_t>(i), static_cast<int64_t>(j));
            t.letters.erase(j, 1);
            again = true;
          }
    }
    Ints sum_axes;
    std::string kept;
    for (size_t i = 0; i < t.letters.size(); ++i) {
      if (used_elsewhere(t.letters[i], k)) kept += t.letters[i];
      else sum_axes.push_back(static_cast<int64_t>(i));
    }
    if (!sum_axes.empty()) t.v = b.reduce(t.v, "sum", sum_axes, false);
    t.letters = kept;
  }
  while (terms.size() > 1) {
    Term x = terms[0], y = terms[1];
    terms.erase(terms.begin(), terms.begin() + 2);
    auto later = [&](char ch) {
      if (rhs.find(ch) != std::string::npos) return true;
      for (const auto& t : terms)
        if (t.letters.find(ch) != std::string::npos) return true;
      return false;
    };
    Ints lb, rb, lc, rc;
    std::string out_letters;
    for (size_t i = 0; i < x.letters.size(); ++i) {
      size_t j = y.letters.find(x.letters[i]);
      if (j == std::string::npos) continue;
      if (later(x.letters[i])) {
        lb.push_back(static_cast<int64_t>(i));
        rb.push_back(static_cast<int64_t>(j));
        out_letters += x.letters[i];
      } else {
        lc.push_back(static_cast<int64_t>(i));
        rc.push_back(static_cast<int64_t>(j));
      }
    }
    for (char ch : x.letters)
      if (y.letters.find(ch) == std::string::npos) out_letters += ch;
    for (char ch : y.letters)
      if (x.letters.find(ch) == std::string::npos) out_letters += ch;
    // Letters only in one operand and used later were kept; a letter in both that must stay
    // is a batch dim. Size-1 broadcasting between operands is not needed by einsum.
    ValueId r = b.dot_general(x.v, y.v, {lb, rb}, {lc, rc});
    terms.insert(terms.begin(), Term{r, out_letters});
  }
  Term& t = terms[0];
  Ints perm;
  for (char ch : rhs) {
    size_t p = t.letters.find(ch);
    if (p == std::string::npos) c.invalid(cat("output letter '", ch, "' does not appear in the inputs"));
    perm.push_back(static_cast<int64_t>(p));
  }
  return one(b.transpose(t.v, perm));
}

// ---- ai.onnx.preview.training optimizers: one update per (X, G, state…) group.

std::vector<ValueId> adagrad(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId r = c.in(0), t = c.in(1);
  double decay = c.attr_f("decay_factor", 0.0f), eps = c.attr_f("epsilon", 1e-6f), norm = c.attr_f("norm_coefficient", 0.0f);
  if (c.num_inputs() < 2) c.invalid("needs R, T and at least one (X, G, state) group");
  size_t n = (c.num_inputs() - 2) / 3;
  std::vector<ValueId> xs, hs;
  for (size_t k = 0; k < n; ++k) {
    ValueId x = c.in(2 + k), g = c.in(2 + n + k), h = c.in(2 + 2 * n + k);
    ValueId rt = b.div(b.cast(r, c.dtype(x)), b.add(b.mul(b.cast(t, c.dtype(x)), like(b, x, decay)), like(b, x, 1.0)));
    ValueId gr = b.add(b.mul(x, like(b, x, norm)), g);
    ValueId hn = b.add(h, b.mul(gr, gr));
    ValueId hs_ = b.add(b.unary(Op::sqrt, hn), like(b, x, eps));
    xs.push_back(b.sub(x, b.div(b.mul(rt, gr), hs_)));
    hs.push_back(hn);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<ValueId> momentum(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId r = c.in(0), t = c.in(1);
  double alpha = c.attr_f("alpha", 0.0f), beta = c.attr_f("beta", 0.0f), norm = c.attr_f("norm_coefficient", 0.0f);
  std::string mode = c.attr_s("mode", "standard");
  if (c.num_inputs() < 2) c.invalid("needs R, T and at least one (X, G, state) group");
  size_t n = (c.num_inputs() - 2) / 3;
  std::vector<ValueId> xs, vs;
  for (size_t k = 0; k < n; ++k) {
    ValueId x = c.in(2 + k), g = c.in(2 + n + k), v = c.in(2 + 2 * n + k);
    ValueId rr = b.cast(r, c.dtype(x));
    ValueId gr = b.add(b.mul(x, like(b, x, norm)), g);
    // beta applies from the second step on (t > 0).
    ValueId beta_t = b.select(b.binary(Op::gt, t, like(b, t, 0.0)), like(b, x, beta), like(b, x, 1.0));
    ValueId vn = b.add(b.mul(v, like(b, x, alpha)), b.mul(gr, beta_t));
    ValueId xn = mode == "nesterov" ? b.sub(x, b.mul(rr, b.add(gr, b.mul(vn, like(b, x, alpha))))) : b.sub(x, b.mul(rr, vn));
    xs.push_back(xn);
    vs.push_back(vn);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

std::vector<ValueId> adam(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId r = c.in(0), t = c.in(1);
  double alpha = c.attr_f("alpha", 0.9f), beta = c.attr_f("beta", 0.999f), eps = c.attr_f("epsilon", 1e-6f);
  double norm = c.attr_f("norm_coefficient", 0.0f), norm_post = c.attr_f("norm_coefficient_post", 0.0f);
  if (c.num_inputs() < 2) c.invalid("needs R, T and at least one (X, G, V, H) group");
  size_t n = (c.num_inputs() - 2) / 4;
  std::vector<ValueId> xs, vs, hs;
  for (size_t k = 0; k < n; ++k) {
    ValueId x = c.in(2 + k), g = c.in(2 + n + k), v = c.in(2 + 2 * n + k), h = c.in(2 + 3 * n + k);
    DType d = c.dtype(x);
    ValueId gr = b.add(b.mul(x, like(b, x, norm)), g);
    ValueId vn = b.add(b.mul(v, like(b, x, alpha)), b.mul(gr, like(b, x, 1 - alpha)));
    ValueId hn = b.add(b.mul(h, like(b, x, beta)), b.mul(b.mul(gr, gr), like(b, x, 1 - beta)));
    ValueId td = b.cast(t, d);
    ValueId rr = b.cast(r, d);
    ValueId bc = b.select(b.binary(Op::gt, t, like(b, t, 0.0)),
                          b.div(b.unary(Op::sqrt, b.sub(like(b, x, 1.0), b.binary(Op::pow, like(b, x, beta), td))),
                                b.sub(like(b, x, 1.0), b.binary(Op::pow, like(b, x, alpha), td))),
                          like(b, x, 1.0));
    ValueId rate = b.mul(rr, bc);
    ValueId xn = b.sub(x, b.div(b.mul(rate, vn), b.add(b.unary(Op::sqrt, hn), like(b, x, eps))));
    xn = b.mul(xn, like(b, x, 1 - norm_post));
    xs.push_back(xn);
    vs.push_back(vn);
    hs.push_back(hn);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// Det by the Leibniz formula over the last two dims (exact for the small matrices it allows).
std::vector<ValueId> det(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Shape s = c.shape(x);
  int64_t r = c.rank(x);
  if (r < 2 || s[static_cast<size_t>(r - 1)] != s[static_cast<size_t>(r - 2)] || !s.back().is_static()) c.invalid("needs square matrices of a static size");
  int64_t n = s.back().value();
  if (n > 6) c.fail(cat(n, "x", n, " matrices (the Leibniz expansion stops at 6x6)"));
  Shape batch(s.begin(), s.end() - 2);
  auto entry = [&](int64_t i, int64_t j) {
    ValueId e = b.slice_axis(b.slice_axis(x, r - 2, Dim(i), Dim(i + 1)), r - 1, Dim(j), Dim(j + 1));
    return b.reshape(e, batch);
  };
  std::vector<int64_t> perm = iota_ints(n);
  ValueId acc = kNoValue;
  do {
    int inversions = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) inversions += perm[static_cast<size_t>(i)] > perm[static_cast<size_t>(j)];
    ValueId term = entry(0, perm[0]);
    for (int64_t i = 1; i < n; ++i) term = b.mul(term, entry(i, perm[static_cast<size_t>(i)]));
    if (acc == kNoValue) acc = inversions % 2 ? b.unary(Op::neg, term) : term;
    else acc = inversions % 2 ? b.sub(acc, term) : b.add(acc, term);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return one(acc);
}

// ai.onnx.preview.training Gradient: d y / d xs for the graph the importer has built so far.
// The part of the graph between xs and y is copied out, differentiated by RLX's reverse-mode
// autodiff (passes::value_and_grad) and the gradient nodes are emitted back inline.
std::vector<ValueId> gradient(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  const ir::Graph& g = b.graph();
  std::vector<ValueId> xs;
  if (const auto* a = c.attr("xs"))
    for (const auto& n : a->strings()) {
      IValue v = c.imp.value_named(n, c.label());
      if (!v.is_tensor()) c.invalid(cat("xs '", n, "' is not a tensor"));
      xs.push_back(v.v);
    }
  IValue yv = c.imp.value_named(c.attr_s("y", ""), c.label());
  if (!yv.is_tensor()) c.invalid("y is not a tensor");
  if (c.has_attr("zs")) c.fail("the zs attribute");
  // Copy y's ancestors into a graph whose inputs are xs plus any other leaf it reads.
  ir::Graph sub;
  std::unordered_map<ValueId, ValueId> map;
  for (ValueId x : xs) map[x] = sub.add_input(g.type(x));
  std::vector<ValueId> extra;
  std::function<ValueId(ValueId)> copy = [&](ValueId v) -> ValueId {
    if (auto it = map.find(v); it != map.end()) return it->second;
    const ir::Node* p = g.producer(v);
    if (!p) {
      extra.push_back(v);
      return map[v] = sub.add_input(g.type(v));
    }
    ir::Node n = *p;
    std::vector<ValueId> ins;
    for (ValueId i : n.inputs) ins.push_back(copy(i));
    std::vector<ir::Type> types;
    for (ValueId o : n.outputs) types.push_back(g.type(o));
    std::vector<ValueId> outs = sub.add_node(n.op, ins, n.attrs, types, n.name, n.origin);
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
    return map.at(v);
  };
  ValueId y = copy(yv.v);
  if (!sub.type(y).shape.empty()) {  // a non-scalar y: the gradient of its sum
    ops::Builder sb(sub);
    y = sb.reduce(y, "sum", iota_ints(static_cast<int64_t>(sub.type(y).shape.size())), false);
  }
  sub.set_outputs({y});
  std::vector<ValueId> wrt(sub.inputs().begin(), sub.inputs().begin() + static_cast<int64_t>(xs.size()));
  ir::Graph grad = passes::value_and_grad(sub, 0, wrt);
  // Emit the gradient graph inline.
  std::unordered_map<ValueId, ValueId> back;
  for (size_t i = 0; i < xs.size(); ++i) back[grad.inputs()[i]] = xs[i];
  for (size_t i = 0; i < extra.size(); ++i) back[grad.inputs()[xs.size() + i]] = extra[i];
  for (const ir::Node& n : grad.nodes()) {
    std::vector<ValueId> ins;
    for (ValueId i : n.inputs) ins.push_back(back.at(i));
    std::vector<ValueId> outs = b.emit(n.op, ins, n.attrs);
    for (size_t k = 0; k < outs.size(); ++k) back[n.outputs[k]] = outs[k];
  }
  std::vector<ValueId> r;
  for (size_t i = 1; i < grad.outputs().size(); ++i) r.push_back(back.at(grad.outputs()[i]));
  return r;
}

}  // namespace

void register_math(OpTable& t) {
  t.insert(t.end(), {
                        {"", "LeakyRelu", 1, leaky_relu},
                        {"", "PRelu", 1, prelu},
                        {"", "Elu", 1, elu},
                        {"", "Selu", 1, selu},
                        {"", "Celu", 12, celu},
                        {"", "Softplus", 1, softplus},
                        {"", "Softsign", 1, softsign},
                        {"", "HardSigmoid", 1, hardsigmoid},
                        {"", "HardSwish", 14, hardswish},
                        {"", "ThresholdedRelu", 10, thresholded_relu},
                        {"", "Shrink", 9, shrink},
                        {"", "Gelu", 20, gelu},
                        {"", "Gemm", 1, gemm},
                        {"", "MatMul", 1, matmul},
                        {"", "Einsum", 12, einsum},
                        {"", "Det", 11, det},
                        {"ai.onnx.preview.training", "Adagrad", 1, adagrad},
                        {"ai.onnx.preview.training", "Momentum", 1, momentum},
                        {"ai.onnx.preview.training", "Adam", 1, adam},
                        {"ai.onnx.preview.training", "Gradient", 1, gradient},
                    });
}

}  // namespace rlx::frontends::onnx
