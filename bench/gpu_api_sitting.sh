#!/usr/bin/env bash
# One sitting of the portable GPU APIs on a machine with a GPU (issue 24's table): the opengl
# and directx (HLSL on the GPU's Vulkan) devices' op suites and parity checks, the gpu device's
# (OpenCL) parity checks on whatever ICD the machine has, then MiniLM and Qwen3 on opengl, directx,
# gpu, vulkan and cuda side by side.
#
#   bench/gpu_api_sitting.sh BIN_DIR [OUT_DIR] [acceptance|bench|all]
#
# BIN_DIR holds rlx and test_backend_ops. OpenGL needs the GPU's EGL vendor (on the H200 machine:
# __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json) and
# Vulkan its ICD (VK_ICD_FILENAMES=…/nvidia_icd.json).
set -u
B=$1
OUT=${2:-/tmp/rlx-gpu-api-sitting}
WHAT=${3:-all}
R=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
"$B/rlx" devices 2>&1 | grep -E "^(cuda|vulkan|opengl|directx|gpu) "
if [ "$WHAT" != bench ]; then
  echo "== acceptance"
  for d in opengl directx; do
    "$B/test_backend_ops" --device $d >"$OUT/backend_ops_$d.txt" 2>&1
    echo "test_backend_ops $d: $(tail -1 "$OUT/backend_ops_$d.txt")"
    grep FAIL "$OUT/backend_ops_$d.txt" | cut -c1-240 | head
    "$R/tests/vulkan/parity.sh" "$B/rlx" "$R/tests/fixtures" $d
  done
  "$R/tests/vulkan/parity.sh" "$B/rlx" "$R/tests/fixtures" gpu
fi
[ "$WHAT" = acceptance ] && exit 0
echo "== benchmarks"
# a fresh machine's GPU idles at low clocks: warm it first
"$B/rlx" bench minilm --batch 32 --seq 128 --precision f16 --device cuda --runs 300 >/dev/null 2>&1
# run LABEL DEVICE ARGS… → the last lines of the run
run() {
  local label=$1 d=$2
  shift 2
  echo "-- $label on $d: rlx bench $* --device $d"
  "$B/rlx" bench "$@" --device "$d" 2>&1 | tee "$OUT/${label}_$d.txt" | tail -2
}
for d in opengl directx vulkan cuda; do run minilm_f32 $d minilm --batch 32 --seq 128 --precision f32 --runs 20; done
for d in opengl directx vulkan cuda; do run qwen3_bf16 $d qwen3 --precision bf16 --pp 512 --tg 128 --runs 1; done
# the gpu device runs on the machine's OpenCL (a CPU's PoCL where the GPU has no ICD): fewer tokens
run minilm_f32 gpu minilm --batch 32 --seq 128 --precision f32 --runs 3
run qwen3_bf16 gpu qwen3 --precision bf16 --pp 64 --tg 16 --runs 1
