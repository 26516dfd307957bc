/* SPDX-License-Identifier: Apache-2.0 */
/* calib_yaml.c — see calib_yaml.h.
 *
 * libyaml's event API, not its document API (yaml_parser_load): the file is read as a stream of
 * events straight into the caller's fields, so
 *   - a syntax error that libyaml finds names the key (and matrix field) being read, which only
 *     the reader knows, and a value of the wrong kind is refused at its first event, before
 *     libyaml trips over what follows it ("M1: [1, 2]" followed by indented fields);
 *   - no tree of the file is built: memory is libyaml's few buffers plus one event, whatever
 *     the file holds, and an anchor or alias stops the read at its first event;
 *   - the table says what each key's value must be, so one loop serves every kind of file.
 */
#include "calib_yaml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "pnm.h"
#include "stereo.h"

#define OPENCV_MATRIX_TAG "tag:yaml.org,2002:opencv-matrix" /* "!!opencv-matrix" resolved */

typedef struct {
    const calib_yaml_file *f;
    char *text;
    size_t len;
    yaml_parser_t parser;
    int parser_ready;
    yaml_event_t ev; /* the current event */
    int have_ev;
    yaml_event_type_t prev_type; /* the event before it, for messages */
    size_t prev_end_line;
    int depth, doc_ended;
    const char *key;   /* the top-level key whose value is being read, for messages */
    const char *field; /* the matrix field being read ("data", ...) */
    struct seen_key {
        char *name;
        int line;
    } *seen;
    int nseen;
} reader;

static int vfail(const calib_yaml_file *f, int line, const char *key, const char *fmt,
                 va_list ap)
{
    char what[320];
    vsnprintf(what, sizeof what, fmt, ap);
    for (char *c = what; *c; c++) /* one line, whatever a quoted value held */
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    if (line > 0 && key)
        imgio_error(f->err, f->errlen, f->path, "line %d: %s: %s", line, key, what);
    else if (line > 0)
        imgio_error(f->err, f->errlen, f->path, "line %d: %s", line, what);
    else if (key)
        imgio_error(f->err, f->errlen, f->path, "%s: %s", key, what);
    else
        imgio_error(f->err, f->errlen, f->path, "%s", what);
    return -1;
}

int calib_yaml_fail(const calib_yaml_file *f, int line, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(f, line, key, fmt, ap);
    va_end(ap);
    return -1;
}

