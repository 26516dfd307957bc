#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_cli.sh — command-line behaviour of stereo-match (and stereo-eval), as TAP.
#
# A valid generated pair must match into .pfm/.png; every bad input or usage must fail with the
# documented exit status (1 input/processing, 2 usage), exactly one stderr line naming the
# offending file or option, and no output file (nor temp file) left behind; a failed run must
# not clobber an existing output. Run from the repo root (tests/run does): bash tests/test_cli.sh
# Env: STEREO_BUILD (default build). Exits non-zero only on a setup error.
#      STEREO_SANITIZER (tests/test_asan.sh sets it: the programs are built with ASan) leaves out
#      what ASan cannot run under: address-space limits (ulimit -v; its shadow memory reserves
#      terabytes of it), peak RSS bounds (the shadow counts) and valgrind.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
M=$B/stereo-match
SY=$B/stereo-synth
EV=$B/stereo-eval
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for x in "$M" "$SY" "$EV"; do
  [ -x "$x" ] || { echo "Bail out! $x is not built (ninja $x)"; exit 1; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/test_cli.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'chmod -R u+rwX "$W" 2>/dev/null; rm -rf "$W"' EXIT
IN=$W/in      # inputs, good and bad
OD=$W/out     # output directory, must stay empty after a failed run
mkdir -p "$IN" "$OD"
O=$OD/disp.pfm

setup_fail() { echo "Bail out! setup: $*"; exit 1; }
"$SY" --size 96x64 "$W/a" >/dev/null 2>&1 || setup_fail "stereo-synth 96x64"
"$SY" --size 80x64 "$W/b" >/dev/null 2>&1 || setup_fail "stereo-synth 80x64"
L=$W/a/left.png R=$W/a/right.png R80=$W/b/right.png
half() { head -c $(($(stat -c %s "$1") / 2)) "$1" >"$2"; }
: >"$IN/empty.png"
echo "this is not an image" >"$IN/text.png"
half "$L" "$IN/trunc.png"
# JPEG and PGM copies of the left view (python3 with cv2; without it those tests skip)
have_cv2=0
"$PY" - "$L" "$IN" 2>/dev/null <<'EOF' && have_cv2=1
import sys, cv2
im = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)
assert im is not None and cv2.imwrite(sys.argv[2] + "/full.jpg", im)
assert cv2.imwrite(sys.argv[2] + "/full.pgm", im)
EOF
if [ $have_cv2 = 1 ]; then
  half "$IN/full.jpg" "$IN/trunc.jpg"
  half "$IN/full.pgm" "$IN/trunc.pgm"
fi
NOCV2="$PY has no cv2 to write JPEG/PGM inputs"
cp "$L" "$IN/noread.png" && chmod 000 "$IN/noread.png"
mkdir "$IN/dir.png"

# ---- TAP helpers: results are collected and printed after the plan -----------------------
n=0
tap=()
result() { # result STATUS DESC [DIAGNOSTIC...]   STATUS 0 = pass
  local st=$1 desc=$2
  shift 2
  n=$((n + 1))
  if [ "$st" -eq 0 ]; then
    tap+=("ok $n - $desc")
  else
    tap+=("not ok $n - $desc")
    local d
    for d in "$@"; do tap+=("#   $d"); done
  fi
}
skip() { n=$((n + 1)); tap+=("ok $n - $1 # SKIP $2"); }

# run_m ARGS...: runs stereo-match; sets rc, stdout in $W/so, stderr in $W/se
run_m() { "$M" "$@" >"$W/so" 2>"$W/se"; rc=$?; }
stderr_lines() { grep -c '' "$W/se"; }
stderr_diag() { sed 's/^/stderr: /' "$W/se" | head -5; }
listing() { (cd "$OD" && ls -A | LC_ALL=C sort); }
stray_tmp() { find "$W" -name '*.tmp.*' | head -3; }

