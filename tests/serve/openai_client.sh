#!/usr/bin/env bash
# The official `openai` npm client against `rlx serve` on 127.0.0.1: a streamed chat completion,
# a completion, embeddings (equal to `rlx embed`'s), concurrent streams, and the errors the
# client raises. Skips (77) without node or the package (make setup installs it).
set -euo pipefail
RLX=$1
FIX=$2
NPM=${RLX_NPM_DIR:-$HOME/.cache/rlx-npm}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "skipped: no node"; exit 77; }
[ -f "$NPM/node_modules/openai/package.json" ] || { echo "skipped: the openai npm package is not in $NPM (make setup installs it)"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$RLX" serve --model "$FIX/qwen3/qwen3_tiny" --model-name tiny --embedding-model "$FIX/bert/st_mean" --embedding-model-name st \
  --port 0 --api-key sk-rlx-client --parallel 3 --ctx 128 2> "$tmp/log" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$tmp/log" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
port=$(sed -nE 's|.*listening on http://127\.0\.0\.1:([0-9]+)/v1.*|\1|p' "$tmp/log")
[ -n "$port" ] || { echo "rlx serve did not start:"; cat "$tmp/log"; exit 1; }
"$RLX" embed --model "$FIX/bert/st_mean" --text "the client's sentence" --json > "$tmp/embed.json"
NODE_PATH="$NPM/node_modules" RLX_BASE_URL="http://127.0.0.1:$port/v1" RLX_EMBED_JSON="$tmp/embed.json" node "$HERE/openai_client.js"
