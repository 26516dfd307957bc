/* SPDX-License-Identifier: Apache-2.0 */
/* mi.c — CPU reference of the mutual-information table and the hierarchy's helpers (mi.h). */
#include "mi.h"
#include "stereo_math.h"

#include <math.h>
#include <string.h>

/* ---- the table ---------------------------------------------------------------------------- */

/* The Parzen window's taps, g[0..2R], normalised later per position (mi.h, step 2). */
static void parzen_taps(double *g)
{
    for (int t = -MI_PARZEN_RADIUS; t <= MI_PARZEN_RADIUS; t++)
        g[t + MI_PARZEN_RADIUS] = exp(-(double)(t * t) / (2.0 * MI_PARZEN_SIGMA * MI_PARZEN_SIGMA));
}

/* out[i] = sum_t g(t) in[i + t] / sum_t g(t), over the taps with 0 <= i + t < 256; in and out
 * are 256 values `stride` apart. */
static void smooth_line(const double *in, double *out, size_t stride, const double *g)
{
    for (int i = 0; i < 256; i++) {
        double s = 0, wsum = 0;
        for (int t = -MI_PARZEN_RADIUS; t <= MI_PARZEN_RADIUS; t++) {
            int j = i + t;
            if (j < 0 || j > 255)
                continue;
            s += g[t + MI_PARZEN_RADIUS] * in[(size_t)j * stride];
            wsum += g[t + MI_PARZEN_RADIUS];
        }
        out[(size_t)i * stride] = s / wsum;
    }
}

/* 2-D: along k (rows of the table) into tmp, then along i back into v. */
static void smooth_table(double *v, double *tmp, const double *g)
{
    for (int i = 0; i < 256; i++)
        smooth_line(v + i * 256, tmp + i * 256, 1, g);
    for (int k = 0; k < 256; k++)
        smooth_line(tmp + k, v + k, 256, g);
}

/* v <- S(-log(max(S(v), eps))) on n values of one line or the table */
static void entropy_1d(double *v, double *tmp, double eps, const double *g)
{
    smooth_line(v, tmp, 1, g);
    for (int i = 0; i < 256; i++)
        tmp[i] = -log(tmp[i] > eps ? tmp[i] : eps);
    smooth_line(tmp, v, 1, g);
}

/* Steps 2-5 from P (joint, 65536 values summing to 1) with the floor eps: the table, and mi
 * into mi_out when given. joint is overwritten; tmp, mi, pl, pr, t1 are scratch. */
static void table_from_joint(double *joint, double eps, double *tmp, double *mi, double *pl,
                             double *pr, double *t1, const double *g, uint8_t *table,
                             double *mi_out)
{
    memset(pl, 0, 2 * 256 * sizeof *pl);
    for (int i = 0; i < 256; i++)
        for (int k = 0; k < 256; k++) {
            double p = joint[i * 256 + k];
            pl[i] += p;
            pr[k] += p;
        }
    /* 2.-3. joint entropy term: smooth, -log with the floor, smooth again */
    smooth_table(joint, tmp, g);
    for (int j = 0; j < MI_TABLE_SIZE; j++)
        joint[j] = -log(joint[j] > eps ? joint[j] : eps);
    smooth_table(joint, tmp, g);
    /* 4. the marginals' terms, and mi */
    entropy_1d(pl, t1, 256 * eps, g);
    entropy_1d(pr, t1, 256 * eps, g);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < 256; i++)
        for (int k = 0; k < 256; k++) {
            double v = pl[i] + pr[k] - joint[i * 256 + k];
            mi[i * 256 + k] = v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    /* 5. cost = -mi, scaled to 0..MI_MAX_COST, rounded half up */
    for (int j = 0; j < MI_TABLE_SIZE; j++) {
        int c = hi > lo ? (int)floor((hi - mi[j]) * MI_MAX_COST / (hi - lo) + 0.5) : 0;
        table[j] = (uint8_t)(c > MI_MAX_COST ? MI_MAX_COST : c);
    }
    if (mi_out)
        memcpy(mi_out, mi, MI_TABLE_SIZE * sizeof *mi_out);
}

