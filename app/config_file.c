/* SPDX-License-Identifier: Apache-2.0 */
/* config_file.c — the live app's INI file (config.h: live_config_load): each line through the
 * setter of config.c, so that the file and the command line accept the same values and say the
 * same about a bad one, with FILE:LINE in front.
 *
 * How the packaged inih (Debian libinih1 55) is used. Its behaviour is fixed when the library is
 * built, not by our compiler flags, so this file relies on none of it and feeds it lines itself
 * (ini_parse_stream with read_line as the reader):
 *  - Multi-line values are on (INI_ALLOW_MULTILINE): an indented line would be taken as the
 *    continuation of the previous value. read_line strips leading blanks, so indentation is
 *    harmless and continuation lines cannot happen.
 *  - A line longer than its fixed buffer (INI_MAX_LINE = 200 bytes) is cut into pieces that are
 *    parsed as separate lines, and its line numbers drift from there on. read_line refuses such
 *    a line instead.
 *  - A line it cannot parse (no '=' or ':', a '[' without ']') is skipped; parsing goes on and
 *    ini_parse_stream returns the number of the first such line, or of the first line whose
 *    handler failed. That line is reported as "FILE:LINE: cannot parse this line" unless the
 *    handler (or read_line) recorded its own message for it.
 *  - The library is built with INI_HANDLER_LINENO, though its header says otherwise; line
 *    numbers are counted in read_line, and the handler has the header's four-argument
 *    signature (the extra argument is ignored under every C calling convention).
 *  - `;` starts a comment at the start of a line or after a blank inside a line; `#` only at
 *    the start of a line (a value containing " #" is refused below, as a misplaced comment).
 *  - Sections are only seen through the keys under them, so read_line checks each [section]
 *    header itself (an unknown section is an error even when it is empty).
 */
#include "config.h"
#include "config_keys.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "outpath.h"

/* What a configuration may be: a few KB of short lines. The file is read through these bounds,
 * so that a device (--config /dev/zero) or a huge file is refused after a bounded read instead of
 * growing a line buffer until the allocation fails. */
#define CONFIG_MAX_BYTES (1 << 20)
#define CONFIG_MAX_LINE 4096

typedef struct {
    FILE *fp;
    char *buf; /* the current line, CONFIG_MAX_LINE + 2 bytes */
    size_t total; /* bytes read so far */
    int lineno;             /* of the line handed to inih last */
    int err_line;           /* first error we found ourselves (0: none), -1: read error */
    char msg[400];          /* its message, without "FILE:LINE: " */
    int key_line[LIVE_CONFIG_MAX_KEYS]; /* each key's line in this file (repeats are errors) */
    int source_way_line[3]; /* line of [source] type / input / left or right (non-empty) */
    int ncontrols;          /* controls set in this file, with their lines */
    char control_name[CAPTURE_MAX_CONTROLS][sizeof(((capture_control *)0)->name)];
    int control_line[CAPTURE_MAX_CONTROLS];
    live_config cfg;        /* the values being read; copied out only when all is well */
} load_state;

static int load_fail(load_state *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    st->err_line = st->lineno;
    return 0; /* inih: the handler failed */
}

/* The fgets-style reader inih calls for each line: one whole line (blanks at both ends
 * stripped, see the top of the file), or NULL at the end or after the first error. */
