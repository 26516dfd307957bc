/* SPDX-License-Identifier: Apache-2.0 */
/* multiview.cu — stage 4 with more than two views on the GPU: the multi-baseline matching cost
 * (multiview.h), bit for bit as the CPU reference (multiview.c):
 *
 *   k_mview_cost    mview_cost_rows over every row: one thread per 4 consecutive voxels (x, k..k+3)
 *                   of a row (consecutive threads = consecutive k groups, so the 32-bit writes
 *                   of the cost volume are coalesced). Each sample every other view with the
 *                   sampling rule (stereo_view_offset, stereo_view_cost_lerp), skips the views
 *                   that do not see (x, d), and writes the mean over all seeing views
 *                   (stereo_view_mean) and, for the sides rule, the two sides' means
 *                   (STEREO_VIEW_UNSEEN where none of a side's views sees (x, d)) into pos / neg.
 *   k_mview_select  mview_select_rows over every row (sides rule only, after k_mview_cost): the
 *                   5 x 5 box sums of pos and neg around (x, y) (the part inside the image, an
 *                   unseen mean counting as max_cost) and stereo_view_select, in place on the
 *                   cost volume (each thread reads and writes only its own voxel of it). The
 *                   sums are separable: a walk down the rows keeps each column's vertical sum
 *                   (one row in, one out per step), and a block adds its columns' neighbours in
 *                   shared memory (below).
 *
 * adcensus reads each view's census word and grey value and its grey mapping M_v (ad_lut[v],
 * launch_grey_match of the reference and view v). bt's range [lo, hi] of a pixel is formed on the
 * fly from its row (stereo_bt_range, a missing neighbour replaced by the pixel itself, as
 * sgm_bt_row_range). Every pixel read lies inside its
 * w * h image (the sampling rule reads x - o and x - o - 1 only where the view sees (x, d)), so
 * the view images need no padding.
 *
 * Measured on the H100 (640x480 D128 8 paths, 3 views 1,-1, rank, the stage's 'cost volume'
 * stage; docs/results-gpu.md): with one thread per voxel and the 25-voxel box sums per side the
 * sides rule took 1.54 ms on all SMs and 12.5 ms on 16 SMs (compute_87), sum 0.30 / 2.41 ms.
 */
#include <limits.h>

#include "launch.cuh"
#include "stereo_math.h"

#define MVIEW_THREADS 256
/* rows per launch grid (gridDim.y): taller images loop over their rows in steps of this */
#define MVIEW_MAX_GRID_ROWS 65535

/* The cost kinds the kernels are compiled for (template argument). */
enum { MV_RANK, MV_CENSUS, MV_AD, MV_BT, MV_ADCENSUS };

/* bt's range of pixel x of a grey row of width w */
static __device__ __forceinline__ void mview_bt_range(const uint8_t *row, int w, int x, int *lo,
                                                      int *hi)
{
    stereo_bt_range(__ldg(row + (x > 0 ? x - 1 : x)), __ldg(row + x),
                    __ldg(row + (x + 1 < w ? x + 1 : x)), lo, hi);
}

/* C_v(x, xv) (multiview.c's pair_cost): the two-view cost between the reference at x and view v
 * at xv, both of the row starting at `row`; r0 / c0 / lo0 / hi0 are the reference pixel's value,
 * census word and bt range, read once per thread (adcensus reads r0 and c0). */
template <int KIND>
static __device__ __forceinline__ int mview_pair_cost(const mview_args &m, int v, size_t row,
                                                      int x, int xv, int r0, uint64_t c0,
                                                      int lo0, int hi0)
{
    if (KIND == MV_CENSUS)
        return __popcll(c0 ^ __ldg(m.bits[v] + row + xv));
    const int rv = __ldg(m.vals[v] + row + xv);
    if (KIND == MV_ADCENSUS) /* census distance plus the weighted grey difference, M_v(I_v) */
        return stereo_adcensus_cost(__popcll(c0 ^ __ldg(m.bits[v] + row + xv)), r0,
                                    __ldg(m.ad_lut[v] + rv), m.ad_weight, m.max_cost);
    if (KIND == MV_AD)
        return stereo_ad_cost(r0, rv, m.max_cost);
    if (KIND == MV_BT) {
        int lov, hiv;
        mview_bt_range(m.grey[v] + row, m.width, xv, &lov, &hiv);
        return stereo_bt_cost(r0, lo0, hi0, rv, lov, hiv, m.max_cost);
    }
    const int t = r0 - rv; /* rank: |rank0 - rankv|, no cap (as the two-view rank cost) */
    return t < 0 ? -t : t;
}

