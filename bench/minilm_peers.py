#!/usr/bin/python3
"""RLX vs ONNX Runtime vs PyTorch on the all-MiniLM-L6-v2 architecture, in one sitting.

    /usr/bin/python3 bench/minilm_peers.py [--rlx build/bin/rlx] [--batch 1,8,32] [--seq 128]
        [--threads 2] [--warmup 3] [--runs N | --min-runs 10 --min-time 3] [--json]

What it measures, identically for all three: the MiniLM-L6 encoder (6 layers, hidden 384, 12
heads, FFN 1536, vocab 30522) plus mean pooling and L2 normalization, f32, on full batches of
ids 1000 + (i*7919) mod 29000 with no padding, `--threads` threads each; `--warmup` untimed runs,
then timed runs until at least --min-runs and --min-time seconds (or exactly --runs); p50/p90
with linear interpolation.

- PyTorch: the plain-PyTorch reference (tests/fixtures/bert/bert_reference.py) with seeded
  random weights, Debian's torch 1.13 under /usr/bin/python3 in a fresh process with
  OMP_NUM_THREADS=threads and torch.set_num_threads(threads) (the peer method, "Torch"), and
  again with OMP_WAIT_POLICY=PASSIVE ("Torch*"): with 2 cores, PyTorch's spinning OpenMP workers
  and OpenBLAS's own threads can starve each other, which the first number then shows.
- ONNX Runtime: that same module exported with torch.onnx.export (opset 14, dynamic batch and
  length), run by onnxruntime-node (bench/minilm_ort.js) with intraOpNumThreads = threads.
  Before timing, ORT's output is compared with PyTorch's on a padded batch.
- RLX: `rlx bench minilm --json` (its own seeded random weights; the compute is the same).

Ratios are RLX p50 / peer p50: below 1 means RLX is faster. The machine is shared: compare
ratios from one sitting, not absolute times across sittings.

Needs: apt python3-torch; npm onnxruntime-node, which this script installs on first use into
~/.cache/rlx-npm (override with RLX_NPM_DIR) with ONNXRUNTIME_NODE_INSTALL=skip — nothing else
is downloaded.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NPM_DIR = os.environ.get("RLX_NPM_DIR", os.path.expanduser("~/.cache/rlx-npm"))


def percentile(values, p):
    """numpy's default (linear interpolation), the definition `rlx bench` uses."""
    v = sorted(values)
    if not v:
        return 0.0
    pos = p / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def stats(ms):
    return {"p50_ms": percentile(ms, 50), "p90_ms": percentile(ms, 90), "runs": len(ms)}


def ids_for(batch, seq):
    return [[1000 + ((b * seq + s) * 7919) % 29000 for s in range(seq)] for b in range(batch)]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def ensure_ort():
    pkg = os.path.join(NPM_DIR, "node_modules", "onnxruntime-node")
    if not os.path.exists(os.path.join(pkg, "package.json")):
        if not shutil.which("npm"):
            sys.exit("minilm_peers: needs node and npm for onnxruntime-node")
        log(f"installing onnxruntime-node into {NPM_DIR} (ONNXRUNTIME_NODE_INSTALL=skip: CPU binaries only)")
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", NPM_DIR, "onnxruntime-node"],
                       check=True, env=env)
    return pkg


def run_rlx(a):
    cmd = [a.rlx, "bench", "minilm", "--json", "--batch", a.batch, "--seq", a.seq, "--threads", str(a.threads),
           "--warmup", str(a.warmup)] + (["--runs", str(a.runs)] if a.runs else ["--min-time", str(a.min_time)])
    log("RLX: " + " ".join(cmd))
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return r, {(x["batch"], x["seq"]): x for x in r["results"]}


