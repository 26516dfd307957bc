/* SPDX-License-Identifier: Apache-2.0 */
/* live_outputs.c — the outputs' threads, their mailboxes and the buffer pool between them and
 * the stage thread.
 *
 * DESIGN
 *
 * Outputs never slow the stage. The stage thread calls live_outputs_push after each result; it
 * copies what the outputs need (the disparity, the rectified left view, the colour image: the
 * union of the backends' needs) into a free buffer of a pool allocated at create, then puts
 * the buffer into every output's mailbox. A mailbox holds one frame: a frame an output has not
 * taken yet is replaced by the newer one and counted as that output's drop. The stage thread
 * holds the one mutex only to move references, never while an output works.
 *
 * Threads. One per output, the only caller of its backend: it waits for its mailbox, takes the
 * buffer, sends it (a file, the ROS 2 bridge's ring, a GStreamer appsrc) without the lock,
 * then gives the buffer back. A slow disk, a dead network or a subscriber that stops reading
 * keeps only that thread busy: its frames are dropped and counted, the others' are not.
 * Stopped by a flag, a broadcast and a join; each sends the frame in its mailbox first.
 *
 * Memory. A buffer is referenced by the mailboxes holding it and the threads sending it (ref);
 * each output holds at most two (one in its mailbox, one being sent), so a pool of 2 * outputs
 * + 1 buffers always has a free one for the stage thread (the one it fills).
 *
 * Lost downstream. A frame a backend took can still be lost after it (a GStreamer queue that
 * leaks, frames queued when the stream ends): the backend counts those (lost) and they are
 * moved from sent to drops, so that sent + drops is every frame pushed.
 *
 * Failures. A write that fails is counted as a drop and a failure; the first one is reported
 * once (the report callback), and the output keeps trying with the next frames (a disk that
 * fills up and is freed again, a receiver that comes back).
 */
#include "live_outputs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_MAX (2 * OUTPUT_MAX + 1)

typedef struct {
    output_frame f;
    int16_t *disparity;
    uint8_t *rectified, *rgba, *confidence;
    int ref;
} out_buffer;

typedef struct {
    const output_backend *be;
    void *state;
    output_uri uri;
    pthread_t thread;
    int started;
    pthread_cond_t cond;
    out_buffer *mailbox;        /* under lock */
    uint64_t sent, drops, failures;
    char error[256];
    struct live_outputs *owner;
} output;

struct live_outputs {
    output out[OUTPUT_MAX];
    int n;
    unsigned needs;
    output_setup setup;
    int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC at create */
    void (*report)(const char *line);
    out_buffer pool[POOL_MAX];
    int npool;
    pthread_mutex_t lock;
    int stop;                   /* under lock */
};

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const output_backend *backend_for(output_kind k)
{
    switch (k) {
    case OUT_FILE:
        return &output_file_backend;
    case OUT_ROS2:
        return &output_ros2_backend;
    case OUT_RTP:
    case OUT_RTSP:
    case OUT_GST:
        return &output_gst_backend;
    case OUT_HTTP:
        return &output_web_backend;
    case OUT_DISPLAY:
        break;
    }
    return NULL;
}

/* An output's first failure, reported once (called without the lock) */
static void report_failure(live_outputs *lo, const output *o, const char *err)
{
    char line[OUTPUT_URI_MAX + 300];
    snprintf(line, sizeof line, "output %s: %s (its frames are dropped while it fails; the run "
             "goes on)", o->uri.text, err);
    if (lo->report)
        lo->report(line);
}

static void *output_main(void *arg)
{
    output *o = arg;
    live_outputs *lo = o->owner;
    char err[256];
    pthread_mutex_lock(&lo->lock);
    for (;;) {
        while (!lo->stop && !o->mailbox)
            pthread_cond_wait(&o->cond, &lo->lock);
        out_buffer *b = o->mailbox;
        if (!b) /* stopping, and nothing held */
            break;
        o->mailbox = NULL;
        pthread_mutex_unlock(&lo->lock);
        err[0] = '\0';
        int rc = o->be->write(o->state, &b->f, err, sizeof err);
        pthread_mutex_lock(&lo->lock);
        b->ref--;
        if (rc == 0) {
            o->sent++;
        } else {
            o->drops++;
            if (rc < 0 && o->failures++ == 0) {
                snprintf(o->error, sizeof o->error, "%s", err);
                pthread_mutex_unlock(&lo->lock);
                report_failure(lo, o, err);
                pthread_mutex_lock(&lo->lock);
            }
        }
    }
    pthread_mutex_unlock(&lo->lock);
    err[0] = '\0';
    if (o->be->finish && o->be->finish(o->state, err, sizeof err) < 0) {
        pthread_mutex_lock(&lo->lock);
        int first = o->failures++ == 0;
        if (first)
            snprintf(o->error, sizeof o->error, "%s", err);
        pthread_mutex_unlock(&lo->lock);
        if (first)
            report_failure(lo, o, err);
    }
    return NULL;
}

