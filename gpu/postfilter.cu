/* SPDX-License-Identifier: Apache-2.0 */
/* postfilter.cu — stage 9 on the GPU (postfilter.h), bit for bit postfilter.c's result.
 *
 * 9a speckle removal: a lock-free union-find over the map: first within each 32 x 8 tile (each
 * row's runs from a warp ballot, the rows' runs joined in shared memory), then across the tiles'
 * borders in global memory (the larger root linked under the smaller with atomicMin); each
 * pixel's root (the paths walked then pointed at it), and its region's count with an atomicAdd
 * per distinct root in a warp; then the small regions invalidated. The regions are those of
 * postfilter.c's flood fill, whatever order the unions ran in.
 * Termination: parent[x] <= x always (atomicMin only lowers it; the third pass points nodes at
 * their settled roots), so every find walks down strictly smaller indices, and every failed link
 * attempt continues from a strictly smaller root: each loop ends after at most w * h steps, on
 * any image (a spiral region included).
 * 9b region voting: each pixel's arms (one thread a pixel), then POSTFILTER_VOTE_ROUNDS rounds,
 * each reading one map and writing the next whole (disp -> a -> b -> a -> b -> disp: the rounds
 * of postfilter.c, which read the map the last round left). In a round each thread takes a pixel
 * and copies it when valid; the warp then votes for its invalid pixels one after another, all
 * lanes on one: lane i walks the region's sampled rows i, i + 32, ..., adding each valid
 * sample's level into the warp's histogram in shared memory (exact counts: the order of the
 * atomics does not matter); the winner (the most votes, ties to the smaller level) from a warp
 * reduction over the lanes' bins. They are launched only while the filter is on (the stage
 * captures its graph again when it is turned on or off: six kernels that return at once still
 * cost 0.015 ms a frame).
 * 9c interpolation: the marks (a block per row, built in shared memory); then a block per
 * 32 x 32 tile: a tile with holes loads itself and the reach around it (96 x 96 values) into
 * shared memory, where each thread walks its holes' directions and sorts what it found in
 * registers (interp_tile_pixel). It reads the map 9b left and writes a second one
 * (every pixel), which is copied back. Launched only while it is on.
 * 9d temporal: the frame's four counts (block counts, one atomicAdd per block), then the per-pixel
 * rule or the reset, decided by every thread from the same counts.
 * 9e fill: one block per row; the row in shared memory, each thread a chunk of it, the nearest
 * valid pixels outside its chunk from the other chunks' first and last valid pixels.
 */
#include "postfilter.h"

#define PIX_BLOCK 256
#define FILL_THREADS 256
#define INTERP_THREADS 256
#define INTERP_TILE 32
#define VOTE_BLOCK 256
#define VOTE_GRID 256 /* blocks of the vote kernels (they stride over the map) */

/* The root of x: parents only point to smaller indices. Volatile: other threads relink roots
 * while this one walks. */
static __device__ int pf_find(const int32_t *parent, int x)
{
    const volatile int32_t *p = parent;
    int up = p[x];
    while (up != x) {
        x = up;
        up = p[x];
    }
    return x;
}

/* The same, once no thread links any more (9a's third pass): the walked path is then pointed at
 * the root, for the finds of the other threads. Only there: while links are being made, pointing
 * a node elsewhere could undo a link another thread has just made on it. */
static __device__ int pf_find_settled(int32_t *parent, int x)
{
    volatile int32_t *p = parent;
    const int r = pf_find(parent, x);
    while (x != r) {
        const int up = p[x];
        p[x] = r;
        x = up;
    }
    return r;
}

/* Joins the regions of a and b: the larger root goes under the smaller. When another thread
 * linked that root meanwhile (atomicMin returns its new parent), the link is retried from
 * there: the larger index of the pair strictly falls on every retry. */
