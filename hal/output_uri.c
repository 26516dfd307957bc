/* SPDX-License-Identifier: Apache-2.0 */
/* output_uri.c — the live app's output URIs (output_uri.h). file:// paths are decoded as
 * source_uri.c decodes an image sequence's (the same rules: %XX, %%, one frame number). */
#include "output_uri.h"

#include "source_uri.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define DEFAULT_FRAME_ID "stereo_optical_frame"
#define DEFAULT_BITRATE_KBPS 4000

static const char *const kind_names[] = {"display", "file", "ros2", "rtp", "rtsp", "gst", "http"};

const char *output_uri_kind_name(output_kind k)
{
    return (unsigned)k < NELEM(kind_names) ? kind_names[k] : "?";
}

int output_uri_needs_camera(const output_uri *u)
{
    if (u->kind == OUT_ROS2) /* what the URI asks for by name: not published without it */
        return u->points || u->depth_given;
    return u->kind == OUT_FILE && (u->depth || u->format == OUT_FILE_PLY);
}

int output_uri_needs_confidence(const output_uri *u)
{
    return u->kind == OUT_ROS2 && u->min_confidence > 0;
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
            u->depth_given = 1;
            return 0;
        }
        if (is_word(k, klen, "min_confidence")) {
            if (uri_parse_uint(v, vlen, 0, OUTPUT_CONFIDENCE_MAX, &u->min_confidence) != 0)
                return uri_fail(err, errlen, "'%s': min_confidence = '%.*s' is not a confidence "
                                "threshold in 0..%d (pixels below it are published as invalid; "
                                "0: none)", u->text, (int)vlen, v, OUTPUT_CONFIDENCE_MAX);
            return 0;
        }
    }
    if ((u->kind == OUT_RTP || u->kind == OUT_RTSP) && is_word(k, klen, "bitrate")) {
        if (uri_parse_uint(v, vlen, 100, 100000, &u->bitrate_kbps) != 0)
            return uri_fail(err, errlen, "'%s': bitrate = '%.*s' is not kbit/s in 100..100000",
                            u->text, (int)vlen, v);
        return 0;
    }
    if (u->kind == OUT_HTTP && is_word(k, klen, "token")) {
        /* letters, digits and - . _ ~: the same in a URL unescaped, so the page's links can
         * carry it as it is */
        if (vlen == 0 || vlen >= sizeof u->token)
            return uri_fail(err, errlen, "'%s': token: 1..%zu characters", u->text,
                            sizeof u->token - 1);
        for (size_t i = 0; i < vlen; i++)
            if (!isalnum((unsigned char)v[i]) && !strchr("-._~", v[i]))
                return uri_fail(err, errlen, "'%s': token: letters, digits and - . _ ~ only",
                                u->text);
        memcpy(u->token, v, vlen);
        u->token[vlen] = '\0';
        return 0;
    }
    if (u->kind == OUT_HTTP && (is_word(k, klen, "cert") || is_word(k, klen, "key"))) {
        char *into = k[0] == 'c' ? u->cert : u->key;
        size_t cap = k[0] == 'c' ? sizeof u->cert : sizeof u->key;
        if (!u->tls)
            return uri_fail(err, errlen, "'%s': %.*s= is for https:// (TLS), not http://",
                            u->text, (int)klen, k);
        size_t w = 0;
        for (size_t i = 0; i < vlen; i++) { /* %XX decoded, as a file:// path is */
            int c = (unsigned char)v[i];
            if (c == '%' && i + 2 < vlen &&
                isxdigit((unsigned char)v[i + 1]) && isxdigit((unsigned char)v[i + 2])) {
                char hex[3] = {v[i + 1], v[i + 2], 0};
                c = (int)strtol(hex, NULL, 16);
                i += 2;
            }
            if (c == 0 || w + 1 >= cap)
                return uri_fail(err, errlen, "'%s': %.*s: a file name of 1..%zu bytes", u->text,
                                (int)klen, k, cap - 1);
            into[w++] = (char)c;
        }
        if (w == 0)
            return uri_fail(err, errlen, "'%s': %.*s= names no file (e.g. %.*s=/etc/stereo/%s.pem)",
                            u->text, (int)klen, k, (int)klen, k, k[0] == 'c' ? "cert" : "key");
        into[w] = '\0';
        return 0;
    }
    static const char *const keys[] = {"", "depth",
                                       "domain, frame_id, qos, points, depth, min_confidence",
                                       "bitrate", "bitrate", "", "token; https: cert, key"};
    return uri_fail(err, errlen, "'%s': unknown option '%.*s' of "
                    "%s://%s%s%s", u->text, (int)klen, k,
                    u->tls ? "https" : kind_names[u->kind],
                    keys[u->kind][0] ? " (options: " : " (it takes none",
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
 * with a digit (ROS 2's topic name rules); "" is the root. One leading '/' is allowed (ROS 2's
 * absolute "/robot" is the same namespace); a trailing one is not, as ROS 2 refuses it: it
 * would name an empty token. */
static int parse_namespace(output_uri *u, const char *ns, size_t n, char *err, size_t errlen)
{
    const char *given = ns;
    size_t gn = n;
    if (n && ns[0] == '/') /* ros2:///robot is ros2://robot */
        ns++, n--;
    if (n >= 200)
        return uri_fail(err, errlen, "'%s': the namespace is longer than 199 characters", u->text);
    for (size_t i = 0; i < n; i++) {
        int start = i == 0 || ns[i - 1] == '/';
        if (ns[i] == '/' ? start || i + 1 == n
                         : !(isalnum((unsigned char)ns[i]) || ns[i] == '_') ||
                               (start && isdigit((unsigned char)ns[i])))
            return uri_fail(err, errlen, "'%s': '%.*s' is not a ROS 2 namespace (names of letters, "
                            "digits and _, not starting with a digit, separated by single /, none "
                            "empty, no / at the end; e.g. ros2://robot/stereo)", u->text,
                            (int)gn, given);
    }
    memcpy(u->target, ns, n);
    u->target[n] = '\0';
    return 0;
}

/* An IPv6 literal (without its brackets): hex digits, ':' and '.' (an IPv4 tail), then an
 * optional %ZONE (the interface of a link-local address). Only the characters: the resolver
 * (stereo-live's check before the run) says whether it is an address. */
static int ipv6_chars(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (isxdigit((unsigned char)s[i]) || s[i] == ':' || s[i] == '.'))
        i++;
    if (i < 2 || !memchr(s, ':', i))
        return 0;
    if (i < n && s[i] == '%') {
        if (++i == n)
            return 0;
        while (i < n && (isalnum((unsigned char)s[i]) || strchr("_-.", s[i])))
            i++;
    }
    return i == n;
}

