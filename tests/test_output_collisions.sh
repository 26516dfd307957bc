#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_output_collisions.sh — a grid of stereo-live runs whose outputs would, at some later
# frame, replace a file the run reads or another of its outputs, as TAP (one line per group):
#
#   inputs    the --config being read, display.font, calibration.maps, a file:// video
#   outputs   a file:// pattern (frames 1, 2, ...) and a gst:// multifilesink pattern (0, 1, ...)
#             whose frame K is that input's name; --stats-json and --screenshot named as frame
#             K of a file:// pattern
#   names     paddings %d %02d %04d %06d %9d (spaces) %+d, frames K 3 10 99 12345 2000000
#
# Every run must be refused before any work: exit 2, one line that names the frame, nothing
# written beside the inputs, every input byte for byte as it was. A run still going after 60 s
# is a hang. Each group prints how many of its runs held; a failure lists the first few runs
# that did not. The gst:// rows need GStreamer (skipped visibly without it or under a
# sanitizer, as in test_hostile.sh). Env: STEREO_BUILD (build), STEREO_SANITIZER.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
B=$(cd "$B" && pwd) || { echo "Bail out! no build folder $B"; exit 1; }
LIVE=$B/stereo-live
[ -x "$LIVE" ] || { echo "Bail out! $LIVE is not built (ninja)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/test_collisions.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
. "$OLDPWD/tests/tap.sh"
GST=1
"$LIVE" --help | grep -q 'gst://' && command -v gst-launch-1.0 >/dev/null 2>&1 || GST=0
[ -n "${STEREO_SANITIZER:-}" ] && GST=0
SMALL=(--headless --frames 3 --backend cpu --set stereo.disparities=16 --set synth.width=64
       --set synth.height=48)
PADS=("%d" "%02d" "%04d" "%06d" "%9d" "%+d")
FRAMES=(3 10 99 12345 2000000)

# one_run NAME EXPECT-IN-MESSAGE COMMAND...: in a fresh folder d/ holding the inputs made by
# the caller (d.orig: their copy); 0 when refused as promised
one_run() {
  local name=$1 says=$2 rc
  shift 2
  timeout -k 1 60 "$@" >o.out 2>o.err </dev/null
  rc=$?
  if [ $rc -eq 2 ] && [ "$(grep -c '' o.err)" -eq 1 ] && grep -qF -- "$says" o.err &&
     diff -r d d.orig >/dev/null; then
    return 0
  fi
  bad+=("$name: exit $rc; $(head -c 300 o.err); $(diff -rq d d.orig 2>&1 | head -2)")
  return 1
}
# fresh INPUT-NAME CONTENT: d/ holding one input file, and its copy d.orig
fresh() {
  rm -rf d d.orig && mkdir d
  printf '%s' "$2" >"d/$1"
  cp -r d d.orig
}
group() { # NAME RUNS: one TAP line for the group's runs
  if [ ${#bad[@]} -eq 0 ]; then
    ok "$1: $2 of $2 runs refused (exit 2, one line naming the frame), every input intact"
  else
    not_ok "$1: $(($2 - ${#bad[@]})) of $2 runs held" "$(printf '%s\n' "${bad[@]}" | head -5)"
  fi
}
name_of() { printf "$1" "$2"; } # PATTERN K: frame K's name

INI=$'[run]\nframes = 3\n'
for input in config font maps video; do
  for form in file gst; do
    [ "$form" = gst ] && [ $GST = 0 ] && { skip "$input onto a gst:// multifilesink frame" "no GStreamer (or a sanitizer build)"; continue; }
    [ "$input" = video ] && [ $GST = 0 ] && { skip "$input onto a $form:// frame" "no GStreamer (or a sanitizer build)"; continue; }
    bad=()
    runs=0
    for pad in "${PADS[@]}"; do
      for k in "${FRAMES[@]}"; do
        pat="in_${pad}.pfm"
        f=$(name_of "$pat" "$k")
        case $input in
          config) fresh "$f" "$INI"; args=(--config "d/$f") ;;
          font) fresh "$f" "not a font"; args=(--set "display.font=d/$f") ;;
          maps) fresh "$f" "not maps"; args=(--set "calibration.maps=d/$f") ;;
          video) fresh "$f" "not a video"; args=(--input "file://$W/d/$f") ;;
        esac
        if [ "$form" = file ]; then
          out=(--output "file://d/$pat")
          says="frame $k of --output 'd/$pat' would replace"
        else
          out=(--output "gst://appsrc ! videoconvert ! pngenc ! multifilesink location=d/$pat")
          says="frame $k of --output multifilesink 'd/$pat' would replace"
        fi
        runs=$((runs + 1))
        one_run "$input '$f', $form pattern '$pat'" "$says" "$LIVE" "${SMALL[@]}" "${args[@]}" "${out[@]}"
      done
    done
    group "$input named as frame K of a $form:// pattern" "$runs"
  done
done

# outputs against outputs: --stats-json and --screenshot named as a later frame of a pattern
for what in stats-json screenshot; do
  bad=()
  runs=0
  for pad in "${PADS[@]}"; do
    for k in "${FRAMES[@]}"; do
      pat="o_${pad}.png"
      f=$(name_of "$pat" "$k")
      rm -rf d d.orig && mkdir d && cp -r d d.orig
      runs=$((runs + 1))
      one_run "--$what '$f', pattern '$pat'" "frame $k of --output 'd/$pat' would replace" \
        "$LIVE" "${SMALL[@]}" "--$what" "d/$f" --output "file://d/$pat"
    done
  done
  group "--$what named as frame K of a file:// pattern" "$runs"
done

# and the runs that must go ahead: the same names one frame number off the pattern's (a name
# no frame has), and frame 0 of a file:// pattern (its frames start at 1)
bad=()
runs=0
for pad in "%04d" "%06d"; do
  pat="in_${pad}.pfm"
  for f in "in_$(name_of "$pad" 3)x.pfm" "$(name_of "$pat" 0)" "in_3.pfm.pfm"; do
    [ "$pad" = "%04d" ] && [ "$f" = "in_3.pfm.pfm" ] && continue
    fresh "$f" "$INI"
    runs=$((runs + 1))
    timeout -k 1 60 "$LIVE" "${SMALL[@]}" --config "d/$f" --output "file://d/$pat" >o.out 2>o.err </dev/null
    rc=$?
    if [ $rc -ne 0 ] || ! cmp -s "d/$f" "d.orig/$f"; then
      bad+=("config '$f', pattern '$pat': exit $rc; $(head -c 300 o.err)")
    fi
  done
done
if [ ${#bad[@]} -eq 0 ]; then
  ok "names no frame of the pattern has (frame 0, another name): $runs of $runs runs go ahead, exit 0, the input intact"
else
  not_ok "names no frame of the pattern has: runs refused or failed" "$(printf '%s\n' "${bad[@]}" | head -5)"
fi
echo "1..$n"
