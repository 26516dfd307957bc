#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Leave-one-scene-out choice of a setting: which candidate would have been picked without each
scene, and how it then does on that scene.

    tools/loso.py [--family cost|rank-penalties|census-penalties|weights|band|speckle|fill|...]
                  [--metric bad2|bad2_valid] [--generated-only] [--generated N]
                  [--no-exposure] [--no-hard] [--json FILE]
    tools/loso.py --family temporal [--sequences N] [--frames N] [--karlsruhe] [--json FILE]

Every candidate (a set of stereo-match options) is scored (bad-2 %, non-occluded pixels, invalid
pixels filled as the KITTI devkit does: stereo-eval) on every scene: the six shared Middlebury
scenes (tests/middlebury.py; STEREO_DATA) and N generated scenes with exact ground truth
(stereo-synth, different seeds, times and sizes), and the six shared scenes again with the
right view re-exposed (EXPOSURE: a gain, an offset, a gamma, a vignetting centred off the image
centre, and Gaussian noise on both views, each scene its own fixed mix; --no-exposure leaves
them out): two cameras never see the same grey values, and a cost that depends on them must be
scored where they differ; and six harder generated scenes (HARD: stereo-synth's street layout
and weakly textured objects, with its camera effects: another gain, offset or gamma on the
right view, vignetting centred differently in each view, noise; --no-hard leaves them out).
Then, for each scene in turn, the candidate
with the lowest mean bad-2 over the other scenes is chosen and scored on the left-out scene.
The table gives, per left-out scene, the chosen candidate, its bad-2 there and the best any
candidate reaches there; the summary gives the in-sample figure (the candidate best on all
scenes, its mean) beside the left-out mean (each scene scored by the choice made without it),
which is what a setting chosen this way should be expected to reach on a scene nobody tuned for.
--metric bad2_valid scores bad-2 over the pixels the matcher left valid instead (stereo-eval's
bad2_valid: what a user who keeps the holes sees); each candidate's mean density is printed too.

