/* SPDX-License-Identifier: Apache-2.0 */
/* config.c — the live app's settings: defaults, the INI file (through inih), command-line
 * overrides, and the cross-field checks (config.h has the keys; config/README.md the reference).
 *
 * Every key is one row of `keys` below: where it lives in live_config, what kind of value it
 * takes and its range. The file and the command line go through the same setter (set_key), so
 * both accept exactly the same values and say the same thing about a bad one. The [stereo] keys
 * of the stage options are the rows of gpu/stereo_options.c's table, parsed there
 * (set_stage_key), so that stereo-match, stereo-live's flags and the file say the same.
 *
 * This file holds the key table and everything done with one key: its value parsed and checked,
 * the defaults, the setter, a section written back. The other two parts: config_check.c (the
 * checks across keys, which source backend reads the configuration) and config_file.c (the INI
 * file through inih); config_keys.h is what the three share.
 */
#include "config.h"
#include "config_keys.h"
#include "sequence.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_uri.h"
#include "synth.h"

#define DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define MAX_SIDE 8192     /* camera and window sides (the stage's own limit) */
#define MAX_FPS 1000
#define MAX_SKEW_MS 1000
#define CONTROL_NAME_MAX ((int)sizeof(((capture_control *)0)->name) - 1)

/* ---- names ------------------------------------------------------------------------------- */

static const char *const source_names[] = {"synth", "v4l2", "sbs", "files"};
static const char *const view_names[] = {"disparity", "left", "pair", "depth"};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *live_source_to_str(live_source s)
{
    return (unsigned)s < NELEM(source_names) ? source_names[s] : "?";
}

const char *live_view_to_str(live_view v)
{
    return (unsigned)v < NELEM(view_names) ? view_names[v] : "?";
}

static int word_index(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return (int)i;
    return -1;
}

/* Enum parsers with one signature for the key table: the value, or -1 if the word is unknown. */
static int parse_source(const char *s) { return word_index(source_names, NELEM(source_names), s); }
static int parse_view(const char *s) { return word_index(view_names, NELEM(view_names), s); }
static int parse_format(const char *s) { return capture_format_from_str(s); }
static const char *const color_range_names[] = {"fixed", "auto"};
static int parse_color_range(const char *s)
{
    return word_index(color_range_names, NELEM(color_range_names), s);
}
static int parse_combine(const char *s)
{
    stereo_combine c;
    return stereo_combine_from_str(s, &c) == 0 ? (int)c : -1;
}
static int parse_colormap(const char *s)
{
    colormap_id id;
    return colormap_from_str(s, &id) == 0 ? (int)id : -1;
}

/* Enum fields are written as int (memcpy): they must have its size. */
_Static_assert(sizeof(live_source) == sizeof(int), "enum size");
_Static_assert(sizeof(live_view) == sizeof(int), "enum size");
_Static_assert(sizeof(capture_format) == sizeof(int), "enum size");
_Static_assert(sizeof(colormap_id) == sizeof(int), "enum size");
_Static_assert(sizeof(stereo_combine) == sizeof(int), "enum size");

/* ---- the keys ---------------------------------------------------------------------------- */

typedef enum {
    K_INT,     /* int in lo..hi */
    K_STAGE,   /* where the keys of the stage option table go (gpu/stereo_options.c: it
                  parses, checks and writes them; live_config.stage) */
    K_LONG,    /* long in 0..LONG_MAX */
    K_BOOL,    /* true/false yes/no on/off 1/0 */
    K_ENUM,    /* a word of `words`, through parse */
    K_PATH,    /* a path; lo = 1: must not be empty */
    K_PATTERN, /* a path with one integer printf conversion (the frame number) */
    K_CALIB,   /* a path, or LEFT,RIGHT (two camera_info files, hal/calib.h); may be empty */
    K_REAL,    /* double: 0 (not given) or a finite number in (0, hi] */
    K_CENTER,  /* "" or "CX,CY": two finite numbers within +-1e6 (live_config_center) */
    K_URI,     /* a source URI (hal/source_uri.h), checked by source_uri_parse; may be empty */
    K_OUTPUT,  /* an output URI (hal/output_uri.h), checked by output_uri_parse; may be empty */
    K_BASELINES, /* [stereo] baselines: "1,B2,...", into stereo.views and stereo.baseline */
    K_LOSE,    /* [synth] lose_view: "" or VIEW,FIRST,LAST (3 ints) */
} key_kind;

