#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_live_views.sh — the live app with more than two views ([stereo] baselines, issue
# #12: multi-baseline matching), end to end, as TAP.
#
#   1. accuracy: the generated scene at scene time 0 (--synth-prerender), headless, colour map
#      grey with the fixed range, so that the screenshot's grey level gives the disparity back;
#      bad-2 against stereo-synth's exact ground truth, for the pair and for 3 views 1,-1 (and 4
#      views 1,-1,2): the views must have a lower bad-2 than the pair (invalid pixels count as
#      bad), and a lower error of the valid pixels near depth edges; every screenshot must be
#      what stereo-match computes from stereo-synth's views of the same scene
#   2. record + replay of 3 views: every view written (view2_NNNNNN.png), replay.ini names the
#      three sequences and the baselines; the replay gives the recording's disparities bit for
#      bit (the depth PNGs of --record-depth, all frames), a view lost while recording is lost
#      again on replay (no file), and recording the replay again gives the same files; a
#      view's file missing from a sequence is that view lost (view 2: the pair; view 1: the frame
#      waits); a 2-view replay.ini without the baselines key (older recordings) still replays
#   3. a view lost and back (synth lose_view): view 2 lost for frames 5..9 of 20 -> those frames
#      are matched by the pair stage: their disparities equal a 2-view run's bit for bit, the
#      others equal a 3-view run's (and differ from the pair's); counts in the summary and in
#      --stats-json; view 1 lost: those frames wait (not matched) and are counted; the window
#      says so in the overlay (a yellow line while a view is lost, none once all are back)
#   4. bad input: baselines that do not fit the inputs, b1 != 1, ratio 0 or repeated, view keys
#      without the views or of another kind, sbs / GStreamer / type = files sources with more
#      views, lose_view outside the views, a map file that is no rig: exit 2 (config) or 1
#      (the rig at open), one line naming the key
#   5. maps from a rig file (an identity rig of three cameras listed out of order): the views
#      get their cameras by ratio, the disparities equal the run without maps; a ratio the rig
#      lacks is refused
# Run from the repo root (tests/run does). Env: STEREO_BUILD (build). About 30 s on 2 cores.
set -u
cd "$(dirname "$0")/.." || exit 1
TESTS_DIR=$PWD/tests
B=${STEREO_BUILD:-build}
LIVE=$B/stereo-live
SY=$B/stereo-synth
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for x in "$LIVE" "$SY"; do
  [ -x "$x" ] || { echo "Bail out! $x is not built (ninja $x)"; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/test_live_views.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
case $LIVE in /*) ;; *) LIVE=$OLDPWD/$LIVE SY=$OLDPWD/$SY ;; esac

. "$TESTS_DIR/tap.sh"   # n, ok, not_ok, skip, check, lines
# the default cost (adcensus, for the pair and for more views alike: a pair falls back to the
# stage of the views' cost when a view is lost)
SMALL=(--backend cpu --set synth.width=320 --set synth.height=240 --set stereo.disparities=32
       --set synth.fps=0)

# ---- 1. accuracy against the ground truth -----------------------------------------------------
"$SY" --size 320x240 --t 0 --views -1,2 gt >sy.out 2>&1 || not_ok "stereo-synth gt" "$(cat sy.out)"
MATCH=${LIVE%/*}/stereo-match
for v in pair:1 three:1,-1 four:1,-1,2; do
  run=${v%%:*} bl=${v#*:}
  timeout 120 "$LIVE" --headless "${SMALL[@]}" --frames 2 --synth-prerender 1 --baselines "$bl" \
    --set display.colormap=grey --screenshot "$run.png" >"$run.out" 2>"$run.err"
  rc=$?
  check "accuracy run $run (--baselines $bl): exit 0, screenshot at scene t 0" "$run.err" \
    eval '[ $rc -eq 0 ] && [ -s "$run.png" ] && grep -q "scene t 0.000 s" "$run.err"'
done
# the same images through stereo-match (the stage's own CLI): the app must compute the same
"$MATCH" -d 32 gt/left.png gt/right.png m_pair.pfm >m.out 2>&1 &&
  "$MATCH" -d 32 --baselines 1,-1 gt/left.png gt/right.png gt/view2.png m_three.pfm >>m.out 2>&1 &&
  "$MATCH" -d 32 --baselines 1,-1,2 gt/left.png gt/right.png gt/view2.png gt/view3.png \
    m_four.pfm >>m.out 2>&1 || not_ok "stereo-match on the ground-truth views" "$(tail -3 m.out)"
"$PY" - gt >acc.out 2>&1 <<'EOF'
import sys, cv2, numpy as np
gtdir = sys.argv[1]
gt = cv2.imread(gtdir + "/disp_left.pfm", cv2.IMREAD_UNCHANGED)
edge = cv2.imread(gtdir + "/near_edge.png", 0) > 0
D = 32
lo, hi = 0, 16 * (D - 1)                      # the fixed range of colormap.h, in 16ths
area = np.isfinite(gt) & (gt > 0)
area[:, :D] = False                           # no match possible left of x = D
res = {}
for s in ("pair", "three", "four"):
    g = cv2.imread(s + ".png", 0).astype(float)
    valid = g > 0                             # invalid: black (the scene has d >= 4)
    d = (lo + g * (hi - lo) / 255.0) / 16.0   # the grey map's index back to a disparity
    m = cv2.imread("m_" + s + ".pfm", cv2.IMREAD_UNCHANGED)
    mvalid = np.isfinite(m) & (m > 0)
    agree = (valid == mvalid) & (~valid | (np.abs(d - np.where(mvalid, m, 0)) <= 0.07))
    bad = ~valid | (np.abs(d - gt) > 2)
    res[s] = (100 * bad[area].mean(), 100 * bad[area & edge].mean(),
              100 * (bad & valid)[area & edge].sum() / max((valid & area & edge).sum(), 1),
              100 * valid[area].mean(), 100 * agree.mean())
    print(f"{s}: bad-2 {res[s][0]:.2f} % (invalid counts as bad), within 2 px of depth edges "
          f"{res[s][1]:.2f} %, of the valid ones there {res[s][2]:.2f} %; density "
          f"{res[s][3]:.1f} %; {res[s][4]:.2f} % of pixels as stereo-match computes them")
p, t, f = res["pair"], res["three"], res["four"]
assert min(p[4], t[4], f[4]) > 99.9, "the app does not compute what stereo-match computes"
assert p[0] < 40, "the pair itself is far off: the screenshot is not the disparity"
assert t[0] < p[0] and f[0] < p[0], "more views did not lower bad-2"
assert t[2] < p[2] and f[2] < p[2], "more views did not lower the error of valid pixels near edges"
EOF
rc=$?
check "accuracy: 3 and 4 views have lower bad-2 than the pair; the app computes stereo-match's disparities" \
  acc.out [ $rc -eq 0 ]
sed 's/^/# /' acc.out

# ---- 2. record and replay 3 views --------------------------------------------------------------
CAM=(--focal 1000 --baseline 1)   # depth PNGs in mm: 1/16 px steps are tens of mm apart here
timeout 120 "$LIVE" --headless "${SMALL[@]}" --frames 12 --baselines 1,-1 --record rec \
  --record-depth "${CAM[@]}" --set synth.lose_view=2,4,7 >r.out 2>r.err
rc=$?
nl=$(ls rec/left_*.png 2>/dev/null | wc -l) nr=$(ls rec/right_*.png 2>/dev/null | wc -l)
nv=$(ls rec/view2_*.png 2>/dev/null | wc -l) nd=$(ls rec/depth_*.png 2>/dev/null | wc -l)
check "record 3 views: exit $rc, 12 left, 12 right, 8 view2 (4 lost), 12 depth ($nl $nr $nv $nd)" \
  r.err [ $rc -eq 0 -a "$nl" -eq 12 -a "$nr" -eq 12 -a "$nv" -eq 8 -a "$nd" -eq 12 ]
check "replay.ini: left, right, view2 sequences and baselines = 1,-1, the loss noted" rec/replay.ini \
  eval 'grep -q "^left = file://.*/rec/left_%06d.png$" rec/replay.ini &&
    grep -q "^view2 = file://.*/rec/view2_%06d.png$" rec/replay.ini &&
    grep -qx "baselines = 1,-1" rec/replay.ini && grep -qx "combine = sides" rec/replay.ini &&
    grep -q "^# view 2 was lost in 4 of them" rec/replay.ini'
timeout 120 "$LIVE" --headless --config rec/replay.ini --record rec2 --record-depth \
  >p.out 2>p.err
rc=$?
check "replay: exit $rc, 12 frames: 8 from every view, 4 from the reference and view 1" p.out \
  eval '[ $rc -eq 0 ] && grep -q "^stereo-live: 12 frames, 12 captured, 0 dropped" p.out &&
    grep -q "^stereo-live: 3 views 1,-1 sides: 8 frames from every view, 4 from the reference and view 1" p.out'
same=0
for f in rec/depth_*.png; do cmp -s "$f" "rec2/${f#rec/}" && same=$((same + 1)); done
check "replay: the disparities (depth PNGs) equal the recording run's bit for bit ($same of 12)" \
  p.err [ "$same" -eq 12 ]
diff <(cd rec && ls view2_* left_* right_*) <(cd rec2 && ls view2_* left_* right_*) >ls.out 2>&1 &&
  for f in rec/view2_*.png rec/left_*.png; do cmp -s "$f" "rec2/${f#rec/}" || echo "differs: $f"; done >>ls.out
check "recording the replay again: the same files (view 2 missing on the same frames)" ls.out \
  [ ! -s ls.out ]

# files: a view's file missing is that view lost on that frame (view 2: the pair; view 1: wait)
cp -r rec recx && rm -f recx/depth_*.png recx/right_000002.png recx/view2_000009.png
sed 's#/rec/#/recx/#' rec/replay.ini >recx/replay.ini
timeout 120 "$LIVE" --headless --config recx/replay.ini --stats-json recx.json >x.out 2>x.err
rc=$?
check "files: right_000002.png and view2_000009.png missing: exit $rc, frame 2 waits, frame 9 and 4..7 from the pair" \
  x.out eval '[ $rc -eq 0 ] && grep -q "\"view_waits\": 1," recx.json &&
    grep -q "\"view_frames_pair\": 5," recx.json && grep -q "\"view_frames_all\": 6," recx.json &&
    grep -q "\"view_drops\": \[0, 1, 5\]," recx.json'
# a recording of two views made before [stereo] baselines existed (no baselines / combine keys)
timeout 120 "$LIVE" --headless "${SMALL[@]}" --frames 4 --record old --record-depth "${CAM[@]}" \
  >o.out 2>o.err
grep -v '^baselines = \|^combine = ' old/replay.ini >old/replay_old.ini
timeout 120 "$LIVE" --headless --config old/replay_old.ini --record old2 --record-depth \
  >o2.out 2>o2.err
rc=$?
same=0
for f in old/depth_*.png; do cmp -s "$f" "old2/${f#old/}" && same=$((same + 1)); done
check "a 2-view replay.ini without baselines (older recordings): exit $rc, type = files, the same disparities ($same of 4)" \
  o2.err eval '[ $rc -eq 0 ] && [ $same -eq 4 ] && grep -qx "type = files" old/replay.ini &&
    ! grep -q "^view2" old/replay.ini'

# ---- 3. a view lost and back -------------------------------------------------------------------
# the same 20 scene times in every run (prerendered), the depth of each frame recorded
run_depth() { # DIR ARGS...: records DIR/depth_*.png
  local dir=$1; shift
  timeout 120 "$LIVE" --headless "${SMALL[@]}" --frames 20 --synth-prerender 20 --record "$dir" \
    --record-depth "${CAM[@]}" --stats-json "$dir.json" "$@" >"$dir.out" 2>"$dir.err"
}
run_depth lpair; rc1=$?
run_depth lall --baselines 1,-1; rc2=$?
run_depth llost --baselines 1,-1 --set synth.lose_view=2,5,9; rc3=$?
check "lost view runs: exit 0 (pair, 3 views, 3 views with view 2 lost for frames 5..9)" llost.err \
  [ $rc1 -eq 0 -a $rc2 -eq 0 -a $rc3 -eq 0 ]
asp=0 asa=0 diff_pa=0
for i in $(seq 0 19); do
  f=$(printf 'depth_%06d.png' "$i")
  cmp -s "lpair/$f" "lall/$f" || diff_pa=$((diff_pa + 1))
  if [ "$i" -ge 5 ] && [ "$i" -le 9 ]; then
    cmp -s "llost/$f" "lpair/$f" && asp=$((asp + 1))
  else
    cmp -s "llost/$f" "lall/$f" && asa=$((asa + 1))
  fi
done
check "view 2 lost: frames 5..9 equal the pair's ($asp of 5), the rest the 3 views' ($asa of 15), which differ from the pair's ($diff_pa of 20)" \
  llost.out [ "$asp" -eq 5 -a "$asa" -eq 15 -a "$diff_pa" -eq 20 ]
check "view 2 lost: summary and --stats-json count 15 + 5 frames and 5 drops of view 2" llost.out \
  eval 'grep -q "^stereo-live: 3 views 1,-1 sides: 15 frames from every view, 5 from the reference and view 1 (a view lost), 0 waited (the reference or view 1 lost); drops v1 0, v2 5, skew ms v1 +0.0, v2 +0.0" llost.out &&
    grep -q "\"view_frames_pair\": 5," llost.json && grep -q "\"view_drops\": \[0, 0, 5\]," llost.json &&
    grep -q "\"views\": 3," llost.json && grep -q "\"baselines\": \[1, -1\]," llost.json'
timeout 120 "$LIVE" --headless "${SMALL[@]}" --frames 15 --synth-prerender 20 --baselines 1,-1 \
  --set synth.lose_view=1,3,6 --stats-json w.json >w.out 2>w.err
rc=$?
check "view 1 lost for frames 3..6: exit $rc, 4 frames waited (not matched), 15 from every view" \
  w.out eval '[ $rc -eq 0 ] && grep -q "\"view_waits\": 4," w.json &&
    grep -q "\"view_frames_all\": 15," w.json && grep -q "\"view_drops\": \[0, 4, 0\]," w.json'
if command -v xvfb-run >/dev/null 2>&1; then
  WINDOW=(xvfb-run -a -s "-screen 0 1024x768x24")
else
  WINDOW=(env SDL_VIDEODRIVER=offscreen)
fi
timeout 120 "${WINDOW[@]}" "$LIVE" "${SMALL[@]}" --frames 8 --baselines 1,-1 \
  --set synth.lose_view=2,4,1000 --screenshot "$W/wlost.png" >wl.out 2>wl.err
rc1=$?
timeout 120 "${WINDOW[@]}" "$LIVE" "${SMALL[@]}" --frames 8 --baselines 1,-1 \
  --set synth.lose_view=2,2,4 --screenshot "$W/wback.png" >wb.out 2>wb.err
rc2=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s wlost.png ] && [ -s wback.png ]; then
  "$PY" - wlost.png wback.png >ov.out 2>&1 <<'EOF'
