#include "ir/tensor_text.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "rlx/error.h"
#include "util/scalar.h"
#include "util/strings.h"

namespace rlx::ir {

namespace {

constexpr int64_t kMaxListed = 16;

std::string element_text(const Tensor& t, int64_t i) {
  DType d = t.dtype();
  const void* p = t.data();
  switch (dtype_class(d)) {
    case DTypeClass::float_:
      if (d == DType::f64) return format_double(load_f64(p, d, i));
      return format_float(static_cast<float>(load_f64(p, d, i)));
    case DTypeClass::complex: {
      c128 c = load_c128(p, d, i);
      if (d == DType::c128) return cat("(", format_double(c.real()), ",", format_double(c.imag()), ")");
      return cat("(", format_float(static_cast<float>(c.real())), ",", format_float(static_cast<float>(c.imag())), ")");
    }
    case DTypeClass::boolean: return load_i64(p, d, i) ? "true" : "false";
    default: return std::to_string(load_i64(p, d, i));
  }
}

bool has_nan(const Tensor& t) {
  if (!is_float(t.dtype()) && !is_complex(t.dtype())) return false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    c128 c = load_c128(t.data(), t.dtype(), i);
    if (std::isnan(c.real()) || std::isnan(c.imag())) return true;
  }
  return false;
}

bool all_equal(const Tensor& t) {
  if (t.dtype() == DType::i4) {
    for (int64_t i = 1; i < t.numel(); ++i)
      if (load_i64(t.data(), t.dtype(), i) != load_i64(t.data(), t.dtype(), 0)) return false;
    return true;
  }
  size_t es = dtype_size(t.dtype());
  const uint8_t* p = static_cast<const uint8_t*>(t.data());
  for (int64_t i = 1; i < t.numel(); ++i)
    if (std::memcmp(p, p + i * es, es) != 0) return false;
  return true;
}

}  // namespace

std::string tensor_to_text(const Tensor& in) {
  Tensor t = in.contiguous();
  std::string out = cat("tensor<", dtype_name(t.dtype()), "[");
  for (int i = 0; i < t.rank(); ++i) out += (i ? "," : "") + std::to_string(t.shape()[i]);
  out += "]>";
  int64_t n = t.numel();
  bool nan = has_nan(t);
  if (n > 1 && all_equal(t) && !nan) return out + "splat(" + element_text(t, 0) + ")";
  if (n <= kMaxListed && !nan) {
    out += "[";
    for (int64_t i = 0; i < n; ++i) out += (i ? ", " : "") + element_text(t, i);
    return out + "]";
  }
  static const char* hex = "0123456789abcdef";
  out += "0x";
  const uint8_t* p = static_cast<const uint8_t*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    out += hex[p[i] >> 4];
    out += hex[p[i] & 15];
  }
  return out;
}

