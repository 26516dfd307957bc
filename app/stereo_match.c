/* SPDX-License-Identifier: Apache-2.0 */
/* stereo-match — compute a disparity map from a stereo pair with the stereo stage.
 *
 *   stereo-match [options] LEFT RIGHT OUTPUT
 *   stereo-match --demo DIR        generated scene: match it and score against its ground truth
 *
 * Exit status: 0 success, 1 bad input or processing failure, 2 bad usage (an output that names
 * an input or another output, a link, a directory or a device, or lies in a folder we cannot
 * write: outpath.h, checked before any work). Every failure prints one line naming the file or
 * option; no output file is left half-written (writes are atomic).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calib.h"
#include "colormap.h"
#include "image_io.h"
#include "mapfile.h"
#include "outpath.h"
#include "parse_num.h"
#include "stereo.h"
#include "synth.h"
#include "version.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: stereo-match [options] LEFT RIGHT OUTPUT\n"
    "       stereo-match --demo DIR [options]\n"
    "\n"
    "Computes the disparity of LEFT (reference view) against RIGHT with semi-global matching.\n"
    "LEFT/RIGHT: PNG, JPEG, PGM/PPM (grey or colour). OUTPUT: .pfm (float disparity, +inf =\n"
    "invalid, Middlebury) or .png (16-bit, value = 256 * disparity, 0 = invalid).\n"
    "\n"
    "Matching:\n"
    "  -d, --disparities N    number of disparities D: multiple of 16, 16..256 (default 64)\n"
    "      --min-disparity N  smallest disparity searched (default 0)\n"
    "      --cost rank|census|mi  rank 9x9 (default), census 9x7, or mi: hierarchical mutual\n"
    "                         information (Hirschmueller 2008; robust to gain, gamma and other\n"
    "                         global differences between the cameras; the pair is matched at\n"
    "                         1/16 .. 1/2 first to find the MI table; CPU backend only so far)\n"
    "      --window N         rank window side, odd 3..15 (default 9)\n"
    "      --paths 4|8        SGM paths (default 8)\n"
    "      --p1 N, --p2 N     SGM penalties, 1 <= p1 < p2 <= 1023 (default: tuned per cost)\n"
    "      --p2-adapt T       intensity-adaptive P2: P2*T/(T + |dI|), 0 = off (default 16)\n"
    "      --uniqueness U     reject when another disparity is within U% (0 = off, default)\n"
    "      --no-subpixel      integer disparities\n"
    "      --no-lr            no left-right consistency check\n"
    "      --lr-tolerance N   LR check tolerance in pixels (default 1)\n"
    "      --no-median        no 3x3 median\n"
    "      --maps FILE        rectify both inputs first: a map file or a calibration YAML\n"
    "                         (stereo-calibrate --maps / --out, or OpenCV's M1 D1 ... Q keys),\n"
    "                         or LEFT,RIGHT: the ROS camera_info files of a stereo calibration\n"
    "Backend:\n"
    "      --backend B        auto (default: CUDA if a device is present, else CPU), cpu, cuda\n"
    "      --threads N        CPU worker threads (default: one per core)\n"
    "                         The CPU backend needs about 5 MB per megapixel and disparity\n"
    "                         (measured peak RSS: 1280x960 -d 128 0.81 GB, 1920x1080 -d 256\n"
    "                         2.7 GB); a size and D that need more than 80 % of the machine's\n"
    "                         memory are refused up front with the figure (exit status 1)\n"
    "      --sms N            CUDA: run on N SMs of the GPU (a green context, CUDA 12.4+; the\n"
    "                         hardware may round N up), 0 = all (default); the CPU ignores it\n"
    "Outputs:\n"
    "      --color FILE.png   colour-mapped disparity (invalid = black)\n"
    "      --colormap NAME    turbo (default), jet, grey\n"
    "      --right FILE       right-view disparity (.pfm or .png; needs the LR check)\n"
    "      --confidence FILE  confidence 0..255 as an 8-bit PNG/PGM\n"
    "      --repeat N         run the pair N times and report the median time\n"
    "      --demo DIR         render the generated scene into DIR, match it, score it\n"
    "  -q, --quiet            print nothing but errors\n"
    "  -h, --help             this text\n"
    "      --version          version, git commit and the backends built in\n"
    "\n"
    "Outputs are checked before any work: one that names an input or another output (as a\n"
    "file: another path or a hard link counts), a symbolic link, a directory, a device, or a\n"
    "file in a folder that cannot be written is refused with exit status 2. Each output is\n"
    "written to a temporary file beside it and renamed into place.\n"
    "Inputs larger than 8192x8192 (images, maps, calibration sizes) are refused from their\n"
    "header, before anything is decoded or allocated (exit status 1).\n";

typedef struct {
    stereo_params p;
    int p1_set, p2_set;
    const char *maps, *color, *right, *confidence, *demo;
    colormap_id cmap;
    int repeat, quiet;
    const char *left_path, *right_path, *out_path;
} options;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stereo-match: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see --help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* Strict integer parse (parse_num.h); prints the message. */
static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char err[256];
    if (parse_int_arg(opt, s, lo, hi, out, err, sizeof err)) {
        fprintf(stderr, "stereo-match: %s (see --help)\n", err);
        return -1;
    }
    return 0;
}

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) ? dot : "";
}

