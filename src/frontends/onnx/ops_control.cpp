// Control flow, inlined: If (a known condition picks its branch; otherwise both branches run
// and their outputs are selected elementwise), Loop (unrolled for a known trip count and
// condition) and Scan (unrolled over the static scan length, any axes and directions).
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

// Unrolling beyond this many iterations would make graphs too large to compile usefully.
constexpr int64_t kMaxUnroll = 4096;

std::optional<bool> known_bool(FoldingBuilder& b, ValueId v) {
  if (const Tensor* t = b.constant_value(v)) return t->at_f64(0) != 0;
  if (auto t = b.evaluate(v)) return t->at_f64(0) != 0;
  return std::nullopt;
}

// Selects between two branch results of the same structure; nullopt when they differ.
std::optional<IValue> select_values(FoldingBuilder& b, ValueId cond, const IValue& t, const IValue& e) {
  if (t.kind != e.kind) return std::nullopt;
  if (t.kind == IValue::Kind::none) return t;
  std::vector<ValueId> a = t.is_tensor() ? std::vector<ValueId>{t.v} : t.items, o = e.is_tensor() ? std::vector<ValueId>{e.v} : e.items;
  if (a.size() != o.size()) return std::nullopt;
  for (size_t i = 0; i < a.size(); ++i)
    if (b.type(a[i]) != b.type(o[i])) return std::nullopt;
  std::vector<ValueId> r;
  for (size_t i = 0; i < a.size(); ++i) r.push_back(b.select(cond, a[i], o[i]));
  if (t.is_tensor()) return IValue::tensor(r[0]);
  return IValue::sequence(r, t.elem);
}

std::vector<IValue> if_op(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId cond = c.in(0);
  const auto& then_g = c.attr_g("then_branch");
  const auto& else_g = c.attr_g("else_branch");
  if (const Tensor* t = b.constant_value(cond))
    return c.imp.inline_graph(t->at_f64(0) != 0 ? then_g : else_g, {}, c.label() + (t->at_f64(0) != 0 ? " then_branch" : " else_branch"));
  std::vector<IValue> th = c.imp.inline_graph(then_g, {}, c.label() + " then_branch");
  std::vector<IValue> el = c.imp.inline_graph(else_g, {}, c.label() + " else_branch");
  if (th.size() != el.size()) c.invalid("the branches have different numbers of outputs");
  ValueId cs = b.reshape(cond, {});
  std::vector<IValue> out;
  for (size_t i = 0; i < th.size(); ++i) {
    auto v = select_values(b, cs, th[i], el[i]);
    if (!v) {
      out.clear();
      break;
    }
    out.push_back(*v);
  }
  if (out.size() == th.size()) return out;
  // Branches of different shapes: the condition must be known (a given input's value).
  auto known = known_bool(b, cond);
  if (!known) c.fail("branches with different output shapes need a condition known at import");
  return *known ? th : el;
}

