/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_options.c — the stage options, declared once (stereo_options.h). */
#include "stereo_options.h"

#include <getopt.h>
#include <stddef.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "band.h"
#include "cross.h"
#include "mi.h"
#include "parse_num.h"
#include "postfilter.h"

/* enum fields are read as int (stereo_option_format) */
_Static_assert(sizeof(stereo_cost) == sizeof(int), "enum size");
_Static_assert(sizeof(stereo_backend) == sizeof(int), "enum size");
_Static_assert(sizeof(stereo_method) == sizeof(int), "enum size");

#define STR_(x) #x
#define STR(x) STR_(x)

/* One row per option, in --help order. To add an option: a row here (ROW: its long name, short
 * flag or 0, the live app's [stereo] key, the Python keyword, the --help section, the type and
 * field of stereo_params it sets; then the value's metavar, or none for a flag, its range, its
 * default and its help) and its case in stereo_option_set_as (parse the value, store it in
 * stereo_options; a check against other options goes in stereo_options_finish); a flag needs
 * no case (STEREO_OPT_FLAG: the field is set to 0; STEREO_OPT_SWITCH: to 1). Both programs, the live app's
 * configuration and the Python module then take it and --help lists it; tests/test_options.py
 * checks every row in all of them (give it the row's sample values). A field stereo_params
 * lacks goes to gpu/stereo.h first. */
#define ROW(NAME, SHORT, KEY, KWARG, GROUP, TYPE, FIELD)                                        \
    .name = NAME, .short_flag = SHORT, .key = KEY, .kwarg = KWARG, .group = STEREO_OPT_##GROUP, \
    .type = STEREO_OPT_##TYPE, .offset = offsetof(stereo_params, FIELD)
