#!/usr/bin/python3
"""The 2D Poisson equation (5-point stencil on an N×N grid, N² unknowns) by a sparse direct solve:
RLX's csr_solve (CHOLMOD on the cpu device) beside scipy.sparse.linalg.spsolve (SuperLU, Debian's
SciPy) on the same matrix and right-hand side, interleaved, same thread count; each answer's
residual ‖A u − f‖/‖f‖ is printed beside its time (RLX's is checked by rlx bench poisson itself).

  /usr/bin/python3 bench/sparse_peers.py [--rlx build/bin/rlx] [--grid 300,1000] [--rounds 2] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

if any(v in os.environ for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")):  # ../shared/ENV.md
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def poisson(n):
    """The matrix rlx bench poisson builds: 4 on the diagonal, −1 to each grid neighbour; f as there."""
    t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
    a = (sp.kron(sp.eye(n), t) + sp.kron(t, sp.eye(n))).tocsr()
    a.sort_indices()
    f = np.sin(0.001 * np.arange(n * n)) + 1
    return a, f


def scipy_ms(a, f, runs):
    times, u = [], None
    for _ in range(runs):
        t = time.perf_counter()
        u = spla.spsolve(a.tocsc(), f)
        times.append((time.perf_counter() - t) * 1e3)
    return min(times), u


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rlx", default="build/bin/rlx")
    p.add_argument("--grid", default="300,1000")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = []
    for n in [int(g) for g in args.grid.split(",")]:
        a, f = poisson(n)
        rlx_best, sp_best = float("inf"), float("inf")
        for _ in range(args.rounds):
            out = subprocess.run([args.rlx, "bench", "poisson", "--grid", str(n), "--threads", str(args.threads), "--runs", "2", "--json"],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out)["results"][0]
            rlx_best = min(rlx_best, r["p50_ms"])
            ms, u = scipy_ms(a, f, 1)
            sp_best = min(sp_best, ms)
        res = float(np.linalg.norm(a @ u - f) / np.linalg.norm(f))
        rows.append({"grid": n, "unknowns": n * n, "nnz": int(a.nnz), "rlx_ms": rlx_best, "scipy_ms": sp_best, "ratio": sp_best / rlx_best,
                     "rlx_residual": r["residual"], "scipy_residual": res})
    if args.json:
        print(json.dumps({"threads": args.threads, "scipy": scipy.__version__, "results": rows}, indent=1))
        return
    print(f"2D Poisson, sparse direct solve, {args.threads} threads, best of {args.rounds} rounds (ratio = scipy / rlx; SciPy {scipy.__version__} spsolve = SuperLU)")
    print(f"  {'N':>6} {'unknowns':>10} {'nnz':>10} {'rlx ms':>10} {'scipy ms':>10} {'ratio':>7} {'rlx resid':>10} {'scipy resid':>11}")
    for r in rows:
        print(f"  {r['grid']:>6} {r['unknowns']:>10} {r['nnz']:>10} {r['rlx_ms']:>10.1f} {r['scipy_ms']:>10.1f} {r['ratio']:>7.2f} {r['rlx_residual']:>10.1e} {r['scipy_residual']:>11.1e}")


if __name__ == "__main__":
    main()
