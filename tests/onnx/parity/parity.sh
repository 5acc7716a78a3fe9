#!/usr/bin/env bash
# `make onnx-parity`: torchvision resnet18/mobilenet_v2/squeezenet (random weights) and a small
# BERT exported by Debian's PyTorch, and a BERT layer of com.microsoft contrib ops, run by
# `rlx run` and by onnxruntime-node on the same inputs; every output must agree within 1e-4 relative error. Models and inputs are generated
# here, never checked in.
# usage: parity.sh RLX_BIN WORK_DIR [NPM_DIR]   (exit 77 = skipped: a reference is missing)
set -euo pipefail
RLX=$1
WORK=$2
NPM=${3:-$HOME/.cache/rlx-npm}
HERE=$(cd "$(dirname "$0")" && pwd)
ORT_NODE=$NPM/node_modules/onnxruntime-node
if ! /usr/bin/python3 -c "import torch, torchvision, numpy" 2>/dev/null; then
  echo "onnx-parity: skipped: needs /usr/bin/python3 with python3-torch python3-torchvision (make setup installs them)"; exit 77
fi
if ! command -v node >/dev/null || [ ! -f "$ORT_NODE/package.json" ]; then
  echo "onnx-parity: skipped: needs node and onnxruntime-node in $NPM (ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix $NPM onnxruntime-node)"; exit 77
fi
mkdir -p "$WORK"
OMP_NUM_THREADS=2 /usr/bin/python3 "$HERE/gen_models.py" "$WORK"
status=0
run_pair() {  # NAME INPUT_ARGS…
  local name=$1; shift
  local ort_args=() rlx_args=()
  for a in "$@"; do ort_args+=("$a"); rlx_args+=(--input "$a"); done
  rm -rf "$WORK/ort_$name" "$WORK/rlx_$name"
  ORT_NODE=$ORT_NODE node "$HERE/../../../tools/rlx/ort_run.js" "$WORK/$name.onnx" "$WORK/ort_$name" "${ort_args[@]}" >/dev/null
  local t0=$(date +%s.%N)
  "$RLX" run "$WORK/$name.onnx" "${rlx_args[@]}" --output "$WORK/rlx_$name" --device "${RLX_DEVICE:-cpu}" >/dev/null
  local t1=$(date +%s.%N)
  printf "%s: rlx run took %.1f s\n" "$name" "$(echo "$t1 - $t0" | bc)"
  /usr/bin/python3 "$HERE/compare.py" "$WORK/ort_$name" "$WORK/rlx_$name" 1e-4 --label="$name" || status=1
}
for m in resnet18 mobilenet_v2 squeezenet; do run_pair "$m" "input=$WORK/$m.input.npy"; done
run_pair bert "input_ids=$WORK/bert.input_ids.npy" "attention_mask=$WORK/bert.attention_mask.npy"
run_pair contrib "input_ids=$WORK/contrib.input_ids.npy" "segment_ids=$WORK/contrib.segment_ids.npy" "mask=$WORK/contrib.mask.npy"
# The exports keep dynamic batch (and sequence) dims: they also compile without concrete inputs.
for m in resnet18 bert; do
  if "$RLX" compile "$WORK/$m.onnx" --report >/dev/null; then echo "$m: compiles with symbolic dims"; else echo "$m: FAIL rlx compile with symbolic dims"; status=1; fi
done
[ $status = 0 ] && echo "onnx-parity: every output matches onnxruntime-node within 1e-4" || echo "onnx-parity: FAILED"
exit $status
