#!/usr/bin/env bash
# `rlx launch` and the communicators (issue #28), on loopback: every collective × dtype × size
# class exact on 2 and 3 Gloo ranks and on 2 MPI ranks; a rank killed mid-job stops the job with
# an error naming it, well inside the timeout; bad launches are refused with a clear message.
set -u
RLX=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
built=$("$RLX" launch -n 1 -- true 2>&1 >/dev/null; "$RLX" launch -n 1 --backend mpi -- true 2>&1 >/dev/null)
# LSAN_OPTIONS for a job's ranks: under LeakSanitizer (make sanitize) MPI ranks unwind allocations
# with the slow unwinder, so that Open MPI's allocations kept past MPI_Finalize reach its own frames,
# which tests/sanitize/lsan.supp names (frame pointers stop inside its dlopen'd components); Gloo
# ranks keep the fast one.
lsan_for() { if [ "$1" = mpi ] && [ -n "${LSAN_OPTIONS:-}" ]; then echo "$LSAN_OPTIONS:fast_unwind_on_malloc=0"; else echo "${LSAN_OPTIONS:-}"; fi; }

run_check() {  # backend ranks
  local out
  out=$(LSAN_OPTIONS=$(lsan_for $1) timeout 300 "$RLX" launch -n $2 --backend $1 --timeout 60 -- rlx bench collectives --check 2>&1)
  local rc=$?
  echo "$out" | tail -1
  [ $rc = 0 ] && echo "$out" | grep -q "all exact" || { echo "$out"; echo "FAIL: collectives on $2 $1 ranks (exit $rc)"; fail=1; }
}
run_check gloo 2
run_check gloo 3
if command -v mpirun >/dev/null && ! echo "$built" | grep -q "mpi backend is not built"; then
  run_check mpi 2
else
  echo "SKIP (mpi): mpirun or the MPI communicator is missing (make setup installs libopenmpi-dev openmpi-bin)"
fi

# Gloo's ibverbs transport is built in; with no RDMA device it is refused by name (or runs where there is one)
out=$(RLX_DIST_TRANSPORT=ibverbs timeout 120 "$RLX" launch -n 2 -- rlx bench collectives --check 2>&1)
echo "$out" | grep -q "all exact\|no InfiniBand/RoCE device" || { echo "$out"; echo "FAIL: RLX_DIST_TRANSPORT=ibverbs neither ran nor said why not"; fail=1; }
echo "$out" | grep -m1 "all exact\|no InfiniBand"

# a rank that dies: the job stops, naming it, long before the 30 s timeout
start=$(date +%s)
timeout 120 "$RLX" launch -n 2 --timeout 30 -- rlx bench collectives --kill-rank 1 >"$tmp/kill.txt" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$tmp/kill.txt"
[ $rc != 0 ] || { echo "FAIL: a job with a dead rank exited 0"; fail=1; }
grep -q "rank 1 of 2 was killed by signal 9" "$tmp/kill.txt" || { echo "FAIL: the dead rank is not named"; fail=1; }
[ $elapsed -lt 25 ] || { echo "FAIL: the job took $elapsed s to stop after a rank died"; fail=1; }

# the paper plan: Qwen3-8B on tp=2 × pp=2 holds its 8.19 B parameters (norms replicated once more)
"$RLX" launch -n 4 --dry-run --model qwen3-8b --tp 2 --pp 2 --ctx 32768 || { echo "FAIL: rlx launch --dry-run"; fail=1; }
"$RLX" launch -n 4 --dry-run --model qwen3-8b --tp 2 --pp 2 --json >"$tmp/plan.json" || fail=1
/usr/bin/python3 - "$tmp/plan.json" <<'PYEOF' || { echo "FAIL: the dry-run plan is wrong"; fail=1; }
import json, sys
p = json.load(open(sys.argv[1]))
total = sum(r["params"] for r in p["ranks"])
assert len(p["ranks"]) == 4 and abs(total / 8.19e9 - 1) < 0.01, total
assert p["decode"]["all_reduces"] == 2 * 18 + 1 and p["decode"]["all_reduce_bytes"] == 4096 * 2, p["decode"]
PYEOF
"$RLX" launch -n 3 --dry-run --model qwen3-8b --tp 3 >"$tmp/e0.txt" 2>&1 && { echo "FAIL: tp=3 of 32 heads was planned"; fail=1; }
grep -q "32 attention heads do not split over tp=3" "$tmp/e0.txt" || { cat "$tmp/e0.txt"; echo "FAIL: the indivisible split is not named"; fail=1; }

