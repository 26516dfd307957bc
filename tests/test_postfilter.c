/* SPDX-License-Identifier: Apache-2.0 */
/* test_postfilter.c — stage 9, the post-filters (gpu/postfilter.h), on hand-made maps with known
 * answers (a speckle of exactly N - 1 and N pixels, steps of exactly M and M + 1, holes at the
 * borders, the temporal filter's smoothing, persistence and resets), the speckle filter against a
 * naive restatement of its definition on random maps, region voting's arms and votes on
 * hand-made images and against a naive restatement (every invalid pixel, every round) on random
 * ones (on one thread and on three), and the stage: stereo_process with the
 * filters equal to the filters applied to its unfiltered output, stereo_set_postfilter's
 * toggles and refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "postfilter.h"
#include "stereo.h"

#include "rng.h"

#define V(d) ((int16_t)(16 * (d)))
#define INV STEREO_INVALID

static int16_t *map_new(int w, int h)
{
    int16_t *m = malloc((size_t)w * h * sizeof *m);
    assert_non_null(m);
    for (int i = 0; i < w * h; i++)
        m[i] = INV;
    return m;
}

static void speckle(int16_t *m, uint8_t *conf, int w, int h, int size, int diff)
{
    int32_t *label = malloc((size_t)w * h * sizeof *label);
    int32_t *count = malloc((size_t)w * h * sizeof *count);
    postfilter_speckle(m, conf, w, h, size, diff, label, count);
    free(label);
    free(count);
}

static int count_valid(const int16_t *m, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += stereo_disparity_valid(m[i]);
    return c;
}

/* ---- 9a ----------------------------------------------------------------------------------- */

/* A blob of k pixels (a row-major run through a 5-wide box) on an invalid map: removed with
 * speckle_size k + 1, kept with k. */
static void test_speckle_size_boundary(void **state)
{
    (void)state;
    const int w = 20, h = 12;
    for (int k = 1; k <= 30; k++) {
        for (int size = k; size <= k + 1; size++) {
            int16_t *m = map_new(w, h);
            for (int i = 0; i < k; i++)
                m[(2 + i / 5) * w + 3 + i % 5] = V(7);
            uint8_t conf[20 * 12], blob[20 * 12] = {0};
            memset(conf, 9, sizeof conf);
            for (int i = 0; i < k; i++)
                blob[(2 + i / 5) * w + 3 + i % 5] = 1;
            speckle(m, conf, w, h, size, 0);
            assert_int_equal(count_valid(m, w * h), size == k ? k : 0);
            for (int i = 0; i < w * h; i++) /* zeroed where the filter invalidated */
                assert_int_equal(conf[i], blob[i] && size > k ? 0 : 9);
            free(m);
        }
    }
}

/* Steps of exactly M join two regions, M + 1 separate them; diagonal neighbours never join. */
static void test_speckle_step_boundary(void **state)
{
    (void)state;
    const int w = 10, h = 4;
    for (int M = 0; M <= 40; M += 8) {
        for (int step = M; step <= M + 1; step++) {
            /* a big region (columns 0..5, 24 pixels) and a small one beside it (columns 6..7) */
            int16_t *m = map_new(w, h);
            for (int y = 0; y < h; y++)
                for (int x = 0; x < 8; x++)
                    m[y * w + x] = (int16_t)(x < 6 ? 400 : 400 + step);
            speckle(m, NULL, w, h, 10, M);
            int small_left = 0;
            for (int y = 0; y < h; y++)
                small_left += (m[y * w + 6] >= 0) + (m[y * w + 7] >= 0);
            assert_int_equal(small_left, step == M ? 8 : 0);
            assert_int_equal(m[0], 400);
            free(m);
        }
    }
    /* a diagonal chain of single pixels is 5 regions of one */
    int16_t *m = map_new(w, h);
    for (int i = 0; i < 4; i++)
        m[i * w + i] = V(3);
    speckle(m, NULL, w, h, 2, 4095);
    assert_int_equal(count_valid(m, w * h), 0);
    free(m);
}

/* A one-pixel-wide spiral (the GPU's worst case for label propagation) is one region. */
static void test_speckle_spiral(void **state)
{
    (void)state;
    const int w = 41, h = 41;
    int16_t *m = map_new(w, h);
    int x0 = 0, y0 = 0, x1 = w - 1, y1 = h - 1, n = 0;
    while (x0 <= x1 && y0 <= y1) { /* walls of a square spiral, two pixels apart */
        for (int x = x0; x <= x1; x++)
            m[y0 * w + x] = V(5), n++;
        for (int y = y0 + 1; y <= y1; y++)
            m[y * w + x1] = V(5), n++;
        for (int x = x1 - 1; x >= x0 && y1 > y0; x--)
            m[y1 * w + x] = V(5), n++;
        for (int y = y1 - 1; y >= y0 + 2 && x1 > x0; y--)
            m[y * w + x0] = V(5), n++;
        if (y0 + 2 <= y1 && x0 + 1 <= x1)
            m[(y0 + 2) * w + x0 + 1] = V(5), n++;
        x0 += 2, y0 += 2, x1 -= 2, y1 -= 2;
    }
    int valid = count_valid(m, w * h);
    assert_int_equal(valid, n);
    int16_t *copy = malloc((size_t)w * h * sizeof *copy);
    memcpy(copy, m, (size_t)w * h * sizeof *copy);
    speckle(m, NULL, w, h, n, 0); /* one region of n: kept */
    assert_memory_equal(m, copy, (size_t)w * h * sizeof *m);
    speckle(m, NULL, w, h, n + 1, 0);
    assert_int_equal(count_valid(m, w * h), 0);
    free(copy);
    free(m);
}

