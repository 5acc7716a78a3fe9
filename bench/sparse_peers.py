#!/usr/bin/python3
"""The 2D Poisson equation (5-point stencil on an N×N grid, N² unknowns) by a sparse direct solve:
RLX's csr_solve (CHOLMOD on the cpu device) beside scipy.sparse.linalg.spsolve (SuperLU, Debian's
SciPy) on the same matrix and right-hand side, interleaved, same thread count; each answer's
residual ‖A u − f‖/‖f‖ is printed beside its time (RLX's is checked by rlx bench poisson itself).

Then conjugate gradients: RLX's (src/science, threaded SpMV; also with IC(0)) beside scipy.sparse.linalg.cg.

  /usr/bin/python3 bench/sparse_peers.py [--rlx build/bin/rlx] [--grid 300,1000] [--cg-grid 300,1000] [--rtol 1e-8] [--rounds 2] [--json]
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


def scipy_cg(a, f, rtol):
    """scipy.sparse.linalg.cg from 0 to ‖b − A x‖ ≤ rtol‖b‖ (1.10's `tol`); returns ms, iterations, x."""
    count = [0]
    t = time.perf_counter()
    x, info = spla.cg(a, f, tol=rtol, maxiter=10 * a.shape[0], callback=lambda _: count.__setitem__(0, count[0] + 1))
    ms = (time.perf_counter() - t) * 1e3
    if info != 0:
        raise SystemExit(f"scipy cg did not converge (info {info})")
    return ms, count[0], x


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rlx", default="build/bin/rlx")
    p.add_argument("--grid", default="300,1000")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--cg-grid", default="300,1000", help="grids for the conjugate-gradient comparison (empty: none)")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows, cg_rows = [], []
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
    for n in [int(g) for g in args.cg_grid.split(",") if g]:
        a, f = poisson(n)
        best = {}
        for _ in range(args.rounds):
            for pre in ("none", "ichol"):
                out = subprocess.run([args.rlx, "bench", "poisson", "--grid", str(n), "--method", "cg", "--preconditioner", pre, "--rtol", str(args.rtol),
                                      "--threads", str(args.threads), "--runs", "1", "--warmup", "0", "--json"], check=True, capture_output=True, text=True).stdout
                r = json.loads(out)["results"][0]
                if r["p50_ms"] < best.get(pre, (float("inf"),))[0]:
                    best[pre] = (r["p50_ms"], r["iterations"])
            ms, its, _ = scipy_cg(a, f, args.rtol)
            if ms < best.get("scipy", (float("inf"),))[0]:
                best["scipy"] = (ms, its)
        cg_rows.append({"grid": n, "unknowns": n * n, "rlx_cg_ms": best["none"][0], "rlx_cg_iterations": best["none"][1], "rlx_cg_ichol_ms": best["ichol"][0],
                        "rlx_cg_ichol_iterations": best["ichol"][1], "scipy_cg_ms": best["scipy"][0], "scipy_cg_iterations": best["scipy"][1],
                        "ratio_cg": best["scipy"][0] / best["none"][0]})
    if args.json:
        print(json.dumps({"threads": args.threads, "scipy": scipy.__version__, "results": rows, "cg": cg_rows, "rtol": args.rtol}, indent=1))
        return
    print(f"2D Poisson, sparse direct solve, {args.threads} threads, best of {args.rounds} rounds (ratio = scipy / rlx; SciPy {scipy.__version__} spsolve = SuperLU)")
    print(f"  {'N':>6} {'unknowns':>10} {'nnz':>10} {'rlx ms':>10} {'scipy ms':>10} {'ratio':>7} {'rlx resid':>10} {'scipy resid':>11}")
    for r in rows:
        print(f"  {r['grid']:>6} {r['unknowns']:>10} {r['nnz']:>10} {r['rlx_ms']:>10.1f} {r['scipy_ms']:>10.1f} {r['ratio']:>7.2f} {r['rlx_residual']:>10.1e} {r['scipy_residual']:>11.1e}")
    if cg_rows:
        print(f"\nconjugate gradients to rtol {args.rtol:g} (ratio = scipy cg / rlx cg, both unpreconditioned; ichol: RLX's IC(0))")
        print(f"  {'N':>6} {'unknowns':>10} {'rlx cg ms':>10} {'its':>6} {'scipy ms':>10} {'its':>6} {'ratio':>7} {'rlx ichol ms':>13} {'its':>6}")
        for r in cg_rows:
            print(f"  {r['grid']:>6} {r['unknowns']:>10} {r['rlx_cg_ms']:>10.1f} {r['rlx_cg_iterations']:>6} {r['scipy_cg_ms']:>10.1f} {r['scipy_cg_iterations']:>6} "
                  f"{r['ratio_cg']:>7.2f} {r['rlx_cg_ichol_ms']:>13.1f} {r['rlx_cg_ichol_iterations']:>6}")


if __name__ == "__main__":
    main()
