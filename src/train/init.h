// Parameter initializers, seeded and reproducible.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "rlx/tensor.h"

namespace rlx::train {

enum class Init { zeros, normal, xavier_uniform, kaiming_uniform };

// fan_in/fan_out follow PyTorch: for a [out, in, k…] weight, fan_in = in·∏k, fan_out = out·∏k.
// kaiming_uniform uses a = √5 (torch.nn.Linear's default); normal uses `std`.
Tensor init_tensor(Init kind, std::vector<int64_t> shape, std::mt19937_64& rng, double std = 0.01);
// PyTorch's default bias of a layer with this fan-in: U(-1/√fan_in, 1/√fan_in).
Tensor init_bias(int64_t size, int64_t fan_in, std::mt19937_64& rng);

}  // namespace rlx::train
