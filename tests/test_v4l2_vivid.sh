#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_v4l2_vivid.sh — the V4L2 capture pair against real V4L2 without cameras: boots
# Debian's kernel under qemu-system-x86_64 (TCG), loads the vivid driver with two capture
# devices, runs build/v4l2/vivid-check inside (tests/v4l2/vivid_check.c) and re-emits its TAP:
# mmap streaming, pairing, controls, lost cameras, errors (1-16), and zero-copy USERPTR
# streaming into the program's own buffers with its ownership rules, reconnects and fallbacks
# (17-26). About 30 s.
#
# Kernel: the package linux-image-amd64 depends on, fetched with `apt-get download` into
# $STEREO_BUILD/v4l2-vm/ (vmlinuz and the 12 media modules are kept there between runs; the
# .deb is not). Needs qemu-system-x86, busybox-static, cpio (setup.sh installs them); prints one
# SKIP line when qemu or the kernel package cannot be had. The VM is killed after 180 s.
# Run from anywhere: bash tests/test_v4l2_vivid.sh   Env: STEREO_BUILD (default build).
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
W=$B/v4l2-vm
PROG=$B/v4l2/vivid-check
VM_TIMEOUT=180
MODULES="rc-core cec mc videodev videobuf2-common videobuf2-v4l2 videobuf2-memops
videobuf2-vmalloc videobuf2-dma-contig v4l2-dv-timings v4l2-tpg vivid"
t_start=$SECONDS

skip() { echo "1..1"; echo "ok 1 # SKIP $*"; exit 0; }
bail() { echo "Bail out! $*"; exit 1; }

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (qemu-system-x86)"
command -v cpio >/dev/null || skip "cpio not installed"
[ -x /bin/busybox ] || command -v busybox >/dev/null || skip "busybox not installed (busybox-static)"
[ -x "$PROG" ] || bail "$PROG is not built (ninja $PROG)"
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
tests/v4l2/mkinitramfs.sh "$K/modules" "$PROG" "$R/initramfs.gz" || bail "initramfs build failed"
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
grep -aE '^(1\.\.[0-9]+|(not )?ok [0-9]+|# |Bail out!)' "$log" >"$R/tap.txt"
cat "$R/tap.txt"
plan=$(grep -m1 -oE '^1\.\.[0-9]+' "$R/tap.txt" | cut -d. -f3)
ran=$(grep -cE '^(not )?ok [0-9]+' "$R/tap.txt")
echo "# $pkg, VM ran $vm_s s (qemu exit $rc), whole test $((SECONDS - t_start)) s"
status=0
grep -qE '^not ok' "$R/tap.txt" && status=1
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "not ok $((ran + 1)) - the VM did not finish within $VM_TIMEOUT s (log: $W/console.log)"
  tail -20 "$log" | sed 's/^/#   /'
  status=1
elif [ -z "$plan" ] || [ "$ran" -lt "$plan" ]; then
  echo "not ok $((ran + 1)) - vivid-check ran ${ran} of ${plan:-?} tests (log: $W/console.log)"
  tail -20 "$log" | sed 's/^/#   /'
  status=1
fi
exit $status
