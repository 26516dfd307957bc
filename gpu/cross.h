/* SPDX-License-Identifier: Apache-2.0 */
/* cross.h — two refinements of Mei et al. 2011 ("On building an accurate stereo matching system
 * on graphics hardware") around SGM, each a stage option, off by default (docs/tuning.md has
 * what they gain and cost):
 *
 * 4b. Cross-based cost aggregation (cross = N, 1..CROSS_ARM_MAX; 0 = off): after the cost
 *     volume (stage 4) and before the paths (stage 5), each pixel's cost at every disparity
 *     becomes the mean of the costs over its support region. Pixel p's arms come from the grey
 *     left view I of the level matched, by the rule of region voting (postfilter.h 9b) with the
 *     arm length capped at N instead of POSTFILTER_VOTE_L1: along each of the four directions e
 *     the arm covers q_k = p + k e, k = 1 .. N, while q_k is in the image,
 *     |I(q_k) - I(p)| < T1, |I(q_k) - I(q_k - e)| < T1 and (for k > L2) |I(q_k) - I(p)| < T2.
 *     The region: for each pixel q of p's column from y - up(p) to y + down(p), q's row segment
 *     from x - left(q) to x + right(q) (n(p) pixels, at least 1). In integers:
 *       H(q, k) = sum over q's row segment of C(., k)               (uint16: n <= 69 * 255)
 *       C'(p, k) = (sum over q of H(q, k) + n(p) / 2) / n(p)         (sum in uint32,
 *                                                                    cross_mean)
 *     so C' <= max_cost and the aggregation's byte design (sgm.h) holds. The region is the
 *     paper's; its arms of up to 34 px smear a slanted road or facade (docs/tuning.md), hence
 *     the cap. With more views C is the combined cost (multiview.h). Only the full-size match
 *     aggregates (the MI hierarchy's levels do not). The CPU (cross.c) and the GPU (cross.cu)
 *     compute the same bits: the CPU in place on the volume, H in a 16-bit scratch volume; the
 *     GPU so too, or with 1 px arms in one pass into a second volume (cross.cu).
 *
 * 8b. Depth-discontinuity adjustment (discontinuity = 1): after the LR check (stage 8) and
 *     before the post-filters, a valid pixel p = (x, y) whose left and right neighbours are both
 *     valid and differ by at least CROSS_EDGE (16ths: 2 px) lies on a disparity edge. With
 *     level(v) = ((v + 8) >> 4) - dmin clamped to 0..D-1 and C the stage's cost volume (after 4b
 *     when that is on: Mei et al. compare the aggregated cost), p takes the value of the
 *     neighbour whose level costs strictly less at p than p's own level; when both do, the
 *     cheaper one, the left on a tie. The map read is the one stage 8 left, whole (the order
 *     does not matter); the right map and the confidence are left alone. dmin is the range the
 *     volume was built over (with a negative minimum disparity, the shifted one: 8b runs before
 *     the maps are shifted back).
 */
#ifndef STEREO_CROSS_H
#define STEREO_CROSS_H

#include <stddef.h>
#include <stdint.h>

#include "stereo_math.h"
#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The arms' constants (Mei et al. 2011; region voting uses them too) */
#define CROSS_ARM_MAX 34 /* the paper's L1: the longest arm */
#define CROSS_ARM_L2 17  /* beyond this many pixels the tighter grey limit T2 holds */
#define CROSS_T1 20
#define CROSS_T2 6
#define CROSS_EDGE 32 /* 8b: a disparity edge, in 16ths of a pixel */

/* The length of pixel (x, y)'s arm along (dx, dy) (one of them 0, the other +-1) in the w x h
 * grey image g (pitch w), at most cap (<= CROSS_ARM_MAX). */
STEREO_HD int cross_arm(const uint8_t *g, int w, int h, int x, int y, int dx, int dy, int cap)
{
    const int c = g[(size_t)y * w + x];
    int prev = c, k = 0;
    while (k < cap) {
        const int qx = x + (k + 1) * dx, qy = y + (k + 1) * dy;
        if (qx < 0 || qx >= w || qy < 0 || qy >= h)
            break;
        const int q = g[(size_t)qy * w + qx];
        const int dc = q > c ? q - c : c - q, dp = q > prev ? q - prev : prev - q;
        if (dc >= CROSS_T1 || dp >= CROSS_T1 || (k + 1 > CROSS_ARM_L2 && dc >= CROSS_T2))
            break;
        prev = q;
        k++;
    }
    return k;
}

/* The four arms of (x, y) packed as left | right << 8 | up << 16 | down << 24. */
STEREO_HD uint32_t cross_arms(const uint8_t *g, int w, int h, int x, int y, int cap)
{
    return (uint32_t)cross_arm(g, w, h, x, y, -1, 0, cap) |
           (uint32_t)cross_arm(g, w, h, x, y, 1, 0, cap) << 8 |
           (uint32_t)cross_arm(g, w, h, x, y, 0, -1, cap) << 16 |
           (uint32_t)cross_arm(g, w, h, x, y, 0, 1, cap) << 24;
}

