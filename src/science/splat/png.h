// PNG images through libpng: float images in [0, 1] written as 8-bit RGB (or gray), rounded.
#pragma once
#include <cstdint>
#include <string>

namespace rlx::science::splat {

// pixels: height × width × channels floats (1 or 3 channels), clamped to [0, 1].
// Throws rlx::Error(io) naming the file when it cannot be written.
void write_png(const std::string& path, const float* pixels, int64_t width, int64_t height, int64_t channels);

}  // namespace rlx::science::splat
