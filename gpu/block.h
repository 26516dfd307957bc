/* SPDX-License-Identifier: Apache-2.0 */
/* block.h — stage 5 of method bm: block matching (the local method of Zhu et al.), the fast
 * baseline beside SGM. The cost volume C (sgm.h; SAD when the cost is ad) is summed over an
 * N x N box around each pixel, for each disparity, and stages 6 to 8 (disparity.h) run on that
 * sum as they run on SGM's S:
 *
 *   S(x, y, k) = ( sum_{j=-r..r} sum_{i=-r..r} C(clamp(x + i), clamp(y + j), k) ) >> shift
 *
 * with r = N / 2 (N odd, 3..31), coordinates clamped to the image ("replicate", as the
 * transforms' border rule in transform.h), and shift = block_shift(max_cost, N), the smallest
 * shift that keeps the largest sum, max_cost * N^2, within uint16 (0 up to 65535: e.g. 0 for
 * census 62 at N = 31 and for ad 63 at N = 31 (60543), 1 for rank 9x9 (80) at N = 31).
 *
 * Two separable running sums, O(1) per pixel and disparity whatever N:
 *   vertical   V(x, y, k) = sum_j C(x, clamp(y + j), k)            uint16, at most 31 * 255
 *              each row from the previous one: V(y) = V(y-1) + C(clamp(y+r)) - C(clamp(y-r-1))
 *   horizontal H(x, y, k) = sum_i V(clamp(x + i), y, k)            uint32 accumulator, at most
 *              961 * 255 = 245055; H(x) = H(x-1) + V(clamp(x+r)) - V(clamp(x-r-1)); S = H >> shift
 * The right view's disparity comes from the same S by the diagonal search (disparity.h), as
 * with SGM.
 */
#ifndef STEREO_BLOCK_H
#define STEREO_BLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int width, height, ndisp;
    int block;     /* N: odd, 3..31 */
    int shift;     /* block_shift(max_cost, block) */
} block_config;

/* Smallest s >= 0 with (max_cost * n * n) >> s <= 65535. */
int block_shift(int max_cost, int n);

/* Rows [y0, y1) of V from the uint8 cost volume (w * h * D); a call starts with a full sum at
 * y0, so row ranges may run in parallel. */
void block_vertical_rows(const block_config *c, const uint8_t *cost, uint16_t *V, int y0, int y1);
/* Rows [y0, y1) of S from V. */
void block_horizontal_rows(const block_config *c, const uint16_t *V, uint16_t *S, int y0, int y1);

#ifdef __cplusplus
}
#endif
#endif
