// An .rten model's FlatBuffer (verified here) → an ONNX ModelProto: nodes, constants as
// initializers, value types, subgraphs, attributes (rten_attrs.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace onnx {
class ModelProto;
class NodeProto;
class GraphProto;
}

namespace rlx::frontends::rten {

// `model`: the FlatBuffer (8-byte aligned); `tensors`: the tensor-data section (null in a
// version 1 file).
std::shared_ptr<::onnx::ModelProto> convert_model(const uint8_t* model, size_t model_len, const uint8_t* tensors, size_t tensor_len,
                                                  const std::string& source);

}  // namespace rlx::frontends::rten
