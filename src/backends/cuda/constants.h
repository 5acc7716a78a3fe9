// Constants (weights) on the device: uploaded once and shared by every executable that holds
// the same host tensor — the shape buckets of one model share their weights.
#pragma once
#include <memory>

#include "backends/cuda/device.h"
#include "rlx/tensor.h"

namespace rlx::backends::cuda {

struct DeviceConstant {
  Tensor host;  // kept alive so that its address cannot be reused while the upload is cached
  DeviceBuffer buffer;
  explicit DeviceConstant(const Tensor& t);
};

// The device copy of a contiguous host tensor, uploaded on first use.
std::shared_ptr<DeviceConstant> device_constant(const Tensor& t);

}  // namespace rlx::backends::cuda
