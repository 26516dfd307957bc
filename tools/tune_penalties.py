#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Grid search of the SGM penalties on the shared Middlebury scenes.

    tools/tune_penalties.py [--cost rank|census] [--p1 4,6,8] [--p2 64,96,128] [--p2-adapt 0,16]
                            [--extra "--uniqueness 5"]

Prints, for every combination, the bad-2 of each scene and the mean, sorted by the mean. Use it to
pick defaults on a broad plateau rather than a sharp optimum (the defaults must generalise to
scenes that are not in shared/data). Needs build/stereo-match and build/stereo-eval.
"""
import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import middlebury as mb  # noqa: E402


def ints(s):
    return [int(v) for v in s.split(",") if v]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cost", default="rank")
    ap.add_argument("--p1", type=ints, default=[4, 6, 8, 10, 12])
    ap.add_argument("--p2", type=ints, default=[48, 64, 96, 128, 160])
    ap.add_argument("--p2-adapt", type=ints, default=[0])
    ap.add_argument("--extra", default="")
    args = ap.parse_args()
    if not mb.data_available():
        sys.exit(f"tune_penalties: no stereo data at {mb.DATA} (set STEREO_DATA)")
    rows = []
    with mb.tempdir() as tmp:
        for p1, p2, t in itertools.product(args.p1, args.p2, args.p2_adapt):
            if p2 <= p1:
                continue
            extra = ["--cost", args.cost, "--p1", str(p1), "--p2", str(p2), "--p2-adapt", str(t),
                     *args.extra.split()]
            bad = []
            for scene in mb.SCENES:
                path = os.path.join(tmp, scene[0] + ".pfm")
                mb.run_ours(scene, path, extra)
                bad.append(mb.evaluate(scene, path)["bad2"])
            rows.append((sum(bad) / len(bad), p1, p2, t, bad))
            print(f"p1={p1:3d} p2={p2:4d} adapt={t:3d}: mean {rows[-1][0]:.2f}", flush=True)
    rows.sort()
    print("\n%-22s" % "p1/p2/adapt" + "".join("%9s" % s[0] for s in mb.SCENES) + "     mean")
    for mean, p1, p2, t, bad in rows:
        print("%-22s" % f"{p1}/{p2}/{t}" + "".join("%9.2f" % b for b in bad) + f"  {mean:7.2f}")


if __name__ == "__main__":
    main()
