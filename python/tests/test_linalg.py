# Dense linear algebra from Python: the ops against numpy.linalg on the same arrays, and a gradient
# through a solve driving a fit.
import numpy as np

import rlx


def run(name, *arrays, device="cpu"):
    g = rlx.Graph(name)
    ins = [g.input(f"in{i}", "f64", list(a.shape)) for i, a in enumerate(arrays)]
    outs = getattr(rlx.ops, name)(*ins)
    g.set_outputs(list(outs) if isinstance(outs, (list, tuple)) else [outs])
    return [np.asarray(o) for o in rlx.Session(device).compile(g).run(list(arrays))]


def test_factorizations_match_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 6))
    spd = a @ a.T + 6 * np.eye(6)
    b = rng.standard_normal((6, 2))
    for device in ("cpu", "reference"):
        np.testing.assert_allclose(run("solve", spd, b, device=device)[0], np.linalg.solve(spd, b), rtol=1e-12)
        np.testing.assert_allclose(run("cholesky", spd, device=device)[0], np.linalg.cholesky(spd), rtol=1e-12)
        w, v = run("eigh", spd, device=device)
        np.testing.assert_allclose(w, np.linalg.eigh(spd)[0], rtol=1e-12)
        np.testing.assert_allclose(spd @ v, v * w, atol=1e-10)
        q, r = run("qr", a, device=device)
        np.testing.assert_allclose(q @ r, a, atol=1e-12)
        assert (np.diag(r) >= 0).all()
        u, s, vh = run("svd", a, device=device)
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
        sign, logdet = run("slogdet", a, device=device)
        np.testing.assert_allclose([sign, logdet], np.linalg.slogdet(a), rtol=1e-12)


def test_gradient_through_a_solve_fits_the_source():
    # Find x with A x = y for a fixed A by gradient descent on ‖solve(A, x) − target‖² where
    # target = A⁻¹ y: the minimum is x = y, reached only if the solve's gradient is right.
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float32)
    y = rng.standard_normal((4, 1)).astype(np.float32)
    g = rlx.Graph("fit")
    x = g.input("x", "f32", [4, 1])
    am = g.constant(a)
    target = g.input("target", "f32", [4, 1])
    err = rlx.ops.solve(am, x) - target
    g.set_outputs([rlx.ops.reduce(err * err, kind="sum", axes=[0, 1])])
    t = rlx.Trainer(g, {"x": np.zeros((4, 1), np.float32)}, optimizer="adam")
    batch = {"target": np.linalg.solve(a, y).astype(np.float32)}
    first = t.step(batch, lr=0.05)
    for _ in range(400):
        last = t.step(batch, lr=0.05)
    assert last < first * 1e-4
    np.testing.assert_allclose(t.params["x"], y, atol=1e-2)


def test_poisson_fit_example_recovers_the_parameters():
    # examples/poisson_fit.py: diffusivity and reaction rate recovered through csr_solve's gradient.
    import os
    import runpy
    import sys

    path = os.path.join(os.environ.get("RLX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")), "examples", "poisson_fit.py")
    argv = sys.argv
    sys.argv = [path, "--grid", "12", "--steps", "300"]
    try:
        k, r = runpy.run_path(path)["main"]()
    finally:
        sys.argv = argv
    assert abs(k - 1.7) < 0.02 and abs(r - 0.4) < 0.02, (k, r)


def test_sparse_solve_matches_scipy():
    sp = __import__("pytest").importorskip("scipy.sparse")
    n = 30
    rng = np.random.default_rng(3)
    a = (sp.random(n, n, density=0.1, random_state=4) + sp.eye(n) * 4).tocsr()
    a.sort_indices()
    b = rng.standard_normal((n, 2))
    g = rlx.Graph("sparse")
    ins = [g.input("ptr", "i64", [n + 1]), g.input("cols", "i64", [a.nnz]), g.input("vals", "f64", [a.nnz]), g.input("b", "f64", [n, 2])]
    g.set_outputs([rlx.ops.csr_solve(*ins), rlx.ops.csr_matmul(*ins[:3], ins[3], n=n)])
    for device in ("cpu", "reference"):
        x, ab = rlx.Session(device).compile(g).run([a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data, b])
        np.testing.assert_allclose(np.asarray(x), __import__("scipy.sparse.linalg").sparse.linalg.spsolve(a.tocsc(), b), rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(np.asarray(ab), a @ b, rtol=1e-12)


def test_krylov_solvers_on_scipy_matrices():
    sp = __import__("pytest").importorskip("scipy.sparse")
    n = 15
    t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
    a = (sp.kron(sp.eye(n), t) + sp.kron(t, sp.eye(n))).tocsr()
    b = np.sin(np.arange(n * n) * 0.3) + 1
    exact = __import__("scipy.sparse.linalg").sparse.linalg.spsolve(a.tocsc(), b)
    plain = rlx.krylov(a, b, method="cg")
    pre = rlx.krylov(a, b, method="cg", preconditioner="ichol")
    assert plain.converged and pre.converged and pre.iterations < plain.iterations
    for r in (plain, pre, rlx.krylov(a, b, method="gmres", preconditioner="jacobi"), rlx.krylov(a, b, method="bicgstab")):
        np.testing.assert_allclose(r.x, exact, rtol=1e-8, atol=1e-9)
        assert len(r.history) == r.iterations
    short = rlx.krylov(a, b, max_iterations=2)
    assert not short.converged and short.iterations == 2
    with __import__("pytest").raises(rlx.Error, match="unknown preconditioner 'ilu'"):
        rlx.krylov(a, b, preconditioner="ilu")
