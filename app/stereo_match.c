/* SPDX-License-Identifier: Apache-2.0 */
/* stereo-match — compute a disparity map from a stereo pair with the stereo stage.
 *
 *   stereo-match [options] LEFT RIGHT OUTPUT
 *   stereo-match [options] 'left_%04d.png' 'right_%04d.png' 'out_%04d.png'   a sequence
 *   stereo-match [options] LEFTDIR RIGHTDIR OUTDIR                            a sequence
 *   stereo-match --demo DIR        generated scene: match it and score against its ground truth
 *   stereo-match --baselines 1,B2,...,BN REF VIEW1 ... VIEWN OUTPUT   multi-baseline matching
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
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
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
#include "legend.h"
#include "mapfile.h"
#include "outpath.h"
#include "parse_num.h"
#include "sequence.h"
#include "stereo.h"
#include "synth.h"
#include "version.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: stereo-match [options] LEFT RIGHT OUTPUT\n"
    "       stereo-match [options] 'left_%04d.png' 'right_%04d.png' 'out_%04d.png'\n"
    "       stereo-match [options] LEFTDIR RIGHTDIR OUTDIR\n"
    "       stereo-match --demo DIR [options]\n"
    "       stereo-match [options] --baselines 1,B2,...,BN REF VIEW1 ... VIEWN OUTPUT\n"
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
    "  size when it comes (the pairs before it are written). --right, --color and\n"
    "  --confidence then take a pattern or an existing folder too. Progress per frame\n"
    "  (frame i/N, fps) on stderr, then a summary line on stdout.\n"
    "\n"
    "Matching:\n"
    "  -d, --disparities N    number of disparities D: multiple of 16, 16..256 (default 64)\n"
    "      --min-disparity N  smallest disparity searched (default 0)\n"
    "      --cost NAME        matching cost: rank (9x9, default), census (9x7), ad (absolute\n"
    "                         grey difference, capped at 63), bt (Birchfield-Tomasi, capped;\n"
    "                         CPU backend only so far),\n"
    "                         or mi: hierarchical mutual information (Hirschmueller 2008;\n"
    "                         robust to gain, gamma and other global differences between the\n"
    "                         cameras; the pair is matched at 1/16 .. 1/2 first to find the MI\n"
    "                         table; CPU backend only so far)\n"
    "      --window N         rank window side, odd 3..15 (default 9)\n"
    "      --method sgm|bm    semi-global matching (default) or block matching: the cost\n"
    "                         summed over a --block N x N box, winner-takes-all (CPU backend\n"
    "                         only so far)\n"
    "      --block N          bm box side, odd 3..31 (default 9)\n"
    "      --paths 4|8        SGM paths (default 8)\n"
    "      --p1 N[,N...]      SGM penalties, 1 <= p1 < p2 <= 1023 (default: tuned per cost);\n"
    "      --p2 N[,N...]      one value for every path or one per path, in path order:\n"
    "                         +x, -x, +y, -y, +x+y, -x+y, +x-y, -x-y (4 paths: the first 4)\n"
    "      --p2-adapt T       intensity-adaptive P2: P2*T/(T + |dI|), 0 = off (default 16);\n"
    "                         it adapts each path's P2\n"
    "      --path-weights W[,W...]  weight of each path's L in the sum, 0..255: one for every\n"
    "                         path or one per path in path order, not all 0 (default 1); the\n"
    "                         sum of W*(max cost + P2) over the paths must stay below 65536\n"
    "                         (weights other than 1: CPU backend only so far)\n"
    "      --uniqueness U     reject when another disparity is within U% (0 = off, default)\n"
    "      --no-subpixel      integer disparities\n"
    "      --no-lr            no left-right consistency check\n"
    "      --lr-tolerance N   LR check tolerance in pixels (default 1)\n"
    "      --no-median        no 3x3 median\n"
    "      --baselines 1,B2,...,BN  multi-baseline matching: REF and N views rectified to one\n"
    "                         image plane with collinear centres; Bi is view i's baseline\n"
    "                         relative to VIEW1's (negative: the other side of REF; whole\n"
    "                         16ths, |Bi| <= 8, no 0, none twice); the disparity is against\n"
    "                         VIEW1, the candidate in view i lies at x - Bi d (its cost\n"
    "                         interpolated between two pixels). N = 1 is the pair. A single\n"
    "                         REF (no sequences), no --maps, not mi; CPU backend only so far\n"
    "      --combine RULE     with --baselines: how the views' costs make one: sides (default:\n"
    "                         the mean over the views, or the views on one side of REF alone\n"
    "                         where the other side looks occluded around the pixel) or sum\n"
    "                         (the mean over the views that see the position)\n"
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
    "      --color-range R    the disparities the colour map spans: fixed (default: the search\n"
    "                         range dmin..dmin+D-1), auto (the 1st to 99th percentile of the\n"
    "                         valid disparities of the pair; printed in the summary), or\n"
    "                         MIN,MAX in pixels (e.g. 8,40.5)\n"
    "      --legend           add a colour bar with disparity ticks (px) below the --color image\n"
    "      --right FILE       right-view disparity (.pfm or .png; needs the LR check)\n"
    "      --confidence FILE  confidence 0..255 as an 8-bit PNG/PGM\n"
    "      --repeat N         run the pair N times and report the median time\n"
    "      --progress         progress on stderr also when it is not a terminal: a line per\n"
    "                         10 % once a pair has run 2 s (CPU backend), a line per frame\n"
    "                         of a sequence (on a terminal: one line, rewritten)\n"
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

enum { RANGE_FIXED, RANGE_AUTO, RANGE_GIVEN };

typedef struct {
    stereo_params p;
    int p1_set, p2_set;
    int np1, np2, nweights;       /* values in the --p1 / --p2 / --path-weights lists */
    int p1_list[STEREO_MAX_PATHS], p2_list[STEREO_MAX_PATHS], weights[STEREO_MAX_PATHS];
    const char *maps, *color, *right, *confidence, *demo;
    colormap_id cmap;
    int range_mode;             /* RANGE_*: --color-range */
    colormap_range range_given; /* 16ths of a pixel */
    colormap_range range_used;  /* the last --color image's range (for the summary) */
    int legend, progress, progress_tty;
    int repeat, quiet;
    int sequence;               /* 0: one pair; 1: patterns; 2: folders */
    const char *left_path, *right_path, *out_path;
    /* --baselines: nviews other views (1 = the pair), view_path[1..nviews] (view_path[0] =
     * left_path); combine_set: --combine was given */
    int nviews, combine_set;
    const char *view_path[STEREO_MAX_VIEWS];
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
       O_DEMO, O_VERSION, O_METHOD, O_BLOCK, O_WEIGHTS, O_CRANGE, O_LEGEND, O_PROGRESS,
       O_BASELINES, O_COMBINE };

