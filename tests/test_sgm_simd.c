/* SPDX-License-Identifier: Apache-2.0 */
/* test_sgm_simd.c — the CPU backend's fused SIMD path (sgm_simd.h) against the plain-C reference
 * (STEREO_CPU_KERNELS=reference), bit for bit: the left and right disparities and the
 * confidence of whole stages, for every instruction set this build has and this CPU runs, on
 * random pairs of awkward sizes (odd widths, one to three rows, D up to the width) with random
 * options: every cost, 4 and 8 paths, penalties and weights per path (sums past 32767 too),
 * the adaptive P2, uniqueness, subpixel, LR check, median, confidence, minimum disparity (up to
 * past the width), rectification maps that leave pixels invalid, one to three threads, three
 * and four views. Only libc and the stage: tools/cross-aarch64.sh runs it under qemu for NEON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgm_simd.h"
#include "stereo.h"

#include "rng.h"


/* A pair: the right image the left one shifted by a few disparities in bands, plus noise, so
 * the search has real minima; or plain noise. */
static void random_pair(int w, int h, int D, uint8_t *l, uint8_t *r)
{
    int noise = rnd_range(0, 1);
    for (int i = 0; i < w * h; i++)
        l[i] = (uint8_t)rnd();
    for (int y = 0; y < h; y++) {
        int d = rnd_range(0, D - 1);
        for (int x = 0; x < w; x++) {
            if (rnd() % 16 == 0)
                d = rnd_range(0, D - 1);
            int xs = x + d < w ? x + d : w - 1;
            r[y * w + x] = noise ? (uint8_t)rnd() : (uint8_t)(l[y * w + xs] + rnd() % 5);
        }
    }
}

/* Identity maps with some pixels sent outside the image: the rectified pixel is invalid there,
 * which both disparities' searches read. */
static void random_maps(int w, int h, int nv, stereo_map *m, int16_t **xy, uint16_t **frac)
{
    for (int v = 0; v < nv; v++) {
        xy[v] = malloc((size_t)w * h * 2 * sizeof **xy);
        frac[v] = calloc((size_t)w * h, sizeof **frac);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int out = rnd() % 7 == 0;
                xy[v][2 * (y * w + x)] = (int16_t)(out ? -3 : x);
                xy[v][2 * (y * w + x) + 1] = (int16_t)y;
            }
        m[v] = (stereo_map){w, h, w, h, xy[v], frac[v]};
    }
}

/* Random options within stereo_params_check's limits. */
static void random_params(stereo_params *p, int w, int h, int *use_maps)
{
    static const stereo_cost costs[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_AD,
                                        STEREO_COST_BT, STEREO_COST_MI, STEREO_COST_ADCENSUS};
    int D = 16 * rnd_range(1, 4);
    while (D >= w)
        D -= 16;
    stereo_params_default(p, w, h);
    p->backend = STEREO_BACKEND_CPU;
    p->num_disparities = D;
    p->min_disparity = rnd() % 3 == 0 ? rnd_range(0, 20) : 0;
    if (rnd() % 12 == 0) /* around the width: few or no pixels with a candidate */
        p->min_disparity = rnd_range(w - D, w + 5);
    p->cost = costs[rnd() % 6];
    p->ad_weight = rnd_range(1, 16);
    p->rank_window = 2 * rnd_range(1, 4) + 1;
    p->paths = rnd() % 2 ? 8 : 4;
    p->p1 = rnd_range(1, 40);
    p->p2 = rnd_range(p->p1 + 1, p->p1 + 300);
    p->p2_adapt = rnd() % 3 ? rnd_range(0, 255) : 16;
    if (rnd() % 2)
        for (int r = 0; r < p->paths; r++) {
            p->p1_path[r] = rnd() % 2 ? rnd_range(1, 60) : 0;
            int q1 = p->p1_path[r] ? p->p1_path[r] : p->p1;
            p->p2_path[r] = rnd() % 2 || q1 >= p->p2 ? rnd_range(q1 + 1, q1 + 400) : 0;
        }
    int max_cost = 255; /* above every cost's: the weights below keep the sum's range */
    long range = 0;
    for (int r = 0; r < p->paths; r++) {
        int q1, q2;
        stereo_path_penalties(p, r, &q1, &q2);
        range += max_cost + q2;
    }
    if (rnd() % 2) /* weights, up to a sum range near 65535 (past the signed 32767) */
        for (int r = 0; r < p->paths; r++)
            p->path_weight[r] = rnd_range(r == 0, (int)(65535 / range));
    p->uniqueness = rnd() % 3 ? 0 : rnd_range(1, 40);
    p->subpixel = rnd() % 4 != 0;
    p->lr_check = rnd() % 4 != 0;
    p->lr_tolerance = rnd_range(0, 3);
    p->median = rnd() % 2;
    p->confidence = rnd() % 2;
    p->threads = rnd_range(1, 3);
    *use_maps = rnd() % 3 == 0;
}

