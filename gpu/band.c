/* SPDX-License-Identifier: Apache-2.0 */
/* band.c — CPU reference of the coarse-to-fine mode (see band.h). */
#include "band.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mi.h"
#include "stereo_math.h"

int band_check(int W, int D, char *why, size_t whylen)
{
    if (W != 32 && W != 64) {
        snprintf(why, whylen, "%d is neither 32 nor 64 (0 = off: the full range)", W);
        return -1;
    }
    if (W >= D) {
        snprintf(why, whylen, "%d must be smaller than the %d disparities searched", W, D);
        return -1;
    }
    return 0;
}

void band_coarse_params(const stereo_params *p, stereo_params *q)
{
    mi_level lv;
    mi_level_geometry(p->width, p->height, p->min_disparity, p->num_disparities, 1, &lv);
    *q = *p;
    q->width = lv.w, q->height = lv.h;
    q->min_disparity = lv.dmin;
    q->num_disparities = lv.ndisp > BAND_COARSE_MAX_D ? BAND_COARSE_MAX_D : lv.ndisp;
    q->method = STEREO_METHOD_SGM;
    q->subpixel = q->median = q->lr_check = 1, q->lr_tolerance = 1;
    q->uniqueness = q->confidence = 0;
    q->views = 2, q->band = 0, q->mi_warm = 0;
    /* the band reads the raw match */
    q->post.speckle_size = q->post.fill = q->post.temporal = q->post.vote =
        q->post.interp = 0;
}

void band_from_coarse_rows(const int16_t *coarse, int w1, int h1, int w, int dmin, int D, int W,
                           uint16_t *band, int y0, int y1)
{
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++)
            band[(size_t)y * w + x] = (uint16_t)stereo_band_start(coarse, w1, h1, x, y,
                                                                  BAND_WINDOW_RADIUS, dmin, D, W);
}

STEREO_HOT void band_cost_rows(const sgm_config *c, int W, const uint16_t *band,
                               const band_inputs *in, uint8_t *cost, int y0, int y1)
{
    const int w = c->width, cap = c->max_cost;
    uint8_t lo_l[w], hi_l[w], lo_r[w], hi_r[w];
    for (int y = y0; y < y1; y++) {
        const size_t row = (size_t)y * w;
        if (in->cost == STEREO_COST_BT) {
            sgm_bt_row_range(in->grey[0] + row, w, lo_l, hi_l);
            sgm_bt_row_range(in->grey[1] + row, w, lo_r, hi_r);
        }
        for (int x = 0; x < w; x++) {
            const size_t p = row + x;
            uint8_t *cp = cost + p * W;
            /* j < inside: x - d >= 0 (the right pixel xr = x - dmin - k0 - j exists) */
            const int x0 = x - c->dmin - band[p];
            const int inside = x0 + 1 < 0 ? 0 : x0 + 1 > W ? W : x0 + 1;
            const uint8_t *gr = in->grey[1] + row; /* every cost has grey images */
            switch (in->cost) {
            case STEREO_COST_RANK:
                for (int j = 0; j < inside; j++)
                    cp[j] = (uint8_t)abs(in->rank[0][p] - in->rank[1][row + x0 - j]);
                break;
            case STEREO_COST_CENSUS:
                for (int j = 0; j < inside; j++)
                    cp[j] = (uint8_t)__builtin_popcountll(in->census[0][p] ^
                                                          in->census[1][row + x0 - j]);
                break;
            case STEREO_COST_ADCENSUS:
                for (int j = 0; j < inside; j++)
                    cp[j] = (uint8_t)stereo_adcensus_cost(
                        __builtin_popcountll(in->census[0][p] ^ in->census[1][row + x0 - j]),
                        in->grey[0][p], in->ad_lut[gr[x0 - j]], in->ad_weight, cap);
                break;
            case STEREO_COST_AD:
                for (int j = 0; j < inside; j++)
                    cp[j] = (uint8_t)stereo_ad_cost(in->grey[0][p], gr[x0 - j], cap);
                break;
            case STEREO_COST_BT:
                for (int j = 0; j < inside; j++)
                    cp[j] = (uint8_t)stereo_bt_cost(in->grey[0][p], lo_l[x], hi_l[x], gr[x0 - j],
                                                    lo_r[x0 - j], hi_r[x0 - j], cap);
                break;
            default: /* mi: refused by stereo_params_check */
                break;
            }
            memset(cp + inside, cap, (size_t)(W - inside));
        }
    }
}

