/* SPDX-License-Identifier: Apache-2.0 */
/* mi.h — the mutual-information matching cost (cost "mi"): hierarchical MI as in Hirschmueller
 * 2008 (PAMI 30(2), sec. 3.1.2, the "HMI" of sec. 3.1 and the hierarchy of sec. 3.5; after Kim
 * et al. 2003). Images are the 8-bit grey (rectified) views, i = left grey, k = right grey.
 *
 * The table (mi_table_compute), from the pair and an initial disparity of the left view:
 *   1. Joint histogram H(i, k) = number of left pixels (x, y) whose initial disparity d is valid
 *      (not MI_NO_DISPARITY), with 0 <= x - d < w, and, when validity masks are given, both
 *      valid_left(x, y) and valid_right(x - d, y) nonzero; i = IL(x, y), k = IR(x - d, y).
 *      n = sum of H. P = H / n.  Occlusions are left out by the caller: the initial disparity
 *      comes out of the left-right check, whose failures are invalid.
 *   2. Parzen window: G = the 1-D Gaussian of sigma MI_PARZEN_SIGMA = 1 bin, taps t = -3..3
 *      (MI_PARZEN_RADIUS), g(t) = exp(-t^2 / 2). Smoothing S(v) convolves with g along each axis
 *      of the table (the 2-D window is the product of the two); at the table's edges only the
 *      taps inside 0..255 are used and the weights are renormalised to sum 1 over them.
 *   3. Joint entropy term (eq. 5/6 of the paper, without its common factor 1/n, which the
 *      quantisation in step 5 removes): h_LR = S( -log( max( S(P), eps ) ) ), with
 *      eps = MI_FLOOR_COUNT / n, a hundredth of one count, for bins the window leaves empty.
 *   4. Marginals P_L(i) = sum_k P(i, k), P_R(k) = sum_i P(i, k); h_L = S(-log(max(S(P_L),
 *      256 eps))) and h_R likewise (1-D). mi(i, k) = h_L(i) + h_R(k) - h_LR(i, k).
 *      A marginal's floor is the sum of the 256 floors of its joint bins: with the same floor
 *      for both, a right level k that no correspondence shows would get h_R(k) = h_LR(i, k) and
 *      mi(i, k) = h_L(i), the largest value of its row: the cheapest cost for a grey level
 *      never seen. With 256 eps it gets h_L(i) - log 256 instead.
 *   5. Cost = -mi, shifted and scaled to 0..MI_MAX_COST (lo, hi = min, max of mi over the table):
 *        table(i, k) = min(MI_MAX_COST, floor((hi - mi(i, k)) * MI_MAX_COST / (hi - lo) + 0.5))
 *      and 0 everywhere when hi == lo (also when n == 0: no information).
 *   Steps 1-5 run in double precision on the host, once per level, in both backends: the
 *   matching only ever sees the uint8 table, so the CPU and the GPU match with the same integer
 *   costs (bit-exact). tests/test_mi.py checks the table against a NumPy version of these steps.
 *
 * Tables per tile (mi_tables_compute; the stage's mi_tiles = G, default 5): one joint histogram
 * cannot express a radiometric difference that varies over the image (vignetting, which every
 * real pair has and whose centre differs between the cameras): a grey level of the left view
 * maps to another right level at the centre than in a corner, the histogram smears both, and
 * the matching collapses (docs/results.md). So the image (each level's, in its own pixels) is
 * split into G x G tiles, tile t = (y G / h) G + x G / w (integer division, row-major), and each
 * tile gets two tables, one per row parity q: table 2 t + q is made of the left pixels of tile t
 * on the rows of parity 1 - q (the right pixel may lie in another tile) and serves the rows of
 * parity q. A table made of a pixel's own correspondence rewards exactly the pair the initial
 * disparity gave it, and with a tile's few samples that reward is large: the matching then
 * repeats its initial disparity (on a pair of noise images, 89 % of the pixels stayed valid
 * with 5 x 5 tables of the pixels' own rows, 18 % with the rows crossed, 20 % with one table).
 * The left pixel (x, y) reads table stereo_mi_table(x, y, w, h, G) (stereo_math.h), of
 * stereo_mi_tables(G) = 2 G^2 (G = 1: the one table above, index 0). Per table, step 1 counts
 * H_tq, n_tq = sum H_tq, and with H, n the whole frame's (all rows, as above):
 *   P_tq = (H_tq + m H / n) / (n_tq + m),  eps_tq = MI_FLOOR_COUNT / (n_tq + m),
 * m = MI_TILE_PRIOR pseudo-counts shaped as the frame's histogram (a tile with few
 * correspondences, or none, gets nearly the frame's table; one with many, mostly its own), in
 * double precision as written (prior = m / n first, then (H_tq(j) + prior H(j)) / (n_tq + m));
 * steps 2-5 then run on P_tq with eps_tq, each table scaled to 0..MI_MAX_COST by its own lo, hi.
 * G = 1 is the single table above, bit for bit (P = H / n). n == 0: every table 0. G was chosen
 * by leaving one scene out (tools/loso.py --family mi), m among 1024, 2048, 8192 on the same
 * scenes: docs/tuning.md ("Cost mi's tables per tile") has the figures.
 *
 * Matching cost (sgm.h): C(x, y, d) = table_t[IL(x, y) * 256 + IR(x - d, y)], t =
 * stereo_mi_table(x, y, w, h, G) of the left pixel, MI_MAX_COST when x - d < 0. 8 * (MI_MAX_COST + 1023) < 65536, and
 * MI_MAX_COST + P2 <= 255 for P2 <= 192 (the CUDA aggregation's byte design).
 *
 * The hierarchy (the CPU driver is mi_hierarchy in stage_cpu.c): levels f = F .. 0, level f
 * being the pair box-averaged by 2^f (mi_downscale). F = the largest f <= MI_LEVELS (4, 1/16)
 * whose level still takes its disparity range (mi_level: D_f < w_f). At level F the initial
 * disparity is random (mi_random_disparity) and the level is matched MI_COARSE_ITERATIONS
 * times, each table from the previous result (the paper starts a random disparity at 1/16 and
 * iterates there). Each level's LR-checked left disparity, upscaled (mi_upscale_disparity), is
 * the initial disparity of the next level; level 0 is the full-size match that the stage
 * returns, over the full range dmin .. dmin + D - 1: the hierarchy only chooses the table, it
 * never narrows the search.
 */
