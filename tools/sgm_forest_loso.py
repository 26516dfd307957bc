#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""SGM-Forest (Schoenberger, Sinha, Pollefeys, ECCV 2018) against the plain sum over 8 paths,
leave-one-scene-out over tools/loso.py's scenes. A prototype: CPU reference, offline, NumPy only.

    nice -n 10 ninja build/sgm-paths-dump build/stereo-match build/stereo-eval build/stereo-synth
    nice -n 10 /usr/bin/python3 tools/sgm_forest_loso.py [--features basic|full] [--trees N]
        [--depth N] [--seed N] [--json FILE]

(./configure --no-cuda is enough; about 6 minutes on 2 shared cores; STEREO_DATA as loso.py.)

Per scene (the 22 of tools/loso.py: 6 shared Middlebury scenes, their 6 re-exposed copies, 4
generated and 6 harder generated scenes, at loso.py's number of disparities) build/sgm-paths-dump
gives, per pixel, the default configuration's sum S over the 8 paths and each path's own winner
k_r = argmin_k L_r(p, k) with L_r(k_r), L_r(k*), S(k_r) and C(k_r) (tools/sgm_paths_dump.c).

Proposals: the 8 path winners and the sum's winner k*. Features per pixel (--features basic):
each proposal's disparity relative to k*, how many other proposals lie within 1 px of it,
L_r(k*) - L_r(k_r), S(k_r) - S(k*), C(k_r), L_r(k_r), C(k*), S(k*) and the distances to the 4
image edges (capped at 64); --features full (the default) adds per proposal its LR consistency
with the sum's right map (px, capped at 8) and its support (how many of the 5x5 neighbours' k*
lie within 1 px of it), and the sum's uniqueness margin s2 - S(k*). Classifier: a random
forest (default 32 trees of depth 10) of multi-output regression trees (variance split, 32
quantile bins per feature, sqrt(F) random features per node, bootstrap samples of 120000)
fitted to the 9 indicators "proposal j is within 1 px of the ground truth", trained on the
contested pixels only (some proposal right, not all), 30000 sampled from each training scene. Output: the
proposal with the highest predicted probability (ties to the sum), at k_j refined with the
sum's parabola (stereo_subpixel_offset of S around k_j, clamped to +-0.5 px; at k_j = k* that
is exactly stage 6's value). Then the default pipeline's finish on both: 3x3 median of the left
and of the sum's right map, LR check tolerance 1 (sgm-paths-dump --finish), .pfm with +inf
holes, scored by stereo-eval (bad-2 %, non-occluded, holes filled KITTI-style) like loso.py.
The SGM column is the sum's own output through the same finish (checked bit-exact against
build/stereo-match --backend cpu on every scene).

Leave-one-scene-out: a scene's forest is trained on every other scene except its re-exposed
twin (loso.scene_of), so 16 forests for 22 scenes.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import loso  # noqa: E402

mb = loso.mb
NPROP = 9  # 8 paths + the sum
TOL = 1.0  # a proposal is right within 1 px of the ground truth


def group_of(name):
    if name.startswith("x-"):
        return "x-"
    if any(name == h[0] for h in loso.HARD):
        return "harder"
    if name.startswith("generated"):
        return "generated"
    return "shared"


def dump(scene, tmp):
    name, left, right, gt, eval_opts, d = scene
    path = os.path.join(tmp, name + ".bin")
    subprocess.run([os.path.join(mb.BUILD, "sgm-paths-dump"), "-d", str(d), left, right, path],
                   check=True)
    raw = np.fromfile(path, np.uint8)
    assert raw[:8].tobytes() == b"SGMPATHS"
    w, h, D, n = np.frombuffer(raw[8:24].tobytes(), "<i4")
    planes = np.frombuffer(raw[24:].tobytes(), "<i4").reshape(n, h, w)
    os.remove(path)
    return planes, int(D)


