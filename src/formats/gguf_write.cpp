#include <algorithm>
#include <cstring>
#include <set>

#include "formats/byte_reader.h"
#include "formats/file_write.h"
#include "formats/gguf.h"
#include "formats/quant.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

class Out {
 public:
  std::vector<uint8_t> bytes;
  template <class T>
  void put(T v) {
    size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
  }
  void append(const void* p, size_t n) {
    if (!n) return;
    size_t at = bytes.size();
    bytes.resize(at + n);
    std::memcpy(bytes.data() + at, p, n);
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    append(s.data(), s.size());
  }
  void pad(uint64_t alignment) { bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, 0); }
};

void put_value(Out& o, const GgufValue& v);

void put_array(Out& o, const GgufArray& a) {
  o.put<uint32_t>(static_cast<uint32_t>(a.elem));
  o.put<uint64_t>(a.size());
  if (gguf_type_size(a.elem)) o.append(a.raw.data(), a.raw.size());
  else if (a.elem == GgufType::string)
    for (const auto& s : a.strings) o.str(s);
  else
    for (const auto& e : a.arrays) put_array(o, *e.as_array());
}

void put_value(Out& o, const GgufValue& v) {
  std::visit([&](const auto& x) {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::string>) o.str(x);
    else if constexpr (std::is_same_v<T, GgufArray>) put_array(o, x);
    else if constexpr (std::is_same_v<T, bool>) o.put<uint8_t>(x ? 1 : 0);
    else o.put<T>(x);
  }, v.v);
}

void check_value(const std::string& key, const GgufValue& v) {
  if (const std::string* s = v.as_string()) {
    if (!is_valid_utf8(*s)) throw Error(ErrorKind::invalid_argument, cat("GGUF metadata '", key, "' is not valid UTF-8"));
  } else if (const GgufArray* a = v.as_array()) {
    if (a->elem == GgufType::array)
      for (const auto& e : a->arrays)
        if (!e.as_array()) throw Error(ErrorKind::invalid_argument, cat("GGUF metadata '", key, "' mixes element types"));
    for (const auto& s : a->strings)
      if (!is_valid_utf8(s)) throw Error(ErrorKind::invalid_argument, cat("GGUF metadata '", key, "' is not valid UTF-8"));
    for (const auto& e : a->arrays) check_value(key, e);
  }
}

}  // namespace

void GgufWriter::set(const std::string& key, GgufValue value) {
  if (!is_valid_utf8(key) || key.empty())
    throw Error(ErrorKind::invalid_argument, cat("GGUF key '", key, "' must be non-empty UTF-8"));
  check_value(key, value);
  if (key == "general.alignment") {
    if (value.type() != GgufType::u32)
      throw Error(ErrorKind::invalid_argument, "general.alignment must be a uint32");
    set_alignment(static_cast<uint32_t>(*value.as_uint()));
    return;
  }
  for (auto& kv : metadata_)
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::set_alignment(uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > (1u << 20))
    throw Error(ErrorKind::invalid_argument, cat("GGUF alignment ", alignment, " is not a power of two up to 1 MiB"));
  alignment_ = alignment;
}

void GgufWriter::add_tensor(const TensorView& t) {
  auto id = weight_type_ggml_id(t.type);
  if (!id) throw Error(ErrorKind::invalid_argument, cat("tensor '", t.name, "' is ", t.type_name(), ", which GGUF cannot store"));
  if (t.name.empty() || !is_valid_utf8(t.name))
    throw Error(ErrorKind::invalid_argument, cat("tensor name '", t.name, "' must be non-empty UTF-8"));
  for (const auto& e : tensors_)
    if (e.name == t.name) throw Error(ErrorKind::invalid_argument, cat("tensor '", t.name, "' is added twice"));
  int64_t row = t.shape.empty() ? 1 : t.shape.back();
  auto need = weight_type_bytes(t.type, static_cast<uint64_t>(t.numel()));
  if (row % weight_type_block_elems(t.type) != 0 || !need || *need != t.nbytes)
    throw Error(ErrorKind::invalid_argument, cat("tensor '", t.name, "': ", t.nbytes, " bytes of ", t.type_name(),
                                                 " do not make shape [", join(t.shape), "] (rows of whole blocks)"));
  tensors_.push_back(t);
}

void GgufWriter::add_tensor_f32(const std::string& name, const std::vector<int64_t>& shape, const float* data,
                                WeightType type, const float* importance) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  int64_t row = shape.empty() ? 1 : shape.back();
  if (row % weight_type_block_elems(type) != 0)
    throw Error(ErrorKind::invalid_argument, cat("tensor '", name, "': the last dim ", row, " is not a multiple of the ",
                                                 weight_type_name(type), " block size ", weight_type_block_elems(type)));
  add_tensor(owned_view(name, type, shape, importance ? quantize(type, data, n, importance, row) : quantize(type, data, n)));
}

std::vector<uint8_t> GgufWriter::header(std::vector<uint64_t>* offsets, uint64_t* data_bytes) const {
  Out o;
  o.append("GGUF", 4);
  o.put<uint32_t>(3);
  o.put<uint64_t>(tensors_.size());
  bool custom_alignment = alignment_ != 32;
  o.put<uint64_t>(metadata_.size() + (custom_alignment ? 1 : 0));
  for (const auto& [k, v] : metadata_) {
    o.str(k);
    o.put<uint32_t>(static_cast<uint32_t>(v.type()));
    put_value(o, v);
  }
  if (custom_alignment) {
    o.str("general.alignment");
    o.put<uint32_t>(static_cast<uint32_t>(GgufType::u32));
    o.put<uint32_t>(alignment_);
  }
  uint64_t offset = 0;
  for (const TensorView& t : tensors_) {
    o.str(t.name);
    o.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (size_t d = t.shape.size(); d-- > 0;) o.put<uint64_t>(static_cast<uint64_t>(t.shape[d]));  // innermost first
    o.put<uint32_t>(*weight_type_ggml_id(t.type));
    o.put<uint64_t>(offset);
    offsets->push_back(offset);
    offset = (offset + t.nbytes + alignment_ - 1) / alignment_ * alignment_;
  }
  o.pad(alignment_);
  *data_bytes = offset;
  return std::move(o.bytes);
}

std::vector<uint8_t> GgufWriter::bytes() const {
  std::vector<uint64_t> offsets;
  uint64_t data_bytes = 0;
  std::vector<uint8_t> out = header(&offsets, &data_bytes);
  size_t start = out.size();
  out.resize(start + data_bytes, 0);
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].nbytes) std::memcpy(out.data() + start + offsets[i], tensors_[i].data, tensors_[i].nbytes);
  return out;
}

void GgufWriter::write(const std::string& path) const {
  std::vector<uint64_t> offsets;
  uint64_t data_bytes = 0;
  std::vector<uint8_t> head = header(&offsets, &data_bytes);
  static const uint8_t kZeros[256] = {};
  write_file_atomic(path, [&](const auto& put) {
    put(head.data(), head.size());
    uint64_t at = 0;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      for (; at < offsets[i]; at += std::min<uint64_t>(offsets[i] - at, sizeof kZeros))
        put(kZeros, static_cast<size_t>(std::min<uint64_t>(offsets[i] - at, sizeof kZeros)));
      put(tensors_[i].data, tensors_[i].nbytes);
      at += tensors_[i].nbytes;
    }
    for (; at < data_bytes; at += std::min<uint64_t>(data_bytes - at, sizeof kZeros))
      put(kZeros, static_cast<size_t>(std::min<uint64_t>(data_bytes - at, sizeof kZeros)));
  });
}

}  // namespace rlx::formats
