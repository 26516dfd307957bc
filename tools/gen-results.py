#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes docs/results-proxy.md from docs/results-jetson-proxy.csv.

    tools/gen-results.py            rewrite docs/results-proxy.md
    tools/gen-results.py --check    exit 1 (and say so) if docs/results-proxy.md is not what the
                                    CSV gives; writes nothing
    tools/gen-results.py --stdout   print the page

The CSV keeps every run of tools/gpu-check.sh's proxy step; the page shows the latest run of each
configuration (device, SM count, build, size, disparities, paths) and the Jetson projection
computed from it. The README quotes a few of its figures; tests/test_docs.sh checks that each one
is on this page, so regenerate the page after adding runs to the CSV and update the README to
match. Python's standard library only.
"""
import csv
import os
import sys
import textwrap
from decimal import Decimal, ROUND_HALF_UP

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CSV = os.path.join(ROOT, "docs", "results-jetson-proxy.csv")
PAGE = os.path.join(ROOT, "docs", "results-proxy.md")

# The projection's model (the same as tools/gpu-check.sh's): a frame on an Orin takes the larger
# of the proxy's time scaled from the H100's boost clock to the Orin's GPU clock (instructions)
# and the frame's DRAM bytes over the Orin's memory bandwidth (perfect overlap: optimistic; the
# CPU and the display share that memory). name, SMs of the proxy, clock in MHz, GB/s.
H100_CLOCK_MHZ = 1980
ORINS = (
    ("Orin AGX", 16, 1300, Decimal("204.8")),
    ("Orin NX 16 GB", 8, 918, Decimal("102.4")),
    ("Orin Nano 8 GB", 8, 625, Decimal("68")),
)
HEADLINE = ("640x480", "128", "4")   # the size, disparities and paths quoted in the README
DEFAULT_COST = "adcensus"            # the stage's default (stereo_params_default), which the
                                     # README quotes; runs before the cost column are rank


def rnd(value, places):
    """value (a str or Decimal) rounded half up to places decimals, as a str."""
    q = Decimal(1).scaleb(-places) if places else Decimal(1)
    return str(Decimal(value).quantize(q, rounding=ROUND_HALF_UP))


def mode_of(r):
    """A row's mode: `default` (the default configuration, whatever path it takes inside; today
    the full search) and `full` (the rows from before that name) count as one."""
    m = r["mode"] or "full"
    return "full" if m == "default" else m


def load(keep=lambda r: True):
    """All rows, and the last row kept of each configuration."""
    with open(CSV, newline="") as f:
        rows = list(csv.DictReader(f))
    latest = {}   # configuration -> its last row (the CSV is in run order, dates ascending)
    for r in filter(keep, rows):
        key = (r["device"], int(r["sms"]), r["build"], r["size"], r["disparities"], r["paths"],
               mode_of(r), r["cost"] or "rank")
        if key not in latest or r["date"] >= latest[key]["date"]:
            latest[key] = r
    return rows, latest


def voxels(r):
    w, h = map(int, r["size"].split("x"))
    return w * h * int(r["disparities"])


def project(r, clock_mhz, gbps, ms_field, bpv_field):
    """(ms, bound) of one frame on an Orin, or None without a bytes-per-voxel count."""
    if not r[bpv_field] or not r[ms_field]:
        return None
    instr = Decimal(r[ms_field]) * H100_CLOCK_MHZ / clock_mhz
    memory = Decimal(r[bpv_field]) * voxels(r) / (gbps * Decimal(10) ** 6)   # ms
    return (memory, "memory-bound") if memory > instr else (instr, "")


def band_section(latest, w):
    """The coarse-to-fine mode's rows beside the full search of the same run and size."""
    bands = sorted((k for k in latest if k[6] != "full"),
                   key=lambda k: (-k[1], int(k[3].split("x")[0]), int(k[4]), k[6]))
    if not bands:
        return
    w("## The coarse-to-fine mode")
    w("")
    w("`--band W` (docs/usage.md) matches the pair at half size first and then searches W "
      "disparities per pixel around that result instead of the whole range. Both are timed in "
      "the same call of `tools/gpu-check.sh` (its band step, `compute_87`, no libSGM), and the "
      "projection is the one above, per board of that many SMs, with the full search's "
      "projected time over the band's in brackets: above 1, the band is faster there. The full "
      "search at 512 disparities is the sweep design (the only one that runs them in full).")
    w("")
    w("| SMs | size | disparities | cost | mode | ms | full search ms | bytes/voxel (band / full) "
      "| projected ms (band / full) | date | commit |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in bands:
        r = latest[k]
        full = latest.get(k[:6] + ("full", k[7]))
        if not full or full["commit"] != r["commit"]:
            continue
        proj = []
        for name, sms, clock, gbps in ORINS:
            tb = project(r, clock, gbps, "project_ms", "dram_bytes_per_voxel") if sms == k[1] else None
            tf = project(full, clock, gbps, "project_ms", "dram_bytes_per_voxel") if tb else None
            if tb and tf:
                proj.append(f"{name}: {rnd(tb[0], 1)} / {rnd(tf[0], 1)} ({rnd(tf[0] / tb[0], 2)}x)")
        bpv = f"{r['dram_bytes_per_voxel'] or '-'} / {full['dram_bytes_per_voxel'] or '-'}"
        w(f"| {k[1]} | {k[3]} | {k[4]} | {k[7]} | {k[6]} | {rnd(r['project_ms'], 3)} | "
          f"{rnd(full['project_ms'], 3)} | {bpv} | {'; '.join(proj)} | {r['date']} | "
          f"{r['commit']} |")
    w("")


def loaded_section(w):
    """The memory-loaded proxy's rows (mode `default loaded`) beside the same run's unloaded
    proxy rows and their projection."""
    rows, latest = load(lambda r: r["mode"] == "default loaded")
    full = load(lambda r: mode_of(r) == "full" and r["libsgm_ms"])[1]
    keys = sorted(latest, key=lambda k: (-k[1], int(k[3].split("x")[0]), k[4], k[5]))
    if not keys:
        return
    w("## Under memory load")
    w("")
    w("The proxy models an Orin's SM count, not its memory. In these runs (`tools/gpu-check.sh`, "
      "its loaded step, `tools/memload.cu`) every SM outside the green context streams copies "
      "through DRAM while the stage and libSGM run, in the same process as each, so that they "
      "share the DRAM bandwidth and the L2 with that traffic; the load is set per SM count so "
      "that a streaming copy inside the green context gets as near an Orin's bandwidth as the "
      "load can push it (the probe column; an Orin AGX has 204.8 GB/s, an Orin Nano 68; on the "
      "H200 the green context keeps about its share of the DRAM however heavy the load, so the "
      "probe stays 2.4x (16 SMs) and 3.8x (8 SMs) above those). The clock is still the H100's or "
      "H200's. 'unloaded' is the proxy row of the same device and day; 'projected' is that row's projection "
      "for the board of that many SMs (AGX for 16, Nano for 8), and 'loaded x clock' the "
      "loaded time scaled to that board's clock, the measurement's counterpart of the "
      "projection.")
    w("")
    w("| SMs | size | disparities | paths | cost | probe GB/s | stage ms loaded | libSGM ms loaded "
      "| x | stage ms unloaded | projected ms | loaded x clock ms | date | commit |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in keys:
        r = latest[k]
        u = full.get(k[:6] + ("full", k[7]))
        if u and u["date"] != r["date"]:
            u = None
        board = next(o for o in ORINS if o[1] == k[1]) if k[1] in (16, 8) else None
        if board and k[1] == 8:
            board = ORINS[2]   # the Nano: the smallest of the 8-SM boards
        proj = project(u, board[2], board[3], "project_ms", "dram_bytes_per_voxel") \
            if u and board else None
        scaled = Decimal(r["project_ms"]) * H100_CLOCK_MHZ / board[2] \
            if board and r["project_ms"] else None
        ratio = rnd(Decimal(r["libsgm_ms"]) / Decimal(r["project_ms"]), 2) + "x" \
            if r["libsgm_ms"] and r["project_ms"] else ""
        w(f"| {k[1]} | {k[3]} | {k[4]} | {k[5]} | {k[7]} | {r.get('loaded_probe_gbs') or ''} | "
          f"{rnd(r['project_ms'], 3) if r['project_ms'] else ''} | "
          f"{rnd(r['libsgm_ms'], 3) if r['libsgm_ms'] else ''} | {ratio} | "
          f"{rnd(u['project_ms'], 3) if u else ''} | {rnd(proj[0], 2) if proj else ''} | "
          f"{rnd(scaled, 2) if scaled else ''} | {r['date']} | {r['commit']} |")
    w("")


def page():
    # the proxy step's rows (with libSGM beside them), and the band step's (its own full search)
    rows, latest = load(lambda r: mode_of(r) == "full" and r["libsgm_ms"])
    all_latest = load(lambda r: not r["libsgm_ms"] and r["mode"] != "default loaded")[1]
    order = sorted(latest, key=lambda k: (-k[1], k[2] != "sm_90", int(k[3].split("x")[0]),
                                          int(k[3].split("x")[1]), k[0]))
    devices = sorted({k[0] for k in latest})
    out = []
    w = out.append
    w("# Speed: the CUDA stage on an H100 and on the Jetson proxy")
    w("")
    w("<!-- Generated by tools/gen-results.py from results-jetson-proxy.csv: edit those, not this"
      " page. -->")
    w("")
    w("Part of [results.md](results.md). Every figure here comes from "
      "[results-jetson-proxy.csv](results-jetson-proxy.csv), which keeps every run of "
      "`tools/gpu-check.sh` (its proxy step); this page shows the latest run of each "
      "configuration. Other pages link here rather than repeat these figures.")
    w("")
    w("## How it is measured")
    w("")
    w(f"On {', '.join(devices)}. `tools/gpu-check.sh` builds the stage twice, for `sm_90` (the "
      "H100's own instructions) and for `compute_87` only (the instruction path of a Jetson "
      "Orin, compiled from PTX at load, no Hopper-only instructions), and libSGM the same two "
      "ways, then times both in the same call, default settings but for the cost column "
      f"({DEFAULT_COST}, the default; rank in the runs from before it was; LR check, median, "
      "subpixel; full search; from 2026-11-29 also the default's speckle removal, whatever the "
      "paths; libSGM matches its own census with the same paths, and no speckle removal), on all "
      "the GPU's SMs and on a CUDA green context of 16 SMs (as "
      "an Orin AGX) or 8 (as an Orin NX or Nano): the *Jetson proxy*. A time is the median "
      "over the run's frames, in ms per frame. Bytes per voxel are ncu's DRAM bytes read and "
      "written per frame over width x height x disparities, counted on the 16-SM `compute_87` "
      "build.")
    w("")

    w("## In short")
    w("")
    size, d, p = HEADLINE
    h100 = [latest[k] for k in order if k[1] > 16 and k[2] == "sm_90" and k[3:6] == HEADLINE
            and k[7] == DEFAULT_COST]
    proxy = [latest[k] for k in order if k[1] == 16 and k[2] == "compute_87" and k[3:6] == HEADLINE
             and k[7] == DEFAULT_COST]
    h100.sort(key=lambda r: r["date"], reverse=True)  # the newest run, whichever device
    proxy.sort(key=lambda r: r["date"], reverse=True)
    for r in h100[:1]:
        w(f"- {size} D{d} {p} paths, cost {DEFAULT_COST}, on all {r['sms']} SMs of the "
          f"{r['device']} (`sm_90`, {r['date']}, "
          f"{r['commit']}): {rnd(r['project_ms'], 3)} ms a frame; libSGM {rnd(r['libsgm_ms'], 3)} ms.")
    for r in proxy[:1]:
        w(f"- The same on the 16-SM Jetson proxy (`compute_87`, {r['date']}, {r['commit']}): "
          f"{rnd(r['project_ms'], 3)} ms; libSGM {rnd(r['libsgm_ms'], 3)} ms.")
    bad2 = sorted({(r["date"], r["commit"], r["accuracy_shared_bad2"]) for r in latest.values()
                   if r["accuracy_shared_bad2"] and (r["cost"] or "rank") == DEFAULT_COST})
    if bad2:
        w(f"- Accuracy of the default settings, whose bits every build above reproduces: mean "
          f"bad-2 {bad2[-1][2]} % over the six shared Middlebury scenes "
          "([results.md](results.md) has every cost and how it is scored).")
    w("")

    w("## Latest run of each configuration")
    w("")
    w("'x' is libSGM's time over the stage's: above 1, the stage is faster.")
    w("")
    w("| SMs | build | size | disparities | paths | cost | stage ms | libSGM ms | x | bytes/voxel "
      "(stage / libSGM) | device | date | commit |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in order:
        r = latest[k]
        ratio = rnd(Decimal(r["libsgm_ms"]) / Decimal(r["project_ms"]), 2) + "x" \
            if r["libsgm_ms"] and r["project_ms"] else ""
        bpv = f"{r['dram_bytes_per_voxel']} / {r['libsgm_dram_bytes_per_voxel'] or '-'}" \
            if r["dram_bytes_per_voxel"] else ""
        w(f"| {r['sms']} | {r['build']} | {r['size']} | {r['disparities']} | {r['paths']} | "
          f"{k[7]} | {rnd(r['project_ms'], 3)} | {rnd(r['libsgm_ms'], 3)} | {ratio} | {bpv} | "
          f"{r['device']} | {r['date']} | {r['commit']} |")
    w("")

    w("## On a Jetson (projected)")
    w("")
    w("No Jetson is measured here: these are projections from the proxy. A frame on an Orin is "
      "taken as the larger of two times: the proxy's time on as many SMs (`compute_87`) scaled "
      f"from the H100's boost clock ({Decimal(H100_CLOCK_MHZ) / 1000} GHz) to the Orin's GPU "
      "clock, and the frame's DRAM bytes over the Orin's memory bandwidth. That assumes the "
      "two overlap perfectly and that the stage has the memory to itself, which it does not "
      "(the CPU and the display share it), so the figures are optimistic. libSGM is projected "
      "the same way.")
    w("")
    sizes = []
    for k in order:
        if latest[k]["dram_bytes_per_voxel"] and k[2] == "compute_87" and k[3:6] not in sizes:
            sizes.append(k[3:6])
    sizes.sort(key=lambda s: (int(s[0].split("x")[0]), s[1], s[2]))
    costs = sorted({k[7] for k in order}, key=lambda c: (c != DEFAULT_COST, c))
    w("| board | cost | " + " | ".join(f"{s} D{dd} {pp} paths" for s, dd, pp in sizes) + " |")
    w("|---|---|" + "---|" * len(sizes))
    ratios = []
    for (name, sms, clock, gbps), cost in ((o, c) for o in ORINS for c in costs):
        cells = []
        for s in sizes:
            # the newest run of that configuration, whichever device ran it
            r = max((latest[k] for k in order if k[1] == sms and k[2] == "compute_87"
                     and k[3:6] == s and k[7] == cost), key=lambda r: r["date"], default=None)
            t = project(r, clock, gbps, "project_ms", "dram_bytes_per_voxel") if r else None
            if not t:
                cells.append("")
                continue
            ms, bound = t
            fps = rnd(1000 / ms, 0)
            cells.append(f"~{fps} fps ({rnd(ms, 1)} ms{', ' + bound if bound else ''})")
            lib = project(r, clock, gbps, "libsgm_ms", "libsgm_dram_bytes_per_voxel")
            if lib and cost == DEFAULT_COST:
                ratios.append(lib[0] / ms)
        clk = f"{Decimal(clock) / 1000} GHz" if clock >= 1000 else f"{clock} MHz"
        w(f"| {name} ({sms} SMs, {clk}, {gbps} GB/s) | {cost} | " + " | ".join(cells) + " |")
    w("")
    if ratios:
        w(f"libSGM projected the same way takes {rnd(min(ratios), 1)}-{rnd(max(ratios), 1)}x the "
          f"stage's time per frame with {DEFAULT_COST} at these sizes.")
        w("")
    band_section(all_latest, w)
    loaded_section(w)
    return "\n".join(wrap(line) for line in out).rstrip("\n") + "\n"


def wrap(line):
    """A paragraph or list item wrapped at 100 columns; tables, headings and comments as they are."""
    if not line or line.startswith(("|", "#", "<!--")):
        return line
    indent = "  " if line.startswith("- ") else ""
    return textwrap.fill(line, 100, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False)


def main():
    text = page()
    if "--stdout" in sys.argv[1:]:
        sys.stdout.write(text)
        return 0
    if "--check" in sys.argv[1:]:
        try:
            with open(PAGE) as f:
                old = f.read()
        except OSError:
            old = None
        if old != text:
            print(f"{os.path.relpath(PAGE)} is not what {os.path.relpath(CSV)} gives: "
                  "run tools/gen-results.py", file=sys.stderr)
            return 1
        return 0
    with open(PAGE, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
