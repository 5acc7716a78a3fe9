#include "backends/vulkan/target.h"

namespace rlx::backends::vulkan {

namespace {
thread_local const KernelTarget* scoped = nullptr;
}  // namespace

const KernelTarget& current_target() {
  if (scoped) return *scoped;
  static const KernelTarget vulkan{Context::get().features(), KernelApi::vulkan};
  return vulkan;
}

ScopedTarget::ScopedTarget(const KernelTarget& t) : target_(t), previous_(scoped) { scoped = &target_; }
ScopedTarget::~ScopedTarget() { scoped = previous_; }

}  // namespace rlx::backends::vulkan
