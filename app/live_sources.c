/* SPDX-License-Identifier: Apache-2.0 */
/* live_sources.c — the live app's frame sources (synth, files, v4l2 pair, side-by-side camera)
 * behind the interface in live_sources.h, and the pair recorder.
 *
 * Each source is a section below with the same three static functions (name_open, name_read,
 * name_close) and is reached through a small table; the shared part only dispatches.
 *
 * Built with LIVE_LIBC_ONLY=1 (build/gpu/stereo-live-headless: CUDA and libc only) the files
 * source and the recorder (libpng, libturbojpeg) and the cameras (libv4l2) are left out: their
 * open functions say "not built in this binary" instead.
 */
#include "live_sources.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "image_io.h"
#include "outpath.h"
#include "synth.h"
#include "v4l2_camera.h"

/* A lost side-by-side camera is reopened this often (the pair backend's rate, capture.h). */
#define SBS_RETRY_MS 1000

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

typedef struct {
    frame_status (*read)(frame_source *s, uint8_t *l, uint8_t *r, frame_pair *out, int timeout);
    void (*close)(frame_source *s);
} source_ops;

struct frame_source {
    const source_ops *ops;
    frame_source_info info;
    char message[512];
    /* synth */
    synth *scene;
    int64_t t0_ns;
    long count;
    uint8_t *ring;             /* frame_source_prerender: ring_n pairs (left, right), or NULL */
    int ring_n;
    double ring_period;        /* scene time between two ring frames, s */
    /* files */
    char pattern[2][CONFIG_PATH_MAX];
    long first, next;
    int loop, channels;
    /* v4l2 pair (zero copy: see the v4l2 section) */
    capture *cap;
    capture_io io;             /* asked for (STEREO_V4L2_IO); AUTO unless set */
    int io_settled;            /* the cameras got the lent frames, or heard there are none */
    pthread_mutex_t zc_lock;   /* guards lent, out, back: frame_source_release comes from the
                                  pipeline's other threads */
    uint8_t *lent[2][CAPTURE_MAX_BUFFERS]; /* the pool's frames lent to the source, per camera */
    int nlent, lent_new;       /* lent_new: not given to the cameras yet */
    size_t lent_bytes;
    struct {
        const uint8_t *data[2];   /* the delivered images (the key frame_source_release finds) */
        capture_pair pair;        /* their USERPTR frames (a copied side's buffer is -1) */
    } out[2 * CAPTURE_MAX_BUFFERS];
    int nout;
    capture_pair back[2 * CAPTURE_MAX_BUFFERS]; /* released, queued again at the next read */
    int nback;
    uint64_t frames_zero_copy, frames_copied;
    /* sbs */
    capture_config cam_cfg;    /* outlives the camera (v4l2_camera.h keeps a pointer) */
    char device[CONFIG_PATH_MAX];
    v4l2_camera *cam;
    int64_t retry_at_ns;       /* lost: the next reopen attempt */
    uint64_t cam_errors, cam_frames, cam_losses, cam_reconnects;
};

/* ---- synth: the generated scene, rendered straight into the stage's frames ----------------- */

static frame_status synth_read(frame_source *s, uint8_t *l, uint8_t *r, frame_pair *out,
                               int timeout)
{
    int w = s->info.width, h = s->info.height;
    int64_t now = monotonic_ns();
    if (s->count == 0)
        s->t0_ns = now;
    double t;
    if (s->ring) { /* pre-rendered: a copy, the scene time of the ring frame */
        size_t n = (size_t)w * h;
        long i = s->count % s->ring_n;
        memcpy(l, s->ring + 2 * n * (size_t)i, n);
        memcpy(r, s->ring + 2 * n * (size_t)i + n, n);
        t = (double)i * s->ring_period;
    } else {
        t = (double)(now - s->t0_ns) * 1e-9;
        if (synth_render_views(s->scene, t, l, r, 1, (size_t)w, s->message,
                               sizeof s->message) != 0)
            return FRAME_ERROR;
    }
    out->left = (stereo_image){l, w, h, (size_t)w, STEREO_PIX_GREY8};
    out->right = (stereo_image){r, w, h, (size_t)w, STEREO_PIX_GREY8};
    out->timestamp_ns = now;
    out->scene_t = t;
    out->index = s->count++;
    return FRAME_OK;
}

static void synth_close(frame_source *s)
{
    synth_destroy(s->scene);
    free(s->ring);
}

static const source_ops synth_ops = {synth_read, synth_close};

