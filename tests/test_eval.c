/* SPDX-License-Identifier: Apache-2.0 */
/* test_eval.c — build/stereo-eval through its command line: exact metrics on hand-made maps,
 * KITTI-style filling of invalid pixels, mask / right-GT occlusion, border, errors and exit
 * codes, and a self-evaluation of real Middlebury ground truth when the data set is present.
 *
 * Environment: STEREO_BUILD (default "build") holds stereo-eval; STEREO_DATA (default
 * "../shared/data") holds the data sets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image_io.h"

#define INV INFINITY

static char tmpdir[64];
static char eval_exe[PATH_MAX];

typedef struct {
    int status; /* exit status, or -1 when the program did not exit normally */
    char out[8192], err[1024]; /* out: --json --confidence prints two arrays of 256 */
} run_result;

/* ---- helpers ------------------------------------------------------------------------------- */

static const char *tmp_path(char *buf, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
    return buf;
}

static void read_text(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

/* Runs stereo-eval with args (NULL-terminated), capturing exit status, stdout and stderr. */
static void run_eval(run_result *r, ...)
{
    const char *argv[32];
    int argc = 0;
    argv[argc++] = eval_exe;
    va_list ap;
    va_start(ap, r);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL) {
        assert_true(argc < 31);
        argv[argc++] = a;
    }
    va_end(ap);
    argv[argc] = NULL;

    char out_path[PATH_MAX], err_path[PATH_MAX];
    tmp_path(out_path, "run.out");
    tmp_path(err_path, "run.err");
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        execv(eval_exe, (char *const *)argv);
        _exit(127);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (r->status == 127)
        fail_msg("cannot run %s (set STEREO_BUILD to the build directory)", eval_exe);
    read_text(out_path, r->out, sizeof r->out);
    read_text(err_path, r->err, sizeof r->err);
}

