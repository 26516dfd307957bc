/* colormap.cu — colormap.h on the GPU: one thread per pixel, RGBA out. */
#include "launch.cuh"

static __global__ void k_colormap(const int16_t *disp, int w, int h, int lo, int span,
                                  const uint8_t *lut, uint8_t *rgba, size_t pitch)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w)
        return;
    int v = disp[(size_t)y * w + x];
    uchar4 o = make_uchar4(0, 0, 0, 255);
    if (v >= 0) {
        int i = ((v - lo) * 255 + span / 2) / span;
        i = i < 0 ? 0 : i > 255 ? 255 : i;
        o = make_uchar4(lut[3 * i], lut[3 * i + 1], lut[3 * i + 2], 255);
    }
    *(uchar4 *)(rgba + (size_t)y * pitch + 4 * (size_t)x) = o;
}

cudaError_t launch_colormap(const int16_t *disp, int w, int h, int dmin, int D,
                            const uint8_t *lut, uint8_t *rgba, size_t pitch, cudaStream_t stream)
{
    dim3 block(128), grid((w + 127) / 128, h);
    k_colormap<<<grid, block, 0, stream>>>(disp, w, h, 16 * dmin, 16 * (D - 1), lut, rgba, pitch);
    return cudaGetLastError();
}
