#!/usr/bin/env bash
# `rlx quantize CHECKPOINT --to int8|int4` (issue #25): a classifier trained by `rlx train mnist`
# becomes a static int8 graph, or int4 weights in groups of 32, within a point of its float
# accuracy, written as .rlx that compiles again; a model trained on an int4 grid (--qat) exports
# as exactly the model it was trained as; a quantization that ruins it (the grid clipped at the
# median) is refused — exit 3 and nothing written.
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
"$RLX" train mnist --epochs 1 --limit 20000 --json --save "$tmp/mlp.safetensors" >/dev/null || { echo "FAIL: training the mlp failed"; exit 1; }
"$RLX" train mnist --model cnn --hidden 4,8 --epochs 1 --limit 6000 --batch 50 --lr 0.005 --json --save "$tmp/cnn.safetensors" >/dev/null ||
  { echo "FAIL: training the cnn failed"; exit 1; }
for m in mlp cnn; do
  for obs in minmax mse; do
    "$RLX" quantize "$tmp/$m.safetensors" --to int8 --observer $obs --calib 1000 --gate accuracy=1 -o "$tmp/$m.rlx" --json >"$tmp/$m.json"
    rc=$?
    cat "$tmp/$m.json"
    [ $rc = 0 ] || { echo "FAIL: $m ($obs) exited $rc"; fail=1; continue; }
    grep -q '"passed":true' "$tmp/$m.json" || { echo "FAIL: $m ($obs) did not pass its gate"; fail=1; }
    drop=$(grep -oE '"accuracy_drop_points":-?[0-9.]+' "$tmp/$m.json" | cut -d: -f2)
    awk -v d="$drop" 'BEGIN { exit !(d <= 1.0) }' || { echo "FAIL: $m ($obs) loses $drop points"; fail=1; }
    [ -s "$tmp/$m.rlx" ] || { echo "FAIL: $m.rlx was not written"; fail=1; }
    grep -q "hir.requantize" "$tmp/$m.rlx" || { echo "FAIL: $m.rlx has no integer layers"; fail=1; }
    "$RLX" compile "$tmp/$m.rlx" --device cpu >/dev/null || { echo "FAIL: $m.rlx does not compile again"; fail=1; }
  done
