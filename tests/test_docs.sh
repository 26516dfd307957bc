#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_docs.sh — the documentation speaks to users and states each figure once, as TAP:
#   1. no development log in the docs (history lives in git): no "session N" and no "issue #"
#      (any case), and no branch name ("branch hal-n") in README.md, docs/*.md, config/ (README,
#      .ini and .yml files) and python/ (READMEs, examples and the module's docstrings); and on
#      the pages a user reads (all of them but the logs of runs by design: docs/cuda-notes.md,
#      docs/results*.md, docs/tuning.md, which record each run with its machine, date and
#      commit) no history wording either: "the default before", "development machine", "load
#      average", "shared with other builds", "other builds running", "this/last/previous
#      session", "we tried", "before this work", "the commit before", or a date used as history
#      ("since 2026-11-20", "until ...", "as of ..."; a measurement's date and commit are fine)
#   2. docs/results-proxy.md is what tools/gen-results.py makes of docs/results-jetson-proxy.csv
#   3. every figure in README.md is on that results page: a number with a unit of measure (ms, s,
#      min, fps, %, x, GB/s, MB/s, GHz, MHz; a range such as 1.1-1.5x counts whole), outside code,
#      with a leading ~ ignored, must appear there with the same digits and unit (the page's
#      tables give bare numbers: the README quotes its prose and the projection table)
#      docs/usage.md's and docs/jetson.md's speed figures (ms, fps, x) in a sentence about the
#      GPU stage (H100, H200, Orin, Jetson, proxy, SMs, compute_87, CUDA stage, GPU) likewise
#   4. every relative link in those files points at a file that exists, and a #fragment into a
#      Markdown file at one of its headings (GitHub's anchors)
#   5. the checks can fail: run on a copy with a fault of each kind planted, each is reported
#      (every history phrase on a user's page, and none on a log page)
# DOCS_ROOT=DIR checks a copy instead (README.md, docs/, config/, python/ and tools/gen-results.py),
# to see the test fail on a planted fault.
# Run from the repo root (tests/run does): bash tests/test_docs.sh.
set -u
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
cd "${DOCS_ROOT:-.}" || exit 1
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

