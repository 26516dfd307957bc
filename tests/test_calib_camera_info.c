/* SPDX-License-Identifier: Apache-2.0 */
/* test_calib_camera_info.c — hal/calib.h with ROS camera_info input: the pair of files written
 * from a calibration gives exactly (byte for byte) the maps of the OpenCV YAML of the same
 * calibration, in every layout ROS and OpenCV write; the pose, baseline, focal length and Q are
 * recovered from the rectification; every bad input (missing keys, wrong shapes, unsupported
 * distortion models, sizes differing between the files, mono calibrations, swapped files, not a
 * camera_info file, any truncation) is refused with one line that starts with the file at fault,
 * and nothing is handed out. The comparison with OpenCV itself is in tests/test_calibrate.py. */
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

static void write_str(const char *path, const char *text) { write_text(path, text, strlen(text)); }

/* A rotation by small angles about x, y, z (applied in that order). */
static void rotation(double ax, double ay, double az, double r[3][3])
{
    double rx[3][3] = {{1, 0, 0}, {0, cos(ax), -sin(ax)}, {0, sin(ax), cos(ax)}};
    double ry[3][3] = {{cos(ay), 0, sin(ay)}, {0, 1, 0}, {-sin(ay), 0, cos(ay)}};
    double rz[3][3] = {{cos(az), -sin(az), 0}, {sin(az), cos(az), 0}, {0, 0, 1}};
    double t[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            t[i][j] = 0;
            for (int l = 0; l < 3; l++)
                t[i][j] += ry[i][l] * rx[l][j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            r[i][j] = 0;
            for (int l = 0; l < 3; l++)
                r[i][j] += rz[i][l] * t[l][j];
        }
}

/* A consistent stereo calibration of w x h cameras, as stereoRectify would give it: each camera
 * rotated into a common rectified frame (R1, R2), the right one B to the right there; the pose
 * R = R2^T R1, T = R2^T (-B, 0, 0). nd: 5 (plumb_bob) or 8 (rational_polynomial). */
static void rig(stereo_calib *c, int w, int h, int nd)
{
    memset(c, 0, sizeof *c);
    c->image_width = c->rect_width = w;
    c->image_height = c->rect_height = h;
    /* numbers exact in binary and short in decimal, so that the tests can edit the text */
    double f = w * 15 / 16.0, B = 0.0625;
    static const double dist[2][8] = {
        {-0.125, 0.0625, 0.0009765625, -0.00048828125, 0.00390625, 0.015625, -0.0078125,
         0.00390625},
        {-0.09375, 0.03125, -0.0006103515625, 0.00048828125, -0.001953125, 0.0078125,
         0.00390625, -0.001953125}};
    for (int k = 0; k < 2; k++) {
        c->M[k][0][0] = f + 8 * k;
        c->M[k][1][1] = f + 2 - 4 * k;
        c->M[k][0][2] = w / 2.0 + 3.25 - 5 * k;
        c->M[k][1][2] = h / 2.0 - 2.5 + 4 * k;
        c->M[k][2][2] = 1;
        memcpy(c->D[k], dist[k], sizeof(double) * (size_t)nd);
        c->ndist[k] = nd;
        c->P[k][0][0] = c->P[k][1][1] = f - 16;
        c->P[k][0][2] = w / 2.0 - 1.5 + 2 * k;
        c->P[k][1][2] = h / 2.0 + 0.75;
        c->P[k][2][2] = 1;
    }
    c->P[1][0][3] = -B * c->P[1][0][0];
    rotation(0.004, -0.011, 0.002, c->Rrect[0]);
    rotation(0.003, 0.006, -0.0015, c->Rrect[1]);
    for (int i = 0; i < 3; i++) {
        c->T[i] = -B * c->Rrect[1][0][i];
        for (int j = 0; j < 3; j++)
            for (int l = 0; l < 3; l++)
                c->R[i][j] += c->Rrect[1][l][i] * c->Rrect[0][l][j];
    }
    c->rms = -1;
}

/* Layouts of a camera_info file. */
enum {
    ROS = 0,        /* ROS camera_calibration: 2-space indent, matrix rows on their own lines */
    HEADER = 1,     /* "%YAML:1.0" and "---" first */
    INDENT4 = 2,    /* 4-space indent, data on one line, comments */
    TAGGED = 4,     /* OpenCV's "!!opencv-matrix" with dt (cv2.FileStorage writing camera_info) */
    NO_MODEL = 8,   /* no distortion_model (older files: plumb_bob) */
    CRLF = 16,
};

static void put_matrix(FILE *f, int style, const char *key, const double *v, int rows, int cols)
{
    const char *in = style & INDENT4 ? "    " : "  ";
    fprintf(f, "%s:%s\n%srows: %d\n%scols: %d\n", key, style & TAGGED ? " !!opencv-matrix" : "",
            in, rows, in, cols);
    if (style & TAGGED)
        fprintf(f, "%sdt: d\n", in);
    fprintf(f, "%sdata: [", in);
    for (int i = 0; i < rows * cols; i++) {
        fprintf(f, "%.17g", v[i]);
        if (i + 1 < rows * cols)
            fputs((style & INDENT4) || (i + 1) % cols || rows == 1 ? ", " : ",\n         ", f);
    }
    fputs("]\n", f);
}

/* Camera k of c as a camera_info file (numbers exact: %.17g). Release with free. */
static char *info_text(const stereo_calib *c, int k, int style)
{
    char *buf;
    size_t n;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    if (style & HEADER)
        fputs("%YAML:1.0\n---\n", f);
    if (style & INDENT4)
        fputs("# written by a test\n", f);
    fprintf(f, "image_width: %d\nimage_height: %d\ncamera_name: narrow_stereo/%s\n",
            c->image_width, c->image_height, k ? "right" : "left");
    put_matrix(f, style, "camera_matrix", &c->M[k][0][0], 3, 3);
    if (!(style & NO_MODEL))
        fprintf(f, "distortion_model: %s\n",
                c->ndist[k] == 8 ? "rational_polynomial" : "plumb_bob");
    put_matrix(f, style, "distortion_coefficients", c->D[k], 1, c->ndist[k]);
    if (style & INDENT4)
        fputs("\n# stereo rectification\n", f);
    put_matrix(f, style, "rectification_matrix", &c->Rrect[k][0][0], 3, 3);
    put_matrix(f, style, "projection_matrix", &c->P[k][0][0], 3, 4);
    assert_int_equal(fclose(f), 0);
    if (!(style & CRLF))
        return buf;
    char *crlf = malloc(2 * n + 1), *q = crlf;
    assert_non_null(crlf);
    for (const char *p = buf; *p; p++) {
        if (*p == '\n')
            *q++ = '\r';
        *q++ = *p;
    }
    *q = '\0';
    free(buf);
    return crlf;
}

/* The same calibration as an OpenCV YAML (what stereo-calibrate --out writes). */
static char *opencv_text(const stereo_calib *c)
{
    char *buf;
    size_t n;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    fprintf(f, "%%YAML:1.0\n---\nimage_width: %d\nimage_height: %d\n", c->image_width,
            c->image_height);
    static const char *names[] = {"M1", "D1", "M2", "D2", "R", "T", "R1", "R2", "P1", "P2", "Q"};
    const double *vals[] = {&c->M[0][0][0], c->D[0], &c->M[1][0][0], c->D[1], &c->R[0][0], c->T,
                            &c->Rrect[0][0][0], &c->Rrect[1][0][0], &c->P[0][0][0],
                            &c->P[1][0][0], &c->Q[0][0]};
    int rows[] = {3, 1, 3, 1, 3, 3, 3, 3, 3, 3, 4}, cols[] = {3, 5, 3, 5, 3, 1, 3, 3, 4, 4, 4};
    cols[1] = c->ndist[0];
    cols[3] = c->ndist[1];
    for (int m = 0; m < 11; m++)
        put_matrix(f, TAGGED, names[m], vals[m], rows[m], cols[m]);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* text with the first occurrence of `from` replaced by `to` (which must be there). */
static char *with(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        fail_msg("'%s' is not in the text", from);
    size_t pre = (size_t)(at - text);
    char *s = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
    assert_non_null(s);
    memcpy(s, text, pre);
    strcpy(s + pre, to);
    strcat(s, at + strlen(from));
    return s;
}

/* Writes left and right camera_info files of c; lp, rp get their paths. */
static void write_pair(const stereo_calib *c, int style, char *lp, char *rp)
{
    char *l = info_text(c, 0, style), *r = info_text(c, 1, style);
    write_str(tmp_path(lp, "left.yaml"), l);
    write_str(tmp_path(rp, "right.yaml"), r);
    free(l);
    free(r);
}

static void maps_equal(const stereo_map a[2], const stereo_map b[2], size_t *pixels)
{
    for (int k = 0; k < 2; k++) {
        assert_true(a[k].width == b[k].width && a[k].height == b[k].height &&
                    a[k].src_width == b[k].src_width && a[k].src_height == b[k].src_height);
        size_t n = (size_t)a[k].width * a[k].height;
        assert_memory_equal(a[k].xy, b[k].xy, 4 * n);
        assert_memory_equal(a[k].frac, b[k].frac, 2 * n);
        *pixels += n;
    }
}

/* ---- the same maps as the OpenCV YAML ------------------------------------------------------ */

static void test_same_maps(void **state)
{
    static const struct {
        int w, h, nd, style;
    } cases[] = {
        {640, 480, 5, ROS},          {640, 480, 8, ROS},
        {1280, 720, 5, HEADER | INDENT4 | CRLF},
        {321, 203, 8, TAGGED | HEADER}, {64, 48, 5, NO_MODEL | INDENT4},
    };
    size_t pixels = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stereo_calib c, from_info;
        rig(&c, cases[i].w, cases[i].h, cases[i].nd);
        /* Q as OpenCV writes it, so that the OpenCV YAML is complete */
        double tx = c.P[1][0][3] / c.P[1][0][0];
        c.Q[0][0] = c.Q[1][1] = 1;
        c.Q[0][3] = -c.P[0][0][2];
        c.Q[1][3] = -c.P[0][1][2];
        c.Q[2][3] = c.P[0][0][0];
        c.Q[3][2] = -1 / tx;
        c.Q[3][3] = (c.P[0][0][2] - c.P[1][0][2]) / tx;
        char yml[PATH_MAX], lp[PATH_MAX], rp[PATH_MAX], spec[2 * PATH_MAX + 2], err[512] = "";
        char *y = opencv_text(&c);
        write_str(tmp_path(yml, "rig.yml"), y);
        free(y);
        write_pair(&c, cases[i].style, lp, rp);
        snprintf(spec, sizeof spec, "%s,%s", lp, rp);
        stereo_map a[2], b[2];
        if (calib_load_maps(yml, cases[i].w, cases[i].h, a, err, sizeof err) ||
            calib_load_maps(spec, cases[i].w, cases[i].h, b, err, sizeof err))
            fail_msg("case %zu: %s", i, err);
        maps_equal(a, b, &pixels);
        mapfile_free(a);
        mapfile_free(b);

        /* what else the pair gives: the pose, baseline, focal length, Q (as the YAML's) */
        assert_int_equal(calib_read(spec, &from_info, err, sizeof err), 0);
        assert_memory_equal(from_info.M, c.M, sizeof c.M);
        assert_memory_equal(from_info.D, c.D, sizeof c.D);
        assert_memory_equal(from_info.Rrect, c.Rrect, sizeof c.Rrect);
        assert_memory_equal(from_info.P, c.P, sizeof c.P);
        assert_true(from_info.ndist[0] == cases[i].nd && from_info.ndist[1] == cases[i].nd);
        assert_true(from_info.rect_width == cases[i].w && from_info.rect_height == cases[i].h);
        double worst = 0;
        for (int r = 0; r < 3; r++) {
            worst = fmax(worst, fabs(from_info.T[r] - c.T[r]));
            for (int k = 0; k < 3; k++)
                worst = fmax(worst, fabs(from_info.R[r][k] - c.R[r][k]));
        }
        for (int r = 0; r < 4; r++)
            for (int k = 0; k < 4; k++)
                worst = fmax(worst, fabs(from_info.Q[r][k] - c.Q[r][k]) / fmax(1, fabs(c.Q[r][k])));
        if (worst > 1e-12)
            fail_msg("case %zu: R, T, Q differ from the calibration's by %g", i, worst);
        assert_true(fabs(calib_baseline(&from_info) - 0.0625) < 1e-15);
        assert_true(calib_focal_px(&from_info) == c.P[0][0][0]);
        assert_true(from_info.rms == -1);
        /* blanks around the comma are dropped */
        snprintf(spec, sizeof spec, "%s , %s", lp, rp);
        assert_int_equal(calib_read(spec, &from_info, err, sizeof err), 0);
    }
    printf("# maps from camera_info identical to the OpenCV YAML's on %zu pixels\n", pixels);
}

/* ---- bad inputs ---------------------------------------------------------------------------- */

/* rc -1, one line starting with "<path>: " and containing `expect`; out zeroed. */
static void expect_error(int rc, const char *err, const char *path, const char *expect,
                         const char *what)
{
    char want[PATH_MAX + 4];
    snprintf(want, sizeof want, "%s: ", path);
    if (rc != -1 || strncmp(err, want, strlen(want)) != 0 || !strstr(err, expect) ||
        strchr(err, '\n'))
        fail_msg("%s: rc %d, message \"%s\"; expected one line starting with \"%s\" and "
                 "containing \"%s\"", what, rc, err, want, expect);
}

static void pair_fails(const char *lp, const char *rp, const char *at_fault, const char *expect,
                       const char *what)
{
    stereo_calib out;
    stereo_map m[2];
    char err[1024] = "", spec[2 * PATH_MAX + 2];
    expect_error(calib_read_camera_info(lp, rp, &out, err, sizeof err), err, at_fault, expect,
                 what);
    assert_int_equal(out.image_width, 0); /* nothing half-read is handed out */
    assert_true(out.M[0][0][0] == 0 && out.P[1][0][3] == 0);
    snprintf(spec, sizeof spec, "%s,%s", lp, rp);
    err[0] = '\0';
    expect_error(calib_load_maps(spec, 0, 0, m, err, sizeof err), err, at_fault, expect, what);
    assert_null(m[0].xy);
    assert_null(m[1].xy);
}

static void test_bad_files(void **state)
{
    static const struct {
        int right;                /* the mutated file: 0 left, 1 right */
        const char *from, *to;    /* the mutation of that file */
        const char *expect;       /* a substring of the message */
        int line;                 /* the message names a line */
    } cases[] = {
        /* missing keys */
        {1, "image_width: 640\n", "", "missing key 'image_width'", 0},
        {0, "image_height: 480\n", "image_heigth: 480\n", "missing key 'image_height'", 0},
        {1, "camera_matrix:", "camera_matrx:", "missing key 'camera_matrix'", 0},
        {0, "distortion_coefficients:", "distortion:", "missing key 'distortion_coefficients'", 0},
        {1, "rectification_matrix:", "rectification:", "missing key 'rectification_matrix'", 0},
        {0, "projection_matrix:", "P:", "missing key 'projection_matrix'", 0},
        /* wrong shapes and values */
        {1, "camera_matrix:\n  rows: 3\n  cols: 3", "camera_matrix:\n  rows: 3\n  cols: 4",
         "camera_matrix: data has 9 numbers, but rows x cols = 3x4", 1},
        {0, "projection_matrix:\n  rows: 3\n  cols: 4", "projection_matrix:\n  rows: 4\n  cols: 3",
         "projection_matrix: 4x3 matrix, expected 3x4", 1},
        {1, "rectification_matrix:\n  rows: 3\n  cols: 3\n  data: [",
         "rectification_matrix:\n  rows: 1\n  cols: 9\n  data: [",
         "rectification_matrix: 1x9 matrix, expected 3x3", 1},
        {0, "camera_matrix:\n  rows", "camera_matrix:\n  dt: d\n  step: 3\n  rows",
         "camera_matrix: unexpected matrix field 'step'", 1},
        {1, "camera_matrix:\n", "camera_matrix: [1, 2]\n",
         "camera_matrix: expected a matrix (rows, cols and data indented below the key)", 1},
        {1, "  rows: 1\n  cols: 5\n  data: [", "  rows: 1\n  cols: 4\n  data: [",
         "distortion_coefficients: data has 5 numbers, but rows x cols = 1x4", 1},
        {0, "image_width: 640\n", "image_width: 640.5\n", "image_width: '640.5' is not an integer",
         1},
        {0, "image_width: 640\n", "image_width: 0\n", "image_width: '0' is not an integer", 1},
        {1, "image_height: 480\n", "image_height: 16000\n",
         "image_height: 16000 is larger than the largest image the matcher takes (8192x8192)", 1},
        {1, "image_height: 480\n", "image_height: 480\nimage_height: 480\n", "appears twice", 1},
        {1, "data: [608,", "data: [-608,", "camera_matrix: focal lengths must be positive", 1},
        {0, "data: [600,", "data: [6O0,", "camera_matrix: '6O0' is not a finite number", 1},
        {1, "data: [-0.09375", "data: [.nan",
         "distortion_coefficients: '.nan' is not a finite number", 1},
        /* distortion models */
        {1, "distortion_model: plumb_bob", "distortion_model: equidistant",
         "distortion_model: 'equidistant' is not supported (only plumb_bob and "
         "rational_polynomial)", 1},
        {0, "distortion_model: plumb_bob", "distortion_model: fisheye",
         "'fisheye' is not supported", 1},
        {0, "distortion_model: plumb_bob", "distortion_model:", "expected a single value", 1},
        {1, "distortion_model: plumb_bob", "distortion_model: rational_polynomial",
         "distortion_coefficients: 1x5: rational_polynomial needs 8 coefficients", 1},
        {0, "  cols: 5\n  data: [-0.125, 0.0625, 0.0009765625, -0.00048828125, 0.00390625]",
         "  cols: 8\n  data: [-0.125, 0.0625, 0.0009765625, -0.00048828125, 0.00390625, 0, 0, 0]",
         "distortion_coefficients: 1x8: plumb_bob needs 5 coefficients (k1 k2 p1 p2 k3) or 4", 1},
        /* not a rotation */
        {1, "rectification_matrix:\n  rows: 3\n  cols: 3\n  data: [",
         "rectification_matrix:\n  rows: 3\n  cols: 3\n  data: [2, 0, 0, 0, 1, 0, 0, 0, 1]\n"
         "unused:\n  data: [", "rectification_matrix: not a rotation (determinant 2", 1},
        /* the two files together */
        {1, "image_width: 640\n", "image_width: 320\n",
         "image size 320x480, but", 0},
        {1, "data: [584, 0, 320.5, -36.5,", "data: [584, 0, 320.5, 0,",
         "projection_matrix has no baseline (P[0][3] = 0)", 0},
        {1, "data: [584, 0, 320.5, -36.5,", "data: [584, 0, 320.5, 36.5,",
         "P[0][3] = 36.5 > 0 puts this camera to the left of the other: are LEFT and RIGHT "
         "swapped?", 0},
        {1, "0, 584, 240.75, 0,", "0, 584, 240.75, -50,", "the cameras are above each other", 0},
        {0, "data: [584, 0, 318.5, 0,", "data: [584, 0, 318.5, -36.5,",
         "projection_matrix has a baseline (P[0][3] = -36.5, P[1][3] = 0), which only the right "
         "(second) camera has: are LEFT and RIGHT swapped?", 0},
        {1, "0, 584, 240.75, 0,", "0, 584, 241.75, 0,",
         "projection_matrix: fx 584, fy 584, cy 241.75, but", 0},
    };
    stereo_calib c;
    rig(&c, 640, 480, 5);
    char *text[2] = {info_text(&c, 0, ROS), info_text(&c, 1, ROS)};
    char lp[PATH_MAX], rp[PATH_MAX];
    tmp_path(lp, "left.yaml");
    tmp_path(rp, "right.yaml");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int k = cases[i].right;
        char *bad = with(text[k], cases[i].from, cases[i].to);
        write_str(lp, k ? text[0] : bad);
        write_str(rp, k ? bad : text[1]);
        char what[64];
        snprintf(what, sizeof what, "case %zu (%s)", i, cases[i].expect);
        const char *path = k ? rp : lp;
        pair_fails(lp, rp, path, cases[i].expect, what);
        if (cases[i].line) {
            stereo_calib out;
            char err[1024], want[PATH_MAX + 16];
            calib_read_camera_info(lp, rp, &out, err, sizeof err);
            snprintf(want, sizeof want, "%s: line ", path);
            if (strncmp(err, want, strlen(want)) != 0)
                fail_msg("%s: \"%s\" does not name the line", what, err);
        }
        free(bad);
    }
    printf("# %zu bad camera_info files refused\n", sizeof cases / sizeof cases[0]);

    /* two mono calibrations: identity rectification, P = K, no baseline */
    stereo_calib mono = c;
    for (int k = 0; k < 2; k++) {
        memset(mono.Rrect[k], 0, sizeof mono.Rrect[k]);
        memset(mono.P[k], 0, sizeof mono.P[k]);
        for (int i = 0; i < 3; i++) {
            mono.Rrect[k][i][i] = 1;
            for (int j = 0; j < 3; j++)
                mono.P[k][i][j] = mono.M[k][i][j];
        }
    }
    write_pair(&mono, ROS, lp, rp);
    pair_fails(lp, rp, rp, "not stereo-rectified camera_info files: both rectification_matrix "
               "are identity and the right projection_matrix has no baseline", "mono pair");

    /* the files swapped: the left one has the baseline */
    write_str(lp, text[0]);
    write_str(rp, text[1]);
    pair_fails(rp, lp, rp, "are LEFT and RIGHT swapped?", "swapped");
    /* one file for both */
    pair_fails(lp, lp, lp, "given for both cameras", "the same file twice");

    /* not camera_info files */
    char other[PATH_MAX];
    char *y = opencv_text(&c);
    write_str(tmp_path(other, "stereo.yml"), y);
    free(y);
    pair_fails(other, rp, other, "an OpenCV stereo calibration (M1 ... Q), not a ROS camera_info "
               "file", "OpenCV YAML as camera_info");
    write_str(tmp_path(other, "notes.yaml"), "title: holidays\nplaces: [a, b]\n");
    pair_fails(lp, other, other, "not a ROS camera_info file", "another YAML");
    write_str(other, "just some text\n");
    pair_fails(lp, other, other, "line 1: expected 'key: value'", "text");
    write_text(other, "STMAPS\r\n\1\0\0\0", 12);
    pair_fails(lp, other, other, "binary data (a NUL byte): not a ROS camera_info file",
               "a map file");
    write_text(other, "", 0);
    pair_fails(other, rp, other, "empty file", "empty");
    tmp_path(other, "missing.yaml");
    pair_fails(lp, other, other, "cannot open", "missing");
    free(text[0]);
    free(text[1]);
}

