/* SPDX-License-Identifier: Apache-2.0 */
/* sgm.cu — stages 4 to 7 on the GPU: matching cost on the fly, the SGM recurrence along one
 * direction's lines (sgm.h), and in the last direction's pass the winner-takes-all and the right
 * disparity (disparity.h).
 *
 * A group of G lanes (8, 16 or 32, inside one warp) walks one line; lane t holds the K
 * consecutive disparities k = t*K .. t*K+K-1 (G * K = D, K even) as K/2 pairs of 16-bit values in
 * 32-bit registers, so the recurrence runs as 16x2 SIMD (Hopper: DPX min-plus instructions).
 * Per step: the costs of its K disparities, the neighbours k-1 / k+1 across lanes by one shuffle
 * each, the minimum of the new L over the group by a butterfly reduction, and S += L for its K
 * disparities (contiguous: a group touches 2D consecutive bytes, in vector loads and stores).
 * Lines are independent, so every group runs on its own. All 16-bit lanes stay below 0x8400:
 * L <= max_cost + P2 <= 1247, the absent-neighbour sentinel 0x7fff plus P1 <= 1022, S <= 9976.
 *
 * Latency: the loads of step i + PF (S and the cost inputs) are issued while step i computes, so
 * a line keeps PF steps of memory traffic in flight instead of waiting for each load.
 *
 * Direction order: 2 or 4 branches run concurrently (a line is a long sequential chain, so one
 * direction alone has too few lines to keep the GPU busy), each into its own partial sum; an
 * extra branch's store replaces a read-modify-write, so the traffic stays the same. Direction 1
 * (right to left) runs last in FINAL mode: it adds its L to the branches' partial sums, which
 * makes S complete for the pixel, and instead of writing S back it
 *   - picks the left disparity (argmin with ties to the smaller k, uniqueness, subpixel,
 *     confidence) by group reductions over packed keys (S << 9 | k), and
 *   - builds the right disparity by the diagonal search: walking right to left, slot j of a
 *     ring holds the best key so far for right pixel xr = x - dmin - j; at pixel x, slot k takes
 *     S(x, k); slot 0 is then complete (its last candidate, k = 0, is x itself) and is written;
 *     the ring then shifts down by one slot (one shuffle across lanes).
 * The complete S volume is therefore never written or read again.
 */
#include "sgm_walk.cuh"

/* Build: this file is compiled once per matching cost (build.ninja: -DSGM_CENSUS=0 for rank,
 * 1 for census), so that the two halves of its kernels (every D x mode instance) compile in
 * parallel on a 2-core machine, and a build for one more cost adds a translation unit instead of
 * lengthening this one: -DSGM_TABLE=1 (with SGM_CENSUS=0) is the table costs' (ad, mi), the rank
 * walk with its |rl - r| replaced by a table lookup (costs4, sgm_walk.cuh); -DSGM_BT=1 (with
 * SGM_CENSUS=1) bt's, the census walk on packed words (word_cost). The rank object
 * (both 0) also holds the launchers (launch_sgm, launch_sgm_final)
 * that pick the cost's half at run time. */
#ifndef SGM_CENSUS
#error "compile sgm.cu with -DSGM_CENSUS=0 (rank) or -DSGM_CENSUS=1 (census): see build.ninja"
#endif
#if SGM_VOLUME
#define SGM_LAUNCH_DIR launch_sgm_dir_volume
#elif SGM_CENSUS && SGM_BT
#define SGM_LAUNCH_DIR launch_sgm_dir_bt
#elif SGM_CENSUS
#define SGM_LAUNCH_DIR launch_sgm_dir_census
#elif SGM_TABLE
#define SGM_LAUNCH_DIR launch_sgm_dir_table
#else
#define SGM_LAUNCH_DIR launch_sgm_dir_rank
#endif

template <int K, int G, bool CENSUS, int MODE, int NB>
static __global__ void __launch_bounds__(AGG_BLOCK)
k_aggregate(sgm_args a, int dir, int nlines)
{
    __shared__ uint32_t jump_table[256];
    fill_jump_table(a, dir_penalty(a.dir_p1, dir), dir_penalty(a.dir_p2, dir), jump_table);
    int gid = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    if (gid >= nlines)
        return; /* whole groups leave together: G divides the block and the warp */
    unsigned mask = G == 32 ? 0xffffffffu : (((1u << G) - 1) << (threadIdx.x & 31 & ~(G - 1)));
    walk_line<K, G, CENSUS, MODE, NB>(a, dir, gid, threadIdx.x & (G - 1), mask, jump_table);
}

