/* SPDX-License-Identifier: Apache-2.0 */
/* v4l2_pair.c — the CAPTURE_V4L2_PAIR backend: 2..CAPTURE_MAX_CAMERAS V4L2 cameras, grouped by
 * timestamp into sets (two: pairs), with reconnection of a camera that goes away.
 *
 * DESIGN
 *   One thread (the caller's) does everything inside backend_next: poll every camera, dequeue
 *   every ready frame, offer them to the pairing (frame_pairing.h) in timestamp order, requeue
 *   what the pairing drops, and reopen lost cameras when their retry time has come. No threads,
 *   no locks.
 *
 *   Ownership of a camera's buffers: with the driver (queued); waiting in the pairing slot (one at
 *   most per camera, ours); in the set ready for the caller (p->ready: one at most, ours: a set
 *   formed outside backend_next — a camera lost with partial_sets completes the others' set —
 *   waits there for the next call, and a newer set replaces it as stale); or in a delivered set
 *   (the caller's until capture_release). Only backend_release, the pairing's drops and stale
 *   sets give a buffer back to the driver. The same holds for
 *   the caller's buffers of a USERPTR camera (capture.h): the slot keeps their pointers
 *   (user[], index i = buffer i of every camera opened on that path), so a reopened camera gets
 *   them again; a release is honoured only for a frame the slot still records as delivered
 *   (buffer, data, timestamp and sequence match), so a pair released after
 *   capture_take_back_buffers cannot queue a buffer that has been given again since.
 *
 *   I/O mode per camera, decided at open and kept for every reopen: MMAP cameras start at open;
 *   USERPTR cameras wait (not streaming, not polled: poll on a queue that does not stream says
 *   POLLERR) until backend_give_buffers, and again after backend_take_back_buffers.
 *
 *   A camera is lost when poll reports POLLERR/POLLHUP or an ioctl fails (ENODEV when unplugged
 *   or unbound). Then: STREAMOFF, its waiting frame is flushed, and as soon as the caller has
 *   released every buffer of it that it still holds, its buffers are unmapped and its descriptor
 *   closed — the driver can only free the device node (and give the same /dev/videoN to the
 *   camera when it returns) once nobody holds it. A USERPTR camera is closed at once: the frames
 *   the caller holds are its own memory (closing only unpins them), and a caller such as the
 *   live app may hold its last frame until a new one comes, which would never happen. The slot
 *   keeps the records of those frames (held[]); the reopened camera queues every other buffer
 *   and each held one when it is released. Every retry_ms the path is opened again with the
 *   same configuration; on success it streams and pairs again.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "capture_backend.h"
#include "frame_pairing.h"
#include "v4l2_camera.h"

typedef struct {
    v4l2_camera *cam;   /* NULL while lost and closed */
    int lost;
    int waiting;        /* USERPTR: open, but no buffers given yet: not streaming, not polled */
    capture_io io;      /* MMAP or USERPTR: decided at the first open, kept for reopens */
    char io_why[200];   /* MMAP under AUTO / USERPTR: why */
    int said_io;        /* the mode was logged */
    size_t sizeimage;   /* the driver's frame size (the least a caller's buffer holds) */
    void *user[CAPTURE_MAX_BUFFERS]; /* USERPTR: the caller's buffers (nuser of user_bytes) */
    int nuser;
    size_t user_bytes;
    int64_t retry_at_ns; /* next reopen attempt */
    char reason[640];   /* why it is lost / why the last reopen failed */
    capture_frame held[V4L2_CAMERA_MAX_BUFFERS]; /* frames out of the driver's hands, by buffer */
} camera_slot;

#define NCAM CAPTURE_MAX_CAMERAS
_Static_assert(NCAM <= FRAME_PAIRING_MAX, "the pairing takes every camera");

/* A dequeued frame on its way to the pairing. */
typedef struct {
    int camera;
    capture_frame frame;
} arrival;