# expect_fail CODE 'NAME[|NAME2]' DESC ARGS...
# stereo-match ARGS must exit CODE with exactly one stderr line containing every NAME, and leave
# the output directory as it was (emptied first unless KEEP=1) with no temp file anywhere.
expect_fail() {
  local code=$1 names=$2 desc=$3
  shift 3
  [ "${KEEP:-0}" = 1 ] || { rm -rf "$OD" && mkdir "$OD"; }
  local before after why=() name
  before=$(listing)
  run_m "$@"
  after=$(listing)
  [ "$rc" -eq "$code" ] || why+=("exit status $rc, expected $code")
  [ "$(stderr_lines)" -eq 1 ] || why+=("$(stderr_lines) lines on stderr, expected 1")
  IFS='|' read -ra name_list <<<"$names"
  for name in "${name_list[@]}"; do
    grep -qF -- "$name" "$W/se" || why+=("stderr does not name '$name'")
  done
  [ "$before" = "$after" ] || why+=("output dir changed: '$before' -> '$after'")
  [ -z "$(stray_tmp)" ] || why+=("temp file left: $(stray_tmp)")
  [ ${#why[@]} -eq 0 ] || mapfile -t -O ${#why[@]} why < <(stderr_diag)
  result ${#why[@]} "$desc" "${why[@]}"
}

# check DESC CMD...: passes when CMD succeeds; diagnostics are CMD's output
check() {
  local desc=$1 out
  shift
  out=$("$@" 2>&1)
  if [ $? -eq 0 ]; then
    result 0 "$desc"
  else
    local diag
    mapfile -t diag <<<"$out"
    result 1 "$desc" "${diag[@]}"
  fi
}

pfm_ok() { # FILE W H [LOW]: header Pf / "W H" / negative scale, payload size, some finite
  # values, none below LOW (default 0)
  "$PY" - "$@" <<'EOF'
import sys, struct, math
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
low = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
d = open(path, "rb").read()
magic, size, scale, data = d.split(b"\n", 3)
assert magic == b"Pf", "magic %r" % magic
assert size.split() == [str(w).encode(), str(h).encode()], "size %r" % size
assert float(scale) < 0, "scale %r is not negative (little-endian)" % scale
assert len(data) == w * h * 4, "payload %d bytes, expected %d" % (len(data), w * h * 4)
v = struct.unpack("<%df" % (w * h), data)
finite = sum(1 for x in v if math.isfinite(x))
assert finite > w * h // 2, "only %d finite disparities" % finite
assert all(x >= low for x in v if math.isfinite(x)), "a disparity below %g" % low
EOF
}
png_ok() { # FILE W H DEPTH COLOURTYPE (0 grey, 2 RGB): reads the IHDR chunk
  "$PY" - "$@" <<'EOF'
import sys, struct
path, w, h, depth, ctype = sys.argv[1], *map(int, sys.argv[2:])
d = open(path, "rb").read(33)
assert d[:8] == b"\x89PNG\r\n\x1a\n" and d[12:16] == b"IHDR", "not a PNG"
gw, gh, gd, gc = struct.unpack(">IIBB", d[16:26])
assert (gw, gh, gd, gc) == (w, h, depth, ctype), \
    "PNG is %dx%d depth %d type %d, expected %dx%d depth %d type %d" % (gw, gh, gd, gc, w, h, depth, ctype)
EOF
}
pfm_valid() { # FILE: prints the number of finite (valid) disparities
  "$PY" - "$1" <<'EOF'
import sys, struct, math
d = open(sys.argv[1], "rb").read().split(b"\n", 3)
w, h = map(int, d[1].split())
print(sum(1 for x in struct.unpack("<%df" % (w * h), d[3]) if math.isfinite(x)))
EOF
}
ok_run() { # ok_run ARGS...: stereo-match succeeds
  run_m "$@"
  [ "$rc" -eq 0 ] || { echo "exit status $rc"; cat "$W/se"; return 1; }
}

# ---- valid baseline ------------------------------------------------------------------------
rm -rf "$OD" && mkdir "$OD"
check "96x64 pair -> .pfm: exit 0, header Pf / 96 64 / negative scale" \
  eval 'ok_run --backend cpu "$L" "$R" "$OD/d.pfm" && pfm_ok "$OD/d.pfm" 96 64'
check "--min-disparity -8 -d 32 -> .pfm: exit 0, 96x64, nothing below -8" \
  eval 'ok_run --backend cpu --min-disparity -8 -d 32 "$L" "$R" "$OD/n.pfm" && pfm_ok "$OD/n.pfm" 96 64 -8'
check "96x64 pair -> .png: exit 0, 16-bit grey 96x64" \
  eval 'ok_run --backend cpu "$L" "$R" "$OD/d.png" && png_ok "$OD/d.png" 96 64 16 0'
if [ $have_cv2 = 1 ]; then
  check "JPEG and PGM inputs match" \
    eval 'ok_run --backend cpu "$IN/full.jpg" "$IN/full.pgm" "$OD/j.pfm" && pfm_ok "$OD/j.pfm" 96 64'
else
  skip "JPEG and PGM inputs match" "$NOCV2"
fi
check "--color/--right/--confidence outputs are written" \
  eval 'ok_run --backend cpu --color "$OD/c.png" --right "$OD/r.png" --confidence "$OD/k.pgm" \
        "$L" "$R" "$OD/l.pfm" && png_ok "$OD/c.png" 96 64 8 2 && png_ok "$OD/r.png" 96 64 16 0 \
        && [ -s "$OD/k.pgm" ]'
check "-q prints nothing" \
  eval 'ok_run -q "$L" "$R" "$OD/q.pfm" && [ ! -s "$W/so" ] && [ ! -s "$W/se" ]'
check "no temp files after successful runs" eval '[ -z "$(stray_tmp)" ]'

# ---- bad inputs (exit 1) -------------------------------------------------------------------
expect_fail 1 "$IN/nope.png" "missing left file" "$IN/nope.png" "$R" "$O"
expect_fail 1 "$IN/nope.png" "missing right file" "$L" "$IN/nope.png" "$O"
if cat "$IN/noread.png" >/dev/null 2>&1; then
  skip "unreadable file (chmod 000)" "running as root (chmod 000 does not stop reading)"
else
  expect_fail 1 "$IN/noread.png" "unreadable file (chmod 000)" "$IN/noread.png" "$R" "$O"
fi
expect_fail 1 "$IN/dir.png" "a directory as input" "$IN/dir.png" "$R" "$O"
expect_fail 1 "$IN/empty.png" "an empty file" "$L" "$IN/empty.png" "$O"
expect_fail 1 "$IN/text.png" "a text file named .png" "$IN/text.png" "$R" "$O"
expect_fail 1 "$IN/trunc.png" "a truncated PNG" "$IN/trunc.png" "$R" "$O"
if [ $have_cv2 = 1 ]; then
  expect_fail 1 "$IN/trunc.jpg" "a truncated JPEG" "$IN/trunc.jpg" "$R" "$O"
  expect_fail 1 "$IN/trunc.pgm" "a truncated PGM" "$L" "$IN/trunc.pgm" "$O"
else
  skip "a truncated JPEG" "$NOCV2"
  skip "a truncated PGM" "$NOCV2"
fi
expect_fail 1 "$L|$R80" "left 96x64 vs right 80x64: names both files" "$L" "$R80" "$O"

# ---- bombs: tiny files announcing huge images, refused from the header (issue #15) ----------
# A PNG with a valid 46000x46000 IHDR and a short IDAT, a PGM and a PFM header of 46000x46000
# with a few bytes, a 40-byte map file with valid checksums and 16384x16384 maps, and one of
# 8192x8192 maps (in range) whose payload is not in the file. Each is refused with one line
# before anything of that size is allocated: the peak RSS (/usr/bin/time -f %M) stays small.
"$PY" - "$IN" <<'PYEOF' || setup_fail "writing the bombs"
import struct, sys, zlib
d = sys.argv[1]
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
ihdr = struct.pack(">IIBBBBB", 46000, 46000, 8, 0, 0, 0, 0)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 4096)) \
    + chunk(b"IEND", b"")
open(d + "/bomb.png", "wb").write(png)
open(d + "/bomb.pgm", "wb").write(b"P5\n46000 46000\n255\n" + b"\0" * 64)
open(d + "/bomb.pfm", "wb").write(b"Pf\n46000 46000\n-1\n" + b"\0" * 64)
def mapfile(w, h):
    head = b"STMAPS\r\n" + struct.pack("<6I", 1, 1, w, h, w, h) + struct.pack("<I", zlib.crc32(b""))
    return head + struct.pack("<I", zlib.crc32(head))
open(d + "/bomb.maps", "wb").write(mapfile(16384, 16384))
open(d + "/short.maps", "wb").write(mapfile(8192, 8192))
PYEOF
BOMB_MSG="is larger than the largest image the matcher takes (8192x8192)"
# bomb_fail CODE MESSAGE DESC ARGS...: stereo-match exits CODE with one stderr line holding
# MESSAGE, and its peak RSS stays under 64 MB (the refused allocations are GBs); under a 512 MB
# address-space limit an attempt to allocate would fail with another message
bomb_fail() {
  local code=$1 msg=$2 desc=$3 why=() kb
  shift 3
  if [ -n "${STEREO_SANITIZER:-}" ]; then   # the message and status only (see the top)
    "$M" "$@" >"$W/so" 2>"$W/se"
  else
    (ulimit -v 524288 && exec /usr/bin/time -f %M -o "$W/rss" "$M" "$@") >"$W/so" 2>"$W/se"
  fi
  rc=$?
  [ "$rc" -eq "$code" ] || why+=("exit status $rc, expected $code")
  [ "$(stderr_lines)" -eq 1 ] || why+=("$(stderr_lines) lines on stderr, expected 1")
  grep -qF -- "$msg" "$W/se" || why+=("stderr does not say '$msg'")
  if [ -z "${STEREO_SANITIZER:-}" ]; then
    kb=$(tail -1 "$W/rss")
    [ "$kb" -lt 65536 ] 2>/dev/null || why+=("peak RSS ${kb} KB, expected under 64 MB")
  fi
  if [ ${#why[@]} -eq 0 ]; then result 0 "$desc"; else result 1 "$desc" "${why[@]}" "$(stderr_diag)"; fi
}
if [ -x /usr/bin/time ]; then
  bomb_fail 1 "$IN/bomb.png: 46000x46000 $BOMB_MSG" "PNG bomb (46000x46000 IHDR, 4 KB IDAT): refused from the header, RSS < 64 MB" \
    --backend cpu "$IN/bomb.png" "$R" "$O"
  bomb_fail 1 "$IN/bomb.pgm: 46000x46000 $BOMB_MSG" "PGM header of 46000x46000: refused from the header, RSS < 64 MB" \
    --backend cpu "$L" "$IN/bomb.pgm" "$O"
  bomb_fail 1 "$IN/bomb.maps: 16384x16384 $BOMB_MSG" "40-byte map file of 16384x16384 maps (valid CRCs): refused, RSS < 64 MB" \
    --backend cpu -d 16 --maps "$IN/bomb.maps" "$L" "$R" "$O"
  bomb_fail 1 "$IN/short.maps: truncated: the header announces 8192x8192 maps (805306408 bytes), the file has 40" \
    "40-byte map file announcing 8192x8192 maps: refused by the file's length, RSS < 64 MB" \
    --backend cpu -d 16 --maps "$IN/short.maps" "$L" "$R" "$O"
else
  for d in "PNG bomb" "PGM bomb" "map file bomb" "short map file"; do skip "$d" "no /usr/bin/time"; done
fi

# A size the readers take but whose CPU buffers exceed the machine: 8192x8192 at D 256 needs
# 88.1 GB (5 bytes per pixel and disparity, and the per-pixel buffers), refused by stereo_create
# with both figures before any buffer is allocated (a PNG of zeros, read twice)
"$PY" - "$IN" <<'PYEOF' || setup_fail "writing the 8192x8192 pair"
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
c = zlib.compressobj(9)
z = b"".join(c.compress(b"\0" * 8193) for _ in range(8192)) + c.flush()
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8192, 8192, 8, 0, 0, 0, 0)) \
    + chunk(b"IDAT", z) + chunk(b"IEND", b"")
open(sys.argv[1] + "/big.png", "wb").write(png)
PYEOF
mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
if [ -z "$mem_kb" ] || [ "$mem_kb" -ge 105000000 ]; then
  skip "8192x8192 -d 256 on the CPU backend: refused up front" "this machine has ${mem_kb:-?} KB, enough for 88.1 GB"
else
  expect_fail 1 "stereo-match: the CPU backend needs 88.1 GB for 8192x8192 with 256 disparities|more than 80 % of this machine's" \
    "8192x8192 -d 256 on the CPU backend: refused up front with the figure" \
    --backend cpu --cost rank -d 256 "$IN/big.png" "$IN/big.png" "$O"
  if [ -n "${STEREO_SANITIZER:-}" ]; then
    skip "... also under a 1 GB address-space limit" "built with $STEREO_SANITIZER (no ulimit -v)"
  else
    (ulimit -v 1048576 && exec "$M" --backend cpu --cost rank -d 256 "$IN/big.png" "$IN/big.png" "$O") >/dev/null 2>"$W/se"
    check "... also under a 1 GB address-space limit (nothing of that size allocated)" \
      grep -qF "the CPU backend needs 88.1 GB" "$W/se"
  fi
fi

# ---- usage errors (exit 2) -----------------------------------------------------------------
expect_fail 2 "--disparities: 24 is not a multiple of 16 (try 16 or 32)" \
  "-d 24: not a multiple of 16, the nearest valid values" -d 24 "$L" "$R" "$O"
expect_fail 2 "--disparities: 100 is not a multiple of 16 (try 96 or 112)" \
  "-d 100: not a multiple of 16, the nearest valid values" -d 100 "$L" "$R" "$O"
expect_fail 2 "--disparities: 0 is outside 16..512" "-d 0: outside the range" -d 0 "$L" "$R" "$O"
expect_fail 2 "--disparities: 528 is outside 16..512" "-d 528: outside the range (a multiple of 16)" \
  -d 528 "$L" "$R" "$O"
expect_fail 2 "--disparities: 1024 is outside 16..512" "-d 1024: outside the range" \
  -d 1024 "$L" "$R" "$O"
expect_fail 2 "--disparities" "-d 96 with a 96-wide image" -d 96 "$L" "$R" "$O"
expect_fail 2 "--disparities" "-d 112 with a 96-wide image" -d 112 "$L" "$R" "$O"
expect_fail 2 "--disparities" "-d abc (not a number)" -d abc "$L" "$R" "$O"
expect_fail 2 "stereo-match: -d: needs a value (see --help)" "trailing -d without its value" \
  "$L" "$R" "$O" -d
expect_fail 2 "--min-disparity" "--min-disparity -513 (< -512)" --min-disparity -513 "$L" "$R" "$O"
expect_fail 2 "--min-disparity -8|.pfm|$OD/disp.png" "--min-disparity -8 with a .png output" \
  --min-disparity -8 -d 16 "$L" "$R" "$OD/disp.png"
expect_fail 2 "--min-disparity -8|.pfm|$OD/r.png" "--min-disparity -8 with a .png --right" \
  --min-disparity -8 -d 16 --right "$OD/r.png" "$L" "$R" "$O"
expect_fail 2 "min disparity: -8|cost mi" "--min-disparity -8 with cost mi" \
  --min-disparity -8 -d 16 --cost mi "$L" "$R" "$O"
expect_fail 2 "min disparity: -48|wider" "--min-disparity -48 -d 64 on a 96-wide pair" \
  --min-disparity -48 -d 64 "$L" "$R" "$O"
expect_fail 2 "--min-disparity" "--min-disparity 2040 -d 16 (> 2047)" --min-disparity 2040 -d 16 "$L" "$R" "$O"
expect_fail 2 "--paths" "--paths 6" --paths 6 "$L" "$R" "$O"
expect_fail 2 "--cost: 'foo' is not one of rank, census, ad, bt, mi" "--cost foo: names the allowed costs" --cost foo "$L" "$R" "$O"
expect_fail 2 "--backend" "--backend gpu" --backend gpu "$L" "$R" "$O"
expect_fail 2 "--p1" "--p1 0" --p1 0 "$L" "$R" "$O"
expect_fail 2 "--p2" "--p1 10 --p2 10 (p2 not greater)" --p1 10 --p2 10 "$L" "$R" "$O"
expect_fail 2 "--p2" "--p2 5 (below the default p1)" --p2 5 "$L" "$R" "$O"
expect_fail 2 "--window" "--window 8 (even)" --window 8 "$L" "$R" "$O"
# costs, methods, per-path penalties and path weights (issue #11)
expect_fail 2 "--cost: 'sad' is not one of rank, census, ad, bt, mi" "--cost sad" --cost sad "$L" "$R" "$O"
expect_fail 2 "--method: 'sgbm' is not one of sgm, bm" "--method sgbm" --method sgbm "$L" "$R" "$O"
expect_fail 2 "--block|3..31" "--block 33" --method bm --block 33 "$L" "$R" "$O"
expect_fail 2 "--block|3..31" "--block 1" --method bm --block 1 "$L" "$R" "$O"
expect_fail 2 "--block: 8 is not odd in 3..31" "--block 8 (even)" --method bm --block 8 "$L" "$R" "$O"
expect_fail 2 "--p1: 3 values for 8 paths|+x, -x, +y, -y, +x+y" "--p1 with 3 values for 8 paths" \
  --paths 8 --p1 8,8,8 "$L" "$R" "$O"
expect_fail 2 "--p2: 8 values for 4 paths" "--p2 with 8 values for 4 paths" \
  --paths 4 --p2 90,90,90,90,90,90,90,90 "$L" "$R" "$O"
expect_fail 2 "--p1: 'x' (in '8,x,8,8') is not an integer in 1..1022" "--p1 8,x,8,8" \
  --paths 4 --p1 8,x,8,8 "$L" "$R" "$O"
expect_fail 2 "--p1|not a comma-separated list" "--p1 8,,8,8 (empty item)" \
  --paths 4 --p1 8,,8,8 "$L" "$R" "$O"
expect_fail 2 "--p1: '8,8,8,8,8,8,8,8,8' has more than 8 values" "--p1 with 9 values" \
  --p1 8,8,8,8,8,8,8,8,8 "$L" "$R" "$O"
expect_fail 2 "--p2: 20 must be greater than --p1 30 (on each path)" "a path whose P2 is not above its P1" \
  --paths 4 --p1 8,8,30,8 --p2 90,90,20,90 "$L" "$R" "$O"
expect_fail 2 "--path-weights|all 0" "--path-weights all 0" --paths 8 --path-weights 0,0,0,0,0,0,0,0 "$L" "$R" "$O"
expect_fail 2 "--path-weights: '-1' (in '1,-1,1,1') is not an integer in 0..255" \
  "--path-weights with a negative weight" --paths 4 --path-weights 1,-1,1,1 "$L" "$R" "$O"
expect_fail 2 "--path-weights: 3 values for 4 paths" "--path-weights of the wrong length" \
  --paths 4 --path-weights 1,2,1 "$L" "$R" "$O"
expect_fail 2 "path weights|66880|65535" "--path-weights past the 16-bit sum (figure named)" \
  --paths 8 --p2 128 --path-weights 44,44,44,44,44,44,44,44 "$L" "$R" "$O"
for c in ad bt rank census mi adcensus; do
  for m in sgm bm; do
    check "--cost $c --method $m: exit 0, the summary names both, a valid .pfm" \
      eval 'ok_run --backend cpu --cost $c --method $m "$L" "$R" "$OD/$c-$m.pfm" &&
            pfm_ok "$OD/$c-$m.pfm" 96 64 &&
            grep -q " $c $( [ $m = bm ] && echo "bm 9x9" || echo "4 paths")," "$W/so"'
  done
done
check "--backend auto --cost bt, --path-weights, --method bm: not refused by the CUDA stage (in it)" \
  eval 'ok_run --cost bt --paths 8 --path-weights 3,3,3,3,1,1,1,1 "$L" "$R" "$OD/auto.pfm" &&
        ! grep -q "not in the CUDA stage" "$W/se" &&
        ok_run --cost census --method bm "$L" "$R" "$OD/auto-bm.pfm" &&
        ! grep -q "not in the CUDA stage" "$W/se"'
check "--backend auto --cost mi: not refused by the CUDA stage (in it since session 8)" \
  eval 'ok_run --cost mi "$L" "$R" "$OD/auto-mi.pfm" && ! grep -q "not in the CUDA stage" "$W/se"'
check "per-path --p1/--p2 and --path-weights change the result; all-equal lists do not" \
  eval 'ok_run --backend cpu --paths 8 "$L" "$R" "$OD/base.pfm" &&
        ok_run --backend cpu --paths 8 --p1 40,40,40,40,40,40,40,40 --p2 160,160,160,160,160,160,160,160 \
          --path-weights 1,1,1,1,1,1,1,1 "$L" "$R" "$OD/same.pfm" && cmp -s "$OD/base.pfm" "$OD/same.pfm" &&
        ok_run --backend cpu --paths 8 --p1 40,40,4,4,40,40,40,40 --p2 160,160,20,20,160,160,160,160 \
          "$L" "$R" "$OD/pp.pfm" && ! cmp -s "$OD/base.pfm" "$OD/pp.pfm" &&
        ok_run --backend cpu --paths 8 --path-weights 1,1,1,1,0,0,0,0 "$L" "$R" "$OD/w.pfm" &&
        ok_run --backend cpu "$L" "$R" "$OD/p4.pfm" && cmp -s "$OD/w.pfm" "$OD/p4.pfm"'
expect_fail 2 "--sms" "--sms -1" --sms -1 "$L" "$R" "$O"
expect_fail 2 "--sms" "--sms x (not a number)" --sms x "$L" "$R" "$O"
expect_fail 2 "--sms" "--sms 1025 (more than any GPU)" --sms 1025 "$L" "$R" "$O"
# the post-filters (gpu/postfilter.h): bad values named, --fill dense, the filters change the map
expect_fail 2 "stereo-match: --speckle-size: '-1' is not an integer in 0..1048576 (see --help)" \
  "--speckle-size -1" --speckle-size -1 "$L" "$R" "$O"
expect_fail 2 "--speckle-diff" "--speckle-diff 4096" --speckle-diff 4096 "$L" "$R" "$O"
expect_fail 2 "--temporal-alpha" "--temporal-alpha 0" --temporal-alpha 0 "$L" "$R" "$O"
expect_fail 2 "--temporal-alpha" "--temporal-alpha 17" --temporal-alpha 17 "$L" "$R" "$O"
expect_fail 2 "--temporal-delta" "--temporal-delta x" --temporal-delta x "$L" "$R" "$O"
expect_fail 2 "--temporal-persist" "--temporal-persist 256" --temporal-persist 256 "$L" "$R" "$O"
expect_fail 2 "stereo-match: unknown option '--fill=1' (see --help)" "--fill takes no value" \
  --fill=1 "$L" "$R" "$O"
check "--fill: every pixel valid; --speckle-size 1000: fewer valid pixels than without" \
  eval 'ok_run --backend cpu "$L" "$R" "$OD/base.pfm" &&
        ok_run --backend cpu --fill "$L" "$R" "$OD/fill.pfm" &&
        ok_run --backend cpu --speckle-size 1000 "$L" "$R" "$OD/sp.pfm" &&
        [ "$(pfm_valid "$OD/fill.pfm")" -eq $((96 * 64)) ] &&
        [ "$(pfm_valid "$OD/sp.pfm")" -lt "$(pfm_valid "$OD/base.pfm")" ] ||
        { echo "valid: base $(pfm_valid "$OD/base.pfm") fill $(pfm_valid "$OD/fill.pfm") speckle $(pfm_valid "$OD/sp.pfm")"; false; }'
expect_fail 2 "stereo-match: unknown option '--frobnicate' (see --help)" \
  "unknown option --frobnicate" --frobnicate "$L" "$R" "$O"
expect_fail 2 "LEFT RIGHT OUTPUT" "no arguments"
expect_fail 2 "LEFT RIGHT OUTPUT" "2 arguments" "$L" "$R"
expect_fail 2 "LEFT RIGHT OUTPUT" "4 arguments" "$L" "$R" "$O" "$OD/x.pfm"
expect_fail 2 "$OD/out.txt" "output with extension .txt" "$L" "$R" "$OD/out.txt"
expect_fail 2 "--color" "--color with a .jpg name" --color "$OD/c.jpg" "$L" "$R" "$O"
expect_fail 2 "--right" "--right with --no-lr" --right "$OD/r.pfm" --no-lr "$L" "$R" "$O"

# ---- output problems (exit 2, before anything is read or computed) ------------------------
expect_fail 2 "stereo-match: output '$W/nodir/d.pfm': cannot write into the folder '$W/nodir': No such file or directory" \
  "output into a nonexistent directory" "$L" "$R" "$W/nodir/d.pfm"
check "nonexistent output directory stays absent" eval '[ ! -e "$W/nodir" ]'
expect_fail 2 "--color '$W/nodir/c.png': cannot write into the folder" \
  "--color into a nonexistent directory (no disparity left)" --color "$W/nodir/c.png" "$L" "$R" "$O"
expect_fail 2 "output '$L/d.pfm': cannot write into the folder '$L'" \
  "output under a file, not a directory" "$L" "$R" "$L/d.pfm"
rm -rf "$OD" && mkdir -p "$OD/isdir.pfm"
KEEP=1 expect_fail 2 "output '$OD/isdir.pfm' is a directory" \
  "output path is a directory (no temp file left)" "$L" "$R" "$OD/isdir.pfm"

# An output that names an input or another output: refused, the input left as it was.
cp "$L" "$W/left.orig" && cp "$R" "$W/right.orig" || setup_fail "copies of the inputs"
inputs_unchanged() { cmp -s "$L" "$W/left.orig" && cmp -s "$R" "$W/right.orig"; }
same_as() { # DESC MESSAGE ARGS...: exit 2, MESSAGE, both inputs unchanged
  local desc=$1 msg=$2
  shift 2
  KEEP=${KEEP:-0} expect_fail 2 "$msg" "$desc" "$@"
  check "$desc: the inputs are unchanged" inputs_unchanged
}
same_as "output = LEFT (the same name)" \
  "stereo-match: output '$L' is the same file as input LEFT '$L'; choose another name" \
  -d 16 "$L" "$R" "$L"
same_as "output = RIGHT by another path (./, ..)" \
  "output '$W/a/../a/./right.png' is the same file as input RIGHT '$R'" \
  -d 16 "$L" "$R" "$W/a/../a/./right.png"
relative_same() {
  local m; m=$(readlink -f "$M")
  (cd "$W/a" && "$m" -d 16 left.png ./right.png ./left.png >"$W/so" 2>"$W/se")
  local st=$?
  [ "$st" -eq 2 ] || { echo "exit status $st"; return 1; }
  grep -qF "output './left.png' is the same file as input LEFT 'left.png'" "$W/se" || { cat "$W/se"; return 1; }
  inputs_unchanged || { echo "an input changed"; return 1; }
}
check "output = LEFT relative to the current folder: exit 2, the input unchanged" relative_same
rm -rf "$OD" && mkdir "$OD" && ln "$L" "$OD/hard.png"
KEEP=1 same_as "output = a hard link to LEFT" \
  "output '$OD/hard.png' is the same file as input LEFT '$L'" -d 16 "$L" "$R" "$OD/hard.png"
ln -s "$W/a" "$OD/alink"
KEEP=1 same_as "output = LEFT through a linked folder" \
  "output '$OD/alink/left.png' is the same file as input LEFT" -d 16 "$L" "$R" "$OD/alink/left.png"
KEEP=1 same_as "--color = LEFT" "--color '$L' is the same file as input LEFT" \
  -d 16 --color "$L" "$L" "$R" "$O"
rm -rf "$OD" && mkdir "$OD"
same_as "--color = output" "--color '$OD/d.png' is the same file as output '$OD/d.png'" \
  -d 16 --color "$OD/d.png" "$L" "$R" "$OD/d.png"
same_as "--right = output" "--right '$O' is the same file as output '$O'" \
  -d 16 --right "$O" "$L" "$R" "$O"
same_as "--confidence = --color (another spelling)" \
  "--confidence '$OD/./c.png' is the same file as --color '$OD/c.png'" \
  -d 16 --color "$OD/c.png" --confidence "$OD/./c.png" "$L" "$R" "$O"
same_as "output = --maps" "output '$OD/m.pfm' is the same file as --maps '$OD/m.pfm'" \
  -d 16 --maps "$OD/m.pfm" "$L" "$R" "$OD/m.pfm"
same_as "--color = the second camera_info of --maps" "--color '$OD/r.png' is the same file as --maps" \
  -d 16 --maps "$OD/l.yaml,$OD/r.png" --color "$OD/r.png" "$L" "$R" "$O"
rm -rf "$OD" && mkdir "$OD" && ln -s "$W/elsewhere.pfm" "$OD/link.pfm"
KEEP=1 same_as "output is a symbolic link (dangling)" \
  "output '$OD/link.pfm' is a symbolic link; outputs are not written through links" \
  -d 16 "$L" "$R" "$OD/link.pfm"
check "the link's target was not created" eval '[ ! -e "$W/elsewhere.pfm" ]'
rm -rf "$OD" && mkdir "$OD" && ln -s "$L" "$OD/link.png"
KEEP=1 same_as "output is a symbolic link to LEFT" "output '$OD/link.png' is a symbolic link" \
  -d 16 "$L" "$R" "$OD/link.png"
rm -rf "$OD" && mkdir "$OD" && mkfifo "$OD/fifo.png"
KEEP=1 same_as "output is a FIFO" \
  "output '$OD/fifo.png' exists and is not a regular file (a device, FIFO or socket)" \
  -d 16 "$L" "$R" "$OD/fifo.png"
rm -rf "$OD" && mkdir "$OD"
cp -r "$W/a" "$W/demo" && cp "$W/demo/left.png" "$W/demo.left"
run_m --demo "$W/demo" --color "$W/demo/left.png"
check "--demo with --color naming the demo's left.png: exit 2, nothing written" \
  eval '[ "$rc" -eq 2 ] && grep -qF "stereo-match: --color '"'"'$W/demo/left.png'"'"' is the same file as --demo" "$W/se" && cmp -s "$W/demo/left.png" "$W/demo.left" && [ ! -e "$W/demo/disparity.pfm" ]'
rm -rf "$OD" && mkdir "$OD" && echo precious >"$OD/keep.pfm"
KEEP=1 expect_fail 1 "$IN/trunc.png" "failed run (bad input) targeting an existing output" \
  "$IN/trunc.png" "$R" "$OD/keep.pfm"
KEEP=1 expect_fail 2 "--disparities" "failed run (usage) targeting an existing output" \
  -d 24 "$L" "$R" "$OD/keep.pfm"
KEEP=1 expect_fail 1 "$L|$R80" "failed run (size mismatch) targeting an existing output" \
  "$L" "$R80" "$OD/keep.pfm"
check "existing output is not clobbered by the failed runs" \
  eval '[ "$(cat "$OD/keep.pfm")" = precious ]'

# ---- backends ------------------------------------------------------------------------------
rm -rf "$OD" && mkdir "$OD"
run_m --backend cuda "$L" "$R" "$O"
if [ "$rc" -eq 0 ]; then
  have_cuda=1
  check "--backend cuda succeeds (a CUDA device is present)" pfm_ok "$O" 96 64
else
  have_cuda=0
  expect_fail 1 "CUDA" "--backend cuda without a usable CUDA device: clear error" \
    --backend cuda "$L" "$R" "$O"
fi
rm -rf "$OD" && mkdir "$OD"
run_m --backend auto "$L" "$R" "$O"
if [ "$have_cuda" = 1 ]; then
  check "--backend auto succeeds (on CUDA, no fallback note)" \
    eval '[ "$rc" -eq 0 ] && [ ! -s "$W/se" ] && grep -q "backend cuda" "$W/so"'
else
  check "--backend auto succeeds and says once on stderr it uses the CPU backend" \
    eval '[ "$rc" -eq 0 ] && [ "$(stderr_lines)" -eq 1 ] && grep -q "CPU backend" "$W/se" \
          && pfm_ok "$O" 96 64'
fi

# matches piling up at the top of the range: a scene with disparities up to 48 searched with
# D32 warns once on stderr (naming the largest disparity searched and a larger -d); D64 does not
"$SY" --size 256x96 --max-disp 48 "$W/near" >/dev/null 2>&1 || setup_fail "stereo-synth 256x96"
run_m -d 32 --backend cpu "$W/near/left.png" "$W/near/right.png" "$OD/near.pfm"
check "-d 32 on a scene reaching 48: a warning that the matches pile up at the top of the range" \
  eval '[ "$rc" -eq 0 ] && [ "$(stderr_lines)" -eq 1 ] &&
        grep -q "warning: .*the largest disparity searched (31).*try -d 64" "$W/se"'
run_m -d 64 --backend cpu "$W/near/left.png" "$W/near/right.png" "$OD/near.pfm"
check "-d 64 on the same scene: no warning" eval '[ "$rc" -eq 0 ] && [ ! -s "$W/se" ]'
rm -f "$OD/near.pfm"

# why there is no CUDA device, in words that fit the machine: a CPU-only build says so; without
# the driver library (libcuda.so.1), the runtime's "CUDA driver version is insufficient" would
# send the user to update a driver they do not have
no_driver_lib() {
  ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || return 1
  local d
  for d in ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }}; do [ -e "$d/libcuda.so.1" ] && return 1; done
  return 0
}
if [ "$have_cuda" = 1 ]; then
  skip "no CUDA device: the reason given" "a CUDA device is present"
