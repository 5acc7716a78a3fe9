// Post-training static int8 quantization of a float inference graph: calibration batches run
// through the float model while observers watch every activation a layer writes; then the graph
// is rebuilt in integers — int8 values, int8 per-channel symmetric weights, int32 biases,
// dot_general/conv summing in i32, and requantize (fixed point) back to int8 with ReLU folded
// into its clamp. Float appears only at the edges: quantize_linear on the input and
// dequantize_linear on the output. Every integer between is what an int8 kernel, a
// microcontroller or an FPGA computes bit for bit.
//
// Layers handled: linear and conv2d (groups 1) with constant weights, relu, max_pool, reshape,
// adds of two values on the data path (residual connections: the integer add of
// passes/integer_ops.h, a ReLU after it folded into its clamp) and softmax over the last axis
// (the integer softmax: a table of exponentials). Any other op between the input and the output
// is refused by name.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/observer.h"
#include "rlx/tensor.h"

namespace rlx::quant {

struct PtqOptions {
  ObserverKind observer = ObserverKind::minmax;
  double percentile = 99.99;
  std::string device = "cpu";  // where calibration batches run
  // Grids already chosen for observed values, in PtqPlan::observed's order (activation QAT
  // learned them); the values without one (or past the list's end) are calibrated.
  std::vector<std::optional<QParams>> grids;
};

// Where the grids change: the linear/conv nodes between the input and the output, the ReLU
// folded into each (the only use of its result), and the values whose grids are chosen — the
// input, then each layer's output (after its folded ReLU), then each add's (after its folded
// ReLU) and softmax's output. Throws rlx::Error when there is no layer.
struct PtqPlan {
  std::vector<int> layers;
  std::map<int, int> folded_relu;  // layer or add node → its ReLU node
  std::vector<ir::ValueId> observed;
};
PtqPlan plan_ptq(const ir::Graph& g, ir::ValueId input, ir::ValueId output);

// One quantized layer, for the report.
struct PtqLayer {
  std::string name, op;
  double in_scale = 0, out_scale = 0;
  int64_t in_zero_point = 0, out_zero_point = 0;
  double min_weight_scale = 0, max_weight_scale = 0;
  bool relu = false;
};

struct PtqResult {
  ir::Graph graph;  // inputs: [the float input]; outputs: [the float output, dequantized]
  std::vector<PtqLayer> layers;
  int adds = 0, softmaxes = 0;  // integer adds and softmaxes in the graph
  QParams input, output;
};

// `float_graph`: any HIR/MIR graph; `weights` binds some of its inputs to tensors (parameters
// held as inputs by a training graph); other inputs besides `input` are fed zeros during
// calibration (labels of a loss nobody reads here). `calibration`: batches of the input.
PtqResult quantize_int8(const ir::Graph& float_graph, const std::map<ir::ValueId, Tensor>& weights, ir::ValueId input, ir::ValueId output,
                        const std::vector<Tensor>& calibration, const PtqOptions& options = {});

// real ≈ multiplier / 2^shift with multiplier in [2^30, 2^31) (or 0): requantize's operands.
std::pair<int64_t, int64_t> fixed_point_multiplier(double real);

}  // namespace rlx::quant
