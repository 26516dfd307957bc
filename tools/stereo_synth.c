/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_synth.c — writes the generated stereo scene (hal/synth.h) with its ground truth.
 *
 *   stereo-synth [--size WxH] [--t SECONDS] [--seed N] [--max-disp N] [--edge-radius N]
 *                [--layout objects|street|facade] [--contrast C] [--right-gain G] [--right-offset O]
 *                [--right-gamma Y] [--vignette V] [--noise SIGMA]
 *                [--views B2,...] [--grey|--rgb] OUTDIR
 *
 * Exit status: 0 success, 1 output error (OUTDIR cannot be created, a write fails), 2 usage
 * error (also a file of OUTDIR that is a link, a directory or a device, or an OUTDIR that cannot
 * be written: checked before the rendering). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image_io.h"
#include "outpath.h"
#include "parse_num.h"
#include "synth.h"
#include "version.h"

#define PROG "stereo-synth"

static const char usage_text[] =
    "usage: " PROG " [options] OUTDIR\n"
    "Renders the generated stereo scene and writes into OUTDIR (created if needed):\n"
    "  left.png, right.png          the rectified pair (grey, or RGB with --rgb)\n"
    "  disp_left.pfm, disp_right.pfm  ground-truth disparity of each view (float, px)\n"
    "  nonocc.png                   255 = left pixel visible in both views, 0 = occluded\n"
    "  near_edge.png                255 = within --edge-radius px of a depth edge\n"
    "  view2.png, view3.png, ...    with --views: more views of the scene\n"
    "A left pixel (x, y) with disparity d matches the right pixel (x - d, y).\n"
    "\n"
    "  --size WxH        image size (default 640x480; each side 32..4096)\n"
    "  --layout NAME     objects (default): slanted background, panels and moving occluders;\n"
    "                    street: sky, a road plane from the horizon (40 % of the height) to\n"
    "                    the bottom, two slanted facades and three cars (static: --t is ignored);\n"
    "                    facade: the street's sky and road (horizon at 45 %), one long facade\n"
    "                    receding to the right with a regular grid of identical windows, and\n"
    "                    three thin poles (static)\n"
    "  --t SECONDS       scene time: the occluders move with it (default 0, the test scene)\n"
    "  --seed N          texture and noise seed (default 1; the geometry does not depend on it)\n"
    "  --max-disp N      disparity of the nearest object: all disparities lie in [N/6, N]\n"
    "                    (street, facade: in [round(N/16), N]; the bottom row is near N)\n"
    "                    (default: a multiple of 12 near width/12, 48 at 640 wide)\n"
    "  --edge-radius N   near_edge radius in px, 0..64 (default 2)\n"
    "  --contrast C      texture contrast about each texture's mean, 0.02..1 (default 1;\n"
    "                    0.1 is nearly textureless)\n"
    "Camera effects (the ground truth does not change), applied in this order to the exact\n"
    "pixel value v before rounding:\n"
    "  --vignette V      each view times 1 - V (r/rmax)^2, 0..0.9 (default 0); r from a centre\n"
    "                    2 % of the width right (left view) or left (right view) of the image\n"
    "                    centre, rmax = half the image diagonal\n"
    "  --right-gain G    right view: v -> 255 ((G v + O) / 255)^Y, G 0.25..4 (default 1),\n"
    "  --right-offset O  O -128..128 grey levels (default 0),\n"
    "  --right-gamma Y   Y 0.25..4 (default 1); G v + O below 0 gives 0\n"
    "  --noise SIGMA     Gaussian noise of SIGMA grey levels, 0..32 (default 0), independent\n"
    "                    per pixel and view, fixed by --seed; then rounding to 0..255\n"
    "  --views B2,...    more views on the line of the two cameras, at baseline ratio Bi\n"
    "                    relative to the left-right baseline (left.png is 0, right.png 1;\n"
    "                    negative: left of the left camera; |Bi| <= 4, no 0 or 1, none twice;\n"
    "                    at most 6): view i is viewI.png, where the left pixel x with\n"
    "                    disparity d is seen at x - Bi d (disp_left.pfm holds for each view).\n"
    "                    For stereo-match --baselines 1,B2,... left.png right.png view2.png ...\n"
    "  --grey, --rgb     colour of left.png/right.png and the views (default grey)\n"
    "  --help            print this help\n"
    "  --version         print the version, git commit and the backends built in\n"
    "\n"
    "Each file is written to a temporary file beside it and renamed into place; a file of\n"
    "OUTDIR that is a link, a directory or a device is refused before the rendering.\n"
    "Exit status: 0 ok, 1 output error, 2 usage error (or a refused output).\n";

