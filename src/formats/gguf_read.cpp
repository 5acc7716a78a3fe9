#include <algorithm>
#include <cstdio>
#include <set>

#include "formats/byte_reader.h"
#include "formats/gguf.h"
#include "formats/mapped_file.h"
#include "rlx/error.h"
#include "util/strings.h"
#include "util/tensor_span.h"

namespace rlx::formats {

namespace {

// Smallest encodings, used to reject counts the remaining bytes cannot possibly hold before
// anything is allocated for them.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;          // empty key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // empty name, n_dims = 0, type, offset
constexpr uint64_t kMaxNameBytes = 4096;              // ggml itself stops at 64
constexpr uint64_t kMaxAlignment = 1u << 20;          // real files use 32; pages are 4 KiB

std::string hex_bytes(std::string_view b) {
  std::string out;
  for (unsigned char c : b) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x ", c);
    out += buf;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

class GgufParser {
 public:
  GgufParser(const uint8_t* data, size_t size, const std::string& source, const GgufLimits& limits)
      : r_(data, size, source), limits_(limits) {}

  std::string string(const std::string& field) {
    size_t at = r_.offset();
    uint64_t n = r_.u64(field + " length");
    if (n > limits_.max_string_bytes)
      r_.fail(at, field, cat("string length ", n, " is above the ", limits_.max_string_bytes, "-byte limit"));
    if (n > r_.remaining())
      r_.fail(at, field, cat("string length ", n, " runs past the end of the file (", r_.remaining(), " bytes left)"));
    std::string_view s = r_.bytes(n, field);
    size_t bad = 0;
    if (!is_valid_utf8(s, &bad)) r_.fail(at + 8 + bad, field, "string is not valid UTF-8");
    return std::string(s);
  }

  GgufType value_type(const std::string& field) {
    size_t at = r_.offset();
    uint32_t t = r_.u32(field + " type");
    if (t > 12) r_.fail(at, field + " type", cat("unknown GGUF value type ", t, "; types are 0 (uint8) to 12 (float64)"));
    return static_cast<GgufType>(t);
  }

  GgufValue value(GgufType t, const std::string& field, uint64_t depth) {
    switch (t) {
      case GgufType::u8: return r_.u8(field);
      case GgufType::i8: return static_cast<int8_t>(r_.u8(field));
      case GgufType::u16: return r_.u16(field);
      case GgufType::i16: return static_cast<int16_t>(r_.u16(field));
      case GgufType::u32: return r_.u32(field);
      case GgufType::i32: return static_cast<int32_t>(r_.u32(field));
      case GgufType::f32: {
        uint32_t b = r_.u32(field);
        float f;
        std::memcpy(&f, &b, 4);
        return f;
      }
      case GgufType::boolean: {
        size_t at = r_.offset();
        uint8_t b = r_.u8(field);
        if (b > 1) r_.fail(at, field, cat("bool byte is ", int(b), "; only 0 and 1 are valid"));
        return b == 1;
      }
      case GgufType::string: return string(field);
      case GgufType::u64: return r_.u64(field);
      case GgufType::i64: return static_cast<int64_t>(r_.u64(field));
      case GgufType::f64: {
        uint64_t b = r_.u64(field);
        double d;
        std::memcpy(&d, &b, 8);
        return d;
      }
      case GgufType::array: return array(field, depth);
    }
    r_.fail(r_.offset(), field, "unreachable value type");
  }

  GgufValue array(const std::string& field, uint64_t depth) {
    size_t at = r_.offset();
    if (depth >= limits_.max_array_depth)
      r_.fail(at, field, cat("arrays are nested more than ", limits_.max_array_depth, " deep"));
    GgufArray a;
    a.elem = value_type(field + " element");
    size_t count_at = r_.offset();
    uint64_t n = r_.u64(field + " count");
    size_t es = gguf_type_size(a.elem);
    uint64_t min_each = es ? es : a.elem == GgufType::string ? 8 : 12;
    if (n > r_.remaining() / min_each)
      r_.fail(count_at, field + " count",
              cat("array of ", n, " ", gguf_type_name(a.elem), " needs at least ", min_each, " bytes each, but only ",
                  r_.remaining(), " bytes remain"));
    if (es) {
      std::string_view b = r_.bytes(n * es, field);
      if (a.elem == GgufType::boolean)
        for (size_t i = 0; i < b.size(); ++i)
          if (static_cast<uint8_t>(b[i]) > 1)
            r_.fail(r_.offset() - b.size() + i, cat(field, "[", i, "]"), "bool byte must be 0 or 1");
      a.raw.assign(b.begin(), b.end());
    } else if (a.elem == GgufType::string) {
      a.strings.reserve(n);
      for (uint64_t i = 0; i < n; ++i) a.strings.push_back(string(cat(field, "[", i, "]")));
    } else {
      a.arrays.reserve(n);
      for (uint64_t i = 0; i < n; ++i) a.arrays.push_back(array(cat(field, "[", i, "]"), depth + 1));
    }
    return GgufValue(std::move(a));
  }

  GgufFile parse(std::shared_ptr<void> owner) {
    GgufFile f;
    f.path = r_.source();
    std::string_view magic = r_.bytes(4, "magic");
    if (magic != "GGUF") {
      std::string hint = magic.substr(0, 2) == "\x80\x02" || magic.substr(0, 2) == "\x80\x04"
                             ? " (this looks like a Python pickle)"
                             : "";
      r_.fail(0, "magic", cat("expected 'GGUF' (47 47 55 46), found ", hex_bytes(magic), hint,
                              "; this is not a GGUF file"));
    }
    f.version = r_.u32("version");
    if (f.version == 1)
      r_.fail(4, "version", "GGUF version 1 (32-bit counts, 2023) is not supported; re-convert the model with a current llama.cpp");
    if (f.version != 2 && f.version != 3) {
      if ((f.version & 0xffffu) == 0 && (f.version >> 24) != 0)
        r_.fail(4, "version", cat("reads as ", f.version, ": the file is big-endian GGUF, and RLX reads little-endian files"));
      r_.fail(4, "version", cat("unsupported GGUF version ", f.version, "; RLX reads versions 2 and 3"));
    }
    uint64_t n_tensors = r_.u64("tensor count");
    uint64_t n_kv = r_.u64("metadata count");
    if (n_tensors > limits_.max_tensors)
      r_.fail(8, "tensor count", cat(n_tensors, " is above the limit of ", limits_.max_tensors));
    if (n_kv > limits_.max_metadata)
      r_.fail(16, "metadata count", cat(n_kv, " is above the limit of ", limits_.max_metadata));
    if (static_cast<unsigned __int128>(n_tensors) * kMinTensorInfoBytes +
            static_cast<unsigned __int128>(n_kv) * kMinKvBytes > r_.remaining())
      r_.fail(8, "tensor count", cat(n_tensors, " tensors and ", n_kv, " metadata entries cannot fit in the ",
                                     r_.remaining(), " bytes after the header; the counts are corrupt"));

    std::set<std::string> keys;
    f.metadata.reserve(n_kv);
    for (uint64_t i = 0; i < n_kv; ++i) {
      size_t at = r_.offset();
      std::string key = string(cat("metadata key #", i));
      if (key.empty()) r_.fail(at, cat("metadata key #", i), "the key is empty");
      if (!keys.insert(key).second) r_.fail(at, cat("metadata key '", key, "'"), "the key appears twice");
      std::string field = cat("metadata '", key, "'");
      GgufType t = value_type(field);
      f.metadata.emplace_back(key, value(t, field, 0));
      if (key == "general.alignment") {
        const GgufValue& v = f.metadata.back().second;
        auto a = v.type() == GgufType::u32 ? v.as_uint() : std::nullopt;
        if (!a || *a == 0 || (*a & (*a - 1)) != 0)
          r_.fail(at, field, cat("must be a uint32 power of two, found ", gguf_type_name(v.type()), " ", v.summary()));
        if (*a > kMaxAlignment)
          r_.fail(at, field, cat(*a, " is above the ", kMaxAlignment, "-byte limit RLX accepts"));
        f.alignment = static_cast<uint32_t>(*a);
      }
    }

    std::set<std::string> names;
    f.tensors.reserve(n_tensors);
    std::vector<uint64_t> info_at;
    for (uint64_t i = 0; i < n_tensors; ++i) {
      size_t at = r_.offset();
      std::string name = string(cat("tensor name #", i));
      if (name.empty()) r_.fail(at, cat("tensor name #", i), "the name is empty");
      if (name.size() > kMaxNameBytes) r_.fail(at, cat("tensor name #", i), cat("is ", name.size(), " bytes long"));
      if (!names.insert(name).second) r_.fail(at, cat("tensor '", name, "'"), "the name appears twice");
      std::string field = cat("tensor '", name, "'");
      size_t dims_at = r_.offset();
      uint32_t n_dims = r_.u32(field + " n_dims");
      if (n_dims > limits_.max_dims)
        r_.fail(dims_at, field + " n_dims", cat(n_dims, " dims; GGUF tensors have at most ", limits_.max_dims));
      std::vector<int64_t> shape(n_dims);
      uint64_t numel = 1, span = 1;
      for (uint32_t d = 0; d < n_dims; ++d) {
        size_t dat = r_.offset();
        uint64_t ne = r_.u64(cat(field, " dim ", d));
        if (!extend_span(span, ne)) r_.fail(dat, cat(field, " dim ", d), cat("dims make more elements than fit in 64 bits"));
        numel *= ne;
        shape[n_dims - 1 - d] = static_cast<int64_t>(ne);  // GGUF lists the innermost dim first
      }
      size_t type_at = r_.offset();
      uint32_t ggml = r_.u32(field + " type");
      auto type = weight_type_from_ggml(ggml);
      if (!type) r_.fail(type_at, field + " type", cat("unknown ggml type id ", ggml));
      size_t off_at = r_.offset();
      uint64_t offset = r_.u64(field + " offset");
      TensorView v;
      v.name = std::move(name);
      v.type = *type;
      v.ggml_type = ggml;
      v.shape = std::move(shape);
      if (*type != WeightType::unsupported) {
        int64_t be = weight_type_block_elems(*type);
        int64_t row = n_dims ? v.shape.back() : 1;
        if (row % be != 0)
          r_.fail(dims_at, field, cat("the innermost dim ", row, " is not a multiple of the ", v.type_name(),
                                      " block size ", be));
        auto nb = weight_type_bytes(*type, numel);
        if (!nb) r_.fail(dims_at, field, "byte size overflows");
        v.nbytes = static_cast<size_t>(*nb);
      }
      v.file_offset = offset;  // relative for now; made absolute below
      v.owner = nullptr;
      info_at.push_back(off_at);
      f.tensors.push_back(std::move(v));
    }

    uint64_t end_of_infos = r_.offset();
    f.data_offset = (end_of_infos + f.alignment - 1) / f.alignment * f.alignment;
    if (!f.tensors.empty() && f.data_offset > r_.size())
      r_.fail(end_of_infos, "tensor data", cat("the data section would start at byte ", f.data_offset,
                                               ", past the end of the file (", r_.size(), " bytes)"));
    uint64_t data_size = f.tensors.empty() ? 0 : r_.size() - f.data_offset;
    for (size_t i = 0; i < f.tensors.size(); ++i) {
      TensorView& v = f.tensors[i];
      uint64_t rel = v.file_offset;
      std::string field = cat("tensor '", v.name, "' offset");
      if (rel % f.alignment != 0)
        r_.fail(info_at[i], field, cat(rel, " is not a multiple of the alignment ", f.alignment));
      if (rel > data_size || v.nbytes > data_size - rel)
        r_.fail(info_at[i], field, cat("bytes [", rel, ", ", rel + v.nbytes, ") of the data section run past its end (",
                                       data_size, " bytes from file offset ", f.data_offset, "); the file is truncated"));
      v.file_offset = f.data_offset + rel;
      v.data = r_.data() + v.file_offset;
      v.owner = owner;
    }
    std::vector<size_t> order(f.tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return f.tensors[a].file_offset < f.tensors[b].file_offset;
    });
    for (size_t k = 1; k < order.size(); ++k) {
      const TensorView &p = f.tensors[order[k - 1]], &t = f.tensors[order[k]];
      if (t.file_offset < p.file_offset + p.nbytes)
        r_.fail(info_at[order[k]], cat("tensor '", t.name, "' offset"),
                cat("its bytes overlap those of tensor '", p.name, "'"));
    }
    return f;
  }

 private:
  ByteReader r_;
  const GgufLimits& limits_;
};

}  // namespace

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return &v;
  return nullptr;
}

const TensorView* GgufFile::find_tensor(std::string_view name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

GgufFile parse_gguf(const uint8_t* data, size_t size, std::shared_ptr<void> owner, const std::string& source,
                    const GgufLimits& limits) {
  return GgufParser(data, size, source, limits).parse(std::move(owner));
}

GgufFile read_gguf(const std::string& path, const GgufLimits& limits) {
  auto m = MappedFile::open(path);
  return parse_gguf(m->data(), m->size(), m, path, limits);
}

}  // namespace rlx::formats