const stereo_option_info stereo_option_table[] = {
    {ROW("disparities", 'd', "disparities", "disparities", MATCHING, INT, num_disparities),
     .metavar = "N", .range = "a multiple of 16 in 16..512", .def = "64",
     .help = "number of disparities D",
     .more = "stereo-match, stereo-live and Python's match() also take auto: the range the "
             "first pair needs, measured at a quarter of its size (the 99th percentile of its "
             "disparities and an eighth more)"},
    {ROW("min-disparity", 0, "min_disparity", "min_disparity", MATCHING, INT, min_disparity),
     .metavar = "N", .range = "-512..2031, at most 2047 minus D", .def = "0",
     .help = "smallest disparity searched",
     .more = "negative where points appear farther right in the right view than in the left "
             "(a rectification that keeps the principal points apart, or converging cameras); "
             "with two views, not with cost mi; outputs that hold negative values only (.pfm, "
             "not a 16-bit PNG)"},
    {ROW("cost", 0, "cost", "cost", MATCHING, COST, cost),
     .metavar = "NAME", .range = "rank, census, ad, bt, mi, adcensus",
     .def = "adcensus",
     .help = "matching cost",
     .more = "rank (9x9, --window), census (9x7), ad (absolute grey difference, capped at 63), "
             "bt (Birchfield-Tomasi, capped at 63), mi: hierarchical mutual information "
             "(Hirschmueller 2008; robust to gain, gamma and other global differences between "
             "the cameras; the pair is matched at 1/16 .. 1/2 first to find the MI table; on "
             "CUDA the levels run on the GPU, the tables on the host), adcensus: census plus "
             "--ad-weight eighths of the absolute grey difference after matching the right "
             "view's histogram to the left's (with --baselines each view's to the "
             "reference's), at most census's 62 (after Mei et al. 2011)"},
    {ROW("window", 0, "window", "window", MATCHING, INT, rank_window),
     .metavar = "N", .range = "odd, 3..15", .def = "9", .help = "rank window side"},
    {ROW("ad-weight", 0, "ad_weight", "ad_weight", MATCHING, INT, ad_weight),
     .metavar = "N", .range = "1..16", .def = "3",
     .help = "adcensus: eighths of a cost unit per grey level of |IL - IR|",
     .more = "added to the census distance; the right view's grey levels (with --baselines "
             "each view's) are first mapped onto the left's (histogram matching), so that the "
             "term survives the cameras' different gain, offset or gamma"},
    {ROW("method", 0, "method", "method", MATCHING, METHOD, method),
     .metavar = "NAME", .range = "sgm, bm", .def = "sgm", .help = "matching method",
     .more = "sgm: semi-global matching; bm: block matching, the cost summed over a --block N x "
             "N box, winner-takes-all"},
    {ROW("block", 0, "block", "block", MATCHING, INT, block),
     .metavar = "N", .range = "odd, " STR(STEREO_BLOCK_MIN) ".." STR(STEREO_BLOCK_MAX),
     .def = "9", .help = "bm box side"},
    {ROW("paths", 0, "paths", "paths", MATCHING, INT, paths),
     .metavar = "N", .range = "4 or 8", .def = "4", .help = "SGM paths"},
    {ROW("p1", 0, "p1", "p1", MATCHING, PENALTY, p1),
     .metavar = "N[,N...]", .range = "1..1022, below --p2", .def = "tuned per cost",
     .help = "SGM penalty of a disparity step of 1 along a path",
     .more = "one value for every path or one per path, in path order: +x, -x, +y, -y, +x+y, "
             "-x+y, +x-y, -x-y (4 paths: the first 4)"},
    {ROW("p2", 0, "p2", "p2", MATCHING, PENALTY, p2),
     .metavar = "N[,N...]", .range = "2..1023, above --p1", .def = "tuned per cost",
     .help = "SGM penalty of a larger disparity step",
     .more = "one value for every path or one per path, as --p1"},
    {ROW("p2-adapt", 0, "p2_adapt", "p2_adapt", MATCHING, INT, p2_adapt),
     .metavar = "T", .range = "0..255, 0 = off", .def = "16",
     .help = "intensity-adaptive P2 (P2*T/(T + |dI|))", .more = "it adapts each path's P2"},
    {ROW("mi-tiles", 0, "mi_tiles", "mi_tiles", MATCHING, INT, mi_tiles),
     .metavar = "G", .range = "1.." STR(MI_TILES_MAX), .def = "5",
     .help = "cost mi: one MI table per tile of a G x G grid of the image",
     .more = "1 = one table for the whole frame; tiles follow a brightness difference between "
             "the cameras that varies over the image (vignetting)"},
    {ROW("path-weights", 0, "path_weights", "path_weights", MATCHING, WEIGHTS, path_weight),
     .metavar = "W[,W...]", .range = "0..255, not all 0", .def = "1",
     .help = "weight of each path's L in the sum",
     .more = "one for every path or one per path in path order; the sum of W*(max cost + P2) "
             "over the paths must stay below 65536"},
    {ROW("uniqueness", 0, "uniqueness", "uniqueness", MATCHING, INT, uniqueness),
     .metavar = "U", .range = "0..99, 0 = off", .def = "5",
     .help = "reject when another disparity is within U%"},
    {ROW("no-subpixel", 0, "subpixel", "no_subpixel", MATCHING, FLAG, subpixel),
     .help = "integer disparities"},
    {ROW("no-lr", 0, "lr_check", "no_lr", MATCHING, FLAG, lr_check),
     .help = "no left-right consistency check"},
    {ROW("lr-tolerance", 0, "lr_tolerance", "lr_tolerance", MATCHING, INT, lr_tolerance),
     .metavar = "N", .range = "0..255", .def = "1", .help = "LR check tolerance in pixels"},
    {ROW("no-median", 0, "median", "no_median", MATCHING, FLAG, median),
     .help = "no 3x3 median"},
    {ROW("band", 0, "band", "band", MATCHING, INT, band),
     .metavar = "W", .range = "32 or 64, below D; 0 = off", .def = "0",
     .help = "coarse-to-fine: match at half size first, then W disparities per pixel around it",
     .more = "SGM with any cost but mi; as accurate as the full search on the shared scenes, "
             "faster with wide ranges (on CUDA also above 256 disparities with any option)"},
    {ROW("cross", 0, "cross", "cross", MATCHING, INT, cross),
     .metavar = "N", .range = "0.." STR(CROSS_ARM_MAX) ", 0 = off", .def = "0",
     .help = "cross-based cost aggregation: each pixel's cost averaged over its support region "
             "(pixels of like grey level, arms up to N px) before the paths",
     .more = "Mei et al. 2011; the region of --vote with its arms capped at N; SGM, not with "
             "--band; costs a second pass over the cost volume"},
    {ROW("discontinuity", 0, "discontinuity", "discontinuity", MATCHING, SWITCH, discontinuity),
     .help = "a pixel on a disparity edge takes its left or right neighbour's disparity when "
             "that costs less at the pixel",
     .more = "Mei et al.'s depth-discontinuity adjustment, on the cost after --cross; after the "
             "LR check, before the post-filters; SGM, not with --band"},
    {ROW("speckle-size", 0, "speckle_size", "speckle_size", MATCHING, INT, post.speckle_size),
     .metavar = "N", .range = "0..1048576, 0 = off", .def = "100",
     .help = "post-filter: invalidate 4-connected regions of fewer than N pixels",
     .more = "neighbours within --speckle-diff are connected (OpenCV's filterSpeckles rule); "
             "100 was chosen leaving one kind of scene out, with 4 paths"},
    {ROW("speckle-diff", 0, "speckle_diff", "speckle_diff", MATCHING, INT, post.speckle_diff),
     .metavar = "M", .range = "0..4095", .def = "16",
     .help = "speckle removal's largest step between neighbours, in 16ths of a pixel"},
    {ROW("fill", 0, "fill", "fill", MATCHING, SWITCH, post.fill),
     .help = "post-filter: fill each row's holes with the smaller (background) value beside "
             "them", .more = "a hole at a border with the one beside it (the KITTI devkit's rule)"},
    {ROW("vote", 0, "vote", "vote", MATCHING, SWITCH, post.vote),
     .help = "post-filter: each invalid pixel takes the disparity most of its support region "
             "(pixels of like grey level around it) agrees on",
     .more = "Mei et al.'s iterative region voting; before the temporal filter and the fill"},
    {ROW("interp", 0, "interp", "interp", MATCHING, SWITCH, post.interp),
     .help = "post-filter: each hole takes a value from the valid pixels within 16 steps, an "
             "occluded one the background beside it in its row, a mismatched one the median "
             "of 16 directions",
     .more = "Hirschmueller's interpolation as Mei et al. use it; occlusions told apart by the "
             "right view's map (with --no-lr every hole is a mismatch); after --vote, before "
             "the temporal filter and --fill"},
    {ROW("temporal", 0, "temporal", "temporal", MATCHING, SWITCH, post.temporal),
     .help = "post-filter for sequences: smooth each pixel over the frames",
     .more = "reset when more than half the pixels jump or the valid ones halve"},
    {ROW("temporal-alpha", 0, "temporal_alpha", "temporal_alpha", MATCHING, INT,
         post.temporal_alpha),
     .metavar = "A", .range = "1..16, 16 = no smoothing", .def = "2",
     .help = "the temporal filter's weight of the new value in 16ths"},
    {ROW("temporal-delta", 0, "temporal_delta", "temporal_delta", MATCHING, INT,
         post.temporal_delta),
     .metavar = "M", .range = "0..4095", .def = "64",
     .help = "the temporal filter smooths changes of at most M 16ths of a pixel"},
    {ROW("temporal-persist", 0, "temporal_persist", "temporal_persist", MATCHING, INT,
         post.temporal_persist),
     .metavar = "K", .range = "0..255", .def = "0",
     .help = "an invalid pixel keeps its last value K frames (the temporal filter)"},
    {ROW("backend", 0, "backend", "backend", BACKEND, BACKEND_NAME, backend),
     .metavar = "NAME", .range = "auto, cpu, cuda",
     .def = "auto: CUDA if a device is present, else CPU", .help = "where the stage runs"},
    {ROW("threads", 0, "threads", "threads", BACKEND, INT, threads),
     .metavar = "N", .range = "0..256, 0 = one per core", .def = "0",
     .help = "CPU worker threads"},
    {ROW("sms", 0, "sms", "sms", BACKEND, INT, sms),
     .metavar = "N", .range = "0.." STR(STEREO_MAX_SMS) ", 0 = all", .def = "0",
     .help = "CUDA: run on N SMs of the GPU (a green context, CUDA 12.4+; the hardware may round "
             "N up)", .more = "the rest of the GPU stays free; the CPU ignores it"},
    {.name = NULL},
};
#undef ROW

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