/* HOST:PORT or [IPV6]:PORT (rtp) or [HOST]:PORT/PATH (rtsp; the host, '@' or empty, is where
 * the server listens: every interface). */
static int parse_host_port(output_uri *u, const char *s, size_t n, char *err, size_t errlen)
{
    const char *example = u->kind == OUT_RTP ? "rtp://192.168.1.20:5000" : "rtsp://@:8554/depth";
    const char *host = s, *after; /* the host's first byte, the byte after it */
    size_t hlen;
    if (n && s[0] == '[') { /* [IPV6] */
        const char *close = memchr(s, ']', n);
        if (!close)
            return uri_fail(err, errlen, "'%s': no ']' after the IPv6 address (e.g. "
                            "rtp://[::1]:5000)", u->text);
        host = s + 1;
        hlen = (size_t)(close - host);
        if (!ipv6_chars(host, hlen))
            return uri_fail(err, errlen, "'%s': '[%.*s]' is not an IPv6 address (hex digits and "
                            ":, e.g. rtp://[::1]:5000)", u->text, (int)hlen, host);
        after = close + 1;
    } else {
        after = s;
        while (after < s + n && *after != ':' && *after != '/')
            after++;
        hlen = (size_t)(after - s);
    }
    size_t rest = n - (size_t)(after - s);
    const char *slash = memchr(after, '/', rest);
    size_t plen = slash ? (size_t)(s + n - slash) : 0;
    size_t portlen = rest - plen;
    size_t alen = hlen + portlen; /* an unbracketed IPv6 address: up to the last ':' */
    while (alen && s[alen - 1] != ':')
        alen--;
    if (host == s && alen > 1 && ipv6_chars(s, alen - 1))
        return uri_fail(err, errlen, "'%s': an IPv6 address goes in brackets: %s://[%.*s]:PORT "
                        "(e.g. rtp://[::1]:5000)", u->text, output_uri_kind_name(u->kind),
                        (int)alen - 1, s);
    if (!portlen || *after != ':' ||
        uri_parse_uint(after + 1, portlen - 1, 1, 65535, &u->port) != 0)
        return uri_fail(err, errlen, "'%s': expected %s:PORT with a port in 1..65535 (e.g. %s)",
                        u->text, u->kind == OUT_RTP ? "HOST" : "@", example);
    if (host == s)
        for (size_t i = 0; i < hlen; i++)
            if (!isalnum((unsigned char)s[i]) && !strchr(".-_@", s[i]))
                return uri_fail(err, errlen, "'%s': '%.*s' is not a host name or address",
                                u->text, (int)hlen, s);
    if (u->kind == OUT_RTP) {
        if (hlen == 0 || slash)
            return uri_fail(err, errlen, "'%s': expected rtp://HOST:PORT (e.g. %s)", u->text,
                            example);
        memcpy(u->target, host, hlen);
        u->target[hlen] = '\0';
        return 0;
    }
    if (host != s || hlen > 1 || (hlen == 1 && s[0] != '@'))
        return uri_fail(err, errlen, "'%s': the server listens on every interface: write "
                        "rtsp://@:PORT/PATH (e.g. %s)", u->text, example);
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

/* http://@:PORT/ (every interface, IPv4 and IPv6), http://ADDRESS:PORT/ (an IPv4 address, or
 * localhost: 127.0.0.1) or http://[IPV6]:PORT/ ([::1], [::], [fe80::2%eth0]); https:// the same
 * with TLS. Port 0 is any free one. Nothing after the '/': the page's own paths are the
 * server's. The address is checked here to be one (inet_pton); whether it is this machine's,
 * binding it says when the output opens. */
static int parse_http(output_uri *u, const char *s, size_t n, char *err, size_t errlen)
{
    const char *example = u->tls ? "https://@:8443/?cert=CERT.pem&key=KEY.pem"
                                 : "http://@:8080/, http://127.0.0.1:8080/ or http://[::1]:8080/";
    const char *scheme = u->tls ? "https" : "http";
    size_t hp = n;
    const char *slash = memchr(s, '/', n);
    if (slash) {
        hp = (size_t)(slash - s);
        if (n - hp != 1)
            return uri_fail(err, errlen, "'%s': nothing may follow the '/' but ?token=... (e.g. "
                            "%s)", u->text, example);
    }
    const char *host = s, *colon;
    size_t hlen;
    int v6 = 0;
    if (hp && s[0] == '[') { /* [IPV6] */
        const char *close = memchr(s, ']', hp);
        if (!close)
            return uri_fail(err, errlen, "'%s': no ']' after the IPv6 address (e.g. "
                            "%s://[::1]:8080/)", u->text, scheme);
        host = s + 1;
        hlen = (size_t)(close - host);
        colon = close + 1 < s + hp && close[1] == ':' ? close + 1 : NULL;
        v6 = 1;
    } else {
        colon = memchr(s, ':', hp);
        const char *last = colon;
        while (last && memchr(last + 1, ':', hp - (size_t)(last + 1 - s)))
            last = memchr(last + 1, ':', hp - (size_t)(last + 1 - s));
        if (last && last != colon && ipv6_chars(s, (size_t)(last - s)))
            return uri_fail(err, errlen, "'%s': an IPv6 address goes in brackets: "
                            "%s://[%.*s]:PORT/ (e.g. %s://[::1]:8080/)", u->text, scheme,
                            (int)(last - s), s, scheme);
        hlen = colon ? (size_t)(colon - s) : 0;
    }
    if (!colon || uri_parse_uint(colon + 1, hp - (size_t)(colon - s) - 1, 0, 65535, &u->port))
        return uri_fail(err, errlen, "'%s': expected %s://@:PORT/ with a port in 0..65535 (0: "
                        "any free one; e.g. %s)", u->text, scheme, example);
    unsigned a[4];
    char tail;
    char text[64] = "";
    if (hlen < sizeof text) {
        memcpy(text, host, hlen);
        text[hlen] = '\0';
    }
    if (v6) {
        /* the address, then an optional %ZONE (the interface of a link-local address) */
        char *zone = strchr(text, '%');
        struct in6_addr a6;
        int zone_ok = 1;
        if (zone) {
            zone_ok = zone[1] != '\0' && strlen(zone + 1) < 16;
            for (const char *c = zone + 1; *c; c++)
                zone_ok &= isalnum((unsigned char)*c) || strchr("_-.", *c) != NULL;
            *zone = '\0';
        }
        if (hlen == 0 || hlen >= sizeof text || !zone_ok || inet_pton(AF_INET6, text, &a6) != 1)
            return uri_fail(err, errlen, "'%s': '[%.*s]' is not an IPv6 address (e.g. [::1]: "
                            "this machine only, [::]: every interface)", u->text, (int)hlen,
                            host);
        memcpy(u->target, host, hlen); /* the zone kept: the listener resolves it */
        u->target[hlen] = '\0';
    } else if (hlen == 1 && s[0] == '@') {
        u->target[0] = '\0';
    } else if (is_word(s, hlen, "localhost")) {
        snprintf(u->target, sizeof u->target, "127.0.0.1");
    } else if (hlen && hlen < sizeof text && strspn(text, "0123456789.") == hlen &&
               sscanf(text, "%u.%u.%u.%u%c", &a[0], &a[1], &a[2], &a[3], &tail) == 4 &&
               a[0] < 256 && a[1] < 256 && a[2] < 256 && a[3] < 256) {
        snprintf(u->target, sizeof u->target, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
    } else {
        return uri_fail(err, errlen, "'%s': '%.*s' is not where to listen: @ (every interface, "
                        "IPv4 and IPv6), an IPv4 address of this machine, localhost or an IPv6 "
                        "address in brackets (e.g. %s)", u->text, (int)hlen, s, example);
    }
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
    if (kind < 0 && slen == 5 && strncasecmp(text, "https", 5) == 0) {
        kind = OUT_HTTP; /* the web page over TLS */
        out->tls = 1;
    }
    if (kind < 0)
        return uri_fail(err, errlen, "'%s': unknown output scheme '%.*s' (display, file, ros2, "
                        "rtp, "
                        "rtsp, gst, http, https)", text, (int)slen, text);
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
    case OUT_HTTP:
        rc = parse_http(out, rest, n, err, errlen);
        break;
    }
    if (rc == 0 && q)
        rc = parse_query(out, q + 1, err, errlen);
    if (rc == 0 && out->tls && (!out->cert[0] || !out->key[0]))
        rc = uri_fail(err, errlen, "'%s': https:// needs the certificate and its key, PEM files: "
                      "?cert=FILE&key=FILE (e.g. https://@:8443/?cert=cert.pem&key=key.pem)",
                      text);
    if (rc == 0 && out->kind == OUT_FILE && out->depth && out->format == OUT_FILE_PLY)
        rc = uri_fail(err, errlen, "'%s': a .ply is always the point cloud; depth=1 is for .pfm "
                      "and .png", text);
    return rc;
}

/* ---- the files of a gst:// description -------------------------------------------------------
 * The description is read as GStreamer's own lexer reads it (gst/parse/parse.l) as far as the
 * locations go: an assignment is NAME = STRING (NAME of letters, digits and _ - % :, spaces
 * around '=' allowed), where STRING is the longest of an unquoted run (non-space characters, a
 * backslash taking the next one whatever it is) and a quoted string ('"' or '\'', a quote inside
 * escaped by a backslash); "! CAPS !" is one link; a file:// URI after a link is an element of
 * its own. The value then goes through what GStreamer does to it before the property is set:
 * the outer double quotes removed, backslashes dropped outside inner quotes, and a value that
 * still starts and ends with '"' unwrapped as a GStreamer string (octal escapes). What this
 * reads is compared with what GStreamer built when the output opens (app/outputs/output_gst.c),
 * so a case read differently is refused there rather than written unchecked. */

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '%' || c == ':';
}

