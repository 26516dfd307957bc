/* SPDX-License-Identifier: Apache-2.0 */
/* sweep_proto.cu — a timing experiment for #3, not part of the stage: the three downward
 * directions (2: down, 4: down-right, 5: down-left) in one top-to-bottom, row-synchronous sweep,
 * each group of G lanes owning one column, the sum L2 + L4 + L5 written once as 16 bits.
 *
 * It answers one question before the fused design is built: how long does a row-synchronous
 * sweep take on this GPU without any hand-off between blocks? The blocks' strips are treated as
 * independent (a diagonal path starts again at a strip's edge), which the real design must not
 * do, so the time here is a lower bound for it; the output is not compared with anything.
 * Compare with the per-direction walk (docs/cuda-notes.md), which does all 8 directions in
 * 0.585 ms at 1280x960 D128 on an H100 and stores 1 byte per direction and voxel.
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 -DSGM_TABLE=0 -Igpu -Ihal tools/sweep_proto.cu -o sweep-proto
 *   ./sweep-proto [WIDTH HEIGHT]          (D = 128; prints the median of 100 runs)
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sgm_walk.cuh"

#define CHECK(x)                                                                                 \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "sweep-proto: %s: %s (line %d)\n", #x, cudaGetErrorString(e_),       \
                    __LINE__);                                                                   \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

template <int K, int G, int SW>
static __global__ void __launch_bounds__(SW * G) k_sweep_down(sgm_args a, uint16_t *S)
{
    constexpr int W = K / 2, D = K * G, PF = 4, DW = D / 2;
    __shared__ uint32_t jump_table[256];
    /* [row parity][0: L4, 1: L5][column][D/2 words] (the strip's edge columns start their
     * diagonal paths, so nothing outside the strip is read) */
    __shared__ __align__(16) uint32_t nb[2][2][SW][DW];
    __shared__ uint32_t nb_min[2][2][SW];
    fill_jump_table(a, a.p1, a.p2, jump_table);
    const int w = a.width, h = a.height;
    const int col = threadIdx.x / G, lane = threadIdx.x % G, k0 = lane * K;
    const int x = blockIdx.x * SW + col;
    const bool live = x < w;
    const int xc = live ? x : w - 1;
    const bool first = col == 0, last = col == SW - 1 || x == w - 1;
    const uint32_t p1x2 = (uint32_t)a.p1 * 0x10001u;
    const right_base<K> rb(a, k0);
    step_inputs<K, false, 1> ring[PF];
#pragma unroll
    for (int j = 0; j < PF; j++)
        load_step<K, false, MODE_STORE8, 1>(a, rb, (size_t)min(j, h - 1) * w + xc,
                                            xc - a.dmin - k0, k0, ring[j]);
    uint32_t p2[W], m2 = 0, m4, m5;
    int g_prev = 0;
    for (int base = 0; base < h; base += PF) {
#pragma unroll
        for (int j = 0; j < PF; j++) {
            const int y = base + j;
            if (y >= h)
                break;
            step_inputs<K, false, 1> &in = ring[j];
            uint32_t cost[W], c2[W], c4[W], c5[W];
            step_costs<K, false, 1>(a, in, xc - a.dmin - k0, cost);
            if (y == 0) {
#pragma unroll
                for (int i = 0; i < W; i++)
                    c2[i] = c4[i] = c5[i] = cost[i];
            } else {
                const int par = (y - 1) & 1;
                /* dir 2: the column's own previous L */
                uint32_t below = __shfl_up_sync(0xffffffffu, p2[W - 1], 1, G);
                uint32_t above = __shfl_down_sync(0xffffffffu, p2[0], 1, G);
                if (lane == 0)
                    below = FAR2;
                if (lane == G - 1)
                    above = FAR2;
                uint32_t j2 = m2 + jump_table[abs(in.grey - g_prev)];
                recurrence_step(p2, below, above, cost, j2, p1x2, m2, c2);
                /* dir 4 from column x - 1, dir 5 from x + 1, both of the previous row */
                const int gl = a.grey[(size_t)(y - 1) * w + max(xc - 1, 0)];
                const int gr = a.grey[(size_t)(y - 1) * w + min(xc + 1, w - 1)];
#pragma unroll
                for (int d = 0; d < 2; d++) {
                    const bool start = d == 0 ? first : last;
                    const int c = start ? col : d == 0 ? col - 1 : col + 1;
                    const uint32_t *row = nb[par][d][c];
                    uint32_t pv[W];
#pragma unroll
                    for (int i = 0; i < W; i++)
                        pv[i] = row[lane * W + i];
                    uint32_t bl = lane == 0 ? FAR2 : row[lane * W - 1];
                    uint32_t ab = lane == G - 1 ? FAR2 : row[lane * W + W];
                    uint32_t mm = nb_min[par][d][c];
                    uint32_t jj = mm + jump_table[abs(in.grey - (d == 0 ? gl : gr))];
                    recurrence_step(pv, bl, ab, cost, jj, p1x2, mm, d == 0 ? c4 : c5);
                    if (start) { /* a diagonal path starts at the strip's edge */
#pragma unroll
                        for (int i = 0; i < W; i++)
                            (d == 0 ? c4 : c5)[i] = cost[i];
                    }
                }
            }
            m2 = line_min2<G>(c2, 0xffffffffu);
            m4 = line_min2<G>(c4, 0xffffffffu);
            m5 = line_min2<G>(c5, 0xffffffffu);
            const int par = y & 1;
#pragma unroll
            for (int i = 0; i < W; i++) {
                nb[par][0][col][lane * W + i] = c4[i];
                nb[par][1][col][lane * W + i] = c5[i];
            }
            if (lane == 0) {
                nb_min[par][0][col] = m4;
                nb_min[par][1][col] = m5;
            }
            uint32_t s[W];
#pragma unroll
            for (int i = 0; i < W; i++) {
                s[i] = c2[i] + c4[i] + c5[i];
                p2[i] = c2[i];
            }
            if (live)
                store_words(S + ((size_t)y * w + x) * D + k0, s);
            g_prev = in.grey;
            if (y + PF < h)
                load_step<K, false, MODE_STORE8, 1>(a, rb, (size_t)(y + PF) * w + xc,
                                                    xc - a.dmin - k0, k0, in);
            __syncthreads();
        }
    }
}

