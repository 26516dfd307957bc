/* SPDX-License-Identifier: Apache-2.0 */
/* test_postfilter_cuda.cu — the post-filter kernels (gpu/postfilter.cu, launch_postfilter)
 * against the CPU reference (gpu/postfilter.c, postfilter_apply), bit for bit, on hand-made
 * maps the stage rarely makes (runs on a GPU machine):
 *
 *   build/gpu/test-postfilter-cuda
 *
 * Speckle: a one-pixel-wide square spiral (one region threading the whole image: the worst case
 * of label propagation; the union-find must end and find one region), a checkerboard (every
 * pixel a region of one), a map with every pixel valid and equal (one region of w * h),
 * random maps of few levels and many holes with speckle sizes around the regions' sizes and
 * every diff 0..3 steps; confidence zeroed where pixels go. Fill: widths 1, 255, 256, 257, 1000
 * and 8192 (the largest side: a thread's chunk of 32 pixels), rows without a valid pixel, runs
 * at both borders. Temporal: a sequence of random frames with drifting values, holes and a
 * scene change, every frame compared and the state carried on both sides; settings changed
 * mid-sequence (postfilter_cuda_set with clear). Region voting: piecewise-flat grey images
 * (blocks of a few levels with noise: arms of every length up to L1) under maps of a level per
 * block with 30-85 % holes, ranges from negative minima, D 16..512, sizes from 1 x 1 up (each
 * of the five rounds compared through the result; the warp's histogram at every D), a flat
 * image (every arm L1) and a random one (arms of 0 or 1). Interpolation: random maps with 10-90 %
 * holes under random right maps (every class of hole) or none, widths 1 to 8192, alone and after
 * the vote, before the fill. Every combination of the filters on.
 *
 * Needs only libc and CUDA: one line per failure and a closing "N passed, N failed" line;
 * exits non-zero on any failure.
 */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "postfilter.h"

#include "check.h"

typedef struct {
    int w, h;
    postfilter_cpu cpu;
    postfilter_cuda gpu;
    int16_t *d_disp;
    uint8_t *d_conf;
    uint8_t *grey, *d_grey; /* 9b's image (host and device); zeros unless a case sets it */
    int dmin, ndisp;        /* 9b's range */
    int16_t *right, *d_right; /* 9c's right map (host and device) */
    int use_right;          /* 9c: pass the right map (else NULL: every hole a mismatch) */
    cudaStream_t st;
} bench;

static int bench_init(bench *b, int w, int h)
{
    const char *what = "init";
    size_t n = (size_t)w * h;
    memset(b, 0, sizeof *b);
    b->w = w, b->h = h;
    if (postfilter_cpu_init(&b->cpu, w, h) != 0) {
        check(0, "postfilter_cpu_init %dx%d", w, h);
        return -1;
    }
    TRY(cudaStreamCreate(&b->st));
    TRY(cudaMalloc(&b->gpu.dev, sizeof(postfilter_dev)));
    TRY(cudaMalloc(&b->gpu.parent, n * 4));
    TRY(cudaMalloc(&b->gpu.count, n * 4));
    TRY(cudaMalloc(&b->gpu.prev, n * 2));
    TRY(cudaMalloc(&b->gpu.age, n));
    TRY(cudaMalloc(&b->gpu.arms, n * 4));
    TRY(cudaMalloc(&b->gpu.vote_a, n * 2));
    TRY(cudaMalloc(&b->gpu.vote_b, n * 2));
    TRY(cudaMalloc(&b->d_disp, n * 2));
    TRY(cudaMalloc(&b->d_conf, n));
    TRY(cudaMalloc(&b->d_grey, n));
    TRY(cudaMalloc(&b->d_right, n * 2));
    b->grey = (uint8_t *)calloc(n, 1);
    b->right = (int16_t *)malloc(n * 2);
    if (!b->grey || !b->right) {
        check(0, "out of memory");
        return -1;
    }
    b->dmin = 0, b->ndisp = 64;
    return 0;
done:
    return -1;
}

static void bench_free(bench *b)
{
    postfilter_cpu_free(&b->cpu);
    cudaFree(b->gpu.dev);
    cudaFree(b->gpu.parent);
    cudaFree(b->gpu.count);
    cudaFree(b->gpu.prev);
    cudaFree(b->gpu.age);
    cudaFree(b->gpu.arms);
    cudaFree(b->gpu.vote_a);
    cudaFree(b->gpu.vote_b);
    cudaFree(b->d_disp);
    cudaFree(b->d_conf);
    cudaFree(b->d_grey);
    cudaFree(b->d_right);
    free(b->grey);
    free(b->right);
    if (b->st)
        cudaStreamDestroy(b->st);
}

