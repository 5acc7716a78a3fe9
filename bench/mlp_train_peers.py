#!/usr/bin/python3
"""RLX vs NumPy+OpenBLAS vs PyTorch training an MLP, in one sitting.

    /usr/bin/python3 bench/mlp_train_peers.py [--rlx build/bin/rlx] [--threads 2] [--steps 200] [--json]

The workload, identical for all: plain SGD (lr 0.01), softmax cross-entropy, synthetic resident
batches (no data loading), 784-128-10 at batch 128 and 784-512-512-10 at batch 256, f32.

- NumPy: hand-written forward and backward over OpenBLAS matmuls (the peer method).
- PyTorch: eager nn.Sequential + CrossEntropyLoss + optim.SGD, torch.set_num_threads(threads).
- RLX: `rlx bench mlp-train --json` — one compiled training step per batch.

Each framework runs in its own process, `--rounds` times in rotating order; the best images/s
of the rounds is reported (throughput on a shared machine is limited by other load, never
helped by it). Ratios are RLX / peer: above 1 means RLX is faster.
"""
import argparse
import json
import os
import subprocess
import sys
import time

CONFIGS = [((128,), 128), ((512, 512), 256)]

NUMPY_CODE = r'''
import json, sys, time
import numpy as np
hidden, batch, steps = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0); dims = [784, *hidden, 10]
W = [rng.standard_normal((a, b), dtype=np.float32) * np.float32(np.sqrt(2 / a)) for a, b in zip(dims, dims[1:])]
B = [np.zeros(b, np.float32) for b in dims[1:]]
x = rng.standard_normal((batch, 784), dtype=np.float32); y = rng.integers(0, 10, batch)
lr = np.float32(0.01)
def step():
    acts = [x]
    for i in range(len(W)):
        z = acts[-1] @ W[i] + B[i]
        acts.append(np.maximum(z, 0) if i < len(W) - 1 else z)
    z = acts[-1]; z = z - z.max(1, keepdims=True); p = np.exp(z); p /= p.sum(1, keepdims=True)
    p[np.arange(batch), y] -= 1; g = p / batch
    for i in reversed(range(len(W))):
        gw = acts[i].T @ g; gb = g.sum(0)
        if i: g = (g @ W[i].T) * (acts[i] > 0)
        W[i] -= lr * gw; B[i] -= lr * gb
for _ in range(10): step()
s = time.perf_counter()
for _ in range(steps): step()
print(batch * steps / (time.perf_counter() - s))
'''

TORCH_CODE = r'''
import json, sys, time
import torch, torch.nn as nn
hidden, batch, steps, threads = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads); torch.manual_seed(0)
layers = []; d = 784
for h in hidden: layers += [nn.Linear(d, h), nn.ReLU()]; d = h
net = nn.Sequential(*layers, nn.Linear(d, 10)); opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(batch, 784); y = torch.randint(0, 10, (batch,)); lf = nn.CrossEntropyLoss()
def step():
    opt.zero_grad(set_to_none=True); lf(net(x), y).backward(); opt.step()
for _ in range(10): step()
s = time.perf_counter()
for _ in range(steps): step()
print(batch * steps / (time.perf_counter() - s))
'''


def run_python(code, args, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run(["/usr/bin/python3", "-c", code, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
    return float(out.stdout.strip()), None


def run_rlx(rlx, hidden, batch, steps, threads):
    cmd = [rlx, "bench", "mlp-train", "--hidden", ",".join(map(str, hidden)), "--batch", str(batch), "--steps", str(steps),
           "--threads", str(threads), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return json.loads(out.stdout)["results"][0]["images_per_second"], None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rlx", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "rlx"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    load_before = os.getloadavg()[0]
    results = []
    for hidden, batch in CONFIGS:
        best = {"rlx": None, "numpy": None, "torch": None}
        notes = {}
        runners = [
            ("rlx", lambda: run_rlx(a.rlx, hidden, batch, a.steps, a.threads)),
            ("numpy", lambda: run_python(NUMPY_CODE, [json.dumps(hidden), str(batch), str(a.steps)], a.threads)),
            ("torch", lambda: run_python(TORCH_CODE, [json.dumps(hidden), str(batch), str(a.steps), str(a.threads)], a.threads)),
        ]
        for r in range(a.rounds):
            order = runners[r % 3:] + runners[:r % 3]
            for name, fn in order:
                v, err = fn()
                if v is None:
                    notes[name] = err
                elif best[name] is None or v > best[name]:
                    best[name] = v
        row = {"model": "784-" + "-".join(map(str, hidden)) + "-10", "batch": batch, "images_per_second": best, "notes": notes}
        for peer in ("numpy", "torch"):
            row[f"rlx_vs_{peer}"] = best["rlx"] / best[peer] if best["rlx"] and best[peer] else None
        results.append(row)
    report = {"workload": "mlp-train", "threads": a.threads, "steps": a.steps, "rounds": a.rounds,
              "load_before": load_before, "load_after": os.getloadavg()[0], "results": results}
    if a.json:
        print(json.dumps(report))
        return
    print(f"MLP training, SGD, synthetic resident batches, {a.threads} threads, best of {a.rounds} rounds "
          f"(load average {report['load_before']:.2f} → {report['load_after']:.2f})\n")
    print(f"{'model':<18} {'batch':>5} {'RLX img/s':>12} {'NumPy img/s':>12} {'Torch img/s':>12} {'RLX/NumPy':>10} {'RLX/Torch':>10}")
    fmt = lambda v: f"{v:12.0f}" if v else f"{'—':>12}"
    ratio = lambda v: f"{v:10.2f}" if v else f"{'—':>10}"
    for r in results:
        b = r["images_per_second"]
        print(f"{r['model']:<18} {r['batch']:>5} {fmt(b['rlx'])} {fmt(b['numpy'])} {fmt(b['torch'])} {ratio(r['rlx_vs_numpy'])} {ratio(r['rlx_vs_torch'])}")
        for k, v in r["notes"].items():
            print(f"   {k}: {v}")


if __name__ == "__main__":
    main()
