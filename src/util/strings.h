// Small string helpers shared by the printer, parser, CLI and error messages.
#pragma once
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace rlx {

// Concatenates any streamable arguments: cat("node ", 3, " has ", 2, " inputs").
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <class T, class F>
std::string join(const std::vector<T>& items, std::string_view sep, F&& fmt) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += fmt(items[i]);
  }
  return out;
}

template <class T>
std::string join(const std::vector<T>& items, std::string_view sep = ", ") {
  return join(items, sep, [](const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
  });
}

std::vector<std::string> split(std::string_view s, char sep);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);

// Shortest decimal text that reads back to exactly the same value.
std::string format_double(double v);
std::string format_float(float v);
// JSON string literal with escapes.
std::string json_quote(std::string_view s);

}  // namespace rlx
