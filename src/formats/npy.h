// NumPy .npy files (format versions 1–3): every dtype RLX has, little- or big-endian, C or
// Fortran order on read; C order little-endian on write. bfloat16 (not a NumPy dtype) is
// written as float32.
#pragma once
#include <string>

#include "rlx/tensor.h"

namespace rlx::formats {

// Throws rlx::Error(io) when unreadable, rlx::Error(format) naming the problem when malformed
// or of a dtype RLX lacks (uint16/32/64, complex128, strings, objects).
Tensor read_npy(const std::string& path);
Tensor parse_npy(const uint8_t* data, size_t size, const std::string& what);
void write_npy(const std::string& path, const Tensor& t);
std::string npy_bytes(const Tensor& t);

}  // namespace rlx::formats
