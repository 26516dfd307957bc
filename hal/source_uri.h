/* SPDX-License-Identifier: Apache-2.0 */
/* source_uri.h — one way to name a live input: a URI per camera, or one for a side-by-side
 * stream, and which source backend reads what was named (pure parsing, no I/O).
 *
 *   v4l2:///dev/video0    a V4L2 camera (a bare /dev/... path means the same)
 *   csi://0               a Jetson CSI camera by sensor id (nvarguscamerasrc, GStreamer)
 *   rtsp://HOST/PATH      an RTSP stream (GStreamer's uridecodebin)
 *   file://PATH           a video file (GStreamer's decodebin), or, when PATH has a printf
 *                         frame-number conversion (left_%04d.png), an image sequence
 *   gst://DESCRIPTION     any GStreamer launch description; the app appends its caps and appsink
 *   synth://              the generated scene; options as a query: synth://?width=320&height=240&fps=0
 *
 * A pair is named by two URIs (left, right) or by one side-by-side stream (input: the left view
 * in the left half of each frame). source_plan_make decides the backend (app/sources/source_*.c):
 *   input synth://          -> the generated scene
 *   input v4l2              -> one side-by-side V4L2 camera
 *   left/right both v4l2    -> the V4L2 camera pair (hal/capture.h: zero copy, pairing)
 *   left/right both file:// image sequences -> the image files source
 *   input csi/rtsp/file video/gst          -> one GStreamer pipeline, split into halves
 *   left/right of csi/rtsp/file video/gst (a v4l2 one among them then runs as GStreamer's
 *                           v4l2src)       -> two GStreamer pipelines paired by timestamp
 * Anything else (synth:// as one side, an image sequence as input or beside a stream) is refused
 * with what to write instead.
 */
#ifndef STEREO_SOURCE_URI_H
#define STEREO_SOURCE_URI_H

#include <stddef.h>

#define SOURCE_URI_MAX 512   /* bytes of a URI, with its NUL (CONFIG_PATH_MAX) */
#define SOURCE_CSI_MAX_SENSOR 15

typedef enum {
    URI_V4L2 = 0,
    URI_CSI,
    URI_RTSP,
    URI_FILE,
    URI_GST,
    URI_SYNTH,
} source_uri_kind;

typedef struct {
    source_uri_kind kind;
    char text[SOURCE_URI_MAX];   /* the URI as given, for messages */
    /* v4l2: the device path; file: the path; rtsp: the whole URI; gst: the description;
     * csi, synth: "" */
    char target[SOURCE_URI_MAX];
    int sensor_id;               /* csi: 0..SOURCE_CSI_MAX_SENSOR */
    int is_pattern;              /* file: the path has a '%' conversion: an image sequence */
    int width, height, fps;      /* synth: the options given, -1 where not given */
} source_uri;

/* Shared with output_uri.c: formats err (when non-NULL) and returns -1. */
int uri_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A non-negative decimal integer of n characters at s in lo..hi, nothing else: 0, else -1. */
int uri_parse_uint(const char *s, size_t n, long lo, long hi, int *out);

/* Parses one URI. 0, or -1 with "'TEXT': what is wrong (what to write instead)" in err. */
int source_uri_parse(const char *text, source_uri *out, char *err, size_t errlen);

/* "v4l2", "csi", "rtsp", "file", "gst", "synth" */
const char *source_uri_kind_name(source_uri_kind k);

/* 1 for the kinds read through GStreamer (csi, rtsp, gst, file:// without a pattern). */
int source_uri_is_gst(const source_uri *u);

typedef enum {
    PLAN_SYNTH = 0,     /* input synth:// */
    PLAN_SBS,           /* input v4l2 */
    PLAN_V4L2_PAIR,     /* left, right v4l2 */
    PLAN_FILES,         /* left, right image sequences */
    PLAN_GST_ONE,       /* input through GStreamer, split */
    PLAN_GST_PAIR,      /* left, right through GStreamer */
} source_plan_kind;

typedef struct {
    source_plan_kind kind;
    int nuri;            /* 1 (input) or 2 (left, right) */
    source_uri uri[2];
    int from_type;       /* 1: made from the app's older [source] type keys
                            (app/config_check.c), not from URIs: messages then name [camera] /
                            [files] keys */
} source_plan;

/* The plan for input (one stream) or left and right (a pair); NULL or "" = not given. Exactly
 * one of the two ways must be given. 0, or -1 with "KEY: what is wrong" in err, KEY being
 * "input", "left" or "right". */
int source_plan_make(const char *input, const char *left, const char *right, source_plan *out,
                     char *err, size_t errlen);

#endif
