/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_eval.c — scores a disparity map against ground truth (Middlebury/KITTI-style metrics).
 *
 *   stereo-eval [options] DISP GT
 *
 * Invalid output pixels are first filled the way the KITTI stereo devkit does (background
 * interpolation), so a method is not rewarded for leaving hard pixels out; density reports how
 * much it left out. Then, over the evaluated pixels (GT valid, optionally non-occluded, inside the
 * border): bad-1/2/4 (% with |d - gt| > 1/2/4 px), avgerr (mean |d - gt|), density (% valid
 * before filling), n.
 *
 * With --disparities D (and --min-disparity M, default 0), the range DISP was matched with, it
 * also reports the evaluated pixels whose ground truth lies beyond that range (no candidate of the
 * matcher can reach them) and the smallest D that would cover them.
 *
 * With --confidence FILE (stereo-match --confidence: 0..255, 0 where DISP is invalid) it also
 * reports how well the confidence ranks the errors: for each coverage C of --coverage (percent,
 * default 50,80,95,100), bad-2 over the C % most confident of the evaluated pixels DISP has
 * (valid before filling; 100: bad2_valid), and the confidence threshold that keeps them. Pixels
 * of equal confidence are ranked alike: where the C % boundary falls inside one confidence value,
 * that value's pixels count with the fraction of them the coverage takes (the expected figure of
 * a random tie-break), so the figure does not depend on the order of the pixels.
 *
 * Exit status: 0 success, 1 input error (unreadable file, size mismatch), 2 usage error. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image_io.h"
#include "parse_num.h"
#include "version.h"

#define PROG "stereo-eval"

static const char usage_text[] =
    "usage: " PROG " [options] DISP GT\n"
    "Scores the disparity map DISP against the ground truth GT (both read as disparity maps:\n"
    "PFM, or 1-channel PNG/PGM where 0 = invalid and disparity = value / scale).\n"
    "\n"
    "  --disp-scale S  DISP stored value / S = disparity (default: PFM 1, 16-bit 256, 8-bit 1)\n"
    "  --gt-scale S    same for GT and --gt-right; required unless GT is a .pfm\n"
    "  --mask FILE     evaluate only where FILE is 255 (Middlebury 2003 occl.png: 255 =\n"
    "                  non-occluded)\n"
    "  --gt-right FILE right-view GT: evaluate a left pixel only if it lands inside the right\n"
    "                  image on a valid right GT within 1 px of its own disparity\n"
    "  --border N      leave out N pixels at each image edge (default 0)\n"
    "  --disparities D the number of disparities DISP was matched with (stereo-match -d):\n"
    "                  report the evaluated pixels whose GT lies outside M .. M + D - 1 and\n"
    "                  the -d that would cover them\n"
    "  --min-disparity M  the smallest disparity matched (default 0)\n"
    "  --confidence FILE  DISP's confidence map (8-bit, 1 channel, as stereo-match\n"
    "                  --confidence writes it): also bad-2 of the most confident pixels\n"
    "  --coverage LIST with --confidence: the shares of DISP's valid evaluated pixels to\n"
    "                  score, most confident first, percent, comma-separated in 0 < C <= 100\n"
    "                  (default 50,80,95,100); each gives covC_bad2 (bad-2 %) and\n"
    "                  covC_min_conf (the confidence threshold that keeps them)\n"
    "  --json          print the result as a JSON object; it adds bad2_valid, bad-2 over\n"
    "                  the evaluated pixels DISP has (valid before filling), and with\n"
    "                  --confidence the per-confidence counts (conf_valid, conf_bad2)\n"
    "  --help          print this help\n"
    "  --version       print the version, git commit and the backends built in\n"
    "\n"
    "Invalid DISP pixels are filled as in the KITTI devkit before scoring.\n"
    "Output: bad1=.. bad2=.. bad4=.. avgerr=.. density=.. n=..; with --confidence a second\n"
    "line: cov50_bad2=.. cov50_min_conf=.. for each coverage.\n"
    "Exit status: 0 ok, 1 input error, 2 usage error.\n";