# same_training ONE OTHER LABEL: the checkpoints ONE.safetensors and OTHER.safetensors hold the same
# weights (to f32 rounding: the sums group differently) and the runs' --json the same test accuracy
same_training() {
  /usr/bin/python3 - "$1.safetensors" "$2.safetensors" "$1.json" "$2.json" "$3" <<'PYEOF' || { echo "FAIL: $3 differs from one process"; fail=1; }
import json, struct, sys
import numpy as np
def load(p):
    b = open(p, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8 + n])
    return {k: np.frombuffer(b[8 + n + v['data_offsets'][0]:8 + n + v['data_offsets'][1]], dtype=np.float32) for k, v in h.items() if k != '__metadata__'}
a, b = load(sys.argv[1]), load(sys.argv[2])
worst = max(float(np.abs(a[k] - b[k]).max() / (np.abs(a[k]).max() + 1e-12)) for k in a)
acc = [json.loads(open(p).read().strip().splitlines()[-1])['test_accuracy'] for p in sys.argv[3:5]]
print("%s vs one process: weights within %.1e (relative), test accuracy %.4f vs %.4f" % (sys.argv[5], worst, acc[1], acc[0]))
sys.exit(0 if sorted(a) == sorted(b) and worst < 1e-4 and abs(acc[0] - acc[1]) < 2e-3 else 1)
PYEOF
}

# data-parallel training: two ranks, each on half of every batch of 128, the gradients averaged in
# buckets by all_reduce nodes of the step graph (sent on the communication thread while the
# backward goes on) — the same weights as one process on the whole batches (Adam, 2 epochs)
if [ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  "$RLX" train mnist --limit 2048 --epochs 2 --batch 128 --save "$tmp/one.safetensors" --json >"$tmp/one.json" || { echo "FAIL: the one-process training failed"; fail=1; }
  timeout 300 "$RLX" launch -n 2 -- "$RLX" train mnist --limit 2048 --epochs 2 --batch 128 --data-parallel --save "$tmp/dp.safetensors" --json >"$tmp/dp.json" ||
    { echo "FAIL: data-parallel training failed"; fail=1; }
  same_training "$tmp/one" "$tmp/dp" "data parallel on 2 ranks"
  # with f16 autocast and dynamic loss scaling: the averaged gradients decide every rank's skip
  "$RLX" train mnist --limit 1024 --epochs 1 --batch 128 --precision amp-f16 --json >"$tmp/a1.json" || fail=1
  timeout 300 "$RLX" launch -n 2 -- "$RLX" train mnist --limit 1024 --epochs 1 --batch 128 --precision amp-f16 --data-parallel --json >"$tmp/a2.json" || fail=1
  /usr/bin/python3 -c "
import json, sys
a, b = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3])
ok = abs(a['test_accuracy'] - b['test_accuracy']) < 2e-3 and a['loss_scale']['final'] == b['loss_scale']['final']
print('amp-f16 data parallel: accuracy %.4f vs %.4f one process, loss scale %g vs %g' % (b['test_accuracy'], a['test_accuracy'], b['loss_scale']['final'], a['loss_scale']['final']))
sys.exit(0 if ok else 1)" "$tmp/a1.json" "$tmp/a2.json" || { echo "FAIL: amp-f16 data parallel differs from one process"; fail=1; }
  # pipeline-parallel training: the MLP cut between its layers, one stage per rank, each batch of
  # 128 in micro-batches through the 1F1B schedule (and GPipe over three stages of a deeper MLP);
  # each stage's gradients accumulated over the micro-batches — the same weights as one process
  timeout 300 "$RLX" launch -n 2 -- "$RLX" train mnist --limit 2048 --epochs 2 --batch 128 --pipeline-parallel --micro-batches 4 \
    --save "$tmp/pp.safetensors" --json >"$tmp/pp.json" || { echo "FAIL: pipeline-parallel training (1f1b) failed"; fail=1; }
  same_training "$tmp/one" "$tmp/pp" "pipeline parallel, 2 stages, 1F1B × 4 micro-batches"
  # both: 4 ranks as 2 copies of a 2-stage pipeline, each copy on half of every batch, a stage's
  # copies averaging their gradients
  timeout 300 "$RLX" launch -n 4 -- "$RLX" train mnist --limit 2048 --epochs 2 --batch 128 --data-parallel --pipeline-parallel --pipeline-stages 2 \
    --save "$tmp/dpp.safetensors" --json >"$tmp/dpp.json" || { echo "FAIL: data × pipeline parallel training failed"; fail=1; }
  same_training "$tmp/one" "$tmp/dpp" "data parallel × pipeline parallel, 2 copies of 2 stages"
  grep -q '"data_parallel_copies":2' "$tmp/dpp.json" || { echo "FAIL: the --json output does not count the copies"; fail=1; }
  # with clipping by the global norm (each stage's Σg², summed) and f16 loss scaling (a skip agreed by every stage)
  "$RLX" train mnist --limit 1024 --epochs 1 --batch 128 --precision amp-f16 --clip-norm 0.5 --json >"$tmp/c1.json" || fail=1
  timeout 300 "$RLX" launch -n 2 -- "$RLX" train mnist --limit 1024 --epochs 1 --batch 128 --precision amp-f16 --clip-norm 0.5 --pipeline-parallel --json >"$tmp/c2.json" || fail=1
  /usr/bin/python3 -c "
