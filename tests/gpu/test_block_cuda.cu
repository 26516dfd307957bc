/* SPDX-License-Identifier: Apache-2.0 */
/* test_block_cuda.cu — block matching's box sum on the GPU (gpu/block.cu, launch_block_sum)
 * against the CPU reference (gpu/block.c on the cost volume of gpu/sgm.c), bit for bit
 * (runs on a GPU machine):
 *
 *   build/gpu/test-block-cuda
 *
 * Each case fills random transformed images for one cost kind (rank values, census words, grey
 * values with the ad table or a random mi-like table, bt words built from grey rows), computes
 * the CPU cost volume with sgm.c's own function for that cost, then V and S with
 * block_vertical_rows / block_horizontal_rows, and compares the kernels' V (the vertical pass)
 * and S (the result) with them, so that a failure names the pass that broke. The device rows are
 * allocated without padding (launch.cuh: launch_block_sum reads right pixels only where
 * x - d >= 0), so compute-sanitizer's memcheck also checks that claim. Sizes include odd ones,
 * blocks larger than the image, one row and one column; the SM count passed in a->sms varies
 * the kernels' chunking (every chunk starts with a full sum).
 *
 * Needs only libc and CUDA: one line per failure and a closing "N passed, N failed" line;
 * exits non-zero on any failure.
 */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "launch.cuh"
#include "sgm.h"
#include "stereo_math.h"

#include "check.h"

enum { KIND_RANK, KIND_CENSUS, KIND_AD, KIND_MI, KIND_BT };
static const char *const kind_names[] = {"rank", "census", "ad", "mi", "bt"};

/* bt's packed word of every pixel of a grey row: I | lo << 8 | hi << 16, the range as sgm.c
 * forms it (stereo_bt_range, a missing neighbour replaced by I itself) */
static void bt_words(const uint8_t *row, int w, uint64_t *out)
{
    for (int x = 0; x < w; x++) {
        int lo, hi;
        stereo_bt_range(row[x > 0 ? x - 1 : x], row[x], row[x + 1 < w ? x + 1 : x], &lo, &hi);
        out[x] = (uint64_t)row[x] | (uint64_t)lo << 8 | (uint64_t)hi << 16;
    }
}

static size_t first_diff16(const uint16_t *a, const uint16_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return n;
}

