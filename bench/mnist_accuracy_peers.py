#!/usr/bin/python3
"""RLX vs PyTorch test accuracy on Fashion-MNIST with the same model and the same recipe.

    /usr/bin/python3 bench/mnist_accuracy_peers.py [--rlx build/bin/rlx] [--seeds 0-9] [--cnn-seeds 0-4] [--threads 2] [--no-cnn] [--json]

The recipe is `rlx train mnist`'s own (tools/rlx/train.cpp, src/models/classifier.cpp,
src/train/), replicated in PyTorch 1.13:

- data: the MNIST-format directory (`--data`, Fashion-MNIST by default), pixels / 255 as f32, no
  mean/std; the training set reshuffled every epoch (a fresh permutation), batch 128 with the last
  partial batch kept (469 steps per epoch); accuracy on the whole t10k split after the last epoch.
- models: mlp 784-128-10 (linear, relu, linear); cnn [conv3x3 pad 1, relu, maxpool 2] × (16, 32)
  then linear 1568-10. Weights Kaiming-uniform with a = √5, biases U(±1/√fan_in) — PyTorch's
  default nn.Linear / nn.Conv2d init, which RLX reproduces, so the PyTorch side keeps its defaults.
- loss: mean softmax cross-entropy. Optimizers: adam (RLX's default) lr 1e-3, β (0.9, 0.999),
  eps 1e-8; sgd lr 0.05, momentum 0.9 (PyTorch's form, no Nesterov); constant lr, no weight
  decay, no clipping.
- f32, `--threads` threads for both (RLX `--threads`; PyTorch torch.set_num_threads,
  OMP_NUM_THREADS and OMP_WAIT_POLICY=PASSIVE, without which its spinning OpenMP workers starve
  each other on this shared 2-core machine), each run in its own process, the two alternating.

The random streams differ (RLX: mt19937_64 for init and shuffling; PyTorch: its own generator),
so each config runs with several seeds (`--seeds`) on both sides, and the table reports mean ±
sample standard deviation and the difference of the means in points. Speed columns: training
images/s (training loop only, evaluation excluded, as `rlx train` reports it) and the wall time of
the whole process (start-up, data loading, compilation, training and evaluation).

The CNN runs 1 epoch with Adam over `--cnn-seeds` (0-4); `--no-cnn` skips it (RLX builds
before the oneDNN f32 conv of 2026-12-02 train it at ~60 images/s, an hour per run). `--limit N`
trains both sides on the first N training images only. `--same-init` starts PyTorch from RLX's own initial weights for
each seed (exported with `rlx train mnist --epochs 0 --save`), so that only the shuffling differs.

Step check (skip with `--no-step-check`): from RLX's initial weights, 5 steps of each optimizer on
the first 128 training images as the only batch (`rlx train --limit 128`, so the shuffle cannot
reorder it) in both, for both models; the largest weight difference should be f32 rounding,
which shows that the forward pass, gradients and update rule are the same and that accuracy
differences come only from the random streams.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# name, model, epochs, optimizer
MLP_CONFIGS = [("mlp", "mlp", 3, "adam"), ("mlp", "mlp", 3, "sgd")]
CNN_CONFIGS = [("cnn", "cnn", 1, "adam")]
LR = {"adam": 1e-3, "sgd": 0.05}
ARCH = {"mlp": "784-128-10", "cnn": "conv16-conv32-fc10"}


# ---------------------------------------------------------------- PyTorch worker (own process)

def read_idx(path):
    import gzip
    import numpy as np
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 8:
        raise SystemExit(f"{path}: not an unsigned-byte IDX file")
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load_split(data, split):
    def find(stem):
        for ext in ("", ".gz"):
            p = os.path.join(data, stem + ext)
            if os.path.exists(p):
                return p
        raise SystemExit(f"no {stem}[.gz] in {data}")
    return read_idx(find(f"{split}-images-idx3-ubyte")), read_idx(find(f"{split}-labels-idx1-ubyte"))


def read_safetensors(path):
    import numpy as np
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {t['dtype']}, expected F32")
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32).reshape(t["shape"]).copy()
    return out


def named_layers(net, model):
    import torch.nn as nn
    names = ["fc1", "fc2"] if model == "mlp" else ["conv1", "conv2", "fc"]  # RLX's parameter names
    return list(zip(names, [m for m in net if isinstance(m, (nn.Linear, nn.Conv2d))]))


def make_net(cfg):
    import torch
    import torch.nn as nn
    if cfg["model"] == "mlp":
        net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    else:
        net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    if cfg.get("init"):  # start from RLX's initial weights (same seed)
        w = read_safetensors(cfg["init"])
        with torch.no_grad():
            for name, m in named_layers(net, cfg["model"]):
                m.weight.copy_(torch.from_numpy(w[name + ".weight"]))
                m.bias.copy_(torch.from_numpy(w[name + ".bias"]))
    if cfg["optimizer"] == "adam":
        opt = torch.optim.Adam(net.parameters(), lr=LR["adam"], betas=(0.9, 0.999), eps=1e-8)
    else:
        opt = torch.optim.SGD(net.parameters(), lr=LR["sgd"], momentum=0.9)
    return net, opt


def step_check_worker(cfg):
    """PyTorch's side of --step-check: `steps` steps on the first 128 training images (one batch, so
    RLX's shuffle cannot change it) from RLX's initial weights; the largest difference to RLX's result."""
    import numpy as np
    import torch
    import torch.nn as nn
    torch.set_num_threads(cfg["threads"])
    x, y = load_split(cfg["data"], "train")
    shape = (-1, 784) if cfg["model"] == "mlp" else (-1, 1, 28, 28)
    x = torch.from_numpy((x[:128].astype(np.float32) / np.float32(255)).reshape(shape))
    y = torch.from_numpy(y[:128].astype(np.int64))
    net, opt = make_net(cfg)
    for _ in range(cfg["steps"]):
        opt.zero_grad(set_to_none=True)
        nn.CrossEntropyLoss()(net(x), y).backward()
        opt.step()
    init, after = read_safetensors(cfg["init"]), read_safetensors(cfg["after"])
    diff = moved = 0.0
    for name, m in named_layers(net, cfg["model"]):
        for k, t in (("weight", m.weight), ("bias", m.bias)):
            a = t.detach().numpy()
            diff = max(diff, float(np.abs(a - after[f"{name}.{k}"]).max()))
            moved = max(moved, float(np.abs(a - init[f"{name}.{k}"]).max()))
    return {"max_abs_diff": diff, "max_abs_move": moved}