/* One stage on the images (p->views of them, 0: two) with the given kernels
 * (STEREO_CPU_KERNELS). */
static stereo_stage *run_with(const char *kernels, const stereo_params *p, const stereo_map *maps,
                              uint8_t *const *im)
{
    setenv("STEREO_CPU_KERNELS", kernels, 1);
    stereo_stage *s;
    char err[256];
    if (stereo_create(p, maps, &s, err, sizeof err) != STEREO_OK)
        fail_msg("%s: %s", kernels, err);
    const int n = p->views > 2 ? p->views : 2;
    stereo_image v[STEREO_MAX_VIEWS];
    for (int i = 0; i < n; i++)
        v[i] = (stereo_image){im[i], p->width, p->height, (size_t)p->width, STEREO_PIX_GREY8};
    if (stereo_process_views(s, v, n) != STEREO_OK)
        fail_msg("%s: %s", kernels, stereo_error(s));
    return s;
}

/* The names of the instruction sets to test: those sgm_simd_select accepts here. */
static int isa_names(const char *names[4])
{
    static const char *const all[] = {"avx2", "sse2", "neon", "generic"};
    int n = 0;
    for (int i = 0; i < 4; i++) {
        const sgm_simd_isa *isa;
        char err[120];
        if (sgm_simd_select(all[i], &isa, err, sizeof err) == 0)
            names[n++] = all[i];
    }
    return n;
}

static void compare_case(const stereo_params *p, int use_maps, const char *isa, int case_no)
{
    const int w = p->width, h = p->height, nv = p->views > 2 ? p->views : 2;
    uint8_t *im[STEREO_MAX_VIEWS];
    for (int i = 0; i < nv; i++)
        im[i] = malloc((size_t)w * h);
    random_pair(w, h, p->num_disparities + p->min_disparity, im[0], im[1]);
    for (int i = 2; i < nv; i++) /* more views: pairs of their own with the reference */
        random_pair(w, h, p->num_disparities + p->min_disparity, im[0], im[i]);
    stereo_map m[STEREO_MAX_VIEWS];
    int16_t *xy[STEREO_MAX_VIEWS] = {NULL};
    uint16_t *frac[STEREO_MAX_VIEWS] = {NULL};
    if (use_maps)
        random_maps(w, h, nv, m, xy, frac);
    stereo_stage *ref = run_with("reference", p, use_maps ? m : NULL, im);
    stereo_stage *fast = run_with(isa, p, use_maps ? m : NULL, im);
    const size_t n = (size_t)w * h;
    const char *what = NULL;
    if (memcmp(stereo_disparity(ref), stereo_disparity(fast), n * 2))
        what = "left disparity";
    else if (p->lr_check &&
             memcmp(stereo_disparity_right(ref), stereo_disparity_right(fast), n * 2))
        what = "right disparity";
    else if (p->confidence && memcmp(stereo_confidence(ref), stereo_confidence(fast), n))
        what = "confidence";
    if (what)
        fail_msg("case %d, %s: %s differs (%dx%d D %d dmin %d cost %s paths %d p1 %d p2 %d "
                 "adapt %d w0 %d uniq %d subpix %d lr %d median %d conf %d maps %d threads %d "
                 "views %d)",
                 case_no, isa, what, w, h, p->num_disparities, p->min_disparity,
                 stereo_cost_to_str(p->cost), p->paths, p->p1, p->p2, p->p2_adapt,
                 p->path_weight[0], p->uniqueness, p->subpixel, p->lr_check, p->median,
                 p->confidence, use_maps, p->threads, nv);
    stereo_destroy(ref);
    stereo_destroy(fast);
    for (int v = 0; v < nv; v++) {
        free(xy[v]);
        free(frac[v]);
    }
    for (int i = 0; i < nv; i++)
        free(im[i]);
}

