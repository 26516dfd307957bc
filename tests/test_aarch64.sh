#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_aarch64.sh — the quick aarch64 set of tools/cross-aarch64.sh (the build cross-
# compiled, the stage's unit tests with the NEON kernels and stereo-match's output under
# qemu-user, byte for byte against this machine's), as TAP; skipped, visibly, when the cross
# tools or the arm64 libraries are not installed (./setup.sh installs them). With STEREO_DEEP=1
# (tests/run --deep, ninja test-deep) the whole set: tools/cross-aarch64.sh --all. Run from the
# repo root (tests/run does).
set -u
cd "$(dirname "$0")/.." || exit 1
set=""
[ "${STEREO_DEEP:-0}" = 1 ] && set=--all
tools/cross-aarch64.sh $set 2>"${TMPDIR:-/tmp}/test_aarch64.$$.err"
rc=$?
if [ $rc -eq 77 ]; then
  echo "ok 1 - aarch64 cross build and qemu run # SKIP $(cat "${TMPDIR:-/tmp}/test_aarch64.$$.err")"
  echo "1..1"
  rc=0
else
  cat "${TMPDIR:-/tmp}/test_aarch64.$$.err" >&2
fi
rm -f "${TMPDIR:-/tmp}/test_aarch64.$$.err"
exit $rc
