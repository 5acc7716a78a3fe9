#!/usr/bin/env bash
# One sitting of the vulkan device on a GPU (issue 23's table): its op suite and parity checks,
# then each benchmark on vulkan and on the cuda device in the same sitting, and the ratio.
#
#   bench/vulkan_sitting.sh BIN_DIR [OUT_DIR]
#
# BIN_DIR holds rlx, test_backend_ops and rlx_vulkan_tests. Vulkan needs a loader and the GPU's
# ICD (on the H200 machine: VK_ICD_FILENAMES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json);
# RLX_VULKAN_PROFILE=1 adds the time of every kernel.
set -u
B=$1
OUT=${2:-/tmp/rlx-vulkan-sitting}
R=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
"$B/rlx" devices 2>&1 | grep -E "^(cuda|vulkan) "
echo "== acceptance"
"$B/test_backend_ops" --device vulkan >"$OUT/backend_ops.txt" 2>&1
echo "test_backend_ops vulkan: $(tail -1 "$OUT/backend_ops.txt")"
grep FAIL "$OUT/backend_ops.txt" | cut -c1-240 | head
"$B/rlx_vulkan_tests" --gtest_brief=1 2>&1 | grep -E '^\[  (PASSED|FAILED)'
"$R/tests/vulkan/parity.sh" "$B/rlx" "$R/tests/fixtures"
echo "== benchmarks (vulkan, then cuda)"
# a fresh machine's GPU idles at low clocks: the first seconds of work run slower, so warm it
"$B/rlx" bench minilm --batch 32 --seq 128 --precision f16 --device cuda --runs 300 >/dev/null 2>&1
"$B/rlx" bench minilm --batch 32 --seq 128 --precision f16 --device vulkan --runs 100 >/dev/null 2>&1
row() {  # row LABEL ARGS… → the last line of each device's run
  local label=$1
  shift
  for d in vulkan cuda; do
    echo "-- $label on $d: rlx bench $* --device $d"
    "$B/rlx" bench "$@" --device "$d" 2>&1 | tee "$OUT/${label}_$d.txt" | tail -2
  done
}
row qwen3_bf16 qwen3 --precision bf16 --pp 512 --tg 128 --runs 3
row minilm_f16 minilm --batch 32 --seq 128 --precision f16 --runs 50
row minilm_f32 minilm --batch 32 --seq 128 --precision f32 --runs 50
row mlp_train mlp-train --hidden 128 --batch 1024 --steps 200
