// The backend registry: every built backend registers itself once; lookups by name.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace rlx::runtime {

void register_backend(std::unique_ptr<Backend> backend);
// All registered backends, in registration order.
std::vector<Backend*> backends();
// Throws rlx::Error(invalid_argument) listing the known devices when `name` is unknown.
Backend& backend(const std::string& name);
Backend* find_backend(const std::string& name);

}  // namespace rlx::runtime
