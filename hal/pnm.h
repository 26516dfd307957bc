/* SPDX-License-Identifier: Apache-2.0 */
/* pnm.h — the libc-only half of image_io.h: binary PGM/PPM, PFM, and the shared file helpers.
 *
 * pnm.c builds and works without libpng and libturbojpeg (the GPU machine has neither); it also
 * implements pfm_read, pfm_write, fmap_free, image_alloc and image_free from image_io.h.
 * image_io.c (PNG, JPEG, format detection) builds on the helpers declared here, so that opening,
 * size checking and error messages are done one way for every format; every writer writes
 * through atomic_write_file (outpath.h), which the programs' other outputs use too.
 *
 * Functions returning int give 0 on success and -1 on failure with "<path>: <what is wrong>" in err.
 */
#ifndef STEREO_PNM_H
#define STEREO_PNM_H

#include <stdio.h>

#include "image_io.h"
#include "outpath.h" /* atomic_write_file */

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a binary PGM (P5) or PPM (P6), maxval 1..65535. maxval < 256 gives depth 8, otherwise
 * depth 16 (the file's big-endian samples in host order). Sample values are kept as stored, not
 * rescaled to the maxval: ground-truth maps are interpreted as value / scale. */
int pnm_read(const char *path, image *out, char *err, size_t errlen);

/* Writes P5 (1 channel) or P6 (3 channels), maxval 255 for depth 8 and 65535 for depth 16,
 * atomically (atomic_write_file, outpath.h). The extension is not checked here. */
int pnm_write(const char *path, const image *img, char *err, size_t errlen);

/* Formats "<path>: <fmt...>" into err (truncated to errlen, always terminated when errlen > 0). */
void imgio_error(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Opens path for binary reading; fails with a clear message for a missing file, a directory, a
 * FIFO or a device (refused without blocking: open_input_file, outpath.h), an empty file, or
 * anything else open refuses. */
FILE *imgio_open(const char *path, char *err, size_t errlen);

/* Refuses, from a file's header and before anything is allocated, an image (or map) larger than
 * the stage takes (STEREO_MAX_SIDE, stereo.h): 0 when width and height are at most that, else -1
 * with "<path>: WxH is larger than the largest image the matcher takes (8192x8192)". Every
 * reader (PNG, JPEG, PGM/PPM, PFM, map files, calibrations) checks through this one function. */
int image_check_side(const char *path, long long width, long long height, char *err,
                     size_t errlen);

/* Bytes needed for width x height x channels samples of depth bits (8 or 16). Returns -1 when a
 * dimension is < 1, channels is not 1 or 3, depth is not 8 or 16, or the sample count reaches
 * 1 << 31 (every index then fits an int, and nothing absurd is allocated from a file header). */
int image_size(int width, int height, int channels, int depth, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
