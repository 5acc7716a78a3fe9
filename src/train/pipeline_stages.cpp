#include "train/pipeline_stages.h"

#include <algorithm>
#include <climits>
#include <limits>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::train {

using ir::ValueId;

namespace {

double per_sample_numel(const ir::Type& t) {
  Bindings ones;
  std::set<std::string> syms;
  for (const Dim& d : t.shape) d.collect_symbols(syms);
  for (const auto& s : syms) ones[s] = 1;
  double n = 1;
  for (const Dim& d : shape_substitute(t.shape, ones)) n *= static_cast<double>(d.try_value().value_or(1));
  return n;
}

std::string value_label(const ir::Graph& g, ValueId v) {
  if (!g.value(v).name.empty()) return g.value(v).name;
  const ir::Node* n = g.producer(v);
  return n && !n->name.empty() ? cat(n->name, ":", ir::op_name(n->op)) : cat("%", v);
}

// What the split needs to know about the forward graph.
struct Analysis {
  size_t num_params = 0;
  std::vector<bool> activation;  // per value: depends on a data input
  std::vector<int> last_use;     // per value: the last node reading it (INT_MAX: a graph output; -1: unused)
  std::vector<bool> from_params;  // per value: computed from a parameter without data (a weight, its fake-quant)
};

Analysis analyse(const ir::Graph& g, size_t num_params) {
  Analysis a;
  a.num_params = num_params;
  a.activation.assign(g.num_values(), false);
  a.last_use.assign(g.num_values(), -1);
  a.from_params.assign(g.num_values(), false);
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (i >= num_params) a.activation[static_cast<size_t>(g.inputs()[i])] = true;
    else a.from_params[static_cast<size_t>(g.inputs()[i])] = true;
  }
  for (int i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.node(i);
    bool act = false, params = false;
    for (ValueId v : n.inputs) {
      act = act || a.activation[static_cast<size_t>(v)];
      params = params || a.from_params[static_cast<size_t>(v)];
      a.last_use[static_cast<size_t>(v)] = i;
    }
    for (ValueId v : n.outputs) {
      a.activation[static_cast<size_t>(v)] = act;
      a.from_params[static_cast<size_t>(v)] = !act && params;
    }
  }
  for (ValueId v : g.outputs()) a.last_use[static_cast<size_t>(v)] = INT_MAX;
  return a;
}

bool is_activation_node(const Analysis& a, const ir::Node& n) {
  return !n.outputs.empty() && a.activation[static_cast<size_t>(n.outputs[0])];
}

bool is_contraction(ir::Op op) {
  return op == ir::Op::matmul || op == ir::Op::linear || op == ir::Op::dot_general || op == ir::Op::conv2d || op == ir::Op::conv;
}

// A layer: an activation node contracting with a parameter (a weight, or its fake-quant).
bool is_layer(const Analysis& a, const ir::Node& n) {
  if (!is_contraction(n.op) || !is_activation_node(a, n)) return false;
  for (ValueId v : n.inputs)
    if (a.from_params[static_cast<size_t>(v)]) return true;
  return false;
}

// The nodes after which the graph may be cut: between two consecutive layers, the last node with
// one output v, used later, such that no other activation made so far is read after it — after
// the bias and the activation function, before the next layer's contraction.
std::vector<int> cut_candidates(const ir::Graph& g, const Analysis& a) {
  std::vector<int> separators, layers;
  int reach = -1;  // the last use of any activation produced before the node considered
  for (int i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.node(i);
    if (!is_activation_node(a, n)) continue;
    if (is_layer(a, n)) layers.push_back(i);
    bool single = true;
    for (size_t k = 1; k < n.outputs.size(); ++k) single = single && a.last_use[static_cast<size_t>(n.outputs[k])] < 0;
    const int v_last = a.last_use[static_cast<size_t>(n.outputs[0])];
    if (single && reach <= i && v_last > i && v_last != INT_MAX) separators.push_back(i);
    for (ValueId v : n.outputs) reach = std::max(reach, a.last_use[static_cast<size_t>(v)]);
  }
  std::vector<int> out;
  for (size_t k = 1; k < layers.size(); ++k) {
    auto it = std::lower_bound(separators.begin(), separators.end(), layers[k]);  // the first at or after layer k
    if (it != separators.begin() && *std::prev(it) >= layers[k - 1]) out.push_back(*std::prev(it));
  }
  return out;
}

