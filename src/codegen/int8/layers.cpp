#include "codegen/int8/layers.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include "ir/verify.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::codegen::int8 {

namespace {

using ir::Graph;
using ir::Node;
using ir::Op;
using ir::Type;
using ir::ValueId;
using ir::Ints;
using ir::Intss;

// A node the kernels cannot take: the message names it and says what would be needed.
struct Refusal {
  std::string what;
};

int64_t dim(const Graph& g, ValueId v, size_t i) { return g.type(v).shape.at(i).value(); }
int64_t numel(const Graph& g, ValueId v) { return shape_numel(g.type(v).shape).value(); }

// The integer values of a constant (any integer dtype), or nullopt when v is not a constant.
std::optional<std::vector<int64_t>> int_constant(const Graph& g, ValueId v) {
  const void* p = passes::constant_bytes(g, v);
  if (!p) return std::nullopt;
  const DType t = g.type(v).dtype;
  const int64_t n = numel(g, v);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto* b = static_cast<const uint8_t*>(p);
    switch (t) {
      case DType::i8: out[i] = reinterpret_cast<const int8_t*>(b)[i]; break;
      case DType::u8: out[i] = b[i]; break;
      case DType::i16: out[i] = reinterpret_cast<const int16_t*>(b)[i]; break;
      case DType::i32: out[i] = reinterpret_cast<const int32_t*>(b)[i]; break;
      case DType::i64: out[i] = reinterpret_cast<const int64_t*>(b)[i]; break;
      default: return std::nullopt;
    }
  }
  return out;
}

std::optional<float> f32_scalar(const Graph& g, ValueId v) {
  const void* p = passes::constant_bytes(g, v);
  if (!p || g.type(v).dtype != DType::f32 || numel(g, v) != 1) return std::nullopt;
  float f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

// A constant broadcast along one channel axis of a value of shape `of`: scalar, or 1 everywhere
// but `axis`, where it has the channel count. Returns one value per channel.
std::optional<std::vector<int64_t>> per_channel(const Graph& g, ValueId c, const Shape& of, size_t axis) {
  auto vals = int_constant(g, c);
  if (!vals) return std::nullopt;
  const int64_t channels = of.at(axis).value();
  if (vals->size() == 1) return std::vector<int64_t>(static_cast<size_t>(channels), (*vals)[0]);
  const Shape& s = g.type(c).shape;
  if (static_cast<int64_t>(vals->size()) != channels) return std::nullopt;
  // right-aligned broadcast: the constant's one non-1 axis must line up with `axis`
  const size_t lead = of.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i].value() != 1 && i + lead != axis) return std::nullopt;
  return vals;
}

class Scheduler {
 public:
  Scheduler(const Graph& g, std::string generator) : g_(g), generator_(std::move(generator)), uses_(g.use_counts()) {
    for (int i = 0; i < g.num_nodes(); ++i)
      for (ValueId v : g.node(i).inputs) readers_[v].push_back(i);
  }