def read_gt(scene):
    """Ground truth in pixels, NaN where unknown."""
    name, left, right, gt, eval_opts, d = scene
    if gt.endswith(".pfm"):
        g = loso.read_pfm(gt)
        g[~np.isfinite(g)] = np.nan
        return g
    import cv2
    scale = float(eval_opts[eval_opts.index("--gt-scale") + 1])
    g = cv2.imread(gt, cv2.IMREAD_UNCHANGED).astype(np.float64)
    if g.ndim == 3:
        g = g[..., 0]
    g[g == 0] = np.nan
    return g / scale


def context(planes, k, v):
    """The extra features (--features full), each h x w: per proposal its LR consistency with
    the sum's right map, |v_j - right(x - round(v_j))| in px capped at 8 (8 where the right
    value is missing or outside), and its support, how many of the 5x5 neighbours' k* lie
    within 1 of it; then the sum's uniqueness margin s2 - S(k*)."""
    h, w = planes.shape[1:]
    right = planes[1]
    xx = np.arange(w)[None, :]
    lr, sup = [], []
    kstar = planes[52]
    pad = np.pad(kstar, 2, mode="edge")
    for j in range(NPROP):
        xr = xx - ((v[j] + 8) >> 4)
        inside = xr >= 0
        rv = np.take_along_axis(right, np.clip(xr, 0, w - 1), 1)
        ok = inside & (rv >= 0)
        lr.append(np.where(ok, np.minimum(np.abs(v[j] - rv) / 16.0, 8.0), 8.0))
        cnt = np.zeros((h, w), np.float32)
        for dy in range(5):
            for dx in range(5):
                cnt += np.abs(pad[dy:dy + h, dx:dx + w] - k[j]) <= 1
        sup.append(cnt)
    return np.concatenate([np.stack(lr), np.stack(sup), (planes[53] - planes[2])[None]]).astype(
        np.float32)


def features(planes, full=True):
    """(F features, proposals' integer disparities, subpixel values (16ths)) of every pixel."""
    h, w = planes.shape[1:]
    kstar = planes[52].astype(np.float32)
    k = np.stack([planes[4 + 6 * r] for r in range(8)] + [planes[52]]).astype(np.float32)
    v = np.stack([planes[4 + 6 * r + 4] for r in range(8)] + [planes[0]]).astype(np.int32)
    lmin = np.stack([planes[4 + 6 * r + 1] for r in range(8)]).astype(np.float32)
    l_at = np.stack([planes[4 + 6 * r + 2] for r in range(8)]).astype(np.float32)
    s_at = np.stack([planes[4 + 6 * r + 3] for r in range(8)]).astype(np.float32)
    c_at = np.stack([planes[4 + 6 * r + 5] for r in range(8)]).astype(np.float32)
    agree = (np.abs(k[:, None] - k[None, :]) <= 1).sum(1).astype(np.float32) - 1  # 9 x h x w
    yy, xx = np.mgrid[0:h, 0:w]
    edges = np.stack([xx, w - 1 - xx, yy, h - 1 - yy]).clip(0, 64).astype(np.float32)
    f = np.concatenate([k[:8] - kstar, agree, l_at - lmin, s_at - planes[2], c_at, lmin,
                        planes[3][None].astype(np.float32), planes[2][None].astype(np.float32),
                        edges])
    if full:
        f = np.concatenate([f, context(planes, k.astype(np.int32), v)])
    return f.reshape(len(f), -1).T.copy(), k.reshape(NPROP, -1).T, v.reshape(NPROP, -1).T


# ---- a multi-output random forest on binned features ---------------------------------------
def make_bins(X, nbins):
    edges = []
    for j in range(X.shape[1]):
        q = np.unique(np.quantile(X[:, j], np.linspace(0, 1, nbins + 1)[1:-1]))
        edges.append(q)
    return edges


def binned(X, edges):
    out = np.empty(X.shape, np.uint8)
    for j, e in enumerate(edges):
        out[:, j] = np.searchsorted(e, X[:, j], side="right")
    return out


