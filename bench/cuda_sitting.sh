#!/usr/bin/env bash
# One sitting on an NVIDIA GPU: the cuda device's acceptance checks, then the benchmarks with a
# second build beside the first (A/B in the same sitting, rounds alternating so drift falls on
# both). Prints a table last; full logs and JSON go to OUT_DIR.
#
#   bench/cuda_sitting.sh NEW_BIN_DIR [OLD_BIN_DIR] [OUT_DIR]
#
# NEW_BIN_DIR holds rlx, test_backend_ops, rlx_cuda_tests and rlx_unit_tests of the build under
# test; OLD_BIN_DIR an rlx to compare with. RLX_SITTING_ROUNDS (default 2) sets the rounds.
set -u
NEW=$1
OLD=${2:-}
OUT=${3:-/tmp/rlx-sitting}
ROUNDS=${RLX_SITTING_ROUNDS:-2}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "(no nvidia-smi)"

echo "== acceptance"
"$NEW/test_backend_ops" --mode test --device cuda >"$OUT/backend_ops.txt" 2>&1
echo "test_backend_ops cuda: $(tail -1 "$OUT/backend_ops.txt")"
grep -E " [1-9][0-9]* failed" "$OUT/backend_ops.txt" | head -20
"$NEW/rlx_cuda_tests" --gtest_brief=1 >"$OUT/cuda_tests.txt" 2>&1
echo "rlx_cuda_tests: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/cuda_tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/cuda_tests.txt" | head
"$NEW/rlx_unit_tests" --gtest_brief=1 --gtest_filter='CompilePlan.*:Codegen.*:VariantClaims.*' >"$OUT/unit.txt" 2>&1
echo "unit (plan, codegen, variants): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/unit.txt" | tr '\n' ' ')"

echo "== benchmarks"
bench() {  # bench LABEL BIN ARGS… → one JSON line in $OUT/LABEL.jsonl
  local label=$1 bin=$2
  shift 2
  "$bin/rlx" bench "$@" --json 2>>"$OUT/bench.err" | tail -1 >>"$OUT/$label.jsonl"
}
builds="new"
[ -n "$OLD" ] && builds="old new"
for r in $(seq "$ROUNDS"); do
  for b in $builds; do
    dir=$NEW
    [ "$b" = old ] && dir=$OLD
    bench "$b-minilm" "$dir" minilm --device cuda --precision f16 --batch 1,32 --runs 1000
    bench "$b-qwen3-bf16" "$dir" qwen3 --device cuda --precision bf16
    bench "$b-qwen3-q8_0" "$dir" qwen3 --device cuda --precision q8_0
    bench "$b-qwen3-q4_k" "$dir" qwen3 --device cuda --precision q4_k
    bench "$b-mlp" "$dir" mlp-train --device cuda --hidden 128 --batch 1024 --steps 2000
  done
  builds=$(echo "$builds" | awk '{for (i = NF; i > 0; --i) printf "%s%s", $i, (i > 1 ? " " : "")}')  # alternate the order
done

python3 "$(dirname "$0")/ab_table.py" "$OUT"