#define COVERAGE_MAX 16

typedef struct {
    const char *disp, *gt, *mask, *gt_right, *confidence;
    double coverage[COVERAGE_MAX]; /* percent, 0 < c <= 100 */
    int ncoverage;                 /* 0: --coverage not given */
    double disp_scale, gt_scale; /* 0 = the file's default */
    int border;
    int json;
    int ndisp, dmin; /* --disparities, --min-disparity (ndisp 0: not given) */
} eval_options;

typedef struct {
    double bad1, bad2, bad4; /* percent of evaluated pixels */
    double avgerr;           /* px */
    double density;          /* percent of evaluated pixels valid before filling */
    double bad2_valid;       /* bad-2 over the evaluated pixels valid before filling (percent) */
    long n;                  /* evaluated pixels */
    long beyond;             /* with --disparities: evaluated pixels whose GT is out of range */
    double gt_min, gt_max;   /* the smallest and largest evaluated GT disparity */
    /* with --confidence: per confidence value, the evaluated pixels DISP has (valid before
     * filling) and the bad-2 ones among them */
    long conf_valid[256], conf_bad2[256];
} eval_result;

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

/* ---- command line -------------------------------------------------------------------------- */

static int usage_error(const char *fmt, const char *what)
{
    fprintf(stderr, PROG ": ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, " (see --help)\n");
    return -1;
}

static int parse_scale(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v <= 0) {
        fprintf(stderr, PROG ": %s needs a positive number, got \"%s\" (see --help)\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_count(const char *opt, const char *s, int *out)
{
    char err[256];
    if (parse_int_arg(opt, s, 0, INT_MAX, out, err, sizeof err)) {
        fprintf(stderr, PROG ": %s (see --help)\n", err);
        return -1;
    }
    return 0;
}

/* "50,80,95": 1..COVERAGE_MAX numbers, each 0 < c <= 100. */
static int parse_coverage(const char *s, eval_options *o)
{
    const char *p = s;
    o->ncoverage = 0;
    for (;;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0') || errno == ERANGE || !isfinite(v) ||
            v <= 0 || v > 100) {
            fprintf(stderr, PROG ": --coverage needs percentages in 0 < C <= 100 separated by "
                    "commas (e.g. 50,80,95), got \"%s\" (see --help)\n", s);
            return -1;
        }
        if (o->ncoverage == COVERAGE_MAX) {
            fprintf(stderr, PROG ": --coverage: at most %d values (see --help)\n", COVERAGE_MAX);
            return -1;
        }
        o->coverage[o->ncoverage++] = v;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

static int has_pfm_extension(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".pfm") == 0;
}

/* Returns 0 to run, 1 when --help or --version was printed, -1 on a usage error (already reported).
 * Options may come anywhere; "--opt=value" and "--opt value" are both accepted. */
static int parse_args(int argc, char **argv, eval_options *o)
{
    const char *positional[2];
    int npos = 0, options_done = 0;
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == '\0') {
            if (npos == 2)
                return usage_error("unexpected extra argument \"%s\"", a);
            positional[npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options_done = 1;
            continue;
        }
        /* Split "--name=value"; otherwise the value, if the option takes one, is the next arg. */
        char name[32];
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof name)
            return usage_error("unknown option '%s'", a);
        memcpy(name, a, len);
        name[len] = '\0';

        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            fputs(usage_text, stdout);
            return 1;
        }
        if (strcmp(name, "--version") == 0) {
            version_print(PROG);
            return 1;
        }
        if (strcmp(name, "--json") == 0) {
            if (eq)
                return usage_error("%s takes no value", name);
            o->json = 1;
            continue;
        }
        int takes_value = strcmp(name, "--disp-scale") == 0 || strcmp(name, "--gt-scale") == 0 ||
                          strcmp(name, "--mask") == 0 || strcmp(name, "--gt-right") == 0 ||
                          strcmp(name, "--border") == 0 || strcmp(name, "--disparities") == 0 ||
                          strcmp(name, "--min-disparity") == 0 ||
                          strcmp(name, "--confidence") == 0 || strcmp(name, "--coverage") == 0;
        if (!takes_value)
            return usage_error("unknown option '%s'", name);
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!value)
            return usage_error("%s: needs a value", name);

        if (strcmp(name, "--disp-scale") == 0) {
            if (parse_scale(name, value, &o->disp_scale) != 0)
                return -1;
        } else if (strcmp(name, "--gt-scale") == 0) {
            if (parse_scale(name, value, &o->gt_scale) != 0)
                return -1;
        } else if (strcmp(name, "--border") == 0) {
            if (parse_count(name, value, &o->border) != 0)
                return -1;
        } else if (strcmp(name, "--disparities") == 0) {
            if (parse_count(name, value, &o->ndisp) != 0)
                return -1;
            if (o->ndisp < 1)
                return usage_error("%s: needs at least 1", name);
        } else if (strcmp(name, "--min-disparity") == 0) {
            if (parse_count(name, value, &o->dmin) != 0)
                return -1;
        } else if (strcmp(name, "--coverage") == 0) {
            if (parse_coverage(value, o) != 0)
                return -1;
        } else if (strcmp(name, "--confidence") == 0) {
            o->confidence = value;
        } else if (strcmp(name, "--mask") == 0) {
            o->mask = value;
        } else {
            o->gt_right = value;
        }
    }
    if (npos != 2)
        return usage_error("%s", "needs two files: DISP GT");
    o->disp = positional[0];
    o->gt = positional[1];
    if (o->gt_scale == 0 && !has_pfm_extension(o->gt))
        return usage_error("%s", "--gt-scale is required when GT is not a .pfm");
    if (o->ncoverage && !o->confidence)
        return usage_error("%s", "--coverage needs --confidence FILE");
    if (!o->ncoverage) {
        static const double dflt[] = {50, 80, 95, 100};
        memcpy(o->coverage, dflt, sizeof dflt);
        o->ncoverage = 4;
    }
    return 0;
}

