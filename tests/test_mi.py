# SPDX-License-Identifier: Apache-2.0
"""The MI table of gpu/mi.h against a straightforward NumPy version of its five steps (joint
histogram, Parzen window, -log with the floor, entropies, quantisation), and the tables per tile
(per tile and row parity, the other parity's histogram with the frame's as a prior of
MI_TILE_PRIOR counts), through
build/tests/mi-table-dump. Prints TAP.

Tolerance: mi(i, k) (float64) within 1e-9 absolute or relative: both sides compute the same sums
in double precision in a different order, so they agree to about 1e-12. The uint8 table must be
equal except where the NumPy value of (hi - mi) * 63 / (hi - lo) + 0.5 lies within 1e-6 of an
integer (a rounding boundary, where the order of the sums may decide): there a difference of 1 is
allowed, and none is expected on these inputs.
"""
import os
import struct
import subprocess
import sys

import numpy as np

BUILD = os.environ.get("STEREO_BUILD", "build")
TOOL = os.path.join(BUILD, "tests", "mi-table-dump")
MAX_COST, SIGMA, RADIUS, FLOOR_COUNT, NONE = 63, 1.0, 3, 0.01, -32768
TILE_PRIOR = 2048.0  # mi.h: MI_TILE_PRIOR


def smooth(v, axis):
    """Gaussian taps t = -3..3, renormalised over the taps inside 0..255 (mi.h, step 2)."""
    g = np.exp(-np.arange(-RADIUS, RADIUS + 1) ** 2 / (2 * SIGMA * SIGMA))
    v = np.moveaxis(np.asarray(v, dtype=np.float64), axis, 0)
    pad = [(RADIUS, RADIUS)] + [(0, 0)] * (v.ndim - 1)
    vp = np.pad(v, pad)
    ones = np.pad(np.ones(v.shape[0]), RADIUS)
    acc = np.zeros_like(v)
    wsum = np.zeros(v.shape[0])
    for j, gt in enumerate(g):
        acc += gt * vp[j:j + v.shape[0]]
        wsum += gt * ones[j:j + v.shape[0]]
    out = acc / wsum.reshape((-1,) + (1,) * (v.ndim - 1))
    return np.moveaxis(out, 0, axis)


def steps_2_to_5(p, eps):
    joint = smooth(smooth(p, 1), 0)
    h_lr = smooth(smooth(-np.log(np.maximum(joint, eps)), 1), 0)
    h_l = smooth(-np.log(np.maximum(smooth(p.sum(axis=1), 0), 256 * eps)), 0)
    h_r = smooth(-np.log(np.maximum(smooth(p.sum(axis=0), 0), 256 * eps)), 0)
    mi = h_l[:, None] + h_r[None, :] - h_lr
    lo, hi = mi.min(), mi.max()
    scaled = (hi - mi) * MAX_COST / (hi - lo) + 0.5
    table = np.minimum(np.floor(scaled), MAX_COST).astype(np.uint8)
    return mi, table, scaled


def correspondences(init, w, vl=None, vr=None):
    """(ys, xs, xr) of mi.h step 1: the left pixels with an initial disparity whose right pixel
    exists, both valid when the masks are given."""
    ys, xs = np.nonzero(init != NONE)
    xr = xs - init[ys, xs].astype(np.int64)
    keep = (xr >= 0) & (xr < w)
    ys, xs, xr = ys[keep], xs[keep], xr[keep]
    if vl is not None:
        keep = (vl[ys, xs] != 0) & (vr[ys, xr] != 0)
        ys, xs, xr = ys[keep], xs[keep], xr[keep]
    return ys, xs, xr


