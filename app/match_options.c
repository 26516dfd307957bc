/* SPDX-License-Identifier: Apache-2.0 */
/* match_options.c — stereo-match's command line (match_options.h): the --help text, the
 * program's own options beside the matching and backend options of gpu/stereo_options.c's
 * table, the positional arguments (a pair, a sequence's patterns or folders, more views) and
 * the checks made before any work, each failure one line naming the option (exit status 2).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "match_options.h"
#include "parse_num.h"
#include "sequence.h"
#include "version.h"


static const char usage_text[] =
    "usage: stereo-match [options] LEFT RIGHT OUTPUT\n"
    "       stereo-match [options] 'left_%04d.png' 'right_%04d.png' 'out_%04d.png'\n"
    "       stereo-match [options] LEFTDIR RIGHTDIR OUTDIR\n"
    "       stereo-match --demo DIR [options]\n"
    "       stereo-match [options] --baselines 1,B2,...,BN REF VIEW1 ... VIEWN OUTPUT\n"
    "       stereo-match [options] --maps RIG REF VIEW1 ... VIEWN OUTPUT\n"
    "\n"
    "Computes the disparity of LEFT (reference view) against RIGHT with semi-global matching.\n"
    "LEFT/RIGHT: PNG, JPEG, PGM/PPM (grey or colour). OUTPUT: .pfm (float disparity, +inf =\n"
    "invalid, Middlebury) or .png (16-bit, value = 256 * disparity, 0 = invalid).\n"
    "\n"
    "Sequences, through one stage (every pair the size of the first):\n"
    "  patterns  LEFT, RIGHT and OUTPUT hold one frame number (%d, %04d, ...); frames run from\n"
    "            0 or 1 while the left file exists; OUTPUT gets the same number\n"
    "  folders   the image files of LEFTDIR and RIGHTDIR, sorted by name; folders sharing\n"
    "            names (KITTI image_2 / image_3) pair by name, others in order; OUTDIR (which\n"
    "            must exist) gets NAME.png (16-bit) per left file NAME.*\n"
    "  A file without a partner is refused before any work, naming it; a pair of another\n"
    "  size when it comes (the pairs before it are written). --right, --color,\n"
    "  --confidence, --depth and --ply then take a pattern or an existing folder too (a\n"
    "  folder gets NAME.png, 16-bit mm, and NAME.ply). Progress per frame\n"
    "  (frame i/N, fps) on stderr, then a summary line on stdout.\n"
    "\n"
    "Matching:\n";

/* after the table's matching options (gpu/stereo_options.c): those of stereo-match alone */
static const char usage_views[] =
    "      --baselines 1,B2,...,BN  multi-baseline matching: REF and N views rectified to one\n"
    "                         image plane with collinear centres; Bi is view i's baseline\n"
    "                         relative to VIEW1's (negative: the other side of REF; whole\n"
    "                         16ths, |Bi| <= 8, no 0, none twice); the disparity is against\n"
    "                         VIEW1, the candidate in view i lies at x - Bi d (its cost\n"
    "                         interpolated between two pixels). N = 1 is the pair. A single\n"
    "                         REF (no sequences), not mi; CPU and CUDA backends. With\n"
    "                         --maps RIG: optional, and must equal the rig's ratios\n"
    "      --combine RULE     with --baselines: how the views' costs make one: sides (default:\n"
    "                         the mean over the views, or the views on one side of REF alone\n"
    "                         where the other side looks occluded around the pixel) or sum\n"
    "                         (the mean over the views that see the position)\n"
    "      --maps FILE        rectify both inputs first: a map file or a calibration YAML\n"
    "                         (stereo-calibrate --maps / --out, or OpenCV's M1 D1 ... Q keys),\n"
    "                         or LEFT,RIGHT: the ROS camera_info files of a stereo calibration\n"
    "                         More than two images: a rig file (stereo-calibrate --view) of\n"
    "                         one camera per image, REF VIEW1 ... VIEWN OUTPUT: REF is the\n"
    "                         rig's reference camera, VIEW1 its first other camera (ratio 1),\n"
    "                         then the rig's other cameras in camera order (as stereo-calibrate\n"
    "                         prints them); each image is rectified by its camera's map, the\n"
    "                         baselines are the rig's ratios rounded to 16ths (--baselines may\n"
    "                         be given; each must equal its camera's, else it is refused)\n";

