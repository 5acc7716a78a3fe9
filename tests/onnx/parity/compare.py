#!/usr/bin/python3
"""Compares every .npy in REF_DIR with the same file in GOT_DIR: shape, dtype and relative error
max|got − ref| / max|ref| (≤ TOL). Prints one line per output; exits 1 on any failure.

usage: compare.py REF_DIR GOT_DIR [TOL] [--label NAME]
"""
import os
import sys

import numpy as np


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--label")]
    label = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--label=")), os.path.basename(args[1].rstrip("/")))
    ref_dir, got_dir = args[0], args[1]
    tol = float(args[2]) if len(args) > 2 else 1e-4
    ok = True
    files = sorted(f for f in os.listdir(ref_dir) if f.endswith(".npy"))
    if not files:
        print(f"{label}: no reference outputs in {ref_dir}")
        return 1
    for f in files:
        ref = np.load(os.path.join(ref_dir, f))
        path = os.path.join(got_dir, f)
        if not os.path.exists(path):
            print(f"{label} {f}: FAIL missing output {path}")
            ok = False
            continue
        got = np.load(path)
        if got.shape != ref.shape or got.dtype != ref.dtype:
            print(f"{label} {f}: FAIL {got.dtype}{list(got.shape)} vs reference {ref.dtype}{list(ref.shape)}")
            ok = False
            continue
        r = ref.astype(np.float64)
        g = got.astype(np.float64)
        scale = float(np.max(np.abs(r))) or 1.0
        rel = float(np.max(np.abs(g - r))) / scale
        good = rel <= tol
        ok = ok and good
        print(f"{label} {f}: {'ok' if good else 'FAIL'} max relative error {rel:.3g} (max |ref| {scale:.3g}, tolerance {tol:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
