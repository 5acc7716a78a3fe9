#!/usr/bin/python3
"""RLX vs ONNX Runtime vs PyTorch on the all-MiniLM-L6-v2 architecture, in one sitting.

    /usr/bin/python3 bench/minilm_peers.py [--rlx build/bin/rlx] [--batch 1,8,32] [--seq 128]
        [--threads 2] [--warmup 3] [--rounds 3] [--runs N | --min-runs 12 --min-time 3] [--json]

What it measures, identically for all: the MiniLM-L6 encoder (6 layers, hidden 384, 12 heads,
FFN 1536, vocab 30522) plus mean pooling and L2 normalization, f32, on full batches of ids
1000 + (i*7919) mod 29000 with no padding, `--threads` threads each.

The frameworks take turns: `--rounds` rounds, each running every framework once (a fresh
process, `--warmup` untimed runs per shape, then timed runs until it has its share of
--min-runs and --min-time, or of --runs), the order rotating from round to round. The machine
is shared, so interleaving spreads other people's load over all of them alike; p50/p90 are
taken over every timed run of all rounds, with linear interpolation (`rlx bench`'s definition).

- RLX: `rlx bench minilm --json --times` (its own seeded random weights; the same arithmetic).
- RLX bf16: the same with `--precision bf16` (matmuls and attention products on AMX in bf16,
  f32 accumulation, norms and softmax in f32); it reports the smallest cosine of its
  embeddings to the f32 model's on every shape. Its ratios are against the f32 peers.
- ORT: the PyTorch reference below exported by torch.onnx.export (opset 14, dynamic batch and
  length), run by onnxruntime-node (bench/minilm_ort.js) with intraOpNumThreads = threads,
  interOpNumThreads = 1. Before any timing its output is checked against PyTorch's on a
  padded batch.
- Torch: the plain-PyTorch reference (tests/fixtures/bert/bert_reference.py, the module the
  parity fixtures come from) with seeded random weights, Debian's torch 1.13 under
  /usr/bin/python3, OMP_NUM_THREADS = torch.set_num_threads = threads (the peer method).
- Torch*: the same with OMP_WAIT_POLICY=PASSIVE. On 2 cores PyTorch's spinning OpenMP workers
  and OpenBLAS's own threads can starve each other, which "Torch" then shows; compare with the
  better of the two.

Ratios are RLX p50 / peer p50: below 1 means RLX is faster.

Needs apt python3-torch, and npm onnxruntime-node, which this script installs on first use into
~/.cache/rlx-npm (RLX_NPM_DIR) with ONNXRUNTIME_NODE_INSTALL=skip; nothing else is downloaded.
"""
import argparse
import json
import math
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
PEERS = [("rlx", "RLX"), ("rlx_bf16", "RLX bf16"), ("ort", "ORT"), ("torch", "Torch"), ("torch_passive", "Torch*")]
RLX_VARIANTS = ("rlx", "rlx_bf16")  # the f32 peers are compared with each


def percentile(values, p):
    """numpy's default (linear interpolation), the definition `rlx bench` uses."""
    v = sorted(values)
    if not v:
        return 0.0
    pos = p / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def ids_for(batch, seq):
    return [[1000 + ((b * seq + s) * 7919) % 29000 for s in range(seq)] for b in range(batch)]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cpu_idle(seconds=1.0):
    """Fraction of CPU time idle over the next `seconds` (other people's load, before we start)."""
    def sample():
        with open("/proc/stat") as f:
            v = list(map(int, f.readline().split()[1:]))
        return v[3] + v[4], sum(v[:8])
    try:
        i0, t0 = sample()
        time.sleep(seconds)
        i1, t1 = sample()
        return (i1 - i0) / max(1, t1 - t0)
    except OSError:
        return None


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


def share(a):
    """This round's part of the run policy."""
    if a.runs:
        return {"runs": math.ceil(a.runs / a.rounds), "min_runs": 1, "min_time": 0.0}
    return {"runs": 0, "min_runs": math.ceil(a.min_runs / a.rounds), "min_time": a.min_time / a.rounds}


def policy_args(a):
    s = share(a)
    return ["--warmup", str(a.warmup), "--runs", str(s["runs"]), "--min-runs", str(s["min_runs"]),
            "--min-time", str(s["min_time"])]


def by_shape(results, key="ms"):
    return {(x["batch"], x["seq"]): x[key] for x in results}


