// libFuzzer target: model.safetensors.index.json parsing (shard names must stay in the directory).
#include <cstdlib>
#include <string>

#include "formats/safetensors.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto idx = rlx::formats::parse_safetensors_index(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    for (const auto& [name, shard] : idx.weight_map)
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "..") std::abort();
  } catch (const rlx::Error&) {
  }
  return 0;
}
