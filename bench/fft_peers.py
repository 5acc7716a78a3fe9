#!/usr/bin/python3
"""Fourier transforms side by side: RLX's cpu device (FFTW) against numpy.fft (Debian's NumPy, its
pocketfft), in one sitting.

Parity: each transform on the same seeded complex128/float64 data (written as .npy, run through
`rlx run` on a one-node graph) against numpy.fft — fft/ifft/rfft/irfft along one axis, fftn/rfftn/
irfftn over several, every norm: max |rlx − numpy| / max |numpy|, target ≤ 1e-10.
Speed: `rlx bench fft --json` against the numpy.fft call timed the same way (p50 after a warm-up),
interleaved for --rounds rounds (best p50 of each side); ratio = numpy ms / rlx ms (target ≥ 1.0).
numpy.fft runs on one thread, so RLX does too unless --threads says otherwise.

  /usr/bin/python3 bench/fft_peers.py [--rlx build/bin/rlx] [--cases fft:1048576,…] [--threads 1]
      [--devices cpu,reference] [--rounds 3] [--json]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

CASES = "fft:1048576,ifft:1048576,fft:64x4096,fft:256x1000,rfft:1048576,irfft:1048576,fft2:1024x1024,rfft2:1024x1024"

# (name, numpy function, rlx op, attributes, input kind, shape); irfft's shapes are its real output's
PARITY = [
    ("fft", lambda x: np.fft.fft(x), "fft", "axes=[1]", "c", (6, 20)),
    ("ifft", lambda x: np.fft.ifft(x, axis=0), "fft", "axes=[0], inverse=true", "c", (9, 4)),
    ("fft ortho", lambda x: np.fft.fft(x, norm="ortho"), "fft", "axes=[1], norm=ortho", "c", (3, 17)),
    ("fftn", lambda x: np.fft.fftn(x, axes=(2, 0)), "fft", "axes=[2,0]", "c", (4, 3, 10)),
    ("ifftn forward", lambda x: np.fft.ifftn(x, axes=(0, 1), norm="forward"), "fft", "axes=[0,1], inverse=true, norm=forward", "c", (6, 7)),
    ("rfft", lambda x: np.fft.rfft(x), "rfft", "axes=[1]", "r", (5, 30)),
    ("rfft odd", lambda x: np.fft.rfft(x, axis=0), "rfft", "axes=[0]", "r", (15, 3)),
    ("rfftn", lambda x: np.fft.rfftn(x, axes=(1, 2)), "rfft", "axes=[1,2]", "r", (2, 6, 8)),
    ("irfft", lambda x: np.fft.irfft(x, n=30), "irfft", "axes=[1], n=30", "c", (5, 16)),
    ("irfft odd", lambda x: np.fft.irfft(x, n=15, axis=0), "irfft", "axes=[0], n=15", "c", (8, 3)),
    ("irfftn ortho", lambda x: np.fft.irfftn(x, s=(6, 8), axes=(1, 2), norm="ortho"), "irfft", "axes=[1,2], n=8, norm=ortho", "c", (2, 6, 5)),
]


def data(kind, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if kind == "c" else x


def type_text(x):
    dt = {np.dtype("float64"): "f64", np.dtype("complex128"): "c128"}[x.dtype]
    return f"{dt}[{','.join(str(d) for d in x.shape)}]"


def parity(rlx, case, device, tmp, seed):
    name, fn, op, attrs, kind, shape = case
    x = data(kind, shape, seed)
    ref = fn(x)
    tag = name.replace(" ", "_")
    text = (f"graph @{tag}(%x: {type_text(x)}) {{\n  %y = mir.{op}(%x) {{{attrs}}} : {type_text(ref)}\n  return %y\n}}\n")
    path = os.path.join(tmp, f"{tag}.rlx")
    with open(path, "w") as f:
        f.write(text)
    np.save(os.path.join(tmp, f"{tag}_x.npy"), x)
    subprocess.run([rlx, "run", path, "--device", device, "--input", f"x={os.path.join(tmp, f'{tag}_x.npy')}", "--output", os.path.join(tmp, tag)],
                   check=True, capture_output=True, text=True)
    got = np.load(os.path.join(tmp, tag, "y.npy"))
    if got.shape != ref.shape:
        raise SystemExit(f"{name}: rlx gave shape {got.shape}, numpy {ref.shape}")
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-300))


def numpy_call(case):
    transform, shape_text = case.split(":")
    shape = tuple(int(d) for d in shape_text.split("x"))
    rng = np.random.default_rng(1)
    if transform in ("rfft", "rfft2"):
        x = rng.standard_normal(shape)
    elif transform == "irfft":
        x = rng.standard_normal(shape[:-1] + (shape[-1] // 2 + 1,)) * (1 + 0j)
    else:
        x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    fns = {"fft": lambda: np.fft.fft(x), "ifft": lambda: np.fft.ifft(x), "rfft": lambda: np.fft.rfft(x),
           "irfft": lambda: np.fft.irfft(x, n=shape[-1]), "fft2": lambda: np.fft.fft2(x), "rfft2": lambda: np.fft.rfft2(x)}
    return fns[transform]


def numpy_ms(case, warmup=2, min_runs=5, min_seconds=1.0):
    fn = numpy_call(case)
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < min_seconds:
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
        if len(times) >= 500:
            break
    return float(np.median(times))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rlx", default="build/bin/rlx")
    p.add_argument("--cases", default=CASES)
    p.add_argument("--devices", default="cpu,reference")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    result = {"parity": [], "speed": [], "threads": args.threads, "numpy": np.__version__}
    with tempfile.TemporaryDirectory() as tmp:
        for device in args.devices.split(","):
            for i, case in enumerate(PARITY):
                result["parity"].append({"case": case[0], "device": device, "max_rel_diff": parity(args.rlx, case, device, tmp, seed=i)})
    for case in args.cases.split(","):
        rlx_best, np_best = float("inf"), float("inf")
        for _ in range(args.rounds):  # interleaved: a slow minute of a shared machine hits both sides
            out = subprocess.run([args.rlx, "bench", "fft", "--cases", case, "--threads", str(args.threads), "--warmup", "2", "--min-runs", "5",
                                  "--min-time", "1", "--json"], check=True, capture_output=True, text=True).stdout
            rlx_best = min(rlx_best, json.loads(out)["results"][0]["p50_ms"])
            np_best = min(np_best, numpy_ms(case))
        result["speed"].append({"case": case, "rlx_ms": rlx_best, "numpy_ms": np_best, "ratio": np_best / rlx_best})
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print("parity, complex128/float64: max |rlx - numpy| / max |numpy| (target <= 1e-10)")
    for r in result["parity"]:
        print(f"  {r['case']:<16} {r['device']:<10} {r['max_rel_diff']:.2e} {'ok' if r['max_rel_diff'] <= 1e-10 else 'OVER'}")
    print(f"\nspeed, complex128, {args.threads} thread(s), p50 ms (ratio = numpy / rlx; NumPy {np.__version__})")
    print(f"  {'case':<22} {'rlx':>10} {'numpy':>10} {'ratio':>7}")
    for r in result["speed"]:
        print(f"  {r['case']:<22} {r['rlx_ms']:>10.3f} {r['numpy_ms']:>10.3f} {r['ratio']:>7.2f}")


if __name__ == "__main__":
    main()