import sys, cv2, numpy as np
def yellow(path):  # the overlay's yellow (255, 220, 90): a lost view's line
    im = cv2.imread(path).astype(int)[:, :, ::-1]
    box = im[:220, :]
    return int((np.abs(box - np.array([255, 220, 90])).sum(axis=2) < 40).sum())
a, b = yellow(sys.argv[1]), yellow(sys.argv[2])
print(f"yellow text pixels: {a} while view 2 is lost, {b} once it is back")
assert a > 50 and b < 5
EOF
  rc=$?
  check "window: the overlay says a view is lost (a yellow line), and not once it is back" \
    ov.out [ $rc -eq 0 ]
  sed 's/^/# /' ov.out
else
  not_ok "window: the overlay says a view is lost" "$(tail -3 wl.err wb.err)"
fi

# ---- 4. bad input ------------------------------------------------------------------------------
bad_case() { # NAME EXPECTED-STATUS PATTERN ARGS...
  local name=$1 want=$2 pat=$3; shift 3
  timeout 20 "$LIVE" --headless --frames 2 --backend cpu "$@" >b.out 2>b.err
  local rc=$?
  if [ $rc -eq "$want" ] && [ "$(lines b.err)" -eq 1 ] && grep -q -- "$pat" b.err; then
    ok "$name: exit $want, one line: $(cat b.err)"
  else
    not_ok "$name: exit $want, one line with '$pat'" "exit $rc; stderr: $(cat b.err)"
  fi
}
bad_case "b1 != 1" 2 "baselines: '2,-1': the first ratio is view 1's" --baselines 2,-1
bad_case "a ratio 0" 2 "view 2 has ratio 0" --baselines 1,0
bad_case "a repeated ratio" 2 "view 3 repeats view 2's ratio" --baselines 1,-1,-1
bad_case "a ratio the scene cannot render" 2 "baselines: view 2's ratio 5" --baselines 1,5
bad_case "not a number" 2 "not a number" --baselines 1,x
bad_case "combine unknown" 2 "combine: 'avg' is not one of sides, sum" --combine avg
bad_case "a third camera missing" 2 "view2: missing: \[stereo\] baselines '1,-1' gives 3 views" \
  --baselines 1,-1 --left /dev/video0 --right /dev/video2
