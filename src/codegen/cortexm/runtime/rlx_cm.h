/* rlx_cm.h — the int8 kernels of RLX's Cortex-M programs (written by `rlx export --target
 * cortex-m4|cortex-m7|cortex-m55`). C99, no heap, no globals: every buffer is a slice of the
 * caller's arena or a const array in flash.
 *
 * One source, three instruction sets, chosen by the compiler's feature macros:
 *   __ARM_FEATURE_MVE   (Cortex-M55)    Helium: 16 int8 products per VMLADAVA
 *   __ARM_FEATURE_DSP   (Cortex-M4/M7)  SXTB16 + SMLAD: two 16-bit products per instruction
 *   RLX_CM_PLAIN                        the plain-C baseline (same arithmetic, one product at a time)
 * Every variant computes the same integers: products are summed exactly in 32 bits (the host
 * graph's i32 accumulators), so the choice changes speed, never results.
 */
#ifndef RLX_CM_H
#define RLX_CM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(RLX_CM_PLAIN)
#define RLX_CM_ISA "plain C"
#elif defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define RLX_CM_MVE 1
#define RLX_CM_ISA "Helium (MVE)"
#include <arm_acle.h>
#include <arm_mve.h>
#elif defined(__ARM_FEATURE_DSP)
#define RLX_CM_DSP 1
#define RLX_CM_ISA "DSP (SMLAD)"
#include <arm_acle.h>
#else
#define RLX_CM_ISA "plain C"
#endif

/* The step kernels (one call per step of the model) are functions of their own: the model's
 * stack is the deepest one kernel needs, and `make icount` can count instructions per kernel. */
#define RLX_CM_KERNEL static __attribute__((noinline, unused))

/* The rescaling of an integer layer (the graph's hir.requantize) with its bias, per output
 * channel: y = clamp(⌊((acc + bias)·mult + 2^(shift−1)) / 2^shift⌋ + zero_point, lo, hi). */
typedef struct {
  const int32_t* bias;  /* per channel, or NULL */
  const int32_t* mult;
  const int8_t* shift;  /* 0..62 */
  int32_t zero_point, lo, hi;
} rlx_requant_t;

/* ⌊(x·mult + 2^(shift−1)) / 2^shift⌋ in 64 bits: hir.requantize with one multiplier and shift,
 * before its zero point and clamp. */
static inline int64_t rlx_rescale(int32_t x, int32_t mult, int32_t shift) {
  const int64_t p = (int64_t)x * mult;
  return (p + (shift > 0 ? (int64_t)1 << (shift - 1) : 0)) >> shift; /* >> of a negative is the floor in GCC */
}

static inline int8_t rlx_clamp_s8(int64_t v, int32_t lo, int32_t hi) { return (int8_t)(v < lo ? lo : v > hi ? hi : v); }

/* rlx_rescale for shift ≥ 33 from the high word of the product alone: ⌊(hi·2^32 + lo + 2^(s−1)) / 2^s⌋
 * = ⌊(hi + 2^(s−33)) / 2^(s−32)⌋, since lo < 2^32 never carries past the floor — one SMULL, an add
 * and a shift. */
static inline int32_t rlx_rescale_high(int32_t x, int32_t mult, int32_t shift) {
  const int32_t hi = (int32_t)(((int64_t)x * mult) >> 32);
  return (hi + ((int32_t)1 << (shift - 33))) >> (shift - 32);
}

static inline int8_t rlx_requantize(int32_t acc, int32_t mult, int32_t shift, const rlx_requant_t* q) {
  if (shift >= 33) {
    const int32_t r32 = rlx_rescale_high(acc, mult, shift) + q->zero_point; /* |hi| < 2^30: no overflow */
#if defined(RLX_CM_DSP) || defined(RLX_CM_MVE)
    if (q->lo == -128 && q->hi == 127) return (int8_t)__ssat(r32, 8); /* the whole i8 range: one SSAT */
#endif
    return rlx_clamp_s8(r32, q->lo, q->hi);
  }
  return rlx_clamp_s8(rlx_rescale(acc, mult, shift) + q->zero_point, q->lo, q->hi);
}

#if defined(RLX_CM_DSP)
/* Bytes 1 and 3 of a word as two sign-extended halfwords: SXTB16 with its own rotation, which
 * GCC does not fold from a C rotate. */
