#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_fuzz.sh — the fuzzing harnesses (tests/fuzz/: image, pfm, mapfile, calib_yaml,
# camera_info, config, uri), as TAP.
#
# By default (ninja test) each harness replays its corpus, tests/fuzz/corpus/NAME/ (the seeds and
# every crasher kept there), under ASan+UBSan: the harnesses are linked with tests/fuzz/replay.c
# instead of libFuzzer in the ASan+UBSan folder of tests/test_asan.sh (build-asan, gcc), so the
# two share that build. A harness passes when every input ran without a sanitizer report.
#
# With STEREO_DEEP=1 (tests/run --deep, ninja test-deep) each harness fuzzes for a bounded time
# instead: tools/fuzz.sh NAME SECONDS, which builds them in build-fuzz/ (clang's libFuzzer, ASan
# + UBSan) and starts from the same corpus, so every crasher kept is replayed first. A harness
# passes when the run ends by its time limit with no crash, leak, sanitizer report or hang
# (libFuzzer's exit status 0) after more inputs than its seeds. A longer run of one reader:
# tools/fuzz.sh NAME 3600.
# Env: STEREO_ASAN_DIR (default build-asan); deep: STEREO_FUZZ_SECONDS (default 60 per harness),
# STEREO_FUZZ_DIR (default build-fuzz).
set -u
cd "$(dirname "$0")/.." || exit 1
W=$(mktemp -d "${TMPDIR:-/tmp}/test_fuzz.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
names=$(tools/fuzz.sh --list)
n=0
tap=()

if [ "${STEREO_DEEP:-0}" = 1 ]; then
  S=${STEREO_FUZZ_SECONDS:-60}
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
fi

D=${STEREO_ASAN_DIR:-build-asan}
. tests/asan_build.sh # asan_build TARGET...: configures and builds the folder $D, locked
if ! asan_build fuzz-replay >"$W/build.log" 2>&1; then
  echo "Bail out! the ASan+UBSan build of the replay harnesses in $D failed:"
  tail -20 "$W/build.log" | sed 's/^/# /'
  exit 1
fi
mkdir "$W/reports"
export ASAN_OPTIONS="halt_on_error=1:exitcode=86:detect_leaks=1:log_path=$W/reports/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86:log_path=$W/reports/ubsan"
for name in $names; do
  n=$((n + 1))
  rm -f "$W"/reports/*
  "$D/build/fuzz/replay_$name" "tests/fuzz/corpus/$name" >"$W/$name.log" 2>&1
  rc=$?
  inputs=$(sed -n 's/^replayed \([0-9]*\) inputs$/\1/p' "$W/$name.log")
  if [ "$rc" -eq 0 ] && [ "${inputs:-0}" -gt 0 ] && ! compgen -G "$W/reports/*" >/dev/null; then
    tap+=("ok $n - fuzz_$name: its corpus ($inputs inputs) under ASan+UBSan, no finding")
  else
    tap+=("not ok $n - fuzz_$name: its corpus under ASan+UBSan: exit status $rc after ${inputs:-?} inputs")
    while IFS= read -r l; do tap+=("#   $l"); done < <(cat "$W/$name.log" "$W"/reports/* 2>/dev/null | head -40)
  fi
done
echo "1..$n"
printf '%s\n' "${tap[@]}"
exit 0
