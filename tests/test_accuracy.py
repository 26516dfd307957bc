# SPDX-License-Identifier: Apache-2.0
"""Accuracy on the shared Middlebury scenes, side by side with OpenCV StereoSGBM (MODE_HH) in the
same run. Prints TAP. The default configuration (rank 9x9, 8 paths, LR check, median, subpixel)
must reach a mean bad-2 at or below OpenCV's; the census and mi (hierarchical mutual information)
configurations are reported and must stay within 1.5x OpenCV's.
Skips visibly when ../shared/data (STEREO_DATA) is absent.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import middlebury as mb  # noqa: E402

CONFIGS = [("rank (default)", []), ("census", ["--cost", "census"]), ("mi", ["--cost", "mi"])]


def main():
    print("1..4")
    if not mb.data_available():
        for i in range(1, 5):
            print(f"ok {i} # SKIP stereo data not found at {mb.DATA} (set STEREO_DATA)")
        return 0
    try:
        import cv2  # noqa: F401
    except ImportError:
        for i in range(1, 5):
            print(f"ok {i} # SKIP python3-opencv is not installed (run ./setup.sh)")
        return 0
    results = {}
    with mb.tempdir() as tmp:
        for scene in mb.SCENES:
            name = scene[0]
            path = os.path.join(tmp, f"{name}-opencv.pfm")
            mb.run_opencv(scene, path)
            results[("opencv", name)] = mb.evaluate(scene, path)
            for label, extra in CONFIGS:
                path = os.path.join(tmp, f"{name}-{extra and extra[-1]}.pfm")
                mb.run_ours(scene, path, extra)
                results[(label, name)] = mb.evaluate(scene, path)

    methods = ["opencv"] + [c[0] for c in CONFIGS]
    print("# bad-2 % (non-occluded; invalid pixels filled KITTI-style) / density %")
    print("# %-10s" % "scene" + "".join("%22s" % m for m in methods))
    for scene in mb.SCENES:
        row = "".join("%14.2f / %5.1f" % (results[(m, scene[0])]["bad2"],
                                          results[(m, scene[0])]["density"]) for m in methods)
        print("# %-10s" % scene[0] + row)
    mean = {m: sum(results[(m, s[0])]["bad2"] for s in mb.SCENES) / len(mb.SCENES)
            for m in methods}
    print("# %-10s" % "mean" + "".join("%22.2f" % mean[m] for m in methods))

    ours, cv = mean["rank (default)"], mean["opencv"]
    print(f"{'ok' if ours <= cv else 'not ok'} 1 - default rank config mean bad-2 {ours:.2f} "
          f"<= OpenCV StereoSGBM MODE_HH {cv:.2f}")
    # guard against a silent collapse on any single scene (a scene far worse than OpenCV)
    worst = max(results[("rank (default)", s[0])]["bad2"] - results[("opencv", s[0])]["bad2"]
                for s in mb.SCENES)
    print(f"{'ok' if worst <= 5.0 else 'not ok'} 2 - no scene more than 5 points of bad-2 worse "
          f"than OpenCV (worst gap {worst:+.2f})")
    census = mean["census"]
    print(f"{'ok' if census <= cv * 1.5 else 'not ok'} 3 - census config mean bad-2 {census:.2f} "
          f"(reported; must stay within 1.5x OpenCV's {cv:.2f})")
    mi = mean["mi"]
    print(f"{'ok' if mi <= cv * 1.5 else 'not ok'} 4 - mi config mean bad-2 {mi:.2f} "
          f"(reported; must stay within 1.5x OpenCV's {cv:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
