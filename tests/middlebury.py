# SPDX-License-Identifier: Apache-2.0
"""Shared Middlebury scene table and runners for the accuracy test and the CPU benchmark.

Each scene: images, ground truth with its scale and the evaluation masks described in
../shared/data/SOURCES.md, and the number of disparities searched (a multiple of 16 above the
largest GT disparity). Ours runs through build/stereo-match, OpenCV's StereoSGBM through Debian's
python3-opencv; both are scored by build/stereo-eval (non-occluded pixels, KITTI-style filling of
invalid pixels).
"""
import os
import re
import subprocess
import tempfile
import time

BUILD = os.environ.get("STEREO_BUILD", "build")
DATA = os.environ.get("STEREO_DATA", "../shared/data")

# name, dir, left, right, gt, gt_scale, eval options, D
SCENES = [
    ("tsukuba", "middlebury2001/tsukuba", "scene1.row3.col3.ppm", "scene1.row3.col4.ppm",
     "truedisp.row3.col3.pgm", 16, [], 16),
    ("venus", "middlebury2001/venus", "im2.ppm", "im6.ppm", "disp2.pgm", 8,
     ["--gt-right", "disp6.pgm"], 32),
    ("teddy", "middlebury2003/teddy", "im2.png", "im6.png", "disp2.png", 4,
     ["--mask", "occl.png"], 64),
    ("cones", "middlebury2003/cones", "im2.png", "im6.png", "disp2.png", 4,
     ["--mask", "occl.png"], 64),
    ("conesH", "middlebury2003/conesH", "im2.png", "im6.png", "disp2.png", 2,
     ["--gt-right", "disp6.png"], 128),
    ("TeddyH", "middlebury2014/TeddyH", "im0.png", "im1.png", "disp0GT.pfm", 1, [], 128),
]


def data_available():
    return all(os.path.isfile(os.path.join(DATA, s[1], s[2])) for s in SCENES)


def scene_path(scene, name):
    return os.path.join(DATA, scene[1], name)


def evaluate(scene, disp_path):
    """Scores a disparity file; returns a dict of bad1, bad2, bad4, avgerr, density, n."""
    opts = []
    it = iter(scene[6])
    for flag in it:
        opts += [flag, scene_path(scene, next(it))]
    gt = scene_path(scene, scene[4])
    if not gt.endswith(".pfm"):
        opts += ["--gt-scale", str(scene[5])]
    out = subprocess.run([os.path.join(BUILD, "stereo-eval"), *opts, disp_path, gt],
                         capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([-\d.]+)", out)}


def run_ours(scene, out_path, extra=()):
    """Runs stereo-match; returns the median stage time in ms reported by it."""
    cmd = [os.path.join(BUILD, "stereo-match"), "-d", str(scene[7]), "--backend", "cpu", *extra,
           scene_path(scene, scene[2]), scene_path(scene, scene[3]), out_path]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r": ([\d.]+) ms", out)
    return float(m.group(1)) if m else float("nan")


def write_pfm(path, disp):
    import numpy as np
    h, w = disp.shape
    with open(path, "wb") as f:
        f.write(b"Pf\n%d %d\n-1\n" % (w, h))
        f.write(np.flipud(disp).astype("<f4").tobytes())


def opencv_sgbm(D, mode_hh=True):
    import cv2
    return cv2.StereoSGBM_create(
        minDisparity=0, numDisparities=D, blockSize=5, P1=8 * 25, P2=32 * 25,
        disp12MaxDiff=1, preFilterCap=63, uniquenessRatio=10, speckleWindowSize=100,
        speckleRange=32, mode=cv2.STEREO_SGBM_MODE_HH if mode_hh else cv2.STEREO_SGBM_MODE_SGBM)


def run_opencv(scene, out_path, repeat=1):
    """OpenCV StereoSGBM MODE_HH with the parameters the issue fixes; returns median ms."""
    import cv2
    import numpy as np
    left = cv2.imread(scene_path(scene, scene[2]), cv2.IMREAD_GRAYSCALE)
    right = cv2.imread(scene_path(scene, scene[3]), cv2.IMREAD_GRAYSCALE)
    sgbm = opencv_sgbm(scene[7])
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        disp = sgbm.compute(left, right)
        times.append((time.perf_counter() - t0) * 1e3)
    d = disp.astype(np.float32) / 16.0
    d[disp < 0] = np.inf  # invalid = (minDisparity - 1) * 16
    write_pfm(out_path, d)
    times.sort()
    return times[len(times) // 2]


def tempdir():
    return tempfile.TemporaryDirectory(prefix="stereo-test-")
