/* SPDX-License-Identifier: Apache-2.0 */
/* test_calib_c.c — hal/calib.h: the calibration YAML reader (values exact, every malformed input
 * refused with "<path>: line N: <key>: ..." and every truncation refused) and the maps computed
 * in C (exact on cases with a known answer: identity, half-pixel and tie shifts, negative
 * positions; against a separately written reference on a distorted, rotated, rational model;
 * the same maps from the YAML and from a map file); rig files of N cameras (calib_rig_*: values,
 * each camera's map equal to the pair maps of the same numbers, a two-camera rig through
 * calib_load_maps, every bad input and truncation refused with "<path>: line N: <key>: ...", the
 * pair map file names). The comparison with OpenCV itself is in tests/test_calibrate.py and
 * tests/test_calibrate_rig.py. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"
#include "mapfile.h"

#include "tmpdir.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* A calibration as cv2.FileStorage writes it (matrix data wrapped over lines), with an ignored
 * string, an ignored matrix and a comment. Values are exact in binary where the maps test
 * depends on it. Line numbers matter for the error tests: they are found by searching. */
static const char base_yaml[] =
    "%YAML:1.0\n"
    "---\n"
    "image_width: 64\n"
    "image_height: 48\n"
    "rectified_width: 60\n"
    "rectified_height: 40\n"
    "calibration_time: \"Sat 22 Nov 2026 # not a comment\"\n"
    "M1: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 5.0000000000000000e+01, 0., 3.2000000000000000e+01, 0.,\n"
    "       5.1000000000000000e+01, 2.4000000000000000e+01, 0., 0., 1. ]\n"
    "D1: !!opencv-matrix\n"
    "   rows: 1\n"
    "   cols: 5\n"
    "   dt: d\n"
    "   data: [ -1.0000000000000001e-01, 2.0000000000000000e-02,\n"
    "       1.0000000000000000e-03, -2.0000000000000000e-03, 5.0e-03 ]\n"
    "M2: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 5.2e+01, 0., 3.1e+01, 0., 5.2e+01, 2.5e+01, 0., 0., 1. ]\n"
    "D2: !!opencv-matrix\n"
    "   rows: 1\n"
    "   cols: 5\n"
    "   dt: d\n"
    "   data: [ -8.0e-02, 1.0e-02, 0., 0., 0. ]\n"
    "# the pose of the right camera\n"
    "R: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\n"
    "T: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 1\n"
    "   dt: d\n"
    "   data: [ -6.0e-02, 0., 8.0e-03 ]\n"
    "E: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 0., 0., 0., 0., 0., 0., 0., 0., 0. ]\n"
    "R1: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\n"
    "R2: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\n"
    "P1: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 4\n"
    "   dt: d\n"
    "   data: [ 4.8e+01, 0., 3.0e+01, 0., 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\n"
    "P2: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 4\n"
    "   dt: d\n"
    "   data: [ 4.8e+01, 0., 3.0e+01, -2.88e+00, 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\n"
    "Q: !!opencv-matrix\n"
    "   rows: 4\n"
    "   cols: 4\n"
    "   dt: d\n"
    "   data: [ 1., 0., 0., -3.0e+01, 0., 1., 0., -2.0e+01, 0., 0., 0., 4.8e+01, 0., 0.,\n"
    "       1.6666666666666667e+01, 0. ]\n"
    "rms: 2.5e-01\n";

/* base_yaml with the first occurrence of `from` replaced by `to`; *line gets the 1-based line
 * of the replacement (for the error tests). */
static char *yaml_with(const char *from, const char *to, int *line)
{
    const char *at = strstr(base_yaml, from);
    assert_non_null(at);
    size_t pre = (size_t)(at - base_yaml), n = strlen(base_yaml) - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, base_yaml, pre);
    strcpy(s + pre, to);
    strcat(s, at + strlen(from));
    if (line) {
        *line = 1;
        for (const char *p = base_yaml; p < at; p++)
            *line += *p == '\n';
    }
    return s;
}

static int read_text(const char *text, stereo_calib *c, char *err, size_t errlen)
{
    char path[PATH_MAX];
    write_text(tmp_path(path, "calib.yml"), text, strlen(text));
    return calib_read_yaml(path, c, err, errlen);
}

/* ---- reading ------------------------------------------------------------------------------- */

static void test_read_values(void **state)
{
    stereo_calib c;
    char err[512] = "";
    assert_int_equal(read_text(base_yaml, &c, err, sizeof err), 0);
    assert_int_equal(c.image_width, 64);
    assert_int_equal(c.image_height, 48);
    assert_int_equal(c.rect_width, 60);
    assert_int_equal(c.rect_height, 40);
    assert_true(c.M[0][0][0] == 50 && c.M[0][0][2] == 32 && c.M[0][1][1] == 51 &&
                c.M[0][1][2] == 24 && c.M[0][2][2] == 1 && c.M[0][1][0] == 0);
    assert_true(c.M[1][0][0] == 52 && c.M[1][0][2] == 31);
    assert_int_equal(c.ndist[0], 5);
    assert_true(c.D[0][0] == -1.0000000000000001e-01 && c.D[0][3] == -2e-3 && c.D[0][4] == 5e-3);
    assert_true(c.D[0][5] == 0 && c.D[0][7] == 0);
    assert_true(c.T[0] == -0.06 && c.T[2] == 0.008);
    assert_true(c.P[1][0][3] == -2.88 && c.P[1][2][2] == 1);
    assert_true(c.Q[3][2] == 1.6666666666666667e+01 && c.Q[0][3] == -30);
    assert_true(c.rms == 0.25);
    assert_true(fabs(calib_baseline(&c) - sqrt(0.06 * 0.06 + 0.008 * 0.008)) < 1e-15);
    assert_true(calib_focal_px(&c) == 48);
}

