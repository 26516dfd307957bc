#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/cross-aarch64.sh — the non-CUDA build cross-compiled for aarch64 (a Jetson's CPU) and
# run under qemu-user on this machine, NEON kernels included, as TAP.
#
#   tools/cross-aarch64.sh          the quick set (about a minute on 2 cores): builds only what
#                                   it runs, the stage's unit tests (test_stages but its mi warm
#                                   restart; test_sgm_simd: the NEON path against the reference
#                                   on 3 random cases, its widest-range and more-views cases), and
#                                   stereo-match's PFM output under qemu equal byte for byte to
#                                   this machine's build on generated pairs
#   tools/cross-aarch64.sh --all    the whole set: every program and test the arm64 libraries
#                                   allow, every C unit test, the CLI tests (test_cli.sh,
#                                   test_match_ux.sh) on the aarch64 programs, 1000 random cases
#                                   in test_sgm_simd and more comparisons (ninja test-deep)
#
# Under qemu the mi cost takes about 6 s per stage (20 times the native time): the quick set
# runs 3 random cases of test_sgm_simd (STEREO_SGM_SIMD_CASES overrides) and leaves out
# test_stages' mi warm restart (a minute; STEREO_TEST_SKIP), which --all runs.
#
# Needs (setup.sh installs them): gcc-aarch64-linux-gnu, qemu-user, and Debian's arm64 packages
# of the libraries (dpkg --add-architecture arm64; libpng-dev:arm64, libcmocka-dev:arm64, ...).
# Without them it prints what is missing and exits 77. The aarch64 build goes to build-aarch64/
# (./configure --out, without GStreamer); the comparisons need this machine's build in
# $STEREO_BUILD (default build). Exit status: 0 when every check passed, 1 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 1
all=0
case "${1:-}" in
  --all) all=1 ;;
  "") ;;
  *) echo "usage: tools/cross-aarch64.sh [--all]" >&2; exit 2 ;;
esac
B=${STEREO_BUILD:-build}
X=build-aarch64            # the folder ./configure --out makes
XB=$X/build
CROSS=aarch64-linux-gnu-gcc

missing=""
command -v "$CROSS" >/dev/null 2>&1 || missing="$missing gcc-aarch64-linux-gnu"
QEMU=$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)
[ -n "$QEMU" ] || missing="$missing qemu-user"
for lib in libcmocka libpng16 libturbojpeg libyaml-0 libz; do
  ls /usr/lib/aarch64-linux-gnu/$lib.so* >/dev/null 2>&1 || missing="$missing $lib:arm64"
done
if [ -n "$missing" ]; then
  echo "cross-aarch64: missing:$missing (./setup.sh installs them)" >&2
  exit 77
fi
for x in stereo-match stereo-synth; do
  [ -x "$B/$x" ] || { echo "Bail out! $B/$x is not built (ninja)"; exit 1; }
done