static void write_map(const char *path, int w, int h, const float *v)
{
    char err[256];
    fmap m = {w, h, (float *)v};
    if (pfm_write(path, &m, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void write_grey8(const char *path, int w, int h, const unsigned char *v)
{
    char err[256];
    image img = {w, h, 1, 8, (void *)v};
    if (image_write(path, &img, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void expect_output(const run_result *r, const char *line)
{
    if (r->status != 0)
        fail_msg("exit %d: %s", r->status, r->err);
    if (strcmp(r->out, line) != 0)
        fail_msg("got \"%s\", expected \"%s\"", r->out, line);
}

/* A run where DISP should equal GT everywhere after filling: checks avgerr 0 and the density. */
static void expect_exact_fill(const float *disp, const float *filled, int w, int h,
                              const char *density)
{
    char dp[PATH_MAX], gp[PATH_MAX], line[256];
    write_map(tmp_path(dp, "fill_disp.pfm"), w, h, disp);
    write_map(tmp_path(gp, "fill_gt.pfm"), w, h, filled);
    run_result r;
    run_eval(&r, dp, gp, NULL);
    snprintf(line, sizeof line,
             "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=%s n=%d\n", density, w * h);
    expect_output(&r, line);
}

/* ---- metrics ------------------------------------------------------------------------------- */

/* 4x3, GT 10 except one invalid pixel. Per evaluated pixel |d - gt| is
 *   row 0: 0, 0.5, 1, 2          (1 is not > 1, 2 is not > 2: the thresholds are strict)
 *   row 1: 3, 4.5, 4.5 (filled: min(14.5, 20)), GT invalid
 *   row 2: 4, 1, 0, 0 (filled from the left at the row end)
 * n = 11; bad1 = 5/11, bad2 = 4/11, bad4 = 2/11, avgerr = 20.5/11, density = 9/11; of the 9
 * valid ones 3 are bad-2 (3, 4.5 and 4): bad2_valid = 3/9. */
static const float hand_gt[12] = {10, 10, 10, 10, 10, 10, 10, INV, 10, 10, 10, 10};
static const float hand_disp[12] = {10, 10.5f, 11, 12, 13, 14.5f, INV, 20, 6, 9, 10, INV};

static void hand_made_4x3_gives_exact_metrics(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX];
    write_map(tmp_path(dp, "hand_disp.pfm"), 4, 3, hand_disp);
    write_map(tmp_path(gp, "hand_gt.pfm"), 4, 3, hand_gt);
    run_result r;
    run_eval(&r, dp, gp, NULL);
    expect_output(&r, "bad1=45.45 bad2=36.36 bad4=18.18 avgerr=1.864 density=81.82 n=11\n");
}

/* --confidence: the valid evaluated pixels of hand_disp, most confident first, are
 *   250 (error 0), 200 (0.5), 200 (0), 150 (1), 150 (2), 120 (4: bad), 120 (1), 50 (4.5: bad),
 *   10 (3: bad); the not evaluated and invalid pixels' values do not count.
 * 60 %: 5.4 pixels: the first five, then 0.4 of the two at 120 (one bad): 0.2 / 5.4 = 3.70 %.
 * 80 %: 7.2 pixels: seven with one bad, then 0.2 of the one at 50: 1.2 / 7.2 = 16.67 %.
 * 100 %: bad2_valid, 3 / 9. */
static const unsigned char hand_conf[12] = {200, 200, 150, 150, 10, 50, 0, 255, 120, 120, 250, 0};

static void confidence_ranks_the_valid_pixels_ties_counted_by_fraction(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX], cp[PATH_MAX];
    write_map(tmp_path(dp, "hand_disp.pfm"), 4, 3, hand_disp);
    write_map(tmp_path(gp, "hand_gt.pfm"), 4, 3, hand_gt);
    write_grey8(tmp_path(cp, "hand_conf.png"), 4, 3, hand_conf);
    run_result r;
    run_eval(&r, "--confidence", cp, "--coverage", "60,80,100", dp, gp, NULL);
    expect_output(&r, "bad1=45.45 bad2=36.36 bad4=18.18 avgerr=1.864 density=81.82 n=11\n"
                      "cov60_bad2=3.70 cov60_min_conf=120 cov80_bad2=16.67 cov80_min_conf=50 "
                      "cov100_bad2=33.33 cov100_min_conf=10\n");
    run_eval(&r, "--confidence", cp, dp, gp, NULL); /* the default coverages */
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "cov50_bad2=0.00 cov50_min_conf=150 cov80_bad2=16.67 "));
    assert_non_null(strstr(r.out, " cov95_bad2="));
    run_eval(&r, "--json", "--confidence", cp, "--coverage", "80", dp, gp, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"coverage\": [{\"coverage\": 80, \"bad2\": 16.67, "
                                  "\"min_conf\": 50}]"));
    /* per confidence value: 120 has two valid pixels, one of them bad */
    const char *v = strstr(r.out, "\"conf_valid\": [");
    const char *b = strstr(r.out, "\"conf_bad2\": [");
    assert_non_null(v);
    assert_non_null(b);
    long n[256], k[256];
    v += strlen("\"conf_valid\": [");
    b += strlen("\"conf_bad2\": [");
    for (int i = 0; i < 256; i++) {
        char *end;
        n[i] = strtol(v, &end, 10);
        v = end + (*end == ',');
        k[i] = strtol(b, &end, 10);
        b = end + (*end == ',');
    }
    assert_int_equal(n[120], 2);
    assert_int_equal(k[120], 1);
    assert_int_equal(n[255], 0); /* GT invalid there */
    assert_int_equal(n[0], 0);   /* the invalid DISP pixels */
    long total = 0;
    for (int i = 0; i < 256; i++)
        total += n[i];
    assert_int_equal(total, 9);
}

static void confidence_errors(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX], cp[PATH_MAX], sp[PATH_MAX];
    write_map(tmp_path(dp, "hand_disp.pfm"), 4, 3, hand_disp);
    write_map(tmp_path(gp, "hand_gt.pfm"), 4, 3, hand_gt);
    write_grey8(tmp_path(cp, "hand_conf.png"), 4, 3, hand_conf);
    write_grey8(tmp_path(sp, "small_conf.png"), 3, 4, hand_conf);
    run_result r;
    const char *bad[] = {"0", "101", "50,", "x", "50,,80", "-5", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        run_eval(&r, "--confidence", cp, "--coverage", bad[i], dp, gp, NULL);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, "--coverage"));
        assert_string_equal(r.out, "");
    }
    run_eval(&r, "--coverage", "50", dp, gp, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--coverage needs --confidence"));
    run_eval(&r, "--confidence", sp, dp, gp, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "size mismatch"));
    assert_non_null(strstr(r.err, "small_conf.png"));
    run_eval(&r, "--confidence", tmp_path(sp, "no-such-conf.png"), dp, gp, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "no-such-conf.png"));
}

