// The tpu device: a LIR graph printed as StableHLO (stablehlo.h), compiled and run by a PJRT
// plugin (client.h) — libtpu on a TPU host; any PJRT plugin for testing (RLX_PJRT_PLUGIN, e.g.
// JAX's CUDA plugin on the accelerator machine). Claims are the ops the printer spells; the rest
// decomposes or fails to compile by name. The client needs no SDK to build: without a plugin the
// device is listed, unavailable, with the loader's reason.
#include <memory>
#include <mutex>

#include "backends/pjrt/client.h"
#include "backends/pjrt/stablehlo.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::backends::pjrt {

namespace {

std::string plugin_path() { return flags().RLX_PJRT_PLUGIN.empty() ? std::string("libtpu.so") : flags().RLX_PJRT_PLUGIN; }

// The plugin, loaded once on first use; its failure is the device's unavailability. It is never
// destroyed: the CUDA driver a GPU plugin loads tears itself down at exit before a static would
// be, and destroying the client then only made XLA report "Error when closing device" (H100,
// 2026-12-07). The process's end frees it.
struct Loaded {
  std::unique_ptr<Plugin> plugin;
  std::string error;
};
Loaded& loaded() {
  static Loaded& l = *new Loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      l.plugin = std::make_unique<Plugin>(plugin_path());
    } catch (const Error& e) {
      l.error = e.what();
    }
  });
  return l;
}

class PjrtExecutable : public runtime::Executable {
 public:
  PjrtExecutable(std::unique_ptr<Plugin::Program> program, std::vector<std::pair<DType, std::vector<int64_t>>> out_types)
      : program_(std::move(program)), out_types_(std::move(out_types)) {}
  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    std::lock_guard<std::mutex> lock(mu_);  // one execution of a program at a time
    program_->run(inputs, outputs, out_types_);
  }

 private:
  std::unique_ptr<Plugin::Program> program_;
  std::vector<std::pair<DType, std::vector<int64_t>>> out_types_;
  std::mutex mu_;
};

class TpuBackend : public runtime::Backend {
 public:
  std::string name() const override { return "tpu"; }
  std::string description() const override {
    Loaded& l = loaded();
    if (l.plugin)
      return cat("StableHLO through the PJRT C API: ", l.plugin->platform(), " (", l.plugin->platform_version(), ") from ", plugin_path(), ", PJRT C API 0.",
                 l.plugin->api_minor());
    return "StableHLO through the PJRT C API (libtpu on a TPU host; RLX_PJRT_PLUGIN names any other plugin)";
  }
  runtime::Availability availability() const override {
    Loaded& l = loaded();
    if (l.plugin) return {};
    return {false, l.error};
  }
  std::string status() const override { return availability().available ? "runs here" : "built, not run"; }
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    return stablehlo_prints(op, in, out, attrs);
  }
  bool claims_op(ir::Op op) const override {
    // any op the printer spells for some types (asked with an f32 signature of the right arity)
    ir::Type f{DType::f32, {Dim(2)}};
    const ir::OpInfo& info = ir::op_info(op);
    std::vector<ir::Type> in(static_cast<size_t>(std::max(info.min_inputs, 0)), f);
    return stablehlo_prints(op, in, {f}, ir::Attrs{});
  }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    Loaded& l = loaded();
    if (!l.plugin) throw Error(ErrorKind::unsupported, cat("the tpu device is not available: ", l.error));
    std::string module = to_stablehlo(lir);
    std::vector<std::pair<DType, std::vector<int64_t>>> out_types;
    for (ir::ValueId v : lir.outputs()) out_types.push_back({lir.type(v).dtype, shape_values(lir.type(v).shape)});
    return std::make_unique<PjrtExecutable>(l.plugin->compile(module), std::move(out_types));
  }
  std::map<std::string, std::string> emit_source(const ir::Graph& lir) override { return {{"module.mlir", to_stablehlo(lir)}}; }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<TpuBackend>()); }

}  // namespace rlx::backends::pjrt
