/* SPDX-License-Identifier: Apache-2.0 */
/* stereo-live — live stereo depth: two cameras (or the generated scene, or recorded files) in,
 * colour-mapped disparity in an SDL window with an overlay out.
 *
 *   stereo-live                         the generated scene, in a window (the embedded default)
 *   stereo-live --config rig.ini        cameras and settings from a file (see app/config.h)
 *   stereo-live --headless --frames 100 no window: statistics once a second
 *   stereo-live --list-cameras          the V4L2 devices and what they offer (live_cameras.c)
 *
 * The main thread is the display (SDL wants it); the capture and stage threads live in
 * live_pipeline.c, the sources in live_sources.c. Exit status: 0 after a clean shutdown (frame
 * limit, end of the files, window closed, q/Esc, SIGINT, SIGTERM), 1 when something failed while
 * running (an output that sent no frame because every write failed included), 2 for a bad
 * option or configuration (reported before anything is opened).
 *
 * At the end it prints a summary (throughput, stage time and end-to-end latency: median, p95)
 * and, with --stats-json FILE, writes it as JSON (tools/gpu-check.sh reads it).
 *
 * Built with LIVE_LIBC_ONLY=1 this is build/gpu/stereo-live-headless, which needs only CUDA and
 * libc (the GPU machine): the same pipeline and options on the generated scene, with a headless
 * consumer as its display; the window (SDL2), the cameras (libv4l2), image files and recording
 * (libpng), calibration maps (zlib) and configuration files (inih) are left out, and asking for
 * one of them is refused with "not built in this binary: ..." (exit status 2).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if !LIVE_LIBC_ONLY
#include <SDL.h>
#include <SDL_ttf.h>

#include "calib.h"
#include "camera_list.h"
#include "image_io.h"
#include "live_cameras.h"
#include "mapfile.h"
#include "rectify.h"
#endif
#include "colormap.h"
#include "config.h"
#include "depth.h"
#include "legend.h"
#include "live_histogram.h"
#if !LIVE_LIBC_ONLY
#include "live_outputs.h"
#endif
#include "live_pipeline.h"
#include "live_sources.h"
#include "outpath.h"
#include "parse_num.h"
#include "sequence.h"
#include "stereo.h"
#include "stereo_options.h"
#include "version.h"

#define EXIT_USAGE 2
#define MAX_OVERRIDES 64
#define MIN_WINDOW_WIDTH 640    /* small images are scaled up by an integer factor to this */
#define P2_STEP 16              /* +/- keys */
#define GRID_LINES 16           /* horizontal lines of the pair view */
#define OVERLAY_LINE 640        /* bytes of one overlay line */

#define MAX_PRERENDER 10000
#if LIVE_LIBC_ONLY
#define PROGRAM "stereo-live-headless"
#else
#define PROGRAM "stereo-live"
#endif

static const char usage_text[] =
#if LIVE_LIBC_ONLY
    "usage: stereo-live-headless [options]\n"
    "\n"
    "Live stereo depth without a window, built with CUDA and libc only (for a GPU machine):\n"
    "pairs of the generated scene through the stereo stage to a headless consumer, statistics\n"
    "once a second and a summary at the end. The window, cameras, image files, recording,\n"
    "screenshots, calibration maps and configuration files are not built in this binary\n"
    "(build/stereo-live has them).\n"
    "\n"
    "  --input synth://       the generated scene (synth://?width=W&height=H&fps=F); the\n"
    "                         cameras, files and GStreamer URIs of stereo-live are not built\n"
    "                         in this binary\n"
    "  --frames N             stop after N processed pairs (0 = until SIGINT / SIGTERM)\n"
    "  --headless             accepted (this binary has no window)\n"
    "  --baselines 1,B2,...   more views of the scene on one bar (e.g. 1,-1: three views),\n"
    "                         --combine sides (default) | sum: multi-baseline matching\n"
    "  --set SECTION.KEY=VAL  a key of the configuration file (config/README.md), e.g.\n"
    "                         --set synth.width=1280 --set synth.fps=0 --set stereo.paths=4\n"
#else
    "usage: stereo-live [options]\n"
    "\n"
    "Live stereo depth: frame pairs from the generated scene (default), two cameras or streams\n"
    "(V4L2, CSI, RTSP, video files, any GStreamer pipeline), one side-by-side stream or image\n"
    "files, through the stereo stage, shown colour-mapped.\n"
    "\n"
    "  --config FILE          settings (INI, see config/); options below override it\n"
    "  --left URI --right URI two cameras or streams, one per side; URI is one of\n"
    "                         v4l2:///dev/video0 (or /dev/video0), csi://0 (Jetson),\n"
    "                         rtsp://HOST/PATH, file://VIDEO or file://left_%04d.png (an\n"
    "                         image sequence), gst://PIPELINE (the app appends its caps\n"
    "                         and appsink)\n"
    "  --input URI            one side-by-side stream (left view in the left half), or\n"
    "                         synth:// (the generated scene: synth://?width=W&height=H&fps=F)\n"
    "  --source S             the older way: synth (default) | v4l2 | sbs | files, with the\n"
    "                         devices in [camera] and the patterns in [files]\n"    "  --baselines 1,B2,...   more than two cameras on one bar (multi-baseline matching):\n"
    "                         the baseline ratio of each view after the reference (left),\n"
    "                         view 1 (right) is 1, e.g. 1,-1 for left-centre-right with the\n"
    "                         centre as reference; default 1 (the pair)\n"
    "  --combine R            sides (default: the better side of the reference) | sum\n"
    "  --view URI             the next view's camera or sequence (view2, view3, ...: one\n"
    "                         --view per ratio after the first; the kind of --left/--right);\n"
    "                         synth:// renders every view itself\n"
    "  --frames N             stop after N processed pairs (0 = until closed; the files\n"
    "                         source also stops at its last pair unless files.loop = true)\n"
    "  --headless             no window: statistics once a second\n"
    "  --fullscreen           full screen window\n"
    "  --screenshot FILE.png  save the window (headless: the colour disparity) at the end\n"
    "  --record DIR           write the processed raw pairs and timestamps.txt to DIR (a writer\n"
    "                         thread; a live source drops what it cannot keep up with and\n"
    "                         counts it; replay: stereo-live --config DIR/replay.ini)\n"
    "  --record-depth         with --record: each pair's depth too, DIR/depth_NNNNNN.png\n"
    "                         (16-bit millimetres, 0 = none; needs the camera, below)\n"
    "  --output URI           where the results go (repeatable; [output] uri, uri2 ...):\n"
    "                         display:// (the window; the default), file://DIR/%06d.pfm\n"
    "                         (.png, .ply; ?depth=1),\n"
    "                         ros2://NAMESPACE?domain=N&points=1&min_confidence=N,\n"
    "                         rtp://HOST:PORT, rtsp://@:8554/depth, gst://appsrc ! ...\n"
    "                         (docs/usage.md, docs/ros2.md); without display:// no window\n"
    "  --maps FILE            rectify with these maps ([calibration] maps; as stereo-match)\n"
    "  --color-range R        fixed | auto: the disparities the colour map spans ([display]\n"
    "                         color_range; key a toggles)\n"
    "  --focal PX --baseline M [--center CX,CY]\n"
    "                         the camera for depth (readout, key p, --record-depth) when the\n"
    "                         calibration gives none (no maps, or a version 1 map file);\n"
    "                         centre default: the image centre\n"
    "  --set SECTION.KEY=VAL  any key of the configuration file, e.g. --set synth.width=320\n"
    "  --list-cameras         list the V4L2 devices (/dev/video*) grouped by device, with\n"
    "                         their /dev/v4l/by-id and by-path names, formats, sizes and\n"
    "                         frame rates, then [camera] settings for the first two cameras,\n"
    "                         and exit: 0 when a camera was listed, 1 when none (the\n"
    "                         environment variable STEREO_DEV_DIR scans another directory)\n"
#endif
    "  --synth-prerender K    generated scene: render K frames of the animation at start and\n"
    "                         replay them in a loop (measures the pipeline, not the renderer)\n"
    "  --stats-json FILE      write the summary printed at the end as JSON: frames, wall time,\n"
    "                         fps, stage ms and latency ms (median, p95, max), drops\n"
    "  -h, --help             this text\n"
    "      --version          version, git commit and the backends built in\n"
    "\n"
    "The matching and backend options are stereo-match's (gpu/stereo_options.c). Each sets\n"
    "its [stereo] key over the configuration file: the name with '_' for '-' (--no-subpixel,\n"
    "--no-lr, --no-median: subpixel, lr_check, median = false).\n"
    "\n";

/* after the options of the table (print_usage) */
static const char usage_keys[] =
#if !LIVE_LIBC_ONLY
    "\n"
    "Keys: q/Esc quit, Space pause, v view (disparity, left, pair, depth), c colour map,\n"
    "a colour range fixed/auto, l legend, s screenshot, p point cloud (PLY) and depth PNG of\n"
    "the frame shown, f full screen, +/- P2 (of every path), m method (sgm <-> bm), k speckle\n"
    "removal, i hole filling, t temporal filter (each on / off), h help.\n"
#endif
    "";

/* --help: the app's own options, then the matching and backend options of the one table */
static void print_usage(void)
{
    fputs(usage_text, stdout);
    fputs("Matching:\n", stdout);
    stereo_options_print_help(stdout, STEREO_OPT_MATCHING);
    fputs("Backend:\n", stdout);
    stereo_options_print_help(stdout, STEREO_OPT_BACKEND);
    fputs(usage_keys, stdout);
}

/* SIGINT / SIGTERM: the first one stops the app in order, in every state but one: the loops
 * watch got_signal, a start in progress goes on to the session, which then ends at once, and
 * the summary, --stats-json, the screenshot and the recording are finished with exit 0 (under
 * any load: the start may take seconds on a busy machine). The exception is a GStreamer start
 * blocked in a call the app cannot interrupt (a filesrc on a FIFO: start_blocking): there the
 * app ends at once by the signal. A second signal ends the app at once too (removing the
 * temporary file of an output being written, outpath.h), but only one that comes at least
 * SECOND_SIGNAL_NS after the first: within that time it is the same request arriving twice,
 * as when Ctrl-C reaches the app and a wrapper such as timeout(1), which passes it on as
 * SIGTERM, or a script sends SIGINT then SIGTERM. The handler runs with both blocked. */
#define SECOND_SIGNAL_NS 1000000000LL
static volatile sig_atomic_t got_signal, start_blocking;
static struct timespec first_signal_at; /* written and read by the handler only */
static void on_signal(int sig)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe */
    if (start_blocking) {
        outpath_remove_temps_and_die(sig);
        return;
    }
    if (got_signal) {
        long long dt = (now.tv_sec - first_signal_at.tv_sec) * 1000000000LL +
                       (now.tv_nsec - first_signal_at.tv_nsec);
        if (dt >= SECOND_SIGNAL_NS)
            outpath_remove_temps_and_die(sig);
        return;
    }
    first_signal_at = now;
    got_signal = sig;
}