/* --disparities: the evaluated GT (10 px everywhere in hand_gt) against the matched range */
static void ground_truth_beyond_the_matched_range(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX];
    write_map(tmp_path(dp, "hand_disp.pfm"), 4, 3, hand_disp);
    write_map(tmp_path(gp, "hand_gt.pfm"), 4, 3, hand_gt);
    const char *metrics = "bad1=45.45 bad2=36.36 bad4=18.18 avgerr=1.864 density=81.82 n=11\n";
    run_result r;
    char want[512];
    /* inside the range: the output is as without the option */
    run_eval(&r, "--disparities", "16", dp, gp, NULL);
    expect_output(&r, metrics);
    /* 0..7 cannot reach 10 */
    run_eval(&r, "--disparities", "8", dp, gp, NULL);
    snprintf(want, sizeof want, "%sground truth beyond the matched range 0..7: 11 of 11 evaluated "
             "pixels (100.00 %%), up to 10.00 px; -d 16 would cover them\n", metrics);
    expect_output(&r, want);
    /* 12..27 starts above it: lower the smallest disparity */
    run_eval(&r, "--min-disparity", "12", "--disparities", "16", dp, gp, NULL);
    snprintf(want, sizeof want, "%sground truth beyond the matched range 12..27: 11 of 11 "
             "evaluated pixels (100.00 %%), up to 10.00 px; --min-disparity 10 -d 16 would cover "
             "them\n", metrics);
    expect_output(&r, want);
    /* JSON carries the counts whenever --disparities is given */
    run_eval(&r, "--json", "--disparities", "8", dp, gp, NULL);
    expect_output(&r, "{\"bad1\": 45.45, \"bad2\": 36.36, \"bad4\": 18.18, \"avgerr\": 1.864, "
                      "\"density\": 81.82, \"n\": 11, \"bad2_valid\": 33.33, \"beyond_range\": 100.00, "
                      "\"beyond_range_n\": 11, \"gt_max\": 10.00, \"covering_disparities\": 16}\n");
    /* bad values */
    run_eval(&r, "--disparities", "0", dp, gp, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--disparities: needs at least 1"));
    run_eval(&r, "--disparities", "x", dp, gp, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--disparities"));
}

static void json_output_has_the_same_numbers(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX];
    write_map(tmp_path(dp, "hand_disp.pfm"), 4, 3, hand_disp);
    write_map(tmp_path(gp, "hand_gt.pfm"), 4, 3, hand_gt);
    run_result r;
    run_eval(&r, "--json", dp, gp, NULL);
    expect_output(&r, "{\"bad1\": 45.45, \"bad2\": 36.36, \"bad4\": 18.18, \"avgerr\": 1.864, "
                      "\"density\": 81.82, \"n\": 11, \"bad2_valid\": 33.33}\n");
}

static void png16_disparity_uses_scale_256_by_default_and_disp_scale_overrides(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX], err[256];
    image img;
    assert_int_equal(image_alloc(&img, 2, 1, 1, 16), 0);
    ((uint16_t *)img.data)[0] = 512; /* 2 px at scale 256 */
    ((uint16_t *)img.data)[1] = 0;   /* invalid: filled with 2 */
    assert_int_equal(image_write(tmp_path(dp, "d16.png"), &img, err, sizeof err), 0);
    image_free(&img);
    write_map(tmp_path(gp, "d16_gt.pfm"), 2, 1, (const float[]){2, 2});
    run_result r;
    run_eval(&r, dp, gp, NULL);
    expect_output(&r, "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=50.00 n=2\n");
    run_eval(&r, "--disp-scale", "128", dp, gp, NULL); /* now 4 px: error 2 everywhere */
    expect_output(&r, "bad1=100.00 bad2=0.00 bad4=0.00 avgerr=2.000 density=50.00 n=2\n");
}

