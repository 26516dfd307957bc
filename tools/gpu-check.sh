#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu-check.sh — everything the CUDA stage needs checked on a GPU machine, in one call.
#
#   tools/gpu-check.sh --prepare   (here, without a GPU) converts ../shared/data scenes to PPM/PGM
#                                  in .device/data and copies ../shared/anchors (libSGM, its
#                                  timing program, the green-context preload) to .device/anchors;
#                                  the device run carries .device along
#   tools/gpu-check.sh             (on the GPU machine) builds the stage twice (sm_90, and
#                                  compute_87 only: the Jetson Orin's instruction path) and
#                                  libSGM the same two ways, runs the bit-exactness tests on both
#                                  builds, compute-sanitizer memcheck and racecheck on a small
#                                  case, the benchmark, the Jetson proxy table (all / 16 / 8 SMs
#                                  against libSGM, with ncu's DRAM bytes per voxel), an ncu count
#                                  of instructions and DRAM bytes per frame, and the live app
#                                  (headless) against the bare stage, on all SMs and on the
#                                  proxy; prints the tables last.
# Logs and results go to $OUT (default /tmp/gpu-check). Exit status: non-zero if a test failed.
# GC_STEPS="tests sweep band post pairs faults sanitizer bench views proxy ncu live proxylive loaded buildtime" (any subset; default all) runs only
# those steps, for a quick measurement within the device time. GC_BASE=REV also builds and times
# that revision in the proxy table; PROXY_RUNS (default 100) and PROXY_SMS (default "16 8").
# A shorter proxy step: PROXY_CONFIGS (lines "w h D paths"), PROXY_BUILDS (default "sm_90
# compute_87"), PROXY_ALL=0 leaves out the all-SM rows.
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
  rc=$?
  # the peer (libSGM), its timing program and the green-context preload, for the proxy step:
  # measured beside the project, never part of it
  ANCHORS=${STEREO_ANCHORS:-../shared/anchors}
  if [ -d "$ANCHORS/libSGM" ]; then
    rm -rf .device/anchors && cp -r "$ANCHORS" .device/anchors && echo "copied $ANCHORS to .device/anchors"
  else
    echo "no $ANCHORS/libSGM: the proxy step will have no peer"
  fi
  exit $rc
fi

