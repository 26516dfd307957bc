/* SPDX-License-Identifier: Apache-2.0 */
/* test_calib_yaml.c — hal/calib_yaml.h, the libyaml reader under both calibration loaders: a
 * table of keys read exactly (as a rig file of its own would use it: unknown keys refused,
 * required ones, ranges, matrices in flow and block style, CRLF and comments); the first line
 * (%YAML:1.0, %YAML 1.0, 1.1, 1.2, none; 1.3 and a missing "---" refused, lines still true after
 * the rewrite); libyaml's syntax errors with their line and the key; tags (!!opencv-matrix also
 * written verbatim, other tags refused, dt d / f read, other types only in ignored matrices);
 * anchors, aliases, an alias bomb and a nesting bomb refused at once. The calibration files
 * themselves are tested in test_calib_c.c and test_calib_camera_info.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "calib_yaml.h"

#include "tmpdir.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* The fields of a small rig-like file: what a table of a new kind of file looks like. */
typedef struct {
    int cameras;
    char name[16];
    double baseline;
    double K[9];
    double D[8];
    calib_yaml_field t[6];
} rig;

static void rig_table(rig *g)
{
    memset(g, 0, sizeof *g);
    calib_yaml_field t[] = {
        {.key = "cameras", .type = CALIB_YAML_INT, .dst = &g->cameras, .lo = 2, .hi = 8,
         .required = 1},
        {.key = "name", .type = CALIB_YAML_STRING, .dst = g->name, .cap = sizeof g->name},
        {.key = "baseline", .type = CALIB_YAML_REAL, .dst = &g->baseline, .lo = 0,
         .required = 1},
        {.key = "K", .type = CALIB_YAML_MATRIX, .dst = g->K, .cap = 9, .rows = 3, .cols = 3,
         .required = 1},
        {.key = "D", .type = CALIB_YAML_MATRIX, .dst = g->D, .cap = 8},
        {.key = "notes", .type = CALIB_YAML_NOTED},
    };
    memcpy(g->t, t, sizeof t);
}

static const char rig_text[] =
    "# a rig\n"
    "cameras: 3\n"
    "name: \"bar # 1\"\n"
    "baseline: 0.125\n"
    "K: !!opencv-matrix\n"
    "   rows: 3\n"
    "   cols: 3\n"
    "   dt: d\n"
    "   data: [ 500., 0., 320.5, 0., 501.25,\n"
    "       240., 0., 0., 1. ]   # wrapped as OpenCV wraps\n"
    "D: !!opencv-matrix\n"
    "   rows: 1\n"
    "   cols: 2\n"
    "   dt: f\n"
    "   data:\n"
    "     - -0.25\n"
    "     - 1e-3\n";

/* Reads text (written to a file) through the rig table with flags; 0 or -1 with err. */
static int read_rig(const char *text, int flags, rig *g, char *err, size_t errlen)
{
    char path[PATH_MAX];
    write_text(tmp_path(path, "rig.yml"), text, strlen(text));
    rig_table(g);
    calib_yaml_file f = {path, "a test rig file", flags, err, errlen};
    int rc = calib_yaml_read(&f, g->t, 6);
    return rc ? rc : calib_yaml_require(&f, g->t, 6);
}

/* rc -1 and the message "<path>: " + want (exactly, from the line on). */
static void expect_message(int rc, const char *err, const char *want, const char *what)
{
    char path[PATH_MAX], full[PATH_MAX + 512];
    snprintf(full, sizeof full, "%s: %s", tmp_path(path, "rig.yml"), want);
    if (rc != -1 || strcmp(err, full) != 0)
        fail_msg("%s: rc %d, message\n  \"%s\", expected\n  \"%s\"", what, rc, err, full);
}

static char *concat(const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 1);
    assert_non_null(s);
    strcpy(s, a);
    strcat(s, b);
    return s;
}

/* ---- a table read exactly ------------------------------------------------------------------ */

