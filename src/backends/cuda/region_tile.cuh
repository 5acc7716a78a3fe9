// elementwise_region's per-element register machine over any share of the elements: region.cu's
// kernel runs it over a grid-stride loop. (The decode megakernel leaves regions out: the
// interpreter is large code, and a decode layer's regions are fused into its GEMVs.)
#pragma once
#include "backends/cuda/common.cuh"
#include "codegen/cuda_math.cuh"

namespace rlx::backends::cuda {

struct RegionPtrs {
  const void* in[kRegionMaxInputs];
  void* out[kRegionMaxOutputs];
};

__device__ __forceinline__ float region_load(const void* p, Dt dt, int64_t i) {
  switch (dt) {
    case Dt::f16: return __half2float(static_cast<const __half*>(p)[i]);
    case Dt::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case Dt::boolean: return static_cast<const uint8_t*>(p)[i] ? 1.0f : 0.0f;
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void region_store(void* p, Dt dt, int64_t i, float v) {
  switch (dt) {
    case Dt::f16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case Dt::bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    case Dt::boolean: static_cast<uint8_t*>(p)[i] = v != 0.0f; break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

// Elements i = start, start + stride, … of the region's space.
__device__ __forceinline__ void region_elems(const RegionProgram& p, const RegionPtrs& ptr, int64_t n, int64_t start, int64_t stride) {
  float r[kRegionMaxRegs];
  for (int64_t i = start; i < n; i += stride) {
    int64_t coord[kRegionRank];
    int64_t rem = i;
    for (int d = p.rank - 1; d > 0; --d) coord[d] = coord_step(rem, p.shape[d]);
    coord[0] = rem;
    for (int k = 0; k < p.n_in; ++k) {
      int64_t off = 0;
      for (int d = 0; d < p.rank; ++d) off += coord[d] * p.in_stride[k][d];
      r[p.in_reg[k]] = region_load(ptr.in[k], p.in_dt[k], off);
    }
    for (int c = 0; c < p.n_const; ++c) r[p.const_reg[c]] = p.const_val[c];
    for (int c = 0; c < p.n_code; ++c) {
      const RegionInstr& in = p.code[c];
      float v = in.op == Op::cast ? r[in.a] : codegen::float_op(codegen::DeviceFloat<float>{}, in.op, r[in.a], r[in.b], r[in.c]);
      switch (in.round) {
        case 1: v = round_f16(v); break;
        case 2: v = round_bf16(v); break;
        case 3: v = v != 0.0f ? 1.0f : 0.0f; break;
        default: break;
      }
      r[in.dst] = v;
    }
    for (int o = 0; o < p.n_out; ++o) region_store(ptr.out[o], p.out_dt[o], i, r[p.out_reg[o]]);
  }
}

}  // namespace rlx::backends::cuda
