/* SPDX-License-Identifier: Apache-2.0 */
/* live_pipeline.h — the live app's capture and stage threads and the frames handed between them
 * and the display (the caller's thread). live_pipeline.c's DESIGN comment has the details.
 *
 *   live_pipeline_create   stage + frame pool (+ recorder); nothing runs yet
 *   live_pipeline_start    starts the capture and stage threads (+ the writer when recording)
 *   live_pipeline_acquire  the newest result not shown yet, held until live_pipeline_release
 *   live_pipeline_stop     flag, broadcast, join (idempotent); the writer flushes its queue
 *   live_pipeline_destroy  frees everything (stops first)
 * Only the display thread calls acquire/release and the setters; create/start/stop/destroy come
 * from the thread that owns the pipeline (the same one, in the app).
 */
#ifndef STEREO_APP_LIVE_PIPELINE_H
#define STEREO_APP_LIVE_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "live_histogram.h"
#include "sources/live_sources.h"
#include "colormap.h"
#include "stereo.h"

typedef struct live_pipeline live_pipeline;

/* A processed pair as the display sees it. Everything points into pipeline memory that stays
 * unchanged until live_pipeline_release. */
typedef struct {
    stereo_result result;       /* disparity, colour image (width x height of the stage) */
    stereo_image left, right;   /* the input pair (before rectification) */
    int64_t capture_ns;         /* CLOCK_MONOTONIC when the pair was captured */
    double scene_t;             /* synth: the scene time */
    uint64_t number;            /* 1, 2, ...: which processed pair this is */
    int p2;                     /* the P2 it was computed with */
    stereo_method method;       /* and the method (sgm / bm) */
    colormap_range color;       /* the disparity range its colour image spans */
    int views;                  /* views per delivery ([stereo] baselines; 2: the pair) */
    int views_used;             /* views the stage matched: views, or 2 while a view >= 2 was
                                   lost (the reference and view 1 alone) */
    unsigned lost;              /* bit i: view i was lost in this delivery */
    int64_t view_skew_ns[FRAME_MAX_VIEWS];  /* view i's timestamp - the reference's */
    uint64_t view_drops[FRAME_MAX_VIEWS];   /* view i's frames dropped / lost so far */
} live_frame;

typedef struct {
    uint64_t captured;          /* pairs the source delivered */
    uint64_t dropped;           /* pairs dropped (live sources only: oldest first) */
    uint64_t processed;         /* pairs the stage finished */
    double stage_ms_total;      /* sum of submit -> wait times */
    double stage_ms_last;
    int64_t first_done_ns;      /* CLOCK_MONOTONIC when the first / the latest result came out */
    int64_t last_done_ns;       /* (throughput: (processed - 1) / (last - first)) */
    int recording;              /* --record: the writer thread runs */
    uint64_t recorded;          /* pairs written (all of them once live_pipeline_stop returns) */
    uint64_t record_drops;      /* live sources: pairs not recorded, the writer was behind */
    /* cost mi (stereo_mi_status after each frame; kept across a P2 change's new stage) */
    int mi;                     /* 1 when the stage matches with cost mi on the CPU */
    int mi_warm_last;           /* the latest frame started from the previous one ("warm") */
    uint64_t mi_restarts;       /* frames that ran the whole hierarchy ("restart") */
    uint64_t mi_warm_frames;    /* frames that did not */
    double mi_restart_ms_total; /* their submit -> wait times, summed per kind */
    double mi_warm_ms_total;
    double mi_hierarchy_ms_total; /* the hierarchy's part of the restart frames */
    int lost;                   /* the source says a camera is lost */
    int views_used;             /* views of the latest frame: all, 2 (a view >= 2 lost: the
                                   pair stage), 0 (the reference or view 1 lost: waiting) */
    uint64_t pair_frames;       /* frames matched by the pair stage (a view >= 2 lost) */
    uint64_t view_waits;        /* frames not matched: the reference or view 1 lost */
    unsigned lost_views;        /* the latest delivery's lost views (bit i: view i) */
    char message[512];          /* the source's latest message ("" when all is well) */
    char source_stats[256];     /* cameras: pairs, unpaired drops, skew... ("" for other sources) */
    char error[512];            /* why the pipeline stopped by itself ("" if it did not) */
} live_stats;

/* The source and maps are borrowed: they must outlive the pipeline (a new P2 recreates the
 * stage from them); maps may be NULL, else one per view (params.views; the first two make the
 * pair stage used while a view >= 2 is lost). params: the stage's parameters with width/height
 * set; params.views must be the source's info.views.
 * On failure err has one line and *out is NULL. */
int live_pipeline_create(const live_config *cfg, const stereo_params *params,
                         const stereo_map *maps, frame_source *src, live_pipeline **out,
                         char *err, size_t errlen);