static inline uint32_t rlx_sxtb16_ror8(uint32_t v) {
  uint32_t r;
  __asm("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}
#endif

/* Σ x[i]·w[i] + acc over n int8 pairs, exact in 32 bits. */
static inline int32_t rlx_dot_s8(const int8_t* x, const int8_t* w, int32_t n, int32_t acc) {
  int32_t i = 0;
#if defined(RLX_CM_MVE)
  for (; i < n; i += 16) {
    mve_pred16_t p = vctp8q((uint32_t)(n - i));
    acc = vmladavaq_p_s8(acc, vldrbq_z_s8(x + i, p), vldrbq_z_s8(w + i, p), p);
  }
  return acc;
#elif defined(RLX_CM_DSP)
  for (; i + 4 <= n; i += 4) {
    uint32_t a, b;
    memcpy(&a, x + i, 4); /* one LDR: the cores take unaligned words */
    memcpy(&b, w + i, 4);
    /* bytes 0 and 2, then 1 and 3, as pairs of halfwords: two products each */
    acc = (int32_t)__smlad(__sxtb16(a), __sxtb16(b), (uint32_t)acc);
    acc = (int32_t)__smlad(rlx_sxtb16_ror8(a), rlx_sxtb16_ror8(b), (uint32_t)acc);
  }
#endif
  for (; i < n; ++i) acc += (int32_t)x[i] * w[i];
  return acc;
}

/* Two rows of w against one x: x is loaded and unpacked once for both. */
static inline void rlx_dot2_s8(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t n, int32_t* acc0, int32_t* acc1) {
#if defined(RLX_CM_DSP)
  int32_t i = 0, s0 = *acc0, s1 = *acc1;
  for (; i + 4 <= n; i += 4) {
    uint32_t a, b, c;
    memcpy(&a, x + i, 4);
    memcpy(&b, w0 + i, 4);
    memcpy(&c, w1 + i, 4);
    uint32_t a02 = __sxtb16(a), a13 = rlx_sxtb16_ror8(a);
    s0 = (int32_t)__smlad(a02, __sxtb16(b), (uint32_t)s0);
    s0 = (int32_t)__smlad(a13, rlx_sxtb16_ror8(b), (uint32_t)s0);
    s1 = (int32_t)__smlad(a02, __sxtb16(c), (uint32_t)s1);
    s1 = (int32_t)__smlad(a13, rlx_sxtb16_ror8(c), (uint32_t)s1);
  }
  for (; i < n; ++i) {
    s0 += (int32_t)x[i] * w0[i];
    s1 += (int32_t)x[i] * w1[i];
  }
  *acc0 = s0;
  *acc1 = s1;
#else
  *acc0 = rlx_dot_s8(x, w0, n, *acc0);
  *acc1 = rlx_dot_s8(x, w1, n, *acc1);
#endif
}

#if defined(RLX_CM_DSP)
/* The columns the four-row loops below leave over, one product at a time, and the sums stored:
 * rows 0 and 2 start at w0 and w2, rows 1 and 3 one row (k) after them. */
static inline void rlx_dot4_tail(const int8_t* x, const int8_t* w0, const int8_t* w2, int32_t k, int32_t n, int32_t s0, int32_t s1, int32_t s2, int32_t s3,
                                 int32_t* acc) {
  for (int32_t i = 0; i < n; ++i) {
    const int32_t v = x[i];
    s0 += v * w0[i];
    s1 += v * w0[k + i];
    s2 += v * w2[i];
    s3 += v * w2[k + i];
  }
  acc[0] = s0;
  acc[1] = s1;
  acc[2] = s2;
  acc[3] = s3;
}

/* Four consecutive rows of w (k apart) against one x: each word of x is unpacked once for four
 * rows, so four products cost about six instructions (a row's LDR, two SXTB16 and two SMLAD, and
 * x's share). The loop is written out because GCC spills its five pointers; here two pointers
 * and the row length as a register offset reach the four rows, in thirteen registers. */
/* (not inlined: the loop needs thirteen registers of its own) */
static __attribute__((noinline)) void rlx_dot4_s8(const int8_t* x, const int8_t* w, int32_t k, int32_t* acc) {
  int32_t s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3];
  const int8_t *w0 = w, *w2 = w + 2 * k;
  int32_t quads = k >> 2;
  if (quads > 0) {
    uint32_t a02, a13, b, t;
    __asm volatile(
        "1:\n\t"
        "ldr %[a13], [%[x]], #4\n\t"
        "sxtb16 %[a02], %[a13]\n\t"
        "sxtb16 %[a13], %[a13], ror #8\n\t"
        "ldr %[b], [%[w0], %[k]]\n\t"
        "sxtb16 %[t], %[b]\n\t"
        "smlad %[s1], %[a02], %[t], %[s1]\n\t"
        "sxtb16 %[b], %[b], ror #8\n\t"
        "smlad %[s1], %[a13], %[b], %[s1]\n\t"
        "ldr %[b], [%[w0]], #4\n\t"
        "sxtb16 %[t], %[b]\n\t"
        "smlad %[s0], %[a02], %[t], %[s0]\n\t"
        "sxtb16 %[b], %[b], ror #8\n\t"
        "smlad %[s0], %[a13], %[b], %[s0]\n\t"
        "ldr %[b], [%[w2], %[k]]\n\t"
        "sxtb16 %[t], %[b]\n\t"
        "smlad %[s3], %[a02], %[t], %[s3]\n\t"
        "sxtb16 %[b], %[b], ror #8\n\t"
        "smlad %[s3], %[a13], %[b], %[s3]\n\t"
        "ldr %[b], [%[w2]], #4\n\t"
        "sxtb16 %[t], %[b]\n\t"
        "smlad %[s2], %[a02], %[t], %[s2]\n\t"
        "sxtb16 %[b], %[b], ror #8\n\t"
        "smlad %[s2], %[a13], %[b], %[s2]\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 1b\n\t"
        : [x] "+r"(x), [w0] "+r"(w0), [w2] "+r"(w2), [n] "+r"(quads), [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [a02] "=&r"(a02),
          [a13] "=&r"(a13), [b] "=&r"(b), [t] "=&r"(t)
        : [k] "r"(k)
        : "cc", "memory");
  }
  /* x, w0 and w2 now point at the last k % 4 columns */
  rlx_dot4_tail(x, w0, w2, k, k & 3, s0, s1, s2, s3, acc);
}
#endif

#if defined(RLX_CM_MVE)
/* Four rows of w against one x on Helium: each sixteen bytes of x are loaded once for four
 * VMLADAVAs (sixteen products each); the last chunk is predicated. */
static inline void rlx_dot4_s8(const int8_t* x, const int8_t* w, int32_t k, int32_t* acc) {
  int32_t s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3];
  const int8_t *w1 = w + k, *w2 = w + 2 * k, *w3 = w + 3 * k;
  for (int32_t i = 0; i < k; i += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(k - i));
    const int8x16_t xv = vldrbq_z_s8(x + i, p);
    s0 = vmladavaq_p_s8(s0, xv, vldrbq_z_s8(w + i, p), p);
    s1 = vmladavaq_p_s8(s1, xv, vldrbq_z_s8(w1 + i, p), p);
    s2 = vmladavaq_p_s8(s2, xv, vldrbq_z_s8(w2 + i, p), p);
    s3 = vmladavaq_p_s8(s3, xv, vldrbq_z_s8(w3 + i, p), p);
  }
  acc[0] = s0;
  acc[1] = s1;
  acc[2] = s2;
  acc[3] = s3;
}
#endif