done
"$RLX" quantize "$tmp/mlp.safetensors" --to int4 --gate accuracy=1 -o "$tmp/mlp4.rlx" --json >"$tmp/mlp4.json" || { echo "FAIL: int4 of the mlp failed"; fail=1; }
cat "$tmp/mlp4.json"
grep -q '"method":"weight-only int4/g32' "$tmp/mlp4.json" || { echo "FAIL: int4 did not use groups of 32"; fail=1; }
# both linears stay Q4_0 blocks multiplied packed: 784 → 800 columns (25 blocks of 18 bytes) × 128 rows + 10 × 4 blocks
grep -q '2 of them kept as Q4_0 blocks' "$tmp/mlp4.json" || { echo "FAIL: the int4 linears were not kept packed"; fail=1; }
[ "$(grep -c 'hir.dequant_matmul.*type=q4_0' "$tmp/mlp4.rlx")" = 2 ] || { echo "FAIL: mlp4.rlx does not multiply two Q4_0 weights"; fail=1; }
grep -q '"quantized_bytes":58872,' "$tmp/mlp4.json" || { echo "FAIL: the int4 model does not store 128·25·18 + 10·4·18 block bytes and f32 biases"; fail=1; }
"$RLX" compile "$tmp/mlp4.rlx" --device cpu >/dev/null || { echo "FAIL: mlp4.rlx does not compile again"; fail=1; }
"$RLX" train mnist --epochs 1 --limit 20000 --qat int4/g128 --json --save "$tmp/qat.safetensors" >/dev/null || { echo "FAIL: QAT training failed"; exit 1; }
"$RLX" quantize "$tmp/qat.safetensors" --to int4 -o "$tmp/qat.rlx" --json >"$tmp/qat.json" || { echo "FAIL: exporting the QAT model failed"; fail=1; }
cat "$tmp/qat.json"
grep -q '"qat":"int4/g128"' "$tmp/qat.json" || { echo "FAIL: the checkpoint does not remember its QAT grid"; fail=1; }
grep -q '"agreement":1.000000' "$tmp/qat.json" || { echo "FAIL: the exported int4 model does not predict what the QAT model predicts"; fail=1; }
# asymmetric grids (min to max, ggml's Q4_1): after training and trained on
"$RLX" quantize "$tmp/mlp.safetensors" --to int4 --asymmetric --gate accuracy=1 -o "$tmp/mlp4a.rlx" --json >"$tmp/mlp4a.json" || { echo "FAIL: asymmetric int4 of the mlp failed"; fail=1; }
cat "$tmp/mlp4a.json"
grep -q '"method":"weight-only int4/g32/asym (2 weights, 2 of them kept as Q4_1 blocks' "$tmp/mlp4a.json" || { echo "FAIL: asymmetric int4 did not keep Q4_1 blocks"; fail=1; }
[ "$(grep -c 'hir.dequant_matmul.*type=q4_1' "$tmp/mlp4a.rlx")" = 2 ] || { echo "FAIL: mlp4a.rlx does not multiply two Q4_1 weights"; fail=1; }
"$RLX" train mnist --epochs 1 --limit 20000 --qat int4/g128/asym --json --save "$tmp/qata.safetensors" >/dev/null || { echo "FAIL: asymmetric QAT training failed"; exit 1; }
"$RLX" quantize "$tmp/qata.safetensors" --to int4 -o "$tmp/qata.rlx" --json >"$tmp/qata.json" || { echo "FAIL: exporting the asymmetric QAT model failed"; fail=1; }
cat "$tmp/qata.json"
grep -q '"agreement":1.000000' "$tmp/qata.json" || { echo "FAIL: the exported asymmetric int4 model does not predict what its QAT model predicts"; fail=1; }
# activation QAT: the int8 export uses the grids learned in training and keeps the trained accuracy
"$RLX" train mnist --epochs 1 --limit 20000 --qat int8 --qat-activations --json --save "$tmp/qatact.safetensors" >/dev/null ||
  { echo "FAIL: activation QAT training failed"; exit 1; }
"$RLX" quantize "$tmp/qatact.safetensors" --to int8 --gate accuracy=1 -o "$tmp/qatact.rlx" --json >"$tmp/qatact.json" || { echo "FAIL: exporting the activation-QAT model failed"; fail=1; }
cat "$tmp/qatact.json"
grep -q '"qat_activations":true' "$tmp/qatact.json" || { echo "FAIL: the checkpoint does not remember its activation QAT"; fail=1; }
grep -q 'activation grids learned in training' "$tmp/qatact.json" || { echo "FAIL: the export calibrated instead of using the learned grids"; fail=1; }
agree=$(grep -oE '"agreement":[0-9.]+' "$tmp/qatact.json" | cut -d: -f2)
awk -v a="$agree" 'BEGIN { exit !(a >= 0.97) }' || { echo "FAIL: the int8 export agrees with the activation-QAT model on only $agree"; fail=1; }
"$RLX" quantize "$tmp/mlp.safetensors" --to int8 --observer percentile --percentile 50.5 --calib 500 --gate accuracy=1 -o "$tmp/bad.rlx" >"$tmp/bad.txt" 2>&1
rc=$?
cat "$tmp/bad.txt"
[ $rc = 3 ] || { echo "FAIL: a ruined quantization exited $rc, not 3"; fail=1; }
[ -e "$tmp/bad.rlx" ] && { echo "FAIL: a refused quantization was written"; fail=1; }
grep -q "points below the float model" "$tmp/bad.txt" || { echo "FAIL: the refusal does not say why"; fail=1; }
"$RLX" quantize "$tmp/mlp.safetensors" --to int8 --observer median -o "$tmp/x.rlx" >/dev/null 2>"$tmp/err"; [ $? = 2 ] || { echo "FAIL: an unknown observer must exit 2 (invalid argument)"; fail=1; }
grep -q "minmax, percentile, mse or entropy" "$tmp/err" || { echo "FAIL: the unknown-observer error does not list the choices"; fail=1; }
exit $fail
