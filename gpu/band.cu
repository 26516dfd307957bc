/* SPDX-License-Identifier: Apache-2.0 */
/* band.cu — the coarse-to-fine mode on the GPU (band.h), bit for bit as the CPU reference
 * (band.c):
 *   k_band_half   step 1's half-size pair (the coarse level then runs on a stage of its own)
 *   k_band_start  step 2, one thread per pixel
 *   k_band_cost   step 3's costs, one thread per (pixel, j), through pair_cost.cuh
 *   k_band_walk   step 3's recurrence: one warp per line of one direction (every direction in
 *                 one launch), lane l holding j = t * 32 + l of the band; the previous pixel's L
 *                 goes through shared memory, since its band may start elsewhere
 *   k_band_wta    step 4's sum and winner-takes-all, one warp per pixel
 *   k_band_right  step 4's right disparity, one thread per right pixel
 */
#include "launch.cuh"
#include "pair_cost.cuh"
#include "stereo_math.h"

#define BAND_BLOCK 128 /* 4 warps */
#define BAND_WARPS (BAND_BLOCK / 32)

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
                                    int h, int dmin, int D, int W, uint16_t *__restrict__ start)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w)
        return;
    const int R = 2; /* BAND_WINDOW_RADIUS (band.h) */
    const int cx = x >> 1, cy = y >> 1;
    const int v = coarse[(size_t)cy * w1 + cx];
    int c;
    if (v >= 0) {
        c = ((v + 4) >> 3) - dmin;
    } else {
        int m = 0x7fff, M = -1;
        for (int j = clampi(cy - R, 0, h1 - 1); j <= clampi(cy + R, 0, h1 - 1); j++)
            for (int i = clampi(cx - R, 0, w1 - 1); i <= clampi(cx + R, 0, w1 - 1); i++) {
                const int u = coarse[(size_t)j * w1 + i];
                if (u >= 0) {
                    m = min(m, u);
                    M = max(M, u);
                }
            }
        c = M >= 0 ? ((m + M + 8) >> 4) - dmin : D / 2;
    }
    start[(size_t)y * w + x] = (uint16_t)clampi(c - W / 2, 0, D - W);
}

cudaError_t launch_band_start(const sgm_args *a, const band_args *b, const int16_t *coarse,
                              int w1, int h1, cudaStream_t stream)
{
    dim3 grid((unsigned)((a->width + 127) / 128), (unsigned)a->height);
    k_band_start<<<grid, 128, 0, stream>>>(coarse, w1, h1, a->width, a->height, a->dmin,
                                           a->ndisp, b->W, b->start);
    return cudaGetLastError();
}

template <int KIND>
static __global__ void k_band_cost(const sgm_args a, const band_args b)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n = (size_t)a.width * a.height;
    if (i >= n * b.W)
        return;
    const size_t p = i / b.W;
    const int j = (int)(i % b.W), x = (int)(p % a.width);
    b.cost[i] = (uint8_t)pair_cost<KIND>(a, p - x, x, b.start[p] + j);
}