static void test_table(void **state)
{
    rig g;
    char err[512] = "";
    assert_int_equal(read_rig(rig_text, 0, &g, err, sizeof err), 0);
    assert_int_equal(g.cameras, 3);
    assert_string_equal(g.name, "bar # 1");
    assert_true(g.baseline == 0.125);
    assert_true(g.K[0] == 500 && g.K[2] == 320.5 && g.K[4] == 501.25 && g.K[5] == 240 &&
                g.K[8] == 1);
    assert_true(g.D[0] == -0.25 && g.D[1] == 1e-3);
    assert_true(g.t[4].present && g.t[4].got_rows == 1 && g.t[4].got_cols == 2 &&
                g.t[4].count == 2);
    assert_int_equal(g.t[3].line, 5);
    assert_int_equal(g.t[5].present, 0);

    /* CRLF line endings: the same values and lines */
    char crlf[2 * sizeof rig_text], *q = crlf;
    for (const char *p = rig_text; *p; p++) {
        if (*p == '\n')
            *q++ = '\r';
        *q++ = *p;
    }
    *q = '\0';
    assert_int_equal(read_rig(crlf, 0, &g, err, sizeof err), 0);
    assert_true(g.K[4] == 501.25 && g.D[1] == 1e-3 && g.t[3].line == 5);

    /* the table's own refusals, each with its line and key */
    static const struct {
        const char *add, *want;
    } bad[] = {
        {"extra: 1\n", "line 18: extra: unknown key in a test rig file"},
        {"cameras: 3\n", "line 18: cameras: appears twice (first on line 2)"},
        {"notes: [ 1, 2 ]\nnotes: 2\n", "line 19: notes: appears twice (first on line 18)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *s = concat(rig_text, bad[i].add);
        expect_message(read_rig(s, 0, &g, err, sizeof err), err, bad[i].want, bad[i].add);
        free(s);
    }
    /* unknown keys allowed by the flag: skipped, whatever their structure (no anchors) */
    char *s = concat(rig_text, "extra: { a: [ 1, { b: 2 } ], c: \"d\" }\nnotes: |\n  text\n");
    assert_int_equal(read_rig(s, CALIB_YAML_UNKNOWN_KEYS_OK, &g, err, sizeof err), 0);
    assert_true(g.t[5].present && g.t[5].line == 19 && g.K[8] == 1);
    free(s);

    static const struct {
        const char *from, *to, *want;
    } edits[] = {
        {"cameras: 3\n", "", "missing key 'cameras'"},
        {"cameras: 3\n", "cameras: 9\n", "line 2: cameras: '9' is not an integer in [2, 8]"},
        {"cameras: 3\n", "cameras: \"3\"\n",
         "line 2: cameras: '3' is quoted: numbers are written without quotes"},
        {"baseline: 0.125\n", "baseline: -0.125\n",
         "line 4: baseline: '-0.125' is not a number >= 0"},
        {"baseline: 0.125\n", "baseline: .inf\n", "line 4: baseline: '.inf' is not a number >= 0"},
        {"\"bar # 1\"", "a name much longer than fifteen", "line 3: name: 'a name much longer "
         "than fifteen...' is longer than 15 characters"},
        {"name: \"bar # 1\"\n", "name:\n", "line 3: name: expected a single value on the key's "
         "line"},
        {"name: \"bar # 1\"\n", "name: [ a ]\n", "line 3: name: expected a single value on the "
         "key's line, got a sequence"},
        {"   cols: 2\n", "   cols: 3\n", "line 11: D: data has 2 numbers, but rows x cols = 1x3"},
        {"   rows: 3\n   cols: 3\n", "   rows: 9\n   cols: 1\n",
         "line 5: K: 9x1 matrix, expected 3x3"},
        {"     - 1e-3\n", "     - [ 1e-3 ]\n", "line 17: D: expected a number in data, got a "
         "sequence"},
        {"     - 1e-3\n", "     - nan\n", "line 17: D: 'nan' is not a finite number"},
        {"     - 1e-3\n", "     - 0x10\n", "line 17: D: '0x10' is not a finite number"},
        {"   dt: d\n", "   dt: d\n   dt: d\n", "line 9: K: 'dt' given twice"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *at = strstr(rig_text, edits[i].from);
        assert_non_null(at);
        char *t = malloc(sizeof rig_text + strlen(edits[i].to));
        assert_non_null(t);
        snprintf(t, sizeof rig_text + strlen(edits[i].to), "%.*s%s%s", (int)(at - rig_text),
                 rig_text, edits[i].to, at + strlen(edits[i].from));
        expect_message(read_rig(t, 0, &g, err, sizeof err), err, edits[i].want, edits[i].to);
        free(t);
    }
}

/* ---- the first line ------------------------------------------------------------------------ */

static void test_directive(void **state)
{
    static const struct {
        const char *head;
        int flags;
        const char *want; /* NULL: read */
    } cases[] = {
        {"%YAML:1.0\n---\n", CALIB_YAML_OPENCV, NULL},
        {"%YAML 1.0\n---\n", CALIB_YAML_OPENCV, NULL},
        {"%YAML 1.1\n---\n", CALIB_YAML_OPENCV, NULL},
        {"%YAML 1.2\n---\n", CALIB_YAML_OPENCV, NULL},
        {"%YAML:1.0   \r\n---\r\n", CALIB_YAML_OPENCV, NULL},
        {"%YAML:1.0\n# a comment\n\n--- # the document\n", CALIB_YAML_OPENCV, NULL},
        {"---\n", CALIB_YAML_OPENCV,
         "line 1: not a test rig file (the first line must be %YAML:1.0)"},
        {"", CALIB_YAML_OPENCV, "line 1: not a test rig file (the first line must be %YAML:1.0)"},
        {"%YAML:2.0\n---\n", CALIB_YAML_OPENCV,
         "line 1: not a test rig file (the first line must be %YAML:1.0)"},
        {"%YAML:1.0\n", CALIB_YAML_OPENCV, /* line 2 is rig_text's comment */
         "line 3: expected the document start '---' after the %YAML line"},
        {"%YAML 1.3\n---\n", CALIB_YAML_OPENCV, "line 1: a YAML version libyaml does not read "
         "(%YAML 1.1 and 1.2 are read, and OpenCV's %YAML:1.0)"},
        /* without CALIB_YAML_OPENCV (ROS): no directive needed; one there needs its "---" */
        {"", 0, NULL},
        {"---\n", 0, NULL},
        {"%YAML:1.0\n---\n", 0, NULL},
        {"%YAML 1.2\n---\n", 0, NULL},
        {"%YAML:1.0\n", 0, "line 3: expected the document start '---' after the %YAML line"},
        {"%YAML:2.0\n", 0, "line 1: '%YAML:2.0' is not a YAML 1.x directive"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = concat(cases[i].head, rig_text);
        rig g;
        char err[512] = "", what[64];
        int rc = read_rig(s, cases[i].flags, &g, err, sizeof err);
        snprintf(what, sizeof what, "case %zu", i);
        if (!cases[i].want) {
            if (rc != 0 || g.K[4] != 501.25 || g.D[1] != 1e-3)
                fail_msg("%s: rc %d, %s", what, rc, err);
        } else {
            expect_message(rc, err, cases[i].want, what);
        }
        free(s);
    }
    /* the rewritten first line keeps every line number true, however long it was */
    static const char *heads[] = {"%YAML:1.0\n---\n", "%YAML:1.000000\n---\n",
                                  "%YAML 1.0\n---\n", "%YAML 1.2\n---\n"};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        char *s = concat(heads[i], "cameras: 3\nbaseline: 1\nK: !!opencv-matrix\n"
                                   "   rows: 3\n   cols: 3\n   dt: d\n   data: [ 1, 2, 3,\n"
                                   "      4, 5 6, 7, 8, 9 ]\n");
        rig g;
        char err[512] = "";
        expect_message(read_rig(s, CALIB_YAML_OPENCV, &g, err, sizeof err), err,
                       "line 10: K: expected ',' between numbers ('5 6')", heads[i]);
        free(s);
    }
}

/* ---- libyaml's syntax errors --------------------------------------------------------------- */

static void test_syntax_errors(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"cameras: 3\nname: a: b\n", "line 2: mapping values are not allowed in this context"},
        {"cameras: 3\n  baseline: 1\n", "line 1: cameras: '3 baseline' runs on to line 2: a value "
         "is one line (an indented line below the key?)"},
        {"cameras: 3\nnotes: [ 1, 2\nname: x\n",
         "line 2: notes: '[' has no closing ']' (truncated file?)"},
        {"cameras: 3\nnotes: { a: 1\n", "line 2: notes: '{' has no closing '}' (truncated file?)"},
        {"cameras: 3\nname: 'bar\nbaseline: 1\n",
         "line 2: name: unterminated string (no closing quote)"},
        {"cameras: 3\nbaseline 1\nK: 2\n", "line 2: expected 'key: value', got 'baseline 1'"},
        {"cameras: 3\nK: !!opencv-matrix\n   rows: 1\n\tcols: 1\n",
         "line 4: K: tab in the indentation or before a value (YAML indents with spaces)"},
        {"cameras: 3\nK: !!opencv-matrix\n   data: [ 1,, 2 ]\n",
         "line 3: K: empty element in data"},
        {"cameras: 3\nK: !!opencv-matrix\n   data: [ 1, 2 ] 3\n",
         "line 3: K: text after the closing ']'"},
        {"cameras: 3\n...\nbaseline: 1\n", "line 3: text after the document end '...'"},
        {"cameras: 3\n---\nbaseline: 1\n", "line 2: a second document: a calibration file has one"},
        {"just text\n", "line 1: expected 'key: value', got 'just text'"},
        {"- cameras: 3\n", "line 1: expected 'key: value', got a sequence"},
        {"cameras: 3\n? [ a ]\n: 1\n", "line 2: expected 'key: value'"},
        {"cameras: 3\nname: \"a\\qb\"\n",
         "line 2: name: found unknown escape character (while parsing a quoted scalar at line 2)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rig g;
        char err[512] = "";
        expect_message(read_rig(cases[i].text, CALIB_YAML_UNKNOWN_KEYS_OK, &g, err, sizeof err),
                       err, cases[i].want, cases[i].text);
    }
    printf("# %zu syntax errors, each with its line\n", sizeof cases / sizeof cases[0]);
}

/* ---- tags ---------------------------------------------------------------------------------- */

static void test_tags(void **state)
{
    static const char *base = "cameras: 3\nbaseline: 1\nK: %s\n   rows: 3\n   cols: 3\n"
                              "%s   data: [ 1, 0, 0, 0, 1, 0, 0, 0, 1 ]\n%s";
    static const struct {
        const char *tag, *dt, *more;
        int flags;
        const char *want; /* NULL: read */
    } cases[] = {
        {"!!opencv-matrix", "   dt: d\n", "", 0, NULL},
        {"!!opencv-matrix", "   dt: f\n", "", 0, NULL},
        {"!<tag:yaml.org,2002:opencv-matrix>", "   dt: d\n", "", 0, NULL}, /* verbatim */
        {"!!opencv-matrix", "   dt: i\n", "", 0,
         "line 6: K: dt 'i' is not a one-channel real type (d or f)"},
        {"!!opencv-matrix", "   dt: 3d\n", "", 0,
         "line 6: K: dt '3d' is not a one-channel real type (d or f)"},
        {"!!opencv-matrix", "", "", 0, "line 3: K: matrix without 'dt' (truncated file?)"},
        {"!!opencv-nd-matrix", "   dt: d\n", "", 0, "line 3: K: expected a matrix "
         "(!!opencv-matrix), got the tag 'tag:yaml.org,2002:opencv-nd-matrix'"},
        {"", "   dt: d\n", "", 0, "line 3: K: expected a matrix (!!opencv-matrix), got a mapping"},
        {"!local", "   dt: d\n", "", CALIB_YAML_UNTAGGED_MATRICES, "line 3: K: expected a matrix "
         "(rows, cols and data indented below the key), got the tag '!local'"},
        /* untagged matrices where allowed, and then dt optional */
        {"", "", "", CALIB_YAML_UNTAGGED_MATRICES, NULL},
        {"", "   dt: f\n", "", CALIB_YAML_UNTAGGED_MATRICES, NULL},
        /* ignored (NOTED, or unknown) matrices: any one-channel type, but still checked */
        {"!!opencv-matrix", "   dt: d\n",
         "notes: !!opencv-matrix\n   rows: 1\n   cols: 2\n   dt: i\n   data: [ 1, 2 ]\n", 0, NULL},
        {"!!opencv-matrix", "   dt: d\n",
         "notes: !!opencv-matrix\n   rows: 1\n   cols: 2\n   dt: i\n   data: [ 1 ]\n", 0,
         "line 8: notes: data has 1 numbers, but rows x cols = 1x2"},
        {"!!opencv-matrix", "   dt: d\n",
         "notes: !!opencv-matrix\n   rows: 1\n   cols: 1\n   dt: 2i\n   data: [ 1 ]\n", 0,
         "line 11: notes: dt '2i' is not a one-channel type (u c w s i f d)"},
        /* tags on scalars */
        {"!!opencv-matrix", "   dt: d\n", "name: !!str bar\n", 0,
         "line 8: name: expected a single value on the key's line, got the tag "
         "'tag:yaml.org,2002:str'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024], what[32];
        snprintf(text, sizeof text, base, cases[i].tag, cases[i].dt, cases[i].more);
        snprintf(what, sizeof what, "case %zu", i);
        rig g;
        char err[512] = "";
        int rc = read_rig(text, cases[i].flags, &g, err, sizeof err);
        if (!cases[i].want) {
            if (rc != 0 || g.K[0] != 1 || g.K[4] != 1 || g.K[1] != 0)
                fail_msg("%s: rc %d, %s", what, rc, err);
        } else {
            expect_message(rc, err, cases[i].want, what);
        }
    }
}

/* ---- anchors, aliases and bombs ------------------------------------------------------------ */

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void test_bombs(void **state)
{
    rig g;
    char err[512] = "";
    expect_message(read_rig("cameras: &n 3\nbaseline: 1\n", 0, &g, err, sizeof err), err,
                   "line 1: cameras: anchors and aliases (&, *) are not read in a calibration "
                   "file", "anchor");
    expect_message(read_rig("cameras: 3\nbaseline: *b\n", 0, &g, err, sizeof err), err,
                   "line 2: baseline: anchors and aliases (&, *) are not read in a calibration "
                   "file", "alias");

    /* billion laughs: 10^9 strings if the aliases were expanded (a 1 kB file) */
    char *bomb = malloc(4096), *p = bomb;
    assert_non_null(bomb);
    p += sprintf(p, "cameras: 3\nl0: &l0 [ \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", "
                    "\"lol\", \"lol\", \"lol\", \"lol\" ]\n");
    for (int level = 1; level < 10; level++) {
        p += sprintf(p, "l%d: &l%d [", level, level);
        for (int k = 0; k < 10; k++)
            p += sprintf(p, "%s*l%d", k ? ", " : " ", level - 1);
        p += sprintf(p, " ]\n");
    }
    double t0 = seconds();
    int rc = read_rig(bomb, CALIB_YAML_UNKNOWN_KEYS_OK, &g, err, sizeof err);
    double t = seconds() - t0;
    /* refused at the first anchor (line 2), before any alias could expand; 5 s: a hang */
    expect_message(rc, err, "line 2: l0: anchors and aliases (&, *) are not read in a calibration "
                   "file", "billion laughs");
    if (t > 5.0)
        fail_msg("the alias bomb took %.3f s", t);
    printf("# alias bomb (%zu bytes) refused in %.2f ms\n", strlen(bomb), t * 1e3);
    free(bomb);

    /* nesting: almost 4 MB of '[' is refused at the 17th, not after libyaml's stacks grew */
    size_t n = CALIB_YAML_MAX_BYTES - 64;
    char *deep = malloc(n + 1);
    assert_non_null(deep);
    strcpy(deep, "cameras: 3\nnotes: ");
    memset(deep + strlen(deep), '[', n - strlen(deep));
    deep[n] = '\0';
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long peak_kb = ru.ru_maxrss;
    t0 = seconds();
    rc = read_rig(deep, CALIB_YAML_UNKNOWN_KEYS_OK, &g, err, sizeof err);
    t = seconds() - t0;
    getrusage(RUSAGE_SELF, &ru);
    expect_message(rc, err, "line 2: notes: nested more than 16 deep: not a calibration file",
                   "deep");
    /* refused at the 17th level: libyaml's stacks for 4 million levels would take hundreds of
     * MB (peak RSS); 5 s: a hang */
    if (ru.ru_maxrss - peak_kb > 64 * 1024)
        fail_msg("the nesting bomb raised the peak RSS by %ld kB", ru.ru_maxrss - peak_kb);
    if (t > 5.0)
        fail_msg("the nesting bomb took %.3f s", t);
    printf("# nesting bomb (%zu bytes) refused in %.2f ms\n", n, t * 1e3);
    free(deep);

    /* larger than the bound: refused before libyaml sees it */
    n = CALIB_YAML_MAX_BYTES + 1;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, '#', n);
    big[n] = '\0';
    expect_message(read_rig(big, 0, &g, err, sizeof err), err,
                   "larger than 4194304 bytes: not a calibration file", "big");
    free(big);
}

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("test_calib_yaml");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),         cmocka_unit_test(test_directive),
        cmocka_unit_test(test_syntax_errors), cmocka_unit_test(test_tags),
        cmocka_unit_test(test_bombs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
