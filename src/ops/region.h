// Fused elementwise regions: the body graph of an elementwise_region node, parsed once and
// cached by its text.
#pragma once
#include <memory>
#include <string>

#include "ir/graph.h"

namespace rlx::ops {

// The parsed body (shared, immutable). Throws rlx::Error(invalid_graph) on a malformed body.
std::shared_ptr<const ir::Graph> region_body(const std::string& body_text);

}  // namespace rlx::ops