/* y[j·y_stride] = requantize(Σ_i x[i]·w[j·k + i]) for the n rows of w, which are the output
 * channels c0, c0 + 1, … of q: a fully connected layer for one input row, or one output pixel of a
 * convolution over its gathered column. */
static void rlx_rows_s8(const int8_t* x, const int8_t* w, int32_t k, int32_t c0, int32_t n, const rlx_requant_t* q, int8_t* y, int32_t y_stride) {
  const int32_t* bias = q->bias ? q->bias + c0 : 0;
  const int32_t* mult = q->mult + c0;
  const int8_t* shift = q->shift + c0;
  int32_t j0 = 0;
#if defined(RLX_CM_DSP) || defined(RLX_CM_MVE)
  for (; j0 + 3 < n; j0 += 4) {
    int32_t a[4];
    for (int32_t r = 0; r < 4; ++r) a[r] = bias ? bias[j0 + r] : 0;
    rlx_dot4_s8(x, w + j0 * k, k, a);
    for (int32_t r = 0; r < 4; ++r) y[(j0 + r) * y_stride] = rlx_requantize(a[r], mult[j0 + r], shift[j0 + r], q);
  }
#endif
  for (int32_t j = j0; j + 1 < n; j += 2) {
    int32_t a0 = bias ? bias[j] : 0, a1 = bias ? bias[j + 1] : 0;
    rlx_dot2_s8(x, w + j * k, w + (j + 1) * k, k, &a0, &a1);
    y[j * y_stride] = rlx_requantize(a0, mult[j], shift[j], q);
    y[(j + 1) * y_stride] = rlx_requantize(a1, mult[j + 1], shift[j + 1], q);
  }
  if (n & 1) { /* the last row of an odd count */
    const int32_t j = n - 1;
    y[j * y_stride] = rlx_requantize(rlx_dot_s8(x, w + j * k, k, bias ? bias[j] : 0), mult[j], shift[j], q);
  }
}

#if defined(RLX_CM_DSP)
/* x unpacked once per row for every output: each group of four bytes becomes the two words
 * SXTB16 makes of it (bytes 0 and 2, then 1 and 3), in `x16` (2·(k − k mod 4) bytes). */
static inline void rlx_unpack_s8(const int8_t* x, int32_t k, uint32_t* x16) {
  for (int32_t i = 0; i + 4 <= k; i += 4) {
    uint32_t a;
    memcpy(&a, x + i, 4);
    *x16++ = __sxtb16(a);
    *x16++ = rlx_sxtb16_ror8(a);
  }
}

/* Four rows of w against an unpacked x, eight columns an iteration: per eight products of a row
 * one LDR, two SXTB16 and two SMLAD twice, and x costs one LDRD per four columns for all rows. */