The temporal family (the temporal filter's alpha, delta and persistence, gpu/postfilter.h)
scores sequences instead: N generated scenes, each rendered at F times 1/15 s apart (its
occluders move) with independent camera noise per frame and view (Gaussian, sigma 2 grey
levels, fixed seeds), matched as one sequence by stereo-match. Per candidate and sequence:
flicker, the mean |d_t - d_t-1| in pixels over the static pixels (ground truth unchanged and
non-occluded in both frames, both outputs valid), and the mean bad-2 per frame (non-occluded,
filled). The candidate chosen without a sequence has the least flicker among those whose mean
bad-2 over the other sequences is at most TEMPORAL_BAD2_SLACK points above the filter off's.
--karlsruhe adds the flicker of the chosen setting and of the filter off on the shared
Karlsruhe sequence (no ground truth: every pixel valid in both frames counts).
Needs build/stereo-match, build/stereo-eval and build/stereo-synth (CPU backend); the temporal
family also NumPy and OpenCV's Python module.
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
    "cost": [(c, ["--cost", c]) for c in ("rank", "census", "ad", "bt", "mi", "adcensus")],
    # adcensus's weight of the grey difference (eighths per grey level)
    "ad-weight": [(f"adcensus weight {w}", ["--cost", "adcensus", "--ad-weight", str(w)])
                  for w in (1, 2, 3, 4, 6, 8)],
    "adcensus-penalties": [(f"adcensus P1 {p1} P2 {p2}",
                            ["--cost", "adcensus", "--p1", str(p1), "--p2", str(p2)])
                           for p1 in (16, 24, 32, 40, 48, 56) for p2 in (96, 128, 160, 192)],
    # the default cost's adaptive P2 (T, 0 = off), uniqueness ratio and LR-check tolerance
    "p2-adapt": [(f"adaptive P2 T {t}", ["--p2-adapt", str(t)]) for t in (0, 8, 16, 32, 64)],
    "uniqueness": [(f"uniqueness {u}", ["--uniqueness", str(u)]) for u in (0, 5, 10, 15, 20, 25, 30)],
    "lr-tolerance": [(f"LR tolerance {t}", ["--lr-tolerance", str(t)]) for t in (0, 1, 2, 3)],
    "rank-penalties": [(f"rank P1 {p1} P2 {p2}",
                        ["--cost", "rank", "--p1", str(p1), "--p2", str(p2)])
                       for p1 in (12, 24, 36) for p2 in (64, 128, 192)],
    "census-penalties": [(f"census P1 {p1} P2 {p2}",
                          ["--cost", "census", "--p1", str(p1), "--p2", str(p2)])
                         for p1 in (16, 24, 32, 40) for p2 in (96, 128, 160)],
    "weights": [(f"{c} weights {w}", ["--cost", c, "--path-weights", w])
                for c in ("rank", "census") for w in ("1,1,1,1,1,1,1,1", "2,2,2,2,1,1,1,1",
                                                      "3,3,3,3,1,1,1,1")],
    # the coarse-to-fine mode against the full search (band.h), at 128 disparities or more
    "band": [("full range", []), ("band 32", ["--band", "32"]), ("band 64", ["--band", "64"])],
    # the post-filters (gpu/postfilter.h): speckle size N and step M (16ths of a pixel)
    "speckle": [("speckle off", ["--speckle-size", "0"])] + [
        (f"speckle {n} diff {m}", ["--speckle-size", str(n), "--speckle-diff", str(m)])
        for n in (25, 50, 100, 200, 400, 800, 1600) for m in (8, 16, 32, 64)],
    "fill": [("keep holes", []), ("fill", ["--fill"])],
    # region voting (postfilter.h 9b), alone and with the uniqueness ratios it could make worth
    # more (more invalid pixels to vote on)
    "vote": [("vote off", []), ("vote", ["--vote"])] + [
        (f"vote, uniqueness {u}", ["--vote", "--uniqueness", str(u)]) for u in (0, 10, 15)],
    # Mei et al.'s refinements of the holes (postfilter.h 9b, 9c), alone and together
    "refine": [("refine off", []), ("vote", ["--vote"]), ("interp", ["--interp"]),
               ("vote + interp", ["--vote", "--interp"])],
    # Mei et al.'s other two refinements (gpu/cross.h): cross-based aggregation with its arms
    # capped at N px, depth-discontinuity adjustment, and both
    "cross": [("cross off", [])] + [(f"cross {n}", ["--cross", str(n)]) for n in (1, 2, 3, 5, 34)] + [
        ("discontinuity", ["--discontinuity"])] + [
        (f"cross {n} + discontinuity", ["--cross", str(n), "--discontinuity"]) for n in (1, 2)],
    # the capped aggregation averages the costs, which flattens them against the penalties:
    # lower penalties with it
    "cross-penalties": [("cross off", [])] + [
        (f"cross {n} P1 {p1} P2 {p2}", ["--cross", str(n), "--p1", str(p1), "--p2", str(p2)])
        for n in (1, 2) for p1, p2 in ((20, 80), (28, 112), (40, 160))],
    # the whole of Mei et al.'s refinements: voting and interpolation after the paths, with the
    # capped aggregation before them and the discontinuity adjustment
    "mei": [("mei off", []), ("vote + interp", ["--vote", "--interp"])] + [
        (f"cross {n} + vote + interp", ["--cross", str(n), "--vote", "--interp"]) for n in (1, 2)] + [
        ("vote + interp + discontinuity", ["--vote", "--interp", "--discontinuity"])] + [
        (f"cross {n} + vote + interp + discontinuity",
         ["--cross", str(n), "--vote", "--interp", "--discontinuity"]) for n in (1, 2)] + [
        ("cross 1 + vote + interp, 8 paths", ["--cross", "1", "--vote", "--interp", "--paths", "8"])],
    "paths": [("8 paths", ["--paths", "8"]), ("4 paths", ["--paths", "4"])],
    # how the default came to be 4 paths with speckle removal: the former default (8 paths, no
    # speckle removal, P1 32 P2 128) first, then speckle removal with 8 paths, then 4 paths at
    # three speckle sizes and two uniqueness ratios (steps of 16 throughout)
    "paths-speckle": [("8 paths, speckle off, P1 32 P2 128",
                       ["--paths", "8", "--speckle-size", "0", "--p1", "32", "--p2", "128"]),
                      ("8 paths, speckle 200, P1 32 P2 128",
                       ["--paths", "8", "--speckle-size", "200", "--p1", "32", "--p2", "128"])] + [
        (f"4 paths, speckle {n}, uniqueness {u}, P1 32 P2 128",
         ["--paths", "4", "--speckle-size", str(n), "--uniqueness", str(u), "--p1", "32", "--p2", "128"])
        for n in (100, 200, 400) for u in (5, 10)],
    # the default cost's penalties under the default's 4 paths and speckle removal
    "default-penalties": [(f"P1 {p1} P2 {p2}", ["--p1", str(p1), "--p2", str(p2)])
                          for p1 in (24, 32, 40) for p2 in (96, 128, 160)],
    # a remedy for slanted surfaces (a road plane: its disparity grows by a fraction of a pixel
    # per row, so the vertical paths pay P1 every few rows): a lower P1 along the vertical
    # paths (+y, -y), or along every path with a vertical step (+y, -y and the diagonals);
    # P1 32 elsewhere; measured with 8 paths and without speckle removal
    "slant": [(label, ["--paths", "8", "--speckle-size", "0", "--p2", "128", "--p1", p1])
              for label, p1 in [("P1 32 everywhere", "32")] + [
                  (f"P1 {v} on +-y", f"32,32,{v},{v},32,32,32,32") for v in (24, 16, 8)] + [
                  (f"P1 {v} on +-y and diagonals", f"32,32,{v},{v},{v},{v},{v},{v}")
                  for v in (24, 16)]],
    # cost mi's tables per tile (gpu/mi.h): one table for the frame, then G x G tiles
    "mi": [(f"mi tiles {g}", ["--cost", "mi", "--mi-tiles", str(g)]) for g in (1, 2, 3, 4, 5, 6, 8)],
}
# the temporal family: off, then alpha (16ths) x delta (16ths) x persistence (frames)
TEMPORAL = [("temporal off", [])] + [
    (f"alpha {a} delta {d} persist {k}", ["--temporal", "--temporal-alpha", str(a),
                                          "--temporal-delta", str(d), "--temporal-persist", str(k)])
    for a in (2, 4, 8, 12) for d in (8, 16, 32, 64) for k in (0, 2, 5)]
