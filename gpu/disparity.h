/* SPDX-License-Identifier: Apache-2.0 */
/* disparity.h — stages 6 to 8: from the summed costs S to the final disparity maps.
 *
 * 6. Left disparity, per pixel (x, y), over k = 0..D-1 (d = dmin + k):
 *    - k* = argmin S(x, y, k), ties to the smaller k; s1 = S(k*), s2 = min S(k) over |k - k*| > 1.
 *    - invalid when x < dmin (no candidate inside the right image), when the rectified left pixel
 *      is invalid (rectify.h), or when uniqueness u > 0 and !stereo_unique(s1, s2, u).
 *    - value 16 (dmin + k*) + offset, offset = stereo_subpixel_offset(S(k*-1), s1, S(k*+1)) when
 *      subpixel is on and 0 < k* < D-1, else 0.
 *    - confidence (optional) = stereo_confidence_value(s1, s2); 0 where the final left disparity
 *      is invalid.
 * 7. Right disparity by the diagonal search over the same S (Hirschmueller 2008, sec. 3.4): for
 *    right pixel (xr, y), k* = argmin over k with xr + dmin + k < w of S(xr + dmin + k, y, k),
 *    ties to the smaller k; value 16 (dmin + k*) (integer); invalid when no k qualifies or the
 *    rectified right pixel is invalid.
 *    Median: 3x3 median (stereo_median9) of each map, neighbours outside clamped to the border.
 *    LR check: a valid left value vl at x is kept iff stereo_lr_consistent(x, vl, right row,
 *    16 * tolerance). With more than two views, the sides rule and a view on the other side
 *    (multiview.h, mview_lr_occlusion_test; the right map is view 1's) iff
 *    stereo_lr_views_consistent(x, vl, the left row before the check, the right row,
 *    16 * tolerance): also kept where the two maps agree that x hides from view 1 the farther
 *    point the right map names there, or that x is hidden from view 1 by the nearer point it
 *    names (stereo_math.h).
 */
#ifndef STEREO_DISPARITY_H
#define STEREO_DISPARITY_H

#include <stddef.h>
#include <stdint.h>

#include "stereo_types.h"
#include "stereo_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int width, height;
    int dmin, ndisp;
    int uniqueness;    /* 0..99 */
    int subpixel;      /* 0/1 */
} wta_config;

/* Stage 6's result for pixel x (index p) of the row whose search found k* = best, s1, s2 and
 * sm1 = S(k* - 1), sp1 = S(k* + 1) (read only when 0 < k* < D - 1): disp[p], and conf[p] when
 * conf is not NULL. Shared by the reference and the fused path (sgm_simd.h). */
#ifndef __CUDACC__
static inline void disparity_wta_pixel(const wta_config *c, int x, size_t p, int best,
                                       uint32_t s1, uint32_t s2, uint32_t sm1, uint32_t sp1,
                                       const uint8_t *valid, int16_t *disp, uint8_t *conf)
{
    int ok = x >= c->dmin && (!valid || valid[p]) &&
             (c->uniqueness == 0 || stereo_unique(s1, s2, c->uniqueness));
    int v = STEREO_SUBPIXEL_SCALE * (c->dmin + best);
    if (c->subpixel && best > 0 && best < c->ndisp - 1)
        v += stereo_subpixel_offset((int)sm1, (int)s1, (int)sp1);
    disp[p] = ok ? (int16_t)v : STEREO_INVALID;
    if (conf)
        conf[p] = ok ? stereo_confidence_value(s1, s2) : 0;
}
#endif

/* Rows [y0, y1): disp (and conf when non-NULL) from S = S1 + S2 (S2 may be NULL: S = S1; the
 * CPU's two aggregation sweeps each leave a partial sum). valid may be NULL (all valid). */
void disparity_wta_rows(const wta_config *c, const uint16_t *S1, const uint16_t *S2,
                        const uint8_t *valid, int16_t *disp, uint8_t *conf, int y0, int y1);
void disparity_right_rows(const wta_config *c, const uint16_t *S1, const uint16_t *S2,
                          const uint8_t *valid_right, int16_t *disp_right, int y0, int y1);
void median3x3_rows(const int16_t *in, int w, int h, int16_t *out, int y0, int y1);
/* In place on disp (rows [y0, y1)); conf (optional) is zeroed where disp becomes invalid. */
void lr_check_rows(int16_t *disp, const int16_t *disp_right, int w, int tolerance, int y0, int y1);
/* The LR check of more than two views (stereo_lr_views_consistent), in place, each row right to
 * left (a ring of STEREO_LR_RING values keeps the row right of x as it was before the check). */
void lr_check_views_rows(int16_t *disp, const int16_t *disp_right, int w, int tolerance, int y0,
                         int y1);
/* Zeroes conf where disp is invalid. */
void confidence_mask_rows(const int16_t *disp, uint8_t *conf, int w, int y0, int y1);

/* A negative minimum disparity -m (stereo_types.h, STEREO_MIN_DISPARITY): stages 3-8 match the left
 * view against the right view shifted left by m pixels, R'(x) = R(min(x + m, w - 1)), over
 * 0 .. D - 1, and their two maps are then shifted back (before the post-filters):
 *  - left value v at x: STEREO_INVALID where v is invalid or its match lies right of the right
 *    image (x + m - floor(v / 16) > w - 1, where R' repeats R's last column), else v - 16 m;
 *  - right map: the value at R' column c belongs to R column c + m: out(c) = in(c - m) - 16 m
 *    (invalid stays invalid), STEREO_INVALID for c < m (R's columns R' does not hold).
 * Both backends use these rules (disparity.c; disparity.cu, stage_cuda.cu). */
STEREO_HD int disparity_unshift_left(int v, int x, int w, int m)
{
    return v < 0 || x + m - (v >> 4) > w - 1 ? STEREO_INVALID : v - STEREO_SUBPIXEL_SCALE * m;
}
STEREO_HD int disparity_unshift_right(int v, int m)
{
    return v < 0 ? STEREO_INVALID : v - STEREO_SUBPIXEL_SCALE * m;
}
/* In place, rows [y0, y1): row[x] = row[min(x + m, w - 1)] (R', above), of an image of w bytes
 * per row. */
void disparity_shift_rows(uint8_t *img, int w, int m, int y0, int y1);
/* In place, rows [y0, y1): the left map (conf, when not NULL, zeroed where it becomes invalid)
 * and the right map (NULL: none) shifted back by the rules above. */
void disparity_unshift_rows(int16_t *disp, int16_t *disp_right, uint8_t *conf, int w, int m,
                            int y0, int y1);

/* Matches that pile up at the top of the search range dmin .. dmin + ndisp - 1: the share
 * (0..1) of the valid pixels of disp (n values, 16ths of a pixel) at the largest disparity
 * searched (where the winner-takes-all found its minimum at the range's end: no subpixel step
 * there), 0 without valid pixels. Points nearer than the range reaches are matched there (or to
 * noise): a share above DISPARITY_TOP_WARN says the range is too small for the scene. */
/* measured on six Middlebury scenes and a generated one: 0-0.04 % with a range that holds the
 * scene, 2.6-18 % with half of it */
#define DISPARITY_TOP_WARN 0.01
double disparity_top_share(const int16_t *disp, size_t n, int dmin, int ndisp);

#ifdef __cplusplus
}
#endif
#endif
