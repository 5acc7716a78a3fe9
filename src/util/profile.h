// Kernel time totals for the RLX_*_PROFILE flags: each device adds (label, ms) per kernel run;
// the totals are printed to stderr, per device and largest first, when the process exits.
#pragma once
#include <string>

namespace rlx {

void profile_add(const char* device, const std::string& label, double ms);

}  // namespace rlx
