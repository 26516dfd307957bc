/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd_kernels.h — the fused SGM path's kernels (sgm_simd.h), written once on a small
 * vector API and compiled once per instruction set: a file that includes this header defines
 * SGM_SIMD_TABLE (the name of its sgm_simd_isa) and SGM_SIMD_NAME, and is compiled with that
 * set's flags (sgm_simd_base.c: the baseline; sgm_simd_avx2.c: -mavx2).
 *
 * Vectors hold VL uint16 lanes (16 with AVX2, 8 with SSE2, NEON and GCC's generic vectors).
 * D is a multiple of 16 (stereo_params_check), so a pixel's D disparities are D / VL whole
 * vectors. Every lane operation is an exact uint16 operation: L <= max_cost + P2 < 0x7fff and
 * the sentinel STEREO_SGM_FAR + P1 < 0x10000, the sums as in sgm.h.
 *
 * A sweep's scratch (sgm_simd_scratch_size), uint16, each part aligned to 64 bytes:
 *   rows  [3][w + 2][B]      the vertical and diagonal directions' L. A block of B = D + 16
 *                            holds a pixel's L at [16 .. 16 + D) after 16 sentinels
 *                            (STEREO_SGM_FAR): loads at k - 1 and k + 1 read a sentinel at the
 *                            ends of the range (the next block's first one past k = D - 1).
 *                            The blocks are a ring: row yi of the sweep keeps pixel x in block
 *                            (x - 2 sx yi) mod (w + 2), so pixel x of the row goes where pixel
 *                            x - 2 sx of the previous row was (or one of the two spare blocks),
 *                            which neither it (reading x - sx, x, x + sx) nor a later pixel of
 *                            the row reads any more: the previous row needs no copy.
 *   zero  [B]                zeros between sentinels: the "previous L" of a path's first pixel
 *                            (with min 0 it gives L = C)
 *   hz    [2][D]             the horizontal direction's L at the previous / current pixel
 *   mins  [2][3][w]          min_k L of the row directions, previous / current row
 *   cost  [D]                the pixel's costs, when the sweep computes them (rank, ad)
 *   rrev  [w + D]            the right image's row (rank or grey) reversed, for those costs
 *   st    [D][sts]           part 1: the row's total S transposed, st[k][x], for the right
 *                            disparity, biased (row_wta_right); columns w .. sts - 1 hold 0x7fff
 *   grp   [8][D]             part 1: the totals of the group of 8 pixels being done (x & ~7)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgm_simd.h"
#include "stereo_types.h"
#include "stereo_math.h"

/* The instruction set: SGM_SIMD_GENERIC (sgm_simd_generic.c) takes GCC's generic vectors
 * whatever the target has */
#if defined(SGM_SIMD_GENERIC)
#define VB 16
#elif defined(__AVX2__)
#define ISA_AVX2 1
#include <immintrin.h>
#define VB 32
#elif defined(__SSE2__)
#define ISA_SSE2 1
#include <emmintrin.h>
#define VB 16
#elif defined(__ARM_NEON)
#define ISA_NEON 1
#include <arm_neon.h>
#define VB 16
#else
#define VB 16
#endif
#define VL (VB / 2)

typedef uint16_t vu16 __attribute__((vector_size(VB)));
typedef int16_t vi16 __attribute__((vector_size(VB)));
typedef uint8_t vu8 __attribute__((vector_size(VB)));
typedef uint8_t vu8h __attribute__((vector_size(VL))); /* VL bytes, widened to one vu16 */
typedef uint16_t v8u16 __attribute__((vector_size(16))); /* the transpose's 8 x 8 blocks */
typedef int16_t v8i16 __attribute__((vector_size(16)));

#define INLINE static inline __attribute__((always_inline))

/* ---- the vector API ------------------------------------------------------------------------ */

INLINE vu16 vld(const uint16_t *p)
{
    vu16 v;
    memcpy(&v, p, sizeof v);
    return v;
}

INLINE void vst(uint16_t *p, vu16 v) { memcpy(p, &v, sizeof v); }

/* a store that bypasses the caches where the ISA has one (p aligned to VB): the partial sums of
 * part 0 are read again only in part 1 */
INLINE void vst_stream(uint16_t *p, vu16 v)
{
#if defined(ISA_AVX2)
    _mm256_stream_si256((__m256i *)p, (__m256i)v);
#elif defined(ISA_SSE2)
    _mm_stream_si128((__m128i *)p, (__m128i)v);
#else
    vst(p, v);
#endif
}

INLINE vu16 vsplat(uint16_t x) { return (vu16){0} + x; }

/* n bytes from p to q, past the caches where the ISA has such stores and q and n allow them: q
 * is read again only much later */
INLINE void bytes_stream(uint8_t *q, const uint8_t *p, int n)
{
    if ((uintptr_t)q % VB == 0 && n % VB == 0) {
        for (int i = 0; i < n; i += VB)
            vst_stream((uint16_t *)(q + i), vld((const uint16_t *)(p + i)));
    } else {
        memcpy(q, p, (size_t)n);
    }
}

/* VL bytes widened to uint16 lanes */
INLINE vu16 vld_u8(const uint8_t *p)
{
#if defined(ISA_AVX2)
    return (vu16)_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
#elif defined(ISA_SSE2)
    return (vu16)_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p), _mm_setzero_si128());
#else
    vu8h b;
    memcpy(&b, p, sizeof b);
    return __builtin_convertvector(b, vu16);
#endif
}

INLINE vu16 vmin(vu16 a, vu16 b)
{
#if defined(ISA_AVX2)
    return (vu16)_mm256_min_epu16((__m256i)a, (__m256i)b);
#elif defined(ISA_SSE2)
    return a - (vu16)_mm_subs_epu16((__m128i)a, (__m128i)b); /* a - max(a - b, 0) */
#elif defined(ISA_NEON)
    return (vu16)vminq_u16((uint16x8_t)a, (uint16x8_t)b);
#else
    return b ^ ((a ^ b) & (vu16)(a < b));
#endif
}

/* signed min, and a blend by a mask of whole lanes: for the right disparity's search on
 * biased values (row_wta_right) */
INLINE vi16 vmin_s(vi16 a, vi16 b)
{
#if defined(ISA_AVX2)
    return (vi16)_mm256_min_epi16((__m256i)a, (__m256i)b);
#elif defined(ISA_SSE2)
    return (vi16)_mm_min_epi16((__m128i)a, (__m128i)b);
#elif defined(ISA_NEON)
    return (vi16)vminq_s16((int16x8_t)a, (int16x8_t)b);
#else
    return b ^ ((a ^ b) & (a < b));
#endif
}

INLINE vi16 vblend_s(vi16 a, vi16 b, vi16 m)
{
#if defined(ISA_AVX2)
    return (vi16)_mm256_blendv_epi8((__m256i)a, (__m256i)b, (__m256i)m);
#elif defined(ISA_NEON)
    return (vi16)vbslq_s16((uint16x8_t)m, (int16x8_t)b, (int16x8_t)a);
#else
    return (a & ~m) | (b & m);
#endif
}

INLINE vu8 bytes_min(vu8 a, vu8 b)
{
#if defined(ISA_AVX2)
    return (vu8)_mm256_min_epu8((__m256i)a, (__m256i)b);
#elif defined(ISA_SSE2)
    return (vu8)_mm_min_epu8((__m128i)a, (__m128i)b);
#elif defined(ISA_NEON)
    return (vu8)vminq_u8((uint8x16_t)a, (uint8x16_t)b);
#else
    return b ^ ((a ^ b) & (vu8)(a < b));
#endif
}

