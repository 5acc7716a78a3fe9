#include "passes/legalize.h"

#include <algorithm>
#include <set>

#include "ops/rules.h"
#include "ops/verify.h"
#include "util/flags.h"
#include "passes/rewrite.h"
#include "passes/rewrites.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

namespace {

std::string describe(RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const std::vector<Type>& out) {
  std::string s = ir::op_keyword(op) + "(";
  for (size_t i = 0; i < in.size(); ++i) s += (i ? ", " : "") + ir::type_str(b.type(in[i]));
  s += ") -> ";
  for (size_t i = 0; i < out.size(); ++i) s += (i ? ", " : "") + ir::type_str(out[i]);
  if (!b.context_name().empty()) s += cat(" \"", b.context_name(), "\"");
  if (!b.context_origin().empty()) s += cat(" from ", b.context_origin());
  return s;
}

std::string override_for(const DispatchOptions& o, Op op) {
  auto it = o.overrides.find(ir::op_name(op));
  if (it == o.overrides.end()) it = o.overrides.find(ir::op_keyword(op));
  return it == o.overrides.end() ? "" : it->second;
}

}  // namespace

ir::Graph legalize(const ir::Graph& g, const KernelClaims& device, const DispatchOptions& opts, DispatchReport& report) {
  report = DispatchReport{};
  report.device = device.name();
  report.policy = opts.policy;
  for (const auto& [op, mode] : opts.overrides) {
    if (!ir::op_from_name(op)) throw Error(ErrorKind::invalid_argument, cat("dispatch override names unknown op '", op, "'"));
    if (mode != "native" && mode != "common")
      throw Error(ErrorKind::invalid_argument, cat("dispatch override for ", op, " must be native or common, got '", mode, "'"));
  }
  const std::vector<Rewrite>& rewrites = registered_rewrites();

  Rule resolve{"dispatch", [&](RewriteBuilder& b, Op op, const std::vector<ValueId>& in,
                               const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    std::vector<Type> in_types;
    for (ValueId v : in) in_types.push_back(b.type(v));
    std::vector<Type> out_types = ops::infer_types(op, in_types, attrs);
    auto& row = report.rows[ir::op_keyword(op)];
    auto& where = report.placement[placement_group(b.context_name())];
    std::string ov = override_for(opts, op);
    bool decomposable = ops::has_decomposition(op);
    bool want_common = decomposable && (opts.policy == Policy::force_common || ov == "common");
    // 1. native
    if (!want_common && device.claims(op, in_types, out_types, attrs)) {
      ++row.native;
      ++where.native;
      return b.emit_plain(op, in, attrs, ir::Path::native);
    }
    // 2. common-ir: the op's decomposition, whose nodes resolve recursively
    if (decomposable) {
      ++row.common_ir;
      ++where.common_ir;
      std::string name = b.context_name(), origin = b.context_origin();
      b.set_context(name, origin.empty() ? ir::op_keyword(op) : origin);
      auto out = ops::op_rule(op).decompose(b, in, attrs);
      b.set_context(name, origin);
      return out;
    }
    // 3. rewritten: a registered rewrite that makes the op legal on this device
    for (const auto& rw : rewrites) {
      if (!rw.applies(device, op, in_types, out_types, attrs)) continue;
      ++row.rewritten;
      ++where.rewritten;
      std::string note = cat(ir::op_keyword(op), " ", rw.name);
      if (std::find(report.rewrites.begin(), report.rewrites.end(), note) == report.rewrites.end()) report.rewrites.push_back(note);
      std::string name = b.context_name(), origin = b.context_origin();
      b.set_context(name, origin.empty() ? ir::op_keyword(op) : origin);
      int native_before = report.rows[ir::op_keyword(op)].native;
      const std::string group = placement_group(name);
      int placed_before = report.placement[group].native;
      auto out = rw.apply(b, op, in, attrs);
      report.rows[ir::op_keyword(op)].native = native_before;  // the rewritten node is counted once, as rewritten
      report.placement[group].native = placed_before;
      b.set_context(name, origin);
      for (ValueId v : out) {
        ir::Node& n = b.graph().node(b.graph().value(v).node);
        if (n.path == ir::Path::native && n.op == op) n.path = ir::Path::rewritten;
      }
      return out;
    }
    // 4. unsupported: keep going so that the error lists every such node at once
    ++row.unsupported;
    ++where.unsupported;
    report.unsupported.push_back(describe(b, op, in, out_types));
    return b.emit_plain(op, in, attrs, ir::Path::unresolved);
  }};

  // The unsupported graph is invalid at MIR level; verify only once it is known to be legal.
  RewriteOptions ro;
  ro.verify = false;
  ir::Graph out = rewrite(g, {resolve}, "legalize", ro);
  out.device = device.name();
  if (!report.ok()) {
    std::set<std::string> kinds;
    for (const auto& [op, r] : report.rows)
      if (r.unsupported) kinds.insert(op);
    std::set<std::string> sources;
    for (const auto& n : out.nodes())
      if (n.path == ir::Path::unresolved && !n.origin.empty()) sources.insert(n.origin);
    std::string msg = cat("device ", device.name(), " cannot run ", report.unsupported.size(), " node",
                          report.unsupported.size() == 1 ? "" : "s", " of graph @", g.name, " (ops without a native kernel, decomposition or rewrite: ",
                          join(std::vector<std::string>(kinds.begin(), kinds.end())), ")");
    if (!sources.empty()) msg += cat("; they come from ", join(std::vector<std::string>(sources.begin(), sources.end())));
    msg += ":";
    // Identical nodes (same op, types and source) are listed once with their count.
    std::vector<std::pair<std::string, int>> lines;
    for (const auto& u : report.unsupported) {
      auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == u; });
      if (it == lines.end()) lines.push_back({u, 1});
      else ++it->second;
    }
    constexpr size_t kMax = 60;
    for (size_t i = 0; i < lines.size() && i < kMax; ++i)
      msg += cat("\n  ", lines[i].first, lines[i].second > 1 ? cat("  (×", lines[i].second, ")") : std::string());
    if (lines.size() > kMax) msg += cat("\n  … and ", lines.size() - kMax, " more distinct nodes");
    msg += "\n" + report.str();
    throw Error(ErrorKind::unsupported, msg);
  }
  if (flags().RLX_VERIFY >= 1) ops::verify(out, ir::Level::MIR);
  return out;
}

}  // namespace rlx::passes