/* STEREO_SGM_SIMD_CASES: the number of random cases (default 200; tools/cross-aarch64.sh --all
 * runs more) */
static void test_fused_matches_reference(void **state)
{
    (void)state;
    const char *names[4];
    int nisa = isa_names(names);
    assert_true(nisa > 0);
    const char *env = getenv("STEREO_SGM_SIMD_CASES");
    int cases = env ? atoi(env) : 200;
    for (int c = 0; c < cases; c++) {
        int w = rnd() % 4 ? rnd_range(17, 140) : rnd_range(17, 40);
        int h = rnd() % 5 ? rnd_range(1, 40) : rnd_range(1, 3);
        stereo_params p;
        int use_maps;
        random_params(&p, w, h, &use_maps);
        for (int i = 0; i < nisa; i++)
            compare_case(&p, use_maps, names[i], c);
    }
}

/* The largest D and an odd width: 16 vectors per pixel with AVX2, the longest searches. */
static void test_fused_wide_range(void **state)
{
    (void)state;
    const char *names[4];
    int nisa = isa_names(names);
    stereo_params p;
    stereo_params_default(&p, 301, 7);
    p.backend = STEREO_BACKEND_CPU;
    p.num_disparities = 256;
    p.confidence = 1;
    p.uniqueness = 5;
    for (int i = 0; i < nisa; i++)
        for (int paths = 4; paths <= 8; paths += 4) {
            p.paths = paths;
            compare_case(&p, 0, names[i], -paths);
        }
}

/* More than two views (multiview.h): the combined cost volume, the sides rule's means in the
 * buffer the fused path leaves alone, and the LR check with the occlusion test. */
static void test_fused_more_views(void **state)
{
    (void)state;
    static const stereo_cost costs[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_AD,
                                        STEREO_COST_BT};
    const char *names[4];
    int nisa = isa_names(names);
    for (int c = 0; c < 24; c++) {
        stereo_params p;
        int use_maps;
        random_params(&p, rnd_range(40, 120), rnd_range(2, 24), &use_maps);
        p.cost = costs[rnd() % 4];
        p.min_disparity = 0;
        p.views = rnd_range(3, 4);
        p.combine = rnd() % 2 ? STEREO_COMBINE_SIDES : STEREO_COMBINE_SUM;
        p.baseline[2] = -16;
        p.baseline[3] = 8 * rnd_range(3, 4);
        for (int i = 0; i < nisa; i++)
            compare_case(&p, use_maps, names[i], 1000 + c);
    }
}

/* Bad values of STEREO_CPU_KERNELS are refused at create, by name. */
static void test_kernels_env_refused(void **state)
{
    (void)state;
    stereo_params p;
    stereo_params_default(&p, 64, 8);
    p.backend = STEREO_BACKEND_CPU;
    p.num_disparities = 16;
    static const char *const bad[] = {"bogus", "AVX2", "neon-ish"};
    for (int i = 0; i < 3; i++) {
        setenv("STEREO_CPU_KERNELS", bad[i], 1);
        stereo_stage *s = (stereo_stage *)1;
        char err[256] = "";
        assert_int_equal(stereo_create(&p, NULL, &s, err, sizeof err), STEREO_ERR_PARAM);
        assert_null(s);
        if (!strstr(err, "STEREO_CPU_KERNELS") || !strstr(err, bad[i]))
            fail_msg("message '%s' does not name the variable and '%s'", err, bad[i]);
    }
    setenv("STEREO_CPU_KERNELS", "auto", 1);
    stereo_stage *s;
    char err[256];
    assert_int_equal(stereo_create(&p, NULL, &s, err, sizeof err), STEREO_OK);
    stereo_destroy(s);
    unsetenv("STEREO_CPU_KERNELS");
}

int main(void)
{
    rng_seed(0x2545f4914f6cdd1dull);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_matches_reference),
        cmocka_unit_test(test_fused_wide_range),
        cmocka_unit_test(test_fused_more_views),
        cmocka_unit_test(test_kernels_env_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
