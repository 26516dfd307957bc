/* SPDX-License-Identifier: Apache-2.0 */
/* calib.c — see calib.h. */
#include "calib.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapfile.h"
#include "pnm.h"

#define YAML_MAX_BYTES (1 << 22) /* a calibration is a few kB; refuse anything absurd */
#define YAML_MAX_KEYS 1000       /* top-level keys (a calibration has about 20) */
#define MATRIX_MAX_SIDE 1000     /* rows/cols of any matrix in the file */
#define FIX_BITS 5               /* OpenCV's INTER_BITS: map positions in 1/32 px */
#define FIX_ONE (1 << FIX_BITS)

/* ---- the YAML subset ------------------------------------------------------------------------ */

/* One top-level "key: value". Continuation lines (indented, or blank) are lines[first..end). */
typedef struct {
    const char *key;
    const char *value; /* the rest of the key's line, trimmed */
    int line;          /* 0-based index into lines */
    int first, end;
} yaml_entry;

typedef struct {
    const char *path;
    char *text;
    char **lines;
    int nlines;
    yaml_entry *entries;
    int nentries;
    char *err;
    size_t errlen;
    int ros;          /* a ROS camera_info file: no header needed, untagged matrices */
} yaml_doc;

/* What the file should have been, for "not ..." messages. */
static const char *doc_kind(const yaml_doc *d)
{
    return d->ros ? "a ROS camera_info file" : "an OpenCV calibration YAML";
}

