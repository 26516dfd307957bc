/* SPDX-License-Identifier: Apache-2.0 */
/* v4l2_camera.c — one V4L2 camera: libv4l2 open, format, frame rate, controls, mmap or USERPTR
 * streaming.
 *
 * Everything goes through libv4l2 (v4l2_open / v4l2_ioctl / v4l2_mmap), so a camera that only
 * offers MJPEG (or another format libv4lconvert knows) can still be captured as RGB24: libv4l2
 * lists the converted formats beside the native ones and converts in DQBUF. The exception is
 * USERPTR streaming (v4l2_camera.h): its five streaming ioctls go to the driver directly.
 *
 * The lifecycle and the buffer ownership rules are in v4l2_camera.h. Errors are one line:
 * "capture: <role> camera <path>: <problem>", with the ioctl's name and strerror where an ioctl
 * failed, and what the device offers where it cannot do what the configuration asks.
 */
#include "v4l2_camera.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include <libv4l2.h>
#include <linux/videodev2.h>

#include "capture_backend.h"

/* The driver must grant at least this many buffers: one waits for its partner, one is with the
 * consumer, one is being filled. */
#define MIN_GRANTED_BUFFERS 3

typedef enum { BUF_IDLE = 0, BUF_QUEUED, BUF_HELD } buffer_state;

typedef struct {
    void *start;          /* MMAP: our mapping of the driver's buffer; USERPTR: the caller's */
    size_t length;
    buffer_state state;
} buffer;

struct v4l2_camera {
    const capture_config *cfg; /* owned by the backend; outlives the camera */
    char name[300];            /* "left camera /dev/video0", the prefix of every message */
    int fd;
    int streaming;
    uint32_t fourcc;
    stereo_pixfmt format;
    int width, height;
    size_t pitch;
    size_t min_bytes;          /* a frame shorter than this is incomplete */
    size_t sizeimage;          /* the driver's frame size: the least a user buffer must hold */
    capture_io io;             /* MMAP or USERPTR */
    char io_why[200];          /* MMAP although AUTO was asked: why */
    double fps;
    buffer *buf;
    int nbuf;
    int held;
    int said_clock;            /* logged once that timestamps are not monotonic */
};

/* ---- tables ------------------------------------------------------------------------------- */

static const struct {
    capture_format format;
    uint32_t fourcc;
    stereo_pixfmt pixfmt;
    int bytes_per_pixel;
} formats[] = {
    {CAPTURE_FORMAT_YUYV, V4L2_PIX_FMT_YUYV, STEREO_PIX_YUYV, 2},
    {CAPTURE_FORMAT_GREY, V4L2_PIX_FMT_GREY, STEREO_PIX_GREY8, 1},
    {CAPTURE_FORMAT_RGB24, V4L2_PIX_FMT_RGB24, STEREO_PIX_RGB24, 3},
};
#define NFORMATS (int)(sizeof formats / sizeof formats[0])

/* Control names as v4l2-ctl prints them; both the current and the older uvcvideo spelling. */
static const struct {
    const char *name;
    uint32_t id;
} control_names[] = {
    {"brightness", V4L2_CID_BRIGHTNESS},
    {"contrast", V4L2_CID_CONTRAST},
    {"saturation", V4L2_CID_SATURATION},
    {"hue", V4L2_CID_HUE},
    {"gamma", V4L2_CID_GAMMA},
    {"sharpness", V4L2_CID_SHARPNESS},
    {"backlight_compensation", V4L2_CID_BACKLIGHT_COMPENSATION},
    {"gain", V4L2_CID_GAIN},
    {"autogain", V4L2_CID_AUTOGAIN},
    {"gain_automatic", V4L2_CID_AUTOGAIN},
    {"white_balance_automatic", V4L2_CID_AUTO_WHITE_BALANCE},
    {"white_balance_temperature_auto", V4L2_CID_AUTO_WHITE_BALANCE},
    {"white_balance_temperature", V4L2_CID_WHITE_BALANCE_TEMPERATURE},
    {"power_line_frequency", V4L2_CID_POWER_LINE_FREQUENCY},
    {"auto_exposure", V4L2_CID_EXPOSURE_AUTO}, /* 1 = V4L2_EXPOSURE_MANUAL */
    {"exposure_auto", V4L2_CID_EXPOSURE_AUTO},
    {"exposure_time_absolute", V4L2_CID_EXPOSURE_ABSOLUTE}, /* 100 us units */
    {"exposure_absolute", V4L2_CID_EXPOSURE_ABSOLUTE},
    {"exposure", V4L2_CID_EXPOSURE},
    {"exposure_dynamic_framerate", V4L2_CID_EXPOSURE_AUTO_PRIORITY}, /* 0: keep the fps */
    {"exposure_auto_priority", V4L2_CID_EXPOSURE_AUTO_PRIORITY},
    {"focus_automatic_continuous", V4L2_CID_FOCUS_AUTO},
    {"focus_auto", V4L2_CID_FOCUS_AUTO},
    {"focus_absolute", V4L2_CID_FOCUS_ABSOLUTE},
    {"zoom_absolute", V4L2_CID_ZOOM_ABSOLUTE},
    {"horizontal_flip", V4L2_CID_HFLIP},
    {"vertical_flip", V4L2_CID_VFLIP},
};