static __attribute__((noinline)) void rlx_dot4_x16(const uint32_t* x16, const int8_t* x, const int8_t* w, int32_t k, int32_t* acc) {
  int32_t s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3];
  const int8_t *w0 = w, *w2 = w + 2 * k;
  int32_t octets = k >> 3;
  if (octets > 0) {
    uint32_t a02, a13, b, t;
#define RLX_QUAD                                      \
  "ldrd %[a02], %[a13], [%[x]], #8\n\t"              \
  "ldr %[b], [%[w0], %[k]]\n\t"                      \
  "sxtb16 %[t], %[b]\n\t"                            \
  "smlad %[s1], %[a02], %[t], %[s1]\n\t"             \
  "sxtb16 %[b], %[b], ror #8\n\t"                    \
  "smlad %[s1], %[a13], %[b], %[s1]\n\t"             \
  "ldr %[b], [%[w0]], #4\n\t"                        \
  "sxtb16 %[t], %[b]\n\t"                            \
  "smlad %[s0], %[a02], %[t], %[s0]\n\t"             \
  "sxtb16 %[b], %[b], ror #8\n\t"                    \
  "smlad %[s0], %[a13], %[b], %[s0]\n\t"             \
  "ldr %[b], [%[w2], %[k]]\n\t"                      \
  "sxtb16 %[t], %[b]\n\t"                            \
  "smlad %[s3], %[a02], %[t], %[s3]\n\t"             \
  "sxtb16 %[b], %[b], ror #8\n\t"                    \
  "smlad %[s3], %[a13], %[b], %[s3]\n\t"             \
  "ldr %[b], [%[w2]], #4\n\t"                        \
  "sxtb16 %[t], %[b]\n\t"                            \
  "smlad %[s2], %[a02], %[t], %[s2]\n\t"             \
  "sxtb16 %[b], %[b], ror #8\n\t"                    \
  "smlad %[s2], %[a13], %[b], %[s2]\n\t"
    __asm volatile("1:\n\t" RLX_QUAD RLX_QUAD "subs %[n], %[n], #1\n\tbne 1b\n\t"
                   : [x] "+r"(x16), [w0] "+r"(w0), [w2] "+r"(w2), [n] "+r"(octets), [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3),
                     [a02] "=&r"(a02), [a13] "=&r"(a13), [b] "=&r"(b), [t] "=&r"(t)
                   : [k] "r"(k)
                   : "cc", "memory");
#undef RLX_QUAD
  }
  /* the last k mod 8 columns; w0 and w2 have moved on by k − k mod 8 */
  rlx_dot4_tail(x + (k & ~7), w0, w2, k, k & 7, s0, s1, s2, s3, acc);
}
#endif

/* The output channels c0 … c0+n−1 of one gathered column: on the DSP cores with the column
 * unpacked once to halfword pairs (`x16`, 2·k bytes) for every four channels. */
static inline void rlx_column_s8(const int8_t* col, void* x16, const int8_t* w, int32_t k, int32_t c0, int32_t n, const rlx_requant_t* q, int8_t* y, int32_t y_stride) {
  int32_t j0 = 0;
#if defined(RLX_CM_DSP)
  if (x16 && k >= 8 && n >= 4) {
    rlx_unpack_s8(col, k, (uint32_t*)x16);
    for (; j0 + 3 < n; j0 += 4) {
      int32_t a[4];
      for (int32_t i = 0; i < 4; ++i) a[i] = q->bias ? q->bias[c0 + j0 + i] : 0;
      rlx_dot4_x16((const uint32_t*)x16, col, w + j0 * k, k, a);
      for (int32_t i = 0; i < 4; ++i) y[(j0 + i) * y_stride] = rlx_requantize(a[i], q->mult[c0 + j0 + i], q->shift[c0 + j0 + i], q);
    }
  }
#else
  (void)x16;
#endif
  if (j0 < n) rlx_rows_s8(col, w + j0 * k, k, c0 + j0, n - j0, q, y + j0 * y_stride, y_stride);
}

/* Fully connected: y[r, j] = requantize(x[r, :] · w[j, :]). `scratch` holds an unpacked row of
 * x on the DSP cores (2·k bytes of the arena); the others ignore it. */
RLX_CM_KERNEL void rlx_fc_s8(const int8_t* x, const int8_t* w, int32_t rows, int32_t k, int32_t n, const rlx_requant_t* q, int8_t* y, void* scratch) {
  for (int32_t r = 0; r < rows; ++r) rlx_column_s8(x + r * k, scratch, w, k, 0, n, q, y + r * n, 1);
}

/* A 2-D convolution in NCHW, weights [cout, cin/groups, kh, kw], where the input is extended by
 * `pad` (top, left, bottom, right) with the value pad_value (the input's zero point: the graph's
 * padding). */
typedef struct {
  int32_t n, cin, h, w;       /* input */
  int32_t cout, kh, kw;       /* weights */
  int32_t oh, ow;             /* output */
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, groups;
  int8_t pad_value;
} rlx_conv_t;

