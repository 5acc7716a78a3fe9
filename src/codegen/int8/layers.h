// The schedule of RLX's int8 code generators (cortex-m C, FPGA SystemVerilog): an int8 LIR
// program cut into steps, each one kernel call or hardware stage. An integer layer — dot_general
// or conv (i8·i8 → i32), its bias add and its requantize, with a pad before a conv — is one step
// that never stores the i32 accumulators; so are an integer add (two requantizes to a common
// scale, an i32 add, a requantize) and an integer softmax (max, a table of exponentials, a row
// sum, a division, a requantize), as passes/fold_qdq.h writes them; quantize_linear,
// dequantize_linear and max_pool are steps of their own, and reshapes are views. The constants
// each step needs are taken out of the graph here, in the layout kernels read (weights
// [out, in…], per-channel bias, multiplier and shift).
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace rlx::codegen::int8 {

struct Step {
  enum class Kind { quantize, dequantize, fc, conv, max_pool, add, softmax, view };
  Kind kind;
  int node = -1;            // the LIR node the step ends with (its name and location in messages)
  ir::ValueId in = ir::kNoValue, out = ir::kNoValue;
  ir::ValueId in2 = ir::kNoValue;  // add: the second operand
  // quantize / dequantize: one scale and zero point
  float scale = 1.0f;
  int32_t zero_point = 0;
  int64_t count = 0;        // elements
  // fc / conv: weights [out channels, …] and the requantization per output channel
  std::vector<int8_t> weights;
  std::vector<int32_t> bias, mult;
  std::vector<int8_t> shift;
  int32_t out_zero_point = 0, lo = -128, hi = 127;
  bool has_bias = false;
  // fc: rows × k → rows × n; conv: NCHW geometry; max_pool: the same fields without weights
  int64_t rows = 0, k = 0, n = 0;
  int64_t batch = 0, cin = 0, h = 0, w = 0, cout = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0, groups = 1;
  int8_t pad_value = 0;
  // add: each operand's offset (−zero point) and its rescaling to the common scale; the sum's
  // rescaling is mult[0], shift[0], out_zero_point, lo, hi (count elements)
  int32_t a_offset = 0, b_offset = 0, a_mult = 0, b_mult = 0, a_shift = 0, b_shift = 0;
  // softmax over rows of n (rows, n): e = table[max − x], y = requantize(e, numerator / Σe, shift[0])
  std::vector<int32_t> table;
  int32_t numerator = 0;
  int64_t scratch_bytes = 0;  // conv: one receptive field (cin/groups·kh·kw bytes) in the arena
  std::string label;          // "fc1 (hir.linear)": what the step computes, for comments and reports

  // A convolution with one input channel per output channel.
  bool depthwise() const { return kind == Kind::conv && cin == groups && cout == groups; }
};

// The steps in order. Throws rlx::Error(unsupported) listing every node the steps cannot take
// (with what each one needs), never a partial program; `generator` names the caller in it.
std::vector<Step> schedule(const ir::Graph& lir, const std::string& generator);

}  // namespace rlx::codegen::int8
