/* SPDX-License-Identifier: Apache-2.0 */
/* live_cameras.c — the text of stereo-live --list-cameras (live_cameras.h).
 *
 *   vivid (platform:vivid-000), driver vivid:
 *           /dev/video0: video capture
 *               /dev/v4l/by-path/platform-vivid.0-video-index0
 *               YUYV 'YUYV 4:2:2' (format = yuyv)
 *                   640x480: 1, 2, 4, 5, 10, 12.5, 15, 25 fps
 *               UYVY 'UYVY 4:2:2': sizes and rates as YUYV
 *               ...
 *               converted by libv4l2 from the formats above: RGB3 (format = rgb24), BGR3, ...
 *
 * then the settings for the first two capture nodes: their config names (by-id, else by-path,
 * else /dev/videoN) and a format, size and rate both offer (common_mode), as a [camera] section
 * and as --set options; for a single capture node, the side-by-side source's settings.
 */
#include "live_cameras.h"

#include <string.h>

#define APP_WIDTH 640   /* the app's default size and rate: preferred when both offer them */
#define APP_HEIGHT 480
#define APP_FPS 30

/* ---- one node ------------------------------------------------------------------------------- */

static void print_rates(FILE *out, const camera_size *s)
{
    if (s->rate_range)
        fprintf(out, ": %.5g..%.5g fps", s->rate_min, s->rate_max);
    else if (s->nrates) {
        for (int i = 0; i < s->nrates; i++)
            fprintf(out, "%s%.5g", i ? ", " : ": ", s->rate[i]);
        fprintf(out, " fps");
    } else
        fprintf(out, ": rates not listed");
}

/* A format with its sizes and rates; those of `like` (NULL: none) when they are the same. */
static void print_format(FILE *out, const camera_format *f, const camera_format *like)
{
    char fcc[5];
    camera_fourcc_str(f->fourcc, fcc);
    fprintf(out, "\t    %s '%s'%s", fcc, f->description, f->compressed ? " (compressed)" : "");
    if (f->takes != CAPTURE_FORMAT_AUTO)
        fprintf(out, " (format = %s)", capture_format_to_str(f->takes));
    if (like) {
        char as[5];
        camera_fourcc_str(like->fourcc, as);
        fprintf(out, ": sizes and rates as %s\n", as);
        return;
    }
    fprintf(out, "\n");
    for (int i = 0; i < f->nsizes; i++) {
        const camera_size *s = &f->sizes[i];
        if (s->stepwise) {
            fprintf(out, "\t        %ux%u..%ux%u, step %ux%u", s->min_width, s->min_height,
                    s->width, s->height, s->step_width, s->step_height);
            print_rates(out, s);
            fprintf(out, " at %ux%u\n", s->width, s->height);
        } else {
            fprintf(out, "\t        %ux%u", s->width, s->height);
            print_rates(out, s);
            fprintf(out, "\n");
        }
    }
    if (f->nsizes == 0)
        fprintf(out, "\t        sizes not listed\n");
}

static int same_sizes(const camera_format *a, const camera_format *b)
{
    if (a->nsizes != b->nsizes)
        return 0;
    for (int i = 0; i < a->nsizes; i++) {
        const camera_size *x = &a->sizes[i], *y = &b->sizes[i];
        if (x->stepwise != y->stepwise || x->width != y->width || x->height != y->height ||
            x->min_width != y->min_width || x->min_height != y->min_height ||
            x->step_width != y->step_width || x->step_height != y->step_height ||
            x->nrates != y->nrates || x->rate_range != y->rate_range ||
            x->rate_min != y->rate_min || x->rate_max != y->rate_max ||
            memcmp(x->rate, y->rate, (size_t)x->nrates * sizeof x->rate[0]) != 0)
            return 0;
    }
    return 1;
}

static void print_node(FILE *out, const camera_node *n)
{
    fprintf(out, "\t%s: %s\n", n->path, n->kind);
    for (int i = 0; i < n->nlinks; i++)
        fprintf(out, "\t    %s\n", n->link[i]);
    if (!n->capture)
        return;
    int native = 0, emulated = 0;
    for (int i = 0; i < n->nformats; i++) {
        if (n->formats[i].emulated)
            emulated++;
        else {
            /* drivers that convert in hardware list the same sizes for many formats */
            const camera_format *f = &n->formats[i], *like = NULL;
            for (int j = 0; j < i && !like && f->nsizes > 0; j++)
                if (!n->formats[j].emulated && same_sizes(&n->formats[j], f))
                    like = &n->formats[j];
            print_format(out, f, like);
            native++;
        }
    }
    if (native == 0)
        fprintf(out, "\t    no formats listed\n");
    if (emulated) {
        fprintf(out, "\t    converted by libv4l2 from the formats above:");
        int k = 0;
        for (int i = 0; i < n->nformats; i++) {
            const camera_format *f = &n->formats[i];
            char fcc[5];
            if (!f->emulated)
                continue;
            camera_fourcc_str(f->fourcc, fcc);
            fprintf(out, "%s %s", k++ ? "," : "", fcc);
            if (f->takes != CAPTURE_FORMAT_AUTO)
                fprintf(out, " (format = %s)", capture_format_to_str(f->takes));
        }
        fprintf(out, "\n");
    }
    if (n->cut)
        fprintf(out, "\t    (the driver lists more than is shown here)\n");
}

