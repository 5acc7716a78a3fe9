// `rlx info model.onnx [--json]`: the ONNX branch of rlx info.
#pragma once
#include <string>

namespace rlx::cli {

int print_onnx_info(const std::string& path, bool json);

}  // namespace rlx::cli
