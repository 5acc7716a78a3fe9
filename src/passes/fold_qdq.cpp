#include "passes/fold_qdq.h"

#include <cmath>
#include <optional>

#include "passes/integer_ops.h"
#include "passes/rewrite.h"
#include "passes/simplify.h"
#include "util/strings.h"

namespace rlx::passes {

namespace {

using ir::Node;
using ir::Ints;
using ir::Intss;

// The value of a constant, seen through reshapes of it (per-axis parameters are reshaped to
// broadcast); nullopt for anything computed.
std::optional<Tensor> const_of(const Graph& g, ValueId v) {
  const Node* p = g.producer(v);
  if (!p) return std::nullopt;
  if (p->op == Op::constant) return p->attrs.tensor("value");
  if (p->op == Op::reshape) {
    auto t = const_of(g, p->inputs[0]);
    if (!t) return std::nullopt;
    return t->contiguous().reshape(shape_values(g.type(v).shape));
  }
  return std::nullopt;
}

std::optional<double> scalar_of(const Graph& g, ValueId v) {
  auto t = const_of(g, v);
  if (!t || t->numel() != 1) return std::nullopt;
  return t->to_f64()[0];
}

using Affine = Int8Grid;  // a dequantization: real = scale · (q − zero_point)

// DQ(xq, s, z) with one f32 scale and zero point over i8 values.
std::optional<std::pair<ValueId, Affine>> dequantized(const Graph& g, ValueId v) {
  const Node* p = g.producer(v);
  if (!p || p->op != Op::dequantize_linear || g.type(p->inputs[0]).dtype != DType::i8) return std::nullopt;
  auto s = scalar_of(g, p->inputs[1]);
  auto z = scalar_of(g, p->inputs[2]);
  if (!s || !z) return std::nullopt;
  return std::make_pair(p->inputs[0], Affine{*s, static_cast<int64_t>(*z)});
}

bool movement_or_max(Op op) { return op == Op::reshape || op == Op::slice || op == Op::transpose || op == Op::max || op == Op::min || op == Op::max_pool; }

// The affine map of the DQ leaves under a tree of movement ops and max/min, when they all agree.
std::optional<Affine> leaf_affine(const Graph& g, ValueId v) {
  if (auto d = dequantized(g, v)) return d->second;
  const Node* p = g.producer(v);
  if (!p || !movement_or_max(p->op)) return std::nullopt;
  std::optional<Affine> a;
  for (ValueId in : p->inputs) {
    auto ai = leaf_affine(g, in);
    if (!ai || (a && (ai->scale != a->scale || ai->zero_point != a->zero_point))) return std::nullopt;
    a = ai;
  }
  return a;
}

// The same tree on the quantized values: exact, since a positive scale keeps order and
// movement ops only move values. kNoValue when a leaf is not DQ(·, a).
ValueId on_ints(RewriteBuilder& b, ValueId v, const Affine& a) {
  const Graph& g = b.graph();
  if (auto d = dequantized(g, v)) return d->second.scale == a.scale && d->second.zero_point == a.zero_point ? d->first : ir::kNoValue;
  const Node* p = g.producer(v);
  if (!p || !movement_or_max(p->op) || a.scale <= 0) return ir::kNoValue;
  const Op op = p->op;
  const ir::Attrs attrs = p->attrs;
  const std::vector<ValueId> ins = p->inputs;  // copies: emitting moves the graph's storage
  std::vector<ValueId> q;
  for (ValueId in : ins) {
    ValueId x = on_ints(b, in, a);
    if (x == ir::kNoValue) return ir::kNoValue;
    q.push_back(x);
  }
  return b.emit_plain(op, q, attrs)[0];
}

struct Folder {
  QdqFoldReport report;

  // Q(y, sy, zy) → the int8 value, or nullopt to keep the node.
  std::optional<std::vector<ValueId>> fold(RewriteBuilder& b, const std::vector<ValueId>& in) {
    const Graph& g = b.graph();
    auto sy = scalar_of(g, in[1]);
    auto zy = scalar_of(g, in[2]);
    if (!sy || !zy || g.type(in[2]).dtype != DType::i8 || !(*sy > 0)) return std::nullopt;
    const Affine out{*sy, static_cast<int64_t>(*zy)};
    // movement ops and max between a DQ and a Q of the same parameters
    if (auto a = leaf_affine(g, in[0]); a && a->scale == out.scale && a->zero_point == out.zero_point) {
      ValueId x = on_ints(b, in[0], out);
      if (x != ir::kNoValue) {
        ++report.movements;
        return std::vector<ValueId>{x};
      }
    }
    if (auto y = layer(b, in[0], out)) {
      ++report.layers;
      return std::vector<ValueId>{*y};
    }
    if (auto y = add_layer(b, in[0], out)) {
      ++report.adds;
      return std::vector<ValueId>{*y};
    }
    if (auto y = softmax_layer(b, in[0], out)) {
      ++report.softmaxes;
      return std::vector<ValueId>{*y};
    }
    return std::nullopt;
  }

