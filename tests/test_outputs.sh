#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_outputs.sh — stereo-live's outputs (--output URI, [output]), file:// end to end, as
# TAP (ros2:// is tests/test_ros2.sh):
#   1. file://DIR/%06d.pfm, .png, ?depth=1 and .ply on the generated scene: one file per frame
#      sent (an output whose thread is late drops the frame and counts it, by design: on an idle
#      machine none is dropped); the PFM disparity equals the 16-bit PNG's (256 d); the depth
#      PNG follows hal/depth.h's rule from the PFM on every pixel; the PLY's vertex count is the
#      valid depth pixels; the summary and --stats-json count each output; [output] in a config
#      file
#   2. kill -9 mid-run (640x480 point clouds, unpaced): every file named by the pattern is
#      whole (PFM and PLY sizes from their headers); the next run removes the temporary file
#      the kill left (NAME.tmp.XXXXXX)
#   3. a slow output (strace delays its renames by 0.2 s): the stage does not wait for it, the
#      output drops frames and counts them (sent + drops = frames; the stage's rate meanwhile:
#      tools/timing.sh); a folder removed mid-run: the output says why once, the run goes on and
#      ends with status 0; an output whose every write failed (strace: ENOSPC): said once, then
#      exit 1 with one line and FAILED in the summary; one that failed after its first writes:
#      exit 0
#   4. bad outputs: an unknown scheme or option, a domain out of range, a missing folder, a
#      folder that takes no file (/proc), no frame number, depth without a camera (file depth,
#      .ply, ros2 points or depth encoding), an rtp host that does not resolve, an IPv6 address
#      without brackets, a namespace ending in /, too many: exit 2, one line, nothing created;
#      display:// with another output keeps the window (SDL offscreen: a window and the files),
#      other outputs alone run headless; the libc-only build refuses outputs; --screenshot in
#      every way the run becomes headless (--headless, no display, file://, gst:// or ros2://
#      outputs without display://): written, exit 0
#   5. GStreamer: rtp:// received by a gst-launch-1.0 pipeline (udpsrc, rtph264depay, decodebin),
#      also rtp://[::1]:PORT by one on the IPv6 loopback (skipped without one), rtsp:// by one
#      with rtspsrc: frames decoded, of the stage's size; gst://appsrc ! ...
#      pngenc ! multifilesink: every frame sent, the colour-mapped view; rtsp on a port in use
#      refused
#   6. valgrind: no definite leak with file, ros2 and gst outputs opened, fed and closed
# Every wait is on a state (tests/tap.sh: a file written, a line printed, a process gone); its
# limit catches a hang only. Run from the repo root (tests/run does). Env: STEREO_BUILD (build).
# About 25 s.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${STEREO_BUILD:-build}
LIVE=$B/stereo-live
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
[ -x "$LIVE" ] || { echo "Bail out! $LIVE is not built"; exit 1; }
. tests/tap.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
SCENE=(--input 'synth://?width=160&height=120' -d 32 --backend cpu --headless)
CAM=(--focal 200 --baseline 0.1)

# ---- 1. every format, every frame ----------------------------------------------------------
mkdir -p "$T/o"
"$LIVE" "${SCENE[@]}" "${CAM[@]}" --frames 12 --output "file://$T/o/d_%06d.pfm" \
  --output "file://$T/o/d_%06d.png" --output "file://$T/o/z_%06d.png?depth=1" \
  --output "file://$T/o/c_%06d.ply" --stats-json "$T/s.json" >"$T/1.out" 2>"$T/1.err"
rc=$?
sent_drops=$("$PY" -c 'import json,sys; print(" ".join("%d+%d" % (x["sent"], x["drops"]) for x in json.load(open(sys.argv[1]))["outputs"]))' "$T/s.json" 2>/dev/null)
check "file outputs: exit 0, 12 frames, one file per frame each output sent (sent+drops: $sent_drops)" \
  "$T/1.err" "$PY" - "$rc" "$T/s.json" "$T/o" <<'EOF'
import json, os, sys
assert sys.argv[1] == "0", sys.argv[1]
o = json.load(open(sys.argv[2]))["outputs"]
names = os.listdir(sys.argv[3])
for x, (prefix, ext) in zip(o, [("d_", ".pfm"), ("d_", ".png"), ("z_", ".png"), ("c_", ".ply")]):
    files = [n for n in names if n.startswith(prefix) and n.endswith(ext)]
    assert x["sent"] >= 1 and x["sent"] + x["drops"] == 12 and len(files) == x["sent"], (x, files)