else
  why=""
  if ! "$M" --version | grep -q 'backends: cpu, cuda'; then
    why="this build has no CUDA backend (configured without nvcc)"
  elif no_driver_lib; then
    why="no CUDA device found (no NVIDIA driver loaded)"
  fi
  if [ -z "$why" ]; then
    skip "no CUDA device: the reason given" "an NVIDIA driver library is installed here"
  else
    rm -rf "$OD" && mkdir "$OD"
    run_m --backend auto "$L" "$R" "$O"
    check "--backend auto, no CUDA device: exit 0, 'using the CPU backend: $why'" \
      eval '[ "$rc" -eq 0 ] && [ "$(cat "$W/se")" = "stereo-match: using the CPU backend: $why" ]'
    run_m --backend cuda "$L" "$R" "$O"
    check "--backend cuda, no CUDA device: exit 1, 'CUDA backend unavailable: $why'" \
      eval '[ "$rc" -eq 1 ] && [ "$(cat "$W/se")" = "stereo-match: --backend cuda: CUDA backend unavailable: $why" ]'
  fi
fi

# --sms: the CPU backend ignores it; the CUDA one runs on a green context, or says why not
rm -rf "$OD" && mkdir "$OD"
run_m --backend cpu --sms 16 "$L" "$R" "$O"
check "--backend cpu --sms 16: ignored" \
  eval '[ "$rc" -eq 0 ] && grep -q "backend cpu:" "$W/so" && pfm_ok "$O" 96 64'
