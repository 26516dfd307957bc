/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_math.h — the per-pixel integer formulas of the pipeline, shared by the CPU reference
 * (the .c files in gpu/) and the CUDA kernels (the .cu files). Keeping each formula in exactly one place is what
 * makes the two backends agree bit for bit: neither side re-types the arithmetic.
 *
 * Everything here is pure integer arithmetic with no undefined behaviour for the documented input
 * ranges, and compiles as C11 and as CUDA C++ (STEREO_HD marks host+device functions).
 */
#ifndef STEREO_MATH_H
#define STEREO_MATH_H

#include <stdint.h>

#ifdef __CUDACC__
#define STEREO_HD __host__ __device__ __forceinline__
#else
#define STEREO_HD static inline
#endif

/* CPU hot loops: on x86-64, gcc builds an AVX2 clone beside the baseline (SSE2) one and picks it
 * at load time on CPUs that have it; elsewhere (aarch64: NEON is baseline) a plain function. */
#if !defined(__CUDACC__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STEREO_HOT __attribute__((target_clones("avx2", "default")))
#else
#define STEREO_HOT
#endif

/* ---- 1. grey conversion ---------------------------------------------------------------------
 * BT.601 luma with 8-bit weights that sum to 256: Y = (77 R + 150 G + 29 B + 128) >> 8.
 * (0.299, 0.587, 0.114 scaled by 256 and rounded, then G adjusted so the sum is exactly 256,
 * which maps grey (v, v, v) to exactly v.) YUYV input uses its Y samples unchanged. */
STEREO_HD uint8_t stereo_grey_rgb(uint8_t r, uint8_t g, uint8_t b)
{
    return (uint8_t)((77u * r + 150u * g + 29u * b + 128u) >> 8);
}

/* ---- 2. rectification: bilinear sampling with 5-bit fractions --------------------------------
 * OpenCV's fixed-point map convention (INTER_BITS = 5): the output pixel samples the source at
 * (x + fx/32, y + fy/32) with integer (x, y) from map1 and fx = frac & 31, fy = frac >> 5 from
 * map2. Weights are products of 5-bit fractions, summing to 1024:
 *   v = (a (32-fx)(32-fy) + b fx (32-fy) + c (32-fx) fy + d fx fy + 512) >> 10
 * with a = I(x,y), b = I(x+1,y), c = I(x,y+1), d = I(x+1,y+1). A source pixel whose weight is 0
 * is never read, so an identity map (fx = fy = 0) reproduces the input exactly and may touch the
 * last row/column. The sample is INVALID (value 0) when any source pixel with non-zero weight lies
 * outside the source image. */
STEREO_HD int stereo_bilinear_valid(int x, int y, int fx, int fy, int w, int h)
{
    if (x < 0 || y < 0 || x >= w || y >= h)
        return 0;
    if (fx != 0 && x + 1 >= w)
        return 0;
    if (fy != 0 && y + 1 >= h)
        return 0;
    return 1;
}

STEREO_HD uint8_t stereo_bilinear(uint32_t a, uint32_t b, uint32_t c, uint32_t d, int fx, int fy)
{
    uint32_t ifx = 32u - (uint32_t)fx, ify = 32u - (uint32_t)fy;
    uint32_t v = a * ifx * ify + b * (uint32_t)fx * ify + c * ifx * (uint32_t)fy +
                 d * (uint32_t)fx * (uint32_t)fy;
    return (uint8_t)((v + 512u) >> 10);
}

/* ---- 4. matching costs on grey values (ad, bt; sgm.h) ---------------------------------------
 * Both are saturated at cap (STEREO_GREY_COST_MAX in transform.h) so that the cost volume stays
 * uint8 and the aggregation's range (sgm.h) holds.
 * AD (Zhu et al.): C = min(|IL(x) - IR(x - d)|, cap). */
STEREO_HD int stereo_ad_cost(int il, int ir, int cap)
{
    int v = il - ir;
    v = v < 0 ? -v : v;
    return v < cap ? v : cap;
}

/* AD-census (after Mei et al. 2011, in integers): the census distance h (0..62) plus weight / 8
 * of the grey difference, saturated at cap (the census's 62, so that census's penalties and the
 * aggregation's byte design hold): C = min(h + ((|IL - M(IR)| * weight) >> 3), cap), where M
 * (stereo_grey_match_lut) maps the right camera's grey levels onto the left's, so that the grey
 * term survives two cameras' different gain, offset or gamma (docs/tuning.md). */