static void test_read_variants(void **state)
{
    stereo_calib c;
    char err[512] = "";
    /* D as a column, 4 coefficients, 8, and OpenCV's 14 with zero thin-prism / tilt terms */
    char *s = yaml_with("   rows: 1\n   cols: 5\n", "   rows: 5\n   cols: 1\n", NULL);
    assert_int_equal(read_text(s, &c, err, sizeof err), 0);
    assert_true(c.ndist[0] == 5 && c.D[0][4] == 5e-3);
    free(s);
    s = yaml_with("   cols: 5\n   dt: d\n   data: [ -1.0000000000000001e-01, 2.0000000000000000e-02,\n"
                  "       1.0000000000000000e-03, -2.0000000000000000e-03, 5.0e-03 ]",
                  "   cols: 4\n   dt: d\n   data: [ -0.1, 0.02, 0.001, -0.002 ]", NULL);
    assert_int_equal(read_text(s, &c, err, sizeof err), 0);
    assert_true(c.ndist[0] == 4 && c.D[0][3] == -0.002 && c.D[0][4] == 0);
    free(s);
    s = yaml_with("   cols: 5\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0. ]",
                  "   cols: 8\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0., 0.5, 0.25, "
                  "0.125 ]", NULL);
    assert_int_equal(read_text(s, &c, err, sizeof err), 0);
    assert_true(c.ndist[1] == 8 && c.D[1][5] == 0.5 && c.D[1][7] == 0.125);
    free(s);
    s = yaml_with("   cols: 5\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0. ]",
                  "   cols: 14\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0., 0.5, 0.25, "
                  "0.125,\n       0., 0., 0., 0., 0., 0. ]", NULL);
    assert_int_equal(read_text(s, &c, err, sizeof err), 0);
    assert_true(c.ndist[1] == 8 && c.D[1][7] == 0.125);
    free(s);
    /* T as a row; "%YAML 1.0"; no rectified size (-> the image size); no rms (-> -1) */
    s = yaml_with("   rows: 3\n   cols: 1\n   dt: d\n   data: [ -6.0e-02",
                  "   rows: 1\n   cols: 3\n   dt: d\n   data: [ -6.0e-02", NULL);
    assert_int_equal(read_text(s, &c, err, sizeof err), 0);
    assert_true(c.T[0] == -0.06 && c.T[2] == 0.008);
    free(s);
    s = yaml_with("%YAML:1.0\n", "%YAML 1.0\n", NULL);
    char *t = strstr(s, "rectified_width");
    memcpy(t, "rectified_wxxth", 15);
    t = strstr(s, "rectified_height");
    memcpy(t, "rectified_hxxxht", 16);
    t = strstr(s, "rms:");
    memcpy(t, "xyz:", 4);
    assert_int_equal(read_text(s, &c, err, sizeof err), 0);
    assert_true(c.rect_width == 64 && c.rect_height == 48 && c.rms == -1);
    free(s);
    /* CRLF line endings */
    size_t n = strlen(base_yaml), k = 0;
    char *crlf = malloc(2 * n + 1);
    assert_non_null(crlf);
    for (size_t i = 0; i < n; i++) {
        if (base_yaml[i] == '\n')
            crlf[k++] = '\r';
        crlf[k++] = base_yaml[i];
    }
    crlf[k] = '\0';
    assert_int_equal(read_text(crlf, &c, err, sizeof err), 0);
    assert_true(c.rms == 0.25 && c.Q[3][2] == 1.6666666666666667e+01);
    free(crlf);
}

