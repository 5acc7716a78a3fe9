// oneDNN convolution for the cpu device's mir.conv (see onednn_conv.cpp).
#pragma once
#include "backends/cpu/onednn_matmul.h"

namespace rlx::backends::cpu {

// y = conv(x, w) with x [N, C, spatial…], w [O, C/groups, kernel…], y [N, O, out…], all
// contiguous, 1 to 3 spatial dims.
struct ConvShape {
  std::vector<int64_t> x, w, y;
  std::vector<int64_t> strides, dilation, pad_lo, pad_hi;
  int64_t groups = 1;
  DType dtype = DType::f32;      // x and w
  DType out = DType::f32;        // y: the same, or i32 sums of i8 products (VNNI)
};

// A conv whose kernel window is larger than its output (a weight gradient written as a
// convolution: x transposed to [C, N, …], the output gradient as the kernel [O, N, …]) runs as
// oneDNN's backward-weights problem; others as its forward convolution.
bool conv_is_weight_gradient(const ConvShape& s);

// `const_w`: w's bytes when the weights are a compile-time constant (reordered once, now).
// Returns an empty kernel when oneDNN cannot take this convolution (the caller falls back).
HostKernel make_onednn_conv(const ConvShape& s, const void* const_w);

}  // namespace rlx::backends::cpu