STEREO_HD int stereo_adcensus_cost(int h, int il, int ir, int weight, int cap)
{
    int v = il - ir;
    v = h + (((v < 0 ? -v : v) * weight) >> 3);
    return v < cap ? v : cap;
}

/* AD-census's grey mapping M, histogram specification of the right view onto the left: from the
 * two views' 256-bin histograms (the same pixel count), lut[k] is the smallest left level i
 * whose cumulative count reaches the middle of right level k's bin:
 *   2 CL(i) >= CR(k - 1) + CR(k),  CL(i), CR(k) = left / right pixels <= i / k, CR(-1) = 0.
 * A monotonic global change of the right camera's response (gain, offset, gamma) is undone up to
 * the quantisation; identical histograms give lut[k] = k at every level present. Both views'
 * histograms count every pixel of the matched images (border and invalid pixels included). */
STEREO_HD void stereo_grey_match_lut(const uint32_t *hist_l, const uint32_t *hist_r, uint8_t *lut)
{
    uint64_t cl = hist_l[0], cr_prev = 0, cr = 0;
    int i = 0;
    for (int k = 0; k < 256; k++) {
        cr += hist_r[k];
        while (i < 255 && 2 * cl < cr_prev + cr)
            cl += hist_l[++i];
        lut[k] = (uint8_t)i;
        cr_prev = cr;
    }
}

/* BT (Birchfield & Tomasi 1998, sampling-insensitive): the range [lo, hi] that the linearly
 * interpolated image takes within half a pixel of x, from the half-pixel values as OpenCV's
 * StereoSGBM forms them: I- = (I(x) + I(x-1)) >> 1, I+ = (I(x) + I(x+1)) >> 1 (floor), a missing
 * neighbour at the image border replaced by I(x) itself; lo = min(I-, I, I+), hi = max(...). */
STEREO_HD void stereo_bt_range(int left_nb, int v, int right_nb, int *lo, int *hi)
{
    int a = (v + left_nb) >> 1, b = (v + right_nb) >> 1;
    int mn = a < b ? a : b, mx = a < b ? b : a;
    *lo = v < mn ? v : mn;
    *hi = v > mx ? v : mx;
}

/* The symmetric BT dissimilarity: dL = max(0, IL - hiR, loR - IL) (IL against the right image's
 * interpolated range around x - d), dR = max(0, IR - hiL, loL - IR); C = min(dL, dR, cap). */
STEREO_HD int stereo_bt_cost(int il, int lo_l, int hi_l, int ir, int lo_r, int hi_r, int cap)
{
    int dl = il - hi_r, t = lo_r - il;
    dl = dl > t ? dl : t;
    dl = dl > 0 ? dl : 0;
    int dr = ir - hi_l;
    t = lo_l - ir;
    dr = dr > t ? dr : t;
    dr = dr > 0 ? dr : 0;
    int v = dl < dr ? dl : dr;
    return v < cap ? v : cap;
}

/* ---- 4. multi-baseline matching: sampling a view at a fractional position (multiview.h) -----
 * View i's candidate for reference pixel x at disparity d lies at x - b_i d, with
 * b_i = bq / 16 (stereo.h, STEREO_BASELINE_SCALE). Split bq * d = 16 o + f with o = floor(bq d /
 * 16) and f = 0..15, so the position is x - o - f/16: between the pixels x - o and x - o - 1. */
STEREO_HD void stereo_view_offset(int bq, int d, int *o, int *f)
{
    int t = bq * d;
    int q = t >= 0 ? t / 16 : -((-t + 15) / 16); /* floor(t / 16) without a shift of a negative */
    *o = q;
    *f = t - 16 * q;
}

/* The cost at the fractional position: the two pixel costs c0 = C(x, x - o) and
 * c1 = C(x, x - o - 1) interpolated linearly with the weight f / 16 on c1, rounded half up:
 *   C = ((16 - f) c0 + f c1 + 8) >> 4      (c1 unused when f = 0; C <= max(c0, c1))
 * Interpolating the cost, not the image or its transform, works for every cost alike (a census
 * bit string has no in-between) and keeps C within the cost's range. */
