// Sentence pooling as graph ops, exactly as sentence-transformers' Pooling and Normalize
// modules compute it (including their clamps), so results match to rounding.
#pragma once
#include "models/sentence_layout.h"
#include "ops/builder.h"

namespace rlx::models {

// hidden f32[B, S, H], mask i64[B, S] (1 token, 0 padding) → f32[B, H × modes], normalized when
// the spec says so.
ir::ValueId emit_pooling(ops::Builder& b, ir::ValueId hidden, ir::ValueId mask, const PoolingSpec& pooling);

}  // namespace rlx::models
