#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Leave-one-scene-out choice of a setting: which candidate would have been picked without each
scene, and how it then does on that scene.

    tools/loso.py [--family cost|rank-penalties|census-penalties|weights|band] [--generated-only]
                  [--generated N] [--json FILE]

Every candidate (a set of stereo-match options) is scored (bad-2 %, non-occluded pixels, invalid
pixels filled as the KITTI devkit does: stereo-eval) on every scene: the six shared Middlebury
scenes (tests/middlebury.py; STEREO_DATA) and N generated scenes with exact ground truth
(stereo-synth, different seeds, times and sizes). Then, for each scene in turn, the candidate
with the lowest mean bad-2 over the other scenes is chosen and scored on the left-out scene.
The table gives, per left-out scene, the chosen candidate, its bad-2 there and the best any
candidate reaches there; the summary gives the in-sample figure (the candidate best on all
scenes, its mean) beside the left-out mean (each scene scored by the choice made without it),
which is what a setting chosen this way should be expected to reach on a scene nobody tuned for.
Needs build/stereo-match, build/stereo-eval and build/stereo-synth (CPU backend).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import middlebury as mb  # noqa: E402

FAMILIES = {
    # every cost at its own default penalties (stereo_default_penalties)
    "cost": [(c, ["--cost", c]) for c in ("rank", "census", "ad", "bt", "mi")],
    "rank-penalties": [(f"rank P1 {p1} P2 {p2}", ["--p1", str(p1), "--p2", str(p2)])
                       for p1 in (12, 24, 36) for p2 in (64, 128, 192)],
    "census-penalties": [(f"census P1 {p1} P2 {p2}",
                          ["--cost", "census", "--p1", str(p1), "--p2", str(p2)])
                         for p1 in (8, 16, 24) for p2 in (64, 96, 144)],
    "weights": [(f"{c} weights {w}", ["--cost", c, "--path-weights", w])
                for c in ("rank", "census") for w in ("1,1,1,1,1,1,1,1", "2,2,2,2,1,1,1,1",
                                                      "3,3,3,3,1,1,1,1")],
    # the coarse-to-fine mode against the full search (band.h), at 128 disparities or more
    "band": [("full range", []), ("band 32", ["--band", "32"]), ("band 64", ["--band", "64"])],
}
# the least number of disparities a family searches (the scene's own when larger)
FAMILY_D_FLOOR = {"band": 128}

# name, stereo-synth options, stereo-match -d (the scene's disparities are below it)
GENERATED = [
    ("generated-a", ["--size", "480x360", "--seed", "3"], 48),
    ("generated-b", ["--size", "400x300", "--seed", "11", "--t", "0.7"], 48),
    ("generated-c", ["--size", "560x320", "--seed", "23", "--t", "2.1", "--max-disp", "60"], 64),
    ("generated-d", ["--size", "320x240", "--seed", "5", "--t", "3.3"], 32),
]


def synth_scenes(tmp, count):
    """The generated scenes as (name, left, right, gt, eval options, D)."""
    scenes = []
    for name, opts, d in GENERATED[:count]:
        out = os.path.join(tmp, name)
        subprocess.run([os.path.join(mb.BUILD, "stereo-synth"), *opts, out], check=True,
                       capture_output=True)
        scenes.append((name, os.path.join(out, "left.png"), os.path.join(out, "right.png"),
                       os.path.join(out, "disp_left.pfm"),
                       ["--mask", os.path.join(out, "nonocc.png")], d))
    return scenes


def shared_scenes():
    out = []
    for s in mb.SCENES:
        opts = []
        it = iter(s[6])
        for flag in it:
            opts += [flag, mb.scene_path(s, next(it))]
        gt = mb.scene_path(s, s[4])
        if not gt.endswith(".pfm"):
            opts += ["--gt-scale", str(s[5])]
        out.append((s[0], mb.scene_path(s, s[2]), mb.scene_path(s, s[3]), gt, opts, s[7]))
    return out


def bad2(scene, extra, path, d_floor=0):
    name, left, right, gt, eval_opts, d = scene
    d = max(d, d_floor)
    subprocess.run([os.path.join(mb.BUILD, "stereo-match"), "-q", "-d", str(d), "--backend",
                    "cpu", *extra, left, right, path], check=True, capture_output=True)
    r = subprocess.run([os.path.join(mb.BUILD, "stereo-eval"), "--json", *eval_opts, path, gt],
                       check=True, capture_output=True, text=True)
    return float(json.loads(r.stdout)["bad2"])


def leave_one_out(names, scores):
    """scores[c][s]: bad-2 of candidate c on scene s. Returns (rows, in_sample, left_out):
    rows per left-out scene (scene, chosen candidate, its bad-2 there, the best there)."""
    cands = list(scores)
    mean = lambda c, skip=None: (sum(v for s, v in scores[c].items() if s != skip) /
                                 sum(1 for s in scores[c] if s != skip))
    rows = []
    for s in names:
        chosen = min(cands, key=lambda c: (mean(c, skip=s), cands.index(c)))
        rows.append((s, chosen, scores[chosen][s], min(scores[c][s] for c in cands)))
    best = min(cands, key=lambda c: (mean(c), cands.index(c)))
    return rows, (best, mean(best)), sum(r[2] for r in rows) / len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=sorted(FAMILIES), default="cost")
    ap.add_argument("--generated", type=int, default=len(GENERATED),
                    help=f"generated scenes to add (0..{len(GENERATED)})")
    ap.add_argument("--generated-only", action="store_true",
                    help="leave out the shared Middlebury scenes")
    ap.add_argument("--json", help="write the scores and the table to this file")
    args = ap.parse_args()
    if not 0 <= args.generated <= len(GENERATED):
        ap.error(f"--generated: {args.generated} is outside 0..{len(GENERATED)}")
    scenes = []
    if not args.generated_only:
        if not mb.data_available():
            sys.exit(f"loso: no stereo data at {mb.DATA} (set STEREO_DATA, or --generated-only)")
        scenes += shared_scenes()
    with mb.tempdir() as tmp:
        scenes += synth_scenes(tmp, args.generated)
        if len(scenes) < 2:
            sys.exit("loso: leaving one scene out needs at least two scenes")
        scores = {}
        for label, extra in FAMILIES[args.family]:
            scores[label] = {}
            for sc in scenes:
                scores[label][sc[0]] = bad2(sc, extra, os.path.join(tmp, "d.pfm"),
                                            FAMILY_D_FLOOR.get(args.family, 0))
            print(f"{label:28} mean bad-2 {sum(scores[label].values()) / len(scenes):6.2f} %",
                  flush=True)
    names = [sc[0] for sc in scenes]
    rows, (best, best_mean), left_out = leave_one_out(names, scores)
    print(f"\nleft-out scene  chosen without it              bad-2 there  best any there")
    for s, chosen, got, top in rows:
        print(f"{s:15} {chosen:30} {got:9.2f} %  {top:9.2f} %")
    print(f"\nin-sample: {best} is best on all {len(names)} scenes, mean bad-2 {best_mean:.2f} %")
    print(f"left-out:  mean bad-2 {left_out:.2f} % (each scene scored by the choice made "
          f"without it)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"family": args.family, "scenes": names, "scores": scores,
                       "rows": rows, "in_sample": [best, best_mean], "left_out": left_out},
                      f, indent=1)


if __name__ == "__main__":
    main()
