#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_ros2.sh — stereo-live's ros2:// output over Cyclone DDS, as TAP. Subscribers in
# other processes (build/tests/ros2-sub, tests/ros2_sub.c) save the samples' bytes; rosbags
# (an independent ROS 2 deserialiser, in build/venv-rosbags: setup.sh installs it) decodes them
# (tests/ros2_check.py):
#   1. topic and type names as ROS 2 gives them (rt/NAMESPACE/NAME, PKG::msg::dds_::TYPE_), as
#      discovery reports the publications
#   2. the disparity bit for bit against the stage's (the same run's file:// PFMs); depth
#      within float rounding of f B / d; stamps strictly increasing; the left image (mono8);
#      K and P from the camera; the point cloud's z = the depth; 16UC1 depth in mm;
#      ?min_confidence=N: exactly the pixels whose confidence (stereo-match --confidence of the
#      same pair, looped) is below N are invalid, the others bit for bit
#   3. QoS: a best-effort and a reliable subscriber both receive from qos=reliable (qos=sensor,
#      best effort as ROS 2's sensor-data QoS, serves best-effort ones); CameraInfo reaches a
#      subscriber that joins late (transient local)
#   4. a subscriber that stops reading (reliable, keep all, no room): the app sends every frame
#      to the bridge, none dropped, and the bridge keeps publishing (the app's rate beside it:
#      tools/timing.sh)
#   5. the bridge killed (kill -9) mid-run: restarted, counted (--stats-json restarts), a
#      subscriber receives again, the app ends normally
#   5b. the bridge stopped (kill -STOP) mid-run: the app says once that it has published nothing
#      for 5 s, and when it publishes again (kill -CONT); the summary shows sent vs published;
#      without the camera the app says what does not go out
#   5c. two apps with one namespace and domain: each bridge says once that another publisher
#      shares a topic; one app alone (1, and after a bridge restart, 5) says nothing of the kind
#   6. a subscriber of Cyclone DDS 11.x (PyPI cyclonedds, build/venv-cyclonedds11): the app
#      goes on, and the subscriber receives (the bridge's types carry no XTypes type
#      information, whose handling crashes Debian's 0.10.2 with an 11.x peer)
# Discovery runs over the loopback interface only (CYCLONEDDS_URI below), on a domain of its
# own per run. The app runs until the subscribers have their samples, then SIGINT ends it; every
# wait is on a state (tests/tap.sh), its limit catches a hang only. Skipped, saying so, without
# the bridge (configure found no Cyclone DDS) or rosbags. About 30 s.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
LIVE=$B/stereo-live
SUB=$B/tests/ros2-sub
VPY=${STEREO_ROSBAGS_PYTHON:-$B/venv-rosbags/bin/python}
[ -x "$LIVE" ] || { echo "Bail out! $LIVE is not built"; exit 1; }
. tests/tap.sh
if [ ! -x "$B/stereo-ros2-bridge" ] || [ ! -x "$SUB" ]; then
  skip "ros2:// output" "the bridge is not built (./configure found no Cyclone DDS: cyclonedds-dev, cyclonedds-tools)"
  echo "1..$n"; exit 0
fi
if ! "$VPY" -c 'import rosbags.typesys' 2>/dev/null; then
  skip "ros2:// output" "no rosbags ($VPY; setup.sh installs it: python3 -m venv $B/venv-rosbags && pip install rosbags)"
  echo "1..$n"; exit 0
fi
T=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
export CYCLONEDDS_URI='<CycloneDDS><Domain><General><Interfaces><NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>'
DOM=$((20 + $$ % 200))
SCENE=(--input 'synth://?width=160&height=120' -d 32 --backend cpu --headless --focal 200 --baseline 0.1)
sub() { # name, topic, type, qos, count: in the background, into $T/name/; it gives up after
        # 300 s (a hang); a stuck one stays until it is killed
  mkdir -p "$T/$1"
  "$SUB" "$DOM" "$2" "$3" "$4" "$5" "$T/$1" 300 >"$T/$1.log" 2>&1 &
  PIDS+=($!)
  eval "pid_$1=$!"
}
# stop_app PID: SIGINT once the test has what it needs; rc = its exit status (137: killed after
# 60 s, a hang)
stop_app() {
  kill -INT "$1"
  ends_within "$1" 60
  wait "$1"
  rc=$?
}
saved() { [ "$(ls "$T/$1" | wc -l)" -ge "$2" ]; } # name, count: the subscriber saved that many
IMG='sensor_msgs::msg::dds_::Image_'
DISP='stereo_msgs::msg::dds_::DisparityImage_'
INFO='sensor_msgs::msg::dds_::CameraInfo_'
CLOUD='sensor_msgs::msg::dds_::PointCloud2_'

