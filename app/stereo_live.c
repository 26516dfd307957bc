/* SPDX-License-Identifier: Apache-2.0 */
/* stereo-live — live stereo depth: two cameras (or the generated scene, or recorded files) in,
 * colour-mapped disparity in an SDL window with an overlay out.
 *
 *   stereo-live                         the generated scene, in a window (the embedded default)
 *   stereo-live --config rig.ini        cameras and settings from a file (see app/config.h)
 *   stereo-live --headless --frames 100 no window: statistics once a second
 *   stereo-live --list-cameras          the V4L2 devices and what they offer (live_cameras.c)
 *
 * This file is main and the wiring: the signals, the inputs (source, maps, the camera for
 * depth), the outputs, the start and the end. The options are live_options.c's, the window
 * display.c's, the rates, the headless loop and the summary live_summary.c's (live_app.h lists
 * them). The main thread is the display (SDL wants it); the capture and stage threads live in
 * live_pipeline.c, the sources in sources/, the outputs in outputs/. Exit status: 0 after a
 * clean shutdown (frame limit, end of the files, window closed, q/Esc, SIGINT, SIGTERM), 1 when
 * something failed while running (an output that sent no frame because every write failed
 * included), 2 for a bad option or configuration (reported before anything is opened).
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
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if !LIVE_LIBC_ONLY
#include "calib.h"
#include "camera_list.h"
#include "display.h"
#include "image_io.h"
#include "live_cameras.h"
#include "mapfile.h"
#endif
#include "config.h"
#include "depth.h"
#include "live_app.h"
#include "live_summary.h"
#include "outpath.h"
#include "stereo.h"
#include "version.h"

#define EXIT_USAGE 2

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
volatile sig_atomic_t got_signal;
static volatile sig_atomic_t start_blocking;
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

int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("stereo-live: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
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

#if !LIVE_LIBC_ONLY
/* The generated scene's time lets a test render the ground truth of the frame shown. */
void log_screenshot(const app *a)
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
void take_frame(app *a, const live_frame *f, int keep_disparity)
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
    display *d = NULL;
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
          windowed ? "window: " : "headless", windowed ? display_renderer(d) : "",
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
    if (live_pipeline_start(a.pipe, windowed ? display_wake : NULL, d, err, sizeof err) != 0) {
#else
    if (live_pipeline_start(a.pipe, NULL, NULL, err, sizeof err) != 0) {
#endif
        report("%s", err);
        goto out;
    }
#if !LIVE_LIBC_ONLY
    if (windowed)
        display_run(d, &a);
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
        display_close(d);
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

