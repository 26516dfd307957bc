/* SPDX-License-Identifier: Apache-2.0 */
/* live_sources.h — where the live app's frame pairs come from, and where recordings go.
 *
 * One small interface over the sources that live_config_plan (config.h) makes of [source]
 * left/right/input URIs (hal/source_uri.h) or the older [source] type; one backend per file
 * (source_backend.h):
 *   synth  the generated scene (hal/synth.h), animated: the scene time is the time since open
 *   files  two printf-patterned image sequences (left_%04d.png, ...), optionally looped
 *   v4l2   two cameras through hal/capture.h (pairing, lost-camera retries and messages there)
 *   sbs    one side-by-side camera (left half | right half) through hal/v4l2_camera.h, split here
 *   gst    GStreamer pipelines (gst://, csi://, rtsp://, file:// videos): one side-by-side stream
 *          split, or two paired by timestamp; lost and reconnected as a camera (source_gst.c)
 *
 * The source writes each pair into two caller buffers (the stage's frames, stereo_frame_alloc):
 * synth renders straight into them; files decodes and copies; a camera's driver buffer is copied
 * once and given straight back — unless the v4l2 cameras stream into the caller's frames
 * themselves (zero copy, below). Pacing is the caller's business: frame_source_info says the rate
 * (0 = as fast as possible).
 *
 * Zero copy (v4l2 only; the other sources ignore these three calls). The caller lends the source
 * every frame of its pool (frame_source_lend, after allocating them); cameras that can (V4L2
 * USERPTR, capture.h) then write each frame straight into a lent frame, and a delivered pair's
 * images point into lent frames that need not be the ones passed to that read. Such a pair
 * belongs to the caller until it calls frame_source_release for it (when the slot holding it is
 * free again: the stage, the display and any writer are done with it); only then may the driver
 * write into those frames again. frame_source_reclaim takes every lent frame back (the cameras
 * let go of all of them) before the caller frees or replaces them. Cameras that cannot (libv4l2
 * converts the format, the driver refuses USERPTR or the memory, STEREO_V4L2_IO=mmap, or nothing
 * was lent before the first read) copy once into the frames passed to the read, as above; the
 * log says once per camera which it is. The side-by-side camera always copies (it splits).
 *
 * Threads: a source is opened and closed by one thread and read by one thread at a time (the
 * live app opens it in main, before the window, and reads it in its capture thread).
 * Library code never exits: failures come back as a status with a one-line message.
 *
 * Built with LIVE_LIBC_ONLY=1 (build/gpu/stereo-live-headless) only the synth source is there:
 * the others, and pair_recorder_open, fail with "not built in this binary: ..."; so does gst
 * in a build configured without GStreamer.
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
    int views;              /* images per read: 2 (the pair) .. FRAME_MAX_VIEWS ([stereo]
                               baselines); a backend that leaves it 0 delivers the pair */
} frame_source_info;

/* Views a source can deliver: the stage's limit (the reference, view 1, and the views at the
 * [stereo] baselines ratios b_2 ...). */
#define FRAME_MAX_VIEWS STEREO_MAX_VIEWS

/* One delivered set of views (a pair when views = 2): images point into the caller's buffers.
 * view[0] is the reference (left), view[1] the first other view (right, b_1 = 1), view[i] the
 * view at the baseline ratio b_i; left and right are other names for view[0] and view[1].
 *
 * A view lost (lost bit i: a camera of several unplugged, a file of one view missing, the
 * generated scene's [synth] lose_view): view[i] is not valid in this delivery, the others are.
 * The caller decides what to do (the live pipeline matches the reference and view 1 alone when
 * only views >= 2 are lost, and waits when the reference or view 1 is). The reference is never
 * reported lost: without it a read does not return FRAME_OK.
 *
 * Per-view timing, what the overlay shows for every camera: view_timestamp_ns[i] is when view
 * i was captured (cameras), rendered (synth: the scene time it shows) or delivered (files: all
 * views of one file index alike), so its skew is view_timestamp_ns[i] - view_timestamp_ns[0];
 * view_drops[i] counts the frames of view i the source dropped or lost so far (unpaired
 * frames, lost deliveries, missing files). */
typedef struct {
    union {
        struct {
            stereo_image left, right;
        };
        stereo_image view[FRAME_MAX_VIEWS];
    };
    int views;              /* images delivered: info.views */
    unsigned lost;          /* bit i: view i is missing from this delivery */
    int64_t timestamp_ns;   /* CLOCK_MONOTONIC when captured (camera) or produced (synth/files) */
    int64_t view_timestamp_ns[FRAME_MAX_VIEWS];
    uint64_t view_drops[FRAME_MAX_VIEWS];
    double scene_t;         /* synth: the scene time rendered, in s */
    long index;             /* the source's own frame number (files: the file index) */
} frame_pair;