template <int SW, int K, int G>
static float run(sgm_args a, uint16_t *S, int reps)
{
    dim3 grid((a.width + SW - 1) / SW);
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int r = 0; r < reps + 10; r++) {
        CHECK(cudaEventRecord(e0));
        k_sweep_down<K, G, SW><<<grid, SW * G>>>(a, S);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaGetLastError());
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 10)
            t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char **argv)
{
    const int w = argc > 2 ? atoi(argv[1]) : 1280, h = argc > 2 ? atoi(argv[2]) : 960, D = 128;
    if (w < 16 || h < 2) {
        fprintf(stderr, "sweep-proto: size %dx%d too small\n", w, h);
        return 2;
    }
    const size_t n = (size_t)w * h;
    std::vector<uint8_t> rank(n), grey(n);
    srand(1);
    for (size_t i = 0; i < n; i++) {
        rank[i] = (uint8_t)(rand() % 81);
        grey[i] = (uint8_t)(rand() & 255);
    }
    uint8_t *rl, *rr, *g;
    uint16_t *S;
    CHECK(cudaMalloc(&rl, n));
    CHECK(cudaMalloc(&rr, RANK_PAD_FRONT + n + RANK_PAD_BACK));
    CHECK(cudaMalloc(&g, n));
    CHECK(cudaMalloc(&S, n * D * 2));
    CHECK(cudaMemset(rr, 0, RANK_PAD_FRONT + n + RANK_PAD_BACK));
    CHECK(cudaMemcpy(rl, rank.data(), n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(rr + RANK_PAD_FRONT, rank.data(), n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(g, grey.data(), n, cudaMemcpyHostToDevice));
    sgm_args a;
    memset(&a, 0, sizeof a);
    a.width = w, a.height = h, a.dmin = 0, a.ndisp = D;
    a.p1 = 16, a.p2 = 128, a.p2_adapt = 16, a.max_cost = 80;
    a.cost = STEREO_COST_RANK;
    a.grey = g, a.rank_l = rl, a.rank_r = rr + RANK_PAD_FRONT;
    printf("%dx%d D%d, directions 2, 4, 5 in one sweep, 16-bit sum written (%.0f MB):\n", w, h,
           D, n * D * 2 / 1e6);
#define VARIANT(SW, K, G)                                                                        \
    printf("  %2d disparities per lane, strips of %2d columns (%d threads): %.3f ms\n", K, SW,      \
           SW * G, run<SW, K, G>(a, S, 100))
    VARIANT(16, 16, 8);
    VARIANT(32, 16, 8);
    VARIANT(8, 8, 16);
    VARIANT(16, 8, 16);
    VARIANT(4, 4, 32);
    VARIANT(8, 4, 32);
    return 0;
}
