#!/usr/bin/env bash
# The metal device emits source (no Apple GPU here, so nothing of it runs): `rlx export --target
# metal` of an example graph must equal the golden program in tests/golden/metal_mlp — the MSL of
# each kernel and the dispatch plan, text for text — and the plan must hang together: valid
# JSON, every dispatch's kernel file present, its buffers declared, its words one per operand
# plus the kernel's own. RLX_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
set -u
RLX=$1
EXAMPLES=$2
GOLDEN=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$RLX" export --target metal "$EXAMPLES/mlp.rlx" --bind B=4 -o "$tmp/mlp" || { echo "FAIL: rlx export --target metal"; exit 1; }
if [ "${RLX_UPDATE_GOLDEN:-0}" = 1 ]; then
  rm -rf "$GOLDEN" && mkdir -p "$GOLDEN" && cp -r "$tmp/mlp/." "$GOLDEN/" && echo "golden files rewritten in $GOLDEN"
fi
fail=0
if diff -r "$GOLDEN" "$tmp/mlp" >"$tmp/diff"; then echo "ok: the metal program of mlp.rlx equals the golden one ($(ls "$tmp/mlp/kernels" | wc -l) kernels)"
else echo "FAIL: the metal program of mlp.rlx differs from $GOLDEN:"; head -40 "$tmp/diff"; fail=1; fi
/usr/bin/python3 - "$tmp/mlp" <<'PY' || fail=1
import json, os, sys
d = sys.argv[1]
plan = json.load(open(os.path.join(d, "plan.json")))
names = {b["name"] for b in plan["buffers"]}
bad = []
for i, x in enumerate(plan["dispatches"]):
    src = open(os.path.join(d, x["kernel"])).read()
    if "kernel void rlx_kernel(" not in src: bad.append(f"dispatch {i}: {x['kernel']} has no entry point")
    for b in x["buffers"]:
        if b not in names: bad.append(f"dispatch {i}: buffer {b} is not declared")
    if len(x["threads"]) != 3 or any(t < 1 for t in x["threads"]): bad.append(f"dispatch {i}: threads {x['threads']}")
    if f"[[buffer({len(x['buffers'])})]]" not in src: bad.append(f"dispatch {i}: the words are not the buffer after its {len(x['buffers'])} bindings")
for o in plan["inputs"] + plan["outputs"]:
    if o["buffer"] not in names: bad.append(f"{o['name']}: buffer {o['buffer']} is not declared")
print(("ok" if not bad else "FAIL") + f": plan.json — {len(plan['dispatches'])} dispatches, {len(plan['buffers'])} buffers" + ("" if not bad else ": " + "; ".join(bad)))
sys.exit(1 if bad else 0)
PY
# a device that runs its plans does not export them
if "$RLX" export --target cpu "$EXAMPLES/mlp.rlx" --bind B=4 -o "$tmp/cpu" 2>"$tmp/err"; then echo "FAIL: export for cpu succeeded"; fail=1
else grep -q "only devices that emit source" "$tmp/err" && echo "ok: export for cpu refused: $(head -1 "$tmp/err")" || { echo "FAIL: export for cpu: $(cat "$tmp/err")"; fail=1; }; fi
exit $fail
