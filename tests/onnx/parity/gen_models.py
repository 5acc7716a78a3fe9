#!/usr/bin/python3
"""Exports the ONNX parity models and their inputs (run with Debian's /usr/bin/python3).

torchvision resnet18, mobilenet_v2 and squeezenet1_0 with random weights (weights=None, fixed
seed), and a small BERT encoder written in plain PyTorch, each with one random input saved as
.npy next to it. Nothing is downloaded; everything is regenerated at test time.

usage: gen_models.py OUT_DIR [--models resnet18,mobilenet_v2,squeezenet,bert]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--models", default="resnet18,mobilenet_v2,squeezenet,bert")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    for name in a.models.split(","):
        if name == "bert":
            export_bert(a.out, rng)
        else:
            export_vision(name, a.out, rng)
        print("exported", name)


if __name__ == "__main__":
    main()
