// The gpu device's parts: the OpenCL context (cl.h), the kernels' target on it, and the executable.
#pragma once
#include <memory>

#include "backends/opencl/cl.h"
#include "backends/vulkan/target.h"
#include "ir/graph.h"
#include "runtime/backend.h"

namespace rlx::backends::opencl {

// The vulkan device's kernels as OpenCL C (c_like.h): 8/16/64-bit integers and byte stores of
// the full profile; no subgroups or cooperative matrices (their schedules are not printed).
vulkan::KernelTarget cl_target();
std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir);

}  // namespace rlx::backends::opencl
