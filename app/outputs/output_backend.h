/* SPDX-License-Identifier: Apache-2.0 */
/* output_backend.h — the interface every output backend implements (output_*.c), and the
 * frame it is given. live_outputs.c calls a backend from that output's own thread only, so a
 * backend needs no locks of its own; it may take as long as it likes (a slow write only drops
 * that output's frames, live_outputs.c's DESIGN).
 *
 * Adding an output is a new file with an output_backend and a line in live_outputs.c's table,
 * not a branch in the pipeline.
 */
#ifndef STEREO_APP_OUTPUT_BACKEND_H
#define STEREO_APP_OUTPUT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "depth.h"
#include "output_uri.h"

/* What a frame carries, by need (output_backend.needs): only what some output needs is copied. */
enum {
    OUTPUT_NEEDS_DISPARITY = 1,
    OUTPUT_NEEDS_RECTIFIED = 2,
    OUTPUT_NEEDS_COLOR = 4,
    OUTPUT_NEEDS_CONFIDENCE = 8, /* by URI, not by backend: output_uri_needs_confidence */
};

typedef struct {
    uint64_t number;            /* 1, 2, ...: the processed pair's number */
    int64_t capture_ns;         /* CLOCK_MONOTONIC when the left frame was captured */
    int64_t stamp_ns;           /* the same instant on CLOCK_REALTIME (ROS header stamps) */
    int width, height;          /* the stage's (rectified) size */
    const int16_t *disparity;   /* 16 * d or STEREO_INVALID (stereo.h); NULL unless needed */
    const uint8_t *rectified;   /* the rectified left view, grey, width bytes a row */
    const uint8_t *rgba;        /* the colour-mapped disparity, RGBA, 4 * width bytes a row */
    double stage_ms;            /* the stage's time for this pair */
    int64_t done_ns;            /* CLOCK_MONOTONIC when the stage handed it over */
    /* the left disparity's confidence (stereo.h, 0..255), width bytes a row; NULL unless an
     * output of the run masks by it (output_uri_needs_confidence) */
    const uint8_t *confidence;
} output_frame;

/* What every output of a run shares, fixed at create. */
typedef struct {
    int width, height;          /* the stage's size */
    int min_disparity, num_disparities;
    int have_cam;               /* cam is valid (hal/depth.h): depth, point clouds, CameraInfo */
    depth_camera cam;
    char program_dir[512];      /* the folder of the running program (helpers live beside it) */
    /* Says one line on stderr (a notice, not a failure: "output URI: ..." is the backend's to
     * write), from the output's thread; may be NULL. Set by live_outputs.c. */
    void (*report)(const char *line);
    char backend[16];           /* the stage's backend ("cpu", "cuda") and matching cost, as */
    char cost[16];              /* --stats-json names them (the web page shows them) */
} output_setup;

typedef struct {
    output_kind kind;
    unsigned needs;             /* OUTPUT_NEEDS_* */
    /* Opens the output (checks, folders, child processes). 0, or -1 with one line in err. */
    int (*open)(const output_uri *u, const output_setup *s, void **state, char *err,
                size_t errlen);
    /* Sends one frame: 0 sent, 1 dropped by the output itself (counted as a drop), -1 failed
     * with one line in err (counted as a drop; the first failure is reported). */
    int (*write)(void *state, const output_frame *f, char *err, size_t errlen);
    /* Anything more to say in the stats (", published 120, bridge restarts 1"), may be NULL. */
    void (*stats)(void *state, char *buf, size_t len);
    /* Counters for --stats-json: restarts of a helper process (0 when it has none). */
    uint64_t (*restarts)(void *state);
    void (*close)(void *state);
    /* May be NULL. The end, from the output's own thread after its last frame, before the
     * stats are read for the summary: a stream is ended and given its bounded time to finish.
     * -1 with one line in err: the output failed after its last write (reported as a write's
     * failure would be), else 0. */
    int (*finish)(void *state, char *err, size_t errlen);
    /* May be NULL. Frames write took (0) that never reached the end of the output after all
     * (a GStreamer queue that leaked them, frames still queued when it was stopped): counted
     * as drops, not sent. */
    uint64_t (*lost)(void *state);
} output_backend;

extern const output_backend output_file_backend;
extern const output_backend output_ros2_backend;
extern const output_backend output_gst_backend;   /* rtp, rtsp, gst: output_gst.c */
extern const output_backend output_web_backend;   /* http: output_web.c */

#endif