static __device__ void pf_union(int32_t *parent, int a, int b)
{
    for (;;) {
        a = pf_find(parent, a);
        b = pf_find(parent, b);
        if (a == b)
            return;
        if (a < b) {
            int t = a;
            a = b;
            b = t;
        }
        int old = atomicMin(&parent[a], b);
        if (old == a)
            return;
        a = old;
    }
}

/* 9a, first pass: a block per SPECKLE_TW x SPECKLE_TH tile, a warp per row of the tile. Each
 * row's runs of connected pixels come from one ballot: a pixel's local parent is its run's first
 * pixel. The runs of two rows are then joined by the union-find in shared memory, once per
 * stretch of vertically connected pixels (a pixel whose left neighbour is connected to its own
 * and to the one below both the same way adds nothing). Local indices are row-major in the tile,
 * so a local root's global index is also the smallest of its local component. Each pixel's
 * parent is then its local root's global index (parent[p] <= p, as the global pass needs), and
 * its count zero. Block (0, 0) also zeroes 9d's counts of the frame. */
#define SPECKLE_TW 32 /* a warp */
#define SPECKLE_TH 8
static __global__ void __launch_bounds__(SPECKLE_TW * SPECKLE_TH)
    k_speckle_local(const int16_t *disp, int32_t *parent, int32_t *count, postfilter_dev *pd,
                    int w, int h)
{
    __shared__ int32_t lp[SPECKLE_TW * SPECKLE_TH];
    __shared__ unsigned runs[SPECKLE_TH]; /* bit x: pixel x of the row joins pixel x - 1 */
    const int t = threadIdx.x, tx = t % SPECKLE_TW, ty = t / SPECKLE_TW;
    if (blockIdx.x == 0 && blockIdx.y == 0 && t == 0)
        pd->n_both = pd->n_change = pd->n_now = pd->n_prev = 0;
    if (pd->f.speckle_size <= 0) /* the same for the whole block */
        return;
    const int x0 = (int)blockIdx.x * SPECKLE_TW, y0 = (int)blockIdx.y * SPECKLE_TH;
    const int x = x0 + tx, y = y0 + ty, diff = pd->f.speckle_diff;
    const bool in = x < w && y < h;
    const int p = y * w + x;
    const int v = in ? disp[p] : STEREO_INVALID;
    /* never joined with an invalid pixel: outside the image too */
    const bool left =
        tx > 0 && postfilter_speckle_joined(v, in ? disp[p - 1] : STEREO_INVALID, diff);
    const bool down = ty + 1 < SPECKLE_TH && y + 1 < h &&
                      postfilter_speckle_joined(v, in ? disp[p + w] : STEREO_INVALID, diff);
    const unsigned run = __ballot_sync(0xffffffffu, left);
    const unsigned downs = __ballot_sync(0xffffffffu, down);
    const unsigned upto = tx == SPECKLE_TW - 1 ? 0xffffffffu : (2u << tx) - 1;
    lp[t] = ty * SPECKLE_TW + 31 - __clz(~run & upto); /* bit 0 of ~run is always set */
    if (tx == 0)
        runs[ty] = run;
    __syncthreads();
    /* a stretch's first pixel: not (joined to the left, the one below joined to its left, and
     * the left neighbour joined downwards) */
    if (down && !(tx > 0 && (run >> tx & 1) && (runs[ty + 1] >> tx & 1) && (downs >> (tx - 1) & 1)))
        pf_union(lp, t, t + SPECKLE_TW);
    __syncthreads();
    if (!in)
        return;
    const int r = pf_find(lp, t);
    parent[p] = (y0 + r / SPECKLE_TW) * w + x0 + r % SPECKLE_TW;
    count[p] = 0;
}

/* 9a, second pass: the connected pairs across tile borders, joined in global memory; a thread per
 * border pixel: first those in a tile's last column (with the right neighbour), then those in a
 * tile's last row (with the one below). As in the first pass, a pair whose neighbours along the
 * border are joined the same way (and to it, within their tiles) is left out. */