/* A failure while reading: the key being read is named. */
static int fail(reader *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(reader *r, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(r->f, line, r->key, fmt, ap);
    va_end(ap);
    return -1;
}

static int event_line(const yaml_event_t *e) { return (int)e->start_mark.line + 1; }

/* ---- the text ----------------------------------------------------------------------------- */

static int load_text(reader *r)
{
    const calib_yaml_file *f = r->f;
    FILE *in = imgio_open(f->path, f->err, f->errlen);
    if (!in)
        return -1;
    r->text = malloc(CALIB_YAML_MAX_BYTES + 1);
    if (!r->text) {
        fclose(in);
        return calib_yaml_fail(f, 0, NULL, "out of memory");
    }
    size_t n = fread(r->text, 1, CALIB_YAML_MAX_BYTES + 1, in);
    int read_error = ferror(in);
    fclose(in);
    if (read_error)
        return calib_yaml_fail(f, 0, NULL, "read error: %s", strerror(errno));
    if (n > CALIB_YAML_MAX_BYTES)
        return calib_yaml_fail(f, 0, NULL, "larger than %d bytes: not a calibration file",
                               CALIB_YAML_MAX_BYTES);
    if (memchr(r->text, '\0', n))
        return calib_yaml_fail(f, 0, NULL, "binary data (a NUL byte): not %s", f->kind);
    r->text[n] = '\0';
    r->len = n;
    return 0;
}

/* OpenCV's first line. "%YAML:1.0" is no YAML directive (libyaml would stop at the ':'), and
 * libyaml refuses version 1.0 ("incompatible YAML document"): either becomes "%YAML 1.1", padded
 * with blanks to the old length so that every line and column libyaml reports stays true. The
 * directive then needs its "---", as in YAML. */
static int opencv_directive(reader *r)
{
    char *s = r->text;
    size_t eol = strcspn(s, "\r\n"), v = strlen("%YAML?1.");
    int directive = strncmp(s, "%YAML", 5) == 0 && (s[5] == ':' || s[5] == ' ') &&
                    strncmp(s + 6, "1.", 2) == 0 && eol > v && s[v] >= '0' && s[v] <= '9';
    size_t end = v;
    while (directive && end < eol && s[end] >= '0' && s[end] <= '9')
        end++;
    if (directive && strspn(s + end, " \t") != eol - end)
        directive = 0;
    if (!directive) {
        if (r->f->flags & CALIB_YAML_OPENCV)
            return calib_yaml_fail(r->f, 1, NULL, "not %s (the first line must be %%YAML:1.0)",
                                   r->f->kind);
        if (strncmp(s, "%YAML:", 6) == 0)
            return calib_yaml_fail(r->f, 1, NULL, "'%.*s' is not a YAML 1.x directive",
                                   (int)(eol < 20 ? eol : 20), s);
        return 0; /* no directive, or one for libyaml */
    }
    if (s[5] == ':' || (end == v + 1 && s[v] == '0')) {
        memcpy(s, "%YAML 1.1", 9);
        memset(s + 9, ' ', eol - 9);
    }
    return 0;
}

/* ---- events ------------------------------------------------------------------------------- */

/* libyaml's syntax error, in the words of the reader this replaced where one fits (users and
 * tests know them), at the line where the fault begins (an unclosed '[' or quote, a key without
 * ':'); otherwise libyaml's own problem and context. */
static int syntax_error(reader *r)
{
    const yaml_parser_t *p = &r->parser;
    const char *problem = p->problem ? p->problem : "syntax error";
    const char *context = p->context ? p->context : "";
    int line = (int)p->problem_mark.line + 1, cline = (int)p->context_mark.line + 1;
    char c = p->problem_mark.index < r->len ? r->text[p->problem_mark.index] : '\0';
    const char *what = r->field ? r->field : "'['";
    if (p->error == YAML_MEMORY_ERROR)
        return fail(r, 0, "out of memory");
    if (c == '\t')
        return fail(r, line, "tab in the indentation or before a value (YAML indents with "
                    "spaces)");
    if (strcmp(problem, "did not find expected <document start>") == 0)
        return fail(r, line, r->doc_ended ? "text after the document end '...'"
                                          : "expected the document start '---' after the "
                                            "%%YAML line");
    if (strcmp(problem, "found incompatible YAML document") == 0)
        return fail(r, line, "a YAML version libyaml does not read (%%YAML 1.1 and 1.2 are read, "
                    "and OpenCV's %%YAML:1.0)");
    if (strstr(context, "quoted scalar") && strstr(problem, "end of stream"))
        return fail(r, cline, "unterminated string (no closing quote)");
    if (strstr(context, "flow sequence") && strstr(problem, "expected ','"))
        return fail(r, cline, "%s has no closing ']' (truncated file?)", what);
    if (strstr(context, "flow mapping") && strstr(problem, "expected ','"))
        return fail(r, cline, "'{' has no closing '}' (truncated file?)");
    if (strstr(context, "simple key")) {
        const char *s = r->text + p->context_mark.index;
        return fail(r, cline, "expected 'key: value', got '%.*s'", (int)strcspn(s, "\r\n") < 40
                    ? (int)strcspn(s, "\r\n") : 40, s);
    }
    if (c == ',' && strstr(problem, "node content"))
        return fail(r, line, "empty element in %s", r->field ? r->field : "a sequence");
    if (strcmp(problem, "did not find expected key") == 0 && r->prev_end_line + 1 == (size_t)line
        && r->prev_type == YAML_SEQUENCE_END_EVENT)
        return fail(r, line, "text after the closing ']'");
    if (*context)
        return fail(r, line, "%s (%s at line %d)", problem, context, cline);
    return fail(r, line, "%s", problem);
}

static const yaml_char_t *event_anchor(const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_SCALAR_EVENT:
        return e->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT:
        return e->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT:
        return e->data.mapping_start.anchor;
    default:
        return NULL;
    }
}

