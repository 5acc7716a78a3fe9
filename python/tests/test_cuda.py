"""CUDA tensors through DLPack, without copies: a torch tensor on the GPU goes into a model
compiled for the cuda device and comes out in GPU memory, each crossing the same memory
(pointer equality). Skips, saying why, without a GPU, the cuda device or CUDA torch."""
import numpy as np
import pytest

import rlx

torch = pytest.importorskip("torch")


def _cuda_ready():
    if not torch.cuda.is_available():
        return "torch sees no CUDA GPU"
    dev = {d.name: d for d in rlx.devices()}
    if "cuda" not in dev or not dev["cuda"].available:
        return "rlx's cuda device is not available: " + (dev["cuda"].reason if "cuda" in dev else "not built")
    return ""


pytestmark = pytest.mark.skipif(bool(_cuda_ready()), reason=_cuda_ready() or "ok")


def test_a_cuda_tensor_crosses_both_ways_without_a_copy():
    x = torch.randn(4, 8, device="cuda")
    r = rlx.from_dlpack(x)
    assert r.device == "cuda:0"
    assert r.data_ptr == x.data_ptr()
    assert r.shape == (4, 8) and r.dtype == "f32"
    back = torch.from_dlpack(r)
    assert back.device.type == "cuda" and back.data_ptr() == x.data_ptr()
    with pytest.raises(rlx.Error, match="cuda:0 memory"):
        r.numpy()  # host access to device memory is refused, never a crash


def test_a_cuda_model_reads_and_writes_device_memory():
    g = rlx.Graph("cuda_io")
    a = g.input("a", "f32", ["B", 16])
    b = g.input("b", "f32", ["B", 16])
    g.set_outputs([(a * b + a).relu()])
    m = rlx.Session("cuda").compile(g)
    x = torch.randn(3, 16, device="cuda")
    y = torch.randn(3, 16, device="cuda")
    (out,) = m.run({"a": x, "b": y}).values()
    assert isinstance(out, rlx.Tensor) and out.device == "cuda:0"
    t = torch.from_dlpack(out)
    assert t.device.type == "cuda" and t.data_ptr() == out.data_ptr
    torch.testing.assert_close(t, torch.relu(x * y + x))
    # the kernels read the caller's memory where it is: a change to x shows in the next run
    x.mul_(-1)
    (out2,) = m.run({"a": x, "b": y}).values()
    torch.testing.assert_close(torch.from_dlpack(out2), torch.relu(x * y + x))
    # host inputs still give host outputs
    (host,) = m.run({"a": x.cpu().numpy(), "b": y.cpu().numpy()}).values()
    assert isinstance(host, np.ndarray)
    np.testing.assert_allclose(host, torch.relu(x * y + x).cpu().numpy(), rtol=1e-6, atol=1e-6)


def test_a_cuda_tensor_on_the_cpu_device_is_refused_clearly():
    g = rlx.Graph("cpu_only")
    a = g.input("a", "f32", [2])
    g.set_outputs([a.relu()])
    m = rlx.Session("cpu").compile(g)
    with pytest.raises(rlx.Error, match="cuda:0 memory"):
        m.run({"a": torch.ones(2, device="cuda")})