static int pool_alloc(live_outputs *lo)
{
    size_t n = (size_t)lo->setup.width * lo->setup.height;
    lo->npool = 2 * lo->n + 1;
    for (int i = 0; i < lo->npool; i++) {
        out_buffer *b = &lo->pool[i];
        if (((lo->needs & OUTPUT_NEEDS_DISPARITY) && !(b->disparity = malloc(n * 2))) ||
            ((lo->needs & OUTPUT_NEEDS_RECTIFIED) && !(b->rectified = malloc(n))) ||
            ((lo->needs & OUTPUT_NEEDS_COLOR) && !(b->rgba = malloc(n * 4))) ||
            ((lo->needs & OUTPUT_NEEDS_CONFIDENCE) && !(b->confidence = malloc(n))))
            return -1;
        b->f = (output_frame){0, 0, 0, lo->setup.width, lo->setup.height, b->disparity,
                              b->rectified, b->rgba, 0, 0, b->confidence};
    }
    return 0;
}

int live_outputs_create(const char *const *uris, int n, const output_setup *setup,
                        void (*report)(const char *line), live_outputs **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    live_outputs *lo = calloc(1, sizeof *lo);
    if (!lo) {
        snprintf(err, errlen, "outputs: out of memory");
        return -1;
    }
    pthread_mutex_init(&lo->lock, NULL);
    lo->setup = *setup;
    lo->setup.report = report;
    lo->report = report;
    lo->realtime_offset_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
    char why[512];
    for (int i = 0; i < n && lo->n < OUTPUT_MAX; i++) {
        output_uri u;
        if (!uris[i] || !uris[i][0])
            continue;
        if (output_uri_parse(uris[i], &u, why, sizeof why) != 0) { /* config.c checked it */
            snprintf(err, errlen, "--output %s", why);
            goto fail;
        }
        if (u.kind == OUT_DISPLAY)
            continue;
        /* the one rule for every output that asks for depth by name (file depth and .ply,
         * ros2 points or depth encoding): refused, not run without it */
        if (output_uri_needs_camera(&u) && !setup->have_cam) {
            snprintf(err, errlen, "--output '%s': depth and point clouds need the camera: "
                     "[calibration] maps with a calibration, or --focal PX --baseline M", u.text);
            goto fail;
        }
        output *o = &lo->out[lo->n];
        o->be = backend_for(u.kind);
        if (!o->be) {
            snprintf(err, errlen, "--output '%s': %s:// outputs are not built in this binary",
                     u.text, output_uri_kind_name(u.kind));
            goto fail;
        }
        o->uri = u;
        o->owner = lo;
        if (o->be->open(&u, &lo->setup, &o->state, why, sizeof why) != 0) {
            snprintf(err, errlen, "--output '%s': %s", u.text, why);
            goto fail;
        }
        if (u.kind == OUT_ROS2 && !setup->have_cam && report) { /* what does not go out */
            char line[OUTPUT_URI_MAX + 256];
            snprintf(line, sizeof line, "output %s: no camera: only the disparity and the left "
                     "image are published (depth, CameraInfo and points need [calibration] maps "
                     "with a calibration, or --focal PX --baseline M)", u.text);
            report(line);
        }
        pthread_cond_init(&o->cond, NULL);
        lo->needs |= o->be->needs;
        if (output_uri_needs_confidence(&u))
            lo->needs |= OUTPUT_NEEDS_CONFIDENCE;
        lo->n++;
    }
    if (pool_alloc(lo) != 0) {
        snprintf(err, errlen, "outputs: out of memory for %d frame buffers", lo->npool);
        goto fail;
    }
    for (int i = 0; i < lo->n; i++) {
        int e = pthread_create(&lo->out[i].thread, NULL, output_main, &lo->out[i]);
        if (e != 0) {
            snprintf(err, errlen, "outputs: cannot start a thread: %s", strerror(e));
            goto fail;
        }
        lo->out[i].started = 1;
    }
    *out = lo;
    return 0;
fail:
    live_outputs_destroy(lo);
    return -1;
}

int live_outputs_count(const live_outputs *o) { return o ? o->n : 0; }

