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
 * Layout of a sweep's scratch (sgm_simd_scratch_size), uint16 unless said, aligned to 64 bytes:
 *   rows [2][3][w][D]   the previous / current row's L of the vertical and diagonal directions
 *   hz   [2][D]         the horizontal direction's L at the previous / current pixel
 *   zero [D]            zeros: the "previous L" of a path's first pixel (gives L = C)
 *   mins [2][3][w]      min_k L of the row directions, previous / current row
 *   srow [w8][D]        part 1: the row's total S, pixel-major (w8 = w rounded up to 8)
 *   st   [D][sts]       part 1: the same, transposed: st[k][x]; columns w.. hold 0xffff
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgm_simd.h"
#include "stereo.h"
#include "stereo_math.h"

#if defined(__AVX2__)
#include <immintrin.h>
#define VB 32
#elif defined(__SSE2__)
#include <emmintrin.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif
#define VB 16
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#define VB 16
#else
#define VB 16
#endif
#define VL (VB / 2)

typedef uint16_t vu16 __attribute__((vector_size(VB)));
typedef int16_t vi16 __attribute__((vector_size(VB)));
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

INLINE vu16 vsplat(uint16_t x) { return (vu16){0} + x; }

/* VL bytes widened to uint16 lanes */
INLINE vu16 vld_u8(const uint8_t *p)
{
    vu8h b;
    memcpy(&b, p, sizeof b);
    return __builtin_convertvector(b, vu16);
}

INLINE vu16 vmin(vu16 a, vu16 b)
{
#if defined(__AVX2__)
    return (vu16)_mm256_min_epu16((__m256i)a, (__m256i)b);
#elif defined(__SSE4_1__)
    return (vu16)_mm_min_epu16((__m128i)a, (__m128i)b);
#elif defined(__SSE2__)
    return a - (vu16)_mm_subs_epu16((__m128i)a, (__m128i)b); /* a - max(a - b, 0) */
#elif defined(__ARM_NEON)
    return (vu16)vminq_u16((uint16x8_t)a, (uint16x8_t)b);
#else
    return b ^ ((a ^ b) & (vu16)(a < b));
#endif
}

