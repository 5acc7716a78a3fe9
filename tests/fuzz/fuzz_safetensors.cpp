// libFuzzer target: the safetensors reader (header length, JSON header, offsets).
#include "formats/safetensors.h"
#include "fuzz_common.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rlx::formats;
  SafetensorsFile f;
  try {
    f = parse_safetensors(data, size, nullptr, "fuzz.safetensors");
  } catch (const rlx::Error&) {
    return 0;
  }
  for (const auto& t : f.tensors) fuzz::exercise(t);
  std::vector<uint8_t> again;
  try {
    again = safetensors_bytes(f.tensors, f.metadata);
  } catch (const rlx::Error&) {
    return 0;  // e.g. an empty tensor name: readable, but RLX will not write one
  }
  try {
    SafetensorsFile g = parse_safetensors(again.data(), again.size(), nullptr, "rewritten");
    if (g.tensors.size() != f.tensors.size()) fuzz::round_trip_failed();
  } catch (const rlx::Error&) {
    fuzz::round_trip_failed();
  }
  return 0;
}