static char *read_line(char *str, int num, void *stream)
{
    load_state *st = stream;
    if (st->err_line)
        return NULL;
    /* one line, bounded: up to and with its newline, at most CONFIG_MAX_LINE bytes */
    size_t n = 0;
    int c = EOF, nul = 0;
    errno = 0;
    while (n <= CONFIG_MAX_LINE && (c = getc(st->fp)) != EOF) {
        if (++st->total > CONFIG_MAX_BYTES) {
            snprintf(st->msg, sizeof st->msg,
                     "larger than %d bytes: not a configuration (a few KB of KEY = VALUE lines)",
                     CONFIG_MAX_BYTES);
            st->err_line = -1;
            return NULL;
        }
        nul |= c == '\0';
        st->buf[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (c == EOF && ferror(st->fp)) {
        snprintf(st->msg, sizeof st->msg, "cannot read: %s", strerror(errno ? errno : EIO));
        st->err_line = -1;
        return NULL;
    }
    if (n == 0)
        return NULL; /* the end */
    st->buf[n] = '\0';
    st->lineno++;
    if (nul) {
        load_fail(st, "the line contains a NUL byte");
        return NULL;
    }
    if (n > CONFIG_MAX_LINE && st->buf[n - 1] != '\n') {
        load_fail(st, "the line is longer than %d bytes", CONFIG_MAX_LINE);
        return NULL;
    }
    char *s = st->buf;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    if (st->lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0) /* UTF-8 byte order mark */
        s += 3;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t len = strlen(s);
    if (num < 1 || len >= (size_t)num) {
        load_fail(st, "the line is %zu characters long; at most %d are read", len,
                  num > 0 ? num - 1 : 0);
        return NULL;
    }
    if (*s == '[') {
        const char *end = strchr(s, ']');
        if (end) { /* without ']' inih reports the line as unparsable */
            int namelen = (int)(end - s - 1);
            char name[64];
            snprintf(name, sizeof name, "%.*s", namelen, s + 1);
            const char *after = end + 1;
            while (*after == ' ' || *after == '\t')
                after++;
            if (namelen >= (int)sizeof name || !known_section(name)) {
                char list[160];
                load_fail(st, "[%.*s]: unknown section (sections: %s)",
                          namelen > 60 ? 60 : namelen, s + 1, section_list(list, sizeof list));
                return NULL;
            }
            if (*after && *after != ';' && *after != '#') {
                load_fail(st, "[%s]: unexpected text after the section header", name);
                return NULL;
            }
        }
    }
    memcpy(str, s, len + 1);
    return str;
}

/* inih's handler, once per `key = value` line: 1 to go on, 0 on error (see load_fail). */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
    load_state *st = user;
    if (!name) /* a library built to call the handler at each new section */
        return 1;
    if (!*name)
        return load_fail(st, "a key name is missing before '='");
    if (!value)
        return load_fail(st, "%s: no value", name);
    if (!*section)
        return load_fail(st, "%s: a key before the first [section]", name);
    if (strcmp(section, "controls") == 0) {
        for (int i = 0; i < st->ncontrols; i++)
            if (strcmp(st->control_name[i], name) == 0)
                return load_fail(st, "%s: repeated (first set on line %d)", name,
                                 st->control_line[i]);
        if (st->ncontrols < CAPTURE_MAX_CONTROLS && strlen(name) < sizeof st->control_name[0]) {
            strcpy(st->control_name[st->ncontrols], name);
            st->control_line[st->ncontrols++] = st->lineno;
        }
    } else {
        int i = find_key(section, name);
        if (i >= 0 && st->key_line[i])
            return load_fail(st, "%s: repeated (first set on line %d)", name, st->key_line[i]);
        if (i >= 0)
            st->key_line[i] = st->lineno;
        /* one way to name the source in a file: type, left + right, or input (an empty URI
         * names nothing: live_config_write_section writes them so) */
        /* view2 ... go with any of the ways; live_config_check matches them to it */
        if (i >= 0 && strcmp(section, "source") == 0 && strncmp(name, "view", 4) != 0 &&
            (strcmp(name, "type") == 0 || *value)) {
            int way = strcmp(name, "type") == 0 ? 0 : strcmp(name, "input") == 0 ? 1 : 2;
            for (int o = 0; o < 3; o++)
                if (o != way && st->source_way_line[o])
                    return load_fail(st, "%s: the source is already named on line %d; give "
                                     "type (the older way), left and right, or input: one of "
                                     "them", name, st->source_way_line[o]);
            st->source_way_line[way] = st->lineno;
        }
    }
    char why[sizeof st->msg];
    if (live_config_set(&st->cfg, section, name, value, why, sizeof why))
        return load_fail(st, "%s", why);
    int i = find_key(section, name);
    if (i >= 0)
        st->cfg.key_line[i] = st->lineno;
    return 1;
}

int live_config_load(const char *path, live_config *c, char *err, size_t errlen)
{
    char why[160];
    FILE *f = open_input_file(path, why, sizeof why); /* no FIFO or device: outpath.h */
    if (!f) {
        failf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    int rc = live_config_load_stream(f, path, c, err, errlen);
    fclose(f);
    return rc;
}

int live_config_load_stream(FILE *f, const char *path, live_config *c, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    load_state *st = calloc(1, sizeof *st);
    if (!st)
        return failf(err, errlen, "%s: out of memory", path);
    st->cfg = *c;
    st->fp = f;
    int rc = -1;
    if (!(st->buf = malloc(CONFIG_MAX_LINE + 2))) {
        failf(err, errlen, "%s: out of memory", path);
        goto done;
    }

    int first = ini_parse_stream(read_line, st, on_key, st);
    if (st->err_line < 0) {
        failf(err, errlen, "%s: %s", path, st->msg);
        goto done;
    }
    if (first == -2) { /* only with a heap line buffer */
        failf(err, errlen, "%s: out of memory", path);
        goto done;
    }
    if (first > 0 && first != st->err_line) { /* ini_parse_stream: the first bad line */
        failf(err, errlen, "%s:%d: cannot parse this line", path, first);
        goto done;
    }
    if (st->err_line) {
        failf(err, errlen, "%s:%d: %s", path, st->err_line, st->msg);
        goto done;
    }
    /* the checks across the stage options, once the file's keys are known: what the file's
     * keys alone get wrong (others wait for live_config_check, the command line read) */
    if (check_stage(&st->cfg, st->key_line, path, 0, err, errlen) != 0)
        goto done;
    /* the lines are of this file; keys an earlier file set keep their values, not its lines */
    for (int i = 0; i < config_key_count(); i++)
        if (st->key_line[i] == 0 && st->cfg.key_line[i] > 0)
            st->cfg.key_line[i] = 0;
    snprintf(st->cfg.config_file, sizeof st->cfg.config_file, "%s", path);
    *c = st->cfg;
    rc = 0;
done:
    free(st->buf);
    free(st);
    return rc;
}