int frame_source_prerender(frame_source *s, int frames, char *err, size_t errlen)
{
    if (s->ops != &synth_ops) {
        say(err, errlen, "--synth-prerender: only the generated scene (source synth) is rendered");
        return -1;
    }
    size_t n = (size_t)s->info.width * s->info.height;
    if (frames < 1 || (size_t)frames > SIZE_MAX / (2 * n)) {
        say(err, errlen, "--synth-prerender: %d frames: at least 1", frames);
        return -1;
    }
    uint8_t *ring = malloc(2 * n * (size_t)frames);
    if (!ring) {
        say(err, errlen, "--synth-prerender: %d frames of %dx%d: out of memory (%.0f MB)", frames,
            s->info.width, s->info.height, 2.0 * n * frames / 1e6);
        return -1;
    }
    /* the animation at the source's rate (30 frames per second of scene time when unpaced) */
    double period = 1.0 / (s->info.fps > 0 ? s->info.fps : 30.0);
    for (int i = 0; i < frames; i++)
        if (synth_render_views(s->scene, i * period, ring + 2 * n * (size_t)i,
                               ring + 2 * n * (size_t)i + n, 1, (size_t)s->info.width, err,
                               errlen) != 0) {
            free(ring);
            return -1;
        }
    free(s->ring);
    s->ring = ring;
    s->ring_n = frames;
    s->ring_period = period;
    return 0;
}

static frame_status synth_open(const live_config *cfg, frame_source *s, char *err, size_t errlen)
{
    synth_params p = {.width = cfg->synth_width, .height = cfg->synth_height, .seed = 1};
    if (synth_create(&p, &s->scene, err, errlen) != 0)
        return FRAME_ERROR;
    s->ops = &synth_ops;
    /* paced, it is live (the stage gets the newest pair, older ones are dropped); unpaced
     * (fps 0) it is delivered on demand, as fast files are: nothing dropped, nothing wasted */
    s->info = (frame_source_info){cfg->synth_width, cfg->synth_height,
                                  (size_t)cfg->synth_width * cfg->synth_height,
                                  cfg->synth_fps > 0, cfg->synth_fps, 1};
    return FRAME_OK;
}

/* ---- files: two printf-patterned image sequences -------------------------------------------- */
#if !LIVE_LIBC_ONLY

static void file_path(const frame_source *s, int side, long index, char *buf, size_t len)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(buf, len, s->pattern[side], (int)index); /* checked by live_config_check_pattern */
#pragma GCC diagnostic pop
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Reads one side into buf; the image must have the size and channels of the first one. */
static frame_status files_read_side(frame_source *s, int side, long index, uint8_t *buf)
{
    char path[PATH_MAX + CONFIG_PATH_MAX];
    image im = {0};
    file_path(s, side, index, path, sizeof path);
    if (image_read8(path, &im, s->message, sizeof s->message) != 0)
        return FRAME_ERROR;
    if (im.width != s->info.width || im.height != s->info.height || im.channels != s->channels) {
        say(s->message, sizeof s->message, "%s: %dx%d with %d channel(s), the sequence is %dx%d "
            "with %d", path, im.width, im.height, im.channels, s->info.width, s->info.height,
            s->channels);
        image_free(&im);
        return FRAME_ERROR;
    }
    memcpy(buf, im.data, (size_t)im.width * im.height * im.channels);
    image_free(&im);
    return FRAME_OK;
}

static frame_status files_read(frame_source *s, uint8_t *l, uint8_t *r, frame_pair *out,
                               int timeout)
{
    char path[PATH_MAX + CONFIG_PATH_MAX];
    file_path(s, 0, s->next, path, sizeof path);
    if (!file_exists(path)) {
        if (!s->loop || s->next == s->first)
            return FRAME_END;
        s->next = s->first; /* loop */
    }
    frame_status st;
    if ((st = files_read_side(s, 0, s->next, l)) != FRAME_OK ||
        (st = files_read_side(s, 1, s->next, r)) != FRAME_OK)
        return st;
    int w = s->info.width, h = s->info.height;
    stereo_pixfmt f = s->channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8;
    out->left = (stereo_image){l, w, h, (size_t)w * s->channels, f};
    out->right = (stereo_image){r, w, h, (size_t)w * s->channels, f};
    out->timestamp_ns = monotonic_ns();
    out->scene_t = 0;
    out->index = s->next++;
    return FRAME_OK;
}

static void files_close(frame_source *s) { (void)s; }

static const source_ops files_ops = {files_read, files_close};

static frame_status files_open(const live_config *cfg, frame_source *s, char *err, size_t errlen)
{
    const char *pat[2] = {cfg->left_pattern, cfg->right_pattern};
    for (int i = 0; i < 2; i++) {
        char why[256];
        if (!pat[i][0]) {
            say(err, errlen, "files: %s pattern is empty (e.g. %s_%%04d.png)",
                i ? "right" : "left", i ? "right" : "left");
            return FRAME_ERROR;
        }
        if (live_config_check_pattern(i ? "right" : "left", pat[i], why, sizeof why)) {
            say(err, errlen, "files: %s", why);
            return FRAME_ERROR;
        }
        snprintf(s->pattern[i], sizeof s->pattern[i], "%s", pat[i]);
    }
    /* sequences start at 0 or 1 */
    char path[PATH_MAX + CONFIG_PATH_MAX];
    s->first = -1;
    for (long k = 0; k <= 1 && s->first < 0; k++) {
        file_path(s, 0, k, path, sizeof path);
        if (file_exists(path))
            s->first = k;
    }
    if (s->first < 0) {
        file_path(s, 0, 0, path, sizeof path);
        say(err, errlen, "files: no left image: neither %s nor the one numbered 1 exists", path);
        return FRAME_ERROR;
    }
    image im = {0};
    file_path(s, 0, s->first, path, sizeof path);
    if (image_read8(path, &im, err, errlen) != 0)
        return FRAME_ERROR;
    s->channels = im.channels;
    s->info = (frame_source_info){im.width, im.height,
                                  (size_t)im.width * im.height * im.channels, 0, cfg->files_fps, 0};
    image_free(&im);
    s->next = s->first;
    s->loop = cfg->files_loop;
    s->ops = &files_ops;
    return FRAME_OK;
}
#else /* LIVE_LIBC_ONLY */
static frame_status files_open(const live_config *cfg, frame_source *s, char *err, size_t errlen)
{
    (void)cfg, (void)s;
    say(err, errlen, "not built in this binary: source files (image files need libpng and "
        "libturbojpeg; build/stereo-live has them)");
    return FRAME_ERROR;
}
#endif