import json, sys
a, b = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3])
ok = abs(a['test_accuracy'] - b['test_accuracy']) < 2e-3 and a['loss_scale']['final'] == b['loss_scale']['final']
print('amp-f16 + clip-norm pipeline parallel: accuracy %.4f vs %.4f one process, loss scale %g vs %g' % (b['test_accuracy'], a['test_accuracy'], b['loss_scale']['final'], a['loss_scale']['final']))
sys.exit(0 if ok else 1)" "$tmp/c1.json" "$tmp/c2.json" || { echo "FAIL: amp-f16 with clipping, pipeline parallel, differs from one process"; fail=1; }
  "$RLX" train mnist --hidden 128,64 --limit 2048 --epochs 1 --batch 96 --save "$tmp/one3.safetensors" --json >"$tmp/one3.json" || fail=1
  timeout 300 "$RLX" launch -n 3 -- "$RLX" train mnist --hidden 128,64 --limit 2048 --epochs 1 --batch 96 --pipeline-parallel \
    --pipeline-schedule gpipe --micro-batches 5 --save "$tmp/pp3.safetensors" --json >"$tmp/pp3.json" || { echo "FAIL: pipeline-parallel training (gpipe) failed"; fail=1; }
  same_training "$tmp/one3" "$tmp/pp3" "pipeline parallel, 3 stages, GPipe × 5 micro-batches"
  grep -q '"schedule":"gpipe","micro_batches":5' "$tmp/pp3.json" || { echo "FAIL: the --json output does not name the pipeline"; fail=1; }
  # the same over MPI (MPI_Isend carries the activations and gradients)
  LSAN_OPTIONS=$(lsan_for mpi) timeout 300 "$RLX" launch -n 2 --backend mpi -- "$RLX" train mnist --limit 2048 --epochs 2 --batch 128 --pipeline-parallel --pipeline-schedule gpipe \
    --save "$tmp/ppm.safetensors" --json >"$tmp/ppm.json" || { echo "FAIL: pipeline-parallel training over MPI failed"; fail=1; }
  same_training "$tmp/one" "$tmp/ppm" "pipeline parallel over MPI, 2 stages, GPipe × 4 micro-batches"
  timeout 120 "$RLX" launch -n 4 -- "$RLX" train mnist --limit 256 --epochs 1 --pipeline-parallel >"$tmp/pp4.txt" 2>&1 &&
    { echo "FAIL: four stages of a two-layer MLP were accepted"; fail=1; }
  grep -q "4 pipeline stages need 3" "$tmp/pp4.txt" || { cat "$tmp/pp4.txt"; echo "FAIL: the missing cuts are not named"; fail=1; }
fi

