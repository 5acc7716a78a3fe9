#include "text/byte_level.h"

#include <array>

#include "text/utf8.h"

namespace rlx::text {

namespace {

struct Tables {
  std::array<std::string, 256> to_char;
  std::array<int, 324> to_byte;  // characters 0 … 323 cover the whole mapping

  Tables() {
    to_byte.fill(-1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      char32_t c = printable ? b : next++;
      utf8_append(to_char[b], c);
      to_byte[c] = b;
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::string& byte_to_unicode(unsigned char b) { return tables().to_char[b]; }

int unicode_to_byte(char32_t c) { return c < 324 ? tables().to_byte[c] : -1; }

std::string bytes_to_byte_level(std::string_view s) {
  const auto& t = tables();
  std::string out;
  out.reserve(s.size() * 2);
  for (char ch : s) out += t.to_char[static_cast<unsigned char>(ch)];
  return out;
}

}  // namespace rlx::text
