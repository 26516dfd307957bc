/* SPDX-License-Identifier: Apache-2.0 */
/* test_multiview_cost.c — multi-baseline matching (gpu/multiview.h): the sampling rule and the
 * combination formulas of stereo_math.h against hand-computed values and their definitions, the
 * LR check of more views (the occlusion test both ways, disparity.h) on hand-built rows and
 * against its definition restated on random rows (some wider than its ring), the
 * combined cost volume against a naive restatement of multiview.h (positions in 16ths of a pixel,
 * plain loops), and the stage with more than two views: exact disparities on a shifted texture,
 * two views through stereo_process_views equal to stereo_process, and every refusal naming what
 * is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "disparity.h"
#include "multiview.h"
#include "sgm.h"
#include "stereo.h"
#include "stereo_math.h"

#include "rng.h"


/* ---- the formulas ------------------------------------------------------------------------------ */

static void test_formula_view_offset(void **state)
{
    (void)state;
    /* b = bq / 16, position x - b d = x - o - f / 16 */
    static const int cases[][4] = {
        /* bq, d, o, f */
        {16, 7, 7, 0},     /* b = 1: the two-view candidate */
        {32, 7, 14, 0},    /* b = 2 */
        {-16, 7, -7, 0},   /* b = -1: x + 7 */
        {24, 3, 4, 8},     /* b = 1.5: 4.5 */
        {-24, 3, -5, 8},   /* b = -1.5: -4.5 = -5 + 0.5 */
        {20, 5, 6, 4},     /* b = 1.25: 6.25 */
        {-20, 5, -7, 12},  /* b = -1.25: -6.25 = -7 + 0.75 */
        {8, 1, 0, 8},      /* b = 0.5 at d = 1 */
        {-8, 1, -1, 8},
        {24, 0, 0, 0},
        {128, 2047, 16376, 0}, /* the largest |b| and d */
        {-127, 2047, -16249, 15},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int o, f;
        stereo_view_offset(cases[i][0], cases[i][1], &o, &f);
        if (o != cases[i][2] || f != cases[i][3])
            fail_msg("bq %d d %d: o %d f %d, expected %d %d", cases[i][0], cases[i][1], o, f,
                     cases[i][2], cases[i][3]);
    }
    /* the definition: bq d = 16 o + f with 0 <= f < 16 */
    for (int bq = -128; bq <= 128; bq++)
        for (int d = 0; d < 300; d += 7) {
            int o, f;
            stereo_view_offset(bq, d, &o, &f);
            assert_int_equal(16 * o + f, bq * d);
            assert_true(f >= 0 && f < 16);
        }
}

static void test_formula_view_lerp_mean_select(void **state)
{
    (void)state;
    assert_int_equal(stereo_view_cost_lerp(10, 99, 0), 10);   /* f = 0: c1 unused */
    assert_int_equal(stereo_view_cost_lerp(10, 30, 8), 20);
    assert_int_equal(stereo_view_cost_lerp(10, 31, 8), 21);   /* 20.5: half up */
    assert_int_equal(stereo_view_cost_lerp(0, 80, 4), 20);
    assert_int_equal(stereo_view_cost_lerp(80, 0, 15), 5);
    assert_int_equal(stereo_view_cost_lerp(3, 4, 1), 3);      /* 3.0625 */
    /* between its ends for every pair and weight */
    for (int c0 = 0; c0 <= 80; c0 += 5)
        for (int c1 = 0; c1 <= 80; c1 += 3)
            for (int f = 0; f < 16; f++) {
                int v = stereo_view_cost_lerp(c0, c1, f);
                assert_true(v >= (c0 < c1 ? c0 : c1) && v <= (c0 > c1 ? c0 : c1));
            }
    /* the mean: rounded half up; max_cost when no view sees the position */
    assert_int_equal(stereo_view_mean(30, 2, 80), 15);
    assert_int_equal(stereo_view_mean(31, 2, 80), 16);   /* 15.5: half up */
    assert_int_equal(stereo_view_mean(71, 3, 80), 24);   /* 23.67 */
    assert_int_equal(stereo_view_mean(70, 3, 80), 23);   /* 23.33 */
    assert_int_equal(stereo_view_mean(0, 0, 62), 62);
    /* the sides rule: all, p, q, box sums */
    const int U = STEREO_VIEW_UNSEEN;
    assert_int_equal(stereo_view_select(20, 10, 30, 100, 100, 0), 20); /* alike: all */
    assert_int_equal(stereo_view_select(20, 10, 30, 100, 200, 0), 20); /* exactly 2x: all */
    assert_int_equal(stereo_view_select(20, 10, 30, 100, 201, 0), 10); /* q's side occluded */
    assert_int_equal(stereo_view_select(20, 10, 30, 201, 100, 0), 30); /* p's side occluded */
    assert_int_equal(stereo_view_select(20, 10, 30, 0, 1, 0), 10);
    assert_int_equal(stereo_view_select(20, 10, 30, 0, 0, 0), 20);
    assert_int_equal(stereo_view_select(17, U, 17, 900, 10, 0), 17);   /* one side unseen: all */
    assert_int_equal(stereo_view_select(17, 17, U, 10, 900, 0), 17);
    assert_int_equal(stereo_view_select(80, U, U, 0, 0, 0), 80);
    /* the floor: a side is occluded only beyond 2x the other plus the margin */
    assert_int_equal(stereo_view_select(20, 10, 30, 100, 300, 100), 20); /* 2x + 100: all */
    assert_int_equal(stereo_view_select(20, 10, 30, 100, 301, 100), 10);
    assert_int_equal(stereo_view_select(20, 10, 30, 301, 100, 100), 30);
    assert_int_equal(stereo_view_select(5, 2, 8, 40, 170, 100), 5);   /* weak texture: all */
    assert_int_equal(stereo_view_select(5, 2, 8, 40, 170, 0), 2);     /* without the floor */
    /* the margin: STEREO_VIEW_GREY_FLOOR per window pixel for ad and bt, none for the transforms */
    assert_int_equal(stereo_view_margin(STEREO_COST_AD, 25), 25 * STEREO_VIEW_GREY_FLOOR);
    assert_int_equal(stereo_view_margin(STEREO_COST_BT, 9), 9 * STEREO_VIEW_GREY_FLOOR);
    assert_int_equal(stereo_view_margin(STEREO_COST_RANK, 25), 0);
    assert_int_equal(stereo_view_margin(STEREO_COST_CENSUS, 25), 0);
    assert_int_equal(STEREO_VIEW_GREY_FLOOR, 4);
}