/* stereo_view_mean without an integer division (a division by a run-time n is a long
 * instruction sequence, and the cost kernel takes up to three per voxel): for 1 <= n <= 8 and
 * 0 <= x = sum + n / 2 < 8192, floor(x * RN(1 / n) + 1/64) in single precision is floor(x / n).
 * The two roundings put the product within x / n * 2^-23 < 1/1024 of x / n, so adding 1/64
 * lifts an exact quotient that came out just below its integer and leaves any other (its
 * fraction is at most 7/8) below the next one. Sums here are at most 7 * 224 (rank 15 x 15).
 * test-mview-cuda checks every x < 8192 and n <= 8 against the division. */
static __device__ __forceinline__ int mview_mean(int sum, int n, int max_cost)
{
    if (n <= 0)
        return max_cost;
    return (int)__fadd_rn(__fmul_rn((float)(sum + n / 2), __frcp_rn((float)n)), 1.0f / 64);
}

/* Voxels (x, dmin + k .. + MVIEW_K - 1) of row y per thread: each thread reads its reference
 * pixel once and writes MVIEW_K costs (and side means) as one 32-bit word each. Consecutive
 * threads take consecutive k groups, then x; blockIdx.y the rows, + gridDim.y, ... */
#define MVIEW_K 4
template <int KIND, bool SIDES>
static __global__ void k_mview_cost(const mview_args m, uint8_t *__restrict__ cost,
                                    uint8_t *__restrict__ pos, uint8_t *__restrict__ neg)
{
    const int w = m.width, D = m.ndisp, groups = D / MVIEW_K;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= w * groups)
        return;
    const int x = i / groups, k0 = (i - x * groups) * MVIEW_K;
    for (int y = blockIdx.y; y < m.height; y += gridDim.y) {
        const size_t row = (size_t)y * w;
        int r0 = 0, lo0 = 0, hi0 = 0;
        uint64_t c0 = 0;
        if (KIND == MV_CENSUS || KIND == MV_ADCENSUS)
            c0 = __ldg(m.bits[0] + row + x);
        if (KIND != MV_CENSUS)
            r0 = __ldg(m.vals[0] + row + x);
        if (KIND == MV_BT)
            mview_bt_range(m.grey[0] + row, w, x, &lo0, &hi0);
        uint32_t wc = 0, wp = 0, wn = 0;
#pragma unroll
        for (int j = 0; j < MVIEW_K; j++) {
            const int d = m.dmin + k0 + j;
            /* the sums and counts of the seeing views with b > 0 (p) and b < 0 (n); scalars,
             * not arrays indexed by the side, so that they stay in registers */
            int sum_p = 0, cnt_p = 0, sum_n = 0, cnt_n = 0;
            for (int v = 1; v < m.views; v++) {
                int o, f;
                stereo_view_offset(m.baseline[v], d, &o, &f);
                const int xa = x - o;
                if (xa < (f ? 1 : 0) || xa >= w)
                    continue; /* the view does not see (x, d) */
                int cv = mview_pair_cost<KIND>(m, v, row, x, xa, r0, c0, lo0, hi0);
                if (f)
                    cv = stereo_view_cost_lerp(
                        cv, mview_pair_cost<KIND>(m, v, row, x, xa - 1, r0, c0, lo0, hi0), f);
                if (m.baseline[v] < 0)
                    sum_n += cv, cnt_n++;
                else
                    sum_p += cv, cnt_p++;
            }
            wc |= (uint32_t)mview_mean(sum_p + sum_n, cnt_p + cnt_n, m.max_cost) << (8 * j);
            if (SIDES) {
                wp |= (uint32_t)(cnt_p ? mview_mean(sum_p, cnt_p, m.max_cost)
                                       : STEREO_VIEW_UNSEEN) << (8 * j);
                wn |= (uint32_t)(cnt_n ? mview_mean(sum_n, cnt_n, m.max_cost)
                                       : STEREO_VIEW_UNSEEN) << (8 * j);
            }
        }
        const size_t o = (row + x) * D + k0; /* a multiple of 4: D is a multiple of 16 */
        *(uint32_t *)(cost + o) = wc;
        if (SIDES) {
            *(uint32_t *)(pos + o) = wp;
            *(uint32_t *)(neg + o) = wn;
        }
    }
}