enum { EXIT_OUTPUT = 1, EXIT_USAGE = 2 };

static int usage_error(const char *opt, const char *what, const char *value)
{
    fprintf(stderr, PROG ": %s %s, got \"%s\" (see --help)\n", opt, what, value);
    return -1;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *out)
{
    char err[256];
    if (parse_long_arg(opt, s, lo, hi, out, err, sizeof err)) {
        fprintf(stderr, PROG ": %s (see --help)\n", err);
        return -1;
    }
    return 0;
}

/* A number in lo..hi (finite, the whole argument). */
static int parse_real(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end, what[96];
    errno = 0;
    double v = strtod(s, &end);
    snprintf(what, sizeof what, "needs a number in %g..%g", lo, hi);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo || v > hi)
        return usage_error(opt, what, s);
    *out = v;
    return 0;
}

static int parse_size(const char *opt, const char *s, int *w, int *h)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X'))
        return usage_error(opt, "needs WxH (e.g. 640x480)", s);
    const char *hs = end + 1;
    long b = strtol(hs, &end, 10);
    if (end == hs || *end != '\0' || errno == ERANGE)
        return usage_error(opt, "needs WxH (e.g. 640x480)", s);
    if (a < SYNTH_MIN_SIZE || a > SYNTH_MAX_SIZE || b < SYNTH_MIN_SIZE || b > SYNTH_MAX_SIZE) {
        char what[96];
        snprintf(what, sizeof what, "needs each side in %d..%d", SYNTH_MIN_SIZE, SYNTH_MAX_SIZE);
        return usage_error(opt, what, s);
    }
    *w = (int)a, *h = (int)b;
    return 0;
}

#define MAX_EXTRA_VIEWS 6

/* --views: up to MAX_EXTRA_VIEWS ratios, each finite, non-zero, not 1, |B| <= SYNTH_MAX_BASELINE,
 * none twice; each error names the value by its position (view 2 is the first). */
