#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""depth_plot.py — a stereo pair to a figure: the left image, its disparity and, given the
focal length and baseline (or a calibration), its depth.

    PYTHONPATH=python python3 python/examples/depth_plot.py left.png right.png plot.png \
        -d 64 --focal 700 --baseline 0.12

Any stereo-match matching option may follow as --name value (e.g. --cost census, --paths 4;
flags as --no-lr). Needs numpy, OpenCV (reading the images) and matplotlib.
"""
import argparse
import os
import sys
import tempfile

import cv2
import matplotlib

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import stereodepth  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("left")
    ap.add_argument("right")
    ap.add_argument("output", help="the figure, .png")
    ap.add_argument("-d", "--disparities", type=int, default=64)
    ap.add_argument("--focal", type=float, help="focal length of the rectified images, px")
    ap.add_argument("--baseline", type=float, help="baseline (the depth comes in its unit)")
    ap.add_argument("--calibration", help="a calibration YAML instead of --focal/--baseline")
    args, extra = ap.parse_known_args()
    prog = os.path.basename(sys.argv[0])
    options = {}
    while extra:   # stereo-match's options: --name value, or a flag --no-...
        name = extra.pop(0)
        if not name.startswith("--"):
            ap.error(f"unexpected argument '{name}'")
        key = name[2:].replace("-", "_")
        options[key] = True if key.startswith("no_") else (extra.pop(0) if extra else None)
    images = []
    for path in (args.left, args.right):
        if not os.path.isfile(path):
            print(f"{prog}: {path}: no such file", file=sys.stderr)
            return 1
        im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if im is None or im.dtype != np.uint8:
            print(f"{prog}: {path}: cannot read an 8-bit image", file=sys.stderr)
            return 1
        images.append(im[:, :, :3] if im.ndim == 3 else im)
    try:
        disp = stereodepth.match(images[0], images[1], disparities=args.disparities, **options)
        depth = None
        if args.calibration:
            depth = stereodepth.depth(disp, calibration=args.calibration)
        elif args.focal is not None or args.baseline is not None:
            depth = stereodepth.depth(disp, args.focal, args.baseline)
    except (ValueError, RuntimeError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2 if isinstance(e, ValueError) else 1

    panels = 3 if depth is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4.2), constrained_layout=True)
    left = images[0]
    axes[0].imshow(left[:, :, ::-1] if left.ndim == 3 else left, cmap="gray")
    axes[0].set_title("left")
    shown = axes[1].imshow(np.ma.masked_invalid(disp), cmap="turbo")
    axes[1].set_title(f"disparity (px), {np.isfinite(disp).mean():.0%} valid")
    fig.colorbar(shown, ax=axes[1], shrink=0.8)
    if depth is not None:
        finite = depth[np.isfinite(depth)]
        hi = np.percentile(finite, 95) if finite.size else 1.0
        shown = axes[2].imshow(np.ma.masked_invalid(depth), cmap="turbo_r", vmin=0, vmax=hi)
        axes[2].set_title("depth Z = f B / d (the baseline's unit)")
        fig.colorbar(shown, ax=axes[2], shrink=0.8)
    for ax in axes:
        ax.set_axis_off()
    # written beside the output and renamed into place: never a half-written figure
    folder = os.path.dirname(os.path.abspath(args.output))
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=folder)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=100)
        # mkstemp makes the file 0600: give the figure the mode a new file gets (0666 less
        # the umask), as the C programs' outputs have
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, args.output)
    except OSError as e:
        os.unlink(tmp)
        print(f"{prog}: {args.output}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