STEREO_HD int cross_left(uint32_t a) { return (int)(a & 0xff); }
STEREO_HD int cross_right(uint32_t a) { return (int)(a >> 8 & 0xff); }
STEREO_HD int cross_up(uint32_t a) { return (int)(a >> 16 & 0xff); }
STEREO_HD int cross_down(uint32_t a) { return (int)(a >> 24); }

/* 4b's mean of n pixels whose costs sum to sum, rounded half up: (sum + n / 2) / n, by a float
 * reciprocal (inv = 1.0f / n, correctly rounded on both backends): with n <= (2 CROSS_ARM_MAX +
 * 1)^2 and the mean <= 255 the product's error stays below 2^-14, the bias added, while the
 * quotient's fraction is 0 or at least 1 / n > 2^-13 from the next integer, so the result is the
 * integer quotient exactly, with or without a fused multiply-add (tests/test_cross.c checks it
 * at every boundary). A division per voxel would cost the CPU more than the sums. */
STEREO_HD int cross_mean(uint32_t sum, uint32_t n, float inv)
{
    return (int)((float)(sum + n / 2) * inv + 0x1p-14f);
}

/* 8b: the level of a valid value v (16ths) in a volume of ndisp levels from dmin */
STEREO_HD int cross_level(int v, int dmin, int ndisp)
{
    const int k = ((v + 8) >> 4) - dmin;
    return k < 0 ? 0 : k >= ndisp ? ndisp - 1 : k;
}

/* 8b at pixel i = y * w + x of map m (w x h; valid values >= STEREO_INVALID + 1, see
 * stereo_math.h), with its costs c = cost + i * ndisp: the adjusted value. */
STEREO_HD int16_t cross_adjust(const int16_t *m, const uint8_t *c, int w, int x, size_t i,
                               int dmin, int ndisp)
{
    const int16_t v = m[i];
    if (v == STEREO_INVALID || x == 0 || x == w - 1)
        return v;
    const int16_t l = m[i - 1], r = m[i + 1];
    if (l == STEREO_INVALID || r == STEREO_INVALID || (l > r ? l - r : r - l) < CROSS_EDGE)
        return v;
    const int cv = c[cross_level(v, dmin, ndisp)], cl = c[cross_level(l, dmin, ndisp)],
              cr = c[cross_level(r, dmin, ndisp)];
    if (cl < cv && cl <= cr)
        return l;
    return cr < cv ? r : v;
}

/* ---- the CPU (cross.c): row-parallel parts, rows [y0, y1) --------------------------------- */

/* arms[y * w + x] = cross_arms(grey, w, h, x, y, cap) */
void cross_arms_rows(const uint8_t *grey, int w, int h, int cap, uint32_t *arms, int y0, int y1);
/* H over each pixel's row segment (cost: w * h * ndisp, sgm.h's layout) */
void cross_hsum_rows(const uint8_t *cost, const uint32_t *arms, int w, int ndisp, uint16_t *H,
                     int y0, int y1);
/* the region's mean into cost (which cross_hsum_rows no longer reads) */
void cross_vsum_rows(const uint16_t *H, const uint32_t *arms, int w, int ndisp, uint8_t *cost,
                     int y0, int y1);
/* 8b: out = the adjusted in (out != in) */
void cross_adjust_rows(const int16_t *in, const uint8_t *cost, int w, int dmin, int ndisp,
                       int16_t *out, int y0, int y1);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>
/* The CUDA twins (cross.cu), in stream order. 4b on the device volume cost (w * h * ndisp):
 * arms up to CROSS_TILE_CAP (cross_tiled) write the result to out (w * h * ndisp) in one pass
 * over tiles; longer ones work in place on cost with arms (w * h) and H (w * h * ndisp uint16)
 * as scratch (out unused). The tiles win at arms of 1 px only (16-SM proxy, 640x480 D128:
 * 0.89 ms against 1.18 for the two passes; at 2 px 1.34 against 1.23; docs/cuda-notes.md).
 * 8b from in to out (device maps, out != in). */
#define CROSS_TILE_CAP 1
static inline int cross_tiled(int cap) { return cap <= CROSS_TILE_CAP; }
cudaError_t launch_cross_aggregate(const uint8_t *grey, int w, int h, int ndisp, int cap,
                                   uint8_t *cost, uint8_t *out, uint32_t *arms, uint16_t *H,
                                   cudaStream_t st);
cudaError_t launch_cross_adjust(const int16_t *in, const uint8_t *cost, int w, int h, int dmin,
                                int ndisp, int16_t *out, cudaStream_t st);
#endif
#endif
