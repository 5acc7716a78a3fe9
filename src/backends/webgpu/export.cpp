// A planned LIR as a WebGPU program a browser runs: the exported plan (vulkan/export_plan.h) with a
// buffer of its own for every value and constant, its kernels printed as WGSL with read-only
// bindings where they only read (a browser's WebGPU validates what Dawn in Node is told to skip:
// no buffer may be bound writable and again in one dispatch), plan.json, weights.bin, the
// JavaScript module that runs them (rlx-webgpu.js) and a page that does.
#include <array>
#include <optional>

#include <nlohmann/json.hpp>

#include "backends/vulkan/export_plan.h"
#include "backends/vulkan/hlsl.h"
#include "backends/webgpu/webgpu.h"
#include "codegen/wgsl/from_spirv.h"
#include "rlx/error.h"
#include "util/strings.h"
#include "webgpu_web_files.h"

namespace rlx::backends::webgpu {

namespace {

const char* kReadme = R"(# A WebGPU program emitted by RLX

`rlx export --target webgpu` wrote this directory from a compiled plan. Serve it over HTTP (a
browser will not fetch files next to a page opened from disk) and open `index.html`:

    python3 -m http.server -d THIS_DIR 8000     # then http://localhost:8000/

Nothing is loaded from anywhere else. A browser with WebGPU is needed (Chromium 113+, or
Chromium's `--enable-unsafe-webgpu` where it is off by default).

- `rlx-webgpu.js` — the ES module that runs the plan: `loadPlan(baseUrl)` resolves to a model
  with `inputs`, `outputs` and `run(feeds)` (feeds by input name: typed arrays; i64 inputs as
  BigInt64Array, Int32Array or plain arrays — the kernels compute integers in 32 bits, so their
  values must fit). It is the module RLX's own `webgpu` device uses in Node (Dawn).
- `plan.json` — `buffers` (one per graph input, per planned value and per constant, with the
  constant's offset in `weights.bin`; the scratch and the 64-byte error words), `inputs` and
  `outputs`, `kernels` (the WGSL file and which bindings it writes) and `dispatches` in order
  (kernel, buffers, words for the uniform buffer at group 1, workgroups).
- `kernels/kN.wgsl` — RLX's GPU kernels (the ones its vulkan, opengl, gpu, directx and webgpu
  devices run and test), printed as WGSL.
- `weights.bin` — every constant of the graph.
- `index.html` — a page that runs the model: for a sentence encoder it embeds the sentences you
  type (WordPiece tokenizer in `wordpiece.js`, its vocabulary in `wordpiece.json`) and shows
  their cosine similarities; otherwise it runs the plan on zero inputs and shows the outputs.
)";

}  // namespace

std::map<std::string, std::string> emit_program(const ir::Graph& lir) {
  vulkan::ScopedTarget target(webgpu_target());
  vulkan::ExportOptions options;
  options.own_buffers = true;
  vulkan::ExportedPlan p = vulkan::export_plan(lir, "webgpu", ".hlsl", "[numthreads(", options);
  std::map<std::string, std::string> files;
  std::vector<codegen::wgsl::Translation> wgsl;
  codegen::wgsl::Options wgsl_options;
  wgsl_options.read_only_bindings = true;
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const auto& [file, hlsl] = p.kernels[k];
    try {
      wgsl.push_back(codegen::wgsl::from_spirv(vulkan::compile_compute_hlsl(hlsl, file), wgsl_options));
      files[cat("kernels/k", k, ".wgsl")] = cat("// ", hlsl.substr(3, hlsl.find('\n') - 3), "\n", wgsl.back().wgsl);
    } catch (const Error& e) {
      throw Error(e.kind(), cat("webgpu: ", file, ": ", e.what()));
    }
  }
  // Each kernel's layout: by binding, the WGSL's access where it declares the binding, else (a
  // buffer the kernel never touches, which glslang dropped) what the plan does with it
  std::vector<std::optional<std::vector<bool>>> layout(p.kernels.size());
  nlohmann::json dispatches = nlohmann::json::array();
  size_t max_bindings = 0;
  std::array<uint32_t, 3> max_threads{1, 1, 1};
  uint32_t max_invocations = 1;
  for (const vulkan::ExportDispatch& d : p.dispatches) {
    if (uint64_t{d.groups[0]} * d.groups[1] * d.groups[2] == 0) continue;
    const codegen::wgsl::Translation& t = wgsl[d.kernel_index];
    std::vector<bool> w(d.buffers.size());
    for (size_t b = 0; b < w.size(); ++b) {
      const bool declared = b < t.declared.size() && t.declared[b];
      w[b] = declared ? t.writable[b] : d.writes[b];
      if (declared && !w[b] && d.writes[b])
        throw Error(ErrorKind::internal, cat("webgpu: ", d.name, " for ", d.node, ": binding ", b, " is read-only in its WGSL but written by the plan"));
    }
    auto& l = layout[d.kernel_index];
    if (!l) l = w;
    if (*l != w) throw Error(ErrorKind::internal, cat("webgpu: ", d.name, " for ", d.node, ": its kernel is bound two ways in one plan"));
    // a buffer bound writable must be bound once: the browser's validation refuses anything else
    // (a plan that writes a view of a value it also reads would; say where instead of failing there)
    for (size_t b = 0; b < d.buffers.size(); ++b)
      for (size_t o = 0; w[b] && o < d.buffers.size(); ++o)
        if (o != b && d.buffers[o] == d.buffers[b])
          throw Error(ErrorKind::unsupported, cat("webgpu export: ", d.name, " for ", d.node, " binds buffer ", d.buffers[b], " writable (binding ", b,
                                                  ") and again (binding ", o, "); WebGPU forbids that in a browser"));
    max_bindings = std::max(max_bindings, d.buffers.size());
    for (int a = 0; a < 3; ++a) max_threads[static_cast<size_t>(a)] = std::max(max_threads[static_cast<size_t>(a)], d.threads[static_cast<size_t>(a)]);
    max_invocations = std::max(max_invocations, d.threads[0] * d.threads[1] * d.threads[2]);
    dispatches.push_back({{"kernel", d.kernel_index}, {"name", d.name}, {"node", d.node}, {"step", d.step}, {"buffers", d.buffers}, {"words", d.words}, {"workgroups", d.groups}});
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (size_t k = 0; k < p.kernels.size(); ++k)
    kernels.push_back({{"file", cat("kernels/k", k, ".wgsl")}, {"writes", layout[k].value_or(wgsl[k].writable)}});
  auto tensor = [](const vulkan::ExportTensor& t) {
    return nlohmann::json{{"name", t.name}, {"buffer", t.buffer}, {"offset", t.offset}, {"bytes", t.bytes}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}};
  };
  nlohmann::json plan = {{"format", "rlx-webgpu-plan-1"}, {"graph", p.graph}};
  nlohmann::json buffers = nlohmann::json::array(), inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  size_t max_buffer = 0;
  for (const vulkan::ExportBuffer& b : p.buffers) {
    nlohmann::json j = {{"name", b.name}, {"bytes", b.bytes}};
    if (b.weights_offset) j["weights_offset"] = *b.weights_offset;
    buffers.push_back(j);
    max_buffer = std::max(max_buffer, b.bytes);
  }
  for (const auto& t : p.inputs) inputs.push_back(tensor(t));
  for (const auto& t : p.outputs) outputs.push_back(tensor(t));
  plan["buffers"] = buffers;
  plan["inputs"] = inputs;
  plan["outputs"] = outputs;
  plan["kernels"] = kernels;
  plan["dispatches"] = dispatches;
  // what the page asks of the adapter before it starts (WebGPU's defaults are lower in
  // compatibility mode: 4 storage buffers, 128 invocations)
  plan["needs"] = {{"maxStorageBuffersPerShaderStage", max_bindings},
                   {"maxStorageBufferBindingSize", max_buffer},
                   {"maxBufferSize", max_buffer},
                   {"maxComputeWorkgroupSizeX", max_threads[0]},
                   {"maxComputeWorkgroupSizeY", max_threads[1]},
                   {"maxComputeWorkgroupSizeZ", max_threads[2]},
                   {"maxComputeInvocationsPerWorkgroup", max_invocations},
                   {"maxComputeWorkgroupStorageSize", webgpu_target().features.max_shared_bytes}};
  files["plan.json"] = plan.dump(1) + "\n";
  p.weights.resize((p.weights.size() + 3) / 4 * 4, '\0');  // writeBuffer takes whole words
  files["weights.bin"] = std::move(p.weights);
  files["rlx-webgpu.js"] = kWebgpuModuleJs;
  files["index.html"] = kWebgpuPlanPage;
  files["README.md"] = kReadme;
  return files;
}

}  // namespace rlx::backends::webgpu