/* The length of the longest STRING at s (0: none). */
static size_t gst_string_len(const char *s)
{
    size_t run = 0;
    while (s[run]) {
        if (s[run] == '\\' && s[run + 1] && s[run + 1] != '\n')
            run += 2;
        else if (isspace((unsigned char)s[run]))
            break;
        else
            run++;
    }
    size_t quoted = 0;
    char q = s[0];
    if (q == '"' || q == '\'') {
        /* the lexer's rule "Q" ([^Q] | \Q)* "Q": a backslash may stand alone or escape a quote,
         * so a closing quote may be any reachable one; the longest match wins */
        unsigned char reach[OUTPUT_URI_MAX + 2] = {0};
        size_t n = strlen(s);
        if (n > OUTPUT_URI_MAX)
            n = OUTPUT_URI_MAX;
        reach[1] = 1;
        for (size_t i = 1; i < n; i++) {
            if (!reach[i])
                continue;
            if (s[i] == q) {
                quoted = i + 1;
                continue;
            }
            reach[i + 1] = 1;
            if (s[i] == '\\' && s[i + 1] == q)
                reach[i + 2] = 1;
        }
    }
    return quoted > run ? quoted : run;
}

/* gst_string_unwrap: "..." with \ooo and \X escapes; only letters, digits and _ - + / : . may
 * stand unescaped. 0, or -1 when GStreamer would refuse the value. */
