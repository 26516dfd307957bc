/* SPDX-License-Identifier: Apache-2.0 */
/* source_uri.c — the live input URIs and the plan of which backend reads them (source_uri.h). */
#include "source_uri.h"

#include "synth.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const kind_names[] = {"v4l2", "csi", "rtsp", "file", "gst", "synth"};

const char *source_uri_kind_name(source_uri_kind k)
{
    return (unsigned)k < NELEM(kind_names) ? kind_names[k] : "?";
}

int source_uri_is_gst(const source_uri *u)
{
    return u->kind == URI_CSI || u->kind == URI_RTSP || u->kind == URI_GST ||
           (u->kind == URI_FILE && !u->is_pattern);
}

int uri_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int uri_parse_uint(const char *s, size_t n, long lo, long hi, int *out)
{
    if (n == 0 || n > 9)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* synth://?width=W&height=H&fps=F (each optional; the [synth] keys' ranges, hal/synth.h's
 * sizes, so that a bad one is refused with the other options, not when the scene starts). */
static int parse_synth_options(const char *q, source_uri *u, char *err, size_t errlen)
{
    while (*q) {
        size_t n = strcspn(q, "&");
        const char *eq = memchr(q, '=', n);
        if (!eq)
            return uri_fail(err, errlen, "'%s': '%.*s' is not KEY=VALUE (synth options: width, "
                            "height, fps, e.g. synth://?width=320&height=240)", u->text, (int)n, q);
        size_t klen = (size_t)(eq - q), vlen = n - klen - 1;
        int *field = NULL;
        long lo = SYNTH_MIN_SIZE, hi = SYNTH_MAX_SIZE;
        if (klen == 5 && strncmp(q, "width", 5) == 0)
            field = &u->width;
        else if (klen == 6 && strncmp(q, "height", 6) == 0)
            field = &u->height;
        else if (klen == 3 && strncmp(q, "fps", 3) == 0)
            field = &u->fps, lo = 0, hi = 1000;
        if (!field)
            return uri_fail(err, errlen, "'%s': unknown synth option '%.*s' (synth options: width, "
                            "height, fps)", u->text, (int)klen, q);
        if (*field >= 0)
            return uri_fail(err, errlen, "'%s': synth option '%.*s' given twice", u->text,
                            (int)klen, q);
        if (uri_parse_uint(eq + 1, vlen, lo, hi, field) != 0)
            return uri_fail(err, errlen, "'%s': synth option %.*s = '%.*s' is not an integer in "
                            "%ld..%ld", u->text, (int)klen, q, (int)vlen, eq + 1, lo, hi);
        q += n;
        if (*q == '&')
            q++;
    }
    return 0;
}

/* The length of a frame-number conversion at s ("%04d": %, flags 0-+ space, a width of up to
 * two digits, d, i or u; sequence.h's rule), else 0. */
static size_t conversion_length(const char *s)
{
    const char *q = s + 1;
    while (*q && strchr("0-+ ", *q))
        q++;
    for (int digits = 0; isdigit((unsigned char)*q) && digits < 2; digits++)
        q++;
    return *q == 'd' || *q == 'i' || *q == 'u' ? (size_t)(q - s) + 1 : 0;
}

static int hex_value(char c)
{
    return isdigit((unsigned char)c) ? c - '0'
           : isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10 : -1;
}

/* file://PATH (RFC 8089): "localhost/" names the local host, so file://localhost/a is /a;
 * %XX is a percent-encoded byte. Beside those, a frame-number conversion (%04d) makes the path
 * an image sequence, and %% is a literal '%' (so is %25). out->target gets the path for a video,
 * the printf pattern ('%' doubled) for a sequence. */
