/* sgm.cu — stages 4 to 7 on the GPU: matching cost on the fly, the SGM recurrence along one
 * direction's lines (sgm.h), and in the last direction's pass the winner-takes-all and the right
 * disparity (disparity.h).
 *
 * A group of G lanes (8, 16 or 32, inside one warp) walks one line; lane t holds the K
 * consecutive disparities k = t*K .. t*K+K-1 (G * K = D, K even) as K/2 pairs of 16-bit values in
 * 32-bit registers, so the recurrence runs as 16x2 SIMD (Hopper: DPX min-plus instructions).
 * Per step: the costs of its K disparities, the neighbours k-1 / k+1 across lanes by one shuffle
 * each, the minimum of the new L over the group by a butterfly reduction, and S += L for its K
 * disparities (contiguous: a group touches 2D consecutive bytes, in vector loads and stores).
 * Lines are independent, so every group runs on its own. All 16-bit lanes stay below 0x8400:
 * L <= max_cost + P2 <= 1247, the absent-neighbour sentinel 0x7fff plus P1 <= 1022, S <= 9976.
 *
 * Latency: the loads of step i + PF (S and the cost inputs) are issued while step i computes, so
 * a line keeps PF steps of memory traffic in flight instead of waiting for each load.
 *
 * Direction order: 2 or 4 branches run concurrently (a line is a long sequential chain, so one
 * direction alone has too few lines to keep the GPU busy), each into its own partial sum; an
 * extra branch's store replaces a read-modify-write, so the traffic stays the same. Direction 1
 * (right to left) runs last in FINAL mode: it adds its L to the branches' partial sums, which
 * makes S complete for the pixel, and instead of writing S back it
 *   - picks the left disparity (argmin with ties to the smaller k, uniqueness, subpixel,
 *     confidence) by group reductions over packed keys (S << 9 | k), and
 *   - builds the right disparity by the diagonal search: walking right to left, slot j of a
 *     ring holds the best key so far for right pixel xr = x - dmin - j; at pixel x, slot k takes
 *     S(x, k); slot 0 is then complete (its last candidate, k = 0, is x itself) and is written;
 *     the ring then shifts down by one slot (one shuffle across lanes).
 * The complete S volume is therefore never written or read again.
 */
#include "launch.cuh"
#include "stereo_math.h"

#define AGG_BLOCK 128
#define KEY_EMPTY 0xffffffffu
#define FAR2 ((uint32_t)STEREO_SGM_FAR * 0x10001u)

enum { MODE_STORE = 0, MODE_ADD = 1, MODE_FINAL = 2 };

/* ---- 16x2 SIMD: Hopper has min-plus in one instruction (DPX, CUDA 12+); elsewhere the
 * portable SIMD intrinsics give the same values ---------------------------------------------- */
static __device__ __forceinline__ uint32_t min2(uint32_t a, uint32_t b) { return __vminu2(a, b); }

/* min(a + b, c) per 16-bit half */
static __device__ __forceinline__ uint32_t addmin2(uint32_t a, uint32_t b, uint32_t c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && CUDART_VERSION >= 12000
    return __viaddmin_u16x2(a, b, c);
#else
    return __vminu2(__vadd2(a, b), c);
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
    int shift;                                    /* 8 * (window start & 3) */
    int rl, grey;
};

/* The right rank row is read through aligned 32-bit words from at or below byte xr0 - K + 1 to
 * up to 7 bytes past xr0; the rank buffers are padded in front and behind (RANK_PAD_FRONT /
 * RANK_PAD_BACK in launch.cuh) so these reads stay inside the allocation even left of the image,
 * where the costs are replaced by max_cost anyway. */
