// libFuzzer target: the .npy reader (header dict, dtype descr, shape, byte order, Fortran order),
// and the writer's round trip of whatever it accepts.
#include <cstdlib>

#include "formats/npy.h"
#include "fuzz_common.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rlx::Tensor t;
  try {
    t = rlx::formats::parse_npy(data, size, "fuzz.npy");
  } catch (const rlx::Error&) {
    return 0;
  }
  std::string bytes = rlx::formats::npy_bytes(t);
  rlx::Tensor back;
  try {
    back = rlx::formats::parse_npy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "round-trip.npy");
  } catch (const rlx::Error&) {
    rlx::formats::fuzz::round_trip_failed();
  }
  if (back.shape() != t.shape() || !back.bytes_equal(t)) rlx::formats::fuzz::round_trip_failed();
  return 0;
}
