#!/usr/bin/python3
"""Dense linear algebra side by side: RLX's cpu device against NumPy/SciPy (Debian's, on the same
OpenBLAS), in one sitting.

Parity: each op on the same seeded f64 inputs (written as .npy, run through `rlx run` on a one-node
graph), compared with numpy.linalg / scipy.linalg after the IR's uniqueness conventions (sorted
values, R's diagonal non-negative, each vector's largest entry positive): the figure is
max |rlx − numpy| / max |numpy| over the op's outputs; the target is ≤ 1e-10.
Speed: `rlx bench linalg --json` against the NumPy/SciPy call timed the same way (p50 of runs
after a warm-up), same thread count, interleaved for --rounds rounds (best p50 of each side); ratio = numpy ms / rlx ms (≥ 0.9 is the target for the
factorizations).

  /usr/bin/python3 bench/linalg_peers.py [--rlx build/bin/rlx] [--sizes 256,1024] [--parity-size 64]
      [--ops cholesky,lu,…] [--threads 2] [--devices cpu,reference] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# OpenBLAS reads OPENBLAS_CORETYPE at load time. Both sides run under the same setting: unset by
# default (../shared/ENV.md), or --coretype NAME for both where OpenBLAS 0.3.21 does not know the CPU
# (it falls back to its Prescott kernels on Emerald Rapids).
def _wanted_env():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    if "--coretype" in sys.argv[:-1]:
        env["OPENBLAS_CORETYPE"] = sys.argv[sys.argv.index("--coretype") + 1]
    return env


if {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")} != {k: _wanted_env().get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}:
    os.execve(sys.executable, [sys.executable] + sys.argv, _wanted_env())

import numpy as np
import scipy.linalg

OPS = ["cholesky", "lu", "qr", "eigh", "eig", "svd", "solve", "triangular_solve", "inv", "slogdet", "matrix_exp", "det", "lstsq"]


def operands(op, n, seed):
    """The inputs rlx bench linalg draws, in distribution (SPD for cholesky, a heavy diagonal for solves)."""
    rng = np.random.default_rng(seed)
    if op == "cholesky":
        g = rng.standard_normal((n, n)) / np.sqrt(n)
        return [g @ g.T + np.eye(n)]
    conditioned = op in ("lu", "solve", "triangular_solve", "inv", "slogdet", "det")
    scale = 1 / np.sqrt(n) if op == "matrix_exp" else 1.0
    a = rng.standard_normal((n, n)) * scale + (4 * np.sqrt(n) * np.eye(n) if conditioned else 0)
    if op == "solve":
        return [a, rng.standard_normal((n, 1))]
    if op == "triangular_solve":
        return [a, rng.standard_normal((n, n))]
    if op == "lstsq":
        return [rng.standard_normal((n + n // 2, n)), rng.standard_normal((n + n // 2, 2))]
    return [a]


def positive_columns(x, rows_of=None):
    """Flips each column of x (and that row of rows_of) so its largest-magnitude entry is positive."""
    x = x.copy()
    rows_of = None if rows_of is None else rows_of.copy()
    at = np.argmax(np.abs(x), axis=0)
    flip = x[at, np.arange(x.shape[1])] < 0
    x[:, flip] *= -1
    if rows_of is not None:
        rows_of[flip, :] *= -1
    return x, rows_of


def canonical_eig(w, v):
    """numpy.linalg.eig's result in mir.eig's convention: sorted by real part (ties within
    1e-9·max|w| by imaginary part), each column of unit length with its largest entry real and positive."""
    w, v = w.astype(np.complex128), v.astype(np.complex128)
    tie = 1e-9 * max(1.0, float(np.max(np.abs(w))))
    order = sorted(range(len(w)), key=lambda k: k)
    import functools
    def cmp(a, b):
        if abs(w[a].real - w[b].real) > tie:
            return -1 if w[a].real < w[b].real else 1
        return -1 if w[a].imag < w[b].imag else (1 if w[a].imag > w[b].imag else 0)
    order = sorted(order, key=functools.cmp_to_key(cmp))
    w, v = w[order], v[:, order]
    for k in range(v.shape[1]):
        col = v[:, k] / np.linalg.norm(v[:, k])
        mag = np.abs(col)
        at = int(np.argmax(mag >= mag.max() * (1 - 1e-9)))
        v[:, k] = col * np.conj(col[at]) / mag[at]
    return [w, v]


def numpy_op(op, a):
    """The NumPy/SciPy result of an op, in the IR's conventions."""
    if op == "cholesky":
        return [np.linalg.cholesky(np.tril(a[0]) + np.tril(a[0], -1).T)]
    if op == "triangular_solve":
        return [scipy.linalg.solve_triangular(a[0], a[1], lower=True)]
    if op == "lu":
        lu, piv = scipy.linalg.lu_factor(a[0])
        perm = np.arange(a[0].shape[0])
        for i, p in enumerate(piv):
            perm[[i, p]] = perm[[p, i]]
        return [lu, piv.astype(np.int32), perm.astype(np.int64)]
    if op == "solve":
        return [np.linalg.solve(a[0], a[1])]
    if op == "inv":
        return [np.linalg.inv(a[0])]
    if op == "slogdet":
        s, l = np.linalg.slogdet(a[0])
        return [np.array(s), np.array(l)]
    if op == "det":
        return [np.array(np.linalg.det(a[0]))]
    if op == "qr":
        q, r = np.linalg.qr(a[0])
        flip = np.diag(r) < 0
        q[:, flip] *= -1
        r[flip, :] *= -1
        return [q, r]
    if op == "eigh":
        w, v = np.linalg.eigh(a[0], UPLO="L")
        return [w, positive_columns(v)[0]]
    if op == "eig":
        return canonical_eig(*np.linalg.eig(a[0]))
    if op == "svd":
        u, s, vh = np.linalg.svd(a[0], full_matrices=False)
        u, vh = positive_columns(u, vh)
        return [u, s, vh]
    if op == "matrix_exp":
        return [scipy.linalg.expm(a[0])]
    if op == "lstsq":
        return [np.linalg.lstsq(a[0], a[1], rcond=None)[0]]
    raise ValueError(op)