void live_outputs_push(live_outputs *lo, const stereo_result *r, int64_t capture_ns,
                       uint64_t number, double stage_ms)
{
    if (!lo || lo->n == 0)
        return;
    /* only this thread takes free buffers, so the one found stays free while it is filled */
    pthread_mutex_lock(&lo->lock);
    out_buffer *b = NULL;
    for (int i = 0; i < lo->npool && !b; i++)
        if (lo->pool[i].ref == 0)
            b = &lo->pool[i];
    pthread_mutex_unlock(&lo->lock);
    if (!b) /* cannot happen (DESIGN: Memory) */
        return;
    int w = lo->setup.width, h = lo->setup.height;
    size_t n = (size_t)w * h;
    if (b->disparity)
        memcpy(b->disparity, r->disparity, n * sizeof *b->disparity);
    if (b->rectified)
        memcpy(b->rectified, r->rectified[0], n);
    for (int y = 0; b->rgba && y < h; y++)
        memcpy(b->rgba + (size_t)y * w * 4, r->rgba + (size_t)y * r->rgba_pitch, (size_t)w * 4);
    /* NULL when the stage made none (it is asked to: stereo_live.c), which the output refuses */
    if (b->confidence && r->confidence)
        memcpy(b->confidence, r->confidence, n);
    b->f.confidence = b->confidence && r->confidence ? b->confidence : NULL;
    b->f.number = number;
    b->f.capture_ns = capture_ns;
    b->f.stamp_ns = capture_ns + lo->realtime_offset_ns;
    b->f.stage_ms = stage_ms;
    b->f.done_ns = clock_ns(CLOCK_MONOTONIC);

    pthread_mutex_lock(&lo->lock);
    for (int i = 0; i < lo->n; i++) {
        output *o = &lo->out[i];
        if (o->mailbox) { /* not taken yet: the newer frame replaces it */
            o->mailbox->ref--;
            o->drops++;
        }
        o->mailbox = b;
        b->ref++;
        pthread_cond_signal(&o->cond);
    }
    pthread_mutex_unlock(&lo->lock);
}

void live_outputs_stats(live_outputs *lo, int i, live_output_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!lo || i < 0 || i >= lo->n)
        return;
    output *o = &lo->out[i];
    pthread_mutex_lock(&lo->lock);
    snprintf(s->uri, sizeof s->uri, "%s", o->uri.text);
    s->sent = o->sent;
    s->drops = o->drops;
    s->failures = o->failures;
    snprintf(s->error, sizeof s->error, "%s", o->error);
    pthread_mutex_unlock(&lo->lock);
    /* the backends' counters are their own atomics or read-only words */
    uint64_t lost = o->be->lost ? o->be->lost(o->state) : 0;
    if (lost > s->sent)
        lost = s->sent;
    s->sent -= lost;
    s->drops += lost;
    if (o->be->stats)
        o->be->stats(o->state, s->extra, sizeof s->extra);
    if (o->be->restarts)
        s->restarts = o->be->restarts(o->state);
}

void live_outputs_status(live_outputs *lo, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; lo && i < lo->n && used < len; i++) {
        live_output_stats s;
        live_outputs_stats(lo, i, &s);
        used += (size_t)snprintf(buf + used, len - used, "%s%s %llu sent %llu drops%s%s",
                                 i ? "; " : " | out ", s.uri, (unsigned long long)s.sent,
                                 (unsigned long long)s.drops, s.extra,
                                 s.failures ? " (failing)" : "");
    }
}

void live_outputs_stop(live_outputs *lo)
{
    if (!lo)
        return;
    pthread_mutex_lock(&lo->lock);
    lo->stop = 1;
    for (int i = 0; i < lo->n; i++)
        pthread_cond_signal(&lo->out[i].cond);
    pthread_mutex_unlock(&lo->lock);
    for (int i = 0; i < lo->n; i++)
        if (lo->out[i].started)
            pthread_join(lo->out[i].thread, NULL);
    for (int i = 0; i < lo->n; i++)
        lo->out[i].started = 0;
}

void live_outputs_destroy(live_outputs *lo)
{
    if (!lo)
        return;
    live_outputs_stop(lo);
    for (int i = 0; i < lo->n; i++) {
        lo->out[i].be->close(lo->out[i].state);
        pthread_cond_destroy(&lo->out[i].cond);
    }
    for (int i = 0; i < POOL_MAX; i++) {
        free(lo->pool[i].disparity);
        free(lo->pool[i].rectified);
        free(lo->pool[i].rgba);
        free(lo->pool[i].confidence);
    }
    pthread_mutex_destroy(&lo->lock);
    free(lo);
}
