/* SPDX-License-Identifier: Apache-2.0 */
/* multiview.cu — stage 4 with more than two views on the GPU: the multi-baseline matching cost
 * (multiview.h), bit for bit as the CPU reference (multiview.c):
 *
 *   k_mview_cost    mview_cost_rows over every row: one thread per voxel (x, k) of a row
 *                   (consecutive threads = consecutive k, so the writes of the cost volume are
 *                   coalesced). Each thread samples every other view with the sampling rule
 *                   (stereo_view_offset, stereo_view_cost_lerp), skips the views that do not
 *                   see (x, d), and writes the mean over all seeing views (stereo_view_mean) and,
 *                   for the sides rule, the two sides' means (STEREO_VIEW_UNSEEN where none of a
 *                   side's views sees (x, d)) into pos / neg.
 *   k_mview_select  mview_select_rows over every row (sides rule only, after k_mview_cost): the
 *                   5 x 5 box sums of pos and neg around (x, y) (the part inside the image, an
 *                   unseen mean counting as max_cost) and stereo_view_select, in place on the
 *                   cost volume (each thread reads and writes only its own voxel of it).
 *
 * bt's range [lo, hi] of a pixel is formed on the fly from its row (stereo_bt_range, a missing
 * neighbour replaced by the pixel itself, as sgm_bt_row_range). Every pixel read lies inside its
 * w * h image (the sampling rule reads x - o and x - o - 1 only where the view sees (x, d)), so
 * the view images need no padding. The box sums read 25 voxels per side and voxel; a separable
 * version is a later optimisation.
 */
#include "launch.cuh"
#include "stereo_math.h"

#define MVIEW_THREADS 256
/* rows per launch grid (gridDim.y): taller images loop over their rows in steps of this */
#define MVIEW_MAX_GRID_ROWS 65535

/* The cost kinds the kernels are compiled for (template argument). */
enum { MV_RANK, MV_CENSUS, MV_AD, MV_BT };

/* bt's range of pixel x of a grey row of width w */
static __device__ __forceinline__ void mview_bt_range(const uint8_t *row, int w, int x, int *lo,
                                                      int *hi)
{
    stereo_bt_range(__ldg(row + (x > 0 ? x - 1 : x)), __ldg(row + x),
                    __ldg(row + (x + 1 < w ? x + 1 : x)), lo, hi);
}

/* C_v(x, xv) (multiview.c's pair_cost): the two-view cost between the reference at x and view v
 * at xv, both of the row starting at `row`; r0 / lo0 / hi0 are the reference pixel's value and
 * bt range, read once per thread. */
template <int KIND>
static __device__ __forceinline__ int mview_pair_cost(const mview_args &m, int v, size_t row,
                                                      int x, int xv, int r0, uint64_t c0,
                                                      int lo0, int hi0)
{
    if (KIND == MV_CENSUS)
        return __popcll(c0 ^ __ldg(m.bits[v] + row + xv));
    const int rv = __ldg(m.vals[v] + row + xv);
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

/* cost (and with sides pos / neg) of rows blockIdx.y, + gridDim.y, ... at lane i = x * D + k */
template <int KIND>
static __global__ void k_mview_cost(const mview_args m, uint8_t *__restrict__ cost,
                                    uint8_t *__restrict__ pos, uint8_t *__restrict__ neg)
{
    const int w = m.width, D = m.ndisp;
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)w * D)
        return;
    const int x = (int)(i / D), k = (int)(i % D), d = m.dmin + k;
    for (int y = blockIdx.y; y < m.height; y += gridDim.y) {
        const size_t row = (size_t)y * w;
        int r0 = 0, lo0 = 0, hi0 = 0;
        uint64_t c0 = 0;
        if (KIND == MV_CENSUS)
            c0 = __ldg(m.bits[0] + row + x);
        else
            r0 = __ldg(m.vals[0] + row + x);
        if (KIND == MV_BT)
            mview_bt_range(m.grey[0] + row, w, x, &lo0, &hi0);
        /* the sums and counts of the seeing views with b > 0 (p) and b < 0 (n); scalars, not
         * arrays indexed by the side, so that they stay in registers */
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
        const size_t o = row * D + i;
        cost[o] = (uint8_t)stereo_view_mean(sum_p + sum_n, cnt_p + cnt_n, m.max_cost);
        if (pos) {
            pos[o] = cnt_p ? (uint8_t)stereo_view_mean(sum_p, cnt_p, m.max_cost)
                           : (uint8_t)STEREO_VIEW_UNSEEN;
            neg[o] = cnt_n ? (uint8_t)stereo_view_mean(sum_n, cnt_n, m.max_cost)
                           : (uint8_t)STEREO_VIEW_UNSEEN;
        }
    }
}

