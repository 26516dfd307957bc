/* SPDX-License-Identifier: Apache-2.0 */
/* multiview.h — stage 4 with more than two views: the multi-baseline matching cost (Okutomi &
 * Kanade 1993, the sum over baselines; Kang, Szeliski & Chai 2001, the better side for
 * occlusions: the "sides" rule, the default).
 *
 * Input: the reference view (0) and views 1..N-1, rectified to one image plane with collinear
 * centres, each at the signed baseline ratio b_i = bq_i / 16 (stereo_types.h: b_1 = 1, bq_1 = 16).
 * The disparity d is measured against view 1; the candidate of reference pixel x in view i is at
 * x - b_i d. Each view's transform (rank, census) or grey image (ad, bt) is the one the two-view
 * stage computes; C_i(x, x') is the two-view cost (sgm.h) between the reference at x and view i
 * at the integer position x'. For adcensus each view has its own grey mapping M_i
 * (stereo_grey_match_lut of the frame's reference and view i histograms, as the pair's M of
 * view 1): C_i(x, x') = stereo_adcensus_cost(census distance, I_0(x), M_i(I_i(x')), ad_weight,
 * 62), so the grey term survives each camera's own gain, offset or gamma.
 *
 * Sampling rule (stereo_math.h, every step in integers so the CPU and GPU agree bit for bit):
 *   bq_i d = 16 o + f, o = floor(bq_i d / 16), f = 0..15
 *   C_i(x, d) = stereo_view_cost_lerp(C_i(x, x - o), C_i(x, x - o - 1), f)
 *             = ((16 - f) C_i(x, x - o) + f C_i(x, x - o - 1) + 8) >> 4
 * View i sees (x, d) when every pixel the rule reads lies in the image: 0 <= x - o < w, and also
 * x - o - 1 >= 0 when f > 0. For view 1, f = 0 and o = d: its cost is the two-view cost.
 *
 * Combination: with P the views with b_i > 0 that see (x, d) and M those with b_i < 0,
 *   sum:   C = the mean over P and M together, rounded half up: (sum + n/2) / n
 *          (stereo_view_mean); C = max_cost when no view sees (x, d), as the two-view cost
 *          outside the right image
 *   sides: the sum's C, except where both sides see (x, d) and one side looks occluded: mean_P
 *          and mean_M are the two sides' own means; their box sums B_P, B_M add the side's
 *          mean over the 5 x 5 window around x (STEREO_VIEW_BOX_RADIUS 2; the part inside the
 *          image; a side that does not see a window pixel counts max_cost there). When
 *          B_M > 2 B_P + F (STEREO_VIEW_SIDE_RATIO), C = mean_P; when B_P > 2 B_M + F,
 *          C = mean_M (stereo_view_select), where the floor F = 4 grey levels per window pixel
 *          inside the image for ad and bt (STEREO_VIEW_GREY_FLOOR, stereo_view_margin), 0 for
 *          rank, census and adcensus: on weak texture two small grey sums differ by a ratio of
 *          2 on noise alone (measured: tsukuba 3 views ad 4.58 % bad-2 without the floor,
 *          3.61 % with it, the pair 3.71 %). A point hidden from the views on one side of the
 *          reference is usually seen by those on the other (Kang, Szeliski & Chai 2001 take the
 *          better side by a window's cost, as here); taking the better side per pixel alone,
 *          without the window and the ratio, makes every wrong disparity cheaper too (measured:
 *          tsukuba 3 views 4.37 % bad-2 against 3.41 % with the window, the pair 3.72 %).
 * The means keep C in the two-view range 0..max_cost, so the penalties, the uint16 sum S and
 * everything after the cost volume (aggregation, winner-takes-all, subpixel, median,
 * confidence) stay as they are. The LR check stays against view 1 (the diagonal search over the
 * combined S), with an occlusion test from the reference's own map for the sides rule when a
 * view lies on the other side (mview_lr_occlusion_test, stereo_lr_views_consistent in
 * stereo_math.h): where the two maps agree on what view 1 sees, a pixel that hides from view 1
 * the farther point the diagonal search found there is kept, and so is a pixel that view 1
 * cannot see (the other side's view matched it).
 *
 * Border: position x' outside 0..w-1 is unseen (no replication), so a view never votes with a
 * made-up pixel; near the image sides fewer views decide.
 */
#ifndef STEREO_MULTIVIEW_H
#define STEREO_MULTIVIEW_H

#include <stdint.h>

#include "sgm.h"
#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const sgm_config *sgm;        /* width, height, dmin, ndisp, max_cost */
    stereo_cost cost;             /* rank, census, ad, bt or adcensus */
    int views;                    /* 3 .. STEREO_MAX_VIEWS */
    const int *baseline;          /* [views]: bq_i, baseline[0] = 0 */
    stereo_combine combine;       /* sum or sides */
    /* per view, the images of the cost: rank (rank), census (census, adcensus), grey (ad, bt,
     * adcensus) */
    const uint8_t *const *rank;
    const uint64_t *const *census;
    const uint8_t *const *grey;
    /* adcensus: ad_lut[i] (i = 1 .. views-1) view i's grey mapping M_i onto the reference
     * (stereo_grey_match_lut; [0] unused), and the weight (stereo_params.ad_weight) */
    const uint8_t (*ad_lut)[256];
    int ad_weight;
} mview_config;

/* Rows [y0, y1) of the sum rule's cost volume, laid out as sgm.h's (cost[(y w + x) D + k]);
 * with pos and neg (not NULL) also the two sides' means in the same layout (STEREO_VIEW_UNSEEN
 * where none of the side's views sees (x, d)), for the sides rule's second pass. */
void mview_cost_rows(const mview_config *m, uint8_t *cost, uint8_t *pos, uint8_t *neg, int y0,
                     int y1);
/* The sides rule's second pass over rows [y0, y1), once every row of pos and neg is there: cost
 * (the sum rule's, in place) becomes stereo_view_select of it, the sides' means and their box
 * sums. */
void mview_select_rows(const mview_config *m, const uint8_t *pos, const uint8_t *neg,
                       uint8_t *cost, int y0, int y1);

/* Whether the LR check takes the occlusion test (stereo_lr_views_consistent, disparity.h): more
 * than two views, the sides rule, and a view on the other side of the reference (b_i < 0), which
 * sees the points hidden from view 1 and, alone, matches them. Views on one side only keep the
 * plain check: what view 1 cannot see, none of them sees either, and the test would keep a
 * foreground widened over the hidden strip (measured: generated scene, b 1,2: 4.81 % bad-2 with
 * the test, 2.49 % without). The sum rule keeps it too: its mean takes in the view that does not
 * see a hidden point (measured with the test: 4 views 0.53 -> 0.71 % on the generated scene). */
static inline int mview_lr_occlusion_test(const stereo_params *p)
{
    if (p->views <= 2 || p->combine != STEREO_COMBINE_SIDES)
        return 0;
    for (int i = 1; i < p->views; i++)
        if (p->baseline[i] < 0)
            return 1;
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif
