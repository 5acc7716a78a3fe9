// elementwise_region on the cpu: the body becomes a short program over tiles of up to 512
// elements of the innermost dim. Each instruction is one tight loop (vectorized), inputs that
// are contiguous are read in place, broadcast ones are splatted, and outputs are written
// straight into their buffers — one pass over memory for the whole chain.
#include <cmath>

#include "backends/cpu/kernels.h"
#include "codegen/elementwise.h"
#include "codegen/host_math.h"
#include "ops/region.h"
#include "rlx/error.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;
using ir::ValueId;

constexpr int64_t kTile = 512;

// The region's ops: scalar.h's float class (booleans are 0/1 in f32 registers), casts and scalar
// constants.
bool region_op(Op op) {
  return op == Op::constant || op == Op::cast || (codegen::is_elementwise(op) && codegen::defines(codegen::ValueClass::floating, op));
}

// Registers are f32; booleans are 0/1 and bf16 values are f32 rounded to bf16 precision, so
// bf16 inputs, outputs and casts fuse too (the cast before a bf16 matmul, say).
bool region_dtype(DType d) { return d == DType::f32 || d == DType::boolean || d == DType::bf16; }

struct Instr {
  Op op;
  int dst;
  int a = -1, b = -1, c = -1;
  bool to_bf16 = false;  // a cast whose result is bf16: round the f32 register to bf16
};

// Registers hold f32 tiles; booleans are 0/1.
struct Program {
  int num_regs = 0;
  std::vector<int> input_reg;                  // per external input
  std::vector<std::pair<int, float>> consts;   // register, value
  std::vector<Instr> code;
  std::vector<int> output_reg;                 // per output
};

Program compile_body(const ir::Graph& body) {
  Program p;
  std::vector<int> reg(body.num_values(), -1);
  auto fresh = [&] { return p.num_regs++; };
  for (ValueId v : body.inputs()) p.input_reg.push_back(reg[static_cast<size_t>(v)] = fresh());
  for (const auto& n : body.nodes()) {
    int dst = reg[static_cast<size_t>(n.outputs[0])] = fresh();
    if (n.op == Op::constant) {
      p.consts.push_back({dst, static_cast<float>(n.attrs.tensor("value").at_f64(0))});
      continue;
    }
    Instr in{n.op, dst};
    in.to_bf16 = n.op == Op::cast && body.type(n.outputs[0]).dtype == DType::bf16 && body.type(n.inputs[0]).dtype == DType::f32;
    if (n.op == Op::cast && !in.to_bf16 && body.type(n.outputs[0]).dtype != DType::boolean) in.c = -2;  // value-preserving
    if (n.inputs.size() > 0) in.a = reg[static_cast<size_t>(n.inputs[0])];
    if (n.inputs.size() > 1) in.b = reg[static_cast<size_t>(n.inputs[1])];
    if (n.inputs.size() > 2) in.c = reg[static_cast<size_t>(n.inputs[2])];
    p.code.push_back(in);
  }
  for (ValueId v : body.outputs()) p.output_reg.push_back(reg[static_cast<size_t>(v)]);
  return p;
}

// One instruction over n elements: a loop per op, the op a template constant so the loop is
// that op's arithmetic alone (vectorized). Unary ops never read b or c (null for them).
using Loop = void (*)(float* d, const float* a, const float* b, const float* c, int64_t n);

template <Op OP>
void op_loop(float* d, const float* a, const float* b, const float* c, int64_t n) {
  constexpr int k = codegen::arity(OP);
  const codegen::HostFloat<float> m;
  for (int64_t i = 0; i < n; ++i) d[i] = codegen::float_op(m, OP, a[i], k > 1 ? b[i] : 0.0f, k > 2 ? c[i] : 0.0f);
}

const std::array<Loop, ir::kNumOps>& op_loops() {
  static const std::array<Loop, ir::kNumOps> t = [] {
    std::array<Loop, ir::kNumOps> loops{};
    auto add = [&](auto op) { loops[static_cast<size_t>(decltype(op)::value)] = op_loop<decltype(op)::value>; };
    codegen::for_each_scalar_op<1>(add);
    codegen::for_each_scalar_op<2>(add);
    codegen::for_each_scalar_op<3>(add);
    return loops;
  }();
  return t;
}

void execute(const Instr& in, float* const* r, int64_t n) {
  float* d = r[in.dst];
  const float* a = in.a >= 0 ? r[in.a] : nullptr;
  const float* b = in.b >= 0 ? r[in.b] : nullptr;
  const float* c = in.c >= 0 ? r[in.c] : nullptr;
  if (in.op != Op::cast) {
    op_loops()[static_cast<size_t>(in.op)](d, a, b, c, n);
  } else if (in.to_bf16) {
    for (int64_t i = 0; i < n; ++i) d[i] = vm::from_bf16(vm::to_bf16(a[i]));
  } else if (in.c == -2) {
    for (int64_t i = 0; i < n; ++i) d[i] = a[i];  // bf16 → f32 (or bool → bf16/f32): the register already holds the value
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = a[i] != 0.0f ? 1.0f : 0.0f;  // f32/bf16 → bool
  }
}

