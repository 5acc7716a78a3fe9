#include <algorithm>

#include "formats/byte_reader.h"
#include "util/tensor_span.h"
#include "formats/mapped_file.h"
#include "formats/safetensors.h"
#include "formats/safetensors_header.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

// Recognisable files that are not safetensors, so the message can say what the file is.
std::string sniff_other_format(const uint8_t* d, size_t n) {
  if (n >= 2 && d[0] == 0x80 && d[1] >= 2 && d[1] <= 5)
    return "a Python pickle (a PyTorch .bin/.pt checkpoint?), not safetensors; pickles can run code, so RLX never "
           "loads them: convert it to safetensors with the safetensors Python package";
  if (n >= 4 && d[0] == 'P' && d[1] == 'K' && d[2] == 3 && d[3] == 4)
    return "a zip archive (a torch.save checkpoint?), not safetensors; convert it to safetensors with the "
           "safetensors Python package";
  if (n >= 4 && d[0] == 'G' && d[1] == 'G' && d[2] == 'U' && d[3] == 'F') return "a GGUF file, not safetensors";
  return "";
}

const char* kDtypeList = "F64 F32 F16 BF16 C64 F8_E4M3 F8_E5M2 F8_E8M0 F6_E2M3 F6_E3M2 F4 I64 I32 I16 I8 U64 U32 U16 U8 BOOL";

}  // namespace

const TensorView* SafetensorsFile::find(std::string_view name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

SafetensorsFile parse_safetensors(const uint8_t* data, size_t size, std::shared_ptr<void> owner,
                                  const std::string& source, const SafetensorsLimits& limits) {
  ByteReader r(data, size, source);
  // Only a file that fails as safetensors is sniffed: a valid header length may begin with
  // the same bytes as a pickle (0x80 0x02 is a 640-byte header).
  auto sniff = [&] {
    if (std::string other = sniff_other_format(data, size); !other.empty())
      r.fail(0, "file header", cat("this is ", other));
  };
  if (size < 8) sniff();
  uint64_t header_len = r.u64("header length");
  if (header_len > limits.max_header_bytes || header_len > r.remaining() || header_len < 2 || data[8] != '{') sniff();
  if (header_len > limits.max_header_bytes)
    r.fail(0, "header length", cat("is ", header_len, " bytes, above the ", limits.max_header_bytes,
                                   "-byte limit; this is not a safetensors file or it is corrupt"));
  if (header_len > r.remaining())
    r.fail(0, "header length", cat("is ", header_len, " bytes but only ", r.remaining(),
                                   " bytes follow it; the file is truncated"));
  if (header_len < 2) r.fail(0, "header length", cat("is ", header_len, "; the smallest header, {}, has 2 bytes"));
  std::string_view text = r.bytes(header_len, "header");
  if (text[0] != '{')
    r.fail(8, "header", cat("must start with '{', found byte 0x", std::hex, static_cast<int>(static_cast<uint8_t>(text[0]))));
  SafetensorsHeader h = parse_safetensors_header(text, source, 8, limits);

  SafetensorsFile f;
  f.path = source;
  f.metadata = std::move(h.metadata);
  f.data_offset = 8 + header_len;
  uint64_t data_size = size - f.data_offset;
  f.tensors.reserve(h.entries.size());  // bounded by max_tensors and the header length
  for (HeaderEntry& e : h.entries) {
    auto at = [&](const std::string& msg) { r.fail(static_cast<size_t>(e.at), cat("tensor '", e.name, "'"), msg); };
    auto type = weight_type_from_safetensors(e.dtype);
    if (!type) at(cat("unknown dtype '", e.dtype, "'; safetensors dtypes are ", kDtypeList));
    uint64_t numel = 1, span = 1;
    for (uint64_t d : e.shape) {
      if (!extend_span(span, d)) at(cat("shape [", join(e.shape), "] has more elements than fit in 64 bits"));
      numel *= d;
    }
    if (e.begin > e.end) at(cat("data_offsets [", e.begin, ", ", e.end, "] has begin after end"));
    if (e.end > data_size)
      at(cat("data_offsets [", e.begin, ", ", e.end, "] end past the data section (", data_size,
             " bytes, file offset ", f.data_offset, " to ", size, "); the file is truncated or corrupt"));
    auto need = weight_type_bytes(*type, numel);
    if (!need)
      at(cat("shape [", join(e.shape), "] of ", e.dtype, " is not a whole number of bytes (",
             weight_type_block_elems(*type), " values per ", weight_type_block_bytes(*type), " bytes)"));
    if (*need != e.end - e.begin)
      at(cat(e.dtype, " shape [", join(e.shape), "] needs ", *need, " bytes but data_offsets [", e.begin, ", ", e.end,
             "] span ", e.end - e.begin));
    TensorView v;
    v.name = std::move(e.name);
    v.type = *type;
    v.shape.assign(e.shape.begin(), e.shape.end());
    v.data = data + f.data_offset + e.begin;
    v.nbytes = static_cast<size_t>(*need);
    v.file_offset = f.data_offset + e.begin;
    v.owner = owner;
    f.tensors.push_back(std::move(v));
  }
  std::sort(f.tensors.begin(), f.tensors.end(), [](const TensorView& a, const TensorView& b) {
    return a.file_offset != b.file_offset ? a.file_offset < b.file_offset : a.nbytes < b.nbytes;
  });
  for (size_t i = 1; i < f.tensors.size(); ++i) {
    const TensorView &p = f.tensors[i - 1], &t = f.tensors[i];
    if (t.file_offset < p.file_offset + p.nbytes)
      r.fail(static_cast<size_t>(t.file_offset), cat("tensor '", t.name, "'"),
             cat("its bytes [", t.file_offset - f.data_offset, ", ", t.file_offset - f.data_offset + t.nbytes,
                 ") overlap those of tensor '", p.name, "' [", p.file_offset - f.data_offset, ", ",
                 p.file_offset - f.data_offset + p.nbytes, ")"));
  }
  return f;
}

SafetensorsFile read_safetensors(const std::string& path, const SafetensorsLimits& limits) {
  auto m = MappedFile::open(path);
  return parse_safetensors(m->data(), m->size(), m, path, limits);
}

}  // namespace rlx::formats
