# SPDX-License-Identifier: Apache-2.0
"""The docs checked against the code, as TAP.

  defaults   every default the docs state for a stage option equals the option table's
             (gpu/stereo_options.c, read through the library as stereodepth._ROWS):
             - "`--NAME ...` ... (default N)" ("default N", "N (the default)", "`--NAME N`
               (default)") in a sentence of README.md,
               docs/*.md (the logs of runs aside: cuda-notes, results*, tuning), config/README.md
               and python/README.md, NAME a row of the table;
             - "COST (the default" (a cost or method named the default), "the default range is
               N" (-d), "Default settings (COST, N paths, ...)";
             - config/README.md's table: the default column of every [stereo] key of the table
               (flags: true, switches: false);
             - config/generated-scene.ini, "the built-in defaults written out": every [stereo]
               key of the table it sets;
             - the tuned penalties per cost ("tuned: 40 for adcensus, 32 for census, ...",
               "(adcensus: 40 and 160; census: 32 and 128; ...)", "#   p1 = 40") against the P1 and P2
               stereo-live settles on for that cost (the [stereo] keys --record writes);
             - Python's match(disparities=...) default
  quotes     every error message the docs quote (QUOTES: the page, the start of the quote, the
             command that makes it, in a scratch folder with what it needs, and its exit
             status): the program's line equals the quote ("..." in a quote stands for any
             text); every quote of a program's line ("stereo-live: ...", "FILE.ini:N: ...") on
             those pages is in QUOTES or in REPORTS (run-time reports with a run's figures,
             not errors), so a new quote without its command fails
  planted    the checks run on a scratch copy of the pages (DOCS_ROOT) with a stale default of
             each kind and a stale quote planted, and report each

DOCS_ROOT=DIR reads the pages from DIR (README.md, docs/, config/, python/README.md).
Env: STEREO_BUILD (build). Needs NumPy (Debian's python3).
"""
import configparser
import glob
import inspect
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("STEREO_BUILD", "build"))
MATCH = os.path.join(BUILD, "stereo-match")
LIVE = os.path.join(BUILD, "stereo-live")
SYNTH = os.path.join(BUILD, "stereo-synth")
DOCS = os.path.abspath(os.environ.get("DOCS_ROOT", ROOT))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ["STEREODEPTH_LIB"] = os.path.join(BUILD, "libstereodepth.so")
from tap import Tap  # noqa: E402
import stereodepth as sd  # noqa: E402

LOGS = ("docs/cuda-notes.md", "docs/tuning.md")  # and docs/results*.md: logs of runs by design


def pages():
    out = ["README.md", "config/README.md", "python/README.md"]
    for p in sorted(glob.glob(os.path.join(DOCS, "docs", "*.md"))):
        rel = os.path.relpath(p, DOCS)
        if rel not in LOGS and not os.path.basename(rel).startswith("results"):
            out.append(rel)
    return [p for p in out if os.path.exists(os.path.join(DOCS, p))]


def read(rel):
    with open(os.path.join(DOCS, rel), encoding="utf-8") as f:
        return f.read()


def run(cmd, cwd=None):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


ROWS = {r.name: r for r in sd._ROWS}
BY_KEY = {r.key: r for r in sd._ROWS}
COSTS = sd._ROWS[[r.name for r in sd._ROWS].index("cost")].range.replace(" ", "").split(",")


# the words a default may be (else a number)
WORDS = set(COSTS) | {"sgm", "bm", "auto", "cpu", "cuda", "true", "false"}


def table_default(row):
    """The row's default as the docs write it: the table's (its first word), true for a flag
    (no-*: the key is true), false for a switch."""
    if row.metavar is None:
        return "true" if row.name.startswith("no-") else "false"
    return re.split(r"[:;, ]", row.default)[0] if row.default else None


# ---- defaults ---------------------------------------------------------------------------------
def norm(v):
    return v.strip().strip("`").strip().lower()