/* The GStreamer source's start: 5 s beyond its first-frame limit (source_gst.c, 10 s). */
#define START_DEADLINE_S 15
#define STR_(x) #x
#define STR(x) STR_(x)
static void on_start_deadline(int sig)
{
    static const char msg[] = "stereo-live: the GStreamer source did not start within "
                              STR(START_DEADLINE_S) " s (an element blocked in its start, such "
                              "as a filesrc reading a FIFO)\n";
    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("stereo-live: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- options ------------------------------------------------------------------------------- */

typedef struct {
    char option[96];    /* "--frames", "--set" (for messages) */
    char section[32], key[64];
    const char *value;
} override;

/* Options that are not configuration keys. */
typedef struct {
    const char *config_path;    /* --config */
    const char *stats_json;     /* --stats-json FILE */
    int prerender;              /* --synth-prerender K; 0 = render every frame */
    int help, version;          /* --help, --version: print, exit 0 */
    int list_cameras;           /* --list-cameras: list the V4L2 devices, exit */
    int outputs;                /* --output given N times: they replace the file's [output] */
} app_options;

/* Collects the options (applied after the file, whatever their order). 0, or -1 after printing
 * the reason; o->help set for --help, o->version for --version. */
static int parse_options(int argc, char **argv, app_options *o_app, override *ov, int *nov)
{
    enum { O_CONFIG = 256, O_SOURCE, O_FRAMES, O_HEADLESS, O_FULLSCREEN, O_SCREENSHOT,
           O_RECORD, O_SET, O_PRERENDER, O_STATS_JSON, O_VERSION, O_LIST_CAMERAS, O_RECORD_DEPTH, O_FOCAL, O_BASELINE, O_CENTER, O_LEFT, O_RIGHT,
           O_INPUT, O_BASELINES, O_COMBINE, O_VIEW, O_OUTPUT, O_MAPS, O_COLOR_RANGE };
    static const struct option opts[] = {
        {"config", required_argument, NULL, O_CONFIG},
        {"source", required_argument, NULL, O_SOURCE},
        {"frames", required_argument, NULL, O_FRAMES},
        {"headless", no_argument, NULL, O_HEADLESS},
        {"fullscreen", no_argument, NULL, O_FULLSCREEN},
        {"screenshot", required_argument, NULL, O_SCREENSHOT},
        {"record", required_argument, NULL, O_RECORD},
        {"record-depth", no_argument, NULL, O_RECORD_DEPTH},
        {"focal", required_argument, NULL, O_FOCAL},
        {"baseline", required_argument, NULL, O_BASELINE},
        {"center", required_argument, NULL, O_CENTER},
        {"set", required_argument, NULL, O_SET},
        {"synth-prerender", required_argument, NULL, O_PRERENDER},
        {"stats-json", required_argument, NULL, O_STATS_JSON},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},
        {"list-cameras", no_argument, NULL, O_LIST_CAMERAS},
        {"left", required_argument, NULL, O_LEFT},
        {"right", required_argument, NULL, O_RIGHT},
        {"input", required_argument, NULL, O_INPUT},
        {"baselines", required_argument, NULL, O_BASELINES},
        {"combine", required_argument, NULL, O_COMBINE},
        {"view", required_argument, NULL, O_VIEW},
        {"output", required_argument, NULL, O_OUTPUT},
        {"maps", required_argument, NULL, O_MAPS},
        {"color-range", required_argument, NULL, O_COLOR_RANGE},
        {NULL, 0, NULL, 0},
    };
    static const struct {
        int id;
        const char *section, *key, *value;
    } simple[] = {
        {O_SOURCE, "source", "type", NULL},     {O_FRAMES, "run", "frames", NULL},
        {O_HEADLESS, "display", "headless", "true"},
        {O_FULLSCREEN, "display", "fullscreen", "true"},
        {O_SCREENSHOT, "run", "screenshot", NULL},
        {O_RECORD, "record", "dir", NULL},
        {O_RECORD_DEPTH, "record", "depth", "true"},
        {O_FOCAL, "calibration", "focal", NULL},
        {O_BASELINE, "calibration", "baseline", NULL},
        {O_CENTER, "calibration", "center", NULL},
        {O_LEFT, "source", "left", NULL},       {O_RIGHT, "source", "right", NULL},
        {O_INPUT, "source", "input", NULL},
        {O_BASELINES, "stereo", "baselines", NULL},
        {O_COMBINE, "stereo", "combine", NULL},
        /* the flags stereo-match and the Python module share, under the same names */
        {O_MAPS, "calibration", "maps", NULL},
        {O_COLOR_RANGE, "display", "color_range", NULL},
    };
    /* stereo-match's matching and backend options (gpu/stereo_options.h), each as its [stereo]
     * key: -d, --cost, --paths, ... */
    enum { O_MATCH = 512 };
    struct option all[sizeof opts / sizeof opts[0] + 40];
    char shortopts[32] = ":h";
    size_t nall = sizeof opts / sizeof opts[0] - 1;
    memcpy(all, opts, nall * sizeof opts[0]);
    if (stereo_options_getopt(all, &nall, sizeof all / sizeof all[0], O_MATCH, shortopts,
                              sizeof shortopts) != 0) {
        report("the option table does not fit the parser");
        return -1;
    }
    int nview = 2;              /* --view: view2, view3, ... in the order given */
    int c;
    const char *other = NULL;   /* the name of an option given beside --list-cameras */
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
        if (c == 'h' || c == O_VERSION) {
            *(c == 'h' ? &o_app->help : &o_app->version) = 1;
            return 0;
        }
        if (c == '?' || c == ':') {
            /* worded as every program of the project words them */
            if (c == ':')
                report("%s: needs a value (see --help)", argv[optind - 1]);
            else if (!strcmp(argv[optind - 1], "-q") || !strcmp(argv[optind - 1], "--quiet"))
                /* stereo-match's flag: here the stats lines are stdout's, errors stderr's */
                report("%s is stereo-match's; stereo-live writes its stats lines and summary to "
                       "stdout and only errors and notes to stderr: redirect stdout to quieten "
                       "it (>/dev/null), --stats-json keeps the summary", argv[optind - 1]);
            else
                report("unknown option '%s' (see --help)", argv[optind - 1]);
            return -1;
        }
        if (c == O_LIST_CAMERAS) {
#if LIVE_LIBC_ONLY
            report("not built in this binary: --list-cameras (cameras need libv4l2; "
                   "build/stereo-live has it)");
            return -1;
#endif
            o_app->list_cameras = 1;
            continue;
        }
        const stereo_option_info *row = stereo_option_from_getopt(c, O_MATCH);
        for (const struct option *op = all; !other && op->name; op++)
            if (op->val == c)
                other = op->name;
        if (row)
            other = other ? other : row->name;
        if (c == O_CONFIG) {
#if LIVE_LIBC_ONLY
            report("not built in this binary: --config %s (configuration files need inih; "
                   "give the keys with --set, or use build/stereo-live)", optarg);
            return -1;
#endif
            o_app->config_path = optarg;
            continue;
        }
        if (c == O_PRERENDER) {
            char err[256];
            if (parse_int_arg("--synth-prerender", optarg, 1, MAX_PRERENDER, &o_app->prerender,
                              err, sizeof err) != 0) {
                report("%s", err);
                return -1;
            }
            continue;
        }
        if (c == O_STATS_JSON) {
            if (!optarg[0]) {
                report("--stats-json: needs a file name");
                return -1;
            }
            o_app->stats_json = optarg;
            continue;
        }
        if (*nov == MAX_OVERRIDES) {
            report("too many options (at most %d)", MAX_OVERRIDES);
            return -1;
        }
        override *o = &ov[(*nov)++];
        memset(o, 0, sizeof *o);
        for (const struct option *op = opts; op->name; op++)
            if (op->val == c)
                snprintf(o->option, sizeof o->option, "--%s", op->name);
        if (row) { /* a matching option: its [stereo] key, a flag's false */
            snprintf(o->option, sizeof o->option, "--%s", row->name);
            snprintf(o->section, sizeof o->section, "stereo");
            snprintf(o->key, sizeof o->key, "%s", row->key);
            o->value = row->metavar ? optarg : row->type == STEREO_OPT_SWITCH ? "true" : "false";
            continue;
        }
        if (c == O_SET) {
            snprintf(o->option, sizeof o->option, "--set %.80s", optarg);
            const char *dot = strchr(optarg, '.'), *eq = strchr(optarg, '=');
            if (!dot || !eq || dot > eq || dot == optarg || eq == dot + 1 ||
                (size_t)(dot - optarg) >= sizeof o->section ||
                (size_t)(eq - dot - 1) >= sizeof o->key) {
                report("--set %s: expected SECTION.KEY=VALUE (e.g. synth.width=320)", optarg);
                return -1;
            }
            memcpy(o->section, optarg, (size_t)(dot - optarg));
            memcpy(o->key, dot + 1, (size_t)(eq - dot - 1));
            o->value = eq + 1;
            continue;
        }
        if (c == O_OUTPUT) { /* [output] uri, uri2, ... in the order given */
            if (o_app->outputs == OUTPUT_MAX) {
                report("--output %s: more than %d outputs", optarg, OUTPUT_MAX);
                return -1;
            }
            snprintf(o->section, sizeof o->section, "output");
            snprintf(o->key, sizeof o->key, o_app->outputs ? "uri%d" : "uri", o_app->outputs + 1);
            o->value = optarg;
            o_app->outputs++;
            continue;
        }
        if (c == O_VIEW) {
            if (nview == STEREO_MAX_VIEWS) {
                report("--view %s: more than %d views (--view gives view2 .. view%d)", optarg,
                       STEREO_MAX_VIEWS, STEREO_MAX_VIEWS - 1);
                return -1;
            }
            snprintf(o->option, sizeof o->option, "--view (view%d)", nview);
            snprintf(o->section, sizeof o->section, "source");
            snprintf(o->key, sizeof o->key, "view%d", nview++);
            o->value = optarg;
            continue;
        }
        for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
            if (simple[i].id == c) {
                snprintf(o->section, sizeof o->section, "%s", simple[i].section);
                snprintf(o->key, sizeof o->key, "%s", simple[i].key);
                o->value = simple[i].value ? simple[i].value : optarg;
            }
    }
    if (optind < argc) {
        report("%s: unexpected argument (see --help)", argv[optind]);
        return -1;
    }
    if (o_app->list_cameras && other) {
        report("--list-cameras: lists the cameras and exits; --%s does not go with it", other);
        return -1;
    }
    return 0;
}

#if LIVE_LIBC_ONLY
/* What this binary cannot do, refused before anything is opened: 0, or -1 after one line. */
static int check_built_in(const live_config *cfg)
{
    const char *what = NULL, *why = NULL;
    char src[CONFIG_PATH_MAX + 16], err[CONFIG_PATH_MAX + 256];
    source_plan plan;
    if (live_config_plan(cfg, &plan, err, sizeof err) != 0) {
        report("%s", err);
        return -1;
    }
    if (plan.kind != PLAN_SYNTH) {
        snprintf(src, sizeof src, "source %s", plan.from_type ? live_source_to_str(cfg->source)
                                                               : plan.uri[0].text);
        what = src;
        why = plan.kind == PLAN_FILES ? "image files need libpng and libturbojpeg"
              : plan.kind == PLAN_GST_ONE || plan.kind == PLAN_GST_PAIR
                  ? "GStreamer sources need libgstreamer1.0"
                  : "cameras need libv4l2";
    } else if (cfg->record_dir[0]) {
        what = "--record / record.dir", why = "recording writes PNG files: libpng";
    } else if (cfg->screenshot[0]) {
        what = "--screenshot / run.screenshot", why = "a PNG file: libpng";
    } else if (cfg->maps[0]) {
        what = "calibration.maps", why = "map files need zlib";
    } else if (cfg->focal_px > 0 || cfg->center[0]) {
        what = "calibration.focal / baseline / center", why = "depth is shown and saved by the "
               "window and the recording only";
    } else if (cfg->fullscreen) {
        what = "--fullscreen", why = "no window: SDL2";
    }
    for (int i = 0; !what && i < OUTPUT_MAX; i++) {
        output_uri u;
        if (cfg->output[i][0] && output_uri_parse(cfg->output[i], &u, err, sizeof err) == 0 &&
            u.kind != OUT_DISPLAY)
            what = "--output / [output]", why = "outputs need libpng and GStreamer";
    }
    if (!what)
        return 0;
    report("not built in this binary: %s (%s; build/stereo-live has it)", what, why);
    return -1;
}
#endif

/* An input URI's files into the registry: a video file, or an image sequence's pattern (whose
 * folder is the sequence's) and every frame (from 0 or 1 while they exist, as the files source
 * reads them). */
static void add_source_files(outpath_registry *r, const char *key, const source_uri *u)
{
    if (u->kind != URI_FILE)
        return;
    outpath_add(r, 0, key, u->target); /* a pattern: its folder, even before a frame exists */
    if (!u->is_pattern)
        return;
    char path[PATH_MAX], what[64];
    struct stat st;
    for (long k = 0; seq_frame_path(u->target, k, path, sizeof path) == 0; k++) {
        if (stat(path, &st) != 0) {
            if (k == 0)
                continue;
            break;
        }
        snprintf(what, sizeof what, "%s (frame %ld)", key, k);
        outpath_add(r, 0, what, path);
    }
}

#if !LIVE_LIBC_ONLY
/* rtp:// outputs: the host resolves (a name, an IPv4 address or an IPv6 one), as udpsink will
 * resolve it; a host that does not would have udpsink send nothing while the app counts its
 * frames sent. Any family: udpsink sends to IPv4 and IPv6 alike. 0, or -1 after one line. */
static int check_hosts(const live_config *cfg)
{
    for (int i = 0; i < OUTPUT_MAX; i++) {
        output_uri u;
        char err[OUTPUT_URI_MAX + 256], port[16];
        if (!cfg->output[i][0] || output_uri_parse(cfg->output[i], &u, err, sizeof err) != 0 ||
            u.kind != OUT_RTP)
            continue;
        snprintf(port, sizeof port, "%d", u.port);
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res = NULL;
        int e = getaddrinfo(u.target, port, &hints, &res);
        if (e != 0) {
            report("--output '%s': the host '%s' does not resolve (%s)", u.text, u.target,
                   e == EAI_SYSTEM ? strerror(errno) : gai_strerror(e));
            return -1;
        }
        freeaddrinfo(res);
    }
    return 0;
}
#endif

/* Every file the session reads and every file it writes, checked before it starts (outpath.h):
 * the screenshot and --stats-json may not name an input (the configuration, a calibration file,
 * the font, a video or any frame of an image sequence of any view) or each other, be a link, a
 * directory or a device, or lie in a folder that cannot be written; the recording takes a new or
 * empty folder of its own, which holds none of them. Before them, rtp:// hosts resolve
 * (check_hosts). 0, or -1 after one line. */