static __global__ void k_speckle_border(const int16_t *disp, int32_t *parent,
                                        const postfilter_dev *pd, int w, int h)
{
    const int nc = (w - 1) / SPECKLE_TW, nr = (h - 1) / SPECKLE_TH; /* the borders inside */
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (pd->f.speckle_size <= 0 || i >= nc * h + nr * w)
        return;
    const int diff = pd->f.speckle_diff;
    if (i < nc * h) { /* column x = 32 k + 31 and x + 1, row y */
        const int y = i / nc, x = (i % nc) * SPECKLE_TW + SPECKLE_TW - 1, p = y * w + x;
        if (!postfilter_speckle_joined(disp[p], disp[p + 1], diff))
            return;
        if (y % SPECKLE_TH && postfilter_speckle_joined(disp[p - w], disp[p - w + 1], diff) &&
            postfilter_speckle_joined(disp[p - w], disp[p], diff) &&
            postfilter_speckle_joined(disp[p - w + 1], disp[p + 1], diff))
            return;
        pf_union(parent, p, p + 1);
    } else { /* row y = 8 k + 7 and y + 1, column x */
        const int j = i - nc * h, y = (j / w) * SPECKLE_TH + SPECKLE_TH - 1, x = j % w;
        const int p = y * w + x;
        if (!postfilter_speckle_joined(disp[p], disp[p + w], diff))
            return;
        if (x % SPECKLE_TW && postfilter_speckle_joined(disp[p - 1], disp[p - 1 + w], diff) &&
            postfilter_speckle_joined(disp[p - 1], disp[p], diff) &&
            postfilter_speckle_joined(disp[p - 1 + w], disp[p + w], diff))
            return;
        pf_union(parent, p, p + w);
    }
}

/* 9a, third pass: each valid pixel's root (and its parent pointed there), counted per root with
 * one atomic per distinct root in the warp (the sums are exact: the same counts). */
static __global__ void k_speckle_count(const int16_t *disp, int32_t *parent, int32_t *count,
                                       const postfilter_dev *pd, int n)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (pd->f.speckle_size <= 0) /* the same for the whole grid */
        return;
    const bool valid = p < n && stereo_disparity_valid(disp[p]);
    const unsigned act = __ballot_sync(0xffffffffu, valid);
    if (!valid)
        return;
    const int root = pf_find_settled(parent, p);
    const unsigned same = __match_any_sync(act, root);
    if ((int)(threadIdx.x & 31) == __ffs(same) - 1)
        atomicAdd(&count[root], __popc(same));
}

static __global__ void k_speckle_apply(int16_t *disp, uint8_t *conf, const int32_t *parent,
                                       const int32_t *count, const postfilter_dev *pd, int n)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n || pd->f.speckle_size <= 0 || !stereo_disparity_valid(disp[p]))
        return;
    if (count[parent[p]] < pd->f.speckle_size) {
        disp[p] = STEREO_INVALID;
        if (conf)
            conf[p] = 0;
    }
}

static __global__ void k_temporal_count(const int16_t *disp, const int16_t *prev,
                                        postfilter_dev *pd, int n)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (!pd->f.temporal) /* the same for the whole block: no thread waits below */
        return;
    int d = p < n ? disp[p] : STEREO_INVALID, q = p < n ? prev[p] : STEREO_INVALID;
    int delta = pd->f.temporal_delta;
    int both = stereo_disparity_valid(d) && stereo_disparity_valid(q);
    int n_now = __syncthreads_count(stereo_disparity_valid(d));
    int n_prev = __syncthreads_count(stereo_disparity_valid(q));
    int n_both = __syncthreads_count(both);
    int n_change = __syncthreads_count(both && (d - q > delta || q - d > delta));
    if (threadIdx.x == 0) {
        atomicAdd(&pd->n_now, (uint32_t)n_now);
        atomicAdd(&pd->n_prev, (uint32_t)n_prev);
        atomicAdd(&pd->n_both, (uint32_t)n_both);
        atomicAdd(&pd->n_change, (uint32_t)n_change);
    }
}

