/* SPDX-License-Identifier: Apache-2.0 */
/* image_io.c — format detection, PNG (libpng, classic API) and JPEG (TurboJPEG 2.x), and the
 * disparity-map reader. PNM/PFM and the shared helpers live in pnm.c (libc only).
 *
 * PNG goes through the classic libpng API, not the simplified png_image one: the latter converts
 * 16-bit data through linear light, and we need stored values exactly (ground truth). */
#include "image_io.h"
#include "pnm.h"
#include "stereo.h" /* STEREO_SUBPIXEL_SCALE */

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <turbojpeg.h>

/* A JPEG bigger than this is not a camera frame; refusing it bounds what we load into memory. */
#define JPEG_MAX_FILE_BYTES (256L << 20)

typedef enum { FILE_UNKNOWN, FILE_PNG, FILE_JPEG, FILE_PNM, FILE_PFM } file_kind;

/* Classifies path by its first bytes; -1 (err set) when it cannot be opened or read. */
static int sniff(const char *path, file_kind *kind, char *err, size_t errlen)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char m[8] = {0};
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;
    size_t n = fread(m, 1, sizeof m, f);
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        imgio_error(err, errlen, path, "read error");
        return -1;
    }
    if (n == 0) { /* a non-regular file (pipe) that turned out empty */
        imgio_error(err, errlen, path, "empty file");
        return -1;
    }
    if (n == 8 && memcmp(m, png_sig, 8) == 0)
        *kind = FILE_PNG;
    else if (n >= 3 && m[0] == 0xff && m[1] == 0xd8 && m[2] == 0xff)
        *kind = FILE_JPEG;
    else if (n >= 2 && m[0] == 'P' && (m[1] == 'f' || m[1] == 'F'))
        *kind = FILE_PFM;
    else if (n >= 2 && m[0] == 'P' && m[1] >= '1' && m[1] <= '7')
        *kind = FILE_PNM; /* pnm_read explains the kinds it does not support */
    else
        *kind = FILE_UNKNOWN;
    return 0;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* ---- PNG ----------------------------------------------------------------------------------- */

typedef struct {
    char msg[160]; /* libpng's message for the error that longjmp'ed */
} png_err_ctx;

static void png_on_error(png_structp png, png_const_charp msg)
{
    png_err_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    png_longjmp(png, 1);
}

/* libpng prints warnings (e.g. about colour profiles) to stderr by default; none of them changes
 * the samples we read, and library code must not write to the terminal. */
