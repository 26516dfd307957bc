/* SPDX-License-Identifier: Apache-2.0 */
/* test_cuda.c — the CUDA backend against the CPU reference, bit for bit (runs on a GPU machine).
 *
 *   build/gpu/test-cuda [--quick | --d512 | --band | --adcensus] [DATA_DIR]
 *
 * --quick: a few small cases only (for compute-sanitizer, which runs kernels far slower).
 * --d512: 1920x1080 with 512 disparities on 16 SMs (the sweep design at full size; a minute of
 * the CPU reference).
 *
 * Every case runs the same input through a CPU stage and a CUDA stage with the same parameters
 * and compares every output byte: left and right disparity, confidence, both rectified images,
 * and the RGBA colour image of each colour map. Cases: a grid of options (paths, cost, D, dmin,
 * adaptive P2, uniqueness, subpixel, LR, median, confidence), block matching (method bm: blocks
 * 3, 9 and 31, every CUDA cost, odd sizes, D 64 and 128, dmin 0 and > 0; its box sum alone:
 * build/gpu/test-block-cuda), awkward sizes (333x217, 640x1,
 * 17x640, 631x479, widths that are no multiple of 32), 512 disparities (the sweep design) and
 * the D the CUDA stage refuses, grey / RGB / YUYV inputs with padded
 * pitches, rectification maps with pixels mapped from outside, the stage on 16 SMs (a green
 * context, driven from a second thread as the live app does), the coarse-to-fine mode (bands of
 * 32 and 64 over random options; --band: that set alone), the post-filters (speckle, fill,
 * temporal: single frames over option grids and sequences with toggles, post_filters), a
 * negative minimum disparity (negative_min, also in --quick), cross-based aggregation and the
 * discontinuity adjustment (mei_refinements, also in --quick), and every scene in DATA_DIR (the
 * shared Middlebury scenes converted to PGM/PPM by tools/gpu-check.sh).
 *
 * Needs only libc and CUDA (no cmocka on the GPU machine): prints one line per failure and a
 * closing "N passed, N failed" line; exits non-zero on any failure.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "mapgen.h"
#include "pnm.h"
#include "stereo.h"
#include "synth.h"

#define TEST_RNG_SEED 0x2545f4914f6cdd1dull /* this program's sequence since session 1 */
#include "check.h"

/* A pair with structure (a shifted, noisy copy) in the given pixel format and pitch. */
typedef struct {
    uint8_t *data[STEREO_MAX_VIEWS];
    stereo_image im[STEREO_MAX_VIEWS];
    int n;                  /* views: 2 for a pair (0 counts as 2) */
} pair;


static void pair_random(pair *p, int w, int h, stereo_pixfmt fmt, int pad, int shift)
{
    p->n = 2;
    size_t pitch = (size_t)w * stereo_pixfmt_bytes(fmt) + pad;
    for (int i = 0; i < 2; i++) {
        p->data[i] = malloc(pitch * h);
        p->im[i] = (stereo_image){p->data[i], w, h, pitch, fmt};
    }
    for (size_t i = 0; i < pitch * h; i++)
        p->data[0][i] = (uint8_t)rnd();
    for (int y = 0; y < h; y++)
        for (size_t b = 0; b < pitch; b++) {
            size_t src = b + (size_t)shift * stereo_pixfmt_bytes(fmt);
            p->data[1][y * pitch + b] =
                src < pitch ? (uint8_t)(p->data[0][y * pitch + src] + rnd() % 5) : (uint8_t)rnd();
        }
}

/* n views of the generated scene at the baseline ratios b[0..n) (16ths; b[0] = 0, b[1] = 16),
 * channels 1 (grey) or 3 (RGB). */
static int views_synth(pair *p, int w, int h, int channels, double t, int n, const int *b)
{
    synth_params sp = {.width = w, .height = h, .t = t, .seed = 7};
    synth *s;
    char err[256];
    if (synth_create(&sp, &s, err, sizeof err)) {
        printf("synth: %s\n", err);
        return -1;
    }
    int rc = 0;
    p->n = n;
    for (int i = 0; i < n; i++) {
        p->data[i] = malloc((size_t)w * h * channels);
        p->im[i] = (stereo_image){p->data[i], w, h, (size_t)w * channels,
                                  channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8};
        rc |= synth_render_view(s, t, b[i] / 16.0, p->data[i], channels, (size_t)w * channels,
                                err, sizeof err);
    }
    synth_destroy(s);
    if (rc)
        printf("synth: %s\n", err);
    return rc;
}

/* the left and right views of the generated scene (views_synth at ratios 0 and 1: bit for bit
 * synth_render_views, hal/synth.h) */
static int pair_synth(pair *p, int w, int h, int channels, double t)
{
    static const int b[2] = {0, 16};
    return views_synth(p, w, h, channels, t, 2, b);
}

static void pair_free(pair *p)
{
    for (int i = 0; i < (p->n > 2 ? p->n : 2); i++)
        free(p->data[i]);
}

/* n views of random texture in the given format and pitch: view i is the reference shifted by
 * about b_i * shift pixels (rounded down), with noise. */
static void views_random(pair *p, int w, int h, stereo_pixfmt fmt, int pad, int shift, int n,
                         const int *b)
{
    pair two;
    pair_random(&two, w, h, fmt, pad, 0);
    size_t pitch = two.im[0].pitch, bpp = (size_t)stereo_pixfmt_bytes(fmt);
    p->n = n;
    p->data[0] = two.data[0], p->im[0] = two.im[0];
    free(two.data[1]);
    for (int i = 1; i < n; i++) {
        p->data[i] = malloc(pitch * h);
        p->im[i] = (stereo_image){p->data[i], w, h, pitch, fmt};
        long off = (long)(b[i] * shift) >> 4;
        for (int y = 0; y < h; y++)
            for (size_t x = 0; x < pitch; x++) {
                long src = (long)x + off * (long)bpp; /* view i at x - b_i d sees ref x */
                p->data[i][y * pitch + x] = src >= 0 && src < (long)pitch
                                                ? (uint8_t)(p->data[0][y * pitch + src] + rnd() % 5)
                                                : (uint8_t)rnd();
            }
    }
}

/* Random map pair: a small rotation / scale / shift of a src_w x src_h camera onto w x h. */
static void random_maps_n(stereo_map *m, int n, int w, int h, int src_w, int src_h)
{
    for (int i = 0; i < n; i++) {
        double angle = ((int)(rnd() % 200) - 100) * 1e-4, scale = 1.0 + ((int)(rnd() % 100) - 50) * 1e-3;
        double dx = (int)(rnd() % 9) - 4 + (rnd() % 32) / 32.0, dy = (int)(rnd() % 5) - 2;
        mapgen_similarity(&m[i], w, h, src_w, src_h, angle, scale, dx, dy);
    }
}

static void random_maps(stereo_map m[2], int w, int h, int src_w, int src_h)
{
    random_maps_n(m, 2, w, h, src_w, src_h);
}

static void free_maps_n(stereo_map *m, int n)
{
    for (int i = 0; i < n; i++)
        mapgen_free(&m[i]);
}

static void free_maps(stereo_map m[2]) { free_maps_n(m, 2); }