/* The sides rule's selection (mview_select_rows) of rows blockIdx.y, + gridDim.y, ... at lane
 * i = x * D + k: the box sums of the sides' means over the window's part inside the image. */
static __global__ void k_mview_select(const uint8_t *__restrict__ pos,
                                      const uint8_t *__restrict__ neg, uint8_t *__restrict__ cost,
                                      int w, int h, int D, int max_cost, int cost_kind)
{
    const int R = STEREO_VIEW_BOX_RADIUS;
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)w * D)
        return;
    const int x = (int)(i / D), k = (int)(i % D);
    const int x0 = x - R > 0 ? x - R : 0, x1 = x + R < w - 1 ? x + R : w - 1;
    for (int y = blockIdx.y; y < h; y += gridDim.y) {
        const int y0 = y - R > 0 ? y - R : 0, y1 = y + R < h - 1 ? y + R : h - 1;
        int bp = 0, bn = 0;
        for (int yy = y0; yy <= y1; yy++)
            for (int xx = x0; xx <= x1; xx++) {
                const size_t j = ((size_t)yy * w + xx) * D + k;
                const int p = __ldg(pos + j), q = __ldg(neg + j);
                bp += p == STEREO_VIEW_UNSEEN ? max_cost : p;
                bn += q == STEREO_VIEW_UNSEEN ? max_cost : q;
            }
        const size_t o = (size_t)y * w * D + i;
        const int margin = stereo_view_margin(cost_kind, (x1 - x0 + 1) * (y1 - y0 + 1));
        cost[o] = (uint8_t)stereo_view_select(cost[o], __ldg(pos + o), __ldg(neg + o), bp, bn,
                                              margin);
    }
}

/* The inputs the cost kind reads are there for every view. */
static int mview_inputs_given(const mview_args *m)
{
    for (int v = 0; v < m->views; v++) {
        if (m->cost == STEREO_COST_CENSUS ? !m->bits[v] : !m->vals[v])
            return 0;
        if (m->cost == STEREO_COST_BT && !m->grey[v])
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
        m->cost != STEREO_COST_AD && m->cost != STEREO_COST_BT)
        return cudaErrorInvalidValue;
    const int sides = m->combine == STEREO_COMBINE_SIDES;
    if (!sides && m->combine != STEREO_COMBINE_SUM)
        return cudaErrorInvalidValue;
    if ((sides && (!pos || !neg)) || !mview_inputs_given(m))
        return cudaErrorInvalidValue;
    const size_t lanes = (size_t)m->width * m->ndisp;
    const dim3 grid((unsigned)((lanes + MVIEW_THREADS - 1) / MVIEW_THREADS),
                    (unsigned)(m->height < MVIEW_MAX_GRID_ROWS ? m->height : MVIEW_MAX_GRID_ROWS));
    uint8_t *p = sides ? pos : NULL, *q = sides ? neg : NULL;
    switch (m->cost) {
    case STEREO_COST_RANK:
        k_mview_cost<MV_RANK><<<grid, MVIEW_THREADS, 0, stream>>>(*m, cost, p, q);
        break;
    case STEREO_COST_CENSUS:
        k_mview_cost<MV_CENSUS><<<grid, MVIEW_THREADS, 0, stream>>>(*m, cost, p, q);
        break;
    case STEREO_COST_AD:
        k_mview_cost<MV_AD><<<grid, MVIEW_THREADS, 0, stream>>>(*m, cost, p, q);
        break;
    default:
        k_mview_cost<MV_BT><<<grid, MVIEW_THREADS, 0, stream>>>(*m, cost, p, q);
        break;
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || !sides)
        return e;
    k_mview_select<<<grid, MVIEW_THREADS, 0, stream>>>(pos, neg, cost, m->width, m->height,
                                                       m->ndisp, m->max_cost, (int)m->cost);
    return cudaGetLastError();
}
