/* SPDX-License-Identifier: Apache-2.0 */
/* block.cu — stage 5 of method bm on the GPU: block matching's N x N box sum (block.h), the same
 * two separable running sums as the CPU reference (block.c), bit for bit:
 *
 *   vertical   V(x, y, k) = sum_{j=-r..r} C(x, clamp(y + j), k)          (uint16, <= 31 * 255)
 *   horizontal S(x, y, k) = (sum_{i=-r..r} V(clamp(x + i), y, k)) >> shift  (uint32 running sum)
 *
 * with r = N / 2, coordinates clamped to the image. Every sum is an exact integer, so the order
 * the terms are added in does not matter: a running sum started anywhere with a full sum of its
 * N terms gives the CPU's values. Each pass splits its walk into chunks (each chunk starts with a
 * full sum) so that small images still fill the GPU; the work stays O(1) per voxel whatever N.
 *
 * Vertical pass: one thread per (x, k) of a row (consecutive threads = consecutive k, so the
 * writes of V are coalesced), walking the rows of its chunk. The cost volume is never stored: C
 * is computed on the fly from the stage's transformed images (sgm.h's definition, through
 * stereo_math.h where the formula lives there), once for the row entering and once for the row
 * leaving the window.
 * Horizontal pass: one thread per (y, k), walking the columns of its chunk (consecutive threads =
 * consecutive k: coalesced reads of V and writes of S).
 */
#include "launch.cuh"
#include "pair_cost.cuh"
#include "stereo_math.h"

#define BLOCK_THREADS 256
/* A chunk is at least this many steps long, so that its opening full sum (N terms) costs at
 * most N / BLOCK_MIN_CHUNK of the running sum's work. */
#define BLOCK_MIN_CHUNK 32
/* Threads wanted per pass: resident threads on every SM (2048 on sm_80 .. sm_90); a device of
 * unknown size (a->sms = 0) is taken as the Orin's 16 SMs. */
#define BLOCK_THREADS_PER_SM 2048
#define BLOCK_DEFAULT_SMS 16

/* V for rows [blockIdx.y * chunk, + chunk) of lane i = x * D + k (block_vertical_rows). */
template <int KIND>
static __global__ void k_block_vertical(const sgm_args a, int r, int chunk,
                                        uint16_t *__restrict__ V)
{
    const int w = a.width, h = a.height, D = a.ndisp;
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int y0 = blockIdx.y * chunk;
    if (i >= (size_t)w * D || y0 >= h)
        return;
    const int x = (int)(i / D), k = (int)(i % D);
    const int y1 = min(y0 + chunk, h);
    const size_t plane = (size_t)w * D; /* one row of V */
    /* the chunk's first row: a full sum of N rows */
    int sum = 0;
    for (int j = -r; j <= r; j++)
        sum += pair_cost<KIND>(a, (size_t)clampi(y0 + j, 0, h - 1) * w, x, k);
    V[(size_t)y0 * plane + i] = (uint16_t)sum;
    /* the others from the row above: + the row entering, - the row leaving */
    for (int y = y0 + 1; y < y1; y++) {
        sum += pair_cost<KIND>(a, (size_t)clampi(y + r, 0, h - 1) * w, x, k) -
               pair_cost<KIND>(a, (size_t)clampi(y - r - 1, 0, h - 1) * w, x, k);
        V[(size_t)y * plane + i] = (uint16_t)sum;
    }
}

/* S for columns [blockIdx.y * chunk, + chunk) of row-disparity i = y * D + k
 * (block_horizontal_rows). */
static __global__ void k_block_horizontal(const uint16_t *__restrict__ V, uint16_t *__restrict__ S,
                                          int w, int h, int D, int r, int shift, int chunk)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int x0 = blockIdx.y * chunk;
    if (i >= (size_t)h * D || x0 >= w)
        return;
    const int y = (int)(i / D), k = (int)(i % D);
    const int x1 = min(x0 + chunk, w);
    const size_t base = (size_t)y * w * D + k; /* V(x, y, k) at base + x * D */
    const uint16_t *in = V + base;
    uint16_t *out = S + base;
    /* the chunk's first column: a full sum of N columns */
    uint32_t acc = 0;
    for (int j = -r; j <= r; j++)
        acc += __ldg(in + (size_t)clampi(x0 + j, 0, w - 1) * D);
    out[(size_t)x0 * D] = (uint16_t)(acc >> shift);
    for (int x = x0 + 1; x < x1; x++) {
        acc = acc + __ldg(in + (size_t)clampi(x + r, 0, w - 1) * D) -
              __ldg(in + (size_t)clampi(x - r - 1, 0, w - 1) * D);
        out[(size_t)x * D] = (uint16_t)(acc >> shift);
    }
}

/* The chunk length of a walk of `steps` steps by `lanes` threads: enough chunks to give every
 * SM its resident threads, none shorter than BLOCK_MIN_CHUNK steps (or the whole walk). */
