#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_replay.sh — a recording's replay.ini replays it: the same disparities bit for bit,
# as TAP.
#
#   1. a recording of the generated scene with [stereo] settings from a --config file and
#      command-line options over it (-d 32, --cost rank over the file's census, --paths 8,
#      --min-disparity, penalties, post-filters ...), its disparities written per frame
#      (--output file://DIR/d_%06d.pfm): replay.ini's [stereo] holds every key of the option
#      table once (the rows of config/README.md's table), with the run's values, the command
#      line's over the file's
#   2. the replay, with nothing but replay.ini: the recorded D and cost in its log line and
#      --stats-json, the same number of frames, every disparity file equal byte for byte
#   3. -d auto: replay.ini holds the D the first pair measured (not the default 64), and the
#      replay computes the same disparities
#   4. the replay recorded again writes the same [stereo] section (replay.ini is a fixed point)
# Every run is headless on the paced generated scene at 128x96 and ends by --frames (no clock).
# Run from the repo root (tests/run does): bash tests/test_replay.sh. Env: STEREO_BUILD (build).
# About 2 s on 2 cores. Exits non-zero only on a setup error.
set -u
cd "$(dirname "$0")/.." || exit 1
TESTS_DIR=$PWD/tests
ROOT=$PWD
B=${STEREO_BUILD:-build}
LIVE=$B/stereo-live
[ -x "$LIVE" ] || { echo "Bail out! $LIVE is not built (ninja $LIVE)"; exit 1; }
case $LIVE in /*) ;; *) LIVE=$ROOT/$LIVE ;; esac
W=$(mktemp -d "${TMPDIR:-/tmp}/test_replay.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

. "$TESTS_DIR/tap.sh"   # n, ok, not_ok, skip, check, lines

# the [stereo] keys, as config/README.md's table lists them (test_config keeps it equal to the
# key table the reader and the writer use)
stereo_keys=$(sed -n 's/^| stereo | \([a-z0-9_]*\) |.*/\1/p' "$ROOT/config/README.md")
[ "$(wc -w <<<"$stereo_keys")" -ge 30 ] ||
  { echo "Bail out! config/README.md lists no [stereo] keys"; exit 1; }

# stereo_section FILE: its [stereo] section, the key lines only
stereo_section() { sed -n '/^\[stereo\]$/,/^\[/p' "$1" | grep ' = '; }

# every_key FILE: each [stereo] key of the table exactly once in FILE's [stereo] section, and no
# other; the keys missing or repeated on stdout
every_key() {
  local k bad=""
  for k in $stereo_keys; do
    [ "$(stereo_section "$1" | grep -c "^$k = ")" -eq 1 ] || bad="$bad $k"
  done
  [ "$(stereo_section "$1" | wc -l)" -eq "$(wc -w <<<"$stereo_keys")" ] || bad="$bad (count)"
  echo "$bad"
  [ -z "$bad" ]
}

# same_files DIR1 DIR2: the same file names, each pair equal byte for byte
same_files() {
  local f
  [ "$(cd "$1" && ls)" = "$(cd "$2" && ls)" ] && [ -n "$(ls "$1")" ] || return 1
  for f in "$1"/*; do
    cmp "$f" "$2/${f##*/}" || return 1
  done
}

# the generated scene named both ways: as a URI, as cameras are (--input, --left, --right), and
# by the older [source] type with [synth] keys
SYNTH='synth://?width=128&height=96'
SIZE=(--set synth.width=128 --set synth.height=96)

# ---- 1. the recording: settings from a file and from the command line over it ---------------
cat >mine.ini <<'EOF'
[stereo]
cost = census
speckle_size = 20
speckle_diff = 32
temporal_alpha = 4
uniqueness = 5
EOF
mkdir out1
timeout 60 "$LIVE" --config mine.ini --headless --frames 6 --input "$SYNTH" --record rec \
  --output 'file://out1/d_%06d.pfm' -d 32 --cost rank --window 7 --paths 8 --min-disparity 4 \
  --p2 100 --p2-adapt 8 --lr-tolerance 2 --no-median --fill --temporal --temporal-persist 2 \
  >r1.out 2>r1.err
rc=$?
cat r1.err r1.out >r1.all
check "record with a --config file and options over it: exit 0, 6 pairs recorded, none dropped" \
  r1.all eval '[ $rc -eq 0 ] && grep -q "^stereo-live: recorded 6 pairs to rec (0 record drops" r1.out &&
    grep -q "^stereo-live: output file://out1/d_%06d.pfm: 6 sent, 0 drops" r1.out &&
    [ "$(ls out1 | wc -l)" -eq 6 ]'