/* ---- evaluation ---------------------------------------------------------------------------- */

static void fill_span(float *p, int from, int to, float v)
{
    for (int i = from; i < to; i++)
        p[i] = v;
}

/* Fills one row in place: a run of invalid pixels between two valid ones takes the smaller
 * neighbour (the background: an occluded gap belongs to the farther surface); runs at the row's
 * ends take their one valid neighbour. Returns 0 when the row had no valid pixel at all. */
static int fill_row(float *row, int w)
{
    int last = -1; /* last valid x seen */
    for (int x = 0; x < w; x++) {
        if (!isfinite(row[x]))
            continue;
        if (last < 0)
            fill_span(row, 0, x, row[x]);
        else if (last < x - 1)
            fill_span(row, last + 1, x, fminf(row[last], row[x]));
        last = x;
    }
    if (last < 0)
        return 0;
    fill_span(row, last + 1, w, row[last]);
    return 1;
}

/* KITTI-devkit-style filling of non-finite pixels, in place: rows first (fill_row), then each
 * row that had no valid pixel copies, per column, the nearest row that had one (equally near
 * above and below: the smaller value, as in rows). A map without any valid pixel becomes 0. */
static int fill_invalid(float *d, int w, int h)
{
    int *had = malloc((size_t)h * sizeof *had);
    if (!had)
        return -1;
    int any = 0;
    for (int y = 0; y < h; y++) {
        had[y] = fill_row(d + (size_t)y * (size_t)w, w);
        any |= had[y];
    }
    if (!any) {
        fill_span(d, 0, w * h, 0.0f); /* w * h < 2^31: guaranteed by the readers */
        free(had);
        return 0;
    }
    for (int y = 0; y < h; y++) {
        if (had[y])
            continue;
        int up = y - 1, down = y + 1;
        while (up >= 0 && !had[up])
            up--;
        while (down < h && !had[down])
            down++;
        float *row = d + (size_t)y * (size_t)w;
        const float *a = up >= 0 ? d + (size_t)up * (size_t)w : NULL;
        const float *b = down < h ? d + (size_t)down * (size_t)w : NULL;
        if (a && b && y - up == down - y) {
            for (int x = 0; x < w; x++)
                row[x] = fminf(a[x], b[x]);
        } else {
            const float *src = !b || (a && y - up < down - y) ? a : b;
            memcpy(row, src, (size_t)w * sizeof *row);
        }
    }
    free(had);
    return 0;
}