  // Q(relu?(DQ(a) + DQ(b))): a residual connection's integer add (passes/integer_ops.h).
  std::optional<ValueId> add_layer(RewriteBuilder& b, ValueId y, const Affine& out) {
    const Graph& g = b.graph();
    bool relu = false;
    const Node* p = g.producer(y);
    if (p && p->op == Op::relu) {
      relu = true;
      p = g.producer(p->inputs[0]);
    }
    if (!p || p->op != Op::add || g.type(p->outputs[0]).dtype != DType::f32) return std::nullopt;
    const Node add = *p;  // a copy: emitting moves the graph's storage
    auto aa = leaf_affine(g, add.inputs[0]), ba = leaf_affine(g, add.inputs[1]);
    if (!aa || !ba || !(aa->scale > 0) || !(ba->scale > 0)) return std::nullopt;
    auto plan = plan_integer_add(*aa, *ba, out);
    if (!plan) return std::nullopt;
    b.set_context(add.name, add.origin);
    ValueId xa = on_ints(b, add.inputs[0], *aa), xb = on_ints(b, add.inputs[1], *ba);
    if (xa == ir::kNoValue || xb == ir::kNoValue) return std::nullopt;
    return emit_integer_add(b, xa, *aa, xb, *ba, out, *plan, relu);
  }

  // Q(softmax(DQ(x)) over the last axis): the integer softmax of passes/integer_ops.h.
  std::optional<ValueId> softmax_layer(RewriteBuilder& b, ValueId y, const Affine& out) {
    const Graph& g = b.graph();
    const Node* p = g.producer(y);
    if (!p || p->op != Op::softmax || g.type(y).dtype != DType::f32) return std::nullopt;
    const Node sm = *p;
    const Shape& shape = g.type(y).shape;
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = sm.attrs.i("axis");
    if (axis < 0) axis += rank;
    if (rank == 0 || axis != rank - 1 || !shape.back().is_static()) return std::nullopt;
    auto xa = leaf_affine(g, sm.inputs[0]);
    if (!xa || !(xa->scale > 0)) return std::nullopt;
    auto plan = plan_integer_softmax(shape.back().value(), out);
    if (!plan) return std::nullopt;  // too coarse a division to be worth folding
    b.set_context(sm.name, sm.origin);
    ValueId x = on_ints(b, sm.inputs[0], *xa);
    if (x == ir::kNoValue) return std::nullopt;
    return emit_integer_softmax(b, x, *xa, axis, out, *plan);
  }