/* New settings on both sides (clear: the temporal state emptied on both). */
static int bench_set(bench *b, const stereo_postfilter *f, int clear, const char *what)
{
    if (clear)
        postfilter_temporal_clear(b->cpu.prev, b->cpu.age, (size_t)b->w * b->h);
    TRY(postfilter_cuda_set(&b->gpu, f, clear, b->w, b->h, b->st));
    return 0;
done:
    return -1;
}

/* One frame: map (and a confidence of all 200) through both; every output and the state
 * compared. */
static void bench_frame(bench *b, const stereo_postfilter *f, const int16_t *map,
                        const char *what)
{
    size_t n = (size_t)b->w * b->h;
    int16_t *want = (int16_t *)malloc(n * 2), *got = (int16_t *)malloc(n * 2);
    uint8_t *wconf = (uint8_t *)malloc(n), *gconf = (uint8_t *)malloc(n);
    int16_t *gprev = (int16_t *)malloc(n * 2);
    uint8_t *gage = (uint8_t *)malloc(n);
    memcpy(want, map, n * 2);
    memset(wconf, 200, n);
    postfilter_apply(f, &b->cpu, want, wconf, b->use_right ? b->right : NULL, b->grey, b->dmin,
                     b->ndisp, NULL);
    TRY(cudaMemcpyAsync(b->d_disp, map, n * 2, cudaMemcpyHostToDevice, b->st));
    TRY(cudaMemcpyAsync(b->d_grey, b->grey, n, cudaMemcpyHostToDevice, b->st));
    TRY(cudaMemcpyAsync(b->d_right, b->right, n * 2, cudaMemcpyHostToDevice, b->st));
    TRY(cudaMemsetAsync(b->d_conf, 200, n, b->st));
    TRY(launch_postfilter(&b->gpu, b->d_disp, b->d_conf, b->use_right ? b->d_right : NULL,
                          b->d_grey, b->dmin, b->ndisp, f, b->w, b->h, b->st));
    TRY(cudaMemcpyAsync(got, b->d_disp, n * 2, cudaMemcpyDeviceToHost, b->st));
    TRY(cudaMemcpyAsync(gconf, b->d_conf, n, cudaMemcpyDeviceToHost, b->st));
    TRY(cudaMemcpyAsync(gprev, b->gpu.prev, n * 2, cudaMemcpyDeviceToHost, b->st));
    TRY(cudaMemcpyAsync(gage, b->gpu.age, n, cudaMemcpyDeviceToHost, b->st));
    TRY(cudaStreamSynchronize(b->st));
    {
        size_t i = 0;
        while (i < n && want[i] == got[i])
            i++;
        check(i == n, "%s %dx%d: disparity differs at pixel %zu: cpu %d cuda %d", what, b->w,
              b->h, i, i < n ? want[i] : 0, i < n ? got[i] : 0);
        check(!memcmp(wconf, gconf, n), "%s %dx%d: confidence differs", what, b->w, b->h);
        if (f->temporal)
            check(!memcmp(b->cpu.prev, gprev, n * 2) && !memcmp(b->cpu.age, gage, n),
                  "%s %dx%d: temporal state differs", what, b->w, b->h);
    }
done:
    free(want);
    free(got);
    free(wconf);
    free(gconf);
    free(gprev);
    free(gage);
}

static stereo_postfilter settings(int size, int diff, int fill, int temporal)
{
    stereo_postfilter f;
    postfilter_default(&f);
    f.speckle_size = size, f.speckle_diff = diff, f.fill = fill, f.temporal = temporal;
    return f;
}

static void spiral(int16_t *m, int w, int h)
{
    for (int i = 0; i < w * h; i++)
        m[i] = STEREO_INVALID;
    int x0 = 0, y0 = 0, x1 = w - 1, y1 = h - 1;
    while (x0 <= x1 && y0 <= y1) {
        for (int x = x0; x <= x1; x++)
            m[y0 * w + x] = 80;
        for (int y = y0 + 1; y <= y1; y++)
            m[y * w + x1] = 80;
        for (int x = x1 - 1; x >= x0 && y1 > y0; x--)
            m[y1 * w + x] = 80;
        for (int y = y1 - 1; y >= y0 + 2 && x1 > x0; y--)
            m[y * w + x0] = 80;
        if (y0 + 2 <= y1 && x0 + 1 <= x1)
            m[(y0 + 2) * w + x0 + 1] = 80;
        x0 += 2, y0 += 2, x1 -= 2, y1 -= 2;
    }
}

