#!/usr/bin/env bash
# The soak workloads briefly (issue 34; `make soak` runs them for 30 minutes each): one compiled
# MiniLM from 8 threads and `rlx serve` under 8 loopback clients must keep every result equal to
# its first, fail no request, answer malformed ones with 400 and keep RSS flat after warm-up.
set -u
RLX=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# A short run's "warm" point comes early, so the RSS bound is looser than make soak's 1 %
# (SOAK_MAX_GROWTH: make sanitize lifts it — ASan's quarantine holds freed memory, so RSS there is
# not the program's).
GROWTH=${SOAK_MAX_GROWTH:-0.05}
$RLX bench soak --seconds 6 --callers 8 --max-growth "$GROWTH" --json > "$tmp/soak.json"
check "model soak: ok, runs made, no result differing" \
  "grep -q '\"ok\":true' '$tmp/soak.json' && grep -q '\"mismatches\":0' '$tmp/soak.json' && ! grep -q '\"runs\":0,' '$tmp/soak.json'"
$RLX bench serve-soak --seconds 6 --clients 8 --max-growth "$GROWTH" --json > "$tmp/serve.json"
check "server soak: ok, completions streamed and plain, malformed ones refused, none failed" \
  "grep -q '\"ok\":true' '$tmp/serve.json' && grep -q '\"failed\":0' '$tmp/serve.json' && grep -q '\"differing\":0' '$tmp/serve.json' && ! grep -q '\"streamed\":0,' '$tmp/serve.json' && ! grep -q '\"malformed\":0,' '$tmp/serve.json'"
$RLX bench serve-soak --seconds 0 > "$tmp/bad.txt" 2>&1
check "a bad duration is refused by name" "grep -q -- '--seconds must be positive' '$tmp/bad.txt'"
exit $fail
