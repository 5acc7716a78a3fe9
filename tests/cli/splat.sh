#!/usr/bin/env bash
# rlx splat (issue 30): a random scene rendered to PNG (decoded back by Python's zlib: an 8-bit
# RGB image with something in it); a scene fitted to views of a known one must reach 30 dB PSNR
# on them, and its .ply and images must be written and read back; bad input fails by name.
set -u
RLX=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

$RLX splat render --random 3000 --size 160x120 -o "$tmp/random.png" --alpha "$tmp/alpha.png" --json > "$tmp/render.json" 2> "$tmp/render.err"
check "render writes a PNG and says so" "grep -q '\"render_ms\"' '$tmp/render.json' && [ -s '$tmp/random.png' ] && [ -s '$tmp/alpha.png' ]"
/usr/bin/python3 - "$tmp/random.png" > "$tmp/png.txt" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, color = struct.unpack('>IIBB', body[:10])
        assert (w, h, depth, color) == (160, 120, 8, 2), (w, h, depth, color)
    if kind == b'IDAT':
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
assert len(raw) == 120 * (1 + 160 * 3)
print('lit', sum(1 for b in raw if b > 40))
PY
check "the PNG decodes to a 160x120 RGB image with lit pixels" "awk '{exit !(\$2 > 2000)}' '$tmp/png.txt'"

$RLX splat fit --target-gaussians 400 --gaussians 800 --views 8 --size 64 --steps 800 --eval-every 400 --min-psnr 30 -o "$tmp/fit" --json > "$tmp/fit.json" 2> "$tmp/fit.err"
rc=$?
check "fit reaches 30 dB PSNR (exit $rc: $(grep -o '"psnr":[0-9.]*,"seconds"' "$tmp/fit.json" | tail -1))" "[ $rc = 0 ]"
for f in target.png before.png after.png psnr.png target.ply fitted.ply; do check "fit wrote $f" "[ -s '$tmp/fit/$f' ]"; done
$RLX splat render "$tmp/fit/fitted.ply" --eye 0,1.2,-3.2 --size 64x64 -o "$tmp/again.png" > /dev/null 2>&1
check "the fitted .ply renders" "[ -s '$tmp/again.png' ]"

printf 'ply\nformat binary_big_endian 1.0\nelement vertex 1\nend_header\n' > "$tmp/bad.ply"
$RLX splat render "$tmp/bad.ply" -o "$tmp/bad.png" > /dev/null 2> "$tmp/bad.err"
check "a big-endian .ply is refused by name" "grep -q 'binary_big_endian' '$tmp/bad.err' && [ ! -e '$tmp/bad.png' ]"
$RLX splat render --random 10 --eye 0,0,0 --target 0,0,0 -o "$tmp/x.png" > /dev/null 2> "$tmp/eye.err"
check "a degenerate camera is refused by name" "grep -q 'eye is on its target' '$tmp/eye.err'"
exit $fail
