// libFuzzer target: the ONNX importer on arbitrary bytes — protobuf parsing, the up-front
// support check, every converter's attribute/shape validation. Anything but rlx::Error is a bug.
#include <memory>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/onnx.h"
#include "rlx/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = std::make_shared<::onnx::ModelProto>();
  if (size > (size_t{1} << 20) || !model->ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    rlx::frontends::onnx::import_model(model, "/nonexistent-rlx-fuzz-dir");
  } catch (const rlx::Error&) {
  }
  return 0;
}
