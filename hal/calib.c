/* SPDX-License-Identifier: Apache-2.0 */
/* calib.c — see calib.h. */
#include "calib.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_yaml.h"
#include "mapfile.h"
#include "pnm.h"

#define FIX_BITS 5               /* OpenCV's INTER_BITS: map positions in 1/32 px */
#define FIX_ONE (1 << FIX_BITS)
#define OPENCV_MAX_DIST 14       /* k1 k2 p1 p2 k3 k4 k5 k6 s1 s2 s3 s4 tx ty */

/* ---- the OpenCV calibration YAML ------------------------------------------------------------ */

/* Entries of the key tables (calib_yaml.h): a required r x c matrix; a required vector of up to
 * n numbers in one row or column (checked by the caller, which knows how many it takes); an
 * image side, required or not. */
#define MATRIX(name, to, r, c) \
    {.key = name, .type = CALIB_YAML_MATRIX, .dst = (to), .cap = (r) * (c), .rows = r, \
     .cols = c, .required = 1}
#define VECTOR(name, to, n) \
    {.key = name, .type = CALIB_YAML_MATRIX, .dst = (to), .cap = n, .required = 1}
#define SIDE(name, to, req) {.key = name, .type = CALIB_YAML_SIDE, .dst = (to), .required = req}

/* The distortion vector of key: 4, 5 or 8 coefficients in one row or column. */
static int opencv_distortion(const calib_yaml_file *f, const calib_yaml_field *fd,
                             const double *all, double *out, int *count)
{
    /* OpenCV returns 12 or 14 coefficients (+ thin prism s1..s4, tilt tx ty) for the rational
     * model even when those are fixed at 0; zeros there are the 8-coefficient model */
    int n = fd->count, extra_zero = 1;
    for (int i = CALIB_MAX_DIST; i < n && i < OPENCV_MAX_DIST; i++)
        extra_zero &= all[i] == 0;
    if ((n == 12 || n == 14) && extra_zero)
        n = CALIB_MAX_DIST;
    if ((fd->got_rows != 1 && fd->got_cols != 1) || (n != 4 && n != 5 && n != 8))
        return calib_yaml_fail(f, fd->line, fd->key,
                               "%dx%d: expected 4, 5 or 8 coefficients (k1 k2 p1 p2 [k3 [k4 k5 "
                               "k6]]; the thin-prism and tilted models are not supported)",
                               fd->got_rows, fd->got_cols);
    memcpy(out, all, sizeof(double) * (size_t)n);
    *count = n;
    return 0;
}

static int read_opencv(const calib_yaml_file *f, stereo_calib *c)
{
    double dist[2][OPENCV_MAX_DIST];
    calib_yaml_field t[] = {
        SIDE("image_width", &c->image_width, 1),
        SIDE("image_height", &c->image_height, 1),
        MATRIX("M1", &c->M[0][0][0], 3, 3),
        VECTOR("D1", dist[0], OPENCV_MAX_DIST),
        MATRIX("M2", &c->M[1][0][0], 3, 3),
        VECTOR("D2", dist[1], OPENCV_MAX_DIST),
        MATRIX("R", &c->R[0][0], 3, 3),
        {.key = "T", .type = CALIB_YAML_MATRIX, .dst = c->T, .cap = 3, .rows = 3, .cols = 1,
         .either_way = 1, .required = 1},
        MATRIX("R1", &c->Rrect[0][0][0], 3, 3),
        MATRIX("P1", &c->P[0][0][0], 3, 4),
        MATRIX("R2", &c->Rrect[1][0][0], 3, 3),
        MATRIX("P2", &c->P[1][0][0], 3, 4),
        MATRIX("Q", &c->Q[0][0], 4, 4),
        SIDE("rectified_width", &c->rect_width, 0),
        SIDE("rectified_height", &c->rect_height, 0),
        {.key = "rms", .type = CALIB_YAML_REAL, .dst = &c->rms, .lo = 0},
        {.key = "camera_matrix", .type = CALIB_YAML_NOTED}, /* a ROS file given alone */
        {.key = "rig_cameras", .type = CALIB_YAML_NOTED},   /* a rig file (N cameras) */
    };
    int n = (int)(sizeof t / sizeof t[0]);
    if (calib_yaml_read(f, t, n))
        return -1;
    if (!calib_yaml_find(t, n, "M1")->present && calib_yaml_find(t, n, "camera_matrix")->present)
        return calib_yaml_fail(f, 0, NULL, "one camera's ROS camera_info, not a stereo "
                               "calibration: give both cameras' files as LEFT,RIGHT");
    if (!calib_yaml_find(t, n, "M1")->present && calib_yaml_find(t, n, "rig_cameras")->present)
        return calib_yaml_fail(f, 0, NULL, "a rig file (stereo-calibrate --view), not a "
                               "two-camera calibration: calib-maps writes its maps, one pair map "
                               "file per view");
    if (calib_yaml_require(f, t, n))
        return -1;
    for (int k = 0; k < 2; k++)
        if (opencv_distortion(f, calib_yaml_find(t, n, k ? "D2" : "D1"), dist[k], c->D[k],
                              &c->ndist[k]))
            return -1;
    int rw = calib_yaml_find(t, n, "rectified_width")->present;
    if (rw != calib_yaml_find(t, n, "rectified_height")->present)
        return calib_yaml_fail(f, 0, NULL, "rectified_width and rectified_height must be given "
                               "together");
    if (!rw) { /* stereoRectify's default, the camera size */
        c->rect_width = c->image_width;
        c->rect_height = c->image_height;
    }
    if (!calib_yaml_find(t, n, "rms")->present)
        c->rms = -1;
    for (int k = 0; k < 2; k++)
        if (!(c->M[k][0][0] > 0 && c->M[k][1][1] > 0))
            return calib_yaml_fail(f, calib_yaml_find(t, n, k ? "M2" : "M1")->line,
                                   k ? "M2" : "M1", "focal lengths must be positive (%g, %g)",
                                   c->M[k][0][0], c->M[k][1][1]);
    return 0;
}

