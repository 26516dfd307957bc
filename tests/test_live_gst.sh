#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_live_gst.sh — the live app's URI sources through GStreamer
# (app/sources/source_gst.c), as TAP.
#
#   1. two gst://videotestsrc is-live=true cameras, headless: exit 0, 30 frames, the source is
#      gst, as many pairs as frames from each side, the largest skew within the tolerance
#   2. timestamps pair the right frames: two image sequences of 12 distinct random images replayed
#      through gst://multifilesrc ! pngdec (GRAY8, no conversion; a camera URI, so each EOS is a
#      loss and a reconnect) and 30 pairs recorded (--record): every recorded pair is the left
#      and right image of one index, bit for bit
#   3. a short video file encoded by a GStreamer pipeline at test time (videotestsrc ! jpegenc !
#      avimux), replayed with file:// (decodebin): every frame, none dropped, GRAY8 passed
#      through, then the end (files.loop = false); looped (files.loop = true) past its end
#   4. one side-by-side stream (--input gst://...): split into halves of 320 of a 640 frame
#   5. a broken pipeline (gst://nosuchelement): refused at once, exit 1, one line with the URI
#      and GStreamer's "no element"; caps the app cannot take: GStreamer's not-negotiated and the
#      hint; rtsp:// without a server: refused with rtspsrc's error; a pipeline that never
#      delivers: refused after the bounded wait (the app's 10 s), nothing hangs
#   6. EOS mid-run (num-buffers): the camera is lost ("lost (end of stream)" naming the URI) and
#      reconnected, the run goes on to its frame count; an error mid-stream (a corrupt PNG in
#      the sequence): lost with GStreamer's own message, reconnected; no definite leak under
#      valgrind through losses and reconnects; SIGINT while streaming: a clean exit 0
#   7. configuration: [source] left/right/input in a file; type beside them in one file refused
#      at its line; --left without --right; the libc-only build refuses gst:// ("not built in
#      this binary", exit 2)
# Skips visibly when the app is built without GStreamer or gst-launch-1.0 / a plugin is missing.
# Waits are on states (tests/tap.sh); how fast the app refuses or stops is measured by
# tools/timing.sh. Run from the repo root (tests/run does). Env: STEREO_BUILD (build). About 60 s
# on 2 cores.
set -u
cd "$(dirname "$0")/.." || exit 1
TESTS_DIR=$PWD/tests
B=${STEREO_BUILD:-build}
LIVE=$PWD/$B/stereo-live
HL=$PWD/$B/gpu/stereo-live-headless
case $B in /*) LIVE=$B/stereo-live HL=$B/gpu/stereo-live-headless ;; esac
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
[ -x "$LIVE" ] || { echo "Bail out! $LIVE is not built (ninja)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/test_live_gst.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

. "$TESTS_DIR/tap.sh"   # n, ok, not_ok, skip, check, lines
json() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null; }
# the last "gst: ..." statistics line of a log, as numbers: pairs framesL framesR skew maxskew tol
gst_stats() {
  grep 'stereo-live: gst: ' "$1" | tail -1 |
    sed -n 's/.*gst: \([0-9]*\) pairs of \([0-9]*\)+\([0-9]*\) frames, skew \(-\{0,1\}[0-9.]*\) ms (max \([0-9.]*\) of \([0-9.]*\)).*/\1 \2 \3 \4 \5 \6/p'
}
count() { grep -c "$2" "$1"; }

TOTAL=22
if ! timeout 60 "$LIVE" --headless --frames 1 --input 'gst://videotestsrc ! video/x-raw,width=64,height=48' \
     >probe.out 2>probe.err; then
  if grep -q 'not built in this binary' probe.err; then
    for i in $(seq $TOTAL); do skip "GStreamer sources" "stereo-live is built without GStreamer (./configure found no gstreamer-1.0 development files)"; done
    exit 0
  fi
fi
GSTL=$(command -v gst-launch-1.0 || true)

V='video/x-raw,width=320,height=240,framerate=30/1'

# 1. two live videotestsrc cameras
timeout 60 "$LIVE" --headless --frames 30 --stats-json two.json \
  --left "gst://videotestsrc is-live=true pattern=ball ! $V" \
  --right "gst://videotestsrc is-live=true pattern=ball ! $V" >two.out 2>two.err