/* Every malformed input: -1, "<path>: " first, the expected words, and the right line. */
static void test_read_errors(void **state)
{
    static const struct {
        const char *from, *to, *expect; /* expect: a substring of the message */
        int has_line;                   /* the message names the line of `from` (+ offset) */
        int line_offset;
    } cases[] = {
        {"%YAML:1.0\n", "YAML:1.0\n", "%YAML:1.0", 1, 0},
        {"---\n", "--\n", "'---'", 1, 0},
        {"image_width: 64\n", "image_width: 64.5\n", "image_width: '64.5' is not an integer", 1, 0},
        {"image_width: 64\n", "image_width: 0\n", "image_width: '0' is not an integer", 1, 0},
        {"image_width: 64\n", "image_size: 64\n", "missing key 'image_width'", 0, 0},
        {"image_height: 48\n", "image_height: 48\nimage_height: 48\n", "appears twice", 1, 1},
        {"rectified_height: 40\n", "", "must be given together", 0, 0},
        /* sizes beyond the stage's (a 1.5 KB file would compute 16000x16000 maps, 3 GB) */
        {"rectified_width: 60\nrectified_height: 40\n", "rectified_width: 16000\nrectified_height: 16000\n",
         "rectified_width: 16000 is larger than the largest image the matcher takes (8192x8192)", 1, 0},
        {"image_width: 64\n", "image_width: 46000\n",
         "image_width: 46000 is larger than the largest image the matcher takes (8192x8192)", 1, 0},
        {"image_height: 48\n", "image_height: 8193\n", "image_height: 8193 is larger than", 1, 0},
        {"Q: !!opencv-matrix", "Qx: !!opencv-matrix", "missing key 'Q'", 0, 0},
        {"R2: !!opencv-matrix", "R3: !!opencv-matrix", "missing key 'R2'", 0, 0},
        {"P1: !!opencv-matrix\n   rows: 3\n   cols: 4\n", "P1: !!opencv-matrix\n   rows: 4\n   cols: 3\n",
         "P1: 4x3 matrix, expected 3x4", 1, 0},
        {"5.1000000000000000e+01", "5.1000000000000000e+0x1", "M1: '5.1000000000000000e+0x1' is not a finite number", 1, 0},
        {"5.2e+01, 0., 3.1e+01", ".Nan, 0., 3.1e+01", "M2: '.Nan' is not a finite number", 1, 0},
        {"5.2e+01, 0., 3.1e+01", "inf, 0., 3.1e+01", "M2: 'inf' is not a finite number", 1, 0},
        {"5.2e+01, 0., 3.1e+01", "5.2e+01,, 3.1e+01", "M2: empty element", 1, 0},
        {"5.2e+01, 0., 3.1e+01", "5.2e+01 0. 3.1e+01", "M2: expected ','", 1, 0},
        {"[ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\nT:", "[ 1., 0., 0., 0., 1., 0., 0., 0. ]\nT:",
         "R: data has 8 numbers, but rows x cols = 3x3", 1, -4},
        {"   cols: 5\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0. ]",
         "   cols: 6\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0., 0. ]",
         "D2: 1x6: expected 4, 5 or 8 coefficients", 1, -2},
        {"   cols: 5\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0. ]",
         "   cols: 14\n   dt: d\n   data: [ -8.0e-02, 1.0e-02, 0., 0., 0., 0., 0., 0., 1e-3, 0., 0., 0., 0., 0. ]",
         "D2: 1x14: expected", 1, -2},
        {"   dt: d\n   data: [ -8.0e-02", "   dt: 2d\n   data: [ -8.0e-02", "D2: dt '2d' is not a one-channel", 1, 0},
        {"   dt: d\n   data: [ -8.0e-02", "   dt: d\n   step: 8\n   data: [ -8.0e-02", "unexpected matrix field 'step'", 1, 1},
        {"   dt: d\n   data: [ -8.0e-02", "   data: [ -8.0e-02", "D2: matrix without 'dt'", 1, -3},
        {"   data: [ 0., 0., 0., 0., 0., 0., 0., 0., 0. ]\n", "   data: [ 0., 0., 0., 0., 0., 0., 0., 0., 0.\n",
         "E: data has no closing ']'", 1, 0},
        {"   data: [ 0., 0., 0., 0., 0., 0., 0., 0., 0. ]\n", "   data: [ 0., 0., 0., 0., 0., 0., 0., 0., 0. ] x\n",
         "E: text after the closing ']'", 1, 0},
        {"\"Sat 22 Nov 2026 # not a comment\"", "\"Sat 22 Nov", "calibration_time: unterminated string", 1, 0},
        {"   rows: 3\n   cols: 3\n   dt: d\n   data: [ 5.0", "   rows: 3\n\tcols: 3\n   dt: d\n   data: [ 5.0", "tab in the indentation", 1, 1},
        {"M1: !!opencv-matrix", "M1: [ 1, 2 ]", "M1: expected a matrix (!!opencv-matrix)", 1, 0},
        {"M1: !!opencv-matrix", "M1 !!opencv-matrix", "expected 'key: value'", 1, 0},
        {"data: [ 5.0000000000000000e+01,", "data: [ -5.0000000000000000e+01,", "M1: focal lengths must be positive", 1, -4},
        {"rms: 2.5e-01\n", "rms: -1\n", "rms: '-1' is not a number >= 0", 1, 0},
        {"rms: 2.5e-01\n", "rms: 2.5e-01\n...\nmore: 1\n", "text after the document end", 1, 2},
    };
    char path[PATH_MAX];
    tmp_path(path, "calib.yml");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int line;
        char *s = yaml_with(cases[k].from, cases[k].to, &line);
        stereo_calib c;
        char err[512] = "", want[PATH_MAX + 32];
        int rc = read_text(s, &c, err, sizeof err);
        if (rc != -1 || !strstr(err, cases[k].expect))
            fail_msg("case %zu (%s): rc %d, message \"%s\", expected \"%s\"", k, cases[k].to, rc,
                     err, cases[k].expect);
        snprintf(want, sizeof want, "%s: ", path);
        if (strncmp(err, want, strlen(want)) != 0)
            fail_msg("case %zu: message \"%s\" does not start with the path", k, err);
        snprintf(want, sizeof want, "%s: line %d: ", path, line + cases[k].line_offset);
        if (cases[k].has_line && strncmp(err, want, strlen(want)) != 0)
            fail_msg("case %zu: message \"%s\" does not start with \"%s\"", k, err, want);
        assert_int_equal(c.image_width, 0); /* nothing half-read is handed out */
        free(s);
    }
    /* not there, empty, binary (a map file) */
    stereo_calib c;
    char err[512];
    assert_int_equal(calib_read_yaml(tmp_path(path, "missing.yml"), &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "missing.yml: cannot open"));
    write_text(tmp_path(path, "empty.yml"), "", 0);
    assert_int_equal(calib_read_yaml(path, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "empty.yml: empty file"));
    write_text(tmp_path(path, "bin.yml"), "%YAML:1.0\n---\n\0\1\2", 17);
    assert_int_equal(calib_read_yaml(path, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "bin.yml: binary data"));
}

/* A file cut anywhere before its last required value is refused, with the path first. */
static void test_read_truncated(void **state)
{
    char path[PATH_MAX];
    tmp_path(path, "cut.yml");
    const char *last = strstr(base_yaml, "1.6666666666666667e+01, 0. ]"); /* end of Q */
    size_t limit = (size_t)(last - base_yaml) + strlen("1.6666666666666667e+01, 0. ]") - 1;
    for (size_t n = 0; n < limit; n++) {
        stereo_calib c;
        char err[512] = "";
        write_text(path, base_yaml, n);
        if (calib_read_yaml(path, &c, err, sizeof err) != -1)
            fail_msg("a file cut to %zu bytes was accepted", n);
        if (strncmp(err, path, strlen(path)) != 0)
            fail_msg("cut to %zu: message \"%s\" does not name the file", n, err);
    }
}

/* ---- maps ---------------------------------------------------------------------------------- */

/* A pinhole calibration: M = P[:, 0:3] = [f 0 cx; 0 f cy; 0 0 1], R = I, no distortion. */
static void pinhole(stereo_calib *c, int w, int h, double f, double cx_cam, double cx_rect)
{
    memset(c, 0, sizeof *c);
    c->image_width = c->rect_width = w;
    c->image_height = c->rect_height = h;
    for (int k = 0; k < 2; k++) {
        c->M[k][0][0] = c->M[k][1][1] = f;
        c->M[k][0][2] = cx_cam;
        c->M[k][1][2] = h / 2;
        c->M[k][2][2] = 1;
        c->P[k][0][0] = c->P[k][1][1] = f;
        c->P[k][0][2] = cx_rect;
        c->P[k][1][2] = h / 2;
        c->P[k][2][2] = 1;
        for (int i = 0; i < 3; i++)
            c->Rrect[k][i][i] = 1;
        c->ndist[k] = 5;
    }
}

