// Dense weights that view a mapped file, copied once into one block of host memory on huge pages
// (unless RLX_MMAP_WEIGHTS=1): every forward pass streams all of them, and the mapping's 4 KiB
// pages cost a TLB miss each (MiniLM at batch 1 ran ~2% slower straight from the mapping).
#pragma once
#include <map>
#include <string>

#include "rlx/tensor.h"

namespace rlx::models {

void copy_weights_to_one_block(std::map<std::string, Tensor>& weights, const std::string& what);

}  // namespace rlx::models
