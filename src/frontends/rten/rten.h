// .rten model files (rten's format: a header, a FlatBuffers graph, a tensor-data section; format
// versions 1 and 2) read as an ONNX ModelProto, so they take the same import path as ONNX:
// operators are ONNX's, attributes become ONNX attributes, constants become initializers.
// rten narrows ONNX's int64 to int32; RLX widens every Int32 back to int64 (shape arithmetic,
// indices and graph inputs alike), and turns int32 constants fed where ONNX wants booleans
// (Where, Not, And, Or, Xor) back into booleans.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace onnx {
class ModelProto;
}

namespace rlx::frontends::rten {

// True when the file starts like an .rten model (version 2's header, or version 1's bare
// FlatBuffer with the RTEN identifier).
bool is_rten_file(const std::string& path);
bool looks_like_rten(const uint8_t* data, size_t size);

// The model as ONNX (opset 21 of the standard domain). Throws rlx::Error(format) naming
// `source` and what is wrong (header, offsets, an invalid FlatBuffer, a constant outside the
// tensor data, a node index out of range), rlx::Error(unsupported) for a format version or
// element type RLX does not read.
std::shared_ptr<::onnx::ModelProto> rten_to_onnx(const uint8_t* data, size_t size, const std::string& source);
std::shared_ptr<::onnx::ModelProto> load_rten(const std::string& path);

}  // namespace rlx::frontends::rten
