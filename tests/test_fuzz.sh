#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_fuzz.sh — every libFuzzer harness (tests/fuzz/: image, pfm, mapfile, calib_yaml,
# camera_info, config, uri) for a bounded time, as TAP: tools/fuzz.sh NAME SECONDS, which builds them
# in build-fuzz/ (clang, ASan + UBSan) and starts from the seed corpus tests/fuzz/corpus/NAME/,
# so every crasher kept there is replayed first. A harness passes when the run ends by its time
# limit with no crash, leak, sanitizer report or hang (libFuzzer's exit status 0) after more
# inputs than its seeds. A longer run of one reader: tools/fuzz.sh NAME 3600.
# Env: STEREO_FUZZ_SECONDS (default 5 per harness; 60 with STEREO_DEEP=1: ninja test-deep),
# STEREO_FUZZ_DIR (default build-fuzz).
set -u
cd "$(dirname "$0")/.." || exit 1
S=5
[ "${STEREO_DEEP:-0}" = 1 ] && S=60
S=${STEREO_FUZZ_SECONDS:-$S}
D=${STEREO_FUZZ_DIR:-build-fuzz}
W=$(mktemp -d "${TMPDIR:-/tmp}/test_fuzz.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
names=$(tools/fuzz.sh --list)
n=0
tap=()
for name in $names; do
  n=$((n + 1))
  tools/fuzz.sh "$name" "$S" >"$W/$name.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$W/$name.log")
  seeds=$(find "tests/fuzz/corpus/$name" -type f | wc -l)
  cov=$(grep -E '^#[0-9]+.*DONE' "$W/$name.log" | sed -n 's/.* cov: \([0-9]*\) .*/\1/p')
  if [ "$rc" -eq 0 ] && [ "${runs:-0}" -gt "$seeds" ]; then
    tap+=("ok $n - fuzz_$name: $runs inputs in $S s from $seeds seeds, coverage $cov edges, no finding")
  else
    tap+=("not ok $n - fuzz_$name: exit status $rc after ${runs:-?} inputs (log and crash below)")
    while IFS= read -r l; do tap+=("#   $l"); done < <(grep -vE '^#[0-9]+' "$W/$name.log" | tail -40)
  fi
done
echo "1..$n"
printf '%s\n' "${tap[@]}"
exit 0
