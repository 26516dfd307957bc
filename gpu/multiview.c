/* SPDX-License-Identifier: Apache-2.0 */
/* multiview.c — CPU reference of the multi-baseline matching cost (see multiview.h). */
#include "multiview.h"

#include <string.h>

#include "stereo_math.h"

_Static_assert(STEREO_COST_AD == 2 && STEREO_COST_BT == 3,
               "stereo_view_margin (stereo_math.h) names the grey-value costs by number");

/* One row of the reference and of one other view, as the cost reads them. */
typedef struct {
    const uint8_t *r0, *rv;             /* rank or grey values */
    const uint64_t *c0, *cv;            /* census */
    const uint8_t *lo0, *hi0, *lov, *hiv; /* bt ranges */
    const uint8_t *lut;                 /* adcensus: the view's grey mapping M_v */
    int weight;                         /* adcensus: ad_weight */
} row_pair;

/* C_v(x, xv): the two-view cost (sgm.h) between the reference at x and the view at xv. */
static inline int pair_cost(stereo_cost cost, int cap, const row_pair *r, int x, int xv)
{
    switch (cost) {
    case STEREO_COST_CENSUS: return __builtin_popcountll(r->c0[x] ^ r->cv[xv]);
    case STEREO_COST_ADCENSUS:
        return stereo_adcensus_cost(__builtin_popcountll(r->c0[x] ^ r->cv[xv]), r->r0[x],
                                    r->lut[r->rv[xv]], r->weight, cap);
    case STEREO_COST_AD: return stereo_ad_cost(r->r0[x], r->rv[xv], cap);
    case STEREO_COST_BT:
        return stereo_bt_cost(r->r0[x], r->lo0[x], r->hi0[x], r->rv[xv], r->lov[xv], r->hiv[xv],
                              cap);
    default: {
        int v = r->r0[x] - r->rv[xv];
        return v < 0 ? -v : v;
    }
    }
}

void mview_cost_rows(const mview_config *m, uint8_t *cost, uint8_t *pos, uint8_t *neg, int y0,
                     int y1)
{
    const sgm_config *c = m->sgm;
    const int w = c->width, D = c->ndisp, nv = m->views, cap = c->max_cost;
    const int bt = m->cost == STEREO_COST_BT;
    /* the sampling rule's split of bq_v d per view and disparity: it does not depend on x */
    int off[STEREO_MAX_VIEWS][D], frac[STEREO_MAX_VIEWS][D];
    for (int v = 1; v < nv; v++)
        for (int k = 0; k < D; k++)
            stereo_view_offset(m->baseline[v], c->dmin + k, &off[v][k], &frac[v][k]);
    uint8_t lo[bt ? nv : 1][bt ? w : 1], hi[bt ? nv : 1][bt ? w : 1];
    int sum[2][D], cnt[2][D]; /* [0]: the views with b > 0, [1]: b < 0 */
    for (int y = y0; y < y1; y++) {
        const size_t row = (size_t)y * w;
        const uint8_t *vals[STEREO_MAX_VIEWS] = {0}; /* rank or grey rows */
        const uint64_t *bits[STEREO_MAX_VIEWS] = {0}; /* census rows */
        for (int v = 0; v < nv; v++) {
            if (stereo_cost_has_census(m->cost))
                bits[v] = m->census[v] + row;
            if (m->cost != STEREO_COST_CENSUS) /* adcensus: the grey values too */
                vals[v] = (m->cost == STEREO_COST_RANK ? m->rank[v] : m->grey[v]) + row;
            if (bt)
                sgm_bt_row_range(m->grey[v] + row, w, lo[v], hi[v]);
        }
        row_pair r[STEREO_MAX_VIEWS];
        for (int v = 1; v < nv; v++)
            r[v] = (row_pair){vals[0], vals[v], bits[0], bits[v],
                              lo[0], hi[0], lo[bt ? v : 0], hi[bt ? v : 0],
                              m->cost == STEREO_COST_ADCENSUS ? m->ad_lut[v] : NULL,
                              m->ad_weight};
        for (int x = 0; x < w; x++) {
            memset(sum, 0, sizeof sum);
            memset(cnt, 0, sizeof cnt);
            for (int v = 1; v < nv; v++) {
                const int side = m->baseline[v] < 0;
                for (int k = 0; k < D; k++) {
                    const int xa = x - off[v][k], f = frac[v][k];
                    if (xa < (f ? 1 : 0) || xa >= w)
                        continue; /* the view does not see (x, d) */
                    int cv = pair_cost(m->cost, cap, &r[v], x, xa);
                    if (f)
                        cv = stereo_view_cost_lerp(cv, pair_cost(m->cost, cap, &r[v], x, xa - 1), f);
                    sum[side][k] += cv;
                    cnt[side][k]++;
                }
            }
            const size_t i = (row + x) * D;
            for (int k = 0; k < D; k++)
                cost[i + k] = (uint8_t)stereo_view_mean(sum[0][k] + sum[1][k],
                                                        cnt[0][k] + cnt[1][k], cap);
            if (pos)
                for (int k = 0; k < D; k++) {
                    pos[i + k] = cnt[0][k] ? (uint8_t)stereo_view_mean(sum[0][k], cnt[0][k], cap)
                                           : STEREO_VIEW_UNSEEN;
                    neg[i + k] = cnt[1][k] ? (uint8_t)stereo_view_mean(sum[1][k], cnt[1][k], cap)
                                           : STEREO_VIEW_UNSEEN;
                }
        }
    }
}

void mview_select_rows(const mview_config *m, const uint8_t *pos, const uint8_t *neg,
                       uint8_t *cost, int y0, int y1)
{
    const sgm_config *c = m->sgm;
    const int w = c->width, h = c->height, D = c->ndisp, cap = c->max_cost;
    const int R = STEREO_VIEW_BOX_RADIUS;
    int bp[D], bn[D];
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
            memset(bp, 0, sizeof bp);
            memset(bn, 0, sizeof bn);
            for (int yy = y - R > 0 ? y - R : 0; yy <= y + R && yy < h; yy++)
                for (int xx = x - R > 0 ? x - R : 0; xx <= x + R && xx < w; xx++) {
                    const uint8_t *p = pos + ((size_t)yy * w + xx) * D;
                    const uint8_t *q = neg + ((size_t)yy * w + xx) * D;
                    for (int k = 0; k < D; k++) {
                        bp[k] += p[k] == STEREO_VIEW_UNSEEN ? cap : p[k];
                        bn[k] += q[k] == STEREO_VIEW_UNSEEN ? cap : q[k];
                    }
                }
            const size_t i = ((size_t)y * w + x) * D;
            const int nx = (x + R < w - 1 ? x + R : w - 1) - (x - R > 0 ? x - R : 0) + 1;
            const int ny = (y + R < h - 1 ? y + R : h - 1) - (y - R > 0 ? y - R : 0) + 1;
            const int margin = stereo_view_margin(m->cost, nx * ny);
            for (int k = 0; k < D; k++)
                cost[i + k] = (uint8_t)stereo_view_select(cost[i + k], pos[i + k], neg[i + k],
                                                          bp[k], bn[k], margin);
        }
}