static const char *describe(const stereo_params *p)
{
    static char buf[256];
    int n = snprintf(buf, sizeof buf,
             "%dx%d D%d dmin%d %s paths%d p1=%d p2=%d adapt%d uniq%d sub%d lr%d tol%d med%d conf%d",
             p->width, p->height, p->num_disparities, p->min_disparity,
             stereo_cost_to_str(p->cost), p->paths, p->p1, p->p2, p->p2_adapt, p->uniqueness,
             p->subpixel, p->lr_check, p->lr_tolerance, p->median, p->confidence);
    const stereo_postfilter *f = &p->post;
    if ((f->speckle_size || f->fill || f->temporal || f->vote || f->interp) && n > 0 &&
        (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - n,
                      " speckle%d/%d vote%d interp%d fill%d temporal%d/%d/%d/%d",
                      f->speckle_size, f->speckle_diff, f->vote, f->interp, f->fill, f->temporal,
                      f->temporal_alpha, f->temporal_delta, f->temporal_persist);
    if (p->band && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - n, " band%d", p->band);
    if ((p->cross || p->discontinuity) && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - n, " cross%d discontinuity%d", p->cross,
                      p->discontinuity);
    if (p->method == STEREO_METHOD_BM && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - n, " bm block%d", p->block);
    if (p->views > 2 && n > 0 && (size_t)n < sizeof buf) {
        n += snprintf(buf + n, sizeof buf - n, " views%d %s b", p->views,
                      stereo_combine_to_str(p->combine));
        for (int i = 1; i < p->views && n > 0 && (size_t)n < sizeof buf; i++)
            n += snprintf(buf + n, sizeof buf - n, "%s%d/16", i > 1 ? "," : "", p->baseline[i]);
    }
    return buf;
}

static size_t first_diff(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return i;
    return n;
}

/* Runs both backends on the pair and compares everything; one check per output. */
static void compare(const stereo_params *base, const stereo_map *maps, const pair *pr,
                    const char *what)
{
    stereo_params pc = *base, pg = *base;
    pc.backend = STEREO_BACKEND_CPU;
    pg.backend = STEREO_BACKEND_CUDA;
    stereo_stage *c = NULL, *g = NULL;
    char err[512];
    stereo_status sc = stereo_create(&pc, maps, &c, err, sizeof err);
    check(sc == STEREO_OK, "%s [%s]: CPU create: %s", what, describe(base), err);
    stereo_status sg = stereo_create(&pg, maps, &g, err, sizeof err);
    check(sg == STEREO_OK, "%s [%s]: CUDA create: %s", what, describe(base), err);
    if (sc != STEREO_OK || sg != STEREO_OK)
        goto done;
    sc = stereo_process_views(c, pr->im, pr->n > 2 ? pr->n : 2);
    sg = stereo_process_views(g, pr->im, pr->n > 2 ? pr->n : 2);
    check(sc == STEREO_OK && sg == STEREO_OK, "%s [%s]: process: cpu '%s' cuda '%s'", what,
          describe(base), sc ? stereo_error(c) : "", sg ? stereo_error(g) : "");
    if (sc || sg)
        goto done;
    size_t n = (size_t)base->width * base->height, d;
    d = first_diff(stereo_disparity(c), stereo_disparity(g), 2 * n);
    check(d == 2 * n, "%s [%s]: left disparity differs at pixel %zu: cpu %d cuda %d", what,
          describe(base), d / 2, d < 2 * n ? stereo_disparity(c)[d / 2] : 0,
          d < 2 * n ? stereo_disparity(g)[d / 2] : 0);
    if (base->lr_check) {
        d = first_diff(stereo_disparity_right(c), stereo_disparity_right(g), 2 * n);
        check(d == 2 * n, "%s [%s]: right disparity differs at pixel %zu", what, describe(base),
              d / 2);
    }
    if (base->confidence) {
        d = first_diff(stereo_confidence(c), stereo_confidence(g), n);
        check(d == n, "%s [%s]: confidence differs at pixel %zu", what, describe(base), d);
    }
    for (int i = 0; i < 2; i++) {
        d = first_diff(stereo_rectified(c, i), stereo_rectified(g, i), n);
        check(d == n, "%s [%s]: %s rectified image differs at pixel %zu", what, describe(base),
              i ? "right" : "left", d);
    }
    size_t pitch = (size_t)base->width * 4 + 8;
    uint8_t *rc = malloc(pitch * base->height), *rg = malloc(pitch * base->height);
    /* every map over the fixed range, then over the frame's automatic range (both stages get
     * the range computed from the CPU disparity: the kernels must follow it bit for bit) */
    colormap_range ar;
    colormap_auto_range(stereo_disparity(c), n, base->min_disparity, base->num_disparities, &ar);
    for (int k = 0; k < 2 * COLORMAP_COUNT; k++) {
        int cm = k % COLORMAP_COUNT;
        if (k == COLORMAP_COUNT)
            check(stereo_set_color_range(c, ar.lo, ar.hi) == STEREO_OK &&
                      stereo_set_color_range(g, ar.lo, ar.hi) == STEREO_OK,
                  "%s: colour range %d..%d refused", what, ar.lo, ar.hi);
        memset(rc, 0, pitch * base->height);
        memset(rg, 0, pitch * base->height);
        int ok = stereo_colorize(c, cm, rc, pitch) == STEREO_OK &&
                 stereo_colorize(g, cm, rg, pitch) == STEREO_OK;
        int same = 1;
        for (int y = 0; y < base->height && ok; y++)
            same &= !memcmp(rc + y * pitch, rg + y * pitch, (size_t)base->width * 4);
        check(ok && same, "%s [%s]: colour map %s (%s range) differs", what, describe(base),
              colormap_to_str((colormap_id)cm), k < COLORMAP_COUNT ? "fixed" : "auto");
    }
    free(rc);
    free(rg);
done:
    stereo_destroy(c);
    stereo_destroy(g);
}

/* The asynchronous path: managed frames from stereo_frame_alloc read in place, results written
 * into double-buffered managed slots; every output equal to the CPU reference, the previous
 * result intact while the next frame is computed, and misuse refused. */
static void check_result(const stereo_result *r, stereo_stage *ref, int colormap, const char *what)
{
    const stereo_params *p = stereo_get_params(ref);
    size_t n = (size_t)p->width * p->height;
    check(!memcmp(r->disparity, stereo_disparity(ref), 2 * n), "%s: async disparity differs", what);
    check(r->disparity_right && !memcmp(r->disparity_right, stereo_disparity_right(ref), 2 * n),
          "%s: async right disparity differs", what);
    check(r->confidence && !memcmp(r->confidence, stereo_confidence(ref), n),
          "%s: async confidence differs", what);
    for (int i = 0; i < 2; i++)
        check(r->rectified[i] && !memcmp(r->rectified[i], stereo_rectified(ref, i), n),
              "%s: async rectified image %d differs", what, i);
    uint8_t *rgba = malloc(4 * n);
    check(stereo_colorize(ref, colormap, rgba, (size_t)p->width * 4) == STEREO_OK &&
              r->rgba_pitch == (size_t)p->width * 4 && !memcmp(r->rgba, rgba, 4 * n),
          "%s: async colour image differs", what);
    free(rgba);
}

static void async_path(int w, int h, int D)
{
    stereo_params p;
    stereo_params_default(&p, w, h);
    p.num_disparities = D, p.confidence = 1;
    stereo_params pc = p, pg = p;
    pc.backend = STEREO_BACKEND_CPU, pg.backend = STEREO_BACKEND_CUDA;
    stereo_stage *c[2] = {NULL, NULL}, *g = NULL;
    char err[256];
    if (stereo_create(&pc, NULL, &c[0], err, sizeof err) || stereo_create(&pc, NULL, &c[1], err, sizeof err) ||
        stereo_create(&pg, NULL, &g, err, sizeof err)) {
        check(0, "async: create: %s", err);
        goto done;
    }
    pair src[2];
    pair_synth(&src[0], w, h, 3, 0.2);
    pair_synth(&src[1], w, h, 3, 0.9);
    /* the CUDA stage's managed frames, filled by the CPU while not submitted */
    void *frames[2][2];
    stereo_image im[2][2];
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 2; v++) {
            check(stereo_frame_alloc(g, (size_t)w * h * 3, &frames[f][v]) == STEREO_OK,
                  "async: frame_alloc: %s", stereo_error(g));
            memcpy(frames[f][v], src[f].data[v], (size_t)w * h * 3);
            im[f][v] = (stereo_image){frames[f][v], w, h, (size_t)w * 3, STEREO_PIX_RGB24};
        }
    for (int f = 0; f < 2; f++)
        check(stereo_process(c[f], &src[f].im[0], &src[f].im[1]) == STEREO_OK, "async: cpu");
    stereo_result ra, rb;
    check(stereo_submit(g, &im[0][0], &im[0][1], COLORMAP_TURBO) == STEREO_OK, "async: submit A: %s",
          stereo_error(g));
    check(stereo_submit(g, &im[1][0], &im[1][1], COLORMAP_JET) == STEREO_ERR_PARAM,
          "async: a second submit in flight must be refused");
    check(stereo_process(g, &src[1].im[0], &src[1].im[1]) == STEREO_ERR_PARAM,
          "async: process while in flight must be refused");
    check(stereo_wait(g, &ra) == STEREO_OK, "async: wait A: %s", stereo_error(g));
    check_result(&ra, c[0], COLORMAP_TURBO, "frame A");
    /* frame B over a colour range of its own (the graph reads it from the frame descriptor) */
    check(stereo_set_color_range(g, 8 * D / 4, 8 * D) == STEREO_OK &&
              stereo_set_color_range(c[1], 8 * D / 4, 8 * D) == STEREO_OK,
          "async: colour range refused");
    check(stereo_submit(g, &im[1][0], &im[1][1], COLORMAP_JET) == STEREO_OK, "async: submit B");
    check(stereo_set_color_range(g, 0, 0) == STEREO_OK, "async: fixed range refused");
    check(stereo_wait(g, &rb) == STEREO_OK, "async: wait B");
    check_result(&rb, c[1], COLORMAP_JET, "frame B");
    check_result(&ra, c[0], COLORMAP_TURBO, "frame A after B (double buffer)");
    check(stereo_wait(g, &rb) == STEREO_ERR_PARAM, "async: wait with nothing in flight must fail");
    /* ordinary host memory is copied in, with the same results */
    check(stereo_submit(g, &src[0].im[0], &src[0].im[1], COLORMAP_TURBO) == STEREO_OK &&
              stereo_wait(g, &ra) == STEREO_OK,
          "async: host-memory frames");
    check_result(&ra, c[0], COLORMAP_TURBO, "host-memory frame A");
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 2; v++)
            stereo_frame_free(g, frames[f][v]);
    pair_free(&src[0]);
    pair_free(&src[1]);
done:
    stereo_destroy(c[0]);
    stereo_destroy(c[1]);
    stereo_destroy(g);
}

/* One frame through the asynchronous API, on whichever thread runs it. */
typedef struct {
    stereo_stage *g;
    const pair *pr;
    stereo_result r;
    stereo_status st;
} frame_job;

static void *submit_and_wait(void *arg)
{
    frame_job *j = arg;
    j->st = stereo_submit(j->g, &j->pr->im[0], &j->pr->im[1], COLORMAP_TURBO);
    if (j->st == STEREO_OK)
        j->st = stereo_wait(j->g, &j->r);
    return NULL;
}

/* stereo_params.sms: the stage on 16 SMs gives the CPU's bits, synchronously and with submit /
 * wait on a thread other than the one that created it (the live app's stage thread); it runs
 * on 16..24 SMs (the hardware rounds up: by 8 on Hopper); more SMs than the device has are
 * refused. */
