/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_types.c — the names of stereo_types.h's enums as text, the baseline list's text form,
 * and the small rules on its types: each path's penalties, a pixel format's bytes, the way a
 * call fails. */
#include "stereo_types.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------------------- */

const char *stereo_status_str(stereo_status st)
{
    switch (st) {
    case STEREO_OK: return "ok";
    case STEREO_ERR_PARAM: return "invalid parameter";
    case STEREO_ERR_NOMEM: return "out of memory";
    case STEREO_ERR_NODEV: return "backend not available";
    case STEREO_ERR_CUDA: return "CUDA error";
    case STEREO_ERR_THREAD: return "thread error";
    }
    return "unknown error";
}

static const char *const cost_names[] = {"rank", "census", "ad", "bt", "mi", "adcensus"};
static const char *const backend_names[] = {"auto", "cpu", "cuda"};
static const char *const method_names[] = {"sgm", "bm"};
#define NCOSTS ((int)(sizeof cost_names / sizeof *cost_names))
_Static_assert(NCOSTS == STEREO_COST_ADCENSUS + 1,
               "one name per stereo_cost (stereo_params_check counts on it)");

static int name_lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *stereo_cost_to_str(stereo_cost c)
{
    return (unsigned)c < (unsigned)NCOSTS ? cost_names[c] : "?";
}
const char *stereo_method_to_str(stereo_method m)
{
    return (unsigned)m < 2 ? method_names[m] : "?";
}
/* cost_names for messages: a constant (no lazily built global); keep the two together */
const char *stereo_cost_names(void) { return "rank, census, ad, bt, mi, adcensus"; }
const char *stereo_method_names(void) { return "sgm, bm"; }

int stereo_method_from_str(const char *s, stereo_method *out)
{
    int i = name_lookup(method_names, 2, s);
    if (i < 0)
        return -1;
    *out = (stereo_method)i;
    return 0;
}
const char *stereo_backend_to_str(stereo_backend b)
{
    return (unsigned)b < 3 ? backend_names[b] : "?";
}

int stereo_cost_from_str(const char *s, stereo_cost *out)
{
    int i = name_lookup(cost_names, NCOSTS, s);
    if (i < 0)
        return -1;
    *out = (stereo_cost)i;
    return 0;
}

int stereo_backend_from_str(const char *s, stereo_backend *out)
{
    int i = name_lookup(backend_names, 3, s);
    if (i < 0)
        return -1;
    *out = (stereo_backend)i;
    return 0;
}

/* ---- rules on the types ------------------------------------------------------------------ */

void stereo_path_penalties(const stereo_params *p, int dir, int *p1, int *p2)
{
    *p1 = p->p1_path[dir] ? p->p1_path[dir] : p->p1;
    *p2 = p->p2_path[dir] ? p->p2_path[dir] : p->p2;
}

int stereo_pixfmt_bytes(stereo_pixfmt f)
{
    return f == STEREO_PIX_RGB24 ? 3 : f == STEREO_PIX_YUYV ? 2 : 1;
}

stereo_status stereo_fail(char *err, size_t errlen, stereo_status st, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* ---- the baseline list ------------------------------------------------------------------ */

int stereo_baselines_from_str(const char *s, int baseline[STEREO_MAX_VIEWS], int *n, char *why,
                              size_t whylen)
{
    memset(baseline, 0, sizeof(int) * STEREO_MAX_VIEWS);
    *n = 0;
    const char *p = s;
    for (int i = 1;; i++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (i >= STEREO_MAX_VIEWS) {
            snprintf(why, whylen, "more than %d values (at most %d other views)",
                     STEREO_MAX_VIEWS - 1, STEREO_MAX_VIEWS - 1);
            return -1;
        }
        if (len == 0 || len >= sizeof item) {
            snprintf(why, whylen, "value %d ('%.*s'): not a number", i, (int)(len < 31 ? len : 31), p);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = 0;
        char *end;
        errno = 0;
        double b = strtod(item, &end);
        if (end == item || *end || errno || !isfinite(b)) {
            snprintf(why, whylen, "value %d ('%s'): not a number", i, item);
            return -1;
        }
        if (fabs(b) > STEREO_BASELINE_MAX) {
            snprintf(why, whylen, "value %d ('%s'): outside -%d..%d", i, item,
                     STEREO_BASELINE_MAX, STEREO_BASELINE_MAX);
            return -1;
        }
        double q = b * STEREO_BASELINE_SCALE;
        if (q != floor(q)) {
            snprintf(why, whylen, "value %d ('%s'): not a whole number of 1/%d (the stage holds "
                     "ratios exactly in 16ths: e.g. 0.5, 1.25, -1.5)", i, item,
                     STEREO_BASELINE_SCALE);
            return -1;
        }
        baseline[i] = (int)q;
        *n = i;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

const char *stereo_baseline_str(int baseline, char *buf, size_t len)
{
    snprintf(buf, len, "%g", baseline / (double)STEREO_BASELINE_SCALE);
    return buf;
}

static const char *const combine_names[] = {"sides", "sum"}; /* stereo_combine order */

const char *stereo_combine_to_str(stereo_combine c)
{
    return (unsigned)c < 2 ? combine_names[c] : "?";
}

int stereo_combine_from_str(const char *s, stereo_combine *out)
{
    for (int i = 0; i < 2; i++)
        if (!strcmp(s, combine_names[i])) {
            *out = (stereo_combine)i;
            return 0;
        }
    return -1;
}