static void speckle_cases(void)
{
    static const int sizes[][2] = {{1, 1}, {7, 5}, {333, 217}, {640, 480}, {1001, 3}, {2, 900}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int w = sizes[s][0], h = sizes[s][1], n = w * h;
        bench b;
        if (bench_init(&b, w, h) != 0)
            continue;
        int16_t *m = (int16_t *)malloc((size_t)n * 2);
        int valid = 0;
        spiral(m, w, h);
        for (int i = 0; i < n; i++)
            valid += stereo_disparity_valid(m[i]);
        stereo_postfilter f = settings(valid, 0, 0, 0); /* kept: one region of `valid` */
        bench_set(&b, &f, 1, "spiral");
        bench_frame(&b, &f, m, "spiral kept");
        f.speckle_size = valid + 1;
        bench_set(&b, &f, 0, "spiral");
        bench_frame(&b, &f, m, "spiral removed");
        for (int i = 0; i < n; i++) /* checkerboard: every pixel alone */
            m[i] = (i % w + i / w) % 2 ? STEREO_INVALID : 16 * (i % 7);
        f.speckle_size = 2;
        bench_set(&b, &f, 0, "checkerboard");
        bench_frame(&b, &f, m, "checkerboard");
        for (int i = 0; i < n; i++)
            m[i] = 123;
        f.speckle_size = n;
        bench_set(&b, &f, 0, "all valid");
        bench_frame(&b, &f, m, "all valid, kept");
        f.speckle_size = n + 1;
        bench_set(&b, &f, 0, "all valid");
        bench_frame(&b, &f, m, "all valid, removed");
        for (int it = 0; it < 12; it++) {
            int levels = 1 + (int)(rnd() % 8), holes = (int)(rnd() % 70);
            for (int i = 0; i < n; i++)
                m[i] = (int)(rnd() % 100) < holes ? STEREO_INVALID
                                                  : (int16_t)(5 * (rnd() % (unsigned)(levels + 1)));
            f = settings(1 + (int)(rnd() % 60), 5 * (int)(rnd() % 4) + (int)(rnd() % 2),
                         (int)(rnd() % 2), 0);
            bench_set(&b, &f, 0, "random");
            bench_frame(&b, &f, m, "random speckle");
        }
        free(m);
        bench_free(&b);
    }
}

static void fill_cases(void)
{
    static const int widths[] = {1, 2, 255, 256, 257, 1000, 8192};
    for (size_t s = 0; s < sizeof widths / sizeof *widths; s++) {
        int w = widths[s], h = 9, n = w * h;
        bench b;
        if (bench_init(&b, w, h) != 0)
            continue;
        int16_t *m = (int16_t *)malloc((size_t)n * 2);
        stereo_postfilter f = settings(0, 16, 1, 0);
        bench_set(&b, &f, 1, "fill");
        for (int it = 0; it < 6; it++) {
            for (int y = 0; y < h; y++) {
                /* row 0: no valid pixel; row 1: one at each end; others sparse or dense */
                int density = y == 0 ? 0 : y == 1 ? -1 : (int)(rnd() % 100);
                for (int x = 0; x < w; x++) {
                    int valid = density < 0 ? x == 0 || x == w - 1 : (int)(rnd() % 100) < density;
                    m[y * w + x] = valid ? (int16_t)(rnd() % 1024) : STEREO_INVALID;
                }
            }
            bench_frame(&b, &f, m, "fill");
        }
        free(m);
        bench_free(&b);
    }
}

static void temporal_cases(void)
{
    const int w = 211, h = 97, n = w * h;
    bench b;
    if (bench_init(&b, w, h) != 0)
        return;
    int16_t *base = (int16_t *)malloc((size_t)n * 2), *m = (int16_t *)malloc((size_t)n * 2);
    for (int i = 0; i < n; i++)
        base[i] = (int16_t)(16 * (i % w) / 8 + 100);
    for (int combo = 0; combo < 8; combo++) {
        stereo_postfilter f = settings(combo & 1 ? 30 : 0, 16, combo & 2 ? 1 : 0, 1);
        f.temporal_alpha = 1 + (int)(rnd() % 16);
        f.temporal_delta = (int)(rnd() % 40);
        f.temporal_persist = combo & 4 ? (int)(rnd() % 5) : 0;
        bench_set(&b, &f, 1, "temporal");
        for (int frame = 0; frame < 12; frame++) {
            int jump = frame == 7 ? 400 : 0; /* a scene change */
            for (int i = 0; i < n; i++) {
                int hole = (int)(rnd() % 100) < (frame == 9 ? 70 : 15);
                m[i] = hole ? STEREO_INVALID
                            : (int16_t)(base[i] + jump + (int)(rnd() % 23) - 11 + frame);
            }
            char what[64];
            snprintf(what, sizeof what, "temporal combo %d frame %d", combo, frame);
            if (frame == 5) { /* new settings mid-sequence: the state starts afresh */
                f.temporal_alpha = 1 + (int)(rnd() % 16);
                bench_set(&b, &f, 1, what);
            }
            bench_frame(&b, &f, m, what);
        }
    }
    free(base);
    free(m);
    bench_free(&b);
}

