/* SPDX-License-Identifier: Apache-2.0 */
/* disparity.c — CPU reference of stages 6 to 8 (see disparity.h). */
#include "disparity.h"

#include "stereo_math.h"

STEREO_HOT void disparity_wta_rows(const wta_config *c, const uint16_t *S1, const uint16_t *S2,
                                   const uint8_t *valid, int16_t *disp, uint8_t *conf, int y0,
                                   int y1)
{
    int w = c->width, D = c->ndisp;
    uint16_t s[D];
    for (int y = y0; y < y1; y++) {
        for (int x = 0; x < w; x++) {
            size_t p = (size_t)y * w + x;
            const uint16_t *a = S1 + p * D, *b = S2 ? S2 + p * D : NULL;
            for (int k = 0; k < D; k++)
                s[k] = (uint16_t)(a[k] + (b ? b[k] : 0));
            int best = 0;
            uint32_t s1 = s[0];
            for (int k = 1; k < D; k++)
                if (s[k] < s1) {
                    s1 = s[k];
                    best = k;
                }
            uint32_t s2 = 0xffffffffu;
            for (int k = 0; k < D; k++)
                if ((k < best - 1 || k > best + 1) && s[k] < s2)
                    s2 = s[k];
            disparity_wta_pixel(c, x, p, best, s1, s2, best > 0 ? s[best - 1] : 0,
                                best < D - 1 ? s[best + 1] : 0, valid, disp, conf);
        }
    }
}

STEREO_HOT void disparity_right_rows(const wta_config *c, const uint16_t *S1, const uint16_t *S2,
                                     const uint8_t *valid_right, int16_t *disp_right, int y0,
                                     int y1)
{
    int w = c->width, D = c->ndisp;
    for (int y = y0; y < y1; y++) {
        for (int xr = 0; xr < w; xr++) {
            size_t p = (size_t)y * w + xr;
            int kmax = w - 1 - xr - c->dmin; /* last k with xr + dmin + k < w */
            if (kmax > D - 1)
                kmax = D - 1;
            if (kmax < 0 || (valid_right && !valid_right[p])) {
                disp_right[p] = STEREO_INVALID;
                continue;
            }
            /* S at left pixel x = xr + dmin + k, disparity index k: a step of D + 1 per k */
            const uint16_t *a = S1 + (p + (size_t)c->dmin) * D;
            const uint16_t *b = S2 ? S2 + (p + (size_t)c->dmin) * D : NULL;
            int best = 0;
            uint32_t s1 = a[0] + (b ? b[0] : 0);
            for (int k = 1; k <= kmax; k++) {
                uint32_t v = a[(size_t)k * (D + 1)] + (b ? b[(size_t)k * (D + 1)] : 0);
                if (v < s1) {
                    s1 = v;
                    best = k;
                }
            }
            disp_right[p] = (int16_t)(STEREO_SUBPIXEL_SCALE * (c->dmin + best));
        }
    }
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The first and last pixel clamp their neighbours; the pixels between, without a branch, are a
 * loop gcc vectorises (the sorting network's min / max on int16 lanes). */
STEREO_HOT void median3x3_rows(const int16_t *in, int w, int h, int16_t *out, int y0, int y1)
{
    for (int y = y0; y < y1; y++) {
        const int16_t *a = in + (size_t)clampi(y - 1, 0, h - 1) * w;
        const int16_t *b = in + (size_t)y * w;
        const int16_t *c = in + (size_t)clampi(y + 1, 0, h - 1) * w;
        int16_t *o = out + (size_t)y * w;
        for (int e = 0; e < (w > 1 ? 2 : 1); e++) { /* the first and the last pixel */
            int x = e ? w - 1 : 0, l = x > 0 ? x - 1 : 0, r = x + 1 < w ? x + 1 : w - 1;
            o[x] = stereo_median9(a[l], a[x], a[r], b[l], b[x], b[r], c[l], c[x], c[r]);
        }
        for (int x = 1; x < w - 1; x++)
            o[x] = stereo_median9(a[x - 1], a[x], a[x + 1], b[x - 1], b[x], b[x + 1], c[x - 1],
                                  c[x], c[x + 1]);
    }
}

void lr_check_rows(int16_t *disp, const int16_t *disp_right, int w, int tolerance, int y0, int y1)
{
    int tol16 = STEREO_SUBPIXEL_SCALE * tolerance;
    for (int y = y0; y < y1; y++) {
        int16_t *row = disp + (size_t)y * w;
        const int16_t *right = disp_right + (size_t)y * w;
        for (int x = 0; x < w; x++)
            if (row[x] >= 0 && !stereo_lr_consistent(x, row[x], right, tol16))
                row[x] = STEREO_INVALID;
    }
}

void lr_check_views_rows(int16_t *disp, const int16_t *disp_right, int w, int tolerance, int y0,
                         int y1)
{
    int tol16 = STEREO_SUBPIXEL_SCALE * tolerance;
    int16_t ring[STEREO_LR_RING]; /* the values right of x before the check */
    for (int y = y0; y < y1; y++) {
        int16_t *row = disp + (size_t)y * w;
        const int16_t *right = disp_right + (size_t)y * w;
        for (int x = w - 1; x >= 0; x--) { /* right to left: row[0 .. x] still unchecked */
            int v = row[x];
            ring[x & (STEREO_LR_RING - 1)] = (int16_t)v;
            if (v >= 0 && !stereo_lr_views_consistent(x, v, w, row, ring, STEREO_LR_RING - 1,
                                                      right, tol16))
                row[x] = STEREO_INVALID;
        }
    }
}

double disparity_top_share(const int16_t *disp, size_t n, int dmin, int ndisp)
{
    const int top = STEREO_SUBPIXEL_SCALE * (dmin + ndisp - 1); /* the last one searched */
    size_t valid = 0, at_top = 0;
    for (size_t i = 0; i < n; i++)
        if (stereo_disparity_valid(disp[i])) {
            valid++;
            at_top += disp[i] >= top;
        }
    return valid ? (double)at_top / (double)valid : 0.0;
}

void confidence_mask_rows(const int16_t *disp, uint8_t *conf, int w, int y0, int y1)
{
    for (size_t p = (size_t)y0 * w; p < (size_t)y1 * w; p++)
        if (disp[p] < 0)
            conf[p] = 0;
}

void disparity_shift_rows(uint8_t *img, int w, int m, int y0, int y1)
{
    for (int y = y0; y < y1; y++) {
        uint8_t *row = img + (size_t)y * w;
        for (int x = 0; x < w; x++) /* left to right: row[x + m] is not yet written */
            row[x] = row[x + m < w ? x + m : w - 1];
    }
}

void disparity_unshift_rows(int16_t *disp, int16_t *disp_right, uint8_t *conf, int w, int m,
                            int y0, int y1)
{
    for (int y = y0; y < y1; y++) {
        int16_t *row = disp + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            row[x] = (int16_t)disparity_unshift_left(row[x], x, w, m);
            if (conf && row[x] == STEREO_INVALID)
                conf[(size_t)y * w + x] = 0;
        }
        if (!disp_right)
            continue;
        row = disp_right + (size_t)y * w;
        for (int c = w - 1; c >= 0; c--) /* right to left: row[c - m] is not yet written */
            row[c] = c < m ? STEREO_INVALID : (int16_t)disparity_unshift_right(row[c - m], m);
    }
}
