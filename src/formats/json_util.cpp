#include "formats/json_util.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

int json_depth(std::string_view text, int limit, size_t* at) {
  int depth = 0, max = 0;
  bool in_string = false, escape = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max) max = depth;
      if (max > limit) {
        if (at) *at = i;
        return max;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max;
}

nlohmann::json parse_json_checked(std::string_view text, const std::string& source, size_t max_bytes, int max_depth,
                                  size_t base_offset) {
  if (text.size() > max_bytes)
    throw Error(ErrorKind::format, cat(source, ": JSON text is ", text.size(), " bytes; at most ", max_bytes,
                                       " are accepted"));
  size_t at = 0;
  if (json_depth(text, max_depth, &at) > max_depth)
    throw Error(ErrorKind::format, cat(source, ": JSON at byte offset ", base_offset + at, ": nesting deeper than ",
                                       max_depth, " levels"));
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1 and points just past the offending character.
    size_t off = base_offset + (e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    throw Error(ErrorKind::format, cat(source, ": malformed JSON at byte offset ", off, ": ", what));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range for a number beyond double's range (1e999).
    throw Error(ErrorKind::format, cat(source, ": unreadable JSON: ", e.what()));
  }
}

}  // namespace rlx::formats
