// The op enum and the op table's static facts as constexpr values, expanded from ops.def with
// nothing else: device code (the .cu files, through src/codegen) includes this, never op.h.
#pragma once
#include <cstdint>

#include "util/host_device.h"

namespace rlx::ir {

enum class Op : uint16_t {
#define RLX_OP(name, level, min_in, max_in, outs, attrs, traits) name,
#include "ir/ops.def"
#undef RLX_OP
};

constexpr int kNumOps = 0
#define RLX_OP(name, level, min_in, max_in, outs, attrs, traits) +1
#include "ir/ops.def"
#undef RLX_OP
    ;

enum OpTraits : unsigned {
  kElementwise = 1u << 0,  // output element i depends only on input elements i
  kCommutative = 1u << 1,  // binary op with f(a,b) == f(b,a)
  kView = 1u << 2,         // output may alias the input's buffer (no data movement)
  kBroadcast = 1u << 3,    // inputs broadcast numpy-style to the output shape
  kCollective = 1u << 4,   // communicates with the other ranks of a job: never folded or merged
};

// An op's traits and its largest input count (-1: variadic), as in ops.def.
RLX_HD_CONSTEXPR unsigned op_traits(Op op) {
  switch (op) {
#define RLX_OP(name, level, min_in, max_in, outs, attrs, traits) \
  case Op::name: return static_cast<unsigned>(traits);
#include "ir/ops.def"
#undef RLX_OP
  }
  return 0;
}
RLX_HD_CONSTEXPR int op_max_inputs(Op op) {
  switch (op) {
#define RLX_OP(name, level, min_in, max_in, outs, attrs, traits) \
  case Op::name: return max_in;
#include "ir/ops.def"
#undef RLX_OP
  }
  return 0;
}

}  // namespace rlx::ir
