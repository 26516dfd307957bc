#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_live.sh — the live app (build/stereo-live) end to end, as TAP.
#
#   1. headless on the generated scene with the CPU backend: exit 0, frame count, stats lines;
#      a stage too slow for the source says so once with the settings that help, one that
#      keeps up does not
#   2. a window (Xvfb through xvfb-run, else SDL's offscreen driver): --screenshot; the colour
#      map follows the scene's depth order against its exact ground truth at the screenshot's
#      scene time (background bluer than the panel, the panel bluer than the nearest occluders),
#      the overlay box holds text; the pair view shows both images and the horizontal lines;
#      without a screen and XDG_RUNTIME_DIR: headless, without an unexplained SDL line
#   3. SIGTERM / SIGINT while running (headless and in a window): a clean exit 0 (how soon:
#      tools/timing.sh); under load at any moment from the start on: exit 0, the summary and the
#      JSON, every run; SIGINT and SIGTERM together count as one request
#   4. bad options and configurations: exit 2 (as config/README.md says), one stderr line (some
#      word for word), nothing created; sources that cannot open: exit 1, one line (a missing
#      camera set in a file: FILE:LINE of the key; the shipped two-usb-cameras.ini's placeholder:
#      edit this line); --sms N:
#      bad values refused naming --sms, ignored by the CPU backend, --backend cuda --sms 16 says
#      its SMs (a GPU) or the no-device message (none)
#   5. --record, then replay with the files source: every pair, none dropped, same disparity;
#      replay.ini keeps the recording's [stereo] and [calibration] settings (D16 at 64x48, 4
#      paths, census; maps by absolute path): the replay runs with them, same disparity;
#      recording the replay again gives the same files bit for bit; recorded = processed;
#      outputs refused before the session (exit 2, at once): --screenshot / --stats-json into a
#      missing folder, naming each other, the configuration, the maps or a file in the recording
#      folder, a link, a device, a directory; --record into the folder a files source replays
#      (more hostile cases: tests/test_hostile.sh)
#   6. the recording writer thread: slowed down (strace delays its renames), a live source drops
#      recordings and counts them (recorded + record drops = processed, the queue flushed at the
#      end), a files source waits and drops none; the folder vanishing mid-run ends the run with
#      exit 1 and one line naming the file
#   7. the summary: --stats-json (frames, fps, stage and latency percentiles), --synth-prerender;
#      cost mi: restarts and warm frames counted (mi_warm on and off)
#   8. build/gpu/stereo-live-headless (CUDA and libc only) with the CPU backend: runs, refuses
#      what is not built in with one line; stereo-bench --async with the CPU backend
#   9. leaks: valgrind over 300 headless frames at 64x48 (and a record + replay, and the
#      libc-only build): none definite
#  10. --list-cameras without cameras (STEREO_DEV_DIR): an empty directory and this machine's
#      /dev (when it has no /dev/video*): exit 1 and one line; nodes that are no cameras (a
#      file, /dev/null, a FIFO, a directory) listed in number order with why and their by-id
#      link, without hanging; a missing directory; other options beside it refused; a write
#      error (/dev/full): exit 1, one line; --help
#  11. depth: key p (STEREO_LIVE_KEYS) saves the shown frame's PLY and depth PNG (the PNG's mm
#      are the PLY's Z rounded), without a camera says why and saves nothing; --record-depth
#      writes depth_NNNNNN.png equal to stereo-match --depth of each recorded pair and keeps
#      focal / baseline in replay.ini; bad camera options refused (exit 2, one line), and by
#      the libc-only build as not built in
# Run from the repo root (tests/run does): bash tests/test_live.sh. Env: STEREO_BUILD (build).
# About 50 s on 2 cores. Exits non-zero only on a setup error.
set -u
cd "$(dirname "$0")/.." || exit 1
TESTS_DIR=$PWD/tests
B=${STEREO_BUILD:-build}
LIVE=$B/stereo-live
SY=$B/stereo-synth
HL=$B/gpu/stereo-live-headless   # built by every `ninja` (app/live.ninja)
BENCH=$B/gpu/stereo-bench        # only when configured with CUDA
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for x in "$LIVE" "$SY"; do
  [ -x "$x" ] || { echo "Bail out! $x is not built (ninja $x)"; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/test_live.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
ROOT=$PWD
cd "$W" || exit 1            # the app writes nothing else, but 's' screenshots land in the cwd
case $LIVE in /*) ;; *) LIVE=$OLDPWD/$LIVE SY=$OLDPWD/$SY HL=$OLDPWD/$HL BENCH=$OLDPWD/$BENCH ;; esac

. "$TESTS_DIR/tap.sh"   # n, ok, not_ok, skip, check, lines

# A display for the window tests: Xvfb through xvfb-run, else SDL's offscreen driver.
if command -v xvfb-run >/dev/null 2>&1; then
  WINDOW=(xvfb-run -a -s "-screen 0 1024x768x24")
  WINDOW_KIND=Xvfb
else
  WINDOW=(env SDL_VIDEODRIVER=offscreen)
  WINDOW_KIND="SDL offscreen"
fi

# ---- 1. headless, generated scene, CPU backend ----------------------------------------------
# 45 frames: the scene is paced at 30 fps, so the run lasts 1.5 s whatever the stage's speed and
# prints at least one stats line (30 frames end just before the first when the stage keeps up)
timeout 60 "$LIVE" --headless --frames 45 --backend cpu >h.out 2>h.err
rc=$?
check "headless: 45 frames of the generated scene exit 0" h.err [ $rc -eq 0 ]
check "headless: the frame count is printed" h.out grep -q '^stereo-live: 45 frames, ' h.out
stats='^frame [0-9]+ \| capture [0-9.]+ fps \| stage [0-9.]+ fps [0-9.]+ ms \| '
stats+='latency [0-9]+ ms \| dropped [0-9]+ \| cpu \| 640x480 D64'
check "headless: stats lines once a second (capture, stage, latency, dropped, backend, size)" \
  h.out grep -qE "$stats" h.out

# A stage that cannot keep up says so once, with the settings that help: 256 disparities with 8
# paths at 640x480 on the CPU are several times slower than the scene's 30 fps on any CPU; a
# 160x120 D16 rank stage at 10 fps keeps up with room to spare, so its run says nothing of the kind
timeout 300 "$LIVE" --headless --frames 40 --backend cpu -d 256 --paths 8 >slow.out 2>slow.err
rc=$?
check "a stage that cannot keep up: said once, with the stage time, the frame interval, the share dropped and faster settings" slow.err \
  eval '[ $rc -eq 0 ] && [ "$(grep -c "does not keep up" slow.err)" -eq 1 ] &&
    grep -qE "the stage does not keep up with the source: [0-9.]+ ms a frame against [0-9.]+ ms between frames \([0-9.]+ fps\), [0-9]+ % of the captured frames dropped; faster settings: -d 128, --paths 4, --cost rank \(or a CUDA GPU\)$" slow.err'
timeout 120 "$LIVE" --headless --frames 30 --backend cpu --input 'synth://?width=160&height=120&fps=10' \
  -d 16 --cost rank >fast.out 2>fast.err
rc=$?
check "a stage that keeps up says nothing of it" fast.err \
  eval '[ $rc -eq 0 ] && ! grep -q "keep up" fast.err'

# ---- 2. window: screenshot, depth order, overlay, pair view ---------------------------------
timeout 60 "${WINDOW[@]}" "$LIVE" --frames 20 --backend cpu --screenshot "$W/shot.png" \
  >w.out 2>w.err
rc=$?
check "window ($WINDOW_KIND): 20 frames exit 0 and a screenshot" w.err \
  [ $rc -eq 0 -a -s "$W/shot.png" ]
check "window: it opened a window, not the headless fallback" w.err grep -q 'window: ' w.err
t=$(sed -n 's/.*screenshot .*scene t \([0-9.]*\) s.*/\1/p' w.err)
if [ -s shot.png ] && [ -n "$t" ] && "$SY" --t "$t" --size 640x480 gt >/dev/null 2>&1; then
  "$PY" - shot.png gt/disp_left.pfm >py.out 2>&1 <<'EOF'
# The synth scene at 640x480 has D = 48 (background 8..20, flat panel 24, occluders 40 and 48);
# the app searches 0..63, so the turbo index rises with disparity and the hue falls from blue
# (background) through green-cyan (panel) to yellow/orange (occluders).
import sys, cv2, numpy as np
shot, gt = cv2.imread(sys.argv[1]), cv2.imread(sys.argv[2], cv2.IMREAD_UNCHANGED)
assert shot is not None and shot.shape == (480, 640, 3), shot is None or shot.shape
D = 48.0
hue = cv2.cvtColor(shot, cv2.COLOR_BGR2HSV)[:, :, 0].astype(float) * 2
valid = shot.astype(int).sum(axis=2) > 60           # invalid disparities are black
free = np.ones(gt.shape, bool)
free[:140, :340] = False                              # the overlay box
free[395:, 330:] = False                              # the legend (colour bar) box
k = np.ones((9, 9), np.uint8)
def inner(m): return cv2.erode(m.astype(np.uint8), k).astype(bool) & free
regions = {"background": inner(gt < 0.45 * D), "panel": inner(np.abs(gt - D / 2) < 0.01),
           "occluders": inner(gt > 0.8 * D)}
med = {}
for name, m in regions.items():
    cover = (m & valid).sum() / max(m.sum(), 1)
    med[name] = np.median(hue[m & valid])
    print(f"{name}: {m.sum()} px, {cover:.2f} valid, median hue {med[name]:.0f}")
    assert m.sum() > 5000 and cover > 0.8, name
assert med["background"] > med["panel"] + 20 > med["occluders"] + 40, med
assert med["occluders"] < 70, "nearest occluders are not yellow-red"
white = shot.min(axis=2) > 190                        # turbo has no white: text only
box, rest = white[:120, :320].sum(), white[140:395, :].sum() + white[395:, :330].sum()
print(f"overlay: {box} text pixels in the box, {rest} elsewhere")
assert box > 300 and rest < 20
# the legend, bottom right: a colour bar (turbo from blue to red, left to right) over a dark
# box, and tick labels below it
leg = shot[395:, 330:].astype(int)
distinct = [len({tuple(p) for p in row}) for row in leg]  # the bar: a colour per column
r = int(np.argmax(distinct))
bar = leg[r]
assert distinct[r] > 150, f"no colour bar in the legend box ({distinct[r]} colours at most)"
# turbo's first entry is dark purple (about RGB 48 18 59), its last dark red (about 122 4 3): in the
# bar, purple left of red
dist = lambda rgb: np.abs(bar - np.array(rgb[::-1])).sum(axis=1)
lo_x, hi_x = int(np.argmin(dist((48, 18, 59)))), int(np.argmin(dist((122, 4, 3))))
print(f"legend: bar row {395 + r} with {distinct[r]} colours, turbo's ends at x {330 + lo_x} "
      f"(off by {dist((48, 18, 59))[lo_x]}) and {330 + hi_x} (off by {dist((122, 4, 3))[hi_x]}), "
      f"{white[395:, 330:].sum()} text pixels")
assert lo_x < hi_x and dist((48, 18, 59))[lo_x] < 50 and dist((122, 4, 3))[hi_x] < 50, \
    "the bar does not run from turbo's first colour to its last"
assert white[395:, 330:].sum() > 60, "no tick labels"
EOF
  rc=$?
  check "screenshot: turbo follows the scene's depth order (t = $t s) and the overlay has text" \
    py.out [ $rc -eq 0 ]
  sed 's/^/# /' py.out
else
  not_ok "screenshot: turbo follows the scene's depth order and the overlay has text" \
    "no screenshot, no scene time in the log, or stereo-synth failed: $(tail -3 w.err)"
fi
# display.color_range = auto: the colours spread over the whole map (the scene's 8..48 px span
# most of turbo instead of the indices of 8..48 in the search range 0..63)
timeout 60 "${WINDOW[@]}" "$LIVE" --frames 20 --backend cpu --screenshot "$W/auto.png" \
  --set display.color_range=auto >a.out 2>a.err
rc=$?
if [ $rc -eq 0 ] && [ -s auto.png ] && [ -s shot.png ]; then
  "$PY" - shot.png auto.png >py3.out 2>&1 <<'EOF'
import sys, cv2, numpy as np
def spread(path):
    im = cv2.imread(path)
    area = np.ones(im.shape[:2], bool)
    area[:140, :340] = False
    area[395:, 330:] = False
    valid = (im.astype(int).sum(axis=2) > 60) & area
    hue = cv2.cvtColor(im, cv2.COLOR_BGR2HSV)[:, :, 0].astype(float) * 2
    lo, hi = np.percentile(hue[valid], [2, 98])
    return hi - lo
f, a = spread(sys.argv[1]), spread(sys.argv[2])
print(f"hue spread fixed {f:.0f}, auto {a:.0f}")
assert a > f + 15
EOF
  rc=$?
  check "color_range = auto: the colours spread over more of the map than fixed" py3.out [ $rc -eq 0 ]
  sed 's/^/# /' py3.out
else
  not_ok "color_range = auto: the colours spread over more of the map than fixed" "$(tail -3 a.err)"
fi
timeout 60 "${WINDOW[@]}" "$LIVE" --frames 3 --backend cpu --set display.view=pair \
  --screenshot "$W/pair.png" >p.out 2>p.err
rc=$?
if [ $rc -eq 0 ] && [ -s pair.png ]; then
  "$PY" - pair.png >py2.out 2>&1 <<'EOF'
# 640x480 window, the left|right pair (1280x480) letterboxed into rows 120..359
import sys, cv2, numpy as np
im = cv2.imread(sys.argv[1]).astype(int)
strip = im[125:355]
left, right = strip[:, 10:310], strip[:, 330:630]
green = ((strip[:, :, 1] > 180) & (strip[:, :, 2] < 120) & (strip[:, :, 0] < 120)).sum()
print("left mean", left.mean(), "right mean", right.mean(), "green line px", green,
      "above the strip", im[:115, 330:].mean())
assert left.mean() > 40 and right.mean() > 40 and green > 2000
assert im[:115, 330:].mean() < 5
EOF
  rc=$?
  check "pair view: both images side by side with the horizontal lines" py2.out [ $rc -eq 0 ]
else
  not_ok "pair view: both images side by side with the horizontal lines" "$(tail -3 p.err)"
fi

# no screen and no XDG_RUNTIME_DIR (a headless machine over ssh): SDL's Wayland driver, which
# would print "error: XDG_RUNTIME_DIR is invalid or not set in the environment." before our
# line, is not tried (SDL 2.0.22 and later), or our "no display" line explains that line
env -u DISPLAY -u WAYLAND_DISPLAY -u XDG_RUNTIME_DIR -u SDL_VIDEODRIVER timeout 60 "$LIVE" \
  --frames 2 --backend cpu --set synth.width=160 --set synth.height=120 \
  --set stereo.disparities=16 >x.out 2>x.err
rc=$?
if [ $rc -eq 0 ] && grep -q '^stereo-live: no display (.*): running headless$' x.err &&
   { ! grep -q 'XDG_RUNTIME_DIR' x.err ||
     grep -q "the XDG_RUNTIME_DIR line above is SDL's Wayland driver" x.err; }; then
  ok "no screen, no XDG_RUNTIME_DIR: runs headless, no unexplained XDG_RUNTIME_DIR line: $(head -1 x.err)"
else
  not_ok "no screen, no XDG_RUNTIME_DIR: runs headless, no unexplained XDG_RUNTIME_DIR line" \
    "exit $rc; stderr: $(cat x.err)"
fi

# ---- 3. signals -------------------------------------------------------------------------------
# starts the app in the background, waits until its session runs (headless: the first stats
# line; a window: the screenshot of key s, pressed once a frame is shown), sends the signal; ok
# if it exits 0 (a hang: still running after 60 s)
signal_test() { # NAME SIGNAL COMMAND...
  local name=$1 sig=$2; shift 2
  rm -f s.out s.err # the last run's lines are no sign of this one
  STEREO_LIVE_KEYS=s "$@" >s.out 2>s.err &
  local pid=$!
  if ! wait_for 60 grep -qs -e '^frame [1-9]' -e '^stereo-live: screenshot ' s.out s.err; then
    kill -KILL "$pid"; wait "$pid" 2>/dev/null
    not_ok "$name" "no stats line or screenshot within 60 s: $(cat s.out s.err)"
    return
  fi
  local t0=$(date +%s%N)
  kill -"$sig" "$pid"
  if ! ends_within "$pid" 60; then
    not_ok "$name" "still running 60 s after SIG$sig"
    return
  fi
  wait "$pid"
  local rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
  check "$name (exit $rc after ${ms} ms)" s.err [ $rc -eq 0 ]
}
signal_test "SIGTERM while running headless: clean exit 0" TERM "$LIVE" --headless --backend cpu
signal_test "SIGINT while running headless: clean exit 0" INT "$LIVE" --headless --backend cpu
# Under load, from the first moment the app can take a signal (its handler installed: SigCgt
# in /proc, a state, not a delay) to well into the session, at delays spread over that span:
# every run ends with exit 0, the summary and the --stats-json file. Both cores kept busy by
# two loops. 5 runs of each signal (STEREO_DEEP=1: 20). Then SIGINT and SIGTERM together, as
# Ctrl-C reaches the app and timeout(1) passes it on: one request, the same clean end.
catches_int() { # both SIGINT (bit 1) and SIGTERM (bit 14): the app installs them one after the
  local m        # other, and a test that sends SIGTERM must not meet the moment between. The
  # process must be the app itself: between fork and exec it is this shell's copy, which catches
  # both too (bash does, for the EXIT trap) and which the exec then forgets (a loaded machine
  # once let the signal land there, and the app ran on)
  case $(cat "/proc/$1/comm" 2>/dev/null) in stereo-live*) ;; *) return 1 ;; esac
  m=$(awk '/^SigCgt/{print $2}' "/proc/$1/status" 2>/dev/null)
  [ -n "$m" ] && (( (0x$m >> 1) & 1 )) && (( (0x$m >> 14) & 1 ))
}
signal_under_load() { # SIGNAL RUNS
  local sig=$1 runs=$2 good=0 why="" i
  for ((i = 0; i < runs; i++)); do
    rm -f l.json l.out l.err
    "$LIVE" --headless --backend cpu --set synth.width=640 --set synth.height=480 \
      --stats-json l.json >l.out 2>l.err &
    local pid=$!
    wait_for 60 catches_int "$pid"
    sleep "0.$((i * 7 % 10))$((i % 10))" # 0 .. 0.99 s after the handler: the start, then frames
    kill -"$sig" "$pid"
    ends_within "$pid" 60 || { kill -KILL "$pid"; why+=" run $i: still running 60 s after SIG$sig;"; }
    wait "$pid"
    local rc=$?
    if [ $rc -eq 0 ] && grep -q '^stereo-live: [0-9]* frames, ' l.out &&
       /usr/bin/python3 -c 'import json,sys; json.load(open("l.json"))["frames"]' 2>/dev/null; then
      good=$((good + 1))
    else
      why+=" run $i: exit $rc, summary $(grep -c '^stereo-live: [0-9]* frames, ' l.out), json $([ -s l.json ] && echo yes || echo no), $(tail -1 l.err);"
    fi
  done
  check "SIG$sig under load at any moment: $good of $runs runs end with exit 0, the summary and the JSON" \
    <(echo "$why") [ "$good" -eq "$runs" ]
}
load_runs=5
[ "${STEREO_DEEP:-0}" = 1 ] && load_runs=20
busy=()
for _ in 1 2; do (while :; do :; done) & busy+=($!); done
signal_under_load INT "$load_runs"
signal_under_load TERM "$load_runs"
kill "${busy[@]}" 2>/dev/null; wait "${busy[@]}" 2>/dev/null
rm -f l.json
"$LIVE" --headless --backend cpu --stats-json l.json >l.out 2>l.err &
pid=$!
wait_for 60 grep -qs '^frame [1-9]' l.out
kill -INT "$pid"; kill -TERM "$pid"
ends_within "$pid" 60 || kill -KILL "$pid"
wait "$pid"
rc=$?
check "SIGINT then SIGTERM at once (Ctrl-C under timeout): one request, exit $rc with the summary and the JSON" \
  l.err bash -c "[ $rc -eq 0 ] && grep -q '^stereo-live: [0-9]* frames, ' l.out && [ -s l.json ]"
