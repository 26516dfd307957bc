/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_sweep.cu — stages 4 to 7 on the GPU, the sweep design: the eight directions in two
 * wavefront sweeps, 4 bytes of memory traffic per voxel instead of the per-direction design's 16.
 *
 * The same decomposition as the CPU reference (sgm.h, sgm_aggregate_sweep):
 *   1. the forward sweep (rows top to bottom, each row left to right) computes the directions
 *      that come from the left and from above, 0 (->), 2 (down), 4 (down-right) and 5
 *      (down-left), adds their L and writes the 16-bit partial sum S_fwd once (2 bytes a voxel);
 *   2. the backward sweep (rows bottom to top, right to left) computes 1, 3, 7 and 6, adds S_fwd
 *      (2 bytes a voxel read) and finishes each pixel in the same pass: winner-takes-all,
 *      uniqueness, subpixel, confidence, and the right disparity from a ring of running minima
 *      (a right-to-left scan has seen every candidate of right pixel xr when it reaches
 *      x = xr + dmin).
 * With 4 paths each sweep has only the horizontal and vertical directions; the diagonal terms
 * are left out (their L is never added).
 *
 * In "sweep coordinates" (xi: the pixel's index in the scan order of its row, r: the row's index
 * in the sweep's order) the two sweeps are the same code: the horizontal direction comes from
 * (xi - 1, r), the vertical from (xi, r - 1), one diagonal from (xi - 1, r - 1) and the other
 * from (xi + 1, r - 1). So row r can do pixel xi once row r - 1 has done xi + 1: the rows run as
 * a wavefront, each two pixels behind the row before it.
 *
 * Work split. A group of G lanes walks one row (K = D / G disparities a lane, kept in the
 * interleaved layout of walk_line_il: word j = (L(k0 + j), L(k0 + j + W))); a warp holds
 * RPW = 32 / G consecutive rows, group g two steps behind group g - 1 (step s: xi = s - 2g).
 * After each step group g leaves a record of its pixel in shared memory for group g + 1: the
 * L of the diagonal from xi + 1 at xi, the vertical's at xi - 1 and the other diagonal's at
 * xi - 2 (held back in registers for one and two steps), their minima and grey values. Group
 * g + 1 reads it in the next step, where it needs exactly these (its pixel is xi - 1).
 * Between warps the last group's records go through global memory (a ring of two rows of
 * records, which stays in L2): a warp takes its rows in order from a ticket counter, so the
 * rows before its own are always running or done, and the next warp's group 0 copies each
 * record into shared memory a few steps ahead (cp.async on sm_80+). Every word of a record
 * carries its writer's tag (sweep_tag), so the reader knows from the words themselves whether
 * they are there yet (and copies them again until they are): no fence and no flag, which
 * measured 6-10x slower than the per-direction design on 16 SMs (docs/cuda-notes.md).
 *
 * Requirements (stage_cuda_create.cu checks them; it picks this design only where the others have no
 * kernels or do not fit, since it runs slower wherever they do): every L fits a byte (sgm_fits_bytes), no path weights (the sums stay below 2048, which the half2 arithmetic
 * of IL_HALF needs), D = K * G with K 8 or 16 and G a power of two up to 32 (D 16 .. 512), and
 * the cost of rank (computed on the fly, as the walk does) or a cost volume (the volume build).
 */
#include <stdlib.h>
#include <string.h>

#include "sgm_walk.cuh"

#if !defined(SGM_CENSUS) || !defined(SGM_TABLE) || SGM_CENSUS || SGM_TABLE
#error "compile sgm_sweep.cu with -DSGM_CENSUS=0 -DSGM_TABLE=0 and -DSGM_VOLUME=0|1: see build.ninja"
#endif

#define SWEEP_BLOCK 64 /* two warps: finer scheduling of the rows' tickets */
#define SWEEP_NQ 8     /* group 0's staging slots for the previous warp's records */

/* cp.async.wait_group takes an immediate: all but the n newest copies complete */
static __device__ __forceinline__ void sweep_copy_wait(int n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 6;\n" ::: "memory"); break;
    }