def type_text(x):
    dt = {np.dtype("float64"): "f64", np.dtype("int32"): "i32", np.dtype("int64"): "i64", np.dtype("complex128"): "c128"}[x.dtype]
    return f"{dt}[{','.join(str(d) for d in x.shape)}]"


def parity(rlx, op, n, device, tmp):
    a = operands(op, n, seed=n)
    ref = numpy_op(op, a)
    level = "hir" if op in ("det", "lstsq") else "mir"
    names = [f"in{i}" for i in range(len(a))]
    outs = [f"out{i}" for i in range(len(ref))]
    text = (f"graph @{op}({', '.join(f'%{nm}: {type_text(x)}' for nm, x in zip(names, a))}) {{\n"
            f"  {', '.join('%' + o for o in outs)} = {level}.{op}({', '.join('%' + nm for nm in names)}) : {', '.join(type_text(r) for r in ref)}\n"
            f"  return {', '.join('%' + o for o in outs)}\n}}\n")
    path = os.path.join(tmp, f"{op}.rlx")
    with open(path, "w") as f:
        f.write(text)
    cmd = [rlx, "run", path, "--device", device, "--output", os.path.join(tmp, op)]
    for nm, x in zip(names, a):
        np.save(os.path.join(tmp, f"{op}_{nm}.npy"), x)
        cmd += ["--input", f"{nm}={os.path.join(tmp, f'{op}_{nm}.npy')}"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    worst = 0.0
    for o, r in zip(outs, ref):
        got = np.load(os.path.join(tmp, op, f"{o}.npy"))
        if got.shape != r.shape:
            raise SystemExit(f"{op}: output {o} has shape {got.shape}, numpy's {r.shape}")
        worst = max(worst, float(np.max(np.abs(got.astype(r.dtype) - r)) / max(float(np.max(np.abs(r))), 1e-300)))
    return worst


def numpy_ms(op, n, warmup=2, min_runs=3, min_seconds=1.0):
    a = operands(op, n, seed=n)
    fn = lambda: numpy_op(op, a)
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < min_seconds:
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
        if len(times) >= 200:
            break
    return float(np.median(times))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rlx", default="build/bin/rlx")
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--sizes", default="256,1024")
    p.add_argument("--parity-size", type=int, default=64)
    p.add_argument("--devices", default="cpu,reference")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--coretype", help="OPENBLAS_CORETYPE for both sides (e.g. SkylakeX)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    ops = args.ops.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    import ctypes
    blas = ctypes.CDLL("libopenblas.so.0")
    blas.openblas_get_corename.restype = ctypes.c_char_p
    core = blas.openblas_get_corename().decode()
    result = {"parity": [], "speed": [], "threads": args.threads, "numpy": np.__version__, "scipy": scipy.__version__, "openblas_core": core}
    with tempfile.TemporaryDirectory() as tmp:
        for device in args.devices.split(","):
            for op in ops:
                result["parity"].append({"op": op, "device": device, "n": args.parity_size,
                                         "max_rel_diff": parity(args.rlx, op, args.parity_size, device, tmp)})
    # Interleaved: each (op, n) alternates RLX and NumPy for --rounds rounds and keeps each side's best
    # p50, so a slow minute of a shared machine hits both sides alike.
    bench_ops = [o for o in ops if o not in ("det", "lstsq")]
    for op in bench_ops:
        for n in sizes:
            rlx_best, np_best = float("inf"), float("inf")
            for _ in range(args.rounds):
                out = subprocess.run([args.rlx, "bench", "linalg", "--ops", op, "--sizes", str(n), "--dtype", "f64", "--threads", str(args.threads),
                                      "--warmup", "2", "--min-runs", "3", "--min-time", "1", "--json"], check=True, capture_output=True, text=True).stdout
                rlx_best = min(rlx_best, json.loads(out)["results"][0]["p50_ms"])
                np_best = min(np_best, numpy_ms(op, n))
            result["speed"].append({"op": op, "n": n, "rlx_ms": rlx_best, "numpy_ms": np_best, "ratio": np_best / rlx_best})
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"parity, f64, n={args.parity_size}: max |rlx - numpy| / max |numpy| (target <= 1e-10)")
    for r in result["parity"]:
        print(f"  {r['op']:<18} {r['device']:<10} {r['max_rel_diff']:.2e} {'ok' if r['max_rel_diff'] <= 1e-10 else 'OVER'}")
    print(f"\nspeed, f64, {args.threads} threads, p50 ms (ratio = numpy / rlx; NumPy {np.__version__}, SciPy {scipy.__version__}, OpenBLAS kernels: {core})")
    print(f"  {'op':<18} {'n':>6} {'rlx':>10} {'numpy':>10} {'ratio':>7}")
    for r in result["speed"]:
        print(f"  {r['op']:<18} {r['n']:>6} {r['rlx_ms']:>10.3f} {r['numpy_ms']:>10.3f} {r['ratio']:>7.2f}")


if __name__ == "__main__":
    main()