/* ---- the LR check of more views (disparity.h, stereo_lr_views_consistent) -------------------- */

/* The definition restated on a copy of the row taken before the check. */
static int naive_lr_views_keep(int x, int vl, const int16_t *before, const int16_t *right, int w,
                               int tol16)
{
    int xr = x - (vl + 8) / 16;
    if (xr >= 0 && right[xr] >= 0 && abs(vl - right[xr]) <= tol16)
        return 1; /* the plain check */
    if (xr < 0 || right[xr] < 0 || abs(right[xr] - vl) <= tol16)
        return 0;
    int xp = xr + right[xr] / 16; /* the point the right map names at xr */
    int step = right[xr] < vl ? -1 : 1; /* farther: x hides it (run to the left); nearer: it
                                           hides x (run to the right) */
    if ((step < 0 && xp >= x) || (step > 0 && (xp <= x || xp >= w)))
        return 0;
    if (before[xp] < 0 || abs(before[xp] - right[xr]) > tol16)
        return 0;
    for (int j = 1; j < 3; j++) /* a run of 3 */
        if (x + step * j < 0 || x + step * j >= w || before[x + step * j] < 0 ||
            abs(before[x + step * j] - vl) > tol16)
            return 0;
    return 1;
}

static void test_lr_check_views(void **state)
{
    (void)state;
    enum { W = 40 };
    /* a foreground at d 12 from x 20 on, the background at d 5 left of it; view 1's pixels
     * 8..14 (where the foreground's x 20..26 land) claimed by the background behind it
     * (x' = xr + 5 = 13..19, hidden from view 1) */
    int16_t row[W], right[W], plain[W];
    for (int x = 0; x < W; x++) {
        row[x] = (int16_t)(16 * (x < 20 ? 5 : 12));
        int xr = x;
        right[xr] = (int16_t)(16 * (xr >= 8 && xr < 15 ? 5 : xr >= 15 ? 12 : 5));
    }
    memcpy(plain, row, sizeof row);
    lr_check_rows(plain, right, W, 1, 0, 1);
    lr_check_views_rows(row, right, W, 1, 0, 1);
    for (int x = 20; x < 27; x++)
        assert_int_equal(plain[x], STEREO_INVALID); /* the plain check removes them all */
    assert_int_equal(row[20], STEREO_INVALID);        /* the edge's first 2: no run of 3 */
    assert_int_equal(row[21], STEREO_INVALID);
    for (int x = 22; x < 27; x++)
        assert_int_equal(row[x], 16 * 12);            /* x hides x' from view 1: kept */
    for (int x = 0; x < W; x++)
        if (x < 20 || x >= 27)
            assert_int_equal(row[x], plain[x]);       /* elsewhere the plain check */
    /* a foreground widened by 2 px onto the background (x 18, 19 at d 12): no run, removed */
    for (int x = 0; x < W; x++)
        row[x] = (int16_t)(16 * (x < 18 ? 5 : 12));
    lr_check_views_rows(row, right, W, 1, 0, 1);
    assert_int_equal(row[18], STEREO_INVALID);
    assert_int_equal(row[19], STEREO_INVALID);
    /* the farther point's own value disagrees with the right map: removed */
    for (int x = 0; x < W; x++)
        row[x] = (int16_t)(16 * (x < 20 ? 7 : 12));
    lr_check_views_rows(row, right, W, 1, 0, 1);
    for (int x = 20; x < 27; x++)
        assert_int_equal(row[x], STEREO_INVALID);
    /* the background hidden from view 1 behind the foreground (x 13..19 land on view 1's 8..14,
     * where view 1 sees the foreground x'' = xr + 12 = 20..26): kept where it lies on a run of 3
     * to the right (13..17), removed at 18 and 19 */
    for (int x = 0; x < W; x++) {
        row[x] = (int16_t)(16 * (x < 20 ? 5 : 12));
        right[x] = (int16_t)(16 * (x >= 8 ? 12 : 5));
    }
    memcpy(plain, row, sizeof row);
    lr_check_rows(plain, right, W, 1, 0, 1);
    lr_check_views_rows(row, right, W, 1, 0, 1);
    for (int x = 13; x < 20; x++)
        assert_int_equal(plain[x], STEREO_INVALID); /* the plain check removes them */
    for (int x = 13; x < 18; x++)
        assert_int_equal(row[x], 16 * 5);
    assert_int_equal(row[18], STEREO_INVALID);
    assert_int_equal(row[19], STEREO_INVALID);
    /* the nearer point's own value disagrees: removed */
    for (int x = 0; x < W; x++)
        row[x] = (int16_t)(16 * (x < 20 ? 5 : 9));
    lr_check_views_rows(row, right, W, 1, 0, 1);
    for (int x = 13; x < 20; x++)
        if (x - 5 >= 8)
            assert_int_equal(row[x], STEREO_INVALID);
    /* random rows: in place right to left equals the definition on the row before the check;
     * rows of 40 px (d < 24) and of 600 px (d < 256: the ring of STEREO_LR_RING wraps) */
    static int16_t before[600], got[600], r[600];
    for (int t = 0; t < 4000; t++) {
        int n = t % 4 ? 40 : 600, dmax = n == 40 ? 24 : 256, tol = (int)(rnd() % 3);
        for (int x = 0; x < n; x++) {
            int d = (int)(rnd() % (unsigned)dmax);
            before[x] = rnd() % 9 == 0 ? STEREO_INVALID : (int16_t)(16 * d + (int)(rnd() % 16));
            r[x] = rnd() % 9 == 0 ? STEREO_INVALID : (int16_t)(16 * (int)(rnd() % (unsigned)dmax));
            if (rnd() % 3 == 0 && x > 0) /* runs, so the occlusion test passes now and then */
                before[x] = before[x - 1];
        }
        memcpy(got, before, sizeof got);
        lr_check_views_rows(got, r, n, tol, 0, 1);
        for (int x = 0; x < n; x++) {
            int16_t want = before[x] >= 0 && naive_lr_views_keep(x, before[x], before, r, n,
                                                                 16 * tol)
                               ? before[x] : STEREO_INVALID;
            if (got[x] != want)
                fail_msg("random row %d (%d px), x %d: %d, expected %d", t, n, x, got[x], want);
        }
    }
}