const stereo_option_info *stereo_option_find(const char *name)
{
    for (const stereo_option_info *r = stereo_option_table; name && r->name; r++)
        if (!strcmp(name, r->name))
            return r;
    return NULL;
}

const stereo_option_info *stereo_option_by_key(const char *key)
{
    for (const stereo_option_info *r = stereo_option_table; key && r->name; r++)
        if (!strcmp(key, r->key))
            return r;
    return NULL;
}

int stereo_option_count(void)
{
    int n = 0;
    while (stereo_option_table[n].name)
        n++;
    return n;
}

void stereo_options_init(stereo_options *o)
{
    memset(o, 0, sizeof *o);
    stereo_params_default(&o->p, 0, 0);
}

int stereo_option_set(stereo_options *o, const char *name, const char *value, char *err,
                      size_t errlen)
{
    char opt[32];
    snprintf(opt, sizeof opt, "--%s", name ? name : "(null)");
    return stereo_option_set_as(o, name, value, opt, err, errlen);
}

int stereo_option_set_as(stereo_options *o, const char *name, const char *v, const char *opt,
                         char *err, size_t errlen)
{
    const stereo_option_info *row = stereo_option_find(name);
    if (!row)
        return fail(err, errlen, "unknown option '--%s'", name ? name : "(null)");
    if (row->metavar && !v)
        return fail(err, errlen, "%s: needs a value", opt);
    if (!row->metavar && v)
        return fail(err, errlen, "%s takes no value", opt);
    if (!row->metavar)
        return stereo_option_flag(o, name, 1, err, errlen);
    stereo_params *p = &o->p;
    char why[80];
#define IS(s) (!strcmp(name, s))
#define INT(lo, hi, field) parse_int_arg(opt, v, lo, hi, field, err, errlen)
#define LIST(lo, hi, out, n) parse_int_list(opt, v, lo, hi, out, STEREO_MAX_PATHS, n, err, errlen)
    if (IS("disparities")) {
        if (!strcmp(v, "auto")) {
            if (!o->auto_ok)
                return fail(err, errlen, "%s: 'auto' measures a pair (stereo-match -d auto, "
                            "Python's match() and auto_disparities()); here give a multiple "
                            "of 16 in 16..512", opt);
            o->auto_disparities = 1;
            return 0;
        }
        o->auto_disparities = 0;
        if (INT(INT_MIN, INT_MAX, &p->num_disparities)) /* not an integer: say which ones */
            return INT(16, 512, &p->num_disparities);
        return stereo_check_disparities(p->num_disparities, why, sizeof why)
                   ? fail(err, errlen, "%s: %s", opt, why) : 0;
    }
    if (IS("min-disparity")) /* at least 16 disparities above it: 2047 at most */
        return INT(STEREO_MIN_DISPARITY, 2047 - 16, &p->min_disparity);
    if (IS("cost"))
        return stereo_cost_from_str(v, &p->cost)
                   ? fail(err, errlen, "%s: '%s' is not one of %s", opt, v, stereo_cost_names())
                   : 0;
    if (IS("ad-weight"))
        return INT(1, 16, &p->ad_weight);
    if (IS("method"))
        return stereo_method_from_str(v, &p->method)
                   ? fail(err, errlen, "%s: '%s' is not one of %s", opt, v,
                          stereo_method_names()) : 0;
    if (IS("block")) {
        if (INT(STEREO_BLOCK_MIN, STEREO_BLOCK_MAX, &p->block))
            return -1;
        return p->block % 2 ? 0 : fail(err, errlen, "%s: %d is not odd in %d..%d", opt, p->block,
                                       STEREO_BLOCK_MIN, STEREO_BLOCK_MAX);
    }
    if (IS("path-weights")) {
        if (LIST(0, 255, o->weights, &o->nweights))
            return -1;
        int sum = 0;
        for (int r = 0; r < o->nweights; r++)
            sum += o->weights[r];
        return sum ? 0 : fail(err, errlen, "%s: '%s' are all 0 (weights are 0..255, at least "
                              "one positive)", opt, v);
    }
    if (IS("window")) {
        if (INT(3, 15, &p->rank_window))
            return -1;
        return p->rank_window % 2 ? 0 : fail(err, errlen, "%s: %d is not odd in 3..15", opt,
                                             p->rank_window);
    }
    if (IS("paths")) {
        if (INT(4, 8, &p->paths))
            return -1;
        return p->paths == 4 || p->paths == 8
                   ? 0 : fail(err, errlen, "%s: %d is neither 4 nor 8", opt, p->paths);
    }
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
    if (IS("mi-tiles"))
        return INT(1, MI_TILES_MAX, &p->mi_tiles);
    if (IS("uniqueness"))
        return INT(0, 99, &p->uniqueness);
    if (IS("lr-tolerance"))
        return INT(0, 255, &p->lr_tolerance);
    if (IS("backend"))
        return stereo_backend_from_str(v, &p->backend)
                   ? fail(err, errlen, "%s: '%s' is not auto, cpu or cuda", opt, v) : 0;
    if (IS("threads"))
        return INT(0, 256, &p->threads);
    if (IS("sms"))
        return INT(0, STEREO_MAX_SMS, &p->sms);
    if (IS("band"))
        return INT(0, 64, &p->band);
    if (IS("cross"))
        return INT(0, CROSS_ARM_MAX, &p->cross);
    /* stage 9, the post-filters (postfilter.h) */
    if (IS("speckle-size"))
        return INT(0, POSTFILTER_SPECKLE_MAX, &p->post.speckle_size);
    if (IS("speckle-diff"))
        return INT(0, POSTFILTER_DIFF_MAX, &p->post.speckle_diff);
    if (IS("temporal-alpha"))
        return INT(1, 16, &p->post.temporal_alpha);
    if (IS("temporal-delta"))
        return INT(0, POSTFILTER_DIFF_MAX, &p->post.temporal_delta);
    if (IS("temporal-persist"))
        return INT(0, POSTFILTER_PERSIST_MAX, &p->post.temporal_persist);
#undef IS
#undef INT
#undef LIST
    return fail(err, errlen, "%s: not handled (stereo_options.c)", opt); /* table out of step */
}