/* Step 1 over the pixels x0..x1-1 of rows y0, y0 + ystep, ... below y1: hist (zeroed here)
 * counts each correspondence; returns their number. */
static uint64_t count_correspondences(const uint8_t *left, const uint8_t *right, int w,
                                      const int16_t *init, const uint8_t *valid_left,
                                      const uint8_t *valid_right, int x0, int x1, int y0, int y1,
                                      int ystep, uint32_t *hist)
{
    memset(hist, 0, MI_TABLE_SIZE * sizeof *hist);
    uint64_t n = 0;
    for (int y = y0; y < y1; y += ystep) {
        size_t row = (size_t)y * w;
        for (int x = x0; x < x1; x++) {
            int d = init[row + x];
            if (d == MI_NO_DISPARITY || x - d < 0 || x - d >= w)
                continue;
            if ((valid_left && !valid_left[row + x]) || (valid_right && !valid_right[row + x - d]))
                continue;
            hist[left[row + x] * 256 + right[row + x - d]]++;
            n++;
        }
    }
    return n;
}

uint64_t mi_frame_histogram(const uint8_t *left, const uint8_t *right, int w, int h,
                            const int16_t *init, const uint8_t *valid_left,
                            const uint8_t *valid_right, uint32_t *hist)
{
    return count_correspondences(left, right, w, init, valid_left, valid_right, 0, w, 0, h, 1,
                                 hist);
}

void mi_table_of(const uint8_t *left, const uint8_t *right, int w, int h, int grid,
                 const int16_t *init, const uint8_t *valid_left, const uint8_t *valid_right,
                 const uint32_t *hist, uint64_t n, int i, uint8_t *table, double *mi_out,
                 void *scratch)
{
    /* scratch: its first histogram is left alone (it may hold hist), the second is the tile's */
    uint32_t *tile_hist = (uint32_t *)scratch + MI_TABLE_SIZE;
    double *joint = (double *)(tile_hist + MI_TABLE_SIZE), *tmp = joint + MI_TABLE_SIZE,
           *mi = tmp + MI_TABLE_SIZE, *pl = mi + MI_TABLE_SIZE, *pr = pl + 256, *t1 = pr + 256;
    double g[2 * MI_PARZEN_RADIUS + 1];
    parzen_taps(g);
    if (n == 0) {
        memset(table, 0, MI_TABLE_SIZE);
        if (mi_out)
            memset(mi_out, 0, MI_TABLE_SIZE * sizeof *mi_out);
        return;
    }
    if (grid == 1) { /* the whole frame: P = H / n */
        for (int j = 0; j < MI_TABLE_SIZE; j++)
            joint[j] = hist[j] / (double)n;
        table_from_joint(joint, MI_FLOOR_COUNT / (double)n, tmp, mi, pl, pr, t1, g, table,
                         mi_out);
        return;
    }
    /* table i = 2 t + q: tile t's rows of parity 1 - q, P = (H_tq + m H / n) / (n_tq + m),
     * m = MI_TILE_PRIOR */
    const int t = i / 2, q = i % 2, tx = t % grid, ty = t / grid;
    /* the tile's pixels: x grid / w == tx, y grid / h == ty */
    const int x0 = (tx * w + grid - 1) / grid, x1 = ((tx + 1) * w + grid - 1) / grid;
    const int y0 = (ty * h + grid - 1) / grid, y1 = ((ty + 1) * h + grid - 1) / grid;
    const uint64_t nt = count_correspondences(left, right, w, init, valid_left, valid_right, x0,
                                              x1, y0 + ((y0 & 1) == q), y1, 2, tile_hist);
    const double m = MI_TILE_PRIOR, den = (double)nt + m, prior = m / (double)n;
    for (int j = 0; j < MI_TABLE_SIZE; j++)
        joint[j] = (tile_hist[j] + prior * hist[j]) / den;
    table_from_joint(joint, MI_FLOOR_COUNT / den, tmp, mi, pl, pr, t1, g, table, mi_out);
}