/* ---- helpers ------------------------------------------------------------------------------ */

int v4l2_camera_xioctl(int fd, unsigned long request, void *arg)
{
    int r;
    do
        r = v4l2_ioctl(fd, request, arg);
    while (r == -1 && errno == EINTR);
    return r;
}

static int xioctl(int fd, unsigned long request, void *arg)
{
    return v4l2_camera_xioctl(fd, request, arg);
}

/* The streaming ioctls (REQBUFS, QBUF, DQBUF, STREAMON, STREAMOFF): through libv4l2 for mmap,
 * which may convert in DQBUF; straight to the driver for USERPTR, which libv4l2 refuses. */
static int stream_ioctl(const v4l2_camera *cam, unsigned long request, void *arg)
{
    if (cam->io != CAPTURE_IO_USERPTR)
        return xioctl(cam->fd, request, arg);
    int r;
    do
        r = ioctl(cam->fd, request, arg);
    while (r == -1 && errno == EINTR);
    return r;
}

static enum v4l2_memory memory_of(const v4l2_camera *cam)
{
    return cam->io == CAPTURE_IO_USERPTR ? V4L2_MEMORY_USERPTR : V4L2_MEMORY_MMAP;
}

static capture_status status_from_errno(int e)
{
    switch (e) {
    case ENOENT: case ENODEV: case ENXIO: return CAPTURE_ERR_NODEV;
    case EBUSY: return CAPTURE_ERR_BUSY;
    case ENOMEM: return CAPTURE_ERR_NOMEM;
    default: return CAPTURE_ERR_IO;
    }
}

/* "capture: <camera>: <ioctl>: <strerror>"; returns the status that errno maps to. */
static capture_status ioctl_failed(const v4l2_camera *cam, const char *what, char *err,
                                   size_t errlen)
{
    int e = errno;
    if (e == EBUSY)
        snprintf(err, errlen, "capture: %s: %s: device is busy (another program is using it)",
                 cam->name, what);
    else
        snprintf(err, errlen, "capture: %s: %s: %s", cam->name, what, strerror(e));
    errno = e;
    return status_from_errno(e);
}

static int format_index(uint32_t fourcc)
{
    for (int i = 0; i < NFORMATS; i++)
        if (formats[i].fourcc == fourcc)
            return i;
    return -1;
}

capture_format v4l2_camera_format_of(uint32_t fourcc)
{
    int i = format_index(fourcc);
    return i < 0 ? CAPTURE_FORMAT_AUTO : formats[i].format;
}

/* Appends to a message, keeping it terminated; marks a cut with "..." at the end. */
typedef struct {
    char *s;
    size_t size, len;
} text;

static void text_add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(text *t, const char *fmt, ...)
{
    if (t->size == 0 || t->len >= t->size - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s + t->len, t->size - t->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= t->size - t->len) {
        t->len = t->size - 1;
        if (t->size > 4)
            memcpy(t->s + t->size - 4, "...", 4);
    } else
        t->len += (size_t)n;
}

static void add_frame_sizes(text *t, int fd, uint32_t fourcc)
{
    struct v4l2_frmsizeenum fs = {.pixel_format = fourcc};
    for (fs.index = 0; xioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++) {
        if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE)
            text_add(t, " %ux%u", fs.discrete.width, fs.discrete.height);
        else {
            text_add(t, " %ux%u..%ux%u", fs.stepwise.min_width, fs.stepwise.min_height,
                     fs.stepwise.max_width, fs.stepwise.max_height);
            break;
        }
    }
    if (fs.index == 0)
        text_add(t, " (sizes not listed)");
}

/* What the device offers: the formats we take with their sizes first, then the others. */
static void add_offers(text *t, int fd)
{
    struct v4l2_fmtdesc d = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    int any = 0;
    char fcc[5];
    text_add(t, "it offers");
    for (d.index = 0; xioctl(fd, VIDIOC_ENUM_FMT, &d) == 0; d.index++) {
        if (format_index(d.pixelformat) < 0)
            continue;
        camera_fourcc_str(d.pixelformat, fcc);
        text_add(t, "%s %s%s", any++ ? ";" : "", fcc,
                 d.flags & V4L2_FMT_FLAG_EMULATED ? " (converted by libv4l)" : "");
        add_frame_sizes(t, fd, d.pixelformat);
    }
    int others = 0;
    for (d.index = 0; xioctl(fd, VIDIOC_ENUM_FMT, &d) == 0; d.index++) {
        if (format_index(d.pixelformat) >= 0)
            continue;
        camera_fourcc_str(d.pixelformat, fcc);
        text_add(t, "%s %s", others++ ? "," : any ? "; and formats we do not take:" : "", fcc);
    }
    if (!any && !others)
        text_add(t, " no capture formats");
}

