#!/usr/bin/env bash
# The acceptance checks of the CLI on every example graph (issue #2):
#  - `rlx compile X --device null` fails with one message naming every op kind of X;
#  - `rlx compile X --device cpu --report` prints per-op counts for native / common-ir / rewritten;
#  - `rlx compile X --emit mir` output compiles back to itself byte for byte;
#  - `rlx devices --json` lists reference, cpu and null, each device with its status; the devices
#    that need hardware out of reach (mlx, ane, hexagon) say why, and compiling for one fails so.
set -u
RLX=$1
EXAMPLES=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

for x in "$EXAMPLES"/*.rlx; do
  name=$(basename "$x")
  if "$RLX" compile "$x" --device null >"$tmp/out" 2>"$tmp/err"; then
    bad "$name: compiling for null succeeded"
  fi
  for op in $(grep -oE '(hir|mir)\.[a-z_0-9]+' "$x" | sort -u); do
    grep -q "$op" "$tmp/err" || bad "$name: the null error does not name $op"
  done
  [ "$(grep -c '^rlx compile' "$tmp/err")" = 1 ] || bad "$name: expected exactly one error message"

  "$RLX" compile "$x" --device cpu --report >"$tmp/report" 2>&1 || bad "$name: cpu compile failed: $(cat "$tmp/report")"
  grep -q 'native  common-ir  rewritten' "$tmp/report" || bad "$name: report header missing"
  grep -qE '^  total +[0-9]+ +[0-9]+ +[0-9]+ +0$' "$tmp/report" || bad "$name: report totals missing or unsupported ops"

  "$RLX" compile "$x" --emit mir >"$tmp/a.rlx" || bad "$name: --emit mir failed"
  "$RLX" compile "$tmp/a.rlx" --emit mir >"$tmp/b.rlx" || bad "$name: recompiling the MIR failed"
  cmp -s "$tmp/a.rlx" "$tmp/b.rlx" || bad "$name: --emit mir does not reproduce itself: $(diff "$tmp/a.rlx" "$tmp/b.rlx" | head -5)"

  "$RLX" compile "$x" --emit lir >"$tmp/l.rlx" 2>/dev/null || bad "$name: --emit lir failed"
  "$RLX" compile "$tmp/l.rlx" --emit hir >"$tmp/l2.rlx" || bad "$name: LIR does not parse back"
  cmp -s "$tmp/l.rlx" "$tmp/l2.rlx" || bad "$name: LIR text does not round-trip"

  for stage in verify legalize fold cse dce fuse-glu fuse-elementwise fuse-epilogue fuse; do
    "$RLX" compile "$x" --stop-after $stage >/dev/null || bad "$name: --stop-after $stage failed"
  done
  echo "ok: $name"
done

"$RLX" devices --json >"$tmp/devices.json" || bad "rlx devices --json failed"
for d in reference cpu null; do
  grep -q "\"name\":\"$d\"" "$tmp/devices.json" || bad "rlx devices --json lacks $d"
done
grep -q '^{"devices":\[{"name":' "$tmp/devices.json" || bad "rlx devices --json has the wrong shape"
grep -q '"name":"cpu","available":true,[^}]*"status":"runs here"' "$tmp/devices.json" || bad "rlx devices --json: cpu's status is not 'runs here'"
# devices whose hardware is out of reach are listed with the reason, and running on one fails with it
for d in mlx ane hexagon; do
  grep -q "\"name\":\"$d\",\"available\":false,[^}]*\"status\":\"needs hardware\"" "$tmp/devices.json" || bad "rlx devices --json: $d is not listed as needing hardware"
  "$RLX" compile "$EXAMPLES/mlp.rlx" --device $d >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc = 1 ] && grep -q "device $d is not available: needs " "$tmp/err" || bad "--device $d: exit $rc, $(cat "$tmp/err")"
done

# Bad input gets one clear error and a non-zero exit, never a crash.
printf 'graph @g(%%x: f32[4]) {\n  %%y = mir.exp(%%x) : f32[5]\n  return %%y\n}\n' >"$tmp/bad.rlx"
"$RLX" compile "$tmp/bad.rlx" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 1 ] || bad "a mistyped graph exits with $rc"
grep -q "declared f32\[5\]" "$tmp/err" || bad "the verifier message is unclear: $(cat "$tmp/err")"
"$RLX" compile /nonexistent.rlx >/dev/null 2>&1; [ $? = 1 ] || bad "a missing file must exit 1"
"$RLX" compile "$EXAMPLES/mlp.rlx" --emit xir >/dev/null 2>&1; [ $? = 2 ] || bad "a bad option must exit 2"
"$RLX" frobnicate >/dev/null 2>&1; [ $? = 2 ] || bad "an unknown command must exit 2"
exit $fail