static void green_context(int w, int h, int D)
{
    pair pr;
    if (pair_synth(&pr, w, h, 3, 0.6)) {
        check(0, "synth %dx%d", w, h);
        return;
    }
    stereo_params p;
    stereo_params_default(&p, w, h);
    p.num_disparities = D, p.confidence = 1, p.sms = 16;
    compare(&p, NULL, &pr, "16 SMs");
    stereo_params pc = p, pg = p;
    pc.backend = STEREO_BACKEND_CPU, pg.backend = STEREO_BACKEND_CUDA;
    stereo_stage *c = NULL, *g = NULL, *all = NULL, *more = NULL;
    char err[512];
    if (stereo_create(&pc, NULL, &c, err, sizeof err) ||
        stereo_create(&pg, NULL, &g, err, sizeof err)) {
        check(0, "16 SMs: create: %s", err);
        goto done;
    }
    check(stereo_stage_sms(g) >= 16 && stereo_stage_sms(g) <= 24,
          "16 SMs: the stage says it runs on %d", stereo_stage_sms(g));
    check(stereo_process(c, &pr.im[0], &pr.im[1]) == STEREO_OK, "16 SMs: cpu");
    frame_job job = {.g = g, .pr = &pr};
    pthread_t t;
    check(pthread_create(&t, NULL, submit_and_wait, &job) == 0 && pthread_join(t, NULL) == 0 &&
              job.st == STEREO_OK,
          "16 SMs: submit / wait on another thread: %s", stereo_error(g));
    if (job.st == STEREO_OK)
        check_result(&job.r, c, COLORMAP_TURBO, "16 SMs, another thread");
    /* the whole device, then one SM more than it has */
    pg.sms = 0;
    if (stereo_create(&pg, NULL, &all, err, sizeof err)) {
        check(0, "all SMs: create: %s", err);
        goto done;
    }
    pg.sms = stereo_stage_sms(all) + 1;
    stereo_status st = stereo_create(&pg, NULL, &more, err, sizeof err);
    check(st == STEREO_ERR_PARAM && !more && strstr(err, "sms"),
          "%d SMs on a device of %d must be refused: status %d, '%s'", pg.sms,
          stereo_stage_sms(all), (int)st, err);
done:
    stereo_destroy(more);
    stereo_destroy(all);
    stereo_destroy(g);
    stereo_destroy(c);
    pair_free(&pr);
}

static const stereo_cost gpu_costs[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_AD,
                                         STEREO_COST_BT, STEREO_COST_ADCENSUS};
/* the costs of more than two views (all of gpu_costs; mi takes a pair only) */
static const stereo_cost view_costs[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_AD,
                                         STEREO_COST_BT, STEREO_COST_ADCENSUS};

/* Random paths, cost, D (16 .. 16 * max_d16), dmin (0, or below max_dmin), rank window,
 * penalties, adaptive P2, uniqueness, subpixel, LR check, median, tolerance and confidence. */
static void random_options(stereo_params *p, int max_d16, int max_dmin)
{
    p->paths = rnd() % 2 ? 8 : 4;
    p->cost = gpu_costs[rnd() % (sizeof gpu_costs / sizeof *gpu_costs)];
    p->ad_weight = 1 + rnd() % 16;
    p->num_disparities = 16 * (1 + (int)(rnd() % (unsigned)max_d16));
    p->min_disparity = rnd() % 3 ? 0 : (int)(rnd() % (unsigned)max_dmin);
    p->rank_window = 3 + 2 * (rnd() % 7);
    p->p1 = 1 + rnd() % 40;
    p->p2 = p->p1 + 1 + rnd() % 300;
    p->p2_adapt = rnd() % 2 ? 0 : 1 + rnd() % 64;
    p->uniqueness = rnd() % 2 ? 0 : rnd() % 30;
    p->subpixel = rnd() % 2, p->lr_check = rnd() % 2, p->median = rnd() % 2;
    p->lr_tolerance = rnd() % 3, p->confidence = rnd() % 2;
}

static void option_grid(void)
{
    pair pr;
    if (pair_synth(&pr, 333, 217, 1, 0.4)) {
        check(0, "synth 333x217");
        return;
    }
    static const int Ds[] = {16, 48, 64, 128, 144, 256};
    /* the full cross of paths x cost x D with defaults */
    for (int paths = 4; paths <= 8; paths += 4)
        for (size_t ci = 0; ci < sizeof gpu_costs / sizeof *gpu_costs; ci++)
            for (size_t di = 0; di < sizeof Ds / sizeof *Ds; di++) {
                stereo_params p;
                stereo_params_default(&p, 333, 217);
                p.paths = paths, p.cost = gpu_costs[ci], p.num_disparities = Ds[di];
                stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
                compare(&p, NULL, &pr, "grid");
            }
    /* random combinations of everything else */
    for (int i = 0; i < 60; i++) {
        stereo_params p;
        stereo_params_default(&p, 333, 217);
        random_options(&p, 16, 20);
        if (rnd() % 2) /* P1 / P2 per path (0: the path takes p1 / p2) */
            for (int r = 0; r < 8; r++) {
                p.p1_path[r] = rnd() % 3 ? 1 + rnd() % 40 : 0;
                p.p2_path[r] = p.p1_path[r] || rnd() % 3 ? (p.p1_path[r] ? p.p1_path[r] : p.p1) + 1 + rnd() % 300 : 0;
            }
        if (rnd() % 3 == 0) { /* path weights, within the sum's range (sgm.h) */
            for (int r = 0; r < 8; r++)
                p.path_weight[r] = rnd() % 5;
            p.path_weight[rnd() % p.paths] = 1 + rnd() % 4;
            char why[256];
            if (stereo_params_check(&p, why, sizeof why) != STEREO_OK)
                for (int r = 0; r < 8; r++)
                    p.path_weight[r] = r & 1 ? 1 : 2;
        }
        compare(&p, NULL, &pr, "random options");
    }
    pair_free(&pr);
}

/* Method bm (block matching: the N x N box sum of gpu/block.h instead of SGM's paths, then the
 * same winner-takes-all): blocks 3, 9 and 31 (larger than some images' height), every CUDA cost,
 * D 64 and 128, dmin 0 and > 0, on a synthetic scene, random pairs of odd sizes in every pixel
 * format, and random combinations of the other options. */
static void block_matching(void)
{
    static const int blocks[] = {3, 9, 31}, Ds[] = {64, 128}, dmins[] = {0, 11};
    const size_t ncosts = sizeof gpu_costs / sizeof *gpu_costs;
    pair pr;
    if (pair_synth(&pr, 333, 217, 1, 0.4)) {
        check(0, "synth 333x217");
        return;
    }
    /* the full cross of block x cost x D x dmin */
    for (size_t bi = 0; bi < 3; bi++)
        for (size_t ci = 0; ci < ncosts; ci++)
            for (size_t di = 0; di < 2; di++)
                for (size_t mi = 0; mi < 2; mi++) {
                    stereo_params p;
                    stereo_params_default(&p, 333, 217);
                    p.method = STEREO_METHOD_BM, p.block = blocks[bi], p.cost = gpu_costs[ci];
                    p.num_disparities = Ds[di], p.min_disparity = dmins[mi], p.confidence = 1;
                    compare(&p, NULL, &pr, "bm grid");
                }
    pair_free(&pr);
    /* odd sizes, padded pitches, every pixel format: each block and cost once */
    static const struct { int w, h; stereo_pixfmt fmt; int pad; } sizes[] = {
        {201, 77, STEREO_PIX_RGB24, 5},
        {130, 23, STEREO_PIX_YUYV, 6},
        {517, 9, STEREO_PIX_GREY8, 3},
    };
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        pair_random(&pr, sizes[si].w, sizes[si].h, sizes[si].fmt, sizes[si].pad, 7);
        for (size_t bi = 0; bi < 3; bi++)
            for (size_t ci = 0; ci < ncosts; ci++) {
                stereo_params p;
                stereo_params_default(&p, sizes[si].w, sizes[si].h);
                p.method = STEREO_METHOD_BM, p.block = blocks[bi], p.cost = gpu_costs[ci];
                p.num_disparities = Ds[(si + ci) % 2], p.min_disparity = dmins[(si + bi) % 2];
                p.confidence = 1;
                compare(&p, NULL, &pr, "bm odd size");
            }
        pair_free(&pr);
    }
    /* random combinations of the options the winner-takes-all and the finish take */
    if (pair_synth(&pr, 160, 97, 3, 0.7)) {
        check(0, "synth 160x97");
        return;
    }
    for (int i = 0; i < 20; i++) {
        stereo_params p;
        stereo_params_default(&p, 160, 97);
        p.method = STEREO_METHOD_BM, p.block = 3 + 2 * (rnd() % 15);
        p.cost = gpu_costs[rnd() % ncosts];
        p.num_disparities = 16 * (1 + rnd() % 8);
        p.min_disparity = rnd() % 2 ? 0 : rnd() % 20;
        p.rank_window = 3 + 2 * (rnd() % 7);
        p.uniqueness = rnd() % 2 ? 0 : rnd() % 30;
        p.subpixel = rnd() % 2, p.lr_check = rnd() % 2, p.median = rnd() % 2;
        p.lr_tolerance = rnd() % 3, p.confidence = rnd() % 2;
        compare(&p, NULL, &pr, "bm random options");
    }
    pair_free(&pr);
}

