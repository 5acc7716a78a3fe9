// Where a device keeps what it compiled between processes: $XDG_CACHE_HOME/rlx/<device>, else
// ~/.cache/rlx/<device>, created on first use; empty when neither can be made (no caching).
#pragma once
#include <string>

namespace rlx {

std::string cache_dir(const std::string& device);

}  // namespace rlx
