// ONNX backend test data (model.onnx + test_data_set_*/input_*.pb, output_*.pb): runs one test
// directory through the importer and a device and compares with ONNX's backend tolerances.
// `rlx onnx-suite` and the unit tests share it.
#pragma once
#include <string>
#include <vector>

#include "rlx/tensor.h"

namespace rlx::frontends::onnx {

constexpr double kSuiteRtol = 1e-3, kSuiteAtol = 1e-7;

struct BackendTestResult {
  std::string name;
  std::string status;  // "passed", "failed" or "skipped"
  std::string reason;  // why it failed or was skipped
};

// Never throws for a failing test: errors become "failed" with the error's text.
BackendTestResult run_backend_test(const std::string& dir, const std::string& device);
// "" when equal within rtol/atol (NaN equals NaN); else what differs.
std::string compare_tensors(const Tensor& got, const Tensor& want, double rtol = kSuiteRtol, double atol = kSuiteAtol);
// Test directories under root (or root itself when it holds a model.onnx), sorted.
std::vector<std::string> backend_test_dirs(const std::string& root);

}  // namespace rlx::frontends::onnx