/* The next event into r->ev (the previous one freed), with the limits every file has. */
static int next(reader *r)
{
    if (r->have_ev) {
        r->prev_type = r->ev.type;
        r->prev_end_line = r->ev.end_mark.line;
        yaml_event_delete(&r->ev);
        r->have_ev = 0;
    }
    if (!yaml_parser_parse(&r->parser, &r->ev))
        return syntax_error(r);
    r->have_ev = 1;
    const yaml_event_t *e = &r->ev;
    if (e->type == YAML_ALIAS_EVENT || event_anchor(e))
        return fail(r, event_line(e), "anchors and aliases (&, *) are not read in a calibration "
                    "file");
    if (e->type == YAML_SEQUENCE_START_EVENT || e->type == YAML_MAPPING_START_EVENT) {
        if (++r->depth > CALIB_YAML_MAX_DEPTH)
            return fail(r, event_line(e), "nested more than %d deep: not a calibration file",
                        CALIB_YAML_MAX_DEPTH);
    } else if (e->type == YAML_SEQUENCE_END_EVENT || e->type == YAML_MAPPING_END_EVENT) {
        r->depth--;
    }
    return 0;
}

/* What the current event is, for "expected ..., got ..." messages. */
static void describe(const yaml_event_t *e, char *out, size_t n)
{
    const char *tag = e->type == YAML_MAPPING_START_EVENT ? (const char *)e->data.mapping_start.tag
                      : e->type == YAML_SEQUENCE_START_EVENT
                          ? (const char *)e->data.sequence_start.tag
                      : e->type == YAML_SCALAR_EVENT ? (const char *)e->data.scalar.tag : NULL;
    if (tag)
        snprintf(out, n, "the tag '%.40s'", tag);
    else if (e->type == YAML_SCALAR_EVENT)
        snprintf(out, n, "'%.40s'", (const char *)e->data.scalar.value);
    else
        snprintf(out, n, "a %s", e->type == YAML_SEQUENCE_START_EVENT ? "sequence" : "mapping");
}

/* Skips the value that starts at the current event (a scalar, or a whole collection). */
static int skip_node(reader *r)
{
    if (r->ev.type == YAML_SCALAR_EVENT)
        return 0;
    int outer = r->depth - 1;
    while (r->depth > outer)
        if (next(r))
            return -1;
    return 0;
}

/* ---- values ------------------------------------------------------------------------------- */

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

/* The current event as one untagged scalar; *plain: written without quotes. */
static int scalar_text(reader *r, const char **out, int *plain)
{
    const yaml_event_t *e = &r->ev;
    char got[64];
    if (e->type != YAML_SCALAR_EVENT || e->data.scalar.tag) {
        describe(e, got, sizeof got);
        return fail(r, event_line(e), "expected a single value on the key's line, got %s", got);
    }
    *out = (const char *)e->data.scalar.value;
    *plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    /* a plain value runs on over the lines indented below it: an indented key, most likely */
    if (*plain && e->start_mark.line != e->end_mark.line)
        return fail(r, event_line(e), "'%.40s' runs on to line %d: a value is one line (an "
                    "indented line below the key?)", *out, (int)e->end_mark.line + 1);
    if (*plain && !**out)
        return fail(r, event_line(e), "expected a single value on the key's line");
    return 0;
}

static int read_int(reader *r, long lo, long hi, const char *name, long *out)
{
    const char *s;
    int plain;
    if (scalar_text(r, &s, &plain))
        return -1;
    if (!plain)
        return fail(r, event_line(&r->ev), "%s%s'%.40s' is quoted: numbers are written without "
                    "quotes", name ? name : "", name ? " " : "", s);
    if (parse_int(s, lo, hi, out))
        return fail(r, event_line(&r->ev), "%s%s'%.40s' is not an integer in [%ld, %ld]",
                    name ? name : "", name ? " " : "", s, lo, hi);
    return 0;
}

