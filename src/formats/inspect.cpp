#include "formats/inspect.h"

#include <cstring>
#include <filesystem>

#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/hf_dir.h"
#include "formats/mapped_file.h"
#include "formats/safetensors.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace fs = std::filesystem;

namespace {

ModelInfo from_gguf(const std::string& path) {
  GgufFile g = read_gguf(path);
  ModelInfo info;
  info.path = path;
  info.format = "gguf";
  info.files = {path};
  for (const auto& [k, v] : g.metadata) info.metadata[k] = v.to_json();
  info.details["version"] = g.version;
  info.details["alignment"] = g.alignment;
  info.tensors = std::move(g.tensors);
  return info;
}

ModelInfo from_safetensors(const std::string& path) {
  SafetensorsModel m = open_safetensors_model(path);
  ModelInfo info;
  info.path = path;
  info.format = "safetensors";
  info.files = m.files;
  for (const auto& [k, v] : m.metadata) info.metadata[k] = v;
  info.tensors = std::move(m.tensors);
  return info;
}

}  // namespace

FileFormat detect_format(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return FileFormat::directory;
  auto m = MappedFile::open(path);
  const uint8_t* d = m->data();
  size_t n = m->size();
  if (n >= 4 && std::memcmp(d, "GGUF", 4) == 0) return FileFormat::gguf;
  if (n >= 9 && d[8] == '{') return FileFormat::safetensors;
  size_t i = 0;
  while (i < n && i < 64 && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t')) ++i;
  if (i < n && d[i] == '{' && path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
    return FileFormat::safetensors_index;
  // Named .safetensors but no header: let the safetensors reader say exactly what is wrong.
  if (path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) return FileFormat::safetensors;
  if (n >= 2 && d[0] == 0x80 && d[1] >= 2 && d[1] <= 5)
    throw Error(ErrorKind::format, cat(path, ": a Python pickle (PyTorch checkpoint?); RLX never loads pickles, as "
                                             "they can run code: convert it to safetensors"));
  if (n >= 4 && std::memcmp(d, "PK\x03\x04", 4) == 0)
    throw Error(ErrorKind::format, cat(path, ": a zip archive (torch.save checkpoint?); convert it to safetensors"));
  if (n >= 8 && std::memcmp(d, "\x08\x01\x12", 3) == 0)
    throw Error(ErrorKind::unsupported, cat(path, ": looks like ONNX protobuf, which `rlx info` does not read yet"));
  throw Error(ErrorKind::format, cat(path, ": not a safetensors, safetensors index or GGUF file (", n, " bytes)"));
}

ModelInfo inspect(const std::string& path) {
  switch (detect_format(path)) {
    case FileFormat::gguf: return from_gguf(path);
    case FileFormat::safetensors:
    case FileFormat::safetensors_index: return from_safetensors(path);
    case FileFormat::directory: break;
  }
  HfDirectory dir = scan_hf_directory(path);
  ModelInfo info;
  if (dir.safetensors_index || !dir.safetensors.empty()) {
    info = from_safetensors(path);
    for (auto& f : info.files) f = fs::relative(f, path).string();
  } else if (dir.gguf.size() == 1) {
    info = from_gguf(dir.gguf[0]);
    info.files = {fs::relative(dir.gguf[0], path).string()};
  } else {
    info.format = "directory";
    if (dir.gguf.size() > 1) info.details["gguf_files"] = dir.gguf.size();
  }
  info.path = path;
  if (dir.config) info.details["config"] = hf_config_json(read_hf_config(*dir.config));
  info.details["directory"] = dir.listing();
  return info;
}

nlohmann::json inspect_json(const ModelInfo& info) {
  nlohmann::json j = {{"format", info.format}, {"path", info.path}, {"files", info.files}, {"metadata", info.metadata}};
  for (auto it = info.details.begin(); it != info.details.end(); ++it) j[it.key()] = *it;
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : info.tensors) tensors.push_back({{"name", t.name}, {"dtype", t.type_name()}, {"shape", t.shape}});
  j["tensors"] = std::move(tensors);
  return j;
}

}  // namespace rlx::formats
