// Complex numbers element by element in complex<double>.
#include <cmath>

#include "backends/reference/kernels.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

void complex(const KernelArgs& a) {
  for (int64_t i = 0; i < a.out[0].numel; ++i) wc(a.out[0], i, {rd(a.in[0], i), rd(a.in[1], i)});
}

void part(const KernelArgs& a) {
  Op op = a.node.op;
  for (int64_t i = 0; i < a.out[0].numel; ++i) {
    c128 z = rc(a.in[0], i);
    switch (op) {
      case Op::real: wd(a.out[0], i, z.real()); break;
      case Op::imag: wd(a.out[0], i, z.imag()); break;
      case Op::angle: wd(a.out[0], i, std::atan2(z.imag(), z.real())); break;
      default: wc(a.out[0], i, std::conj(z)); break;  // conj
    }
  }
}

}  // namespace

void register_complex(KernelTable& t) {
  t[static_cast<size_t>(Op::complex)] = complex;
  for (Op op : {Op::real, Op::imag, Op::conj, Op::angle}) t[static_cast<size_t>(op)] = part;
}

}  // namespace rlx::backends::reference