// Cuts (node indices) minimising the largest stage's cost; the latest cut among ties.
std::vector<int> choose_cuts(const std::vector<int>& cand, const std::vector<double>& prefix, int stages) {
  const size_t k = cand.size(), need = static_cast<size_t>(stages - 1);
  const double total = prefix.back();
  auto before = [&](size_t c) { return prefix[static_cast<size_t>(cand[c]) + 1]; };  // cost of nodes ≤ cand[c]
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[j][c]: the least max-stage cost of the first j+1 stages when cut j is at candidate c
  std::vector<std::vector<double>> best(need, std::vector<double>(k, kInf));
  std::vector<std::vector<int>> from(need, std::vector<int>(k, -1));
  for (size_t c = 0; c < k; ++c) best[0][c] = before(c);
  for (size_t j = 1; j < need; ++j)
    for (size_t c = j; c < k; ++c)
      for (size_t p = j - 1; p < c; ++p) {
        double v = std::max(best[j - 1][p], before(c) - before(p));
        if (v <= best[j][c]) {
          best[j][c] = v;
          from[j][c] = static_cast<int>(p);
        }
      }
  double top = kInf;
  int at = -1;
  for (size_t c = need - 1; c < k; ++c) {
    double v = std::max(best[need - 1][c], total - before(c));
    if (v <= top) {
      top = v;
      at = static_cast<int>(c);
    }
  }
  std::vector<int> cuts(need);
  for (size_t j = need; j-- > 0;) {
    cuts[j] = cand[static_cast<size_t>(at)];
    at = from[j][static_cast<size_t>(at)];
  }
  return cuts;
}

}  // namespace

double node_cost(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs.empty()) return 0;
  const double out = per_sample_numel(g.type(n.outputs[0]));
  auto dims = [&](size_t i) -> const Shape& { return g.type(n.inputs[i]).shape; };
  switch (n.op) {
    case ir::Op::matmul:
    case ir::Op::linear: {  // contraction over x's last dim
      const Shape& x = dims(0);
      return out * (x.empty() ? 1.0 : static_cast<double>(x.back().try_value().value_or(1)));
    }
    case ir::Op::dot_general: {  // the lhs's contracted dims
      double k = 1;
      const Shape& x = dims(0);
      for (int64_t d : n.attrs.intss("contract")[0])
        if (d >= 0 && static_cast<size_t>(d) < x.size()) k *= static_cast<double>(x[static_cast<size_t>(d)].try_value().value_or(1));
      return out * k;
    }
    case ir::Op::conv2d:
    case ir::Op::conv: {  // W[Cout, Cin/groups, kh, kw]: Cin/groups·kh·kw per output element
      const Shape& w = dims(1);
      const double cout = w.empty() ? 1.0 : static_cast<double>(w[0].try_value().value_or(1));
      return out * per_sample_numel(g.type(n.inputs[1])) / std::max(cout, 1.0);
    }
    default: return out;
  }
}

