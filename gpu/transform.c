/* SPDX-License-Identifier: Apache-2.0 */
/* transform.c — CPU reference of stage 3 (see transform.h).
 *
 * Both transforms walk the window one source row at a time: the row is copied with its clamped
 * border into a padded line, and then every horizontal offset compares a contiguous slice of that
 * line against the centre row, a loop gcc vectorises. */
#include "transform.h"

#include <string.h>

#include "mi.h"
#include "stereo_math.h"

int transform_max_cost(stereo_cost cost, int rank_window)
{
    switch (cost) {
    case STEREO_COST_CENSUS:
    case STEREO_COST_ADCENSUS: return CENSUS_BITS;
    case STEREO_COST_AD:
    case STEREO_COST_BT: return STEREO_GREY_COST_MAX;
    case STEREO_COST_MI: return MI_MAX_COST;
    default: return rank_window * rank_window - 1;
    }
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* line[0 .. w+2r) = row with r replicated pixels at each end */
static void pad_row(const uint8_t *row, int w, int r, uint8_t *line)
{
    memset(line, row[0], (size_t)r);
    memcpy(line + r, row, (size_t)w);
    memset(line + r + w, row[w - 1], (size_t)r);
}

STEREO_HOT void rank_transform_rows(const uint8_t *img, int w, int h, int window, uint8_t *out, int y0,
                         int y1)
{
    int r = window / 2;
    uint8_t line[w + 2 * RANK_WINDOW_MAX];
    uint8_t count[w];
    for (int y = y0; y < y1; y++) {
        const uint8_t *centre = img + (size_t)y * w;
        memset(count, 0, (size_t)w);
        for (int j = -r; j <= r; j++) {
            pad_row(img + (size_t)clampi(y + j, 0, h - 1) * w, w, r, line);
            for (int i = 0; i < window; i++) {
                const uint8_t *q = line + i; /* q[x] = I(clamp(x + i - r), y + j) */
                for (int x = 0; x < w; x++)
                    count[x] += q[x] < centre[x];
            }
        }
        memcpy(out + (size_t)y * w, count, (size_t)w);
    }
}

STEREO_HOT void census_transform_rows(const uint8_t *img, int w, int h, uint64_t *out, int y0, int y1)
{
    const int rx = CENSUS_WIDTH / 2, ry = CENSUS_HEIGHT / 2;
    uint8_t line[w + 2 * rx];
    for (int y = y0; y < y1; y++) {
        const uint8_t *centre = img + (size_t)y * w;
        uint64_t *bits = out + (size_t)y * w;
        memset(bits, 0, (size_t)w * sizeof *bits);
        for (int j = -ry; j <= ry; j++) {
            pad_row(img + (size_t)clampi(y + j, 0, h - 1) * w, w, rx, line);
            for (int i = 0; i < CENSUS_WIDTH; i++) {
                if (j == 0 && i == rx)
                    continue; /* the centre itself carries no bit */
                const uint8_t *q = line + i;
                for (int x = 0; x < w; x++)
                    bits[x] = (bits[x] << 1) | (uint64_t)(q[x] < centre[x]);
            }
        }
    }
}
