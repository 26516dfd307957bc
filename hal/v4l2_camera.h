/* SPDX-License-Identifier: Apache-2.0 */
/* v4l2_camera.h — one V4L2 camera through libv4l2 (private to the V4L2 capture backend).
 *
 * Lifecycle, each step undone by its mirror:
 *   v4l2_camera_open   open (v4l2_open, QUERYCAP) + init (format, fps, controls, I/O mode:
 *                      mmap buffers, or VIDIOC_REQBUFS USERPTR to claim the queue)
 *   (USERPTR: v4l2_camera_set_user_buffers   the caller's buffers, before start;
 *             v4l2_camera_clear_user_buffers stop + REQBUFS 0: the driver lets go of them)
 *   v4l2_camera_start  queue every buffer, STREAMON
 *   v4l2_camera_stop   STREAMOFF (the driver lets go of every buffer)
 *   v4l2_camera_close  uninit (munmap, REQBUFS 0) + close
 * Stop and close also work on a camera that has gone away (their ioctls then fail; ignored).
 *
 * Buffers: each is either with the driver (queued) or held by us / our consumer (dequeued);
 * v4l2_camera_requeue gives a held one back. `held` counts those out of the driver's hands.
 * In USERPTR mode buffer i is the caller's buffer i (the index stays tied to the pointer, so the
 * driver pins each buffer's pages once, not at every VIDIOC_QBUF), and the streaming ioctls go to
 * the driver directly: libv4l2 answers VIDIOC_REQBUFS for anything but MMAP with EINVAL. USERPTR
 * is only chosen when libv4l2 does not convert the format (the driver's own format, read with a
 * direct VIDIOC_G_FMT, is the one libv4l2 reports), so bypassing it changes nothing in the data.
 */
#ifndef STEREO_V4L2_CAMERA_H
#define STEREO_V4L2_CAMERA_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"

typedef struct v4l2_camera v4l2_camera;

/* Buffer indices are below this (open fails if a driver grants more). */
#define V4L2_CAMERA_MAX_BUFFERS 64

/* Opens cfg->device[index] with cfg's size, format, fps, controls and buffer count (defaults
 * already applied), streaming in I/O mode `io` (cfg->io is not used: a reopen passes the mode
 * decided at the first open). AUTO becomes USERPTR when libv4l2 does not convert the format and
 * the driver accepts VIDIOC_REQBUFS USERPTR, else MMAP (v4l2_camera_io_why says why); USERPTR
 * fails with CAPTURE_ERR_FORMAT when it is not possible. On failure *out is NULL and err says
 * "<path>: <problem>". */
capture_status v4l2_camera_open(const capture_config *cfg, int index, capture_io io,
                                v4l2_camera **out, char *err, size_t errlen);

/* USERPTR, stopped camera: streams into ptr[0..n-1] (bytes each, >= v4l2_camera_sizeimage)
 * from the next start; index i is ptr[i]. Uses the first k of them when the driver grants only
 * k < n (at least 3). Replaces buffers given before (none may be held). held (may be NULL):
 * held[i] != 0 for a buffer the caller still holds (from before a reconnect): it starts out held,
 * and is queued when v4l2_camera_requeue gives it back. */
capture_status v4l2_camera_set_user_buffers(v4l2_camera *cam, void *const *ptr, int n,
                                            size_t bytes, const unsigned char *held, char *err,
                                            size_t errlen);
/* USERPTR: stops and makes the driver let go of every user buffer (REQBUFS 0); held ones are
 * forgotten too (the caller's memory). The camera stays open, waiting for new buffers. */
void v4l2_camera_clear_user_buffers(v4l2_camera *cam);
/* USERPTR, stopped camera: turns it into an MMAP camera (lets go of user buffers, maps the
 * driver's); `why` becomes v4l2_camera_io_why. */
capture_status v4l2_camera_use_mmap(v4l2_camera *cam, const char *why, char *err, size_t errlen);
/* Queues every idle buffer and starts streaming. USERPTR: a buffer the driver refuses at
 * VIDIOC_QBUF (not a gone device) gives CAPTURE_ERR_FORMAT; the caller stops the camera. */
capture_status v4l2_camera_start(v4l2_camera *cam, char *err, size_t errlen);
void v4l2_camera_stop(v4l2_camera *cam);
void v4l2_camera_close(v4l2_camera *cam);

/* The descriptor to poll for POLLIN (a frame) and POLLERR / POLLHUP (gone or failed). */
int v4l2_camera_fd(const v4l2_camera *cam);

/* Dequeues one buffer without blocking. Returns 1 with *f filled (a good frame, now held),
 * 0 when none is ready, or -1 with err set when the device failed (errno is kept: ENODEV when
 * it is gone). Frames the driver flags as corrupt, or that are short, are given straight back
 * and counted in *errors. */
int v4l2_camera_dequeue(v4l2_camera *cam, capture_frame *f, uint64_t *errors,
                        char *err, size_t errlen);

/* Gives held buffer `index` back to the driver. On a stopped camera, or when the driver
 * refuses (gone), the buffer only stops counting as held. Returns 0, or -1 when QBUF failed. */
int v4l2_camera_requeue(v4l2_camera *cam, int index);

int v4l2_camera_held(const v4l2_camera *cam);     /* buffers out of the driver's hands */
capture_io v4l2_camera_io(const v4l2_camera *cam);     /* MMAP or USERPTR */
const char *v4l2_camera_io_why(const v4l2_camera *cam); /* why MMAP when AUTO was asked; "" */
size_t v4l2_camera_sizeimage(const v4l2_camera *cam); /* the driver's frame size in bytes */
int v4l2_camera_streaming(const v4l2_camera *cam);
int v4l2_camera_buffers(const v4l2_camera *cam);  /* buffers the driver granted */
double v4l2_camera_fps(const v4l2_camera *cam);   /* rate the driver set, 0 if unknown */

/* Shared with camera_list.c: v4l2_ioctl retried on EINTR; the [camera] format that captures a
 * fourcc (YUYV, GREY, RGB24), CAPTURE_FORMAT_AUTO for any other. */
int v4l2_camera_xioctl(int fd, unsigned long request, void *arg);
capture_format v4l2_camera_format_of(uint32_t fourcc);

#endif