typedef struct {
    capture_config cfg;  /* defaults applied; device paths point into path[] */
    int n;               /* cameras */
    char path[NCAM][256];
    char name[NCAM][300]; /* "left camera /dev/video0", "camera 2 /dev/video4" (capture_camera_name) */
    camera_slot slot[NCAM];
    frame_pairing pairing;
    capture_set ready;   /* a set formed, not delivered yet (see DESIGN) */
    int have_ready;
    capture_stats stats;
    int loss_unreported; /* a loss that capture_next has not returned CAPTURE_LOST for yet */
    arrival arrivals[NCAM * V4L2_CAMERA_MAX_BUFFERS];
    char message[2048];
} v4l2_pair;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void update_message(v4l2_pair *p)
{
    size_t n = 0;
    p->message[0] = 0;
    for (int k = 0; k < p->n; k++) {
        int w = 0;
        if (n >= sizeof p->message)
            break;
        if (p->slot[k].lost)
            w = snprintf(p->message + n, sizeof p->message - n,
                         "%s%s: lost (%s), retrying every %g s", n ? "; " : "", p->name[k],
                         p->slot[k].reason, p->cfg.retry_ms / 1000.0);
        else if (p->slot[k].waiting)
            w = snprintf(p->message + n, sizeof p->message - n,
                         "%s%s: waiting for the caller's buffers (USERPTR)", n ? "; " : "",
                         p->name[k]);
        n += w > 0 ? (size_t)w : 0;
    }
}

/* Logs camera k's I/O mode once (only when the caller asked for AUTO or USERPTR). */
static void say_io(v4l2_pair *p, int k)
{
    camera_slot *s = &p->slot[k];
    if (s->said_io || p->cfg.io == CAPTURE_IO_MMAP)
        return;
    s->said_io = 1;
    if (s->io == CAPTURE_IO_USERPTR)
        capture_log(&p->cfg, "%s: zero-copy (USERPTR)", p->name[k]);
    else
        capture_log(&p->cfg, "%s: mmap + copy: %s", p->name[k], s->io_why);
}

static void lose_camera(v4l2_pair *p, int k, const char *reason);

/* A lost camera is closed once none of its buffers is out, a USERPTR camera at once (see
 * DESIGN). */
static void close_if_idle(v4l2_pair *p, int k)
{
    camera_slot *s = &p->slot[k];
    if (s->lost && s->cam &&
        (s->io == CAPTURE_IO_USERPTR || v4l2_camera_held(s->cam) == 0)) {
        v4l2_camera_close(s->cam);
        s->cam = NULL;
    }
}

/* Gives a held buffer back (to the driver, or only to the camera if it is stopped). A failed
 * QBUF means the camera is gone: it becomes lost. */
static void give_back(v4l2_pair *p, int k, int buffer)
{
    camera_slot *s = &p->slot[k];
    if (buffer < 0)
        return;
    capture_frame_clear(&s->held[buffer]); /* USERPTR, camera closed: queued at the reopen */
    if (!s->cam)
        return;
    if (v4l2_camera_requeue(s->cam, buffer) != 0) {
        char why[300];
        snprintf(why, sizeof why, "VIDIOC_QBUF: %s", strerror(errno));
        lose_camera(p, k, why);
    }
    close_if_idle(p, k);
}

/* Gives every frame of the ready set back (stale: a newer set replaces it; else unpaired). */
static void drop_ready(v4l2_pair *p, int stale)
{
    if (!p->have_ready)
        return;
    p->have_ready = 0;
    if (stale)
        p->stats.stale_pairs++;
    for (int k = 0; k < p->n; k++)
        if (p->ready.mask & (1u << k)) {
            if (stale)
                p->stats.stale[k]++;
            else
                p->stats.unpaired[k]++;
            give_back(p, k, p->ready.frame[k].buffer);
        }
    capture_set_clear(&p->ready, p->n);
}

/* What the pairing decided: its drops go back to the drivers, a set becomes the ready one (an
 * older ready set goes back as stale: the caller gets the newest). */
static void apply_result(v4l2_pair *p, const frame_pairing_result *r)
{
    for (int d = 0; d < r->dropped; d++) {
        p->stats.unpaired[r->drop[d].camera]++;
        give_back(p, r->drop[d].camera, r->drop[d].handle);
    }
    if (!r->paired)
        return;
    drop_ready(p, 1);
    capture_set *out = &p->ready;
    capture_set_clear(out, p->n);
    out->mask = r->mask;
    out->ref = r->ref;
    for (int k = 0; k < p->n; k++)
        if (r->mask & (1u << k)) {
            out->frame[k] = p->slot[k].held[r->handle[k]];
            out->skew_ns[k] = r->ts[k] - r->ts[r->ref];
        }
    p->have_ready = 1;
}

