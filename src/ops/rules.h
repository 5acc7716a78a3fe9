// Where each op's meaning lives: its type inference and (for HIR ops) its decomposition.
#pragma once
#include <vector>

#include "ir/graph.h"

namespace rlx::ops {

using ir::Attrs;
using ir::Op;
using ir::Type;
using ir::ValueId;

class Builder;

// Output types from input types and attributes; throws rlx::Error(invalid_graph) saying what
// is wrong (the caller adds which node).
using InferFn = std::vector<Type> (*)(Op op, const std::vector<Type>& in, const Attrs& attrs);
// Emits MIR (or other HIR ops, resolved recursively) computing the op; returns its outputs.
using DecomposeFn = std::vector<ValueId> (*)(Builder& b, const std::vector<ValueId>& in, const Attrs& attrs);

// Reverse-mode rule: given the op's inputs, outputs and the cotangent of each output
// (kNoValue when that output does not reach the loss), emits and returns the gradient of each
// input (kNoValue for inputs that receive none, such as indices).
struct VjpArgs {
  const std::vector<ValueId>& in;
  const std::vector<ValueId>& out;
  const std::vector<ValueId>& cot;
  const Attrs& attrs;
};
using VjpFn = std::vector<ValueId> (*)(Builder& b, const VjpArgs& a);

struct OpRule {
  InferFn infer = nullptr;
  DecomposeFn decompose = nullptr;
  VjpFn vjp = nullptr;
  bool no_gradient = false;  // piecewise constant or integer-valued: gradients are zero
};

const OpRule& op_rule(Op op);
std::vector<Type> infer_types(Op op, const std::vector<Type>& in, const Attrs& attrs);
inline bool has_decomposition(Op op) { return op_rule(op).decompose != nullptr; }

// Family registrars (one per file under src/ops/).
using RuleTable = std::vector<OpRule>;
void register_elementwise(RuleTable& t);
void register_reduce(RuleTable& t);
void register_linalg(RuleTable& t);
void register_movement(RuleTable& t);
void register_nn(RuleTable& t);
void register_attention(RuleTable& t);
void register_conv_pool(RuleTable& t);
void register_region(RuleTable& t);
void register_quant(RuleTable& t);
void register_quant_linear(RuleTable& t);
void register_experts(RuleTable& t);
void register_collective(RuleTable& t);
void register_factorize(RuleTable& t);
void register_sparse(RuleTable& t);
void register_complex(RuleTable& t);
void register_fft(RuleTable& t);
void register_eig(RuleTable& t);
void register_splat(RuleTable& t);
void register_vjp_elementwise(RuleTable& t);
void register_vjp_structural(RuleTable& t);
void register_vjp_nn(RuleTable& t);

// |z|'s gradient ḡ·z/|z| (complex.cpp), for the elementwise rule of abs.
ValueId complex_abs_vjp(Builder& b, ValueId z, ValueId magnitude, ValueId g);

}  // namespace rlx::ops
