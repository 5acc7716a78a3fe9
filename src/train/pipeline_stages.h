// Pipeline-parallel training, part one: the forward graph cut into consecutive stages, one per
// rank. A cut is a value through which every path from the earlier nodes to the later ones passes
// (the activation between two layers): the stage before it sends that one tensor per micro-batch,
// the stage after receives it, and the gradient travels back the same way. Parameters and data
// inputs are not activations: every rank holds the batch, and each parameter lives in the one
// stage that reads it. Nodes computed from parameters alone (a weight's fake-quant) and constants
// go with the stage that consumes them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace rlx::train {

struct PipelineStage {
  // inputs = [its parameters…, the activation received (every stage but the first), the model's
  // data inputs it reads…]; outputs = [the activation it sends] or, for the last stage, the
  // model's outputs (the loss first).
  ir::Graph forward;
  std::vector<size_t> params;  // indices into the model's parameters, ascending
  std::vector<size_t> data;    // indices into the model's data inputs (0 = the first after the parameters)
  bool receives = false;       // has the activation input (every stage but the first)
  std::string sends;           // the cut value's name ("" for the last stage)
};

// Cuts `forward` (inputs = [params…, data…], outputs = [loss, extras…]) into `stages` stages at
// layer boundaries — a layer being a contraction with a parameter (matmul, linear, convolution);
// between two layers, the last place the cut property holds, so the bias and activation function
// stay with their layer — choosing the boundaries that minimise the largest stage's estimated
// multiply-adds (the latest where several tie). Throws
// rlx::Error naming what stands in the way: too few places to cut, a parameter read by two
// stages (tied weights), an output computed before the last cut.
std::vector<PipelineStage> split_pipeline(const ir::Graph& forward, size_t num_params, int stages);

// The estimated multiply-adds of one node for one sample (every symbol taken as 1): matmul,
// linear, dot_general and convolution count their contraction length per output element; others
// one per output element.
double node_cost(const ir::Graph& g, const ir::Node& n);

}  // namespace rlx::train
