/* SPDX-License-Identifier: Apache-2.0 */
/* capture.c — the capture interface: checks the configuration, applies its defaults and routes
 * every call to the backend's capture_ops table (capture_backend.h). */
#include "capture_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct capture {
    const capture_ops *ops;
    void *state;
    int n; /* cameras */
};

static const struct {
    capture_backend id;
    const capture_ops *ops;
} backends[] = {
    {CAPTURE_V4L2_PAIR, &capture_v4l2_pair_ops},
};

static const char *const format_names[] = {
    [CAPTURE_FORMAT_AUTO] = "auto",
    [CAPTURE_FORMAT_YUYV] = "yuyv",
    [CAPTURE_FORMAT_GREY] = "grey",
    [CAPTURE_FORMAT_RGB24] = "rgb24",
};

static const char *const io_names[] = {
    [CAPTURE_IO_MMAP] = "mmap",
    [CAPTURE_IO_AUTO] = "auto",
    [CAPTURE_IO_USERPTR] = "userptr",
};

int capture_io_from_str(const char *s)
{
    for (size_t i = 0; s && i < sizeof io_names / sizeof io_names[0]; i++)
        if (strcasecmp(s, io_names[i]) == 0)
            return (int)i;
    return -1;
}

const char *capture_io_to_str(capture_io io)
{
    if ((unsigned)io < sizeof io_names / sizeof io_names[0])
        return io_names[io];
    return "?";
}

int capture_format_from_str(const char *s)
{
    for (size_t i = 0; s && i < sizeof format_names / sizeof format_names[0]; i++)
        if (strcasecmp(s, format_names[i]) == 0)
            return (int)i;
    return -1;
}

const char *capture_format_to_str(capture_format f)
{
    if ((unsigned)f < sizeof format_names / sizeof format_names[0])
        return format_names[f];
    return "?";
}

void capture_log(const capture_config *cfg, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (cfg && cfg->log)
        cfg->log(cfg->log_user, line);
    else
        fprintf(stderr, "capture: %s\n", line);
}

void capture_frame_clear(capture_frame *f)
{
    memset(f, 0, sizeof *f);
    f->buffer = -1;
}

void capture_pair_clear(capture_pair *p)
{
    capture_frame_clear(&p->left);
    capture_frame_clear(&p->right);
    p->skew_ns = 0;
}

void capture_set_clear(capture_set *s, int n)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->ref = -1;
    for (int k = 0; k < CAPTURE_MAX_CAMERAS; k++)
        capture_frame_clear(&s->frame[k]);
}

void capture_camera_name(const capture_config *cfg, int k, char *buf, size_t len)
{
    const char *path = k >= 0 && k < CAPTURE_MAX_CAMERAS && cfg->device[k] ? cfg->device[k] : "?";
    if (cfg->ncameras <= 2)
        snprintf(buf, len, "%s camera %s", k ? "right" : "left", path);
    else
        snprintf(buf, len, "camera %d %s", k, path);
}

