#include "train/init.h"

#include <cmath>

namespace rlx::train {

namespace {
void fans(const std::vector<int64_t>& shape, double& fan_in, double& fan_out) {
  double receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= static_cast<double>(shape[i]);
  fan_in = shape.size() > 1 ? static_cast<double>(shape[1]) * receptive : static_cast<double>(shape.empty() ? 1 : shape[0]);
  fan_out = shape.empty() ? 1 : static_cast<double>(shape[0]) * receptive;
}
}  // namespace

Tensor init_tensor(Init kind, std::vector<int64_t> shape, std::mt19937_64& rng, double std) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n), 0.0);
  double fan_in = 1, fan_out = 1;
  fans(shape, fan_in, fan_out);
  switch (kind) {
    case Init::zeros: break;
    case Init::normal: {
      std::normal_distribution<double> d(0.0, std);
      for (auto& x : v) x = d(rng);
      break;
    }
    case Init::xavier_uniform: {
      double bound = std::sqrt(6.0 / (fan_in + fan_out));
      std::uniform_real_distribution<double> d(-bound, bound);
      for (auto& x : v) x = d(rng);
      break;
    }
    case Init::kaiming_uniform: {
      double gain = std::sqrt(2.0 / (1 + 5.0));  // a = √5
      double bound = gain * std::sqrt(3.0 / fan_in);
      std::uniform_real_distribution<double> d(-bound, bound);
      for (auto& x : v) x = d(rng);
      break;
    }
  }
  return Tensor::from_f64(DType::f32, std::move(shape), v);
}

Tensor init_bias(int64_t size, int64_t fan_in, std::mt19937_64& rng) {
  double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  std::uniform_real_distribution<double> d(-bound, bound);
  std::vector<double> v(static_cast<size_t>(size));
  for (auto& x : v) x = d(rng);
  return Tensor::from_f64(DType::f32, {size}, v);
}

}  // namespace rlx::train
