#include "quant/ptq.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ops/builder.h"
#include "passes/integer_ops.h"
#include "quant/needed.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "util/scalar.h"
#include "util/strings.h"

namespace rlx::quant {

using ir::Op;
using ir::ValueId;

std::pair<int64_t, int64_t> fixed_point_multiplier(double real) {
  if (!(real >= 0) || !std::isfinite(real)) throw Error(ErrorKind::invalid_argument, cat("a requantization scale of ", real, " is not a finite non-negative number"));
  if (real == 0) return {0, 0};
  int e = 0;
  double f = std::frexp(real, &e);  // real = f · 2^e, f in [0.5, 1)
  auto m = static_cast<int64_t>(std::nearbyint(std::ldexp(f, 31)));
  int64_t shift = 31 - e;
  if (m == (int64_t{1} << 31)) m /= 2, shift -= 1;
  if (shift < 0) throw Error(ErrorKind::invalid_argument, cat("a requantization scale of ", real, " is too large for a fixed-point multiplier (≥ 2^31)"));
  if (shift > 62) {  // below 2^−31: the product rounds to 0 anyway; keep it exactly representable
    m = static_cast<int64_t>(std::nearbyint(std::ldexp(m, static_cast<int>(62 - shift))));
    shift = 62;
  }
  return {m, shift};
}

namespace {

// A quantized value in the new graph with its grid.
// Any real tensor's elements as doubles, in row-major order.
std::vector<double> values_f64(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<double> v(static_cast<size_t>(c.numel()));
  for (int64_t i = 0; i < c.numel(); ++i) v[static_cast<size_t>(i)] = load_f64(c.data(), c.dtype(), i);
  return v;
}

struct QValue {
  ValueId v = ir::kNoValue;
  QParams q;
};

const Tensor& weight_of(const std::map<ValueId, Tensor>& weights, const ir::Graph& g, ValueId v, const ir::Node& n, const char* role) {
  if (auto it = weights.find(v); it != weights.end()) return it->second;
  if (const ir::Node* p = g.producer(v); p && p->op == Op::constant) return p->attrs.tensor("value");
  throw Error(ErrorKind::invalid_argument, cat("PTQ: the ", role, " of ", ir::op_name(n.op), " '", n.name, "' is computed, not a constant or bound weight"));
}

// Per-output-channel symmetric int8: scale_c = max|w_c| / 127, codes in [−127, 127].
struct ChannelQuant {
  Tensor codes;                // i8, the weight's shape
  std::vector<double> scales;  // per output channel
  std::vector<int64_t> sums;   // Σ codes per output channel (the input zero point's correction)
};

ChannelQuant quantize_channels(const Tensor& w) {
  std::vector<double> f = values_f64(w);
  int64_t out = w.shape()[0], per = out ? w.numel() / out : 0;
  const double* p = f.data();
  ChannelQuant c;
  std::vector<double> codes(f.size());
  for (int64_t o = 0; o < out; ++o) {
    double amax = 0;
    for (int64_t k = 0; k < per; ++k) amax = std::max(amax, std::fabs(p[o * per + k]));
    double s = amax > 0 ? amax / 127.0 : 1.0;
    int64_t sum = 0;
    for (int64_t k = 0; k < per; ++k) {
      double q = std::clamp(std::nearbyint(p[o * per + k] / s), -127.0, 127.0);
      codes[static_cast<size_t>(o * per + k)] = q;
      sum += static_cast<int64_t>(q);
    }
    c.scales.push_back(s);
    c.sums.push_back(sum);
  }
  c.codes = Tensor::from_f64(DType::i8, w.shape(), codes);
  return c;
}

}  // namespace

namespace {

// A ReLU as the only use of node i's result becomes the lower end of its requantize's clamp:
// recorded in the plan; returns the value whose grid is chosen (the ReLU's output, or i's).
ValueId fold_relu(const ir::Graph& g, const std::vector<int>& uses, int i, PtqPlan& p) {
  ValueId out = g.node(i).outputs[0];
  for (int j = i + 1; j < g.num_nodes() && uses[static_cast<size_t>(out)] == 1; ++j)
    if (g.node(j).op == Op::relu && g.node(j).inputs[0] == out) {
      p.folded_relu[i] = j;
      return g.node(j).outputs[0];
    }
  return out;
}

}  // namespace

PtqPlan plan_ptq(const ir::Graph& g, ValueId input, ValueId output) {
  std::set<ValueId> needed = values_needed_by(g, output);
  if (!needed.count(input)) throw Error(ErrorKind::invalid_argument, "PTQ: the output does not depend on the input");
  std::vector<int> uses = g.use_counts();
  PtqPlan p;
  p.observed.push_back(input);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.node(i);
    if (!needed.count(n.outputs[0])) continue;
    if (n.op != Op::linear && n.op != Op::conv2d) continue;
    p.layers.push_back(i);
    p.observed.push_back(fold_relu(g, uses, i, p));
  }
  if (p.layers.empty()) throw Error(ErrorKind::invalid_argument, "PTQ: the graph has no linear or conv2d layer to quantize");
  // then each add's output (after a ReLU that is its only use) and each softmax's: after the
  // layers, so a list of grids for the input and the layers (activation QAT's) keeps its order.
  // Only those on the data path (every operand computed from the input): an add of parameters
  // (a grid's scale, say) is not.
  std::set<ValueId> on_path = {input};
  for (int i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.node(i);
    bool reached = false;
    for (ValueId v : n.inputs) reached = reached || on_path.count(v);
    if (reached) on_path.insert(n.outputs.begin(), n.outputs.end());
  }
  for (int i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.node(i);
    if (!needed.count(n.outputs[0]) || (n.op != Op::add && n.op != Op::softmax)) continue;
    bool all_on_path = true;
    for (ValueId v : n.inputs) all_on_path = all_on_path && on_path.count(v);
    if (!all_on_path) continue;
    p.observed.push_back(n.op == Op::add ? fold_relu(g, uses, i, p) : n.outputs[0]);
  }
  return p;
}