/* "<path>: line N: <key>: <what>" (key may be NULL). Returns -1. */
static int yaml_fail(yaml_doc *d, int line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int yaml_fail(yaml_doc *d, int line, const char *key, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (key)
        imgio_error(d->err, d->errlen, d->path, "line %d: %s: %s", line + 1, key, what);
    else
        imgio_error(d->err, d->errlen, d->path, "line %d: %s", line + 1, what);
    return -1;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

static char *trim(char *s)
{
    while (is_space(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_space(s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Cuts a "#" comment (at the line start or after a blank, outside quotes) and trailing blanks. */
static void strip_comment(char *s)
{
    char quote = 0;
    for (char *p = s; *p; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (*p == '#' && (p == s || is_space(p[-1]))) {
            *p = '\0';
            break;
        }
    }
    size_t n = strlen(s);
    while (n > 0 && is_space(s[n - 1]))
        s[--n] = '\0';
}

static int indent_of(const char *s)
{
    int n = 0;
    while (s[n] == ' ')
        n++;
    return n;
}

/* Reads the file and splits it into lines (in place, comments removed). */
static int yaml_load(yaml_doc *d)
{
    FILE *f = imgio_open(d->path, d->err, d->errlen);
    if (!f)
        return -1;
    d->text = malloc(YAML_MAX_BYTES + 1);
    if (!d->text) {
        fclose(f);
        imgio_error(d->err, d->errlen, d->path, "out of memory");
        return -1;
    }
    size_t n = fread(d->text, 1, YAML_MAX_BYTES + 1, f);
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        imgio_error(d->err, d->errlen, d->path, "read error: %s", strerror(errno));
        return -1;
    }
    if (n > YAML_MAX_BYTES) {
        imgio_error(d->err, d->errlen, d->path, "larger than %d bytes: not a calibration file",
                    YAML_MAX_BYTES);
        return -1;
    }
    d->text[n] = '\0';
    if (memchr(d->text, '\0', n)) {
        imgio_error(d->err, d->errlen, d->path, "binary data (a NUL byte): not %s",
                    doc_kind(d));
        return -1;
    }
    int count = 1;
    for (size_t i = 0; i < n; i++)
        count += d->text[i] == '\n';
    d->lines = malloc(sizeof *d->lines * (size_t)count);
    if (!d->lines) {
        imgio_error(d->err, d->errlen, d->path, "out of memory");
        return -1;
    }
    char *p = d->text;
    for (d->nlines = 0; d->nlines < count; d->nlines++) {
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = '\0';
        size_t len = strlen(p);
        if (len > 0 && p[len - 1] == '\r')
            p[len - 1] = '\0';
        strip_comment(p);
        d->lines[d->nlines] = p;
        if (!eol) {
            d->nlines++;
            break;
        }
        p = eol + 1;
    }
    return 0;
}

static int is_yaml_directive(const char *h)
{
    return strncmp(h, "%YAML", 5) == 0 && (h[5] == ':' || h[5] == ' ') &&
           strncmp(h + 6, "1.", 2) == 0;
}

/* Header, then the top-level entries with their continuation lines. OpenCV's files start with
 * "%YAML:1.0" and "---"; a camera_info file may start with either, both or neither. */
static int yaml_index(yaml_doc *d)
{
    const char *h = d->nlines > 0 ? d->lines[0] : "";
    int i = 0;
    if (!d->ros) {
        if (!is_yaml_directive(h))
            return yaml_fail(d, 0, NULL,
                             "not an OpenCV YAML file (the first line must be %%YAML:1.0)");
        i = 1;
        while (i < d->nlines && !*trim(d->lines[i]))
            i++;
        if (i >= d->nlines || strncmp(trim(d->lines[i]), "---", 3) != 0)
            return yaml_fail(d, i < d->nlines ? i : d->nlines - 1, NULL,
                             "expected the document start '---' after the %%YAML line");
    } else {
        while (i < d->nlines && !*trim(d->lines[i]))
            i++;
        if (i < d->nlines && is_yaml_directive(d->lines[i]))
            for (i++; i < d->nlines && !*trim(d->lines[i]);)
                i++;
        if (i < d->nlines && strcmp(trim(d->lines[i]), "---") == 0)
            i++;
        i--; /* the loop below starts after the header */
    }
    d->entries = malloc(sizeof *d->entries * YAML_MAX_KEYS);
    if (!d->entries) {
        imgio_error(d->err, d->errlen, d->path, "out of memory");
        return -1;
    }
    int ended = 0;
    for (i++; i < d->nlines; i++) {
        char *s = d->lines[i];
        if (strchr(s, '\t') && indent_of(s) < (int)strspn(s, " \t"))
            return yaml_fail(d, i, NULL, "tab in the indentation (YAML indents with spaces)");
        if (!*trim(s) || indent_of(s) > 0) {
            if (!*trim(s))
                continue;
            if (d->nentries == 0 || ended)
                return yaml_fail(d, i, NULL, "indented line outside any key");
            d->entries[d->nentries - 1].end = i + 1;
            continue;
        }
        if (ended)
            return yaml_fail(d, i, NULL, "text after the document end '...'");
        if (strcmp(s, "...") == 0) {
            ended = 1;
            continue;
        }
        /* key: value */
        size_t k = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.");
        if (k == 0 || s[k] != ':' || (s[k + 1] && !is_space(s[k + 1])))
            return yaml_fail(d, i, NULL, "expected 'key: value', got '%.40s'", s);
        s[k] = '\0';
        if (d->nentries == YAML_MAX_KEYS)
            return yaml_fail(d, i, NULL, "more than %d keys: not a calibration file",
                             YAML_MAX_KEYS);
        for (int e = 0; e < d->nentries; e++)
            if (strcmp(d->entries[e].key, s) == 0)
                return yaml_fail(d, i, s, "appears twice (first on line %d)",
                                 d->entries[e].line + 1);
        d->entries[d->nentries++] = (yaml_entry){s, trim(s + k + 1), i, i + 1, i + 1};
    }
    return 0;
}

static const yaml_entry *yaml_find(const yaml_doc *d, const char *key)
{
    for (int e = 0; e < d->nentries; e++)
        if (strcmp(d->entries[e].key, key) == 0)
            return &d->entries[e];
    return NULL;
}

/* Next non-blank continuation line of e at or after *i, or -1. */
static int next_line(const yaml_doc *d, const yaml_entry *e, int i)
{
    for (; i < e->end; i++)
        if (*trim(d->lines[i]))
            return i;
    return -1;
}

/* A plain real number (digits, sign, point, exponent): strtod alone would also take "nan",
 * "inf" and hex, which OpenCV never writes for a finite value. */
static int parse_real(const char *s, double *out)
{
    if (!*s || strspn(s, "0123456789+-.eE") != strlen(s) || !strpbrk(s, "0123456789"))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    if (!*s || strspn(s, "0123456789+-") != strlen(s))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno == ERANGE || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The value of a scalar key: on the key's line, nothing indented below it. */
static int scalar_text(yaml_doc *d, const yaml_entry *e, const char **out)
{
    int extra = next_line(d, e, e->first);
    if (!*e->value || extra >= 0)
        return yaml_fail(d, e->line, e->key, "expected a single value on the key's line");
    *out = e->value;
    return 0;
}

static int get_int(yaml_doc *d, const char *key, int required, long lo, long hi, int *out)
{
    const yaml_entry *e = yaml_find(d, key);
    const char *s = "";
    long v;
    if (!e) {
        if (required)
            imgio_error(d->err, d->errlen, d->path, "missing key '%s'", key);
        return required ? -1 : 1;
    }
    if (scalar_text(d, e, &s))
        return -1;
    if (parse_int(s, lo, hi, &v))
        return yaml_fail(d, e->line, key, "'%.40s' is not an integer in [%ld, %ld]", s, lo, hi);
    *out = (int)v;
    return 0;
}

/* An image side (image_width, rectified_height, ...): a positive integer no larger than the stage
 * takes (STEREO_MAX_SIDE), refused here so that no map of that size is ever computed. */
static int get_side(yaml_doc *d, const char *key, int required, int *out)
{
    int rc = get_int(d, key, required, 1, INT_MAX, out);
    if (rc == 0 && *out > STEREO_MAX_SIDE)
        return yaml_fail(d, yaml_find(d, key)->line, key,
                         "%d is larger than the largest image the matcher takes (%dx%d)", *out,
                         STEREO_MAX_SIDE, STEREO_MAX_SIDE);
    return rc;
}

/* Matrix fields of an "!!opencv-matrix" entry. Values go to out (up to maxn; out may be NULL
 * to only check the syntax). */
typedef struct {
    int rows, cols, n;
} matrix_shape;

static int parse_matrix(yaml_doc *d, const yaml_entry *e, double *out, int maxn,
                        matrix_shape *shape)
{
    long rows = -1, cols = -1;
    int have_dt = 0, have_data = 0, n = 0;
    /* OpenCV tags its matrices and always writes dt; ROS writes a plain mapping (dt optional) */
    int tagged = strcmp(e->value, "!!opencv-matrix") == 0;
    if (!tagged && !(d->ros && !*e->value))
        return yaml_fail(d, e->line, e->key,
                         d->ros ? "expected a matrix (rows, cols and data indented below the "
                                  "key), got '%.40s'"
                                : "expected a matrix (!!opencv-matrix), got '%.40s'",
                         e->value);
    for (int i = next_line(d, e, e->first); i >= 0; i = next_line(d, e, i + 1)) {
        /* "field: value"; the line is left intact (entries are parsed more than once) */
        const char *line = d->lines[i] + indent_of(d->lines[i]);
        size_t klen = strcspn(line, ":");
        if (!line[klen] || (line[klen + 1] && !is_space(line[klen + 1])) || klen > 8)
            return yaml_fail(d, i, e->key, "expected 'rows:', 'cols:', 'dt:' or 'data:'");
        char s[9];
        memcpy(s, line, klen);
        s[klen] = '\0';
        char *v = (char *)line + klen + 1;
        v += strspn(v, " \t");
        if (strcmp(s, "rows") == 0 || strcmp(s, "cols") == 0) {
            long *dst = s[0] == 'r' ? &rows : &cols;
            if (*dst >= 0)
                return yaml_fail(d, i, e->key, "'%s' given twice", s);
            if (parse_int(v, 0, MATRIX_MAX_SIDE, dst))
                return yaml_fail(d, i, e->key, "%s '%.40s' is not an integer in [0, %d]", s, v,
                                 MATRIX_MAX_SIDE);
        } else if (strcmp(s, "dt") == 0) {
            if (have_dt++)
                return yaml_fail(d, i, e->key, "'dt' given twice");
            if (strlen(v) != 1 || !strchr("ucwsifd", v[0]))
                return yaml_fail(d, i, e->key,
                                 "dt '%.20s' is not a one-channel type (u c w s i f d)", v);
        } else if (strcmp(s, "data") == 0) {
            if (have_data++)
                return yaml_fail(d, i, e->key, "'data' given twice");
            if (*v != '[')
                return yaml_fail(d, i, e->key, *v ? "data must start with '['"
                                                   : "data is empty (truncated file?)");
            v++;
            /* numbers separated by commas, up to the closing ']' (possibly lines below) */
            int closed = 0, expect_number = 1;
            for (;;) {
                char *tok = v;
                while (*tok && !closed) {
                    tok += strspn(tok, " \t");
                    if (!*tok)
                        break;
                    if (*tok == ']') {
                        if (expect_number && n > 0)
                            return yaml_fail(d, i, e->key, "a number is missing before ']'");
                        closed = 1;
                        if (*trim(tok + 1))
                            return yaml_fail(d, i, e->key, "text after the closing ']'");
                        break;
                    }
                    if (*tok == ',') {
                        if (expect_number)
                            return yaml_fail(d, i, e->key, "empty element in data");
                        expect_number = 1;
                        tok++;
                        continue;
                    }
                    if (!expect_number)
                        return yaml_fail(d, i, e->key, "expected ',' between numbers");
                    size_t len = strcspn(tok, " \t,]");
                    char save = tok[len];
                    tok[len] = '\0';
                    double x;
                    if (parse_real(tok, &x))
                        return yaml_fail(d, i, e->key, "'%.40s' is not a finite number", tok);
                    tok[len] = save;
                    if (out && n < maxn)
                        out[n] = x;
                    n++;
                    expect_number = 0;
                    tok += len;
                }
                if (closed)
                    break;
                i = next_line(d, e, i + 1);
                if (i < 0)
                    return yaml_fail(d, e->end - 1, e->key,
                                     "data has no closing ']' (truncated file?)");
                v = trim(d->lines[i]);
            }
        } else {
            return yaml_fail(d, i, e->key, "unexpected matrix field '%.20s'", s);
        }
    }
    const char *missing = rows < 0 ? "rows" : cols < 0 ? "cols" : !have_dt && tagged ? "dt"
                        : !have_data ? "data" : NULL;
    if (missing)
        return yaml_fail(d, e->line, e->key, "matrix without '%s' (truncated file?)", missing);
    if (n != rows * cols)
        return yaml_fail(d, e->line, e->key, "data has %d numbers, but rows x cols = %ldx%ld",
                         n, rows, cols);
    *shape = (matrix_shape){(int)rows, (int)cols, n};
    return 0;
}

/* A required matrix of exactly rows x cols (or, with either_way, cols x rows too). */
static int get_matrix(yaml_doc *d, const char *key, int rows, int cols, int either_way,
                      double *out)
{
    const yaml_entry *e = yaml_find(d, key);
    matrix_shape sh;
    if (!e) {
        imgio_error(d->err, d->errlen, d->path, "missing key '%s'", key);
        return -1;
    }
    if (parse_matrix(d, e, out, rows * cols, &sh))
        return -1;
    if (!(sh.rows == rows && sh.cols == cols) &&
        !(either_way && sh.rows == cols && sh.cols == rows))
        return yaml_fail(d, e->line, key, "%dx%d matrix, expected %dx%d", sh.rows, sh.cols,
                         rows, cols);
    return 0;
}

static int get_distortion(yaml_doc *d, const char *key, double *out, int *count)
{
    const yaml_entry *e = yaml_find(d, key);
    matrix_shape sh;
    double all[14] = {0};
    if (!e) {
        imgio_error(d->err, d->errlen, d->path, "missing key '%s'", key);
        return -1;
    }
    if (parse_matrix(d, e, all, 14, &sh))
        return -1;
    /* OpenCV returns 12 or 14 coefficients (+ thin prism s1..s4, tilt tx ty) for the rational
     * model even when those are fixed at 0; zeros there are the 8-coefficient model */
    int extra_zero = 1;
    for (int i = CALIB_MAX_DIST; i < sh.n && i < 14; i++)
        extra_zero &= all[i] == 0;
    int n = sh.n;
    if ((n == 12 || n == 14) && extra_zero)
        n = CALIB_MAX_DIST;
    if ((sh.rows != 1 && sh.cols != 1) || (n != 4 && n != 5 && n != 8))
        return yaml_fail(d, e->line, key,
                         "%dx%d: expected 4, 5 or 8 coefficients (k1 k2 p1 p2 [k3 [k4 k5 k6]]; "
                         "the thin-prism and tilted models are not supported)",
                         sh.rows, sh.cols);
    memcpy(out, all, sizeof(double) * (size_t)n);
    *count = n;
    return 0;
}

/* Every other entry must at least be well formed: a truncated or damaged file fails here even
 * where the damage is in a key we do not use. */
static int check_other_entries(yaml_doc *d)
{
    for (int k = 0; k < d->nentries; k++) {
        const yaml_entry *e = &d->entries[k];
        matrix_shape sh;
        if (strcmp(e->value, "!!opencv-matrix") == 0) {
            if (parse_matrix(d, e, NULL, 0, &sh))
                return -1;
        } else if (e->value[0] == '"' || e->value[0] == '\'') {
            size_t n = strlen(e->value);
            if (n < 2 || e->value[n - 1] != e->value[0])
                return yaml_fail(d, e->line, e->key, "unterminated string");
        } else if (e->value[0] == '[' || e->value[0] == '{') {
            int depth = 0;
            for (int i = e->line; i < e->end; i++)
                for (const char *p = i == e->line ? e->value : d->lines[i]; *p; p++)
                    depth += (*p == '[' || *p == '{') - (*p == ']' || *p == '}');
            if (depth != 0)
                return yaml_fail(d, e->line, e->key, "unbalanced brackets (truncated file?)");
        }
    }
    return 0;
}

static int yaml_to_calib(yaml_doc *d, stereo_calib *c)
{
    static const char *dist_key[2] = {"D1", "D2"}, *cam_key[2] = {"M1", "M2"},
                      *rect_key[2] = {"R1", "R2"}, *proj_key[2] = {"P1", "P2"};
    if (check_other_entries(d))
        return -1;
    if (!yaml_find(d, "M1") && yaml_find(d, "camera_matrix")) {
        imgio_error(d->err, d->errlen, d->path,
                    "one camera's ROS camera_info, not a stereo calibration: give both "
                    "cameras' files as LEFT,RIGHT");
        return -1;
    }
    if (get_side(d, "image_width", 1, &c->image_width) ||
        get_side(d, "image_height", 1, &c->image_height))
        return -1;
    for (int k = 0; k < 2; k++)
        if (get_matrix(d, cam_key[k], 3, 3, 0, &c->M[k][0][0]) ||
            get_distortion(d, dist_key[k], c->D[k], &c->ndist[k]))
            return -1;
    if (get_matrix(d, "R", 3, 3, 0, &c->R[0][0]) || get_matrix(d, "T", 3, 1, 1, c->T))
        return -1;
    for (int k = 0; k < 2; k++)
        if (get_matrix(d, rect_key[k], 3, 3, 0, &c->Rrect[k][0][0]) ||
            get_matrix(d, proj_key[k], 3, 4, 0, &c->P[k][0][0]))
            return -1;
    if (get_matrix(d, "Q", 4, 4, 0, &c->Q[0][0]))
        return -1;

    int rw = get_side(d, "rectified_width", 0, &c->rect_width);
    if (rw < 0)
        return -1;
    int rh = get_side(d, "rectified_height", 0, &c->rect_height);
    if (rh < 0)
        return -1;
    if (rw != rh) {
        imgio_error(d->err, d->errlen, d->path,
                    "rectified_width and rectified_height must be given together");
        return -1;
    }
    if (rw == 1) { /* both absent: stereoRectify's default, the camera size */
        c->rect_width = c->image_width;
        c->rect_height = c->image_height;
    }
    c->rms = -1;
    const yaml_entry *e = yaml_find(d, "rms");
    if (e) {
        const char *s = "";
        if (scalar_text(d, e, &s))
            return -1;
        if (parse_real(s, &c->rms) || c->rms < 0)
            return yaml_fail(d, e->line, "rms", "'%.40s' is not a number >= 0", s);
    }
    for (int k = 0; k < 2; k++) {
        const yaml_entry *m = yaml_find(d, cam_key[k]);
        if (!(c->M[k][0][0] > 0 && c->M[k][1][1] > 0))
            return yaml_fail(d, m->line, cam_key[k], "focal lengths must be positive (%g, %g)",
                             c->M[k][0][0], c->M[k][1][1]);
    }
    return 0;
}

int calib_read_yaml(const char *path, stereo_calib *out, char *err, size_t errlen)
{
    yaml_doc d = {.path = path ? path : "(null)", .err = err, .errlen = errlen};
    memset(out, 0, sizeof *out);
    int rc = yaml_load(&d);
    if (rc == 0)
        rc = yaml_index(&d);
    if (rc == 0)
        rc = yaml_to_calib(&d, out);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    free(d.entries);
    free(d.lines);
    free(d.text);
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

static int info_distortion(yaml_doc *d, camera_info *ci)
{
    /* distortion_model: older files have none; ROS's own parser then takes plumb_bob */
    const char *model = "plumb_bob";
    char buf[64];
    const yaml_entry *m = yaml_find(d, "distortion_model");
    if (m) {
        const char *s = "";
        if (scalar_text(d, m, &s))
            return -1;
        size_t n = strlen(s);
        if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
            snprintf(buf, sizeof buf, "%.*s", (int)(n - 2), s + 1);
            s = buf;
        }
        if (strcmp(s, "plumb_bob") != 0 && strcmp(s, "rational_polynomial") != 0)
            return yaml_fail(d, m->line, "distortion_model",
                             "'%.40s' is not supported (only plumb_bob and rational_polynomial)",
                             s);
        model = s;
    }
    int rational = strcmp(model, "rational_polynomial") == 0;
    const yaml_entry *e = yaml_find(d, "distortion_coefficients");
    matrix_shape sh;
    double all[CALIB_MAX_DIST] = {0};
    if (!e) {
        imgio_error(d->err, d->errlen, d->path, "missing key 'distortion_coefficients'");
        return -1;
    }
    if (parse_matrix(d, e, all, CALIB_MAX_DIST, &sh))
        return -1;
    int ok = (sh.rows == 1 || sh.cols == 1) &&
             (rational ? sh.n == 8 : (sh.n == 4 || sh.n == 5));
    if (!ok)
        return yaml_fail(d, e->line, "distortion_coefficients",
                         "%dx%d: %s needs %s in one row", sh.rows, sh.cols, model,
                         rational ? "8 coefficients (k1 k2 p1 p2 k3 k4 k5 k6)"
                                  : "5 coefficients (k1 k2 p1 p2 k3) or 4");
    memcpy(ci->D, all, sizeof all);
    ci->ndist = sh.n;
    return 0;
}

static int doc_to_info(yaml_doc *d, camera_info *ci)
{
    if (check_other_entries(d))
        return -1;
    if (yaml_find(d, "M1") && !yaml_find(d, "camera_matrix")) {
        imgio_error(d->err, d->errlen, d->path,
                    "an OpenCV stereo calibration (M1 ... Q), not a ROS camera_info file: give "
                    "it alone, without ','");
        return -1;
    }
    if (!yaml_find(d, "camera_matrix") && !yaml_find(d, "projection_matrix") &&
        !yaml_find(d, "image_width")) {
        imgio_error(d->err, d->errlen, d->path,
                    "no image_width, camera_matrix or projection_matrix: not a ROS camera_info "
                    "file");
        return -1;
    }
    if (get_side(d, "image_width", 1, &ci->width) ||
        get_side(d, "image_height", 1, &ci->height) ||
        get_matrix(d, "camera_matrix", 3, 3, 0, &ci->K[0][0]) || info_distortion(d, ci) ||
        get_matrix(d, "rectification_matrix", 3, 3, 0, &ci->R[0][0]) ||
        get_matrix(d, "projection_matrix", 3, 4, 0, &ci->P[0][0]))
        return -1;
    if (!(ci->K[0][0] > 0 && ci->K[1][1] > 0))
        return yaml_fail(d, yaml_find(d, "camera_matrix")->line, "camera_matrix",
                         "focal lengths must be positive (%g, %g)", ci->K[0][0], ci->K[1][1]);
    if (!(ci->P[0][0] > 0 && ci->P[1][1] > 0))
        return yaml_fail(d, yaml_find(d, "projection_matrix")->line, "projection_matrix",
                         "focal lengths must be positive (%g, %g)", ci->P[0][0], ci->P[1][1]);
    const double(*r)[3] = ci->R;
    double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
                 r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                 r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
    if (!(fabs(det - 1) < INFO_ROT_TOL))
        return yaml_fail(d, yaml_find(d, "rectification_matrix")->line, "rectification_matrix",
                         "not a rotation (determinant %g)", det);
    return 0;
}

static int read_camera_info(const char *path, camera_info *ci, char *err, size_t errlen)
{
    yaml_doc d = {.path = path, .err = err, .errlen = errlen, .ros = 1};
    memset(ci, 0, sizeof *ci);
    int rc = yaml_load(&d);
    if (rc == 0)
        rc = yaml_index(&d);
    if (rc == 0)
        rc = doc_to_info(&d, ci);
    free(d.entries);
    free(d.lines);
    free(d.text);
    return rc;
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

/* The map of camera k (calib.h gives the formula: OpenCV's initUndistortRectifyMap). */
static void compute_map(const stereo_calib *c, int k, const double ir[9], int16_t *xy,
                        uint16_t *frac, int out_w, int out_h)
{
    const double *D = c->D[k];
    double fx = c->M[k][0][0], fy = c->M[k][1][1], cx = c->M[k][0][2], cy = c->M[k][1][2];
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

/* calib_compute_maps, with the name errors start with (the calibration file when known). */
static int compute_maps(const stereo_calib *c, int out_w, int out_h, stereo_map maps[2],
                        const char *name, char *err, size_t errlen)
{
    memset(maps, 0, 2 * sizeof *maps);
    if (out_w == 0 && out_h == 0) {
        out_w = c->rect_width;
        out_h = c->rect_height;
    }
    if (out_w < 1 || out_h < 1) {
        imgio_error(err, errlen, name, "output size %dx%d is out of range", out_w, out_h);
        return -1;
    }
    if (image_check_side(name, out_w, out_h, err, errlen) != 0)
        return -1;
    double ir[2][9];
    for (int k = 0; k < 2; k++) {
        double a[3][3]; /* P_k[:, 0:3] * R_k: rectified pixel <- camera ray */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a[i][j] = c->P[k][i][0] * c->Rrect[k][0][j] + c->P[k][i][1] * c->Rrect[k][1][j] +
                          c->P[k][i][2] * c->Rrect[k][2][j];
        if (invert3(a, ir[k])) {
            imgio_error(err, errlen, name, "P%d * R%d is singular: not a rectification",
                        k + 1, k + 1);
            return -1;
        }
    }
    size_t n = (size_t)out_w * out_h;
    for (int k = 0; k < 2; k++) {
        int16_t *xy = malloc(4 * n);
        uint16_t *frac = malloc(2 * n);
        maps[k] = (stereo_map){out_w, out_h, c->image_width, c->image_height, xy, frac};
        if (!xy || !frac) {
            mapfile_free(maps);
            imgio_error(err, errlen, name, "out of memory for %dx%d maps", out_w, out_h);
            return -1;
        }
        compute_map(c, k, ir[k], xy, frac, out_w, out_h);
    }
    return 0;
}

int calib_compute_maps(const stereo_calib *c, int out_w, int out_h, stereo_map maps[2],
                       char *err, size_t errlen)
{
    return compute_maps(c, out_w, out_h, maps, "calibration", err, errlen);
}

/* When cam_w > 0 the maps must be for cam_w x cam_h camera images (else they are freed). */
static int check_source_size(const char *path, int cam_w, int cam_h, stereo_map maps[2],
                             char *err, size_t errlen)
{
    if (cam_w > 0 && (maps[0].src_width != cam_w || maps[0].src_height != cam_h)) {
        imgio_error(err, errlen, path, "maps are for %dx%d camera images, but the images are %dx%d",
                    maps[0].src_width, maps[0].src_height, cam_w, cam_h);
        mapfile_free(maps);
        return -1;
    }
    return 0;
}

int calib_load_maps(const char *path, int cam_w, int cam_h, stereo_map maps[2], char *err,
                    size_t errlen)
{
    memset(maps, 0, 2 * sizeof *maps);
    char left[PATH_MAX], right[PATH_MAX];
    int pair = split_pair(path ? path : "", left, right, sizeof left, err, errlen);
    if (pair < 0)
        return -1;
    if (pair) {
        stereo_calib c;
        if (calib_read_camera_info(left, right, &c, err, errlen) ||
            compute_maps(&c, 0, 0, maps, path, err, errlen))
            return -1;
        return check_source_size(path, cam_w, cam_h, maps, err, errlen);
    }
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;
    char head[8] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got == sizeof head && memcmp(head, "STMAPS\r\n", 8) == 0) {
        if (mapfile_read(path, maps, err, errlen))
            return -1;
    } else if (got >= 5 && memcmp(head, "%YAML", 5) == 0) {
        stereo_calib c;
        if (calib_read_yaml(path, &c, err, errlen))
            return -1;
        if (compute_maps(&c, 0, 0, maps, path, err, errlen))
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
