/* SPDX-License-Identifier: Apache-2.0 */
/* output_uri.c — the live app's output URIs (output_uri.h). file:// paths are decoded as
 * source_uri.c decodes an image sequence's (the same rules: %XX, %%, one frame number). */
#include "output_uri.h"

#include "source_uri.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define DEFAULT_FRAME_ID "stereo_optical_frame"
#define DEFAULT_BITRATE_KBPS 4000

static const char *const kind_names[] = {"display", "file", "ros2", "rtp", "rtsp", "gst"};

const char *output_uri_kind_name(output_kind k)
{
    return (unsigned)k < NELEM(kind_names) ? kind_names[k] : "?";
}

int output_uri_needs_camera(const output_uri *u)
{
    return u->kind == OUT_FILE && (u->depth || u->format == OUT_FILE_PLY);
}

static int is_word(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && strncmp(s, w, n) == 0;
}

/* One query option KEY=VALUE of u's kind (the key is klen bytes at k, the value vlen at v). */
static int set_option(output_uri *u, const char *k, size_t klen, const char *v, size_t vlen,
                      char *err, size_t errlen)
{
    int flag;
    if (u->kind == OUT_FILE && is_word(k, klen, "depth")) {
        if (uri_parse_uint(v, vlen, 0, 1, &flag) != 0)
            return uri_fail(err, errlen, "'%s': depth = '%.*s' is not 0 or "
                            "1", u->text, (int)vlen, v);
        u->depth = flag;
        return 0;
    }
    if (u->kind == OUT_ROS2) {
        if (is_word(k, klen, "domain")) {
            if (uri_parse_uint(v, vlen, 0, OUTPUT_DOMAIN_MAX, &u->domain) != 0)
                return uri_fail(err, errlen, "'%s': domain = '%.*s' is not a DDS domain id in "
                                "0..%d",
                                u->text, (int)vlen, v, OUTPUT_DOMAIN_MAX);
            return 0;
        }
        if (is_word(k, klen, "frame_id")) {
            if (vlen == 0 || vlen >= sizeof u->frame_id)
                return uri_fail(err, errlen, "'%s': frame_id: 1..%zu characters", u->text,
                                sizeof u->frame_id - 1);
            for (size_t i = 0; i < vlen; i++)
                if (!isalnum((unsigned char)v[i]) && !strchr("_/-.", v[i]))
                    return uri_fail(err, errlen, "'%s': frame_id '%.*s': letters, digits and _ / - "
                                    ". "
                                    "only", u->text, (int)vlen, v);
            memcpy(u->frame_id, v, vlen);
            u->frame_id[vlen] = '\0';
            return 0;
        }
        if (is_word(k, klen, "qos")) {
            if (is_word(v, vlen, "sensor"))
                u->qos = OUT_QOS_SENSOR;
            else if (is_word(v, vlen, "reliable"))
                u->qos = OUT_QOS_RELIABLE;
            else
                return uri_fail(err, errlen, "'%s': qos = '%.*s' (sensor: best effort, the newest "
                                "frame; reliable)", u->text, (int)vlen, v);
            return 0;
        }
        if (is_word(k, klen, "points")) {
            if (uri_parse_uint(v, vlen, 0, 1, &flag) != 0)
                return uri_fail(err, errlen, "'%s': points = '%.*s' is not 0 or 1", u->text,
                                (int)vlen, v);
            u->points = flag;
            return 0;
        }
        if (is_word(k, klen, "depth")) {
            if (is_word(v, vlen, "32FC1"))
                u->depth_encoding = OUT_DEPTH_32FC1;
            else if (is_word(v, vlen, "16UC1"))
                u->depth_encoding = OUT_DEPTH_16UC1;
            else
                return uri_fail(err, errlen, "'%s': depth = '%.*s' (32FC1: metres, 16UC1: "
                                "millimetres)", u->text, (int)vlen, v);
            return 0;
        }
    }
    if ((u->kind == OUT_RTP || u->kind == OUT_RTSP) && is_word(k, klen, "bitrate")) {
        if (uri_parse_uint(v, vlen, 100, 100000, &u->bitrate_kbps) != 0)
            return uri_fail(err, errlen, "'%s': bitrate = '%.*s' is not kbit/s in 100..100000",
                            u->text, (int)vlen, v);
        return 0;
    }
    static const char *const keys[] = {"", "depth", "domain, frame_id, qos, points, depth",
                                       "bitrate", "bitrate", ""};
    return uri_fail(err, errlen, "'%s': unknown option '%.*s' of "
                    "%s://%s%s%s", u->text, (int)klen, k,
                    kind_names[u->kind], keys[u->kind][0] ? " (options: " : " (it takes none",
                    keys[u->kind], ")");
}