# xvfb-run would take the signal itself: in a window only with a display of our own
if command -v Xvfb >/dev/null 2>&1; then
  Xvfb -displayfd 3 -screen 0 800x600x24 -nolisten tcp 3>xdisplay >/dev/null 2>&1 &
  xpid=$!
  wait_for 60 test -s xdisplay
  signal_test "SIGTERM while running in a window: clean exit 0" TERM \
    env DISPLAY=":$(head -1 xdisplay)" "$LIVE" --backend cpu
  grep -q 'window: ' s.err || echo "# (it ran headless: $(grep 'no display' s.err))"
  kill "$xpid" 2>/dev/null; wait "$xpid" 2>/dev/null
else
  skip "SIGTERM while running in a window: clean exit 0" "no Xvfb"
fi

# ---- 4. bad options and configurations --------------------------------------------------------
printf '[source]\ntype = synth\n[stereo]\nwindow_size = 9\n' >bad_key.ini
printf '[stereo]\ndisparities = 100\n' >bad_value.ini
# with SAYS="LINE": the one line must be exactly that
bad_case() { # NAME EXPECTED-STATUS ARGS...
  local name=$1 want=$2; shift 2
  rm -rf never never.png
  timeout 20 "$LIVE" --headless --record never --screenshot never.png "$@" >b.out 2>b.err
  local rc=$?
  if [ $rc -eq "$want" ] && [ "$(lines b.err)" -eq 1 ] && [ ! -e never ] && [ ! -e never.png ] &&
     [ -z "${SAYS:-}" -o "$(cat b.err)" = "${SAYS:-}" ]; then
    ok "$name: exit $want, one line: $(cat b.err)"
  else
    not_ok "$name: exit $want, one line${SAYS:+ '$SAYS'}, nothing created" \
      "exit $rc; stderr: $(cat b.err); $(ls -d never never.png 2>/dev/null)"
  fi
}
SAYS="stereo-live: unknown option '--bogus' (see --help)" \
  bad_case "unknown option (worded as stereo-match words it)" 2 --bogus