typedef struct {
    const char *section, *key;
    key_kind kind;
    long lo, hi;
    size_t offset;
    int (*parse)(const char *); /* K_ENUM */
    const char *words;          /* K_ENUM: the accepted words, for messages */
} key_def;

#define F(field) offsetof(live_config, field)
static const key_def keys[] = {
    {"source", "type", K_ENUM, 0, 0, F(source), parse_source, "synth, v4l2, sbs, files"},
    {"source", "left", K_URI, 0, 0, F(source_left), 0, 0},
    {"source", "right", K_URI, 0, 0, F(source_right), 0, 0},
    {"source", "input", K_URI, 0, 0, F(source_input), 0, 0},
    {"source", "view2", K_URI, 0, 0, F(source_view[2]), 0, 0},
    {"source", "view3", K_URI, 0, 0, F(source_view[3]), 0, 0},
    {"source", "view4", K_URI, 0, 0, F(source_view[4]), 0, 0},
    {"source", "view5", K_URI, 0, 0, F(source_view[5]), 0, 0},
    {"source", "view6", K_URI, 0, 0, F(source_view[6]), 0, 0},
    {"source", "view7", K_URI, 0, 0, F(source_view[7]), 0, 0},

    {"camera", "left", K_PATH, 1, 0, F(left_device), 0, 0},
    {"camera", "right", K_PATH, 1, 0, F(right_device), 0, 0},
    {"camera", "device", K_PATH, 1, 0, F(sbs_device), 0, 0},
    {"camera", "width", K_INT, 1, MAX_SIDE, F(width), 0, 0},
    {"camera", "height", K_INT, 1, MAX_SIDE, F(height), 0, 0},
    {"camera", "fps", K_INT, 0, MAX_FPS, F(fps), 0, 0},
    {"camera", "format", K_ENUM, 0, 0, F(format), parse_format, "auto, yuyv, grey, rgb24"},
    {"camera", "buffers", K_INT, CAPTURE_MIN_BUFFERS, CAPTURE_MAX_BUFFERS, F(buffers), 0, 0},
    {"camera", "max_skew_ms", K_INT, 0, MAX_SKEW_MS, F(max_skew_ms), 0, 0},

    {"files", "left", K_PATTERN, 1, 0, F(left_pattern), 0, 0},
    {"files", "right", K_PATTERN, 1, 0, F(right_pattern), 0, 0},
    {"files", "fps", K_INT, 0, MAX_FPS, F(files_fps), 0, 0},
    {"files", "loop", K_BOOL, 0, 0, F(files_loop), 0, 0},

    {"synth", "width", K_INT, SYNTH_MIN_SIZE, SYNTH_MAX_SIZE, F(synth_width), 0, 0},
    {"synth", "height", K_INT, SYNTH_MIN_SIZE, SYNTH_MAX_SIZE, F(synth_height), 0, 0},
    {"synth", "fps", K_INT, 0, MAX_FPS, F(synth_fps), 0, 0},
    {"synth", "lose_view", K_LOSE, 0, 0, F(synth_lose), 0, 0},

    {"stereo", "baselines", K_BASELINES, 0, 0, F(stage.p.baseline), 0, 0},
    {"stereo", "combine", K_ENUM, 0, 0, F(stage.p.combine), parse_combine, "sides, sum"},
    /* here, in its order: the keys of the stage option table (gpu/stereo_options.c) */
    {"stereo", "", K_STAGE, 0, 0, 0, 0, 0},
    {"stereo", "mi_warm", K_BOOL, 0, 0, F(stage.p.mi_warm), 0, 0},
    {"stereo", "mi_restart", K_INT, 0, 100, F(stage.p.mi_restart), 0, 0},

    {"calibration", "maps", K_CALIB, 0, 0, F(maps), 0, 0},
    {"calibration", "focal", K_REAL, 0, 10000000, F(focal_px), 0, 0},
    {"calibration", "baseline", K_REAL, 0, 10000, F(baseline), 0, 0},
    {"calibration", "center", K_CENTER, 0, 0, F(center), 0, 0},

    {"display", "headless", K_BOOL, 0, 0, F(headless), 0, 0},
    {"display", "fullscreen", K_BOOL, 0, 0, F(fullscreen), 0, 0},
    {"display", "width", K_INT, 0, MAX_SIDE, F(window_width), 0, 0},
    {"display", "height", K_INT, 0, MAX_SIDE, F(window_height), 0, 0},
    {"display", "colormap", K_ENUM, 0, 0, F(colormap), parse_colormap, "turbo, jet, grey"},
    {"display", "view", K_ENUM, 0, 0, F(view), parse_view, "disparity, left, pair, depth"},
    {"display", "color_range", K_ENUM, 0, 0, F(color_range_auto), parse_color_range,
     "fixed, auto"},
    {"display", "legend", K_BOOL, 0, 0, F(legend), 0, 0},
    {"display", "font", K_PATH, 1, 0, F(font), 0, 0},

    {"record", "dir", K_PATH, 0, 0, F(record_dir), 0, 0},
    {"record", "depth", K_BOOL, 0, 0, F(record_depth), 0, 0},

    {"run", "frames", K_LONG, 0, LONG_MAX, F(frames), 0, 0},
    {"run", "screenshot", K_PATH, 0, 0, F(screenshot), 0, 0},

    {"output", "uri", K_OUTPUT, 0, 0, F(output[0]), 0, 0},
    {"output", "uri2", K_OUTPUT, 0, 0, F(output[1]), 0, 0},
    {"output", "uri3", K_OUTPUT, 0, 0, F(output[2]), 0, 0},
    {"output", "uri4", K_OUTPUT, 0, 0, F(output[3]), 0, 0},
    {"output", "uri5", K_OUTPUT, 0, 0, F(output[4]), 0, 0},
    {"output", "uri6", K_OUTPUT, 0, 0, F(output[5]), 0, 0},
    {"output", "uri7", K_OUTPUT, 0, 0, F(output[6]), 0, 0},
    {"output", "uri8", K_OUTPUT, 0, 0, F(output[7]), 0, 0},
};
#undef F
/* [source] type. Named by its row, not by its offset: type is live_config's first field, so its
 * offset 0 is also that of the rows without a field of their own (K_STAGE). */