#if !LIVE_LIBC_ONLY
/* ---- v4l2: a camera pair through capture.h --------------------------------------------------
 *
 * Zero copy (capture.h: USERPTR). The pipeline lends the source every frame of its pool
 * (frame_source_lend, after stereo_frame_alloc) and the next read gives them to the cameras
 * that can stream into them (capture_give_buffers; slot k's left frame is left buffer k): a
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
 * So the frames the pipeline passes to a read (l, r) are not written for a USERPTR camera: lent
 * frames float between slots. An MMAP camera (the fallback) keeps the old path: its frame is
 * copied once into l or r (its own slot's frames, never given to the driver) and its driver
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

static void log_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "stereo-live: %s\n", line);
}

/* Copies a frame's rows (the driver's pitch) into a tightly packed buffer. */
static stereo_image pack_rows(const uint8_t *src, size_t src_pitch, int width, int height,
                              stereo_pixfmt f, uint8_t *dst)
{
    size_t row = (size_t)width * stereo_pixfmt_bytes(f);
    for (int y = 0; y < height; y++)
        memcpy(dst + y * row, src + y * src_pitch, row);
    return (stereo_image){dst, width, height, row, f};
}

#define ZC_MAX (2 * CAPTURE_MAX_BUFFERS) /* delivered + released pairs with lent frames */

static const source_ops v4l2_ops;

/* The capture thread's part of the hand-over: queues the released frames again and gives the
 * cameras newly lent frames (or, the first time, says there are none). 0, or -1 with err. */
static int v4l2_settle(frame_source *s, char *err, size_t errlen)
{
    capture_pair back[ZC_MAX];
    void *lent[2][CAPTURE_MAX_BUFFERS];
    size_t bytes = 0;
    int nlent = 0;
    pthread_mutex_lock(&s->zc_lock);
    int nback = s->nback, fresh = s->lent_new;
    memcpy(back, s->back, (size_t)nback * sizeof back[0]);
    s->nback = s->lent_new = 0;
    if (fresh) {
        nlent = s->nlent;
        bytes = s->lent_bytes;
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < nlent; i++)
                lent[k][i] = s->lent[k][i];
    }
    pthread_mutex_unlock(&s->zc_lock);
    for (int i = 0; i < nback; i++)
        capture_release(s->cap, &back[i]);
    if (s->io == CAPTURE_IO_MMAP || (s->io_settled && !fresh))
        return 0;
    if (nlent < CAPTURE_MIN_BUFFERS) { /* none (a caller without the lend hook), or too few */
        if (s->io == CAPTURE_IO_USERPTR) {
            say(err, errlen, "STEREO_V4L2_IO=userptr: %d frames lent to capture into (at least "
                "%d needed)", nlent, CAPTURE_MIN_BUFFERS);
            return -1;
        }
        log_line(NULL, nlent ? "v4l2: too few frames lent to capture into (the cameras copy)"
                             : "v4l2: no frames lent to capture into (the cameras copy)");
        nlent = 0;
    }
    for (int k = 0; k < 2; k++)
        if (capture_give_buffers(s->cap, k, nlent ? lent[k] : NULL, nlent, bytes, err, errlen) !=
            CAPTURE_OK)
            return -1;
    s->io_settled = 1;
    return 0;
}

/* Gives one side of a pair back to its camera at once (a copied MMAP frame). */
static void release_side(frame_source *s, capture_pair *p, int k)
{
    capture_pair one;
    memset(&one, 0, sizeof one);
    one.left.buffer = one.right.buffer = -1;
    capture_frame *f = k ? &p->right : &p->left;
    *(k ? &one.right : &one.left) = *f;
    capture_release(s->cap, &one);
    f->buffer = -1;
}

