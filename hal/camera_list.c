/* SPDX-License-Identifier: Apache-2.0 */
/* camera_list.c — the V4L2 devices in a directory and what each offers (camera_list.h).
 *
 * A node is first opened and asked with plain open(2) / ioctl(2): libv4l2's v4l2_open prints
 * its own error line for anything that is not a V4L2 capture node, and converts nothing there.
 * Capture nodes are then handed to libv4l2 (v4l2_fd_open) so that the formats it converts to
 * (MJPEG -> RGB24, ...) are listed beside the driver's own, as the capture sees them.
 */
#include "camera_list.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libv4l2.h>
#include <linux/videodev2.h>

#include "v4l2_camera.h"

static int plain_ioctl(int fd, unsigned long request, void *arg)
{
    int r;
    do
        r = ioctl(fd, request, arg);
    while (r == -1 && errno == EINTR);
    return r;
}

/* What a node is, from its capabilities (the first that applies). */
static const char *node_kind(uint32_t caps)
{
    static const struct {
        uint32_t cap;
        const char *kind;
    } kinds[] = {
        {V4L2_CAP_VIDEO_CAPTURE, "video capture"},
        {V4L2_CAP_VIDEO_CAPTURE_MPLANE, "video capture, multi-planar only (not taken)"},
        {V4L2_CAP_META_CAPTURE, "metadata capture"},
        {V4L2_CAP_VIDEO_OUTPUT, "video output"},
        {V4L2_CAP_VIDEO_OUTPUT_MPLANE, "video output"},
        {V4L2_CAP_VIDEO_M2M, "memory-to-memory"},
        {V4L2_CAP_VIDEO_M2M_MPLANE, "memory-to-memory"},
        {V4L2_CAP_META_OUTPUT, "metadata output"},
        {V4L2_CAP_TOUCH, "touch sensor"},
        {V4L2_CAP_SDR_CAPTURE, "software defined radio"},
        {V4L2_CAP_VBI_CAPTURE, "VBI capture"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (caps & kinds[i].cap)
            return kinds[i].kind;
    return "no video capture";
}

/* ---- formats, sizes, rates ------------------------------------------------------------------ */

static double fps_of(const struct v4l2_fract *interval)
{
    return interval->numerator ? (double)interval->denominator / interval->numerator : 0;
}

static void list_rates(int fd, uint32_t fourcc, camera_size *s, int *cut)
{
    struct v4l2_frmivalenum fi = {.pixel_format = fourcc, .width = s->width, .height = s->height};
    for (fi.index = 0; v4l2_camera_xioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0; fi.index++) {
        if (fi.type != V4L2_FRMIVAL_TYPE_DISCRETE) {
            /* stepwise.min is the shortest interval: the highest rate */
            s->rate_range = 1;
            s->rate_min = fps_of(&fi.stepwise.max);
            s->rate_max = fps_of(&fi.stepwise.min);
            return;
        }
        if (s->nrates == CAMERA_LIST_MAX_RATES) {
            *cut = 1;
            return;
        }
        if (fi.discrete.numerator)
            s->rate[s->nrates++] = fps_of(&fi.discrete);
    }
}

static int list_sizes(int fd, camera_format *f, int *cut)
{
    struct v4l2_frmsizeenum fs = {.pixel_format = f->fourcc};
    for (fs.index = 0; v4l2_camera_xioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++) {
        if (f->nsizes == CAMERA_LIST_MAX_SIZES) {
            *cut = 1;
            break;
        }
        if (!f->sizes && !(f->sizes = calloc(CAMERA_LIST_MAX_SIZES, sizeof *f->sizes)))
            return -1;
        camera_size *s = &f->sizes[f->nsizes++];
        if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
            s->width = fs.discrete.width;
            s->height = fs.discrete.height;
        } else {
            s->stepwise = 1;
            s->min_width = fs.stepwise.min_width;
            s->min_height = fs.stepwise.min_height;
            s->width = fs.stepwise.max_width;
            s->height = fs.stepwise.max_height;
            s->step_width = fs.stepwise.step_width;
            s->step_height = fs.stepwise.step_height;
        }
        list_rates(fd, f->fourcc, s, cut);
        if (s->stepwise)
            break; /* a range is the only entry */
    }
    return 0;
}

static int list_formats(int fd, camera_node *n)
{
    struct v4l2_fmtdesc d = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    for (d.index = 0; v4l2_camera_xioctl(fd, VIDIOC_ENUM_FMT, &d) == 0; d.index++) {
        if (n->nformats == CAMERA_LIST_MAX_FORMATS) {
            n->cut = 1;
            break;
        }
        if (!n->formats && !(n->formats = calloc(CAMERA_LIST_MAX_FORMATS, sizeof *n->formats)))
            return -1;
        camera_format *f = &n->formats[n->nformats++];
        f->fourcc = d.pixelformat;
        snprintf(f->description, sizeof f->description, "%.32s", (const char *)d.description);
        f->emulated = !!(d.flags & V4L2_FMT_FLAG_EMULATED);
        f->compressed = !!(d.flags & V4L2_FMT_FLAG_COMPRESSED);
        f->takes = v4l2_camera_format_of(d.pixelformat);
        if (list_sizes(fd, f, &n->cut) != 0)
            return -1;
    }
    return 0;
}

/* ---- one node ------------------------------------------------------------------------------- */

static void open_failed(camera_node *n, int e)
{
    if (e == EACCES)
        snprintf(n->error, sizeof n->error, "permission denied (is the user in group video?)");
    else if (e == EBUSY)
        snprintf(n->error, sizeof n->error, "device is busy (another program is using it)");
    else if (e == ENXIO || e == ENODEV)
        snprintf(n->error, sizeof n->error, "no device behind the node (%s)", strerror(e));
    else
        snprintf(n->error, sizeof n->error, "cannot open: %s", strerror(e));
}

/* Fills n (path and number set) from the device; problems go to n->error. -1: out of memory. */
static int ask_node(camera_node *n)
{
    struct stat st;
    if (stat(n->path, &st) != 0) {
        snprintf(n->error, sizeof n->error, "%s", strerror(errno));
        return 0;
    }
    if (!S_ISCHR(st.st_mode)) {
        snprintf(n->error, sizeof n->error, "not a device node (%s)",
                 S_ISDIR(st.st_mode) ? "a directory" : S_ISREG(st.st_mode) ? "a regular file"
                 : S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISBLK(st.st_mode) ? "a block device"
                 : "not a character device");
        return 0;
    }
    /* O_NOCTTY: a node may be a link to a terminal (it is then no V4L2 device, and stays no
     * controlling terminal of ours) */
    int fd = open(n->path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        open_failed(n, errno);
        return 0;
    }
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    if (plain_ioctl(fd, VIDIOC_QUERYCAP, &cap) != 0) {
        int e = errno;
        if (e == ENOTTY || e == EINVAL)
            snprintf(n->error, sizeof n->error, "not a V4L2 device (VIDIOC_QUERYCAP: %s)",
                     strerror(e));
        else
            snprintf(n->error, sizeof n->error, "VIDIOC_QUERYCAP: %s", strerror(e));
        close(fd);
        return 0;
    }
    snprintf(n->card, sizeof n->card, "%.32s", (const char *)cap.card);
    snprintf(n->driver, sizeof n->driver, "%.16s", (const char *)cap.driver);
    snprintf(n->bus_info, sizeof n->bus_info, "%.32s", (const char *)cap.bus_info);
    n->caps = cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities;
    n->capture = (n->caps & V4L2_CAP_VIDEO_CAPTURE) && (n->caps & V4L2_CAP_STREAMING);
    snprintf(n->kind, sizeof n->kind, "%s%s", node_kind(n->caps),
             (n->caps & V4L2_CAP_VIDEO_CAPTURE) && !n->capture ? ", without streaming I/O (not taken)"
                                                              : "");
    if (!n->capture) {
        close(fd);
        return 0;
    }
    /* from here on through libv4l2, which owns fd and closes it in v4l2_close */
    if (v4l2_fd_open(fd, 0) < 0) {
        snprintf(n->error, sizeof n->error, "libv4l2 cannot take it: %s", strerror(errno));
        close(fd);
        return 0;
    }
    int r = list_formats(fd, n);
    v4l2_close(fd);
    return r;
}

/* ---- the directory -------------------------------------------------------------------------- */

/* N of "videoN", or -1. */
static int video_number(const char *name)
{
    if (strncmp(name, "video", 5) != 0 || !name[5])
        return -1;
    long v = 0;
    for (const char *p = name + 5; *p; p++) {
        if (*p < '0' || *p > '9' || v > 1000000)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return (int)v;
}

static int by_number(const void *a, const void *b)
{
    const camera_node *x = a, *y = b;
    return (x->number > y->number) - (x->number < y->number);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds the links in dir/v4l/<kind> that resolve to a node (compared as files), sorted. */
static void add_links(camera_list *l, const char *dir, const char *kind)
{
    char sub[CAMERA_LIST_PATH_MAX];
    snprintf(sub, sizeof sub, "%s/v4l/%s", dir, kind);
    DIR *d = opendir(sub);
    if (!d)
        return; /* no udev, or no device of that kind */
    char *names[CAMERA_LIST_MAX_NODES * 2];
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)) && k < (int)(sizeof names / sizeof names[0]))
        if (e->d_name[0] != '.' && (names[k] = strdup(e->d_name)))
            k++;
    closedir(d);
    qsort(names, (size_t)k, sizeof names[0], by_name);
    for (int i = 0; i < k; i++) {
        char path[CAMERA_LIST_PATH_MAX];
        struct stat a, b;
        int n = snprintf(path, sizeof path, "%s/%s", sub, names[i]);
        free(names[i]);
        if (n < 0 || n >= (int)sizeof path || stat(path, &a) != 0)
            continue;
        for (int j = 0; j < l->n; j++) {
            camera_node *node = &l->node[j];
            if (node->nlinks < CAMERA_LIST_MAX_LINKS && stat(node->path, &b) == 0 &&
                a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
                snprintf(node->link[node->nlinks++], sizeof node->link[0], "%s", path);
                break;
            }
        }
    }
}

