#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""CPU benchmark: our CPU backend beside OpenCV StereoSGBM, speed and accuracy.

    tools/bench_cpu.py [--rounds N] [--repeat N] [--threads N] [--out docs/results-cpu.md]
                       [--only speed|scenes]

speed: at 640x480 (a generated pair) and 900x750 (TeddyH, conesH) with D = 128, ours through
the Python module (build/libstereodepth.so, the library stereo-match uses) with 8 and 4 paths
(the default cost, adcensus, and the default options otherwise: LR check, median, subpixel,
speckle removal), the
8 paths once more with the plain-C reference kernels (STEREO_CPU_KERNELS=reference), and rank
with 8 and 4 paths, beside OpenCV's MODE_SGBM, MODE_HH and
MODE_SGBM_3WAY, all in this one process on the same arrays: each round runs every method
once, in a rotating order, and the table gives each method's median over the rounds of the
matching call alone (its input and output conversions included), and ours against 3WAY.

scenes: the six shared Middlebury scenes at their own D, ours (stereo-match --repeat N, the
median of stereo_process) beside OpenCV MODE_HH, with bad-2 of each (as tests/test_accuracy.py).

--out replaces this tool's sections of the Markdown file (between its <!-- bench_cpu.py ... -->
markers), with the device, the load, the date and the commit.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import middlebury as mb  # noqa: E402

D = 128


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def opencv_matcher(mode):
    import cv2
    return cv2.StereoSGBM_create(
        minDisparity=0, numDisparities=D, blockSize=5, P1=8 * 25, P2=32 * 25, disp12MaxDiff=1,
        preFilterCap=63, uniquenessRatio=10, speckleWindowSize=100, speckleRange=32,
        mode=mode)


def speed_pairs(tmp):
    """(name, left, right) grey arrays: a generated 640x480 pair, TeddyH and conesH."""
    import cv2
    gen = os.path.join(tmp, "gen")
    subprocess.run([os.path.join(mb.BUILD, "stereo-synth"), "--size", "640x480", "--max-disp",
                    "120", gen], check=True, capture_output=True)
    pairs = [("generated", cv2.imread(os.path.join(gen, "left.png"), cv2.IMREAD_GRAYSCALE),
              cv2.imread(os.path.join(gen, "right.png"), cv2.IMREAD_GRAYSCALE))]
    for scene in mb.SCENES:
        if scene[0] in ("TeddyH", "conesH") and os.path.isfile(mb.scene_path(scene, scene[2])):
            pairs.append((scene[0], cv2.imread(mb.scene_path(scene, scene[2]), cv2.IMREAD_GRAYSCALE),
                          cv2.imread(mb.scene_path(scene, scene[3]), cv2.IMREAD_GRAYSCALE)))
    return pairs


