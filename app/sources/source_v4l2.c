/* SPDX-License-Identifier: Apache-2.0 */
/* source_v4l2.c — two or more V4L2 cameras as a frame source (left/right v4l2:///dev/videoN,
 * [source] view2 ... for more views, or the older [source] type = v4l2 with [camera] left/right)
 * through hal/capture.h: grouping by timestamp, lost-camera retries and their messages are
 * there; zero copy is here.
 *
 * Views. Camera k is view k (0 the reference, 1 right, 2.. [source] view2 ...), one capture
 * handle for all (capture_config.ncameras). With more than two views the capture delivers sets
 * of the cameras that remain while one is lost (partial_sets): a set without view k >= 1 is
 * delivered with frame_pair.lost bit k (the pipeline matches the reference and view 1 alone
 * while only views >= 2 are lost, and waits while view 1 is); one without the reference is
 * given back and the read says FRAME_LOST. Each delivery carries every camera's capture time
 * (view_timestamp_ns: its skew to the reference's) and its drops so far (view_drops: frames
 * without a set, in stale sets, or flagged corrupt by the driver).
 */
#include "source_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"

#define ZC_MAX (2 * CAPTURE_MAX_BUFFERS) /* delivered + released sets with lent frames */

typedef struct {
    char device[FRAME_MAX_VIEWS][CONFIG_PATH_MAX]; /* outlive the capture (capture.h keeps the
                                                      pointers) */
    int n;                     /* cameras = views */
    capture *cap;
    capture_io io;             /* asked for (STEREO_V4L2_IO); AUTO unless set */
    int io_settled;            /* the cameras got the lent frames, or heard there are none */
    pthread_mutex_t zc_lock;   /* guards lent, out, back: frame_source_release comes from the
                                  pipeline's other threads */
    uint8_t *lent[FRAME_MAX_VIEWS][CAPTURE_MAX_BUFFERS]; /* the pool's frames lent to the
                                                            source, per camera */
    int nlent, lent_new;       /* lent_new: not given to the cameras yet */
    size_t lent_bytes;
    struct {
        const uint8_t *data[FRAME_MAX_VIEWS]; /* the delivered images (the key
                                                 frame_source_release finds) */
        capture_set set;          /* their USERPTR frames (a copied view's buffer is -1) */
    } out[ZC_MAX];
    int nout;
    capture_set back[ZC_MAX];  /* released, queued again at the next read */
    int nback;
    uint64_t frames_zero_copy, frames_copied;
} v4l2_source;

/* Zero copy (capture.h: USERPTR). The pipeline lends the source every frame of its pool
 * (frame_source_lend, after stereo_frame_alloc) and the next read gives them to the cameras
 * that can stream into them (capture_give_buffers; slot k's frame of view v is buffer k of
 * camera v): a
 * USERPTR camera then writes each frame straight into a pool frame and the stage reads it there.
 * Who owns a lent frame when:
 *   queued      the driver's, from capture_give_buffers or a capture_release until it is
 *               dequeued; it may write into it at any time, so the frame must be out of every
 *               pipeline slot: it is (see delivered), and it is therefore never attached to the
 *               stage's CUDA stream while queued (stereo.h attaches frames only from submit to
 *               wait, and only the frames of a slot the stage holds);
 *   waiting     dequeued, waiting in the capture's pairing for its partner; a frame that gets
 *               none is queued again at once, inside capture_next;
 *   delivered   in the frame_pair a read returned, i.e. in a pipeline slot (ready queue, stage,
 *               published, display, writer) until the slot goes back to the free list; the
 *               pipeline then calls frame_source_release for the slot's pair;
 *   released    listed in back[] (frame_source_release runs on the pipeline's threads under
 *               its lock, while the capture handle belongs to the capture thread), queued again
 *               at the start of the next read: within READ_TIMEOUT_MS, usually a frame period.
 * So the frames the pipeline passes to a read (buf[]) are not written for a USERPTR camera: lent
 * frames float between slots. An MMAP camera (the fallback) keeps the old path: its frame is
 * copied once into its buf[v] (its own slot's frames, never given to the driver) and its driver
 * buffer goes back at once. frame_source_reclaim, before the pool frees the frames (or moves to
 * a new stage), takes every lent frame back: capture_take_back_buffers stops the USERPTR
 * cameras, the driver lets go of every buffer, and the next lend starts them again.
 *
 * Falling back to mmap + one copy, logged once per camera ("<role> camera <path>: zero-copy
 * (USERPTR)" / "...: mmap + copy: <reason>"): libv4l2 converts the format (MJPEG), the driver
 * refuses USERPTR or the memory, STEREO_V4L2_IO=mmap, or the pipeline lends no frames. A
 * camera's mode is decided once, at its first buffers (a reconnect keeps it). Any alignment
 * the driver takes will do: the CUDA backend's frames are managed memory on a Jetson and pinned
 * host memory on a discrete GPU (both page-aligned); the CPU backend's come from malloc (16-byte aligned: glibc maps large blocks
 * at a page + 16), which vb2's vmalloc drivers (UVC webcams, vivid) take as they are; drivers
 * that need physically contiguous or aligned memory refuse it at VIDIOC_QBUF and that camera
 * falls back. info.frame_bytes is at least each driver's sizeimage, rounded up to whole pages.
 */