def run_rlx(a, precision="f32"):
    cmd = [a.rlx, "bench", "minilm", "--json", "--times", "--batch", a.batch, "--seq", a.seq, "--threads", str(a.threads),
           "--precision", precision]
    r = json.loads(subprocess.run(cmd + policy_args(a), check=True, capture_output=True, text=True).stdout)
    return r, by_shape(r["results"], "times_ms")


def run_ort(a, onnx_path, check_path=None):
    cmd = ["node", os.path.join(HERE, "minilm_ort.js"), onnx_path, "--threads", str(a.threads), "--batch", a.batch,
           "--seq", a.seq] + policy_args(a) + (["--check", check_path] if check_path else [])
    env = dict(os.environ, ORT_NODE=ensure_ort())
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
    return r, by_shape(r["results"])


def run_torch(a, passive):
    """PyTorch in a fresh process: OpenMP reads its environment once, at import."""
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    if passive:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", "--batch", a.batch, "--seq", a.seq, "--threads",
           str(a.threads)] + policy_args(a)
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
    return r, by_shape(r["results"])


def torch_worker(a):
    """Times the reference in this process (started by run_torch with its environment)."""
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


def export_and_check(a, tmp):
    """The reference exported to ONNX, and ORT's agreement with PyTorch on a padded batch."""
    import torch  # Debian's python3-torch; in this process only to export and check
    sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "bert"))
    from bert_reference import MINILM_L6, BertReference, SentenceEncoder, random_weights
    torch.set_num_threads(1)  # this process must not compete with the ones being timed
    model = SentenceEncoder(BertReference(MINILM_L6, random_weights(MINILM_L6, seed=0))).eval()
    onnx_path, check_path = os.path.join(tmp, "minilm_l6.onnx"), os.path.join(tmp, "check.json")
    ex = torch.tensor(ids_for(2, 16))
    with torch.no_grad():
        torch.onnx.export(model, (ex, torch.ones_like(ex)), onnx_path, input_names=["input_ids", "attention_mask"],
                          output_names=["sentence_embedding"], opset_version=14,
                          dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}})
    ids = torch.tensor(ids_for(3, 20))
    mask = torch.ones_like(ids)
    mask[1, 12:] = 0
    mask[2, 5:] = 0
    with open(check_path, "w") as f:
        json.dump({"input_ids": ids.tolist(), "attention_mask": mask.tolist()}, f)
    check = argparse.Namespace(**dict(vars(a), runs=1, rounds=1, batch="1", seq="8", warmup=0))
    info, _ = run_ort(check, onnx_path, check_path)
    with torch.no_grad():
        want = model(ids, mask)
    err = float((torch.tensor(info["check"]["data"]).reshape(want.shape) - want).abs().max())
    if err > 1e-4:
        sys.exit(f"minilm_peers: ONNX Runtime disagrees with PyTorch (max abs {err:.3g}); not timing it")
    return onnx_path, info["ort"], err, torch.__version__


