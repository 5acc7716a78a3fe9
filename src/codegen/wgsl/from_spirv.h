// WGSL from SPIR-V: the webgpu device's printer. Its input
// is the SPIR-V glslang makes of the directx flavour's HLSL (vulkan/hlsl.h) — 32-bit integers
// only, no 8/16-bit storage, the group counts and step in push constants, structured control
// flow — so every kernel family prints for WebGPU without a WGSL skeleton of its own. Storage
// buffers keep their bindings in group 0, all read_write by default (WebGPU refuses a buffer
// bound both read-only and writable in one dispatch, and the webgpu device's one arena holds a
// kernel's inputs and outputs) or, for plans with a buffer per value (the exported page, which
// runs without Dawn's skip_validation), `read` where the kernel only reads;
// the push constants become the uniform buffer at group 1, binding 0; buffers used atomically
// are retyped atomic<u32>.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::codegen::wgsl {

struct Options {
  bool read_only_bindings = false;  // `var<storage, read>` for the buffers the HLSL declared read-only
};

struct Translation {
  std::string wgsl;
  uint32_t uniform_bytes = 0;  // the push-constant words' size (0: none)
  std::vector<bool> writable;  // by binding: whether the kernel may write it (read_only_bindings)
  std::vector<bool> declared;  // by binding: whether the WGSL declares it (unused ones are dropped)
};

// Throws rlx::Error(unsupported) naming the SPIR-V instruction or construct it cannot print.
Translation from_spirv(const std::vector<uint32_t>& spirv, const Options& options = {});

}  // namespace rlx::codegen::wgsl
