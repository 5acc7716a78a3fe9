#!/usr/bin/python3
"""Writes a fully connected network in ONNX's QDQ format (as onnxruntime's static quantization lays
it out: int8 weights per output channel with symmetric scales, int32 biases at scale s_x·s_w,
ReLU folded into the following QuantizeLinear's range), with seeded random weights and
activation scales calibrated on random inputs, and a set of test inputs. The default widths are
the jet-tagging network of hls4ml's papers, 16-64-32-32-5 (16 standardized jet features in, five
class scores out); tests/cli/fpga.sh exports it for the FPGA's fully parallel datapath.

  /usr/bin/python3 tests/cli/qdq_mlp.py OUT.onnx INPUTS.npy [--widths 16,64,32,32,5] [--count N] [--seed N]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    out, inputs_path = sys.argv[1], sys.argv[2]
    widths = [int(w) for w in arg("--widths", "16,64,32,32,5").split(",")]
    count, seed = int(arg("--count", "2000")), int(arg("--seed", "11"))
    rng = np.random.default_rng(seed)
    calib = rng.normal(0, 1, (256, widths[0]))
    test = rng.normal(0, 1, (count, widths[0])).astype(np.float32)
    inits, nodes = [], []

    def const(name, a, dtype):
        inits.append(numpy_helper.from_array(np.asarray(a).astype(dtype), name))
        return name

    def q(x, s, z, name):
        nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [name]))
        return name

    def dq(x, s, z, name, axis=None):
        nodes.append(helper.make_node("DequantizeLinear", [x, s, z], [name], **({} if axis is None else {"axis": axis})))
        return name

    s_prev = np.abs(calib).max() / 127.0
    x = dq(q("features", const("s_in", s_prev, np.float32), const("z_in", 0, np.int8), "features_q"), "s_in", "z_in", "features_dq")
    a = calib
    for i, (k, n) in enumerate(zip(widths, widths[1:])):
        last = i == len(widths) - 2
        w = rng.normal(0, 1.0 / np.sqrt(k), (k, n))
        b = rng.normal(0, 0.1, n)
        a = a @ w + b
        if not last:
            a = np.maximum(a, 0)
        sw = np.abs(w).max(axis=0) / 127.0
        wi = np.clip(np.round(w / sw), -127, 127)
        wname = dq(const("w%d_q" % i, wi, np.int8), const("w%d_s" % i, sw, np.float32), const("w%d_z" % i, np.zeros(n), np.int8), "w%d" % i, axis=1)
        bname = dq(const("b%d_q" % i, np.round(b / (s_prev * sw)), np.int32), const("b%d_s" % i, s_prev * sw, np.float32), const("b%d_z" % i, np.zeros(n), np.int32),
                   "b%d" % i, axis=0)
        nodes.append(helper.make_node("Gemm", [x, wname, bname], ["fc%d" % i]))
        y = "fc%d" % i
        if last:
            s_out, z_out = np.abs(a).max() / 127.0, 0
        else:
            nodes.append(helper.make_node("Relu", [y], ["relu%d" % i]))
            y, s_out, z_out = "relu%d" % i, a.max() / 255.0, -128
        x = dq(q(y, const("s%d" % i, s_out, np.float32), const("z%d" % i, z_out, np.int8), y + "_q"), "s%d" % i, "z%d" % i, "scores" if last else y + "_dq")
        s_prev = s_out
    graph = helper.make_graph(nodes, "qdq_mlp", [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["B", widths[0]])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["B", widths[-1]])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="rlx tests/cli/qdq_mlp.py")
    onnx.checker.check_model(model)
    onnx.save(model, out)
    np.save(inputs_path, test)


if __name__ == "__main__":
    main()
