// Text form of constant tensors, exact in both directions:
//   tensor<f32[3]>[1.0, 2.5, -0.0]   small tensors, element by element
//   tensor<f32[64]>splat(0.5)        every element equal
//   tensor<f32[1000]>0x0000803f…     anything else, the raw little-endian bytes
#pragma once
#include <string>
#include <string_view>

#include "rlx/tensor.h"

namespace rlx::ir {

std::string tensor_to_text(const Tensor& t);
Tensor tensor_from_text(std::string_view text, const std::string& what);

}  // namespace rlx::ir
