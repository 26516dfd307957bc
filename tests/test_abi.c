/* SPDX-License-Identifier: Apache-2.0 */
/* test_abi.c — the Python module's C interface (python/stereodepth_abi.h) on its own, so that
 * the sanitizer builds (tests/test_asan.sh runs every test program) check it too: results equal
 * the stage's own on the generated scene, in padded rows, with mixed channels and reused
 * handles; options refused with stereo_options' messages; misuse (NULL handles and buffers,
 * wrong sizes, short pitches, a wrong output size) refused with SD_EVALUE, never a crash.
 *
 * Run: CMOCKA_MESSAGE_OUTPUT=TAP build/tests/test_abi */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stereo.h"
#include "stereodepth_abi.h"
#include "synth.h"

#define W 160
#define H 120

static synth_scene scene(void)
{
    synth_params p = {.width = W, .height = H, .t = 0, .seed = 3, .edge_radius = 1};
    synth_scene sc;
    char err[256] = "";
    if (synth_render(&p, &sc, err, sizeof err) != 0)
        fail_msg("synth_render: %s", err);
    return sc;
}

/* The stage's own result for the pair (D 32, CPU), as the interface should give it. */
static void reference(const synth_scene *sc, float *out)
{
    stereo_params p;
    stereo_params_default(&p, W, H);
    p.num_disparities = 32;
    p.backend = STEREO_BACKEND_CPU;
    stereo_stage *s = NULL;
    char err[256];
    assert_int_equal(stereo_create(&p, NULL, &s, err, sizeof err), STEREO_OK);
    stereo_image l = {sc->left_rgb.data, W, H, W * 3, STEREO_PIX_RGB24};
    stereo_image r = {sc->right_rgb.data, W, H, W * 3, STEREO_PIX_RGB24};
    assert_int_equal(stereo_process(s, &l, &r), STEREO_OK);
    const int16_t *d = stereo_disparity(s);
    for (int i = 0; i < W * H; i++)
        out[i] = d[i] == STEREO_INVALID ? NAN : d[i] / 16.0f;
    stereo_destroy(s);
}

static int same(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        if (isnan(a[i]) != isnan(b[i]) || (!isnan(a[i]) && a[i] != b[i]))
            return 0;
    return 1;
}

static sd_matcher *make(const char *d, char *err, size_t n)
{
    const char *names[] = {"disparities", "backend"}, *values[] = {d, "cpu"};
    sd_matcher *m = NULL;
    assert_int_equal(sd_matcher_create(W, H, 2, names, values, NULL, &m, err, n), SD_OK);
    assert_non_null(m);
    return m;
}

static void test_equals_the_stage(void **state)
{
    (void)state;
    synth_scene sc = scene();
    static float ref[W * H], got[W * H];
    reference(&sc, ref);
    int valid = 0;
    for (int i = 0; i < W * H; i++)
        valid += !isnan(ref[i]);
    assert_true(valid > W * H / 2);
    char err[256] = "";
    sd_matcher *m = make("32", err, sizeof err);
    int iw, ih, ow, oh;
    assert_int_equal(sd_matcher_shape(m, &iw, &ih, &ow, &oh), SD_OK);
    assert_true(iw == W && ih == H && ow == W && oh == H);
    assert_string_equal(sd_matcher_backend(m), "cpu");
    for (int rep = 0; rep < 2; rep++) { /* the handle is reused */
        memset(got, 0, sizeof got);
        assert_int_equal(sd_matcher_compute(m, sc.left_rgb.data, W * 3, 3, sc.right_rgb.data,
                                            W * 3, 3, W, H, got, W * H, err, sizeof err),
                         SD_OK);
        assert_true(same(got, ref, W * H));
    }
    /* rows with padding (pitch 3 W + 40) give the same */
    size_t pitch = W * 3 + 40;
    uint8_t *padded = calloc(pitch * H, 1);
    assert_non_null(padded);
    for (int y = 0; y < H; y++)
        memcpy(padded + y * pitch, (const uint8_t *)sc.left_rgb.data + y * W * 3, W * 3);
    assert_int_equal(sd_matcher_compute(m, padded, pitch, 3, sc.right_rgb.data, W * 3, 3, W, H,
                                        got, W * H, err, sizeof err), SD_OK);
    assert_true(same(got, ref, W * H));
    free(padded);
    /* a grey left beside a colour right: runs, and differs from the colour pair nowhere it
     * should not be able to (a smoke check that the channels are taken per image) */
    assert_int_equal(sd_matcher_compute(m, sc.left_grey.data, W, 1, sc.right_rgb.data, W * 3, 3,
                                        W, H, got, W * H, err, sizeof err), SD_OK);
    sd_matcher_destroy(m);
    synth_free(&sc);
}

