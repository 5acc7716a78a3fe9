#include "quant/weight_only.h"

#include <set>

#include "quant/needed.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::quant {

WeightOnlyResult quantize_weights(const ir::Graph& g, const std::map<ir::ValueId, Tensor>& weights, ir::ValueId input, ir::ValueId output,
                                  const ops::WeightGrid& grid) {
  const std::set<ir::ValueId> needed = values_needed_by(g, output);
  WeightOnlyResult r;
  r.graph.name = g.name + "_" + grid.str();
  ops::Builder b(r.graph);
  std::map<ir::ValueId, ir::ValueId> map;
  // Weights whose every use is a linear's weight operand: kept as ggml blocks and multiplied by
  // dequant_matmul where the grid tiles 32-value blocks; others are decoded once in the graph.
  std::map<ir::ValueId, bool> linear_only;
  for (const ir::Node& n : g.nodes()) {
    bool want = false;
    for (ir::ValueId o : n.outputs) want = want || needed.count(o);
    if (!want) continue;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      auto [it, fresh] = linear_only.emplace(n.inputs[i], true);
      it->second = it->second && n.op == ir::Op::linear && i == 1;
    }
  }
  std::map<ir::ValueId, ops::GridBlocks> packed;  // the result graph's weight values that are blocks
  for (ir::ValueId v : g.inputs()) {
    if (!needed.count(v)) continue;
    if (v == input) {
      map[v] = r.graph.add_input(g.type(v), g.value(v).name);
      continue;
    }
    auto w = weights.find(v);
    if (w == weights.end()) throw Error(ErrorKind::invalid_argument, cat("weight-only quantization: the output needs input '", g.value(v).name, "', which is not bound"));
    b.set_context(g.value(v).name, "");
    if (w->second.rank() >= 2) {
      ops::GridCodes c = ops::weight_grid_codes(w->second, grid);
      ops::GridBlocks blocks = ops::packed_grid_blocks(c, grid.bits);
      ++r.weights;
      r.float_bytes += 4 * w->second.numel();
      if (!blocks.type.empty() && w->second.rank() == 2 && linear_only[v]) {
        map[v] = b.constant(blocks.bytes);
        r.packed_bytes += static_cast<int64_t>(blocks.bytes.nbytes());
        packed.emplace(map[v], std::move(blocks));
        ++r.packed_weights;
      } else {
        map[v] = ops::dequantized_weight(b, c, w->second.shape());
        r.packed_bytes += (static_cast<int64_t>(c.codes.size()) * grid.bits + 7) / 8 + 4 * static_cast<int64_t>(c.scales.size() + c.mins.size());
      }
    } else {
      map[v] = b.constant(w->second.contiguous());
    }
  }
  for (const ir::Node& n : g.nodes()) {
    bool want = false;
    for (ir::ValueId o : n.outputs) want = want || needed.count(o);
    if (!want) continue;
    std::vector<ir::ValueId> in;
    for (ir::ValueId v : n.inputs) in.push_back(map.at(v));
    b.set_context(n.name, n.origin);
    if (auto p = packed.find(n.op == ir::Op::linear && in.size() >= 2 ? in[1] : -1); p != packed.end()) {
      // linear(x, W, bias?) with W as blocks: the product, then the bias
      ir::ValueId y = ops::packed_grid_product(b, in[0], in[1], p->second, b.shape(in[1])[0].value());
      map[n.outputs[0]] = in.size() > 2 ? b.add(y, in[2]) : y;
      continue;
    }
    std::vector<ir::ValueId> out = b.emit(n.op, in, n.attrs);
    for (size_t i = 0; i < out.size(); ++i) map[n.outputs[i]] = out[i];
  }
  r.graph.set_outputs({map.at(output)});
  return r;
}

}  // namespace rlx::quant
