/* sgm.cu — stages 4 and 5 on the GPU (sgm.h): matching cost on the fly and the SGM recurrence
 * along one direction's lines.
 *
 * A group of G lanes (16 or 32, inside one warp) walks one line; lane t holds the K consecutive
 * disparities k = t*K .. t*K+K-1 (G * K = D). Per step: the costs of its K disparities, the
 * neighbours k-1 / k+1 across lanes by one shuffle each, the minimum of the new L over the group
 * by a butterfly reduction, and S += L for its K disparities (contiguous, so a group touches 2D
 * consecutive bytes). Lines are independent, so every group runs on its own.
 */
#include "launch.cuh"
#include "stereo_math.h"

#define AGG_BLOCK 128

template <int G>
static __device__ __forceinline__ int group_min(int v, unsigned mask)
{
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1) {
        int o = __shfl_xor_sync(mask, v, off, G);
        v = o < v ? o : v;
    }
    return v;
}

template <int K, int G, bool CENSUS>
static __global__ void __launch_bounds__(AGG_BLOCK)
k_aggregate(sgm_args a, int dir, int store, int nlines)
{
    const int w = a.width, h = a.height, D = K * G;
    int gid = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    int lane = threadIdx.x & (G - 1);
    if (gid >= nlines)
        return; /* whole groups leave together: G divides the block and the warp */
    unsigned mask = G == 32 ? 0xffffffffu : (((1u << G) - 1) << (threadIdx.x & 31 & ~(G - 1)));
    int x, y, dx, dy;
    stereo_sgm_line_start(dir, gid, w, h, &x, &y);
    stereo_sgm_direction(dir, &dx, &dy);
    const int k0 = lane * K;
    int prev[K], cur[K];
    int min_prev = 0, grey_prev = 0;
    for (bool first = true; x >= 0 && x < w && y >= 0 && y < h; x += dx, y += dy, first = false) {
        size_t p = (size_t)y * w + x;
        int cost[K];
        /* stage 4: C(x, y, d) for d = dmin + k, max_cost where x - d < 0 */
        int xr0 = x - a.dmin - k0;
        if (CENSUS) {
            uint64_t cl = a.census_l[p];
            const uint64_t *cr = a.census_r + (size_t)y * w;
#pragma unroll
            for (int i = 0; i < K; i++)
                cost[i] = xr0 - i >= 0 ? __popcll(cl ^ cr[xr0 - i]) : a.max_cost;
        } else {
            int rl = a.rank_l[p];
            const uint8_t *rr = a.rank_r + (size_t)y * w;
#pragma unroll
            for (int i = 0; i < K; i++)
                cost[i] = xr0 - i >= 0 ? abs(rl - (int)rr[xr0 - i]) : a.max_cost;
        }
        int g = a.grey[p];
        if (first) {
#pragma unroll
            for (int i = 0; i < K; i++)
                cur[i] = cost[i];
        } else {
            int below = __shfl_up_sync(mask, prev[K - 1], 1, G);  /* L(k0 - 1) */
            int above = __shfl_down_sync(mask, prev[0], 1, G);    /* L(k0 + K) */
            if (lane == 0)
                below = STEREO_SGM_FAR;
            if (lane == G - 1)
                above = STEREO_SGM_FAR;
            int jump = min_prev + stereo_p2_adaptive(a.p1, a.p2, a.p2_adapt, g - grey_prev);
#pragma unroll
            for (int i = 0; i < K; i++) {
                int km1 = i > 0 ? prev[i - 1] : below;
                int kp1 = i < K - 1 ? prev[i + 1] : above;
                cur[i] = stereo_sgm_step(cost[i], prev[i], km1, kp1, a.p1, jump, min_prev);
            }
        }
        int m = cur[0];
#pragma unroll
        for (int i = 1; i < K; i++)
            m = cur[i] < m ? cur[i] : m;
        min_prev = group_min<G>(m, mask);
        uint16_t *sp = a.S + p * D + k0;
#pragma unroll
        for (int i = 0; i < K; i++)
            sp[i] = (uint16_t)(store ? cur[i] : sp[i] + cur[i]);
#pragma unroll
        for (int i = 0; i < K; i++)
            prev[i] = cur[i];
        grey_prev = g;
    }
}

template <int K, int G>
static cudaError_t launch_kg(const sgm_args *a, int dir, int store, cudaStream_t stream)
{
    int nlines = stereo_sgm_line_count(dir, a->width, a->height);
    unsigned blocks = (unsigned)(((size_t)nlines * G + AGG_BLOCK - 1) / AGG_BLOCK);
    if (a->cost == STEREO_COST_CENSUS)
        k_aggregate<K, G, true><<<blocks, AGG_BLOCK, 0, stream>>>(*a, dir, store, nlines);
    else
        k_aggregate<K, G, false><<<blocks, AGG_BLOCK, 0, stream>>>(*a, dir, store, nlines);
    return cudaGetLastError();
}

cudaError_t launch_aggregate(const sgm_args *a, int dir, int store, cudaStream_t stream)
{
    /* G = 32 lanes when D is a multiple of 32, else 16; K = D / G disparities per lane */
    switch (a->ndisp) {
    case 16: return launch_kg<1, 16>(a, dir, store, stream);
    case 32: return launch_kg<1, 32>(a, dir, store, stream);
    case 48: return launch_kg<3, 16>(a, dir, store, stream);
    case 64: return launch_kg<2, 32>(a, dir, store, stream);
    case 80: return launch_kg<5, 16>(a, dir, store, stream);
    case 96: return launch_kg<3, 32>(a, dir, store, stream);
    case 112: return launch_kg<7, 16>(a, dir, store, stream);
    case 128: return launch_kg<4, 32>(a, dir, store, stream);
    case 144: return launch_kg<9, 16>(a, dir, store, stream);
    case 160: return launch_kg<5, 32>(a, dir, store, stream);
    case 176: return launch_kg<11, 16>(a, dir, store, stream);
    case 192: return launch_kg<6, 32>(a, dir, store, stream);
    case 208: return launch_kg<13, 16>(a, dir, store, stream);
    case 224: return launch_kg<7, 32>(a, dir, store, stream);
    case 240: return launch_kg<15, 16>(a, dir, store, stream);
    case 256: return launch_kg<8, 32>(a, dir, store, stream);
    }
    return cudaErrorInvalidValue;
}
