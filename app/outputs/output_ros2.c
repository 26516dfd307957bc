/* SPDX-License-Identifier: Apache-2.0 */
/* output_ros2.c — ros2://NAMESPACE?...: ROS 2 topics, published by a child process.
 *
 * The DDS library runs in build/stereo-ros2-bridge (ros2_bridge.c), never in the app: a
 * peer on the network that crashes it (Debian's Cyclone DDS 0.10.2 segfaults on the type
 * objects of a Cyclone 11.x subscriber) ends the bridge, not the capture, the stage or the
 * window. This side writes each frame into a ring in shared memory (ros2_ring.h: sequence
 * locks, nobody waits) and wakes the bridge with a datagram sent without blocking; it checks the
 * bridge before each frame and starts it again when it has died (at most once a second),
 * counting the restarts. The frames while no bridge runs are written and dropped by nobody:
 * the ring only ever holds the newest.
 *
 * ?min_confidence=N: the disparity goes into the ring with the pixels whose confidence is below
 * N made invalid (STEREO_INVALID), so that every topic made of it (disparity, depth, points)
 * leaves them out alike.
 *
 * A bridge that lives but takes no frame (stopped with SIGSTOP, stuck in the DDS library) is
 * no death to restart: this side watches the ring's published counter and, once frames it
 * wrote have waited STALL_NS without the counter moving, says so once (and again when it
 * moves); the summary shows the frames written that were never published.
 */
#include "output_backend.h"

#include "ros2_ring.h"
#include "stereo.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BRIDGE_NAME "stereo-ros2-bridge"
#define RESTART_INTERVAL_NS 1000000000LL
#define STOP_WAIT_MS 2000
#define STALL_NS 5000000000LL   /* a bridge that has published nothing this long is said */
#define FINISH_WAIT_MS 1000     /* at the end, the bridge's time to take the newest frame */

extern char **environ;