static frame_status v4l2_read(frame_source *s, uint8_t *l, uint8_t *r, frame_pair *out,
                              int timeout)
{
    char err[512];
    if (v4l2_settle(s, err, sizeof err) != 0) {
        say(s->message, sizeof s->message, "%s", err);
        return FRAME_ERROR;
    }
    capture_pair p;
    capture_status st = capture_next(s->cap, &p, timeout);
    snprintf(s->message, sizeof s->message, "%s", capture_message(s->cap));
    if (st == CAPTURE_TIMEOUT)
        return FRAME_TIMEOUT;
    if (st == CAPTURE_LOST)
        return FRAME_LOST;
    if (st != CAPTURE_OK)
        return FRAME_ERROR;
    /* USERPTR: the stage reads the frame where the driver wrote it; MMAP: one copy into the
     * slot's own frame, and the driver's buffer goes straight back (see above) */
    capture_frame *f[2] = {&p.left, &p.right};
    uint8_t *dst[2] = {l, r};
    stereo_image im[2];
    int lent = 0;
    for (int k = 0; k < 2; k++)
        if (f[k]->io == CAPTURE_IO_USERPTR) {
            im[k] = capture_frame_image(f[k]);
            lent = 1;
            s->frames_zero_copy++;
        } else {
            im[k] = pack_rows(f[k]->data, f[k]->pitch, f[k]->width, f[k]->height, f[k]->format,
                              dst[k]);
            s->frames_copied++;
            release_side(s, &p, k);
        }
    out->left = im[0];
    out->right = im[1];
    out->timestamp_ns = p.left.timestamp_ns;
    out->scene_t = 0;
    out->index = p.left.sequence;
    if (lent) { /* delivered until frame_source_release */
        pthread_mutex_lock(&s->zc_lock);
        int room = s->nout + s->nback < ZC_MAX; /* always: each entry holds a lent frame */
        if (room) {
            s->out[s->nout].data[0] = im[0].data;
            s->out[s->nout].data[1] = im[1].data;
            s->out[s->nout].pair = p;
            s->nout++;
        }
        pthread_mutex_unlock(&s->zc_lock);
        if (!room) {
            capture_release(s->cap, &p);
            say(s->message, sizeof s->message, "v4l2: more than %d pairs held", ZC_MAX);
            return FRAME_ERROR;
        }
    }
    return FRAME_OK;
}

void frame_source_lend(frame_source *s, uint8_t *left, uint8_t *right, size_t bytes)
{
    if (!s || s->ops != &v4l2_ops || s->io == CAPTURE_IO_MMAP || !left || !right)
        return;
    pthread_mutex_lock(&s->zc_lock);
    if (s->nlent < CAPTURE_MAX_BUFFERS) {
        s->lent[0][s->nlent] = left;
        s->lent[1][s->nlent] = right;
        s->lent_bytes = s->nlent == 0 || bytes < s->lent_bytes ? bytes : s->lent_bytes;
        s->nlent++;
        s->lent_new = 1;
    }
    pthread_mutex_unlock(&s->zc_lock);
}

void frame_source_release(frame_source *s, const frame_pair *p)
{
    if (!s || s->ops != &v4l2_ops || !p || !p->left.data)
        return;
    pthread_mutex_lock(&s->zc_lock);
    for (int i = 0; i < s->nout; i++)
        if (s->out[i].data[0] == p->left.data && s->out[i].data[1] == p->right.data) {
            s->back[s->nback++] = s->out[i].pair;
            s->out[i] = s->out[--s->nout];
            break;
        }
    pthread_mutex_unlock(&s->zc_lock);
}

void frame_source_reclaim(frame_source *s)
{
    if (!s || s->ops != &v4l2_ops)
        return;
    pthread_mutex_lock(&s->zc_lock);
    s->nlent = s->lent_new = s->nout = s->nback = 0;
    pthread_mutex_unlock(&s->zc_lock);
    capture_take_back_buffers(s->cap); /* the driver holds none of them afterwards */
}

static void v4l2_close(frame_source *s)
{
    capture_close(s->cap);
    pthread_mutex_destroy(&s->zc_lock);
}

static const source_ops v4l2_ops = {v4l2_read, v4l2_close};

static void camera_config(const live_config *cfg, capture_config *cc)
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
    cc->log = log_line;
}

/* After a camera failed to open: 1 if its device path (camera.KEY) does not exist, and then, when
 * the configuration file set it, err is rewritten with the file's line: "FILE:LINE: camera.KEY =
 * PATH: no such device; ...". The shipped example's placeholder (config/two-usb-cameras.ini:
 * .../usb-REPLACE_WITH_...) asks for the line to be edited; another path asks whether the camera
 * is connected. A path from the command line keeps the camera's own message. 0: the path exists
 * (err as the camera left it). */
static int camera_path_missing(const live_config *cfg, const char *key, const char *path,
                               char *err, size_t errlen)
{
    struct stat sb;
    char origin[CONFIG_PATH_MAX + 16];
    if (stat(path, &sb) == 0 || errno != ENOENT)
        return 0;
    if (!live_config_origin(cfg, "camera", key, origin, sizeof origin))
        return 1;
    if (strstr(path, "REPLACE"))
        say(err, errlen, "%s: camera.%s = %s: no such device; edit this line to name your camera "
            "(see `ls /dev/v4l/by-id/`)", origin, key, path);
    else
        say(err, errlen, "%s: camera.%s = %s: no such device: is the camera connected? "
            "(`ls /dev/v4l/by-id/` lists the cameras)", origin, key, path);
    return 1;
}