# Everything is written under a scratch folder; at exit the tables and the CSV rows are copied to
# $OUT with every log packed in one archive (the device tool brings back at most 8 files).
FINAL_OUT=${OUT:-/tmp/gpu-check}
OUT=/tmp/gc-out
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL_OUT"
pack_out() {
  for f in proxy-table.txt results-jetson-proxy.csv results-band.csv bench.txt views.txt live-table.txt live-table-proxy16.txt summary.txt buildtime.txt loaded-raw.csv; do
    [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL_OUT/"
  done
  tar -czf "$FINAL_OUT/gc-logs.tgz" -C "$OUT" . 2>/dev/null
}
trap pack_out EXIT
status=0
step() { echo; echo "=== $*"; }
want() { [ -z "${GC_STEPS:-}" ] || [[ " $GC_STEPS " == *" $1 "* ]]; }
# ncu_dram CSV LABEL VOXELS: the DRAM bytes of every kernel in ncu's CSV, per frame and per voxel
# (w * h * D of the full range)
ncu_dram() {
  python3 - "$@" <<'PY'
import csv, sys
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    print(f"ncu {sys.argv[2]}: no data"); sys.exit()
h = rows[0]; iu, iv = h.index("Metric Unit"), h.index("Metric Value")
tot = sum(float(r[iv].replace(",", "")) * scale.get(r[iu], 1) for r in rows[1:])
print(f"ncu 16 SMs {sys.argv[2]}: DRAM {tot / 1e6:.0f} MB per frame, {tot / float(sys.argv[3]):.2f} B/voxel")
PY
}
tests_line="not run" san=" not run" faults_line="not run"

step "device"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
# GC_COMMIT: the commit measured, when the tree was carried without its history (a snapshot)
commit=${GC_COMMIT:-"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo +)"}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
nvcc --version | tail -1
echo "commit ${GC_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')}"

# Two builds of the stage: sm_90 here (build/), and compute_87 only (PTX, compiled for this GPU
# at load time: the instruction path a Jetson Orin runs, without Hopper's DPX) in a copy of the
# tree ($B87). GC_BASE=REV adds both builds of that git revision ($BBASE, $BBASE-90) to the proxy
# table, so a change is measured against its baseline in the same call. libSGM (the peer) is
# built the same two ways when .device/anchors is there (tools/gpu-check.sh --prepare).
B87=/tmp/gc-stage87 BBASE=/tmp/gc-base87 ANC=/tmp/gc-anchors
step "builds (sm_90 in build/, compute_87 in $B87${GC_BASE:+, base $GC_BASE both ways}, libSGM)"
copy_tree() { rm -rf "$1" && mkdir -p "$1" &&
  tar --exclude=./build --exclude=./.device --exclude=./.git -cf - . | tar -xf - -C "$1"; }
build_stage() { # dir arch log
  (cd "$1" && CUDA_ARCH=$2 ./configure --cuda >/dev/null &&
   ninja build/gpu/test-cuda build/gpu/test-block-cuda build/gpu/test-mview-cuda \
     build/gpu/test-postfilter-cuda build/gpu/stereo-bench \
     build/gpu/stereo-live-headless) >"$3" 2>&1
}
build_libsgm() { # cmake-arch nvcc-gencode tag
  cmake -S "$ANC/libSGM" -B "$ANC/build-$3" -DCMAKE_CUDA_ARCHITECTURES="$1" \
      -DCMAKE_BUILD_TYPE=Release >"$OUT/libsgm-$3.log" 2>&1 &&
    cmake --build "$ANC/build-$3" -j 6 >>"$OUT/libsgm-$3.log" 2>&1 &&
    nvcc -O3 $2 -std=c++17 -I"$ANC/libSGM/include" "$ANC/sgmbench.cu" "$ANC/build-$3/src/libsgm.a" \
      -o "$ANC/sgmbench-$3" >>"$OUT/libsgm-$3.log" 2>&1
}
pids=()
if [ -n "${GC_REUSE:-}" ] && [ -x build/gpu/stereo-bench ] && [ -x "$B87/build/gpu/stereo-bench" ]; then
  # GC_REUSE=1: a second call on the same warm machine keeps the builds of the first (the
  # stage sources must be unchanged in between)
  echo "reusing the builds of an earlier call"
else
copy_tree "$B87"
build_stage . 90 "$OUT/build-sm90.log" & pids+=($!)
build_stage "$B87" 87 "$OUT/build-compute87.log" & pids+=($!)
if [ -n "${GC_BASE:-}" ]; then
  rm -rf "$BBASE" "$BBASE-90" && mkdir -p "$BBASE" && git archive "$GC_BASE" | tar -xf - -C "$BBASE" &&
    cp -r "$BBASE" "$BBASE-90" &&
    { build_stage "$BBASE" 87 "$OUT/build-base87.log" & pids+=($!);
      build_stage "$BBASE-90" 90 "$OUT/build-base90.log" & pids+=($!); }
fi
if [ -d .device/anchors/libSGM ]; then
  rm -rf "$ANC" && cp -r .device/anchors "$ANC"
  { build_libsgm 87-virtual "-gencode arch=compute_87,code=compute_87" compute_87 &&
    build_libsgm 90 "-arch=sm_90" sm_90 &&
    nvcc -shared -Xcompiler -fPIC -o "$ANC/greenctx.so" "$ANC/greenctx.c" -lcuda \
      >>"$OUT/libsgm-sm_90.log" 2>&1; } & pids+=($!)
fi
fi
for pid in "${pids[@]}"; do wait "$pid"; done
tail -3 "$OUT/build-sm90.log"
for f in build/gpu/test-cuda build/gpu/stereo-bench "$B87"/build/gpu/test-cuda "$B87"/build/gpu/stereo-bench; do
  [ -x "$f" ] || { echo "build failed: $f"; tail -20 "$OUT"/build-*.log; exit 1; }
done
for f in "$ANC/sgmbench-compute_87" "$ANC/sgmbench-sm_90" "$ANC/greenctx.so"; do
  [ -x "$f" ] || [ -f "$f" ] || echo "libSGM build: $f missing (see $OUT/libsgm-*.log)"
done

if want tests; then
step "bit-exactness: CUDA vs CPU reference (sm_90 and compute_87 builds)"
build/gpu/test-cuda .device/data >"$OUT/test-cuda.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
grep -E "FAIL|shared scenes|passed" "$OUT/test-cuda.log" | tail -25
tests_line="sm_90: $(tail -1 "$OUT/test-cuda.log")"
"$B87"/build/gpu/test-cuda .device/data >"$OUT/test-cuda-87.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
grep -E "FAIL" "$OUT/test-cuda-87.log" | tail -10
echo "compute_87 build: $(tail -1 "$OUT/test-cuda-87.log")"
tests_line="$tests_line; compute_87: $(tail -1 "$OUT/test-cuda-87.log")"
# the cost volume: by default every cost but rank is computed into a volume first and walked
# from it (SGM_VOLUME); the whole grid also with the volume for every cost (=1) and with none
# (=0: the walks that compute their costs), both builds (compute_87: the interleaved walk)
for v in 1 0; do
  for b in build "$B87"/build; do
    STEREO_CUDA_COST_VOLUME=$v "$b"/gpu/test-cuda .device/data >"$OUT/test-cuda-volume$v.log" 2>&1
    rc=$?; [ $rc -ne 0 ] && status=1
    echo "cost volume $v ($b): $(tail -1 "$OUT/test-cuda-volume$v.log")"
    grep -E "FAIL" "$OUT/test-cuda-volume$v.log" | head -5
    tests_line="$tests_line; volume=$v $(basename "$(dirname "$b")"): $(tail -1 "$OUT/test-cuda-volume$v.log")"
  done
  STEREO_CUDA_COST_VOLUME=$v STEREO_CUDA_AGG=branches build/gpu/test-cuda --quick >"$OUT/test-cuda-volume-br.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  echo "cost volume $v, branch design (quick): $(tail -1 "$OUT/test-cuda-volume-br.log")"
done
# the strip design (sgm_strips.cu), taken only when forced: every case with a cost volume and
# D 64, 128 or 256, both builds
for b in build "$B87"/build; do
  STEREO_CUDA_AGG=strips "$b"/gpu/test-cuda .device/data >"$OUT/test-cuda-strips.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  echo "strip design ($b): $(tail -1 "$OUT/test-cuda-strips.log")"
  grep -E "FAIL" "$OUT/test-cuda-strips.log" | head -5
  tests_line="$tests_line; strips $(basename "$(dirname "$b")"): $(tail -1 "$OUT/test-cuda-strips.log")"
done
# block matching's box sums alone (gpu/block.cu against gpu/block.c), both builds
for b in build "$B87"/build; do
  "$b"/gpu/test-block-cuda >"$OUT/test-block-cuda.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  echo "box sums ($b): $(tail -1 "$OUT/test-block-cuda.log")"
  tests_line="$tests_line; box sums $(basename "$(dirname "$b")"): $(tail -1 "$OUT/test-block-cuda.log")"
done
# kernels alone against their C references, both builds: the multi-view cost (gpu/multiview.cu
# against gpu/multiview.c) and the post-filters (gpu/postfilter.cu against gpu/postfilter.c)
for kt in "mview:multi-view cost:multi-view" "postfilter:post-filters:post-filters"; do
  IFS=: read -r prog label short <<<"$kt"
  for b in build "$B87"/build; do
    "$b"/gpu/test-$prog-cuda >"$OUT/test-$prog-cuda.log" 2>&1
    rc=$?; [ $rc -ne 0 ] && status=1
    grep FAIL "$OUT/test-$prog-cuda.log" | head -5
    echo "$label ($b): $(tail -1 "$OUT/test-$prog-cuda.log")"
    tests_line="$tests_line; $short $(basename "$(dirname "$b")"): $(tail -1 "$OUT/test-$prog-cuda.log")"
  done
done
# the variants the stage selects by size, SM count or environment, each on every case: the
# compute_87 walk with 8 disparities per lane (16 wherever the lines fill the GPU), the
# packed sum pass with 8 per lane (16 is the default), and (quick) the scalar sum pass
STEREO_CUDA_WALK_K=8 STEREO_CUDA_WTA_K=8 "$B87"/build/gpu/test-cuda .device/data \
  >"$OUT/test-cuda-87-k16.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
echo "compute_87 build, walk 8 / sum pass 8 per lane: $(tail -1 "$OUT/test-cuda-87-k16.log")"
STEREO_CUDA_WTA=scalar build/gpu/test-cuda --quick >"$OUT/test-cuda-scalar.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
echo "sm_90 build, scalar sum pass (quick): $(tail -1 "$OUT/test-cuda-scalar.log")"
tests_line="$tests_line; compute_87 walk8/sum8: $(tail -1 "$OUT/test-cuda-87-k16.log")"
# the stage uses per-direction byte volumes where L fits a byte (the defaults); option sets
# with larger penalties take the branch design. Check the branch design on every case too
# (4 branches), and its 2-branch kernels on the quick set.
for b in 4 2; do
  if [ $b = 4 ]; then args=.device/data; what=""; else args=--quick; what=" (quick)"; fi
  STEREO_CUDA_AGG=branches STEREO_CUDA_BRANCHES=$b build/gpu/test-cuda $args \
    >"$OUT/test-cuda-branches$b.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  echo "branch design, $b branches$what: $(tail -1 "$OUT/test-cuda-branches$b.log")"
  tests_line="$tests_line; $b branches: $(tail -1 "$OUT/test-cuda-branches$b.log")"
done

fi

if want sweep; then
step "the sweep design (sgm_sweep.cu) forced on every case, both builds; sanitizers on it; sweep against the per-direction design on 16 and 8 SMs"
for b in build "$B87"/build; do
  STEREO_CUDA_AGG=sweep "$b"/gpu/test-cuda .device/data >"$OUT/test-cuda-sweep.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  grep FAIL "$OUT/test-cuda-sweep.log" | head -8
  echo "sweep design ($b): $(tail -1 "$OUT/test-cuda-sweep.log")"
  tests_line="$tests_line; sweep $(basename "$(dirname "$b")"): $(tail -1 "$OUT/test-cuda-sweep.log")"
done
STEREO_CUDA_AGG=sweep STEREO_CUDA_SWEEP_K=8 "$B87"/build/gpu/test-cuda --quick >"$OUT/test-cuda-sweep8.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
echo "sweep design, 8 disparities a lane (compute_87, quick): $(tail -1 "$OUT/test-cuda-sweep8.log")"
for tool in memcheck racecheck; do
  STEREO_CUDA_AGG=sweep compute-sanitizer --tool $tool --error-exitcode 3 "$B87"/build/gpu/test-cuda --quick \
    >"$OUT/sanitizer-$tool-sweep.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  echo "$tool (sweep, compute_87): exit $rc; $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer-$tool-sweep.log" | tail -1)"
done
for sms in 16 8; do
  for cfg in "640x480 128 8" "1024x440 128 4" "1280x960 128 8" "1920x1080 256 8"; do
    set -- $cfg
    for agg in dirs sweep; do
      echo "$sms SMs $agg: $(STEREO_CUDA_AGG=$agg "$B87"/build/gpu/stereo-bench --size $1 --disparities $2 --paths $3 \
        --runs ${SWEEP_RUNS:-50} --sms $sms | grep "$1")"
    done
  done
done
# 512 disparities at 1920x1080 on 16 SMs: bit for bit against the CPU reference (test-cuda
# --d512, compute_87), then time and device memory
"$B87"/build/gpu/test-cuda --d512 >"$OUT/test-cuda-d512.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
grep FAIL "$OUT/test-cuda-d512.log" | head -4
echo "1920x1080 D512 on 16 SMs (compute_87): $(tail -1 "$OUT/test-cuda-d512.log")"
tests_line="$tests_line; 1920x1080 D512: $(tail -1 "$OUT/test-cuda-d512.log")"
# 512 disparities (only the sweep design runs them) at 1920x1080 on 16 SMs: time and device memory
for c in rank census; do
  echo "16 SMs D512: $("$B87"/build/gpu/stereo-bench --size 1920x1080 --disparities 512 --paths 8 --cost $c \
    --runs 5 --sms 16 2>&1 | grep -E "1920x1080|stereo-bench")"
done
# DRAM bytes per frame of the sweep against the per-direction design (ncu, 16 SMs, one frame)
for cfg in "640x480 128 8" "1024x440 128 4" "1280x960 128 8"; do
  set -- $cfg
  for agg in dirs sweep; do
    STEREO_CUDA_AGG=$agg ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv \
      "$B87"/build/gpu/stereo-bench --size $1 --disparities $2 --paths $3 --frames 1 --sms 16 \
      >"$OUT/ncu-sweep.csv" 2>/dev/null
    ncu_dram "$OUT/ncu-sweep.csv" "$agg $1 D$2 $3p" $(( ${1%x*} * ${1#*x} * $2 ))
  done
done
# how far ahead the sweep copies the previous warp's records (SWEEP_PFQS="2 4 ..."; measurements)
for knob in ${SWEEP_PFQS:-}; do
  for cfg in "640x480 128 8" "1280x960 128 8"; do
    set -- $cfg
    echo "16 SMs sweep pfq=$knob: $(STEREO_CUDA_SWEEP_PFQ=$knob STEREO_CUDA_AGG=sweep \
      "$B87"/build/gpu/stereo-bench --size $1 --disparities $2 --paths $3 --runs ${SWEEP_RUNS:-50} --sms 16 | grep "$1")"
  done
done
fi

if want band; then
step "the coarse-to-fine mode (band.h): bit for bit on both builds, sanitizers, proxy time and DRAM against the full range"
for b in build "$B87"/build; do
  "$b"/gpu/test-cuda --band >"$OUT/test-cuda-band.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  grep FAIL "$OUT/test-cuda-band.log" | head -8
  echo "band ($b): $(tail -1 "$OUT/test-cuda-band.log")"
  tests_line="$tests_line; band $(basename "$(dirname "$b")"): $(tail -1 "$OUT/test-cuda-band.log")"
done
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 3 "$B87"/build/gpu/test-cuda --quick \
    >"$OUT/sanitizer-$tool-band.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  echo "$tool (quick set with its band cases, compute_87): exit $rc; $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer-$tool-band.log" | tail -1)"
done
# DRAM bytes per voxel of the full range (ncu, 16 SMs, one frame; BAND_NCU=0 skips), then the
# times on 16 and 8 SMs; rows in docs/results-jetson-proxy.csv's format (mode "full" or
# "band W") go to results-band.csv
BAND_CONFIGS=${BAND_CONFIGS:-"640x480:128:8 1280x960:128:8 1920x1080:256:8 1920x1080:512:8"}
declare -A band_bpv
for cfg in $BAND_CONFIGS; do
  [ "${BAND_NCU:-1}" = 0 ] && break
  IFS=: read -r size d paths <<<"$cfg"
  for band in 0 32; do
    ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv \
      "$B87"/build/gpu/stereo-bench --size $size --disparities $d --paths $paths --frames 1 --sms 16 --band $band \
      --cost "${PROXY_COST:-adcensus}" >"$OUT/ncu-band.csv" 2>/dev/null
    line=$(ncu_dram "$OUT/ncu-band.csv" "band $band $size D$d ${paths}p" $(( ${size%x*} * ${size#*x} * d )))
    echo "$line"
    band_bpv["$size $d $band"]=$(sed -nE 's/.* ([0-9.]+) B\/voxel.*/\1/p' <<<"$line")
  done
done
for sms in ${BAND_SMS:-16 8}; do
  for cfg in $BAND_CONFIGS; do
    IFS=: read -r size d paths <<<"$cfg"
    for band in 0 32 64; do
      line=$("$B87"/build/gpu/stereo-bench --size $size --disparities $d --paths $paths \
        --runs ${BAND_RUNS:-50} --sms $sms --band $band --cost "${PROXY_COST:-adcensus}" 2>&1 |
        grep -E "$size|stereo-bench")
      echo "$sms SMs band $band: $line"
      ms=$(sed -nE 's/.* ([0-9.]+) ms .*/\1/p' <<<"$line" | head -1)
      mode=full; [ $band -gt 0 ] && mode="band $band"
      [ -n "$ms" ] && echo "$(date -u +%F),$commit,$device,$sms,compute_87,$size,$d,$paths,$ms,,${band_bpv["$size $d $band"]:-},,$mode,,${PROXY_COST:-adcensus}" \
        >>"$OUT/results-band.csv"
    done
  done
done
fi

if want post; then
step "post-filters: their cost per frame (stereo-bench --post) on all SMs and the 16-SM proxy"
for cfg in "640x480 128 8" "1280x960 128 8"; do
  set -- $cfg
  for post in none speckle fill temporal all; do
    opt=(--post $post)
    echo "all SMs $post: $(build/gpu/stereo-bench --size $1 --disparities $2 --paths $3 \
      --runs ${POST_RUNS:-50} "${opt[@]}" 2>&1 | grep -E "$1|stereo-bench")"
    echo "16 SMs $post: $("$B87"/build/gpu/stereo-bench --size $1 --disparities $2 --paths $3 \
      --runs ${POST_RUNS:-50} --sms 16 "${opt[@]}" 2>&1 | grep -E "$1|stereo-bench")"
  done
done
fi

if want pairs; then
step "the default (4 paths, speckle removal) against the former default (8 paths, none) and the other two pairs, per frame (stereo-bench)"
# docs/tuning.md: the default is more accurate than the former one on every kind of scene left
# out; this times the four pairs on the proxy and on all SMs
for cfg in "640x480 128" "1280x960 128"; do
  set -- $cfg
  for opts in "--paths 8 --post none" "--paths 4 --post none" "--paths 4" "--paths 8"; do
    for where in all 16; do
      b=build; sms=(); [ $where = 16 ] && b="$B87/build" && sms=(--sms 16)
      echo "$where SMs $1 D$2 $opts: $("$b"/gpu/stereo-bench --size $1 --disparities $2 $opts \
        --runs ${POST_RUNS:-50} "${sms[@]}" 2>&1 | grep -E "$1|stereo-bench" | tail -1)"
    done
  done
done
fi

if want faults; then
step "faults on the GPU path (tests/gpu/faults.sh: allocation failure, kernel fault mid-stream)"
ninja build/gpu/stereo-live-headless >/dev/null 2>&1
tests/gpu/faults.sh build >"$OUT/faults.log" 2>&1
rc=$?; [ $rc -ne 0 ] && status=1
grep -E '^(not )?ok|^#' "$OUT/faults.log"
faults_line="$(grep -c '^ok' "$OUT/faults.log") passed, $(grep -c '^not ok' "$OUT/faults.log") failed"
fi

if want sanitizer; then
step "compute-sanitizer (small case)"
san=""
# sanitized NAME LABEL CMD...: runs CMD (a compute-sanitizer command) into sanitizer-NAME.log;
# its summary goes to the output and into $san
sanitized() {
  local name=$1 label=$2
  shift 2
  "$@" >"$OUT/sanitizer-$name.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=1
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer-$name.log" | tail -1)
  echo "$label: exit $rc; ${summary:-no summary}"
  san="$san ${label// /}:${summary:-exit $rc}"
}
for build in build "$B87/build"; do
  b=sm_90; [ "$build" = build ] || b=compute_87
  for agg in dirs branches strips; do
    [ $b = compute_87 ] && [ $agg = branches ] && continue # the branch design has no per-arch code
    for tool in memcheck racecheck; do
      sanitized "$tool-$agg-$b" "$tool ($agg, $b)" env STEREO_CUDA_AGG=$agg timeout 900 compute-sanitizer \
        --tool $tool --error-exitcode 3 "$build"/gpu/test-cuda --quick
    done
  done
done
# the post-filter kernels (the union-find's global races are by design; memcheck and the
# fill's shared memory under racecheck)
for tool in memcheck racecheck; do
  sanitized "$tool-postfilter" "$tool (post-filters)" compute-sanitizer --tool $tool \
    --error-exitcode 3 build/gpu/test-postfilter-cuda
done

fi

if want bench; then
step "benchmark"
build/gpu/stereo-bench --csv "$OUT/bench.csv" | tee "$OUT/bench.txt"
[ "${PIPESTATUS[0]}" -ne 0 ] && status=1
# every cost the CUDA stage has, with SGM (8 paths) and with block matching (9x9), 640x480 D128:
# on all SMs (sm_90) and on the Jetson AGX proxy (16 SMs, compute_87)
{
  echo "each cost, 640x480 D128 (all SMs, sm_90 build):"
  for m in sgm bm; do
    for c in rank census ad bt; do
      build/gpu/stereo-bench --size 640x480 --disparities 128 --paths 8 --cost $c --method $m \
        --runs 200 | grep 640x480
    done
  done
  echo "each cost, 640x480 D128 (16 SMs, compute_87 build):"
  for m in sgm bm; do
    for c in rank census ad bt; do
      "$B87"/build/gpu/stereo-bench --size 640x480 --disparities 128 --paths 8 --cost $c \
        --method $m --sms 16 --runs 100 | grep 640x480
    done
  done
} | tee -a "$OUT/bench.txt"

fi

if want views; then
step "more views: 640x480 D128 8 paths, 3 views (1,-1) and 4 (1,2,-1) against the pair, all SMs (sm_90) and the Jetson proxy (compute_87, 16 and 8 SMs) beside libSGM's pair in the same call"
{
  for sms in all 16 8; do
    if [ $sms = all ]; then bin=build/gpu/stereo-bench; extra=(); b=sm_90
    else bin=$B87/build/gpu/stereo-bench; extra=(--sms $sms); b=compute_87; fi
    echo "-- $sms SMs ($b build), median of 100 runs:"
    for c in rank census; do
      for v in "" "--baselines 1,-1" "--baselines 1,2,-1" "--baselines 1,-1 --combine sum"; do
        # shellcheck disable=SC2086 # $v: zero or more words
        "$bin" --size 640x480 --disparities 128 --paths 8 --cost $c --runs 100 $v "${extra[@]}" |
          grep 640x480 | sed "s/^/${v:-pair}: /"
      done
    done
    lib=$ANC/sgmbench-$b
    if [ -x "$lib" ]; then
      if [ $sms = all ]; then out=$("$lib" 640 480 128 8 100 2>&1)
      else out=$(SM_LIMIT=$sms LD_PRELOAD=$ANC/greenctx.so "$lib" 640 480 128 8 100 2>&1); fi
      echo "libSGM pair ($b, $sms SMs): $(echo "$out" | tail -1)"
    fi
  done
  # DRAM bytes per frame (ncu, compute_87 build, 16 SMs, one frame): the pair and 3 views
  for v in "" "--baselines 1,-1" "--baselines 1,-1 --combine sum"; do
    for c in rank census; do
      # shellcheck disable=SC2086 # $v: zero or more words
      ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv \
        "$B87"/build/gpu/stereo-bench --size 640x480 --disparities 128 --paths 8 --cost $c \
        --frames 1 --sms 16 $v >"$OUT/ncu-views.csv" 2>/dev/null
      python3 - "$OUT/ncu-views.csv" "${v:-pair}" $c <<'PY'
import csv, sys
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    print(f"ncu {sys.argv[2]} {sys.argv[3]}: no data"); sys.exit()
h = rows[0]; iname, iunit, ival = h.index("Metric Name"), h.index("Metric Unit"), h.index("Metric Value")
ik = h.index("Kernel Name"); idd = h.index("ID")
tot, kern = 0.0, {}
for r in rows[1:]:
    v = float(r[ival].replace(",", "")) * scale.get(r[iunit], 1)
    tot += v
    k = r[ik].split("(")[0].split("<")[0].split()[-1]
    kern[k] = kern.get(k, 0) + v
top = ", ".join(f"{k} {v / 1e6:.0f}" for k, v in sorted(kern.items(), key=lambda x: -x[1])[:4])
print(f"ncu 16 SMs, {sys.argv[2]}, {sys.argv[3]}: DRAM {tot / 1e6:.0f} MB per frame ({top} MB)")
PY
    done
  done
} 2>&1 | tee "$OUT/views.txt"
fi

if want proxy; then
step "Jetson proxy: the stage on green contexts of all / 16 / 8 SMs, sm_90 and compute_87 builds, against libSGM built the same way"
# The proxy models an Orin's SM count (AGX 16, Nano 8), not its clock or memory bandwidth: its
# figures are ratios against libSGM measured in the same call. Our stage runs on N SMs through
# its own option (stereo-bench --sms N); libSGM through the green-context preload of
# ../shared/anchors (SM_LIMIT=N). Both: median of PROXY_RUNS (default 100) after 20 warm-ups.
PROXY_RUNS=${PROXY_RUNS:-100}
export PROXY_COST=${PROXY_COST:-adcensus} # the stage's cost (libSGM has its own census)
PROXY_CONFIGS=${PROXY_CONFIGS:-$'640 480 128 4\n1280 960 128 4\n1920 1080 256 4\n640 480 128 8'} # w h D paths
all_sms=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)" 2>/dev/null)
[ -n "$all_sms" ] || all_sms=132
echo "date,commit,device,sms,build,size,disparities,paths,project_ms,libsgm_ms,base_ms,stages" >"$OUT/proxy-raw.csv"
run_project() { # bench-binary w h d paths sms -> median ms and the stage times (csv fields)
  local tmp; tmp=$(mktemp)
  local args=(--size "$2x$3" --disparities "$4" --paths "$5" --runs "$PROXY_RUNS" --csv "$tmp"
              --cost "$PROXY_COST")
  if [ "$6" = "$all_sms" ]; then "$1" "${args[@]}" >/dev/null 2>>"$OUT/proxy.err"
  elif "$1" --help 2>&1 | grep -q -- --sms; then "$1" "${args[@]}" --sms "$6" >/dev/null 2>>"$OUT/proxy.err"
  else SM_LIMIT=$6 LD_PRELOAD=$ANC/greenctx.so "$1" "${args[@]}" >/dev/null 2>>"$OUT/proxy.err"; fi
  if [ -s "$tmp" ]; then echo "$(cut -d, -f6 "$tmp"),$(cut -d, -f9- "$tmp" | tr ',' ' ')"; else echo ","; fi
  rm -f "$tmp"
}
run_libsgm() { # build w h d paths sms -> median ms
  local bin=$ANC/sgmbench-$1 out
  [ -x "$bin" ] || { echo ""; return; }
  if [ "$6" = "$all_sms" ]; then out=$("$bin" "$2" "$3" "$4" "$5" "$PROXY_RUNS" 2>>"$OUT/proxy.err")
  else out=$(SM_LIMIT=$6 LD_PRELOAD=$ANC/greenctx.so "$bin" "$2" "$3" "$4" "$5" "$PROXY_RUNS" 2>>"$OUT/proxy.err"); fi
  echo "$out" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}
proxy_all=$all_sms; [ "${PROXY_ALL:-1}" = 0 ] && proxy_all=""
for sms in $proxy_all ${PROXY_SMS:-16 8}; do
  while read -r w h d paths; do
    for b in ${PROXY_BUILDS:-sm_90 compute_87}; do
      if [ $b = sm_90 ]; then bin=build/gpu/stereo-bench; else bin=$B87/build/gpu/stereo-bench; fi
      r=$(run_project "$bin" "$w" "$h" "$d" "$paths" "$sms")
      lib=$(run_libsgm $b "$w" "$h" "$d" "$paths" "$sms")
      base="" bb=$BBASE; [ $b = sm_90 ] && bb=$BBASE-90
      if [ -x "$bb/build/gpu/stereo-bench" ]; then
        base=$(run_project "$bb/build/gpu/stereo-bench" "$w" "$h" "$d" "$paths" "$sms"); base=${base%%,*}
      fi
      echo "$(date -u +%F),$commit,$device,$sms,$b,${w}x$h,$d,$paths,${r%%,*},$lib,$base,${r#*,}" >>"$OUT/proxy-raw.csv"
    done
  done <<<"$PROXY_CONFIGS"
done
# ncu on the compute_87 build on 16 SMs: DRAM bytes and executed instructions per frame
ncu_args=(); build/gpu/stereo-bench --help 2>&1 | grep -q -- --sms && ncu_args=(--sms 16)
while read -r w h d paths; do
  ncu --clock-control none --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      --csv "$B87"/build/gpu/stereo-bench --size "${w}x$h" --disparities "$d" --paths "$paths" --frames 1 \
      --cost "$PROXY_COST" "${ncu_args[@]}" >"$OUT/ncu87-${w}x$h-${paths}p.csv" 2>/dev/null
  # libSGM's first frame (its 7 + paths kernels: census x2, the paths, WTA, 2 medians, LR check,
  # range), for the bytes per voxel of the peer (the same on any SM count), at every size
  if [ -x "$ANC/sgmbench-compute_87" ]; then
    ncu --clock-control none --launch-count $((7 + paths)) --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
        --csv "$ANC/sgmbench-compute_87" "$w" "$h" "$d" "$paths" 1 >"$OUT/ncu-libsgm-${w}x$h-${paths}p.csv" 2>/dev/null
  fi
done <<<"$PROXY_CONFIGS"
python3 - "$OUT" "${ncu_args[*]:-all SMs}" <<'PY' | tee "$OUT/proxy-table.txt"
import csv, os, sys
out, ncu_sms = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(os.path.join(out, "proxy-raw.csv"))))
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "inst": 1, "": 1}
ncu = {}
for r in rows:
    size = r["size"]
    nk = f"{size}-{r['paths']}p"  # ncu's figures per size and path count
    path = os.path.join(out, f"ncu87-{nk}.csv")
    if nk in ncu or not os.path.exists(path):
        continue
    data = [x for x in csv.reader(open(path)) if len(x) > 10]
    if not data:
        continue
    head = data[0]; mi, vi, ui, ki = (head.index(k) for k in ("Metric Name", "Metric Value", "Metric Unit", "Kernel Name"))
    inst = byts = 0.0; per = {}; perb = {}
    for x in data[1:]:
        v = float(x[vi].replace(",", "")) * scale.get(x[ui], 1)
        k = x[ki].split("(")[0].split("<")[0]
        if x[mi] == "smsp__inst_executed.sum":
            inst += v; per[k] = per.get(k, 0) + v
        else:
            byts += v; perb[k] = perb.get(k, 0) + v
    w, h = map(int, size.split("x"))
    ncu[nk] = (inst, byts, byts / (w * h * int(r["disparities"])), per, perb)
print(f"Jetson proxy (median of runs; ms; 'x' = libSGM time / project time, above 1 = project faster)")
print(f"{'SMs':>4} {'size':>10} {'D':>4} {'p':>2} | {'sm_90':>8} {'libSGM':>8} {'x':>5} {'base':>8} | {'c_87':>8} {'libSGM':>8} {'x':>5} {'base':>8} | stages (compute_87)")
key = lambda r: (r["sms"], r["size"], r["paths"])
by = {}
for r in rows:
    by.setdefault(key(r), {})[r["build"]] = r
def f(v): return f"{float(v):8.3f}" if v else "       -"
def x(a, b): return f"{float(b)/float(a):5.2f}" if a and b else "    -"
for (sms, size, _), d in by.items():
    a, c = d.get("sm_90", {}), d.get("compute_87", {})
    r = a or c
    print(f"{sms:>4} {size:>10} {r['disparities']:>4} {r['paths']:>2} | {f(a.get('project_ms'))} {f(a.get('libsgm_ms'))} {x(a.get('project_ms'), a.get('libsgm_ms'))} {f(a.get('base_ms'))} | "
          f"{f(c.get('project_ms'))} {f(c.get('libsgm_ms'))} {x(c.get('project_ms'), c.get('libsgm_ms'))} {f(c.get('base_ms'))} | {c.get('stages', '')}")
print(f"ncu, compute_87 build ({ncu_sms}), one frame:")
for nk, (inst, byts, bpv, per, perb) in ncu.items():
    top = ", ".join(f"{k} {v/1e6:.1f} M" for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:3])
    topb = ", ".join(f"{k} {v/1e6:.1f} MB" for k, v in sorted(perb.items(), key=lambda kv: -kv[1])[:4])
    print(f"  {nk}: {inst/1e6:.1f} M warp-instructions ({top}), DRAM {byts/1e6:.1f} MB = {bpv:.2f} B/voxel ({topb})")
def ncu_sum(path):
    data = [x for x in csv.reader(open(path))] if os.path.exists(path) else []
    data = [x for x in data if len(x) > 10]
    if not data:
        return None
    head = data[0]
    if not all(k in head for k in ("Metric Name", "Metric Value", "Metric Unit")):
        return None
    mi, vi, ui = (head.index(k) for k in ("Metric Name", "Metric Value", "Metric Unit"))
    inst = byts = 0.0
    for x in data[1:]:
        v = float(x[vi].replace(",", "")) * scale.get(x[ui], 1)
        if x[mi] == "smsp__inst_executed.sum": inst += v
        else: byts += v
    return inst, byts
# Jetson projection: the proxy models the SM count, not the clock or the memory. A frame on an
# Orin takes at least its instruction time (the proxy's time scaled from the H100's boost clock,
# 1.98 GHz, to the Orin's GPU clock) and at least its DRAM bytes over the Orin's bandwidth; it
# is taken as the larger of the two (perfect overlap: optimistic). Orin AGX: 16 SMs, 1.3 GHz,
# 204.8 GB/s; Orin NX 16 GB: 8 SMs, 0.918 GHz, 102.4 GB/s; Orin Nano 8 GB: 8 SMs, 0.625 GHz,
# 68 GB/s (shared with the CPU in all).
orins = (("Orin AGX", "16", 1.3e9, 204.8e9), ("Orin NX", "8", 0.918e9, 102.4e9),
         ("Orin Nano", "8", 0.625e9, 68e9))
print("Jetson projection (ms per frame = max(proxy time x 1.98 GHz / Orin clock, DRAM bytes / bandwidth);"
      " 'x' = libSGM's frame / the project's, the same way):")
lib_bpv = {}
sizes = []
for r in rows:
    if (r["size"], r["disparities"], r["paths"]) not in sizes:
        sizes.append((r["size"], r["disparities"], r["paths"]))
for size, dd, pp in sizes:
    nk = f"{size}-{pp}p"
    lib = ncu_sum(os.path.join(out, f"ncu-libsgm-{nk}.csv"))
    w, h = map(int, size.split("x"))
    if lib:
        lib_bpv[nk] = lib[1] / (w * h * int(dd))
    for name, sms, clock, bw in orins:
        d = by.get((sms, size, pp), {}).get("compute_87")
        if not d or nk not in ncu or not d.get("project_ms"):
            continue
        ti = float(d["project_ms"]) * 1.98e9 / clock; tm = ncu[nk][1] / bw * 1e3
        t = max(ti, tm)
        line = f"  {name:9} {size:>9} D{dd} {pp}p: project {t:6.2f} ms ({1e3 / t:5.0f} fps; instructions {ti:.2f}, memory {tm:.2f})"
        if lib and d.get("libsgm_ms"):
            li = float(d["libsgm_ms"]) * 1.98e9 / clock; lm = lib[1] / bw * 1e3
            line += f"; libSGM {max(li, lm):6.2f} ms (instructions {li:.2f}, memory {lm:.2f}, {lib_bpv[nk]:.2f} B/voxel); x {max(li, lm) / t:4.2f}"
        print(line)
# rows in the committed format (docs/results-jetson-proxy.csv): bytes per voxel (ncu, 16 SMs) on
# the compute_87 rows of the proxies, libSGM's beside them; mode full (the coarse-to-fine mode
# is not built); the shared scenes' mean bad-2 of the default (PROXY_BAD2: measured by
# tests/test_accuracy.py on the CPU reference, whose bits the stage reproduces) on 1280x960
with open(os.path.join(out, "results-jetson-proxy.csv"), "w") as fo:
    for r in rows:
        proxy = r["build"] == "compute_87" and r["sms"] in ("16", "8")
        nk = f"{r['size']}-{r['paths']}p"
        bpv = ncu.get(nk, (0, 0, None))[2] if proxy else None
        lbpv = lib_bpv.get(nk) if proxy else None
        bad2 = os.environ.get("PROXY_BAD2", "") if r["size"] == "1280x960" else ""
        fo.write(",".join([r["date"], r["commit"], r["device"], r["sms"], r["build"], r["size"], r["disparities"],
                           r["paths"], r["project_ms"], r["libsgm_ms"], f"{bpv:.2f}" if bpv else "",
                           f"{lbpv:.2f}" if lbpv else "", "default", bad2,
                           os.environ.get("PROXY_COST", "adcensus")]) + "\n")
PY
fi

if want ncu; then
step "instructions and DRAM bytes per frame (ncu, one frame of each configuration)"
while read -r size d paths; do
  ncu --clock-control none --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      --csv build/gpu/stereo-bench --size "$size" --disparities "$d" --paths "$paths" --frames 1 \
      >"$OUT/ncu-$size.csv" 2>/dev/null
  python3 - "$OUT/ncu-$size.csv" "$size" "$d" "$paths" <<'PY'
import csv, sys
path, size, d, paths = sys.argv[1:]
inst = walk = byts = 0.0
rows = [r for r in csv.reader(open(path)) if len(r) > 10]
if not rows:
    print(f"{size} D{d} {paths}p: ncu gave no data"); sys.exit()
head = rows[0]; mi = head.index("Metric Name"); vi = head.index("Metric Value"); ui = head.index("Metric Unit")
ki = head.index("Kernel Name")
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "inst": 1, "": 1}
for r in rows[1:]:
    v = float(r[vi].replace(",", "")) * scale.get(r[ui], 1)
    if r[mi] == "smsp__inst_executed.sum":
        inst += v
        if "k_dirs" in r[ki] or "k_aggregate" in r[ki]:
            walk += v
    else: byts += v
print(f"{size} D{d} {paths}p (sm_90 build, all SMs): {inst/1e6:.1f} M warp-instructions "
      f"({walk/1e6:.1f} M in the walk), {byts/1e6:.1f} MB DRAM per frame "
      f"(the Jetson projection is in the proxy step, from the compute_87 build)")
PY
done <<'CFG' | tee "$OUT/jetson.txt"
640x480 128 8
1024x440 128 4
1280x960 128 8
1920x1080 256 8
CFG

fi

step "live app against the bare stage (generated scene, CUDA, D128, the default ${LIVE_PATHS:-4} paths)"
# bare: stereo-bench --async, the stage alone through stereo.h's asynchronous API as the app
#   calls it (submit, wait; one frame in flight, results double-buffered), on frames rendered
#   beforehand (--rewrite: each pair copied into its frame before submitting it, as the app's
#   capture thread does, to show what the CPU's writes cost the stage);
# app: build/gpu/stereo-live-headless, the whole app (source, stage and consumer threads) on the
#   same scene, size and options, unpaced and pre-rendered (the renderer out of the way): its
#   throughput against the bare stage's (goal >= 90 %) and its latency at full load (capture ->
#   consumed; the files-like unpaced source keeps 2 pairs queued ahead of the stage); then paced
#   at 30 fps like a camera, for the latency a live user sees;
# managed: the app with STEREO_CUDA_FRAMES=managed, the frames in managed memory as on a Jetson
#   (the default on this discrete GPU is pinned host memory, copied in at submit).
# Both use (frames - 1) / (last result - first result). Every run is repeated LIVE_REPEAT times
# (default 3), interleaved; the table gives medians and the range. A failure here is printed
# and does not change the exit status.
LIVE_RUNS="bare bare-rewrite app app-30fps managed managed-30fps"
live_vs_stage() {
  ninja build/gpu/stereo-live-headless 2>&1 | tail -3 || { echo "build of stereo-live-headless failed"; return 1; }
  local size w h common run log rep json
  for size in 640x480 1280x960; do
    w=${size%x*} h=${size#*x}
    common=(--backend cuda --set synth.width="$w" --set synth.height="$h"
            --set stereo.disparities=128 --set stereo.paths="${LIVE_PATHS:-4}" --synth-prerender 32
            ${LIVE_SMS:+--set stereo.sms=$LIVE_SMS})
    for rep in $(seq "${LIVE_REPEAT:-3}"); do
      for run in $LIVE_RUNS; do
        log="$OUT/live${LIVE_TAG:-}-$run-$size-$rep.log" json="$OUT/live${LIVE_TAG:-}-$run-$size-$rep.json"
        frames=(env)
        case $run in managed*) frames=(env STEREO_CUDA_FRAMES=managed) ;; esac
        case $run in
          bare) timeout 120 build/gpu/stereo-bench --async --size "$size" --disparities 128 \
                  --paths "${LIVE_PATHS:-4}" --runs 300 --json "$json" ${LIVE_SMS:+--sms $LIVE_SMS} >"$log" 2>&1 ;;
          bare-rewrite) timeout 120 build/gpu/stereo-bench --async --rewrite --size "$size" \
                  --disparities 128 --paths "${LIVE_PATHS:-4}" --runs 300 --json "$json" >"$log" 2>&1 ;;
          app|managed) timeout 120 "${frames[@]}" build/gpu/stereo-live-headless "${common[@]}" \
                  --set synth.fps=0 --frames 300 --stats-json "$json" >"$log" 2>&1 ;;
          *-30fps) timeout 120 "${frames[@]}" build/gpu/stereo-live-headless "${common[@]}" \
                  --set synth.fps=30 --frames 90 --stats-json "$json" >"$log" 2>&1 ;;
        esac
        rc=$?
        if [ $rc -ne 0 ]; then
          echo "$size $run (run $rep): failed (exit $rc): $(tail -2 "$log" | tr '\n' ' ')"
          rm -f "$json"
        fi
      done
    done
    grep -h '^async\|^stereo-live: [0-9.]* fps' "$OUT/live${LIVE_TAG:-}-bare-$size-1.log" \
      "$OUT/live${LIVE_TAG:-}-app-$size-1.log" 2>/dev/null | sed 's/^/  /'
  done
  python3 - "$OUT" "${LIVE_REPEAT:-3}" "${LIVE_TAG:-}" "$LIVE_RUNS" "${LIVE_SMS:-all}" "$PWD" "${LIVE_PATHS:-4}" <<'PY' | tee "$OUT/live-table${LIVE_TAG:-}.txt"
