#!/usr/bin/env python3
"""RLX's Fourier transforms on an NVIDIA GPU beside torch.fft, in one sitting.

    python3 bench/fft_cuda_peers.py [--rlx build/bin/rlx] [--cases fft:1048576,...] [--dtype c64|c128]
        [--runs 50] [--json]

Run it on the machine with the GPU, with a PyTorch that has CUDA (Debian's torch 1.13 has none).
Both sides transform a tensor already in device memory: RLX's `rlx bench fft --device cuda`
"ms resident" column (the input kept on the device, one element of the result brought back),
torch.fft timed with CUDA events around each call (p50 of --runs after warm-up). Both run cuFFT,
so the ratio is mostly the launch path and RLX's scale and copy kernels around it. Cases are
rlx bench fft's: TRANSFORM:SHAPE with fft, ifft, rfft, irfft (last axis) and fft2, rfft2 (last two).
"""
import argparse
import json
import os
import subprocess
import sys

from cuda_peers import time_cuda  # CUDA events around each call, p50 after warm-up

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT = "fft:1048576,ifft:1048576,fft:64x4096,fft:256x1000,rfft:1048576,irfft:1048576,fft2:1024x1024,rfft2:1024x1024"


def torch_ms(torch, case, dtype, runs):
    name, shape_text = case.split(":")
    shape = [int(d) for d in shape_text.split("x")]
    cdt = torch.complex128 if dtype == "c128" else torch.complex64
    rdt = torch.float64 if dtype == "c128" else torch.float32
    g = torch.Generator(device="cuda").manual_seed(7)
    if name in ("rfft", "rfft2"):
        x = torch.randn(shape, dtype=rdt, device="cuda", generator=g)
    elif name == "irfft":
        x = torch.randn(shape[:-1] + [shape[-1] // 2 + 1], dtype=cdt, device="cuda", generator=g)
    else:
        x = torch.randn(shape, dtype=cdt, device="cuda", generator=g)
    fn = {
        "fft": lambda: torch.fft.fft(x),
        "ifft": lambda: torch.fft.ifft(x),
        "rfft": lambda: torch.fft.rfft(x),
        "irfft": lambda: torch.fft.irfft(x, n=shape[-1]),
        "fft2": lambda: torch.fft.fft2(x),
        "rfft2": lambda: torch.fft.rfft2(x),
    }[name]
    return time_cuda(torch, fn, runs)

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rlx", default=os.path.join(ROOT, "build", "bin", "rlx"))
    ap.add_argument("--cases", default=DEFAULT)
    ap.add_argument("--dtype", default="c64", choices=["c64", "c128"])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("fft_cuda_peers: needs PyTorch with CUDA")
    if not torch.cuda.is_available():
        sys.exit("fft_cuda_peers: torch sees no CUDA device")
    out = subprocess.run([args.rlx, "bench", "fft", "--device", "cuda", "--dtype", args.dtype, "--cases", args.cases, "--runs", str(args.runs), "--json"],
                         check=True, capture_output=True, text=True).stdout
    rlx = {r["case"]: r for r in json.loads(out.strip().splitlines()[-1])["results"]}
    rows = []
    for case in args.cases.split(","):
        t = torch_ms(torch, case, args.dtype, args.runs)
        r = rlx[case]
        res = r.get("resident_p50_ms")
        rows.append({"case": case, "rlx_ms": r["p50_ms"], "rlx_resident_ms": res, "torch_ms": t,
                     "ratio": (res / t) if res else None, "spot_error": r["spot_error"]})
    if args.json:
        print(json.dumps({"workload": "fft-cuda", "dtype": args.dtype, "gpu": torch.cuda.get_device_name(), "rows": rows}))
        return
    print(f"fft on {torch.cuda.get_device_name()}, {args.dtype}, p50 ms (RLX resident / torch: below 1, RLX faster)\n")
    print(f" {'case':<22} {'RLX host in/out':>16} {'RLX resident':>13} {'torch.fft':>10} {'ratio':>7}")
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "—"
        res = f"{r['rlx_resident_ms']:.3f}" if r["rlx_resident_ms"] else "—"
        print(f" {r['case']:<22} {r['rlx_ms']:>16.3f} {res:>13} {r['torch_ms']:>10.3f} {ratio:>7}")


if __name__ == "__main__":
    main()
