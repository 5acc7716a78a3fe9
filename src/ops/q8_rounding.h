// The definition of 8-bit activations (act=q8 on dequant_matmul and expert_matmul): x in
// blocks of 32 along its last axis, each rounded to q = round(x·127/max|x|) and back to q·max|x|/127.
#pragma once
#include "ops/builder.h"

namespace rlx::ops {

// x[..., k] (f32, k a multiple of 32) → the rounded values, f32.
ValueId round_to_q8_blocks(Builder& b, ValueId x, int64_t k);

}  // namespace rlx::ops
