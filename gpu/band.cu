/* SPDX-License-Identifier: Apache-2.0 */
/* band.cu — the coarse-to-fine mode on the GPU (band.h), bit for bit as the CPU reference
 * (band.c):
 *   k_band_half   step 1's half-size pair (the coarse level then runs on a stage of its own)
 *   k_band_start  step 2, one thread per pixel
 *   k_band_cost   step 3's costs, one thread per (pixel, j), through pair_cost.cuh
 *   k_band_walk   step 3's recurrence: 16 or 32 lanes per line of one direction (every
 *                 direction in one launch), two values of the band on each lane; the previous
 *                 pixel's L goes through shared memory, since its band may start elsewhere
 *   k_band_wta    step 4's sum and winner-takes-all, one thread per pixel
 *   k_band_right  step 4's right disparity, one thread per right pixel
 */
#include "band.h"
#include "launch.cuh"
#include "pair_cost.cuh"
#include "stereo_math.h"

#define BAND_BLOCK 128 /* 4 warps */

static __global__ void k_band_half(const uint8_t *__restrict__ grey, int w, int h,
                                   uint8_t *__restrict__ half, int w1, int h1)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w1)
        return;
    const int x0 = 2 * x, y0 = 2 * y, x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1);
    const int sum = grey[(size_t)y0 * w + x0] + grey[(size_t)y0 * w + x1] +
                    grey[(size_t)y1 * w + x0] + grey[(size_t)y1 * w + x1];
    half[(size_t)y * w1 + x] = (uint8_t)((sum + 2) >> 2);
}

cudaError_t launch_band_half(const uint8_t *grey, int w, int h, uint8_t *half, int w1, int h1,
                             cudaStream_t stream)
{
    dim3 grid((unsigned)((w1 + 127) / 128), (unsigned)h1);
    k_band_half<<<grid, 128, 0, stream>>>(grey, w, h, half, w1, h1);
    return cudaGetLastError();
}

static __global__ void k_band_start(const int16_t *__restrict__ coarse, int w1, int h1, int w,
                                    int dmin, int D, int W, uint16_t *__restrict__ start)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w)
        start[(size_t)y * w + x] = (uint16_t)stereo_band_start(coarse, w1, h1, x, y,
                                                               BAND_WINDOW_RADIUS, dmin, D, W);
}

cudaError_t launch_band_start(const sgm_args *a, const band_args *b, const int16_t *coarse,
                              int w1, int h1, cudaStream_t stream)
{
    dim3 grid((unsigned)((a->width + 127) / 128), (unsigned)a->height);
    k_band_start<<<grid, 128, 0, stream>>>(coarse, w1, h1, a->width, a->dmin, a->ndisp, b->W,
                                           b->start);
    return cudaGetLastError();
}

/* Row blockIdx.y, (x, j) = i / W, i % W (W a power of two) */
template <int KIND>
static __global__ void k_band_cost(const sgm_args a, const band_args b, int log2w)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (i >= a.width << log2w)
        return;
    const size_t row = (size_t)y * a.width;
    const int x = i >> log2w, j = i & (b.W - 1);
    b.cost[(row << log2w) + i] = (uint8_t)pair_cost<KIND>(a, row, x, b.start[row + x] + j);
}

