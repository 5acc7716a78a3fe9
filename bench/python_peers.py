#!/usr/bin/env python3
"""What `import rlx` costs over the C++ library, measured in one process and sitting:

  1. a one-op compiled model (x + y on f32[1]): µs per CompiledModel.run from Python against the
     same model's run timed from C++ (CompiledModel._time_run) — the binding's overhead;
  2. MiniLM-L6 (the model `rlx bench minilm` times, saved with --save): rlx.Embedder.embed from
     Python on texts of exactly 128 tokens, against the same model compiled in this process and
     timed from C++ (_time_run), and against `rlx bench minilm`'s p50 (another process; rounds
     alternate, medians over rounds — this shared machine drifts by several % between minutes).

usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_peers.py --rlx build/bin/rlx [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def p50_us(fn, runs, warmup=10):
    for _ in range(warmup):
        fn()
    t = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        t.append((time.perf_counter_ns() - t0) / 1e3)
    return statistics.median(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rlx", default="build/bin/rlx")
    ap.add_argument("--runs", type=int, default=20000, help="one-op runs")
    ap.add_argument("--minilm-runs", type=int, default=30)
    ap.add_argument("--batch", default="1,32")
    ap.add_argument("--rounds", type=int, default=3, help="MiniLM rounds, each rlx bench then rlx.Embedder; medians over rounds")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    import rlx

    # 1. one op
    g = rlx.Graph("add")
    x, y = g.input("x", "f32", [1]), g.input("y", "f32", [1])
    g.set_outputs([x + y])
    m = rlx.Session("cpu").compile(g)
    xs, ys = np.ones(1, np.float32), np.ones(1, np.float32)
    cpp = min(m._time_run([xs, ys], a.runs) for _ in range(3))
    py_list = p50_us(lambda: m.run([xs, ys]), a.runs)
    py_dict = p50_us(lambda: m.run({"x": xs, "y": ys}), a.runs)

    # 2. MiniLM through rlx.Embedder, against rlx bench minilm on the same model
    batches = [int(b) for b in a.batch.split(",")]
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "minilm")
        text = " ".join(f"w{1000 + 7 * i}" for i in range(126))  # 126 words, one token each: 128 with [CLS] and [SEP]
        bench_rounds, emb_rounds, cpp_rounds = {b: [] for b in batches}, {b: [] for b in batches}, {b: [] for b in batches}
        e = session = None
        for r in range(a.rounds):  # alternating, so the machine's drift falls on both
            out = subprocess.run([a.rlx, "bench", "minilm", "--batch", a.batch, "--seq", "128", "--json"] + (["--save", model] if r == 0 else []),
                                 check=True, capture_output=True, text=True).stdout
            for row in json.loads(out.strip().splitlines()[-1])["results"]:
                bench_rounds[row["batch"]].append(row["p50_ms"])
            if e is None:
                e = rlx.Embedder(model)
                session = rlx.Session().compile(rlx.load(model))
                assert len(e.tokenize(text)) == 128
            for b in batches:
                texts = [text] * b
                ids = np.array([e.tokenize(text)] * b, np.int64)
                emb_rounds[b].append(p50_us(lambda: e.embed(texts, batch=b), a.minilm_runs, warmup=3) / 1e3)
                cpp_rounds[b].append(session._time_run([ids, np.ones_like(ids), np.zeros_like(ids)], a.minilm_runs) / 1e3)
        bench = {b: statistics.median(v) for b, v in bench_rounds.items()}
        emb = {b: statistics.median(v) for b, v in emb_rounds.items()}
        cpp_ms = {b: statistics.median(v) for b, v in cpp_rounds.items()}

    rows = {"one_op_us": {"cpp": cpp, "python_list": py_list, "python_dict": py_dict, "overhead_list": py_list - cpp,
                          "overhead_dict": py_dict - cpp},
            "minilm_ms": {str(b): {"embedder": emb[b], "cpp_same_process": cpp_ms[b], "rlx_bench": bench[b], "ratio_cpp": emb[b] / cpp_ms[b],
                                   "ratio_bench": emb[b] / bench[b]} for b in batches}}
    if a.json:
        print(json.dumps(rows))
        return
    print(f"one-op model, µs per run: C++ {cpp:.2f}, Python (list) {py_list:.2f} (+{py_list - cpp:.2f}), "
          f"Python (dict) {py_dict:.2f} (+{py_dict - cpp:.2f})")
    for b in batches:
        r = rows["minilm_ms"][str(b)]
        print(f"MiniLM b{b} seq 128: rlx.Embedder {r['embedder']:.2f} ms; the same model run from C++ in this process "
              f"{r['cpp_same_process']:.2f} ms (ratio {r['ratio_cpp']:.3f}); rlx bench minilm {r['rlx_bench']:.2f} ms (ratio {r['ratio_bench']:.3f})")


if __name__ == "__main__":
    sys.exit(main())
