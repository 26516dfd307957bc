/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_walk.cuh — the device code shared by the two aggregation designs (sgm.cu: partial-sum
 * branches and a final pass; sgm_dirs.cu: one byte volume per direction and a winner-takes-all
 * kernel): 16x2 SIMD helpers, the cost of a step, the line walk of one direction, and the
 * finishing of a pixel (winner-takes-all, uniqueness, subpixel, confidence, right disparity).
 * See the top of sgm.cu for the line walk and sgm_dirs.cu for the per-direction design.
 */
#ifndef STEREO_SGM_WALK_CUH
#define STEREO_SGM_WALK_CUH

#include "launch.cuh"
#include "stereo_math.h"

#define AGG_BLOCK 128
#define KEY_EMPTY 0xffffffffu
#define FAR2 ((uint32_t)STEREO_SGM_FAR * 0x10001u)

/* What a line walk does with its L: store it as the partial sum S[0] (a branch's first
 * direction), add it to S[0], add it to every branch's partial sum and finish the pixel (the
 * last direction), or store it as bytes into its own direction's volume (sgm_dirs.cu). */
enum { MODE_STORE = 0, MODE_ADD = 1, MODE_FINAL = 2, MODE_STORE8 = 3 };

/* ---- 16x2 SIMD: Hopper has min-plus in one instruction (DPX, CUDA 12+); elsewhere the
 * portable SIMD intrinsics give the same values.
 * No carries: every 16-bit value of the walk stays below 0x8000 + 1024 (L <= max_cost + P2,
 * STEREO_SGM_FAR = 0x7fff, P1 and P2 <= 1023; partial sums of 8 L <= 8 * 1100), so additions of
 * packed pairs are plain 32-bit additions (one instruction; __vadd2 is several before sm_90),
 * and v - min_prev cannot borrow across the halves because every candidate of v is >= min_prev
 * (the minimum of the previous L). ------------------------------------------------------------ */
static __device__ __forceinline__ uint32_t min2(uint32_t a, uint32_t b) { return __vminu2(a, b); }

/* min(a + b, c) per 16-bit half */
static __device__ __forceinline__ uint32_t addmin2(uint32_t a, uint32_t b, uint32_t c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && CUDART_VERSION >= 12000
    return __viaddmin_u16x2(a, b, c);
#else
    return __vminu2(a + b, c); /* no half carries: L < 0x8000 and P1 < 1024 (see below) */
#endif
}

/* min(a, b, c) per 16-bit half */
static __device__ __forceinline__ uint32_t min3_2(uint32_t a, uint32_t b, uint32_t c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && CUDART_VERSION >= 12000
    return __vimin3_u16x2(a, b, c);
#else
    return __vminu2(__vminu2(a, b), c);
#endif
}

static __device__ __forceinline__ uint32_t lo16(uint32_t v) { return v & 0xffffu; }
static __device__ __forceinline__ uint32_t hi16(uint32_t v) { return v >> 16; }

template <int G>
static __device__ __forceinline__ uint32_t group_min(uint32_t v, unsigned mask)
{
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1) {
        uint32_t o = __shfl_xor_sync(mask, v, off, G);
        v = o < v ? o : v;
    }
    return v;
}

/* ---- vector access to a lane's K/2 words of S -------------------------------------------- */
template <int W>
static __device__ __forceinline__ void load_words(const uint16_t *p, uint32_t (&w)[W])
{
    if (W % 4 == 0) {
#pragma unroll
        for (int i = 0; i < W; i += 4) {
            uint4 v = *(const uint4 *)(p + 2 * i);
            w[i] = v.x, w[i + 1] = v.y, w[i + 2] = v.z, w[i + 3] = v.w;
        }
    } else if (W % 2 == 0) {
#pragma unroll
        for (int i = 0; i < W; i += 2) {
            uint2 v = *(const uint2 *)(p + 2 * i);
            w[i] = v.x, w[i + 1] = v.y;
        }
    } else {
#pragma unroll
        for (int i = 0; i < W; i++)
            w[i] = *(const uint32_t *)(p + 2 * i);
    }
}

template <int W>
static __device__ __forceinline__ void store_words(uint16_t *p, const uint32_t (&w)[W])
{
    if (W % 4 == 0) {
#pragma unroll
        for (int i = 0; i < W; i += 4)
            *(uint4 *)(p + 2 * i) = make_uint4(w[i], w[i + 1], w[i + 2], w[i + 3]);
    } else if (W % 2 == 0) {
#pragma unroll
        for (int i = 0; i < W; i += 2)
            *(uint2 *)(p + 2 * i) = make_uint2(w[i], w[i + 1]);
    } else {
#pragma unroll
        for (int i = 0; i < W; i++)
            *(uint32_t *)(p + 2 * i) = w[i];
    }
}

/* The volume build (-DSGM_VOLUME=1, with SGM_CENSUS=0 and SGM_TABLE=0): the walk reads each
 * pixel's D costs from a complete cost volume (sgm_args.cost_vol, sgm.h's layout) computed
 * before the aggregation, instead of computing them from the transforms: for costs that need
 * more than one pair of pixels (multi-view matching, multiview.h). The volume holds max_cost
 * wherever the cost says so, so the walk applies no edge rule of its own. */
#ifndef SGM_VOLUME
#define SGM_VOLUME 0
#endif

/* ---- what one step needs from memory, loaded PF steps ahead ------------------------------ */
template <int K, bool CENSUS, int NB>
struct step_inputs {
    static constexpr int W = K / 2;               /* words of S */
    static constexpr int R = (K + 3) / 4 + 1;     /* aligned words covering the K rank bytes */
    uint32_t s[NB][W];                            /* partial sums: one (MODE_ADD), every branch's
                                                     (MODE_FINAL), added up only when used */
    uint64_t cr[CENSUS ? K : 1];
    uint64_t cl;
    uint32_t rr[CENSUS ? 1 : R];                  /* right rank bytes, aligned words */
    uint32_t cv[SGM_VOLUME ? (K % 4 == 0 ? K / 4 : K / 2) : 1]; /* the volume build: the lane's
                                                     K cost bytes (4 per word; K % 4 == 2: 2) */
    int shift;                                    /* K % 4 == 0: the byte_perm selector of
                                                     the window's first reversed quad; else
                                                     8 * (window start & 3) */
    int rl, grey;
};

/* The right image's cost inputs of a lane, shifted so that element p of the left image reads
 * its own window: right pixel xr0 - i of row y is element p - (x - xr0) - i, p = y * w + x and
 * x - xr0 = dmin + k0. Computed once per line. */
template <int K>
struct right_base {
    const uint8_t *rank;    /* the K window bytes start at rank + p */
    const uint64_t *census; /* disparity k0 + i at census[p - i] */
    __device__ right_base(const sgm_args &a, int k0)
    {
        const uintptr_t back = (uintptr_t)(a.dmin + k0); /* the unused cost's base is NULL */
        rank = (const uint8_t *)((uintptr_t)a.rank_r - back - (K - 1));
        census = (const uint64_t *)((uintptr_t)a.census_r - back * sizeof(uint64_t));
    }
};

/* The right rank row is read through aligned 32-bit words from at or below byte xr0 - K + 1 to
 * up to 7 bytes past xr0; the rank buffers are padded in front and behind (RANK_PAD_FRONT /
 * RANK_PAD_BACK in launch.cuh) so these reads stay inside the allocation even left of the image,
 * where the costs are replaced by max_cost anyway. */
