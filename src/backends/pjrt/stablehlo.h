// MIR → StableHLO: a LIR graph printed as one MLIR module (func.func @main) in the generic op
// form, which every StableHLO consumer parses. Each MIR op the tpu device claims has one
// spelling here; numpy broadcasting becomes explicit broadcast_in_dim.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace rlx::backends::pjrt {

// Whether the emitter prints this op with these types and attributes.
bool stablehlo_prints(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs);
// The module; throws rlx::Error(unsupported) naming a node it cannot print or a symbolic shape.
std::string to_stablehlo(const ir::Graph& g);
// "tensor<4x8xf32>"
std::string tensor_type(const ir::Type& t);

}  // namespace rlx::backends::pjrt
