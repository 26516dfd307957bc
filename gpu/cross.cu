/* SPDX-License-Identifier: Apache-2.0 */
/* cross.cu — cross-based cost aggregation (4b) and depth-discontinuity adjustment (8b) on the
 * GPU, bit for bit cross.c's (cross.h has the rules).
 *
 * 4b: each pixel's arms (a thread a pixel); then H, the sums over each pixel's row segment
 * (a thread per pixel and 4 disparities: 4 bytes read per pixel of the segment, 8 written); then
 * the region's sums of H down p's column, divided by the region's size (8 bytes read per row,
 * 4 written back into the cost volume, which H no longer needs). The neighbours' loads of one
 * pixel's segment or column are the same lines for the pixels around it, so they mostly hit
 * the caches.
 * 8b: a thread a pixel, three cost bytes read at the edge pixels only.
 */
#include "cross.h"

#define CROSS_BLOCK 256

static unsigned blocks(size_t n) { return (unsigned)((n + CROSS_BLOCK - 1) / CROSS_BLOCK); }

static __global__ void k_cross_arms(const uint8_t *__restrict__ grey, int w, int h, int cap,
                                    uint32_t *__restrict__ arms)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)w * h)
        arms[i] = cross_arms(grey, w, h, (int)(i % w), (int)(i / w), cap);
}

/* a thread per pixel i and disparities 4 k4 .. 4 k4 + 3 (D4 = D / 4 of them per pixel) */
static __global__ void k_cross_hsum(const uint8_t *__restrict__ cost,
                                    const uint32_t *__restrict__ arms, size_t n, int D4,
                                    uint16_t *__restrict__ H)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n * D4)
        return;
    const size_t i = t / D4;
    const uint32_t a = arms[i];
    const uchar4 *c = (const uchar4 *)cost + t - (size_t)cross_left(a) * D4;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int q = 0; q <= cross_left(a) + cross_right(a); q++, c += D4) {
        const uchar4 v = __ldg(c);
        s0 += v.x, s1 += v.y, s2 += v.z, s3 += v.w;
    }
    ((ushort4 *)H)[t] = make_ushort4((uint16_t)s0, (uint16_t)s1, (uint16_t)s2, (uint16_t)s3);
}

static __global__ void k_cross_vsum(const uint16_t *__restrict__ H,
                                    const uint32_t *__restrict__ arms, int w, size_t n, int D4,
                                    uint8_t *__restrict__ cost)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n * D4)
        return;
    const size_t i = t / D4;
    const uint32_t a = arms[i];
    const size_t top = i - (size_t)cross_up(a) * w;
    const int rows = cross_up(a) + cross_down(a) + 1;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, cnt = 0;
    for (int r = 0; r < rows; r++) {
        const size_t q = top + (size_t)r * w;
        const uint32_t aq = __ldg(arms + q);
        cnt += (uint32_t)(cross_left(aq) + cross_right(aq) + 1);
        const ushort4 v = __ldg((const ushort4 *)H + q * D4 + (t - i * D4));
        s0 += v.x, s1 += v.y, s2 += v.z, s3 += v.w;
    }
    const float inv = __frcp_rn((float)cnt); /* 1.0f / cnt, correctly rounded as the CPU's */
    ((uchar4 *)cost)[t] = make_uchar4((uint8_t)cross_mean(s0, cnt, inv),
                                      (uint8_t)cross_mean(s1, cnt, inv),
                                      (uint8_t)cross_mean(s2, cnt, inv),
                                      (uint8_t)cross_mean(s3, cnt, inv));
}

cudaError_t launch_cross_aggregate(const uint8_t *grey, int w, int h, int ndisp, int cap,
                                   uint8_t *cost, uint32_t *arms, uint16_t *H, cudaStream_t st)
{
    const size_t n = (size_t)w * h;
    const int D4 = ndisp / 4; /* D is a multiple of 16 */
    k_cross_arms<<<blocks(n), CROSS_BLOCK, 0, st>>>(grey, w, h, cap, arms);
    k_cross_hsum<<<blocks(n * D4), CROSS_BLOCK, 0, st>>>(cost, arms, n, D4, H);
    k_cross_vsum<<<blocks(n * D4), CROSS_BLOCK, 0, st>>>(H, arms, w, n, D4, cost);
    return cudaGetLastError();
}

static __global__ void k_cross_adjust(const int16_t *__restrict__ in,
                                      const uint8_t *__restrict__ cost, int w, size_t n, int dmin,
                                      int ndisp, int16_t *__restrict__ out)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = cross_adjust(in, cost + i * (size_t)ndisp, w, (int)(i % w), i, dmin, ndisp);
}

cudaError_t launch_cross_adjust(const int16_t *in, const uint8_t *cost, int w, int h, int dmin,
                                int ndisp, int16_t *out, cudaStream_t st)
{
    const size_t n = (size_t)w * h;
    k_cross_adjust<<<blocks(n), CROSS_BLOCK, 0, st>>>(in, cost, w, n, dmin, ndisp, out);
    return cudaGetLastError();
}
