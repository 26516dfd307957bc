/* SPDX-License-Identifier: Apache-2.0 */
/* live_cameras.h — stereo-live --list-cameras: prints a camera_list (hal/camera_list.h) grouped
 * by device as `v4l2-ctl --list-devices` does, each video node with its by-id / by-path links
 * and, for capture nodes, its formats, sizes and frame rates; then a [camera] snippet for the
 * first two capture nodes (or the side-by-side one when there is only one). */
#ifndef STEREO_LIVE_CAMERAS_H
#define STEREO_LIVE_CAMERAS_H

#include <stdio.h>

#include "camera_list.h"

/* Prints l to out. Returns the number of capture nodes listed with their formats. */
int live_cameras_print(const camera_list *l, FILE *out);

#endif