static int32_t pos32(const stereo_map *m, size_t i, int axis)
{
    int f = axis == 0 ? m->frac[i] & 31 : (m->frac[i] >> 5) & 31;
    return (int32_t)m->xy[2 * i + axis] * 32 + f;
}

static void test_maps_identity(void **state)
{
    stereo_calib c;
    stereo_map m[2];
    char err[256];
    pinhole(&c, 37, 23, 40, 18, 18);
    assert_int_equal(calib_compute_maps(&c, 0, 0, m, err, sizeof err), 0);
    for (int k = 0; k < 2; k++) {
        assert_true(m[k].width == 37 && m[k].height == 23 && m[k].src_width == 37 &&
                    m[k].src_height == 23);
        for (int y = 0; y < 23; y++)
            for (int x = 0; x < 37; x++) {
                size_t i = (size_t)y * 37 + x;
                assert_int_equal(m[k].xy[2 * i], x);
                assert_int_equal(m[k].xy[2 * i + 1], y);
                assert_int_equal(m[k].frac[i], 0);
            }
    }
    mapfile_free(m);
}

/* Shifts where the exact answer is known (f = 64 keeps the arithmetic exact): source x =
 * u + (cx_cam - cx_rect). Ties (k + 1/2 in 1/32 px) go to even, as OpenCV's cvRound. */
static void test_maps_shifts(void **state)
{
    static const struct {
        double shift;
        int16_t x0;   /* integer part at u = 0 */
        uint16_t fx0; /* fraction at u = 0 */
    } cases[] = {
        {0.5, 0, 16},           {1.0 / 64, 0, 0},   /* 0.5/32: tie, to the even 0 */
        {3.0 / 64, 0, 2},       /* 1.5/32: tie, to the even 2 */
        {5.0 / 64, 0, 2},       /* 2.5/32: tie, to 2 */
        {-10.25, -11, 24},      /* negative: floor, and the fraction counts up from it */
        {-1.0 / 64, 0, 0},      /* -0.5/32: tie, to 0 */
        {-3.0 / 64, -1, 30},    /* -1.5/32: tie, to -2/32 */
        {7.96875, 7, 31},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        stereo_calib c;
        stereo_map m[2];
        char err[256];
        pinhole(&c, 16, 4, 64, 8 + cases[k].shift, 8);
        assert_int_equal(calib_compute_maps(&c, 0, 0, m, err, sizeof err), 0);
        for (int u = 0; u < 16; u++) {
            int32_t want = (cases[k].x0 + u) * 32 + cases[k].fx0;
            if (pos32(&m[0], (size_t)u, 0) != want)
                fail_msg("shift %g: u %d at %d/32, expected %d/32", cases[k].shift, u,
                         pos32(&m[0], (size_t)u, 0), want);
            assert_int_equal(pos32(&m[1], (size_t)(16 + u), 1), 32); /* row 1, no vertical shift */
        }
        mapfile_free(m);
    }
}

/* The reference, written apart from calib.c: the ray by Cramer's rule on (P R) X = (u, v, 1),
 * then calib.h's distortion formula, in 1/32 px (not rounded). */
static void reference_position(const stereo_calib *c, int k, int u, int v, double *sx,
                               double *sy)
{
    double a[3][3], b[3] = {u, v, 1}, X[3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            a[i][j] = 0;
            for (int l = 0; l < 3; l++)
                a[i][j] += c->P[k][i][l] * c->Rrect[k][l][j];
        }
#define DET3(m) (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - \
                 m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) + \
                 m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
    double det = DET3(a);
    for (int col = 0; col < 3; col++) {
        double t[3][3];
        memcpy(t, a, sizeof t);
        for (int i = 0; i < 3; i++)
            t[i][col] = b[i];
        X[col] = DET3(t) / det;
    }
#undef DET3
    double x = X[0] / X[2], y = X[1] / X[2], r2 = x * x + y * y;
    const double *d = c->D[k];
    double radial = (1 + d[0] * r2 + d[1] * r2 * r2 + d[4] * r2 * r2 * r2) /
                    (1 + d[5] * r2 + d[6] * r2 * r2 + d[7] * r2 * r2 * r2);
    double xd = x * radial + 2 * d[2] * x * y + d[3] * (r2 + 2 * x * x);
    double yd = y * radial + d[2] * (r2 + 2 * y * y) + 2 * d[3] * x * y;
    *sx = 32 * (c->M[k][0][0] * xd + c->M[k][0][2]);
    *sy = 32 * (c->M[k][1][1] * yd + c->M[k][1][2]);
}

static void test_maps_reference(void **state)
{
    stereo_calib c;
    char err[512];
    assert_int_equal(read_text(base_yaml, &c, err, sizeof err), 0);
    /* rotate the rectified frames a little and switch the right camera to the rational model */
    double ang[2] = {0.03, -0.02};
    for (int k = 0; k < 2; k++) {
        double cs = cos(ang[k]), sn = sin(ang[k]);
        double r[3][3] = {{cs, 0, sn}, {0, 1, 0}, {-sn, 0, cs}};
        double r2[3][3] = {{1, 0, 0}, {0, cos(ang[1 - k]), -sin(ang[1 - k])},
                           {0, sin(ang[1 - k]), cos(ang[1 - k])}};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                c.Rrect[k][i][j] = r[i][0] * r2[0][j] + r[i][1] * r2[1][j] + r[i][2] * r2[2][j];
    }
    c.D[1][2] = 0.002;
    c.D[1][3] = -0.001;
    c.D[1][4] = 0.01;
    c.D[1][5] = 0.05;
    c.D[1][6] = -0.02;
    c.D[1][7] = 0.004;
    c.ndist[1] = 8;
    stereo_map m[2];
    assert_int_equal(calib_compute_maps(&c, 61, 43, m, err, sizeof err), 0);
    double worst = 0;
    for (int k = 0; k < 2; k++)
        for (int v = 0; v < 43; v++)
            for (int u = 0; u < 61; u++) {
                size_t i = (size_t)v * 61 + u;
                double sx, sy;
                reference_position(&c, k, u, v, &sx, &sy);
                worst = fmax(worst, fabs(pos32(&m[k], i, 0) - sx));
                worst = fmax(worst, fabs(pos32(&m[k], i, 1) - sy));
                assert_true(m[k].frac[i] <= 1023);
            }
    /* rounded to the nearest 1/32: at most half a unit off the exact position */
    if (worst > 0.5 + 1e-6)
        fail_msg("maps differ from the reference by %g/32 px", worst);
    mapfile_free(m);
}

