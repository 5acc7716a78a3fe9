#!/usr/bin/env bash
# Two builds of rlx side by side on the cpu device (A/B in one sitting, the order alternating
# between rounds so drift and neighbours' load fall on both): MiniLM f32 and bf16 (b1, b32),
# Qwen3-0.6B pp512/tg128 in bf16, Q8_0 and Q4_K, MLP training. Then bench/ab_table.py's table.
#
#   bench/cpu_ab.sh OLD_RLX NEW_RLX [OUT_DIR] [ROUNDS]
set -u
OLD=$1
NEW=$2
OUT=${3:-/tmp/rlx-cpu-ab}
ROUNDS=${4:-2}
mkdir -p "$OUT"
rm -f "$OUT"/old-*.jsonl "$OUT"/new-*.jsonl
lscpu | grep -E "Model name|^CPU\(s\)|CPU family" | tr -s ' '
for r in $(seq "$ROUNDS"); do
  order="old new"
  [ $((r % 2)) = 0 ] && order="new old"
  for b in $order; do
    bin=$NEW
    [ "$b" = old ] && bin=$OLD
    "$bin" bench minilm --batch 1,32 --json 2>/dev/null | tail -1 >>"$OUT/$b-minilm-f32.jsonl"
    "$bin" bench minilm --batch 1,32 --precision bf16 --json 2>/dev/null | tail -1 >>"$OUT/$b-minilm-bf16.jsonl"
    for p in bf16 q8_0 q4_k; do
      "$bin" bench qwen3 --precision $p --runs 3 --json 2>/dev/null | tail -1 >>"$OUT/$b-qwen3-$p.jsonl"
    done
    "$bin" bench mlp-train --json 2>/dev/null | tail -1 >>"$OUT/$b-mlp.jsonl"
  done
done
python3 "$(dirname "$0")/ab_table.py" "$OUT"
