#include "formats/onnx/importer.h"

namespace rlx::formats::onnx {

void register_rnn(OpTable&) {}

}  // namespace rlx::formats::onnx
