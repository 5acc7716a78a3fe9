// The cuda device's Executable: an LIR program whose arena, inputs and scratch live in one
// device allocation per run context, with constants (weights) uploaded once at compile time.
#pragma once
#include <memory>

#include "ir/graph.h"
#include "runtime/backend.h"

namespace rlx::backends::cuda {

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir);

}  // namespace rlx::backends::cuda
