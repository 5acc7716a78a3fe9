// RLX_CUDA_PROFILE=1: kernel times measured with CUDA events, summed per op and output type,
// printed to stderr (largest first) when the process exits.
#pragma once
#include <string>

namespace rlx::backends::cuda {

void profile_add(const std::string& label, double ms);

}  // namespace rlx::backends::cuda