/* KEY=VALUE&KEY=VALUE..., each key at most once. */
static int parse_query(output_uri *u, const char *q, char *err, size_t errlen)
{
    char seen[8][16];
    int nseen = 0;
    while (*q) {
        size_t n = strcspn(q, "&");
        const char *eq = memchr(q, '=', n);
        if (!eq)
            return uri_fail(err, errlen, "'%s': '%.*s' is not KEY=VALUE", u->text, (int)n, q);
        size_t klen = (size_t)(eq - q);
        for (int i = 0; i < nseen; i++)
            if (is_word(q, klen, seen[i]))
                return uri_fail(err, errlen, "'%s': option '%s' given twice", u->text, seen[i]);
        if (set_option(u, q, klen, eq + 1, n - klen - 1, err, errlen) != 0)
            return -1;
        if (nseen < 8 && klen < sizeof seen[0])
            snprintf(seen[nseen++], sizeof seen[0], "%.*s", (int)klen, q);
        q += n;
        if (*q == '&')
            q++;
    }
    return 0;
}

/* file://DIR/NAME_%06d.EXT: decoded as source_uri.c decodes a sequence's pattern. */
static int parse_file(output_uri *u, const char *path, size_t plen, char *err, size_t errlen)
{
    char uri[OUTPUT_URI_MAX + 8];
    snprintf(uri, sizeof uri, "file://%.*s", (int)plen, path);
    source_uri s;
    char why[OUTPUT_URI_MAX + 256];
    if (source_uri_parse(uri, &s, why, sizeof why) != 0)
        return uri_fail(err, errlen, "%s", why);
    if (!s.is_pattern)
        return uri_fail(err, errlen, "'%s': a file output writes one file per frame: its name "
                        "needs "
                        "a frame number (file://out/%%06d.pfm)", u->text);
    const char *dot = strrchr(s.target, '.');
    const char *slash = strrchr(s.target, '/');
    if (dot && (!slash || dot > slash) && !strcasecmp(dot, ".pfm"))
        u->format = OUT_FILE_PFM;
    else if (dot && (!slash || dot > slash) && !strcasecmp(dot, ".png"))
        u->format = OUT_FILE_PNG;
    else if (dot && (!slash || dot > slash) && !strcasecmp(dot, ".ply"))
        u->format = OUT_FILE_PLY;
    else
        return uri_fail(err, errlen, "'%s': the name must end in .pfm (float), .png (16-bit) or "
                        ".ply (point cloud)", u->text);
    snprintf(u->target, sizeof u->target, "%s", s.target);
    return 0;
}

/* A ROS 2 namespace: tokens of letters, digits and '_' separated by single '/', none starting
 * with a digit (ROS 2's topic name rules); "" is the root. */
static int parse_namespace(output_uri *u, const char *ns, size_t n, char *err, size_t errlen)
{
    while (n && ns[0] == '/') /* ros2:///robot is ros2://robot */
        ns++, n--;
    while (n && ns[n - 1] == '/')
        n--;
    if (n >= 200)
        return uri_fail(err, errlen, "'%s': the namespace is longer than 199 characters", u->text);
    for (size_t i = 0; i < n; i++) {
        int start = i == 0 || ns[i - 1] == '/';
        if (ns[i] == '/' ? start : !(isalnum((unsigned char)ns[i]) || ns[i] == '_') ||
                                       (start && isdigit((unsigned char)ns[i])))
            return uri_fail(err, errlen, "'%s': '%.*s' is not a ROS 2 namespace (names of letters, "
                            "digits and _, not starting with a digit, separated by single /; e.g. "
                            "ros2://robot/stereo)", u->text, (int)n, ns);
    }
    memcpy(u->target, ns, n);
    u->target[n] = '\0';
    return 0;
}

/* HOST:PORT (rtp) or [HOST]:PORT/PATH (rtsp; the host, '@' or empty, is where the server
 * listens: every interface). */
