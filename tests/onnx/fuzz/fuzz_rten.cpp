// libFuzzer target: the .rten reader on arbitrary bytes — header and offsets, the FlatBuffers
// verifier, constants against the tensor data, node indices, attribute kinds — and the ONNX
// importer on what it produces. Anything but rlx::Error is a bug.
#include <memory>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/onnx.h"
#include "frontends/rten/rten.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 20)) return 0;
  try {
    auto model = rlx::frontends::rten::rten_to_onnx(data, size, "fuzz.rten");
    rlx::frontends::onnx::import_model(model, "/nonexistent-rlx-fuzz-dir");
  } catch (const rlx::Error&) {
  }
  return 0;
}