/* Checks cfg and writes it with its defaults applied into *out. */
static capture_status resolve_config(const capture_config *cfg, capture_config *out, char *err,
                                     size_t errlen)
{
    *out = *cfg;
    if (cfg->ncameras == 0)
        out->ncameras = 2;
    else if (cfg->ncameras < 2 || cfg->ncameras > CAPTURE_MAX_CAMERAS) {
        snprintf(err, errlen, "capture: %d cameras is not valid (2..%d)", cfg->ncameras,
                 CAPTURE_MAX_CAMERAS);
        return CAPTURE_ERR_PARAM;
    }
    if (cfg->backend == CAPTURE_V4L2_PAIR)
        for (int i = 0; i < out->ncameras; i++)
            if (!cfg->device[i] || !cfg->device[i][0]) {
                if (out->ncameras == 2)
                    snprintf(err, errlen, "capture: no %s camera device given",
                             i ? "right" : "left");
                else
                    snprintf(err, errlen, "capture: no device given for camera %d (of %d)", i,
                             out->ncameras);
                return CAPTURE_ERR_PARAM;
            }
    for (int i = out->ncameras; i < CAPTURE_MAX_CAMERAS; i++)
        out->device[i] = NULL; /* not ours */
    if (cfg->width <= 0 || cfg->height <= 0 || cfg->width > 16384 || cfg->height > 16384) {
        snprintf(err, errlen, "capture: size %dx%d is not valid", cfg->width, cfg->height);
        return CAPTURE_ERR_PARAM;
    }
    if (cfg->fps < 0 || cfg->fps > 1000) {
        snprintf(err, errlen, "capture: fps %d is not valid (1..1000, or 0 for the driver's)",
                 cfg->fps);
        return CAPTURE_ERR_PARAM;
    }
    if ((unsigned)cfg->format > CAPTURE_FORMAT_RGB24) {
        snprintf(err, errlen, "capture: pixel format %d is not valid", (int)cfg->format);
        return CAPTURE_ERR_PARAM;
    }
    if ((unsigned)cfg->io > CAPTURE_IO_USERPTR) {
        snprintf(err, errlen, "capture: I/O mode %d is not valid", (int)cfg->io);
        return CAPTURE_ERR_PARAM;
    }
    if (cfg->buffers == 0)
        out->buffers = CAPTURE_MIN_BUFFERS;
    else if (cfg->buffers < CAPTURE_MIN_BUFFERS || cfg->buffers > CAPTURE_MAX_BUFFERS) {
        snprintf(err, errlen, "capture: %d buffers per camera is not valid (%d..%d)", cfg->buffers,
                 CAPTURE_MIN_BUFFERS, CAPTURE_MAX_BUFFERS);
        return CAPTURE_ERR_PARAM;
    }
    if (cfg->max_skew_ns < 0) {
        snprintf(err, errlen, "capture: negative max skew %lld ns", (long long)cfg->max_skew_ns);
        return CAPTURE_ERR_PARAM;
    }
    if (cfg->max_skew_ns == 0) /* half a period: every frame then has a partner candidate */
        out->max_skew_ns = cfg->fps > 0 ? 500000000LL / cfg->fps : 20000000LL;
    if (cfg->retry_ms < 0) {
        snprintf(err, errlen, "capture: negative retry interval %d ms", cfg->retry_ms);
        return CAPTURE_ERR_PARAM;
    }
    if (cfg->retry_ms == 0)
        out->retry_ms = 1000;
    if (cfg->ncontrols < 0 || cfg->ncontrols > CAPTURE_MAX_CONTROLS) {
        snprintf(err, errlen, "capture: %d controls is not valid (at most %d)", cfg->ncontrols,
                 CAPTURE_MAX_CONTROLS);
        return CAPTURE_ERR_PARAM;
    }
    for (int i = 0; i < cfg->ncontrols; i++)
        if (!memchr(cfg->controls[i].name, 0, sizeof cfg->controls[i].name) ||
            !cfg->controls[i].name[0]) {
            snprintf(err, errlen, "capture: control %d has no name", i + 1);
            return CAPTURE_ERR_PARAM;
        }
    return CAPTURE_OK;
}

capture_status capture_open(const capture_config *cfg, capture **out, char *err, size_t errlen)
{
    capture_config rc;
    capture *c = NULL;
    capture_status st;
    if (!out) {
        snprintf(err, errlen, "capture: no place for the handle");
        return CAPTURE_ERR_PARAM;
    }
    *out = NULL;
    if (!cfg) {
        snprintf(err, errlen, "capture: no configuration");
        return CAPTURE_ERR_PARAM;
    }
    if ((st = resolve_config(cfg, &rc, err, errlen)) != CAPTURE_OK)
        return st;
    const capture_ops *ops = NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (backends[i].id == rc.backend)
            ops = backends[i].ops;
    if (!ops) {
        snprintf(err, errlen, "capture: backend %d is not built in", (int)rc.backend);
        return CAPTURE_ERR_PARAM;
    }
    if (!(c = calloc(1, sizeof *c))) {
        snprintf(err, errlen, "capture: out of memory");
        return CAPTURE_ERR_NOMEM;
    }
    c->ops = ops;
    c->n = rc.ncameras;
    if ((st = ops->open(&rc, &c->state, err, errlen)) != CAPTURE_OK) {
        free(c);
        return st;
    }
    *out = c;
    return CAPTURE_OK;
}

