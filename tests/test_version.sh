#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_version.sh — --version of every program, the live app's log line and --stats-json,
# and the build step behind them (tools/gen-version.sh, build.ninja's rule gen_version), as TAP.
#
#   1. every program: --version exits 0 with one line on stdout and nothing on stderr:
#      "PROGRAM VERSION, commit HASH[-dirty], backends: ..." with VERSION from the file VERSION,
#      the commit of this checkout (or "unknown" outside one) and the backends ./configure chose
#      (build/config.ninja: cpu, or cpu and cuda with its architectures); --help mentions it
#   2. stereo-live: the start-up log line and --stats-json carry the same
#   3. the build step in a scratch copy of the sources (a git repository of its own, CPU build):
#      the commit of the build; a build at the same commit recompiles nothing; an edit to a
#      tracked file gives "-dirty", an untracked file does not; a new commit gives its hash;
#      outside a git checkout "unknown"; a CUDA configuration (a stand-in nvcc) names its
#      version and architectures
# Run from the repo root (tests/run does): bash tests/test_version.sh. Env: STEREO_BUILD (build).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
B=${STEREO_BUILD:-build}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W=$(mktemp -d "${TMPDIR:-/tmp}/test_version.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && sed 's/^/#   /' <<<"$2"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

version=$(cat VERSION)
# the commit this checkout is at, as the build step writes it ("" outside a git checkout)
head=""
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  head=$(git rev-parse --short HEAD)
fi
cfg() { sed -n "s/^$1 = *//p" "$B/config.ninja"; }
if [ "$(cfg backend)" = cuda ]; then
  sm=""
  for a in $(cfg cuda_arch); do sm="$sm sm_$a"; last=$a; done
  backends="cpu, cuda $(cfg cuda_version) (${sm# }, PTX compute_$last)"
else
  backends=cpu
fi

# ---- 1. --version of every program --------------------------------------------------------
# check_version PROGRAM-NAME BACKENDS COMMAND...
check_version() {
  local prog=$1 want_backends=$2 why=()
  shift 2
  "$@" --version >"$W/v.out" 2>"$W/v.err"
  local rc=$? line
  line=$(cat "$W/v.out")
  [ $rc -eq 0 ] || why+=("exit status $rc")
  [ "$(grep -c '' "$W/v.out")" -eq 1 ] || why+=("stdout is not one line")
  [ -s "$W/v.err" ] && why+=("stderr: $(head -3 "$W/v.err")")
  local commit=${line#"$prog $version, commit "}
  commit=${commit%%,*}
  [[ $line == "$prog $version, commit $commit, backends: $want_backends" ]] ||
    why+=("'$line' is not '$prog $version, commit C, backends: $want_backends'")
  if [ -z "$head" ]; then
    [ "$commit" = unknown ] || why+=("commit '$commit' outside a git checkout, expected unknown")
  elif [[ ! $commit =~ ^[0-9a-f]{7,40}(-dirty)?$ ]]; then
    why+=("commit '$commit' is not a short hash with an optional -dirty")
  elif [ "${commit%-dirty}" != "$head" ] &&
       ! git merge-base --is-ancestor "${commit%-dirty}" HEAD 2>/dev/null; then
    # (an ancestor: a commit made since the build, in a working tree shared with others)
    why+=("commit '$commit' is not HEAD ($head) nor one of its ancestors")
  fi
  "$@" --help >"$W/h.out" 2>&1
  grep -q -- '--version' "$W/h.out" || why+=("--help does not mention --version")
  if [ ${#why[@]} -eq 0 ]; then
    ok "$prog --version: $line"
  else
    not_ok "$prog --version: one line 'PROGRAM VERSION, commit C, backends: B', exit 0" \
      "$(printf '%s\n' "${why[@]}")"
  fi
}
for p in stereo-match stereo-eval stereo-synth calib-maps stereo-live; do
  check_version "$p" "$backends" "$B/$p"
done
check_version stereo-live-headless "$backends" "$B/gpu/stereo-live-headless"
# (after ./configure --no-cuda an earlier CUDA build's stereo-bench may still lie in build/gpu)
if [ "$(cfg backend)" = cuda ]; then
  check_version stereo-bench "$backends" "$B/gpu/stereo-bench"
else
  skip "stereo-bench --version" "not built: configured without CUDA"
fi
if "$PY" -c 'import cv2' 2>/dev/null; then
  cv=$("$PY" -c 'import cv2; print(cv2.__version__)')
  check_version stereo-calibrate "OpenCV $cv (Python)" "$PY" tools/stereo-calibrate
else
  skip "stereo-calibrate --version" "$PY has no cv2"
fi

# ---- 2. the live app's log line and --stats-json ------------------------------------------
want=$("$B/stereo-live" --version)
timeout 60 "$B/stereo-live" --headless --frames 2 --backend cpu --set synth.width=160 \
  --set synth.height=120 --set stereo.disparities=16 --stats-json "$W/st.json" \
  >"$W/l.out" 2>"$W/l.err"
rc=$?
if [ $rc -eq 0 ] && grep -qF " source, 160x120, D 16, cpu backend, headless; $want" "$W/l.err"; then
  ok "stereo-live: the start-up log line ends with the --version line"
else
  not_ok "stereo-live: the start-up log line ends with the --version line" \
    "exit $rc; want '...; $want'; stderr: $(cat "$W/l.err")"
fi
"$PY" - "$W/st.json" "$want" >"$W/js.out" 2>&1 <<'EOF'
import json, sys
j, want = json.load(open(sys.argv[1])), sys.argv[2]
line = f'{j["program"]} {j["version"]}, commit {j["commit"]}, backends: {j["backends"]}'
assert line == want, (line, want)
EOF
rc=$?
if [ $rc -eq 0 ]; then
  ok "stereo-live --stats-json: version, commit and backends as --version says them"
else
  not_ok "stereo-live --stats-json: version, commit and backends as --version says them" \
    "$(cat "$W/js.out")"
fi

# ---- 3. the build step, in a scratch repository ---------------------------------------------
S=$W/src
mkdir -p "$S"
cp -r build.ninja configure VERSION app gpu hal tools "$S"/ && rm -rf "$S/build"
echo "scratch copy" >"$S/README.md"
G=(git -c user.name=test -c user.email=test@example.invalid -c commit.gpgsign=false)
built() { # the --version line of the scratch build of stereo-synth, after `ninja` builds it
  (cd "$S" && ninja build/stereo-synth >"$W/ninja.log" 2>&1) || { cat "$W/ninja.log"; return 1; }
  "$S/build/stereo-synth" --version
}
stamp() { stat -c %y "$S/build/obj/app/version.o" "$S/build/stereo-synth" 2>/dev/null; }
if ! (cd "$S" && git init -q && "${G[@]}" add -A && "${G[@]}" commit -q -m first &&
      ./configure --no-cuda >/dev/null) >"$W/setup.log" 2>&1; then
  not_ok "scratch repository: git init, commit, ./configure --no-cuda" "$(cat "$W/setup.log")"
else
  c1=$(git -C "$S" rev-parse --short HEAD)
  line=$(built)
  if [ "$line" = "stereo-synth $version, commit $c1, backends: cpu" ]; then
    ok "scratch build at commit $c1: '$line'"
  else
    not_ok "scratch build: the commit it was built from, no -dirty, backends: cpu" "$line"
  fi
  before=$(stamp)
  line=$(built)
  if [ "$before" = "$(stamp)" ] && [[ $line == *"commit $c1,"* ]]; then
    ok "a build at the same commit recompiles and relinks nothing"
  else
    not_ok "a build at the same commit recompiles and relinks nothing" \
      "$(cat "$W/ninja.log")"
  fi
  echo "untracked" >"$S/notes.txt"
  line=$(built)
  [[ $line == *"commit $c1, "* ]] && ok "an untracked file leaves it clean: commit $c1" ||
    not_ok "an untracked file leaves it clean" "$line"
  echo "edited" >>"$S/README.md"
  line=$(built)
  [[ $line == *"commit $c1-dirty, "* ]] && ok "an edited tracked file: commit $c1-dirty" ||
    not_ok "an edited tracked file: commit $c1-dirty" "$line"
  (cd "$S" && "${G[@]}" commit -q -a -m second)
  c2=$(git -C "$S" rev-parse --short HEAD)
  line=$(built)
  [ "$c2" != "$c1" ] && [[ $line == *"commit $c2, "* ]] &&
    ok "a new commit is rebuilt in: commit $c2" || not_ok "a new commit is rebuilt in: $c2" "$line"
  rm -rf "$S/.git"
  line=$(built)
  [[ $line == *"commit unknown, "* ]] && ok "outside a git checkout: commit unknown" ||
    not_ok "outside a git checkout: commit unknown" "$line"
  # a CUDA configuration, through a stand-in nvcc: only the header is built
  printf '#!/bin/sh\necho "Cuda compilation tools, release 12.6, V12.6.77"\n' >"$W/nvcc"
  chmod +x "$W/nvcc"
  if (cd "$S" && NVCC=$W/nvcc CUDA_ARCH="87 90a" ./configure --cuda >/dev/null &&
      ninja build/gen/build_info.h >/dev/null) 2>"$W/cfg.err" &&
     grep -qxF '#define STEREO_BACKENDS "cpu, cuda 12.6 (sm_87 sm_90a, PTX compute_90a)"' \
       "$S/build/gen/build_info.h"; then
    ok "CUDA configured (CUDA_ARCH=\"87 90a\", nvcc 12.6): backends cpu, cuda 12.6 (sm_87 sm_90a, PTX compute_90a)"
  else
    not_ok "CUDA configured: the backends name CUDA's version and architectures" \
      "$(cat "$W/cfg.err" "$S/build/gen/build_info.h" 2>/dev/null)"
  fi
fi

echo "1..$n"
exit 0
