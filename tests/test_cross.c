/* SPDX-License-Identifier: Apache-2.0 */
/* test_cross.c — Mei et al. 2011's two refinements around SGM (gpu/cross.h): cross_mean's
 * rounded-half-up mean exact at every boundary of the quotient for every region size up to
 * 69 x 69; the arms on hand-made grey images (flat, steps of exactly T1 and T1 - 1, the
 * neighbour rule, the tighter T2 beyond L2, cap 0, the packing order); 4b's cross-based
 * aggregation (cross_arms_rows, cross_hsum_rows, cross_vsum_rows, on all rows and in row bands)
 * against a naive restatement of the header's rule (its own arms, each region built pixel by
 * pixel) on random images and volumes; 8b's adjustment (cross_adjust) on hand-made maps (the
 * edge of exactly CROSS_EDGE, the cheaper neighbour, ties, invalid pixels, the borders, the
 * levels' rounding and clamping with a nonzero dmin) and cross_adjust_rows against a naive
 * restatement on random maps; and the stage: stereo_params_check's refusals, the same maps on 1
 * and 3 threads and with the plain-C reference kernels, cross changing the map and keeping it
 * correct, discontinuity moving only edge pixels to a neighbour's value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cross.h"
#include "stereo.h"

#include "rng.h"

#define V(d) ((int16_t)(16 * (d)))
#define INV STEREO_INVALID

static int iabs(int a) { return a < 0 ? -a : a; }

/* ---- cross_mean --------------------------------------------------------------------------- */

static void check_mean(uint32_t s, uint32_t n)
{
    const uint32_t want = (s + n / 2) / n;
    const int got = cross_mean(s, n, 1.0f / (float)n);
    if (got != (int)want)
        fail_msg("cross_mean(%u, %u): %d, want %u", s, n, got, want);
}

/* Every n of a region (1 .. 69 * 69), every mean t 0..255: the sums at the quotient's
 * boundaries (the first and last sum of quotient t, the last of t - 1, t * n and t * n + n - 1),
 * up to 255 * n (the largest sum of n costs); every sum for the small n. */
static void test_mean_exact(void **state)
{
    (void)state;
    const uint32_t nmax = (2 * CROSS_ARM_MAX + 1) * (2 * CROSS_ARM_MAX + 1);
    assert_int_equal(nmax, 4761);
    for (uint32_t n = 1; n <= nmax; n++) {
        const uint32_t top = 255 * n;
        for (uint32_t t = 0; t <= 255; t++) {
            const int64_t tn = (int64_t)t * n, half = n / 2;
            const int64_t s[6] = {tn, tn + n - 1, tn - half, tn - half - 1, tn + n - 1 - half,
                                  tn + n - half};
            for (int i = 0; i < 6; i++)
                if (s[i] >= 0 && s[i] <= top)
                    check_mean((uint32_t)s[i], n);
        }
    }
    for (uint32_t n = 1; n <= 160; n++)
        for (uint32_t s = 0; s <= 255 * n; s++)
            check_mean(s, n);
    /* the rounding is half up: 3 / 2 -> 2, 5 / 2 -> 3, 1 / 3 -> 0, 2 / 3 -> 1 */
    assert_int_equal(cross_mean(3, 2, 0.5f), 2);
    assert_int_equal(cross_mean(5, 2, 0.5f), 3);
    assert_int_equal(cross_mean(1, 3, 1.0f / 3), 0);
    assert_int_equal(cross_mean(2, 3, 1.0f / 3), 1);
}

/* ---- the arms ----------------------------------------------------------------------------- */

static uint8_t *grey_new(int w, int h, int v)
{
    uint8_t *g = malloc((size_t)w * h);
    assert_non_null(g);
    memset(g, v, (size_t)w * h);
    return g;
}

static int imin(int a, int b) { return a < b ? a : b; }

/* A flat image: every arm reaches the border or the cap; cap 0: no arms; cross_arms_rows agrees
 * with cross_arms. */
static void test_arms_flat(void **state)
{
    (void)state;
    const int w = 50, h = 40;
    uint8_t *g = grey_new(w, h, 117);
    uint32_t *arms = malloc((size_t)w * h * sizeof *arms);
    const int caps[] = {0, 1, 5, 17, 18, 34};
    for (int c = 0; c < 6; c++) {
        const int cap = caps[c];
        memset(arms, 0xa5, (size_t)w * h * sizeof *arms);
        cross_arms_rows(g, w, h, cap, arms, 0, h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const uint32_t a = arms[y * w + x];
                assert_int_equal(a, cross_arms(g, w, h, x, y, cap));
                assert_int_equal(cross_left(a), imin(cap, x));
                assert_int_equal(cross_right(a), imin(cap, w - 1 - x));
                assert_int_equal(cross_up(a), imin(cap, y));
                assert_int_equal(cross_down(a), imin(cap, h - 1 - y));
                if (cap == 0)
                    assert_int_equal(a, 0);
            }
    }
    free(arms);
    free(g);
}

/* A grey step of exactly T1 stops an arm, T1 - 1 does not (cap L2, so T2 plays no part); a
 * neighbour step of T1 stops it though the centre is near; a ramp of small steps stops where it
 * reaches T1 from the centre. */
