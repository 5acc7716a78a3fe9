// A llama-family spec as the parallel planner sees it (dist/plan.h): sizes only.
#pragma once
#include <string>

#include "dist/plan.h"
#include "models/qwen3.h"

namespace rlx::models {

dist::DecoderShape decoder_shape(const LlamaSpec& spec, std::string name);

}  // namespace rlx::models