namespace {

class Quantizer {
 public:
  Quantizer(const ir::Graph& g, const std::map<ValueId, Tensor>& weights, ValueId input, ValueId output, const PtqOptions& o)
      : g_(g), weights_(weights), input_(input), output_(output), opt_(o), b_(result_.graph) {}

  PtqResult run(const std::vector<Tensor>& calibration) {
    if (calibration.empty()) throw Error(ErrorKind::invalid_argument, "PTQ needs at least one calibration batch");
    plan();
    if (opt_.grids.size() > observed_.size())
      throw Error(ErrorKind::invalid_argument, cat("PTQ: ", opt_.grids.size(), " grids given for ", observed_.size(), " observed values (the input and each layer's output)"));
    calibrate(calibration);
    for (size_t k = 0; k < opt_.grids.size(); ++k)
      if (opt_.grids[k]) qparams_[observed_[k]] = *opt_.grids[k];
    build();
    return std::move(result_);
  }

 private:
  const ir::Graph& g_;
  const std::map<ValueId, Tensor>& weights_;
  ValueId input_, output_;
  PtqOptions opt_;
  PtqResult result_;
  ops::Builder b_;
  std::set<ValueId> needed_;          // values the output depends on
  std::vector<int> layer_nodes_;      // linear/conv nodes, in order
  std::map<int, int> folded_relu_;    // layer node → the relu node folded into it
  std::vector<ValueId> observed_;     // float values whose ranges are calibrated
  std::map<ValueId, QParams> qparams_;

  void plan() {
    needed_ = values_needed_by(g_, output_);
    PtqPlan p = plan_ptq(g_, input_, output_);
    layer_nodes_ = std::move(p.layers);
    folded_relu_ = std::move(p.folded_relu);
    observed_ = std::move(p.observed);
  }

  Tensor zeros_for(ValueId v, int64_t batch) const {
    std::vector<int64_t> shape;
    for (const Dim& d : g_.type(v).shape) shape.push_back(d.try_value().value_or(batch));
    return Tensor::zeros(g_.type(v).dtype, shape);
  }

