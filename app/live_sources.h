/* live_sources.h — where the live app's frame pairs come from, and where recordings go.
 *
 * One small interface over four sources, chosen by live_config.source:
 *   synth  the generated scene (hal/synth.h), animated: the scene time is the time since open
 *   files  two printf-patterned image sequences (left_%04d.png, ...), optionally looped
 *   v4l2   two cameras through hal/capture.h (pairing, lost-camera retries and messages there)
 *   sbs    one side-by-side camera (left half | right half) through hal/v4l2_camera.h, split here
 *
 * The source writes each pair into two caller buffers (the stage's frames, stereo_frame_alloc):
 * synth renders straight into them; files decodes and copies; a camera's driver buffer is copied
 * once and given straight back (capture.h delivers mmap buffers, not the stage's memory).
 * Pacing is the caller's business: frame_source_info says the rate (0 = as fast as possible).
 *
 * Threads: a source is opened and closed by one thread and read by one thread at a time (the
 * live app opens it in main, before the window, and reads it in its capture thread).
 * Library code never exits: failures come back as a status with a one-line message.
 */
#ifndef STEREO_APP_LIVE_SOURCES_H
#define STEREO_APP_LIVE_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "stereo.h"

typedef enum {
    FRAME_OK = 0,    /* a pair was written */
    FRAME_TIMEOUT,   /* nothing yet (camera): call again */
    FRAME_LOST,      /* a camera is lost and being reopened: frame_source_message says so */
    FRAME_END,       /* the file sequence is over (no loop) */
    FRAME_ERROR,     /* anything else: frame_source_message says what */
} frame_status;

typedef struct {
    int width, height;      /* of each side's image (sbs: half the camera frame) */
    size_t frame_bytes;     /* a buffer big enough for one side in any format the source gives */
    int live;               /* 1: a camera or the paced scene (drop the oldest pair when slow) */
    double fps;             /* pacing rate for the caller; 0 = no pacing (camera or fast files) */
    int have_scene_time;    /* synth: frame_source_read sets scene_t */
} frame_source_info;

/* One delivered pair: images point into the caller's buffers. */
typedef struct {
    stereo_image left, right;
    int64_t timestamp_ns;   /* CLOCK_MONOTONIC when captured (camera) or produced (synth/files) */
    double scene_t;         /* synth: the scene time rendered, in s */
    long index;             /* the source's own frame number (files: the file index) */
} frame_pair;

typedef struct frame_source frame_source;

/* Opens the configured source (cameras start streaming). On failure *out is NULL and err has
 * one line. */
frame_status frame_source_open(const live_config *cfg, frame_source **out, char *err,
                               size_t errlen);
void frame_source_info_get(const frame_source *s, frame_source_info *out);

/* Writes the next pair into left_buf / right_buf (info.frame_bytes each). Cameras wait up to
 * timeout_ms. */
frame_status frame_source_read(frame_source *s, uint8_t *left_buf, uint8_t *right_buf,
                               frame_pair *out, int timeout_ms);

/* The latest problem or state as one line ("" while all is well): what the window shows. */
const char *frame_source_message(const frame_source *s);

/* Camera statistics as one short line for the log ("" for the other sources). */
void frame_source_stats_line(const frame_source *s, char *buf, size_t len);

/* printf into a message buffer (truncating): the app's modules report through it. */
void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void frame_source_close(frame_source *s);

/* ---- recording: synchronised raw pairs the files source replays ----------------------------
 * DIR/left_%06d.png, DIR/right_%06d.png (grey, or RGB for RGB24 frames; YUYV as its Y plane,
 * which is all the stage reads of it), DIR/timestamps.txt ("index t_ns" per pair, relative to
 * the first), and at close DIR/replay.ini, a configuration that replays the folder:
 *   stereo-live --config DIR/replay.ini */
typedef struct pair_recorder pair_recorder;

int pair_recorder_open(const char *dir, pair_recorder **out, char *err, size_t errlen);
int pair_recorder_write(pair_recorder *r, const frame_pair *p, char *err, size_t errlen);
long pair_recorder_count(const pair_recorder *r);
/* Writes replay.ini and closes; 0, or -1 with err (the pairs already written stay). */
int pair_recorder_close(pair_recorder *r, char *err, size_t errlen);

#endif