static int parse_file_path(const char *text, const char *rest, source_uri *out, char *err,
                           size_t errlen)
{
    if (strncasecmp(rest, "localhost/", 10) == 0)
        rest += 9;
    if (!rest[0])
        return uri_fail(err, errlen, "'%s': no path (file:///abs/video.mp4, file://rel/video.mp4 "
                        "or file://left_%%04d.png)", text);
    char pattern[SOURCE_URI_MAX];
    size_t k = 0;
    int conversions = 0;
    for (const char *p = rest; *p;) {
        if (k + 3 >= sizeof pattern) /* decoding only shortens the text: cannot happen */
            return uri_fail(err, errlen, "'%s': too long", text);
        if (*p != '%') {
            pattern[k++] = *p++;
            continue;
        }
        size_t n = p[1] == '%' ? 2 : conversion_length(p);
        if (n) { /* kept as printf reads it */
            conversions += p[1] != '%';
            memcpy(pattern + k, p, n);
            k += n, p += n;
            continue;
        }
        int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
        if (lo < 0)
            return uri_fail(err, errlen, "'%s': '%.3s' at byte %zu is neither a frame number "
                            "(%%04d: an image sequence) nor %%XX (a percent-encoded byte); a "
                            "literal %% is %%%% or %%25", text, p, (size_t)(p - text) + 1);
        int byte = hi * 16 + lo;
        if (byte < 0x20 || byte == 0x7f)
            return uri_fail(err, errlen, "'%s': '%.3s' decodes to a control character", text, p);
        if (byte == '%')
            pattern[k++] = '%';
        pattern[k++] = (char)byte;
        p += 3;
    }
    pattern[k] = '\0';
    if (conversions > 1)
        return uri_fail(err, errlen, "'%s': %d frame-number conversions; an image sequence has one "
                        "(file://left_%%04d.png; a literal %% is %%%%)", text, conversions);
    /* GStreamer's description quotes the path: it may not close the quotes */
    if (strchr(pattern, '"') || strchr(pattern, '\\'))
        return uri_fail(err, errlen, "'%s': a path with '\"' or '\\' is not supported", text);
    out->is_pattern = conversions == 1;
    if (out->is_pattern) {
        memcpy(out->target, pattern, k + 1);
        return 0;
    }
    size_t j = 0; /* a video: the file's own name, %% undone */
    for (size_t i = 0; i < k; i++) {
        out->target[j++] = pattern[i];
        i += pattern[i] == '%' && pattern[i + 1] == '%';
    }
    out->target[j] = '\0';
    return 0;
}

int source_uri_parse(const char *text, source_uri *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->width = out->height = out->fps = -1;
    if (!text || !*text)
        return uri_fail(err, errlen, "empty; expected a URI such as v4l2:///dev/video0, "
                        "gst://videotestsrc, file://video.mp4 or synth://");
    size_t len = strlen(text);
    if (len >= SOURCE_URI_MAX)
        return uri_fail(err, errlen, "'%.40s...': %zu characters; at most %d fit", text, len,
                        SOURCE_URI_MAX - 1);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return uri_fail(err, errlen, "the URI contains a control character (byte %zu)", i + 1);
    memcpy(out->text, text, len + 1);
    if (text[0] == '/') { /* a bare device path */
        if (strncmp(text, "/dev/", 5) != 0)
            return uri_fail(err, errlen, "'%s': a bare path names a V4L2 device under /dev; for a "
                            "file write file://%s", text, text);
        out->kind = URI_V4L2;
        memcpy(out->target, text, len + 1);
        return 0;
    }
    const char *sep = strstr(text, "://");
    if (!sep)
        return uri_fail(err, errlen, "'%s': not a URI (v4l2:///dev/video0, csi://0, "
                        "rtsp://HOST/..., "
                        "file://PATH, gst://PIPELINE or synth://)", text);
    size_t slen = (size_t)(sep - text);
    const char *rest = sep + 3;
    int kind = -1;
    for (size_t k = 0; k < NELEM(kind_names); k++)
        if (strlen(kind_names[k]) == slen && strncasecmp(text, kind_names[k], slen) == 0)
            kind = (int)k;
    if (kind < 0)
        return uri_fail(err, errlen, "'%s': unknown scheme '%.*s' (v4l2, csi, rtsp, file, gst, "
                        "synth)", text, (int)slen, text);
    out->kind = (source_uri_kind)kind;
    switch (out->kind) {
    case URI_V4L2:
        if (rest[0] != '/')
            return uri_fail(err, errlen, "'%s': the device path is absolute: v4l2:///dev/video0 "
                            "(three slashes)", text);
        snprintf(out->target, sizeof out->target, "%s", rest);
        return 0;
    case URI_CSI:
        if (uri_parse_uint(rest, strlen(rest), 0, SOURCE_CSI_MAX_SENSOR, &out->sensor_id) != 0)
            return uri_fail(err, errlen, "'%s': csi://N takes the sensor id N, 0..%d (e.g. "
                            "csi://0)",
                            text, SOURCE_CSI_MAX_SENSOR);
        return 0;
    case URI_RTSP:
        if (!rest[0] || rest[0] == '/')
            return uri_fail(err, errlen, "'%s': no host (rtsp://HOST[:PORT]/PATH)", text);
        if (strchr(text, '"') || strchr(text, '\\'))
            return uri_fail(err, errlen, "'%s': contains '\"' or '\\'", text);
        snprintf(out->target, sizeof out->target, "%s", text);
        return 0;
    case URI_FILE:
        return parse_file_path(text, rest, out, err, errlen);
    case URI_GST: {
        const char *s = rest;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            return uri_fail(err, errlen, "'%s': no pipeline (e.g. gst://videotestsrc is-live=true)",
                            text);
        size_t n = strlen(s);
        while (n && isspace((unsigned char)s[n - 1]))
            n--;
        if (s[n - 1] == '!')
            return uri_fail(err, errlen, "'%s': ends with '!'; the app appends its own caps and "
                            "appsink", text);
        snprintf(out->target, sizeof out->target, "%.*s", (int)n, s);
        return 0;
    }
    case URI_SYNTH:
        if (rest[0] == '?')
            return parse_synth_options(rest + 1, out, err, errlen);
        if (rest[0])
            return uri_fail(err, errlen, "'%s': synth:// takes options as a query only "
                            "(synth://?width=320&height=240&fps=30)", text);
        return 0;
    }
    return uri_fail(err, errlen, "'%s': unknown scheme", text);
}

