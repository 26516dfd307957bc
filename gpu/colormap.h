/* SPDX-License-Identifier: Apache-2.0 */
/* colormap.h — disparity to colour for display and for `stereo-match --color`.
 *
 * A valid value v (16ths of a pixel) maps to the lookup index
 *   i = clamp(((v - lo) * 255 + (hi - lo) / 2) / (hi - lo), 0, 255)
 * with lo = 16 dmin and hi = 16 (dmin + D - 1) (near = high index); invalid pixels are black.
 * The tables are computed once on the host (colormap_lut), so CPU and GPU share them exactly.
 *   turbo: Google's Turbo map through its published 6th-order polynomial approximation;
 *   jet:   the classic piecewise-linear blue-cyan-yellow-red ramp;
 *   grey:  i, i, i.
 */
#ifndef STEREO_COLORMAP_H
#define STEREO_COLORMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { COLORMAP_TURBO = 0, COLORMAP_JET = 1, COLORMAP_GREY = 2, COLORMAP_COUNT } colormap_id;

const char *colormap_to_str(colormap_id id);
int colormap_from_str(const char *s, colormap_id *out); /* 0 on success, -1 unknown name */

/* lut[i * 3 + c]: 256 RGB entries. */
void colormap_lut(colormap_id id, uint8_t lut[256 * 3]);

/* Rows [y0, y1) of disp (w wide) into out with `channels` bytes per pixel (3 = RGB, 4 = RGBA with
 * alpha 255), out_pitch bytes per row. */
void colormap_disparity_rows(const int16_t *disp, int w, int dmin, int ndisp,
                             const uint8_t lut[256 * 3], uint8_t *out, int channels,
                             size_t out_pitch, int y0, int y1);

#ifdef __cplusplus
}
#endif
#endif
