#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/timing.sh — the time limits the live app promises, measured on this machine: how soon
# Ctrl-C (SIGINT) or SIGTERM ends it, how soon it refuses what it cannot open, how long its
# bounded waits last, and that a slow output or a subscriber that stops reading leaves the
# stage's rate alone. One line per figure with the limit it is held to; exit status 1 when one
# is over. The tests (ninja test) check the behaviour behind each figure by waiting on states,
# with limits only a hang reaches; this tool checks the time, so run it on an idle machine (load
# slows every figure down).
#
#   tools/timing.sh           every figure (about 2 min)
#   tools/timing.sh --vivid   also the V4L2 disconnect latencies, from the vivid VM
#                             (tests/test_v4l2_vivid.sh, about a minute more)
#
# Each latency is the worst of 3 runs. Env: STEREO_BUILD (default build).
set -u
cd "$(dirname "$0")/.." || exit 1
vivid=0
case "${1:-}" in
  --vivid) vivid=1 ;;
  "") ;;
  *) echo "usage: tools/timing.sh [--vivid]" >&2; exit 2 ;;
esac
B=$(cd "${STEREO_BUILD:-build}" && pwd) || { echo "timing: no build folder" >&2; exit 1; }
LIVE=$B/stereo-live
[ -x "$LIVE" ] || { echo "timing: $LIVE is not built (ninja)" >&2; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
ROOT=$PWD
W=$(mktemp -d "${TMPDIR:-/tmp}/timing.XXXXXX") || exit 1
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$W"' EXIT
cd "$W" || exit 1
. "$ROOT/tests/tap.sh"   # wait_for, ends_within, gone
over=0
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# figure NAME VALUE UNIT LIMIT: one line; LIMIT "<= X" or "A..B"
figure() {
  local name=$1 value=$2 unit=$3 limit=$4 verdict
  verdict=$("$PY" -c "
import sys
v, l = float(sys.argv[1]), sys.argv[2]
ok = v <= float(l[3:]) if l.startswith('<= ') else float(l.split('..')[0]) <= v <= float(l.split('..')[1])
print('ok' if ok else 'OVER')" "$value" "$limit")
  [ "$verdict" = ok ] || over=1
  printf '%-66s %8s %-4s (limit %s %s)  %s\n' "$name" "$value" "$unit" "$limit" "$unit" "$verdict"
}
skipped() { printf '%-66s %8s       (%s)\n' "$1" "-" "$2"; }
SMALL=(--headless --frames 3 --backend cpu --set stereo.disparities=16)
HAVE_GST=0
"$LIVE" --help | grep -q 'gst://' && command -v gst-launch-1.0 >/dev/null 2>&1 && HAVE_GST=1

# ---- signals: the app running (its first stats line, a window's screenshot), then the signal --
# stop_ms SIGNAL READY-PATTERN COMMAND...: ms from the signal to the app gone (exit 0), worst of
# 3; "-1" when a run did not start, did not end or ended with another status
stop_ms() {
  local sig=$1 ready=$2 worst=0 i pid t0 ms rc
  shift 2
  for i in 1 2 3; do
    rm -f s.out s.err
    STEREO_LIVE_KEYS=s "$@" >s.out 2>s.err &
    pid=$!
    PIDS+=("$pid")
    wait_for 60 grep -qs -e "$ready" s.out s.err || { kill -KILL "$pid"; echo -1; return; }
    t0=$(now_ms)
    kill -"$sig" "$pid"
    while ! gone "$pid"; do
      sleep 0.005
      [ $(($(now_ms) - t0)) -gt 60000 ] && { kill -KILL "$pid"; echo -1; return; }
    done
    ms=$(($(now_ms) - t0))
    wait "$pid"
    rc=$?
    [ "$rc" -eq 0 ] || { echo -1; return; }
    [ "$ms" -gt "$worst" ] && worst=$ms
  done
  echo "$worst"
}
figure "SIGINT, headless, generated scene: exit 0 after" \
  "$(stop_ms INT '^frame [1-9]' "$LIVE" --headless --backend cpu)" ms "<= 3000"
figure "SIGTERM, headless, generated scene: exit 0 after" \
  "$(stop_ms TERM '^frame [1-9]' "$LIVE" --headless --backend cpu)" ms "<= 3000"
if command -v Xvfb >/dev/null 2>&1; then
  Xvfb -displayfd 3 -screen 0 800x600x24 -nolisten tcp 3>xdisplay >/dev/null 2>&1 &
  xpid=$!
  PIDS+=("$xpid")
  wait_for 60 test -s xdisplay
  figure "SIGTERM, in a window (Xvfb), generated scene: exit 0 after" \
    "$(stop_ms TERM '^stereo-live: screenshot ' env DISPLAY=":$(head -1 xdisplay)" "$LIVE" --backend cpu)" \
    ms "<= 3000"
  kill "$xpid"; wait "$xpid" 2>/dev/null
else
  skipped "SIGTERM, in a window" "no Xvfb"
fi
V='video/x-raw,width=320,height=240,framerate=30/1'
if [ $HAVE_GST = 1 ]; then
  figure "SIGINT while two gst:// pipelines stream: exit 0 after" \
    "$(stop_ms INT '^frame [1-9]' "$LIVE" --headless --left "gst://videotestsrc is-live=true ! $V" \
      --right "gst://videotestsrc is-live=true ! $V")" ms "<= 3000"
  # a start blocked in a FIFO's open (the kernel's wait_for_partner): the app ends by the signal
  rm -f fifo.avi && mkfifo fifo.avi
  worst=0
  for i in 1 2 3; do
    env --default-signal=INT "$LIVE" "${SMALL[@]}" \
      --input "gst://filesrc location=$W/fifo.avi ! decodebin ! videoconvert" >o.out 2>o.err &
    pid=$!
    PIDS+=("$pid")
    wait_for 60 grep -qsx wait_for_partner /proc/$pid/task/*/wchan || sleep 1
    t0=$(now_ms)
    kill -INT "$pid"
    while ! gone "$pid"; do sleep 0.005; [ $(($(now_ms) - t0)) -gt 60000 ] && break; done
    ms=$(($(now_ms) - t0))
    gone "$pid" || { kill -KILL "$pid"; ms=-1; }
    wait "$pid" 2>/dev/null
    [ "$ms" -lt 0 ] && { worst=-1; break; }
    [ "$ms" -gt "$worst" ] && worst=$ms
  done
  figure "SIGINT while a gst:// start blocks on a FIFO: ended after" "$worst" ms "<= 2000"
else
  skipped "SIGINT with gst:// pipelines" "no GStreamer"
fi

# ---- refusals and bounded waits: the time to the exit status -------------------------------------
# exit_s WANT-STATUS COMMAND...: seconds from start to exit, "-1" for another exit status
exit_s() {
  local want=$1 t0 rc
  shift
  t0=$(now_ms)
  timeout 300 "$@" >o.out 2>o.err </dev/null
  rc=$?
  [ "$rc" -eq "$want" ] || { echo -1; return; }
  "$PY" -c "print(round(($(now_ms) - $t0) / 1000, 2))"
}
figure "--screenshot into a missing folder: refused (exit 2) after" \
  "$(exit_s 2 "$LIVE" --headless --frames 300 --backend cpu --screenshot /nonexistent/x.png)" s "<= 5"
mkfifo fifo.ini
figure "a FIFO as --config: refused (exit 2) after" \
  "$(exit_s 2 "$LIVE" "${SMALL[@]}" --config fifo.ini)" s "<= 10"
if [ $HAVE_GST = 1 ]; then
  figure "gst://nosuchelement: refused (exit 1) after" \
    "$(exit_s 1 "$LIVE" --headless --frames 5 --input gst://nosuchelement)" s "<= 5"
  figure "rtsp:// without a server: refused (exit 1) after" \
    "$(exit_s 1 "$LIVE" --headless --frames 5 --left rtsp://127.0.0.1:1/left \
      --right rtsp://127.0.0.1:1/right)" s "<= 10"
  figure "a pipeline that never delivers: 'no frame within 10 s', exit 1 after" \
    "$(exit_s 1 "$LIVE" --headless --frames 5 --input 'gst://videotestsrc is-live=true ! valve drop=true')" \
    s "10..12"
  figure "a gst:// start blocked on a FIFO: the 15 s deadline, exit 1 after" \
    "$(exit_s 1 "$LIVE" "${SMALL[@]}" --input "gst://filesrc location=$W/fifo.avi ! decodebin ! videoconvert")" \
    s "15..17"
fi

# ---- rates: what a slow output or a stuck subscriber leaves the stage -----------------------------
fps_of() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["fps"])' "$1" 2>/dev/null || echo -1; }
SCENE=(--input 'synth://?width=160&height=120' -d 32 --backend cpu --headless)
SLOW=(strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2
      -e inject=rename,renameat,renameat2:delay_exit=200000)
if command -v strace >/dev/null 2>&1 && "${SLOW[@]}" true 2>/dev/null; then
  mkdir -p slow
  "${SLOW[@]}" "$LIVE" "${SCENE[@]}" --frames 60 --output "file://$W/slow/%06d.pfm" \
    --stats-json slow.json >slow.out 2>slow.err
  figure "a slow file:// output (renames 0.2 s late): the scene's 30 fps kept" \
    "$(fps_of slow.json)" fps "28.5..31.5"
else
  skipped "a slow file:// output" "strace cannot trace here"
fi
SUB=$B/tests/ros2-sub
if [ -x "$B/stereo-ros2-bridge" ] && [ -x "$SUB" ]; then
  export CYCLONEDDS_URI='<CycloneDDS><Domain><General><Interfaces><NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>'
  DOM=$((20 + $$ % 200))
  run_fps() { # json, extra options
    "$LIVE" --input 'synth://?width=320&height=240&fps=30' -d 32 --backend cpu --headless \
      --focal 200 --baseline 0.1 --frames 120 --stats-json "$1" \
      --output "ros2://robot?domain=$DOM&qos=reliable" >"$1.out" 2>"$1.err"
  }
  run_fps f0.json
  mkdir -p st1 st2
  "$SUB" "$DOM" rt/robot/disparity stereo_msgs::msg::dds_::DisparityImage_ stuck 0 st1 300 \
    >st1.log 2>&1 &
  s1=$!
  "$SUB" "$DOM" rt/robot/depth/image_rect sensor_msgs::msg::dds_::Image_ stuck 0 st2 300 \
    >st2.log 2>&1 &
  s2=$!
  PIDS+=("$s1" "$s2")
  run_fps f1.json
  kill "$s1" "$s2" 2>/dev/null
  f0=$(fps_of f0.json) f1=$(fps_of f1.json)
  figure "ros2:// with a subscriber that stops reading: fps / fps without it" \
    "$("$PY" -c "print(round($f1 / $f0, 3))" 2>/dev/null || echo -1)" ratio "0.95..1.05"
  V11=$B/venv-cyclonedds11/bin/python
  if "$V11" -c 'import cyclonedds.domain' 2>/dev/null; then
    "$V11" "$ROOT/tests/ros2_sub11.py" "$DOM" rt/robot/left/image_rect 30 >c11.log 2>&1 &
    c11=$!
    PIDS+=("$c11")
    "$LIVE" --input 'synth://?width=160&height=120' -d 32 --backend cpu --headless --focal 200 \
      --baseline 0.1 --frames 180 --output "ros2://robot?domain=$DOM" --stats-json c.json \
      >c.out 2>c.err
    kill "$c11" 2>/dev/null
    figure "ros2:// beside a Cyclone DDS 11.x subscriber: the scene's 30 fps kept" \
      "$(fps_of c.json)" fps "28.5..31.5"
  else
    skipped "ros2:// beside a Cyclone DDS 11.x subscriber" "no $V11 (setup.sh)"
  fi
else
  skipped "ros2:// with a subscriber that stops reading" "no ROS 2 bridge built"
fi

# ---- V4L2: how soon the capture reports a camera unplugged (vivid in a VM) -----------------------
if [ $vivid = 1 ]; then
  (cd "$ROOT" && STEREO_BUILD=$B bash tests/test_v4l2_vivid.sh) >vivid.log 2>&1
  worst=$(sed -n 's/^# .*disconnect reported after \([0-9.]*\) s.*/\1/p' vivid.log | sort -n | tail -1)
  if [ -n "$worst" ]; then
    figure "V4L2 (vivid, in a VM): a disconnect reported after (the worst)" "$worst" s "<= 1"
  else
    skipped "V4L2 disconnect" "the vivid VM reported nothing (see tests/test_v4l2_vivid.sh)"
  fi
fi
exit $over