static int check_outputs(const live_config *cfg, const app_options *o)
{
#if !LIVE_LIBC_ONLY
    if (check_hosts(cfg) != 0)
        return -1;
#endif
    outpath_registry r = {0};
    char err[3 * CONFIG_PATH_MAX + 256];
    const char *comma = strchr(cfg->maps, ',');
    char maps[2][CONFIG_PATH_MAX] = {"", ""};
    snprintf(maps[0], sizeof maps[0], "%.*s",
             comma ? (int)(comma - cfg->maps) : (int)sizeof maps[0] - 1, cfg->maps);
    if (comma)
        snprintf(maps[1], sizeof maps[1], "%s", comma + 1);
    outpath_add(&r, 0, "--config", o->config_path);
    outpath_add(&r, 0, "calibration.maps", maps[0]);
    outpath_add(&r, 0, "calibration.maps", maps[1]);
    outpath_add(&r, 0, "display.font", cfg->font);
    source_plan plan;
    if (live_config_plan(cfg, &plan, err, sizeof err) == 0) {
        source_uri views[STEREO_MAX_VIEWS]; /* views 2 ...: checked by live_config_check */
        int nv = cfg->stereo.views > 2 &&
                 live_config_view_uris(cfg, &plan, views, err, sizeof err) == 0 ? cfg->stereo.views
                                                                                 : 0;
        for (int i = 0; i < plan.nuri; i++) {
            char key[32];
            snprintf(key, sizeof key, "%s.%s", plan.from_type ? "files" : "source",
                     plan.nuri == 1 ? "input" : i ? "right" : "left");
            add_source_files(&r, key, &plan.uri[i]);
        }
        for (int i = 2; i < nv; i++) {
            char key[32];
            snprintf(key, sizeof key, "source.view%d", i);
            add_source_files(&r, key, &views[i]);
        }
    }
    outpath_add(&r, 1, "--screenshot / run.screenshot", cfg->screenshot);
    outpath_add(&r, 1, "--stats-json", o->stats_json);
    /* file outputs: every frame they may write, from 1 on (outpath_add_pattern) */
    for (int i = 0; i < OUTPUT_MAX; i++) {
        output_uri u;
        if (cfg->output[i][0] && output_uri_parse(cfg->output[i], &u, err, sizeof err) == 0 &&
            u.kind == OUT_FILE) {
            if (seq_is_pattern(u.target))
                outpath_add_pattern(&r, "--output", u.target, 1);
            else
                outpath_add(&r, 1, "--output", u.target);
        }
    }
    /* gst:// outputs: the files their sinks write (app/output_gst.c checks that GStreamer
     * built what was read here) */
    for (int i = 0; i < OUTPUT_MAX; i++) {
        output_uri u;
        output_gst_file f[OUTPUT_GST_FILES_MAX];
        int nf;
        if (!cfg->output[i][0] || output_uri_parse(cfg->output[i], &u, err, sizeof err) != 0 ||
            u.kind != OUT_GST)
            continue;
        if ((nf = output_gst_files(u.target, f, OUTPUT_GST_FILES_MAX, err, sizeof err)) < 0) {
            outpath_registry_free(&r);
            report("--output '%s': %s", u.text, err);
            return -1;
        }
        for (int k = 0; k < nf; k++) {
            char what[64];
            snprintf(what, sizeof what, "--output %.15s", f[k].element);
            if (f[k].is_pattern)
                outpath_add_pattern(&r, what, f[k].location, 0);
            else
                outpath_add(&r, 1, what, f[k].location);
        }
    }
    int rc = outpath_registry_check(&r, "--record / record.dir", cfg->record_dir, err, sizeof err);
    if (rc == 0)
        rc = pair_recorder_check(cfg, err, sizeof err);
    outpath_registry_free(&r);
    if (rc != 0)
        report("%s", err);
    return rc;
}

/* Defaults, the file, the options, the cross-checks: 0, or -1 after printing one line. */
static int load_config(int argc, char **argv, live_config *cfg, app_options *o)
{
    override ov[MAX_OVERRIDES];
    int nov = 0;
    char err[1024];
    live_config_defaults(cfg);
    if (parse_options(argc, argv, o, ov, &nov) != 0)
        return -1;
    if (o->help || o->version || o->list_cameras)
        return 0;
#if !LIVE_LIBC_ONLY
    if (o->config_path && live_config_load(o->config_path, cfg, err, sizeof err) != 0) {
        report("%s", err);
        return -1;
    }
#endif
    if (o->outputs) /* --output replaces the file's list */
        memset(cfg->output, 0, sizeof cfg->output);
    for (int i = 0; i < nov; i++) {
        /* a matching option's message is stereo-match's: the key's (the table's parser,
         * app/config.c) after the option's name */
        if (live_config_set(cfg, ov[i].section, ov[i].key, ov[i].value, err, sizeof err) != 0) {
            /* "KEY: what is wrong" after the option that set it ("--frames: 'abc' is ...") */
            size_t k = strlen(ov[i].key);
            const char *why = strncmp(err, ov[i].key, k) == 0 && err[k] == ':' && err[k + 1] == ' '
                                  ? err + k + 2 : err;
            report("%s: %s", ov[i].option, why);
            return -1;
        }
    }
#if LIVE_LIBC_ONLY
    if (check_built_in(cfg) != 0)
        return -1;
#endif
    if (live_config_check(cfg, err, sizeof err) != 0) {
        report("%s", err);
        return -1;
    }
    source_plan plan;
    if (live_config_plan(cfg, &plan, err, sizeof err) != 0) {
        report("%s", err);
        return -1;
    }
    if (o->prerender && plan.kind != PLAN_SYNTH) {
        report("--synth-prerender: only for the generated scene (source synth), not %s",
               plan.from_type ? live_source_to_str(cfg->source) : plan.uri[0].text);
        return -1;
    }
    return check_outputs(cfg, o);
}

#if !LIVE_LIBC_ONLY
/* --list-cameras: the V4L2 devices in $STEREO_DEV_DIR (default /dev; tests point it elsewhere).
 * Exit status 0 when at least one video capture device was listed, 1 when none was (no video
 * nodes, none that captures, or none that could be opened: the list says why). */
static int list_cameras(void)
{
    const char *dir = getenv("STEREO_DEV_DIR");
    char err[1024];
    camera_list l;
    if (!dir || !dir[0])
        dir = "/dev";
    if (camera_list_scan(dir, &l, err, sizeof err) != 0) {
        report("--list-cameras: %s", err);
        return 1;
    }
    int n = live_cameras_print(&l, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        report("--list-cameras: cannot write the list: %s", strerror(errno));
        camera_list_free(&l);
        return 1;
    }
    if (l.n == 0)
        report("--list-cameras: no V4L2 devices (no video* in %s): is a camera connected? "
               "(lsusb shows whether the system sees it)", dir);
    else if (n == 0)
        report("--list-cameras: none of the %d video node%s in %s is a camera the app can "
               "capture from (see above)", l.n, l.n == 1 ? "" : "s", dir);
    camera_list_free(&l);
    return n > 0 ? 0 : 1;
}
#endif

/* ---- statistics over the last second ------------------------------------------------------- */

typedef struct {
    int64_t t_ns;
    live_stats last;
    double capture_fps, stage_fps, stage_ms;
    double latency_sum_ms;
    int latency_n;
    double latency_ms;      /* mean over the last period */
    live_histogram latency; /* the whole run: capture -> consumed by the display, ms */
    uint64_t shown;         /* results the display consumed */
    uint64_t captured, dropped; /* over the last period */
    int slow_periods;       /* periods in a row the stage did not keep up (keep_up_check) */
    int told;               /* keep_up_check said so */
} rates;

static void rates_update(rates *r, const live_stats *s, int64_t now)
{
    double dt = (double)(now - r->t_ns) * 1e-9;
    if (dt <= 0)
        return;
    uint64_t dp = s->processed - r->last.processed;
    r->captured = s->captured - r->last.captured;
    r->dropped = s->dropped - r->last.dropped;
    r->capture_fps = (double)(s->captured - r->last.captured) / dt;
    r->stage_fps = (double)dp / dt;
    if (dp)
        r->stage_ms = (s->stage_ms_total - r->last.stage_ms_total) / (double)dp;
    if (r->latency_n)
        r->latency_ms = r->latency_sum_ms / r->latency_n;
    r->latency_sum_ms = 0;
    r->latency_n = 0;
    r->last = *s;
    r->t_ns = now;
}

static void rates_latency(rates *r, int64_t capture_ns, int64_t now)
{
    double ms = (double)(now - capture_ns) * 1e-6;
    r->latency_sum_ms += ms;
    r->latency_n++;
    live_histogram_add(&r->latency, ms);
    r->shown++;
}

/* ---- what the app runs on -------------------------------------------------------------------- */

typedef struct {
    live_config cfg;
    app_options opt;
    frame_source *src;
    frame_source_info info;
    stereo_map maps[STEREO_MAX_VIEWS]; /* one per view (the pair: left, right) */
    int have_maps;
    int maps_rig;                /* maps[] point into rig_maps (a rig file), else mapfile's */
#if !LIVE_LIBC_ONLY
    stereo_map rig_maps[CALIB_RIG_MAX]; /* a rig file's, one per camera (calib_rig_free_maps) */
#endif
    depth_camera cam;            /* the camera for depth (hal/depth.h), when have_cam */
    int have_cam;                /* from the calibration, or [calibration] focal / baseline */
    const char *cam_from;        /* which, for the log */
    uint8_t *shown_grey;         /* the shown frame's rectified left (grey), for key p */
    uint8_t *shown_rgb;          /* its left input when RGB24 (source size), else unused */
    int shown_is_rgb;
    stereo_params params;
    live_pipeline *pipe;
#if !LIVE_LIBC_ONLY
    live_outputs *outputs;       /* --output / [output] other than display:// (NULL: none) */
#endif
    rates rt;
    /* the newest frame shown */
    uint64_t shown;
    double scene_t;
    int p2;
    stereo_method method;        /* of the shown frame */
    int16_t *disparity;          /* copy of the shown disparity, for the cursor readout */
    colormap_range shown_color;  /* the colour range of the frame shown (the legend's) */
    uint8_t *last_rgb;           /* headless --screenshot: the shown colour disparity */
    /* more views ([stereo] baselines): of the frame shown */
    int views_used;              /* the views its stage matched (2 while a view >= 2 is lost) */
    unsigned shown_lost;         /* its lost views */
    int64_t view_skew_ns[FRAME_MAX_VIEWS];
    uint64_t view_drops[FRAME_MAX_VIEWS];
} app;

/* "3 views 1,-1 sides" for a stage of more views, "" for the pair. */
static const char *views_name(const app *a, char *buf, size_t len)
{
    const stereo_params *p = &a->params;
    if (len)
        buf[0] = '\0';
    if (p->views <= 2)
        return buf;
    size_t used = (size_t)snprintf(buf, len, "%d views 1", p->views);
    for (int i = 2; i < p->views && used < len; i++) {
        char b[16];
        used += (size_t)snprintf(buf + used, len - used, ",%s",
                                 stereo_baseline_str(p->baseline[i], b, sizeof b));
    }
    if (used < len)
        snprintf(buf + used, len - used, " %s", stereo_combine_to_str(p->combine));
    return buf;
}

/* The views' state for the overlay and the log, two lines (0 for the pair: nothing to say):
 * what matched the frame shown ("3 views 1,-1 sides", or the fallback while a view is lost,
 * or waiting while the reference or view 1 is), and each camera's skew to the reference and
 * drops, as the source reported them. Returns 1 when a view is lost (shown in yellow). */
static int views_lines(const app *a, const live_stats *s, char *l1, char *l2, size_t len)
{
    if (a->params.views <= 2)
        return 0;
    char name[96];
    views_name(a, name, sizeof name);
    int lost = 0;
    if (s->views_used == 0 && s->view_waits) { /* the latest delivery could not be matched */
        unsigned l = s->lost_views & 3u;
        snprintf(l1, len, "%s: view %d lost, waiting for it (the last depth stays)", name,
                 l & 2u ? 1 : 0);
        lost = 1;
    } else if (a->views_used && a->views_used < a->params.views) {
        int v = 2;
        while (v < a->params.views && !(a->shown_lost & 1u << v))
            v++;
        snprintf(l1, len, "%s: view %d lost, depth from the reference and view 1", name, v);
        lost = 1;
    } else
        snprintf(l1, len, "%s", name);
    size_t used = (size_t)snprintf(l2, len, "skew ms");
    for (int i = 1; i < a->params.views && used < len; i++)
        used += (size_t)snprintf(l2 + used, len - used, "%s v%d %+.1f", i > 1 ? "," : "", i,
                                 (double)a->view_skew_ns[i] * 1e-6);
    if (used < len)
        used += (size_t)snprintf(l2 + used, len - used, "   drops");
    for (int i = 1; i < a->params.views && used < len; i++)
        used += (size_t)snprintf(l2 + used, len - used, "%s v%d %llu", i > 1 ? "," : "", i,
                                 (unsigned long long)a->view_drops[i]);
    return 1 + lost;
}

/* ", recorded N, record drops M" while recording, else "". */
static void record_counts(const live_stats *s, char *buf, size_t len)
{
    if (s->recording)
        snprintf(buf, len, ", recorded %llu, record drops %llu", (unsigned long long)s->recorded,
                 (unsigned long long)s->record_drops);
    else if (len)
        buf[0] = 0;
}

/* Cost mi: "MI: warm, 3 restarts" (the latest frame, and the hierarchy runs so far), else "". */
static void mi_counts(const live_stats *s, char *buf, size_t len)
{
    if (s->mi)
        snprintf(buf, len, "MI: %s, %llu restart%s", s->mi_warm_last ? "warm" : "restart",
                 (unsigned long long)s->mi_restarts, s->mi_restarts == 1 ? "" : "s");
    else if (len)
        buf[0] = 0;
}

/* Said once a run, when the stage has not kept up with the source for two periods in a row
 * (more than 10 % of the captured frames dropped, a stage time above the source's frame
 * interval): the stage's time against the interval, the share dropped, and the settings that
 * make the stage faster. */
static void keep_up_check(app *a)
{
    rates *r = &a->rt;
    const double interval = r->capture_fps > 0 ? 1000.0 / r->capture_fps : 0;
    const int slow = r->captured >= 5 && r->dropped * 10 > r->captured && interval > 0 &&
                     r->stage_ms > interval;
    r->slow_periods = slow ? r->slow_periods + 1 : 0;
    if (r->told || r->slow_periods < 2)
        return;
    r->told = 1;
    const stereo_params *p = &a->params;
    char help[160] = "";
    size_t n = 0;
    if (p->num_disparities >= 32)
        n += (size_t)snprintf(help + n, sizeof help - n, "%s-d %d", n ? ", " : "",
                              p->num_disparities / 32 * 16);
    if (p->paths == 8 && n < sizeof help)
        n += (size_t)snprintf(help + n, sizeof help - n, "%s--paths 4", n ? ", " : "");
    if (p->cost != STEREO_COST_RANK && n < sizeof help)
        n += (size_t)snprintf(help + n, sizeof help - n, "%s--cost rank", n ? ", " : "");
    report("the stage does not keep up with the source: %.1f ms a frame against %.1f ms between "
           "frames (%.1f fps), %.0f %% of the captured frames dropped%s%s%s",
           r->stage_ms, interval, r->capture_fps, 100.0 * (double)r->dropped / (double)r->captured,
           n ? "; faster settings: " : "", help,
           strcmp(live_pipeline_backend(a->pipe), "cpu") == 0 ? " (or a CUDA GPU)" : "");
}