/* |a - b| of uint8 lanes */
INLINE vu8 bytes_absdiff(vu8 a, vu8 b)
{
#if defined(ISA_AVX2)
    return (vu8)_mm256_sub_epi8(_mm256_max_epu8((__m256i)a, (__m256i)b),
                                _mm256_min_epu8((__m256i)a, (__m256i)b));
#elif defined(ISA_SSE2)
    return (vu8)_mm_or_si128(_mm_subs_epu8((__m128i)a, (__m128i)b),
                             _mm_subs_epu8((__m128i)b, (__m128i)a));
#elif defined(ISA_NEON)
    return (vu8)vabdq_u8((uint8x16_t)a, (uint8x16_t)b);
#else
    vu8 m = (vu8)(a < b);
    return ((b - a) & m) | ((a - b) & ~m);
#endif
}

/* saturating a + b of uint8 lanes */
INLINE vu8 bytes_adds(vu8 a, vu8 b)
{
#if defined(ISA_AVX2)
    return (vu8)_mm256_adds_epu8((__m256i)a, (__m256i)b);
#elif defined(ISA_SSE2)
    return (vu8)_mm_adds_epu8((__m128i)a, (__m128i)b);
#elif defined(ISA_NEON)
    return (vu8)vqaddq_u8((uint8x16_t)a, (uint8x16_t)b);
#else
    vu8 t = a + b;
    return t | (vu8)(t < a);
#endif
}

/* max(a - b, 0) and max(a, b) of uint8 lanes */
INLINE vu8 bytes_subs(vu8 a, vu8 b)
{
#if defined(ISA_AVX2)
    return (vu8)_mm256_subs_epu8((__m256i)a, (__m256i)b);
#elif defined(ISA_SSE2)
    return (vu8)_mm_subs_epu8((__m128i)a, (__m128i)b);
#elif defined(ISA_NEON)
    return (vu8)vqsubq_u8((uint8x16_t)a, (uint8x16_t)b);
#else
    return (a - b) & (vu8)(a > b);
#endif
}

INLINE vu8 bytes_max(vu8 a, vu8 b)
{
#if defined(ISA_AVX2)
    return (vu8)_mm256_max_epu8((__m256i)a, (__m256i)b);
#elif defined(ISA_SSE2)
    return (vu8)_mm_max_epu8((__m128i)a, (__m128i)b);
#elif defined(ISA_NEON)
    return (vu8)vmaxq_u8((uint8x16_t)a, (uint8x16_t)b);
#else
    return a ^ ((a ^ b) & (vu8)(a < b));
#endif
}

/* the uint8 lanes 0 .. VL-1 (lo) and VL .. VB-1 (hi) widened to uint16 */
INLINE void bytes_widen(vu8 a, vu16 *lo, vu16 *hi)
{
#if defined(ISA_AVX2)
    *lo = (vu16)_mm256_cvtepu8_epi16(_mm256_castsi256_si128((__m256i)a));
    *hi = (vu16)_mm256_cvtepu8_epi16(_mm256_extracti128_si256((__m256i)a, 1));
#elif defined(ISA_SSE2)
    *lo = (vu16)_mm_unpacklo_epi8((__m128i)a, _mm_setzero_si128());
    *hi = (vu16)_mm_unpackhi_epi8((__m128i)a, _mm_setzero_si128());
#elif defined(ISA_NEON)
    *lo = (vu16)vmovl_u8(vget_low_u8((uint8x16_t)a));
    *hi = (vu16)vmovl_u8(vget_high_u8((uint8x16_t)a));
#else
    vu8h l, h;
    memcpy(&l, &a, sizeof l);
    memcpy(&h, (const uint8_t *)&a + sizeof l, sizeof h);
    *lo = __builtin_convertvector(l, vu16);
    *hi = __builtin_convertvector(h, vu16);
#endif
}

/* Lane shifts across two vectors: shift_down(a, b)[j] = (a : b)[VL - 1 + j] (the element before
 * each of b's), shift_up(a, b)[j] = (a : b)[j + 1] (the element after each of a's). */
