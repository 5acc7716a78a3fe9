#!/bin/sh
# RLX and llama.cpp side by side on the same GGUF files: for each type, RLX writes the seeded
# random Qwen3-0.6B-architecture model once (rlx bench qwen3 --save), then `rlx bench qwen3
# --model FILE` and `llama-bench -m FILE` measure pp512 and tg128 on it, in turns (ROUNDS
# rounds, the best of each kept). Builds nothing: give a llama.cpp build's llama-bench.
#
#   bench/decode_peers.sh LLAMA_BENCH [TYPES] [ROUNDS]
#   TYPES: comma-separated --precision values (default f16,q8_0,q4_k_m)
# Prints a markdown table; run with nothing else on the machine. Threads: all cores (THREADS=N).
set -eu
llama_bench=$1
types=${2:-f16,q8_0,q4_k_m}
rounds=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
rlx=${RLX:-$here/../build/bin/rlx}
work=${WORK:-/tmp/rlx-decode-peers}
threads=${THREADS:-$(nproc)}
mkdir -p "$work"
[ -x "$llama_bench" ] || { echo "decode_peers.sh: $llama_bench is not an executable llama-bench" >&2; exit 2; }
echo "| type | GB | RLX pp512 | llama.cpp pp512 | ratio | RLX tg128 | llama.cpp tg128 | ratio | RLX tg128 of bound |"
echo "|---|---|---|---|---|---|---|---|---|"
for t in $(echo "$types" | tr ',' ' '); do
  file=$work/qwen3-0.6b-$t.gguf
  # the tiny fixture's tokenizer gives the file a vocabulary (llama.cpp will not load one without)
  [ -f "$file" ] || "$rlx" bench qwen3 --precision "$t" --pp 1 --tg 1 --runs 1 --save "$file" --tokenizer "$here/../tests/fixtures/qwen3/qwen3_tiny/tokenizer.json" >/dev/null 2>&1
  : >"$work/rlx-$t.jsonl"
  : >"$work/llama-$t.jsonl"
  i=0
  while [ $i -lt "$rounds" ]; do
    "$rlx" bench qwen3 --model "$file" --pp 512 --tg 128 --runs 3 --threads "$threads" --json 2>/dev/null >>"$work/rlx-$t.jsonl"
    echo >>"$work/rlx-$t.jsonl"
    "$llama_bench" -m "$file" -p 512 -n 128 -r 3 -t "$threads" -o jsonl 2>/dev/null >>"$work/llama-$t.jsonl"
    i=$((i + 1))
  done
  /usr/bin/python3 - "$t" "$file" "$work/rlx-$t.jsonl" "$work/llama-$t.jsonl" <<'PY'
import json, os, sys
t, path, rlx_path, llama_path = sys.argv[1:]
def lines(p):
    return [json.loads(l) for l in open(p) if l.strip()]
best = {}
bound = 0.0
for r in lines(rlx_path):
    for x in r["results"]:
        key = "pp" if x["test"].startswith("pp") else "tg"
        best[("rlx", key)] = max(best.get(("rlx", key), 0), x["tokens_per_second"])
        if key == "tg":
            bound = max(bound, x.get("fraction_of_bound", 0))
for r in lines(llama_path):
    key = "pp" if r.get("n_prompt", 0) > 0 else "tg"
    best[("llama", key)] = max(best.get(("llama", key), 0), r["avg_ts"])
def ratio(k):
    return "%.2f×" % (best[("rlx", k)] / best[("llama", k)]) if best.get(("llama", k)) else "—"
print("| %s | %.2f | %.1f | %.1f | %s | %.2f | %.2f | %s | %.0f%% |" % (
    t, os.path.getsize(path) / 1e9, best.get(("rlx", "pp"), 0), best.get(("llama", "pp"), 0), ratio("pp"),
    best.get(("rlx", "tg"), 0), best.get(("llama", "tg"), 0), ratio("tg"), 100 * bound))
PY
done