# stereo-match's matching options, with its names and its messages
for args in "-d 100" "--cost sad" "--paths 6" "--p2 1024" "--uniqueness 100" "--min-disparity x"; do
  # shellcheck disable=SC2086 # the option and its value
  want=$("$ROOT/$B/stereo-match" $args /nonexistent-l.png /nonexistent-r.png o.pfm 2>&1 |
         sed 's/^stereo-match: //; s/ (see --help)$//')
  # shellcheck disable=SC2086
  SAYS="stereo-live: $want" bad_case "$args: stereo-match's message" 2 $args
done
SAYS="stereo-live: --frames: needs a value (see --help)" \
  bad_case "option without its value" 2 --frames
SAYS="stereo-live: --frames: 'abc' is not an integer" \
  bad_case "--frames not a number (the option named once)" 2 --frames abc
SAYS="stereo-live: --set stereo.disparities=100: 100 is not a multiple of 16 (try 96 or 112)" \
  bad_case "--set stereo.disparities=100: the nearest valid values" 2 --set stereo.disparities=100
SAYS="stereo-live: [source] type = v4l2 needs [camera] left and right (device paths), e.g. --set camera.left=/dev/video0 --set camera.right=/dev/video2" \
  bad_case "--source v4l2 without cameras: the keys to set, with --set" 2 --source v4l2
bad_case "--source unknown" 2 --source tape
bad_case "--backend unknown" 2 --backend gpu
bad_case "--set without a key" 2 --set display
bad_case "--set bad value" 2 --set stereo.disparities=17
bad_case "config file missing" 2 --config missing.ini
bad_case "config file: unknown key" 2 --config bad_key.ini
SAYS="stereo-live: bad_value.ini:2: disparities: 100 is not a multiple of 16 (try 96 or 112)" \
  bad_case "config file: bad value" 2 --config bad_value.ini
if grep -q 'stops the app with exit status 2 and one line' "$ROOT/config/README.md"; then
  ok "config/README.md gives the exit status of a bad configuration: 2, as the app does"
else
  not_ok "config/README.md gives the exit status of a bad configuration: 2, as the app does"
fi
bad_case "files source without patterns" 2 --source files --set files.left= --set files.right=
bad_case "v4l2 cameras that do not exist" 1 --source v4l2 --set camera.left=/dev/no-such-cam0 \
  --set camera.right=/dev/no-such-cam1
bad_case "sbs camera that does not exist" 1 --source sbs --set camera.device=/dev/no-such-cam
# a camera path from a file that does not exist: the message names FILE:LINE of the key; the
# shipped example's placeholder asks for the line to be edited, another path whether the camera
# is connected; a path given on the command line keeps the camera's own message
USB=$ROOT/config/two-usb-cameras.ini
L=$(grep -n '^left = ' "$USB" | cut -d: -f1)
SAYS="stereo-live: $USB:$L: camera.left = $(sed -n "${L}s/^left = //p" "$USB"): no such device; edit this line to name your camera (see \`ls /dev/v4l/by-id/\`)" \
  bad_case "the shipped two-usb-cameras.ini unedited: edit the device path at FILE:LINE" 1 \
  --config "$USB"
printf '[source]\ntype = v4l2\n\n[camera]\nleft = /dev/no-such-cam0\nright = /dev/no-such-cam1\n' \
  >cams.ini
SAYS="stereo-live: cams.ini:5: camera.left = /dev/no-such-cam0: no such device: is the camera connected? (\`ls /dev/v4l/by-id/\` lists the cameras)" \
  bad_case "a missing camera from a file: FILE:LINE, is it connected" 1 --config cams.ini
