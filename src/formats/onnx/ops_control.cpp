#include "formats/onnx/importer.h"

namespace rlx::formats::onnx {

void register_control(OpTable&) {}

}  // namespace rlx::formats::onnx
