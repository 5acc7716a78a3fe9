// One tensor inside a weight file, as stored: its file type (maybe quantized), row-major shape
// and a pointer to its bytes in the mapping. Quantized tensors stay packed here so that
// dequant_matmul kernels can consume them directly; dequantize() unpacks to f32 on request.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/weight_type.h"
#include "rlx/tensor.h"

namespace rlx::formats {

struct TensorView {
  std::string name;
  WeightType type = WeightType::f32;
  uint32_t ggml_type = 0;        // the GGUF type id as stored (names `unsupported` types)
  std::vector<int64_t> shape;    // row-major, outermost first (GGUF dims are reversed into this)
  const uint8_t* data = nullptr;
  size_t nbytes = 0;             // 0 for `unsupported` types, whose block size RLX does not know
  uint64_t file_offset = 0;      // where the bytes start in their file
  std::shared_ptr<void> owner;   // keeps the mapping (or buffer) alive

  int64_t numel() const;
  // "Q4_K", or the GGUF name of an unsupported type ("IQ2_XXS").
  std::string type_name() const;
};

// rlx::Tensor of the view's dtype and shape: zero-copy when the type is an rlx dtype and the
// bytes are aligned for it, a copy when misaligned. Throws for types with no rlx dtype (U32,
// F8_*, Q4_K …), saying to use dequantize().
Tensor to_tensor(const TensorView& view);

// A view of an rlx::Tensor (made contiguous first), for the writers. Keeps the tensor alive.
TensorView view_of(const std::string& name, const Tensor& tensor);

// A view that owns its bytes (for writers and tests).
TensorView owned_view(std::string name, WeightType type, std::vector<int64_t> shape, std::vector<uint8_t> bytes);

}  // namespace rlx::formats