cudaError_t launch_band_cost(const sgm_args *a, int cost_kind, const band_args *b,
                             cudaStream_t stream)
{
    const size_t total = (size_t)a->width * a->height * b->W;
    const unsigned blocks = (unsigned)((total + 255) / 256);
    switch (cost_kind) {
    case 0: k_band_cost<0><<<blocks, 256, 0, stream>>>(*a, *b); break;
    case 1: k_band_cost<1><<<blocks, 256, 0, stream>>>(*a, *b); break;
    case 2: k_band_cost<2><<<blocks, 256, 0, stream>>>(*a, *b); break;
    case 3: k_band_cost<3><<<blocks, 256, 0, stream>>>(*a, *b); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

static __device__ __forceinline__ int warp_min(int v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* One line of direction blockIdx.y per warp. K = W / 32 values per lane; T the volume's type. */
template <int K, typename T>
static __global__ void __launch_bounds__(BAND_BLOCK) k_band_walk(const sgm_args a, const band_args b)
{
    constexpr int W = 32 * K;
    __shared__ uint16_t prev_s[BAND_WARPS][W];
    const int dir = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int w = a.width, h = a.height;
    const int line = blockIdx.x * BAND_WARPS + warp;
    if (line >= stereo_sgm_line_count(dir, w, h))
        return; /* the whole warp */
    int x, y, dx, dy;
    stereo_sgm_line_start(dir, line, w, h, &x, &y);
    stereo_sgm_direction(dir, &dx, &dy);
    const int p1 = a.dir_p1[dir], p2 = a.dir_p2[dir];
    T *L = (T *)b.L + (size_t)dir * w * h * W;
    uint16_t *ps = prev_s[warp];
    size_t p = (size_t)y * w + x;
    int cur[K], s_prev = b.start[p], g_prev = a.grey[p];
#pragma unroll
    for (int t = 0; t < K; t++)
        cur[t] = b.cost[p * W + t * 32 + lane];
    for (;;) {
        int m = cur[0];
#pragma unroll
        for (int t = 0; t < K; t++) {
            L[p * W + t * 32 + lane] = (T)cur[t];
            ps[t * 32 + lane] = (uint16_t)cur[t];
            m = min(m, cur[t]);
        }
        const int min_prev = warp_min(m);
        x += dx, y += dy;
        if (x < 0 || x >= w || y < 0 || y >= h)
            break;
        p = (size_t)y * w + x;
        const int s = b.start[p], g = a.grey[p];
        const int shift = s - s_prev;
        const int jump = min_prev + stereo_p2_adaptive(p1, p2, a.p2_adapt, g - g_prev);
        __syncwarp();
#pragma unroll
        for (int t = 0; t < K; t++) {
            const int i = t * 32 + lane + shift; /* the same k in the previous band */
            const int at = i >= 0 && i < W ? ps[i] : STEREO_SGM_FAR;
            const int below = i - 1 >= 0 && i - 1 < W ? ps[i - 1] : STEREO_SGM_FAR;
            const int above = i + 1 >= 0 && i + 1 < W ? ps[i + 1] : STEREO_SGM_FAR;
            cur[t] = stereo_sgm_step(b.cost[p * W + t * 32 + lane], at, below, above, p1, jump,
                                     min_prev);
        }
        __syncwarp();
        s_prev = s, g_prev = g;
    }
}

cudaError_t launch_band_walk(const sgm_args *a, int paths, const band_args *b,
                             cudaStream_t stream)
{
    const int lines = a->width + a->height - 1; /* the most of any direction */
    dim3 grid((unsigned)((lines + BAND_WARPS - 1) / BAND_WARPS), (unsigned)paths);
    if (b->W == 32 && b->bytes)
        k_band_walk<1, uint8_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else if (b->W == 32)
        k_band_walk<1, uint16_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else if (b->W == 64 && b->bytes)
        k_band_walk<2, uint8_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else if (b->W == 64)
        k_band_walk<2, uint16_t><<<grid, BAND_BLOCK, 0, stream>>>(*a, *b);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

/* One pixel per warp: S(p, j) into b.S, then disparity.h's rule over the band. */
template <int K, typename T>
static __global__ void __launch_bounds__(BAND_BLOCK) k_band_wta(const sgm_args a, const band_args b,
                                                                int paths)
{
    constexpr int W = 32 * K;
    __shared__ uint16_t sum_s[BAND_WARPS][W];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const size_t n = (size_t)a.width * a.height;
    const size_t p = (size_t)blockIdx.x * BAND_WARPS + warp;
    if (p >= n)
        return;
    const T *L = (const T *)b.L;
    uint16_t *ss = sum_s[warp];
    int key = 0x7fffffff; /* S << 8 | j: the smallest S, ties to the smaller j */
#pragma unroll
    for (int t = 0; t < K; t++) {
        const int j = t * 32 + lane;
        uint32_t v = 0;
        for (int r = 0; r < paths; r++)
            v += (uint32_t)a.dir_weight[r] * L[(size_t)r * n * W + p * W + j];
        b.S[p * W + j] = (uint16_t)v;
        ss[j] = (uint16_t)v;
        key = min(key, (int)(v << 8 | (uint32_t)j));
    }
    key = warp_min(key);
    const int best = key & 255;
    const uint32_t s1 = (uint32_t)key >> 8;
    int s2 = 0x7fffffff;
#pragma unroll
    for (int t = 0; t < K; t++) {
        const int j = t * 32 + lane;
        if (j < best - 1 || j > best + 1)
            s2 = min(s2, (int)ss[j]);
    }
    s2 = warp_min(s2);
    __syncwarp();
    if (lane != 0)
        return;
    const int x = (int)(p % a.width), s = b.start[p];
    const int ok = x >= a.dmin + s && (!a.valid || a.valid[p]) &&
                   (a.uniqueness == 0 || stereo_unique(s1, (uint32_t)s2, a.uniqueness));
    int v = STEREO_SUBPIXEL_SCALE * (a.dmin + s + best);
    if (a.subpixel && best > 0 && best < W - 1)
        v += stereo_subpixel_offset((int)ss[best - 1], (int)s1, (int)ss[best + 1]);
    a.disp[p] = ok ? (int16_t)v : STEREO_INVALID;
    if (a.conf)
        a.conf[p] = ok ? stereo_confidence_value(s1, (uint32_t)s2) : 0;
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
    const unsigned blocks = (unsigned)((n + BAND_WARPS - 1) / BAND_WARPS);
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
