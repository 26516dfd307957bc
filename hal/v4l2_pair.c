/* v4l2_pair.c — the CAPTURE_V4L2_PAIR backend: two V4L2 cameras, paired by timestamp, with
 * reconnection of a camera that goes away.
 *
 * DESIGN
 *   One thread (the caller's) does everything inside backend_next: poll both cameras, dequeue
 *   every ready frame, offer them to the pairing (frame_pairing.h) in timestamp order, requeue
 *   what the pairing drops, and reopen lost cameras when their retry time has come. No threads,
 *   no locks.
 *
 *   Ownership of a camera's buffers: with the driver (queued); waiting in the pairing slot (one at
 *   most per camera, ours); or in a delivered pair (the caller's until capture_release). Only
 *   backend_release and the pairing's drops give a buffer back to the driver.
 *
 *   A camera is lost when poll reports POLLERR/POLLHUP or an ioctl fails (ENODEV when unplugged
 *   or unbound). Then: STREAMOFF, its waiting frame is flushed, and as soon as the caller has
 *   released every buffer of it that it still holds, its buffers are unmapped and its descriptor
 *   closed — the driver can only free the device node (and give the same /dev/videoN to the
 *   camera when it returns) once nobody holds it. Every retry_ms the path is opened again with
 *   the same configuration; on success it streams and pairs again.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture_backend.h"
#include "frame_pairing.h"
#include "v4l2_camera.h"

typedef struct {
    v4l2_camera *cam;   /* NULL while lost and closed */
    int lost;
    int64_t retry_at_ns; /* next reopen attempt */
    char reason[640];   /* why it is lost / why the last reopen failed */
    capture_frame held[V4L2_CAMERA_MAX_BUFFERS]; /* frames out of the driver's hands, by buffer */
} camera_slot;

typedef struct {
    capture_config cfg;  /* defaults applied; device paths point into path[] */
    char path[2][256];
    camera_slot slot[2];
    frame_pairing pairing;
    capture_stats stats;
    int loss_unreported; /* a loss that capture_next has not returned CAPTURE_LOST for yet */
    char message[700];
} v4l2_pair;

/* A dequeued frame on its way to the pairing. */
typedef struct {
    int camera;
    capture_frame frame;
} arrival;

static const char *const role[2] = {"left", "right"};

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
    for (int k = 0; k < 2; k++)
        if (p->slot[k].lost && n < sizeof p->message) {
            int w = snprintf(p->message + n, sizeof p->message - n,
                             "%s%s camera %s: lost (%s), retrying every %g s", n ? "; " : "",
                             role[k], p->path[k], p->slot[k].reason, p->cfg.retry_ms / 1000.0);
            n += w > 0 ? (size_t)w : 0;
        }
}

static void lose_camera(v4l2_pair *p, int k, const char *reason);

/* A lost camera is closed once none of its buffers is out (see DESIGN). */
static void close_if_idle(v4l2_pair *p, int k)
{
    camera_slot *s = &p->slot[k];
    if (s->lost && s->cam && v4l2_camera_held(s->cam) == 0) {
        v4l2_camera_close(s->cam);
        s->cam = NULL;
    }
}

/* Gives a held buffer back (to the driver, or only to the camera if it is stopped). A failed
 * QBUF means the camera is gone: it becomes lost. */
static void give_back(v4l2_pair *p, int k, int buffer)
{
    camera_slot *s = &p->slot[k];
    if (!s->cam || buffer < 0)
        return;
    capture_frame_clear(&s->held[buffer]);
    if (v4l2_camera_requeue(s->cam, buffer) != 0) {
        char why[300];
        snprintf(why, sizeof why, "VIDIOC_QBUF: %s", strerror(errno));
        lose_camera(p, k, why);
    }
    close_if_idle(p, k);
}

static void apply_drop(v4l2_pair *p, const frame_pairing_result *r)
{
    if (!r->dropped)
        return;
    p->stats.unpaired[r->drop_camera]++;
    give_back(p, r->drop_camera, r->drop_handle);
}

/* Stops camera k, gives back its waiting frame, closes it if the caller holds none of its
 * buffers, and schedules the first reopen. */
static void lose_camera(v4l2_pair *p, int k, const char *reason)
{
    camera_slot *s = &p->slot[k];
    if (s->lost)
        return;
    s->lost = 1;
    snprintf(s->reason, sizeof s->reason, "%s", reason);
    s->retry_at_ns = now_ns() + (int64_t)p->cfg.retry_ms * 1000000LL;
    p->stats.losses[k]++;
    p->loss_unreported = 1;
    v4l2_camera_stop(s->cam);
    frame_pairing_result r;
    frame_pairing_flush(&p->pairing, k, &r);
    apply_drop(p, &r);
    close_if_idle(p, k);
    update_message(p);
    capture_log(&p->cfg, "%s camera %s: lost (%s), retrying every %g s", role[k], p->path[k],
                reason, p->cfg.retry_ms / 1000.0);
}

/* Opens and starts camera k. */
static capture_status start_camera(v4l2_pair *p, int k, char *err, size_t errlen)
{
    camera_slot *s = &p->slot[k];
    capture_status st = v4l2_camera_open(&p->cfg, k, &s->cam, err, errlen);
    if (st != CAPTURE_OK)
        return st;
    if ((st = v4l2_camera_start(s->cam, err, errlen)) != CAPTURE_OK) {
        v4l2_camera_stop(s->cam);
        v4l2_camera_close(s->cam);
        s->cam = NULL;
        return st;
    }
    for (int i = 0; i < V4L2_CAMERA_MAX_BUFFERS; i++)
        capture_frame_clear(&s->held[i]);
    return CAPTURE_OK;
}

