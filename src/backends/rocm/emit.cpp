// A planned LIR as a ROCm program's files: the exported plan (vulkan/export_plan.h) as plan.json
// and as plan.inc for run.cpp, its kernels as HIP, the weights, a Makefile and a README.
#include "backends/rocm/rocm.h"
#include "backends/vulkan/export_plan.h"
#include "util/strings.h"

namespace rlx::backends::rocm {

namespace {

const char* kReadme = R"(# A ROCm (HIP) program emitted by RLX

`rlx export --target rocm` wrote this directory from a compiled plan. It was **built, not run**
where it was made (no AMD GPU there): the kernels are the ones RLX's vulkan, opengl and gpu
(OpenCL) devices run and test, printed as HIP.

- `kernels/kN.hip` — one kernel each, `extern "C" __global__ void rlx_kernel`, taking the buffers
  a dispatch lists (as pointers, in order) and then its words (uint32s) as one struct by value.
- `weights.bin` — every constant of the graph, at the offsets the plan gives.
- `plan.json` — `buffers` (name and bytes: the arena, one per input, the weights, the scratch,
  the 64-byte error words), `inputs` and `outputs` (buffer, byte offset, dtype, shape), and
  `dispatches` in order: kernel file, buffer names, words, blocks (`threadgroups`) and threads
  per block. `plan.inc` is the same plan as C++ tables for `run.cpp`.
- `run.cpp` — the host: HIP's module API loads `kernels/kN.hsaco`, makes the buffers, copies
  the inputs in, launches every dispatch in order on one stream, checks the index-error words
  and writes each output.

Build with `make` (hipcc; `make ARCHS="gfx942 gfx1100"` for other GPUs), then run

    ./run input0.bin … -o OUT_DIR

with each input as raw little-endian bytes in plan order; every output is written as
`OUT_DIR/<name>.bin`. An index out of range stops it with the step, the value and the bound.
)";

const char* kMakefile = R"(# Builds the kernels' code objects (one bundle per kernel, every arch of ARCHS) and the host.
HIPCC ?= hipcc
ARCHS ?= gfx90a gfx1030
KERNELS := $(sort $(wildcard kernels/*.hip))
OBJECTS := $(KERNELS:.hip=.hsaco)

all: run $(OBJECTS)

kernels/%.hsaco: kernels/%.hip
	$(HIPCC) --genco -O3 $(addprefix --offload-arch=,$(ARCHS)) $< -o $@

run: run.cpp plan.inc
	$(HIPCC) -O2 -std=c++17 run.cpp -o run

clean:
	rm -f run $(OBJECTS)

.PHONY: all clean
)";

std::string c_string(const std::string& s) { return json_quote(s); }  // names are printable: JSON's escapes are C++'s

std::string plan_inc(const vulkan::ExportedPlan& p) {
  std::string s = cat("// The dispatch plan of graph ", c_string(p.graph), " for run.cpp, emitted by rlx (plan.json holds the same)\n");
  s += "static const std::vector<RlxBuffer> kBuffers = {\n";
  for (const auto& b : p.buffers) s += cat("    {\"", b.name, "\", ", b.bytes, "u},\n");
  s += cat("};\nstatic const int kWeights = ", vulkan::buffer_index(p, "weights"), ", kError = ", vulkan::buffer_index(p, "error"), ";\n");
  auto tensors = [&](const char* name, const std::vector<vulkan::ExportTensor>& ts) {
    s += cat("static const std::vector<RlxTensor> ", name, " = {\n");
    for (const auto& t : ts)
      s += cat("    {", c_string(t.name), ", ", vulkan::buffer_index(p, t.buffer), ", ", t.offset, "u, ", t.bytes, "u, \"", dtype_name(t.dtype), "\"},\n");
    s += "};\n";
  };
  tensors("kInputs", p.inputs);
  tensors("kOutputs", p.outputs);
  s += "static const std::vector<std::string> kKernels = {\n";
  for (const auto& [file, src] : p.kernels) s += cat("    \"", file.substr(0, file.rfind('.')), ".hsaco\",\n");
  s += "};\nstatic const std::vector<RlxDispatch> kDispatches = {\n";
  for (const auto& d : p.dispatches) {
    std::vector<std::string> b, w;
    for (const auto& name : d.buffers) b.push_back(std::to_string(vulkan::buffer_index(p, name)));
    for (uint32_t x : d.words) w.push_back(cat(x, "u"));
    s += cat("    {", d.kernel_index, ", {", join(b, ", "), "}, {", join(w, ", "), "}, {", d.groups[0], "u, ", d.groups[1], "u, ", d.groups[2], "u}, {", d.threads[0], "u, ",
             d.threads[1], "u, ", d.threads[2], "u}, ", c_string(d.node), "},\n");
  }
  return s + "};\n";
}

}  // namespace

vulkan::KernelTarget hip_target() {
  vulkan::KernelTarget t;
  t.api = vulkan::KernelApi::hip;
  t.features.int64 = t.features.int16 = t.features.int8 = true;
  t.features.storage8 = t.features.storage16 = true;
  t.features.max_storage_range = uint64_t{1} << 32;
  t.features.max_shared_bytes = 65536;
  return t;
}

std::map<std::string, std::string> emit_program(const ir::Graph& lir) {
  vulkan::ScopedTarget target(hip_target());
  const vulkan::ExportedPlan p = vulkan::export_plan(lir, "rocm", ".hip", "// threads per block: ");
  std::map<std::string, std::string> files(p.kernels.begin(), p.kernels.end());
  files["plan.json"] = vulkan::plan_json(p, "rlx-hip-plan-1");
  files["plan.inc"] = plan_inc(p);
  files["weights.bin"] = p.weights;
  files["run.cpp"] = host_runner_source();
  files["Makefile"] = kMakefile;
  files["README.md"] = kReadme;
  return files;
}

}  // namespace rlx::backends::rocm