/* Far outside the image: integer parts saturate to int16, fractions stay in range. */
static void test_maps_far_away(void **state)
{
    stereo_calib c;
    stereo_map m[2];
    char err[256];
    pinhole(&c, 8, 4, 64, 8, 8 + 5e6);
    assert_int_equal(calib_compute_maps(&c, 0, 0, m, err, sizeof err), 0);
    for (size_t i = 0; i < 32; i++) {
        assert_int_equal(m[0].xy[2 * i], INT16_MIN);
        assert_true(m[0].frac[i] <= 1023);
    }
    mapfile_free(m);
    pinhole(&c, 8, 4, 64, 8, 8);
    memset(c.P[1], 0, sizeof c.P[1]);
    assert_int_equal(calib_compute_maps(&c, 0, 0, m, err, sizeof err), -1);
    assert_non_null(strstr(err, "P2 * R2 is singular"));
    assert_null(m[0].xy);
    pinhole(&c, 8, 4, 64, 8, 8);
    assert_int_equal(calib_compute_maps(&c, 0, 20000, m, err, sizeof err), -1);
    assert_non_null(strstr(err, "out of range"));
    assert_int_equal(calib_compute_maps(&c, 16000, 16000, m, err, sizeof err), -1);
    assert_non_null(strstr(err, "16000x16000 is larger than the largest image the matcher takes"));
    assert_null(m[0].xy);
}

/* The YAML and the map file written from it give the same maps; sizes are checked. */
static void test_load_maps(void **state)
{
    char yml[PATH_MAX], bin[PATH_MAX], other[PATH_MAX], err[512];
    write_text(tmp_path(yml, "rig.yml"), base_yaml, strlen(base_yaml));
    stereo_map a[2], b[2];
    assert_int_equal(calib_load_maps(yml, 64, 48, a, err, sizeof err), 0);
    assert_true(a[0].width == 60 && a[0].height == 40 && a[1].src_width == 64);
    assert_int_equal(mapfile_write(tmp_path(bin, "rig.maps"), a, err, sizeof err), 0);
    assert_int_equal(calib_load_maps(bin, 64, 48, b, err, sizeof err), 0);
    for (int k = 0; k < 2; k++) {
        assert_memory_equal(a[k].xy, b[k].xy, 4 * 60 * 40);
        assert_memory_equal(a[k].frac, b[k].frac, 2 * 60 * 40);
    }
    mapfile_free(b);
    /* camera images of another size: refused, naming the file and both sizes */
    assert_int_equal(calib_load_maps(bin, 640, 480, b, err, sizeof err), -1);
    assert_non_null(strstr(err, "rig.maps: maps are for 64x48 camera images, but the images are 640x480"));
    assert_null(b[0].xy);
    assert_int_equal(calib_load_maps(yml, 65, 48, b, err, sizeof err), -1);
    assert_non_null(strstr(err, "rig.yml: maps are for 64x48"));
    /* neither kind of file */
    write_text(tmp_path(other, "notes.txt"), "hello\n", 6);
    assert_int_equal(calib_load_maps(other, 0, 0, b, err, sizeof err), -1);
    assert_non_null(strstr(err, "notes.txt: neither a map file"));
    /* a broken YAML through the loader keeps the reader's message */
    char *s = yaml_with("   rows: 4\n", "   rows: 5\n", NULL);
    write_text(yml, s, strlen(s));
    free(s);
    assert_int_equal(calib_load_maps(yml, 0, 0, b, err, sizeof err), -1);
    assert_non_null(strstr(err, "rig.yml: line "));
    assert_non_null(strstr(err, "Q: data has 16 numbers, but rows x cols = 5x4"));
    mapfile_free(a);
}

/* ---- rig files (N cameras) ------------------------------------------------------------------ */

/* A 3-camera rig as stereo-calibrate --view writes it (cx, camK_images and camK_rms ignored):
 * cam0 and cam1 hold base_yaml's M1 D1 R1 P1 and M2 D2 R2 P2, cam2 is turned about y
 * (cos 0.96, sin 0.28: exact in decimal), has the rational model and sits twice as far. The
 * last value is cam2's ratio, so that a file cut anywhere before its end misses a key. */