TEMPORAL_BAD2_SLACK = 0.1  # points of bad-2 a smoother output may cost
NOISE_SIGMA = 2.0
KARLSRUHE = ("karlsruhe_sequences/2010_03_09_drive_0023", 128)
# The harder generated scenes: name, stereo-synth options, stereo-match -d. The street layout
# (a road plane from the horizon to the bottom row, a weakly textured sky, facades, cars) and
# the objects layout at low contrast, each with camera effects; chosen so that no cost wins
# them all and none is hopeless.
HARD = [
    ("street-vig-gain", ["--layout", "street", "--size", "480x272", "--max-disp", "64", "--seed",
                         "11", "--right-gain", "1.3", "--right-offset", "-20", "--vignette", "0.3",
                         "--noise", "2.5", "--contrast", "0.9"], 80),
    ("street-gamma", ["--layout", "street", "--size", "640x360", "--max-disp", "96", "--seed", "12",
                      "--right-gamma", "1.6", "--right-gain", "1.1", "--noise", "2", "--contrast",
                      "0.7"], 112),
    ("street-dark-vig", ["--layout", "street", "--size", "512x256", "--max-disp", "64", "--seed",
                         "13", "--right-gamma", "0.7", "--vignette", "0.25", "--noise", "1.5",
                         "--contrast", "0.8"], 80),
    ("weak-noise", ["--size", "480x360", "--seed", "14", "--contrast", "0.05", "--noise", "3"], 48),
    ("weak-vig-gain", ["--size", "320x240", "--max-disp", "40", "--seed", "15", "--vignette", "0.7",
                       "--right-gain", "1.6", "--right-offset", "-30", "--noise", "3",
                       "--contrast", "0.12"], 48),
    ("weak-gamma", ["--size", "640x480", "--seed", "16", "--right-gain", "0.6", "--right-gamma",
                    "2.0", "--right-offset", "20", "--noise", "3.5", "--contrast", "0.1"], 64),
]
# The wider pool's kinds (--by-kind adds these scenes), generated with exact ground truth:
#  - driving: the street layout at a camera's wide aspect (KITTI's 1242x375 scaled) with a
#    steep road plane, strong perspective and the sensor noise of a car camera;
#  - outdoor low texture: the street at half and a third of its texture contrast (haze, dusk,
#    a wet road: the road's few grey levels of texture then lie within the noise);
#  - facade: the facade layout (a regular grid of identical windows, a weakly textured render,
#    thin poles), plain and with camera effects;
#  - strong exposure: every layout with strong vignetting and a right camera far from the left
#    one (gain, offset, gamma).
WIDE = [
    ("drive-wide-a", ["--layout", "street", "--size", "828x250", "--max-disp", "80", "--seed", "21",
                      "--right-gain", "1.1", "--noise", "2"], 96, "driving"),
    ("drive-wide-b", ["--layout", "street", "--size", "1024x320", "--max-disp", "112", "--seed",
                      "22", "--vignette", "0.2", "--noise", "2.5"], 128, "driving"),
    ("lowtex-a", ["--layout", "street", "--size", "640x360", "--max-disp", "96", "--seed", "31",
                  "--contrast", "0.5", "--noise", "2"], 112, "outdoor low texture"),
    ("lowtex-b", ["--layout", "street", "--size", "480x270", "--max-disp", "64", "--seed", "32",
                  "--contrast", "0.35", "--right-gamma", "1.3", "--noise", "1.5"], 80,
     "outdoor low texture"),
    ("facade-a", ["--layout", "facade", "--size", "640x360", "--max-disp", "96", "--seed", "41",
                  "--noise", "2"], 112, "facade"),
    ("facade-b", ["--layout", "facade", "--size", "512x288", "--max-disp", "80", "--seed", "42",
                  "--right-gain", "1.2", "--vignette", "0.2", "--noise", "2"], 96, "facade"),
    ("facade-c", ["--layout", "facade", "--size", "800x450", "--max-disp", "120", "--seed", "43",
                  "--contrast", "0.8", "--noise", "1.5"], 128, "facade"),
    ("exposure-a", ["--size", "480x360", "--seed", "51", "--vignette", "0.6", "--right-gain", "0.6",
                    "--right-offset", "25", "--noise", "3"], 48, "strong exposure"),
    ("exposure-b", ["--layout", "street", "--size", "640x360", "--max-disp", "96", "--seed", "52",
                    "--vignette", "0.55", "--right-gamma", "1.8", "--right-gain", "1.4",
                    "--right-offset", "-30", "--noise", "3"], 112, "strong exposure"),
    ("exposure-c", ["--layout", "facade", "--size", "512x288", "--max-disp", "80", "--seed", "53",
                    "--vignette", "0.5", "--right-gain", "1.7", "--right-gamma", "0.7", "--noise",
                    "2.5"], 96, "strong exposure"),
]