printf '[source]\ntype = sbs\n[camera]\ndevice = /dev/no-such-cam\n' >sbs.ini
SAYS="stereo-live: sbs.ini:4: camera.device = /dev/no-such-cam: no such device: is the camera connected? (\`ls /dev/v4l/by-id/\` lists the cameras)" \
  bad_case "a missing sbs camera from a file: FILE:LINE, is it connected" 1 --config sbs.ini
SAYS="stereo-live: capture: left camera /dev/no-such-cam0: no such device: is the camera connected?" \
  bad_case "the placeholder overridden by --set: the camera's own message" 1 --config "$USB" \
  --set camera.left=/dev/no-such-cam0
bad_case "files that do not exist" 1 --source files --set "files.left=nothing/l_%04d.png" \
  --set "files.right=nothing/r_%04d.png"
bad_case "--synth-prerender 0" 2 --synth-prerender 0
bad_case "--synth-prerender with the files source" 2 --synth-prerender 4 --source files \
  --set "files.left=l_%04d.png" --set "files.right=r_%04d.png"
for v in -1 x 5000; do
  timeout 60 "$LIVE" --headless --frames 1 --sms "$v" >b.out 2>b.err
  rc=$?
  check "--sms $v: exit 2, one line naming --sms" b.err \
    eval '[ $rc -eq 2 ] && [ "$(lines b.err)" -eq 1 ] && grep -q -- "--sms" b.err'
done
SMALL=(--set synth.width=160 --set synth.height=120 --set stereo.disparities=16)
# the matching options as stereo-match's flags set the same [stereo] keys as --set: the same
# disparities, bit for bit
ONE=(--headless --frames 3 --backend cpu --synth-prerender 1 --set synth.width=160
     --set synth.height=120)   # one frame of the scene, shown 3 times: the same pixels each run
timeout 60 "$LIVE" "${ONE[@]}" -d 32 --cost census --paths 4 --no-median --p1 10,10,12,12 \
  --window 7 --uniqueness 10 --no-subpixel --lr-tolerance 2 --screenshot flags.png >m1.out 2>m1.err
rc1=$?
timeout 60 "$LIVE" "${ONE[@]}" \
  --set stereo.disparities=32 --set stereo.cost=census --set stereo.paths=4 \
  --set stereo.median=false --set stereo.p1=10,10,12,12 --set stereo.window=7 \
  --set stereo.uniqueness=10 --set stereo.subpixel=false --set stereo.lr_tolerance=2 \
  --screenshot keys.png >m2.out 2>m2.err
rc2=$?
check "-d 32 --cost census --paths 4 --no-median --p1 LIST --window 7 --uniqueness 10 --no-subpixel --lr-tolerance 2: the result of the same --set keys" m1.err \
  eval '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s flags.png keys.png'
timeout 60 "$LIVE" "${ONE[@]}" -d 32 --screenshot d32.png >m3.out 2>m3.err
check "... and not the result of -d 32 alone (the flags changed the stage)" m3.err \
  eval '! cmp -s flags.png d32.png'
"$LIVE" --help >help.out 2>&1
"$ROOT/$B/stereo-match" --help >mhelp.out 2>&1
# (tests/test_options.py checks every row of the table in both)
check "--help lists stereo-match's matching options with its lines (-d, --no-lr)" help.out \
  eval 'grep -qxF -- "$(grep -- "^  -d, --disparities" mhelp.out)" help.out &&
        grep -qxF -- "$(grep -- "^      --no-lr " mhelp.out)" help.out &&
        grep -q -- "--no-lr  *no left-right consistency check" help.out'

timeout 60 "$LIVE" --headless --frames 3 --backend cpu --sms 16 "${SMALL[@]}" >g.out 2>g.err
rc=$?
check "--backend cpu --sms 16: ignored, 3 frames, no green context in the log" g.err \
  eval '[ $rc -eq 0 ] && grep -q "^stereo-live: 3 frames" g.out && ! grep -q "green context" g.err'
timeout 60 "$LIVE" --headless --frames 3 --backend cuda --sms 16 "${SMALL[@]}" >g.out 2>g.err
rc=$?
if [ $rc -eq 0 ]; then
  check "--backend cuda --sms 16 (a CUDA device): the log line gives the green context's SMs" \
    g.err grep -qE 'cuda backend on [0-9]+ SMs \(green context\)' g.err
else
  check "--backend cuda --sms 16 without a CUDA device: exit 1, the no-device message" g.err \
    eval '[ $rc -eq 1 ] && [ "$(lines g.err)" -eq 1 ] && grep -q "CUDA backend unavailable" g.err'
fi

# ---- 5. record, then replay with the files source -------------------------------------------
timeout 60 "$LIVE" --headless --frames 10 --backend cpu --record rec --set synth.width=160 \
  --set synth.height=120 --screenshot live.png >r.out 2>r.err
rc=$?
np=$(ls rec/left_*.png rec/right_*.png 2>/dev/null | wc -l)
ns=$(grep -vc '^#' rec/timestamps.txt 2>/dev/null)
check "record: 10 pairs, timestamps.txt and replay.ini (exit $rc, $np images, $ns stamps)" r.err \
  [ $rc -eq 0 -a "$np" -eq 20 -a "${ns:-0}" -eq 10 -a -s rec/replay.ini ]
check "record (generated scene): recorded = processed = 10, no record drops" r.out \
  grep -q '^stereo-live: recorded 10 pairs to rec (0 record drops; replay: ' r.out
timeout 60 "$LIVE" --headless --backend cpu --config rec/replay.ini --screenshot replay.png \
  --record rec2 >f.out 2>f.err
rc=$?
check "replay (files source, replay.ini): exit 0, 10 frames, 10 captured, 0 dropped" f.out \
  grep -q '^stereo-live: 10 frames, 10 captured, 0 dropped' f.out
check "replay: the last disparity equals the live run's bit for bit" f.err \
  cmp -s live.png replay.png
