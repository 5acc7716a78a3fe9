/* main.c — the test runner of an exported RLX model under QEMU. It reads rlx_input.bin (the
 * inputs of one inference after another, each input's bytes in order) through semihosting,
 * runs the model on each, and writes the outputs the same way to rlx_output.bin; the host
 * compares those bytes with its own run. Built with -DRLX_BENCH_REPEAT=N it runs the first
 * inference N times and writes nothing: two such builds, counted by QEMU, give the instructions
 * of one inference. */
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "rlx_cm.h"

#ifndef RLX_BENCH_REPEAT
extern uint32_t __stack_limit[];

#define RLX_PAINT 0xA5A5A5A5u

static inline __attribute__((always_inline)) uint32_t stack_pointer(void) {
  uint32_t sp;
  __asm volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

/* Fills the unused stack below `sp` with a pattern; what the model overwrites is its stack use. */
static void __attribute__((noinline)) paint_below(uint32_t sp) {
  for (volatile uint32_t* p = __stack_limit; (uintptr_t)p + 32 < sp; ++p) *p = RLX_PAINT;
}

static uint32_t stack_used_below(uint32_t sp) {
  const uint32_t* p = __stack_limit;
  while ((uintptr_t)p < sp && *p == RLX_PAINT) ++p;
  return sp - (uint32_t)(uintptr_t)p;
}
#endif

static int read_inputs(FILE* in) {
  for (int i = 0; i < RLX_MODEL_INPUTS; ++i) {
    size_t got = fread(rlx_model_input(i), 1, rlx_input_bytes[i], in);
    if (got == 0 && i == 0 && feof(in)) return 0;
    if (got != rlx_input_bytes[i]) {
      printf("rlx: rlx_input.bin ends inside input %d (%s): %u of %u bytes\n", i, rlx_input_names[i], (unsigned)got, (unsigned)rlx_input_bytes[i]);
      return -1;
    }
  }
  return 1;
}

int main(void) {
  FILE* in = fopen("rlx_input.bin", "rb");
  if (!in) {
    printf("rlx: cannot open rlx_input.bin (run from the directory that has it)\n");
    return 2;
  }
#ifdef RLX_BENCH_REPEAT
  if (read_inputs(in) != 1) return 2;
  for (int r = 0; r < RLX_BENCH_REPEAT; ++r) rlx_model_run();
  printf("rlx: %d runs of one inference\n", RLX_BENCH_REPEAT);
  return 0;
#else
  FILE* out = fopen("rlx_output.bin", "wb");
  if (!out) {
    printf("rlx: cannot create rlx_output.bin\n");
    return 2;
  }
  long count = 0;
  uint32_t stack = 0;
  for (;;) {
    int r = read_inputs(in);
    if (r < 0) return 2;
    if (r == 0) break;
    if (count == 0) {
      /* the model's stack: painted before the first run, measured after it */
      uint32_t sp = stack_pointer();
      paint_below(sp);
      rlx_model_run();
      stack = stack_used_below(sp);
    } else {
      rlx_model_run();
    }
    for (int i = 0; i < RLX_MODEL_OUTPUTS; ++i)
      if (fwrite(rlx_model_output(i), 1, rlx_output_bytes[i], out) != rlx_output_bytes[i]) {
        printf("rlx: cannot write rlx_output.bin\n");
        return 2;
      }
    ++count;
  }
  fclose(out);
  printf("rlx: %ld inferences of %s on %s (%s kernels); arena %u bytes, stack %u bytes\n", count, RLX_MODEL_NAME, RLX_CORE, RLX_CM_ISA, (unsigned)RLX_ARENA_BYTES,
         (unsigned)stack);
  return 0;
#endif
}