static void awkward_sizes(void)
{
    static const struct { int w, h, D; stereo_pixfmt fmt; int pad; } cases[] = {
        {333, 217, 64, STEREO_PIX_GREY8, 0}, {640, 1, 128, STEREO_PIX_GREY8, 0},
        {17, 640, 16, STEREO_PIX_GREY8, 3},  {631, 479, 128, STEREO_PIX_RGB24, 5},
        {100, 37, 64, STEREO_PIX_YUYV, 12},  {33, 5, 16, STEREO_PIX_RGB24, 1},
        {257, 129, 256, STEREO_PIX_GREY8, 7}, {1000, 3, 96, STEREO_PIX_YUYV, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pair pr;
        pair_random(&pr, cases[i].w, cases[i].h, cases[i].fmt, cases[i].pad, 9);
        stereo_params p;
        stereo_params_default(&p, cases[i].w, cases[i].h);
        p.num_disparities = cases[i].D, p.confidence = 1;
        compare(&p, NULL, &pr, "awkward size");
        p.cost = STEREO_COST_CENSUS, p.paths = 4, p.uniqueness = 10;
        compare(&p, NULL, &pr, "awkward size census");
        p.cost = STEREO_COST_AD;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, NULL, &pr, "awkward size ad");
        p.cost = STEREO_COST_BT, p.paths = 8;
        compare(&p, NULL, &pr, "awkward size bt");
        pair_free(&pr);
    }
    /* width 1 cannot hold 16 disparities: both backends refuse it the same way */
    stereo_params p;
    stereo_params_default(&p, 1, 640);
    p.num_disparities = 16;
    for (int b = STEREO_BACKEND_CPU; b <= STEREO_BACKEND_CUDA; b++) {
        p.backend = (stereo_backend)b;
        stereo_stage *s = NULL;
        char err[256] = "";
        check(stereo_create(&p, NULL, &s, err, sizeof err) == STEREO_ERR_PARAM && !s,
              "1x640 must be refused by backend %d", b);
    }
}

/* --d512: the generated scene at 1920x1080 with 512 disparities, 8 paths, on 16 SMs (the Orin
 * AGX proxy), rank and census, against the CPU reference: the sweep design at full size. */
static void d512_full_size(void)
{
    pair pr;
    if (pair_synth(&pr, 1920, 1080, 1, 0.3)) {
        check(0, "synth 1920x1080");
        return;
    }
    stereo_params p;
    stereo_params_default(&p, 1920, 1080);
    p.num_disparities = 512, p.confidence = 1, p.sms = 16;
    compare(&p, NULL, &pr, "1920x1080 D512, 16 SMs");
    p.cost = STEREO_COST_CENSUS;
    stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
    compare(&p, NULL, &pr, "1920x1080 D512 census, 16 SMs");
    pair_free(&pr);
}

/* More than 256 disparities: 512 runs on CUDA in the sweep design (which the stage picks by
 * itself: no other design has kernels for it), bit for bit, with every cost, 4 and 8 paths,
 * dmin > 0 and maps; a D above 256 that the CUDA stage cannot run, and block matching at 512,
 * are refused by backend cuda (no device kernels: STEREO_ERR_NODEV, the message names the D)
 * and run on the CPU under backend auto. */
static void wide_range(void)
{
    static const struct { int w, h; stereo_cost cost; int paths, dmin; } cases[] = {
        {700, 61, STEREO_COST_RANK, 8, 0}, {613, 37, STEREO_COST_CENSUS, 4, 3},
        {560, 30, STEREO_COST_AD, 8, 0},   {590, 23, STEREO_COST_BT, 8, 7},
        {577, 29, STEREO_COST_ADCENSUS, 4, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pair pr;
        pair_random(&pr, cases[i].w, cases[i].h, STEREO_PIX_GREY8, 1, 200);
        stereo_params p;
        stereo_params_default(&p, cases[i].w, cases[i].h);
        p.num_disparities = 512, p.min_disparity = cases[i].dmin, p.cost = cases[i].cost;
        p.paths = cases[i].paths, p.confidence = 1, p.uniqueness = 5;
        stereo_default_penalties(p.cost, p.rank_window, &p.p1, &p.p2);
        compare(&p, NULL, &pr, "512 disparities");
        pair_free(&pr);
    }
    pair pr;
    pair_random(&pr, 640, 48, STEREO_PIX_RGB24, 0, 150);
    stereo_map m[2];
    random_maps(m, 600, 40, 640, 48);
    stereo_params p;
    stereo_params_default(&p, 600, 40);
    p.num_disparities = 512;
    compare(&p, m, &pr, "512 disparities, maps");
    free_maps(m);
    pair_free(&pr);
    static const struct { int D; stereo_method method; } refused[] = {
        {272, STEREO_METHOD_SGM}, {496, STEREO_METHOD_SGM}, {512, STEREO_METHOD_BM}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        stereo_params_default(&p, 600, 40);
        p.num_disparities = refused[i].D, p.method = refused[i].method;
        p.backend = STEREO_BACKEND_CUDA;
        stereo_stage *s = NULL;
        char err[512] = "", want[32];
        snprintf(want, sizeof want, "%d disparities", refused[i].D);
        stereo_status st = stereo_create(&p, NULL, &s, err, sizeof err);
        check(st == STEREO_ERR_NODEV && !s && strstr(err, want),
              "D %d %s on CUDA: want a refusal naming the D, got status %d '%s'", refused[i].D,
              stereo_method_to_str(refused[i].method), (int)st, err);
        stereo_destroy(s);
        p.backend = STEREO_BACKEND_AUTO;
        s = NULL;
        st = stereo_create(&p, NULL, &s, err, sizeof err);
        check(st == STEREO_OK && s && stereo_active_backend(s) == STEREO_BACKEND_CPU,
              "D %d %s, backend auto: want the CPU backend, got status %d '%s'", refused[i].D,
              stereo_method_to_str(refused[i].method), (int)st, err);
        stereo_destroy(s);
    }
}

static void with_maps(void)
{
    static const struct { int w, h, sw, sh; stereo_pixfmt fmt; } cases[] = {
        {320, 240, 336, 250, STEREO_PIX_GREY8}, {301, 203, 290, 211, STEREO_PIX_RGB24},
        {128, 97, 128, 97, STEREO_PIX_YUYV},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pair pr;
        pair_random(&pr, cases[i].sw, cases[i].sh, cases[i].fmt, 4, 6);
        stereo_map m[2];
        random_maps(m, cases[i].w, cases[i].h, cases[i].sw, cases[i].sh);
        stereo_params p;
        stereo_params_default(&p, cases[i].w, cases[i].h);
        p.num_disparities = 48, p.confidence = 1;
        compare(&p, m, &pr, "maps");
        free_maps(m);
        pair_free(&pr);
    }
}

static void shared_scenes(const char *dir)
{
    static const struct { const char *left, *right; int D; } scenes[] = {
        {"tsukuba-left.ppm", "tsukuba-right.ppm", 16}, {"venus-left.ppm", "venus-right.ppm", 32},
        {"teddy-left.ppm", "teddy-right.ppm", 64},     {"cones-left.ppm", "cones-right.ppm", 64},
        {"conesH-left.ppm", "conesH-right.ppm", 128},  {"TeddyH-left.ppm", "TeddyH-right.ppm", 128},
        {"artroom1-left.ppm", "artroom1-right.ppm", 192},
        {"karlsruhe-left.pgm", "karlsruhe-right.pgm", 128},
    };
    int found = 0;
    for (size_t i = 0; i < sizeof scenes / sizeof *scenes; i++) {
        char lp[1024], rp[1024], err[512];
        snprintf(lp, sizeof lp, "%s/%s", dir, scenes[i].left);
        snprintf(rp, sizeof rp, "%s/%s", dir, scenes[i].right);
        image l, r;
        if (pnm_read(lp, &l, err, sizeof err) || pnm_read(rp, &r, err, sizeof err))
            continue;
        found++;
        pair pr = {{l.data, r.data},
                   {{l.data, l.width, l.height, (size_t)l.width * l.channels,
                     l.channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8},
                    {r.data, r.width, r.height, (size_t)r.width * r.channels,
                     r.channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8}},
                   2};
        stereo_params p;
        stereo_params_default(&p, l.width, l.height);
        p.num_disparities = scenes[i].D, p.confidence = 1;
        compare(&p, NULL, &pr, scenes[i].left);
        p.cost = STEREO_COST_CENSUS;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, NULL, &pr, scenes[i].left);
        p.cost = STEREO_COST_AD;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, NULL, &pr, scenes[i].left);
        /* the course project's shape: other penalties on the diagonals and the vertical */
        static const int p1s[8] = {14, 14, 10, 10, 8, 8, 8, 8}, p2s[8] = {112, 112, 96, 96, 80, 80, 80, 80};
        memcpy(p.p1_path, p1s, sizeof p1s), memcpy(p.p2_path, p2s, sizeof p2s);
        compare(&p, NULL, &pr, scenes[i].left);
        /* bt, and the path weights 3:1 (straight : diagonal) */
        memset(p.p1_path, 0, sizeof p.p1_path), memset(p.p2_path, 0, sizeof p.p2_path);
        p.cost = STEREO_COST_BT;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, NULL, &pr, scenes[i].left);
        p.cost = STEREO_COST_CENSUS;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        for (int k = 0; k < 8; k++)
            p.path_weight[k] = k < 4 ? 3 : 1;
        compare(&p, NULL, &pr, scenes[i].left);
        /* block matching on the real scene (bt: the packed words) */
        p.method = STEREO_METHOD_BM, p.block = 9, p.cost = STEREO_COST_BT;
        compare(&p, NULL, &pr, scenes[i].left);
        image_free(&l);
        image_free(&r);
    }
    printf("shared scenes compared: %d (from %s)\n", found, dir);
    check(found > 0, "no shared scenes found in %s", dir);
}