def kind_of(name):
    """The kind of scene a name is (--by-kind leaves one kind out at a time)."""
    for w in WIDE:
        if w[0] == name:
            return w[3]
    if name.startswith("x-"):
        return "re-exposed real"
    if name.startswith("generated-"):
        return "generated objects"
    if name.startswith("street-"):
        return "driving"
    if name.startswith("weak-"):
        return "weak texture"
    return "real indoor"


def leave_one_kind_out(names, scores, guard=None):
    """scores[c][s]: as leave_one_out. Each kind in turn is left out: the candidate with the
    lowest mean over the other kinds (each kind's mean counted once, so that no kind weighs by
    its number of scenes) is chosen and scored by its mean over the left-out kind. With guard
    (points), a candidate whose mean on any of the choosing kinds is more than guard above the
    first candidate's (the family's baseline, today's default) is not chosen: a new default
    must not give back more than that on any kind it was chosen on. Returns (rows, in_sample,
    left_out): rows (kind, scenes, chosen, its mean there, the best mean any candidate reaches
    there); in_sample (the candidate best over all kinds, its mean of kind means); left_out,
    the mean over the kinds of their left-out figures."""
    cands = list(scores)
    kinds = []
    for n in names:
        if kind_of(n) not in kinds:
            kinds.append(kind_of(n))
    members = {k: [n for n in names if kind_of(n) == k] for k in kinds}

    def kmean(c, k):
        return sum(scores[c][n] for n in members[k]) / len(members[k])

    def mean(c, skip=None):
        kept = [kmean(c, k) for k in kinds if k != skip]
        return sum(kept) / len(kept)

    def allowed(c, skip=None):
        return guard is None or all(kmean(c, k) <= kmean(cands[0], k) + guard
                                    for k in kinds if k != skip)
    rows = []
    for k in kinds:
        chosen = min((c for c in cands if allowed(c, k)),
                     key=lambda c: (mean(c, skip=k), cands.index(c)))
        rows.append((k, len(members[k]), chosen, kmean(chosen, k), min(kmean(c, k) for c in cands)))
    best = min((c for c in cands if allowed(c)), key=lambda c: (mean(c), cands.index(c)))
    return rows, (best, mean(best)), sum(r[3] for r in rows) / len(rows)


