/* SPDX-License-Identifier: Apache-2.0 */
/* cross.cu — cross-based cost aggregation (4b) and depth-discontinuity adjustment (8b) on the
 * GPU, bit for bit cross.c's (cross.h has the rules).
 *
 * 4b, arms up to CROSS_TILE_CAP (k_cross_tile): a block per tile of 32 x 8 pixels and 16
 * disparities. It computes the arms and H of its rows and of the cap rows above and below them
 * into shared memory (16 disparities a thread, summed two to a 32-bit word: a segment's sum
 * stays below 2^16), then each thread sums H down its pixel's column from shared memory and
 * writes the means to a second volume (in place would overwrite the costs the neighbouring
 * tiles still read): 1 byte read and 1 written per voxel, the halo's reads from the caches.
 * Longer arms: each pixel's arms (a thread a pixel); then H into a 16-bit volume (a thread per
 * pixel and 4 disparities), then the region's sums of H down p's column, divided by the
 * region's size, back into the cost volume, which H no longer needs.
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

#define TILE_W 32
#define TILE_H 8
#define TILE_ROWS (TILE_H + 2 * CROSS_TILE_CAP)

/* a block per 32 x 8 pixels (threadIdx) and 16 disparities (blockIdx.z) */
static __global__ void __launch_bounds__(TILE_W *TILE_H)
    k_cross_tile(const uint8_t *__restrict__ grey, int w, int h, int ndisp, int cap,
                 const uint8_t *__restrict__ cost, uint8_t *__restrict__ out)
{
    __shared__ uint4 Hs[TILE_ROWS][TILE_W][2]; /* 16 row sums a pixel, two to a word */
    __shared__ uint32_t As[TILE_ROWS][TILE_W];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * TILE_W + tx, y0 = blockIdx.y * TILE_H, k0 = blockIdx.z * 16;
    for (int r = ty; r < TILE_H + 2 * cap; r += TILE_H) {
        const int y = y0 - cap + r;
        if (x >= w || y < 0 || y >= h)
            continue; /* no arm reaches it */
        const uint32_t a = cross_arms(grey, w, h, x, y, cap);
        As[r][tx] = a;
        const uint4 *c = (const uint4 *)(cost + ((size_t)y * w + x - cross_left(a)) * ndisp + k0);
        const size_t step = (size_t)ndisp / 16;
        uint32_t lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0}; /* bytes 0, 2 and 1, 3 of each word */
        for (int q = 0; q <= cross_left(a) + cross_right(a); q++, c += step) {
            const uint4 v = __ldg(c);
            const uint32_t wd[4] = {v.x, v.y, v.z, v.w};
            for (int j = 0; j < 4; j++) {
                lo[j] += wd[j] & 0x00ff00ffu;
                hi[j] += wd[j] >> 8 & 0x00ff00ffu;
            }
        }
        /* disparities k0 + 4j .. 4j + 3 as two words of two 16-bit sums, in order */
        Hs[r][tx][0] = make_uint4(__byte_perm(lo[0], hi[0], 0x5410), __byte_perm(lo[0], hi[0], 0x7632),
                                  __byte_perm(lo[1], hi[1], 0x5410), __byte_perm(lo[1], hi[1], 0x7632));
        Hs[r][tx][1] = make_uint4(__byte_perm(lo[2], hi[2], 0x5410), __byte_perm(lo[2], hi[2], 0x7632),
                                  __byte_perm(lo[3], hi[3], 0x5410), __byte_perm(lo[3], hi[3], 0x7632));
    }
    __syncthreads();
    const int y = y0 + ty;
    if (x >= w || y >= h)
        return;
    const uint32_t a = As[ty + cap][tx];
    uint32_t sum[16] = {0}, cnt = 0;
    for (int r = ty + cap - cross_up(a); r <= ty + cap + cross_down(a); r++) {
        const uint32_t aq = As[r][tx];
        cnt += (uint32_t)(cross_left(aq) + cross_right(aq) + 1);
        for (int half = 0; half < 2; half++) {
            const uint4 v = Hs[r][tx][half];
            const uint32_t wd[4] = {v.x, v.y, v.z, v.w};
            for (int j = 0; j < 4; j++) {
                sum[8 * half + 2 * j] += wd[j] & 0xffffu;
                sum[8 * half + 2 * j + 1] += wd[j] >> 16;
            }
        }
    }
    const float inv = __frcp_rn((float)cnt); /* 1.0f / cnt, correctly rounded as the CPU's */
    uint32_t o[4];
    for (int j = 0; j < 4; j++)
        o[j] = (uint32_t)cross_mean(sum[4 * j], cnt, inv) |
               (uint32_t)cross_mean(sum[4 * j + 1], cnt, inv) << 8 |
               (uint32_t)cross_mean(sum[4 * j + 2], cnt, inv) << 16 |
               (uint32_t)cross_mean(sum[4 * j + 3], cnt, inv) << 24;
    *(uint4 *)(out + ((size_t)y * w + x) * ndisp + k0) = make_uint4(o[0], o[1], o[2], o[3]);
}

cudaError_t launch_cross_aggregate(const uint8_t *grey, int w, int h, int ndisp, int cap,
                                   uint8_t *cost, uint8_t *out, uint32_t *arms, uint16_t *H,
                                   cudaStream_t st)
{
    if (cross_tiled(cap)) {
        const dim3 grid((unsigned)((w + TILE_W - 1) / TILE_W), (unsigned)((h + TILE_H - 1) / TILE_H),
                        (unsigned)(ndisp / 16));
        k_cross_tile<<<grid, dim3(TILE_W, TILE_H), 0, st>>>(grey, w, h, ndisp, cap, cost, out);
        return cudaGetLastError();
    }
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
