// Device-resident state (runtime::Backend::make_resident) for the vulkan device: a host tensor
// (a KV cache) gets a region of the device pool, and every plan run with that tensor reads and
// updates the region instead — no copy between host and device per step.
#pragma once
#include <optional>

#include "backends/vulkan/context.h"
#include "rlx/tensor.h"

namespace rlx::backends::vulkan {

bool make_resident(const Tensor& t);                   // uploads once; true
void release_resident(const Tensor& t, bool copy_back);  // downloads when asked, then frees
std::optional<Region> resident_region(const Tensor& t);  // the device copy, when kept

}  // namespace rlx::backends::vulkan
