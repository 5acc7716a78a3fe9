// libFuzzer target: Hugging Face config.json parsing.
#include <string>

#include "formats/hf_config.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto c = rlx::formats::parse_hf_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz/config.json");
    (void)rlx::formats::hf_config_json(c).dump();
  } catch (const rlx::Error&) {
  }
  return 0;
}
