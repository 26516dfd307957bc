#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/v4l2/mkinitramfs.sh — builds the initramfs of the vivid test VM.
#
#   tests/v4l2/mkinitramfs.sh MODULE-DIR PROGRAM OUTPUT.cpio.gz [MORE-PROGRAMS...]
#
# MODULE-DIR holds the .ko files init.sh loads; PROGRAM is vivid-check (/vivid-check in the VM),
# MORE-PROGRAMS (build/stereo-live) go to /NAME; each is copied with the shared libraries and the
# loader it needs (ldd), so the VM runs the binaries the build made. Busybox (busybox-static)
# provides the shell, insmod, rmmod, mount, mknod, sed and poweroff.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 MODULE-DIR PROGRAM OUTPUT [MORE-PROGRAMS...]" >&2; exit 2; }
mods=$1 prog=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || busybox=/bin/busybox
[ -x "$busybox" ] || { echo "mkinitramfs: busybox not found (apt-get install busybox-static)" >&2; exit 1; }
if ldd "$busybox" >/dev/null 2>&1; then
  echo "mkinitramfs: $busybox is not statically linked (apt-get install busybox-static)" >&2
  exit 1
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/vivid-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/bin "$root"/dev "$root"/proc "$root"/sys "$root"/lib/modules
cp "$busybox" "$root/bin/busybox"
for a in sh mount insmod rmmod mknod mkdir ln sed sleep kill cat cut ls grep tr uname poweroff; do ln -s busybox "$root/bin/$a"; done
cp "$here/init.sh" "$root/init"
chmod 755 "$root/init"
cp "$mods"/*.ko "$root/lib/modules/"
cp "$prog" "$root/vivid-check"
for p in "$@"; do cp "$p" "$root/$(basename "$p")"; done
# shared libraries and the loader, at the paths the binaries look for them
for lib in $(for p in "$prog" "$@"; do ldd "$p"; done | grep -o '/[^ ]*' | sort -u); do
  [ -e "$root$lib" ] && continue
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