static void test_arms_steps(void **state)
{
    (void)state;
    const int w = 60, h = 40, cap = CROSS_ARM_L2;
    for (int step = CROSS_T1 - 1; step <= CROSS_T1; step++) {
        for (int sign = -1; sign <= 1; sign += 2) {
            /* columns x >= 30 and rows y >= 20 are 100 + sign * step */
            uint8_t *g = grey_new(w, h, 100);
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    if (x >= 30 || y >= 20)
                        g[y * w + x] = (uint8_t)(100 + sign * step);
            const int stops = step >= CROSS_T1;
            /* (25, 10): right arm reaches x = 29 (4) or the cap / border */
            assert_int_equal(cross_arm(g, w, h, 25, 10, 1, 0, cap), stops ? 4 : imin(cap, w - 26));
            assert_int_equal(cross_arm(g, w, h, 25, 10, -1, 0, cap), imin(cap, 25));
            /* (35, 10): left arm back to x = 30 (5) */
            assert_int_equal(cross_arm(g, w, h, 35, 10, -1, 0, cap), stops ? 5 : imin(cap, 35));
            /* (10, 15): down arm to y = 19 (4); (10, 25) up to y = 20 (5) */
            assert_int_equal(cross_arm(g, w, h, 10, 15, 0, 1, cap), stops ? 4 : imin(cap, h - 16));
            assert_int_equal(cross_arm(g, w, h, 10, 25, 0, -1, cap), stops ? 5 : imin(cap, 25));
            assert_int_equal(cross_arm(g, w, h, 10, 25, 0, 1, cap), h - 26);
            free(g);
        }
    }
    /* the neighbour rule: 100, then 115 (centre 15), then 90 (centre 10, neighbour 25) */
    uint8_t *g = grey_new(w, h, 100);
    g[5 * w + 11] = 115;
    g[5 * w + 12] = 90;
    assert_int_equal(cross_arm(g, w, h, 10, 5, 1, 0, cap), 1);
    g[5 * w + 12] = 96; /* neighbour 19, centre 4: goes on */
    assert_int_equal(cross_arm(g, w, h, 10, 5, 1, 0, cap), w - 11 < cap ? w - 11 : cap);
    /* exactly T1 from the centre, T1 / 2 from the neighbour: 100, 110, 120 stops after 1 */
    memset(g, 100, (size_t)w * h);
    g[5 * w + 11] = 110;
    g[5 * w + 12] = 120;
    assert_int_equal(cross_arm(g, w, h, 10, 5, 1, 0, cap), 1);
    g[5 * w + 12] = 119;
    assert_int_equal(cross_arm(g, w, h, 10, 5, 1, 0, cap), cap);
    g[5 * w + 9] = 80; /* leftwards: exactly T1 below at once */
    assert_int_equal(cross_arm(g, w, h, 10, 5, -1, 0, cap), 0);
    /* going up: 100, 119, 138: the second is 38 from the centre though 19 from its neighbour */
    memset(g, 100, (size_t)w * h);
    g[19 * w + 7] = 119;
    g[18 * w + 7] = 138;
    assert_int_equal(cross_arm(g, w, h, 7, 20, 0, -1, cap), 1);
    /* a ramp of +3 per pixel along row 30: from x = 10 (130) the right arm stops at x = 17
     * (151, 21 from the centre): 6 px; the left arm at x = 3 (109, 21): 6 px */
    for (int x = 0; x < w; x++)
        g[30 * w + x] = (uint8_t)imin(100 + 3 * x, 255);
    assert_int_equal(cross_arm(g, w, h, 10, 30, 1, 0, cap), 6);
    assert_int_equal(cross_arm(g, w, h, 10, 30, -1, 0, cap), 6);
    free(g);
}

/* Beyond L2 pixels the arm also stops at T2 from the centre (cap 34): a difference of T2 at
 * distance L2 + 1 stops it at L2, T2 - 1 does not; within L2 a difference of T2 does not stop it. */
static void test_arms_t2(void **state)
{
    (void)state;
    const int w = 80, h = 3, x0 = 40, y = 1;
    for (int diff = CROSS_T2 - 1; diff <= CROSS_T2; diff++) {
        for (int dir = -1; dir <= 1; dir += 2) {
            uint8_t *g = grey_new(w, h, 100);
            g[y * w + x0 + dir * (CROSS_ARM_L2 + 1)] = (uint8_t)(100 + diff);
            const int want = diff >= CROSS_T2 ? CROSS_ARM_L2 : CROSS_ARM_MAX;
            assert_int_equal(cross_arm(g, w, h, x0, y, dir, 0, CROSS_ARM_MAX), want);
            /* a cap below L2 + 1 never sees it */
            assert_int_equal(cross_arm(g, w, h, x0, y, dir, 0, CROSS_ARM_L2), CROSS_ARM_L2);
            free(g);
            /* the same difference at distance L2 does not stop the arm */
            g = grey_new(w, h, 100);
            g[y * w + x0 + dir * CROSS_ARM_L2] = (uint8_t)(100 - diff);
            assert_int_equal(cross_arm(g, w, h, x0, y, dir, 0, CROSS_ARM_MAX), CROSS_ARM_MAX);
            /* ... but one of T2 at distance 30 does */
            g[y * w + x0 + dir * 30] = (uint8_t)(100 + diff);
            assert_int_equal(cross_arm(g, w, h, x0, y, dir, 0, CROSS_ARM_MAX),
                             diff >= CROSS_T2 ? 29 : CROSS_ARM_MAX);
            free(g);
        }
    }
    /* vertically the same: a column of 80 */
    const int hh = 80, ww = 3;
    uint8_t *g = grey_new(ww, hh, 60);
    g[(40 + CROSS_ARM_L2 + 1) * ww + 1] = 60 - CROSS_T2;
    assert_int_equal(cross_arm(g, ww, hh, 1, 40, 0, 1, CROSS_ARM_MAX), CROSS_ARM_L2);
    assert_int_equal(cross_arm(g, ww, hh, 1, 40, 0, -1, CROSS_ARM_MAX), 34);
    free(g);
}

