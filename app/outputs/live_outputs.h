/* SPDX-License-Identifier: Apache-2.0 */
/* live_outputs.h — the live app's outputs ([output] uri / --output URI, hal/output_uri.h) other
 * than the window: files, ROS 2, network streams. live_outputs.c's DESIGN has the threads.
 *
 *   live_outputs_create   parses and opens every output (display:// is the app's: skipped)
 *   live_outputs_push     the stage thread hands over a result; never blocks, never waits
 *   live_outputs_stats    per output: sent, drops, failures, what the backend adds
 *   live_outputs_destroy  stops the threads (each sends what it holds), closes the outputs
 */
#ifndef STEREO_APP_LIVE_OUTPUTS_H
#define STEREO_APP_LIVE_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "output_backend.h"
#include "stereo.h"

typedef struct live_outputs live_outputs;

typedef struct {
    char uri[OUTPUT_URI_MAX];
    uint64_t sent;              /* frames the output took (and did not lose after: lost) */
    uint64_t drops;             /* frames it did not: it was busy, it failed, or it lost them
                                   downstream (a leaky queue, queued when it was stopped) */
    uint64_t failures;          /* of those, the writes that failed */
    uint64_t restarts;          /* restarts of its helper process (ros2: the bridge) */
    char extra[256];            /* the backend's own counters, ", ..." or "" */
    char error[256];            /* its first failure ("" when none) */
} live_output_stats;

/* Opens the outputs named by uris[0..n) ("" entries and display:// are skipped). report is
 * called (from the outputs' threads) with one line the first time an output fails. 0, or -1
 * with one line in err ("--output 'URI': why") and *out NULL. */
int live_outputs_create(const char *const *uris, int n, const output_setup *setup,
                        void (*report)(const char *line), live_outputs **out, char *err,
                        size_t errlen);

/* The number of outputs opened (0: nothing to push). */
int live_outputs_count(const live_outputs *o);

/* A result from the stage thread: copies what the outputs need into a buffer of the pool and
 * hands it to every output's mailbox, replacing (and counting as a drop) a frame the output
 * has not taken yet. Never blocks on an output. capture_ns: CLOCK_MONOTONIC of the left frame;
 * stage_ms: the stage's time for the result. */
void live_outputs_push(live_outputs *o, const stereo_result *r, int64_t capture_ns,
                       uint64_t number, double stage_ms);

/* Stats of output i (0 <= i < count). */
void live_outputs_stats(live_outputs *o, int i, live_output_stats *out);

/* " | out file://x/%06d.pfm 120 sent 0 drops; ros2://robot ..." for the status line ("" if none). */
void live_outputs_status(live_outputs *o, char *buf, size_t len);

/* Stops every output thread, each after sending the frame it holds (after the pipeline
 * stopped: nothing is pushed any more); the stats stay readable. Idempotent; NULL is a no-op. */
void live_outputs_stop(live_outputs *o);

/* Stops, then closes every output and frees everything. NULL is a no-op. */
void live_outputs_destroy(live_outputs *o);

#endif
