/* SPDX-License-Identifier: Apache-2.0 */
/* mapgen.c — see mapgen.h. */
#include "mapgen.h"

#include <math.h>
#include <stdlib.h>

int mapgen_similarity(stereo_map *m, int width, int height, int src_width, int src_height,
                      double angle, double scale, double dx, double dy)
{
    size_t n = (size_t)width * height;
    int16_t *xy = malloc(4 * n);
    uint16_t *frac = malloc(2 * n);
    if (!xy || !frac) {
        free(xy);
        free(frac);
        return -1;
    }
    double c = cos(angle) * scale, s = sin(angle) * scale;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            size_t i = (size_t)y * width + x;
            double sx = c * x - s * y + dx, sy = s * x + c * y + dy;
            double fx = floor(sx), fy = floor(sy);
            /* clamp far-away positions into int16; they stay outside, hence invalid */
            xy[2 * i] = (int16_t)fmax(-32768, fmin(32767, fx));
            xy[2 * i + 1] = (int16_t)fmax(-32768, fmin(32767, fy));
            frac[i] = (uint16_t)((int)((sy - fy) * 32) * 32 + (int)((sx - fx) * 32));
        }
    *m = (stereo_map){width, height, src_width, src_height, xy, frac};
    return 0;
}

void mapgen_free(stereo_map *m)
{
    free((void *)m->xy);
    free((void *)m->frac);
    m->xy = NULL;
    m->frac = NULL;
}
