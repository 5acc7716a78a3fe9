# Complex tensors and Fourier transforms from Python: the ops against numpy.fft on complex128 and
# float64 arrays, and a gradient through rfft recovering a signal from its spectrum.
import numpy as np

import rlx


def run(op, x, device="cpu", **attrs):
    g = rlx.Graph(op)
    dtype = {np.dtype("float64"): "f64", np.dtype("complex128"): "c128", np.dtype("complex64"): "c64"}[x.dtype]
    v = g.input("x", dtype, list(x.shape))
    g.set_outputs([getattr(rlx.ops, op)(v, **attrs)])
    return np.asarray(rlx.Session(device).compile(g).run([x])[0])


def test_transforms_match_numpy():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((6, 10)) + 1j * rng.standard_normal((6, 10))
    r = rng.standard_normal((4, 9))
    for device in ("cpu", "reference"):
        np.testing.assert_allclose(run("fft", z, device, axes=[1]), np.fft.fft(z), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(run("fft", z, device, axes=[0, 1], inverse=True, norm="ortho"), np.fft.ifft2(z, norm="ortho"), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(run("rfft", r, device, axes=[1]), np.fft.rfft(r), rtol=1e-12, atol=1e-12)
        spectrum = np.fft.rfft(r)
        np.testing.assert_allclose(run("irfft", spectrum, device, axes=[1], n=9), r, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(run("angle", z, device), np.angle(z), rtol=1e-12)
        np.testing.assert_allclose(run("abs", z, device), np.abs(z), rtol=1e-12)
    # complex64 in and out, through numpy's complex64 arrays
    z32 = z.astype(np.complex64)
    np.testing.assert_allclose(run("fft", z32, axes=[1]), np.fft.fft(z32), rtol=1e-4, atol=1e-4)


def test_gradient_through_rfft_recovers_the_signal():
    # min over x of ‖rfft(x) − Y‖² with Y the spectrum of a known signal: reached only if the
    # gradient of rfft (and of real/imag, complex subtraction) is right.
    n = 32
    t = np.arange(n, dtype=np.float32)
    signal = (np.sin(2 * np.pi * 3 * t / n) + 0.5 * np.cos(2 * np.pi * 5 * t / n)).astype(np.float32)
    spectrum = np.fft.rfft(signal).astype(np.complex64)
    g = rlx.Graph("spectrum_fit")
    x = g.input("x", "f32", [n])
    target = g.input("target", "c64", [n // 2 + 1])
    d = rlx.ops.rfft(x, axes=[0]) - target
    re, im = rlx.ops.real(d), rlx.ops.imag(d)
    g.set_outputs([rlx.ops.reduce(re * re + im * im, kind="sum", axes=[0])])
    trainer = rlx.Trainer(g, {"x": np.zeros(n, np.float32)}, optimizer="adam")
    batch = {"target": spectrum}
    first = trainer.step(batch, lr=0.05)
    for _ in range(600):
        last = trainer.step(batch, lr=0.05)
    assert last < first * 1e-4, (first, last)
    np.testing.assert_allclose(trainer.params["x"], signal, atol=2e-2)


def test_eig_matches_numpy_and_fits_a_spectrum():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 5))
    for device in ("cpu", "reference"):
        g = rlx.Graph("eig")
        w, v = rlx.ops.eig(g.input("a", "f64", [5, 5]))
        g.set_outputs([w, v])
        got_w, got_v = [np.asarray(o) for o in rlx.Session(device).compile(g).run([a])]
        ref = np.linalg.eigvals(a)
        # the same multiset of eigenvalues, and A V = V diag(w)
        # each of numpy's eigenvalues is one of RLX's (conjugate pairs may order either way in sort_complex)
        assert max(np.min(np.abs(got_w - r)) for r in ref) < 1e-10 * np.max(np.abs(ref))
        np.testing.assert_allclose(a @ got_v, got_v * got_w, atol=1e-10)
        assert np.all(np.diff(got_w.real) >= -1e-9)