# tensor- and pipeline-parallel generation (Megatron split with all_reduce / all_gather nodes in the
# graphs; contiguous layer stages passing the residual stream): greedy ids identical to one process
# and to the PyTorch reference's, on fixtures with split and replicated KV heads (qwen2_tiny has
# one), tied and untied heads, bf16 and f16 weights, sliding layers
FIX=$(cd "$(dirname "$0")/../fixtures/qwen3" && pwd)
par_check() {  # fixture tp pp [backend]
  local ids
  ids=$(/usr/bin/python3 -c "import json;print(','.join(map(str,json.load(open('$FIX/$1/expected.json'))['prompt_ids'])))")
  local args="generate --model $FIX/$1 --prompt-ids $ids --max-tokens 64 --ignore-eos --temperature 0 --json"
  "$RLX" $args >"$tmp/tp1.json" || { echo "FAIL: $1 on one process"; fail=1; return; }
  LSAN_OPTIONS=$(lsan_for "${4:-gloo}") timeout 300 "$RLX" launch -n $(($2 * $3)) --backend "${4:-gloo}" -- "$RLX" $args --tp $2 --pp $3 >"$tmp/tpn.json" || { echo "FAIL: $1 with --tp $2 --pp $3 (${4:-gloo})"; fail=1; return; }
  /usr/bin/python3 - "$FIX/$1/expected.json" "$tmp/tp1.json" "$tmp/tpn.json" "$1 tp=$2 pp=$3 ${4:-gloo}" <<'PYEOF' || { echo "FAIL: $1 with --tp $2 --pp $3 differs"; fail=1; }
import json, sys
e = json.load(open(sys.argv[1])); one, par = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[2:4])
ok = par["ids"] == one["ids"] == e["greedy"] and par["tensor_parallel"] * par["pipeline_parallel"] > 1
print("%s: %d greedy ids %s one process and the reference" % (sys.argv[4], len(par["ids"]), "equal" if ok else "DIFFER from"))
sys.exit(0 if ok else 1)
PYEOF
}
par_check qwen3_tiny 2 1
par_check llama_tiny 2 1
par_check qwen2_tiny 2 1
par_check gemma2_tiny 2 1
par_check qwen3_tiny 4 1
par_check qwen3_tiny 1 2
par_check gemma3_tiny 1 3
par_check qwen3_tiny 2 2
# every rank's dispatch report with its share of the model (--report): which stage, layers, heads
# and rows each rank holds, its decode graph's ops by path, and where in the model its nodes sit
ids=$(/usr/bin/python3 -c "import json;print(','.join(map(str,json.load(open('$FIX/qwen3_tiny/expected.json'))['prompt_ids'])))")
timeout 120 "$RLX" launch -n 4 -- "$RLX" generate --model "$FIX/qwen3_tiny" --prompt-ids "$ids" --max-tokens 4 --temperature 0 --tp 2 --pp 2 --report --json >"$tmp/rep.json" ||
  { echo "FAIL: --report on tp=2 x pp=2"; fail=1; }
/usr/bin/python3 - "$tmp/rep.json" <<'PYEOF' || { echo "FAIL: the per-rank placement report is wrong"; fail=1; }
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["report"]
assert [x["rank"] for x in r] == [0, 1, 2, 3], r
for x in r:
    stage, shard = x["rank"] // 2, x["rank"] % 2
    assert f"stage {stage} of 2" in x["placement"] and f"tensor shard {shard} of 2" in x["placement"], x["placement"]
    ops = {o["op"]: o for o in x["decode"]["ops"]}
    assert ops["mir.all_reduce"]["native"] == 2, ops["mir.all_reduce"]     # o_proj and down_proj of its one layer
    places = [p["nodes"] for p in x["decode"]["placement"]]
    assert f"model.layers.{stage}" in places and f"model.layers.{1 - stage}" not in places, places
    assert ("embed_tokens" in places) == (stage == 0), places
print("per-rank report: 4 ranks, each with its stage's layer, its heads, 2 all-reduces")
PYEOF
par_check llama_tiny 2 2
# over MPI: each stage's tensor-parallel group split off the job by MPI_Comm_split
par_check qwen3_tiny 2 2 mpi
# sampling: every rank adopts the last stage's logits, so the sampled ids are one process's
ids=$(/usr/bin/python3 -c "import json;print(','.join(map(str,json.load(open('$FIX/qwen3_tiny/expected.json'))['prompt_ids'])))")
"$RLX" generate --model "$FIX/qwen3_tiny" --prompt-ids $ids --max-tokens 32 --seed 7 --temperature 0.8 --json >"$tmp/s1.json" || fail=1
timeout 300 "$RLX" launch -n 4 -- "$RLX" generate --model "$FIX/qwen3_tiny" --prompt-ids $ids --max-tokens 32 --seed 7 --temperature 0.8 --json --tp 2 --pp 2 >"$tmp/s4.json" || fail=1
/usr/bin/python3 -c "
import json, sys
a, b = (json.loads(open(p).read().strip().splitlines()[-1])['ids'] for p in sys.argv[1:3])
print('sampled (T=0.8, seed 7) on tp=2 x pp=2:', 'the same 32 ids as one process' if a == b else 'DIFFERENT ids')
sys.exit(a != b)" "$tmp/s1.json" "$tmp/s4.json" || { echo "FAIL: sampling differs with tp=2 pp=2"; fail=1; }
# the Qwen3-0.6B architecture (2 of its layers, seeded random Q8_0 weights — vocab-parallel head,
# GGUF block-aligned column splits): tp=2, pp=2 and tp=2 x pp=2 give one process's greedy ids
# (900 s: under ASan on two busy cores writing the GGUF takes ~3 min of the guard's time)
if timeout 900 "$RLX" bench qwen3 --save "$tmp/q06.gguf" --precision q8_0 --layers 2 >/dev/null 2>&1; then
  q06="generate --model $tmp/q06.gguf --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12 --max-tokens 16 --ignore-eos --temperature 0 --json"
  "$RLX" $q06 >"$tmp/q1.json" || fail=1
  for layout in "2 1" "1 2" "2 2"; do
    set -- $layout
    timeout 300 "$RLX" launch -n $(($1 * $2)) -- "$RLX" $q06 --tp $1 --pp $2 >"$tmp/qn.json" || { echo "FAIL: 0.6B with tp=$1 pp=$2"; fail=1; continue; }
    /usr/bin/python3 -c "
