#!/usr/bin/env bash
# A device of the vulkan kernels end to end — vulkan (issue 23's CI acceptance), opengl, gpu
# (OpenCL) or directx (HLSL; issue 24), on whatever driver the environment gives (lavapipe / llvmpipe / PoCL in CI): greedy ids of the tiny Qwen3 and Qwen3-MoE fixtures (f32) equal to the
# PyTorch reference's, sentence embeddings equal to the cpu device's, and short MLP and CNN training runs
# that end where the cpu's do.
set -u
RLX=$1
FIX=$2          # tests/fixtures
DEV=${3:-vulkan}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$RLX" devices 2>/dev/null | grep -qE "^$DEV +yes"; then
  echo "SKIP: the $DEV device is unavailable here:"; "$RLX" devices 2>&1 | grep -E "^$DEV"
  exit 0
fi
fail=0
py() { /usr/bin/python3 -c "$@"; }
# 1. greedy ids (a dense model and a mixture of experts: routing's topk, expert_matmul)
for f in qwen3_tiny qwen3_moe_tiny; do
  m=$FIX/qwen3/$f
  ids=$(py "import json;print(','.join(map(str,json.load(open('$m/expected.json'))['prompt_ids'])))")
  want=$(py "import json;print(','.join(map(str,json.load(open('$m/expected.json'))['greedy'][:24])))")
  "$RLX" generate --model "$m" --prompt-ids "$ids" --max-tokens 24 --ignore-eos --temperature 0 --device $DEV --json >"$tmp/gen.json" 2>"$tmp/gen.err" || {
    echo "FAIL: generate $f on $DEV"; cat "$tmp/gen.err"; exit 1; }
  got=$(py "import json;print(','.join(map(str,json.loads(open('$tmp/gen.json').read().strip().splitlines()[-1])['ids'])))")
  if [ "$got" = "$want" ]; then echo "ok: $f greedy ids on $DEV equal the reference's (24 tokens)"
  else echo "FAIL: $f greedy ids on $DEV: $got, the reference's: $want"; fail=1; fi
done
# 2. embeddings
for d in cpu $DEV; do
  "$RLX" embed --model "$FIX/bert/st_mean" --text "the quick brown fox" --text "jumps over the lazy dog" --device $d --json >"$tmp/emb_$d.json" || {
    echo "FAIL: embed on $d"; exit 1; }
done
py "
import json, sys
a = json.load(open('$tmp/emb_cpu.json'))['embeddings']; b = json.load(open('$tmp/emb_$DEV.json'))['embeddings']
err = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))
print(('ok' if err <= 1e-5 else 'FAIL') + f': st_mean embeddings, $DEV vs cpu, max |diff| {err:.2e} (tolerance 1e-5)')
sys.exit(err > 1e-5)" || fail=1
# 3. training
DATA=/usr/share/datasets/fashion-mnist
# same_training LABEL WHAT ARGS…: one epoch on cpu and on $DEV ends at the same test loss
# (1e-3) and accuracy (2e-3)
same_training() {
  local label=$1 what=$2
  shift 2
  for d in cpu $DEV; do
    "$RLX" train mnist --epochs 1 "$@" --device $d --json >"$tmp/${label}_$d.json" || { echo "FAIL: $label training on $d"; exit 1; }
  done
  py "
import json, sys
a = json.loads(open('$tmp/${label}_cpu.json').read().strip().splitlines()[-1]); b = json.loads(open('$tmp/${label}_$DEV.json').read().strip().splitlines()[-1])
dl = abs(a['test_loss'] - b['test_loss']); da = abs(a['test_accuracy'] - b['test_accuracy'])
ok = dl <= 1e-3 and da <= 2e-3
print(('ok' if ok else 'FAIL') + f\": $what: test loss {b['test_loss']:.6f} on $DEV, {a['test_loss']:.6f} on cpu; accuracy {b['test_accuracy']} vs {a['test_accuracy']}\")
sys.exit(not ok)" || fail=1
}
if [ -e "$DATA/train-images-idx3-ubyte.gz" ]; then
  same_training mlp "MLP training, 1 epoch of 2048 images" --limit 2048 --batch 128 --seed 3
  # the small CNN: convolutions forward and in the gradients
  same_training cnn "CNN training, 1 epoch of 600 images" --model cnn --hidden 4,8 --batch 50 --lr 0.005 --limit 600 --seed 2
else
  echo "SKIP (training): $DATA is missing"
fi
exit $fail
