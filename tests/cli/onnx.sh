#!/usr/bin/env bash
# The ONNX side of the command-line contract (DESIGN §8): rlx info, rlx run (.npy in and out,
# outputs named after the graph's), rlx compile --report, rlx onnx-suite's last line, and the
# errors for truncated models and missing inputs. Exit 77 (skipped) without the test data.
set -u
RLX=$1
DATA=/usr/share/libonnx-testdata/data
PY=/usr/bin/python3
[ -d $DATA/node ] || { echo "skipped: libonnx-testdata is not installed"; exit 77; }
$PY -c "import numpy, onnx" 2>/dev/null || { echo "skipped: needs python3-numpy and python3-onnx"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
M=$DATA/node/test_conv_with_strides_padding

# info: text and JSON
$RLX info $M/model.onnx > $T/info.txt || fail "rlx info exited $?"
grep -q "^format: onnx" $T/info.txt || fail "rlx info: no 'format: onnx' line"
grep -q "Conv .* 1" $T/info.txt || fail "rlx info: no op histogram"
$RLX info $M/model.onnx --json | $PY -c "
import json, sys
j = json.load(sys.stdin)
assert j['format'] == 'onnx' and j['ops'] == {'Conv': 1} and j['opsets']['ai.onnx'] == 11, j
assert [i['name'] for i in j['inputs']] == ['x', 'W'] and j['unsupported'] == [], j
" || fail "rlx info --json"

# run: the test's input .pb files as .npy; the output .npy equals output_0.pb
$PY - "$M" "$T" <<'PYEOF' || fail "making .npy inputs"
import sys, numpy as np, onnx
from onnx import numpy_helper as nh
m, t = sys.argv[1], sys.argv[2]
for i, name in enumerate(['x', 'W']):
    np.save(f'{t}/{name}.npy', nh.to_array(onnx.load_tensor(f'{m}/test_data_set_0/input_{i}.pb')))
PYEOF
$RLX run $M/model.onnx --input x=$T/x.npy --input W=$T/W.npy --output $T/out --json > $T/run.json || fail "rlx run exited $?"
[ -f $T/out/y.npy ] || fail "rlx run wrote no out/y.npy (outputs are named after the graph's)"
$PY - "$M" "$T" <<'PYEOF' || fail "rlx run output differs from output_0.pb"
import sys, json, numpy as np, onnx
from onnx import numpy_helper as nh
m, t = sys.argv[1], sys.argv[2]
want = nh.to_array(onnx.load_tensor(f'{m}/test_data_set_0/output_0.pb'))
got = np.load(f'{t}/out/y.npy')
assert got.dtype == want.dtype and got.shape == want.shape and np.allclose(got, want, rtol=1e-3, atol=1e-7)
j = json.load(open(f'{t}/run.json'))
assert j['outputs'][0]['name'] == 'y' and j['outputs'][0]['shape'] == list(want.shape), j
PYEOF

# compile --report on an ONNX file
$RLX compile $M/model.onnx --report | grep -q "mir.conv" || fail "rlx compile --report has no mir.conv row"

# onnx-suite: failures line by line, then the plain summary line
out=$($RLX onnx-suite $DATA/node --filter '^test_(add|relu|conv_with_strides_padding|cast_FLOAT_to_STRING)$')
[ "$(echo "$out" | tail -1)" = "3 passed, 0 failed, 1 skipped" ] || fail "onnx-suite summary: $(echo "$out" | tail -1)"
echo "$out" | grep -q "^SKIP test_cast_FLOAT_to_STRING: needs dtype STRING" || fail "onnx-suite skip reason"
$RLX onnx-suite $DATA/node --filter '^test_relu$' --json | $PY -c "
import json, sys
j = json.load(sys.stdin)
assert j['passed'] == 1 and j['failed'] == 0 and j['tests'][0]['status'] == 'passed', j
" || fail "onnx-suite --json"

# errors: a truncated model, a missing input
head -c 120 $DATA/pytorch-converted/test_Conv2d/model.onnx > $T/cut.onnx
$RLX run $T/cut.onnx --input x=$T/x.npy 2> $T/err.txt && fail "a truncated model ran"
grep -q "truncated or corrupted" $T/err.txt || fail "truncated model error: $(cat $T/err.txt)"
$RLX run $M/model.onnx --input x=$T/x.npy 2> $T/err.txt
[ $? = 2 ] || fail "a missing input should exit 2"
grep -q "missing --input for W" $T/err.txt || fail "missing input error: $(cat $T/err.txt)"
# a model in QDQ form (constant int8 weights behind DequantizeLinear, folded at import): runs on the
# cpu and equals the reference; `rlx run` also takes a .rlx graph
if $PY -c "import onnx" 2>/dev/null; then
  $PY "$(dirname "$0")/qdq_cnn.py" $T/qdq.onnx || fail "writing the QDQ model"
  $PY -c "import numpy as np; np.save('$T/img.npy', np.random.default_rng(3).random((4, 1, 28, 28), dtype=np.float32))"
  $RLX run $T/qdq.onnx --input images=$T/img.npy --output $T/qdq_cpu > /dev/null || fail "the QDQ model does not run on the cpu"
  $RLX run $T/qdq.onnx --device reference --input images=$T/img.npy --output $T/qdq_ref > /dev/null || fail "the QDQ model does not run on the reference"
  $PY -c "
import numpy as np
a, b = np.load('$T/qdq_cpu/logits.npy'), np.load('$T/qdq_ref/logits.npy')
assert a.shape == (4, 10) and np.abs(a - b).max() <= 1e-4 * max(1.0, float(np.abs(b).max())), (a, b)
" || fail "the QDQ model's cpu and reference outputs differ"
  printf 'graph @g(%%x: f32[2,3]) {\n  %%0 = mir.exp(%%x) : f32[2,3]\n  return %%0\n}\n' > $T/exp.rlx
  $PY -c "import numpy as np; np.save('$T/x23.npy', np.zeros((2, 3), dtype=np.float32))"
  $RLX run $T/exp.rlx --input x=$T/x23.npy --output $T/exp_out > /dev/null || fail "rlx run of a .rlx graph"
  $PY -c "import numpy as np; assert (np.load('$T/exp_out/output0.npy') == 1).all()" || fail "rlx run of a .rlx graph: wrong output"
fi
echo "onnx cli ok"
