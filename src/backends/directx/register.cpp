// The directx device: the kernels as HLSL — the language of Direct3D 12's compute shaders. There
// is no Direct3D on Linux, so the HLSL is compiled by glslang's HLSL front end to SPIR-V and run
// on the vulkan device (lavapipe in CI, NVIDIA's driver on the accelerator machine): every
// kernel it claims is executed and checked, not only printed. glslang's HLSL has no signed
// 64-bit integers, so its integer class is 32-bit: i64 values must fit 32 bits, and one that
// does not is an error (hlsl.h).
#include "backends/vulkan/context.h"
#include "backends/vulkan/family_backend.h"
#include "backends/vulkan/kernels.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::directx {

namespace {

using vulkan::Context;

vulkan::KernelTarget hlsl_target() {
  vulkan::KernelTarget t;
  t.api = vulkan::KernelApi::hlsl;
  // claims read the same whether or not a Vulkan device is here (docs/ops.md): 8/16-bit tensors
  // packed into uint words by the skeleton (shader.cpp), no subgroups or cooperative matrices;
  // `int64` says the integer class exists (storable()), int32_class that it is 32-bit
  t.features.int64 = t.features.int32_class = true;
  t.features.storage8 = t.features.storage16 = t.features.int8 = t.features.int16 = true;
  const vulkan::Features& f = Context::get().features();
  t.features.max_storage_range = f.max_storage_range ? f.max_storage_range : uint64_t{1} << 27;
  t.features.max_push_bytes = f.max_push_bytes ? f.max_push_bytes : 128;
  t.features.max_shared_bytes = f.max_shared_bytes ? f.max_shared_bytes : 16384;
  return t;
}

class DirectxBackend : public vulkan::FamilyBackend {
 public:
  std::string name() const override { return "directx"; }
  std::string description() const override {
    const Context& c = Context::get();
    const std::string on = c.chosen() < 0 ? std::string("no Vulkan device") : c.devices()[static_cast<size_t>(c.chosen())].name;
    return cat("HLSL compute kernels (Direct3D 12's language) compiled by glslang's HLSL front end to SPIR-V and run on Vulkan: ", on,
               "; integers computed in 32 bits (i64 values must fit)");
  }
  runtime::Availability availability() const override { return Context::get().availability(); }
  std::string status() const override { return availability().available ? "runs here" : "runs on the accelerator machine"; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    const runtime::Availability a = availability();
    if (!a.available) throw Error(ErrorKind::unsupported, cat("directx is not available: ", a.reason));
    return vulkan::make_executable(lir, target());
  }

 private:
  const vulkan::KernelTarget& target() const override {
    static const vulkan::KernelTarget t = hlsl_target();
    return t;
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<DirectxBackend>()); }

}  // namespace rlx::backends::directx
