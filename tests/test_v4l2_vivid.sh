#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_v4l2_vivid.sh — the V4L2 capture against real V4L2 without cameras: boots
# Debian's kernel under qemu-system-x86_64 (TCG), loads the vivid driver with three capture
# devices, runs build/v4l2/vivid-check inside (tests/v4l2/vivid_check.c) and re-emits its TAP:
# the pair on the first two: mmap streaming, pairing, controls, lost cameras, errors (1-16), and
# zero-copy USERPTR streaming into the program's own buffers with its ownership rules, reconnects
# and fallbacks (17-26); all three in one capture: sets of three, each camera's skew to the
# reference, one camera disconnected and back (no sets meanwhile, or sets of the other two with
# partial_sets, the reference lost), zero copy with three, bad device lists (27-37); then
# build/stereo-live --list-cameras against vivid reloaded with more kinds of nodes: the grouping,
# node kinds, links, vivid's formats, sizes and rates, the suggested settings, that the app
# captures on them, and the same list while the app streams (38-47); stereo-live on the three
# cameras (three views), one of them disconnected and back under it (48-50). About 55 s.
#
# Kernel: the package linux-image-amd64 depends on, fetched with `apt-get download` into
# $STEREO_BUILD/v4l2-vm/ (vmlinuz and the 12 media modules are kept there between runs; the
# .deb is not). Needs qemu-system-x86, busybox-static, cpio (setup.sh installs them); prints one
# SKIP line when qemu or the kernel package cannot be had. The VM is killed after 900 s (a hang:
# ten times its run on an idle machine; a loaded host slows the emulated VM down, and every wait
# inside it is for a state: tests/v4l2/init.sh, vivid_check.c).
# Run from anywhere: bash tests/test_v4l2_vivid.sh   Env: STEREO_BUILD (default build).
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
W=$B/v4l2-vm
PROG=$B/v4l2/vivid-check
LIVE=$B/stereo-live
VM_TIMEOUT=900
MODULES="rc-core cec mc videodev videobuf2-common videobuf2-v4l2 videobuf2-memops
videobuf2-vmalloc videobuf2-dma-contig v4l2-dv-timings v4l2-tpg vivid"
t_start=$SECONDS

skip() { echo "1..1"; echo "ok 1 # SKIP $*"; exit 0; }
bail() { echo "Bail out! $*"; exit 1; }

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (qemu-system-x86)"
command -v cpio >/dev/null || skip "cpio not installed"
[ -x /bin/busybox ] || command -v busybox >/dev/null || skip "busybox not installed (busybox-static)"
[ -x "$PROG" ] || bail "$PROG is not built (ninja $PROG)"
[ -x "$LIVE" ] || bail "$LIVE is not built (ninja $LIVE)"
mkdir -p "$W" || bail "cannot create $W"

# ---- the kernel: vmlinuz + modules of the package linux-image-amd64 depends on -----------------
apt_updated=0
apt_update() { # once per run, and only where we may
  [ $apt_updated -eq 0 ] || return 1
  apt_updated=1
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  echo "# apt-get update (package lists stale or missing)"
  $sudo apt-get update -q >"$W/apt-update.log" 2>&1
}
kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
pkg=$(kernel_package)
[ -n "$pkg" ] || { apt_update && pkg=$(kernel_package); }
if [ -z "$pkg" ]; then
  # no package lists: use a kernel fetched earlier, if any
  pkg=$(ls -t "$W/kernel" 2>/dev/null | head -1)
  [ -n "$pkg" ] || skip "cannot resolve linux-image-amd64 (apt-cache; see $W/apt-update.log)"