/* Stops camera k, gives back its waiting frame, closes it if the caller holds none of its
 * buffers, and schedules the first reopen. */
static void lose_camera(v4l2_pair *p, int k, const char *reason)
{
    camera_slot *s = &p->slot[k];
    if (s->lost)
        return;
    s->lost = 1;
    s->waiting = 0;
    snprintf(s->reason, sizeof s->reason, "%s", reason);
    s->retry_at_ns = now_ns() + (int64_t)p->cfg.retry_ms * 1000000LL;
    p->stats.losses[k]++;
    p->loss_unreported = 1;
    v4l2_camera_stop(s->cam);
    frame_pairing_result r;
    /* partial sets: the others form sets of their own meanwhile (which may complete one now) */
    if (p->cfg.partial_sets)
        frame_pairing_set_active(&p->pairing, k, 0, &r);
    else
        frame_pairing_flush(&p->pairing, k, &r);
    apply_result(p, &r);
    close_if_idle(p, k);
    update_message(p);
    capture_log(&p->cfg, "%s: lost (%s), retrying every %g s", p->name[k], reason,
                p->cfg.retry_ms / 1000.0);
}

/* Starts open camera k: MMAP at once; USERPTR into the caller's buffers if it has any (else it
 * waits for them), all but those the caller still holds from before a reconnect (queued when
 * released). On failure the camera is stopped and the caller's buffers are not queued. */
static capture_status start_streaming(v4l2_pair *p, int k, char *err, size_t errlen)
{
    camera_slot *s = &p->slot[k];
    capture_status st = CAPTURE_OK;
    s->waiting = 0;
    if (s->io == CAPTURE_IO_USERPTR) {
        if (s->nuser == 0) {
            s->waiting = 1;
            return CAPTURE_OK;
        }
        unsigned char held[CAPTURE_MAX_BUFFERS];
        for (int i = 0; i < s->nuser; i++)
            held[i] = s->held[i].buffer == i && s->held[i].data;
        st = v4l2_camera_set_user_buffers(s->cam, s->user, s->nuser, s->user_bytes, held, err,
                                          errlen);
    } else {
        for (int i = 0; i < V4L2_CAMERA_MAX_BUFFERS; i++)
            capture_frame_clear(&s->held[i]);
    }
    if (st == CAPTURE_OK)
        st = v4l2_camera_start(s->cam, err, errlen);
    if (st != CAPTURE_OK) {
        int e = errno; /* ENODEV: gone (the caller may look) */
        v4l2_camera_stop(s->cam);
        if (s->io == CAPTURE_IO_USERPTR)
            v4l2_camera_clear_user_buffers(s->cam);
        errno = e;
        return st;
    }
    say_io(p, k);
    return CAPTURE_OK;
}

/* Opens (in the mode decided at the first open) and starts camera k. */
static capture_status start_camera(v4l2_pair *p, int k, char *err, size_t errlen)
{
    camera_slot *s = &p->slot[k];
    capture_status st = v4l2_camera_open(&p->cfg, k, s->io, &s->cam, err, errlen);
    if (st != CAPTURE_OK)
        return st;
    if ((st = start_streaming(p, k, err, errlen)) != CAPTURE_OK) {
        if (st == CAPTURE_ERR_FORMAT && s->io == CAPTURE_IO_USERPTR) {
            /* v4l2_camera_start's "the driver refused ..." has no device in it */
            char why[400];
            snprintf(why, sizeof why, "%.399s", err);
            snprintf(err, errlen, "capture: %s: %s", p->name[k], why);
        }
        v4l2_camera_close(s->cam);
        s->cam = NULL;
        s->waiting = 0;
        return st;
    }
    return CAPTURE_OK;
}