missing=$(every_key rec/replay.ini)
check "replay.ini's [stereo] holds every key of the option table once${missing:+ (wrong:$missing)}" \
  rec/replay.ini [ -z "$missing" ]
want="disparities = 32|min_disparity = 4|cost = rank|window = 7|paths = 8|p2 = 100|p2_adapt = 8"
want+="|lr_tolerance = 2|median = false|fill = true|temporal = true|temporal_persist = 2"
want+="|speckle_size = 20|speckle_diff = 32|temporal_alpha = 4|uniqueness = 5"
absent=""
IFS='|' read -ra lines_wanted <<<"$want"
for l in "${lines_wanted[@]}"; do
  stereo_section rec/replay.ini | grep -qx "$l" || absent="$absent, $l"
done
check "replay.ini holds the options' values and the file's (the options' over the file's)${absent:+; missing: ${absent#, }}" \
  rec/replay.ini [ -z "$absent" ]

# ---- 2. the replay: the same settings, the same disparities ---------------------------------
mkdir out2
timeout 60 "$LIVE" --config rec/replay.ini --headless --output 'file://out2/d_%06d.pfm' \
  --stats-json p1.json >p1.out 2>p1.err
rc=$?
cat p1.err p1.out >p1.all
check "the replay: exit 0, files source at 128x96 with D 32, cost rank and 8 paths, 6 frames" \
  p1.all eval '[ $rc -eq 0 ] && grep -q "^stereo-live: files source, 128x96, D 32, " p1.err &&
    grep -q "\"disparities\": 32," p1.json && grep -q "\"cost\": \"rank\"," p1.json &&
    grep -q "\"paths\": 8," p1.json && grep -q "^stereo-live: 6 frames, 6 captured, 0 dropped" p1.out'
same_files out1 out2 >cmp1.txt 2>&1
check "the replay's disparities equal the recording run's, every frame byte for byte" cmp1.txt \
  [ "${PIPESTATUS[0]}" -eq 0 ]

# ---- 3. -d auto: the D the first pair measured ------------------------------------------------
mkdir out3 out4
timeout 60 "$LIVE" --headless --frames 5 "${SIZE[@]}" -d auto --cost census --record rec3 \
  --output 'file://out3/d_%06d.pfm' >r3.out 2>r3.err
rc=$?
cat r3.err r3.out >r3.all
D=$(sed -n 's/^stereo-live: disparities auto: \([0-9]*\) .*/\1/p' r3.err)
check "record with -d auto: exit 0, the measured D said (${D:-none}), 5 pairs recorded" r3.all \
  eval '[ $rc -eq 0 ] && [ -n "$D" ] && grep -q "^stereo-live: recorded 5 pairs to rec3 (0 record drops" r3.out &&
    grep -q "^stereo-live: output file://out3/d_%06d.pfm: 5 sent, 0 drops" r3.out'
check "-d auto: replay.ini holds the measured D ($(stereo_section rec3/replay.ini | grep '^disparities')), every key once" \
  rec3/replay.ini eval 'stereo_section rec3/replay.ini | grep -qx "disparities = $D" &&
    [ -z "$(every_key rec3/replay.ini)" ]'
timeout 60 "$LIVE" --config rec3/replay.ini --headless --output 'file://out4/d_%06d.pfm' \
  >p3.out 2>p3.err
rc=$?
cat p3.err p3.out >p3.all
check "-d auto: the replay runs with the measured D and measures nothing" p3.all \
  eval '[ $rc -eq 0 ] && grep -q "^stereo-live: files source, 128x96, D $D, " p3.err &&
    ! grep -q "disparities auto" p3.err'
same_files out3 out4 >cmp3.txt 2>&1
check "-d auto: the replay's disparities equal the recording run's, byte for byte" cmp3.txt \
  [ "${PIPESTATUS[0]}" -eq 0 ]

# ---- 4. the replay recorded again: the same [stereo] section ----------------------------------
timeout 60 "$LIVE" --config rec/replay.ini --headless --record rec5 >r5.out 2>r5.err
rc=$?
cat r5.err r5.out >r5.all
stereo_section rec/replay.ini >s1.txt
stereo_section rec5/replay.ini >s5.txt
diff s1.txt s5.txt >diff5.txt
check "the replay recorded again: exit 0, the same [stereo] section" diff5.txt \
  eval '[ $rc -eq 0 ] && [ -s s1.txt ] && cmp -s s1.txt s5.txt'

echo "1..$n"