#if defined(RLX_CM_PLAIN)
/* Each product straight from the input: the plain baseline. */
RLX_CM_KERNEL void rlx_conv_s8(const int8_t* x, const int8_t* wt, const rlx_conv_t* c, const rlx_requant_t* q, int8_t* y, int8_t* col, void* x16) {
  (void)col;
  (void)x16;
  const int32_t cin_g = c->cin / c->groups, cout_g = c->cout / c->groups;
  for (int32_t b = 0; b < c->n; ++b)
    for (int32_t co = 0; co < c->cout; ++co) {
      const int32_t g = co / cout_g;
      for (int32_t oy = 0; oy < c->oh; ++oy)
        for (int32_t ox = 0; ox < c->ow; ++ox) {
          int32_t acc = q->bias ? q->bias[co] : 0;
          for (int32_t ci = 0; ci < cin_g; ++ci)
            for (int32_t ky = 0; ky < c->kh; ++ky)
              for (int32_t kx = 0; kx < c->kw; ++kx) {
                const int32_t iy = oy * c->stride_h - c->pad_top + ky * c->dil_h, ix = ox * c->stride_w - c->pad_left + kx * c->dil_w;
                const int32_t v = (iy >= 0 && iy < c->h && ix >= 0 && ix < c->w) ? x[((b * c->cin + g * cin_g + ci) * c->h + iy) * c->w + ix] : c->pad_value;
                acc += v * wt[((co * cin_g + ci) * c->kh + ky) * c->kw + kx];
              }
          y[((b * c->cout + co) * c->oh + oy) * c->ow + ox] = rlx_requantize(acc, q->mult[co], q->shift[co], q);
        }
    }
}
#else
/* The rows and columns a convolution's windows cover, padding included. */
static inline int32_t rlx_conv_extent_h(const rlx_conv_t* c) { return (c->oh - 1) * c->stride_h + (c->kh - 1) * c->dil_h + 1; }
static inline int32_t rlx_conv_extent_w(const rlx_conv_t* c) { return (c->ow - 1) * c->stride_w + (c->kw - 1) * c->dil_w + 1; }

/* Depthwise (one input channel per output channel): each channel's plane is first copied into
 * `col` with its padding (extent_h·extent_w bytes of the arena), so that every window is whole
 * and a 3×3 one is nine products with no bounds to check. */
static __attribute__((noinline)) void rlx_dwconv_s8(const int8_t* x, const int8_t* wt, const rlx_conv_t* c, const rlx_requant_t* q, int8_t* y, int8_t* col) {
  const int32_t taps = c->kh * c->kw, eh = rlx_conv_extent_h(c), ew = rlx_conv_extent_w(c);
  for (int32_t b = 0; b < c->n; ++b)
    for (int32_t ch = 0; ch < c->cout; ++ch) {
      const int8_t* xc = x + (b * c->cin + ch) * c->h * c->w;
      for (int32_t r = 0; r < eh; ++r) {
        const int32_t iy = r - c->pad_top;
        int8_t* dst = col + r * ew;
        if (iy < 0 || iy >= c->h) {
          memset(dst, c->pad_value, (size_t)ew);
          continue;
        }
        /* [pad_left of padding][the row, as much as the extent takes][padding to the extent] */
        const int32_t left = c->pad_left < ew ? c->pad_left : ew;
        const int32_t n = c->w < ew - left ? c->w : ew - left;
        memset(dst, c->pad_value, (size_t)left);
        memcpy(dst + left, xc + iy * c->w, (size_t)n);
        memset(dst + left + n, c->pad_value, (size_t)(ew - left - n));
      }
      const int8_t* wc = wt + ch * taps;
      const int32_t bias = q->bias ? q->bias[ch] : 0, mult = q->mult[ch], shift = q->shift[ch];
      int8_t* yc = y + (b * c->cout + ch) * c->oh * c->ow;
      if (c->kh == 3 && c->kw == 3 && c->dil_h == 1 && c->dil_w == 1) {
        const int32_t w0 = wc[0], w1 = wc[1], w2 = wc[2], w3 = wc[3], w4 = wc[4], w5 = wc[5], w6 = wc[6], w7 = wc[7], w8 = wc[8];
        for (int32_t oy = 0; oy < c->oh; ++oy) {
          const int8_t* r0 = col + oy * c->stride_h * ew;
          for (int32_t ox = 0; ox < c->ow; ++ox, r0 += c->stride_w) {
            const int8_t *r1 = r0 + ew, *r2 = r1 + ew;
            const int32_t acc = bias + r0[0] * w0 + r0[1] * w1 + r0[2] * w2 + r1[0] * w3 + r1[1] * w4 + r1[2] * w5 + r2[0] * w6 + r2[1] * w7 + r2[2] * w8;
            yc[oy * c->ow + ox] = rlx_requantize(acc, mult, shift, q);
          }
        }
        continue;
      }
      for (int32_t oy = 0; oy < c->oh; ++oy)
        for (int32_t ox = 0; ox < c->ow; ++ox) {
          const int8_t* win = col + oy * c->stride_h * ew + ox * c->stride_w;
          int32_t acc = bias;
          for (int32_t ky = 0; ky < c->kh; ++ky)
            for (int32_t kx = 0; kx < c->kw; ++kx) acc += win[ky * c->dil_h * ew + kx * c->dil_w] * wc[ky * c->kw + kx];
          yc[oy * c->ow + ox] = rlx_requantize(acc, mult, shift, q);
        }
    }
}

/* Per output pixel and group: the receptive field gathered once into `col` (cin/groups·kh·kw
 * bytes of the arena), then every output channel of the group as a row product over it (on the
 * DSP cores over the column unpacked into `x16`, when the program gives that scratch). */
