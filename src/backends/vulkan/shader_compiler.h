// GLSL compute shaders to SPIR-V at run time (shaderc, linked statically), for the kernels the
// codegen layer prints per graph: optimized for performance, cached in memory and on disk
// ($XDG_CACHE_HOME/rlx/vulkan or ~/.cache/rlx/vulkan, one file per source hash) so a kernel is
// compiled once per machine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::backends::vulkan {

// Throws rlx::Error(invalid_argument) with the compiler's messages and `name` when the source
// does not compile (a printer bug, never user input).
std::vector<uint32_t> compile_compute_glsl(const std::string& source, const std::string& name);

// The messages of compiling `source` as OpenGL 4.5 GLSL ("" when it compiles): a check of the
// GL flavour of the printed kernels (target.h), which a GL driver compiles itself.
std::string opengl_glsl_errors(const std::string& source, const std::string& name);

// Where compiled shaders are kept ("" when no cache directory can be used).
std::string shader_cache_dir();

}  // namespace rlx::backends::vulkan
