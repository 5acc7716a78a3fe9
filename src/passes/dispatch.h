// The dispatch contract (DESIGN §3): every node resolves to native, common-ir (decomposed),
// rewritten, or unsupported — and unsupported fails compilation listing every such node.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace rlx::passes {

// What a device can run natively. Backends implement it; the legalizer only asks.
class KernelClaims {
 public:
  virtual ~KernelClaims() = default;
  virtual std::string name() const = 0;
  // Does the device have a kernel for this op with these types and attributes? Fused variants
  // (ops.def's "+name" attributes) are claimed by allow-list: a node carrying one the device
  // does not implement is not claimed, whatever claims_kernel would say.
  bool claims(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const;

 protected:
  virtual bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const = 0;
  // The fused variants of `op` the device's kernels implement (attribute names; none by default).
  virtual bool implements_variant(ir::Op, const std::string& /*attr*/) const { return false; }
};

enum class Policy { prefer_native, force_common };
Policy policy_from_name(const std::string& name);  // throws rlx::Error naming the choices
const char* policy_name(Policy p);

struct DispatchOptions {
  Policy policy = Policy::prefer_native;
  // Per-op overrides: "native" or "common" by op name ("softmax", "hir.softmax").
  std::map<std::string, std::string> overrides;
};

struct DispatchReport {
  struct Row {
    int native = 0, common_ir = 0, rewritten = 0, unsupported = 0;
  };
  std::string device;
  Policy policy = Policy::prefer_native;
  std::map<std::string, Row> rows;          // by op keyword
  std::vector<std::string> unsupported;     // one line per unsupported node
  std::vector<std::string> rewrites;        // which rewrite made which op legal
  // The same decisions by where the nodes sit in the model: the model-level name up to its first
  // index ("layers.3"), or its first part ("embed_tokens", "lm_head"). One rank of a tensor- or
  // pipeline-parallel job shows here which layers it runs and how.
  std::map<std::string, Row> placement;
  std::string str() const;                  // the table printed by --report
  std::string placement_str() const;        // placement, consecutive layers that resolve alike merged
  std::string json() const;                 // ops, unsupported, placement
  bool ok() const { return unsupported.empty(); }
};

// "layers.3.attn.q_proj" → "layers.3"; "lm_head" → "lm_head"; "" → "(unnamed)".
std::string placement_group(const std::string& node_name);

}  // namespace rlx::passes