/* More than two views (multiview.h, stereo.h): the multi-baseline cost into the cost volume,
 * then the same aggregation / block matching and everything after. 3 and 4 views (one with
 * baselines that are not whole: the sampling rule's interpolation), every CUDA cost, both
 * combine rules, D 64 and 128; bm; random options; odd sizes in every pixel format; a map per
 * view; the asynchronous path (stereo_submit_views) from managed frames. */
static void multi_view(void)
{
    static const int b3[] = {0, 16, -16}, b4[] = {0, 16, 32, -16}, bq[] = {0, 16, 8, -20};
    static const struct { int n; const int *b; } sets[] = {{3, b3}, {4, b4}, {4, bq}};
    const size_t ncosts = sizeof view_costs / sizeof *view_costs;
    for (size_t si = 0; si < 3; si++) {
        pair pr;
        if (views_synth(&pr, 333, 217, 1, 0.4, sets[si].n, sets[si].b)) {
            check(0, "synth views 333x217");
            return;
        }
        for (size_t ci = 0; ci < ncosts; ci++)
            for (int rule = 0; rule < 2; rule++) {
                stereo_params p;
                stereo_params_default(&p, 333, 217);
                p.cost = view_costs[ci], p.views = sets[si].n, p.confidence = 1;
                p.combine = rule ? STEREO_COMBINE_SUM : STEREO_COMBINE_SIDES;
                p.num_disparities = (ci + rule) % 2 ? 128 : 64;
                memcpy(p.baseline, sets[si].b, sizeof(int) * (size_t)sets[si].n);
                stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
                compare(&p, NULL, &pr, "views grid");
                if (rule == 0 && ci % 2 == si % 2) { /* bm on the same volume */
                    p.method = STEREO_METHOD_BM, p.block = 3 + 6 * (int)ci;
                    compare(&p, NULL, &pr, "views bm");
                }
            }
        /* random combinations of the other options */
        for (int i = 0; i < 6; i++) {
            stereo_params p;
            stereo_params_default(&p, 333, 217);
            p.views = sets[si].n;
            memcpy(p.baseline, sets[si].b, sizeof(int) * (size_t)sets[si].n);
            p.combine = rnd() % 2 ? STEREO_COMBINE_SUM : STEREO_COMBINE_SIDES;
            random_options(&p, 8, 12);
            compare(&p, NULL, &pr, "views random options");
        }
        pair_free(&pr);
    }
    /* odd sizes and padded pitches in every pixel format, random texture */
    static const struct { int w, h; stereo_pixfmt fmt; int pad; } sizes[] = {
        {201, 77, STEREO_PIX_RGB24, 5}, {130, 23, STEREO_PIX_YUYV, 6}, {517, 9, STEREO_PIX_GREY8, 3},
    };
    for (size_t zi = 0; zi < 3; zi++)
        for (size_t ci = 0; ci < ncosts; ci++) {
            pair pr;
            const int n = sets[(zi + ci) % 3].n, *b = sets[(zi + ci) % 3].b;
            views_random(&pr, sizes[zi].w, sizes[zi].h, sizes[zi].fmt, sizes[zi].pad, 7, n, b);
            stereo_params p;
            stereo_params_default(&p, sizes[zi].w, sizes[zi].h);
            p.cost = view_costs[ci], p.views = n, p.confidence = 1, p.num_disparities = 48;
            p.combine = ci % 2 ? STEREO_COMBINE_SUM : STEREO_COMBINE_SIDES;
            memcpy(p.baseline, b, sizeof(int) * (size_t)n);
            stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
            compare(&p, NULL, &pr, "views odd size");
            pair_free(&pr);
        }
    /* one map per view, cameras of the views' own sizes */
    {
        pair pr;
        views_random(&pr, 310, 211, STEREO_PIX_YUYV, 4, 6, 3, b3);
        stereo_map m[3];
        random_maps_n(m, 3, 300, 200, 310, 211);
        stereo_params p;
        stereo_params_default(&p, 300, 200);
        p.num_disparities = 48, p.confidence = 1, p.views = 3;
        memcpy(p.baseline, b3, sizeof b3);
        p.cost = STEREO_COST_RANK;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, m, &pr, "views maps");
        p.cost = STEREO_COST_CENSUS;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, m, &pr, "views maps census");
        p.cost = STEREO_COST_ADCENSUS; /* each view's grey mapping from its rectified image */
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, m, &pr, "views maps adcensus");
        free_maps_n(m, 3);
        pair_free(&pr);
    }
    /* the asynchronous path: managed frames per view, stereo_submit_views */
    {
        const int w = 200, h = 120, n = 4;
        pair src;
        if (views_synth(&src, w, h, 3, 0.3, n, b4)) {
            check(0, "synth views %dx%d", w, h);
            return;
        }
        stereo_params p;
        stereo_params_default(&p, w, h);
        p.num_disparities = 64, p.confidence = 1, p.views = n; /* the default cost */
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        memcpy(p.baseline, b4, sizeof b4);
        stereo_params pc = p, pg = p;
        pc.backend = STEREO_BACKEND_CPU, pg.backend = STEREO_BACKEND_CUDA;
        stereo_stage *c = NULL, *g = NULL;
        char err[256];
        void *frames[4] = {NULL};
        stereo_image im[4];
        if (stereo_create(&pc, NULL, &c, err, sizeof err) ||
            stereo_create(&pg, NULL, &g, err, sizeof err)) {
            check(0, "views async: create: %s", err);
            goto async_done;
        }
        for (int v = 0; v < n; v++) {
            check(stereo_frame_alloc(g, (size_t)w * h * 3, &frames[v]) == STEREO_OK,
                  "views async: frame_alloc: %s", stereo_error(g));
            if (!frames[v])
                goto async_done;
            memcpy(frames[v], src.data[v], (size_t)w * h * 3);
            im[v] = (stereo_image){frames[v], w, h, (size_t)w * 3, STEREO_PIX_RGB24};
        }
        check(stereo_process_views(c, src.im, n) == STEREO_OK, "views async: cpu");
        stereo_result r;
        check(stereo_submit(g, &im[0], &im[1], COLORMAP_TURBO) == STEREO_ERR_PARAM &&
                  strstr(stereo_error(g), "stereo_submit_views"),
              "views async: stereo_submit on a 4-view stage must be refused by name");
        check(stereo_submit_views(g, im, n, COLORMAP_TURBO) == STEREO_OK &&
                  stereo_wait(g, &r) == STEREO_OK,
              "views async: submit / wait: %s", stereo_error(g));
        check_result(&r, c, COLORMAP_TURBO, "views async");
        check(stereo_submit_views(g, src.im, n, COLORMAP_TURBO) == STEREO_OK &&
                  stereo_wait(g, &r) == STEREO_OK,
              "views async: host-memory frames: %s", stereo_error(g));
        check_result(&r, c, COLORMAP_TURBO, "views async, host memory");
    async_done:
        for (int v = 0; v < n; v++)
            if (frames[v])
                stereo_frame_free(g, frames[v]);
        stereo_destroy(c);
        stereo_destroy(g);
        pair_free(&src);
    }
}

/* Cost mi (mi.h): the hierarchy's levels on CUDA stages of their own, the tables on the host,
 * the full size on the stage: every output equal to the CPU backend's, for SGM and bm, 4 and 8
 * paths, D 64 and 128, with maps, at a size where no level below full size fits (F = 0: the full
 * size matched level-style first), and a sequence with mi_warm (the previous frame's disparity;
 * a scene cut collapses the valid fraction and the hierarchy runs again), the GPU through
 * stereo_submit / stereo_wait, the CPU synchronously: the same frames warm, the same bits; the
 * tables per tile at 1 x 1, 2 x 2, 5 x 5 (default) and 8 x 8. */