/* 9b on piecewise-flat images: blocks of bs px, each a grey level (+-2 noise) and a disparity
 * level (+-10 16ths), holes hole_pct % (85 % in every seventh block) */
static void vote_scene(bench *b, int16_t *m, int bs, int hole_pct, int salt)
{
    const int w = b->w, h = b->h;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned blk = (unsigned)((x / bs) * 7919 + (y / bs) * 104729 + salt * 31);
            b->grey[y * w + x] = (uint8_t)(40 + (int)(blk % 5) * 30 + (int)(rnd() % 5) - 2);
            int hole = (int)(rnd() % 100) < (blk % 7 == 0 ? 85 : hole_pct);
            int lvl = b->dmin + (int)(blk % (unsigned)b->ndisp);
            m[y * w + x] = hole ? STEREO_INVALID
                                : (int16_t)(16 * lvl + (int)(rnd() % 21) - 10);
        }
}

static void vote_cases(void)
{
    static const int sizes[][2] = {{1, 1}, {5, 3}, {97, 61}, {333, 217}, {640, 480}, {1001, 9}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const int w = sizes[s][0], h = sizes[s][1], n = w * h;
        bench b;
        if (bench_init(&b, w, h) != 0)
            continue;
        int16_t *m = (int16_t *)malloc((size_t)n * 2);
        for (int it = 0; it < 6; it++) {
            static const int nd[] = {16, 32, 64, 128, 256, 512};
            b.ndisp = nd[it];
            b.dmin = it % 2 ? -(int)(rnd() % 40) : (int)(rnd() % 20);
            vote_scene(&b, m, 3 + (int)(rnd() % 30), 30 + 10 * it, it);
            stereo_postfilter f = settings(it == 4 ? 20 : 0, 16, it == 5, it == 3);
            f.vote = 1;
            char what[80];
            snprintf(what, sizeof what, "vote D%d dmin %d", b.ndisp, b.dmin);
            bench_set(&b, &f, 1, what);
            bench_frame(&b, &f, m, what);
        }
        /* a flat image (every arm as long as it may be) and a noisy one (arms of 0 or 1) */
        b.ndisp = 64, b.dmin = 0;
        stereo_postfilter f = settings(0, 16, 0, 0);
        f.vote = 1;
        bench_set(&b, &f, 1, "vote flat");
        vote_scene(&b, m, 1 << 20, 60, 9);
        memset(b.grey, 77, (size_t)n);
        bench_frame(&b, &f, m, "vote flat");
        for (int i = 0; i < n; i++)
            b.grey[i] = (uint8_t)(rnd() % 256);
        bench_frame(&b, &f, m, "vote noise");
        free(m);
        bench_free(&b);
    }
}

/* 9c: random maps with 10-90 % holes (values from negative to large), right maps whose values
 * name pixels left, right and outside the row (30 % invalid), or none; alone and with the
 * other filters (vote before it, fill after it). */
static void interp_cases(void)
{
    static const int sizes[][2] = {{1, 1}, {5, 3}, {97, 61}, {333, 217}, {640, 480},
                                   {1001, 9}, {2, 900}, {8192, 3}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const int w = sizes[s][0], h = sizes[s][1], n = w * h;
        bench b;
        if (bench_init(&b, w, h) != 0)
            continue;
        int16_t *m = (int16_t *)malloc((size_t)n * 2);
        for (int it = 0; it < 8; it++) {
            const int holes = 10 + 10 * it, spread = it % 2 ? 40 : 400;
            b.dmin = it % 3 ? 0 : -(int)(rnd() % 30), b.ndisp = 64;
            for (int i = 0; i < n; i++) {
                m[i] = (int)(rnd() % 100) < holes
                           ? STEREO_INVALID
                           : (int16_t)(16 * b.dmin + (int)(rnd() % (unsigned)(16 * spread)));
                b.right[i] = (int)(rnd() % 100) < 30
                                 ? STEREO_INVALID
                                 : (int16_t)(16 * b.dmin + (int)(rnd() % 1200) - 100);
                b.grey[i] = (uint8_t)(rnd() % 256);
            }
            b.use_right = it != 5;
            stereo_postfilter f = settings(it == 6 ? 8 : 0, 16, it >= 6, 0);
            f.interp = 1;
            f.vote = it == 7;
            char what[80];
            snprintf(what, sizeof what, "interp %d%% holes%s%s%s", holes,
                     b.use_right ? "" : ", no right map", f.vote ? ", vote" : "",
                     f.fill ? ", fill" : "");
            bench_set(&b, &f, 1, what);
            bench_frame(&b, &f, m, what);
        }
        free(m);
        bench_free(&b);
    }
}

int main(void)
{
    speckle_cases();
    fill_cases();
    temporal_cases();
    vote_cases();
    interp_cases();
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