static int is_source_type(const key_def *k)
{
    return k->kind == K_ENUM && k->parse == parse_source;
}

/* A key's index (find_key, key_line): keys[i] below NKEYS, the stage option table's row
 * i - NKEYS from there (NALL in all) */
#define NKEYS ((int)NELEM(keys))
#define NALL (NKEYS + stereo_option_count())
_Static_assert(NELEM(keys) + 24 <= LIVE_CONFIG_MAX_KEYS, "live_config.key_line is too short");

/* [controls] has no fixed keys: any control name. */
static const char *const sections[] = {"source", "camera", "controls", "files", "synth",
                                       "stereo", "calibration", "display", "record", "run",
                                       "output"};

int known_section(const char *s) { return word_index(sections, NELEM(sections), s) >= 0; }

/* "source, camera, ..." for the unknown-section message */
const char *section_list(char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < NELEM(sections) && used < n; i++) {
        int k = snprintf(out + used, n - used, "%s%s", i ? ", " : "", sections[i]);
        used += k > 0 ? (size_t)k : 0;
    }
    return out;
}

int find_key(const char *section, const char *key)
{
    for (int i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
            return i;
    const stereo_option_info *row = strcmp(section, "stereo") ? NULL : stereo_option_by_key(key);
    int i = row ? NKEYS + (int)(row - stereo_option_table) : -1;
    return i < LIVE_CONFIG_MAX_KEYS ? i : -1; /* a table too long for key_line: its test fails */
}

int failf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* "width, height, fps" — the keys of a section, for the unknown-key message. */
static void section_keys(const char *section, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < NALL && used < n; i++) {
        const char *key = i < NKEYS ? keys[i].key : stereo_option_table[i - NKEYS].key;
        if (strcmp(i < NKEYS ? keys[i].section : "stereo", section) == 0 && *key) {
            int k = snprintf(out + used, n - used, "%s%s", used ? ", " : "", key);
            used += k > 0 ? (size_t)k : 0;
        }
    }
}

/* The key of section closest to key by edit distance (at most 2 edits, 3 for a key of 6
 * characters or more), or NULL: the unknown key's likely meaning ("disparity" -> "disparities"
 * is 3). */
static const char *closest_key(const char *section, const char *key)
{
    const char *best = NULL;
    size_t n = strlen(key);
    int best_d = n >= 6 ? 4 : 3;
    if (n > 40)
        return NULL;
    for (int i = 0; i < NALL; i++) {
        const char *k = i < NKEYS ? keys[i].key : stereo_option_table[i - NKEYS].key;
        size_t m = strlen(k);
        if (strcmp(i < NKEYS ? keys[i].section : "stereo", section) != 0 || !*k || m > 40)
            continue;
        int row[41], prev; /* Levenshtein, one row */
        for (size_t j = 0; j <= m; j++)
            row[j] = (int)j;
        for (size_t a = 1; a <= n; a++) {
            prev = row[0];
            row[0] = (int)a;
            for (size_t j = 1; j <= m; j++) {
                int cur = row[j];
                int sub = prev + (key[a - 1] != k[j - 1]);
                int del = row[j] + 1, ins = row[j - 1] + 1;
                row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
                prev = cur;
            }
        }
        if (row[m] < best_d)
            best_d = row[m], best = k;
    }
    return best;
}

