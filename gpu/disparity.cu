/* disparity.cu — stages 6 to 8 on the GPU (disparity.h).
 *
 * Winner-takes-all: one warp per pixel; lane l reads k = l, l + 32, ... (coalesced along the
 * pixel's D costs) and the warp reduces packed keys (S << 9 | k), whose minimum is the smallest
 * S with ties to the smaller k — exactly the reference's scan order. The right disparity does the
 * same along the diagonal S(xr + dmin + k, k). Median and LR check: one thread per pixel. */
#include "launch.cuh"
#include "stereo_math.h"

#define WTA_BLOCK 256
#define PIX_BLOCK 256

static __device__ __forceinline__ uint32_t warp_min(uint32_t v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        uint32_t o = __shfl_xor_sync(0xffffffffu, v, off);
        v = o < v ? o : v;
    }
    return v;
}

static __global__ void k_wta(const uint16_t *S, const uint8_t *valid, int w, int h, int dmin,
                             int D, int uniqueness, int subpixel, int16_t *disp, uint8_t *conf)
{
    size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (p >= (size_t)w * h)
        return; /* whole warps: WTA_BLOCK is a multiple of 32 */
    const uint16_t *s = S + p * D;
    uint32_t key = 0xffffffffu;
    for (int k = lane; k < D; k += 32)
        key = min(key, (uint32_t)s[k] << 9 | (uint32_t)k);
    key = warp_min(key);
    int best = key & 511;
    uint32_t s1 = key >> 9, s2 = 0xffffffffu;
    for (int k = lane; k < D; k += 32)
        if (k < best - 1 || k > best + 1)
            s2 = min(s2, (uint32_t)s[k]);
    s2 = warp_min(s2);
    if (lane != 0)
        return;
    int x = (int)(p % w);
    int ok = x >= dmin && (!valid || valid[p]) &&
             (uniqueness == 0 || stereo_unique(s1, s2, uniqueness));
    int v = STEREO_SUBPIXEL_SCALE * (dmin + best);
    if (subpixel && best > 0 && best < D - 1)
        v += stereo_subpixel_offset(s[best - 1], (int)s1, s[best + 1]);
    disp[p] = ok ? (int16_t)v : STEREO_INVALID;
    if (conf)
        conf[p] = ok ? stereo_confidence_value(s1, s2) : 0;
}

static __global__ void k_right(const uint16_t *S, const uint8_t *valid_right, int w, int h,
                               int dmin, int D, int16_t *disp_right)
{
    size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (p >= (size_t)w * h)
        return;
    int xr = (int)(p % w);
    int kmax = min(w - 1 - xr - dmin, D - 1);
    uint32_t key = 0xffffffffu;
    for (int k = lane; k <= kmax; k += 32)
        key = min(key, (uint32_t)S[(p + dmin + k) * D + k] << 9 | (uint32_t)k);
    key = warp_min(key);
    if (lane == 0)
        disp_right[p] = kmax < 0 || (valid_right && !valid_right[p])
                            ? STEREO_INVALID
                            : (int16_t)(STEREO_SUBPIXEL_SCALE * (dmin + (int)(key & 511)));
}

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

cudaError_t launch_wta(const uint16_t *S, const uint8_t *valid, int w, int h, int dmin, int D,
                       int uniqueness, int subpixel, int16_t *disp, uint8_t *conf,
                       cudaStream_t stream)
{
    size_t threads = (size_t)w * h * 32;
    k_wta<<<(unsigned)((threads + WTA_BLOCK - 1) / WTA_BLOCK), WTA_BLOCK, 0, stream>>>(
        S, valid, w, h, dmin, D, uniqueness, subpixel, disp, conf);
    return cudaGetLastError();
}

cudaError_t launch_right(const uint16_t *S, const uint8_t *valid_right, int w, int h, int dmin,
                         int D, int16_t *disp_right, cudaStream_t stream)
{
    size_t threads = (size_t)w * h * 32;
    k_right<<<(unsigned)((threads + WTA_BLOCK - 1) / WTA_BLOCK), WTA_BLOCK, 0, stream>>>(
        S, valid_right, w, h, dmin, D, disp_right);
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
