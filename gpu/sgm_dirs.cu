/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_dirs.cu — stages 4 to 7 on the GPU, per-direction design: every direction's L in its own
 * byte volume, then one pass that adds them and picks the disparities.
 *
 * When every L fits a byte (L <= max_cost + max(P2, P1 + 1) <= 255; true for the defaults,
 * sgm_fits_bytes in launch.cuh), the directions do not need to add into a 16-bit sum:
 *   1. k_dirs: one launch walks the lines of every direction at once (longest lines first,
 *      see dir_blocks), each storing its L as bytes into volume i (w * h * D bytes,
 *      pixel-major, D bytes per pixel). Directions are independent, so all their lines are in
 *      flight together (thousands of lines instead of one direction's hundreds) and no line
 *      waits for an S load: the walk only loads the small rank rows. Without DPX (Ampere,
 *      Orin) the lines are walked in the interleaved layout with half2 arithmetic
 *      (walk_line_il in sgm_walk.cuh); Hopper keeps the DPX walk (walk_line).
 *   2. k_wta_pk (D = 64, 128, 256; k_wta for the other D, and with STEREO_CUDA_WTA=scalar):
 *      the same pass as k_wta below with the sums kept in packed pairs (see k_wta_pk).
 *      k_wta: one block per row. Each group of G lanes walks one segment of the row from right
 *      to left, adds the volumes (S = sum of the directions' bytes, 16-bit) and finishes each
 *      pixel as the final pass of sgm.cu does (finish_pixel in sgm_walk.cuh): the left disparity
 *      is written at once; the right disparity's ring emits each right pixel's best key by
 *      atomicMin into a shared row (its candidates can lie in the next segment), and flushes
 *      what is left at the segment's end. After the block's barrier the row of right keys is
 *      complete and written.
 * Traffic per voxel: each direction writes one byte and k_wta reads it once: 2 * paths bytes
 * (16 with 8 paths), against ~28 for the branch design (sgm.cu) at 1280x960 with 4 branches.
 * Memory: paths * w * h * D bytes (the same as four 16-bit branch volumes with 8 paths).
 */
#include <stdlib.h>
#include <string.h>

#include "sgm_walk.cuh"

/* Build: compiled once per matching cost, like sgm.cu (-DSGM_CENSUS=0 / 1, build.ninja): each
 * object holds its cost's walks (k_dirs; SGM_TABLE=1: the table costs', ad and mi; SGM_CENSUS=1
 * with SGM_BT=1: bt's, on its packed words); the rank object also the sum passes (k_wta,
 * k_wta_pk: they read bytes and do not depend on the cost) and the launchers. */
#if !defined(SGM_CENSUS) || !defined(SGM_TABLE)
#error "compile sgm_dirs.cu with -DSGM_CENSUS=0|1 and -DSGM_TABLE=0|1: see build.ninja"
#endif

#define WTA_BLOCK 256

/* k_dirs' grid, longest lines first. Not every line fits on the GPU at once (1280x960: ~3250
 * warps, ~2100 resident on an H100) and blocks start in index order: if the long lines
 * started last they would run on alone at the end with the GPU mostly idle. So the straight
 * directions come first (the longer of rows and columns before the other), then the four
 * diagonal directions interleaved block by block, each walking its lines in order of
 * decreasing length (stereo_sgm_diag_line), which also gives the groups of a warp lines of
 * nearly equal length (the warp walks for its longest, walk_line). */
typedef struct {
    int dir[4];       /* the straight directions in grid order */
    int first[5];     /* first[i]: dir[i]'s first block; first[4]: the diagonals' first */
    int diag_blocks;  /* blocks per diagonal direction (0 with 4 paths; sizes the grid) */
} dir_blocks;

/* The interleaved walk (walk_line_il) where a lane's K is a multiple of 8 and the GPU has no
 * DPX; with DPX (Hopper) the consecutive layout's walk (walk_line), measured faster there:
 * 1280x960 D128 8 paths on the H100, 1.164 ms (walk_line) against 1.203 ms (walk_line_il). */
template <int K, int G, bool CENSUS, bool IL = K % 8 == 0>
struct dir_walker {
    static __device__ __forceinline__ void run(const sgm_args &a, int dir, int line, int lane,
                                               const uint32_t *jump_table, bool live)
    {
#if IL_DPX
        walk_line<K, G, CENSUS, MODE_STORE8, 1>(a, dir, line, lane, 0xffffffffu, jump_table, live);
#else
        walk_line_il<K, G, CENSUS>(a, dir, line, lane, jump_table, live);
#endif
    }
};
template <int K, int G, bool CENSUS>
struct dir_walker<K, G, CENSUS, false> {
    static __device__ __forceinline__ void run(const sgm_args &a, int dir, int line, int lane,
                                               const uint32_t *jump_table, bool live)
    {
        walk_line<K, G, CENSUS, MODE_STORE8, 1>(a, dir, line, lane, 0xffffffffu, jump_table, live);
    }
};

template <int K, int G, bool CENSUS>
static __global__ void __launch_bounds__(AGG_BLOCK) k_dirs(sgm_args a, dir_blocks t)
{
    __shared__ uint32_t jump_table[256];
    const int w = a.width, h = a.height, bid = blockIdx.x;
    int dir, block, nlines;
    if (bid < t.first[4]) {
        dir = t.dir[0], block = bid;
#pragma unroll
        for (int j = 1; j < 4; j++) /* constant indices: t stays in parameter memory */
            if (bid >= t.first[j])
                dir = t.dir[j], block = bid - t.first[j];
    } else {
        int b = bid - t.first[4];
        dir = 4 + b % 4;
        block = b / 4;
    }
    fill_jump_table(a, dir_penalty(a.dir_p1, dir), dir_penalty(a.dir_p2, dir), jump_table); /* dir: the block's */
    nlines = stereo_sgm_line_count(dir, w, h);
    const int rank = block * (AGG_BLOCK / G) + (int)threadIdx.x / G;
    /* a warp walks uniformly (walk_line): groups past the direction's last line come along idle;
     * warps with no line at all leave */
    if (__all_sync(0xffffffffu, rank >= nlines))
        return;
    const int line = rank >= nlines ? 0 : dir < 4 ? rank : stereo_sgm_diag_line(dir, rank, w, h);
    dir_walker<K, G, CENSUS>::run(a, dir, line, threadIdx.x & (G - 1), jump_table, rank < nlines);
}

#if !SGM_CENSUS && !SGM_TABLE && !SGM_VOLUME
/* One pixel's input of the sum + winner-takes-all pass. NP > 0: the NP directions' byte volumes
 * (L8), summed (times the path weights when a.weighted); NP = 0: a complete 16-bit S volume in
 * S[0] (block matching's box sums, launch_wta_volume), taken as it is. */
template <int K, int NP>
struct wta_step {
    uint32_t r[NP][byte_words<K>::R];
    __device__ __forceinline__ void load(const sgm_args &a, size_t off)
    {
#pragma unroll
        for (int v = 0; v < NP; v++)
            load_bytes<K>(a.L8 + v * a.vol + off, r[v]);
    }
    __device__ __forceinline__ void sum(const sgm_args &a, uint32_t (&tot)[K / 2]) const
    {
#pragma unroll
        for (int i = 0; i < K / 2; i++)
            tot[i] = 0;
        if (a.weighted) { /* uniform: the whole grid takes one side */
#pragma unroll
            for (int v = 0; v < NP; v++)
                add_bytes_weighted<K>(r[v], (uint32_t)a.dir_weight[v], tot);
        } else {
#pragma unroll
            for (int v = 0; v < NP; v++)
                add_bytes<K>(r[v], tot);
        }
    }
};

template <int K>
struct wta_step<K, 0> {
    uint32_t r[K / 2];
    __device__ __forceinline__ void load(const sgm_args &a, size_t off) { load_words(a.S[0] + off, r); }
    __device__ __forceinline__ void sum(const sgm_args &, uint32_t (&tot)[K / 2]) const
    {
#pragma unroll
        for (int i = 0; i < K / 2; i++)
            tot[i] = r[i];
    }
};

template <int K, int NP>
static __device__ __forceinline__ void wta_load(const sgm_args &a, size_t off, wta_step<K, NP> &s)
{
    s.load(a, off);
}

template <int K, int G, int NP>
static __global__ void __launch_bounds__(WTA_BLOCK) k_wta(sgm_args a)
{
    constexpr int W = K / 2, D = K * G;
    constexpr int RPS = sizeof(wta_step<K, NP>) / 4;    /* registers per step */
    constexpr int PF = RPS <= 16 ? 4 : RPS <= 32 ? 2 : 1; /* steps in flight */
    extern __shared__ uint32_t rk[];                    /* the row's right keys (S << 9 | k) */
    const int w = a.width, y = blockIdx.x;
    int xa, xb;
    begin_right_row<G, WTA_BLOCK / G>(rk, w, &xa, &xb);
    const int lane = threadIdx.x & (G - 1), k0 = lane * K;
    const unsigned mask = G == 32 ? 0xffffffffu : (((1u << G) - 1) << (threadIdx.x & 31 & ~(G - 1)));
    const int steps = xb - xa; /* may be <= 0: the group has no pixels */
    if (steps > 0) {
        const size_t p0 = (size_t)y * w + (xb - 1);
        wta_step<K, NP> ring[PF];
#pragma unroll
        for (int j = 0; j < PF; j++)
            if (j < steps)
                wta_load<K, NP>(a, (p0 - j) * D + k0, ring[j]);
        uint32_t right_best[K];
#pragma unroll
        for (int i = 0; i < K; i++)
            right_best[i] = KEY_EMPTY;
        for (int base = 0; base < steps; base += PF) {
#pragma unroll
            for (int j = 0; j < PF; j++) {
                const int step = base + j;
                if (step >= steps)
                    break;
                uint32_t tot[W];
                ring[j].sum(a, tot);
                if (step + PF < steps)
                    wta_load<K, NP>(a, (p0 - step - PF) * D + k0, ring[j]);
                finish_pixel<K, G>(a, tot, xb - 1 - step, y, lane, k0, mask, right_best, rk);
            }
        }
        /* right pixels whose remaining candidates lie left of the segment: slot i is right
         * pixel xa - 1 - dmin - (k0 + i) */
        if (a.disp_right) {
#pragma unroll
            for (int i = 0; i < K; i++) {
                int xr = xa - 1 - a.dmin - (k0 + i);
                if (xr >= 0 && right_best[i] != KEY_EMPTY)
                    atomicMin(&rk[xr], right_best[i]);
            }
        }
    }
    if (a.disp_right)
        write_right_row(a, rk, y);
}

/* ---- the sum + winner-takes-all pass in packed pairs (k_wta_pk) ----------------------------
 * The same results as k_wta, with fewer instructions per voxel (the pass is bound by instruction
 * issue on GPUs of few multiprocessors): a lane's K (8 or 16) sums are kept as K/2 words of two
 * 16-bit sums, E[r] = (S(4r), S(4r + 2)) and O[r] = (S(4r + 1), S(4r + 3)) relative to k0, in
 * T[2r] and T[2r + 1]. So word m holds disparities lo_k(m) = 2m - (m & 1) and lo_k(m) + 2.
 *  - the sum: the even and the odd bytes of each volume word are masked into such pairs and
 *    added (no carries: 8 * 255 < 2^16);
 *  - every sum is below 2048 (8 * 255), so the pairs compare and take minima as halves (il_min,
 *    il_le_mask: see walk_line_il), two sums per instruction;
 *  - the best: the group's minimum S1, then the first lane and in it the first disparity whose
 *    sum equals S1 (ties to the smaller disparity, as the key order of k_wta);
 *  - S2 (uniqueness): the minimum after adding 0x4000 to the pairs' halves within one disparity
 *    of the best (one IMAD per word from a per-pixel bit mask), so they can no longer win;
 *  - S(best - 1), S(best + 1) (subpixel): read by the group's lane 0 from the lanes' words,
 *    stored in shared memory for the pixel;
 *  - the right disparity: the ring of k_wta in the same packed layout, keeping per slot the best
 *    sum and the column x it came from (the disparity follows from x and the slot's right
 *    pixel); shifting the ring by one disparity moves O into E and builds O from two halves. */
#define PK_EMPTY 0x7bff7bffu /* the largest finite half: above every sum */
#define PK_PENALTY 0x4000u   /* added to excluded halves: 2.0 as a half, above every sum */

/* the disparity (relative to k0) in the low half of word m; the high half holds lo_k(m) + 2 */
static __device__ __forceinline__ constexpr int pk_lo_k(int m) { return 2 * m - (m & 1); }

template <int K, int G, int NP>
static __global__ void __launch_bounds__(WTA_BLOCK) k_wta_pk(sgm_args a)
{
    constexpr int W = K / 2, D = K * G;
    constexpr int RPS = NP * K / 4;                      /* registers per step */
    constexpr int PF = RPS <= 16 ? 4 : RPS <= 32 ? 2 : 1; /* steps in flight */
    extern __shared__ uint32_t smem[];
    uint32_t *rk = smem;                                 /* the row's right keys (S << 9 | k) */
    uint32_t *words = smem + ((a.width + 3) & ~3);       /* each thread's W words of a pixel */
    const int w = a.width, y = blockIdx.x;
    int xa, xb;
    begin_right_row<G, WTA_BLOCK / G>(rk, w, &xa, &xb);
    const int lane = threadIdx.x & (G - 1), k0 = lane * K;
    const int gbase = threadIdx.x & 31 & ~(G - 1);      /* the group's first lane in the warp */
    const unsigned full = 0xffffffffu;
    const int steps = xb - xa; /* may be <= 0: the group then only comes along (shuffles) */
    const int steps_all = warp_max(steps > 0 ? steps : 0);
    uint32_t *my_words = words + threadIdx.x * W;
    const uint32_t *group_words = words + (threadIdx.x - lane) * W;
    const size_t p0 = (size_t)y * w + (xb - 1);
    wta_step<K, NP> ring[PF];
#pragma unroll
    for (int j = 0; j < PF; j++)
        if (j < steps)
            wta_load<K, NP>(a, (p0 - j) * D + k0, ring[j]);
    uint32_t rv[W], rx[W]; /* the right ring: best sum and its column, per slot pair */
#pragma unroll
    for (int m = 0; m < W; m++)
        rv[m] = PK_EMPTY, rx[m] = 0;
    for (int base = 0; base < steps_all; base += PF) {
#pragma unroll
        for (int j = 0; j < PF; j++) {
            const int step = base + j;
            if (step >= steps_all)
                break;
            const bool on = step < steps;
            const int x = xb - 1 - step;
            /* the sums */
            uint32_t t[W];
#pragma unroll
            for (int r = 0; r < K / 4; r++) {
                uint32_t e = 0, o = 0;
#pragma unroll
                for (int v = 0; v < NP; v++) { /* bytes 0, 2 and 1, 3 as 16-bit pairs */
                    e += __byte_perm(ring[j].r[v][r], 0, 0x4240);
                    o += __byte_perm(ring[j].r[v][r], 0, 0x4341);
                }
                t[2 * r] = e, t[2 * r + 1] = o;
            }
            if (step + PF < steps)
                wta_load<K, NP>(a, (p0 - step - PF) * D + k0, ring[j]);
            /* S1 and the best disparity */
            uint32_t m2 = t[0];
#pragma unroll
            for (int m = 1; m < W; m++)
                m2 = il_min(m2, t[m]);
            m2 = il_group_min<G>(m2, full);
            uint32_t hit = 0; /* bit lo_k(m) / 16 + lo_k(m) + 2: that half equals S1 */
#pragma unroll
            for (int m = 0; m < W; m++)
                hit |= il_eq_mask(t[m], m2) & ((1u << pk_lo_k(m)) | (1u << (18 + pk_lo_k(m))));
            hit = (hit | hit >> 16) & 0xffffu;
            const unsigned lanes = (__ballot_sync(full, hit != 0) >> gbase) &
                                   (G == 32 ? full : (1u << (G & 31)) - 1u);
            const int first = __ffs(lanes) - 1; /* on: some lane of the group holds S1 */
            const int in_lane = __shfl_sync(full, __ffs(hit) - 1, first, G);
            const int best = first * K + in_lane;
            const uint32_t s1 = m2 & 0xffffu;
            /* S2: the minimum outside best - 1 .. best + 1 */
            const int rel = best - k0;
            uint32_t ex = rel >= -1 && rel <= K ? ((0x7u << (rel + 1)) >> 2) & ((1u << K) - 1u) : 0u;
            ex |= ex << 14;
            uint32_t m3 = PK_EMPTY;
#pragma unroll
            for (int m = 0; m < W; m++) {
                const int lk = pk_lo_k(m);
                uint32_t pen = (ex & ((1u << lk) | (1u << (lk + 16)))) * (1u << (14 - lk));
                m3 = il_min(m3, t[m] + pen);
            }
            const uint32_t s2 = il_group_min<G>(m3, full) & 0xffffu;
            /* the pixel's words for lane 0's S(best - 1), S(best + 1) */
#pragma unroll
            for (int m = 0; m < W; m += 4)
                *(uint4 *)(my_words + m) = make_uint4(t[m], t[m + 1], t[m + 2], t[m + 3]);
            __syncwarp();
            if (lane == 0 && on) {
                const size_t p = (size_t)y * w + x;
                int ok = x >= a.dmin && (!a.valid || a.valid[p]) &&
                         (a.uniqueness == 0 || stereo_unique(s1, s2, a.uniqueness));
                int v = STEREO_SUBPIXEL_SCALE * (a.dmin + best);
                if (a.subpixel && best > 0 && best < D - 1) {
                    const uint16_t *gw = (const uint16_t *)group_words;
                    int c[2];
#pragma unroll
                    for (int i = 0; i < 2; i++) {
                        const int k = best - 1 + 2 * i, kk = k % K;
                        const int m = 2 * (kk >> 2) + (kk & 1), h = (kk >> 1) & 1;
                        c[i] = gw[2 * ((k / K) * W + m) + h];
                    }
                    v += stereo_subpixel_offset(c[0], (int)s1, c[1]);
                }
                a.disp[p] = ok ? (int16_t)v : STEREO_INVALID;
                if (a.conf)
                    a.conf[p] = ok ? stereo_confidence_value(s1, s2) : 0;
            }
            __syncwarp();
            /* the right disparity: slot i of the ring is right pixel x - dmin - (k0 + i) */
            if (a.disp_right) {
                /* a group past its segment's end (on is the same in all its lanes) keeps its
                 * ring for the flush below; it only comes along for the shuffles */
                const uint32_t x2 = (uint32_t)x * 0x10001u;
                if (on) {
#pragma unroll
                    for (int m = 0; m < W; m++) {
                        const uint32_t le = il_le_mask(t[m], rv[m]); /* ties: smaller disparity */
                        rv[m] = il_min(t[m], rv[m]);
                        rx[m] = (x2 & le) | (rx[m] & ~le);
                    }
                }
                const int xr = x - a.dmin;
                if (lane == 0 && on && xr >= 0 && (rv[0] & 0xffffu) != (PK_EMPTY & 0xffffu))
                    atomicMin(&rk[xr], (rv[0] & 0xffffu) << 9 |
                                           (uint32_t)((int)(rx[0] & 0xffffu) - a.dmin - xr));
                /* shift by one disparity: E[r] <- O[r], O[r] <- (E[r] hi, E[r + 1] lo) */
                const uint32_t nv = __shfl_down_sync(full, rv[0], 1, G);
                const uint32_t nx = __shfl_down_sync(full, rx[0], 1, G);
                if (on) {
#pragma unroll
                    for (int r = 0; r < K / 4; r++) {
                        const uint32_t ev = r + 1 < K / 4 ? rv[2 * r + 2 < W ? 2 * r + 2 : 0]
                                                          : (lane == G - 1 ? PK_EMPTY : nv);
                        const uint32_t exx = r + 1 < K / 4 ? rx[2 * r + 2 < W ? 2 * r + 2 : 0] : nx;
                        const uint32_t ov = __byte_perm(rv[2 * r], ev, 0x5432);
                        const uint32_t ox = __byte_perm(rx[2 * r], exx, 0x5432);
                        rv[2 * r] = rv[2 * r + 1], rx[2 * r] = rx[2 * r + 1];
                        rv[2 * r + 1] = ov, rx[2 * r + 1] = ox;
                    }
                }
            }
        }
    }
    /* right pixels whose remaining candidates lie left of the segment: slot i is right pixel
     * xa - 1 - dmin - (k0 + i) */
    if (a.disp_right && steps > 0) {
#pragma unroll
        for (int m = 0; m < W; m++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int i = pk_lo_k(m) + 2 * h;
                const uint32_t v = h ? rv[m] >> 16 : rv[m] & 0xffffu;
                const int xb_ = (int)(h ? rx[m] >> 16 : rx[m] & 0xffffu);
                const int xr = xa - 1 - a.dmin - (k0 + i);
                if (xr >= 0 && v != (PK_EMPTY & 0xffffu))
                    atomicMin(&rk[xr], v << 9 | (uint32_t)(xb_ - a.dmin - xr));
            }
        }
    }
    if (a.disp_right)
        write_right_row(a, rk, y);
}

#endif /* !SGM_CENSUS && !SGM_TABLE && !SGM_VOLUME */

template <int K, int G>
static cudaError_t launch_dirs_kg(const sgm_args *a, int paths, cudaStream_t stream)
{
    dir_blocks t;
    memset(&t, 0, sizeof t);
    const int w = a->width, h = a->height;
    const int rows_first = w >= h; /* rows are w steps long, columns h */
    static const int by_rows[4] = {0, 1, 2, 3}, by_cols[4] = {2, 3, 0, 1};
    const int h_only = a->strips != NULL; /* the strip design: only directions 0 and 1 */
    for (int i = 0; i < 4; i++) {
        t.dir[i] = rows_first || h_only ? by_rows[i] : by_cols[i];
        size_t n = h_only && i >= 2 ? 0 : (size_t)stereo_sgm_line_count(t.dir[i], w, h);
        t.first[i + 1] = t.first[i] + (int)((n * G + AGG_BLOCK - 1) / AGG_BLOCK);
    }
    if (paths == 8 && !h_only)
        t.diag_blocks = (int)(((size_t)stereo_sgm_line_count(4, w, h) * G + AGG_BLOCK - 1) /
                              AGG_BLOCK);
    unsigned grid = (unsigned)(t.first[4] + 4 * t.diag_blocks);
    k_dirs<K, G, SGM_CENSUS != 0><<<grid, AGG_BLOCK, 0, stream>>>(*a, t);
    return cudaGetLastError();
}

#if SGM_VOLUME
cudaError_t launch_sgm_dirs_volume(const sgm_args *a, int paths, cudaStream_t stream)
#elif SGM_CENSUS && SGM_BT
cudaError_t launch_sgm_dirs_bt(const sgm_args *a, int paths, cudaStream_t stream)
#elif SGM_CENSUS
cudaError_t launch_sgm_dirs_census(const sgm_args *a, int paths, cudaStream_t stream)
#elif SGM_TABLE
cudaError_t launch_sgm_dirs_table(const sgm_args *a, int paths, cudaStream_t stream)
#else
cudaError_t launch_sgm_dirs_rank(const sgm_args *a, int paths, cudaStream_t stream)
#endif
{
    /* The walk is bound by the integer ALU pipe when enough lines are in flight, and a step's
     * fixed part (loads, shuffles, the group minimum, the store) is shared by a lane's K
     * disparities: then 16 disparities per lane beat 8. With too few lines for the GPU (fewer
     * than ~7 warps of 16-disparity lanes per multiprocessor) the walk is latency-bound and
     * twice the lanes with 8 each are faster. Measured on the H100 (132 SMs), D128, walk only:
     * 1024x440 4 paths (~5.5 warps per SM) 0.221 ms with 16 against 0.209 with 8; 1280x960
     * 4 paths (~8.5) 0.401 against 0.496; 640x480 8 paths (~12.7) 16 faster by ~27 %
     * (docs/cuda-notes.md). A Jetson (8-16 SMs) takes 16 for any common size. */
    long lines = 0;
    for (int i = 0; i < paths; i++)
        lines += stereo_sgm_line_count(i, a->width, a->height);
    const long sms = a->sms > 0 ? a->sms : 1;
    /* STEREO_CUDA_WALK_K=8|16 overrides (measurements). 32 per lane was measured too (session 5):
     * 22 % fewer instructions than 16 on the compute_87 walk but no faster on 16 SMs (4.17
     * against 4.11 ms at 1280x960; 156 registers, 12 warps per SM) and slower on 132 (0.735
     * against 0.608 ms), so it is not offered. */
    const char *env = getenv("STEREO_CUDA_WALK_K");
    const int forced = env && (!strcmp(env, "8") || !strcmp(env, "16")) ? atoi(env) : 0;
    if (forced == 16 || (!forced && lines * (a->ndisp / 16) >= 224L * sms)) {
        switch (a->ndisp) {
        case 64: return launch_dirs_kg<16, 4>(a, paths, stream);
        case 128: return launch_dirs_kg<16, 8>(a, paths, stream);
        case 256: return launch_dirs_kg<16, 16>(a, paths, stream);
        }
    }
    SGM_DISPATCH(launch_dirs_kg, a, paths, stream);
}

#if !SGM_CENSUS && !SGM_TABLE && !SGM_VOLUME
cudaError_t launch_sgm_dirs(const sgm_args *a, int paths, cudaStream_t stream)
{
    if (paths != 4 && paths != 8)
        return cudaErrorInvalidValue;
    return a->cost_vol                   ? launch_sgm_dirs_volume(a, paths, stream)
           : a->cost == STEREO_COST_CENSUS ? launch_sgm_dirs_census(a, paths, stream)
           : a->cost == STEREO_COST_BT   ? launch_sgm_dirs_bt(a, paths, stream)
           : a->cost_table               ? launch_sgm_dirs_table(a, paths, stream)
                                         : launch_sgm_dirs_rank(a, paths, stream);
}

template <int K, int G>
static cudaError_t launch_wta_pk(const sgm_args *a, int paths, cudaStream_t stream)
{
    size_t smem = (size_t)((a->width + 3) & ~3) * sizeof(uint32_t) +
                  WTA_BLOCK * (K / 2) * sizeof(uint32_t); /* <= 32 KB + 8 KB */
    if (paths == 8)
        k_wta_pk<K, G, 8><<<a->height, WTA_BLOCK, smem, stream>>>(*a);
    else
        k_wta_pk<K, G, 4><<<a->height, WTA_BLOCK, smem, stream>>>(*a);
    return cudaGetLastError();
}

template <int K, int G>
static cudaError_t launch_wta_kg(const sgm_args *a, int paths, cudaStream_t stream)
{
    size_t smem = (size_t)a->width * sizeof(uint32_t); /* <= 32 KB: width <= 8192 */
    if (paths == 8)
        k_wta<K, G, 8><<<a->height, WTA_BLOCK, smem, stream>>>(*a);
    else if (paths == 4)
        k_wta<K, G, 4><<<a->height, WTA_BLOCK, smem, stream>>>(*a);
    else
        k_wta<K, G, 0><<<a->height, WTA_BLOCK, smem, stream>>>(*a);
    return cudaGetLastError();
}

cudaError_t launch_wta_volume(const sgm_args *a, cudaStream_t stream)
{
    SGM_DISPATCH(launch_wta_kg, a, 0, stream);
}

/* Disparities per lane of the packed sum + winner-takes-all pass (k_wta_pk): 16, so that the
 * per-pixel part (the group reductions, the lane-0 finishing, the right ring's shuffles) is
 * shared by 16 disparities. Measured at 1280x960 D128 8 paths (docs/cuda-notes.md, session 5):
 * on 16 SMs (compute_87) 2.01 ms with 16 against 2.90 with 8 and 2.80 for the scalar k_wta; on
 * all 132 SMs of the H100 (sm_90) 0.486 / 0.510 / 0.497 ms. STEREO_CUDA_WTA_K=8 and
 * STEREO_CUDA_WTA=scalar select the others (measurements). */
static int wta_k16(void)
{
    const char *env = getenv("STEREO_CUDA_WTA_K");
    return !(env && !strcmp(env, "8"));
}

cudaError_t launch_wta_dirs(const sgm_args *a, int paths, cudaStream_t stream)
{
    if (paths != 4 && paths != 8)
        return cudaErrorInvalidValue;
    const char *pk = getenv("STEREO_CUDA_WTA");
    /* the packed pass needs every sum below 2048 (8 * 255): path weights take the scalar one */
    if (!a->weighted && !(pk && !strcmp(pk, "scalar"))) {
        if (wta_k16()) {
            switch (a->ndisp) {
            case 64: return launch_wta_pk<16, 4>(a, paths, stream);
            case 128: return launch_wta_pk<16, 8>(a, paths, stream);
            case 256: return launch_wta_pk<16, 16>(a, paths, stream);
            }
        } else {
            switch (a->ndisp) {
            case 64: return launch_wta_pk<8, 8>(a, paths, stream);
            case 128: return launch_wta_pk<8, 16>(a, paths, stream);
            case 256: return launch_wta_pk<8, 32>(a, paths, stream);
            }
        }
    }
    SGM_DISPATCH(launch_wta_kg, a, paths, stream);
}
#endif /* !SGM_CENSUS && !SGM_TABLE && !SGM_VOLUME */