if [ "$have_cuda" = 1 ]; then
  run_m --backend cuda --sms 16 "$L" "$R" "$O"
  check "--backend cuda --sms 16: on a green context, the SMs it got in the summary" \
    eval '[ "$rc" -eq 0 ] && grep -qE "backend cuda on [0-9]+ SMs \(green context\)" "$W/so"'
else
  expect_fail 1 "CUDA backend unavailable" \
    "--backend cuda --sms 16 without a usable CUDA device: the no-device message" \
    --backend cuda --sms 16 "$L" "$R" "$O"
  rm -rf "$OD" && mkdir "$OD"
  run_m --backend auto --sms 16 "$L" "$R" "$O"
  check "--backend auto --sms 16 without a CUDA device: the CPU backend, sms ignored" \
    eval '[ "$rc" -eq 0 ] && grep -q "backend cpu:" "$W/so" && pfm_ok "$O" 96 64'
fi

# ---- --demo --------------------------------------------------------------------------------
run_m --demo "$W/demo"
check "--demo DIR: exit 0, disparity.pfm, disparity-color.png, mean error" \
  eval '[ "$rc" -eq 0 ] && [ -s "$W/demo/disparity.pfm" ] && [ -s "$W/demo/disparity-color.png" ] \
        && grep -q "mean error" "$W/so" || { echo "exit $rc"; cat "$W/so" "$W/se"; false; }'