/* ---- the cost volume against multiview.h, restated ------------------------------------------- */

/* lut: view i's grey mapping (adcensus); weight: ad_weight */
static int naive_pair_cost(stereo_cost cost, int cap, const uint8_t *v0, const uint8_t *vi,
                           const uint64_t *c0, const uint64_t *ci, const uint8_t *g0,
                           const uint8_t *gi, const uint8_t *lut, int weight, int w, int x,
                           int xv)
{
    switch (cost) {
    case STEREO_COST_CENSUS: return __builtin_popcountll(c0[x] ^ ci[xv]);
    case STEREO_COST_ADCENSUS: { /* census distance + weight/8 of |I0 - M_i(I_i)|, capped */
        int d = __builtin_popcountll(c0[x] ^ ci[xv]) + abs(g0[x] - lut[gi[xv]]) * weight / 8;
        return d < cap ? d : cap;
    }
    case STEREO_COST_AD: {
        int d = abs(g0[x] - gi[xv]);
        return d < cap ? d : cap;
    }
    case STEREO_COST_BT: {
        /* Birchfield-Tomasi as sgm.h defines it, with the half-pixel values written out */
        int l0, h0, li, hi;
        stereo_bt_range(g0[x > 0 ? x - 1 : x], g0[x], g0[x + 1 < w ? x + 1 : x], &l0, &h0);
        stereo_bt_range(gi[xv > 0 ? xv - 1 : xv], gi[xv], gi[xv + 1 < w ? xv + 1 : xv], &li, &hi);
        return stereo_bt_cost(g0[x], l0, h0, gi[xv], li, hi, cap);
    }
    default: return abs(v0[x] - vi[xv]);
    }
}

