/* SPDX-License-Identifier: Apache-2.0 */
/* disparity.cu — the end of stage 7 on the GPU (disparity.h): 3x3 median and the LR check, one
 * thread per pixel. (Winner-takes-all and the right disparity run inside the last aggregation
 * pass, sgm.cu.) */
#include "disparity.h"
#include "launch.cuh"
#include "stereo_math.h"

#define PIX_BLOCK 256
#define ROW_BLOCK 128 /* k_lr_finish_views: threads per row */

static __global__ void k_median(const int16_t *in, int w, int h, int16_t *out)
{
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= (size_t)w * h)
        return;
    int x = (int)(p % w), y = (int)(p / w);
    const int16_t *a = in + (size_t)(y > 0 ? y - 1 : 0) * w;
    const int16_t *b = in + (size_t)y * w;
    const int16_t *c = in + (size_t)(y + 1 < h ? y + 1 : h - 1) * w;
    int l = x > 0 ? x - 1 : 0, r = x + 1 < w ? x + 1 : w - 1;
    out[p] = stereo_median9(a[l], a[x], a[r], b[l], b[x], b[r], c[l], c[x], c[r]);
}

static __global__ void k_lr_finish(int16_t *disp, const int16_t *disp_right, uint8_t *conf, int w,
                                   int h, int tol16)
{
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= (size_t)w * h)
        return;
    int v = disp[p];
    if (v >= 0 && disp_right) {
        int x = (int)(p % w);
        if (!stereo_lr_consistent(x, v, disp_right + (p - x), tol16)) {
            v = STEREO_INVALID;
            disp[p] = STEREO_INVALID;
        }
    }
    if (conf && v < 0)
        conf[p] = 0;
}

/* The LR check of more than two views (lr_check_views_rows): one block per row. The row's left
 * values before the check go to shared memory first, so every thread reads them there (what the
 * CPU's right-to-left pass in place reads: left of x not yet checked, right of x from its ring)
 * and writes its own pixels' result to the map. */
static __global__ void k_lr_finish_views(int16_t *disp, const int16_t *disp_right, uint8_t *conf,
                                         int w, int tol16)
{
    extern __shared__ int16_t before[]; /* w values */
    const size_t base = (size_t)blockIdx.x * w;
    int16_t *row = disp + base;
    for (int x = threadIdx.x; x < w; x += blockDim.x)
        before[x] = row[x];
    __syncthreads();
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        int v = before[x];
        if (v >= 0 && !stereo_lr_views_consistent(x, v, w, before, before, -1, disp_right + base,
                                                  tol16)) {
            v = STEREO_INVALID;
            row[x] = STEREO_INVALID;
        }
        if (conf && v < 0)
            conf[base + x] = 0;
    }
}

cudaError_t launch_lr_finish_views(int16_t *disp, const int16_t *disp_right, uint8_t *conf,
                                   int w, int h, int tolerance, cudaStream_t stream)
{
    if (!disp_right) /* no LR check: what launch_lr_finish does without it */
        return launch_lr_finish(disp, NULL, conf, w, h, tolerance, stream);
    if (w < 1 || h < 1 || w > STEREO_MAX_SIDE)
        return cudaErrorInvalidValue;
    k_lr_finish_views<<<(unsigned)h, ROW_BLOCK, (size_t)w * sizeof(int16_t), stream>>>(
        disp, disp_right, conf, w, STEREO_SUBPIXEL_SCALE * tolerance);
    return cudaGetLastError();
}

cudaError_t launch_median(const int16_t *in, int w, int h, int16_t *out, cudaStream_t stream)
{
    size_t n = (size_t)w * h;
    k_median<<<(unsigned)((n + PIX_BLOCK - 1) / PIX_BLOCK), PIX_BLOCK, 0, stream>>>(in, w, h, out);
    return cudaGetLastError();
}

cudaError_t launch_lr_finish(int16_t *disp, const int16_t *disp_right, uint8_t *conf, int w,
                             int h, int tolerance, cudaStream_t stream)
{
    size_t n = (size_t)w * h;
    k_lr_finish<<<(unsigned)((n + PIX_BLOCK - 1) / PIX_BLOCK), PIX_BLOCK, 0, stream>>>(
        disp, disp_right, conf, w, h, STEREO_SUBPIXEL_SCALE * tolerance);
    return cudaGetLastError();
}

/* disparity_shift_rows, one block per row: the row into shared memory first */
static __global__ void k_shift_rows(uint8_t *img, uint8_t *copy, int w, int m)
{
    extern __shared__ uint8_t row_u8[];
    uint8_t *row = img + (size_t)blockIdx.x * w;
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        row_u8[x] = row[x];
        if (copy)
            copy[(size_t)blockIdx.x * w + x] = row[x];
    }
    __syncthreads();
    for (int x = threadIdx.x; x < w; x += blockDim.x)
        row[x] = row_u8[x + m < w ? x + m : w - 1];
}

/* disparity_unshift_rows, one block per row: the right row into shared memory first */
static __global__ void k_unshift(int16_t *disp, int16_t *disp_right, uint8_t *conf, int w, int m)
{
    extern __shared__ int16_t row_i16[];
    const size_t base = (size_t)blockIdx.x * w;
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        int v = disparity_unshift_left(disp[base + x], x, w, m);
        disp[base + x] = (int16_t)v;
        if (conf && v == STEREO_INVALID)
            conf[base + x] = 0;
        if (disp_right)
            row_i16[x] = disp_right[base + x];
    }
    if (!disp_right)
        return;
    __syncthreads();
    for (int c = threadIdx.x; c < w; c += blockDim.x)
        disp_right[base + c] =
            c < m ? STEREO_INVALID : (int16_t)disparity_unshift_right(row_i16[c - m], m);
}

cudaError_t launch_shift_rows(uint8_t *img, uint8_t *copy, int w, int h, int m,
                              cudaStream_t stream)
{
    if (w < 1 || h < 1 || w > STEREO_MAX_SIDE)
        return cudaErrorInvalidValue;
    k_shift_rows<<<(unsigned)h, ROW_BLOCK, (size_t)w, stream>>>(img, copy, w, m);
    return cudaGetLastError();
}

cudaError_t launch_unshift(int16_t *disp, int16_t *disp_right, uint8_t *conf, int w, int h,
                           int m, cudaStream_t stream)
{
    if (w < 1 || h < 1 || w > STEREO_MAX_SIDE)
        return cudaErrorInvalidValue;
    k_unshift<<<(unsigned)h, ROW_BLOCK, (size_t)w * sizeof(int16_t), stream>>>(disp, disp_right,
                                                                              conf, w, m);
    return cudaGetLastError();
}