static __global__ void k_temporal_apply(int16_t *disp, int16_t *prev, uint8_t *age,
                                        const postfilter_dev *pd, int n)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n || !pd->f.temporal)
        return;
    if (postfilter_temporal_reset(pd->n_both, pd->n_change, pd->n_now, pd->n_prev)) {
        prev[p] = disp[p];
        age[p] = 0;
        return;
    }
    int16_t q = prev[p];
    uint8_t a = age[p];
    disp[p] = postfilter_temporal_pixel(disp[p], &q, &a, pd->f.temporal_alpha,
                                        pd->f.temporal_delta, pd->f.temporal_persist);
    prev[p] = q;
    age[p] = a;
}

/* 9b: every pixel's arms (postfilter_vote_arms) */
static __global__ void k_vote_arms(const uint8_t *grey, uint32_t *arms, int w, int h,
                                   const postfilter_dev *pd)
{
    if (!pd->f.vote)
        return;
    const int n = w * h;
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x)
        arms[p] = postfilter_vote_arms(grey, w, h, p % w, p / w);
}

/* 9b: one round, cur -> nxt (every pixel written). */
static __global__ void __launch_bounds__(VOTE_BLOCK)
    k_vote_round(const int16_t *cur, int16_t *nxt, const uint32_t *arms, int w, int h, int dmin,
                 int ndisp, const postfilter_dev *pd)
{
    __shared__ int32_t hist_all[VOTE_BLOCK / 32][POSTFILTER_VOTE_LEVELS];
    if (!pd->f.vote)
        return;
    const int lane = threadIdx.x & 31, n = w * h, st = POSTFILTER_VOTE_STRIDE;
    int32_t *hist = hist_all[threadIdx.x >> 5];
    for (int k = lane; k <= ndisp; k += 32)
        hist[k] = 0;
    __syncwarp();
    const int stride = gridDim.x * blockDim.x;
    /* the loop bound is the same for the whole warp (it runs while any lane has a pixel) */
    for (int base = blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < n; base += stride) {
        const int p = base + lane;
        const int v = p < n ? cur[p] : 0;
        const bool hole = p < n && v == STEREO_INVALID;
        if (p < n && !hole)
            nxt[p] = (int16_t)v;
        unsigned todo = __ballot_sync(0xffffffffu, hole);
        while (todo) {
            const int src = __ffs(todo) - 1;
            todo &= todo - 1;
            const int q = base + src, x = q % w, y = q / w;
            const uint32_t a = arms[q];
            const int y0 = y - (int)(a >> 16 & 0xff) / st * st, y1 = y + (int)(a >> 24);
            int S = 0;
            for (int yy = y0 + lane * st; yy <= y1; yy += 32 * st) {
                const uint32_t b = arms[(size_t)yy * w + x];
                const int16_t *row = cur + (size_t)yy * w;
                for (int xx = x - (int)(b & 0xff) / st * st; xx <= x + (int)(b >> 8 & 0xff);
                     xx += st) {
                    const int u = row[xx];
                    if (u != STEREO_INVALID) {
                        atomicAdd(&hist[postfilter_vote_level(u, dmin, ndisp)], 1);
                        S++;
                    }
                }
            }
            __syncwarp();
            /* the winner: the most votes, the smaller level on a tie; the bins cleared after */
            int best_n = -1, best_k = 0;
            for (int k = lane; k <= ndisp; k += 32) {
                const int c = hist[k];
                if (c > best_n)
                    best_n = c, best_k = k;
                hist[k] = 0;
            }
            for (int o = 16; o > 0; o >>= 1) {
                const int on = __shfl_xor_sync(0xffffffffu, best_n, o);
                const int ok = __shfl_xor_sync(0xffffffffu, best_k, o);
                if (on > best_n || (on == best_n && ok < best_k))
                    best_n = on, best_k = ok;
                S += __shfl_xor_sync(0xffffffffu, S, o);
            }
            __syncwarp();
            if (lane == src)
                nxt[q] = (int16_t)postfilter_vote_result(S, best_n, best_k, dmin);
        }
    }
}