static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static int read_png(const char *path, image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;
    png_err_ctx ectx = {""};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ectx, png_on_error,
                                             png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        imgio_error(err, errlen, path, "out of memory (libpng)");
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        fclose(f);
        return -1;
    }
    /* Set between setjmp and a possible longjmp, so volatile: both are freed on the error path. */
    png_bytep *volatile rows = NULL;
    unsigned char *volatile indices = NULL;
    if (setjmp(png_jmpbuf(png))) {
        if (feof(f))
            imgio_error(err, errlen, path, "truncated PNG data");
        else
            imgio_error(err, errlen, path, "corrupt PNG: %s", ectx.msg);
        goto fail;
    }
    png_init_io(png, f);
    png_read_info(png, info);

    png_uint_32 w, h;
    int bit_depth, color_type;
    png_get_IHDR(png, info, &w, &h, &bit_depth, &color_type, NULL, NULL, NULL);
    /* png_read_info has read the chunks before the image data only: nothing is allocated yet */
    if (image_check_side(path, w, h, err, errlen) != 0)
        goto fail;

    /* Palette images are read as 8-bit indices and mapped here: exact, and it lets an all-grey
     * palette become a 1-channel image (libpng would only give RGB). */
    png_colorp palette = NULL;
    int npalette = 0;
    int channels, depth = bit_depth == 16 ? 16 : 8;
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        if (!png_get_PLTE(png, info, &palette, &npalette) || npalette < 1) {
            imgio_error(err, errlen, path, "corrupt PNG: palette image without a palette");
            goto fail;
        }
        channels = 1;
        for (int i = 0; i < npalette; i++)
            if (palette[i].red != palette[i].green || palette[i].red != palette[i].blue)
                channels = 3;
        png_set_packing(png); /* 1/2/4-bit indices -> one byte each, values unchanged */
    } else if (color_type & PNG_COLOR_MASK_COLOR) {
        channels = 3;
    } else {
        channels = 1;
        if (bit_depth < 8)
            png_set_expand_gray_1_2_4_to_8(png); /* scaled to 0..255, as every viewer shows it */
    }
    /* Alpha is dropped, not composited; tRNS is ignored because we never ask for expansion. */
    if (color_type & PNG_COLOR_MASK_ALPHA)
        png_set_strip_alpha(png);
    if (bit_depth == 16 && host_is_little_endian())
        png_set_swap(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    size_t bytes;
    if (w > INT32_MAX || h > INT32_MAX ||
        image_size((int)w, (int)h, channels, depth, &bytes) != 0) {
        imgio_error(err, errlen, path, "image dimensions %lux%lu are too large",
                    (unsigned long)w, (unsigned long)h);
        goto fail;
    }
    int in_channels = palette ? 1 : channels;
    size_t row_bytes = (size_t)w * (size_t)in_channels * (size_t)(depth / 8);
    if (png_get_rowbytes(png, info) != row_bytes) {
        imgio_error(err, errlen, path, "unsupported PNG layout (row of %zu bytes, expected %zu)",
                    (size_t)png_get_rowbytes(png, info), row_bytes);
        goto fail;
    }
    if (image_alloc(out, (int)w, (int)h, channels, depth) != 0) {
        imgio_error(err, errlen, path, "out of memory for %lux%lu image", (unsigned long)w,
                    (unsigned long)h);
        goto fail;
    }
    unsigned char *target = out->data;
    if (palette) {
        indices = malloc((size_t)w * (size_t)h);
        if (!indices) {
            imgio_error(err, errlen, path, "out of memory");
            goto fail;
        }
        target = indices;
    }
    rows = malloc((size_t)h * sizeof *rows);
    if (!rows) {
        imgio_error(err, errlen, path, "out of memory");
        goto fail;
    }
    for (png_uint_32 y = 0; y < h; y++)
        rows[y] = target + (size_t)y * row_bytes;
    png_read_image(png, rows);
    png_read_end(png, NULL); /* a file cut after the image data still lacks its IEND: error */

    if (palette) {
        unsigned char *dst = out->data;
        size_t n = (size_t)w * (size_t)h;
        for (size_t i = 0; i < n; i++) {
            int k = indices[i];
            if (k >= npalette) {
                imgio_error(err, errlen, path, "corrupt PNG: palette index %d out of range", k);
                goto fail;
            }
            if (channels == 1) {
                dst[i] = palette[k].red;
            } else {
                dst[3 * i] = palette[k].red;
                dst[3 * i + 1] = palette[k].green;
                dst[3 * i + 2] = palette[k].blue;
            }
        }
    }
    free(rows);
    free(indices);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    return 0;

fail:
    free(rows);
    free(indices);
    image_free(out);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    return -1;
}

