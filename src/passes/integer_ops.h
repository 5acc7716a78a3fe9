// The integer forms of a residual add and of a softmax over int8 values — what an int8 kernel,
// a microcontroller (codegen/int8) or an FPGA computes — written once for the two producers of
// integer graphs: fold_qdq (ONNX's QDQ form) and PTQ (quant/ptq.h, calibrated grids).
//
//   add:     each side to a common fine scale sc = 2·max(sa, sb)/2^20 (20 bits below the coarser
//            input's step, so the sum keeps every step of both), summed in i32, requantized to the
//            output's grid (a ReLU after the add as the clamp's lower end).
//   softmax: over the last axis, d = max(x) − x in 0…255, e = T[d] with T[d] = round(2^K·exp(−sx·d))
//            a 256-entry table, Σe per row in i32, and q = requantize(e, ⌊C / Σe⌋, S) with
//            C = round(2^S / sy) < 2^31: one division per row and a fixed-point multiply per value.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>

#include "ops/builder.h"

namespace rlx::passes {

struct Int8Grid {  // real = scale · (q − zero_point), q an i8
  double scale;
  int64_t zero_point;
};

// M · 2^−s = m with M in [2^30, 2^31); nullopt when s would leave [0, 62].
std::optional<std::pair<int32_t, int32_t>> fixed_point(double m);

// requantize(acc, M, s) with one multiplier and shift, into `out` (i32 keeps the whole range).
ir::ValueId rescale(ops::Builder& b, ir::ValueId acc, std::pair<int32_t, int32_t> fp, int64_t zero_point, int64_t lo, int64_t hi, DType out);

// The fixed-point factors of an integer add; nullopt when a scale ratio does not fit one.
struct IntegerAdd {
  std::pair<int32_t, int32_t> a, b, out;
};
std::optional<IntegerAdd> plan_integer_add(Int8Grid a, Int8Grid b, Int8Grid out);
ir::ValueId emit_integer_add(ops::Builder& b, ir::ValueId qa, Int8Grid a, ir::ValueId qb, Int8Grid bg, Int8Grid out, const IntegerAdd& plan, bool relu);

// The constants of an integer softmax over rows of n; nullopt when the output grid is too
// coarse for the division to be worth it (C < 2^16) or nothing fits.
struct IntegerSoftmax {
  int K = 0, S = 0;
  int64_t C = 0;
};
std::optional<IntegerSoftmax> plan_integer_softmax(int64_t n, Int8Grid out);
// qx: i8 values on grid x; the softmax runs over `axis` (the last one).
ir::ValueId emit_integer_softmax(ops::Builder& b, ir::ValueId qx, Int8Grid x, int64_t axis, Int8Grid out, const IntegerSoftmax& plan);

}  // namespace rlx::passes