  std::vector<Step> run() {
    std::vector<std::string> problems;
    std::vector<bool> taken(static_cast<size_t>(g_.num_nodes()), false);
    // Composite layers (an integer add, an integer softmax) are matched from the requantize they
    // end with and called there, where every operand has been written by an earlier step.
    std::map<int, Step> composite;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      if (g_.node(i).op != Op::requantize) continue;
      std::vector<int> used;
      std::optional<Step> s = add_layer(i, used);
      if (!s) {
        used.clear();
        s = softmax_layer(i, used);
      }
      if (!s) continue;
      for (int u : used)
        if (u != i) taken[static_cast<size_t>(u)] = true;
      composite.emplace(i, std::move(*s));
    }
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      if (n.op == Op::constant || taken[static_cast<size_t>(i)]) continue;
      if (auto c = composite.find(i); c != composite.end()) {
        steps_.push_back(std::move(c->second));
        continue;
      }
      try {
        std::vector<int> used;
        Step s = step_at(i, used);
        for (int u : used) taken[static_cast<size_t>(u)] = true;
        steps_.push_back(std::move(s));
      } catch (const Refusal& r) {
        problems.push_back(cat(ir::describe_node(g_, i), ": ", r.what));
      }
    }
    if (!problems.empty())
      throw Error(ErrorKind::unsupported, cat("the ", generator_, " generator cannot take ", problems.size(), " node(s) of this int8 graph:\n  ", join(problems, "\n  "),
                                              "\nIt runs integer layers (dot_general or conv of i8 by constant i8 weights into i32, an optional constant "
                                              "bias add, then requantize to i8), integer adds and softmaxes in the form passes/fold_qdq writes them, "
                                              "quantize_linear/dequantize_linear with one scale, max_pool of i8 and reshape."));
    return std::move(steps_);
  }

 private:
  // The only node reading v (and v not a graph output), or -1.
  int sole_reader(ValueId v) const {
    auto it = readers_.find(v);
    if (it == readers_.end() || it->second.size() != 1 || uses_[static_cast<size_t>(v)] != 1) return -1;
    return it->second[0];
  }

  // The node producing v, or -1 for a graph input.
  int producer(ValueId v) const { return g_.value(v).node; }
  // The node producing v when it is an `op` node, or -1.
  int producer(ValueId v, Op op) const {
    const int p = producer(v);
    return p >= 0 && g_.node(p).op == op ? p : -1;
  }
  // The single value of an integer constant, or nullopt.
  std::optional<int64_t> int_scalar(ValueId v) const {
    auto c = int_constant(g_, v);
    if (!c || c->size() != 1) return std::nullopt;
    return (*c)[0];
  }
  bool is_output(ValueId v) const {
    for (ValueId o : g_.outputs())
      if (o == v) return true;
    return false;
  }
  // The values the nodes of a composite pass among themselves are read by no one else: the
  // kernel keeps them in registers.
  bool self_contained(const std::vector<int>& nodes, int root) const {
    std::set<int> in(nodes.begin(), nodes.end());
    for (int i : nodes) {
      if (i == root) continue;
      for (ValueId o : g_.node(i).outputs) {
        if (is_output(o)) return false;
        auto r = readers_.find(o);
        if (r != readers_.end())
          for (int reader : r->second)
            if (!in.count(reader)) return false;
      }
    }
    return true;
  }
  // requantize(v, M, s) with one multiplier and shift into i32's whole range: (node, M, s).
  struct Rescale {
    int node;
    int32_t mult, shift;
  };
  std::optional<Rescale> rescale_of(ValueId v) const {
    const int r = producer(v, Op::requantize);
    if (r < 0) return std::nullopt;
    const Node& n = g_.node(r);
    auto m = int_scalar(n.inputs[1]), sh = int_scalar(n.inputs[2]);
    if (!m || !sh || n.attrs.dtype("out") != DType::i32 || n.attrs.i("zero_point") != 0 || n.attrs.i("lo") != INT32_MIN || n.attrs.i("hi") != INT32_MAX) return std::nullopt;
    if (*m < INT32_MIN || *m > INT32_MAX || *sh < 0 || *sh > 62) return std::nullopt;
    return Rescale{r, static_cast<int32_t>(*m), static_cast<int32_t>(*sh)};
  }

  // One operand of an integer add: requantize(cast(q){i32} [+ offset], M, s) of an i8 q.
  struct AddSide {
    ValueId q;
    int32_t offset, mult, shift;
  };
  std::optional<AddSide> add_side(ValueId v, std::vector<int>& used) const {
    auto rs = rescale_of(v);
    if (!rs) return std::nullopt;
    ValueId x = g_.node(rs->node).inputs[0];
    int64_t offset = 0;
    if (int a = producer(x, Op::add); a >= 0) {
      const Node& n = g_.node(a);
      auto o = int_scalar(n.inputs[1]);
      if (!o || *o < -255 || *o > 255) return std::nullopt;
      offset = *o;
      used.push_back(a);
      x = n.inputs[0];
    }
    const int c = producer(x, Op::cast);
    if (c < 0 || g_.type(g_.node(c).inputs[0]).dtype != DType::i8 || g_.type(x).dtype != DType::i32) return std::nullopt;
    // |q + offset| ≤ 383: the rescaled operand stays below 2^30, so the kernel's i32 sum is exact
    if (std::ldexp(383.0 * std::fabs(static_cast<double>(rs->mult)), -rs->shift) + 1 >= std::ldexp(1.0, 30)) return std::nullopt;
    used.push_back(c);
    used.push_back(rs->node);
    return AddSide{g_.node(c).inputs[0], static_cast<int32_t>(offset), rs->mult, rs->shift};
  }

  // requantize(rescale(a) + rescale(b), M, s){i8}: an element-wise int8 add of equal shapes.
  std::optional<Step> add_layer(int root, std::vector<int>& used) const {
    const Node& rq = g_.node(root);
    if (rq.attrs.dtype("out") != DType::i8) return std::nullopt;
    const int a = producer(rq.inputs[0], Op::add);
    auto m = int_scalar(rq.inputs[1]), sh = int_scalar(rq.inputs[2]);
    if (a < 0 || !m || !sh || *m < INT32_MIN || *m > INT32_MAX || *sh < 0 || *sh > 62) return std::nullopt;
    const Node& add = g_.node(a);
    auto l = add_side(add.inputs[0], used), r = add_side(add.inputs[1], used);
    if (!l || !r) return std::nullopt;
    const Type& t = g_.type(rq.outputs[0]);
    if (g_.type(l->q) != t || g_.type(r->q) != t) return std::nullopt;  // no broadcasting
    used.push_back(a);
    used.push_back(root);
    if (!self_contained(used, root)) return std::nullopt;
    Step s;
    s.kind = Step::Kind::add;
    s.node = root;
    s.label = label(add);
    s.in = l->q;
    s.in2 = r->q;
    s.out = rq.outputs[0];
    s.count = numel(g_, s.out);
    s.a_offset = l->offset;
    s.a_mult = l->mult;
    s.a_shift = l->shift;
    s.b_offset = r->offset;
    s.b_mult = r->mult;
    s.b_shift = r->shift;
    s.mult = {static_cast<int32_t>(*m)};
    s.shift = {static_cast<int8_t>(*sh)};
    s.out_zero_point = static_cast<int32_t>(rq.attrs.i("zero_point"));
    s.lo = static_cast<int32_t>(rq.attrs.i("lo"));
    s.hi = static_cast<int32_t>(rq.attrs.i("hi"));
    return s;
  }

  // requantize(e, C / reduce_sum(e), S){i8} with e = gather(T, cast(reduce_max(x)) − cast(x)):
  // the integer softmax of the rows of an i8 x along its last axis.
  std::optional<Step> softmax_layer(int root, std::vector<int>& used) const {
    const Node& rq = g_.node(root);
    if (rq.attrs.dtype("out") != DType::i8) return std::nullopt;
    auto S = int_scalar(rq.inputs[2]);
    const ValueId e = rq.inputs[0];
    const int gather = producer(e, Op::gather), div = producer(rq.inputs[1], Op::div);
    if (!S || *S < 0 || *S > 62 || gather < 0 || div < 0) return std::nullopt;
    auto last_axis = [&](int r, const char* kind) {
      if (r < 0) return false;
      const Node& n = g_.node(r);
      const size_t rank = g_.type(n.inputs[0]).shape.size();
      return n.attrs.s("kind") == kind && n.attrs.ints("axes") == Ints{static_cast<int64_t>(rank) - 1} && n.attrs.b("keepdims");
    };
    const Node& dv = g_.node(div);
    auto C = int_scalar(dv.inputs[0]);
    const int sum = producer(dv.inputs[1], Op::reduce);
    if (!C || *C <= 0 || *C > INT32_MAX || !last_axis(sum, "sum") || g_.node(sum).inputs[0] != e) return std::nullopt;
    const Node& gn = g_.node(gather);
    auto table = int_constant(g_, gn.inputs[0]);
    if (!table || table->size() != 256 || gn.attrs.i("axis") != 0 || g_.type(e).dtype != DType::i32) return std::nullopt;
    for (int64_t v : *table)
      if (v < 0 || v > (int64_t{1} << 24)) return std::nullopt;
    const int sub = producer(gn.inputs[1], Op::sub);
    if (sub < 0) return std::nullopt;
    const Node& sn = g_.node(sub);
    const int cm = producer(sn.inputs[0], Op::cast), cx = producer(sn.inputs[1], Op::cast);
    if (cm < 0 || cx < 0) return std::nullopt;
    const ValueId x = g_.node(cx).inputs[0];
    const int mx = producer(g_.node(cm).inputs[0], Op::reduce);
    if (!last_axis(mx, "max") || g_.node(mx).inputs[0] != x || g_.type(x).dtype != DType::i8 || g_.type(x).shape != g_.type(e).shape) return std::nullopt;
    used = {mx, cm, cx, sub, gather, sum, div, root};
    if (!self_contained(used, root)) return std::nullopt;
    Step s;
    s.kind = Step::Kind::softmax;
    s.node = root;
    s.label = label(rq);
    s.in = x;
    s.out = rq.outputs[0];
    s.n = g_.type(x).shape.back().value();
    s.rows = numel(g_, x) / std::max<int64_t>(s.n, 1);
    // the row sum stays exact in i32
    int64_t t_max = 0;
    for (int64_t v : *table) t_max = std::max(t_max, v);
    if (static_cast<double>(t_max) * static_cast<double>(s.n) > 2147483647.0) return std::nullopt;
    s.table.assign(table->begin(), table->end());
    s.numerator = static_cast<int32_t>(*C);
    s.shift = {static_cast<int8_t>(*S)};
    s.out_zero_point = static_cast<int32_t>(rq.attrs.i("zero_point"));
    s.lo = static_cast<int32_t>(rq.attrs.i("lo"));
    s.hi = static_cast<int32_t>(rq.attrs.i("hi"));
    return s;
  }

  std::string label(const Node& n) const {
    std::string s = n.name.empty() ? std::string(ir::op_keyword(n.op)) : n.name;
    if (!n.origin.empty()) s += cat(" (", n.origin, ")");
    return s;
  }

  Step step_at(int i, std::vector<int>& used) {
    const Node& n = g_.node(i);
    used.push_back(i);
    Step s;
    s.node = i;
    s.label = label(n);
    switch (n.op) {
      case Op::quantize_linear:
      case Op::dequantize_linear: {
        const bool q = n.op == Op::quantize_linear;
        s.kind = q ? Step::Kind::quantize : Step::Kind::dequantize;
        s.in = n.inputs[0];
        s.out = n.outputs[0];
        const DType want_in = q ? DType::f32 : DType::i8, want_out = q ? DType::i8 : DType::f32;
        if (g_.type(s.in).dtype != want_in || g_.type(s.out).dtype != want_out)
          throw Refusal{cat("needs ", dtype_name(want_in), " → ", dtype_name(want_out), ", got ", dtype_name(g_.type(s.in).dtype), " → ", dtype_name(g_.type(s.out).dtype))};
        auto scale = f32_scalar(g_, n.inputs[1]);
        auto zp = int_constant(g_, n.inputs[2]);
        if (!scale || !zp || zp->size() != 1) throw Refusal{"needs one constant scale and zero point (per-tensor quantization)"};
        s.scale = *scale;
        s.zero_point = static_cast<int32_t>((*zp)[0]);
        s.count = numel(g_, s.in);
        return s;
      }
      case Op::reshape:
        s.kind = Step::Kind::view;
        s.in = n.inputs[0];
        s.out = n.outputs[0];
        return s;
      case Op::max_pool: return max_pool(n, s);
      case Op::dot_general:
      case Op::conv:
      case Op::pad: return integer_layer(i, s, used);
      default: throw Refusal{cat(ir::op_keyword(n.op), " has no int8 step")};
    }
  }

  Step max_pool(const Node& n, Step& s) {
    s.kind = Step::Kind::max_pool;
    s.in = n.inputs[0];
    s.out = n.outputs[0];
    if (g_.type(s.in).dtype != DType::i8 || g_.type(s.in).shape.size() != 4) throw Refusal{"needs an i8 NCHW input"};
    const Ints& k = n.attrs.ints("kernel");
    Ints st = n.attrs.has("strides") ? n.attrs.ints("strides") : Ints{1, 1};
    Ints pads = n.attrs.has("pads") ? n.attrs.ints("pads") : Ints{0, 0, 0, 0};
    s.batch = dim(g_, s.in, 0) * dim(g_, s.in, 1);  // channels of all images: one plane each
    s.h = dim(g_, s.in, 2);
    s.w = dim(g_, s.in, 3);
    s.oh = dim(g_, s.out, 2);
    s.ow = dim(g_, s.out, 3);
    s.kh = k[0];
    s.kw = k[1];
    s.stride_h = st[0];
    s.stride_w = st[1];
    s.pad_top = pads[0];
    s.pad_left = pads[1];
    return s;
  }

  // [pad →] dot_general|conv → [add bias →] requantize
  Step integer_layer(int i, Step& s, std::vector<int>& used) {
    const Node* n = &g_.node(i);
    Ints pad_lo, pad_hi;
    if (n->op == Op::pad) {
      const int r = sole_reader(n->outputs[0]);
      if (r < 0 || g_.node(r).op != Op::conv || g_.node(r).inputs[0] != n->outputs[0]) throw Refusal{"a pad is taken only as the padding of the conv that reads it"};
      bool interior = false;
      if (n->attrs.has("interior"))
        for (int64_t v : n->attrs.ints("interior")) interior = interior || v != 0;
      if (interior || (n->attrs.has("mode") && n->attrs.s("mode") != "constant")) throw Refusal{"only constant padding"};
      pad_lo = n->attrs.ints("lo");
      pad_hi = n->attrs.ints("hi");
      if (pad_lo.size() != 4 || pad_lo[0] || pad_lo[1] || pad_hi[0] || pad_hi[1]) throw Refusal{"only spatial padding of an NCHW input"};
      const double v = n->attrs.f("value");
      if (v != std::floor(v) || v < -128 || v > 127) throw Refusal{cat("the padding value ", v, " is not an i8")};
      s.pad_value = static_cast<int8_t>(v);
      s.in = n->inputs[0];
      i = r;
      n = &g_.node(i);
      used.push_back(i);
    } else {
      s.in = n->inputs[0];
    }
    const bool conv = n->op == Op::conv;
    if (g_.type(n->inputs[0]).dtype != DType::i8 || g_.type(n->inputs[1]).dtype != DType::i8 || g_.type(n->outputs[0]).dtype != DType::i32)
      throw Refusal{"needs i8 × i8 → i32"};
    auto w = int_constant(g_, n->inputs[1]);
    if (!w) throw Refusal{"needs constant weights"};
    ValueId acc = n->outputs[0];
    const Shape& acc_shape = g_.type(acc).shape;
    const size_t channel_axis = 1;  // [rows, n] and [batch, cout, oh, ow]
    if (conv) {
      const Shape& x = g_.type(n->inputs[0]).shape;
      if (x.size() != 4) throw Refusal{"only 2-D convolutions (NCHW)"};
      s.kind = Step::Kind::conv;
      s.batch = x[0].value();
      s.cin = dim(g_, s.in, 1);
      s.h = dim(g_, s.in, 2);
      s.w = dim(g_, s.in, 3);
      s.cout = dim(g_, n->inputs[1], 0);
      s.kh = dim(g_, n->inputs[1], 2);
      s.kw = dim(g_, n->inputs[1], 3);
      s.oh = acc_shape[2].value();
      s.ow = acc_shape[3].value();
      const Ints& st = n->attrs.ints("strides");
      const Ints& dil = n->attrs.ints("dilation");
      const Intss& padding = n->attrs.intss("padding");
      s.stride_h = st[0];
      s.stride_w = st[1];
      s.dil_h = dil[0];
      s.dil_w = dil[1];
      s.groups = n->attrs.has("groups") ? n->attrs.i("groups") : 1;
      const bool conv_pads = padding[0][0] || padding[0][1] || padding[1][0] || padding[1][1];
      if (conv_pads && !pad_lo.empty()) throw Refusal{"a pad before a conv that pads again"};
      s.pad_top = conv_pads ? padding[0][0] : pad_lo.empty() ? 0 : pad_lo[2];
      s.pad_left = conv_pads ? padding[1][0] : pad_lo.empty() ? 0 : pad_lo[3];
      s.k = (s.cin / s.groups) * s.kh * s.kw;
      // The kernels' scratch: one receptive field (cin/groups·kh·kw bytes), or for a depthwise
      // convolution one channel's plane with its padding (the extent the windows cover).
      const int64_t eh = (s.oh - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1, ew = (s.ow - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
      s.scratch_bytes = s.depthwise() ? eh * ew : s.k;
      s.weights.assign(w->begin(), w->end());  // already [cout, cin/groups, kh, kw]
    } else {
      const Shape& x = g_.type(n->inputs[0]).shape;
      const Shape& ws = g_.type(n->inputs[1]).shape;
      const Intss& batch = n->attrs.intss("batch");
      const Intss& contract = n->attrs.intss("contract");
      if (x.size() != 2 || ws.size() != 2 || !batch[0].empty() || contract[0] != Ints{1}) throw Refusal{"only [rows, k] · weights of rank 2"};
      s.kind = Step::Kind::fc;
      s.rows = x[0].value();
      s.k = x[1].value();
      if (contract[1] == Ints{1}) {  // weights [n, k]: the kernels' layout
        s.n = ws[0].value();
        s.weights.assign(w->begin(), w->end());
      } else {  // weights [k, n]: stored transposed
        s.n = ws[1].value();
        s.weights.resize(static_cast<size_t>(s.n * s.k));
        for (int64_t r = 0; r < s.k; ++r)
          for (int64_t c = 0; c < s.n; ++c) s.weights[static_cast<size_t>(c * s.k + r)] = static_cast<int8_t>((*w)[static_cast<size_t>(r * s.n + c)]);
      }
    }
    const int64_t channels = conv ? s.cout : s.n;
    // optional bias
    int r = sole_reader(acc);
    if (r >= 0 && g_.node(r).op == Op::add) {
      const Node& add = g_.node(r);
      ValueId other = add.inputs[0] == acc ? add.inputs[1] : add.inputs[0];
      auto b = per_channel(g_, other, acc_shape, channel_axis);
      if (b && g_.type(add.outputs[0]) == g_.type(acc)) {
        s.has_bias = true;
        s.bias.assign(b->begin(), b->end());
        for (auto& v : *b)
          if (v < INT32_MIN || v > INT32_MAX) throw Refusal{"the bias does not fit i32"};
        used.push_back(r);
        acc = add.outputs[0];
        r = sole_reader(acc);
      }
    }
    if (r < 0 || g_.node(r).op != Op::requantize) throw Refusal{"its i32 result must go to one requantize (optionally through a constant bias add)"};
    const Node& rq = g_.node(r);
    if (rq.inputs[0] != acc) throw Refusal{"the accumulator must be requantize's first operand"};
    auto m = per_channel(g_, rq.inputs[1], acc_shape, channel_axis);
    auto sh = per_channel(g_, rq.inputs[2], acc_shape, channel_axis);
    if (!m || !sh) throw Refusal{"requantize needs constant multipliers and shifts, one per output channel or one for all"};
    if (rq.attrs.dtype("out") != DType::i8) throw Refusal{"requantize must produce i8"};
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t mv = (*m)[static_cast<size_t>(c)], sv = (*sh)[static_cast<size_t>(c)];
      if (mv < INT32_MIN || mv > INT32_MAX) throw Refusal{cat("multiplier ", mv, " of channel ", c, " does not fit i32")};
      if (sv < 0 || sv > 62) throw Refusal{cat("shift ", sv, " of channel ", c, " is outside [0, 62]")};
      s.mult.push_back(static_cast<int32_t>(mv));
      s.shift.push_back(static_cast<int8_t>(sv));
    }
    s.out_zero_point = static_cast<int32_t>(rq.attrs.i("zero_point"));
    s.lo = static_cast<int32_t>(rq.attrs.i("lo"));
    s.hi = static_cast<int32_t>(rq.attrs.i("hi"));
    used.push_back(r);
    s.out = rq.outputs[0];
    s.node = r;
    s.label = label(rq);
    // The accumulators must stay exact in i32: |Σ x·w| + |bias| ≤ k·128·128 + max|bias|.
    const double k_terms = static_cast<double>(s.k);
    int64_t max_bias = 0;
    for (int32_t b : s.bias) max_bias = std::max<int64_t>(max_bias, std::llabs(b));
    if (k_terms * 128.0 * 128.0 + static_cast<double>(max_bias) > 2147483647.0) throw Refusal{"its accumulator could overflow i32"};
    return s;
  }

  const Graph& g_;
  std::string generator_;
  std::vector<int> uses_;
  std::map<ValueId, std::vector<int>> readers_;
  std::vector<Step> steps_;
};

}  // namespace

std::vector<Step> schedule(const ir::Graph& lir, const std::string& generator) { return Scheduler(lir, generator).run(); }

}  // namespace rlx::codegen::int8