/* ---- values ------------------------------------------------------------------------------ */

/* A decimal integer (optional sign), nothing before or after it, in lo..hi. */
static int parse_integer(const char *key, const char *v, long lo, long hi, long *out, char *err,
                         size_t errlen)
{
    if (!*v)
        return failf(err, errlen, "%s: empty; expected an integer in %ld..%ld", key, lo, hi);
    if (!isdigit((unsigned char)v[0]) && !((v[0] == '-' || v[0] == '+') &&
                                           isdigit((unsigned char)v[1])))
        return failf(err, errlen, "%s: '%s' is not an integer", key, v);
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*end)
        return failf(err, errlen, "%s: '%s' is not an integer (unexpected '%s')", key, v, end);
    if (errno == ERANGE || x < lo || x > hi)
        return failf(err, errlen, "%s: %s is outside %ld..%ld", key, v, lo, hi);
    *out = (long)x;
    return 0;
}

/* "24" or "24,24,30,30": 1..max integers in lo..hi separated by commas (blanks around them
 * allowed); each item is read as parse_integer reads a value. */
static int parse_list(const char *key, const char *v, long lo, long hi, int *out, int max,
                      int *n, char *err, size_t errlen)
{
    int count = 0;
    for (const char *p = v;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && isspace((unsigned char)*p))
            p++, len--;
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        char item[32];
        if (len == 0 || len >= sizeof item)
            return failf(err, errlen, "%s: '%s' is not a comma-separated list of integers in "
                         "%ld..%ld", key, v, lo, hi);
        if (count == max)
            return failf(err, errlen, "%s: '%s' has more than %d values", key, v, max);
        memcpy(item, p, len);
        item[len] = '\0';
        long x;
        if (parse_integer(key, item, lo, hi, &x, err, errlen))
            return -1;
        out[count++] = (int)x;
        if (!end)
            break;
        p = end + 1;
    }
    *n = count;
    return 0;
}

static int parse_bool(const char *key, const char *v, int *out, char *err, size_t errlen)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    if (word_index(yes, NELEM(yes), v) >= 0)
        *out = 1;
    else if (word_index(no, NELEM(no), v) >= 0)
        *out = 0;
    else
        return failf(err, errlen, "%s: '%s' is not true/false, yes/no, on/off or 1/0", key, v);
    return 0;
}

