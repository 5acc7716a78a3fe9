#!/usr/bin/python3
"""Exports the ONNX parity models and their inputs (run with Debian's /usr/bin/python3).

torchvision resnet18, mobilenet_v2 and squeezenet1_0 with random weights (weights=None, fixed
seed), a small BERT encoder written in plain PyTorch, and a BERT layer built from com.microsoft
contrib ops with onnx.helper, each with random inputs saved as .npy next to it. Nothing is
downloaded; everything is regenerated at test time.

usage: gen_models.py OUT_DIR [--models resnet18,mobilenet_v2,squeezenet,bert,contrib]
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torchvision


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.dim = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))

    def forward(self, x, bias):
        b, s, h = x.shape
        split = lambda t: t.view(b, s, self.heads, self.dim).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dim) + bias
        ctx = torch.softmax(scores, dim=-1) @ v
        return self.o(ctx.transpose(1, 2).reshape(b, s, h))


class Layer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.ln1, self.ln2 = nn.LayerNorm(hidden, eps=1e-12), nn.LayerNorm(hidden, eps=1e-12)
        self.up, self.down = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)

    def forward(self, x, bias):
        x = self.ln1(x + self.attn(x, bias))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class SmallBert(nn.Module):
    """BERT encoder: word + position + token-type embeddings, post-LN layers, masked mean pooling."""

    def __init__(self, vocab=120, hidden=64, heads=4, layers=2, ffn=128, max_pos=64):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(vocab, hidden), nn.Embedding(max_pos, hidden), nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(Layer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.token_type(torch.zeros_like(input_ids)))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, bias)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        return x, (x * m).sum(1) / m.sum(1)


def export_vision(name, out, rng):
    ctor = {"resnet18": torchvision.models.resnet18, "mobilenet_v2": torchvision.models.mobilenet_v2,
            "squeezenet": torchvision.models.squeezenet1_0}[name]
    model = ctor(weights=None).eval()
    # Fresh BatchNorm statistics are identities and, with torchvision's init, make activations
    # vanish; random statistics and affines keep every layer's output meaningful.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, torch.from_numpy(x), path, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)
    np.save(os.path.join(out, name + ".input.npy"), x)


def export_bert(out, rng):
    model = SmallBert().eval()
    ids = rng.integers(1, 120, size=(2, 12)).astype(np.int64)
    mask = np.ones((2, 12), dtype=np.int64)
    mask[1, 9:] = 0
    path = os.path.join(out, "bert.onnx")
    torch.onnx.export(model, (torch.from_numpy(ids), torch.from_numpy(mask)), path,
                      input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state", "pooled"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                    "last_hidden_state": {0: "batch", 1: "seq"}, "pooled": {0: "batch"}}, opset_version=14)
    np.save(os.path.join(out, "bert.input_ids.npy"), ids)
    np.save(os.path.join(out, "bert.attention_mask.npy"), mask)


def export_contrib(out, rng):
    """A BERT layer written with the com.microsoft contrib ops ONNX Runtime's transformer
    optimizer emits: EmbedLayerNormalization, Attention (key-length and raw masks, causal),
    SkipLayerNormalization, FusedMatMul, BiasGelu, FastGelu, Gelu."""
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    B, S, H, F, V, N = 2, 7, 32, 64, 50, 4
    w = lambda name, *shape, scale=0.2: nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
    ones = lambda name, n: nh.from_array((1 + 0.1 * rng.standard_normal(n)).astype(np.float32), name)
    inits = [w("word", V, H), w("pos", 16, H), w("seg", 2, H), ones("g0", H), w("b0", H), w("wqkv", H, 3 * H), w("bqkv", 3 * H),
             ones("g1", H), w("b1", H), w("bias1", H), w("up", F, H), w("bup", F), w("down", F, H), ones("gamma2", H), w("beta2", H), w("fb", F)]
    ms = "com.microsoft"
    nodes = [
        h.make_node("EmbedLayerNormalization", ["input_ids", "segment_ids", "word", "pos", "seg", "g0", "b0", "mask"], ["emb", "mask_index"],
                    domain=ms, epsilon=1e-12),
        h.make_node("Attention", ["emb", "wqkv", "bqkv", "mask_index"], ["att_a"], domain=ms, num_heads=N),
        h.make_node("Attention", ["emb", "wqkv", "bqkv", "mask"], ["att_b"], domain=ms, num_heads=N, unidirectional=1),
        h.make_node("Add", ["att_a", "att_b"], ["att"]),
        h.make_node("SkipLayerNormalization", ["att", "emb", "g1", "b1", "bias1"], ["ln1"], domain=ms, epsilon=1e-12),
        h.make_node("FusedMatMul", ["ln1", "up"], ["upm"], domain=ms, transB=1, alpha=0.5),
        h.make_node("BiasGelu", ["upm", "bup"], ["g"], domain=ms),
        h.make_node("FastGelu", ["g", "fb"], ["g2"], domain=ms),
        h.make_node("Gelu", ["g2"], ["g3"], domain=ms),
        h.make_node("MatMul", ["g3", "down"], ["dn"]),
        h.make_node("SkipLayerNormalization", ["dn", "ln1", "gamma2", "beta2"], ["out"], domain=ms, epsilon=1e-12),
    ]
    ins = [h.make_tensor_value_info(n, T.INT32, [B, S]) for n in ("input_ids", "segment_ids", "mask")]
    outs = [h.make_tensor_value_info("out", T.FLOAT, [B, S, H]), h.make_tensor_value_info("mask_index", T.INT32, [B])]
    g = h.make_graph(nodes, "contrib_bert_layer", ins, outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13), h.make_opsetid(ms, 1)], producer_name="rlx-parity")
    onnx.save(m, os.path.join(out, "contrib.onnx"))
    ids = rng.integers(0, V, size=(B, S)).astype(np.int32)
    seg = (np.arange(S)[None, :] >= 4).astype(np.int32).repeat(B, 0)
    mask = np.ones((B, S), dtype=np.int32)
    mask[1, 5:] = 0
    for name, v in (("input_ids", ids), ("segment_ids", seg), ("mask", mask)):
        np.save(os.path.join(out, f"contrib.{name}.npy"), v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--models", default="resnet18,mobilenet_v2,squeezenet,bert,contrib")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    for name in a.models.split(","):
        if name == "bert":
            export_bert(a.out, rng)
        elif name == "contrib":
            export_contrib(a.out, rng)
        else:
            export_vision(name, a.out, rng)
        print("exported", name)


if __name__ == "__main__":
    main()
