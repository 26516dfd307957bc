/* SPDX-License-Identifier: Apache-2.0 */
/* sgm.c — CPU reference of stages 4 and 5 (see sgm.h). */
#include "sgm.h"

#include <stdlib.h>
#include <string.h>

#include "stereo_math.h"

/* How many disparities of pixel x point inside the right image: k < inside has x - d >= 0
 * (sgm.h); the others cost max_cost. */
static inline int inside_count(const sgm_config *c, int x)
{
    int inside = x - c->dmin + 1;
    return inside > c->ndisp ? c->ndisp : inside < 0 ? 0 : inside;
}

STEREO_HOT void sgm_cost_rank_rows(const sgm_config *c, const uint8_t *rank_l, const uint8_t *rank_r,
                        uint8_t *cost, int y0, int y1)
{
    int w = c->width, D = c->ndisp;
    for (int y = y0; y < y1; y++) {
        const uint8_t *rl = rank_l + (size_t)y * w, *rr = rank_r + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + ((size_t)y * w + x) * D;
            int inside = inside_count(c, x);
            int base = rl[x];
            const uint8_t *q = rr + x - c->dmin; /* q[-k] = rankR(x - d) */
            for (int k = 0; k < inside; k++) {
                int v = base - q[-k];
                cp[k] = (uint8_t)(v < 0 ? -v : v);
            }
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

STEREO_HOT void sgm_cost_ad_rows(const sgm_config *c, const uint8_t *grey_l, const uint8_t *grey_r,
                                 uint8_t *cost, int y0, int y1)
{
    int w = c->width, D = c->ndisp, cap = c->max_cost;
    for (int y = y0; y < y1; y++) {
        const uint8_t *gl = grey_l + (size_t)y * w, *gr = grey_r + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + ((size_t)y * w + x) * D;
            int inside = inside_count(c, x), base = gl[x];
            const uint8_t *q = gr + x - c->dmin; /* q[-k] = IR(x - d) */
            for (int k = 0; k < inside; k++)
                cp[k] = (uint8_t)stereo_ad_cost(base, q[-k], cap);
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

/* lo / hi of stereo_bt_range for every pixel of a row (sgm.h) */
void sgm_bt_row_range(const uint8_t *row, int w, uint8_t *lo, uint8_t *hi)
{
    for (int x = 0; x < w; x++) {
        int l, h;
        stereo_bt_range(row[x > 0 ? x - 1 : x], row[x], row[x + 1 < w ? x + 1 : x], &l, &h);
        lo[x] = (uint8_t)l;
        hi[x] = (uint8_t)h;
    }
}

STEREO_HOT void sgm_cost_bt_rows(const sgm_config *c, const uint8_t *grey_l, const uint8_t *grey_r,
                                 uint8_t *cost, int y0, int y1)
{
    int w = c->width, D = c->ndisp, cap = c->max_cost;
    uint8_t lo_l[w], hi_l[w], lo_r[w], hi_r[w];
    for (int y = y0; y < y1; y++) {
        const uint8_t *gl = grey_l + (size_t)y * w, *gr = grey_r + (size_t)y * w;
        sgm_bt_row_range(gl, w, lo_l, hi_l);
        sgm_bt_row_range(gr, w, lo_r, hi_r);
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + ((size_t)y * w + x) * D;
            int inside = inside_count(c, x), il = gl[x], ll = lo_l[x], hl = hi_l[x];
            for (int k = 0; k < inside; k++) {
                int xr = x - c->dmin - k;
                cp[k] = (uint8_t)stereo_bt_cost(il, ll, hl, gr[xr], lo_r[xr], hi_r[xr], cap);
            }
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

void sgm_cost_census_rows(const sgm_config *c, const uint64_t *census_l, const uint64_t *census_r,
                          uint8_t *cost, int y0, int y1)
{
    int w = c->width, D = c->ndisp;
    for (int y = y0; y < y1; y++) {
        const uint64_t *cl = census_l + (size_t)y * w, *cr = census_r + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + ((size_t)y * w + x) * D;
            int inside = inside_count(c, x);
            uint64_t base = cl[x];
            for (int k = 0; k < inside; k++)
                cp[k] = (uint8_t)__builtin_popcountll(base ^ cr[x - c->dmin - k]);
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

STEREO_HOT void sgm_cost_adcensus_rows(const sgm_config *c, const uint64_t *census_l,
                                       const uint64_t *census_r, const uint8_t *grey_l,
                                       const uint8_t *grey_r, const uint8_t *lut, int weight,
                                       uint8_t *cost, int y0, int y1)
{
    int w = c->width, D = c->ndisp, cap = c->max_cost;
    for (int y = y0; y < y1; y++) {
        const size_t row = (size_t)y * w;
        const uint64_t *cl = census_l + row, *cr = census_r + row;
        const uint8_t *gl = grey_l + row, *gr = grey_r + row;
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + (row + x) * D;
            int inside = inside_count(c, x);
            for (int k = 0; k < inside; k++) {
                int xr = x - c->dmin - k;
                cp[k] = (uint8_t)stereo_adcensus_cost(__builtin_popcountll(cl[x] ^ cr[xr]), gl[x],
                                                      lut[gr[xr]], weight, cap);
            }
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

STEREO_HOT void sgm_cost_table_rows(const sgm_config *c, const uint8_t *grey_l,
                                    const uint8_t *grey_r, const uint8_t *tables, int grid,
                                    uint8_t *cost, int y0, int y1)
{
    int w = c->width, h = c->height, D = c->ndisp;
    for (int y = y0; y < y1; y++) {
        const uint8_t *gl = grey_l + (size_t)y * w, *gr = grey_r + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + ((size_t)y * w + x) * D;
            int inside = inside_count(c, x);
            const uint8_t *table = tables + (size_t)stereo_mi_table(x, y, w, h, grid) * 65536;
            const uint8_t *row = table + gl[x] * 256; /* row[k] = table(IL(x, y), k) */
            const uint8_t *q = gr + x - c->dmin;
            for (int k = 0; k < inside; k++)
                cp[k] = row[q[-k]];
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

/* One direction's step at one pixel: cur[1..D] from prev[1..D] (prev == NULL: the pixel starts
 * the path, L = C). Both arrays carry the STEREO_SGM_FAR sentinel at [0] and [D + 1].
 * Returns min_k cur. */
static inline int path_step(const uint8_t *cp, const uint16_t *prev, int min_prev, int jump,
                            int p1, uint16_t *restrict cur, int D)
{
    int m = STEREO_SGM_FAR;
    if (!prev) {
        for (int k = 1; k <= D; k++)
            cur[k] = cp[k - 1];
    } else {
        for (int k = 1; k <= D; k++)
            cur[k] = (uint16_t)stereo_sgm_step(cp[k - 1], prev[k], prev[k - 1], prev[k + 1], p1,
                                               jump, min_prev);
    }
    for (int k = 1; k <= D; k++)
        m = cur[k] < m ? cur[k] : m;
    return m;
}

size_t sgm_sweep_scratch_size(const sgm_config *c)
{
    size_t row = (size_t)c->width * (c->ndisp + 2);
    /* 3 directions x (previous + current row) of L, 2 pixels of the horizontal direction, and
     * the per-pixel minima of the 3 row directions (ints, previous + current) */
    return (6 * row + 2 * (size_t)(c->ndisp + 2)) * sizeof(uint16_t) +
           6 * (size_t)c->width * sizeof(int);
}

STEREO_HOT void sgm_aggregate_sweep(const sgm_config *c, int backward, int paths,
                                    const uint8_t *cost, const uint8_t *grey, uint16_t *S,
                                    void *scratch, uint64_t *rows_done)
{
    const int w = c->width, h = c->height, D = c->ndisp, stride = D + 2;
    const int sx = backward ? -1 : 1, sy = backward ? -1 : 1; /* this sweep's scan direction */
    const int diagonals = paths == 8;
    const size_t row = (size_t)w * stride;
    uint16_t *rows = scratch;                 /* [2][3][w][stride]: previous / current row */
    uint16_t *hz = rows + 6 * row;            /* [2][stride]: horizontal, previous / current */
    int *mins = (int *)(hz + 2 * stride);     /* [2][3][w] */
    for (size_t i = 0; i < 6 * row; i += stride)
        rows[i] = rows[i + D + 1] = STEREO_SGM_FAR;
    hz[0] = hz[D + 1] = hz[stride] = hz[stride + D + 1] = STEREO_SGM_FAR;
    /* this sweep's directions: horizontal, vertical, the two diagonals (sgm.h) */
    const int dirs[4] = {backward ? 1 : 0, backward ? 3 : 2, backward ? 7 : 4, backward ? 6 : 5};
    int p1_of[4], w_of[4], p2_of[4][256]; /* per direction: P1, weight, P2' for |dI| */
    int weighted = 0;
    for (int r = 0; r < 4; r++) {
        int dp1 = c->per_dir ? c->dir_p1[dirs[r]] : c->p1;
        int dp2 = c->per_dir ? c->dir_p2[dirs[r]] : c->p2;
        p1_of[r] = dp1;
        w_of[r] = c->per_dir ? c->dir_weight[dirs[r]] : 1;
        weighted |= w_of[r] != 1;
        for (int i = 0; i < 256; i++)
            p2_of[r][i] = stereo_p2_adaptive(dp1, dp2, c->p2_adapt, i);
    }
    uint16_t lsum[D];

    for (int yi = 0; yi < h; yi++) {
        const int y = backward ? h - 1 - yi : yi, cur_r = yi & 1, prev_r = cur_r ^ 1;
        uint16_t *cur_rows = rows + (size_t)cur_r * 3 * row, *prev_rows = rows + (size_t)prev_r * 3 * row;
        int *cur_min = mins + cur_r * 3 * w, *prev_min = mins + prev_r * 3 * w;
        int h_min = 0; /* min of the horizontal L at the previous pixel of this row */
        for (int xi = 0; xi < w; xi++) {
            const int x = backward ? w - 1 - xi : xi;
            const size_t p = (size_t)y * w + x;
            const uint8_t *cp = cost + p * D;
            const int g = grey[p];
            /* horizontal: (sx, 0), previous pixel x - sx in this row */
            uint16_t *hcur = hz + (size_t)(xi & 1) * stride, *hprev = hz + (size_t)((xi & 1) ^ 1) * stride;
            int gh = xi ? grey[p - sx] : g;
            h_min = path_step(cp, xi ? hprev : NULL, h_min, h_min + p2_of[0][abs(g - gh)],
                              p1_of[0], hcur, D);
            if (!weighted)
                for (int k = 0; k < D; k++)
                    lsum[k] = hcur[k + 1];
            else
                for (int k = 0; k < D; k++)
                    lsum[k] = (uint16_t)(w_of[0] * hcur[k + 1]);
            /* vertical (0, sy) and the diagonals (sx, sy) and (-sx, sy): from the previous row at
             * x, x - sx and x + sx */
            const int from[3] = {x, x - sx, x + sx};
            for (int r = 0; r < (diagonals ? 3 : 1); r++) {
                uint16_t *lc = cur_rows + ((size_t)r * w + x) * stride;
                const int fx = from[r];
                const int have = yi > 0 && fx >= 0 && fx < w;
                const uint16_t *lp = have ? prev_rows + ((size_t)r * w + fx) * stride : NULL;
                int mp = have ? prev_min[r * w + fx] : 0;
                int gp = have ? grey[(size_t)(y - sy) * w + fx] : g;
                cur_min[r * w + x] = path_step(cp, lp, mp, mp + p2_of[r + 1][abs(g - gp)],
                                               p1_of[r + 1], lc, D);
                if (!weighted)
                    for (int k = 0; k < D; k++)
                        lsum[k] = (uint16_t)(lsum[k] + lc[k + 1]);
                else
                    for (int k = 0; k < D; k++)
                        lsum[k] = (uint16_t)(lsum[k] + w_of[r + 1] * lc[k + 1]);
            }
            memcpy(S + p * D, lsum, (size_t)D * sizeof *lsum);
        }
        if (rows_done)
            __atomic_add_fetch(rows_done, 1, __ATOMIC_RELAXED);
    }
}