static int read_scalar_field(reader *r, calib_yaml_field *fd)
{
    const char *s;
    int plain, line = event_line(&r->ev);
    long v;
    double x;
    switch (fd->type) {
    case CALIB_YAML_INT:
        if (read_int(r, (long)fd->lo, (long)fd->hi, NULL, &v))
            return -1;
        *(int *)fd->dst = (int)v;
        return 0;
    case CALIB_YAML_SIDE:
        /* refused here so that no map of an absurd size is ever computed */
        if (read_int(r, 1, INT_MAX, NULL, &v))
            return -1;
        if (v > STEREO_MAX_SIDE)
            return fail(r, line, "%ld is larger than the largest image the matcher takes "
                        "(%dx%d)", v, STEREO_MAX_SIDE, STEREO_MAX_SIDE);
        *(int *)fd->dst = (int)v;
        return 0;
    case CALIB_YAML_REAL:
        if (scalar_text(r, &s, &plain))
            return -1;
        if (!plain)
            return fail(r, line, "'%.40s' is quoted: numbers are written without quotes", s);
        if (parse_real(s, &x) || x < fd->lo) {
            if (isinf(fd->lo)) /* no lower bound */
                return fail(r, line, "'%.40s' is not a finite number", s);
            return fail(r, line, "'%.40s' is not a number >= %g", s, fd->lo);
        }
        *(double *)fd->dst = x;
        return 0;
    default: /* CALIB_YAML_STRING */
        if (scalar_text(r, &s, &plain))
            return -1;
        if (strlen(s) >= fd->cap)
            return fail(r, line, "'%.40s...' is longer than %zu characters", s, fd->cap - 1);
        memcpy(fd->dst, s, strlen(s) + 1);
        return 0;
    }
}

/* The numbers of a matrix's data: a sequence of plain finite numbers, stored while they fit. */
static int read_data(reader *r, double *out, size_t cap, int *count)
{
    const yaml_event_t *e = &r->ev;
    char got[64];
    if (e->type != YAML_SEQUENCE_START_EVENT) {
        if (e->type == YAML_SCALAR_EVENT && !e->data.scalar.length)
            return fail(r, event_line(e), "data is empty (truncated file?)");
        describe(e, got, sizeof got);
        return fail(r, event_line(e), "data must be a sequence [ ... ], got %s", got);
    }
    int seq_line = event_line(e);
    for (*count = 0;; ++*count) {
        if (next(r))
            return -1;
        if (e->type == YAML_SEQUENCE_END_EVENT)
            return 0;
        const char *s = e->type == YAML_SCALAR_EVENT ? (const char *)e->data.scalar.value : "";
        double x;
        if (e->type != YAML_SCALAR_EVENT || e->data.scalar.tag ||
            e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
            describe(e, got, sizeof got);
            return fail(r, event_line(e), "expected a number in data, got %s", got);
        }
        /* a plain scalar runs on over line ends in a sequence: the next line's first word is
         * part of it when a line ends without ',' (or the ']' never comes) */
        if (e->start_mark.line != e->end_mark.line)
            return fail(r, seq_line, "data has no closing ']' (truncated file?), or a ',' is "
                        "missing at the end of line %d", event_line(e));
        if (strpbrk(s, " \t"))
            return fail(r, event_line(e), "expected ',' between numbers ('%.40s')", s);
        if (parse_real(s, &x))
            return fail(r, event_line(e), "'%.40s' is not a finite number", s);
        if ((size_t)*count < cap)
            out[*count] = x;
    }
}

