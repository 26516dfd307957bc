/* SPDX-License-Identifier: Apache-2.0 */
/* live_summary.h — stereo-live's figures: the rates over the last second (the overlay's and the
 * status line's), the headless loop that prints the status line once a second, and the summary
 * at the end with its --stats-json file (tools/gpu-check.sh reads it). live_summary.c.
 */
#ifndef STEREO_APP_LIVE_SUMMARY_H
#define STEREO_APP_LIVE_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "live_app.h"

/* ---- statistics over the last second ------------------------------------------------------- */

/* The rates of the period since the last call, from the pipeline's counters s at time now. */
void rates_update(rates *r, const live_stats *s, int64_t now);
/* A result consumed at now that was captured at capture_ns: its latency. */
void rates_latency(rates *r, int64_t capture_ns, int64_t now);

/* The views' state for the overlay and the log, two lines (0 for the pair: nothing to say):
 * what matched the frame shown ("3 views 1,-1 sides", or the fallback while a view is lost,
 * or waiting while the reference or view 1 is), and each camera's skew to the reference and
 * drops, as the source reported them. Returns 1 when a view is lost (shown in yellow). */
int views_lines(const app *a, const live_stats *s, char *l1, char *l2, size_t len);
/* Cost mi: "MI: warm, 3 restarts" (the latest frame, and the hierarchy runs so far), else "". */
void mi_counts(const live_stats *s, char *buf, size_t len);
/* Said once a run, when the stage has not kept up with the source for two periods in a row. */
void keep_up_check(app *a);

/* ---- headless ---------------------------------------------------------------------------- */

/* Takes every result and prints the status line once a second, until the signal or the end of
 * the pipeline. */
void run_headless(app *a);

/* ---- the summary at the end ------------------------------------------------------------------ */

typedef struct {
    live_stats s;
    live_histogram stage;
    double wall_s;      /* pipeline start -> the display loop ended */
    double fps;         /* results per second, from the first result to the last */
} summary;

void summary_get(app *a, int64_t t_start, int64_t t_end, summary *m);
#if !LIVE_LIBC_ONLY
/* One line for each output that failed every frame; the count of them. */
int report_failed_outputs(const app *a);
#endif
void summary_print(const app *a, const summary *m);
/* --stats-json, written beside and renamed into place: 0, or -1 after printing the reason. */
int summary_write_json(const app *a, const summary *m, const char *path);

#endif
