// The .rten container: the version 2 header ([RTEN][version u32][model offset u64][model length
// u64][tensor data offset u64], little-endian) or a version 1 bare FlatBuffer, checked before
// any of it is trusted; the model FlatBuffer is verified whole (offsets, sizes, nesting).
#include <cstring>
#include <filesystem>
#include <vector>

#include <onnx/onnx_pb.h>

#include "formats/mapped_file.h"
#include "frontends/rten/rten.h"
#include "frontends/rten/rten_graph.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::frontends::rten {

namespace {

constexpr size_t kHeaderBytes = 32;

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}
uint32_t le32(const uint8_t* p) { return static_cast<uint32_t>(p[0]) | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

[[noreturn]] void bad(const std::string& source, const std::string& msg) { throw Error(ErrorKind::format, cat(source, ": ", msg)); }

}  // namespace

bool looks_like_rten(const uint8_t* d, size_t n) {
  if (n >= kHeaderBytes && std::memcmp(d, "RTEN", 4) == 0) return true;  // version 2
  return n >= 8 && std::memcmp(d + 4, "RTEN", 4) == 0;                   // version 1: the identifier
}

bool is_rten_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  auto file = formats::MappedFile::open(path);
  return looks_like_rten(file->data(), file->size());
}

std::shared_ptr<::onnx::ModelProto> rten_to_onnx(const uint8_t* d, size_t n, const std::string& source) {
  if (!looks_like_rten(d, n)) bad(source, "not an .rten model (no RTEN magic or FlatBuffers identifier)");
  const uint8_t* model = d;
  size_t model_len = n;
  const uint8_t* tensors = nullptr;
  size_t tensor_len = 0;
  if (std::memcmp(d, "RTEN", 4) == 0) {
    uint32_t version = le32(d + 4);
    if (version != 2) throw Error(ErrorKind::unsupported, cat(source, ": .rten format version ", version, " (RLX reads versions 1 and 2)"));
    uint64_t off = le64(d + 8), len = le64(d + 16), toff = le64(d + 24);
    if (off < kHeaderBytes || off > n || len > n - off || len == 0)
      bad(source, cat("the header puts the model data at [", off, ", +", len, ") in a file of ", n, " bytes (truncated?)"));
    if (toff > n) bad(source, cat("the header puts the tensor data at ", toff, ", past the end of the file (", n, " bytes)"));
    model = d + off;
    model_len = static_cast<size_t>(len);
    tensors = d + toff;
    tensor_len = n - static_cast<size_t>(toff);
  }
  // FlatBuffers reads scalars in place: the verifier wants them aligned.
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(model) % alignof(uint64_t) != 0) {
    aligned.resize((model_len + 7) / 8);
    std::memcpy(aligned.data(), model, model_len);
    model = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  return convert_model(model, model_len, tensors, tensor_len, source);
}

std::shared_ptr<::onnx::ModelProto> load_rten(const std::string& path) {
  auto file = formats::MappedFile::open(path);
  return rten_to_onnx(file->data(), file->size(), path);
}

}  // namespace rlx::frontends::rten
