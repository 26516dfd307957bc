#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Does the confidence map rank the errors? Bad-2 of the most confident pixels, per scene kind,
and a fixed confidence threshold chosen leaving one kind out.

    tools/conf_eval.py [--coverage 50,80,95,100] [--target-bad2 1,0.5] [--kinds K,K,...]
                       [--json FILE] [-- OPTIONS]

Every scene of tools/loso.py (the six shared Middlebury scenes, their re-exposed copies, the
generated scenes and the harder generated ones) is matched by stereo-match with --confidence
(CPU backend, the default configuration, or the stereo-match OPTIONS after "--"), and scored by
stereo-eval --confidence: bad-2 (|d - gt| > 2 px, non-occluded pixels as tools/loso.py scores
them) over the C % most confident of the evaluated pixels the matcher keeps, for each coverage
C; 100 % is every pixel it keeps (stereo-eval's bad2_valid).

Scenes are grouped by kind (KINDS); the table gives each kind's mean over its scenes. Then the
leave-one-kind-out rows: for each kind and each coverage C < 100, the threshold T (keep the
pixels with confidence >= T) is chosen on the other kinds' scenes, the largest T whose mean
coverage there is at least C %, and applied to the left-out kind: its coverage and bad-2 there
say what a fixed threshold, chosen without that kind of scene, does on it. The same for each
bad-2 target B of --target-bad2: the smallest T whose mean bad-2 over the other kinds' scenes is
at most B %. A kind is left out with every scene made from the same images (a re-exposed copy
and its original).
Needs build/stereo-match, build/stereo-eval, build/stereo-synth, NumPy and OpenCV's Python
module (the re-exposed copies), and the shared data (STEREO_DATA, tests/middlebury.py).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import loso  # noqa: E402
import middlebury as mb  # noqa: E402

# kind, its scenes (tools/loso.py's names)
KINDS = [
    ("Middlebury 2001 (planar, piecewise planar)", ["tsukuba", "venus"]),
    ("Middlebury 2003 (cones, teddy)", ["teddy", "cones", "conesH"]),
    ("Middlebury 2014 (indoor, cluttered)", ["TeddyH"]),
    ("Middlebury re-exposed (gain, gamma, vignette, noise)",
     ["x-tsukuba", "x-venus", "x-teddy", "x-cones", "x-conesH", "x-TeddyH"]),
    ("generated objects", ["generated-a", "generated-b", "generated-c", "generated-d"]),
    ("generated street (road plane, sky, facades)",
     ["street-vig-gain", "street-gamma", "street-dark-vig"]),
    ("generated weak texture", ["weak-noise", "weak-vig-gain", "weak-gamma"]),
]


def score(scene, extra, tmp):
    """stereo-eval's JSON of the scene matched with --confidence."""
    name, left, right, gt, eval_opts, d = scene
    disp, conf = os.path.join(tmp, "d.pfm"), os.path.join(tmp, "c.png")
    subprocess.run([os.path.join(mb.BUILD, "stereo-match"), "-q", "-d", str(d), "--backend",
                    "cpu", *extra, "--confidence", conf, left, right, disp], check=True,
                   capture_output=True)
    r = subprocess.run([os.path.join(mb.BUILD, "stereo-eval"), "--json", *eval_opts,
                        "--confidence", conf, disp, gt], check=True, capture_output=True,
                       text=True)
    return json.loads(r.stdout)


def at_coverage(r, cov):
    """Bad-2 % of the cov % most confident valid pixels (stereo-eval's figure)."""
    return next(c["bad2"] for c in r["coverage"] if abs(c["coverage"] - cov) < 1e-9)


def at_threshold(r, t):
    """(coverage % of the valid pixels, bad-2 % of those kept, density % of the evaluated
    pixels) when the pixels with confidence >= t are kept."""
    valid = sum(r["conf_valid"])
    kept, bad = sum(r["conf_valid"][t:]), sum(r["conf_bad2"][t:])
    return (100.0 * kept / valid if valid else 0.0, 100.0 * bad / kept if kept else 0.0,
            100.0 * kept / r["n"])


def mean(v):
    v = list(v)
    return sum(v) / len(v)


def leave_kind_out(results, kinds, cov=None, bad2=None):
    """Per kind: (T chosen without it, coverage there, bad-2 there, density there); T the
    largest with a mean coverage of at least cov % over the other kinds, or the smallest with a
    mean bad-2 of at most bad2 % there (255 when none reaches it)."""
    rows = []
    for kind, scenes in kinds:
        related = {loso.scene_of(s) for s in scenes}
        others = [s for s in results if loso.scene_of(s) not in related]
        if cov is not None:
            t = max((t for t in range(256)
                     if mean(at_threshold(results[s], t)[0] for s in others) >= cov), default=0)
        else:
            t = min((t for t in range(256)
                     if mean(at_threshold(results[s], t)[1] for s in others) <= bad2),
                    default=255)
        got = [at_threshold(results[s], t) for s in scenes]
        rows.append((kind, t, mean(g[0] for g in got), mean(g[1] for g in got),
                     mean(g[2] for g in got)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coverage", default="50,80,95,100",
                    help="percentages of the kept pixels to score, most confident first")
    ap.add_argument("--target-bad2", default="1,0.5",
                    help="bad-2 targets (percent) for the threshold chosen leaving a kind out")
    ap.add_argument("--kinds", help="only these kinds (their numbers in KINDS, 1-based: 1,2,5)")
    ap.add_argument("--json", help="write every scene's figures and the tables to this file")
    ap.add_argument("options", nargs="*", help="stereo-match options (after --)")
    args = ap.parse_args()
    try:
        covs = [float(c) for c in args.coverage.split(",")]
    except ValueError:
        ap.error(f"--coverage: {args.coverage!r} is not comma-separated percentages")
    if not covs or any(not 0 < c <= 100 for c in covs):
        ap.error("--coverage: each value in 0 < C <= 100")
    try:
        targets = [float(b) for b in args.target_bad2.split(",")] if args.target_bad2 else []
    except ValueError:
        ap.error(f"--target-bad2: {args.target_bad2!r} is not comma-separated percentages")
    if any(not 0 <= b <= 100 for b in targets):
        ap.error("--target-bad2: each value in 0..100")
    kinds = KINDS
    if args.kinds:
        try:
            kinds = [KINDS[int(k) - 1] for k in args.kinds.split(",")]
        except (ValueError, IndexError):
            ap.error(f"--kinds: numbers 1..{len(KINDS)}, comma-separated")
    names = {s for _, ss in kinds for s in ss}
    if not mb.data_available():
        sys.exit(f"conf_eval: no stereo data at {mb.DATA} (set STEREO_DATA)")
    results = {}
    with mb.tempdir() as tmp:
        shared = loso.shared_scenes()
        scenes = shared
        if any(n.startswith("x-") for n in names):
            scenes = scenes + loso.exposed_scenes(tmp, shared)
        scenes += loso.synth_scenes(tmp, len(loso.GENERATED))
        scenes += loso.synth_scenes(tmp, len(loso.HARD), loso.HARD)
        for sc in scenes:
            if sc[0] not in names:
                continue
            results[sc[0]] = score(sc, args.options, tmp)
            r = results[sc[0]]
            figs = "  ".join(f"{c:g}%: {at_coverage(r, c):5.2f}" for c in covs)
            print(f"{sc[0]:16} bad-2 {r['bad2']:5.2f} (filled)  density {r['density']:6.2f}  "
                  f"{figs}", flush=True)
    cols = "".join(f"{f'{c:g} %':>8}" for c in covs)
    print(f"\n{'kind (scenes)':58} {'filled':>7} {'density':>7}{cols}")
    table = []
    groups = [(kind, scenes) for kind, scenes in kinds] + [("all", list(results))]
    for kind, scenes in groups:
        rs = [results[s] for s in scenes]
        figs = [mean(at_coverage(r, c) for r in rs) for c in covs]
        dens, filled = mean(r["density"] for r in rs), mean(r["bad2"] for r in rs)
        table.append((kind, len(scenes), filled, dens, figs))
        print(f"{kind + f' ({len(scenes)})':58} {filled:7.2f} {dens:7.2f}" +
              "".join(f"{b:8.2f}" for b in figs))
    lko = {}
    rules = [(f"coverage {c:g}", f"T for {c:g} % of the kept pixels", {"cov": c})
             for c in covs if c < 100]
    rules += [(f"bad2 {b:g}", f"T for a bad-2 of {b:g} %", {"bad2": b}) for b in targets]
    for key, title, kw in rules:
        lko[key] = leave_kind_out(results, kinds, **kw)
        print(f"\n{title}, chosen without the kind:")
        print(f"{'left-out kind':58} {'T':>4} {'coverage %':>11} {'bad-2 %':>8} "
              f"{'density %':>10}")
        for kind, t, cv, b, dn in lko[key]:
            print(f"{kind:58} {t:4d} {cv:11.2f} {b:8.2f} {dn:10.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"options": args.options, "coverage": covs, "scenes": results,
                       "kinds": table, "leave_kind_out": lko},
                      f, indent=1)


if __name__ == "__main__":
    main()