def fit_tree(Xb, Y, rng, nbins, depth, mtry, min_leaf):
    """Level-wise growth. Returns arrays feat, thr (left: bin <= thr), left, right, value."""
    n, F = Xb.shape
    K = Y.shape[1]
    feat, thr, left, right, value = [-1], [0], [-1], [-1], [Y.mean(0)]
    node = np.zeros(n, np.int64)       # the sample's node
    active = np.array([0])             # nodes to split this level
    samples = np.arange(n)
    for _ in range(depth):
        if len(active) == 0 or len(samples) == 0:
            break
        local = np.full(len(feat), -1, np.int64)
        local[active] = np.arange(len(active))
        ln = local[node[samples]]
        keep = ln >= 0
        samples, ln = samples[keep], ln[keep]
        A = len(active)
        fs = np.stack([rng.choice(F, mtry, replace=False) for _ in range(A)])  # A x mtry
        xb = Xb[samples[:, None], fs[ln]].astype(np.int64)                    # m x mtry
        code = ((ln[:, None] * mtry + np.arange(mtry)) * nbins + xb).ravel()
        size = A * mtry * nbins
        cnt = np.bincount(code, minlength=size).reshape(A, mtry, nbins).astype(np.float64)
        sums = np.stack([np.bincount(code, np.repeat(Y[samples, c], mtry), minlength=size)
                         for c in range(K)], -1).reshape(A, mtry, nbins, K)
        cl, sl = cnt.cumsum(2), sums.cumsum(2)
        ct, st = cl[:, :, -1:], sl[:, :, -1:]
        cr, sr = ct - cl, st - sl
        ok = (cl >= min_leaf) & (cr >= min_leaf)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = ((sl ** 2).sum(-1) / cl + (sr ** 2).sum(-1) / cr - (st ** 2).sum(-1) / ct)
        gain = np.where(ok, gain, -np.inf).reshape(A, -1)
        best = gain.argmax(1)
        bestgain = gain[np.arange(A), best]
        nxt = []
        for a, nd in enumerate(active):
            if not np.isfinite(bestgain[a]) or bestgain[a] <= 1e-9:
                continue
            j, b = divmod(int(best[a]), nbins)
            feat[nd], thr[nd] = int(fs[a, j]), b
            tot = ct[a, j, 0]
            li = len(feat)
            feat += [-1, -1]
            thr += [0, 0]
            left += [-1, -1]
            right += [-1, -1]
            value += [sl[a, j, b] / cl[a, j, b], sr[a, j, b] / cr[a, j, b]]
            left[nd], right[nd] = li, li + 1
            nxt += [li, li + 1]
            del tot
        # route the samples of split nodes
        fa = np.array(feat)[node[samples]]
        split = fa >= 0
        s2 = samples[split]
        nd2 = node[s2]
        goleft = Xb[s2, np.array(feat)[nd2]] <= np.array(thr)[nd2]
        node[s2] = np.where(goleft, np.array(left)[nd2], np.array(right)[nd2])
        samples = s2
        active = np.array(nxt, np.int64)
    return (np.array(feat), np.array(thr), np.array(left), np.array(right), np.array(value))


def predict_tree(tree, Xb):
    feat, thr, left, right, value = tree
    node = np.zeros(len(Xb), np.int64)
    idx = np.arange(len(Xb))
    while True:
        f = feat[node[idx]]
        inner = f >= 0
        if not inner.any():
            break
        idx = idx[inner]
        nd = node[idx]
        goleft = Xb[idx, feat[nd]] <= thr[nd]
        node[idx] = np.where(goleft, left[nd], right[nd])
    return value[node]


