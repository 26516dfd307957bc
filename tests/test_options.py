# SPDX-License-Identifier: Apache-2.0
"""The one table of stage options (gpu/stereo_options.c) in every program, as TAP.

  --help     every row in stereo-match --help, stereo-live --help and stereo-live-headless
             --help: its flags, its value and its help text ("HELP: RANGE (default DEF);
             MORE", wrapped); the Matching and Backend sections of the programs identical;
             stereodepth.options() holding the same rows, named by keyword argument
  flags      each row's long flag, and its short flag, accepted by stereo-match, stereo-live
             and (as its keyword argument) Python with the same effect: Python's disparity is
             stereo-match's bit for bit, the long and short flags give the same file, and
             stereo-live's effective settings (the [stereo] section --record writes) set the
             row's key to the value, equal those of --set stereo.KEY=VALUE, and differ from
             the defaults
  messages   each bad value: the same line from stereo-match, stereo-live (flag, and --set
             with the key) and Python (naming the keyword argument); the same for the checks
             across options
  parity     the options beside the table (maps, colour, output control; PARITY): each
             program's --help and Python's options_help() name every one, and each program
             takes it or refuses it with one line that says where it is (exit status 2;
             Python: ValueError); the verdict itself fails on planted outcomes

A row the test has no sample values for fails it: add them below (SAMPLES) with the row.
Env: STEREO_BUILD (build). Needs NumPy and cv2 (Debian's python3).
"""
import configparser
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("STEREO_BUILD", "build"))
MATCH = os.path.join(BUILD, "stereo-match")
LIVE = os.path.join(BUILD, "stereo-live")
HEADLESS = os.path.join(BUILD, "gpu", "stereo-live-headless")
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ["STEREODEPTH_LIB"] = os.path.join(BUILD, "libstereodepth.so")
from tap import Tap  # noqa: E402
import stereodepth as sd  # noqa: E402

try:
    import cv2
except ImportError:
    cv2 = None

# per long name: a value that changes the result or the setting from the default (None for a
# flag) and a bad value
SAMPLES = {
    "disparities": ("32", "100"),
    "min-disparity": ("4", "2040"),
    "cost": ("census", "sad"),
    "window": ("7", "4"),
    "method": ("bm", "sgbm"),
    "block": ("5", "10"),
    "paths": ("8", "6"),
    "p1": ("10", "0"),
    "p2": ("200", "1024"),
    "p2-adapt": ("0", "256"),
    "ad-weight": ("5", "17"),
    "mi-tiles": ("1", "9"),
    "path-weights": ("1,2,1,2", "0,0"),
    "uniqueness": ("10", "100"),
    "no-subpixel": (None, None),
    "no-lr": (None, None),
    "lr-tolerance": ("3", "256"),
    "no-median": (None, None),
    "band": ("32", "65"),
    "cross": ("2", "35"),
    "discontinuity": (None, None),
    "speckle-size": ("200", "-1"),
    "speckle-diff": ("8", "4096"),
    "vote": (None, None),
    "interp": (None, None),
    "fill": (None, None),
    "temporal": (None, None),
    "temporal-alpha": ("4", "17"),
    "temporal-delta": ("32", "-1"),
    "temporal-persist": ("3", "256"),
    "backend": ("cpu", "gpu"),
    "threads": ("2", "257"),
    "sms": ("4", "5000"),
}
# checks across options: the arguments, and the start of stereo-match's message
CROSS = [
    (["--p1", "8,8,8"], "--p1: 3 values for 4 paths"),
    (["--p1", "200", "--p2", "100"], "--p2: 100 must be greater than --p1 200"),
    (["--min-disparity", "2000", "-d", "64"], "--min-disparity: 2000 plus 64 disparities"),
    (["--band", "48"], "--band: 48 is neither 32 nor 64"),
    (["--band", "64", "-d", "64"], "--band: 64 must be smaller than the 64 disparities"),
    (["--cross", "2", "--band", "32"], "--cross: refines SGM over the full cost volume, not --band"),
    (["--cross", "1", "--method", "bm"], "--cross: refines SGM over the full cost volume, not --method bm"),
]
LIVE_ARGS = ["--headless", "--frames", "1", "--set", "synth.width=160", "--set",
             "synth.height=120"]
