#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/fuzz.sh — builds the libFuzzer harnesses (tests/fuzz/, clang with ASan and UBSan, in
# build-fuzz/: a folder of its own, build/ is left alone) and fuzzes one reader for a while.
#
#   tools/fuzz.sh NAME [SECONDS]     NAME: image pfm mapfile calib_yaml camera_info config uri
#                                    SECONDS: default 600 (a longer run: e.g. 3600)
#   tools/fuzz.sh --list             the names
#
# It starts from the seed corpus tests/fuzz/corpus/NAME/ (and what earlier runs found, kept in
# build-fuzz/corpus/NAME/, where new inputs go; the repository's corpus is only read). A crash,
# leak, sanitizer report or an input taking over 10 s stops the run with exit status 1 and is
# saved as build-fuzz/crashes/NAME-crash-... ; reproduce it with
# `build-fuzz/build/fuzz/fuzz_NAME FILE`, fix the reader, add a regression test, and copy the
# file into tests/fuzz/corpus/NAME/ (as crash-WHAT) so every later run replays it.
# Env: STEREO_FUZZ_DIR (default build-fuzz); extra libFuzzer options after SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
names="image pfm mapfile calib_yaml camera_info config uri"
if [ "${1:-}" = --list ]; then echo "$names"; exit 0; fi
name=${1:-}
case " $names " in
  *" $name "*) ;;
  *) echo "fuzz.sh: NAME must be one of: $names (got '$name')" >&2; exit 2 ;;
esac
seconds=${2:-600}
case $seconds in
  ''|*[!0-9]*|0) echo "fuzz.sh: SECONDS: '$seconds' is not a positive whole number" >&2; exit 2 ;;
esac
shift $(( $# >= 2 ? 2 : 1 ))
D=${STEREO_FUZZ_DIR:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz.sh: clang is not installed (./setup.sh installs it)" >&2; exit 1; }
mkdir -p "$D"
if ! { CC=clang ./configure --no-cuda --sanitize=fuzzer-no-link,address,undefined --out="$D" &&
       ninja -C "$D" fuzzers; } >"$D/build.log" 2>&1; then
  tail -20 "$D/build.log" >&2
  echo "fuzz.sh: building the harnesses in $D failed (log: $D/build.log)" >&2
  exit 1
fi
mkdir -p "$D/corpus/$name" "$D/crashes"
# -timeout: an input that takes 10 s is a hang; rss_limit: the readers refuse sizes over
# 8192x8192 from the header, so 2 GB is far more than any accepted input needs
exec "$D/build/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$D/crashes/$name-" "$@" \
  "$D/corpus/$name" "tests/fuzz/corpus/$name"
