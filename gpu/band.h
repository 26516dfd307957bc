/* SPDX-License-Identifier: Apache-2.0 */
/* band.h — the coarse-to-fine mode (stereo_params.band = W > 0): a fixed-width form of tSGM
 * (Rothermel et al. 2012). The stage first matches the pair at half size over half the range,
 * then searches at full size only W disparities per pixel, around the coarse result.
 *
 * 1. Coarse level. The rectified grey pair at half size, mi_downscale_rows with f = 1 (mi.h:
 *    the mean of each 2 x 2 block, rounded; w1 = ceil(w / 2), h1 = ceil(h / 2)), over level 1's
 *    range (mi_level_geometry, f = 1: dmin1 = dmin / 2, D1 = the scaled range rounded up to a
 *    multiple of 16, at most BAND_COARSE_MAX_D), matched by the whole stage with band_coarse_params: the stage's cost,
 *    window, paths, penalties, path weights and adaptive P2; SGM, subpixel, the median and the
 *    LR check (1 px); no uniqueness test, no confidence, no maps, no post-filters (postfilter.h).
 * 2. Band. Full-size pixel (x, y) searches k = s .. s + W - 1 (d = dmin + k), with
 *    s = clamp(c - W / 2, 0, D - W) around the centre c taken from the coarse left disparity
 *    v at (x / 2, y / 2) (16ths of a pixel at half size, so 2v / 16 = v / 8 at full size):
 *      - v valid:   c = ((v + 4) >> 3) - dmin
 *      - else the valid coarse disparities of the 5 x 5 window around it (clamped to the
 *        image): c = ((m + M + 8) >> 4) - dmin, the middle of their span (min m, max M);
 *      - none valid: c = D / 2.
 * 3. Costs and aggregation on the band: C(p, s(p) + j), j = 0 .. W - 1, by sgm.h's rule
 *    (max_cost where x - d < 0), and sgm.h's recurrence with L_r(p - r, k) absent (as beyond
 *    the ends of the range) where k lies outside the band of p - r; min_i L_r(p - r, i) is over
 *    p - r's band. S(p, j) = sum_r w_r L_r(p, s(p) + j).
 * 4. Disparities (disparity.h over the band): k* = s + j*, j* = argmin_j S(p, j) (ties to the
 *    smaller j); subpixel when 0 < j* < W - 1; s2 = min S over |j - j*| > 1; invalid when
 *    x < dmin + s (no candidate of the band inside the right image), on an invalid rectified
 *    pixel, or by the uniqueness test. Right disparity of right pixel xr: argmin over k of
 *    S(x, k - s(x)), x = xr + dmin + k < w, among the k inside x's band (ties to the smaller
 *    k); invalid when none is. Median, LR check and confidence as disparity.h.
 *
 * W is 32 or 64 and smaller than D. Not with cost mi (MI has a hierarchy of its own), method bm,
 * or more than two views (stereo_params_check).
 */
#ifndef STEREO_BAND_H
#define STEREO_BAND_H

#include <stddef.h>
#include <stdint.h>

#include "disparity.h"
#include "sgm.h"
#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BAND_WINDOW_RADIUS 2 /* the 5 x 5 coarse window of an invalid coarse pixel */
#define BAND_COARSE_MAX_D 256 /* the coarse level's D at most (what the CUDA stage runs with
                                 every option): 512 disparities above an odd dmin reach 272 */

/* 0 when band width W is one the stage takes for D; else -1 with why. */
int band_check(int W, int D, char *why, size_t whylen);

/* The coarse level's stage parameters (step 1) for the stage's p (p->band > 0). */
void band_coarse_params(const stereo_params *p, stereo_params *q);

/* Step 2 for rows [y0, y1) of the full size w x h: band[y * w + x] = s. coarse: the coarse
 * level's left disparity, w1 x h1. */
void band_from_coarse_rows(const int16_t *coarse, int w1, int h1, int w, int dmin, int D, int W,
                           uint16_t *band, int y0, int y1);

/* The inputs of the band's costs (those of the cost in use; the others may be NULL). */
typedef struct {
    stereo_cost cost;                 /* rank, census, ad, bt or adcensus */
    const uint8_t *rank[2];
    const uint64_t *census[2];
    const uint8_t *grey[2];
    const uint8_t *ad_lut;            /* adcensus: the grey mapping and the weight */
    int ad_weight;
} band_inputs;

/* Step 3's costs of rows [y0, y1): cost[(y * w + x) * W + j]. */
void band_cost_rows(const sgm_config *c, int W, const uint16_t *band, const band_inputs *in,
                    uint8_t *cost, int y0, int y1);

/* Step 3's aggregation, decomposed as sgm_aggregate_sweep (sgm.h): the forward or the backward
 * sweep's partial sum into S (W per pixel). */
size_t band_sweep_scratch_size(const sgm_config *c, int W);
void band_aggregate_sweep(const sgm_config *c, int W, const uint16_t *band, int backward,
                          int paths, const uint8_t *cost, const uint8_t *grey, uint16_t *S,
                          void *scratch);

/* Step 4 on rows [y0, y1), S = S1 + S2 (W per pixel): the left disparity (and confidence) and
 * the right disparity. */
void band_wta_rows(const wta_config *c, int W, const uint16_t *band, const uint16_t *S1,
                   const uint16_t *S2, const uint8_t *valid, int16_t *disp, uint8_t *conf,
                   int y0, int y1);
void band_right_rows(const wta_config *c, int W, const uint16_t *band, const uint16_t *S1,
                     const uint16_t *S2, const uint8_t *valid_right, int16_t *disp_right,
                     int y0, int y1);

#ifdef __cplusplus
}
#endif
#endif