import json, os, statistics, sys
out, reps, tag, wanted, sms, tree, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5], sys.argv[6], sys.argv[7]
def runs(run, size):  # {repeat: result}
    got = {}
    for r in range(1, reps + 1):
        try:
            got[r] = json.load(open(os.path.join(out, f"live{tag}-{run}-{size}-{r}.json")))
        except (OSError, ValueError):
            pass
    return got
def med(vals, fmt):
    if not vals:
        return "failed"
    m = statistics.median(vals)
    return fmt.format(m) + (f" ({fmt.format(min(vals))}-{fmt.format(max(vals))})" if len(vals) > 1 else "")
def lat(js):
    js = list(js.values())
    if not js:
        return "failed"
    return (f"{statistics.median(j['latency_ms']['median'] for j in js):.2f} / "
            f"{statistics.median(j['latency_ms']['p95'] for j in js):.2f}")
print(f"live app (stereo-live-headless, unpaced, pre-rendered) against the bare stage "
      f"(stereo-bench --async), CUDA, D128, {paths} paths, {sms} SMs, built in {tree}; "
      f"median (range) of {reps} interleaved runs:")
for size in ("640x480", "1280x960"):
    r = {k: runs(k, size) for k in ("bare", "bare-rewrite", "app", "app-30fps", "managed",
                                     "managed-30fps")}
    ratio = lambda k: [100 * a["fps"] / r["bare"][n]["fps"] for n, a in r[k].items()
                       if n in r["bare"] and r["bare"][n]["fps"] > 0]
    fps = lambda k: [j["fps"] for j in r[k].values()]
    print(f"{size}:")
    print(f"  bare stage fps        {med(fps('bare'), '{:.0f}')}"
          + (f"   (frames rewritten by the CPU: {med(fps('bare-rewrite'), '{:.0f}')})"
             if "bare-rewrite" in wanted else ""))
    for k, name in (("app", "app, pinned frames "), ("managed", "app, managed frames")):
        if k not in wanted:
            continue
        print(f"  {name}   {med(fps(k), '{:.0f}')} fps, "
              f"{med(ratio(k), '{:.1f}')} % of bare; latency ms med/p95 at full load "
              f"{lat(r[k])}, at 30 fps {lat(r[k + '-30fps'])}")