def step_check(a, tmp):
    """Same init, same single batch, same steps in both: the update rules must agree to f32 rounding."""
    rows = []
    for model in ("mlp", "cnn"):
        for optimizer in ("sgd", "adam"):
            cfg = {"data": a.data, "model": model, "optimizer": optimizer, "seed": 7, "threads": a.threads, "steps": 5}
            cfg["init"] = export_rlx_init(a.rlx, cfg, a.threads, tmp)
            cfg["after"] = os.path.join(tmp, f"after-{model}-{optimizer}.safetensors")
            cmd = [a.rlx, "train", "mnist", "--data", a.data, "--model", model, "--optimizer", optimizer, "--lr", repr(LR[optimizer]),
                   "--epochs", str(cfg["steps"]), "--limit", "128", "--batch", "128", "--seed", "7", "--threads", str(a.threads),
                   "--save", cfg["after"], "--json"]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                rows.append({"model": model, "optimizer": optimizer, "error": out.stderr.strip()})
                continue
            env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_WAIT_POLICY="PASSIVE")
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--step-check-worker", json.dumps(cfg)],
                                 capture_output=True, text=True, env=env)
            if out.returncode != 0:
                rows.append({"model": model, "optimizer": optimizer, "error": (out.stderr.strip().splitlines() or ["failed"])[-1]})
                continue
            rows.append({"model": model, "optimizer": optimizer, "steps": cfg["steps"], **json.loads(out.stdout)})
    return rows