bad_case "a fourth sequence missing" 2 "view3: missing" --baselines 1,-1,2 \
  --left 'file://a_%d.png' --right 'file://b_%d.png' --view 'file://c_%d.png'
bad_case "a view beside the generated scene" 2 "view2: the generated scene (synth://) renders" \
  --baselines 1,-1 --view /dev/video4
bad_case "a view without its ratio" 2 "view2: set, but \[stereo\] baselines '1' gives 2 views" \
  --left /dev/video0 --right /dev/video2 --view /dev/video4
bad_case "a view of another kind" 2 "view2: '/dev/video4' is not an image sequence" \
  --baselines 1,-1 --left 'file://a_%d.png' --right 'file://b_%d.png' --view /dev/video4
bad_case "the same camera twice" 2 "view2: /dev/video0 is also left" \
  --baselines 1,-1 --left /dev/video0 --right /dev/video2 --view /dev/video0
bad_case "more views from a side-by-side camera" 2 "one side-by-side stream" \
  --baselines 1,-1 --input /dev/video0
bad_case "more views from a GStreamer pair" 2 "a GStreamer pair" \
  --baselines 1,-1 --left gst://videotestsrc --right gst://videotestsrc --view gst://videotestsrc
bad_case "more views from type = files" 2 "need the cameras as URIs" --baselines 1,-1 \
  --source files --set files.left=a_%d.png --set files.right=b_%d.png