namespace {

struct Reader {
  std::string_view s;
  const std::string& what;
  size_t i = 0;
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(ErrorKind::parse, cat("tensor attribute ", what, ": ", msg, " at column ", i + 1));
  }
  void skip() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s.substr(i, tok.size()) == tok) {
      i += tok.size();
      return true;
    }
    return false;
  }
  void expect(std::string_view tok) {
    if (!eat(tok)) fail(cat("expected '", tok, "'"));
  }
  std::string_view token() {
    skip();
    size_t b = i;
    while (i < s.size() && s[i] != ',' && s[i] != ']' && s[i] != ')' && s[i] != ' ') ++i;
    return s.substr(b, i - b);
  }
  double real(std::string_view tok) {
    if (tok == "nan") return NAN;
    if (tok == "inf") return INFINITY;
    if (tok == "-inf") return -INFINITY;
    if (tok == "true") return 1;
    if (tok == "false") return 0;
    double v = 0;
    auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (r.ec != std::errc() || r.ptr != tok.data() + tok.size()) fail(cat("'", tok, "' is not a number"));
    return v;
  }
  void element(Tensor& t, int64_t idx) {
    DType d = t.dtype();
    if (is_complex(d)) {
      expect("(");
      double re = real(token());
      expect(",");
      double im = real(token());
      expect(")");
      store_c128(t.data(), d, idx, {re, im});
      return;
    }
    std::string_view tok = token();
    if (is_float(d)) {
      store_f64(t.data(), d, idx, real(tok));
    } else {
      if (tok == "true" || tok == "false") {
        store_i64(t.data(), d, idx, tok == "true");
        return;
      }
      int64_t v = 0;
      auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (r.ec != std::errc() || r.ptr != tok.data() + tok.size()) fail(cat("'", tok, "' is not an integer"));
      store_i64(t.data(), d, idx, v);
    }
  }
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Tensor tensor_from_text(std::string_view text, const std::string& what) {
  Reader r{text, what};
  r.expect("tensor<");
  size_t b = r.i;
  while (r.i < text.size() && text[r.i] != '[') ++r.i;
  auto dt = dtype_from_name(text.substr(b, r.i - b));
  if (!dt) r.fail(cat("unknown dtype '", text.substr(b, r.i - b), "'"));
  r.expect("[");
  std::vector<int64_t> shape;
  if (!r.eat("]")) {
    for (;;) {
      std::string_view tok = r.token();
      int64_t v = -1;
      auto res = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (res.ec != std::errc() || v < 0) r.fail("constant tensors need static, non-negative dims");
      shape.push_back(v);
      if (r.eat(",")) continue;
      r.expect("]");
      break;
    }
  }
  r.expect(">");
  // A constant written out in text is small (a quantized layer, a table); a shape past 1 GiB is
  // a typo or a hostile file, refused before anything is allocated.
  constexpr int64_t kMaxTextBytes = int64_t{1} << 30;
  int64_t n = 1;
  for (auto d : shape) {
    if (d && n > (int64_t{1} << 40) / d) r.fail("tensor is too large for the text form");
    n *= d;
  }
  if (static_cast<double>(n) * static_cast<double>(dtype_bits(*dt)) / 8 > static_cast<double>(kMaxTextBytes))
    r.fail(cat("a constant of ", n, " elements of ", dtype_name(*dt), " is larger than the text form takes (1 GiB)"));
  Tensor t = Tensor::zeros(*dt, shape);
  if (r.eat("splat(")) {
    if (n == 0) r.fail("splat of an empty tensor");
    r.element(t, 0);
    r.expect(")");
    if (*dt == DType::i4) {  // two values a byte: one memset of the nibble pair (a 1 GiB splat in a fraction of a second)
      const auto v = static_cast<uint8_t>(load_i64(t.data(), *dt, 0) & 0x0f);
      std::memset(t.data(), v | (v << 4), t.nbytes());
      if (n % 2) static_cast<uint8_t*>(t.data())[n / 2] = v;  // an odd count leaves the last high nibble 0, as stores do
    } else {
      size_t es = dtype_size(*dt);
      uint8_t* p = static_cast<uint8_t*>(t.data());
      for (int64_t k = 1; k < n; ++k) std::memcpy(p + k * es, p, es);
    }
  } else if (r.eat("0x")) {
    size_t need = t.nbytes() * 2;
    if (text.size() - r.i < need) r.fail(cat("hex data holds ", (text.size() - r.i) / 2, " bytes, the tensor needs ", t.nbytes()));
    uint8_t* p = static_cast<uint8_t*>(t.data());
    for (size_t k = 0; k < t.nbytes(); ++k) {
      int hi = hex_value(text[r.i + 2 * k]), lo = hex_value(text[r.i + 2 * k + 1]);
      if (hi < 0 || lo < 0) r.fail("bad hex digit");
      p[k] = static_cast<uint8_t>(hi * 16 + lo);
    }
    r.i += need;
  } else {
    r.expect("[");
    int64_t k = 0;
    if (!r.eat("]")) {
      for (;;) {
        if (k >= n) r.fail(cat("more than ", n, " elements"));
        r.element(t, k++);
        if (r.eat(",")) continue;
        r.expect("]");
        break;
      }
    }
    if (k != n) r.fail(cat("tensor of ", n, " elements lists ", k));
  }
  r.skip();
  if (r.i != text.size()) r.fail("unexpected trailing text");
  return t;
}

}  // namespace rlx::ir
