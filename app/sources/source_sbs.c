/* SPDX-License-Identifier: Apache-2.0 */
/* source_sbs.c — one side-by-side V4L2 camera (left half | right half) as a frame source (input
 * v4l2:///dev/videoN, or the older [source] type = sbs with [camera] device), split here: mmap
 * and one copy per half. A lost camera is reopened by path every SOURCE_RETRY_MS. */
#include "source_backend.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "v4l2_camera.h"

typedef struct {
    capture_config cam_cfg;    /* outlives the camera (v4l2_camera.h keeps a pointer) */
    char device[CONFIG_PATH_MAX];
    v4l2_camera *cam;
    int64_t retry_at_ns;       /* lost: the next reopen attempt */
    uint64_t cam_errors, cam_frames, cam_losses, cam_reconnects;
} sbs_source;

static frame_status sbs_start(frame_source *s, char *err, size_t errlen)
{
    sbs_source *b = s->state;
    /* mmap + one copy: the halves are split into two frames (see sbs_read) */
    if (v4l2_camera_open(&b->cam_cfg, 0, CAPTURE_IO_MMAP, &b->cam, err, errlen) != CAPTURE_OK)
        return FRAME_ERROR;
    if (v4l2_camera_start(b->cam, err, errlen) != CAPTURE_OK) {
        v4l2_camera_close(b->cam);
        b->cam = NULL;
        return FRAME_ERROR;
    }
    return FRAME_OK;
}

static void sbs_stop(frame_source *s)
{
    sbs_source *b = s->state;
    v4l2_camera_stop(b->cam);
    v4l2_camera_close(b->cam);
    b->cam = NULL;
}

static void sbs_lose(frame_source *s, const char *reason)
{
    sbs_source *b = s->state;
    sbs_stop(s);
    b->cam_losses++;
    b->retry_at_ns = source_now_ns() + SOURCE_RETRY_MS * 1000000LL;
    say(s->message, sizeof s->message, "sbs camera %s: lost (%s), retrying every %d s", b->device,
        reason, SOURCE_RETRY_MS / 1000);
    source_log(NULL, s->message);
}

static frame_status sbs_read(frame_source *s, uint8_t *const buf[], frame_pair *out,
                             int timeout)
{
    sbs_source *b = s->state;
    uint8_t *l = buf[0], *r = buf[1];
    char err[512];
    if (!b->cam) { /* lost: reopen by path once the retry time has come */
        int64_t wait_ms = (b->retry_at_ns - source_now_ns()) / 1000000;
        if (wait_ms > 0) {
            if (wait_ms > timeout)
                wait_ms = timeout;
            struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
            return FRAME_LOST;
        }
        if (sbs_start(s, err, sizeof err) != FRAME_OK) {
            b->retry_at_ns = source_now_ns() + SOURCE_RETRY_MS * 1000000LL;
            return FRAME_LOST;
        }
        b->cam_reconnects++;
        source_log(NULL, "sbs camera reconnected");
        s->message[0] = 0;
    }
    struct pollfd pfd = {.fd = v4l2_camera_fd(b->cam), .events = POLLIN};
    int n = poll(&pfd, 1, timeout);
    if (n < 0 && errno != EINTR) {
        sbs_lose(s, strerror(errno));
        return FRAME_LOST;
    }
    if (n <= 0)
        return FRAME_TIMEOUT;
    capture_frame f;
    int got = v4l2_camera_dequeue(b->cam, &f, &b->cam_errors, err, sizeof err);
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
    out->left = source_pack_rows(f.data, f.pitch, half, f.height, f.format, l);
    out->right = source_pack_rows(f.data + (size_t)half * stereo_pixfmt_bytes(f.format), f.pitch, half,
                           f.height, f.format, r);
    out->timestamp_ns = f.timestamp_ns;
    out->scene_t = 0;
    out->index = f.sequence;
    b->cam_frames++;
    if (v4l2_camera_requeue(b->cam, f.buffer) != 0)
        sbs_lose(s, "cannot give a buffer back to the driver");
    return FRAME_OK;
}

static void sbs_close(frame_source *s)
{
    sbs_source *b = s->state;
    if (b->cam)
        sbs_stop(s);
    free(b);
}

static void sbs_stats_line(const frame_source *s, char *buf, size_t len)
{
    const sbs_source *b = s->state;
    say(buf, len, "sbs camera: %llu frames, %llu errors, %llu losses, %llu reconnects",
        (unsigned long long)b->cam_frames, (unsigned long long)b->cam_errors,
        (unsigned long long)b->cam_losses, (unsigned long long)b->cam_reconnects);
}

static frame_status sbs_open(frame_source *s, const live_config *cfg, const source_plan *plan,
                             char *err, size_t errlen)
{
    /* YUYV pairs pixels: each half must start on a pixel pair */
    if (cfg->width % 4 != 0) {
        say(err, errlen, "sbs: camera width %d must be a multiple of 4 (two halves of whole "
            "pixel pairs)", cfg->width);
        return FRAME_ERROR;
    }
    sbs_source *b = calloc(1, sizeof *b);
    if (!b) {
        say(err, errlen, "sbs: out of memory");
        return FRAME_ERROR;
    }
    s->state = b;
    snprintf(b->device, sizeof b->device, "%s", plan->uri[0].target);
    source_camera_config(cfg, &b->cam_cfg);
    b->cam_cfg.device[0] = b->device;
    if (b->cam_cfg.buffers == 0)
        b->cam_cfg.buffers = CAPTURE_MIN_BUFFERS;
    b->cam_cfg.retry_ms = SOURCE_RETRY_MS;
    char why[512];
    if (sbs_start(s, why, sizeof why) != FRAME_OK) {
        say(err, errlen, "sbs: %s", why);
        source_camera_path_missing(cfg, plan->from_type ? "camera" : "source",
                                   plan->from_type ? "device" : "input", b->device, err, errlen);
        free(b);
        s->state = NULL;
        return FRAME_ERROR;
    }
    fprintf(stderr, "stereo-live: sbs camera %s: mmap + copy: the side-by-side frame is split "
            "into two images\n", b->device);
    s->info = (frame_source_info){cfg->width / 2, cfg->height,
                                  (size_t)(cfg->width / 2) * cfg->height * 3, 1, 0, 0, 2};
    return FRAME_OK;
}

const source_ops source_sbs_ops = {
    .name = "sbs", .open = sbs_open, .read = sbs_read, .close = sbs_close,
    .stats_line = sbs_stats_line,
};