/* The four arms packed left | right << 8 | up << 16 | down << 24, on an image where they differ. */
static void test_arms_packing(void **state)
{
    (void)state;
    const int w = 40, h = 30, x0 = 20, y0 = 15;
    uint8_t *g = grey_new(w, h, 80);
    for (int y = 0; y < h; y++) {
        g[y * w + x0 - 3] = 200; /* left 2 */
        g[y * w + x0 + 5] = 200; /* right 4 */
    }
    for (int x = 0; x < w; x++) {
        if (x == x0 - 3 || x == x0 + 5)
            continue;
        g[(y0 - 6) * w + x] = 10; /* up 5 */
        g[(y0 + 7) * w + x] = 10; /* down 6 */
    }
    const uint32_t a = cross_arms(g, w, h, x0, y0, 34);
    assert_int_equal(a, 2u | 4u << 8 | 5u << 16 | 6u << 24);
    assert_int_equal(cross_left(a), 2);
    assert_int_equal(cross_right(a), 4);
    assert_int_equal(cross_up(a), 5);
    assert_int_equal(cross_down(a), 6);
    assert_int_equal(cross_arms(g, w, h, x0, y0, 3), 2u | 3u << 8 | 3u << 16 | 3u << 24);
    uint32_t *arms = calloc((size_t)w * h, sizeof *arms);
    cross_arms_rows(g, w, h, 34, arms, y0, y0 + 1);
    assert_int_equal(arms[y0 * w + x0], a);
    assert_int_equal(arms[(y0 - 1) * w + x0], 0); /* rows outside [y0, y1) untouched */
    assert_int_equal(arms[(y0 + 1) * w + x0], 0);
    free(arms);
    free(g);
}

/* ---- 4b. aggregation against a naive restatement ------------------------------------------ */

/* The header's arm rule, restated: q_k = p + k e for k = 1..cap, while in the image and within
 * T1 of p and of q_{k-1}, and beyond L2 within T2 of p. */
static int naive_arm(const uint8_t *g, int w, int h, int x, int y, int dx, int dy, int cap)
{
    const int c = g[y * w + x];
    int len = 0;
    for (int k = 1; k <= cap; k++) {
        const int qx = x + k * dx, qy = y + k * dy;
        if (qx < 0 || qy < 0 || qx >= w || qy >= h)
            break;
        const int q = g[qy * w + qx], before = g[(qy - dy) * w + qx - dx];
        if (iabs(q - c) >= CROSS_T1 || iabs(q - before) >= CROSS_T1)
            break;
        if (k > CROSS_ARM_L2 && iabs(q - c) >= CROSS_T2)
            break;
        len = k;
    }
    return len;
}

typedef struct {
    int l, r, u, d;
} arms4;

/* The grey image: 0 flat blocks with a few levels and a little noise (big regions), 1 noise,
 * 2 a gentle ramp with noise (arms that end on T1 from the centre or on T2) */
