#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_match_ux.sh — stereo-match's colour range, legend, progress and sequences, as TAP.
#
#   1. --color-range auto|fixed|MIN,MAX: the range printed equals the nearest-rank 1st / 99th
#      percentile of the valid disparities computed here from the 16-bit PNG output, and every
#      pixel of the grey --color image follows colormap.h's integer rule over it; bad values.
#   2. --legend: the strip below the image (26 px, 52 from 480 wide), the bar's ends are the
#      map's first and last entries, tick labels are drawn; --legend without --color is refused.
#   3. progress: --progress on a CPU pair running over 2 s gives rising "progress N%" lines on
#      stderr ending at 100 %, stdout keeps its one line; without --progress (stderr not a
#      terminal) stderr stays empty.
#   4. sequences (patterns, folders sharing names, folders pairing in order): one summary line,
#      per-frame progress lines, every output equal (cmp) to the run of that pair alone; bad
#      inputs refused with one line naming the file (unmatched, another size, output = input).
#   5. --disparities auto: on generated scenes of known disparities the D chosen covers the
#      ground truth's 99th percentile, with at most an eighth and two steps of 16 more, and is
#      the D the summary reports; a sequence measures its first pair once; refused with more
#      views, on an image too narrow to measure, and by stereo-live (saying who takes it); with
#      --band W the D chosen is one the band takes (above W: stereo-match and stereo-live), a
#      width too narrow for the band and a band width of neither 32 nor 64 refused.
# Run from the repo root (tests/run does). Env: STEREO_BUILD (default build).
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
M=$B/stereo-match
SY=$B/stereo-synth
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for x in "$M" "$SY"; do
  [ -x "$x" ] || { echo "Bail out! $x is not built (ninja $x)"; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/test_match_ux.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT

n=0
tap=()
result() { # result STATUS DESC [DIAGNOSTIC...]
  local st=$1 desc=$2
  shift 2
  n=$((n + 1))
  if [ "$st" -eq 0 ]; then tap+=("ok $n - $desc"); else
    tap+=("not ok $n - $desc")
    local d
    for d in "$@"; do tap+=("#   $d"); done
  fi
}
skip() { n=$((n + 1)); tap+=("ok $n - $1 # SKIP $2"); }
check() { # check DESC CMD...: passes when CMD succeeds; its output is the diagnostic
  local desc=$1 out
  shift
  out=$("$@" 2>&1)
  local st=$?
  local diag=()
  [ $st -eq 0 ] || mapfile -t diag <<<"$out"
  result $st "$desc" "${diag[@]}"
}
run_m() { "$M" "$@" >"$W/so" 2>"$W/se"; rc=$?; }
expect_fail() { # expect_fail CODE NAME DESC ARGS...: exit CODE, one stderr line naming NAME
  local code=$1 name=$2 desc=$3
  shift 3
  run_m "$@"
  local why=()
  [ "$rc" -eq "$code" ] || why+=("exit status $rc, expected $code")
  [ "$(grep -c '' "$W/se")" -eq 1 ] || why+=("$(grep -c '' "$W/se") stderr lines, expected 1")
  grep -qF -- "$name" "$W/se" || why+=("stderr does not name '$name'")
  [ ${#why[@]} -eq 0 ] || why+=("stderr: $(head -c 300 "$W/se")")
  result ${#why[@]} "$desc" "${why[@]}"
}

"$SY" --size 320x240 "$W/a" >/dev/null 2>&1 || { echo "Bail out! stereo-synth"; exit 1; }
L=$W/a/left.png R=$W/a/right.png

# ---- 1. colour range -----------------------------------------------------------------------
# colour_check DISP.png COLOUR.png LO16 HI16: grey map, every pixel by the integer rule (a valid
# 0 reads as invalid from the PNG: both are black in the grey map over a range from 0 up, and
# the ranges used here start above 0 or at 0)
colour_check() {
  "$PY" - "$@" <<'EOF'
import sys, numpy as np, cv2
d = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED).astype(np.int64)
c = cv2.imread(sys.argv[2], cv2.IMREAD_UNCHANGED)
lo, hi = int(sys.argv[3]), int(sys.argv[4])
h, w = d.shape
c = c[:h]  # the legend strip, if any, is below
v = d // 16  # 256 d -> 16ths of a pixel (the PNG holds 16 * (16 d))
num = (v - lo) * 255 + (hi - lo) // 2
idx = np.where(num >= 0, num // (hi - lo), -((-num) // (hi - lo)))  # C division truncates
idx = np.clip(idx, 0, 255)
want = np.where(d == 0, 0, idx)
got = c[:, :, 0].astype(np.int64)
bad = np.argwhere(got != want)
assert len(bad) == 0, "%d pixels differ, first %s: %d, want %d" % (
    len(bad), bad[0], got[tuple(bad[0])], want[tuple(bad[0])])
EOF
}
# percentiles DISP.pfm: the nearest-rank 1st and 99th percentile of the valid values (16ths;
# the PFM keeps a valid 0, which the PNG cannot tell from invalid)
percentiles() {
  "$PY" - "$1" <<'EOF'
import sys, numpy as np
raw = open(sys.argv[1], "rb").read()
magic, size, scale, data = raw.split(b"\n", 3)
w, h = map(int, size.split())
f = np.frombuffer(data, "<f4", w * h)
v = np.sort(np.rint(f[np.isfinite(f)] * 16).astype(np.int64))
n = len(v)
r1, r99 = (n + 99) // 100, (99 * n + 99) // 100
lo, hi = v[r1 - 1], v[r99 - 1]
print(lo, hi if hi - lo >= 16 else lo + 16)
EOF
}
run_m --backend cpu -d 64 --colormap grey --color-range auto "$L" "$R" "$W/d.pfm" --color "$W/c.png"
"$M" --backend cpu -d 64 "$L" "$R" "$W/d.png" >/dev/null 2>&1
if [ "$rc" -eq 0 ]; then
  read -r plo phi < <(percentiles "$W/d.pfm")
  printed=$(grep -o 'colour range [0-9.]*\.\.[0-9.]* px (auto' "$W/so")
  want=$("$PY" -c "print('colour range %.4g..%.4g px (auto' % ($plo / 16, $phi / 16))")
  [ "$printed" = "$want" ] && [ "$(grep -c '' "$W/so")" -eq 1 ]
  result $? "--color-range auto: the range printed ($printed) is the 1st-99th percentile computed here ($want), one stdout line" "stdout: $(cat "$W/so")"
  check "--color-range auto: every pixel of the grey map follows the rule over $plo..$phi (16ths)" \
    colour_check "$W/d.png" "$W/c.png" "$plo" "$phi"
  [ "$phi" -lt $((16 * 63)) ] && [ "$plo" -gt 0 ]
  result $? "--color-range auto: the scene's range $plo..$phi lies inside the search range 0..1008"
else
  result 1 "--color-range auto runs" "exit $rc: $(cat "$W/se")"
fi
run_m --backend cpu -d 64 --colormap grey "$L" "$R" "$W/d.png" --color "$W/c.png"
check "--color-range fixed (default): the rule over 0..63 px, no range in the summary" \
  bash -c "colour_check() { :; }; ! grep -q 'colour range' '$W/so'"
check "--color-range fixed (default): every pixel over 16*0..16*63" colour_check "$W/d.png" "$W/c.png" 0 1008
run_m --backend cpu -d 64 --colormap grey --color-range 8,20.5 "$L" "$R" "$W/d.png" --color "$W/c.png"
grep -q 'colour range 8\.\.20\.5 px (given)' "$W/so"
result $? "--color-range 8,20.5: printed" "stdout: $(cat "$W/so")"
check "--color-range 8,20.5: every pixel over 128..328" colour_check "$W/d.png" "$W/c.png" 128 328
for bad in x 5,5 10,2 -1,5 3 '1,2,3' '1,' ',4' 1,3000; do
  expect_fail 2 "--color-range" "--color-range '$bad' refused (exit 2, one line)" \
    --color-range "$bad" "$L" "$R" "$W/x.png" --color "$W/xc.png"
done
[ ! -e "$W/x.png" ] && [ ! -e "$W/xc.png" ]
result $? "refused runs wrote nothing"

# ---- 2. legend -----------------------------------------------------------------------------
legend_check() { # legend_check COLOUR.png H SCALE
  "$PY" - "$@" <<'EOF'
import sys, numpy as np, cv2
c = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
h, s = int(sys.argv[2]), int(sys.argv[3])
H, w = c.shape[:2]
assert H == h + 26 * s, "height %d, expected %d + %d" % (H, h, 26 * s)
bar = c[h + 7 * s, :, 0].astype(int)     # grey map: the bar row holds the indices
x0, x1 = 4 * s, w - 4 * s - 1
assert bar[x0] == 0 and bar[x1] == 255, "bar ends %d, %d (want 0, 255)" % (bar[x0], bar[x1])
assert all(np.diff(bar[x0:x1 + 1]) >= 0), "bar not increasing"
text = c[h + 16 * s:h + 23 * s, :, 0]
ink = (text == 235).sum()
assert ink > 40 * s * s, "only %d text pixels" % ink
cols = np.nonzero((text == 235).any(axis=0))[0]
assert cols.max() - cols.min() > w // 2, "labels span only %d px" % (cols.max() - cols.min())
EOF
}
run_m --backend cpu -d 64 --colormap grey --legend "$L" "$R" "$W/d.png" --color "$W/c.png"
check "--legend at 320 wide: a 26 px strip, bar 0..255, labels across it" legend_check "$W/c.png" 240 1
"$SY" --size 640x480 "$W/m" >/dev/null 2>&1
run_m --backend cpu -d 64 --colormap grey --color-range auto --legend "$W/m/left.png" "$W/m/right.png" "$W/d.png" --color "$W/c.png"
check "--legend at 640 wide with the auto range: a 52 px strip (scale 2)" legend_check "$W/c.png" 480 2
expect_fail 2 "--legend" "--legend without --color refused" --legend "$L" "$R" "$W/x.png"

# ---- 3. progress ---------------------------------------------------------------------------
t0=$(date +%s.%N)
run_m --backend cpu -d 128 --threads 1 --repeat 80 --progress "$W/m/left.png" "$W/m/right.png" "$W/p.pfm"
t1=$(date +%s.%N)
wall=$("$PY" -c "print(round($t1 - $t0, 2))")
if "$PY" -c "import sys; sys.exit(0 if $wall >= 2.5 else 1)"; then
  "$PY" - "$W/se" <<'EOF'
import sys, re
lines = open(sys.argv[1]).read().splitlines()
assert lines, "no progress lines"
pct = []
for l in lines:
    m = re.fullmatch(r"stereo-match: progress (\d+)% \((\d+\.\d) s\)", l)
    assert m, "unexpected stderr line %r" % l
    pct.append(int(m.group(1)))
    assert float(m.group(2)) >= 2.0, "a line before 2 s: %r" % l
assert pct == sorted(set(pct)) and pct[-1] == 100, "percentages %s" % pct
EOF
  result $? "--progress, a CPU pair of $wall s (--repeat 80): rising 'progress N%' lines from 2 s, ending at 100 %" "stderr: $(head -c 400 "$W/se")"
  [ "$(grep -c '' "$W/so")" -eq 1 ] && grep -q '(median)' "$W/so"
  result $? "--progress: stdout keeps its one summary line" "stdout: $(cat "$W/so")"
  run_m --backend cpu -d 128 --threads 1 --repeat 80 "$W/m/left.png" "$W/m/right.png" "$W/p.pfm"
  [ "$rc" -eq 0 ] && [ ! -s "$W/se" ]
  result $? "without --progress, stderr not a terminal: nothing on stderr" "stderr: $(head -c 300 "$W/se")"
else
  skip "--progress lines" "the run took $wall s, under the 2 s after which progress starts"
  skip "--progress: stdout" "as above"
  skip "without --progress: nothing on stderr" "as above"
fi
run_m --backend cpu -d 64 --progress "$L" "$R" "$W/p.pfm"
[ "$rc" -eq 0 ] && [ ! -s "$W/se" ]
result $? "--progress on a pair that takes well under 2 s: nothing on stderr" "stderr: $(head -c 300 "$W/se")"

# ---- 4. sequences --------------------------------------------------------------------------
S=$W/seq
mkdir -p "$S/pat" "$S/kl" "$S/kr" "$S/ol" "$S/or" "$S/out" "$S/col" "$S/out2"
for i in 0 1 2 3; do
  "$SY" --size 160x120 --t "$i" "$S/f$i" >/dev/null 2>&1 || { echo "Bail out! stereo-synth"; exit 1; }
  cp "$S/f$i/left.png" "$S/pat/left_000$i.png"; cp "$S/f$i/right.png" "$S/pat/right_000$i.png"
  cp "$S/f$i/left.png" "$S/kl/00000${i}_10.png"; cp "$S/f$i/right.png" "$S/kr/00000${i}_10.png"
  cp "$S/f$i/left.png" "$S/ol/left_$i.png"; cp "$S/f$i/right.png" "$S/or/right_$i.png"
  "$M" --backend cpu -d 32 "$S/f$i/left.png" "$S/f$i/right.png" "$S/f$i/d.png" \
    --color "$S/f$i/c.png" >/dev/null 2>&1 || { echo "Bail out! stereo-match pair $i"; exit 1; }
done
same_as_pairs() { # same_as_pairs DISP_PATTERN COLOUR_PATTERN (printf with the frame number)
  local i d c
  for i in 0 1 2 3; do
    d=$(printf "$1" "$i")
    cmp "$d" "$S/f$i/d.png" || return 1
    if [ -n "${2:-}" ]; then c=$(printf "$2" "$i"); cmp "$c" "$S/f$i/c.png" || return 1; fi
  done
}
run_m --backend cpu -d 32 --progress "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" \
  "$S/pat/d_%02d.png" --color "$S/pat/c_%d.png"
[ "$rc" -eq 0 ] && grep -q '^sequence of 4 pairs 160x120 D=32 .* backend cpu: .* fps' "$W/so" &&
  [ "$(grep -c '' "$W/so")" -eq 1 ]
result $? "patterns: 4 pairs, one summary line" "exit $rc" "stdout: $(cat "$W/so")" "stderr: $(head -c 300 "$W/se")"
[ "$(grep -c '^stereo-match: frame [1-4]/4, [0-9.]* fps$' "$W/se")" -eq 4 ] && [ "$(grep -c '' "$W/se")" -eq 4 ]
result $? "patterns: --progress prints frame i/N and fps for each of the 4 frames" "stderr: $(head -c 300 "$W/se")"
check "patterns: every disparity and colour image equals the pair's own run (cmp)" \
  same_as_pairs "$S/pat/d_%02d.png" "$S/pat/c_%d.png"
run_m --backend cpu -d 32 "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" "$S/pat/q_%04d.png"
[ "$rc" -eq 0 ] && [ ! -s "$W/se" ]
result $? "patterns without --progress (stderr not a terminal): nothing on stderr" "stderr: $(head -c 300 "$W/se")"
run_m --backend cpu -d 32 "$S/kl" "$S/kr" "$S/out" --color "$S/col"
[ "$rc" -eq 0 ] && grep -q '^sequence of 4 pairs' "$W/so"
result $? "folders sharing names (KITTI style): 4 pairs" "exit $rc: $(cat "$W/se")"
check "folders sharing names: OUTDIR/NAME.png equal to the pairs' own runs" \
  same_as_pairs "$S/out/00000%d_10.png" "$S/col/00000%d_10.png"
run_m --backend cpu -d 32 "$S/ol" "$S/or" "$S/out2"
[ "$rc" -eq 0 ] && grep -q '^sequence of 4 pairs' "$W/so"
result $? "folders with names of their own: paired in order" "exit $rc: $(cat "$W/se")"
check "folders in order: OUTDIR/left_N.png equal to the pairs' own runs" same_as_pairs "$S/out2/left_%d.png"

# bad sequences: one line naming the file, nothing written
mkdir -p "$S/none"
cp "$S/f0/left.png" "$S/kl/000004_10.png"
expect_fail 1 "000004_10.png" "folders: a left file without a right one named" -d 32 "$S/kl" "$S/kr" "$S/none"
rm "$S/kl/000004_10.png"
cp "$S/f0/left.png" "$S/or/right_4.png"
expect_fail 1 "right_4.png" "folders in order: unequal counts name the extra file" -d 32 "$S/ol" "$S/or" "$S/none"
rm "$S/or/right_4.png"
cp "$S/f0/left.png" "$S/pat/left_0004.png"
expect_fail 1 "left_0004.png" "patterns: a left frame without its right one named" -d 32 \
  "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" "$S/none/d_%04d.png"
cp "$S/f0/right.png" "$S/pat/right_0004.png"
cp "$S/f0/right.png" "$S/pat/right_0005.png"
expect_fail 1 "right_0005.png" "patterns: a right frame beyond the last left one named" -d 32 \
  "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" "$S/none/d_%04d.png"
rm "$S/pat/right_0005.png"
"$SY" --size 176x120 "$S/wide" >/dev/null 2>&1
cp "$S/wide/left.png" "$S/pat/left_0002.png"
mkdir -p "$S/sized"
expect_fail 1 "left_0002.png is 176x120, the sequence is 160x120" "patterns: a frame of another size named" -d 32 \
  "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" "$S/sized/d_%04d.png"
[ "$(cd "$S/sized" && ls | tr '\n' ' ')" = "d_0000.png d_0001.png " ]
result $? "patterns: the pairs before the frame of another size are written whole, none after" "$(ls "$S/sized")"
cp "$S/f2/left.png" "$S/pat/left_0002.png"
rm "$S/pat/left_0004.png" "$S/pat/right_0004.png"
[ -z "$(find "$S" -name '*.tmp.*')" ]
result $? "no temporary file left by the failed sequences"
expect_fail 2 "is the same file as input LEFT" "patterns: an output pattern naming the inputs refused before any work" -d 32 \
  "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" "$S/pat/left_%04d.png"
expect_fail 2 "--color" "patterns: --color without a frame number refused" -d 32 \
  "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" "$S/none/d_%04d.png" --color "$S/none/c.png"
expect_fail 2 "--repeat" "sequences: --repeat refused" -d 32 --repeat 2 \
  "$S/pat/left_%04d.png" "$S/pat/right_%04d.png" "$S/none/d_%04d.png"
expect_fail 2 "OUTDIR" "folders: a missing OUTDIR refused" -d 32 "$S/kl" "$S/kr" "$S/missing"
expect_fail 2 "is the same file as input LEFT" "folders: OUTDIR = LEFTDIR refused (NAME.png are the inputs)" -d 32 "$S/kl" "$S/kr" "$S/kl"
expect_fail 1 "no such file" "patterns: no first frame (0 or 1) named" -d 32 \
  "$S/pat/nope_%04d.png" "$S/pat/right_%04d.png" "$S/none/d_%04d.png"
[ -z "$(ls -A "$S/none")" ]
result $? "refused sequences wrote nothing" "$(ls -A "$S/none" | head -3)"

# ---- 5. --disparities auto -------------------------------------------------------------------
gt_p99() { "$PY" - "$1" <<'PY'
import sys, cv2, numpy as np
g = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
g = g[np.isfinite(g) & (g > 0)]
print(f"{np.percentile(g, 99):.2f} {g.max():.2f}")
PY
}
for scene in "480x360 3 --max-disp 40" "560x320 23 --max-disp 60" "640x360 9 --max-disp 110"; do
  set -- $scene
  size=$1 seed=$2; shift 2
  A=$W/auto-$seed
  "$SY" --size "$size" --seed "$seed" "$@" "$A" >/dev/null 2>&1 || { echo "Bail out! stereo-synth"; exit 1; }
  read -r p99 gmax <<<"$(gt_p99 "$A/disp_left.pfm")"
  out=$("$M" -d auto --backend cpu "$A/left.png" "$A/right.png" "$W/auto.pfm" 2>&1)
  D=$(sed -nE 's/.*--disparities auto: ([0-9]+) .*/\1/p' <<<"$out")
  ok=1
  [ -n "$D" ] && grep -q "D=$D " <<<"$out" &&
    "$PY" -c "import sys; d, p, m = map(float, sys.argv[1:]); sys.exit(not (d % 16 == 0 and d > p and d <= m * 1.125 + 40))" "$D" "$p99" "$gmax" || ok=0
  result $((1 - ok)) "--disparities auto on a $size scene (GT 99th percentile $p99 px, max $gmax): D $D, in the summary" "$out"
done
S5=$W/auto-seq; mkdir -p "$S5/l" "$S5/r" "$S5/o"
for i in 0 1 2; do
  "$SY" --size 320x240 --t "$i" --max-disp 30 "$S5/f$i" >/dev/null 2>&1 || { echo "Bail out! stereo-synth"; exit 1; }
  cp "$S5/f$i/left.png" "$S5/l/$i.png"; cp "$S5/f$i/right.png" "$S5/r/$i.png"
done
out=$("$M" -d auto --backend cpu "$S5/l" "$S5/r" "$S5/o" 2>&1)
[ "$(grep -c -- "--disparities auto:" <<<"$out")" = 1 ] && [ "$(ls "$S5/o" | wc -l)" = 3 ]
result $? "--disparities auto on a sequence: measured once, on the first pair; every pair matched" "$out"
"$SY" --size 48x40 "$W/narrow" >/dev/null 2>&1
out=$("$M" -d auto "$W/narrow/left.png" "$W/narrow/right.png" "$W/narrow.pfm" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "too narrow to measure" <<<"$out" && [ ! -e "$W/narrow.pfm" ]
result $? "--disparities auto on a 48 px wide pair: exit 2, too narrow, no output" "rc $rc: $out"
# with --band W the range chosen must be one the band takes (W < D): the 320x240 scene reaches
# 24 px (32 would do), so W + 16; a width whose largest D is no wider than the band: refused
# after measuring; a band width of neither 32 nor 64: refused before measuring
for band in "32 48" "64 80"; do
  set -- $band
  out=$("$M" -d auto --band "$1" --backend cpu "$L" "$R" "$W/band.pfm" 2>&1); rc=$?
  [ $rc = 0 ] && grep -q -- "--disparities auto: $2 (the scene reaches [0-9]* px), raised above --band $1" <<<"$out" &&
    grep -q "D=$2 " <<<"$out" && [ -s "$W/band.pfm" ]
  result $? "--disparities auto --band $1 on a 320x240 scene needing 32: D $2, matched (exit 0)" "rc $rc: $out"
  rm -f "$W/band.pfm"
done
"$SY" --size 80x60 "$W/b80" >/dev/null 2>&1 || { echo "Bail out! stereo-synth"; exit 1; }
expect_fail 2 "a band of 64 needs more than 64 disparities; at 80 px wide" \
  "--disparities auto --band 64 at 80 px wide (64 disparities at most): exit 2, one line" \
  -d auto --band 64 --backend cpu "$W/b80/left.png" "$W/b80/right.png" "$W/b80.pfm"
[ ! -e "$W/b80.pfm" ]
result $? "--disparities auto --band 64 at 80 px wide: no output"
expect_fail 2 "stereo-match: --band: 48 is neither 32 nor 64" \
  "--disparities auto --band 48: refused before measuring (exit 2, one line)" \
  -d auto --band 48 --backend cpu "$L" "$R" "$W/band.pfm"
out=$("$M" -d auto --baselines 1,2 "$W/auto-3/left.png" "$W/auto-3/right.png" "$W/auto-3/left.png" "$W/v.pfm" 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- "--disparities auto: measures a pair" <<<"$out"
result $? "--disparities auto with more views: refused (exit 2)" "rc $rc: $out"
if [ -x "$B/stereo-live" ]; then
  # the generated scene reaches 48 px: 48 + 8 rounded up to 64, measured on the first pair
  out=$("$B/stereo-live" --headless --frames 2 --backend cpu -d auto 2>&1); rc=$?
  [ $rc = 0 ] && grep -q "stereo-live: disparities auto: 64 (the first pair reaches 48 px)" <<<"$out" &&
    grep -q "D 64," <<<"$out"
  result $? "stereo-live -d auto: measured on the first pair, the stage runs with it" "rc $rc: $out"
  out=$("$B/stereo-live" --headless --frames 1 --backend cpu --set stereo.disparities=auto \
    --set synth.width=160 --set synth.height=120 2>&1); rc=$?
  [ $rc = 0 ] && grep -q "stereo-live: disparities auto: [0-9]* (the first pair reaches" <<<"$out"
  result $? "stereo-live [stereo] disparities = auto at 160x120: measured" "rc $rc: $out"
  out=$("$B/stereo-live" --headless --frames 1 --backend cpu -d auto --set stereo.baselines=1,2 2>&1); rc=$?
  [ $rc = 2 ] && grep -q "disparities auto: measures a pair" <<<"$out"
  result $? "stereo-live -d auto with more views: refused (exit 2)" "rc $rc: $out"
  out=$("$B/stereo-live" --headless --frames 2 --backend cpu -d auto --band 32 \
    --input 'synth://?width=320&height=240' 2>&1); rc=$?
  [ $rc = 0 ] && grep -q "disparities auto: 48 (the first pair reaches [0-9]* px), raised above band 32" <<<"$out" &&
    grep -q "D 48," <<<"$out"
  result $? "stereo-live -d auto --band 32 at 320x240 (needs 32): D 48, the stage runs" "rc $rc: $out"
fi

echo "1..$n"
printf '%s\n' "${tap[@]}"
