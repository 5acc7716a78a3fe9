// The one rewrite mechanism. A pass copies a graph node by node into a new graph; every node
// (including the nodes a rule emits) is offered to the pass's rules, which may replace it.
// Decomposition, legalization, constant folding, CSE and specialization are all rule sets.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/builder.h"

namespace rlx::passes {

using ir::Attrs;
using ir::Graph;
using ir::Op;
using ir::Type;
using ir::ValueId;

class RewriteBuilder;

// Returns replacement values (after emitting through `b`), or nullopt to leave the node alone.
using RuleFn = std::function<std::optional<std::vector<ValueId>>(RewriteBuilder& b, Op op, const std::vector<ValueId>& in,
                                                                 const Attrs& attrs)>;
struct Rule {
  std::string name;
  RuleFn apply;
};

class RewriteBuilder : public ops::Builder {
 public:
  RewriteBuilder(Graph& out, std::vector<Rule> rules, std::string pass_name);
  // Offers the node to the rules first; emits it unchanged when none applies.
  std::vector<ValueId> emit(Op op, std::vector<ValueId> inputs, Attrs attrs = {}) override;
  // Emits without consulting the rules (a rule keeping its own node uses this).
  std::vector<ValueId> emit_plain(Op op, std::vector<ValueId> inputs, Attrs attrs = {}, ir::Path path = ir::Path::unresolved);
  int rewrites_applied() const { return applied_; }
  const std::string& pass_name() const { return pass_; }
  // The path the node being copied had in the source graph (kept when no rule fires).
  ir::Path source_path = ir::Path::unresolved;
  // While rules run: the path of the node they are looking at (unresolved for new nodes).
  ir::Path inherited_path() const { return inherited_; }

 private:
  std::vector<Rule> rules_;
  std::string pass_;
  int depth_ = 0;
  int applied_ = 0;
  ir::Path inherited_ = ir::Path::unresolved;
};

struct RewriteOptions {
  // Nodes to drop instead of copying (dead code), indexed by source node; empty keeps all.
  std::vector<bool> keep;
  // Applied to each node's attributes and each input type before emission (specialization).
  std::function<void(Attrs&)> map_attrs;
  std::function<Type(const Type&)> map_type;
  // Verify the result (when RLX_VERIFY >= 1); legalization turns it off until it knows the
  // graph is legal.
  bool verify = true;
};

// Copies `in` through the rules into a fresh graph. Inputs, outputs, names and origins carry
// over. Verifies the result when RLX_VERIFY >= 1 and dumps it at RLX_DEBUG >= 5.
Graph rewrite(const Graph& in, std::vector<Rule> rules, const std::string& pass_name, const RewriteOptions& opts = {});

// Debug ladder hooks shared by all passes (RLX_DEBUG 3 and 5, RLX_DUMP_DIR).
void after_pass(const Graph& g, const std::string& pass_name, bool verify = true);

// For passes that copy a graph node by node: a fresh graph with `in`'s name, device and inputs
// (map[v] = the copy of each input), and the finish — outputs mapped (their names kept where
// the copy has none), donations carried over, after_pass run.
Graph begin_copy(const Graph& in, std::vector<ValueId>& map);
void finish_copy(const Graph& in, const std::vector<ValueId>& map, Graph& out, const std::string& pass_name);
// The copies of source values.
std::vector<ValueId> mapped(const std::vector<ValueId>& values, const std::vector<ValueId>& map);
// Emits `op` with `in` and `attrs` in place of source node n, under the name and origin of
// `context` (n when null), marked `path`; n's outputs are mapped to the results.
std::vector<ValueId> emit_in_place_of(ops::Builder& b, const ir::Node& n, Op op, std::vector<ValueId> in, Attrs attrs, ir::Path path,
                                      std::vector<ValueId>& map, const ir::Node* context = nullptr);
// n copied as it is: its op, its inputs' copies, its attributes and path.
std::vector<ValueId> copy_node(ops::Builder& b, const ir::Node& n, std::vector<ValueId>& map);

// Emits `op` (a node of the device's own: path native) and returns its first output.
ValueId emit_native(ops::Builder& b, Op op, std::vector<ValueId> in, Attrs attrs);

// The node-by-node copy a fusion pass makes once it has planned: for each source node in order,
// `replace` may emit what stands in its place (mapping its outputs) or drop it, and returns
// true; otherwise the node is copied as it is. Begins and finishes the copy as above.
using NodeRewrite = std::function<bool(ops::Builder& b, const ir::Node& n, int index, std::vector<ValueId>& map)>;
Graph copy_rewriting(const Graph& in, const std::string& pass_name, const NodeRewrite& replace);

}  // namespace rlx::passes
