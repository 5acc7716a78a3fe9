// The fully parallel form of an FPGA program (hls4ml's "reuse factor 1"): every product of every
// layer is its own constant multiplier — weights are not stored but built into the logic, where
// synthesis turns each into a few shifted adds — and every stage is registered, so one input
// vector goes in and one result comes out per cycle after a fixed latency. For small networks
// (the 16-64-32-32-5 jet tagger: 4,256 products), where the MAC-array form would spend most of
// its cycles stepping through rows.
#pragma once
#include <string>
#include <vector>

#include "codegen/int8/layers.h"

namespace rlx::codegen::fpga {

struct ParallelProgram {
  std::string sv;        // modules rlx_datapath (vectors in and out), rlx_argmax and rlx_model (the byte streams)
  int64_t cycles = 0;    // the datapath's latency: input vector registered → outputs (the argmax follows in ⌈log2 n⌉)
  int64_t products = 0;  // constant multipliers (nonzero weights)
};

// `fcs`: the chain's integer layers (rows 1, multipliers ≥ 0: checked by the caller).
ParallelProgram parallel_program(const std::vector<int8::Step>& fcs, const std::string& header);

}  // namespace rlx::codegen::fpga
