// Device-resident state (runtime::Backend::make_resident): host tensors — KV caches — whose
// device copy every run uses in their place, so state updated in place by donated outputs
// stays on the GPU between runs and between executables (prefill and decode share it).
#pragma once
#include "rlx/tensor.h"

namespace rlx::backends::cuda {

// Uploads `t` (contiguous) once; true. A tensor already resident stays as it is.
bool make_resident(const Tensor& t);
// Copies the device copy back into `t` when `copy_back`, then frees it.
void release_resident(const Tensor& t, bool copy_back);
// The device copy of `t` when it is resident (same address and size), else nullptr.
void* resident_ptr(const Tensor& t);

}  // namespace rlx::backends::cuda
