/* SPDX-License-Identifier: Apache-2.0 */
/* block.c — CPU reference of block matching's box sum (see block.h). */
#include "block.h"

#include <stddef.h>
#include <string.h>

#include "stereo_math.h"

int block_shift(int max_cost, int n)
{
    int s = 0;
    while (((long)max_cost * n * n) >> s > 65535)
        s++;
    return s;
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

STEREO_HOT void block_vertical_rows(const block_config *c, const uint8_t *cost, uint16_t *V,
                                    int y0, int y1)
{
    const int w = c->width, h = c->height, D = c->ndisp, r = c->block / 2;
    const size_t row = (size_t)w * D;
    if (y0 >= y1)
        return;
    /* the first row of the range: a full sum of N rows */
    uint16_t *out = V + (size_t)y0 * row;
    memset(out, 0, row * sizeof *out);
    for (int j = -r; j <= r; j++) {
        const uint8_t *in = cost + (size_t)clampi(y0 + j, 0, h - 1) * row;
        for (size_t i = 0; i < row; i++)
            out[i] = (uint16_t)(out[i] + in[i]);
    }
    /* the others from the row above: + the row entering, - the row leaving */
    for (int y = y0 + 1; y < y1; y++) {
        const uint16_t *prev = V + (size_t)(y - 1) * row;
        const uint8_t *add = cost + (size_t)clampi(y + r, 0, h - 1) * row;
        const uint8_t *sub = cost + (size_t)clampi(y - r - 1, 0, h - 1) * row;
        out = V + (size_t)y * row;
        for (size_t i = 0; i < row; i++)
            out[i] = (uint16_t)(prev[i] + add[i] - sub[i]);
    }
}

STEREO_HOT void block_horizontal_rows(const block_config *c, const uint16_t *V, uint16_t *S,
                                      int y0, int y1)
{
    const int w = c->width, D = c->ndisp, r = c->block / 2, shift = c->shift;
    uint32_t acc[D];
    for (int y = y0; y < y1; y++) {
        const uint16_t *in = V + (size_t)y * w * D;
        uint16_t *out = S + (size_t)y * w * D;
        memset(acc, 0, sizeof acc);
        for (int i = -r; i <= r; i++) {
            const uint16_t *v = in + (size_t)clampi(i, 0, w - 1) * D;
            for (int k = 0; k < D; k++)
                acc[k] += v[k];
        }
        for (int k = 0; k < D; k++)
            out[k] = (uint16_t)(acc[k] >> shift);
        for (int x = 1; x < w; x++) {
            const uint16_t *add = in + (size_t)clampi(x + r, 0, w - 1) * D;
            const uint16_t *sub = in + (size_t)clampi(x - r - 1, 0, w - 1) * D;
            uint16_t *o = out + (size_t)x * D;
            for (int k = 0; k < D; k++) {
                acc[k] = acc[k] + add[k] - sub[k];
                o[k] = (uint16_t)(acc[k] >> shift);
            }
        }
    }
}
