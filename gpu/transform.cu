/* SPDX-License-Identifier: Apache-2.0 */
/* transform.cu — stage 3 on the GPU (transform.h): rank and census with clamped borders.
 *
 * A block loads its tile plus the window's apron into shared memory once (clamping coordinates
 * as the border rule says), then each thread compares its window there. */
#include "launch.cuh"
#include "stereo_math.h"
#include "transform.h"

#define TILE_W 32
#define TILE_H 8

static __device__ __forceinline__ int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Fills tile[(TILE_H + 2 ry)][(TILE_W + 2 rx)] for the block, clamped. */
static __device__ void load_tile(const uint8_t *img, int w, int h, int rx, int ry, uint8_t *tile)
{
    int tw = TILE_W + 2 * rx, th = TILE_H + 2 * ry;
    int x0 = blockIdx.x * TILE_W - rx, y0 = blockIdx.y * TILE_H - ry;
    for (int i = threadIdx.y * TILE_W + threadIdx.x; i < tw * th; i += TILE_W * TILE_H) {
        int tx = i % tw, ty = i / tw;
        tile[i] = img[(size_t)clampi(y0 + ty, 0, h - 1) * w + clampi(x0 + tx, 0, w - 1)];
    }
    __syncthreads();
}

/* RADIUS: the window's radius (1..7), a template parameter so that the window's loops unroll
 * into shared-memory loads at constant offsets (the run-time loops of a generic kernel cost
 * twice the time at 1280x960, docs/cuda-notes.md). */
template <int RADIUS>
static __global__ void k_rank(const uint8_t *img, int w, int h, uint8_t *out)
{
    constexpr int tw = TILE_W + 2 * RADIUS;
    __shared__ uint8_t tile[(TILE_H + 2 * RADIUS) * tw];
    load_tile(img, w, h, RADIUS, RADIUS, tile);
    int x = blockIdx.x * TILE_W + threadIdx.x, y = blockIdx.y * TILE_H + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const uint8_t *centre = tile + (threadIdx.y + RADIUS) * tw + threadIdx.x + RADIUS;
    int c = *centre, n = 0;
#pragma unroll
    for (int j = -RADIUS; j <= RADIUS; j++)
#pragma unroll
        for (int i = -RADIUS; i <= RADIUS; i++)
            n += centre[j * tw + i] < c;
    out[(size_t)y * w + x] = (uint8_t)n;
}

static __global__ void k_census(const uint8_t *img, int w, int h, uint64_t *out)
{
    const int rx = CENSUS_WIDTH / 2, ry = CENSUS_HEIGHT / 2, tw = TILE_W + 2 * rx;
    __shared__ uint8_t tile[(TILE_H + 2 * ry) * (TILE_W + 2 * rx)];
    load_tile(img, w, h, rx, ry, tile);
    int x = blockIdx.x * TILE_W + threadIdx.x, y = blockIdx.y * TILE_H + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const uint8_t *centre = tile + (threadIdx.y + ry) * tw + threadIdx.x + rx;
    const int c = *centre;
    /* raster order, first pixel most significant: the first CENSUS_BITS - 32 bits in hi, the
     * last 32 in lo (32-bit shifts: the 64-bit shift of a running word costs twice the
     * instructions); the sign bit of v - c is 1 exactly when v < c */
    constexpr int HI_BITS = CENSUS_BITS - 32;
    uint32_t hi = 0, lo = 0;
    int n = 0;
#pragma unroll
    for (int j = -ry; j <= ry; j++)
#pragma unroll
        for (int i = -rx; i <= rx; i++)
            if (i || j) {
                const uint32_t d = (uint32_t)((int)centre[j * tw + i] - c);
                if (n++ < HI_BITS) /* acc << 1 | d >> 31 in one funnel shift */
                    hi = __funnelshift_l(d, hi, 1);
                else
                    lo = __funnelshift_l(d, lo, 1);
            }
    out[(size_t)y * w + x] = (uint64_t)hi << 32 | lo;
}

