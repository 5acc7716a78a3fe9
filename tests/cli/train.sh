#!/usr/bin/env bash
# `rlx train mnist` end to end on Fashion-MNIST (issue #8): ≥ 0.85 test accuracy in 3 epochs,
# a PNG plot and a safetensors checkpoint that reloads to the same accuracy.
set -u
RLX=$1
DATA=/usr/share/datasets/fashion-mnist
if [ ! -e "$DATA/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: $DATA is missing (apt-get install dataset-fashion-mnist; make setup installs it)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$RLX" train mnist --epochs 3 --json --plot "$tmp/curves.png" --save "$tmp/ckpt.safetensors" >"$tmp/out.json" || { echo "FAIL: training failed"; exit 1; }
cat "$tmp/out.json"
acc=$(grep -oE '"test_accuracy":[0-9.]+' "$tmp/out.json" | head -1 | cut -d: -f2)
awk -v a="$acc" 'BEGIN { exit !(a >= 0.85) }' || { echo "FAIL: test accuracy $acc < 0.85"; fail=1; }
head -c 8 "$tmp/curves.png" | od -An -c | grep -q 'P   N   G' || { echo "FAIL: the plot is not a PNG"; fail=1; }
"$RLX" train mnist --epochs 0 --load "$tmp/ckpt.safetensors" --json >"$tmp/eval.json" || { echo "FAIL: evaluating the checkpoint failed"; exit 1; }
acc2=$(grep -oE '"test_accuracy":[0-9.]+' "$tmp/eval.json" | head -1 | cut -d: -f2)
[ "$acc" = "$acc2" ] || { echo "FAIL: the checkpoint evaluates to $acc2, training reported $acc"; fail=1; }
"$RLX" train mnist --epochs 1 --model cnn --hidden 4,8 --batch 50 --lr 0.005 --limit 3000 --json >"$tmp/cnn.json" || { echo "FAIL: cnn training failed"; fail=1; }
cat "$tmp/cnn.json"
acc3=$(grep -oE '"test_accuracy":[0-9.]+' "$tmp/cnn.json" | head -1 | cut -d: -f2)
awk -v a="$acc3" 'BEGIN { exit !(a >= 0.65) }' || { echo "FAIL: the small cnn reaches only $acc3 after one epoch on 3000 images"; fail=1; }
"$RLX" train mnist --epochs 1 --limit 10000 --precision amp --json >"$tmp/amp.json" || { echo "FAIL: amp training failed"; fail=1; }
cat "$tmp/amp.json"
grep -q '"precision":"amp"' "$tmp/amp.json" || { echo "FAIL: the amp run does not say its precision"; fail=1; }
acc4=$(grep -oE '"test_accuracy":[0-9.]+' "$tmp/amp.json" | head -1 | cut -d: -f2)
awk -v a="$acc4" 'BEGIN { exit !(a >= 0.70) }' || { echo "FAIL: amp training reaches only $acc4 after one epoch on 10000 images"; fail=1; }
# amp-f16: f16 products with the loss scaled dynamically; a first scale of 2^40 overflows f16, so
# the first steps are skipped (and said to be) until the scale fits
"$RLX" train mnist --epochs 1 --limit 8000 --precision amp-f16 --loss-scale 1099511627776 --json >"$tmp/f16.json" || { echo "FAIL: amp-f16 training failed"; fail=1; }
cat "$tmp/f16.json"
skipped=$(grep -oE '"skipped_steps":[0-9]+' "$tmp/f16.json" | cut -d: -f2)
[ -n "$skipped" ] && [ "$skipped" -ge 10 ] && [ "$skipped" -lt 32 ] || { echo "FAIL: amp-f16 from 2^40 should skip 10–31 overflowing steps (of 63), skipped '$skipped'"; fail=1; }
acc5=$(grep -oE '"test_accuracy":[0-9.]+' "$tmp/f16.json" | head -1 | cut -d: -f2)
awk -v a="$acc5" 'BEGIN { exit !(a >= 0.65) }' || { echo "FAIL: amp-f16 training reaches only $acc5 after one epoch on 8000 images"; fail=1; }
"$RLX" train mnist --epochs 1 --precision fp4 >/dev/null 2>"$tmp/err"; [ $? = 2 ] || { echo "FAIL: an unknown precision must exit 2"; fail=1; }
grep -q "amp-f16, int8 or int4" "$tmp/err" || { echo "FAIL: the unknown-precision error does not list the choices"; fail=1; }
"$RLX" train mnist --data /nonexistent --epochs 1 >/dev/null 2>"$tmp/err"; [ $? = 1 ] || { echo "FAIL: a missing dataset must exit 1"; fail=1; }
grep -q "dataset-fashion-mnist" "$tmp/err" || { echo "FAIL: the missing-dataset error does not say how to get one"; fail=1; }
exit $fail