std::vector<IValue> loop(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  const auto& body = c.attr_g("body");
  int64_t trip = kMaxUnroll + 1;
  if (c.has(0)) {
    trip = c.int_scalar(0, "trip count M");
    if (trip > kMaxUnroll) c.fail(cat("a trip count of ", trip, " (unrolling stops at ", kMaxUnroll, ")"));
  }
  ValueId cond = c.has(1) ? c.in(1) : b.scalar(DType::boolean, 1);
  size_t n_carried = c.values_in().size() > 2 ? c.values_in().size() - 2 : 0;
  std::vector<IValue> carried;
  for (size_t i = 0; i < n_carried; ++i) carried.push_back(c.value_in(2 + i));
  if (static_cast<size_t>(body.output_size()) < 1 + n_carried) c.invalid("the body has fewer outputs than the condition and carried values");
  size_t n_scan = static_cast<size_t>(body.output_size()) - 1 - n_carried;
  std::vector<std::vector<ValueId>> scans(n_scan);
  for (int64_t it = 0; it < trip; ++it) {
    auto go = known_bool(b, cond);
    if (!go) c.fail("a loop condition that depends on run-time values (only known conditions unroll)");
    if (!*go) break;
    if (it == kMaxUnroll) c.fail(cat("more than ", kMaxUnroll, " iterations"));
    std::vector<IValue> ins = {IValue::tensor(b.scalar(DType::i64, static_cast<double>(it))), IValue::tensor(cond)};
    ins.insert(ins.end(), carried.begin(), carried.end());
    std::vector<IValue> outs = c.imp.inline_graph(body, ins, cat(c.label(), " body (iteration ", it, ")"));
    if (!outs[0].is_tensor()) c.invalid("the body's condition output must be a tensor");
    cond = outs[0].v;
    for (size_t i = 0; i < n_carried; ++i) carried[i] = outs[1 + i];
    for (size_t i = 0; i < n_scan; ++i) {
      if (!outs[1 + n_carried + i].is_tensor()) c.fail("a scan output that is not a tensor");
      scans[i].push_back(outs[1 + n_carried + i].v);
    }
  }
  std::vector<IValue> result = carried;
  for (size_t i = 0; i < n_scan; ++i) {
    if (scans[i].empty()) c.fail("a scan output of a loop that runs zero times (its shape is unknown)");
    std::vector<ValueId> parts;
    for (ValueId v : scans[i]) parts.push_back(insert_axes(b, v, {0}));
    result.push_back(IValue::tensor(b.concat(parts, 0)));
  }
  return result;
}

// One Scan over scan inputs already in [seq, …] layout per the axes attributes.
std::vector<ValueId> scan_core(NodeCtx& c, std::vector<ValueId> state, std::vector<ValueId> xs, const Ints& in_axes, const Ints& in_dirs,
                               const Ints& out_axes, const Ints& out_dirs) {
  FoldingBuilder& b = c.b;
  const auto& body = c.attr_g("body");
  size_t n_state = state.size();
  size_t n_out = static_cast<size_t>(body.output_size()) - n_state;
  if (xs.empty()) c.invalid("a Scan without scan inputs");
  Dim len = b.shape(xs[0])[static_cast<size_t>(in_axes[0])];
  for (size_t k = 1; k < xs.size(); ++k)
    if (b.shape(xs[k])[static_cast<size_t>(in_axes[k])] != len) c.invalid("scan inputs of different lengths");
  if (!len.is_static()) c.fail("a scan over a symbolic length");
  int64_t n = len.value();
  if (n == 0 && n_out > 0) c.fail("a scan of length 0 (its outputs' shapes are unknown)");
  if (n > kMaxUnroll) c.fail(cat("a scan of ", n, " steps (unrolling stops at ", kMaxUnroll, ")"));
  std::vector<std::vector<ValueId>> outs(n_out);
  for (int64_t t = 0; t < n; ++t) {
    std::vector<ValueId> ins = state;
    for (size_t k = 0; k < xs.size(); ++k) {
      int64_t ax = in_axes[k];
      int64_t pos = in_dirs[k] ? n - 1 - t : t;
      ins.push_back(remove_axes(b, b.slice_axis(xs[k], ax, Dim(pos), Dim(pos + 1)), {ax}));
    }
    std::vector<ValueId> r = c.imp.inline_subgraph(body, ins, cat(c.label(), " body (step ", t, ")"));
    for (size_t i = 0; i < n_state; ++i) state[i] = r[i];
    for (size_t i = 0; i < n_out; ++i) outs[i].push_back(r[n_state + i]);
  }
  std::vector<ValueId> result = state;
  for (size_t i = 0; i < n_out; ++i) {
    if (out_dirs[i]) std::reverse(outs[i].begin(), outs[i].end());
    int64_t r = static_cast<int64_t>(b.rank(outs[i][0])) + 1;
    int64_t ax = c.axis(out_axes[i], r);
    std::vector<ValueId> parts;
    for (ValueId v : outs[i]) parts.push_back(insert_axes(b, v, {ax}));
    result.push_back(b.concat(parts, ax));
  }
  return result;
}

