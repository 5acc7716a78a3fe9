// GGUF v2/v3 (ggml's model file): a header, typed key/value metadata, tensor infos (name, dims
// innermost first, ggml type, offset) and aligned tensor data. Read by mapping the file:
// tensors stay packed (quantized blocks included) as views of the mapping; dims are reversed
// into RLX's row-major shapes. Every count, length and offset is checked against the file size
// and hard caps before anything is allocated.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/gguf_value.h"
#include "formats/tensor_view.h"

namespace rlx::formats {

struct GgufLimits {
  uint64_t max_tensors = 1u << 20;
  uint64_t max_metadata = 1u << 20;
  uint64_t max_string_bytes = 256u << 20;
  uint64_t max_array_depth = 8;  // arrays nested inside arrays
  uint32_t max_dims = 8;         // ggml uses 4
};

struct GgufFile {
  std::string path;
  uint32_t version = 3;
  uint32_t alignment = 32;
  uint64_t data_offset = 0;                                   // start of the tensor data
  std::vector<std::pair<std::string, GgufValue>> metadata;    // in file order
  std::vector<TensorView> tensors;                            // in file order

  const GgufValue* find(std::string_view key) const;
  const TensorView* find_tensor(std::string_view name) const;
};

GgufFile read_gguf(const std::string& path, const GgufLimits& limits = {});
GgufFile parse_gguf(const uint8_t* data, size_t size, std::shared_ptr<void> owner, const std::string& source,
                    const GgufLimits& limits = {});

// Builds a GGUF v3 file. Tensors are given row-major like everywhere in RLX; the writer
// stores their dims innermost first.
class GgufWriter {
 public:
  // Sets (or replaces) a key; insertion order is kept. "general.alignment" also sets alignment.
  void set(const std::string& key, GgufValue value);
  void set_alignment(uint32_t alignment);  // a power of two; default 32
  // A tensor already in its file type (e.g. copied from another file). Its bytes are not
  // copied: views from the readers and owned_view() keep them alive through their owner;
  // any other view must stay valid until write().
  void add_tensor(const TensorView& tensor);
  // f32 values quantized to `type` (F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K); the last dim must hold
  // whole blocks of the type.
  // `importance` (optional): one weight per column (the last dim), as quantize() takes.
  void add_tensor_f32(const std::string& name, const std::vector<int64_t>& shape, const float* data, WeightType type, const float* importance = nullptr);

  std::vector<uint8_t> bytes() const;
  // Streams the tensors to the file one by one, never holding the whole file in memory.
  void write(const std::string& path) const;

 private:
  // Header, metadata and tensor infos, padded to the data section; the offset of each tensor.
  std::vector<uint8_t> header(std::vector<uint64_t>* offsets, uint64_t* data_bytes) const;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<TensorView> tensors_;
  uint32_t alignment_ = 32;
};

}  // namespace rlx::formats