/* after the table's backend options */
static const char usage_memory[] =
    "  The CPU backend needs about 5 MB per megapixel and disparity (measured peak RSS:\n"
    "  1280x960 -d 128 0.81 GB, 1920x1080 -d 256 2.7 GB); a size and D that need more than\n"
    "  80 % of the machine's memory are refused up front with the figure (exit status 1).\n";

/* the rest, the program's own options */
static const char usage_outputs[] =
    "Outputs:\n"
    "      --color FILE.png   colour-mapped disparity (invalid = black)\n"
    "      --colormap NAME    turbo (default), jet, grey\n"
    "      --color-range R    the disparities the colour map spans: fixed (default: the search\n"
    "                         range dmin..dmin+D-1), auto (the 1st to 99th percentile of the\n"
    "                         valid disparities of the pair; printed in the summary), or\n"
    "                         MIN,MAX in pixels (e.g. 8,40.5)\n"
    "      --legend           add a colour bar with disparity ticks (px) below the --color image\n"
    "      --right FILE       right-view disparity (.pfm or .png; needs the LR check)\n"
    "      --confidence FILE  confidence 0..255 as an 8-bit PNG/PGM\n"
    "      --depth FILE       depth of the left view: .png 16-bit millimetres (0 = no depth,\n"
    "                         and deeper than 65.535 m), .pfm float metres (+inf = no depth);\n"
    "                         mm = round(f*B*1000*16 / (16*d + 16*doffs)), half up\n"
    "      --ply FILE.ply     point cloud: binary little-endian PLY, x y z (float, metres, the\n"
    "                         rectified left camera: x right, y down, z forward) and the left\n"
    "                         image's red green blue, one point per pixel with a depth; as\n"
    "                         OpenCV's reprojectImageTo3D with Q (pixel (x, y) is column x, row\n"
    "                         y: pixel centres at integer coordinates)\n"
    "      --focal PX         focal length of the rectified images in pixels, and\n"
    "      --baseline M       the baseline in metres, for --depth / --ply when --maps gives no\n"
    "                         camera (a calibration YAML, a camera_info pair and a version 2\n"
    "                         map file give f, the centre and B; a version 1 map file does not)\n"
    "      --center CX,CY     principal point in pixels with --focal (default: the image\n"
    "                         centre, ((width - 1) / 2, (height - 1) / 2))\n"
    "      --repeat N         run the pair N times and report the median time\n"
    "      --progress         progress on stderr also when it is not a terminal: a line per\n"
    "                         10 % once a pair has run 2 s (CPU backend), a line per frame\n"
    "                         of a sequence (on a terminal: one line, rewritten)\n"
    "      --demo DIR         render the generated scene into DIR, match it, score it\n"
    "  -q, --quiet            print nothing but errors\n"
    "  stereo-live's --stats-json and Python's min_confidence are not options here: each is\n"
    "  answered with where its output is in this program\n"
    "  -h, --help             this text\n"
    "      --version          version, git commit and the backends built in\n"
    "\n"
    "Outputs are checked before any work: one that names an input or another output (as a\n"
    "file: another path or a hard link counts), a symbolic link, a directory, a device, or a\n"
    "file in a folder that cannot be written is refused with exit status 2. Each output is\n"
    "written to a temporary file beside it and renamed into place.\n"
    "Inputs larger than 8192x8192 (images, maps, calibration sizes) are refused from their\n"
    "header, before anything is decoded or allocated (exit status 1).\n";

/* --help: the hand-written text around the matching and backend options of the one table */
static void print_usage(void)
{
    fputs(usage_text, stdout);
    stereo_options_print_help(stdout, STEREO_OPT_MATCHING);
    fputs(usage_views, stdout);
    fputs("Backend:\n", stdout);
    stereo_options_print_help(stdout, STEREO_OPT_BACKEND);
    fputs(usage_memory, stdout);
    fputs(usage_outputs, stdout);
}

int usage_error(const char *fmt, ...)
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

enum { O_MAPS = 256, O_COLOR, O_CMAP, O_RIGHT, O_CONF, O_REPEAT, O_DEMO, O_VERSION, O_CRANGE,
       O_LEGEND, O_PROGRESS, O_DEPTH, O_PLY, O_FOCAL, O_BASELINE, O_CENTER, O_BASELINES,
       O_COMBINE, O_STAGE = 512 /* + the row of gpu/stereo_options.c's table */,
       O_ELSEWHERE = 768 /* + the row of elsewhere[] */ };