static void add_frame_rates(text *t, int fd, uint32_t fourcc, int w, int h)
{
    struct v4l2_frmivalenum fi = {.pixel_format = fourcc, .width = (uint32_t)w, .height = (uint32_t)h};
    for (fi.index = 0; xioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0; fi.index++) {
        if (fi.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
            if (fi.discrete.numerator)
                text_add(t, "%s %g", fi.index ? "," : "",
                         (double)fi.discrete.denominator / fi.discrete.numerator);
        } else {
            const struct v4l2_fract *lo = &fi.stepwise.max, *hi = &fi.stepwise.min;
            if (lo->numerator && hi->numerator)
                text_add(t, " %g..%g", (double)lo->denominator / lo->numerator,
                         (double)hi->denominator / hi->numerator);
            break;
        }
    }
    if (fi.index == 0)
        text_add(t, " (rates not listed)");
    text_add(t, " fps");
}

/* Lower-case, every run of other characters one '_': how v4l2-ctl names a control. */
static void control_key(const char *name, char *key, size_t n)
{
    size_t k = 0;
    int gap = 0;
    for (const char *p = name; *p && k + 1 < n; p++) {
        char ch = *p;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (gap && k > 0 && k + 2 < n)
                key[k++] = '_';
            key[k++] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
            gap = 0;
        } else
            gap = 1;
    }
    key[k] = 0;
}

/* Walks the device's controls (not the class headings, not disabled ones). */
static int next_control(int fd, struct v4l2_queryctrl *qc)
{
    for (;;) {
        qc->id |= V4L2_CTRL_FLAG_NEXT_CTRL;
        if (xioctl(fd, VIDIOC_QUERYCTRL, qc) != 0)
            return 0;
        if (qc->type != V4L2_CTRL_TYPE_CTRL_CLASS && !(qc->flags & V4L2_CTRL_FLAG_DISABLED))
            return 1;
    }
}

/* The control id for a configured name: a number, a name from the table, or the device's own
 * name for it in v4l2-ctl spelling. 0 if none. */
static uint32_t control_id(int fd, const char *name)
{
    char *end;
    unsigned long v = strtoul(name, &end, 0);
    if (end != name && *end == 0)
        return (uint32_t)v;
    for (size_t i = 0; i < sizeof control_names / sizeof control_names[0]; i++)
        if (strcasecmp(name, control_names[i].name) == 0)
            return control_names[i].id;
    char want[64], key[64];
    control_key(name, want, sizeof want);
    struct v4l2_queryctrl qc = {.id = 0};
    while (next_control(fd, &qc)) {
        control_key((const char *)qc.name, key, sizeof key);
        if (strcmp(key, want) == 0)
            return qc.id;
    }
    return 0;
}

static void add_controls(text *t, int fd)
{
    struct v4l2_queryctrl qc = {.id = 0};
    char key[64];
    int n = 0;
    text_add(t, "it offers");
    while (next_control(fd, &qc)) {
        control_key((const char *)qc.name, key, sizeof key);
        text_add(t, "%s %s", n++ ? "," : "", key);
    }
    if (n == 0)
        text_add(t, " no controls");
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- open / init -------------------------------------------------------------------------- */

static capture_status check_capabilities(v4l2_camera *cam, char *err, size_t errlen)
{
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    if (xioctl(cam->fd, VIDIOC_QUERYCAP, &cap) != 0) {
        if (errno == ENOTTY || errno == EINVAL) {
            snprintf(err, errlen, "capture: %s: is not a V4L2 device", cam->name);
            return CAPTURE_ERR_NODEV;
        }
        return ioctl_failed(cam, "VIDIOC_QUERYCAP", err, errlen);
    }
    uint32_t caps = cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING)) {
        snprintf(err, errlen,
                 "capture: %s: is not a video capture device with streaming I/O (driver %s, "
                 "card \"%s\"%s)",
                 cam->name, (const char *)cap.driver, (const char *)cap.card,
                 caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE ? ", multi-planar only" : "");
        return CAPTURE_ERR_NODEV;
    }
    return CAPTURE_OK;
}

/* The fourcc to ask for: the configured format, or for AUTO the first of YUYV, GREY, RGB24 that
 * the device offers natively, else the first libv4l offers by conversion. -1 if none. */
