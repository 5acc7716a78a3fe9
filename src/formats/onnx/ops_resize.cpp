#include "formats/onnx/importer.h"

namespace rlx::formats::onnx {

void register_resize(OpTable&) {}

}  // namespace rlx::formats::onnx