int stereo_option_flag(stereo_options *o, const char *name, int given, char *err, size_t errlen)
{
    const stereo_option_info *row = stereo_option_find(name);
    if (!row || (row->type != STEREO_OPT_FLAG && row->type != STEREO_OPT_SWITCH))
        return fail(err, errlen, "--%s: not a flag", name ? name : "(null)");
    int v = row->type == STEREO_OPT_SWITCH ? !!given : !given;
    memcpy((char *)&o->p + row->offset, &v, sizeof v);
    return 0;
}

const char *stereo_option_format(const stereo_params *p, const stereo_option_info *row,
                                 char *buf, size_t len)
{
    int v;
    memcpy(&v, (const char *)p + row->offset, sizeof v);
    const char *word = row->type == STEREO_OPT_FLAG ||
                               row->type == STEREO_OPT_SWITCH ? v ? "true" : "false"
                       : row->type == STEREO_OPT_COST         ? stereo_cost_to_str(v)
                       : row->type == STEREO_OPT_METHOD       ? stereo_method_to_str(v)
                       : row->type == STEREO_OPT_BACKEND_NAME ? stereo_backend_to_str(v)
                                                              : NULL;
    size_t n = word ? (size_t)snprintf(buf, len, "%s", word) : 0;
    if (row->type == STEREO_OPT_INT)
        n = (size_t)snprintf(buf, len, "%d", v);
    if (row->type == STEREO_OPT_PENALTY || row->type == STEREO_OPT_WEIGHTS) {
        /* a list when a path differs from the value (a penalty's per-path list is 0 where it
         * is not given; the weights have no such value: the first) */
        int weights = row->type == STEREO_OPT_WEIGHTS;
        const int *path = weights ? p->path_weight
                          : row->offset == offsetof(stereo_params, p2) ? p->p2_path : p->p1_path;
        int list = 0;
        for (int r = 0; r < p->paths; r++)
            list |= weights ? path[r] != v : path[r] != 0;
        for (int r = 0; r < (list ? p->paths : 1) && n < len; r++)
            n += (size_t)snprintf(buf + n, len - n, "%s%d", r ? "," : "",
                                  list && (weights || path[r]) ? path[r] : v);
    }
    if (n >= len && len)
        buf[0] = '\0';
    return buf;
}