static void status_line(app *a, const live_stats *s, char *buf, size_t len)
{
    char rec[96], mi[64], v1[OVERLAY_LINE], v2[OVERLAY_LINE], views[2 * OVERLAY_LINE + 8] = "";
    record_counts(s, rec, sizeof rec);
    mi_counts(s, mi, sizeof mi);
    if (views_lines(a, s, v1, v2, sizeof v1))
        snprintf(views, sizeof views, " | %s | %s", v1, v2);
    snprintf(buf, len, "frame %llu | capture %.1f fps | stage %.1f fps %.1f ms | latency %.0f ms"
             " | dropped %llu%s | %s | %dx%d D%d%s%s%s%s%s%s%s",
             (unsigned long long)s->processed, a->rt.capture_fps, a->rt.stage_fps, a->rt.stage_ms,
             a->rt.latency_ms, (unsigned long long)s->dropped, rec, live_pipeline_backend(a->pipe),
             a->params.width, a->params.height, a->params.num_disparities, views,
             mi[0] ? " | " : "", mi, s->source_stats[0] ? " | " : "", s->source_stats,
             s->message[0] ? " | " : "", s->message);
#if !LIVE_LIBC_ONLY
    size_t used = strlen(buf); /* " | out URI N sent M drops; ..." */
    if (used < len)
        live_outputs_status(a->outputs, buf + used, len - used);
#endif
}

#if !LIVE_LIBC_ONLY
/* The generated scene's time lets a test render the ground truth of the frame shown. */
static void log_screenshot(const app *a)
{
    if (a->info.have_scene_time)
        report("screenshot %s (frame %llu, scene t %.3f s)", a->cfg.screenshot,
              (unsigned long long)a->shown, a->scene_t);
    else
        report("screenshot %s (frame %llu)", a->cfg.screenshot, (unsigned long long)a->shown);
}
#endif

/* Keeps what the overlay and the screenshot need from a frame the display holds. The window
 * keeps the disparity for the cursor readout (at most once per refresh); the headless loop
 * takes every result and reads no disparity: copying it there would read every result on the
 * CPU, which on a discrete GPU migrates the result pages to the host and back each frame. */
static void take_frame(app *a, const live_frame *f, int keep_disparity)
{
    size_t n = (size_t)a->params.width * a->params.height;
    if (keep_disparity)
        memcpy(a->disparity, f->result.disparity, n * sizeof *a->disparity);
    if (keep_disparity && a->shown_grey) { /* the colours of key p's point cloud */
        memcpy(a->shown_grey, f->result.rectified[0], n);
        a->shown_is_rgb = f->left.format == STEREO_PIX_RGB24 && a->shown_rgb &&
                          f->left.width == a->info.width && f->left.height == a->info.height;
        for (int y = 0; a->shown_is_rgb && y < f->left.height; y++)
            memcpy(a->shown_rgb + (size_t)y * f->left.width * 3, f->left.data + y * f->left.pitch,
                   (size_t)f->left.width * 3);
    }
    a->shown = f->number;
    a->scene_t = f->scene_t;
    a->views_used = f->views_used;
    a->shown_lost = f->lost;
    memcpy(a->view_skew_ns, f->view_skew_ns, sizeof a->view_skew_ns);
    memcpy(a->view_drops, f->view_drops, sizeof a->view_drops);
    a->p2 = f->p2;
    a->method = f->method;
    a->shown_color = f->color;
    if (a->last_rgb)
        for (int y = 0; y < a->params.height; y++)
            for (int x = 0; x < a->params.width; x++)
                memcpy(a->last_rgb + ((size_t)y * a->params.width + x) * 3,
                       f->result.rgba + y * f->result.rgba_pitch + (size_t)x * 4, 3);
}

/* ---- headless ---------------------------------------------------------------------------- */

static void run_headless(app *a)
{
    int64_t next_print = monotonic_ns() + 1000000000LL;
    live_stats s;
    char line[1024];
    while (!got_signal) {
        live_pipeline_wait(a->pipe, 100);
        live_frame f;
        if (live_pipeline_acquire(a->pipe, &f)) {
            take_frame(a, &f, 0);
            live_pipeline_release(a->pipe);
            rates_latency(&a->rt, f.capture_ns, monotonic_ns());
        }
        int64_t now = monotonic_ns();
        if (now >= next_print) {
            live_pipeline_stats(a->pipe, &s);
            rates_update(&a->rt, &s, now);
            keep_up_check(a);
            status_line(a, &s, line, sizeof line);
            printf("%s\n", line);
            fflush(stdout);
            next_print += 1000000000LL;
        }
        if (live_pipeline_finished(a->pipe))
            break;
    }
}

/* ---- display --------------------------------------------------------------------------------- */
#if !LIVE_LIBC_ONLY

typedef struct {
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *disp;   /* stage size: the colour-mapped disparity */
    SDL_Texture *pair;   /* 2 x source width: left | right input */
    TTF_Font *font;
    int font_px, ttf_up;
    Uint32 wake_event;
    live_view view;
    colormap_id colormap;
    int auto_range, legend;      /* [display] color_range = auto, legend; keys a, l */
    colormap_range range;        /* the smoothed automatic range asked of the pipeline */
    int have_range;              /* range holds a value (else the next one is taken as is) */
    int paused, help, fullscreen;
    int mouse_x, mouse_y, mouse_in;
    int shown_any;
    int screenshots;
    int depth_saves;     /* key p */
    char note[OVERLAY_LINE];     /* key p's result on screen until note_until_ns */
    int64_t note_until_ns;
    int note_bad;
    char renderer[64];   /* video driver and renderer, for the log */
} display;

static void wake_display(void *user)
{
    display *d = user;
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = d->wake_event;
    SDL_PushEvent(&e); /* thread-safe; a full queue only delays the next frame */
}

static void open_font(display *d, const live_config *cfg)
{
    int w, h;
    SDL_GetRendererOutputSize(d->ren, &w, &h);
    int px = h / 34;
    px = px < 11 ? 11 : px > 22 ? 22 : px;
    if (d->font && px == d->font_px)
        return;
    if (d->font)
        TTF_CloseFont(d->font);
    d->font = TTF_OpenFont(cfg->font, px);
    d->font_px = px;
    if (!d->font)
        report("font %s: %s (no overlay text)", cfg->font, TTF_GetError());
}

static void display_close(display *d)
{
    if (d->font)
        TTF_CloseFont(d->font);
    if (d->ttf_up)
        TTF_Quit();
    if (d->disp)
        SDL_DestroyTexture(d->disp);
    if (d->pair)
        SDL_DestroyTexture(d->pair);
    if (d->ren)
        SDL_DestroyRenderer(d->ren);
    if (d->win)
        SDL_DestroyWindow(d->win);
    SDL_Quit();
    memset(d, 0, sizeof *d);
}

/* SDL tries its Wayland driver when there is no X display. It connects through
 * libwayland-client, which prints "error: XDG_RUNTIME_DIR is invalid or not set in the
 * environment." when that variable is missing, although no compositor can be reached then (its
 * socket lives there, unless WAYLAND_DISPLAY is an absolute path). So in that case the Wayland
 * driver is left out of the drivers SDL tries: an SDL_VIDEODRIVER hint that lists SDL's own
 * order without it (a list, and a hint rather than only the environment variable, from SDL
 * 2.0.22 on; the environment, and a choice made there, stay as they are). 1 when the line may
 * still come (an older SDL), so that the "no display" message can explain it; else 0. */
static int leave_out_unreachable_wayland(void)
{
    const char *asked = SDL_getenv("SDL_VIDEODRIVER"), *run = SDL_getenv("XDG_RUNTIME_DIR"),
               *socket = SDL_getenv("WAYLAND_DISPLAY");
    if ((asked && asked[0]) || (run && run[0] == '/') || (socket && socket[0] == '/'))
        return 0;
    char others[256] = "";
    int wayland = 0;
    for (int i = 0; i < SDL_GetNumVideoDrivers(); i++) {
        const char *name = SDL_GetVideoDriver(i);
        if (strcmp(name, "wayland") == 0)
            wayland = 1;
        else if (strlen(others) + strlen(name) + 2 < sizeof others)
            snprintf(others + strlen(others), sizeof others - strlen(others), "%s%s",
                     others[0] ? "," : "", name);
    }
    SDL_version v;
    SDL_GetVersion(&v);
    if (!wayland)
        return 0;
    if (SDL_VERSIONNUM(v.major, v.minor, v.patch) < SDL_VERSIONNUM(2, 0, 22))
        return 1;
    SDL_SetHint("SDL_VIDEODRIVER", others); /* SDL_HINT_VIDEODRIVER, from 2.0.22 */
    return 0;
}

/* Opens the window. 0; -1 when there is no display (err says why: the app then runs headless). */
static int display_open(display *d, const app *a, char *err, size_t errlen)
{
    const live_config *cfg = &a->cfg;
    memset(d, 0, sizeof *d);
    d->view = cfg->view;
    d->colormap = cfg->colormap;
    d->auto_range = cfg->color_range_auto;
    d->legend = cfg->legend;
    d->fullscreen = cfg->fullscreen;
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1"); /* SIGINT/SIGTERM are ours */
    const char *wayland_line = leave_out_unreachable_wayland()
                                   ? "; the XDG_RUNTIME_DIR line above is SDL's Wayland driver "
                                     "finding no Wayland display either"
                                   : "";
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        snprintf(err, errlen, "%s%s", SDL_GetError(), wayland_line);
        SDL_Quit();
        return -1;
    }
    /* SDL falls back to a window in memory when there is no screen: that is "no display",
     * unless asked for by name (SDL_VIDEODRIVER=offscreen, for tests) */
    const char *driver = SDL_GetCurrentVideoDriver(), *asked = SDL_getenv("SDL_VIDEODRIVER");
    if (driver && (!strcmp(driver, "offscreen") || !strcmp(driver, "dummy")) &&
        !(asked && asked[0])) {
        snprintf(err, errlen, "SDL found no screen, only its %s driver%s", driver, wayland_line);
        SDL_Quit();
        return -1;
    }
    int w = cfg->window_width, h = cfg->window_height;
    if (w <= 0 || h <= 0) {
        int k = a->params.width < MIN_WINDOW_WIDTH ? MIN_WINDOW_WIDTH / a->params.width : 1;
        w = a->params.width * (k < 1 ? 1 : k);
        h = a->params.height * (k < 1 ? 1 : k);
    }
    Uint32 flags = SDL_WINDOW_RESIZABLE | (d->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
    if (!(d->win = SDL_CreateWindow("stereo-live", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                    w, h, flags))) {
        snprintf(err, errlen, "%s", SDL_GetError());
        display_close(d);
        return -1;
    }
    if (!(d->ren = SDL_CreateRenderer(d->win, -1, 0)) &&
        !(d->ren = SDL_CreateRenderer(d->win, -1, SDL_RENDERER_SOFTWARE))) {
        snprintf(err, errlen, "renderer: %s", SDL_GetError());
        display_close(d);
        return -1;
    }
    SDL_RendererInfo ri;
    snprintf(d->renderer, sizeof d->renderer, "%s %s", driver ? driver : "?",
             SDL_GetRendererInfo(d->ren, &ri) == 0 ? ri.name : "?");
    d->disp = SDL_CreateTexture(d->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                a->params.width, a->params.height);
    d->pair = SDL_CreateTexture(d->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                2 * a->params.width, a->params.height);
    if (!d->disp || !d->pair) {
        snprintf(err, errlen, "texture: %s", SDL_GetError());
        display_close(d);
        return -1;
    }
    if (TTF_Init() != 0)
        report("SDL_ttf: %s (no overlay text)", TTF_GetError());
    else {
        d->ttf_up = 1;
        open_font(d, cfg);
    }
    d->wake_event = SDL_RegisterEvents(1);
    return 0;
}

/* One input image's rows into RGBA texture rows (grey, RGB24, or YUYV's luma). */
static void input_to_rgba(const stereo_image *im, uint8_t *pixels, int pitch, int x0)
{
    for (int y = 0; y < im->height; y++) {
        const uint8_t *s = im->data + y * im->pitch;
        uint8_t *o = pixels + (size_t)y * pitch + (size_t)x0 * 4;
        for (int x = 0; x < im->width; x++, o += 4) {
            if (im->format == STEREO_PIX_RGB24) {
                o[0] = s[3 * x];
                o[1] = s[3 * x + 1];
                o[2] = s[3 * x + 2];
            } else {
                o[0] = o[1] = o[2] = s[im->format == STEREO_PIX_YUYV ? 2 * x : x];
            }
            o[3] = 255;
        }
    }
}

/* Copies a held frame into the textures, row by row at the pitch SDL gives. */
static void upload(display *d, const live_frame *f)
{
    void *px;
    int pitch;
    if (SDL_LockTexture(d->disp, NULL, &px, &pitch) == 0) {
        int w, h;
        SDL_QueryTexture(d->disp, NULL, NULL, &w, &h);
        for (int y = 0; y < h; y++)
            memcpy((uint8_t *)px + (size_t)y * pitch, f->result.rgba + y * f->result.rgba_pitch,
                   (size_t)w * 4);
        SDL_UnlockTexture(d->disp);
    }
    if (SDL_LockTexture(d->pair, NULL, &px, &pitch) == 0) {
        /* the rectified grey images the stage matched: rows are epipolar lines */
        int w, h;
        SDL_QueryTexture(d->pair, NULL, NULL, &w, &h);
        w /= 2;
        for (int i = 0; i < 2; i++) {
            stereo_image im = {f->result.rectified[i], w, h, (size_t)w, STEREO_PIX_GREY8};
            input_to_rgba(&im, px, pitch, i * w);
        }
        SDL_UnlockTexture(d->pair);
    }
}

