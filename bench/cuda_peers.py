#!/usr/bin/env python3
"""RLX vs PyTorch on an NVIDIA GPU, in one sitting: MiniLM-L6 inference and MLP training.

    python3 bench/cuda_peers.py [--rlx build/bin/rlx] [--batch 1,32] [--seq 128] [--runs 200]
        [--no-compile] [--mlp-batch 1024] [--json]

Run it on the machine with the GPU, with a PyTorch that has CUDA (Debian's torch 1.13 has none).

- MiniLM-L6 (6 layers, hidden 384, 12 heads, FFN 1536; mean pooling + L2 normalize), fp16,
  full batches of ids 1000 + (i*7919) mod 29000 at `--seq` tokens:
  - RLX: `rlx bench minilm --device cuda --precision f16 --json` (f16 matmuls and attention
    products, f32 accumulation, norms and softmax; its own seeded weights, the same arithmetic);
  - Torch eager: the plain-PyTorch reference tests/fixtures/bert/bert_reference.py on cuda under
    torch.no_grad and torch.autocast(float16) (fp16 matmuls, f32 softmax and norms — the same
    policy as RLX's f16); Torch compile: the same through torch.compile (PyTorch ≥ 2;
    `--no-compile` skips it). Each is timed with CUDA events around every call, p50 over
    `--runs` calls after warm-up.
- MLP 784-128-10 training, SGD lr 0.01, softmax cross-entropy, one resident synthetic batch of
  `--mlp-batch` images: RLX `rlx bench mlp-train --device cuda` vs PyTorch eager (zero_grad,
  forward, backward, step), images/s.

Ratios are RLX time / Torch time (below 1: RLX faster) and RLX images/s / Torch images/s.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ids_for(batch, seq):
    return [[1000 + ((b * seq + s) * 7919) % 29000 for s in range(seq)] for b in range(batch)]


def p50(v):
    v = sorted(v)
    pos = 0.5 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def time_cuda(torch, fn, runs, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    return p50(ms)


def rlx_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"cuda_peers: {' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def torch_minilm(torch, batches, seq, runs, compile_too):
    sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "bert"))
    from bert_reference import MINILM_L6, BertReference, SentenceEncoder, random_weights
    model = SentenceEncoder(BertReference(MINILM_L6, random_weights(MINILM_L6, seed=0))).eval().cuda()
    compiled = None
    if compile_too and hasattr(torch, "compile"):
        compiled = torch.compile(model)
    out = {}
    for b in batches:
        ids = torch.tensor(ids_for(b, seq), device="cuda")
        mask = torch.ones_like(ids)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            row = {"eager_ms": time_cuda(torch, lambda: model(ids, mask), runs)}
            if compiled is not None:
                row["compile_ms"] = time_cuda(torch, lambda: compiled(ids, mask), runs, warmup=20)
        out[b] = row
    return out


def torch_mlp(torch, batch, steps=200):
    import torch.nn as nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(batch, 784, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    lf = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        lf(net(x), y).backward()
        opt.step()
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return batch * steps / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rlx", default=os.path.join(ROOT, "build", "bin", "rlx"))
    ap.add_argument("--batch", default="1,32")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--mlp-batch", type=int, default=1024)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    batches = [int(b) for b in a.batch.split(",")]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and not torch.cuda.is_available():
        torch = None

    r = rlx_json([a.rlx, "bench", "minilm", "--device", "cuda", "--precision", "f16", "--batch", a.batch, "--seq", str(a.seq),
                  "--runs", str(a.runs), "--json"])
    rlx_minilm = {x["batch"]: x for x in r["results"]}
    m = rlx_json([a.rlx, "bench", "mlp-train", "--device", "cuda", "--batch", str(a.mlp_batch), "--json"])
    rlx_mlp = m["results"][0]["images_per_second"]

    tm, tmlp, tver, gpu = {}, None, None, None
    if torch is not None:
        tver, gpu = torch.__version__, torch.cuda.get_device_name(0)
        tm = torch_minilm(torch, batches, a.seq, a.runs, not a.no_compile)
        tmlp = torch_mlp(torch, a.mlp_batch)

    rows = []
    for b in batches:
        row = {"batch": b, "seq": a.seq, "rlx_ms": rlx_minilm[b]["p50_ms"], "rlx_min_cos_vs_f32": rlx_minilm[b].get("min_cos_vs_f32")}
        row.update(tm.get(b, {}))
        for k in ("eager_ms", "compile_ms"):
            if k in row:
                row["rlx_over_" + k[:-3]] = row["rlx_ms"] / row[k]
        rows.append(row)
    mlp = {"batch": a.mlp_batch, "rlx_images_per_second": rlx_mlp, "torch_images_per_second": tmlp,
           "rlx_over_torch": rlx_mlp / tmlp if tmlp else None}
    if a.json:
        print(json.dumps({"gpu": gpu, "torch": tver, "minilm_f16": rows, "mlp_train": mlp}))
        return
    print(f"GPU {gpu or '?'}; PyTorch {tver or 'not available (RLX alone)'}")
    print(f"\nMiniLM-L6 fp16, seq {a.seq}, p50 ms over {a.runs} calls (CUDA events)")
    print(f"{'batch':>5} | {'RLX':>8} {'eager':>8} {'compile':>8} | {'RLX/eager':>9} {'RLX/compile':>11} | cos vs f32")
    for r in rows:
        f = lambda k: f"{r[k]:8.3f}" if k in r else f"{'—':>8}"
        g = lambda k, w: f"{r[k]:{w}.2f}" if k in r else f"{'—':>{w}}"
        print(f"{r['batch']:>5} | {f('rlx_ms')} {f('eager_ms')} {f('compile_ms')} | {g('rlx_over_eager', 9)} {g('rlx_over_compile', 11)} | "
              f"{r['rlx_min_cos_vs_f32']:.7f}")
    print(f"\nMLP 784-128-10 training, batch {a.mlp_batch}: RLX {rlx_mlp:,.0f} images/s, PyTorch eager "
          + (f"{tmlp:,.0f} images/s, ratio {rlx_mlp / tmlp:.2f}" if tmlp else "—"))


if __name__ == "__main__":
    main()
