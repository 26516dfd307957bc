/* SPDX-License-Identifier: Apache-2.0 */
/* rectify.cu — stages 1 and 2 on the GPU (grey.h, rectify.h); one thread per output pixel. */
#include "launch.cuh"
#include "stereo_math.h"

#define RECTIFY_BLOCK_X 32
#define RECTIFY_BLOCK_Y 8

static __device__ __forceinline__ uint8_t grey_at(const uint8_t *src, size_t pitch,
                                                  stereo_pixfmt fmt, int x, int y)
{
    const uint8_t *row = src + (size_t)y * pitch;
    switch (fmt) {
    case STEREO_PIX_RGB24: return stereo_grey_rgb(row[3 * x], row[3 * x + 1], row[3 * x + 2]);
    case STEREO_PIX_YUYV: return row[2 * x];
    default: return row[x];
    }
}

static __global__ void k_grey(const frame_desc *desc, int side, stereo_pixfmt fmt, uint8_t *grey,
                              int w, int h)
{
    const uint8_t *src = desc->in[side];
    size_t pitch = desc->pitch[side];
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        grey[(size_t)y * w + x] = grey_at(src, pitch, fmt, x, y);
}

static __global__ void k_grey_rectify(const frame_desc *desc, int side, stereo_pixfmt fmt,
                                      int sw, int sh, const int16_t *xy, const uint16_t *frac,
                                      uint8_t *grey, uint8_t *valid, int w, int h)
{
    const uint8_t *src = desc->in[side];
    size_t pitch = desc->pitch[side];
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    size_t i = (size_t)y * w + x;
    int sx = xy[2 * i], sy = xy[2 * i + 1];
    int fx = frac[i] & 31, fy = (frac[i] >> 5) & 31;
    if (!stereo_bilinear_valid(sx, sy, fx, fy, sw, sh)) {
        grey[i] = 0;
        valid[i] = 0;
        return;
    }
    /* taps with zero weight are not read: they may lie outside the source */
    uint32_t a = grey_at(src, pitch, fmt, sx, sy);
    uint32_t b = fx ? grey_at(src, pitch, fmt, sx + 1, sy) : 0;
    uint32_t c = fy ? grey_at(src, pitch, fmt, sx, sy + 1) : 0;
    uint32_t d = (fx && fy) ? grey_at(src, pitch, fmt, sx + 1, sy + 1) : 0;
    grey[i] = stereo_bilinear(a, b, c, d, fx, fy);
    valid[i] = 1;
}

cudaError_t launch_grey_rectify(const frame_desc *desc, int side, stereo_pixfmt fmt, int src_w,
                                int src_h, const int16_t *xy, const uint16_t *frac, uint8_t *grey,
                                uint8_t *valid, int w, int h, cudaStream_t stream)
{
    dim3 block(RECTIFY_BLOCK_X, RECTIFY_BLOCK_Y);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    if (xy)
        k_grey_rectify<<<grid, block, 0, stream>>>(desc, side, fmt, src_w, src_h, xy, frac, grey,
                                                   valid, w, h);
    else
        k_grey<<<grid, block, 0, stream>>>(desc, side, fmt, grey, w, h);
    return cudaGetLastError();
}
