#include "passes/rewrite.h"

#include <filesystem>
#include <fstream>

#include "ir/text.h"
#include "ops/verify.h"
#include "rlx/error.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::passes {

namespace {
constexpr int kMaxDepth = 64;  // a rule that keeps re-emitting its own op is a bug
}

RewriteBuilder::RewriteBuilder(Graph& out, std::vector<Rule> rules, std::string pass_name)
    : ops::Builder(out), rules_(std::move(rules)), pass_(std::move(pass_name)) {}

std::vector<ValueId> RewriteBuilder::emit(Op op, std::vector<ValueId> inputs, Attrs attrs) {
  ir::normalize_attrs(op, attrs);
  if (depth_ > kMaxDepth)
    throw Error(ErrorKind::internal, cat(pass_, ": rewrites of ", ir::op_keyword(op), " nest deeper than ", kMaxDepth,
                                         " (a rule keeps re-emitting its own pattern)"));
  ir::Path inherited = source_path;
  source_path = ir::Path::unresolved;  // only the copied node itself inherits its path
  for (const auto& rule : rules_) {
    ++depth_;
    inherited_ = inherited;
    std::optional<std::vector<ValueId>> out;
    try {
      out = rule.apply(*this, op, inputs, attrs);
    } catch (...) {
      --depth_;
      throw;
    }
    --depth_;
    if (out) {
      ++applied_;
      // RLX_VERIFY=2 (CI): the graph built so far must stay well typed after every rewrite.
      if (flags().RLX_VERIFY >= 2) {
        try {
          ops::verify(g_, ir::Level::HIR);
        } catch (const Error& e) {
          throw Error(ErrorKind::internal, cat(pass_, ": rule ", rule.name, " broke the graph while rewriting ", ir::op_keyword(op), ": ", e.what()));
        }
      }
      if (debug_at(3)) log_line(cat(pass_, ": ", rule.name, " rewrote ", ir::op_keyword(op), name_.empty() ? "" : cat(" \"", name_, "\"")));
      return *out;
    }
  }
  return emit_plain(op, std::move(inputs), std::move(attrs), inherited);
}

std::vector<ValueId> RewriteBuilder::emit_plain(Op op, std::vector<ValueId> inputs, Attrs attrs, ir::Path path) {
  auto outs = ops::Builder::emit(op, std::move(inputs), std::move(attrs));
  g_.node(g_.value(outs[0]).node).path = path;
  return outs;
}

void after_pass(const Graph& g, const std::string& pass_name, bool verify) {
  const Flags& f = flags();
  if (verify && f.RLX_VERIFY >= 1) {
    try {
      ops::verify(g, g.level());
    } catch (const Error& e) {
      throw Error(ErrorKind::internal, cat("the graph is invalid after pass ", pass_name, " (a bug in RLX): ", e.what()));
    }
  }
  if (f.RLX_DEBUG >= 5) log_line(cat("after ", pass_name, ":\n", ir::print_graph(g)));
  if (!f.RLX_DUMP_DIR.empty()) {
    static int counter = 0;
    std::filesystem::create_directories(f.RLX_DUMP_DIR);
    char idx[16];
    std::snprintf(idx, sizeof(idx), "%03d", counter++);
    std::ofstream(std::filesystem::path(f.RLX_DUMP_DIR) / cat(idx, "-", g.name, "-", pass_name, ".rlx")) << ir::print_graph(g);
  }
}

Graph begin_copy(const Graph& in, std::vector<ValueId>& map) {
  Graph out;
  out.name = in.name;
  out.device = in.device;
  map.assign(in.num_values(), ir::kNoValue);
  for (ValueId v : in.inputs()) map[static_cast<size_t>(v)] = out.add_input(in.type(v), in.value(v).name);
  return out;
}

void finish_copy(const Graph& in, const std::vector<ValueId>& map, Graph& out, const std::string& pass_name) {
  std::vector<ValueId> outs;
  for (ValueId v : in.outputs()) outs.push_back(map[static_cast<size_t>(v)]);
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& name = in.value(in.outputs()[k]).name;
    if (!name.empty() && out.value(outs[k]).name.empty()) out.value(outs[k]).name = name;
  }
  out.set_outputs(outs);
  out.donations = in.donations;
  after_pass(out, pass_name);
}

