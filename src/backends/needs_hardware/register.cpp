// Devices RLX lists but cannot build or run on this platform: their SDK or their chips are out
// of reach (Apple silicon, the Apple Neural Engine, Qualcomm's Hexagon NPU). Each is named in
// `rlx devices` with the sentence that says why, claims no op, and compiling for it fails with
// that sentence — never a silent fallback to another device.
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::needs_hardware {

namespace {

class HardwareBackend : public runtime::Backend {
 public:
  HardwareBackend(std::string name, std::string description, std::string reason)
      : name_(std::move(name)), description_(std::move(description)), reason_(std::move(reason)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  runtime::Availability availability() const override { return {false, reason_}; }
  std::string status() const override { return "needs hardware"; }
  bool claims_kernel(ir::Op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) const override { return false; }
  bool claims_op(ir::Op) const override { return false; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph&) override {
    throw Error(ErrorKind::unsupported, cat("the ", name_, " device is not available: ", reason_));
  }

 private:
  std::string name_, description_, reason_;
};

}  // namespace

void register_backend() {
  runtime::register_backend(std::make_unique<HardwareBackend>(
      "mlx", "Apple MLX arrays on Apple silicon's unified memory (Metal kernels)",
      "needs an Apple silicon Mac with macOS and the MLX framework; this is Linux on x86-64"));
  runtime::register_backend(std::make_unique<HardwareBackend>(
      "ane", "Apple Neural Engine through Core ML", "needs an Apple device with a Neural Engine and Core ML (macOS or iOS); this is Linux on x86-64"));
  runtime::register_backend(std::make_unique<HardwareBackend>(
      "hexagon", "Qualcomm Hexagon NPU through the QNN SDK", "needs a Snapdragon device and Qualcomm's QNN/Hexagon SDK, which Debian does not package"));
}

}  // namespace rlx::backends::needs_hardware
