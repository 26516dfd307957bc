/* SPDX-License-Identifier: Apache-2.0 */
/* pair_cost.cuh — the matching cost C(x, y, k) of the pair (sgm.h) computed from the stage's
 * transformed images, one voxel at a time: block matching's box sums (block.cu) and the
 * coarse-to-fine mode's band costs (band.cu) read it (CUDA sources only). */
#ifndef STEREO_PAIR_COST_CUH
#define STEREO_PAIR_COST_CUH

#include "launch.cuh"
#include "stereo_math.h"

static __device__ __forceinline__ int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* C(x, y, k) (sgm.h): row = y * w; max_cost where x - d < 0. KIND is block_args.cost_kind. */
template <int KIND>
static __device__ __forceinline__ int pair_cost(const sgm_args &a, size_t row, int x, int k)
{
    if (KIND == BLOCK_COST_VOLUME) /* the voxel as the volume holds it, x - d < 0 included */
        return __ldg(a.cost_vol + (row + x) * a.ndisp + k);
    const int xr = x - a.dmin - k;
    if (xr < 0)
        return a.max_cost;
    if (KIND == 0) { /* rank: |rankL - rankR(x - d)| */
        int v = (int)__ldg(a.rank_l + row + x) - (int)__ldg(a.rank_r + row + xr);
        return v < 0 ? -v : v;
    }
    if (KIND == 1) /* census: popcount(censusL ^ censusR(x - d)) */
        return __popcll(__ldg(a.census_l + row + x) ^ __ldg(a.census_r + row + xr));
    if (KIND == COST_KIND_ADCENSUS) /* census distance plus the weighted grey difference */
        return stereo_adcensus_cost(
            __popcll(__ldg(a.census_l + row + x) ^ __ldg(a.census_r + row + xr)),
            __ldg(a.grey + row + x), __ldg(a.ad_lut + __ldg(a.grey_r + row + xr)), a.ad_weight,
            a.max_cost);
    if (KIND == 2) { /* ad, mi: table[IL * 256 + IR(x - d)], grey values in the rank rows; mi
                      * with tiles: the left pixel's table (mi.h) */
        const uint8_t *table = a.cost_table;
        if (a.table_grid > 1)
            table += (size_t)stereo_mi_table(x, (int)(row / (size_t)a.width), a.width, a.height,
                                             a.table_grid) * 65536;
        return __ldg(table + (int)__ldg(a.rank_l + row + x) * 256 + __ldg(a.rank_r + row + xr));
    }
    /* KIND == 3, bt: word = I | lo << 8 | hi << 16 in the census rows */
    const uint64_t l = __ldg(a.census_l + row + x), r = __ldg(a.census_r + row + xr);
    return stereo_bt_cost((int)(l & 255), (int)(l >> 8 & 255), (int)(l >> 16 & 255),
                          (int)(r & 255), (int)(r >> 8 & 255), (int)(r >> 16 & 255), a.max_cost);
}

#endif
