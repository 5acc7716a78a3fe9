"""RLX from Python: an ML compiler and runtime.

    import rlx, numpy as np
    g = rlx.Graph("mlp")
    x = g.input("x", "f32", ["B", 784])
    w = g.input("w", "f32", [128, 784])
    g.set_outputs([x.linear(w).relu()])
    m = rlx.Session("cpu").compile(g)
    y = m.run({"x": np.ones((2, 784), np.float32), "w": np.zeros((128, 784), np.float32)})

Arrays cross without copies (NumPy buffers, DLPack); compiling and running release the GIL, and
one compiled model runs from many threads at once. Errors are rlx.Error with a .kind.
"""
import numbers as _numbers

import numpy as _np

from . import _rlx
from ._rlx import (CompiledModel, DeviceInfo, Error, Tensor, TokenIterator, devices, from_dlpack, num_threads,
                   set_num_threads, tensor)

__all__ = ["Graph", "Value", "Session", "CompiledModel", "Tensor", "Error", "DeviceInfo", "Model", "Embedder", "Generator",
           "TokenIterator", "Trainer", "devices", "load", "op", "ops", "from_dlpack", "tensor", "set_num_threads", "num_threads", "krylov",
           "KrylovResult"]

_OPS = {o["name"]: o for o in _rlx.op_table()}


def _attr_text(kind, v):
    if kind == "bool":
        return "true" if v else "false"
    if kind in ("int",):
        return str(int(v))
    if kind == "float":
        return repr(float(v))
    if kind == "ints":
        return "[" + ",".join(str(int(i)) for i in v) + "]"
    if kind == "intss":
        return "[" + ",".join("[" + ",".join(str(int(i)) for i in row) + "]" for row in v) + "]"
    if kind == "dims":
        return "[" + ",".join(str(d) for d in v) + "]"
    if kind == "tensor":
        raise Error("tensor attributes are given through Graph.constant()")
    return str(v)  # str, enum, dtype


def _attrs_text(name, attrs):
    spec = {a[0]: a[1] for a in _OPS[name]["attrs"]}
    parts = []
    for k, v in attrs.items():
        if k not in spec:
            raise TypeError(f"{name} has no attribute {k!r} (attributes: {', '.join(spec) or 'none'})")
        parts.append(f"{k}={_attr_text(spec[k], v)}")
    return ", ".join(parts)


class Value:
    """A value of a graph under construction. Every op of the op table is a method
    (x.softmax(axis=-1), x.linear(w, b)) and a function of rlx.ops; + - * / work with values
    and numbers."""

    __slots__ = ("_v", "_graph")

    def __init__(self, v, graph):
        self._v, self._graph = v, graph

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def shape(self):
        return self._v.shape

    def __repr__(self):
        return f"rlx.Value({self.dtype}{self.shape})"

    def _lift(self, other):
        if isinstance(other, Value):
            return other
        if isinstance(other, _numbers.Number):
            return self._graph.constant(_np.array(other, dtype=_np.dtype(_NUMPY.get(self.dtype, "float32"))))
        raise TypeError(f"expected an rlx.Value or a number, got {type(other).__name__}")

    def __add__(self, o): return op("add", self, self._lift(o))
    def __radd__(self, o): return op("add", self._lift(o), self)
    def __sub__(self, o): return op("sub", self, self._lift(o))
    def __rsub__(self, o): return op("sub", self._lift(o), self)
    def __mul__(self, o): return op("mul", self, self._lift(o))
    def __rmul__(self, o): return op("mul", self._lift(o), self)
    def __truediv__(self, o): return op("div", self, self._lift(o))
    def __rtruediv__(self, o): return op("div", self._lift(o), self)
    def __neg__(self): return op("neg", self)

    def __getattr__(self, name):
        if name in _OPS:
            return lambda *inputs, **attrs: op(name, self, *inputs, **attrs)
        raise AttributeError(f"rlx.Value has no attribute or op {name!r}")


_NUMPY = {"f32": "float32", "f64": "float64", "f16": "float16", "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32",
          "i64": "int64", "bool": "bool"}


