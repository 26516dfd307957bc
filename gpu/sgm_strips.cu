/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_strips.cu — stages 4 to 7 on the GPU, the strip design: the per-direction design's bytes
 * cut from 16 per voxel to 12 (and the cost volume's reads from 8 to 4), without the sweep
 * design's wavefront.
 *
 *   1. Directions 0 and 1 (along the rows) are walked by the per-direction walk (sgm_dirs.cu)
 *      into two byte volumes.
 *   2. The downward sweep computes directions 2 (from above), 4 (from above left) and 5 (from
 *      above right) row by row: a row needs nothing but the row before, so every pixel of a row
 *      is computed at once. The image is cut into column strips, one block each; a block keeps
 *      its strip's last row of L in shared memory (bytes) and walks its rows in order, each
 *      warp taking groups of columns (G lanes a column, K = 16 disparities a lane in the
 *      interleaved layout of walk_line_il, so the half2 arithmetic of the Orin path carries
 *      over). Only the diagonals cross a strip's edge: a block publishes the L of its first
 *      column's direction 5 and its last column's direction 4 for every row in a ring in global
 *      memory, with a row counter, and the neighbours wait for that counter before they
 *      compute their edge columns of the next row. Every block must be resident at once
 *      (sgm_strips_plan sizes the strips so that one block per SM covers the image). The
 *      three L are added and written once as 16-bit sums (2 bytes a voxel).
 *   3. The upward sweep does the same with 3, 6 and 7 from the row below, adds the downward sum
 *      and the two byte volumes of step 1 and finishes each pixel (finish_il: winner-takes-all,
 *      uniqueness, subpixel, confidence). Right pixel xr takes the smallest key S << 9 | k of
 *      the voxels (xr + dmin + k, k): each block merges its row's keys by atomicMin in shared
 *      memory, then into a row of keys in global memory, which k_strips_right turns into the
 *      right disparities (and empties for the next frame).
 * Traffic per voxel: the cost volume read 4 times (two horizontal walks, two sweeps), the two
 * horizontal bytes written and read, the 16-bit sum written and read: 12 bytes, plus the cost
 * volume's write. Bit for bit the CPU reference (the order of a sum does not change it).
 */
#include <stdlib.h>
#include <string.h>

#include "sgm_walk.cuh"

#if !defined(SGM_CENSUS) || !defined(SGM_TABLE) || SGM_CENSUS || SGM_TABLE || !SGM_VOLUME
#error "compile sgm_strips.cu with -DSGM_CENSUS=0 -DSGM_TABLE=0 -DSGM_VOLUME=1: see build.ninja"
#endif

#define STRIP_K 16           /* disparities a lane */
#define STRIP_MAX_WARPS 16   /* warps a block */
#define STRIP_RING 4         /* rows of records between neighbours */
#define STRIP_JMAX 3         /* column groups a warp walks in a row, at most */

/* the right keys' index in shared memory, padded every 16 against bank conflicts */
static __device__ __forceinline__ int key_slot(int i) { return i + (i >> 4); }

/* A lane's W interleaved words of one L (every value a byte) as 4 bytes a word: words 2i and
 * 2i + 1 in word i of the packed form, and back. */
template <int W>
static __device__ __forceinline__ uint4 pack_state(const uint32_t (&v)[W])
{
    static_assert(W == 8, "pack_state: 16 disparities a lane");
    return make_uint4(v[0] | v[1] << 8, v[2] | v[3] << 8, v[4] | v[5] << 8, v[6] | v[7] << 8);
}
template <int W>
static __device__ __forceinline__ void unpack_state(uint4 q, uint32_t (&v)[W])
{
    const uint32_t w4[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        v[2 * i] = w4[i] & 0x00ff00ffu;
        v[2 * i + 1] = (w4[i] >> 8) & 0x00ff00ffu;
    }
}

/* A byte volume's K bytes of a lane (natural order) as interleaved words (step_costs_il's rule) */
template <int W>
static __device__ __forceinline__ void bytes_to_il(uint4 q, uint32_t (&v)[W])
{
    const uint32_t b[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < W; j++)
        v[j] = __byte_perm(b[j / 4], b[(j + W) / 4], (uint32_t)((j % 4) | (4 + (j + W) % 4) << 8)) &
               0x00ff00ffu;
}

/* The strip's shared memory: the vertical direction's L (one buffer, each column read and
 * written by the same group), the two diagonals' (two buffers, by row parity: a column reads
 * its neighbours' previous row), their group minima; then (UP) two rows of right keys and the
 * groups' words for finish_il. */
struct strip_smem {
    uint4 *lv, *la, *lb;    /* la, lb: buffer b at + b * col */
    uint32_t *mv, *ma, *mb; /* ma, mb: buffer b at + b * sw */
    uint32_t *keys;         /* row buffer b at + b * kl */
    uint32_t *words;
    int col, kl;
};

static __host__ __device__ size_t strip_keys_len(int sw, int ndisp)
{
    const int n = sw + ndisp - 1;
    return (size_t)(n + (n >> 4) + 1);
}

static __host__ __device__ size_t round4(size_t n) { return (n + 3) & ~(size_t)3; }

static __host__ __device__ size_t strip_smem_bytes(int sw, int ndisp, int nw, bool up)
{
    const int g = ndisp / STRIP_K;
    size_t words = (size_t)sw * g * 4 * 5 + round4((size_t)sw * 5);
    if (up)
        words += round4(2 * strip_keys_len(sw, ndisp)) + (size_t)nw * 32 * (STRIP_K / 2);
    return words * 4;
}

template <int G>
static __device__ __forceinline__ strip_smem strip_layout(uint4 *base, int sw, int ndisp, int nw, bool up)
{
    strip_smem m;
    const size_t col = (size_t)sw * G; /* uint4 per buffer */
    m.col = (int)col;
    m.lv = base;
    m.la = base + col;
    m.lb = base + 3 * col;
    uint32_t *u = (uint32_t *)(base + 5 * col);
    m.mv = u;
    m.ma = u + sw, m.mb = u + 3 * sw;
    u += round4((size_t)sw * 5);
    m.kl = (int)strip_keys_len(sw, ndisp);
    if (up) { /* m.words: 16-byte aligned (finish_il's uint4 stores) */
        m.keys = u;
        u += round4(2 * (size_t)m.kl);
        m.words = u;
    } else {
        m.keys = NULL;
        m.words = NULL;
    }
    return m;
}

/* Row counters: published with a release (the record's stores before it), read with an
 * acquire. */
static __device__ __forceinline__ void flag_publish(int *f, int v)
{
    __threadfence();
    atomicExch(f, v);
}
static __device__ __forceinline__ void flag_wait(const int *f, int v)
{
    while (*(volatile const int *)f < v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
        __nanosleep(20);
#endif
    }
    __threadfence();
}

/* One sweep. UP = false: rows top to bottom, directions 2 (vertical), 4 (from x - 1), 5 (from
 * x + 1), the sum written to st.S; UP = true: bottom to top, 3, 6, 7, finishing every pixel. */
template <int G, bool UP>
static __global__ void __launch_bounds__(STRIP_MAX_WARPS * 32, 1)
    k_strips(sgm_args a, sgm_strips_state st, int paths)
{
    constexpr int K = STRIP_K, W = K / 2, D = K * G, HD = D / 2, CPW = 32 / G;
    constexpr int REC = D / 4 + 4; /* a record's words: G lanes' packed L, then the minimum */
    constexpr unsigned full = 0xffffffffu;
    const int DV = UP ? 3 : 2, DA = UP ? 6 : 4, DB = UP ? 7 : 5; /* from x, x - 1, x + 1 */
    __shared__ uint32_t jt[3][256];
    extern __shared__ uint4 strip_base[];
    const int w = a.width, h = a.height;
    const int nw = st.nw, sw = st.sw, strip = blockIdx.x;
    const int x0 = strip * sw;
    const bool diag = paths == 8;
    for (int i = threadIdx.x; i < 3 * 256; i += blockDim.x) {
        const int dir = i < 256 ? DV : i < 512 ? DA : DB;
        const int p1 = dir_penalty(a.dir_p1, dir), p2 = dir_penalty(a.dir_p2, dir);
        jt[i >> 8][i & 255] = (uint32_t)(stereo_p2_adaptive(p1, p2, a.p2_adapt, i & 255) - p1) * 0x10001u;
    }
    const strip_smem m = strip_layout<G>(strip_base, sw, D, nw, UP);
    if (UP) {
        const int kl = (int)strip_keys_len(sw, D);
        for (int i = threadIdx.x; i < 2 * m.kl; i += blockDim.x)
            m.keys[i] = KEY_EMPTY;
    }
    __syncthreads();
    const uint32_t p1v = (uint32_t)dir_penalty(a.dir_p1, DV) * 0x10001u;
    const uint32_t p1a = (uint32_t)dir_penalty(a.dir_p1, DA) * 0x10001u;
    const uint32_t p1b = (uint32_t)dir_penalty(a.dir_p1, DB) * 0x10001u;
    const int lane = (int)threadIdx.x & 31, wid = (int)threadIdx.x >> 5;
    const int g = lane / G, gl = lane % G, k0 = gl * K;
    const right_base<K> rb(a, k0);
    const int last = st.nstrips - 1;
    /* the neighbours' records: [strip][side][slot]; side 0: the strip's first column's L of
     * direction DB (for the strip on its left), side 1: its last column's L of DA */
    auto rec = [&](int s, int side, int r) {
        return st.ring + (((size_t)s * 2 + side) * STRIP_RING + (size_t)(r & (STRIP_RING - 1))) * REC;
    };
    uint32_t *const my_words = UP ? m.words + ((size_t)wid * 32 + lane) * W : NULL;
    const uint32_t *const group_words = UP ? my_words - gl * W : NULL;
    const int kbase = x0 - a.dmin - (D - 1); /* right pixel of key slot 0 */
    /* the column group of a warp's jj-th step in a row: the last warp walks its groups
     * backwards, the strip's last column first, so that its record is published early */
    auto column = [&](int jj) {
        const int j = wid == nw - 1 ? st.j - 1 - jj : jj;
        return (j * nw + wid) * CPW + g;
    };
    /* each step's cost inputs, loaded a row ahead */
    step_inputs<K, false, 1> pf[STRIP_JMAX];
    auto prefetch = [&](int jj, int r) {
        const int xc = min(x0 + column(jj), w - 1);
        const int y = UP ? h - 1 - r : r;
        load_step<K, false, MODE_STORE8, 1, true>(a, rb, (size_t)y * w + xc, xc - a.dmin - k0, k0,
                                                  pf[jj]);
    };
#pragma unroll
    for (int jj = 0; jj < STRIP_JMAX; jj++)
        if (jj < st.j)
            prefetch(jj, 0);

    for (int r = 0; r < h; r++) {
        const int y = UP ? h - 1 - r : r;
        const int yp = UP ? y + 1 : y - 1; /* the row the directions come from */
        const int cur = r & 1, prv = cur ^ 1;
        if (UP && a.disp_right && r > 0) {
            /* the previous row's keys into the global row, then emptied for row r + 1 */
            uint32_t *kk = m.keys + prv * m.kl;
            const int yk = h - r; /* the previous row's y */
            for (int i = threadIdx.x; i < sw + D - 1; i += blockDim.x) {
                const int xr = kbase + i;
                const uint32_t key = kk[key_slot(i)];
                if (key != KEY_EMPTY && xr >= 0 && xr < w)
                    atomicMin(&st.keys[(size_t)yk * w + xr], key);
                kk[key_slot(i)] = KEY_EMPTY;
            }
        }
#pragma unroll
        for (int jj = 0; jj < STRIP_JMAX; jj++) {
            if (jj >= st.j)
                break;
            const int c = column(jj); /* the column in the strip */
            const int x = x0 + c;
            const bool on = x < w;
            const int xc = on ? x : w - 1;
            const size_t p = (size_t)y * w + xc;
            const step_inputs<K, false, 1> in = pf[jj];
            if (r + 1 < h)
                prefetch(jj, r + 1);
            /* (UP) the downward sum and the horizontal directions' bytes, loaded before the
             * recurrences that they do not depend on */
            uint4 sd[UP ? W / 4 : 1], hh2[UP ? 2 : 1];
            if (UP) {
                const uint4 *sp = (const uint4 *)(st.S + p * HD + k0 / 2);
#pragma unroll
                for (int i = 0; i < W / 4; i++)
                    sd[UP ? i : 0] = __ldcs(sp + i);
#pragma unroll
                for (int d = 0; d < 2; d++)
                    hh2[UP ? d : 0] = __ldcs((const uint4 *)(a.L8 + (size_t)d * a.vol + p * D + k0));
            }
            uint32_t cost[W];
            step_costs_il<K, false>(a, in, xc - a.dmin - k0, cost);
            const int gr = in.grey;
            const bool has_prev = r > 0;
            const bool has_a = diag && has_prev && xc > 0, has_b = diag && has_prev && xc < w - 1;
            uint32_t pv[W], pa[W], pb[W];
            uint32_t mv = 0, ma = 0, mb = 0;
            int gv = 0, ga = 0, gb = 0;
#pragma unroll
            for (int i = 0; i < W; i++)
                pv[i] = pa[i] = pb[i] = 0;
            if (has_prev) {
                unpack_state<W>(m.lv[c * G + gl], pv);
                mv = m.mv[c];
                gv = __ldg(a.grey + (size_t)yp * w + xc);
            }
            /* the diagonal from x - 1: in this strip, or the left neighbour's last column */
            const bool wait_a = c == 0 && strip > 0 && diag && has_prev;
            const bool wait_b = c == sw - 1 && strip < last && diag && has_prev;
            if (__any_sync(full, wait_a)) {
                if (wait_a && gl == 0)
                    flag_wait(st.flags + 2 * (strip - 1) + 1, r);
                __syncwarp();
            }
            if (__any_sync(full, wait_b)) {
                if (wait_b && gl == 0)
                    flag_wait(st.flags + 2 * (strip + 1), r);
                __syncwarp();
            }
            if (has_a) {
                if (c > 0) {
                    unpack_state<W>(m.la[prv * m.col + (c - 1) * G + gl], pa);
                    ma = m.ma[prv * sw + c - 1];
                } else {
                    const uint32_t *q = rec(strip - 1, 1, r - 1);
                    unpack_state<W>(__ldcg((const uint4 *)q + gl), pa);
                    ma = __ldcg(q + D / 4);
                }
                ga = __ldg(a.grey + (size_t)yp * w + xc - 1);
            }
            if (has_b) {
                if (c < sw - 1) {
                    unpack_state<W>(m.lb[prv * m.col + (c + 1) * G + gl], pb);
                    mb = m.mb[prv * sw + c + 1];
                } else {
                    const uint32_t *q = rec(strip + 1, 0, r - 1);
                    unpack_state<W>(__ldcg((const uint4 *)q + gl), pb);
                    mb = __ldcg(q + D / 4);
                }
                gb = __ldg(a.grey + (size_t)yp * w + xc + 1);
            }
            uint32_t lv[W], la[W], lb[W], tot[W];
            const uint32_t nmv = il_recur<K, G>(pv, cost, mv, jt[0][abs(gr - gv)], p1v, gl, lv);
            uint32_t nma = 0, nmb = 0;
#pragma unroll
            for (int i = 0; i < W; i++)
                tot[i] = lv[i];
            if (diag) { /* uniform */
                nma = il_recur<K, G>(pa, cost, ma, jt[1][abs(gr - ga)], p1a, gl, la);
                nmb = il_recur<K, G>(pb, cost, mb, jt[2][abs(gr - gb)], p1b, gl, lb);
#pragma unroll
                for (int i = 0; i < W; i++)
                    tot[i] += la[i] + lb[i];
            }
            /* the state for the next row (every lane has read this column's minima) */
            __syncwarp();
            m.lv[c * G + gl] = pack_state<W>(lv);
            if (gl == 0)
                m.mv[c] = nmv;
            if (diag) {
                const uint4 qa = pack_state<W>(la), qb = pack_state<W>(lb);
                m.la[cur * m.col + c * G + gl] = qa;
                m.lb[cur * m.col + c * G + gl] = qb;
                if (gl == 0)
                    m.ma[cur * sw + c] = nma, m.mb[cur * sw + c] = nmb;
                /* the edge columns' records for the neighbours */
                const bool pub_b = c == 0 && strip > 0, pub_a = c == sw - 1 && strip < last;
                if (__any_sync(full, pub_a || pub_b)) {
                    if (pub_a || pub_b) {
                        uint32_t *q = rec(strip, pub_a ? 1 : 0, r);
                        ((uint4 *)q)[gl] = pub_a ? qa : qb;
                        if (gl == 0)
                            q[D / 4] = pub_a ? nma : nmb;
                    }
                    __syncwarp();
                    if ((pub_a || pub_b) && gl == 0)
                        flag_publish(st.flags + 2 * strip + (pub_a ? 1 : 0), r + 1);
                }
            }
            if (!UP) {
                if (on) {
                    uint4 *sp = (uint4 *)(st.S + p * HD + k0 / 2);
#pragma unroll
                    for (int i = 0; i < W; i += 4)
                        __stcs(sp + i / 4, make_uint4(tot[i], tot[i + 1], tot[i + 2], tot[i + 3]));
                }
            } else {
#pragma unroll
                for (int i = 0; i < W; i += 4) {
                    const uint4 v = sd[UP ? i / 4 : 0];
                    tot[i] += v.x, tot[i + 1] += v.y, tot[i + 2] += v.z, tot[i + 3] += v.w;
                }
#pragma unroll
                for (int d = 0; d < 2; d++) {
                    uint32_t hv[W];
                    bytes_to_il<W>(hh2[UP ? d : 0], hv);
#pragma unroll
                    for (int i = 0; i < W; i++)
                        tot[i] += hv[i];
                }
                uint32_t rv[W], rx[W];
                finish_il<K, G, false>(a, tot, xc, y, gl, k0, on, my_words, group_words, rv, rx);
                if (a.disp_right && on) {
                    /* this pixel's keys S << 9 | k for right pixels x - dmin - k */
                    uint32_t *kk = m.keys + cur * m.kl;
#pragma unroll
                    for (int i = 0; i < W; i++) {
#pragma unroll
                        for (int hh = 0; hh < 2; hh++) {
                            const int k = k0 + i + hh * W;
                            const int xr = x - a.dmin - k;
                            const uint32_t s = hh ? tot[i] >> 16 : tot[i] & 0xffffu;
                            if (xr >= 0)
                                atomicMin(&kk[key_slot(xr - kbase)], s << 9 | (uint32_t)k);
                        }
                    }
                }
            }
            __syncwarp(); /* lane 0's reads of the group's words before the next step's writes */
        }
        __syncthreads();
    }
    if (UP && a.disp_right) { /* the last row's keys */
        uint32_t *kk = m.keys + ((h - 1) & 1) * m.kl;
        for (int i = threadIdx.x; i < sw + D - 1; i += blockDim.x) {
            const int xr = kbase + i;
            const uint32_t key = kk[key_slot(i)];
            if (key != KEY_EMPTY && xr >= 0 && xr < w)
                atomicMin(&st.keys[xr], key);
        }
    }
}

/* The right disparities from the merged keys (write_right_row's rule); the keys emptied for the
 * next frame. */
static __global__ void k_strips_right(sgm_args a, uint32_t *keys)
{
    const size_t n = (size_t)a.width * a.height;
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n;
         q += (size_t)gridDim.x * blockDim.x) {
        const uint32_t key = keys[q];
        keys[q] = KEY_EMPTY;
        a.disp_right[q] = key == KEY_EMPTY || (a.valid_right && !a.valid_right[q])
                              ? STEREO_INVALID
                              : (int16_t)(STEREO_SUBPIXEL_SCALE * (a.dmin + (int)(key & 511)));
    }
}

