// Guards for parsing JSON from files: a size cap, a nesting-depth scan before the parser runs
// (so a hostile "[[[[…" cannot exhaust the stack or memory), and parse errors turned into
// rlx::Error naming the file and byte offset.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rlx::formats {

// Parses `text` from `source`; throws rlx::Error(format) for malformed JSON, text over
// `max_bytes` or nesting deeper than `max_depth`. `base_offset` is added to reported offsets.
nlohmann::json parse_json_checked(std::string_view text, const std::string& source, size_t max_bytes,
                                  int max_depth = 64, size_t base_offset = 0);

// Nesting depth of the JSON text, ignoring brackets inside strings; stops counting (and
// returns) as soon as the depth passes `limit`.
int json_depth(std::string_view text, int limit, size_t* at = nullptr);

}  // namespace rlx::formats
