#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_hostile.sh — hostile inputs against stereo-live and stereo-match, as TAP: each is
# refused up front with one clear line, or handled without loss, and nothing hangs.
#
#   1. outputs against inputs (one registry per run, outpath.h): --stats-json onto the video of
#      --input, --screenshot onto a frame of a file:// sequence, --stats-json onto a frame of a
#      --view sequence, --screenshot onto display.font: exit 2, the input untouched
#      and every frame a file:// output may write (its pattern over every frame number): onto
#      the --config being read (directly or through a link), onto --stats-json or --screenshot,
#      onto another output's frames: exit 2, nothing written
#   2. recording takes a new or empty folder: a folder holding a longer recording, the folder a
#      gst:// multifilesrc reads, --screenshot into the recording folder: exit 2, nothing written
#   3. replay.ini reads back: the generated scene at fps 0 records a rate within 1..1000 and the
#      replay runs; a ';' in the folder name replays; ' ;' and a 200-character name are refused
#      before the session
#   4. nothing blocks: a FIFO as a file:// video, as --config, as display.font, as stereo-match's
#      input image and in the middle of an image sequence (both programs): refused, nothing
#      blocks; SIGINT ends a GStreamer start blocked on a FIFO, and so does the start's 15 s
#      deadline
#   5. sizes before the work: a rig rectifying 64x48 images to 8192x8192, a rig for other image
#      sizes (refused before its maps: peak RSS), GStreamer caps of 16384x16384 (refused by the
#      caps, before a buffer: peak RSS)
#   6. stereo-match ended by SIGTERM or SIGINT while renaming its outputs (strace holds each
#      rename): no FILE.tmp.XXXXXX left, no partial output
#   7. output names too long once .tmp.XXXXXX is added: refused before the work (stereo-match,
#      stereo-live --stats-json)
#   8. file:// URIs: %% and %25 a literal '%', percent-encoding decoded, file://localhost/;
#      exit 2 for synth://?width=17, a file:// pattern of two conversions, a rig rectifying to 1x1
# The Python module's checks (sizes, NULs) are in python/tests. Run from the repo root (tests/run
# does): bash tests/test_hostile.sh. Env: STEREO_BUILD (build); STEREO_SANITIZER (tests/
# test_asan.sh sets it: the programs are built with ASan) leaves out the GStreamer cases and the
# peak RSS bounds (ASan's shadow memory). About 25 s on 2 cores (15 of them the deadline).
# Every wait is on a state (tests/tap.sh); its limit catches a hang only (how soon the app
# refuses or stops: tools/timing.sh). Exits non-zero only on a setup error.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
B=$(cd "$B" && pwd) || { echo "Bail out! no build folder $B"; exit 1; }
LIVE=$B/stereo-live
SM=$B/stereo-match
SY=$B/stereo-synth
for x in "$LIVE" "$SM" "$SY"; do
  [ -x "$x" ] || { echo "Bail out! $x is not built (ninja)"; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/test_hostile.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
. "$OLDPWD/tests/tap.sh"
SAN=${STEREO_SANITIZER:-}
GST=1
"$LIVE" --help | grep -q 'gst://' && command -v gst-launch-1.0 >/dev/null 2>&1 || GST=0
[ -n "$SAN" ] && GST=0
SMALL=(--headless --frames 3 --backend cpu --set stereo.disparities=16)

# refused NAME STATUS MESSAGE COMMAND...: exit STATUS, one stderr line holding MESSAGE, no
# temporary file anywhere below the folder; still running after 60 s: a hang (what blocks)
refused() {
  local name=$1 want=$2 says=$3 t0=$SECONDS rc
  shift 3
  timeout -k 1 60 "$@" >o.out 2>o.err </dev/null
  rc=$?
  if [ $rc -eq "$want" ] && [ "$(lines o.err)" -eq 1 ] && grep -qF -- "$says" o.err &&
     [ -z "$(find . -name '*.tmp.*')" ]; then
    ok "$name: exit $rc in $((SECONDS - t0)) s: $(cat o.err)"
  else
    not_ok "$name: want exit $want and one line '$says'" \
      "exit $rc after $((SECONDS - t0)) s; stderr: $(head -c 600 o.err)"
  fi
}
# peak_mb COMMAND...: runs it; mb = its peak RSS in MB, rss_rc = its exit status
peak_mb() {
  /usr/bin/time -f '%M' -o rss.txt "$@" >o.out 2>o.err </dev/null
  rss_rc=$?
  mb=$(($(tail -1 rss.txt) / 1024))
}

# a small generated sequence: seq/l_0001.png .. l_0003.png, r_..., v_... (a third view)
mkdir seq
for i in 1 2 3; do
  "$SY" --size 64x48 --max-disp 8 --t "$i" --views -1 "s$i" >/dev/null 2>&1
  cp "s$i/left.png" "seq/l_000$i.png"; cp "s$i/right.png" "seq/r_000$i.png"
  cp "s$i/view2.png" "seq/v_000$i.png"; rm -r "s$i"
done
[ -f seq/v_0003.png ] || { echo "Bail out! stereo-synth wrote no sequence"; exit 1; }
cp -r seq seq.orig
SEQ=(--left "file://$W/seq/l_%04d.png" --right "file://$W/seq/r_%04d.png")
same_seq() { diff -r seq seq.orig >/dev/null; }
fresh_seq() { rm -rf seq && cp -r seq.orig seq; }   # each part starts from the sequence as made

# ---- 1. outputs against inputs ------------------------------------------------------------------
head -c 5000 /dev/urandom >victim.avi
cp victim.avi victim.orig
refused "--stats-json onto the --input video" 2 \
  "--stats-json './victim.avi' is the same file as source.input '$W/victim.avi'" \
  "$LIVE" "${SMALL[@]}" --input "file://$W/victim.avi" --stats-json ./victim.avi
check "... the video untouched" o.err cmp -s victim.avi victim.orig
refused "--screenshot onto a frame of the left sequence" 2 \
  "--screenshot / run.screenshot 'seq/l_0002.png' is the same file as source.left (frame 2)" \
  "$LIVE" "${SMALL[@]}" "${SEQ[@]}" --screenshot seq/l_0002.png
refused "--stats-json onto a frame of a --view sequence" 2 \
  "--stats-json 'seq/./v_0003.png' is the same file as source.view2 (frame 3)" \
  "$LIVE" "${SMALL[@]}" "${SEQ[@]}" --baselines 1,-1 --view "file://$W/seq/v_%04d.png" \
  --stats-json seq/./v_0003.png
refused "--screenshot onto display.font" 2 \
  "--screenshot / run.screenshot 'seq/l_0001.png' is the same file as display.font" \
  "$LIVE" "${SMALL[@]}" --set display.font=seq/l_0001.png --screenshot seq/l_0001.png
check "... every frame untouched" o.err same_seq
# every frame a file:// output may write, not only frame 1's name
mkdir cfg3 cfgd outs
printf '[run]\nframes = 3\n' >cfg3/c_000003.pfm
cp cfg3/c_000003.pfm cfg3.orig
ln -s cfg3/c_000003.pfm link.ini
refused "frame 3 of a file:// output onto the --config being read" 2 \
  "frame 3 of --output 'cfg3/c_%06d.pfm' would replace --config 'cfg3/c_000003.pfm'" \
  "$LIVE" "${SMALL[@]}" --config cfg3/c_000003.pfm --output 'file://cfg3/c_%06d.pfm'
refused "... and onto it through a link named as --config" 2 \
  "frame 3 of --output 'cfg3/c_%06d.pfm' would replace --config 'link.ini'" \
  "$LIVE" "${SMALL[@]}" --config link.ini --output 'file://cfg3/c_%06d.pfm'
check "... the configuration untouched, no frame written" o.err \
  bash -c 'cmp -s cfg3/c_000003.pfm cfg3.orig && [ "$(ls cfg3)" = c_000003.pfm ]'
refused "--stats-json onto frame 2 of a file:// output" 2 \
  "frame 2 of --output 'cfgd/x_%06d.pfm' would replace --stats-json 'cfgd/x_000002.pfm'" \
  "$LIVE" "${SMALL[@]}" --output 'file://cfgd/x_%06d.pfm' --stats-json cfgd/x_000002.pfm
refused "--screenshot onto frame 5 of a file:// output" 2 \
  "frame 5 of --output 'outs/s_%04d.png' would replace --screenshot / run.screenshot 'outs/s_0005.png'" \
  "$LIVE" "${SMALL[@]}" --output 'file://outs/s_%04d.png' --screenshot outs/s_0005.png
refused "two file:// outputs that meet at frame 100000 (x_%d and x_%06d)" 2 \
  "frame 100000 of --output 'outs/x_%d.pfm' would replace --output 'outs/x_%06d.pfm'" \
  "$LIVE" "${SMALL[@]}" --output 'file://outs/x_%d.pfm' --output 'file://outs/x_%06d.pfm'
check "... nothing written" o.err bash -c '[ -z "$(find cfgd outs -type f)" ]'

# ---- 2. recording takes a folder of its own ---------------------------------------------------
fresh_seq
"$LIVE" "${SMALL[@]}" --frames 6 --set synth.width=64 --set synth.height=48 --record long \
  >o.out 2>o.err
cp -r long long.orig
refused "--record into a folder holding a longer recording" 2 \
  "--record / record.dir 'long' holds files already" \
  "$LIVE" "${SMALL[@]}" --set synth.width=64 --set synth.height=48 --record long
check "... the longer recording untouched" o.err diff -r long long.orig
# the check comes before any source opens, so this needs no GStreamer
refused "--record into the folder a gst:// multifilesrc reads" 2 \
  "--record / record.dir 'seq' holds files already" \
  "$LIVE" "${SMALL[@]}" --input "gst://multifilesrc location=$W/seq/l_%04d.png index=1 ! pngdec ! videoconvert" \
  --record seq
check "... the frames untouched" o.err same_seq
mkdir empty
refused "--screenshot into the recording folder" 2 \
  "--record / record.dir 'empty' would hold --screenshot / run.screenshot 'empty/left_000001.png'" \
  "$LIVE" "${SMALL[@]}" --record empty --screenshot empty/left_000001.png
check "... nothing written" o.err [ -z "$(ls empty)" ]

# ---- 3. replay.ini reads back -----------------------------------------------------------------
fresh_seq
"$LIVE" "${SMALL[@]}" --frames 60 --set synth.fps=0 --set synth.width=32 --set synth.height=32 \
  --synth-prerender 8 --set stereo.threads=1 --record fast >o.out 2>o.err
fps=$(sed -n 's/^fps = //p' fast/replay.ini)
"$LIVE" --headless --backend cpu --config fast/replay.ini >r.out 2>r.err
rc=$?
check "generated scene at fps 0: replay.ini's rate $fps within 1..1000, the replay runs (exit $rc)" \
  r.err [ "${fps:-0}" -ge 1 -a "${fps:-0}" -le 1000 -a $rc -eq 0 ]
"$LIVE" "${SMALL[@]}" --set synth.width=64 --set synth.height=48 --record 'a;b' >o.out 2>o.err
"$LIVE" --headless --backend cpu --config 'a;b/replay.ini' >r.out 2>r.err
rc=$?
check "a ';' in the folder name: the replay reads it whole (exit $rc, 3 frames)" r.err \
  eval '[ $rc -eq 0 ] && grep -q "^stereo-live: 3 frames" r.out'
refused "' ;' in the folder name: refused before the session" 2 \
  "--record / record.dir 'c ;d': its replay.ini would not read back whole" \
  "$LIVE" "${SMALL[@]}" --record 'c ;d'
check "... no folder made" o.err [ ! -e 'c ;d' ]
long=$(printf 'r%.0s' $(seq 1 200))
refused "a 200-character recording folder name: refused before the session" 2 \
  "its replay.ini would not read back whole (replay.ini:3: the line is" \
  "$LIVE" "${SMALL[@]}" --record "$long"

# the replay hint names the file once, whatever slashes end the folder's name
"$LIVE" "${SMALL[@]}" --set synth.width=64 --set synth.height=48 --record 'slash//' >o.out 2>o.err
check "a recording folder given as 'slash//': the hint says slash/replay.ini" o.out \
  grep -q -- '--config slash/replay.ini)$' o.out

# ---- 4. nothing blocks --------------------------------------------------------------------------
fresh_seq
mkfifo fifo.avi fifo.ini fifo.ttf fifo.png
refused "a FIFO as the file:// video" 2 "source.input '$W/fifo.avi' is a FIFO, not a regular file" \
  "$LIVE" "${SMALL[@]}" --input "file://$W/fifo.avi"
refused "a FIFO as --config" 2 "fifo.ini: is a FIFO, not a regular file" \
  "$LIVE" "${SMALL[@]}" --config fifo.ini
refused "a FIFO as display.font" 2 "display.font 'fifo.ttf' is a FIFO, not a regular file" \
  "$LIVE" "${SMALL[@]}" --set display.font=fifo.ttf
refused "stereo-match: a FIFO as the left image" 1 "fifo.png: is a FIFO, not a regular file" \
  "$SM" -d 16 fifo.png seq/r_0001.png out.pfm
mkdir mid && cp seq/l_000[13].png seq/r_000[123].png mid/ && mkfifo mid/l_0002.png
refused "stereo-live: a FIFO in the middle of a sequence" 2 \
  "source.left (frame 2) '$W/mid/l_0002.png' is a FIFO, not a regular file" \
  "$LIVE" "${SMALL[@]}" --left "file://$W/mid/l_%04d.png" --right "file://$W/mid/r_%04d.png"
refused "stereo-match: a FIFO in the middle of a sequence" 1 \
  "LEFT mid/l_0002.png is a FIFO, not a regular file" \
  "$SM" -d 16 'mid/l_%04d.png' 'mid/r_%04d.png' 'mid/d_%04d.pfm'
if [ $GST -eq 1 ]; then
  env --default-signal=INT "$LIVE" "${SMALL[@]}" \
    --input "gst://filesrc location=$W/fifo.avi ! decodebin ! videoconvert" >o.out 2>o.err &
  pid=$!
  # blocked: a thread in the FIFO's open (the kernel's wait_for_partner); where the kernel does
  # not name what a task waits in (the parent shell, waiting for this script, shows 0), a second
  if grep -q '[a-z]' /proc/$PPID/wchan 2>/dev/null; then
    wait_for 60 grep -qsx wait_for_partner /proc/$pid/task/*/wchan
  else
    sleep 1
  fi
  kill -INT $pid
  if ends_within $pid 60; then
    ok "SIGINT ends a GStreamer start blocked on a FIFO"
  else
    not_ok "SIGINT ends a GStreamer start blocked on a FIFO" "still running 60 s after SIGINT"
  fi
  wait $pid 2>/dev/null
  # the deadline is 15 s: a limit of ten times that
  t0=$SECONDS
  timeout -k 1 160 "$LIVE" "${SMALL[@]}" \
    --input "gst://filesrc location=$W/fifo.avi ! decodebin ! videoconvert" >o.out 2>o.err
  rc=$?
  check "... and without a signal, the start's deadline ends it: exit $rc after $((SECONDS - t0)) s" \
    o.err eval '[ $rc -eq 1 ] && grep -q "did not start within 15 s" o.err'
else
  skip "SIGINT ends a GStreamer start blocked on a FIFO" "no GStreamer here${SAN:+ (built with $SAN)}"
  skip "... and without a signal, the start's deadline ends it" "no GStreamer here${SAN:+ (built with $SAN)}"
fi

# ---- 5. sizes before the work -----------------------------------------------------------------
fresh_seq
# rig FILE IMAGE_W IMAGE_H RECT_W RECT_H: an identity rig of two cameras (OpenCV YAML)
rig() {
  local k
  {
    printf '%%YAML:1.0\n---\nrig_cameras: 2\nreference: 0\nimage_width: %d\nimage_height: %d\n' "$2" "$3"
    printf 'rectified_width: %d\nrectified_height: %d\n' "$4" "$5"
    printf 'focal_px: 50.\ncx: 32.\ncy: 24.\n'
    for k in 0 1; do
      printf 'cam%d_M: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n   data: [ 50., 0., 32., 0., 50., 24., 0., 0., 1. ]\n' $k
      printf 'cam%d_D: !!opencv-matrix\n   rows: 1\n   cols: 5\n   dt: d\n   data: [ 0., 0., 0., 0., 0. ]\n' $k
      printf 'cam%d_R: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\n' $k
      printf 'cam%d_P: !!opencv-matrix\n   rows: 3\n   cols: 4\n   dt: d\n   data: [ 50., 0., 32., %d., 0., 50., 24., 0., 0., 0., 1., 0. ]\n' $k $((k * -5))
      printf 'cam%d_baseline_ratio: %d\n' $k $k
    done
  } >"$1"
}
rig big.yml 64 48 8192 8192
rig other.yml 4096 3072 4096 3072
rig tiny.yml 64 48 1 1
rig ok.yml 64 48 64 48
"$LIVE" "${SMALL[@]}" "${SEQ[@]}" --set calibration.maps=ok.yml >o.out 2>o.err
check "the identity rig itself runs (exit $?)" o.err grep -q '^stereo-live: 3 frames' o.out
refused "a rig rectifying 64x48 images to 8192x8192" 1 \
  "big.yml: rectified_width x rectified_height 8192x8192 is more than 4 times the 64x48 camera images" \
  "$LIVE" "${SMALL[@]}" "${SEQ[@]}" --set calibration.maps=big.yml
refused "a rig for 4096x3072 images, the images 64x48" 1 \
  "other.yml: maps are for 4096x3072 camera images, but the images are 64x48" \
  "$LIVE" "${SMALL[@]}" "${SEQ[@]}" --set calibration.maps=other.yml
if [ -z "$SAN" ]; then
  peak_mb "$LIVE" "${SMALL[@]}" "${SEQ[@]}" --set calibration.maps=other.yml
  check "... refused before its maps are built: peak RSS $mb MB (< 100; the maps: 450 MB)" o.err \
    [ "$mb" -lt 100 -a $rss_rc -eq 1 ]
else
  skip "... refused before its maps are built: peak RSS" "built with $SAN"
fi
if [ $GST -eq 1 ]; then
  peak_mb timeout -k 1 60 "$LIVE" "${SMALL[@]}" --input \
    'gst://videotestsrc ! video/x-raw,width=16384,height=16384'
  check "GStreamer caps of 16384x16384: exit $rss_rc at $mb MB (< 150: no frame allocated)" o.err \
    eval '[ $rss_rc -eq 1 ] && [ "$mb" -lt 150 ] && grep -q "up to 8192x8192" o.err'
else
  skip "GStreamer caps of 16384x16384 refused before a buffer" "no GStreamer here${SAN:+ (built with $SAN)}"
fi

# ---- 6. stereo-match ended mid-write ----------------------------------------------------------
fresh_seq
SLOW=(strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2
      -e inject=rename,renameat,renameat2:delay_enter=400000)
if command -v strace >/dev/null 2>&1 && "${SLOW[@]}" true 2>/dev/null; then
  for sig in TERM INT; do
    rm -rf sig && mkdir sig
    # a script's background job starts with SIGINT ignored: give it the default back
    env --default-signal=INT "${SLOW[@]}" "$SM" -d 16 --backend cpu 'seq/l_%04d.png' 'seq/r_%04d.png' 'sig/d_%04d.pfm' \
      --color 'sig/c_%04d.png' >o.out 2>o.err &
    pid=$!
    wait_for 60 eval 'ls sig | grep -q "\.tmp\."'
    before=$(ls sig | tr '\n' ' ')
    kill -$sig $(pgrep -P $pid) 2>/dev/null
    wait $pid
    left=$(ls sig | grep -c '\.tmp\.')
    check "stereo-match ended by SIG$sig mid-write (files then: $before): no temporary file left ($left)" \
      o.err eval '[[ "$before" == *.tmp.* ]] && [ "$left" -eq 0 ]'
  done
else
  skip "stereo-match ended by a signal mid-write" "strace cannot trace here"
fi

# ---- 7. names too long for their temporary file ---------------------------------------------
fresh_seq
name=$(printf 'n%.0s' $(seq 1 250)).pfm
refused "stereo-match: a 254-byte output name (255 with .tmp.XXXXXX is too long)" 2 \
  "the file name is 254 bytes; with the temporary suffix '.tmp.XXXXXX' it must fit in 255" \
  "$SM" -d 16 seq/l_0001.png seq/r_0001.png "$name"
refused "stereo-live: a 254-byte --stats-json name" 2 \
  "the file name is 254 bytes; with the temporary suffix" \
  "$LIVE" "${SMALL[@]}" --stats-json "$name"

# ---- 8. file:// URIs and exit statuses --------------------------------------------------------
fresh_seq
head -c 100 /dev/urandom >'100%.avi'
refused "file://100%%.avi names the file '100%.avi' (a video, not a sequence)" 2 \
  "--stats-json '100%.avi' is the same file as source.input '100%.avi'" \
  "$LIVE" "${SMALL[@]}" --input 'file://100%%.avi' --stats-json '100%.avi'
refused "file://100%25.avi: percent-encoding decoded" 2 \
  "is the same file as source.input '100%.avi'" \
  "$LIVE" "${SMALL[@]}" --input 'file://100%25.avi' --stats-json '100%.avi'
refused "file://100%.avi: a '%' that is neither a frame number nor %XX" 2 \
  "is neither a frame number (%04d: an image sequence) nor %XX" \
  "$LIVE" "${SMALL[@]}" --input 'file://100%.avi'
refused "file://localhost/ABS and %20" 2 "is the same file as source.input '$W/my video.avi'" \
  "$LIVE" "${SMALL[@]}" --input "file://localhost$W/my%20video.avi" --stats-json 'my video.avi'
refused "synth://?width=17: exit 2, as a bad option" 2 "synth option width = '17' is not an integer in 32..4096" \
  "$LIVE" "${SMALL[@]}" --input 'synth://?width=17'
refused "a file:// pattern of two conversions: exit 2" 2 "2 frame-number conversions" \
  "$LIVE" "${SMALL[@]}" --left "file://seq/l_%04d_%d.png" --right "file://seq/r_%04d.png"
refused "a rig rectifying to 1x1: exit 2, as a setting that does not fit" 2 "stereo: " \
  "$LIVE" "${SMALL[@]}" "${SEQ[@]}" --set calibration.maps=tiny.yml

echo "1..$n"
