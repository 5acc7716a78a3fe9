// A planned LIR as a Metal program's files: the exported plan (vulkan/export_plan.h) as
// plan.json, its kernels as MSL, the weights, and a README that says how a host runs them.
#include "backends/metal/metal.h"
#include "backends/vulkan/export_plan.h"

namespace rlx::backends::metal {

namespace {

const char* kReadme = R"(# A Metal program emitted by RLX

`rlx export --target metal` wrote this directory from a compiled plan. It was **not run** where it
was made (no Apple GPU there): the kernels are the ones RLX's vulkan, opengl and gpu (OpenCL)
devices run and test, printed as MSL 2.

- `kernels/kNNN.metal` — one compute kernel each, `kernel void rlx_kernel`, buffers at
  `[[buffer(0…)]]` in the order a dispatch lists them, then its words (uint32s) as a constant
  struct at the next index.
- `weights.bin` — every constant of the graph, at the offsets `plan.json` gives.
- `plan.json` — `buffers` (name and bytes: the arena, one per input, the weights, the scratch,
  the 64-byte error words), `inputs` and `outputs` (buffer, byte offset, dtype, shape), and
  `dispatches` in order: kernel file, buffer names, words, threadgroups and threads per
  threadgroup.

To run it: make one MTLBuffer per entry of `buffers` (weights from `weights.bin`), copy each input
in, encode every dispatch in order on one compute encoder with a memory barrier between them,
zero the error words first and, after the command buffer completes, report an error when
`error[0]` is not 0 (`error[1]` is the step, `error[2..5]` the value and bound as lo/hi words),
then copy each output out.
)";

}  // namespace

vulkan::KernelTarget metal_target() {
  vulkan::KernelTarget t;
  t.api = vulkan::KernelApi::metal;
  t.features.int64 = t.features.int16 = t.features.int8 = true;
  t.features.storage8 = t.features.storage16 = true;
  t.features.max_storage_range = uint64_t{1} << 32;
  t.features.max_shared_bytes = 32768;
  return t;
}

std::map<std::string, std::string> emit_program(const ir::Graph& lir) {
  vulkan::ScopedTarget target(metal_target());
  const vulkan::ExportedPlan p = vulkan::export_plan(lir, "metal", ".metal", "// threads per threadgroup: ");
  std::map<std::string, std::string> files(p.kernels.begin(), p.kernels.end());
  files["plan.json"] = vulkan::plan_json(p, "rlx-metal-plan-1");
  files["weights.bin"] = p.weights;
  files["README.md"] = kReadme;
  return files;
}

}  // namespace rlx::backends::metal
