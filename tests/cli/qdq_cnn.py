#!/usr/bin/python3
"""Writes a Fashion-MNIST-shaped CNN in ONNX's QDQ format, as onnxruntime's static quantization
lays it out (QuantizeLinear/DequantizeLinear around every tensor; int8 weights per output channel
with symmetric scales; int32 biases at scale s_x·s_w; ReLU folded into the following
QuantizeLinear's range), with seeded random weights and scales calibrated on random images:
conv 3×3 (1→4, pad 1) → ReLU → max pool 2 → conv 3×3 (4→8, pad 1) → ReLU → max pool 2 → flatten →
Gemm (392→10) → DequantizeLinear. With --residual-softmax a residual block follows the second
pool (conv 3×3 8→8 → ReLU, added to its input: a quantized Add) and the logits go through a
quantized Softmax (output scale 1/256, zero point −128, as onnxruntime quantizes it) to "probs".
Used by tests/cli/cortexm.sh: `rlx export --target cortex-m*` folds each QDQ layer into an
integer layer (docs/cortexm.md). With --qoperator the model is in QOperator form instead:
QLinearConv (ReLU as its output range) and MaxPool on the int8 tensors, and the classifier a
bias-free QLinearMatMul.

  /usr/bin/python3 tests/cli/qdq_cnn.py OUT.onnx [--seed N] [--residual-softmax] [--qoperator]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv_f(x, w, pad):
    n, c, h, wd = x.shape
    co, ci, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, co, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1))
    for ky in range(kh):
        for kx in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, ky:ky + out.shape[2], kx:kx + out.shape[3]], w[:, :, ky, kx])
    return out


def pool(x):
    n, c, h, w = x.shape
    return x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def main():
    out = sys.argv[1]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 7
    residual = "--residual-softmax" in sys.argv
    qoperator = "--qoperator" in sys.argv
    rng = np.random.default_rng(seed)
    calib = rng.random((16, 1, 28, 28))
    inits, nodes = [], []

    def const(name, arr, dtype):
        inits.append(numpy_helper.from_array(np.asarray(arr).astype(dtype), name))
        return name

    def q(x, scale, zp, name):
        nodes.append(helper.make_node("QuantizeLinear", [x, scale, zp], [name]))
        return name

    def dq(x, scale, zp, name, axis=None):
        kw = {} if axis is None else {"axis": axis}
        nodes.append(helper.make_node("DequantizeLinear", [x, scale, zp], [name], **kw))
        return name

    # activation scales: real ranges of the float network on the calibration images
    w1 = rng.normal(0, 0.5, (4, 1, 3, 3))
    b1 = rng.normal(0, 0.1, 4)
    w2 = rng.normal(0, 0.3, (8, 4, 3, 3))
    b2 = rng.normal(0, 0.1, 8)
    w3 = rng.normal(0, 0.1, (392, 10))
    b3 = rng.normal(0, 0.1, 10)
    a1 = np.maximum(conv_f(calib, w1, 1) + b1.reshape(1, -1, 1, 1), 0)
    p1 = pool(a1)
    a2 = np.maximum(conv_f(p1, w2, 1) + b2.reshape(1, -1, 1, 1), 0)
    p2 = pool(a2)
    if residual:
        wr = rng.normal(0, 0.3, (8, 8, 3, 3))
        br = rng.normal(0, 0.1, 8)
        ar = np.maximum(conv_f(p2, wr, 1) + br.reshape(1, -1, 1, 1), 0)
        sr, s_add = ar.max() / 255.0, (p2 + ar).max() / 255.0
        p2 = p2 + ar
    a3 = p2.reshape(len(calib), -1) @ w3 + b3
    s_in, s1, s2 = 1 / 255.0, a1.max() / 255.0, a2.max() / 255.0
    s3 = np.abs(a3).max() / 127.0

    def wq(w, axis):  # symmetric per output channel
        red = tuple(i for i in range(w.ndim) if i != axis)
        s = np.abs(w).max(axis=red) / 127.0
        shape = [1] * w.ndim
        shape[axis] = -1
        return np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8), s

    x = q("images", const("s_in", s_in, np.float32), const("z_in", -128, np.int8), "images_q")
    if qoperator:  # QLinearConv (ReLU as the output's range: zero point −128) and MaxPool on int8
        z_prev = "z_in"
        for i, (w, b, s_prev, s_out) in enumerate([(w1, b1, "s_in", s1), (w2, b2, "s1", s2)], start=1):
            wi, sw = wq(w, 0)
            prev = s_in if i == 1 else s1
            nodes.append(helper.make_node("QLinearConv", [x, s_prev, z_prev, const("w%d_q" % i, wi, np.int8), const("w%d_s" % i, sw, np.float32),
                                                          const("w%d_z" % i, np.zeros(len(sw)), np.int8), const("s%d" % i, s_out, np.float32),
                                                          const("z%d" % i, -128, np.int8), const("b%d_q" % i, np.round(b / (prev * sw)), np.int32)],
                                          ["conv%d_q" % i], pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
            nodes.append(helper.make_node("MaxPool", ["conv%d_q" % i], ["pool%d_q" % i], kernel_shape=[2, 2], strides=[2, 2]))
            x, z_prev = "pool%d_q" % i, "z%d" % i
    else:
        x = dq(x, "s_in", "z_in", "images_dq")
    for i, (w, b, s_prev, s_out) in enumerate([] if qoperator else [(w1, b1, s_in, s1), (w2, b2, s1, s2)], start=1):
        wi, sw = wq(w, 0)
        wname = dq(const("w%d_q" % i, wi, np.int8), const("w%d_s" % i, sw, np.float32), const("w%d_z" % i, np.zeros(len(sw)), np.int8), "w%d" % i, axis=0)
        bname = dq(const("b%d_q" % i, np.round(b / (s_prev * sw)), np.int32), const("b%d_s" % i, s_prev * sw, np.float32), const("b%d_z" % i, np.zeros(len(sw)), np.int32),
                   "b%d" % i, axis=0)
        nodes.append(helper.make_node("Conv", [x, wname, bname], ["conv%d" % i], pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
        nodes.append(helper.make_node("Relu", ["conv%d" % i], ["relu%d" % i]))
        x = dq(q("relu%d" % i, const("s%d" % i, s_out, np.float32), const("z%d" % i, -128, np.int8), "relu%d_q" % i), "s%d" % i, "z%d" % i, "relu%d_dq" % i)
        nodes.append(helper.make_node("MaxPool", [x], ["pool%d" % i], kernel_shape=[2, 2], strides=[2, 2]))
        x = dq(q("pool%d" % i, "s%d" % i, "z%d" % i, "pool%d_q" % i), "s%d" % i, "z%d" % i, "pool%d_dq" % i)
    s_flat = s2
    if residual:  # conv → ReLU on the pooled activations, added back to them
        wi, sw = wq(wr, 0)
        wname = dq(const("wr_q", wi, np.int8), const("wr_s", sw, np.float32), const("wr_z", np.zeros(len(sw)), np.int8), "wr", axis=0)
        bname = dq(const("br_q", np.round(br / (s2 * sw)), np.int32), const("br_s", s2 * sw, np.float32), const("br_z", np.zeros(len(sw)), np.int32), "br", axis=0)
        nodes.append(helper.make_node("Conv", [x, wname, bname], ["convr"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
        nodes.append(helper.make_node("Relu", ["convr"], ["relur"]))
        r = dq(q("relur", const("sr", sr, np.float32), const("zr", -128, np.int8), "relur_q"), "sr", "zr", "relur_dq")
        nodes.append(helper.make_node("Add", [x, r], ["residual"]))
        x = dq(q("residual", const("s_add", s_add, np.float32), const("z_add", -128, np.int8), "residual_q"), "s_add", "z_add", "residual_dq")
        s_flat = s_add
    wi, sw = wq(w3, 1)
    if qoperator:  # the classifier as QLinearMatMul on the flattened int8 tensor (no bias)
        nodes.append(helper.make_node("Flatten", [x], ["flat_q"], axis=1))
        nodes.append(helper.make_node("QLinearMatMul", ["flat_q", "s2", "z2", const("w3_q", wi, np.int8), const("w3_s", sw, np.float32),
                                                        const("w3_z", np.zeros(10), np.int8), const("s3", s3, np.float32), const("z3", 0, np.int8)], ["fc_q"]))
        y = dq("fc_q", "s3", "z3", "logits")
        return save(nodes, inits, y, out)
    nodes.append(helper.make_node("Flatten", [x], ["flat"], axis=1))
    wname = dq(const("w3_q", wi, np.int8), const("w3_s", sw, np.float32), const("w3_z", np.zeros(10), np.int8), "w3", axis=1)
    bname = dq(const("b3_q", np.round(b3 / (s_flat * sw)), np.int32), const("b3_s", s_flat * sw, np.float32), const("b3_z", np.zeros(10), np.int32), "b3", axis=0)
    nodes.append(helper.make_node("Gemm", ["flat", wname, bname], ["fc"]))
    y = dq(q("fc", const("s3", s3, np.float32), const("z3", 0, np.int8), "fc_q"), "s3", "z3", "logits")
    if residual:
        nodes.append(helper.make_node("Softmax", [y], ["softmax"], axis=1))
        y = dq(q("softmax", const("s_p", 1 / 256.0, np.float32), const("z_p", -128, np.int8), "softmax_q"), "s_p", "z_p", "probs")
    save(nodes, inits, y, out)


def save(nodes, inits, y, out):
    graph = helper.make_graph(nodes, "qdq_cnn", [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["B", 1, 28, 28])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["B", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="rlx tests/cli/qdq_cnn.py")
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
