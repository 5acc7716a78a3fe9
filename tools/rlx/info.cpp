// `rlx info FILE|DIR [--json]`: format, metadata and tensors of a weight file or a Hugging Face
// model directory (DESIGN §8).
#include <cstdio>
#include <map>

#include "commands.h"
#include "formats/inspect.h"
#include "frontends/onnx/onnx.h"
#include "info_onnx.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

// A metadata value on one line: long arrays (GGUF vocabularies) are elided.
std::string short_value(const nlohmann::json& v) {
  if (v.is_array() && v.size() > 8) {
    nlohmann::json head(v.begin(), v.begin() + 8);
    std::string s = head.dump();
    s.pop_back();
    return cat(s, ", … (", v.size(), " items)]");
  }
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  return s.size() > 100 ? s.substr(0, 97) + "…" : s;
}

void print_text(const formats::ModelInfo& info) {
  std::printf("format: %s\n", info.format.c_str());
  if (info.details.contains("version"))
    std::printf("version: %s, alignment %s\n", info.details["version"].dump().c_str(),
                info.details["alignment"].dump().c_str());
  if (info.files.size() > 1 || (info.files.size() == 1 && info.files[0] != info.path)) {
    std::printf("files (%zu):\n", info.files.size());
    for (const auto& f : info.files) std::printf("  %s\n", f.c_str());
  }
  if (info.details.contains("config")) {
    std::printf("config:\n");
    for (auto it = info.details["config"].begin(); it != info.details["config"].end(); ++it)
      std::printf("  %-26s %s\n", it.key().c_str(), short_value(*it).c_str());
  }
  if (!info.metadata.empty()) {
    std::printf("metadata (%zu):\n", info.metadata.size());
    for (auto it = info.metadata.begin(); it != info.metadata.end(); ++it)
      std::printf("  %-40s %s\n", it.key().c_str(), short_value(*it).c_str());
  }
  size_t name_w = 4;
  for (const auto& t : info.tensors) name_w = std::max(name_w, t.name.size());
  name_w = std::min<size_t>(name_w, 60);
  std::map<std::string, int64_t> params_by_type;
  uint64_t bytes = 0;
  std::printf("tensors (%zu):\n", info.tensors.size());
  std::printf("  %-*s  %-8s %s\n", static_cast<int>(name_w), "name", "dtype", "shape");
  for (const auto& t : info.tensors) {
    std::printf("  %-*s  %-8s [%s]\n", static_cast<int>(name_w), t.name.c_str(), t.type_name().c_str(),
                join(t.shape).c_str());
    params_by_type[t.type_name()] += t.numel();
    bytes += t.nbytes;
  }
  int64_t params = 0;
  for (const auto& [k, n] : params_by_type) params += n;
  std::printf("total: %lld parameters in %llu bytes (", static_cast<long long>(params),
              static_cast<unsigned long long>(bytes));
  bool first = true;
  for (const auto& [k, n] : params_by_type) {
    std::printf("%s%s %lld", first ? "" : ", ", k.c_str(), static_cast<long long>(n));
    first = false;
  }
  std::printf(")\n");
}

}  // namespace

int cmd_info(Args& args) {
  bool json = args.flag("json");
  auto pos = args.positionals();
  args.finish();
  if (pos.size() != 1)
    throw Error(ErrorKind::invalid_argument, "rlx info takes one FILE or DIR (a .safetensors, an index.json, a .gguf or a model directory)");
  if (frontends::onnx::is_onnx_file(pos[0])) return print_onnx_info(pos[0], json);
  formats::ModelInfo info = formats::inspect(pos[0]);
  if (json) {
    // Invalid UTF-8 cannot reach here (readers reject it); replace keeps dump() total anyway.
    std::puts(formats::inspect_json(info).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    print_text(info);
  }
  return 0;
}

}  // namespace rlx::cli