/* The options of stereo-live and the Python module that stereo-match has not: each is answered
 * with where its output is here (exit status 2); tests/test_options.py holds the list */
static const struct {
    const char *name, *what, *here;
} elsewhere[] = {
    {"stats-json", "stereo-live's (its summary as JSON)", "stereo-match prints one summary line "
     "on stdout (-q: none)"},
    {"min-confidence", "Python's (min_confidence=N)", "stereo-match writes the confidence map "
     "with --confidence FILE (0..255; 0 where the disparity is invalid): mask the disparity "
     "by it"},
};
enum { N_ELSEWHERE = sizeof elsewhere / sizeof elsewhere[0] };

/* A real number option: the whole string, finite, in [lo, hi]; prints the message. */
static int parse_real(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "stereo-match: %s: '%s' is not a number in %g..%g (see --help)\n", opt,
                s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* --center CX,CY: two finite numbers within +-1e6 px; prints the message. */
static int parse_center(const char *s, double c[2])
{
    const char *comma = strchr(s, ',');
    char x[64];
    if (!comma || (size_t)(comma - s) >= sizeof x) {
        fprintf(stderr, "stereo-match: --center: '%s' is not CX,CY in pixels (see --help)\n", s);
        return -1;
    }
    snprintf(x, sizeof x, "%.*s", (int)(comma - s), s);
    return parse_real("--center (CX)", x, -1e6, 1e6, &c[0]) ||
           parse_real("--center (CY)", comma + 1, -1e6, 1e6, &c[1]) ? -1 : 0;
}

/* A matching or backend option (gpu/stereo_options.h); prints the message. */
static int stage_option(options *o, const char *name, const char *value)
{
    char err[512];
    if (stereo_option_set(&o->stage, name, value, err, sizeof err)) {
        fprintf(stderr, "stereo-match: %s (see --help)\n", err);
        return -1;
    }
    return 0;
}

/* --color-range: fixed, auto, or MIN,MAX in pixels (MIN < MAX, within what a disparity holds). */
static int parse_color_range(const char *a, options *o)
{
    if (!strcmp(a, "fixed") || !strcmp(a, "auto")) {
        o->range_mode = a[0] == 'f' ? RANGE_FIXED : RANGE_AUTO;
        return 0;
    }
    char *end;
    errno = 0;
    double lo = strtod(a, &end), hi = 0;
    int ok = end != a && *end == ',' && errno == 0;
    if (ok) {
        const char *b = end + 1;
        hi = strtod(b, &end);
        ok = end != b && *end == 0 && errno == 0;
    }
    if (!ok || !(lo >= 0 && hi <= 2047 && lo < hi))
        return usage_error("--color-range: '%s' is not fixed, auto or MIN,MAX in pixels with "
                           "0 <= MIN < MAX <= 2047", a);
    o->range_mode = RANGE_GIVEN;
    o->range_given = (colormap_range){(int)lround(lo * STEREO_SUBPIXEL_SCALE),
                                      (int)lround(hi * STEREO_SUBPIXEL_SCALE)};
    if (o->range_given.hi <= o->range_given.lo)
        return usage_error("--color-range: '%s': MIN and MAX are closer than 1/16 px", a);
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* --baselines with the positional arguments REF VIEW1 ... VIEWN OUTPUT: the count, the
 * values the stage needs (b_1 = 1, no 0, none twice), each error naming the view and its
 * file. N = 1 leaves the pair to the usual path. */
static int parse_views(options *o, int argc, char **argv)
{
    stereo_params *p = &o->p;
    int n = o->nviews, nargs = argc - optind;
    if (o->demo)
        return usage_error("--baselines: not with --demo (it renders a pair)");
    if (nargs != n + 2)
        return usage_error("--baselines: %d ratio%s for %d view%s (%d arguments: expected REF, "
                           "one view per ratio, OUTPUT)", n, n == 1 ? "" : "s",
                           nargs > 2 ? nargs - 2 : 0, nargs - 2 == 1 ? "" : "s", nargs);
    const char *const *views = (const char *const *)argv + optind + 1; /* views[i - 1] */
    char b[24];
    if (o->baselines_from_rig) /* the values come from the rig (run_views) */
        ;
    else if (p->baseline[1] != STEREO_BASELINE_SCALE)
        return usage_error("--baselines: view 1 (%s) has %s, must be 1: the disparity is "
                           "measured against view 1", views[0],
                           stereo_baseline_str(p->baseline[1], b, sizeof b));
    for (int i = 2; i <= n && !o->baselines_from_rig; i++) {
        if (p->baseline[i] == 0)
            return usage_error("--baselines: view %d (%s) has 0: a view at the reference's "
                               "centre (baselines are non-zero)", i, views[i - 1]);
        for (int j = 1; j < i; j++)
            if (p->baseline[j] == p->baseline[i])
                return usage_error("--baselines: view %d (%s) has %s, as view %d (%s): each "
                                   "view needs its own baseline", i, views[i - 1],
                                   stereo_baseline_str(p->baseline[i], b, sizeof b), j,
                                   views[j - 1]);
    }
    if (n == 1)
        return 0; /* the pair, as without --baselines */
    p->views = n + 1;
    o->left_path = argv[optind];
    for (int i = 0; i <= n; i++)
        o->view_path[i] = argv[optind + i];
    o->right_path = o->view_path[1];
    o->out_path = argv[optind + n + 1];
    for (int i = 0; i <= n; i++)
        if (seq_is_pattern(o->view_path[i]) || is_dir(o->view_path[i]))
            return usage_error("--baselines: %s %s is a %s: more than two views take single "
                               "images (no sequences yet)", i ? "view" : "REF", o->view_path[i],
                               is_dir(o->view_path[i]) ? "folder" : "frame-number pattern");
    if (o->depth || o->ply)
        return usage_error("%s: not with more than two views yet (give REF and VIEW1 alone for "
                           "depth)", o->depth ? "--depth" : "--ply");
    if (!disparity_ext_ok(o->out_path))
        return usage_error("%s: output must end in .pfm or .png", o->out_path);
    return 0;
}

int parse_options(int argc, char **argv, options *o)
{
    static const struct option own[] = {
        {"maps", required_argument, 0, O_MAPS},
        {"color", required_argument, 0, O_COLOR}, {"colormap", required_argument, 0, O_CMAP},
        {"right", required_argument, 0, O_RIGHT}, {"confidence", required_argument, 0, O_CONF},
        {"repeat", required_argument, 0, O_REPEAT}, {"demo", required_argument, 0, O_DEMO},
        {"color-range", required_argument, 0, O_CRANGE}, {"legend", no_argument, 0, O_LEGEND},
        {"progress", no_argument, 0, O_PROGRESS},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, O_VERSION},
        {"depth", required_argument, 0, O_DEPTH}, {"ply", required_argument, 0, O_PLY},
        {"focal", required_argument, 0, O_FOCAL}, {"baseline", required_argument, 0, O_BASELINE},
        {"center", required_argument, 0, O_CENTER},
        {"baselines", required_argument, 0, O_BASELINES},
        {"combine", required_argument, 0, O_COMBINE}};
    /* the program's own options, then the matching and backend options of the table */
    struct option longopts[sizeof own / sizeof own[0] + N_ELSEWHERE + 40];
    char shortopts[32] = ":qh";
    size_t nlong = sizeof own / sizeof own[0];
    memcpy(longopts, own, sizeof own);
    /* with or without a value, so that --stats-json FILE is answered as --stats-json */
    for (int i = 0; i < N_ELSEWHERE; i++)
        longopts[nlong++] = (struct option){elsewhere[i].name, optional_argument, 0,
                                            O_ELSEWHERE + i};
    if (stereo_options_getopt(longopts, &nlong, sizeof longopts / sizeof longopts[0], O_STAGE,
                              shortopts, sizeof shortopts) != 0) {
        fprintf(stderr, "stereo-match: the option table does not fit the parser\n");
        return 1;
    }
    stereo_params *p = &o->p;
    int rc_views;
    stereo_options_init(&o->stage);
    o->stage.auto_ok = 1;
    o->cmap = COLORMAP_TURBO;
    o->repeat = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const char *a = optarg;
        int bad = 0;
        const stereo_option_info *row = stereo_option_from_getopt(c, O_STAGE);
        if (row) {
            if (stage_option(o, row->name, row->metavar ? a : NULL))
                return EXIT_USAGE;
            continue;
        }
        if (c >= O_ELSEWHERE && c < O_ELSEWHERE + N_ELSEWHERE) {
            fprintf(stderr, "stereo-match: --%s is %s; %s\n", elsewhere[c - O_ELSEWHERE].name,
                    elsewhere[c - O_ELSEWHERE].what, elsewhere[c - O_ELSEWHERE].here);
            return EXIT_USAGE;
        }
        switch (c) {
        case O_MAPS: o->maps = a; break;
        case O_COLOR: o->color = a; break;
        case O_CMAP:
            if (colormap_from_str(a, &o->cmap))
                return usage_error("--colormap: '%s' is not turbo, jet or grey", a);
            break;
        case O_RIGHT: o->right = a; break;
        case O_CONF: o->confidence = a; break;
        case O_REPEAT: bad = parse_int("--repeat", a, 1, 100000, &o->repeat); break;
        case O_DEMO: o->demo = a; break;
        case O_CRANGE:
            if (parse_color_range(a, o))
                return EXIT_USAGE;
            break;
        case O_LEGEND: o->legend = 1; break;
        case O_PROGRESS: o->progress = 1; break;
        case O_DEPTH: o->depth = a; break;
        case O_PLY: o->ply = a; break;
        case O_FOCAL: bad = parse_real("--focal", a, 1e-3, 1e7, &o->focal); o->focal_set = 1; break;
        case O_BASELINE:
            bad = parse_real("--baseline", a, 1e-6, 1e4, &o->baseline);
            o->baseline_set = 1;
            break;
        case O_CENTER: bad = parse_center(a, o->center); o->center_set = 1; break;
        case O_BASELINES: {
            char why[160];
            if (stereo_baselines_from_str(a, o->stage.p.baseline, &o->nviews, why, sizeof why))
                return usage_error("--baselines '%s': %s", a, why);
            break;
        }
        case O_COMBINE:
            if (stereo_combine_from_str(a, &o->stage.p.combine))
                return usage_error("--combine: '%s' is neither sides nor sum", a);
            o->combine_set = 1;
            break;
        case 'q': o->quiet = 1; break;
        case 'h': print_usage(); exit(0);
        case O_VERSION: version_print("stereo-match"); exit(0);
        case ':': return usage_error("%s: needs a value", argv[optind - 1]);
        default: {
            char could[256];
            if (long_option_matches(argv[optind - 1], longopts, could, sizeof could) > 1)
                return usage_error("option '%s' is ambiguous: %s", argv[optind - 1], could);
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        }
        if (bad)
            return EXIT_USAGE;
    }
    char err[512];
    if (stereo_options_finish(&o->stage, err, sizeof err))
        return usage_error("%s", err);
    *p = o->stage.p;
    int nargs = argc - optind;
    if (o->nviews == 0 && o->maps && !o->demo && nargs > 3) {
        o->nviews = nargs - 2; /* REF VIEW1 ... OUTPUT through a rig file's maps */
        o->baselines_from_rig = 1;
    }
    if (o->nviews > 0 && (rc_views = parse_views(o, argc, argv)) != 0)
        return rc_views;
    if (o->nviews > 0 && o->stage.auto_disparities)
        return usage_error("--disparities auto: measures a pair; with more views give the "
                           "number of disparities");
    if (o->combine_set && o->nviews < 2)
        return usage_error("--combine needs two views or more besides REF (--baselines, or "
                           "--maps RIG)");
    if (o->demo) {
        if (nargs != 0)
            return usage_error("--demo takes no LEFT RIGHT OUTPUT arguments ('%s')", argv[optind]);
    } else if (o->nviews > 1) {
        /* the views and the output were taken by parse_views */
    } else {
        if (nargs != 3)
            return usage_error("expected LEFT RIGHT OUTPUT, got %d argument%s%s", nargs,
                               nargs == 1 ? "" : "s",
                               nargs > 3 ? " (more views need --baselines or --maps RIG)" : "");
        o->left_path = argv[optind];
        o->right_path = argv[optind + 1];
        o->out_path = argv[optind + 2];
        /* a folder LEFT with a file RIGHT stays a pair: its reader says what is wrong */
        o->sequence = seq_is_pattern(o->left_path)                              ? 1
                      : is_dir(o->left_path) && is_dir(o->right_path)            ? 2
                                                                                : 0;
        if (o->sequence != 2 && !disparity_ext_ok(o->out_path))
            return usage_error("%s: output must end in .pfm or .png", o->out_path);
    }
    if (o->sequence == 1) { /* every name of the sequence holds the frame number */
        const char *names[7] = {"RIGHT", "OUTPUT", "--right", "--color", "--confidence",
                                "--depth", "--ply"};
        const char *paths[7] = {o->right_path, o->out_path, o->right, o->color, o->confidence,
                                o->depth, o->ply};
        char perr[512];
        for (int i = 0; i < 7; i++)
            if (paths[i] && seq_check_pattern(names[i], paths[i], perr, sizeof perr))
                return usage_error("a sequence of patterns: %s", perr);
    } else if (o->sequence == 2) { /* and every one of its outputs is a folder */
        const char *names[4] = {"OUTDIR", "OUTDIR", "--right", "--color"};
        const char *paths[4] = {o->out_path, o->out_path, o->right, o->color};
        for (int i = 0; i < 5; i++) {
            const char *n = i < 4 ? names[i] : "--confidence", *d = i < 4 ? paths[i] : o->confidence;
            if (d && !is_dir(d))
                return usage_error("%s %s: not a folder (LEFT %s is a folder: a sequence of "
                                   "folders needs folders, existing ones for the outputs)", n, d,
                                   o->left_path);
        }
        const char *dnames[2] = {"--depth", "--ply"}, *dpaths[2] = {o->depth, o->ply};
        for (int i = 0; i < 2; i++)
            if (dpaths[i] && !is_dir(dpaths[i]))
                return usage_error("%s %s: not a folder (LEFT %s is a folder: a sequence of "
                                   "folders needs folders, existing ones for the outputs)",
                                   dnames[i], dpaths[i], o->left_path);
    }
    if (o->depth && o->sequence != 2 && strcasecmp(extension(o->depth), ".png") &&
        strcasecmp(extension(o->depth), ".pfm"))
        return usage_error("--depth %s: must end in .png (16-bit mm) or .pfm (float m)", o->depth);
    if (o->ply && o->sequence != 2 && strcasecmp(extension(o->ply), ".ply"))
        return usage_error("--ply %s: must end in .ply", o->ply);
    if (o->focal_set != o->baseline_set)
        return usage_error("%s without %s: the camera for --depth / --ply needs both",
                           o->focal_set ? "--focal" : "--baseline",
                           o->focal_set ? "--baseline" : "--focal");
    if (o->center_set && !o->focal_set)
        return usage_error("--center goes with --focal and --baseline");
    if (o->focal_set && !o->depth && !o->ply)
        return usage_error("--focal / --baseline%s are used only by --depth and --ply: give one "
                           "of them", o->center_set ? " / --center" : "");
    if ((o->depth || o->ply) && !o->maps && !o->focal_set)
        return usage_error("%s needs the camera: --maps with a calibration (YAML, LEFT,RIGHT "
                           "camera_info, or a version 2 map file), or --focal PX --baseline M "
                           "[--center CX,CY]", o->depth ? "--depth" : "--ply");
    if (o->sequence && o->repeat > 1)
        return usage_error("--repeat: a sequence runs each pair once");
    if (o->legend && !o->color && !o->demo)
        return usage_error("--legend draws into the --color image: give --color FILE.png");
    if (o->right && o->sequence != 2 && !disparity_ext_ok(o->right))
        return usage_error("--right %s: must end in .pfm or .png", o->right);
    if (o->right && !p->lr_check)
        return usage_error("--right needs the LR check (drop --no-lr)");
    if (p->min_disparity < 0) /* a 16-bit PNG holds 256 d >= 0 only (disparity_write) */
        for (int i = 0; i < 2; i++) {
            const char *path = i ? o->right : o->out_path;
            if (path && (o->sequence == 2 || strcasecmp(extension(path), ".pfm")))
                return usage_error("%s %s: --min-disparity %d gives negative disparities, "
                                   "which only a .pfm holds (a 16-bit PNG has 256 * d >= 0)%s",
                                   i ? "--right" : "OUTPUT", path, p->min_disparity,
                                   o->sequence == 2 ? "; a folder of outputs gets PNGs: use "
                                                      "frame-number patterns" : "");
        }
    if (o->color && o->sequence != 2 && strcasecmp(extension(o->color), ".png") != 0)
        return usage_error("--color %s: must end in .png", o->color);
    if (o->confidence && o->sequence != 2 && strcasecmp(extension(o->confidence), ".png") &&
        strcasecmp(extension(o->confidence), ".pgm"))
        return usage_error("--confidence %s: must end in .png or .pgm", o->confidence);
    if (o->confidence)
        p->confidence = 1;
    o->progress_tty = isatty(STDERR_FILENO);
    return 0;
}