/* 9c's marks (postfilter_interp_marks): one block of INTERP_THREADS per row, the row's marks
 * built in shared memory and written to marks. */
static __global__ void __launch_bounds__(INTERP_THREADS)
    k_interp_marks(const int16_t *right, uint8_t *marks, int w, const postfilter_dev *pd)
{
    extern __shared__ uint8_t seen[]; /* w bytes */
    if (!pd->f.interp)
        return;
    const size_t row = (size_t)blockIdx.x * w;
    for (int x = threadIdx.x; x < w; x += INTERP_THREADS)
        seen[x] = 0;
    __syncthreads();
    for (int xr = threadIdx.x; xr < w; xr += INTERP_THREADS) {
        const int v = right[row + xr];
        if (v == STEREO_INVALID)
            continue;
        const int x = xr + ((v + 8) >> 4);
        if (x >= 0 && x < w)
            seen[x] = 1;
    }
    __syncthreads();
    for (int x = threadIdx.x; x < w; x += INTERP_THREADS)
        marks[row + x] = seen[x];
}

/* 9c: one block per INTERP_TILE x INTERP_TILE tile, INTERP_THREADS threads, each a column of it
 * every INTERP_THREADS / INTERP_TILE rows. A tile without holes copies cur (the map 9b left) to
 * nxt; else the block loads the tile with the reach around it (every ray stays inside: a step
 * moves at most 2 pixels each way) into shared memory, and each thread fills its holes from
 * there (interp_tile_pixel). */
#define INTERP_HALO (2 * POSTFILTER_INTERP_REACH)
#define INTERP_SPAN (INTERP_TILE + 2 * INTERP_HALO)
/* 9c's value of the hole at tile[c] (postfilter_interp_pixel's, from the tile): the tile holds
 * STEREO_INVALID outside the image, and a ray that leaves the image never comes back, so the
 * walks need no bounds test; the 16 values (a missing one as INTERP_NONE, above every value)
 * sorted by a bitonic network in registers, the lower median (or, for an occlusion, whose two
 * directions are the only ones walked, the smaller) picked from the sorted list. Every loop
 * unrolls to constant indices: no local memory. */
#define INTERP_NONE 32767 /* above 16 * (2047 + 1): every valid value is smaller */
static __device__ __forceinline__ int interp_tile_pixel(const int16_t *tile, int c, bool occluded)
{
    int v[POSTFILTER_INTERP_DIRS], n = 0;
#pragma unroll
    for (int i = 0; i < POSTFILTER_INTERP_DIRS; i++) {
        int dx, dy;
        postfilter_interp_dir(i, &dx, &dy);
        const int step = dy * INTERP_SPAN + dx;
        v[i] = INTERP_NONE;
        if (occluded && i != 0 && i != 8)
            continue;
        int q = c;
#pragma unroll
        for (int k = 0; k < POSTFILTER_INTERP_REACH; k++) {
            q += step;
            const int u = tile[q];
            if (u != STEREO_INVALID) {
                v[i] = u;
                break;
            }
        }
        n += v[i] != INTERP_NONE;
    }
#pragma unroll
    for (int k = 2; k <= POSTFILTER_INTERP_DIRS; k <<= 1)
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1)
#pragma unroll
            for (int i = 0; i < POSTFILTER_INTERP_DIRS; i++) {
                const int l = i ^ j;
                if (l > i) {
                    const int a = v[i], b = v[l];
                    const bool up = (i & k) == 0;
                    v[i] = up ? min(a, b) : max(a, b);
                    v[l] = up ? max(a, b) : min(a, b);
                }
            }
    const int target = occluded ? 0 : (n - 1) / 2;
    int r = v[0];
#pragma unroll
    for (int i = 1; i < POSTFILTER_INTERP_DIRS; i++)
        if (i == target)
            r = v[i];
    return n ? r : STEREO_INVALID;
}

