/* SPDX-License-Identifier: Apache-2.0 */
/* seq_pattern.c — see seq_pattern.h. */
#include "seq_pattern.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int seq_check_pattern(const char *what, const char *v, char *err, size_t errlen)
{
    int conversions = 0;
    for (const char *q = v; *q; q++) {
        if (*q != '%')
            continue;
        const char *start = q++;
        if (*q == '%')
            continue;
        while (*q && strchr("0-+ ", *q))
            q++;
        int digits = 0;
        while (isdigit((unsigned char)*q) && digits <= 2)
            q++, digits++;
        if (!*q) {
            snprintf(err, errlen, "%s: '%s' ends inside a '%%' conversion (a literal %% is "
                     "written %%%%)", what, v);
            return -1;
        }
        if (digits > 2 || (*q != 'd' && *q != 'i' && *q != 'u')) {
            snprintf(err, errlen, "%s: '%s': '%.*s' is not a frame-number conversion such as "
                     "%%04d (a literal %% is written %%%%)", what, v, (int)(q - start) + 1,
                     start);
            return -1;
        }
        conversions++;
    }
    if (conversions != 1) {
        snprintf(err, errlen,
                 "%s: '%s' has %d conversions; it needs one, for the frame number (e.g. "
                 "left_%%04d.png)", what, v, conversions);
        return -1;
    }
    return 0;
}

int seq_is_pattern(const char *path) { return strchr(path, '%') != NULL; }

int seq_frame_path(const char *pattern, long k, char *buf, size_t len)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    int n = snprintf(buf, len, pattern, (int)k);
#pragma GCC diagnostic pop
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
