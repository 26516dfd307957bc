/* SPDX-License-Identifier: Apache-2.0 */
/* pnm.c — binary PGM/PPM and PFM, image/fmap allocation, and the file helpers that image_io.c
 * shares. libc only: this file is built on machines without libpng or libturbojpeg. */
#include "pnm.h"

#include "outpath.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stereo.h" /* STEREO_MAX_SIDE */

/* Longest header token we accept: dimensions and maxval are at most 10 digits, a PFM scale is a
 * short float; anything longer is not a header we can trust. */
#define TOKEN_MAX 32

/* ---- shared helpers ------------------------------------------------------------------------ */

void imgio_error(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    int n = snprintf(err, errlen, "%s: ", path ? path : "(null)");
    if (n < 0 || (size_t)n >= errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* Messages may quote header bytes from a broken file (or an odd path): keep them one
     * printable line for the terminal and for logs. */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

FILE *imgio_open(const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        imgio_error(err, errlen, "(empty path)", "no file name given");
        return NULL;
    }
    /* a FIFO or a device would block or never end: regular files only (outpath.h) */
    char why[160];
    FILE *f = open_input_file(path, why, sizeof why);
    if (!f) {
        imgio_error(err, errlen, path, "%s", why);
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size == 0) {
        imgio_error(err, errlen, path, "empty file");
        fclose(f);
        return NULL;
    }
    return f;
}

int image_check_side(const char *path, long long width, long long height, char *err,
                     size_t errlen)
{
    if (width <= STEREO_MAX_SIDE && height <= STEREO_MAX_SIDE)
        return 0;
    imgio_error(err, errlen, path, "%lldx%lld is larger than the largest image the matcher takes "
                "(%dx%d)", width, height, STEREO_MAX_SIDE, STEREO_MAX_SIDE);
    return -1;
}

int image_size(int width, int height, int channels, int depth, size_t *bytes)
{
    if (width < 1 || height < 1 || (channels != 1 && channels != 3) || (depth != 8 && depth != 16))
        return -1;
    uint64_t samples = (uint64_t)width * (uint64_t)height * (uint64_t)channels;
    if (samples >= (UINT64_C(1) << 31))
        return -1;
    uint64_t n = samples * (uint64_t)(depth / 8);
    if (n > SIZE_MAX)
        return -1;
    if (bytes)
        *bytes = (size_t)n;
    return 0;
}

int image_alloc(image *img, int width, int height, int channels, int depth)
{
    size_t bytes;
    if (!img)
        return -1;
    memset(img, 0, sizeof *img);
    if (image_size(width, height, channels, depth, &bytes) != 0)
        return -1;
    img->data = calloc(1, bytes);
    if (!img->data)
        return -1;
    img->width = width;
    img->height = height;
    img->channels = channels;
    img->depth = depth;
    return 0;
}

void image_free(image *img)
{
    if (!img)
        return;
    free(img->data);
    memset(img, 0, sizeof *img);
}

void fmap_free(fmap *m)
{
    if (!m)
        return;
    free(m->data);
    memset(m, 0, sizeof *m);
}

/* ---- header parsing ------------------------------------------------------------------------ */

/* Reads the next whitespace-separated token, skipping '#' comments when comments is set (PNM
 * allows them anywhere in the header; PFM does not). Consumes exactly one whitespace byte after
 * the token, which is what separates the last header field from the raster. Returns the token
 * length, 0 at end of file, -1 for a token too long to be a header field. */
static int read_token(FILE *f, char *buf, int comments)
{
    int c = getc(f);
    for (;;) {
        while (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
            c = getc(f);
        if (c == '#' && comments) {
            while (c != '\n' && c != '\r' && c != EOF)
                c = getc(f);
            continue;
        }
        break;
    }
    int n = 0;
    while (c != EOF && !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
                         c == '\f')) {
        if (n >= TOKEN_MAX - 1)
            return -1;
        buf[n++] = (char)c;
        c = getc(f);
    }
    buf[n] = '\0';
    if (n > 0 && c == EOF)
        return 0; /* a header that ends without its separator has no raster: truncated */
    return n;
}

/* The three header fields after the magic (width, height, maxval or scale) into tok; kind
 * ("PNM" / "PFM") names the format in the error. 0, or -1 with err set. */
static int read_header_fields(FILE *f, char tok[3][TOKEN_MAX], int comments, const char *kind,
                              const char *path, char *err, size_t errlen)
{
    for (int i = 0; i < 3; i++) {
        int n = read_token(f, tok[i], comments);
        if (n <= 0) {
            imgio_error(err, errlen, path, "%s %s header", n == 0 ? "truncated" : "malformed",
                        kind);
            return -1;
        }
    }
    return 0;
}

/* Parses a positive decimal int token; -1 when it is not one (sign, junk, overflow). */
static long parse_positive(const char *tok)
{
    if (tok[0] < '0' || tok[0] > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(tok, &end, 10);
    if (*end != '\0' || errno == ERANGE || v < 1 || v > INT_MAX)
        return -1;
    return v;
}

/* Bytes left in f after the current position, or -1 when f is not a regular file. Checked
 * before allocating so that a truncated file or a lying header fails fast, without first
 * allocating what the header claims. */
static long long bytes_left(FILE *f)
{
    struct stat st;
    long pos = ftell(f);
    if (pos < 0 || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    return (long long)st.st_size - pos;
}

/* ---- PNM ----------------------------------------------------------------------------------- */

/* Explains a first-two-bytes signature that is not a binary PGM/PPM. */
static void refuse_pnm_kind(const unsigned char *m, const char *path, char *err, size_t errlen)
{
    if (m[0] == 'P' && (m[1] == 'f' || m[1] == 'F'))
        imgio_error(err, errlen, path, "PFM is a float format: read it with pfm_read");
    else if (m[0] == 'P' && (m[1] == '2' || m[1] == '3'))
        imgio_error(err, errlen, path, "ASCII PNM (P%c) is not supported, only binary P5/P6",
                    m[1]);
    else if (m[0] == 'P' && (m[1] == '1' || m[1] == '4'))
        imgio_error(err, errlen, path, "PBM bitmaps (P%c) are not supported, only P5/P6", m[1]);
    else if (m[0] == 'P' && m[1] == '7')
        imgio_error(err, errlen, path, "PAM (P7) is not supported, only P5/P6");
    else
        imgio_error(err, errlen, path, "not a PGM/PPM file");
}

int pnm_read(const char *path, image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;

    unsigned char magic[2] = {0, 0};
    char tok[3][TOKEN_MAX];
    if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P' || (magic[1] != '5' && magic[1] != '6')) {
        refuse_pnm_kind(magic, path, err, errlen);
        goto fail;
    }
    int channels = magic[1] == '5' ? 1 : 3;
    if (read_header_fields(f, tok, 1, "PNM", path, err, errlen) != 0)
        goto fail;
    long width = parse_positive(tok[0]), height = parse_positive(tok[1]);
    long maxval = parse_positive(tok[2]);
    if (width < 0 || height < 0) {
        imgio_error(err, errlen, path, "bad PNM dimensions \"%s\" x \"%s\"", tok[0], tok[1]);
        goto fail;
    }
    if (maxval < 1 || maxval > 65535) {
        imgio_error(err, errlen, path, "bad PNM maxval \"%s\" (must be 1..65535)", tok[2]);
        goto fail;
    }
    if (image_check_side(path, width, height, err, errlen) != 0)
        goto fail;
    int depth = maxval < 256 ? 8 : 16;
    size_t bytes;
    if (image_size((int)width, (int)height, channels, depth, &bytes) != 0) {
        imgio_error(err, errlen, path, "image dimensions %ldx%ld are too large", width, height);
        goto fail;
    }
    long long left = bytes_left(f);
    if (left >= 0 && (unsigned long long)left < bytes) {
        imgio_error(err, errlen, path, "truncated PNM data (%lld of %zu bytes)", left, bytes);
        goto fail;
    }
    if (image_alloc(out, (int)width, (int)height, channels, depth) != 0) {
        imgio_error(err, errlen, path, "out of memory for %ldx%ld image", width, height);
        goto fail;
    }
    if (fread(out->data, 1, bytes, f) != bytes) {
        imgio_error(err, errlen, path, ferror(f) ? "read error" : "truncated PNM data");
        goto fail;
    }
    if (depth == 16) {
        /* File samples are big-endian; rewriting each pair in place is safe. */
        unsigned char *b = out->data;
        uint16_t *s = out->data;
        for (size_t i = 0; i < bytes / 2; i++)
            s[i] = (uint16_t)(b[2 * i] << 8 | b[2 * i + 1]);
    }
    fclose(f);
    return 0;

fail:
    image_free(out);
    fclose(f);
    return -1;
}

static int write_pnm_body(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const image *img = ctx;
    fprintf(f, "P%c\n%d %d\n%d\n", img->channels == 1 ? '5' : '6', img->width, img->height,
            img->depth == 8 ? 255 : 65535);
    size_t row_samples = (size_t)img->width * (size_t)img->channels;
    if (img->depth == 8) {
        fwrite(img->data, 1, row_samples * (size_t)img->height, f);
        return 0;
    }
    unsigned char *row = malloc(row_samples * 2);
    if (!row) {
        imgio_error(err, errlen, path, "out of memory");
        return -1;
    }
    const uint16_t *s = img->data;
    for (int y = 0; y < img->height; y++) {
        for (size_t i = 0; i < row_samples; i++) {
            uint16_t v = s[(size_t)y * row_samples + i];
            row[2 * i] = (unsigned char)(v >> 8);
            row[2 * i + 1] = (unsigned char)(v & 0xff);
        }
        fwrite(row, 1, row_samples * 2, f);
    }
    free(row);
    return 0;
}

int pnm_write(const char *path, const image *img, char *err, size_t errlen)
{
    if (!img || !img->data || image_size(img->width, img->height, img->channels, img->depth,
                                         NULL) != 0) {
        imgio_error(err, errlen, path, "invalid image to write (size, channels or depth)");
        return -1;
    }
    return atomic_write_file(path, write_pnm_body, img, err, errlen);
}

/* ---- PFM ----------------------------------------------------------------------------------- */

int pfm_read(const char *path, fmap *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;

    unsigned char magic[2] = {0, 0};
    char tok[3][TOKEN_MAX];
    unsigned char *raw = NULL;
    if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P' || (magic[1] != 'f' && magic[1] != 'F')) {
        imgio_error(err, errlen, path, "not a PFM file");
        goto fail;
    }
    if (magic[1] == 'F') {
        imgio_error(err, errlen, path, "colour PFM (PF) is not supported: need 1-channel Pf");
        goto fail;
    }
    if (read_header_fields(f, tok, 0, "PFM", path, err, errlen) != 0)
        goto fail;
    long width = parse_positive(tok[0]), height = parse_positive(tok[1]);
    if (width < 0 || height < 0) {
        imgio_error(err, errlen, path, "bad PFM dimensions \"%s\" x \"%s\"", tok[0], tok[1]);
        goto fail;
    }
    if (image_check_side(path, width, height, err, errlen) != 0)
        goto fail;
    char *end;
    double scale = strtod(tok[2], &end);
    if (*end != '\0' || !isfinite(scale) || scale == 0.0) {
        imgio_error(err, errlen, path, "bad PFM scale \"%s\"", tok[2]);
        goto fail;
    }
    /* Only the sign matters (negative = little-endian). The magnitude is nominally a unit
     * multiplier, but disparity writers ignore it: Middlebury 2014 GT says -0.003922 and
     * stores plain pixels (applying it, as OpenCV does, gives disparities 255x too small). */
    int little = scale < 0;
    size_t bytes;
    if (image_size((int)width, (int)height, 1, 16, &bytes) != 0) { /* 1 x 16 bit: same limit */
        imgio_error(err, errlen, path, "PFM dimensions %ldx%ld are too large", width, height);
        goto fail;
    }
    size_t count = (size_t)width * (size_t)height;
    bytes = count * 4;
    long long left = bytes_left(f);
    if (left >= 0 && (unsigned long long)left < bytes) {
        imgio_error(err, errlen, path, "truncated PFM data (%lld of %zu bytes)", left, bytes);
        goto fail;
    }
    raw = malloc(bytes);
    out->data = malloc(count * sizeof(float));
    if (!raw || !out->data) {
        imgio_error(err, errlen, path, "out of memory for %ldx%ld map", width, height);
        goto fail;
    }
    if (fread(raw, 1, bytes, f) != bytes) {
        imgio_error(err, errlen, path, ferror(f) ? "read error" : "truncated PFM data");
        goto fail;
    }
    /* File rows run bottom-up; memory rows top-down. */
    for (long y = 0; y < height; y++) {
        const unsigned char *src = raw + (size_t)(height - 1 - y) * (size_t)width * 4;
        float *dst = out->data + (size_t)y * (size_t)width;
        for (long x = 0; x < width; x++, src += 4) {
            uint32_t u = little ? (uint32_t)src[0] | (uint32_t)src[1] << 8 |
                                      (uint32_t)src[2] << 16 | (uint32_t)src[3] << 24
                                : (uint32_t)src[3] | (uint32_t)src[2] << 8 |
                                      (uint32_t)src[1] << 16 | (uint32_t)src[0] << 24;
            memcpy(&dst[x], &u, 4);
        }
    }
    out->width = (int)width;
    out->height = (int)height;
    free(raw);
    fclose(f);
    return 0;

fail:
    free(raw);
    fmap_free(out);
    fclose(f);
    return -1;
}

static int write_pfm_body(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const fmap *m = ctx;
    fprintf(f, "Pf\n%d %d\n-1.0\n", m->width, m->height);
    unsigned char *row = malloc((size_t)m->width * 4);
    if (!row) {
        imgio_error(err, errlen, path, "out of memory");
        return -1;
    }
    for (int y = m->height - 1; y >= 0; y--) {
        const float *src = m->data + (size_t)y * (size_t)m->width;
        for (int x = 0; x < m->width; x++) {
            uint32_t u;
            memcpy(&u, &src[x], 4);
            row[4 * x] = (unsigned char)(u & 0xff);
            row[4 * x + 1] = (unsigned char)(u >> 8 & 0xff);
            row[4 * x + 2] = (unsigned char)(u >> 16 & 0xff);
            row[4 * x + 3] = (unsigned char)(u >> 24);
        }
        fwrite(row, 1, (size_t)m->width * 4, f);
    }
    free(row);
    return 0;
}

int pfm_write(const char *path, const fmap *m, char *err, size_t errlen)
{
    if (!m || !m->data || image_size(m->width, m->height, 1, 16, NULL) != 0) {
        imgio_error(err, errlen, path, "invalid map to write (size)");
        return -1;
    }
    return atomic_write_file(path, write_pfm_body, m, err, errlen);
}