/* A file cut anywhere before its last ']' is refused, naming it (either camera). */
static void test_truncated(void **state)
{
    stereo_calib c;
    rig(&c, 64, 48, 8);
    char lp[PATH_MAX], rp[PATH_MAX], cut[PATH_MAX];
    write_pair(&c, ROS, lp, rp);
    tmp_path(cut, "cut.yaml");
    int cases = 0;
    for (int k = 0; k < 2; k++) {
        char *text = info_text(&c, k, k ? ROS : INDENT4);
        size_t limit = (size_t)(strrchr(text, ']') - text);
        for (size_t n = 0; n <= limit; n++) {
            stereo_calib out;
            char err[1024] = "";
            write_text(cut, text, n);
            int rc = k ? calib_read_camera_info(lp, cut, &out, err, sizeof err)
                       : calib_read_camera_info(cut, rp, &out, err, sizeof err);
            char what[64];
            snprintf(what, sizeof what, "%s file cut to %zu bytes", k ? "right" : "left", n);
            expect_error(rc, err, cut, "", what);
            assert_int_equal(out.image_width, 0);
            cases++;
        }
        free(text);
    }
    printf("# %d truncated files refused\n", cases);
}

/* How a pair is named, and one camera_info file where a stereo calibration is expected. */
static void test_spec(void **state)
{
    stereo_calib c, out;
    stereo_map m[2];
    char lp[PATH_MAX], rp[PATH_MAX], spec[2 * PATH_MAX + 8], err[1024];
    rig(&c, 64, 48, 5);
    write_pair(&c, ROS, lp, rp);
    static const char *bad[][2] = {
        {"%s,", "the right camera's camera_info file is missing"},
        {",%s", "the left camera's camera_info file is missing"},
        {" , %s", "the left camera's camera_info file is missing"},
        {"%s,a.yaml,b.yaml", "more than one ','"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(spec, sizeof spec, bad[i][0], lp);
        expect_error(calib_read(spec, &out, err, sizeof err), err, spec, bad[i][1], spec);
        expect_error(calib_load_maps(spec, 0, 0, m, err, sizeof err), err, spec, bad[i][1], spec);
        assert_null(m[0].xy);
    }
    /* maps for another camera size: the whole pair is named */
    snprintf(spec, sizeof spec, "%s,%s", lp, rp);
    expect_error(calib_load_maps(spec, 640, 480, m, err, sizeof err), err, spec,
                 "maps are for 64x48 camera images, but the images are 640x480", "size");
    assert_null(m[0].xy);
    /* one camera's file alone: the loader says to give both */
    expect_error(calib_load_maps(lp, 0, 0, m, err, sizeof err), err, lp,
                 "one camera's ROS camera_info: give both cameras' files as LEFT,RIGHT", "alone");
    char *t = info_text(&c, 0, HEADER);
    write_str(lp, t);
    free(t);
    expect_error(calib_load_maps(lp, 0, 0, m, err, sizeof err), err, lp,
                 "one camera's ROS camera_info, not a stereo calibration", "alone, %YAML");
    expect_error(calib_read(lp, &out, err, sizeof err), err, lp, "one camera's ROS camera_info",
                 "calib_read alone");
    /* calib_read of an OpenCV YAML is calib_read_yaml */
    char yml[PATH_MAX];
    char *y = opencv_text(&c);
    write_str(tmp_path(yml, "rig.yml"), y);
    free(y);
    assert_int_equal(calib_read(yml, &out, err, sizeof err), 0);
    assert_true(out.image_width == 64 && out.ndist[1] == 5 && out.P[1][0][3] == c.P[1][0][3]);
}

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("test_calib_camera_info");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_maps),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_spec),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
