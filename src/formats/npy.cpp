#include "formats/npy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "formats/mapped_file.h"
#include "rlx/error.h"
#include "util/half.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 40;

[[noreturn]] void bad(const std::string& what, const std::string& msg) { throw Error(ErrorKind::format, cat(what, ": ", msg)); }

// The value text of `key` in the header dict: 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
std::string dict_value(const std::string& h, const std::string& key, const std::string& what) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) k = h.find("\"" + key + "\"");
  if (k == std::string::npos) bad(what, cat("the header has no '", key, "'"));
  size_t colon = h.find(':', k);
  if (colon == std::string::npos) bad(what, cat("malformed header near '", key, "'"));
  size_t i = colon + 1;
  while (i < h.size() && h[i] == ' ') ++i;
  if (i >= h.size()) bad(what, "malformed header");
  if (h[i] == '\'' || h[i] == '"') {
    size_t e = h.find(h[i], i + 1);
    if (e == std::string::npos) bad(what, "unterminated string in the header");
    return h.substr(i + 1, e - i - 1);
  }
  if (h[i] == '(') {
    size_t e = h.find(')', i);
    if (e == std::string::npos) bad(what, "unterminated shape tuple in the header");
    return h.substr(i, e - i + 1);
  }
  size_t e = h.find_first_of(",}", i);
  return std::string(trim(h.substr(i, e == std::string::npos ? std::string::npos : e - i)));
}

struct Descr {
  DType dtype;
  bool swap = false;
};

Descr parse_descr(const std::string& d, const std::string& what) {
  if (d.size() < 3) bad(what, cat("unsupported dtype descr '", d, "'"));
  char order = d[0];
  std::string code = d.substr(1);
  bool big = order == '>';
  if (order != '<' && order != '>' && order != '|' && order != '=') bad(what, cat("unsupported dtype descr '", d, "'"));
  Descr r{DType::f32, false};
  if (code == "f4") r.dtype = DType::f32;
  else if (code == "f8") r.dtype = DType::f64;
  else if (code == "f2") r.dtype = DType::f16;
  else if (code == "i1") r.dtype = DType::i8;
  else if (code == "u1") r.dtype = DType::u8;
  else if (code == "i2") r.dtype = DType::i16;
  else if (code == "i4") r.dtype = DType::i32;
  else if (code == "i8") r.dtype = DType::i64;
  else if (code == "b1") r.dtype = DType::boolean;
  else if (code == "c8") r.dtype = DType::c64;
  else if (code == "c16") r.dtype = DType::c128;
  else bad(what, cat("dtype '", d, "' has no RLX equivalent (RLX has f16 f32 f64 bf16 i8 u8 i16 i32 i64 bool c64 c128)"));
  r.swap = big && dtype_size(r.dtype) > 1;
  return r;
}

std::vector<int64_t> parse_shape(const std::string& s, const std::string& what) {
  std::vector<int64_t> dims;
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') bad(what, cat("the shape '", s, "' is not a tuple"));
  std::string inner = s.substr(1, s.size() - 2);
  int64_t n = 1;
  for (auto part : split(inner, ',')) {
    auto t = trim(part);
    if (t.empty()) continue;
    char* end = nullptr;
    std::string ts(t);
    errno = 0;
    long long v = std::strtoll(ts.c_str(), &end, 10);
    if (*end || v < 0 || errno == ERANGE) bad(what, cat("bad shape entry '", ts, "'"));
    // n: the product of the nonzero dims (a zero dim does not make the others plausible)
    if (v > 0 && n > kMaxElements / v) bad(what, "the shape is implausibly large");
    if (v > 0) n *= v;
    dims.push_back(v);
  }
  return dims;
}

}  // namespace

Tensor parse_npy(const uint8_t* p, size_t n, const std::string& what) {
  if (n < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) bad(what, "not a .npy file (no \\x93NUMPY magic)");
  int major = p[6];
  size_t hlen, off;
  if (major == 1) {
    hlen = p[8] | (static_cast<size_t>(p[9]) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12) bad(what, "truncated header");
    hlen = p[8] | (static_cast<size_t>(p[9]) << 8) | (static_cast<size_t>(p[10]) << 16) | (static_cast<size_t>(p[11]) << 24);
    off = 12;
  } else {
    bad(what, cat("unsupported .npy version ", major));
  }
  if (off + hlen > n) bad(what, "the header runs past the end of the file");
  std::string h(reinterpret_cast<const char*>(p + off), hlen);
  Descr d = parse_descr(dict_value(h, "descr", what), what);
  bool fortran = dict_value(h, "fortran_order", what) == "True";
  std::vector<int64_t> dims = parse_shape(dict_value(h, "shape", what), what);
  int64_t count = 1;
  for (int64_t x : dims) count *= x;
  size_t bytes = dtype_bytes(d.dtype, count);
  size_t data_off = off + hlen;
  if (n - data_off < bytes) bad(what, cat("holds ", n - data_off, " data bytes, ", dtype_name(d.dtype), "[", join(dims), "] needs ", bytes));
  std::vector<int64_t> shape = dims;
  if (fortran) std::reverse(shape.begin(), shape.end());
  Tensor t = Tensor::from_bytes(d.dtype, shape, p + data_off, bytes);
  if (d.swap) {
    size_t es = dtype_size(d.dtype) / (is_complex(d.dtype) ? 2 : 1);
    uint8_t* q = t.data_as<uint8_t>();
    for (size_t i = 0; i < bytes; i += es) std::reverse(q + i, q + i + es);
  }
  if (fortran && dims.size() > 1) {
    std::vector<int64_t> perm;
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) perm.push_back(i);
    t = t.transpose(perm).contiguous();
  }
  return t;
}

Tensor read_npy(const std::string& path) {
  auto f = MappedFile::open(path);
  return parse_npy(f->data(), f->size(), path);
}

std::string npy_bytes(const Tensor& in) {
  Tensor t = in.contiguous();
  if (t.dtype() == DType::bf16) {  // NumPy has no bfloat16: widen exactly to float32
    std::vector<float> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = bf16_to_f32(t.data_as<uint16_t>()[i]);
    t = Tensor::from_vector(v, t.shape());
  }
  const char* descr = nullptr;
  switch (t.dtype()) {
    case DType::f32: descr = "<f4"; break;
    case DType::f64: descr = "<f8"; break;
    case DType::f16: descr = "<f2"; break;
    case DType::i8: descr = "|i1"; break;
    case DType::u8: descr = "|u1"; break;
    case DType::i16: descr = "<i2"; break;
    case DType::i32: descr = "<i4"; break;
    case DType::i64: descr = "<i8"; break;
    case DType::boolean: descr = "|b1"; break;
    case DType::c64: descr = "<c8"; break;
    case DType::c128: descr = "<c16"; break;
    default: throw Error(ErrorKind::unsupported, cat(".npy cannot hold dtype ", dtype_name(t.dtype())));
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += cat(t.shape()[i], t.shape().size() == 1 ? "," : i + 1 < t.shape().size() ? ", " : "");
  shape += ")";
  std::string h = cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  out += h;
  out.append(static_cast<const char*>(t.data()), t.nbytes());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::string bytes = npy_bytes(t);
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, cat("cannot write ", path));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw Error(ErrorKind::io, cat("write to ", path, " failed"));
}

}  // namespace rlx::formats