same=0
for f in rec/left_*.png rec/right_*.png; do cmp -s "$f" "rec2/${f#rec/}" && same=$((same + 1)); done
nrec2=$(ls rec2/*.png 2>/dev/null | wc -l)
check "replay recorded again (files source): recorded = processed = 10, the 20 images identical" \
  f.out [ "$same" -eq 20 -a "$nrec2" -eq 20 ] && \
  grep -q '^stereo-live: recorded 10 pairs to rec2 (0 record drops' f.out
# replay.ini keeps every setting that shaped the recording: the whole [stereo] section as used
# (non-default D, paths, cost, penalties, ...) and [calibration] (the pairs are recorded before
# rectification, so the replay rectifies them with the same maps, named by absolute path)
timeout 60 "$LIVE" --headless --frames 6 --backend cpu --record rec3 --set synth.width=64 \
  --set synth.height=48 --set stereo.disparities=16 --set stereo.paths=4 \
  --set stereo.cost=census --set stereo.p2=90 --set stereo.uniqueness=10 \
  --stats-json rec3.json --screenshot rec3.png >r3.out 2>r3.err
rc=$?
# its fps: the rate of the recorded timestamps (the generated scene's 30 on a quiet machine; the
# frames' capture times decide, so a busy machine may give 29 or 31)
want_fps=$(awk '!/^#/ { n++; t = $2 }
  END { if (n > 1 && t > 0) { f = int((n - 1) * 1e9 / t + 0.5); print f < 1 ? 1 : f } else print 1 }' \
  rec3/timestamps.txt 2>/dev/null)
check "record 64x48, D16, 4 paths, census: exit $rc, replay.ini with the whole [stereo] section (fps $want_fps)" \
  rec3/replay.ini eval '[ $rc -eq 0 ] && grep -qx "disparities = 16" rec3/replay.ini &&
    grep -qx "paths = 4" rec3/replay.ini && grep -qx "cost = census" rec3/replay.ini &&
    grep -qx "p2 = 90" rec3/replay.ini && grep -qx "uniqueness = 10" rec3/replay.ini &&
    grep -qx "backend = cpu" rec3/replay.ini && grep -qx "fps = $want_fps" rec3/replay.ini &&
    grep -q "^# written by stereo-live --record: 6 pairs of 64x48 grey images" rec3/replay.ini &&
    grep -qx "baselines = 1" rec3/replay.ini && grep -qx "combine = sides" rec3/replay.ini &&
    [ "$(sed -n "/^\[stereo\]/,/^$/p" rec3/replay.ini | grep -c " = ")" -eq 37 ]'
# block matching with the ad cost, and per-path penalties with weights, from --set (issue #11)
timeout 60 "$LIVE" --headless --frames 4 --backend cpu --record rec4 --set synth.width=64 \
  --set synth.height=48 --set stereo.disparities=16 --set stereo.method=bm --set stereo.cost=ad \
  --set stereo.block=5 --set stereo.paths=8 --set stereo.p2=90,90,60,60,90,90,90,90 \
  --set stereo.path_weights=1,1,2,2,1,1,1,1 --screenshot rec4.png >r4.out 2>r4.err
rc=$?
check "--set stereo.method=bm, cost=ad, block=5, p2 and path_weights lists: exit $rc, kept in replay.ini" \
  r4.err eval '[ $rc -eq 0 ] && grep -qx "method = bm" rec4/replay.ini &&
    grep -qx "cost = ad" rec4/replay.ini && grep -qx "block = 5" rec4/replay.ini &&
    grep -qx "p2 = 90,90,60,60,90,90,90,90" rec4/replay.ini &&
    grep -qx "path_weights = 1,1,2,2,1,1,1,1" rec4/replay.ini && [ -s rec4.png ]'
timeout 60 "$LIVE" --headless --frames 2 --backend cpu --set stereo.p1=8,8,8 >r5.out 2>r5.err
rc=$?
check "--set stereo.p1 with 3 values for 4 paths: exit 2, one line naming p1 and the lengths" r5.err \
  eval '[ $rc -eq 2 ] && [ "$(lines r5.err)" -eq 1 ] && grep -q "p1: 3 values for 4 paths" r5.err'
# the replay, with nothing but the file (and from another directory)
mkdir -p elsewhere
(cd elsewhere && timeout 60 "$LIVE" --config ../rec3/replay.ini --headless --frames 6 \
  --stats-json ../rep3.json --screenshot ../rep3.png >../p3.out 2>../p3.err)
rc=$?
check "replay of the D16 recording: exit $rc, files source at 64x48 with D 16, 4 paths, census" \
  p3.err eval '[ $rc -eq 0 ] &&
    grep -q "^stereo-live: files source, 64x48, D 16, cpu backend" p3.err &&
    grep -q "\"disparities\": 16," rep3.json && grep -q "\"paths\": 4," rep3.json &&
    grep -q "\"cost\": \"census\"," rep3.json && grep -q "\"width\": 64," rep3.json &&
    grep -q "^stereo-live: 6 frames, 6 captured, 0 dropped" p3.out'
check "replay of the D16 recording: the last disparity equals the recording run's bit for bit" \
  p3.err cmp -s rec3.png rep3.png
# the same through rectification maps: a calibration YAML of a 64x48 rig, by a relative path
cat >rig64.yml <<'YAML'
%YAML:1.0
---
image_width: 64
image_height: 48
M1: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 50., 0., 32., 0., 51., 24., 0., 0., 1. ]
D1: !!opencv-matrix
   rows: 1
   cols: 5
   dt: d
   data: [ -0.1, 0.02, 0.001, -0.002, 0.005 ]
M2: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 52., 0., 31., 0., 52., 25., 0., 0., 1. ]
D2: !!opencv-matrix
   rows: 1
   cols: 5
   dt: d
   data: [ -0.08, 0.01, 0., 0., 0. ]
R: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]
T: !!opencv-matrix
   rows: 3
   cols: 1
   dt: d
   data: [ -0.06, 0., 0.008 ]
R1: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]
R2: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]
P1: !!opencv-matrix
   rows: 3
   cols: 4
   dt: d
   data: [ 48., 0., 32., 0., 0., 48., 24., 0., 0., 0., 1., 0. ]
P2: !!opencv-matrix
   rows: 3
   cols: 4
   dt: d
   data: [ 48., 0., 32., -2.88, 0., 48., 24., 0., 0., 0., 1., 0. ]
Q: !!opencv-matrix
   rows: 4
   cols: 4
   dt: d
   data: [ 1., 0., 0., -32., 0., 1., 0., -24., 0., 0., 0., 48., 0., 0., 16.666666666666667, 0. ]
YAML
timeout 60 "$LIVE" --headless --frames 4 --backend cpu --record rec4m --set synth.width=64 \
  --set synth.height=48 --set stereo.disparities=16 --set calibration.maps=rig64.yml \
  --screenshot rec4.png >r4.out 2>r4.err
rc=$?
check "record through calibration maps: exit $rc, replay.ini names the maps by absolute path" \
  r4.err eval '[ $rc -eq 0 ] && grep -qx "maps = $(pwd -P)/rig64.yml" rec4m/replay.ini'
(cd elsewhere && timeout 60 "$LIVE" --config ../rec4m/replay.ini --headless \
  --screenshot ../rep4.png >../p4.out 2>../p4.err)
rc=$?
check "replay through the same maps (from another directory): exit $rc, the same last disparity" \
  p4.err eval '[ $rc -eq 0 ] && grep -q "^stereo-live: 4 frames, 4 captured" p4.out &&
    cmp -s rec4.png rep4.png'
# Outputs checked before the session (outpath.h): exit 2 and one line, not after the run (no
# frame processed: no stats line, no summary); the file named is left as it was, no temporary
# file behind.
cp rec/replay.ini replay.orig
out_case() { # NAME MESSAGE ARGS...
  local name=$1 says=$2; shift 2
  timeout 300 "$LIVE" --headless --frames 300 --backend cpu "${SMALL[@]}" "$@" >o.out 2>o.err
  local rc=$?
  if [ $rc -eq 2 ] && [ "$(lines o.err)" -eq 1 ] && grep -qF -- "$says" o.err &&
     ! grep -qE '^frame |^stereo-live: [0-9]+ frames' o.out && [ -z "$(find . -name '*.tmp.*')" ] &&
     cmp -s rec/replay.ini replay.orig; then
    ok "$name: exit 2 before the session: $(cat o.err)"
  else
    not_ok "$name: exit 2 before the session, one line '$says'" \
      "exit $rc; stdout: $(head -3 o.out); stderr: $(cat o.err); $(find . -name '*.tmp.*')"
  fi
}
out_case "--screenshot into a missing folder" \
  "stereo-live: --screenshot / run.screenshot '/nonexistent/x.png': cannot write into the folder '/nonexistent': No such file or directory" \
  --screenshot /nonexistent/x.png
out_case "run.screenshot (--set) into a missing folder" "'/nonexistent/x.png': cannot write into the folder" \
  --set run.screenshot=/nonexistent/x.png
out_case "--stats-json into a missing folder" \
  "stereo-live: --stats-json '/nonexistent/x.json': cannot write into the folder '/nonexistent'" \
  --stats-json /nonexistent/x.json
out_case "--stats-json = --screenshot (another spelling)" \
  "stereo-live: --stats-json 'o.png' is the same file as --screenshot / run.screenshot './o.png'; choose another name" \
  --screenshot ./o.png --stats-json o.png
out_case "--stats-json = --config" \
  "stereo-live: --stats-json 'rec/../rec/replay.ini' is the same file as --config 'rec/replay.ini'" \
  --config rec/replay.ini --stats-json rec/../rec/replay.ini
out_case "--screenshot = calibration.maps" \
  "--screenshot / run.screenshot 'rig.png' is the same file as calibration.maps 'rig.png'" \
  --set calibration.maps=rig.png --screenshot rig.png
out_case "--stats-json = the recording's timestamps.txt" \
  "--record / record.dir 'rec' would hold --stats-json 'rec/timestamps.txt'; it takes a new or empty folder of its own" \
  --record rec --stats-json rec/timestamps.txt
cp rec/replay.ini elsewhere.ini
out_case "--record into the folder the files source replays" \
  "stereo-live: --record / record.dir 'rec' would hold files.left '" \
  --config elsewhere.ini --record rec
ln -sf replay.orig link.json
out_case "--stats-json a symbolic link" "--stats-json 'link.json' is a symbolic link" \
  --stats-json link.json
check "--stats-json a symbolic link: its target unchanged" o.err cmp -s replay.orig rec/replay.ini
out_case "--stats-json a device (/dev/null)" \
  "--stats-json '/dev/null' exists and is not a regular file (a device, FIFO or socket)" \
  --stats-json /dev/null
out_case "--screenshot a directory" "--screenshot / run.screenshot 'rec' is a directory" \
  --screenshot rec
echo old >old.json
timeout 60 "$LIVE" --headless --frames 3 --backend cpu "${SMALL[@]}" --stats-json old.json \
  >o.out 2>o.err
rc=$?
check "--stats-json over an existing file: replaced whole, no temporary file left" o.err \
  eval '[ $rc -eq 0 ] && "$PY" -c "import json,sys; json.load(open(sys.argv[1]))" old.json && [ -z "$(find . -name "*.tmp.*")" ]'
if [ -x "$HL" ]; then
  timeout 30 "$HL" --frames 300 --backend cpu --stats-json /nonexistent/x.json >o.out 2>o.err
  rc=$?
  check "stereo-live-headless --stats-json into a missing folder: exit 2 at once, one line" o.err \
    eval '[ $rc -eq 2 ] && [ "$(lines o.err)" -eq 1 ] && grep -qF "'"'"'/nonexistent/x.json'"'"': cannot write into the folder" o.err'
fi
timeout 60 "$LIVE" --headless --backend cpu --source files --set "files.left=rec/left_%06d.png" \
  --set "files.right=rec/right_%06d.png" --set files.fps=0 --set files.loop=false \
  >f2.out 2>f2.err
check "files source from options, as fast as possible: 10 frames, none dropped" f2.out \
  grep -q '^stereo-live: 10 frames, 10 captured, 0 dropped' f2.out

# ---- 6. the recording writer thread ------------------------------------------------------------
# strace delays every rename (each PNG is written to a temporary file and renamed) by 0.2 s: the
# writer falls behind a stage that runs at 100 pairs per second (1.2 s, then the flush)
SLOW=(strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2
      -e inject=rename,renameat,renameat2:delay_exit=200000)
# "N frames" and "recorded R pairs ... (D record drops" of a run's stdout -> "N R D"
counts() {
  sed -n -e 's/^stereo-live: \([0-9]*\) frames, .*/\1/p' \
    -e 's/^stereo-live: recorded \([0-9]*\) pairs to .* (\([0-9]*\) record drops.*/\1 \2/p' "$1" |
    tr '\n' ' '
}
if command -v strace >/dev/null 2>&1 && "${SLOW[@]}" true 2>/dev/null; then
  rm -rf slow
  timeout 60 "${SLOW[@]}" "$LIVE" --headless --frames 120 --backend cpu --record slow \
    --set synth.width=64 --set synth.height=48 --set stereo.disparities=16 --set synth.fps=100 \
    >sl.out 2>sl.err
  rc=$?
  read -r np nr nd <<<"$(counts sl.out)"
  ni=$(ls slow/left_*.png 2>/dev/null | wc -l)
  ns=$(grep -vc '^#' slow/timestamps.txt 2>/dev/null)
  check "slow writer, live source: exit $rc, $np processed = $nr recorded + $nd record drops (> 0), $ni pairs and $ns stamps on disk" \
    sl.out [ $rc -eq 0 -a "${np:-0}" -eq 120 -a $((${nr:-0} + ${nd:-0})) -eq 120 -a "${nd:-0}" -gt 0 \
    -a "${ni:-0}" -eq "${nr:--1}" -a "${ns:-0}" -eq "${nr:--1}" ]
  check "slow writer: the stats line (once a second) and the summary count the record drops" \
    sl.out grep -qE '\| dropped [0-9]+, recorded [0-9]+, record drops [1-9][0-9]* \|' sl.out &&
    grep -qE '^stereo-live: .* fps .*, 0 dropped, recorded [0-9]+, record drops [1-9][0-9]*$' sl.out
  rm -rf slowf
  timeout 60 "${SLOW[@]}" "$LIVE" --headless --backend cpu --config rec/replay.ini \
    --set files.fps=0 --record slowf >sf.out 2>sf.err
  rc=$?
  read -r np nr nd <<<"$(counts sf.out)"
  check "slow writer, files source: exit $rc, waits for the writer: $np processed = $nr recorded, $nd record drops" \
    sf.out [ $rc -eq 0 -a "${np:-0}" -eq 10 -a "${nr:-0}" -eq 10 -a "${nd:-1}" -eq 0 ]
else
  skip "slow writer, live source: record drops counted" "strace cannot trace here"
  skip "slow writer: the stats line counts the record drops" "strace cannot trace here"
  skip "slow writer, files source: no record drops" "strace cannot trace here"
fi
rm -rf gone gone.removed
"$LIVE" --headless --backend cpu --record gone --set synth.width=64 --set synth.height=48 \
  --set stereo.disparities=16 >g.out 2>g.err &
pid=$!
wait_for 60 test -e gone/left_000003.png
# renamed away in one step: a plain rm -rf races the writer (a file created between its unlinks
# and its rmdir leaves the folder in place, ENOTEMPTY)
mv gone gone.removed && rm -rf gone.removed
if ! ends_within "$pid" 60; then
  not_ok "recording folder removed while running: the run ends by itself" "still running after 60 s"
else
  wait "$pid"
  rc=$?
  errs=$(grep -v ' source, ' g.err)
  if [ $rc -eq 1 ] && [ "$(grep -c '' <<<"$errs")" -eq 1 ] &&
     grep -qE '^stereo-live: stopped: /.*/gone/(left|right)_[0-9]{6}\.png: ' <<<"$errs"; then
    ok "recording folder removed while running: exit 1, one line: $errs"
  else
    not_ok "recording folder removed while running: exit 1, one line naming the file" \
      "exit $rc; stderr: $(cat g.err)"
  fi
fi

# ---- 7. the summary: --stats-json, --synth-prerender ----------------------------------------
timeout 60 "$LIVE" --headless --frames 24 --backend cpu --set synth.width=160 \
  --set synth.height=120 --set stereo.disparities=16 --set synth.fps=0 --synth-prerender 4 \
  --stats-json st.json --screenshot pre.png >st.out 2>st.err
rc=$?
check "--synth-prerender 4, unpaced: exit $rc, 24 frames, nothing dropped" st.err \
  [ $rc -eq 0 ] && grep -q '^stereo-live: 24 frames, [0-9]* captured, 0 dropped' st.out
t=$(sed -n 's/.*screenshot .*scene t \([0-9.]*\) s.*/\1/p' st.err)
check "--synth-prerender 4: the frame shown is one of the ring's (scene t $t s = k/30, k < 4)" \
  st.err grep -qE '^(0\.000|0\.033|0\.067|0\.100)$' <<<"$t"
check "summary line: fps, frames, wall time, stage and latency median / p95 / max, drops" st.out \
  grep -qE '^stereo-live: [0-9.]+ fps \(24 frames, [0-9.]+ s wall\), stage ms median [0-9.]+ p95 [0-9.]+, latency ms median [0-9.]+ p95 [0-9.]+ max [0-9.]+ \([0-9]+ shown\), 0 dropped$' st.out
"$PY" - st.json >js.out 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
print(j)
assert j["program"] == "stereo-live" and j["backend"] == "cpu" and j["synth_prerender"] == 4
assert (j["width"], j["height"], j["disparities"], j["paths"]) == (160, 120, 16, 4)
assert j["frames"] == 24 and j["dropped"] == 0 and 0 < j["shown"] <= 24 and j["error"] == ""
assert j["fps"] > 0 and j["wall_s"] > 0
for k in ("stage_ms", "latency_ms"):
    m = j[k]
    assert 0 < m["median"] <= m["p95"] <= m["max"], (k, m)
assert j["latency_ms"]["median"] >= 0.9 * j["stage_ms"]["median"]
EOF
rc=$?
check "--stats-json: frames, fps, stage and latency percentiles in order" js.out [ $rc -eq 0 ]
# cost mi: warm frames after the first (the hierarchy once), or the hierarchy on every frame
for warm in 1 0; do
  timeout 60 "$LIVE" --headless --frames 12 --backend cpu --set synth.width=160 \
    --set synth.height=120 --set stereo.disparities=16 --set synth.fps=0 --synth-prerender 4 \
    --set stereo.cost=mi --set stereo.mi_warm=$warm --stats-json mi$warm.json \
    >mi$warm.out 2>mi$warm.err
  rc=$?
  want=$([ $warm = 1 ] && echo "1 11" || echo "12 0")
  got=$("$PY" -c 'import json,sys; m=json.load(open(sys.argv[1]))["mi"]; print(m["restarts"], m["warm_frames"]); assert m["warm"] == int(sys.argv[2]) and m["restart_ms_mean"] > m["hierarchy_ms_mean"] > 0' mi$warm.json $warm 2>&1)
  check "cost mi, mi_warm $warm: exit $rc, restarts and warm frames $got (want $want), the summary line" \
    mi$warm.out [ $rc -eq 0 ] && [ "$got" = "$want" ] &&
    grep -qE '^stereo-live: mi: [0-9]+ restarts \(hierarchy\) at [0-9.]+ ms mean, of which the hierarchy [0-9.]+ ms; [0-9]+ warm frames' mi$warm.out
done
timeout 60 "$LIVE" --headless --frames 45 --backend cpu --set synth.width=160 \
  --set synth.height=120 --set stereo.disparities=16 --set stereo.cost=mi >mi.out 2>mi.err
check "cost mi: the stats line (paced at 30 fps, 1.5 s) says MI: warm, 1 restart" mi.out \
  grep -q "| MI: warm, 1 restart" mi.out

# ---- 8. the CUDA-and-libc-only build, CPU backend -------------------------------------------
if [ -x "$HL" ]; then
  timeout 60 "$HL" --frames 20 --backend cpu --set synth.width=160 --set synth.height=120 \
    --set stereo.disparities=16 --set synth.fps=0 --synth-prerender 8 --stats-json hl.json \
    >hl.out 2>hl.err
  rc=$?
  check "stereo-live-headless --backend cpu: exit $rc, 20 frames, the summary and its JSON" hl.err \
    [ $rc -eq 0 ] && grep -q '^stereo-live: 20 frames, [0-9]* captured, 0 dropped' hl.out &&
    grep -q '^stereo-live: [0-9.]* fps (20 frames' hl.out &&
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["program"]=="stereo-live-headless" and j["frames"]==20' hl.json
  check "stereo-live-headless: says it is the CUDA-and-libc-only build" hl.err \
    grep -q 'headless (CUDA and libc only build)' hl.err
  nb_case() { # NAME ARGS...: exit 2, one line saying "not built in this binary", nothing made
    local name=$1; shift
    rm -rf never never.png
    timeout 20 "$HL" "$@" >b.out 2>b.err
    local rc=$?
    if [ $rc -eq 2 ] && [ "$(lines b.err)" -eq 1 ] && grep -q 'not built in this binary' b.err &&
       [ ! -e never ] && [ ! -e never.png ]; then
      ok "stereo-live-headless $name: exit 2: $(cat b.err)"
    else
      not_ok "stereo-live-headless $name: exit 2, one 'not built in this binary' line" \
        "exit $rc; stderr: $(cat b.err)"
    fi
  }
  nb_case "--record" --record never
  nb_case "--screenshot" --screenshot never.png
  nb_case "--config" --config rec/replay.ini
  nb_case "--source files" --source files --set "files.left=rec/left_%06d.png" \
    --set "files.right=rec/right_%06d.png"
  nb_case "--source v4l2" --source v4l2 --set camera.left=/dev/video0 --set camera.right=/dev/video1
  nb_case "--source sbs" --source sbs --set camera.device=/dev/video0
  nb_case "calibration maps" --set calibration.maps=rig.maps
  nb_case "--fullscreen" --fullscreen
  nb_case "--list-cameras" --list-cameras
else
  skip "stereo-live-headless" "$HL is not built"
fi
if [ -x "$BENCH" ]; then
  timeout 60 "$BENCH" --async --backend cpu --size 160x120 --disparities 16 --runs 20 \
    --json bench.json >be.out 2>be.err
  rc=$?
  check "stereo-bench --async --backend cpu: exit $rc, fps and stage ms, JSON" be.err [ $rc -eq 0 ] &&
    grep -qE '^async +160x120 +D16 +8 paths rank +cpu backend: 20 frames, +[0-9.]+ fps, stage ms median' be.out &&
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["frames"]==20 and j["fps"]>0 and j["stage_ms"]["median"]>0' bench.json
  timeout 60 "$BENCH" --async --backend cpu --size 160x120 --disparities 16 --runs 20 \
    --json /nonexistent/bench.json >be.out 2>be.err
  rc=$?
  check "stereo-bench --json into a missing folder: exit 2 before the runs, one line" be.err \
    eval '[ $rc -eq 2 ] && [ ! -s be.out ] && [ "$(cat be.err)" = "stereo-bench: --json '"'"'/nonexistent/bench.json'"'"': cannot write into the folder '"'"'/nonexistent'"'"': No such file or directory" ]'
else
  skip "stereo-bench --async --backend cpu" "$BENCH is not built (./configure without CUDA)"
  skip "stereo-bench --json into a missing folder" "$BENCH is not built (./configure without CUDA)"
fi

# ---- 9. leaks -------------------------------------------------------------------------------
if command -v valgrind >/dev/null 2>&1; then
  VG=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99)
  timeout 600 "${VG[@]}" "$LIVE" --headless --frames 300 --backend cpu --set synth.width=64 \
    --set synth.height=48 --set synth.fps=100 --set stereo.disparities=16 --set stereo.paths=4 \
    --set stereo.threads=1 >v.out 2>v.err
  rc=$?
  check "valgrind: 300 headless frames at 64x48, no definite leak, no error (exit $rc)" v.err \
    [ $rc -eq 0 ]
  rm -rf vrec
  timeout 600 "${VG[@]}" "$LIVE" --headless --frames 5 --backend cpu --set synth.width=64 \
    --set synth.height=48 --set stereo.disparities=16 --record vrec >v2.out 2>v2.err &&
    timeout 600 "${VG[@]}" "$LIVE" --headless --config vrec/replay.ini --backend cpu \
      --set stereo.disparities=16 --set files.fps=0 >v3.out 2>v3.err
  rc=$?
  cat v3.err >>v2.err 2>/dev/null
  check "valgrind: record and replay, no definite leak, no error (exit $rc)" v2.err [ $rc -eq 0 ]
  if [ -x "$HL" ]; then
    timeout 600 "${VG[@]}" "$HL" --frames 100 --backend cpu --set synth.width=64 \
      --set synth.height=48 --set synth.fps=0 --set stereo.disparities=16 --synth-prerender 8 \
      --stats-json vh.json >v4.out 2>v4.err
    rc=$?
    check "valgrind: stereo-live-headless, 100 pre-rendered frames, no definite leak (exit $rc)" \
      v4.err [ $rc -eq 0 ]
  fi