/* A matrix starting at the current event; fd NULL: an ignored one, only checked. */
static int read_matrix(reader *r, calib_yaml_field *fd, int key_line)
{
    const yaml_event_t *e = &r->ev;
    int untagged_ok = r->f->flags & CALIB_YAML_UNTAGGED_MATRICES;
    const char *tag = e->type == YAML_MAPPING_START_EVENT ? (const char *)e->data.mapping_start.tag
                                                          : NULL;
    int tagged = tag && strcmp(tag, OPENCV_MATRIX_TAG) == 0;
    char got[64];
    if (e->type != YAML_MAPPING_START_EVENT || (tag && !tagged) || (!tag && !untagged_ok)) {
        describe(e, got, sizeof got);
        return fail(r, key_line, untagged_ok ? "expected a matrix (rows, cols and data "
                    "indented below the key), got %s" : "expected a matrix (!!opencv-matrix), "
                    "got %s", got);
    }
    /* a matrix read must hold reals; one only checked may be of any OpenCV one-channel type */
    const char *dt_ok = fd ? "df" : "ucwsifd";
    enum { ROWS, COLS, DT, DATA, NFIELDS };
    static const char *const names[NFIELDS] = {"rows", "cols", "dt", "data"};
    int given[NFIELDS] = {0}, count = 0;
    long size[2] = {0, 0}; /* rows, cols */
    for (;;) {
        if (next(r))
            return -1;
        if (e->type == YAML_MAPPING_END_EVENT)
            break;
        if (e->type != YAML_SCALAR_EVENT) {
            describe(e, got, sizeof got);
            return fail(r, event_line(e), "expected 'rows:', 'cols:', 'dt:' or 'data:', got %s",
                        got);
        }
        int which = 0, line = event_line(e);
        while (which < NFIELDS && strcmp(names[which], (const char *)e->data.scalar.value))
            which++;
        if (which == NFIELDS)
            return fail(r, line, "unexpected matrix field '%.20s'",
                        (const char *)e->data.scalar.value);
        if (given[which]++)
            return fail(r, line, "'%s' given twice", names[which]);
        r->field = names[which];
        if (next(r))
            return -1;
        if (which == ROWS || which == COLS) {
            if (read_int(r, 0, CALIB_YAML_MATRIX_MAX_SIDE, names[which], &size[which]))
                return -1;
        } else if (which == DT) {
            const char *s;
            int plain;
            if (scalar_text(r, &s, &plain))
                return -1;
            if (strlen(s) != 1 || !strchr(dt_ok, s[0]))
                return fail(r, event_line(e), "dt '%.20s' is not a one-channel %s", s,
                            fd ? "real type (d or f)" : "type (u c w s i f d)");
        } else if (read_data(r, fd ? (double *)fd->dst : NULL, fd ? fd->cap : 0, &count)) {
            return -1;
        }
        r->field = NULL;
    }
    long rows = size[0], cols = size[1];
    const char *missing = !given[ROWS] ? "rows" : !given[COLS] ? "cols"
                        : !given[DT] && tagged ? "dt" : !given[DATA] ? "data" : NULL;
    if (missing)
        return fail(r, key_line, "matrix without '%s' (truncated file?)", missing);
    if (count != rows * cols)
        return fail(r, key_line, "data has %d numbers, but rows x cols = %ldx%ld", count, rows,
                    cols);
    if (!fd)
        return 0;
    fd->got_rows = (int)rows;
    fd->got_cols = (int)cols;
    fd->count = count;
    if (fd->rows > 0 && !(rows == fd->rows && cols == fd->cols) &&
        !(fd->either_way && rows == fd->cols && cols == fd->rows))
        return fail(r, key_line, "%ldx%ld matrix, expected %dx%d", rows, cols, fd->rows,
                    fd->cols);
    return 0;
}

/* A value nobody reads: its syntax is libyaml's check, and a tagged matrix is checked as one
 * (a damaged file fails even where the damage is in a key we do not use). */
static int skip_value(reader *r, int key_line)
{
    const yaml_event_t *e = &r->ev;
    if (e->type == YAML_MAPPING_START_EVENT && e->data.mapping_start.tag &&
        strcmp((const char *)e->data.mapping_start.tag, OPENCV_MATRIX_TAG) == 0)
        return read_matrix(r, NULL, key_line);
    return skip_node(r);
}

/* ---- the document ------------------------------------------------------------------------- */

calib_yaml_field *calib_yaml_find(calib_yaml_field *fields, int nfields, const char *key)
{
    for (int i = 0; i < nfields; i++)
        if (strcmp(fields[i].key, key) == 0)
            return &fields[i];
    return NULL;
}