int camera_list_scan(const char *dir_arg, camera_list *out, char *err, size_t errlen)
{
    char dir[CAMERA_LIST_PATH_MAX / 2];
    size_t len = strlen(dir_arg);
    while (len > 1 && dir_arg[len - 1] == '/') /* "/dev/" names its nodes /dev/videoN */
        len--;
    memset(out, 0, sizeof *out);
    if (len >= sizeof dir) {
        snprintf(err, errlen, "%.64s...: the directory name is too long", dir_arg);
        return -1;
    }
    memcpy(dir, dir_arg, len);
    dir[len] = 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot list the devices: %s", dir, strerror(errno));
        return -1;
    }
    if (!(out->node = calloc(CAMERA_LIST_MAX_NODES, sizeof *out->node))) {
        closedir(d);
        snprintf(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        int number = video_number(e->d_name);
        if (number < 0)
            continue;
        if (out->n == CAMERA_LIST_MAX_NODES) {
            out->cut = 1;
            break;
        }
        camera_node *n = &out->node[out->n++];
        n->number = number;
        snprintf(n->path, sizeof n->path, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
    }
    closedir(d);
    qsort(out->node, (size_t)out->n, sizeof *out->node, by_number);
    add_links(out, dir, "by-id");
    add_links(out, dir, "by-path");
    for (int i = 0; i < out->n; i++)
        if (ask_node(&out->node[i]) != 0) {
            camera_list_free(out);
            snprintf(err, errlen, "%s: out of memory", dir);
            return -1;
        }
    return 0;
}

void camera_list_free(camera_list *l)
{
    for (int i = 0; l->node && i < l->n; i++) {
        for (int j = 0; j < l->node[i].nformats; j++)
            free(l->node[i].formats[j].sizes);
        free(l->node[i].formats);
    }
    free(l->node);
    memset(l, 0, sizeof *l);
}

const char *camera_node_config_path(const camera_node *n)
{
    for (int i = 0; i < n->nlinks; i++)
        if (strstr(n->link[i], "/v4l/by-id/"))
            return n->link[i];
    return n->nlinks ? n->link[0] : n->path;
}