static void mutual_information(void)
{
    pair pr;
    if (pair_synth(&pr, 333, 217, 1, 0.4)) {
        check(0, "synth 333x217");
        return;
    }
    for (int paths = 4; paths <= 8; paths += 4)
        for (int D = 64; D <= 128; D += 64)
            for (int m = 0; m < 2; m++) {
                stereo_params p;
                stereo_params_default(&p, 333, 217);
                p.cost = STEREO_COST_MI, p.paths = paths, p.num_disparities = D;
                p.method = m ? STEREO_METHOD_BM : STEREO_METHOD_SGM, p.confidence = 1;
                stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
                compare(&p, NULL, &pr, "mi");
            }
    /* the tables per tile (mi.h; the default 5 x 5 above): one table, 2 x 2 and 8 x 8, SGM
     * and bm (bm reads the tables on the fly, pair_cost.cuh) */
    static const int grids[] = {1, 2, 8};
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < 2; m++) {
            const int tiles = grids[i];
            stereo_params p;
            stereo_params_default(&p, 333, 217);
            p.cost = STEREO_COST_MI, p.num_disparities = 64, p.mi_tiles = tiles;
            p.method = m ? STEREO_METHOD_BM : STEREO_METHOD_SGM;
            stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
            char what[64];
            snprintf(what, sizeof what, "mi %dx%d tiles%s", tiles, tiles, m ? " bm" : "");
            compare(&p, NULL, &pr, what);
        }
    pair_free(&pr);
    {
        pair_random(&pr, 310, 211, STEREO_PIX_YUYV, 4, 6);
        stereo_map m[2];
        random_maps(m, 300, 200, 310, 211);
        stereo_params p;
        stereo_params_default(&p, 300, 200);
        p.cost = STEREO_COST_MI, p.num_disparities = 48, p.confidence = 1;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, m, &pr, "mi maps");
        free_maps(m);
        pair_free(&pr);
    }
    {
        pair_random(&pr, 50, 30, STEREO_PIX_GREY8, 0, 3); /* level 1 holds no D: F = 0 */
        stereo_params p;
        stereo_params_default(&p, 50, 30);
        p.cost = STEREO_COST_MI, p.num_disparities = 48;
        stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
        compare(&p, NULL, &pr, "mi F=0");
        pair_free(&pr);
    }
    /* the live policy over a sequence with a scene cut */
    enum { W = 240, H = 160, FRAMES = 7 };
    pair seq[FRAMES];
    for (int f = 0; f < FRAMES; f++) {
        if (f == 3) { /* the cut: two unrelated images, few pixels survive the LR check */
            pair_random(&seq[f], W, H, STEREO_PIX_GREY8, 0, 5);
            for (int i = 0; i < W * H; i++)
                seq[f].data[1][i] = (uint8_t)rnd();
        }
        else if (pair_synth(&seq[f], W, H, 1, 0.05 * f)) {
            check(0, "synth %dx%d", W, H);
            for (int k = 0; k < f; k++)
                pair_free(&seq[k]);
            return;
        }
    }
    stereo_params p;
    stereo_params_default(&p, W, H);
    p.cost = STEREO_COST_MI, p.num_disparities = 64, p.mi_warm = 1, p.confidence = 1;
    stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
    stereo_params pc = p, pg = p;
    pc.backend = STEREO_BACKEND_CPU, pg.backend = STEREO_BACKEND_CUDA;
    stereo_stage *c = NULL, *g = NULL;
    char err[256];
    if (stereo_create(&pc, NULL, &c, err, sizeof err) ||
        stereo_create(&pg, NULL, &g, err, sizeof err)) {
        check(0, "mi warm: create: %s", err);
    } else {
        int warm_frames = 0, restarts_after_cut = 0;
        for (int f = 0; f < FRAMES; f++) {
            stereo_result r;
            check(stereo_process(c, &seq[f].im[0], &seq[f].im[1]) == STEREO_OK, "mi warm: cpu");
            stereo_status st = stereo_submit(g, &seq[f].im[0], &seq[f].im[1], COLORMAP_TURBO);
            if (st == STEREO_OK)
                st = stereo_wait(g, &r);
            check(st == STEREO_OK, "mi warm frame %d: submit / wait: %s", f, stereo_error(g));
            if (st != STEREO_OK)
                break;
            char what[64];
            snprintf(what, sizeof what, "mi warm frame %d", f);
            check_result(&r, c, COLORMAP_TURBO, what);
            stereo_mi_info mc, mg;
            check(stereo_mi_status(c, &mc) == 0 && stereo_mi_status(g, &mg) == 0 &&
                      mc.warm == mg.warm && mc.restarts == mg.restarts && mc.valid == mg.valid,
                  "mi warm frame %d: policy differs: cpu warm %d restarts %llu valid %.4f, cuda "
                  "warm %d restarts %llu valid %.4f", f, mc.warm, (unsigned long long)mc.restarts,
                  mc.valid, mg.warm, (unsigned long long)mg.restarts, mg.valid);
            warm_frames += mg.warm;
            restarts_after_cut += f > 3 && !mg.warm;
        }
        printf("mi warm: %d of %d frames warm, %d restart(s) after the cut\n", warm_frames,
               FRAMES, restarts_after_cut);
        /* frame 0 and the frame after the cut run the hierarchy, every other one is warm */
        check(warm_frames == FRAMES - 2 && restarts_after_cut == 1,
              "mi warm: %d warm frames of %d, %d restarts after the cut (want %d and 1)",
              warm_frames, FRAMES, restarts_after_cut, FRAMES - 2);
    }
    stereo_destroy(c);
    stereo_destroy(g);
    for (int f = 0; f < FRAMES; f++)
        pair_free(&seq[f]);
}

/* The coarse-to-fine mode (band.h): bands of 32 and 64 over random options of every cost it
 * takes, odd sizes, maps, per-path penalties that leave the byte volumes (16-bit L), weights,
 * and a green context around the nested coarse stage. */
/* Cost adcensus (census plus the grey difference after the histogram mapping): the generated
 * scene with the right view re-exposed (so the mapping is not the identity), every aggregation
 * design (the branches, the per-direction volumes, the sweep at 512), 4 and 8 paths, weights
 * 1..16, block matching, maps, 16 SMs, the coarse-to-fine mode, random options; --adcensus: this
 * set alone. */
static void adcensus_set(int quick)
{
    pair pr;
    if (pair_synth(&pr, 333, 217, 1, 0.4)) {
        check(0, "synth 333x217");
        return;
    }
    { /* re-expose the right view: v -> min(255, v * 5 / 4 + 9) */
        const stereo_image *r = &pr.im[1];
        for (int y = 0; y < r->height; y++)
            for (int x = 0; x < r->width * stereo_pixfmt_bytes(r->format); x++) {
                uint8_t *v = pr.data[1] + (size_t)y * r->pitch + x;
                *v = (uint8_t)(*v * 5 / 4 + 9 > 255 ? 255 : *v * 5 / 4 + 9);
            }
    }
    static const int Ds[] = {16, 64, 128, 256};
    for (int paths = 4; paths <= 8; paths += 4)
        for (size_t di = 0; di < 4; di++)
            for (int wi = 0; wi < (quick ? 1 : 3); wi++) {
                stereo_params p;
                stereo_params_default(&p, 333, 217);
                p.cost = STEREO_COST_ADCENSUS, p.paths = paths, p.num_disparities = Ds[di];
                p.ad_weight = (int[]){3, 1, 16}[wi], p.confidence = di % 2;
                compare(&p, NULL, &pr, "adcensus grid");
            }
    const char *agg[] = {"branches", "sweep"};
    for (int ai = 0; ai < 2; ai++) {
        setenv("STEREO_CUDA_AGG", agg[ai], 1);
        stereo_params p;
        stereo_params_default(&p, 333, 217);
        p.cost = STEREO_COST_ADCENSUS, p.num_disparities = 64;
        compare(&p, NULL, &pr, agg[ai]);
        unsetenv("STEREO_CUDA_AGG");
    }
    for (int bi = 0; bi < 2; bi++) {
        stereo_params p;
        stereo_params_default(&p, 333, 217);
        p.cost = STEREO_COST_ADCENSUS, p.method = STEREO_METHOD_BM, p.block = bi ? 9 : 3;
        p.num_disparities = 64, p.min_disparity = 5 * bi;
        compare(&p, NULL, &pr, "adcensus bm");
    }
    {
        stereo_params p;
        stereo_params_default(&p, 333, 217);
        p.cost = STEREO_COST_ADCENSUS, p.num_disparities = 64, p.sms = 16;
        compare(&p, NULL, &pr, "adcensus 16 sms");
        p.sms = 0, p.band = 32, p.num_disparities = 128;
        compare(&p, NULL, &pr, "adcensus band 32");
        p.band = 64;
        compare(&p, NULL, &pr, "adcensus band 64");
    }
    for (int i = 0; i < (quick ? 3 : 30); i++) {
        stereo_params p;
        stereo_params_default(&p, 333, 217);
        random_options(&p, 16, 20);
        p.cost = STEREO_COST_ADCENSUS;
        compare(&p, NULL, &pr, "adcensus random options");
    }
    pair_free(&pr);
    /* maps, and the sweep design at 512 */
    stereo_map m[2];
    pair_random(&pr, 200, 90, STEREO_PIX_RGB24, 0, 9);
    random_maps(m, 190, 85, 200, 90);
    stereo_params p;
    stereo_params_default(&p, 190, 85);
    p.cost = STEREO_COST_ADCENSUS, p.num_disparities = 64, p.confidence = 1;
    compare(&p, m, &pr, "adcensus maps");
    free_maps(m);
    pair_free(&pr);
    pair_random(&pr, 577, 29, STEREO_PIX_GREY8, 1, 200);
    stereo_params_default(&p, 577, 29);
    p.cost = STEREO_COST_ADCENSUS, p.num_disparities = 512, p.min_disparity = 5;
    compare(&p, NULL, &pr, "adcensus 512");
    pair_free(&pr);
}

