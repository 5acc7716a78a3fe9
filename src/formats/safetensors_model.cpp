// Sharded and single-file safetensors models behind one interface.
#include <algorithm>
#include <filesystem>
#include <set>

#include "formats/json_util.h"
#include "formats/mapped_file.h"
#include "formats/safetensors.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxIndexBytes = 64u << 20;
constexpr size_t kMaxShards = 100000;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[noreturn]] void fail(const std::string& source, const std::string& msg) {
  throw Error(ErrorKind::format, cat(source, ": ", msg));
}

}  // namespace

SafetensorsIndex parse_safetensors_index(const std::string& text, const std::string& source) {
  nlohmann::json j = parse_json_checked(text, source, kMaxIndexBytes, 16);
  if (!j.is_object()) fail(source, "an index must be a JSON object with a \"weight_map\"");
  SafetensorsIndex idx;
  if (auto m = j.find("metadata"); m != j.end() && !m->is_null()) {
    if (!m->is_object()) fail(source, "\"metadata\" must be an object");
    for (auto it = m->begin(); it != m->end(); ++it)
      idx.metadata[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  }
  auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object()) fail(source, "\"weight_map\" must be an object of tensor name -> shard file");
  std::set<std::string> seen;
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    if (!it->is_string()) fail(source, cat("weight_map entry '", it.key(), "' must be a file name string"));
    std::string shard = it->get<std::string>();
    // A hostile index must not reach files outside the model directory.
    if (shard.empty() || shard == "." || shard == ".." || shard.find('/') != std::string::npos ||
        shard.find('\\') != std::string::npos || shard.find('\0') != std::string::npos)
      fail(source, cat("weight_map entry '", it.key(), "' names shard '", shard,
                       "'; shards must be plain file names in the index's directory"));
    if (seen.insert(shard).second) {
      if (idx.shards.size() >= kMaxShards) fail(source, cat("more than ", kMaxShards, " shards"));
      idx.shards.push_back(shard);
    }
    idx.weight_map[it.key()] = std::move(shard);
  }
  std::sort(idx.shards.begin(), idx.shards.end());  // model-00001-of-… first
  return idx;
}

const TensorView* SafetensorsModel::find(std::string_view name) const {
  auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                             [](const TensorView& t, std::string_view n) { return t.name < n; });
  return it != tensors.end() && it->name == name ? &*it : nullptr;
}

SafetensorsModel open_safetensors_model(const std::string& path, const SafetensorsLimits& limits) {
  SafetensorsModel model;
  model.path = path;
  std::error_code ec;
  std::string index_path;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    fs::path dir(path);
    if (fs::exists(dir / "model.safetensors.index.json")) index_path = (dir / "model.safetensors.index.json").string();
    else if (fs::exists(dir / "model.safetensors")) files.push_back((dir / "model.safetensors").string());
    else {
      std::vector<std::string> indexes;
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        std::string name = e.path().filename().string();
        if (ends_with(name, ".safetensors.index.json")) indexes.push_back(e.path().string());
        else if (ends_with(name, ".safetensors") && e.is_regular_file()) files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
      if (indexes.size() > 1)
        throw Error(ErrorKind::invalid_argument, cat("'", path, "' holds several *.safetensors.index.json files; name one"));
      if (indexes.size() == 1) index_path = indexes[0], files.clear();
      if (index_path.empty() && files.empty())
        throw Error(ErrorKind::io, cat("'", path, "' holds no *.safetensors file and no model.safetensors.index.json"));
    }
  } else if (ends_with(path, ".json")) {
    index_path = path;
  } else {
    files.push_back(path);
  }

  SafetensorsIndex idx;
  if (!index_path.empty()) {
    idx = parse_safetensors_index(read_text_file(index_path, kMaxIndexBytes), index_path);
    fs::path dir = fs::path(index_path).parent_path();
    for (const auto& s : idx.shards) files.push_back((dir / s).string());
  }
  std::map<std::string, size_t> shard_of;  // tensor name -> index into files
  for (size_t i = 0; i < files.size(); ++i) {
    auto shard = read_safetensors(files[i], limits);
    for (const auto& [k, v] : shard.metadata) model.metadata[k] = v;
    for (const auto& t : shard.tensors) {
      auto [it, fresh] = shard_of.emplace(t.name, i);
      if (!fresh)
        throw Error(ErrorKind::format, cat("tensor '", t.name, "' is in both '", files[it->second], "' and '",
                                           files[i], "'"));
      model.tensors.push_back(t);
    }
  }
  fs::path index_dir = fs::path(index_path).parent_path();
  for (const auto& [name, shard] : idx.weight_map) {
    auto it = shard_of.find(name);
    std::string want = (index_dir / shard).string();
    if (it == shard_of.end())
      throw Error(ErrorKind::format, cat(index_path, ": weight_map puts tensor '", name, "' in '", shard,
                                         "', but no shard holds it"));
    if (files[it->second] != want)
      throw Error(ErrorKind::format, cat(index_path, ": weight_map puts tensor '", name, "' in '", shard,
                                         "', but it is in '", files[it->second], "'"));
  }
  for (const auto& [k, v] : idx.metadata) model.metadata[k] = v;
  model.files = std::move(files);
  std::sort(model.tensors.begin(), model.tensors.end(),
            [](const TensorView& a, const TensorView& b) { return a.name < b.name; });
  return model;
}

}  // namespace rlx::formats
