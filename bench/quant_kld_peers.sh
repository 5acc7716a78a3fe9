#!/bin/sh
# RLX's GGUF quantizer against ggml's (llama.cpp's), type by type, on one model and one text:
# RLX writes each type (rlx quantize), bench/ggml_requant.cpp rewrites the same file's quantized
# tensors with ggml_quantize_chunk, and both files are measured by the same evaluator against
# the f32 model (rlx quantize --compare): KL divergence, top-1 agreement, perplexity.
#
#   bench/quant_kld_peers.sh MODEL_DIR EVAL.txt GGML_CHECKOUT [TOKENS]
# GGML_CHECKOUT: a clone of github.com/ggml-org/ggml (built here, CPU only). Prints a table.
set -eu
model=$1 eval=$2 ggml=$3 tokens=${4:-256}
here=$(cd "$(dirname "$0")" && pwd)
rlx=${RLX:-$here/../build/bin/rlx}
work=${WORK:-/tmp/rlx-quant-kld}
mkdir -p "$work"
[ -f "$ggml/build/src/libggml.so" ] || { cmake -S "$ggml" -B "$ggml/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF >/dev/null && ninja -C "$ggml/build" ggml >/dev/null; }
g++ -O2 -std=c++17 "$here/ggml_requant.cpp" -I"$ggml/include" -L"$ggml/build/src" -lggml -lggml-base -Wl,-rpath,"$ggml/build/src" -o "$work/ggml_requant"
"$rlx" quantize "$model" --to gguf:F32 -o "$work/f32.gguf" --eval "$eval" --tokens 2 --json >/dev/null
echo "| type | MB | RLX KLD | RLX top-1 | RLX ppl | ggml KLD | ggml top-1 | KLD RLX/ggml |"
echo "|---|---|---|---|---|---|---|---|"
for t in Q8_0 Q6_K Q5_K_M Q5_K Q5_1 Q5_0 Q4_K_M Q4_K Q4_1 Q4_0 Q3_K Q2_K; do
  "$rlx" quantize "$model" --to gguf:$t -o "$work/rlx-$t.gguf" --eval "$eval" --tokens "$tokens" --json 2>/dev/null >"$work/r.json"
  "$work/ggml_requant" "$work/rlx-$t.gguf" "$work/f32.gguf" "$work/ggml-$t.gguf" >/dev/null
  "$rlx" quantize "$model" --compare "$work/ggml-$t.gguf" --eval "$eval" --tokens "$tokens" --json 2>/dev/null >"$work/g.json"
  /usr/bin/python3 - "$t" "$work/r.json" "$work/g.json" <<'PY'
import json, sys
t, r, g = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
print("| %s | %.3f | %.5f | %.2f%% | %.4f | %.5f | %.2f%% | %.2f |" % (t, r["bytes"] / 1e6, r["kld_mean"], 100 * r["top1"], r["ppl_quantized"],
      g["kld_mean"], 100 * g["top1"], r["kld_mean"] / g["kld_mean"]))
PY
done