# ---- 1-3. one run, every topic ---------------------------------------------------------------
sub disp rt/robot/stereo/disparity "$DISP" best 10
sub disp_rel rt/robot/stereo/disparity "$DISP" reliable 10
sub depth rt/robot/stereo/depth/image_rect "$IMG" reliable 10
sub left rt/robot/stereo/left/image_rect "$IMG" best 5
sub points rt/robot/stereo/points2 "$CLOUD" best 2
mkdir -p "$T/pfm"
"$LIVE" "${SCENE[@]}" --output "ros2://robot/stereo?domain=$DOM&points=1&qos=reliable" \
  --output "file://$T/pfm/%06d.pfm" --stats-json "$T/1.json" >"$T/1.out" 2>"$T/1.err" &
app=$!
PIDS+=($app)
wait_for 300 saved disp 1
sub info rt/robot/stereo/left/camera_info "$INFO" latched 1   # joins late
for s in disp disp_rel depth left points info; do wait "$(eval echo \$pid_$s)"; done
stop_app "$app"
check "the app ran with ros2:// until the subscribers were done, then SIGINT: exit 0" "$T/1.err" \
  test "$rc" = 0 -a "$(grep -c 'stereo-live: [0-9]* frames' "$T/1.out")" = 1
names_ok=1
for s in "disp rt/robot/stereo/disparity $DISP" "depth rt/robot/stereo/depth/image_rect $IMG" \
         "left rt/robot/stereo/left/image_rect $IMG" "points rt/robot/stereo/points2 $CLOUD" \
         "info rt/robot/stereo/left/camera_info $INFO"; do
  set -- $s
  grep -qx "matched topic $2 type $3" "$T/$1.log" || { names_ok=0; echo "# $1: $(head -2 "$T/$1.log")"; }
done
check "topic and type names as ROS 2 gives them (rt/..., PKG::msg::dds_::TYPE_)" /dev/null \
  test "$names_ok" = 1
# the frames the file:// output dropped (late, on a loaded machine): their samples have no PFM
export PFM_DROPS
PFM_DROPS=$(sed -n 's/^stereo-live: output file:.*: [0-9]* sent, \([0-9]*\) drops.*/\1/p' "$T/1.out")
ros2_check() { # name, check, dirs...
  local name=$1; shift
  if "$VPY" tests/ros2_check.py "$@" >"$T/chk.out" 2>&1; then ok "$name ($(cat "$T/chk.out"))"
  else not_ok "$name" "$(tail -5 "$T/chk.out")"; fi
}
ros2_check "disparity bit for bit against the stage's; stamps increasing" disparity "$T/disp" "$T/pfm"
ros2_check "reliable subscriber: disparity bit for bit" disparity "$T/disp_rel" "$T/pfm"
ros2_check "depth (32FC1 m) within float rounding of f B / d" depth "$T/depth" "$T/pfm"
ros2_check "left image rectified (mono8)" left "$T/left"
ros2_check "CameraInfo to a late subscriber (transient local): K, P from the camera" info "$T/info"
ros2_check "PointCloud2 x y z rgb: z = the depth image's" points "$T/points" "$T/depth"

rm -rf "$T/mm"
sub mm rt/depth/image_rect "$IMG" best 3
"$LIVE" "${SCENE[@]}" --output "ros2://?domain=$DOM&depth=16UC1&frame_id=cam" \
  >/dev/null 2>"$T/mm.err" &
app=$!
PIDS+=($app)
wait "$pid_mm"
stop_app "$app"
ros2_check "the root namespace, qos=sensor (best effort) to a best-effort subscriber, 16UC1 depth in mm (REP 118)" depth_mm "$T/mm"

# ---- 2b. min_confidence: one generated pair, looped, against stereo-match's confidence map ---
MC=192  # masks about a quarter of this scene's valid pixels
mkdir -p "$T/mcseq" "$T/mccli" "$T/mcpfm"
"$B/stereo-synth" --size 160x120 "$T/mcscene" >/dev/null
cp "$T/mcscene/left.png" "$T/mcseq/left_0000.png"
cp "$T/mcscene/right.png" "$T/mcseq/right_0000.png"
"$B/stereo-match" -q -d 32 --backend cpu --confidence "$T/mccli/conf.pgm" \
  "$T/mcscene/left.png" "$T/mcscene/right.png" "$T/mccli/d.pfm"
sub mc rt/conf/disparity "$DISP" best 5
"$LIVE" --left "file://$T/mcseq/left_%04d.png" --right "file://$T/mcseq/right_%04d.png" \
  --set files.fps=30 -d 32 --backend cpu --headless --focal 200 --baseline 0.1 \
  --output "ros2://conf?domain=$DOM&min_confidence=$MC" --output "file://$T/mcpfm/%06d.pfm" \
  >"$T/mc.out" 2>"$T/mc.err" &