STEREO_HD int stereo_view_cost_lerp(int c0, int c1, int f)
{
    return ((16 - f) * c0 + f * c1 + 8) >> 4;
}

/* The mean of n view costs (their sum) rounded half up, in the cost's own range; max_cost when
 * no view sees the position (n = 0), as a two-view disparity outside the right image. This is
 * the sum rule's cost, and the sides rule's where it does not pick a side. */
STEREO_HD int stereo_view_mean(int sum, int n, int max_cost)
{
    return n > 0 ? (sum + n / 2) / n : max_cost;
}

/* The sides rule (multiview.h): a side's mean is STEREO_VIEW_UNSEEN where none of its views sees
 * (x, d); its box sum adds the means over the (2R+1)^2 window around x (R =
 * STEREO_VIEW_BOX_RADIUS, the part inside the image, an unseen mean counting as max_cost). */
#define STEREO_VIEW_UNSEEN 255
#define STEREO_VIEW_BOX_RADIUS 2
#define STEREO_VIEW_SIDE_RATIO 2
/* The grey-value costs (ad, bt) add a floor to the ratio test: a side is taken for occluded only
 * when its box sum exceeds the other's STEREO_VIEW_SIDE_RATIO times plus STEREO_VIEW_GREY_FLOOR
 * per window pixel (grey levels, about the sensor noise). On weak texture both sides' grey
 * differences are a few levels, and a ratio of two small sums flips the side from disparity to
 * disparity on noise alone; the transforms (rank, census) measure order, not levels, and keep
 * floor 0 (docs/results.md, multi-baseline matching). */
#define STEREO_VIEW_GREY_FLOOR 4

/* The floor of the sides rule's test for a window of `pixels` pixels and cost kind cost_kind (a
 * stereo_cost): pixels * STEREO_VIEW_GREY_FLOOR for ad and bt, 0 for rank, census and adcensus
 * (whose census distance, the larger part of its cost, measures order, not levels). */
STEREO_HD int stereo_view_margin(int cost_kind, int pixels)
{
    return cost_kind == 2 /* STEREO_COST_AD */ || cost_kind == 3 /* STEREO_COST_BT */
               ? pixels * STEREO_VIEW_GREY_FLOOR
               : 0;
}

/* all: the mean over every view (stereo_view_mean); p, q: the means of the views with b > 0 and
 * b < 0; bp, bq: their box sums; margin: stereo_view_margin. When both sides see (x, d) and one
 * side's box sum is more than STEREO_VIEW_SIDE_RATIO times the other's plus margin, that side is
 * taken for occluded: the other side's mean alone. Otherwise all. */
STEREO_HD int stereo_view_select(int all, int p, int q, int bp, int bq, int margin)
{
    if (p == STEREO_VIEW_UNSEEN || q == STEREO_VIEW_UNSEEN)
        return all;
    if (bp > STEREO_VIEW_SIDE_RATIO * bq + margin)
        return q;
    if (bq > STEREO_VIEW_SIDE_RATIO * bp + margin)
        return p;
    return all;
}

/* ---- the coarse-to-fine mode: a pixel's band (band.h, step 2) ----------------------------
 * The band start s of full-size pixel (x, y) from the coarse level's left disparity (w1 x h1,
 * 16ths of a pixel at half size): around v / 8 when the coarse pixel is valid, else around the
 * middle of the valid values of the (2R + 1)^2 coarse window, else around D / 2; s clamped to
 * 0 .. D - W. */
STEREO_HD int stereo_band_start(const int16_t *coarse, int w1, int h1, int x, int y, int R,
                                int dmin, int D, int W)
{
    const int cx = x >> 1, cy = y >> 1;
    const int v = coarse[(size_t)cy * w1 + cx];
    int c;
    if (v >= 0) {
        c = ((v + 4) >> 3) - dmin;
    } else {
        int m = 0x7fff, M = -1;
        const int j0 = cy - R < 0 ? 0 : cy - R, j1 = cy + R > h1 - 1 ? h1 - 1 : cy + R;
        const int i0 = cx - R < 0 ? 0 : cx - R, i1 = cx + R > w1 - 1 ? w1 - 1 : cx + R;
        for (int j = j0; j <= j1; j++)
            for (int i = i0; i <= i1; i++) {
                const int u = coarse[(size_t)j * w1 + i];
                if (u >= 0) {
                    m = u < m ? u : m;
                    M = u > M ? u : M;
                }
            }
        c = M >= 0 ? ((m + M + 8) >> 4) - dmin : D / 2;
    }
    const int s = c - W / 2;
    return s < 0 ? 0 : s > D - W ? D - W : s;
}