cudaError_t launch_rank(const uint8_t *grey, int w, int h, int window, uint8_t *out,
                        cudaStream_t stream)
{
    dim3 block(TILE_W, TILE_H), grid((w + TILE_W - 1) / TILE_W, (h + TILE_H - 1) / TILE_H);
    switch (window / 2) { /* odd windows 3..15 (transform.h) */
    case 1: k_rank<1><<<grid, block, 0, stream>>>(grey, w, h, out); break;
    case 2: k_rank<2><<<grid, block, 0, stream>>>(grey, w, h, out); break;
    case 3: k_rank<3><<<grid, block, 0, stream>>>(grey, w, h, out); break;
    case 4: k_rank<4><<<grid, block, 0, stream>>>(grey, w, h, out); break;
    case 5: k_rank<5><<<grid, block, 0, stream>>>(grey, w, h, out); break;
    case 6: k_rank<6><<<grid, block, 0, stream>>>(grey, w, h, out); break;
    case 7: k_rank<7><<<grid, block, 0, stream>>>(grey, w, h, out); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t launch_census(const uint8_t *grey, int w, int h, uint64_t *out, cudaStream_t stream)
{
    dim3 block(TILE_W, TILE_H), grid((w + TILE_W - 1) / TILE_W, (h + TILE_H - 1) / TILE_H);
    k_census<<<grid, block, 0, stream>>>(grey, w, h, out);
    return cudaGetLastError();
}

/* The bt cost's per-pixel words (sgm.h, launch.cuh): I | lo << 8 | hi << 16 with [lo, hi] =
 * stereo_bt_range of the pixel and its row neighbours, a missing one at the border replaced by
 * the pixel itself (as sgm.c's bt_row_range). */
static __global__ void k_bt_words(const uint8_t *img, int w, int h, uint64_t *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w)
        return;
    const uint8_t *row = img + (size_t)y * w;
    int v = row[x], lo, hi;
    stereo_bt_range(row[x > 0 ? x - 1 : x], v, row[x + 1 < w ? x + 1 : x], &lo, &hi);
    out[(size_t)y * w + x] = (uint64_t)(v | lo << 8 | hi << 16);
}

cudaError_t launch_bt_words(const uint8_t *grey, int w, int h, uint64_t *out, cudaStream_t stream)
{
    dim3 block(128), grid((w + 127) / 128, h);
    k_bt_words<<<grid, block, 0, stream>>>(grey, w, h, out);
    return cudaGetLastError();
}

/* Cost adcensus's grey mapping (stereo_grey_match_lut): the two views' 256-bin histograms
 * (counts in shared memory, then one atomicAdd per bin and block; integer sums, so the order
 * does not matter) */
static __global__ void k_grey_histograms(const uint8_t *__restrict__ left,
                                         const uint8_t *__restrict__ right, size_t n,
                                         uint32_t *__restrict__ hist)
{
    __shared__ uint32_t h[512];
    for (int i = threadIdx.x; i < 512; i += blockDim.x)
        h[i] = 0;
    __syncthreads();
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        atomicAdd(&h[__ldg(left + i)], 1u);
        atomicAdd(&h[256 + __ldg(right + i)], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 512; i += blockDim.x)
        if (h[i])
            atomicAdd(&hist[i], h[i]);
}

/* The mapping from the histograms, stereo_grey_match_lut's rule with a thread per level: both
 * cumulative counts by a scan in shared memory, then each level k's lut[k], the smallest i with
 * 2 CL(i) >= CR(k - 1) + CR(k) (255 if none), by a binary search over CL. The reference walks i
 * up from the previous level's answer; the targets only grow with k, so the smallest i for
 * each is that walk's result. One thread doing the 512 steps took 46 us a frame (ncu, 16 SMs),
 * 2 % of a 640x480 frame. */
#define LUT_THREADS 256
static __global__ void __launch_bounds__(LUT_THREADS)
    k_grey_match_lut(const uint32_t *__restrict__ hist, uint8_t *__restrict__ lut)
{
    __shared__ unsigned long long cl[256], cr[256];
    const int t = threadIdx.x;
    cl[t] = hist[t];
    cr[t] = hist[256 + t];
    __syncthreads();
    for (int off = 1; off < 256; off <<= 1) { /* inclusive scans */
        const unsigned long long a = t >= off ? cl[t - off] : 0, b = t >= off ? cr[t - off] : 0;
        __syncthreads();
        cl[t] += a;
        cr[t] += b;
        __syncthreads();
    }
    const unsigned long long target = (t ? cr[t - 1] : 0) + cr[t];
    int lo = 0, hi = 255;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (2 * cl[mid] >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    lut[t] = (uint8_t)lo;
}

cudaError_t launch_grey_match(const uint8_t *left, const uint8_t *right, size_t n, int sms,
                              uint32_t *hist, uint8_t *lut, cudaStream_t stream)
{
    if (!left || !right || !hist || !lut || n == 0)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(hist, 0, 512 * sizeof(uint32_t), stream);
    if (e != cudaSuccess)
        return e;
    const size_t want = (n + 255) / 256, cap = (size_t)(sms > 0 ? sms : 1) * 4;
    k_grey_histograms<<<(unsigned)(want < cap ? want : cap), 256, 0, stream>>>(left, right, n, hist);
    k_grey_match_lut<<<1, LUT_THREADS, 0, stream>>>(hist, lut);
    return cudaGetLastError();
}