RLX_CM_KERNEL void rlx_conv_s8(const int8_t* x, const int8_t* wt, const rlx_conv_t* c, const rlx_requant_t* q, int8_t* y, int8_t* col, void* x16) {
  const int32_t cin_g = c->cin / c->groups, cout_g = c->cout / c->groups, k = cin_g * c->kh * c->kw, plane = c->oh * c->ow;
  if (cin_g == 1 && cout_g == 1) {
    rlx_dwconv_s8(x, wt, c, q, y, col);
    return;
  }
  if (c->kh == 1 && c->kw == 1 && c->stride_h == 1 && c->stride_w == 1 && c->pad_top == 0 && c->pad_left == 0 && c->oh == c->h && c->ow == c->w) {
    /* pointwise: a pixel's column is its channels, one plane apart */
    for (int32_t b = 0; b < c->n; ++b)
      for (int32_t px = 0; px < plane; ++px)
        for (int32_t g = 0; g < c->groups; ++g) {
          const int8_t* xs = x + (b * c->cin + g * cin_g) * plane + px;
          for (int32_t ci = 0; ci < cin_g; ++ci) col[ci] = xs[ci * plane];
          rlx_column_s8(col, x16, wt + g * cout_g * k, k, g * cout_g, cout_g, q, y + (b * c->cout + g * cout_g) * plane + px, plane);
        }
    return;
  }
  for (int32_t b = 0; b < c->n; ++b)
    for (int32_t oy = 0; oy < c->oh; ++oy)
      for (int32_t ox = 0; ox < c->ow; ++ox)
        for (int32_t g = 0; g < c->groups; ++g) {
          int8_t* p = col;
          for (int32_t ci = 0; ci < cin_g; ++ci) {
            const int8_t* xc = x + (b * c->cin + g * cin_g + ci) * c->h * c->w;
            for (int32_t ky = 0; ky < c->kh; ++ky) {
              const int32_t iy = oy * c->stride_h - c->pad_top + ky * c->dil_h;
              const int32_t ix0 = ox * c->stride_w - c->pad_left;
              if (iy < 0 || iy >= c->h) {
                for (int32_t kx = 0; kx < c->kw; ++kx) *p++ = c->pad_value;
                continue;
              }
              const int8_t* row = xc + iy * c->w;
              if (c->dil_w == 1 && ix0 >= 0 && ix0 + c->kw <= c->w) { /* inside: a straight copy (a few bytes: no call) */
                for (int32_t kx = 0; kx < c->kw; ++kx) *p++ = row[ix0 + kx];
                continue;
              }
              for (int32_t kx = 0; kx < c->kw; ++kx) {
                const int32_t ix = ix0 + kx * c->dil_w;
                *p++ = (ix >= 0 && ix < c->w) ? row[ix] : c->pad_value;
              }
            }
          }
          rlx_column_s8(col, x16, wt + g * cout_g * k, k, g * cout_g, cout_g, q, y + (b * c->cout + g * cout_g) * plane + oy * c->ow + ox, plane);
        }
}
#endif

/* Max pooling in NCHW over windows inside the input (the graph pads with the dtype's lowest). */
typedef struct {
  int32_t nc, h, w, oh, ow, kh, kw, stride_h, stride_w, pad_top, pad_left;
} rlx_pool_t;

#if defined(RLX_CM_DSP)
/* Four bytewise maxima at once: SSUB8 sets a GE flag per byte where a ≥ b, SEL picks by them. */
static inline uint32_t rlx_max_s8x4(uint32_t a, uint32_t b) {
  uint32_t t, r;
  __asm("ssub8 %[t], %[a], %[b]\n\tsel %[r], %[a], %[b]" : [t] "=&r"(t), [r] "=&r"(r) : [a] "r"(a), [b] "r"(b) : "cc");
  return r;
}
#endif

/* 2×2 windows at stride 2 without padding, the common case: two rows' maxima four bytes (two
 * outputs) at a time on the DSP cores, sixteen bytes (eight outputs) on Helium. */
static inline int rlx_max_pool_2x2_s8(const int8_t* x, const rlx_pool_t* p, int8_t* y) {
  if (p->kh != 2 || p->kw != 2 || p->stride_h != 2 || p->stride_w != 2 || p->pad_top || p->pad_left || p->oh * 2 > p->h || p->ow * 2 > p->w) return 0;
#if defined(RLX_CM_DSP)
  for (int32_t c = 0; c < p->nc; ++c)
    for (int32_t oy = 0; oy < p->oh; ++oy) {
      const int8_t* r0 = x + (c * p->h + 2 * oy) * p->w;
      const int8_t* r1 = r0 + p->w;
      int8_t* out = y + (c * p->oh + oy) * p->ow;
      int32_t ox = 0;
      for (; ox + 2 <= p->ow; ox += 2) {
        uint32_t a, b;
        memcpy(&a, r0 + 2 * ox, 4);
        memcpy(&b, r1 + 2 * ox, 4);
        uint32_t m = rlx_max_s8x4(a, b);  /* columns 0..3 of the two rows */
        m = rlx_max_s8x4(m, m >> 8);      /* bytes 0 and 2: the maxima of columns 0,1 and 2,3 */
        out[ox] = (int8_t)m;
        out[ox + 1] = (int8_t)(m >> 16);
      }
      for (; ox < p->ow; ++ox) {
        int32_t m = r0[2 * ox];
        m = r0[2 * ox + 1] > m ? r0[2 * ox + 1] : m;
        m = r1[2 * ox] > m ? r1[2 * ox] : m;
        m = r1[2 * ox + 1] > m ? r1[2 * ox + 1] : m;
        out[ox] = (int8_t)m;
      }
    }
  return 1;
#elif defined(RLX_CM_MVE)
  for (int32_t c = 0; c < p->nc; ++c)
    for (int32_t oy = 0; oy < p->oh; ++oy) {
      const int8_t* r0 = x + (c * p->h + 2 * oy) * p->w;
      const int8_t* r1 = r0 + p->w;
      int8_t* out = y + (c * p->oh + oy) * p->ow;
      for (int32_t ox = 0; ox < p->ow; ox += 8) {
        const mve_pred16_t in = vctp8q((uint32_t)(2 * (p->ow - ox))), keep = vctp16q((uint32_t)(p->ow - ox));
        int8x16_t m = vmaxq_s8(vldrbq_z_s8(r0 + 2 * ox, in), vldrbq_z_s8(r1 + 2 * ox, in));
        m = vmaxq_s8(m, vrev16q_s8(m));  /* the even bytes: each pair's maximum */
        vstrbq_p_s16(out + ox, vreinterpretq_s16_s8(m), keep); /* the low byte of each halfword */
      }
    }
  return 1;
#else
  (void)x;
  (void)y;
  return 0;
#endif
}

