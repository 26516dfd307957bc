/* v4l2_camera.h — one V4L2 camera through libv4l2 (private to the V4L2 capture backend).
 *
 * Lifecycle, each step undone by its mirror:
 *   v4l2_camera_open   open (v4l2_open, QUERYCAP) + init (format, fps, controls, mmap buffers)
 *   v4l2_camera_start  queue every buffer, STREAMON
 *   v4l2_camera_stop   STREAMOFF (the driver lets go of every buffer)
 *   v4l2_camera_close  uninit (munmap, REQBUFS 0) + close
 * Stop and close also work on a camera that has gone away (their ioctls then fail; ignored).
 *
 * Buffers: each is either with the driver (queued) or held by us / our consumer (dequeued);
 * v4l2_camera_requeue gives a held one back. `held` counts those out of the driver's hands.
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
 * already applied). On failure *out is NULL and err says "<path>: <problem>". */
capture_status v4l2_camera_open(const capture_config *cfg, int index, v4l2_camera **out,
                                char *err, size_t errlen);
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
int v4l2_camera_buffers(const v4l2_camera *cam);  /* buffers the driver granted */
double v4l2_camera_fps(const v4l2_camera *cam);   /* rate the driver set, 0 if unknown */

#endif