assert len(names) == sum(x["sent"] for x in o), names
EOF
check "file outputs: the summary and --stats-json count them" "$T/1.out" \
  "$PY" - "$T/s.json" "$T/1.out" <<'EOF'
import json, re, sys
s = json.load(open(sys.argv[1]))
o = s["outputs"]
assert len(o) == 4, o
for x in o:
    assert x["sent"] + x["drops"] == 12 and x["failures"] == 0, x
out = open(sys.argv[2]).read()
said = re.findall(r": (\d+) sent, (\d+) drops \(0 failed\)", out)
assert sorted((int(a), int(b)) for a, b in said) == sorted((x["sent"], x["drops"]) for x in o), out
EOF
check "file outputs: PFM = PNG / 256, depth PNG by hal/depth.h's rule, PLY points = valid depth" \
  "$T/1.err" "$PY" - "$T/o" <<'EOF'
import os, sys, struct, numpy as np, cv2
d = sys.argv[1]
f, B = 200.0, 0.1
# the frames every output wrote: the first, the middle and the last of them
names = set(os.listdir(d))
common = [k for k in range(1, 13) if {f"d_{k:06d}.pfm", f"d_{k:06d}.png", f"z_{k:06d}.png",
                                       f"c_{k:06d}.ply"} <= names]
