/* SPDX-License-Identifier: Apache-2.0 */
/* colormap.h — disparity to colour for display and for `stereo-match --color`.
 *
 * A valid value v (16ths of a pixel) maps to the lookup index
 *   i = clamp(((v - lo) * 255 + (hi - lo) / 2) / (hi - lo), 0, 255)   (C integer division)
 * over a colour range lo < hi (near = high index); invalid pixels are black. The fixed range is
 * the search range, lo = 16 dmin and hi = 16 (dmin + D - 1); the automatic one
 * (colormap_auto_range) spans the 1st to 99th percentile of the frame's valid disparities, so
 * that a scene using a part of the search range still gets the whole map. The GPU kernels take
 * the same lo and hi and evaluate the same integer formula.
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

/* A colour range in 16ths of a pixel: lo gets the first table entry, hi the last (lo < hi). */
typedef struct {
    int lo, hi;
} colormap_range;

/* The search range: 16 dmin .. 16 (dmin + ndisp - 1). */
colormap_range colormap_fixed_range(int dmin, int ndisp);

/* The automatic range of a disparity map (n values, 16ths of a pixel, or STEREO_INVALID) from
 * a stage searching dmin .. dmin + ndisp - 1: one histogram pass over the valid values (bins of
 * 1/16 px, values outside the search range counted at its ends), then the nearest-rank
 * percentiles: with N valid values sorted ascending v_1 <= ... <= v_N,
 *   lo = v_r1 with r1 = ceil(N / 100),   hi = v_r99 with r99 = ceil(99 N / 100)
 * (integers only). A range narrower than 1 px is widened to hi = lo + 16 (a flat scene).
 * Returns 0, or -1 when no value is valid (*out = the fixed range then). */
int colormap_auto_range(const int16_t *disp, size_t n, int dmin, int ndisp, colormap_range *out);

/* lut[i * 3 + c]: 256 RGB entries. */
void colormap_lut(colormap_id id, uint8_t lut[256 * 3]);

/* Rows [y0, y1) of disp (w wide), coloured over range, into out with `channels` bytes per pixel (3 = RGB, 4 = RGBA with
 * alpha 255), out_pitch bytes per row. */
void colormap_disparity_rows(const int16_t *disp, int w, colormap_range range,
                             const uint8_t lut[256 * 3], uint8_t *out, int channels,
                             size_t out_pitch, int y0, int y1);

#ifdef __cplusplus
}
#endif
#endif
