// What `rlx info` shows of any weight file or model directory: its format, metadata and
// tensors, found by content (magic bytes), not by file extension.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/tensor_view.h"

namespace rlx::formats {

enum class FileFormat { safetensors, safetensors_index, gguf, directory };

// By content: "GGUF" magic, a safetensors header length followed by '{', an index JSON.
// Throws rlx::Error(format) naming what the file looks like when it is none of these.
FileFormat detect_format(const std::string& path);

struct ModelInfo {
  std::string path;
  std::string format;                 // "safetensors" or "gguf" ("directory" when no weights)
  std::vector<std::string> files;     // weight files read (shards), relative to a directory
  nlohmann::json metadata = nlohmann::json::object();
  nlohmann::json details = nlohmann::json::object();  // gguf version/alignment, config, tokenizer files
  std::vector<TensorView> tensors;    // every tensor once
};

ModelInfo inspect(const std::string& path);
// {"format":…, "metadata":{…}, "tensors":[{"name":…,"dtype":…,"shape":[…]}, …], plus "files" and
// the details' keys}.
nlohmann::json inspect_json(const ModelInfo& info);

}  // namespace rlx::formats