typedef struct frame_source frame_source;

/* Opens the configured source (cameras start streaming). On failure *out is NULL and err has
 * one line. */
frame_status frame_source_open(const live_config *cfg, frame_source **out, char *err,
                               size_t errlen);
void frame_source_info_get(const frame_source *s, frame_source_info *out);

/* The backend's name: "synth", "files", "v4l2", "sbs" or "gst". */
const char *frame_source_kind(const frame_source *s);

/* synth only (input synth://), after open and before the first read: renders `frames` pairs of the animation
 * now (scene times 0, 1/fps, 2/fps, ...; 1/30 s apart when unpaced) and from then on delivers
 * them in a loop, each a copy out of memory, so that the renderer does not limit the rate
 * (throughput measurements: stereo-live --synth-prerender K). 0, or -1 with err. */
int frame_source_prerender(frame_source *s, int frames, char *err, size_t errlen);

/* Writes the next set of views into buf[0] .. buf[info.views - 1] (info.frame_bytes each; the
 * pair: buf[0] left, buf[1] right), or, for a camera that streams into lent frames, delivers it
 * in lent frames without writing buf[]. Cameras wait up to timeout_ms. out->views is
 * info.views; a backend that does not fill the per-view timing gets the pair's timestamp for
 * every view and no drops. */
frame_status frame_source_read(frame_source *s, uint8_t *const buf[], frame_pair *out,
                               int timeout_ms);

/* The latest problem or state as one line ("" while all is well): what the window shows. */
const char *frame_source_message(const frame_source *s);

/* Camera statistics as one short line for the log ("" for the other sources). */
void frame_source_stats_line(const frame_source *s, char *buf, size_t len);

/* printf into a message buffer (truncating): the app's modules report through it. */
void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void frame_source_close(frame_source *s);

/* Zero copy (above). lend: one pool slot's frames, one per view (frame[0] left, frame[1] right,
 * ...: info.views of them, `bytes` each, at least info.frame_bytes), from the thread that allocated them, before the first read after them;
 * the frames must stay allocated until frame_source_reclaim. release: the pair a read delivered
 * is free again (any thread; a pair not delivered in lent frames is ignored). reclaim: every lent
 * frame back, the cameras stopped writing into them; while nobody reads the source. */
void frame_source_lend(frame_source *s, uint8_t *const frame[], size_t bytes);
void frame_source_release(frame_source *s, const frame_pair *p);
void frame_source_reclaim(frame_source *s);

/* ---- recording: synchronised raw pairs the files source replays ----------------------------
 * DIR/left_%06d.png, DIR/right_%06d.png (grey, or RGB for RGB24 frames; YUYV as its Y plane,
 * which is all the stage reads of it; as the source gave them, before rectification),
 * DIR/timestamps.txt ("index t_ns" per pair, relative to the first), and at close
 * DIR/replay.ini, a configuration that replays the folder at the recorded rate (at most 1000
 * pairs/s, the largest [files] fps) with the
 * recording's [stereo] and [calibration] settings (maps made absolute), so that the replay
 * computes the same disparities:
 *   stereo-live --config DIR/replay.ini
 * DIR is cfg->record_dir; the settings are those of cfg when the recorder is opened, with the
 * D of run (the parameters the stage runs with) where cfg has disparities = auto: the replay
 * searches the range the recording measured.
 * More views ([stereo] baselines): DIR/view2_%06d.png ... beside left and right, and replay.ini
 * names the sequences as [source] left, right, view2 ... file:// URIs; a view lost in a delivery
 * (frame_pair.lost) gets no file, so the replay loses it on the same frame.
 * A recorder is used by one thread at a time (the live app's writer thread, live_pipeline.c);
 * pair_recorder_write blocks for as long as writing one PNG file per view takes. */
typedef struct pair_recorder pair_recorder;

/* Before the session: whether the replay.ini of a recording into cfg->record_dir would read back
 * whole (rendered in memory and loaded with the configuration reader: a folder whose absolute
 * path holds " ;" or " #", or is too long for the reader's lines, is refused). The folder itself
 * (new or empty) is checked by the app with the other files (outpath_check_folder). 0, or -1
 * with "--record / record.dir 'DIR': ..." in err. */
int pair_recorder_check(const live_config *cfg, char *err, size_t errlen);
int pair_recorder_open(const live_config *cfg, const stereo_params *run, pair_recorder **out,
                       char *err, size_t errlen);
int pair_recorder_write(pair_recorder *r, const frame_pair *p, char *err, size_t errlen);
long pair_recorder_count(const pair_recorder *r);
/* Writes replay.ini and closes; 0, or -1 with err (the pairs already written stay). */
int pair_recorder_close(pair_recorder *r, char *err, size_t errlen);

#endif
