#!/bin/sh
# icount.sh — guest instructions per inference of the model, per kernel, in the two builds (the
# core's DSP/MVE kernels and the plain-C baseline), counted by insn_count.so under QEMU. Each build
# runs one inference once and eleven times; the difference over ten is one inference, free of
# start-up and I/O. Called by `make icount` with CC, CFLAGS, SRC, LDFLAGS, NM, QEMU and BOARD set.
set -e
for v in dsp plain; do
  flag=
  [ "$v" = plain ] && flag=-DRLX_CM_PLAIN
  for r in 1 11; do
    $CC $CFLAGS $flag -DRLX_BENCH_REPEAT=$r $SRC $LDFLAGS -o bench_${v}_$r.elf
    $QEMU $BOARD -plugin ./insn_count.so,outfile=profile_${v}_$r.txt -kernel bench_${v}_$r.elf > /dev/null
    # per function: the blocks starting inside it (nm: address size type name; Thumb bit cleared)
    $NM -S --defined-only bench_${v}_$r.elf | awk -v prof=profile_${v}_$r.txt '
      function hex(s,   i, x) { x = 0; s = tolower(s); for (i = 1; i <= length(s); i++) x = x * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return x }
      $3 ~ /^[tTwW]$/ && NF == 4 { a = hex($1); a -= a % 2; lo[n] = a; hi[n] = a + hex($2); sub(/\..*/, "", $4); name[n++] = $4 }
      END {
        while ((getline line < prof) > 0) {
          split(line, f, " "); pc = hex(f[1]); c = f[2] * f[3]; who = "other"
          for (i = 0; i < n; i++) if (pc >= lo[i] && pc < hi[i]) { who = name[i]; break }
          sum[who] += c
        }
        for (w in sum) print w, sum[w]
      }' > funcs_${v}_$r.txt
  done
done
# one inference = (11 runs - 1 run) / 10, per function and build
awk '
  FNR == 1 { file++ }  # funcs files are never empty: main runs in every build
  { k = $1; v[file, k] = $2; keys[k] = 1 }
  END {
    printf "%-24s %12s %12s %8s\n", "per inference", "dsp/mve", "plain C", "ratio"
    for (k in keys) {
      d = (v[2, k] - v[1, k]) / 10; p = (v[4, k] - v[3, k]) / 10
      if (d < 1 && p < 1) continue
      printf "%-24s %12d %12d %8s\n", k, d, p, (p > 0 ? sprintf("%.3f", d / p) : "-")
      td += d; tp += p
      # the int8 kernels (and the library copies they call); not the float quantize/dequantize
      if ((k ~ /^rlx_/ && k !~ /quantize|rlx_model_/) || k == "memcpy" || k == "memset") { kd += d; kp += p }
    }
    printf "%-24s %12d %12d %8.3f\n", "int8 kernels", kd, kp, (kp > 0 ? kd / kp : 0)
    printf "%-24s %12d %12d %8.3f\n", "whole inference", td, tp, (tp > 0 ? td / tp : 0)
    printf "{\"kernels_dsp\":%d,\"kernels_plain\":%d,\"total_dsp\":%d,\"total_plain\":%d}\n", kd, kp, td, tp > "icount.json"
  }' funcs_dsp_1.txt funcs_dsp_11.txt funcs_plain_1.txt funcs_plain_11.txt