static int choose_format(v4l2_camera *cam)
{
    int offered[NFORMATS] = {0}; /* 1 native, 2 converted by libv4l */
    struct v4l2_fmtdesc d = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    for (d.index = 0; xioctl(cam->fd, VIDIOC_ENUM_FMT, &d) == 0; d.index++) {
        int i = format_index(d.pixelformat);
        if (i >= 0 && !offered[i])
            offered[i] = d.flags & V4L2_FMT_FLAG_EMULATED ? 2 : 1;
    }
    if (cam->cfg->format != CAPTURE_FORMAT_AUTO) {
        for (int i = 0; i < NFORMATS; i++)
            if (formats[i].format == cam->cfg->format)
                return i; /* S_FMT decides; the error lists the offers */
        return -1;
    }
    for (int pass = 1; pass <= 2; pass++)
        for (int i = 0; i < NFORMATS; i++)
            if (offered[i] == pass)
                return i;
    return -1;
}

static capture_status set_format(v4l2_camera *cam, char *err, size_t errlen)
{
    const capture_config *cfg = cam->cfg;
    text t = {err, errlen, 0};
    int fi = choose_format(cam);
    if (fi < 0) {
        text_add(&t, "capture: %s: offers none of YUYV, GREY, RGB24; ", cam->name);
        add_offers(&t, cam->fd);
        return CAPTURE_ERR_FORMAT;
    }
    struct v4l2_format f = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    f.fmt.pix.width = (uint32_t)cfg->width;
    f.fmt.pix.height = (uint32_t)cfg->height;
    f.fmt.pix.pixelformat = formats[fi].fourcc;
    f.fmt.pix.field = V4L2_FIELD_NONE;
    if (xioctl(cam->fd, VIDIOC_S_FMT, &f) != 0 && errno != EINVAL)
        return ioctl_failed(cam, "VIDIOC_S_FMT", err, errlen);
    /* Drivers adjust what they cannot do instead of failing: read back what we got. */
    memset(&f, 0, sizeof f);
    f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(cam->fd, VIDIOC_G_FMT, &f) != 0)
        return ioctl_failed(cam, "VIDIOC_G_FMT", err, errlen);
    char want[5], got[5];
    camera_fourcc_str(formats[fi].fourcc, want);
    camera_fourcc_str(f.fmt.pix.pixelformat, got);
    if (f.fmt.pix.pixelformat != formats[fi].fourcc || (int)f.fmt.pix.width != cfg->width ||
        (int)f.fmt.pix.height != cfg->height) {
        text_add(&t, "capture: %s: cannot capture %dx%d %s (the driver offers %ux%u %s instead); ",
                 cam->name, cfg->width, cfg->height, want, f.fmt.pix.width, f.fmt.pix.height, got);
        add_offers(&t, cam->fd);
        return CAPTURE_ERR_FORMAT;
    }
    if (f.fmt.pix.field != V4L2_FIELD_NONE && f.fmt.pix.field != V4L2_FIELD_ANY) {
        snprintf(err, errlen, "capture: %s: delivers interlaced %dx%d %s (field order %u), not "
                 "progressive frames", cam->name, cfg->width, cfg->height, want, f.fmt.pix.field);
        return CAPTURE_ERR_FORMAT;
    }
    size_t row = (size_t)cfg->width * (size_t)formats[fi].bytes_per_pixel;
    cam->fourcc = formats[fi].fourcc;
    cam->format = formats[fi].pixfmt;
    cam->width = cfg->width;
    cam->height = cfg->height;
    cam->pitch = f.fmt.pix.bytesperline ? f.fmt.pix.bytesperline : row;
    if (cam->pitch < row) {
        snprintf(err, errlen, "capture: %s: driver reports %zu bytes per line for %d pixels of %s",
                 cam->name, cam->pitch, cfg->width, want);
        return CAPTURE_ERR_IO;
    }
    cam->min_bytes = cam->pitch * (size_t)(cfg->height - 1) + row;
    cam->sizeimage = f.fmt.pix.sizeimage > cam->min_bytes ? f.fmt.pix.sizeimage : cam->min_bytes;
    return CAPTURE_OK;
}

/* The I/O mode (v4l2_camera_open): USERPTR needs libv4l2 not to convert and the driver to accept
 * VIDIOC_REQBUFS USERPTR, which also claims the queue (another program asking then gets EBUSY). */