  void calibrate(const std::vector<Tensor>& batches) {
    ir::Graph probe = g_;
    probe.set_outputs(observed_);
    Session session(opt_.device);
    CompiledModel m = session.compile(Graph(std::make_shared<ir::Graph>(probe)));
    std::vector<Observer> obs(observed_.size(), Observer(opt_.observer, opt_.percentile));
    // the model's output keeps its whole range: clipping a classifier's top logit changes its answer
    for (size_t k = 0; k < observed_.size(); ++k)
      if (observed_[k] == output_) obs[k] = Observer(ObserverKind::minmax);
    bool second = obs[0].needs_second_pass();
    for (int pass = 0; pass < (second ? 2 : 1); ++pass) {
      for (const Tensor& batch : batches) {
        std::vector<Tensor> in;
        for (ValueId v : g_.inputs()) {
          if (v == input_) in.push_back(batch);
          else if (auto it = weights_.find(v); it != weights_.end()) in.push_back(it->second);
          else in.push_back(zeros_for(v, batch.shape().empty() ? 1 : batch.shape()[0]));
        }
        std::vector<Tensor> out = m.run(in);
        for (size_t k = 0; k < obs.size(); ++k) {
          std::vector<double> d = values_f64(out[k]);
          std::vector<float> f(d.begin(), d.end());
          obs[k].observe(f.data(), static_cast<int64_t>(f.size()));
        }
      }
      for (auto& o : obs) o.finish_pass();
    }
    for (size_t k = 0; k < obs.size(); ++k) {
      auto [lo, hi] = obs[k].range();
      qparams_[observed_[k]] = int8_qparams(lo, hi);
    }
  }

  ValueId i32_vector(const std::vector<int64_t>& v, const std::vector<int64_t>& shape) {
    std::vector<double> d(v.begin(), v.end());
    return b_.constant(Tensor::from_f64(DType::i32, shape, d));
  }

  // acc (i32, channels on `axis` of `rank`) → int8 on the grid `to`: bias, then fixed point.
  ValueId requantize(ValueId acc, const QParams& from, const ChannelQuant& w, const QParams& to, bool relu, size_t rank, size_t axis) {
    std::vector<int64_t> mult, shift;
    for (double ws : w.scales) {
      auto [m, s] = fixed_point_multiplier(from.scale * ws / to.scale);
      mult.push_back(m);
      shift.push_back(s);
    }
    std::vector<int64_t> shape(rank, 1);
    shape[axis] = static_cast<int64_t>(w.scales.size());
    ir::Attrs a{{"zero_point", to.zero_point}, {"lo", relu ? to.zero_point : int64_t{-128}}, {"hi", int64_t{127}}, {"out", DType::i8}};
    return b_.emit1(Op::requantize, {acc, i32_vector(mult, shape), i32_vector(shift, shape)}, a);
  }

  // The int32 bias: b / (s_x · s_w) minus the input zero point times each channel's code sum.
  std::vector<int64_t> int_bias(const ir::Node& n, const QParams& x, const ChannelQuant& w, const char* what) {
    std::vector<int64_t> out(w.scales.size(), 0);
    std::vector<double> bias;
    if (n.inputs.size() > 2) bias = values_f64(weight_of(weights_, g_, n.inputs[2], n, "bias"));
    for (size_t c = 0; c < out.size(); ++c) {
      double b = bias.empty() ? 0.0 : bias[c] / (x.scale * w.scales[c]);
      double v = std::nearbyint(b) - static_cast<double>(x.zero_point) * static_cast<double>(w.sums[c]);
      if (std::fabs(v) > 2147483647.0)
        throw Error(ErrorKind::invalid_argument, cat("PTQ: the int32 bias of ", what, " '", n.name, "' channel ", c, " overflows (", v, ")"));
      out[c] = static_cast<int64_t>(v);
    }
    return out;
  }

