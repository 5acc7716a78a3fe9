// IDX files (the MNIST format), plain or gzip-compressed: a magic number with the element type
// and rank, big-endian dims, then the data. Every count is checked against the file size.
#pragma once
#include <string>

#include "rlx/tensor.h"

namespace rlx::formats {

// u8 images come back as u8 tensors of the stored shape ([N, 28, 28] …). Throws rlx::Error
// naming the file, field and byte offset for anything malformed.
Tensor read_idx(const std::string& path);

}  // namespace rlx::formats