static void retry_lost(v4l2_pair *p, int64_t now)
{
    for (int k = 0; k < p->n; k++) {
        camera_slot *s = &p->slot[k];
        if (!s->lost || s->cam || now < s->retry_at_ns)
            continue;
        char err[600];
        if (start_camera(p, k, err, sizeof err) == CAPTURE_OK) {
            s->lost = 0;
            s->reason[0] = 0;
            p->stats.reconnects[k]++;
            if (p->cfg.partial_sets) { /* in the sets again (the reference may move back) */
                frame_pairing_result r;
                frame_pairing_set_active(&p->pairing, k, 1, &r);
                apply_result(p, &r);
            }
            update_message(p);
            capture_log(&p->cfg, "%s: reconnected", p->name[k]);
            continue;
        }
        p->stats.retries[k]++;
        s->retry_at_ns = now + (int64_t)p->cfg.retry_ms * 1000000LL;
        /* "capture: left camera /dev/video0: <why>" -> "<why>", logged when it changes */
        const char *why = err;
        size_t plen = strlen("capture: ") + strlen(p->name[k]);
        if (strlen(err) > plen + 2 && err[plen] == ':')
            why = err + plen + 2;
        if (strcmp(why, s->reason) != 0) {
            snprintf(s->reason, sizeof s->reason, "%s", why);
            update_message(p);
            capture_log(&p->cfg, "%s: still lost (%s), retrying every %g s", p->name[k],
                        s->reason, p->cfg.retry_ms / 1000.0);
        }
    }
}

/* Dequeues every ready frame of camera k into a[]; makes the camera lost on an error. */
static int collect(v4l2_pair *p, int k, short revents, arrival *a, int n, int cap)
{
    camera_slot *s = &p->slot[k];
    int got = 0;
    char err[400];
    while (n < cap) {
        capture_frame f;
        int r = v4l2_camera_dequeue(s->cam, &f, &p->stats.errors[k], err,
                                    sizeof err);
        if (r == 0)
            break;
        if (r < 0) {
            lose_camera(p, k, strerror(errno));
            return n;
        }
        p->stats.frames[k]++;
        s->held[f.buffer] = f;
        a[n].camera = k;
        a[n].frame = f;
        n++, got++;
    }
    if (!got && (revents & (POLLERR | POLLHUP | POLLNVAL)))
        lose_camera(p, k, revents & POLLHUP ? "hung up" : "poll reports an error");
    return n;
}

