/* SPDX-License-Identifier: Apache-2.0 */
/* sgm.h — stages 4 and 5: matching cost and semi-global aggregation (Hirschmueller 2008).
 *
 * Cost volume: cost[(y * w + x) * D + k] for k = 0..D-1, disparity d = dmin + k:
 *   C(x, y, d) = |rankL(x, y) - rankR(x - d, y)|        (rank)
 *              = popcount(censusL(x, y) ^ censusR(x - d, y))  (census)
 *              = stereo_ad_cost(IL(x, y), IR(x - d, y), cap)   (ad)
 *              = stereo_bt_cost(IL, loL, hiL, IR, loR, hiR, cap) (bt; the ranges from
 *                stereo_bt_range on each row of the grey images, stereo_math.h)
 *              = table[IL(x, y) * 256 + IR(x - d, y)]  (mi: grey values, the table of mi.h)
 *              = stereo_adcensus_cost(census distance, IL, lut[IR], ad_weight, 62)  (adcensus;
 *                lut = stereo_grey_match_lut of the frame's two grey images)
 *   with cap = max_cost = STEREO_GREY_COST_MAX for ad and bt (MI_MAX_COST for mi, the same 63),
 *   and C = max_cost when x - d < 0 (no right pixel to compare with).
 *
 * Aggregation along a direction r = (dx, dy) (eq. 13 of the 2008 paper), for each pixel p on a
 * path and k = 0..D-1, with L_r(p, k) = C(p, k) at the first pixel of the path:
 *   L_r(p, k) = C(p, k) + min( L_r(p-r, k),
 *                              L_r(p-r, k-1) + P1, L_r(p-r, k+1) + P1,
 *                              min_i L_r(p-r, i) + P2' ) - min_i L_r(p-r, i)
 * where the k-1 / k+1 terms are absent at the ends of the range, P1 = P1_r and P2 = P2_r are
 * the direction's own penalties (stereo_path_penalties) and
 * P2' = stereo_p2_adaptive(P1_r, P2_r, p2_adapt, I(p) - I(p-r)) on the grey (rectified) image.
 * L_r <= max_cost + P2_r fits uint16. The sum S(p, k) = sum over the paths of w_r L_r(p, k)
 * with the path weights w_r (default 1) is exact in uint16 because stereo_params_check demands
 * sum_r w_r (max_cost + P2_r) < 65536 (with weights 1: at most 8 * (224 + 1023) = 9976).
 * Weights > 1 spend S's headroom: with equal penalties the total weight sum_r w_r may reach
 * 65535 / (max_cost + P2), e.g. 315 for rank 9x9 with P2 = 128 but only 52 for rank 15x15
 * with P2 = 1023. The CUDA stage's byte design (one byte per L_r, launch.cuh sgm_fits_bytes:
 * max_cost + max(P2_r, P1_r + 1) <= 255) bounds each L_r, not S, so weights leave it as it is;
 * per-path penalties make it depend on the largest P2_r. The ad / bt / mi cap (63) is chosen like
 * census's 62 so that tuned P2s up to 192 keep that design. WTA, uniqueness and confidence
 * read S in uint32.
 *
 * Directions (index: dx, dy): 0: 1,0  1: -1,0  2: 0,1  3: 0,-1  4: 1,1  5: -1,1  6: 1,-1
 * 7: -1,-1. Four paths use 0..3; eight use 0..7. Every direction covers every pixel once, on
 * "lines" that are independent of each other: rows, columns, or diagonals that start on the
 * image edges the direction enters from (stereo_sgm_line_start in stereo_math.h; the GPU walks
 * them). The sum does not depend on the order the directions are added in.
 */
#ifndef STEREO_SGM_H
#define STEREO_SGM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int width, height;
    int dmin, ndisp;          /* d = dmin + k, k = 0..ndisp-1 */
    int p1, p2, p2_adapt;
    int max_cost;
    /* per_dir = 0: every direction takes p1 / p2 and weight 1. per_dir = 1: direction r takes
     * dir_p1[r], dir_p2[r] (both resolved, never 0) and weight dir_weight[r] (0..255). */
    int per_dir;
    int dir_p1[8], dir_p2[8], dir_weight[8];
} sgm_config;

void sgm_cost_ad_rows(const sgm_config *c, const uint8_t *grey_l, const uint8_t *grey_r,
                      uint8_t *cost, int y0, int y1);
void sgm_cost_bt_rows(const sgm_config *c, const uint8_t *grey_l, const uint8_t *grey_r,
                      uint8_t *cost, int y0, int y1);
void sgm_cost_rank_rows(const sgm_config *c, const uint8_t *rank_l, const uint8_t *rank_r,
                        uint8_t *cost, int y0, int y1);
void sgm_cost_census_rows(const sgm_config *c, const uint64_t *census_l, const uint64_t *census_r,
                          uint8_t *cost, int y0, int y1);
/* adcensus: stereo_adcensus_cost of the census words and the grey values, the right ones
 * mapped by lut (stereo_grey_match_lut), with the weight ad_weight */
void sgm_cost_adcensus_rows(const sgm_config *c, const uint64_t *census_l,
                            const uint64_t *census_r, const uint8_t *grey_l,
                            const uint8_t *grey_r, const uint8_t *lut, int weight, uint8_t *cost,
                            int y0, int y1);
/* bt: lo[x], hi[x] = stereo_bt_range of row[x] and its neighbours, the border pixel standing in
 * for a missing neighbour (also for the multi-view cost, multiview.h) */
void sgm_bt_row_range(const uint8_t *row, int w, uint8_t *lo, uint8_t *hi);
/* mi: stereo_mi_tables(grid) tables (mi.h: mi_tables_compute), pixel (x, y) reads table t =
 * stereo_mi_table(x, y, w, h, grid): tables[t * 65536 + i * 256 + k] (each <= c->max_cost) on
 * the grey images; grid 1: one table */
void sgm_cost_table_rows(const sgm_config *c, const uint8_t *grey_l, const uint8_t *grey_r,
                         const uint8_t *tables, int grid, uint8_t *cost, int y0, int y1);

/* The CPU reference's decomposition (the GPU's is another; both equal the recurrence): a
 * forward sweep (rows top to bottom, pixels left to right) computes directions 0, 2, 4, 5 and a
 * backward sweep (bottom to top, right to left) 1, 3, 7, 6 (only 0 / 2 and 1 / 3 with 4 paths);
 * each keeps the previous row's L of its row directions and writes the sum of its directions'
 * L into S (uint16). The two sweeps are independent (two threads) and S = S_fwd + S_bwd.
 * scratch: sgm_sweep_scratch_size() bytes per sweep. rows_done (may be NULL) is increased by
 * one (atomically, relaxed) after each row, for a progress report read by another thread. */
size_t sgm_sweep_scratch_size(const sgm_config *c);
void sgm_aggregate_sweep(const sgm_config *c, int backward, int paths, const uint8_t *cost,
                         const uint8_t *grey, uint16_t *S, void *scratch, uint64_t *rows_done);

#ifdef __cplusplus
}
#endif
#endif
