/* sgm_dirs.cu — stages 4 to 7 on the GPU, per-direction design: every direction's L in its own
 * byte volume, then one pass that adds them and picks the disparities.
 *
 * When every L fits a byte (L <= max_cost + max(P2, P1 + 1) <= 255; true for the defaults,
 * sgm_fits_bytes in launch.cuh), the directions do not need to add into a 16-bit sum:
 *   1. k_dirs: one launch walks the lines of every direction at once (longest lines first,
 *      see dir_blocks), each storing its L as bytes into volume i (w * h * D bytes,
 *      pixel-major, D bytes per pixel). Directions are independent, so all their lines are in
 *      flight together (thousands of lines instead of one direction's hundreds) and no line
 *      waits for an S load: the walk only loads the small rank rows.
 *   2. k_wta: one block per row. Each group of G lanes walks one segment of the row from right
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
#include <string.h>

#include "sgm_walk.cuh"

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

/* The interleaved walk (walk_line_il) where a lane's K is a multiple of 8, else walk_line. */
template <int K, int G, bool CENSUS, bool IL = K % 8 == 0>
struct dir_walker {
    static __device__ __forceinline__ void run(const sgm_args &a, int dir, int line, int lane,
                                               const uint32_t *jump_table, bool live)
    {
        walk_line_il<K, G, CENSUS>(a, dir, line, lane, jump_table, live);
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
    fill_jump_table(a, jump_table);
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
    nlines = stereo_sgm_line_count(dir, w, h);
    const int rank = block * (AGG_BLOCK / G) + (int)threadIdx.x / G;
    /* a warp walks uniformly (walk_line): groups past the direction's last line come along idle;
     * warps with no line at all leave */
    if (__all_sync(0xffffffffu, rank >= nlines))
        return;
    const int line = rank >= nlines ? 0 : dir < 4 ? rank : stereo_sgm_diag_line(dir, rank, w, h);
    dir_walker<K, G, CENSUS>::run(a, dir, line, threadIdx.x & (G - 1), jump_table, rank < nlines);
}

template <int K, int NP>
struct wta_step {
    uint32_t r[NP][byte_words<K>::R];
};

template <int K, int NP>
static __device__ __forceinline__ void wta_load(const sgm_args &a, size_t off, wta_step<K, NP> &s)
{
#pragma unroll
    for (int v = 0; v < NP; v++)
        load_bytes<K>(a.L8 + v * a.vol + off, s.r[v]);
}

template <int K, int G, int NP>
static __global__ void __launch_bounds__(WTA_BLOCK) k_wta(sgm_args a)
{
    constexpr int W = K / 2, D = K * G, NG = WTA_BLOCK / G;
    constexpr int RPS = NP * byte_words<K>::R;          /* registers per step */
    constexpr int PF = RPS <= 16 ? 4 : RPS <= 32 ? 2 : 1; /* steps in flight */
    extern __shared__ uint32_t rk[];                    /* the row's right keys (S << 9 | k) */
    const int w = a.width, y = blockIdx.x;
    for (int i = threadIdx.x; i < w; i += blockDim.x)
        rk[i] = KEY_EMPTY;
    __syncthreads();

    const int group = threadIdx.x / G, lane = threadIdx.x & (G - 1), k0 = lane * K;
    const unsigned mask = G == 32 ? 0xffffffffu : (((1u << G) - 1) << (threadIdx.x & 31 & ~(G - 1)));
    const int seg = (w + NG - 1) / NG;
    const int xa = group * seg, xb = min(w, xa + seg);
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
#pragma unroll
                for (int i = 0; i < W; i++)
                    tot[i] = 0;
#pragma unroll
                for (int v = 0; v < NP; v++)
                    add_bytes<K>(ring[j].r[v], tot);
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
    if (!a.disp_right)
        return;
    __syncthreads();
    for (int xr = threadIdx.x; xr < w; xr += blockDim.x) {
        size_t q = (size_t)y * w + xr;
        uint32_t key = rk[xr]; /* empty: no candidate inside the image (xr >= w - dmin) */
        a.disp_right[q] = key == KEY_EMPTY || (a.valid_right && !a.valid_right[q])
                              ? STEREO_INVALID
                              : (int16_t)(STEREO_SUBPIXEL_SCALE * (a.dmin + (int)(key & 511)));
    }
}

template <int K, int G>
static cudaError_t launch_dirs_kg(const sgm_args *a, int paths, cudaStream_t stream)
{
    dir_blocks t;
    memset(&t, 0, sizeof t);
    const int w = a->width, h = a->height;
    const int rows_first = w >= h; /* rows are w steps long, columns h */
    static const int by_rows[4] = {0, 1, 2, 3}, by_cols[4] = {2, 3, 0, 1};
    for (int i = 0; i < 4; i++) {
        t.dir[i] = rows_first ? by_rows[i] : by_cols[i];
        size_t n = (size_t)stereo_sgm_line_count(t.dir[i], w, h);
        t.first[i + 1] = t.first[i] + (int)((n * G + AGG_BLOCK - 1) / AGG_BLOCK);
    }
    if (paths == 8)
        t.diag_blocks = (int)(((size_t)stereo_sgm_line_count(4, w, h) * G + AGG_BLOCK - 1) /
                              AGG_BLOCK);
    unsigned grid = (unsigned)(t.first[4] + 4 * t.diag_blocks);
    if (a->cost == STEREO_COST_CENSUS)
        k_dirs<K, G, true><<<grid, AGG_BLOCK, 0, stream>>>(*a, t);
    else
        k_dirs<K, G, false><<<grid, AGG_BLOCK, 0, stream>>>(*a, t);
    return cudaGetLastError();
}

template <int K, int G>
static cudaError_t launch_wta_kg(const sgm_args *a, int paths, cudaStream_t stream)
{
    size_t smem = (size_t)a->width * sizeof(uint32_t); /* <= 32 KB: width <= 8192 */
    if (paths == 8)
        k_wta<K, G, 8><<<a->height, WTA_BLOCK, smem, stream>>>(*a);
    else
        k_wta<K, G, 4><<<a->height, WTA_BLOCK, smem, stream>>>(*a);
    return cudaGetLastError();
}

cudaError_t launch_sgm_dirs(const sgm_args *a, int paths, cudaStream_t stream)
{
    if (paths != 4 && paths != 8)
        return cudaErrorInvalidValue;
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
    if (lines * (a->ndisp / 16) >= 224L * (a->sms > 0 ? a->sms : 1)) {
        switch (a->ndisp) {
        case 64: return launch_dirs_kg<16, 4>(a, paths, stream);
        case 128: return launch_dirs_kg<16, 8>(a, paths, stream);
        case 256: return launch_dirs_kg<16, 16>(a, paths, stream);
        }
    }
    SGM_DISPATCH(launch_dirs_kg, a, paths, stream);
}

cudaError_t launch_wta_dirs(const sgm_args *a, int paths, cudaStream_t stream)
{
    if (paths != 4 && paths != 8)
        return cudaErrorInvalidValue;
    SGM_DISPATCH(launch_wta_kg, a, paths, stream);
}