static capture_status choose_io(v4l2_camera *cam, capture_io io, char *err, size_t errlen)
{
    char why[200] = "";
    cam->io = CAPTURE_IO_MMAP;
    cam->io_why[0] = 0;
    if (io == CAPTURE_IO_MMAP)
        return CAPTURE_OK;
    /* the driver's own format (libv4l2 answers VIDIOC_G_FMT with the converted one) */
    struct v4l2_format raw = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    int r;
    do
        r = ioctl(cam->fd, VIDIOC_G_FMT, &raw);
    while (r == -1 && errno == EINTR);
    if (r != 0)
        return ioctl_failed(cam, "VIDIOC_G_FMT", err, errlen);
    if (raw.fmt.pix.pixelformat != cam->fourcc || (int)raw.fmt.pix.width != cam->width ||
        (int)raw.fmt.pix.height != cam->height ||
        (raw.fmt.pix.bytesperline && raw.fmt.pix.bytesperline != cam->pitch)) {
        char from[5], to[5];
        camera_fourcc_str(raw.fmt.pix.pixelformat, from);
        camera_fourcc_str(cam->fourcc, to);
        snprintf(why, sizeof why, "libv4l2 converts %s %ux%u to %s (into buffers of its own)",
                 from, raw.fmt.pix.width, raw.fmt.pix.height, to);
    } else {
        if (raw.fmt.pix.sizeimage > cam->sizeimage)
            cam->sizeimage = raw.fmt.pix.sizeimage;
        cam->io = CAPTURE_IO_USERPTR; /* for stream_ioctl */
        struct v4l2_requestbuffers rb = {.count = (uint32_t)cam->cfg->buffers,
                                         .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                         .memory = V4L2_MEMORY_USERPTR};
        if (stream_ioctl(cam, VIDIOC_REQBUFS, &rb) != 0) {
            cam->io = CAPTURE_IO_MMAP;
            if (errno != EINVAL)
                return ioctl_failed(cam, "VIDIOC_REQBUFS (USERPTR)", err, errlen);
            snprintf(why, sizeof why, "the driver does not stream into user memory "
                     "(VIDIOC_REQBUFS USERPTR: %s)", strerror(EINVAL));
        }
    }
    if (!why[0])
        return CAPTURE_OK;
    if (io == CAPTURE_IO_USERPTR) {
        snprintf(err, errlen, "capture: %s: cannot capture into the caller's buffers (USERPTR): "
                 "%s", cam->name, why);
        return CAPTURE_ERR_FORMAT;
    }
    snprintf(cam->io_why, sizeof cam->io_why, "%s", why);
    return CAPTURE_OK;
}

static capture_status set_frame_rate(v4l2_camera *cam, char *err, size_t errlen)
{
    const capture_config *cfg = cam->cfg;
    struct v4l2_streamparm parm = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    if (xioctl(cam->fd, VIDIOC_G_PARM, &parm) != 0 ||
        !(parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME)) {
        if (cfg->fps > 0)
            capture_log(cfg, "%s: cannot set the frame rate; it runs at the driver's own",
                        cam->name);
        cam->fps = 0;
        return CAPTURE_OK;
    }
    if (cfg->fps > 0) {
        parm.parm.capture.timeperframe.numerator = 1;
        parm.parm.capture.timeperframe.denominator = (uint32_t)cfg->fps;
        if (xioctl(cam->fd, VIDIOC_S_PARM, &parm) != 0)
            return ioctl_failed(cam, "VIDIOC_S_PARM", err, errlen);
        memset(&parm, 0, sizeof parm);
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        if (xioctl(cam->fd, VIDIOC_G_PARM, &parm) != 0)
            return ioctl_failed(cam, "VIDIOC_G_PARM", err, errlen);
    }
    const struct v4l2_fract *tpf = &parm.parm.capture.timeperframe;
    cam->fps = tpf->numerator ? (double)tpf->denominator / tpf->numerator : 0;
    if (cfg->fps > 0 && fabs(cam->fps - cfg->fps) > CAPTURE_FPS_TOLERANCE * cfg->fps) {
        char fcc[5];
        text t = {err, errlen, 0};
        camera_fourcc_str(cam->fourcc, fcc);
        text_add(&t, "capture: %s: cannot capture at %d fps (the driver set %g); at %dx%d %s it "
                 "offers", cam->name, cfg->fps, cam->fps, cam->width, cam->height, fcc);
        add_frame_rates(&t, cam->fd, cam->fourcc, cam->width, cam->height);
        return CAPTURE_ERR_FORMAT;
    }
    return CAPTURE_OK;
}

static capture_status set_controls(v4l2_camera *cam, char *err, size_t errlen)
{
    const capture_config *cfg = cam->cfg;
    for (int i = 0; i < cfg->ncontrols; i++) {
        const capture_control *c = &cfg->controls[i];
        uint32_t id = control_id(cam->fd, c->name);
        struct v4l2_queryctrl qc = {.id = id};
        if (id == 0 || xioctl(cam->fd, VIDIOC_QUERYCTRL, &qc) != 0 ||
            (qc.flags & V4L2_CTRL_FLAG_DISABLED)) {
            text t = {err, errlen, 0};
            text_add(&t, "capture: %s: has no control \"%s\"; ", cam->name, c->name);
            add_controls(&t, cam->fd);
            return CAPTURE_ERR_FORMAT;
        }
        if (qc.type != V4L2_CTRL_TYPE_BUTTON && (c->value < qc.minimum || c->value > qc.maximum)) {
            snprintf(err, errlen, "capture: %s: control \"%s\" = %d is out of its range %d..%d",
                     cam->name, c->name, c->value, qc.minimum, qc.maximum);
            return CAPTURE_ERR_FORMAT;
        }
        struct v4l2_control ctrl = {.id = id, .value = c->value};
        if (xioctl(cam->fd, VIDIOC_S_CTRL, &ctrl) != 0) {
            char what[80];
            snprintf(what, sizeof what, "setting control \"%s\" to %d", c->name, c->value);
            capture_status st = ioctl_failed(cam, what, err, errlen);
            return st == CAPTURE_ERR_IO ? CAPTURE_ERR_FORMAT : st;
        }
    }
    return CAPTURE_OK;
}