#if defined(__clang__)
#define SHUFFLE2(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUFFLE2(a, b, ...) __builtin_shuffle(a, b, (vi16){__VA_ARGS__})
#endif
#if VL == 16
INLINE vu16 shift_down(vu16 a, vu16 b)
{
    return SHUFFLE2(a, b, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30);
}
INLINE vu16 shift_up(vu16 a, vu16 b)
{
    return SHUFFLE2(a, b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
}
#elif defined(ISA_SSE2)
INLINE vu16 shift_down(vu16 a, vu16 b)
{
    return (vu16)_mm_or_si128(_mm_slli_si128((__m128i)b, 2), _mm_srli_si128((__m128i)a, 14));
}
INLINE vu16 shift_up(vu16 a, vu16 b)
{
    return (vu16)_mm_or_si128(_mm_srli_si128((__m128i)a, 2), _mm_slli_si128((__m128i)b, 14));
}
#elif defined(ISA_NEON)
INLINE vu16 shift_down(vu16 a, vu16 b)
{
    return (vu16)vextq_u16((uint16x8_t)a, (uint16x8_t)b, 7);
}
INLINE vu16 shift_up(vu16 a, vu16 b)
{
    return (vu16)vextq_u16((uint16x8_t)a, (uint16x8_t)b, 1);
}
#else
INLINE vu16 shift_down(vu16 a, vu16 b) { return SHUFFLE2(a, b, 7, 8, 9, 10, 11, 12, 13, 14); }
INLINE vu16 shift_up(vu16 a, vu16 b) { return SHUFFLE2(a, b, 1, 2, 3, 4, 5, 6, 7, 8); }
#endif

/* the same on uint8 lanes: bytes_shift_down(a, b)[j] = (a : b)[VB - 1 + j], bytes_shift_up(a,
 * b)[j] = (a : b)[j + 1] */
#if defined(__clang__)
#define SHUFFLEB(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef int8_t vi8 __attribute__((vector_size(VB)));
#define SHUFFLEB(a, b, ...) __builtin_shuffle(a, b, (vi8){__VA_ARGS__})
#endif
#if VB == 32
INLINE vu8 bytes_shift_down(vu8 a, vu8 b)
{
    return SHUFFLEB(a, b, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
                    49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62);
}
INLINE vu8 bytes_shift_up(vu8 a, vu8 b)
{
    return SHUFFLEB(a, b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                    21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32);
}
#elif defined(ISA_SSE2)
INLINE vu8 bytes_shift_down(vu8 a, vu8 b)
{
    return (vu8)_mm_or_si128(_mm_slli_si128((__m128i)b, 1), _mm_srli_si128((__m128i)a, 15));
}
INLINE vu8 bytes_shift_up(vu8 a, vu8 b)
{
    return (vu8)_mm_or_si128(_mm_srli_si128((__m128i)a, 1), _mm_slli_si128((__m128i)b, 15));
}
#elif defined(ISA_NEON)
INLINE vu8 bytes_shift_down(vu8 a, vu8 b) { return (vu8)vextq_u8((uint8x16_t)a, (uint8x16_t)b, 15); }
INLINE vu8 bytes_shift_up(vu8 a, vu8 b) { return (vu8)vextq_u8((uint8x16_t)a, (uint8x16_t)b, 1); }
#else
INLINE vu8 bytes_shift_down(vu8 a, vu8 b)
{
    return SHUFFLEB(a, b, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30);
}
INLINE vu8 bytes_shift_up(vu8 a, vu8 b)
{
    return SHUFFLEB(a, b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
}
#endif

/* min over the lanes */
INLINE uint16_t hmin(vu16 v)
{
#if defined(ISA_AVX2)
    __m128i m = _mm_min_epu16(_mm256_castsi256_si128((__m256i)v),
                              _mm256_extracti128_si256((__m256i)v, 1));
    return (uint16_t)_mm_cvtsi128_si32(_mm_minpos_epu16(m));
#elif defined(ISA_SSE2)
    __m128i m = (__m128i)v;
    m = (__m128i)vmin((vu16)m, (vu16)_mm_shuffle_epi32(m, 0x4e));
    m = (__m128i)vmin((vu16)m, (vu16)_mm_shuffle_epi32(m, 0xb1));
    m = (__m128i)vmin((vu16)m, (vu16)_mm_shufflelo_epi16(m, 0xb1));
    return (uint16_t)_mm_cvtsi128_si32(m);
#elif defined(ISA_NEON) && defined(__aarch64__)
    return vminvq_u16((uint16x8_t)v);
#else
    uint16_t m = v[0];
    for (int i = 1; i < VL; i++)
        m = v[i] < m ? v[i] : m;
    return m;
#endif
}

/* min over the uint8 lanes */
INLINE uint8_t bytes_hmin(vu8 v)
{
#if defined(ISA_NEON) && defined(__aarch64__)
    return vminvq_u8((uint8x16_t)v);
#else
    vu16 lo, hi;
    bytes_widen(v, &lo, &hi);
    return (uint8_t)hmin(vmin(lo, hi));
#endif
}

/* the first k < D with s[k] == x, without branches on the data: the minimum over the vectors
 * of k where s[k] == x and 0xffff elsewhere */
INLINE int find_first(const uint16_t *s, int D, uint16_t x)
{
    const vu16 vx = vsplat(x);
    vu16 lane, first = vsplat(0xffff);
    for (int j = 0; j < VL; j++)
        lane[j] = (uint16_t)j;
    for (int i = 0; i < D; i += VL)
        first = vmin(first, (lane + (uint16_t)i) | ~(vu16)(vld(s + i) == vx));
    return hmin(first);
}

/* 8 x 8 transpose of uint16: out[i][j] = in[j][i], rows at the given strides (elements) */
#if defined(__clang__)
#define SHUFFLE8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUFFLE8(a, b, ...) __builtin_shuffle(a, b, (v8i16){__VA_ARGS__})
#endif
INLINE void transpose8(const uint16_t *in, size_t in_stride, uint16_t *out, size_t out_stride)
{
    v8u16 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++)
        memcpy(&r[i], in + i * in_stride, 16);
    for (int i = 0; i < 4; i++) { /* pairs of rows: 16-bit interleave */
        t[2 * i] = SHUFFLE8(r[2 * i], r[2 * i + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        t[2 * i + 1] = SHUFFLE8(r[2 * i], r[2 * i + 1], 4, 12, 5, 13, 6, 14, 7, 15);
    }
    for (int i = 0; i < 2; i++) /* 32-bit interleave of pairs 0-1 with 2-3, 4-5 with 6-7 */
        for (int h = 0; h < 2; h++) {
            v8u16 a = t[4 * i + h], b = t[4 * i + 2 + h];
            u[4 * i + 2 * h] = SHUFFLE8(a, b, 0, 1, 8, 9, 2, 3, 10, 11);
            u[4 * i + 2 * h + 1] = SHUFFLE8(a, b, 4, 5, 12, 13, 6, 7, 14, 15);
        }
    for (int j = 0; j < 4; j++) { /* 64-bit interleave of the two halves */
        v8u16 lo = SHUFFLE8(u[j], u[4 + j], 0, 1, 2, 3, 8, 9, 10, 11);
        v8u16 hi = SHUFFLE8(u[j], u[4 + j], 4, 5, 6, 7, 12, 13, 14, 15);
        memcpy(out + (size_t)(2 * j) * out_stride, &lo, 16);
        memcpy(out + (size_t)(2 * j + 1) * out_stride, &hi, 16);
    }
}

/* ---- the scratch ------------------------------------------------------------------------- */

#define ALIGN_UP(n, a) (((n) + (a) - 1) / (a) * (a))
#define PAD SGM_SIMD_PAD

typedef struct {
    uint16_t *rows, *zero, *hz, *mins, *cost, *rrev, *st, *grp;
    uint8_t *nib;
    size_t B, nblk, sts, nibs;
} scratch_layout;

static scratch_layout layout_of(const sgm_config *c, void *base)
{
    sgm_simd_layout l;
    sgm_simd_layout_of(c, &l);
    uint16_t *p = (uint16_t *)ALIGN_UP((uintptr_t)base, 64);
    return (scratch_layout){p + l.rows, p + l.zero, p + l.hz,  p + l.mins,
                            p + l.cost, p + l.rrev, p + l.st,  p + l.grp,
                            (uint8_t *)(p + l.nib), l.B, l.nblk, l.sts, l.nibs};
}

/* ---- the costs of one pixel, rank and ad (sgm.h) -----------------------------------------
 * min(|IL(x) - IR(x - d)|, max_cost) on the rank transforms (whose difference never exceeds
 * max_cost) or the grey images (stereo_ad_cost); max_cost where x - d < 0. */

static inline void absdiff_row_reverse(const sgm_fused *f, int y, uint16_t *rrev16)
{
    const int w = f->sgm->width;
    uint8_t *rrev = (uint8_t *)rrev16;
    const uint8_t *rr = f->absdiff[1] + (size_t)y * w;
    for (int t = 0; t < w; t++)
        rrev[t] = rr[w - 1 - t];
}

INLINE void absdiff_costs(const sgm_fused *f, int y, int x, const uint16_t *rrev16, uint8_t *cp)
{
    const sgm_config *c = f->sgm;
    const int w = c->width, D = c->ndisp;
    int inside = x - c->dmin + 1;
    inside = inside > D ? D : inside < 0 ? 0 : inside;
    if (inside > 0) { /* IR(x - dmin - k) = rrev[w - 1 - x + dmin + k] */
        const uint8_t *q = (const uint8_t *)rrev16 + (w - 1 - x + c->dmin);
        const vu8 base = (vu8){0} + f->absdiff[0][(size_t)y * w + x];
        const vu8 cap = (vu8){0} + (uint8_t)c->max_cost;
        for (int k = 0; k < D; k += VB) {
            vu8 v;
            memcpy(&v, q + k, sizeof v);
            v = bytes_min(bytes_absdiff(base, v), cap);
            memcpy(cp + k, &v, sizeof v);
        }
    }
    memset(cp + inside, c->max_cost, (size_t)(D - inside));
}

/* ---- the costs of one pixel, bt (sgm_cost_bt_rows) -----------------------------------------
 * The right row's grey values and their interpolated ranges [lo, hi] (stereo_bt_range)
 * reversed (rrev, nib's planes 0 and 1), the left row's ranges (planes 2 and 3); per pixel the
 * reference's dL = max(0, IL - hiR, loR - IL) and dR = max(0, IR - hiL, loL - IR) as two
 * saturating subtractions and a maximum each, C = min(dL, dR, cap). */

static void bt_rows(const sgm_fused *f, const scratch_layout *s, int y)
{
    const int w = f->sgm->width;
    const uint8_t *gr = f->absdiff[1] + (size_t)y * w;
    uint8_t *rrev = (uint8_t *)s->rrev, *lo_r = s->nib, *hi_r = s->nib + s->nibs;
    for (int t = 0; t < w; t++) {
        const int x = w - 1 - t;
        int lo, hi;
        stereo_bt_range(gr[x > 0 ? x - 1 : x], gr[x], gr[x + 1 < w ? x + 1 : x], &lo, &hi);
        rrev[t] = gr[x], lo_r[t] = (uint8_t)lo, hi_r[t] = (uint8_t)hi;
    }
    sgm_bt_row_range(f->absdiff[0] + (size_t)y * w, w, s->nib + 2 * s->nibs,
                     s->nib + 3 * s->nibs);
}

INLINE void bt_costs(const sgm_fused *f, const scratch_layout *s, int y, int x, uint8_t *cp)
{
    const sgm_config *c = f->sgm;
    const int w = c->width, D = c->ndisp;
    int inside = x - c->dmin + 1;
    inside = inside > D ? D : inside < 0 ? 0 : inside;
    if (inside > 0) {
        const size_t at = (size_t)(w - 1 - x + c->dmin); /* k = 0 at t = at (absdiff_costs) */
        const uint8_t *ir = (const uint8_t *)s->rrev + at, *lo_r = s->nib + at,
                      *hi_r = s->nib + s->nibs + at;
        const vu8 il = (vu8){0} + f->absdiff[0][(size_t)y * w + x];
        const vu8 lo_l = (vu8){0} + s->nib[2 * s->nibs + (size_t)x];
        const vu8 hi_l = (vu8){0} + s->nib[3 * s->nibs + (size_t)x];
        const vu8 cap = (vu8){0} + (uint8_t)c->max_cost;
        for (int k = 0; k < D; k += VB) {
            vu8 r, lr, hr;
            memcpy(&r, ir + k, sizeof r);
            memcpy(&lr, lo_r + k, sizeof lr);
            memcpy(&hr, hi_r + k, sizeof hr);
            const vu8 dl = bytes_max(bytes_subs(il, hr), bytes_subs(lr, il));
            const vu8 dr = bytes_max(bytes_subs(r, hi_l), bytes_subs(lo_l, r));
            const vu8 v = bytes_min(bytes_min(dl, dr), cap);
            memcpy(cp + k, &v, sizeof v);
        }
    }
    memset(cp + inside, c->max_cost, (size_t)(D - inside));
}

/* ---- the costs of one pixel, census and adcensus (sgm_cost_census_rows,
 * sgm_cost_adcensus_rows) -------------------------------------------------------------------
 * Where a 16-entry byte lookup is one instruction (AVX2's vpshufb, NEON's tbl), the right row's
 * census words are split into 16 nibble planes, reversed (nib[n][t] = nibble n of the word of
 * pixel w - 1 - t), so that a pixel's D distances are D / VB vectors per plane: the lookup of
 * each plane's nibbles in the table popcount(v ^ nibble n of the left word) (one of 16 tables,
 * chosen per pixel and plane) summed over the planes. The grey term of adcensus is a byte
 * vector's |IL - M(IR)| (the mapped right row reversed in rrev), times the weight in 16 bits,
 * shifted, narrowed with saturation, added with saturation and capped: the reference's min(h +
 * g, cap) because h <= cap. Elsewhere the distances are scalar popcounts. */
#if (defined(ISA_AVX2) || (defined(ISA_NEON) && defined(__aarch64__))) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAVE_LUT16 1
/* r[j] = t[idx[j]] for idx[j] < 16 (AVX2: within each 16-byte half, whose tables are equal) */
INLINE vu8 bytes_lut16(vu8 t, vu8 idx)
{
#if defined(ISA_AVX2)
    return (vu8)_mm256_shuffle_epi8((__m256i)t, (__m256i)idx);
#else
    return (vu8)vqtbl1q_u8((uint8x16_t)t, (uint8x16_t)idx);
#endif
}

/* popcount_tables[c][j] = popcount(c ^ (j & 15)) */
#if VB == 32
#define PT(...) {__VA_ARGS__, __VA_ARGS__}
#else
#define PT(...) {__VA_ARGS__}
#endif
static const vu8 popcount_tables[16] = {
    PT(0,1,1,2,1,2,2,3,1,2,2,3,2,3,3,4),
    PT(1,0,2,1,2,1,3,2,2,1,3,2,3,2,4,3),
    PT(1,2,0,1,2,3,1,2,2,3,1,2,3,4,2,3),
    PT(2,1,1,0,3,2,2,1,3,2,2,1,4,3,3,2),
    PT(1,2,2,3,0,1,1,2,2,3,3,4,1,2,2,3),
    PT(2,1,3,2,1,0,2,1,3,2,4,3,2,1,3,2),
    PT(2,3,1,2,1,2,0,1,3,4,2,3,2,3,1,2),
    PT(3,2,2,1,2,1,1,0,4,3,3,2,3,2,2,1),
    PT(1,2,2,3,2,3,3,4,0,1,1,2,1,2,2,3),
    PT(2,1,3,2,3,2,4,3,1,0,2,1,2,1,3,2),
    PT(2,3,1,2,3,4,2,3,1,2,0,1,2,3,1,2),
    PT(3,2,2,1,4,3,3,2,2,1,1,0,3,2,2,1),
    PT(2,3,3,4,1,2,2,3,1,2,2,3,0,1,1,2),
    PT(3,2,4,3,2,1,3,2,2,1,3,2,1,0,2,1),
    PT(3,4,2,3,2,3,1,2,2,3,1,2,1,2,0,1),
    PT(4,3,3,2,3,2,2,1,3,2,2,1,2,1,1,0),
};
#undef PT
#endif

/* the uint16 lanes lo : hi narrowed to uint8 with saturation, in order (bytes_widen's inverse
 * where every lane fits a byte) */
INLINE vu8 bytes_narrow_sat(vu16 lo, vu16 hi)
{
#if defined(ISA_AVX2)
    return (vu8)_mm256_permute4x64_epi64(_mm256_packus_epi16((__m256i)lo, (__m256i)hi), 0xd8);
#elif defined(ISA_SSE2)
    return (vu8)_mm_packus_epi16((__m128i)lo, (__m128i)hi);
#elif defined(ISA_NEON)
    return (vu8)vcombine_u8(vqmovn_u16((uint16x8_t)lo), vqmovn_u16((uint16x8_t)hi));
#else
    const vu16 top = vsplat(255);
    lo = vmin(lo, top), hi = vmin(hi, top);
    vu8 r;
    for (int j = 0; j < VL; j++)
        r[j] = (uint8_t)lo[j], r[VL + j] = (uint8_t)hi[j];
    return r;
#endif
}

#if defined(HAVE_LUT16)
typedef uint8_t v32u8 __attribute__((vector_size(32)));
#if defined(__clang__)
#define SHUFFLE32B(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef int8_t v32i8 __attribute__((vector_size(32)));
#define SHUFFLE32B(a, b, ...) __builtin_shuffle(a, b, (v32i8){__VA_ARGS__})
#endif

/* The 32 words w[0..31] as 8 byte planes p[b][j] = byte b of w[31 - j] (reversed): three rounds
 * of two-vector shuffles (4 words -> 8 -> 16 -> 32 per plane), then each plane reversed */
INLINE void words_to_planes_reversed(const uint64_t *w, v32u8 p[8])
{
    v32u8 x[8], y[8], z[8];
    for (int i = 0; i < 8; i++)
        memcpy(&x[i], w + 4 * i, sizeof x[i]);
    for (int k = 0; k < 4; k++) {
        y[2 * k] = SHUFFLE32B(x[2 * k], x[2 * k + 1], 0, 8, 16, 24, 32, 40, 48, 56, 1, 9, 17, 25, 33, 41, 49, 57, 2, 10, 18, 26, 34, 42, 50, 58, 3, 11, 19, 27, 35, 43, 51, 59);
        y[2 * k + 1] = SHUFFLE32B(x[2 * k], x[2 * k + 1], 4, 12, 20, 28, 36, 44, 52, 60, 5, 13, 21, 29, 37, 45, 53, 61, 6, 14, 22, 30, 38, 46, 54, 62, 7, 15, 23, 31, 39, 47, 55, 63);
    }
    for (int k = 0; k < 2; k++)
        for (int h = 0; h < 2; h++) {
            const v32u8 a = y[4 * k + h], b = y[4 * k + 2 + h];
            z[4 * k + 2 * h] = SHUFFLE32B(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 32, 33, 34, 35, 36, 37, 38, 39, 8, 9, 10, 11, 12, 13, 14, 15, 40, 41, 42, 43, 44, 45, 46, 47);
            z[4 * k + 2 * h + 1] = SHUFFLE32B(a, b, 16, 17, 18, 19, 20, 21, 22, 23, 48, 49, 50, 51, 52, 53, 54, 55, 24, 25, 26, 27, 28, 29, 30, 31, 56, 57, 58, 59, 60, 61, 62, 63);
        }
    for (int q = 0; q < 4; q++) {
        const v32u8 a = z[q], b = z[4 + q];
        p[2 * q] = SHUFFLE32B(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47);
        p[2 * q + 1] = SHUFFLE32B(a, b, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63);
    }
    for (int b = 0; b < 8; b++)
        p[b] = SHUFFLE32B(p[b], p[b], 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}
#endif

/* The right row's inputs of the census costs, reversed: the nibble planes (HAVE_LUT16) and, for
 * adcensus, the mapped grey row in rrev. */
static void census_row_reverse(const sgm_fused *f, const scratch_layout *s, int y)
{
    const int w = f->sgm->width;
#if defined(HAVE_LUT16)
    const uint64_t *cr = f->census[1] + (size_t)y * w;
    int t = 0;
    for (; t + 32 <= w; t += 32) { /* 32 words at a time: pixels w - 1 - t .. w - 32 - t */
        v32u8 p[8];
        words_to_planes_reversed(cr + (w - 32 - t), p);
        for (int b = 0; b < 8; b++) {
            const v32u8 lo = p[b] & 15, hi = (p[b] >> 4) & 15;
            memcpy(s->nib + (size_t)(2 * b) * s->nibs + t, &lo, sizeof lo);
            memcpy(s->nib + (size_t)(2 * b + 1) * s->nibs + t, &hi, sizeof hi);
        }
    }
    for (; t < w; t++) {
        uint64_t v = cr[w - 1 - t];
        for (int n = 0; n < 16; n++, v >>= 4)
            s->nib[(size_t)n * s->nibs + t] = (uint8_t)(v & 15);
    }
#endif
    if (f->kind == SGM_FUSED_ADCENSUS) {
        uint8_t *rrev = (uint8_t *)s->rrev;
        const uint8_t *gr = f->absdiff[1] + (size_t)y * w;
        for (int i = 0; i < w; i++)
            rrev[i] = f->ad_lut[gr[w - 1 - i]];
    }
}

/* adcensus: the distances h (VB of them) plus the grey term of the reversed mapped right row g
 * against the left value base, capped */
INLINE vu8 adcensus_vector(vu8 h, const uint8_t *g, vu8 base, vu16 wt, vu8 cap)
{
    vu8 v;
    memcpy(&v, g, sizeof v);
    vu16 lo, hi;
    bytes_widen(bytes_absdiff(base, v), &lo, &hi);
    return bytes_min(bytes_adds(h, bytes_narrow_sat((lo * wt) >> 3, (hi * wt) >> 3)), cap);
}

#if defined(HAVE_LUT16)
typedef uint8_t v16u8 __attribute__((vector_size(16)));
typedef uint16_t v16u16 __attribute__((vector_size(32)));
#if defined(__clang__)
#define SHUFFLE16B(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef int8_t v16i8 __attribute__((vector_size(16)));
#define SHUFFLE16B(a, b, ...) __builtin_shuffle(a, b, (v16i8){__VA_ARGS__})
#endif

/* off[n] = the byte offset in popcount_tables of the table of nibble n of the word cl: the 8
 * bytes split into nibbles on one vector (rather than 16 scalar shifts and masks) */
INLINE void nibble_offsets(uint64_t cl, uint16_t off[16])
{
    typedef uint64_t v2u64 __attribute__((vector_size(16)));
    const v16u8 b = (v16u8)(v2u64){cl, 0}; /* from a register: a store and a wider load of it
                                              would stall */
    const v16u8 lo = b & 15, hi = (b >> 4) & 15;
    const v16u8 nib = SHUFFLE16B(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v16u16 o = __builtin_convertvector(nib, v16u16) * (uint16_t)sizeof(vu8);
    memcpy(off, &o, sizeof o);
}

/* nv vectors of costs from the left word: the 16 planes' lookups in the tables at off[] summed
 * (nv a constant, so that the sums stay in registers), then adcensus_vector where ad */
INLINE void census_vectors(const uint8_t *q, size_t stride, const uint16_t off[16], uint8_t *out,
                           const int nv, const int ad, const uint8_t *g, vu8 base, vu16 wt,
                           vu8 cap)
{
    vu8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    /* unrolled whole, the loop spills its tables and sums */
#pragma GCC unroll 2
    for (int n = 0; n < 16; n++, q += stride) {
        vu8 t;
        memcpy(&t, (const uint8_t *)popcount_tables + off[n], sizeof t);
        vu8 v;
        memcpy(&v, q, sizeof v);
        a0 += bytes_lut16(t, v);
        if (nv > 1)
            memcpy(&v, q + VB, sizeof v), a1 += bytes_lut16(t, v);
        if (nv > 2)
            memcpy(&v, q + 2 * VB, sizeof v), a2 += bytes_lut16(t, v);
        if (nv > 3)
            memcpy(&v, q + 3 * VB, sizeof v), a3 += bytes_lut16(t, v);
    }
    if (ad) {
        a0 = adcensus_vector(a0, g, base, wt, cap);
        if (nv > 1)
            a1 = adcensus_vector(a1, g + VB, base, wt, cap);
        if (nv > 2)
            a2 = adcensus_vector(a2, g + 2 * VB, base, wt, cap);
        if (nv > 3)
            a3 = adcensus_vector(a3, g + 3 * VB, base, wt, cap);
    }
    memcpy(out, &a0, sizeof a0);
    if (nv > 1)
        memcpy(out + VB, &a1, sizeof a1);
    if (nv > 2)
        memcpy(out + 2 * VB, &a2, sizeof a2);
    if (nv > 3)
        memcpy(out + 3 * VB, &a3, sizeof a3);
}
#endif

/* the costs of pixel (x, y) into cp (D bytes, and up to the next multiple of VB: written, not
 * used); kind SGM_FUSED_CENSUS or SGM_FUSED_ADCENSUS */
INLINE void census_costs(const sgm_fused *f, const scratch_layout *s, int y, int x, uint8_t *cp,
                         const int ad)
{
    const sgm_config *c = f->sgm;
    const int w = c->width, D = c->ndisp;
    int inside = x - c->dmin + 1;
    inside = inside > D ? D : inside < 0 ? 0 : inside;
    if (inside > 0) {
        const size_t at = (size_t)(w - 1 - x + c->dmin); /* k = 0 at t = at (absdiff_costs) */
        const uint64_t cl = f->census[0][(size_t)y * w + x];
        const uint8_t *g = (const uint8_t *)s->rrev + at;
        const vu8 base = (vu8){0} + f->absdiff[0][(size_t)y * w + x];
        const vu8 cap = (vu8){0} + (uint8_t)c->max_cost;
        const vu16 wt = vsplat((uint16_t)f->ad_weight);
#if defined(HAVE_LUT16)
        uint16_t off[16];
        nibble_offsets(cl, off);
        for (int k0 = 0; k0 < D; k0 += 4 * VB) { /* up to 4 vectors in registers */
            const uint8_t *q = s->nib + at + k0;
            uint8_t *o = cp + k0;
            const uint8_t *gk = g + k0;
            switch ((D - k0 + VB - 1) / VB) {
            case 1: census_vectors(q, s->nibs, off, o, 1, ad, gk, base, wt, cap); break;
            case 2: census_vectors(q, s->nibs, off, o, 2, ad, gk, base, wt, cap); break;
            case 3: census_vectors(q, s->nibs, off, o, 3, ad, gk, base, wt, cap); break;
            default: census_vectors(q, s->nibs, off, o, 4, ad, gk, base, wt, cap); break;
            }
        }
#else
        const uint64_t *cr = f->census[1] + (size_t)y * w + x - c->dmin;
        for (int k = 0; k < inside; k++)
            cp[k] = (uint8_t)__builtin_popcountll(cl ^ cr[-k]);
        for (int k = 0; ad && k < D; k += VB) {
            vu8 h;
            memcpy(&h, cp + k, sizeof h);
            h = adcensus_vector(h, g + k, base, wt, cap);
            memcpy(cp + k, &h, sizeof h);
        }
#endif
    }
    memset(cp + inside, c->max_cost, (size_t)(D - inside));
}

/* ---- one pixel of a sweep ------------------------------------------------------------------
 * n directions (2: horizontal and vertical; 4: and the two diagonals) at one pixel: for each
 * r, cur[r][k] = the recurrence (sgm.h) from prev[r] (the zero block at a path's first pixel,
 * with minprev 0, which gives L = C); mins[r] = min_k cur[r]. out = sum_r w_r cur[r] (+ add,
 * the other sweep's partial sum, when add is not NULL). prev[0] / cur[0] (horizontal) are plain
 * arrays, read aligned and shifted in registers (the previous pixel's L was stored just now: a
 * load across two recent stores would wait for them); prev[1..] are blocks with sentinels. */
INLINE void pixel_step(const uint8_t *cp, int n, const uint16_t *const prev[4],
                       uint16_t *const cur[4], const uint16_t p1[4], const uint16_t jump[4],
                       const uint16_t minprev[4], const uint16_t wt[4], int weighted,
                       const uint16_t *add, uint16_t *out, int stream, uint16_t mins[4], int D)
{
    const vu16 far = vsplat(STEREO_SGM_FAR);
    vu16 vm[4] = {far, far, far, far};
    vu16 h_before = far, h_k = vld(prev[0]);
    for (int i = 0; i < D; i += VL) {
        const vu16 c = vld_u8(cp + i);
        vu16 sum = add ? vld(add + i) : vsplat(0);
        for (int r = 0; r < n; r++) {
            const uint16_t *P = prev[r];
            vu16 pk, km1, kp1;
            if (r == 0) {
                const vu16 next = i + VL < D ? vld(P + i + VL) : far;
                pk = h_k;
                km1 = shift_down(h_before, pk);
                kp1 = shift_up(pk, next);
                h_before = pk;
                h_k = next;
            } else {
                pk = vld(P + i);
                km1 = vld(P + i - 1);
                kp1 = vld(P + i + 1);
            }
            const vu16 side = vmin(km1, kp1) + vsplat(p1[r]);
            const vu16 v = vmin(vmin(pk, side), vsplat(jump[r]));
            const vu16 L = c + v - vsplat(minprev[r]);
            vst(cur[r] + i, L);
            vm[r] = vmin(vm[r], L);
            sum += weighted ? L * vsplat(wt[r]) : L;
        }
        if (stream)
            vst_stream(out + i, sum);
        else
            vst(out + i, sum);
    }
    for (int r = 0; r < n; r++)
        mins[r] = hmin(vm[r]);
}

/* pixel_step with uint8 lanes, where every L fits a byte (sgm_simd_bytes_fit): twice the voxels
 * per operation. Bytes saturate at 255 where the 16-bit lanes go past it (a neighbour + P1,
 * the sentinel 255 + P1, minprev + P2'): each such term is then >= 255 >= L(p - r, k), so the
 * minimum is the same. L - minprev is taken before the cost is added, so it never wraps. The
 * sums stay 16-bit. */
INLINE void pixel_step8(const uint8_t *cp, int n, const uint8_t *const prev[4],
                        uint8_t *const cur[4], const uint16_t p1[4], const uint16_t jump[4],
                        const uint16_t minprev[4], const uint16_t wt[4], int weighted,
                        const uint16_t *add, uint16_t *out, int stream, uint16_t mins[4], int D)
{
    const vu8 far = (vu8){0} + 0xff;
    vu8 vm[4] = {far, far, far, far};
    vu8 h_before = far, h_k;
    memcpy(&h_k, prev[0], sizeof h_k);
    for (int i = 0; i < D; i += VB) {
        vu8 c;
        memcpy(&c, cp + i, sizeof c);
        vu16 sum_lo = add ? vld(add + i) : vsplat(0), sum_hi = add ? vld(add + i + VL) : vsplat(0);
        for (int r = 0; r < n; r++) {
            const uint8_t *P = prev[r];
            vu8 pk, km1, kp1;
            if (r == 0) {
                vu8 next = far;
                if (i + VB < D)
                    memcpy(&next, P + i + VB, sizeof next);
                pk = h_k;
                km1 = bytes_shift_down(h_before, pk);
                kp1 = bytes_shift_up(pk, next);
                h_before = pk;
                h_k = next;
            } else {
                memcpy(&pk, P + i, sizeof pk);
                memcpy(&km1, P + i - 1, sizeof km1);
                memcpy(&kp1, P + i + 1, sizeof kp1);
            }
            const vu8 side = bytes_adds(bytes_min(km1, kp1), (vu8){0} + (uint8_t)p1[r]);
            const vu8 j = (vu8){0} + (uint8_t)(jump[r] < 255 ? jump[r] : 255);
            const vu8 v = bytes_min(bytes_min(pk, side), j);
            const vu8 L = (v - (uint8_t)minprev[r]) + c;
            memcpy(cur[r] + i, &L, sizeof L);
            vm[r] = bytes_min(vm[r], L);
            vu16 lo, hi;
            bytes_widen(L, &lo, &hi);
            sum_lo += weighted ? lo * vsplat(wt[r]) : lo;
            sum_hi += weighted ? hi * vsplat(wt[r]) : hi;
        }
        if (stream) {
            vst_stream(out + i, sum_lo);
            vst_stream(out + i + VL, sum_hi);
        } else {
            vst(out + i, sum_lo);
            vst(out + i + VL, sum_hi);
        }
    }
    for (int r = 0; r < n; r++)
        mins[r] = bytes_hmin(vm[r]);
}

/* ---- winner-takes-all --------------------------------------------------------------------- */

/* Left disparity of pixel x of row y (disparity.h, stage 6) from its total S in s (D values) */
INLINE void pixel_wta_left(const sgm_fused *f, int y, int x, uint16_t *s)
{
    const wta_config *c = f->wta;
    const int D = c->ndisp;
    vu16 m = vld(s);
    for (int i = VL; i < D; i += VL)
        m = vmin(m, vld(s + i));
    const uint16_t s1 = hmin(m);
    const int best = find_first(s, D, s1);
    uint32_t s2 = 0xffff;
    if (c->uniqueness > 0 || f->conf) { /* min over |k - best| > 1: the three set aside */
        const int lo = best > 0 ? best - 1 : 0, hi = best < D - 1 ? best + 1 : D - 1;
        uint16_t keep[3];
        for (int k = lo; k <= hi; k++)
            keep[k - lo] = s[k], s[k] = 0xffff;
        m = vld(s);
        for (int i = VL; i < D; i += VL)
            m = vmin(m, vld(s + i));
        s2 = hmin(m);
        for (int k = lo; k <= hi; k++)
            s[k] = keep[k - lo];
    }
    disparity_wta_pixel(c, x, (size_t)y * c->width + x, best, s1, s2,
                        best > 0 ? s[best - 1] : 0, best < D - 1 ? s[best + 1] : 0,
                        f->valid[0], f->disp, f->conf);
}

/* Right disparity of row y (stage 7): for right pixel xr, k* = argmin_k st[k][xr + dmin + k]
 * (ties to the smaller k). st holds S ^ 0x8000, whose signed order is S's unsigned order (one
 * compare and one blend per step); columns past the image hold 0x7fff (S = 0xffff), which
 * never wins. */
static void row_wta_right(const sgm_fused *f, const scratch_layout *s, int y)
{
    const wta_config *c = f->wta;
    const int w = c->width, D = c->ndisp, nr = w - c->dmin; /* xr < nr has a candidate */
    int16_t *out = f->disp_right + (size_t)y * w;
    const uint8_t *valid = f->valid[1] ? f->valid[1] + (size_t)y * w : NULL;
    uint16_t idx_a[VL];
    for (int x0 = 0; x0 < nr; x0 += VL) {
        const uint16_t *col = s->st + x0 + c->dmin;
        vi16 best = (vi16)vld(col), idx = (vi16){0};
        for (int k = 1; k < D; k++) {
            const vi16 v = (vi16)vld(col + (size_t)k * (s->sts + 1));
            idx = vblend_s(idx, (vi16){0} + (int16_t)k, (vi16)(v < best));
            best = vmin_s(best, v);
        }
        vst(idx_a, (vu16)idx);
        for (int j = 0; j < VL && x0 + j < nr; j++)
            out[x0 + j] = valid && !valid[x0 + j]
                              ? STEREO_INVALID
                              : (int16_t)(STEREO_SUBPIXEL_SCALE * (c->dmin + idx_a[j]));
    }
    for (int xr = nr > 0 ? nr : 0; xr < w; xr++)
        out[xr] = STEREO_INVALID;
}

/* ---- a sweep's rows --------------------------------------------------------------------- */

/* how far ahead part 1 fetches the partial sums it reads (pixels) */
#define PREFETCH_PIXELS 4

/* b mod n for b in [0, 2n) */
INLINE int ring(int b, int n) { return b >= n ? b - n : b; }

INLINE void sweep_rows(const sgm_fused *f, int backward, int part, void *scratch,
                       uint64_t *rows_done, const int n, const int weighted, const int bytes)
{
    const sgm_config *c = f->sgm;
    const int w = c->width, h = c->height, D = c->ndisp, m = h / 2;
    const int sx = backward ? -1 : 1, sy = sx;
    const size_t row = (size_t)w * D;
    const scratch_layout s = layout_of(c, scratch);
    const int right = part && f->disp_right; /* the right disparity: st is filled */
    const int census = f->kind == SGM_FUSED_CENSUS || f->kind == SGM_FUSED_ADCENSUS;
    /* this sweep's directions (sgm.h): horizontal, vertical, the diagonals from x - sx, x + sx */
    const int dirs[4] = {backward ? 1 : 0, backward ? 3 : 2, backward ? 7 : 4, backward ? 6 : 5};
    uint16_t p1[4], wt[4], p2[4][256];
    for (int r = 0; r < 4; r++) {
        int dp1 = c->per_dir ? c->dir_p1[dirs[r]] : c->p1;
        int dp2 = c->per_dir ? c->dir_p2[dirs[r]] : c->p2;
        p1[r] = (uint16_t)dp1;
        wt[r] = (uint16_t)(c->per_dir ? c->dir_weight[dirs[r]] : 1);
        for (int i = 0; i < 256; i++)
            p2[r][i] = (uint16_t)stereo_p2_adaptive(dp1, dp2, c->p2_adapt, i);
    }
    /* part 0: rows yi = 0 .. its share - 1 of this sweep's order; part 1: the rest */
    const int share0 = backward ? h - m : m;
    const int yi0 = part ? share0 : 0, yi1 = part ? h : share0;
    /* rows, hz and zero in bytes: a block is 32 bytes of sentinels and D elements of 1 (bytes)
     * or 2 bytes */
    const size_t es = bytes ? 1 : 2, Bb = 2 * PAD + (size_t)D * es;
    uint8_t *const rows = (uint8_t *)s.rows, *const hz = (uint8_t *)s.hz;
    uint8_t *const zero = (uint8_t *)s.zero + 2 * PAD;
    if (part == 0) { /* the sentinels and the zero block */
        for (size_t b = 0; b < 3 * s.nblk + 1; b++)
            for (int i = 0; i < PAD; i++) {
                if (bytes)
                    rows[b * Bb + 2 * i] = rows[b * Bb + 2 * i + 1] = 0xff;
                else
                    ((uint16_t *)(rows + b * Bb))[i] = STEREO_SGM_FAR;
            }
        for (int i = 0; i < PAD; i++) {
            if (bytes)
                zero[-1 - 2 * i] = zero[-2 - 2 * i] = zero[D + 2 * i] = zero[D + 2 * i + 1] = 0xff;
            else
                ((uint16_t *)zero)[-1 - i] = ((uint16_t *)zero)[D + i] = STEREO_SGM_FAR;
        }
        memset(zero, 0, (size_t)D * es);
        if (census) /* the nibble planes past the row: read, never used */
            for (int b = 0; b < 16; b++)
                memset(s.nib + (size_t)b * s.nibs + w, 0, s.nibs - (size_t)w);
    } else if (right) { /* st's columns past the image: never a winner */
        for (size_t k = 0; k < (size_t)D; k++)
            for (size_t x = (size_t)w; x < s.sts; x++)
                s.st[k * s.sts + x] = 0x7fff;
    }
    for (int yi = yi0; yi < yi1; yi++) {
        const int y = backward ? h - 1 - yi : yi;
        /* the ring's blocks of row yi and yi - 1: pixel x in (x + off) mod nblk */
        const int nblk = (int)s.nblk;
        const int cur_off = (int)(((-2 * (int64_t)sx * yi) % nblk + nblk) % nblk);
        const int prev_off = (cur_off + 2 * sx + nblk) % nblk;
        uint16_t *cur_min = s.mins + (size_t)(yi & 1) * 3 * w;
        const uint16_t *prev_min = s.mins + (size_t)((yi & 1) ^ 1) * 3 * w;
        const uint8_t *g_row = f->grey + (size_t)y * w;
        const uint8_t *g_prev = yi ? f->grey + (size_t)(y - sy) * w : NULL;
        /* S: rows m .. h-1 as they are; rows 0 .. m-1 (written by the forward sweep, read by
         * the backward one) mirrored, pixel (x, y) at (w - 1 - x, m - 1 - y): the reading sweep
         * reads ascending addresses, which the hardware prefetches best */
        const int mirror = y < m;
        uint16_t *S_row = f->S + (size_t)(mirror ? m - 1 - y : y) * row;
        uint16_t h_min = 0;
        if (f->kind == SGM_FUSED_ABSDIFF)
            absdiff_row_reverse(f, y, s.rrev);
        else if (f->kind == SGM_FUSED_BT)
            bt_rows(f, &s, y);
        else if (census && part == 0)
            census_row_reverse(f, &s, y);
        for (int xi = 0; xi < w; xi++) {
            const int x = backward ? w - 1 - xi : xi;
            const int g = g_row[x];
            const uint8_t *prev[4];
            uint8_t *cur[4];
            uint16_t jump[4], minprev[4], mins[4];
            /* horizontal: the previous pixel x - sx of this row */
            prev[0] = xi ? hz + (size_t)((xi & 1) ^ 1) * D * es : zero;
            cur[0] = hz + (size_t)(xi & 1) * D * es;
            minprev[0] = xi ? h_min : 0;
            jump[0] = (uint16_t)(minprev[0] + p2[0][abs(g - (xi ? g_row[x - sx] : g))]);
            /* vertical and diagonals: the previous row at x, x - sx, x + sx */
            for (int r = 1; r < n; r++) {
                const int fx = r == 1 ? x : r == 2 ? x - sx : x + sx;
                const int have = yi > 0 && fx >= 0 && fx < w;
                uint8_t *dir_rows = rows + 2 * PAD + (size_t)(r - 1) * s.nblk * Bb;
                prev[r] = have ? dir_rows + (size_t)ring(fx + prev_off, nblk) * Bb : zero;
                cur[r] = dir_rows + (size_t)ring(x + cur_off, nblk) * Bb;
                minprev[r] = have ? prev_min[(r - 1) * w + fx] : 0;
                jump[r] = (uint16_t)(minprev[r] + p2[r][abs(g - (have ? g_prev[fx] : g))]);
            }
            const uint8_t *cp;
            if (f->kind == SGM_FUSED_ABSDIFF) {
                absdiff_costs(f, y, x, s.rrev, (uint8_t *)s.cost);
                cp = (const uint8_t *)s.cost;
            } else if (f->kind == SGM_FUSED_BT) {
                bt_costs(f, &s, y, x, (uint8_t *)s.cost);
                cp = (const uint8_t *)s.cost;
            } else if (census) {
                /* mirrored as S is: part 1 reads ascending addresses */
                uint8_t *row_costs = f->cost_rows + (size_t)(mirror ? m - 1 - y : y) * row +
                                     (size_t)(mirror ? w - 1 - x : x) * D;
                if (part == 0) {
                    /* computed here into the scratch (whole vectors), where this sweep reads
                     * them; streamed to the rows, where part 1 of the other sweep does */
                    uint8_t *to = (uint8_t *)s.cost;
                    if (f->kind == SGM_FUSED_ADCENSUS)
                        census_costs(f, &s, y, x, to, 1);
                    else
                        census_costs(f, &s, y, x, to, 0);
                    bytes_stream(row_costs, to, D);
                    cp = to;
                } else {
                    cp = row_costs;
                }
            } else {
                cp = f->cost + ((size_t)y * w + x) * D;
            }
            uint16_t *S_px = S_row + (size_t)(mirror ? w - 1 - x : x) * D;
            uint16_t *out = S_px;
            if (part) {
                /* part 0's sums (and costs) come from memory, in ascending order: fetched a
                 * few pixels ahead */
                const uint8_t *ahead = (const uint8_t *)(S_px + PREFETCH_PIXELS * D);
                for (int i = 0; i < 2 * D; i += 64)
                    __builtin_prefetch(ahead + i);
                if (census)
                    for (int i = 0; i < D; i += 64)
                        __builtin_prefetch(cp + PREFETCH_PIXELS * D + i);
                out = s.grp + (size_t)(x & 7) * D;
                if (bytes)
                    pixel_step8(cp, n, prev, cur, p1, jump, minprev, wt, weighted, S_px, out, 0,
                                mins, D);
                else
                    pixel_step(cp, n, (const uint16_t *const *)prev, (uint16_t *const *)cur, p1,
                               jump, minprev, wt, weighted, S_px, out, 0, mins, D);
                /* a group of 8 pixels done (or the row's last): their left disparities one
                 * after the other (independent chains, which overlap), then, biased for
                 * row_wta_right, into st */
                if (backward ? (x & 7) == 0 : (x & 7) == 7 || x == w - 1) {
                    const int x8 = x & ~7, n8 = w - x8 < 8 ? w - x8 : 8;
                    for (int j = 0; j < n8; j++)
                        pixel_wta_left(f, y, x8 + j, s.grp + (size_t)j * D);
                    if (right) {
                        for (int i = 0; i < n8 * D; i += VL)
                            vst(s.grp + i, vld(s.grp + i) ^ 0x8000);
                        for (int k = 0; k < D; k += 8)
                            transpose8(s.grp + k, (size_t)D, s.st + (size_t)k * s.sts + x8,
                                       s.sts);
                    }
                }
            } else if (bytes) {
                pixel_step8(cp, n, prev, cur, p1, jump, minprev, wt, weighted, NULL, out, 1, mins,
                            D);
            } else {
                pixel_step(cp, n, (const uint16_t *const *)prev, (uint16_t *const *)cur, p1, jump,
                           minprev, wt, weighted, NULL, out, 1, mins, D);
            }
            h_min = mins[0];
            for (int r = 1; r < n; r++)
                cur_min[(r - 1) * w + x] = mins[r];
        }
        if (right) {
            /* the pixels past the image in the row's last group (w % 8 != 0) were
             * transposed too: back to 0x7fff */
            for (size_t k = 0; k < (size_t)D; k++)
                for (size_t x = (size_t)w; x < ALIGN_UP((size_t)w, 8); x++)
                    s.st[k * s.sts + x] = 0x7fff;
            row_wta_right(f, &s, y);
        }
        if (rows_done)
            __atomic_add_fetch(rows_done, 1, __ATOMIC_RELAXED);
    }
}

static void sweep_part(const sgm_fused *f, int backward, int part, void *scratch,
                       uint64_t *rows_done)
{
    const sgm_config *c = f->sgm;
    int weighted = 0;
    for (int r = 0; r < 8 && c->per_dir; r++)
        weighted |= c->dir_weight[r] != 1;
    /* the number of directions, the weighting and the lanes as constants of eight specialised
     * copies */
    const int b = sgm_simd_bytes_fit(c, f->paths) && c->ndisp % VB == 0; /* whole vectors */
    if (f->paths == 8 && !weighted)
        b ? sweep_rows(f, backward, part, scratch, rows_done, 4, 0, 1)
          : sweep_rows(f, backward, part, scratch, rows_done, 4, 0, 0);
    else if (f->paths == 8)
        b ? sweep_rows(f, backward, part, scratch, rows_done, 4, 1, 1)
          : sweep_rows(f, backward, part, scratch, rows_done, 4, 1, 0);
    else if (!weighted)
        b ? sweep_rows(f, backward, part, scratch, rows_done, 2, 0, 1)
          : sweep_rows(f, backward, part, scratch, rows_done, 2, 0, 0);
    else
        b ? sweep_rows(f, backward, part, scratch, rows_done, 2, 1, 1)
          : sweep_rows(f, backward, part, scratch, rows_done, 2, 1, 0);
    /* the streaming stores of part 0 are seen by the other thread in part 1 */
#if defined(ISA_SSE2)
    if (part == 0)
        _mm_sfence();
#endif
}

const sgm_simd_isa SGM_SIMD_TABLE = {SGM_SIMD_NAME, sweep_part};
