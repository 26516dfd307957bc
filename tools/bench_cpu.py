#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""CPU benchmark: our CPU reference backend beside OpenCV StereoSGBM (MODE_HH) on the shared scenes.

    tools/bench_cpu.py [--repeat N] [--threads N] [--out docs/results-cpu.md]

Times are medians of N runs of the matching call alone (ours: stereo-match --repeat N, which
reports the median of stereo_process; OpenCV: StereoSGBM.compute in Python), same images, same
number of disparities, on this machine. Also records bad-2 of each (as in tests/test_accuracy.py).
Writes a Markdown table with device, date and commit when --out is given.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import middlebury as mb  # noqa: E402


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="our worker threads (0 = all cores)")
    ap.add_argument("--out")
    args = ap.parse_args()
    if not mb.data_available():
        sys.exit(f"bench_cpu: no stereo data at {mb.DATA} (set STEREO_DATA)")
    import cv2
    rows = []
    with mb.tempdir() as tmp:
        for scene in mb.SCENES:
            ours_path = os.path.join(tmp, "ours.pfm")
            cv_path = os.path.join(tmp, "cv.pfm")
            ours_ms = mb.run_ours(scene, ours_path,
                                  ["--repeat", str(args.repeat), "--threads", str(args.threads)])
            cv_ms = mb.run_opencv(scene, cv_path, repeat=args.repeat)
            rows.append((scene, ours_ms, cv_ms, mb.evaluate(scene, ours_path)["bad2"],
                         mb.evaluate(scene, cv_path)["bad2"]))
            print(f"{scene[0]:8s} ours {ours_ms:8.1f} ms  opencv {cv_ms:8.1f} ms", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "diff", "--quiet"]).returncode != 0
    head = (f"CPU: {cpu_name()}, {os.cpu_count()} cores; OpenCV {cv2.__version__} "
            f"(cv2.getNumThreads() = {cv2.getNumThreads()}); date "
            f"{datetime.date.today().isoformat()}; commit {commit}{' + uncommitted changes' if dirty else ''}")
    lines = [head, "",
             "| scene | size | D | ours (rank, 8 paths, LR, median, subpixel) ms | OpenCV SGBM MODE_HH ms "
             "| ours bad-2 % | OpenCV bad-2 % |",
             "|---|---|---|---|---|---|---|"]
    for scene, ours, cv, b_ours, b_cv in rows:
        im = cv2.imread(mb.scene_path(scene, scene[2]), cv2.IMREAD_UNCHANGED)
        lines.append(f"| {scene[0]} | {im.shape[1]}x{im.shape[0]} | {scene[7]} | {ours:.1f} | "
                     f"{cv:.1f} | {b_ours:.2f} | {b_cv:.2f} |")
    n = len(rows)
    lines.append(f"| **mean** | | | {sum(r[1] for r in rows) / n:.1f} | {sum(r[2] for r in rows) / n:.1f} | "
                 f"{sum(r[3] for r in rows) / n:.2f} | {sum(r[4] for r in rows) / n:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write("# CPU backend beside OpenCV StereoSGBM\n\nWritten by `tools/bench_cpu.py`. "
                    "Times are the median of the matching call alone.\n\n" + text)


if __name__ == "__main__":
    main()