/* narrow: grey values 100..111 only (weak texture: small ad / bt costs, where the sides rule's
 * floor decides) */
static void check_volume(stereo_cost cost, stereo_combine combine, int narrow)
{
    enum { W = 37, H = 4, NV = 5 };
    const int dmin = 2, D = 16;
    const int baseline[NV] = {0, 16, 24, -20, -40}; /* b = 1, 1.5, -1.25, -2.5 */
    int cap = cost == STEREO_COST_RANK ? 80 : stereo_cost_has_census(cost) ? 62 : 63;
    const int weight = narrow ? 16 : 5; /* adcensus */
    uint8_t *vals[NV], *grey[NV];
    uint64_t *bits[NV];
    /* adcensus: a different monotone grey mapping per view (so a view read through another
     * view's mapping shows) */
    static uint8_t lut[NV][256];
    for (int v = 1; v < NV; v++)
        for (int k = 0, acc = 0; k < 256; k++) {
            acc += (int)(rnd() % (unsigned)(v + 1));
            lut[v][k] = (uint8_t)(acc / (v + 1) < 255 ? acc / (v + 1) : 255);
        }
    for (int v = 0; v < NV; v++) {
        vals[v] = malloc(W * H);
        grey[v] = malloc(W * H);
        bits[v] = malloc(W * H * sizeof(uint64_t));
        for (int i = 0; i < W * H; i++) {
            vals[v][i] = (uint8_t)(rnd() % 81);
            grey[v][i] = (uint8_t)(narrow ? 100 + rnd() % 12 : rnd());
            bits[v][i] = ((uint64_t)rnd() << 32 | rnd()) & ((1ull << 62) - 1);
        }
    }
    sgm_config c = {.width = W, .height = H, .dmin = dmin, .ndisp = D, .max_cost = cap};
    mview_config m = {&c, cost, NV, baseline, combine, (const uint8_t *const *)vals,
                      (const uint64_t *const *)bits, (const uint8_t *const *)grey,
                      (const uint8_t(*)[256])lut, weight};
    size_t vol = (size_t)W * H * D;
    uint8_t *got = malloc(vol), *pos = malloc(vol), *neg = malloc(vol);
    int *all = malloc(vol * sizeof(int)), *side[2] = {malloc(vol * sizeof(int)),
                                                      malloc(vol * sizeof(int))};
    memset(got, 0xee, vol);
    if (combine == STEREO_COMBINE_SIDES) {
        mview_cost_rows(&m, got, pos, neg, 0, H);
        mview_select_rows(&m, pos, neg, got, 0, H);
    } else {
        mview_cost_rows(&m, got, NULL, NULL, 0, H);
    }
    /* the views' means per voxel: all, and each side's (-1: the side does not see it) */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int k = 0; k < D; k++) {
                int d = dmin + k, sum[2] = {0, 0}, n[2] = {0, 0};
                for (int v = 1; v < NV; v++) {
                    /* the position in 16ths; the pixel at or left of it, and the weight of the
                     * one right of it */
                    int at = 16 * x - baseline[v] * d;
                    int xl = at >= 0 ? at / 16 : -((-at + 15) / 16), fr = at - 16 * xl;
                    if (xl < 0 || (fr ? xl + 1 : xl) >= W)
                        continue;
                    size_t r = (size_t)y * W;
                    int cl = naive_pair_cost(cost, cap, vals[0] + r, vals[v] + r, bits[0] + r,
                                             bits[v] + r, grey[0] + r, grey[v] + r, lut[v],
                                             weight, W, x, xl);
                    int cv = cl;
                    if (fr) {
                        int cr = naive_pair_cost(cost, cap, vals[0] + r, vals[v] + r, bits[0] + r,
                                                 bits[v] + r, grey[0] + r, grey[v] + r, lut[v],
                                                 weight, W, x, xl + 1);
                        cv = (fr * cr + (16 - fr) * cl + 8) / 16;
                    }
                    int sd = baseline[v] < 0;
                    sum[sd] += cv;
                    n[sd]++;
                }
                size_t i = ((size_t)y * W + x) * D + k;
                all[i] = n[0] + n[1] ? (sum[0] + sum[1] + (n[0] + n[1]) / 2) / (n[0] + n[1]) : cap;
                for (int sd = 0; sd < 2; sd++)
                    side[sd][i] = n[sd] ? (sum[sd] + n[sd] / 2) / n[sd] : -1;
            }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int k = 0; k < D; k++) {
                size_t i = ((size_t)y * W + x) * D + k;
                int want = all[i];
                if (combine == STEREO_COMBINE_SIDES && side[0][i] >= 0 && side[1][i] >= 0) {
                    /* box sums over the 5 x 5 window inside the image, unseen = cap */
                    /* plus 4 grey levels per window pixel for ad and bt */
                    long box[2] = {0, 0}, floor = 0;
                    for (int yy = y - 2; yy <= y + 2; yy++)
                        for (int xx = x - 2; xx <= x + 2; xx++)
                            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                                for (int sd = 0; sd < 2; sd++) {
                                    int v = side[sd][((size_t)yy * W + xx) * D + k];
                                    box[sd] += v < 0 ? cap : v;
                                }
                                if (cost == STEREO_COST_AD || cost == STEREO_COST_BT)
                                    floor += 4;
                            }
                    if (box[1] > 2 * box[0] + floor)
                        want = side[0][i];
                    else if (box[0] > 2 * box[1] + floor)
                        want = side[1][i];
                }
                if (got[i] != want)
                    fail_msg("%s %s: x %d y %d d %d: %d, expected %d", stereo_cost_to_str(cost),
                             stereo_combine_to_str(combine), x, y, dmin + k, got[i], want);
            }
    free(got), free(pos), free(neg), free(all), free(side[0]), free(side[1]);
    for (int v = 0; v < NV; v++)
        free(vals[v]), free(grey[v]), free(bits[v]);
}

