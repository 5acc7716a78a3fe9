#include "frontends/onnx/proto.h"

#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

#include "formats/mapped_file.h"
#include "frontends/rten/rten.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

using formats::MappedFile;

namespace fs = std::filesystem;
using ::onnx::TensorProto;

namespace {

// Protobuf messages above 2 GiB cannot be parsed; such models keep weights as external data.
constexpr size_t kMaxProtoBytes = (size_t{1} << 31) - 1;
// No tensor in any real model comes near this many elements; it guards size arithmetic.
constexpr int64_t kMaxElements = int64_t{1} << 40;

[[noreturn]] void bad(const std::string& what, const std::string& msg) { throw Error(ErrorKind::format, cat(what, ": ", msg)); }

}  // namespace

std::shared_ptr<::onnx::ModelProto> load_model(const std::string& path) {
  auto file = MappedFile::open(path);
  if (file->size() == 0) throw Error(ErrorKind::format, cat(path, ": empty file, not an ONNX model"));
  // .rten models read as the ONNX they were converted from
  if (rten::looks_like_rten(file->data(), file->size())) return rten::rten_to_onnx(file->data(), file->size(), path);
  if (file->size() > kMaxProtoBytes)
    throw Error(ErrorKind::format, cat(path, ": ", file->size(), " bytes exceed protobuf's 2 GiB message limit; save the weights as external data"));
  auto model = std::make_shared<::onnx::ModelProto>();
  if (!model->ParseFromArray(file->data(), static_cast<int>(file->size())))
    throw Error(ErrorKind::format, cat(path, ": not a valid ONNX ModelProto (", file->size(),
                                       " bytes; the protobuf does not parse: truncated or corrupted file?)"));
  // A file cut at a field boundary still parses: check what every model must have.
  if (!model->has_graph())
    throw Error(ErrorKind::format, cat(path, ": the ModelProto has no graph (truncated or corrupted file, or not ONNX)"));
  if (model->opset_import_size() == 0 && model->ir_version() >= 3)
    throw Error(ErrorKind::format, cat(path, ": the model declares no opset_import (truncated or corrupted file?)"));
  return model;
}

bool looks_like_onnx(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) return true;
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".rten") == 0) return true;
  auto file = MappedFile::open(path);
  const uint8_t* d = file->data();
  size_t n = file->size();
  if (rten::looks_like_rten(d, n)) return true;
  // Field 1 (ir_version, a varint) comes first in every exporter's output. A safetensors header
  // length can start the same way, but its JSON starts at byte 8.
  if (n < 16 || d[0] != 0x08 || d[1] == 0 || d[1] > 20 || d[8] == '{') return false;
  ::onnx::ModelProto probe;
  return n <= kMaxProtoBytes && probe.ParseFromArray(d, static_cast<int>(n)) && probe.has_graph();
}

std::optional<DType> dtype_from_onnx(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT: return DType::f32;
    case TensorProto::DOUBLE: return DType::f64;
    case TensorProto::FLOAT16: return DType::f16;
    case TensorProto::BFLOAT16: return DType::bf16;
    case TensorProto::INT8: return DType::i8;
    case TensorProto::UINT8: return DType::u8;
    case TensorProto::INT16: return DType::i16;
    case TensorProto::INT32: return DType::i32;
    case TensorProto::INT64: return DType::i64;
    case TensorProto::BOOL: return DType::boolean;
    case TensorProto::COMPLEX64: return DType::c64;
    case TensorProto::COMPLEX128: return DType::c128;
    default: return std::nullopt;
  }
}

std::string onnx_type_name(int32_t t) {
  if (TensorProto::DataType_IsValid(t)) return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t));
  return cat("type ", t);
}

size_t onnx_type_size(int32_t t) {
  switch (t) {
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::UINT8: return 1;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16: return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32: return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::COMPLEX64: return 8;
    case TensorProto::COMPLEX128: return 16;
    default: return 0;
  }
}