static __global__ void __launch_bounds__(INTERP_THREADS)
    k_interp(const int16_t *cur, int16_t *nxt, const uint8_t *marks, int w, int h,
             const postfilter_dev *pd)
{
    __shared__ int16_t tile[INTERP_SPAN * INTERP_SPAN];
    if (!pd->f.interp)
        return;
    const int x0 = (int)blockIdx.x * INTERP_TILE, y0 = (int)blockIdx.y * INTERP_TILE;
    const int tx = threadIdx.x % INTERP_TILE, ty = threadIdx.x / INTERP_TILE;
    const int rows = INTERP_THREADS / INTERP_TILE, x = x0 + tx;
    int any = 0;
    for (int y = y0 + ty; y < y0 + INTERP_TILE && y < h && x < w; y += rows) {
        const int v = cur[(size_t)y * w + x];
        nxt[(size_t)y * w + x] = (int16_t)v; /* holes written again below */
        any |= v == STEREO_INVALID;
    }
    if (!__syncthreads_or(any))
        return;
    const int ox = x0 - INTERP_HALO, oy = y0 - INTERP_HALO;
    for (int i = threadIdx.x; i < INTERP_SPAN * INTERP_SPAN; i += INTERP_THREADS) {
        const int qx = ox + i % INTERP_SPAN, qy = oy + i / INTERP_SPAN;
        tile[i] = qx >= 0 && qx < w && qy >= 0 && qy < h ? cur[(size_t)qy * w + qx]
                                                        : STEREO_INVALID;
    }
    __syncthreads();
    for (int y = y0 + ty; y < y0 + INTERP_TILE && y < h && x < w; y += rows) {
        const int c = (y - oy) * INTERP_SPAN + x - ox;
        if (tile[c] == STEREO_INVALID)
            nxt[(size_t)y * w + x] =
                (int16_t)interp_tile_pixel(tile, c, marks && !marks[(size_t)y * w + x]);
    }
}

/* 9e: one block of FILL_THREADS per row. */
static __global__ void k_fill(int16_t *disp, int w, const postfilter_dev *pd)
{
    extern __shared__ int16_t row[]; /* the row before filling */
    __shared__ int last[FILL_THREADS], first[FILL_THREADS];
    if (!pd->f.fill)
        return;
    int16_t *out = disp + (size_t)blockIdx.x * w;
    const int t = threadIdx.x;
    for (int x = t; x < w; x += FILL_THREADS)
        row[x] = out[x];
    __syncthreads();
    const int chunk = (w + FILL_THREADS - 1) / FILL_THREADS;
    const int x0 = min(w, t * chunk), x1 = min(w, x0 + chunk);
    int lv = -1, fv = w;
    for (int x = x0; x < x1; x++)
        if (stereo_disparity_valid(row[x])) {
            fv = min(fv, x);
            lv = x;
        }
    last[t] = lv;
    first[t] = fv;
    __syncthreads();
    int left = -1, right = w; /* the nearest valid pixels outside the chunk */
    for (int u = 0; u < t; u++)
        left = max(left, last[u]);
    for (int u = t + 1; u < FILL_THREADS; u++)
        right = min(right, first[u]);
    postfilter_fill_span(row, out, w, x0, x1, left, right);
}

static __global__ void k_invalid_fill(int16_t *map, int n)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n)
        map[p] = STEREO_INVALID;
}

