// Reading ONNX protobuf files: the model, its tensors (raw, typed or external data) and the
// test-data tensors of the backend suite. Every count and offset is checked; nothing aborts.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "rlx/tensor.h"

namespace rlx::frontends::onnx {

// Parses a .onnx file. Throws rlx::Error(io) when it cannot be read and rlx::Error(format)
// naming the file when it is not a well-formed ModelProto (truncated, corrupted, not ONNX).
std::shared_ptr<::onnx::ModelProto> load_model(const std::string& path);

// True when the first bytes look like an ONNX ModelProto (ir_version field first).
bool looks_like_onnx(const std::string& path);

// ONNX TensorProto.DataType → RLX dtype; nullopt for the types RLX has no dtype for
// (string, uint16/32/64, complex128).
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
// "FLOAT", "INT64", "STRING" …
std::string onnx_type_name(int32_t onnx_type);
// Bytes of one element (0 for strings and unknown types).
size_t onnx_type_size(int32_t onnx_type);

// Shape and byte size of a tensor without reading its data.
std::vector<int64_t> tensor_dims(const ::onnx::TensorProto& t, const std::string& what);
// Converts a tensor. `base_dir` resolves external data, which must stay inside it. `owner`
// (may be null) keeps the proto alive when raw data is viewed in place instead of copied.
// `what` names the tensor in errors ("initializer 'conv1.weight'").
Tensor tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir, const std::string& what,
                         std::shared_ptr<void> owner = nullptr);

// A TensorProto written to its own .pb file (backend test data: input_0.pb, output_0.pb).
::onnx::TensorProto read_tensor_file(const std::string& path);

}  // namespace rlx::frontends::onnx
