// Whether bf16 × bf16 products should run as bf16 dot products or widened to f32. On AMX, and
// where AVX512-BF16's vdpbf16ps issues as often as an f32 FMA (Zen 4, Zen 5), a bf16 product does
// twice the multiply-adds of an f32 one per instruction; on some CPUs without AMX (Emerald Rapids
// with AMX hidden: one vdpbf16ps every ~2 cycles against two FMAs a cycle) it does no more than
// the FMAs, oneDNN's bf16 GEMMs ran at ~0.6× its f32 ones there, and bf16 operands are better
// widened (exactly) and multiplied by the f32 kernels.
#pragma once

namespace rlx::backends::cpu {

// RLX_CPU_BF16_DOT: native (oneDNN's bf16 kernels), widen (f32 kernels on the widened
// operands) or auto — native on AMX, else the faster of the two instructions as this CPU runs
// them, timed once per process (~0.2 ms).
bool bf16_products_native();

// The measured multiply-add rates, in GFLOP/s of one core (0 where the CPU lacks the
// instruction); for `rlx devices` and logs.
struct Bf16Rates {
  double f32_fma = 0, bf16_dot = 0;
};
Bf16Rates bf16_rates();

}  // namespace rlx::backends::cpu