#endif
}
static __device__ __forceinline__ void sweep_copy_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/* The sweep's directions in the order horizontal, vertical, diagonal from xi - 1, diagonal from
 * xi + 1 (sgm.h's indices) */
template <bool BWD>
static __device__ __forceinline__ int sweep_dir(int r)
{
    return BWD ? (r == 0 ? 1 : r == 1 ? 3 : r == 2 ? 7 : 6) : (r == 0 ? 0 : r == 1 ? 2 : r == 2 ? 4 : 5);
}

/* A copy of 16 bytes from global to shared memory, read from L2 (a record another warp wrote):
 * asynchronous on sm_80+ (waited for by sweep_copy_wait), else through a register. */
static __device__ __forceinline__ void sweep_copy16(uint32_t *dst, const uint32_t *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
    *(uint4 *)dst = __ldcg((const uint4 *)src);
#endif
}

/* What a step loads ahead: the cost inputs of its pixel and (backward) the pixel's S_fwd words */
template <int K, bool BWD>
struct sweep_inputs {
    step_inputs<K, false, 1> in;
    uint32_t sf[BWD ? K / 2 : 1];
};

/* Record words carry a tag in the high byte of each 16-bit half (every value of a record fits a
 * byte): the ticket's (T >> 1) & 255. A ring slot is written by tickets T, T + 2, ..., so a word
 * of the record that ticket T + 1 needs holds either ticket T's tag (the value is there: aligned
 * 32-bit stores and loads are single-copy atomic) or T - 2's (not yet): no fence, no flag. */
#define SW_VAL 0x00ff00ffu
#define SW_TAG 0xff00ff00u
static __device__ __forceinline__ uint32_t sweep_tag(unsigned long long T)
{
    return (uint32_t)((T >> 1) & 255u) * 0x01000100u;
}

