# SPDX-License-Identifier: Apache-2.0
"""Accuracy on the shared Middlebury scenes, side by side with OpenCV StereoSGBM (MODE_HH) in the
same run. Prints TAP. The default configuration (adcensus: census 9x7 plus the grey difference
after histogram matching, 4 paths, LR check, median, subpixel, speckle removal) must reach a mean bad-2 at or
below OpenCV's; every other cost (rank, census, ad, bt, mi: hierarchical mutual information) and
block matching are scored and reported beside it, each within a bound that catches a broken
stage.

The radiometric test: the right view of each scene with a gain (x1.3), a gamma (0.8) and a
vignette (down to 70 % in the corners), as two cameras with different exposure and lenses would
give ("full"), and the same without the vignette ("global": one intensity mapping for the whole
image). The non-parametric costs (census, rank) and adcensus (whose grey term compares the
views after mapping the right's histogram onto the left's) must hold up under the full change; ad, which
compares grey values, must not (it is what the test is able to tell apart). mi must hold up under
the global change (within 2.5 points: the mi branch measured +2.15, most of it from the gain's
clipping of the brightest grey levels); under the full change it is reported, not asserted: the
vignette is a gain that varies across the image, which one global MI table cannot model (+14.3
points with one table) and the default tables per 5 x 5 tile (gpu/mi.h) follow only in part
(+8.4): they must do better than one table there ("mi 1 table", --mi-tiles 1, is scored beside).
Skips visibly when ../shared/data (STEREO_DATA) is absent.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import middlebury as mb  # noqa: E402

SGM = [("adcensus (default)", []), ("rank", ["--cost", "rank"]),
       ("census", ["--cost", "census"]), ("ad", ["--cost", "ad"]),
       ("bt", ["--cost", "bt"]), ("mi", ["--cost", "mi"]),
       ("mi 1 table", ["--cost", "mi", "--mi-tiles", "1"]),
       ("census w3:1", ["--cost", "census", "--paths", "8", "--path-weights", "3,3,3,3,1,1,1,1"])]
BM = [("bm census", ["--method", "bm", "--cost", "census"]),
      ("bm ad (SAD)", ["--method", "bm", "--cost", "ad"])]
RADIOMETRIC = ["adcensus (default)", "rank", "census", "ad", "bt", "mi",
               "mi 1 table"]  # the full change
RADIOMETRIC_GLOBAL = ["mi"]                                    # under the global change


def radiometric_right(scene, path, vignette=0.3):
    """The right view with gain 1.3, gamma 0.8 and a vignette 1 - vignette r^2 (r = 1 at a
    corner; 0: none)."""
    import cv2
    import numpy as np
    im = cv2.imread(mb.scene_path(scene, scene[3]), cv2.IMREAD_GRAYSCALE).astype(np.float64)
    h, w = im.shape
    y, x = np.mgrid[0:h, 0:w]
    r2 = ((x - (w - 1) / 2) ** 2 + (y - (h - 1) / 2) ** 2) / (((w - 1) / 2) ** 2 + ((h - 1) / 2) ** 2)
    v = 255.0 * np.clip(1.3 * im / 255.0, 0, 1) ** 0.8 * (1 - vignette * r2)
    cv2.imwrite(path, np.clip(np.rint(v), 0, 255).astype(np.uint8))


def run_pair(scene, right, out_path, extra):
    cmd = [os.path.join(mb.BUILD, "stereo-match"), "-d", str(scene[7]), "--backend", "cpu",
           "-q", *extra, mb.scene_path(scene, scene[2]), right, out_path]
    subprocess.run(cmd, capture_output=True, text=True, check=True)


def main():
    ntests = 10
    print(f"1..{ntests}")
    if not mb.data_available():
        for i in range(1, ntests + 1):
            print(f"ok {i} # SKIP stereo data not found at {mb.DATA} (set STEREO_DATA)")
        return 0
    try:
        import cv2  # noqa: F401
    except ImportError:
        for i in range(1, ntests + 1):
            print(f"ok {i} # SKIP python3-opencv is not installed (run ./setup.sh)")
        return 0
    configs = SGM + BM
    results, radio, radio_global = {}, {}, {}
    with mb.tempdir() as tmp:
        for scene in mb.SCENES:
            name = scene[0]
            path = os.path.join(tmp, f"{name}-opencv.pfm")
            mb.run_opencv(scene, path)
            results[("opencv", name)] = mb.evaluate(scene, path)
            for i, (label, extra) in enumerate(configs):
                path = os.path.join(tmp, f"{name}-{i}.pfm")
                mb.run_ours(scene, path, extra)
                results[(label, name)] = mb.evaluate(scene, path)
            right = os.path.join(tmp, f"{name}-right-radiometric.png")
            radiometric_right(scene, right)
            for i, label in enumerate(RADIOMETRIC):
                path = os.path.join(tmp, f"{name}-radio-{i}.pfm")
                run_pair(scene, right, path, dict(configs)[label])
                radio[(label, name)] = mb.evaluate(scene, path)
            right = os.path.join(tmp, f"{name}-right-global.png")
            radiometric_right(scene, right, vignette=0.0)
            for i, label in enumerate(RADIOMETRIC_GLOBAL):
                path = os.path.join(tmp, f"{name}-global-{i}.pfm")
                run_pair(scene, right, path, dict(configs)[label])
                radio_global[(label, name)] = mb.evaluate(scene, path)

    def table(title, res, methods):
        print(f"# {title}")
        print("# %-10s" % "scene" + "".join("%18s" % m for m in methods))
        for scene in mb.SCENES:
            print("# %-10s" % scene[0] + "".join(
                "%10.2f /%5.1f" % (res[(m, scene[0])]["bad2"], res[(m, scene[0])]["density"])
                for m in methods))
        mean = {m: sum(res[(m, s[0])]["bad2"] for s in mb.SCENES) / len(mb.SCENES)
                for m in methods}
        print("# %-10s" % "mean" + "".join("%18.2f" % mean[m] for m in methods))
        return mean

    mean = table("bad-2 % (non-occluded; invalid pixels filled KITTI-style) / density %",
                 results, ["opencv"] + [c[0] for c in configs])
    rmean = table("radiometric right view (gain 1.3, gamma 0.8, vignette): bad-2 % / density %",
                  radio, RADIOMETRIC)
    gmean = table("global change only (gain 1.3, gamma 0.8, no vignette): bad-2 % / density %",
                  radio_global, RADIOMETRIC_GLOBAL)

    ours, cv = mean["adcensus (default)"], mean["opencv"]
    print(f"{'ok' if ours <= cv else 'not ok'} 1 - default (adcensus) mean bad-2 {ours:.2f} "
          f"<= OpenCV StereoSGBM MODE_HH {cv:.2f}")
    # guard against a silent collapse on any single scene (a scene far worse than OpenCV)
    worst = max(results[("adcensus (default)", s[0])]["bad2"] - results[("opencv", s[0])]["bad2"]
                for s in mb.SCENES)
    print(f"{'ok' if worst <= 5.0 else 'not ok'} 2 - no scene more than 5 points of bad-2 worse "
          f"than OpenCV (worst gap {worst:+.2f})")
    census = max(mean["census"], mean["rank"])
    print(f"{'ok' if census <= cv * 1.5 else 'not ok'} 3 - census {mean['census']:.2f} and rank "
          f"{mean['rank']:.2f} mean bad-2 (reported; must stay within 1.5x OpenCV's {cv:.2f})")
    # the grey-value costs and block matching: reported, with a bound that catches a broken
    # stage (a wrong cost or box sum puts bad-2 far beyond these) but not a weaker method
    grey = max(mean["ad"], mean["bt"])
    print(f"{'ok' if grey <= cv * 1.5 else 'not ok'} 4 - ad {mean['ad']:.2f} and bt "
          f"{mean['bt']:.2f} mean bad-2 within 1.5x OpenCV's {cv:.2f}")
    mi = mean["mi"]
    print(f"{'ok' if mi <= cv * 1.5 else 'not ok'} 5 - mi config mean bad-2 {mi:.2f} "
          f"(reported; must stay within 1.5x OpenCV's {cv:.2f})")
    bm = mean["bm census"]
    print(f"{'ok' if bm <= cv * 1.5 and mean['bm ad (SAD)'] <= cv * 3 else 'not ok'} 6 - block "
          f"matching: census {bm:.2f} within 1.5x OpenCV's, SAD {mean['bm ad (SAD)']:.2f} "
          f"within 3x (a local method)")
    # radiometric, full change: adcensus, census and rank within 1.5 points of their own result
    # on the original pair; mi reported (its tables per tile follow the vignette only in part),
    # but better than one table; ad at least 1.5x worse than its own
    holds = {m: rmean[m] - mean[m] for m in ("adcensus (default)", "rank", "census")}
    ok = all(d <= 1.5 for d in holds.values())
    print(f"# reported: mi under the full change {mean['mi']:.2f} -> {rmean['mi']:.2f} "
          f"({rmean['mi'] - mean['mi']:+.2f}); with one table {mean['mi 1 table']:.2f} -> "
          f"{rmean['mi 1 table']:.2f} ({rmean['mi 1 table'] - mean['mi 1 table']:+.2f})")
    print(f"{'ok' if ok else 'not ok'} 7 - radiometric: " + ", ".join(
        f"{m} {rmean[m]:.2f} ({d:+.2f})" for m, d in holds.items()) +
        " within 1.5 points of the original pair")
    # radiometric, global change: mi within 2.5 points of its own result
    d = gmean["mi"] - mean["mi"]
    print(f"{'ok' if d <= 2.5 else 'not ok'} 8 - radiometric, global change (no vignette): mi "
          f"{gmean['mi']:.2f} ({d:+.2f}) within 2.5 points of the original pair")
    ad_ratio = rmean["ad"] / mean["ad"]
    print(f"{'ok' if ad_ratio >= 1.5 else 'not ok'} 9 - radiometric: ad does not hold up: "
          f"{rmean['ad']:.2f} against {mean['ad']:.2f} on the original pair ({ad_ratio:.1f}x; "
          f"bt {rmean['bt']:.2f})")
    print(f"{'ok' if rmean['mi'] < rmean['mi 1 table'] else 'not ok'} 10 - radiometric: mi's "
          f"tables per tile {rmean['mi']:.2f} below one table's {rmean['mi 1 table']:.2f} under "
          f"the vignette")
    return 0


if __name__ == "__main__":
    sys.exit(main())
