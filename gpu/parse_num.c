/* SPDX-License-Identifier: Apache-2.0 */
/* parse_num.c — see parse_num.h. */
#include "parse_num.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int parse_long_arg(const char *opt, const char *text, long lo, long hi, long *out, char *err,
                   size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        snprintf(err, errlen, "%s: '%s' is not an integer in %ld..%ld", opt, text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int parse_int_arg(const char *opt, const char *text, int lo, int hi, int *out, char *err,
                  size_t errlen)
{
    long v;
    if (parse_long_arg(opt, text, lo, hi, &v, err, errlen))
        return -1;
    *out = (int)v;
    return 0;
}

int parse_int_list(const char *opt, const char *text, int lo, int hi, int *out, int max, int *n,
                   char *err, size_t errlen)
{
    int count = 0;
    const char *p = text;
    for (;;) {
        char item[32];
        size_t len = 0;
        while (p[len] && p[len] != ',')
            len++;
        if (count == max) {
            snprintf(err, errlen, "%s: '%s' has more than %d values", opt, text, max);
            return -1;
        }
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "%s: '%s' is not a comma-separated list of integers in %d..%d",
                     opt, text, lo, hi);
            return -1;
        }
        for (size_t i = 0; i < len; i++)
            item[i] = p[i];
        item[len] = 0;
        long v;
        char sub[160];
        if (parse_long_arg(opt, item, lo, hi, &v, sub, sizeof sub)) {
            snprintf(err, errlen, "%s: '%s' (in '%s') is not an integer in %d..%d", opt, item, text,
                     lo, hi);
            return -1;
        }
        out[count++] = (int)v;
        if (!p[len])
            break;
        p += len + 1;
    }
    *n = count;
    return 0;
}

int long_option_matches(const char *arg, const struct option *opts, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!arg || strncmp(arg, "--", 2) != 0)
        return 0;
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name), used = 0;
    int found = 0;
    for (const struct option *o = opts; o->name; o++) {
        if (n == 0 || strncmp(o->name, name, n) != 0)
            continue;
        if (strlen(o->name) == n) /* an exact name is never ambiguous */
            return 1;
        if (used < len) {
            int w = snprintf(buf + used, len - used, "%s--%s", found ? ", " : "", o->name);
            used += w > 0 ? (size_t)w : 0;
        }
        found++;
    }
    return found;
}
