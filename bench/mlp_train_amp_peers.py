#!/usr/bin/env python3
"""RLX vs PyTorch training an MLP on a GPU in f32, bf16 autocast and f16 autocast with dynamic
loss scaling (torch.amp.GradScaler / RLX's amp-f16), in one sitting.

    python3 bench/mlp_train_amp_peers.py --rlx build/bin/rlx [--hidden 4096,4096] [--batch 1024] [--steps 300] [--json]

The workload, identical for both: plain SGD (lr 0.01), softmax cross-entropy, one synthetic
resident batch (no data loading), 784-H…-10. PyTorch runs eagerly (nn.Sequential, autocast,
GradScaler with its defaults: 2^16, ×2 every 2000 finite steps, ×0.5 on overflow); RLX runs
`rlx bench mlp-train --device cuda --precision f32|amp|amp-f16`. Each configuration runs
`--rounds` times alternating; the best images/s is reported. Ratios are RLX / PyTorch.
"""
import argparse
import json
import subprocess
import time


def torch_rate(hidden, batch, steps, precision):
    import torch
    dims = [784, *hidden, 10]
    layers = []
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i < len(dims) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(batch, 784, device="cuda", generator=g)
    y = torch.randint(0, 10, (batch,), device="cuda", generator=g)
    dtype = {"amp": torch.bfloat16, "amp-f16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cuda") if precision == "amp-f16" else None

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = loss_fn(model(x), y)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return loss

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    return batch * steps / (time.perf_counter() - t0), float(loss.detach())


def rlx_rate(rlx, hidden, batch, steps, precision):
    out = subprocess.run([rlx, "bench", "mlp-train", "--device", "cuda", "--precision", precision, "--hidden", ",".join(map(str, hidden)),
                          "--batch", str(batch), "--steps", str(steps), "--warmup", "20", "--json"], check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])["results"][0]
    return r["images_per_second"], r["final_loss"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rlx", default="build/bin/rlx")
    ap.add_argument("--hidden", default="4096,4096")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    hidden = [int(h) for h in a.hidden.split(",")]
    rows = []
    for precision in ["f32", "amp", "amp-f16"]:
        best_t = best_r = 0.0
        for _ in range(a.rounds):
            best_r = max(best_r, rlx_rate(a.rlx, hidden, a.batch, a.steps, precision)[0])
            best_t = max(best_t, torch_rate(hidden, a.batch, a.steps, precision)[0])
        rows.append({"precision": precision, "rlx_images_per_second": best_r, "torch_images_per_second": best_t, "ratio": best_r / best_t})
    if a.json:
        print(json.dumps({"workload": "mlp-train-amp", "hidden": hidden, "batch": a.batch, "rows": rows}))
    else:
        print(f"784-{'-'.join(map(str, hidden))}-10, batch {a.batch}, SGD, {a.steps} steps, best of {a.rounds}")
        print(f"{'precision':10} {'RLX img/s':>12} {'torch img/s':>12} {'RLX/torch':>10}")
        for r in rows:
            print(f"{r['precision']:10} {r['rlx_images_per_second']:12.0f} {r['torch_images_per_second']:12.0f} {r['ratio']:10.2f}")


if __name__ == "__main__":
    main()
