#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/v4l2/init.sh — /init of the vivid test VM (tests/v4l2/mkinitramfs.sh puts it there).
# Loads vivid with three capture devices, runs vivid-check (the pair on the first two, then all
# three in one capture), whose TAP goes to the serial console for tests/test_v4l2_vivid.sh to
# collect, then (when the initramfs has it) stereo-live on the three cameras with one of them
# disconnected for a while ("views-out| " lines), and stereo-live --list-cameras against vivid
# reloaded with more kinds of nodes, its output as "list-out| " lines, and powers off.
# Every step waits for a state (a node, a stats line, a log line), never for the clock; the
# limits (in tenths of a second) catch a hang only.
export PATH=/bin
# wait_for TENTHS COMMAND...: 0 as soon as the command succeeds, 1 after TENTHS tenths
wait_for() {
  t=$1
  shift
  until "$@"; do
    [ "$t" -le 0 ] && return 1
    t=$((t - 1))
    sleep 0.1
  done
}
# lines_after FILE PATTERN N: more than N lines of FILE match PATTERN
lines_after() { [ "$(grep -cs "$2" "$1")" -gt "$3" ]; }
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo
echo "# vm: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpu(s), up $(cut -d' ' -f1 /proc/uptime) s"
# in dependency order (what `modprobe vivid` would load)
for m in rc-core cec mc videodev videobuf2-common videobuf2-v4l2 videobuf2-memops \
         videobuf2-vmalloc videobuf2-dma-contig v4l2-dv-timings v4l2-tpg; do
  insmod /lib/modules/$m.ko || echo "# vm: insmod $m failed"
done
insmod /lib/modules/vivid.ko n_devs=3 node_types=0x1,0x1,0x1 || echo "# vm: insmod vivid failed"
wait_for 600 test -e /dev/video2
echo "# vm: $(ls /dev | grep -c '^video') video nodes: $(ls /dev | grep '^video' | tr '\n' ' ')"
/vivid-check /dev/video0 /dev/video1 vivid.0 /dev/video2 2>&1
echo "# vm: vivid-check exited with status $?, up $(cut -d' ' -f1 /proc/uptime) s"

# stereo-live on the three cameras (views 1,-1), small so the CPU stage keeps up under TCG;
# camera 2 disconnected (vivid's button) once the app has matched two stats lines of three
# views, and held away until the app has shown depth from the reference and view 1 alone (a
# stats line says so): vivid registers a disconnected node again only once every user has
# closed it, so this shell holds it open until then, however slowly the app runs; stopped once
# it has printed a stats line of three views again after the reconnect
if [ -x /stereo-live ]; then
  /stereo-live --left /dev/video0 --right /dev/video1 --view /dev/video2 --baselines 1,-1 \
    --set camera.width=320 --set camera.height=180 --set camera.fps=25 \
    --set camera.format=yuyv --set stereo.disparities=16 --headless --frames 0 --backend cpu \
    --stats-json /views.json >/views.out 2>&1 &
  pid=$!
  three='^frame .*| 3 views 1,-1 sides | '
  wait_for 1200 lines_after /views.out "$three" 1
  exec 3<>/dev/video2
  /vivid-check --disconnect /dev/video2
  echo "views-press| $?"
  wait_for 1200 lines_after /views.out 'view 2 lost, depth from the reference and view 1' 0
  exec 3<&-
  wait_for 1200 grep -qs 'camera 2 /dev/video2: reconnected' /views.out
  n3=$(grep -c "$three" /views.out)
  wait_for 1200 lines_after /views.out "$three" "$n3"
  kill $pid
  wait $pid
  echo "views-status| $?"
  sed 's/^/views-out| /' /views.out
  sed 's/^/views-json| /' /views.json
  echo "# vm: stereo-live on three cameras done, up $(cut -d' ' -f1 /proc/uptime) s"
fi

# stereo-live --list-cameras: vivid again with more kinds of nodes (instance 1: video capture,
# video output, metadata capture: /dev/video1..3), the by-path links udev would make, and a node
# with no device behind it (minor 250 of videodev's major 81)
if [ -x /stereo-live ]; then
  rmmod vivid || echo "# vm: rmmod vivid failed"
  insmod /lib/modules/vivid.ko n_devs=2 node_types=0x1,0x20101 || echo "# vm: insmod vivid failed"
  wait_for 600 test -e /dev/video3
  mkdir -p /dev/v4l/by-path
  ln -s ../../video0 /dev/v4l/by-path/platform-vivid.0-video-index0
  ln -s ../../video1 /dev/v4l/by-path/platform-vivid.1-video-index0
  ln -s ../../video3 /dev/v4l/by-path/platform-vivid.1-video-index2
  mknod /dev/video9 c 81 250
  echo "# vm: $(ls /dev | grep -c '^video') video nodes: $(ls /dev | grep '^video' | tr '\n' ' ')"
  /stereo-live --list-cameras >/list.out 2>/list.err
  echo "list-status| $?"
  sed 's/^/list-out| /' /list.out
  sed 's/^/list-err| /' /list.err
  # the settings it suggests, as a configuration file, must capture: 3 pairs through the app
  sed -n '/for the configuration file:/,/^or on the command line:/p' /list.out |
    grep "$(printf '^\t')" >/rig.ini
  /stereo-live --config /rig.ini --headless --frames 3 --backend cpu >/run.out 2>&1
  echo "run-status| $?"
  sed 's/^/run-out| /' /run.out
  # while the app streams from both cameras, they are still listed (listing never streams)
  /stereo-live --config /rig.ini --headless --frames 0 --backend cpu >/busy.out 2>&1 &
  pid=$!
  wait_for 1200 grep -qs '^frame [1-9]' /busy.out
  /stereo-live --list-cameras >/list2.out 2>&1
  echo "list2-status| $?"
  kill $pid
  wait $pid
  echo "busy-status| $?"
  sed 's/^/list2-out| /' /list2.out
  sed 's/^/busy-out| /' /busy.out
fi
poweroff -f