else
  skip "valgrind: 300 headless frames, no definite leak" "valgrind not installed"
  skip "valgrind: record and replay, no definite leak" "valgrind not installed"
fi

# ---- 10. --list-cameras on the host (tests/test_v4l2_vivid.sh lists vivid's devices) ---------
mkdir -p nodev fakedev/v4l/by-id
: >fakedev/video0
ln -s /dev/null fakedev/video3
mkfifo fakedev/video7
mkdir fakedev/video12
: >fakedev/videox
: >fakedev/video
ln -s ../../video3 fakedev/v4l/by-id/usb-Fake_Camera-video-index0
# list_case NAME WANT-EXIT WANT-STDOUT WANT-STDERR ARGS...: exit status and both outputs exactly
list_case() {
  local name=$1 want_rc=$2 want_out=$3 want_err=$4; shift 4
  timeout 10 env "$@" "$LIVE" --list-cameras >l.out 2>l.err
  local rc=$?
  if [ $rc -eq "$want_rc" ] && [ "$(cat l.out)" = "$want_out" ] && [ "$(cat l.err)" = "$want_err" ]; then
    ok "--list-cameras $name: exit $rc${want_err:+: $want_err}"
  else
    not_ok "--list-cameras $name: exit $want_rc and the expected output" \
      "exit $rc; stdout: $(cat l.out)"$'\n'"stderr: $(cat l.err)"$'\n'"want stdout: $want_out"$'\n'"want stderr: $want_err"
  fi
}
list_case "in an empty directory" 1 "" \
  "stereo-live: --list-cameras: no V4L2 devices (no video* in nodev): is a camera connected? (lsusb shows whether the system sees it)" \
  STEREO_DEV_DIR=nodev