static frame_status v4l2_open(const live_config *cfg, frame_source *s, char *err, size_t errlen)
{
    capture_config cc;
    camera_config(cfg, &cc);
    cc.device[0] = cfg->left_device;
    cc.device[1] = cfg->right_device;
    /* STEREO_V4L2_IO=auto|mmap|userptr (docs/jetson.md, "Memory"); auto when unset */
    const char *env = getenv("STEREO_V4L2_IO");
    int io = env && env[0] ? capture_io_from_str(env) : CAPTURE_IO_AUTO;
    if (io < 0) {
        say(err, errlen, "STEREO_V4L2_IO=%s: not auto, mmap or userptr", env);
        return FRAME_ERROR;
    }
    cc.io = s->io = (capture_io)io;
    if (capture_open(&cc, &s->cap, err, errlen) != CAPTURE_OK) {
        if (!camera_path_missing(cfg, "left", cfg->left_device, err, errlen))
            camera_path_missing(cfg, "right", cfg->right_device, err, errlen);
        return FRAME_ERROR;
    }
    if (pthread_mutex_init(&s->zc_lock, NULL) != 0) {
        capture_close(s->cap);
        s->cap = NULL;
        say(err, errlen, "v4l2: cannot create a mutex");
        return FRAME_ERROR;
    }
    s->ops = &v4l2_ops;
    for (int k = 0; io == CAPTURE_IO_MMAP && k < 2; k++)
        fprintf(stderr, "stereo-live: %s camera %s: mmap + copy: STEREO_V4L2_IO=mmap\n",
                k ? "right" : "left", k ? cfg->right_device : cfg->left_device);
    /* room for the widest format (RGB24) and for what each driver writes (sizeimage, the
     * USERPTR frames' least length), in whole pages */
    size_t bytes = (size_t)cfg->width * cfg->height * 3;
    for (int k = 0; k < 2; k++)
        if (capture_buffer_bytes(s->cap, k) > bytes)
            bytes = capture_buffer_bytes(s->cap, k);
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0)
        bytes = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    s->info = (frame_source_info){cfg->width, cfg->height, bytes, 1, 0, 0};
    return FRAME_OK;
}

/* ---- sbs: one side-by-side camera (left half | right half), split here ---------------------- */

static frame_status sbs_start(frame_source *s, char *err, size_t errlen)
{
    /* mmap + one copy: the halves are split into two frames (see sbs_read) */
    if (v4l2_camera_open(&s->cam_cfg, 0, CAPTURE_IO_MMAP, &s->cam, err, errlen) != CAPTURE_OK)
        return FRAME_ERROR;
    if (v4l2_camera_start(s->cam, err, errlen) != CAPTURE_OK) {
        v4l2_camera_close(s->cam);
        s->cam = NULL;
        return FRAME_ERROR;
    }
    return FRAME_OK;
}

static void sbs_stop(frame_source *s)
{
    v4l2_camera_stop(s->cam);
    v4l2_camera_close(s->cam);
    s->cam = NULL;
}

static void sbs_lose(frame_source *s, const char *reason)
{
    sbs_stop(s);
    s->cam_losses++;
    s->retry_at_ns = monotonic_ns() + SBS_RETRY_MS * 1000000LL;
    say(s->message, sizeof s->message, "sbs camera %s: lost (%s), retrying every %d s", s->device,
        reason, SBS_RETRY_MS / 1000);
    log_line(NULL, s->message);
}

static frame_status sbs_read(frame_source *s, uint8_t *l, uint8_t *r, frame_pair *out,
                             int timeout)
{
    char err[512];
    if (!s->cam) { /* lost: reopen by path once the retry time has come */
        int64_t wait_ms = (s->retry_at_ns - monotonic_ns()) / 1000000;
        if (wait_ms > 0) {
            if (wait_ms > timeout)
                wait_ms = timeout;
            struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
            return FRAME_LOST;
        }
        if (sbs_start(s, err, sizeof err) != FRAME_OK) {
            s->retry_at_ns = monotonic_ns() + SBS_RETRY_MS * 1000000LL;
            return FRAME_LOST;
        }
        s->cam_reconnects++;
        log_line(NULL, "sbs camera reconnected");
        s->message[0] = 0;
    }
    struct pollfd pfd = {.fd = v4l2_camera_fd(s->cam), .events = POLLIN};
    int n = poll(&pfd, 1, timeout);
    if (n < 0 && errno != EINTR) {
        sbs_lose(s, strerror(errno));
        return FRAME_LOST;
    }
    if (n <= 0)
        return FRAME_TIMEOUT;
    capture_frame f;
    int got = v4l2_camera_dequeue(s->cam, &f, &s->cam_errors, err, sizeof err);
    if (got < 0) {
        sbs_lose(s, errno == ENODEV ? "unplugged" : err);
        return FRAME_LOST;
    }
    if (got == 0) {
        if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) {
            sbs_lose(s, "the device reported an error");
            return FRAME_LOST;
        }
        return FRAME_TIMEOUT;
    }
    /* split: each half into its own frame (the stage reads a frame in place only from the start
     * of its allocation) */
    int half = f.width / 2;
    out->left = pack_rows(f.data, f.pitch, half, f.height, f.format, l);
    out->right = pack_rows(f.data + (size_t)half * stereo_pixfmt_bytes(f.format), f.pitch, half,
                           f.height, f.format, r);
    out->timestamp_ns = f.timestamp_ns;
    out->scene_t = 0;
    out->index = f.sequence;
    s->cam_frames++;
    if (v4l2_camera_requeue(s->cam, f.buffer) != 0)
        sbs_lose(s, "cannot give a buffer back to the driver");
    return FRAME_OK;
}