RLX_CM_KERNEL void rlx_max_pool_s8(const int8_t* x, const rlx_pool_t* p, int8_t* y) {
  if (rlx_max_pool_2x2_s8(x, p, y)) return;
  for (int32_t c = 0; c < p->nc; ++c)
    for (int32_t oy = 0; oy < p->oh; ++oy)
      for (int32_t ox = 0; ox < p->ow; ++ox) {
        int32_t m = -128;
        for (int32_t ky = 0; ky < p->kh; ++ky) {
          const int32_t iy = oy * p->stride_h - p->pad_top + ky;
          if (iy < 0 || iy >= p->h) continue;
          for (int32_t kx = 0; kx < p->kw; ++kx) {
            const int32_t ix = ox * p->stride_w - p->pad_left + kx;
            if (ix < 0 || ix >= p->w) continue;
            const int32_t v = x[(c * p->h + iy) * p->w + ix];
            m = v > m ? v : m;
          }
        }
        y[(c * p->oh + oy) * p->ow + ox] = (int8_t)m;
      }
}

/* An integer add (a residual connection): each operand, offset by its zero point, rescaled to a
 * common fine scale; the i32 sum rescaled to the output. The generator checked that neither
 * rescaled operand nor their sum leaves 2^30. */
typedef struct {
  int32_t a_offset, a_mult, a_shift, b_offset, b_mult, b_shift;
  int32_t mult, shift, zero_point, lo, hi;
} rlx_add_t;

/* rlx_rescale in 32 bits for an operand of nine bits (|x| ≤ 383) and shift ≤ 22: with
 * mult = mh·2^shift + ml (0 ≤ ml < 2^shift), x·mult = x·mh·2^shift + x·ml, and only the second
 * part meets the rounding — x·ml + 2^(shift−1) < 2^31. */
typedef struct {
  int32_t mh, ml, half, shift;
} rlx_split_t;

static inline rlx_split_t rlx_split(int32_t mult, int32_t shift) {
  rlx_split_t r;
  r.mh = mult >> shift; /* the floor, for either sign */
  r.ml = (int32_t)((uint32_t)mult - ((uint32_t)r.mh << shift));
  r.half = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
  r.shift = shift;
  return r;
}

static inline int32_t rlx_rescale_split(int32_t x, const rlx_split_t* m) { return x * m->mh + ((x * m->ml + m->half) >> m->shift); }

RLX_CM_KERNEL void rlx_add_s8(const int8_t* a, const int8_t* b, int32_t n, const rlx_add_t* p, int8_t* y) {
  int32_t i = 0;
  if (p->a_shift <= 22 && p->b_shift <= 22 && p->shift >= 33) { /* what passes/fold_qdq writes */
    const rlx_split_t ma = rlx_split(p->a_mult, p->a_shift), mb = rlx_split(p->b_mult, p->b_shift);
#if defined(RLX_CM_MVE)
    /* four lanes of 32 bits: VMULH gives the product's high word as SMULL does */
    for (; i < n; i += 4) {
      const mve_pred16_t in = vctp32q((uint32_t)(n - i));
      const int32x4_t xa = vaddq_n_s32(vldrbq_z_s32(a + i, in), p->a_offset), xb = vaddq_n_s32(vldrbq_z_s32(b + i, in), p->b_offset);
      const int32x4_t ra = vaddq_s32(vmulq_n_s32(xa, ma.mh), vshlq_r_s32(vaddq_n_s32(vmulq_n_s32(xa, ma.ml), ma.half), -ma.shift));
      const int32x4_t rb = vaddq_s32(vmulq_n_s32(xb, mb.mh), vshlq_r_s32(vaddq_n_s32(vmulq_n_s32(xb, mb.ml), mb.half), -mb.shift));
      const int32x4_t hi = vmulhq_s32(vaddq_s32(ra, rb), vdupq_n_s32(p->mult));
      int32x4_t r = vaddq_n_s32(vshlq_r_s32(vaddq_n_s32(hi, (int32_t)1 << (p->shift - 33)), -(p->shift - 32)), p->zero_point);
      r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(p->lo)), vdupq_n_s32(p->hi));
      vstrbq_p_s32(y + i, r, in);
    }