template <int K, bool CENSUS, int MODE, int NB, bool FWD = false>
static __device__ __forceinline__ void load_step(const sgm_args &a, const right_base<K> &rb,
                                                 size_t p, int xr0, int k0,
                                                 step_inputs<K, CENSUS, NB> &in)
{
    if (MODE == MODE_ADD || MODE == MODE_FINAL) {
#pragma unroll
        for (int b = 0; b < NB; b++)
            load_words(a.S[b] + p * a.ndisp + k0, in.s[b]);
    }
    if (CENSUS) {
        in.cl = __ldg(a.census_l + p);
        const uint64_t *cr = rb.census + p;
#pragma unroll
        for (int i = 0; i < K; i++)
            in.cr[i] = xr0 - i >= 0 ? __ldg(cr - i) : 0;
    } else if (SGM_VOLUME) {
        /* K bytes at a multiple of K in the pixel's D (a multiple of 16): aligned to K's
         * largest power-of-two factor up to 16 */
        const uint8_t *c = a.cost_vol + p * (size_t)a.ndisp + k0;
        if (K % 16 == 0) {
#pragma unroll
            for (int i = 0; i < K / 16; i++) {
                const uint4 v = __ldg((const uint4 *)c + i);
                in.cv[SGM_VOLUME ? 4 * i : 0] = v.x, in.cv[SGM_VOLUME ? 4 * i + 1 : 0] = v.y;
                in.cv[SGM_VOLUME ? 4 * i + 2 : 0] = v.z, in.cv[SGM_VOLUME ? 4 * i + 3 : 0] = v.w;
            }
        } else if (K % 4 == 0) {
#pragma unroll
            for (int i = 0; i < K / 4; i++)
                in.cv[SGM_VOLUME ? i : 0] = __ldg((const uint32_t *)c + i);
        } else {
#pragma unroll
            for (int i = 0; i < K / 2; i++)
                in.cv[SGM_VOLUME ? i : 0] = __ldg((const unsigned short *)c + i);
        }
    } else {
        in.rl = __ldg(a.rank_l + p);
#if SGM_TABLE
        /* mi with tiles: the left pixel's table above the grey value (costs4) */
        if (a.table_grid > 1)
            in.rl |= stereo_mi_table((int)(p % (size_t)a.width), (int)(p / (size_t)a.width),
                                     a.width, a.height, a.table_grid) << 8;
#endif
        const uint8_t *lo = rb.rank + p;
        const uint32_t *wp = (const uint32_t *)((uintptr_t)lo & ~(uintptr_t)3);
        const int s = (int)((uintptr_t)lo & 3); /* the window's first byte in wp[0] */
        /* FWD (walk_line_il): the selector of bytes s .. s + 3 in order instead */
        in.shift = K % 4 == 0 ? (FWD ? 0x3210 : 0x0123) + s * 0x1111 : 8 * s;
#pragma unroll
        for (int i = 0; i < step_inputs<K, CENSUS, NB>::R; i++)
            in.rr[i] = __ldg(wp + i);
    }
    in.grey = __ldg(a.grey + p);
}

/* Four matching costs (bytes) of one left value rl (rl4: it in every byte) against four right
 * values r4: |rl - r| (rank), or, in the table build (-DSGM_TABLE=1: costs ad and mi, whose
 * "rank" rows hold the grey values), cost_table[rl * 256 + r] (sgm.h). The table (64 KB) stays
 * in L1: a walk's lookups hit few of its rows at a time. mi with tiles (table_grid > 1): rl
 * carries the left pixel's table t above its grey value (load_step), t * 65536 picks it. */
#ifndef SGM_TABLE
#error "SGM_TABLE must be 0 or 1 (build.ninja compiles sgm.cu and sgm_dirs.cu once per cost kind)"
#endif
static __device__ __forceinline__ uint32_t costs4(const sgm_args &a, int rl, uint32_t rl4, uint32_t r4)
{
#if SGM_TABLE
    /* & 255 and the clamped tile: a group past its line's end (walk_line's UNIFORM mode)
     * computes costs from step inputs it never loaded; they are discarded, but the lookup must
     * stay inside the tables */
    const unsigned last = a.table_grid > 1 ? (unsigned)(stereo_mi_tables(a.table_grid) - 1) : 0u;
    const uint8_t *row = a.cost_table + (size_t)min((unsigned)rl >> 8, last) * 65536 + (rl & 255) * 256;
    return (uint32_t)__ldg(row + (r4 & 255u)) | (uint32_t)__ldg(row + (r4 >> 8 & 255u)) << 8 |
           (uint32_t)__ldg(row + (r4 >> 16 & 255u)) << 16 | (uint32_t)__ldg(row + (r4 >> 24)) << 24;
#else
    return __vabsdiffu4(rl4, r4);
#endif
}

/* The cost of a left and a right word of the census path: popcount(l ^ r) (census), or, in the
 * bt build (-DSGM_BT=1, with SGM_CENSUS=1: the words are I | lo << 8 | hi << 16, launch_bt_words)
 * stereo_bt_cost in four byte lanes: A = (IL, loR, IR, loL) - B = (hiR, IL, hiL, IR) saturated
 * at 0 gives the four terms, max of bytes 0, 1 is dL and of bytes 2, 3 dR. */
#ifndef SGM_BT
#define SGM_BT 0
#endif
static __device__ __forceinline__ uint32_t word_cost(const sgm_args &a, uint64_t l, uint64_t r)
{
#if SGM_BT
    const uint32_t l32 = (uint32_t)l, r32 = (uint32_t)r;
    const uint32_t d = __vsubus4(__byte_perm(l32, r32, 0x1450), __byte_perm(l32, r32, 0x4206));
    const uint32_t m = __vmaxu4(d, d >> 8);
    return min(min(m & 255u, (m >> 16) & 255u), (uint32_t)a.max_cost);
#else
    return (uint32_t)__popcll(l ^ r);
#endif
}

