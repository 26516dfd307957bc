/* SPDX-License-Identifier: Apache-2.0 */
/* live_pipeline.c — capture thread, stage thread, and the hand-over to the display.
 *
 * DESIGN
 *
 * Threads. Three: the capture thread (reads the source), the stage thread (runs the stereo
 * stage), and the display — the caller's thread (SDL wants the main thread), which only calls
 * acquire/release and the setters; a fourth, the writer, when recording. Workers are started by
 * live_pipeline_start and stopped by a flag, a broadcast and a join (live_pipeline_stop);
 * nothing is cancelled.
 *
 * Memory. A fixed pool of POOL_SLOTS slots (+ REC_SLOTS when recording), each a set of frames,
 * one per view (the pair: two; [stereo] baselines: more), from stereo_frame_alloc (the stage's unified memory on CUDA), allocated at create. A slot is
 * always in exactly one place, and whoever holds it is the only one touching it — no copies
 * between threads (the one exception: a slot queued for the writer may at the same time be
 * published or read by the display; both only read it):
 *
 *   free --capture thread fills it--> ready (FIFO) --stage thread submits, waits--> published
 *     ^                                  |                                             |
 *     |        live source, queue full:  |                   display acquires the newest|
 *     +------- oldest dropped, counted <-+                   published one: reading     |
 *     +---------- replaced by a newer result (freed at release if the display reads it) +
 *
 *   - capture_slot: the capture thread is writing it (lock not held while reading the source).
 *   - ready: bounded (1 pair for live sources: the stage always gets the newest; 2 for files).
 *     Live sources (cameras, the paced scene) drop the oldest pair when it is full and count
 *     the drop; files wait for room instead and never drop.
 *   - the stage thread holds one slot from stereo_submit to stereo_wait; the frames are not
 *     touched by anyone in between (stereo.h's ownership protocol).
 *   - published: the newest result with its input pair. The stage's results are double-buffered
 *     (valid until the second submit after), so before submitting result m the stage thread
 *     waits while the display still reads result m-2 or older.
 *   - reading: the slot the display holds between acquire and release (it copies the images
 *     into its textures there, so it holds it briefly).
 *   - recording (--record): the stage thread hands each processed slot to the writer thread
 *     through a bounded FIFO of slot references (REC_SLOTS, queued or being written); the slot
 *     stays published as usual and goes back to the pool only once the writer is done with it
 *     too (rec_hold; rec_retired marks one the display and the stage have let go of). The
 *     pool has REC_SLOTS extra slots when recording, so pairs waiting for the writer never take
 *     the capture thread's. When the FIFO is full, a files source waits for the writer (it never
 *     drops); a live source drops the recording of that pair and counts a record drop. The
 *     first write error stops the run (stats.error, once); stop flushes the FIFO before the
 *     writer exits, so every pair queued is on disk when live_pipeline_stop returns.
 *
 * Who wakes whom. One mutex and one condition variable (CLOCK_MONOTONIC), always broadcast:
 *   capture -> stage: a pair is ready; the source ended or failed.
 *   stage -> capture: a slot is free / the ready queue has room; the frame limit was reached.
 *   stage -> writer:  a pair to record. writer -> stage, capture: room in the FIFO, a slot freed.
 *   stage -> display: a new result (broadcast, plus the wake callback: the SDL loop sleeps in
 *                     SDL_WaitEvent, so the callback posts an event).
 *   display -> stage: a slot was released (the double-buffer rule above may be waiting on it);
 *                     pause, colour map and P2 changes.
 *   stop: the flag + broadcast wakes both workers; a paced capture sleeps in a timed wait on the
 *         same condition, so it wakes at once too. Once both are joined, rec_closing tells the
 *         writer that nothing more comes: it writes what is queued and ends (a stage thread
 *         waiting for room in the FIFO is woken by the writer, which runs until then).
 *
 * Views. With more than two views the stage thread submits every view of a slot
 * (stereo_submit_views). When the source reports a view lost in a delivery (frame_pair.lost),
 * the frame cannot go to that stage: if only views >= 2 are lost, it goes to a second stage of
 * two views made at create with the same parameters (the reference and view 1: the same
 * disparity scale, the same colours), so depth stays on screen from the pair; if the reference
 * or view 1 is lost, nothing can be matched: the frame is given back and the display keeps the
 * last result while the pipeline waits for the view to come back. Each result says how many
 * views made it (live_frame.views_used); the first whole delivery goes back to all views.
 * The pair stage is made at create so that a loss never allocates mid-run (nor fails there):
 * it costs a second stage's buffers (CPU: stereo_cpu_bytes of a pair, about 5 bytes per pixel
 * and disparity). A new P2 or method recreates both.
 *
 * A new P2. The stage's parameters are fixed, so the stage is recreated between frames: the
 * request freezes the pool (the capture thread takes no more free slots), the stage thread
 * finishes what is queued, waits until nobody holds a slot (the writer included), drops the
 * published result, then creates the new stage, moves the pool's frames to it and thaws the
 * pool.
 *
 * Outputs. After each result the stage thread calls the result hook (live_pipeline_on_result:
 * the app's outputs, app/outputs/live_outputs.c), which copies what its outputs need and returns at
 * once; the outputs' own threads send it. They never hold a slot.
 *
 * Timing. The stage thread times each frame from submit to wait (stage_ms, a histogram) and
 * keeps the time the first and the latest result came out, for the throughput the summary
 * reports: (processed - 1) / (last - first), the start-up before the first result left out.
 */