static const char rig_yaml[] =
    "%YAML:1.0\n"
    "---\n"
    "rig_cameras: 3\n"
    "reference: 0\n"
    "image_width: 64\n"
    "image_height: 48\n"
    "rectified_width: 60\n"
    "rectified_height: 40\n"
    "focal_px: 4.8e+01\n"
    "cx: 3.0e+01\n"
    "cy: 2.0e+01\n"
    "cam0_images: \"cam0/*.png\"\n"
    "cam0_M: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 5.0000000000000000e+01, 0., 3.2000000000000000e+01, 0.,\n"
    "       5.1000000000000000e+01, 2.4000000000000000e+01, 0., 0., 1. ]\n"
    "cam0_D: !!opencv-matrix\n"
    "   rows: 1\n"
    "   cols: 5\n"
    "   dt: d\n"
    "   data: [ -1.0000000000000001e-01, 2.0000000000000000e-02,\n"
    "       1.0000000000000000e-03, -2.0000000000000000e-03, 5.0e-03 ]\n"
    "cam0_R: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\n"
    "cam0_P: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 4\n"
    "   dt: d\n"
    "   data: [ 4.8e+01, 0., 3.0e+01, 0., 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\n"
    "cam0_baseline_ratio: 0.\n"
    "cam0_rms: 1.0e-01\n"
    "cam1_M: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 5.2e+01, 0., 3.1e+01, 0., 5.2e+01, 2.5e+01, 0., 0., 1. ]\n"
    "cam1_D: !!opencv-matrix\n"
    "   rows: 1\n"
    "   cols: 5\n"
    "   dt: d\n"
    "   data: [ -8.0e-02, 1.0e-02, 0., 0., 0. ]\n"
    "cam1_R: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\n"
    "cam1_P: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 4\n"
    "   dt: d\n"
    "   data: [ 4.8e+01, 0., 3.0e+01, -2.88e+00, 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\n"
    "cam1_baseline_ratio: 1.\n"
    "cam2_M: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 4.9e+01, 0., 3.3e+01, 0., 5.0e+01, 2.3e+01, 0., 0., 1. ]\n"
    "cam2_D: !!opencv-matrix\n"
    "   rows: 1\n"
    "   cols: 8\n"
    "   dt: d\n"
    "   data: [ -1.2e-01, 4.0e-02, 5.0e-04, -2.5e-04, 1.0e-03, 1.0e-02, -4.0e-03, 2.0e-03 ]\n"
    "cam2_R: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 9.6e-01, 0., 2.8e-01, 0., 1., 0., -2.8e-01, 0., 9.6e-01 ]\n"
    "cam2_P: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 4\n"
    "   dt: d\n"
    "   data: [ 4.8e+01, 0., 3.0e+01, -5.76e+00, 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\n"
    "cam2_baseline_ratio: 2.\n";

/* text with the first occurrence of `from` replaced by `to`; *line: the line of `from` */
static char *text_with(const char *text, const char *from, const char *to, int *line)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t pre = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, text, pre);
    strcpy(s + pre, to);
    strcat(s, at + strlen(from));
    if (line) {
        *line = 1;
        for (const char *p = text; p < at; p++)
            *line += *p == '\n';
    }
    return s;
}

static void test_rig_read(void **state)
{
    (void)state;
    char path[PATH_MAX], err[512];
    write_text(tmp_path(path, "rig3.yml"), rig_yaml, strlen(rig_yaml));
    calib_rig g;
    assert_int_equal(calib_rig_read(path, &g, err, sizeof err), 0);
    assert_int_equal(g.ncams, 3);
    assert_int_equal(g.reference, 0);
    assert_int_equal(g.first, 1);
    assert_true(g.image_width == 64 && g.image_height == 48 && g.rect_width == 60 &&
                g.rect_height == 40);
    assert_true(g.focal == 48 && g.cy == 20 && g.cx == 30);
    assert_true(g.M[0][0][0] == 50 && g.M[1][1][2] == 25 && g.M[2][0][2] == 33);
    assert_true(g.ndist[0] == 5 && g.ndist[1] == 5 && g.ndist[2] == 8);
    assert_true(g.D[0][4] == 5.0e-03 && g.D[2][7] == 2.0e-03 && g.D[1][5] == 0);
    assert_true(g.R[2][0][2] == 0.28 && g.R[2][2][0] == -0.28 && g.R[0][1][1] == 1);
    assert_true(g.P[1][0][3] == -2.88 && g.P[2][0][3] == -5.76);
    assert_true(g.ratio[0] == 0 && g.ratio[1] == 1 && g.ratio[2] == 2);

    /* camera 1 the reference: camera 0 is then the first other one (ratio 1, to its right),
     * camera 2 on the other side (ratio -1) */
    static const char *const edits[][2] = {
        {"reference: 0\n", "reference: 1\n"},
        {"3.0e+01, 0., 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\ncam0_baseline_ratio: 0.",
         "3.0e+01, -2.88e+00, 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\n"
         "cam0_baseline_ratio: 1."},
        {"-2.88e+00, 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\ncam1_baseline_ratio: 1.",
         "0., 0., 4.8e+01, 2.0e+01, 0., 0., 0., 1., 0. ]\ncam1_baseline_ratio: 0."},
        {"-5.76e+00", "2.88e+00"},
        {"cam2_baseline_ratio: 2.", "cam2_baseline_ratio: -1."},
    };
    char *s = strdup(rig_yaml);
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        char *t = text_with(s, edits[k][0], edits[k][1], NULL);
        free(s);
        s = t;
    }
    write_text(path, s, strlen(s));
    free(s);
    assert_int_equal(calib_rig_read(path, &g, err, sizeof err), 0);
    assert_true(g.reference == 1 && g.first == 0);
    assert_true(g.ratio[0] == 1 && g.ratio[1] == 0 && g.ratio[2] == -1);
    /* the loader fails cleanly on a missing file */
    assert_int_equal(calib_rig_read(tmp_path(path, "none.yml"), &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "none.yml: cannot open"));
}

/* Each camera's map is the one calib_compute_maps gives for the same numbers: a two-camera rig
 * file gives a pair YAML's maps, and every camera of a larger rig is computed the same way. */
