/* SPDX-License-Identifier: Apache-2.0 */
/* live_options.c — stereo-live's command line (live_options.h): the --help text, the options
 * collected and applied over the defaults and the --config file as configuration keys, the
 * cross-checks, and every file the session reads and writes checked before anything opens.
 * Built with LIVE_LIBC_ONLY=1 (build/gpu/stereo-live-headless) it refuses what that binary
 * leaves out with "not built in this binary: ...".
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "live_app.h"
#include "live_options.h"
#include "sources/live_sources.h"
#include "outpath.h"
#include "output_uri.h"
#include "parse_num.h"
#include "sequence.h"
#include "source_uri.h"
#include "stereo.h"
#include "stereo_options.h"

#define MAX_OVERRIDES 64
#define MAX_PRERENDER 10000

/* ---- --help -------------------------------------------------------------------------------- */

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
    "  --colormap NAME        turbo (default), jet, grey ([display] colormap; key c)\n"
    "  --color-range R        fixed | auto: the disparities the colour map spans ([display]\n"
    "                         color_range; key a toggles)\n"
    "  --legend               the colour bar in the overlay ([display] legend, on by default;\n"
    "                         key l)\n"
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
    "stereo-match's -q, --color, --confidence, --depth and --ply and Python's min_confidence\n"
    "are not options here: each is answered with where its output is in this program.\n"
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
void print_usage(void)
{
    fputs(usage_text, stdout);
    fputs("Matching:\n", stdout);
    stereo_options_print_help(stdout, STEREO_OPT_MATCHING);
    fputs("Backend:\n", stdout);
    stereo_options_print_help(stdout, STEREO_OPT_BACKEND);
    fputs(usage_keys, stdout);
}

/* ---- options ------------------------------------------------------------------------------- */

typedef struct {
    char option[96];    /* "--frames", "--set" (for messages) */
    char section[32], key[64];
    const char *value;
} override;

/* The options of stereo-match and the Python module that stereo-live has not: each is answered
 * with where its output is here (exit status 2); tests/test_options.py holds the list */
static const struct {
    const char *name, *what, *here;
} elsewhere[] = {
    {"quiet", "stereo-match's", "stereo-live writes its stats lines and summary to stdout and "
     "only errors and notes to stderr: redirect stdout to quieten it (>/dev/null), "
     "--stats-json keeps the summary"},
    {"color", "stereo-match's (the colour image of a pair)", "stereo-live shows the colour map "
     "in its window: --screenshot FILE.png saves it, --colormap and --color-range set it"},
    {"confidence", "stereo-match's (the confidence map of a pair)", "stereo-live masks by it "
     "in --output ros2://NAMESPACE?min_confidence=N"},
    {"min-confidence", "Python's (min_confidence=N)", "stereo-live masks by the confidence in "
     "--output ros2://NAMESPACE?min_confidence=N"},
    {"depth", "stereo-match's (the depth of a pair)", "stereo-live writes depth with "
     "--record-depth or --output file://DIR/%06d.png?depth=1, and shows it (view depth, key v)"},
    {"ply", "stereo-match's (the point cloud of a pair)", "stereo-live writes point clouds "
     "with --output file://DIR/%06d.ply, or of the frame shown with key p"},
};

/* Collects the options (applied after the file, whatever their order). 0, or -1 after printing
 * the reason; o->help set for --help, o->version for --version. */
static int parse_options(int argc, char **argv, app_options *o_app, override *ov, int *nov)
{
    enum { O_CONFIG = 256, O_SOURCE, O_FRAMES, O_HEADLESS, O_FULLSCREEN, O_SCREENSHOT,
           O_RECORD, O_SET, O_PRERENDER, O_STATS_JSON, O_VERSION, O_LIST_CAMERAS, O_RECORD_DEPTH, O_FOCAL, O_BASELINE, O_CENTER, O_LEFT, O_RIGHT,
           O_INPUT, O_BASELINES, O_COMBINE, O_VIEW, O_OUTPUT, O_MAPS, O_COLOR_RANGE, O_COLORMAP,
           O_LEGEND, O_ELSEWHERE = 768 /* + the row of elsewhere[] */ };
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
        {"colormap", required_argument, NULL, O_COLORMAP},
        {"legend", no_argument, NULL, O_LEGEND},
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
        {O_COLORMAP, "display", "colormap", NULL},
        {O_LEGEND, "display", "legend", "true"},
    };
    /* stereo-match's matching and backend options (gpu/stereo_options.h), each as its [stereo]
     * key: -d, --cost, --paths, ... */
    enum { O_MATCH = 512 };
    enum { N_ELSEWHERE = sizeof elsewhere / sizeof elsewhere[0] };
    struct option all[sizeof opts / sizeof opts[0] + N_ELSEWHERE + 40];
    char shortopts[32] = ":hq"; /* -q: stereo-match's --quiet (elsewhere[0]) */
    size_t nall = sizeof opts / sizeof opts[0] - 1;
    memcpy(all, opts, nall * sizeof opts[0]);
    /* with or without a value, so that --color FILE is answered as --color */
    for (int i = 0; i < N_ELSEWHERE; i++)
        all[nall++] = (struct option){elsewhere[i].name, optional_argument, NULL, O_ELSEWHERE + i};
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
            char could[256];
            if (c == ':')
                report("%s: needs a value (see --help)", argv[optind - 1]);
            else if (long_option_matches(argv[optind - 1], all, could, sizeof could) > 1)
                report("option '%s' is ambiguous: %s (see --help)", argv[optind - 1], could);
            else
                report("unknown option '%s' (see --help)", argv[optind - 1]);
            return -1;
        }
        if (c == 'q' || (c >= O_ELSEWHERE && c < O_ELSEWHERE + N_ELSEWHERE)) {
            int i = c == 'q' ? 0 : c - O_ELSEWHERE;
            report("%s%s is %s; %s", c == 'q' ? "-q" : "--", c == 'q' ? "" : elsewhere[i].name,
                   elsewhere[i].what, elsewhere[i].here);
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
    /* gst:// outputs: the files their sinks write (app/outputs/output_gst.c checks that GStreamer
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
int load_config(int argc, char **argv, live_config *cfg, app_options *o)
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