/* Costs of the lane's K disparities as K/2 16-bit pairs; max_cost where x - d < 0. */
template <int K, bool CENSUS, int NB>
static __device__ __forceinline__ void step_costs(const sgm_args &a, const step_inputs<K, CENSUS, NB> &in,
                                                  int xr0, uint32_t (&cost)[K / 2])
{
    if (SGM_VOLUME && !CENSUS) { /* the lane's cost bytes as pairs (C(k0 + 2j), C(k0 + 2j + 1)) */
#pragma unroll
        for (int j = 0; j < K / 2; j++)
            cost[j] = K % 4 == 0 ? __byte_perm(in.cv[SGM_VOLUME ? j / 2 : 0], 0, j % 2 ? 0x4342 : 0x4140)
                                 : __byte_perm(in.cv[SGM_VOLUME ? j : 0], 0, 0x4140);
        return;
    }
    if (CENSUS) {
#pragma unroll
        for (int j = 0; j < K / 2; j++)
            cost[j] = word_cost(a, in.cl, in.cr[CENSUS ? 2 * j : 0]) |
                      word_cost(a, in.cl, in.cr[CENSUS ? 2 * j + 1 : 0]) << 16;
    } else if (K % 4 == 0) {
        /* the window: bytes xr0 - K + 1 .. xr0 of the right rank row, starting at byte s of
         * rr[0]; disparity k0 + i reads window byte K - 1 - i, so quad q (disparities 4q ..
         * 4q+3) is window bytes 4m + 3 .. 4m reversed, m = K/4 - 1 - q: bytes s + 3 .. s of
         * rr[m], rr[m + 1], picked and reversed by one byte_perm (selector 0x0123 + s * 0x1111) */
        uint32_t rl4 = (uint32_t)in.rl * 0x01010101u;
#pragma unroll
        for (int q = 0; q < K / 4; q++) {
            const int m = K / 4 - 1 - q;
            uint32_t r4 = __byte_perm(in.rr[CENSUS ? 0 : m], in.rr[CENSUS ? 0 : m + 1], in.shift);
            uint32_t c4 = costs4(a, in.rl, rl4, r4);
            cost[2 * q] = __byte_perm(c4, 0, 0x4140);
            cost[2 * q + 1] = __byte_perm(c4, 0, 0x4342);
        }
    } else {
        /* as above, for K % 4 == 2: first realign the loaded words to the window start (win[i] =
         * window bytes 4i .. 4i+3), then reverse the quads, the last one partial */
        constexpr int SW = (K + 3) / 4;
        uint32_t win[SW];
#pragma unroll
        for (int i = 0; i < SW; i++)
            win[i] = __funnelshift_r(in.rr[CENSUS ? 0 : i], in.rr[CENSUS ? 0 : i + 1], in.shift);
        /* disparity k0 + i reads window byte K - 1 - i: quad q (disparities 4q .. 4q+3) is
         * window bytes L+3 .. L, L = K - 4 - 4q, reversed */
        uint32_t rl4 = (uint32_t)in.rl * 0x01010101u;
#pragma unroll
        for (int q = 0; q < SW; q++) {
            const int L = K - 4 - 4 * q;
            const int m = L >= 0 ? L / 4 : -1, r = L - 4 * m;
            uint32_t lo = m >= 0 ? win[m >= 0 ? m : 0] : 0u;
            uint32_t hi = m + 1 < SW ? win[m + 1 < SW ? m + 1 : 0] : 0u; /* unused when r = 0 */
            uint32_t r4 = __byte_perm(lo, hi, (uint32_t)((r + 3) | (r + 2) << 4 | (r + 1) << 8 | r << 12));
            uint32_t c4 = costs4(a, in.rl, rl4, r4);
            cost[2 * q] = __byte_perm(c4, 0, 0x4140);
            if (2 * q + 1 < K / 2)
                cost[2 * q + 1] = __byte_perm(c4, 0, 0x4342);
        }
    }
    if (xr0 - (K - 1) < 0) { /* near the left edge: disparities pointing outside the image */
        uint32_t mc = (uint32_t)a.max_cost;
#pragma unroll
        for (int j = 0; j < K / 2; j++) {
            uint32_t l = xr0 - 2 * j >= 0 ? lo16(cost[j]) : mc;
            uint32_t h = xr0 - 2 * j - 1 >= 0 ? hi16(cost[j]) : mc;
            cost[j] = l | h << 16;
        }
    }
}

/* Stages 6 and 7 for one pixel of a right-to-left walk, from its complete S (tot: K/2 pairs per
 * lane): the left disparity (+ confidence) and one step of the right disparity's shifting ring.
 * Slot 0 of the ring is then complete for this walk: written (a whole row's walk) or, with rk
 * (a walk over one segment of the row), merged into rk[xr] by atomicMin with the other
 * segments' keys (see sgm_dirs.cu). The
 * final pass runs it one step late (for the previous pixel) so that its reductions overlap the
 * next step's recurrence instead of stalling it (a warp issues in order). */
template <int K, int G>
static __device__ __forceinline__ void finish_pixel(const sgm_args &a, const uint32_t (&tot)[K / 2],
                                                    int x, int y, int lane, int k0, unsigned mask,
                                                    uint32_t (&right_best)[K],
                                                    uint32_t *rk = nullptr)
{
    constexpr int W = K / 2, D = K * G;
    const int w = a.width;
    const size_t p = (size_t)y * w + x;
    /* 6. winner-takes-all: smallest S, ties to the smaller k */
    uint32_t key = KEY_EMPTY;
#pragma unroll
    for (int i = 0; i < W; i++) {
        key = min(key, lo16(tot[i]) << 9 | (uint32_t)(k0 + 2 * i));
        key = min(key, hi16(tot[i]) << 9 | (uint32_t)(k0 + 2 * i + 1));
    }
    key = group_min<G>(key, mask);
    int best = key & 511;
    uint32_t s1 = key >> 9, s2 = KEY_EMPTY, c0 = 0, c2 = 0;
#pragma unroll
    for (int i = 0; i < K; i++) {
        int k = k0 + i;
        uint32_t v = i & 1 ? hi16(tot[i / 2]) : lo16(tot[i / 2]);
        if (k < best - 1 || k > best + 1)
            s2 = min(s2, v);
        if (k == best - 1)
            c0 = v;
        if (k == best + 1)
            c2 = v;
    }
    s2 = group_min<G>(s2, mask);
    /* S(best - 1) and S(best + 1) from the lanes that hold them */
    c0 = __shfl_sync(mask, c0, best > 0 ? (best - 1) / K : 0, G);
    c2 = __shfl_sync(mask, c2, best < D - 1 ? (best + 1) / K : 0, G);
    if (lane == 0) {
        int ok = x >= a.dmin && (!a.valid || a.valid[p]) &&
                 (a.uniqueness == 0 || stereo_unique(s1, s2, a.uniqueness));
        int v = STEREO_SUBPIXEL_SCALE * (a.dmin + best);
        if (a.subpixel && best > 0 && best < D - 1)
            v += stereo_subpixel_offset((int)c0, (int)s1, (int)c2);
        a.disp[p] = ok ? (int16_t)v : STEREO_INVALID;
        if (a.conf)
            a.conf[p] = ok ? stereo_confidence_value(s1, s2) : 0;
    }
    /* 7. right disparity: slot i is right pixel x - dmin - (k0 + i) */
    if (a.disp_right) {
#pragma unroll
        for (int i = 0; i < K; i++) {
            uint32_t v = i & 1 ? hi16(tot[i / 2]) : lo16(tot[i / 2]);
            right_best[i] =
                min(right_best[i], v << 9 | (uint32_t)(k0 + i));
        }
        int xr = x - a.dmin;
        if (rk) { /* a segment of the row: merged with its neighbours' in shared memory */
            if (lane == 0 && xr >= 0)
                atomicMin(&rk[xr], right_best[0]);
        } else if (lane == 0 && xr >= 0) {
            size_t q = (size_t)y * w + xr;
            a.disp_right[q] =
                a.valid_right && !a.valid_right[q]
                    ? STEREO_INVALID
                    : (int16_t)(STEREO_SUBPIXEL_SCALE * (a.dmin + (int)(right_best[0] & 511)));
        }
        uint32_t next = __shfl_down_sync(mask, right_best[0], 1, G);
#pragma unroll
        for (int i = 0; i < K - 1; i++)
            right_best[i] = right_best[i + 1];
        right_best[K - 1] = lane == G - 1 ? KEY_EMPTY : next;
    }
}


/* The end of a row's sum pass (k_wta, k_wta_pk in sgm_dirs.cu): after the block's barrier the
 * right keys rk (S << 9 | k, merged by atomicMin) of row y are complete and written as the right
 * disparities. Called by the whole block. */
static __device__ __forceinline__ void write_right_row(const sgm_args &a, const uint32_t *rk, int y)
{
    __syncthreads();
    for (int xr = threadIdx.x; xr < a.width; xr += blockDim.x) {
        size_t q = (size_t)y * a.width + xr;
        uint32_t key = rk[xr]; /* empty: no candidate inside the image (xr >= w - dmin) */
        a.disp_right[q] = key == KEY_EMPTY || (a.valid_right && !a.valid_right[q])
                              ? STEREO_INVALID
                              : (int16_t)(STEREO_SUBPIXEL_SCALE * (a.dmin + (int)(key & 511)));
    }
}

