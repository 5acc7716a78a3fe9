// Which nodes the vulkan device claims, and the family that prints each one's launches.
#include "backends/vulkan/kernels.h"

#include <algorithm>

#include "backends/vulkan/context.h"
#include "backends/vulkan/target.h"
#include "codegen/scalar.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

bool claims(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs, const Features& f) {
  if (op == ir::Op::constant) return true;
  // the 32-bit integer class checks the arithmetic it prints through its dialect (elementwise,
  // reductions) before an i64 store; these families add and multiply with the language's own
  // operators, so their i64 results are not claimed there
  if (f.int32_class && (op == ir::Op::cumsum || op == ir::Op::dot_general || (op == ir::Op::scatter && attrs.has("reduce") && attrs.s("reduce") != "none")))
    for (const ir::Type& o : out)
      if (o.dtype == DType::i64) return false;
  NodeTypes t{in, out, {}};
  return claims_elementwise(op, t, f) || claims_movement(op, t, attrs, f) || claims_reduce(op, t, attrs, f) || claims_matmul(op, t, attrs, f) ||
         claims_quant(op, t, attrs, f) || claims_region(op, t, attrs, f) ||
         claims_attention(op, t, attrs, f) || claims_rope(op, t, attrs, f) ||
         claims_norm(op, t, attrs, f) || claims_conv(op, t, attrs, f) ||
         claims_sort(op, t, attrs, f) || claims_cumsum(op, t, f);
}

bool claims_op(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::constant:
    case Op::iota:
    case Op::reshape:
    case Op::transpose:
    case Op::broadcast:
    case Op::slice:
    case Op::concat:
    case Op::pad:
    case Op::gather:
    case Op::scatter:
    case Op::reduce:
    case Op::attention:
    case Op::rope:
    case Op::rms_norm:
    case Op::conv:
    case Op::sort:
    case Op::cumsum:
    case Op::topk:
    case Op::layer_norm:
    case Op::fused_reduce:
    case Op::elementwise_region:
    case Op::dequantize:
    case Op::dequant_matmul:
    case Op::dot_general: return true;
    default: return codegen::is_elementwise(op);
  }
}

bool implements_variant(ir::Op op, const std::string& attr) {
  switch (op) {
    case ir::Op::dequant_matmul: return attr == "glu" || attr == "norm_eps";
    case ir::Op::rope: return attr == "norm_eps" || attr == "append_axis";
    case ir::Op::attention: return attr == "compute";
    case ir::Op::rms_norm:
    case ir::Op::layer_norm: return attr == "out";
    default: return false;
  }
}

std::string node_label(const ir::Node& n, int i) {
  return cat(ir::op_keyword(n.op), n.name.empty() ? "" : cat(" \"", n.name, "\""), " (node ", i, ")");
}

void throw_index_error(const uint32_t* e, const std::function<std::string(uint32_t step)>& label) {
  if (!e[0]) return;
  if (e[0] == 2)
    // unsupported, not a failure: the device cannot hold this value, so it refuses the run
    throw Error(ErrorKind::unsupported, cat(label(e[1]), ": an i64 result does not fit the 32-bit integers this device's kernels compute with (HLSL through glslang has no "
                                        "64-bit int); run the graph on a device with 64-bit integers"));
  const int64_t v = static_cast<int64_t>(uint64_t{e[2]} | uint64_t{e[3]} << 32), n = static_cast<int64_t>(uint64_t{e[4]} | uint64_t{e[5]} << 32);
  throw Error(ErrorKind::runtime, cat(label(e[1]), ": index ", v, " is out of range [0, ", n, ")"));
}

std::vector<Launch> launches(const ir::Node& n, const NodeTypes& t, size_t& scratch_bytes) {
  scratch_bytes = 0;
  const Features& f = current_target().features;
  if (claims_elementwise(n.op, t, f)) return elementwise_launches(n, t);
  if (claims_movement(n.op, t, n.attrs, f)) return movement_launches(n, t, scratch_bytes);
  if (claims_reduce(n.op, t, n.attrs, f)) return reduce_launches(n, t, scratch_bytes);
  if (claims_matmul(n.op, t, n.attrs, f)) return matmul_launches(n, t, scratch_bytes);
  if (claims_quant(n.op, t, n.attrs, f)) return quant_launches(n, t);
  if (claims_region(n.op, t, n.attrs, f)) return region_launches(n, t);
  if (claims_attention(n.op, t, n.attrs, f)) return attention_launches(n, t, scratch_bytes);
  if (claims_rope(n.op, t, n.attrs, f)) return rope_launches(n, t);
  if (claims_norm(n.op, t, n.attrs, f)) return norm_launches(n, t);
  if (claims_conv(n.op, t, n.attrs, f)) return conv_launches(n, t);
  if (claims_sort(n.op, t, n.attrs, f)) return sort_launches(n, t);
  if (claims_cumsum(n.op, t, f)) return cumsum_launches(n, t);
  throw Error(ErrorKind::unsupported, cat("vulkan: no kernel for ", ir::op_keyword(n.op)));
}

std::vector<NodeLaunches> graph_launches(const ir::Graph& lir, size_t& scratch_bytes) {
  scratch_bytes = 0;
  std::vector<NodeLaunches> out;
  for (int i = 0; i < lir.num_nodes(); ++i) {
    const ir::Node& n = lir.node(i);
    if (n.op == ir::Op::constant) continue;
    bool all_views = true;
    for (ir::ValueId v : n.outputs) all_views = all_views && lir.placement[static_cast<size_t>(v)].kind == ir::Placement::Kind::view;
    if (all_views) continue;
    NodeTypes t;
    for (ir::ValueId v : n.inputs) t.in.push_back(lir.type(v));
    for (ir::ValueId v : n.outputs) t.out.push_back(lir.type(v));
    size_t scratch = 0;
    try {
      out.push_back({i, launches(n, t, scratch)});
    } catch (const Error& e) {
      throw Error(e.kind(), cat(node_label(n, i), ": ", e.what()));
    }
    scratch_bytes = std::max(scratch_bytes, scratch);
  }
  return out;
}

}  // namespace rlx::backends::vulkan