def stated_defaults():
    """[(page:line, row name, stated value)] of every default the pages state."""
    out = []

    def add(rel, text, pos, name, value):
        out.append((f"{rel}:{text.count(chr(10), 0, pos) + 1}", name, norm(value)))

    for rel in pages():
        text = read(rel)
        flat = text
        # "`--NAME ...` ... default N": the nearest option of the table before "default" in
        # the sentence (no '.' followed by a blank between them)
        # "default N", "N (the default)", "`--NAME N` (default)"
        for m in re.finditer(r"default:? `?([0-9][0-9.]*|[a-z][a-z0-9]*)\b|"
                             r"\b([0-9][0-9.]*|[a-z][a-z0-9]*)`? \((?:the )?default\)", flat):
            value = m.group(1) or m.group(2)
            if not re.fullmatch(r"[0-9][0-9.]*", value) and value not in WORDS:
                continue
            start = max(flat.rfind(". ", 0, m.start()), flat.rfind(".\n", 0, m.start()),
                        flat.rfind("\n\n", 0, m.start()))
            sentence = flat[start + 1:m.start() + (len(m.group(0)) if m.group(2) else 0)]
            opts = [o for o in re.findall(r"`--?([a-z][a-z0-9-]*)", sentence)
                    if o in ROWS or o == "d"]
            if opts:
                name = "disparities" if opts[-1] == "d" else opts[-1]
                add(rel, flat, m.start(), name, value)
        for m in re.finditer(r"`?([A-Za-z][A-Za-z-]*)`? \(the default", flat):
            word = m.group(1).lower().replace("-", "")
            if word in COSTS:
                add(rel, flat, m.start(), "cost", word)
            elif word in ROWS["method"].range.replace(" ", "").split(","):
                add(rel, flat, m.start(), "method", word)
        for m in re.finditer(r"default\s+range\s+is\s+(\d+)", flat):
            add(rel, flat, m.start(), "disparities", m.group(1))
        for m in re.finditer(r"Default\s+settings\s+\(([^)]*)\)", flat):
            for w in re.split(r",\s*", m.group(1)):
                w = " ".join(w.split()).lower()
                if w in COSTS:
                    add(rel, flat, m.start(), "cost", w)
                if re.fullmatch(r"\d+ paths", w):
                    add(rel, flat, m.start(), "paths", w.split()[0])
    # config/README.md's table of keys
    text = read("config/README.md")
    for m in re.finditer(r"^\| stereo \| (\w+) \|.*\| ([^|]*) \|$", text, flags=re.M):
        row = BY_KEY.get(m.group(1))
        if row and not m.group(2).strip().startswith("tuned"):
            add("config/README.md", text, m.start(), row.name, m.group(2))
    # config/generated-scene.ini: the defaults written out
    text = read("config/generated-scene.ini")
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",))
    ini.read_string(text)
    for key, value in ini["stereo"].items():
        row = BY_KEY.get(key)
        if row and row.name != "cost":
            pos = re.search(rf"^{key}\s*=", text, flags=re.M).start()
            add("config/generated-scene.ini", text, pos, row.name, value)
    return out


def stated_penalties():
    """[(page:line, cost, 'p1' or 'p2', stated value)]."""
    out = []
    text = read("config/README.md")
    for m in re.finditer(r"^\| stereo \| (p[12]) \|.*\| tuned: ([^|]*) \|$", text, flags=re.M):
        line = f"config/README.md:{text.count(chr(10), 0, m.start()) + 1}"
        for n, costs in re.findall(r"(\d+) for ([a-z0-9 ]+?)(?= \(|,|$)", m.group(2)):
            for c in re.split(r" and ", costs):
                c = c.split()[0]
                out.append((line, c, m.group(1), n))
    text = read("config/generated-scene.ini")
    for m in re.finditer(r"\(adcensus: (\d+)\s*#?\s*and (\d+);\s*#?\s*census: (\d+)\s*#?\s*and "
                         r"(\d+); rank 9x9: (\d+) and (\d+)\)", text):
        line = f"config/generated-scene.ini:{text.count(chr(10), 0, m.start()) + 1}"
        for k, c in enumerate(("adcensus", "census", "rank")):
            out += [(line, c, "p1", m.group(2 * k + 1)), (line, c, "p2", m.group(2 * k + 2))]
    for m in re.finditer(r"^#\s+(p[12]) = (\d+)", text, flags=re.M):
        out.append((f"config/generated-scene.ini:{text.count(chr(10), 0, m.start()) + 1}",
                    ini_cost(text), m.group(1), m.group(2)))
    return out