#else
    for (; i < n; ++i) {
      const int32_t sum = rlx_rescale_split(a[i] + p->a_offset, &ma) + rlx_rescale_split(b[i] + p->b_offset, &mb);
      y[i] = rlx_clamp_s8((int64_t)rlx_rescale_high(sum, p->mult, p->shift) + p->zero_point, p->lo, p->hi);
    }
#endif
  }
  for (; i < n; ++i) {
    const int32_t sum = (int32_t)rlx_rescale(a[i] + p->a_offset, p->a_mult, p->a_shift) + (int32_t)rlx_rescale(b[i] + p->b_offset, p->b_mult, p->b_shift);
    y[i] = rlx_clamp_s8(rlx_rescale(sum, p->mult, p->shift) + p->zero_point, p->lo, p->hi);
  }
}

/* An integer softmax over rows of n: with m the row's maximum, e = table[m − x] (exp(−scale·d)
 * in fixed point, d = 0…255), and y = requantize(e, numerator / Σe, shift): one division a row. */
typedef struct {
  int32_t rows, n;
  const int32_t* table;
  int32_t numerator, shift, zero_point, lo, hi;
} rlx_softmax_t;

static inline int32_t rlx_row_max_s8(const int8_t* x, int32_t n) {
  int32_t i = 0, m = -128;
#if defined(RLX_CM_DSP)
  if (n >= 4) {
    uint32_t w;
    memcpy(&w, x, 4);
    for (i = 4; i + 4 <= n; i += 4) {
      uint32_t v;
      memcpy(&v, x + i, 4);
      w = rlx_max_s8x4(w, v);
    }
    w = rlx_max_s8x4(w, w >> 16); /* byte 0: max of bytes 0 and 2; byte 1: of 1 and 3 */
    w = rlx_max_s8x4(w, w >> 8);
    m = (int8_t)w;
  }
#elif defined(RLX_CM_MVE)
  for (; i < n; i += 16) {
    const mve_pred16_t in = vctp8q((uint32_t)(n - i));
    m = vmaxvq_p_s8((int8_t)m, vldrbq_z_s8(x + i, in), in);
  }
#endif
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

static inline int32_t rlx_row_exp_sum(const int8_t* x, int32_t n, int32_t m, const int32_t* table) {
  int32_t sum = 0, i = 0;
#if defined(RLX_CM_MVE)
  /* four table entries a gather: offsets m − x, in words */
  for (; i < n; i += 4) {
    const mve_pred16_t in = vctp32q((uint32_t)(n - i));
    const uint32x4_t d = vreinterpretq_u32_s32(vsubq_s32(vdupq_n_s32(m), vldrbq_z_s32(x + i, in)));
    sum = vaddvaq_p_s32(sum, vldrwq_gather_shifted_offset_z_s32(table, d, in), in);
  }
#endif
  for (; i < n; ++i) sum += table[m - x[i]];
  return sum;
}

RLX_CM_KERNEL void rlx_softmax_s8(const int8_t* x, const rlx_softmax_t* p, int8_t* y) {
  for (int32_t r = 0; r < p->rows; ++r) {
    const int8_t* xr = x + r * p->n;
    int8_t* yr = y + r * p->n;
    const int32_t m = rlx_row_max_s8(xr, p->n);
    const int32_t recip = p->numerator / rlx_row_exp_sum(xr, p->n, m, p->table); /* the sum is ≥ table[0] > 0 */
    for (int32_t i = 0; i < p->n; ++i) yr[i] = rlx_clamp_s8(rlx_rescale(p->table[m - xr[i]], recip, p->shift) + p->zero_point, p->lo, p->hi);
  }
}

/* hir.quantize_linear with one scale: clamp(round_half_even(x / scale) + zero_point). The
 * division is IEEE single precision, as the host's; rintf rounds half to even. */
static inline float rlx_round_half_even(float v) {
  /* Adding and taking away 1.5·2^23 rounds to an integer in the default (to nearest even) mode,
   * exactly for |v| < 2^22, without a call to rintf (the M4's FPU has no VRINT). Larger values
   * come out within one of v, so they clamp to the same bound. */
  const float magic = 12582912.0f; /* C without -ffast-math keeps both roundings */
  return (v + magic) - magic;
}

RLX_CM_KERNEL void rlx_quantize_f32_s8(const float* x, int32_t n, float scale, int32_t zero_point, int8_t* y) {
  for (int32_t i = 0; i < n; ++i) {
    float v = rlx_round_half_even(x[i] / scale) + (float)zero_point;
    y[i] = (int8_t)(v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v);
  }
}

/* hir.dequantize_linear with one scale: (q − zero_point) · scale in single precision. */
RLX_CM_KERNEL void rlx_dequantize_s8_f32(const int8_t* x, int32_t n, float scale, int32_t zero_point, float* y) {
  for (int32_t i = 0; i < n; ++i) y[i] = (float)((int32_t)x[i] - zero_point) * scale;
}

#endif /* RLX_CM_H */