static void run_case(int w, int h, int D, int dmin, int block, int kind, int sms)
{
    char what[160];
    snprintf(what, sizeof what, "%dx%d D%d dmin%d block%d %s sms%d", w, h, D, dmin, block,
             kind_names[kind], sms);
    const size_t n = (size_t)w * h, vol = n * D;
    uint8_t *il = (uint8_t *)malloc(n), *ir = (uint8_t *)malloc(n);
    uint8_t *table = (uint8_t *)malloc(65536);
    uint64_t *cl = (uint64_t *)malloc(n * 8), *cr = (uint64_t *)malloc(n * 8);
    uint8_t *cost = (uint8_t *)malloc(vol);
    uint16_t *Vc = (uint16_t *)malloc(vol * 2), *Sc = (uint16_t *)malloc(vol * 2);
    uint16_t *Vg = (uint16_t *)malloc(vol * 2), *Sg = (uint16_t *)malloc(vol * 2);
    uint8_t *d_il = NULL, *d_ir = NULL, *d_table = NULL;
    uint64_t *d_cl = NULL, *d_cr = NULL;
    uint16_t *d_V = NULL, *d_S = NULL;
    int max_cost = 0, cost_kind = 0;

    /* the inputs: the right view a shifted, noisy copy of the left (some structure) */
    for (size_t i = 0; i < n; i++)
        il[i] = (uint8_t)rnd();
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int s = x + dmin + 3;
            ir[(size_t)y * w + x] =
                s < w ? (uint8_t)(il[(size_t)y * w + s] + rnd() % 5) : (uint8_t)rnd();
        }
    sgm_config c;
    memset(&c, 0, sizeof c);
    c.width = w, c.height = h, c.dmin = dmin, c.ndisp = D;
    switch (kind) {
    case KIND_RANK: /* rank values of a 9 x 9 window: 0..80, max cost 80 */
        max_cost = 80, cost_kind = 0;
        for (size_t i = 0; i < n; i++)
            il[i] = (uint8_t)(il[i] % 81), ir[i] = (uint8_t)(ir[i] % 81);
        c.max_cost = max_cost;
        sgm_cost_rank_rows(&c, il, ir, cost, 0, h);
        break;
    case KIND_CENSUS: /* 62-bit census words (9 x 7 less the centre), max cost 62 */
        max_cost = 62, cost_kind = 1;
        for (size_t i = 0; i < n; i++) {
            uint64_t a = ((uint64_t)rnd() << 32 | rnd()) & ((1ull << 62) - 1);
            cl[i] = a;
            /* the right view: the left word of the shifted pixel with a few bits flipped */
            cr[i] = a ^ (1ull << (rnd() % 62)) ^ (rnd() % 4 ? 0 : (uint64_t)rnd() << 20);
            cr[i] &= (1ull << 62) - 1;
        }
        c.max_cost = max_cost;
        sgm_cost_census_rows(&c, cl, cr, cost, 0, h);
        break;
    case KIND_AD: /* the stage's ad: a table of stereo_ad_cost; CPU: sgm_cost_ad_rows */
        max_cost = 63, cost_kind = 2;
        for (int i = 0; i < 65536; i++)
            table[i] = (uint8_t)stereo_ad_cost(i >> 8, i & 255, max_cost);
        c.max_cost = max_cost;
        sgm_cost_ad_rows(&c, il, ir, cost, 0, h);
        break;
    case KIND_MI: /* any table with entries <= max cost 63 */
        max_cost = 63, cost_kind = 2;
        for (int i = 0; i < 65536; i++)
            table[i] = (uint8_t)(rnd() % 64);
        c.max_cost = max_cost;
        sgm_cost_table_rows(&c, il, ir, table, 1, cost, 0, h);
        break;
    default: /* bt: words in the census rows; CPU: sgm_cost_bt_rows on the grey rows */
        max_cost = 63, cost_kind = 3;
        for (int y = 0; y < h; y++) {
            bt_words(il + (size_t)y * w, w, cl + (size_t)y * w);
            bt_words(ir + (size_t)y * w, w, cr + (size_t)y * w);
        }
        c.max_cost = max_cost;
        sgm_cost_bt_rows(&c, il, ir, cost, 0, h);
        break;
    }
    /* the CPU reference */
    block_config bc;
    bc.width = w, bc.height = h, bc.ndisp = D, bc.block = block;
    bc.shift = block_shift(max_cost, block);
    block_vertical_rows(&bc, cost, Vc, 0, h);
    block_horizontal_rows(&bc, Vc, Sc, 0, h);

    /* the GPU: rows without padding */
    {
        sgm_args a;
        memset(&a, 0, sizeof a);
        a.width = w, a.height = h, a.dmin = dmin, a.ndisp = D, a.max_cost = max_cost, a.sms = sms;
        if (cost_kind == 0 || cost_kind == 2) {
            TRY(cudaMalloc((void **)&d_il, n));
            TRY(cudaMalloc((void **)&d_ir, n));
            TRY(cudaMemcpy(d_il, il, n, cudaMemcpyHostToDevice));
            TRY(cudaMemcpy(d_ir, ir, n, cudaMemcpyHostToDevice));
            a.rank_l = d_il, a.rank_r = d_ir;
        } else {
            TRY(cudaMalloc((void **)&d_cl, n * 8));
            TRY(cudaMalloc((void **)&d_cr, n * 8));
            TRY(cudaMemcpy(d_cl, cl, n * 8, cudaMemcpyHostToDevice));
            TRY(cudaMemcpy(d_cr, cr, n * 8, cudaMemcpyHostToDevice));
            a.census_l = d_cl, a.census_r = d_cr;
        }
        if (cost_kind == 2) {
            TRY(cudaMalloc((void **)&d_table, 65536));
            TRY(cudaMemcpy(d_table, table, 65536, cudaMemcpyHostToDevice));
            a.cost_table = d_table;
        }
        TRY(cudaMalloc((void **)&d_V, vol * 2));
        TRY(cudaMalloc((void **)&d_S, vol * 2));
        /* garbage first: every element must be written */
        TRY(cudaMemset(d_V, 0xa5, vol * 2));
        TRY(cudaMemset(d_S, 0x5a, vol * 2));
        block_args b;
        b.block = block, b.shift = bc.shift, b.cost_kind = cost_kind;
        TRY(launch_block_sum(&a, &b, d_V, d_S, 0));
        TRY(cudaDeviceSynchronize());
        TRY(cudaMemcpy(Vg, d_V, vol * 2, cudaMemcpyDeviceToHost));
        TRY(cudaMemcpy(Sg, d_S, vol * 2, cudaMemcpyDeviceToHost));
    }
    {
        size_t d = first_diff16(Vc, Vg, vol);
        check(d == vol, "%s: vertical pass V differs at x %d y %d k %d: cpu %u cuda %u", what,
              (int)(d / D % w), (int)(d / D / w), (int)(d % D), d < vol ? Vc[d] : 0,
              d < vol ? Vg[d] : 0);
        d = first_diff16(Sc, Sg, vol);
        check(d == vol, "%s: box sum S differs at x %d y %d k %d: cpu %u cuda %u", what,
              (int)(d / D % w), (int)(d / D / w), (int)(d % D), d < vol ? Sc[d] : 0,
              d < vol ? Sg[d] : 0);
    }