# The options beside the table, which every program takes or answers with where they are:
# flag: (its value, None for a flag; then stereo-match, stereo-live, Python (the keyword, the
# flag with '_' for '-'): True when it takes the option, else words its refusal must hold;
# then the options stereo-match and stereo-live need beside it when they take it). {tmp} is the scratch folder,
# {rig} the generated scene's calibration. An option that goes missing from a program (or an
# answer that loses its pointer) fails the test.
RIG = os.path.join(ROOT, "config", "generated-rig.yml")
COLOUR = "colour it yourself"
PARITY = {
    "maps": ("{rig}", True, True, True, ([], [])),
    "colormap": ("jet", True, True, COLOUR, ([], [])),
    "color-range": ("auto", True, True, COLOUR, ([], [])),
    "legend": (None, True, True, COLOUR, (["--color", "{tmp}/c.png"], [])),
    "color": ("{tmp}/c.png", True, "--screenshot FILE.png saves it", COLOUR, ([], [])),
    "quiet": (None, True, "redirect stdout", "prints nothing", ([], [])),
    "stats-json": ("{tmp}/s.json", "one summary line on stdout", True, "time the calls",
                   ([], [])),
    "confidence": ("{tmp}/conf.png", True, "ros2://NAMESPACE?min_confidence=N",
                   "Matcher.confidence()", ([], [])),
    "min-confidence": ("3", "--confidence FILE", "ros2://NAMESPACE?min_confidence=N", True,
                       ([], [])),
    "depth": ("{tmp}/depth.png", True, "--record-depth", "depth(disparity, f, B)",
              (["--maps", "{rig}"], [])),
    "ply": ("{tmp}/p.ply", True, "file://DIR/%06d.ply", "points(disparity",
            (["--maps", "{rig}"], [])),
    "focal": ("700", True, True, "depth() and points() take f",
              (["--baseline", "0.12", "--depth", "{tmp}/z.pfm"], ["--baseline", "0.12"])),
    "baseline": ("0.12", True, True, "take B",
                 (["--focal", "700", "--depth", "{tmp}/z.pfm"], ["--focal", "700"])),
}
# the parity runs: the generated scene at the size of the calibration, a fast stage
PARITY_STAGE = ["-d", "16", "--cost", "rank", "--paths", "4"]

tap = Tap()
rows = sd._ROWS  # the library's table as it is (options() names options by keyword)


def run(cmd, cwd=None):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def help_text(r):
    """What --help prints for the row, on one line (stereo_options_print_help)."""
    return (r.help + (f": {r.range}" if r.range else "") +
            (f" (default {r.default})" if r.default else "") + (f"; {r.more}" if r.more else ""))


def help_entries(text):
    """--help's option entries: {long name: (the flags column, the help on one line)}."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"  (-\w, |    )--([a-z0-9-]+)(?: (\S+))?(?:  +|$)(.*)", line)
        if m:
            name = m.group(2)
            out[name] = [m.group(1) + "--" + name + (" " + m.group(3) if m.group(3) else ""),
                         m.group(4)]
        elif name and line.startswith(" " * 25) and line.strip():
            out[name][1] += " " + line.strip()
        else:
            name = None
    return out


def section(text, title):
    """The lines of --help's section TITLE (from "TITLE:" to the next unindented line)."""
    lines = text.splitlines()
    start = lines.index(title + ":") + 1
    end = start
    while end < len(lines) and lines[end].startswith(" "):
        end += 1
    return lines[start:end]


# ---- --help -----------------------------------------------------------------------------------
tap.ok(set(SAMPLES) == {r.name for r in rows}, "every row of the table has sample values here",
       f"table: {sorted(r.name for r in rows)}", f"samples: {sorted(SAMPLES)}")