typedef struct {
    output_uri uri;
    char bridge[600];
    int shm_fd, sock;           /* ours; the bridge gets copies as fds 3 and 4 */
    ros2_ring_header *ring;
    size_t ring_bytes;
    pid_t pid;                  /* the bridge, 0 while none runs */
    int64_t started_ns;
    _Atomic uint64_t restarts;
    int last_status;            /* how the bridge last ended, said once per kind */
    void (*report)(const char *line);
    /* the watch for a bridge that takes nothing: the published count last seen, when the
     * oldest frame written since then was written (0: none waits), whether it was said */
    uint64_t seen_published;
    int64_t last_write_ns, stall_since_ns;
    _Atomic int stall_said;     /* read by the stats too */
    _Atomic int finished;       /* ros2_finish ran: the counts are the run's */
} ros2_output;

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Starts the bridge with the ring as fd 3 and a fresh socket end as fd 4. 0, or -1 with err. */
static int bridge_start(ros2_output *r, char *err, size_t errlen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        return -1;
    }
    /* above the fds dup2 fills, so that dup2 always makes a new (inherited) descriptor */
    int child_sock = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    close(sv[1]);
    if (child_sock < 0) {
        close(sv[0]);
        snprintf(err, errlen, "fcntl: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, r->shm_fd, ROS2_RING_SHM_FD);
    posix_spawn_file_actions_adddup2(&fa, child_sock, ROS2_RING_SOCK_FD);
    char *argv[] = {r->bridge, r->uri.text, NULL};
    pid_t pid;
    int e = posix_spawn(&pid, r->bridge, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(child_sock);
    if (e != 0) {
        close(sv[0]);
        snprintf(err, errlen, "cannot start %s: %s", r->bridge, strerror(e));
        return -1;
    }
    if (r->sock >= 0)
        close(r->sock);
    r->sock = sv[0];
    r->pid = pid;
    r->started_ns = monotonic_ns();
    r->stall_since_ns = 0; /* a new bridge: its own time to start publishing */
    r->last_write_ns = 0;
    r->stall_said = 0;
    return 0;
}

/* Reaps the bridge if it ended: 1 when it is gone (after saying how, once per kind), else 0. */
static int bridge_gone(ros2_output *r, char *err, size_t errlen)
{
    int status;
    if (r->pid <= 0)
        return 1;
    if (waitpid(r->pid, &status, WNOHANG) != r->pid)
        return 0;
    r->pid = 0;
    if (status != r->last_status) {
        r->last_status = status;
        if (WIFSIGNALED(status))
            snprintf(err, errlen, "the DDS bridge (%s) was ended by signal %d (%s); restarting it",
                     BRIDGE_NAME, WTERMSIG(status), strsignal(WTERMSIG(status)));
        else
            snprintf(err, errlen, "the DDS bridge (%s) exited with status %d; restarting it",
                     BRIDGE_NAME, WEXITSTATUS(status));
    }
    return 1;
}

static int ros2_open(const output_uri *u, const output_setup *s, void **state, char *err,
                     size_t errlen)
{
    ros2_output *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->uri = *u;
    r->report = s->report;
    r->shm_fd = r->sock = -1;
    r->last_status = -1;
    snprintf(r->bridge, sizeof r->bridge, "%s/%s", s->program_dir, BRIDGE_NAME);
    if (access(r->bridge, X_OK) != 0) {
        snprintf(err, errlen, "%s is not built (it is when ./configure finds Cyclone DDS: "
                 "cyclonedds-dev, cyclonedds-tools; setup.sh installs them)", r->bridge);
        goto fail;
    }
    r->ring_bytes = ros2_ring_bytes((uint32_t)s->width, (uint32_t)s->height);
    int fd = memfd_create("stereo-ros2-ring", MFD_CLOEXEC);
    if (fd >= 0) { /* above the fds dup2 fills */
        r->shm_fd = fcntl(fd, F_DUPFD_CLOEXEC, 10);
        close(fd);
    }
    if (r->shm_fd < 0 || ftruncate(r->shm_fd, (off_t)r->ring_bytes) != 0) {
        snprintf(err, errlen, "shared memory of %zu bytes: %s", r->ring_bytes, strerror(errno));
        goto fail;
    }
    void *m = mmap(NULL, r->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->shm_fd, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "mmap: %s", strerror(errno));
        goto fail;
    }
    r->ring = m;
    ros2_ring_header *h = r->ring;
    h->magic = ROS2_RING_MAGIC;
    h->version = ROS2_RING_VERSION;
    h->width = (uint32_t)s->width;
    h->height = (uint32_t)s->height;
    h->slots = ROS2_RING_SLOTS;
    h->have_cam = (uint32_t)s->have_cam;
    h->slot_bytes = ros2_ring_slot_bytes(h->width, h->height);
    h->focal_px = s->cam.focal_px;
    h->cx = s->cam.cx;
    h->cy = s->cam.cy;
    h->baseline = s->cam.baseline;
    h->doffs_px = s->cam.doffs_px;
    h->min_disparity = s->min_disparity;
    h->num_disparities = s->num_disparities;
    if (bridge_start(r, err, errlen) != 0)
        goto fail;
    *state = r;
    return 0;
fail:
    if (r->ring)
        munmap(r->ring, r->ring_bytes);
    if (r->shm_fd >= 0)
        close(r->shm_fd);
    free(r);
    return -1;
}

/* Before each frame: has the bridge published since the frame written before? When it has
 * not for STALL_NS since the oldest frame waiting was written, it is said once; once it
 * publishes again, that is said too. A state of the ring's counters, not of the clock alone: a
 * source that sends a frame a minute is no stall while the bridge publishes each. */
static void watch_bridge(ros2_output *r, int64_t now)
{
    uint64_t p = atomic_load_explicit(&r->ring->published, memory_order_acquire);
    char line[OUTPUT_URI_MAX + 256];
    line[0] = '\0';
    if (p != r->seen_published) {
        if (r->stall_said)
            snprintf(line, sizeof line, "output %s: the bridge publishes again (after %.0f s)",
                     r->uri.text, (double)(now - r->stall_since_ns) * 1e-9);
        r->seen_published = p;
        r->stall_since_ns = 0;
        r->stall_said = 0;
    } else if (r->last_write_ns) {
        if (!r->stall_since_ns)
            r->stall_since_ns = r->last_write_ns; /* that frame has not been published */
        if (!r->stall_said && now - r->stall_since_ns >= STALL_NS) {
            r->stall_said = 1;
            snprintf(line, sizeof line, "output %s: the bridge (%s, pid %ld) has published "
                     "nothing for %lld s (stopped or stuck?); the frames sent to it are not "
                     "published meanwhile", r->uri.text, BRIDGE_NAME, (long)r->pid,
                     (long long)(STALL_NS / 1000000000LL));
        }
    }
    if (line[0] && r->report)
        r->report(line);
}

static int ros2_write(void *state, const output_frame *f, char *err, size_t errlen)
{
    ros2_output *r = state;
    if (bridge_gone(r, err, errlen)) { /* this frame is dropped; said once per kind of end */
        if (monotonic_ns() - r->started_ns >= RESTART_INTERVAL_NS) {
            char why[256];
            if (bridge_start(r, why, sizeof why) != 0) {
                snprintf(err, errlen, "%s", why);
                return -1;
            }
            r->restarts++;
        }
        return err[0] ? -1 : 1;
    }
    if (r->uri.min_confidence > 0 && !f->confidence) {
        snprintf(err, errlen, "min_confidence=%d: the frame has no confidence map",
                 r->uri.min_confidence);
        return -1;
    }
    int64_t now = monotonic_ns();
    watch_bridge(r, now);
    r->last_write_ns = now;
    ros2_ring_header *h = r->ring;
    uint64_t k = atomic_load_explicit(&h->head, memory_order_relaxed);
    uint8_t *base = (uint8_t *)r->ring + sizeof *h + (k % h->slots) * h->slot_bytes;
    ros2_ring_slot *slot = (ros2_ring_slot *)base;
    size_t n = (size_t)f->width * f->height;
    atomic_store_explicit(&slot->seq, 2 * k + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    slot->number = f->number;
    slot->stamp_ns = f->stamp_ns;
    if (r->uri.min_confidence > 0) {
        int16_t *d = (int16_t *)(void *)(base + sizeof *slot); /* 8-byte aligned: ros2_ring.h */
        const uint8_t *c = f->confidence;
        int t = r->uri.min_confidence;
        for (size_t i = 0; i < n; i++)
            d[i] = c[i] < t ? STEREO_INVALID : f->disparity[i];
    } else {
        memcpy(base + sizeof *slot, f->disparity, n * sizeof *f->disparity);
    }
    memcpy(base + sizeof *slot + n * 2, f->rectified, n);
    atomic_store_explicit(&slot->seq, 2 * k + 2, memory_order_release);
    atomic_store_explicit(&h->head, k + 1, memory_order_release);
    /* a wake-up; when the bridge is behind (its socket full) it reads the newest slot anyway */
    send(r->sock, &k, sizeof k, MSG_DONTWAIT | MSG_NOSIGNAL);
    return 0;
}

/* The end, after the last frame: the bridge has FINISH_WAIT_MS to take the newest one, so that
 * the summary's published count is the run's (a stopped or dead bridge does not hold it up
 * longer). */
static int ros2_finish(void *state, char *err, size_t errlen)
{
    ros2_output *r = state;
    (void)err, (void)errlen; /* the bridge reports its own failures as they come */
    uint64_t head = atomic_load(&r->ring->head);
    for (int t = 0; t < FINISH_WAIT_MS / 10 && r->pid > 0 && head &&
                    atomic_load(&r->ring->taken) != head;
         t++)
        usleep(10000);
    atomic_store(&r->finished, 1);
    return 0;
}

/* Published beside sent; in the summary and while the bridge is said to publish nothing, the
 * frames sent to it that were not published (skipped by a bridge that was behind, never taken
 * by one stopped or dead). Not in the other stats lines: there the frame in flight would count. */
static void ros2_stats(void *state, char *buf, size_t len)
{
    ros2_output *r = state;
    uint64_t head = atomic_load(&r->ring->head), published = atomic_load(&r->ring->published);
    char gap[128] = "";
    if (head > published && (atomic_load(&r->finished) || atomic_load(&r->stall_said)))
        snprintf(gap, sizeof gap, " (%llu of the frames sent were not: skipped by a bridge that "
                 "was behind, or never taken)",
                 (unsigned long long)(head - published));
    snprintf(buf, len, ", %llu published%s, bridge restarts %llu", (unsigned long long)published,
             gap, (unsigned long long)atomic_load(&r->restarts));
}

static uint64_t ros2_restarts(void *state)
{
    return atomic_load(&((ros2_output *)state)->restarts);
}

/* Closing the socket ends the bridge; one that does not end soon is killed. */
static void ros2_close(void *state)
{
    ros2_output *r = state;
    if (r->sock >= 0)
        close(r->sock);
    for (int t = 0; r->pid > 0 && t < STOP_WAIT_MS / 10; t++) {
        if (waitpid(r->pid, NULL, WNOHANG) == r->pid)
            r->pid = 0;
        else
            usleep(10000);
    }
    if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
    }
    munmap(r->ring, r->ring_bytes);
    close(r->shm_fd);
    free(r);
}

const output_backend output_ros2_backend = {
    OUT_ROS2, OUTPUT_NEEDS_DISPARITY | OUTPUT_NEEDS_RECTIFIED, ros2_open, ros2_write, ros2_stats,
    ros2_restarts, ros2_close, ros2_finish, NULL,
};
