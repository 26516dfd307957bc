#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/v4l2/init.sh — /init of the vivid test VM (tests/v4l2/mkinitramfs.sh puts it there).
# Loads vivid with two capture devices, runs vivid-check, whose TAP goes to the serial console
# for tests/test_v4l2_vivid.sh to collect, and powers off.
export PATH=/bin
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
insmod /lib/modules/vivid.ko n_devs=2 node_types=0x1,0x1 || echo "# vm: insmod vivid failed"
i=0
while [ ! -e /dev/video1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
echo "# vm: $(ls /dev | grep -c '^video') video nodes: $(ls /dev | grep '^video' | tr '\n' ' ')"
/vivid-check /dev/video0 /dev/video1 vivid.0 2>&1
echo "# vm: vivid-check exited with status $?, up $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