std::vector<ValueId> mapped(const std::vector<ValueId>& values, const std::vector<ValueId>& map) {
  std::vector<ValueId> out;
  out.reserve(values.size());
  for (ValueId v : values) out.push_back(map[static_cast<size_t>(v)]);
  return out;
}

std::vector<ValueId> emit_in_place_of(ops::Builder& b, const ir::Node& n, Op op, std::vector<ValueId> in, Attrs attrs, ir::Path path,
                                      std::vector<ValueId>& map, const ir::Node* context) {
  const ir::Node& c = context ? *context : n;
  b.set_context(c.name, c.origin);
  auto outs = b.emit(op, std::move(in), std::move(attrs));
  b.graph().node(b.graph().num_nodes() - 1).path = path;
  for (size_t k = 0; k < outs.size() && k < n.outputs.size(); ++k) map[static_cast<size_t>(n.outputs[k])] = outs[k];
  return outs;
}

std::vector<ValueId> copy_node(ops::Builder& b, const ir::Node& n, std::vector<ValueId>& map) {
  return emit_in_place_of(b, n, n.op, mapped(n.inputs, map), n.attrs, n.path, map);
}

ValueId emit_native(ops::Builder& b, Op op, std::vector<ValueId> in, Attrs attrs) {
  ValueId v = b.emit(op, std::move(in), std::move(attrs))[0];
  b.graph().node(b.graph().num_nodes() - 1).path = ir::Path::native;
  return v;
}

Graph copy_rewriting(const Graph& in, const std::string& pass_name, const NodeRewrite& replace) {
  std::vector<ValueId> map;
  Graph out = begin_copy(in, map);
  ops::Builder b(out);
  for (int i = 0; i < in.num_nodes(); ++i)
    if (!replace(b, in.node(i), i, map)) copy_node(b, in.node(i), map);
  finish_copy(in, map, out, pass_name);
  return out;
}

Graph rewrite(const Graph& in, std::vector<Rule> rules, const std::string& pass_name, const RewriteOptions& opts) {
  Graph out;
  out.name = in.name;
  out.device = in.device;
  std::vector<ValueId> map(in.num_values(), ir::kNoValue);
  for (ValueId v : in.inputs()) {
    const ir::Value& val = in.value(v);
    map[static_cast<size_t>(v)] = out.add_input(opts.map_type ? opts.map_type(val.type) : val.type, val.name);
  }
  RewriteBuilder b(out, std::move(rules), pass_name);
  for (int i = 0; i < in.num_nodes(); ++i) {
    if (!opts.keep.empty() && !opts.keep[static_cast<size_t>(i)]) continue;
    const ir::Node& n = in.node(i);
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) {
      ValueId m = map[static_cast<size_t>(v)];
      if (m == ir::kNoValue) throw Error(ErrorKind::internal, cat(pass_name, ": ", ir::op_keyword(n.op), " uses a value that was dropped"));
      inputs.push_back(m);
    }
    Attrs attrs = n.attrs;
    if (opts.map_attrs) opts.map_attrs(attrs);
    b.set_context(n.name, n.origin);
    b.source_path = n.path;
    auto outs = b.emit(n.op, std::move(inputs), std::move(attrs));
    if (outs.size() != n.outputs.size())
      throw Error(ErrorKind::internal, cat(pass_name, ": a rewrite of ", ir::op_keyword(n.op), " returned ", outs.size(), " values for ",
                                           n.outputs.size()));
    for (size_t k = 0; k < outs.size(); ++k) {
      map[static_cast<size_t>(n.outputs[k])] = outs[k];
      const std::string& nm = in.value(n.outputs[k]).name;
      if (!nm.empty() && out.value(outs[k]).name.empty()) out.value(outs[k]).name = nm;
    }
  }
  std::vector<ValueId> outs;
  for (ValueId v : in.outputs()) outs.push_back(map[static_cast<size_t>(v)]);
  out.set_outputs(std::move(outs));
  out.donations = in.donations;  // after the outputs exist: RLX_VERIFY=2 checks partial graphs
  if (debug_at(3) && b.rewrites_applied()) log_line(cat(pass_name, ": ", b.rewrites_applied(), " rewrites"));
  after_pass(out, pass_name, opts.verify);
  return out;
}

}  // namespace rlx::passes
