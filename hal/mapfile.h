/* SPDX-License-Identifier: Apache-2.0 */
/* mapfile.h — the project's binary rectification-map file (written by stereo-calibrate, read by
 * stereo-match --maps and the live app).
 *
 * Layout, all integers little-endian. Version 2 (written since the depth outputs) carries the
 * rectified left camera for depth (hal/depth.h); version 1 is still read (no camera):
 *   offset  size  field
 *        0     8  magic "STMAPS\r\n" (the CR LF catches text-mode mangling)
 *        8     4  version = 1 or 2
 *       12     4  map type = 1: OpenCV fixed point, CV_16SC2 (x, y) + CV_16UC1 (fy*32 + fx)
 *       16     4  width   (rectified output)
 *       20     4  height
 *       24     4  src_width  (camera image)
 *       28     4  src_height
 *       32     4  CRC-32 (zlib) of the payload
 *       36     4  CRC-32 (zlib) of bytes 0..35
 *       40        payload: left xy (w*h*2 int16), left frac (w*h uint16),
 *                          right xy, right frac
 * The file size must be exactly 40 + 12 * w * h bytes.
 * Version 2: the same up to offset 31, then
 *       32     4  camera: 0 = none (the five values below are then 0), 1 = present
 *       36     8  focal length f in px          IEEE-754 binary64, little-endian
 *       44     8  cx, principal point, px       (of the rectified left view; pixel centres
 *       52     8  cy                             at integer coordinates, as OpenCV)
 *       60     8  baseline B (calibration unit: metres from stereo-calibrate)
 *       68     8  doffs = cx_right - cx_left, px
 *       76     4  CRC-32 (zlib) of the payload
 *       80     4  CRC-32 (zlib) of bytes 0..79
 *       84        payload as version 1
 * The file size must be exactly 84 + 12 * w * h bytes; a present camera must pass
 * depth_camera_check (f > 0, B > 0, all finite).
 */
#ifndef STEREO_MAPFILE_H
#define STEREO_MAPFILE_H

#include <stddef.h>
#include "depth.h"
#include "stereo.h"

#define MAPFILE_VERSION 2         /* what mapfile_write writes */
#define MAPFILE_TYPE_FIXED16 1
#define MAPFILE_HEADER_SIZE 40    /* version 1 */
#define MAPFILE_HEADER_SIZE_V2 84 /* version 2 */

/* Reads both maps (allocating xy/frac; release with mapfile_free). 0, or -1 with
 * "path: what is wrong" in err (bad magic, version, sizes, checksum, truncation, ...). */
int mapfile_read(const char *path, stereo_map maps[2], char *err, size_t errlen);

/* mapfile_read, and the camera of a version 2 file: *has_camera = 1 and *cam filled, or
 * *has_camera = 0 (version 1, or version 2 without one). cam and has_camera may be NULL. */
int mapfile_read_camera(const char *path, stereo_map maps[2], depth_camera *cam,
                        int *has_camera, char *err, size_t errlen);

/* Writes version 2 atomically (nothing is left behind on failure), without a camera. The two
 * maps must have equal sizes. */
int mapfile_write(const char *path, const stereo_map maps[2], char *err, size_t errlen);

/* The same with the camera (NULL: none); a camera that fails depth_camera_check is refused. */
int mapfile_write_camera(const char *path, const stereo_map maps[2], const depth_camera *cam,
                         char *err, size_t errlen);

void mapfile_free(stereo_map maps[2]);

/* Fills an identity map (output = source size). Allocates; release with mapfile_free. */
int mapfile_identity(stereo_map *m, int width, int height);

#endif