/* The capture thread's part of the hand-over: queues the released frames again and gives the
 * cameras newly lent frames (or, the first time, says there are none). 0, or -1 with err. */
static int v4l2_settle(frame_source *s, char *err, size_t errlen)
{
    v4l2_source *v = s->state;
    capture_set back[ZC_MAX];
    void *lent[FRAME_MAX_VIEWS][CAPTURE_MAX_BUFFERS];
    size_t bytes = 0;
    int nlent = 0;
    pthread_mutex_lock(&v->zc_lock);
    int nback = v->nback, fresh = v->lent_new;
    memcpy(back, v->back, (size_t)nback * sizeof back[0]);
    v->nback = v->lent_new = 0;
    if (fresh) {
        nlent = v->nlent;
        bytes = v->lent_bytes;
        for (int k = 0; k < v->n; k++)
            for (int i = 0; i < nlent; i++)
                lent[k][i] = v->lent[k][i];
    }
    pthread_mutex_unlock(&v->zc_lock);
    for (int i = 0; i < nback; i++)
        capture_release_set(v->cap, &back[i]);
    if (v->io == CAPTURE_IO_MMAP || (v->io_settled && !fresh))
        return 0;
    if (nlent < CAPTURE_MIN_BUFFERS) { /* none (a caller without the lend hook), or too few */
        if (v->io == CAPTURE_IO_USERPTR) {
            say(err, errlen, "STEREO_V4L2_IO=userptr: %d frames lent to capture into (at least "
                "%d needed)", nlent, CAPTURE_MIN_BUFFERS);
            return -1;
        }
        source_log(NULL, nlent ? "v4l2: too few frames lent to capture into (the cameras copy)"
                             : "v4l2: no frames lent to capture into (the cameras copy)");
        nlent = 0;
    }
    for (int k = 0; k < v->n; k++)
        if (capture_give_buffers(v->cap, k, nlent ? lent[k] : NULL, nlent, bytes, err, errlen) !=
            CAPTURE_OK)
            return -1;
    v->io_settled = 1;
    return 0;
}

/* Gives one camera's frame of a set back at once (a copied MMAP frame). */
static void release_side(frame_source *s, capture_set *set, int k)
{
    v4l2_source *v = s->state;
    capture_set one;
    memset(&one, 0, sizeof one);
    one.n = set->n;
    for (int i = 0; i < CAPTURE_MAX_CAMERAS; i++)
        one.frame[i].buffer = -1;
    one.frame[k] = set->frame[k];
    one.mask = 1u << k;
    capture_release_set(v->cap, &one);
    set->frame[k].buffer = -1;
}

/* Frames of camera k dropped so far: without a set, in a stale set, or flagged by the driver. */
static uint64_t camera_drops(const capture_stats *cs, int k)
{
    return cs->unpaired[k] + cs->stale[k] + cs->errors[k];
}