static void sbs_close(frame_source *s)
{
    if (s->cam)
        sbs_stop(s);
}

static const source_ops sbs_ops = {sbs_read, sbs_close};

static frame_status sbs_open(const live_config *cfg, frame_source *s, char *err, size_t errlen)
{
    /* YUYV pairs pixels: each half must start on a pixel pair */
    if (cfg->width % 4 != 0) {
        say(err, errlen, "sbs: camera width %d must be a multiple of 4 (two halves of whole "
            "pixel pairs)", cfg->width);
        return FRAME_ERROR;
    }
    snprintf(s->device, sizeof s->device, "%s", cfg->sbs_device);
    camera_config(cfg, &s->cam_cfg);
    s->cam_cfg.device[0] = s->device;
    if (s->cam_cfg.buffers == 0)
        s->cam_cfg.buffers = CAPTURE_MIN_BUFFERS;
    s->cam_cfg.retry_ms = SBS_RETRY_MS;
    char why[512];
    if (sbs_start(s, why, sizeof why) != FRAME_OK) {
        say(err, errlen, "sbs: %s", why);
        camera_path_missing(cfg, "device", cfg->sbs_device, err, errlen);
        return FRAME_ERROR;
    }
    s->ops = &sbs_ops;
    fprintf(stderr, "stereo-live: sbs camera %s: mmap + copy: the side-by-side frame is split "
            "into two images\n", s->device);
    s->info = (frame_source_info){cfg->width / 2, cfg->height,
                                  (size_t)(cfg->width / 2) * cfg->height * 3, 1, 0, 0};
    return FRAME_OK;
}

#else /* LIVE_LIBC_ONLY: no cameras in this binary */
static const source_ops sbs_ops = {NULL, NULL}; /* never opened (frame_source_stats_line) */

static frame_status camera_not_built(const char *source, char *err, size_t errlen)
{
    say(err, errlen, "not built in this binary: source %s (cameras need libv4l2; "
        "build/stereo-live has them)", source);
    return FRAME_ERROR;
}

static frame_status v4l2_open(const live_config *cfg, frame_source *s, char *err, size_t errlen)
{
    (void)cfg, (void)s;
    return camera_not_built("v4l2", err, errlen);
}

static frame_status sbs_open(const live_config *cfg, frame_source *s, char *err, size_t errlen)
{
    (void)cfg, (void)s;
    return camera_not_built("sbs", err, errlen);
}

/* no camera: nothing is ever lent */
void frame_source_lend(frame_source *s, uint8_t *left, uint8_t *right, size_t bytes)
{
    (void)s, (void)left, (void)right, (void)bytes;
}

void frame_source_release(frame_source *s, const frame_pair *p) { (void)s, (void)p; }

void frame_source_reclaim(frame_source *s) { (void)s; }
#endif

/* ---- the interface -------------------------------------------------------------------------- */

frame_status frame_source_open(const live_config *cfg, frame_source **out, char *err,
                               size_t errlen)
{
    *out = NULL;
    frame_source *s = calloc(1, sizeof *s);
    if (!s) {
        say(err, errlen, "source: out of memory");
        return FRAME_ERROR;
    }
    frame_status st;
    switch (cfg->source) {
    case SOURCE_SYNTH: st = synth_open(cfg, s, err, errlen); break;
    case SOURCE_FILES: st = files_open(cfg, s, err, errlen); break;
    case SOURCE_V4L2: st = v4l2_open(cfg, s, err, errlen); break;
    case SOURCE_SBS: st = sbs_open(cfg, s, err, errlen); break;
    default:
        say(err, errlen, "source: unknown type %d", (int)cfg->source);
        st = FRAME_ERROR;
    }
    if (st != FRAME_OK) {
        free(s);
        return st;
    }
    *out = s;
    return FRAME_OK;
}

void frame_source_info_get(const frame_source *s, frame_source_info *out) { *out = s->info; }

frame_status frame_source_read(frame_source *s, uint8_t *left_buf, uint8_t *right_buf,
                               frame_pair *out, int timeout_ms)
{
    memset(out, 0, sizeof *out);
    return s->ops->read(s, left_buf, right_buf, out, timeout_ms);
}

const char *frame_source_message(const frame_source *s) { return s->message; }