. tests/tap.sh
failed=0
fail() { failed=$((failed + 1)); not_ok "$@"; }
W=$(mktemp -d "${TMPDIR:-/tmp}/cross-aarch64.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
t0=$SECONDS

# 1. configure (when CC or the flags changed) and build
if ! grep -qx "cc = $CROSS" "$XB/config.ninja" 2>/dev/null; then
  CC=$CROSS ./configure --no-cuda --no-gst --out=$X >"$W/configure.log" 2>&1 ||
    { echo "Bail out! configure for aarch64 failed: $(tail -3 "$W/configure.log")"; exit 1; }
fi
quick_targets="build/stereo-match build/tests/test_stages build/tests/test_sgm_simd"
if [ $all = 1 ]; then
  # everything but what needs libraries without an arm64 package here (ninja -k goes on past
  # those; the list below is what must build)
  ninja -C $X -k 0 all >"$W/build.log" 2>&1
  targets="$quick_targets build/stereo-eval build/stereo-synth build/stereo-live build/calib-maps
    build/gpu/stereo-live-headless build/libstereodepth.so"
else
  targets=$quick_targets
fi
# shellcheck disable=SC2086
if ninja -C $X $targets >>"$W/build.log" 2>&1; then
  ok "aarch64 build ($targets)"
else
  fail "aarch64 build" "$(grep -E 'error|FAILED' "$W/build.log" | head -15)"
  echo "1..$n"
  exit 1
fi

# 2. the unit tests under qemu (the NEON path against the reference in test_sgm_simd)
# the arm64 loader: Debian's multiarch libc6:arm64, else the cross toolchain's copy
QL=""
[ -e /lib/ld-linux-aarch64.so.1 ] || QL="-L /usr/aarch64-linux-gnu"
# shellcheck disable=SC2086
run_qemu() { "$QEMU" $QL "$@"; }
unit="test_stages test_sgm_simd"
if [ $all = 1 ]; then
  unit=""
  for t in "$XB"/tests/test_*; do
    [ -x "$t" ] && unit="$unit $(basename "$t")"
  done
  export STEREO_SGM_SIMD_CASES=${STEREO_SGM_SIMD_CASES:-1000}
else
  export STEREO_SGM_SIMD_CASES=${STEREO_SGM_SIMD_CASES:-3}
  export STEREO_TEST_SKIP=${STEREO_TEST_SKIP-test_mi_stage_hierarchy_warm_restart}
fi
for t in $unit; do
  if CMOCKA_MESSAGE_OUTPUT=TAP run_qemu "$XB/tests/$t" >"$W/$t.log" 2>&1; then
    random=""
    [ "$t" = test_sgm_simd ] && random=", $STEREO_SGM_SIMD_CASES random pairs"
    [ "$t" = test_stages ] && [ -n "${STEREO_TEST_SKIP:-}" ] && random=", $STEREO_TEST_SKIP left out"
    ok "$t under qemu ($(grep -cE '^ok ' "$W/$t.log") cases$random)"
  else
    fail "$t under qemu" "$(grep -A3 -E '^not ok|ERROR|Bail' "$W/$t.log" | head -15)"
  fi
done

# 3. stereo-match on aarch64 (NEON, and the reference kernels) against this machine's build,
#    byte for byte: PFM left disparity and right disparity
"$B/stereo-synth" --size 161x97 --seed 3 "$W/small" >/dev/null 2>&1 &&
  "$B/stereo-synth" --size 320x240 --seed 5 "$W/pair" >/dev/null 2>&1 ||
  { echo "Bail out! stereo-synth failed"; exit 1; }
# CONF: --confidence into a PNG of each side's own, compared too
configs=("-d 32" "-d 48 --paths 8 --cost census" "-d 64 --cost bt --min-disparity 3 CONF")
if [ $all = 1 ]; then
  configs+=("-d 32 --cost ad --paths 4 --uniqueness 10 CONF" "-d 16 --cost mi" "-d 48 --method bm"
            "-d 64 --p1 10 --p2 300 --no-subpixel --no-median" "-d 48 --no-lr --window 5")
fi
k=0
for scene in small pair; do
  for cfg in "${configs[@]}"; do
    k=$((k + 1))
    for kernels in auto reference; do
      for side in x a; do # x: this machine's build, a: aarch64 under qemu
        run=""
        [ $side = a ] && run=run_qemu
        bin=$B/stereo-match
        [ $side = a ] && bin=$XB/stereo-match
        args=${cfg/CONF/--confidence $W/$side$k.c.png}
        [ "$args" = "$cfg" ] && : >"$W/$side$k.c.png"
        case $cfg in # the right disparity needs the LR check
          *--no-lr*) : >"$W/$side$k.r.pfm" ;;
          *) args="$args --right $W/$side$k.r.pfm" ;;
        esac
        # shellcheck disable=SC2086
        STEREO_CPU_KERNELS=$kernels $run "$bin" --backend cpu $args "$W/$scene/left.png" \
          "$W/$scene/right.png" "$W/$side$k.pfm" >"$W/$side.log" 2>&1
      done
      if [ -s "$W/x$k.pfm" ] && cmp -s "$W/x$k.pfm" "$W/a$k.pfm" &&
         cmp -s "$W/x$k.r.pfm" "$W/a$k.r.pfm" && cmp -s "$W/x$k.c.png" "$W/a$k.c.png"; then
        ok "$scene $cfg ($kernels kernels): aarch64 = x86-64 byte for byte"
      else
        fail "$scene $cfg ($kernels kernels): aarch64 differs from x86-64" \
          "$(cat "$W/x.log" "$W/a.log"; cmp "$W/x$k.pfm" "$W/a$k.pfm")"
      fi
      rm -f "$W"/[xa]$k.*
    done
  done
done

# 4. --all: the CLI tests on the aarch64 programs (qemu wrappers in a build folder of their own;
#    STEREO_SANITIZER leaves out the address-space and RSS limits and valgrind, which measure
#    qemu there rather than the program)
if [ $all = 1 ]; then
  Q=$W/qemu-build
  mkdir -p "$Q/gpu"
  for p in stereo-match stereo-eval stereo-synth stereo-live calib-maps gpu/stereo-live-headless; do
    [ -x "$XB/$p" ] || continue
    printf '#!/bin/sh\nexec "%s" %s "%s" "$@"\n' "$QEMU" "$QL" "$PWD/$XB/$p" >"$Q/$p"
    chmod +x "$Q/$p"
  done
  for s in test_cli.sh test_match_ux.sh; do
    STEREO_BUILD=$Q STEREO_SANITIZER=qemu bash "tests/$s" >"$W/$s.log" 2>&1
    nf=$(grep -cE '^not ok' "$W/$s.log")
    np=$(grep -cE '^ok ' "$W/$s.log")
    if [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]; then
      ok "$s on the aarch64 programs ($np passed)"
    else
      fail "$s on the aarch64 programs ($np passed, $nf failed)" \
        "$(grep -A4 -E '^not ok|Bail' "$W/$s.log" | head -20)"
    fi
  done
fi

echo "# aarch64: $((SECONDS - t0)) s"
echo "1..$n"
[ "$failed" -eq 0 ]
