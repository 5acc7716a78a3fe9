// Tiny JSON writing helpers for --json output (values are built as strings).
#pragma once
#include <string>
#include <vector>

#include "util/strings.h"

namespace rlx::cli {

inline std::string json_bool(bool b) { return b ? "true" : "false"; }
inline std::string json_array(const std::vector<std::string>& items) { return "[" + join(items, ",") + "]"; }

}  // namespace rlx::cli
