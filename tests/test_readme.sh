#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_readme.sh — every example in README.md runs on a fresh clone, as TAP:
#   1. each command of the README's code blocks (indented, or fenced as sh, bash, console or
#      without a language), one TAP line each, in the README's order, all in one scratch folder
#      that holds nothing but build/ (links to $STEREO_BUILD's files), config/ and python/ (copies):
#      whatever else a command reads, a command before it must have made. A block with an
#      `import` line is Python and runs whole, with PYTHONPATH=python /usr/bin/python3. Each runs
#      under a limit that only catches a hang (HANG_S, default 300 s); one that fails is not ok,
#      with the end of its stderr. Without a display (DISPLAY and WAYLAND_DISPLAY unset).
#      The live app runs until it is stopped, so build/stereo-live in the scratch folder is a
#      wrapper that adds `--frames 30` to a command without --frames (the TAP line says so).
#      Commands that need what no test machine has are skipped, visibly, by the table below
#      (keyed on a part of the command; the first match wins); a few may end with another status
#      when their output says why (`--list-cameras` without a camera: 1). ros2:// outputs go
#      over the loopback interface only.
#   2. the runner can fail: on a copy of the README with a failing command, a failing Python
#      block and a hanging command planted, it reports each as not ok with its stderr.
# README=FILE runs another file's examples (check 2 uses it; then 1 only).
# Run from the repo root (tests/run does): bash tests/test_readme.sh.
set -u
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
ROOT=$PWD
B=${STEREO_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
README=${README:-README.md}
HANG_S=${HANG_S:-300}
FRAMES=30

for p in stereo-live stereo-match calib-maps libstereodepth.so; do
  [ -e "$B/$p" ] || { echo "Bail out! $B/$p missing: build first (ninja)"; exit 1; }
done

# The skip table: a part of the command, and why it cannot run here.
skip_key=() skip_why=()
skips() { skip_key+=("$1"); skip_why+=("$2"); }
skips 'ninja test' 'runs the whole suite, this test included'
skips './setup.sh' 'installs packages with apt-get and builds; the suite runs after it'
skips 'two-usb-cameras.ini' 'needs two USB cameras'
skips '/dev/video' 'needs V4L2 cameras'
skips 'v4l2://' 'needs V4L2 cameras'
skips 'csi://' "needs a Jetson's CSI cameras"
skips '--left rtsp://' 'needs two RTSP cameras (no such servers here)'
skips 'file://left.mp4' 'left.mp4 and right.mp4 stand for two videos of your own'
[ -x "$B/stereo-ros2-bridge" ] ||
  skips 'ros2://' 'built without the ROS 2 bridge (./configure found no Cyclone DDS)'
grep -q 'STEREO_HAVE_GST=1' "$B/config.ninja" 2>/dev/null || {
  skips 'gst://' 'built without GStreamer'
  skips 'rtsp://' 'built without GStreamer'
}
grep -q 'STEREO_HAVE_RTSP_SERVER=1' "$B/config.ninja" 2>/dev/null ||
  skips 'rtsp://@' 'built without gst-rtsp-server'
# Commands that may also end with another status here, when their output says why.
also_key=() also_rc=() also_says=() also_why=()
also() { also_key+=("$1"); also_rc+=("$2"); also_says+=("$3"); also_why+=("$4"); }
also '--list-cameras' 1 'no V4L2 devices' 'exit status 1: no camera here'
why_skip() { # COMMAND: the reason it is skipped, or nothing
  local i
  for i in "${!skip_key[@]}"; do
    [[ $1 == *"${skip_key[$i]}"* ]] && { echo "${skip_why[$i]}"; return; }
  done
}

W=$(mktemp -d "${TMPDIR:-/tmp}/test_readme.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
S=$W/clone
mkdir -p "$S/build" && cp -r "$ROOT/config" "$ROOT/python" "$S/" || { echo "Bail out! no scratch folder"; exit 1; }
for f in "$B"/*; do
  ln -s "$f" "$S/build/$(basename "$f")"
done
rm "$S/build/stereo-live"
cat >"$S/build/stereo-live" <<EOF
#!/usr/bin/env bash
# the live app, ended after $FRAMES frames when the command does not say how many
for a in "\$@"; do
  case \$a in --frames|--frames=*|--list-cameras|--help|-h|--version) exec "$B/stereo-live" "\$@" ;; esac
done
exec "$B/stereo-live" "\$@" --frames $FRAMES
EOF
chmod +x "$S/build/stereo-live"
# ros2:// outputs: DDS on the loopback interface only, as tests/test_ros2.sh has it
export CYCLONEDDS_URI='<CycloneDDS><Domain><General><Interfaces><NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>'

# The examples, as NUL-separated triples: kind (sh or py), line number, text.
examples() {
"$PY" - "$1" <<'PY'
import re, sys

lines = open(sys.argv[1]).read().split("\n")
blocks = []  # (kind, first line number, [lines])
i, prev = 0, ""
while i < len(lines):
    line = lines[i]
    m = re.match(r"^(```+|~~~+)\s*([\w+-]*)", line)
    if m:
        fence, lang, start, body = m.group(1), m.group(2).lower(), i + 2, []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        if lang in ("python", "py", "python3"):
            blocks.append(("py", start, body))
        elif lang in ("", "sh", "bash", "shell", "console"):
            blocks.append(("code", start, body))
        prev, i = "", i + 1
        continue
    if line.startswith("    ") and not prev.strip():
        start, body = i + 1, []
        while i < len(lines) and (lines[i].startswith("    ") or
                                  (not lines[i].strip() and i + 1 < len(lines) and
                                   lines[i + 1].startswith("    "))):
            body.append(lines[i][4:])
            i += 1
        blocks.append(("code", start, body))
        prev = ""
        continue
    prev, i = line, i + 1

out = []
for kind, start, body in blocks:
    if kind == "code" and any(re.match(r"(import|from) \w", l) for l in body):
        kind = "py"
    if kind == "py":
        out += ["py", str(start), "\n".join(body) + "\n"]
        continue
    j = 0
    while j < len(body):
        first, cmd = j, body[j]
        while cmd.endswith("\\") and j + 1 < len(body):
            j += 1
            cmd += "\n" + body[j]
        j += 1
        text = cmd.strip()
        if text.startswith("$ "):
            text = text[2:]
        if text and not text.startswith("#"):
            out += ["sh", str(start + first), text]
sys.stdout.write("".join(s + "\0" for s in out))
PY
}

# run KIND LINE TEXT: one TAP line
run() {
  local kind=$1 line=$2 text=$3 name why rc i log=$W/out
  if [ "$kind" = py ]; then
    name="$(basename "$README"):$line: the Python example ($(printf "%s" "$text" | grep -c "") lines)"
  else
    name="$(basename "$README"):$line: $(head -1 <<<"$text" | sed 's/ *\\$//; s/  *#.*//')"
    [ "${#name}" -gt 110 ] && name="${name:0:107}..."
  fi
  why=$(why_skip "$text")
  if [ -n "$why" ]; then
    skip "$name" "$why"
    return
  fi
  if [[ $text == *stereo-live* ]] && [[ $text != *--frames* ]] && [[ $text != *--list-cameras* ]]; then
    name="$name (+ --frames $FRAMES)"
  fi
  # a fixed listening port may be taken on a shared machine (another test, another run): the
  # RTSP and web examples listen on a free one instead, and say so
  if [[ $text =~ (rtsp|http)://@:([0-9]+)/ ]]; then
    local port scheme=${BASH_REMATCH[1]} fixed=${BASH_REMATCH[2]}
    port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
    text=${text//$scheme:\/\/@:$fixed\//$scheme://@:$port/}
    name="$name (port $port)"
  fi
  if [ "$kind" = py ]; then
    printf '%s' "$text" >"$W/example_$line.py"
    (cd "$S" && env -u DISPLAY -u WAYLAND_DISPLAY PYTHONPATH=python \
      timeout -k 10 "$HANG_S" "$PY" "$W/example_$line.py") >"$log" 2>&1 </dev/null
  else
    (cd "$S" && env -u DISPLAY -u WAYLAND_DISPLAY \
      timeout -k 10 "$HANG_S" bash -c "$text") >"$log" 2>&1 </dev/null
  fi
  rc=$?
  for i in "${!also_key[@]}"; do
    if [[ $text == *"${also_key[$i]}"* ]] && [ "$rc" -eq "${also_rc[$i]}" ] &&
       grep -q -- "${also_says[$i]}" "$log"; then
      rc=0 name="$name (${also_why[$i]})"
    fi
  done
  if [ "$rc" -eq 0 ]; then
    ok "$name"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    not_ok "$name" "still running after $HANG_S s: killed (a hang)
$(tail -15 "$log")"
  else
    not_ok "$name" "exit status $rc:
$(tail -15 "$log")"
  fi
}

mapfile -d '' ex < <(examples "$README")
if [ ${#ex[@]} -lt 3 ]; then
  echo "Bail out! no examples found in $README"
  exit 1
fi
for ((k = 0; k < ${#ex[@]}; k += 3)); do
  run "${ex[k]}" "${ex[k + 1]}" "${ex[k + 2]}"
done

# 2. the runner can fail: a README with faults planted
if [ "$README" = README.md ]; then
  P=$W/planted.md
  cat >"$P" <<'EOF'
# A planted README

Runs:

    build/stereo-match --version

Fails:

    build/stereo-match -d 64 no-such-left.png no-such-right.png out.pfm   # missing images

Python that fails:

    import stereodepth
    stereodepth.match(None, None, disparities=64)

A hang:

    sleep 1000

Skipped:

    build/stereo-live --left v4l2:///dev/video0 --right /dev/video2
EOF
  got=$(README=$P HANG_S=2 bash "$SELF" 2>&1)
  missing=()
  for want in '^ok 1 - planted.md:5: build/stereo-match --version$' \
              '^not ok 2 - planted.md:9: build/stereo-match -d 64 no-such-left.png' \
              '^#   .*no-such-left.png' \
              '^not ok 3 - planted.md:13: the Python example (2 lines)' \
              '^#   .*Error' \
              '^not ok 4 - planted.md:18: sleep 1000' '^#   still running after 2 s' \
              '^ok 5 - planted.md:22: .* # SKIP needs V4L2 cameras' '^1\.\.5$'; do
    grep -q -- "$want" <<<"$got" || missing+=("$want")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    ok "the runner reports planted faults (a failing command, failing Python, a hang) with their stderr"
  else
    not_ok "the runner reports planted faults" "not reported: ${missing[*]}
$got"
  fi
fi
echo "1..$n"
