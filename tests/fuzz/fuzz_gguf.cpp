// libFuzzer target: the GGUF reader (header, metadata of every type, tensor infos, offsets).
#include "formats/gguf.h"
#include "fuzz_common.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rlx::formats;
  GgufFile f;
  try {
    f = parse_gguf(data, size, nullptr, "fuzz.gguf");
  } catch (const rlx::Error&) {
    return 0;
  }
  GgufWriter w;
  try {
    for (const auto& [k, v] : f.metadata) {
      (void)v.to_json().dump();
      (void)v.summary();
      w.set(k, v);
    }
    w.set_alignment(f.alignment);
  } catch (const rlx::Error&) {
    fuzz::round_trip_failed();  // everything the reader accepts, the writer must accept
  }
  size_t written = 0;
  for (const auto& t : f.tensors) {
    fuzz::exercise(t);
    if (t.type != WeightType::unsupported && t.nbytes <= (size_t{1} << 20)) {
      try {
        w.add_tensor(t);
      } catch (const rlx::Error&) {
        fuzz::round_trip_failed();
      }
      ++written;
    }
  }
  try {
    auto again = w.bytes();
    GgufFile g = parse_gguf(again.data(), again.size(), nullptr, "rewritten");
    if (g.tensors.size() != written || g.metadata.size() != f.metadata.size() - (f.find("general.alignment") ? 1 : 0) +
                                                                 (f.alignment != 32 ? 1 : 0))
      fuzz::round_trip_failed();
  } catch (const rlx::Error&) {
    fuzz::round_trip_failed();
  }
  return 0;
}
