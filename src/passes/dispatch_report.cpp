#include <algorithm>
#include <set>
#include <tuple>

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
  if (!placement.empty()) out += "by place in the model:\n" + placement_str();
  return out;
}

namespace {
bool is_index(const std::string& part) { return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }); }
}  // namespace

std::string placement_group(const std::string& name) {
  if (name.empty()) return "(unnamed)";
  // parts split at '.' and '/' (ONNX names: "/encoder/layer.0/attention/…")
  size_t start = 0, first_end = std::string::npos;
  for (;;) {
    const size_t end = name.find_first_of("./", start);
    const std::string part = name.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (is_index(part)) return name.substr(0, end);
    if (!part.empty() && first_end == std::string::npos) first_end = end;
    if (end == std::string::npos) return name.substr(0, first_end);
    start = end + 1;
  }
}

namespace {

// Placement groups in model order: "layers.2" before "layers.10"; runs of consecutive indices
// under one prefix whose nodes resolve alike merged into "layers.0–13".
struct PlacedRun {
  std::string label;
  DispatchReport::Row each;
  int count = 1;
};

std::vector<PlacedRun> placed_runs(const std::map<std::string, DispatchReport::Row>& placement) {
  struct Key {
    std::string prefix;
    long index;  // -1: no index
    std::string name;
  };
  std::vector<std::pair<Key, DispatchReport::Row>> keyed;
  for (const auto& [name, row] : placement) {
    const size_t dot = name.rfind('.');
    const std::string tail = dot == std::string::npos ? "" : name.substr(dot + 1);
    const bool indexed = tail.size() < 10 && is_index(tail);
    keyed.push_back({{indexed ? name.substr(0, dot) : name, indexed ? std::stol(tail) : -1, name}, row});
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.prefix, a.first.index) < std::tie(b.first.prefix, b.first.index);
  });
  auto same = [](const DispatchReport::Row& a, const DispatchReport::Row& b) {
    return a.native == b.native && a.common_ir == b.common_ir && a.rewritten == b.rewritten && a.unsupported == b.unsupported;
  };
  std::vector<PlacedRun> out;
  for (size_t i = 0; i < keyed.size();) {
    size_t j = i + 1;
    if (keyed[i].first.index >= 0)
      while (j < keyed.size() && keyed[j].first.prefix == keyed[i].first.prefix && keyed[j].first.index == keyed[j - 1].first.index + 1 &&
             same(keyed[j].second, keyed[i].second))
        ++j;
    PlacedRun r;
    r.each = keyed[i].second;
    r.count = static_cast<int>(j - i);
    r.label = r.count == 1 ? keyed[i].first.name : cat(keyed[i].first.prefix, ".", keyed[i].first.index, "–", keyed[j - 1].first.index);
    out.push_back(r);
    i = j;
  }
  return out;
}

}  // namespace

std::string DispatchReport::placement_str() const {
  std::vector<PlacedRun> runs = placed_runs(placement);
  size_t w = 5;
  for (const auto& r : runs) w = std::max(w, r.label.size() + (r.count > 1 ? 7 : 0));
  auto pad = [](const std::string& s, size_t n) { return s + std::string(n > s.size() ? n - s.size() : 0, ' '); };
  std::string out = cat("  ", pad("nodes", w), "  native  common-ir  rewritten  unsupported\n");
  for (const auto& r : runs) {
    char line[256];
    std::snprintf(line, sizeof(line), "  %s  %6d  %9d  %9d  %11d\n", pad(r.count > 1 ? r.label + " (each)" : r.label, w).c_str(), r.each.native, r.each.common_ir,
                  r.each.rewritten, r.each.unsupported);
    out += line;
  }
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
  out += "],\"placement\":[";
  first = true;
  for (const auto& r : placed_runs(placement)) {
    out += cat(first ? "" : ",", "{\"nodes\":", json_quote(r.label), ",\"groups\":", r.count, ",\"each\":{\"native\":", r.each.native, ",\"common_ir\":",
               r.each.common_ir, ",\"rewritten\":", r.each.rewritten, ",\"unsupported\":", r.each.unsupported, "}}");
    first = false;
  }
  return out + "]}";
}

}  // namespace rlx::passes