def ini_cost(text):
    m = re.search(r"^#?\s*cost = (\w+)", text, flags=re.M)
    return m.group(1) if m else "adcensus"


def live_penalties(cost, tmp):
    """The P1 and P2 stereo-live settles on for the cost (what --record's replay.ini holds)."""
    rec = os.path.join(tmp, "rec-" + cost)
    r = run([LIVE, "--headless", "--frames", "1", "--set", "synth.width=96", "--set",
             "synth.height=64", "-d", "16", "--cost", cost, "--record", rec])
    if r.returncode != 0:
        return None
    ini = configparser.ConfigParser()
    ini.read(os.path.join(rec, "replay.ini"))
    return ini["stereo"]["p1"], ini["stereo"]["p2"]


# ---- quotes -----------------------------------------------------------------------------------
def scene(d):
    """left.png and right.png, and the frames in/left_00000K.png ... of a small scene."""
    run([SYNTH, "--size", "160x120", "--max-disp", "12", d])
    os.makedirs(os.path.join(d, "in"), exist_ok=True)
    for k in range(4):
        for side in ("left", "right"):
            shutil.copy(os.path.join(d, f"{side}.png"), os.path.join(d, "in", f"{side}_{k:06d}.png"))


def write_png_header(path, w, h):
    """A PNG of w x h whose header is all there is (a reader refuses the size from it)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))


def write(d, rel, text):
    os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
    with open(os.path.join(d, rel), "w") as f:
        f.write(text)


def comments(n):
    return "".join(f"# line {i + 1}\n" for i in range(n))


LIVE1 = [LIVE, "--headless", "--frames", "1", "-d", "16"]
# (page, the quote's start, setup(dir), command, exit status[, what may differ: a regex]): the
# command runs in a scratch folder, stands for the one the page shows or describes, and its
# line must equal the quote
QUOTES = [
    ("config/README.md", "config/mine.ini:12: disparities:",
     lambda d: write(d, "config/mine.ini", comments(10) + "[stereo]\ndisparities = 50\n"),
     [*LIVE1[:4], "--config", "config/mine.ini"], 2),
    ("config/README.md", "config/mine.ini:14: p2:",
     lambda d: write(d, "config/mine.ini", comments(10) + "[stereo]\np1 = 60\n#\np2 = 50\n"),
     LIVE1 + ["--config", "config/mine.ini"], 2),
    ("config/README.md", "--p1: 3 values for 4 paths", None, LIVE1 + ["--p1", "8,8,8"], 2),
    ("docs/usage.md", "config/mine.ini:4: p2:",
     lambda d: write(d, "config/mine.ini", "[stereo]\np1 = 60\n#\np2 = 50\n"),
     LIVE1 + ["--config", "config/mine.ini"], 2),
    ("config/README.md", "config/two-usb-cameras.ini:26:",
     lambda d: shutil.copytree(os.path.join(ROOT, "config"), os.path.join(d, "config")),
     LIVE1 + ["--config", "config/two-usb-cameras.ini"], 1),
    ("config/README.md", "rig.ini:5: camera.left =",
     lambda d: write(d, "rig.ini", "[source]\ntype = v4l2\n[camera]\nright = "
                     "/dev/v4l/by-id/usb-nosuch-right\nleft = /dev/v4l/by-id/usb-nosuch-left\n"),
     LIVE1 + ["--config", "rig.ini"], 1),
    ("docs/usage.md", "stereo-live: --output 'rtp://nosuchhost.invalid:5000'", None,
     LIVE1 + ["--output", "rtp://nosuchhost.invalid:5000"], 2,
     r"\([^()]*\)$"),  # the resolver's own words, which differ between resolvers
    ("docs/usage.md", "stereo-live: --output 'ros2://robot?points=1'", None,
     LIVE1 + ["--output", "ros2://robot?points=1"], 2),
    ("docs/usage.md", "stereo-live: --output filesink 'in/right_000002.png'", scene,
     LIVE1 + ["--left", "file://in/left_%06d.png", "--right", "file://in/right_%06d.png",
              "--output", "gst://appsrc ! pngenc ! filesink location=in/right_000002.png"], 2),
    ("docs/usage.md", "stereo-live: frame 7 of --output multifilesink", scene,
     LIVE1 + ["--stats-json", "in/x_7.png", "--output",
              "gst://appsrc ! pngenc ! multifilesink location=in/x_%d.png"], 2),
    ("docs/usage.md", "stereo-live: --output 'gst://appsrc ! queue max-size-buffers=0", None,
     LIVE1 + ["--output", "gst://appsrc ! queue max-size-buffers=0 max-size-time=0 "
              "max-size-bytes=0 ! fakesink"], 2),
    ("docs/usage.md", "frame 3 of --output 'cfg/c_%06d.pfm'",
     lambda d: write(d, "cfg/c_000003.pfm", "[stereo]\ndisparities = 16\n"),
     LIVE1 + ["--config", "cfg/c_000003.pfm", "--output", "file://cfg/c_%06d.pfm"], 2),
    ("docs/usage.md", "stereo-match: output 'left.png' is the same file", scene,
     [MATCH, "left.png", "right.png", "left.png"], 2),
    ("docs/usage.md", "stereo-match: in.png: is a FIFO", lambda d: (scene(d), os.mkfifo(
        os.path.join(d, "in.png"))), [MATCH, "in.png", "right.png", "out.pfm"], 1),
    ("docs/ros2.md", "stereo-live: --output: 'ros2://r?min_confidence=300'", None,
     LIVE1 + ["--output", "ros2://r?min_confidence=300"], 2),
    ("docs/usage.md", "stereo-match: big.png: 46000x46000 is larger", lambda d: (scene(d), write_png_header(
        os.path.join(d, "big.png"), 46000, 46000)), [MATCH, "big.png", "right.png", "out.pfm"], 1),
]
# quoted lines that report a run with its figures (not an error a command reproduces)
REPORTS = [
    ("docs/usage.md", "stereo-live: output gst://appsrc ! queue ! identity"),
    ("docs/usage.md", "stereo-live: the stage does not keep up with the source"),
    ("docs/ros2.md", "stereo-live: output ros2://robot: the bridge"),
    ("docs/ros2.md", "stereo-ros2-bridge: ros2://robot: another publisher"),  # a ROS 2 graph
]
PROGRAM_LINE = re.compile(r"^(stereo-[a-z0-9-]+|calib-maps): |^[\w./-]+\.ini:\d+: ")


def quotes(rel):
    """The page's quotes: its code spans and indented code lines, blanks made single."""
    text = read(rel)
    out = [" ".join(m.group(1).split()) for m in re.finditer(r"`([^`]+)`", text)]
    out += [line.strip() for line in text.splitlines() if line.startswith("    ")]
    return out