static int write_png_body(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const image *img = ctx;
    png_err_ctx ectx = {""};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ectx, png_on_error,
                                              png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        imgio_error(err, errlen, path, "out of memory (libpng)");
        png_destroy_write_struct(png ? &png : NULL, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        imgio_error(err, errlen, path, "PNG write failed: %s", ectx.msg);
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, img->depth,
                 img->channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (img->depth == 16 && host_is_little_endian())
        png_set_swap(png); /* libpng transforms a copy of each row, never the caller's data */
    size_t row_bytes = (size_t)img->width * (size_t)img->channels * (size_t)(img->depth / 8);
    for (int y = 0; y < img->height; y++)
        png_write_row(png, (png_const_bytep)img->data + (size_t)y * row_bytes);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

/* ---- JPEG ---------------------------------------------------------------------------------- */

static int read_jpeg(const char *path, image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;
    unsigned char *buf = NULL;
    tjhandle tj = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size <= 0 || fseek(f, 0, SEEK_SET) != 0) {
        imgio_error(err, errlen, path, "cannot determine the JPEG file's size");
        goto fail;
    }
    if (size > JPEG_MAX_FILE_BYTES) {
        imgio_error(err, errlen, path, "JPEG file too large (%ld bytes)", size);
        goto fail;
    }
    buf = malloc((size_t)size);
    if (!buf) {
        imgio_error(err, errlen, path, "out of memory");
        goto fail;
    }
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        imgio_error(err, errlen, path, "read error");
        goto fail;
    }
    tj = tjInitDecompress();
    if (!tj) {
        imgio_error(err, errlen, path, "cannot initialise TurboJPEG: %s", tjGetErrorStr2(NULL));
        goto fail;
    }
    int w, h, subsamp, colorspace;
    if (tjDecompressHeader3(tj, buf, (unsigned long)size, &w, &h, &subsamp, &colorspace) != 0) {
        imgio_error(err, errlen, path, "corrupt JPEG header: %s", tjGetErrorStr2(tj));
        goto fail;
    }
    if (image_check_side(path, w, h, err, errlen) != 0)
        goto fail;
    int channels = colorspace == TJCS_GRAY ? 1 : 3;
    if (image_size(w, h, channels, 8, NULL) != 0) {
        imgio_error(err, errlen, path, "image dimensions %dx%d are too large", w, h);
        goto fail;
    }
    if (image_alloc(out, w, h, channels, 8) != 0) {
        imgio_error(err, errlen, path, "out of memory for %dx%d image", w, h);
        goto fail;
    }
    /* A truncated JPEG decodes "successfully" with a warning and grey filler rows; for us that
     * is a damaged frame, so warnings stop the decode and count as errors. */
    if (tjDecompress2(tj, buf, (unsigned long)size, out->data, w, 0, h,
                      channels == 1 ? TJPF_GRAY : TJPF_RGB,
                      TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING) != 0) {
        if (tjGetErrorCode(tj) == TJERR_WARNING)
            imgio_error(err, errlen, path, "truncated or damaged JPEG data: %s",
                        tjGetErrorStr2(tj));
        else
            imgio_error(err, errlen, path, "corrupt JPEG: %s", tjGetErrorStr2(tj));
        goto fail;
    }
    tjDestroy(tj);
    free(buf);
    fclose(f);
    return 0;

fail:
    if (tj)
        tjDestroy(tj);
    free(buf);
    image_free(out);
    fclose(f);
    return -1;
}

/* ---- public API ---------------------------------------------------------------------------- */

int image_read(const char *path, image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    file_kind kind;
    if (sniff(path, &kind, err, errlen) != 0)
        return -1;
    switch (kind) {
    case FILE_PNG:
        return read_png(path, out, err, errlen);
    case FILE_JPEG:
        return read_jpeg(path, out, err, errlen);
    case FILE_PNM:
        return pnm_read(path, out, err, errlen);
    case FILE_PFM:
        imgio_error(err, errlen, path, "PFM is a float format: read it with pfm_read");
        return -1;
    default:
        imgio_error(err, errlen, path, "not an image file (PNG, JPEG, PGM/PPM expected)");
        return -1;
    }
}

int image_read8(const char *path, image *out, char *err, size_t errlen)
{
    if (image_read(path, out, err, errlen) != 0)
        return -1;
    if (out->depth == 16) {
        /* In place: byte i is written after sample i (bytes 2i, 2i+1) has been read. */
        size_t n = (size_t)out->width * (size_t)out->height * (size_t)out->channels;
        const uint16_t *src = out->data;
        unsigned char *dst = out->data;
        for (size_t i = 0; i < n; i++)
            dst[i] = (unsigned char)(src[i] >> 8);
        out->depth = 8;
    }
    return 0;
}

/* The extension of path's last component including the dot, or "" when there is none. */
static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot ? dot : "";
}

int image_write(const char *path, const image *img, char *err, size_t errlen)
{
    if (!path || !*path) {
        imgio_error(err, errlen, "(empty path)", "no file name given");
        return -1;
    }
    if (!img || !img->data ||
        image_size(img->width, img->height, img->channels, img->depth, NULL) != 0) {
        imgio_error(err, errlen, path, "invalid image to write (size, channels or depth)");
        return -1;
    }
    const char *ext = extension(path);
    if (strcasecmp(ext, ".png") == 0)
        return atomic_write_file(path, write_png_body, img, err, errlen);
    if (strcasecmp(ext, ".pgm") == 0 || strcasecmp(ext, ".ppm") == 0) {
        int want = strcasecmp(ext, ".pgm") == 0 ? 1 : 3;
        if (img->channels != want) {
            imgio_error(err, errlen, path, "%s needs %d channel%s, the image has %d", ext, want,
                        want == 1 ? "" : "s", img->channels);
            return -1;
        }
        return pnm_write(path, img, err, errlen);
    }
    imgio_error(err, errlen, path, "unsupported extension \"%s\" for writing (.png, .pgm, .ppm)",
                ext);
    return -1;
}

