# The graph builder, sessions, compiled models from many threads, ONNX through rlx.load, errors.
import concurrent.futures as cf

import numpy as np
import pytest

import rlx


def mlp():
    g = rlx.Graph("mlp")
    x = g.input("x", "f32", ["B", 8])
    w1 = g.input("w1", "f32", [16, 8])
    b1 = g.input("b1", "f32", [16])
    w2 = g.input("w2", "f32", [4, 16])
    h = x.linear(w1, b1).relu()
    g.set_outputs([rlx.ops.softmax(h.linear(w2) * 0.5, axis=-1)])
    return g


def numpy_mlp(x, w1, b1, w2):
    h = np.maximum(x @ w1.T + b1, 0)
    z = (h @ w2.T) * 0.5
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def params(rng, batch=3):
    return {"x": rng.standard_normal((batch, 8)).astype(np.float32), "w1": rng.standard_normal((16, 8)).astype(np.float32),
            "b1": rng.standard_normal(16).astype(np.float32), "w2": rng.standard_normal((4, 16)).astype(np.float32)}


def test_devices_lists_the_built_ones():
    names = {d.name: d for d in rlx.devices()}
    assert {"cpu", "reference", "null"} <= set(names)
    assert names["cpu"].available and names["cpu"].native_ops > 0


def test_graph_builder_matches_numpy():
    m = rlx.Session("cpu").compile(mlp())
    p = params(np.random.default_rng(1))
    out = m.run(p)
    assert list(out) == m.output_names
    np.testing.assert_allclose(next(iter(out.values())), numpy_mlp(**p), rtol=1e-5, atol=1e-6)
    # positional inputs give a list
    y = m.run([p[n] for n in m.input_names])[0]
    np.testing.assert_allclose(y, numpy_mlp(**p), rtol=1e-5, atol=1e-6)


def test_text_form_round_trips():
    g = mlp()
    g2 = rlx.Graph.from_text(g.to_text())
    assert g2.to_text() == g.to_text()
    assert g2.input_names == ["x", "w1", "b1", "w2"]


def test_one_model_runs_from_many_threads():
    m = rlx.Session("cpu").compile(mlp())
    rng = np.random.default_rng(2)
    jobs = [params(rng, batch=int(b)) for b in rng.integers(1, 9, size=32)]
    with cf.ThreadPoolExecutor(8) as ex:
        results = list(ex.map(lambda p: next(iter(m.run(p).values())), jobs))
    for p, y in zip(jobs, results):
        np.testing.assert_allclose(y, numpy_mlp(**p), rtol=1e-5, atol=1e-6)


def test_errors_keep_their_kind_and_message():
    m = rlx.Session("cpu").compile(mlp())
    with pytest.raises(rlx.Error) as e:
        m.run({"x": np.zeros((2, 8), np.float32)})
    assert e.value.kind == "invalid_argument" and "missing input 'w1'" in str(e.value)
    p = params(np.random.default_rng(0))
    p["x"] = p["x"].astype(np.float64)
    with pytest.raises(rlx.Error, match="must be f32"):
        m.run(p)
    with pytest.raises(rlx.Error) as e:
        rlx.Session("null").compile(mlp())
    assert e.value.kind == "unsupported" and "hir.linear" in str(e.value)
    with pytest.raises(rlx.Error, match="unknown device"):
        rlx.Session("warp-drive")
    with pytest.raises(TypeError, match="no attribute 'axes'"):
        rlx.ops.softmax(mlp().inputs[0], axes=[1])


def test_onnx_model_through_load(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"]), helper.make_node("Tanh", ["y"], ["z"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 3])], [numpy_helper.from_array(w, "W")])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    model = rlx.load(path)
    assert model.kind == "onnx" and model.inputs == ["x"] and model.outputs == ["z"]
    x = rng.standard_normal((5, 4)).astype(np.float32)
    z = rlx.Session().compile(model).run({"x": x})["z"]
    np.testing.assert_allclose(z, np.tanh(x @ w), rtol=1e-5, atol=1e-6)