static int gst_unwrap(char *s)
{
    char *r = s + 1, *w = s;
    while (*r && *r != '"') {
        if (isalnum((unsigned char)*r) || strchr("_-+/:.", *r)) {
            *w++ = *r++;
        } else if (*r == '\\') {
            r++;
            if (*r >= '0' && *r <= '3') {
                if (r[1] < '0' || r[1] > '7' || r[2] < '0' || r[2] > '7')
                    return -1;
                *w++ = (char)(((r[0] - '0') << 6) + ((r[1] - '0') << 3) + (r[2] - '0'));
                r += 3;
            } else if (*r) {
                *w++ = *r++;
            } else {
                return -1;
            }
        } else {
            return -1;
        }
    }
    if (*r != '"' || r[1])
        return -1;
    *w = '\0';
    return 0;
}

/* A STRING of n bytes into the value GStreamer sets: 0, or -1 when it sets none ("NULL", an
 * unwrap it refuses) or the value does not fit. */
static int gst_value(const char *v, size_t n, char *out, size_t len)
{
    if (n >= len)
        return -1;
    char buf[OUTPUT_URI_MAX];
    memcpy(buf, v, n);
    buf[n] = '\0';
    char *p = buf;
    if (p[0] == '"' && p[strlen(p) - 1] == '"') { /* gst_parse_split_assignment */
        p++;
        if (*p)
            p[strlen(p) - 1] = '\0';
    }
    /* gst_parse_unescape: a backslash outside quotes takes the next character as it is */
    char *w = out;
    int in_quotes = 0;
    for (const char *r = p; *r; r++) {
        if (*r == '\\' && !in_quotes) {
            if (!*++r)
                break;
        } else if (*r == '"' && (!in_quotes || r[-1] != '\\')) {
            in_quotes = !in_quotes;
        }
        *w++ = *r;
    }
    *w = '\0';
    if (strcmp(out, "NULL") == 0) /* gst_value_deserialize_string */
        return -1;
    size_t m = strlen(out);
    if (m >= 2 && out[0] == '"' && out[m - 1] == '"')
        return gst_unwrap(out);
    return 0;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* file://[localhost]/PATH with %XX escapes -> PATH; 0, or -1. */
static int file_uri_path(const char *uri, char *out, size_t len)
{
    const char *p = uri + 7;
    if (strncmp(p, "localhost/", 10) == 0)
        p += 9;
    if (*p != '/')
        return -1;
    size_t w = 0;
    for (; *p; p++) {
        int c = (unsigned char)*p, h, l;
        if (c == '%' && (h = hex_digit(p[1])) >= 0 && (l = hex_digit(p[2])) >= 0) {
            c = h * 16 + l;
            p += 2;
        }
        if (w + 1 >= len || c == 0)
            return -1;
        out[w++] = (char)c;
    }
    out[w] = '\0';
    return 0;
}

static const char *const file_sinks[] = {"filesink", "multifilesink", "splitmuxsink"};

static int add_gst_file(output_gst_file *files, int n, int max, const char *element,
                        const char *location, int replace, char *err, size_t errlen)
{
    if (replace) /* a second location of the same element: the last one counts */
        n--;
    else if (n >= max)
        return uri_fail(err, errlen, "more than %d files written by one gst:// pipeline", max);
    output_gst_file *f = &files[n];
    snprintf(f->element, sizeof f->element, "%s", element);
    snprintf(f->location, sizeof f->location, "%s", location);
    f->is_pattern = strcmp(element, "filesink") != 0 && strchr(location, '%') != NULL;
    return n + 1;
}

int output_gst_files(const char *desc, output_gst_file *files, int max, char *err,
                     size_t errlen)
{
    int n = 0;
    const char *cur = NULL;  /* the element assignments go to: one of file_sinks, else NULL */
    int cur_has = 0;         /* it has a location already */
    int after_link = 0;
    const char *s = desc;
    while (*s) {
        if (isspace((unsigned char)*s)) {
            s++;
            continue;
        }
        if (*s == '#') /* a comment to the end of the line (newer GStreamer) */
            break;
        if (*s == '!' || *s == ':') { /* a link, with a caps filter "! CAPS !" */
            const char *p = s + 1;
            while (isspace((unsigned char)*p))
                p++;
            size_t a = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
            if (a && p[a] == '/' && strspn(p + a + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
                                                       "RSTUVWXYZ0123456789-")) {
                while (*p && *p != '!')
                    p += p[0] == '\\' && p[1] ? 2 : 1;
                s = *p ? p + 1 : p;
            } else {
                s++;
            }
            cur = NULL;
            after_link = 1;
            continue;
        }
        if (isalnum((unsigned char)*s) || *s == '_') {
            const char *p = s;
            while (ident_char(*p))
                p++;
            size_t ilen = (size_t)(p - s);
            /* PROTOCOL://STRING: a URI element (the longest match: before NAME) */
            size_t pl = 0;
            if (isalpha((unsigned char)*s)) {
                pl = 1;
                while (isalnum((unsigned char)s[pl]) || (s[pl] && strchr("+-.", s[pl])))
                    pl++;
            }
            if (pl && strncmp(s + pl, "://", 3) == 0) {
                size_t ul = pl + 3 + gst_string_len(s + pl + 3);
                char uri[OUTPUT_URI_MAX], path[OUTPUT_URI_MAX];
                if (after_link && pl == 4 && strncasecmp(s, "file", 4) == 0 &&
                    gst_value(s, ul, uri, sizeof uri) == 0 &&
                    file_uri_path(uri, path, sizeof path) == 0 &&
                    (n = add_gst_file(files, n, max, "filesink", path, 0, err, errlen)) < 0)
                    return -1;
                s += ul;
                cur = NULL;
                after_link = 0;
                continue;
            }
            const char *q = p;
            while (isspace((unsigned char)*q))
                q++;
            if (*q == '=') { /* NAME = STRING */
                q++;
                while (isspace((unsigned char)*q))
                    q++;
                size_t vlen = gst_string_len(q);
                if (vlen) {
                    char value[OUTPUT_URI_MAX];
                    if (cur && ilen == 8 && strncmp(s, "location", 8) == 0 &&
                        gst_value(q, vlen, value, sizeof value) == 0 && value[0]) {
                        if ((n = add_gst_file(files, n, max, cur, value, cur_has, err,
                                              errlen)) < 0)
                            return -1;
                        cur_has = 1;
                    }
                    s = q + vlen;
                    after_link = 0;
                    continue;
                }
            }
            if (*q == '.') { /* NAME. or NAME.PAD: a reference, or NAME.( a bin */
                s = q + 1;
                while (ident_char(*s))
                    s++;
                cur = NULL;
                after_link = 0;
                continue;
            }
            cur = NULL; /* NAME: an element */
            cur_has = 0;
            for (size_t k = 0; k < NELEM(file_sinks); k++)
                if (strlen(file_sinks[k]) == ilen && strncmp(s, file_sinks[k], ilen) == 0)
                    cur = file_sinks[k];
            s = p;
            after_link = 0;
            continue;
        }
        if (*s == '/' || *s == '.') { /* /PATH (a URI GStreamer refuses), .PAD */
            s += *s == '/' ? gst_string_len(s) : 1;
            while (*s == '.' || ident_char(*s))
                s++;
        } else {
            s++; /* ( ) { } , ; = and what GStreamer calls a syntax error */
        }
        cur = NULL;
        after_link = 0;
    }
    return n;
}