#ifndef STEREO_MI_H
#define STEREO_MI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MI_MAX_COST 63
#define MI_LEVELS 4              /* coarsest level: 1/2^4 */
#define MI_COARSE_ITERATIONS 3
#define MI_PARZEN_SIGMA 1.0
#define MI_PARZEN_RADIUS 3
#define MI_FLOOR_COUNT 0.01
#define MI_SEED 0x5eed0000u      /* the random initial disparity's fixed seed */
#define MI_NO_DISPARITY ((int16_t)-32768) /* an initial disparity that gives no correspondence */
#define MI_TABLE_SIZE 65536
#define MI_TILES_MAX 8           /* the largest tile grid side (mi_tables_compute) */
#define MI_TILE_PRIOR 2048.0     /* m: a tile's prior, in pseudo-counts (tables per tile) */

/* Scratch for mi_table_compute: MI_SCRATCH_BYTES (histogram and the double tables). */
#define MI_SCRATCH_BYTES (MI_TABLE_SIZE * (2 * sizeof(uint32_t) + 3 * sizeof(double)) + \
                          6 * 256 * sizeof(double))

/* The table of steps 1-5 above. init: integer disparities of the left view (MI_NO_DISPARITY =
 * none), w*h; valid_left / valid_right may be NULL (all valid). mi_out (may be NULL): the
 * 65536 values mi(i, k) of step 4, index i * 256 + k. Returns n, the histogram's count. */
uint64_t mi_table_compute(const uint8_t *left, const uint8_t *right, int w, int h,
                          const int16_t *init, const uint8_t *valid_left,
                          const uint8_t *valid_right, uint8_t *table, double *mi_out,
                          void *scratch);

