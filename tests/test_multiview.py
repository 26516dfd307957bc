# SPDX-License-Identifier: Apache-2.0
"""Multi-baseline matching (stereo-match --baselines, gpu/multiview.h): 2, 3 and 4 views of the
same scene with the same options (--cost rank, 9x9, and the defaults otherwise: SGM 4 paths, LR
check against view 1, median, subpixel; the same cost for every count of views) but without
speckle removal (--speckle-size 0: on the pair it removes much of what a view on the other side
fixes, the wrong regions beside occlusions, so with it the comparison would measure the filter,
not the views; docs/results.md gives both), scored by build/stereo-eval. Prints TAP and the table
of docs/results.md.

Scenes:
  generated   stereo-synth --views 2,-1: left.png the reference, right.png b = 1, view2.png
              b = 2, view3.png b = -1; exact ground truth (disp_left.pfm). Two scenes: seed 1 at
              t = 0 (640x480, D 48), and seed 7 at t = 1.3 (480x360, D 36; the occluders moved).
  tsukuba     ../shared/data (skips visibly without it): scene1.row3.col3 the reference, col4
              b = 1, col5 b = 2, col2 b = -1 (SOURCES.md: five equally spaced views).
Views: 2 = the pair (b 1); 3 = b 1,-1 (a view on each side); 4 = b 1,2,-1, with the default
rule (--combine sides). Reported beside them: 3 views on one side (b 1,2), and the sum rule
(--combine sum) for 3 and 4 views.

Metrics (stereo-eval: invalid pixels filled KITTI-style before scoring):
  bad-2       % of pixels with valid ground truth off by more than 2 px
  occl. band  bad-2 within 5 px (Chebyshev) of an occluded pixel, occluded meaning hidden from
              the view at b = 1 or from the view at b = -1 (the mirrored test), derived from the
              reference's ground truth: x is hidden from b = 1 when some x2 > x has
              x2 - d(x2) <= x - d(x) - 1 (a nearer point covers it by at least a pixel), or
              x - d(x) < 0; pixels without ground truth neither hide nor count.
  density     % of those pixels the stage leaves valid (before the filling)

Asserted, on the generated scenes and on tsukuba: 3 and 4 views beat the pair in bad-2 and in
the occlusion band, and the band drops by more points than the whole; the sum rule beats the
pair on the generated scenes (it does not on tsukuba: reported). With --cost census, ad, bt and
adcensus (the default, 2, 3 and 4 views each): 3 and 4 views beat that cost's pair in bad-2 and
in the band on every scene but census on tsukuba (reported: 3 views 3.74 % against the pair's
3.55). Adcensus, the default for every count of views, must beat census with 3 and 4 views on
every scene (bad-2).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import middlebury as mb  # noqa: E402

GENERATED = [  # name, stereo-synth options, stereo-match -d
    ("generated", ["--size", "640x480", "--seed", "1"], 64),
    ("generated-2", ["--size", "480x360", "--seed", "7", "--t", "1.3"], 48),
]
TSUKUBA = "middlebury2001/tsukuba"
# the other costs: 2, 3 and 4 views each (the first three RUNS) with --cost; census on tsukuba is
# reported, not asserted (3 views 3.74 % against the pair's 3.55: docs/results.md)
OTHER_COSTS = ["census", "ad", "bt", "adcensus"]
NOT_ASSERTED = {("census", "tsukuba")}
RUNS = [  # label, baselines (None: the pair), combine rule, the view files' keys
    ("2 views", None, None, ["b1"]),
    ("3 views", "1,-1", None, ["b1", "b-1"]),
    ("4 views", "1,2,-1", None, ["b1", "b2", "b-1"]),
    ("3 views, one side (1,2)", "1,2", None, ["b1", "b2"]),
    ("3 views, sum", "1,-1", "sum", ["b1", "b-1"]),
    ("4 views, sum", "1,2,-1", "sum", ["b1", "b2", "b-1"]),
]


def hidden_from_right(gt, valid):
    """Pixels of the reference hidden from the view at b = 1 (see the module text)."""
    import numpy as np
    h, w = gt.shape
    xs = np.arange(w)
    occ = np.zeros((h, w), bool)
    for y in range(h):
        proj = np.where(valid[y], xs - gt[y], np.inf)
        # the smallest projection of any pixel right of x
        right_min = np.concatenate([np.minimum.accumulate(proj[::-1])[::-1][1:], [np.inf]])
        occ[y] = valid[y] & ((right_min <= xs - gt[y] - 1) | (xs - gt[y] < 0))
    return occ


def occlusion_band(gt, valid, radius=5):
    import cv2
    import numpy as np
    occ = hidden_from_right(gt, valid) | hidden_from_right(gt[:, ::-1], valid[:, ::-1])[:, ::-1]
    size = 2 * radius + 1
    band = cv2.dilate(occ.astype(np.uint8), np.ones((size, size), np.uint8)) > 0
    return band & valid


def read_pfm(path):
    import numpy as np
    with open(path, "rb") as f:
        assert f.readline().strip() == b"Pf"
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), "<f4" if scale < 0 else ">f4").reshape(h, w)
    return np.flipud(data).astype(np.float64)


def evaluate(disp, gt, gt_opts, mask):
    ev = os.path.join(mb.BUILD, "stereo-eval")
    out = {}
    for key, extra in (("all", []), ("band", ["--mask", mask])):
        text = subprocess.run([ev, *gt_opts, *extra, disp, gt], capture_output=True, text=True,
                              check=True).stdout
        out[key] = {k: float(v) for k, v in re.findall(r"(\w+)=([-\d.]+)", text)}
    return {"bad2": out["all"]["bad2"], "band": out["band"]["bad2"],
            "density": out["all"]["density"]}


def match(views, baselines, combine, ndisp, out, cost=None):
    cmd = [os.path.join(mb.BUILD, "stereo-match"), "-d", str(ndisp), "--backend", "cpu", "-q",
           "--speckle-size", "0"]
    if cost:
        cmd += ["--cost", cost]
    if baselines:
        cmd += ["--baselines", baselines]
    if combine:
        cmd += ["--combine", combine]
    subprocess.run(cmd + views + [out], capture_output=True, text=True, check=True)


def score_scene(tmp, name, ref, files, gt, gt_opts, gt_valid, ndisp):
    import cv2
    import numpy as np
    band = occlusion_band(gt_valid[0], gt_valid[1])
    mask = os.path.join(tmp, f"{name}-band.png")
    cv2.imwrite(mask, band.astype(np.uint8) * 255)
    res = {}
    for i, (label, baselines, combine, keys) in enumerate(RUNS):
        out = os.path.join(tmp, f"{name}-{i}.pfm")
        match([ref] + [files[k] for k in keys], baselines, combine, ndisp, out, "rank")
        res[label] = evaluate(out, gt, gt_opts, mask)
    for cost in OTHER_COSTS:
        for i, (label, baselines, combine, keys) in enumerate(RUNS[:3]):
            out = os.path.join(tmp, f"{name}-{cost}-{i}.pfm")
            match([ref] + [files[k] for k in keys], baselines, combine, ndisp, out, cost)
            res[f"{cost}: {label}"] = evaluate(out, gt, gt_opts, mask)
    return res, 100.0 * band.sum() / gt_valid[1].sum()


def main():
    ntests = 8 + 2 * len(OTHER_COSTS)
    print(f"1..{ntests}")
    try:
        import cv2  # noqa: F401
        import numpy as np
    except ImportError:
        for i in range(1, ntests + 1):
            print(f"ok {i} # SKIP python3-opencv or numpy is not installed (run ./setup.sh)")
        return 0
    results, bands = {}, {}
    with mb.tempdir() as tmp:
        for name, opts, ndisp in GENERATED:
            d = os.path.join(tmp, name)
            subprocess.run([os.path.join(mb.BUILD, "stereo-synth"), *opts, "--views", "2,-1", d],
                           capture_output=True, text=True, check=True)
            files = {"b1": f"{d}/right.png", "b2": f"{d}/view2.png", "b-1": f"{d}/view3.png"}
            gt = read_pfm(f"{d}/disp_left.pfm")
            results[name], bands[name] = score_scene(
                tmp, name, f"{d}/left.png", files, f"{d}/disp_left.pfm", [],
                (gt, np.isfinite(gt)), ndisp)
        have_tsukuba = os.path.isfile(os.path.join(mb.DATA, TSUKUBA, "scene1.row3.col1.ppm"))
        if have_tsukuba:
            t = os.path.join(mb.DATA, TSUKUBA)
            files = {"b1": f"{t}/scene1.row3.col4.ppm", "b2": f"{t}/scene1.row3.col5.ppm",
                     "b-1": f"{t}/scene1.row3.col2.ppm"}
            g = cv2.imread(f"{t}/truedisp.row3.col3.pgm", cv2.IMREAD_UNCHANGED).astype(np.float64)
            results["tsukuba"], bands["tsukuba"] = score_scene(
                tmp, "tsukuba", f"{t}/scene1.row3.col3.ppm", files,
                f"{t}/truedisp.row3.col3.pgm", ["--gt-scale", "16"], (g / 16.0, g > 0), 16)

    print("# bad-2 % / bad-2 % within 5 px of occlusions / density % (defaults: rank, "
          "8 paths, LR check, median; --combine sides unless marked)")
    print("# | views | " + " | ".join(results) + " |")
    for label, *_ in RUNS:
        print(f"# | {label} | " + " | ".join(
            "%.2f / %.2f / %.1f" % (r[label]["bad2"], r[label]["band"], r[label]["density"])
            for r in results.values()) + " |")
    for cost in OTHER_COSTS:
        for label, *_ in RUNS[:3]:
            key = f"{cost}: {label}"
            print(f"# | {key} | " + " | ".join(
                "%.2f / %.2f / %.1f" % (r[key]["bad2"], r[key]["band"], r[key]["density"])
                for r in results.values()) + " |")
    print("# occlusion band: " + ", ".join(f"{k} {v:.1f} % of the pixels" for k, v in
                                            bands.items()))

    k = 0

    def beats(names, label, what="bad2"):
        rows = [(n, results[n]["2 views"][what], results[n][label][what]) for n in names]
        return all(m < two for _, two, m in rows), ", ".join(
            f"{n} {two:.2f} -> {m:.2f}" for n, two, m in rows)

    def drops_most(names):
        rows = [(n, m, results[n]["2 views"]["bad2"] - results[n][m]["bad2"],
                 results[n]["2 views"]["band"] - results[n][m]["band"])
                for n in names for m in ("3 views", "4 views")]
        return all(band > whole for _, _, whole, band in rows), ", ".join(
            f"{n} {m} {b:.2f} > {w:.2f}" for n, m, w, b in rows)

    generated = [n for n, *_ in GENERATED]
    scenes = [("generated scenes", generated, True)]
    scenes.append(("tsukuba", ["tsukuba"], have_tsukuba))
    for title, names, present in scenes:
        for what in ("bad2", "band"):
            k += 1
            if not present:
                print(f"ok {k} # SKIP tsukuba's five views not found at {mb.DATA}/{TSUKUBA} "
                      "(set STEREO_DATA)")
                continue
            ok3, t3 = beats(names, "3 views", what)
            ok4, t4 = beats(names, "4 views", what)
            print(f"{'ok' if ok3 and ok4 else 'not ok'} {k} - {title}: 3 and 4 views beat the "
                  f"pair in {'bad-2' if what == 'bad2' else 'the occlusion band'}: 3 views "
                  f"{t3}; 4 views {t4}")
        k += 1
        if not present:
            print(f"ok {k} # SKIP tsukuba's five views not found at {mb.DATA}/{TSUKUBA}")
            continue
        ok, text = drops_most(names)
        print(f"{'ok' if ok else 'not ok'} {k} - {title}: the occlusion band drops by more "
              f"points than the whole: {text}")
    # the sum rule, an option: it must work (beat the pair on the generated scenes)
    k += 1
    ok3, t3 = beats(generated, "3 views, sum")
    ok4, t4 = beats(generated, "4 views, sum")
    print(f"{'ok' if ok3 and ok4 else 'not ok'} {k} - --combine sum beats the pair on the "
          f"generated scenes: 3 views {t3}; 4 views {t4}")
    # the other costs: 3 and 4 views beat their pair in bad-2 and in the occlusion band
    for cost in OTHER_COSTS:
        names = [n for n in results if (cost, n) not in NOT_ASSERTED]
        for n in results:
            if (cost, n) in NOT_ASSERTED:
                r = results[n]
                print(f"# {cost} on {n}, not asserted: bad-2 pair {r[cost + ': 2 views']['bad2']:.2f}"
                      f", 3 views {r[cost + ': 3 views']['bad2']:.2f}, 4 views "
                      f"{r[cost + ': 4 views']['bad2']:.2f}; band {r[cost + ': 2 views']['band']:.2f}"
                      f", {r[cost + ': 3 views']['band']:.2f}, {r[cost + ': 4 views']['band']:.2f}")
        for what in ("bad2", "band"):
            k += 1
            rows = [(n, results[n][f"{cost}: 2 views"][what], results[n][f"{cost}: {m}"][what], m)
                    for n in names for m in ("3 views", "4 views")]
            ok = all(m < two for _, two, m, _ in rows)
            text = ", ".join(f"{n} {lab} {two:.2f} -> {m:.2f}" for n, two, m, lab in rows)
            print(f"{'ok' if ok else 'not ok'} {k} - --cost {cost}: 3 and 4 views beat the pair in "
                  f"{'bad-2' if what == 'bad2' else 'the occlusion band'} on "
                  f"{', '.join(names)}: {text}")
    # the default cost, adcensus for every count of views (stereo_params_default), beats census
    # with more views on every scene
    k += 1
    rows = [(n, m, results[n][f"census: {m}"]["bad2"], results[n][f"adcensus: {m}"]["bad2"])
            for n in results for m in ("3 views", "4 views")]
    ok = all(a < c for _, _, c, a in rows)
    text = ", ".join(f"{n} {m} {c:.2f} -> {a:.2f}" for n, m, c, a in rows)
    print(f"{'ok' if ok else 'not ok'} {k} - the default adcensus beats census with more views "
          f"in bad-2 (census -> adcensus): {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