done:
    cudaFree(d_il), cudaFree(d_ir), cudaFree(d_table), cudaFree(d_cl), cudaFree(d_cr);
    cudaFree(d_V), cudaFree(d_S);
    free(il), free(ir), free(table), free(cl), free(cr), free(cost);
    free(Vc), free(Sc), free(Vg), free(Sg);
}

/* The launcher's own refusals: even block, shift out of range, unknown cost kind. */
static void refusals(void)
{
    sgm_args a;
    memset(&a, 0, sizeof a);
    a.width = 8, a.height = 8, a.ndisp = 16, a.max_cost = 62;
    const block_args bad[] = {{4, 0, 1},  {9, -1, 1}, {9, 32, 1}, {9, 0, BLOCK_COST_VOLUME},
                              {9, 0, -1}, {9, 0, BLOCK_COST_VOLUME + 1}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        check(launch_block_sum(&a, &bad[i], NULL, NULL, 0) == cudaErrorInvalidValue,
              "block %d shift %d kind %d must be refused", bad[i].block, bad[i].shift,
              bad[i].cost_kind);
}

int main(void)
{
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices < 1) {
        printf("no CUDA device: %s\n0 passed, 1 failed\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 1;
    }
    cudaDeviceProp prop;
    const int sms_device =
        cudaGetDeviceProperties(&prop, 0) == cudaSuccess ? prop.multiProcessorCount : 0;
    static const struct { int w, h; } sizes[] = {
        {333, 217}, {64, 48}, {97, 301}, {31, 7}, {640, 1}, {1, 40}, {129, 65},
    };
    static const int blocks[] = {3, 9, 31}, Ds[] = {16, 64, 128}, dmins[] = {0, 13};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int kind = KIND_RANK; kind <= KIND_BT; kind++)
            for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++)
                for (size_t di = 0; di < sizeof Ds / sizeof *Ds; di++)
                    for (size_t mi = 0; mi < sizeof dmins / sizeof *dmins; mi++) {
                        /* the SM count steers the chunking: the Orin's 16, this device's,
                         * and a big one that gives every chunk the minimum length */
                        int sms = (int)((si + kind + bi + di + mi) % 3);
                        sms = sms == 0 ? 0 : sms == 1 ? sms_device : 1000;
                        run_case(sizes[si].w, sizes[si].h, Ds[di], dmins[mi], blocks[bi], kind,
                                 sms);
                    }
    refusals();
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