def speed(rounds, threads):
    """Rows of (pair name, size, {method: median ms})."""
    import cv2
    import stereodepth
    methods = ["ours 8 paths", "ours 4 paths", "ours 8 paths, reference kernels",
               "ours rank 8 paths", "ours rank 4 paths",
               "OpenCV SGBM", "OpenCV HH", "OpenCV SGBM_3WAY"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cpu-") as tmp:
        for name, left, right in speed_pairs(tmp):
            h, w = left.shape
            run = {}
            for paths, label, kernels, cost in ((8, methods[0], "auto", {}),
                                                (4, methods[1], "auto", {}),
                                                (8, methods[2], "reference", {}),
                                                (8, methods[3], "auto", {"cost": "rank"}),
                                                (4, methods[4], "auto", {"cost": "rank"})):
                os.environ["STEREO_CPU_KERNELS"] = kernels  # read when the stage is created
                m = stereodepth.Matcher(w, h, disparities=D, paths=paths, backend="cpu",
                                        threads=threads, **cost)
                run[label] = (lambda m=m: m.compute(left, right))
            os.environ.pop("STEREO_CPU_KERNELS")
            for label, mode in ((methods[5], cv2.STEREO_SGBM_MODE_SGBM),
                                (methods[6], cv2.STEREO_SGBM_MODE_HH),
                                (methods[7], cv2.STEREO_SGBM_MODE_SGBM_3WAY)):
                sgbm = opencv_matcher(mode)
                run[label] = (lambda s=sgbm: s.compute(left, right))
            times = {k: [] for k in methods}
            for k in methods:  # one warm-up each: first-touch page faults
                run[k]()
            for r in range(rounds):
                order = methods[r % len(methods):] + methods[:r % len(methods)]
                for k in order:
                    t0 = time.perf_counter()
                    run[k]()
                    times[k].append((time.perf_counter() - t0) * 1e3)
            med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
            rows.append((name, f"{w}x{h}", med))
            print(f"{name:10s} " + "  ".join(f"{k}: {v:.1f}" for k, v in med.items()), flush=True)
    return methods, rows


def speed_table(methods, rows):
    head = ("| pair | size | " + " | ".join(m + " ms" for m in methods) +
            " | 8 paths / 3WAY | 4 paths / 3WAY |")
    lines = [head, "|" + "---|" * (len(methods) + 4)]
    for name, size, med in rows:
        w3 = med["OpenCV SGBM_3WAY"]
        lines.append(f"| {name} | {size} | " + " | ".join(f"{med[m]:.1f}" for m in methods) +
                     f" | {med['ours 8 paths'] / w3:.2f} | {med['ours 4 paths'] / w3:.2f} |")
    return lines


def scenes(repeat, threads):
    import cv2
    rows = []
    with mb.tempdir() as tmp:
        for scene in mb.SCENES:
            ours_path = os.path.join(tmp, "ours.pfm")
            cv_path = os.path.join(tmp, "cv.pfm")
            ours_ms = mb.run_ours(scene, ours_path, ["--repeat", str(repeat), "--threads",
                                                     str(threads)])
            cv_ms = mb.run_opencv(scene, cv_path, repeat=repeat)
            im = cv2.imread(mb.scene_path(scene, scene[2]), cv2.IMREAD_UNCHANGED)
            rows.append((scene, f"{im.shape[1]}x{im.shape[0]}", ours_ms, cv_ms,
                         mb.evaluate(scene, ours_path)["bad2"], mb.evaluate(scene, cv_path)["bad2"]))
            print(f"{scene[0]:8s} ours {ours_ms:8.1f} ms  opencv {cv_ms:8.1f} ms", flush=True)
    lines = ["| scene | size | D | ours (default: adcensus, 4 paths, LR, median, subpixel, speckle removal) ms | OpenCV SGBM "
             "MODE_HH ms | ours bad-2 % | OpenCV bad-2 % |", "|---|---|---|---|---|---|---|"]
    for scene, size, ours, cv, b_ours, b_cv in rows:
        lines.append(f"| {scene[0]} | {size} | {scene[7]} | {ours:.1f} | {cv:.1f} | {b_ours:.2f} "
                     f"| {b_cv:.2f} |")
    n = len(rows)
    lines.append(f"| **mean** | | | {sum(r[2] for r in rows) / n:.1f} | "
                 f"{sum(r[3] for r in rows) / n:.1f} | {sum(r[4] for r in rows) / n:.2f} | "
                 f"{sum(r[5] for r in rows) / n:.2f} |")
    return lines


def replace_section(path, name, text):
    """Replaces the text between <!-- bench_cpu.py NAME --> and <!-- bench_cpu.py end --> (the
    section must exist: its place in the page is the page's choice)."""
    start, end = f"<!-- bench_cpu.py {name} -->", "<!-- bench_cpu.py end -->"
    page = open(path).read()
    i = page.find(start)
    j = page.find(end, i)
    if i < 0 or j < 0:
        sys.exit(f"bench_cpu: {path} has no '{start}' ... '{end}' section")
    with open(path, "w") as f:
        f.write(page[:i + len(start)] + "\n" + text + page[j:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="speed: rounds of every method")
    ap.add_argument("--repeat", type=int, default=5, help="scenes: runs of each")
    ap.add_argument("--threads", type=int, default=0, help="our worker threads (0 = all cores)")
    ap.add_argument("--only", choices=("speed", "scenes"))
    ap.add_argument("--out")
    args = ap.parse_args()
    if not mb.data_available():
        sys.exit(f"bench_cpu: no stereo data at {mb.DATA} (set STEREO_DATA)")
    import cv2
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "diff", "--quiet"]).returncode != 0
    load0 = os.getloadavg()[0]
    sections = {}
    if args.only != "scenes":
        methods, rows = speed(args.rounds, args.threads)
        sections["speed"] = speed_table(methods, rows)
    if args.only != "speed":
        sections["scenes"] = scenes(args.repeat, args.threads)
    head = (f"CPU: {cpu_name()}, {os.cpu_count()} cores; OpenCV {cv2.__version__} "
            f"(cv2.getNumThreads() = {cv2.getNumThreads()}); load average {load0:.1f} before, "
            f"{os.getloadavg()[0]:.1f} after; date {datetime.date.today().isoformat()}; "
            f"commit {commit}{' + uncommitted changes' if dirty else ''}; "
            f"`tools/bench_cpu.py {' '.join(sys.argv[1:])}`")
    for name, lines in sections.items():
        text = "\n".join([head, ""] + lines) + "\n"
        print(text)
        if args.out:
            replace_section(args.out, name, text)


if __name__ == "__main__":
    main()
