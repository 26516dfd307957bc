/* SPDX-License-Identifier: Apache-2.0 */
/* transform.c — CPU reference of stage 3 (see transform.h).
 *
 * Both transforms walk the window one source row at a time: the row is copied with its clamped
 * border into a padded line, and then every horizontal offset compares a contiguous slice of that
 * line against the centre row, a loop gcc vectorises. */
#include "transform.h"

#include <string.h>

#include "mi.h"
#include "stereo_math.h"

int transform_max_cost(stereo_cost cost, int rank_window)
{
    switch (cost) {
    case STEREO_COST_CENSUS:
    case STEREO_COST_ADCENSUS: return CENSUS_BITS;
    case STEREO_COST_AD:
    case STEREO_COST_BT: return STEREO_GREY_COST_MAX;
    case STEREO_COST_MI: return MI_MAX_COST;
    default: return rank_window * rank_window - 1;
    }
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* line[0 .. w+2r) = row with r replicated pixels at each end */
static void pad_row(const uint8_t *row, int w, int r, uint8_t *line)
{
    memset(line, row[0], (size_t)r);
    memcpy(line + r, row, (size_t)w);
    memset(line + r + w, row[w - 1], (size_t)r);
}

STEREO_HOT void rank_transform_rows(const uint8_t *img, int w, int h, int window, uint8_t *out, int y0,
                         int y1)
{
    int r = window / 2;
    uint8_t line[w + 2 * RANK_WINDOW_MAX];
    uint8_t count[w];
    for (int y = y0; y < y1; y++) {
        const uint8_t *centre = img + (size_t)y * w;
        memset(count, 0, (size_t)w);
        for (int j = -r; j <= r; j++) {
            pad_row(img + (size_t)clampi(y + j, 0, h - 1) * w, w, r, line);
            for (int i = 0; i < window; i++) {
                const uint8_t *q = line + i; /* q[x] = I(clamp(x + i - r), y + j) */
                for (int x = 0; x < w; x++)
                    count[x] += q[x] < centre[x];
            }
        }
        memcpy(out + (size_t)y * w, count, (size_t)w);
    }
}

/* The census transform 32 pixels at a time on byte vectors (GCC's generic vectors: AVX2, SSE2
 * or NEON as the target has). The window's rows are kept with their sign bit flipped, so that
 * each comparison is one signed compare; a comparison's mask, masked to its bit, is or-ed into
 * the byte of the code it belongs to, and the 8 bytes of 32 codes are interleaved into 64-bit
 * words at the end (3 rounds of shuffles). */
typedef uint8_t cv8 __attribute__((vector_size(32)));
typedef int8_t cvs8 __attribute__((vector_size(32)));
typedef uint16_t cv16 __attribute__((vector_size(32)));
typedef uint32_t cv32 __attribute__((vector_size(32)));
#if defined(__clang__)
#define CSHUF(a, b, T, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define CSHUF(a, b, T, ...) __builtin_shuffle(a, b, (T){__VA_ARGS__})
#endif
typedef int8_t cmask8 __attribute__((vector_size(32)));
typedef int16_t cmask16 __attribute__((vector_size(32)));
typedef int32_t cmask32 __attribute__((vector_size(32)));

static inline void census_interleave(const cv8 b[8], uint64_t out[32])
{
    cv16 p[2][4]; /* [pixels 0-15 / 16-31][byte pair] */
    for (int k = 0; k < 4; k++) {
        p[0][k] = (cv16)CSHUF(b[2 * k], b[2 * k + 1], cmask8, 0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39, 8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47);
        p[1][k] = (cv16)CSHUF(b[2 * k], b[2 * k + 1], cmask8, 16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63);
    }
    for (int q = 0; q < 2; q++)
        for (int half = 0; half < 2; half++) {
            cv32 lo = half ? (cv32)CSHUF(p[q][0], p[q][1], cmask16, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
                           : (cv32)CSHUF(p[q][0], p[q][1], cmask16, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            cv32 hi = half ? (cv32)CSHUF(p[q][2], p[q][3], cmask16, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
                           : (cv32)CSHUF(p[q][2], p[q][3], cmask16, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            cv32 w0 = CSHUF(lo, hi, cmask32, 0, 8, 1, 9, 2, 10, 3, 11);
            cv32 w1 = CSHUF(lo, hi, cmask32, 4, 12, 5, 13, 6, 14, 7, 15);
            uint64_t *o = out + 16 * q + 8 * half;
            memcpy(o, &w0, sizeof w0);
            memcpy(o + 4, &w1, sizeof w1);
        }
}

/* pad_row with the sign bit of every value flipped, and `extra` zeros after it */
static void pad_row_signed(const uint8_t *row, int w, int r, int extra, uint8_t *line)
{
    pad_row(row, w, r, line);
    for (int i = 0; i < w + 2 * r; i++)
        line[i] ^= 0x80;
    memset(line + w + 2 * r, 0, (size_t)extra);
}

STEREO_HOT void census_transform_rows(const uint8_t *img, int w, int h, uint64_t *out, int y0,
                                      int y1)
{
    enum { V = 32 };
    const int rx = CENSUS_WIDTH / 2, ry = CENSUS_HEIGHT / 2;
    const int stride = w + 2 * rx + V;
    uint8_t lines[CENSUS_HEIGHT][stride];
    for (int y = y0; y < y1; y++) {
        for (int j = -ry; j <= ry; j++)
            pad_row_signed(img + (size_t)clampi(y + j, 0, h - 1) * w, w, rx, V, lines[j + ry]);
        uint64_t *bits = out + (size_t)y * w;
        for (int x0 = 0; x0 < w; x0 += V) {
            cvs8 c;
            memcpy(&c, lines[ry] + rx + x0, sizeof c);
            cv8 b[8] = {{0}};
            int bit = CENSUS_BITS - 1; /* the first window pixel: the most significant bit */
            for (int j = 0; j < CENSUS_HEIGHT; j++)
                for (int i = 0; i < CENSUS_WIDTH; i++) {
                    if (j == ry && i == rx)
                        continue;
                    cvs8 q;
                    memcpy(&q, lines[j] + i + x0, sizeof q);
                    b[bit >> 3] |= (cv8)(q < c) & (uint8_t)(1u << (bit & 7));
                    bit--;
                }
            uint64_t codes[V];
            census_interleave(b, codes);
            memcpy(bits + x0, codes, sizeof(uint64_t) * (size_t)(w - x0 < V ? w - x0 : V));
        }
    }
}
