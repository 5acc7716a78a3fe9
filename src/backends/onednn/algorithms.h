// RLX ops as oneDNN algorithms: the eltwise ones (y = f(x; alpha, beta)) and the binary ones.
#pragma once
#include <dnnl.hpp>
#include <optional>

#include "ir/op.h"

namespace rlx::backends::onednn {

struct Eltwise {
  dnnl::algorithm alg;
  float alpha = 0, beta = 0;
};

// Only where oneDNN computes the op's definition (ops.def): round is half to even in both,
// neg is linear(−1, 0), rsqrt and reciprocal are powers of x. erf, sin, floor and the rest
// have no eltwise algorithm.
inline std::optional<Eltwise> eltwise_of(ir::Op op) {
  using a = dnnl::algorithm;
  using ir::Op;
  switch (op) {
    case Op::exp: return Eltwise{a::eltwise_exp};
    case Op::log: return Eltwise{a::eltwise_log};
    case Op::sqrt: return Eltwise{a::eltwise_sqrt};
    case Op::tanh: return Eltwise{a::eltwise_tanh};
    case Op::sigmoid: return Eltwise{a::eltwise_logistic};
    case Op::abs: return Eltwise{a::eltwise_abs};
    case Op::neg: return Eltwise{a::eltwise_linear, -1.0f, 0.0f};
    case Op::rsqrt: return Eltwise{a::eltwise_pow, 1.0f, -0.5f};
    case Op::reciprocal: return Eltwise{a::eltwise_pow, 1.0f, -1.0f};
    case Op::round: return Eltwise{a::eltwise_round};
    case Op::gelu: return Eltwise{a::eltwise_gelu_erf};
    case Op::gelu_tanh: return Eltwise{a::eltwise_gelu_tanh};
    case Op::silu: return Eltwise{a::eltwise_swish, 1.0f, 0.0f};
    case Op::relu: return Eltwise{a::eltwise_relu};
    default: return std::nullopt;
  }
}

inline std::optional<dnnl::algorithm> binary_of(ir::Op op) {
  using a = dnnl::algorithm;
  using ir::Op;
  switch (op) {
    case Op::add: return a::binary_add;
    case Op::sub: return a::binary_sub;
    case Op::mul: return a::binary_mul;
    case Op::div: return a::binary_div;
    case Op::max: return a::binary_max;
    case Op::min: return a::binary_min;
    case Op::eq: return a::binary_eq;
    case Op::ne: return a::binary_ne;
    case Op::lt: return a::binary_lt;
    case Op::le: return a::binary_le;
    case Op::gt: return a::binary_gt;
    case Op::ge: return a::binary_ge;
    default: return std::nullopt;
  }
}

// The same comparison with its operands swapped (a < b ⇔ b > a); the op itself when symmetric.
inline std::optional<ir::Op> swapped(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::add: case Op::mul: case Op::max: case Op::min: case Op::eq: case Op::ne: return op;
    case Op::lt: return Op::gt;
    case Op::gt: return Op::lt;
    case Op::le: return Op::ge;
    case Op::ge: return Op::le;
    default: return std::nullopt;
  }
}

inline bool is_comparison(ir::Op op) {
  using ir::Op;
  return op == Op::eq || op == Op::ne || op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge;
}

}  // namespace rlx::backends::onednn