void frame_source_stats_line(const frame_source *s, char *buf, size_t len)
{
    if (s->cap) {
        capture_stats cs;
        capture_stats_get(s->cap, &cs);
        say(buf, len, "cameras: %llu pairs, skew %.1f ms (max %.1f), %llu+%llu unpaired, "
            "%llu stale, %llu+%llu errors, %llu+%llu losses", (unsigned long long)cs.pairs,
            cs.skew_ns / 1e6, cs.max_skew_ns / 1e6,
            (unsigned long long)cs.unpaired[0], (unsigned long long)cs.unpaired[1],
            (unsigned long long)cs.stale_pairs, (unsigned long long)cs.errors[0],
            (unsigned long long)cs.errors[1], (unsigned long long)cs.losses[0],
            (unsigned long long)cs.losses[1]);
        size_t n = strlen(buf);
        if (n < len) /* frames the stage read where the driver wrote them / copied once */
            say(buf + n, len - n, ", frames %llu zero-copy %llu copied",
                (unsigned long long)s->frames_zero_copy, (unsigned long long)s->frames_copied);
    } else if (s->ops == &sbs_ops) {
        say(buf, len, "sbs camera: %llu frames, %llu errors, %llu losses, %llu reconnects",
            (unsigned long long)s->cam_frames, (unsigned long long)s->cam_errors,
            (unsigned long long)s->cam_losses, (unsigned long long)s->cam_reconnects);
    } else if (len) {
        buf[0] = 0;
    }
}

void frame_source_close(frame_source *s)
{
    if (!s)
        return;
    s->ops->close(s);
    free(s);
}

/* ---- recording ------------------------------------------------------------------------------ */
#if !LIVE_LIBC_ONLY

struct pair_recorder {
    char dir[PATH_MAX];
    FILE *stamps;
    long count;
    int64_t first_ns, last_ns;
    int width, height, channels; /* of the first pair's images */
    uint8_t *row;          /* YUYV -> Y conversion, one image */
    size_t row_bytes;
    live_config settings;  /* of the recording, for replay.ini ([calibration] maps absolute) */
};

/* [calibration] maps made absolute, one file or LEFT,RIGHT, so that replay.ini works from any
 * directory; a part that cannot be resolved stays as given (the app loaded it already). */
static void absolute_maps(const char *maps, char *out, size_t len)
{
    char part[2][CONFIG_PATH_MAX], abs[2][PATH_MAX];
    const char *comma = strchr(maps, ',');
    snprintf(part[0], sizeof part[0], "%.*s", comma ? (int)(comma - maps) : (int)strlen(maps),
             maps);
    snprintf(part[1], sizeof part[1], "%s", comma ? comma + 1 : "");
    for (int k = 0; k < 2; k++) { /* blanks around the comma are ignored by the config */
        char *s = part[k], *e = s + strlen(s);
        while (*s == ' ' || *s == '\t')
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        if (!*s || !realpath(s, abs[k]))
            snprintf(abs[k], sizeof abs[k], "%s", s);
    }
    if (comma)
        say(out, len, "%s,%s", abs[0], abs[1]);
    else
        say(out, len, "%s", abs[0]);
}