static int walk_chunk(size_t lanes, int steps, int sms)
{
    const size_t want = (size_t)(sms > 0 ? sms : BLOCK_DEFAULT_SMS) * BLOCK_THREADS_PER_SM;
    size_t chunks = (want + lanes - 1) / lanes;
    if (chunks < 1)
        chunks = 1;
    size_t chunk = ((size_t)steps + chunks - 1) / chunks;
    if (chunk < BLOCK_MIN_CHUNK)
        chunk = BLOCK_MIN_CHUNK;
    return chunk < (size_t)steps ? (int)chunk : steps;
}

cudaError_t launch_block_sum(const sgm_args *a, const block_args *b, uint16_t *V, uint16_t *S,
                             cudaStream_t stream)
{
    const int w = a->width, h = a->height, D = a->ndisp, r = b->block / 2;
    if (w < 1 || h < 1 || D < 1 || b->block < 1 || b->block % 2 == 0 || b->shift < 0 ||
        b->shift > 31 || b->cost_kind < 0 || b->cost_kind > BLOCK_COST_VOLUME ||
        (b->cost_kind == BLOCK_COST_VOLUME && !a->cost_vol))
        return cudaErrorInvalidValue;
    /* vertical pass: w * D lanes walking h rows */
    const size_t vl = (size_t)w * D;
    const int vc = walk_chunk(vl, h, a->sms);
    const dim3 vgrid((unsigned)((vl + BLOCK_THREADS - 1) / BLOCK_THREADS),
                     (unsigned)((h + vc - 1) / vc));
    switch (b->cost_kind) {
    case 0: k_block_vertical<0><<<vgrid, BLOCK_THREADS, 0, stream>>>(*a, r, vc, V); break;
    case 1: k_block_vertical<1><<<vgrid, BLOCK_THREADS, 0, stream>>>(*a, r, vc, V); break;
    case 2: k_block_vertical<2><<<vgrid, BLOCK_THREADS, 0, stream>>>(*a, r, vc, V); break;
    case 3: k_block_vertical<3><<<vgrid, BLOCK_THREADS, 0, stream>>>(*a, r, vc, V); break;
    case COST_KIND_ADCENSUS:
        k_block_vertical<COST_KIND_ADCENSUS><<<vgrid, BLOCK_THREADS, 0, stream>>>(*a, r, vc, V);
        break;
    default:
        k_block_vertical<BLOCK_COST_VOLUME><<<vgrid, BLOCK_THREADS, 0, stream>>>(*a, r, vc, V);
        break;
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    /* horizontal pass: h * D lanes walking w columns */
    const size_t hl = (size_t)h * D;
    const int hc = walk_chunk(hl, w, a->sms);
    const dim3 hgrid((unsigned)((hl + BLOCK_THREADS - 1) / BLOCK_THREADS),
                     (unsigned)((w + hc - 1) / hc));
    k_block_horizontal<<<hgrid, BLOCK_THREADS, 0, stream>>>(V, S, w, h, D, r, b->shift, hc);
    return cudaGetLastError();
}

/* The two-view cost volume C (sgm.h's layout) of rank and the table costs, as pair_cost computes it: the
 * input of the volume walk (SGM_VOLUME), which the stage uses for the costs whose own walk is
 * slower (stage_cuda_create.cu). A block holds 1024 / D consecutive pixels of a row (threadIdx.y), 256
 * threads; each thread four consecutive disparities (one 32-bit store; D is a multiple of 16),
 * so a block writes one contiguous run of the volume. */
template <int KIND>
static __global__ void k_cost_volume(const sgm_args a, uint8_t *__restrict__ out)
{
    const int x = blockIdx.x * blockDim.y + threadIdx.y, y = blockIdx.y, k = 4 * threadIdx.x;
    if (x >= a.width)
        return;
    const size_t row = (size_t)y * a.width;
    uint32_t c4 = 0;
#pragma unroll
    for (int i = 0; i < 4; i++)
        c4 |= (uint32_t)pair_cost<KIND>(a, row, x, k + i) << (8 * i);
    *(uint32_t *)(out + (row + x) * a.ndisp + k) = c4;
}

/* The word costs (census, bt, adcensus) of the volume from shared memory: a block stages one
 * segment of VOL_PIXELS pixels of a row, the right words it reaches (VOL_PIXELS + D - 1 of them,
 * 0 left of the image) and, for adcensus, the right grey values already mapped (ad_lut), so that
 * every word and grey value is read from global memory once per block instead of once per voxel,
 * and the mapping is looked up once per pixel. A warp takes one pixel at a time, lane t
 * disparities t, t + 32, ...: consecutive lanes read consecutive shared words (no bank
 * conflict) and write consecutive bytes of the volume. The same costs as pair_cost, bit for bit. */
template <int KIND>
static __device__ __forceinline__ int word_volume_cost(const sgm_args &a, uint64_t l, int il, uint64_t r,
                                                       int mr)
{
    if (KIND == 1)
        return __popcll(l ^ r);
    if (KIND == COST_KIND_ADCENSUS)
        return stereo_adcensus_cost(__popcll(l ^ r), il, mr, a.ad_weight, a.max_cost);
    /* KIND == 3, bt words I | lo << 8 | hi << 16 */
    return stereo_bt_cost((int)(l & 255), (int)(l >> 8 & 255), (int)(l >> 16 & 255), (int)(r & 255),
                          (int)(r >> 8 & 255), (int)(r >> 16 & 255), a.max_cost);
}

#define VOL_PIXELS 64
#define VOL_THREADS 256
template <int KIND>
static __global__ void __launch_bounds__(VOL_THREADS)
    k_cost_volume_words(const sgm_args a, uint8_t *__restrict__ out)
{
    extern __shared__ uint64_t vol_sh[];
    const int D = a.ndisp, w = a.width, y = blockIdx.y;
    const int x0 = blockIdx.x * VOL_PIXELS, np = min(VOL_PIXELS, w - x0);
    const int xr0 = x0 - a.dmin - (D - 1); /* the first right pixel staged */
    const int nr = np + D - 1;
    uint64_t *cr = vol_sh;                                   /* nr right words */
    uint8_t *mr = (uint8_t *)(vol_sh + VOL_PIXELS + 511);    /* nr mapped right grey values */
    const size_t row = (size_t)y * w;
    for (int i = threadIdx.x; i < nr; i += VOL_THREADS) {
        const int xr = xr0 + i;
        const bool in = xr >= 0 && xr < w; /* xr < w always: x - dmin - k <= x */
        cr[i] = in ? __ldg(a.census_r + row + xr) : 0;
        if (KIND == COST_KIND_ADCENSUS)
            mr[i] = in ? __ldg(a.ad_lut + __ldg(a.grey_r + row + xr)) : 0;
    }
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool edge = xr0 < 0; /* block-uniform: some disparities point left of the image */
    for (int px = warp; px < np; px += VOL_THREADS / 32) {
        const int x = x0 + px;
        const uint64_t l = __ldg(a.census_l + row + x);
        const int il = KIND == COST_KIND_ADCENSUS ? (int)__ldg(a.grey + row + x) : 0;
        uint8_t *o = out + (row + x) * (size_t)D + lane;
        /* the staged index of disparity k is top - k */
        const uint64_t *crk = cr + (px + D - 1 - lane);
        const uint8_t *mrk = mr + (px + D - 1 - lane);
        const int xrk = x - a.dmin - lane; /* the right pixel of disparity k = lane */
        if (D % 128 == 0 && !edge) { /* 4 voxels a lane without a test between them */
            for (int k = 0; k < D; k += 128) {
#pragma unroll
                for (int j = 0; j < 128; j += 32)
                    o[k + j] = (uint8_t)word_volume_cost<KIND>(a, l, il, crk[-(k + j)], mrk[-(k + j)]);
            }
        } else {
            for (int k = 0; k + lane < D; k += 32) {
                const int c = word_volume_cost<KIND>(a, l, il, crk[-k], mrk[-k]);
                o[k] = (uint8_t)(xrk - k < 0 ? a.max_cost : c);
            }
        }
    }
}

cudaError_t launch_cost_volume(const sgm_args *a, int cost_kind, uint8_t *out, cudaStream_t stream)
{
    if (!a || !out || a->width < 1 || a->height < 1 || a->ndisp < 16 || a->ndisp % 16 ||
        a->ndisp > 512 || cost_kind < 0 || cost_kind > COST_KIND_ADCENSUS || a->height > 65535)
        return cudaErrorInvalidValue;
    if (cost_kind == 1 || cost_kind == 3 || cost_kind == COST_KIND_ADCENSUS) {
        const dim3 wgrid(((unsigned)a->width + VOL_PIXELS - 1) / VOL_PIXELS, (unsigned)a->height);
        const size_t shared = (VOL_PIXELS + 511) * sizeof(uint64_t) + VOL_PIXELS + 511;
        if (cost_kind == 1)
            k_cost_volume_words<1><<<wgrid, VOL_THREADS, shared, stream>>>(*a, out);
        else if (cost_kind == 3)
            k_cost_volume_words<3><<<wgrid, VOL_THREADS, shared, stream>>>(*a, out);
        else
            k_cost_volume_words<COST_KIND_ADCENSUS><<<wgrid, VOL_THREADS, shared, stream>>>(*a, out);
        return cudaGetLastError();
    }
    const unsigned per_pixel = (unsigned)a->ndisp / 4, pixels = 1024u / (unsigned)a->ndisp;
    const dim3 grid(((unsigned)a->width + pixels - 1) / pixels, (unsigned)a->height);
    const dim3 threads(per_pixel, pixels);
    if (cost_kind == 0)
        k_cost_volume<0><<<grid, threads, 0, stream>>>(*a, out);
    else
        k_cost_volume<2><<<grid, threads, 0, stream>>>(*a, out);
    return cudaGetLastError();
}
