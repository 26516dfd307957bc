/* SPDX-License-Identifier: Apache-2.0 */
/* camera_list.h — which V4L2 devices there are and what they offer (stereo-live --list-cameras).
 *
 * camera_list_scan looks at DIR/video* (DIR is /dev, or another directory for tests), finds the
 * udev links DIR/v4l/by-id/ and DIR/v4l/by-path/ that point at each node, and asks every node
 * what it is: VIDIOC_QUERYCAP (card, driver, bus, capture or not), then for video capture nodes,
 * through libv4l2 as the capture does, VIDIOC_ENUM_FMT (the driver's formats and those libv4l2
 * converts to), VIDIOC_ENUM_FRAMESIZES and VIDIOC_ENUM_FRAMEINTERVALS. Nodes are opened with
 * O_NONBLOCK and never stream, so a node in use by another program is still listed; a node that
 * cannot be opened or asked is listed with the reason (camera_node.error) and the scan goes on.
 *
 * The library prints nothing: the caller formats the list (app/live_cameras.c).
 */
#ifndef STEREO_CAMERA_LIST_H
#define STEREO_CAMERA_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"

/* Bounds on what a driver may list (a driver listing more is cut there; `cut` says so). */
#define CAMERA_LIST_MAX_NODES 256
#define CAMERA_LIST_MAX_LINKS 8
#define CAMERA_LIST_MAX_FORMATS 128
#define CAMERA_LIST_MAX_SIZES 64
#define CAMERA_LIST_MAX_RATES 32
#define CAMERA_LIST_PATH_MAX 512

typedef struct {
    int stepwise;                  /* 0: one size; 1: a range (stepwise or continuous) */
    uint32_t width, height;        /* the size; for a range, the largest */
    uint32_t min_width, min_height, step_width, step_height; /* a range only */
    /* frame rates at this size (for a range: at the largest size), in fps */
    int nrates;                    /* discrete rates listed, fastest last as the driver gives */
    double rate[CAMERA_LIST_MAX_RATES];
    int rate_range;                /* 1: any rate from rate_min to rate_max instead */
    double rate_min, rate_max;
} camera_size;

typedef struct {
    uint32_t fourcc;
    char description[33];          /* the driver's (or libv4l2's) name for it */
    int emulated;                  /* libv4l2 converts to it from a format of the driver */
    int compressed;
    capture_format takes;          /* the [camera] format that captures it; AUTO = none */
    int nsizes;
    camera_size *sizes;
} camera_format;

typedef struct {
    char path[CAMERA_LIST_PATH_MAX];                      /* DIR/videoN */
    int number;                                           /* N */
    int nlinks;                                           /* by-id first, then by-path */
    char link[CAMERA_LIST_MAX_LINKS][CAMERA_LIST_PATH_MAX];
    char error[320];               /* "" or why the node could not be opened or asked */
    char card[33], driver[17], bus_info[33];
    uint32_t caps;                 /* the node's capabilities (device_caps) */
    int capture;                   /* a video capture node with streaming: a camera the app takes */
    char kind[64];                 /* "video capture", "metadata capture", "video output", ... */
    int nformats;
    camera_format *formats;
    int cut;                       /* the driver listed more than the bounds above */
} camera_node;

typedef struct {
    int n;
    camera_node *node;             /* sorted by N */
    int cut;                       /* more than CAMERA_LIST_MAX_NODES nodes */
} camera_list;

/* Scans dir (e.g. "/dev"). 0 with *out filled (n may be 0: no video nodes); -1 with err set
 * ("<dir>: <problem>") when dir cannot be read or memory runs out. Free with camera_list_free. */
int camera_list_scan(const char *dir, camera_list *out, char *err, size_t errlen);
void camera_list_free(camera_list *l);

/* The name to configure a node by: its first by-id link (the same camera after a replug), else
 * its first by-path link (the same USB port), else DIR/videoN. */
const char *camera_node_config_path(const camera_node *n);


#endif