def op(name, *inputs, **attrs):
    """Any op of the op table by name ("softmax", "mir.reduce", "hir.attention"), on values,
    with attributes as keywords. Returns a Value, or a tuple for ops of several outputs."""
    key = name.split(".", 1)[-1]
    if key not in _OPS:
        raise Error(f"unknown op {name!r}")
    flat = []
    for i in inputs:
        flat.extend(i if isinstance(i, (list, tuple)) else [i])
    values = [i for i in flat if isinstance(i, Value)]
    if not values:
        raise TypeError(f"{key} needs at least one rlx.Value input")
    g = values[0]._graph
    flat = [values[0]._lift(i) if not isinstance(i, Value) else i for i in flat]
    outs = _rlx._op(key, [v._v for v in flat], _attrs_text(key, attrs))
    wrapped = [Value(o, g) for o in outs]
    return wrapped[0] if len(wrapped) == 1 else tuple(wrapped)


class _Ops:
    """rlx.ops.<name>(*values, **attributes) for every op of the op table."""

    def __getattr__(self, name):
        if name in _OPS:
            return lambda *inputs, **attrs: op(name, *inputs, **attrs)
        raise AttributeError(f"no op {name!r}")

    def __dir__(self):
        return sorted(_OPS)


ops = _Ops()


class Graph:
    """A graph under construction (or read from the text form)."""

    def __init__(self, name="main", _g=None):
        self._g = _g if _g is not None else _rlx._Graph(name)

    def input(self, name, dtype, shape):
        """A graph input; dims are ints or symbol names ("B")."""
        return Value(self._g.input(name, dtype, list(shape)), self)

    def constant(self, value):
        """A constant (a copy of the array's values)."""
        return Value(self._g.constant(value), self)

    def set_outputs(self, values):
        self._g.set_outputs([v._v for v in values])

    @property
    def inputs(self):
        return [Value(v, self) for v in self._g.inputs()]

    @property
    def outputs(self):
        return [Value(v, self) for v in self._g.outputs()]

    @property
    def input_names(self):
        return self._g.input_names()

    def to_text(self):
        return self._g.to_text()

    def verify(self):
        self._g.verify()

    @staticmethod
    def from_text(text):
        return Graph(_g=_rlx._Graph.from_text(text))

    @staticmethod
    def load(path):
        return Graph(_g=_rlx._Graph.load(path))

    def __repr__(self):
        return self.to_text()


def _graph_of(x):
    if isinstance(x, Graph):
        return x._g
    if isinstance(x, Model):
        return x.graph._g
    if isinstance(x, _rlx._Graph):
        return x
    raise TypeError(f"expected an rlx.Graph or a model from rlx.load(), got {type(x).__name__}")


class Session:
    """A device and a precision policy: compile(graph or model) → CompiledModel.

    precision: f32, bf16, f16 or amp (matmuls and attention products); activations: auto, q8 or
    f32 (quantized weights' matmuls); threads: CPU kernel threads (0 = every core)."""

    def __init__(self, device="cpu", precision="f32", activations="auto", threads=None, policy=""):
        if threads is not None:
            set_num_threads(int(threads))
        self._s = _rlx._Session(device, precision, activations, policy)

    @property
    def device(self):
        return self._s.device

    def compile(self, model):
        return self._s.compile(_graph_of(model))


class Model:
    """What rlx.load() returns: kind is onnx, bert, llama, gguf or safetensors. ONNX and BERT
    models have a graph to compile; llama models go to rlx.Generator; weight files have tensors
    (NumPy views of the mapped file; packed GGUF blocks as uint8, their types in .types)."""

    def __init__(self, path, kind):
        self.path, self.kind = path, kind
        self.graph, self.inputs, self.outputs = None, [], []
        self.tensors, self.types, self.metadata = {}, {}, {}
        if kind == "onnx":
            g, self.inputs, self.outputs = _rlx._load_onnx(path)
            self.graph = Graph(_g=g)
        elif kind == "bert":
            self.graph = Graph(_g=_rlx._load_bert_graph(path))
            self.inputs = self.graph.input_names
        elif kind in ("gguf", "safetensors"):
            self.tensors, self.types, self.metadata = _rlx._read_weights(path, kind)

    def __repr__(self):
        return f"rlx.Model({self.kind}, {self.path!r})"


def load(path):
    """Reads a model: an ONNX file, a GGUF file, safetensors weights, or a Hugging Face model
    directory (BERT family: a graph; llama family: use rlx.Generator)."""
    return Model(str(path), _rlx._kind(str(path)))