/* Checks a path value; empty_ok says whether "" (off / none) is allowed. */
static int check_path(const char *key, const char *v, int empty_ok, char *err, size_t errlen)
{
    size_t n = strlen(v);
    if (!n && !empty_ok)
        return failf(err, errlen, "%s: empty; a path is needed", key);
    if (n >= CONFIG_PATH_MAX)
        return failf(err, errlen, "%s: the path is %zu characters long; at most %d fit", key, n,
                     CONFIG_PATH_MAX - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return failf(err, errlen, "%s: the path contains a control character (byte %zu)",
                         key, i + 1);
    if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
        return failf(err, errlen, "%s: %s: quotes would be part of the path; remove them", key, v);
    if (strstr(v, " #") || strstr(v, "\t#"))
        return failf(err, errlen,
                     "%s: '%s': a '#' comment must be on a line of its own (or use ';')", key, v);
    return 0;
}

/* [calibration] maps: one file (map file or calibration YAML), or "LEFT,RIGHT", the ROS
 * camera_info files of the two cameras (hal/calib.h splits it the same way: at the one comma,
 * blanks around it dropped). */
static int check_calib(const char *key, const char *v, char *err, size_t errlen)
{
    if (check_path(key, v, 1, err, errlen))
        return -1;
    const char *comma = strchr(v, ',');
    if (!comma)
        return 0;
    if (strchr(comma + 1, ','))
        return failf(err, errlen, "%s: '%s' has more than one ','; give one file, or the two "
                     "camera_info files as LEFT,RIGHT", key, v);
    const char *a = v, *a_end = comma, *b = comma + 1, *b_end = v + strlen(v);
    while (a < a_end && isblank((unsigned char)*a))
        a++;
    while (a_end > a && isblank((unsigned char)a_end[-1]))
        a_end--;
    while (b < b_end && isblank((unsigned char)*b))
        b++;
    while (b_end > b && isblank((unsigned char)b_end[-1]))
        b_end--;
    if (a == a_end || b == b_end)
        return failf(err, errlen, "%s: '%s': the %s camera's camera_info file is missing "
                     "(LEFT,RIGHT)", key, v, a == a_end ? "left" : "right");
    if (a_end - a == b_end - b && strncmp(a, b, (size_t)(a_end - a)) == 0)
        return failf(err, errlen, "%s: '%s': the same file for both cameras; each has its own "
                     "camera_info file", key, v);
    return 0;
}

/* A file pattern is given to snprintf with the frame number (an int): exactly one conversion,
 * an integer one (%d, %i, %u with flags 0 - + space and a width up to 99); "%%" is a
 * literal percent sign. Anything else (%s, %n, %ld, ...) would read an argument that is not
 * there. */
int live_config_check_pattern(const char *key, const char *v, char *err, size_t errlen)
{
    return seq_check_pattern(key, v, err, errlen); /* stereo-match's sequences share the rule */
}

/* c->stereo from the [stereo] keys as given (c->stage): penalties not given follow the tuned
 * defaults for the cost and window, lists go to each path, as stereo-match resolves its options
 * (a check across keys that fails here is reported by live_config_check) */
static void resolve_stereo(live_config *c)
{
    stereo_options o = c->stage;
    char why[256];
    (void)stereo_options_finish(&o, why, sizeof why);
    o.p.width = c->stereo.width;
    o.p.height = c->stereo.height;
    c->stereo = o.p;
}

/* A [stereo] key of the stage option table (row): its value through the table's parser, the
 * message naming the key; a flag's key (subpixel, lr_check, median) takes a boolean, false
 * being the flag given; a switch's (fill, temporal), true being the switch given. A list may
 * have blanks around its commas, as every list of the file. */
static int set_stage_key(live_config *c, const stereo_option_info *row, const char *value,
                         char *err, size_t errlen)
{
    stereo_options o = c->stage;
    if (!row->metavar) {
        int on;
        if (parse_bool(row->key, value, &on, err, errlen))
            return -1;
        if (stereo_option_flag(&o, row->name, row->type == STEREO_OPT_SWITCH ? on : !on, err,
                               errlen))
            return -1;
    } else {
        char v[256];
        size_t n = 0;
        for (const char *s = value; *s && n + 1 < sizeof v; s++) {
            const char *t = s;
            while (isspace((unsigned char)*t))
                t++;
            if (t != s && (*t == ',' || (n > 0 && v[n - 1] == ','))) {
                s = t - 1; /* blanks next to a comma */
                continue;
            }
            v[n++] = *s;
        }
        v[n] = '\0';
        if (strlen(value) >= sizeof v)
            return failf(err, errlen, "%s: '%.40s...' is too long", row->key, value);
        if (stereo_option_set_as(&o, row->name, v, row->key, err, errlen))
            return -1;
    }
    c->stage = o;
    resolve_stereo(c);
    return 0;
}

/* "CX,CY": two finite numbers within +-1e6 px, blanks around them allowed. 0, or -1. */
static int parse_center(const char *v, double out[2])
{
    char *end;
    for (int i = 0; i < 2; i++) {
        errno = 0;
        out[i] = strtod(v, &end);
        if (end == v || errno || !isfinite(out[i]) || fabs(out[i]) > 1e6)
            return -1;
        while (isspace((unsigned char)*end))
            end++;
        if (*end != (i == 0 ? ',' : '\0'))
            return -1;
        v = end + 1;
    }
    return 0;
}

int live_config_center(const live_config *c, double out[2])
{
    return c->center[0] && parse_center(c->center, out) == 0;
}

/* Validates `value` for key k and stores it; "KEY: what is wrong" on failure (nothing stored). */
static int set_key(live_config *c, const key_def *k, const char *value, char *err, size_t errlen)
{
    char *field = (char *)c + k->offset;
    long x = 0;
    int b = 0;
    char why2[SOURCE_URI_MAX + 200];
    switch (k->kind) {
    case K_INT:
    case K_LONG:
        if (parse_integer(k->key, value, k->lo, k->hi, &x, err, errlen))
            return -1;
        if (k->kind == K_LONG)
            memcpy(field, &x, sizeof x);
        else {
            int i = (int)x;
            memcpy(field, &i, sizeof i);
        }
        break;
    case K_STAGE: /* no key of its own (find_key) */
        return failf(err, errlen, "%s: not a key", k->key);
    case K_BOOL:
        if (parse_bool(k->key, value, &b, err, errlen))
            return -1;
        memcpy(field, &b, sizeof b);
        break;
    case K_ENUM:
        if (!*value)
            return failf(err, errlen, "%s: empty; expected one of %s", k->key, k->words);
        b = k->parse(value);
        if (b < 0)
            return failf(err, errlen, "%s: '%s' is not one of %s", k->key, value, k->words);
        memcpy(field, &b, sizeof b);
        break;
    case K_PATH:
    case K_PATTERN:
        if (check_path(k->key, value, k->lo == 0, err, errlen))
            return -1;
        if (k->kind == K_PATTERN && live_config_check_pattern(k->key, value, err, errlen))
            return -1;
        memcpy(field, value, strlen(value) + 1);
        break;
    case K_CALIB:
        if (check_calib(k->key, value, err, errlen))
            return -1;
        memcpy(field, value, strlen(value) + 1);
        break;
    case K_REAL: {
        char *end;
        errno = 0;
        double d = strtod(value, &end);
        if (!*value || *end || errno || !isfinite(d) || d < 0 || d > (double)k->hi)
            return failf(err, errlen, "%s: '%s' is not a number in 0..%ld (0: not given)",
                         k->key, value, k->hi);
        memcpy(field, &d, sizeof d);
        break;
    }
    case K_CENTER: {
        double cxy[2];
        if (*value && parse_center(value, cxy))
            return failf(err, errlen, "%s: '%s' is not CX,CY: two numbers in pixels (or empty: "
                         "the image centre)", k->key, value);
        if (strlen(value) >= sizeof c->center)
            return failf(err, errlen, "%s: '%s' is too long", k->key, value);
        memcpy(field, value, strlen(value) + 1);
        break;
    }
    case K_URI: {
        source_uri u;
        if (*value && source_uri_parse(value, &u, why2, sizeof why2) != 0)
            return failf(err, errlen, "%s: %s", k->key, why2);
        memcpy(field, value, strlen(value) + 1);
        /* one way to name the source at a time: the last given wins (config.h); view2 ... go
         * with either and are checked against it by live_config_check. An empty URI names
         * nothing and leaves the others (live_config_write_section writes "input =" after
         * left and right). */
        if (!*value)
            break;
        if (k->offset == offsetof(live_config, source_input))
            c->source_left[0] = c->source_right[0] = '\0';
        else if (k->offset == offsetof(live_config, source_left) ||
                 k->offset == offsetof(live_config, source_right))
            c->source_input[0] = '\0';
        break;
    }
    case K_OUTPUT: {
        output_uri u;
        if (*value && output_uri_parse(value, &u, why2, sizeof why2) != 0)
            return failf(err, errlen, "%s: %s", k->key, why2);
        memcpy(field, value, strlen(value) + 1);
        break;
    }
    case K_BASELINES: {
        int bl[STEREO_MAX_VIEWS], n;
        char bwhy[200];
        if (!*value)
            return failf(err, errlen, "%s: empty; expected the baseline ratios 1,B2,... (1: the "
                         "pair)", k->key);
        if (stereo_baselines_from_str(value, bl, &n, bwhy, sizeof bwhy) != 0)
            return failf(err, errlen, "%s: '%s': %s", k->key, value, bwhy);
        if (bl[1] != STEREO_BASELINE_SCALE)
            return failf(err, errlen, "%s: '%s': the first ratio is view 1's (the right camera, "
                         "against which the disparity is measured) and must be 1", k->key, value);
        for (int i = 2; i <= n; i++) {
            if (bl[i] == 0)
                return failf(err, errlen, "%s: '%s': view %d has ratio 0, the reference's own "
                             "place", k->key, value, i);
            for (int j = 1; j < i; j++)
                if (bl[j] == bl[i])
                    return failf(err, errlen, "%s: '%s': view %d repeats view %d's ratio",
                                 k->key, value, i, j);
        }
        memcpy(c->stage.p.baseline, bl, sizeof bl);
        c->stage.p.views = n + 1;
        break;
    }
    case K_LOSE: {
        int v[3] = {0, 0, 0}, n = 0;
        if (*value) {
            if (parse_list(k->key, value, 0, INT32_MAX, v, 3, &n, err, errlen))
                return -1;
            if (n != 3 || v[0] < 1 || v[0] >= STEREO_MAX_VIEWS || v[2] < v[1])
                return failf(err, errlen, "%s: '%s' is not VIEW,FIRST,LAST (view 1..%d lost for "
                             "the frames FIRST..LAST, FIRST <= LAST; empty: none)", k->key,
                             value, STEREO_MAX_VIEWS - 1);
        }
        memcpy(field, v, sizeof v);
        break;
    }
    }
    if (is_source_type(k))
        c->source_left[0] = c->source_right[0] = c->source_input[0] = '\0';
    resolve_stereo(c);
    return 0;
}

/* [controls] NAME = integer: replaces the value of a control already set, else appends. */
static int set_control(live_config *c, const char *name, const char *value, char *err,
                       size_t errlen)
{
    size_t n = strlen(name);
    if (n == 0)
        return failf(err, errlen, "controls: a control name is missing");
    if (n > (size_t)CONTROL_NAME_MAX)
        return failf(err, errlen, "%s: a control name has at most %d characters", name,
                     CONTROL_NAME_MAX);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '_')
            return failf(err, errlen,
                         "%s: a control name has only letters, digits and '_' (as v4l2-ctl "
                         "writes it, e.g. exposure_time_absolute)",
                         name);
    long v;
    if (parse_integer(name, value, INT32_MIN, INT32_MAX, &v, err, errlen))
        return -1;
    int i = 0;
    while (i < c->ncontrols && strcmp(c->controls[i].name, name) != 0)
        i++;
    if (i == c->ncontrols) {
        if (c->ncontrols >= CAPTURE_MAX_CONTROLS)
            return failf(err, errlen, "%s: more than %d controls", name, CAPTURE_MAX_CONTROLS);
        memcpy(c->controls[i].name, name, n + 1);
        c->ncontrols++;
    }
    c->controls[i].value = (int32_t)v;
    return 0;
}