static void coarse_to_fine(int quick)
{
    static const struct { int w, h; stereo_pixfmt fmt; int pad; } sizes[] = {
        {333, 217, STEREO_PIX_GREY8, 0}, {161, 75, STEREO_PIX_RGB24, 3}, {256, 97, STEREO_PIX_YUYV, 0}};
    const int nsizes = quick ? 1 : 3, per_size = quick ? 4 : 40;
    for (int si = 0; si < nsizes; si++) {
        const int w = sizes[si].w, h = sizes[si].h;
        pair pr;
        pair_random(&pr, w, h, sizes[si].fmt, sizes[si].pad, 7);
        for (int i = 0; i < per_size; i++) {
            stereo_params p;
            stereo_params_default(&p, w, h);
            random_options(&p, (w / 2 - 1) / 16, 20);
            p.band = rnd() % 2 ? 32 : 64;
            if (p.num_disparities <= p.band)
                p.num_disparities = p.band + 16 * (1 + (int)(rnd() % 2));
            if (i % 4 == 1) /* a P2 beyond the byte volumes: 16-bit L */
                p.p2 = 300 + (int)(rnd() % 200);
            if (i % 5 == 2)
                for (int r = 0; r < 8; r++)
                    p.path_weight[r] = 1 + (int)(rnd() % 3);
            if (i % 7 == 3)
                p.sms = 8;
            char why[256];
            if (stereo_params_check(&p, why, sizeof why) != STEREO_OK) {
                /* a D the half-size level cannot take at this width: the smallest that can */
                p.num_disparities = p.band + 16, p.min_disparity = 0;
                for (int r = 0; r < 8; r++)
                    p.path_weight[r] = 1;
            }
            check(stereo_params_check(&p, why, sizeof why) == STEREO_OK, "band params: %s", why);
            char what[64];
            snprintf(what, sizeof what, "band %d%s", p.band, p.sms ? " sms 8" : "");
            compare(&p, NULL, &pr, what);
        }
        pair_free(&pr);
    }
    stereo_map m[2];
    pair pr;
    pair_random(&pr, 200, 90, STEREO_PIX_RGB24, 0, 9);
    random_maps(m, 190, 85, 200, 90);
    stereo_params p;
    stereo_params_default(&p, 190, 85);
    p.num_disparities = 64, p.band = 32, p.confidence = 1;
    compare(&p, m, &pr, "band maps");
    free_maps(m);
    pair_free(&pr);
    /* ranges above 256, which only the band and the sweep design take on CUDA: 384 and 512,
     * with penalties beyond the byte volumes */
    pair_random(&pr, 1100, 41, STEREO_PIX_GREY8, 0, 300);
    stereo_params_default(&p, 1100, 41);
    p.num_disparities = 384, p.band = 64, p.p2 = 400;
    compare(&p, NULL, &pr, "band D384");
    p.num_disparities = 512, p.band = 32, p.p2 = 128, p.min_disparity = 3;
    compare(&p, NULL, &pr, "band D512");
    pair_free(&pr);
}

/* Stage 9, the post-filters (gpu/postfilter.h): a grid of speckle sizes (off, 1, a few pixels,
 * hundreds, more than the image) and steps (0, 1 px, 4 px), fill on and off, the temporal
 * filter's first frame, alone and over random options; then sequences of the moving generated
 * scene with the temporal filter (the state carried frame to frame on both backends, a cut to
 * another scene that resets it, settings toggled mid-sequence with stereo_set_postfilter,
 * frames through stereo_process on the CPU and submit / wait on CUDA). */
static void post_filter_frames(int w, int h, const stereo_params *base, int frames,
                               const char *what)
{
    stereo_params pc = *base, pg = *base;
    pc.backend = STEREO_BACKEND_CPU, pg.backend = STEREO_BACKEND_CUDA;
    stereo_stage *c = NULL, *g = NULL;
    char err[512];
    if (stereo_create(&pc, NULL, &c, err, sizeof err) ||
        stereo_create(&pg, NULL, &g, err, sizeof err)) {
        check(0, "%s: create: %s", what, err);
        goto done;
    }
    size_t n = (size_t)w * h;
    for (int k = 0; k < frames; k++) {
        pair pr;
        double t = k == frames / 2 ? 5.0 + k : 0.15 * k; /* one cut to another scene */
        if (pair_synth(&pr, w, h, 1, t)) {
            check(0, "%s: synth", what);
            goto done;
        }
        if (k == 3 || k == 6) { /* toggles: fill, region voting and the interpolation (the CUDA
                                   stage captures its graph again) and the temporal filter's
                                   alpha, then back */
            stereo_postfilter f = base->post;
            if (k == 3)
                f.fill = !f.fill, f.vote = !f.vote, f.interp = !f.interp,
                f.temporal_alpha = f.temporal_alpha % 16 + 1;
            check(stereo_set_postfilter(c, &f) == STEREO_OK &&
                      stereo_set_postfilter(g, &f) == STEREO_OK,
                  "%s: stereo_set_postfilter: %s / %s", what, stereo_error(c), stereo_error(g));
        }
        stereo_result r;
        check(stereo_process(c, &pr.im[0], &pr.im[1]) == STEREO_OK, "%s: cpu frame %d", what, k);
        int async = k % 2;
        stereo_status st = async ? stereo_submit(g, &pr.im[0], &pr.im[1], COLORMAP_TURBO)
                                 : stereo_process(g, &pr.im[0], &pr.im[1]);
        if (st == STEREO_OK && async)
            st = stereo_wait(g, &r);
        check(st == STEREO_OK, "%s: cuda frame %d: %s", what, k, stereo_error(g));
        if (st == STEREO_OK) {
            const int16_t *gd = async ? r.disparity : stereo_disparity(g);
            size_t d = first_diff(stereo_disparity(c), gd, 2 * n);
            check(d == 2 * n, "%s [%s] frame %d (%s): disparity differs at pixel %zu: cpu %d "
                  "cuda %d", what, describe(base), k, async ? "submit" : "process", d / 2,
                  d < 2 * n ? stereo_disparity(c)[d / 2] : 0, d < 2 * n ? gd[d / 2] : 0);
            if (base->confidence)
                check(!memcmp(stereo_confidence(c), async ? r.confidence : stereo_confidence(g), n),
                      "%s frame %d: confidence differs", what, k);
            if (async)
                check_result(&r, c, COLORMAP_TURBO, what);
        }
        pair_free(&pr);
    }
done:
    stereo_destroy(c);
    stereo_destroy(g);
}

static void post_filters(int quick)
{
    pair pr;
    const int w = quick ? 97 : 333, h = quick ? 41 : 217;
    if (pair_synth(&pr, w, h, 1, 0.4)) {
        check(0, "synth %dx%d", w, h);
        return;
    }
    static const int sizes[] = {0, 1, 30, 400, 1000000}, diffs[] = {0, 16, 64};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t di = 0; di < sizeof diffs / sizeof *diffs; di++)
            for (int fill = 0; fill < 2; fill++) {
                if (quick && (si % 2 || di == 1))
                    continue;
                stereo_params p;
                stereo_params_default(&p, w, h);
                p.num_disparities = 48, p.confidence = 1;
                p.post.speckle_size = sizes[si], p.post.speckle_diff = diffs[di];
                p.post.fill = fill, p.post.temporal = (int)(si + di) % 2;
                p.post.vote = (int)(si + fill) % 2;
                p.post.interp = (int)(si + di + fill) % 2;
                compare(&p, NULL, &pr, "post-filters");
            }
    for (int i = 0; i < (quick ? 4 : 30); i++) {
        stereo_params p;
        stereo_params_default(&p, w, h);
        random_options(&p, 6, 20);
        p.post.speckle_size = (int)(rnd() % 500), p.post.speckle_diff = (int)(rnd() % 80);
        p.post.fill = (int)(rnd() % 2), p.post.temporal = (int)(rnd() % 2);
        p.post.vote = (int)(rnd() % 2), p.post.interp = (int)(rnd() % 2);
        if (i % 4 == 3) { /* with the coarse-to-fine mode, whose coarse level is unfiltered */
            char why[256];
            p.band = 32;
            if (p.num_disparities <= 32)
                p.num_disparities = 48;
            if (stereo_params_check(&p, why, sizeof why) != STEREO_OK)
                p.band = 0;
        }
        compare(&p, NULL, &pr, "post-filters, random options");
    }
    pair_free(&pr);
    for (int i = 0; i < (quick ? 1 : 6); i++) {
        stereo_params p;
        stereo_params_default(&p, w, h);
        p.num_disparities = 48, p.confidence = 1;
        p.post = (stereo_postfilter){i % 3 ? 20 * i : 0, 16, i % 2, 1, 1 + (int)(rnd() % 16),
                                     (int)(rnd() % 48), (int)(rnd() % 4), i % 2 == 0};
        post_filter_frames(w, h, &p, quick ? 6 : 12, "post-filter sequence");
    }
}


/* Mei et al.'s cross-based aggregation and discontinuity adjustment (gpu/cross.h): arm caps 1,
 * 2, 5 and the paper's 34, each alone and with the adjustment, over every CUDA cost, 4 and 8
 * paths, a few ranges; then with cost mi (the full size aggregates, its levels do not), more
 * views, a negative minimum, rectification maps, the post-filters, 16 SMs, 512 disparities (the
 * sweep design) and the branches and strips designs. */