assert common, sorted(names)
for k in sorted({common[0], common[len(common) // 2], common[-1]}):
    raw = open(f"{d}/d_{k:06d}.pfm", "rb").read()
    hdr = raw.split(b"\n", 3)
    w, h = map(int, hdr[1].split()); assert (w, h) == (160, 120)
    pfm = np.frombuffer(hdr[3], "<f4").reshape(h, w)[::-1]
    png = cv2.imread(f"{d}/d_{k:06d}.png", cv2.IMREAD_UNCHANGED)
    assert png.dtype == np.uint16
    valid = np.isfinite(pfm)
    assert valid.mean() > 0.5 and (png[~valid] == 0).all()
    assert (png[valid] == np.round(pfm[valid] * 256)).all()
    d16 = np.where(valid, pfm * 16, -1).astype(np.int64)
    z = cv2.imread(f"{d}/z_{k:06d}.png", cv2.IMREAD_UNCHANGED)
    mm = np.zeros_like(z, dtype=np.int64)
    pos = d16 > 0
    mm[pos] = np.floor((f * B * 1000 * 16) / d16[pos] + 0.5)
    mm[mm > 65535] = 0
    assert (z == mm).all(), np.argwhere(z != mm)[:5]
    ply = open(f"{d}/c_{k:06d}.ply", "rb").read()
    n = int(ply.split(b"element vertex ")[1].split(b"\n")[0])
    assert n == int(pos.sum()) and len(ply) == ply.index(b"end_header\n") + 11 + 15 * n
EOF
printf '[output]\nuri = file://%s/cfg_%%04d.pfm\n' "$T" >"$T/out.ini"
"$LIVE" "${SCENE[@]}" --frames 3 --config "$T/out.ini" >/dev/null 2>"$T/1c.err"
check "[output] uri in a config file" "$T/1c.err" eval 'ls "$T" | grep -q "^cfg_000[123]\.pfm$"' 

# ---- 2. kill -9 mid-run leaves only whole files --------------------------------------------
mkdir -p "$T/k"
"$LIVE" --input 'synth://?width=640&height=480&fps=0' -d 64 --backend cpu --headless "${CAM[@]}" \
  --output "file://$T/k/%06d.ply" --output "file://$T/k/%06d.pfm" >/dev/null 2>&1 &
pid=$!
# killed once a few frames are written, while it writes more
wait_for 120 eval '[ "$(ls "$T/k" | grep -c "^[0-9]*\.p[fl][my]$")" -ge 4 ]'
kill -9 "$pid"
wait "$pid" 2>/dev/null
check "kill -9 mid-run: every .pfm and .ply is whole" /dev/null "$PY" - "$T/k" <<'EOF'
import os, sys
d = sys.argv[1]
names = [n for n in os.listdir(d) if n.endswith((".pfm", ".ply"))]
assert len(names) >= 2, names
for n in names:
    raw = open(os.path.join(d, n), "rb").read()
    if n.endswith(".pfm"):
        hdr = raw.split(b"\n", 3)
        w, h = map(int, hdr[1].split())
        assert len(hdr[3]) == 4 * w * h, (n, len(raw))
    else:
        k = int(raw.split(b"element vertex ")[1].split(b"\n")[0])
        assert len(raw) == raw.index(b"end_header\n") + 11 + 15 * k, (n, len(raw))
print(len(names), "whole files;", sum(".tmp." in n for n in os.listdir(d)), "temporary")
EOF
echo half >"$T/k/000999.ply.tmp.Ab12Cd"   # what a kill during a write leaves, for certain
echo mine >"$T/k/other.ply.tmp.Ab12Cd"    # not the pattern's: stays
"$LIVE" "${SCENE[@]}" "${CAM[@]}" --frames 1 --output "file://$T/k/%06d.ply" >/dev/null 2>&1
# (its pattern's: the .ply ones; a .pfm the kill caught mid-write is another pattern's)
check "the next run removes what the kill left (NAME.tmp.XXXXXX)" /dev/null \
  test "$(ls "$T/k" | grep -c '\.ply\.tmp\.')" = 1 -a -f "$T/k/other.ply.tmp.Ab12Cd"

# ---- 3. a slow output drops, the stage does not; a failing one says why once ------------------
SLOW=(strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2
      -e inject=rename,renameat,renameat2:delay_exit=200000)
if command -v strace >/dev/null 2>&1 && "${SLOW[@]}" true 2>/dev/null; then
  mkdir -p "$T/s"
  "${SLOW[@]}" "$LIVE" "${SCENE[@]}" --frames 60 --output "file://$T/s/%06d.pfm" \
    >"$T/3.out" 2>"$T/3.err"
  check "slow output: 60 frames, the output drops and counts them (sent + drops = 60, drops > 0)" \
    "$T/3.out" "$PY" - "$T/3.out" <<'EOF'
import re, sys
out = open(sys.argv[1]).read()
assert re.search(r"stereo-live: [0-9.]+ fps \(60 frames", out), out
sent, drops = map(int, re.search(r": (\d+) sent, (\d+) drops", out).groups())
assert sent + drops == 60 and drops > 0, (sent, drops)
EOF
  # every write fails (strace makes each rename fail: the folder passed the check): said once at
  # the first, and at the end the run failed (exit 1): one line naming the output, the summary
  # says FAILED (how many of the 5 drops were failed writes rather than frames the thread was
  # too late for depends on the machine's load); one whose first writes pass and the later
  # fail (a disk that fills up) went on
  FULL=(strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2)
  mkdir -p "$T/f"
  "${FULL[@]}" -e inject=rename,renameat,renameat2:error=ENOSPC "$LIVE" "${SCENE[@]}" --frames 5 \
    --output "file://$T/f/%06d.pfm" >"$T/3f.out" 2>"$T/3f.err"
  rc=$?
  check "an output whose every write failed: said once, then exit 1, one line and FAILED in the summary (rc $rc)" \
    "$T/3f.err" test "$rc" = 1 \
    -a "$(grep -c "output file://$T/f/%06d.pfm: .*No space left on device (its frames are dropped" "$T/3f.err")" = 1 \
    -a "$(grep -c "output file://$T/f/%06d.pfm: sent no frame: all [1-9][0-9]* writes failed (the first: .*No space left" "$T/3f.err")" = 1 \
    -a "$(grep -c "output file://$T/f/%06d.pfm: 0 sent, 5 drops ([1-5] failed); FAILED: no frame sent" "$T/3f.out")" = 1 \
    -a "$(ls "$T/f" | wc -l)" = 0
  "${FULL[@]}" -e inject=rename,renameat,renameat2:error=ENOSPC:when=3+ "$LIVE" "${SCENE[@]}" \
    --frames 5 --output "file://$T/f/%06d.pfm" >"$T/3p.out" 2>"$T/3p.err"
  rc=$?
  check "an output whose first writes passed, then failed: said once, the run ends with exit 0 (rc $rc)" \
    "$T/3p.err" test "$rc" = 0 -a "$(grep -c "output file://$T/f/%06d.pfm: " "$T/3p.err")" = 1 \
    -a "$(grep -c ': [12] sent, .*failed)$' "$T/3p.out")" = 1 -a "$(ls "$T/f" | wc -l)" -ge 1
else
  skip "slow output: drops counted" "strace cannot trace here"
  skip "an output whose every write failed: exit 1" "strace cannot trace here"
  skip "an output whose first writes passed, then failed: exit 0" "strace cannot trace here"
fi
# removed once it holds a file (renamed away in one step: a plain rm -rf races the writer); the
# run goes on: a stats line after the output's message, then SIGINT ends it
mkdir -p "$T/gone"
"$LIVE" "${SCENE[@]}" --output "file://$T/gone/%06d.pfm" >"$T/3g.out" 2>"$T/3g.err" &
pid=$!
wait_for 60 eval 'ls "$T/gone" | grep -q pfm'
mv "$T/gone" "$T/gone.removed" && rm -rf "$T/gone.removed"
said=0 went_on=0
wait_for 60 grep -qs "output file://$T/gone/%06d.pfm: " "$T/3g.err" && said=1
lines_then=$(grep -c '^frame ' "$T/3g.out")
wait_for 60 eval '[ "$(grep -c "^frame " "$T/3g.out")" -gt "$lines_then" ]' && went_on=1
kill -INT "$pid"
ends_within "$pid" 60
wait "$pid"
rc=$?
check "a folder removed mid-run: said once, the run goes on (a stats line after it; exit 0 at SIGINT)" \
  "$T/3g.err" test "$said" = 1 -a "$went_on" = 1 -a "$rc" = 0 \
  -a "$(grep -c "output file://$T/gone/%06d.pfm: " "$T/3g.err")" = 1 \
  -a "$(grep -c 'stereo-live: [0-9]* frames' "$T/3g.out")" = 1

# ---- 4. bad outputs ------------------------------------------------------------------------
bad() { # name, expected text, options...
  local name=$1 want=$2; shift 2
  "$LIVE" "${SCENE[@]}" --frames 2 "$@" >"$T/4.out" 2>"$T/4.err"
  local rc=$?
  if [ "$rc" = 2 ] && [ "$(lines "$T/4.err")" = 1 ] && grep -qF -- "$want" "$T/4.err" &&
     [ ! -e "$T/nothing" ]; then
    ok "refused: $name"
  else
    not_ok "refused: $name" "rc $rc: $(cat "$T/4.err")"
  fi
}
bad "unknown scheme" "unknown output scheme 'ftp'" --output ftp://x/y
bad "unknown option" "unknown option 'colour' of ros2://" --output 'ros2://robot?colour=1'
bad "domain out of range" "domain = '999' is not a DDS domain id in 0..232" --output 'ros2://?domain=999'
bad "bad namespace" "is not a ROS 2 namespace" --output 'ros2://9robot'
bad "bad qos" "qos = 'fast'" --output 'ros2://robot?qos=fast'
bad "missing folder" "cannot write into the folder '$T/nothing'" --output "file://$T/nothing/%06d.pfm"
bad "a folder that takes no file (/proc, which access() passes for root)" \
  "cannot write into the folder '/proc'" --output 'file:///proc/%06d.pfm'
bad "no frame number" "needs a frame number" --output "file://$T/out.pfm"
bad "unknown extension" "must end in .pfm" --output "file://$T/%06d.jpg"
bad "depth without a camera" "depth and point clouds need the camera" --output "file://$T/%06d.ply"
bad "an output over another" "is the same file as" --stats-json "$T/x_000001.pfm" --output "file://$T/x_%06d.pfm"
bad "nine outputs" "more than 8 outputs" $(for i in 1 2 3 4 5 6 7 8 9; do echo --output "file://$T/x${i}_%06d.pfm"; done)
bad "rtp without a port" "expected HOST:PORT" --output rtp://host
# no network here: the .invalid top-level domain never resolves (RFC 6761)
bad "an rtp host that does not resolve: the URI and the resolver's message" \
  "--output 'rtp://nosuchhost.invalid:5000': the host 'nosuchhost.invalid' does not resolve (" \
  --output rtp://nosuchhost.invalid:5000
bad "an IPv6 rtp address without brackets" "an IPv6 address goes in brackets: rtp://[::1]:PORT" \
  --output rtp://::1:5000
bad "a ROS 2 namespace ending in /" "'a/b/' is not a ROS 2 namespace" --output 'ros2://a/b/'
bad "ros2 points without a camera (as file depth)" \
  "--output 'ros2://robot?points=1': depth and point clouds need the camera" \
  --output 'ros2://robot?points=1'
bad "ros2 depth encoding without a camera" "depth and point clouds need the camera" \
  --output 'ros2://robot?depth=16UC1'
"$LIVE" --input 'synth://?width=160&height=120' -d 32 --backend cpu --frames 2 \
  --output "file://$T/o/w_%06d.pfm" >"$T/4w.out" 2>&1
check "outputs without display://: no window (headless)" "$T/4w.out" grep -q 'headless;' "$T/4w.out"
mkdir -p "$T/win"
env SDL_VIDEODRIVER=offscreen "$LIVE" --input 'synth://?width=160&height=120' -d 32 --backend cpu \
  --frames 10 --output display:// --output "file://$T/win/%06d.pfm" >"$T/4v.out" 2>&1
win_sent=$(sed -n 's/.*output file:.*win.*: \([0-9]*\) sent, \([0-9]*\) drops.*/\1 \2/p' "$T/4v.out")
check "display:// and a file output: a window (SDL offscreen) and a file per frame sent (sent, drops of 10: $win_sent)" \
  "$T/4v.out" test "$(grep -c 'window: ' "$T/4v.out")" = 1 -a "$(ls "$T/win" | wc -l)" = "${win_sent%% *}" \
  -a "$(( ${win_sent%% *} + ${win_sent##* } ))" = 10
HL=$B/gpu/stereo-live-headless
if [ -x "$HL" ]; then
  "$HL" --frames 2 --output "file://$T/%06d.pfm" >"$T/4h.out" 2>&1
  rc=$?
  check "stereo-live-headless (libc only): outputs not built in, exit 2, one line" "$T/4h.out" \
    test "$rc" = 2 -a "$(lines "$T/4h.out")" = 1 -a "$(grep -c 'not built in this binary: --output' "$T/4h.out")" = 1
fi
env -u DISPLAY -u WAYLAND_DISPLAY "$LIVE" --input 'synth://?width=160&height=120' -d 32 \
  --backend cpu --frames 2 --output display:// --output "file://$T/o/w_%06d.pfm" >"$T/4d.out" 2>&1
check "display:// with another output: the window is tried (no display here: said, headless)" \
  "$T/4d.out" grep -q 'no display' "$T/4d.out"
# --screenshot whatever made the run headless: --headless, no display, outputs without display://
# (file://, gst://): the colour disparity of the last frame, written, exit 0
shot() { # name, env..., -- options...
  local name=$1 envs=(); shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  rm -f "$T/shot.png"
  env "${envs[@]}" "$LIVE" --input 'synth://?width=160&height=120' -d 32 --backend cpu --frames 3 \
    --screenshot "$T/shot.png" "$@" >"$T/4s.out" 2>&1
  local rc=$?
  if [ "$rc" = 0 ] && grep -q 'headless;' "$T/4s.out" && grep -q "screenshot $T/shot.png (frame 3" "$T/4s.out" &&
     "$PY" -c 'import sys, cv2; i = cv2.imread(sys.argv[1]); sys.exit(not (i is not None and i.shape == (120, 160, 3) and i.max() > 0))' "$T/shot.png"; then
    ok "--screenshot headless ($name): written (160x120, the colour disparity), exit 0"
  else
    not_ok "--screenshot headless ($name): written, exit 0" "rc $rc: $(tail -5 "$T/4s.out")"
  fi
}
NODISPLAY=(-u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER)
shot "--headless" "${NODISPLAY[@]}" -- --headless
shot "no display" "${NODISPLAY[@]}" --
shot "a file:// output, no display://" "${NODISPLAY[@]}" -- --output "file://$T/o/s_%06d.pfm"
shot "a file:// output, a display there" SDL_VIDEODRIVER=offscreen -- --output "file://$T/o/t_%06d.pfm"
if grep -q 'STEREO_HAVE_GST=1' "$B/config.ninja" 2>/dev/null && command -v gst-inspect-1.0 >/dev/null; then
  shot "a gst:// output" "${NODISPLAY[@]}" -- --output 'gst://appsrc ! videoconvert ! fakesink'
else
  skip "--screenshot headless (a gst:// output)" "no GStreamer build"
fi
if [ -x "$B/stereo-ros2-bridge" ]; then
  shot "a ros2:// output" "${NODISPLAY[@]}" -- --output "ros2://shot?domain=$((20 + $$ % 200))"
else
  skip "--screenshot headless (a ros2:// output)" "no ROS 2 bridge built"
fi

# ---- 5. GStreamer outputs ------------------------------------------------------------------------
if [ -n "$(grep -o 'STEREO_HAVE_GST=1' "$B/config.ninja" 2>/dev/null)" ] &&
   command -v gst-launch-1.0 >/dev/null && gst-inspect-1.0 x264enc >/dev/null 2>&1; then
  sizes() { # folder -> "N WxH ..." of its whole PNGs (distinct sizes; the last one may be cut
            # short where the receiver was stopped)
    "$PY" -c 'import cv2,glob,sys; f=[i for i in map(cv2.imread, sorted(glob.glob(sys.argv[1]+"/*.png"))) if i is not None]; print(len(f), *sorted({"%dx%d" % i.shape[1::-1] for i in f}))' "$1" 2>/dev/null
  }
  PORT=$((20000 + $$ % 20000))
  RTP_CAPS="application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000"
  DEC=(rtph264depay ! h264parse ! decodebin ! videoconvert ! video/x-raw,format=RGB ! pngenc)
  mkdir -p "$T/rtp" "$T/rtsp" "$T/gst"
  pngs() { ls "$1" | grep -c 'png$'; }
  # the receiver listens (PLAYING) before the app sends; it is stopped once it has decoded 30 of
  # the 60 frames (or after a minute: a hang)
  timeout 300 gst-launch-1.0 udpsrc port=$PORT caps="$RTP_CAPS" ! "${DEC[@]}" ! \
    multifilesink location="$T/rtp/%03d.png" >"$T/5r.log" 2>&1 &
  rx=$!
  wait_for 60 grep -qs 'Setting pipeline to PLAYING' "$T/5r.log"
  "$LIVE" "${SCENE[@]}" --frames 60 --output "rtp://127.0.0.1:$PORT" >"$T/5.out" 2>&1
  wait_for 60 eval '[ "$(pngs "$T/rtp")" -ge 30 ]'
  kill "$rx" 2>/dev/null; wait "$rx" 2>/dev/null
  r=$(sizes "$T/rtp")
  check "rtp://: a receiving pipeline decodes H.264 frames of 160x120 ($r)" "$T/5r.log" \
    test "${r#* }" = 160x120 -a "${r%% *}" -ge 30
  # IPv6: rtp://[::1]:PORT to a receiver on the IPv6 loopback, where the machine has one
  if "$PY" -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).bind(("::1", 0))' 2>/dev/null; then
    mkdir -p "$T/rtp6"
    timeout 300 gst-launch-1.0 udpsrc address=::1 port=$PORT caps="$RTP_CAPS" ! "${DEC[@]}" ! \
      multifilesink location="$T/rtp6/%03d.png" >"$T/5r6.log" 2>&1 &
    rx=$!
    wait_for 60 grep -qs 'Setting pipeline to PLAYING' "$T/5r6.log"
    "$LIVE" "${SCENE[@]}" --frames 60 --output "rtp://[::1]:$PORT" >"$T/5v6.out" 2>&1
    rc=$?
    wait_for 60 eval '[ "$(pngs "$T/rtp6")" -ge 30 ]'
    kill "$rx" 2>/dev/null; wait "$rx" 2>/dev/null
    r=$(sizes "$T/rtp6")
    check "rtp://[::1]:PORT: exit $rc, a receiver on the IPv6 loopback decodes frames of 160x120 ($r)" \
      "$T/5v6.out" test "$rc" = 0 -a "${r#* }" = 160x120 -a "${r%% *}" -ge 30
  else
    skip "rtp://[::1]:PORT to an IPv6 receiver" "no IPv6 loopback on this machine (::1 cannot be bound)"
  fi
  # the server runs until a client has decoded 20 frames: its first stats line says it serves
  "$LIVE" "${SCENE[@]}" --output "rtsp://@:$PORT/depth" >"$T/5s.out" 2>"$T/5s.err" &
  app=$!
  wait_for 60 grep -qs '^frame [1-9]' "$T/5s.out"
  "$LIVE" "${SCENE[@]}" --frames 2 --output "rtsp://@:$PORT/depth" >"$T/5p.out" 2>&1
  rc=$?
  check "rtsp:// on a port in use: refused (exit 2, one line)" "$T/5p.out" \
    test "$rc" = 2 -a "$(grep -c "cannot listen on port $PORT" "$T/5p.out")" = 1
  timeout 300 gst-launch-1.0 -q rtspsrc location="rtsp://127.0.0.1:$PORT/depth" latency=0 ! \
    "${DEC[@]}" ! multifilesink location="$T/rtsp/%03d.png" >"$T/5c.log" 2>&1 &
  rx=$!
  wait_for 60 eval '[ "$(pngs "$T/rtsp")" -ge 20 ]'
  kill "$rx" 2>/dev/null; wait "$rx" 2>/dev/null
  kill -INT "$app"; ends_within "$app" 60; wait "$app"
  r=$(sizes "$T/rtsp")
  check "rtsp://@:PORT/depth: a client decodes frames of 160x120 ($r)" "$T/5c.log" \
    test "${r#* }" = 160x120 -a "${r%% *}" -ge 20
  "$LIVE" "${SCENE[@]}" --frames 20 --output "file://$T/gst/d_%03d.pfm" \
    --output "gst://appsrc ! videoconvert ! video/x-raw,format=RGB ! pngenc ! multifilesink location=$T/gst/%03d.png" \
    >"$T/5g.out" 2>&1
  r=$(sizes "$T/gst")
  gst_sent=$(sed -n 's/.*output gst:.*: \([0-9]*\) sent, \([0-9]*\) drops.*/\1 \2/p' "$T/5g.out")
  check "gst://appsrc ! ...: every frame sent ($r; sent, drops of 20: $gst_sent), the colour-mapped view (turbo: invalid black)" \
    "$T/5g.out" "$PY" - "$T/gst" "$r" "$gst_sent" <<'EOF2'
import glob, sys, numpy as np, cv2
d, r, (sent, drops) = sys.argv[1], sys.argv[2], map(int, sys.argv[3].split())
assert sent + drops == 20 and r == f"{sent} 160x120", (r, sent, drops)
# the middle PNG is one frame's colour map: black exactly where one of the run's PFMs is invalid
c = cv2.imread(sorted(glob.glob(f"{d}/*.png"))[sent // 2])
def invalid(p):
    raw = open(p, "rb").read().split(b"\n", 3)
    return ~np.isfinite(np.frombuffer(raw[3], "<f4").reshape(120, 160)[::-1])
assert any(inv.any() and (c[inv] == 0).all() and (c[~inv].max(axis=1) > 0).mean() > 0.95
           for inv in map(invalid, sorted(glob.glob(f"{d}/d_*.pfm"))))
EOF2
else
  skip "rtp://, rtsp://, gst:// outputs" "no GStreamer build, gst-launch-1.0 or x264enc (setup.sh installs them)"
fi

# ---- 6. leaks -----------------------------------------------------------------------------------
if command -v valgrind >/dev/null; then
  mkdir -p "$T/vg"
  outs=(--output "file://$T/vg/%04d.ply" --output "file://$T/vg/%04d.png?depth=1")
  [ -x "$B/stereo-ros2-bridge" ] && outs+=(--output "ros2://vg?domain=$((20 + $$ % 200))")
  grep -q 'STEREO_HAVE_GST=1' "$B/config.ninja" 2>/dev/null &&
    outs+=(--output 'gst://appsrc ! videoconvert ! fakesink')
  timeout 600 valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
    --suppressions=tests/valgrind-glib.supp "$LIVE" --input 'synth://?width=64&height=48' -d 16 \
    --backend cpu --headless --frames 20 "${CAM[@]}" "${outs[@]}" >"$T/6.out" 2>"$T/6.err"
  rc=$?
  check "valgrind: no definite leak with $((${#outs[@]} / 2)) outputs open, written and closed (exit $rc)" \
    "$T/6.err" test "$rc" = 0 -a "$(grep -c 'definitely lost' "$T/6.err")" = 0 \
    -a "$(grep -c ': 20 sent' "$T/6.out")" -ge 2
else
  skip "valgrind: no definite leak with outputs" "valgrind is not installed"
fi
echo "1..$n"