def print_table(a, rows, conditions):
    c = conditions
    print(f"MiniLM-L6 sentence embeddings (encoder + mean pooling + L2 normalize), f32 (and RLX bf16), {a.threads} threads each")
    print(f"RLX ({c['rlx_device']}) vs ONNX Runtime {c['ort']} (node) vs PyTorch {c['torch']}; {a.rounds} interleaved rounds, "
          f"warm-up {a.warmup} per round, runs {c['runs']}")
    idle = "" if c["cpu_idle_before"] is None else f"CPU idle before start {100 * c['cpu_idle_before']:.0f}%; "
    print(f"{idle}load average {c['loadavg_before'][0]:.2f} before, {c['loadavg_after'][0]:.2f} after")
    if c["ort_vs_torch_max_abs"] is not None:
        print(f"ORT output vs PyTorch on a padded batch: max abs {c['ort_vs_torch_max_abs']:.2g}")
    print()
    cols = [p for p in PEERS if any(p[0] in r for r in rows)]
    pairs = [(v, vt, k, t) for v, vt in cols if v in RLX_VARIANTS for k, t in cols if k not in RLX_VARIANTS]
    label = {"rlx": "RLX", "rlx_bf16": "bf16"}
    head = f"{'batch':>5} {'seq':>4} | " + " | ".join(f"{t + ' p50':>12} {'p90':>8}" for _, t in cols) + " | " + \
        " ".join(f"{label[v] + '/' + t:>11}" for v, _, _, t in pairs)
    print(head)
    print("-" * len(head))
    for r in rows:
        cells = [f"{r[k]['p50_ms']:12.2f} {r[k]['p90_ms']:8.2f}" if k in r else f"{'—':>12} {'—':>8}" for k, _ in cols]
        ratios = [f"{r[v + '_over_' + k]:11.2f}" if v + "_over_" + k in r else f"{'—':>11}" for v, _, k, _ in pairs]
        print(f"{r['batch']:>5} {r['seq']:>4} | " + " | ".join(cells) + " | " + " ".join(ratios))
    print("\ntimes in ms over all rounds; ratio = RLX p50 / peer p50 (below 1: RLX faster)")
    cos = [f"batch {r['batch']}: {r['rlx_bf16_min_cos_vs_f32']:.6f}" for r in rows if "rlx_bf16_min_cos_vs_f32" in r]
    if cos:
        print("RLX bf16: smallest cosine of its embeddings to RLX f32's, " + ", ".join(cos))
    print("Torch: the peer method; Torch*: with OMP_WAIT_POLICY=PASSIVE (see the script's docstring)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rlx", default=os.path.join(ROOT, "build", "bin", "rlx"))
    ap.add_argument("--batch", default="1,8,32")
    ap.add_argument("--seq", default="128")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=0, help="exactly this many timed runs in all (default: adaptive)")
    ap.add_argument("--min-runs", type=int, default=12)
    ap.add_argument("--min-time", type=float, default=3.0)
    ap.add_argument("--skip", default="", help="comma list of peers to leave out: rlx_bf16,ort,torch,torch_passive")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return torch_worker(a)
    skip = set(filter(None, a.skip.split(",")))
    if not os.path.exists(a.rlx):
        sys.exit(f"minilm_peers: no RLX binary at {a.rlx} (build it, or pass --rlx)")
    a.rounds = max(1, a.rounds)

    with tempfile.TemporaryDirectory() as tmp:
        onnx_path, ort_version, ort_err, torch_version = export_and_check(a, tmp)
        idle_before, load_before = cpu_idle(), os.getloadavg()
        runners = {"rlx": lambda: run_rlx(a), "rlx_bf16": lambda: run_rlx(a, "bf16"), "ort": lambda: run_ort(a, onnx_path),
                   "torch": lambda: run_torch(a, False), "torch_passive": lambda: run_torch(a, True)}
        order = [k for k, _ in PEERS if k not in skip]
        times = {k: {} for k in order}
        rlx_info, bf16_cos = None, {}
        for r in range(a.rounds):
            for k in order[r % len(order):] + order[:r % len(order)]:
                log(f"round {r + 1}/{a.rounds}: {dict(PEERS)[k]}")
                info, got = runners[k]()
                rlx_info = info if k == "rlx" else rlx_info
                if k == "rlx_bf16":  # the bf16 run checks itself against f32 on every shape
                    for x in info["results"]:
                        key = (x["batch"], x["seq"])
                        bf16_cos[key] = min(bf16_cos.get(key, 1.0), x["min_cos_vs_f32"])
                for shape, ms in got.items():
                    times[k].setdefault(shape, []).extend(ms)
        load_after = os.getloadavg()

    rows = []
    for shape in sorted(times["rlx"], key=lambda s: (s[1], s[0])):
        row = {"batch": shape[0], "seq": shape[1]}
        for k in order:
            ms = times[k].get(shape)
            if ms:
                row[k] = {"p50_ms": percentile(ms, 50), "p90_ms": percentile(ms, 90), "runs": len(ms)}
        for v in RLX_VARIANTS:
            for k in order:
                if k not in RLX_VARIANTS and k in row and v in row:
                    row[v + "_over_" + k] = row[v]["p50_ms"] / row[k]["p50_ms"]
        if shape in bf16_cos:
            row["rlx_bf16_min_cos_vs_f32"] = bf16_cos[shape]
        rows.append(row)
    s = share(a)
    conditions = {
        "threads": a.threads, "rounds": a.rounds, "warmup_per_round": a.warmup,
        "runs": f"{a.runs} in all" if a.runs else f"per round >= {s['min_runs']} runs and >= {s['min_time']:g} s per shape",
        "cpu_count": os.cpu_count(), "machine": platform.machine(), "cpu_idle_before": idle_before,
        "loadavg_before": load_before, "loadavg_after": load_after, "rlx_device": rlx_info["device"],
        "rlx_precision": rlx_info["precision"], "torch": torch_version, "ort": ort_version, "ort_vs_torch_max_abs": ort_err,
    }
    if a.json:
        print(json.dumps({"workload": "minilm", "conditions": conditions, "results": rows}))
    else:
        print_table(a, rows, conditions)


if __name__ == "__main__":
    main()