rc=$?
read -r pairs fl fr skew maxskew tol <<<"$(gst_stats two.err)"
check "two gst://videotestsrc cameras: exit 0, 30 frames, source gst" two.err \
  test "$rc" = 0 -a "$(json two.json frames)" = 30 -a "$(json two.json source)" = gst -a \
  "$(json two.json width)" = 320
check "two cameras: each pair from both sides (pairs $pairs of $fl+$fr frames), at least 30" two.err \
  test "${pairs:-0}" -ge 30 -a "${fl:-0}" -ge "${pairs:-1}" -a "${fr:-0}" -ge "${pairs:-1}"
check "two cameras: largest skew $maxskew ms within the tolerance $tol ms (half of 33.3)" two.err \
  "$PY" -c "import sys; m, t = float('${maxskew:-99}'), float('${tol:-0}'); sys.exit(not (abs(t - 16.7) < 0.1 and m <= t))"

# 2. pairing by timestamp: distinct random images, each recorded pair one index
if "$PY" - <<'EOF'
import cv2, numpy as np, os
rng = np.random.default_rng(7)
for i in range(12):
    for side in ("L", "R"):
        cv2.imwrite(f"{side}_{i:04d}.png", rng.integers(0, 256, (48, 64), dtype=np.uint8))
EOF
then
  seq_src() { echo "gst://multifilesrc location=$W/$1_%04d.png index=0 caps=image/png,framerate=30/1 ! pngdec"; }
  timeout 60 "$LIVE" --headless --frames 30 --record rec --set stereo.disparities=16 \
    --left "$(seq_src L)" --right "$(seq_src R)" --stats-json seq.json >seq.out 2>seq.err
  rc=$?
  res=$("$PY" - <<'EOF'
import cv2, glob, hashlib
h = lambda p: hashlib.sha1(cv2.imread(p, cv2.IMREAD_UNCHANGED).tobytes()).hexdigest()
idx = {h(p): (p[0], int(p[2:6])) for p in glob.glob("[LR]_*.png")}
rec = sorted(glob.glob("rec/left_*.png"))
good = 0
for l in rec:
    a, b = idx.get(h(l)), idx.get(h(l.replace("left_", "right_")))
    good += a is not None and b is not None and a == ("L", b[1]) and b[0] == "R"
print(len(rec), good)
EOF
)
  read -r nrec ngood <<<"$res"
  check "gst://multifilesrc pairs: GRAY8 without a conversion" seq.err grep -q 'GRAY8' seq.err
  check "pairing by timestamp: $ngood of $nrec recorded pairs are left and right of one index, bit for bit" \
    seq.err test "$rc" = 0 -a "${nrec:-0}" = 30 -a "${ngood:-0}" = 30
else
  skip "gst://multifilesrc pairs" "python3-opencv cannot write the images"
  skip "pairing by timestamp" "python3-opencv cannot write the images"
fi

# 3. a video file encoded at test time, replayed with file://
if [ -n "$GSTL" ] && "$GSTL" -q videotestsrc num-buffers=24 pattern=ball ! \
     video/x-raw,width=160,height=120,framerate=30/1,format=GRAY8 ! jpegenc ! avimux ! \
     filesink location=clip.avi >enc.out 2>&1 && [ -s clip.avi ]; then
  timeout 60 "$LIVE" --headless --set files.loop=false --set stereo.disparities=16 --stats-json clip.json \
    --left "file://$W/clip.avi" --right "file://$W/clip.avi" >clip.out 2>clip.err
  rc=$?
  read -r pairs fl fr skew maxskew tol <<<"$(gst_stats clip.err)"
  check "file:// video (jpegenc ! avimux, 24 frames): exit 0 at its end, 24 pairs, none dropped" clip.err \
    test "$rc" = 0 -a "$(json clip.json frames)" = 24 -a "$(json clip.json dropped)" = 0 -a \
    "${pairs:-0}" = 24 -a "$(json clip.json width)" = 160
  check "file:// video: decoded GRAY8 passes through (no conversion), skew 0" clip.err \
    test "$(count clip.err 'GStreamer, 160x120 GRAY8')" = 2 -a "${maxskew:-1}" = 0.0
  timeout 60 "$LIVE" --headless --frames 60 --set files.loop=true --set stereo.disparities=16 \
    --left "file://$W/clip.avi" --right "file://$W/clip.avi" >loop.out 2>loop.err
  rc=$?
  check "file:// video looped (files.loop = true): 60 frames, 2 restarts" loop.err \
    test "$rc" = 0 -a "$(grep 'stereo-live: gst: ' loop.err | tail -1 | sed -n 's/.* \([0-9]*\) restarts.*/\1/p')" = 2