int disparity_read(const char *path, double scale, fmap *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (isnan(scale) || isinf(scale)) {
        imgio_error(err, errlen, path, "bad disparity scale");
        return -1;
    }
    file_kind kind;
    if (sniff(path, &kind, err, errlen) != 0)
        return -1;
    if (kind == FILE_PFM) {
        if (pfm_read(path, out, err, errlen) != 0)
            return -1;
        size_t n = (size_t)out->width * (size_t)out->height;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(out->data[i]))
                out->data[i] = INFINITY; /* one invalid marker, whatever the file used */
            else if (scale > 0)
                out->data[i] = (float)(out->data[i] / scale);
        }
        return 0;
    }
    if (kind == FILE_JPEG) {
        imgio_error(err, errlen, path, "JPEG is lossy and cannot hold a disparity map");
        return -1;
    }
    image img;
    if (image_read(path, &img, err, errlen) != 0)
        return -1;
    if (img.channels != 1) {
        imgio_error(err, errlen, path, "a disparity map needs 1 channel, this image has %d",
                    img.channels);
        image_free(&img);
        return -1;
    }
    if (scale <= 0)
        scale = img.depth == 16 ? 256.0 : 1.0;
    size_t n = (size_t)img.width * (size_t)img.height;
    out->data = malloc(n * sizeof(float));
    if (!out->data) {
        imgio_error(err, errlen, path, "out of memory");
        image_free(&img);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned v = img.depth == 16 ? ((const uint16_t *)img.data)[i]
                                     : ((const unsigned char *)img.data)[i];
        out->data[i] = v == 0 ? INFINITY : (float)(v / scale);
    }
    out->width = img.width;
    out->height = img.height;
    image_free(&img);
    return 0;
}

/* stereo.h's disparity (16 * d, STEREO_INVALID) as stereo-match writes it; a 16-bit PNG
 * (256 d, 0 = invalid) cannot hold a negative disparity: refused, naming the first pixel. */
int disparity_write(const char *path, const int16_t *d, int w, int h, char *err, size_t n)
{
    size_t count = (size_t)w * h;
    if (!strcasecmp(strrchr(path, '.') ? strrchr(path, '.') : "", ".pfm")) {
        fmap m = {w, h, malloc(count * sizeof(float))};
        if (!m.data) {
            snprintf(err, n, "%s: out of memory", path);
            return -1;
        }
        for (size_t i = 0; i < count; i++)
            m.data[i] = !stereo_disparity_valid(d[i]) ? INFINITY : d[i] / (float)STEREO_SUBPIXEL_SCALE;
        int rc = pfm_write(path, &m, err, n);
        free(m.data);
        return rc;
    }
    for (size_t i = 0; i < count; i++)
        if (stereo_disparity_valid(d[i]) && d[i] < 0) {
            snprintf(err, n,
                     "%s: pixel (%zu, %zu) has the negative disparity %.4g, which a 16-bit PNG "
                     "(256 * d, 0 = invalid) cannot hold: write a .pfm",
                     path, i % (size_t)w, i / (size_t)w, d[i] / (double)STEREO_SUBPIXEL_SCALE);
            return -1;
        }
    image im;
    if (image_alloc(&im, w, h, 1, 16) != 0) {
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    uint16_t *o = im.data;
    for (size_t i = 0; i < count; i++) /* 256 d = 16 * (16 d); 0 = invalid */
        o[i] = !stereo_disparity_valid(d[i]) ? 0 : (uint16_t)(d[i] * 16 > 65535 ? 65535 : d[i] * 16);
    int rc = image_write(path, &im, err, n);
    image_free(&im);
    return rc;
}
