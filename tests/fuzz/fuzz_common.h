// Shared by the fuzz targets: touch every byte a reader hands out, so that a view pointing
// outside its input is caught by ASan, and check that what was read writes and reads back.
#pragma once
#include <cstdint>
#include <cstdlib>

#include "formats/quant.h"
#include "formats/tensor_view.h"

namespace rlx::formats::fuzz {

inline void exercise(const TensorView& t) {
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < t.nbytes; ++i) sink = sink ^ t.data[i];
  if (can_dequantize(t.type) && t.numel() <= (int64_t{1} << 16)) (void)dequantize(t);
  if (weight_type_dtype(t.type) && t.nbytes <= (size_t{1} << 20)) (void)to_tensor(t);
}

// A reader accepted its own writer's output once and then refused it: a bug, not bad input.
[[noreturn]] inline void round_trip_failed() { std::abort(); }

}  // namespace rlx::formats::fuzz