cudaError_t launch_postfilter(const postfilter_cuda *pf, int16_t *disp, uint8_t *conf,
                              const int16_t *right, const uint8_t *grey, int dmin, int ndisp,
                              const stereo_postfilter *on, int w, int h, cudaStream_t stream)
{
    const int vote = on->vote;
    const int n = w * h;
    const unsigned g = (unsigned)((n + PIX_BLOCK - 1) / PIX_BLOCK);
    /* 9a */
    const dim3 tiles((unsigned)((w + SPECKLE_TW - 1) / SPECKLE_TW),
                     (unsigned)((h + SPECKLE_TH - 1) / SPECKLE_TH));
    k_speckle_local<<<tiles, SPECKLE_TW * SPECKLE_TH, 0, stream>>>(disp, pf->parent, pf->count,
                                                                 pf->dev, w, h);
    const int borders = (w - 1) / SPECKLE_TW * h + (h - 1) / SPECKLE_TH * w;
    if (borders > 0)
        k_speckle_border<<<(unsigned)((borders + PIX_BLOCK - 1) / PIX_BLOCK), PIX_BLOCK, 0,
                           stream>>>(disp, pf->parent, pf->dev, w, h);
    k_speckle_count<<<g, PIX_BLOCK, 0, stream>>>(disp, pf->parent, pf->count, pf->dev, n);
    k_speckle_apply<<<g, PIX_BLOCK, 0, stream>>>(disp, conf, pf->parent, pf->count, pf->dev, n);
    /* 9b: disp -> a -> b -> ... -> disp (an odd number of rounds ends in disp) */
    static_assert(POSTFILTER_VOTE_ROUNDS % 2 == 1, "9b's rounds end in disp");
    if (vote)
        k_vote_arms<<<VOTE_GRID, VOTE_BLOCK, 0, stream>>>(grey, pf->arms, w, h, pf->dev);
    for (int r = 0; r < POSTFILTER_VOTE_ROUNDS && vote; r++) {
        const int16_t *src = r == 0 ? disp : r % 2 ? pf->vote_a : pf->vote_b;
        int16_t *dst = r == POSTFILTER_VOTE_ROUNDS - 1 ? disp : r % 2 ? pf->vote_b : pf->vote_a;
        k_vote_round<<<VOTE_GRID, VOTE_BLOCK, 0, stream>>>(src, dst, pf->arms, w, h, dmin, ndisp,
                                                           pf->dev);
    }
    /* 9c: the marks into arms (free after 9b), then disp -> a, copied back */
    if (on->interp) {
        uint8_t *marks = right ? (uint8_t *)pf->arms : NULL;
        if (right)
            k_interp_marks<<<(unsigned)h, INTERP_THREADS, (size_t)w, stream>>>(right, marks, w,
                                                                            pf->dev);
        const dim3 tiles((unsigned)((w + INTERP_TILE - 1) / INTERP_TILE),
                         (unsigned)((h + INTERP_TILE - 1) / INTERP_TILE));
        k_interp<<<tiles, INTERP_THREADS, 0, stream>>>(disp, pf->vote_a, marks, w, h, pf->dev);
        cudaError_t e = cudaMemcpyAsync(disp, pf->vote_a, (size_t)n * sizeof *disp,
                                        cudaMemcpyDeviceToDevice, stream);
        if (e != cudaSuccess)
            return e;
    }
    /* 9d */
    k_temporal_count<<<g, PIX_BLOCK, 0, stream>>>(disp, pf->prev, pf->dev, n);
    k_temporal_apply<<<g, PIX_BLOCK, 0, stream>>>(disp, pf->prev, pf->age, pf->dev, n);
    /* 9e */
    k_fill<<<(unsigned)h, FILL_THREADS, (size_t)w * sizeof(int16_t), stream>>>(disp, w, pf->dev);
    return cudaGetLastError();
}

cudaError_t postfilter_cuda_set(const postfilter_cuda *pf, const stereo_postfilter *f, int clear,
                                int w, int h, cudaStream_t stream)
{
    /* from pageable memory: the call returns once f has been staged */
    cudaError_t e = cudaMemcpyAsync(&pf->dev->f, f, sizeof *f, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess && clear) { /* every prev STEREO_INVALID, every age 0 */
        const int n = w * h;
        k_invalid_fill<<<(unsigned)((n + PIX_BLOCK - 1) / PIX_BLOCK), PIX_BLOCK, 0, stream>>>(
            pf->prev, n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && clear)
        e = cudaMemsetAsync(pf->age, 0, (size_t)w * h, stream);
    return e;
}
