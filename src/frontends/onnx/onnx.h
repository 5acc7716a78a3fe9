// ONNX models into the RLX IR (DESIGN §7): any opset of the standard domain, common
// com.microsoft contrib ops, initializers (external data included), Constant nodes, symbolic
// input dims and If/Loop/Scan subgraphs (inlined). `rlx info`, `rlx run`, `rlx compile` and
// `rlx onnx-suite` go through here.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rlx/tensor.h"

namespace onnx {
class ModelProto;
}

namespace rlx::frontends::onnx {

struct ImportOptions {
  // Concrete tensors for graph inputs, by name. Their shapes replace the model's dims, and a
  // value the graph uses as a static argument (a Reshape's shape, Slice's starts, TopK's k …)
  // is read from them: the graph is then specialised to those values.
  std::map<std::string, Tensor> inputs;
  // Concrete shapes only (no values) for inputs, by name; the others keep symbolic dims.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Sequence-typed inputs (and optional inputs holding a sequence), by name. An optional input
  // given in neither map is empty.
  std::map<std::string, std::vector<Tensor>> sequence_inputs;
  // QLinearMatMul with constant symmetric int8 weights written in QDQ form (DQ · DQ → Q, in f64:
  // exact, as ONNX defines it) for passes::fold_qdq to make an integer layer — what `rlx export`
  // asks for int8 targets. Otherwise it runs as one i8 × i8 product (the int8 kernels).
  bool qlinear_matmul_as_qdq = false;
};

struct ImportedModel {
  std::shared_ptr<ir::Graph> graph;  // HIR, inputs and outputs named as in the model
  // Graph inputs in order (initializers excluded); a sequence input of n tensors becomes n
  // inputs "name[0]" … "name[n-1]".
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;  // likewise for sequence outputs
  // Where each input comes from: the model input's name and the item of a sequence (−1: a tensor).
  std::vector<std::pair<std::string, int>> input_sources;
  // The model's outputs: name, kind and how many of `outputs` they span (in order).
  struct OutputGroup {
    std::string name;
    enum class Kind { tensor, sequence, none } kind = Kind::tensor;
    int count = 1;
  };
  std::vector<OutputGroup> output_groups;
  std::vector<std::string> specialized_inputs;  // inputs whose values were baked in
  // Every tensor a node of the main graph produces, in node order: its name in the model and the
  // value holding it (what `rlx diff --against onnxruntime` compares, name by name).
  std::vector<std::pair<std::string, ir::ValueId>> node_tensors;
  std::map<std::string, int64_t> opsets;         // domain ("" = ai.onnx) → version

  // The tensors to run the graph with, in input order, from the options it was imported with.
  std::vector<Tensor> feed(const ImportOptions& options) const;
};

// Reads and imports a model. Unsupported operators and dtypes fail first, all listed in one
// rlx::Error(unsupported) (op, opset, dtypes, node), before any initializer is read.
ImportedModel import_model(const std::string& path, const ImportOptions& options = {});
ImportedModel import_model(std::shared_ptr<::onnx::ModelProto> model, const std::string& base_dir, const ImportOptions& options = {});

// What `rlx info model.onnx` shows, read without materializing any initializer.
struct ModelSummary {
  int64_t ir_version = 0;
  std::string producer;
  std::map<std::string, int64_t> opsets;
  struct Io {
    std::string name;
    std::string dtype;               // "f32", or the ONNX name when RLX has none ("STRING")
    std::vector<std::string> shape;  // dims as text ("N", "3", "?")
  };
  std::vector<Io> inputs, outputs;
  std::map<std::string, int64_t> op_histogram;  // "Conv", "com.microsoft.FusedMatMul" …
  int64_t nodes = 0, initializers = 0, initializer_bytes = 0, parameters = 0;
  std::vector<std::string> unsupported;  // one line per unsupported node (empty when all map)
};
ModelSummary summarize_model(const std::string& path);

// True for a file that looks like an ONNX ModelProto.
bool is_onnx_file(const std::string& path);

}  // namespace rlx::frontends::onnx
