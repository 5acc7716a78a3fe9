#include "formats/byte_reader.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

void ByteReader::fail(size_t offset, std::string_view field, const std::string& message) const {
  throw Error(ErrorKind::format, cat(source_, ": ", field, " at byte offset ", offset, ": ", message));
}

void ByteReader::require(uint64_t n, std::string_view field) const {
  if (n > remaining())
    fail(pos_, field, cat("needs ", n, " bytes but the file ends after ", size_, " bytes (", remaining(),
                          " left); the file is truncated or the field is corrupt"));
}

std::string_view ByteReader::bytes(uint64_t n, std::string_view field) {
  require(n, field);
  std::string_view v(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return v;
}

void ByteReader::seek(uint64_t offset, std::string_view field) {
  if (offset > size_) fail(pos_, field, cat("offset ", offset, " is past the end of the file (", size_, " bytes)"));
  pos_ = static_cast<size_t>(offset);
}

bool is_valid_utf8(std::string_view s, size_t* bad_at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  auto bad = [&](size_t at) {
    if (bad_at) *bad_at = at;
    return false;
  };
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
    else return bad(i);
    if (n - i < len) return bad(i);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return bad(i);
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return bad(i);
    i += len;
  }
  return true;
}

}  // namespace rlx::formats
