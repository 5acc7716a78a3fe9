#include "runtime/diff.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/op.h"
#include "ir/text.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/half.h"
#include "util/scalar.h"
#include "util/strings.h"

namespace rlx::runtime {

namespace {

// Every node output worth comparing, in node order.
std::vector<ir::ValueId> node_outputs(const ir::Graph& g) {
  std::vector<ir::ValueId> out;
  for (const auto& n : g.nodes())
    for (ir::ValueId v : n.outputs) {
      DType d = g.type(v).dtype;
      if (d != DType::i4 && !is_complex(d)) out.push_back(v);  // storage-only or complex: not compared here
    }
  return out;
}

// The graph with `values` as its outputs, so a session keeps each of them.
ir::Graph exposed(const ir::Graph& g, const std::vector<ir::ValueId>& values) {
  ir::Graph e = g;
  e.set_outputs(values);
  e.donations.clear();  // intermediate values must survive: nothing is updated in place
  return e;
}

std::vector<Tensor> run_on(const ir::Graph& g, const std::string& device, const std::vector<Tensor>& inputs) {
  return Session(device).compile(Graph(std::make_shared<ir::Graph>(g))).run(inputs);
}

void default_tolerance(DType d, DiffTolerance& t) {
  if (t.rtol > 0 || t.atol > 0) return;
  if (d == DType::f16 || d == DType::bf16) t = {2e-2, 1e-2};
  else if (is_float(d)) t = {1e-3, 1e-4};
}

void compare(const Tensor& got, const Tensor& want, DiffTolerance tol, ValueDiff& out) {
  out.dtype = dtype_name(want.dtype());
  out.shape = want.shape();
  out.numel = want.numel();
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    out.exceeds = true;
    out.mismatches = out.numel;
    out.max_abs = out.max_rel = INFINITY;
    return;
  }
  default_tolerance(want.dtype(), tol);
  std::vector<double> a = got.to_f64(), b = want.to_f64();
  for (size_t i = 0; i < a.size(); ++i) {
    bool an = std::isnan(a[i]), bn = std::isnan(b[i]);
    double err = an || bn ? (an == bn ? 0.0 : INFINITY) : (a[i] == b[i] ? 0.0 : std::fabs(a[i] - b[i]));
    double rel = err == 0 ? 0.0 : err / std::max(std::fabs(b[i]), 1e-30);
    out.max_abs = std::max(out.max_abs, err);
    out.max_rel = std::max(out.max_rel, rel);
    if (err > tol.atol + tol.rtol * (bn ? 0.0 : std::fabs(b[i]))) ++out.mismatches;
  }
  out.exceeds = out.mismatches > 0;
}

std::string short_line(const std::string& s, size_t n = 160) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

std::string fmt(double x) {
  if (std::isinf(x)) return "inf";
  char b[32];
  std::snprintf(b, sizeof(b), "%.3g", x);
  return b;
}

// Indices of the `top` values with the largest relative error, largest first.
std::vector<size_t> ranked(const std::vector<ValueDiff>& v, int top) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a].max_rel > v[b].max_rel; });
  idx.resize(std::min<size_t>(idx.size(), static_cast<size_t>(std::max(top, 0))));
  return idx;
}

std::string value_json(const ValueDiff& d) {
  auto num = [](double x) { return std::isinf(x) ? std::string("null") : fmt(x); };
  return cat("{\"node\":", d.node, ",\"name\":", json_quote(d.name), ",\"origin\":", json_quote(d.origin), ",\"value\":", json_quote(d.value),
             ",\"ir\":", json_quote(d.ir), ",\"dtype\":", json_quote(d.dtype), ",\"shape\":[", join(d.shape, ","), "],\"max_abs\":", num(d.max_abs),
             ",\"max_rel\":", num(d.max_rel), ",\"mismatches\":", d.mismatches, ",\"numel\":", d.numel, ",\"exceeds\":", d.exceeds ? "true" : "false",
             "}");
}

}  // namespace

namespace {

DiffReport report(const ir::Graph& graph, const std::vector<ir::ValueId>& values, const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                  const std::string& device, const std::string& against, const DiffTolerance& tolerance) {
  std::vector<std::string> lines = split(ir::print_graph(graph), '\n');
  DiffReport r;
  r.device = device;
  r.against = against;
  for (size_t k = 0; k < values.size(); ++k) {
    int node = graph.value(values[k]).node;
    ValueDiff d;
    d.node = node;
    if (node >= 0) {
      d.ir = short_line(std::string(trim(lines[static_cast<size_t>(node) + 1])));
      d.name = graph.node(node).name;
      d.origin = graph.node(node).origin;
    }
    d.value = graph.value(values[k]).name;
    compare(got[k], want[k], tolerance, d);
    if (d.exceeds && r.first < 0) r.first = static_cast<int>(r.values.size());
    r.values.push_back(std::move(d));
  }
  return r;
}

}  // namespace