/* Whether the left pixel (x, y) with ground truth dl is visible in the right view: it must land
 * inside the right image, on a valid right GT that agrees within 1 px (the usual LR test). */
static int visible_in_right(const fmap *gtr, int x, int y, float dl)
{
    double xr = x - round((double)dl); /* in double: a wild GT value cannot overflow an int */
    if (xr < 0 || xr >= gtr->width)
        return 0;
    float dr = gtr->data[(size_t)y * (size_t)gtr->width + (size_t)xr];
    return isfinite(dr) && fabs((double)dl - (double)dr) <= 1.0;
}

/* Scores disp against gt over the evaluated set. mask (may be NULL) is 8-bit grey, 255 = use;
 * gtr (may be NULL) is the right-view GT. disp is filled in place. */
static int evaluate(fmap *disp, const fmap *gt, const image *mask, const fmap *gtr,
                    const image *conf, int border, int dmin, int ndisp, eval_result *r)
{
    int w = disp->width, h = disp->height;
    size_t n = (size_t)w * (size_t)h;
    unsigned char *was_valid = malloc(n);
    if (!was_valid)
        return -1;
    for (size_t i = 0; i < n; i++)
        was_valid[i] = isfinite(disp->data[i]) != 0;
    if (fill_invalid(disp->data, w, h) != 0) {
        free(was_valid);
        return -1;
    }

    long count = 0, bad1 = 0, bad2 = 0, bad4 = 0, valid = 0, bad2_valid = 0;
    double sum = 0;
    for (int y = border; y < h - border; y++) {
        for (int x = border; x < w - border; x++) {
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            float g = gt->data[i];
            if (!isfinite(g))
                continue;
            if (mask && ((const unsigned char *)mask->data)[i] != 255)
                continue;
            if (gtr && !visible_in_right(gtr, x, y, g))
                continue;
            double e = fabs((double)disp->data[i] - (double)g);
            count++;
            /* outside the matched range by more than the half pixel subpixel can reach */
            if (ndisp > 0 && (g < dmin - 0.5 || g > dmin + ndisp - 0.5))
                r->beyond++;
            if (count == 1 || g > r->gt_max)
                r->gt_max = g;
            if (count == 1 || g < r->gt_min)
                r->gt_min = g;
            sum += e;
            bad1 += e > 1.0;
            bad2 += e > 2.0;
            bad4 += e > 4.0;
            valid += was_valid[i];
            bad2_valid += was_valid[i] && e > 2.0;
            if (conf && was_valid[i]) {
                int c = ((const unsigned char *)conf->data)[i];
                r->conf_valid[c]++;
                r->conf_bad2[c] += e > 2.0;
            }
        }
    }
    free(was_valid);
    r->n = count;
    if (count > 0) {
        r->bad1 = 100.0 * (double)bad1 / (double)count;
        r->bad2 = 100.0 * (double)bad2 / (double)count;
        r->bad4 = 100.0 * (double)bad4 / (double)count;
        r->avgerr = sum / (double)count;
        r->density = 100.0 * (double)valid / (double)count;
        r->bad2_valid = valid > 0 ? 100.0 * (double)bad2_valid / (double)valid : 0;
    }
    return 0;
}