PY
}
if want live; then
live_vs_stage 2>&1 | tee "$OUT/live.txt"
fi
if want proxylive; then
step "live app against the bare stage on the Jetson proxy (compute_87 build, 16 SMs)"
# the app's stage thread runs on a green context of 16 SMs ([stereo] sms), as on an Orin AGX
(cd "$B87" && LIVE_SMS=16 LIVE_TAG=-proxy16 LIVE_RUNS="bare app app-30fps" live_vs_stage) 2>&1 |
  tee "$OUT/live-proxy.txt"
fi

if want loaded; then
step "the memory-loaded proxy: the GPU's other SMs stream copies through DRAM while the stage and libSGM run on 16 and 8 SMs (tools/memload.cu)"
# The proxy models an Orin's SM count, not its DRAM bandwidth. Here the green context's SMs share
# the DRAM and the L2 with a load on every other SM (MEMLOAD blocks of 512 threads per SM, each
# streaming copies), tuned per SM count so that a streaming copy inside the green context gets
# about an Orin's bandwidth (MEMLOAD_TARGET_16 / _8, GB/s; AGX 204.8, Nano 68): the level whose
# probe comes nearest, from MEMLOAD_LEVELS. Both programs run under the same preload (SM_LIMIT),
# median of PROXY_RUNS, rows `default loaded` (the stage's default cost) with the probe's GB/s.
PROXY_RUNS=${PROXY_RUNS:-100}
ML=/tmp/gc-memload.so
{ nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -cudart shared -o "$ML" tools/memload.cu -lcuda &&
  nvcc -O3 -arch=sm_90 -DMEMLOAD_PROBE_MAIN -o /tmp/gc-memload-probe tools/memload.cu -lcuda; } \
  >"$OUT/memload-build.log" 2>&1 || { echo "memload: build failed"; cat "$OUT/memload-build.log"; }