/* ---- a lane's K L values as bytes (MODE_STORE8 and the per-direction WTA, sgm_dirs.cu) ------
 * The K bytes of a lane start at an offset that is a multiple of K in a pixel's D bytes (D is
 * a multiple of 16), so they are accessed in 8-byte words when K % 8 == 0 (stored in 16-byte
 * words when K % 16 == 0), 4-byte words when K % 4 == 0, else 2-byte words. */
template <int K>
struct byte_words {
    static constexpr int BYTES = K % 8 == 0 ? 8 : K % 4 == 0 ? 4 : 2; /* per access */
    static constexpr int N = K / BYTES;                                 /* accesses */
    static constexpr int R = K % 4 == 0 ? K / 4 : K / 2;                /* 32-bit registers */
};

/* bytes 0 and 2 of a, then bytes 0 and 2 of b: the low bytes of four 16-bit values */
static __device__ __forceinline__ uint32_t pack_lo_bytes(uint32_t a, uint32_t b)
{
    return __byte_perm(a, b, 0x6420);
}

template <int K>
static __device__ __forceinline__ void store_bytes(uint8_t *p, const uint32_t (&v)[K / 2])
{
    if (K % 16 == 0) {
#pragma unroll
        for (int i = 0; i < K / 16; i++)
            *(uint4 *)(p + 16 * i) = make_uint4(pack_lo_bytes(v[8 * i], v[8 * i + 1]),
                                                pack_lo_bytes(v[8 * i + 2], v[8 * i + 3]),
                                                pack_lo_bytes(v[8 * i + 4], v[8 * i + 5]),
                                                pack_lo_bytes(v[8 * i + 6], v[8 * i + 7]));
    } else if (K % 8 == 0) {
#pragma unroll
        for (int i = 0; i < K / 8; i++)
            *(uint2 *)(p + 8 * i) = make_uint2(pack_lo_bytes(v[4 * i], v[4 * i + 1]),
                                               pack_lo_bytes(v[4 * i + 2], v[4 * i + 3]));
    } else if (K % 4 == 0) {
#pragma unroll
        for (int i = 0; i < K / 4; i++)
            *(uint32_t *)(p + 4 * i) = pack_lo_bytes(v[2 * i], v[2 * i + 1]);
    } else {
#pragma unroll
        for (int i = 0; i < K / 2; i++)
            *(uint16_t *)(p + 2 * i) = (uint16_t)pack_lo_bytes(v[i], 0);
    }
}

/* loads a lane's K bytes into byte_words<K>::R registers (4 bytes each, or 2 when K % 4 != 0),
 * in 16-byte words when K % 16 == 0 */
template <int K>
static __device__ __forceinline__ void load_bytes(const uint8_t *p, uint32_t (&r)[byte_words<K>::R])
{
    if (K % 16 == 0) {
#pragma unroll
        for (int i = 0; i < K / 16; i++) {
            uint4 v = *(const uint4 *)(p + 16 * i);
            r[4 * i] = v.x, r[4 * i + 1] = v.y, r[4 * i + 2] = v.z, r[4 * i + 3] = v.w;
        }
    } else if (K % 8 == 0) {
#pragma unroll
        for (int i = 0; i < K / 8; i++) {
            uint2 v = *(const uint2 *)(p + 8 * i);
            r[2 * i] = v.x, r[2 * i + 1] = v.y;
        }
    } else if (K % 4 == 0) {
#pragma unroll
        for (int i = 0; i < K / 4; i++)
            r[i] = *(const uint32_t *)(p + 4 * i);
    } else {
#pragma unroll
        for (int i = 0; i < K / 2; i++)
            r[i] = *(const uint16_t *)(p + 2 * i);
    }
}

/* tot (K/2 pairs of 16-bit sums) += the bytes loaded by load_bytes; no 16-bit lane can carry
 * into the next (at most 8 * 255 per lane), so plain 32-bit adds do */
template <int K>
static __device__ __forceinline__ void add_bytes(const uint32_t (&r)[byte_words<K>::R],
                                                 uint32_t (&tot)[K / 2])
{
    if (K % 4 == 0) {
#pragma unroll
        for (int i = 0; i < K / 4; i++) {
            tot[2 * i] += __byte_perm(r[i], 0, 0x4140);
            tot[2 * i + 1] += __byte_perm(r[i], 0, 0x4342);
        }
    } else {
#pragma unroll
        for (int i = 0; i < K / 2; i++)
            tot[i] += __byte_perm(r[i], 0, 0x4140);
    }
}

/* tot += wt * the bytes (path weights, sgm.h): each 16-bit lane stays below 65536 because
 * stereo_params_check keeps the weighted sum of the L ranges there */
template <int K>
static __device__ __forceinline__ void add_bytes_weighted(const uint32_t (&r)[byte_words<K>::R],
                                                          uint32_t wt, uint32_t (&tot)[K / 2])
{
    if (K % 4 == 0) {
#pragma unroll
        for (int i = 0; i < K / 4; i++) {
            tot[2 * i] += __byte_perm(r[i], 0, 0x4140) * wt;
            tot[2 * i + 1] += __byte_perm(r[i], 0, 0x4342) * wt;
        }
    } else {
#pragma unroll
        for (int i = 0; i < K / 2; i++)
            tot[i] += __byte_perm(r[i], 0, 0x4140) * wt;
    }
}

/* Direction dir's P1 or P2 (sgm_args.dir_p1 / dir_p2) read with constant indices only: a
 * kernel parameter array indexed at run time is copied to local memory. */
static __device__ __forceinline__ int dir_penalty(const int (&v)[8], int dir)
{
    int r = v[0];
#pragma unroll
    for (int j = 1; j < 8; j++)
        if (dir == j)
            r = v[j];
    return r;
}

/* The jump term of the recurrence for each |dI| = 0..255: (P2' - P1) in both 16-bit halves
 * (P2' >= P1 + 1, stereo_p2_adaptive), for a direction's P1 / P2 (a.dir_p1[dir], a.dir_p2[dir]:
 * every block walks one direction). Called by the whole block, which it synchronises. */
static __device__ __forceinline__ void fill_jump_table(const sgm_args &a, int p1, int p2,
                                                       uint32_t *table)
{
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        table[i] = (uint32_t)(stereo_p2_adaptive(p1, p2, a.p2_adapt, i) - p1) * 0x10001u;
    __syncthreads();
}

/* Stage 5 for a lane's K = 2W disparities: cur = C + min(prev_k, min(prev_k-1, prev_k+1) + P1,
 * min_prev + P2') - min_prev, with below / above the group's neighbour values (hi half: L(k0 -
 * 1), lo half: L(k0 + K); FAR2 at the ends of the range), jump2 = min_prev + P2' - P1 and
 * min_prev2 = min_prev in both halves. min(L(k-1) + P1, L(k+1) + P1, L(k), min_prev + P2') is
 * computed as min(min(L(k-1), L(k+1), min_prev + P2' - P1) + P1, L(k)): two instructions on
 * Hopper (P2' > P1, so the subtraction cannot borrow). */
template <int W>
static __device__ __forceinline__ void recurrence_step(const uint32_t (&prev)[W], uint32_t below,
                                                       uint32_t above, const uint32_t (&cost)[W],
                                                       uint32_t jump2, uint32_t p1x2,
                                                       uint32_t min_prev2, uint32_t (&cur)[W])
{
#pragma unroll
    for (int i = 0; i < W; i++) {
        uint32_t km1 = __byte_perm(i > 0 ? prev[i - 1] : below, prev[i], 0x5432);
        uint32_t kp1 = __byte_perm(prev[i], i < W - 1 ? prev[i + 1] : above, 0x5432);
        uint32_t v = addmin2(min3_2(km1, kp1, jump2), p1x2, prev[i]);
        /* cost + v - min_prev per half, in one IADD3 (modulo 2^32 the order does not matter,
         * and each half's true result fits: see "no carries" above) */
        cur[i] = cost[i] + v - min_prev2;
    }
}

