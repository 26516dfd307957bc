/* SPDX-License-Identifier: Apache-2.0 */
/* grey.h — stage 1: camera pixels to 8-bit grey.
 *
 * GREY8: copied. RGB24 (R,G,B bytes): Y = (77 R + 150 G + 29 B + 128) >> 8 (stereo_grey_rgb in
 * stereo_math.h). YUYV (Y0 U Y1 V per two pixels): pixel x takes the Y byte at offset 2x; chroma
 * is ignored. Output rows are tightly packed (width bytes).
 */
#ifndef STEREO_GREY_H
#define STEREO_GREY_H

#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Converts rows [y0, y1) of in into out (in->width bytes per row). */
void grey_convert_rows(const stereo_image *in, uint8_t *out, int y0, int y1);

#ifdef __cplusplus
}
#endif
#endif