/* ---- 5. SGM: the intensity-adaptive second penalty ----------------------------------------
 * Along a path, a large intensity step between consecutive pixels suggests a depth edge, where a
 * disparity jump should be cheaper (Hirschmueller 2008, sec. 3.3 suggests P2 inversely
 * proportional to the intensity gradient). With T = p2_adapt > 0:
 *   P2' = max(P1 + 1, floor(P2 * T / (T + |dI|)))
 * so dI = 0 keeps P2, dI = T halves it. T = 0 disables the adaptation (P2' = P2). */
STEREO_HD int stereo_p2_adaptive(int p1, int p2, int t, int di)
{
    if (t <= 0)
        return p2;
    if (di < 0)
        di = -di;
    int v = (p2 * t) / (t + di);
    return v > p1 + 1 ? v : p1 + 1;
}

/* The recurrence step for one disparity (sgm.h, eq. 13 of the 2008 paper):
 *   L = C + min(prev_k, min(prev_{k-1}, prev_{k+1}) + P1, min_prev + P2') - min_prev
 * `jump` is min_prev + P2'; absent neighbours at the ends of the range are passed as a value
 * larger than any reachable L (STEREO_SGM_FAR). */
#define STEREO_SGM_FAR 0x7fff
STEREO_HD int stereo_sgm_step(int cost, int prev_k, int prev_km1, int prev_kp1, int p1, int jump,
                              int min_prev)
{
    int side = (prev_km1 < prev_kp1 ? prev_km1 : prev_kp1) + p1;
    int v = prev_k < side ? prev_k : side;
    v = v < jump ? v : jump;
    return cost + v - min_prev;
}

/* Path geometry (sgm.h): direction i = (dx, dy); its independent lines and where each starts. */
STEREO_HD void stereo_sgm_direction(int dir, int *dx, int *dy)
{
    /* 0: 1,0  1: -1,0  2: 0,1  3: 0,-1  4: 1,1  5: -1,1  6: 1,-1  7: -1,-1 */
    *dx = dir == 2 || dir == 3 ? 0 : (dir & 1) ? -1 : 1;
    *dy = dir < 2 ? 0 : dir == 2 ? 1 : dir == 3 ? -1 : dir < 6 ? 1 : -1;
}

STEREO_HD int stereo_sgm_line_count(int dir, int w, int h)
{
    return dir < 2 ? h : dir < 4 ? w : w + h - 1;
}

STEREO_HD void stereo_sgm_line_start(int dir, int line, int w, int h, int *x, int *y)
{
    int dx, dy;
    stereo_sgm_direction(dir, &dx, &dy);
    if (dy == 0) {            /* rows */
        *x = dx > 0 ? 0 : w - 1;
        *y = line;
    } else if (dx == 0) {     /* columns */
        *x = line;
        *y = dy > 0 ? 0 : h - 1;
    } else if (line < w) {    /* diagonals entering through the first row ... */
        *x = line;
        *y = dy > 0 ? 0 : h - 1;
    } else {                  /* ... then through the first column */
        *x = dx > 0 ? 0 : w - 1;
        *y = dy > 0 ? line - w + 1 : h - 1 - (line - w + 1);
    }
}

/* The line of diagonal direction dir (4..7) that is the rank-th longest (rank 0..w+h-2; ties
 * in a fixed order), for walking the long lines first (sgm_dirs.cu). The lines entering through
 * the first row (line < w in stereo_sgm_line_start) are, from the longest, A_j = min(h, w - j)
 * steps long (line j when dx > 0, w - 1 - j when dx < 0); those entering through the first
 * column, B_j = min(w, h - 1 - j) steps (line w + j). Both lists are sorted; merged, the
 * full-length lines (min(w, h) steps) come first, then A and B alternate for each shorter
 * length. */
