#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_asan.sh — the unit tests, tests/test_cli.sh and tests/test_hostile.sh again, on
# programs built with AddressSanitizer and UndefinedBehaviorSanitizer (gcc, CPU backend), as TAP.
#
# The build lives in a folder of its own, build-asan/ (./configure --out, a shadow of the source
# tree with its own build/), so build/ is left alone; this script configures and builds it with
# its own ninja call (incremental after the first run; tests/asan_build.sh, which test_fuzz.sh
# shares to replay the fuzzing corpus). One TAP line per test program.
# A sanitizer report fails the program that caused it, whatever its exit status: every report
# (ASan, LeakSanitizer, UBSan; also from the programs test_cli.sh starts, whose failures it
# expects) is written to a file of its own (log_path) and a program passes only when it left
# none; -fno-sanitize-recover=all and halt_on_error stop at the first one, exit status 86.
# test_sgm_simd runs 40 of its random cases here (its default 200 take about 150 s under ASan
# on 2 cores; the plain build runs all 200 in tests/run); with STEREO_DEEP=1 (ninja test-deep)
# the 200.
# Env: STEREO_ASAN_DIR (default build-asan), STEREO_SGM_SIMD_CASES.
set -u
cd "$(dirname "$0")/.." || exit 1
D=${STEREO_ASAN_DIR:-build-asan}
SAN=address,undefined
W=$(mktemp -d "${TMPDIR:-/tmp}/test_asan.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT

. tests/asan_build.sh # asan_build TARGET...: configures and builds the folder $D, locked
if ! asan_build programs tests >"$W/build.log" 2>&1; then
  echo "Bail out! the ASan+UBSan build in $D failed:"
  tail -20 "$W/build.log" | sed 's/^/# /'
  exit 1
fi

mkdir "$W/reports"
export ASAN_OPTIONS="halt_on_error=1:exitcode=86:detect_leaks=1:log_path=$W/reports/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86:log_path=$W/reports/ubsan"
export CMOCKA_MESSAGE_OUTPUT=TAP
[ "${STEREO_DEEP:-0}" = 1 ] || export STEREO_SGM_SIMD_CASES=${STEREO_SGM_SIMD_CASES:-40}

n=0
tap=()
# san_run NAME COMMAND...: runs a TAP-printing test program; sets why[] to what went wrong
san_run() {
  local name=$1 rc ok bad
  shift
  rm -f "$W"/reports/*
  "$@" >"$W/$name.out" 2>&1
  rc=$?
  ok=$(grep -cE '^ok [0-9]+' "$W/$name.out")
  # cmocka's TAP writes a skipped case as "not ok N # SKIP ...": a skip, as tests/run counts it
  bad=$(grep -E '^not ok [0-9]+' "$W/$name.out" | grep -vc '# SKIP')
  why=()
  [ "$rc" -eq 0 ] || why+=("exit status $rc")
  [ "$bad" -eq 0 ] || why+=("$bad failing cases:" "$(grep -E '^not ok' "$W/$name.out" | grep -v '# SKIP' | head -10)")
  [ "$ok" -gt 0 ] || why+=("no passing case")
  if compgen -G "$W/reports/*" >/dev/null; then
    why+=("$(ls "$W"/reports | wc -l) sanitizer reports, the first:" "$(cat "$W"/reports/* | head -30)")
  fi
  cases=$ok
}
. tests/tap_result.sh # result DESC: passes when why[] is empty (the cwd is the root)

# the check itself must see a report: a planted heap overflow by one byte, built the same way
cat >"$W/planted.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    char *p = malloc(4);
    p[argc + 3] = 1; /* argc = 1: p[4] */
    printf("ok 1 - wrote past the end unnoticed\n");
    free(p);
    return 0;
}
EOF
if gcc -g -fsanitize=$SAN -fno-sanitize-recover=all -o "$W/planted" "$W/planted.c" 2>"$W/cc.log"; then
  san_run planted "$W/planted"
  if [ ${#why[@]} -gt 0 ] && grep -q heap-buffer-overflow "$W"/reports/*; then why=(); else
    why=("no heap-buffer-overflow report from the planted overflow"); fi
else
  why=("gcc -fsanitize=$SAN failed:" "$(head -5 "$W/cc.log")")
fi
result "a planted heap overflow is reported (the check below can fail)"

for t in "$D"/build/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  san_run "$name" "$t"
  random=""
  [ "$name" = test_sgm_simd ] && random=", ${STEREO_SGM_SIMD_CASES:-200} random pairs"
  result "$name under ASan+UBSan ($cases cases$random)"
done
san_run test_cli.sh env STEREO_BUILD="$D/build" STEREO_SANITIZER=$SAN bash tests/test_cli.sh
result "test_cli.sh on the ASan+UBSan programs ($cases cases)"
san_run test_hostile.sh env STEREO_BUILD="$D/build" STEREO_SANITIZER=$SAN bash tests/test_hostile.sh
result "test_hostile.sh on the ASan+UBSan programs ($cases cases)"

echo "1..$n"
printf '%s\n' "${tap[@]}"
exit 0
