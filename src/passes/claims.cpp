// The allow-list for fused variants, applied before any device's own claim.
#include "ir/op.h"
#include "passes/dispatch.h"

namespace rlx::passes {

bool KernelClaims::claims(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const {
  for (const auto& [name, value] : attrs.items()) {
    const ir::AttrSpec* spec = ir::find_attr_spec(op, name);
    if (spec && spec->variant && !implements_variant(op, name)) return false;
  }
  return claims_kernel(op, in, out, attrs);
}

}  // namespace rlx::passes