/* The sides rule's selection (mview_select_rows). A block covers SEL_TX columns (plus
 * STEREO_VIEW_BOX_RADIUS on each side) and SEL_K disparities, one thread per (column, k):
 * consecutive threads take consecutive k, so a column's SEL_K bytes are one 32-byte sector. It
 * walks SEL_ROWS rows down the image keeping each column's vertical sum of the two sides' means
 * over rows y - R .. y + R (the part inside the image; an unseen mean counts max_cost): a row
 * entering and a row leaving per step instead of the window's 25 voxels. Each step the vertical
 * sums go to shared memory, and the block's own columns add their 2R + 1 neighbours' (columns
 * outside the image count nothing) into the box sums stereo_view_select takes. */
#define SEL_TX 16
#define SEL_K 32
#define SEL_ROWS 32
#define SEL_COLS (SEL_TX + 2 * STEREO_VIEW_BOX_RADIUS)
static __device__ __forceinline__ int side_value(uint8_t v, int max_cost)
{
    return v == STEREO_VIEW_UNSEEN ? max_cost : v;
}

static __global__ void k_mview_select(const uint8_t *__restrict__ pos,
                                      const uint8_t *__restrict__ neg, uint8_t *__restrict__ cost,
                                      int w, int h, int D, int max_cost, int cost_kind)
{
    const int R = STEREO_VIEW_BOX_RADIUS;
    __shared__ int vp[SEL_COLS][SEL_K], vn[SEL_COLS][SEL_K];
    const int kk = threadIdx.x % SEL_K, c = threadIdx.x / SEL_K; /* c: 0 .. SEL_COLS - 1 */
    const int k = blockIdx.y * SEL_K + kk;
    const int x = blockIdx.x * SEL_TX + c - R;
    const int y0 = blockIdx.z * SEL_ROWS, y1 = min(y0 + SEL_ROWS, h);
    const bool here = k < D && x >= 0 && x < w; /* the column holds voxels */
    const size_t plane = (size_t)w * D;         /* one row of the volume */
    const size_t col = ((size_t)(here ? x : 0)) * D + (k < D ? k : 0);
    /* the vertical sums at y0: rows y0 - R .. y0 + R inside the image */
    int sp = 0, sn = 0;
    if (here)
        for (int yy = max(y0 - R, 0); yy <= min(y0 + R, h - 1); yy++) {
            sp += side_value(__ldg(pos + yy * plane + col), max_cost);
            sn += side_value(__ldg(neg + yy * plane + col), max_cost);
        }
    const bool own = here && c >= R && c < R + SEL_TX; /* the block's own columns */
    for (int y = y0; y < y1; y++) {
        if (y > y0 && here) { /* row y + R enters, row y - R - 1 leaves */
            if (y + R < h) {
                sp += side_value(__ldg(pos + (y + R) * plane + col), max_cost);
                sn += side_value(__ldg(neg + (y + R) * plane + col), max_cost);
            }
            if (y - R - 1 >= 0) {
                sp -= side_value(__ldg(pos + (y - R - 1) * plane + col), max_cost);
                sn -= side_value(__ldg(neg + (y - R - 1) * plane + col), max_cost);
            }
        }
        vp[c][kk] = here ? sp : 0;
        vn[c][kk] = here ? sn : 0;
        __syncthreads();
        if (own) {
            int bp = 0, bn = 0;
#pragma unroll
            for (int j = -R; j <= R; j++) {
                bp += vp[c + j][kk];
                bn += vn[c + j][kk];
            }
            /* the window's pixels inside the image, for the grey costs' floor */
            const int pixels = (min(x + R, w - 1) - max(x - R, 0) + 1) *
                               (min(y + R, h - 1) - max(y - R, 0) + 1);
            const size_t o = y * plane + col;
            cost[o] = (uint8_t)stereo_view_select(cost[o], __ldg(pos + o), __ldg(neg + o), bp, bn,
                                                  stereo_view_margin(cost_kind, pixels));
        }
        __syncthreads();
    }
}