static void test_cost_volume_matches_definition(void **state)
{
    (void)state;
    const stereo_cost costs[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_AD,
                                 STEREO_COST_BT, STEREO_COST_ADCENSUS};
    for (size_t i = 0; i < sizeof costs / sizeof costs[0]; i++) {
        check_volume(costs[i], STEREO_COMBINE_SUM, 0);
        check_volume(costs[i], STEREO_COMBINE_SIDES, 0);
        check_volume(costs[i], STEREO_COMBINE_SIDES, 1);
    }
}

/* ---- the stage -------------------------------------------------------------------------------- */

/* A random texture seen from views at integer shifts: the view at baseline b shows
 * texture(x + 40 + b d) at x, so reference pixel x (texture(x + 40)) is at x - b d there: every
 * reference pixel far enough from the sides has disparity d in every view. */
static uint8_t *shifted_view(const uint8_t *tex, int tw, int w, int h, int shift)
{
    uint8_t *im = malloc((size_t)w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            im[(size_t)y * w + x] = tex[(size_t)y * tw + x + 40 + shift];
    return im;
}

static void test_stage_views_find_the_shift(void **state)
{
    (void)state;
    enum { W = 96, H = 40, TW = W + 80, NV = 4 };
    const int d = 5, bq[NV] = {0, 16, 32, -16};
    uint8_t *tex = malloc((size_t)TW * H);
    for (int i = 0; i < TW * H; i++)
        tex[i] = (uint8_t)rnd();
    stereo_params p;
    stereo_params_default(&p, W, H);
    p.num_disparities = 16;
    p.subpixel = 0;
    p.backend = STEREO_BACKEND_CPU;
    p.views = NV;
    memcpy(p.baseline, bq, sizeof bq);
    uint8_t *im[NV];
    stereo_image in[NV];
    for (int v = 0; v < NV; v++) {
        im[v] = shifted_view(tex, TW, W, H, bq[v] * d / 16);
        in[v] = (stereo_image){im[v], W, H, W, STEREO_PIX_GREY8};
    }
    for (int t = 0; t < 4; t++) {
        p.combine = (stereo_combine)(t % 2);
        p.cost = t < 2 ? STEREO_COST_CENSUS : STEREO_COST_ADCENSUS;
        stereo_default_penalties(p.cost, p.rank_window, &p.p1, &p.p2);
        stereo_stage *s;
        char err[256];
        assert_int_equal(stereo_create(&p, NULL, &s, err, sizeof err), STEREO_OK);
        assert_int_equal(stereo_process_views(s, in, NV), STEREO_OK);
        const int16_t *disp = stereo_disparity(s);
        int exact = 0, n = 0;
        for (int y = 6; y < H - 6; y++)
            for (int x = 24; x < W - 24; x++, n++)
                exact += disp[y * W + x] == d * STEREO_SUBPIXEL_SCALE;
        print_message("%s %s: %d of %d interior pixels at d = %d\n",
                      stereo_cost_to_str(p.cost), stereo_combine_to_str(p.combine), exact, n, d);
        assert_int_equal(exact, n);
        stereo_destroy(s);
    }
    for (int v = 0; v < NV; v++)
        free(im[v]);
    free(tex);
}

/* adcensus maps each view's grey levels onto the reference's with a mapping of its own: views
 * whose cameras respond differently (an offset, a gain; increasing and one-to-one on the levels
 * present) give the same disparities as views that respond alike. Every row of the texture
 * repeats with the image's period, so every view holds the same grey levels as the reference
 * (its row shifted around): each view's mapping then undoes its response exactly (census keeps
 * the order, which the responses keep), the cost volume is the same, and so is every output. */
static void test_stage_adcensus_maps_each_view(void **state)
{
    (void)state;
    enum { W = 96, H = 40, TW = W + 80, NV = 4 };
    const int d = 5, bq[NV] = {0, 16, 32, -16};
    uint8_t *tex = malloc((size_t)TW * H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            tex[(size_t)y * TW + x] = (uint8_t)(rnd() % 201); /* 0..200 */
    for (int y = 0; y < H; y++)
        for (int x = W; x < TW; x++)
            tex[(size_t)y * TW + x] = tex[(size_t)y * TW + x - W];
    stereo_params p;
    stereo_params_default(&p, W, H);
    p.num_disparities = 16;
    p.backend = STEREO_BACKEND_CPU;
    p.views = NV;
    p.cost = STEREO_COST_ADCENSUS;
    p.ad_weight = 8;
    p.subpixel = 0;
    memcpy(p.baseline, bq, sizeof bq);
    uint8_t *same[NV], *own[NV];
    stereo_image a[NV], b[NV];
    for (int v = 0; v < NV; v++) {
        same[v] = shifted_view(tex, TW, W, H, bq[v] * d / 16);
        own[v] = malloc((size_t)W * H);
        for (int i = 0; i < W * H; i++) { /* view 1 + 20, view 2 x 1.25, view 3 + 40 */
            int g = same[v][i];
            own[v][i] = (uint8_t)(v == 1 ? g + 20 : v == 2 ? g * 5 / 4 : v == 3 ? g + 40 : g);
        }
        a[v] = (stereo_image){same[v], W, H, W, STEREO_PIX_GREY8};
        b[v] = (stereo_image){own[v], W, H, W, STEREO_PIX_GREY8};
    }
    for (int rule = 0; rule < 2; rule++) {
        p.combine = (stereo_combine)rule;
        stereo_stage *sa, *sb;
        char err[256];
        assert_int_equal(stereo_create(&p, NULL, &sa, err, sizeof err), STEREO_OK);
        assert_int_equal(stereo_create(&p, NULL, &sb, err, sizeof err), STEREO_OK);
        assert_int_equal(stereo_process_views(sa, a, NV), STEREO_OK);
        assert_int_equal(stereo_process_views(sb, b, NV), STEREO_OK);
        assert_memory_equal(stereo_disparity(sa), stereo_disparity(sb), (size_t)W * H * 2);
        assert_memory_equal(stereo_disparity_right(sa), stereo_disparity_right(sb),
                            (size_t)W * H * 2);
        const int16_t *disp = stereo_disparity(sb);
        int exact = 0, n = 0;
        for (int y = 6; y < H - 6; y++)
            for (int x = 24; x < W - 24; x++, n++)
                exact += disp[y * W + x] == d * STEREO_SUBPIXEL_SCALE;
        assert_int_equal(exact, n);
        stereo_destroy(sa);
        stereo_destroy(sb);
    }
    for (int v = 0; v < NV; v++)
        free(same[v]), free(own[v]);
    free(tex);
}

static void test_stage_two_views_equal_the_pair(void **state)
{
    (void)state;
    enum { W = 71, H = 23 };
    uint8_t *l = malloc(W * H), *r = malloc(W * H);
    for (int i = 0; i < W * H; i++)
        l[i] = (uint8_t)rnd(), r[i] = (uint8_t)rnd();
    const stereo_cost costs[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_BT,
                                 STEREO_COST_ADCENSUS};
    for (size_t c = 0; c < 4; c++) {
        stereo_params p;
        stereo_params_default(&p, W, H);
        p.num_disparities = 16;
        p.backend = STEREO_BACKEND_CPU;
        p.cost = costs[c];
        stereo_stage *a, *b;
        char err[256];
        assert_int_equal(stereo_create(&p, NULL, &a, err, sizeof err), STEREO_OK);
        p.views = 0; /* 0 counts as the pair */
        assert_int_equal(stereo_create(&p, NULL, &b, err, sizeof err), STEREO_OK);
        stereo_image in[2] = {{l, W, H, W, STEREO_PIX_GREY8}, {r, W, H, W, STEREO_PIX_GREY8}};
        assert_int_equal(stereo_process(a, &in[0], &in[1]), STEREO_OK);
        assert_int_equal(stereo_process_views(b, in, 2), STEREO_OK);
        assert_memory_equal(stereo_disparity(a), stereo_disparity(b), (size_t)W * H * 2);
        assert_memory_equal(stereo_disparity_right(a), stereo_disparity_right(b),
                            (size_t)W * H * 2);
        stereo_destroy(a);
        stereo_destroy(b);
    }
    free(l), free(r);
}

static void expect_refused(stereo_params p, const char *word)
{
    stereo_stage *s = (stereo_stage *)1;
    char err[256] = "";
    assert_int_equal(stereo_create(&p, NULL, &s, err, sizeof err), STEREO_ERR_PARAM);
    assert_null(s);
    if (!strstr(err, word))
        fail_msg("message '%s' does not name '%s'", err, word);
}

static void test_views_params_refused(void **state)
{
    (void)state;
    stereo_params p, q;
    stereo_params_default(&p, 80, 30);
    p.num_disparities = 16;
    p.backend = STEREO_BACKEND_CPU;
    p.views = 4;
    p.baseline[2] = 32, p.baseline[3] = -16;
    q = p, q.views = 1, expect_refused(q, "views");
    q = p, q.views = STEREO_MAX_VIEWS + 1, expect_refused(q, "views");
    q = p, q.views = -1, expect_refused(q, "views");
    q = p, q.baseline[1] = 32, expect_refused(q, "view 1");
    q = p, q.baseline[0] = 8, expect_refused(q, "view 0");
    q = p, q.baseline[3] = 0, expect_refused(q, "view 3");
    q = p, q.baseline[3] = 32, expect_refused(q, "repeats view 2");
    q = p, q.baseline[3] = 16, expect_refused(q, "repeats view 1");
    q = p, q.baseline[2] = 129, expect_refused(q, "view 2");
    q = p, q.baseline[2] = -129, expect_refused(q, "view 2");
    q = p, q.combine = (stereo_combine)2, expect_refused(q, "combine");
    q = p, q.cost = STEREO_COST_MI, expect_refused(q, "mi");
    stereo_stage *s;
    char err[256];
    /* every other cost takes more views */
    const stereo_cost taken[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_AD,
                                 STEREO_COST_BT, STEREO_COST_ADCENSUS};
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
        q = p, q.cost = taken[i];
        if (stereo_create(&q, NULL, &s, err, sizeof err) != STEREO_OK)
            fail_msg("cost %s with 4 views refused: %s", stereo_cost_to_str(q.cost), err);
        stereo_destroy(s);
    }
    /* the pair reads none of them */
    q = p, q.views = 2, q.baseline[1] = 0, q.baseline[3] = 0;
    assert_int_equal(stereo_create(&q, NULL, &s, err, sizeof err), STEREO_OK);
    stereo_destroy(s);
    /* maps: one per view, each checked and named */
    static int16_t xy[80 * 30 * 2];
    static uint16_t frac[80 * 30];
    stereo_map maps[4];
    for (int v = 0; v < 4; v++)
        maps[v] = (stereo_map){80, 30, 80 + v, 30, xy, frac};
    assert_int_equal(stereo_create(&p, maps, &s, err, sizeof err), STEREO_OK);
    /* each view's image is its own map's source size */
    static uint8_t pix[4][83 * 30];
    stereo_image in[4];
    for (int v = 0; v < 4; v++)
        in[v] = (stereo_image){pix[v], 80 + v, 30, 80 + v, STEREO_PIX_GREY8};
    assert_int_equal(stereo_process_views(s, in, 4), STEREO_OK);
    in[3].width = 80;
    assert_int_equal(stereo_process_views(s, in, 4), STEREO_ERR_PARAM);
    if (!strstr(stereo_error(s), "view 3 image: size 80x30, the view's map expects 83x30"))
        fail_msg("'%s' does not name view 3 and its map's size", stereo_error(s));
    stereo_destroy(s);
    maps[2].width = 79;
    s = (stereo_stage *)1;
    assert_int_equal(stereo_create(&p, maps, &s, err, sizeof err), STEREO_ERR_PARAM);
    assert_null(s);
    if (!strstr(err, "view 2 map"))
        fail_msg("'%s' does not name view 2's map", err);
    /* the CUDA backend takes more views too: no refusal by name; without a device AUTO falls
     * back to the CPU for that reason alone */
    q = p, q.backend = STEREO_BACKEND_AUTO;
    assert_int_equal(stereo_create(&q, NULL, &s, err, sizeof err), STEREO_OK);
    assert_null(strstr(stereo_backend_note(s), "views"));
    stereo_destroy(s);
}

static void test_views_process_refusals(void **state)
{
    (void)state;
    enum { W = 80, H = 30 };
    static uint8_t pix[4][W * H], small[(W - 2) * H];
    stereo_params p;
    stereo_params_default(&p, W, H);
    p.num_disparities = 16;
    p.backend = STEREO_BACKEND_CPU;
    p.views = 4;
    p.baseline[2] = 32, p.baseline[3] = -16;
    stereo_stage *s;
    char err[256];
    assert_int_equal(stereo_create(&p, NULL, &s, err, sizeof err), STEREO_OK);
    stereo_image in[4];
    for (int v = 0; v < 4; v++)
        in[v] = (stereo_image){pix[v], W, H, W, STEREO_PIX_GREY8};
    assert_int_equal(stereo_process(s, &in[0], &in[1]), STEREO_ERR_PARAM);
    assert_non_null(strstr(stereo_error(s), "stereo_process_views"));
    assert_int_equal(stereo_submit(s, &in[0], &in[1], 0), STEREO_ERR_PARAM);
    assert_non_null(strstr(stereo_error(s), "stereo_submit_views"));
    assert_int_equal(stereo_submit_views(s, in, 3, 0), STEREO_ERR_PARAM);
    assert_non_null(strstr(stereo_error(s), "3 images for a stage of 4 views"));
    /* the asynchronous path: the same result as stereo_process_views */
    for (int v = 0; v < 4; v++)
        for (int i = 0; i < W * H; i++)
            pix[v][i] = (uint8_t)((i % W + 2 * v) * 37 % 251);
    assert_int_equal(stereo_process_views(s, in, 4), STEREO_OK);
    static int16_t sync_disp[W * H];
    memcpy(sync_disp, stereo_disparity(s), sizeof sync_disp);
    assert_int_equal(stereo_submit_views(s, in, 4, 0), STEREO_OK);
    stereo_result res;
    assert_int_equal(stereo_wait(s, &res), STEREO_OK);
    assert_memory_equal(res.disparity, sync_disp, sizeof sync_disp);
    assert_int_equal(stereo_process_views(s, in, 3), STEREO_ERR_PARAM);
    assert_non_null(strstr(stereo_error(s), "3 images for a stage of 4 views"));
    stereo_image bad = {small, W - 2, H, W - 2, STEREO_PIX_GREY8};
    stereo_image with_bad[4] = {in[0], in[1], bad, in[3]};
    assert_int_equal(stereo_process_views(s, with_bad, 4), STEREO_ERR_PARAM);
    if (!strstr(stereo_error(s), "view 2 image: size 78x30"))
        fail_msg("'%s' does not name view 2 and its size", stereo_error(s));
    with_bad[2] = in[2], with_bad[0] = bad;
    assert_int_equal(stereo_process_views(s, with_bad, 4), STEREO_ERR_PARAM);
    assert_non_null(strstr(stereo_error(s), "reference image"));
    assert_int_equal(stereo_process_views(s, in, 4), STEREO_OK);
    stereo_destroy(s);
}

static void test_baselines_from_str(void **state)
{
    (void)state;
    int b[STEREO_MAX_VIEWS], n;
    char why[160];
    assert_int_equal(stereo_baselines_from_str("1,2,-1", b, &n, why, sizeof why), 0);
    assert_int_equal(n, 3);
    assert_int_equal(b[0], 0), assert_int_equal(b[1], 16), assert_int_equal(b[2], 32);
    assert_int_equal(b[3], -16);
    assert_int_equal(stereo_baselines_from_str("1,0.5,-1.25,8", b, &n, why, sizeof why), 0);
    assert_int_equal(n, 4);
    assert_int_equal(b[2], 8), assert_int_equal(b[3], -20), assert_int_equal(b[4], 128);
    assert_int_equal(stereo_baselines_from_str("1", b, &n, why, sizeof why), 0);
    assert_int_equal(n, 1);
    static const char *const bad[][2] = {
        {"1,0.3", "value 2 ('0.3'): not a whole number of 1/16"},
        {"1,,2", "value 2"},
        {"", "value 1"},
        {"1,2,", "value 3"},
        {"1,x", "value 2 ('x'): not a number"},
        {"1,9", "value 2 ('9'): outside -8..8"},
        {"1,nan", "value 2"},
        {"1,2,3,4,5,6,7,-1", "more than 7 values"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        assert_int_equal(stereo_baselines_from_str(bad[i][0], b, &n, why, sizeof why), -1);
        if (!strstr(why, bad[i][1]))
            fail_msg("'%s': '%s' does not say '%s'", bad[i][0], why, bad[i][1]);
    }
    char buf[24];
    assert_string_equal(stereo_baseline_str(-20, buf, sizeof buf), "-1.25");
    assert_string_equal(stereo_baseline_str(32, buf, sizeof buf), "2");
    stereo_combine c;
    assert_int_equal(stereo_combine_from_str("sides", &c), 0);
    assert_int_equal(c, STEREO_COMBINE_SIDES);
    assert_int_equal(stereo_combine_from_str("sum", &c), 0);
    assert_int_equal(c, STEREO_COMBINE_SUM);
    assert_int_equal(stereo_combine_from_str("best", &c), -1);
}

int main(void)
{
    rng_seed(0x2545f4914f6cdd1dull);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formula_view_offset),
        cmocka_unit_test(test_formula_view_lerp_mean_select),
        cmocka_unit_test(test_lr_check_views),
        cmocka_unit_test(test_cost_volume_matches_definition),
        cmocka_unit_test(test_stage_views_find_the_shift),
        cmocka_unit_test(test_stage_adcensus_maps_each_view),
        cmocka_unit_test(test_stage_two_views_equal_the_pair),
        cmocka_unit_test(test_views_params_refused),
        cmocka_unit_test(test_views_process_refusals),
        cmocka_unit_test(test_baselines_from_str),
    };
    return cmocka_run_group_tests_name("multiview_cost", tests, NULL, NULL);
}