/* The largest rect of the image's aspect centred in the output. */
static SDL_Rect fit_rect(SDL_Renderer *ren, int iw, int ih)
{
    int ow, oh;
    SDL_GetRendererOutputSize(ren, &ow, &oh);
    SDL_Rect r;
    if ((int64_t)ow * ih <= (int64_t)oh * iw) {
        r.w = ow;
        r.h = (int)((int64_t)ow * ih / iw);
    } else {
        r.h = oh;
        r.w = (int)((int64_t)oh * iw / ih);
    }
    r.x = (ow - r.w) / 2;
    r.y = (oh - r.h) / 2;
    return r;
}

/* The view's image size and where it is drawn. */
static SDL_Rect view_rect(const display *d, const app *a, int *iw, int *ih)
{
    *iw = d->view == VIEW_PAIR ? 2 * a->params.width : a->params.width;
    *ih = a->params.height;
    return fit_rect(d->ren, *iw, *ih);
}

/* The stage pixel under the mouse (the left image in the pair view). 0 if outside. */
static int cursor_pixel(const display *d, const app *a, int *x, int *y)
{
    int iw, ih;
    SDL_Rect r = view_rect(d, a, &iw, &ih);
    if (!d->mouse_in || d->mouse_x < r.x || d->mouse_y < r.y || d->mouse_x >= r.x + r.w ||
        d->mouse_y >= r.y + r.h)
        return 0;
    double u = (double)(d->mouse_x - r.x) / r.w, v = (double)(d->mouse_y - r.y) / r.h;
    if (d->view == VIEW_PAIR) {
        if (u >= 0.5)
            return 0;
        u *= 2;
    }
    *x = (int)(u * a->params.width);
    *y = (int)(v * a->params.height);
    return *x < a->params.width && *y < a->params.height;
}

static int text_width(display *d, const char *s)
{
    int w = 0, h = 0;
    if (d->font)
        TTF_SizeUTF8(d->font, s, &w, &h);
    return w;
}

static void draw_text(display *d, int x, int y, const char *s, SDL_Color c)
{
    if (!d->font || !s[0])
        return;
    SDL_Surface *surf = TTF_RenderUTF8_Blended(d->font, s, c);
    if (!surf)
        return;
    SDL_Texture *t = SDL_CreateTextureFromSurface(d->ren, surf);
    if (t) {
        SDL_Rect dst = {x, y, surf->w, surf->h};
        SDL_RenderCopy(d->ren, t, NULL, &dst);
        SDL_DestroyTexture(t);
    }
    SDL_FreeSurface(surf);
}