static void gt_scale_divides_8bit_ground_truth(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX];
    write_map(tmp_path(dp, "s_disp.pfm"), 3, 1, (const float[]){2.5f, 5, 7});
    write_grey8(tmp_path(gp, "s_gt.png"), 3, 1, (const unsigned char[]){10, 0, 28});
    run_result r;
    run_eval(&r, "--gt-scale", "4", dp, gp, NULL); /* GT 2.5, invalid, 7 */
    expect_output(&r, "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=100.00 n=2\n");
}

/* ---- KITTI filling ------------------------------------------------------------------------- */

static void fill_interior_run_takes_smaller_neighbour(void **state)
{
    const float disp[7] = {5, INV, INV, 9, INV, 3, 3};
    const float filled[7] = {5, 5, 5, 9, 3, 3, 3};
    expect_exact_fill(disp, filled, 7, 1, "57.14");
}

static void fill_row_ends_copy_the_one_valid_neighbour(void **state)
{
    const float disp[6] = {INV, INV, 7, 3, INV, INV};
    const float filled[6] = {7, 7, 7, 3, 3, 3};
    expect_exact_fill(disp, filled, 6, 1, "33.33");
}

/* Rows without any valid pixel copy the nearest filled row; equally near above and below:
 * the smaller value per column. */
static void fill_empty_rows_take_nearest_row_vertically(void **state)
{
    enum { W = 3, H = 7 };
    const float disp[W * H] = {
        INV, INV, INV, /* 0: nearest is row 1 */
        1,   INV, 5,   /* 1: -> 1 1 5 */
        INV, INV, INV, /* 2: row 1 nearer (1 vs 3) */
        INV, INV, INV, /* 3: rows 1 and 5 equally near: min */
        INV, INV, INV, /* 4: row 5 nearer */
        4,   2,   0,   /* 5 */
        INV, INV, INV, /* 6: row 5 */
    };
    const float filled[W * H] = {
        1, 1, 5, 1, 1, 5, 1, 1, 5, 1, 1, 0, 4, 2, 0, 4, 2, 0, 4, 2, 0,
    };
    expect_exact_fill(disp, filled, W, H, "23.81");
}

static void fill_all_invalid_map_becomes_zero(void **state)
{
    const float disp[4] = {INV, INV, INV, NAN};
    const float filled[4] = {0, 0, 0, 0};
    expect_exact_fill(disp, filled, 2, 2, "0.00");
}

/* ---- evaluated pixel set ------------------------------------------------------------------- */

static void mask_keeps_only_pixels_marked_255(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX], mp[PATH_MAX];
    write_map(tmp_path(dp, "m_disp.pfm"), 4, 1, (const float[]){1, 50, 3, 60});
    write_map(tmp_path(gp, "m_gt.pfm"), 4, 1, (const float[]){1, 2, 3, 4});
    write_grey8(tmp_path(mp, "m_mask.png"), 4, 1, (const unsigned char[]){255, 0, 255, 128});
    run_result r;
    run_eval(&r, "--mask", mp, dp, gp, NULL);
    expect_output(&r, "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=100.00 n=2\n");
}

/* Left GT dL = 1, 2, 2, 2, 1, 0.5 against right GT 2, 3.5, 9, 2, inf, 0.5:
 *   x=0,1 land at xr = -1 (outside); x=2 -> xr 0, dR 2, agrees; x=3 -> xr 1, |2 - 3.5| > 1;
 *   x=4 -> xr 3, |1 - 2| = 1 (kept: <= 1); x=5 -> round(0.5) = 1, xr 4, dR invalid.
 * DISP is wrong by 10 everywhere, so n counts the kept pixels. */
static void gt_right_removes_occluded_and_inconsistent_pixels(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX], rp[PATH_MAX];
    write_map(tmp_path(dp, "o_disp.pfm"), 6, 1, (const float[]){11, 12, 12, 12, 11, 10.5f});
    write_map(tmp_path(gp, "o_gt.pfm"), 6, 1, (const float[]){1, 2, 2, 2, 1, 0.5f});
    write_map(tmp_path(rp, "o_right.pfm"), 6, 1, (const float[]){2, 3.5f, 9, 2, INV, 0.5f});
    run_result r;
    run_eval(&r, "--gt-right", rp, dp, gp, NULL);
    expect_output(&r, "bad1=100.00 bad2=100.00 bad4=100.00 avgerr=10.000 density=100.00 n=2\n");
}