static void sort_by_time(arrival *a, int n)
{
    for (int i = 1; i < n; i++) {
        arrival x = a[i];
        int j = i;
        for (; j > 0 && a[j - 1].frame.timestamp_ns > x.frame.timestamp_ns; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* ---- the backend -------------------------------------------------------------------------- */

static void backend_close(void *state);

static capture_status backend_open(const capture_config *cfg, void **state, char *err,
                                   size_t errlen)
{
    capture_status st;
    v4l2_pair *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "capture: out of memory");
        return CAPTURE_ERR_NOMEM;
    }
    p->cfg = *cfg;
    p->n = cfg->ncameras;
    capture_set_clear(&p->ready, p->n);
    for (int k = 0; k < p->n; k++) {
        if (strlen(cfg->device[k]) >= sizeof p->path[k]) {
            capture_camera_name(cfg, k, p->name[k], 40);
            snprintf(err, errlen, "capture: %s...: the path is too long", p->name[k]);
            st = CAPTURE_ERR_PARAM;
            goto err;
        }
        snprintf(p->path[k], sizeof p->path[k], "%s", cfg->device[k]);
        p->cfg.device[k] = p->path[k];
    }
    for (int k = 0; k < p->n; k++)
        capture_camera_name(&p->cfg, k, p->name[k], sizeof p->name[k]);
    /* the same device twice: by name, or by the node the names lead to (a by-id / by-path link
     * and its /dev/videoN) */
    struct stat sb[NCAM];
    int have_sb[NCAM];
    for (int k = 0; k < p->n; k++)
        have_sb[k] = stat(p->path[k], &sb[k]) == 0 && S_ISCHR(sb[k].st_mode);
    for (int k = 1; k < p->n; k++)
        for (int j = 0; j < k; j++) {
            int same_node = have_sb[j] && have_sb[k] && sb[j].st_rdev == sb[k].st_rdev;
            if (strcmp(p->path[j], p->path[k]) != 0 && !same_node)
                continue;
            if (p->n == 2 && strcmp(p->path[0], p->path[1]) == 0)
                snprintf(err, errlen, "capture: left and right camera are the same device %s",
                         p->path[0]);
            else if (strcmp(p->path[j], p->path[k]) == 0)
                snprintf(err, errlen, "capture: %s and %s are the same device: %s is given "
                         "twice", p->name[j], p->name[k], p->path[k]);
            else
                snprintf(err, errlen, "capture: %s and %s are the same device (character "
                         "device %u:%u): %s leads to the node of %s", p->name[j], p->name[k],
                         major(sb[k].st_rdev), minor(sb[k].st_rdev), p->path[k], p->path[j]);
            st = CAPTURE_ERR_PARAM;
            goto err;
        }
    frame_pairing_init_n(&p->pairing, p->n, p->cfg.max_skew_ns);
    p->stats.max_skew_ns = p->cfg.max_skew_ns;
    p->stats.last_ref = -1;
    /* All opened before any starts, so their streams begin close together (USERPTR cameras
     * start when they get the caller's buffers). */
    for (int k = 0; k < p->n; k++) {
        camera_slot *s = &p->slot[k];
        for (int i = 0; i < V4L2_CAMERA_MAX_BUFFERS; i++)
            capture_frame_clear(&s->held[i]);
        if ((st = v4l2_camera_open(&p->cfg, k, p->cfg.io, &s->cam, err, errlen)) != CAPTURE_OK)
            goto err;
        s->io = v4l2_camera_io(s->cam);
        s->sizeimage = v4l2_camera_sizeimage(s->cam);
        snprintf(s->io_why, sizeof s->io_why, "%s", v4l2_camera_io_why(s->cam));
    }
    for (int k = 0; k < p->n; k++) {
        if ((st = start_streaming(p, k, err, errlen)) != CAPTURE_OK)
            goto err;
    }
    update_message(p);
    *state = p;
    return CAPTURE_OK;
err:
    backend_close(p);
    return st;
}

/* Hands the ready set to the caller and counts it. */
static void deliver(v4l2_pair *p, capture_set *out)
{
    *out = p->ready;
    p->have_ready = 0;
    capture_set_clear(&p->ready, p->n);
    unsigned all = (1u << p->n) - 1;
    p->stats.pairs++;
    if (out->mask != all)
        p->stats.partial_sets++;
    p->stats.last_mask = out->mask;
    p->stats.last_ref = out->ref;
    for (int k = 0; k < p->n; k++)
        if (out->mask & (1u << k))
            p->stats.cam_skew_ns[k] = out->skew_ns[k];
    if ((out->mask & 3) == 3)
        p->stats.skew_ns = out->frame[1].timestamp_ns - out->frame[0].timestamp_ns;
}

static capture_status backend_next(void *state, capture_set *out, int timeout_ms)
{
    v4l2_pair *p = state;
    arrival *a = p->arrivals;
    int cap = (int)(sizeof p->arrivals / sizeof p->arrivals[0]);
    int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000LL;
    for (;;) {
        int64_t now = now_ns();
        retry_lost(p, now);
        struct pollfd pfd[NCAM];
        int who[NCAM], n = 0;
        int64_t wake = p->have_ready ? now : deadline; /* a ready set: only what is there now */
        for (int k = 0; k < p->n; k++) {
            camera_slot *s = &p->slot[k];
            if (!s->lost && !s->waiting) {
                pfd[n] = (struct pollfd){.fd = v4l2_camera_fd(s->cam), .events = POLLIN};
                who[n++] = k;
            } else if (!s->cam && s->retry_at_ns < wake)
                wake = s->retry_at_ns;
        }
        int64_t wait_ms = wake > now ? (wake - now + 999999) / 1000000 : 0;
        if (poll(pfd, (nfds_t)n, (int)wait_ms) < 0 && errno != EINTR) {
            snprintf(p->message, sizeof p->message, "capture: poll: %s", strerror(errno));
            return CAPTURE_ERR_IO;
        }
        int na = 0;
        for (int i = 0; i < n; i++)
            if (pfd[i].revents)
                na = collect(p, who[i], pfd[i].revents, a, na, cap);
        sort_by_time(a, na);
        for (int i = 0; i < na; i++) {
            int k = a[i].camera;
            if (p->slot[k].lost) { /* lost in this round after its frames were collected */
                give_back(p, k, a[i].frame.buffer);
                p->stats.unpaired[k]++;
                continue;
            }
            frame_pairing_result r;
            frame_pairing_offer(&p->pairing, k, a[i].frame.buffer, a[i].frame.timestamp_ns, &r);
            apply_result(p, &r); /* a newer set replaces a ready one: the caller gets the newest */
        }
        if (p->have_ready) {
            deliver(p, out);
            return CAPTURE_OK;
        }
        if (p->loss_unreported) {
            p->loss_unreported = 0;
            return CAPTURE_LOST;
        }
        if (now_ns() >= deadline) {
            for (int k = 0; k < p->n; k++)
                if (p->slot[k].lost)
                    return CAPTURE_LOST;
            return CAPTURE_TIMEOUT;
        }
    }
}

/* Gives back a frame the caller releases, if the slot still records it as delivered (see DESIGN:
 * a pair from before capture_take_back_buffers is not). */
static void release_frame(v4l2_pair *p, int k, const capture_frame *f)
{
    if (f->buffer < 0 || f->buffer >= V4L2_CAMERA_MAX_BUFFERS)
        return;
    const capture_frame *h = &p->slot[k].held[f->buffer];
    if (h->buffer != f->buffer || h->data != f->data || h->timestamp_ns != f->timestamp_ns ||
        h->sequence != f->sequence)
        return;
    give_back(p, k, f->buffer);
}

static void backend_release(void *state, capture_set *set)
{
    v4l2_pair *p = state;
    for (int k = 0; k < p->n && k < CAPTURE_MAX_CAMERAS; k++)
        release_frame(p, k, &set->frame[k]);
    capture_set_clear(set, p->n);
}

static void backend_stats(const void *state, capture_stats *out)
{
    const v4l2_pair *p = state;
    *out = p->stats;
    out->ncameras = p->n;
    out->up = 0;
    for (int k = 0; k < p->n; k++) {
        const camera_slot *s = &p->slot[k];
        out->lost[k] = s->lost;
        out->up |= (unsigned)!s->lost << k;
        out->buffers[k] = s->cam && !s->lost ? v4l2_camera_buffers(s->cam) : 0;
        out->fps[k] = s->cam && !s->lost ? v4l2_camera_fps(s->cam) : 0;
    }
}

static const char *backend_message(const void *state)
{
    const v4l2_pair *p = state;
    return p->message;
}

/* ---- USERPTR ------------------------------------------------------------------------------ */

static capture_io backend_io_mode(const void *state, int k, const char **why)
{
    const v4l2_pair *p = state;
    if (why)
        *why = p->slot[k].io_why;
    return p->slot[k].io;
}

static size_t backend_buffer_bytes(const void *state, int k)
{
    const v4l2_pair *p = state;
    return p->slot[k].sizeimage;
}

/* A waiting USERPTR camera k becomes an MMAP camera for good, and starts (AUTO fallback). */
static void switch_to_mmap(v4l2_pair *p, int k, const char *why)
{
    camera_slot *s = &p->slot[k];
    char err[600];
    s->io = CAPTURE_IO_MMAP;
    s->nuser = 0;
    s->waiting = 0;
    snprintf(s->io_why, sizeof s->io_why, "%s", why);
    say_io(p, k);
    if (s->cam && !s->lost &&
        (v4l2_camera_use_mmap(s->cam, why, err, sizeof err) != CAPTURE_OK ||
         start_streaming(p, k, err, sizeof err) != CAPTURE_OK))
        lose_camera(p, k, err);
    update_message(p);
}

static capture_status backend_give_buffers(void *state, int k, void *const *buffers, int n,
                                           size_t bytes, char *err, size_t errlen)
{
    v4l2_pair *p = state;
    camera_slot *s = &p->slot[k];
    if (s->io == CAPTURE_IO_MMAP)
        return CAPTURE_OK; /* it streams into the driver's buffers */
    if (s->nuser) {
        snprintf(err, errlen, "capture: %s: has buffers already (take them back first)",
                 p->name[k]);
        return CAPTURE_ERR_PARAM;
    }
    if (n == 0) {
        if (p->cfg.io == CAPTURE_IO_USERPTR) {
            snprintf(err, errlen, "capture: %s: USERPTR needs the caller's buffers",
                     p->name[k]);
            return CAPTURE_ERR_PARAM;
        }
        switch_to_mmap(p, k, "no buffers were given");
        return CAPTURE_OK;
    }
    if (n < CAPTURE_MIN_BUFFERS || n > CAPTURE_MAX_BUFFERS || bytes < s->sizeimage) {
        snprintf(err, errlen, "capture: %s: %d buffers of %zu bytes: need %d..%d of at "
                 "least %zu bytes (the driver's frame size)", p->name[k], n, bytes,
                 CAPTURE_MIN_BUFFERS, CAPTURE_MAX_BUFFERS, s->sizeimage);
        return CAPTURE_ERR_PARAM;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            if (!buffers[i] || (j < i && buffers[j] == buffers[i])) {
                snprintf(err, errlen, "capture: %s: buffer %d is %s", p->name[k], i,
                         buffers[i] ? "given twice" : "NULL");
                return CAPTURE_ERR_PARAM;
            }
    memcpy(s->user, buffers, (size_t)n * sizeof *buffers);
    s->nuser = n;
    s->user_bytes = bytes;
    if (!s->cam || s->lost)
        return CAPTURE_OK; /* queued when the camera is reopened */
    capture_status st = start_streaming(p, k, err, errlen);
    if (st == CAPTURE_OK) {
        update_message(p);
        return CAPTURE_OK;
    }
    s->nuser = 0; /* the driver holds none of them (start_streaming cleared them) */
    if (st == CAPTURE_ERR_FORMAT) { /* the driver refused the memory */
        char why[400];
        snprintf(why, sizeof why, "%s", err);
        if (p->cfg.io == CAPTURE_IO_AUTO) {
            switch_to_mmap(p, k, why);
            return CAPTURE_OK;
        }
        snprintf(err, errlen, "capture: %s: cannot capture into the caller's buffers "
                 "(USERPTR): %s", p->name[k], why);
        s->waiting = 1;
        return st;
    }
    if (errno == ENODEV || errno == ENXIO) { /* gone meanwhile: it gets them at the reopen */
        s->nuser = n;
        lose_camera(p, k, strerror(errno));
        return CAPTURE_OK;
    }
    s->waiting = 1;
    return st;
}

static void backend_take_back_buffers(void *state)
{
    v4l2_pair *p = state;
    drop_ready(p, 0); /* its frames go back (USERPTR ones are taken back below) */
    for (int k = 0; k < p->n; k++) {
        camera_slot *s = &p->slot[k];
        if (s->io != CAPTURE_IO_USERPTR || s->nuser == 0)
            continue;
        s->nuser = 0;
        frame_pairing_result r;
        frame_pairing_flush(&p->pairing, k, &r); /* not queued again: taken back below */
        p->stats.unpaired[k] += (uint64_t)r.dropped;
        for (int i = 0; i < V4L2_CAMERA_MAX_BUFFERS; i++)
            capture_frame_clear(&s->held[i]);
        if (s->cam) {
            v4l2_camera_clear_user_buffers(s->cam); /* STREAMOFF, REQBUFS 0 */
            if (!s->lost)
                s->waiting = 1;
            close_if_idle(p, k);
        }
    }
    update_message(p);
}

static void backend_close(void *state)
{
    v4l2_pair *p = state;
    if (!p)
        return;
    for (int k = 0; k < NCAM; k++)
        v4l2_camera_stop(p->slot[k].cam);
    for (int k = 0; k < NCAM; k++)
        v4l2_camera_close(p->slot[k].cam);
    free(p);
}

const capture_ops capture_v4l2_pair_ops = {
    .name = "v4l2-pair",
    .open = backend_open,
    .next = backend_next,
    .release = backend_release,
    .stats = backend_stats,
    .message = backend_message,
    .close = backend_close,
    .io_mode = backend_io_mode,
    .buffer_bytes = backend_buffer_bytes,
    .give_buffers = backend_give_buffers,
    .take_back_buffers = backend_take_back_buffers,
};
