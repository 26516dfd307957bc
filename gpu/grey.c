/* SPDX-License-Identifier: Apache-2.0 */
/* grey.c — CPU reference of stage 1 (see grey.h). */
#include "grey.h"

#include <string.h>

#include "stereo_math.h"

void grey_convert_rows(const stereo_image *in, uint8_t *out, int y0, int y1)
{
    int w = in->width;
    for (int y = y0; y < y1; y++) {
        const uint8_t *src = in->data + (size_t)y * in->pitch;
        uint8_t *dst = out + (size_t)y * w;
        switch (in->format) {
        case STEREO_PIX_GREY8:
            memcpy(dst, src, (size_t)w);
            break;
        case STEREO_PIX_RGB24:
            for (int x = 0; x < w; x++)
                dst[x] = stereo_grey_rgb(src[3 * x], src[3 * x + 1], src[3 * x + 2]);
            break;
        case STEREO_PIX_YUYV:
            for (int x = 0; x < w; x++)
                dst[x] = src[2 * x];
            break;
        }
    }
}