# ---- --help, and the words every program uses for a bad option ------------------------------
run_m --help
check "--help: exit 0, no printf escapes left ('within U%:', no '%%')" \
  eval '[ "$rc" -eq 0 ] && grep -qF "within U%: 0..99" "$W/so" && ! grep -qF "%%" "$W/so"'
# PROGRAM-NAME COMMAND...: "--bogus" and a value option without its value, each exit 2 and one
# line worded the same in every program
same_words() {
  local prog=$1 opt=$2 why=()
  shift 2
  "$@" --bogus >"$W/so" 2>"$W/se"
  rc=$?
  [ "$rc" -eq 2 ] || why+=("--bogus: exit status $rc, expected 2")
  [ "$(cat "$W/se")" = "$prog: unknown option '--bogus' (see --help)" ] ||
    why+=("--bogus: stderr '$(cat "$W/se")'")
  "$@" "$opt" >"$W/so" 2>"$W/se"
  rc=$?
  [ "$rc" -eq 2 ] || why+=("$opt without a value: exit status $rc, expected 2")
  [ "$(cat "$W/se")" = "$prog: $opt: needs a value (see --help)" ] ||
    why+=("$opt without a value: stderr '$(cat "$W/se")'")
  result ${#why[@]} "$prog: 'unknown option '--bogus' (see --help)', '$opt: needs a value (see --help)', exit 2" "${why[@]}"
}
same_words stereo-match --cost "$M"
same_words stereo-eval --border "$EV"
same_words stereo-synth --size "$SY"
same_words calib-maps --size "$B/calib-maps"
same_words stereo-live --frames "$B/stereo-live"
# (the CUDA-and-libc-only build says "stereo-live" too: the same app)
same_words stereo-live --frames "$B/gpu/stereo-live-headless"
# an abbreviation of two long options: refused, naming both
for pa in "stereo-match|--min|--min-confidence, --min-disparity" \
          "stereo-live|--conf|--config, --confidence"; do
  IFS='|' read -r prog abbr both <<<"$pa"
  "$B/$prog" "$abbr" 3 >"$W/amb.out" 2>"$W/amb.err"
  rc=$?
  check "$prog $abbr: exit 2, 'option '$abbr' is ambiguous: $both'" \
    eval '[ "$rc" -eq 2 ] && grep -qxF "$prog: option '"'"'$abbr'"'"' is ambiguous: $both (see --help)" "$W/amb.err"'
done
if [ "$(sed -n 's/^backend = //p' "$B/config.ninja")" = cuda ]; then
  same_words stereo-bench --runs "$B/gpu/stereo-bench"
else
  skip "stereo-bench: the words for a bad option" "not built (./configure without CUDA)"
fi

# ---- calib-maps and stereo-synth: outputs refused before the work ------------------------
CM=$B/calib-maps
# tool_fail PROGRAM CODE MESSAGE DESC ARGS...: exit CODE, one stderr line containing MESSAGE,
# no temp file anywhere
tool_fail() {
  local prog=$1 code=$2 msg=$3 desc=$4 why=()
  shift 4
  "$prog" "$@" >"$W/so" 2>"$W/se"
  rc=$?
  [ "$rc" -eq "$code" ] || why+=("exit status $rc, expected $code")
  [ "$(stderr_lines)" -eq 1 ] || why+=("$(stderr_lines) lines on stderr, expected 1")
  grep -qF -- "$msg" "$W/se" || why+=("stderr does not say '$msg'")
  [ -z "$(stray_tmp)" ] || why+=("temp file left: $(stray_tmp)")
  [ ${#why[@]} -eq 0 ] || mapfile -t -O ${#why[@]} why < <(stderr_diag)
  result ${#why[@]} "$desc" "${why[@]}"
}
rm -rf "$OD" && mkdir "$OD"
printf '%%YAML:1.0\n# a calibration the check must not overwrite\n' >"$OD/rig.yml"
cp "$OD/rig.yml" "$W/rig.orig"
yaml_unchanged() { cmp -s "$OD/rig.yml" "$W/rig.orig"; }
tool_fail "$CM" 2 "calib-maps: MAPS '$OD/rig.yml' is the same file as CALIB '$OD/rig.yml'; choose another name" \
  "calib-maps: MAPS = CALIB (the same name)" "$OD/rig.yml" "$OD/rig.yml"
check "calib-maps: CALIB unchanged" yaml_unchanged
tool_fail "$CM" 2 "MAPS '$OD/./rig.yml' is the same file as CALIB '$OD/rig.yml'" \
  "calib-maps: MAPS = CALIB by another path" "$OD/rig.yml" "$OD/./rig.yml"
ln "$OD/rig.yml" "$OD/hard.maps"
tool_fail "$CM" 2 "MAPS '$OD/hard.maps' is the same file as CALIB '$OD/rig.yml'" \
  "calib-maps: MAPS = a hard link to CALIB" "$OD/rig.yml" "$OD/hard.maps"
tool_fail "$CM" 2 "MAPS '$OD/r.yaml' is the same file as CALIB '$OD/r.yaml'" \
  "calib-maps: MAPS = the right camera_info of the pair" "$OD/l.yaml,$OD/r.yaml" "$OD/r.yaml"
ln -s "$OD/rig.yml" "$OD/link.maps"
tool_fail "$CM" 2 "MAPS '$OD/link.maps' is a symbolic link" "calib-maps: MAPS a symbolic link" \
  "$OD/rig.yml" "$OD/link.maps"
check "calib-maps: CALIB unchanged after the refusals" yaml_unchanged
tool_fail "$CM" 2 "MAPS '$OD' is a directory" "calib-maps: MAPS a directory" "$OD/rig.yml" "$OD"
tool_fail "$CM" 2 "MAPS '/dev/null' exists and is not a regular file" "calib-maps: MAPS /dev/null" \
  "$OD/rig.yml" /dev/null
tool_fail "$CM" 2 "MAPS '$W/nodir/x.maps': cannot write into the folder '$W/nodir'" \
  "calib-maps: MAPS in a nonexistent folder" "$OD/rig.yml" "$W/nodir/x.maps"

rm -rf "$OD" && mkdir "$OD" && ln -s "$L" "$OD/left.png"
tool_fail "$SY" 2 "stereo-synth: OUTDIR '$OD/left.png' is a symbolic link" \
  "stereo-synth: a file of OUTDIR is a symbolic link (to an input of another run)" --size 64x48 "$OD"
check "stereo-synth: the link's target is unchanged, nothing written" \
  eval 'inputs_unchanged && [ "$(listing)" = left.png ]'
rm -rf "$OD" && mkdir -p "$OD/nonocc.png"
tool_fail "$SY" 2 "OUTDIR '$OD/nonocc.png' is a directory" "stereo-synth: a file of OUTDIR is a directory" \
  --size 64x48 "$OD"
check "stereo-synth: nothing written before the refusal" eval '[ "$(listing)" = nonocc.png ]'
rm -rf "$OD" && mkdir "$OD" && mkfifo "$OD/disp_left.pfm"
tool_fail "$SY" 2 "OUTDIR '$OD/disp_left.pfm' exists and is not a regular file" \
  "stereo-synth: a file of OUTDIR is a FIFO" --size 64x48 "$OD"
tool_fail "$SY" 1 "$L/x: cannot create directory" "stereo-synth: OUTDIR under a file (exit 1)" \
  --size 64x48 "$L/x"

# ---- stereo-eval ---------------------------------------------------------------------------
"$EV" "$W/a/disp_left.pfm" "$IN/nogt.pfm" >"$W/so" 2>"$W/se"
rc=$?
check "stereo-eval: missing GT file -> non-zero, names it" \
  eval '[ "$rc" -ne 0 ] && [ "$(stderr_lines)" -eq 1 ] && grep -qF "$IN/nogt.pfm" "$W/se"'

# ---- multi-baseline matching: --baselines REF VIEW1 ... VIEWN OUTPUT -------------------------
if "$SY" --size 96x64 --views 2,-1 "$W/mv" >/dev/null 2>&1; then
  V2=$W/mv/view2.png V3=$W/mv/view3.png
  rm -rf "$OD" && mkdir "$OD"
  check "--baselines 1,2,-1 with 4 images: exit 0, a 96x64 .pfm, the views in the summary" \
    eval 'ok_run --backend cpu --baselines 1,2,-1 "$L" "$R" "$V2" "$V3" "$OD/m.pfm" \
          && pfm_ok "$OD/m.pfm" 96 64 && grep -qF "4 views (baselines 1,2,-1; sides)" "$W/so"'
  check "--combine sum: exit 0, named in the summary" \
    eval 'ok_run --backend cpu --combine sum --baselines 1,-1 "$L" "$R" "$V3" "$OD/s.pfm" \
          && pfm_ok "$OD/s.pfm" 96 64 && grep -qF "3 views (baselines 1,-1; sum)" "$W/so"'
  check "--baselines 1 with two images is the pair: the same bytes as without" \
    eval 'ok_run --backend cpu -q --baselines 1 "$L" "$R" "$OD/b1.pfm" \
          && ok_run --backend cpu -q "$L" "$R" "$OD/b0.pfm" && cmp -s "$OD/b1.pfm" "$OD/b0.pfm"'
  expect_fail 2 "--baselines|2 ratios for 1 view" "--baselines: more ratios than views" \
    --baselines 1,2 "$L" "$R" "$O"
  expect_fail 2 "--baselines|2 ratios for 3 views" "--baselines: fewer ratios than views" \
    --baselines 1,2 "$L" "$R" "$V2" "$V3" "$O"
  expect_fail 2 "--baselines|view 1|$R|must be 1" "--baselines: b_1 other than 1, naming view 1" \
    --baselines 2,1 "$L" "$R" "$V2" "$O"
  expect_fail 2 "--baselines|view 2|$V2|0" "--baselines: a zero baseline, naming the view" \
    --baselines 1,0 "$L" "$R" "$V2" "$O"
  expect_fail 2 "--baselines|view 3|$V3|view 2" "--baselines: a repeated baseline, naming both views" \
    --baselines 1,2,2 "$L" "$R" "$V2" "$V3" "$O"
  expect_fail 2 "--baselines|value 2|16" "--baselines: a ratio that is no whole number of 16ths" \
    --baselines 1,0.3 "$L" "$R" "$V2" "$O"
  expect_fail 2 "--baselines|value 2|outside" "--baselines: a ratio beyond 8" \
    --baselines 1,9 "$L" "$R" "$V2" "$O"
  expect_fail 2 "--baselines|more than 7" "--baselines: more than 7 views" \
    --baselines 1,2,3,4,5,6,7,-1 "$L" "$R" "$V2" "$O"
  # more views through --maps RIG (tests/test_calibrate_rig.py runs a real rig file)
  expect_fail 1 "$IN/none.maps|cannot open" "--maps RIG with 3 images: a missing rig file, named" \
    --backend cpu --maps "$IN/none.maps" "$L" "$R" "$V2" "$O"
  expect_fail 1 "--maps|$IN/l.yaml,$IN/r.yaml|camera_info|3 images|rig file" \
    "--maps LEFT,RIGHT camera_info pair with 3 images: more views need a rig file" \
    --backend cpu --maps "$IN/l.yaml,$IN/r.yaml" "$L" "$R" "$V2" "$O"
  expect_fail 2 "--depth|more than two views" "--depth with 3 views: refused by name" \
    --backend cpu --focal 500 --baseline 0.1 --depth "$OD/z.png" --baselines 1,2 "$L" "$R" "$V2" "$O"
  expect_fail 2 "--baselines|left_%04d.png|pattern" "--baselines with a frame-number pattern" \
    --baselines 1,2 "$W/left_%04d.png" "$R" "$V2" "$O"
  expect_fail 2 "--baselines|$IN/dir.png|folder" "--baselines with a folder view" \
    --baselines 1,2 "$L" "$R" "$IN/dir.png" "$O"
  expect_fail 2 "--combine" "--combine without --baselines" --combine sides "$L" "$R" "$O"
  expect_fail 2 "--combine|best" "--combine with an unknown rule" \
    --combine best --baselines 1,2 "$L" "$R" "$V2" "$O"
  expect_fail 2 "--baselines|--demo" "--baselines with --demo" --baselines 1,2 --demo "$W/d2"
  expect_fail 2 "cost mi" "--baselines with --cost mi: refused by name" \
    --backend cpu --cost mi --baselines 1,2 "$L" "$R" "$V2" "$O"
  if [ "$have_cuda" = 1 ]; then
    run_m --backend cpu --baselines 1,2 "$L" "$R" "$V2" "$W/mv-cpu.pfm"
    run_m --backend cuda --baselines 1,2 "$L" "$R" "$V2" "$W/mv-cuda.pfm"
    check "--backend cuda with three views (the default adcensus): the CPU's bits" \
      eval '[ "$rc" -eq 0 ] && cmp -s "$W/mv-cpu.pfm" "$W/mv-cuda.pfm"'
    run_m --backend cpu --cost mi "$L" "$R" "$W/mi-cpu.pfm"
    run_m --backend cuda --cost mi "$L" "$R" "$W/mi-cuda.pfm"
    check "--backend cuda --cost mi (hierarchy on the levels' CUDA stages): the CPU's bits" \
      eval '[ "$rc" -eq 0 ] && cmp -s "$W/mi-cpu.pfm" "$W/mi-cuda.pfm"'
    # a view on each side: the LR check's occlusion test (k_lr_finish_views), every cost
    for c in rank census ad bt adcensus; do
      run_m --backend cpu --cost "$c" --right "$W/mvs-cpu-r.pfm" --baselines 1,-1 "$L" "$R" "$V3" "$W/mvs-cpu.pfm"
      run_m --backend cuda --cost "$c" --right "$W/mvs-cuda-r.pfm" --baselines 1,-1 "$L" "$R" "$V3" "$W/mvs-cuda.pfm"
      check "--backend cuda, --cost $c, views on both sides (1,-1): the CPU's bits, right map too" \
        eval '[ "$rc" -eq 0 ] && cmp -s "$W/mvs-cpu.pfm" "$W/mvs-cuda.pfm" && cmp -s "$W/mvs-cpu-r.pfm" "$W/mvs-cuda-r.pfm"'
    done
  else
    expect_fail 1 "CUDA backend unavailable" "--backend cuda with three views, no CUDA device" \
      --backend cuda --baselines 1,2 "$L" "$R" "$V2" "$O"
  fi
  expect_fail 1 "view 2|$R80|REF|$L" "--baselines: a view of another size, naming it" \
    --backend cpu --baselines 1,2 "$L" "$R" "$R80" "$O"
  expect_fail 1 "$IN/nope.png" "--baselines: a missing view file, naming it" \
    --backend cpu --baselines 1,2 "$L" "$R" "$IN/nope.png" "$O"
  expect_fail 2 "input view|$V2" "--baselines: the output names an input view" \
    --backend cpu --baselines 1,2,-1 "$L" "$R" "$V2" "$V3" "$V2"
  check "--baselines: the input view is untouched" eval 'png_ok "$V2" 96 64 8 0'
  expect_fail 2 "more views need --baselines or --maps RIG" "four arguments without --baselines" \
    "$L" "$R" "$V2" "$O"
else
  skip "multi-baseline matching" "stereo-synth --views failed"
fi
# stereo-synth --views: each bad value named, exit 2, nothing written
for bad in "0|view 2|left view" "1.5,1|view 3|right view" "2,-1,2|view 4|repeats view 2" \
           "5|view 2|outside" "2,x|view 3|not a number" "2,3,4,-1,-2,-3,-4|more than 6|--views"; do
  IFS='|' read -r val w1 w2 <<<"$bad"
  rm -rf "$W/sv"
  "$SY" --size 64x48 --views "$val" "$W/sv" >"$W/so" 2>"$W/se"
  rc=$?
  check "stereo-synth --views $val: exit 2, names '$w1' ($w2), writes nothing" \
    eval '[ "$rc" -eq 2 ] && [ "$(stderr_lines)" -eq 1 ] && grep -qF -- "$w1" "$W/se" \
          && grep -qF -- "$w2" "$W/se" && [ ! -e "$W/sv" ] || { echo "exit $rc"; cat "$W/se"; false; }'
done
# stereo-synth's scene and camera options: each bad value named with its option, exit 2, nothing
# written; the street with every effect on renders
for bad in "--layout|road" "--contrast|0.01" "--contrast|1.5" "--right-gain|0.2" "--right-gain|x" \
           "--right-offset|-129" "--right-gamma|5" "--vignette|0.95" "--noise|-1" "--noise|33" \
           "--noise|nan"; do
  IFS='|' read -r opt val <<<"$bad"
  rm -rf "$W/sv"
  "$SY" --size 64x48 "$opt" "$val" "$W/sv" >"$W/so" 2>"$W/se"
  rc=$?
  check "stereo-synth $opt $val: exit 2, names the option and the value, writes nothing" \
    eval '[ "$rc" -eq 2 ] && [ "$(stderr_lines)" -eq 1 ] && grep -qF -- "$opt" "$W/se" \
          && grep -qF -- "\"$val\"" "$W/se" && [ ! -e "$W/sv" ] || { echo "exit $rc"; cat "$W/se"; false; }'
done
rm -rf "$W/sv"
"$SY" --size 96x64 --layout street --contrast 0.3 --right-gain 1.2 --right-offset -10 \
  --right-gamma 0.9 --vignette 0.3 --noise 2 "$W/sv" >"$W/so" 2>"$W/se"
rc=$?
check "stereo-synth --layout street with every camera effect: exit 0, the six files" \
  eval '[ "$rc" -eq 0 ] && [ ! -s "$W/se" ] && grep -q " street " "$W/so" \
        && [ "$(ls "$W/sv" | wc -l)" -eq 6 ] || { echo "exit $rc"; cat "$W/se"; false; }'

# ---- flags shared with stereo-live ----------------------------------------------------------
# --maps and --color-range mean in stereo-live what they mean here (its [calibration] maps and
# [display] color_range); -q / --quiet, which it has not, says where its output goes
LV=$B/stereo-live
if [ -x "$LV" ]; then
  a=$("$LV" --headless --frames 1 --maps "$IN/short.maps" 2>&1 >/dev/null)
  b=$("$LV" --headless --frames 1 --set calibration.maps="$IN/short.maps" 2>&1 >/dev/null)
  check "stereo-live --maps FILE: what --set calibration.maps=FILE does (the same line)" \
    eval '[ -n "$a" ] && [ "$a" = "$b" ] || { echo "--maps: $a"; echo "--set: $b"; false; }'
  check "stereo-live --color-range auto runs; 8,40 refused naming --color-range" \
    eval '"$LV" --headless --frames 1 -d 16 --color-range auto >/dev/null 2>&1 &&
          ! "$LV" --headless --frames 1 --color-range 8,40 2>"$W/cr" &&
          grep -q "^stereo-live: --color-range: .8,40. is not one of fixed, auto" "$W/cr"'
  check "stereo-live -q: says it is stereo-match's and how to quieten the app" \
    eval '! "$LV" -q 2>"$W/q" && grep -q "^stereo-live: -q is stereo-match.s; .*redirect stdout" "$W/q"'
fi

# ---- valgrind ------------------------------------------------------------------------------
VG=(valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite -q)
if [ -n "${STEREO_SANITIZER:-}" ]; then
  skip "valgrind: successful match" "built with $STEREO_SANITIZER, which valgrind cannot run"
  skip "valgrind: failing run" "built with $STEREO_SANITIZER, which valgrind cannot run"
elif command -v valgrind >/dev/null 2>&1; then
  rm -rf "$OD" && mkdir "$OD"
  "${VG[@]}" "$M" --backend cpu -q "$L" "$R" "$O" >"$W/vg" 2>&1
  rc=$?
  check "valgrind: successful match, no errors or leaks" \
    eval '[ "$rc" -eq 0 ] && [ ! -s "$W/vg" ] || { echo "exit $rc"; head -20 "$W/vg"; false; }'
  "${VG[@]}" "$M" --backend cpu "$IN/trunc.png" "$R" "$O" >"$W/vg" 2>&1
  rc=$?
  check "valgrind: failing run (truncated PNG), no errors or leaks" \
    eval '[ "$rc" -eq 1 ] && [ "$(grep -c "" "$W/vg")" -eq 1 ] || { echo "exit $rc"; head -20 "$W/vg"; false; }'
else
  skip "valgrind: successful match" "valgrind is not installed"
  skip "valgrind: failing run" "valgrind is not installed"
fi

echo "1..$n"
printf '%s\n' "${tap[@]}"
exit 0