STEREO_HD int stereo_sgm_diag_line(int dir, int rank, int w, int h)
{
    int a, b; /* the rank-th line is A_a, or B_b when a < 0 */
    if (w >= h) {
        int nfull = w - h + 1; /* A_0 .. A_{w-h} */
        int t = rank - nfull;
        a = t < 0 ? rank : (t & 1) ? -1 : nfull + t / 2;
        b = t / 2;
    } else {
        int nfull = h - w + 1; /* A_0, B_0 .. B_{h-w-1} */
        int t = rank - nfull;
        a = rank == 0 ? 0 : t < 0 || (t & 1) ? -1 : 1 + t / 2;
        b = t < 0 ? rank - 1 : h - w + t / 2;
    }
    if (a < 0)
        return w + b;
    return (dir & 1) ? w - 1 - a : a; /* directions 5 and 7 have dx < 0 */
}

/* ---- 6. subpixel: the parabola through S(d-1), S(d), S(d+1) in 1/16 px ----------------------
 * offset = 16 (c0 - c2) / (2 max(c0 + c2 - 2 c1, 1)), rounded to nearest with halves away from
 * zero. Because c1 is the minimum, |offset| <= 8 (half a pixel). */
STEREO_HD int stereo_div_round(int num, int den) /* den > 0; round half away from zero */
{
    return num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
}

STEREO_HD int stereo_subpixel_offset(int c0, int c1, int c2)
{
    int den = c0 + c2 - 2 * c1;
    if (den < 1)
        den = 1;
    return stereo_div_round(16 * (c0 - c2), 2 * den);
}

/* ---- 6. uniqueness (OpenCV's uniquenessRatio rule) ------------------------------------------
 * The best cost s1 at d* is rejected when a cost s2 at some d with |d - d*| > 1 satisfies
 * s2 * (100 - u) < s1 * 100. So with s2 = the smallest such cost: accept iff
 * s2 * (100 - u) >= s1 * 100. u = 0 accepts always. */
STEREO_HD int stereo_unique(uint32_t s1, uint32_t s2, int u)
{
    return s2 * (uint32_t)(100 - u) >= s1 * 100u;
}

/* ---- 8. confidence: relative gap between best and second-best (|d - d*| > 1) costs ----------
 * conf = 255 (s2 - s1) / s2, 0..255; 0 when s2 == 0 (then s1 == 0 too: no information). */
STEREO_HD uint8_t stereo_confidence_value(uint32_t s1, uint32_t s2)
{
    return s2 == 0 ? 0 : (uint8_t)((255u * (s2 - s1)) / s2);
}

/* ---- 7. left-right check ---------------------------------------------------------------------
 * Left value vl (16ths) maps to right column xr = x - round(vl / 16) with round = (vl + 8) >> 4.
 * Kept when xr is inside, the right value vr there is valid and |vl - vr| <= 16 * tolerance. */
STEREO_HD int stereo_lr_consistent(int x, int vl, const int16_t *right_row, int tol16)
{
    int xr = x - ((vl + 8) >> 4);
    if (xr < 0)
        return 0;
    int vr = right_row[xr];
    if (vr < 0)
        return 0;
    int diff = vl - vr;
    if (diff < 0)
        diff = -diff;
    return diff <= tol16;
}

/* ---- 7. left-right check with more than two views ---------------------------------------------
 * The check stays against view 1, with an occlusion test from the reference's own map. With a
 * view on the other side, a point hidden from view 1 is matched through that view, which the
 * check against view 1 cannot confirm, and the diagonal search for view 1's disparity
 * (disparity.h) may find such a point instead of the nearer surface that view 1 sees in the same
 * column, so that a correct foreground pixel fails the plain check too. A valid left value vl at
 * x that fails stereo_lr_consistent is kept when, with xr = x - round(vl / 16) inside and the
 * right value vr there valid, the two maps agree on what view 1 sees at xr:
 *   - foreground kept: vr < vl - tol16 names a farther point x' = xr + vr / 16 < x, and the left
 *     map has x' at vr (within tol16): x, nearer, hides x' from view 1, so view 1 sees x at xr;
 *     and x's STEREO_LR_RUN - 1 left neighbours are within tol16 of vl;
 *   - hidden point kept: vr > vl + tol16 names a nearer point x'' = xr + vr / 16 > x, and the
 *     left map has x'' at vr: x'' hides x from view 1, which cannot check it (the other side's
 *     view matched it); and x's STEREO_LR_RUN - 1 right neighbours are within tol16 of vl.
 * The runs keep single pixels out: a foreground edge that SGM or the median widened by a pixel or
 * two onto the background meets the first condition too, a stray value the second (measured in
 * docs/results.md). Every value read is the left map before the check: left[i] for i < x,
 * ahead[i & ring] for i > x (ring: an index mask; -1 reads ahead[i] itself, a ring of
 * STEREO_LR_RING entries is enough, as x'' - x <= D - 1 < 256). */