helps = {}
for prog in (MATCH, LIVE, HEADLESS):
    r = run([prog, "--help"])
    helps[prog] = r.stdout
    entries = help_entries(r.stdout)
    bad = []
    for row in rows:
        flags = (f"-{row.short}, " if row.short else "    ") + "--" + row.name + \
            (" " + row.metavar if row.metavar else "")
        got = entries.get(row.name)
        if got != [flags, help_text(row)]:
            bad.append(f"--{row.name}: {got!r}, expected {[flags, help_text(row)]!r}")
    tap.ok(r.returncode == 0 and not bad, f"{os.path.basename(prog)} --help: every row with its "
           "help text", *bad)
    if prog != MATCH:  # only the table's sections (stereo-match's are the same lines)
        long_lines = [line for t in ("Matching", "Backend") for line in section(r.stdout, t)
                      if len(line) > 79]
        tap.ok(not long_lines, f"{os.path.basename(prog)} --help: the table's lines fit 79 "
               "columns", *long_lines)
for title in ("Matching", "Backend"):
    m, live, headless = (section(helps[p], title) for p in (MATCH, LIVE, HEADLESS))
    tap.ok(live and live == m[:len(live)] and headless == live,
           f"the {title} section: stereo-live's (and the headless build's) lines are "
           "stereo-match's (one formatter)", "\n".join(live), "\n".join(m))
py = {o.kwarg: o for o in sd.options()}
tap.ok([o.kwarg for o in sd.options()][:len(rows)] == [r.kwarg for r in rows] and
       all(py[r.kwarg].help == sd._kwarg_text(r.help) and py[r.kwarg].default == r.default
           and py[r.kwarg].name == r.name for r in rows),
       "stereodepth.options(): the table's rows, by keyword argument, help and default",
       str(sd.options()))
tap.ok(all(r.kwarg in sd.__doc__ for r in rows) and "options()" in sd.__doc__,
       "help(stereodepth) lists every keyword argument and points at options()")

