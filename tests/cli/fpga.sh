#!/usr/bin/env bash
# `rlx export --target fpga:ice40-up5k` (issue #27): the Fashion-MNIST MLP (784-64-10), trained here
# and quantized by `rlx quantize --to int8`, exported as SystemVerilog, simulated by its Verilator
# testbench on all 10,000 test images — every output must be bit-identical to the host's int8 graph
# run by the reference backend — and taken to a bitstream for the iCE40 UP5K (yosys synth_ice40,
# nextpnr-ice40, icepack), which must meet 24 MHz with one inference in at most 1 ms at that clock.
# Prints accuracy, cycles per inference, LUT/EBR/SPRAM/DSP use and Fmax. Then the same MLP on the
# generic part's wider arrays; a QDQ CNN (convolutions, max pooling) on the UP5K, bit-exact and
# taken to a bitstream; the 16-64-32-32-5 jet tagger in the generic part's fully parallel form,
# bit-exact (with --timing, its estimated latency at most 150 ns).
#
#   tests/cli/fpga.sh RLX [--timing]     (--timing: the jet tagger's Fmax estimate too, ~15 min; make fpga-timing)
set -u
RLX=$1
TIMING=${2:-}
DATA=/usr/share/datasets/fashion-mnist
PY=/usr/bin/python3
for tool in verilator yosys nextpnr-ice40 icepack; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is missing (make setup installs verilator yosys nextpnr-ice40 fpga-icestorm)"; exit 0; }
done
[ -e "$DATA/t10k-images-idx3-ubyte.gz" ] || { echo "SKIP: $DATA is missing (apt-get install dataset-fashion-mnist)"; exit 0; }
$PY -c "import numpy" 2>/dev/null || { echo "SKIP: numpy is missing under $PY (apt-get install python3-numpy)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# bit_exact WHAT NOUN REF_DIR OUT.bin: the simulated outputs against the host's run of the folded graph
bit_exact() {
  $PY - "$1" "$2" "$3" "$4" <<'PYEOF'
import os, sys, numpy as np
what, noun, ref_dir, out = sys.argv[1:5]
ref = np.load(os.path.join(ref_dir, sorted(os.listdir(ref_dir))[0]))
got = open(out, 'rb').read() if os.path.exists(out) else b''
print(what, "in Verilator:", "bit-exact over %d %s" % (len(ref), noun) if got == ref.tobytes() else "DIFFERENT")
sys.exit(0 if got == ref.tobytes() else 1)
PYEOF
}

$PY - "$DATA" "$tmp" <<'PYEOF' || { echo "FAIL: could not read the test set"; exit 1; }
import gzip, sys, numpy as np
d, out = sys.argv[1], sys.argv[2]
im = np.frombuffer(gzip.open(d + '/t10k-images-idx3-ubyte.gz').read()[16:], dtype=np.uint8).reshape(-1, 784)
lab = np.frombuffer(gzip.open(d + '/t10k-labels-idx1-ubyte.gz').read()[8:], dtype=np.uint8)
x = im.astype(np.float32) / np.float32(255)
np.save(out + '/images.npy', x)
np.save(out + '/labels.npy', lab)
x.tofile(out + '/images.bin')
PYEOF

"$RLX" train mnist --hidden 64 --epochs 1 --limit 20000 --json --save "$tmp/mlp.safetensors" >/dev/null || { echo "FAIL: training the mlp failed"; exit 1; }
"$RLX" quantize "$tmp/mlp.safetensors" --to int8 --calib 1000 -o "$tmp/mlp.rlx" --json >"$tmp/q.json" || { echo "FAIL: quantizing the mlp failed"; exit 1; }
"$RLX" run "$tmp/mlp.rlx" --device reference --input images="$tmp/images.npy" --output "$tmp/ref" >/dev/null || { echo "FAIL: the reference run failed"; exit 1; }
d="$tmp/up5k"
"$RLX" export --target fpga:ice40-up5k "$tmp/mlp.rlx" -o "$d" || { echo "FAIL: rlx export --target fpga:ice40-up5k failed"; exit 1; }
(cd "$d" && make -s sim) || { cat "$d/verilator.log"; echo "FAIL: verilator could not build the testbench"; exit 1; }
ln -s "$tmp/images.bin" "$d/rlx_input.bin"
(cd "$d" && timeout 900 make -s run) || { echo "FAIL: the simulation failed"; fail=1; }
verdict=$($PY - "$tmp/ref/output0.npy" "$d/rlx_output.bin" "$tmp/labels.npy" <<'PYEOF'
import sys, os, numpy as np
ref = np.load(sys.argv[1]); lab = np.load(sys.argv[3])
raw = open(sys.argv[2], 'rb').read() if os.path.exists(sys.argv[2]) else b''
if len(raw) != ref.nbytes:
    print('short', 0.0); sys.exit()
got = np.frombuffer(raw, dtype=np.float32).reshape(ref.shape)
print('bit-exact' if raw == ref.tobytes() else 'DIFFER:%d' % int((got.view(np.uint32) != ref.view(np.uint32)).any(1).sum()), '%.4f' % (got.argmax(1) == lab).mean())
PYEOF
)
outputs=${verdict% *}
acc=${verdict#* }
[ "$outputs" = bit-exact ] || { echo "FAIL: the simulated outputs are not the host's ($outputs of 10000 rows differ)"; fail=1; }
cycles=$(grep -oE '"cycles_max":[0-9]+' "$d/tb.json" | cut -d: -f2)
echo "mlp on fpga:ice40-up5k in Verilator: $outputs over 10000 images, accuracy $acc (host int8 $(grep -oE '"quantized_accuracy":[0-9.]+' "$tmp/q.json" | cut -d: -f2)), $cycles cycles per inference"
awk -v c="${cycles:-0}" 'BEGIN { exit !(c > 0 && c / 24e6 <= 1e-3) }' || { echo "FAIL: $cycles cycles are more than 1 ms at 24 MHz"; fail=1; }

# the bitstream: synthesis, place and route at 24 MHz, icepack
(cd "$d" && timeout 900 make -s) >"$tmp/pnr.txt" 2>&1 || { cat "$tmp/pnr.txt"; echo "FAIL: the bitstream flow failed"; fail=1; }
cat "$tmp/pnr.txt" | grep -v "^Warning: No PCF"
[ -s "$d/model.bin" ] || { echo "FAIL: no bitstream"; fail=1; }
grep -q '"timing_met":true' "$d/report.json" 2>/dev/null || { echo "FAIL: 24 MHz not met (report.json: $(cat "$d/report.json" 2>/dev/null))"; fail=1; }
fmax=$(grep -oE '"fmax_mhz":[0-9.]+' "$d/report.json" | cut -d: -f2)
awk -v f="${fmax:-0}" -v c="${cycles:-0}" 'BEGIN { printf "latency: %.3f ms at 24 MHz, %.3f ms at the reported Fmax %.2f MHz\n", c / 24e3, (f > 0 ? c / (f * 1e3) : 0), f }'

# the generic part's wider arrays (P = 16): the same outputs on the first 2,000 images
g="$tmp/generic"
"$RLX" export --target fpga:generic "$tmp/mlp.rlx" -o "$g" >/dev/null || { echo "FAIL: rlx export --target fpga:generic failed"; fail=1; }
head -c $((2000 * 784 * 4)) "$tmp/images.bin" >"$g/rlx_input.bin"
if (cd "$g" && make -s sim && make -s run); then
  $PY - "$tmp/ref/output0.npy" "$g/rlx_output.bin" <<'PYEOF' || { echo "FAIL: the generic part's outputs are not the host's"; fail=1; }
import sys, numpy as np
ref = np.load(sys.argv[1])[:2000]
got = open(sys.argv[2], 'rb').read()
print("mlp on fpga:generic (P = 16) in Verilator:", "bit-exact over 2000 images" if got == ref.tobytes() else "DIFFERENT")
sys.exit(0 if got == ref.tobytes() else 1)
PYEOF
else
  echo "FAIL: the generic part's simulation failed"; fail=1
fi

# a small CNN (tests/cli/qdq_cnn.py: conv 3×3 1→4, max pool, conv 3×3 4→8, max pool, fc 392→10,
# ONNX QDQ) on the UP5K: rlx_conv and rlx_maxpool, bit-exact against the folded graph on the first
# 500 test images, then synthesis, place and route and a bitstream
c="$tmp/cnn"
mkdir -p "$c"
if $PY "$(dirname "$0")/qdq_cnn.py" "$c/cnn.onnx" &&
   $PY -c "import numpy as np; x = np.load('$tmp/images.npy')[:500].reshape(500, 1, 28, 28); np.save('$c/x.npy', x); x.tofile('$c/x.bin')" &&
   "$RLX" export --target fpga:ice40-up5k "$c/cnn.onnx" -o "$c/hw" >/dev/null &&
   "$RLX" run "$c/hw/graph.rlx" --device reference --input images="$c/x.npy" --output "$c/int" >/dev/null; then
  ln -s "$c/x.bin" "$c/hw/rlx_input.bin"
  if (cd "$c/hw" && make -s sim && make -s run); then
    bit_exact "cnn on fpga:ice40-up5k" images "$c/int" "$c/hw/rlx_output.bin" || { echo "FAIL: the cnn's outputs are not the folded graph's"; fail=1; }
  else
    echo "FAIL: the cnn's simulation failed"; fail=1
  fi
  ccycles=$(grep -oE '"cycles_max":[0-9]+' "$c/hw/tb.json" | cut -d: -f2)
  (cd "$c/hw" && timeout 900 make -s) >"$c/pnr.txt" 2>&1 || { cat "$c/pnr.txt"; echo "FAIL: the cnn's bitstream flow failed"; fail=1; }
  grep -v "^Warning: No PCF" "$c/pnr.txt"
  [ -s "$c/hw/model.bin" ] || { echo "FAIL: no bitstream for the cnn"; fail=1; }
  cfmax=$(grep -oE '"fmax_mhz":[0-9.]+' "$c/hw/report.json" 2>/dev/null | cut -d: -f2)
  awk -v f="${cfmax:-0}" -v c="${ccycles:-0}" 'BEGIN { printf "cnn: %d cycles per inference, %.2f ms at 24 MHz, %.2f ms at the reported Fmax %.2f MHz\n", c, c / 24e3, (f > 0 ? c / (f * 1e3) : 0), f }'
else
  echo "FAIL: writing, exporting or running the cnn failed"; fail=1
fi

# the jet-tagging network (16-64-32-32-5, ONNX QDQ with seeded weights) on the generic part: the
# fully parallel datapath, bit-exact against the folded integer graph on 2,000 inputs; with
# --timing its latency — pipeline cycles at the Fmax estimated by yosys's static timing analysis
# of the 7-series netlist (report.sh: cell delays plus a routing allowance) — at most 150 ns
j="$tmp/jet"
mkdir -p "$j"
if $PY "$(dirname "$0")/qdq_mlp.py" "$j/jet.onnx" "$j/features.npy" --count 2000 &&
   "$RLX" export --target fpga:generic "$j/jet.onnx" -o "$j/hw" >/dev/null &&
   "$RLX" run "$j/hw/graph.rlx" --device reference --input features="$j/features.npy" --output "$j/int" >/dev/null; then
  grep -q '"architecture":"fully-parallel"' "$j/hw/model.json" || { echo "FAIL: the jet tagger did not get the fully parallel datapath"; fail=1; }
  $PY -c "import numpy as np; np.load('$j/features.npy').astype(np.float32).tofile('$j/hw/rlx_input.bin')"
  if (cd "$j/hw" && make -s sim && make -s run); then
    bit_exact "jet tagger on fpga:generic (fully parallel)" inputs "$j/int" "$j/hw/rlx_output.bin" || { echo "FAIL: the jet tagger's outputs are not the folded graph's"; fail=1; }
  else
    echo "FAIL: the jet tagger's simulation failed"; fail=1
  fi
  stages=$(grep -oE '"pipeline_cycles":[0-9]+' "$j/hw/model.json" | cut -d: -f2)
  echo "jet tagger: $stages pipeline cycles, $(grep -oE '"multipliers":[0-9]+' "$j/hw/model.json" | cut -d: -f2) constant multipliers"
  if [ "$TIMING" != --timing ]; then
    echo "(its Fmax estimate: make fpga-timing)"
  elif (cd "$j/hw" && timeout 2400 make -s timing); then
    fmax=$(grep -oE '"fmax_mhz":[0-9.]+' "$j/hw/timing.json" | cut -d: -f2)
    awk -v c="${stages:-0}" -v f="${fmax:-0}" 'BEGIN { ns = f > 0 ? c * 1000 / f : 1e9; printf "jet tagger: %d pipeline cycles at %.1f MHz (estimated) = %.1f ns per inference, a new one every cycle\n", c, f, ns; exit !(ns <= 150) }' ||
      { echo "FAIL: the jet tagger's latency is above 150 ns"; fail=1; }
  else
    echo "FAIL: the jet tagger's timing estimate failed"; fail=1
  fi
else
  echo "FAIL: writing, exporting or running the jet tagger failed"; fail=1
fi

# a graph the generator cannot take is refused naming the node, and nothing is written
"$RLX" export --target fpga "$(dirname "$0")/float_mlp.rlx" -o "$tmp/bad" >"$tmp/bad.txt" 2>&1
rc=$?
[ $rc != 0 ] || { echo "FAIL: a float graph was exported for the fpga"; fail=1; }
grep -q "mir.tanh" "$tmp/bad.txt" || { cat "$tmp/bad.txt"; echo "FAIL: the refusal does not name the node"; fail=1; }
[ -e "$tmp/bad/model.sv" ] && { echo "FAIL: a refused export wrote files"; fail=1; }
exit $fail