/* lanes where m is all ones take b, the others a */
INLINE vu16 vblend(vu16 a, vu16 b, vu16 m) { return (a & ~m) | (b & m); }

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
INLINE uint16_t hmin(vu16 v)
{
    v = vmin(v, SHUFFLE2(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
    v = vmin(v, SHUFFLE2(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3));
    v = vmin(v, SHUFFLE2(v, v, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1));
    v = vmin(v, SHUFFLE2(v, v, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0));
    return v[0];
}
#else
INLINE vu16 shift_down(vu16 a, vu16 b) { return SHUFFLE2(a, b, 7, 8, 9, 10, 11, 12, 13, 14); }
INLINE vu16 shift_up(vu16 a, vu16 b) { return SHUFFLE2(a, b, 1, 2, 3, 4, 5, 6, 7, 8); }
INLINE uint16_t hmin(vu16 v)
{
#if defined(__ARM_NEON) && defined(__aarch64__)
    return vminvq_u16((uint16x8_t)v);
#else
    v = vmin(v, SHUFFLE2(v, v, 4, 5, 6, 7, 0, 1, 2, 3));
    v = vmin(v, SHUFFLE2(v, v, 2, 3, 0, 1, 2, 3, 0, 1));
    v = vmin(v, SHUFFLE2(v, v, 1, 0, 1, 0, 1, 0, 1, 0));
    return v[0];
#endif
}
#endif

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

typedef struct {
    uint16_t *rows, *hz, *zero, *mins, *srow, *st;
    size_t sts; /* st's row stride in elements */
} scratch_layout;

static scratch_layout layout_of(const sgm_config *c, void *base)
{
    const size_t w = (size_t)c->width, D = (size_t)c->ndisp, w8 = ALIGN_UP(w, 8);
    scratch_layout s;
    uint8_t *p = (uint8_t *)ALIGN_UP((uintptr_t)base, 64);
    s.sts = ALIGN_UP(w8 + D + 16, 32);
    s.rows = (uint16_t *)p, p += ALIGN_UP(6 * w * D * 2, 64);
    s.hz = (uint16_t *)p, p += ALIGN_UP(2 * D * 2, 64);
    s.zero = (uint16_t *)p, p += ALIGN_UP(D * 2, 64);
    s.mins = (uint16_t *)p, p += ALIGN_UP(6 * w * 2, 64);
    s.srow = (uint16_t *)p, p += ALIGN_UP(w8 * D * 2, 64);
    s.st = (uint16_t *)p;
    return s;
}

/* ---- one pixel of a sweep ------------------------------------------------------------------
 * n directions (2: horizontal and vertical; 4: and the two diagonals) at one pixel: for each
 * r, cur[r][k] = the recurrence (sgm.h) from prev[r] (the zero row at a path's first pixel,
 * with minprev 0, which gives L = C); mins[r] = min_k cur[r]. out = sum_r w_r cur[r] (+ add,
 * another sweep's partial sum, when add is not NULL). */
INLINE void pixel_step(const uint8_t *cp, int n, const uint16_t *const prev[4],
                       uint16_t *const cur[4], const uint16_t p1[4], const uint16_t jump[4],
                       const uint16_t minprev[4], const uint16_t wt[4], int weighted,
                       const uint16_t *add, uint16_t *out, uint16_t mins[4], int D)
{
    const vu16 far = vsplat(STEREO_SGM_FAR);
    vu16 vm[4] = {far, far, far, far};
    for (int i = 0; i < D; i += VL) {
        const vu16 c = vld_u8(cp + i);
        vu16 sum = add ? vld(add + i) : vsplat(0);
        for (int r = 0; r < n; r++) {
            const uint16_t *P = prev[r];
            const vu16 pk = vld(P + i);
            const vu16 km1 = shift_down(i ? vld(P + i - VL) : far, pk);
            const vu16 kp1 = shift_up(pk, i + VL < D ? vld(P + i + VL) : far);
            const vu16 side = vmin(km1, kp1) + vsplat(p1[r]);
            const vu16 v = vmin(vmin(pk, side), vsplat(jump[r]));
            const vu16 L = c + v - vsplat(minprev[r]);
            vst(cur[r] + i, L);
            vm[r] = vmin(vm[r], L);
            sum += weighted ? L * vsplat(wt[r]) : L;
        }
        vst(out + i, sum);
    }
    for (int r = 0; r < n; r++)
        mins[r] = hmin(vm[r]);
}

/* ---- winner-takes-all on one row --------------------------------------------------------- */

/* Left disparity of row y (disparity.h, stage 6) from st[k][x]. */
static void row_wta_left(const sgm_fused *f, const scratch_layout *s, int y)
{
    const wta_config *c = f->wta;
    const int w = c->width, D = c->ndisp;
    const int second = c->uniqueness > 0 || f->conf; /* s2 is needed */
    uint16_t best_a[VL], idx_a[VL], sm1_a[VL], sp1_a[VL], s2_a[VL];
    for (int x0 = 0; x0 < w; x0 += VL) {
        const uint16_t *col = s->st + x0;
        vu16 best = vld(col), idx = vsplat(0), sm1 = best, sp1 = best, before = best;
        for (int k = 1; k < D; k++) {
            const vu16 v = vld(col + (size_t)k * s->sts);
            sp1 = vblend(sp1, v, (vu16)(idx == vsplat((uint16_t)(k - 1))));
            const vu16 lt = (vu16)(v < best);
            best = vmin(best, v);
            idx = vblend(idx, vsplat((uint16_t)k), lt);
            sm1 = vblend(sm1, before, lt);
            before = v;
        }
        vu16 s2 = vsplat(0xffff);
        if (second)
            for (int k = 0; k < D; k++) { /* min over |k - k*| > 1 */
                const vu16 kk = vsplat((uint16_t)k);
                const vu16 near = (vu16)(kk + 1 >= idx) & (vu16)(kk <= idx + 1);
                s2 = vmin(s2, vld(col + (size_t)k * s->sts) | near);
            }
        vst(best_a, best), vst(idx_a, idx), vst(sm1_a, sm1), vst(sp1_a, sp1), vst(s2_a, s2);
        for (int j = 0; j < VL && x0 + j < w; j++)
            disparity_wta_pixel(c, x0 + j, (size_t)y * w + x0 + j, idx_a[j], best_a[j], s2_a[j],
                                sm1_a[j], sp1_a[j], f->valid[0], f->disp, f->conf);
    }
}

/* Right disparity of row y (stage 7): for right pixel xr, k* = argmin_k st[k][xr + dmin + k]
 * (ties to the smaller k); columns past the image hold 0xffff, which never wins. */
static void row_wta_right(const sgm_fused *f, const scratch_layout *s, int y)
{
    const wta_config *c = f->wta;
    const int w = c->width, D = c->ndisp, nr = w - c->dmin; /* xr < nr has a candidate */
    int16_t *out = f->disp_right + (size_t)y * w;
    const uint8_t *valid = f->valid[1] ? f->valid[1] + (size_t)y * w : NULL;
    uint16_t idx_a[VL];
    for (int x0 = 0; x0 < nr; x0 += VL) {
        const uint16_t *col = s->st + x0 + c->dmin;
        vu16 best = vld(col), idx = vsplat(0);
        for (int k = 1; k < D; k++) {
            const vu16 v = vld(col + (size_t)k * (s->sts + 1));
            idx = vblend(idx, vsplat((uint16_t)k), (vu16)(v < best));
            best = vmin(best, v);
        }
        vst(idx_a, idx);
        for (int j = 0; j < VL && x0 + j < nr; j++)
            out[x0 + j] = valid && !valid[x0 + j]
                              ? STEREO_INVALID
                              : (int16_t)(STEREO_SUBPIXEL_SCALE * (c->dmin + idx_a[j]));
    }
    for (int xr = nr > 0 ? nr : 0; xr < w; xr++)
        out[xr] = STEREO_INVALID;
}

/* srow (pixel-major) -> st (disparity-major), 8 x 8 blocks */
static void row_transpose(const sgm_config *c, const scratch_layout *s)
{
    const size_t w8 = ALIGN_UP((size_t)c->width, 8), D = (size_t)c->ndisp;
    for (size_t x = 0; x < w8; x += 8)
        for (size_t k = 0; k < D; k += 8)
            transpose8(s->srow + x * D + k, D, s->st + k * s->sts + x, s->sts);
}

/* ---- a sweep's rows --------------------------------------------------------------------- */

INLINE void sweep_rows(const sgm_fused *f, int backward, int part, void *scratch,
                       uint64_t *rows_done, const int n, const int weighted)
{
    const sgm_config *c = f->sgm;
    const int w = c->width, h = c->height, D = c->ndisp, m = h / 2;
    const int sx = backward ? -1 : 1, sy = sx;
    const size_t row = (size_t)w * D;
    const scratch_layout s = layout_of(c, scratch);
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
    if (part == 0)
        memset(s.zero, 0, (size_t)D * 2);
    else { /* st's columns past the image, srow's padding pixels: never a winner */
        const size_t w8 = ALIGN_UP((size_t)w, 8);
        for (size_t k = 0; k < (size_t)D; k++)
            for (size_t x = (size_t)w; x < s.sts; x++)
                s.st[k * s.sts + x] = 0xffff;
        for (size_t i = (size_t)w * D; i < w8 * D; i++)
            s.srow[i] = 0xffff;
    }
    for (int yi = yi0; yi < yi1; yi++) {
        const int y = backward ? h - 1 - yi : yi, cur_r = yi & 1, prev_r = cur_r ^ 1;
        uint16_t *cur_rows = s.rows + (size_t)cur_r * 3 * row;
        const uint16_t *prev_rows = s.rows + (size_t)prev_r * 3 * row;
        uint16_t *cur_min = s.mins + (size_t)cur_r * 3 * w;
        const uint16_t *prev_min = s.mins + (size_t)prev_r * 3 * w;
        const uint8_t *g_row = f->grey + (size_t)y * w;
        const uint8_t *g_prev = yi ? f->grey + (size_t)(y - sy) * w : NULL;
        uint16_t *S_row = f->S + (size_t)y * row;
        uint16_t h_min = 0;
        for (int xi = 0; xi < w; xi++) {
            const int x = backward ? w - 1 - xi : xi;
            const int g = g_row[x];
            const uint16_t *prev[4];
            uint16_t *cur[4], jump[4], minprev[4], mins[4];
            /* horizontal: the previous pixel x - sx of this row */
            prev[0] = xi ? s.hz + (size_t)((xi & 1) ^ 1) * D : s.zero;
            cur[0] = s.hz + (size_t)(xi & 1) * D;
            minprev[0] = xi ? h_min : 0;
            jump[0] = (uint16_t)(minprev[0] + p2[0][abs(g - (xi ? g_row[x - sx] : g))]);
            /* vertical and diagonals: the previous row at x, x - sx, x + sx */
            for (int r = 1; r < n; r++) {
                const int fx = r == 1 ? x : r == 2 ? x - sx : x + sx;
                const int have = yi > 0 && fx >= 0 && fx < w;
                prev[r] = have ? prev_rows + ((size_t)(r - 1) * w + fx) * D : s.zero;
                cur[r] = cur_rows + ((size_t)(r - 1) * w + x) * D;
                minprev[r] = have ? prev_min[(r - 1) * w + fx] : 0;
                jump[r] = (uint16_t)(minprev[r] + p2[r][abs(g - (have ? g_prev[fx] : g))]);
            }
            const uint16_t *add = part ? S_row + (size_t)x * D : NULL;
            uint16_t *out = part ? s.srow + (size_t)x * D : S_row + (size_t)x * D;
            pixel_step(f->cost + ((size_t)y * w + x) * D, n, prev, cur, p1, jump, minprev, wt,
                       weighted, add, out, mins, D);
            h_min = mins[0];
            for (int r = 1; r < n; r++)
                cur_min[(r - 1) * w + x] = mins[r];
        }
        if (part) {
            row_transpose(c, &s);
            row_wta_left(f, &s, y);
            if (f->disp_right)
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
    /* the number of directions and the weighting as constants of four specialised copies */
    if (f->paths == 8)
        weighted ? sweep_rows(f, backward, part, scratch, rows_done, 4, 1)
                 : sweep_rows(f, backward, part, scratch, rows_done, 4, 0);
    else
        weighted ? sweep_rows(f, backward, part, scratch, rows_done, 2, 1)
                 : sweep_rows(f, backward, part, scratch, rows_done, 2, 0);
}

const sgm_simd_isa SGM_SIMD_TABLE = {SGM_SIMD_NAME, sweep_part};
