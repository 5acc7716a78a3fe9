#!/usr/bin/python3
"""A small differentiable physics fit: steady diffusion with reaction, (k·L + r·I) u = f on a grid
(L the 5-point Laplacian as a CSR matrix), observed at every cell. The diffusivity k and reaction
rate r are recovered from the observed field by Adam, the gradient flowing through the sparse solve
(mir.csr_solve: CHOLMOD on the cpu device, its adjoint a second solve).

  PYTHONPATH=build/python /usr/bin/python3 examples/poisson_fit.py [--grid 24] [--steps 300]
"""
import argparse

import numpy as np

import rlx


def laplacian_csr(n):
    """4 on the diagonal and −1 to each grid neighbour, rows in ascending column order."""
    ptr, cols, lap, eye = [0], [], [], []
    for i in range(n):
        for j in range(n):
            idx = i * n + j
            entries = [e for e in ((idx - n, -1.0) if i > 0 else None, (idx - 1, -1.0) if j > 0 else None, (idx, 4.0),
                                   (idx + 1, -1.0) if j + 1 < n else None, (idx + n, -1.0) if i + 1 < n else None) if e]
            for c, v in entries:
                cols.append(c)
                lap.append(v)
                eye.append(1.0 if c == idx else 0.0)
            ptr.append(len(cols))
    return (np.array(ptr, np.int64), np.array(cols, np.int64), np.array(lap, np.float32), np.array(eye, np.float32))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", type=int, default=24)
    p.add_argument("--steps", type=int, default=300)
    args = p.parse_args()
    n = args.grid
    ptr, cols, lap, eye = laplacian_csr(n)
    xs = np.linspace(0, 1, n)
    f = (np.exp(-30 * ((xs[:, None] - 0.3) ** 2 + (xs[None, :] - 0.6) ** 2))).reshape(-1, 1).astype(np.float32)
    true_k, true_r = 1.7, 0.4

    # The forward model: values = k·L + r·I on L's pattern, u = solve(A, f).
    g = rlx.Graph("diffusion")
    k = g.input("k", "f32", [1])
    r = g.input("r", "f32", [1])
    observed = g.input("observed", "f32", [n * n, 1])
    values = g.constant(lap) * k + g.constant(eye) * r
    u = rlx.ops.csr_solve(g.constant(ptr), g.constant(cols), values, g.constant(f))
    err = u - observed
    g.set_outputs([rlx.ops.reduce(err * err, kind="sum", axes=[0, 1]) * (1.0 / (n * n))])

    # The observation: the same model at the true parameters (no noise: the fit should be exact).
    sim = rlx.Graph("simulate")
    sk, sr = sim.input("k", "f32", [1]), sim.input("r", "f32", [1])
    sim.set_outputs([rlx.ops.csr_solve(sim.constant(ptr), sim.constant(cols), sim.constant(lap) * sk + sim.constant(eye) * sr, sim.constant(f))])
    u_obs = np.asarray(rlx.Session("cpu").compile(sim).run([np.array([true_k], np.float32), np.array([true_r], np.float32)])[0])

    t = rlx.Trainer(g, {"k": np.array([1.0], np.float32), "r": np.array([1.0], np.float32)}, optimizer="adam")
    first = t.step({"observed": u_obs}, lr=0.05)
    for step in range(args.steps):
        loss = t.step({"observed": u_obs}, lr=0.05 if step < args.steps // 2 else 0.01)
    k_fit, r_fit = float(t.params["k"][0]), float(t.params["r"][0])
    print(f"grid {n}×{n}: loss {first:.3e} → {loss:.3e}; k {k_fit:.4f} (true {true_k}), r {r_fit:.4f} (true {true_r})")
    return k_fit, r_fit


if __name__ == "__main__":
    main()
