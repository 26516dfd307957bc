/* SPDX-License-Identifier: Apache-2.0 */
/* rectify.h — stage 2: rectification by precomputed fixed-point maps (OpenCV's convention).
 *
 * For output pixel (x, y), i = y * width + x: the source position is
 *   (xy[2i] + fx / 32, xy[2i+1] + fy / 32), fx = frac[i] & 31, fy = (frac[i] >> 5) & 31,
 * sampled bilinearly in integers (stereo_bilinear in stereo_math.h). An output pixel whose
 * sample needs a source pixel outside the source image (with non-zero weight) is 0 and flagged
 * invalid (valid[i] = 0); such pixels never produce a disparity. An identity map reproduces the
 * input exactly. frac values above 1023 are refused when maps are loaded (rectify_map_check).
 */
#ifndef STEREO_RECTIFY_H
#define STEREO_RECTIFY_H

#include <stddef.h>
#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rectifies rows [y0, y1) of the output (map->width bytes per row) from src (pitch bytes/row). */
void rectify_rows(const stereo_map *map, const uint8_t *src, size_t pitch, uint8_t *dst,
                  uint8_t *valid, int y0, int y1);

/* The same rule for an interleaved image of channels (1..4) bytes per pixel, each channel
 * sampled as rectify_rows samples grey (outside the source: 0): the colour of the points of a
 * PLY (hal/depth.h). dst holds map->width * channels bytes per row. */
void rectify_rows_interleaved(const stereo_map *map, const uint8_t *src, size_t pitch,
                              int channels, uint8_t *dst, int y0, int y1);

/* Checks a map's sizes and fractional indices; 0 if usable, else -1 with err = what is wrong. */
int rectify_map_check(const stereo_map *map, int width, int height, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