#include "live_pipeline.h"
#include "postfilter.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_SLOTS 6
#define REC_SLOTS 4  /* pairs held for the writer (queued or being written) */
#define POOL_MAX (POOL_SLOTS + REC_SLOTS)
#define LIVE_QUEUE 1
#define FILES_QUEUE 2
#define READ_TIMEOUT_MS 100 /* a camera read returns this often, to notice the stop flag */

typedef struct {
    uint8_t *frame[FRAME_MAX_VIEWS];  /* one per view (left, right, ...): stereo_frame_alloc */
    frame_pair pair;
} slot;

struct live_pipeline {
    /* fixed after create (stage and params change only while the pool is frozen) */
    frame_source *src;
    frame_source_info info;
    const stereo_map *maps;
    stereo_params params;
    stereo_stage *stage;
    int views;                   /* images per slot: info.views (2: the pair) */
    stereo_stage *pair_stage;    /* views > 2: the reference and view 1 alone, while a view >= 2
                                    is lost (DESIGN: Views); NULL for the pair */
    pair_recorder *rec;
    long frame_limit;
    char backend[16], note[256];
    int sms;                     /* stereo_stage_sms */
    slot slots[POOL_MAX];
    int nslots;                  /* POOL_SLOTS, + REC_SLOTS when recording */
    void (*wake)(void *);
    void *wake_user;
    pthread_t capture_thread, stage_thread, writer_thread;
    int started, writer_started;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* everything below: under lock */
    int stop;
    int free_list[POOL_MAX], nfree;
    int ready[POOL_MAX], nready, queue_cap;
    int capture_slot;            /* -1: none */
    int source_done;             /* the source ended or failed */
    int stage_done;              /* no more results: limit, end of the files, or an error */
    int published;               /* -1: none */
    stereo_result published_result;
    uint64_t published_number;
    int published_p2;
    stereo_method published_method;
    colormap_range published_color;
    int published_views;         /* the views its stage matched */
    int reading;                 /* -1: none */
    uint64_t reading_number;
    int reading_retired;         /* the display's slot was replaced: free it at release */
    uint64_t shown_number;
    int paused, colormap, p2, p2_request, frozen;
    stereo_method method;        /* the method asked for last */
    int method_request;          /* 1: recreate the stage with `method` */
    int color_lo, color_hi;      /* live_pipeline_set_color_range; 0, 0: the search range */
    stereo_postfilter post;      /* the post-filters asked for last (live_pipeline_toggle_post) */
    int post_request;            /* 1: the stage thread sets `post` before its next submit */
    int speckle_on;              /* the speckle size the toggle turns on */
    /* recording: the writer's FIFO of slots, and which slots it still holds */
    int rec_queue[REC_SLOTS], nrec;
    int rec_held;                /* slots queued or being written */
    unsigned char rec_hold[POOL_MAX], rec_retired[POOL_MAX];
    int rec_closing;             /* no more pairs will come: write what is queued, then end */
    int rec_failed;              /* a write failed (stats.error has it): write nothing more */
    /* recording the disparity too (live_pipeline_record_disparity): each slot's copy, made by
     * the stage thread after its wait (the stage's result buffers turn over before the
     * writer gets there), and what the writer calls with it */
    int16_t *rec_disp[POOL_MAX];
    live_disparity_writer rec_disp_write;
    void *rec_disp_user;
    live_result_hook result_hook;  /* live_pipeline_on_result: the outputs (never blocks) */
    void *result_hook_user;
    live_stats stats;
    live_histogram stage_ms;
};

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Timed wait on the pipeline's condition until the monotonic time deadline_ns. */
static void wait_until(live_pipeline *p, int64_t deadline_ns)
{
    struct timespec ts = {deadline_ns / 1000000000LL, deadline_ns % 1000000000LL};
    pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

static void push_free(live_pipeline *p, int k)
{
    frame_source_release(p->src, &p->slots[k].pair); /* zero-copy cameras: frames go back */
    p->free_list[p->nfree++] = k;
}

/* The display and the published result have let go of slot k (under lock): back to the pool,
 * or, while the writer still holds it, once the writer is done. */
static void retire(live_pipeline *p, int k)
{
    if (p->rec_hold[k])
        p->rec_retired[k] = 1;
    else
        push_free(p, k);
}

static int pop_ready(live_pipeline *p)
{
    int k = p->ready[0];
    memmove(p->ready, p->ready + 1, (size_t)--p->nready * sizeof p->ready[0]);
    return k;
}

/* Stops the stage thread's work for good with a reason (under lock). */
static void fail_locked(live_pipeline *p, const char *msg)
{
    if (!p->stats.error[0])
        say(p->stats.error, sizeof p->stats.error, "%s", msg);
    p->stage_done = 1;
    pthread_cond_broadcast(&p->cond);
}

static void wake_display(live_pipeline *p)
{
    if (p->wake)
        p->wake(p->wake_user);
}

/* ---- pool ----------------------------------------------------------------------------------- */

static void pool_free(live_pipeline *p)
{
    frame_source_reclaim(p->src); /* zero-copy cameras stop writing into the frames first */
    for (int k = 0; k < p->nslots; k++)
        for (int i = 0; i < p->views; i++) {
            if (p->slots[k].frame[i])
                stereo_frame_free(p->stage, p->slots[k].frame[i]);
            p->slots[k].frame[i] = NULL;
        }
}

static int pool_alloc(live_pipeline *p, char *err, size_t errlen)
{
    for (int k = 0; k < p->nslots; k++)
        for (int i = 0; i < p->views; i++)
            if (stereo_frame_alloc(p->stage, p->info.frame_bytes, (void **)&p->slots[k].frame[i]) !=
                STEREO_OK) {
                say(err, errlen, "frames: %s", stereo_error(p->stage));
                return -1;
            }
    for (int k = 0; k < p->nslots; k++) /* zero-copy cameras capture into them */
        frame_source_lend(p->src, p->slots[k].frame, p->info.frame_bytes);
    return 0;
}

/* ---- capture thread ------------------------------------------------------------------------- */

static int capture_may_take(const live_pipeline *p)
{
    return !p->frozen && p->nfree > 0 && (p->info.live || p->nready < p->queue_cap);
}

static void *capture_main(void *arg)
{
    live_pipeline *p = arg;
    int64_t period = p->info.fps > 0 ? (int64_t)(1e9 / p->info.fps) : 0;
    int64_t next_tick = monotonic_ns();
    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* room to work: a free slot, and for files room in the queue (they never drop) */
        while (!p->stop && !p->stage_done && !capture_may_take(p))
            pthread_cond_wait(&p->cond, &p->lock);
        /* pacing (the scene, timed files): sleep until the next tick, woken early by stop */
        while (period && !p->stop && !p->stage_done && monotonic_ns() < next_tick)
            wait_until(p, next_tick);
        if (p->stop || p->stage_done)
            break;
        if (!capture_may_take(p))
            continue;
        int k = p->free_list[--p->nfree];
        p->capture_slot = k;
        pthread_mutex_unlock(&p->lock);

        slot *s = &p->slots[k];
        frame_status st = frame_source_read(p->src, s->frame, &s->pair, READ_TIMEOUT_MS);

        pthread_mutex_lock(&p->lock);
        p->capture_slot = -1;
        say(p->stats.message, sizeof p->stats.message, "%s", frame_source_message(p->src));
        /* read by the capture thread, which owns the source; others see this copy */
        frame_source_stats_line(p->src, p->stats.source_stats, sizeof p->stats.source_stats);
        p->stats.lost = st == FRAME_LOST;
        if (st == FRAME_OK) {
            p->stats.captured++;
            if (p->nready >= p->queue_cap) { /* only live sources get here */
                push_free(p, pop_ready(p));
                p->stats.dropped++;
            }
            p->ready[p->nready++] = k;
            if (period) {
                int64_t now = monotonic_ns();
                next_tick += period;
                if (next_tick < now - period) /* fell behind: no burst to catch up */
                    next_tick = now;
            }
        } else {
            push_free(p, k);
            if (st == FRAME_END || st == FRAME_ERROR) {
                if (st == FRAME_ERROR)
                    say(p->stats.error, sizeof p->stats.error, "%s", frame_source_message(p->src));
                p->source_done = 1;
                pthread_cond_broadcast(&p->cond);
                break;
            }
        }
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ---- stage thread --------------------------------------------------------------------------- */

/* The two-view stage beside a stage of more views (DESIGN: Views): the same parameters and
 * backend, the reference's and view 1's maps. */
static stereo_status create_pair_stage(const stereo_params *params, const stereo_map *maps,
                                       stereo_stage **out, char *err, size_t errlen)
{
    stereo_params pp = *params;
    pp.views = 2;
    return stereo_create(&pp, maps, out, err, errlen);
}

/* Recreates the stage with a new P2 while the pool is frozen and every slot is free (lock not
 * held). 0; 1 when the new stage could not be made (the old one stays); -1 when the frames
 * could not be moved (fatal). */
static int recreate_stage(live_pipeline *p, int p2, stereo_method method, char *err,
                          size_t errlen)
{
    stereo_params np = p->params;
    for (int r = 0; r < STEREO_MAX_PATHS; r++) /* per-path P2s follow the change */
        if (np.p2_path[r]) {
            int lo = (np.p1_path[r] ? np.p1_path[r] : np.p1) + 1, v = np.p2_path[r] + p2 - np.p2;
            np.p2_path[r] = v < lo ? lo : v > 1023 ? 1023 : v;
        }
    np.p2 = p2;
    np.method = method;
    np.backend = stereo_active_backend(p->stage);
    stereo_stage *ns, *nps = NULL;
    if (stereo_create(&np, p->maps, &ns, err, errlen) != STEREO_OK)
        return 1;
    if (p->pair_stage && create_pair_stage(&np, p->maps, &nps, err, errlen) != STEREO_OK) {
        stereo_destroy(ns);
        return 1;
    }
    pool_free(p);
    stereo_destroy(p->stage);
    stereo_destroy(p->pair_stage);
    p->stage = ns;
    p->pair_stage = nps;
    p->params = np;
    return pool_alloc(p, err, errlen);
}

/* Publishes slot k's result (under lock); the slot it replaces goes back to the pool unless the
 * display is reading it. */
static void publish(live_pipeline *p, int k, const stereo_result *r, colormap_range color)
{
    if (p->published >= 0) {
        if (p->published == p->reading)
            p->reading_retired = 1;
        else
            retire(p, p->published);
    }
    p->published = k;
    p->published_result = *r;
    p->published_number = p->stats.processed;
    p->published_p2 = p->params.p2;
    p->published_method = p->params.method;
    p->published_color = color;
}

/* Which stage matches slot k (lock not held; the slot is the stage thread's): the stage of all
 * views, the pair stage while a view >= 2 is lost, or NULL while the reference or view 1 is
 * (DESIGN: Views). */
static stereo_stage *stage_for(live_pipeline *p, const frame_pair *f)
{
    unsigned lost = f->lost & ((1u << p->views) - 1);
    if (!lost)
        return p->stage;
    if (lost & 3u || !p->pair_stage)
        return NULL;
    return p->pair_stage;
}

static void *stage_main(void *arg)
{
    live_pipeline *p = arg;
    char err[512];
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->stop || p->stage_done)
            break;
        /* a new P2: once nobody holds a slot (the queue processed first, the writer done) */
        if ((p->p2_request || p->method_request) && p->nready == 0 && p->capture_slot < 0 &&
            p->reading < 0 && p->rec_held == 0) {
            int p2 = p->p2_request ? p->p2_request : p->params.p2;
            stereo_method method = p->method;
            p->p2_request = p->method_request = 0;
            if (p->published >= 0) /* its result dies with the old stage */
                push_free(p, p->published);
            p->published = -1;
            pthread_mutex_unlock(&p->lock);
            int rc = recreate_stage(p, p2, method, err, sizeof err);
            pthread_mutex_lock(&p->lock);
            if (rc < 0) {
                fail_locked(p, err);
                break;
            }
            if (rc > 0) { /* keep the old stage, say why */
                fprintf(stderr, "stereo-live: P2 %d, method %s: %s\n", p2,
                        stereo_method_to_str(method), err);
                p->p2 = p->params.p2;
                p->method = p->params.method;
            }
            p->frozen = 0;
            pthread_cond_broadcast(&p->cond);
            continue;
        }
        if (p->paused || p->nready == 0) {
            if (p->source_done && p->nready == 0) { /* the files ran out (or the source failed) */
                p->stage_done = 1;
                pthread_cond_broadcast(&p->cond);
                break;
            }
            pthread_cond_wait(&p->cond, &p->lock);
            continue;
        }
        /* results are double-buffered: submitting result m ends result m-2 */
        uint64_t m = p->stats.processed + 1;
        if (p->reading >= 0 && p->reading_number + 2 <= m) {
            pthread_cond_wait(&p->cond, &p->lock);
            continue;
        }
        int k = pop_ready(p);
        slot *s = &p->slots[k];
        stereo_stage *stage = stage_for(p, &s->pair);
        p->stats.lost_views = s->pair.lost;
        if (!stage) { /* the reference or view 1 lost: wait for it, the last result stays up */
            p->stats.view_waits++;
            p->stats.views_used = 0;
            push_free(p, k);
            pthread_cond_broadcast(&p->cond);
            pthread_mutex_unlock(&p->lock);
            wake_display(p);
            pthread_mutex_lock(&p->lock);
            continue;
        }
        int colormap = p->colormap;
        colormap_range color = {p->color_lo, p->color_hi};
        stereo_postfilter post = p->post;
        int post_request = p->post_request;
        p->post_request = 0;
        pthread_cond_broadcast(&p->cond); /* room in the queue */
        pthread_mutex_unlock(&p->lock);
        if ((color.lo == 0 && color.hi == 0) ||
            stereo_set_color_range(stage, color.lo, color.hi) != STEREO_OK) {
            stereo_set_color_range(stage, 0, 0);
            color = colormap_fixed_range(p->params.min_disparity, p->params.num_disparities);
        }
        if (post_request) /* valid settings on a stage with nothing in flight: a failure can
                             only be a CUDA fault, which the submit below reports */
            for (int i = 0; i < 2; i++)
                if (i == 0 || p->pair_stage)
                    stereo_set_postfilter(i ? p->pair_stage : p->stage, &post);
        if (post_request)
            p->params.post = post; /* kept when the stage is recreated */

        /* the frames belong to the stage from submit to wait */
        int n = stage == p->stage ? p->views : 2;
        stereo_result r;
        int64_t t0 = monotonic_ns();
        stereo_status st = stereo_submit_views(stage, s->pair.view, n, colormap);
        if (st == STEREO_OK)
            st = stereo_wait(stage, &r);
        double ms = (double)(monotonic_ns() - t0) * 1e-6;
        if (st != STEREO_OK)
            say(err, sizeof err, "stage: %s", stereo_error(stage));
        int64_t done_ns = monotonic_ns();
        if (st == STEREO_OK && p->rec_disp_write) /* slot k is ours: the writer let go of it */
            memcpy(p->rec_disp[k], r.disparity,
                   (size_t)p->params.width * p->params.height * sizeof *r.disparity);
        if (st == STEREO_OK && p->result_hook) /* the outputs copy what they need, never wait */
            p->result_hook(p->result_hook_user, &r, s->pair.timestamp_ns, m, ms);

        pthread_mutex_lock(&p->lock);
        if (st != STEREO_OK) {
            push_free(p, k);
            fail_locked(p, err);
            break;
        }
        if (p->rec) { /* to the writer: files wait for room, live sources drop the recording */
            while (!p->info.live && p->rec_held >= REC_SLOTS && !p->rec_failed)
                pthread_cond_wait(&p->cond, &p->lock);
            if (p->rec_failed) { /* the writer stopped the run (stats.error) */
                push_free(p, k);
                break;
            }
            if (p->rec_held < REC_SLOTS) {
                p->rec_queue[p->nrec++] = k;
                p->rec_hold[k] = 1;
                p->rec_held++;
            } else {
                p->stats.record_drops++;
            }
        }
        p->stats.views_used = n;
        if (stage != p->stage)
            p->stats.pair_frames++;
        stereo_mi_info mi;
        if (stereo_mi_status(stage, &mi) == 0) {
            p->stats.mi = 1;
            p->stats.mi_warm_last = mi.warm;
            if (mi.warm) {
                p->stats.mi_warm_frames++;
                p->stats.mi_warm_ms_total += ms;
            } else {
                p->stats.mi_restarts++;
                p->stats.mi_restart_ms_total += ms;
                p->stats.mi_hierarchy_ms_total += mi.hierarchy_ms;
            }
        }
        p->stats.processed++;
        p->stats.stage_ms_total += ms;
        p->stats.stage_ms_last = ms;
        live_histogram_add(&p->stage_ms, ms);
        if (p->stats.processed == 1)
            p->stats.first_done_ns = done_ns;
        p->stats.last_done_ns = done_ns;
        publish(p, k, &r, color);
        p->published_views = n;
        if (p->frame_limit > 0 && (long)p->stats.processed >= p->frame_limit)
            p->stage_done = 1;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        wake_display(p);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    wake_display(p);
    return NULL;
}

/* ---- writer thread (recording) -------------------------------------------------------------- */

static void *writer_main(void *arg)
{
    live_pipeline *p = arg;
    char err[512];
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->nrec == 0 && !p->rec_closing)
            pthread_cond_wait(&p->cond, &p->lock);
        if (p->nrec == 0) /* closing, and everything queued is written */
            break;
        int k = p->rec_queue[0];
        memmove(p->rec_queue, p->rec_queue + 1, (size_t)--p->nrec * sizeof p->rec_queue[0]);
        int rc = 0;
        if (!p->rec_failed) { /* after an error the rest is only given back */
            pthread_mutex_unlock(&p->lock);
            rc = pair_recorder_write(p->rec, &p->slots[k].pair, err, sizeof err);
            if (rc == 0 && p->rec_disp_write) /* the number the recorder gave the pair */
                rc = p->rec_disp_write(p->rec_disp_user, pair_recorder_count(p->rec) - 1,
                                       p->rec_disp[k], err, sizeof err);
            pthread_mutex_lock(&p->lock);
            if (rc == 0)
                p->stats.recorded++;
        }
        p->rec_hold[k] = 0;
        p->rec_held--;
        if (p->rec_retired[k]) {
            p->rec_retired[k] = 0;
            push_free(p, k);
        }
        if (rc != 0) {
            p->rec_failed = 1;
            fail_locked(p, err);
        }
        pthread_cond_broadcast(&p->cond);
        if (rc != 0) {
            pthread_mutex_unlock(&p->lock);
            wake_display(p);
            pthread_mutex_lock(&p->lock);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ---- the interface -------------------------------------------------------------------------- */

int live_pipeline_create(const live_config *cfg, const stereo_params *params,
                         const stereo_map *maps, frame_source *src, live_pipeline **out,
                         char *err, size_t errlen)
{
    *out = NULL;
    live_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        say(err, errlen, "pipeline: out of memory");
        return -1;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
    p->src = src;
    frame_source_info_get(src, &p->info);
    p->views = p->info.views;
    if (p->views != (params->views > 2 ? params->views : 2)) {
        say(err, errlen, "pipeline: the source gives %d views, the stage matches %d", p->views,
            params->views > 2 ? params->views : 2);
        goto err;
    }
    p->maps = maps;
    p->params = *params;
    p->frame_limit = cfg->frames;
    p->colormap = cfg->colormap;
    p->p2 = params->p2;
    p->method = params->method;
    p->post = params->post;
    p->speckle_on = params->post.speckle_size ? params->post.speckle_size : POSTFILTER_SPECKLE_ON;
    p->queue_cap = p->info.live ? LIVE_QUEUE : FILES_QUEUE;
    p->capture_slot = p->published = p->reading = -1;
    p->nslots = POOL_SLOTS + (cfg->record_dir[0] ? REC_SLOTS : 0);
    p->stats.recording = cfg->record_dir[0] != 0;
    if (stereo_create(params, maps, &p->stage, err, errlen) != STEREO_OK)
        goto err;
    if (p->views > 2 && create_pair_stage(params, maps, &p->pair_stage, err, errlen) != STEREO_OK)
        goto err;
    say(p->backend, sizeof p->backend, "%s",
        stereo_backend_to_str(stereo_active_backend(p->stage)));
    say(p->note, sizeof p->note, "%s", stereo_backend_note(p->stage));
    p->sms = stereo_stage_sms(p->stage);
    if (pool_alloc(p, err, errlen) != 0)
        goto err;
    for (int k = p->nslots - 1; k >= 0; k--)
        push_free(p, k);
    if (cfg->record_dir[0] && pair_recorder_open(cfg, params, &p->rec, err, errlen) != 0)
        goto err;
    *out = p;
    return 0;
err:
    live_pipeline_destroy(p, NULL, 0);
    return -1;
}

int live_pipeline_record_disparity(live_pipeline *p, live_disparity_writer write, void *user,
                                   char *err, size_t errlen)
{
    if (!p->rec) {
        say(err, errlen, "recording the disparity needs a recording ([record] dir)");
        return -1;
    }
    size_t n = (size_t)p->params.width * p->params.height;
    for (int k = 0; k < p->nslots; k++)
        if (!p->rec_disp[k] && !(p->rec_disp[k] = malloc(n * sizeof *p->rec_disp[k]))) {
            say(err, errlen, "out of memory for the recorded disparities");
            return -1;
        }
    p->rec_disp_write = write;
    p->rec_disp_user = user;
    return 0;
}

void live_pipeline_on_result(live_pipeline *p, live_result_hook hook, void *user)
{
    p->result_hook = hook;
    p->result_hook_user = user;
}

int live_pipeline_start(live_pipeline *p, void (*wake)(void *), void *wake_user, char *err,
                        size_t errlen)
{
    p->wake = wake;
    p->wake_user = wake_user;
    /* SIGINT / SIGTERM go to the caller's thread: the workers block them */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int e = 0, capture_up = 0;
    if (p->rec && (e = pthread_create(&p->writer_thread, NULL, writer_main, p)) == 0)
        p->writer_started = 1;
    if (e == 0 && (e = pthread_create(&p->capture_thread, NULL, capture_main, p)) == 0)
        capture_up = 1;
    if (e == 0)
        e = pthread_create(&p->stage_thread, NULL, stage_main, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        pthread_mutex_lock(&p->lock);
        p->stop = p->rec_closing = 1;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        if (capture_up)
            pthread_join(p->capture_thread, NULL);
        if (p->writer_started)
            pthread_join(p->writer_thread, NULL);
        p->writer_started = 0;
        say(err, errlen, "pipeline: cannot start a thread: %s", strerror(e));
        return -1;
    }
    p->started = 1;
    return 0;
}

int live_pipeline_acquire(live_pipeline *p, live_frame *out)
{
    int got = 0;
    pthread_mutex_lock(&p->lock);
    if (p->reading < 0 && p->published >= 0 && p->published_number > p->shown_number) {
        const slot *s = &p->slots[p->published];
        p->reading = p->published;
        p->reading_number = p->shown_number = p->published_number;
        *out = (live_frame){p->published_result, s->pair.left, s->pair.right,
                            s->pair.timestamp_ns, s->pair.scene_t, p->published_number,
                            p->published_p2, p->published_method, p->published_color,
                            p->views, p->published_views, s->pair.lost, {0}, {0}};
        for (int i = 0; i < p->views; i++) {
            out->view_skew_ns[i] = s->pair.view_timestamp_ns[i] - s->pair.view_timestamp_ns[0];
            out->view_drops[i] = s->pair.view_drops[i];
        }
        got = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return got;
}

void live_pipeline_release(live_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->reading >= 0 && p->reading_retired)
        retire(p, p->reading);
    p->reading = -1;
    p->reading_retired = 0;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void live_pipeline_wait(live_pipeline *p, int timeout_ms)
{
    int64_t deadline = monotonic_ns() + (int64_t)timeout_ms * 1000000;
    pthread_mutex_lock(&p->lock);
    while (!p->stop && !p->stage_done && p->published_number <= p->shown_number &&
           monotonic_ns() < deadline)
        wait_until(p, deadline);
    pthread_mutex_unlock(&p->lock);
}

int live_pipeline_finished(live_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    int done = p->stage_done && (p->stats.error[0] || p->published_number <= p->shown_number);
    pthread_mutex_unlock(&p->lock);
    return done;
}

void live_pipeline_stats(live_pipeline *p, live_stats *out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->stats;
    pthread_mutex_unlock(&p->lock);
}

void live_pipeline_stage_times(live_pipeline *p, live_histogram *out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->stage_ms;
    pthread_mutex_unlock(&p->lock);
}

const char *live_pipeline_backend(const live_pipeline *p) { return p->backend; }
const char *live_pipeline_backend_note(const live_pipeline *p) { return p->note; }
int live_pipeline_sms(const live_pipeline *p) { return p->sms; }

void live_pipeline_set_colormap(live_pipeline *p, int colormap)
{
    pthread_mutex_lock(&p->lock);
    p->colormap = colormap;
    pthread_mutex_unlock(&p->lock);
}

void live_pipeline_set_color_range(live_pipeline *p, int lo, int hi)
{
    pthread_mutex_lock(&p->lock);
    p->color_lo = lo;
    p->color_hi = hi;
    pthread_mutex_unlock(&p->lock);
}

void live_pipeline_set_paused(live_pipeline *p, int paused)
{
    pthread_mutex_lock(&p->lock);
    p->paused = paused;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

int live_pipeline_change_p2(live_pipeline *p, int delta)
{
    pthread_mutex_lock(&p->lock);
    int lo = p->params.p1 + 1, p2 = p->p2 + delta;
    p2 = p2 < lo ? lo : p2 > 1023 ? 1023 : p2;
    if (p2 != p->p2) {
        p->p2 = p->p2_request = p2;
        p->frozen = 1;
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return p2;
}

stereo_method live_pipeline_toggle_method(live_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    p->method = p->method == STEREO_METHOD_SGM ? STEREO_METHOD_BM : STEREO_METHOD_SGM;
    p->method_request = 1;
    p->frozen = 1;
    pthread_cond_broadcast(&p->cond);
    stereo_method m = p->method;
    pthread_mutex_unlock(&p->lock);
    return m;
}

stereo_postfilter live_pipeline_toggle_post(live_pipeline *p, live_post which)
{
    pthread_mutex_lock(&p->lock);
    stereo_postfilter *f = &p->post;
    if (which == LIVE_POST_SPECKLE)
        f->speckle_size = f->speckle_size ? 0 : p->speckle_on;
    else if (which == LIVE_POST_FILL)
        f->fill = !f->fill;
    else if (which == LIVE_POST_VOTE)
        f->vote = !f->vote;
    else if (which == LIVE_POST_INTERP)
        f->interp = !f->interp;
    else
        f->temporal = !f->temporal;
    p->post_request = 1;
    stereo_postfilter now = *f;
    pthread_mutex_unlock(&p->lock);
    return now;
}

void live_pipeline_stop(live_pipeline *p)
{
    if (!p || !p->started)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->capture_thread, NULL);
    pthread_join(p->stage_thread, NULL);
    if (p->writer_started) { /* nothing more comes: it writes what is queued, then ends */
        pthread_mutex_lock(&p->lock);
        p->rec_closing = 1;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->writer_thread, NULL);
        p->writer_started = 0;
    }
    p->started = 0;
}

int live_pipeline_destroy(live_pipeline *p, char *err, size_t errlen)
{
    if (!p)
        return 0;
    live_pipeline_stop(p);
    int rc = 0;
    char e[512];
    /* after a write error (already the reason the run stopped) closing is not reported again */
    if (p->rec && pair_recorder_close(p->rec, e, sizeof e) != 0 && !p->rec_failed) {
        if (err)
            say(err, errlen, "%s", e);
        rc = -1;
    }
    if (p->stage) {
        pool_free(p);
        stereo_destroy(p->stage);
    }
    stereo_destroy(p->pair_stage);
    for (int k = 0; k < POOL_MAX; k++)
        free(p->rec_disp[k]);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return rc;
}
