#!/usr/bin/env bash
# `rlx export --target cortex-m4|cortex-m7|cortex-m55` (issue #26): the Fashion-MNIST MLP and CNN,
# trained here and quantized by `rlx quantize --to int8`, exported as C, built with
# arm-none-eabi-gcc and run under qemu-system-arm on all 10,000 test images. Every output must be
# bit-identical to the host's int8 graph run by the reference backend; the model's RAM (arena +
# measured stack) must be within 10% of the peak of simultaneously live activations. Prints the
# accuracy, flash, RAM and, per inference, the instructions of the DSP/Helium kernels against the
# plain-C baseline (make icount; reported, not asserted: instruction counts are a benchmark).
set -u
RLX=$1
DATA=/usr/share/datasets/fashion-mnist
PY=/usr/bin/python3
for tool in arm-none-eabi-gcc qemu-system-arm; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is missing (make setup installs gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)"; exit 0; }
done
[ -e "$DATA/t10k-images-idx3-ubyte.gz" ] || { echo "SKIP: $DATA is missing (apt-get install dataset-fashion-mnist)"; exit 0; }
$PY -c "import numpy" 2>/dev/null || { echo "SKIP: numpy is missing under $PY (apt-get install python3-numpy)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
CORES="cortex-m4 cortex-m7 cortex-m55"

# The test set as the models see it (pixels / 255 in f32), for the host and for the boards.
$PY - "$DATA" "$tmp" <<'EOF' || { echo "FAIL: could not read the test set"; exit 1; }
import gzip, sys, numpy as np
d, out = sys.argv[1], sys.argv[2]
im = np.frombuffer(gzip.open(d + '/t10k-images-idx3-ubyte.gz').read()[16:], dtype=np.uint8).reshape(-1, 784)
lab = np.frombuffer(gzip.open(d + '/t10k-labels-idx1-ubyte.gz').read()[8:], dtype=np.uint8)
x = im.astype(np.float32) / np.float32(255)
np.save(out + '/mlp_in.npy', x)
np.save(out + '/cnn_in.npy', x.reshape(-1, 1, 28, 28))
np.save(out + '/labels.npy', lab)
x.tofile(out + '/images.bin')
x[:1].tofile(out + '/one.bin')
EOF

"$RLX" train mnist --hidden 64 --epochs 1 --limit 20000 --json --save "$tmp/mlp.safetensors" >/dev/null || { echo "FAIL: training the mlp failed"; exit 1; }
"$RLX" train mnist --model cnn --hidden 4,8 --epochs 1 --limit 6000 --batch 50 --lr 0.005 --json --save "$tmp/cnn.safetensors" >/dev/null ||
  { echo "FAIL: training the cnn failed"; exit 1; }

printf "%-4s %-11s %-10s %9s %8s %7s %6s %6s %6s %9s %9s %7s\n" model core outputs accuracy flash arena stack peak RAM/peak "kern dsp" "kern C" ratio
for m in mlp cnn; do
  "$RLX" quantize "$tmp/$m.safetensors" --to int8 --calib 1000 -o "$tmp/$m.rlx" --json >"$tmp/$m.q.json" || { echo "FAIL: quantizing the $m failed"; fail=1; continue; }
  "$RLX" run "$tmp/$m.rlx" --device reference --input images="$tmp/${m}_in.npy" --output "$tmp/ref_$m" >/dev/null ||
    { echo "FAIL: the reference run of $m.rlx failed"; fail=1; continue; }
  for c in $CORES; do
    d="$tmp/${m}_$c"
    "$RLX" export --target $c "$tmp/$m.rlx" -o "$d" >/dev/null || { echo "FAIL: rlx export --target $c $m.rlx failed"; fail=1; continue; }
    (cd "$d" && make -s model.elf model.o >"$d/build.log" 2>&1) || { cat "$d/build.log"; echo "FAIL: building $m for $c failed"; fail=1; continue; }
    grep -q warning "$d/build.log" && { cat "$d/build.log"; echo "FAIL: building $m for $c warns"; fail=1; }
    ln -s "$tmp/images.bin" "$d/rlx_input.bin"
    run=$(cd "$d" && timeout 600 make -s run 2>&1) || { echo "$run"; echo "FAIL: $m on $c did not finish (exit $?)"; fail=1; continue; }
    stack=$(echo "$run" | grep -oE 'stack [0-9]+ bytes' | grep -oE '[0-9]+')
    arena=$(grep -oE '"arena_bytes":[0-9]+' "$d/model.json" | cut -d: -f2)
    peak=$(grep -oE '"peak_live_bytes":[0-9]+' "$d/model.json" | cut -d: -f2)
    flash=$(arm-none-eabi-size "$d/model.o" | awk 'NR == 2 { print $1 + $2 }')
    verdict=$($PY - "$tmp/ref_$m/output0.npy" "$d/rlx_output.bin" "$tmp/labels.npy" <<'EOF'
import sys, os, numpy as np
ref = np.load(sys.argv[1]); lab = np.load(sys.argv[3])
raw = open(sys.argv[2], 'rb').read() if os.path.exists(sys.argv[2]) else b''
if len(raw) != ref.nbytes:
    print('short', 0.0); sys.exit()
got = np.frombuffer(raw, dtype=np.float32).reshape(ref.shape)
same = raw == ref.tobytes()
print('bit-exact' if same else 'DIFFER:%d' % int((got.view(np.uint32) != ref.view(np.uint32)).any(1).sum()), '%.4f' % (got.argmax(1) == lab).mean())
EOF
)
    outputs=${verdict% *}
    acc=${verdict#* }
    [ "$outputs" = bit-exact ] || { echo "FAIL: $m on $c: the outputs are not the host's ($outputs of 10000 rows differ)"; fail=1; }
    ram=$((arena + stack))
    awk -v r=$ram -v p=$peak 'BEGIN { exit !(r <= 1.10 * p) }' || { echo "FAIL: $m on $c: RAM $ram bytes (arena $arena + stack $stack) is more than 10% over the live peak $peak"; fail=1; }
    # instructions per inference of the kernels (one image; plain-C build beside the core's)
    rm -f "$d/rlx_input.bin" && cp "$tmp/one.bin" "$d/rlx_input.bin"
    kd=-; kp=-; ratio=-
    if (cd "$d" && make -s icount >"$d/icount.log" 2>&1); then
      kd=$(grep -oE '"kernels_dsp":[0-9]+' "$d/icount.json" | cut -d: -f2)
      kp=$(grep -oE '"kernels_plain":[0-9]+' "$d/icount.json" | cut -d: -f2)
      ratio=$(awk -v a=$kd -v b=$kp 'BEGIN { printf "%.3f", a / b }')
    else
      cat "$d/icount.log"
      echo "FAIL: make icount failed for $m on $c"
      fail=1
    fi
    printf "%-4s %-11s %-10s %9s %8s %7s %6s %6s %6.3f %9s %9s %7s\n" $m $c "$outputs" "$acc" "$flash" "$arena" "$stack" "$peak" \
      "$(awk -v r=$ram -v p=$peak 'BEGIN { print r / p }')" "$kd" "$kp" "$ratio"
  done
  echo "$m: host int8 accuracy $(grep -oE '"quantized_accuracy":[0-9.]+' "$tmp/$m.q.json" | cut -d: -f2) (float $(grep -oE '"float_accuracy":[0-9.]+' "$tmp/$m.q.json" | cut -d: -f2))"
done

# An ONNX CNN in QDQ form (as onnxruntime's static quantization writes it): the export folds its
# layers into integer layers; the board equals the folded graph (graph.rlx, run by the reference
# backend) bit for bit, and the folded graph the float QDQ model within one quantization step.
# The second model writes its convolutions in QOperator form (QLinearConv, MaxPool on int8); the
# third adds a residual block (a quantized Add) and a quantized Softmax: the integer add and
# softmax kernels, on the DSP cores and on Helium.
if $PY -c "import onnx" 2>/dev/null; then
  $PY -c "import numpy as np; np.save('$tmp/qdq_in.npy', np.load('$tmp/cnn_in.npy')[:2000]); np.load('$tmp/cnn_in.npy')[:2000].tofile('$tmp/qdq_in.bin')"
  for spec in "qdq cortex-m4 logits 3" "qop cortex-m4 logits 3" "qdq_rs cortex-m7 probs 4/1/1" "qdq_rs cortex-m55 probs 4/1/1"; do
    set -- $spec
    m=$1 c=$2 out=$3 folds=$4
    [ -e "$tmp/$m.onnx" ] || $PY "$(dirname "$0")/qdq_cnn.py" "$tmp/$m.onnx" $([ $m = qdq_rs ] && echo --residual-softmax) $([ $m = qop ] && echo --qoperator) || { echo "FAIL: writing the $m model failed"; fail=1; continue; }
    d="$tmp/${m}_$c"
    "$RLX" export --target $c "$tmp/$m.onnx" -o "$d" >"$tmp/$m.txt" || { cat "$tmp/$m.txt"; echo "FAIL: rlx export of $m for $c failed"; fail=1; continue; }
    cat "$tmp/$m.txt"
    layers=${folds%%/*}
    grep -q "folded $layers QDQ layers" "$tmp/$m.txt" || { echo "FAIL: the QDQ layers of $m were not folded"; fail=1; }
    [ $m = qdq_rs ] && { grep -q "1 adds and 1 softmaxes" "$tmp/$m.txt" || { echo "FAIL: the add and softmax of $m were not folded"; fail=1; }; }
    [ -d "$tmp/${m}_float" ] || "$RLX" run "$tmp/$m.onnx" --device reference --input images="$tmp/qdq_in.npy" --output "$tmp/${m}_float" >/dev/null ||
      { echo "FAIL: the float QDQ run of $m failed"; fail=1; continue; }
    "$RLX" run "$d/graph.rlx" --device reference --input images="$tmp/qdq_in.npy" --output "$d/int" >/dev/null || { echo "FAIL: the folded graph's run of $m failed"; fail=1; continue; }
    ln -s "$tmp/qdq_in.bin" "$d/rlx_input.bin"
    (cd "$d" && make -s model.elf >/dev/null 2>&1 && timeout 600 make -s run) || { echo "FAIL: $m did not run on $c"; fail=1; continue; }
    $PY - "$tmp/${m}_float/$out.npy" "$d/int/$out.npy" "$d/rlx_output.bin" "$m on $c" <<'EOF2' || fail=1
import sys, numpy as np
f, i = np.load(sys.argv[1]), np.load(sys.argv[2])
m = np.fromfile(sys.argv[3], dtype=np.float32)
step = np.min(np.diff(np.unique(i.ravel())))
same = m.tobytes() == i.tobytes()
print("%s: %s with the folded graph over %d images; folded vs float QDQ: %.4f of the values identical, max |diff| %.5f (one step %.5f), argmax agreement %.4f"
      % (sys.argv[4], "bit-exact" if same else "DIFFERENT", len(i), (f == i).mean(), np.abs(f - i).max(), step, (f.argmax(1) == i.argmax(1)).mean()))
# the softmax amplifies a logit's one-step difference (p·(1−p)·s_logit): a few probability steps
limit = step * (8 if sys.argv[4].startswith("qdq_rs") else 1) * 1.0001
ok = same and np.abs(f - i).max() <= limit and (f == i).mean() >= 0.99 and (f.argmax(1) == i.argmax(1)).mean() >= 0.99
if not ok:
    print("FAIL: the folded QDQ model is not exact on the board or is further than expected from the float QDQ model")
sys.exit(0 if ok else 1)
EOF2
  done
else
  echo "SKIP (QDQ part): no onnx module under $PY (apt-get install python3-onnx)"
fi

# A graph the kernels cannot take is refused with every offending node named, and nothing written.
"$RLX" export --target cortex-m4 "$(dirname "$0")/float_mlp.rlx" -o "$tmp/bad" >"$tmp/bad.txt" 2>&1
rc=$?
cat "$tmp/bad.txt"
[ $rc != 0 ] || { echo "FAIL: a float graph was exported for cortex-m4"; fail=1; }
grep -q "mir.tanh" "$tmp/bad.txt" && grep -q "mir.dot_general" "$tmp/bad.txt" || { echo "FAIL: the refusal does not name the nodes"; fail=1; }
[ -e "$tmp/bad/model.c" ] && { echo "FAIL: a refused export wrote files"; fail=1; }
exit $fail
