// Complex tensors on a device whose elementwise, cast and reduce kernels are real-only: the device
// registers its real kernels first, then route_complex wraps those ops' table entries so that a
// node with a complex tensor reaches the device's complex kernels (`ComplexMake`) and every other
// node the real kernel the entry had. One rule for every device that has complex kernels (cpu,
// cuda): which complex nodes those kernels take.
#pragma once
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace rlx::backends {

inline constexpr ir::Op kComplexRoutedOps[] = {ir::Op::neg, ir::Op::abs,  ir::Op::exp,     ir::Op::log,  ir::Op::sqrt, ir::Op::reciprocal,
                                               ir::Op::sin, ir::Op::cos,  ir::Op::tanh,    ir::Op::add,  ir::Op::sub,  ir::Op::mul,
                                               ir::Op::div, ir::Op::eq,   ir::Op::ne,      ir::Op::cast, ir::Op::reduce, ir::Op::complex,
                                               ir::Op::real, ir::Op::imag, ir::Op::conj,   ir::Op::angle};

inline bool any_complex(const std::vector<ir::Type>& in, const std::vector<ir::Type>& out) {
  for (const auto& t : in)
    if (is_complex(t.dtype)) return true;
  for (const auto& t : out)
    if (is_complex(t.dtype)) return true;
  return false;
}

// The complex nodes the complex kernels take: casts between complex and any whole-byte dtype, sum
// and product reductions, complex(re, im), and the other routed ops wherever their type rules
// admitted a complex input.
inline bool complex_claims(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  switch (op) {
    case ir::Op::cast: return in[0].dtype != DType::i4 && out[0].dtype != DType::i4;
    case ir::Op::reduce: return is_complex(in[0].dtype) && (attrs.s("kind") == "sum" || attrs.s("kind") == "prod");
    case ir::Op::complex: return true;
    default: return is_complex(in[0].dtype);
  }
}

namespace complex_routing {

// The real kernels the routed entries had, per table type.
template <class Table>
Table& real_kernels() {
  static Table t{};
  return t;
}

template <class Table>
bool claims(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (any_complex(in, out)) return complex_claims(op, in, out, attrs);
  const auto& e = real_kernels<Table>()[static_cast<size_t>(op)];
  return e.claims && e.claims(op, in, out, attrs);
}

template <class Table, auto ComplexMake>
auto make(const ir::Node& n, const ir::Graph& g) -> decltype(ComplexMake(n, g)) {
  std::vector<ir::Type> in, out;
  for (ir::ValueId v : n.inputs) in.push_back(g.type(v));
  for (ir::ValueId v : n.outputs) out.push_back(g.type(v));
  if (any_complex(in, out)) return ComplexMake(n, g);
  return real_kernels<Table>()[static_cast<size_t>(n.op)].make(n, g);
}

}  // namespace complex_routing

template <auto ComplexMake, class Table>
void route_complex(Table& t) {
  for (ir::Op op : kComplexRoutedOps) {
    size_t i = static_cast<size_t>(op);
    complex_routing::real_kernels<Table>()[i] = t[i];
    t[i] = {complex_routing::claims<Table>, complex_routing::make<Table, ComplexMake>};
  }
}

}  // namespace rlx::backends