static void test_rig_maps(void **state)
{
    (void)state;
    char path[PATH_MAX], pair[PATH_MAX], err[512];
    write_text(tmp_path(path, "rig3.yml"), rig_yaml, strlen(rig_yaml));
    calib_rig g;
    stereo_map rm[CALIB_RIG_MAX];
    assert_int_equal(calib_rig_load(path, 64, 48, &g, rm, err, sizeof err), 0);
    for (int k = 0; k < 3; k++)
        assert_true(rm[k].width == 60 && rm[k].height == 40 && rm[k].src_width == 64 &&
                    rm[k].src_height == 48);
    assert_null(rm[3].xy);
    /* cam0, cam1 against base_yaml (the same numbers) through calib_load_maps */
    write_text(tmp_path(pair, "pair.yml"), base_yaml, strlen(base_yaml));
    stereo_map pm[2];
    assert_int_equal(calib_load_maps(pair, 64, 48, pm, err, sizeof err), 0);
    for (int k = 0; k < 2; k++) {
        assert_memory_equal(rm[k].xy, pm[k].xy, 4 * 60 * 40);
        assert_memory_equal(rm[k].frac, pm[k].frac, 2 * 60 * 40);
    }
    mapfile_free(pm);
    /* cam2 (rotated, rational) against calib_compute_maps of a pair holding its numbers */
    stereo_calib c;
    assert_int_equal(calib_read_yaml(pair, &c, err, sizeof err), 0);
    memcpy(c.M[1], g.M[2], sizeof c.M[1]);
    memcpy(c.D[1], g.D[2], sizeof c.D[1]);
    memcpy(c.Rrect[1], g.R[2], sizeof c.Rrect[1]);
    memcpy(c.P[1], g.P[2], sizeof c.P[1]);
    assert_int_equal(calib_compute_maps(&c, 0, 0, pm, err, sizeof err), 0);
    assert_memory_equal(rm[2].xy, pm[1].xy, 4 * 60 * 40);
    assert_memory_equal(rm[2].frac, pm[1].frac, 2 * 60 * 40);
    mapfile_free(pm);
    /* the rotation matters: cam2's map is not cam1's */
    assert_true(memcmp(rm[1].xy, rm[2].xy, 4 * 60 * 40) != 0);
    /* another output size */
    stereo_map small[CALIB_RIG_MAX];
    assert_int_equal(calib_rig_compute_maps(&g, 16, 12, small, err, sizeof err), 0);
    assert_true(small[2].width == 16 && small[2].height == 12);
    calib_rig_free_maps(small);
    calib_rig_free_maps(rm);

    /* a two-camera rig: calib_load_maps gives its maps (reference left), equal to the pair's */
    char *s = text_with(rig_yaml, "rig_cameras: 3\n", "rig_cameras: 2\n", NULL);
    *strstr(s, "cam2_M:") = '\0';
    write_text(tmp_path(path, "rig2.yml"), s, strlen(s));
    free(s);
    stereo_map two[2];
    assert_int_equal(calib_load_maps(path, 64, 48, two, err, sizeof err), 0);
    assert_int_equal(calib_load_maps(pair, 64, 48, pm, err, sizeof err), 0);
    for (int k = 0; k < 2; k++) {
        assert_memory_equal(two[k].xy, pm[k].xy, 4 * 60 * 40);
        assert_memory_equal(two[k].frac, pm[k].frac, 2 * 60 * 40);
    }
    mapfile_free(two);
    mapfile_free(pm);
    assert_int_equal(calib_load_maps(path, 640, 480, two, err, sizeof err), -1);
    assert_non_null(strstr(err, "rig2.yml: maps are for 64x48 camera images"));
    /* three cameras where two maps are wanted: refused, pointing at the pair map files */
    write_text(tmp_path(path, "rig3.yml"), rig_yaml, strlen(rig_yaml));
    assert_int_equal(calib_load_maps(path, 0, 0, two, err, sizeof err), -1);
    assert_non_null(strstr(err, "rig3.yml: a rig file of 3 cameras"));
    assert_null(two[0].xy);
    /* a rig file is not a pair calibration, nor a pair calibration a rig file */
    assert_int_equal(calib_read_yaml(path, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "rig3.yml: a rig file (stereo-calibrate --view)"));
    assert_int_equal(calib_rig_read(pair, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "pair.yml: a two-camera calibration (M1 ... Q), not a rig"));
}