app=$!
PIDS+=($app)
wait "$pid_mc"
stop_app "$app"
check "min_confidence=$MC: the app ran until the subscriber was done, then SIGINT: exit 0" \
  "$T/mc.err" test "$rc" = 0
ros2_check "min_confidence=$MC: exactly the pixels of confidence below it invalid, the rest bit for bit" \
  masked "$T/mc" "$T/mcpfm" "$T/mccli/d.pfm" "$T/mccli/conf.pgm" "$MC"

# ---- 4. a subscriber that stops reading -------------------------------------------------------
# (the app's rate with and without it: tools/timing.sh)
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
sub stuck rt/robot/disparity "$DISP" stuck 0
sub stuck2 rt/robot/depth/image_rect "$IMG" stuck 0
"$LIVE" --input 'synth://?width=320&height=240&fps=30' -d 32 --backend cpu --headless \
  --focal 200 --baseline 0.1 --frames 120 --output "ros2://robot?domain=$DOM&qos=reliable" \
  >"$T/f1.out" 2>"$T/f1.err" &
app=$!
PIDS+=($app)
ends_within "$app" 300
wait "$app"
rc=$?
stuck_matched=$(cat "$T/stuck.log" "$T/stuck2.log" | grep -c '^matched topic')
# sent, drops, published: the app's output thread drops a frame only when it is late itself (a
# loaded machine); a bridge held up by the stuck reader would publish a few frames a second
read -r o_sent o_drops o_pub <<<"$(sed -n 's/.*output ros2:\/\/robot.*: \([0-9]*\) sent, \([0-9]*\) drops (0 failed), \([0-9]*\) published.*/\1 \2 \3/p' "$T/f1.out")"
check "a subscriber that stops reading (matched by $stuck_matched of 2): exit $rc, the app hands the bridge each of the 120 frames ($o_sent sent, $o_drops dropped late)" \
  "$T/f1.err" test "$rc" = 0 -a "$((${o_sent:-0} + ${o_drops:-0}))" = 120
check "... and the bridge keeps publishing ($o_pub published, at least half)" "$T/f1.out" \
  test "${o_pub:-0}" -ge 60
kill "$pid_stuck" "$pid_stuck2" 2>/dev/null

# ---- 5. the bridge killed mid-run --------------------------------------------------------------
# killed once the app streams (its first stats line) and a subscriber has received from it
sub before rt/robot/disparity "$DISP" best 3
"$LIVE" "${SCENE[@]}" --output "ros2://robot?domain=$DOM" --stats-json "$T/k.json" \
  >"$T/k.out" 2>"$T/k.err" &
app=$!
PIDS+=($app)
wait_for 300 grep -qs '^frame [1-9]' "$T/k.out"
wait "$pid_before"
bridge=$(pgrep -P "$app" -x stereo-ros2-bri)
[ -n "$bridge" ] && kill -9 "$bridge"
# restarted: a bridge of another process id
restarted() { local b; b=$(pgrep -P "$app" -x stereo-ros2-bri) && [ "$b" != "$bridge" ]; }
wait_for 300 restarted
sub after rt/robot/disparity "$DISP" best 3
wait "$pid_after"
after=$?
stop_app "$app"
check "bridge killed: the app goes on (exit 0 at SIGINT), says why once" "$T/k.err" \
  test -n "$bridge" -a "$rc" = 0 -a "$(grep -c 'stereo-live: [0-9]* frames' "$T/k.out")" = 1 \
  -a "$(grep -c 'was ended by signal 9' "$T/k.err")" = 1
check "... the new bridge takes neither its own writers nor its predecessor's for another publisher" \
  "$T/k.err" test "$(grep -c 'another publisher' "$T/k.err")" = 0
check "... restarted and counted (restarts 1), a new subscriber receives" "$T/after.log" \
  test "$after" = 0 -a "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["outputs"][0]["restarts"])' "$T/k.json")" = 1

# ---- 5b. the bridge stopped (SIGSTOP) mid-run ----------------------------------------------------
# without the camera (said: only the disparity and the left image go out); stopped once it has
# published, resumed once the app has said it publishes nothing
"$LIVE" --input 'synth://?width=160&height=120' -d 32 --backend cpu --headless \
  --output "ros2://robot?domain=$DOM" >"$T/s.out" 2>"$T/s.err" &
