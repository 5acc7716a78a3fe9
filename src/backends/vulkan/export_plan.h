// A planned LIR as a program for a host RLX cannot run in-process (metal, rocm): the buffers are
// the executables' (opengl, gpu) — the memory plan's arena, one per graph input, the constants
// (all in one weights blob, each at a 256-byte aligned offset), the steps' scratch and the
// index-error words — and every dispatch binds whole buffers in its kernel's order with its
// words (each operand's element offset, then the kernel's own) resolved here. A host then only
// copies inputs in, runs the dispatches in order with a barrier between each, checks the error
// words and copies outputs out. Each device prints this plan for its host (plan.json, a C++
// table) next to its kernels.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace rlx::backends::vulkan {

struct ExportBuffer {
  std::string name;  // "arena", "input0", "weights", "scratch", "error"; "v12", "c3" (own_buffers)
  size_t bytes = 0;
  std::optional<size_t> weights_offset;  // a constant's own buffer: where its bytes start in weights
};

struct ExportTensor {
  std::string name, buffer;
  size_t offset = 0, bytes = 0;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
};

struct ExportDispatch {
  std::string kernel;  // its file, "kernels/k3.metal"
  size_t kernel_index = 0;
  std::string name, node;
  uint32_t step = 0;  // the plan's step (a node's launches share one): error words name it
  std::vector<std::string> buffers;
  std::vector<bool> writes;  // by binding: whether the kernel writes it (outputs, scratch, errors)
  std::vector<uint32_t> words;
  std::array<uint32_t, 3> groups{1, 1, 1}, threads{1, 1, 1};
};

struct ExportedPlan {
  std::string graph;
  std::vector<ExportBuffer> buffers;
  std::vector<ExportTensor> inputs, outputs;
  std::vector<ExportDispatch> dispatches;
  std::vector<std::pair<std::string, std::string>> kernels;  // file → source, in first-use order
  std::string weights;
};

struct ExportOptions {
  // Every value the memory plan put in the arena gets a buffer of its own ("v<id>", views inside
  // their roots' buffers), and so does every constant ("c<n>", its bytes at weights_offset in the
  // weights): a kernel then never binds one buffer for both reading and writing, which WebGPU
  // validation refuses (webgpu's exported page). Costs the arena's reuse of memory.
  bool own_buffers = false;
};

// The plan of `lir` with kernels printed for the current target (ScopedTarget) as
// kernels/kN<ext>; `threads_key` is the text the kernel source carries before its threads per
// group ("// threads per threadgroup: " then "X x Y x Z", or "[numthreads(" then "X, Y, Z").
// `device` names the errors. Kernels of the HLSL flavour get its trailing words and error
// binding, as its executables give them (hlsl.h).
ExportedPlan export_plan(const ir::Graph& lir, const std::string& device, const std::string& ext, const std::string& threads_key,
                         const ExportOptions& options = {});

// The plan as JSON of format `format` ("rlx-metal-plan-1").
std::string plan_json(const ExportedPlan& p, const std::string& format);

size_t buffer_index(const ExportedPlan& p, const std::string& name);

}  // namespace rlx::backends::vulkan