int stereo_options_finish(stereo_options *o, char *err, size_t errlen)
{
    stereo_params *p = &o->p;
    int D = p->num_disparities;
    if (!o->auto_disparities && p->min_disparity + D > 2047)
        return fail(err, errlen, "--min-disparity: %d plus %d disparities exceeds 2047",
                    p->min_disparity, D);
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
    memset(p->p1_path, 0, sizeof p->p1_path);
    if (o->np1 > 1)
        memcpy(p->p1_path, o->p1_list, sizeof o->p1_list);
    p->p2 = o->p2_set ? o->p2_list[0] : p2 > p->p1 ? p2 : p->p1 + 1;
    memset(p->p2_path, 0, sizeof p->p2_path);
    if (o->np2 > 1)
        memcpy(p->p2_path, o->p2_list, sizeof o->p2_list);
    if (o->nweights) {
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
        char why[96];
        /* with --disparities auto, the width alone now (the range is chosen above it later,
         * stereo_auto_disparities) */
        if (band_check(p->band, o->auto_disparities ? INT_MAX : D, why, sizeof why) != 0)
            return fail(err, errlen, "--band: %s", why);
        if (p->method != STEREO_METHOD_SGM || p->cost == STEREO_COST_MI)
            return fail(err, errlen, "--band: the coarse-to-fine mode is not for %s",
                        p->cost == STEREO_COST_MI ? "--cost mi (it has a hierarchy of its own)"
                                                  : "--method bm");
    }
    if ((p->cross || p->discontinuity) && (p->band || p->method != STEREO_METHOD_SGM))
        return fail(err, errlen, "--%s: refines SGM over the full cost volume, not %s",
                    p->cross ? "cross" : "discontinuity",
                    p->band ? "--band (the coarse-to-fine mode)" : "--method bm");
    return 0;
}