static void test_rig_errors(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to, *expect;
        int has_line, line_offset;
    } cases[] = {
        /* the number of cameras against the keys */
        {"rig_cameras: 3\n", "rig_cameras: 2\n", "cam2_M: the rig has 2 cameras (rig_cameras, "
         "line 3): cam0 .. cam1", 0, 0},
        {"rig_cameras: 3\n", "rig_cameras: 4\n", "missing key 'cam3_M'", 0, 0},
        {"rig_cameras: 3\n", "rig_cameras: 1\n", "rig_cameras: '1' is not an integer in", 1, 0},
        {"rig_cameras: 3\n", "rig_cameras: 9\n", "rig_cameras: '9' is not an integer in", 1, 0},
        {"rig_cameras: 3\n", "", "missing key 'rig_cameras'", 0, 0},
        {"reference: 0\n", "reference: 3\n", "reference: 3 is not a camera of the rig (0 .. 2)",
         1, 0},
        /* missing keys */
        {"cam2_P: !!opencv-matrix", "cam2_Q: !!opencv-matrix", "missing key 'cam2_P'", 0, 0},
        {"cam1_baseline_ratio: 1.\n", "", "missing key 'cam1_baseline_ratio'", 0, 0},
        {"focal_px: 4.8e+01\n", "", "missing key 'focal_px'", 0, 0},
        /* bad matrices */
        {"cam1_R: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n"
         "   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]",
         "cam1_R: !!opencv-matrix\n   rows: 3\n   cols: 2\n   dt: d\n"
         "   data: [ 1., 0., 0., 1., 0., 0. ]", "cam1_R: 3x2 matrix, expected 3x3", 1, 0},
        {"   data: [ 9.6e-01, 0., 2.8e-01,", "   data: [ 9.7e-01, 0., 2.8e-01,",
         "cam2_R: not a rotation", 1, -4},
        {"   data: [ 9.6e-01, 0., 2.8e-01, 0., 1., 0., -2.8e-01, 0., 9.6e-01 ]",
         "   data: [ 9.6e-01, 0., 2.8e-01, 0., -1., 0., -2.8e-01, 0., 9.6e-01 ]",
         "cam2_R: not a rotation", 1, -4},
        {"5.2e+01, 0., 3.1e+01", "-5.2e+01, 0., 3.1e+01", "cam1_M: focal lengths must be positive",
         1, -4},
        {"   data: [ -8.0e-02, 1.0e-02, 0., 0., 0. ]", "   data: [ -8.0e-02, 1.0e-02, 0., 0., 0., 0. ]",
         "cam1_D: data has 6 numbers, but rows x cols = 1x5", 1, -4},
        {"   data: [ 4.8e+01, 0., 3.0e+01, -5.76e+00, 0., 4.8e+01,",
         "   data: [ 4.9e+01, 0., 3.0e+01, -5.76e+00, 0., 4.9e+01,",
         "cam2_P: not a projection of the common rectified frame", 1, -4},
        {"-5.76e+00, 0., 4.8e+01, 2.0e+01, 0.", "-5.76e+00, 0., 4.8e+01, 2.1e+01, 0.",
         "cam2_P: not a projection of the common rectified frame", 1, -4},
        {"-5.76e+00, 0., 4.8e+01, 2.0e+01, 0.", "-5.76e+00, 0., 4.8e+01, 2.0e+01, 1.",
         "cam2_P: not a projection", 1, -4},
        /* ratios against the projections, sides */
        {"cam2_baseline_ratio: 2.", "cam2_baseline_ratio: 2.1",
         "cam2_baseline_ratio: 2.1, but the projections give 2", 1, 0},
        {"cam0_baseline_ratio: 0.", "cam0_baseline_ratio: 1.", "the reference's is 0", 1, 0},
        {"3.0e+01, -2.88e+00, 0.", "3.0e+01, 2.88e+00, 0.",
         "cam1_P: P[0][3] = 2.88: the first camera after the reference must lie to its right", 1,
         -4},
        {"focal_px: 4.8e+01\n", "focal_px: 0\n", "focal_px: must be positive", 1, 0},
        {"cy: 2.0e+01\n", "cy: .nan\n", "cy: '.nan' is not a finite number", 1, 0},
        {"cam0_images: \"cam0/*.png\"\n", "cam0_images: \"cam0/*.png\n",
         "cam0_images: unterminated string", 1, 0},
    };
    char path[PATH_MAX];
    tmp_path(path, "bad-rig.yml");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int line;
        char *s = text_with(rig_yaml, cases[k].from, cases[k].to, &line);
        write_text(path, s, strlen(s));
        free(s);
        calib_rig g;
        char err[512] = "", want[PATH_MAX + 32];
        int rc = calib_rig_read(path, &g, err, sizeof err);
        if (rc != -1 || !strstr(err, cases[k].expect))
            fail_msg("case %zu (%s): rc %d, message \"%s\", expected \"%s\"", k, cases[k].to, rc,
                     err, cases[k].expect);
        snprintf(want, sizeof want, "%s: ", path);
        if (strncmp(err, want, strlen(want)) != 0)
            fail_msg("case %zu: message \"%s\" does not start with the path", k, err);
        snprintf(want, sizeof want, "%s: line %d: ", path, line + cases[k].line_offset);
        if (cases[k].has_line && strncmp(err, want, strlen(want)) != 0)
            fail_msg("case %zu: message \"%s\" does not start with \"%s\"", k, err, want);
        assert_int_equal(g.ncams, 0); /* nothing half-read is handed out */
        /* the loader gives the reader's message and no maps */
        stereo_map m[CALIB_RIG_MAX];
        char err2[512] = "";
        assert_int_equal(calib_rig_load(path, 0, 0, &g, m, err2, sizeof err2), -1);
        assert_string_equal(err, err2);
        assert_null(m[0].xy);
    }
    /* the N-mismatch case names the key's line */
    int line;
    char *s = text_with(rig_yaml, "rig_cameras: 3\n", "rig_cameras: 2\n", NULL);
    free(text_with(rig_yaml, "cam2_M:", "cam2_M:", &line));
    write_text(path, s, strlen(s));
    free(s);
    calib_rig g;
    char err[512], want[PATH_MAX + 64];
    assert_int_equal(calib_rig_read(path, &g, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: line %d: cam2_M: the rig has 2 cameras", path, line);
    assert_non_null(strstr(err, want));
}

/* A rig file cut anywhere before its last value is refused, with the path first. */
static void test_rig_truncated(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tmp_path(path, "cut-rig.yml");
    size_t limit = strlen(rig_yaml) - strlen("2.\n");
    for (size_t n = 0; n < limit; n++) {
        calib_rig g;
        char err[512] = "";
        write_text(path, rig_yaml, n);
        if (calib_rig_read(path, &g, err, sizeof err) != -1)
            fail_msg("a rig file cut to %zu bytes was accepted", n);
        if (strncmp(err, path, strlen(path)) != 0)
            fail_msg("cut to %zu: message \"%s\" does not name the file", n, err);
    }
}

static void test_rig_map_path(void **state)
{
    (void)state;
    static const struct {
        const char *maps, *want;
    } cases[] = {
        {"rig.maps", "rig-0-2.maps"},         {"out/rig.maps", "out/rig-0-2.maps"},
        {"rig", "rig-0-2"},                   {"a.d/rig", "a.d/rig-0-2"},
        {"a/b.c.maps", "a/b.c-0-2.maps"},     {".maps", ".maps-0-2"},
        {"dir/..maps", "dir/..maps-0-2"},     {"x/.hidden.bin", "x/.hidden-0-2.bin"},
    };
    char out[64];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        assert_int_equal(calib_rig_map_path(cases[k].maps, 0, 2, out, sizeof out), 0);
        assert_string_equal(out, cases[k].want);
    }
    assert_int_equal(calib_rig_map_path("rig.maps", 1, 7, out, sizeof out), 0);
    assert_string_equal(out, "rig-1-7.maps");
    assert_int_equal(calib_rig_map_path("rig.maps", 0, 2, out, 12), -1); /* 13 bytes needed */
    assert_int_equal(calib_rig_map_path("rig.maps", 0, 2, out, 13), 0);
}

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("test_calib_c");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_values),   cmocka_unit_test(test_read_variants),
        cmocka_unit_test(test_read_errors),   cmocka_unit_test(test_read_truncated),
        cmocka_unit_test(test_maps_identity), cmocka_unit_test(test_maps_shifts),
        cmocka_unit_test(test_maps_reference), cmocka_unit_test(test_maps_far_away),
        cmocka_unit_test(test_load_maps),
        cmocka_unit_test(test_rig_read),      cmocka_unit_test(test_rig_maps),
        cmocka_unit_test(test_rig_errors),    cmocka_unit_test(test_rig_truncated),
        cmocka_unit_test(test_rig_map_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