template <int K, int G, bool BWD>
static __global__ void __launch_bounds__(SWEEP_BLOCK) k_sweep(sgm_args a, int ntasks, int paths,
                                                             int pfq)
{
    constexpr int W = K / 2, D = K * G, HD = D / 2, RPW = 32 / G;
    constexpr int REC = 3 * HD + 4; /* words of a record: 3 directions' L, then minima and greys */
    constexpr int PF = BWD ? 2 : 4; /* steps loaded ahead */
    constexpr unsigned full = 0xffffffffu;
    __shared__ uint32_t jt[4][256];
    extern __shared__ uint4 sweep_smem[];
    const int w = a.width, h = a.height;
    /* the four directions' jump terms (P2' - P1 in both halves) for |dI| = 0..255 */
    for (int i = threadIdx.x; i < 4 * 256; i += SWEEP_BLOCK) {
        const int dir = sweep_dir<BWD>(i >> 8);
        const int p1 = dir_penalty(a.dir_p1, dir), p2 = dir_penalty(a.dir_p2, dir);
        jt[i >> 8][i & 255] = (uint32_t)(stereo_p2_adaptive(p1, p2, a.p2_adapt, i & 255) - p1) * 0x10001u;
    }
    __syncthreads();
    const int lane = (int)threadIdx.x & 31, wid = (int)threadIdx.x >> 5;
    if (blockIdx.x * (SWEEP_BLOCK / 32) + wid >= ntasks) /* exactly ntasks warps take tickets */
        return;
    const int g = lane / G, gl = lane % G, k0 = gl * K;
    /* the warp's rows: the next ticket of a counter that runs on over sweeps and frames (each
     * sweep takes ntasks tickets, in the order the warps start) */
    unsigned long long T = 0;
    if (lane == 0)
        T = atomicAdd((unsigned long long *)a.sweep_sync, 1ull);
    T = __shfl_sync(full, T, 0);
    const int t = (int)(T % (unsigned long long)ntasks);
    const uint32_t tag_out = sweep_tag(T), tag_in = sweep_tag(T - 1);
    uint32_t *const xb = (uint32_t *)sweep_smem + wid * ((2 * (RPW + 1) + SWEEP_NQ) * REC + 32 * W);
    uint32_t *const stage = xb + 2 * (RPW + 1) * REC; /* group 0's records, by the step using them */
    uint32_t *const my_words = stage + SWEEP_NQ * REC + lane * W;
    const uint32_t *const group_words = my_words - gl * W;
    const int r = t * RPW + g; /* the group's row in the sweep's order */
    const bool live = r < h;
    const int rr = live ? r : h - 1;
    const int y = BWD ? h - 1 - rr : rr;
    const bool top = r == 0;
    const bool diag = paths == 8;
    const uint32_t *const ring_in = a.sweep_ring + (size_t)((T - 1) & 1) * (w + 1) * REC;
    uint32_t *const ring_out = a.sweep_ring + (size_t)(T & 1) * (w + 1) * REC;
    uint32_t p1x[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        p1x[i] = (uint32_t)dir_penalty(a.dir_p1, sweep_dir<BWD>(i)) * 0x10001u;
    if (BWD && a.disp_right && live) /* right pixels without a candidate inside the image */
        for (int xr = w - a.dmin + gl; xr < w; xr += G)
            if (xr >= 0)
                a.disp_right[(size_t)y * w + xr] = STEREO_INVALID;

    /* group 0: the previous warp's record q = u + 1 (what step u reads) into staging slot u,
     * copied pfq steps ahead; the tags say later whether it was there yet */
    auto fetch = [&](int u) {
        if (t > 0 && u + 1 <= w && g == 0) {
            const uint32_t *src = ring_in + (size_t)(u + 1) * REC;
            uint32_t *into = stage + (u & (SWEEP_NQ - 1)) * REC;
#pragma unroll
            for (int d = 0; d < 3; d++)
#pragma unroll
                for (int i = 0; i < W; i += 4)
                    sweep_copy16(into + d * HD + k0 / 2 + i, src + d * HD + k0 / 2 + i);
            if (gl == 0)
                sweep_copy16(into + 3 * HD, src + 3 * HD);
        }
        sweep_copy_commit();
    };
    auto slot = [&](int s, int grp) { return xb + ((s & 1) * (RPW + 1) + grp) * REC; };

    const int nsteps = w + 1 + 2 * (RPW - 1); /* the last group's steps, its flush included */
    const right_base<K> rb(a, k0);
    auto load = [&](int s, sweep_inputs<K, BWD> &in) {
        const int xc = min(max(s - 2 * g, 0), w - 1);
        const int x = BWD ? w - 1 - xc : xc;
        const size_t p = (size_t)y * w + x;
        load_step<K, false, MODE_STORE8, 1, true>(a, rb, p, x - a.dmin - k0, k0, in.in);
        if (BWD) {
            const uint4 *sp = (const uint4 *)(a.sweep_S + p * HD + k0 / 2);
#pragma unroll
            for (int i = 0; i < W / 4; i++) {
                const uint4 v = __ldcs(sp + i);
                in.sf[BWD ? 4 * i : 0] = v.x, in.sf[BWD ? 4 * i + 1 : 0] = v.y;
                in.sf[BWD ? 4 * i + 2 : 0] = v.z, in.sf[BWD ? 4 * i + 3 : 0] = v.w;
            }
        }
    };
    sweep_inputs<K, BWD> pf[PF];
#pragma unroll
    for (int j = 0; j < PF; j++)
        load(j, pf[j]);
    for (int u = 0; u < pfq; u++) /* what group 0 reads in the first steps */
        fetch(u);
    sweep_copy_wait(pfq - 1);
    __syncwarp();

    uint32_t prev_h[W], dl2[W], dl4a[W], dl4b[W]; /* horizontal's previous L; the delayed L */
#pragma unroll
    for (int i = 0; i < W; i++)
        prev_h[i] = dl2[i] = dl4a[i] = dl4b[i] = 0;
    uint32_t mh = 0, m2d = 0, m4a = 0, m4b = 0; /* their minima */
    int gprev = 0, gd1 = 0, gd2 = 0;             /* grey values of xi - 1 and xi - 2 */
    uint32_t rv[W], rx[W];                       /* backward: the right ring */
#pragma unroll
    for (int i = 0; i < W; i++)
        rv[i] = SW_EMPTY, rx[i] = 0;

    for (int base = 0; base < nsteps; base += PF) {
#pragma unroll
        for (int j = 0; j < PF; j++) {
            const int s = base + j;
            if (s >= nsteps)
                break;
            const int xi = s - 2 * g;
            const bool on = live && xi >= 0 && xi < w;
            const int xc = min(max(xi, 0), w - 1);
            const int x = BWD ? w - 1 - xc : xc;
            const size_t p = (size_t)y * w + x;
            /* group 0's record for step s + pfq, from the previous warp */
            fetch(s + pfq);
            /* the row above: record xi + 1 of the group before (slot g of the last step; group 0:
             * the previous warp's, staged) */
            uint32_t *rec = g == 0 ? stage + (s & (SWEEP_NQ - 1)) * REC : slot(s - 1, g);
            uint32_t ub[W], uv[W], ua[W]; /* L at xi + 1, xi, xi - 1 of the row above */
            uint4 meta;
            const bool check = g == 0 && t > 0 && s + 1 <= w; /* a staged record to check */
            for (;;) {
                uint32_t bad = 0;
#pragma unroll
                for (int i = 0; i < W; i += 4) {
                    const uint4 b4 = *(const uint4 *)(rec + k0 / 2 + i);
                    const uint4 v4 = *(const uint4 *)(rec + HD + k0 / 2 + i);
                    const uint4 a4 = *(const uint4 *)(rec + 2 * HD + k0 / 2 + i);
                    ub[i] = b4.x, ub[i + 1] = b4.y, ub[i + 2] = b4.z, ub[i + 3] = b4.w;
                    uv[i] = v4.x, uv[i + 1] = v4.y, uv[i + 2] = v4.z, uv[i + 3] = v4.w;
                    ua[i] = a4.x, ua[i + 1] = a4.y, ua[i + 2] = a4.z, ua[i + 3] = a4.w;
                }
                meta = *(const uint4 *)(rec + 3 * HD);
#pragma unroll
                for (int i = 0; i < W; i++)
                    bad |= (ub[i] ^ tag_in) | (uv[i] ^ tag_in) | (ua[i] ^ tag_in);
                bad |= (meta.x ^ tag_in) | (meta.y ^ tag_in) | (meta.z ^ tag_in);
                if (!__any_sync(full, check && (bad & SW_TAG)))
                    break;
                /* the previous warp is not that far yet: copy the record again, synchronously */
                __syncwarp();
                if (g == 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
                    __nanosleep(32);
#endif
                    const uint32_t *src = ring_in + (size_t)(s + 1) * REC;
#pragma unroll
                    for (int d = 0; d < 3; d++)
#pragma unroll
                        for (int i = 0; i < W; i += 4)
                            *(uint4 *)(rec + d * HD + k0 / 2 + i) =
                                __ldcg((const uint4 *)(src + d * HD + k0 / 2 + i));
                    if (gl == 0)
                        *(uint4 *)(rec + 3 * HD) = __ldcg((const uint4 *)(src + 3 * HD));
                }
                __syncwarp();
            }
#pragma unroll
            for (int i = 0; i < W; i++)
                ub[i] &= SW_VAL, uv[i] &= SW_VAL, ua[i] &= SW_VAL;
            const uint32_t mb_ = meta.x & 255u, mv_ = meta.y & 255u, ma_ = meta.z & 255u;
            const int gb_ = (int)(meta.x >> 16 & 255u), gv_ = (int)(meta.y >> 16 & 255u);
            const int ga_ = (int)(meta.z >> 16 & 255u);
            /* which neighbours exist (else prev = 0 and min = 0, which makes L = C) */
            const uint32_t hh = xi > 0 ? full : 0u, hv = !top ? full : 0u;
            const uint32_t ha = !top && xi > 0 ? full : 0u, hb = !top && xi < w - 1 ? full : 0u;
            sweep_inputs<K, BWD> &in = pf[j];
            const int gr = in.in.grey;
            uint32_t cost[W];
            step_costs_il<K, false>(a, in.in, x - a.dmin - k0, cost);
            uint32_t ch[W], cv[W], ca[W], cb[W];
#pragma unroll
            for (int i = 0; i < W; i++) {
                prev_h[i] &= hh, uv[i] &= hv, ua[i] &= ha, ub[i] &= hb;
            }
            const uint32_t nmh = il_recur<K, G>(prev_h, cost, mh & hh, jt[0][abs(gr - gprev)],
                                                p1x[0], gl, ch);
            const uint32_t nmv = il_recur<K, G>(uv, cost, (mv_ * 0x10001u) & hv,
                                                jt[1][abs(gr - gv_)], p1x[1], gl, cv);
            uint32_t nma = 0, nmb = 0;
            uint32_t tot[W];
#pragma unroll
            for (int i = 0; i < W; i++)
                tot[i] = (BWD ? in.sf[BWD ? i : 0] : 0u) + ch[i] + cv[i];
            if (diag) { /* uniform */
                nma = il_recur<K, G>(ua, cost, (ma_ * 0x10001u) & ha, jt[2][abs(gr - ga_)],
                                     p1x[2], gl, ca);
                nmb = il_recur<K, G>(ub, cost, (mb_ * 0x10001u) & hb, jt[3][abs(gr - gb_)],
                                     p1x[3], gl, cb);
#pragma unroll
                for (int i = 0; i < W; i++)
                    tot[i] += ca[i] + cb[i];
            } else {
#pragma unroll
                for (int i = 0; i < W; i++)
                    ca[i] = cb[i] = 0;
            }
            if (!BWD) {
                if (on) {
                    uint4 *sp = (uint4 *)(a.sweep_S + p * HD + k0 / 2);
#pragma unroll
                    for (int i = 0; i < W; i += 4)
                        __stcs(sp + i / 4, make_uint4(tot[i], tot[i + 1], tot[i + 2], tot[i + 3]));
                }
            } else {
                finish_il<K, G>(a, tot, x, y, gl, k0, on, my_words, group_words, rv, rx);
            }
            /* this pixel's record (q = xi) for the row below, tagged: the diagonal from xi + 1
             * now, the vertical one step late, the other diagonal two steps late; to shared
             * memory, and from the warp's last row also to the next warp */
            uint32_t ob[W], ov[W], oa[W];
#pragma unroll
            for (int i = 0; i < W; i++) {
                ob[i] = (cb[i] & SW_VAL) | tag_out;
                ov[i] = (dl2[i] & SW_VAL) | tag_out;
                oa[i] = (dl4b[i] & SW_VAL) | tag_out;
            }
            const uint4 om = make_uint4(((nmb & 255u) | (uint32_t)gr << 16) | tag_out,
                                        ((m2d & 255u) | (uint32_t)gd1 << 16) | tag_out,
                                        ((m4b & 255u) | (uint32_t)gd2 << 16) | tag_out, tag_out);
            const int xl = s - 2 * (RPW - 1); /* the last group's xi (uniform) */
            uint32_t *outs[2] = {slot(s, g + 1), ring_out + (size_t)min(max(xl, 0), w) * REC};
#pragma unroll
            for (int o = 0; o < 2; o++) {
                if (o == 1 && !(g == RPW - 1 && xl >= 0 && xl <= w))
                    break;
                uint32_t *out = outs[o];
#pragma unroll
                for (int i = 0; i < W; i += 4) {
                    *(uint4 *)(out + k0 / 2 + i) = make_uint4(ob[i], ob[i + 1], ob[i + 2], ob[i + 3]);
                    *(uint4 *)(out + HD + k0 / 2 + i) = make_uint4(ov[i], ov[i + 1], ov[i + 2], ov[i + 3]);
                    *(uint4 *)(out + 2 * HD + k0 / 2 + i) =
                        make_uint4(oa[i], oa[i + 1], oa[i + 2], oa[i + 3]);
                }
                if (gl == 0)
                    *(uint4 *)(out + 3 * HD) = om;
            }
            /* shift the delays */
#pragma unroll
            for (int i = 0; i < W; i++) {
                dl4b[i] = dl4a[i], dl4a[i] = ca[i], dl2[i] = cv[i], prev_h[i] = ch[i];
            }
            m4b = m4a, m4a = nma, m2d = nmv, mh = nmh;
            gd2 = gd1, gd1 = gr, gprev = gr;
            sweep_copy_wait(pfq - 1); /* group 0's record for the next step is in (or checked) */
            __syncwarp();
            if (s + PF < nsteps)
                load(s + PF, in);
        }
    }
}

template <int K, int G>
static cudaError_t launch_sweep_kg(const sgm_args *a, int paths, cudaStream_t stream)
{
    constexpr int W = K / 2, D = K * G, RPW = 32 / G, REC = 3 * (D / 2) + 4;
    const int ntasks = (a->height + RPW - 1) / RPW;
    const size_t smem =
        (size_t)(SWEEP_BLOCK / 32) * ((2 * (RPW + 1) + SWEEP_NQ) * REC + 32 * W) * sizeof(uint32_t);
    /* how many steps ahead group 0 copies the previous warp's records (1 .. SWEEP_NQ - 1);
     * STEREO_CUDA_SWEEP_PFQ overrides (measurements) */
    int pfq = 1;
    const char *e_pfq = getenv("STEREO_CUDA_SWEEP_PFQ");
    if (e_pfq && atoi(e_pfq) >= 1 && atoi(e_pfq) < SWEEP_NQ)
        pfq = atoi(e_pfq);
    const unsigned grid = (unsigned)((ntasks + SWEEP_BLOCK / 32 - 1) / (SWEEP_BLOCK / 32));
    cudaError_t e;
    /* the dynamic shared memory beside the jump tables may pass the default 48 KB */
    if ((e = cudaFuncSetAttribute(k_sweep<K, G, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem)) != cudaSuccess ||
        (e = cudaFuncSetAttribute(k_sweep<K, G, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem)) != cudaSuccess)
        return e;
    k_sweep<K, G, false><<<grid, SWEEP_BLOCK, smem, stream>>>(*a, ntasks, paths, pfq);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    k_sweep<K, G, true><<<grid, SWEEP_BLOCK, smem, stream>>>(*a, ntasks, paths, pfq);
    return cudaGetLastError();
}

/* STEREO_CUDA_SWEEP_K=8 (measurements): 8 disparities a lane instead of 16 (twice the lanes a
 * row, half the rows a warp) */
static int sweep_k8(void)
{
    const char *env = getenv("STEREO_CUDA_SWEEP_K");
    return env && !strcmp(env, "8");
}

#if SGM_VOLUME
cudaError_t launch_sgm_sweep_volume(const sgm_args *a, int paths, cudaStream_t stream)
#else
cudaError_t launch_sgm_sweep_rank(const sgm_args *a, int paths, cudaStream_t stream)
#endif
{
    if (paths != 4 && paths != 8)
        return cudaErrorInvalidValue;
    if (sweep_k8()) {
        switch (a->ndisp) {
        case 16: return launch_sweep_kg<8, 2>(a, paths, stream);
        case 32: return launch_sweep_kg<8, 4>(a, paths, stream);
        case 64: return launch_sweep_kg<8, 8>(a, paths, stream);
        case 128: return launch_sweep_kg<8, 16>(a, paths, stream);
        case 256: return launch_sweep_kg<8, 32>(a, paths, stream);
        }
    }
    switch (a->ndisp) {
    case 16: return launch_sweep_kg<8, 2>(a, paths, stream);
    case 32: return launch_sweep_kg<8, 4>(a, paths, stream);
    case 64: return launch_sweep_kg<16, 4>(a, paths, stream);
    case 128: return launch_sweep_kg<16, 8>(a, paths, stream);
    case 256: return launch_sweep_kg<16, 16>(a, paths, stream);
    case 512: return launch_sweep_kg<16, 32>(a, paths, stream);
    }
    return cudaErrorInvalidValue;
}

#if !SGM_VOLUME
cudaError_t launch_sgm_sweep(const sgm_args *a, int paths, cudaStream_t stream)
{
    return a->cost_vol ? launch_sgm_sweep_volume(a, paths, stream)
                       : launch_sgm_sweep_rank(a, paths, stream);
}
#endif
