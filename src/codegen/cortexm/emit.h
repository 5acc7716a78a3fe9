// The Cortex-M program of an int8 LIR graph: C99 with no heap and no interpreter — the steps of
// layers.h as calls into runtime/rlx_cm.h over one static arena that RLX's memory planner lays
// out, the weights as const arrays in flash — plus the boot code, a linker script and a Makefile
// for arm-none-eabi-gcc and QEMU's board for the core, a semihosting test runner and an
// instruction-counting QEMU plugin (`make run`, `make size`, `make icount`).
#pragma once
#include <map>
#include <string>

#include "ir/graph.h"

namespace rlx::codegen::cortexm {

struct Core {
  const char* name;         // "cortex-m4"
  const char* cflags;       // -mcpu=… -mfpu=… -mfloat-abi=hard
  const char* qemu_board;   // -M
  const char* qemu_cpu;     // -cpu
  const char* isa;          // the kernels' instruction set, in words
  uint32_t flash_origin, flash_bytes, ram_origin, ram_bytes;
  bool dsp;                 // the kernels use the DSP extension (M4, M7) rather than Helium (M55)
};

const Core& core(const std::string& name);  // throws rlx::Error(invalid_argument) naming the cores
const std::vector<Core>& cores();

// File name → contents. Throws rlx::Error(unsupported) when the graph has a node the kernels
// cannot take (layers.h lists them all).
std::map<std::string, std::string> emit_program(const ir::Graph& lir, const Core& core);

}  // namespace rlx::codegen::cortexm
