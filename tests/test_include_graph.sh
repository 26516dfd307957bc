#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_include_graph.sh — the include graph stays a diagram (tools/include-graph.py), as TAP:
#   1. the tree passes tools/include-graph.py --check: no include cycle between files or
#      modules, no include that runs upward (or sideways between twin rooms), no leaf that
#      includes the project, and docs/layout.md's generated section is the graph of today
#   2. the check can fail: a copy of the tree with one fault planted, for each kind (a cycle
#      of modules, a cycle of headers, an include upward from hal/ to app/, from gpu/ to hal/,
#      a module including the front door that calls it, a leaf including a module, a section of
#      docs/layout.md edited, stale or missing), makes it exit 1 naming the fault; --write then
#      makes the stale section current again
# Run from the repo root (tests/run does): bash tests/test_include_graph.sh.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# 1. the tree itself
if out=$("$PY" tools/include-graph.py --check 2>&1); then
  ok "the tree: $out"
else
  not_ok "the tree passes tools/include-graph.py --check" "$out"
fi

# 2. a fault planted in a copy: plant NAME EXPECTED-TEXT COMMAND... (run inside the copy)
W=$(mktemp -d "${TMPDIR:-/tmp}/test_include_graph.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
trap 'rm -rf "$W"' EXIT
fresh_copy() {
  rm -rf "$W/tree" && mkdir "$W/tree" &&
    cp -r app hal gpu python tools docs "$W/tree/"
}
plant() {
  local name=$1 expect=$2 rc
  shift 2
  if ! fresh_copy || ! (cd "$W/tree" && "$@"); then
    not_ok "$name: the fault could not be planted"
    return
  fi
  "$PY" tools/include-graph.py --root "$W/tree" --check >"$W/out" 2>&1
  rc=$?
  if [ "$rc" -eq 1 ] && grep -qF -- "$expect" "$W/out"; then
    ok "$name: exit 1, '$expect'"
  else
    not_ok "$name: exit 1 (got $rc) with '$expect'" "$(cat "$W/out")"
  fi
}
append() { printf '%s\n' "$2" >>"$1"; }

plant "a cycle of modules (hal/depth.c includes legend.h, hal/legend.c depth.h)" \
  "include cycle among 2 modules (hal/depth, hal/legend)" \
  eval 'append hal/depth.c "#include \"legend.h\"" && append hal/legend.c "#include \"depth.h\""'
plant "a cycle of headers (hal/depth.h and hal/legend.h include each other)" \
  "include cycle among 2 files (hal/depth.h, hal/legend.h)" \
  eval 'append hal/depth.h "#include \"legend.h\"" && append hal/legend.h "#include \"depth.h\""'
plant "hal/ includes app/ (hal/depth.c includes config.h)" \
  "(hal/) runs upward, to app/config.h (app:config)" \
  eval 'append hal/depth.c "#include \"config.h\""'
plant "gpu/ includes hal/ (gpu/disparity.c includes depth.h)" \
  "(gpu:modules) runs upward, to hal/depth.h (hal/)" \
  eval 'append gpu/disparity.c "#include \"depth.h\""'
plant "a module includes the front door, which calls it (gpu/band.c includes stereo.h)" \
  "gpu/band -> gpu/stereo -> gpu/band (gpu/band.c:" \
  eval 'append gpu/band.c "#include \"stereo.h\""'
plant "a leaf includes a module (gpu/parallel.c includes sgm.h)" \
  "a leaf includes nothing of the project" \
  eval 'append gpu/parallel.c "#include \"sgm.h\""'
plant "docs/layout.md's section edited by hand" \
  "docs/layout.md's generated section is not the graph of today's includes" \
  sed -i 's/-> gpu:leaves$/-> gpu:leaves gpu:modules/' docs/layout.md
plant "docs/layout.md's section stale: a module added to gpu/" \
  "docs/layout.md's generated section is not the graph of today's includes" \
  eval 'printf "#include \"stereo_math.h\"\n" >gpu/new_stage_module.c'
if "$PY" tools/include-graph.py --root "$W/tree" --write &&
   out=$("$PY" tools/include-graph.py --root "$W/tree" --check 2>&1); then
  ok "--write makes the stale section current: $out"
else
  not_ok "--write makes the stale section current" "$out"
fi
plant "docs/layout.md without the section" "docs/layout.md has no generated section" \
  sed -i '/include-graph: generated/d' docs/layout.md
echo "1..$n"
