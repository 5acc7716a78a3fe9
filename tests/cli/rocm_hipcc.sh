#!/usr/bin/env bash
# The rocm device is "built, not run" (no AMD GPU here): what it emits must build with Debian's
# hipcc for gfx90a (CDNA2, wave64) and gfx1030 (RDNA2, wave32).
#  1. `rlx export --target rocm` of the examples, then `make` in each export: every kernel's code
#     object bundle must hold both archs, and the host (run.cpp + plan.inc) must link against the
#     HIP runtime and refuse wrong input counts before it looks for a GPU.
#  2. Every distinct kernel of the op suite (test_backend_ops --mode emit): compiled for both
#     archs, many to a translation unit (each in its own namespace, entry renamed) to keep the
#     compiler's start-up out of the count.
set -u
RLX=$1
OPS=$2
EXAMPLES=$3
if ! command -v hipcc >/dev/null; then echo "SKIP: hipcc not found (apt-get install hipcc)"; exit 77; fi
BUNDLER=$(ls /usr/bin/clang-offload-bundler* 2>/dev/null | sort -V | tail -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for ex in mlp:B=4 convnet:N=4 llama_block:S=4,P=8; do
  name=${ex%%:*}
  "$RLX" export --target rocm "$EXAMPLES/$name.rlx" --bind "${ex#*:}" -o "$tmp/$name" >/dev/null || { echo "FAIL: rlx export --target rocm $name"; fail=1; continue; }
  if ! make -s -C "$tmp/$name" -j2 >"$tmp/$name.log" 2>&1; then echo "FAIL: make in the $name export:"; head -30 "$tmp/$name.log"; fail=1; continue; fi
  n=$(ls "$tmp/$name"/kernels/*.hip | wc -l)
  bad=0
  for o in "$tmp/$name"/kernels/*.hsaco; do
    archs=$("$BUNDLER" --list --type=o --input="$o" 2>/dev/null)
    for a in gfx90a gfx1030; do grep -q -- "--$a\$" <<<"$archs" || { echo "FAIL: $o has no $a code object"; bad=1; }; done
  done
  [ $bad = 0 ] || { fail=1; continue; }
  # no arguments: the usage names every input; it must not get as far as looking for a GPU
  (cd "$tmp/$name" && ./run) >"$tmp/$name.usage" 2>&1
  rc=$?
  if [ $rc = 2 ] && grep -q "usage:.*-o OUT_DIR" "$tmp/$name.usage"; then echo "ok: $name — $n kernels built for gfx90a and gfx1030, host linked ($(head -c 120 "$tmp/$name.usage"))"
  else echo "FAIL: $name's run without inputs: rc $rc, $(head -3 "$tmp/$name.usage")"; fail=1; fi
done
mkdir -p "$tmp/ops"
"$OPS" --mode emit --device rocm --output "$tmp/ops" | tail -1 || fail=1
/usr/bin/python3 - "$tmp/ops" <<'PY'
import glob, os, re, sys
d = sys.argv[1]
files = sorted(glob.glob(os.path.join(d, "k*.hip")), key=lambda f: int(re.findall(r"k(\d+)\.hip$", f)[0]))
for b in range(0, len(files), 60):
    s = "#include <hip/hip_runtime.h>\n#include <stdint.h>\n"
    for f in files[b:b + 60]:
        n = re.findall(r"k(\d+)\.hip$", f)[0]
        s += f"#define rlx_kernel rlx_kernel_{n}\nnamespace rlx_k{n} {{\n#line 1 \"{os.path.basename(f)}\"\n" + open(f).read() + "}\n#undef rlx_kernel\n"
    open(os.path.join(d, f"batch{b // 60:03d}.cu.hip"), "w").write(s)
PY
kernels=$(ls "$tmp"/ops/k*.hip | wc -l)
start=$(date +%s)
ls "$tmp"/ops/batch*.cu.hip | xargs -P2 -I{} sh -c 'hipcc --genco -O3 --offload-arch=gfx90a --offload-arch=gfx1030 {} -o {}.hsaco >{}.log 2>&1 || echo {} >>'"$tmp"'/ops/failed'
if [ -s "$tmp/ops/failed" ]; then
  echo "FAIL: $(wc -l <"$tmp/ops/failed") of $(ls "$tmp"/ops/batch*.cu.hip | wc -l) batches of op-suite kernels do not compile:"
  for b in $(cat "$tmp/ops/failed"); do grep -m5 -E "error" "$b.log"; done
  fail=1
else
  echo "ok: all $kernels distinct op-suite kernels compile for gfx90a and gfx1030 ($(( $(date +%s) - start )) s)"
fi
exit $fail