static int same_device(const camera_node *a, const camera_node *b)
{
    return strcmp(a->card, b->card) == 0 && strcmp(a->bus_info, b->bus_info) == 0 &&
           strcmp(a->driver, b->driver) == 0;
}

/* ---- a mode both cameras offer -------------------------------------------------------------- */

typedef struct {
    capture_format format;
    unsigned width, height;
    int fps;
} camera_mode;

static int size_offered(const camera_size *s, unsigned w, unsigned h)
{
    if (!s->stepwise)
        return s->width == w && s->height == h;
    return w >= s->min_width && w <= s->width && h >= s->min_height && h <= s->height &&
           (s->step_width <= 1 || (w - s->min_width) % s->step_width == 0) &&
           (s->step_height <= 1 || (h - s->min_height) % s->step_height == 0);
}

/* Whether a size's rates include `fps` as the capture counts it (within CAPTURE_FPS_TOLERANCE). */
static int rate_offered(const camera_size *s, int fps)
{
    double tol = CAPTURE_FPS_TOLERANCE * fps;
    if (s->rate_range)
        return fps >= s->rate_min - tol && fps <= s->rate_max + tol;
    for (int i = 0; i < s->nrates; i++)
        if (s->rate[i] >= fps - tol && s->rate[i] <= fps + tol)
            return 1;
    return 0;
}

static const camera_size *find_size(const camera_format *f, unsigned w, unsigned h)
{
    for (int i = 0; i < f->nsizes; i++)
        if (size_offered(&f->sizes[i], w, h))
            return &f->sizes[i];
    return NULL;
}

static const camera_format *find_format(const camera_node *n, capture_format want, int emulated)
{
    for (int i = 0; i < n->nformats; i++)
        if (n->formats[i].takes == want && n->formats[i].emulated == emulated)
            return &n->formats[i];
    return NULL;
}

/* The rate to configure for two sizes: a whole number of fps (camera.fps), which both offer:
 * APP_FPS when both do (a steady default), else the highest; 0 if none. 30000/1001 counts as 30. */
static int common_rate(const camera_size *a, const camera_size *b)
{
    if (rate_offered(a, APP_FPS) && rate_offered(b, APP_FPS))
        return APP_FPS;
    int best = 0;
    const camera_size *side[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        const camera_size *s = side[k];
        /* the candidates: each listed rate rounded, or the top of a range */
        int n = s->rate_range ? 1 : s->nrates;
        for (int i = 0; i < n; i++) {
            int fps = (int)(s->rate_range ? s->rate_max + CAPTURE_FPS_TOLERANCE * s->rate_max
                                          : s->rate[i] + 0.5);
            if (fps > best && rate_offered(a, fps) && rate_offered(b, fps))
                best = fps;
        }
    }
    if (a->rate_range && b->rate_range && best == 0) { /* both ranges: the top they share */
        int hi = (int)(a->rate_max < b->rate_max ? a->rate_max : b->rate_max);
        if (hi >= 1 && rate_offered(a, hi) && rate_offered(b, hi))
            best = hi;
    }
    return best;
}

/* A format the app takes (the driver's own before libv4l2's conversions, in the order AUTO
 * tries them: YUYV, GREY, RGB24), a size both list with a rate both offer (common_rate): for a
 * pair 640x480 if both do, else the largest up to 1280 wide, else the smallest; for one
 * side-by-side camera (b == a) the largest up to 2560 wide (two 1280 views), else the smallest.
 * 0 if none. */
static int common_mode(const camera_node *a, const camera_node *b, camera_mode *m)
{
    unsigned max_width = a == b ? 2560 : 1280;
    static const capture_format order[] = {CAPTURE_FORMAT_YUYV, CAPTURE_FORMAT_GREY,
                                           CAPTURE_FORMAT_RGB24};
    for (int emulated = 0; emulated <= 1; emulated++)
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
            const camera_format *fa = find_format(a, order[k], emulated);
            const camera_format *fb = find_format(b, order[k], emulated);
            if (!fa || !fb)
                continue;
            const camera_size *sa = NULL, *sb = NULL;
            if (a != b && (sa = find_size(fa, APP_WIDTH, APP_HEIGHT)) &&
                (sb = find_size(fb, APP_WIDTH, APP_HEIGHT)) && common_rate(sa, sb) > 0) {
                *m = (camera_mode){order[k], APP_WIDTH, APP_HEIGHT, common_rate(sa, sb)};
                return 1;
            }
            const camera_size *pick = NULL, *pick_b = NULL;
            for (int i = 0; i < fa->nsizes; i++) {
                const camera_size *s = &fa->sizes[i], *t;
                if (s->stepwise || !(t = find_size(fb, s->width, s->height)) ||
                    common_rate(s, t) <= 0)
                    continue;
                int fits = s->width <= max_width, pick_fits = pick && pick->width <= max_width;
                unsigned long area = (unsigned long)s->width * s->height;
                unsigned long pick_area = pick ? (unsigned long)pick->width * pick->height : 0;
                if (!pick || (fits && !pick_fits) ||
                    (fits == pick_fits && (fits ? area > pick_area : area < pick_area))) {
                    pick = s;
                    pick_b = t;
                }
            }
            if (pick) {
                *m = (camera_mode){order[k], pick->width, pick->height, common_rate(pick, pick_b)};
                return 1;
            }
        }
    return 0;
}

