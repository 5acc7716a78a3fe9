// The safetensors JSON header, parsed by a streaming handler that enforces its exact shape
// (object of objects of a dtype string, a shape array and two offsets) while it reads, so
// nothing unexpected is ever built in memory. Internal to formats/.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "formats/safetensors.h"

namespace rlx::formats {

struct HeaderEntry {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
  uint64_t at = 0;  // file offset of the entry's name, for messages
};

struct SafetensorsHeader {
  std::map<std::string, std::string> metadata;
  std::vector<HeaderEntry> entries;
};

// `json` is the header text; `base_offset` its offset in the file (8).
SafetensorsHeader parse_safetensors_header(std::string_view json, const std::string& source, uint64_t base_offset,
                                           const SafetensorsLimits& limits);

}  // namespace rlx::formats