static void border_excludes_edge_pixels(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX];
    float disp[25], gt[25];
    for (int i = 0; i < 25; i++) {
        int x = i % 5, y = i / 5;
        gt[i] = 8;
        disp[i] = (x == 0 || y == 0 || x == 4 || y == 4) ? 30 : 8;
    }
    write_map(tmp_path(dp, "b_disp.pfm"), 5, 5, disp);
    write_map(tmp_path(gp, "b_gt.pfm"), 5, 5, gt);
    run_result r;
    run_eval(&r, "--border", "1", dp, gp, NULL);
    expect_output(&r, "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=100.00 n=9\n");
    run_eval(&r, "--border=0", dp, gp, NULL);
    expect_output(&r, "bad1=64.00 bad2=64.00 bad4=64.00 avgerr=14.080 density=100.00 n=25\n");
}

/* ---- errors -------------------------------------------------------------------------------- */

static void size_mismatch_is_an_input_error_naming_both_files(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX];
    float v[15] = {0};
    write_map(tmp_path(dp, "sz_disp.pfm"), 4, 3, v);
    write_map(tmp_path(gp, "sz_gt.pfm"), 5, 3, v);
    run_result r;
    run_eval(&r, dp, gp, NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, dp));
    assert_non_null(strstr(r.err, gp));
    assert_non_null(strstr(r.err, "4x3"));
    assert_non_null(strstr(r.err, "5x3"));
}

static void mask_size_mismatch_is_an_input_error(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX], mp[PATH_MAX];
    float v[4] = {1, 1, 1, 1};
    write_map(tmp_path(dp, "ms_disp.pfm"), 2, 2, v);
    write_map(tmp_path(gp, "ms_gt.pfm"), 2, 2, v);
    write_grey8(tmp_path(mp, "ms_mask.png"), 4, 1, (const unsigned char[]){255, 255, 255, 255});
    run_result r;
    run_eval(&r, "--mask", mp, dp, gp, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, mp));
}

static void missing_input_file_is_an_input_error(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX];
    write_map(tmp_path(gp, "mi_gt.pfm"), 1, 1, (const float[]){1});
    run_result r;
    run_eval(&r, tmp_path(dp, "no-such-disp.pfm"), gp, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, dp));
    assert_string_equal(r.out, "");
}

/* Each usage error: exit 2, one line on stderr that names the culprit, nothing on stdout. */
static void expect_usage_error(const run_result *r, const char *culprit)
{
    if (r->status != 2)
        fail_msg("exit %d, expected 2 (stderr: %s)", r->status, r->err);
    assert_string_equal(r->out, "");
    if (!strstr(r->err, culprit))
        fail_msg("\"%s\" does not name \"%s\"", r->err, culprit);
    const char *nl = strchr(r->err, '\n');
    assert_true(nl && nl[1] == '\0');
}

static void usage_errors_exit_2_naming_the_option(void **state)
{
    char dp[PATH_MAX], gp[PATH_MAX], pp[PATH_MAX];
    write_map(tmp_path(dp, "u_disp.pfm"), 1, 1, (const float[]){1});
    write_map(tmp_path(gp, "u_gt.pfm"), 1, 1, (const float[]){1});
    write_grey8(tmp_path(pp, "u_gt.png"), 1, 1, (const unsigned char[]){4});
    run_result r;
    run_eval(&r, "--frobnicate", dp, gp, NULL);
    expect_usage_error(&r, "--frobnicate");
    run_eval(&r, dp, gp, "--gt-scale", NULL);
    expect_usage_error(&r, "--gt-scale");
    run_eval(&r, "--gt-scale", "abc", dp, gp, NULL);
    expect_usage_error(&r, "--gt-scale");
    run_eval(&r, "--disp-scale", "-2", dp, gp, NULL);
    expect_usage_error(&r, "--disp-scale");
    run_eval(&r, "--border", "1.5", dp, gp, NULL);
    expect_usage_error(&r, "--border");
    run_eval(&r, "--json=1", dp, gp, NULL);
    expect_usage_error(&r, "--json");
    run_eval(&r, dp, NULL);
    expect_usage_error(&r, "DISP GT");
    run_eval(&r, dp, gp, gp, NULL);
    expect_usage_error(&r, "extra");
    run_eval(&r, dp, pp, NULL); /* a PNG GT needs its scale */
    expect_usage_error(&r, "--gt-scale");
}

