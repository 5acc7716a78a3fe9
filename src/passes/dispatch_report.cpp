#include <algorithm>
#include <set>

#include "passes/dispatch.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

Policy policy_from_name(const std::string& name) {
  if (name == "prefer-native") return Policy::prefer_native;
  if (name == "force-common") return Policy::force_common;
  throw Error(ErrorKind::invalid_argument, cat("unknown dispatch policy '", name, "' (choose prefer-native or force-common)"));
}

const char* policy_name(Policy p) { return p == Policy::prefer_native ? "prefer-native" : "force-common"; }

std::string DispatchReport::str() const {
  std::string out = cat("dispatch report — device ", device, ", policy ", policy_name(policy), "\n");
  size_t w = 4;
  for (const auto& [op, row] : rows) w = std::max(w, op.size());
  auto pad = [](const std::string& s, size_t n) { return s + std::string(n > s.size() ? n - s.size() : 0, ' '); };
  out += cat("  ", pad("op", w), "  native  common-ir  rewritten  unsupported\n");
  Row total;
  for (const auto& [op, r] : rows) {
    char line[160];
    std::snprintf(line, sizeof(line), "  %s  %6d  %9d  %9d  %11d\n", pad(op, w).c_str(), r.native, r.common_ir, r.rewritten, r.unsupported);
    out += line;
    total.native += r.native;
    total.common_ir += r.common_ir;
    total.rewritten += r.rewritten;
    total.unsupported += r.unsupported;
  }
  char line[160];
  std::snprintf(line, sizeof(line), "  %s  %6d  %9d  %9d  %11d\n", pad("total", w).c_str(), total.native, total.common_ir, total.rewritten,
                total.unsupported);
  out += line;
  for (const auto& r : rewrites) out += "  rewrite: " + r + "\n";
  return out;
}

std::string DispatchReport::json() const {
  std::string out = cat("{\"device\":", json_quote(device), ",\"policy\":", json_quote(policy_name(policy)), ",\"ops\":[");
  bool first = true;
  for (const auto& [op, r] : rows) {
    out += cat(first ? "" : ",", "{\"op\":", json_quote(op), ",\"native\":", r.native, ",\"common_ir\":", r.common_ir,
               ",\"rewritten\":", r.rewritten, ",\"unsupported\":", r.unsupported, "}");
    first = false;
  }
  out += "],\"unsupported\":[";
  for (size_t i = 0; i < unsupported.size(); ++i) out += (i ? "," : "") + json_quote(unsupported[i]);
  return out + "]}";
}

}  // namespace rlx::passes
