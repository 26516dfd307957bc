/* SPDX-License-Identifier: Apache-2.0 */
/* live_app.h — what stereo-live runs on, shared by its rooms: the app's state (the source, the
 * maps, the stage's parameters, the pipeline, the outputs, the frame shown and the rates), and
 * the few things every room uses: report() for messages, the monotonic clock, the signal flag.
 *
 *   stereo_live.c     main and the wiring: signals, the inputs, maps and camera, the outputs,
 *                     the start and the end (defines what is declared below)
 *   live_options.h    the command line and the configuration, checked before anything opens
 *   display.h         the window (SDL): overlay, legend, keys, screenshots; not in the
 *                     CUDA-and-libc-only build (LIVE_LIBC_ONLY)
 *   live_summary.h    the rates, the status line, the headless loop, the summary and its JSON
 */
#ifndef STEREO_APP_LIVE_APP_H
#define STEREO_APP_LIVE_APP_H

#include <signal.h>
#include <stdint.h>

#if !LIVE_LIBC_ONLY
#include "calib.h"
#include "outputs/live_outputs.h"
#endif
#include "colormap.h"
#include "config.h"
#include "depth.h"
#include "live_histogram.h"
#include "live_options.h"
#include "live_pipeline.h"
#include "sources/live_sources.h"
#include "stereo.h"

#if LIVE_LIBC_ONLY
#define PROGRAM "stereo-live-headless"
#else
#define PROGRAM "stereo-live"
#endif
#define OVERLAY_LINE 640        /* bytes of one overlay line */

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

/* The first SIGINT / SIGTERM (stereo_live.c's on_signal): the loops end when it is set. */
extern volatile sig_atomic_t got_signal;

int64_t monotonic_ns(void);
/* "stereo-live: " and the message on stderr, one line. */
void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Keeps what the overlay and the screenshot need from a frame the display holds; keep_disparity:
 * the window's copy of the disparity, for the cursor readout and key p (stereo_live.c). */
void take_frame(app *a, const live_frame *f, int keep_disparity);
#if !LIVE_LIBC_ONLY
/* "screenshot FILE (frame N, scene t T s)" in the log, for --screenshot at the end. */
void log_screenshot(const app *a);
#endif

#endif