def numpy_tables(left, right, init, grid, vl=None, vr=None):
    """(n, mi, table, scaled) with a leading table axis (2 grid^2; grid 1: one): mi.h, tables
    per tile; table 2 t + q from the rows of parity 1 - q of tile t."""
    if grid == 1:
        n, mi, table, scaled = numpy_table(left, right, init, vl, vr)
        return n, mi[None], table[None], None if scaled is None else scaled[None]
    h, w = left.shape
    ys, xs, xr = correspondences(init, w, vl, vr)
    T = 2 * grid * grid
    hist = np.zeros((256, 256))
    np.add.at(hist, (left[ys, xs], right[ys, xr]), 1)
    n = int(hist.sum())
    if n == 0:
        return 0, np.zeros((T, 256, 256)), np.zeros((T, 256, 256), np.uint8), None
    table_of = 2 * ((ys * grid // h) * grid + xs * grid // w) + 1 - (ys & 1)
    out = [], [], []
    for t in range(T):
        sel = table_of == t
        ht = np.zeros((256, 256))
        np.add.at(ht, (left[ys[sel], xs[sel]], right[ys[sel], xr[sel]]), 1)
        den = sel.sum() + TILE_PRIOR
        for lst, v in zip(out, steps_2_to_5((ht + TILE_PRIOR / n * hist) / den,
                                            FLOOR_COUNT / den)):
            lst.append(v)
    return n, np.array(out[0]), np.array(out[1]), np.array(out[2])


def numpy_table(left, right, init, vl=None, vr=None):
    h, w = left.shape
    ys, xs, xr = correspondences(init, w, vl, vr)
    hist = np.zeros((256, 256))
    np.add.at(hist, (left[ys, xs], right[ys, xr]), 1)
    n = int(hist.sum())
    if n == 0:
        return 0, np.zeros((256, 256)), np.zeros((256, 256), np.uint8), None
    return (n, *steps_2_to_5(hist / n, FLOOR_COUNT / n))


def run_tool(left, right, init, vl=None, vr=None, grid=1):
    h, w = left.shape
    T = 2 * grid * grid if grid > 1 else 1
    blob = struct.pack("<iiB", w, h, (1 if vl is not None else 0) | (grid - 1) << 4)
    blob += left.astype(np.uint8).tobytes() + right.astype(np.uint8).tobytes()
    blob += init.astype("<i2").tobytes()
    if vl is not None:
        blob += vl.astype(np.uint8).tobytes() + vr.astype(np.uint8).tobytes()
    out = subprocess.run([TOOL], input=blob, capture_output=True, check=True).stdout
    n = struct.unpack("<Q", out[:8])[0]
    mi = np.frombuffer(out[8:8 + 8 * 65536 * T], "<f8").reshape(T, 256, 256)
    table = np.frombuffer(out[8 + 8 * 65536 * T:], np.uint8).reshape(T, 256, 256)
    return (n, mi, table) if grid > 1 else (n, mi[0], table[0])


def scene(rng, w, h, dmax):
    """A textured left image, the right view shifted by a smooth disparity and passed through
    a gain and a gamma, some noise; the true disparity with a few wrong and absent values."""
    base = rng.integers(0, 256, (h, w + dmax)).astype(np.float64)
    for _ in range(2):  # a little spatial correlation
        base = (base + np.roll(base, 1, 1) + np.roll(base, 1, 0)) / 3
    base = (base - base.min()) / (base.max() - base.min()) * 255
    disp = (np.arange(w)[None, :] * dmax // (2 * w) + np.arange(h)[:, None] * dmax // (2 * h))
    left = base[:, dmax:dmax + w]
    right = np.empty((h, w))
    cols = np.arange(w)
    for y in range(h):
        # right(x - d) = left(x): sample the base at x + d for the right image's column x
        right[y] = np.interp(cols, cols - disp[y], left[y], left=left[y, 0], right=left[y, -1])
    right = 255 * np.clip(1.2 * right / 255, 0, 1) ** 0.7 + rng.normal(0, 2, right.shape)
    init = disp.astype(np.int16).copy()
    init[rng.random(init.shape) < 0.1] = NONE
    wrong = rng.random(init.shape) < 0.1
    init[wrong] = rng.integers(0, dmax, wrong.sum())
    return (np.clip(np.round(left), 0, 255).astype(np.uint8),
            np.clip(np.round(right), 0, 255).astype(np.uint8), init)


def compare(name, got, want):
    n_g, mi_g, t_g = got
    n_w, mi_w, t_w, scaled = want
    problems = []
    if n_g != n_w:
        problems.append(f"n {n_g} != {n_w}")
    err = np.abs(mi_g - mi_w) / np.maximum(1.0, np.abs(mi_w))
    if err.max() > 1e-9:
        problems.append(f"mi differs by {err.max():.3g} (relative) at "
                        f"{np.unravel_index(err.argmax(), err.shape)}")
    diff = t_g.astype(int) - t_w.astype(int)
    boundary = np.zeros(diff.shape, bool) if scaled is None else \
        np.abs(scaled - np.round(scaled)) < 1e-6
    bad = (diff != 0) & ~((np.abs(diff) == 1) & boundary)
    if bad.any():
        problems.append(f"{bad.sum()} table entries differ, e.g. {np.argwhere(bad)[0]}: "
                        f"{t_g[tuple(np.argwhere(bad)[0])]} != {t_w[tuple(np.argwhere(bad)[0])]}")
    return problems, int((diff != 0).sum()), float(err.max())


def main():
    tests = []

    def check(ok, text):
        tests.append((ok, text))

    if not os.access(TOOL, os.X_OK):
        print("1..1\nnot ok 1 - %s is not built (run ninja)" % TOOL)
        return 1
    rng = np.random.default_rng(7)
    for (w, h, dmax, masks) in [(96, 64, 16, False), (131, 77, 24, True), (40, 30, 8, False)]:
        left, right, init = scene(rng, w, h, dmax)
        vl = vr = None
        if masks:
            vl = (rng.random(left.shape) > 0.05).astype(np.uint8)
            vr = (rng.random(left.shape) > 0.05).astype(np.uint8)
        got = run_tool(left, right, init, vl, vr)
        want = numpy_table(left, right, init, vl, vr)
        problems, ndiff, err = compare(f"{w}x{h}", got, want)
        check(not problems, f"{w}x{h} D{dmax}{' with validity masks' if masks else ''}: n {got[0]}, "
              f"mi max relative error {err:.2g}, {ndiff} table entries off by one at a rounding "
              f"boundary" + ("; " + "; ".join(problems) if problems else ""))
        if w == 96:
            # the table found the radiometric mapping: for each left grey level seen often, the
            # cheapest right level is near 255 (1.2 i / 255)^0.7 (noise 2, clipped at 255)
            counts = np.bincount(left[init != NONE], minlength=256)
            lut = 255 * np.clip(1.2 * np.arange(256) / 255, 0, 1) ** 0.7
            seen = np.nonzero(counts >= 20)[0]
            best = got[2][seen].argmin(axis=1)
            off = np.abs(best - lut[seen])
            check(np.median(off) <= 3 and len(seen) > 50,
                  f"the cheapest right level follows the gain and gamma: median distance "
                  f"{np.median(off):.1f}, 90th percentile {np.percentile(off, 90):.1f} over "
                  f"{len(seen)} left levels")
            check(got[2].min() == 0 and got[2].max() == MAX_COST,
                  f"the table spans 0..{MAX_COST}: {got[2].min()}..{got[2].max()}")
    # tables per tile, against the NumPy version; grid 8 on 40 x 30 has tiles of 5 x 3 or 4
    # pixels (the prior dominates), and the validity masks count per tile too
    for (w, h, dmax, masks, grid) in [(96, 64, 16, False, 3), (131, 77, 24, True, 5),
                                      (40, 30, 8, False, 8), (64, 48, 8, False, 2)]:
        left, right, init = scene(rng, w, h, dmax)
        vl = vr = None
        if masks:
            vl = (rng.random(left.shape) > 0.05).astype(np.uint8)
            vr = (rng.random(left.shape) > 0.05).astype(np.uint8)
        got = run_tool(left, right, init, vl, vr, grid)
        want = numpy_tables(left, right, init, grid, vl, vr)
        problems, ndiff, err = compare(f"{w}x{h}", got, want)
        check(not problems, f"{w}x{h} D{dmax} in {grid}x{grid} tiles"
              f"{' with validity masks' if masks else ''}: n {got[0]}, mi max relative error "
              f"{err:.2g}, {ndiff} table entries off by one at a rounding boundary" +
              ("; " + "; ".join(problems) if problems else ""))
    # an empty tile: both its tables are the frame's histogram alone, P = H / n with the floor
    # of m counts (MI_FLOOR_COUNT / m), as the NumPy version has it
    left, right, init = scene(rng, 96, 64, 16)
    init[:32, :48] = NONE  # tile 0 (tables 0 and 1) sees no correspondence
    got = run_tool(left, right, init, grid=2)
    want = numpy_tables(left, right, init, 2)
    problems, ndiff, err = compare("empty tile", got, want)
    check(not problems and np.array_equal(got[2][0], got[2][1]),
          f"an empty tile: its two tables equal, and the NumPy version's (mi max relative error "
          f"{err:.2g})" + ("; " + "; ".join(problems) if problems else ""))
    # a vignetted right view (gain 1 at the left edge, 0.6 at the right): the left tile's
    # cheapest right level stays near i, the right tile's near 0.6 i
    left, right, init = scene(rng, 160, 64, 8)
    base = left.astype(np.float64)
    right = np.empty_like(base)
    for y in range(64):
        right[y] = np.interp(np.arange(160), np.arange(160) - init.clip(0)[y], base[y])
    right = np.clip(np.round(right * np.linspace(1.0, 0.6, 160)[None, :]), 0, 255).astype(np.uint8)
    n, mi, tab = run_tool(left, right, np.where(init == NONE, 0, init).astype(np.int16), grid=2)
    seen = np.nonzero(np.bincount(left[:, :80].ravel(), minlength=256) >= 15)[0]
    seen = seen[(seen > 30) & (seen < 225)]
    gl = np.median(tab[0][seen].argmin(axis=1) / seen)  # tile 0 (left), even rows
    gr = np.median(tab[2][seen].argmin(axis=1) / seen)  # tile 1 (right), even rows
    check(len(seen) > 30 and abs(gl - 0.9) < 0.1 and abs(gr - 0.7) < 0.1,
          f"vignetting: the left tile's cheapest right level is {gl:.2f} i, the right tile's "
          f"{gr:.2f} i (gains 1..0.8 and 0.8..0.6 over their halves)")
    # no correspondence at all: n = 0, every entry 0
    left, right, init = scene(rng, 32, 20, 8)
    init[:] = NONE
    n, mi, table = run_tool(left, right, init)
    check(n == 0 and not table.any() and not mi.any(),
          f"no initial disparity: n {n}, table all 0 ({int(table.max())} max)")
    # a disparity pointing out of the image on every pixel counts nothing
    init[:] = 1000
    n, mi, table = run_tool(left, right, init)
    check(n == 0 and not table.any(), f"disparities beyond the image: n {n}")
    # bad input: one line, exit 1
    r = subprocess.run([TOOL], input=struct.pack("<iiB", 64, 64, 0) + b"\0" * 100,
                       capture_output=True, text=False)
    msg = r.stderr.decode()
    check(r.returncode == 1 and msg.count("\n") == 1 and "shorter" in msg,
          f"short input: exit {r.returncode}, '{msg.strip()}'")

    print(f"1..{len(tests)}")
    for i, (ok, text) in enumerate(tests, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