static void random_grey(uint8_t *g, int w, int h, int kind)
{
    const int bw = rnd_range(3, 16), bh = rnd_range(3, 12);
    const int gx = rnd_range(1, 4), gy = rnd_range(0, 3);
    int lev[64];
    for (int i = 0; i < 64; i++)
        lev[i] = rnd_range(0, 4) * 40 + 30;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int v;
            if (kind == 0)
                v = lev[(y / bh * 8 + x / bw) % 64] + rnd_range(-2, 2);
            else if (kind == 1)
                v = (int)(rnd() % 256);
            else
                v = 40 + gx * x + gy * y + rnd_range(-2, 2);
            g[y * w + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

static void aggregate_bands(const uint8_t *g, int w, int h, int D, int cap, uint8_t *cost,
                            uint32_t *arms, uint16_t *H, int split)
{
    const int y0[2] = {0, split}, y1[2] = {split, h};
    /* the bands in either order: the upper first, then the lower first */
    for (int b = 0; b < 2; b++)
        cross_arms_rows(g, w, h, cap, arms, y0[b], y1[b]);
    for (int b = 1; b >= 0; b--)
        cross_hsum_rows(cost, arms, w, D, H, y0[b], y1[b]);
    for (int b = 0; b < 2; b++)
        cross_vsum_rows(H, arms, w, D, cost, y0[b], y1[b]);
}

static void test_aggregate_random_against_naive(void **state)
{
    (void)state;
    static const int maxes[] = {62, 63, 80, 224}, caps[] = {1, 2, 3, 5, 34};
    long big_regions = 0;
    for (int it = 0; it < 60; it++) {
        const int w = rnd_range(1, 40), h = rnd_range(1, 30), D = 4 * rnd_range(1, 8);
        const int max = maxes[rnd() % 4], cap = caps[rnd() % 5], kind = it % 3;
        const size_t n = (size_t)w * h;
        uint8_t *g = malloc(n), *cost = malloc(n * D), *orig = malloc(n * D),
                *band = malloc(n * D), *want = malloc(n * D);
        uint32_t *arms = malloc(n * sizeof *arms);
        uint16_t *H = malloc(n * D * sizeof *H);
        arms4 *na = malloc(n * sizeof *na);
        int *list = malloc(n * sizeof *list);
        uint64_t *sum = malloc((size_t)D * sizeof *sum);
        random_grey(g, w, h, kind);
        for (size_t i = 0; i < n * D; i++)
            orig[i] = (uint8_t)rnd_range(0, max);
        /* the naive arms, and the region of each pixel as a list of pixels */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                na[y * w + x] = (arms4){naive_arm(g, w, h, x, y, -1, 0, cap),
                                        naive_arm(g, w, h, x, y, 1, 0, cap),
                                        naive_arm(g, w, h, x, y, 0, -1, cap),
                                        naive_arm(g, w, h, x, y, 0, 1, cap)};
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const arms4 a = na[y * w + x];
                int cnt = 0;
                for (int qy = y - a.u; qy <= y + a.d; qy++) {
                    const arms4 b = na[qy * w + x];
                    for (int qx = x - b.l; qx <= x + b.r; qx++)
                        list[cnt++] = qy * w + qx;
                }
                assert_true(cnt >= 1);
                big_regions += cnt >= 100;
                for (int k = 0; k < D; k++)
                    sum[k] = 0;
                for (int j = 0; j < cnt; j++)
                    for (int k = 0; k < D; k++)
                        sum[k] += orig[(size_t)list[j] * D + k];
                for (int k = 0; k < D; k++)
                    want[(size_t)(y * w + x) * D + k] =
                        (uint8_t)((sum[k] + (uint64_t)cnt / 2) / (uint64_t)cnt);
            }
        /* all rows at once */
        memcpy(cost, orig, n * D);
        cross_arms_rows(g, w, h, cap, arms, 0, h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const uint32_t a = arms[y * w + x];
                const arms4 b = na[y * w + x];
                if (cross_left(a) != b.l || cross_right(a) != b.r || cross_up(a) != b.u ||
                    cross_down(a) != b.d)
                    fail_msg("arms of (%d, %d) in %dx%d, cap %d: %d %d %d %d, want %d %d %d %d",
                             x, y, w, h, cap, cross_left(a), cross_right(a), cross_up(a),
                             cross_down(a), b.l, b.r, b.u, b.d);
            }
        cross_hsum_rows(cost, arms, w, D, H, 0, h);
        cross_vsum_rows(H, arms, w, D, cost, 0, h);
        for (size_t i = 0; i < n * D; i++) {
            if (cost[i] != want[i])
                fail_msg("%dx%d D %d cap %d max %d: voxel (%d, %d, %d): %d, want %d", w, h, D,
                         cap, max, (int)(i / D % w), (int)(i / D / w), (int)(i % D), cost[i],
                         want[i]);
            assert_true(cost[i] <= max);
        }
        /* two row bands per pass */
        memcpy(band, orig, n * D);
        memset(arms, 0x5a, n * sizeof *arms);
        memset(H, 0x5a, n * D * sizeof *H);
        aggregate_bands(g, w, h, D, cap, band, arms, H, h / 2);
        assert_memory_equal(band, want, n * D);
        if (h > 2) {
            memcpy(band, orig, n * D);
            memset(H, 0xff, n * D * sizeof *H);
            aggregate_bands(g, w, h, D, cap, band, arms, H, rnd_range(1, h - 1));
            assert_memory_equal(band, want, n * D);
        }
        free(g), free(cost), free(orig), free(band), free(want), free(arms), free(H), free(na);
        free(list), free(sum);
    }
    assert_true(big_regions > 1000); /* the flat images made big regions */
}

/* Hand-made: a 5x3 flat image with cap 1: the region of (2, 1) is the 3x3 box around it, that of
 * a corner a 2x2 box, that of (0, 1) a 2x3 box. */
static void test_aggregate_hand(void **state)
{
    (void)state;
    const int w = 5, h = 3, D = 4, n = w * h;
    uint8_t g[15], cost[15 * 4];
    uint32_t arms[15];
    uint16_t H[15 * 4];
    memset(g, 50, sizeof g);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < D; k++)
            cost[i * D + k] = (uint8_t)(i * (k + 1));
    cross_arms_rows(g, w, h, 1, arms, 0, h);
    cross_hsum_rows(cost, arms, w, D, H, 0, h);
    /* H at (2, 1), k = 0: 6 + 7 + 8 */
    assert_int_equal(H[7 * D], 21);
    cross_vsum_rows(H, arms, w, D, cost, 0, h);
    /* (2, 1): the 3x3 box around pixel 7, mean 7 (k + 1) */
    for (int k = 0; k < D; k++)
        assert_int_equal(cost[7 * D + k], 7 * (k + 1));
    /* (0, 0): pixels 0, 1, 5, 6: sum 12 (k + 1), n 4: 3 (k + 1) */
    for (int k = 0; k < D; k++)
        assert_int_equal(cost[k], 3 * (k + 1));
    /* (4, 2): pixels 8, 9, 13, 14 = 44 (k + 1) / 4 = 11 (k + 1) */
    for (int k = 0; k < D; k++)
        assert_int_equal(cost[14 * D + k], 11 * (k + 1));
    /* (4, 0): pixels 3, 4, 8, 9: 24 / 4 = 6; (0, 1): 0, 1, 5, 6, 10, 11: 33 / 6 = 5.5 -> 6 */
    assert_int_equal(cost[4 * D], 6);
    assert_int_equal(cost[5 * D], 6);
    assert_int_equal(cost[5 * D + 1], 11);
}

/* ---- 8b. the adjustment ------------------------------------------------------------------- */

/* cross_adjust at (x, 1) of a w x 3 map whose middle row is row[], the costs c[D] at that
 * pixel (the other pixels' costs unused) */
static int16_t adjust_at(const int16_t *row, int w, int x, const uint8_t *c, int dmin, int D)
{
    int16_t m[3 * 16];
    assert_true(w <= 16);
    for (int i = 0; i < 3 * w; i++) /* rows 0 and 2: a wall of edges the borders must not see */
        m[i] = (int16_t)(i % 2 ? V(dmin) : V(dmin + D - 1));
    memcpy(m + w, row, (size_t)w * sizeof *m);
    uint8_t *cost = malloc((size_t)3 * w * D);
    memset(cost, 200, (size_t)3 * w * D);
    memcpy(cost + (size_t)(w + x) * D, c, (size_t)D);
    const int16_t r = cross_adjust(m, cost + (size_t)(w + x) * D, w, x, (size_t)(w + x), dmin, D);
    free(cost);
    return r;
}