if ! ls /dev/video* >/dev/null 2>&1; then
  list_case "on this machine (no /dev/video*)" 1 "" \
    "stereo-live: --list-cameras: no V4L2 devices (no video* in /dev): is a camera connected? (lsusb shows whether the system sees it)"
else
  skip "--list-cameras on this machine without cameras" "it has /dev/video* nodes"
fi
T=$'\t'
list_case "over nodes that are no cameras (sorted by number, each with why, links, no hang)" 1 \
  "Not listed:
$T""fakedev/video0: not a device node (a regular file)
$T""fakedev/video3: not a V4L2 device (VIDIOC_QUERYCAP: Inappropriate ioctl for device)
$T    fakedev/v4l/by-id/usb-Fake_Camera-video-index0
$T""fakedev/video7: not a device node (a FIFO)
$T""fakedev/video12: not a device node (a directory)" \
  "stereo-live: --list-cameras: none of the 4 video nodes in fakedev is a camera the app can capture from (see above)" \
  STEREO_DEV_DIR=fakedev
list_case "in a missing directory" 1 "" \
  "stereo-live: --list-cameras: missing: cannot list the devices: No such file or directory" \
  STEREO_DEV_DIR=missing
for args in "--frames:--frames 3 --list-cameras" "--set:--list-cameras --set camera.left=/dev/video0"; do
  what=${args%%:*} args=${args#*:}
  # shellcheck disable=SC2086
  "$LIVE" $args >l.out 2>l.err
  rc=$?
  check "--list-cameras with another option ($args): exit 2, one line naming $what" l.err \
    [ $rc -eq 2 ] && [ ! -s l.out ] && [ "$(cat l.err)" = "stereo-live: --list-cameras: lists the cameras and exits; $what does not go with it" ]
done
STEREO_DEV_DIR=fakedev "$LIVE" --list-cameras >/dev/full 2>l.err
rc=$?
check "--list-cameras into a full disk (/dev/full): exit 1, one line" l.err \
  [ $rc -eq 1 ] && [ "$(cat l.err)" = "stereo-live: --list-cameras: cannot write the list: No space left on device" ]
"$LIVE" --help >h.out
check "--help describes --list-cameras and STEREO_DEV_DIR" h.out \
  grep -q -- '--list-cameras  *list the V4L2 devices' h.out && grep -q STEREO_DEV_DIR h.out

# ---- 11. depth: key p, --record-depth, the camera options ----------------------------------
# key p (pressed through STEREO_LIVE_KEYS): the shown frame's PLY and depth PNG in the cwd; the
# PNG's millimetres are the PLY's Z rounded (hal/depth.h), one point per pixel with a depth
rm -f stereo-live-*.ply stereo-live-*-depth.png
STEREO_LIVE_KEYS=p timeout 60 "${WINDOW[@]}" "$LIVE" --frames 8 --backend cpu --focal 500 \
  --baseline 0.1 >p.out 2>p.err
rc=$?
ply=$(ls stereo-live-*-1.ply 2>/dev/null | head -1) png=$(ls stereo-live-*-1-depth.png 2>/dev/null | head -1)
if [ $rc -eq 0 ] && [ -n "$ply" ] && [ -n "$png" ] && grep -q "saved $ply (.* points) and $png" p.err; then
  "$PY" - "$ply" "$png" >pc.out 2>&1 <<'EOF'
import sys, cv2, numpy as np
data = open(sys.argv[1], "rb").read()
end = data.index(b"end_header\n") + 11
head = data[:end].decode().splitlines()
n = int([l for l in head if l.startswith("element vertex")][0].split()[2])
pts = np.frombuffer(data[end:], np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"),
                                           ("r", "u1"), ("g", "u1"), ("b", "u1")]))