/* ---- public: defaults, set, check --------------------------------------------------------- */

void live_config_defaults(live_config *c)
{
    memset(c, 0, sizeof *c);
    c->source = SOURCE_SYNTH;
    c->width = 640;
    c->height = 480;
    c->fps = 30;
    c->format = CAPTURE_FORMAT_AUTO;
    c->buffers = CAPTURE_MIN_BUFFERS;
    c->max_skew_ms = 0;
    c->files_fps = 0;
    c->files_loop = 1;
    c->synth_width = 640;
    c->synth_height = 480;
    c->synth_fps = 30;
    stereo_options_init(&c->stage);
    c->stage.auto_ok = 1; /* disparities = auto: measured on the first pair (stereo-live) */
    c->stage.p.num_disparities = 64;
    c->stage.p.mi_warm = 1; /* a sequence: MI starts each frame from the previous one (stereo.h) */
    c->stereo.width = c->synth_width;
    c->stereo.height = c->synth_height;
    resolve_stereo(c);
    c->colormap = COLORMAP_TURBO;
    c->view = VIEW_DISPARITY;
    c->color_range_auto = 0;
    c->legend = 1;
    snprintf(c->font, sizeof c->font, "%s", DEFAULT_FONT);
    c->frames = 0;
}

int live_config_set(live_config *c, const char *section, const char *key, const char *value,
                    char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    char list[160];
    if (!section || !known_section(section))
        return failf(err, errlen, "[%s]: unknown section (sections: %s)", section ? section : "",
                     section_list(list, sizeof list));
    if (!key)
        return failf(err, errlen, "[%s]: no key", section);
    if (!value)
        return failf(err, errlen, "%s: no value", key);
    if (strcmp(section, "controls") == 0)
        return set_control(c, key, value, err, errlen);
    int i = find_key(section, key);
    if (i < 0) {
        char known[1024];
        section_keys(section, known, sizeof known);
        const char *near = closest_key(section, key);
        if (near)
            return failf(err, errlen, "%s: unknown key in [%s]; did you mean %s? (keys: %s)", key,
                         section, near, known);
        return failf(err, errlen, "%s: unknown key in [%s] (keys: %s)", key, section, known);
    }
    if ((i < NKEYS ? set_key(c, &keys[i], value, err, errlen)
                   : set_stage_key(c, &stereo_option_table[i - NKEYS], value, err, errlen)) != 0)
        return -1;
    c->key_line[i] = -1; /* the command line's (live_config_load sets its line after) */
    return 0;
}