/* Bad-2 (percent) of the cov % most confident valid evaluated pixels, and the confidence
 * threshold that keeps them (the value at which the coverage is reached); the value where the
 * boundary falls counts with the fraction of its pixels the coverage takes (file comment).
 * -1 without valid pixels. */
static double coverage_bad2(const eval_result *r, double cov, int *threshold)
{
    long total = 0;
    for (int c = 0; c < 256; c++)
        total += r->conf_valid[c];
    *threshold = 0;
    if (total == 0)
        return -1;
    double want = cov / 100.0 * (double)total, kept = 0, bad = 0;
    for (int c = 255; c >= 0; c--) {
        long n = r->conf_valid[c];
        if (n == 0)
            continue;
        *threshold = c;
        if (kept + (double)n >= want) {
            double f = (want - kept) / (double)n;
            bad += f * (double)r->conf_bad2[c];
            kept = want;
            break;
        }
        kept += (double)n;
        bad += (double)r->conf_bad2[c];
    }
    return kept > 0 ? 100.0 * bad / kept : 0;
}

static void print_array(const char *name, const long *a, int n)
{
    printf(", \"%s\": [", name);
    for (int i = 0; i < n; i++)
        printf("%s%ld", i ? ", " : "", a[i]);
    printf("]");
}

/* ---- main ---------------------------------------------------------------------------------- */

static int same_size(const char *what_a, const char *a, int wa, int ha, const char *what_b,
                     const char *b, int wb, int hb)
{
    if (wa == wb && ha == hb)
        return 1;
    fprintf(stderr, PROG ": size mismatch: %s %s is %dx%d but %s %s is %dx%d\n", what_a, a, wa,
            ha, what_b, b, wb, hb);
    return 0;
}