/* the level as the header states it, by floor division rather than a shift */
static int naive_level(int v, int dmin, int D)
{
    const int a = v + 8, fl = a >= 0 ? a / 16 : -((-a + 15) / 16);
    const int k = fl - dmin;
    return k < 0 ? 0 : k > D - 1 ? D - 1 : k;
}

static void test_adjust_hand(void **state)
{
    (void)state;
    enum { D = 8, W = 5 };
    uint8_t c[D];
    /* dmin 0; p = (2, 1): left 16 + 5 (level 1), p 32 (level 2), right 53 (level 3, 32 away) */
    const int16_t l = 16 + 5, v = 32;
    int16_t edge[W] = {0, l, v, (int16_t)(l + 32), 0}, flat[W] = {0, l, v, (int16_t)(l + 31), 0};
    memset(c, 20, D);
    c[1] = 10, c[2] = 20, c[3] = 30; /* left cheaper: its whole value, subpixel included */
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), l);
    assert_int_equal(adjust_at(flat, W, 2, c, 0, D), v); /* 31 apart: no edge */
    c[1] = 30, c[3] = 10; /* right cheaper */
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), l + 32);
    assert_int_equal(adjust_at(flat, W, 2, c, 0, D), v);
    c[1] = 10, c[3] = 5; /* both cheaper: the cheaper */
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), l + 32);
    c[1] = 5, c[3] = 10;
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), l);
    c[1] = 10, c[3] = 10; /* both cheaper, a tie: the left */
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), l);
    c[1] = 20, c[3] = 20; /* neither strictly cheaper */
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), v);
    c[1] = 20, c[3] = 21;
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), v);
    c[1] = 21, c[3] = 20;
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), v);
    /* the right neighbour on the left: the edge is |l - r|, either way round */
    int16_t rev[W] = {0, (int16_t)(l + 32), v, l, 0};
    c[1] = 10, c[3] = 30;
    assert_int_equal(adjust_at(rev, W, 2, c, 0, D), l); /* now the right one */
    c[1] = 30, c[3] = 10;
    assert_int_equal(adjust_at(rev, W, 2, c, 0, D), l + 32);
    /* invalid p, invalid neighbours: unchanged */
    c[1] = 0, c[3] = 0, c[2] = 255;
    int16_t inv_p[W] = {0, l, INV, (int16_t)(l + 32), 0};
    assert_int_equal(adjust_at(inv_p, W, 2, c, 0, D), INV);
    int16_t inv_l[W] = {0, INV, v, (int16_t)(l + 32), 0};
    assert_int_equal(adjust_at(inv_l, W, 2, c, 0, D), v);
    int16_t inv_r[W] = {0, l, v, INV, 0};
    assert_int_equal(adjust_at(inv_r, W, 2, c, 0, D), v);
    assert_int_equal(adjust_at(edge, W, 2, c, 0, D), l); /* the same costs with both valid */
    /* the borders: x = 0 and x = w - 1 unchanged, though the rows around make an edge there */
    int16_t border[W] = {V(2), V(0), V(5), V(3), V(2)};
    memset(c, 0, D);
    c[2] = 100;
    assert_int_equal(adjust_at(border, W, 0, c, 0, D), V(2));
    assert_int_equal(adjust_at(border, W, W - 1, c, 0, D), V(2));
    memset(c, 20, D);
    c[0] = 30, c[2] = 10; /* x = 1: V(2) | V(0) | V(5), an edge: moved left */
    assert_int_equal(adjust_at(border, W, 1, c, 0, D), V(2));
    /* negative values with dmin -5: -53 (-3.3 px: level 2), -1 px (level 4), 2 px (level 7) */
    int16_t neg[W] = {0, -53, V(-1), V(2), 0};
    memset(c, 20, D);
    c[1] = 3; /* -53 + 8 = -45 -> floor -3 -> level 2: level 1 is not its */
    assert_int_equal(adjust_at(neg, W, 2, c, -5, D), V(-1));
    c[1] = 20, c[2] = 3;
    assert_int_equal(adjust_at(neg, W, 2, c, -5, D), -53);
    c[2] = 20, c[7] = 3; /* 2 px is level 7 */
    assert_int_equal(adjust_at(neg, W, 2, c, -5, D), V(2));
}

/* Which level of p's costs cross_adjust reads for a left neighbour of value lv: p and its right
 * neighbour on level vl's value, each level L made the only cheap one in turn; the left value
 * is taken exactly when L is its level. -1 when never, -2 when more than once. */
static int probe_level(int16_t lv, int16_t pv, int dmin, int D)
{
    int16_t row[5] = {0, lv, pv, (int16_t)(pv + 1), 0};
    assert_true(iabs(lv - pv - 1) >= CROSS_EDGE);
    int found = -1;
    for (int L = 0; L < D; L++) {
        uint8_t c[64];
        memset(c, 20, (size_t)D);
        c[L] = 10;
        if (adjust_at(row, 5, 2, c, dmin, D) == lv)
            found = found == -1 ? L : -2;
    }
    return found;
}

/* The levels, dmin 5, D 8: ((v + 8) >> 4) - 5 clamped to 0..7; 16 d + 8 rounds up, 16 d + 7
 * down; below dmin level 0, from dmin + D on level 7. */