/* The top-level mapping, key by key. */
static int read_keys(reader *r, calib_yaml_field *fields, int nfields)
{
    const yaml_event_t *e = &r->ev;
    r->seen = malloc(sizeof *r->seen * CALIB_YAML_MAX_KEYS);
    if (!r->seen)
        return fail(r, 0, "out of memory");
    for (;;) {
        if (next(r))
            return -1;
        if (e->type == YAML_MAPPING_END_EVENT)
            return 0;
        int line = event_line(e);
        if (e->type != YAML_SCALAR_EVENT || e->data.scalar.tag || !e->data.scalar.length)
            return fail(r, line, "expected 'key: value'");
        const char *name = (const char *)e->data.scalar.value;
        for (int k = 0; k < r->nseen; k++)
            if (strcmp(r->seen[k].name, name) == 0) {
                r->key = r->seen[k].name;
                return fail(r, line, "appears twice (first on line %d)", r->seen[k].line);
            }
        if (r->nseen == CALIB_YAML_MAX_KEYS)
            return fail(r, line, "more than %d keys: not a calibration file",
                        CALIB_YAML_MAX_KEYS);
        r->seen[r->nseen] = (struct seen_key){strdup(name), line};
        if (!r->seen[r->nseen].name)
            return fail(r, line, "out of memory");
        r->key = r->seen[r->nseen++].name;
        calib_yaml_field *fd = calib_yaml_find(fields, nfields, r->key);
        if (!fd && !(r->f->flags & CALIB_YAML_UNKNOWN_KEYS_OK))
            return fail(r, line, "unknown key in %s", r->f->kind);
        if (next(r))
            return -1;
        int rc;
        if (!fd || fd->type == CALIB_YAML_NOTED)
            rc = skip_value(r, line);
        else if (fd->type == CALIB_YAML_MATRIX)
            rc = read_matrix(r, fd, line);
        else
            rc = read_scalar_field(r, fd);
        if (rc)
            return -1;
        if (fd) {
            fd->present = 1;
            fd->line = line;
        }
        r->key = NULL;
    }
}

/* One document whose root is a mapping (or empty). */
static int read_stream(reader *r, calib_yaml_field *fields, int nfields)
{
    const yaml_event_t *e = &r->ev;
    if (next(r) || next(r)) /* STREAM-START, then DOCUMENT-START or STREAM-END */
        return -1;
    if (e->type == YAML_STREAM_END_EVENT)
        return 0;
    if (next(r))
        return -1;
    if (e->type == YAML_MAPPING_START_EVENT) {
        if (read_keys(r, fields, nfields))
            return -1;
    } else if (!(e->type == YAML_SCALAR_EVENT && !e->data.scalar.length && !e->data.scalar.tag)) {
        char got[64];
        describe(e, got, sizeof got);
        return fail(r, event_line(e), "expected 'key: value', got %s", got);
    }
    if (next(r)) /* DOCUMENT-END */
        return -1;
    r->doc_ended = 1;
    if (next(r))
        return -1;
    if (e->type != YAML_STREAM_END_EVENT)
        return fail(r, event_line(e), "a second document: a calibration file has one");
    return 0;
}

int calib_yaml_read(const calib_yaml_file *f, calib_yaml_field *fields, int nfields)
{
    reader r = {.f = f};
    for (int i = 0; i < nfields; i++)
        fields[i].present = fields[i].line = fields[i].got_rows = fields[i].got_cols =
            fields[i].count = 0;
    int rc = load_text(&r);
    if (rc == 0)
        rc = opencv_directive(&r);
    if (rc == 0) {
        if (!yaml_parser_initialize(&r.parser)) {
            rc = calib_yaml_fail(f, 0, NULL, "out of memory");
        } else {
            r.parser_ready = 1;
            yaml_parser_set_input_string(&r.parser, (const unsigned char *)r.text, r.len);
            rc = read_stream(&r, fields, nfields);
        }
    }
    if (r.have_ev)
        yaml_event_delete(&r.ev);
    if (r.parser_ready)
        yaml_parser_delete(&r.parser);
    for (int k = 0; k < r.nseen; k++)
        free(r.seen[k].name);
    free(r.seen);
    free(r.text);
    return rc;
}

int calib_yaml_require(const calib_yaml_file *f, const calib_yaml_field *fields, int nfields)
{
    for (int i = 0; i < nfields; i++)
        if (fields[i].required && !fields[i].present)
            return calib_yaml_fail(f, 0, NULL, "missing key '%s'", fields[i].key);
    return 0;
}