std::vector<PipelineStage> split_pipeline(const ir::Graph& g, size_t num_params, int stages) {
  if (stages < 1) throw Error(ErrorKind::invalid_argument, cat("pipeline parallel needs at least 1 stage, got ", stages));
  if (num_params > g.inputs().size()) throw Error(ErrorKind::invalid_argument, cat("the forward graph has ", g.inputs().size(), " inputs, fewer than ", num_params, " parameters"));
  if (g.outputs().empty()) throw Error(ErrorKind::invalid_argument, "the forward graph needs the loss as its first output");
  const Analysis a = analyse(g, num_params);
  std::vector<double> prefix(static_cast<size_t>(g.num_nodes()) + 1, 0);
  for (int i = 0; i < g.num_nodes(); ++i)
    prefix[static_cast<size_t>(i) + 1] = prefix[static_cast<size_t>(i)] + (is_activation_node(a, g.node(i)) ? node_cost(g, g.node(i)) : 0);
  std::vector<int> cuts;
  if (stages > 1) {
    std::vector<int> cand = cut_candidates(g, a);
    if (cand.size() < static_cast<size_t>(stages - 1))
      throw Error(ErrorKind::invalid_argument, cat("'", g.name, "' can be cut in only ", cand.size(), " place", cand.size() == 1 ? "" : "s",
                                                   " (between layers, where one activation carries everything forward); ", stages,
                                                   " pipeline stages need ", stages - 1));
    cuts = choose_cuts(cand, prefix, stages);
  }

  // Stage of every activation node; parameter-only nodes and constants follow their consumers.
  std::vector<int> stage_of(static_cast<size_t>(g.num_nodes()), -1);
  for (int i = 0, s = 0; i < g.num_nodes(); ++i) {
    if (!is_activation_node(a, g.node(i))) continue;
    stage_of[static_cast<size_t>(i)] = s;
    if (s < stages - 1 && i == cuts[static_cast<size_t>(s)]) ++s;
  }
  std::vector<int> param_stage(num_params, -1);
  std::vector<PipelineStage> out(static_cast<size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    PipelineStage& st = out[static_cast<size_t>(s)];
    const ValueId received = s > 0 ? g.node(cuts[static_cast<size_t>(s) - 1]).outputs[0] : ir::kNoValue;
    const ValueId sent = s < stages - 1 ? g.node(cuts[static_cast<size_t>(s)]).outputs[0] : ir::kNoValue;
    // The nodes this stage runs: its activation nodes and, walking back, the parameter-only ones
    // they read.
    std::vector<bool> needed(static_cast<size_t>(g.num_nodes()), false), reads(g.num_values(), false);
    std::vector<ValueId> roots = s == stages - 1 ? g.outputs() : std::vector<ValueId>{};
    for (int i = 0; i < g.num_nodes(); ++i)
      if (stage_of[static_cast<size_t>(i)] == s) {
        needed[static_cast<size_t>(i)] = true;
        roots.insert(roots.end(), g.node(i).inputs.begin(), g.node(i).inputs.end());
      }
    while (!roots.empty()) {
      ValueId v = roots.back();
      roots.pop_back();
      if (reads[static_cast<size_t>(v)]) continue;
      reads[static_cast<size_t>(v)] = true;
      const int p = g.value(v).node;
      if (p < 0 || a.activation[static_cast<size_t>(v)] || needed[static_cast<size_t>(p)]) continue;
      needed[static_cast<size_t>(p)] = true;
      roots.insert(roots.end(), g.node(p).inputs.begin(), g.node(p).inputs.end());
    }
    ir::Graph& sg = st.forward;
    sg.name = cat(g.name, ".stage", s);
    std::vector<ValueId> map(g.num_values(), ir::kNoValue);
    for (size_t i = 0; i < num_params; ++i) {
      ValueId v = g.inputs()[i];
      if (!reads[static_cast<size_t>(v)]) continue;
      if (param_stage[i] >= 0)
        throw Error(ErrorKind::invalid_argument, cat("parameter '", value_label(g, v), "' is read by pipeline stages ", param_stage[i], " and ", s,
                                                     " (tied weights); each parameter must live in one stage"));
      param_stage[i] = s;
      st.params.push_back(i);
      map[static_cast<size_t>(v)] = sg.add_input(g.type(v), g.value(v).name);
    }
    if (received != ir::kNoValue) {
      st.receives = true;
      map[static_cast<size_t>(received)] = sg.add_input(g.type(received), value_label(g, received));
    }
    for (size_t i = num_params; i < g.inputs().size(); ++i) {
      ValueId v = g.inputs()[i];
      if (!reads[static_cast<size_t>(v)]) continue;
      st.data.push_back(i - num_params);
      map[static_cast<size_t>(v)] = sg.add_input(g.type(v), g.value(v).name);
    }
    for (int i = 0; i < g.num_nodes(); ++i) {
      if (!needed[static_cast<size_t>(i)]) continue;
      const ir::Node& n = g.node(i);
      std::vector<ValueId> in;
      for (ValueId v : n.inputs) {
        if (map[static_cast<size_t>(v)] == ir::kNoValue)  // an activation of another stage: the cut is not a separator
          throw Error(ErrorKind::internal, cat("pipeline split of '", g.name, "': stage ", s, " node '", n.name, "' reads ", value_label(g, v), " from another stage"));
        in.push_back(map[static_cast<size_t>(v)]);
      }
      std::vector<ir::Type> types;
      for (ValueId v : n.outputs) types.push_back(g.type(v));
      auto outs = sg.add_node(n.op, in, n.attrs, types, n.name, n.origin);
      for (size_t k = 0; k < outs.size(); ++k) map[static_cast<size_t>(n.outputs[k])] = outs[k];
    }
    if (sent != ir::kNoValue) {
      sg.set_outputs({map[static_cast<size_t>(sent)]});
      st.sends = value_label(g, sent);
    } else {
      std::vector<ValueId> outs;
      for (ValueId v : g.outputs()) {
        if (map[static_cast<size_t>(v)] == ir::kNoValue)
          throw Error(ErrorKind::invalid_argument, cat("output ", value_label(g, v), " of '", g.name, "' is computed before the last pipeline cut"));
        outs.push_back(map[static_cast<size_t>(v)]);
      }
      sg.set_outputs(outs);
    }
  }
  return out;
}

}  // namespace rlx::train