static void test_adjust_levels(void **state)
{
    (void)state;
    const int dmin = 5, D = 8;
    static const struct {
        int16_t v;
        int level;
    } low[] = { /* p at level 6 (176) */
        {-32767, 0}, {-100, 0}, {0, 0}, {48, 0}, {71, 0}, {72, 0}, {87, 0}, {88, 1},
        {103, 1}, {104, 2}, {16 * 7 + 7, 2}, {16 * 7 + 8, 3}, {16 * 8 + 8, 4},
    }, high[] = { /* p at level 1 (96) */
        {16 * 10 + 7, 5}, {16 * 10 + 8, 6}, {16 * 11 + 7, 6}, {16 * 11 + 8, 7}, {16 * 12, 7},
        {16 * 12 + 7, 7}, {16 * 12 + 8, 7}, {16 * 13, 7}, {16 * 40 + 3, 7}, {32767, 7},
    };
    for (size_t i = 0; i < sizeof low / sizeof *low; i++) {
        assert_int_equal(naive_level(low[i].v, dmin, D), low[i].level);
        assert_int_equal(cross_level(low[i].v, dmin, D), low[i].level);
        assert_int_equal(probe_level(low[i].v, 176, dmin, D), low[i].level);
    }
    for (size_t i = 0; i < sizeof high / sizeof *high; i++) {
        assert_int_equal(naive_level(high[i].v, dmin, D), high[i].level);
        assert_int_equal(cross_level(high[i].v, dmin, D), high[i].level);
        assert_int_equal(probe_level(high[i].v, 96, dmin, D), high[i].level);
    }
    /* dmin 0 the same values land elsewhere: 104 is level 7 then (not 2) */
    assert_int_equal(probe_level(104, 176 + 64, 0, 16), 7);
    assert_int_equal(probe_level(103, 176 + 64, 0, 16), 6);
}

/* The rule restated per pixel, by the naive level */
static int16_t naive_adjust(const int16_t *m, const uint8_t *cost, int w, int x, int y, int dmin,
                            int D)
{
    const size_t i = (size_t)y * w + x;
    const int v = m[i];
    if (v == INV || x == 0 || x == w - 1)
        return (int16_t)v;
    const int l = m[i - 1], r = m[i + 1];
    if (l == INV || r == INV || iabs(l - r) < CROSS_EDGE)
        return (int16_t)v;
    const uint8_t *c = cost + i * D;
    const int cv = c[naive_level(v, dmin, D)], cl = c[naive_level(l, dmin, D)],
              cr = c[naive_level(r, dmin, D)];
    const int lcheap = cl < cv, rcheap = cr < cv;
    if (lcheap && rcheap)
        return (int16_t)(cr < cl ? r : l);
    if (lcheap)
        return (int16_t)l;
    if (rcheap)
        return (int16_t)r;
    return (int16_t)v;
}

static void test_adjust_rows_random(void **state)
{
    (void)state;
    long moved = 0;
    for (int it = 0; it < 200; it++) {
        const int w = rnd_range(1, 40), h = rnd_range(1, 20), D = 8 * rnd_range(1, 4);
        const int dmin = rnd_range(-20, 20), n = w * h;
        int16_t *in = malloc((size_t)n * sizeof *in), *copy = malloc((size_t)n * sizeof *in);
        int16_t *out = malloc((size_t)n * sizeof *out), *out2 = malloc((size_t)n * sizeof *out);
        uint8_t *cost = malloc((size_t)n * D);
        for (int i = 0; i < n; i++) {
            const int r = rnd_range(0, 9);
            if (r == 0)
                in[i] = INV;
            else if (r <= 2 && i > 0 && in[i - 1] != INV)
                in[i] = (int16_t)(in[i - 1] + rnd_range(-33, 33));
            else
                in[i] = (int16_t)(16 * rnd_range(dmin - 3, dmin + D + 2) + rnd_range(0, 15));
        }
        for (int i = 0; i < n * D; i++)
            cost[i] = (uint8_t)rnd_range(0, 4);
        memcpy(copy, in, (size_t)n * sizeof *in);
        /* out holds values that would change the result were it read */
        for (int i = 0; i < n; i++)
            out[i] = (int16_t)(i % 3 == 0 ? INV : 16 * (dmin + (i % 2 ? 0 : D - 1)));
        const int split = rnd_range(0, h);
        cross_adjust_rows(in, cost, w, dmin, D, out, split, h);
        cross_adjust_rows(in, cost, w, dmin, D, out, 0, split);
        for (int i = 0; i < n; i++)
            out2[i] = (int16_t)rnd();
        cross_adjust_rows(in, cost, w, dmin, D, out2, 0, h);
        assert_memory_equal(in, copy, (size_t)n * sizeof *in);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const int16_t want = naive_adjust(in, cost, w, x, y, dmin, D);
                if (out[y * w + x] != want || out2[y * w + x] != want)
                    fail_msg("%dx%d dmin %d D %d (%d, %d): %d / %d, want %d (in %d)", w, h, dmin,
                             D, x, y, out[y * w + x], out2[y * w + x], want, in[y * w + x]);
                moved += want != in[y * w + x];
            }
        free(in), free(copy), free(out), free(out2), free(cost);
    }
    assert_true(moved > 100);
}

/* ---- the stage ---------------------------------------------------------------------------- */

enum { SW = 64, SH = 48, SD = 32 };

/* A textured pair: a background at disparity db and a rectangle (columns 24..47 of the left
 * view, rows 10..37) at df, each a texture of small blocks of moderate contrast (arms of a few
 * pixels), the right view with a little noise. truth: the left view's disparity per pixel. */
