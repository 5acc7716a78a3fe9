#include "backends/vulkan/shader_compiler.h"

#include "backends/vulkan/hlsl.h"

#include <shaderc/shaderc.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "rlx/error.h"
#include "util/cache_dir.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace fs = std::filesystem;

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The key covers the compiler's version too: a newer shaderc recompiles.
std::string cache_key(const std::string& source) {
  unsigned int version = 0, revision = 0;
  shaderc_get_spv_version(&version, &revision);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx-%x-%x", static_cast<unsigned long long>(fnv1a(source)), version, revision);
  return buf;
}

// The source line the compiler's first message names ("NAME:LINE: error"), quoted: the kernels
// are printed per graph, so the message alone would not show what was printed.
std::string quoted_line(const std::string& source, const std::string& messages, const std::string& name) {
  const size_t at = messages.find(name + ":");
  if (at == std::string::npos) return "";
  const long line = std::strtol(messages.c_str() + at + name.size() + 1, nullptr, 10);
  size_t begin = 0;
  for (long l = 1; l < line && begin != std::string::npos; ++l) begin = source.find('\n', begin) == std::string::npos ? std::string::npos : source.find('\n', begin) + 1;
  if (line <= 0 || begin == std::string::npos) return "";
  return cat("line ", line, ": ", source.substr(begin, source.find('\n', begin) - begin), "\n");
}

}  // namespace

std::string shader_cache_dir() { return cache_dir("vulkan"); }

namespace {

std::vector<uint32_t> compile_compute(const std::string& source, const std::string& name, bool hlsl) {
  static std::mutex mu;
  static std::map<std::string, std::vector<uint32_t>> memory;
  const std::string key = cache_key(hlsl ? "hlsl\n" + source : source);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = memory.find(key); it != memory.end()) return it->second;
  const std::string dir = shader_cache_dir();
  const fs::path file = dir.empty() ? fs::path() : fs::path(dir) / (key + ".spv");
  if (!file.empty()) {
    std::ifstream f(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), {});
    // a cached file is trusted only when it looks like SPIR-V (magic 0x07230203, whole words)
    if (bytes.size() >= 20 && bytes.size() % 4 == 0 && static_cast<uint8_t>(bytes[0]) == 0x03 && static_cast<uint8_t>(bytes[3]) == 0x07) {
      std::vector<uint32_t> words(bytes.size() / 4);
      std::memcpy(words.data(), bytes.data(), bytes.size());
      return memory[key] = words;
    }
  }
  shaderc_compiler_t compiler = shaderc_compiler_initialize();
  shaderc_compile_options_t options = shaderc_compile_options_initialize();
  shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_performance);
  // glslang's HLSL decorates buffers BufferBlock, which SPIR-V after 1.3 (Vulkan 1.1) no longer has
  if (hlsl) shaderc_compile_options_set_source_language(options, shaderc_source_language_hlsl);
  shaderc_compile_options_set_target_env(options, shaderc_target_env_vulkan, hlsl ? shaderc_env_version_vulkan_1_1 : shaderc_env_version_vulkan_1_2);
  shaderc_compilation_result_t r = shaderc_compile_into_spv(compiler, source.data(), source.size(), shaderc_compute_shader, name.c_str(), "main", options);
  const bool ok = shaderc_result_get_compilation_status(r) == shaderc_compilation_status_success;
  std::string messages = shaderc_result_get_error_message(r) ? shaderc_result_get_error_message(r) : "";
  std::vector<uint32_t> words;
  if (ok) {
    words.resize(shaderc_result_get_length(r) / 4);
    std::memcpy(words.data(), shaderc_result_get_bytes(r), words.size() * 4);
  }
  shaderc_result_release(r);
  shaderc_compile_options_release(options);
  shaderc_compiler_release(compiler);
  if (!ok) throw Error(ErrorKind::invalid_argument, cat(hlsl ? "directx: the HLSL of " : "vulkan: the GLSL of ", name, " does not compile:\n", messages, quoted_line(source, messages, name)));
  if (!file.empty()) {  // written whole, then renamed: a reader never sees half a file
    fs::path tmp = file;
    tmp += ".partial";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
    std::error_code ec;
    fs::rename(tmp, file, ec);
  }
  return memory[key] = words;
}

}  // namespace

std::vector<uint32_t> compile_compute_glsl(const std::string& source, const std::string& name) { return compile_compute(source, name, false); }

std::vector<uint32_t> compile_compute_hlsl(const std::string& source, const std::string& name) { return compile_compute(source, name, true); }

std::string opengl_glsl_errors(const std::string& source, const std::string& name) {
  shaderc_compiler_t compiler = shaderc_compiler_initialize();
  shaderc_compile_options_t options = shaderc_compile_options_initialize();
  shaderc_compile_options_set_target_env(options, shaderc_target_env_opengl, shaderc_env_version_opengl_4_5);
  shaderc_compilation_result_t r = shaderc_compile_into_spv(compiler, source.data(), source.size(), shaderc_compute_shader, name.c_str(), "main", options);
  std::string messages;
  if (shaderc_result_get_compilation_status(r) != shaderc_compilation_status_success)
    messages = shaderc_result_get_error_message(r) ? shaderc_result_get_error_message(r) : "does not compile";
  shaderc_result_release(r);
  shaderc_compile_options_release(options);
  shaderc_compiler_release(compiler);
  return messages;
}

}  // namespace rlx::backends::vulkan
