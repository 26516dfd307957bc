/* SPDX-License-Identifier: Apache-2.0 */
/* cross.c — cross-based cost aggregation and depth-discontinuity adjustment on the CPU, the
 * specification (cross.h has the rules). */
#include "cross.h"

void cross_arms_rows(const uint8_t *grey, int w, int h, int cap, uint32_t *arms, int y0, int y1)
{
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++)
            arms[(size_t)y * w + x] = cross_arms(grey, w, h, x, y, cap);
}

STEREO_HOT void cross_hsum_rows(const uint8_t *cost, const uint32_t *arms, int w, int ndisp,
                                uint16_t *H, int y0, int y1)
{
    const size_t D = (size_t)ndisp;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            const uint32_t a = arms[i];
            uint16_t *restrict out = H + i * D;
            const uint8_t *c = cost + (i - (size_t)cross_left(a)) * D;
            for (size_t k = 0; k < D; k++)
                out[k] = c[k];
            for (int q = 1; q <= cross_left(a) + cross_right(a); q++) {
                c += D;
                for (size_t k = 0; k < D; k++)
                    out[k] = (uint16_t)(out[k] + c[k]);
            }
        }
}

STEREO_HOT void cross_vsum_rows(const uint16_t *H, const uint32_t *arms, int w, int ndisp,
                                uint8_t *cost, int y0, int y1)
{
    const size_t D = (size_t)ndisp;
    uint32_t sum[512]; /* D <= 512 (stereo_check_disparities) */
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            const uint32_t a = arms[i];
            const int top = y - cross_up(a), bottom = y + cross_down(a);
            uint32_t n = 0;
            for (size_t k = 0; k < D; k++)
                sum[k] = 0;
            for (int qy = top; qy <= bottom; qy++) {
                const size_t q = (size_t)qy * w + x;
                const uint16_t *hq = H + q * D;
                n += (uint32_t)(cross_left(arms[q]) + cross_right(arms[q]) + 1);
                for (size_t k = 0; k < D; k++)
                    sum[k] += hq[k];
            }
            uint8_t *out = cost + i * D;
            const float inv = 1.0f / (float)n;
            for (size_t k = 0; k < D; k++)
                out[k] = (uint8_t)cross_mean(sum[k], n, inv);
        }
}

void cross_adjust_rows(const int16_t *in, const uint8_t *cost, int w, int dmin, int ndisp,
                       int16_t *out, int y0, int y1)
{
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            out[i] = cross_adjust(in, cost + i * (size_t)ndisp, w, x, i, dmin, ndisp);
        }
}