  std::optional<ValueId> layer(RewriteBuilder& b, ValueId y, const Affine& out) {
    const Graph& g = b.graph();
    bool relu = false;
    const Node* p = g.producer(y);
    if (p && p->op == Op::relu) {
      relu = true;
      y = p->inputs[0];
      p = g.producer(y);
    }
    ValueId bias = ir::kNoValue;
    if (p && p->op == Op::add) {
      for (int i = 0; i < 2; ++i) {
        const Node* q = g.producer(p->inputs[static_cast<size_t>(i)]);
        if (q && (q->op == Op::conv || q->op == Op::dot_general)) {
          bias = p->inputs[static_cast<size_t>(1 - i)];
          y = p->inputs[static_cast<size_t>(i)];
        }
      }
      p = g.producer(y);
    }
    if (!p || (p->op != Op::conv && p->op != Op::dot_general) || (g.type(y).dtype != DType::f32 && g.type(y).dtype != DType::f64)) return std::nullopt;
    const bool conv = p->op == Op::conv;
    const Node prod = *p;  // a copy: emitting below moves the graph's storage
    auto xa = leaf_affine(g, prod.inputs[0]);
    auto wd = g.producer(prod.inputs[1]);
    if (!xa || !wd || wd->op != Op::dequantize_linear) return std::nullopt;
    auto wq = const_of(g, wd->inputs[0]);
    auto sw = const_of(g, wd->inputs[1]);
    auto zw = const_of(g, wd->inputs[2]);
    if (!wq || !sw || !zw || wq->dtype() != DType::i8) return std::nullopt;
    for (double z : zw->to_f64())
      if (z != 0) return std::nullopt;  // asymmetric weights: keep the float layer
    // the weights' output-channel axis and the output's
    const std::vector<int64_t> ws = wq->shape();
    int64_t w_axis = 0, y_axis = 1;
    if (!conv) {
      const Intss& contract = prod.attrs.intss("contract");
      const Intss& batch = prod.attrs.intss("batch");
      if (ws.size() != 2 || !batch[0].empty() || contract[1].size() != 1) return std::nullopt;
      w_axis = contract[1][0] == 0 ? 1 : 0;
      y_axis = static_cast<int64_t>(g.type(y).shape.size()) - 1;
    }
    const int64_t channels = ws[static_cast<size_t>(w_axis)];
    std::vector<double> swv = sw->to_f64();
    if (swv.size() != 1 && static_cast<int64_t>(swv.size()) != channels) return std::nullopt;
    auto sw_at = [&](int64_t c) { return swv.size() == 1 ? swv[0] : swv[static_cast<size_t>(c)]; };
    // Σ over each channel's weights (the input zero point's correction)
    std::vector<int64_t> wsum(static_cast<size_t>(channels), 0);
    {
      std::vector<double> w = wq->to_f64();
      int64_t inner = 1;
      for (size_t i = static_cast<size_t>(w_axis) + 1; i < ws.size(); ++i) inner *= ws[i];
      for (size_t i = 0; i < w.size(); ++i) wsum[static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels)] += static_cast<int64_t>(w[i]);
    }
    // the bias in accumulator units: an int32 DQ at sx·sw, or a float constant rounded there
    std::vector<int64_t> acc_bias(static_cast<size_t>(channels), 0);
    if (bias != ir::kNoValue) {
      std::vector<double> bf;
      const Node* bd = g.producer(bias);
      while (bd && bd->op == Op::reshape) bd = g.producer(bd->inputs[0]);
      if (bd && bd->op == Op::dequantize_linear) {
        auto bq = const_of(g, bd->inputs[0]);
        auto sb = const_of(g, bd->inputs[1]);
        auto zb = const_of(g, bd->inputs[2]);
        if (!bq || !sb || !zb) return std::nullopt;
        std::vector<double> q = bq->to_f64(), s = sb->to_f64(), z = zb->to_f64();
        if (static_cast<int64_t>(q.size()) != channels) return std::nullopt;
        for (int64_t c = 0; c < channels; ++c) {
          const double sc = s.size() == 1 ? s[0] : s[static_cast<size_t>(c)], zc = z.size() == 1 ? z[0] : z[static_cast<size_t>(c)];
          bf.push_back(sc * (q[static_cast<size_t>(c)] - zc));
        }
      } else if (auto bc = const_of(g, bias)) {
        bf = bc->to_f64();
      } else {
        return std::nullopt;
      }
      if (static_cast<int64_t>(bf.size()) != channels) return std::nullopt;
      for (int64_t c = 0; c < channels; ++c) acc_bias[static_cast<size_t>(c)] = std::llround(bf[static_cast<size_t>(c)] / (xa->scale * sw_at(c)));
    }
    std::vector<int32_t> bias32, mult, shift;
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t v = acc_bias[static_cast<size_t>(c)] - xa->zero_point * wsum[static_cast<size_t>(c)];
      if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
      bias32.push_back(static_cast<int32_t>(v));
      auto fp = fixed_point(xa->scale * sw_at(c) / out.scale);
      if (!fp) return std::nullopt;
      mult.push_back(fp->first);
      shift.push_back(fp->second);
    }
    b.set_context(prod.name, prod.origin);  // the integer layer is named after the float one
    ValueId xq = on_ints(b, prod.inputs[0], *xa);
    if (xq == ir::kNoValue) return std::nullopt;
    ValueId w = b.constant(*wq);
    ValueId acc;
    std::vector<int64_t> per_channel_shape;
    if (conv) {
      const Intss& padding = prod.attrs.intss("padding");
      bool padded = false;
      Ints lo(2, 0), hi(2, 0);
      for (const Ints& p2 : padding) {
        lo.push_back(p2[0]);
        hi.push_back(p2[1]);
        padded = padded || p2[0] || p2[1];
      }
      if (padded) xq = b.emit_plain(Op::pad, {xq}, ir::Attrs{{"lo", lo}, {"hi", hi}, {"value", static_cast<double>(xa->zero_point)}})[0];
      ir::Attrs a = prod.attrs;
      a.set("padding", Intss(padding.size(), Ints{0, 0}));
      a.set("out", DType::i32);
      acc = b.emit_plain(Op::conv, {xq, w}, a)[0];
      per_channel_shape.assign(g.type(acc).shape.size(), 1);
    } else {
      ir::Attrs a = prod.attrs;
      a.set("out", DType::i32);
      acc = b.emit_plain(Op::dot_general, {xq, w}, a)[0];
      per_channel_shape.assign(g.type(acc).shape.size(), 1);
    }
    per_channel_shape[static_cast<size_t>(y_axis)] = channels;
    acc = b.emit_plain(Op::add, {acc, b.constant(Tensor::from_vector(bias32, per_channel_shape))})[0];
    ir::Attrs ra{{"zero_point", out.zero_point}, {"lo", relu ? std::max<int64_t>(out.zero_point, -128) : int64_t{-128}}, {"hi", int64_t{127}}, {"out", DType::i8}};
    return b.emit_plain(Op::requantize, {acc, b.constant(Tensor::from_vector(mult, per_channel_shape)), b.constant(Tensor::from_vector(shift, per_channel_shape))},
                        ra)[0];
  }
};

}  // namespace

ir::Graph fold_qdq(const ir::Graph& g, QdqFoldReport* report) {
  auto folder = std::make_shared<Folder>();
  Rule rule{"qdq-layer", [folder](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const ir::Attrs&) -> std::optional<std::vector<ValueId>> {
              if (op != Op::quantize_linear) return std::nullopt;
              return folder->fold(b, in);
            }};
  ir::Graph out = eliminate_dead_code(rewrite(g, {rule}, "fold-qdq"));
  if (report) *report = folder->report;
  return out;
}

}  // namespace rlx::passes