static frame_status v4l2_read(frame_source *s, uint8_t *const buf[], frame_pair *out,
                              int timeout)
{
    v4l2_source *v = s->state;
    char err[512];
    if (v4l2_settle(s, err, sizeof err) != 0) {
        say(s->message, sizeof s->message, "%s", err);
        return FRAME_ERROR;
    }
    capture_set set;
    capture_status st = capture_next_set(v->cap, &set, timeout);
    snprintf(s->message, sizeof s->message, "%s", capture_message(v->cap));
    if (st == CAPTURE_TIMEOUT)
        return FRAME_TIMEOUT;
    if (st == CAPTURE_LOST)
        return FRAME_LOST;
    if (st != CAPTURE_OK)
        return FRAME_ERROR;
    if (!(set.mask & 1u)) { /* the reference lost: nothing to match (see Views) */
        capture_release_set(v->cap, &set);
        return FRAME_LOST;
    }
    capture_stats cs;
    capture_stats_get(v->cap, &cs);
    /* USERPTR: the stage reads the frame where the driver wrote it; MMAP: one copy into the
     * slot's own frame, and the driver's buffer goes straight back (see above) */
    int lent = 0;
    for (int k = 0; k < v->n; k++) {
        capture_frame *f = &set.frame[k];
        out->view_drops[k] = camera_drops(&cs, k);
        if (!(set.mask & 1u << k)) {
            out->lost |= 1u << k;
            continue;
        }
        out->view_timestamp_ns[k] = f->timestamp_ns;
        if (f->io == CAPTURE_IO_USERPTR) {
            out->view[k] = capture_frame_image(f);
            lent = 1;
            v->frames_zero_copy++;
        } else {
            out->view[k] = source_pack_rows(f->data, f->pitch, f->width, f->height, f->format,
                                            buf[k]);
            v->frames_copied++;
            release_side(s, &set, k);
        }
    }
    out->timestamp_ns = set.frame[0].timestamp_ns;
    out->scene_t = 0;
    out->index = set.frame[0].sequence;
    if (lent) { /* delivered until frame_source_release */
        pthread_mutex_lock(&v->zc_lock);
        int room = v->nout + v->nback < ZC_MAX; /* always: each entry holds a lent frame */
        if (room) {
            for (int k = 0; k < FRAME_MAX_VIEWS; k++)
                v->out[v->nout].data[k] = k < v->n ? out->view[k].data : NULL;
            v->out[v->nout].set = set;
            v->nout++;
        }
        pthread_mutex_unlock(&v->zc_lock);
        if (!room) {
            capture_release_set(v->cap, &set);
            say(s->message, sizeof s->message, "v4l2: more than %d sets held", ZC_MAX);
            return FRAME_ERROR;
        }
    }
    return FRAME_OK;
}

static void v4l2_lend(frame_source *s, uint8_t *const frame[], size_t bytes)
{
    v4l2_source *v = s->state;
    if (v->io == CAPTURE_IO_MMAP)
        return;
    for (int k = 0; k < v->n; k++)
        if (!frame[k])
            return;
    pthread_mutex_lock(&v->zc_lock);
    if (v->nlent < CAPTURE_MAX_BUFFERS) {
        for (int k = 0; k < v->n; k++)
            v->lent[k][v->nlent] = frame[k];
        v->lent_bytes = v->nlent == 0 || bytes < v->lent_bytes ? bytes : v->lent_bytes;
        v->nlent++;
        v->lent_new = 1;
    }
    pthread_mutex_unlock(&v->zc_lock);
}

static void v4l2_release(frame_source *s, const frame_pair *p)
{
    v4l2_source *v = s->state;
    if (!p->view[0].data)
        return;
    pthread_mutex_lock(&v->zc_lock);
    for (int i = 0; i < v->nout; i++) {
        int same = 1;
        for (int k = 0; k < v->n; k++)
            same = same && v->out[i].data[k] == ((p->lost & 1u << k) ? NULL : p->view[k].data);
        if (same) {
            v->back[v->nback++] = v->out[i].set;
            v->out[i] = v->out[--v->nout];
            break;
        }
    }
    pthread_mutex_unlock(&v->zc_lock);
}

