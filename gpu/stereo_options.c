/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_options.c — the stage options by their command-line names (stereo_options.h). */
#include "stereo_options.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "band.h"
#include "parse_num.h"
#include "postfilter.h"

/* the order of stereo-match --help */
const stereo_option_info stereo_option_table[] = {
    {"disparities", 1}, {"min-disparity", 1}, {"cost", 1}, {"window", 1}, {"method", 1},
    {"block", 1}, {"paths", 1}, {"p1", 1}, {"p2", 1}, {"p2-adapt", 1}, {"path-weights", 1},
    {"uniqueness", 1}, {"no-subpixel", 0}, {"no-lr", 0}, {"lr-tolerance", 1}, {"no-median", 0},
    {"speckle-size", 1}, {"speckle-diff", 1}, {"fill", 0}, {"temporal", 0}, {"temporal-alpha", 1},
    {"temporal-delta", 1}, {"temporal-persist", 1}, {"backend", 1}, {"threads", 1}, {"sms", 1},
    {"band", 1}, {NULL, 0},
};

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int stereo_option_takes_value(const char *name)
{
    for (int i = 0; name && stereo_option_table[i].name; i++)
        if (!strcmp(name, stereo_option_table[i].name))
            return stereo_option_table[i].takes_value;
    return -1;
}

void stereo_options_init(stereo_options *o)
{
    memset(o, 0, sizeof *o);
    stereo_params_default(&o->p, 0, 0);
}

int stereo_option_set(stereo_options *o, const char *name, const char *v, char *err,
                      size_t errlen)
{
    int takes = stereo_option_takes_value(name);
    if (takes < 0)
        return fail(err, errlen, "unknown option '--%s'", name ? name : "(null)");
    if (takes && !v)
        return fail(err, errlen, "--%s: needs a value", name);
    if (!takes && v)
        return fail(err, errlen, "--%s takes no value", name);
    stereo_params *p = &o->p;
    char opt[32];
    snprintf(opt, sizeof opt, "--%s", name);
#define IS(s) (!strcmp(name, s))
#define INT(lo, hi, field) parse_int_arg(opt, v, lo, hi, field, err, errlen)
#define LIST(lo, hi, out, n) parse_int_list(opt, v, lo, hi, out, STEREO_MAX_PATHS, n, err, errlen)
    if (IS("disparities"))
        return INT(INT_MIN, INT_MAX, &p->num_disparities);
    if (IS("min-disparity"))
        return INT(0, 2047, &p->min_disparity);
    if (IS("cost"))
        return stereo_cost_from_str(v, &p->cost)
                   ? fail(err, errlen, "--cost: '%s' is not one of %s", v, stereo_cost_names()) : 0;
    if (IS("method"))
        return stereo_method_from_str(v, &p->method)
                   ? fail(err, errlen, "--method: '%s' is not one of %s", v, stereo_method_names())
                   : 0;
    if (IS("block"))
        return INT(STEREO_BLOCK_MIN, STEREO_BLOCK_MAX, &p->block);
    if (IS("path-weights"))
        return LIST(0, 255, o->weights, &o->nweights);
    if (IS("window"))
        return INT(3, 15, &p->rank_window);
    if (IS("paths"))
        return INT(4, 8, &p->paths);
    if (IS("p1")) {
        o->p1_set = 1;
        return LIST(1, 1022, o->p1_list, &o->np1);
    }
    if (IS("p2")) {
        o->p2_set = 1;
        return LIST(2, 1023, o->p2_list, &o->np2);
    }
    if (IS("p2-adapt"))
        return INT(0, 255, &p->p2_adapt);
    if (IS("uniqueness"))
        return INT(0, 99, &p->uniqueness);
    if (IS("no-subpixel")) {
        p->subpixel = 0;
        return 0;
    }
    if (IS("no-lr")) {
        p->lr_check = 0;
        return 0;
    }
    if (IS("lr-tolerance"))
        return INT(0, 255, &p->lr_tolerance);
    if (IS("no-median")) {
        p->median = 0;
        return 0;
    }
    /* stage 9, the post-filters (postfilter.h) */
    if (IS("speckle-size"))
        return INT(0, POSTFILTER_SPECKLE_MAX, &p->post.speckle_size);
    if (IS("speckle-diff"))
        return INT(0, POSTFILTER_DIFF_MAX, &p->post.speckle_diff);
    if (IS("fill") || IS("temporal")) {
        *(IS("fill") ? &p->post.fill : &p->post.temporal) = 1;
        return 0;
    }
    if (IS("temporal-alpha"))
        return INT(1, 16, &p->post.temporal_alpha);
    if (IS("temporal-delta"))
        return INT(0, POSTFILTER_DIFF_MAX, &p->post.temporal_delta);
    if (IS("temporal-persist"))
        return INT(0, POSTFILTER_PERSIST_MAX, &p->post.temporal_persist);
    if (IS("backend"))
        return stereo_backend_from_str(v, &p->backend)
                   ? fail(err, errlen, "--backend: '%s' is not auto, cpu or cuda", v) : 0;
    if (IS("threads"))
        return INT(0, 256, &p->threads);
    if (IS("sms"))
        return INT(0, STEREO_MAX_SMS, &p->sms);
    if (IS("band"))
        return INT(0, 64, &p->band);
#undef IS
#undef INT
#undef LIST
    return fail(err, errlen, "--%s: not handled (stereo_options.c)", name); /* table out of step */
}

