#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_gst_outputs.sh — stereo-live's GStreamer outputs (app/outputs/output_gst.c) where
# they fail or fall behind, as TAP:
#   1. every failure path, 10 runs each under a hang-only limit: two rtsp:// outputs on one port
#      (the second cannot listen: exit 2, never a hang while the first's server thread starts),
#      gst://appsrc ! nosuchelement, a pipeline that fails at start (exit 2, GStreamer's
#      message), one that fails once playing (reported once, the run goes on: exit 0), a queue
#      without any limit (refused: exit 2)
#   2. files a gst:// pipeline writes, checked before any work (exit 2, one line naming both
#      files, nothing written): a filesink over an input frame or over the configuration, a
#      multifilesink pattern that makes an input frame's name, or a hard link of one
#   3. a slow sink (identity sleep-time=1000000: 1 fps, below any rate the app keeps on a
#      busy machine) behind a queue: memory stays bounded (peak RSS
#      within 2x a plain appsrc ! fakesink run), the output drops and counts (drops > 0, sent +
#      drops = frames), and the frames a leaky queue threw away or the end found still queued
#      are among the drops
# Waits are on the processes (timeout catches a hang only). Skips without GStreamer. Run from the
# repo root (tests/run does). Env: STEREO_BUILD (build). About 60 s on 2 cores.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
LIVE=$PWD/$B/stereo-live
case $B in /*) LIVE=$B/stereo-live ;; esac
[ -x "$LIVE" ] || { echo "Bail out! $LIVE is not built (ninja)"; exit 1; }
. tests/tap.sh
W=$(mktemp -d "${TMPDIR:-/tmp}/test_gst_outputs.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
TOTAL=13
CONF=$OLDPWD/$B/config.ninja
case $B in /*) CONF=$B/config.ninja ;; esac
if ! grep -q 'STEREO_HAVE_GST=1' "$CONF" 2>/dev/null; then
  for i in $(seq $TOTAL); do skip "GStreamer outputs" "stereo-live is built without GStreamer"; done
  echo "1..$n"; exit 0
fi
SCENE=(--input 'synth://?width=64&height=48' -d 16 --backend cpu --headless)
count() { grep -c -- "$2" "$1"; }

# runs N LIMIT STATUS PATTERN ARGS...: the app N times under a hang-only limit; prints
# "hangs wrong" (wrong: a status other than STATUS, or PATTERN not on exactly one line)
runs() {
  local n=$1 limit=$2 want=$3 pat=$4 hangs=0 wrong=0 rc
  shift 4
  for i in $(seq "$n"); do
    timeout -k 5 "$limit" "$LIVE" "$@" >r.out 2>r.err
    rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then hangs=$((hangs + 1))
    elif [ "$rc" != "$want" ] || [ "$(count r.err "$pat")" != 1 ]; then wrong=$((wrong + 1)); cp r.err wrong.err
    fi
  done
  echo "$hangs $wrong"
}
diag() { [ -f wrong.err ] && tail -5 wrong.err; rm -f wrong.err; }

# ---- 1. failure paths, 10 runs each -----------------------------------------------------------
PORT=$((20000 + $$ % 20000))
if grep -q 'STEREO_HAVE_RTSP_SERVER=1' "$CONF" 2>/dev/null; then
  read -r h w <<<"$(runs 10 60 2 "cannot listen on port $PORT" "${SCENE[@]}" --frames 5 \
    --output "rtsp://@:$PORT/a" --output "rtsp://@:$PORT/b")"
  check "two rtsp:// on one port: 10 runs, each exit 2 'cannot listen' ($h hangs, $w wrong)" /dev/null test "$h$w" = 00
  diag
else
  skip "two rtsp:// on one port" "built without gst-rtsp-server"
fi
read -r h w <<<"$(runs 10 60 2 "'gst://appsrc ! nosuchelement': no element \"nosuchelement\"" \
  "${SCENE[@]}" --frames 5 --output 'gst://appsrc ! nosuchelement')"
check "gst://appsrc ! nosuchelement: 10 runs, each exit 2 naming it ($h hangs, $w wrong)" /dev/null test "$h$w" = 00
diag
read -r h w <<<"$(runs 10 60 2 "state-error=ready-to-paused': fakesink0: .*state change failed" \
  "${SCENE[@]}" --frames 5 --output 'gst://appsrc ! fakesink state-error=ready-to-paused')"
check "a pipeline that fails at start: 10 runs, each exit 2 with GStreamer's message ($h hangs, $w wrong)" /dev/null test "$h$w" = 00
diag
read -r h w <<<"$(runs 10 60 0 "state-error=paused-to-playing: .*the run goes on" \
  "${SCENE[@]}" --frames 5 --output 'gst://appsrc ! fakesink state-error=paused-to-playing')"
check "a pipeline that fails once playing: 10 runs, each reported once, exit 0 ($h hangs, $w wrong)" /dev/null test "$h$w" = 00
diag
read -r h w <<<"$(runs 10 60 2 "queue0 has no limit" "${SCENE[@]}" --frames 5 \
  --output 'gst://appsrc ! queue max-size-buffers=0 max-size-time=0 max-size-bytes=0 ! fakesink')"
check "a queue without any limit: 10 runs, each refused, exit 2 ($h hangs, $w wrong)" /dev/null test "$h$w" = 00
diag

# ---- 2. the files a gst:// pipeline writes -----------------------------------------------------
mkdir -p in
printf 'P5\n64 48\n255\n' >hdr
for i in 0 1 2 3; do
  for s in left right; do { cat hdr; head -c 3072 /dev/urandom; } >"in/${s}_00000$i.pgm"; done
done
printf '[display]\nheadless = true\n' >replay.ini
cp in/right_000002.pgm keep.pgm
cp replay.ini keep.ini
SEQ=(--headless -d 16 --backend cpu --frames 3 --left "file://$W/in/left_%06d.pgm" --right "file://$W/in/right_%06d.pgm")
refused() { # NAME PATTERN ARGS...
  local name=$1 pat=$2
  shift 2
  timeout 60 "$LIVE" "$@" >f.out 2>f.err
  local rc=$?
  check "$name: exit 2, one line naming both files" f.err \
    test "$rc" = 2 -a "$(lines f.err)" = 1 -a "$(count f.err "$pat")" = 1
}
refused "gst:// filesink over an input frame" \
  "^stereo-live: --output filesink 'in/right_000002.pgm' is the same file as source.right (frame 2) '$W/in/right_000002.pgm'" \
  "${SEQ[@]}" --output 'gst://appsrc ! videoconvert ! filesink location=in/right_000002.pgm'
refused "gst:// filesink (quoted) over the configuration" \
  "^stereo-live: --output filesink 'replay.ini' is the same file as --config 'replay.ini'" \
  --config replay.ini "${SCENE[@]}" --frames 3 --output 'gst://appsrc ! videoconvert ! filesink location="replay.ini"'
refused "gst:// multifilesink pattern making an input frame's name" \
  "^stereo-live: .*--output multifilesink 'in/right_.*source.right (frame [0-9])" \
  "${SEQ[@]}" --output 'gst://appsrc ! videoconvert ! multifilesink location=in/right_%06d.pgm'
ln in/left_000001.pgm in/copy_7.pgm
refused "gst:// splitmuxsink pattern making the name of a hard link of an input" \
  "^stereo-live: frame 7 of --output splitmuxsink 'in/copy_%d.pgm' would replace source.left (frame 1)" \
  "${SEQ[@]}" --output 'gst://appsrc ! videoconvert ! splitmuxsink location=in/copy_%d.pgm'
unchanged() { cmp -s keep.pgm in/right_000002.pgm && cmp -s keep.ini replay.ini && [ ! -e in/right_000000.pgm.tmp ]; }
check "the refused runs wrote nothing: the input frame and the configuration as they were" /dev/null unchanged

# ---- 3. a slow sink: bounded memory, every frame counted --------------------------------------
BIG=(--input 'synth://?width=320&height=240' -d 32 --backend cpu --headless --frames 150)
rss_run() { # NAME OUTPUT -> NAME.out, NAME.rss (peak KB)
  timeout 300 /usr/bin/time -f '%M' -o "$1.rss" "$LIVE" "${BIG[@]}" --output "$2" >"$1.out" 2>&1
}
if [ -x /usr/bin/time ]; then
  rss_run plain 'gst://appsrc ! fakesink'
  rss_run slow 'gst://appsrc ! queue ! identity sleep-time=1000000 ! fakesink'
  rss_run leaky 'gst://appsrc ! queue leaky=downstream max-size-buffers=4 ! identity sleep-time=1000000 ! fakesink'
  sd() { sed -n 's/.*output gst:.*: \([0-9]*\) sent, \([0-9]*\) drops.*/\1 \2/p' "$1"; }
  read -r ps pd <<<"$(sd plain.out)"; read -r ss sdr <<<"$(sd slow.out)"; read -r ls ld <<<"$(sd leaky.out)"
  p=$(cat plain.rss 2>/dev/null || echo 0); s=$(cat slow.rss 2>/dev/null || echo 0); l=$(cat leaky.rss 2>/dev/null || echo 0)
  check "a slow sink behind a queue: peak RSS $s KB, leaky $l KB, within 2x plain $p KB" slow.out \
    test "$p" -gt 0 -a "$s" -le $((2 * p)) -a "$l" -le $((2 * p))
  check "slow sink: drops counted (sent $ss, drops $sdr; leaky queue: $ls, $ld), sent + drops = 150" slow.out \
    test "${sdr:-0}" -gt 0 -a "$((${ss:-0} + ${sdr:-0}))" = 150 -a "${ld:-0}" -gt 0 -a "$((${ls:-0} + ${ld:-0}))" = 150
  check "the summary names what the queue leaked and what was queued at the end" slow.out \
    test "$(count leaky.out '^stereo-live: output .*, [1-9][0-9]* of them leaked by its queues')" = 1 -a \
    "$(count slow.out '^stereo-live: output .*, [1-9][0-9]* of them still queued at the end')" = 1
else
  for t in "bounded RSS" "drops counted" "summary"; do skip "$t" "no /usr/bin/time"; done
fi
echo "1..$n"