def matches(quote, line):
    """The program's line equals the quote ("..." stands for any text; the program's name at
    the start may be left out)."""
    rx = ".*?".join(re.escape(p) for p in quote.split("..."))
    line = " ".join(line.split())
    return bool(re.fullmatch(rx, line) or re.fullmatch(rx, re.sub(r"^[a-z0-9-]+: ", "", line)))


def check_quotes(tap, tmp):
    for rel, start, setup, cmd, status, *vary in QUOTES:
        found = [q for q in quotes(rel) if q.startswith(start)]
        d = tempfile.mkdtemp(dir=tmp)
        if setup:
            setup(d)
        r = run(cmd, cwd=d)
        lines = r.stderr.strip().splitlines()
        same = [re.sub(vary[0], "(...)", t) if vary else t for t in found + lines]
        good = len(found) == 1 and r.returncode == status and any(matches(same[0], l)
                                                                   for l in same[1:])
        tap.ok(good, f"{rel}: the quote '{start} ...' is what the command prints (exit {status})",
               f"quoted: {found}", f"exit {r.returncode}, stderr:", *lines)
    known = [(rel, s) for rel, s, *_ in QUOTES] + REPORTS
    loose = [f"{rel}: {q}" for rel in pages() for q in quotes(rel)
             if PROGRAM_LINE.match(q) and not any(rel == k and q.startswith(s) for k, s in known)]
    tap.ok(not loose, "every quoted program line of the pages has its command here (QUOTES) or "
           "is a run's report (REPORTS)", *loose)