static void mei_refinements(int quick)
{
    pair pr;
    const int w = quick ? 97 : 241, h = quick ? 41 : 123;
    if (pair_synth(&pr, w, h, 1, 0.3)) {
        check(0, "synth %dx%d", w, h);
        return;
    }
    static const int caps[] = {0, 1, 2, 5, 34};
    const int ncost = (int)(sizeof gpu_costs / sizeof *gpu_costs);
    for (int ci = 0; ci < ncost; ci++)
        for (size_t ki = 0; ki < sizeof caps / sizeof *caps; ki++)
            for (int dda = 0; dda < 2; dda++) {
                if ((quick && (ci + (int)ki + dda) % 3) || (!caps[ki] && !dda))
                    continue;
                stereo_params p;
                stereo_params_default(&p, w, h);
                p.cost = gpu_costs[ci];
                stereo_default_penalties(p.cost, p.rank_window, &p.p1, &p.p2);
                p.num_disparities = 32 + 16 * ((ci + (int)ki) % 3);
                p.min_disparity = (ci + dda) % 3 == 2 ? 3 : 0;
                p.paths = (ci + dda) % 2 ? 8 : 4, p.confidence = 1;
                p.cross = caps[ki], p.discontinuity = dda;
                compare(&p, NULL, &pr, "cross");
            }
    pair_free(&pr);
    pair mv;
    stereo_params p;
    pair_random(&mv, 67, 29, STEREO_PIX_GREY8, 1, 5);
    stereo_params_default(&p, 67, 29);
    p.num_disparities = 16, p.cost = STEREO_COST_MI, p.cross = 2, p.discontinuity = 1;
    stereo_default_penalties(p.cost, 9, &p.p1, &p.p2);
    compare(&p, NULL, &mv, "cross mi");
    pair_free(&mv);
    static const int b3[] = {0, 16, -16};
    views_random(&mv, 67, 29, STEREO_PIX_GREY8, 1, 5, 3, b3);
    stereo_params_default(&p, 67, 29);
    p.num_disparities = 32, p.views = 3, p.baseline[2] = -16, p.confidence = 1;
    p.cross = 3, p.discontinuity = 1;
    compare(&p, NULL, &mv, "cross views");
    pair_free(&mv);
    pair_random(&mv, w, h, STEREO_PIX_RGB24, 3, 5);
    stereo_map m[2];
    random_maps(m, w - 6, h - 3, w, h);
    stereo_params_default(&p, w - 6, h - 3);
    p.num_disparities = 32, p.min_disparity = -7, p.confidence = 1;
    p.cross = 2, p.discontinuity = 1, p.post.vote = 1, p.post.interp = 1, p.post.fill = 1;
    compare(&p, m, &mv, "cross maps negative min");
    free_maps(m);
    stereo_params_default(&p, w, h);
    p.num_disparities = 48, p.cross = 1, p.discontinuity = 1, p.sms = 16;
    compare(&p, NULL, &mv, "cross 16 sms");
    pair_free(&mv);
    if (quick)
        return;
    pair_random(&mv, 540, 21, STEREO_PIX_GREY8, 0, 40);
    stereo_params_default(&p, 540, 21);
    p.num_disparities = 512, p.cross = 2, p.discontinuity = 1;
    compare(&p, NULL, &mv, "cross 512");
    pair_free(&mv);
    pair_random(&mv, 333, 217, STEREO_PIX_GREY8, 0, 9);
    const char *agg[] = {"branches", "strips", "sweep"};
    for (int ai = 0; ai < 3; ai++) {
        setenv("STEREO_CUDA_AGG", agg[ai], 1);
        stereo_params_default(&p, 333, 217);
        p.num_disparities = 64, p.cross = 2, p.discontinuity = ai % 2, p.paths = ai ? 4 : 8;
        compare(&p, NULL, &mv, agg[ai]);
        unsetenv("STEREO_CUDA_AGG");
    }
    pair_free(&mv);
}

/* A negative minimum disparity (stereo.h): the right view shifted inside the stage, the maps
 * shifted back (disparity.h); every cost, SGM with 8 and 4 paths, BM, maps, the coarse-to-fine
 * mode, the post-filters and a temporal sequence, against the CPU reference. */
static void negative_min(int quick)
{
    pair pr;
    const int w = quick ? 97 : 331, h = quick ? 41 : 119;
    pair_random(&pr, w, h, STEREO_PIX_RGB24, 3, 5);
    stereo_map m[2];
    random_maps(m, w - 6, h - 3, w, h);
    const int ncost = (int)(sizeof gpu_costs / sizeof *gpu_costs);
    for (int ci = 0; ci < ncost; ci++)
        for (int mode = 0; mode < (quick ? 1 : 5); mode++) {
            stereo_params p;
            const int mapped = mode == 3;
            stereo_params_default(&p, mapped ? w - 6 : w, mapped ? h - 3 : h);
            p.cost = gpu_costs[ci];
            stereo_default_penalties(p.cost, p.rank_window, &p.p1, &p.p2);
            p.num_disparities = mode == 4 ? 64 : 32 + 16 * (ci % 2);
            p.min_disparity = -(1 + (ci * 7 + mode * 5) % 24);
            p.confidence = 1, p.lr_check = mode != 2, p.median = ci % 2;
            p.paths = mode == 1 ? 4 : 8;
            if (mode == 2)
                p.method = STEREO_METHOD_BM, p.block = 9;
            if (mode == 4)
                p.band = 32;
            if (ci % 2)
                p.post.speckle_size = 40, p.post.speckle_diff = 16, p.post.fill = 1;
            p.post.vote = (ci + mode) % 2;
            p.post.interp = (ci + mode / 2) % 2; /* mode 2 without the LR check: no right map */
            compare(&p, mapped ? m : NULL, &pr, "negative min");
        }
    free_maps(m);
    pair_free(&pr);
    stereo_params p;
    stereo_params_default(&p, w, h);
    p.num_disparities = 32, p.min_disparity = -12, p.confidence = 1; /* check_result reads it */
    p.post.temporal = 1, p.post.temporal_persist = 3, p.post.speckle_size = 20;
    post_filter_frames(w, h, &p, quick ? 4 : 10, "negative min sequence");
}

int main(int argc, char **argv)
{
    char why[256];
    stereo_params p;
    stereo_params_default(&p, 64, 32);
    p.num_disparities = 16, p.backend = STEREO_BACKEND_CUDA;
    stereo_stage *s;
    if (stereo_create(&p, NULL, &s, why, sizeof why) != STEREO_OK) {
        printf("no CUDA backend: %s\n0 passed, 1 failed\n", why);
        return 1;
    }
    stereo_destroy(s);
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    if (argc > 1 && !strcmp(argv[1], "--d512")) {
        d512_full_size();
    } else if (quick) {
        pair pr;
        pair_random(&pr, 67, 29, STEREO_PIX_RGB24, 3, 5);
        stereo_params q;
        stereo_params_default(&q, 67, 29);
        q.num_disparities = 48, q.confidence = 1;
        compare(&q, NULL, &pr, "quick");
        q.cost = STEREO_COST_CENSUS, q.paths = 4, q.median = 0;
        compare(&q, NULL, &pr, "quick census");
        q.cost = STEREO_COST_AD, q.paths = 8;
        stereo_default_penalties(q.cost, 9, &q.p1, &q.p2);
        compare(&q, NULL, &pr, "quick ad");
        q.cost = STEREO_COST_BT;
        stereo_default_penalties(q.cost, 9, &q.p1, &q.p2);
        compare(&q, NULL, &pr, "quick bt");
        q.cost = STEREO_COST_CENSUS;
        stereo_default_penalties(q.cost, 9, &q.p1, &q.p2);
        for (int r = 0; r < 8; r++)
            q.path_weight[r] = 1 + r % 3;
        compare(&q, NULL, &pr, "quick weights");
        for (int r = 0; r < 8; r++)
            q.path_weight[r] = 1;
        q.method = STEREO_METHOD_BM, q.block = 9, q.cost = STEREO_COST_CENSUS;
        compare(&q, NULL, &pr, "quick bm census");
        stereo_map m[2];
        random_maps(m, 60, 25, 67, 29);
        stereo_params_default(&q, 60, 25);
        q.num_disparities = 32;
        compare(&q, m, &pr, "quick maps");
        free_maps(m);
        pair_free(&pr);
        async_path(64, 40, 32);
        green_context(96, 40, 32);
        pair mv;
        static const int b3[] = {0, 16, -16};
        views_random(&mv, 67, 29, STEREO_PIX_GREY8, 1, 5, 3, b3);
        stereo_params_default(&q, 67, 29);
        q.num_disparities = 32, q.views = 3, q.baseline[2] = -16, q.confidence = 1;
        stereo_default_penalties(q.cost, 9, &q.p1, &q.p2);
        compare(&q, NULL, &mv, "quick views");
        pair_free(&mv);
        pair_random(&mv, 67, 29, STEREO_PIX_GREY8, 1, 5);
        stereo_params_default(&q, 67, 29);
        q.num_disparities = 16, q.cost = STEREO_COST_MI;
        stereo_default_penalties(q.cost, 9, &q.p1, &q.p2);
        compare(&q, NULL, &mv, "quick mi");
        pair_free(&mv);
        /* the sweep design's lane layouts (16 disparities a lane, 4 and 32 lanes a row) */
        pair_random(&mv, 540, 21, STEREO_PIX_GREY8, 0, 40);
        stereo_params_default(&q, 540, 21);
        q.num_disparities = 512, q.confidence = 1;
        compare(&q, NULL, &mv, "quick 512");
        q.num_disparities = 64, q.paths = 4;
        compare(&q, NULL, &mv, "quick 64");
        pair_free(&mv);
        coarse_to_fine(1);
        post_filters(1);
        adcensus_set(1);
        negative_min(1);
        mei_refinements(1);
    } else if (argc > 1 && !strcmp(argv[1], "--band")) {
        coarse_to_fine(0);
    } else if (argc > 1 && !strcmp(argv[1], "--adcensus")) {
        adcensus_set(0);
    } else {
        async_path(333, 217, 64);
        green_context(333, 217, 64);
        option_grid();
        awkward_sizes();
        wide_range();
        with_maps();
        block_matching();
        multi_view();
        mutual_information();
        coarse_to_fine(0);
        post_filters(0);
        adcensus_set(0);
        negative_min(0);
        mei_refinements(0);
        if (argc > 1)
            shared_scenes(argv[1]);
    }
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