/* For test-mview-cuda: out[n * 8192 + x] = mview_mean(x - n / 2, n, 255) for n = 1..8 and
 * x = n / 2 .. 8191 (out has 9 * 8192 ints). */
static __global__ void k_mean_table(int *out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, n = i / 8192, x = i % 8192;
    if (n >= 1 && n <= 8 && x >= n / 2)
        out[i] = mview_mean(x - n / 2, n, 255);
}

cudaError_t mview_mean_table(int *out)
{
    k_mean_table<<<9 * 8192 / 256, 256>>>(out);
    return cudaGetLastError();
}

/* The inputs the cost kind reads are there for every view. */
static int mview_inputs_given(const mview_args *m)
{
    for (int v = 0; v < m->views; v++) {
        if (stereo_cost_has_census(m->cost) && !m->bits[v])
            return 0;
        if (m->cost != STEREO_COST_CENSUS && !m->vals[v])
            return 0;
        if (m->cost == STEREO_COST_BT && !m->grey[v])
            return 0;
        if (m->cost == STEREO_COST_ADCENSUS && v > 0 && !m->ad_lut[v])
            return 0;
    }
    return 1;
}

cudaError_t launch_mview_cost(const mview_args *m, uint8_t *cost, uint8_t *pos, uint8_t *neg,
                              cudaStream_t stream)
{
    if (!m || !cost || m->width < 1 || m->height < 1 || m->ndisp < 1 || m->views < 3 ||
        m->views > STEREO_MAX_VIEWS)
        return cudaErrorInvalidValue;
    if (m->cost != STEREO_COST_RANK && m->cost != STEREO_COST_CENSUS &&
        m->cost != STEREO_COST_AD && m->cost != STEREO_COST_BT &&
        m->cost != STEREO_COST_ADCENSUS)
        return cudaErrorInvalidValue;
    const int sides = m->combine == STEREO_COMBINE_SIDES;
    if (!sides && m->combine != STEREO_COMBINE_SUM)
        return cudaErrorInvalidValue;
    if ((sides && (!pos || !neg)) || !mview_inputs_given(m))
        return cudaErrorInvalidValue;
    if (m->ndisp % MVIEW_K || (size_t)m->width * m->ndisp > INT_MAX)
        return cudaErrorInvalidValue;
    const size_t lanes = (size_t)m->width * (m->ndisp / MVIEW_K);
    const dim3 grid((unsigned)((lanes + MVIEW_THREADS - 1) / MVIEW_THREADS),
                    (unsigned)(m->height < MVIEW_MAX_GRID_ROWS ? m->height : MVIEW_MAX_GRID_ROWS));
    uint8_t *p = sides ? pos : NULL, *q = sides ? neg : NULL;
#define MVIEW_LAUNCH(KIND)                                                                 \
    (sides ? k_mview_cost<KIND, true><<<grid, MVIEW_THREADS, 0, stream>>>(*m, cost, p, q)  \
           : k_mview_cost<KIND, false><<<grid, MVIEW_THREADS, 0, stream>>>(*m, cost, p, q))
    switch (m->cost) {
    case STEREO_COST_RANK: MVIEW_LAUNCH(MV_RANK); break;
    case STEREO_COST_CENSUS: MVIEW_LAUNCH(MV_CENSUS); break;
    case STEREO_COST_AD: MVIEW_LAUNCH(MV_AD); break;
    case STEREO_COST_ADCENSUS: MVIEW_LAUNCH(MV_ADCENSUS); break;
    default: MVIEW_LAUNCH(MV_BT); break;
    }
#undef MVIEW_LAUNCH
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || !sides)
        return e;
    const dim3 sgrid((unsigned)((m->width + SEL_TX - 1) / SEL_TX),
                     (unsigned)((m->ndisp + SEL_K - 1) / SEL_K),
                     (unsigned)((m->height + SEL_ROWS - 1) / SEL_ROWS));
    if (sgrid.z > 65535)
        return cudaErrorInvalidValue;
    k_mview_select<<<sgrid, SEL_COLS * SEL_K, 0, stream>>>(pos, neg, cost, m->width, m->height,
                                                           m->ndisp, m->max_cost, (int)m->cost);
    return cudaGetLastError();
}
