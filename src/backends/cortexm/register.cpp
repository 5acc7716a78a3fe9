// The cortex-m4, cortex-m7 and cortex-m55 devices: int8 graphs as self-contained C for
// microcontrollers (src/codegen/cortexm). Nothing runs in-process: `rlx export --target
// cortex-m4 …` writes the program, whose Makefile builds it with arm-none-eabi-gcc and runs it
// under qemu-system-arm (tests/cli/cortexm.sh checks it bit for bit against the host). The claims
// are the generator's kernels; the dispatch contract lists every other node as unsupported.
#include "codegen/cortexm/emit.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::cortexm {

namespace {

using ir::Op;
using ir::Type;

bool scalar(const Type& t) { return shape_numel(t.shape).try_value() == std::optional<int64_t>(1); }

class CortexMBackend : public runtime::Backend {
 public:
  explicit CortexMBackend(const codegen::cortexm::Core& core) : core_(core) {}
  std::string name() const override { return core_.name; }
  std::string description() const override {
    return cat("int8 graphs as C99 for the ", core_.name, " (", core_.isa, " kernels, static arena, weights in flash), built with arm-none-eabi-gcc and run under QEMU ",
               core_.qemu_board, ": rlx export --target ", core_.name);
  }
  runtime::Availability availability() const override { return {false, cat("emits C for the ", core_.name, " (rlx export --target ", core_.name, "; make run under QEMU)")}; }
  std::string status() const override { return "emits source"; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph&) override {
    throw Error(ErrorKind::unsupported, cat(core_.name, ": runs on the microcontroller, not in this process; export it with rlx export --target ", core_.name));
  }
  std::map<std::string, std::string> emit_source(const ir::Graph& lir) override { return codegen::cortexm::emit_program(lir, core_); }
  bool claims_op(Op op) const override {
    switch (op) {
      case Op::constant:
      case Op::quantize_linear:
      case Op::dequantize_linear:
      case Op::requantize:
      case Op::dot_general:
      case Op::conv:
      case Op::add:
      case Op::pad:
      case Op::max_pool:
      case Op::reshape:
      case Op::cast:
      case Op::sub:
      case Op::div:
      case Op::gather:
      case Op::reduce: return true;
      default: return false;
    }
  }

 protected:
  bool claims_kernel(Op op, const std::vector<Type>& in, const std::vector<Type>& out, const ir::Attrs& a) const override {
    switch (op) {
      case Op::constant: return true;  // weights and parameters: const arrays in flash
      case Op::quantize_linear: return in[0].dtype == DType::f32 && scalar(in[1]) && scalar(in[2]) && out[0].dtype == DType::i8;
      case Op::dequantize_linear: return in[0].dtype == DType::i8 && in[1].dtype == DType::f32 && scalar(in[1]) && scalar(in[2]);
      case Op::requantize: return in[0].dtype == DType::i32 && (out[0].dtype == DType::i8 || out[0].dtype == DType::i32);
      case Op::dot_general:
      case Op::conv: return in[0].dtype == DType::i8 && in[1].dtype == DType::i8 && out[0].dtype == DType::i32;
      case Op::add: return out[0].dtype == DType::i32;  // a layer's bias, an integer add's sum or offset
      // the parts of an integer add and softmax (layers.h: one kernel call each)
      case Op::cast: return in[0].dtype == DType::i8 && out[0].dtype == DType::i32;
      case Op::sub:
      case Op::div:
      case Op::gather: return out[0].dtype == DType::i32;
      case Op::reduce: return (a.s("kind") == "max" && in[0].dtype == DType::i8) || (a.s("kind") == "sum" && in[0].dtype == DType::i32);
      case Op::pad: return in[0].dtype == DType::i8 && (!a.has("mode") || a.s("mode") == "constant");
      case Op::max_pool: return in[0].dtype == DType::i8 && in[0].shape.size() == 4;
      case Op::reshape: return true;
      default: return false;
    }
  }

 private:
  const codegen::cortexm::Core& core_;
};

}  // namespace

void register_backend() {
  for (const auto& c : codegen::cortexm::cores()) runtime::register_backend(std::make_unique<CortexMBackend>(c));
}

}  // namespace rlx::backends::cortexm