bad_case "too many --view" 2 "more than 8 views" --view a --view b --view c --view d --view e \
  --view f --view g
bad_case "lose_view outside the views" 2 "lose_view: view 3, but there are 3 views" \
  --baselines 1,-1 --set synth.lose_view=3,1,2
bad_case "lose_view not VIEW,FIRST,LAST" 2 "synth.lose_view=2,5: '2,5' is not VIEW,FIRST,LAST" \
  --baselines 1,-1 --set synth.lose_view=2,5
mkdir -p va vb
bad_case "recording into the folder of view 2's sequence" 2 "record.dir 'vb' would hold source.view2 'vb/c_%d.png'" \
  --baselines 1,-1 --left 'file://va/l_%d.png' --right 'file://va/r_%d.png' \
  --view 'file://vb/c_%d.png' --record vb
printf '[stereo]\nbaselines = 1,1\n' >bad.ini
bad_case "config file: a repeated ratio (FILE:LINE)" 2 "bad.ini:2: baselines: '1,1': view 2 repeats" \
  --config bad.ini
cp gt/left.png l_000000.png && cp gt/right.png r_000000.png && cp gt/left.png c_000000.png
printf '%%YAML:1.0\n---\nimage_width: 320\nimage_height: 240\n' >pair.yaml
bad_case "maps that are no rig file for 3 views" 1 "calibration.maps: .*pair.yaml is no rig file" \
  --baselines 1,-1 --left 'file://l_%06d.png' --right 'file://r_%06d.png' \
  --view 'file://c_%06d.png' --set calibration.maps="$W/pair.yaml"