template <int K, bool CENSUS, int MODE, int NB>
static __device__ __forceinline__ void load_step(const sgm_args &a, size_t p, int y, int xr0,
                                                 int k0, step_inputs<K, CENSUS, NB> &in)
{
    if (MODE != MODE_STORE) {
#pragma unroll
        for (int b = 0; b < NB; b++)
            load_words(a.S[b] + p * a.ndisp + k0, in.s[b]);
    }
    if (CENSUS) {
        in.cl = a.census_l[p];
        const uint64_t *cr = a.census_r + (size_t)y * a.width;
#pragma unroll
        for (int i = 0; i < K; i++)
            in.cr[i] = xr0 - i >= 0 ? cr[xr0 - i] : 0;
    } else {
        in.rl = a.rank_l[p];
        const uint8_t *lo = a.rank_r + (size_t)y * a.width + (xr0 - K + 1);
        const uint32_t *wp = (const uint32_t *)((uintptr_t)lo & ~(uintptr_t)3);
        in.shift = 8 * (int)((uintptr_t)lo & 3);
#pragma unroll
        for (int i = 0; i < step_inputs<K, CENSUS, NB>::R; i++)
            in.rr[i] = wp[i];
    }
    in.grey = a.grey[p];
}

/* Costs of the lane's K disparities as K/2 16-bit pairs; max_cost where x - d < 0. */
template <int K, bool CENSUS, int NB>
static __device__ __forceinline__ void step_costs(const sgm_args &a, const step_inputs<K, CENSUS, NB> &in,
                                                  int xr0, uint32_t (&cost)[K / 2])
{
    if (CENSUS) {
#pragma unroll
        for (int j = 0; j < K / 2; j++)
            cost[j] = (uint32_t)__popcll(in.cl ^ in.cr[CENSUS ? 2 * j : 0]) |
                      (uint32_t)__popcll(in.cl ^ in.cr[CENSUS ? 2 * j + 1 : 0]) << 16;
    } else {
        /* the window: bytes xr0 - K + 1 .. xr0 of the right rank row; first realign the loaded
         * words to the window start (win[i] = window bytes 4i .. 4i+3) */
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
            uint32_t c4 = __vabsdiffu4(rl4, r4);
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

/* Stages 6 and 7 for one pixel of the final pass, from its complete S (tot: K/2 pairs per lane):
 * the left disparity (+ confidence) and one step of the right disparity's shifting ring. The
 * final pass runs it one step late (for the previous pixel) so that its reductions overlap the
 * next step's recurrence instead of stalling it (a warp issues in order). */
template <int K, int G>
static __device__ __forceinline__ void finish_pixel(const sgm_args &a, const uint32_t (&tot)[K / 2],
                                                    int x, int y, int lane, int k0, unsigned mask,
                                                    uint32_t (&right_best)[K])
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
        if (lane == 0 && xr >= 0) {
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

template <int K, int G, bool CENSUS, int MODE, int NB>
static __global__ void __launch_bounds__(AGG_BLOCK)
k_aggregate(sgm_args a, int dir, int nlines)
{
    constexpr int W = K / 2;
    constexpr int PF = (CENSUS || K > 8) ? 4 : 8; /* steps in flight */
    __shared__ uint16_t p2_table[256];            /* P2' for |dI| = 0..255 */
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        p2_table[i] = (uint16_t)stereo_p2_adaptive(a.p1, a.p2, a.p2_adapt, i);
    __syncthreads();

    const int w = a.width, h = a.height, D = K * G;
    int gid = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    int lane = threadIdx.x & (G - 1);
    if (gid >= nlines)
        return; /* whole groups leave together: G divides the block and the warp */
    unsigned mask = G == 32 ? 0xffffffffu : (((1u << G) - 1) << (threadIdx.x & 31 & ~(G - 1)));
    int x0, y0, dx, dy;
    stereo_sgm_line_start(dir, gid, w, h, &x0, &y0);
    stereo_sgm_direction(dir, &dx, &dy);
    int steps = 1 << 30;
    if (dx > 0) steps = min(steps, w - x0);
    if (dx < 0) steps = min(steps, x0 + 1);
    if (dy > 0) steps = min(steps, h - y0);
    if (dy < 0) steps = min(steps, y0 + 1);
    const int k0 = lane * K;
    const long stride = (long)dy * w + dx;
    const uint32_t p1x2 = (uint32_t)a.p1 * 0x10001u;

    if (MODE == MODE_FINAL && a.disp_right) {
        /* right pixels the walk never completes (no candidate inside the image) */
        for (int xr = w - a.dmin + lane; xr < w; xr += G)
            if (xr >= 0)
                a.disp_right[(size_t)y0 * w + xr] = STEREO_INVALID;
    }

    const size_t p0 = (size_t)y0 * w + x0;
    step_inputs<K, CENSUS, NB> ring[PF];
#pragma unroll
    for (int j = 0; j < PF; j++)
        if (j < steps)
            load_step<K, CENSUS, MODE, NB>(a, p0 + j * stride, y0 + j * dy, x0 + j * dx - a.dmin - k0,
                                       k0, ring[j]);

    uint32_t prev[W];
    uint32_t right_best[K], pending[W]; /* final pass only */
#pragma unroll
    for (int i = 0; i < K; i++)
        right_best[i] = KEY_EMPTY;
    uint32_t min_prev = 0;
    int grey_prev = 0;
    for (int base = 0; base < steps; base += PF) {
#pragma unroll
        for (int j = 0; j < PF; j++) {
            const int step = base + j;
            if (step >= steps)
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
                int di = abs(in.grey - grey_prev);
                uint32_t jump = min_prev + p2_table[di];
                uint32_t jump2 = jump * 0x10001u, base2 = min_prev * 0x10001u;
#pragma unroll
                for (int i = 0; i < W; i++) {
                    uint32_t km1 = __byte_perm(i > 0 ? prev[i - 1] : below, prev[i], 0x5432);
                    uint32_t kp1 = __byte_perm(prev[i], i < W - 1 ? prev[i + 1] : above, 0x5432);
                    uint32_t v = addmin2(min2(km1, kp1), p1x2, prev[i]);
                    v = min2(v, jump2);
                    cur[i] = __vadd2(cost[i], __vsub2(v, base2));
                }
            }
            uint32_t m2 = cur[0];
#pragma unroll
            for (int i = 1; i < W; i++)
                m2 = min2(m2, cur[i]);
            min_prev = group_min<G>(min(lo16(m2), hi16(m2)), mask);
            grey_prev = in.grey;

            if (MODE == MODE_FINAL) {
                uint32_t tot[W];
#pragma unroll
                for (int i = 0; i < W; i++)
                {
                    uint32_t t = __vadd2(in.s[0][i], cur[i]);
#pragma unroll
                    for (int b = 1; b < NB; b++)
                        t = __vadd2(t, in.s[b][i]);
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
                    out[i] = MODE == MODE_STORE ? cur[i] : __vadd2(in.s[0][i], cur[i]);
                store_words(a.S[0] + p * D + k0, out);
            }
#pragma unroll
            for (int i = 0; i < W; i++)
                prev[i] = cur[i];
            /* refill this ring slot with step + PF */
            if (step + PF < steps)
                load_step<K, CENSUS, MODE, NB>(a, p + PF * stride, y + PF * dy, xr0 + PF * dx, k0, in);
        }
    }
    if (MODE == MODE_FINAL && steps > 0) /* the last pixel of the line */
        finish_pixel<K, G>(a, pending, x0 + (steps - 1) * dx, y0 + (steps - 1) * dy, lane, k0,
                           mask, right_best);
}

template <int K, int G, int MODE, int NB>
static cudaError_t launch_kgm(const sgm_args *a, int dir, cudaStream_t stream)
{
    int nlines = stereo_sgm_line_count(dir, a->width, a->height);
    unsigned blocks = (unsigned)(((size_t)nlines * G + AGG_BLOCK - 1) / AGG_BLOCK);
    if (a->cost == STEREO_COST_CENSUS)
        k_aggregate<K, G, true, MODE, NB><<<blocks, AGG_BLOCK, 0, stream>>>(*a, dir, nlines);
    else
        k_aggregate<K, G, false, MODE, NB><<<blocks, AGG_BLOCK, 0, stream>>>(*a, dir, nlines);
    return cudaGetLastError();
}

template <int K, int G>
static cudaError_t launch_kg(const sgm_args *a, int dir, int mode, cudaStream_t stream)
{
    switch (mode) {
    case MODE_STORE: return launch_kgm<K, G, MODE_STORE, 1>(a, dir, stream);
    case MODE_ADD: return launch_kgm<K, G, MODE_ADD, 1>(a, dir, stream);
    default:
        return a->branches == 4 ? launch_kgm<K, G, MODE_FINAL, 4>(a, dir, stream)
                                : launch_kgm<K, G, MODE_FINAL, 2>(a, dir, stream);
    }
}

static cudaError_t launch_dir(const sgm_args *a, int dir, int mode, cudaStream_t stream)
{
    /* 8 disparities per lane where the group size comes out a power of two (D = 64, 128, 256),
     * else 8 lanes with K = D / 8 (even for every multiple of 16) */
    switch (a->ndisp) {
    case 16: return launch_kg<2, 8>(a, dir, mode, stream);
    case 32: return launch_kg<4, 8>(a, dir, mode, stream);
    case 48: return launch_kg<6, 8>(a, dir, mode, stream);
    case 64: return launch_kg<8, 8>(a, dir, mode, stream);
    case 80: return launch_kg<10, 8>(a, dir, mode, stream);
    case 96: return launch_kg<12, 8>(a, dir, mode, stream);
    case 112: return launch_kg<14, 8>(a, dir, mode, stream);
    case 128: return launch_kg<8, 16>(a, dir, mode, stream);
    case 144: return launch_kg<18, 8>(a, dir, mode, stream);
    case 160: return launch_kg<10, 16>(a, dir, mode, stream);
    case 176: return launch_kg<22, 8>(a, dir, mode, stream);
    case 192: return launch_kg<12, 16>(a, dir, mode, stream);
    case 208: return launch_kg<26, 8>(a, dir, mode, stream);
    case 224: return launch_kg<14, 16>(a, dir, mode, stream);
    case 240: return launch_kg<30, 8>(a, dir, mode, stream);
    case 256: return launch_kg<8, 32>(a, dir, mode, stream);
    }
    return cudaErrorInvalidValue;
}

cudaError_t launch_sgm(const sgm_args *a, int paths, cudaStream_t *streams, cudaEvent_t fork,
                       cudaEvent_t *join)
{
    /* Directions 0, 2, 3, ..., paths-1 are spread round-robin over the branches (2 or 4); each
     * branch's first direction stores, its others add. All branches run at the same time;
     * direction 1 (launch_sgm_final) then adds every branch's partial sum and finishes (see the
     * top of this file).
     * With 4 paths and 4 branches the fourth branch stays empty: it gets a zero volume. */
    static const int order[7] = {0, 2, 3, 4, 5, 6, 7};
    int nb = a->branches;
    cudaError_t e = cudaEventRecord(fork, streams[0]);
    for (int b = 1; b < nb && e == cudaSuccess; b++)
        e = cudaStreamWaitEvent(streams[b], fork, 0);
    for (int b = paths - 1; b < nb && e == cudaSuccess; b++) /* branches without a direction */
        e = cudaMemsetAsync(a->S[b], 0, (size_t)a->width * a->height * a->ndisp * 2, streams[b]);
    for (int i = 0; i < paths - 1 && e == cudaSuccess; i++) {
        int b = i % nb;
        sgm_args one = *a;
        one.S[0] = a->S[b];
        e = launch_dir(&one, order[i], i < nb ? MODE_STORE : MODE_ADD, streams[b]);
    }
    for (int b = 1; b < nb && e == cudaSuccess; b++) {
        e = cudaEventRecord(join[b], streams[b]);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(streams[0], join[b], 0);
    }
    return e;
}

cudaError_t launch_sgm_final(const sgm_args *a, cudaStream_t stream)
{
    return launch_dir(a, 1, MODE_FINAL, stream);
}
