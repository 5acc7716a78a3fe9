// The FPGA program of an int8 LIR graph: synthesizable SystemVerilog — the integer layers of
// int8/layers.h as MAC arrays of P products a cycle (P, the parallelism, chosen to fit the part)
// with int32 accumulation and exact requantization (runtime/rlx_fpga.sv), layer buffers banked P
// bytes wide, the argmax of the last layer, and byte-wide valid/ready streams — plus weight files,
// a C++ Verilator testbench and a Makefile: `make sim run` checks it bit for bit on the host's
// inputs; `make` synthesizes (yosys), places and routes (nextpnr-ice40) and packs (icepack) a
// bitstream for the iCE40 UP5K and reports its LUT/EBR/SPRAM/DSP use and Fmax; for the generic
// part `make` reports yosys's LUT and flip-flop counts of a wider configuration — or, for small
// networks, of a fully parallel datapath (parallel.h) — and an Fmax estimated by static timing
// analysis on Xilinx 7-series cell delays (yosys synth_xilinx + sta) with a stated routing allowance.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace rlx::codegen::fpga {

struct Part {
  const char* name;         // "ice40-up5k": the device is fpga:<name>
  const char* description;
  bool ice40;               // placed and routed by nextpnr-ice40 (else: yosys's generic synth)
  int dsp;                  // multipliers (SB_MAC16) the MAC arrays may take; 0: no limit
  int ebr_bytes;            // block RAM for initialized weights (ROMs); 0: no limit
  int spram_words;          // 16-bit words per SPRAM block (loaded at power-up); 0: none
  int spram_blocks;
  int max_parallel;         // the widest MAC array a layer gets
  double mhz;               // the clock nextpnr is asked to meet
  int64_t unroll_products;  // models of at most this many products get the fully parallel datapath (parallel.h)
};

const Part& part(const std::string& name);  // throws rlx::Error(invalid_argument) naming the parts
const std::vector<Part>& parts();

// File name → contents. Throws rlx::Error(unsupported) naming what the generator cannot take
// (it runs chains of fully connected integer layers between a quantize and a dequantize) or what
// does not fit the part.
std::map<std::string, std::string> emit_program(const ir::Graph& lir, const Part& part);

}  // namespace rlx::codegen::fpga
