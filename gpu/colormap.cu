/* SPDX-License-Identifier: Apache-2.0 */
/* colormap.cu — colormap.h on the GPU, and the frame's publishing kernel; one thread per pixel. */
#include "launch.cuh"

/* The colormap.h rule: index ((v - lo) * 255 + span / 2) / span clamped to 0..255; invalid black. */
static __device__ __forceinline__ uchar4 colour_of(int v, int lo, int span, const uint8_t *lut)
{
    if (!stereo_disparity_valid(v))
        return make_uchar4(0, 0, 0, 255);
    int i = ((v - lo) * 255 + span / 2) / span;
    i = i < 0 ? 0 : i > 255 ? 255 : i;
    return make_uchar4(lut[3 * i], lut[3 * i + 1], lut[3 * i + 2], 255);
}

static __global__ void k_colormap(const int16_t *disp, int w, int lo, int span, const uint8_t *lut,
                                  uint8_t *rgba, size_t pitch)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w)
        *(uchar4 *)(rgba + (size_t)y * pitch + 4 * (size_t)x) =
            colour_of(disp[(size_t)y * w + x], lo, span, lut);
}

static __global__ void k_publish(const frame_desc *desc, const int16_t *disp,
                                 const int16_t *disp_right, const uint8_t *conf,
                                 const uint8_t *grey_l, const uint8_t *grey_r, int w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w)
        return;
    size_t p = (size_t)y * w + x;
    int v = disp[p];
    if (desc->disp_out)
        desc->disp_out[p] = (int16_t)v;
    if (desc->right_out && disp_right)
        desc->right_out[p] = disp_right[p];
    if (desc->conf_out && conf)
        desc->conf_out[p] = conf[p];
    if (desc->rect_out[0]) {
        desc->rect_out[0][p] = grey_l[p];
        desc->rect_out[1][p] = grey_r[p];
    }
    if (desc->rgba_out)
        *(uchar4 *)(desc->rgba_out + (size_t)y * desc->rgba_pitch + 4 * (size_t)x) =
            colour_of(v, desc->color_lo, desc->color_span, desc->lut);
}

cudaError_t launch_colormap(const int16_t *disp, int w, int h, int lo, int hi,
                            const uint8_t *lut, uint8_t *rgba, size_t pitch, cudaStream_t stream)
{
    dim3 block(128), grid((w + 127) / 128, h);
    k_colormap<<<grid, block, 0, stream>>>(disp, w, lo, hi - lo, lut, rgba, pitch);
    return cudaGetLastError();
}

cudaError_t launch_publish(const frame_desc *desc, const int16_t *disp, const int16_t *disp_right,
                           const uint8_t *conf, const uint8_t *grey_l, const uint8_t *grey_r,
                           int w, int h, cudaStream_t stream)
{
    dim3 block(128), grid((w + 127) / 128, h);
    k_publish<<<grid, block, 0, stream>>>(desc, disp, disp_right, conf, grey_l, grey_r, w);
    return cudaGetLastError();
}