std::vector<ValueId> scan(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  const auto& body = c.attr_g("body");
  int64_t n_scan_in = c.attr_i("num_scan_inputs", 0);
  size_t first = c.opset < 9 ? 1 : 0;  // opset 8 starts with sequence_lens
  std::vector<ValueId> all;
  for (size_t i = first; i < c.num_inputs(); ++i) all.push_back(c.in(i));
  if (n_scan_in <= 0 || static_cast<size_t>(n_scan_in) > all.size()) c.invalid(cat("num_scan_inputs ", n_scan_in, " does not fit ", all.size(), " inputs"));
  size_t n_state = all.size() - static_cast<size_t>(n_scan_in);
  if (static_cast<size_t>(body.output_size()) < n_state) c.invalid("the body has fewer outputs than state variables");
  size_t n_out = static_cast<size_t>(body.output_size()) - n_state;
  std::vector<ValueId> state(all.begin(), all.begin() + static_cast<int64_t>(n_state));
  std::vector<ValueId> xs(all.begin() + static_cast<int64_t>(n_state), all.end());
  if (c.opset >= 9) {
    Ints in_axes = c.attr_ints("scan_input_axes", Ints(xs.size(), 0));
    Ints in_dirs = c.attr_ints("scan_input_directions", Ints(xs.size(), 0));
    Ints out_axes = c.attr_ints("scan_output_axes", Ints(n_out, 0));
    Ints out_dirs = c.attr_ints("scan_output_directions", Ints(n_out, 0));
    if (in_axes.size() != xs.size() || in_dirs.size() != xs.size() || out_axes.size() != n_out || out_dirs.size() != n_out)
      c.invalid("scan_input/output_axes/directions must have one entry per scan input/output");
    for (size_t k = 0; k < xs.size(); ++k) in_axes[k] = c.axis(in_axes[k], c.rank(xs[k]));
    return scan_core(c, state, xs, in_axes, in_dirs, out_axes, out_dirs);
  }
  // Opset 8: a leading batch axis on everything; scan axis 1; `directions` per input.
  if (c.has(0)) c.fail("sequence_lens (variable-length batches)");
  Ints dirs = c.attr_ints("directions", Ints(xs.size(), 0));
  if (dirs.size() != xs.size()) c.invalid("directions must have one entry per scan input");
  Dim batch = b.shape(xs[0])[0];
  if (!batch.is_static()) c.fail("a symbolic batch");
  std::vector<std::vector<ValueId>> per(n_state + n_out);
  for (int64_t bi = 0; bi < batch.value(); ++bi) {
    std::vector<ValueId> st, x;
    for (ValueId v : state) st.push_back(remove_axes(b, b.slice_axis(v, 0, Dim(bi), Dim(bi + 1)), {0}));
    for (ValueId v : xs) x.push_back(remove_axes(b, b.slice_axis(v, 0, Dim(bi), Dim(bi + 1)), {0}));
    std::vector<ValueId> r = scan_core(c, st, x, Ints(xs.size(), 0), dirs, Ints(n_out, 0), Ints(n_out, 0));
    for (size_t i = 0; i < r.size(); ++i) per[i].push_back(insert_axes(b, r[i], {0}));
  }
  std::vector<ValueId> result;
  for (auto& p : per) result.push_back(b.concat(p, 0));
  return result;
}

}  // namespace

void register_control(OpTable& t) {
  t.insert(t.end(), {
                        {"", "If", 1, nullptr, if_op},
                        {"", "Loop", 1, nullptr, loop},
                        {"", "Scan", 8, scan},
                    });
}

}  // namespace rlx::frontends::onnx
