// A model with every intermediate tensor among its outputs, for another runtime to compute them
// all (`rlx diff --against onnxruntime`).
#pragma once
#include <string>

namespace rlx::frontends::onnx {

// Writes to `out_path` a copy of the model at `path` whose graph outputs are, after its own, every
// tensor a node of its main graph produces. Initializers stored as external data keep pointing at
// the original files (their locations become absolute).
void write_with_every_output(const std::string& path, const std::string& out_path);

}  // namespace rlx::frontends::onnx
