/* SPDX-License-Identifier: Apache-2.0 */
/* legend.c — see legend.h. */
#include "legend.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The smallest of 1, 2, 5 x 10^k that is >= x (x > 0). */
static double nice_step(double x)
{
    double p = pow(10.0, floor(log10(x)));
    return x <= p ? p : x <= 2 * p ? 2 * p : x <= 5 * p ? 5 * p : 10 * p;
}

/* Decimals that a step needs: 0 for 1, 2, 5, 10..., 1 for 0.5, 0.2, 0.1, ... */
static int decimals(double step)
{
    int d = (int)ceil(-log10(step) - 1e-9);
    return d < 0 ? 0 : d > 4 ? 4 : d;
}

/* Nice values in [a, b] (a < b), ascending; at most max; n returned, *step the spacing. */
static int nice_values(double a, double b, int max, double *v, double *step)
{
    if (max < 2)
        max = 2;
    double s = nice_step((b - a) / (max - 1));
    int n = 0;
    for (double k = ceil(a / s - 1e-9); k * s <= b + 1e-9 * s && n < max; k++)
        v[n++] = k * s;
    if (n == 0) { /* cannot happen for a < b, kept for safety */
        v[n++] = a;
    }
    *step = s;
    return n;
}

int legend_ticks(colormap_range range, double focal_baseline, int max_ticks, legend_tick *out)
{
    if (max_ticks > LEGEND_MAX_TICKS)
        max_ticks = LEGEND_MAX_TICKS;
    double lo = range.lo / 16.0, hi = range.hi / 16.0, span = hi - lo, v[LEGEND_MAX_TICKS], step;
    int n = 0;
    if (focal_baseline > 0) {
        /* depths between the ends; pos follows the disparity, so they come far (small d) first */
        double dlo = lo < 1 ? 1 : lo, dhi = hi < 1 ? 1 : hi;
        double znear = focal_baseline / dhi, zfar = focal_baseline / dlo;
        if (zfar <= znear) {
            out[0].pos = 0;
            snprintf(out[0].label, sizeof out[0].label, "%.3g", zfar);
            return 1;
        }
        int k = nice_values(znear, zfar, max_ticks, v, &step), dec = decimals(step);
        for (int i = k - 1; i >= 0; i--) {
            out[n].pos = (focal_baseline / v[i] - lo) / span;
            snprintf(out[n].label, sizeof out[n].label, "%.*f", dec, v[i]);
            n++;
        }
        return n;
    }
    int k = nice_values(lo, hi, max_ticks, v, &step), dec = decimals(step);
    for (int i = 0; i < k; i++) {
        out[n].pos = (v[i] - lo) / span;
        snprintf(out[n].label, sizeof out[n].label, "%.*f", dec, v[i] == 0 ? 0.0 : v[i]);
        n++;
    }
    return n;
}

/* ---- the strip ------------------------------------------------------------------------------ */

/* 5x7 glyphs, one byte per row, bit 4 = leftmost column. */
static const char glyph_chars[] = "0123456789.-pxm";
static const uint8_t glyphs[][7] = {
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}, /* 0 */
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 1 */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}, /* 2 */
    {0x1e, 0x01, 0x01, 0x0e, 0x01, 0x01, 0x1e}, /* 3 */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}, /* 4 */
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}, /* 5 */
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}, /* 6 */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}, /* 7 */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}, /* 8 */
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}, /* 9 */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}, /* . */
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}, /* - */
    {0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10}, /* p */
    {0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11}, /* x */
    {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11}, /* m */
};

static const uint8_t background[3] = {24, 24, 24}, ink[3] = {235, 235, 235};

static int scale_of(int w) { return w >= 480 ? 2 : 1; }

int legend_height(int w) { return 26 * scale_of(w); }

static void fill(uint8_t *rgb, size_t pitch, int w, int x0, int y0, int x1, int y1,
                 const uint8_t c[3])
{
    for (int y = y0; y < y1; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1 && x < w; x++)
            memcpy(rgb + (size_t)y * pitch + 3 * (size_t)x, c, 3);
}

static int text_width(const char *s, int sc) { return (int)strlen(s) * 6 * sc - sc; }

static void draw_text(uint8_t *rgb, size_t pitch, int w, int x, int y, const char *s, int sc)
{
    for (; *s; s++, x += 6 * sc) {
        const char *g = strchr(glyph_chars, *s);
        if (!g || !*s)
            continue; /* a space, or a character without a glyph: left blank */
        const uint8_t *rows = glyphs[g - glyph_chars];
        for (int r = 0; r < 7; r++)
            for (int c = 0; c < 5; c++)
                if (rows[r] & (0x10 >> c))
                    fill(rgb, pitch, w, x + c * sc, y + r * sc, x + (c + 1) * sc,
                         y + (r + 1) * sc, ink);
    }
}

void legend_draw_rgb(uint8_t *rgb, int w, size_t pitch, const uint8_t lut[256 * 3],
                     colormap_range range)
{
    const int sc = scale_of(w), h = legend_height(w);
    fill(rgb, pitch, w, 0, 0, w, h, background);
    const int margin = 4 * sc, x0 = margin, bw = w - 2 * margin;
    if (bw < 2)
        return;
    /* the bar: column x shows the value lo + (x - x0) (hi - lo) / (bw - 1), coloured by the
     * image's own rule (colormap_disparity_rows), so its ends are entries 0 and 255 */
    for (int y = 3 * sc; y < 11 * sc; y++)
        for (int x = 0; x < bw; x++) {
            int16_t v = (int16_t)(range.lo + (int)((int64_t)x * (range.hi - range.lo) / (bw - 1)));
            colormap_disparity_rows(&v, 1, range, lut, rgb + (size_t)y * pitch + 3 * (size_t)(x0 + x),
                                    3, 3, 0, 1);
        }
    legend_tick t[LEGEND_MAX_TICKS];
    int max = bw / (36 * sc) + 1, n = legend_ticks(range, 0, max < 2 ? 2 : max, t);
    /* labels: the last one (with the unit) first, then left to right where they do not touch */
    int placed_l[LEGEND_MAX_TICKS], placed_r[LEGEND_MAX_TICKS], np = 0;
    for (int k = 0; k < n; k++) {
        int i = k == 0 ? n - 1 : k - 1;
        if (k > 0 && i == n - 1)
            continue;
        int tx = x0 + (int)lround(t[i].pos * (bw - 1));
        fill(rgb, pitch, w, tx - sc / 2, 11 * sc, tx - sc / 2 + sc, 14 * sc, ink);
        char label[24];
        snprintf(label, sizeof label, "%s%s", t[i].label, i == n - 1 ? "px" : "");
        int tw = text_width(label, sc), lx = tx - tw / 2;
        lx = lx + tw > w ? w - tw : lx;
        lx = lx < 0 ? 0 : lx;
        int clash = 0;
        for (int j = 0; j < np; j++)
            clash |= lx < placed_r[j] + 3 * sc && lx + tw + 3 * sc > placed_l[j];
        if (clash)
            continue;
        draw_text(rgb, pitch, w, lx, 16 * sc, label, sc);
        placed_l[np] = lx;
        placed_r[np++] = lx + tw;
    }
}
