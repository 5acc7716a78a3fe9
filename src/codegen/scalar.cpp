// Which ops each value class defines, probed once from scalar.h's definitions.
#include <array>

#include "codegen/host_math.h"

namespace rlx::codegen {

namespace {

struct FloatProbe : HostFloat<double> {
  mutable bool missing = false;
  double undefined(Op) const {
    missing = true;
    return 0;
  }
};
struct IntProbe : HostInt<int64_t> {
  mutable bool missing = false;
  int64_t undefined(Op) const {
    missing = true;
    return 0;
  }
};

struct Table {
  std::array<bool, ir::kNumOps> floating{}, integer{};
  Table() {
    for (int i = 0; i < ir::kNumOps; ++i) {
      Op op = static_cast<Op>(i);
      if (!is_elementwise(op) || op == Op::cast) continue;
      FloatProbe f;
      float_op(f, op, 1.0, 2.0, 3.0);
      floating[static_cast<size_t>(i)] = !f.missing;
      IntProbe n;
      int_op(n, op, int64_t{1}, int64_t{2}, int64_t{3});
      integer[static_cast<size_t>(i)] = !n.missing;
    }
  }
};

}  // namespace

bool defines(ValueClass cls, Op op) {
  static const Table t;
  size_t i = static_cast<size_t>(op);
  return cls == ValueClass::floating ? t.floating[i] : t.integer[i];
}

}  // namespace rlx::codegen
