// rten operator attributes → ONNX attributes (names, encodings and defaults as ONNX has them).
#pragma once
#include <functional>
#include <string>

#include <onnx/onnx_pb.h>

#include "rten_generated.h"

namespace rlx::frontends::rten {

// ONNX's element type for an rten one (Int32 → INT64, see rten.h).
int32_t onnx_dtype(rlx::rten_fb::DataType t);

// Sets `node`'s attributes from `op`'s; attributes ONNX takes as inputs at opset 21 (Reduce*
// axes) become initializers of `graph`. `subgraph` converts an If/Loop body.
void attributes(const rlx::rten_fb::OperatorNode* op, ::onnx::NodeProto* node, ::onnx::GraphProto* graph,
                const std::function<void(const rlx::rten_fb::Graph*, ::onnx::GraphProto*)>& subgraph, const std::string& source);

}  // namespace rlx::frontends::rten
