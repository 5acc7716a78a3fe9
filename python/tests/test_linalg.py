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