# ---- flags: the same effect everywhere --------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    r = run([os.path.join(BUILD, "stereo-synth"), "--size", "160x120", "--max-disp", "24", tmp])
    left, right = (os.path.join(tmp, n) for n in ("left.png", "right.png"))
    images = (cv2.imread(left, cv2.IMREAD_UNCHANGED), cv2.imread(right, cv2.IMREAD_UNCHANGED)) \
        if cv2 is not None and r.returncode == 0 else None

    def pfm_bytes(d):
        """What stereo-match writes for Python's disparity d (NaN: +inf; bottom row first)."""
        d = np.where(np.isnan(d), np.float32(np.inf), d).astype("<f4")
        return f"Pf\n{d.shape[1]} {d.shape[0]}\n-1.0\n".encode() + np.flipud(d).tobytes()

    def live_settings(name, *args):
        """stereo-live's [stereo] settings after the arguments (replay.ini of --record)."""
        rec = os.path.join(tmp, "rec-" + name)
        r = run([LIVE, *LIVE_ARGS, "--record", rec, *args])
        if r.returncode != 0:
            return r.stderr.strip()
        ini = configparser.ConfigParser()
        ini.read(os.path.join(rec, "replay.ini"))
        return dict(ini["stereo"])

    default = live_settings("default")
    for row in rows:
        value, bad_value = SAMPLES.get(row.name, (None, None))
        args = [f"--{row.name}"] + ([value] if row.metavar else [])
        # stereo-match and Python
        out = os.path.join(tmp, "m.pfm")
        r = run([MATCH, "-q", *args, left, right, out])
        if images is None:
            tap.skip(f"--{row.name}: stereo-match = Python {row.kwarg}", "no cv2 or scene")
        else:
            try:
                d = sd.match(*images, **{row.kwarg: value if row.metavar else True})
                same = r.returncode == 0 and open(out, "rb").read() == pfm_bytes(d)
                why = r.stderr
            except ValueError as e:
                same, why = False, str(e)
            tap.ok(same, f"stereo-match {' '.join(args)} = Python {row.kwarg}="
                   f"{value if row.metavar else True}, bit for bit", why)
        if row.short:
            short = os.path.join(tmp, "s.pfm")
            r2 = run([MATCH, "-q", f"-{row.short}", value, left, right, short])
            tap.ok(r.returncode == 0 and r2.returncode == 0 and
                   open(out, "rb").read() == open(short, "rb").read(),
                   f"stereo-match -{row.short} {value} = --{row.name} {value}", r2.stderr)
        # stereo-live: the key the table names, as --set would set it
        flag = live_settings(row.name, *args)
        # a flag's key is false when it is given (no-*), a switch's true (fill, temporal)
        want = value if row.metavar else "false" if row.name.startswith("no-") else "true"
        key = live_settings(row.name + "-key", "--set", f"stereo.{row.key}={want}")
        tap.ok(isinstance(flag, dict) and flag == key and flag.get(row.key) == want and
               flag != default,
               f"stereo-live {' '.join(args)}: [stereo] {row.key} = {want}, as --set "
               f"stereo.{row.key}={want}, not the default", f"flag: {flag}", f"--set: {key}",
               f"default: {default}")
        if row.short:
            short = live_settings(row.name + "-short", f"-{row.short}", value)
            tap.ok(short == flag, f"stereo-live -{row.short} {value} = --{row.name} "
                   f"{value}", str(short))

    # ---- messages: one line, the same everywhere ----------------------------------------------
    def messages(args, kwargs, key=None):
        """(stereo-match's line, stereo-live's line, stereo-live's --set line, Python's)"""
        m = run([MATCH, *args, left, right, os.path.join(tmp, "never.pfm")])
        lv = run([LIVE, *LIVE_ARGS, *args])
        s = run([LIVE, *LIVE_ARGS, "--set", key]) if key else None
        try:
            sd.match(*images, **kwargs) if images else None
            p = None
        except ValueError as e:
            p = str(e)
        return (m.stderr.strip() if m.returncode == 2 else f"exit {m.returncode}: {m.stderr}",
                lv.stderr.strip() if lv.returncode == 2 else f"exit {lv.returncode}: {lv.stderr}",
                None if s is None else s.stderr.strip() if s.returncode == 2 else
                f"exit {s.returncode}: {s.stderr}", p)

    def as_kwargs(text):
        return sd._kwarg_text(text)

    for row in rows:
        value, bad_value = SAMPLES.get(row.name, (None, None))
        if not row.metavar:
            continue
        m, lv, s, p = messages([f"--{row.name}", bad_value], {row.kwarg: bad_value},
                               f"stereo.{row.key}={bad_value}")
        line = re.sub(r"^stereo-match: (.*) \(see --help\)$", r"\1", m)
        why = line[len(f"--{row.name}: "):] if line.startswith(f"--{row.name}: ") else None
        tap.ok(why is not None and lv == f"stereo-live: {line}" and
               s == f"stereo-live: --set stereo.{row.key}={bad_value}: {why}" and
               (images is None or p == as_kwargs(line)),
               f"--{row.name} {bad_value}: one message: '{line}' (Python: '{as_kwargs(line)}', "
               f"--set: the key's)", f"stereo-match: {m}", f"stereo-live: {lv}",
               f"stereo-live --set: {s}", f"Python: {p}")
    for args, start in CROSS:
        kw = {}
        for i in range(0, len(args), 2):
            row = next(r for r in rows if args[i] in (f"--{r.name}", f"-{r.short}"))
            kw[row.kwarg] = args[i + 1]
        m, lv, _, p = messages(args, kw)
        line = re.sub(r"^stereo-match: (.*) \(see --help\)$", r"\1", m)
        tap.ok(line.startswith(start) and lv == f"stereo-live: {line}" and
               (images is None or p == as_kwargs(line)),
               f"{' '.join(args)}: one message across options: '{line}'",
               f"stereo-match: {m}", f"stereo-live: {lv}", f"Python: {p}")

# ---- parity: the options beside the table -----------------------------------------------------
def named(text, flag, python=False):
    """Whether a --help text names the option: --flag (-q for quiet, min_confidence for
    min-confidence), or for Python its keyword."""
    words = [flag.replace("-", "_")] if python else \
        {"quiet": ["-q", "--quiet"], "min-confidence": ["--min-confidence", "min_confidence"]}.get(
            flag, [f"--{flag}"])
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text) for w in words)


def verdict(prog, flag, want, rc, err):
    """'' when the outcome is what PARITY wants of prog, else why not. want True: it takes the
    option (no refusal of the option itself); else one line of exit status 2, "PROG: --flag is
    ...", holding the words want."""
    lines = err.strip().splitlines()
    refused = any(re.search(rf"{prog}: (--{flag}|-q|unknown option '--{flag})", l) and
                  (" is " in l or "unknown option" in l) for l in lines)
    if want is True:
        return f"refuses it: {err.strip()}" if refused or rc == 2 and f"--{flag}" in err \
            else ""
    start = f"{prog}: --{flag} is "
    if rc == 2 and len(lines) == 1 and lines[0].startswith(start) and want in lines[0]:
        return ""
    return f"exit {rc}, expected 2 and one line '{start}... {want} ...': {err.strip()}"