std::vector<int64_t> tensor_dims(const TensorProto& t, const std::string& what) {
  std::vector<int64_t> dims;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) bad(what, cat("dim ", d, " is negative"));
    if (d > 0 && n > kMaxElements / d) bad(what, cat("shape [", join(std::vector<int64_t>(t.dims().begin(), t.dims().end())), "] is implausibly large"));
    n *= d;
    dims.push_back(d);
  }
  return dims;
}

namespace {

int64_t numel_of(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The key/value pairs of external_data: location (relative path), offset, length.
struct External {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
};

External external_of(const TensorProto& t, const std::string& what) {
  External e;
  for (const auto& kv : t.external_data()) {
    auto number = [&](const std::string& v) {
      char* end = nullptr;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || x < 0) bad(what, cat("external_data ", kv.key(), " = '", v, "' is not a non-negative integer"));
      return static_cast<int64_t>(x);
    };
    if (kv.key() == "location") e.location = kv.value();
    else if (kv.key() == "offset") e.offset = number(kv.value());
    else if (kv.key() == "length") e.length = number(kv.value());
  }
  if (e.location.empty()) bad(what, "external data without a location");
  return e;
}

// Resolves an external-data location inside the model's directory; refuses absolute paths and
// anything that leaves the directory (../, symlinks pointing out).
std::string resolve_external(const std::string& base_dir, const std::string& location, const std::string& what) {
  fs::path loc(location);
  if (loc.is_absolute()) bad(what, cat("external data location '", location, "' is absolute; it must be relative to the model's directory"));
  for (const auto& part : loc)
    if (part == "..") bad(what, cat("external data location '", location, "' leaves the model's directory"));
  std::error_code ec;
  fs::path base = fs::weakly_canonical(base_dir.empty() ? fs::path(".") : fs::path(base_dir), ec);
  fs::path full = fs::weakly_canonical(base / loc, ec);
  if (ec) bad(what, cat("external data file '", location, "' cannot be resolved: ", ec.message()));
  auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..")
    bad(what, cat("external data location '", location, "' resolves outside the model's directory"));
  if (!fs::is_regular_file(full, ec)) throw Error(ErrorKind::io, cat(what, ": external data file '", full.string(), "' does not exist"));
  return full.string();
}

// One mapping per external data file while any tensor views it (models keep hundreds of
// tensors in one file).
std::shared_ptr<MappedFile> map_external(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<MappedFile>> open;
  std::lock_guard<std::mutex> lock(mu);
  if (auto f = open[path].lock()) return f;
  auto f = MappedFile::open(path);
  open[path] = f;
  return f;
}

template <class Src>
void copy_converted(const Src& src, Tensor& out, DType d) {
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto v = src.Get(static_cast<int>(i));
    switch (d) {
      case DType::f32: out.data_as<float>()[i] = static_cast<float>(v); break;
      case DType::f64: out.data_as<double>()[i] = static_cast<double>(v); break;
      case DType::i8: out.data_as<int8_t>()[i] = static_cast<int8_t>(v); break;
      case DType::u8: out.data_as<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case DType::boolean: out.data_as<uint8_t>()[i] = v != 0; break;
      case DType::i16: out.data_as<int16_t>()[i] = static_cast<int16_t>(v); break;
      case DType::f16:
      case DType::bf16: out.data_as<uint16_t>()[i] = static_cast<uint16_t>(v); break;  // the bits
      case DType::i32: out.data_as<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DType::i64: out.data_as<int64_t>()[i] = static_cast<int64_t>(v); break;
      default: break;
    }
  }
}

}  // namespace