int sgm_strips_plan(int w, int ndisp, int sms, sgm_strips_state *st)
{
    if (ndisp != 64 && ndisp != 128 && ndisp != 256)
        return 0;
    const int G = ndisp / STRIP_K, cpw = 32 / G;
    const int groups = (w + cpw - 1) / cpw; /* column groups of a row */
    int j = 1, nw;
    for (;; j++) {
        nw = (groups + sms * j - 1) / (sms * j);
        if (nw <= STRIP_MAX_WARPS)
            break;
    }
    if (j > STRIP_JMAX)
        return 0;
    const int sw = cpw * nw * j;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return 0;
    const size_t smem = strip_smem_bytes(sw, ndisp, nw, true);
    if (smem + 3 * 256 * 4 > (size_t)optin)
        return 0;
    memset(st, 0, sizeof *st);
    st->sw = sw, st->nw = nw, st->j = j;
    st->nstrips = (w + sw - 1) / sw;
    st->smem = smem;
    return 1;
}

template <int G>
static cudaError_t launch_strips_g(const sgm_args *a, int paths, int part, cudaStream_t stream)
{
    const sgm_strips_state st = *a->strips;
    const size_t flags = (size_t)st.nstrips * 2 * sizeof(int);
    const size_t smem_dn = strip_smem_bytes(st.sw, a->ndisp, st.nw, false);
    cudaError_t e;
    if ((e = cudaFuncSetAttribute(k_strips<G, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem_dn)) != cudaSuccess ||
        (e = cudaFuncSetAttribute(k_strips<G, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)st.smem)) != cudaSuccess)
        return e;
    if ((e = cudaMemsetAsync(st.flags, 0, flags, stream)) != cudaSuccess)
        return e;
    if (part == 0) {
        k_strips<G, false><<<st.nstrips, st.nw * 32, smem_dn, stream>>>(*a, st, paths);
        return cudaGetLastError();
    }
    k_strips<G, true><<<st.nstrips, st.nw * 32, st.smem, stream>>>(*a, st, paths);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if (a->disp_right) {
        const size_t n = (size_t)a->width * a->height;
        k_strips_right<<<(unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096), 256, 0,
                         stream>>>(*a, st.keys);
        e = cudaGetLastError();
    }
    return e;
}

cudaError_t launch_sgm_strips(const sgm_args *a, int paths, int part, cudaStream_t stream)
{
    if (!a->strips || !a->cost_vol || (paths != 4 && paths != 8) || (part != 0 && part != 1))
        return cudaErrorInvalidValue;
    switch (a->ndisp) {
    case 64: return launch_strips_g<4>(a, paths, part, stream);
    case 128: return launch_strips_g<8>(a, paths, part, stream);
    case 256: return launch_strips_g<16>(a, paths, part, stream);
    }
    return cudaErrorInvalidValue;
}