# ---- the checks ------------------------------------------------------------------------------
def check_defaults(tap, tmp):
    stated = stated_defaults()
    bad = [f"{where}: --{name} default {value}, the table's is "
           f"{table_default(ROWS[name])}" for where, name, value in stated
           if value != norm(table_default(ROWS[name]) or "")]
    names = {n for _, n, _ in stated}
    tap.ok(not bad and len(stated) >= 40 and len(names) >= 25,
           f"{len(stated)} stated defaults of {len(names)} stage options equal the table's", *bad)
    cache, bad = {}, []
    stated = stated_penalties()
    for where, cost, which, value in stated:
        if cost not in cache:
            cache[cost] = live_penalties(cost, tmp)
        got = cache[cost]
        if got is None or got[which == "p2"] != value:
            bad.append(f"{where}: {cost} {which} {value}, stereo-live uses "
                       f"{got[which == 'p2'] if got else '(no run)'}")
    tap.ok(not bad and len(stated) >= 16 and set(c for _, c, _, _ in stated) >= set(COSTS),
           f"{len(stated)} stated tuned penalties (every cost) equal what stereo-live settles on",
           *bad)
    d = inspect.signature(sd.match).parameters["disparities"].default
    tap.ok(str(d) == ROWS["disparities"].default,
           f"Python's match(disparities={d}) is the table's default {ROWS['disparities'].default}")


def plant(tap, tmp):
    """A copy of the pages with a stale default of each kind and a stale quote: each reported."""
    copy = os.path.join(tmp, "copy")
    os.makedirs(os.path.join(copy, "python"))
    shutil.copy(os.path.join(DOCS, "README.md"), copy)
    shutil.copy(os.path.join(DOCS, "python", "README.md"), os.path.join(copy, "python"))
    shutil.copytree(os.path.join(DOCS, "docs"), os.path.join(copy, "docs"))
    shutil.copytree(os.path.join(DOCS, "config"), os.path.join(copy, "config"))
    faults = [  # (file, text, its stale version, what the report says)
        ("docs/usage.md", "`--ad-weight` eighths (default 3)", "`--ad-weight` eighths (default 4)",
         "--ad-weight default 4"),
        ("docs/usage.md", "`adcensus` (the default)", "`census` (the default)",
         "--cost default census"),
        ("README.md", "default range is 64", "default range is 128", "--disparities default 128"),
        ("config/README.md", "| SGM paths: 4 or 8 | 4 |", "| SGM paths: 4 or 8 | 8 |",
         "--paths default 8"),
        ("config/generated-scene.ini", "\nwindow = 9\n", "\nwindow = 7\n", "--window default 7"),
        ("config/README.md", "160 for adcensus", "96 for adcensus", "adcensus p2 96"),
        ("config/README.md", "config/mine.ini:12: disparities", "config/mine.ini:24: disparities",
         "config/mine.ini:24"),
        ("docs/usage.md", "in.png: is a FIFO, not a", "in.png: is a pipe, not a", "is a pipe"),
    ]
    missing = []
    for rel, text, stale, _ in faults:
        p = os.path.join(copy, rel)
        s = open(p).read()
        if text not in s:
            missing.append(f"{rel}: no '{text}' to plant a fault in")
            continue
        open(p, "w").write(s.replace(text, stale, 1))
    with open(os.path.join(copy, "docs", "ros2.md"), "a") as f:
        f.write("\n    stereo-live: a quote nobody runs\n")
    faults.append(("docs/ros2.md", "", "", "docs/ros2.md: stereo-live: a quote nobody runs"))
    r = subprocess.run([sys.executable, os.path.abspath(__file__)], capture_output=True,
                       text=True, env={**os.environ, "DOCS_ROOT": copy, "DOCS_PLANTED": "1"},
                       timeout=600)
    missing += [f"{rel}: {want}" for rel, _, _, want in faults if want not in r.stdout]
    tap.ok(not missing and "not ok" in r.stdout, f"the checks fail on {len(faults)} planted "
           "faults (a stale option default, cost, range, table row, example file value, tuned "
           "penalty, two stale quotes, a quote without its command)", *missing, r.stdout[-3000:])


tap = Tap()
with tempfile.TemporaryDirectory() as tmp:
    check_defaults(tap, tmp)
    check_quotes(tap, tmp)
    if not os.environ.get("DOCS_PLANTED"):
        plant(tap, tmp)
print(f"1..{tap.n}")
sys.exit(0)