static void scene(uint8_t *l, uint8_t *r, int *truth, int db, int df)
{
    enum { TW = SW + 64, OFF = 32 };
    static uint8_t bg[SH][TW], fg[SH][TW];
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < TW; x++) {
            bg[y][x] = (uint8_t)rnd_range(20, 235);
            fg[y][x] = (uint8_t)rnd_range(20, 235);
        }
    for (int y = 0; y < SH; y++) /* blocks of 2 px along x, with a little noise */
        for (int x = 1; x < TW; x += 2) {
            bg[y][x] = (uint8_t)(bg[y][x - 1] + rnd_range(-4, 4));
            fg[y][x] = (uint8_t)(fg[y][x - 1] + rnd_range(-4, 4));
        }
    const int fx0 = 24, fx1 = 48, fy0 = 10, fy1 = 38;
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < SW; x++) {
            const int in_fg = y >= fy0 && y < fy1 && x >= fx0 && x < fx1;
            l[y * SW + x] = in_fg ? fg[y][x + OFF] : bg[y][x + OFF];
            truth[y * SW + x] = in_fg ? df : db;
            /* right pixel x sees the left's x + d: the foreground where x + df is in it */
            const int xf = x + df, fgr = y >= fy0 && y < fy1 && xf >= fx0 && xf < fx1;
            const int v = (fgr ? fg[y][xf + OFF] : bg[y][x + db + OFF]) + rnd_range(-2, 2);
            r[y * SW + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

static void base_params(stereo_params *p, int dmin)
{
    stereo_params_default(p, SW, SH);
    p->num_disparities = SD;
    p->min_disparity = dmin;
    p->backend = STEREO_BACKEND_CPU;
    p->threads = 1;
}

/* The left and right maps of one stage on the pair, into dl / dr (SW * SH each) */
static void run_stage(const stereo_params *p, const char *kernels, const uint8_t *l,
                      const uint8_t *r, int16_t *dl, int16_t *dr)
{
    if (kernels)
        setenv("STEREO_CPU_KERNELS", kernels, 1);
    else
        unsetenv("STEREO_CPU_KERNELS");
    stereo_stage *s = NULL;
    char err[256];
    const stereo_status st = stereo_create(p, NULL, &s, err, sizeof err);
    unsetenv("STEREO_CPU_KERNELS");
    if (st != STEREO_OK)
        fail_msg("stereo_create: %s", err);
    stereo_image il = {l, SW, SH, SW, STEREO_PIX_GREY8}, ir = {r, SW, SH, SW, STEREO_PIX_GREY8};
    if (stereo_process(s, &il, &ir) != STEREO_OK)
        fail_msg("stereo_process: %s", stereo_error(s));
    memcpy(dl, stereo_disparity(s), (size_t)SW * SH * sizeof *dl);
    if (dr)
        memcpy(dr, stereo_disparity_right(s), (size_t)SW * SH * sizeof *dr);
    stereo_destroy(s);
}

static void refused(const stereo_params *p, const char *name)
{
    char err[256] = "";
    assert_int_equal(stereo_params_check(p, err, sizeof err), STEREO_ERR_PARAM);
    if (strncmp(err, name, strlen(name)) != 0 || err[strlen(name)] != ':')
        fail_msg("want \"%s: ...\", got \"%s\"", name, err);
    stereo_stage *s = NULL;
    assert_int_equal(stereo_create(p, NULL, &s, err, sizeof err), STEREO_ERR_PARAM);
    assert_null(s);
}

static void test_stage_check(void **state)
{
    (void)state;
    stereo_params p;
    char err[256];
    base_params(&p, 0);
    assert_int_equal(p.cross, 0); /* off by default */
    assert_int_equal(p.discontinuity, 0);
    for (int c = 0; c <= CROSS_ARM_MAX; c += 17) {
        stereo_params q = p;
        q.cross = c;
        q.discontinuity = c % 2;
        assert_int_equal(stereo_params_check(&q, err, sizeof err), STEREO_OK);
    }
    stereo_params q = p;
    q.cross = 35;
    refused(&q, "cross");
    q.cross = -1;
    refused(&q, "cross");
    q = p;
    q.discontinuity = 2;
    refused(&q, "discontinuity");
    q.discontinuity = -1;
    refused(&q, "discontinuity");
    q = p;
    q.cross = 2;
    q.method = STEREO_METHOD_BM;
    refused(&q, "cross");
    q.cross = 0;
    q.discontinuity = 1;
    refused(&q, "discontinuity");
    q.discontinuity = 0; /* without them bm is fine */
    assert_int_equal(stereo_params_check(&q, err, sizeof err), STEREO_OK);
    q = p;
    q.width = 128; /* the band must be narrower than D */
    q.num_disparities = 64;
    q.cross = 2;
    q.band = 32;
    refused(&q, "cross");
    q.cross = 0;
    q.discontinuity = 1;
    refused(&q, "discontinuity");
    q.discontinuity = 0;
    assert_int_equal(stereo_params_check(&q, err, sizeof err), STEREO_OK);
}

/* Each setting gives the same maps on 1 and 3 threads, with the fused SIMD kernels and the
 * plain-C reference, with min_disparity 0 and -8. */
static void test_stage_threads_and_kernels(void **state)
{
    (void)state;
    const size_t n = (size_t)SW * SH;
    uint8_t *l = malloc(n), *r = malloc(n);
    int *truth = malloc(n * sizeof *truth);
    int16_t *a = malloc(n * 2), *ar = malloc(n * 2), *b = malloc(n * 2), *br = malloc(n * 2);
    static const int settings[3][2] = {{2, 0}, {0, 1}, {2, 1}};
    for (int neg = 0; neg <= 1; neg++) {
        const int dmin = neg ? -8 : 0;
        scene(l, r, truth, neg ? -3 : 4, neg ? 6 : 12);
        for (int s = 0; s < 3; s++) {
            stereo_params p;
            base_params(&p, dmin);
            p.cross = settings[s][0];
            p.discontinuity = settings[s][1];
            run_stage(&p, NULL, l, r, a, ar);
            p.threads = 3;
            run_stage(&p, NULL, l, r, b, br);
            assert_memory_equal(a, b, n * 2);
            assert_memory_equal(ar, br, n * 2);
            run_stage(&p, "reference", l, r, b, br);
            assert_memory_equal(a, b, n * 2);
            assert_memory_equal(ar, br, n * 2);
            p.threads = 1;
            run_stage(&p, "reference", l, r, b, br);
            assert_memory_equal(a, b, n * 2);
            assert_memory_equal(ar, br, n * 2);
            /* the map is a sensible one (not all invalid) */
            int valid = 0;
            for (size_t i = 0; i < n; i++)
                valid += stereo_disparity_valid(a[i]);
            assert_true(valid > (int)n / 2);
        }
    }
    free(l), free(r), free(truth), free(a), free(ar), free(b), free(br);
}

/* cross = 2 changes the map against cross = 0 and keeps it correct: of the valid pixels away
 * from the left border (x >= D), at least 80 % within 1 px of the truth. */
static void test_stage_cross_live(void **state)
{
    (void)state;
    const size_t n = (size_t)SW * SH;
    uint8_t *l = malloc(n), *r = malloc(n);
    int *truth = malloc(n * sizeof *truth);
    int16_t *off = malloc(n * 2), *on = malloc(n * 2);
    for (int neg = 0; neg <= 1; neg++) {
        const int dmin = neg ? -8 : 0;
        scene(l, r, truth, neg ? -3 : 4, neg ? 6 : 12);
        stereo_params p;
        base_params(&p, dmin);
        p.threads = 2;
        run_stage(&p, NULL, l, r, off, NULL);
        p.cross = 2;
        run_stage(&p, NULL, l, r, on, NULL);
        int differ = 0, valid = 0, good = 0, area = 0;
        for (size_t i = 0; i < n; i++) {
            differ += off[i] != on[i];
            if ((int)(i % SW) < SD + dmin)
                continue;
            area++;
            if (!stereo_disparity_valid(on[i]))
                continue;
            valid++;
            good += iabs(on[i] - 16 * truth[i]) <= 16;
        }
        assert_true(differ > 0);
        assert_true(valid >= area / 2);
        if (good * 10 < valid * 8)
            fail_msg("dmin %d: %d of %d valid pixels within 1 px", dmin, good, valid);
    }
    free(l), free(r), free(truth), free(off), free(on);
}

/* discontinuity = 1 against 0 (no post-filters): each pixel that differs is valid in both,
 * takes the off map's left or right neighbour value, and those neighbours (valid) are at least
 * CROSS_EDGE apart; some pixels do move. With cross on too, against cross alone. */
static void test_stage_discontinuity(void **state)
{
    (void)state;
    const size_t n = (size_t)SW * SH;
    uint8_t *l = malloc(n), *r = malloc(n);
    int *truth = malloc(n * sizeof *truth);
    int16_t *off = malloc(n * 2), *on = malloc(n * 2), *roff = malloc(n * 2),
            *ron = malloc(n * 2);
    for (int neg = 0; neg <= 1; neg++)
        for (int cross = 0; cross <= 2; cross += 2) {
            const int dmin = neg ? -8 : 0;
            scene(l, r, truth, neg ? -3 : 4, neg ? 6 : 12);
            stereo_params p;
            base_params(&p, dmin);
            p.post.speckle_size = 0;
            p.post.fill = p.post.vote = p.post.interp = p.post.temporal = 0;
            p.cross = cross;
            p.threads = 2;
            run_stage(&p, NULL, l, r, off, roff);
            p.discontinuity = 1;
            run_stage(&p, NULL, l, r, on, ron);
            assert_memory_equal(roff, ron, n * 2); /* the right map is left alone */
            int moved = 0;
            for (int y = 0; y < SH; y++)
                for (int x = 0; x < SW; x++) {
                    const size_t i = (size_t)y * SW + x;
                    if (on[i] == off[i])
                        continue;
                    /* a negative dmin's shift back invalidates matches right of the right image:
                     * near the right border a moved value may fall there */
                    if (neg && x >= SW + dmin - 2)
                        continue;
                    moved++;
                    if (x == 0 || x == SW - 1 || !stereo_disparity_valid(off[i]) ||
                        !stereo_disparity_valid(on[i]))
                        fail_msg("dmin %d cross %d (%d, %d): %d -> %d", dmin, cross, x, y,
                                 off[i], on[i]);
                    const int lv = off[i - 1], rv = off[i + 1];
                    if (!stereo_disparity_valid(lv) || !stereo_disparity_valid(rv) ||
                        iabs(lv - rv) < CROSS_EDGE || (on[i] != lv && on[i] != rv))
                        fail_msg("dmin %d cross %d (%d, %d): %d -> %d, neighbours %d %d", dmin,
                                 cross, x, y, off[i], on[i], lv, rv);
                }
            if (moved == 0)
                fail_msg("dmin %d cross %d: no pixel moved", dmin, cross);
        }
    free(l), free(r), free(truth), free(off), free(on), free(roff), free(ron);
}

int main(void)
{
    rng_seed(0xc2055e5d1ull);
    unsetenv("STEREO_CPU_KERNELS");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_exact),
        cmocka_unit_test(test_arms_flat),
        cmocka_unit_test(test_arms_steps),
        cmocka_unit_test(test_arms_t2),
        cmocka_unit_test(test_arms_packing),
        cmocka_unit_test(test_aggregate_hand),
        cmocka_unit_test(test_aggregate_random_against_naive),
        cmocka_unit_test(test_adjust_hand),
        cmocka_unit_test(test_adjust_levels),
        cmocka_unit_test(test_adjust_rows_random),
        cmocka_unit_test(test_stage_check),
        cmocka_unit_test(test_stage_threads_and_kernels),
        cmocka_unit_test(test_stage_cross_live),
        cmocka_unit_test(test_stage_discontinuity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