mm = cv2.imread(sys.argv[2], cv2.IMREAD_UNCHANGED)
assert len(pts) == n and mm.dtype == np.uint16 and mm.shape == (480, 640), (len(pts), n)
z = pts["z"].astype(np.float64)
x = np.rint(pts["x"] * 500 / z + 319.5).astype(int)
y = np.rint(pts["y"] * 500 / z + 239.5).astype(int)
want = np.floor(z * 1000 + 0.5)
got = mm[y, x].astype(np.float64)
near = want <= 65535
exact = (got[near] == want[near]).mean()
print(f"{n} points, {int((mm > 0).sum())} pixels with mm; mm == round(Z * 1000) at {exact:.5f}")
assert n > 200000 and (mm > 0).sum() == near.sum() and exact > 0.999
assert np.all(np.abs(got[near] - want[near]) <= 1) and np.all(got[~near] == 0)
assert np.all(pts["r"] == pts["g"]) and np.all(pts["g"] == pts["b"])  # grey scene: r = g = b
EOF
  check "key p: the frame's PLY and depth PNG (mm = the PLY's Z, row-major points, grey r=g=b)" \
    pc.out [ $? -eq 0 ]
else
  not_ok "key p: the frame's PLY and depth PNG" "$(cat p.err; ls)"
fi
rm -f stereo-live-*.ply stereo-live-*-depth.png
STEREO_LIVE_KEYS=p timeout 60 "${WINDOW[@]}" "$LIVE" --frames 8 --backend cpu >p.out 2>p.err
rc=$?
check "key p without a camera: nothing saved, the log (and the screen) say why" p.err \
  [ $rc -eq 0 ] && grep -q 'p: nothing saved: depth needs the camera' p.err && \
  ! ls stereo-live-*.ply >/dev/null 2>&1
# --record-depth: depth_NNNNNN.png beside each pair, equal to stereo-match --depth of that pair
rm -rf recd
timeout 60 "$LIVE" --headless --frames 4 --backend cpu --set synth.width=160 \
  --set synth.height=120 --set stereo.disparities=32 --record recd --record-depth --focal 500 \
  --baseline 0.1 >rd.out 2>rd.err
rc=$?
same=0
for i in 0 1 2 3; do
  f=$(printf '%06d' $i)
  "$ROOT/$B/stereo-match" -q -d 32 --backend cpu "recd/left_$f.png" "recd/right_$f.png" m.pfm \
    --depth m.png --focal 500 --baseline 0.1 2>>rd.err &&
    "$PY" -c 'import sys, cv2, numpy as np; a, b = (cv2.imread(p, -1) for p in sys.argv[1:]); sys.exit(not (a is not None and b is not None and a.dtype == np.uint16 and np.array_equal(a, b)))' \
      m.png "recd/depth_$f.png" && same=$((same + 1))
done
check "--record-depth: 4 pairs, each depth_NNNNNN.png = stereo-match --depth of the pair" rd.err \
  [ $rc -eq 0 ] && [ $same -eq 4 ] && [ ! -e recd/depth_000004.png ] && \
  grep -q '^focal = 500$' recd/replay.ini && grep -q '^baseline = 0.1$' recd/replay.ini
# keys k, o, n, i, t: the post-filters toggled while running (one key per new frame); the last
# recorded pair's depth is then stereo-match's with the same filters on (speckle removal at
# POSTFILTER_SPECKLE_ON = 200 px, region voting, interpolation, hole filling), and the log says
# what each key did
rm -rf reck
STEREO_LIVE_KEYS=koni timeout 60 "${WINDOW[@]}" "$LIVE" --frames 12 --backend cpu \
  --set synth.width=160 --set synth.height=120 --set stereo.disparities=32 --record reck \
  --record-depth --focal 500 --baseline 0.1 >k.out 2>k.err
rc=$?
"$ROOT/$B/stereo-match" -q -d 32 --backend cpu --speckle-size 200 --vote --interp --fill \
  reck/left_000011.png reck/right_000011.png m.pfm --depth mk.png --focal 500 --baseline 0.1 \
  2>>k.err
check "keys k, o, n, i: speckle removal, region voting, interpolation and hole filling on while running; the last pair's depth is stereo-match --speckle-size 200 --vote --interp --fill's" k.err \
  [ $rc -eq 0 ] && grep -q 'speckle removal on (regions under 200 px, steps up to 16/16 px)' k.err && \
  grep -q 'region voting on' k.err && grep -q 'occlusion and mismatch interpolation on' k.err && \
  grep -q 'hole filling on' k.err && "$PY" -c 'import sys, cv2, numpy as np; a, b = (cv2.imread(p, -1) for p in sys.argv[1:]); sys.exit(not (a is not None and b is not None and np.array_equal(a, b)))' \
    mk.png reck/depth_000011.png
STEREO_LIVE_KEYS=ttk timeout 60 "${WINDOW[@]}" "$LIVE" --frames 6 --backend cpu \
  --set synth.width=160 --set synth.height=120 --set stereo.disparities=32 \
  --set stereo.speckle_size=50 >t.out 2>t.err
rc=$?
check "keys t, t, k: temporal filter on, off; k turns [stereo] speckle_size 50 off" t.err \
  [ $rc -eq 0 ] && grep -q 'temporal filter on (starts afresh)' t.err && \
  grep -q 'temporal filter off' t.err && grep -q 'speckle removal off' t.err
depth_bad() { # name, expected stderr (exact), args...
  local name=$1 want=$2; shift 2
  "$LIVE" --headless --frames 1 "$@" >db.out 2>db.err
  local rc=$?
  check "$name: exit 2, one line" db.err [ $rc -eq 2 ] && [ "$(cat db.err)" = "stereo-live: $want" ]
}
depth_bad "--record-depth without --record" \
  "depth: [record] depth records into [record] dir: give --record DIR" --record-depth
depth_bad "--record-depth without a camera" \
  "depth: [record] depth needs the camera: [calibration] maps (a calibration) or focal and baseline (--focal PX --baseline M)" \
  --record recx --record-depth
depth_bad "--focal without --baseline" \
  "baseline: give [calibration] focal and baseline together (the camera for depth), or neither" \
  --focal 500
depth_bad "--focal -1" "--focal: '-1' is not a number in 0..10000000 (0: not given)" \
  --focal -1 --baseline 0.1
depth_bad "--center x" "--center: 'x' is not CX,CY: two numbers in pixels (or empty: the image centre)" \
  --focal 500 --baseline 0.1 --center x
[ ! -e recx ] || not_ok "--record-depth without a camera created its folder"
if [ -x "$HL" ]; then
  "$HL" --focal 500 --baseline 0.1 >db.out 2>db.err
  rc=$?
  check "stereo-live-headless (libc only): --focal refused as not built in, one line" db.err \
    [ $rc -eq 2 ] && grep -q '^stereo-live-headless: not built in this binary: calibration.focal' db.err
fi

echo "1..$n"