static int parse_host_port(output_uri *u, const char *s, size_t n, char *err, size_t errlen)
{
    const char *example = u->kind == OUT_RTP ? "rtp://192.168.1.20:5000" : "rtsp://@:8554/depth";
    const char *slash = memchr(s, '/', n);
    size_t hp = slash ? (size_t)(slash - s) : n;
    const char *colon = NULL;
    for (size_t i = 0; i < hp; i++)
        if (s[i] == ':')
            colon = s + i;
    if (!colon || uri_parse_uint(colon + 1, hp - (size_t)(colon - s) - 1, 1, 65535, &u->port) != 0)
        return uri_fail(err, errlen, "'%s': expected %s:PORT with a port in 1..65535 (e.g. %s)",
                        u->text, u->kind == OUT_RTP ? "HOST" : "@", example);
    size_t hlen = (size_t)(colon - s);
    for (size_t i = 0; i < hlen; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(".-_@", s[i]))
            return uri_fail(err, errlen, "'%s': '%.*s' is not a host name or address", u->text,
                            (int)hlen, s);
    if (u->kind == OUT_RTP) {
        if (hlen == 0 || slash)
            return uri_fail(err, errlen, "'%s': expected rtp://HOST:PORT (e.g. %s)", u->text,
                            example);
        memcpy(u->target, s, hlen);
        u->target[hlen] = '\0';
        return 0;
    }
    if (hlen > 1 || (hlen == 1 && s[0] != '@'))
        return uri_fail(err, errlen, "'%s': the server listens on every interface: write "
                        "rtsp://@:PORT/PATH (e.g. %s)", u->text, example);
    size_t plen = n - hp;
    if (plen < 2)
        return uri_fail(err, errlen, "'%s': no mount path (e.g. %s)", u->text, example);
    for (size_t i = 1; i < plen; i++)
        if (!isalnum((unsigned char)slash[i]) && !strchr("_-./", slash[i]))
            return uri_fail(err, errlen, "'%s': the path '%.*s': letters, digits and _ - . / only",
                            u->text, (int)plen, slash);
    memcpy(u->target, slash, plen);
    u->target[plen] = '\0';
    return 0;
}

int output_uri_parse(const char *text, output_uri *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->frame_id, sizeof out->frame_id, "%s", DEFAULT_FRAME_ID);
    out->bitrate_kbps = DEFAULT_BITRATE_KBPS;
    if (!text || !*text)
        return uri_fail(err, errlen, "empty; expected a URI such as display://, "
                        "file://out/%%06d.pfm, ros2://robot, rtp://HOST:PORT or "
                        "rtsp://@:8554/depth");
    size_t len = strlen(text);
    if (len >= OUTPUT_URI_MAX)
        return uri_fail(err, errlen, "'%.40s...': %zu characters; at most %d fit", text, len,
                        OUTPUT_URI_MAX - 1);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return uri_fail(err, errlen, "the URI contains a control character (byte %zu)", i + 1);
    memcpy(out->text, text, len + 1);
    const char *sep = strstr(text, "://");
    if (!sep)
        return uri_fail(err, errlen, "'%s': not a URI (display://, file://DIR/%%06d.pfm, "
                        "ros2://NAMESPACE, rtp://HOST:PORT, rtsp://@:PORT/PATH or "
                        "gst://appsrc ! ...)", text);
    size_t slen = (size_t)(sep - text);
    int kind = -1;
    for (size_t k = 0; k < NELEM(kind_names); k++)
        if (strlen(kind_names[k]) == slen && strncasecmp(text, kind_names[k], slen) == 0)
            kind = (int)k;
    if (kind < 0)
        return uri_fail(err, errlen, "'%s': unknown output scheme '%.*s' (display, file, ros2, "
                        "rtp, "
                        "rtsp, gst)", text, (int)slen, text);
    out->kind = (output_kind)kind;
    const char *rest = sep + 3;
    if (out->kind == OUT_GST) { /* the description as it is: '?' and '&' are GStreamer's */
        while (*rest == ' ')
            rest++;
        if (strncmp(rest, "appsrc", 6) != 0 || (rest[6] && rest[6] != ' ' && rest[6] != '!'))
            return uri_fail(err, errlen, "'%s': a gst:// output starts with the appsrc the app "
                            "feeds "
                            "(gst://appsrc ! videoconvert ! ...)", text);
        if (!strchr(rest, '!'))
            return uri_fail(err, errlen, "'%s': nothing after the appsrc (gst://appsrc ! "
                            "videoconvert ! x264enc ! ...)", text);
        snprintf(out->target, sizeof out->target, "%s", rest);
        return 0;
    }
    const char *q = strchr(rest, '?');
    size_t n = q ? (size_t)(q - rest) : strlen(rest);
    int rc = 0;
    switch (out->kind) {
    case OUT_DISPLAY:
        if (n)
            return uri_fail(err, errlen, "'%s': display:// names the window and takes nothing "
                            "after "
                            "it", text);
        break;
    case OUT_FILE:
        rc = parse_file(out, rest, n, err, errlen);
        break;
    case OUT_ROS2:
        rc = parse_namespace(out, rest, n, err, errlen);
        break;
    case OUT_RTP:
    case OUT_RTSP:
        rc = parse_host_port(out, rest, n, err, errlen);
        break;
    case OUT_GST:
        break;
    }
    if (rc == 0 && q)
        rc = parse_query(out, q + 1, err, errlen);
    if (rc == 0 && out->kind == OUT_FILE && out->depth && out->format == OUT_FILE_PLY)
        rc = uri_fail(err, errlen, "'%s': a .ply is always the point cloud; depth=1 is for .pfm "
                      "and .png", text);
    return rc;
}
