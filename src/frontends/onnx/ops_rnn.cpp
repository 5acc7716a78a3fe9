// RNN, GRU and LSTM unrolled over the (static) sequence: both directions, layouts 0 and 1,
// clip, custom activations with their alpha/beta, sequence_lens (forward), initial states,
// LSTM peepholes and input_forget, GRU linear_before_reset.
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

ValueId apply(FoldingBuilder& b, const Act& a, ValueId x) {
  const std::string& n = a.name;
  if (n == "Tanh") return b.unary(Op::tanh, x);
  if (n == "Sigmoid") return b.unary(Op::sigmoid, x);
  if (n == "Relu") return b.max(x, like(b, x, 0.0));
  if (n == "Affine") return b.add(b.mul(x, like(b, x, a.alpha)), like(b, x, a.beta));
  if (n == "LeakyRelu") return b.select(b.binary(Op::lt, x, like(b, x, 0.0)), b.mul(x, like(b, x, a.alpha)), x);
  if (n == "ThresholdedRelu") return b.select(b.binary(Op::gt, x, like(b, x, a.alpha)), x, like(b, x, 0.0));
  if (n == "ScaledTanh") return b.mul(b.unary(Op::tanh, b.mul(x, like(b, x, a.beta))), like(b, x, a.alpha));
  if (n == "HardSigmoid") return b.max(b.min(b.add(b.mul(x, like(b, x, a.alpha)), like(b, x, a.beta)), like(b, x, 1.0)), like(b, x, 0.0));
  if (n == "Elu") return b.select(b.binary(Op::lt, x, like(b, x, 0.0)), b.mul(b.unary(Op::expm1, x), like(b, x, a.alpha)), x);
  if (n == "Softsign") return b.div(x, b.add(b.unary(Op::abs, x), like(b, x, 1.0)));
  if (n == "Softplus") return b.add(b.max(x, like(b, x, 0.0)), b.unary(Op::log1p, b.unary(Op::exp, b.unary(Op::neg, b.unary(Op::abs, x)))));
  throw Error(ErrorKind::unsupported, cat("recurrent activation '", n, "'"));
}

