#!/usr/bin/env bash
# Linear algebra from the command line: the bench workloads' residual checks on small sizes
# (rlx bench linalg / poisson fail on a bad residual), and examples/gaussian_process.rlx run on
# .npy inputs against NumPy's answer.
set -u
RLX=$1
EXAMPLES=$2
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$RLX" bench linalg --sizes 24,40 --runs 1 --warmup 0 --json >"$tmp/linalg.json" 2>"$tmp/err" || bad "bench linalg: $(cat "$tmp/err")"
"$RLX" bench linalg --sizes 24 --dtype f32 --runs 1 --warmup 0 >/dev/null 2>"$tmp/err" || bad "bench linalg f32: $(cat "$tmp/err")"
"$RLX" bench poisson --grid 16,40 --runs 1 --warmup 0 --json >"$tmp/poisson.json" 2>"$tmp/err" || bad "bench poisson: $(cat "$tmp/err")"
for m in cg bicgstab gmres; do
  "$RLX" bench poisson --grid 12 --method $m --preconditioner ichol --runs 1 --warmup 0 >/dev/null 2>"$tmp/err" || bad "bench poisson --method $m: $(cat "$tmp/err")"
done
"$RLX" bench poisson --grid 8 --method sor 2>"$tmp/err" >/dev/null && bad "bench poisson accepted an unknown method"
grep -q "'sor' is not a solver" "$tmp/err" || bad "bench poisson's error does not name the method: $(cat "$tmp/err")"
"$RLX" bench linalg --ops nope --sizes 8 2>"$tmp/err" >/dev/null && bad "bench linalg accepted an unknown op"
grep -q "'nope' is not an op" "$tmp/err" || bad "bench linalg's error does not name the op: $(cat "$tmp/err")"

if ! $PY -c 'import numpy' 2>/dev/null; then
  echo "SKIP: the gaussian_process check needs Debian's numpy ($PY)"
else
  $PY - "$tmp" <<'PYEOF' || bad "writing the inputs failed"
import sys, json, numpy as np
tmp = sys.argv[1]
for name in ("linalg", "poisson"):
    rows = json.load(open(f"{tmp}/{name}.json"))["results"]
    assert rows and all(r["residual"] < 1e-8 for r in rows if r["residual"] >= 0), rows
x = np.linspace(0, 1, 9)
k = np.exp(-((x[:, None] - x[None, :]) ** 2) / 0.1) + 1e-3 * np.eye(9)
xs = np.linspace(0.05, 0.95, 4)
np.save(f"{tmp}/k.npy", k)
np.save(f"{tmp}/y.npy", np.sin(6 * x)[:, None])
np.save(f"{tmp}/ks.npy", np.exp(-((xs[:, None] - x[None, :]) ** 2) / 0.1))
PYEOF
  "$RLX" run "$EXAMPLES/gaussian_process.rlx" --input k="$tmp/k.npy" --input y="$tmp/y.npy" --input k_star="$tmp/ks.npy" --output "$tmp/out" >/dev/null 2>"$tmp/err" \
    || bad "gaussian_process.rlx: $(cat "$tmp/err")"
  $PY - "$tmp" <<'PYEOF' || bad "gaussian_process.rlx disagrees with numpy"
import sys, numpy as np
tmp = sys.argv[1]
k, y, ks = (np.load(f"{tmp}/{n}.npy") for n in ("k", "y", "ks"))
mean, logdet = np.load(f"{tmp}/out/mean.npy"), np.load(f"{tmp}/out/logdet.npy")
np.testing.assert_allclose(mean, ks @ np.linalg.solve(k, y), rtol=1e-9)
np.testing.assert_allclose(logdet, np.linalg.slogdet(k)[1], rtol=1e-12)
PYEOF
fi
[ $fail = 0 ] && echo "science: ok"
exit $fail