# the least number of disparities a family searches (the scene's own when larger)
FAMILY_D_FLOOR = {"band": 128}

# The re-exposed copies of the shared scenes: right view v (0..255) becomes
# 255 * clip((v * gain + offset) / 255, 0, 1) ** gamma * (1 - vignette * r2), r2 the squared
# distance from (0.45 w, 0.5 h) over that of the corner (0, 0) region's scale; both views get
# Gaussian noise of sigma NOISE_SIGMA (seeded per scene and view). One mix per shared scene, in
# the order of tests/middlebury.py's SCENES: global changes alone, vignetting alone, and both.
EXPOSURE = [(1.15, -12, 0.85, 0.0), (1.0, 0, 1.0, 0.25), (0.9, 8, 1.1, 0.15),
            (1.2, 0, 1.0, 0.0), (1.0, -10, 0.9, 0.3), (0.85, 10, 1.0, 0.1)]

# name, stereo-synth options, stereo-match -d (the scene's disparities are below it)
GENERATED = [
    ("generated-a", ["--size", "480x360", "--seed", "3"], 48),
    ("generated-b", ["--size", "400x300", "--seed", "11", "--t", "0.7"], 48),
    ("generated-c", ["--size", "560x320", "--seed", "23", "--t", "2.1", "--max-disp", "60"], 64),
    ("generated-d", ["--size", "320x240", "--seed", "5", "--t", "3.3"], 32),
]


def synth_scenes(tmp, count, table=GENERATED):
    """The generated scenes as (name, left, right, gt, eval options, D)."""
    scenes = []
    for name, opts, d, *_ in table[:count]:
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


def exposed_scenes(tmp, shared):
    """The shared scenes again, each with its EXPOSURE mix ("x-" + name)."""
    import cv2
    import numpy as np
    out = []
    for i, ((name, left, right, gt, eval_opts, d), (gain, off, gamma, vig)) in enumerate(
            zip(shared, EXPOSURE)):
        views = []
        for v, src in enumerate((left, right)):
            im = cv2.imread(src, cv2.IMREAD_UNCHANGED)
            if im is None:
                sys.exit(f"loso: cannot read {src}")
            im = im.astype(np.float64)
            if v == 1:
                h, w = im.shape[:2]
                yy, xx = np.mgrid[0:h, 0:w]
                r2 = (((xx - 0.45 * w) ** 2 + (yy - 0.5 * h) ** 2) /
                      ((0.55 * w) ** 2 + (0.5 * h) ** 2))
                f = 1 - vig * r2
                im = 255 * np.clip((im * gain + off) / 255, 0, 1) ** gamma * (
                    f[..., None] if im.ndim == 3 else f)
            im += np.random.default_rng(1000 * i + v).normal(0, NOISE_SIGMA, im.shape)
            dst = os.path.join(tmp, f"x-{name}-{v}.png")
            cv2.imwrite(dst, np.clip(np.rint(im), 0, 255).astype(np.uint8))
            views.append(dst)
        out.append(("x-" + name, views[0], views[1], gt, eval_opts, d))
    return out