capture_status capture_next_set(capture *c, capture_set *out, int timeout_ms)
{
    if (out)
        capture_set_clear(out, c ? c->n : 0);
    if (!c || !out || timeout_ms < 0)
        return CAPTURE_ERR_PARAM;
    return c->ops->next(c->state, out, timeout_ms);
}

void capture_release_set(capture *c, capture_set *s)
{
    if (c && s)
        c->ops->release(c->state, s);
}

capture_status capture_next(capture *c, capture_pair *out, int timeout_ms)
{
    if (out)
        capture_pair_clear(out);
    if (!c || !out || timeout_ms < 0 || c->n != 2)
        return CAPTURE_ERR_PARAM;
    capture_set s;
    capture_status st = capture_next_set(c, &s, timeout_ms);
    if (st == CAPTURE_OK) {
        out->left = s.frame[0];
        out->right = s.frame[1];
        out->skew_ns = s.skew_ns[1];
    }
    return st;
}

void capture_release(capture *c, capture_pair *p)
{
    if (!c || !p)
        return;
    capture_set s;
    capture_set_clear(&s, c->n);
    s.frame[0] = p->left;
    s.frame[1] = p->right;
    s.mask = (p->left.buffer >= 0) | (p->right.buffer >= 0) << 1;
    c->ops->release(c->state, &s);
    capture_pair_clear(p);
}

int capture_cameras(const capture *c)
{
    return c ? c->n : 0;
}

unsigned capture_cameras_up(const capture *c)
{
    capture_stats s;
    capture_stats_get(c, &s);
    return s.up;
}

void capture_stats_get(const capture *c, capture_stats *out)
{
    memset(out, 0, sizeof *out);
    if (c)
        c->ops->stats(c->state, out);
}

const char *capture_message(const capture *c)
{
    return c ? c->ops->message(c->state) : "";
}

capture_io capture_io_mode(const capture *c, int camera, const char **why)
{
    if (why)
        *why = "";
    if (!c || camera < 0 || camera >= c->n)
        return CAPTURE_IO_MMAP;
    return c->ops->io_mode(c->state, camera, why);
}

size_t capture_buffer_bytes(const capture *c, int camera)
{
    if (!c || camera < 0 || camera >= c->n)
        return 0;
    return c->ops->buffer_bytes(c->state, camera);
}

capture_status capture_give_buffers(capture *c, int camera, void *const *buffers, int n,
                                    size_t bytes, char *err, size_t errlen)
{
    if (!c || camera < 0 || camera >= c->n || n < 0 || (n > 0 && !buffers)) {
        snprintf(err, errlen, "capture: give buffers: bad arguments (camera %d, %d buffers)",
                 camera, n);
        return CAPTURE_ERR_PARAM;
    }
    return c->ops->give_buffers(c->state, camera, buffers, n, bytes, err, errlen);
}

void capture_take_back_buffers(capture *c)
{
    if (c)
        c->ops->take_back_buffers(c->state);
}

void capture_close(capture *c)
{
    if (!c)
        return;
    c->ops->close(c->state);
    free(c);
}

void camera_fourcc_str(uint32_t f, char s[5])
{
    for (int i = 0; i < 4; i++) {
        char ch = (char)((f >> (8 * i)) & 0xff);
        s[i] = ch > ' ' && ch < 127 ? ch : '.';
    }
    s[4] = 0;
}