def torch_worker(cfg):
    import numpy as np
    import torch
    import torch.nn as nn
    t_start = time.perf_counter()
    torch.set_num_threads(cfg["threads"])
    xtr, ytr = load_split(cfg["data"], "train")
    xte, yte = load_split(cfg["data"], "t10k")
    if cfg["limit"]:
        xtr, ytr = xtr[:cfg["limit"]], ytr[:cfg["limit"]]
    shape = (-1, 784) if cfg["model"] == "mlp" else (-1, 1, 28, 28)
    # RLX: static_cast<float>(u8) / 255.0f
    xtr = torch.from_numpy((xtr.astype(np.float32) / np.float32(255)).reshape(shape))
    xte = torch.from_numpy((xte.astype(np.float32) / np.float32(255)).reshape(shape))
    ytr = torch.from_numpy(ytr.astype(np.int64))
    yte = torch.from_numpy(yte.astype(np.int64))
    torch.manual_seed(cfg["seed"])
    net, opt = make_net(cfg)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(cfg["seed"] + 1)
    n, batch = xtr.shape[0], cfg["batch"]
    train_secs, per_epoch = 0.0, []
    for _ in range(cfg["epochs"]):
        net.train()
        t0 = time.perf_counter()
        order = torch.randperm(n, generator=gen)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            opt.zero_grad(set_to_none=True)
            loss_fn(net(xtr[idx]), ytr[idx]).backward()
            opt.step()
        train_secs += time.perf_counter() - t0
        per_epoch.append(evaluate(net, xte, yte))
    return {"test_accuracy": per_epoch[-1] if per_epoch else evaluate(net, xte, yte), "per_epoch_test_accuracy": per_epoch,
            "images_per_second": n * cfg["epochs"] / train_secs if train_secs else None,
            "inner_seconds": time.perf_counter() - t_start}


def evaluate(net, x, y):
    import torch
    net.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, x.shape[0], 1000):
            correct += (net(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum().item()
    return correct / x.shape[0]


# ---------------------------------------------------------------- driver

def run_torch(cfg, threads, timeout):
    # OMP_WAIT_POLICY=PASSIVE: on this shared 2-core machine PyTorch's spinning OpenMP workers
    # starve each other under any other load (MLP training drops from ~75k to ~5k images/s).
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               OMP_WAIT_POLICY="PASSIVE")
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", json.dumps(cfg)],
                             capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["failed"])[-1]
    r = json.loads(out.stdout)
    r["wall_seconds"] = wall
    return r, None


def run_rlx(rlx, cfg, threads, timeout):
    cmd = [rlx, "train", "mnist", "--data", cfg["data"], "--model", cfg["model"], "--epochs", str(cfg["epochs"]),
           "--batch", str(cfg["batch"]), "--optimizer", cfg["optimizer"], "--lr", repr(LR[cfg["optimizer"]]),
           "--seed", str(cfg["seed"]), "--threads", str(threads), "--json"]
    if cfg["limit"]:
        cmd += ["--limit", str(cfg["limit"])]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["failed"])[-1]
    j = json.loads(out.stdout.strip().splitlines()[-1])
    return {"test_accuracy": j["test_accuracy"], "per_epoch_test_accuracy": [e["test_accuracy"] for e in j["per_epoch"]],
            "images_per_second": j["images_per_second"], "wall_seconds": wall}, None


def export_rlx_init(rlx, cfg, threads, tmp):
    path = os.path.join(tmp, f"init-{cfg['model']}-{cfg['seed']}.safetensors")
    cmd = [rlx, "train", "mnist", "--data", cfg["data"], "--model", cfg["model"], "--epochs", "0", "--seed", str(cfg["seed"]),
           "--threads", str(threads), "--save", path, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"exporting RLX's initial weights failed: {out.stderr.strip()}")
    return path


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            seeds += range(int(lo), int(hi) + 1)
        elif part:
            seeds.append(int(part))
    return seeds