static int parse_views(const char *opt, const char *s, double *views, int *n)
{
    const char *p = s;
    *n = 0;
    for (;;) {
        char *end;
        errno = 0;
        double b = strtod(p, &end);
        int view = *n + 2;
        if (end == p || (*end != ',' && *end != '\0') || errno == ERANGE || !isfinite(b)) {
            fprintf(stderr, PROG ": %s: view %d: not a number in \"%s\" (see --help)\n", opt,
                    view, s);
            return -1;
        }
        if (*n == MAX_EXTRA_VIEWS) {
            fprintf(stderr, PROG ": %s: more than %d views in \"%s\" (see --help)\n", opt,
                    MAX_EXTRA_VIEWS, s);
            return -1;
        }
        if (b == 0 || b == 1 || fabs(b) > SYNTH_MAX_BASELINE) {
            fprintf(stderr, PROG ": %s: view %d: %g is %s (see --help)\n", opt, view, b,
                    b == 0 ? "the left view's own position"
                    : b == 1 ? "the right view's position (right.png)"
                             : "outside -4..4");
            return -1;
        }
        for (int i = 0; i < *n; i++)
            if (views[i] == b) {
                fprintf(stderr, PROG ": %s: view %d: %g repeats view %d (see --help)\n", opt,
                        view, b, i + 2);
                return -1;
            }
        views[(*n)++] = b;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

/* mkdir -p: creates each missing component of path. */
static int make_dirs(const char *path)
{
    size_t len = strlen(path);
    char *buf = malloc(len + 1);
    if (!buf) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, PROG ": %s: cannot create directory: %s\n", buf, strerror(errno));
            free(buf);
            return -1;
        }
        buf[i] = c;
    }
    free(buf);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, PROG ": %s: not a directory\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    synth_params p = {.width = 640, .height = 480, .t = 0, .seed = 1, .max_disparity = 0,
                      .edge_radius = 2};
    int rgb = 0, nviews = 0;
    outpath_remove_temps_on_signals(); /* no temporary file left by a signal */
    double views[MAX_EXTRA_VIEWS];
    const char *outdir = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            version_print(PROG);
            return 0;
        }
        if (strcmp(a, "--grey") == 0 || strcmp(a, "--gray") == 0) {
            rgb = 0;
            continue;
        }
        if (strcmp(a, "--rgb") == 0) {
            rgb = 1;
            continue;
        }
        if (a[0] == '-' && a[1] == '-') {
            /* --opt VALUE or --opt=VALUE */
            char opt[32];
            const char *eq = strchr(a, '='), *val;
            size_t n = eq ? (size_t)(eq - a) : strlen(a);
            if (n >= sizeof opt)
                n = sizeof opt - 1;
            memcpy(opt, a, n);
            opt[n] = '\0';
            int known = !strcmp(opt, "--size") || !strcmp(opt, "--t") || !strcmp(opt, "--seed") ||
                        !strcmp(opt, "--max-disp") || !strcmp(opt, "--edge-radius") ||
                        !strcmp(opt, "--views") || !strcmp(opt, "--layout") ||
                        !strcmp(opt, "--contrast") || !strcmp(opt, "--right-gain") ||
                        !strcmp(opt, "--right-offset") || !strcmp(opt, "--right-gamma") ||
                        !strcmp(opt, "--vignette") || !strcmp(opt, "--noise");
            if (!known) {
                fprintf(stderr, PROG ": unknown option '%s' (see --help)\n", a);
                return EXIT_USAGE;
            }
            if (eq) {
                val = eq + 1;
            } else if (i + 1 < argc) {
                val = argv[++i];
            } else {
                fprintf(stderr, PROG ": %s: needs a value (see --help)\n", opt);
                return EXIT_USAGE;
            }
            long v;
            if (!strcmp(opt, "--size")) {
                if (parse_size(opt, val, &p.width, &p.height) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--t")) {
                char *end;
                errno = 0;
                p.t = strtod(val, &end);
                if (end == val || *end != '\0' || errno == ERANGE || !isfinite(p.t)) {
                    usage_error(opt, "needs a number of seconds", val);
                    return EXIT_USAGE;
                }
            } else if (!strcmp(opt, "--seed")) {
                if (parse_int(opt, val, 0, UINT_MAX > LONG_MAX ? LONG_MAX : (long)UINT_MAX, &v) != 0)
                    return EXIT_USAGE;
                p.seed = (unsigned)v;
            } else if (!strcmp(opt, "--views")) {
                if (parse_views(opt, val, views, &nviews) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--layout")) {
                if ((p.layout = synth_layout_from_name(val)) < 0) {
                    usage_error(opt, "needs objects, street or facade", val);
                    return EXIT_USAGE;
                }
            } else if (!strcmp(opt, "--contrast")) {
                if (parse_real(opt, val, SYNTH_MIN_CONTRAST, 1, &p.contrast) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--right-gain")) {
                if (parse_real(opt, val, 0.25, 4, &p.right_gain) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--right-offset")) {
                if (parse_real(opt, val, -128, 128, &p.right_offset) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--right-gamma")) {
                if (parse_real(opt, val, 0.25, 4, &p.right_gamma) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--vignette")) {
                if (parse_real(opt, val, 0, 0.9, &p.vignette) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--noise")) {
                if (parse_real(opt, val, 0, 32, &p.noise) != 0)
                    return EXIT_USAGE;
            } else if (!strcmp(opt, "--max-disp")) {
                if (parse_int(opt, val, SYNTH_MIN_DISPARITY, SYNTH_MAX_SIZE / 2, &v) != 0)
                    return EXIT_USAGE;
                p.max_disparity = (int)v;
            } else {
                if (parse_int(opt, val, 0, 64, &v) != 0)
                    return EXIT_USAGE;
                p.edge_radius = (int)v;
            }
            continue;
        }
        if (outdir) {
            fprintf(stderr, PROG ": more than one OUTDIR (\"%s\", \"%s\") (see --help)\n", outdir, a);
            return EXIT_USAGE;
        }
        outdir = a;
    }
    if (!outdir || !*outdir) {
        fprintf(stderr, PROG ": no OUTDIR given (see --help)\n");
        return EXIT_USAGE;
    }

    if (p.max_disparity > p.width / 2) {
        fprintf(stderr, PROG ": --max-disp needs at most width / 2 = %d, got %d (see --help)\n",
                p.width / 2, p.max_disparity);
        return EXIT_USAGE;
    }
    char err[512];
    if (synth_params_check(&p, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s (see --help)\n", err);
        return EXIT_USAGE;
    }
    if (make_dirs(outdir) != 0)
        return EXIT_OUTPUT;
    static const char *const names[] = {"left.png", "right.png", "disp_left.pfm",
                                        "disp_right.pfm", "nonocc.png", "near_edge.png"};
    enum { N_SCENE = sizeof names / sizeof names[0], N_FILES = N_SCENE + MAX_EXTRA_VIEWS };
    const int n_files = N_SCENE + nviews;
    size_t plen = strlen(outdir) + 32;
    char *paths = malloc(N_FILES * plen), errpath[2 * PATH_MAX + 256];
    if (!paths) {
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_OUTPUT;
    }
    /* before the rendering: no file of OUTDIR may be a link, a directory or a device, and
     * OUTDIR must take new files (outpath.h) */
    outpath_file out[N_FILES];
    for (int i = 0; i < n_files; i++) {
        if (i < N_SCENE)
            snprintf(paths + i * plen, plen, "%s/%s", outdir, names[i]);
        else
            snprintf(paths + i * plen, plen, "%s/view%d.png", outdir, i - N_SCENE + 2);
        out[i] = (outpath_file){"OUTDIR", paths + i * plen};
    }
    int refused = outpath_check(out, n_files, NULL, 0, errpath, sizeof errpath);
    free(paths);
    if (refused) {
        fprintf(stderr, PROG ": %s\n", errpath);
        return EXIT_USAGE;
    }
    synth_scene sc;
    if (synth_render(&p, &sc, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return EXIT_OUTPUT;
    }

    struct {
        const char *name;
        const image *img;
        const fmap *map;
    } files[] = {
        {"left.png", rgb ? &sc.left_rgb : &sc.left_grey, NULL},
        {"right.png", rgb ? &sc.right_rgb : &sc.right_grey, NULL},
        {"disp_left.pfm", NULL, &sc.gt_left},
        {"disp_right.pfm", NULL, &sc.gt_right},
        {"nonocc.png", &sc.nonocc, NULL},
        {"near_edge.png", &sc.near_edge, NULL},
    };
    char *path = malloc(plen);
    if (!path) {
        fprintf(stderr, PROG ": out of memory\n");
        synth_free(&sc);
        return EXIT_OUTPUT;
    }
    int status = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0] && status == 0; i++) {
        snprintf(path, plen, "%s/%s", outdir, files[i].name);
        int rc = files[i].img ? image_write(path, files[i].img, err, sizeof err)
                              : pfm_write(path, files[i].map, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, PROG ": %s\n", err);
            status = EXIT_OUTPUT;
        }
    }
    /* the more views: each rendered into one image and written before the next */
    if (status == 0 && nviews > 0) {
        synth *h = NULL;
        image im = {0};
        if (synth_create(&p, &h, err, sizeof err) != 0 ||
            image_alloc(&im, p.width, p.height, rgb ? 3 : 1, 8) != 0) {
            fprintf(stderr, PROG ": %s\n", h ? "out of memory" : err);
            status = EXIT_OUTPUT;
        }
        for (int i = 0; i < nviews && status == 0; i++) {
            snprintf(path, plen, "%s/view%d.png", outdir, i + 2);
            if (synth_render_view(h, p.t, views[i], im.data, rgb ? 3 : 1,
                                  (size_t)p.width * (rgb ? 3 : 1), err, sizeof err) != 0 ||
                image_write(path, &im, err, sizeof err) != 0) {
                fprintf(stderr, PROG ": %s\n", err);
                status = EXIT_OUTPUT;
            }
        }
        image_free(&im);
        synth_destroy(h);
    }
    if (status == 0)
        printf("%s: %dx%d%s%s t=%g D=%d, disparities %.3f..%.3f (search 0..%d)\n", outdir,
               p.width, p.height, p.layout == SYNTH_LAYOUT_OBJECTS ? "" : " ",
               p.layout == SYNTH_LAYOUT_OBJECTS ? "" : synth_layout_name(p.layout), p.t,
               synth_max_disparity(&p), sc.gt_min, sc.gt_max, synth_max_disparity(&p));
    free(path);
    synth_free(&sc);
    return status;
}
