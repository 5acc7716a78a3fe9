// Registered rewrites: path 3 of the dispatch contract. Each makes an op legal on a device
// that lacks a kernel for it as given (dtype promotion with casts, …).
#pragma once
#include <string>
#include <vector>

#include "passes/dispatch.h"
#include "passes/rewrite.h"

namespace rlx::passes {

struct Rewrite {
  std::string name;  // "promote bf16→f32"
  bool (*applies)(const KernelClaims& device, Op op, const std::vector<Type>& in, const std::vector<Type>& out, const Attrs& attrs);
  std::vector<ValueId> (*apply)(RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs);
};

const std::vector<Rewrite>& registered_rewrites();

}  // namespace rlx::passes
