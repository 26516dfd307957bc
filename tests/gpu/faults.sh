#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/faults.sh — faults on the GPU path (GPU machine only; tools/gpu-check.sh runs it).
# Prints TAP. Uses the fault injection of gpu/stage_cuda.h (STEREO_CUDA_FAULT):
#   alloc:NAME  the allocation of the stage's buffer NAME asks for more than the device has:
#               --backend cuda fails at start naming the buffer and its size; --backend auto
#               falls back to the CPU backend with that message and runs;
#   frame:N     a trapping kernel after the N-th frame's kernels: the live app reports the fault
#               once, stops the stage and exits non-zero, without hanging with frames in flight.
# Usage: tests/gpu/faults.sh [BUILD-DIR]   (default build)
set -u
B=${1:-build}
APP=$B/gpu/stereo-live-headless
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
small=(--set synth.width=320 --set synth.height=240 --set stereo.disparities=64 --set synth.fps=0)

run() { # name env... -- args...
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  local t0=$SECONDS
  env "${envs[@]}" timeout 60 "$APP" "${small[@]}" "$@" >"$tmp/$name.out" 2>&1
  echo $? >"$tmp/$name.rc"
  echo $((SECONDS - t0)) >"$tmp/$name.s"
}
has() { grep -q -- "$2" "$tmp/$1.out"; }
rc() { cat "$tmp/$1.rc"; }

[ -x "$APP" ] || { echo "1..0 # SKIP no $APP (ninja gpu)"; exit 0; }

for buf in L8 grey slot.disp; do
  run "cuda-$buf" STEREO_CUDA_FAULT=alloc:$buf -- --backend cuda --frames 10
  if [ "$(rc cuda-$buf)" != 0 ] && [ "$(rc cuda-$buf)" != 124 ] && has "cuda-$buf" "'$buf'" &&
     has "cuda-$buf" " MB"; then
    ok "alloc:$buf, --backend cuda: refused at start, names the buffer: $(grep -m1 "'$buf'" "$tmp/cuda-$buf.out")"
  else
    not_ok "alloc:$buf, --backend cuda: exit $(rc cuda-$buf), no message naming '$buf'" "$(tail -5 "$tmp/cuda-$buf.out")"
  fi
done
run auto-L8 STEREO_CUDA_FAULT=alloc:L8 -- --backend auto --frames 10
if [ "$(rc auto-L8)" = 0 ] && has auto-L8 "using the CPU backend" && has auto-L8 "'L8'"; then
  ok "alloc:L8, --backend auto: falls back to the CPU with the message and runs 10 frames"
else
  not_ok "alloc:L8, --backend auto: exit $(rc auto-L8), no CPU fallback message" "$(tail -5 "$tmp/auto-L8.out")"
fi
run no-fault -- --backend cuda --frames 20
if [ "$(rc no-fault)" = 0 ]; then ok "no fault: 20 frames, exit 0"
else not_ok "no fault: exit $(rc no-fault)" "$(tail -5 "$tmp/no-fault.out")"; fi

for extra in "" "--synth-prerender 8"; do
  tag=frame5${extra:+-prerender}
  # shellcheck disable=SC2086
  run "$tag" STEREO_CUDA_FAULT=frame:5 -- --backend cuda --frames 500 $extra
  nmsg=$(grep -c "stage: " "$tmp/$tag.out")
  if [ "$(rc "$tag")" != 0 ] && [ "$(rc "$tag")" != 124 ] && [ "$nmsg" = 1 ]; then
    ok "frame:5 ${extra:-(live source)}: exit $(rc "$tag") after $(cat "$tmp/$tag.s") s, reported once: $(grep -m1 "stage:" "$tmp/$tag.out")"
  else
    not_ok "frame:5 ${extra:-(live source)}: exit $(rc "$tag") (124 = hung), 'stage:' lines: $nmsg" "$(tail -8 "$tmp/$tag.out")"
  fi
done
echo "1..$n"
[ "$failed" = 0 ]
