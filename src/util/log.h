// Debug output gated by the RLX_DEBUG ladder (see flags.def).
#pragma once
#include <string>

#include "util/flags.h"

namespace rlx {

inline bool debug_at(int level) { return flags().RLX_DEBUG >= level; }
// Writes one line to stderr, prefixed with "rlx: ".
void log_line(const std::string& line);

}  // namespace rlx