/* One direction's step at one pixel of band start s: cur[1..W] from prev[1..W] of the previous
 * pixel, whose band starts at s - shift (prev == NULL: the pixel starts the path, L = C). Both
 * arrays carry STEREO_SGM_FAR at [0] and [W + 1]; an index of prev outside them is FAR too
 * (band.h: absent outside the previous band). The j whose three neighbours i - 1 .. i + 1
 * (i = j + shift) all lie in [0, W + 1] run without a test, the others through AT. Returns
 * min_j cur. */
static inline int band_step(const uint8_t *cp, const uint16_t *prev, int shift, int min_prev,
                            int jump, int p1, uint16_t *restrict cur, int W)
{
    int m = STEREO_SGM_FAR;
    if (!prev) {
        for (int j = 1; j <= W; j++) {
            cur[j] = cp[j - 1];
            m = cur[j] < m ? cur[j] : m;
        }
        return m;
    }
#define AT(t) ((t) >= 0 && (t) <= W + 1 ? prev[t] : STEREO_SGM_FAR)
    const int lo = 1 - shift > 1 ? 1 - shift : 1, hi = W - shift < W ? W - shift : W;
    for (int j = 1; j <= W; j++) {
        if (j == lo && lo <= hi) { /* the middle run: every neighbour inside prev */
            const uint16_t *q = prev + shift;
            for (; j <= hi; j++) {
                cur[j] = (uint16_t)stereo_sgm_step(cp[j - 1], q[j], q[j - 1], q[j + 1], p1, jump,
                                                   min_prev);
                m = cur[j] < m ? cur[j] : m;
            }
            if (j > W)
                break;
        }
        const int i = j + shift; /* k = s + j - 1 in prev's indices */
        cur[j] = (uint16_t)stereo_sgm_step(cp[j - 1], AT(i), AT(i - 1), AT(i + 1), p1, jump,
                                           min_prev);
        m = cur[j] < m ? cur[j] : m;
    }
#undef AT
    return m;
}

size_t band_sweep_scratch_size(const sgm_config *c, int W)
{
    size_t row = (size_t)c->width * (W + 2);
    return (6 * row + 2 * (size_t)(W + 2)) * sizeof(uint16_t) + 6 * (size_t)c->width * sizeof(int);
}

STEREO_HOT void band_aggregate_sweep(const sgm_config *c, int W, const uint16_t *band,
                                     int backward, int paths, const uint8_t *cost,
                                     const uint8_t *grey, uint16_t *S, void *scratch)
{
    const int w = c->width, h = c->height, stride = W + 2;
    const int sx = backward ? -1 : 1, sy = backward ? -1 : 1;
    const int diagonals = paths == 8;
    const size_t row = (size_t)w * stride;
    uint16_t *rows = scratch;             /* [2][3][w][stride] */
    uint16_t *hz = rows + 6 * row;        /* [2][stride] */
    int *mins = (int *)(hz + 2 * stride); /* [2][3][w] */
    for (size_t i = 0; i < 6 * row; i += stride)
        rows[i] = rows[i + W + 1] = STEREO_SGM_FAR;
    hz[0] = hz[W + 1] = hz[stride] = hz[stride + W + 1] = STEREO_SGM_FAR;
    const int dirs[4] = {backward ? 1 : 0, backward ? 3 : 2, backward ? 7 : 4, backward ? 6 : 5};
    int p1_of[4], w_of[4], p2_of[4][256];
    for (int r = 0; r < 4; r++) {
        int dp1 = c->per_dir ? c->dir_p1[dirs[r]] : c->p1;
        int dp2 = c->per_dir ? c->dir_p2[dirs[r]] : c->p2;
        p1_of[r] = dp1;
        w_of[r] = c->per_dir ? c->dir_weight[dirs[r]] : 1;
        for (int i = 0; i < 256; i++)
            p2_of[r][i] = stereo_p2_adaptive(dp1, dp2, c->p2_adapt, i);
    }
    for (int yi = 0; yi < h; yi++) {
        const int y = backward ? h - 1 - yi : yi, cur_r = yi & 1, prev_r = cur_r ^ 1;
        uint16_t *cur_rows = rows + (size_t)cur_r * 3 * row, *prev_rows = rows + (size_t)prev_r * 3 * row;
        int *cur_min = mins + cur_r * 3 * w, *prev_min = mins + prev_r * 3 * w;
        int h_min = 0;
        for (int xi = 0; xi < w; xi++) {
            const int x = backward ? w - 1 - xi : xi;
            const size_t p = (size_t)y * w + x;
            const uint8_t *cp = cost + p * W;
            const int g = grey[p], s = band[p];
            uint16_t *lsum = S + p * W;
            uint16_t *hcur = hz + (size_t)(xi & 1) * stride, *hprev = hz + (size_t)((xi & 1) ^ 1) * stride;
            int gh = xi ? grey[p - sx] : g;
            int sh = xi ? s - band[p - sx] : 0;
            h_min = band_step(cp, xi ? hprev : NULL, sh, h_min, h_min + p2_of[0][abs(g - gh)],
                              p1_of[0], hcur, W);
            for (int j = 0; j < W; j++)
                lsum[j] = (uint16_t)(w_of[0] * hcur[j + 1]);
            const int from[3] = {x, x - sx, x + sx};
            for (int r = 0; r < (diagonals ? 3 : 1); r++) {
                uint16_t *lc = cur_rows + ((size_t)r * w + x) * stride;
                const int fx = from[r];
                const int have = yi > 0 && fx >= 0 && fx < w;
                const size_t q = (size_t)(y - sy) * w + fx;
                const uint16_t *lp = have ? prev_rows + ((size_t)r * w + fx) * stride : NULL;
                int mp = have ? prev_min[r * w + fx] : 0;
                int gp = have ? grey[q] : g;
                cur_min[r * w + x] = band_step(cp, lp, have ? s - band[q] : 0, mp,
                                               mp + p2_of[r + 1][abs(g - gp)], p1_of[r + 1], lc, W);
                for (int j = 0; j < W; j++)
                    lsum[j] = (uint16_t)(lsum[j] + w_of[r + 1] * lc[j + 1]);
            }
        }
    }
}

