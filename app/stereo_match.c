/* SPDX-License-Identifier: Apache-2.0 */
/* stereo-match — compute a disparity map from a stereo pair with the stereo stage.
 *
 *   stereo-match [options] LEFT RIGHT OUTPUT
 *   stereo-match [options] 'left_%04d.png' 'right_%04d.png' 'out_%04d.png'   a sequence
 *   stereo-match [options] LEFTDIR RIGHTDIR OUTDIR                            a sequence
 *   stereo-match --demo DIR        generated scene: match it and score against its ground truth
 *   stereo-match --baselines 1,B2,...,BN REF VIEW1 ... VIEWN OUTPUT   multi-baseline matching
 *   stereo-match --maps RIG REF VIEW1 ... VIEWN OUTPUT    the same through a rig file's maps
 *
 * A sequence runs through one stage, created for the first pair (every pair must have its
 * size); hal/sequence.h lists and pairs the files. Progress goes to stderr only (stdout keeps
 * its one summary line): a single pair on the CPU backend reports it once it has run 2 s, read
 * from stereo_progress by a thread of its own; a sequence reports every frame. Either only when
 * stderr is a terminal (one line, rewritten) or with --progress (one line per step).
 *
 * Exit status: 0 success, 1 bad input or processing failure, 2 bad usage (an output that names
 * an input or another output, a link, a directory or a device, or lies in a folder we cannot
 * write: outpath.h, checked before any work). Every failure prints one line naming the file or
 * option; no output file is left half-written (writes are atomic).
 *
 * This file runs what the command line asked for (match_options.c parses and checks it): one
 * pair, more views, a sequence or the demo, and writes the outputs and the summary.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "calib.h"
#include "colormap.h"
#include "depth.h"
#include "disparity.h"
#include "image_io.h"
#include "legend.h"
#include "mapfile.h"
#include "match_options.h"
#include "outpath.h"
#include "rectify.h"
#include "sequence.h"
#include "stereo.h"
#include "stereo_options.h"
#include "synth.h"

/* ---- outputs ---------------------------------------------------------------------------- */

/* The colour image over o's --color-range (the range used goes to o->range_used), with the
 * legend strip below it when asked for. */
