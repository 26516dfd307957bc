/* SPDX-License-Identifier: Apache-2.0 */
/* transform.h — stage 3: the non-parametric transforms that make matching robust to gain and
 * offset differences between the cameras (Zabih & Woodfill 1994; rank as in Banz et al. 2011).
 *
 * Border rule (both transforms): window pixels outside the image take the value of the nearest
 * image pixel (coordinates clamped to [0, w-1] x [0, h-1], "replicate").
 *
 * Rank, odd window side n (3..15): rank(p) = #{ q in the n x n window around p : I(q) < I(p) },
 *   0 .. n*n-1 (0..80 for the default 9x9). Matching cost |rankL - rankR| in 0..n*n-1.
 *
 * Census 9x7 (9 wide, 7 high): 62 bits, one per window pixel other than the centre, in raster
 *   order (rows top to bottom, columns left to right); the first window pixel is the most
 *   significant bit (bit 61). A bit is 1 when I(q) < I(p). Matching cost = Hamming distance,
 *   0..62.
 *
 * The ad and bt costs need no transform: they compare the grey images themselves (sgm.h).
 */
#ifndef STEREO_TRANSFORM_H
#define STEREO_TRANSFORM_H

#include <stdint.h>
#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CENSUS_WIDTH 9
#define CENSUS_HEIGHT 7
#define CENSUS_BITS (CENSUS_WIDTH * CENSUS_HEIGHT - 1)
#define RANK_WINDOW_MAX 15
/* Cap of the ad and bt costs (stereo_math.h): grey differences above it count as this much. It
 * bounds one outlier's weight in the sums and keeps L <= cap + P2 and the block sums small
 * (sgm.h, block.h). */
#define STEREO_GREY_COST_MAX 63

/* Largest matching cost the transform can produce (also the cost of a disparity that points
 * outside the right image): 62 (census), window^2 - 1 (rank), STEREO_GREY_COST_MAX (ad, bt),
 * MI_MAX_COST (mi, mi.h; both 63). */
int transform_max_cost(stereo_cost cost, int rank_window);

/* Rows [y0, y1) of the w x h image img (tightly packed). */
void rank_transform_rows(const uint8_t *img, int w, int h, int window, uint8_t *out, int y0,
                         int y1);
void census_transform_rows(const uint8_t *img, int w, int h, uint64_t *out, int y0, int y1);

#ifdef __cplusplus
}
#endif
#endif