int pair_recorder_open(const live_config *cfg, pair_recorder **out, char *err, size_t errlen)
{
    const char *dir = cfg->record_dir;
    *out = NULL;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        say(err, errlen, "%s: cannot create the recording folder: %s", dir, strerror(errno));
        return -1;
    }
    pair_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        say(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    /* absolute, so replay.ini works from any directory */
    if (!realpath(dir, r->dir)) {
        say(err, errlen, "%s: %s", dir, strerror(errno));
        free(r);
        return -1;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/timestamps.txt", r->dir);
    if (!(r->stamps = fopen(path, "w"))) {
        say(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        free(r);
        return -1;
    }
    fprintf(r->stamps, "# index t_ns (CLOCK_MONOTONIC, relative to the first pair)\n");
    r->settings = *cfg;
    if (cfg->maps[0]) {
        char maps[CONFIG_PATH_MAX];
        absolute_maps(cfg->maps, maps, sizeof maps);
        snprintf(r->settings.maps, sizeof r->settings.maps, "%s", maps);
    }
    *out = r;
    return 0;
}

/* One side as an image_io image: GREY8 / RGB24 rows as they are, YUYV's Y plane. */
static int write_side(pair_recorder *r, const stereo_image *im, const char *path, char *err,
                      size_t errlen)
{
    int channels = im->format == STEREO_PIX_RGB24 ? 3 : 1;
    size_t need = (size_t)im->width * im->height * channels;
    if (need > r->row_bytes) {
        uint8_t *p = realloc(r->row, need);
        if (!p) {
            say(err, errlen, "%s: out of memory", path);
            return -1;
        }
        r->row = p;
        r->row_bytes = need;
    }
    for (int y = 0; y < im->height; y++) {
        const uint8_t *src = im->data + y * im->pitch;
        uint8_t *dst = r->row + (size_t)y * im->width * channels;
        if (im->format == STEREO_PIX_YUYV)
            for (int x = 0; x < im->width; x++)
                dst[x] = src[2 * x];
        else
            memcpy(dst, src, (size_t)im->width * channels);
    }
    image img = {im->width, im->height, channels, 8, r->row};
    return image_write(path, &img, err, errlen);
}

int pair_recorder_write(pair_recorder *r, const frame_pair *p, char *err, size_t errlen)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/left_%06ld.png", r->dir, r->count);
    if (write_side(r, &p->left, path, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/right_%06ld.png", r->dir, r->count);
    if (write_side(r, &p->right, path, err, errlen) != 0)
        return -1;
    if (r->count == 0) {
        r->first_ns = p->timestamp_ns;
        r->width = p->left.width;
        r->height = p->left.height;
        r->channels = p->left.format == STEREO_PIX_RGB24 ? 3 : 1;
    }
    r->last_ns = p->timestamp_ns;
    fprintf(r->stamps, "%ld %lld\n", r->count, (long long)(p->timestamp_ns - r->first_ns));
    if (fflush(r->stamps) != 0) {
        say(err, errlen, "%s/timestamps.txt: %s", r->dir, strerror(errno));
        return -1;
    }
    r->count++;
    return 0;
}

long pair_recorder_count(const pair_recorder *r) { return r->count; }

/* A path for a printf pattern: '%' doubled. */
static void escape_percent(const char *in, char *out, size_t len)
{
    size_t k = 0;
    for (; *in && k + 2 < len; in++) {
        if (*in == '%')
            out[k++] = '%';
        out[k++] = *in;
    }
    out[k] = 0;
}

typedef struct {
    const pair_recorder *r;
    const char *path, *dir; /* dir with '%' doubled */
    int fps;
} replay_ini;

/* replay.ini (a file_writer for atomic_write_file): the files source over the recording, and
 * every setting that shaped its disparities, so that the replay computes the same ones: the
 * whole [stereo] section as used and [calibration] (the pairs are recorded as the source gave
 * them, before rectification: the stage rectifies them with the same maps again). */
static int write_replay_ini(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const replay_ini *ini = ctx;
    const pair_recorder *r = ini->r;
    fprintf(f, "# written by stereo-live --record: %ld pairs of %dx%d %s images (as the source "
               "gave them,\n# before rectification) at %d pairs/s, with the settings below; "
               "replay with\n#   stereo-live --config %s\n"
               "[source]\ntype = files\n\n[files]\nleft = %s/left_%%06d.png\n"
               "right = %s/right_%%06d.png\nfps = %d\nloop = false\n\n",
            r->count, r->width, r->height, r->channels == 3 ? "RGB" : "grey", ini->fps, ini->path,
            ini->dir, ini->dir, ini->fps);
    if (live_config_write_section(f, &r->settings, "stereo") != 0) {
        say(err, errlen, "%s: cannot write the [stereo] settings", path);
        return -1;
    }
    fputc('\n', f);
    if (live_config_write_section(f, &r->settings, "calibration") != 0) {
        say(err, errlen, "%s: [calibration] maps '%s' cannot be written as one INI value", path,
            r->settings.maps);
        return -1;
    }
    return 0;
}

int pair_recorder_close(pair_recorder *r, char *err, size_t errlen)
{
    if (!r)
        return 0;
    int rc = 0;
    if (fclose(r->stamps) != 0) {
        say(err, errlen, "%s/timestamps.txt: %s", r->dir, strerror(errno));
        rc = -1;
    }
    char path[PATH_MAX + 32], dir[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/replay.ini", r->dir);
    escape_percent(r->dir, dir, sizeof dir);
    /* replay at the recorded rate */
    int fps = 0;
    if (r->count > 1 && r->last_ns > r->first_ns)
        fps = (int)((double)(r->count - 1) * 1e9 / (double)(r->last_ns - r->first_ns) + 0.5);
    if (fps < 1)
        fps = 1;
    replay_ini ini = {r, path, dir, fps};
    char werr[2 * PATH_MAX + 128];
    if (atomic_write_file(path, write_replay_ini, &ini, werr, sizeof werr) != 0) {
        if (rc == 0)
            say(err, errlen, "%s", werr);
        rc = -1;
    }
    free(r->row);
    free(r);
    return rc;
}
#else /* LIVE_LIBC_ONLY */
int pair_recorder_open(const live_config *cfg, pair_recorder **out, char *err, size_t errlen)
{
    *out = NULL;
    say(err, errlen, "not built in this binary: recording to %s (PNG files need libpng; "
        "build/stereo-live has it)", cfg->record_dir);
    return -1;
}

int pair_recorder_write(pair_recorder *r, const frame_pair *p, char *err, size_t errlen)
{
    (void)r, (void)p;
    say(err, errlen, "not built in this binary: recording");
    return -1;
}

long pair_recorder_count(const pair_recorder *r)
{
    (void)r;
    return 0;
}

int pair_recorder_close(pair_recorder *r, char *err, size_t errlen)
{
    (void)r, (void)err, (void)errlen;
    return 0;
}
#endif
