/* SPDX-License-Identifier: Apache-2.0 */
/* multiview.h — stage 4 with more than two views: the multi-baseline matching cost (Okutomi &
 * Kanade 1993, the sum over baselines; Kang, Szeliski & Chai 2001, the better side for
 * occlusions, here the "sides" rule).
 *
 * Input: the reference view (0) and views 1..N-1, rectified to one image plane with collinear
 * centres, each at the signed baseline ratio b_i = bq_i / 16 (stereo.h: b_1 = 1, bq_1 = 16).
 * The disparity d is measured against view 1; the candidate of reference pixel x in view i is at
 * x - b_i d. Each view's transform (rank, census) or grey image (ad, bt) is the one the two-view
 * stage computes; C_i(x, x') is the two-view cost (sgm.h) between the reference at x and view i
 * at the integer position x'.
 *
 * Sampling rule (stereo_math.h, every step in integers so the CPU and GPU agree bit for bit):
 *   bq_i d = 16 o + f, o = floor(bq_i d / 16), f = 0..15
 *   C_i(x, d) = stereo_view_cost_lerp(C_i(x, x - o), C_i(x, x - o - 1), f)
 *             = ((16 - f) C_i(x, x - o) + f C_i(x, x - o - 1) + 8) >> 4
 * View i sees (x, d) when every pixel the rule reads lies in the image: 0 <= x - o < w, and also
 * x - o - 1 >= 0 when f > 0. For view 1, f = 0 and o = d: its cost is the two-view cost.
 *
 * Combination (stereo_view_combine): with P the views with b_i > 0 that see (x, d) and M those
 * with b_i < 0,
 *   sum:   C = mean over P and M together, rounded half up: (sum + n/2) / n
 *   sides: C = min(mean over P, mean over M), or the mean of the one side that sees it
 *   C = max_cost when no view sees (x, d) (as the two-view cost outside the right image).
 * The mean keeps C in the two-view range 0..max_cost, so the penalties, the uint16 sum S and
 * everything after the cost volume (aggregation, winner-takes-all, subpixel, median, LR check
 * against view 1, confidence) stay as they are.
 *
 * Border: position x' outside 0..w-1 is unseen (no replication), so a view never votes with a
 * made-up pixel; near the image sides fewer views decide.
 */
#ifndef STEREO_MULTIVIEW_H
#define STEREO_MULTIVIEW_H

#include <stdint.h>

#include "sgm.h"
#include "stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const sgm_config *sgm;        /* width, height, dmin, ndisp, max_cost */
    stereo_cost cost;             /* rank, census, ad or bt */
    int views;                    /* 3 .. STEREO_MAX_VIEWS */
    const int *baseline;          /* [views]: bq_i, baseline[0] = 0 */
    stereo_combine combine;       /* sum or sides */
    /* per view, the images of the cost: rank (rank), census (census), grey (ad, bt) */
    const uint8_t *const *rank;
    const uint64_t *const *census;
    const uint8_t *const *grey;
} mview_config;

/* Rows [y0, y1) of the combined cost volume, laid out as sgm.h's (cost[(y w + x) D + k]). */
void mview_cost_rows(const mview_config *m, uint8_t *cost, int y0, int y1);

#ifdef __cplusplus
}
#endif
#endif