def summary(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    if not vals:
        return None
    return {"mean": statistics.fmean(vals), "sd": statistics.stdev(vals) if len(vals) > 1 else 0.0,
            "min": min(vals), "max": max(vals), "n": len(vals)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--torch-worker", help=argparse.SUPPRESS)
    ap.add_argument("--step-check-worker", help=argparse.SUPPRESS)
    ap.add_argument("--rlx", default=os.path.join(HERE, "..", "build", "bin", "rlx"))
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seeds", default="0-9", help="seeds for the MLP configs: 0,1,2 or 0-9")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--optimizers", default="adam,sgd", help="MLP optimizers to compare (adam is rlx's default)")
    ap.add_argument("--no-cnn", action="store_true", help="skip the CNN (1 epoch; about an hour per run on RLX builds without the oneDNN conv)")
    ap.add_argument("--cnn-seeds", default="0-4")
    ap.add_argument("--limit", type=int, default=0, help="train on the first N training images only (both sides)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per run before giving up on it")
    ap.add_argument("--same-init", action="store_true",
                    help="PyTorch starts from RLX's initial weights for each seed (rlx train --epochs 0 --save); only shuffling differs")
    ap.add_argument("--no-step-check", action="store_true", help="skip the same-init, same-batch update comparison")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.torch_worker:
        print(json.dumps(torch_worker(json.loads(a.torch_worker))))
        return
    if a.step_check_worker:
        print(json.dumps(step_check_worker(json.loads(a.step_check_worker))))
        return
    if not os.path.exists(a.rlx):
        raise SystemExit(f"no RLX binary at {a.rlx} (build it, or pass --rlx)")

    opts = [o for o in a.optimizers.split(",") if o]
    configs = [c for c in MLP_CONFIGS if c[3] in opts] + ([] if a.no_cnn else CNN_CONFIGS)
    load_before = os.getloadavg()[0]
    tmp = tempfile.mkdtemp(prefix="rlx-mnist-peers-")
    results = []
    k = 0
    for name, model, epochs, optimizer in configs:
        seeds = parse_seeds(a.cnn_seeds if model == "cnn" else a.seeds)
        runs = {"rlx": [], "torch": []}
        notes = {}
        for seed in seeds:
            cfg = {"data": a.data, "model": model, "epochs": epochs, "optimizer": optimizer, "batch": a.batch,
                   "seed": seed, "limit": a.limit, "threads": a.threads}
            if a.same_init:
                cfg["init"] = export_rlx_init(a.rlx, cfg, a.threads, tmp)
            order = [("rlx", lambda: run_rlx(a.rlx, cfg, a.threads, a.timeout)), ("torch", lambda: run_torch(cfg, a.threads, a.timeout))]
            if k % 2:
                order.reverse()
            k += 1
            for fw, fn in order:
                r, err = fn()
                if r is None:
                    notes[fw] = err
                else:
                    r["seed"] = seed
                    runs[fw].append(r)
            if not a.json:
                print(f"  {name} {optimizer} {epochs} ep seed {seed}: " +
                      ", ".join(f"{fw} {runs[fw][-1]['test_accuracy']:.4f}" if runs[fw] and runs[fw][-1]["seed"] == seed
                                else f"{fw} failed" for fw in ("rlx", "torch")), file=sys.stderr, flush=True)
        row = {"model": model, "arch": ARCH[model], "epochs": epochs, "optimizer": optimizer, "lr": LR[optimizer],
               "batch": a.batch, "seeds": seeds, "runs": runs, "notes": notes}
        for fw in ("rlx", "torch"):
            row[fw] = {key: summary(runs[fw], key) for key in ("test_accuracy", "images_per_second", "wall_seconds")}
        ra, ta = row["rlx"]["test_accuracy"], row["torch"]["test_accuracy"]
        row["diff_points"] = 100 * (ra["mean"] - ta["mean"]) if ra and ta else None
        # standard error of the difference of the means, in points
        row["diff_se_points"] = (100 * (ra["sd"] ** 2 / ra["n"] + ta["sd"] ** 2 / ta["n"]) ** 0.5
                                 if ra and ta and ra["n"] > 1 and ta["n"] > 1 else None)  # one seed: unknown
        row["within_half_point"] = abs(row["diff_points"]) <= 0.5 if row["diff_points"] is not None else None
        results.append(row)
    checks = [] if a.no_step_check else step_check(a, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    report = {"step_check": checks, "task": "fashion-mnist accuracy, same recipe", "data": a.data, "threads": a.threads, "limit": a.limit,
              "same_init": a.same_init,
              "load_before": load_before, "load_after": os.getloadavg()[0], "results": results}
    if a.json:
        print(json.dumps(report))
        return

    print(f"\n{os.path.basename(a.data)}: t10k test accuracy after training, the same model and recipe in RLX and PyTorch")
    print(f"batch {a.batch}, pixels/255, PyTorch-default init, mean cross-entropy, reshuffled each epoch, f32, {a.threads} threads"
          f"{f', first {a.limit} training images' if a.limit else ''}"
          f"{', PyTorch starting from RLX initial weights' if a.same_init else ''} (load average {load_before:.2f} → {report['load_after']:.2f})\n")
    hdr = (f"{'model':<18} {'opt':<11} {'ep':>2} {'seeds':>5}  {'RLX acc %':>14} {'Torch acc %':>14} {'Δ pts ± se':>13} {'≤0.5':>4}  "
           f"{'RLX img/s':>9} {'Torch img/s':>11}  {'RLX wall s':>10} {'Torch wall s':>12}")
    print(hdr)
    pct = lambda s: f"{100 * s['mean']:6.2f} ± {100 * s['sd']:4.2f}" if s else f"{'—':>14}"
    num = lambda s, w, f="{:.0f}": (f.format(s["mean"]) if s else "—").rjust(w)
    for r in results:
        opt = f"{r['optimizer']} {r['lr']:g}"
        se = f"{r['diff_se_points']:4.2f}" if r["diff_se_points"] is not None else "   ?"
        d = (f"{r['diff_points']:+6.2f} ± {se} {'yes' if r['within_half_point'] else 'NO':>4}"
             if r["diff_points"] is not None else f"{'—':>13} {'—':>4}")
        print(f"{r['arch']:<18} {opt:<11} {r['epochs']:>2} {len(r['seeds']):>5}  {pct(r['rlx']['test_accuracy'])} "
              f"{pct(r['torch']['test_accuracy'])} {d}  {num(r['rlx']['images_per_second'], 9)} "
              f"{num(r['torch']['images_per_second'], 11)}  {num(r['rlx']['wall_seconds'], 10, '{:.1f}')} "
              f"{num(r['torch']['wall_seconds'], 12, '{:.1f}')}")
        for fw, err in r["notes"].items():
            print(f"   {fw}: {err}")
    print("\nacc: mean ± sample sd over the seeds; Δ pts = RLX mean − PyTorch mean in percentage points ± its standard error")
    print("(issue 8's target: |Δ| ≤ 0.5);")
    print("img/s: training loop only; wall: whole process (start-up, data, compile, train, evaluate).")
    if checks:
        print("\nstep check — RLX's initial weights, 5 steps on the same batch of 128 in both, largest |weight difference|:")
        for c in checks:
            print(f"  {c['model']} {c['optimizer']:<4} " + (f"error: {c['error']}" if "error" in c else
                  f"{c['max_abs_diff']:.1e} (the weights moved up to {c['max_abs_move']:.1e})"))
    for r in results:
        for fw in ("rlx", "torch"):
            s = r[fw]["test_accuracy"]
            if s:
                print(f"  {r['arch']} {r['optimizer']} {fw:<5} per seed: " +
                      " ".join(f"{x['seed']}:{100 * x['test_accuracy']:.2f}" for x in r["runs"][fw]) +
                      f"  (range {100 * s['min']:.2f}–{100 * s['max']:.2f})")


if __name__ == "__main__":
    main()