/* A --p1 / --p2 / --path-weights list; prints the message. */
static int parse_list(const char *opt, const char *s, int lo, int hi, int *out, int *n)
{
    char err[256];
    if (parse_int_list(opt, s, lo, hi, out, STEREO_MAX_PATHS, n, err, sizeof err)) {
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
    if (p->baseline[1] != STEREO_BASELINE_SCALE)
        return usage_error("--baselines: view 1 (%s) has %s, must be 1: the disparity is "
                           "measured against view 1", views[0],
                           stereo_baseline_str(p->baseline[1], b, sizeof b));
    for (int i = 2; i <= n; i++) {
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
    if (o->maps)
        return usage_error("--maps: not with --baselines yet (give views rectified to one "
                           "image plane)");
    if (!disparity_ext_ok(o->out_path))
        return usage_error("%s: output must end in .pfm or .png", o->out_path);
    return 0;
}

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
        {"color-range", required_argument, 0, O_CRANGE}, {"legend", no_argument, 0, O_LEGEND},
        {"progress", no_argument, 0, O_PROGRESS},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, O_VERSION}, {"method", required_argument, 0, O_METHOD},
        {"block", required_argument, 0, O_BLOCK},
        {"path-weights", required_argument, 0, O_WEIGHTS},
        {"baselines", required_argument, 0, O_BASELINES},
        {"combine", required_argument, 0, O_COMBINE}, {0, 0, 0, 0}};
    stereo_params *p = &o->p;
    int rc_views;
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
                return usage_error("--cost: '%s' is not one of %s", a, stereo_cost_names());
            break;
        case O_METHOD:
            if (stereo_method_from_str(a, &p->method))
                return usage_error("--method: '%s' is not one of %s", a, stereo_method_names());
            break;
        case O_BLOCK: bad = parse_int("--block", a, STEREO_BLOCK_MIN, STEREO_BLOCK_MAX, &p->block); break;
        case O_WEIGHTS: bad = parse_list("--path-weights", a, 0, 255, o->weights, &o->nweights); break;
        case O_WINDOW: bad = parse_int("--window", a, 3, 15, &p->rank_window); break;
        case O_PATHS: bad = parse_int("--paths", a, 4, 8, &p->paths); break;
        case O_P1: bad = parse_list("--p1", a, 1, 1022, o->p1_list, &o->np1); o->p1_set = 1; break;
        case O_P2: bad = parse_list("--p2", a, 2, 1023, o->p2_list, &o->np2); o->p2_set = 1; break;
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
        case O_CRANGE:
            if (parse_color_range(a, o))
                return EXIT_USAGE;
            break;
        case O_LEGEND: o->legend = 1; break;
        case O_PROGRESS: o->progress = 1; break;
        case O_BASELINES: {
            char why[160];
            if (stereo_baselines_from_str(a, p->baseline, &o->nviews, why, sizeof why))
                return usage_error("--baselines '%s': %s", a, why);
            break;
        }
        case O_COMBINE:
            if (stereo_combine_from_str(a, &p->combine))
                return usage_error("--combine: '%s' is neither sides nor sum", a);
            o->combine_set = 1;
            break;
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
    if (p->block % 2 == 0)
        return usage_error("--block: %d is not odd in %d..%d", p->block, STEREO_BLOCK_MIN,
                           STEREO_BLOCK_MAX);
    /* penalties: tuned defaults for the chosen cost unless given; a list gives one per path
     * (p1 / p2 then take its first value, for the summary) */
    const struct { const char *opt; int n; } lists[3] = {
        {"--p1", o->np1}, {"--p2", o->np2}, {"--path-weights", o->nweights}};
    for (int i = 0; i < 3; i++)
        if (lists[i].n > 1 && lists[i].n != p->paths)
            return usage_error("%s: %d values for %d paths (give one value, or one per path in "
                               "path order: +x, -x, +y, -y%s)", lists[i].opt, lists[i].n,
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
            return usage_error("--path-weights: '%d,...' are all 0 (weights are 0..255, at "
                               "least one positive)", o->weights[0]);
        for (int r = 0; r < STEREO_MAX_PATHS; r++)
            p->path_weight[r] = o->weights[o->nweights > 1 ? r : 0];
    }
    for (int r = 0; r < p->paths; r++) {
        int q1, q2;
        stereo_path_penalties(p, r, &q1, &q2);
        if (!o->p2_set && q2 <= q1) /* a default P2 below a given P1 follows it */
            p->p2_path[r] = q2 = q1 + 1;
        if (q2 <= q1)
            return usage_error("--p2: %d must be greater than --p1 %d%s", q2, q1,
                               o->np1 > 1 || o->np2 > 1 ? " (on each path)" : "");
    }
    int nargs = argc - optind;
    if (o->nviews > 0 && (rc_views = parse_views(o, argc, argv)) != 0)
        return rc_views;
    if (o->combine_set && o->nviews < 2)
        return usage_error("--combine needs --baselines with two views or more besides REF");
    if (o->demo) {
        if (nargs != 0)
            return usage_error("--demo takes no LEFT RIGHT OUTPUT arguments ('%s')", argv[optind]);
    } else if (o->nviews > 1) {
        /* the views and the output were taken by parse_views */
    } else {
        if (nargs != 3)
            return usage_error("expected LEFT RIGHT OUTPUT, got %d argument%s%s", nargs,
                               nargs == 1 ? "" : "s",
                               nargs > 3 ? " (more views need --baselines)" : "");
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
        const char *names[5] = {"RIGHT", "OUTPUT", "--right", "--color", "--confidence"};
        const char *paths[5] = {o->right_path, o->out_path, o->right, o->color, o->confidence};
        char perr[512];
        for (int i = 0; i < 5; i++)
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
    }
    if (o->sequence && o->repeat > 1)
        return usage_error("--repeat: a sequence runs each pair once");
    if (o->legend && !o->color && !o->demo)
        return usage_error("--legend draws into the --color image: give --color FILE.png");
    if (o->right && o->sequence != 2 && !disparity_ext_ok(o->right))
        return usage_error("--right %s: must end in .pfm or .png", o->right);
    if (o->right && !p->lr_check)
        return usage_error("--right needs the LR check (drop --no-lr)");
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