/* The tables per tile (above) of a grid x grid split (1 <= grid <= MI_TILES_MAX): tables
 * holds stereo_mi_tables(grid) tables of MI_TABLE_SIZE, table i at i * MI_TABLE_SIZE; mi_out
 * (may be NULL) likewise that many x 65536 values. grid 1 is mi_table_compute. Returns n, the
 * whole frame's count. */
uint64_t mi_tables_compute(const uint8_t *left, const uint8_t *right, int w, int h, int grid,
                           const int16_t *init, const uint8_t *valid_left,
                           const uint8_t *valid_right, uint8_t *tables, double *mi_out,
                           void *scratch);
/* ... in two parts, for running the tables in parallel: step 1's whole-frame histogram (hist:
 * MI_TABLE_SIZE counts; returns n), then table i of stereo_mi_tables(grid) from it (mi_out: its
 * 65536 values, or NULL). mi_table_of's scratch (MI_SCRATCH_BYTES) is its own per concurrent
 * call; it never writes the scratch's first MI_TABLE_SIZE counts, so hist may lie there. */
uint64_t mi_frame_histogram(const uint8_t *left, const uint8_t *right, int w, int h,
                            const int16_t *init, const uint8_t *valid_left,
                            const uint8_t *valid_right, uint32_t *hist);
void mi_table_of(const uint8_t *left, const uint8_t *right, int w, int h, int grid,
                 const int16_t *init, const uint8_t *valid_left, const uint8_t *valid_right,
                 const uint32_t *hist, uint64_t n, int i, uint8_t *table, double *mi_out,
                 void *scratch);

/* One level of the hierarchy for a stage of w x h with disparities dmin .. dmin + D - 1:
 *   w_f = ceil(w / 2^f), h_f = ceil(h / 2^f)
 *   dmin_f = floor(dmin / 2^f); span_f = floor((dmin + D - 1) / 2^f) + 1 - dmin_f (every
 *   disparity of the full range, scaled down), D_f = span_f rounded up to a multiple of 16
 *   (what the stage's aggregation takes: stereo_check_disparities; at the coarse levels this
 *   searches a little beyond the range, which only costs time). D_0 = D. */
typedef struct {
    int f, w, h, dmin, span, ndisp;
} mi_level;
void mi_level_geometry(int w, int h, int dmin, int D, int f, mi_level *out);
/* F: the largest f <= MI_LEVELS with D_f < w_f (0 when no coarser level fits). */
int mi_coarsest_level(int w, int h, int dmin, int D);

/* Rows [y0, y1) of level f of img (w x h): dst(x, y) = (sum of the 2^f x 2^f block at
 * (x 2^f, y 2^f), coordinates clamped to the image, + 2^(2f-1)) >> 2f; f = 0 copies. */
void mi_downscale_rows(const uint8_t *img, int w, int h, int f, uint8_t *dst, int y0, int y1);

/* The random initial disparity of a level: d(x, y) = lv->dmin + mi_hash(y * w_f + x) % span_f,
 * with mi_hash(v) the 32-bit mix below of v ^ MI_SEED. Deterministic. */
static inline uint32_t mi_hash(uint32_t v)
{
    v ^= MI_SEED;
    v ^= v >> 16;
    v *= 0x7feb352dU;
    v ^= v >> 15;
    v *= 0x846ca68bU;
    v ^= v >> 16;
    return v;
}
void mi_random_disparity(const mi_level *lv, int16_t *init);

/* A matched level's left disparity (16 d >= 0 or STEREO_INVALID, w x h: mi takes no negative minimum) as the initial disparity
 * of the same level: round(d) = (v + 8) >> 4, invalid -> MI_NO_DISPARITY. */
void mi_disparity_to_init(const int16_t *disp, int w, int h, int16_t *init);
/* ... and of the next finer level (w2 x h2, w2 <= 2 w, h2 <= 2 h): init(x, y) = 2 round(d(x/2,
 * y/2)) (integer division), invalid -> MI_NO_DISPARITY. */
void mi_upscale_disparity(const int16_t *disp, int w, int h, int16_t *init, int w2, int h2);

#ifdef __cplusplus
}
#endif
#endif