def run_ort(a, onnx_path, check_path):
    pkg = ensure_ort()
    cmd = ["node", os.path.join(HERE, "minilm_ort.js"), onnx_path, "--threads", str(a.threads), "--batch", a.batch,
           "--seq", a.seq, "--warmup", str(a.warmup), "--runs", str(a.runs), "--min-runs", str(a.min_runs),
           "--min-time", str(a.min_time), "--check", check_path]
    log("ONNX Runtime: node bench/minilm_ort.js …")
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=dict(os.environ, ORT_NODE=pkg)).stdout)
    return r, {(x["batch"], x["seq"]): stats(x["ms"]) for x in r["results"]}


def time_torch(a):
    """The worker: times the reference in this process (started by run_torch with its env)."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "bert"))
    from bert_reference import MINILM_L6, BertReference, SentenceEncoder, random_weights
    torch.set_num_threads(a.threads)
    model = SentenceEncoder(BertReference(MINILM_L6, random_weights(MINILM_L6, seed=0))).eval()
    out = []
    for seq in map(int, a.seq.split(",")):
        for batch in map(int, a.batch.split(",")):
            ids = torch.tensor(ids_for(batch, seq))
            mask = torch.ones_like(ids)
            with torch.no_grad():
                for _ in range(a.warmup):
                    model(ids, mask)
                ms, start = [], time.perf_counter()
                while True:
                    n, elapsed = len(ms), time.perf_counter() - start
                    if (n >= a.runs) if a.runs else (n >= 1000 or (n >= a.min_runs and elapsed >= a.min_time)):
                        break
                    t = time.perf_counter()
                    model(ids, mask)
                    ms.append((time.perf_counter() - t) * 1000)
            out.append({"batch": batch, "seq": seq, "ms": ms})
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "results": out}))


def run_torch(a, passive):
    """PyTorch in a fresh process: OpenMP reads its environment once, at import."""
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    if passive:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", "--batch", a.batch, "--seq", a.seq, "--threads",
           str(a.threads), "--warmup", str(a.warmup), "--runs", str(a.runs), "--min-runs", str(a.min_runs),
           "--min-time", str(a.min_time)]
    log(f"PyTorch: {a.threads} threads, OMP_NUM_THREADS={a.threads}" + (", OMP_WAIT_POLICY=PASSIVE" if passive else ""))
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
    return r, {(x["batch"], x["seq"]): stats(x["ms"]) for x in r["results"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rlx", default=os.path.join(ROOT, "build", "bin", "rlx"))
    ap.add_argument("--batch", default="1,8,32")
    ap.add_argument("--seq", default="128")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=0, help="exactly this many timed runs (default: adaptive)")
    ap.add_argument("--min-runs", type=int, default=10)
    ap.add_argument("--min-time", type=float, default=3.0)
    ap.add_argument("--skip", default="", help="comma list of peers to leave out: ort,torch,torch_passive")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return time_torch(a)
    skip = set(filter(None, a.skip.split(",")))
    if not os.path.exists(a.rlx):
        sys.exit(f"minilm_peers: no RLX binary at {a.rlx} (build it, or pass --rlx)")

    import torch  # Debian's python3-torch; here only to export the model and check ORT
    sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "bert"))
    from bert_reference import MINILM_L6, BertReference, SentenceEncoder, random_weights

    torch.set_num_threads(1)  # this process must not compete with the ones being timed
    model = SentenceEncoder(BertReference(MINILM_L6, random_weights(MINILM_L6, seed=0))).eval()
    load_before = os.getloadavg()

    rlx_json, rlx = run_rlx(a)
    ort, ort_info, ort_check = {}, None, None
    if "ort" not in skip:
        with tempfile.TemporaryDirectory() as tmp:
            onnx_path, check_path = os.path.join(tmp, "minilm_l6.onnx"), os.path.join(tmp, "check.json")
            ex = torch.tensor(ids_for(2, 16))
            with torch.no_grad():
                torch.onnx.export(model, (ex, torch.ones_like(ex)), onnx_path, input_names=["input_ids", "attention_mask"],
                                  output_names=["sentence_embedding"], opset_version=14,
                                  dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}})
            # A padded batch: ORT must agree with PyTorch before its timings mean anything.
            ids = torch.tensor(ids_for(3, 20))
            mask = torch.ones_like(ids)
            mask[1, 12:] = 0
            mask[2, 5:] = 0
            json.dump({"input_ids": ids.tolist(), "attention_mask": mask.tolist()}, open(check_path, "w"))
            ort_info, ort = run_ort(a, onnx_path, check_path)
            with torch.no_grad():
                want = model(ids, mask)
            got = torch.tensor(ort_info["check"]["data"]).reshape(want.shape)
            ort_check = float((got - want).abs().max())
            if ort_check > 1e-4:
                sys.exit(f"minilm_peers: ONNX Runtime disagrees with PyTorch (max abs {ort_check:.3g}); not timing it")
    pt_info, pt = run_torch(a, passive=False) if "torch" not in skip else (None, {})
    pp_info, pp = run_torch(a, passive=True) if "torch_passive" not in skip else (None, {})
    load_after = os.getloadavg()

    rows = []
    for key, r in rlx.items():
        row = {"batch": key[0], "seq": key[1], "rlx": {k: r[k] for k in ("p50_ms", "p90_ms", "runs")}}
        for name, peer in (("ort", ort), ("torch", pt), ("torch_passive", pp)):
            if key in peer:
                row[name] = peer[key]
                row[f"rlx_over_{name}"] = r["p50_ms"] / peer[key]["p50_ms"]
        rows.append(row)
    conditions = {
        "threads": a.threads, "warmup": a.warmup, "runs": a.runs or f"adaptive (>= {a.min_runs} runs and >= {a.min_time} s)",
        "cpu_count": os.cpu_count(), "machine": platform.machine(), "loadavg_before": load_before, "loadavg_after": load_after,
        "rlx_device": rlx_json["device"], "rlx_precision": rlx_json["precision"], "torch": torch.__version__,
        "ort": ort_info["ort"] if ort_info else None, "ort_vs_torch_max_abs": ort_check,
    }
    if a.json:
        print(json.dumps({"workload": "minilm", "conditions": conditions, "results": rows}))
        return
    print(f"MiniLM-L6 sentence embeddings (encoder + mean pooling + L2 normalize), f32, {a.threads} threads each")
    print(f"RLX ({rlx_json['device']}) vs ONNX Runtime {conditions['ort']} (node) vs PyTorch {torch.__version__}; "
          f"warm-up {a.warmup}, runs {conditions['runs']}; load average {load_before[0]:.2f} → {load_after[0]:.2f}")
    if ort_check is not None:
        print(f"ORT output vs PyTorch on a padded batch: max abs {ort_check:.2g}")
    print()
    cols = [("rlx", "RLX"), ("ort", "ORT"), ("torch", "Torch"), ("torch_passive", "Torch*")]
    cols = [c for c in cols if any(c[0] in r for r in rows)]
    head = f"{'batch':>5} {'seq':>4} | " + " | ".join(f"{t + ' p50':>12} {'p90':>8}" for _, t in cols) + " | " + \
        " ".join(f"{'RLX/' + t:>12}" for k, t in cols if k != "rlx")
    print(head)
    print("-" * len(head))
    cell = lambda d: f"{d['p50_ms']:12.2f} {d['p90_ms']:8.2f}"
    for r in rows:
        print(f"{r['batch']:>5} {r['seq']:>4} | " + " | ".join(cell(r[k]) if k in r else f"{'—':>12} {'—':>8}" for k, _ in cols) +
              " | " + " ".join(f"{r['rlx_over_' + k]:12.2f}" if 'rlx_over_' + k in r else f"{'—':>12}" for k, _ in cols if k != "rlx"))
    print("\ntimes in ms; ratio = RLX p50 / peer p50 (below 1: RLX faster)")
    if "torch" in cols[-1][0]:
        print("Torch: the peer method (OMP_NUM_THREADS and torch threads = threads). Torch*: the same with\n"
              "OMP_WAIT_POLICY=PASSIVE — on a 2-core machine PyTorch's spinning OpenMP workers and OpenBLAS's\n"
              "threads can starve each other, so both are shown.")

if __name__ == "__main__":
    main()