static void help_prints_usage_and_exits_0(void **state)
{
    run_result r;
    run_eval(&r, "--help", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: stereo-eval"));
    assert_string_equal(r.err, "");
}

/* ---- real data ----------------------------------------------------------------------------- */

static void teddy_ground_truth_against_itself_is_perfect(void **state)
{
    const char *data = getenv("STEREO_DATA");
    char gt[PATH_MAX], mask[PATH_MAX], right[PATH_MAX];
    snprintf(gt, sizeof gt, "%s/middlebury2003/teddy/disp2.png", data ? data : "../shared/data");
    snprintf(mask, sizeof mask, "%s/middlebury2003/teddy/occl.png", data ? data : "../shared/data");
    snprintf(right, sizeof right, "%s/middlebury2003/teddy/disp6.png",
             data ? data : "../shared/data");
    if (access(gt, R_OK) != 0) {
        print_message("# SKIP teddy self-evaluation: %s not found (set STEREO_DATA)\n", gt);
        skip();
    }
    run_result r;
    long n_all, n_nonocc, n_right;
    run_eval(&r, "--gt-scale", "4", "--disp-scale", "4", gt, gt, NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(sscanf(r.out, "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=100.00 "
                                   "n=%ld", &n_all),
                     1);
    assert_true(n_all > 0 && n_all <= 450 * 375);
    /* The occlusion mask and the right-view GT both remove pixels, but not most of them. */
    run_eval(&r, "--gt-scale", "4", "--disp-scale", "4", "--mask", mask, gt, gt, NULL);
    assert_int_equal(sscanf(r.out, "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=100.00 "
                                   "n=%ld", &n_nonocc),
                     1);
    run_eval(&r, "--gt-scale", "4", "--disp-scale", "4", "--gt-right", right, gt, gt, NULL);
    assert_int_equal(sscanf(r.out, "bad1=0.00 bad2=0.00 bad4=0.00 avgerr=0.000 density=100.00 "
                                   "n=%ld", &n_right),
                     1);
    assert_true(n_nonocc < n_all && n_nonocc > n_all * 8 / 10);
    assert_true(n_right < n_all && n_right > n_all * 8 / 10);
}

/* ---- fixture ------------------------------------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state)
{
    const char *build = getenv("STEREO_BUILD");
    snprintf(eval_exe, sizeof eval_exe, "%s/stereo-eval", build && *build ? build : "build");
    strcpy(tmpdir, "/tmp/test_eval.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    return nftw(tmpdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_made_4x3_gives_exact_metrics),
        cmocka_unit_test(json_output_has_the_same_numbers),
        cmocka_unit_test(ground_truth_beyond_the_matched_range),
        cmocka_unit_test(confidence_ranks_the_valid_pixels_ties_counted_by_fraction),
        cmocka_unit_test(confidence_errors),
        cmocka_unit_test(png16_disparity_uses_scale_256_by_default_and_disp_scale_overrides),
        cmocka_unit_test(gt_scale_divides_8bit_ground_truth),
        cmocka_unit_test(fill_interior_run_takes_smaller_neighbour),
        cmocka_unit_test(fill_row_ends_copy_the_one_valid_neighbour),
        cmocka_unit_test(fill_empty_rows_take_nearest_row_vertically),
        cmocka_unit_test(fill_all_invalid_map_becomes_zero),
        cmocka_unit_test(mask_keeps_only_pixels_marked_255),
        cmocka_unit_test(gt_right_removes_occluded_and_inconsistent_pixels),
        cmocka_unit_test(border_excludes_edge_pixels),
        cmocka_unit_test(size_mismatch_is_an_input_error_naming_both_files),
        cmocka_unit_test(mask_size_mismatch_is_an_input_error),
        cmocka_unit_test(missing_input_file_is_an_input_error),
        cmocka_unit_test(usage_errors_exit_2_naming_the_option),
        cmocka_unit_test(help_prints_usage_and_exits_0),
        cmocka_unit_test(teddy_ground_truth_against_itself_is_perfect),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