static capture_status map_buffers(v4l2_camera *cam, char *err, size_t errlen)
{
    struct v4l2_requestbuffers rb = {
        .count = (uint32_t)cam->cfg->buffers,
        .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
        .memory = V4L2_MEMORY_MMAP,
    };
    if (xioctl(cam->fd, VIDIOC_REQBUFS, &rb) != 0) {
        if (errno == EINVAL) {
            snprintf(err, errlen, "capture: %s: does not support mmap streaming", cam->name);
            return CAPTURE_ERR_NODEV;
        }
        return ioctl_failed(cam, "VIDIOC_REQBUFS", err, errlen);
    }
    if (rb.count > V4L2_CAMERA_MAX_BUFFERS) {
        snprintf(err, errlen, "capture: %s: the driver granted %u buffers (at most %d handled)",
                 cam->name, rb.count, V4L2_CAMERA_MAX_BUFFERS);
        return CAPTURE_ERR_IO;
    }
    if (rb.count < MIN_GRANTED_BUFFERS) {
        snprintf(err, errlen, "capture: %s: the driver granted only %u of %d buffers", cam->name,
                 rb.count, cam->cfg->buffers);
        return CAPTURE_ERR_NOMEM;
    }
    if (!(cam->buf = calloc(rb.count, sizeof *cam->buf))) {
        snprintf(err, errlen, "capture: %s: out of memory", cam->name);
        return CAPTURE_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < rb.count; i++) {
        struct v4l2_buffer b = {.index = i, .type = rb.type, .memory = V4L2_MEMORY_MMAP};
        if (xioctl(cam->fd, VIDIOC_QUERYBUF, &b) != 0)
            return ioctl_failed(cam, "VIDIOC_QUERYBUF", err, errlen);
        void *p = v4l2_mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, cam->fd,
                            b.m.offset);
        if (p == MAP_FAILED)
            return ioctl_failed(cam, "mmap", err, errlen);
        cam->buf[i].start = p;
        cam->buf[i].length = b.length;
        cam->nbuf = (int)i + 1;
    }
    return CAPTURE_OK;
}

static void unmap_buffers(v4l2_camera *cam)
{
    if (cam->io == CAPTURE_IO_MMAP)
        for (int i = 0; i < cam->nbuf; i++)
            v4l2_munmap(cam->buf[i].start, cam->buf[i].length);
    /* USERPTR: the queue was claimed at open even without buffers; REQBUFS 0 unpins them */
    if (cam->buf || cam->io == CAPTURE_IO_USERPTR) {
        struct v4l2_requestbuffers rb = {.count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                         .memory = memory_of(cam)};
        stream_ioctl(cam, VIDIOC_REQBUFS, &rb); /* fails on a device that is gone: nothing to free */
    }
    free(cam->buf);
    cam->buf = NULL;
    cam->nbuf = 0;
    cam->held = 0;
}