/* The minimum of L over a group of G lanes, in both 16-bit halves: as 32-bit numbers such
 * pairs compare like their halves, so the group reduction is the plain one. */
template <int G, int W>
static __device__ __forceinline__ uint32_t line_min2(const uint32_t (&cur)[W], unsigned mask)
{
    uint32_t m2 = cur[0];
#pragma unroll
    for (int i = 1; i < W; i++)
        m2 = min2(m2, cur[i]);
    m2 = min2(m2, __byte_perm(m2, 0, 0x1032)); /* with its halves swapped */
    return group_min<G>(m2, mask);
}

/* The largest of the warp's values (every lane of the warp calls it). On sm_80+ one REDUX,
 * whose result the compiler knows to be warp-uniform. */
static __device__ __forceinline__ int warp_max(int v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_max_sync(0xffffffffu, v);
#else
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v = max(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
#endif
}

/* The first pixel, the step and the length of line gid of direction dir (stereo_sgm_line_start);
 * 0 steps for a group without a line (live = 0). */
static __device__ __forceinline__ int line_steps(const sgm_args &a, int dir, int gid, bool live,
                                                 int *x0, int *y0, int *dx, int *dy)
{
    stereo_sgm_line_start(dir, gid, a.width, a.height, x0, y0);
    stereo_sgm_direction(dir, dx, dy);
    int steps = 1 << 30;
    if (*dx > 0) steps = min(steps, a.width - *x0);
    if (*dx < 0) steps = min(steps, *x0 + 1);
    if (*dy > 0) steps = min(steps, a.height - *y0);
    if (*dy < 0) steps = min(steps, *y0 + 1);
    return live ? steps : 0;
}

/* One line of direction dir (line gid of stereo_sgm_line_start), walked by a group of G lanes;
 * jump_table: (P2' - P1) in both 16-bit halves for |dI| = 0..255 (shared memory, fill_jump_table).
 * MODE_STORE8 (sgm_dirs.cu) walks warp-uniformly: every lane of the warp calls it (live = 0 for
 * a group without a line), all groups of the warp run the longest of their lines' step counts
 * (the diagonal lines of one warp differ by a few steps), and a group past its line's end only
 * skips its loads and stores. The shuffles then need no convergence checks (mask is the full
 * warp). The other modes let each group leave at its own line's end (mask: the group's lanes). */
template <int K, int G, bool CENSUS, int MODE, int NB>
static __device__ __forceinline__ void walk_line(const sgm_args &a, int dir, int gid, int lane,
                                                 unsigned mask, const uint32_t *jump_table,
                                                 bool live = true)
{
    constexpr int W = K / 2;
    constexpr int PF = (CENSUS || K > 8) ? 4 : 8; /* steps in flight */
    constexpr bool UNIFORM = MODE == MODE_STORE8;
    const int w = a.width, D = K * G;
    int x0, y0, dx, dy;
    const int steps = line_steps(a, dir, gid, live, &x0, &y0, &dx, &dy);
    const int steps_all = UNIFORM ? warp_max(steps) : steps; /* the loop's trip count */
    const int k0 = lane * K;
    const long stride = (long)dy * w + dx;
    const uint32_t p1x2 = (uint32_t)dir_penalty(a.dir_p1, dir) * 0x10001u;
    /* the path weight w_r (sgm.h): L pairs times w_r stay two exact halves, since
     * stereo_params_check keeps every w_r L_r, indeed their sum, below 65536 */
    const uint32_t wt = (uint32_t)dir_penalty(a.dir_weight, dir);

    if (MODE == MODE_FINAL && a.disp_right) {
        /* right pixels the walk never completes (no candidate inside the image) */
        for (int xr = w - a.dmin + lane; xr < w; xr += G)
            if (xr >= 0)
                a.disp_right[(size_t)y0 * w + xr] = STEREO_INVALID;
    }

    const size_t p0 = (size_t)y0 * w + x0;
    const right_base<K> rb(a, k0);
    step_inputs<K, CENSUS, NB> ring[PF];
#pragma unroll
    for (int j = 0; j < PF; j++) {
        if (j < steps)
            load_step<K, CENSUS, MODE, NB>(a, rb, p0 + j * stride, x0 + j * dx - a.dmin - k0,
                                           k0, ring[j]);
        else
            ring[j].grey = 0; /* a uniform walk's idle steps compute with it */
    }

    uint32_t prev[W];
    uint32_t right_best[K], pending[W]; /* final pass only */
#pragma unroll
    for (int i = 0; i < K; i++)
        right_best[i] = KEY_EMPTY;
    uint32_t min_prev2 = 0; /* min over k of the previous L, in both 16-bit halves */
    int grey_prev = 0;
    for (int base = 0; base < steps_all; base += PF) {
#pragma unroll
        for (int j = 0; j < PF; j++) {
            const int step = base + j;
            if (step >= steps_all)
                break;
            const int x = x0 + step * dx, y = y0 + step * dy;
            const size_t p = p0 + step * stride;
            const int xr0 = x - a.dmin - k0;
            step_inputs<K, CENSUS, NB> &in = ring[j];
            /* stage 4 */
            uint32_t cost[W];
            step_costs<K, CENSUS, NB>(a, in, xr0, cost);
            /* stage 5: L = C + min(prev_k, min(prev_k-1, prev_k+1) + P1, min_prev + P2') - min_prev */
            uint32_t cur[W];
            if (step == 0) {
#pragma unroll
                for (int i = 0; i < W; i++)
                    cur[i] = cost[i];
            } else {
                uint32_t below = __shfl_up_sync(mask, prev[W - 1], 1, G); /* hi half: L(k0 - 1) */
                uint32_t above = __shfl_down_sync(mask, prev[0], 1, G);   /* lo half: L(k0 + K) */
                if (lane == 0)
                    below = FAR2;
                if (lane == G - 1)
                    above = FAR2;
                recurrence_step(prev, below, above, cost,
                                min_prev2 + jump_table[abs(in.grey - grey_prev)], p1x2,
                                min_prev2, cur);
            }
            min_prev2 = line_min2<G>(cur, mask);
            grey_prev = in.grey;

            if (MODE == MODE_FINAL) {
                uint32_t tot[W];
#pragma unroll
                for (int i = 0; i < W; i++)
                {
                    uint32_t t = in.s[0][i] + cur[i] * wt;
#pragma unroll
                    for (int b = 1; b < NB; b++)
                        t += in.s[b][i];
                    tot[i] = t;
                }
                /* the previous pixel's winner-takes-all and right disparity, now that this
                 * step's recurrence is under way */
                if (step > 0)
                    finish_pixel<K, G>(a, pending, x - dx, y - dy, lane, k0, mask, right_best);
#pragma unroll
                for (int i = 0; i < W; i++)
                    pending[i] = tot[i];
            } else {
                uint32_t out[W];
#pragma unroll
                for (int i = 0; i < W; i++)
                    out[i] = MODE == MODE_ADD ? in.s[0][i] + cur[i] * wt : cur[i] * wt;
                if (MODE == MODE_STORE8) {
                    if (step < steps)
                        store_bytes<K>(a.L8 + (size_t)dir * a.vol + p * D + k0, cur);
                } else
                    store_words(a.S[0] + p * D + k0, out);
            }
#pragma unroll
            for (int i = 0; i < W; i++)
                prev[i] = cur[i];
            /* refill this ring slot with step + PF */
            if (step + PF < steps)
                load_step<K, CENSUS, MODE, NB>(a, rb, p + PF * stride, xr0 + PF * dx, k0, in);
        }
    }
    if (MODE == MODE_FINAL && steps > 0) /* the last pixel of the line */
        finish_pixel<K, G>(a, pending, x0 + (steps - 1) * dx, y0 + (steps - 1) * dy, lane, k0,
                           mask, right_best);
}

/* ---- the per-direction walk in the interleaved layout (K % 8 == 0) ---------------------------
 * A lane keeps its K = 2W disparities k0 .. k0 + K - 1 as W words, word j = (L(k0 + j) low half,
 * L(k0 + j + W) high half). The recurrence's neighbours k - 1 and k + 1 of word j are then the
 * whole words j - 1 and j + 1 (only word 0's k - 1 and word W - 1's k + 1 need one byte_perm
 * each, with the neighbouring lanes' words), instead of two byte_perms per word in the
 * consecutive layout (walk_line). The byte volumes keep the natural disparity order: the store
 * packs the words back (pack_il_bytes).
 *
 * Arithmetic: Hopper uses DPX (the 16x2 integer forms above). GPUs from sm_80 without DPX
 * (Ampere, Orin: sm_87) use half2 instructions on the same bits: a 16-bit integer below 2048 read
 * as an IEEE half is a subnormal (v * 2^-24) or, from 1024, a normal of exponent -14, both with a
 * spacing of one unit, so HMNMX2 orders such values as their integers and HADD2 (round to
 * nearest, subnormals kept: no .ftz) adds them exactly while the sum stays below 2048. The
 * per-direction design only runs when every L fits a byte (sgm_fits_bytes: L <= 255 and
 * P2' <= 255), so every operand and result of the walk is below 2048 except the range-end
 * guard IL_FAR_H, which is a large normal half (1.0) that stays larger than any of them. The
 * half2 instructions issue on the FMA pipe, which the integer walk leaves idle; before sm_80
 * (no HMNMX2) the portable 16x2 integer intrinsics are used. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && CUDART_VERSION >= 12000
#define IL_DPX 1
#define IL_HALF 0
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define IL_DPX 0
#define IL_HALF 1
#else
#define IL_DPX 0
#define IL_HALF 0
#endif
#if IL_HALF
#define IL_FAR2 0x3c003c00u /* 1.0 in both halves: above every value of the walk */
static __device__ __forceinline__ uint32_t il_min(uint32_t a, uint32_t b)
{
    uint32_t d;
    asm("min.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
static __device__ __forceinline__ uint32_t il_add(uint32_t a, uint32_t b)
{
    uint32_t d;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
static __device__ __forceinline__ uint32_t il_min3(uint32_t a, uint32_t b, uint32_t c)
{
    return il_min(il_min(a, b), c);
}
static __device__ __forceinline__ uint32_t il_addmin(uint32_t a, uint32_t b, uint32_t c)
{
    return il_min(il_add(a, b), c);
}
#else
#define IL_FAR2 FAR2
static __device__ __forceinline__ uint32_t il_min(uint32_t a, uint32_t b) { return min2(a, b); }
static __device__ __forceinline__ uint32_t il_min3(uint32_t a, uint32_t b, uint32_t c)
{
    return min3_2(a, b, c);
}
static __device__ __forceinline__ uint32_t il_addmin(uint32_t a, uint32_t b, uint32_t c)
{
    return addmin2(a, b, c);
}
#endif

/* The minimum of both halves of v over a group of G lanes, in both halves (the group's lanes
 * call it together; mask: the warp's lanes that do). */
template <int G>
static __device__ __forceinline__ uint32_t il_group_min(uint32_t v, unsigned mask)
{
    v = il_min(v, __byte_perm(v, 0, 0x1032)); /* with its halves swapped */
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1)
        v = il_min(v, __shfl_xor_sync(mask, v, off, G));
    return v;
}

/* One direction's step in the interleaved layout (walk_line_il, and the sweeps of sgm_sweep.cu):
 * cur from prev
 * (the L of the pixel the direction comes from), its minimum min_prev2 (both halves) and the
 * jump term (P2' - P1, both halves); returns the group minimum of cur in both halves. With
 * prev = 0 and min_prev2 = 0 (no pixel to come from) cur = cost. */
template <int K, int G>
static __device__ __forceinline__ uint32_t il_recur(const uint32_t (&prev)[K / 2],
                                                    const uint32_t (&cost)[K / 2],
                                                    uint32_t min_prev2, uint32_t jump,
                                                    uint32_t p1x2, int gl, uint32_t (&cur)[K / 2])
{
    constexpr int W = K / 2;
    const unsigned full = 0xffffffffu;
    uint32_t below = __shfl_up_sync(full, prev[W - 1], 1, G); /* hi: L(k0 - 1) */
    uint32_t above = __shfl_down_sync(full, prev[0], 1, G);   /* lo: L(k0 + K) */
    if (gl == 0)
        below = IL_FAR2;
    if (gl == G - 1)
        above = IL_FAR2;
    const uint32_t first = __byte_perm(below, prev[W - 1], 0x5432); /* k - 1 of word 0 */
    const uint32_t last = __byte_perm(prev[0], above, 0x5432);      /* k + 1 of word W - 1 */
    const uint32_t jump2 = min_prev2 + jump;
#pragma unroll
    for (int i = 0; i < W; i++) {
        const uint32_t km1 = i > 0 ? prev[i > 0 ? i - 1 : 0] : first;
        const uint32_t kp1 = i < W - 1 ? prev[i < W - 1 ? i + 1 : 0] : last;
        const uint32_t v = il_addmin(il_min3(km1, kp1, jump2), p1x2, prev[i]);
        cur[i] = cost[i] + v - min_prev2; /* integers: see "no carries" in sgm_walk.cuh */
    }
    uint32_t m2 = cur[0];
#pragma unroll
    for (int i = 1; i < W; i++)
        m2 = il_min(m2, cur[i]);
    return il_group_min<G>(m2, full);
}

/* Costs in the interleaved layout: word j = (C(k0 + j), C(k0 + j + W)); max_cost where x - d < 0.
 * Rank: the window (bytes xr0 - K + 1 .. xr0 of the right rank row, disparity k0 + i at window
 * byte K - 1 - i) is first realigned to whole words (win[i] = window bytes 4i .. 4i + 3, one
 * byte_perm each); for an even j, one byte_perm gathers the quad (R(j), R(j + W), R(j + 1),
 * R(j + 1 + W)) from two window words (W % 4 == 0 keeps the pairs at the same offset), one
 * __vabsdiffu4 gives its four costs, and two byte_perms widen them into words j and j + 1. */
template <int K, bool CENSUS>
static __device__ __forceinline__ void step_costs_il(const sgm_args &a,
                                                     const step_inputs<K, CENSUS, 1> &in,
                                                     int xr0, uint32_t (&cost)[K / 2])
{
    constexpr int W = K / 2;
    if (SGM_VOLUME && !CENSUS) { /* word j = (byte j, byte j + W) of the lane's cost bytes */
#pragma unroll
        for (int j = 0; j < W; j++)
            cost[j] = __byte_perm(in.cv[SGM_VOLUME ? j / 4 : 0], in.cv[SGM_VOLUME ? (j + W) / 4 : 0],
                                  (uint32_t)((j % 4) | (4 + (j + W) % 4) << 8)) & 0x00ff00ffu;
        return;
    }
    if (CENSUS) {
#pragma unroll
        for (int j = 0; j < W; j++)
            cost[j] = word_cost(a, in.cl, in.cr[CENSUS ? j : 0]) |
                      word_cost(a, in.cl, in.cr[CENSUS ? j + W : 0]) << 16;
    } else {
        constexpr int SW = K / 4;
        uint32_t win[SW];
#pragma unroll
        for (int i = 0; i < SW; i++) /* in.shift: bytes s .. s + 3 in order (load_step's FWD) */
            win[i] = __byte_perm(in.rr[CENSUS ? 0 : i], in.rr[CENSUS ? 0 : i + 1], in.shift);
        const uint32_t rl4 = (uint32_t)in.rl * 0x01010101u;
#pragma unroll
        for (int j = 0; j < W; j += 2) {
            const int b = K - 2 - j, u = b / 4, o = b % 4; /* R(j + 1): window byte b, R(j): b + 1 */
            const uint32_t sel = (uint32_t)((o + 1) | (4 + o + 1) << 4 | o << 8 | (4 + o) << 12);
            uint32_t q = __byte_perm(win[u], win[u - W / 4], sel);
            uint32_t c4 = costs4(a, in.rl, rl4, q);
            cost[j] = __byte_perm(c4, 0, 0x4140);
            cost[j + 1] = __byte_perm(c4, 0, 0x4342);
        }
    }
    if (xr0 - (K - 1) < 0) { /* near the left edge: disparities pointing outside the image */
        const uint32_t mc = (uint32_t)a.max_cost;
#pragma unroll
        for (int j = 0; j < W; j++) {
            uint32_t l = xr0 - j >= 0 ? lo16(cost[j]) : mc;
            uint32_t h = xr0 - j - W >= 0 ? hi16(cost[j]) : mc;
            cost[j] = l | h << 16;
        }
    }
}

/* The low bytes of the W interleaved words in natural disparity order, K / 4 words: with
 * A_m = (L(2m), L(2m + 1), L(2m + W), L(2m + 1 + W)) from words 2m and 2m + 1, output word t
 * (disparities 4t .. 4t + 3) is the low halves of A_2t and A_2t+1 for t < W / 4, their high
 * halves (t - W / 4) after. Every L fits a byte (bytes 1 and 3 of a word are 0), so A_m is
 * word 2m + 256 * word 2m + 1: one multiply-add on the FMA pipe instead of a byte_perm on the
 * integer ALU pipe, which bounds the walk. */
template <int K>
static __device__ __forceinline__ void pack_il_bytes(const uint32_t (&v)[K / 2], uint32_t (&o)[K / 4])
{
    constexpr int W = K / 2;
#pragma unroll
    for (int t = 0; t < W / 4; t++) {
        uint32_t a0 = v[4 * t + 1] * 256u + v[4 * t];
        uint32_t a1 = v[4 * t + 3] * 256u + v[4 * t + 2];
        o[t] = __byte_perm(a0, a1, 0x5410);
        o[t + W / 4] = __byte_perm(a0, a1, 0x7632);
    }
}

template <int K>
static __device__ __forceinline__ void store_il_bytes(uint8_t *p, const uint32_t (&v)[K / 2])
{
    uint32_t o[K / 4];
    pack_il_bytes<K>(v, o);
    if (K % 16 == 0) {
#pragma unroll
        for (int i = 0; i < K / 16; i++)
            *(uint4 *)(p + 16 * i) = make_uint4(o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]);
    } else {
#pragma unroll
        for (int i = 0; i < K / 8; i++)
            *(uint2 *)(p + 8 * i) = make_uint2(o[2 * i], o[2 * i + 1]);
    }
}

/* One line of direction dir in the interleaved layout, its L stored as bytes into the
 * direction's volume; warp-uniform as walk_line's MODE_STORE8 (every lane of the warp calls it,
 * live = 0 for a group without a line). Same recurrence as recurrence_step, same results. */
template <int K, int G, bool CENSUS>
static __device__ __forceinline__ void walk_line_il(const sgm_args &a, int dir, int gid, int lane,
                                                    const uint32_t *jump_table, bool live)
{
    constexpr int W = K / 2;
    constexpr int PF = 4; /* steps in flight */
    const int w = a.width, D = K * G;
    int x0, y0, dx, dy;
    const int steps = line_steps(a, dir, gid, live, &x0, &y0, &dx, &dy);
    const int steps_all = warp_max(steps);
    const int k0 = lane * K;
    const long stride = (long)dy * w + dx;
    const uint32_t p1x2 = (uint32_t)dir_penalty(a.dir_p1, dir) * 0x10001u;
    const size_t p0 = (size_t)y0 * w + x0;
    uint8_t *const out = a.L8 + (size_t)dir * a.vol + k0;
    const right_base<K> rb(a, k0);
    step_inputs<K, CENSUS, 1> ring[PF];
#pragma unroll
    for (int j = 0; j < PF; j++) {
        if (j < steps)
            load_step<K, CENSUS, MODE_STORE8, 1, true>(a, rb, p0 + j * stride,
                                                       x0 + j * dx - a.dmin - k0, k0, ring[j]);
        else
            ring[j].grey = 0;
    }
    uint32_t prev[W];
#pragma unroll
    for (int i = 0; i < W; i++)
        prev[i] = 0;
    uint32_t min_prev2 = 0;
    int grey_prev = 0;
    for (int base = 0; base < steps_all; base += PF) {
#pragma unroll
        for (int j = 0; j < PF; j++) {
            const int step = base + j;
            if (step >= steps_all)
                break;
            const size_t p = p0 + step * stride;
            const int xr0 = x0 + step * dx - a.dmin - k0;
            step_inputs<K, CENSUS, 1> &in = ring[j];
            uint32_t cost[W], cur[W];
            step_costs_il<K, CENSUS>(a, in, xr0, cost);
            /* the line's first step: prev = 0 and min_prev2 = 0 give cur = cost (il_recur) */
            min_prev2 = il_recur<K, G>(prev, cost, min_prev2, jump_table[abs(in.grey - grey_prev)],
                                       p1x2, lane, cur);
            grey_prev = in.grey;
            if (step < steps)
                store_il_bytes<K>(out + p * D, cur);
#pragma unroll
            for (int i = 0; i < W; i++)
                prev[i] = cur[i];
            if (step + PF < steps)
                load_step<K, CENSUS, MODE_STORE8, 1, true>(a, rb, p + PF * stride, xr0 + PF * dx,
                                                           k0, in);
        }
    }
}

/* The start of a row's sum pass (k_wta, k_wta_pk in sgm_dirs.cu), the counterpart of
 * write_right_row: the row's right keys rk cleared, and the segment [xa, xb) of the row that the
 * calling thread's group of G lanes walks (NG groups per block; empty at the row's end). Called
 * by the whole block, which it synchronises. */
template <int G, int NG>
static __device__ __forceinline__ void begin_right_row(uint32_t *rk, int w, int *xa, int *xb)
{
    for (int i = threadIdx.x; i < w; i += blockDim.x)
        rk[i] = KEY_EMPTY;
    __syncthreads();
    const int seg = (w + NG - 1) / NG;
    *xa = (int)(threadIdx.x / G) * seg;
    *xb = min(w, *xa + seg);
}

/* Masks of two 16-bit values compared as the walk's halves (0xffff where true): half2
 * comparisons where il_min is a half2 minimum, else the 16x2 integer ones (the same order for
 * the non-negative values below 0x8000 that use them). */
static __device__ __forceinline__ uint32_t il_le_mask(uint32_t a, uint32_t b)
{
#if IL_HALF
    uint32_t d;
    asm("set.le.u32.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
#else
    return __vcmpleu2(a, b);
#endif
}
static __device__ __forceinline__ uint32_t il_eq_mask(uint32_t a, uint32_t b)
{
#if IL_HALF
    uint32_t d;
    asm("set.eq.u32.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
#else
    return __vcmpeq2(a, b);
#endif
}

/* Stages 6 and 7 for one pixel from its complete S in the interleaved layout (t: the lane's
 * words; the backward sweep of sgm_sweep.cu and the upward strip sweep of sgm_strips.cu): the left disparity and confidence (written by the group's lane 0) and one
 * step of the right disparity's ring (rv: the best sum per slot, rx: the column it came from;
 * slot i is right pixel x - dmin - (k0 + i), in the interleaved layout: low half of word i,
 * high half of word i - W). The whole group calls it (shuffles); on: the pixel is real. The sums
 * are below 2048, so they compare as halves (il_min, il_eq_mask, il_le_mask). */
#define SW_EMPTY 0x7bff7bffu /* the largest finite half: above every sum */
#define SW_PENALTY 0x4000u   /* added to excluded sums: 2.0 as a half, above every sum */
template <int K, int G, bool RING = true>
static __device__ __forceinline__ void finish_il(const sgm_args &a, const uint32_t (&t)[K / 2],
                                                 int x, int y, int gl, int k0, bool on,
                                                 uint32_t *my_words, const uint32_t *group_words,
                                                 uint32_t (&rv)[K / 2], uint32_t (&rx)[K / 2])
{
    constexpr int W = K / 2, D = K * G;
    const unsigned full = 0xffffffffu;
    /* S1 and the best disparity (ties to the smaller one) */
    uint32_t m2 = t[0];
#pragma unroll
    for (int m = 1; m < W; m++)
        m2 = il_min(m2, t[m]);
    m2 = il_group_min<G>(m2, full);
    uint32_t hit = 0; /* bit i: disparity k0 + i has S1 (i < W: low halves, else high) */
#pragma unroll
    for (int m = 0; m < W; m++)
        hit |= il_eq_mask(t[m], m2) & (0x10001u << m);
    hit = (hit & 0xffffu) | (hit >> 16) << W;
    const int gbase = (int)(threadIdx.x & 31) & ~(G - 1);
    const unsigned lanes = (__ballot_sync(full, hit != 0) >> gbase) &
                           (G == 32 ? full : (1u << (G & 31)) - 1u);
    const int first = __ffs(lanes) - 1;
    const int in_lane = __shfl_sync(full, __ffs(hit) - 1, first, G);
    const int best = first * K + in_lane;
    const uint32_t s1 = m2 & 0xffffu;
    /* S2: the minimum outside best - 1 .. best + 1 */
    const int rel = best - k0;
    uint32_t ex = rel >= -1 && rel <= K ? ((0x7u << (rel + 1)) >> 2) & ((1u << K) - 1u) : 0u;
    ex = (ex & ((1u << W) - 1u)) | (ex >> W) << 16;
    uint32_t m3 = SW_EMPTY;
#pragma unroll
    for (int m = 0; m < W; m++)
        m3 = il_min(m3, t[m] + ((ex >> m) & 0x10001u) * SW_PENALTY);
    const uint32_t s2 = il_group_min<G>(m3, full) & 0xffffu;
    /* the group's words for lane 0's S(best - 1), S(best + 1) */
#pragma unroll
    for (int m = 0; m < W; m += 4)
        *(uint4 *)(my_words + m) = make_uint4(t[m], t[m + 1], t[m + 2], t[m + 3]);
    __syncwarp();
    if (gl == 0 && on) {
        const size_t p = (size_t)y * a.width + x;
        const int ok = x >= a.dmin && (!a.valid || a.valid[p]) &&
                       (a.uniqueness == 0 || stereo_unique(s1, s2, a.uniqueness));
        int v = STEREO_SUBPIXEL_SCALE * (a.dmin + best);
        if (a.subpixel && best > 0 && best < D - 1) {
            const uint16_t *gw = (const uint16_t *)group_words;
            int c[2];
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int k = best - 1 + 2 * i, kk = k % K;
                c[i] = gw[2 * ((k / K) * W + kk % W) + kk / W];
            }
            v += stereo_subpixel_offset(c[0], (int)s1, c[1]);
        }
        a.disp[p] = ok ? (int16_t)v : STEREO_INVALID;
        if (a.conf)
            a.conf[p] = ok ? stereo_confidence_value(s1, s2) : 0;
    }
    if (!RING || !a.disp_right) /* RING = false: the caller finds the right disparity */
        return;
    /* the right disparity: every slot takes this pixel's sum if it is no larger (ties: the
     * smaller disparity, which a right-to-left scan meets later) */
    if (on) {
        const uint32_t x2 = (uint32_t)x * 0x10001u;
#pragma unroll
        for (int m = 0; m < W; m++) {
            const uint32_t le = il_le_mask(t[m], rv[m]);
            rv[m] = il_min(t[m], rv[m]);
            rx[m] = (x2 & le) | (rx[m] & ~le);
        }
        /* slot 0 has seen all its candidates: right pixel x - dmin */
        const int xr = x - a.dmin;
        if (gl == 0 && xr >= 0) {
            const size_t q = (size_t)y * a.width + xr;
            a.disp_right[q] = a.valid_right && !a.valid_right[q]
                                  ? STEREO_INVALID
                                  : (int16_t)(STEREO_SUBPIXEL_SCALE * ((int)(rx[0] & 0xffffu) - xr));
        }
    }
    /* shift by one disparity: slot i <- slot i + 1 (word m <- word m + 1; word W - 1 <- (the
     * high half of word 0, the next lane's slot 0)) */
    const uint32_t nv = __shfl_down_sync(full, rv[0], 1, G);
    const uint32_t nx = __shfl_down_sync(full, rx[0], 1, G);
    if (on) {
        const uint32_t v0 = rv[0], x0 = rx[0];
#pragma unroll
        for (int m = 0; m < W - 1; m++)
            rv[m] = rv[m + 1], rx[m] = rx[m + 1];
        rv[W - 1] = __byte_perm(v0, gl == G - 1 ? SW_EMPTY : nv, 0x5432);
        rx[W - 1] = __byte_perm(x0, nx, 0x5432);
    }
}

/* K disparities per lane, G lanes per line for each supported D: 8 disparities per lane where
 * the group size comes out a power of two (D = 64, 128, 256), else 8 lanes with K = D / 8 (even
 * for every multiple of 16). Expands to a switch that returns fn<K, G>(...). */
#define SGM_DISPATCH(fn, ...)                                  \
    switch (a->ndisp) {                                        \
    case 16: return fn<2, 8>(__VA_ARGS__);                     \
    case 32: return fn<4, 8>(__VA_ARGS__);                     \
    case 48: return fn<6, 8>(__VA_ARGS__);                     \
    case 64: return fn<8, 8>(__VA_ARGS__);                     \
    case 80: return fn<10, 8>(__VA_ARGS__);                    \
    case 96: return fn<12, 8>(__VA_ARGS__);                    \
    case 112: return fn<14, 8>(__VA_ARGS__);                   \
    case 128: return fn<8, 16>(__VA_ARGS__);                   \
    case 144: return fn<18, 8>(__VA_ARGS__);                   \
    case 160: return fn<10, 16>(__VA_ARGS__);                  \
    case 176: return fn<22, 8>(__VA_ARGS__);                   \
    case 192: return fn<12, 16>(__VA_ARGS__);                  \
    case 208: return fn<26, 8>(__VA_ARGS__);                   \
    case 224: return fn<14, 16>(__VA_ARGS__);                  \
    case 240: return fn<30, 8>(__VA_ARGS__);                   \
    case 256: return fn<8, 32>(__VA_ARGS__);                   \
    }                                                          \
    return cudaErrorInvalidValue

#endif
