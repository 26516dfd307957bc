/* SPDX-License-Identifier: Apache-2.0 */
/* mapfile.h — the project's binary rectification-map file (written by stereo-calibrate, read by
 * stereo-match --maps and the live app).
 *
 * Layout, all integers little-endian:
 *   offset  size  field
 *        0     8  magic "STMAPS\r\n" (the CR LF catches text-mode mangling)
 *        8     4  version = 1
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
 */
#ifndef STEREO_MAPFILE_H
#define STEREO_MAPFILE_H

#include <stddef.h>
#include "stereo.h"

#define MAPFILE_VERSION 1
#define MAPFILE_TYPE_FIXED16 1
#define MAPFILE_HEADER_SIZE 40

/* Reads both maps (allocating xy/frac; release with mapfile_free). 0, or -1 with
 * "path: what is wrong" in err (bad magic, version, sizes, checksum, truncation, ...). */
int mapfile_read(const char *path, stereo_map maps[2], char *err, size_t errlen);

/* Writes atomically (nothing is left behind on failure). The two maps must have equal sizes. */
int mapfile_write(const char *path, const stereo_map maps[2], char *err, size_t errlen);

void mapfile_free(stereo_map maps[2]);

/* Fills an identity map (output = source size). Allocates; release with mapfile_free. */
int mapfile_identity(stereo_map *m, int width, int height);

#endif
