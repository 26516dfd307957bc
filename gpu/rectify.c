/* SPDX-License-Identifier: Apache-2.0 */
/* rectify.c — CPU reference of stage 2 (see rectify.h). */
#include "rectify.h"

#include <stdio.h>

#include "stereo_math.h"

void rectify_rows(const stereo_map *map, const uint8_t *src, size_t pitch, uint8_t *dst,
                  uint8_t *valid, int y0, int y1)
{
    int w = map->width, sw = map->src_width, sh = map->src_height;
    for (int y = y0; y < y1; y++) {
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            int sx = map->xy[2 * i], sy = map->xy[2 * i + 1];
            int fx = map->frac[i] & 31, fy = (map->frac[i] >> 5) & 31;
            if (!stereo_bilinear_valid(sx, sy, fx, fy, sw, sh)) {
                dst[i] = 0;
                valid[i] = 0;
                continue;
            }
            const uint8_t *p = src + (size_t)sy * pitch + sx;
            /* neighbours with zero weight are not read (they may lie outside) */
            uint32_t a = p[0];
            uint32_t b = fx ? p[1] : 0;
            uint32_t c = fy ? p[pitch] : 0;
            uint32_t d = (fx && fy) ? p[pitch + 1] : 0;
            dst[i] = stereo_bilinear(a, b, c, d, fx, fy);
            valid[i] = 1;
        }
    }
}

void rectify_rows_interleaved(const stereo_map *map, const uint8_t *src, size_t pitch,
                              int channels, uint8_t *dst, int y0, int y1)
{
    int w = map->width, sw = map->src_width, sh = map->src_height, ch = channels;
    for (int y = y0; y < y1; y++) {
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            uint8_t *o = dst + i * ch;
            int sx = map->xy[2 * i], sy = map->xy[2 * i + 1];
            int fx = map->frac[i] & 31, fy = (map->frac[i] >> 5) & 31;
            if (!stereo_bilinear_valid(sx, sy, fx, fy, sw, sh)) {
                for (int k = 0; k < ch; k++)
                    o[k] = 0;
                continue;
            }
            const uint8_t *p = src + (size_t)sy * pitch + (size_t)sx * ch;
            for (int k = 0; k < ch; k++) { /* zero-weight neighbours are not read */
                uint32_t a = p[k];
                uint32_t b = fx ? p[ch + k] : 0;
                uint32_t c = fy ? p[pitch + k] : 0;
                uint32_t d = (fx && fy) ? p[pitch + ch + k] : 0;
                o[k] = stereo_bilinear(a, b, c, d, fx, fy);
            }
        }
    }
}

int rectify_map_check(const stereo_map *map, int width, int height, char *err, size_t errlen)
{
    if (!map->xy || !map->frac) {
        snprintf(err, errlen, "map has no data");
        return -1;
    }
    if (map->width != width || map->height != height) {
        snprintf(err, errlen, "map output size %dx%d does not match the stage size %dx%d",
                 map->width, map->height, width, height);
        return -1;
    }
    if (map->src_width < 1 || map->src_height < 1 || map->src_width > STEREO_MAX_SIDE ||
        map->src_height > STEREO_MAX_SIDE) {
        snprintf(err, errlen, "map source size %dx%d is outside 1x1..%dx%d", map->src_width,
                 map->src_height, STEREO_MAX_SIDE, STEREO_MAX_SIDE);
        return -1;
    }
    size_t n = (size_t)width * height;
    for (size_t i = 0; i < n; i++) {
        if (map->frac[i] > 1023) {
            snprintf(err, errlen, "map fraction index %u at pixel %zu exceeds 1023",
                     map->frac[i], i);
            return -1;
        }
    }
    return 0;
}