/* Lines of text on a dark box at (x, y). */
static void draw_box(display *d, int x, int y, char lines[][OVERLAY_LINE],
                     const SDL_Color *colors, int n)
{
    if (!d->font)
        return;
    int lh = TTF_FontLineSkip(d->font), w = 0, pad = d->font_px / 2;
    for (int i = 0; i < n; i++) {
        int tw = text_width(d, lines[i]);
        w = tw > w ? tw : w;
    }
    SDL_Rect box = {x, y, w + 2 * pad, n * lh + 2 * pad};
    SDL_SetRenderDrawBlendMode(d->ren, SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(d->ren, 0, 0, 0, 190);
    SDL_RenderFillRect(d->ren, &box);
    for (int i = 0; i < n; i++)
        draw_text(d, x + pad, y + pad + i * lh, lines[i], colors[i]);
}

static void draw_overlay(display *d, app *a, const live_stats *s)
{
    static const SDL_Color white = {235, 235, 235, 255}, red = {255, 96, 96, 255},
                           yellow = {255, 220, 90, 255};
    char lines[16][OVERLAY_LINE];
    SDL_Color colors[16];
    int n = 0;
    snprintf(lines[n], OVERLAY_LINE, "capture %.1f fps   stage %.1f fps  %.1f ms",
             a->rt.capture_fps, a->rt.stage_fps, a->rt.stage_ms);
    colors[n++] = white;
    snprintf(lines[n], OVERLAY_LINE, "latency %.0f ms   dropped %llu   frame %llu",
             a->rt.latency_ms, (unsigned long long)s->dropped, (unsigned long long)a->shown);
    colors[n++] = white;
    char method[48];
    if (a->method == STEREO_METHOD_BM)
        snprintf(method, sizeof method, "BM %dx%d %s", a->params.block, a->params.block,
                 stereo_cost_to_str(a->params.cost));
    else
        snprintf(method, sizeof method, "SGM %s   P2 %d", stereo_cost_to_str(a->params.cost),
                 a->p2);
    char band[16] = "";
    if (a->params.band)
        snprintf(band, sizeof band, "   band %d", a->params.band);
    snprintf(lines[n], OVERLAY_LINE, "%s%s   %dx%d   D %d   %s%s", live_pipeline_backend(a->pipe),
             live_pipeline_backend_note(a->pipe)[0] ? " (fallback)" : "", a->params.width,
             a->params.height, a->params.num_disparities, method, band);
    colors[n++] = white;
    const stereo_postfilter *pf = &a->params.post; /* as the keys k / i / t left them */
    if (pf->speckle_size || pf->fill || pf->temporal) {
        char speckle[32] = "";
        if (pf->speckle_size)
            snprintf(speckle, sizeof speckle, "   speckle < %d px", pf->speckle_size);
        snprintf(lines[n], OVERLAY_LINE, "post-filters%s%s%s", speckle,
                 pf->fill ? "   fill" : "", pf->temporal ? "   temporal" : "");
        colors[n++] = white;
    }
    snprintf(lines[n], OVERLAY_LINE, "view %s   %s %s range%s", live_view_to_str(d->view),
             colormap_to_str(d->colormap), d->auto_range ? "auto" : "fixed",
             d->paused ? "   PAUSED" : "");
    colors[n++] = d->paused ? yellow : white;
    int vl = views_lines(a, s, lines[n], lines[n + 1], OVERLAY_LINE);
    if (vl) { /* more views: the rule, a lost view, each camera's skew and drops */
        colors[n++] = vl > 1 ? yellow : white;
        colors[n++] = white;
    }
    if (s->mi) { /* cost mi: did this frame start from the previous one, or from 1/16 */
        mi_counts(s, lines[n], OVERLAY_LINE);
        colors[n++] = s->mi_warm_last ? white : yellow;
    }
    if (s->source_stats[0]) { /* cameras: pairing skew and drops, to check the two are paired */
        /* a long line (a GStreamer pair's) in two, at the ", " nearest its middle, so that a
         * small window does not cut it off */
        const char *st = s->source_stats, *cut = NULL;
        const size_t len = strlen(st);
        for (const char *q = strstr(st, ", "); len > 60 && q; q = strstr(q + 2, ", "))
            if (!cut || labs((long)(q - st) - (long)len / 2) < labs((long)(cut - st) - (long)len / 2))
                cut = q;
        if (cut) {
            snprintf(lines[n], OVERLAY_LINE, "%.*s,", (int)(cut - st), st);
            colors[n++] = white;
            snprintf(lines[n], OVERLAY_LINE, "  %s", cut + 2);
        } else
            snprintf(lines[n], OVERLAY_LINE, "%s", st);
        colors[n++] = white;
    }
    if (s->recording) { /* the writer thread: pairs written, pairs it could not keep up with */
        snprintf(lines[n], OVERLAY_LINE, "recorded %llu   record drops %llu",
                 (unsigned long long)s->recorded, (unsigned long long)s->record_drops);
        colors[n++] = s->record_drops ? yellow : white;
    }
    int x, y;
    if (a->shown && cursor_pixel(d, a, &x, &y)) {
        int16_t v = a->disparity[(size_t)y * a->params.width + x];
        if (v == STEREO_INVALID)
            snprintf(lines[n], OVERLAY_LINE, "(%d, %d)  no disparity", x, y);
        else if (a->have_cam) { /* the millimetres of the depth PNG (hal/depth.h's rule) */
            unsigned mm = depth_mm(&a->cam, v);
            char z[48];
            if (mm)
                snprintf(z, sizeof z, "Z %u.%03u m", mm / 1000, mm % 1000);
            else
                snprintf(z, sizeof z, isfinite(depth_m(&a->cam, v)) ? "Z > 65.535 m"
                                                                    : "Z: no depth (d <= 0)");
            snprintf(lines[n], OVERLAY_LINE, "(%d, %d)  d %.2f px   %s", x, y,
                     v / (double)STEREO_SUBPIXEL_SCALE, z);
        }
        else
            snprintf(lines[n], OVERLAY_LINE, "(%d, %d)  d %.2f px%s", x, y,
                     v / (double)STEREO_SUBPIXEL_SCALE,
                     d->view == VIEW_DEPTH ? "   (depth needs a calibration or --focal/--baseline)" : "");
        colors[n++] = d->view == VIEW_DEPTH ? yellow : white;
    }
    if (s->message[0]) {
        snprintf(lines[n], OVERLAY_LINE, "%s", s->message);
        colors[n++] = red;
    }
    if (d->note[0] && monotonic_ns() < d->note_until_ns) { /* what key p did, for a while */
        snprintf(lines[n], OVERLAY_LINE, "%s", d->note);
        colors[n++] = d->note_bad ? yellow : white;
    }
    if (s->error[0]) {
        snprintf(lines[n], OVERLAY_LINE, "stopped: %s", s->error);
        colors[n++] = red;
    }
    int pad = d->font_px / 2;
    draw_box(d, pad, pad, lines, colors, n);

    if (d->help) {
        static const char *const keys[] = {
            "q / Esc   quit",      "Space     pause",
            "v         view: disparity, left, pair, depth",
            "c         colour map: turbo, jet, grey (next frame)",
            "a         colour range: fixed (search range) / auto",
            "l         legend (colour bar) on / off",
            "s         screenshot (PNG in the current folder)",
            "p         point cloud (PLY) and depth PNG (mm) of the frame shown, beside the screenshots",
            "f         full screen",
            "+ / -     P2 up / down, every path's (recreates the stage)",
            "m         method: SGM <-> block matching (recreates the stage)",
            "k / i / t speckle removal / hole filling / temporal filter on / off",
            "h         this help",
        };
        enum { NK = sizeof keys / sizeof *keys };
        char help[NK][OVERLAY_LINE];
        SDL_Color hc[NK];
        for (int i = 0; i < NK; i++) {
            snprintf(help[i], OVERLAY_LINE, "%s", keys[i]);
            hc[i] = white;
        }
        int ow, oh;
        SDL_GetRendererOutputSize(d->ren, &ow, &oh);
        draw_box(d, ow / 4, oh / 3, help, hc, NK);
    }
}

/* The colour bar of the frame shown, bottom right of the image: its range (fixed, or the
 * automatic one the frame was coloured with) through the current map, ticks from legend_ticks
 * in pixels, or in metres with a calibration that gives the focal length and baseline (the
 * depth readout's). */
static void draw_legend(display *d, app *a)
{
    if (!d->legend || !d->font || !a->shown || (d->view != VIEW_DISPARITY && d->view != VIEW_DEPTH))
        return;
    int iw, ih;
    SDL_Rect v = view_rect(d, a, &iw, &ih);
    const int pad = d->font_px / 2, lh = TTF_FontLineSkip(d->font), bh = d->font_px;
    int bw = v.w * 2 / 5;
    bw = bw > 520 ? 520 : bw;
    if (bw < 60)
        return;
    const colormap_range r = a->shown_color;
    const double fb = a->have_cam ? a->cam.focal_px * a->cam.baseline : 0;
    const int bx = v.x + v.w - bw - 3 * pad, by = v.y + v.h - bh - lh - 4 * pad;
    SDL_Rect box = {bx - 2 * pad, by - pad, bw + 4 * pad, bh + lh + 3 * pad};
    SDL_SetRenderDrawBlendMode(d->ren, SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(d->ren, 0, 0, 0, 190);
    SDL_RenderFillRect(d->ren, &box);
    uint8_t lut[256 * 3], c[3];
    colormap_lut(d->colormap, lut);
    for (int x = 0; x < bw; x++) { /* the image's own rule: the ends are entries 0 and 255 */
        int16_t val = (int16_t)(r.lo + (int)((int64_t)x * (r.hi - r.lo) / (bw - 1)));
        colormap_disparity_rows(&val, 1, r, lut, c, 3, 3, 0, 1);
        SDL_SetRenderDrawColor(d->ren, c[0], c[1], c[2], 255);
        SDL_RenderDrawLine(d->ren, bx + x, by, bx + x, by + bh - 1);
    }
    static const SDL_Color white = {235, 235, 235, 255};
    legend_tick t[LEGEND_MAX_TICKS];
    int n = legend_ticks(r, fb, 2 + bw / (4 * d->font_px), t);
    int left_free = box.x, last_x = box.x + box.w; /* labels drawn so far end / start there */
    /* the last label (with the unit) first, then left to right where they do not touch */
    for (int k = 0; k < n; k++) {
        int i = k == 0 ? n - 1 : k - 1;
        if (k > 0 && i == n - 1)
            continue;
        int tx = bx + (int)lround(t[i].pos * (bw - 1));
        SDL_SetRenderDrawColor(d->ren, 235, 235, 235, 255);
        SDL_RenderDrawLine(d->ren, tx, by + bh, tx, by + bh + pad / 2);
        char label[32];
        snprintf(label, sizeof label, "%s%s", t[i].label, i == n - 1 ? (fb > 0 ? " m" : " px") : "");
        int tw = text_width(d, label), lx = tx - tw / 2;
        lx = lx + tw > box.x + box.w ? box.x + box.w - tw : lx < box.x ? box.x : lx;
        if (k == 0)
            last_x = lx;
        else if (lx < left_free || lx + tw + pad > last_x)
            continue;
        draw_text(d, lx, by + bh + pad / 2, label, white);
        if (k > 0)
            left_free = lx + tw + pad;
    }
}

/* The automatic colour range follows the frames shown: each frame's 1st-99th percentile range
 * (colormap_auto_range) is the target, and each end moves an eighth of the way towards it per
 * frame shown (at least 1/16 px), but not while it is within half a pixel of it. So the colours
 * neither flicker with the percentiles' frame-to-frame noise nor lag far behind a change of
 * scene (most of the way in about 16 frames); the pipeline colours the next frames with it. */
static int smooth_end(int cur, int target)
{
    int diff = target - cur;
    if (diff > -8 && diff < 8)
        return cur;
    int step = diff / 8;
    return cur + (step ? step : diff > 0 ? 1 : -1);
}

static void update_auto_range(display *d, app *a)
{
    colormap_range t;
    const stereo_params *p = &a->params;
    if (colormap_auto_range(a->disparity, (size_t)p->width * p->height, p->min_disparity,
                            p->num_disparities, &t) != 0)
        return; /* nothing valid: keep the range */
    if (!d->have_range) {
        d->range = t;
        d->have_range = 1;
    } else {
        d->range.lo = smooth_end(d->range.lo, t.lo);
        d->range.hi = smooth_end(d->range.hi, t.hi);
        if (d->range.hi - d->range.lo < 16)
            d->range.hi = d->range.lo + 16;
    }
    live_pipeline_set_color_range(a->pipe, d->range.lo, d->range.hi);
}

static void render(display *d, app *a, const live_stats *s)
{
    SDL_SetRenderDrawColor(d->ren, 0, 0, 0, 255);
    SDL_RenderClear(d->ren);
    if (d->shown_any) {
        int iw, ih;
        SDL_Rect dst = view_rect(d, a, &iw, &ih);
        if (d->view == VIEW_DISPARITY || d->view == VIEW_DEPTH) {
            SDL_RenderCopy(d->ren, d->disp, NULL, &dst);
        } else {
            SDL_Rect src = {0, 0, iw, ih}; /* left: the pair texture's left half */
            SDL_RenderCopy(d->ren, d->pair, &src, &dst);
        }
        SDL_SetRenderDrawBlendMode(d->ren, SDL_BLENDMODE_BLEND);
        if (d->view == VIEW_PAIR) { /* rows are epipolar lines once rectified: check by eye */
            SDL_SetRenderDrawColor(d->ren, 0, 255, 0, 150);
            for (int i = 0; i < GRID_LINES; i++) {
                int y = dst.y + (int)((i + 0.5) * dst.h / GRID_LINES);
                SDL_RenderDrawLine(d->ren, dst.x, y, dst.x + dst.w - 1, y);
            }
            SDL_RenderDrawLine(d->ren, dst.x + dst.w / 2, dst.y, dst.x + dst.w / 2,
                               dst.y + dst.h - 1);
        }
        if (d->view == VIEW_DEPTH && d->mouse_in) {
            SDL_SetRenderDrawColor(d->ren, 255, 255, 255, 200);
            SDL_RenderDrawLine(d->ren, d->mouse_x - 12, d->mouse_y, d->mouse_x + 12, d->mouse_y);
            SDL_RenderDrawLine(d->ren, d->mouse_x, d->mouse_y - 12, d->mouse_x, d->mouse_y + 12);
        }
    }
    draw_legend(d, a);
    draw_overlay(d, a, s);
}

/* The rendered (not yet presented) window as a PNG. */
static int save_window(display *d, const char *path)
{
    int w, h;
    char err[512];
    SDL_GetRendererOutputSize(d->ren, &w, &h);
    image img;
    if (image_alloc(&img, w, h, 3, 8) != 0) {
        report("%s: out of memory", path);
        return -1;
    }
    int rc = -1;
    if (SDL_RenderReadPixels(d->ren, NULL, SDL_PIXELFORMAT_RGB24, img.data, w * 3) != 0)
        report("%s: cannot read the window: %s", path, SDL_GetError());
    else if (image_write(path, &img, err, sizeof err) != 0)
        report("%s", err);
    else
        rc = 0;
    image_free(&img);
    return rc;
}

/* Key p: the shown frame's point cloud and depth image in the current folder, named as the
 * screenshots are: stereo-live-YYYYmmdd-HHMMSS-N.ply and ...-N-depth.png (16-bit mm). The
 * colours are the rectified left view: the input's RGB rectified by the stage's rule, or the
 * grey the stage matched. What happened goes to the log and on screen (why nothing was saved
 * without a camera). */
static void save_depth(display *d, app *a)
{
    d->note_until_ns = monotonic_ns() + 4000000000LL;
    d->note_bad = 1;
    if (!a->have_cam) {
        snprintf(d->note, sizeof d->note, "p: nothing saved: depth needs the camera (a "
                 "calibration in [calibration] maps, or --focal and --baseline)");
        report("%s", d->note);
        return;
    }
    if (!a->shown) {
        snprintf(d->note, sizeof d->note, "p: nothing saved: no frame shown yet");
        report("%s", d->note);
        return;
    }
    int w = a->params.width, h = a->params.height;
    const uint8_t *color = a->shown_grey;
    int channels = 1;
    uint8_t *rgb = NULL;
    if (a->shown_is_rgb) {
        const uint8_t *src = a->shown_rgb;
        if (a->have_maps) { /* the stage's bilinear rule, per channel */
            if ((rgb = malloc((size_t)w * h * 3)) != NULL)
                rectify_rows_interleaved(&a->maps[0], src, (size_t)a->info.width * 3, 3, rgb, 0,
                                         h);
            src = rgb;
        }
        if (src) {
            color = src;
            channels = 3;
        }
    }
    char name[64], ply[96], png[96], err[512];
    time_t t = time(NULL);
    strftime(name, sizeof name, "stereo-live-%Y%m%d-%H%M%S", localtime(&t));
    d->depth_saves++;
    snprintf(ply, sizeof ply, "%s-%d.ply", name, d->depth_saves);
    snprintf(png, sizeof png, "%s-%d-depth.png", name, d->depth_saves);
    size_t points = 0;
    if (depth_write_ply(ply, a->disparity, w, h, &a->cam, color, channels, &points, err,
                        sizeof err) != 0 ||
        depth_write_image(png, a->disparity, w, h, &a->cam, err, sizeof err) != 0) {
        snprintf(d->note, sizeof d->note, "p: %s", err);
    } else {
        snprintf(d->note, sizeof d->note, "saved %s (%zu points) and %s (frame %llu)", ply,
                 points, png, (unsigned long long)a->shown);
        d->note_bad = 0;
    }
    report("%s", d->note);
    free(rgb);
}

static void handle_key(display *d, app *a, SDL_Keycode k, int *quit, int *want_shot)
{
    switch (k) {
    case SDLK_q:
    case SDLK_ESCAPE: *quit = 1; break;
    case SDLK_SPACE:
        d->paused = !d->paused;
        live_pipeline_set_paused(a->pipe, d->paused);
        break;
    case SDLK_v: d->view = (live_view)((d->view + 1) % (VIEW_DEPTH + 1)); break;
    case SDLK_c:
        d->colormap = (colormap_id)((d->colormap + 1) % COLORMAP_COUNT);
        live_pipeline_set_colormap(a->pipe, d->colormap);
        break;
    case SDLK_a:
        d->auto_range = !d->auto_range;
        d->have_range = 0; /* auto: start from the next frame's range as it is */
        if (!d->auto_range)
            live_pipeline_set_color_range(a->pipe, 0, 0);
        report("colour range %s", d->auto_range ? "auto (1st-99th percentile)" : "fixed");
        break;
    case SDLK_l: d->legend = !d->legend; break;
    case SDLK_s: *want_shot = 1; break;
    case SDLK_p: save_depth(d, a); break;
    case SDLK_f:
        d->fullscreen = !d->fullscreen;
        SDL_SetWindowFullscreen(d->win, d->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        break;
    case SDLK_PLUS:
    case SDLK_EQUALS:
    case SDLK_KP_PLUS:
    case SDLK_MINUS:
    case SDLK_KP_MINUS: {
        int up = k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS;
        int p2 = live_pipeline_change_p2(a->pipe, up ? P2_STEP : -P2_STEP);
        report("P2 %d (the stage is recreated with it)", p2);
        break;
    }
    case SDLK_m: {
        stereo_method m = live_pipeline_toggle_method(a->pipe);
        report("method %s (the stage is recreated with it)", stereo_method_to_str(m));
        break;
    }
    case SDLK_k:
    case SDLK_i:
    case SDLK_t: {
        live_post which = k == SDLK_k ? LIVE_POST_SPECKLE : k == SDLK_i ? LIVE_POST_FILL
                                                                      : LIVE_POST_TEMPORAL;
        stereo_postfilter f = live_pipeline_toggle_post(a->pipe, which);
        a->params.post = f; /* for the overlay */
        if (which == LIVE_POST_SPECKLE && f.speckle_size)
            report("speckle removal on (regions under %d px, steps up to %d/16 px)",
                   f.speckle_size, f.speckle_diff);
        else if (which == LIVE_POST_SPECKLE)
            report("speckle removal off");
        else if (which == LIVE_POST_FILL)
            report("hole filling %s", f.fill ? "on" : "off");
        else
            report("temporal filter %s", f.temporal ? "on (starts afresh)" : "off");
        break;
    }
    case SDLK_h: d->help = !d->help; break;
    default: break;
    }
}

static void run_display(display *d, app *a)
{
    int quit = 0, want_shot = 0;
    /* tests (tests/test_live.sh): STEREO_LIVE_KEYS="vp" presses those keys (letters as typed),
     * one per new frame once one is shown, through SDL's event queue as the keyboard does */
    const char *script = getenv("STEREO_LIVE_KEYS");
    int64_t next_stats = monotonic_ns() + 1000000000LL;
    live_stats s;
    live_pipeline_stats(a->pipe, &s);
    while (!quit && !got_signal) {
        int dirty = 0;
        SDL_Event e;
        if (SDL_WaitEventTimeout(&e, 50)) {
            do {
                dirty = 1;
                if (e.type == SDL_QUIT)
                    quit = 1;
                else if (e.type == SDL_KEYDOWN)
                    handle_key(d, a, e.key.keysym.sym, &quit, &want_shot);
                else if (e.type == SDL_MOUSEMOTION) {
                    d->mouse_x = e.motion.x;
                    d->mouse_y = e.motion.y;
                    d->mouse_in = 1;
                } else if (e.type == SDL_WINDOWEVENT) {
                    if (e.window.event == SDL_WINDOWEVENT_LEAVE)
                        d->mouse_in = 0;
                    if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
                        open_font(d, &a->cfg);
                }
            } while (SDL_PollEvent(&e));
        }
        live_frame f;
        int fresh = live_pipeline_acquire(a->pipe, &f);
        if (fresh) {
            upload(d, &f);
            take_frame(a, &f, 1);
            if (d->auto_range)
                update_auto_range(d, a);
            live_pipeline_release(a->pipe);
            d->shown_any = dirty = 1;
            if (script && *script) {
                SDL_Event key;
                memset(&key, 0, sizeof key);
                key.type = SDL_KEYDOWN;
                key.key.keysym.sym = (SDL_Keycode)(unsigned char)*script++;
                SDL_PushEvent(&key);
            }
        }
        int64_t now = monotonic_ns();
        if (now >= next_stats) {
            live_pipeline_stats(a->pipe, &s);
            rates_update(&a->rt, &s, now);
            keep_up_check(a);
            next_stats = now + 1000000000LL;
            dirty = 1;
        }
        if (dirty) {
            render(d, a, &s);
            if (want_shot) {
                char name[64];
                time_t t = time(NULL);
                strftime(name, sizeof name, "stereo-live-%Y%m%d-%H%M%S", localtime(&t));
                char path[96];
                snprintf(path, sizeof path, "%s-%d.png", name, ++d->screenshots);
                if (save_window(d, path) == 0)
                    report("screenshot %s", path);
                want_shot = 0;
            }
            SDL_RenderPresent(d->ren);
            if (fresh)
                rates_latency(&a->rt, f.capture_ns, monotonic_ns());
        }
        if (live_pipeline_finished(a->pipe))
            break;
    }
    if (a->cfg.screenshot[0] && d->shown_any) { /* the window after the last frame */
        live_pipeline_stats(a->pipe, &s);
        render(d, a, &s);
        if (save_window(d, a->cfg.screenshot) == 0)
            log_screenshot(a);
        SDL_RenderPresent(d->ren);
    }
}
#endif /* !LIVE_LIBC_ONLY */

/* ---- the summary at the end ------------------------------------------------------------------ */

typedef struct {
    live_stats s;
    live_histogram stage;
    double wall_s;      /* pipeline start -> the display loop ended */
    double fps;         /* results per second, from the first result to the last */
} summary;

static void summary_get(app *a, int64_t t_start, int64_t t_end, summary *m)
{
    live_pipeline_stats(a->pipe, &m->s);
    live_pipeline_stage_times(a->pipe, &m->stage);
    m->wall_s = (double)(t_end - t_start) * 1e-9;
    const live_stats *s = &m->s;
    if (s->processed >= 2 && s->last_done_ns > s->first_done_ns)
        m->fps = (double)(s->processed - 1) / ((double)(s->last_done_ns - s->first_done_ns) * 1e-9);
    else
        m->fps = m->wall_s > 0 ? (double)s->processed / m->wall_s : 0;
}

#if !LIVE_LIBC_ONLY
/* An output that failed every frame it was given did nothing the run was asked for: the run
 * failed (exit 1), though the output was only reported once while it ran. One that sent some
 * frames (a disk filled up, then freed) kept the run going, as designed. */
static int output_failed(const live_output_stats *o) { return o->sent == 0 && o->failures > 0; }

/* One line for each output that failed every frame; the count of them. */
static int report_failed_outputs(const app *a)
{
    int failed = 0;
    for (int i = 0; i < live_outputs_count(a->outputs); i++) {
        live_output_stats o;
        live_outputs_stats(a->outputs, i, &o);
        if (output_failed(&o)) {
            report("output %s: sent no frame: all %llu writes failed (the first: %s)", o.uri,
                   (unsigned long long)o.failures, o.error);
            failed++;
        }
    }
    return failed;
}
#endif

static void summary_print(const app *a, const summary *m)
{
    const live_histogram *st = &m->stage, *lat = &a->rt.latency;
    char rec[96];
    record_counts(&m->s, rec, sizeof rec);
    printf("stereo-live: %.1f fps (%llu frames, %.3f s wall), stage ms median %.3f p95 %.3f, "
           "latency ms median %.3f p95 %.3f max %.3f (%llu shown), %llu dropped%s\n",
           m->fps, (unsigned long long)m->s.processed, m->wall_s,
           live_histogram_quantile(st, 0.5), live_histogram_quantile(st, 0.95),
           live_histogram_quantile(lat, 0.5), live_histogram_quantile(lat, 0.95), lat->max,
           (unsigned long long)a->rt.shown, (unsigned long long)m->s.dropped, rec);
    const live_stats *s = &m->s;
#if !LIVE_LIBC_ONLY
    for (int i = 0; i < live_outputs_count(a->outputs); i++) {
        live_output_stats o;
        live_outputs_stats(a->outputs, i, &o);
        printf("stereo-live: output %s: %llu sent, %llu drops (%llu failed)%s%s\n", o.uri,
               (unsigned long long)o.sent, (unsigned long long)o.drops,
               (unsigned long long)o.failures, o.extra,
               output_failed(&o) ? "; FAILED: no frame sent, every write failed (exit 1)" : "");
    }
#endif
    if (a->params.views > 2) { /* more views: how many frames each stage matched, per camera */
        char name[96];
        printf("stereo-live: %s: %llu frames from every view, %llu from the reference and view 1 "
               "(a view lost), %llu waited (the reference or view 1 lost); drops",
               views_name(a, name, sizeof name),
               (unsigned long long)(s->processed - s->pair_frames),
               (unsigned long long)s->pair_frames, (unsigned long long)s->view_waits);
        for (int i = 1; i < a->params.views; i++)
            printf("%s v%d %llu", i > 1 ? "," : "", i, (unsigned long long)a->view_drops[i]);
        printf(", skew ms");
        for (int i = 1; i < a->params.views; i++)
            printf("%s v%d %+.1f", i > 1 ? "," : "", i, (double)a->view_skew_ns[i] * 1e-6);
        printf(" (the last frame shown)\n");
    }
    if (s->mi) /* the two MI paths' costs (stereo.h: mi_warm, mi_restart) */
        printf("stereo-live: mi: %llu restarts (hierarchy) at %.1f ms mean, of which the "
               "hierarchy %.1f ms; %llu warm frames at %.1f ms mean\n",
               (unsigned long long)s->mi_restarts,
               s->mi_restarts ? s->mi_restart_ms_total / s->mi_restarts : 0.0,
               s->mi_restarts ? s->mi_hierarchy_ms_total / s->mi_restarts : 0.0,
               (unsigned long long)s->mi_warm_frames,
               s->mi_warm_frames ? s->mi_warm_ms_total / s->mi_warm_frames : 0.0);
}

/* A JSON string (quotes, backslashes and control characters escaped). */
static void json_string(FILE *f, const char *v)
{
    fputc('"', f);
    for (; *v; v++) {
        unsigned char c = (unsigned char)*v;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

typedef struct {
    const app *a;
    const summary *m;
} summary_json;

/* The --stats-json text (a file_writer for atomic_write_file). */
static int write_summary_json(FILE *f, const char *path, const void *ctx, char *err,
                              size_t errlen)
{
    const app *a = ((const summary_json *)ctx)->a;
    const summary *m = ((const summary_json *)ctx)->m;
    const live_histogram *st = &m->stage, *lat = &a->rt.latency;
    const stereo_params *p = &a->params;
    fprintf(f, "{\n  \"program\": \"%s\",\n  \"version\": ", PROGRAM);
    json_string(f, version_number());
    fprintf(f, ",\n  \"commit\": ");
    json_string(f, version_commit());
    fprintf(f, ",\n  \"backends\": ");
    json_string(f, version_backends());
    fprintf(f, ",\n  \"source\": \"%s\",\n  \"backend\": \"%s\",\n  \"sms\": %d,\n",
            frame_source_kind(a->src), live_pipeline_backend(a->pipe),
            live_pipeline_sms(a->pipe));
    fprintf(f, "  \"width\": %d,\n  \"height\": %d,\n  \"disparities\": %d,\n  \"paths\": %d,\n"
               "  \"cost\": \"%s\",\n  \"synth_prerender\": %d,\n",
            p->width, p->height, p->num_disparities, p->paths, stereo_cost_to_str(p->cost),
            a->opt.prerender);
    fprintf(f, "  \"frames\": %llu,\n  \"captured\": %llu,\n  \"dropped\": %llu,\n"
               "  \"shown\": %llu,\n  \"wall_s\": %.6f,\n  \"fps\": %.3f,\n",
            (unsigned long long)m->s.processed, (unsigned long long)m->s.captured,
            (unsigned long long)m->s.dropped, (unsigned long long)a->rt.shown, m->wall_s, m->fps);
    fprintf(f, "  \"stage_ms\": {\"mean\": %.4f, \"median\": %.4f, \"p95\": %.4f, \"max\": %.4f},\n",
            live_histogram_mean(st), live_histogram_quantile(st, 0.5),
            live_histogram_quantile(st, 0.95), st->max);
    fprintf(f, "  \"latency_ms\": {\"mean\": %.4f, \"median\": %.4f, \"p95\": %.4f, "
               "\"max\": %.4f},\n",
            live_histogram_mean(lat), live_histogram_quantile(lat, 0.5),
            live_histogram_quantile(lat, 0.95), lat->max);
    if (m->s.mi) {
        const live_stats *s = &m->s;
        fprintf(f, "  \"mi\": {\"warm\": %d, \"restart_threshold_percent\": %d, "
                   "\"restarts\": %llu, \"restart_ms_mean\": %.4f, "
                   "\"hierarchy_ms_mean\": %.4f, \"warm_frames\": %llu, "
                   "\"warm_ms_mean\": %.4f},\n",
                p->mi_warm, p->mi_restart, (unsigned long long)s->mi_restarts,
                s->mi_restarts ? s->mi_restart_ms_total / s->mi_restarts : 0.0,
                s->mi_restarts ? s->mi_hierarchy_ms_total / s->mi_restarts : 0.0,
                (unsigned long long)s->mi_warm_frames,
                s->mi_warm_frames ? s->mi_warm_ms_total / s->mi_warm_frames : 0.0);
    }
    {
        const live_stats *s = &m->s;
        int n = p->views > 2 ? p->views : 2;
        fprintf(f, "  \"views\": %d,\n  \"baselines\": [1", n);
        for (int i = 2; i < n; i++)
            fprintf(f, ", %.6g", p->baseline[i] / (double)STEREO_BASELINE_SCALE);
        fprintf(f, "],\n  \"combine\": \"%s\",\n  \"view_frames_all\": %llu,\n"
                   "  \"view_frames_pair\": %llu,\n  \"view_waits\": %llu,\n  \"view_drops\": [",
                stereo_combine_to_str(p->combine),
                (unsigned long long)(s->processed - s->pair_frames),
                (unsigned long long)s->pair_frames, (unsigned long long)s->view_waits);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)a->view_drops[i]);
        fprintf(f, "],\n  \"view_skew_ms\": [");
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.3f", i ? ", " : "", (double)a->view_skew_ns[i] * 1e-6);
        fprintf(f, "],\n");
    }
#if !LIVE_LIBC_ONLY
    fprintf(f, "  \"outputs\": [");
    for (int i = 0; i < live_outputs_count(a->outputs); i++) {
        live_output_stats o;
        live_outputs_stats(a->outputs, i, &o);
        fprintf(f, "%s\n    {\"uri\": ", i ? "," : "");
        json_string(f, o.uri);
        fprintf(f, ", \"sent\": %llu, \"drops\": %llu, \"failures\": %llu, \"restarts\": %llu, "
                "\"error\": ", (unsigned long long)o.sent, (unsigned long long)o.drops,
                (unsigned long long)o.failures, (unsigned long long)o.restarts);
        json_string(f, o.error);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n", live_outputs_count(a->outputs) ? "\n  " : "");
#endif
    fprintf(f, "  \"recorded\": %llu,\n  \"record_drops\": %llu,\n  \"error\": ",
            (unsigned long long)m->s.recorded, (unsigned long long)m->s.record_drops);
    json_string(f, m->s.error);
    fprintf(f, "\n}\n");
    return 0;
}

/* --stats-json, written beside and renamed into place: 0, or -1 after printing the reason. */
static int summary_write_json(const app *a, const summary *m, const char *path)
{
    char err[CONFIG_PATH_MAX + 256];
    summary_json ctx = {a, m};
    if (atomic_write_file(path, write_summary_json, &ctx, err, sizeof err) != 0) {
        report("--stats-json %s", err);
        return -1;
    }
    return 0;
}

/* ---- main ---------------------------------------------------------------------------------- */

#if !LIVE_LIBC_ONLY
/* --record-depth: pair number index's depth beside it, DIR/depth_NNNNNN.png (the writer thread;
 * a->cam and the size are fixed while the pipeline runs). */
static int write_record_depth(void *user, long index, const int16_t *disparity, char *err,
                              size_t errlen)
{
    const app *a = user;
    char path[CONFIG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/depth_%06ld.png", a->cfg.record_dir, index);
    return depth_write_image(path, disparity, a->params.width, a->params.height, &a->cam, err,
                             errlen);
}

/* The camera for depth: the calibration's (open_inputs read it with the maps), or [calibration]
 * focal / baseline / center when it gives none; both is refused (which one would be meant?).
 * 0, or -1 after one line. */
static int choose_camera(app *a)
{
    const live_config *c = &a->cfg;
    char err[256];
    if (a->have_cam) {
        a->cam_from = c->maps;
        if (c->focal_px > 0) {
            report("calibration.focal / baseline: [calibration] maps %s gives the camera "
                   "already (f %.6g px, baseline %.6g); give one of them", c->maps,
                   a->cam.focal_px, a->cam.baseline);
            return -1;
        }
    } else if (c->focal_px > 0) {
        double cxy[2] = {(a->params.width - 1) / 2.0, (a->params.height - 1) / 2.0};
        live_config_center(c, cxy);
        a->cam = (depth_camera){c->focal_px, cxy[0], cxy[1], c->baseline, 0};
        if (depth_camera_check(&a->cam, "calibration.focal / baseline", err, sizeof err)) {
            report("%s", err);
            return -1;
        }
        a->have_cam = 1;
        a->cam_from = "calibration.focal / baseline / center";
    }
    if (c->record_depth && !a->have_cam) {
        report("--record-depth / record.depth: depth needs the camera: [calibration] maps with a "
               "calibration (YAML, camera_info pair, or a version 2 map file), or --focal PX "
               "--baseline M");
        return -1;
    }
    if (a->have_cam)
        report("depth camera (%s): f %.6g px, centre %.6g,%.6g px, baseline %.6g, doffs %.6g px",
               a->cam_from, a->cam.focal_px, a->cam.cx, a->cam.cy, a->cam.baseline,
               a->cam.doffs_px);
    return 0;
}
#endif

#if !LIVE_LIBC_ONLY
/* More than two views: [calibration] maps is a rig file (stereo-calibrate --view); each view
 * takes the rig camera at its baseline ratio (the reference and the first other camera for
 * views 0 and 1, then the camera whose ratio rounds to b_i in 16ths, as the stage holds it).
 * 0, or -1 with err. */
static int load_view_maps(app *a, char *err, size_t errlen)
{
    const char *path = a->cfg.maps;
    int rig = calib_is_rig(path, err, errlen);
    if (rig < 0)
        return -1;
    if (!rig) {
        snprintf(err, errlen, "calibration.maps: %s is no rig file (no rig_cameras key): %d views "
                 "need one map per camera, a rig from stereo-calibrate --view (docs/"
                 "calibration.md)", path, a->params.views);
        return -1;
    }
    calib_rig g;
    if (calib_rig_load(path, a->info.width, a->info.height, &g, a->rig_maps, err, errlen) != 0)
        return -1;
    a->maps_rig = 1; /* freed at the end from here on */
    int used[CALIB_RIG_MAX] = {0};
    for (int i = 0; i < a->params.views; i++) {
        int k = i == 0 ? g.reference : i == 1 ? g.first : -1;
        for (int c = 0; k < 0 && c < g.ncams; c++)
            if (!used[c] && c != g.reference &&
                fabs(g.ratio[c] * STEREO_BASELINE_SCALE - a->params.baseline[i]) < 0.5)
                k = c;
        if (k < 0) {
            char b[16], list[160] = "";
            size_t n = 0;
            for (int c = 0; c < g.ncams && n < sizeof list; c++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%.3g", c ? ", " : "",
                                      g.ratio[c]);
            snprintf(err, errlen, "calibration.maps: %s: no camera at view %d's baseline ratio %s "
                     "([stereo] baselines); the rig's cameras are at %s", path, i,
                     stereo_baseline_str(a->params.baseline[i], b, sizeof b), list);
            return -1;
        }
        used[k] = 1;
        a->maps[i] = a->rig_maps[k];
    }
    return 0;
}
#endif

#if !LIVE_LIBC_ONLY
/* The window is an output too (display://): shown when no output is named, or when display://
 * is among them. */
static int wants_window(const live_config *c)
{
    int named = 0;
    for (int i = 0; i < OUTPUT_MAX; i++) {
        named |= c->output[i][0] != 0;
        if (!strncasecmp(c->output[i], "display://", 10))
            return 1;
    }
    return !named;
}

static void report_line(const char *line) { report("%s", line); }

static void push_result(void *user, const stereo_result *r, int64_t capture_ns, uint64_t number,
                        double stage_ms)
{
    live_outputs_push(user, r, capture_ns, number, stage_ms);
}

/* The outputs other than the window, fed by the stage thread (live_outputs.c). 0, or -1 after
 * one line. */
static int open_outputs(app *a)
{
    const char *uris[OUTPUT_MAX];
    for (int i = 0; i < OUTPUT_MAX; i++)
        uris[i] = a->cfg.output[i];
    output_setup setup = {a->params.width, a->params.height, a->params.min_disparity,
                          a->params.num_disparities, a->have_cam, a->cam, "", NULL, "", ""};
    snprintf(setup.backend, sizeof setup.backend, "%s", live_pipeline_backend(a->pipe));
    snprintf(setup.cost, sizeof setup.cost, "%s", stereo_cost_to_str(a->params.cost));
    ssize_t n = readlink("/proc/self/exe", setup.program_dir, sizeof setup.program_dir - 1);
    if (n > 0) {
        setup.program_dir[n] = '\0';
        char *slash = strrchr(setup.program_dir, '/');
        if (slash)
            *slash = '\0';
    }
    char err[1024];
    if (live_outputs_create(uris, OUTPUT_MAX, &setup, report_line, &a->outputs, err,
                            sizeof err) != 0) {
        report("%s", err);
        return -1;
    }
    if (live_outputs_count(a->outputs))
        live_pipeline_on_result(a->pipe, push_result, a->outputs);
    return 0;
}
#endif

/* Opens the source and the maps and sets the stage's parameters: 0, else the exit status after
 * one line (1: an input fails; EXIT_USAGE: the settings do not fit the images). */
/* [stereo] disparities = auto: the range the first set of views needs
 * (stereo_auto_disparities), measured before the pipeline starts; that pair is not shown.
 * 0, or as open_inputs. */
static int auto_disparities(app *a)
{
    char err[512];
    if (a->params.views > 2) {
        report("disparities auto: measures a pair; with more views give the number of "
               "disparities");
        return EXIT_USAGE;
    }
    const int nv = a->info.views > 2 ? a->info.views : 2;
    uint8_t *buf[FRAME_MAX_VIEWS] = {NULL};
    int rc = -1;
    for (int i = 0; i < nv; i++)
        if (!(buf[i] = malloc(a->info.frame_bytes))) {
            report("out of memory");
            goto out;
        }
    frame_pair f;
    frame_status st = frame_source_read(a->src, buf, &f, 10000);
    if (st != FRAME_OK || (f.lost & 3u)) {
        report("disparities auto: no first pair to measure (%s)",
               st == FRAME_OK ? "a view was lost" : frame_source_message(a->src));
        goto out;
    }
    stereo_auto_range r;
    stereo_status ss = stereo_auto_disparities(&a->params, a->have_maps ? a->maps : NULL,
                                               &f.left, &f.right, &r, err, sizeof err);
    frame_source_release(a->src, &f);
    if (ss != STEREO_OK) {
        report("disparities auto: %s", err);
        rc = ss == STEREO_ERR_PARAM ? EXIT_USAGE : -1;
        goto out;
    }
    a->params.num_disparities = r.disparities;
    char band[48] = "";
    if (r.for_band)
        snprintf(band, sizeof band, ", raised above band %d", a->params.band);
    report("disparities auto: %d (the first pair reaches %d px%s)%s%s", r.disparities, r.top,
           r.beyond ? " or more: the end of the range measured" : "",
           r.clamped ? ", the most this width and min_disparity allow" : "", band);
    rc = 0;
out:
    for (int i = 0; i < nv; i++)
        free(buf[i]);
    return rc;
}

static int open_inputs(app *a)
{
    char err[1024];
    /* a GStreamer element can block in its start (a filesrc on a FIFO named in a gst://
     * description), before the source's own first-frame limit applies: a deadline ends it */
    source_plan plan;
    int gst = live_config_plan(&a->cfg, &plan, err, sizeof err) == 0 &&
              (plan.kind == PLAN_GST_ONE || plan.kind == PLAN_GST_PAIR);
    if (gst) {
        signal(SIGALRM, on_start_deadline);
        alarm(START_DEADLINE_S);
        start_blocking = 1;
    }
    frame_status st = frame_source_open(&a->cfg, &a->src, err, sizeof err);
    if (gst) {
        start_blocking = 0;
        alarm(0);
    }
    if (st != FRAME_OK) {
        report("%s", err);
        return -1;
    }
    frame_source_info_get(a->src, &a->info);
    if (a->opt.prerender) {
        if (frame_source_prerender(a->src, a->opt.prerender, err, sizeof err) != 0) {
            report("%s", err);
            return -1;
        }
        report("generated scene: %d frames pre-rendered (%.0f MB), replayed in a loop",
               a->opt.prerender,
               (double)a->info.views * a->info.width * a->info.height * a->opt.prerender / 1e6);
    }
    a->params = a->cfg.stereo;
    a->params.width = a->info.width;
    a->params.height = a->info.height;
    for (int i = 0; i < OUTPUT_MAX; i++) { /* an output masks by confidence: the stage makes it */
        output_uri u;
        if (a->cfg.output[i][0] && output_uri_parse(a->cfg.output[i], &u, err, sizeof err) == 0 &&
            output_uri_needs_confidence(&u))
            a->params.confidence = 1;
    }
#if !LIVE_LIBC_ONLY /* check_built_in refused maps */
    if (a->cfg.maps[0] && a->params.views > 2) {
        if (load_view_maps(a, err, sizeof err) != 0) {
            report("%s", err);
            return -1;
        }
        a->have_maps = 1;
        a->params.width = a->maps[0].width;
        a->params.height = a->maps[0].height;
    } else if (a->cfg.maps[0]) {
        if (calib_load_maps_camera(a->cfg.maps, a->info.width, a->info.height, a->maps,
                                   &a->cam, &a->have_cam, err, sizeof err) != 0) {
            report("%s", err);
            return -1;
        }
        a->have_maps = 1;
        a->params.width = a->maps[0].width;
        a->params.height = a->maps[0].height;
    }
    if (choose_camera(a) != 0) /* check_built_in refused focal / baseline */
        return -1;
#endif
    if (a->cfg.stage.auto_disparities) {
        int rc = auto_disparities(a);
        if (rc != 0)
            return rc;
    }
    /* the settings against the images' size (a rig rectifying to 1x1, D >= the width): a bad
     * setting, as live_config_check's, not a failure of the run */
    if (stereo_params_check(&a->params, err, sizeof err) != STEREO_OK) {
        report("stereo: %s", err);
        return EXIT_USAGE;
    }
    size_t n = (size_t)a->params.width * a->params.height;
    if (!(a->disparity = calloc(n, sizeof *a->disparity))) {
        report("out of memory");
        return -1;
    }
#if !LIVE_LIBC_ONLY
    if (!a->cfg.headless && /* key p: the shown frame's colours */
        (!(a->shown_grey = malloc(n)) ||
         !(a->shown_rgb = malloc((size_t)a->info.width * a->info.height * 3)))) {
        report("out of memory");
        return -1;
    }
#endif
    return 0;
}

/* " on 16 SMs (green context)" after the backend's name when [stereo] sms put the CUDA stage on
 * part of the GPU (the count it really got), else "". */
static const char *green_note(const app *a, char *buf, size_t len)
{
    int sms = live_pipeline_sms(a->pipe);
    if (a->params.sms > 0 && sms > 0)
        snprintf(buf, len, " on %d SMs (green context)", sms);
    else if (len)
        buf[0] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    /* first, so that a signal in the start stops the app in order too (on_signal) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    app a;
    memset(&a, 0, sizeof a);
    if (load_config(argc, argv, &a.cfg, &a.opt) != 0)
        return EXIT_USAGE;
    if (a.opt.help) {
        print_usage();
        return 0;
    }
    if (a.opt.version) {
        version_print(PROGRAM);
        return 0;
    }
#if !LIVE_LIBC_ONLY
    if (a.opt.list_cameras)
        return list_cameras();
#endif

    int rc = 1;
    char err[1024], green[64] = "", version[256];
#if !LIVE_LIBC_ONLY
    int windowed = 0;
    display d;
#endif
    if ((rc = open_inputs(&a)) != 0) {
        rc = rc < 0 ? 1 : rc;
        goto out;
    }
    rc = 1;
    if (live_pipeline_create(&a.cfg, &a.params, a.have_maps ? a.maps : NULL, a.src, &a.pipe, err,
                             sizeof err) != 0) {
        report("%s", err);
        goto out;
    }
    if (live_pipeline_backend_note(a.pipe)[0])
        report("%s", live_pipeline_backend_note(a.pipe));
#if !LIVE_LIBC_ONLY
    if (a.cfg.record_depth && live_pipeline_record_disparity(a.pipe, write_record_depth, &a, err,
                                                             sizeof err) != 0) {
        report("%s", err);
        goto out;
    }
#endif
#if !LIVE_LIBC_ONLY
    if (open_outputs(&a) != 0) {
        rc = EXIT_USAGE;
        goto out;
    }
    if (!a.cfg.headless && wants_window(&a.cfg)) {
        if (display_open(&d, &a, err, sizeof err) == 0)
            windowed = 1;
        else
            report("no display (%s): running headless", err);
    }
    /* whatever made the run headless (--headless, no display, outputs without display://),
     * --screenshot is then the colour disparity of the last frame, kept as it comes */
    if (!windowed && a.cfg.screenshot[0] &&
        !(a.last_rgb = calloc((size_t)a.params.width * a.params.height, 3))) {
        report("out of memory");
        goto out;
    }
    report("%s source, %dx%d, D %d, %s backend%s, %s%s; %s", frame_source_kind(a.src),
          a.params.width, a.params.height, a.params.num_disparities,
          live_pipeline_backend(a.pipe), green_note(&a, green, sizeof green),
          windowed ? "window: " : "headless", windowed ? d.renderer : "",
          version_line(PROGRAM, version, sizeof version));
#else
    report("%s source, %dx%d, D %d, %s backend%s, headless (CUDA and libc only build); %s",
           frame_source_kind(a.src), a.params.width, a.params.height,
           a.params.num_disparities, live_pipeline_backend(a.pipe),
           green_note(&a, green, sizeof green), version_line(PROGRAM, version, sizeof version));
#endif
    int64_t t_start = monotonic_ns();
    a.rt.t_ns = t_start;
#if !LIVE_LIBC_ONLY
    if (live_pipeline_start(a.pipe, windowed ? wake_display : NULL, &d, err, sizeof err) != 0) {
#else
    if (live_pipeline_start(a.pipe, NULL, NULL, err, sizeof err) != 0) {
#endif
        report("%s", err);
        goto out;
    }
#if !LIVE_LIBC_ONLY
    if (windowed)
        run_display(&d, &a);
    else
#endif
        run_headless(&a);
    int64_t t_end = monotonic_ns();
    if (got_signal)
        report("%s: stopping", got_signal == SIGINT ? "SIGINT" : "SIGTERM");
    live_pipeline_stop(a.pipe); /* the writer has written every pair queued when it returns */
#if !LIVE_LIBC_ONLY
    live_outputs_stop(a.outputs); /* each output sends the frame it holds */
#endif

    summary m;
    summary_get(&a, t_start, t_end, &m);
    const live_stats *s = &m.s;
    rc = 0;
    if (s->error[0]) {
        report("stopped: %s", s->error);
        rc = 1;
    }
#if !LIVE_LIBC_ONLY
    if (!windowed && a.cfg.screenshot[0] && a.shown) {
        image img = {a.params.width, a.params.height, 3, 8, a.last_rgb};
        if (image_write(a.cfg.screenshot, &img, err, sizeof err) != 0) {
            report("%s", err);
            rc = 1;
        } else
            log_screenshot(&a);
    }
#endif
#if !LIVE_LIBC_ONLY
    if (report_failed_outputs(&a))
        rc = 1;
#endif
    printf("stereo-live: %llu frames, %llu captured, %llu dropped, stage %.1f ms mean, "
           "%s backend%s\n",
           (unsigned long long)s->processed, (unsigned long long)s->captured,
           (unsigned long long)s->dropped, s->processed ? s->stage_ms_total / s->processed : 0.0,
           live_pipeline_backend(a.pipe), green);
    summary_print(&a, &m);
    if (a.cfg.record_dir[0]) {
        int n = (int)strlen(a.cfg.record_dir); /* the folder without its trailing '/'s */
        while (n > 1 && a.cfg.record_dir[n - 1] == '/')
            n--;
        printf("stereo-live: recorded %llu pairs to %s (%llu record drops%s%.*s%s)\n",
               (unsigned long long)s->recorded, a.cfg.record_dir,
               (unsigned long long)s->record_drops,
               s->error[0] ? "" : "; replay: stereo-live --config ", s->error[0] ? 0 : n,
               a.cfg.record_dir,
               s->error[0] ? "" : strcmp(a.cfg.record_dir, "/") ? "/replay.ini" : "replay.ini");
    }
    fflush(stdout);
    {
        char line[256];
        frame_source_stats_line(a.src, line, sizeof line);
        if (line[0])
            report("%s", line);
    }
    if (a.opt.stats_json && summary_write_json(&a, &m, a.opt.stats_json) != 0)
        rc = 1;
out:
    if (live_pipeline_destroy(a.pipe, err, sizeof err) != 0) {
        report("%s", err);
        rc = 1;
    }
#if !LIVE_LIBC_ONLY
    live_outputs_destroy(a.outputs);
    if (windowed)
        display_close(&d);
    if (a.maps_rig)
        calib_rig_free_maps(a.rig_maps);
    else if (a.have_maps)
        mapfile_free(a.maps);
#endif
    frame_source_close(a.src);
    free(a.disparity);
    free(a.last_rgb);
    free(a.shown_grey);
    free(a.shown_rgb);
    return rc;
}