def evaluate(path, gt, eval_opts):
    """stereo-eval's JSON of a disparity file: bad2, bad2_valid, density, ..."""
    r = subprocess.run([os.path.join(mb.BUILD, "stereo-eval"), "--json", *eval_opts, path, gt],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def bad2(scene, extra, path, metric="bad2", density=None, d_floor=0):
    """The scene's score under the candidate's options (metric of stereo-eval's JSON); the
    density goes into density[0] when given."""
    name, left, right, gt, eval_opts, d = scene
    d = max(d, d_floor)
    subprocess.run([os.path.join(mb.BUILD, "stereo-match"), "-q", "-d", str(d), "--backend",
                    "cpu", *extra, left, right, path], check=True, capture_output=True)
    r = evaluate(path, gt, eval_opts)
    if density is not None:
        density[0] = float(r["density"])
    return float(r[metric])


def scene_of(name):
    """The scene a name shows: a re-exposed copy ("x-" + name) is its scene, left out with it."""
    return name[2:] if name.startswith("x-") else name


def leave_one_out(names, scores):
    """scores[c][s]: bad-2 of candidate c on scene s. Returns (rows, in_sample, left_out):
    rows per left-out scene (scene, chosen candidate, its bad-2 there, the best there). A scene
    and its re-exposed copy are left out together: neither chooses for the other."""
    cands = list(scores)

    def mean(c, skip=None):
        kept = [v for s, v in scores[c].items() if skip is None or scene_of(s) != scene_of(skip)]
        return sum(kept) / len(kept)
    rows = []
    for s in names:
        chosen = min(cands, key=lambda c: (mean(c, skip=s), cands.index(c)))
        rows.append((s, chosen, scores[chosen][s], min(scores[c][s] for c in cands)))
    best = min(cands, key=lambda c: (mean(c), cands.index(c)))
    return rows, (best, mean(best)), sum(r[2] for r in rows) / len(rows)


def read_pfm(path):
    import numpy as np
    with open(path, "rb") as f:
        magic, size, scale = (f.readline() for _ in range(3))
        w, h = map(int, size.split())
        d = np.frombuffer(f.read(), "<f4" if float(scale) < 0 else ">f4").reshape(h, w)
    return d[::-1].astype(np.float64)  # PFM rows run bottom to top


def flicker(prev, cur, static):
    """Mean |cur - prev| (px) over the static pixels valid in both, and their count."""
    import numpy as np
    both = static & np.isfinite(prev) & np.isfinite(cur)
    n = int(both.sum())
    return (float(np.abs(cur[both] - prev[both]).mean()) if n else 0.0), n


def synth_sequences(tmp, count, frames):
    """count generated sequences of `frames` noisy frames each: (name, folder, D); each folder
    holds left_NNNN.png, right_NNNN.png and, per frame, the scene's disp_left.pfm and
    nonocc.png as gt_NNNN.pfm, nonocc_NNNN.png."""
    import cv2
    import numpy as np
    out = []
    for i, (name, opts, d) in enumerate(GENERATED[:count]):
        folder = os.path.join(tmp, "seq-" + name)
        os.makedirs(folder)
        t0 = float(opts[opts.index("--t") + 1]) if "--t" in opts else 0.0
        base = [o for k, o in enumerate(opts) if "--t" not in opts[max(k - 1, 0):k + 1]]
        rng = np.random.default_rng(1000 + i)
        for k in range(frames):
            frame = os.path.join(tmp, f"frame-{name}-{k}")
            subprocess.run([os.path.join(mb.BUILD, "stereo-synth"), *base, "--t",
                            f"{t0 + k / 15:.6f}", frame], check=True, capture_output=True)
            for side in ("left", "right"):
                im = cv2.imread(os.path.join(frame, side + ".png"), cv2.IMREAD_GRAYSCALE)
                noisy = np.clip(im + rng.normal(0, NOISE_SIGMA, im.shape) + 0.5, 0, 255)
                cv2.imwrite(os.path.join(folder, f"{side}_{k:04d}.png"), noisy.astype(np.uint8))
            os.replace(os.path.join(frame, "disp_left.pfm"),
                       os.path.join(folder, f"gt_{k:04d}.pfm"))
            os.replace(os.path.join(frame, "nonocc.png"),
                       os.path.join(folder, f"nonocc_{k:04d}.png"))
        out.append((name, folder, d))
    return out


def run_sequence(folder, d, extra, outdir, left="left_%04d.png", right="right_%04d.png"):
    os.makedirs(outdir, exist_ok=True)
    subprocess.run([os.path.join(mb.BUILD, "stereo-match"), "-q", "-d", str(d), "--backend",
                    "cpu", *extra, os.path.join(folder, left), os.path.join(folder, right),
                    os.path.join(outdir, "d_%04d.pfm")], check=True, capture_output=True)


def score_sequence(seq, extra, outdir, frames):
    """(flicker px, mean bad-2 %) of the candidate on a generated sequence."""
    import cv2
    import numpy as np
    name, folder, d = seq
    run_sequence(folder, d, extra, outdir)
    bads, flick, count, prev = [], 0.0, 0, None
    for k in range(frames):
        path = os.path.join(outdir, f"d_{k:04d}.pfm")
        gt = os.path.join(folder, f"gt_{k:04d}.pfm")
        mask = os.path.join(folder, f"nonocc_{k:04d}.png")
        bads.append(float(evaluate(path, gt, ["--mask", mask])["bad2"]))
        cur = read_pfm(path)
        g = read_pfm(gt)
        m = cv2.imread(mask, cv2.IMREAD_GRAYSCALE) == 255
        if prev is not None:
            static = (np.abs(g - prev[1]) < 1e-3) & m & prev[2]
            f, n = flicker(prev[0], cur, static)
            flick += f * n
            count += n
        prev = (cur, g, m)
    return flick / max(count, 1), sum(bads) / len(bads)


def karlsruhe_flicker(extra, outdir):
    """Mean |d_t - d_t-1| (px) over every pixel valid in both frames of the shared Karlsruhe
    frames (no ground truth), and the share of those that changed by more than 1 px."""
    import numpy as np
    folder = mb.scene_path((None, KARLSRUHE[0]), "")
    run_sequence(folder, KARLSRUHE[1], extra, outdir, "I1_%06d.png", "I2_%06d.png")
    files = sorted(f for f in os.listdir(outdir) if f.endswith(".pfm"))
    total, n, jumps, prev = 0.0, 0, 0, None
    for f in files:
        cur = read_pfm(os.path.join(outdir, f))
        if prev is not None:
            both = np.isfinite(prev) & np.isfinite(cur)
            diff = np.abs(cur[both] - prev[both])
            total += float(diff.sum())
            n += int(both.sum())
            jumps += int((diff > 1).sum())
        prev = cur
    return total / max(n, 1), 100.0 * jumps / max(n, 1), len(files)


def temporal_main(args):
    with mb.tempdir() as tmp:
        seqs = synth_sequences(tmp, args.sequences, args.frames)
        scores = {}
        for label, extra in TEMPORAL:
            scores[label] = {}
            for seq in seqs:
                scores[label][seq[0]] = score_sequence(seq, extra, os.path.join(tmp, "out"),
                                                       args.frames)
            f = [v[0] for v in scores[label].values()]
            b = [v[1] for v in scores[label].values()]
            print(f"{label:30} flicker {sum(f) / len(f):6.4f} px  bad-2 {sum(b) / len(b):6.2f} %",
                  flush=True)
        names = [seq[0] for seq in seqs]
        rows = []
        for s in names + [None]:
            mean = lambda c, i: (sum(v[i] for k, v in scores[c].items() if k != s) /
                                 sum(1 for k in scores[c] if k != s))
            limit = mean("temporal off", 1) + TEMPORAL_BAD2_SLACK
            ok = [c for c, _ in TEMPORAL if mean(c, 1) <= limit]
            chosen = min(ok, key=lambda c: (mean(c, 0), [t for t, _ in TEMPORAL].index(c)))
            rows.append((s, chosen))
        print("\nleft-out sequence  chosen without it                 flicker there (off)   "
              "bad-2 there (off)")
        lo_f = lo_b = off_f = off_b = 0.0
        for s, chosen in rows[:-1]:
            v, off = scores[chosen][s], scores["temporal off"][s]
            print(f"{s:18} {chosen:32} {v[0]:.4f} ({off[0]:.4f}) px  {v[1]:5.2f} ({off[1]:5.2f}) %")
            lo_f += v[0] / len(names)
            lo_b += v[1] / len(names)
            off_f += off[0] / len(names)
            off_b += off[1] / len(names)
        best = rows[-1][1]
        print(f"\nin-sample: {best}")
        print(f"left-out:  flicker {lo_f:.4f} px (off {off_f:.4f}), bad-2 {lo_b:.2f} % "
              f"(off {off_b:.2f})")
        result = {"family": "temporal", "scores": scores, "rows": rows, "in_sample": best,
                  "left_out": {"flicker": lo_f, "bad2": lo_b, "off_flicker": off_f,
                               "off_bad2": off_b}}
        if args.karlsruhe:
            extra = dict(TEMPORAL)[best]
            ka = {}
            for label, ex in (("temporal off", []), (best, extra)):
                f, j, nf = karlsruhe_flicker(ex, os.path.join(tmp, "k-" + str(len(ka))))
                ka[label] = {"flicker": f, "over_1px": j}
                print(f"karlsruhe ({nf} frames) {label:30} flicker {f:.4f} px, "
                      f"{j:.2f} % change by more than 1 px")
            result["karlsruhe"] = ka
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=sorted(FAMILIES) + ["temporal"], default="cost")
    ap.add_argument("--metric", choices=("bad2", "bad2_valid"), default="bad2",
                    help="bad-2 with the holes filled (default) or over the valid pixels")
    ap.add_argument("--sequences", type=int, default=len(GENERATED),
                    help="temporal: generated sequences (2..%d)" % len(GENERATED))
    ap.add_argument("--frames", type=int, default=10, help="temporal: frames per sequence")
    ap.add_argument("--karlsruhe", action="store_true",
                    help="temporal: also the flicker on the shared Karlsruhe frames")
    ap.add_argument("--generated", type=int, default=len(GENERATED),
                    help=f"generated scenes to add (0..{len(GENERATED)})")
    ap.add_argument("--generated-only", action="store_true",
                    help="leave out the shared Middlebury scenes")
    ap.add_argument("--no-exposure", action="store_true",
                    help="leave out the re-exposed copies of the shared scenes")
    ap.add_argument("--no-hard", action="store_true",
                    help="leave out the harder generated scenes (street layout, weak texture)")
    ap.add_argument("--by-kind", action="store_true",
                    help="add the wider pool's scenes (driving, outdoor low texture, facade, "
                    "strong exposure) and leave one kind out as well as one scene")
    ap.add_argument("--guard", type=float, metavar="POINTS",
                    help="--by-kind: never choose a candidate more than POINTS above the "
                    "family's first candidate (the default) on a kind it is chosen on")
    ap.add_argument("--json", help="write the scores and the table to this file")
    args = ap.parse_args()
    if args.guard is not None and (not args.by_kind or not args.guard >= 0):
        ap.error("--guard: a number of points, 0 or more, with --by-kind")
    if args.family == "temporal":
        if not 2 <= args.sequences <= len(GENERATED) or args.frames < 2:
            ap.error("temporal: --sequences 2..%d, --frames 2 or more" % len(GENERATED))
        return temporal_main(args)
    if not 0 <= args.generated <= len(GENERATED):
        ap.error(f"--generated: {args.generated} is outside 0..{len(GENERATED)}")
    scenes = []
    if not args.generated_only:
        if not mb.data_available():
            sys.exit(f"loso: no stereo data at {mb.DATA} (set STEREO_DATA, or --generated-only)")
        scenes += shared_scenes()
    with mb.tempdir() as tmp:
        if scenes and not args.no_exposure:
            scenes += exposed_scenes(tmp, scenes)
        scenes += synth_scenes(tmp, args.generated)
        if not args.no_hard:
            scenes += synth_scenes(tmp, len(HARD), HARD)
        if args.by_kind:
            scenes += synth_scenes(tmp, len(WIDE), WIDE)
        if len(scenes) < 2:
            sys.exit("loso: leaving one scene out needs at least two scenes")
        scores, density = {}, {}
        for label, extra in FAMILIES[args.family]:
            scores[label], dens = {}, []
            for sc in scenes:
                dn = [0.0]
                scores[label][sc[0]] = bad2(sc, extra, os.path.join(tmp, "d.pfm"), args.metric, dn,
                                            FAMILY_D_FLOOR.get(args.family, 0))
                dens.append(dn[0])
            density[label] = sum(dens) / len(dens)
            print(f"{label:28} mean {args.metric} {sum(scores[label].values()) / len(scenes):6.2f}"
                  f" %  density {density[label]:6.2f} %", flush=True)
    names = [sc[0] for sc in scenes]
    rows, (best, best_mean), left_out = leave_one_out(names, scores)
    print(f"\nleft-out scene  chosen without it              bad-2 there  best any there")
    for s, chosen, got, top in rows:
        print(f"{s:15} {chosen:30} {got:9.2f} %  {top:9.2f} %")
    print(f"\nin-sample: {best} is best on all {len(names)} scenes, mean bad-2 {best_mean:.2f} %")
    print(f"left-out:  mean bad-2 {left_out:.2f} % (each scene scored by the choice made "
          f"without it)")
    result = {"family": args.family, "metric": args.metric, "density": density,
              "scenes": names, "scores": scores,
              "rows": rows, "in_sample": [best, best_mean], "left_out": left_out}
    if args.by_kind:
        krows, (kbest, kbest_mean), kleft = leave_one_kind_out(names, scores, args.guard)
        guard = f", guard {args.guard:g} points" if args.guard is not None else ""
        print(f"\nleft-out kind{guard}\n{'kind':20} scenes  chosen without it              "
              f"{args.metric} there  best any there")
        for k, n, chosen, got, top in krows:
            print(f"{k:20} {n:6}  {chosen:30} {got:9.2f} %  {top:9.2f} %")
        print(f"\nin-sample (kinds weighed alike): {kbest}, mean of kind means {kbest_mean:.2f} %")
        print(f"left-out kind: mean {kleft:.2f} % (each kind scored by the choice made without it)")
        result["kinds"] = {"rows": krows, "in_sample": [kbest, kbest_mean], "left_out": kleft,
                           "guard": args.guard}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