static int write_color(const char *path, const int16_t *d, const stereo_params *p, options *o,
                       char *err, size_t n)
{
    colormap_range r = colormap_fixed_range(p->min_disparity, p->num_disparities);
    if (o->range_mode == RANGE_GIVEN)
        r = o->range_given;
    else if (o->range_mode == RANGE_AUTO) /* no valid pixel: the fixed range */
        colormap_auto_range(d, (size_t)p->width * p->height, p->min_disparity,
                            p->num_disparities, &r);
    o->range_used = r;
    int legend_h = o->legend ? legend_height(p->width) : 0;
    image im;
    if (image_alloc(&im, p->width, p->height + legend_h, 3, 8) != 0) {
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    uint8_t lut[256 * 3];
    colormap_lut(o->cmap, lut);
    size_t pitch = (size_t)p->width * 3;
    colormap_disparity_rows(d, p->width, r, lut, im.data, 3, pitch, 0, p->height);
    if (o->legend)
        legend_draw_rgb((uint8_t *)im.data + pitch * p->height, p->width, pitch, lut, r);
    int rc = image_write(path, &im, err, n);
    image_free(&im);
    return rc;
}

static int write_confidence(const char *path, const uint8_t *c, int w, int h, char *err, size_t n)
{
    image im = {w, h, 1, 8, (void *)c};
    return image_write(path, &im, err, n);
}

/* ---- running ---------------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stereo_image as_stage_image(const image *im)
{
    return (stereo_image){im->data, im->width, im->height, (size_t)im->width * im->channels,
                          im->channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8};
}

/* --disparities auto: the range the pair needs (stereo_auto_disparities), into the options;
 * says what it measured unless --quiet. */
static int auto_disparities(options *o, const image *left, const image *right,
                            const stereo_map *maps)
{
    char err[512];
    const stereo_image l = as_stage_image(left), r = as_stage_image(right);
    stereo_auto_range a;
    stereo_status st = stereo_auto_disparities(&o->stage.p, maps, &l, &r, &a, err, sizeof err);
    if (st != STEREO_OK) {
        fprintf(stderr, "stereo-match: --disparities auto: %s\n", err);
        return st == STEREO_ERR_PARAM ? EXIT_USAGE : 1;
    }
    if (stereo_options_set_disparities(&o->stage, a.disparities, err, sizeof err))
        return usage_error("--disparities auto chose %d: %s", a.disparities, err);
    if (!o->quiet) {
        char band[48] = "";
        if (a.for_band)
            snprintf(band, sizeof band, ", raised above --band %d", o->stage.p.band);
        fprintf(stderr, "stereo-match: --disparities auto: %d (the scene reaches %d px%s)%s%s\n",
                a.disparities, a.top, a.beyond ? " or more: the end of the range measured" : "",
                a.clamped ? ", the most this width and --min-disparity allow" : "", band);
    }
    return 0;
}

/* Creates the stage for pairs of left's size (or the maps' output size); with --disparities
 * auto, measures the range on this pair first. */
static int create_stage(options *o, const image *left, const image *right,
                        const stereo_map *maps, stereo_stage **stage_out)
{
    char err[512];
    stereo_params *p = &o->p;
    o->stage.p = *p; /* --demo sets its own D */
    if (stereo_options_size(&o->stage, maps ? maps[0].width : left->width,
                            maps ? maps[0].height : left->height, err, sizeof err))
        return usage_error("%s", err);
    int rc;
    if (o->stage.auto_disparities && (rc = auto_disparities(o, left, right, maps)) != 0)
        return rc;
    *p = o->stage.p;
    stereo_status st = stereo_create(p, maps, stage_out, err, sizeof err);
    if (st != STEREO_OK) {
        fprintf(stderr, "stereo-match: %s%s\n",
                p->backend == STEREO_BACKEND_CUDA && st != STEREO_ERR_PARAM
                    ? "--backend cuda: " : "", err);
        return st == STEREO_ERR_PARAM ? EXIT_USAGE : 1;
    }
    return 0;
}

/* ---- progress of one pair (stderr; stdout keeps its summary line) ------------------------ */

#define PROGRESS_AFTER_MS 2000.0 /* a pair that takes less says nothing */
#define PROGRESS_POLL_MS 100

typedef struct {
    stereo_stage *s;
    const options *o;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done, run, runs;     /* run: which of the --repeat runs is going */
    double t0;
    int printed, last_step;  /* last_step: the last 10 % step printed (--progress lines) */
} progress_watch;

/* The whole job's per mille: runs before this one, and this one's part. */
static int progress_permille(progress_watch *w)
{
    int pm = stereo_progress(w->s);
    return (int)(((long)w->run * 1000 + (pm < 0 ? 0 : pm)) / w->runs);
}

static void progress_print(progress_watch *w, int pm, double elapsed_ms)
{
    if (w->o->progress_tty) {
        fprintf(stderr, "\rstereo-match: %3d%% (%.1f s)", pm / 10, elapsed_ms / 1e3);
    } else if (pm / 100 > w->last_step) {
        w->last_step = pm / 100;
        fprintf(stderr, "stereo-match: progress %d%% (%.1f s)\n", w->last_step * 10,
                elapsed_ms / 1e3);
    } else {
        return;
    }
    fflush(stderr);
    w->printed = 1;
}

static void *progress_thread(void *arg)
{
    progress_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += PROGRESS_POLL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cond, &w->lock, &ts);
        double elapsed = now_ms() - w->t0;
        if (!w->done && elapsed >= PROGRESS_AFTER_MS)
            progress_print(w, progress_permille(w), elapsed);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Runs the pair o->repeat times; the median time in *median_ms. A thread reports the progress
 * (CPU backend, stderr a terminal or --progress, not --quiet); it only reads the stage's
 * counter, so the stage runs as without it. */
static int process_views(options *o, stereo_stage *s, const image *images, int n,
                         double *median_ms);

static int process_pair(options *o, stereo_stage *s, const image *left, const image *right,
                        double *median_ms)
{
    const image pair[2] = {*left, *right};
    return process_views(o, s, pair, 2, median_ms);
}

/* Runs the n images (the pair, or REF and the --baselines views) o->repeat times. */
static int process_views(options *o, stereo_stage *s, const image *images, int n,
                         double *median_ms)
{
    stereo_image in[STEREO_MAX_VIEWS];
    for (int i = 0; i < n; i++)
        in[i] = as_stage_image(&images[i]);
    double *t = malloc(sizeof(double) * (size_t)o->repeat);
    if (!t) {
        fprintf(stderr, "stereo-match: out of memory\n");
        return 1;
    }
    progress_watch w = {.s = s, .o = o, .runs = o->repeat, .t0 = now_ms(), .last_step = 0};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t th;
    int watching = !o->quiet && !o->sequence && (o->progress_tty || o->progress) &&
                   stereo_active_backend(s) == STEREO_BACKEND_CPU &&
                   pthread_create(&th, NULL, progress_thread, &w) == 0;
    stereo_status st = STEREO_OK;
    for (int i = 0; i < o->repeat && st == STEREO_OK; i++) {
        pthread_mutex_lock(&w.lock);
        w.run = i;
        pthread_mutex_unlock(&w.lock);
        double t0 = now_ms();
        st = n == 2 ? stereo_process(s, &in[0], &in[1]) : stereo_process_views(s, in, n);
        t[i] = now_ms() - t0;
    }
    if (watching) {
        pthread_mutex_lock(&w.lock);
        w.done = 1;
        pthread_cond_broadcast(&w.cond);
        pthread_mutex_unlock(&w.lock);
        pthread_join(th, NULL);
        if (w.printed && o->progress_tty) /* clear the rewritten line */
            fprintf(stderr, "\r%40s\r", "");
        else if (w.printed && st == STEREO_OK && w.last_step < 10)
            fprintf(stderr, "stereo-match: progress 100%% (%.1f s)\n", (now_ms() - w.t0) / 1e3);
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    if (st != STEREO_OK) {
        fprintf(stderr, "stereo-match: %s\n", stereo_error(s));
        free(t);
        return 1;
    }
    qsort(t, (size_t)o->repeat, sizeof *t, cmp_double);
    *median_ms = t[o->repeat / 2];
    free(t);
    return 0;
}

/* The outputs of one pair: path[0] the disparity, then --right, --color, --confidence, --depth,
 * --ply (NULL: not asked for). */
enum { OUT_DISP, OUT_RIGHT, OUT_COLOR, OUT_CONF, OUT_DEPTH, OUT_PLY, OUT_COUNT };

/* The left input as the stage saw it, in colour: rectified with o->maps_in channel by channel
 * (the stage's bilinear rule, rectify_rows_interleaved; outside the source: 0), or the input
 * itself. *owned
 * is set when the result was allocated (image_free it). */
static int left_color(const options *o, image *out, int *owned)
{
    const image *in = o->left_in;
    const stereo_map *m = o->maps_in;
    *owned = 0;
    if (!m) {
        *out = *in;
        return 0;
    }
    int rc = image_alloc(out, m->width, m->height, in->channels, 8);
    if (!rc)
        rectify_rows_interleaved(m, in->data, (size_t)in->width * in->channels, in->channels,
                                 out->data, 0, m->height);
    *owned = !rc;
    return rc;
}

/* --depth and --ply of the last pair (o->cam). */
static int write_depth_outputs(options *o, stereo_stage *s, const char *depth, const char *ply,
                               char *err, size_t errlen)
{
    const stereo_params *p = stereo_get_params(s);
    const int16_t *d = stereo_disparity(s);
    if (depth && depth_write_image(depth, d, p->width, p->height, &o->cam, err, errlen))
        return -1;
    if (!ply)
        return 0;
    image col;
    int owned;
    if (left_color(o, &col, &owned)) {
        snprintf(err, errlen, "%s: out of memory", ply);
        return -1;
    }
    int rc = depth_write_ply(ply, d, p->width, p->height, &o->cam, col.data, col.channels,
                             &o->ply_points, err, errlen);
    if (owned)
        image_free(&col);
    return rc;
}

/* The camera of --depth / --ply, once the stage's size (w x h) and what --maps gives are
 * known: the calibration's, or --focal / --baseline / --center (the centre defaults to the
 * image's). EXIT_USAGE after printing why when there is none or both, else 0. */
static int resolve_camera(options *o, const depth_camera *from_maps, int have, int w, int h)
{
    if (!o->depth && !o->ply)
        return 0;
    if (have && o->focal_set)
        return usage_error("--focal / --baseline%s: --maps %s gives the camera already (f %.6g "
                           "px, centre %.6g,%.6g, baseline %.6g); drop them",
                           o->center_set ? " / --center" : "", o->maps, from_maps->focal_px,
                           from_maps->cx, from_maps->cy, from_maps->baseline);
    if (have) {
        o->cam = *from_maps;
        o->cam_from = "--maps";
        return 0;
    }
    if (!o->focal_set)
        return usage_error("%s needs the camera: --maps %s is a map file without one (version 1"
                           ", or written without a calibration); give --focal PX --baseline M "
                           "[--center CX,CY], or rewrite it with calib-maps or stereo-calibrate",
                           o->depth ? "--depth" : "--ply", o->maps);
    o->cam = (depth_camera){o->focal, o->center_set ? o->center[0] : (w - 1) / 2.0,
                            o->center_set ? o->center[1] : (h - 1) / 2.0, o->baseline, 0};
    o->cam_from = o->center_set ? "--focal, --baseline, --center" : "--focal, --baseline";
    return 0;
}

/* The depth line of the summary (stdout). */
static void print_depth_summary(const options *o)
{
    if (o->quiet || (!o->depth && !o->ply))
        return;
    char pts[64] = "";
    if (o->ply)
        snprintf(pts, sizeof pts, ", %zu points in the PLY", o->ply_points);
    printf("depth camera (%s): f %.6g px, centre %.6g,%.6g px, baseline %.6g m, doffs %.6g px%s\n",
           o->cam_from, o->cam.focal_px, o->cam.cx, o->cam.cy, o->cam.baseline, o->cam.doffs_px,
           pts);
}

static int write_outputs(options *o, stereo_stage *s, const char *const path[OUT_COUNT])
{
    char err[4096 + 256];
    const stereo_params *p = stereo_get_params(s);
    int rc = disparity_write(path[OUT_DISP], stereo_disparity(s), p->width, p->height, err,
                             sizeof err);
    if (!rc && path[OUT_RIGHT])
        rc = disparity_write(path[OUT_RIGHT], stereo_disparity_right(s), p->width, p->height, err,
                             sizeof err);
    if (!rc && path[OUT_COLOR])
        rc = write_color(path[OUT_COLOR], stereo_disparity(s), p, o, err, sizeof err);
    if (!rc && path[OUT_CONF])
        rc = write_confidence(path[OUT_CONF], stereo_confidence(s), p->width, p->height, err,
                              sizeof err);
    if (!rc && (path[OUT_DEPTH] || path[OUT_PLY]))
        rc = write_depth_outputs(o, s, path[OUT_DEPTH], path[OUT_PLY], err, sizeof err);
    if (rc)
        fprintf(stderr, "stereo-match: %s\n", err);
    return rc ? 1 : 0;
}

/* A warning when the matches pile up at the top of the range (disparity.h): nearer points than
 * the range reaches, which it matches to its largest disparity or to noise. share: the largest
 * share of the pairs over the limit (pairs of total; a single pair: 1 of 1). */
static void warn_range_top(const stereo_params *p, double share, int pairs, int total)
{
    if (!pairs)
        return;
    int dmax = p->min_disparity + p->num_disparities - 1, more = p->num_disparities * 2;
    char which[64] = "";
    if (total > 1)
        snprintf(which, sizeof which, " in %d of %d pairs (up to)", pairs, total);
    fprintf(stderr,
            "stereo-match: warning:%s %.1f%% of the valid pixels are matched at the largest "
            "disparity searched (%d): the scene has points nearer than the range reaches; "
            "try -d %d%s\n",
            which, 100 * share, dmax, more > 512 ? 512 : more,
            more > 512 ? " or a larger --min-disparity" : "");
}

static void print_summary(const options *o, stereo_stage *s, double ms)
{
    if (o->quiet)
        return;
    /* the backend note comes only with success, so a failure stays one line */
    if (*stereo_backend_note(s))
        fprintf(stderr, "stereo-match: %s\n", stereo_backend_note(s));
    const stereo_params *p = stereo_get_params(s);
    const int16_t *d = stereo_disparity(s);
    size_t n = (size_t)p->width * p->height, valid = 0;
    for (size_t i = 0; i < n; i++)
        valid += stereo_disparity_valid(d[i]);
    char green[48] = "";
    if (p->sms > 0 && stereo_stage_sms(s) > 0)
        snprintf(green, sizeof green, " on %d SMs (green context)", stereo_stage_sms(s));
    char method[32];
    if (p->method == STEREO_METHOD_BM)
        snprintf(method, sizeof method, "bm %dx%d", p->block, p->block);
    else
        snprintf(method, sizeof method, "%d paths", p->paths);
    char views[160] = "";
    if (p->views > 2) {
        int len = snprintf(views, sizeof views, ", %d views (baselines", p->views);
        for (int i = 1; i < p->views && len > 0 && (size_t)len < sizeof views; i++) {
            char b[24];
            len += snprintf(views + len, sizeof views - (size_t)len, "%s%s", i > 1 ? "," : " ",
                            stereo_baseline_str(p->baseline[i], b, sizeof b));
        }
        if (len > 0 && (size_t)len < sizeof views)
            snprintf(views + len, sizeof views - (size_t)len, "; %s)",
                     stereo_combine_to_str(p->combine));
    }
    char range[96] = "";
    if (o->color && o->range_mode != RANGE_FIXED)
        snprintf(range, sizeof range, ", colour range %.4g..%.4g px (%s)",
                 o->range_used.lo / (double)STEREO_SUBPIXEL_SCALE,
                 o->range_used.hi / (double)STEREO_SUBPIXEL_SCALE,
                 o->range_mode == RANGE_AUTO ? "auto: 1st-99th percentile" : "given");
    printf("%dx%d D=%d dmin=%d %s %s%s, backend %s%s: %.1f ms%s, %.1f%% valid%s\n", p->width,
           p->height, p->num_disparities, p->min_disparity, stereo_cost_to_str(p->cost), method,
           views, stereo_backend_to_str(stereo_active_backend(s)), green, ms,
           o->repeat > 1 ? " (median)" : "", 100.0 * valid / n, range);
    double top = disparity_top_share(d, n, p->min_disparity, p->num_disparities);
    warn_range_top(p, top, top > DISPARITY_TOP_WARN, 1);
    stereo_mi_info mi;
    if (stereo_mi_status(s, &mi) == 0) /* the last run's split (gpu/mi.h) */
        printf("mi, last run: hierarchy (%d level%s below full size, 1/%d first) %.1f ms of "
               "%.1f ms (%.0f%%), full-size table %.1f ms\n", mi.levels,
               mi.levels == 1 ? "" : "s", 1 << mi.levels, mi.hierarchy_ms, mi.total_ms,
               mi.total_ms > 0 ? 100 * mi.hierarchy_ms / mi.total_ms : 0, mi.table_ms);
}

/* With --maps RIG and more views: which camera each view is, the rig's ratios and how far the
 * 16ths the stage takes put a candidate at the largest disparity searched. */
static void print_rig_summary(const options *o, const stereo_stage *s)
{
    const stereo_params *p = stereo_get_params(s);
    if (o->quiet || !o->maps || p->views <= 2)
        return;
    char cams[96] = "", ratios[160] = "";
    int lc = 0, lr = 0;
    double worst = 0, dmax = p->min_disparity + p->num_disparities - 1;
    for (int i = 0; i < p->views; i++) {
        double off = fabs(p->baseline[i] / (double)STEREO_BASELINE_SCALE - o->rig_ratio[i]);
        worst = off * dmax > worst ? off * dmax : worst;
        if (lc >= 0 && (size_t)lc < sizeof cams)
            lc += snprintf(cams + lc, sizeof cams - (size_t)lc, "%s%d", i ? "," : "",
                           o->rig_camera[i]);
        if (i && lr >= 0 && (size_t)lr < sizeof ratios)
            lr += snprintf(ratios + lr, sizeof ratios - (size_t)lr, "%s%.6g", i > 1 ? "," : "",
                           o->rig_ratio[i]);
    }
    printf("rig %s: cameras %s as REF, view 1, ...; ratios %s, %s in 16ths (at most %.2f px "
           "off at d %.0f)\n", o->maps, cams, ratios,
           o->baselines_from_rig ? "taken" : "--baselines equal to them", worst, dmax);
}

/* --maps as the files it names, for the output checks: one file, or LEFT,RIGHT camera_info
 * files (maps[1] empty for one). 0 without --maps. */
static int split_maps(const char *opt, char maps[2][4096])
{
    maps[0][0] = maps[1][0] = 0;
    if (!opt)
        return 0;
    const char *comma = strchr(opt, ',');
    snprintf(maps[0], 4096, "%.*s", comma ? (int)(comma - opt) : 4095, opt);
    if (comma)
        snprintf(maps[1], 4096, "%s", comma + 1);
    return 1;
}

/* Refuses, before any work, an output that names an input or another output, a link, a
 * directory or a device, or lies in a folder we cannot write (outpath.h); EXIT_USAGE after
 * printing why, else 0. extra: the --demo files (or NULL). */
static int check_outputs(const options *o, const outpath_file *extra, int n_extra)
{
    outpath_file out[12], in[4 + STEREO_MAX_VIEWS];
    int n_out = 0, n_in = 0;
    for (int i = 0; i < n_extra; i++)
        out[n_out++] = extra[i];
    out[n_out++] = (outpath_file){"output", o->out_path};
    out[n_out++] = (outpath_file){"--right", o->right};
    out[n_out++] = (outpath_file){"--color", o->color};
    out[n_out++] = (outpath_file){"--confidence", o->confidence};
    out[n_out++] = (outpath_file){"--depth", o->depth};
    out[n_out++] = (outpath_file){"--ply", o->ply};
    in[n_in++] = (outpath_file){"input LEFT", o->left_path};
    in[n_in++] = (outpath_file){"input RIGHT", o->right_path};
    for (int i = 2; i <= o->nviews && o->p.views > 2; i++)
        in[n_in++] = (outpath_file){"input view", o->view_path[i]};
    char maps[2][4096];
    if (split_maps(o->maps, maps)) {
        in[n_in++] = (outpath_file){"--maps", maps[0]};
        in[n_in++] = (outpath_file){"--maps", maps[1]};
    }
    char err[2 * 4096 + 256];
    if (outpath_check(out, n_out, in, n_in, err, sizeof err) != 0) {
        fprintf(stderr, "stereo-match: %s\n", err);
        return EXIT_USAGE;
    }
    return 0;
}

/* What --maps names when it is not a rig file, for the message that more views need one; NULL
 * when it is a rig file (or unreadable: calib_rig_load then says why). */
static const char *not_a_rig(const char *path)
{
    if (strchr(path, ','))
        return "a LEFT,RIGHT pair of camera_info files (two cameras)";
    FILE *f = fopen(path, "rb");
    char head[8] = {0};
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    if (got == sizeof head && !memcmp(head, "STMAPS\r\n", 8))
        return "a pair map file (two cameras' maps)";
    char err[8];
    if (got >= 5 && !memcmp(head, "%YAML", 5) && calib_is_rig(path, err, sizeof err) == 0)
        return "a two-camera calibration YAML";
    return NULL;
}

/* More views through a rig file (--maps RIG): REF is the rig's reference camera, VIEW1 its first
 * other camera (ratio 1), the further views the rig's other cameras in camera order; one image
 * per camera. The baselines are the rig's ratios rounded to 16ths, or --baselines, which must
 * equal them. maps[i] becomes view i's map (borrowed from all[]). 0, or 1 / 2 after the message. */
static int rig_views(options *o, const image *im, stereo_map all[CALIB_RIG_MAX],
                     stereo_map maps[STEREO_MAX_VIEWS])
{
    char err[4096 + 256];
    stereo_params *p = &o->p;
    const int n = p->views;
    const char *what = not_a_rig(o->maps);
    if (what) {
        fprintf(stderr, "stereo-match: --maps %s: %s, but %d images were given (REF and %d "
                "views): more than two views need a rig file (stereo-calibrate --view ... --out "
                "RIG)\n", o->maps, what, n, n - 1);
        return 1;
    }
    calib_rig g;
    if (calib_rig_load(o->maps, 0, 0, &g, all, err, sizeof err)) {
        fprintf(stderr, "stereo-match: %s\n", err);
        return 1;
    }
    if (g.ncams != n) {
        fprintf(stderr, "stereo-match: --maps %s: a rig of %d cameras, but %d images were given "
                "(REF and %d views): give one image per camera, REF camera %d first, then the "
                "others in camera order\n", o->maps, g.ncams, n, n - 1, g.reference);
        return 1;
    }
    o->rig_camera[0] = g.reference;
    for (int k = 0, i = 1; k < g.ncams; k++)
        if (k != g.reference)
            o->rig_camera[i++] = k; /* g.first, the lowest other camera, is view 1 */
    for (int i = 0; i < n; i++) {
        int k = o->rig_camera[i];
        if (im[i].width != g.image_width || im[i].height != g.image_height) {
            char name[16] = "REF";
            if (i)
                snprintf(name, sizeof name, "view %d", i);
            fprintf(stderr, "stereo-match: %s %s is %dx%d, but --maps %s maps camera %d (%s) "
                    "from %dx%d images\n", name, o->view_path[i], im[i].width, im[i].height,
                    o->maps, k, name, g.image_width, g.image_height);
            return 1;
        }
        maps[i] = all[k];
        o->rig_ratio[i] = g.ratio[k];
        int bq = (int)lround(g.ratio[k] * STEREO_BASELINE_SCALE);
        char b[24], r[24];
        if (i > 0 && (bq == 0 || abs(bq) > STEREO_BASELINE_MAX * STEREO_BASELINE_SCALE)) {
            fprintf(stderr, "stereo-match: --maps %s: camera %d (view %d, %s) has the baseline "
                    "ratio %.6g: the stage takes 1/16 .. %d in size\n", o->maps, k, i,
                    o->view_path[i], g.ratio[k], STEREO_BASELINE_MAX);
            return 1;
        }
        if (i > 0 && !o->baselines_from_rig && p->baseline[i] != bq) {
            fprintf(stderr, "stereo-match: --baselines: view %d (%s) has %s, but --maps %s puts "
                    "its camera %d at %s (ratio %.6g): drop --baselines to take the rig's\n", i,
                    o->view_path[i], stereo_baseline_str(p->baseline[i], b, sizeof b), o->maps,
                    k, stereo_baseline_str(bq, r, sizeof r), g.ratio[k]);
            return 1;
        }
        p->baseline[i] = i ? bq : 0;
    }
    for (int i = 2; i < n; i++) /* two cameras within 1/32 of each other */
        for (int j = 1; j < i; j++)
            if (p->baseline[i] == p->baseline[j]) {
                fprintf(stderr, "stereo-match: --maps %s: cameras %d and %d (views %d and %d) "
                        "round to the same baseline ratio (%.6g, %.6g)\n", o->maps,
                        o->rig_camera[j], o->rig_camera[i], j, i, o->rig_ratio[j],
                        o->rig_ratio[i]);
                return 1;
            }
    return 0;
}

/* REF and the --baselines views (more than two images): one set, one output. */
static int run_views(options *o)
{
    char err[512];
    const int n = o->p.views;
    image im[STEREO_MAX_VIEWS] = {{0}};
    stereo_map all[CALIB_RIG_MAX] = {{0}}, maps[STEREO_MAX_VIEWS] = {{0}};
    stereo_stage *s = NULL;
    int rc = check_outputs(o, NULL, 0);
    if (rc)
        return rc;
    rc = 1;
    for (int i = 0; i < n; i++) {
        if (image_read8(o->view_path[i], &im[i], err, sizeof err)) {
            fprintf(stderr, "stereo-match: %s\n", err);
            goto done;
        }
        if (!o->maps && (im[i].width != im[0].width || im[i].height != im[0].height)) {
            fprintf(stderr, "stereo-match: view %d %s is %dx%d but REF %s is %dx%d: every view "
                    "must have the reference's size\n", i, o->view_path[i], im[i].width,
                    im[i].height, o->view_path[0], im[0].width, im[0].height);
            goto done;
        }
    }
    if (o->maps && (rc = rig_views(o, im, all, maps)) != 0)
        goto done;
    double ms;
    rc = create_stage(o, &im[0], &im[1], o->maps ? maps : NULL, &s);
    if (!rc)
        rc = process_views(o, s, im, n, &ms);
    if (rc)
        goto done;
    const char *paths[OUT_COUNT] = {o->out_path, o->right, o->color, o->confidence};
    rc = write_outputs(o, s, paths);
    if (!rc) {
        print_summary(o, s, ms);
        print_rig_summary(o, s);
    }
done:
    stereo_destroy(s);
    calib_rig_free_maps(all);
    for (int i = 0; i < n; i++)
        image_free(&im[i]);
    return rc;
}

static int run_files(options *o)
{
    char err[512];
    image left = {0}, right = {0};
    stereo_map maps[2] = {{0}};
    stereo_stage *s = NULL;
    int rc = 1;
    if ((rc = check_outputs(o, NULL, 0)) != 0)
        return rc;
    rc = 1;
    if (image_read8(o->left_path, &left, err, sizeof err) ||
        image_read8(o->right_path, &right, err, sizeof err)) {
        fprintf(stderr, "stereo-match: %s\n", err);
        goto done;
    }
    if (left.width != right.width || left.height != right.height) {
        fprintf(stderr, "stereo-match: %s is %dx%d but %s is %dx%d: the pair must match\n",
                o->left_path, left.width, left.height, o->right_path, right.width, right.height);
        goto done;
    }
    /* a map file from stereo-calibrate, or a calibration (YAML, or camera_info pair) whose maps
     * are computed here */
    depth_camera cam;
    int have_cam = 0;
    if (o->maps && calib_load_maps_camera(o->maps, left.width, left.height, maps, &cam,
                                          &have_cam, err, sizeof err)) {
        fprintf(stderr, "stereo-match: %s\n", err);
        goto done;
    }
    if ((rc = resolve_camera(o, &cam, have_cam, o->maps ? maps[0].width : left.width,
                             o->maps ? maps[0].height : left.height)) != 0)
        goto done;
    o->left_in = &left;
    o->maps_in = o->maps ? &maps[0] : NULL;
    double ms;
    rc = create_stage(o, &left, &right, o->maps ? maps : NULL, &s);
    if (!rc)
        rc = process_pair(o, s, &left, &right, &ms);
    if (rc)
        goto done;
    const char *paths[OUT_COUNT] = {o->out_path, o->right, o->color, o->confidence, o->depth,
                                    o->ply};
    rc = write_outputs(o, s, paths);
    if (!rc) {
        print_summary(o, s, ms);
        print_depth_summary(o);
    }
done:
    stereo_destroy(s);
    mapfile_free(maps);
    image_free(&left);
    image_free(&right);
    return rc;
}

/* ---- sequences --------------------------------------------------------------------------- */

/* Every frame's output paths (seq_output_path), outs[i * OUT_COUNT + k]; NULL where not asked. */
static int sequence_outputs(const options *o, const seq_list *q, char ***outs)
{
    const char *target[OUT_COUNT] = {o->out_path, o->right, o->color, o->confidence, o->depth,
                                     o->ply};
    *outs = calloc((size_t)q->n * OUT_COUNT, sizeof **outs);
    if (!*outs) {
        fprintf(stderr, "stereo-match: out of memory\n");
        return 1;
    }
    char path[4096];
    for (int i = 0; i < q->n; i++)
        for (int k = 0; k < OUT_COUNT; k++) {
            if (!target[k])
                continue;
            if (seq_output_path(q, i, target[k], k == OUT_PLY ? ".ply" : ".png", path,
                                sizeof path) ||
                !((*outs)[i * OUT_COUNT + k] = strdup(path))) {
                fprintf(stderr, "stereo-match: %s: the output path of frame %d is too long\n",
                        target[k], i);
                return 1;
            }
        }
    return 0;
}

/* outpath_check over the whole sequence before any work: every output against every input and
 * every other output. */
static int check_sequence_outputs(const options *o, const seq_list *q, char **outs)
{
    static const char *const what[OUT_COUNT] = {"output", "--right", "--color", "--confidence",
                                                "--depth", "--ply"};
    int n_out = q->n * OUT_COUNT, n_in = 2 * q->n + 2;
    outpath_file *out = calloc((size_t)n_out, sizeof *out), *in = calloc((size_t)n_in, sizeof *in);
    if (!out || !in) {
        free(out), free(in);
        fprintf(stderr, "stereo-match: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n_out; i++)
        out[i] = (outpath_file){what[i % OUT_COUNT], outs[i]};
    for (int i = 0; i < q->n; i++) {
        in[2 * i] = (outpath_file){"input LEFT", q->left[i]};
        in[2 * i + 1] = (outpath_file){"input RIGHT", q->right[i]};
    }
    char maps[2][4096];
    if (split_maps(o->maps, maps)) {
        in[2 * q->n] = (outpath_file){"--maps", maps[0]};
        in[2 * q->n + 1] = (outpath_file){"--maps", maps[1]};
    }
    char err[2 * 4096 + 256];
    int rc = outpath_check(out, n_out, in, n_in, err, sizeof err);
    free(out), free(in);
    if (rc) {
        fprintf(stderr, "stereo-match: %s\n", err);
        return EXIT_USAGE;
    }
    return 0;
}

/* Frame i of n done at elapsed ms: stderr, a rewritten line on a terminal, else (--progress)
 * a line per frame. */
static void sequence_progress(const options *o, int i, int n, double elapsed_ms)
{
    if (o->quiet || !(o->progress_tty || o->progress))
        return;
    double fps = elapsed_ms > 0 ? i * 1e3 / elapsed_ms : 0;
    if (o->progress_tty)
        fprintf(stderr, "\rstereo-match: frame %d/%d, %.2f fps, %.0f s left ", i, n, fps,
                fps > 0 ? (n - i) / fps : 0.0);
    else
        fprintf(stderr, "stereo-match: frame %d/%d, %.2f fps\n", i, n, fps);
    if (o->progress_tty && i == n)
        fprintf(stderr, "\r%60s\r", "");
    fflush(stderr);
}

static int run_sequence(options *o)
{
    char err[4096 + 512];
    seq_list q;
    int rc = o->sequence == 1 ? seq_from_patterns(o->left_path, o->right_path, &q, err, sizeof err)
                              : seq_from_dirs(o->left_path, o->right_path, &q, err, sizeof err);
    if (rc) {
        fprintf(stderr, "stereo-match: %s\n", err);
        return 1;
    }
    char **outs = NULL;
    image left = {0}, right = {0};
    stereo_map maps[2] = {{0}};
    stereo_stage *s = NULL;
    int w0 = 0, h0 = 0;
    double t_start = now_ms(), stage_ms = 0, valid_pct = 0, top_max = 0;
    int top_pairs = 0; /* pairs whose matches pile up at the top of the range */
    if ((rc = sequence_outputs(o, &q, &outs)) != 0 ||
        (rc = check_sequence_outputs(o, &q, outs)) != 0)
        goto done;
    rc = 1;
    for (int i = 0; i < q.n; i++) {
        image_free(&left);
        image_free(&right);
        if (image_read8(q.left[i], &left, err, sizeof err) ||
            image_read8(q.right[i], &right, err, sizeof err)) {
            fprintf(stderr, "stereo-match: frame %d/%d: %s\n", i + 1, q.n, err);
            goto done;
        }
        if (i == 0) {
            w0 = left.width, h0 = left.height;
            depth_camera cam;
            int have_cam = 0;
            if (o->maps && calib_load_maps_camera(o->maps, w0, h0, maps, &cam, &have_cam, err,
                                                  sizeof err)) {
                fprintf(stderr, "stereo-match: %s\n", err);
                goto done;
            }
            if ((rc = resolve_camera(o, &cam, have_cam, o->maps ? maps[0].width : w0,
                                     o->maps ? maps[0].height : h0)) != 0)
                goto done;
            o->maps_in = o->maps ? &maps[0] : NULL;
            if ((rc = create_stage(o, &left, &right, o->maps ? maps : NULL, &s)) != 0)
                goto done;
            rc = 1;
        }
        const image *bad = left.width != w0 || left.height != h0 ? &left
                           : right.width != w0 || right.height != h0 ? &right : NULL;
        if (bad) {
            fprintf(stderr, "stereo-match: frame %d/%d: %s is %dx%d, the sequence is %dx%d "
                    "(from %s): every pair must have the size of the first\n", i + 1, q.n,
                    bad == &left ? q.left[i] : q.right[i], bad->width, bad->height, w0, h0,
                    q.left[0]);
            goto done;
        }
        double ms;
        if (process_pair(o, s, &left, &right, &ms))
            goto done;
        stage_ms += ms;
        o->left_in = &left;
        if (write_outputs(o, s, (const char *const *)outs + (size_t)i * OUT_COUNT))
            goto done;
        const stereo_params *p = stereo_get_params(s);
        size_t n = (size_t)p->width * p->height, valid = 0;
        const int16_t *d = stereo_disparity(s);
        for (size_t k = 0; k < n; k++)
            valid += stereo_disparity_valid(d[k]);
        valid_pct += 100.0 * valid / n;
        const double top = disparity_top_share(d, n, p->min_disparity, p->num_disparities);
        if (top > DISPARITY_TOP_WARN) {
            top_pairs++;
            top_max = top > top_max ? top : top_max;
        }
        sequence_progress(o, i + 1, q.n, now_ms() - t_start);
    }
    rc = 0;
    if (!o->quiet) {
        const stereo_params *p = stereo_get_params(s);
        double wall = (now_ms() - t_start) / 1e3;
        if (*stereo_backend_note(s))
            fprintf(stderr, "stereo-match: %s\n", stereo_backend_note(s));
        printf("sequence of %d pairs %dx%d D=%d dmin=%d %s %d paths, backend %s: %.2f s, "
               "%.2f fps, stage %.1f ms per pair (mean), %.1f%% valid (mean)\n", q.n, p->width,
               p->height, p->num_disparities, p->min_disparity, stereo_cost_to_str(p->cost),
               p->paths, stereo_backend_to_str(stereo_active_backend(s)), wall,
               wall > 0 ? q.n / wall : 0.0, stage_ms / q.n, valid_pct / q.n);
        warn_range_top(p, top_max, top_pairs, q.n);
        print_depth_summary(o);
    }
done:
    if (outs)
        for (int i = 0; i < q.n * OUT_COUNT; i++)
            free(outs[i]);
    free(outs);
    stereo_destroy(s);
    mapfile_free(maps);
    image_free(&left);
    image_free(&right);
    seq_free(&q);
    return rc;
}

/* --demo: the generated scene (hal/synth.h), matched and scored against its ground truth. */
static int run_demo(options *o)
{
    char err[512], path[4096];
    if (mkdir(o->demo, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "stereo-match: --demo %s: cannot create the directory: %s\n", o->demo,
                strerror(errno));
        return 1;
    }
    static const char *const demo_files[] = {"left.png", "right.png", "disparity.pfm",
                                              "disparity-color.png"};
    char demo_paths[4][4096];
    outpath_file demo_out[4];
    for (int i = 0; i < 4; i++) {
        snprintf(demo_paths[i], sizeof demo_paths[i], "%s/%s", o->demo, demo_files[i]);
        demo_out[i] = (outpath_file){"--demo", i < 3 || !o->color ? demo_paths[i] : NULL};
    }
    int checked = check_outputs(o, demo_out, 4);
    if (checked)
        return checked;
    synth_params sp = {.width = 640, .height = 480, .t = 0, .seed = 1, .max_disparity = 0,
                       .edge_radius = 1};
    synth_scene sc;
    if (synth_render(&sp, &sc, err, sizeof err)) {
        fprintf(stderr, "stereo-match: generated scene: %s\n", err);
        return 1;
    }
    int rc = 1;
    stereo_stage *s = NULL;
    snprintf(path, sizeof path, "%s/left.png", o->demo);
    if (image_write(path, &sc.left_rgb, err, sizeof err))
        goto fail;
    snprintf(path, sizeof path, "%s/right.png", o->demo);
    if (image_write(path, &sc.right_rgb, err, sizeof err))
        goto fail;
    o->p.num_disparities = 64;
    if ((rc = resolve_camera(o, NULL, 0, sp.width, sp.height)) != 0)
        goto done;
    rc = 1;
    o->left_in = &sc.left_rgb;
    double ms;
    if ((rc = create_stage(o, &sc.left_rgb, &sc.right_rgb, NULL, &s)) != 0 ||
        (rc = process_pair(o, s, &sc.left_rgb, &sc.right_rgb, &ms)) != 0)
        goto done;
    rc = 1;
    snprintf(path, sizeof path, "%s/disparity.pfm", o->demo);
    if (!o->color) {
        static char color_path[4096];
        snprintf(color_path, sizeof color_path, "%s/disparity-color.png", o->demo);
        o->color = color_path;
    }
    const char *paths[OUT_COUNT] = {path, o->right, o->color, o->confidence, o->depth, o->ply};
    if (write_outputs(o, s, paths))
        goto done;
    /* score: non-occluded pixels, error of valid pixels against the generated ground truth */
    const int16_t *d = stereo_disparity(s);
    const uint8_t *nonocc = sc.nonocc.data;
    size_t n = 0, valid = 0, bad1 = 0;
    double sum = 0;
    for (size_t i = 0; i < (size_t)sp.width * sp.height; i++) {
        if (!nonocc[i])
            continue;
        n++;
        if (!stereo_disparity_valid(d[i]))
            continue;
        double e = fabs(d[i] / 16.0 - sc.gt_left.data[i]);
        valid++;
        sum += e;
        bad1 += e > 1.0;
    }
    print_summary(o, s, ms);
    print_depth_summary(o);
    printf("generated scene %dx%d: %.1f%% of non-occluded pixels matched, mean error %.3f px, "
           "%.2f%% off by more than 1 px\n", sp.width, sp.height, 100.0 * valid / n,
           valid ? sum / valid : 0.0, valid ? 100.0 * bad1 / valid : 0.0);
    printf("wrote %s/left.png, right.png, disparity.pfm and %s\n", o->demo, o->color);
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "stereo-match: %s\n", err);
done:
    stereo_destroy(s);
    synth_free(&sc);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    outpath_remove_temps_on_signals(); /* Ctrl-C mid-sequence: no FILE.tmp.XXXXXX left behind */
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;
    return o.demo ? run_demo(&o) : o.sequence ? run_sequence(&o)
                                  : o.p.views > 2 ? run_views(&o) : run_files(&o);
}