int stereo_options_finish(stereo_options *o, char *err, size_t errlen)
{
    stereo_params *p = &o->p;
    if (p->paths != 4 && p->paths != 8)
        return fail(err, errlen, "--paths: %d is neither 4 nor 8", p->paths);
    int D = p->num_disparities;
    char why[80];
    if (stereo_check_disparities(D, why, sizeof why) != 0)
        return fail(err, errlen, "--disparities: %s", why);
    if (p->min_disparity + D > 2047)
        return fail(err, errlen, "--min-disparity: %d plus %d disparities exceeds 2047",
                    p->min_disparity, D);
    if (p->rank_window % 2 == 0)
        return fail(err, errlen, "--window: %d is not odd in 3..15", p->rank_window);
    if (p->block % 2 == 0)
        return fail(err, errlen, "--block: %d is not odd in %d..%d", p->block, STEREO_BLOCK_MIN,
                    STEREO_BLOCK_MAX);
    /* penalties: tuned defaults for the chosen cost unless given; a list gives one per path
     * (p1 / p2 then take its first value, for the summary) */
    const struct { const char *opt; int n; } lists[3] = {
        {"--p1", o->np1}, {"--p2", o->np2}, {"--path-weights", o->nweights}};
    for (int i = 0; i < 3; i++)
        if (lists[i].n > 1 && lists[i].n != p->paths)
            return fail(err, errlen, "%s: %d values for %d paths (give one value, or one per "
                        "path in path order: +x, -x, +y, -y%s)", lists[i].opt, lists[i].n,
                        p->paths, p->paths == 8 ? ", +x+y, -x+y, +x-y, -x-y" : "");
    int p1, p2;
    stereo_default_penalties(p->cost, p->rank_window, &p1, &p2);
    p->p1 = o->p1_set ? o->p1_list[0] : p1;
    if (o->np1 > 1)
        memcpy(p->p1_path, o->p1_list, sizeof o->p1_list);
    p->p2 = o->p2_set ? o->p2_list[0] : p2 > p->p1 ? p2 : p->p1 + 1;
    if (o->np2 > 1)
        memcpy(p->p2_path, o->p2_list, sizeof o->p2_list);
    if (o->nweights) {
        int sum = 0;
        for (int r = 0; r < o->nweights; r++)
            sum += o->weights[r];
        if (sum == 0)
            return fail(err, errlen, "--path-weights: '%d,...' are all 0 (weights are 0..255, "
                        "at least one positive)", o->weights[0]);
        for (int r = 0; r < STEREO_MAX_PATHS; r++)
            p->path_weight[r] = o->weights[o->nweights > 1 ? r : 0];
    }
    for (int r = 0; r < p->paths; r++) {
        int q1, q2;
        stereo_path_penalties(p, r, &q1, &q2);
        if (!o->p2_set && q2 <= q1) /* a default P2 below a given P1 follows it */
            p->p2_path[r] = q2 = q1 + 1;
        if (q2 <= q1)
            return fail(err, errlen, "--p2: %d must be greater than --p1 %d%s", q2, q1,
                        o->np1 > 1 || o->np2 > 1 ? " (on each path)" : "");
    }
    if (p->band) {
        if (band_check(p->band, D, why, sizeof why) != 0)
            return fail(err, errlen, "--band: %s", why);
        if (p->method != STEREO_METHOD_SGM || p->cost == STEREO_COST_MI)
            return fail(err, errlen, "--band: the coarse-to-fine mode is not for %s",
                        p->cost == STEREO_COST_MI ? "--cost mi (it has a hierarchy of its own)"
                                                  : "--method bm");
    }
    return 0;
}

int stereo_options_size(stereo_options *o, int width, int height, char *err, size_t errlen)
{
    o->p.width = width;
    o->p.height = height;
    if (o->p.num_disparities >= width)
        return fail(err, errlen, "--disparities: %d must be smaller than the image width %d",
                    o->p.num_disparities, width);
    return 0;
}