int calib_read_yaml(const char *path, stereo_calib *out, char *err, size_t errlen)
{
    calib_yaml_file f = {path ? path : "(null)", "an OpenCV calibration YAML",
                         CALIB_YAML_OPENCV | CALIB_YAML_UNKNOWN_KEYS_OK, err, errlen};
    memset(out, 0, sizeof *out);
    int rc = read_opencv(&f, out);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ---- ROS camera_info ------------------------------------------------------------------------ */

/* One camera of a camera_info file. */
typedef struct {
    int width, height;
    double K[3][3];
    double D[CALIB_MAX_DIST];
    int ndist;
    double R[3][3]; /* rectification_matrix */
    double P[3][4]; /* projection_matrix */
} camera_info;

/* Tolerances of the consistency checks between the two files (ROS writes 5 to 8 decimals). */
#define INFO_PX_TOL 0.01     /* px: fx, fy, cy of both projection matrices */
#define INFO_ROT_TOL 1e-3    /* rectification_matrix: |det - 1| */

static int read_camera_info(const char *path, camera_info *ci, char *err, size_t errlen)
{
    calib_yaml_file f = {path, "a ROS camera_info file",
                         CALIB_YAML_UNTAGGED_MATRICES | CALIB_YAML_UNKNOWN_KEYS_OK, err, errlen};
    char model[32] = "";
    calib_yaml_field t[] = {
        SIDE("image_width", &ci->width, 1),
        SIDE("image_height", &ci->height, 1),
        MATRIX("camera_matrix", &ci->K[0][0], 3, 3),
        {.key = "distortion_model", .type = CALIB_YAML_STRING, .dst = model, .cap = sizeof model},
        VECTOR("distortion_coefficients", ci->D, CALIB_MAX_DIST),
        MATRIX("rectification_matrix", &ci->R[0][0], 3, 3),
        MATRIX("projection_matrix", &ci->P[0][0], 3, 4),
        {.key = "M1", .type = CALIB_YAML_NOTED}, /* an OpenCV calibration given as one camera */
    };
    int n = (int)(sizeof t / sizeof t[0]);
    memset(ci, 0, sizeof *ci);
    if (calib_yaml_read(&f, t, n))
        return -1;
    if (calib_yaml_find(t, n, "M1")->present && !calib_yaml_find(t, n, "camera_matrix")->present)
        return calib_yaml_fail(&f, 0, NULL, "an OpenCV stereo calibration (M1 ... Q), not a ROS "
                               "camera_info file: give it alone, without ','");
    if (!calib_yaml_find(t, n, "camera_matrix")->present &&
        !calib_yaml_find(t, n, "projection_matrix")->present &&
        !calib_yaml_find(t, n, "image_width")->present)
        return calib_yaml_fail(&f, 0, NULL, "no image_width, camera_matrix or projection_matrix: "
                               "not a ROS camera_info file");
    if (calib_yaml_require(&f, t, n))
        return -1;
    /* distortion_model: older files have none; ROS's own parser then takes plumb_bob */
    const calib_yaml_field *m = calib_yaml_find(t, n, "distortion_model");
    if (!m->present)
        strcpy(model, "plumb_bob");
    int rational = strcmp(model, "rational_polynomial") == 0;
    if (!rational && strcmp(model, "plumb_bob") != 0)
        return calib_yaml_fail(&f, m->line, m->key, "'%s' is not supported (only plumb_bob and "
                               "rational_polynomial)", model);
    const calib_yaml_field *d = calib_yaml_find(t, n, "distortion_coefficients");
    if (!((d->got_rows == 1 || d->got_cols == 1) &&
          (rational ? d->count == 8 : (d->count == 4 || d->count == 5))))
        return calib_yaml_fail(&f, d->line, d->key, "%dx%d: %s needs %s in one row", d->got_rows,
                               d->got_cols, model,
                               rational ? "8 coefficients (k1 k2 p1 p2 k3 k4 k5 k6)"
                                        : "5 coefficients (k1 k2 p1 p2 k3) or 4");
    ci->ndist = d->count;
    if (!(ci->K[0][0] > 0 && ci->K[1][1] > 0))
        return calib_yaml_fail(&f, calib_yaml_find(t, n, "camera_matrix")->line, "camera_matrix",
                               "focal lengths must be positive (%g, %g)", ci->K[0][0],
                               ci->K[1][1]);
    if (!(ci->P[0][0] > 0 && ci->P[1][1] > 0))
        return calib_yaml_fail(&f, calib_yaml_find(t, n, "projection_matrix")->line,
                               "projection_matrix", "focal lengths must be positive (%g, %g)",
                               ci->P[0][0], ci->P[1][1]);
    const double(*r)[3] = ci->R;
    double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
                 r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                 r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
    if (!(fabs(det - 1) < INFO_ROT_TOL))
        return calib_yaml_fail(&f, calib_yaml_find(t, n, "rectification_matrix")->line,
                               "rectification_matrix", "not a rotation (determinant %g)", det);
    return 0;
}

static int is_identity(const double r[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (fabs(r[i][j] - (i == j)) > 1e-9)
                return 0;
    return 1;
}

/* The stereo checks between the two files; the message names the file at fault. */
static int check_pair(const char *lp, const char *rp, const camera_info *l, const camera_info *r,
                      char *err, size_t errlen)
{
    if (l->width != r->width || l->height != r->height) {
        imgio_error(err, errlen, rp, "image size %dx%d, but %s is %dx%d; both cameras must have "
                    "the same size", r->width, r->height, lp, l->width, l->height);
        return -1;
    }
    double ltx = l->P[0][3], lty = l->P[1][3], tx = r->P[0][3], ty = r->P[1][3];
    if (ltx != 0 || lty != 0) {
        imgio_error(err, errlen, lp, "projection_matrix has a baseline (P[0][3] = %g, P[1][3] = "
                    "%g), which only the right (second) camera has: are LEFT and RIGHT swapped?",
                    ltx, lty);
        return -1;
    }
    if (tx == 0 && ty == 0) {
        if (is_identity(l->R) && is_identity(r->R))
            imgio_error(err, errlen, rp, "not stereo-rectified camera_info files: both "
                        "rectification_matrix are identity and the right projection_matrix has "
                        "no baseline (P[0][3] = 0), as two mono calibrations give; calibrate the "
                        "pair together (ROS camera_calibration, stereo mode)");
        else
            imgio_error(err, errlen, rp, "projection_matrix has no baseline (P[0][3] = 0): the "
                        "right camera of a stereo calibration has -fx * B there");
        return -1;
    }
    if (fabs(ty) > fabs(tx)) {
        imgio_error(err, errlen, rp, "projection_matrix: P[1][3] = %g is larger than P[0][3] = "
                    "%g: the cameras are above each other; the matcher needs a horizontal pair",
                    ty, tx);
        return -1;
    }
    if (tx > 0) {
        imgio_error(err, errlen, rp, "projection_matrix: P[0][3] = %g > 0 puts this camera to "
                    "the left of the other: are LEFT and RIGHT swapped?", tx);
        return -1;
    }
    if (fabs(l->P[0][0] - r->P[0][0]) > INFO_PX_TOL ||
        fabs(l->P[1][1] - r->P[1][1]) > INFO_PX_TOL ||
        fabs(l->P[1][2] - r->P[1][2]) > INFO_PX_TOL) {
        imgio_error(err, errlen, rp, "projection_matrix: fx %g, fy %g, cy %g, but %s has %g, %g, "
                    "%g: not the two halves of one stereo rectification", r->P[0][0],
                    r->P[1][1], r->P[1][2], lp, l->P[0][0], l->P[1][1], l->P[1][2]);
        return -1;
    }
    return 0;
}

int calib_read_camera_info(const char *left_path, const char *right_path, stereo_calib *out,
                           char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!left_path || !right_path) {
        imgio_error(err, errlen, "(null)", "two camera_info files are needed");
        return -1;
    }
    if (strcmp(left_path, right_path) == 0) {
        imgio_error(err, errlen, right_path, "given for both cameras; the right camera has its "
                    "own camera_info file");
        return -1;
    }
    camera_info ci[2];
    if (read_camera_info(left_path, &ci[0], err, errlen) ||
        read_camera_info(right_path, &ci[1], err, errlen) ||
        check_pair(left_path, right_path, &ci[0], &ci[1], err, errlen))
        return -1;
    stereo_calib *c = out;
    c->image_width = c->rect_width = ci[0].width;   /* ROS rectifies to the camera size */
    c->image_height = c->rect_height = ci[0].height;
    for (int k = 0; k < 2; k++) {
        memcpy(c->M[k], ci[k].K, sizeof c->M[k]);
        memcpy(c->D[k], ci[k].D, sizeof c->D[k]);
        c->ndist[k] = ci[k].ndist;
        memcpy(c->Rrect[k], ci[k].R, sizeof c->Rrect[k]);
        memcpy(c->P[k], ci[k].P, sizeof c->P[k]);
    }
    /* The right projection maps points of the left rectified frame: the right rectified frame is
     * that frame shifted by t = (P2[0][3] / fx, P2[1][3] / fy, 0). With X_rect_k = R_k X_k, the
     * pose X_right = R X_left + T is R = R2^T R1, T = R2^T t; |T| is the baseline. */
    double t[3] = {c->P[1][0][3] / c->P[1][0][0], c->P[1][1][3] / c->P[1][1][1], 0};
    for (int i = 0; i < 3; i++) {
        c->T[i] = 0;
        for (int j = 0; j < 3; j++) {
            c->T[i] += c->Rrect[1][j][i] * t[j];
            c->R[i][j] = 0;
            for (int l = 0; l < 3; l++)
                c->R[i][j] += c->Rrect[1][l][i] * c->Rrect[0][l][j];
        }
    }
    /* Q as OpenCV's stereoRectify writes it for a horizontal pair */
    double f = c->P[0][0][0], cx1 = c->P[0][0][2], cy = c->P[0][1][2], cx2 = c->P[1][0][2];
    memset(c->Q, 0, sizeof c->Q);
    c->Q[0][0] = c->Q[1][1] = 1;
    c->Q[0][3] = -cx1;
    c->Q[1][3] = -cy;
    c->Q[2][3] = f;
    c->Q[3][2] = -1 / t[0];
    c->Q[3][3] = (cx1 - cx2) / t[0];
    c->rms = -1;
    return 0;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

/* "LEFT,RIGHT" -> 1 with both paths (blanks around the comma dropped); no comma -> 0; a bad
 * pair -> -1 with the reason. */
static int split_pair(const char *spec, char *left, char *right, size_t n, char *err,
                      size_t errlen)
{
    const char *comma = strchr(spec, ',');
    if (!comma)
        return 0;
    if (strchr(comma + 1, ',')) {
        imgio_error(err, errlen, spec, "more than one ','; a pair of camera_info files is "
                    "LEFT,RIGHT (and a file name with ',' cannot be used here)");
        return -1;
    }
    const char *a = spec, *a_end = comma, *b = comma + 1, *b_end = comma + strlen(comma);
    while (a < a_end && is_space(*a))
        a++;
    while (a_end > a && is_space(a_end[-1]))
        a_end--;
    while (b < b_end && is_space(*b))
        b++;
    while (b_end > b && is_space(b_end[-1]))
        b_end--;
    if (a == a_end || b == b_end) {
        imgio_error(err, errlen, spec, "the %s camera's camera_info file is missing (a pair is "
                    "LEFT,RIGHT)", a == a_end ? "left" : "right");
        return -1;
    }
    if ((size_t)(a_end - a) >= n || (size_t)(b_end - b) >= n) {
        imgio_error(err, errlen, spec, "a path longer than %zu characters", n - 1);
        return -1;
    }
    snprintf(left, n, "%.*s", (int)(a_end - a), a);
    snprintf(right, n, "%.*s", (int)(b_end - b), b);
    return 1;
}

int calib_read(const char *spec, stereo_calib *out, char *err, size_t errlen)
{
    char left[PATH_MAX], right[PATH_MAX];
    memset(out, 0, sizeof *out);
    int pair = split_pair(spec ? spec : "", left, right, sizeof left, err, errlen);
    if (pair < 0)
        return -1;
    return pair ? calib_read_camera_info(left, right, out, err, errlen)
                : calib_read_yaml(spec, out, err, errlen);
}

/* ---- the rig file (N cameras, tools/stereo-calibrate --view) --------------------------------- */

#define RIG_PX_TOL 0.01     /* px: each P's fx, fy, cy against the common focal_px, cy */
#define RIG_ROT_TOL 1e-6    /* camK_R: |R R^T - I| per element (the tool writes 16 digits) */
#define RIG_RATIO_TOL 1e-6  /* ratio against P[0][3] / P_first[0][3]; reference 0, first 1 */

/* The per-camera keys, in the order of a camera's table entries. */
enum { RIG_M, RIG_D, RIG_R, RIG_P, RIG_RATIO, RIG_NKEYS };
static const char *const rig_key_names[RIG_NKEYS] = {"M", "D", "R", "P", "baseline_ratio"};

static int rotation_error(const double r[3][3], double *worst)
{
    *worst = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = r[i][0] * r[j][0] + r[i][1] * r[j][1] + r[i][2] * r[j][2] - (i == j);
            *worst = fabs(d) > *worst ? fabs(d) : *worst;
        }
    double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
                 r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                 r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
    return *worst <= RIG_ROT_TOL && det > 0;
}

/* One camera's consistency with the common frame (after the table read it). */
static int check_rig_camera(const calib_yaml_file *f, const calib_yaml_field *cam, int k,
                            const calib_rig *g, double tx_first)
{
    const calib_yaml_field *m = &cam[RIG_M], *r = &cam[RIG_R], *p = &cam[RIG_P],
                           *ratio = &cam[RIG_RATIO];
    if (!(g->M[k][0][0] > 0 && g->M[k][1][1] > 0))
        return calib_yaml_fail(f, m->line, m->key, "focal lengths must be positive (%g, %g)",
                               g->M[k][0][0], g->M[k][1][1]);
    double worst;
    if (!rotation_error(g->R[k], &worst))
        return calib_yaml_fail(f, r->line, r->key, "not a rotation (R R^T differs from I by %g, "
                               "or the determinant is negative)", worst);
    const double(*P)[4] = g->P[k];
    if (fabs(P[0][0] - g->focal) > RIG_PX_TOL || fabs(P[1][1] - g->focal) > RIG_PX_TOL ||
        fabs(P[1][2] - g->cy) > RIG_PX_TOL || P[0][1] != 0 || P[1][0] != 0 || P[1][3] != 0 ||
        P[2][0] != 0 || P[2][1] != 0 || P[2][2] != 1 || P[2][3] != 0)
        return calib_yaml_fail(f, p->line, p->key, "not a projection of the common rectified "
                               "frame: expected [f 0 cx -f*B; 0 f cy 0; 0 0 1 0] with f = "
                               "focal_px %g and cy %g, got f %g / %g, cy %g", g->focal, g->cy,
                               P[0][0], P[1][1], P[1][2]);
    double want = k == g->reference ? 0 : P[0][3] / tx_first;
    if (!(fabs(g->ratio[k] - want) <= RIG_RATIO_TOL * (1 + fabs(want))))
        return calib_yaml_fail(f, ratio->line, ratio->key, "%.9g, but the projections give %.9g "
                               "(cam%d_P[0][3] / cam%d_P[0][3]%s)", g->ratio[k], want, k,
                               g->first, k == g->reference ? "; the reference's is 0" : "");
    return 0;
}

static int read_rig(const calib_yaml_file *f, calib_rig *g)
{
    enum { TOP = 9, NCAM = CALIB_RIG_MAX * RIG_NKEYS };
    char names[NCAM][24];
    double dist[CALIB_RIG_MAX][OPENCV_MAX_DIST];
    calib_yaml_field t[TOP + NCAM] = {
        {.key = "rig_cameras", .type = CALIB_YAML_INT, .dst = &g->ncams, .lo = 2,
         .hi = CALIB_RIG_MAX, .required = 1},
        {.key = "reference", .type = CALIB_YAML_INT, .dst = &g->reference, .lo = 0,
         .hi = CALIB_RIG_MAX - 1, .required = 1},
        SIDE("image_width", &g->image_width, 1),
        SIDE("image_height", &g->image_height, 1),
        SIDE("rectified_width", &g->rect_width, 0),
        SIDE("rectified_height", &g->rect_height, 0),
        {.key = "focal_px", .type = CALIB_YAML_REAL, .dst = &g->focal, .lo = 0, .required = 1},
        {.key = "cy", .type = CALIB_YAML_REAL, .dst = &g->cy, .lo = -HUGE_VAL,
         .required = 1},
        {.key = "M1", .type = CALIB_YAML_NOTED}, /* a pair calibration */
    };
    for (int k = 0; k < CALIB_RIG_MAX; k++) {
        calib_yaml_field *cam = &t[TOP + k * RIG_NKEYS];
        for (int j = 0; j < RIG_NKEYS; j++)
            snprintf(names[k * RIG_NKEYS + j], sizeof names[0], "cam%d_%s", k, rig_key_names[j]);
        cam[RIG_M] = (calib_yaml_field)MATRIX(names[k * RIG_NKEYS + RIG_M], &g->M[k][0][0], 3, 3);
        cam[RIG_D] = (calib_yaml_field)VECTOR(names[k * RIG_NKEYS + RIG_D], dist[k],
                                              OPENCV_MAX_DIST);
        cam[RIG_R] = (calib_yaml_field)MATRIX(names[k * RIG_NKEYS + RIG_R], &g->R[k][0][0], 3, 3);
        cam[RIG_P] = (calib_yaml_field)MATRIX(names[k * RIG_NKEYS + RIG_P], &g->P[k][0][0], 3, 4);
        cam[RIG_RATIO] = (calib_yaml_field){.key = names[k * RIG_NKEYS + RIG_RATIO],
                                            .type = CALIB_YAML_REAL, .dst = &g->ratio[k],
                                            .lo = -HUGE_VAL, .required = 1};
    }
    int n = TOP + NCAM;
    if (calib_yaml_read(f, t, n))
        return -1;
    const calib_yaml_field *cams = calib_yaml_find(t, n, "rig_cameras");
    if (!cams->present && calib_yaml_find(t, n, "M1")->present)
        return calib_yaml_fail(f, 0, NULL, "a two-camera calibration (M1 ... Q), not a rig file "
                               "(rig_cameras: N)");
    /* the cameras the file has: required up to rig_cameras, refused beyond it */
    int ncams = cams->present ? g->ncams : 0;
    for (int k = 0; k < CALIB_RIG_MAX; k++)
        for (int j = 0; j < RIG_NKEYS; j++) {
            calib_yaml_field *fd = &t[TOP + k * RIG_NKEYS + j];
            fd->required = k < ncams;
            if (cams->present && k >= ncams && fd->present)
                return calib_yaml_fail(f, fd->line, fd->key, "the rig has %d cameras "
                                       "(rig_cameras, line %d): cam0 .. cam%d", ncams,
                                       cams->line, ncams - 1);
        }
    if (calib_yaml_require(f, t, n))
        return -1;
    const calib_yaml_field *ref = calib_yaml_find(t, n, "reference");
    if (g->reference >= g->ncams)
        return calib_yaml_fail(f, ref->line, ref->key, "%d is not a camera of the rig (0 .. %d)",
                               g->reference, g->ncams - 1);
    int rw = calib_yaml_find(t, n, "rectified_width")->present;
    if (rw != calib_yaml_find(t, n, "rectified_height")->present)
        return calib_yaml_fail(f, 0, NULL, "rectified_width and rectified_height must be given "
                               "together");
    if (!rw) {
        g->rect_width = g->image_width;
        g->rect_height = g->image_height;
    }
    const calib_yaml_field *focal = calib_yaml_find(t, n, "focal_px");
    if (!(g->focal > 0))
        return calib_yaml_fail(f, focal->line, focal->key, "must be positive");
    g->first = g->reference == 0 ? 1 : 0;
    g->cx = g->P[g->first][0][2];
    double tx_first = g->P[g->first][0][3];
    if (!(tx_first < 0)) {
        const calib_yaml_field *p = &t[TOP + g->first * RIG_NKEYS + RIG_P];
        return calib_yaml_fail(f, p->line, p->key, "P[0][3] = %g: the first camera after the "
                               "reference must lie to its right (P[0][3] = -f * B < 0)", tx_first);
    }
    for (int k = 0; k < g->ncams; k++) {
        const calib_yaml_field *cam = &t[TOP + k * RIG_NKEYS];
        if (opencv_distortion(f, &cam[RIG_D], dist[k], g->D[k], &g->ndist[k]) ||
            check_rig_camera(f, cam, k, g, tx_first))
            return -1;
    }
    return 0;
}

int calib_rig_read(const char *path, calib_rig *out, char *err, size_t errlen)
{
    calib_yaml_file f = {path ? path : "(null)", "a rig file (stereo-calibrate --view)",
                         CALIB_YAML_OPENCV | CALIB_YAML_UNKNOWN_KEYS_OK, err, errlen};
    memset(out, 0, sizeof *out);
    int rc = read_rig(&f, out);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

int calib_is_rig(const char *path, char *err, size_t errlen)
{
    calib_yaml_file f = {path ? path : "(null)", "an OpenCV calibration YAML",
                         CALIB_YAML_OPENCV | CALIB_YAML_UNKNOWN_KEYS_OK, err, errlen};
    calib_yaml_field t[] = {{.key = "rig_cameras", .type = CALIB_YAML_NOTED}};
    if (calib_yaml_read(&f, t, 1))
        return -1;
    return t[0].present;
}

int calib_rig_map_path(const char *maps, int reference, int k, char *out, size_t n)
{
    /* the extension as Python's os.path.splitext: the last '.' of the file name, not counting
     * the name's leading dots */
    const char *base = strrchr(maps, '/');
    base = base ? base + 1 : maps;
    while (*base == '.')
        base++;
    const char *dot = strrchr(base, '.');
    size_t stem = dot ? (size_t)(dot - maps) : strlen(maps);
    int len = snprintf(out, n, "%.*s-%d-%d%s", (int)stem, maps, reference, k, dot ? dot : "");
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* ---- maps ------------------------------------------------------------------------------------ */

/* 3x3 inverse by the adjugate; -1 when singular (or nearly). */
static int invert3(const double a[3][3], double inv[9])
{
    double c00 = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    double c01 = a[1][2] * a[2][0] - a[1][0] * a[2][2];
    double c02 = a[1][0] * a[2][1] - a[1][1] * a[2][0];
    double det = a[0][0] * c00 + a[0][1] * c01 + a[0][2] * c02;
    /* |det| relative to its largest possible value for these rows (Hadamard's bound) */
    double bound = 1;
    for (int i = 0; i < 3; i++)
        bound *= sqrt(a[i][0] * a[i][0] + a[i][1] * a[i][1] + a[i][2] * a[i][2]);
    if (!isfinite(det) || !(fabs(det) > 1e-12 * bound))
        return -1;
    double r = 1.0 / det;
    inv[0] = c00 * r;
    inv[1] = (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * r;
    inv[2] = (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * r;
    inv[3] = c01 * r;
    inv[4] = (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * r;
    inv[5] = (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * r;
    inv[6] = c02 * r;
    inv[7] = (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * r;
    inv[8] = (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * r;
    return 0;
}

/* A map coordinate in 1/32 px, rounded to nearest (ties to even, as OpenCV's cvRound), kept in a
 * range where the integer part still saturates to int16 below. */
static long to_fixed(double v)
{
    double s = v * FIX_ONE;
    if (!(s > -1e9)) /* also NaN (w = 0 behind the camera plane) */
        return -1000000000L;
    if (s > 1e9)
        return 1000000000L;
    return lrint(s);
}

static int16_t int_part(long fixed)
{
    long i = (fixed - (fixed & (FIX_ONE - 1))) / FIX_ONE; /* floor(fixed / 32) */
    return (int16_t)(i < INT16_MIN ? INT16_MIN : i > INT16_MAX ? INT16_MAX : i);
}

/* The map of one camera with matrix M and distortion D (calib.h gives the formula: OpenCV's
 * initUndistortRectifyMap); ir = inv(P[:, 0:3] * R). */
static void compute_map(const double M[3][3], const double D[CALIB_MAX_DIST], const double ir[9],
                        int16_t *xy, uint16_t *frac, int out_w, int out_h)
{
    double fx = M[0][0], fy = M[1][1], cx = M[0][2], cy = M[1][2];
    double k1 = D[0], k2 = D[1], p1 = D[2], p2 = D[3], k3 = D[4], k4 = D[5], k5 = D[6],
           k6 = D[7];
    for (int v = 0; v < out_h; v++) {
        double x0 = v * ir[1] + ir[2], y0 = v * ir[4] + ir[5], w0 = v * ir[7] + ir[8];
        for (int u = 0; u < out_w; u++) {
            double w = 1.0 / (w0 + u * ir[6]);
            double x = (x0 + u * ir[0]) * w, y = (y0 + u * ir[3]) * w;
            double x2 = x * x, y2 = y * y, r2 = x2 + y2, xy2 = 2 * x * y;
            double radial = (1 + ((k3 * r2 + k2) * r2 + k1) * r2) /
                            (1 + ((k6 * r2 + k5) * r2 + k4) * r2);
            double su = fx * (x * radial + p1 * xy2 + p2 * (r2 + 2 * x2)) + cx;
            double sv = fy * (y * radial + p1 * (r2 + 2 * y2) + p2 * xy2) + cy;
            long iu = to_fixed(su), iv = to_fixed(sv);
            size_t i = (size_t)v * out_w + u;
            xy[2 * i] = int_part(iu);
            xy[2 * i + 1] = int_part(iv);
            frac[i] = (uint16_t)((iv & (FIX_ONE - 1)) * FIX_ONE + (iu & (FIX_ONE - 1)));
        }
    }
}

/* The output size asked for (0x0: the calibration's rectified size rw x rh), checked. */
/* The maps' size: out_w x out_h when given, else the file's rectified size rw x rh, which may be
 * at most RECT_MAX_SCALE times the camera images' iw x ih on a side (a larger one rectifies
 * nothing the cameras saw, and its maps and stage would be built for nothing: 8192x8192 from
 * 64x48 images took 45 s and 8.9 GB before). Checked before any map is built. */
#define RECT_MAX_SCALE 4
static int output_size(int *out_w, int *out_h, int rw, int rh, int iw, int ih, const char *name,
                       char *err, size_t errlen)
{
    if (*out_w == 0 && *out_h == 0) {
        *out_w = rw;
        *out_h = rh;
        if ((long)rw > (long)RECT_MAX_SCALE * iw || (long)rh > (long)RECT_MAX_SCALE * ih) {
            imgio_error(err, errlen, name, "rectified_width x rectified_height %dx%d is more than "
                        "%d times the %dx%d camera images on a side: not a rectification of them",
                        rw, rh, RECT_MAX_SCALE, iw, ih);
            return -1;
        }
    }
    if (*out_w < 1 || *out_h < 1) {
        imgio_error(err, errlen, name, "output size %dx%d is out of range", *out_w, *out_h);
        return -1;
    }
    return image_check_side(name, *out_w, *out_h, err, errlen);
}

/* When cam_w > 0, a calibration must be for cam_w x cam_h camera images: checked before its maps
 * are built (a mismatch used to build 1.18 GB of maps first). */
static int check_camera_size(const char *path, int iw, int ih, int cam_w, int cam_h, char *err,
                             size_t errlen)
{
    if (cam_w > 0 && (iw != cam_w || ih != cam_h)) {
        imgio_error(err, errlen, path, "maps are for %dx%d camera images, but the images are %dx%d",
                    iw, ih, cam_w, cam_h);
        return -1;
    }
    return 0;
}

/* inv(P[:, 0:3] * R): rectified pixel -> camera ray; -1 naming which (e.g. "P1 * R1") when
 * singular. */
static int rectified_to_ray(const double P[3][4], const double R[3][3], double ir[9],
                            const char *which, const char *name, char *err, size_t errlen)
{
    double a[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            a[i][j] = P[i][0] * R[0][j] + P[i][1] * R[1][j] + P[i][2] * R[2][j];
    if (invert3(a, ir)) {
        imgio_error(err, errlen, name, "%s is singular: not a rectification", which);
        return -1;
    }
    return 0;
}

/* Allocates *m for an out_w x out_h map of src_w x src_h images and computes it. */
static int camera_map(const double M[3][3], const double D[CALIB_MAX_DIST], const double ir[9],
                      int src_w, int src_h, int out_w, int out_h, stereo_map *m,
                      const char *name, char *err, size_t errlen)
{
    size_t n = (size_t)out_w * out_h;
    int16_t *xy = malloc(4 * n);
    uint16_t *frac = malloc(2 * n);
    *m = (stereo_map){out_w, out_h, src_w, src_h, xy, frac};
    if (!xy || !frac) {
        free(xy);
        free(frac);
        memset(m, 0, sizeof *m);
        imgio_error(err, errlen, name, "out of memory for %dx%d maps", out_w, out_h);
        return -1;
    }
    compute_map(M, D, ir, xy, frac, out_w, out_h);
    return 0;
}

/* calib_compute_maps, with the name errors start with (the calibration file when known). */
static int compute_maps(const stereo_calib *c, int out_w, int out_h, stereo_map maps[2],
                        const char *name, char *err, size_t errlen)
{
    memset(maps, 0, 2 * sizeof *maps);
    if (output_size(&out_w, &out_h, c->rect_width, c->rect_height, c->image_width,
                    c->image_height, name, err, errlen))
        return -1;
    double ir[2][9];
    if (rectified_to_ray(c->P[0], c->Rrect[0], ir[0], "P1 * R1", name, err, errlen) ||
        rectified_to_ray(c->P[1], c->Rrect[1], ir[1], "P2 * R2", name, err, errlen))
        return -1;
    for (int k = 0; k < 2; k++)
        if (camera_map(c->M[k], c->D[k], ir[k], c->image_width, c->image_height, out_w, out_h,
                       &maps[k], name, err, errlen)) {
            mapfile_free(maps);
            return -1;
        }
    return 0;
}

int calib_compute_maps(const stereo_calib *c, int out_w, int out_h, stereo_map maps[2],
                       char *err, size_t errlen)
{
    return compute_maps(c, out_w, out_h, maps, "calibration", err, errlen);
}

void calib_rig_free_maps(stereo_map maps[CALIB_RIG_MAX])
{
    for (int k = 0; k < CALIB_RIG_MAX; k += 2)
        mapfile_free(&maps[k]);
}

static int rig_compute_maps(const calib_rig *g, int out_w, int out_h,
                            stereo_map maps[CALIB_RIG_MAX], const char *name, char *err,
                            size_t errlen)
{
    memset(maps, 0, CALIB_RIG_MAX * sizeof *maps);
    if (output_size(&out_w, &out_h, g->rect_width, g->rect_height, g->image_width,
                    g->image_height, name, err, errlen))
        return -1;
    for (int k = 0; k < g->ncams; k++) {
        char which[40];
        double ir[9];
        snprintf(which, sizeof which, "cam%d_P * cam%d_R", k, k);
        if (rectified_to_ray(g->P[k], g->R[k], ir, which, name, err, errlen) ||
            camera_map(g->M[k], g->D[k], ir, g->image_width, g->image_height, out_w, out_h,
                       &maps[k], name, err, errlen)) {
            calib_rig_free_maps(maps);
            return -1;
        }
    }
    return 0;
}

int calib_rig_compute_maps(const calib_rig *g, int out_w, int out_h,
                           stereo_map maps[CALIB_RIG_MAX], char *err, size_t errlen)
{
    return rig_compute_maps(g, out_w, out_h, maps, "rig", err, errlen);
}

int calib_rig_load(const char *path, int cam_w, int cam_h, calib_rig *rig,
                   stereo_map maps[CALIB_RIG_MAX], char *err, size_t errlen)
{
    memset(maps, 0, CALIB_RIG_MAX * sizeof *maps);
    return calib_rig_read(path, rig, err, errlen) ||
                   check_camera_size(path, rig->image_width, rig->image_height, cam_w, cam_h, err,
                                     errlen) ||
                   rig_compute_maps(rig, 0, 0, maps, path, err, errlen)
               ? -1 : 0;
}

/* When cam_w > 0 the maps must be for cam_w x cam_h camera images (else they are freed). */
static int check_source_size(const char *path, int cam_w, int cam_h, stereo_map maps[2],
                             char *err, size_t errlen)
{
    if (check_camera_size(path, maps[0].src_width, maps[0].src_height, cam_w, cam_h, err,
                          errlen) == 0)
        return 0;
    mapfile_free(maps);
    return -1;
}

int calib_load_maps(const char *path, int cam_w, int cam_h, stereo_map maps[2], char *err,
                    size_t errlen)
{
    return calib_load_maps_camera(path, cam_w, cam_h, maps, NULL, NULL, err, errlen);
}

int calib_camera(const stereo_calib *c, depth_camera *cam, char *err, size_t errlen)
{
    *cam = (depth_camera){c->P[0][0][0], c->P[0][0][2], c->P[0][1][2], calib_baseline(c),
                          c->P[1][0][2] - c->P[0][0][2]};
    return depth_camera_check(cam, "calibration camera", err, errlen);
}

/* The camera of a calibration read whole, for calib_load_maps_camera; not checked when nobody
 * asked for it (calib_load_maps). */
static int give_camera(const char *path, const stereo_calib *c, depth_camera *cam,
                       int *has_camera, char *err, size_t errlen)
{
    if (!cam && !has_camera)
        return 0;
    depth_camera tmp;
    char why[128];
    if (calib_camera(c, &tmp, why, sizeof why) != 0) {
        imgio_error(err, errlen, path, "%s", why);
        return -1;
    }
    if (cam)
        *cam = tmp;
    if (has_camera)
        *has_camera = 1;
    return 0;
}

int calib_load_maps_camera(const char *path, int cam_w, int cam_h, stereo_map maps[2],
                           depth_camera *cam, int *has_camera, char *err, size_t errlen)
{
    memset(maps, 0, 2 * sizeof *maps);
    if (has_camera)
        *has_camera = 0;
    char left[PATH_MAX], right[PATH_MAX];
    int pair = split_pair(path ? path : "", left, right, sizeof left, err, errlen);
    if (pair < 0)
        return -1;
    if (pair) {
        stereo_calib c;
        return calib_read_camera_info(left, right, &c, err, errlen) ||
                       give_camera(path, &c, cam, has_camera, err, errlen) ||
                       check_camera_size(path, c.image_width, c.image_height, cam_w, cam_h, err,
                                         errlen) ||
                       compute_maps(&c, 0, 0, maps, path, err, errlen)
                   ? -1 : 0;
    }
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;
    char head[8] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got == sizeof head && memcmp(head, "STMAPS\r\n", 8) == 0) {
        if (mapfile_read_camera(path, maps, cam, has_camera, err, errlen))
            return -1;
    } else if (got >= 5 && memcmp(head, "%YAML", 5) == 0) {
        int rig = calib_is_rig(path, err, errlen);
        if (rig < 0)
            return -1;
        if (rig) { /* two cameras: the reference (left) and the other one (right) */
            calib_rig g;
            stereo_map all[CALIB_RIG_MAX];
            if (calib_rig_load(path, cam_w, cam_h, &g, all, err, errlen))
                return -1;
            if (g.ncams > 2) {
                calib_rig_free_maps(all);
                imgio_error(err, errlen, path, "a rig file of %d cameras: two views' maps are in "
                            "the pair map files that stereo-calibrate --maps MAPS or calib-maps "
                            "RIG MAPS write (MAPS-R-K)", g.ncams);
                return -1;
            }
            maps[0] = all[g.reference];
            maps[1] = all[g.first];
            return 0;
        }
        stereo_calib c;
        if (calib_read_yaml(path, &c, err, errlen) ||
            give_camera(path, &c, cam, has_camera, err, errlen) ||
            check_camera_size(path, c.image_width, c.image_height, cam_w, cam_h, err, errlen) ||
            compute_maps(&c, 0, 0, maps, path, err, errlen))
            return -1;
    } else {
        camera_info ci;
        char quiet[8];
        if (read_camera_info(path, &ci, quiet, sizeof quiet) == 0)
            imgio_error(err, errlen, path, "one camera's ROS camera_info: give both cameras' "
                        "files as LEFT,RIGHT");
        else
            imgio_error(err, errlen, path,
                        "neither a map file (stereo-calibrate --maps), a calibration YAML "
                        "(%%YAML:1.0) nor a LEFT,RIGHT pair of ROS camera_info files");
        return -1;
    }
    return check_source_size(path, cam_w, cam_h, maps, err, errlen);
}

double calib_baseline(const stereo_calib *c)
{
    return sqrt(c->T[0] * c->T[0] + c->T[1] * c->T[1] + c->T[2] * c->T[2]);
}

double calib_focal_px(const stereo_calib *c)
{
    return c->P[0][0][0];
}
