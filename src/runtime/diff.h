// Where two runs of a graph part ways (`rlx diff`): every node's outputs are exposed, the graph
// runs on the device under test and on the one it is checked against (the reference, say), and
// the values are compared in topological order. The first one beyond tolerance names the node
// to look at — its text line, location and source — and a table ranks the largest errors.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rlx/tensor.h"

namespace rlx::runtime {

// allclose: |got − want| ≤ atol + rtol·|want| for every element; NaN must meet NaN. Zero (the
// default) picks by dtype: f32/f64 rtol 1e-3 atol 1e-4, f16/bf16 rtol 2e-2 atol 1e-2; integers
// and booleans must be equal.
struct DiffTolerance {
  double rtol = 0, atol = 0;
};

struct ValueDiff {
  int node = -1;        // the producing node's index in the graph
  std::string ir;       // its text line (long constants cut short)
  std::string name;     // the node's name (its source node, for imported models)
  std::string origin;   // where it came from ("onnx.Gemm", "hir.linear", …)
  std::string value;    // the value's name, when it has one
  std::string dtype;
  std::vector<int64_t> shape;
  double max_abs = 0, max_rel = 0;
  int64_t mismatches = 0, numel = 0;
  bool exceeds = false;
};

struct DiffReport {
  std::string device, against;
  std::vector<ValueDiff> values;  // every exposed value, in topological order
  int first = -1;                 // index into values of the first beyond tolerance; −1: none
  std::string str(int top = 10) const;
  std::string json(int top = 10) const;
};

// What the device under test runs when it is not exactly what the other side runs: the same nodes
// in the same order, but a constant or an input changed — the self-check of `rlx diff
// --flip-weight`, which must then name the weight's first consumer.
struct UnderTest {
  const ir::Graph* graph = nullptr;          // null: the graph itself
  const std::vector<Tensor>* inputs = nullptr;  // null: the same inputs
};

// Runs `graph` with every node output exposed on `device` and on `against`, with the same inputs
// (in the graph's input order), and compares.
DiffReport diff_runs(const ir::Graph& graph, const std::vector<Tensor>& inputs, const std::string& device, const std::string& against,
                     const DiffTolerance& tolerance = {}, const UnderTest& under_test = {});

// Runs `graph` on `device` with `values` exposed and compares each with `expected` — another
// runtime's tensors for the same values, in the same order (onnxruntime's for an imported
// model's node outputs) — labelled `against` in the report.
DiffReport diff_values(const ir::Graph& graph, const std::vector<Tensor>& inputs, const std::string& device, const std::vector<ir::ValueId>& values,
                       const std::vector<Tensor>& expected, const std::string& against, const DiffTolerance& tolerance = {});

// Changes the first element of the weight named `name` — a named constant of `graph` (an ONNX
// initializer's, say) or one of its inputs — negating it (setting it to one where it is zero).
// Throws rlx::Error listing the names when there is none such.
void flip_weight(ir::Graph& graph, std::vector<Tensor>& inputs, const std::string& name);

}  // namespace rlx::runtime
