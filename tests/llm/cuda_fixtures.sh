#!/usr/bin/env bash
# On a GPU machine: greedy ids of every llama-family fixture on the cuda device against the
# PyTorch reference's (tests/fixtures/qwen3/*/expected.json), f32. Not part of `make test`
# (no GPU there): run it where the device is, from the repository root.
#
#   tests/llm/cuda_fixtures.sh path/to/rlx
set -u
rlx=$1
status=0
for d in tests/fixtures/qwen3/*/; do
  f=$(basename "$d")
  [ -f "$d/expected.json" ] || continue
  ids=$(python3 -c "import json;print(','.join(map(str,json.load(open('$d/expected.json'))['prompt_ids'])))")
  out=$("$rlx" generate --model "$d" --prompt-ids "$ids" --max-tokens 64 --ignore-eos --temperature 0 --device cuda --json 2>&1)
  python3 - "$d/expected.json" "$f" "$out" <<'PY' || status=1
import json, sys
e = json.load(open(sys.argv[1]))
try:
    g = json.loads(sys.argv[3].strip().splitlines()[-1])
except Exception:
    print(f"{sys.argv[2]}: no result: {sys.argv[3][:300]}"); sys.exit(1)
same = sum(a == b for a, b in zip(g["ids"], e["greedy"]))
print(f"{sys.argv[2]}: cuda greedy ids equal to the reference's: {same}/{len(e['greedy'])}")
sys.exit(0 if g["ids"] == e["greedy"] else 1)
PY
done
exit $status