/* The definition restated naively: labels by repeated min-propagation until nothing changes,
 * then each label's count. */
static void speckle_naive(int16_t *m, int w, int h, int size, int diff)
{
    int n = w * h;
    int *lab = malloc((size_t)n * sizeof *lab), *cnt = calloc((size_t)n, sizeof *cnt);
    for (int i = 0; i < n; i++)
        lab[i] = i;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            if (!stereo_disparity_valid(m[i]))
                continue;
            int x = i % w, y = i / w;
            int nb[4] = {x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, y > 0 ? i - w : -1,
                         y < h - 1 ? i + w : -1};
            for (int k = 0; k < 4; k++)
                if (nb[k] >= 0 && stereo_disparity_valid(m[nb[k]]) && abs(m[nb[k]] - m[i]) <= diff &&
                    lab[nb[k]] < lab[i])
                    lab[i] = lab[nb[k]], changed = 1;
        }
    }
    for (int i = 0; i < n; i++)
        if (stereo_disparity_valid(m[i]))
            cnt[lab[i]]++;
    for (int i = 0; i < n; i++)
        if (stereo_disparity_valid(m[i]) && cnt[lab[i]] < size)
            m[i] = INV;
    free(lab);
    free(cnt);
}

static void test_speckle_random_against_naive(void **state)
{
    (void)state;
    for (int it = 0; it < 72; it++) {
        /* the last 12 wide, with few levels: long runs along the rows, joined in many places */
        int w = it < 60 ? rnd_range(1, 57) : rnd_range(200, 333);
        int h = it < 60 ? rnd_range(1, 43) : rnd_range(2, 31), n = w * h;
        int levels = it < 60 ? rnd_range(1, 12) : rnd_range(1, 3), holes = rnd_range(0, 60);
        int16_t *a = map_new(w, h), *b = map_new(w, h);
        for (int i = 0; i < n; i++)
            a[i] = (int)rnd_range(0, 99) < holes ? INV : (int16_t)(rnd_range(0, levels) * 7);
        memcpy(b, a, (size_t)n * sizeof *a);
        int size = rnd_range(0, 40), diff = rnd_range(0, 15);
        speckle(a, NULL, w, h, size, diff);
        speckle_naive(b, w, h, size, diff);
        assert_memory_equal(a, b, (size_t)n * sizeof *a);
        free(a);
        free(b);
    }
}

/* ---- 9e ----------------------------------------------------------------------------------- */

