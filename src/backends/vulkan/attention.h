// hir.attention's shape as the vulkan schedules print it (attention.cpp's row and block
// kernels, attention_coop.cpp's tensor-core kernel): sizes in bhsd order, each operand's
// element strides of (b, h, s, d) in its own layout, and the pieces every schedule prints alike.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/vulkan/kernels.h"
#include "rlx/dtype.h"

namespace rlx::backends::vulkan {

struct AttentionShape {
  int64_t B = 0, Hq = 0, Sq = 0, D = 0, Hk = 0, Sk = 0, Dv = 0, groups = 1;
  std::vector<int64_t> qst, kst, vst, ost;
  DType d = DType::f32, md = DType::f32;  // the operands' dtype, the products'
  bool bias = false;
  DType bias_dtype = DType::f32;
  // GLSL defining uint rlx_lo(uint i) and rlx_hi(uint i): the keys [lo, hi) row i may see
  std::string bounds;
  // statements taking a raw score `s` of row i, key j (batch b, head h) to the softmax's input:
  // rounding, scale, soft cap, bias
  std::function<std::string(const std::string& indent)> finish_score;
};

bool attention_coop_fits(const AttentionShape& a, const Features& f);
// Keys and values staged as f16 in scratch, then the products; operands bound as 16-byte units
// (the caller records a fallback for views that start mid-unit).
std::vector<Launch> attention_coop(const AttentionShape& a, const Features& f, size_t& scratch);

}  // namespace rlx::backends::vulkan