STEREO_HOT void band_wta_rows(const wta_config *c, int W, const uint16_t *band, const uint16_t *S1,
                              const uint16_t *S2, const uint8_t *valid, int16_t *disp,
                              uint8_t *conf, int y0, int y1)
{
    const int w = c->width;
    uint16_t s[W];
    for (int y = y0; y < y1; y++) {
        for (int x = 0; x < w; x++) {
            const size_t p = (size_t)y * w + x;
            for (int j = 0; j < W; j++)
                s[j] = (uint16_t)(S1[p * W + j] + S2[p * W + j]);
            int best = 0;
            uint32_t s1 = s[0];
            for (int j = 1; j < W; j++)
                if (s[j] < s1) {
                    s1 = s[j];
                    best = j;
                }
            uint32_t s2 = 0xffffffffu;
            for (int j = 0; j < W; j++)
                if ((j < best - 1 || j > best + 1) && s[j] < s2)
                    s2 = s[j];
            /* disparity.h's rule on the band: the range dmin + s .. dmin + s + W - 1 */
            const wta_config bc = {w, c->height, c->dmin + band[p], W, c->uniqueness, c->subpixel};
            disparity_wta_pixel(&bc, x, p, best, s1, s2, best > 0 ? s[best - 1] : 0,
                                best < W - 1 ? s[best + 1] : 0, valid, disp, conf);
        }
    }
}

STEREO_HOT void band_right_rows(const wta_config *c, int W, const uint16_t *band,
                                const uint16_t *S1, const uint16_t *S2,
                                const uint8_t *valid_right, int16_t *disp_right, int y0, int y1)
{
    const int w = c->width, D = c->ndisp;
    for (int y = y0; y < y1; y++) {
        for (int xr = 0; xr < w; xr++) {
            const size_t p = (size_t)y * w + xr;
            int best = -1;
            uint32_t s1 = 0xffffffffu;
            for (int k = 0; k < D && xr + c->dmin + k < w; k++) {
                const size_t q = p + (size_t)(c->dmin + k);
                const int j = k - band[q];
                if (j < 0 || j >= W)
                    continue;
                uint32_t v = (uint32_t)S1[q * W + j] + S2[q * W + j];
                if (v < s1) {
                    s1 = v;
                    best = k;
                }
            }
            disp_right[p] = best < 0 || (valid_right && !valid_right[p])
                                ? STEREO_INVALID
                                : (int16_t)(STEREO_SUBPIXEL_SCALE * (c->dmin + best));
        }
    }
}