class Embedder:
    """Sentence vectors from a BERT-family model directory (sentence-transformers pooling)."""

    def __init__(self, path, device="cpu", precision="f32"):
        self._e = _rlx._Embedder(str(path.path if isinstance(path, Model) else path), device, precision)

    @property
    def dim(self):
        return self._e.dim

    def embed(self, texts, batch=32):
        """float32 [len(texts), dim] (a single string gives one row)."""
        return self._e.embed([texts] if isinstance(texts, str) else list(texts), batch)

    def tokenize(self, text):
        return self._e.tokenize(text)


class Generator:
    """Text generation with a llama-family model (Hugging Face directory or GGUF file)."""

    def __init__(self, path, device="cpu", precision="f32", activations="auto"):
        self._g = _rlx._Generator(str(path.path if isinstance(path, Model) else path), device, precision, activations)

    def generate(self, prompt=None, *, ids=None, max_tokens=128, temperature=0.0, top_k=0, top_p=1.0, min_p=0.0,
                 repetition_penalty=1.0, seed=0, chat=False, thinking=True, ignore_eos=False, text=True):
        """An iterator of text pieces as they are generated (ids with text=False); one decode
        step per item. Give a prompt string (chat=True applies the model's chat format) or ids."""
        if (prompt is None) == (ids is None):
            raise Error("give exactly one of prompt or ids")
        if prompt is not None:
            ids = self._g.tokenize(self._g.chat_prompt(prompt, thinking), False) if chat else self._g.tokenize(prompt)
        return self._g._generate(list(ids), max_tokens, temperature, top_k, top_p, min_p, repetition_penalty, seed, ignore_eos, text)

    def tokenize(self, text, add_special_tokens=True):
        return self._g.tokenize(text, add_special_tokens)

    def detokenize(self, ids):
        return self._g.detokenize(list(ids))

    @property
    def eos_token_ids(self):
        return self._g.eos_token_ids


class Trainer:
    """Training: `forward`'s first inputs are the parameters (initial values in `params`, by
    name), the rest data; its first output is the loss. step(data, lr) runs forward, backward and
    the optimizer's update as one compiled step, updating the parameters in place."""

    def __init__(self, forward, params, optimizer="sgd", momentum=0.0, weight_decay=0.0, clip_norm=0.0, device="cpu", precision="f32"):
        self._t = _rlx._Trainer(_graph_of(forward), dict(params), optimizer, momentum, weight_decay, clip_norm, device, precision)

    def step(self, data, lr):
        return self._t.step(data, lr)

    def evaluate(self, data):
        return self._t.evaluate(data)

    @property
    def params(self):
        return self._t.params

    @property
    def steps(self):
        return self._t.steps


class KrylovResult:
    """What rlx.krylov returns: x, iterations, residual (‖b − A x‖/‖b‖ recomputed from x),
    converged (the tracked residual reached the target) and history (one relative residual per
    iteration)."""

    def __init__(self, d):
        self.x, self.iterations, self.residual = d["x"], d["iterations"], d["residual"]
        self.converged, self.history = d["converged"], d["history"]

    def __repr__(self):
        return f"KrylovResult(iterations={self.iterations}, residual={self.residual:.3e}, converged={self.converged})"


def krylov(a, b, method="cg", preconditioner="none", rtol=1e-10, atol=0.0, max_iterations=0, restart=50):
    """Solves A x = b iteratively on the CPU: method "cg" (symmetric positive definite A),
    "bicgstab" or "gmres" (restarted every `restart` iterations); preconditioner "none",
    "jacobi" or "ichol" (IC(0)). `a` is a scipy.sparse matrix (converted to CSR with sorted
    indices) or a tuple (indptr, indices, data, shape). Stops at ‖b − A x‖ ≤ max(rtol‖b‖, atol) or
    after max_iterations (0: 10·n) — check .converged."""
    if isinstance(a, tuple):
        indptr, indices, data, shape = a
    else:
        a = a.tocsr()
        a.sort_indices()
        indptr, indices, data, shape = a.indptr, a.indices, a.data, a.shape
    return KrylovResult(_rlx._krylov(indptr, indices, data, int(shape[1]), _np.ascontiguousarray(b, dtype=_np.float64).ravel(), method, preconditioner,
                                     float(rtol), float(atol), int(max_iterations), int(restart)))