capture_status v4l2_camera_open(const capture_config *cfg, int index, capture_io io,
                                v4l2_camera **out, char *err, size_t errlen)
{
    capture_status st;
    v4l2_camera *cam = calloc(1, sizeof *cam);
    *out = NULL;
    if (!cam) {
        snprintf(err, errlen, "capture: %s: out of memory", cfg->device[index]);
        return CAPTURE_ERR_NOMEM;
    }
    cam->cfg = cfg;
    cam->fd = -1;
    capture_camera_name(cfg, index, cam->name, sizeof cam->name);
    cam->fd = v4l2_open(cfg->device[index], O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (cam->fd < 0) {
        int e = errno;
        if (e == ENOENT)
            snprintf(err, errlen, "capture: %s: no such device: is the camera connected?",
                     cam->name);
        else if (e == ENXIO || e == ENODEV)
            snprintf(err, errlen, "capture: %s: device is gone (%s)", cam->name, strerror(e));
        else if (e == EACCES)
            snprintf(err, errlen, "capture: %s: permission denied (is the user in group video?)",
                     cam->name);
        else if (e == EBUSY)
            snprintf(err, errlen, "capture: %s: device is busy (another program is using it)",
                     cam->name);
        else
            snprintf(err, errlen, "capture: %s: cannot open: %s", cam->name, strerror(e));
        st = status_from_errno(e);
        goto err;
    }
    if ((st = check_capabilities(cam, err, errlen)) != CAPTURE_OK ||
        (st = set_format(cam, err, errlen)) != CAPTURE_OK ||
        (st = set_frame_rate(cam, err, errlen)) != CAPTURE_OK ||
        (st = set_controls(cam, err, errlen)) != CAPTURE_OK ||
        (st = choose_io(cam, io, err, errlen)) != CAPTURE_OK ||
        (cam->io == CAPTURE_IO_MMAP && (st = map_buffers(cam, err, errlen)) != CAPTURE_OK))
        goto err;
    *out = cam;
    return CAPTURE_OK;
err:
    v4l2_camera_close(cam);
    return st;
}

void v4l2_camera_close(v4l2_camera *cam)
{
    if (!cam)
        return;
    unmap_buffers(cam);
    if (cam->fd >= 0)
        v4l2_close(cam->fd);
    free(cam);
}

/* ---- streaming ---------------------------------------------------------------------------- */

static int queue_buffer(v4l2_camera *cam, int i)
{
    struct v4l2_buffer b = {.index = (uint32_t)i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                            .memory = memory_of(cam)};
    if (cam->io == CAPTURE_IO_USERPTR) {
        b.m.userptr = (unsigned long)cam->buf[i].start;
        b.length = (uint32_t)cam->buf[i].length;
    }
    if (stream_ioctl(cam, VIDIOC_QBUF, &b) != 0)
        return -1;
    cam->buf[i].state = BUF_QUEUED;
    return 0;
}

capture_status v4l2_camera_start(v4l2_camera *cam, char *err, size_t errlen)
{
    if (cam->nbuf == 0) {
        snprintf(err, errlen, "capture: %s: no buffers to stream into", cam->name);
        return CAPTURE_ERR_PARAM;
    }
    for (int i = 0; i < cam->nbuf; i++)
        if (cam->buf[i].state == BUF_IDLE && queue_buffer(cam, i) != 0) {
            int e = errno;
            if (cam->io != CAPTURE_IO_USERPTR || e == ENODEV || e == ENXIO || e == EBUSY)
                return ioctl_failed(cam, "VIDIOC_QBUF", err, errlen);
            snprintf(err, errlen, "the driver refused the caller's buffer %d at %p (VIDIOC_QBUF: "
                     "%s)", i, cam->buf[i].start, strerror(e));
            errno = e;
            return CAPTURE_ERR_FORMAT;
        }
    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (stream_ioctl(cam, VIDIOC_STREAMON, &type) != 0)
        return ioctl_failed(cam, "VIDIOC_STREAMON", err, errlen);
    cam->streaming = 1;
    return CAPTURE_OK;
}

void v4l2_camera_stop(v4l2_camera *cam)
{
    if (!cam)
        return;
    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    /* STREAMOFF takes every queued buffer back from the driver (it may fail on a device that is
     * gone, which has let go of them anyway). Held buffers stay held until released. */
    stream_ioctl(cam, VIDIOC_STREAMOFF, &type);
    cam->streaming = 0;
    for (int i = 0; i < cam->nbuf; i++)
        if (cam->buf[i].state == BUF_QUEUED)
            cam->buf[i].state = BUF_IDLE;
}

int v4l2_camera_dequeue(v4l2_camera *cam, capture_frame *f, uint64_t *errors,
                        char *err, size_t errlen)
{
    for (;;) {
        /* Only dequeue what poll says is there: libv4l2 prints every failed DQBUF, EAGAIN too. */
        struct pollfd pfd = {.fd = cam->fd, .events = POLLIN};
        if (poll(&pfd, 1, 0) == 0 || (pfd.revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) == 0)
            return 0;
        struct v4l2_buffer b = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = memory_of(cam)};
        if (stream_ioctl(cam, VIDIOC_DQBUF, &b) != 0) {
            if (errno == EAGAIN)
                return 0;
            ioctl_failed(cam, "VIDIOC_DQBUF", err, errlen);
            return -1;
        }
        if (b.index >= (uint32_t)cam->nbuf) {
            snprintf(err, errlen, "capture: %s: VIDIOC_DQBUF returned buffer %u of %d", cam->name,
                     b.index, cam->nbuf);
            errno = EIO;
            return -1;
        }
        int i = (int)b.index;
        if (cam->io == CAPTURE_IO_USERPTR && b.m.userptr != (unsigned long)cam->buf[i].start) {
            snprintf(err, errlen, "capture: %s: VIDIOC_DQBUF returned buffer %u at 0x%lx, queued "
                     "at %p", cam->name, b.index, b.m.userptr, cam->buf[i].start);
            errno = EIO;
            return -1;
        }
        cam->buf[i].state = BUF_HELD;
        cam->held++;
        if ((b.flags & V4L2_BUF_FLAG_ERROR) || b.bytesused < cam->min_bytes) {
            (*errors)++;
            if (v4l2_camera_requeue(cam, i) != 0) {
                ioctl_failed(cam, "VIDIOC_QBUF", err, errlen);
                return -1;
            }
            continue;
        }
        int64_t ts;
        if ((b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
            ts = (int64_t)b.timestamp.tv_sec * 1000000000LL + (int64_t)b.timestamp.tv_usec * 1000;
        else {
            if (!cam->said_clock++)
                capture_log(cam->cfg, "%s: driver timestamps are not monotonic; using the "
                            "dequeue time", cam->name);
            ts = monotonic_ns();
        }
        f->data = cam->buf[i].start;
        f->width = cam->width;
        f->height = cam->height;
        f->pitch = cam->pitch;
        f->bytes = b.bytesused;
        f->format = cam->format;
        f->timestamp_ns = ts;
        f->sequence = b.sequence;
        f->buffer = i;
        f->io = cam->io;
        return 1;
    }
}

int v4l2_camera_requeue(v4l2_camera *cam, int index)
{
    if (index < 0 || index >= cam->nbuf || cam->buf[index].state != BUF_HELD)
        return 0;
    cam->buf[index].state = BUF_IDLE;
    cam->held--;
    if (!cam->streaming)
        return 0;
    return queue_buffer(cam, index);
}

capture_status v4l2_camera_set_user_buffers(v4l2_camera *cam, void *const *ptr, int n,
                                            size_t bytes, const unsigned char *held, char *err,
                                            size_t errlen)
{
    if (cam->io != CAPTURE_IO_USERPTR || cam->streaming || cam->held) {
        snprintf(err, errlen, "capture: %s: user buffers can only be set on a stopped USERPTR "
                 "camera holding none", cam->name);
        return CAPTURE_ERR_PARAM;
    }
    if (bytes < cam->sizeimage || bytes > UINT32_MAX || n < MIN_GRANTED_BUFFERS ||
        n > V4L2_CAMERA_MAX_BUFFERS) {
        snprintf(err, errlen, "capture: %s: %d buffers of %zu bytes: need %d..%d of at least %zu "
                 "bytes (the driver's frame size)", cam->name, n, bytes, MIN_GRANTED_BUFFERS,
                 V4L2_CAMERA_MAX_BUFFERS, cam->sizeimage);
        return CAPTURE_ERR_PARAM;
    }
    struct v4l2_requestbuffers rb = {.count = (uint32_t)n, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                     .memory = V4L2_MEMORY_USERPTR};
    if (stream_ioctl(cam, VIDIOC_REQBUFS, &rb) != 0)
        return ioctl_failed(cam, "VIDIOC_REQBUFS (USERPTR)", err, errlen);
    if (rb.count < MIN_GRANTED_BUFFERS) {
        snprintf(err, errlen, "capture: %s: the driver granted only %u of %d buffers", cam->name,
                 rb.count, n);
        return CAPTURE_ERR_NOMEM;
    }
    int m = (int)rb.count < n ? (int)rb.count : n;
    buffer *nb = calloc((size_t)m, sizeof *nb);
    if (!nb) {
        snprintf(err, errlen, "capture: %s: out of memory", cam->name);
        return CAPTURE_ERR_NOMEM;
    }
    free(cam->buf);
    cam->buf = nb;
    cam->nbuf = m;
    cam->held = 0;
    for (int i = 0; i < m; i++) {
        nb[i] = (buffer){ptr[i], bytes, held && held[i] ? BUF_HELD : BUF_IDLE};
        cam->held += nb[i].state == BUF_HELD;
    }
    return CAPTURE_OK;
}

void v4l2_camera_clear_user_buffers(v4l2_camera *cam)
{
    if (!cam || cam->io != CAPTURE_IO_USERPTR)
        return;
    v4l2_camera_stop(cam);
    struct v4l2_requestbuffers rb = {.count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                     .memory = V4L2_MEMORY_USERPTR};
    stream_ioctl(cam, VIDIOC_REQBUFS, &rb); /* the driver unpins them (fails if gone: no matter) */
    free(cam->buf);
    cam->buf = NULL;
    cam->nbuf = 0;
    cam->held = 0;
}

capture_status v4l2_camera_use_mmap(v4l2_camera *cam, const char *why, char *err, size_t errlen)
{
    if (cam->io == CAPTURE_IO_MMAP)
        return CAPTURE_OK;
    v4l2_camera_clear_user_buffers(cam);
    cam->io = CAPTURE_IO_MMAP;
    snprintf(cam->io_why, sizeof cam->io_why, "%s", why);
    return map_buffers(cam, err, errlen);
}

int v4l2_camera_fd(const v4l2_camera *cam) { return cam->fd; }
capture_io v4l2_camera_io(const v4l2_camera *cam) { return cam->io; }
const char *v4l2_camera_io_why(const v4l2_camera *cam) { return cam->io_why; }
size_t v4l2_camera_sizeimage(const v4l2_camera *cam) { return cam->sizeimage; }
int v4l2_camera_streaming(const v4l2_camera *cam) { return cam->streaming; }
int v4l2_camera_held(const v4l2_camera *cam) { return cam->held; }
int v4l2_camera_buffers(const v4l2_camera *cam) { return cam->nbuf; }
double v4l2_camera_fps(const v4l2_camera *cam) { return cam->fps; }