files=()
for f in README.md docs/*.md config/README.md python/README.md; do
  [ -f "$f" ] && files+=("$f")
done

# 1. no session or issue numbers, no branch names, and no history wording on a user's pages
# (config/'s files, python/'s READMEs, examples and module: comments and docstrings alike)
logfiles=(docs/cuda-notes.md docs/results*.md docs/tuning.md)
wordfiles=("${files[@]}")
for f in config/*.ini config/*.yml python/examples/* python/stereodepth/*.py; do
  [ -f "$f" ] && wordfiles+=("$f")
done
userfiles=()
for f in "${wordfiles[@]}"; do
  case " ${logfiles[*]} " in *" $f "*) ;; *) userfiles+=("$f") ;; esac
done
hits=$(grep -nHiE 'session [0-9]|\bbranch [a-z][a-z0-9]*-[a-z0-9-]+' "${wordfiles[@]}"
       grep -nHiE 'issue #' "${wordfiles[@]}")
if [ -z "$hits" ] && [ ${#wordfiles[@]} -ge 20 ]; then
  ok "no 'session N', 'issue #' or branch name in ${#wordfiles[@]} files"
else
  not_ok "no 'session N', 'issue #' or branch name in ${#wordfiles[@]} files" "$hits"
fi
HISTORY='the default before|development machine|load average|shared with other builds|other builds running'
HISTORY+='|(this|last|previous|earlier) session|we tried|before this work|the commit before'
HISTORY+='|(since|until|as of|before|after) (the )?20[0-9][0-9]-[01][0-9]-[0-3][0-9]'
hits=$(grep -nHiE "$HISTORY" "${userfiles[@]}")
if [ -z "$hits" ] && [ ${#userfiles[@]} -ge 15 ]; then
  ok "no history wording on the ${#userfiles[@]} files a user reads (the logs of runs aside)"
else
  not_ok "no history wording on the ${#userfiles[@]} files a user reads (the logs of runs aside)" \
    "$hits"
fi

# 2. the results page is generated from the CSV
if out=$("$PY" tools/gen-results.py --stdout 2>&1) && [ "$out" = "$(cat docs/results-proxy.md)" ]; then
  ok "docs/results-proxy.md is what tools/gen-results.py makes of results-jetson-proxy.csv"
else
  not_ok "docs/results-proxy.md is what tools/gen-results.py makes of results-jetson-proxy.csv" \
    "$(diff <(echo "$out") docs/results-proxy.md | head -20)"
fi

# 3 and 4, in Python: it prints their TAP lines, then N=<the count so far>
check_figures_and_links() {
N0=$n "$PY" - "${files[@]}" <<'PY'
import os, re, sys

files = sys.argv[1:]
n = int(os.environ.get("N0", "0"))
UNIT = r"(?:ms|s|min|fps|%|x|GB/s|MB/s|GHz|MHz)"
NUM = r"\d+(?:\.\d+)?"
FIGURE = re.compile(rf"(?<![\w.~-])~?({NUM}(?:-{NUM})?) ?({UNIT})(?![\w/])")


def prose(text):
    """text without fenced and indented code blocks, inline code and link targets."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    kept, code, prev = [], False, ""
    for line in text.split("\n"):
        # an indented code block starts after a blank line and runs while lines stay indented
        code = line.startswith("    ") and (code or not prev.strip())
        if not code:
            kept.append(line)
        prev = line
    text = "\n".join(kept)
    text = re.sub(r"`[^`]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def figures(text):
    return [f"{m.group(1)} {m.group(2)}" for m in FIGURE.finditer(prose(text))]


def tap(good, name, diag=""):
    global n
    n += 1
    print(f"{'ok' if good else 'not ok'} {n} - {name}")
    if not good and diag:
        print("\n".join("#   " + l for l in diag.splitlines()))


held = set(figures(open("docs/results-proxy.md").read()))
readme = figures(open("README.md").read())
missing = sorted(set(f for f in readme if f not in held))
tap(not missing and len(held) > 20,
    f"README.md's {len(readme)} figures are all on docs/results-proxy.md",
    "not on docs/results-proxy.md (state them there, or link to it): " + ", ".join(missing))

# usage.md and jetson.md: their speed figures (ms, fps, x) in a sentence about the GPU stage
GPU = re.compile(r"H100|H200|Orin|Jetson|proxy|\bSMs?\b|compute_87|CUDA stage|GPU")


def gpu_speed_figures(text):
    out = []
    for para in re.split(r"\n\s*\n", prose(text)):
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z(\[`])", " ".join(para.split())):
            if GPU.search(sentence):
                out += [f for f in figures(sentence) if f.split()[1] in ("ms", "fps", "x")]
    return out


bad, count = [], 0
for page in ("docs/usage.md", "docs/jetson.md"):
    found = gpu_speed_figures(open(page).read())
    count += len(found)
    bad += [f"{page}: {f}" for f in sorted(set(found)) if f not in held]
tap(not bad, f"the GPU stage's {count} speed figures in docs/usage.md and docs/jetson.md are on "
    "docs/results-proxy.md", "not on docs/results-proxy.md (state them there, or link to it): " +
    ", ".join(bad))


def slug(heading):
    s = re.sub(r"[`*]|\[|\]\([^)]*\)", "", heading.strip()).lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = re.sub(r"^```.*?^```", "", open(path).read(), flags=re.S | re.M)
    seen, out = {}, set()
    for m in re.finditer(r"^#{1,6} +(.+?) *#*$", text, flags=re.M):
        a = slug(m.group(1))
        k = seen.get(a, 0)
        seen[a] = k + 1
        out.add(a if k == 0 else f"{a}-{k}")
    return out


bad, count = [], 0
for f in files:
    text = re.sub(r"^```.*?^```", "", open(f).read(), flags=re.S | re.M)
    text = re.sub(r"`[^`]*`", "", text)
    for m in re.finditer(r"\]\(([^)\s]+)(?: \"[^\"]*\")?\)", text):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue   # a URL
        count += 1
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(full):
            bad.append(f"{f}: ({target}): no {full}")
        elif frag and full.endswith(".md") and frag not in anchors(full):
            bad.append(f"{f}: ({target}): no heading #{frag} in {full}")
tap(not bad and count > 20, f"{count} relative links lead to files and headings that exist", "\n".join(bad))
print(f"N={n}")
PY
}
out=$(check_figures_and_links)
echo "${out%N=*}" | sed '/^$/d'
n=${out##*N=}

# 5. the checks can fail: a copy of the pages with one fault of each kind planted
if [ -z "${DOCS_ROOT:-}" ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/test_docs.XXXXXX") || { echo "Bail out! mktemp -d failed"; exit 1; }
  trap 'rm -rf "$W"' EXIT
  mkdir -p "$W/tools" && cp -r README.md docs config python "$W/" && cp tools/gen-results.py "$W/tools/"
  echo 'Added in session 3.' >>"$W/docs/usage.md"
  echo 'See issue #5.' >>"$W/python/README.md"
  echo 'A figure nobody measured: 0.001 ms.' >>"$W/README.md"
  # the last run of the full search (the page shows it): another time
  last=$(grep -n ',full,[0-9.]*$' "$W/docs/results-jetson-proxy.csv" | tail -1 | cut -d: -f1)
  sed -i "${last}s/,[0-9.]*,\([0-9.]*,[0-9.]*,[0-9.]*,full,\)/,99.999,\1/" "$W/docs/results-jetson-proxy.csv"
  echo '[a page](docs/no-such-page.md) and [a heading](docs/usage.md#no-such-heading)' >>"$W/README.md"
  printf '\nOn an Orin AGX the stage takes 0.002 ms a frame.\n' >>"$W/docs/jetson.md"
  # history wording, one phrase per file a user reads (PLANT: file, then the line planted)
  PLANT=(config/README.md 'Merged from branch hal-n.' config/three-cameras.ini '# see branch rooms-app'
         python/stereodepth/__init__.py '# Issue #7 asked for it.'
         README.md 'Faster than the default before.' docs/usage.md 'On the development machine.'
         docs/jetson.md 'At a load average of 5.' docs/calibration.md 'Cores shared with other builds.'
         docs/ros2.md 'With other builds running.' python/README.md 'Added this session.'
         docs/layout.md 'As in the last session.' docs/testing.md 'We tried 4 paths first.'
         config/generated-scene.ini '# the commit before this work' docs/usage.md 'Since 2026-11-20 it is 64.'
         python/examples/depth_plot.py '# as of 2026-11-01')
  for ((i = 0; i < ${#PLANT[@]}; i += 2)); do
    printf '%s\n' "${PLANT[i+1]}" >>"$W/${PLANT[i]}"
  done
  # a log page keeps its machine and load: not reported
  echo 'Measured on the development machine, load average 3, 2026-11-20.' >>"$W/docs/results-cpu.md"
  got=$(DOCS_ROOT=$W bash "$SELF" 2>&1)
  missing=()
  for want in 'docs/usage.md:[0-9]*:Added in session 3' 'python/README.md:[0-9]*:See issue #5' \
              'not ok [0-9]* - docs/results-proxy.md' 'not on docs/results-proxy.md.*0\.001 ms' \
              'no docs/no-such-page.md' 'no heading #no-such-heading in docs/usage.md' \
              'docs/jetson.md: 0\.002 ms'; do
    grep -q "$want" <<<"$got" || missing+=("$want")
  done
  for ((i = 0; i < ${#PLANT[@]}; i += 2)); do
    grep -qF "${PLANT[i]}:" <<<"$(grep -F -- "${PLANT[i+1]}" <<<"$got")" || missing+=("${PLANT[i]}: ${PLANT[i+1]}")
  done
  grep -q 'results-cpu.md:[0-9]*:Measured on the development' <<<"$got" &&
    missing+=("a log page (docs/results-cpu.md) reported")
  if [ ${#missing[@]} -eq 0 ]; then
    ok "the checks fail on planted faults (session, issue, branch, $((${#PLANT[@]} / 2 - 3)) history phrases, stale page, README figure, GPU figure in jetson.md, link, heading), and pass a log page's machine and load"
  else
    not_ok "the checks fail on planted faults" "not reported: ${missing[*]}
$got"
  fi
fi
echo "1..$n"