static void test_fill_rows(void **state)
{
    (void)state;
    int16_t row[] = {INV, INV, V(5), INV, INV, V(3), INV, V(9), V(9), INV};
    const int16_t want[] = {V(5), V(5), V(5), V(3), V(3), V(3), V(3), V(9), V(9), V(9)};
    postfilter_fill_rows(row, 10, 0, 1);
    assert_memory_equal(row, want, sizeof want);
    int16_t empty[] = {INV, INV, INV};
    postfilter_fill_rows(empty, 3, 0, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(empty[i], INV);
    int16_t one[] = {INV, INV, 0, INV}; /* 0 is a valid disparity */
    postfilter_fill_rows(one, 4, 0, 1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(one[i], 0);
    /* rows are independent: only [y0, y1) changes */
    int16_t two[] = {INV, V(2), INV, V(4)};
    postfilter_fill_rows(two, 2, 1, 2);
    assert_int_equal(two[0], INV);
    assert_int_equal(two[2], V(4));
}

/* ---- 9d ----------------------------------------------------------------------------------- */

static void test_temporal_pixel_rules(void **state)
{
    (void)state;
    assert_int_equal(postfilter_blend(16, 8), 8);
    assert_int_equal(postfilter_blend(-16, 8), -8);
    assert_int_equal(postfilter_blend(1, 8), 1);   /* 0.5 rounds away from 0 */
    assert_int_equal(postfilter_blend(-1, 8), -1);
    assert_int_equal(postfilter_blend(1, 7), 0);
    assert_int_equal(postfilter_blend(5, 16), 5);
    int16_t prev = INV;
    uint8_t age = 0;
    /* alpha 8, delta 16, persist 2 */
    assert_int_equal(postfilter_temporal_pixel(V(10), &prev, &age, 8, 16, 2), V(10));
    assert_int_equal(postfilter_temporal_pixel(V(11), &prev, &age, 8, 16, 2), V(10) + 8);
    assert_int_equal(prev, V(10) + 8);
    /* a step of exactly delta is smoothed, delta + 1 is taken as it is */
    assert_int_equal(postfilter_temporal_pixel(V(10) + 8 + 16, &prev, &age, 8, 16, 2), V(11));
    assert_int_equal(postfilter_temporal_pixel(V(11) + 17, &prev, &age, 8, 16, 2), V(11) + 17);
    /* persistence: two invalid frames keep the value, the third does not */
    int16_t last = prev;
    assert_int_equal(postfilter_temporal_pixel(INV, &prev, &age, 8, 16, 2), last);
    assert_int_equal(age, 1);
    assert_int_equal(postfilter_temporal_pixel(INV, &prev, &age, 8, 16, 2), last);
    assert_int_equal(postfilter_temporal_pixel(INV, &prev, &age, 8, 16, 2), INV);
    assert_int_equal(prev, INV);
    /* a valid value after persisting starts again from the value */
    prev = V(4), age = 1;
    assert_int_equal(postfilter_temporal_pixel(V(4) + 4, &prev, &age, 16, 16, 2), V(4) + 4);
    assert_int_equal(age, 0);
    /* persist 0: invalid stays invalid */
    prev = V(4), age = 0;
    assert_int_equal(postfilter_temporal_pixel(INV, &prev, &age, 8, 16, 0), INV);
}

static void test_temporal_frames_and_reset(void **state)
{
    (void)state;
    enum { N = 10 };
    int16_t prev[N], d[N];
    uint8_t age[N];
    postfilter_temporal_clear(prev, age, N);
    for (int i = 0; i < N; i++)
        d[i] = V(20);
    assert_int_equal(postfilter_temporal(d, prev, age, N, 8, 16, 3), 0); /* empty state */
    for (int i = 0; i < N; i++)
        assert_int_equal(d[i], V(20));
    /* exactly half the pixels jump: no reset (more than half resets) */
    for (int i = 0; i < N; i++)
        d[i] = i < 5 ? V(40) : V(20) + 4;
    assert_int_equal(postfilter_temporal(d, prev, age, N, 8, 16, 3), 0);
    assert_int_equal(d[0], V(40));
    assert_int_equal(d[9], V(20) + 2);
    /* six of ten jump: reset, every value passes through unsmoothed */
    for (int i = 0; i < N; i++)
        d[i] = i < 6 ? V(60) : V(20) + 6;
    assert_int_equal(postfilter_temporal(d, prev, age, N, 8, 16, 3), 1);
    assert_int_equal(d[9], V(20) + 6);
    assert_int_equal(prev[9], V(20) + 6);
    /* the valid pixels fall to 4 of 10 (below half): reset, the holes stay holes */
    for (int i = 0; i < N; i++)
        d[i] = i < 4 ? V(60) : INV;
    assert_int_equal(postfilter_temporal(d, prev, age, N, 8, 16, 3), 1);
    assert_int_equal(d[5], INV);
    assert_int_equal(prev[5], INV);
    /* exactly half of the previous valid ones (2 of 4): persistence, no reset */
    for (int i = 0; i < N; i++)
        d[i] = i < 2 ? V(60) : INV;
    assert_int_equal(postfilter_temporal(d, prev, age, N, 8, 16, 3), 0);
    assert_int_equal(d[3], V(60));
    assert_int_equal(d[5], INV);
}

/* ---- negative disparities (a negative minimum, stereo.h) ----------------------------------- */

/* Every filter depends on differences and order of the values only: on random maps (with a
 * temporal sequence) whose values are shifted down by k pixels, many of them negative, -1/16
 * among them, each result is the unshifted one shifted alike. */
static void test_filters_take_negative_disparities(void **state)
{
    (void)state;
    for (int it = 0; it < 40; it++) {
        int w = rnd_range(2, 41), h = rnd_range(1, 23), n = w * h, k = rnd_range(1, 40);
        int holes = rnd_range(0, 50), size = rnd_range(0, 30), diff = rnd_range(0, 20);
        int16_t *a = map_new(w, h), *b = map_new(w, h), *pa = map_new(w, h), *pb = map_new(w, h);
        uint8_t *aa = calloc((size_t)n, 1), *ab = calloc((size_t)n, 1);
        postfilter_temporal_clear(pa, aa, (size_t)n);
        postfilter_temporal_clear(pb, ab, (size_t)n);
        for (int frame = 0; frame < 4; frame++) {
            for (int i = 0; i < n; i++) {
                a[i] = (int)rnd_range(0, 99) < holes ? INV : (int16_t)rnd_range(0, 16 * 48);
                b[i] = a[i] == INV ? INV : (int16_t)(a[i] - 16 * k);
            }
            if (frame == 0) /* -1/16 is a value like any other */
                a[0] = (int16_t)(16 * k - 1), b[0] = -1;
            speckle(a, NULL, w, h, size, diff);
            speckle(b, NULL, w, h, size, diff);
            postfilter_temporal(a, pa, aa, (size_t)n, 1 + it % 16, diff * 4, 2);
            postfilter_temporal(b, pb, ab, (size_t)n, 1 + it % 16, diff * 4, 2);
            postfilter_fill_rows(a, w, 0, h);
            postfilter_fill_rows(b, w, 0, h);
            for (int i = 0; i < n; i++)
                assert_int_equal(b[i], a[i] == INV ? INV : a[i] - 16 * k);
        }
        free(a), free(b), free(pa), free(pb), free(aa), free(ab);
    }
}

/* ---- settings ----------------------------------------------------------------------------- */

static void test_check(void **state)
{
    (void)state;
    stereo_postfilter f;
    char err[160];
    postfilter_default(&f);
    assert_int_equal(postfilter_check(&f, err, sizeof err), 0);
    struct {
        int *field, bad;
        const char *msg;
    } cases[] = {
        {&f.speckle_size, -1, "speckle size: -1 is outside 0..1048576"},
        {&f.speckle_diff, 4096, "speckle diff: 4096 is outside 0..4095"},
        {&f.fill, 2, "fill: 2 is outside 0..1"},
        {&f.temporal, -1, "temporal: -1 is outside 0..1"},
        {&f.temporal_alpha, 0, "temporal alpha: 0 is outside 1..16 (16ths)"},
        {&f.temporal_alpha, 17, "temporal alpha: 17 is outside 1..16 (16ths)"},
        {&f.temporal_delta, -3, "temporal delta: -3 is outside 0..4095"},
        {&f.temporal_persist, 256, "temporal persist: 256 is outside 0..255"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        postfilter_default(&f);
        *cases[i].field = cases[i].bad;
        assert_int_equal(postfilter_check(&f, err, sizeof err), -1);
        assert_string_equal(err, cases[i].msg);
        stereo_params p;
        stereo_params_default(&p, 128, 32);
        p.post = f;
        assert_int_equal(stereo_params_check(&p, err, sizeof err), STEREO_ERR_PARAM);
        assert_string_equal(err, cases[i].msg);
    }
}

/* ---- the stage ---------------------------------------------------------------------------- */

static void random_pair(int w, int h, uint8_t *l, uint8_t *r)
{
    for (int i = 0; i < w * h; i++)
        l[i] = (uint8_t)rnd();
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) /* disparity 6 on the left half, 11 on the right */
            r[y * w + x] = l[y * w + (x + (x < w / 2 ? 6 : 11) < w ? x + (x < w / 2 ? 6 : 11)
                                                                    : w - 1)];
}

/* stereo_process with the filters = the unfiltered output filtered by the reference, frame
 * after frame (the temporal state carried), and stereo_set_postfilter's toggles; with band > 0
 * (the coarse-to-fine mode, band.h) the coarse level matches unfiltered. */
static void stage_applies_the_filters(int band)
{
    const int w = 97, h = 61, n = w * h;
    uint8_t *l = malloc(n), *r = malloc(n);
    stereo_params p;
    stereo_params_default(&p, w, h);
    p.num_disparities = band ? 64 : 32;
    p.band = band;
    p.backend = STEREO_BACKEND_CPU;
    p.threads = 2;
    p.confidence = 1;
    stereo_params q = p;
    q.post = (stereo_postfilter){40, 16, 1, 1, 6, 24, 2, 1, 1};
    stereo_stage *plain = NULL, *filt = NULL;
    char err[256];
    assert_int_equal(stereo_create(&p, NULL, &plain, err, sizeof err), STEREO_OK);
    assert_int_equal(stereo_create(&q, NULL, &filt, err, sizeof err), STEREO_OK);
    postfilter_cpu pc;
    assert_int_equal(postfilter_cpu_init(&pc, w, h), 0);
    int16_t *want = malloc((size_t)n * sizeof *want);
    uint8_t *wconf = malloc(n);
    for (int frame = 0; frame < 6; frame++) {
        random_pair(w, h, l, r);
        if (frame == 3) { /* off, then on again: the state starts afresh */
            stereo_postfilter off = q.post;
            off.temporal = off.fill = off.speckle_size = 0;
            assert_int_equal(stereo_set_postfilter(filt, &off), STEREO_OK);
            assert_int_equal(stereo_get_params(filt)->post.fill, 0);
            assert_int_equal(stereo_set_postfilter(filt, &q.post), STEREO_OK);
            postfilter_temporal_clear(pc.prev, pc.age, (size_t)n);
        }
        stereo_image il = {l, w, h, (size_t)w, STEREO_PIX_GREY8};
        stereo_image ir = {r, w, h, (size_t)w, STEREO_PIX_GREY8};
        assert_int_equal(stereo_process(plain, &il, &ir), STEREO_OK);
        assert_int_equal(stereo_process(filt, &il, &ir), STEREO_OK);
        memcpy(want, stereo_disparity(plain), (size_t)n * sizeof *want);
        memcpy(wconf, stereo_confidence(plain), n);
        postfilter_apply(&q.post, &pc, want, wconf, stereo_disparity_right(plain), l,
                         p.min_disparity, p.num_disparities, NULL);
        assert_memory_equal(stereo_disparity(filt), want, (size_t)n * sizeof *want);
        assert_memory_equal(stereo_confidence(filt), wconf, n);
        assert_int_equal(count_valid(want, n), n); /* filled: dense */
    }
    /* refusals: out of range (the field named), NULL */
    stereo_postfilter bad = q.post;
    bad.temporal_alpha = 0;
    assert_int_equal(stereo_set_postfilter(filt, &bad), STEREO_ERR_PARAM);
    assert_string_equal(stereo_error(filt), "temporal alpha: 0 is outside 1..16 (16ths)");
    assert_int_equal(stereo_set_postfilter(filt, NULL), STEREO_ERR_PARAM);
    assert_int_equal(stereo_get_params(filt)->post.temporal_alpha, 6);
    postfilter_cpu_free(&pc);
    stereo_destroy(plain);
    stereo_destroy(filt);
    free(want);
    free(wconf);
    free(l);
    free(r);
}

static void test_stage_applies_the_filters(void **state)
{
    (void)state;
    stage_applies_the_filters(0);
}

static void test_stage_band_applies_the_filters(void **state)
{
    (void)state;
    stage_applies_the_filters(32);
}

/* The 640x480 CPU cost of each filter, printed for docs/results.md (not a pass condition). */
static void test_cost_640x480(void **state)
{
    (void)state;
    const int w = 640, h = 480, n = w * h;
    postfilter_cpu pc;
    assert_int_equal(postfilter_cpu_init(&pc, w, h), 0);
    int16_t *m = malloc((size_t)n * sizeof *m), *src = malloc((size_t)n * sizeof *src);
    /* a plausible map: smooth ramps with 10 % holes and 5 % outliers */
    for (int i = 0; i < n; i++) {
        int x = i % w, y = i / w, k = rnd_range(0, 99);
        src[i] = k < 10 ? INV : k < 15 ? (int16_t)rnd_range(0, 1023) : (int16_t)(x / 2 + y / 4);
    }
    /* at the defaults' settings; interp with no right map (every hole a mismatch: the costlier
     * class) */
    const char *names[4] = {"speckle", "temporal", "fill", "interp"};
    for (int f = 0; f < 4; f++) {
        stereo_postfilter s;
        postfilter_default(&s);
        s.speckle_size = f == 0 ? POSTFILTER_SPECKLE_ON : 0;
        s.temporal = f == 1;
        s.fill = f == 2;
        s.interp = f == 3;
        const int reps = 20;
        struct timespec t0, t1;
        double best = 1e9;
        for (int k = 0; k < reps; k++) {
            memcpy(m, src, (size_t)n * sizeof *m);
            clock_gettime(CLOCK_MONOTONIC, &t0);
            postfilter_apply(&s, &pc, m, NULL, NULL, NULL, 0, 0, NULL);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
            best = ms < best ? ms : best;
        }
        print_message("postfilter 640x480 %-10s %.3f ms (best of %d)\n", names[f], best, reps);
    }
    free(m);
    free(src);
    postfilter_cpu_free(&pc);
}

/* ---- 9b ----------------------------------------------------------------------------------- */

static uint32_t arms_at(const uint8_t *g, int w, int h, int x, int y)
{
    return postfilter_vote_arms(g, w, h, x, y);
}
#define ARM_L(a) ((int)((a) & 0xff))
#define ARM_R(a) ((int)((a) >> 8 & 0xff))
#define ARM_U(a) ((int)((a) >> 16 & 0xff))
#define ARM_D(a) ((int)((a) >> 24))

/* Arms: a flat image reaches L1 or the border; a step of T1 grey levels stops an arm, one of
 * T1 - 1 does not; beyond L2 a difference of T2 from the centre stops it, T2 - 1 does not. */
static void test_vote_arms(void **state)
{
    (void)state;
    const int w = 100, h = 80;
    uint8_t *g = malloc((size_t)w * h);
    memset(g, 100, (size_t)w * h);
    uint32_t a = arms_at(g, w, h, 50, 40);
    assert_int_equal(ARM_L(a), POSTFILTER_VOTE_L1);
    assert_int_equal(ARM_R(a), POSTFILTER_VOTE_L1);
    assert_int_equal(ARM_U(a), POSTFILTER_VOTE_L1);
    assert_int_equal(ARM_D(a), POSTFILTER_VOTE_L1);
    a = arms_at(g, w, h, 3, 1);
    assert_int_equal(ARM_L(a), 3);
    assert_int_equal(ARM_U(a), 1);
    a = arms_at(g, w, h, w - 1, h - 1);
    assert_int_equal(ARM_R(a), 0);
    assert_int_equal(ARM_D(a), 0);
    /* a step 5 px right of the centre: T1 stops the arm there; T1 - 1 does not, and the arm
     * goes on to L2, where that difference from the centre (above T2) stops it */
    for (int x = 55; x < w; x++)
        g[40 * w + x] = 100 + POSTFILTER_VOTE_T1;
    assert_int_equal(ARM_R(arms_at(g, w, h, 50, 40)), 4);
    for (int x = 55; x < w; x++)
        g[40 * w + x] = 100 + POSTFILTER_VOTE_T1 - 1;
    assert_int_equal(ARM_R(arms_at(g, w, h, 50, 40)), POSTFILTER_VOTE_L2);
    /* ... from the centre beyond L2: T2 stops it at L2, T2 - 1 does not */
    for (int x = 51; x < w; x++)
        g[40 * w + x] = 100 + POSTFILTER_VOTE_T2;
    assert_int_equal(ARM_R(arms_at(g, w, h, 50, 40)), POSTFILTER_VOTE_L2);
    for (int x = 51; x < w; x++)
        g[40 * w + x] = 100 + POSTFILTER_VOTE_T2 - 1;
    assert_int_equal(ARM_R(arms_at(g, w, h, 50, 40)), POSTFILTER_VOTE_L1);
    /* ramps: steps of 2 a pixel stay below T1 between neighbours but reach T1 from the centre
     * at (T1 + 1) / 2 pixels; steps of 1 reach T2 beyond L2 first */
    for (int x = 51; x < w; x++)
        g[40 * w + x] = (uint8_t)(100 - 2 * (x - 50));
    assert_int_equal(ARM_R(arms_at(g, w, h, 50, 40)), (POSTFILTER_VOTE_T1 + 1) / 2 - 1);
    for (int x = 51; x < w; x++)
        g[40 * w + x] = (uint8_t)(100 - (x - 50));
    assert_int_equal(ARM_R(arms_at(g, w, h, 50, 40)), POSTFILTER_VOTE_L2);
    /* a jump of T1 between neighbours stops the arm where both stay within T1 of the centre */
    for (int x = 51; x < w; x++)
        g[40 * w + x] = 100;
    g[40 * w + 51] = 100 - POSTFILTER_VOTE_T1 / 2;
    g[40 * w + 52] = 100 + POSTFILTER_VOTE_T1 / 2;
    assert_int_equal(ARM_R(arms_at(g, w, h, 50, 40)), 1);
    free(g);
}

/* The vote on a hand-made region: a flat 9 x 9 block of grey (its arms end at the block's
 * edge: the surround differs by T1), a hole in its middle (7, 7); the sampled pixels (both
 * coordinates odd: 24 besides the hole) take vals in row-major order, the pixels between them
 * (not sampled) the value `between`. */
static int16_t vote_block(int16_t *outside, int nvalid, const int16_t *vals, int16_t between,
                          int dmin, int ndisp)
{
    const int w = 15, h = 15;
    uint8_t *g = malloc((size_t)w * h);
    int16_t *m = map_new(w, h);
    memset(g, 10, (size_t)w * h);
    for (int y = 3; y < 12; y++)
        for (int x = 3; x < 12; x++)
            g[y * w + x] = 10 + 2 * POSTFILTER_VOTE_T1;
    int i = 0;
    for (int y = 3; y < 12; y++)
        for (int x = 3; x < 12; x++) {
            if (x == 7 && y == 7)
                continue;
            if (x % 2 && y % 2)
                m[y * w + x] = i < nvalid ? vals[i++] : INV;
            else
                m[y * w + x] = between;
        }
    postfilter_cpu pc;
    assert_int_equal(postfilter_cpu_init(&pc, w, h), 0);
    postfilter_vote(&pc, m, g, dmin, ndisp, NULL);
    int16_t out = m[7 * w + 7];
    if (outside)
        *outside = m[0];
    postfilter_cpu_free(&pc);
    free(m);
    free(g);
    return out;
}

static void test_vote_rule(void **state)
{
    (void)state;
    int16_t vals[24], outside;
    /* 20 sampled: 9 say 5, 6 say 7, 5 say 6 (9/20 > 0.4): 5, whatever the 56 pixels between
     * the samples say (they are not sampled) */
    for (int i = 0; i < 20; i++)
        vals[i] = i < 9 ? V(5) : i < 15 ? V(7) : V(6);
    assert_int_equal(vote_block(&outside, 20, vals, V(12), 0, 32), V(5));
    assert_int_equal(outside, INV); /* outside the block, no valid pixel: stays invalid */
    /* 8 of 20 (= 0.4, not above): stays invalid */
    for (int i = 0; i < 20; i++)
        vals[i] = i < 8 ? V(5) : i < 15 ? V(7) : V(6);
    assert_int_equal(vote_block(NULL, 20, vals, INV, 0, 32), INV);
    /* POSTFILTER_VOTE_MIN valid samples, all agreeing: not more than the least, stays invalid;
     * one more: filled */
    for (int i = 0; i < 24; i++)
        vals[i] = V(9);
    assert_int_equal(vote_block(NULL, POSTFILTER_VOTE_MIN, vals, INV, 0, 32), INV);
    assert_int_equal(vote_block(NULL, POSTFILTER_VOTE_MIN + 1, vals, INV, 0, 32), V(9));
    /* the level rounds half up (16ths: 5.5 -> 6, 5.4375 -> 5); a tie goes to the smaller */
    for (int i = 0; i < 20; i++)
        vals[i] = i < 10 ? (int16_t)(V(5) + 8) : (int16_t)(V(5) + 7);
    assert_int_equal(vote_block(NULL, 20, vals, INV, 0, 32), V(5));
    for (int i = 0; i < 20; i++)
        vals[i] = i < 13 ? (int16_t)(V(5) + 8) : V(3);
    assert_int_equal(vote_block(NULL, 20, vals, INV, 0, 32), V(6));
    /* a negative range: levels from dmin, values below it clamp to level 0 */
    for (int i = 0; i < 20; i++)
        vals[i] = i < 13 ? V(-12) : V(-3);
    assert_int_equal(vote_block(NULL, 20, vals, INV, -10, 32), V(-10));
    for (int i = 0; i < 20; i++)
        vals[i] = V(-4);
    assert_int_equal(vote_block(NULL, 20, vals, INV, -10, 32), V(-4));
}

/* The rule restated naively: every invalid pixel in every round, its region walked as
 * postfilter.h says, arms recomputed per pixel. */
static void vote_naive(int16_t *m, const uint8_t *g, int w, int h, int dmin, int ndisp)
{
    int16_t *next = malloc((size_t)w * h * sizeof *next);
    int *votes = calloc((size_t)ndisp + 1, sizeof *votes);
    for (int round = 0; round < POSTFILTER_VOTE_ROUNDS; round++) {
        memcpy(next, m, (size_t)w * h * sizeof *m);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                if (m[y * w + x] != INV)
                    continue;
                memset(votes, 0, ((size_t)ndisp + 1) * sizeof *votes);
                int S = 0;
                uint32_t a = postfilter_vote_arms(g, w, h, x, y);
                for (int yy = y - ARM_U(a); yy <= y + ARM_D(a); yy++) {
                    uint32_t b = postfilter_vote_arms(g, w, h, x, yy);
                    for (int xx = x - ARM_L(b); xx <= x + ARM_R(b); xx++) {
                        int v = m[yy * w + xx];
                        if (v == INV || abs(xx - x) % POSTFILTER_VOTE_STRIDE ||
                            abs(yy - y) % POSTFILTER_VOTE_STRIDE)
                            continue;
                        int k = (int)floor((v + 8) / 16.0) - dmin;
                        votes[k < 0 ? 0 : k > ndisp ? ndisp : k]++;
                        S++;
                    }
                }
                int best = 0;
                for (int k = 1; k <= ndisp; k++)
                    if (votes[k] > votes[best])
                        best = k;
                if (S > POSTFILTER_VOTE_MIN && votes[best] > 0.4 * S)
                    next[y * w + x] = (int16_t)(16 * (dmin + best));
            }
        memcpy(m, next, (size_t)w * h * sizeof *m);
    }
    free(next);
    free(votes);
}

/* Random piecewise-flat images (blocks of a few grey levels, noise of +-2) and maps (a level per
 * block plus noise, 30 % holes, some blocks mostly holes): postfilter_vote, with its skipping of
 * pixels no fill came near, against the naive rule. */
static void test_vote_random_against_naive(void **state)
{
    (void)state;
    long total = 0; /* the pixels filled over the trials: a map may fill none, not all of them */
    for (int trial = 0; trial < 12; trial++) {
        const int w = rnd_range(40, 120), h = rnd_range(30, 90), dmin = rnd_range(-20, 10);
        const int ndisp = 16 * rnd_range(1, 4), bs = rnd_range(4, 24);
        uint8_t *g = malloc((size_t)w * h);
        int16_t *a = map_new(w, h), *b = map_new(w, h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint32_t blk = (uint32_t)((x / bs) * 7919 + (y / bs) * 104729 + trial * 31);
                int grey = 40 + (int)(blk % 5) * 30 + rnd_range(-2, 2);
                g[y * w + x] = (uint8_t)grey;
                int hole = rnd_range(0, 99) < ((blk % 7) == 0 ? 85 : 30);
                int lvl = dmin + (int)(blk % (uint32_t)ndisp);
                a[y * w + x] = hole ? INV : (int16_t)(16 * lvl + rnd_range(-10, 10));
            }
        memcpy(b, a, (size_t)w * h * sizeof *a);
        int16_t *c = map_new(w, h);
        memcpy(c, a, (size_t)w * h * sizeof *a);
        postfilter_cpu pc;
        assert_int_equal(postfilter_cpu_init(&pc, w, h), 0);
        long filled = postfilter_vote(&pc, a, g, dmin, ndisp, NULL);
        vote_naive(b, g, w, h, dmin, ndisp);
        assert_memory_equal(a, b, (size_t)w * h * sizeof *a);
        total += filled;
        /* rows on 3 threads: the same map, the same count */
        parallel_pool *pool = NULL;
        assert_int_equal(parallel_create(3, &pool), 0);
        assert_int_equal(postfilter_vote(&pc, c, g, dmin, ndisp, pool), filled);
        assert_memory_equal(c, b, (size_t)w * h * sizeof *a);
        parallel_destroy(pool);
        postfilter_cpu_free(&pc);
        free(g);
        free(a);
        free(b);
        free(c);
    }
    assert_true(total > 0);
}

/* ---- 9c ----------------------------------------------------------------------------------- */

/* The 16 directions: distinct, counter-clockwise from (1, 0), opposite pairs 8 apart, steps of
 * at most 2. */
static void test_interp_directions(void **state)
{
    (void)state;
    double last = -1.0;
    for (int i = 0; i < POSTFILTER_INTERP_DIRS; i++) {
        int dx, dy, ox, oy;
        postfilter_interp_dir(i, &dx, &dy);
        postfilter_interp_dir((i + 8) % 16, &ox, &oy);
        assert_int_equal(ox, -dx);
        assert_int_equal(oy, -dy);
        assert_true(abs(dx) <= 2 && abs(dy) <= 2 && (dx || dy));
        double a = atan2(dy, dx);
        if (a < 0)
            a += 2 * M_PI;
        assert_true(a > last); /* strictly growing angle: distinct, in order */
        last = a;
    }
    int dx, dy;
    postfilter_interp_dir(0, &dx, &dy);
    assert_true(dx == 1 && dy == 0);
    postfilter_interp_dir(4, &dx, &dy);
    assert_true(dx == 0 && dy == 1);
}

/* One hole at (x, y) of a w x h map, the right map r (NULL: none): its value after 9c. */
static int16_t interp_one(int16_t *m, const int16_t *r, int w, int h, int x, int y)
{
    postfilter_cpu pc;
    assert_int_equal(postfilter_cpu_init(&pc, w, h), 0);
    postfilter_interp(&pc, m, r, NULL);
    postfilter_cpu_free(&pc);
    return m[y * w + x];
}

static void test_interp_rule(void **state)
{
    (void)state;
    const int w = 40, h = 21, n = w * h, y = 10;
    int16_t *m = map_new(w, h), *r = map_new(w, h);
    /* a mismatch (no right map): row y is a hole left of x = 20 (valid 8 from x = 14: reached)
     * and valid 5 right of it; every other row invalid */
    for (int x = 0; x < w; x++)
        m[y * w + x] = x >= 21 ? V(5) : x <= 14 ? V(8) : INV;
    /* found: direction 0 (5) and 8 (8, at k = 6): the lower median of {5, 8} is 5 */
    int16_t *c = map_new(w, h);
    memcpy(c, m, (size_t)n * sizeof *m);
    assert_int_equal(interp_one(c, NULL, w, h, 20, y), V(5));
    /* add values above and below in reach: column 20 rows y - 3 (9) and y + 5 (7), and the
     * diagonal (2, 1) at k = 2 (6): sorted {5, 6, 7, 8, 9}, median 7 */
    m[(y - 3) * w + 20] = V(9);
    m[(y + 5) * w + 20] = V(7);
    m[(y + 2) * w + 24] = V(6);
    memcpy(c, m, (size_t)n * sizeof *m);
    assert_int_equal(interp_one(c, NULL, w, h, 20, y), V(7));
    /* the same pixel as an occlusion (a right map in which no pixel names it): the smaller of
     * left (8) and right (5) along the row, whatever the other directions say */
    for (int x = 0; x < w; x++)
        r[y * w + x] = V(3); /* xr names xr + 3: x = 20 from xr = 17 */
    r[y * w + 17] = V(1);    /* now names 18: nobody names 20 */
    memcpy(c, m, (size_t)n * sizeof *m);
    assert_int_equal(interp_one(c, r, w, h, 20, y), V(5));
    /* ... and a mismatch again once a right pixel names it (xr = 16, 16 + 4 = 20; 4.4 rounds
     * to 4) */
    r[y * w + 16] = (int16_t)(V(4) + 7);
    memcpy(c, m, (size_t)n * sizeof *m);
    assert_int_equal(interp_one(c, r, w, h, 20, y), V(7));
    /* reach: a hole with its nearest valid pixels POSTFILTER_INTERP_REACH + 1 away in every
     * direction stays invalid; at the reach it is found */
    int16_t *e = map_new(w, h);
    const int R = POSTFILTER_INTERP_REACH;
    e[y * w + 3] = V(2);               /* k = R + 1 to the left of x = 3 + R + 1 */
    assert_int_equal(interp_one(e, NULL, w, h, 3 + R + 1, y), INV);
    e[y * w + 3] = INV;
    e[y * w + 4] = V(2);               /* k = R */
    assert_int_equal(interp_one(e, NULL, w, h, 4 + R, y), V(2));
    /* an occlusion at the left border: only the right side found */
    int16_t *b = map_new(w, h);
    b[y * w + 5] = V(11);
    assert_int_equal(interp_one(b, r, w, h, 0, y), V(11));
    /* negative values: the background is the smaller */
    int16_t *g = map_new(w, h);
    g[y * w + 9] = V(-4), g[y * w + 11] = V(-9);
    for (int x = 0; x < w; x++)
        r[y * w + x] = INV; /* no right pixel: an occlusion */
    assert_int_equal(interp_one(g, r, w, h, 10, y), V(-9));
    free(m), free(r), free(c), free(e), free(b), free(g);
}

/* The rule restated naively: each hole's class by searching the right row for a pixel naming
 * it, its values walked pixel by pixel along each direction. */
static int16_t interp_naive_pixel(const int16_t *m, const int16_t *r, int w, int h, int x, int y)
{
    int occluded = 0;
    if (r) {
        occluded = 1;
        for (int xr = 0; xr < w; xr++) {
            int v = r[y * w + xr];
            if (v != INV && xr + (int)floor((v + 8) / 16.0) == x)
                occluded = 0;
        }
    }
    static const int dirs[16][2] = {{1, 0},  {2, 1},   {1, 1},   {1, 2},   {0, 1},  {-1, 2},
                                    {-1, 1}, {-2, 1},  {-1, 0},  {-2, -1}, {-1, -1}, {-1, -2},
                                    {0, -1}, {1, -2},  {1, -1},  {2, -1}};
    int found[16], n = 0;
    for (int i = 0; i < 16; i++) {
        if (occluded && i != 0 && i != 8)
            continue;
        for (int k = 1; k <= POSTFILTER_INTERP_REACH; k++) {
            int qx = x + k * dirs[i][0], qy = y + k * dirs[i][1];
            if (qx < 0 || qx >= w || qy < 0 || qy >= h)
                break;
            if (m[qy * w + qx] != INV) {
                found[n++] = m[qy * w + qx];
                break;
            }
        }
    }
    if (!n)
        return INV;
    for (int i = 0; i < n; i++) /* sort */
        for (int j = i + 1; j < n; j++)
            if (found[j] < found[i]) {
                int t = found[i];
                found[i] = found[j];
                found[j] = t;
            }
    return (int16_t)(occluded ? found[0] : found[(n - 1) / 2]);
}

static void test_interp_random_against_naive(void **state)
{
    (void)state;
    for (int trial = 0; trial < 12; trial++) {
        const int w = rnd_range(20, 110), h = rnd_range(10, 70);
        const size_t n = (size_t)w * h;
        int16_t *a = map_new(w, h), *r = map_new(w, h), *want = map_new(w, h);
        const int holes = rnd_range(10, 90);
        for (size_t i = 0; i < n; i++) {
            a[i] = rnd_range(0, 99) < holes ? INV : (int16_t)rnd_range(-200, 700);
            r[i] = rnd_range(0, 99) < 30 ? INV : (int16_t)rnd_range(-200, 700);
        }
        const int16_t *right = trial % 4 == 3 ? NULL : r;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                want[y * w + x] = a[y * w + x] != INV
                                      ? a[y * w + x]
                                      : interp_naive_pixel(a, right, w, h, x, y);
        int16_t *b = map_new(w, h);
        memcpy(b, a, n * sizeof *a);
        postfilter_cpu pc;
        assert_int_equal(postfilter_cpu_init(&pc, w, h), 0);
        long filled = postfilter_interp(&pc, a, right, NULL);
        assert_memory_equal(a, want, n * sizeof *a);
        long expect = 0;
        for (size_t i = 0; i < n; i++)
            expect += b[i] == INV && want[i] != INV;
        assert_int_equal(filled, expect);
        /* rows on 3 threads: the same map, the same count */
        parallel_pool *pool = NULL;
        assert_int_equal(parallel_create(3, &pool), 0);
        assert_int_equal(postfilter_interp(&pc, b, right, pool), filled);
        assert_memory_equal(b, want, n * sizeof *a);
        parallel_destroy(pool);
        postfilter_cpu_free(&pc);
        free(a), free(b), free(r), free(want);
    }
}

int main(void)
{
    rng_seed(0x5eed0f17e2ull);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speckle_size_boundary),
        cmocka_unit_test(test_speckle_step_boundary),
        cmocka_unit_test(test_speckle_spiral),
        cmocka_unit_test(test_speckle_random_against_naive),
        cmocka_unit_test(test_fill_rows),
        cmocka_unit_test(test_vote_arms),
        cmocka_unit_test(test_vote_rule),
        cmocka_unit_test(test_vote_random_against_naive),
        cmocka_unit_test(test_interp_directions),
        cmocka_unit_test(test_interp_rule),
        cmocka_unit_test(test_interp_random_against_naive),
        cmocka_unit_test(test_temporal_pixel_rules),
        cmocka_unit_test(test_temporal_frames_and_reset),
        cmocka_unit_test(test_filters_take_negative_disparities),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_stage_applies_the_filters),
        cmocka_unit_test(test_stage_band_applies_the_filters),
        cmocka_unit_test(test_cost_640x480),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