template <int K, int G, int MODE, int NB>
static cudaError_t launch_kgm(const sgm_args *a, int dir, cudaStream_t stream)
{
    int nlines = stereo_sgm_line_count(dir, a->width, a->height);
    unsigned blocks = (unsigned)(((size_t)nlines * G + AGG_BLOCK - 1) / AGG_BLOCK);
    k_aggregate<K, G, SGM_CENSUS != 0, MODE, NB><<<blocks, AGG_BLOCK, 0, stream>>>(*a, dir, nlines);
    return cudaGetLastError();
}

template <int K, int G>
static cudaError_t launch_kg(const sgm_args *a, int dir, int mode, cudaStream_t stream)
{
    switch (mode) {
    case MODE_STORE: return launch_kgm<K, G, MODE_STORE, 1>(a, dir, stream);
    case MODE_ADD: return launch_kgm<K, G, MODE_ADD, 1>(a, dir, stream);
    default:
        return a->branches == 4 ? launch_kgm<K, G, MODE_FINAL, 4>(a, dir, stream)
                                : launch_kgm<K, G, MODE_FINAL, 2>(a, dir, stream);
    }
}

cudaError_t SGM_LAUNCH_DIR(const sgm_args *a, int dir, int mode, cudaStream_t stream)
{
    SGM_DISPATCH(launch_kg, a, dir, mode, stream);
}

#if !SGM_CENSUS && !SGM_TABLE && !SGM_VOLUME
static cudaError_t launch_dir(const sgm_args *a, int dir, int mode, cudaStream_t stream)
{
    return a->cost_vol                   ? launch_sgm_dir_volume(a, dir, mode, stream)
           : a->cost == STEREO_COST_CENSUS ? launch_sgm_dir_census(a, dir, mode, stream)
           : a->cost == STEREO_COST_BT   ? launch_sgm_dir_bt(a, dir, mode, stream)
           : a->cost_table               ? launch_sgm_dir_table(a, dir, mode, stream)
                                         : launch_sgm_dir_rank(a, dir, mode, stream);
}

cudaError_t launch_sgm(const sgm_args *a, int paths, cudaStream_t *streams, cudaEvent_t fork,
                       cudaEvent_t *join)
{
    /* Directions 0, 2, 3, ..., paths-1 are spread round-robin over the branches (2 or 4); each
     * branch's first direction stores, its others add. All branches run at the same time;
     * direction 1 (launch_sgm_final) then adds every branch's partial sum and finishes (see the
     * top of this file).
     * With 4 paths and 4 branches the fourth branch stays empty: it gets a zero volume. */
    static const int order[7] = {0, 2, 3, 4, 5, 6, 7};
    int nb = a->branches;
    cudaError_t e = cudaEventRecord(fork, streams[0]);
    for (int b = 1; b < nb && e == cudaSuccess; b++)
        e = cudaStreamWaitEvent(streams[b], fork, 0);
    for (int b = paths - 1; b < nb && e == cudaSuccess; b++) /* branches without a direction */
        e = cudaMemsetAsync(a->S[b], 0, (size_t)a->width * a->height * a->ndisp * 2, streams[b]);
    for (int i = 0; i < paths - 1 && e == cudaSuccess; i++) {
        int b = i % nb;
        sgm_args one = *a;
        one.S[0] = a->S[b];
        e = launch_dir(&one, order[i], i < nb ? MODE_STORE : MODE_ADD, streams[b]);
    }
    for (int b = 1; b < nb && e == cudaSuccess; b++) {
        e = cudaEventRecord(join[b], streams[b]);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(streams[0], join[b], 0);
    }
    return e;
}

cudaError_t launch_sgm_final(const sgm_args *a, cudaStream_t stream)
{
    return launch_dir(a, 1, MODE_FINAL, stream);
}
#endif /* !SGM_CENSUS && !SGM_TABLE && !SGM_VOLUME */