app=$!
PIDS+=($app)
wait_for 300 grep -qs ', [1-9][0-9]* published' "$T/s.out"
bridge=$(pgrep -P "$app" -x stereo-ros2-bri)
[ -n "$bridge" ] && kill -STOP "$bridge"
stalled=0
wait_for 300 grep -qs 'has published nothing for 5 s (stopped or stuck?)' "$T/s.err" && stalled=1
[ -n "$bridge" ] && kill -CONT "$bridge"
wait_for 300 grep -qs 'the bridge publishes again' "$T/s.err"
stop_app "$app"
check "bridge stopped (kill -STOP): said once, 'ros2://...: the bridge ... has published nothing for 5 s (stopped or stuck?)'" \
  "$T/s.err" test -n "$bridge" -a "$stalled" = 1 -a \
  "$(grep -c "^stereo-live: output ros2://robot?domain=$DOM: the bridge (stereo-ros2-bridge, pid $bridge) has published nothing for 5 s (stopped or stuck?)" "$T/s.err")" = 1
# the summary: N sent, M published (K of the frames sent were not ...), K = N - M > 0
read -r s_sent s_pub s_gap <<<"$(sed -n 's/.*output ros2:\/\/robot.*: \([0-9]*\) sent, .*, \([0-9]*\) published (\([0-9]*\) of the frames sent were not.*/\1 \2 \3/p' "$T/s.out")"
check "... resumed (kill -CONT): said, exit $rc at SIGINT; the summary shows the gap ($s_sent sent, $s_pub published, ${s_gap:-no} not)" \
  "$T/s.out" test "$rc" = 0 -a "$(grep -c 'the bridge publishes again' "$T/s.err")" = 1 -a \
  "${s_gap:-0}" -gt 0 -a "$((${s_sent:-0} - ${s_pub:-0}))" = "${s_gap:-x}"
check "... and without the camera it said once what does not go out" "$T/s.err" \
  test "$(grep -c 'no camera: only the disparity and the left image are published' "$T/s.err")" = 1

# ---- 5c. two apps with one namespace and domain ----------------------------------------------------
"$LIVE" "${SCENE[@]}" --output "ros2://twin?domain=$DOM" >"$T/t1.out" 2>"$T/t1.err" &
app=$!
PIDS+=($app)
wait_for 300 grep -qs ', [1-9][0-9]* published' "$T/t1.out"
"$LIVE" "${SCENE[@]}" --output "ros2://twin?domain=$DOM" >"$T/t2.out" 2>"$T/t2.err" &
app2=$!
PIDS+=($app2)
wait_for 300 grep -qs 'another publisher' "$T/t1.err"
wait_for 300 grep -qs 'another publisher' "$T/t2.err"
stop_app "$app2"
rc2=$rc
stop_app "$app"
said_twin() { [ "$(grep -c "^stereo-ros2-bridge: ros2://twin: another publisher on rt/twin/[a-z_/]* (domain $DOM)" "$1")" = 1 ]; }
check "two apps with one namespace and domain: each bridge says once 'ros2://twin: another publisher on TOPIC (domain $DOM)'; both exit 0" \
  "$T/t2.err" eval 'said_twin "$T/t1.err" && said_twin "$T/t2.err" && [ "$rc" = 0 ] && [ "$rc2" = 0 ]'
check "... one app beside its subscribers (section 1) said nothing of the kind" "$T/1.err" \
  test "$(grep -c 'another publisher' "$T/1.err")" = 0

# ---- 6. a Cyclone DDS 11.x subscriber ------------------------------------------------------------
V11=${STEREO_CYCLONE11_PYTHON:-$B/venv-cyclonedds11/bin/python}
if "$V11" -c 'import cyclonedds.domain' 2>/dev/null; then
  "$LIVE" "${SCENE[@]}" --output "ros2://robot?domain=$DOM" --stats-json "$T/c.json" \
    >"$T/c.out" 2>"$T/c.err" &
  app=$!
  PIDS+=($app)
  wait_for 300 grep -qs '^frame [1-9]' "$T/c.out"
  # until it has 4 images (300 s: a hang)
  timeout 400 "$V11" tests/ros2_sub11.py "$DOM" rt/robot/left/image_rect 300 4 >"$T/c11.log" 2>&1
  # the app streams on after it: one more stats line
  lines_then=$(grep -c '^frame ' "$T/c.out")
  wait_for 300 eval '[ "$(grep -c "^frame " "$T/c.out")" -gt "$lines_then" ]'
  stop_app "$app"
  check "a Cyclone 11.x subscriber: the app goes on (a stats line after it, exit 0 at SIGINT)" "$T/c.err" \
    "$PY" -c "import json,sys; s=json.load(open('$T/c.json')); sys.exit(not ($rc == 0 and s['frames'] > 0))"
  check "... and receives the images ($(cat "$T/c11.log"); bridge restarts $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["outputs"][0]["restarts"])' "$T/c.json"))" \
    "$T/c11.log" grep -qE '^received [1-9]' "$T/c11.log"
else
  skip "a Cyclone 11.x subscriber" "no cyclonedds 11.x binding ($V11; setup.sh installs it)"
fi
echo "1..$n"