Tensor tensor_from_proto(const TensorProto& t, const std::string& base_dir, const std::string& what, std::shared_ptr<void> owner) {
  auto dt = dtype_from_onnx(t.data_type());
  if (!dt) throw Error(ErrorKind::unsupported, cat(what, ": dtype ", onnx_type_name(t.data_type()), " is not supported by RLX"));
  std::vector<int64_t> dims = tensor_dims(t, what);
  int64_t n = numel_of(dims);
  size_t bytes = dtype_bytes(*dt, n);
  if (t.has_data_location() && t.data_location() == TensorProto::EXTERNAL) {
    External e = external_of(t, what);
    std::string path = resolve_external(base_dir, e.location, what);
    auto file = map_external(path);
    int64_t len = e.length < 0 ? static_cast<int64_t>(file->size()) - e.offset : e.length;
    if (e.offset > static_cast<int64_t>(file->size()) || len < 0 || static_cast<uint64_t>(e.offset) + static_cast<uint64_t>(len) > file->size())
      bad(what, cat("external data [", e.offset, ", +", len, ") lies outside '", e.location, "' (", file->size(), " bytes)"));
    if (static_cast<size_t>(len) != bytes)
      bad(what, cat("external data holds ", len, " bytes, but ", dtype_name(*dt), "[", join(dims), "] needs ", bytes));
    // Copy-on-write mapping: the tensor views the file and keeps the mapping alive.
    void* p = const_cast<uint8_t*>(file->data()) + e.offset;
    if (reinterpret_cast<uintptr_t>(p) % 8 == 0) return Tensor::wrap(*dt, dims, p, file);
    return Tensor::from_bytes(*dt, dims, p, bytes);
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != bytes)
      bad(what, cat("raw_data holds ", raw.size(), " bytes, but ", dtype_name(*dt), "[", join(dims), "] needs ", bytes));
    if (owner && reinterpret_cast<uintptr_t>(raw.data()) % 8 == 0 && bytes >= 4096)
      return Tensor::wrap(*dt, dims, const_cast<char*>(raw.data()), owner);
    return Tensor::from_bytes(*dt, dims, raw.data(), bytes);
  }
  auto check_count = [&](int count, int per_element, const char* field) {
    if (static_cast<int64_t>(count) != n * per_element)
      bad(what, cat(field, " holds ", count, " values, but ", dtype_name(*dt), "[", join(dims), "] needs ", n * per_element));
  };
  // The typed field must hold exactly the elements: check before allocating.
  switch (*dt) {
    case DType::f32: check_count(t.float_data_size(), 1, "float_data"); break;
    case DType::c64: check_count(t.float_data_size(), 2, "float_data"); break;
    case DType::c128: check_count(t.double_data_size(), 2, "double_data"); break;
    case DType::f64: check_count(t.double_data_size(), 1, "double_data"); break;
    case DType::i64: check_count(t.int64_data_size(), 1, "int64_data"); break;
    default: check_count(t.int32_data_size(), 1, "int32_data"); break;
  }
  Tensor out = Tensor::zeros(*dt, dims);
  switch (*dt) {
    case DType::f32:
      check_count(t.float_data_size(), 1, "float_data");
      copy_converted(t.float_data(), out, *dt);
      break;
    case DType::c64:
      check_count(t.float_data_size(), 2, "float_data");
      for (int i = 0; i < t.float_data_size(); ++i) out.data_as<float>()[i] = t.float_data(i);
      break;
    case DType::c128:
      for (int i = 0; i < t.double_data_size(); ++i) out.data_as<double>()[i] = t.double_data(i);
      break;
    case DType::f64:
      check_count(t.double_data_size(), 1, "double_data");
      copy_converted(t.double_data(), out, *dt);
      break;
    case DType::i64:
      check_count(t.int64_data_size(), 1, "int64_data");
      copy_converted(t.int64_data(), out, *dt);
      break;
    default:  // int32_data carries every narrower type (f16/bf16 as their bits)
      check_count(t.int32_data_size(), 1, "int32_data");
      copy_converted(t.int32_data(), out, *dt);
      break;
  }
  return out;
}

TensorProto read_tensor_file(const std::string& path) {
  auto file = MappedFile::open(path);
  TensorProto t;
  if (file->size() > kMaxProtoBytes || !t.ParseFromArray(file->data(), static_cast<int>(file->size())))
    throw Error(ErrorKind::format, cat(path, ": not a valid ONNX TensorProto (truncated or corrupted?)"));
  return t;
}

}  // namespace rlx::frontends::onnx