def fit_forest(X, Y, args, seed):
    rng = np.random.default_rng(seed)
    edges = make_bins(X[rng.choice(len(X), min(len(X), 200000), replace=False)], args.bins)
    Xb = binned(X, edges)
    mtry = max(1, int(round(np.sqrt(X.shape[1]) * args.mtry_scale)))
    trees = []
    for t in range(args.trees):
        boot = rng.integers(0, len(X), min(len(X), args.tree_samples))
        trees.append(fit_tree(Xb[boot], Y[boot], rng, args.bins, args.depth, mtry,
                              args.min_leaf))
    return edges, trees


def predict_forest(model, X):
    edges, trees = model
    Xb = binned(X, edges)
    p = np.zeros((len(X), NPROP))
    for t in trees:
        p += predict_tree(t, Xb)
    return p / len(trees)


def finish_and_score(scene, left16, right16, w, h, tmp, tag):
    name, _, _, gt, eval_opts, _ = scene
    lp, rp = os.path.join(tmp, "l.i16"), os.path.join(tmp, "r.i16")
    out = os.path.join(tmp, f"{name}-{tag}.pfm")
    left16.astype("<i2").tofile(lp)
    right16.astype("<i2").tofile(rp)
    subprocess.run([os.path.join(mb.BUILD, "sgm-paths-dump"), "--finish", str(w), str(h), lp, rp,
                    out], check=True)
    return float(loso.evaluate(out, gt, eval_opts)["bad2"]), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=32)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--bins", type=int, default=32)
    ap.add_argument("--min-leaf", type=int, default=40)
    ap.add_argument("--mtry-scale", type=float, default=1.0)
    ap.add_argument("--tree-samples", type=int, default=120000)
    ap.add_argument("--per-scene", type=int, default=30000,
                    help="contested training pixels sampled per scene")
    ap.add_argument("--features", choices=("basic", "full"), default="full",
                    help="basic: the per-pixel path features only; full: also each proposal's "
                         "LR consistency and 5x5 support and the sum's uniqueness margin")
    ap.add_argument("--seed", type=int, default=7, help="of the sampling and the forests")
    ap.add_argument("--json", help="write the table here")
    args = ap.parse_args()
    t_start = time.time()
    if not mb.data_available():
        sys.exit(f"sgm_forest_loso: no stereo data at {mb.DATA} (set STEREO_DATA)")
    with mb.tempdir() as tmp:
        scenes = loso.shared_scenes()
        scenes += loso.exposed_scenes(tmp, scenes)
        scenes += loso.synth_scenes(tmp, len(loso.GENERATED))
        scenes += loso.synth_scenes(tmp, len(loso.HARD), loso.HARD)
        data = {}
        t_dump = time.time()
        for sc in scenes:
            name = sc[0]
            planes, D = dump(sc, tmp)
            h, w = planes.shape[1:]
            X, k, v = features(planes, args.features == "full")
            g = read_gt(sc).ravel()
            right16 = planes[1].ravel().astype(np.int16)
            sgm16 = planes[0].ravel().astype(np.int16)
            sgm_bad2, sgm_path = finish_and_score(sc, sgm16, right16, w, h, tmp, "sgm")
            # the finish of the sum's own map is the product's output
            ref = os.path.join(tmp, name + "-ref.pfm")
            loso.bad2(sc, [], ref)
            a, b = loso.read_pfm(sgm_path), loso.read_pfm(ref)
            same = bool(np.array_equal(np.isfinite(a), np.isfinite(b)) and
                        np.array_equal(a[np.isfinite(a)], b[np.isfinite(b)]))
            known = np.isfinite(g)
            right = np.zeros((len(g), NPROP), np.float32)
            right[known] = np.abs(v[known] / 16.0 - g[known, None]) <= TOL
            nr = right.sum(1)
            contested = known & (nr > 0) & (nr < NPROP)
            data[name] = dict(X=X, v=v, Y=right, contested=contested, w=w, h=h, right16=right16,
                              sgm=sgm_bad2, same=same)
            print(f"{name:16} {w}x{h} D {D}: SGM bad-2 {sgm_bad2:6.2f} % (= stereo-match: {same})"
                  f", contested {100 * contested[known].mean():5.2f} % of GT pixels, some "
                  f"proposal right {100 * (nr[known] > 0).mean():5.2f} %", flush=True)
        t_dump = time.time() - t_dump
        t_fit = time.time()
        rng = np.random.default_rng(args.seed)
        groups = sorted({loso.scene_of(s[0]) for s in scenes},
                        key=lambda g: [loso.scene_of(s[0]) for s in scenes].index(g))
        rows = []
        for gi, grp in enumerate(groups):
            Xs, Ys = [], []
            for sc in scenes:
                if loso.scene_of(sc[0]) == grp:
                    continue
                dd = data[sc[0]]
                idx = np.flatnonzero(dd["contested"])
                idx = rng.choice(idx, min(len(idx), args.per_scene), replace=False)
                Xs.append(dd["X"][idx])
                Ys.append(dd["Y"][idx])
            model = fit_forest(np.concatenate(Xs), np.concatenate(Ys), args, seed=1000 * args.seed + gi)
            for sc in scenes:
                if loso.scene_of(sc[0]) != grp:
                    continue
                dd = data[sc[0]]
                p = predict_forest(model, dd["X"])
                p[:, 8] += 1e-6  # ties to the sum
                pick = p.argmax(1)
                chosen = dd["v"][np.arange(len(pick)), pick].astype(np.int16)
                fb, _ = finish_and_score(sc, chosen, dd["right16"], dd["w"], dd["h"], tmp,
                                         "forest")
                # the oracle: a right proposal wherever there is one (the sum first)
                y = dd["Y"].copy()
                y[:, 8] += 0.5
                opick = y.argmax(1)
                ob, _ = finish_and_score(sc, dd["v"][np.arange(len(opick)), opick].astype(
                    np.int16), dd["right16"], dd["w"], dd["h"], tmp, "oracle")
                changed = float((chosen != dd["v"][:, 8]).mean())
                rows.append(dict(scene=sc[0], group=group_of(sc[0]), sgm=dd["sgm"], forest=fb,
                                 oracle=ob, same=dd["same"], changed=100 * changed))
                print(f"{sc[0]:16} SGM {dd['sgm']:6.2f}  forest {fb:6.2f}  delta "
                      f"{fb - dd['sgm']:+6.2f}  oracle {ob:6.2f}  (another disparity than the "
                      f"sum's at {100 * changed:5.2f} % of the pixels)", flush=True)
        t_fit = time.time() - t_fit
    order = {s[0]: i for i, s in enumerate(scenes)}
    rows.sort(key=lambda r: order[r["scene"]])
    print("\nscene            group      SGM bad-2  forest bad-2   delta   oracle")
    for r in rows:
        print(f"{r['scene']:16} {r['group']:10} {r['sgm']:8.2f}  {r['forest']:11.2f}  "
              f"{r['forest'] - r['sgm']:+7.2f}  {r['oracle']:7.2f}")
    summary = {}
    for grp in ("shared", "x-", "generated", "harder", None):
        sel = [r for r in rows if grp is None or r["group"] == grp]
        s = sum(r["sgm"] for r in sel) / len(sel)
        f = sum(r["forest"] for r in sel) / len(sel)
        o = sum(r["oracle"] for r in sel) / len(sel)
        summary[grp or "all"] = {"sgm": s, "forest": f, "oracle": o, "n": len(sel)}
        print(f"mean {grp or 'all 22':10} ({len(sel):2}): SGM {s:6.2f}  forest {f:6.2f}  "
              f"delta {f - s:+6.2f}  oracle {o:6.2f}")
    total = time.time() - t_start
    print(f"time: dumps + features {t_dump:.0f} s, forests (16 fits) + predictions {t_fit:.0f} s, "
          f"total {total:.0f} s; all SGM maps = stereo-match: {all(r['same'] for r in rows)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "rows": rows, "summary": summary,
                       "time_s": total}, f, indent=1)


if __name__ == "__main__":
    main()