else
  for t in "file:// video" "file:// video GRAY8" "file:// video looped"; do
    skip "$t" "gst-launch-1.0 (gstreamer1.0-tools) or jpegenc/avimux (gstreamer1.0-plugins-good) missing"
  done
fi

# 4. one side-by-side stream
timeout 60 "$LIVE" --headless --frames 5 --stats-json sbs.json \
  --input 'gst://videotestsrc is-live=true ! video/x-raw,width=640,height=240,format=GRAY8' \
  >sbs.out 2>sbs.err
rc=$?
check "--input gst:// side by side: 640x240 GRAY8 split into two 320x240 views" sbs.err \
  test "$rc" = 0 -a "$(json sbs.json width)" = 320 -a "$(json sbs.json height)" = 240 -a \
  "$(count sbs.err 'split into halves')" = 1

# 5. refused clearly, nothing hangs (the limits catch a hang only; tools/timing.sh measures how
#    soon each is refused)
timeout 60 "$LIVE" --headless --frames 5 --input gst://nosuchelement >bad.out 2>bad.err
rc=$?
check "gst://nosuchelement: exit 1 before any frame, one line with the URI and 'no element'" bad.err \
  test "$rc" = 1 -a "$(count bad.err '')" = 1 -a "$(count bad.out '^frame ')" = 0 -a \
  "$(count bad.err 'gst://nosuchelement: cannot build the GStreamer pipeline: no element "nosuchelement"')" = 1
timeout 60 "$LIVE" --headless --frames 5 --left 'gst://videotestsrc ! video/x-raw,format=I420' \
  --right 'gst://videotestsrc' >neg.out 2>neg.err
rc=$?
check "caps the app cannot take (I420): exit 1, not-negotiated and the videoconvert hint" neg.err \
  test "$rc" = 1 -a "$(count neg.err 'left gst://videotestsrc ! video/x-raw,format=I420: .*not-negotiated.*videoconvert')" = 1
timeout 60 "$LIVE" --headless --frames 5 --left rtsp://127.0.0.1:1/left --right rtsp://127.0.0.1:1/right \
  >rtsp.out 2>rtsp.err
rc=$?
check "rtsp:// without a server (127.0.0.1:1): exit 1, one line with the URI and rtspsrc's error" \
  rtsp.err test "$rc" = 1 -a "$(count rtsp.err '')" = 1 -a \
  "$(count rtsp.err '^stereo-live: left rtsp://127.0.0.1:1/left: rtspsrc0: ')" = 1
# the app's own bound is 10 s: a limit of ten times that
t0=$SECONDS
timeout 150 "$LIVE" --headless --frames 5 --input 'gst://videotestsrc is-live=true ! valve drop=true' \
  >mute.out 2>mute.err
rc=$?
check "a pipeline that never delivers: exit 1 after the bounded wait ($((SECONDS - t0)) s), 'no frame within 10 s'" \
  mute.err test "$rc" = 1 -a "$(count mute.err 'no frame within 10 s')" = 1

# 6. EOS and an error mid-run: lost, reconnected, the run goes on
L="gst://videotestsrc is-live=true num-buffers=15 ! $V"
timeout 60 "$LIVE" --headless --frames 40 --stats-json eos.json --left "$L" \
  --right "gst://videotestsrc is-live=true ! $V" >eos.out 2>eos.err
rc=$?
check "EOS mid-run: exit 0 after 40 frames" eos.err test "$rc" = 0 -a "$(json eos.json frames)" = 40
check "EOS mid-run: 'left URI: lost (end of stream), retrying every 1 s', then reconnected" eos.err \
  test "$(count eos.err "left $L: lost (end of stream), retrying every 1 s")" -ge 1 -a \
  "$(count eos.err "left $L: reconnected")" -ge 1
