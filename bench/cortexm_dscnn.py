#!/usr/bin/python3
"""The Cortex-M benchmark of issue #26: an MLPerf-Tiny keyword-spotting DS-CNN (49×10 MFCC input;
conv 10×4 stride 2 to 64 channels; four depthwise 3×3 + pointwise 1×1 blocks; average pool; 12
classes) as an int8 RLX graph with seeded random weights, exported by `rlx export --target
cortex-m4|cortex-m7|cortex-m55`, built with arm-none-eabi-gcc and run under QEMU:

  * outputs bit-identical to `rlx run --device reference` on the same inputs,
  * flash (code + weights of the model) and RAM (arena + measured stack) against the live peak,
  * guest instructions per inference of the DSP/Helium kernels and of the plain-C baseline
    (`make icount`: a QEMU plugin counts every executed instruction).

The int8 graph follows `rlx quantize`'s conventions (integer layers dot_general/conv i8·i8→i32 with
the input zero point folded into the bias, requantize with ReLU folded by a zero point of −128,
average pooling as a depthwise convolution of ones). Its multipliers are chosen here by running
the same integer arithmetic in NumPy on calibration inputs, so activations span the int8 range —
that is all NumPy does; the reference outputs come from RLX's reference backend.

Anchors (MLPerf Tiny v0.5, DS-CNN KWS on a Cortex-M4F at 120 MHz): TFLM 182 ms ≈ 21.8 M cycles,
ST X-CUBE-AI 73 ms ≈ 8.8 M cycles. QEMU counts instructions, not cycles (it models no timing).

  /usr/bin/python3 bench/cortexm_dscnn.py --rlx build/bin/rlx [--inputs 20] [--json]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

CORES = ["cortex-m4", "cortex-m7", "cortex-m55"]


def requant_params(eff):
    """eff = M / 2^s with M in [2^30, 2^31)."""
    s = 0
    while eff * 2 ** s < 2 ** 30:
        s += 1
    m = int(round(eff * 2 ** s))
    if m == 2 ** 31:
        m //= 2
        s -= 1
    assert 0 <= s <= 62, s
    return m, s


def requantize(acc, m, s, zp):
    p = acc.astype(np.int64) * m + ((1 << (s - 1)) if s > 0 else 0)
    return np.clip((p >> s) + zp, -128, 127).astype(np.int8)


def conv_int(x, w, stride, pad, pad_value, groups):
    """NCHW integer convolution, padded with pad_value, sums in int64."""
    n, c, h, wd = x.shape
    co, cig, kh, kw = w.shape
    xp = np.full((n, c, h + pad[0] + pad[1], wd + pad[2] + pad[3]), pad_value, dtype=np.int64)
    xp[:, :, pad[0]:pad[0] + h, pad[2]:pad[2] + wd] = x
    oh = (xp.shape[2] - kh) // stride[0] + 1
    ow = (xp.shape[3] - kw) // stride[1] + 1
    out = np.zeros((n, co, oh, ow), dtype=np.int64)
    cog = co // groups
    for g in range(groups):
        xs = xp[:, g * cig:(g + 1) * cig]
        for ky in range(kh):
            for kx in range(kw):
                patch = xs[:, :, ky:ky + stride[0] * oh:stride[0], kx:kx + stride[1] * ow:stride[1]]
                wk = w[g * cog:(g + 1) * cog, :, ky, kx].astype(np.int64)
                out[:, g * cog:(g + 1) * cog] += np.einsum("nchw,oc->nohw", patch, wk)
    return out


class GraphText:
    def __init__(self):
        self.lines, self.n = [], 0

    def node(self, text, type_, loc):
        v = "%%%d" % self.n
        self.n += 1
        self.lines.append("  %s = %s : %s loc(\"%s\")" % (v, text, type_, loc))
        return v

    def const(self, arr, dtype, loc):
        shape = ",".join(str(d) for d in arr.shape)
        hexes = arr.astype({"i8": np.int8, "i32": np.int32, "f32": np.float32}[dtype]).tobytes().hex()
        return self.node("mir.constant() {value=tensor<%s[%s]>0x%s}" % (dtype, shape, hexes), "%s[%s]" % (dtype, shape), loc)


def build(seed, calib):
    rng = np.random.default_rng(seed)
    g = GraphText()
    in_scale, in_zp = np.float32(0.05), 0
    x = g.node("hir.quantize_linear(%%mfcc, %s, %s)" % (g.const(np.array(in_scale), "f32", "input"), g.const(np.array(in_zp), "i8", "input")),
               "i8[1,1,49,10]", "input")
    xq = np.clip(np.round(calib / in_scale) + in_zp, -128, 127).astype(np.int64)  # calibration activations
    zp_in = in_zp

    def layer(name, x, xq, zp_in, cout, cin_g, k, stride, pad, groups, weights=None, relu=True):
        w = weights if weights is not None else rng.integers(-90, 91, size=(cout, cin_g, k[0], k[1])).astype(np.int8)
        bias = rng.integers(-2000, 2000, size=cout).astype(np.int64) - zp_in * w.reshape(cout, -1).astype(np.int64).sum(1)
        acc = conv_int(xq, w, stride, pad, zp_in, groups) + bias.reshape(1, -1, 1, 1)
        hi = np.percentile(np.maximum(acc, 0) if relu else np.abs(acc), 99.9) or 1.0
        m, s = requant_params((250.0 if relu else 120.0) / hi)
        zp_out = -128 if relu else 0
        yq = requantize(acc, m, s, zp_out).astype(np.int64)
        n, c, h, wd = [int(v) for v in re.findall(r"\d+", g_type[x])]
        oh, ow = yq.shape[2], yq.shape[3]
        px = x
        if any(pad):
            px = g.node("mir.pad(%s) {lo=[0,0,%d,%d], hi=[0,0,%d,%d], value=%d.0}" % (x, pad[0], pad[2], pad[1], pad[3], zp_in),
                        "i8[1,%d,%d,%d]" % (c, h + pad[0] + pad[1], wd + pad[2] + pad[3]), name)
        a = g.node("mir.conv(%s, %s) {strides=[%d,%d], padding=[[0,0],[0,0]], dilation=[1,1], groups=%d, out=i32}" % (px, g.const(w, "i8", name), stride[0], stride[1], groups),
                   "i32[1,%d,%d,%d]" % (cout, oh, ow), name)
        a = g.node("mir.add(%s, %s)" % (a, g.const(bias.reshape(1, cout, 1, 1), "i32", name)), "i32[1,%d,%d,%d]" % (cout, oh, ow), name)
        y = g.node("hir.requantize(%s, %s, %s) {zero_point=%d}" % (a, g.const(np.full((1, cout, 1, 1), m), "i32", name), g.const(np.full((1, cout, 1, 1), s), "i32", name), zp_out),
                   "i8[1,%d,%d,%d]" % (cout, oh, ow), name)
        g_type[y] = "%d,%d,%d,%d" % (1, cout, oh, ow)
        return y, yq, zp_out

    g_type = {x: "1,1,49,10"}
    x, xq, zp_in = layer("conv1", x, xq, zp_in, 64, 1, (10, 4), (2, 2), (4, 5, 1, 1), 1)
    for b in range(1, 5):
        x, xq, zp_in = layer("dw%d" % b, x, xq, zp_in, 64, 1, (3, 3), (1, 1), (1, 1, 1, 1), 64)
        x, xq, zp_in = layer("pw%d" % b, x, xq, zp_in, 64, 64, (1, 1), (1, 1), (0, 0, 0, 0), 1)
    # average pooling over 25×5: a depthwise convolution of ones, rescaled by 1/125
    ones = np.ones((64, 1, 25, 5), dtype=np.int8)
    x, xq, zp_in = layer("avgpool", x, xq, zp_in, 64, 1, (25, 5), (1, 1), (0, 0, 0, 0), 64, weights=ones)
    flat = g.node("mir.reshape(%s) {shape=[1,64]}" % x, "i8[1,64]", "flatten")
    w = rng.integers(-90, 91, size=(12, 64)).astype(np.int8)
    bias = rng.integers(-2000, 2000, size=12).astype(np.int64) - zp_in * w.astype(np.int64).sum(1)
    acc = xq.reshape(xq.shape[0], 64) @ w.T.astype(np.int64) + bias
    m, s = requant_params(120.0 / (np.percentile(np.abs(acc), 99.9) or 1.0))
    a = g.node("mir.dot_general(%s, %s) {contract=[[1],[1]], out=i32}" % (flat, g.const(w, "i8", "fc")), "i32[1,12]", "fc")
    a = g.node("mir.add(%s, %s)" % (a, g.const(bias.reshape(1, 12), "i32", "fc")), "i32[1,12]", "fc")
    y = g.node("hir.requantize(%s, %s, %s) {zero_point=0}" % (a, g.const(np.full((1, 12), m), "i32", "fc"), g.const(np.full((1, 12), s), "i32", "fc")), "i8[1,12]", "fc")
    out = g.node("hir.dequantize_linear(%s, %s, %s)" % (y, g.const(np.array(np.float32(0.1)), "f32", "output"), g.const(np.array(0), "i8", "output")), "f32[1,12]", "output")
    return "graph @dscnn_int8(%%mfcc: f32[1,1,49,10]) {\n%s\n  return %s\n}\n" % ("\n".join(g.lines), out)


def sh(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, shell=True, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (r.returncode, cmd, r.stdout, r.stderr))
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rlx", default="build/bin/rlx")
    ap.add_argument("--inputs", type=int, default=20, help="random inputs checked bit for bit on every core")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rlx = os.path.abspath(a.rlx)
    rng = np.random.default_rng(a.seed + 1)
    inputs = rng.normal(0, 1.5, size=(a.inputs, 1, 49, 10)).astype(np.float32)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        graph = os.path.join(tmp, "dscnn.rlx")
        open(graph, "w").write(build(a.seed, rng.normal(0, 1.5, size=(8, 1, 49, 10)).astype(np.float32)))
        ref = []
        for i in range(a.inputs):  # the reference run, one inference at a time as on the board
            np.save(os.path.join(tmp, "x.npy"), inputs[i:i + 1])
            sh("%s run %s --device reference --input mfcc=%s/x.npy --output %s/ref" % (rlx, graph, tmp, tmp))
            ref.append(np.load(os.path.join(tmp, "ref", "output0.npy")))
        ref = np.concatenate(ref)
        for core in CORES:
            d = os.path.join(tmp, core)
            sh("%s export --target %s %s -o %s" % (rlx, core, graph, d))
            plan = json.load(open(os.path.join(d, "model.json")))
            sh("make -s model.elf model.o", cwd=d)
            inputs.tofile(os.path.join(d, "rlx_input.bin"))
            run = sh("make -s run", cwd=d)
            stack = int(re.search(r"stack (\d+) bytes", run).group(1))
            got = np.fromfile(os.path.join(d, "rlx_output.bin"), dtype=np.float32).reshape(ref.shape)
            exact = got.tobytes() == ref.tobytes()
            size = sh("arm-none-eabi-size %s/model.o" % d).split("\n")[1].split()
            inputs[:1].tofile(os.path.join(d, "rlx_input.bin"))
            sh("make -s icount", cwd=d)
            ic = json.load(open(os.path.join(d, "icount.json")))
            rows.append({"core": core, "bit_exact": exact, "inputs": a.inputs, "flash_bytes": int(size[0]) + int(size[1]), "weight_bytes": plan["weight_bytes"],
                         "arena_bytes": plan["arena_bytes"], "stack_bytes": stack, "peak_live_bytes": plan["peak_live_bytes"],
                         "kernel_instructions": ic["kernels_dsp"], "plain_kernel_instructions": ic["kernels_plain"],
                         "instructions": ic["total_dsp"], "plain_instructions": ic["total_plain"]})
    if a.json:
        print(json.dumps(rows))
        return
    print("DS-CNN (KWS, 2.66 M MACs) int8, one inference; instructions counted by QEMU (not cycles)")
    print("%-11s %-9s %8s %7s %6s %6s %9s %12s %12s %7s" % ("core", "outputs", "flash", "arena", "stack", "peak", "RAM/peak", "kernels", "plain C", "ratio"))
    for r in rows:
        print("%-11s %-9s %8d %7d %6d %6d %9.3f %12d %12d %7.3f" % (
            r["core"], "bit-exact" if r["bit_exact"] else "DIFFER", r["flash_bytes"], r["arena_bytes"], r["stack_bytes"], r["peak_live_bytes"],
            (r["arena_bytes"] + r["stack_bytes"]) / r["peak_live_bytes"], r["kernel_instructions"], r["plain_kernel_instructions"],
            r["kernel_instructions"] / r["plain_kernel_instructions"]))
    print("anchors (Cortex-M4F, 120 MHz): TFLM 182 ms = 21.8 M cycles; X-CUBE-AI 73 ms = 8.8 M cycles")
    if not all(r["bit_exact"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