int source_plan_make(const char *input, const char *left, const char *right, source_plan *out,
                     char *err, size_t errlen)
{
    char why[600];
    memset(out, 0, sizeof *out);
    int have_in = input && *input, have_l = left && *left, have_r = right && *right;
    if (have_in && (have_l || have_r))
        return uri_fail(err, errlen, "input: give either input (one side-by-side stream) or left "
                        "and right (two cameras), not both");
    if (have_in) {
        if (source_uri_parse(input, &out->uri[0], why, sizeof why) != 0)
            return uri_fail(err, errlen, "input: %s", why);
        out->nuri = 1;
        const source_uri *u = &out->uri[0];
        if (u->kind == URI_SYNTH)
            out->kind = PLAN_SYNTH;
        else if (u->kind == URI_V4L2)
            out->kind = PLAN_SBS;
        else if (u->kind == URI_FILE && u->is_pattern)
            return uri_fail(err, errlen, "input: '%s' is an image sequence; give the two sequences "
                            "as left and right (file://left_%%04d.png, file://right_%%04d.png)",
                            u->text);
        else
            out->kind = PLAN_GST_ONE;
        return 0;
    }
    if (!have_l || !have_r)
        return uri_fail(err, errlen, "%s: missing; give left and right (two cameras) or input (one "
                        "side-by-side stream)", have_l ? "right" : "left");
    const char *text[2] = {left, right};
    for (int k = 0; k < 2; k++)
        if (source_uri_parse(text[k], &out->uri[k], why, sizeof why) != 0)
            return uri_fail(err, errlen, "%s: %s", k ? "right" : "left", why);
    out->nuri = 2;
    const source_uri *u = out->uri;
    for (int k = 0; k < 2; k++) {
        if (u[k].kind == URI_SYNTH)
            return uri_fail(err, errlen, "%s: synth:// is a stereo pair by itself: give it as "
                            "input "
                            "(--input synth://)", k ? "right" : "left");
    }
    if (u[0].kind == URI_V4L2 && u[1].kind == URI_V4L2) {
        if (strcmp(u[0].target, u[1].target) == 0)
            return uri_fail(err, errlen, "right: %s is also the left camera", u[1].target);
        out->kind = PLAN_V4L2_PAIR;
        return 0;
    }
    int seq[2] = {u[0].kind == URI_FILE && u[0].is_pattern, u[1].kind == URI_FILE && u[1].is_pattern};
    if (seq[0] && seq[1]) {
        out->kind = PLAN_FILES;
        return 0;
    }
    if (seq[0] || seq[1])
        return uri_fail(err, errlen, "%s: '%s' is an image sequence, the other side is a stream; "
                        "give both as image sequences or both as streams",
                        seq[0] ? "left" : "right", u[seq[0] ? 0 : 1].text);
    /* one camera cannot be both sides (two pipelines of one description are two streams) */
    if (u[0].kind == u[1].kind && (u[0].kind == URI_CSI || u[0].kind == URI_V4L2) &&
        u[0].sensor_id == u[1].sensor_id && strcmp(u[0].target, u[1].target) == 0)
        return uri_fail(err, errlen, "right: '%s' is also the left camera", u[1].text);
    out->kind = PLAN_GST_PAIR;
    return 0;
}