uint64_t mi_tables_compute(const uint8_t *left, const uint8_t *right, int w, int h, int grid,
                           const int16_t *init, const uint8_t *valid_left,
                           const uint8_t *valid_right, uint8_t *tables, double *mi_out,
                           void *scratch)
{
    uint32_t *hist = scratch;
    uint64_t n = mi_frame_histogram(left, right, w, h, init, valid_left, valid_right, hist);
    for (int i = 0; i < stereo_mi_tables(grid); i++)
        mi_table_of(left, right, w, h, grid, init, valid_left, valid_right, hist, n, i,
                    tables + (size_t)i * MI_TABLE_SIZE,
                    mi_out ? mi_out + (size_t)i * MI_TABLE_SIZE : NULL, scratch);
    return n;
}

uint64_t mi_table_compute(const uint8_t *left, const uint8_t *right, int w, int h,
                          const int16_t *init, const uint8_t *valid_left,
                          const uint8_t *valid_right, uint8_t *table, double *mi_out,
                          void *scratch)
{
    return mi_tables_compute(left, right, w, h, 1, init, valid_left, valid_right, table, mi_out,
                             scratch);
}

/* ---- the hierarchy's geometry and images ------------------------------------------------- */

void mi_level_geometry(int w, int h, int dmin, int D, int f, mi_level *out)
{
    int s = 1 << f;
    out->f = f;
    out->w = (w + s - 1) >> f;
    out->h = (h + s - 1) >> f;
    out->dmin = dmin >> f;
    out->span = ((dmin + D - 1) >> f) + 1 - out->dmin;
    out->ndisp = (out->span + 15) / 16 * 16;
}

int mi_coarsest_level(int w, int h, int dmin, int D)
{
    for (int f = MI_LEVELS; f > 0; f--) {
        mi_level lv;
        mi_level_geometry(w, h, dmin, D, f, &lv);
        if (lv.ndisp < lv.w)
            return f;
    }
    return 0;
}

void mi_downscale_rows(const uint8_t *img, int w, int h, int f, uint8_t *dst, int y0, int y1)
{
    const int s = 1 << f, wf = (w + s - 1) >> f;
    const uint32_t half = f ? 1u << (2 * f - 1) : 0;
    uint32_t acc[wf];
    for (int y = y0; y < y1; y++) {
        memset(acc, 0, sizeof acc);
        for (int j = 0; j < s; j++) {
            int sy = y * s + j;
            const uint8_t *src = img + (size_t)(sy < h ? sy : h - 1) * w;
            for (int x = 0; x < wf; x++)
                for (int i = 0; i < s; i++) {
                    int sx = x * s + i;
                    acc[x] += src[sx < w ? sx : w - 1];
                }
        }
        for (int x = 0; x < wf; x++)
            dst[(size_t)y * wf + x] = (uint8_t)((acc[x] + half) >> (2 * f));
    }
}

void mi_random_disparity(const mi_level *lv, int16_t *init)
{
    for (int y = 0; y < lv->h; y++)
        for (int x = 0; x < lv->w; x++) {
            uint32_t v = (uint32_t)y * (uint32_t)lv->w + (uint32_t)x;
            init[(size_t)y * lv->w + x] = (int16_t)(lv->dmin + (int)(mi_hash(v) % (uint32_t)lv->span));
        }
}

void mi_disparity_to_init(const int16_t *disp, int w, int h, int16_t *init)
{
    for (size_t i = 0; i < (size_t)w * h; i++)
        init[i] = disp[i] < 0 ? MI_NO_DISPARITY : (int16_t)((disp[i] + 8) >> 4);
}

void mi_upscale_disparity(const int16_t *disp, int w, int h, int16_t *init, int w2, int h2)
{
    for (int y = 0; y < h2; y++) {
        const int16_t *src = disp + (size_t)(y / 2 < h ? y / 2 : h - 1) * w;
        for (int x = 0; x < w2; x++) {
            int v = src[x / 2 < w ? x / 2 : w - 1];
            init[(size_t)y * w2 + x] = v < 0 ? MI_NO_DISPARITY : (int16_t)(2 * ((v + 8) >> 4));
        }
    }
}
