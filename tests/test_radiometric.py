# SPDX-License-Identifier: Apache-2.0
"""Radiometric differences between the cameras: the right image of each shared Middlebury scene
passed through a gain (x1.3), a gamma (0.8) and a vignette, matched against the unmodified left
image, and scored beside the unmodified pair with the same cost. Prints TAP.

    right' = round(255 * min(1, (1.3 * right / 255) ^ 0.8) * V),  V = 1 - 0.35 (r / r_max)^2

(r: the distance from the image centre, r_max: the half diagonal; the corners keep 65 %).
"global" is the same without the vignette (V = 1): one intensity mapping for the whole image.

Checks (mean bad-2 over the six scenes, MARGIN = 2.5 points):
  - census and rank (local order only) hold up under the full change: within MARGIN of the
    unmodified pairs' mean (measured 2026-11-25: census +0.55, rank +0.64);
  - mi holds up under the global change: within MARGIN (measured +2.15, most of it from the
    gain's clipping of the brightest quarter of the grey levels);
  - ad (absolute difference, from the ad/bt branch) does not hold up: loses more than MARGIN under
    the full change; skipped, with the reason, while build/stereo-match does not know --cost ad.
Reported, not asserted: mi under the full change. The vignette is a gain that varies across the
image, which one global MI table cannot model: measured +16.5 points (4.08 -> 20.55), a known
limitation of a global cost such as MI (local ones such as census see only the order nearby).
Skips visibly when ../shared/data (STEREO_DATA) or python3-opencv is absent.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import middlebury as mb  # noqa: E402

MARGIN = 2.5  # points of mean bad-2
GAIN, GAMMA, VIGNETTE = 1.3, 0.8, 0.35
COSTS = ["census", "rank", "mi", "ad"]
# (cost, change, expectation): "hold" = within MARGIN, "fail" = loses more than MARGIN
CHECKS = [("census", "full", "hold"), ("rank", "full", "hold"), ("mi", "global", "hold"),
          ("ad", "full", "fail")]
REPORTED = [("mi", "full")]


def cost_known(cost):
    r = subprocess.run([os.path.join(mb.BUILD, "stereo-match"), "--cost", cost, "--help"],
                       capture_output=True, text=True)
    return r.returncode == 0


def distort(src, dst, vignette):
    import cv2
    import numpy as np
    im = cv2.imread(src, cv2.IMREAD_UNCHANGED).astype(np.float64)
    h, w = im.shape[:2]
    y, x = np.mgrid[0:h, 0:w]
    r2 = ((x - (w - 1) / 2) ** 2 + (y - (h - 1) / 2) ** 2) / (((w - 1) / 2) ** 2 + ((h - 1) / 2) ** 2)
    v = 1 - vignette * r2
    if im.ndim == 3:
        v = v[:, :, None]
    out = 255 * np.minimum(1, (GAIN * im / 255) ** GAMMA) * v
    cv2.imwrite(dst, np.clip(np.round(out), 0, 255).astype(np.uint8))


def main():
    n_tests = len(CHECKS)
    print(f"1..{n_tests}")
    if not mb.data_available():
        for i in range(1, n_tests + 1):
            print(f"ok {i} # SKIP stereo data not found at {mb.DATA} (set STEREO_DATA)")
        return 0
    try:
        import cv2  # noqa: F401
    except ImportError:
        for i in range(1, n_tests + 1):
            print(f"ok {i} # SKIP python3-opencv is not installed (run ./setup.sh)")
        return 0
    known = {c: cost_known(c) for c in COSTS}
    shown = [c for c in COSTS if known[c]]
    bad = {}
    with mb.tempdir() as tmp:
        for scene in mb.SCENES:
            name = scene[0]
            rights = {"plain": mb.scene_path(scene, scene[3])}
            for change, vig in (("global", 0.0), ("full", VIGNETTE)):
                rights[change] = os.path.join(tmp, f"{name}-right-{change}.png")
                distort(rights["plain"], rights[change], vig)
            for cost in shown:
                for change, rpath in rights.items():
                    out = os.path.join(tmp, f"{name}-{cost}-{change}.pfm")
                    cmd = [os.path.join(mb.BUILD, "stereo-match"), "-d", str(scene[7]),
                           "--backend", "cpu", "--cost", cost, "-q",
                           mb.scene_path(scene, scene[2]), rpath, out]
                    subprocess.run(cmd, check=True)
                    bad[(cost, change, name)] = mb.evaluate(scene, out)["bad2"]
    print(f"# bad-2 % (non-occluded): unmodified / global (x{GAIN} gain, gamma {GAMMA}) / full "
          f"(+ vignette {VIGNETTE})")
    print("# %-10s" % "scene" + "".join("%24s" % c for c in shown))
    cell = "%6.2f / %6.2f / %6.2f"
    for scene in mb.SCENES:
        print("# %-10s" % scene[0] + "".join(
            "%24s" % (cell % tuple(bad[(c, k, scene[0])] for k in ("plain", "global", "full")))
            for c in shown))
    mean = {(c, k): sum(bad[(c, k, s[0])] for s in mb.SCENES) / len(mb.SCENES)
            for c in shown for k in ("plain", "global", "full")}
    print("# %-10s" % "mean" + "".join(
        "%24s" % (cell % tuple(mean[(c, k)] for k in ("plain", "global", "full"))) for c in shown))
    for c, change in REPORTED:
        if known[c]:
            a, b = mean[(c, "plain")], mean[(c, change)]
            print(f"# reported: {c} under the {change} change {a:.2f} -> {b:.2f} ({b - a:+.2f}); "
                  f"one global table cannot model the vignette (see the top of this file)")
    for i, (c, change, expect) in enumerate(CHECKS, 1):
        if not known[c]:
            print(f"ok {i} # SKIP cost {c} is not in this build of stereo-match (the ad/bt "
                  f"branch adds it; this test then requires it to lose more than {MARGIN} points)")
            continue
        a, b = mean[(c, "plain")], mean[(c, change)]
        if expect == "hold":
            ok, what = b <= a + MARGIN, f"holds up under the {change} change (within {MARGIN})"
        else:
            ok, what = b > a + MARGIN, (f"does not hold up under the {change} change (loses "
                                        f"more than {MARGIN})")
        print(f"{'ok' if ok else 'not ok'} {i} - {c} {what}: mean bad-2 {a:.2f} -> {b:.2f} "
              f"({b - a:+.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
