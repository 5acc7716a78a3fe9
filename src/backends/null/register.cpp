// The null device claims nothing: compiling any graph for it runs the whole compiler up to
// legalization and fails listing every op — a check of the dispatch contract itself.
#include "rlx/error.h"
#include "runtime/registry.h"

namespace rlx::backends::null {

namespace {

class NullBackend : public runtime::Backend {
 public:
  std::string name() const override { return "null"; }
  std::string description() const override { return "claims no op: compiling for it lists everything a graph needs"; }
  std::string status() const override { return "compiles only (a check)"; }
  bool claims_kernel(ir::Op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) const override { return false; }
  bool claims_op(ir::Op) const override { return false; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph&) override {
    throw Error(ErrorKind::unsupported, "the null device cannot execute anything");
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<NullBackend>()); }

}  // namespace rlx::backends::null