/* ---- the snippet ---------------------------------------------------------------------------- */

/* A path as one shell word: quoted unless it holds only characters that need no quoting. */
static void shell_word(FILE *out, const char *s)
{
    if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._:-+=,@") ==
        strlen(s)) {
        fputs(s, out);
        return;
    }
    fputc('\'', out);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", out);
        else
            fputc(*s, out);
    fputc('\'', out);
}

static void print_settings(FILE *out, const camera_node *left, const camera_node *right)
{
    camera_mode m;
    int have = common_mode(left, right ? right : left, &m);
    const char *type = right ? "v4l2" : "sbs";
    fprintf(out, "\n");
    if (right)
        fprintf(out, "The first two cameras (left and right as seen from behind the rig: swap "
                     "them if needed), for the configuration file:\n");
    else
        fprintf(out, "One camera: if it is a side-by-side stereo camera (both views in one "
                     "frame), for the configuration file:\n");
    fprintf(out, "\t[source]\n\ttype = %s\n\t[camera]\n", type);
    if (right)
        fprintf(out, "\tleft = %s\n\tright = %s\n", camera_node_config_path(left),
                camera_node_config_path(right));
    else
        fprintf(out, "\tdevice = %s\n", camera_node_config_path(left));
    if (have)
        fprintf(out, "\twidth = %u\n\theight = %u\n\tfps = %d\n\tformat = %s\n", m.width,
                m.height, m.fps, capture_format_to_str(m.format));
    else
        fprintf(out, "\t# found no format, size and rate that %s: choose them from the list "
                     "above (format = auto lets libv4l2 convert)\n",
                right ? "both offer" : "the app takes");
    fprintf(out, "or on the command line:\n\tstereo-live --source %s", type);
    if (right) {
        fprintf(out, " --set camera.left=");
        shell_word(out, camera_node_config_path(left));
        fprintf(out, " --set camera.right=");
        shell_word(out, camera_node_config_path(right));
    } else {
        fprintf(out, " --set camera.device=");
        shell_word(out, camera_node_config_path(left));
    }
    if (have)
        fprintf(out, " \\\n\t    --set camera.width=%u --set camera.height=%u --set camera.fps=%d "
                     "--set camera.format=%s", m.width, m.height, m.fps,
                capture_format_to_str(m.format));
    fprintf(out, "\n");
}

int live_cameras_print(const camera_list *l, FILE *out)
{
    unsigned char done[CAMERA_LIST_MAX_NODES] = {0};
    const camera_node *cam[2] = {NULL, NULL};
    int ncapture = 0, nfailed = 0, groups = 0;
    for (int i = 0; i < l->n; i++) {
        const camera_node *a = &l->node[i];
        if (done[i] || a->error[0]) {
            nfailed += a->error[0] != 0;
            continue;
        }
        fprintf(out, "%s%s (%s), driver %s:\n", groups++ ? "\n" : "",
                a->card[0] ? a->card : "(no name)", a->bus_info, a->driver);
        for (int j = i; j < l->n; j++) {
            const camera_node *b = &l->node[j];
            if (done[j] || b->error[0] || !same_device(a, b))
                continue;
            done[j] = 1;
            print_node(out, b);
            if (b->capture && ncapture < 2)
                cam[ncapture] = b;
            ncapture += b->capture;
        }
    }
    if (nfailed) {
        fprintf(out, "%sNot listed:\n", l->n > nfailed ? "\n" : "");
        for (int i = 0; i < l->n; i++)
            if (l->node[i].error[0]) {
                fprintf(out, "\t%s: %s\n", l->node[i].path, l->node[i].error);
                for (int k = 0; k < l->node[i].nlinks; k++)
                    fprintf(out, "\t    %s\n", l->node[i].link[k]);
            }
    }
    if (l->cut)
        fprintf(out, "(more than %d video nodes: the others are not shown)\n",
                CAMERA_LIST_MAX_NODES);
    if (cam[0])
        print_settings(out, cam[0], cam[1]);
    return ncapture;
}
