// A device whose kernels are the vulkan families printed for a fixed target (opengl, gpu,
// metal): it claims what the families claim for that target's features, whether or not the
// device is present (docs/ops.md, dispatch reports read the same everywhere).
#pragma once
#include <string>
#include <vector>

#include "backends/vulkan/kernels.h"
#include "backends/vulkan/target.h"
#include "runtime/backend.h"

namespace rlx::backends::vulkan {

class FamilyBackend : public runtime::Backend {
 public:
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    return vulkan::claims(op, in, out, attrs, target().features);
  }
  bool claims_op(ir::Op op) const override { return vulkan::claims_op(op); }
  bool implements_variant(ir::Op op, const std::string& attr) const override { return vulkan::implements_variant(op, attr); }

 protected:
  // The device's target, computed once (claims are asked for every node).
  virtual const KernelTarget& target() const = 0;
};

}  // namespace rlx::backends::vulkan