  QValue layer(const ir::Node& n, const QValue& x, bool relu, const QParams& to) {
    b_.set_context(n.name, ir::op_keyword(n.op));
    ChannelQuant w = quantize_channels(weight_of(weights_, g_, n.inputs[1], n, "weight"));
    PtqLayer rep{n.name, ir::op_keyword(n.op), x.q.scale, to.scale, x.q.zero_point, to.zero_point,
                 *std::min_element(w.scales.begin(), w.scales.end()), *std::max_element(w.scales.begin(), w.scales.end()), relu};
    result_.layers.push_back(rep);
    ValueId wq = b_.constant(w.codes);
    if (n.op == Op::linear) {
      size_t r = b_.rank(x.v);
      ValueId acc = b_.emit1(Op::dot_general, {x.v, wq}, ir::Attrs{{"contract", ir::Intss{{static_cast<int64_t>(r) - 1}, {1}}}, {"out", DType::i32}});
      std::vector<int64_t> bshape(r, 1);
      bshape.back() = static_cast<int64_t>(w.scales.size());
      acc = b_.add(acc, i32_vector(int_bias(n, x.q, w, "linear"), bshape));
      return {requantize(acc, x.q, w, to, relu, r, r - 1), to};
    }
    // conv2d: pad with the input's zero point (a real 0), then an unpadded integer conv
    if (n.attrs.i("groups") != 1) throw Error(ErrorKind::invalid_argument, cat("PTQ: grouped conv2d '", n.name, "' is not handled yet"));
    const ir::Ints& p = n.attrs.ints("pads");  // [top, left, bottom, right]
    ValueId xv = x.v;
    if (p[0] || p[1] || p[2] || p[3])
      xv = b_.emit1(Op::pad, {xv}, ir::Attrs{{"lo", ir::Ints{0, 0, p[0], p[1]}}, {"hi", ir::Ints{0, 0, p[2], p[3]}}, {"value", static_cast<double>(x.q.zero_point)}});
    ValueId acc = b_.emit1(Op::conv, {xv, wq}, ir::Attrs{{"strides", n.attrs.ints("strides")}, {"padding", ir::Intss{{0, 0}, {0, 0}}},
                                                         {"dilation", n.attrs.ints("dilations")}, {"out", DType::i32}});
    acc = b_.add(acc, i32_vector(int_bias(n, x.q, w, "conv2d"), {1, static_cast<int64_t>(w.scales.size()), 1, 1}));
    return {requantize(acc, x.q, w, to, relu, 4, 1), to};
  }