# ---- 5. one map per view from a rig file -----------------------------------------------------
# An identity rig (no distortion, no rotation, one camera matrix) of three cameras listed out of
# order: cam0 at ratio 1, cam1 the reference, cam2 at ratio -1. Its maps move no pixel, so the
# run through them must give the disparities of the run without maps; a ratio the rig lacks is
# refused naming the key.
"$PY" - rig.yml <<'EOF' >rig.out 2>&1
import sys, cv2, numpy as np
f, cx, cy, W, H = 300.0, 159.5, 119.5, 320, 240
fs = cv2.FileStorage(sys.argv[1], cv2.FILE_STORAGE_WRITE)
fs.write("rig_cameras", 3); fs.write("reference", 1)
fs.write("image_width", W); fs.write("image_height", H)
fs.write("focal_px", f); fs.write("cx", cx); fs.write("cy", cy)
for k, b in enumerate((0.1, 0.0, -0.1)):
    K = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]])
    fs.write(f"cam{k}_M", K); fs.write(f"cam{k}_D", np.zeros((1, 5)))
    fs.write(f"cam{k}_R", np.eye(3))
    fs.write(f"cam{k}_P", np.array([[f, 0, cx, -f * b], [0, f, cy, 0], [0, 0, 1, 0]]))
    fs.write(f"cam{k}_baseline_ratio", b / 0.1)
fs.release()
EOF
for m in none rig; do
  extra=(); [ $m = rig ] && extra=(--set calibration.maps="$W/rig.yml")
  timeout 120 "$LIVE" --headless "${SMALL[@]}" --frames 3 --synth-prerender 3 --baselines 1,-1 \
    --record "m_$m" --record-depth "${CAM[@]}" "${extra[@]}" >"m_$m.out" 2>"m_$m.err"
  echo $? >"m_$m.rc"
done
same=0
for f in m_none/depth_*.png; do cmp -s "$f" "m_rig/${f#m_none/}" && same=$((same + 1)); done
check "3 views through an identity rig file (cameras out of order): exit 0, the disparities of the run without maps ($same of 3)" \
  m_rig.err [ "$(cat m_rig.rc)" -eq 0 -a "$(cat m_none.rc)" -eq 0 -a "$same" -eq 3 ]
bad_case "a ratio the rig file lacks" 1 "no camera at view 2's baseline ratio 2 (\[stereo\] baselines); the rig's cameras are at 1, 0, -1" \
  "${SMALL[@]}" --baselines 1,2 --set calibration.maps="$W/rig.yml"
echo "1..$n"