HostKernel make_region(const ir::Node& node, const ir::Graph&) {
  auto body = ops::region_body(node.attrs.s("body"));
  auto prog = std::make_shared<Program>(compile_body(*body));
  std::vector<DType> out_types;
  for (ValueId v : body->outputs()) out_types.push_back(body->type(v).dtype);
  return [prog, out_types](const KernelArgs& a) {
    const Program& p = *prog;
    // per input: element strides over the output's dims (0 where broadcast)
    std::vector<std::vector<int64_t>> st(a.in.size());
    for (size_t k = 0; k < a.in.size(); ++k) st[k] = broadcast_strides(a.out[0].shape, a.in[k].shape);
    // dims every input walks as one merged (a [100000, 16, 3] region: tiles of 512, not rows of 3)
    std::vector<int64_t> shape(a.out[0].shape.begin(), a.out[0].shape.end());
    std::vector<std::vector<int64_t>*> walks;
    for (auto& s : st) walks.push_back(&s);
    codegen::collapse_dims(shape, walks);
    size_t r = shape.size();
    int64_t inner = r ? shape[r - 1] : 1;
    int64_t rows = inner ? a.out[0].numel / inner : 0;
    int64_t tiles_per_row = (inner + kTile - 1) / kTile;
    rlx::parallel_for(rows * tiles_per_row, std::max<int64_t>(1, 16384 / kTile), [&](int64_t lo, int64_t hi) {
      std::vector<float> scratch(static_cast<size_t>(p.num_regs * kTile));
      std::vector<float*> reg(static_cast<size_t>(p.num_regs));
      for (int i = 0; i < p.num_regs; ++i) reg[static_cast<size_t>(i)] = scratch.data() + i * kTile;
      std::vector<float*> home = reg;
      for (int64_t t = lo; t < hi; ++t) {
        int64_t row = t / tiles_per_row, c0 = (t % tiles_per_row) * kTile, n = std::min(kTile, inner - c0);
        for (int i = 0; i < p.num_regs; ++i) reg[static_cast<size_t>(i)] = home[static_cast<size_t>(i)];
        for (size_t k = 0; k < a.in.size(); ++k) {
          int64_t base = 0, rem = row;
          for (size_t d = r ? r - 1 : 0; d-- > 0;) {
            base += (rem % shape[d]) * st[k][d];
            rem /= shape[d];
          }
          int64_t is = r ? st[k][r - 1] : 0;
          float* dst = home[static_cast<size_t>(p.input_reg[k])];
          if (a.in[k].dtype == DType::f32) {
            const float* src = a.in[k].as<float>() + base + c0 * is;
            if (is == 1) reg[static_cast<size_t>(p.input_reg[k])] = const_cast<float*>(src);  // read in place
            else std::fill(dst, dst + n, src[0]);
          } else if (a.in[k].dtype == DType::bf16) {
            const uint16_t* src = a.in[k].as<uint16_t>() + base + c0 * is;
            if (is == 1)
              for (int64_t i = 0; i < n; ++i) dst[i] = vm::from_bf16(src[i]);
            else
              std::fill(dst, dst + n, vm::from_bf16(src[0]));
          } else {
            const uint8_t* src = a.in[k].as<uint8_t>() + base + c0 * is;
            for (int64_t i = 0; i < n; ++i) dst[i] = src[i * is] ? 1.0f : 0.0f;
          }
        }
        for (const auto& [rg, v] : p.consts) std::fill(reg[static_cast<size_t>(rg)], reg[static_cast<size_t>(rg)] + n, v);
        // Outputs computed straight into their buffers when f32.
        for (size_t o = 0; o < p.output_reg.size(); ++o)
          if (out_types[o] == DType::f32) reg[static_cast<size_t>(p.output_reg[o])] = a.out[o].as<float>() + row * inner + c0;
        for (const Instr& in : p.code) execute(in, reg.data(), n);
        for (size_t o = 0; o < p.output_reg.size(); ++o) {
          if (out_types[o] == DType::f32) {
            float* dst = a.out[o].as<float>() + row * inner + c0;
            const float* src = reg[static_cast<size_t>(p.output_reg[o])];
            if (src != dst) std::copy(src, src + n, dst);  // an output that is an input or a constant
          } else if (out_types[o] == DType::bf16) {
            uint16_t* dst = a.out[o].as<uint16_t>() + row * inner + c0;
            const float* src = reg[static_cast<size_t>(p.output_reg[o])];
            for (int64_t i = 0; i < n; ++i) dst[i] = vm::to_bf16(src[i]);
          } else {
            uint8_t* dst = a.out[o].as<uint8_t>() + row * inner + c0;
            const float* src = reg[static_cast<size_t>(p.output_reg[o])];
            for (int64_t i = 0; i < n; ++i) dst[i] = src[i] != 0.0f;
          }
        }
      }
    });
  };
}

bool claims_region(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  for (const auto& t : in)
    if (!region_dtype(t.dtype)) return false;
  for (const auto& t : out)
    if (!region_dtype(t.dtype)) return false;
  std::shared_ptr<const ir::Graph> body;
  try {
    body = ops::region_body(attrs.s("body"));
  } catch (const Error&) {
    return false;
  }
  for (const auto& n : body->nodes()) {
    if (!region_op(n.op)) return false;
    for (ValueId v : n.outputs)
      if (!region_dtype(body->type(v).dtype)) return false;
    if (n.op == Op::constant && !body->type(n.outputs[0]).shape.empty()) return false;
    if (n.op == Op::cast) {
      if (body->type(n.inputs[0]).dtype == body->type(n.outputs[0]).dtype) return false;
      continue;
    }
    // arithmetic happens on f32 (and bool) values only: bf16 math would round after every op
    for (ValueId v : n.outputs)
      if (body->type(v).dtype == DType::bf16 && n.op != Op::constant) return false;
  }
  return true;
}

}  // namespace

void register_fused(KernelTable& t) { t[static_cast<size_t>(Op::elementwise_region)] = {claims_region, make_region}; }

}  // namespace rlx::backends::cpu
