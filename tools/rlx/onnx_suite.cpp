// rlx onnx-suite DIR [--filter REGEX] [--device D] [--json]: runs ONNX backend test data
// (model.onnx + test_data_set_*/input_*.pb, output_*.pb) through the importer and a device,
// compares with ONNX's backend tolerances (rtol 1e-3, atol 1e-7), prints one line per failing
// or skipped test with the reason and ends with "N passed, M failed[, K skipped]".
#include <cstdio>
#include <filesystem>
#include <regex>

#include "commands.h"
#include "frontends/onnx/backend_test.h"
#include "json.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::cli {

namespace fs = std::filesystem;
namespace ox = rlx::frontends::onnx;

int cmd_onnx_suite(Args& args) {
  bool json = args.flag("json");
  std::string filter = args.value_or("filter", "");
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  auto pos = args.positionals();
  args.finish();
  if (pos.size() != 1)
    throw Error(ErrorKind::invalid_argument, "rlx onnx-suite takes one DIR (e.g. /usr/share/libonnx-testdata/data/node)");
  std::regex re;
  try {
    re = std::regex(filter.empty() ? ".*" : filter);
  } catch (const std::regex_error& e) {
    throw Error(ErrorKind::invalid_argument, cat("--filter '", filter, "' is not a valid regular expression: ", e.what()));
  }
  std::error_code ec;
  if (!fs::is_directory(pos[0], ec)) throw Error(ErrorKind::io, cat(pos[0], " is not a directory of ONNX backend tests"));
  Session probe(device);  // an unknown or unavailable device fails here, once
  std::vector<ox::BackendTestResult> results;
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& dir : ox::backend_test_dirs(pos[0])) {
    if (!std::regex_search(fs::path(dir).filename().string(), re)) continue;
    ox::BackendTestResult o = ox::run_backend_test(dir, device);
    if (o.status == "passed") ++passed;
    else if (o.status == "failed") ++failed;
    else ++skipped;
    if (!json && o.status != "passed") std::printf("%s %s: %s\n", o.status == "failed" ? "FAIL" : "SKIP", o.name.c_str(), o.reason.c_str());
    std::fflush(stdout);
    results.push_back(o);
  }
  if (json) {
    std::vector<std::string> rows;
    for (const auto& o : results)
      rows.push_back(cat("{\"name\":", json_quote(o.name), ",\"status\":", json_quote(o.status), ",\"reason\":", json_quote(o.reason), "}"));
    std::printf("{\"device\":%s,\"passed\":%d,\"failed\":%d,\"skipped\":%d,\"tests\":%s}\n", json_quote(device).c_str(), passed, failed,
                skipped, json_array(rows).c_str());
  } else {
    std::printf("%d passed, %d failed", passed, failed);
    if (skipped) std::printf(", %d skipped", skipped);
    std::printf("\n");
  }
  return failed ? 1 : 0;
}

}  // namespace rlx::cli