# the verdict fails on planted outcomes: an option a program lost, one it took unasked, a
# refusal that does not say where, a refusal with the wrong status
planted = [verdict("stereo-live", "maps", True, 2, "stereo-live: unknown option '--maps' (see "
                   "--help)"),
           verdict("stereo-match", "stats-json", "one summary line", 0, ""),
           verdict("stereo-live", "color", "--screenshot", 2, "stereo-live: --color is "
                   "stereo-match's"),
           verdict("stereo-live", "depth", "--record-depth", 1, "stereo-live: --depth is "
                   "stereo-match's; --record-depth")]
tap.ok(all(planted), "the parity verdict fails on planted outcomes (a lost option, one taken "
       "unasked, a refusal without its pointer, a wrong exit status)", *map(repr, planted))

py_help = sd.options_help()
py_kwargs = {o.kwarg for o in sd.options()}
for flag in PARITY:
    tap.ok(named(helps[MATCH], flag) and named(helps[LIVE], flag) and
           named(py_help, flag, python=True),
           f"--{flag}: stereo-match --help, stereo-live --help and options_help() name it",
           f"stereo-match: {named(helps[MATCH], flag)}, stereo-live: {named(helps[LIVE], flag)}"
           f", Python: {named(py_help, flag, python=True)}")
with tempfile.TemporaryDirectory() as tmp:
    r = run([os.path.join(BUILD, "stereo-synth"), "--size", "640x480", "--max-disp", "12", tmp])
    pair = [os.path.join(tmp, n) for n in ("left.png", "right.png")]
    images = [cv2.imread(p_, cv2.IMREAD_UNCHANGED) for p_ in pair] \
        if cv2 is not None and r.returncode == 0 else None
    for flag, (value, m_want, l_want, p_want, beside) in PARITY.items():
        args = [a.format(tmp=tmp, rig=RIG) for a in [f"--{flag}"] + ([value] if value else [])]
        m_beside, l_beside = ([a.format(tmp=tmp, rig=RIG) for a in b] for b in beside)
        m = run([MATCH, *PARITY_STAGE, *args, *(m_beside if m_want is True else []), *pair,
                 os.path.join(tmp, "d.pfm")])
        why = verdict("stereo-match", flag, m_want, m.returncode, m.stderr)
        if m_want is True and not why and m.returncode != 0:
            why = f"exit {m.returncode}: {m.stderr.strip()}"
        tap.ok(not why, f"stereo-match {' '.join(args)}: " +
               ("taken" if m_want is True else f"answered with '{m_want}'"), why)
        lv = run([LIVE, "--headless", "--frames", "1", *PARITY_STAGE, *args,
                  *(l_beside if l_want is True else [])])
        why = verdict("stereo-live", flag, l_want, lv.returncode, lv.stderr)
        if l_want is True and not why and lv.returncode != 0:
            why = f"exit {lv.returncode}: {lv.stderr.strip()}"
        tap.ok(not why, f"stereo-live {' '.join(args)}: " +
               ("taken" if l_want is True else f"answered with '{l_want}'"), why)
        kw = flag.replace("-", "_")
        if images is None:
            tap.skip(f"Python {kw}=", "no cv2 or scene")
            continue
        kv = True if not value else int(value) if value.isdigit() else \
            value.format(tmp=tmp, rig=RIG)
        try:
            sd.match(*images, disparities=16, cost="rank", paths=4, **{kw: kv})
            got = None
        except ValueError as e:
            got = str(e)
        if p_want is True:
            good = got is None and kw in py_kwargs and kw in sd.option_names()
        else:
            good = got is not None and got.startswith(f"{kw} is not an option of this module: ")\
                and p_want in got and kw not in py_kwargs
        tap.ok(good, f"Python {kw}={kv!r}: " + ("taken (in options())" if p_want is True
                                                  else f"ValueError with '{p_want}'"), str(got))

print(f"1..{tap.n}")
sys.exit(0)