  void build() {
    result_.graph.name = g_.name + "_int8";
    std::map<ValueId, QValue> q;  // float value → its quantized counterpart
    const ir::Type& it = g_.type(input_);
    ValueId x = result_.graph.add_input(it, g_.value(input_).name.empty() ? "input" : g_.value(input_).name);
    QParams qx = qparams_.at(input_);
    result_.input = qx;
    b_.set_context("input", "");
    ValueId xq = b_.emit1(Op::quantize_linear, {x, b_.scalar(it.dtype, qx.scale), b_.scalar(DType::i8, static_cast<double>(qx.zero_point))});
    q[input_] = {xq, qx};
    std::set<int> folded;
    for (auto [layer_node, relu_node] : folded_relu_) folded.insert(relu_node);
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const ir::Node& n = g_.node(i);
      if (!needed_.count(n.outputs[0]) || folded.count(i) || n.inputs.empty()) continue;  // a constant is not on the data path
      auto in = q.find(n.inputs[0]);
      if (in == q.end()) {
        // a node computing a constant or a weight (a transpose of one, say) is not on the data path
        bool on_path = false;
        for (ValueId v : n.inputs) on_path = on_path || q.count(v);
        if (!on_path) continue;
        throw Error(ErrorKind::invalid_argument, cat("PTQ: ", ir::op_name(n.op), " '", n.name, "' takes the data as a later operand; not handled"));
      }
      switch (n.op) {
        case Op::linear:
        case Op::conv2d: {
          auto f = folded_relu_.find(i);
          ValueId out = f == folded_relu_.end() ? n.outputs[0] : g_.node(f->second).outputs[0];
          q[out] = layer(n, in->second, f != folded_relu_.end(), qparams_.at(out));
          break;
        }
        case Op::add: {  // a residual connection: both sides on the data path, to a common scale
          auto other = q.find(n.inputs[1]);
          if (other == q.end())
            throw Error(ErrorKind::invalid_argument, cat("PTQ: add '", n.name, "' adds a value that is not on the data path (a constant?); not handled"));
          auto f = folded_relu_.find(i);
          ValueId out = f == folded_relu_.end() ? n.outputs[0] : g_.node(f->second).outputs[0];
          const QParams& to = qparams_.at(out);
          const passes::Int8Grid ga{in->second.q.scale, in->second.q.zero_point}, gb{other->second.q.scale, other->second.q.zero_point},
              gy{to.scale, to.zero_point};
          auto plan = passes::plan_integer_add(ga, gb, gy);
          if (!plan)
            throw Error(ErrorKind::invalid_argument, cat("PTQ: add '", n.name, "': the scales ", ga.scale, ", ", gb.scale, " → ", gy.scale,
                                                         " are too far apart for a fixed-point rescaling"));
          b_.set_context(n.name, "hir.add");
          q[out] = {passes::emit_integer_add(b_, in->second.v, ga, other->second.v, gb, gy, *plan, f != folded_relu_.end()), to};
          ++result_.adds;
          break;
        }
        case Op::softmax: {
          const int64_t rank = static_cast<int64_t>(g_.type(n.outputs[0]).shape.size());
          int64_t axis = n.attrs.i("axis");
          if (axis < 0) axis += rank;
          const Dim last = rank ? g_.type(n.outputs[0]).shape.back() : Dim(1);
          if (axis != rank - 1 || !last.is_static())
            throw Error(ErrorKind::invalid_argument, cat("PTQ: softmax '", n.name, "' runs over axis ", n.attrs.i("axis"), "; the integer softmax takes the last, static one"));
          const QParams& to = qparams_.at(n.outputs[0]);
          auto plan = passes::plan_integer_softmax(last.value(), {to.scale, to.zero_point});
          if (!plan) throw Error(ErrorKind::invalid_argument, cat("PTQ: softmax '", n.name, "': its output grid (scale ", to.scale, ") is too coarse for the integer softmax"));
          b_.set_context(n.name, "hir.softmax");
          q[n.outputs[0]] = {passes::emit_integer_softmax(b_, in->second.v, {in->second.q.scale, in->second.q.zero_point}, axis, {to.scale, to.zero_point}, *plan), to};
          ++result_.softmaxes;
          break;
        }
        case Op::relu: {  // a relu not right after a layer: clamp at the zero point's code
          b_.set_context(n.name, "hir.relu");
          ValueId zp = b_.scalar(DType::i8, static_cast<double>(in->second.q.zero_point));
          q[n.outputs[0]] = {b_.max(in->second.v, zp), in->second.q};
          break;
        }
        case Op::max_pool:
          b_.set_context(n.name, "hir.max_pool");
          q[n.outputs[0]] = {b_.emit1(Op::max_pool, {in->second.v}, n.attrs), in->second.q};
          break;
        case Op::reshape:
          q[n.outputs[0]] = {b_.reshape(in->second.v, g_.type(n.outputs[0]).shape), in->second.q};
          break;
        default:
          throw Error(ErrorKind::invalid_argument, cat("PTQ: ", ir::op_name(n.op), " '", n.name, "' between the input and the output is not handled yet",
                                                       " (int8 PTQ takes linear, conv2d, add, softmax, relu, max_pool and reshape)"));
      }
    }
    auto out = q.find(output_);
    if (out == q.end()) throw Error(ErrorKind::internal, "PTQ: the output was not reached");
    result_.output = out->second.q;
    b_.set_context("output", "");
    DType od = g_.type(output_).dtype;
    ValueId y = b_.emit1(Op::dequantize_linear, {out->second.v, b_.scalar(od, out->second.q.scale), b_.scalar(DType::i8, static_cast<double>(out->second.q.zero_point))});
    result_.graph.set_outputs({y});
  }
};

}  // namespace

PtqResult quantize_int8(const ir::Graph& float_graph, const std::map<ValueId, Tensor>& weights, ValueId input, ValueId output,
                        const std::vector<Tensor>& calibration, const PtqOptions& options) {
  return Quantizer(float_graph, weights, input, output, options).run(calibration);
}

}  // namespace rlx::quant