import json, sys
a, b = (json.loads(open(p).read().strip().splitlines()[-1])['ids'] for p in sys.argv[1:3])
print('Qwen3-0.6B architecture tp=%s pp=%s:' % tuple(sys.argv[3:5]), 'the same 16 greedy ids as one process' if a == b else 'DIFFERENT ids')
sys.exit(a != b)" "$tmp/q1.json" "$tmp/qn.json" $1 $2 || { echo "FAIL: 0.6B ids differ with tp=$1 pp=$2"; fail=1; }
  done
else
  echo "FAIL: rlx bench qwen3 --save (the 0.6B-architecture GGUF) failed"; fail=1
fi
"$RLX" launch -n 3 -- "$RLX" generate --model "$FIX/qwen3_tiny" --prompt-ids 1,2 --tp 3 >"$tmp/e5.txt" 2>&1 && { echo "FAIL: tp=3 of 4 heads ran"; fail=1; }
grep -q "needs the attention heads (4) to be a multiple of 3" "$tmp/e5.txt" || { cat "$tmp/e5.txt"; echo "FAIL: the indivisible split is not named"; fail=1; }
# ranks started differently are stopped at rendezvous, naming the rank and both configurations
RLXBIN=$(command -v "$RLX" || echo "$RLX")
timeout 120 "$RLX" launch -n 2 -- sh -c "$RLXBIN generate --model $FIX/qwen3_tiny --prompt-ids 1,2,3 --max-tokens \$((8 + RLX_RANK)) --tp 2" >"$tmp/e7.txt" 2>&1 &&
  { echo "FAIL: ranks with different settings generated"; fail=1; }
grep -q "rank 1 of 2 was started with another model or generation settings than rank 0.*max tokens 8.*max tokens 9" "$tmp/e7.txt" || { cat "$tmp/e7.txt"; echo "FAIL: the mismatch is not named"; fail=1; }
timeout 120 "$RLX" launch -n 2 -- sh -c "$RLXBIN train mnist --limit 256 --epochs 1 --batch \$((64 * (1 + RLX_RANK))) --data-parallel" >"$tmp/e8.txt" 2>&1 &&
  { echo "FAIL: ranks with different batches trained"; fail=1; }
grep -q "rank 1 of 2 was started with another training configuration than rank 0" "$tmp/e8.txt" || { cat "$tmp/e8.txt"; echo "FAIL: the training mismatch is not named"; fail=1; }
"$RLX" generate --model "$FIX/qwen3_tiny" --prompt-ids 1,2 --tp 2 >"$tmp/e6.txt" 2>&1 && { echo "FAIL: --tp ran outside a job"; fail=1; }
grep -q "rlx launch -n N" "$tmp/e6.txt" || { cat "$tmp/e6.txt"; echo "FAIL: --tp outside a job does not say how to start one"; fail=1; }

# refusals
"$RLX" launch -- true >"$tmp/e1.txt" 2>&1 && { echo "FAIL: launch without -n ran"; fail=1; }
grep -q "needs -n N" "$tmp/e1.txt" || { cat "$tmp/e1.txt"; echo "FAIL: the missing -n is not named"; fail=1; }
"$RLX" launch -n 2 >"$tmp/e2.txt" 2>&1 && { echo "FAIL: launch without a command ran"; fail=1; }
grep -q "needs a command after --" "$tmp/e2.txt" || { cat "$tmp/e2.txt"; echo "FAIL: the missing command is not named"; fail=1; }
"$RLX" bench collectives --check >"$tmp/e3.txt" 2>&1 && { echo "FAIL: a rank ran outside a job"; fail=1; }
grep -q "rlx launch -n N" "$tmp/e3.txt" || { cat "$tmp/e3.txt"; echo "FAIL: running outside a job does not say how to start one"; fail=1; }
[ $fail = 0 ] && echo "dist ok"
exit $fail
