/* SPDX-License-Identifier: Apache-2.0 */
/* calib_yaml.h — a calibration file's YAML, read through libyaml into a table of known keys:
 * one top-level mapping, each key either in the table (an integer, an image side, a real, a
 * string or a matrix, read into the caller's field and checked there) or, where the table allows
 * it, ignored after a check of its syntax. The OpenCV calibration YAML and the ROS camera_info
 * files of calib.c read through it; so should any later rig file (e.g. one of N cameras): a new
 * file kind is a new table, not a new parser.
 *
 * What a file may hold:
 *   - a first line "%YAML:1.N" (OpenCV's form, which is not a valid YAML directive) or "%YAML 1.0"
 *     is read as "%YAML 1.1" (what libyaml knows; the same length, so lines and columns stay),
 *     and then "---" must follow, as after any directive; "%YAML 1.1" / "%YAML 1.2" go to libyaml
 *     as they are. CALIB_YAML_OPENCV files must start with the directive.
 *   - one document, its root a mapping (empty document: no keys); every key a plain scalar, given
 *     once (also the fields of a matrix).
 *   - matrices as OpenCV writes them: a mapping tagged !!opencv-matrix with rows, cols (0..1000),
 *     dt and data (a sequence of rows*cols plain numbers); untagged (and dt optional) only with
 *     CALIB_YAML_UNTAGGED_MATRICES (ROS). dt of a matrix read is d or f; of an ignored one any
 *     one-channel type (u c w s i f d).
 *   - numbers as plain scalars; reals finite (".nan", ".inf", "inf", hex refused).
 *   - no anchors or aliases (a calibration never needs them, and refusing them at the first one
 *     makes an alias bomb a one-line error), nesting at most CALIB_YAML_MAX_DEPTH deep, at most
 *     CALIB_YAML_MAX_BYTES bytes.
 * Errors are one line, "<path>: line N: <key>: what is wrong" (libyaml's syntax errors too, in
 * the words of the reader this replaced where one fits, with the line where the fault begins).
 */
#ifndef STEREO_CALIB_YAML_H
#define STEREO_CALIB_YAML_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CALIB_YAML_MAX_BYTES (1 << 22) /* a calibration is a few kB; refuse anything absurd */
#define CALIB_YAML_MAX_KEYS 1000       /* top-level keys (a calibration has about 20) */
#define CALIB_YAML_MAX_DEPTH 16        /* nesting (a calibration's matrices: 3) */
#define CALIB_YAML_MATRIX_MAX_SIDE 1000

typedef enum {
    CALIB_YAML_NOTED,  /* not read: only whether it is there, and where (its value is checked as
                          an ignored key's) */
    CALIB_YAML_INT,    /* int, in [lo, hi] */
    CALIB_YAML_SIDE,   /* int, an image side: 1 .. STEREO_MAX_SIDE */
    CALIB_YAML_REAL,   /* double, finite and >= lo (lo = -HUGE_VAL: any finite number) */
    CALIB_YAML_STRING, /* char[cap], any scalar style, not empty */
    CALIB_YAML_MATRIX, /* double[cap] row by row; rows x cols when those are > 0 */
} calib_yaml_type;

typedef struct {
    /* the table */
    const char *key;
    calib_yaml_type type;
    void *dst;        /* int *, double *, char * */
    size_t cap;       /* STRING: bytes; MATRIX: doubles stored (more are counted, not stored) */
    double lo, hi;    /* INT: range; REAL: lo */
    int rows, cols;   /* MATRIX: the shape wanted, 0 = any */
    int either_way;   /* MATRIX: cols x rows accepted too (a vector as a row or a column) */
    int required;     /* calib_yaml_require refuses the file without it */
    /* what the file gave */
    int present;
    int line;         /* 1-based line of the key */
    int got_rows, got_cols, count; /* MATRIX: the file's shape and number of values */
} calib_yaml_field;

enum {
    CALIB_YAML_OPENCV = 1,             /* the first line must be the %YAML directive */
    CALIB_YAML_UNTAGGED_MATRICES = 2,  /* matrices may be plain mappings, dt optional (ROS) */
    CALIB_YAML_UNKNOWN_KEYS_OK = 4,    /* other keys are checked for syntax and ignored */
};

typedef struct {
    const char *path;
    const char *kind;  /* what the file should be, for "not ..." messages */
    int flags;         /* CALIB_YAML_* */
    char *err;
    size_t errlen;
} calib_yaml_file;

/* Reads f->path into the table: every field's present/line (and value when present). Keys
 * missing are not an error here (see calib_yaml_require). 0, or -1 with the message in f->err. */
int calib_yaml_read(const calib_yaml_file *f, calib_yaml_field *fields, int nfields);

/* The field named key, or NULL. */
calib_yaml_field *calib_yaml_find(calib_yaml_field *fields, int nfields, const char *key);

/* -1 with "<path>: missing key 'K'" for the first required field of the table (in its order)
 * that the file does not have; else 0. Separate from calib_yaml_read so that a caller can first
 * say what else the file is (another kind of calibration) when that explains the missing keys. */
int calib_yaml_require(const calib_yaml_file *f, const calib_yaml_field *fields, int nfields);

/* "<path>: line N: <key>: <what>" into f->err (line 0: no line; key NULL: none). Returns -1. */
int calib_yaml_fail(const calib_yaml_file *f, int line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#ifdef __cplusplus
}
#endif
#endif