if [ -f L_0000.png ]; then
  # a valid PNG with its image data overwritten: libpng's CRC check fails in pngdec
  mkdir -p bad && cp L_000[0-6].png bad/ &&
    printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' | dd of=bad/L_0006.png bs=1 seek=45 conv=notrunc 2>/dev/null
  E="gst://multifilesrc location=$W/bad/L_%04d.png index=0 caps=image/png,framerate=30/1 ! pngdec"
  timeout 60 "$LIVE" --headless --frames 12 --set stereo.disparities=16 --input "$E" \
    >err.out 2>err.err
  rc=$?
  check "an error mid-stream (a corrupt PNG): lost with GStreamer's message, reconnected, 12 frames" err.err \
    test "$rc" = 0 -a "$(count err.err "$E: lost (.*Internal data stream error")" -ge 1 -a \
    "$(count err.err "$E: reconnected")" -ge 1
else
  skip "an error mid-stream" "no PNG images (python3-opencv)"
fi

# leaks: valgrind through two losses and reconnects (GStreamer's own reachable memory aside)
if command -v valgrind >/dev/null; then
  Q='video/x-raw,width=64,height=48,framerate=30/1'
  timeout 600 valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
    --suppressions="$TESTS_DIR/valgrind-glib.supp" \
    "$LIVE" --headless --frames 25 --set stereo.disparities=16 \
    --left "gst://videotestsrc is-live=true num-buffers=10 ! $Q" \
    --right "gst://videotestsrc is-live=true ! $Q" >vg.out 2>vg.err
  rc=$?
  check "valgrind: no definite leak through EOS, loss and reconnect (exit $rc)" vg.err \
    test "$rc" = 0 -a "$(count vg.err 'definitely lost')" = 0 -a "$(count vg.err 'reconnected')" -ge 1
else
  skip "valgrind: no definite leak" "valgrind is not installed"
fi

# SIGINT while two pipelines stream (the first stats line printed): a clean stop, pipelines set
# to NULL (how soon: tools/timing.sh)
"$LIVE" --headless --left "gst://videotestsrc is-live=true ! $V" \
  --right "gst://videotestsrc is-live=true ! $V" >int.out 2>int.err &
pid=$!
streaming=0
wait_for 60 grep -qs '^frame [1-9]' int.out && streaming=1
kill -INT "$pid"
stopped=0
ends_within "$pid" 60 && stopped=1
wait "$pid"
rc=$?
check "SIGINT while two pipelines stream: exit 0, the summary names the pairs" int.err \
  test "$streaming" = 1 -a "$stopped" = 1 -a "$rc" = 0 -a \
  "$(count int.err 'stereo-live: gst: [0-9]* pairs')" = 1

# 7. configuration files and the libc-only build
printf '[source]\ninput = gst://videotestsrc is-live=true ! video/x-raw,width=128,height=48\n[run]\nframes = 3\n[display]\nheadless = true\n[stereo]\ndisparities = 16\n' >in.ini
timeout 60 "$LIVE" --config in.ini --stats-json in.json >in.out 2>in.err
rc=$?
check "[source] input in a file: 3 frames of 64x48 views" in.err \
  test "$rc" = 0 -a "$(json in.json width)" = 64 -a "$(json in.json frames)" = 3
printf '[source]\ntype = v4l2\nleft = /dev/video0\nright = /dev/video2\n' >both.ini
timeout 60 "$LIVE" --config both.ini >both.out 2>both.err
rc=$?
check "[source] type and left in one file: exit 2, FILE:LINE of left" both.err \
  test "$rc" = 2 -a "$(count both.err '')" = 1 -a \
  "$(count both.err 'both.ini:3: left: the source is already named on line 2')" = 1
timeout 60 "$LIVE" --headless --left 'gst://videotestsrc' >alone.out 2>alone.err
rc=$?
check "--left without --right: exit 2, one line saying what is missing" alone.err \
  test "$rc" = 2 -a "$(count alone.err '')" = 1 -a "$(count alone.err 'right: missing; give left and right')" = 1
if [ -x "$HL" ]; then
  timeout 60 "$HL" --frames 3 --input gst://videotestsrc >hl.out 2>hl.err
  rc=$?
  check "stereo-live-headless: gst:// not built in this binary, exit 2" hl.err \
    test "$rc" = 2 -a "$(count hl.err 'not built in this binary: source gst://videotestsrc')" = 1
else
  skip "stereo-live-headless refuses gst://" "$HL is not built"
fi
echo "1..$n"