int live_config_origin(const live_config *c, const char *section, const char *key, char *buf,
                       size_t len)
{
    int i = find_key(section, key);
    if (i < 0 || c->key_line[i] <= 0 || !c->config_file[0]) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    snprintf(buf, len, "%s:%d", c->config_file, c->key_line[i]);
    return 1;
}

/* The word of k's `words` that parses to `value` (enums have one name each, plus aliases
 * such as "gray" listed after it): into buf, or -1. */
static int enum_word(const key_def *k, int value, char *buf, size_t len)
{
    for (const char *w = k->words; *w;) {
        size_t n = strcspn(w, ",");
        if (n < len) {
            memcpy(buf, w, n);
            buf[n] = '\0';
            if (k->parse(buf) == value)
                return 0;
        }
        w += n;
        while (*w == ',' || *w == ' ')
            w++;
    }
    return -1;
}

int live_config_write_section(FILE *f, const live_config *c, const char *section)
{
    if (!known_section(section) || strcmp(section, "controls") == 0)
        return -1;
    fprintf(f, "[%s]\n", section);
    int uris = c->source_left[0] || c->source_right[0] || c->source_input[0];
    for (int i = 0; i < NKEYS; i++) {
        const key_def *k = &keys[i];
        if (uris && is_source_type(k))
            continue; /* the URIs name the source; type would be a second way (and empty them) */
        if (strcmp(k->section, section) != 0)
            continue;
        const char *field = (const char *)c + k->offset;
        int v;
        long l;
        char word[32];
        switch (k->kind) {
        case K_STAGE: /* the stage option table's keys */
            for (const stereo_option_info *row = stereo_option_table; row->name; row++) {
                char text[256];
                if (!*stereo_option_format(&c->stereo, row, text, sizeof text))
                    return -1;
                /* disparities = auto as given: c->stereo holds the default D until a pair is
                 * measured (a recording writes the measured D: pair_recorder_open) */
                if (row->offset == offsetof(stereo_params, num_disparities) &&
                    c->stage.auto_disparities)
                    snprintf(text, sizeof text, "auto");
                fprintf(f, "%s = %s\n", row->key, text);
            }
            break;
        case K_LONG:
            memcpy(&l, field, sizeof l);
            fprintf(f, "%s = %ld\n", k->key, l);
            break;
        case K_BASELINES: {
            int n = c->stereo.views > 2 ? c->stereo.views : 2;
            fprintf(f, "%s = ", k->key);
            for (int j = 1; j < n; j++) {
                char b[16];
                fprintf(f, "%s%s", j > 1 ? "," : "",
                        stereo_baseline_str(j == 1 ? STEREO_BASELINE_SCALE : c->stereo.baseline[j],
                                            b, sizeof b));
            }
            fputc('\n', f);
            break;
        }
        case K_LOSE:
            if (c->synth_lose[0])
                fprintf(f, "%s = %d,%d,%d\n", k->key, c->synth_lose[0], c->synth_lose[1],
                        c->synth_lose[2]);
            else
                fprintf(f, "%s =\n", k->key);
            break;
        case K_BOOL:
            memcpy(&v, field, sizeof v);
            fprintf(f, "%s = %s\n", k->key, v ? "true" : "false");
            break;
        case K_ENUM:
            memcpy(&v, field, sizeof v);
            if (enum_word(k, v, word, sizeof word) != 0)
                return -1;
            fprintf(f, "%s = %s\n", k->key, word);
            break;
        case K_REAL: {
            double d;
            char num[32]; /* the shortest of 15 or 17 digits that reads back the same */
            memcpy(&d, field, sizeof d);
            snprintf(num, sizeof num, "%.15g", d);
            if (strtod(num, NULL) != d)
                snprintf(num, sizeof num, "%.17g", d);
            fprintf(f, "%s = %s\n", k->key, num);
            break;
        }
        case K_PATH:
        case K_PATTERN:
        case K_CALIB:
        case K_CENTER:
        case K_URI:
        case K_OUTPUT:
            /* what the reader would take for something else: a line break, a comment, blanks
             * at the ends (stripped) */
            if (strpbrk(field, "\r\n") || strstr(field, " ;") || strstr(field, "\t;") ||
                strstr(field, " #") || strstr(field, "\t#") ||
                (*field && (isspace((unsigned char)field[0]) ||
                            isspace((unsigned char)field[strlen(field) - 1]))))
                return -1;
            fprintf(f, "%s =%s%s\n", k->key, *field ? " " : "", field);
            break;
        default: /* the integers */
            memcpy(&v, field, sizeof v);
            fprintf(f, "%s = %d\n", k->key, v);
        }
    }
    return ferror(f) ? -1 : 0;
}

int config_key_count(void) { return NALL; }