cudaError_t launch_band_cost(const sgm_args *a, int cost_kind, const band_args *b,
                             cudaStream_t stream)
{
    if (b->W != 32 && b->W != 64)
        return cudaErrorInvalidValue;
    const int log2w = b->W == 32 ? 5 : 6;
    dim3 grid((unsigned)(((a->width << log2w) + 255) / 256), (unsigned)a->height);
    switch (cost_kind) {
    case 0: k_band_cost<0><<<grid, 256, 0, stream>>>(*a, *b, log2w); break;
    case 1: k_band_cost<1><<<grid, 256, 0, stream>>>(*a, *b, log2w); break;
    case 2: k_band_cost<2><<<grid, 256, 0, stream>>>(*a, *b, log2w); break;
    case 3: k_band_cost<3><<<grid, 256, 0, stream>>>(*a, *b, log2w); break;
    case COST_KIND_ADCENSUS:
        k_band_cost<COST_KIND_ADCENSUS><<<grid, 256, 0, stream>>>(*a, *b, log2w);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

/* The minimum over the LANES lanes of a line (a whole warp, or a half with its mask): one
 * instruction on sm_80 and later for a whole warp. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define BAND_REDUX 1
#else
#define BAND_REDUX 0
#endif
template <int LANES>
static __device__ __forceinline__ int line_min(int v, unsigned mask)
{
#if BAND_REDUX
    if (LANES == 32)
        v = (int)__reduce_min_sync(mask, (unsigned)v);
#endif
    for (int o = BAND_REDUX && LANES == 32 ? 0 : LANES / 2; o > 0; o >>= 1)
        v = min(v, __shfl_xor_sync(mask, v, o));
    return v;
}

/* One line of direction blockIdx.y per LANES lanes (32: a warp, 16: half a warp, two lines a
 * warp), K values per lane: j = t * LANES + lane, W = LANES * K; T the volume's type. The
 * previous pixel's L sits in shared memory at [GUARD, GUARD + W), with STEREO_SGM_FAR in the
 * guards on both sides: a band shift clamped to +-(W + 1) reads FAR wherever band.h says the
 * previous L is absent, without a test. P2' comes from a table of |dI| (the block's direction).
 * The next pixel's cost, band start and grey value are loaded before this pixel's minimum. */
template <int LANES, int K, typename T>
static __global__ void __launch_bounds__(BAND_BLOCK) k_band_walk(const sgm_args a, const band_args b)
{
    constexpr int W = LANES * K, GUARD = W + 2, LINES = BAND_BLOCK / LANES;
    __shared__ uint16_t prev_s[LINES][GUARD + W + GUARD];
    __shared__ int jump_s[256];
    const int dir = blockIdx.y, sub = threadIdx.x / LANES, lane = threadIdx.x % LANES;
    const unsigned mask = LANES == 32 ? 0xffffffffu : 0xffffu << (threadIdx.x & 16);
    const int w = a.width, h = a.height;
    const int p1 = a.dir_p1[dir], p2 = a.dir_p2[dir];
    for (int i = threadIdx.x; i < 256; i += BAND_BLOCK)
        jump_s[i] = stereo_p2_adaptive(p1, p2, a.p2_adapt, i);
    uint16_t *ps = prev_s[sub];
    for (int i = lane; i < GUARD + W + GUARD; i += LANES)
        ps[i] = STEREO_SGM_FAR;
    __syncthreads();
    const int line = blockIdx.x * LINES + sub;
    if (line >= stereo_sgm_line_count(dir, w, h))
        return; /* the whole line's lanes */
    int x, y, dx, dy;
    stereo_sgm_line_start(dir, line, w, h, &x, &y);
    stereo_sgm_direction(dir, &dx, &dy);
    const int steps = dx == 0 ? h : dy == 0 ? w
                                  : min(dx > 0 ? w - x : x + 1, dy > 0 ? h - y : y + 1);
    const ptrdiff_t ds = (ptrdiff_t)dy * w + dx;
    const size_t p0 = (size_t)y * w + x;
    const uint8_t *cp = b.cost + p0 * W + lane;
    T *lp = (T *)b.L + (size_t)dir * w * h * W + p0 * W + lane;
    const uint16_t *sp = b.start + p0;
    const uint8_t *gp = a.grey + p0;
    int cur[K], s_prev = *sp, g_prev = *gp;
#pragma unroll
    for (int t = 0; t < K; t++)
        cur[t] = cp[t * LANES];
    for (int n = 1;; n++) {
        int next[K], s = 0, g = 0;
        if (n < steps) { /* the next pixel's inputs, before this one's minimum */
            cp += ds * W, sp += ds, gp += ds;
#pragma unroll
            for (int t = 0; t < K; t++)
                next[t] = cp[t * LANES];
            s = *sp, g = *gp;
        }
        int m = cur[0];
#pragma unroll
        for (int t = 0; t < K; t++) {
            lp[t * LANES] = (T)cur[t];
            ps[GUARD + t * LANES + lane] = (uint16_t)cur[t];
            m = min(m, cur[t]);
        }
        if (n == steps)
            break;
        lp += ds * W;
        const int min_prev = line_min<LANES>(m, mask);
        const int shift = max(-W - 1, min(W + 1, s - s_prev));
        const int jump = min_prev + jump_s[abs(g - g_prev)];
        __syncwarp(mask);
#pragma unroll
        for (int t = 0; t < K; t++) {
            const uint16_t *q = ps + GUARD + t * LANES + lane + shift; /* the same k before */
            cur[t] = stereo_sgm_step(next[t], q[0], q[-1], q[1], p1, jump, min_prev);
        }
        __syncwarp(mask);
        s_prev = s, g_prev = g;
    }
}

cudaError_t launch_band_walk(const sgm_args *a, int paths, const band_args *b,
                             cudaStream_t stream)
{
    const int lines = a->width + a->height - 1; /* the most of any direction */
    /* W = 32 as two values on each of 16 lanes (two lines a warp), 64 on 32 lanes */
    const int per_block = BAND_BLOCK / (b->W == 32 ? 16 : 32);
    dim3 grid((unsigned)((lines + per_block - 1) / per_block), (unsigned)paths);
    if (b->W == 32 && b->bytes)
        k_band_walk<16, 2, uint8_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else if (b->W == 32)
        k_band_walk<16, 2, uint16_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else if (b->W == 64 && b->bytes)
        k_band_walk<32, 2, uint8_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else if (b->W == 64)
        k_band_walk<32, 2, uint16_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

/* The W values of a pixel's band in one volume, 16 bytes at a time (p * W * sizeof(T) is a
 * multiple of 16). */
template <int W, typename T>
static __device__ __forceinline__ void add_band(const T *src, int weight, uint32_t (&S)[W])
{
    constexpr int PER = 16 / (int)sizeof(T); /* values per 16-byte load */
#pragma unroll
    for (int c = 0; c < W / PER; c++) {
        const uint4 v = __ldg((const uint4 *)src + c);
        const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < PER; i++) {
            const uint32_t e = sizeof(T) == 1 ? words[i / 4] >> (8 * (i % 4)) & 255u
                                              : words[i / 2] >> (16 * (i % 2)) & 65535u;
            S[c * PER + i] += (uint32_t)weight * e;
        }
    }
}

/* One pixel per thread: S(p, j) into b.S, then disparity.h's rule over the band. */
template <int K, typename T>
static __global__ void __launch_bounds__(BAND_BLOCK) k_band_wta(const sgm_args a, const band_args b,
                                                                int paths)
{
    constexpr int W = 32 * K;
    const size_t n = (size_t)a.width * a.height;
    const size_t p = (size_t)blockIdx.x * BAND_BLOCK + threadIdx.x;
    if (p >= n)
        return;
    uint32_t S[W];
#pragma unroll
    for (int j = 0; j < W; j++)
        S[j] = 0;
    for (int r = 0; r < paths; r++)
        add_band<W, T>((const T *)b.L + (size_t)r * n * W + p * W, a.dir_weight[r], S);
    uint4 *out = (uint4 *)(b.S + p * W);
#pragma unroll
    for (int c = 0; c < W / 8; c++)
        out[c] = make_uint4(S[8 * c] | S[8 * c + 1] << 16, S[8 * c + 2] | S[8 * c + 3] << 16,
                            S[8 * c + 4] | S[8 * c + 5] << 16, S[8 * c + 6] | S[8 * c + 7] << 16);
    int best = 0;
    uint32_t s1 = S[0];
#pragma unroll
    for (int j = 1; j < W; j++)
        if (S[j] < s1)
            s1 = S[j], best = j;
    uint32_t s2 = 0xffffffffu, sm1 = 0, sp1 = 0;
#pragma unroll
    for (int j = 0; j < W; j++) {
        if (j < best - 1 || j > best + 1)
            s2 = min(s2, S[j]);
        sm1 = j == best - 1 ? S[j] : sm1;
        sp1 = j == best + 1 ? S[j] : sp1;
    }
    const int x = (int)(p % a.width), s = b.start[p];
    const int ok = x >= a.dmin + s && (!a.valid || a.valid[p]) &&
                   (a.uniqueness == 0 || stereo_unique(s1, s2, a.uniqueness));
    int v = STEREO_SUBPIXEL_SCALE * (a.dmin + s + best);
    if (a.subpixel && best > 0 && best < W - 1)
        v += stereo_subpixel_offset((int)sm1, (int)s1, (int)sp1);
    a.disp[p] = ok ? (int16_t)v : STEREO_INVALID;
    if (a.conf)
        a.conf[p] = ok ? stereo_confidence_value(s1, s2) : 0;
}

static __global__ void k_band_right(const sgm_args a, const band_args b)
{
    const int xr = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    const int w = a.width, W = b.W;
    if (xr >= w)
        return;
    const size_t p = (size_t)y * w + xr;
    int best = -1;
    uint32_t s1 = 0xffffffffu;
    for (int k = 0; k < a.ndisp && xr + a.dmin + k < w; k++) {
        const size_t q = p + (size_t)(a.dmin + k);
        const int j = k - b.start[q];
        if (j < 0 || j >= W)
            continue;
        const uint32_t v = b.S[q * W + j];
        if (v < s1) {
            s1 = v;
            best = k;
        }
    }
    a.disp_right[p] = best < 0 || (a.valid_right && !a.valid_right[p])
                          ? STEREO_INVALID
                          : (int16_t)(STEREO_SUBPIXEL_SCALE * (a.dmin + best));
}

cudaError_t launch_band_wta(const sgm_args *a, int paths, const band_args *b, cudaStream_t stream)
{
    const size_t n = (size_t)a->width * a->height;
    const unsigned blocks = (unsigned)((n + BAND_BLOCK - 1) / BAND_BLOCK);
    if (b->W == 32 && b->bytes)
        k_band_wta<1, uint8_t><<<blocks, BAND_BLOCK, 0, stream>>>(*a, *b, paths);
    else if (b->W == 32)
        k_band_wta<1, uint16_t><<<blocks, BAND_BLOCK, 0, stream>>>(*a, *b, paths);
    else if (b->W == 64 && b->bytes)
        k_band_wta<2, uint8_t><<<blocks, BAND_BLOCK, 0, stream>>>(*a, *b, paths);
    else if (b->W == 64)
        k_band_wta<2, uint16_t><<<blocks, BAND_BLOCK, 0, stream>>>(*a, *b, paths);
    else
        return cudaErrorInvalidValue;
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || !a->disp_right)
        return e;
    dim3 grid((unsigned)((a->width + 127) / 128), (unsigned)a->height);
    k_band_right<<<grid, 128, 0, stream>>>(*a, *b);
    return cudaGetLastError();
}
