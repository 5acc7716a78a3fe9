#include "formats/onnx/importer.h"

namespace rlx::formats::onnx {

void register_signal(OpTable&) {}

}  // namespace rlx::formats::onnx
