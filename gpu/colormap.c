/* SPDX-License-Identifier: Apache-2.0 */
/* colormap.c — see colormap.h. */
#include "colormap.h"

#include <math.h>
#include <string.h>

#include "stereo_types.h"

static const char *const names[COLORMAP_COUNT] = {"turbo", "jet", "grey"};

const char *colormap_to_str(colormap_id id)
{
    return (unsigned)id < COLORMAP_COUNT ? names[id] : "?";
}

int colormap_from_str(const char *s, colormap_id *out)
{
    for (int i = 0; i < COLORMAP_COUNT; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (colormap_id)i;
            return 0;
        }
    if (strcmp(s, "gray") == 0) {
        *out = COLORMAP_GREY;
        return 0;
    }
    return -1;
}

static uint8_t to_byte(double v)
{
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    return (uint8_t)lround(v * 255.0);
}

/* Turbo (Mikhailov, Google AI blog 2019): polynomial fit of each channel in t = 0..1. */
static double poly5(const double c[6], double t)
{
    return c[0] + t * (c[1] + t * (c[2] + t * (c[3] + t * (c[4] + t * c[5]))));
}

void colormap_lut(colormap_id id, uint8_t lut[256 * 3])
{
    static const double tr[6] = {0.13572138, 4.61539260, -42.66032258, 132.13108234,
                                 -152.94239396, 59.28637943};
    static const double tg[6] = {0.09140261, 2.19418839, 4.84296658, -14.18503333,
                                 4.27729857, 2.82956604};
    static const double tb[6] = {0.10667330, 12.64194608, -60.58204836, 110.36276771,
                                 -89.90310912, 27.34824973};
    for (int i = 0; i < 256; i++) {
        double t = i / 255.0, r, g, b;
        switch (id) {
        case COLORMAP_JET: /* four linear ramps: blue up, green up, red up / blue down, green down */
            r = 1.5 - fabs(4.0 * t - 3.0);
            g = 1.5 - fabs(4.0 * t - 2.0);
            b = 1.5 - fabs(4.0 * t - 1.0);
            break;
        case COLORMAP_GREY:
            r = g = b = t;
            break;
        default:
            r = poly5(tr, t);
            g = poly5(tg, t);
            b = poly5(tb, t);
            break;
        }
        lut[3 * i] = to_byte(r);
        lut[3 * i + 1] = to_byte(g);
        lut[3 * i + 2] = to_byte(b);
    }
}

colormap_range colormap_fixed_range(int dmin, int ndisp)
{
    return (colormap_range){16 * dmin, 16 * (dmin + ndisp - 1)};
}

int colormap_auto_range(const int16_t *disp, size_t n, int dmin, int ndisp, colormap_range *out)
{
    enum { MAX_BINS = 16 * 512 + 1 }; /* D up to 512 (stereo_check_disparities) */
    uint32_t hist[MAX_BINS];
    const int base = 16 * dmin, bins = 16 * (ndisp - 1) + 1; /* v = base + bin */
    memset(hist, 0, sizeof hist);
    uint64_t valid = 0;
    for (size_t i = 0; i < n; i++) {
        int v = disp[i];
        if (!stereo_disparity_valid(v))
            continue;
        int b = v - base;
        hist[b < 0 ? 0 : b >= bins ? bins - 1 : b]++;
        valid++;
    }
    *out = colormap_fixed_range(dmin, ndisp);
    if (!valid)
        return -1;
    /* nearest rank: the r-th smallest value (1-based) is the first bin where the running count
     * reaches r */
    uint64_t r1 = (valid + 99) / 100, r99 = (99 * valid + 99) / 100, seen = 0;
    int lo = -1, hi = -1;
    for (int b = 0; b < bins && hi < 0; b++) {
        seen += hist[b];
        if (lo < 0 && seen >= r1)
            lo = b;
        if (seen >= r99)
            hi = b;
    }
    out->lo = base + lo;
    out->hi = base + (hi - lo < 16 ? lo + 16 : hi);
    return 0;
}

void colormap_disparity_rows(const int16_t *disp, int w, colormap_range range,
                             const uint8_t lut[256 * 3], uint8_t *out, int channels,
                             size_t out_pitch, int y0, int y1)
{
    int lo = range.lo, span = range.hi - range.lo;
    for (int y = y0; y < y1; y++) {
        uint8_t *o = out + (size_t)y * out_pitch;
        const int16_t *d = disp + (size_t)y * w;
        for (int x = 0; x < w; x++, o += channels) {
            if (!stereo_disparity_valid(d[x])) {
                o[0] = o[1] = o[2] = 0;
            } else {
                int i = ((d[x] - lo) * 255 + span / 2) / span;
                i = i < 0 ? 0 : i > 255 ? 255 : i;
                o[0] = lut[3 * i];
                o[1] = lut[3 * i + 1];
                o[2] = lut[3 * i + 2];
            }
            if (channels == 4)
                o[3] = 255;
        }
    }
}