static int disparity_ext_ok(const char *path) { return !strcasecmp(extension(path), ".pfm") || !strcasecmp(extension(path), ".png"); }

enum { O_MIN = 256, O_COST, O_WINDOW, O_PATHS, O_P1, O_P2, O_P2A, O_UNIQ, O_NOSUB, O_NOLR, O_LRTOL,
       O_NOMED, O_MAPS, O_BACKEND, O_THREADS, O_SMS, O_COLOR, O_CMAP, O_RIGHT, O_CONF, O_REPEAT,
       O_DEMO, O_VERSION };

static int parse_options(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        {"disparities", required_argument, 0, 'd'}, {"min-disparity", required_argument, 0, O_MIN},
        {"cost", required_argument, 0, O_COST}, {"window", required_argument, 0, O_WINDOW},
        {"paths", required_argument, 0, O_PATHS}, {"p1", required_argument, 0, O_P1},
        {"p2", required_argument, 0, O_P2}, {"p2-adapt", required_argument, 0, O_P2A},
        {"uniqueness", required_argument, 0, O_UNIQ}, {"no-subpixel", no_argument, 0, O_NOSUB},
        {"no-lr", no_argument, 0, O_NOLR}, {"lr-tolerance", required_argument, 0, O_LRTOL},
        {"no-median", no_argument, 0, O_NOMED}, {"maps", required_argument, 0, O_MAPS},
        {"backend", required_argument, 0, O_BACKEND}, {"threads", required_argument, 0, O_THREADS},
        {"sms", required_argument, 0, O_SMS},
        {"color", required_argument, 0, O_COLOR}, {"colormap", required_argument, 0, O_CMAP},
        {"right", required_argument, 0, O_RIGHT}, {"confidence", required_argument, 0, O_CONF},
        {"repeat", required_argument, 0, O_REPEAT}, {"demo", required_argument, 0, O_DEMO},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, O_VERSION}, {0, 0, 0, 0}};
    stereo_params *p = &o->p;
    stereo_params_default(p, 0, 0);
    o->cmap = COLORMAP_TURBO;
    o->repeat = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":d:qh", longopts, NULL)) != -1) {
        const char *a = optarg;
        int bad = 0;
        switch (c) {
        case 'd': bad = parse_int("--disparities", a, INT_MIN, INT_MAX, &p->num_disparities); break;
        case O_MIN: bad = parse_int("--min-disparity", a, 0, 2047, &p->min_disparity); break;
        case O_COST:
            if (stereo_cost_from_str(a, &p->cost))
                return usage_error("--cost: '%s' is not %s", a, stereo_cost_names());
            break;
        case O_WINDOW: bad = parse_int("--window", a, 3, 15, &p->rank_window); break;
        case O_PATHS: bad = parse_int("--paths", a, 4, 8, &p->paths); break;
        case O_P1: bad = parse_int("--p1", a, 1, 1022, &p->p1); o->p1_set = 1; break;
        case O_P2: bad = parse_int("--p2", a, 2, 1023, &p->p2); o->p2_set = 1; break;
        case O_P2A: bad = parse_int("--p2-adapt", a, 0, 255, &p->p2_adapt); break;
        case O_UNIQ: bad = parse_int("--uniqueness", a, 0, 99, &p->uniqueness); break;
        case O_NOSUB: p->subpixel = 0; break;
        case O_NOLR: p->lr_check = 0; break;
        case O_LRTOL: bad = parse_int("--lr-tolerance", a, 0, 255, &p->lr_tolerance); break;
        case O_NOMED: p->median = 0; break;
        case O_MAPS: o->maps = a; break;
        case O_BACKEND:
            if (stereo_backend_from_str(a, &p->backend))
                return usage_error("--backend: '%s' is not auto, cpu or cuda", a);
            break;
        case O_THREADS: bad = parse_int("--threads", a, 0, 256, &p->threads); break;
        case O_SMS: bad = parse_int("--sms", a, 0, STEREO_MAX_SMS, &p->sms); break;
        case O_COLOR: o->color = a; break;
        case O_CMAP:
            if (colormap_from_str(a, &o->cmap))
                return usage_error("--colormap: '%s' is not turbo, jet or grey", a);
            break;
        case O_RIGHT: o->right = a; break;
        case O_CONF: o->confidence = a; break;
        case O_REPEAT: bad = parse_int("--repeat", a, 1, 100000, &o->repeat); break;
        case O_DEMO: o->demo = a; break;
        case 'q': o->quiet = 1; break;
        case 'h': fputs(usage_text, stdout); exit(0);
        case O_VERSION: version_print("stereo-match"); exit(0);
        case ':': return usage_error("%s: needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (bad)
            return EXIT_USAGE;
    }
    if (p->paths != 4 && p->paths != 8)
        return usage_error("--paths: %d is neither 4 nor 8", p->paths);
    int D = p->num_disparities;
    char why[80];
    if (stereo_check_disparities(D, why, sizeof why) != 0)
        return usage_error("--disparities: %s", why);
    if (p->min_disparity + D > 2047)
        return usage_error("--min-disparity: %d plus %d disparities exceeds 2047",
                           p->min_disparity, D);
    if (p->rank_window % 2 == 0)
        return usage_error("--window: %d is not odd in 3..15", p->rank_window);
    /* penalties: tuned defaults for the chosen cost unless given */
    int p1, p2;
    stereo_default_penalties(p->cost, p->rank_window, &p1, &p2);
    if (!o->p1_set)
        p->p1 = p1;
    if (!o->p2_set)
        p->p2 = p2 > p->p1 ? p2 : p->p1 + 1;
    if (p->p2 <= p->p1) {
        return usage_error("--p2: %d must be greater than --p1 %d", p->p2, p->p1);
    }
    int nargs = argc - optind;
    if (o->demo) {
        if (nargs != 0)
            return usage_error("--demo takes no LEFT RIGHT OUTPUT arguments ('%s')", argv[optind]);
    } else {
        if (nargs != 3)
            return usage_error("expected LEFT RIGHT OUTPUT, got %d argument%s", nargs,
                               nargs == 1 ? "" : "s");
        o->left_path = argv[optind];
        o->right_path = argv[optind + 1];
        o->out_path = argv[optind + 2];
        if (!disparity_ext_ok(o->out_path))
            return usage_error("%s: output must end in .pfm or .png", o->out_path);
    }
    if (o->right && !disparity_ext_ok(o->right))
        return usage_error("--right %s: must end in .pfm or .png", o->right);
    if (o->right && !p->lr_check)
        return usage_error("--right needs the LR check (drop --no-lr)");
    if (o->color && strcasecmp(extension(o->color), ".png") != 0)
        return usage_error("--color %s: must end in .png", o->color);
    if (o->confidence && strcasecmp(extension(o->confidence), ".png") &&
        strcasecmp(extension(o->confidence), ".pgm"))
        return usage_error("--confidence %s: must end in .png or .pgm", o->confidence);
    if (o->confidence)
        p->confidence = 1;
    return 0;
}

/* ---- outputs ---------------------------------------------------------------------------- */

static int write_disparity(const char *path, const int16_t *d, int w, int h, char *err, size_t n)
{
    size_t count = (size_t)w * h;
    if (!strcasecmp(extension(path), ".pfm")) {
        fmap m = {w, h, malloc(count * sizeof(float))};
        if (!m.data) {
            snprintf(err, n, "%s: out of memory", path);
            return -1;
        }
        for (size_t i = 0; i < count; i++)
            m.data[i] = d[i] < 0 ? INFINITY : d[i] / (float)STEREO_SUBPIXEL_SCALE;
        int rc = pfm_write(path, &m, err, n);
        free(m.data);
        return rc;
    }
    image im;
    if (image_alloc(&im, w, h, 1, 16) != 0) {
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    uint16_t *o = im.data;
    for (size_t i = 0; i < count; i++) /* 256 d = 16 * (16 d); 0 = invalid */
        o[i] = d[i] < 0 ? 0 : (uint16_t)(d[i] * 16 > 65535 ? 65535 : d[i] * 16);
    int rc = image_write(path, &im, err, n);
    image_free(&im);
    return rc;
}

static int write_color(const char *path, const int16_t *d, const stereo_params *p, colormap_id id,
                       char *err, size_t n)
{
    image im;
    if (image_alloc(&im, p->width, p->height, 3, 8) != 0) {
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    uint8_t lut[256 * 3];
    colormap_lut(id, lut);
    colormap_disparity_rows(d, p->width, p->min_disparity, p->num_disparities, lut, im.data, 3,
                            (size_t)p->width * 3, 0, p->height);
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

/* Creates the stage for the pair, runs it o->repeat times; *stage_out stays for the outputs. */
static int run_stage(options *o, const image *left, const image *right, const stereo_map *maps,
                     stereo_stage **stage_out, double *median_ms)
{
    char err[512];
    stereo_params *p = &o->p;
    p->width = maps ? maps[0].width : left->width;
    p->height = maps ? maps[0].height : left->height;
    if (p->num_disparities >= p->width)
        return usage_error("--disparities: %d must be smaller than the image width %d",
                           p->num_disparities, p->width);
    stereo_stage *s;
    stereo_status st = stereo_create(p, maps, &s, err, sizeof err);
    if (st != STEREO_OK) {
        fprintf(stderr, "stereo-match: %s%s\n",
                p->backend == STEREO_BACKEND_CUDA && st != STEREO_ERR_PARAM
                    ? "--backend cuda: " : "", err);
        return st == STEREO_ERR_PARAM ? EXIT_USAGE : 1;
    }
    stereo_image l = as_stage_image(left), r = as_stage_image(right);
    double *t = malloc(sizeof(double) * (size_t)o->repeat);
    if (!t) {
        stereo_destroy(s);
        fprintf(stderr, "stereo-match: out of memory\n");
        return 1;
    }
    for (int i = 0; i < o->repeat; i++) {
        double t0 = now_ms();
        st = stereo_process(s, &l, &r);
        t[i] = now_ms() - t0;
        if (st != STEREO_OK) {
            fprintf(stderr, "stereo-match: %s\n", stereo_error(s));
            free(t);
            stereo_destroy(s);
            return 1;
        }
    }
    qsort(t, (size_t)o->repeat, sizeof *t, cmp_double);
    *median_ms = t[o->repeat / 2];
    free(t);
    *stage_out = s;
    return 0;
}

static int write_outputs(const options *o, stereo_stage *s, const char *out_path)
{
    char err[512];
    const stereo_params *p = stereo_get_params(s);
    int rc = write_disparity(out_path, stereo_disparity(s), p->width, p->height, err, sizeof err);
    if (!rc && o->right)
        rc = write_disparity(o->right, stereo_disparity_right(s), p->width, p->height, err,
                             sizeof err);
    if (!rc && o->color)
        rc = write_color(o->color, stereo_disparity(s), p, o->cmap, err, sizeof err);
    if (!rc && o->confidence)
        rc = write_confidence(o->confidence, stereo_confidence(s), p->width, p->height, err,
                              sizeof err);
    if (rc)
        fprintf(stderr, "stereo-match: %s\n", err);
    return rc ? 1 : 0;
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
        valid += d[i] >= 0;
    char green[48] = "";
    if (p->sms > 0 && stereo_stage_sms(s) > 0)
        snprintf(green, sizeof green, " on %d SMs (green context)", stereo_stage_sms(s));
    printf("%dx%d D=%d dmin=%d %s %d paths, backend %s%s: %.1f ms%s, %.1f%% valid\n", p->width,
           p->height, p->num_disparities, p->min_disparity, stereo_cost_to_str(p->cost), p->paths,
           stereo_backend_to_str(stereo_active_backend(s)), green, ms,
           o->repeat > 1 ? " (median)" : "", 100.0 * valid / n);
    stereo_mi_info mi;
    if (stereo_mi_status(s, &mi) == 0) /* the last run's split (gpu/mi.h) */
        printf("mi, last run: hierarchy (%d level%s below full size, 1/%d first) %.1f ms of "
               "%.1f ms (%.0f%%), full-size table %.1f ms\n", mi.levels,
               mi.levels == 1 ? "" : "s", 1 << mi.levels, mi.hierarchy_ms, mi.total_ms,
               mi.total_ms > 0 ? 100 * mi.hierarchy_ms / mi.total_ms : 0, mi.table_ms);
}

/* Refuses, before any work, an output that names an input or another output, a link, a
 * directory or a device, or lies in a folder we cannot write (outpath.h); EXIT_USAGE after
 * printing why, else 0. extra: the --demo files (or NULL). */
static int check_outputs(const options *o, const outpath_file *extra, int n_extra)
{
    outpath_file out[8], in[4];
    int n_out = 0, n_in = 0;
    for (int i = 0; i < n_extra; i++)
        out[n_out++] = extra[i];
    out[n_out++] = (outpath_file){"output", o->out_path};
    out[n_out++] = (outpath_file){"--right", o->right};
    out[n_out++] = (outpath_file){"--color", o->color};
    out[n_out++] = (outpath_file){"--confidence", o->confidence};
    in[n_in++] = (outpath_file){"input LEFT", o->left_path};
    in[n_in++] = (outpath_file){"input RIGHT", o->right_path};
    /* --maps: a file, or LEFT,RIGHT camera_info files */
    char maps[2][4096] = {"", ""};
    if (o->maps) {
        const char *comma = strchr(o->maps, ',');
        snprintf(maps[0], sizeof maps[0], "%.*s", comma ? (int)(comma - o->maps) : 4095, o->maps);
        if (comma)
            snprintf(maps[1], sizeof maps[1], "%s", comma + 1);
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
    if (o->maps && calib_load_maps(o->maps, left.width, left.height, maps, err, sizeof err)) {
        fprintf(stderr, "stereo-match: %s\n", err);
        goto done;
    }
    double ms;
    rc = run_stage(o, &left, &right, o->maps ? maps : NULL, &s, &ms);
    if (rc)
        goto done;
    rc = write_outputs(o, s, o->out_path);
    if (!rc)
        print_summary(o, s, ms);
done:
    stereo_destroy(s);
    mapfile_free(maps);
    image_free(&left);
    image_free(&right);
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
    double ms;
    if ((rc = run_stage(o, &sc.left_rgb, &sc.right_rgb, NULL, &s, &ms)) != 0)
        goto done;
    rc = 1;
    snprintf(path, sizeof path, "%s/disparity.pfm", o->demo);
    if (!o->color) {
        static char color_path[4096];
        snprintf(color_path, sizeof color_path, "%s/disparity-color.png", o->demo);
        o->color = color_path;
    }
    if (write_outputs(o, s, path))
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
        if (d[i] < 0)
            continue;
        double e = fabs(d[i] / 16.0 - sc.gt_left.data[i]);
        valid++;
        sum += e;
        bad1 += e > 1.0;
    }
    print_summary(o, s, ms);
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
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;
    return o.demo ? run_demo(&o) : run_files(&o);
}
