// Writes a file through a temporary sibling renamed into place, so a failed or interrupted
// write never leaves a half-written model behind. Internal to formats/.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace rlx::formats {

// `fill` writes the content through `put(data, n)`; throws rlx::Error(io) on failure.
void write_file_atomic(const std::string& path,
                       const std::function<void(const std::function<void(const void*, size_t)>& put)>& fill);

}  // namespace rlx::formats