#define STEREO_LR_RUN 3
#define STEREO_LR_RING 256

STEREO_HD int stereo_lr_views_consistent(int x, int vl, int w, const int16_t *left,
                                         const int16_t *ahead, int ring,
                                         const int16_t *right_row, int tol16)
{
    int xr = x - ((vl + 8) >> 4); /* stereo_lr_consistent's lookup, once */
    if (xr < 0)
        return 0;
    int vr = right_row[xr];
    if (vr < 0)
        return 0;
    int xp = xr + (vr >> 4), vp, dp;
    if (vr < vl - tol16) { /* a farther point behind x */
        if (xp >= x || x < STEREO_LR_RUN - 1)
            return 0;
        vp = left[xp];
        for (int j = 1; j < STEREO_LR_RUN; j++) {
            int vn = left[x - j], dn = vn - vl;
            if (vn < 0 || (dn < 0 ? -dn : dn) > tol16)
                return 0;
        }
    } else if (vr > vl + tol16) { /* a nearer point in front of x */
        if (xp <= x || xp >= w || x + STEREO_LR_RUN - 1 >= w)
            return 0;
        vp = ahead[xp & ring];
        for (int j = 1; j < STEREO_LR_RUN; j++) {
            int vn = ahead[(x + j) & ring], dn = vn - vl;
            if (vn < 0 || (dn < 0 ? -dn : dn) > tol16)
                return 0;
        }
    } else {
        return 1; /* |vl - vr| <= tol16: the plain check holds */
    }
    dp = vp - vr;
    return vp >= 0 && (dp < 0 ? -dp : dp) <= tol16;
}

/* ---- 7. 3x3 median of int16 values: a 19-exchange sorting network (Paeth / Devillard
 * style selection), returning the 5th smallest. Invalid values (-1) take part as ordinary values,
 * so a pixel surrounded by mostly invalid neighbours becomes invalid. */
#define STEREO_SORT2(a, b)         \
    do {                           \
        int16_t lo_ = (a) < (b) ? (a) : (b); \
        int16_t hi_ = (a) < (b) ? (b) : (a); \
        (a) = lo_;                 \
        (b) = hi_;                 \
    } while (0)

STEREO_HD int16_t stereo_median9(int16_t p0, int16_t p1, int16_t p2, int16_t p3, int16_t p4,
                                 int16_t p5, int16_t p6, int16_t p7, int16_t p8)
{
    STEREO_SORT2(p1, p2); STEREO_SORT2(p4, p5); STEREO_SORT2(p7, p8);
    STEREO_SORT2(p0, p1); STEREO_SORT2(p3, p4); STEREO_SORT2(p6, p7);
    STEREO_SORT2(p1, p2); STEREO_SORT2(p4, p5); STEREO_SORT2(p7, p8);
    STEREO_SORT2(p0, p3); STEREO_SORT2(p5, p8); STEREO_SORT2(p4, p7);
    STEREO_SORT2(p3, p6); STEREO_SORT2(p1, p4); STEREO_SORT2(p2, p5);
    STEREO_SORT2(p4, p7); STEREO_SORT2(p4, p2); STEREO_SORT2(p6, p4);
    STEREO_SORT2(p4, p2);
    return p4;
}

/* ---- cost mi's tables per tile (mi.h) --------------------------------------------------------
 * A w x h image split into a grid x grid of tiles, tile t = (y grid / h) grid + x grid / w
 * (row-major), each with two tables: table 2t + q, made of the rows of parity 1 - q of tile t,
 * serves the rows of parity q (a pixel never reads a table its own correspondence went into).
 * stereo_mi_tables: how many tables (grid 1: one, for the whole frame); stereo_mi_table: the
 * one the left pixel (x, y) reads. */
STEREO_HD int stereo_mi_tables(int grid)
{
    return grid > 1 ? 2 * grid * grid : 1;
}

STEREO_HD int stereo_mi_table(int x, int y, int w, int h, int grid)
{
    return grid > 1 ? 2 * ((y * grid / h) * grid + x * grid / w) + (y & 1) : 0;
}

#endif