// Activations for all directions: the attribute's names (or the defaults), with alpha/beta
// taken in order by the functions that have them.
std::vector<Act> activations(NodeCtx& c, const std::vector<std::string>& defaults, int64_t dirs) {
  std::vector<std::string> names;
  if (const auto* a = c.attr("activations"))
    for (const auto& s : a->strings()) names.push_back(s);
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  auto alphas = c.attr_floats("activation_alpha"), betas = c.attr_floats("activation_beta");
  size_t ia = 0, ib = 0;
  std::vector<Act> out;
  for (auto n : names) {
    // Names are case-insensitive in practice (exporters write "tanh").
    std::string canon;
    for (const char* k : {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"}) {
      std::string kk = k, a = n;
      std::transform(kk.begin(), kk.end(), kk.begin(), ::tolower);
      std::transform(a.begin(), a.end(), a.begin(), ::tolower);
      if (kk == a) canon = k;
    }
    if (canon.empty()) c.fail(cat("activation '", n, "'"));
    Act act{canon};
    bool has_a = canon == "Affine" || canon == "LeakyRelu" || canon == "ThresholdedRelu" || canon == "ScaledTanh" || canon == "HardSigmoid" || canon == "Elu";
    bool has_b = canon == "Affine" || canon == "ScaledTanh" || canon == "HardSigmoid";
    if (canon == "LeakyRelu") act.alpha = 0.01;
    if (canon == "ThresholdedRelu" || canon == "Elu") act.alpha = 1.0;
    if (canon == "HardSigmoid") act.alpha = 0.2, act.beta = 0.5;
    if (has_a && ia < alphas.size()) act.alpha = alphas[ia++];
    if (has_b && ib < betas.size()) act.beta = betas[ib++];
    out.push_back(act);
  }
  return out;
}

enum class Cell { rnn, gru, lstm };

struct Dir {
  ValueId w, r, wb = kNoValue, rb = kNoValue, h0, c0 = kNoValue, p = kNoValue;
  bool reverse = false;
  std::vector<Act> acts;
};

// x·wᵀ for x [batch, in] and w [G·h, in]
ValueId xwT(FoldingBuilder& b, ValueId x, ValueId w) { return b.dot_general(x, w, {{}, {}}, {{1}, {1}}); }

ValueId gate(FoldingBuilder& b, ValueId v, int64_t k, int64_t h) { return b.slice_axis(v, 1, Dim(k * h), Dim((k + 1) * h)); }
ValueId vgate(FoldingBuilder& b, ValueId v, int64_t k, int64_t h) { return b.slice_axis(v, 0, Dim(k * h), Dim((k + 1) * h)); }

std::vector<ValueId> recurrent(NodeCtx& c, Cell cell) {
  FoldingBuilder& b = c.b;
  int64_t layout = c.attr_i("layout", 0);
  ValueId x = c.in(0);
  c.require_rank(x, 3, 3, "X");
  c.require_rank(c.in(1), 3, 3, "W");
  c.require_rank(c.in(2), 3, 3, "R");
  if (layout == 1) x = b.transpose(x, {1, 0, 2});
  auto xs = c.static_shape(x, "the input");
  int64_t seq = xs[0], batch = xs[1];
  if (seq > 4096) c.fail(cat("a sequence of ", seq, " steps (unrolling stops at 4096)"));
  int64_t h = c.attr_i("hidden_size", 0);
  if (h <= 0) h = c.shape(c.in(2))[2].value();
  int G = cell == Cell::rnn ? 1 : cell == Cell::gru ? 3 : 4;
  std::string direction = c.attr_s("direction", "forward");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  double clip = c.attr_f("clip", 0.0f);
  bool lbr = c.attr_i("linear_before_reset", 0) != 0;
  bool input_forget = c.attr_i("input_forget", 0) != 0;
  std::vector<std::string> defaults = cell == Cell::rnn ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<Act> acts = activations(c, defaults, dirs);
  size_t per = defaults.size();
  if (acts.size() < per * static_cast<size_t>(dirs)) c.invalid(cat("needs ", per * static_cast<size_t>(dirs), " activations"));
  DType d = c.dtype(x);
  ValueId lens = c.has(4) ? b.reshape(b.cast(c.in(4), DType::i64), {Dim(batch), Dim(1)}) : kNoValue;
  size_t h0_at = 5, c0_at = 6, p_at = 7;
  auto dir_slice = [&](ValueId v, int64_t k) { return remove_axes(b, b.slice_axis(v, 0, Dim(k), Dim(k + 1)), {0}); };
  auto init_state = [&](size_t at, int64_t k) {
    if (!c.has(at)) return full(b, d, {Dim(batch), Dim(h)}, 0.0);
    ValueId v = c.in(at);
    if (layout == 1) v = b.transpose(v, {1, 0, 2});
    return dir_slice(v, k);
  };
  std::vector<ValueId> ys, yhs, ycs;
  for (int64_t k = 0; k < dirs; ++k) {
    Dir dr;
    dr.w = dir_slice(c.in(1), k);
    dr.r = dir_slice(c.in(2), k);
    if (c.has(3)) {
      ValueId bb = dir_slice(c.in(3), k);
      dr.wb = vgate(b, bb, 0, G * h);
      dr.rb = vgate(b, bb, 1, G * h);
    }
    dr.h0 = init_state(h0_at, k);
    if (cell == Cell::lstm) {
      dr.c0 = init_state(c0_at, k);
      if (c.has(p_at)) dr.p = dir_slice(c.in(p_at), k);
    }
    dr.reverse = direction == "reverse" || k == 1;
    if (dr.reverse && lens != kNoValue) c.fail("a reverse direction with sequence_lens");
    dr.acts.assign(acts.begin() + static_cast<int64_t>(per * k), acts.begin() + static_cast<int64_t>(per * (k + 1)));
    auto cl = [&](ValueId v) { return clip > 0 ? b.max(b.min(v, like(b, v, clip)), like(b, v, -clip)) : v; };
    ValueId H = dr.h0, C = dr.c0;
    std::vector<ValueId> outs(static_cast<size_t>(seq));
    for (int64_t s = 0; s < seq; ++s) {
      int64_t t = dr.reverse ? seq - 1 - s : s;
      ValueId xt = remove_axes(b, b.slice_axis(x, 0, Dim(t), Dim(t + 1)), {0});
      ValueId xw = xwT(b, xt, dr.w);
      if (dr.wb != kNoValue) xw = b.add(xw, dr.wb);
      ValueId hr = xwT(b, H, dr.r);
      ValueId hr_b = dr.rb != kNoValue ? b.add(hr, dr.rb) : hr;
      ValueId Hn, Cn = kNoValue;
      if (cell == Cell::rnn) {
        Hn = apply(b, dr.acts[0], cl(b.add(xw, hr_b)));
      } else if (cell == Cell::gru) {
        ValueId z = apply(b, dr.acts[0], cl(b.add(gate(b, xw, 0, h), gate(b, hr_b, 0, h))));
        ValueId r = apply(b, dr.acts[0], cl(b.add(gate(b, xw, 1, h), gate(b, hr_b, 1, h))));
        ValueId hh;
        if (lbr) {
          hh = b.add(gate(b, xw, 2, h), b.mul(r, gate(b, hr_b, 2, h)));
        } else {
          ValueId rh = xwT(b, b.mul(r, H), vgate(b, dr.r, 2, h));
          if (dr.rb != kNoValue) rh = b.add(rh, vgate(b, dr.rb, 2, h));
          hh = b.add(gate(b, xw, 2, h), rh);
        }
        hh = apply(b, dr.acts[1], cl(hh));
        Hn = b.add(b.mul(b.sub(like(b, z, 1.0), z), hh), b.mul(z, H));
      } else {
        ValueId pre = b.add(xw, hr_b);
        auto peep = [&](ValueId v, int64_t gi, ValueId state) {
          return dr.p == kNoValue ? v : b.add(v, b.mul(vgate(b, dr.p, gi, h), state));
        };
        ValueId i = apply(b, dr.acts[0], cl(peep(gate(b, pre, 0, h), 0, C)));
        ValueId f = input_forget ? b.sub(like(b, i, 1.0), i) : apply(b, dr.acts[0], cl(peep(gate(b, pre, 2, h), 2, C)));
        ValueId g = apply(b, dr.acts[1], cl(gate(b, pre, 3, h)));
        Cn = b.add(b.mul(f, C), b.mul(i, g));
        ValueId o = apply(b, dr.acts[0], cl(peep(gate(b, pre, 1, h), 1, Cn)));
        Hn = b.mul(o, apply(b, dr.acts[2], Cn));
      }
      ValueId y = Hn;
      if (lens != kNoValue) {
        ValueId live = b.binary(Op::lt, b.scalar(DType::i64, static_cast<double>(t)), lens);
        Hn = b.select(live, Hn, H);
        if (Cn != kNoValue) Cn = b.select(live, Cn, C);
        y = b.select(live, y, like(b, y, 0.0));
      }
      H = Hn;
      C = Cn;
      outs[static_cast<size_t>(t)] = insert_axes(b, y, {0});
    }
    ys.push_back(insert_axes(b, b.concat(outs, 0), {1}));  // [seq, 1, batch, h]
    yhs.push_back(insert_axes(b, H, {0}));
    if (cell == Cell::lstm) ycs.push_back(insert_axes(b, C, {0}));
  }
  ValueId Y = b.concat(ys, 1), Yh = b.concat(yhs, 0);
  ValueId Yc = cell == Cell::lstm ? b.concat(ycs, 0) : kNoValue;
  if (layout == 1) {
    Y = b.transpose(Y, {2, 0, 1, 3});
    Yh = b.transpose(Yh, {1, 0, 2});
    if (Yc != kNoValue) Yc = b.transpose(Yc, {1, 0, 2});
  }
  std::vector<ValueId> r = {Y, Yh};
  if (cell == Cell::lstm) r.push_back(Yc);
  return r;
}

std::vector<ValueId> rnn(NodeCtx& c) { return recurrent(c, Cell::rnn); }
std::vector<ValueId> gru(NodeCtx& c) { return recurrent(c, Cell::gru); }
std::vector<ValueId> lstm(NodeCtx& c) { return recurrent(c, Cell::lstm); }

}  // namespace

void register_rnn(OpTable& t) {
  t.insert(t.end(), {
                        {"", "RNN", 1, rnn},
                        {"", "GRU", 1, gru},
                        {"", "LSTM", 1, lstm},
                    });
}

}  // namespace rlx::frontends::onnx