/* Recording the disparity too ([record] depth): the stage thread copies each recorded pair's
 * disparity (width x height, 16 * d or STEREO_INVALID, stereo.h) beside the pair, and the
 * writer thread calls write(user, index, disparity, err, errlen) after it wrote pair number
 * index (0, 1, ...: the recorder's numbering, left_NNNNNN.png). A write that fails stops the run
 * as a failed pair write does. Call after create (with [record] dir), before start. 0, or -1
 * with err. */
typedef int (*live_disparity_writer)(void *user, long index, const int16_t *disparity,
                                     char *err, size_t errlen);
int live_pipeline_record_disparity(live_pipeline *p, live_disparity_writer write, void *user,
                                   char *err, size_t errlen);

/* A result as it comes out, before the display gets it: hook(user, result, capture_ns, number,
 * stage_ms) is called from the stage thread after every frame (capture_ns: CLOCK_MONOTONIC of
 * the pair, number: 1, 2, ... as live_frame.number, stage_ms: the stage's time for it). It must
 * copy what it keeps and return without waiting (app/outputs/live_outputs.c). Call before start. */
typedef void (*live_result_hook)(void *user, const stereo_result *r, int64_t capture_ns,
                                 uint64_t number, double stage_ms);
void live_pipeline_on_result(live_pipeline *p, live_result_hook hook, void *user);

/* wake (may be NULL) is called from the stage thread after each new result and when the
 * pipeline finishes, e.g. to post an event to the display loop. */
int live_pipeline_start(live_pipeline *p, void (*wake)(void *), void *wake_user, char *err,
                        size_t errlen);

/* The newest unseen result: 1 (held in *out until live_pipeline_release), 0 if none is new. */
int live_pipeline_acquire(live_pipeline *p, live_frame *out);
void live_pipeline_release(live_pipeline *p);

/* Waits up to timeout_ms for a new result or the end (the headless loop). */
void live_pipeline_wait(live_pipeline *p, int timeout_ms);

/* 1 once nothing more will come: the frame limit was reached, the files ran out, or an error
 * stopped it (stats.error) — and the last result has been acquired. */
int live_pipeline_finished(live_pipeline *p);

void live_pipeline_stats(live_pipeline *p, live_stats *out);
/* The submit -> wait time of every processed pair so far. */
void live_pipeline_stage_times(live_pipeline *p, live_histogram *out);

/* The active backend's name ("cpu", "cuda") and stereo_backend_note ("" if nothing to say),
 * fixed at create (a new P2 keeps the backend). */
const char *live_pipeline_backend(const live_pipeline *p);
const char *live_pipeline_backend_note(const live_pipeline *p);
/* The SMs the CUDA stage runs on (stereo_stage_sms: [stereo] sms as the hardware rounded it, or
 * the whole device), 0 on the CPU backend; fixed at create like the backend. */
int live_pipeline_sms(const live_pipeline *p);

void live_pipeline_set_colormap(live_pipeline *p, int colormap);
/* The colour range of the frames submitted from now on (16ths of a pixel, lo < hi), or 0, 0
 * for the search range (stereo_set_color_range); a range the stage refuses counts as 0, 0. */
void live_pipeline_set_color_range(live_pipeline *p, int lo, int hi);
void live_pipeline_set_paused(live_pipeline *p, int paused);
/* Asks for P2 + delta over the last P2 asked for (clamped to P1+1..1023); the stage thread
 * recreates the stage between frames. Per-path P2s ([stereo] p2 as a list) move by the same
 * delta, each clamped to its own P1 + 1..1023. Returns the P2 that will be used. */
int live_pipeline_change_p2(live_pipeline *p, int delta);
/* Asks for the other method (sgm <-> bm) over the last one asked for; the stage is recreated
 * between frames as for P2. Returns the method that will be used. */
stereo_method live_pipeline_toggle_method(live_pipeline *p);
/* Turns one post-filter (gpu/postfilter.h) on or off over the last settings asked for; the
 * stage thread sets them before its next submit (stereo_set_postfilter: the temporal filter
 * starts afresh). Speckle removal turns on with [stereo] speckle_size, or POSTFILTER_SPECKLE_ON
 * when that is 0. Returns the settings that will be used. */
typedef enum {
    LIVE_POST_SPECKLE,
    LIVE_POST_FILL,
    LIVE_POST_TEMPORAL,
    LIVE_POST_VOTE,
    LIVE_POST_INTERP
} live_post;
stereo_postfilter live_pipeline_toggle_post(live_pipeline *p, live_post which);

void live_pipeline_stop(live_pipeline *p);
/* Stops, then frees everything; closes the recorder (writing replay.ini). 0, or -1 with err
 * when closing the recording failed (not again after a write error: stats.error has that one).
 * NULL is a no-op. */
int live_pipeline_destroy(live_pipeline *p, char *err, size_t errlen);

#endif
