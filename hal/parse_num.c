/* SPDX-License-Identifier: Apache-2.0 */
/* parse_num.c — see parse_num.h. */
#include "parse_num.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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