/* Creates the stage for pairs of left's size (or the maps' output size). */
static int create_stage(options *o, const image *left, const stereo_map *maps,
                        stereo_stage **stage_out)
{
    char err[512];
    stereo_params *p = &o->p;
    p->width = maps ? maps[0].width : left->width;
    p->height = maps ? maps[0].height : left->height;
    if (p->num_disparities >= p->width)
        return usage_error("--disparities: %d must be smaller than the image width %d",
                           p->num_disparities, p->width);
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

/* The outputs of one pair: path[0] the disparity, then --right, --color, --confidence (NULL:
 * not asked for). */
enum { OUT_DISP, OUT_RIGHT, OUT_COLOR, OUT_CONF, OUT_COUNT };

static int write_outputs(options *o, stereo_stage *s, const char *const path[OUT_COUNT])
{
    char err[4096 + 256];
    const stereo_params *p = stereo_get_params(s);
    int rc = write_disparity(path[OUT_DISP], stereo_disparity(s), p->width, p->height, err,
                             sizeof err);
    if (!rc && path[OUT_RIGHT])
        rc = write_disparity(path[OUT_RIGHT], stereo_disparity_right(s), p->width, p->height, err,
                             sizeof err);
    if (!rc && path[OUT_COLOR])
        rc = write_color(path[OUT_COLOR], stereo_disparity(s), p, o, err, sizeof err);
    if (!rc && path[OUT_CONF])
        rc = write_confidence(path[OUT_CONF], stereo_confidence(s), p->width, p->height, err,
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
    stereo_mi_info mi;
    if (stereo_mi_status(s, &mi) == 0) /* the last run's split (gpu/mi.h) */
        printf("mi, last run: hierarchy (%d level%s below full size, 1/%d first) %.1f ms of "
               "%.1f ms (%.0f%%), full-size table %.1f ms\n", mi.levels,
               mi.levels == 1 ? "" : "s", 1 << mi.levels, mi.hierarchy_ms, mi.total_ms,
               mi.total_ms > 0 ? 100 * mi.hierarchy_ms / mi.total_ms : 0, mi.table_ms);
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
    outpath_file out[8], in[4 + STEREO_MAX_VIEWS];
    int n_out = 0, n_in = 0;
    for (int i = 0; i < n_extra; i++)
        out[n_out++] = extra[i];
    out[n_out++] = (outpath_file){"output", o->out_path};
    out[n_out++] = (outpath_file){"--right", o->right};
    out[n_out++] = (outpath_file){"--color", o->color};
    out[n_out++] = (outpath_file){"--confidence", o->confidence};
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

/* REF and the --baselines views (more than two images): one set, one output. */
static int run_views(options *o)
{
    char err[512];
    const int n = o->p.views;
    image im[STEREO_MAX_VIEWS] = {{0}};
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
        if (im[i].width != im[0].width || im[i].height != im[0].height) {
            fprintf(stderr, "stereo-match: view %d %s is %dx%d but REF %s is %dx%d: every view "
                    "must have the reference's size\n", i, o->view_path[i], im[i].width,
                    im[i].height, o->view_path[0], im[0].width, im[0].height);
            goto done;
        }
    }
    double ms;
    rc = create_stage(o, &im[0], NULL, &s);
    if (!rc)
        rc = process_views(o, s, im, n, &ms);
    if (rc)
        goto done;
    const char *paths[OUT_COUNT] = {o->out_path, o->right, o->color, o->confidence};
    rc = write_outputs(o, s, paths);
    if (!rc)
        print_summary(o, s, ms);
done:
    stereo_destroy(s);
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
    if (o->maps && calib_load_maps(o->maps, left.width, left.height, maps, err, sizeof err)) {
        fprintf(stderr, "stereo-match: %s\n", err);
        goto done;
    }
    double ms;
    rc = create_stage(o, &left, o->maps ? maps : NULL, &s);
    if (!rc)
        rc = process_pair(o, s, &left, &right, &ms);
    if (rc)
        goto done;
    const char *paths[OUT_COUNT] = {o->out_path, o->right, o->color, o->confidence};
    rc = write_outputs(o, s, paths);
    if (!rc)
        print_summary(o, s, ms);
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
    const char *target[OUT_COUNT] = {o->out_path, o->right, o->color, o->confidence};
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
            if (seq_output_path(q, i, target[k], ".png", path, sizeof path) ||
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
    static const char *const what[OUT_COUNT] = {"output", "--right", "--color", "--confidence"};
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
    double t_start = now_ms(), stage_ms = 0, valid_pct = 0;
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
            if (o->maps && calib_load_maps(o->maps, w0, h0, maps, err, sizeof err)) {
                fprintf(stderr, "stereo-match: %s\n", err);
                goto done;
            }
            if ((rc = create_stage(o, &left, o->maps ? maps : NULL, &s)) != 0)
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
        if (write_outputs(o, s, (const char *const *)outs + (size_t)i * OUT_COUNT))
            goto done;
        const stereo_params *p = stereo_get_params(s);
        size_t n = (size_t)p->width * p->height, valid = 0;
        const int16_t *d = stereo_disparity(s);
        for (size_t k = 0; k < n; k++)
            valid += d[k] >= 0;
        valid_pct += 100.0 * valid / n;
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
    double ms;
    if ((rc = create_stage(o, &sc.left_rgb, NULL, &s)) != 0 ||
        (rc = process_pair(o, s, &sc.left_rgb, &sc.right_rgb, &ms)) != 0)
        goto done;
    rc = 1;
    snprintf(path, sizeof path, "%s/disparity.pfm", o->demo);
    if (!o->color) {
        static char color_path[4096];
        snprintf(color_path, sizeof color_path, "%s/disparity-color.png", o->demo);
        o->color = color_path;
    }
    const char *paths[OUT_COUNT] = {path, o->right, o->color, o->confidence};
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
    return o.demo ? run_demo(&o) : o.sequence ? run_sequence(&o)
                                  : o.p.views > 2 ? run_views(&o) : run_files(&o);
}