static void test_option_errors(void **state)
{
    (void)state;
    char err[256];
    sd_matcher *m = (sd_matcher *)&err; /* must come back NULL */
    const char *n1[] = {"cost"}, *v1[] = {"sad"};
    assert_int_equal(sd_matcher_create(W, H, 1, n1, v1, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_null(m);
    assert_string_equal(err, "--cost: 'sad' is not one of rank, census, ad, bt, mi, adcensus");
    const char *n2[] = {"no-lr"}, *v2[] = {"1"};
    assert_int_equal(sd_matcher_create(W, H, 1, n2, v2, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_string_equal(err, "--no-lr takes no value");
    const char *n3[] = {"colour"}, *v3[] = {"x"};
    assert_int_equal(sd_matcher_create(W, H, 1, n3, v3, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_string_equal(err, "unknown option '--colour'");
    const char *n4[] = {"p1"}, *v4[] = {NULL};
    assert_int_equal(sd_matcher_create(W, H, 1, n4, v4, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_string_equal(err, "--p1: needs a value");
    const char *n5[] = {"disparities"}, *v5[] = {"160"};
    assert_int_equal(sd_matcher_create(W, H, 1, n5, v5, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_string_equal(err, "--disparities: 160 must be smaller than the image width 160");
    const char *n6[] = {"paths", "p1"}, *v6[] = {"4", "8,8,8"};
    assert_int_equal(sd_matcher_create(W, H, 2, n6, v6, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_string_equal(err, "--p1: 3 values for 4 paths (give one value, or one per path in "
                             "path order: +x, -x, +y, -y)");
    const char *n7[] = {NULL}, *v7[] = {NULL};
    assert_int_equal(sd_matcher_create(W, H, 1, n7, v7, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_int_equal(sd_matcher_create(0, H, 0, NULL, NULL, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_int_equal(sd_matcher_create(W, 9000, 0, NULL, NULL, NULL, &m, err, sizeof err),
                     SD_EVALUE);
    assert_int_equal(sd_matcher_create(W, H, 2, NULL, NULL, NULL, &m, err, sizeof err), SD_EVALUE);
    assert_int_equal(sd_matcher_create(W, H, 0, NULL, NULL, NULL, NULL, err, sizeof err),
                     SD_EVALUE);
    assert_int_equal(sd_matcher_create(W, H, 0, NULL, NULL, "/nonexistent/rig.yml", &m, err,
                                       sizeof err), SD_ERUNTIME);
    assert_non_null(strstr(err, "/nonexistent/rig.yml"));
    assert_null(m);
    /* the names list */
    const char *names = sd_option_names();
    assert_non_null(strstr(names, "disparities=,min-disparity=,cost="));
    assert_non_null(strstr(names, ",no-lr,"));
    /* the table's rows, field by field */
    assert_string_equal(sd_option_field(0, SD_OPT_NAME), "disparities");
    assert_string_equal(sd_option_field(0, SD_OPT_SHORT), "d");
    assert_string_equal(sd_option_field(0, SD_OPT_DEFAULT), "64");
    int flag = 0;
    while (sd_option_field(flag, SD_OPT_NAME) &&
           strcmp(sd_option_field(flag, SD_OPT_NAME), "no-lr") != 0)
        flag++;
    assert_string_equal(sd_option_field(flag, SD_OPT_KWARG), "no_lr");
    assert_string_equal(sd_option_field(flag, SD_OPT_KEY), "lr_check");
    assert_null(sd_option_field(flag, SD_OPT_METAVAR));
    assert_null(sd_option_field(flag, SD_OPT_SHORT));
    assert_null(sd_option_field(-1, SD_OPT_NAME));
    assert_null(sd_option_field(0, 99));
    assert_int_equal(sd_abi_version(), SD_ABI_VERSION);
}

static void test_misuse(void **state)
{
    (void)state;
    char err[256];
    static uint8_t img[W * H * 3];
    static float out[W * H];
    assert_int_equal(sd_matcher_compute(NULL, img, W, 1, img, W, 1, W, H, out, W * H, err,
                                        sizeof err), SD_EVALUE);
    assert_string_equal(err, "the matcher is closed");
    sd_matcher_destroy(NULL);
    assert_string_equal(sd_matcher_backend(NULL), "");
    assert_string_equal(sd_matcher_note(NULL), "");
    int a, b, c, d;
    assert_int_equal(sd_matcher_shape(NULL, &a, &b, &c, &d), SD_EVALUE);
    sd_matcher *m = make("32", err, sizeof err);
    /* the other results: none before a compute */
    static uint8_t conf[W * H];
    assert_int_equal(sd_matcher_result(m, SD_CONFIDENCE, conf, W * H, err, sizeof err),
                     SD_EVALUE);
    assert_string_equal(err, "no pair computed yet");
    assert_int_equal(sd_matcher_result(NULL, SD_RIGHT, out, W * H, err, sizeof err), SD_EVALUE);
    struct { int w, h, lc, rc; size_t lp, rp, count; const void *l, *r; float *o; const char *msg; }
    bad[] = {
        {W / 2, H, 1, 1, W, W, W * H, img, img, out, "images of 80x120 for a matcher of 160x120"},
        {W, H, 2, 1, W, W, W * H, img, img, out, "left image: 2 channels"},
        {W, H, 1, 4, W, W, W * H, img, img, out, "right image: 4 channels"},
        {W, H, 1, 1, W - 1, W, W * H, img, img, out, "left image: row pitch 159 is below 160"},
        {W, H, 3, 3, W * 3, W, W * H, img, img, out, "right image: row pitch 160 is below 480"},
        {W, H, 1, 1, W, W, W * H, NULL, img, out, "left image: no data"},
        {W, H, 1, 1, W, W, W * H, img, NULL, out, "right image: no data"},
        {W, H, 1, 1, W, W, W * H, img, img, NULL, "no output buffer"},
        {W, H, 1, 1, W, W, W * H + 1, img, img, out, "output of 19201 values for 160x120"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        assert_int_equal(sd_matcher_compute(m, bad[i].l, bad[i].lp, bad[i].lc, bad[i].r,
                                            bad[i].rp, bad[i].rc, bad[i].w, bad[i].h, bad[i].o,
                                            bad[i].count, err, sizeof err), SD_EVALUE);
        if (!strstr(err, bad[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].msg);
    }
    /* still usable after every refusal */
    assert_int_equal(sd_matcher_compute(m, img, W, 1, img, W, 1, W, H, out, W * H, err,
                                        sizeof err), SD_OK);
    /* then the other results, each of the output size; a wrong count or kind is refused */
    assert_int_equal(sd_matcher_result(m, SD_RIGHT, out, W * H, err, sizeof err), SD_OK);
    assert_int_equal(sd_matcher_result(m, SD_CONFIDENCE, conf, W * H, err, sizeof err), SD_OK);
    assert_int_equal(sd_matcher_result(m, SD_RECT_LEFT, conf, W * H, err, sizeof err), SD_OK);
    assert_int_equal(sd_matcher_result(m, SD_RECT_RIGHT, conf, W * H - 1, err, sizeof err),
                     SD_EVALUE);
    assert_non_null(strstr(err, "output of 19199 values"));
    assert_int_equal(sd_matcher_result(m, 9, conf, W * H, err, sizeof err), SD_EVALUE);
    assert_string_equal(err, "unknown result kind 9");
    sd_matcher_destroy(m);
    assert_non_null(sd_version());
    assert_true(strlen(sd_version()) > 0 && strlen(sd_commit()) > 0);
    /* calibrations */
    double geo[5];
    int size[2];
    assert_int_equal(sd_calibration("/nonexistent.yml", geo, size, err, sizeof err), SD_ERUNTIME);
    assert_non_null(strstr(err, "/nonexistent.yml"));
    assert_int_equal(sd_calibration(NULL, geo, size, err, sizeof err), SD_EVALUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equals_the_stage),
        cmocka_unit_test(test_option_errors),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