static void v4l2_reclaim(frame_source *s)
{
    v4l2_source *v = s->state;
    pthread_mutex_lock(&v->zc_lock);
    v->nlent = v->lent_new = v->nout = v->nback = 0;
    pthread_mutex_unlock(&v->zc_lock);
    capture_take_back_buffers(v->cap); /* the driver holds none of them afterwards */
}

static void v4l2_close(frame_source *s)
{
    v4l2_source *v = s->state;
    capture_close(v->cap);
    pthread_mutex_destroy(&v->zc_lock);
    free(v);
}

static void v4l2_stats_line(const frame_source *s, char *buf, size_t len)
{
    const v4l2_source *v = s->state;
    capture_stats cs;
    capture_stats_get(v->cap, &cs);
    if (v->n == 2)
        say(buf, len, "cameras: %llu pairs, skew %.1f ms (max %.1f), %llu+%llu unpaired, "
            "%llu stale, %llu+%llu errors, %llu+%llu losses", (unsigned long long)cs.pairs,
            cs.skew_ns / 1e6, cs.max_skew_ns / 1e6,
            (unsigned long long)cs.unpaired[0], (unsigned long long)cs.unpaired[1],
            (unsigned long long)cs.stale_pairs, (unsigned long long)cs.errors[0],
            (unsigned long long)cs.errors[1], (unsigned long long)cs.losses[0],
            (unsigned long long)cs.losses[1]);
    else { /* per camera: skew to the reference in its last set, drops, losses, up or lost */
        say(buf, len, "cameras: %llu sets (%llu partial, %llu stale), max skew %.1f ms",
            (unsigned long long)cs.pairs, (unsigned long long)cs.partial_sets,
            (unsigned long long)cs.stale_pairs, cs.max_skew_ns / 1e6);
        for (int k = 0; k < v->n; k++) {
            size_t n = strlen(buf);
            if (n >= len)
                break;
            say(buf + n, len - n, "; cam%d %+.1f ms %llu drops %llu losses%s", k,
                cs.cam_skew_ns[k] / 1e6, (unsigned long long)camera_drops(&cs, k),
                (unsigned long long)cs.losses[k], cs.lost[k] ? " LOST" : "");
        }
    }
    size_t n = strlen(buf);
    if (n < len) /* frames the stage read where the driver wrote them / copied once */
        say(buf + n, len - n, ", frames %llu zero-copy %llu copied",
            (unsigned long long)v->frames_zero_copy, (unsigned long long)v->frames_copied);
}

void source_camera_config(const live_config *cfg, capture_config *cc)
{
    memset(cc, 0, sizeof *cc);
    cc->backend = CAPTURE_V4L2_PAIR;
    cc->width = cfg->width;
    cc->height = cfg->height;
    cc->fps = cfg->fps;
    cc->format = cfg->format;
    cc->buffers = cfg->buffers;
    cc->max_skew_ns = (int64_t)cfg->max_skew_ms * 1000000;
    cc->ncontrols = cfg->ncontrols;
    memcpy(cc->controls, cfg->controls, sizeof cc->controls);
    cc->log = source_log;
}

/* After a camera failed to open: 1 if its device path (SECTION.KEY) does not exist, and then,
 * when the configuration file set it, err is rewritten with the file's line: "FILE:LINE:
 * camera.KEY = PATH: no such device; ...". The shipped example's placeholder
 * (config/two-usb-cameras.ini: .../usb-REPLACE_WITH_...) asks for the line to be edited; another
 * path asks whether the camera is connected. A path from the command line keeps the camera's own
 * message. 0: the path exists (err as the camera left it). */
