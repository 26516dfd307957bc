/* SPDX-License-Identifier: Apache-2.0 */
/* legend.h — the key to a colour-mapped disparity image: a colour bar with labelled ticks.
 *
 * legend_ticks chooses the ticks (shared by the live app, which draws them with SDL_ttf, and
 * stereo-match --legend); legend_draw_rgb draws a whole legend strip into an RGB image with a
 * built-in 5x7 pixel font (digits, '.', '-', 'p', 'x', 'm'), so that stereo-match needs no font
 * library. libc only.
 */
#ifndef STEREO_LEGEND_H
#define STEREO_LEGEND_H

#include <stddef.h>
#include <stdint.h>

#include "colormap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LEGEND_MAX_TICKS 12

typedef struct {
    double pos;       /* along the bar: 0 at range.lo (the map's first colour), 1 at range.hi */
    char label[16];   /* "12.5", or in metres "3.2" */
} legend_tick;

/* Ticks for a colour bar over range (16ths of a pixel) at "nice" values (1, 2 or 5 times a
 * power of ten), at most max_ticks (<= LEGEND_MAX_TICKS) of them, ascending in pos. With
 * focal_baseline > 0 (focal length in px times baseline in m) the labels are depths
 * Z = focal_baseline / d in metres, at nice depths between the range's ends (disparities below
 * 1 px count as 1 px); otherwise disparities in pixels. Returns the number of ticks (>= 1 for
 * any lo < hi). */
int legend_ticks(colormap_range range, double focal_baseline, int max_ticks, legend_tick *out);

/* The height of the strip legend_draw_rgb draws for an image w pixels wide. */
int legend_height(int w);

/* Draws the legend strip (legend_height(w) rows) at rgb (3 bytes per pixel, pitch bytes per
 * row, w pixels wide): a dark background, the colour bar over range through lut (colormap.h's
 * rule, so the bar shows exactly the colours of the image), tick marks and their labels in
 * pixels, "px" after the last. */
void legend_draw_rgb(uint8_t *rgb, int w, size_t pitch, const uint8_t lut[256 * 3],
                     colormap_range range);

#ifdef __cplusplus
}
#endif
#endif