int stereo_options_set_disparities(stereo_options *o, int D, char *err, size_t errlen)
{
    o->auto_disparities = 0;
    o->p.num_disparities = D;
    return stereo_options_finish(o, err, errlen);
}

void stereo_options_message_keys(const char *msg, char *out, size_t len)
{
    size_t n = 0;
    while (*msg && n + 1 < len) {
        const stereo_option_info *r = NULL;
        size_t name = 0;
        if (!strncmp(msg, "--", 2)) {
            name = strspn(msg + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
            for (r = stereo_option_table; r->name; r++)
                if (strlen(r->name) == name && !strncmp(msg + 2, r->name, name))
                    break;
        }
        if (r && r->name) {
            size_t k = (size_t)snprintf(out + n, len - n, "%s", r->key);
            n = k < len - n ? n + k : len - 1;
            msg += 2 + name;
        } else {
            out[n++] = *msg++;
        }
    }
    if (len)
        out[n] = '\0';
}

int stereo_options_size(stereo_options *o, int width, int height, char *err, size_t errlen)
{
    o->p.width = width;
    o->p.height = height;
    if (!o->auto_disparities && o->p.num_disparities >= width)
        return fail(err, errlen, "--disparities: %d must be smaller than the image width %d",
                    o->p.num_disparities, width);
    return 0;
}

/* --help's layout: the option from column 2, its help from HELP_COLUMN, lines of at most
 * HELP_WIDTH characters (an 80-column terminal); NBSP joins two words that stay on one line */
#define HELP_COLUMN 25
#define HELP_WIDTH 79
#define NBSP '\a'

/* text's words after column *col, wrapped to HELP_COLUMN; *first: the next word is the first
 * of the help (no blank before it, and on this line whatever its length) */
static void print_wrapped(FILE *f, const char *text, int *col, int *first)
{
    for (;;) {
        while (*text == ' ')
            text++;
        int n = (int)strcspn(text, " ");
        if (!n)
            return;
        if (!*first && *col + 1 + n > HELP_WIDTH) {
            *col = fprintf(f, "\n%*s", HELP_COLUMN, "") - 1;
        } else if (!*first) {
            fputc(' ', f);
            (*col)++;
        }
        for (int i = 0; i < n; i++)
            fputc(text[i] == NBSP ? ' ' : text[i], f);
        *col += n;
        *first = 0;
        text += n;
    }
}

void stereo_options_print_help(FILE *f, stereo_option_group group)
{
    for (const stereo_option_info *r = stereo_option_table; r->name; r++) {
        if (r->group != group)
            continue;
        char flag[8] = "    "; /* "-d, " */
        if (r->short_flag)
            snprintf(flag, sizeof flag, "-%c, ", r->short_flag);
        int col = fprintf(f, "  %s--%s%s%s", flag, r->name, r->metavar ? " " : "",
                          r->metavar ? r->metavar : "");
        col += fprintf(f, "%*s", col + 2 <= HELP_COLUMN ? HELP_COLUMN - col : 2, "");
        /* "HELP: RANGE (default DEF); MORE" */
        char text[1024];
        snprintf(text, sizeof text, "%s%s%s%s%s%s%s", r->help, r->range ? ": " : "",
                 r->range ? r->range : "", r->def ? " (default\a" : "", r->def ? r->def : "",
                 r->def ? ")" : "", r->more ? ";" : "");
        int first = 1;
        print_wrapped(f, text, &col, &first);
        if (r->more)
            print_wrapped(f, r->more, &col, &first);
        fputc('\n', f);
    }
}

int stereo_options_getopt(struct option *opts, size_t *n, size_t max, int base, char *shortopts,
                          size_t shortlen)
{
    for (int i = 0; stereo_option_table[i].name; i++) {
        const stereo_option_info *r = &stereo_option_table[i];
        if (*n + 2 > max)
            return -1;
        opts[(*n)++] = (struct option){r->name, r->metavar ? required_argument : no_argument,
                                       NULL, base + i};
        size_t used = strlen(shortopts);
        if (r->short_flag && used + 3 >= shortlen)
            return -1;
        if (r->short_flag)
            snprintf(shortopts + used, shortlen - used, "%c%s", r->short_flag,
                     r->metavar ? ":" : "");
    }
    opts[*n] = (struct option){NULL, 0, NULL, 0};
    return 0;
}

const stereo_option_info *stereo_option_from_getopt(int c, int base)
{
    if (c >= base && c < base + stereo_option_count())
        return &stereo_option_table[c - base];
    for (const stereo_option_info *r = stereo_option_table; c > 0 && r->name; r++)
        if (r->short_flag == c)
            return r;
    return NULL;
}