int source_camera_path_missing(const live_config *cfg, const char *section, const char *key,
                               const char *path, char *err, size_t errlen)
{
    struct stat sb;
    char origin[CONFIG_PATH_MAX + 16];
    if (stat(path, &sb) == 0 || errno != ENOENT)
        return 0;
    if (!live_config_origin(cfg, section, key, origin, sizeof origin))
        return 1;
    if (strstr(path, "REPLACE"))
        say(err, errlen, "%s: %s.%s = %s: no such device; edit this line to name your camera "
            "(see `ls /dev/v4l/by-id/`)", origin, section, key, path);
    else
        say(err, errlen, "%s: %s.%s = %s: no such device: is the camera connected? "
            "(`ls /dev/v4l/by-id/` lists the cameras)", origin, section, key, path);
    return 1;
}

static frame_status v4l2_open(frame_source *s, const live_config *cfg, const source_plan *plan,
                              char *err, size_t errlen)
{
    int n = cfg->stereo.views > 2 ? cfg->stereo.views : 2;
    source_uri uris[FRAME_MAX_VIEWS];
    if (n > 2 && live_config_view_uris(cfg, plan, uris, err, errlen) != 0)
        return FRAME_ERROR;
    const char *dev[FRAME_MAX_VIEWS];
    for (int k = 0; k < n; k++)
        dev[k] = k < 2 ? plan->uri[k].target : uris[k].target;
    const char *section = plan->from_type ? "camera" : "source";
    /* STEREO_V4L2_IO=auto|mmap|userptr (docs/jetson.md, "Memory"); auto when unset */
    const char *env = getenv("STEREO_V4L2_IO");
    int io = env && env[0] ? capture_io_from_str(env) : CAPTURE_IO_AUTO;
    if (io < 0) {
        say(err, errlen, "STEREO_V4L2_IO=%s: not auto, mmap or userptr", env);
        return FRAME_ERROR;
    }
    v4l2_source *v = calloc(1, sizeof *v);
    if (!v) {
        say(err, errlen, "v4l2: out of memory");
        return FRAME_ERROR;
    }
    v->n = n;
    capture_config cc;
    source_camera_config(cfg, &cc);
    cc.ncameras = n;
    cc.partial_sets = n > 2; /* views >= 2 may go missing for a while (see Views) */
    for (int k = 0; k < n; k++) {
        snprintf(v->device[k], sizeof v->device[k], "%s", dev[k]);
        cc.device[k] = v->device[k];
    }
    cc.io = v->io = (capture_io)io;
    if (capture_open(&cc, &v->cap, err, errlen) != CAPTURE_OK) {
        for (int k = 0; k < n; k++) {
            char key[16];
            say(key, sizeof key, k == 0 ? "left" : k == 1 ? "right" : "view%d", k);
            if (source_camera_path_missing(cfg, section, key, dev[k], err, errlen))
                break;
        }
        free(v);
        return FRAME_ERROR;
    }
    if (pthread_mutex_init(&v->zc_lock, NULL) != 0) {
        capture_close(v->cap);
        free(v);
        say(err, errlen, "v4l2: cannot create a mutex");
        return FRAME_ERROR;
    }
    s->state = v;
    for (int k = 0; io == CAPTURE_IO_MMAP && k < n; k++) {
        char name[CONFIG_PATH_MAX + 32];
        capture_camera_name(&cc, k, name, sizeof name);
        fprintf(stderr, "stereo-live: %s: mmap + copy: STEREO_V4L2_IO=mmap\n", name);
    }
    /* room for the widest format (RGB24) and for what each driver writes (sizeimage, the
     * USERPTR frames' least length), in whole pages */
    size_t bytes = (size_t)cfg->width * cfg->height * 3;
    for (int k = 0; k < n; k++)
        if (capture_buffer_bytes(v->cap, k) > bytes)
            bytes = capture_buffer_bytes(v->cap, k);
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0)
        bytes = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    s->info = (frame_source_info){cfg->width, cfg->height, bytes, 1, 0, 0, n};
    return FRAME_OK;
}

const source_ops source_v4l2_ops = {
    .name = "v4l2", .open = v4l2_open, .read = v4l2_read, .close = v4l2_close,
    .stats_line = v4l2_stats_line, .lend = v4l2_lend, .release = v4l2_release,
    .reclaim = v4l2_reclaim,
};