LOADED_CONFIGS=${LOADED_CONFIGS:-$'640 480 128 4\n1280 960 128 4\n640 480 128 8'}
: >"$OUT/loaded-raw.csv"
for sms in ${PROXY_SMS:-16 8}; do
  target=$([ "$sms" = 16 ] && echo "${MEMLOAD_TARGET_16:-204.8}" || echo "${MEMLOAD_TARGET_8:-68}")
  best="" best_gbs="" best_err=""
  for lvl in 0 ${MEMLOAD_LEVELS:-1 2 4 8 16 32}; do
    gbs=$(SM_LIMIT=$sms MEMLOAD=$lvl /tmp/gc-memload-probe 2>&1 |
          tee -a "$OUT/memload-probe.log" | sed -n 's/.*gets \([0-9.]*\) GB\/s.*/\1/p')
    echo "$sms SMs, load $lvl: a streaming copy on the green context gets ${gbs:-?} GB/s (target $target)"
    [ -n "$gbs" ] || continue
    err=$(python3 -c "print(abs($gbs - $target))")
    if [ "$lvl" != 0 ] && { [ -z "$best" ] || python3 -c "import sys; sys.exit(not $err < $best_err)"; }; then
      best=$lvl best_gbs=$gbs best_err=$err
    fi
  done
  [ -n "$best" ] || { echo "$sms SMs: no load level measured"; continue; }
  echo "$sms SMs: load $best (probe $best_gbs GB/s against $target)"
  while read -r w h d paths; do
    tmp=$(mktemp)
    SM_LIMIT=$sms MEMLOAD=$best LD_PRELOAD=$ML "$B87"/build/gpu/stereo-bench --size "${w}x$h" \
      --disparities "$d" --paths "$paths" --runs "$PROXY_RUNS" --csv "$tmp" \
      --cost "${PROXY_COST:-adcensus}" >/dev/null 2>>"$OUT/loaded.err"
    ours=$(cut -d, -f6 "$tmp" 2>/dev/null); rm -f "$tmp"
    lib=""
    if [ -x "$ANC/sgmbench-compute_87" ]; then
      lib=$(SM_LIMIT=$sms MEMLOAD=$best LD_PRELOAD=$ML "$ANC/sgmbench-compute_87" "$w" "$h" "$d" \
              "$paths" "$PROXY_RUNS" 2>>"$OUT/loaded.err" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
    fi
    echo "$(date -u +%F),$commit,$device,$sms,compute_87,${w}x$h,$d,$paths,$ours,$lib,,,default loaded,,${PROXY_COST:-adcensus},$best_gbs" |
      tee -a "$OUT/loaded-raw.csv"
  done <<<"$LOADED_CONFIGS"
done
cat "$OUT/loaded-raw.csv" >>"$OUT/results-jetson-proxy.csv"
fi

if want buildtime; then
step "first build on 2 cores (taskset -c 0,1, ninja -j2 gpu: the CUDA objects and the libc-only programs)"
# the default of a machine without a GPU (CUDA_ARCH=87: sm_87 + compute_87 PTX); with
# .device/base.tar (git archive of an earlier revision) that revision's default build too
bt_one() { # dir label [CUDA_ARCH]
  (cd "$1" && rm -rf build && { if [ -n "${3:-}" ]; then CUDA_ARCH=$3 ./configure --cuda; else ./configure --cuda; fi; } >/dev/null &&
   s=$(date +%s.%N) && taskset -c 0,1 ninja -j2 gpu >/dev/null 2>&1 && e=$(date +%s.%N) &&
   awk -v a="$s" -v b="$e" -v l="$2" 'BEGIN { printf "%-42s %6.1f s wall\n", l, b - a }') ||
    echo "$2: build failed"
}
rm -rf /tmp/gc-bt && mkdir -p /tmp/gc-bt/new && copy_tree /tmp/gc-bt/new
bt_one /tmp/gc-bt/new "this tree, CUDA_ARCH=87 (no-GPU default)" 87 | tee "$OUT/buildtime.txt"
bt_one /tmp/gc-bt/new "this tree, CUDA_ARCH='87 90'" "87 90" | tee -a "$OUT/buildtime.txt"
if [ -f .device/base.tar ]; then
  mkdir -p /tmp/gc-bt/base && tar -xf .device/base.tar -C /tmp/gc-bt/base
  bt_one /tmp/gc-bt/base "base revision, its default (87 90)" | tee -a "$OUT/buildtime.txt"
fi
fi

step "summary"
echo "tests: $tests_line; faults: $faults_line; sanitizer:$san" | tee "$OUT/summary.txt"
cat "$OUT/bench.txt" 2>/dev/null
cat "$OUT/views.txt" 2>/dev/null
cat "$OUT/proxy-table.txt" 2>/dev/null
cat "$OUT/live-table.txt" 2>/dev/null || echo "live app against the bare stage: no table (see above)"
cat "$OUT/live-table-proxy16.txt" 2>/dev/null
exit $status