int main(int argc, char **argv)
{
    eval_options o;
    int parsed = parse_args(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : EXIT_USAGE;

    char err[512];
    fmap disp = {0}, gt = {0}, gtr = {0};
    image mask = {0}, conf = {0};
    int status = EXIT_INPUT;

    if (disparity_read(o.disp, o.disp_scale, &disp, err, sizeof err) != 0 ||
        disparity_read(o.gt, o.gt_scale, &gt, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        goto done;
    }
    if (!same_size("DISP", o.disp, disp.width, disp.height, "GT", o.gt, gt.width, gt.height))
        goto done;
    if (o.mask) {
        if (image_read8(o.mask, &mask, err, sizeof err) != 0) {
            fprintf(stderr, PROG ": %s\n", err);
            goto done;
        }
        if (mask.channels != 1) {
            fprintf(stderr, PROG ": %s: mask must be a 1-channel image, this one has %d\n",
                    o.mask, mask.channels);
            goto done;
        }
        if (!same_size("mask", o.mask, mask.width, mask.height, "GT", o.gt, gt.width, gt.height))
            goto done;
    }
    if (o.gt_right) {
        if (disparity_read(o.gt_right, o.gt_scale, &gtr, err, sizeof err) != 0) {
            fprintf(stderr, PROG ": %s\n", err);
            goto done;
        }
        if (!same_size("right GT", o.gt_right, gtr.width, gtr.height, "GT", o.gt, gt.width,
                       gt.height))
            goto done;
    }

    if (o.confidence) {
        if (image_read8(o.confidence, &conf, err, sizeof err) != 0) {
            fprintf(stderr, PROG ": %s\n", err);
            goto done;
        }
        if (conf.channels != 1) {
            fprintf(stderr, PROG ": %s: the confidence map must be a 1-channel image, this one "
                    "has %d\n", o.confidence, conf.channels);
            goto done;
        }
        if (!same_size("confidence", o.confidence, conf.width, conf.height, "DISP", o.disp,
                       disp.width, disp.height))
            goto done;
    }

    static eval_result r; /* zeroed: its histograms are 4 kB */
    if (evaluate(&disp, &gt, o.mask ? &mask : NULL, o.gt_right ? &gtr : NULL,
                 o.confidence ? &conf : NULL, o.border, o.dmin, o.ndisp, &r) != 0) {
        fprintf(stderr, PROG ": out of memory\n");
        goto done;
    }
    if (r.n == 0) {
        fprintf(stderr, PROG ": %s: no pixel to evaluate (no valid GT inside mask and border)\n",
                o.gt);
        goto done;
    }
    /* the range that would cover the evaluated GT: the smallest disparity lowered to the GT's
     * smallest where that is below it, and the -d (a multiple of 16, as stereo-match takes) from
     * there to the largest */
    int low = (int)floor(r.gt_min + 0.5);
    int new_min = low < o.dmin ? (low > 0 ? low : 0) : o.dmin;
    int cover = (int)ceil((r.gt_max + 0.5 - new_min) / 16.0) * 16;
    if (cover < 16)
        cover = 16;
    if (o.json) {
        printf("{\"bad1\": %.2f, \"bad2\": %.2f, \"bad4\": %.2f, \"avgerr\": %.3f, "
               "\"density\": %.2f, \"n\": %ld, \"bad2_valid\": %.2f",
               r.bad1, r.bad2, r.bad4, r.avgerr, r.density, r.n, r.bad2_valid);
        if (o.ndisp)
            printf(", \"beyond_range\": %.2f, \"beyond_range_n\": %ld, \"gt_max\": %.2f, "
                   "\"covering_disparities\": %d",
                   100.0 * (double)r.beyond / (double)r.n, r.beyond, r.gt_max, cover);
        if (o.confidence) {
            printf(", \"coverage\": [");
            for (int k = 0; k < o.ncoverage; k++) {
                int t;
                double b = coverage_bad2(&r, o.coverage[k], &t);
                printf("%s{\"coverage\": %g, \"bad2\": %.2f, \"min_conf\": %d}", k ? ", " : "",
                       o.coverage[k], b, t);
            }
            printf("]");
            print_array("conf_valid", r.conf_valid, 256);
            print_array("conf_bad2", r.conf_bad2, 256);
        }
        printf("}\n");
    } else {
        printf("bad1=%.2f bad2=%.2f bad4=%.2f avgerr=%.3f density=%.2f n=%ld\n", r.bad1, r.bad2,
               r.bad4, r.avgerr, r.density, r.n);
        for (int k = 0; o.confidence && k < o.ncoverage; k++) {
            int t;
            double b = coverage_bad2(&r, o.coverage[k], &t);
            printf("%scov%g_bad2=%.2f cov%g_min_conf=%d", k ? " " : "", o.coverage[k], b,
                   o.coverage[k], t);
            if (k == o.ncoverage - 1)
                printf("\n");
        }
        if (o.ndisp && r.beyond > 0) {
            printf("ground truth beyond the matched range %d..%d: %ld of %ld evaluated pixels "
                   "(%.2f %%), up to %.2f px; ",
                   o.dmin, o.dmin + o.ndisp - 1, r.beyond, r.n,
                   100.0 * (double)r.beyond / (double)r.n, r.gt_max);
            if (cover <= 256 && new_min != o.dmin)
                printf("--min-disparity %d -d %d would cover them\n", new_min, cover);
            else if (cover <= 256)
                printf("-d %d would cover them\n", cover);
            else
                printf("they need -d %d, more than stereo-match's 256: raise --min-disparity\n",
                       cover);
        }
    }
    status = fflush(stdout) == 0 ? 0 : EXIT_INPUT;

done:
    fmap_free(&disp);
    fmap_free(&gt);
    fmap_free(&gtr);
    image_free(&mask);
    image_free(&conf);
    return status;
}
