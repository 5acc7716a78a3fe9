// QDQ folding: a graph in ONNX's QDQ form (float Conv/Gemm/MatMul between DequantizeLinear and
// QuantizeLinear, as onnxruntime's static quantization writes it) becomes integer layers — the
// form `rlx quantize --to int8` writes and int8 devices (cortex-m, the cpu's VNNI kernels) run:
//
//   Q(relu?(conv|dot(DQ(xq, sx, zx), DQ(wq, sw, 0)) + DQ(bq, sx·sw, 0)), sy, zy)
//     → requantize(conv|dot(pad(xq, zx)?, wq){out=i32} + (bq − zx·Σw), M, s){zero_point=zy, lo}
//
// with M·2^−s = sx·sw/sy per output channel (M in [2^30, 2^31)), and ReLU as the clamp's lower
// bound. Between a DQ and a Q of the same scale and zero point, movement ops and max (slices,
// reshapes, transposes, max pooling's max) run on the int8 values directly — that is exact. The
// fixed-point rescaling is not: it rounds as the integer kernels do, which can differ by one
// step from the float graph's rounding; the report counts what was folded.
//
// An add of two DQs (a residual connection) becomes two requantizes to a common fine scale, an
// i32 add and a requantize to the output; a softmax over the last axis becomes a table of
// exponentials indexed by max − x, a row sum and one division per row (fold_qdq.cpp). The ONNX
// importer writes QLinearConv in this form too (in f64), so QOperator convolutions fold alike.
#pragma once
#include "ir/graph.h"

namespace rlx::passes {

struct QdqFoldReport {
  int layers = 0;    // conv/dot layers folded into integer layers
  int movements = 0; // Q(f(DQ(x))) chains of movement ops and max folded onto int8 values
  int adds = 0;      // Q(DQ(a) + DQ(b)): integer adds (residual connections)
  int softmaxes = 0; // Q(softmax(DQ(x))): integer softmaxes (a table of exponentials)
};

ir::Graph fold_qdq(const ir::Graph& g, QdqFoldReport* report = nullptr);

}  // namespace rlx::passes