DiffReport diff_runs(const ir::Graph& graph, const std::vector<Tensor>& inputs, const std::string& device, const std::string& against,
                     const DiffTolerance& tolerance, const UnderTest& under_test) {
  std::vector<ir::ValueId> values = node_outputs(graph);
  const ir::Graph& tested = under_test.graph ? *under_test.graph : graph;
  if (tested.num_nodes() != graph.num_nodes() || node_outputs(tested) != values)
    throw Error(ErrorKind::invalid_argument, "rlx diff: the graph under test does not have the same nodes as the one it is checked against");
  std::vector<Tensor> got = run_on(exposed(tested, values), device, under_test.inputs ? *under_test.inputs : inputs);
  std::vector<Tensor> want = run_on(exposed(graph, values), against, inputs);
  return report(graph, values, got, want, device, against, tolerance);
}

DiffReport diff_values(const ir::Graph& graph, const std::vector<Tensor>& inputs, const std::string& device, const std::vector<ir::ValueId>& values,
                       const std::vector<Tensor>& expected, const std::string& against, const DiffTolerance& tolerance) {
  if (values.size() != expected.size()) throw Error(ErrorKind::internal, "rlx diff: one expected tensor per value");
  return report(graph, values, run_on(exposed(graph, values), device, inputs), expected, device, against, tolerance);
}

std::string DiffReport::str(int top) const {
  std::string s = cat("rlx diff: ", device, " against ", against, ", ", values.size(), " values compared\n");
  if (first < 0) {
    s += "every value agrees within tolerance\n";
  } else {
    const ValueDiff& f = values[static_cast<size_t>(first)];
    s += cat("first divergence: node ", f.node, f.name.empty() ? "" : cat(" \"", f.name, "\""), f.origin.empty() ? "" : cat(" from ", f.origin),
             "\n  ", f.ir, "\n  ", f.dtype, "[", join(f.shape, ","), "]: ", f.mismatches, " of ", f.numel, " elements beyond tolerance, max abs ",
             fmt(f.max_abs), ", max rel ", fmt(f.max_rel), "\n");
  }
  s += cat("\nlargest relative errors:\n", "  node  ", "max abs     max rel     beyond      value\n");
  for (size_t i : ranked(values, top)) {
    const ValueDiff& d = values[i];
    char row[96];
    std::snprintf(row, sizeof(row), "  %4d  %-10s  %-10s  %-10lld  ", d.node, fmt(d.max_abs).c_str(), fmt(d.max_rel).c_str(),
                  static_cast<long long>(d.mismatches));
    s += row + short_line(d.ir, 90) + "\n";
  }
  return s;
}

std::string DiffReport::json(int top) const {
  std::vector<std::string> worst;
  for (size_t i : ranked(values, top)) worst.push_back(value_json(values[i]));
  return cat("{\"device\":", json_quote(device), ",\"against\":", json_quote(against), ",\"compared\":", values.size(),
             ",\"first\":", first < 0 ? std::string("null") : value_json(values[static_cast<size_t>(first)]), ",\"largest\":[", join(worst, ","),
             "]}");
}

namespace {
void flip_first(Tensor& t, const std::string& name) {
  if (t.numel() == 0) throw Error(ErrorKind::invalid_argument, cat("rlx diff: '", name, "' is empty; nothing to flip"));
  t = t.clone();
  double x = t.at_f64(0);
  store_f64(t.data(), t.dtype(), 0, t.dtype() == DType::boolean ? 1 - x : x == 0 ? 1.0 : -x);
}
}  // namespace

void flip_weight(ir::Graph& g, std::vector<Tensor>& inputs, const std::string& name) {
  std::vector<std::string> names;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const std::string& n = g.value(g.inputs()[i]).name;
    names.push_back(n);
    if (n == name && i < inputs.size()) return flip_first(inputs[i], name);
  }
  for (int i = 0; i < g.num_nodes(); ++i) {
    ir::Node& n = g.node(i);
    if (n.op != ir::Op::constant) continue;
    const std::string& vname = g.value(n.outputs[0]).name;
    if (vname.empty()) continue;
    names.push_back(vname);
    if (vname != name) continue;
    Tensor t = n.attrs.tensor("value");
    flip_first(t, name);
    n.attrs.set("value", t);
    return;
  }
  throw Error(ErrorKind::invalid_argument, cat("rlx diff: no input or named constant '", name, "' (there are: ", join(names, ", "), ")"));
}

}  // namespace rlx::runtime