fi
K=$W/kernel/$pkg
if [ ! -f "$K/vmlinuz" ]; then
  t0=$SECONDS
  dl=$(mktemp -d "$W/download.XXXXXX") || bail "cannot create a directory in $W"
  fetch() { (cd "$dl" && apt-get download "$pkg") >"$dl/download.log" 2>&1; }
  if ! fetch && ! { apt_update && fetch; }; then
    cp "$dl/download.log" "$W/download.log"; rm -rf "$dl"
    skip "cannot download $pkg (apt-get download; see $W/download.log)"
  fi
  deb=$(ls "$dl"/*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || { rm -rf "$dl"; skip "apt-get download $pkg left no .deb"; }
  dpkg-deb -x "$deb" "$dl/x" || bail "dpkg-deb -x $deb failed"
  mkdir -p "$dl/kernel/modules" || bail "cannot create $dl/kernel"
  cp "$dl"/x/boot/vmlinuz-* "$dl/kernel/vmlinuz" || bail "no vmlinuz in $deb"
  for m in $MODULES; do
    f=$(find "$dl/x/lib/modules" -name "$m.ko*" | head -1)
    [ -n "$f" ] || bail "module $m not in $deb"
    case $f in
      *.ko) cp "$f" "$dl/kernel/modules/$m.ko" ;;
      *.ko.xz) xz -dc "$f" >"$dl/kernel/modules/$m.ko" ;;
      *.ko.zst) zstd -qdc "$f" >"$dl/kernel/modules/$m.ko" ;;
      *) bail "module $f: unknown compression" ;;
    esac || bail "cannot unpack $f"
  done
  # another run may have fetched it meanwhile: the first one in wins
  mkdir -p "$W/kernel" && mv -T "$dl/kernel" "$K" 2>/dev/null
  rm -rf "$dl"
  [ -f "$K/vmlinuz" ] || bail "could not store the kernel in $K"
  echo "# fetched $pkg in $((SECONDS - t0)) s"
fi

# ---- initramfs and the VM (in a directory of this run's own: runs may overlap) --------------
R=$(mktemp -d "$W/run.XXXXXX") || bail "cannot create a directory in $W"
trap 'rm -rf "$R"' EXIT
tests/v4l2/mkinitramfs.sh "$K/modules" "$PROG" "$R/initramfs.gz" "$LIVE" ||
  bail "initramfs build failed"
t0=$SECONDS
timeout -k 5 $VM_TIMEOUT qemu-system-x86_64 -accel tcg,thread=multi -smp 2 -m 512 \
  -kernel "$K/vmlinuz" -initrd "$R/initramfs.gz" \
  -append "console=ttyS0 quiet loglevel=1 panic=-1" \
  -nographic -no-reboot </dev/null >"$R/console.log" 2>&1
rc=$?
vm_s=$((SECONDS - t0))
log=$R/console.txt
tr -d '\r' <"$R/console.log" >"$log"
cp "$log" "$W/console.log.$$" && mv "$W/console.log.$$" "$W/console.log" # the last run's, to read

# ---- results ----------------------------------------------------------------------------------
# vivid-check's TAP without its plan (the listing checks below follow its tests; the plan is last)
grep -aE '^(1\.\.[0-9]+|(not )?ok [0-9]+|# |Bail out!)' "$log" >"$R/tap.txt"
grep -vE '^1\.\.[0-9]+' "$R/tap.txt"
plan=$(grep -m1 -oE '^1\.\.[0-9]+' "$R/tap.txt" | cut -d. -f3)
ran=$(grep -cE '^(not )?ok [0-9]+' "$R/tap.txt")
echo "# $pkg, VM ran $vm_s s (qemu exit $rc), whole test $((SECONDS - t_start)) s"
status=0
n=$ran
grep -qE '^not ok' "$R/tap.txt" && status=1
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "not ok $((n += 1)) - the VM did not finish within $VM_TIMEOUT s (log: $W/console.log)"
  tail -20 "$log" | sed 's/^/#   /'
  status=1
elif [ -z "$plan" ] || [ "$ran" -lt "$plan" ]; then
  echo "not ok $((n += 1)) - vivid-check ran ${ran} of ${plan:-?} tests (log: $W/console.log)"
  tail -20 "$log" | sed 's/^/#   /'
  status=1
fi

# ---- stereo-live --list-cameras in the VM (tests/v4l2/init.sh: vivid reloaded with instance 0 a
# video capture node, instance 1 video capture + video output + metadata capture, udev's by-path
# links made by hand, /dev/video9 with no device behind it) --------------------------------------
check() { # ok?, name, diagnostic lines...
  local ok=$1 name=$2; shift 2
  n=$((n + 1))
  if [ "$ok" -eq 0 ]; then echo "ok $n - $name"; else
    echo "not ok $n - $name"; status=1
    for d in "$@"; do printf '%s\n' "$d" | sed 's/^/#   /'; done
  fi
}
sed -n 's/^list-out| //p' "$log" >"$R/list.txt"
sed -n 's/^list-err| //p' "$log" >"$R/list-err.txt"
sed -n 's/^run-out| //p' "$log" >"$R/run.txt"
list_rc=$(sed -n 's/^list-status| //p' "$log")
run_rc=$(sed -n 's/^run-status| //p' "$log")
T=$(printf '\t')
check "$([ "$list_rc" = 0 ] && [ ! -s "$R/list-err.txt" ] && echo 0 || echo 1)" \
  "--list-cameras: exit status 0 and nothing on stderr (got ${list_rc:-no run})" \
  "$(head -5 "$R/list-err.txt")"
# grouped per device (card, bus) as v4l2-ctl --list-devices: the headings and their nodes
want=$(printf '%s\n' "vivid (platform:vivid-000), driver vivid:" "$T/dev/video0: video capture" \
  "vivid (platform:vivid-001), driver vivid:" "$T/dev/video1: video capture" \
  "$T/dev/video2: video output" "$T/dev/video3: metadata capture" "Not listed:" \
  "$T/dev/video9: no device behind the node (No such device or address)")
got=$(grep -E "^[A-Za-z]|^$T/dev/video" "$R/list.txt" | grep -vE '^(The first|or on)')
check "$([ "$got" = "$want" ] && echo 0 || echo 1)" \
  "--list-cameras: vivid's two devices with their 4 nodes, each node's kind, video9 not listed with why" \
  "want:" "$want" "got:" "$got"
# the by-path links under their nodes; nothing about formats under the output and metadata nodes
node_block() { awk -v n="$T$1:" 'index($0, n) == 1 {p = 1; next} /^\t\/|^[^\t]/ {p = 0} p' "$R/list.txt"; }
b0=$(node_block /dev/video0 | head -1) b1=$(node_block /dev/video1 | head -1)
b2=$(node_block /dev/video2) b3=$(node_block /dev/video3)
check "$([ "$b0" = "$T    /dev/v4l/by-path/platform-vivid.0-video-index0" ] &&
  [ "$b1" = "$T    /dev/v4l/by-path/platform-vivid.1-video-index0" ] && [ -z "$b2" ] &&
  [ "$b3" = "$T    /dev/v4l/by-path/platform-vivid.1-video-index2" ] && echo 0 || echo 1)" \
  "--list-cameras: each node's by-path link, no formats for the output and metadata nodes" \
  "video0: $b0" "video1: $b1" "video2: $b2" "video3: $b3"
# vivid's webcam input (vivid-vid-cap.c): sizes 320x180 640x360 640x480 1280x720 1920x1080
# 3840x2160; size i of the 6 lists the first 2 * (6 - i) of the intervals 1/1 1/2 1/4 1/5 1/10
# 2/25 1/15 1/25 1/30 1/40 1/50 1/60
sizes=(320x180 640x360 640x480 1280x720 1920x1080 3840x2160)
rates=(1 2 4 5 10 12.5 15 25 30 40 50 60)
want="$T    YUYV 'YUYV 4:2:2' (format = yuyv)"
for i in 0 1 2 3 4 5; do
  r=$(printf '%s, ' "${rates[@]:0:$((2 * (6 - i)))}")
  want+=$'\n'"$T        ${sizes[$i]}: ${r%, } fps"
done
for node in /dev/video0 /dev/video1; do
  got=$(node_block $node | grep -A6 -F "YUYV 'YUYV 4:2:2'")
  check "$([ "$got" = "$want" ] && echo 0 || echo 1)" \
    "--list-cameras: $node YUYV with vivid's 6 sizes and the rates of each" "want:" "$want" "got:" "$got"
done
# the other formats the app takes, and formats with the same sizes said once
for node in /dev/video0 /dev/video1; do
  blk=$(node_block $node)
  nf=$(grep -cE "^$T    [^ /]{4} '" <<<"$blk")
  same=$(grep -c ': sizes and rates as YUYV$' <<<"$blk")
  check "$(grep -qxF "$T    GREY '8-bit Greyscale' (format = grey): sizes and rates as YUYV" <<<"$blk" &&
    grep -qxF "$T    RGB3 '24-bit RGB 8-8-8' (format = rgb24): sizes and rates as YUYV" <<<"$blk" &&
    grep -qxF "$T    UYVY 'UYVY 4:2:2': sizes and rates as YUYV" <<<"$blk" &&
    [ "$nf" -ge 40 ] && [ "$same" -eq $((nf - 1)) ] && echo 0 || echo 1)" \
    "--list-cameras: $node lists $nf formats, GREY (grey) and RGB3 (rgb24) among them, $same as YUYV" \
    "$(grep -E "GREY|RGB3|UYVY" <<<"$blk")"
done
# the settings for the first two cameras: their by-path names, the 640x480 YUYV both offer at the
# fastest rate both list there (25)
want=$(printf '%s\n' "$T[source]" "${T}type = v4l2" "$T[camera]" \
  "${T}left = /dev/v4l/by-path/platform-vivid.0-video-index0" \
  "${T}right = /dev/v4l/by-path/platform-vivid.1-video-index0" "${T}width = 640" \
  "${T}height = 480" "${T}fps = 25" "${T}format = yuyv")
got=$(sed -n '/for the configuration file:$/,/^or on the command line:$/p' "$R/list.txt" | grep "^$T")
setl=$(sed -n '/^or on the command line:$/,$p' "$R/list.txt" | tr -d '\\\n\t')
check "$([ "$got" = "$want" ] && [ "$setl" = "or on the command line:stereo-live --source v4l2 --set camera.left=/dev/v4l/by-path/platform-vivid.0-video-index0 --set camera.right=/dev/v4l/by-path/platform-vivid.1-video-index0     --set camera.width=640 --set camera.height=480 --set camera.fps=25 --set camera.format=yuyv" ] && echo 0 || echo 1)" \
  "--list-cameras: [camera] settings and --set options for the two capture nodes, 640x480 YUYV 25 fps" \
  "want:" "$want" "got:" "$got" "$setl"
# ... which capture: the app on those settings as a configuration file, 3 pairs
check "$([ "$run_rc" = 0 ] && grep -q '^stereo-live: 3 frames' "$R/run.txt" &&
  grep -q 'left camera /dev/v4l/by-path/platform-vivid.0-video-index0' "$R/run.txt" && echo 0 || echo 1)" \
  "the suggested settings capture: stereo-live --config on them ran 3 pairs (exit ${run_rc:-no run})" \
  "$(tail -5 "$R/run.txt")"
# ... and while the app streams from both, they are listed all the same
sed -n 's/^list2-out| //p' "$log" >"$R/list2.txt"
sed -n 's/^busy-out| //p' "$log" >"$R/busy.txt"
list2_rc=$(sed -n 's/^list2-status| //p' "$log")
busy_rc=$(sed -n 's/^busy-status| //p' "$log")
streamed=$(grep -c '^frame ' "$R/busy.txt")
check "$([ "$list2_rc" = 0 ] && [ "$busy_rc" = 0 ] && [ "$streamed" -ge 1 ] &&
  cmp -s "$R/list.txt" "$R/list2.txt" && echo 0 || echo 1)" \
  "--list-cameras while the app streams from both cameras: the same list (exit ${list2_rc:-no run}; the app: exit ${busy_rc:-?}, $streamed stats lines)" \
  "$(diff "$R/list.txt" "$R/list2.txt" | head -10)" "$(tail -3 "$R/busy.txt")"

# ---- stereo-live on the three cameras (tests/v4l2/init.sh: views 1,-1 at 320x180, camera 2
# disconnected with vivid's button once it streams, the app stopped once it matches three views
# again after the reconnect) ---------------------------------------------------------------------
sed -n 's/^views-out| //p' "$log" >"$R/views.txt"
sed -n 's/^views-json| //p' "$log" >"$R/views.json"
views_rc=$(sed -n 's/^views-status| //p' "$log")
press_rc=$(sed -n 's/^views-press| //p' "$log")
jnum() { sed -n "s/^  \"$1\": \([-0-9.]*\),\$/\1/p" "$R/views.json"; }
jlist() { sed -n "s/^  \"$1\": \[\(.*\)\],\$/\1/p" "$R/views.json" | tr -d ' '; }
v_all=$(jnum view_frames_all) v_pair=$(jnum view_frames_pair) v_views=$(jnum views)
zc=$(grep -cE '^stereo-live: camera [012] /dev/video[012]: zero-copy \(USERPTR\)$' "$R/views.txt")
check "$([ "$views_rc" = 0 ] && [ "$v_views" = 3 ] && [ "$zc" = 3 ] && [ "${v_all:-0}" -ge 3 ] &&
  echo 0 || echo 1)" \
  "stereo-live on three vivid cameras (--view, --baselines 1,-1): exit ${views_rc:-no run}, every camera zero-copy ($zc of 3), ${v_all:-0} frames matched from all three views" \
  "$(tail -5 "$R/views.txt")"
# the loss: named, the app on the reference and view 1 meanwhile (said in its stats line), then
# three views again after the reconnect
lost_at=$(grep -n -m1 -F 'stereo-live: camera 2 /dev/video2: lost (' "$R/views.txt" | cut -d: -f1)
back_at=$(grep -n -m1 -F 'stereo-live: camera 2 /dev/video2: reconnected' "$R/views.txt" | cut -d: -f1)
said=$(grep -c 'view 2 lost, depth from the reference and view 1' "$R/views.txt")
after=$(tail -n +"${back_at:-999999}" "$R/views.txt" | grep -c '^frame .*| 3 views 1,-1 sides | ')
check "$([ "$press_rc" = 0 ] && [ -n "$lost_at" ] && [ -n "$back_at" ] && [ "$lost_at" -lt "$back_at" ] &&
  [ "${v_pair:-0}" -ge 1 ] && [ "$after" -ge 1 ] && echo 0 || echo 1)" \
  "one of three disconnected under the app: logged lost and reconnected, ${v_pair:-0} frames from the reference and view 1 meanwhile (said on $said stats lines: one a second), three views again after ($after stats lines)" \
  "$(grep -E 'camera 2|view 2 lost' "$R/views.txt" | head -5)"
# each camera's skew to the reference and its drops and losses, as the app reports them
camline=$(grep '^stereo-live: cameras: ' "$R/views.txt" | tail -1)
skews=$(jlist view_skew_ms) drops=$(jlist view_drops)
skew_ok=$(awk -F, '{for (i = 1; i <= NF; i++) if ($i > 20 || $i < -20) bad = 1} END {print bad ? 1 : 0}' <<<"$skews")
check "$([ "$skew_ok" = 0 ] && [ -n "$skews" ] && [ "$(awk -F, '{print NF}' <<<"$skews")" = 3 ] &&
  grep -qE 'cam0 \+0\.0 ms [0-9]+ drops 0 losses; cam1 [-+][0-9.]+ ms [0-9]+ drops 0 losses; cam2 [-+][0-9.]+ ms [0-9]+ drops 1 losses' <<<"$camline" &&
  echo 0 || echo 1)" \
  "the app reports each camera's skew to the reference (ms: $skews, within the max skew 20) and drops ($drops), camera 2 lost once" \
  "$camline"
echo "1..$n"
exit $status
