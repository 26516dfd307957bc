/* SPDX-License-Identifier: Apache-2.0 */
/* image_io.h — reading and writing images and disparity maps.
 *
 * Formats by content (magic bytes), not by file name, for reading:
 *   PNG  (libpng; 8- or 16-bit; grey, grey+alpha, RGB, RGBA, palette)
 *   JPEG (libturbojpeg; grey or colour)
 *   PNM  (P5 / P6 binary PGM/PPM, maxval 1..65535) — libc only, see pnm.h
 *   PFM  (Pf / PF, float32, either endianness, rows stored bottom-up) — libc only, see pnm.h
 * Writing picks the format from the extension (.png, .pgm/.ppm, .pfm). Every write goes to a
 * temporary file in the same directory and is renamed into place only when complete, so a failed
 * write never leaves a partial file behind.
 *
 * All functions return 0 on success and -1 on failure with a one-line message in err:
 * "<path>: <what is wrong>" (e.g. "left.png: truncated PNG data").
 */
#ifndef STEREO_IMAGE_IO_H
#define STEREO_IMAGE_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int width, height;
    int channels;      /* 1 (grey) or 3 (RGB, in R,G,B byte order) */
    int depth;         /* bits per sample: 8 (uint8_t data) or 16 (uint16_t data, host order) */
    void *data;        /* tightly packed rows, width*channels samples each, top row first */
} image;

/* Reads any supported 8/16-bit format. Alpha is dropped (not composited); palette is expanded
 * to RGB, or to grey when every palette entry is grey; grey+alpha -> grey.
 * PFM is refused here (it is float): use pfm_read. */
int image_read(const char *path, image *out, char *err, size_t errlen);

/* Reads as 8-bit: 16-bit samples are reduced by >> 8. */
int image_read8(const char *path, image *out, char *err, size_t errlen);

/* Writes by extension: .png (8/16-bit, 1 or 3 channels), .pgm (1 channel), .ppm (3 channels). */
int image_write(const char *path, const image *img, char *err, size_t errlen);

void image_free(image *img);

/* Allocates data for the given geometry (zeroed); returns -1 on overflow / out of memory. */
int image_alloc(image *img, int width, int height, int channels, int depth);

/* A float map: width*height, top row first; non-finite values (inf, NaN) mean invalid. */
typedef struct {
    int width, height;
    float *data;
} fmap;

/* PFM (1 channel only), top row first in memory whatever the file's row order. */
int pfm_read(const char *path, fmap *out, char *err, size_t errlen);
int pfm_write(const char *path, const fmap *m, char *err, size_t errlen); /* little-endian, bottom-up, +inf stays +inf */
void fmap_free(fmap *m);

/* Reads a disparity / ground-truth map into disparities in pixels (invalid = +inf):
 *   .pfm: the stored float (non-finite = invalid);
 *   PNG/PGM (8 or 16-bit, 1 channel): value / scale, 0 = invalid.
 * scale <= 0 selects the default for the file: 1 for PFM, 256 for 16-bit, 1 for 8-bit. */
int disparity_read(const char *path, double scale, fmap *out, char *err, size_t errlen);

/* Writes a stage disparity map (int16, 16 * d or STEREO_INVALID: gpu/stereo.h) by the
 * extension of path: .pfm float pixels (+inf = invalid), else a 16-bit PNG of 256 * d
 * (0 = invalid, clamped to 65535; a negative d is refused, naming the pixel), as stereo-match
 * writes them. Atomic (outpath.h). */
int disparity_write(const char *path, const int16_t *d, int w, int h, char *err, size_t n);

#ifdef __cplusplus
}
#endif
#endif
