# Embeddings and greedy generation equal the CLI's; weight files read as views; training learns.
import numpy as np

import rlx
from conftest import cli_json, fixture


def test_embeddings_equal_the_cli():
    path = fixture("bert", "st_mean")
    texts = ["Hello, world!", "RLX runs sentence encoders.", "a"]
    want = np.array(cli_json("embed", "--model", path, *sum((["--text", t] for t in texts), []))["embeddings"], np.float32)
    e = rlx.Embedder(path)
    got = e.embed(texts)
    assert got.shape == (3, e.dim) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert rlx.load(path).kind == "bert"


def test_greedy_generation_equals_the_cli():
    path = fixture("qwen3", "qwen3_tiny")
    want = cli_json("generate", "--model", path, "--prompt-ids", "1,2,3", "--max-tokens", "12", "--temperature", "0")
    g = rlx.Generator(path)
    it = g.generate(ids=[1, 2, 3], max_tokens=12, text=False)
    ids = list(it)
    assert ids == want["ids"]
    assert it.stop_reason == want["stop_reason"]
    # streamed text pieces add up to the CLI's text
    text = "".join(g.generate(ids=[1, 2, 3], max_tokens=12))
    assert text == want["text"]


def test_a_later_generation_ends_an_earlier_one():
    g = rlx.Generator(fixture("qwen3", "qwen3_tiny"))
    first = g.generate(ids=[1, 2], max_tokens=4, text=False)
    next(first)
    second = g.generate(ids=[3], max_tokens=2, text=False)
    assert len(list(second)) == 2
    try:
        next(first)
        raise AssertionError("the superseded iterator kept going")
    except rlx.Error as e:
        assert "superseded" in str(e)


def test_safetensors_as_arrays():
    m = rlx.load(fixture("qwen3", "qwen3_tiny", "model.safetensors"))
    assert m.kind == "safetensors" and m.tensors
    name, arr = next(iter(m.tensors.items()))
    assert isinstance(arr, np.ndarray) and not arr.flags.owndata
    assert m.types[name] in ("F32", "BF16", "F16")


def test_trainer_fits_a_line():
    g = rlx.Graph("fit")
    w = g.input("w", "f32", [1, 2])
    x = g.input("x", "f32", ["B", 2])
    y = g.input("y", "f32", ["B", 1])
    err = x.linear(w) - y
    g.set_outputs([rlx.ops.reduce(err * err, kind="sum", axes=[0, 1]) * 0.5])
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((64, 2)).astype(np.float32)
    ys = (xs @ np.array([[2.0], [-3.0]], np.float32))
    t = rlx.Trainer(g, {"w": np.zeros((1, 2), np.float32)}, optimizer="sgd")
    first = t.step({"x": xs, "y": ys}, lr=0.01)
    for _ in range(200):
        last = t.step([xs, ys], lr=0.01)
    assert last < first * 1e-3
    np.testing.assert_allclose(t.params["w"], [[2.0, -3.0]], atol=1e-2)
    assert t.steps == 201
