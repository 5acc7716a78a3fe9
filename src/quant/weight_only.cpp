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
      map[v] = ops::dequantized_weight(b, c, w->second.shape());
      ++r.weights;
      r.packed_bytes += (static_cast<int64_t>(c.codes.size()) * grid.bits + 7) / 8 + 4 * static_cast<int64_t>(c.scales.size());
      r.float_bytes += 4 * w->second.numel();
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
    std::vector<ir::ValueId> out = b.emit(n.op, in, n.attrs);
    for (size_t i = 0; i < out.size(); ++i) map[n.outputs[i]] = out[i];
  }
  r.graph.set_outputs({map.at(output)});
  return r;
}

}  // namespace rlx::quant
