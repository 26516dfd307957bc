#!/usr/bin/env bash
# gpu-check.sh — everything the CUDA stage needs checked on a GPU machine, in one call.
#
#   tools/gpu-check.sh --prepare   (here, without a GPU) converts ../shared/data scenes to PPM/PGM
#                                  in .device/data, which the device run carries along
#   tools/gpu-check.sh             (on the GPU machine) builds the CUDA-and-libc-only target,
#                                  runs the bit-exactness tests, compute-sanitizer memcheck and
#                                  racecheck on a small case, the benchmark and an ncu count of
#                                  instructions and DRAM bytes per frame; prints a table last.
# Logs and results go to $OUT (default /tmp/gpu-check). Exit status: non-zero if a test failed.
set -uo pipefail
cd "$(dirname "$0")/.."
DATA=${STEREO_DATA:-../shared/data}

if [ "${1:-}" = "--prepare" ]; then
  mkdir -p .device/data
  /usr/bin/python3 - "$DATA" .device/data <<'PY'
import sys, cv2
src, dst = sys.argv[1], sys.argv[2]
scenes = {
    "tsukuba": ("middlebury2001/tsukuba/scene1.row3.col3.ppm", "middlebury2001/tsukuba/scene1.row3.col4.ppm"),
    "venus": ("middlebury2001/venus/im2.ppm", "middlebury2001/venus/im6.ppm"),
    "teddy": ("middlebury2003/teddy/im2.png", "middlebury2003/teddy/im6.png"),
    "cones": ("middlebury2003/cones/im2.png", "middlebury2003/cones/im6.png"),
    "conesH": ("middlebury2003/conesH/im2.png", "middlebury2003/conesH/im6.png"),
    "TeddyH": ("middlebury2014/TeddyH/im0.png", "middlebury2014/TeddyH/im1.png"),
    "artroom1": ("middlebury2021/artroom1/im0.png", "middlebury2021/artroom1/im1.png"),
}
for name, (l, r) in scenes.items():
    for side, path in (("left", l), ("right", r)):
        im = cv2.imread(f"{src}/{path}", cv2.IMREAD_COLOR)
        cv2.imwrite(f"{dst}/{name}-{side}.ppm", im)
for side, cam in (("left", "I1"), ("right", "I2")):
    im = cv2.imread(f"{src}/karlsruhe_sequences/2010_03_09_drive_0023/{cam}_000000.png", cv2.IMREAD_GRAYSCALE)
    cv2.imwrite(f"{dst}/karlsruhe-{side}.pgm", im)
print("prepared", len(scenes) + 1, "scenes in", dst)
PY
  exit $?
fi

OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
status=0
step() { echo; echo "=== $*"; }

step "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
nvcc --version | tail -1
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"

step "build (CUDA_ARCH=${CUDA_ARCH:=90})"
export CUDA_ARCH
./configure --cuda && ninja gpu 2>&1 | tail -5 || { echo "build failed"; exit 1; }

step "bit-exactness: CUDA vs CPU reference"
build/gpu/test-cuda .device/data >"$OUT/test-cuda.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
grep -E "FAIL|shared scenes|passed" "$OUT/test-cuda.log" | tail -25
tests_line=$(tail -1 "$OUT/test-cuda.log")
# the stage picks 4 aggregation branches when memory allows; check the 2-branch kernels too
STEREO_CUDA_BRANCHES=2 build/gpu/test-cuda --quick >"$OUT/test-cuda-2branches.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
echo "with 2 branches (quick): $(tail -1 "$OUT/test-cuda-2branches.log")"
tests_line="$tests_line; 2 branches: $(tail -1 "$OUT/test-cuda-2branches.log")"

step "compute-sanitizer (small case)"
san=""
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 3 build/gpu/test-cuda --quick >"$OUT/sanitizer-$tool.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer-$tool.log" | tail -1)
  echo "$tool: exit $rc; ${summary:-no summary}"
  san="$san $tool:${summary:-exit $rc}"
done

step "benchmark"
build/gpu/stereo-bench --csv "$OUT/bench.csv" | tee "$OUT/bench.txt"
[ "${PIPESTATUS[0]}" -ne 0 ] && status=1

step "instructions and DRAM bytes per frame (ncu, one frame of each configuration)"
while read -r size d paths; do
  ncu --clock-control none --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      --csv build/gpu/stereo-bench --size "$size" --disparities "$d" --paths "$paths" --frames 1 \
      >"$OUT/ncu-$size.csv" 2>/dev/null
  python3 - "$OUT/ncu-$size.csv" "$size" "$d" "$paths" <<'PY'
import csv, sys
path, size, d, paths = sys.argv[1:]
inst = byts = 0.0
rows = [r for r in csv.reader(open(path)) if len(r) > 10]
if not rows:
    print(f"{size} D{d} {paths}p: ncu gave no data"); sys.exit()
head = rows[0]; mi = head.index("Metric Name"); vi = head.index("Metric Value"); ui = head.index("Metric Unit")
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "inst": 1, "": 1}
for r in rows[1:]:
    v = float(r[vi].replace(",", "")) * scale.get(r[ui], 1)
    if r[mi] == "smsp__inst_executed.sum": inst += v
    else: byts += v
# Jetson projection: max(memory time, instruction time); warp-instruction issue rate =
# SMs x 4 schedulers x clock. Orin AGX: 16 SMs @ 1.3 GHz, 204.8 GB/s; Orin Nano: 8 SMs @ 0.625 GHz, 68 GB/s.
agx = max(byts / 204.8e9, inst / (16 * 4 * 1.3e9)) * 1e3
nano = max(byts / 68e9, inst / (8 * 4 * 0.625e9)) * 1e3
print(f"{size} D{d} {paths}p: {inst/1e6:.1f} M warp-instructions, {byts/1e6:.1f} MB DRAM per frame"
      f" -> projected Orin AGX {agx:.2f} ms, Orin Nano {nano:.2f} ms")
PY
done <<'CFG' | tee "$OUT/jetson.txt"
640x480 128 8
1024x440 128 4
1280x960 128 8
1920x1080 256 8
CFG

step "summary"
echo "tests: $tests_line; sanitizer:$san"
cat "$OUT/bench.txt"
exit $status
