// The fpga:ice40-up5k and fpga:generic devices: int8 graphs as SystemVerilog (src/codegen/fpga).
// Nothing runs in-process: `rlx export --target fpga:ice40-up5k …` writes the hardware, its
// Verilator testbench and the Makefile that simulates it and makes a bitstream (tests/cli/fpga.sh
// checks it bit for bit against the host). The claims are what the generator's schedule takes
// (int8/layers.h); it refuses the rest of a graph naming each node.
#include "codegen/fpga/emit.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::fpga {

namespace {

using ir::Op;
using ir::Type;

bool scalar(const Type& t) { return shape_numel(t.shape).try_value() == std::optional<int64_t>(1); }

class FpgaBackend : public runtime::Backend {
 public:
  explicit FpgaBackend(const codegen::fpga::Part& part) : part_(part) {}
  std::string name() const override { return cat("fpga:", part_.name); }
  std::string description() const override { return cat("int8 graphs as SystemVerilog for ", part_.description, ": rlx export --target ", name()); }
  runtime::Availability availability() const override {
    return {false, cat("emits SystemVerilog (rlx export --target ", name(), "; make sim run in Verilator", part_.ice40 ? ", make for the bitstream)" : ")")};
  }
  std::string status() const override { return "emits source"; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph&) override {
    throw Error(ErrorKind::unsupported, cat(name(), ": runs on the FPGA, not in this process; export it with rlx export --target ", name()));
  }
  std::map<std::string, std::string> emit_source(const ir::Graph& lir) override { return codegen::fpga::emit_program(lir, part_); }
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
      case Op::reshape: return true;
      default: return false;
    }
  }

 protected:
  bool claims_kernel(Op op, const std::vector<Type>& in, const std::vector<Type>& out, const ir::Attrs& a) const override {
    switch (op) {
      case Op::constant:
      case Op::reshape: return true;
      case Op::quantize_linear: return in[0].dtype == DType::f32 && scalar(in[1]) && scalar(in[2]) && out[0].dtype == DType::i8;  // on the host side of the stream
      case Op::dequantize_linear: return in[0].dtype == DType::i8 && in[1].dtype == DType::f32 && scalar(in[1]) && scalar(in[2]);
      case Op::requantize: return in[0].dtype == DType::i32 && out[0].dtype == DType::i8;
      case Op::dot_general:
      case Op::conv: return in[0].dtype == DType::i8 && in[1].dtype == DType::i8 && out[0].dtype == DType::i32;
      case Op::add: return out[0].dtype == DType::i32;  // a layer's bias
      case Op::pad: return in[0].dtype == DType::i8 && (!a.has("mode") || a.s("mode") == "constant");  // a convolution's padding
      case Op::max_pool: return in[0].dtype == DType::i8 && in[0].shape.size() == 4;
      default: return false;
    }
  }

 private:
  const codegen::fpga::Part& part_;
};

}  // namespace

void register_backend() {
  for (const auto& p : codegen::fpga::parts()) runtime::register_backend(std::make_unique<FpgaBackend>(p));
}

}  // namespace rlx::backends::fpga
