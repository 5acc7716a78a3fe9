# Arrays cross without copies (NumPy buffers in and out, DLPack both ways) and every dtype round-trips.
import numpy as np
import pytest

import rlx

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
          "i32": np.int32, "i64": np.int64, "bool": np.bool_, "c64": np.complex64}


def identity(dtype, shape):
    g = rlx.Graph("identity")
    x = g.input("x", dtype, shape)
    g.set_outputs([x.reshape(shape=list(shape))])
    return rlx.Session("cpu").compile(g)


def test_numpy_in_is_a_view():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = rlx.tensor(a)
    assert t.shape == (3, 4) and t.dtype == "f32"
    assert np.shares_memory(t.numpy(), a)


def test_non_contiguous_numpy_is_copied_packed():
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T
    t = rlx.tensor(a)
    assert t.shape == (4, 3)
    np.testing.assert_array_equal(t.numpy(), a)


def test_outputs_view_rlx_memory():
    m = identity("f32", [2, 3])
    y = m.run([np.ones((2, 3), np.float32)])[0]
    assert isinstance(y, np.ndarray) and not y.flags.owndata and y.base is not None
    np.testing.assert_array_equal(y, np.ones((2, 3), np.float32))


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_dtype_round_trip(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((4, 5)) * 10).astype(DTYPES[dtype])
    y = identity(dtype, [4, 5]).run([a])[0]
    assert y.dtype == a.dtype
    np.testing.assert_array_equal(y, a)


def test_dlpack_from_torch_is_a_view(torch):
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    a = rlx.from_dlpack(t)
    assert isinstance(a, np.ndarray)
    assert a.__array_interface__["data"][0] == t.data_ptr()


def test_dlpack_to_torch_is_a_view(torch):
    a = np.arange(6, dtype=np.float32)
    t = torch.utils.dlpack.from_dlpack(rlx.tensor(a))
    assert t.data_ptr() == a.__array_interface__["data"][0]
    assert t.tolist() == a.tolist()


def test_bf16_through_dlpack(torch):
    t = torch.tensor([[1.5, -2.25, 3.0], [0.0, 1e-3, 65504.0]], dtype=torch.bfloat16)
    r = rlx.tensor(t)
    assert r.dtype == "bf16" and r.shape == (2, 3)
    np.testing.assert_array_equal(r.numpy(), t.float().numpy())
    y = identity("bf16", [2, 3]).run([t])[0]
    assert isinstance(y, rlx.Tensor) and y.dtype == "bf16"
    back = torch.utils.dlpack.from_dlpack(y)
    assert back.dtype == torch.bfloat16 and torch.equal(back, t)


def test_bad_dtype_is_a_clear_error():
    with pytest.raises(rlx.Error) as e:
        rlx.tensor(np.zeros(3, dtype=np.uint32))
    assert e.value.kind == "invalid_argument" and "uint32" in str(e.value)
