#!/usr/bin/python3
"""Quantization quality on text the model never saw. The trained hidden-256 Qwen3 of the tests
(tests/fixtures/qwen3/train_wide.py) learns the tokenizer fixture's whole corpus, so there is no
held-out text for it; this trains the same architecture on the licence texts Debian ships in
/usr/share/common-licenses (English prose, ~1.4 tokens a character with the fixture's 499-token
vocabulary), holds some of them out, and measures each GGUF type RLX writes against the f32
model on the held-out ones with `rlx quantize --eval` (KL divergence, top-1 agreement,
perplexity; teacher-forced, as llama.cpp's perplexity tool compares them).

  /usr/bin/python3 bench/quant_heldout.py [--rlx build/bin/rlx] [--steps 600] [--tokens 1024]
      [--types Q8_0,Q6_K,Q5_K_M,Q4_K_M,Q4_0] [--work /tmp/rlx-heldout] [--json]

Needs Debian's torch (training ~2-4 minutes on one thread). Prints a Markdown table."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures", "qwen3"))
import train_wide  # noqa: E402

LICENSES = "/usr/share/common-licenses"
# Near-copies are kept on one side: GPL-1/GPL-2, LGPL-2/LGPL-2.1, GFDL-1.2/1.3, MPL-1.1/2.0.
TRAIN = ["GPL-3", "LGPL-2.1", "LGPL-2", "LGPL-3", "GFDL-1.3", "GFDL-1.2", "Apache-2.0", "MPL-2.0", "MPL-1.1", "CC0-1.0"]
HELD_OUT = ["Artistic", "BSD", "GPL-2", "GPL-1"]  # the first --tokens of these, in this order
EOT = 494  # the separator train_wide.py puts between texts


def tokenize(rlx, model, text):
    out = subprocess.run([rlx, "tokenize", "--model", model, "--text", text, "--no-special", "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["ids"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rlx", default=os.path.join(HERE, "..", "build", "bin", "rlx"))
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--types", default="Q8_0,Q6_K,Q5_K_M,Q4_K_M,Q4_0")
    ap.add_argument("--work", default="/tmp/rlx-heldout")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    model = os.path.join(a.work, "model")
    # the tokenizer only: a model directory with it, so `rlx tokenize` reads the fixture's files
    train_wide.write_model(os.path.join(a.work, "tok"), {})
    missing = [n for n in TRAIN + HELD_OUT if not os.path.exists(os.path.join(LICENSES, n))]
    if missing:
        sys.exit(f"quant_heldout: {LICENSES} lacks {', '.join(missing)} (Debian's base-files)")
    corpus = []
    for name in TRAIN:
        corpus += tokenize(a.rlx, os.path.join(a.work, "tok"), open(os.path.join(LICENSES, name)).read()) + [EOT]
    held = "\n".join(open(os.path.join(LICENSES, n)).read() for n in HELD_OUT)
    eval_path = os.path.join(a.work, "held_out.txt")
    with open(eval_path, "w") as f:
        f.write(held)
    log = (lambda m: None) if a.json else (lambda m: print(f"  train: {m}", file=sys.stderr, flush=True))
    if not os.path.exists(os.path.join(model, "model.safetensors")) or os.environ.get("RETRAIN"):
        print(f"training on {len(corpus)} tokens of {', '.join(TRAIN)} ({a.steps} steps)", file=sys.stderr)
        train_wide.write_model(model, train_wide.train(corpus, steps=a.steps, T=96, B=12, lr=2e-3, log=log))
    rows = []
    for t in a.types.split(","):
        out = subprocess.run([a.rlx, "quantize", model, "--to", f"gguf:{t}", "-o", os.path.join(a.work, f"{t}.gguf"), "--eval", eval_path,
                              "--tokens", str(a.tokens), "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"quant_heldout: rlx quantize --to gguf:{t} failed:\n{out.stderr}")
        r = json.loads(out.stdout)
        rows.append({"type": t, "mb": r["bytes"] / 1e6, "kld_mean": r["kld_mean"], "kld_p99": r["kld_p99"], "top1": r["top1"],
                     "ppl_f32": r["ppl_reference"], "ppl": r["ppl_quantized"], "tokens": r["tokens"]})
    if a.json:
        print(json.dumps({"train": TRAIN, "held_out": HELD_OUT, "train_tokens": len(corpus), "rows": rows}))
        return
    print(f"held out: {', '.join(HELD_OUT)}, {rows[0]['tokens']} tokens; f32 perplexity {rows[0]['ppl_f32']:.4f}")
    print("| type | MB | KLD mean | KLD p99 | top-1 | ppl |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['type']} | {r['mb']:.3f} | {r['kld_mean']:.5f} | {r['kld_p99']:.5f} | {100 * r['top1']:.2f}% | {r['ppl']:.4f} |")


if __name__ == "__main__":
    main()
