/* SPDX-License-Identifier: Apache-2.0 */
/* source_backend.h — what a frame source backend provides (private to live_sources.c and
 * source_*.c), as hal/capture_backend.h is for the camera pair.
 *
 * Each backend lives in its own file and exports one source_ops table; its functions are static
 * and carry the same names in every backend (name_open, name_read, name_close, ...), so the files
 * read alike:
 *   source_synth.c  the generated scene (input synth://)
 *   source_files.c  two image sequences (left/right file://..._%04d.png)
 *   source_v4l2.c   two V4L2 cameras through hal/capture.h (zero copy)
 *   source_sbs.c    one side-by-side V4L2 camera, split
 *   source_gst.c    GStreamer pipelines: one split side-by-side stream or a pair by timestamp
 * live_sources.c turns the configuration into a source_plan (live_config_plan), picks the table
 * for the plan's kind and routes every public call through it; a backend not built into this
 * binary has no table there and is refused with "not built in this binary".
 */
#ifndef STEREO_APP_SOURCE_BACKEND_H
#define STEREO_APP_SOURCE_BACKEND_H

#include <stdint.h>

#include "live_sources.h"
#include "source_uri.h"

/* A lost camera or stream is reopened this often. */
#define SOURCE_RETRY_MS 1000

typedef struct {
    const char *name;
    /* Fills s->info and s->state; on failure err has one line (s->state is freed by open). */
    frame_status (*open)(frame_source *s, const live_config *cfg, const source_plan *plan,
                         char *err, size_t errlen);
    /* buf[0 .. info.views - 1]: one buffer per view (frame_source_read) */
    frame_status (*read)(frame_source *s, uint8_t *const buf[], frame_pair *out, int timeout);
    void (*close)(frame_source *s);
    /* optional (NULL: nothing to say / nothing is lent) */
    void (*stats_line)(const frame_source *s, char *buf, size_t len);
    void (*lend)(frame_source *s, uint8_t *const frame[], size_t bytes);
    void (*release)(frame_source *s, const frame_pair *p);
    void (*reclaim)(frame_source *s);
} source_ops;

struct frame_source {
    const source_ops *ops;
    frame_source_info info;
    char message[512];      /* frame_source_message */
    void *state;            /* the backend's own */
};

extern const source_ops source_synth_ops, source_files_ops, source_v4l2_ops, source_sbs_ops,
    source_gst_ops;

/* CLOCK_MONOTONIC in ns. */
int64_t source_now_ns(void);

/* One line to the log (stderr, "stereo-live: LINE"); the capture library's log callback too. */
void source_log(void *user, const char *line);

/* Copies a frame's rows (pitch src_pitch) into a tightly packed buffer. */
stereo_image source_pack_rows(const uint8_t *src, size_t src_pitch, int width, int height,
                              stereo_pixfmt f, uint8_t *dst);

/* The capture settings of [camera] and [controls] (device paths not set). source_v4l2.c. */
void source_camera_config(const live_config *cfg, capture_config *cc);

/* After a camera failed to open: 1 if its device path does not exist, and then, when the
 * configuration file set the key naming it (SECTION.KEY), err is rewritten with the file's line.
 * 0: the path exists (err as the camera left it). source_v4l2.c. */
int source_camera_path_missing(const live_config *cfg, const char *section, const char *key,
                               const char *path, char *err, size_t errlen);

#endif
