// safetensors: an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and [begin, end) byte range in the data that follows, then the data. Read by
// mapping the file; tensors are views of the mapping. Everything in the header is checked
// before use (see SafetensorsLimits).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/tensor_view.h"

namespace rlx::formats {

struct SafetensorsLimits {
  uint64_t max_header_bytes = 100u << 20;  // the limit the reference implementation applies
  uint64_t max_tensors = 1u << 20;
  uint64_t max_rank = 64;
};

struct SafetensorsFile {
  std::string path;
  std::map<std::string, std::string> metadata;  // the "__metadata__" entry
  std::vector<TensorView> tensors;              // in data-offset order
  uint64_t data_offset = 0;                     // where the data section starts (8 + header)

  const TensorView* find(std::string_view name) const;
};

SafetensorsFile read_safetensors(const std::string& path, const SafetensorsLimits& limits = {});
// The same from bytes in memory; `owner` keeps them alive for the views, `source` names them.
SafetensorsFile parse_safetensors(const uint8_t* data, size_t size, std::shared_ptr<void> owner,
                                  const std::string& source, const SafetensorsLimits& limits = {});

// The bytes of a safetensors file holding `tensors` (any non-quantized type; names unique).
// Tensors are laid out by decreasing element size so every one is aligned for its type.
std::vector<uint8_t> safetensors_bytes(const std::vector<TensorView>& tensors,
                                       const std::map<std::string, std::string>& metadata = {});
// Writes them to `path` through a temporary file renamed into place.
void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// A model stored as one file or as shards listed by model.safetensors.index.json.
struct SafetensorsModel {
  std::string path;                             // what was opened: a file, an index or a directory
  std::vector<std::string> files;               // the shard files, in index order
  std::map<std::string, std::string> metadata;  // __metadata__ of the shards plus the index's "metadata"
  std::vector<TensorView> tensors;              // every tensor once, sorted by name

  const TensorView* find(std::string_view name) const;  // views keep their shard mapped
};

// Opens `path`: a .safetensors file, a *.safetensors.index.json, or a directory holding
// model.safetensors, model.safetensors.index.json, or else its *.safetensors files.
SafetensorsModel open_safetensors_model(const std::string& path, const SafetensorsLimits& limits = {});

// The shard file of every tensor in an index.json text (also the fuzzing entry point): checks
// the JSON and that each shard is a plain file name, never a path out of the directory.
struct SafetensorsIndex {
  std::map<std::string, std::string> metadata;    // values rendered as JSON text unless strings
  std::map<std::string, std::string> weight_map;  // tensor name -> shard file name
  std::vector<std::string> shards;                // distinct shard names, sorted
};
SafetensorsIndex parse_safetensors_index(const std::string& text, const std::string& source);

}  // namespace rlx::formats