static void retry_lost(v4l2_pair *p, int64_t now)
{
    for (int k = 0; k < 2; k++) {
        camera_slot *s = &p->slot[k];
        if (!s->lost || s->cam || now < s->retry_at_ns)
            continue;
        char err[600];
        if (start_camera(p, k, err, sizeof err) == CAPTURE_OK) {
            s->lost = 0;
            s->reason[0] = 0;
            p->stats.reconnects[k]++;
            update_message(p);
            capture_log(&p->cfg, "%s camera %s: reconnected", role[k], p->path[k]);
            continue;
        }
        p->stats.retries[k]++;
        s->retry_at_ns = now + (int64_t)p->cfg.retry_ms * 1000000LL;
        /* "capture: left camera /dev/video0: <why>" -> "<why>", logged when it changes */
        const char *why = err;
        size_t plen = strlen("capture: ") + strlen(role[k]) + strlen(" camera ") + strlen(p->path[k]);
        if (strlen(err) > plen + 2 && err[plen] == ':')
            why = err + plen + 2;
        if (strcmp(why, s->reason) != 0) {
            snprintf(s->reason, sizeof s->reason, "%s", why);
            update_message(p);
            capture_log(&p->cfg, "%s camera %s: still lost (%s), retrying every %g s", role[k],
                        p->path[k], s->reason, p->cfg.retry_ms / 1000.0);
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
    for (int k = 0; k < 2; k++) {
        if (strlen(cfg->device[k]) >= sizeof p->path[k]) {
            snprintf(err, errlen, "capture: %s camera path is too long: %.60s...", role[k],
                     cfg->device[k]);
            st = CAPTURE_ERR_PARAM;
            goto err;
        }
        snprintf(p->path[k], sizeof p->path[k], "%s", cfg->device[k]);
        p->cfg.device[k] = p->path[k];
    }
    if (strcmp(p->path[0], p->path[1]) == 0) {
        snprintf(err, errlen, "capture: left and right camera are the same device %s", p->path[0]);
        st = CAPTURE_ERR_PARAM;
        goto err;
    }
    frame_pairing_init(&p->pairing, p->cfg.max_skew_ns);
    p->stats.max_skew_ns = p->cfg.max_skew_ns;
    /* Both opened before either starts, so their streams begin close together. */
    for (int k = 0; k < 2; k++)
        if ((st = v4l2_camera_open(&p->cfg, k, &p->slot[k].cam, err, errlen)) != CAPTURE_OK)
            goto err;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < V4L2_CAMERA_MAX_BUFFERS; i++)
            capture_frame_clear(&p->slot[k].held[i]);
        if ((st = v4l2_camera_start(p->slot[k].cam, err, errlen)) != CAPTURE_OK)
            goto err;
    }
    *state = p;
    return CAPTURE_OK;
err:
    backend_close(p);
    return st;
}

static capture_status backend_next(void *state, capture_pair *out, int timeout_ms)
{
    v4l2_pair *p = state;
    arrival a[2 * V4L2_CAMERA_MAX_BUFFERS];
    int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000LL;
    int have = 0;
    for (;;) {
        int64_t now = now_ns();
        retry_lost(p, now);
        struct pollfd pfd[2];
        int who[2], n = 0;
        int64_t wake = deadline;
        for (int k = 0; k < 2; k++) {
            camera_slot *s = &p->slot[k];
            if (!s->lost) {
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
                na = collect(p, who[i], pfd[i].revents, a, na, (int)(sizeof a / sizeof a[0]));
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
            apply_drop(p, &r);
            if (!r.paired)
                continue;
            if (have) { /* a newer pair is ready: the caller gets that one */
                p->stats.stale_pairs++;
                give_back(p, 0, out->left.buffer);
                give_back(p, 1, out->right.buffer);
            }
            out->left = p->slot[0].held[r.handle[0]];
            out->right = p->slot[1].held[r.handle[1]];
            out->skew_ns = out->right.timestamp_ns - out->left.timestamp_ns;
            have = 1;
        }
        if (have) {
            p->stats.pairs++;
            p->stats.skew_ns = out->skew_ns;
            return CAPTURE_OK;
        }
        if (p->loss_unreported) {
            p->loss_unreported = 0;
            return CAPTURE_LOST;
        }
        if (now_ns() >= deadline)
            return p->slot[0].lost || p->slot[1].lost ? CAPTURE_LOST : CAPTURE_TIMEOUT;
    }
}

static void backend_release(void *state, capture_pair *pair)
{
    v4l2_pair *p = state;
    give_back(p, 0, pair->left.buffer);
    give_back(p, 1, pair->right.buffer);
    capture_pair_clear(pair);
}

static void backend_stats(const void *state, capture_stats *out)
{
    const v4l2_pair *p = state;
    *out = p->stats;
    for (int k = 0; k < 2; k++) {
        const camera_slot *s = &p->slot[k];
        out->lost[k] = s->lost;
        out->buffers[k] = s->cam && !s->lost ? v4l2_camera_buffers(s->cam) : 0;
        out->fps[k] = s->cam && !s->lost ? v4l2_camera_fps(s->cam) : 0;
    }
}

static const char *backend_message(const void *state)
{
    const v4l2_pair *p = state;
    return p->message;
}

static void backend_close(void *state)
{
    v4l2_pair *p = state;
    if (!p)
        return;
    for (int k = 0; k < 2; k++)
        v4l2_camera_stop(p->slot[k].cam);
    for (int k = 0; k < 2; k++)
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
};
