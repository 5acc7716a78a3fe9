#!/usr/bin/env python3
"""The A/B table of two builds' benchmark JSON lines (bench/cuda_sitting.sh, bench/cpu_ab.sh):
OUT_DIR/{old,new}-LABEL.jsonl → one row per figure, the best of the rounds on each side and
new/old (latencies in ms: below 1 is faster; rates: above 1 is faster)."""
import glob, json, os, sys

out = sys.argv[1]


def figures(side):
    res = {}
    for path in sorted(glob.glob(os.path.join(out, side + "-*.jsonl"))):
        label = os.path.basename(path)[len(side) + 1:-len(".jsonl")]
        for line in open(path):
            if not line.strip().startswith("{"):
                continue
            j = json.loads(line)
            w = j.get("workload")
            for x in j.get("results", []):
                if w == "minilm":
                    key, v = f"{label} b{x['batch']} p50 ms", x["p50_ms"]
                elif w == "qwen3":
                    key, v = f"qwen3 {j['precision']} {x['test']} tok/s", x.get("tokens_per_second")
                elif w == "mlp-train":
                    key, v = f"mlp-train {x['model']} b{x['batch']} img/s", x.get("images_per_second")
                else:
                    continue
                res.setdefault(key, []).append(v)
    return res


def best(vals, higher):
    vals = [v for v in vals if v is not None]
    return (max(vals) if higher else min(vals)) if vals else None


new, old = figures("new"), figures("old")
fmt = lambda v: "-" if v is None else f"{v:.4g}"
print(f"{'figure':38} {'old':>11} {'new':>11} {'new/old':>8}  rounds")
for k in new:
    hi = not k.endswith(" ms")
    n, o = best(new[k], hi), best(old.get(k, []), hi)
    ratio = f"{n / o:.3f}" if n and o else "-"
    print(f"{k:38} {fmt(o):>11} {fmt(n):>11} {ratio:>8}  {len(new[k])}")
