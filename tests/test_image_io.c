/* SPDX-License-Identifier: Apache-2.0 */
/* test_image_io.c — image_io.h / pnm.h: exact round trips, hand-written files with known bytes,
 * decoding of files written by libpng / TurboJPEG directly, refusal of broken input, and the
 * atomic-write promise (a failed write never leaves or damages a file). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <zlib.h>

#include "image_io.h"
#include "pnm.h"
#include "stereo.h" /* STEREO_INVALID */

static char tmpdir[64];

/* ---- helpers ------------------------------------------------------------------------------- */

static const char *tmp_path(char *buf, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Whole file into a malloc'ed buffer; *n gets the size. */
static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size >= 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return buf;
}

/* Number of entries in the temp dir: a failed write must not leave a temporary file. */
static int count_entries(void)
{
    DIR *d = opendir(tmpdir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* The error contract: one line, starting with the path. */
static void assert_error_names(const char *err, const char *path)
{
    assert_true(strncmp(err, path, strlen(path)) == 0);
    assert_true(strncmp(err + strlen(path), ": ", 2) == 0);
    assert_null(strchr(err, '\n'));
}

/* Fills an image with a pattern that uses the whole sample range and differs per channel. */
static void fill_pattern(image *img)
{
    size_t n = (size_t)img->width * (size_t)img->height * (size_t)img->channels;
    for (size_t i = 0; i < n; i++) {
        if (img->depth == 8)
            ((uint8_t *)img->data)[i] = (uint8_t)(i * 37 + 11);
        else
            ((uint16_t *)img->data)[i] = (uint16_t)(i * 40503u + 7u);
    }
    if (img->depth == 16) { /* make sure the extremes and a byte-order-sensitive value occur */
        ((uint16_t *)img->data)[0] = 0;
        ((uint16_t *)img->data)[1] = 65535;
        ((uint16_t *)img->data)[2] = 0x0102;
    }
}

static void round_trip(const char *name, int w, int h, int channels, int depth)
{
    char path[PATH_MAX], err[256];
    image a, b;
    assert_int_equal(image_alloc(&a, w, h, channels, depth), 0);
    fill_pattern(&a);
    tmp_path(path, name);
    assert_int_equal(image_write(path, &a, err, sizeof err), 0);
    assert_int_equal(image_read(path, &b, err, sizeof err), 0);
    assert_int_equal(b.width, w);
    assert_int_equal(b.height, h);
    assert_int_equal(b.channels, channels);
    assert_int_equal(b.depth, depth);
    assert_memory_equal(a.data, b.data, (size_t)w * h * channels * (depth / 8));
    image_free(&a);
    image_free(&b);
    unlink(path);
}

/* Writes a PNG with libpng directly, so the reader is tested on files it did not write.
 * rows: h rows of rowbytes each, already in PNG sample layout (big-endian 16-bit, packed). */
static void write_png_direct(const char *path, int w, int h, int bit_depth, int color_type,
                             int interlace, const unsigned char *rows, size_t rowbytes,
                             const png_color *palette, int npalette)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng failed writing %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, bit_depth, color_type,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (palette)
        png_set_PLTE(png, info, palette, npalette);
    png_write_info(png, info);
    png_bytep *rp = malloc((size_t)h * sizeof *rp);
    assert_non_null(rp);
    for (int y = 0; y < h; y++)
        rp[y] = (png_bytep)rows + (size_t)y * rowbytes;
    png_write_image(png, rp); /* handles the interlace passes itself */
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(rp);
    assert_int_equal(fclose(f), 0);
}

/* A w x h grey gradient JPEG at quality 100 (or RGB when channels == 3); returns its size. */
static size_t write_jpeg(const char *path, int w, int h, int channels, unsigned char *pixels)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < channels; c++)
                pixels[((size_t)y * w + x) * channels + c] =
                    (unsigned char)((x * 4 + y * 2 + c * 60) & 0xff);
    tjhandle tj = tjInitCompress();
    assert_non_null(tj);
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    assert_int_equal(tjCompress2(tj, pixels, w, 0, h, channels == 1 ? TJPF_GRAY : TJPF_RGB, &jpeg,
                                 &size, channels == 1 ? TJSAMP_GRAY : TJSAMP_444, 100, 0),
                     0);
    write_bytes(path, jpeg, size);
    tjFree(jpeg);
    tjDestroy(tj);
    return size;
}

/* Cuts path down to its first half. */
static void truncate_to_half(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
}

static void expect_read_error(const char *path, const char *fragment)
{
    char err[256] = "";
    image img = {0};
    assert_int_equal(image_read(path, &img, err, sizeof err), -1);
    assert_null(img.data);
    assert_error_names(err, path);
    if (fragment && !strstr(err, fragment))
        fail_msg("error \"%s\" does not mention \"%s\"", err, fragment);
}

/* ---- round trips --------------------------------------------------------------------------- */

static void png_grey8_round_trip_is_exact(void **state)
{
    round_trip("g8.png", 37, 23, 1, 8);
}

static void png_grey16_round_trip_is_exact(void **state)
{
    round_trip("g16.png", 37, 23, 1, 16);
}

static void png_rgb8_round_trip_is_exact(void **state)
{
    round_trip("c8.png", 31, 17, 3, 8);
}

static void png_rgb16_round_trip_is_exact(void **state)
{
    round_trip("c16.png", 31, 17, 3, 16);
}

static void pgm8_and_pgm16_round_trips_are_exact(void **state)
{
    round_trip("g8.pgm", 13, 7, 1, 8);
    round_trip("g16.pgm", 13, 7, 1, 16);
}

static void ppm8_and_ppm16_round_trips_are_exact(void **state)
{
    round_trip("c8.ppm", 13, 7, 3, 8);
    round_trip("c16.ppm", 13, 7, 3, 16);
}

static void pgm16_file_holds_big_endian_samples(void **state)
{
    char path[PATH_MAX], err[256];
    image img;
    assert_int_equal(image_alloc(&img, 2, 1, 1, 16), 0);
    ((uint16_t *)img.data)[0] = 0x0102;
    ((uint16_t *)img.data)[1] = 0xfffe;
    assert_int_equal(image_write(tmp_path(path, "be.pgm"), &img, err, sizeof err), 0);
    size_t n;
    unsigned char *bytes = read_bytes(path, &n);
    static const char expect[] = "P5\n2 1\n65535\n\x01\x02\xff\xfe";
    assert_int_equal(n, sizeof expect - 1);
    assert_memory_equal(bytes, expect, n);
    free(bytes);
    image_free(&img);
    unlink(path);
}

static void pnm_handwritten_with_comments_keeps_values_below_maxval(void **state)
{
    char path[PATH_MAX], err[256];
    static const char file[] = "P5\n# a comment\n3 # another\n2\n15\n\x00\x01\x0f\x07\x08\x09";
    write_bytes(tmp_path(path, "small.pgm"), file, sizeof file - 1);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.width, 3);
    assert_int_equal(img.height, 2);
    assert_int_equal(img.depth, 8);
    static const unsigned char expect[6] = {0, 1, 15, 7, 8, 9};
    assert_memory_equal(img.data, expect, 6);
    image_free(&img);
    unlink(path);
}

static void pnm_maxval_above_255_reads_16bit_host_order(void **state)
{
    char path[PATH_MAX], err[256];
    static const char file[] = "P5 2 1 1000\n\x03\xe8\x00\x05";
    write_bytes(tmp_path(path, "m1000.pgm"), file, sizeof file - 1);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.depth, 16);
    assert_int_equal(((uint16_t *)img.data)[0], 1000);
    assert_int_equal(((uint16_t *)img.data)[1], 5);
    image_free(&img);
    unlink(path);
}

/* ---- PFM ----------------------------------------------------------------------------------- */

static void put_le(unsigned char *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(u >> (8 * i));
}

static void put_be(unsigned char *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(u >> (8 * (3 - i)));
}

static void pfm_round_trip_keeps_values_and_inf(void **state)
{
    char path[PATH_MAX], err[256];
    float v[6] = {0.0f, 1.5f, -2.25f, INFINITY, 1e-7f, 123456.789f};
    fmap m = {3, 2, v}, r;
    assert_int_equal(pfm_write(tmp_path(path, "rt.pfm"), &m, err, sizeof err), 0);
    assert_int_equal(pfm_read(path, &r, err, sizeof err), 0);
    assert_int_equal(r.width, 3);
    assert_int_equal(r.height, 2);
    assert_memory_equal(r.data, v, sizeof v);
    assert_true(isinf(r.data[3]) && r.data[3] > 0);
    fmap_free(&r);
    unlink(path);
}

/* Known bytes: a little-endian 2x2 map whose first file row is the bottom image row. */
static void pfm_handwritten_little_endian_is_bottom_up(void **state)
{
    char path[PATH_MAX], err[256];
    static const char header[] = "Pf\n2 2\n-1.0\n";
    unsigned char file[sizeof header - 1 + 16];
    memcpy(file, header, sizeof header - 1);
    unsigned char *p = file + sizeof header - 1;
    put_le(p + 0, 3.0f); /* file row 0 = bottom row (y = 1) */
    put_le(p + 4, 4.0f);
    put_le(p + 8, 1.0f); /* file row 1 = top row (y = 0) */
    put_le(p + 12, INFINITY);
    write_bytes(tmp_path(path, "le.pfm"), file, sizeof file);
    fmap m;
    assert_int_equal(pfm_read(path, &m, err, sizeof err), 0);
    assert_true(m.data[0] == 1.0f && isinf(m.data[1]) && m.data[2] == 3.0f && m.data[3] == 4.0f);
    fmap_free(&m);
    unlink(path);
}

static void pfm_handwritten_big_endian_positive_scale(void **state)
{
    char path[PATH_MAX], err[256];
    static const char header[] = "Pf\n1 2\n1.0\n";
    unsigned char file[sizeof header - 1 + 8];
    memcpy(file, header, sizeof header - 1);
    put_be(file + sizeof header - 1, 7.5f);     /* bottom */
    put_be(file + sizeof header - 1 + 4, -0.5f); /* top */
    write_bytes(tmp_path(path, "be.pfm"), file, sizeof file);
    fmap m;
    assert_int_equal(pfm_read(path, &m, err, sizeof err), 0);
    assert_true(m.data[0] == -0.5f && m.data[1] == 7.5f);
    fmap_free(&m);
    unlink(path);
}

static void pfm_write_emits_little_endian_bottom_up_bytes(void **state)
{
    char path[PATH_MAX], err[256];
    float v[2] = {1.0f, 2.0f}; /* 1 x 2: top 1.0, bottom 2.0 */
    fmap m = {1, 2, v};
    assert_int_equal(pfm_write(tmp_path(path, "w.pfm"), &m, err, sizeof err), 0);
    size_t n;
    unsigned char *bytes = read_bytes(path, &n);
    static const char header[] = "Pf\n1 2\n-1.0\n";
    unsigned char expect[sizeof header - 1 + 8];
    memcpy(expect, header, sizeof header - 1);
    put_le(expect + sizeof header - 1, 2.0f);
    put_le(expect + sizeof header - 1 + 4, 1.0f);
    assert_int_equal(n, sizeof expect);
    assert_memory_equal(bytes, expect, n);
    free(bytes);
    unlink(path);
}

static void pfm_refuses_colour_pf_and_truncation(void **state)
{
    char path[PATH_MAX], err[256];
    fmap m;
    static const char colour[] = "PF\n1 1\n-1.0\n\0\0\0\0\0\0\0\0\0\0\0\0";
    write_bytes(tmp_path(path, "colour.pfm"), colour, sizeof colour - 1);
    assert_int_equal(pfm_read(path, &m, err, sizeof err), -1);
    assert_error_names(err, path);
    assert_non_null(strstr(err, "PF"));
    assert_null(m.data);

    static const char shortfile[] = "Pf\n2 2\n-1.0\n\0\0\0\0";
    write_bytes(path, shortfile, sizeof shortfile - 1);
    assert_int_equal(pfm_read(path, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "truncated"));

    static const char zero_scale[] = "Pf\n1 1\n0\n\0\0\0\0";
    write_bytes(path, zero_scale, sizeof zero_scale - 1);
    assert_int_equal(pfm_read(path, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "scale"));
    unlink(path);
}

static void image_read_refuses_pfm_as_float(void **state)
{
    char path[PATH_MAX];
    static const char file[] = "Pf\n1 1\n-1.0\n\0\0\0\0";
    write_bytes(tmp_path(path, "f.pfm"), file, sizeof file - 1);
    expect_read_error(path, "float");
    unlink(path);
}

/* ---- decoding files written by the libraries themselves ------------------------------------ */

static void jpeg_grey_decodes_to_one_channel_close_to_source(void **state)
{
    char path[PATH_MAX], err[256];
    enum { W = 40, H = 24 };
    unsigned char src[W * H];
    write_jpeg(tmp_path(path, "g.jpg"), W, H, 1, src);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.width, W);
    assert_int_equal(img.height, H);
    assert_int_equal(img.channels, 1);
    assert_int_equal(img.depth, 8);
    int worst = 0;
    for (int i = 0; i < W * H; i++) {
        int d = abs((int)((unsigned char *)img.data)[i] - (int)src[i]);
        worst = d > worst ? d : worst;
    }
    assert_true(worst <= 3); /* quality 100: only rounding in the DCT */
    image_free(&img);
    unlink(path);
}

static void jpeg_colour_decodes_to_rgb(void **state)
{
    char path[PATH_MAX], err[256];
    enum { W = 16, H = 8 };
    unsigned char src[W * H * 3];
    write_jpeg(tmp_path(path, "c.jpg"), W, H, 3, src);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.channels, 3);
    assert_int_equal(img.width, W);
    int worst = 0;
    for (int i = 0; i < W * H * 3; i++) {
        int d = abs((int)((unsigned char *)img.data)[i] - (int)src[i]);
        worst = d > worst ? d : worst;
    }
    assert_true(worst <= 6); /* RGB <-> YCbCr rounding on top of the DCT */
    image_free(&img);
    unlink(path);
}

static void palette_png_with_grey_entries_reads_as_one_channel(void **state)
{
    char path[PATH_MAX], err[256];
    png_color pal[3] = {{10, 10, 10}, {200, 200, 200}, {77, 77, 77}};
    unsigned char idx[2 * 3] = {0, 1, 2, 2, 1, 0};
    write_png_direct(tmp_path(path, "pg.png"), 3, 2, 8, PNG_COLOR_TYPE_PALETTE, 0, idx, 3, pal, 3);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.channels, 1);
    static const unsigned char expect[6] = {10, 200, 77, 77, 200, 10};
    assert_memory_equal(img.data, expect, 6);
    image_free(&img);
    unlink(path);
}

static void palette_png_4bit_colour_reads_as_rgb(void **state)
{
    char path[PATH_MAX], err[256];
    png_color pal[3] = {{255, 0, 0}, {0, 255, 0}, {1, 2, 3}};
    /* 3 pixels of 4 bits in one row: indices 2, 0, 1 -> bytes 0x20, 0x10 */
    unsigned char row[2] = {0x20, 0x10};
    write_png_direct(tmp_path(path, "pc.png"), 3, 1, 4, PNG_COLOR_TYPE_PALETTE, 0, row, 2, pal, 3);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.channels, 3);
    assert_int_equal(img.depth, 8);
    static const unsigned char expect[9] = {1, 2, 3, 255, 0, 0, 0, 255, 0};
    assert_memory_equal(img.data, expect, 9);
    image_free(&img);
    unlink(path);
}

static void png_alpha_is_dropped_not_composited(void **state)
{
    char path[PATH_MAX], err[256];
    unsigned char ga[4] = {50, 0, 60, 255}; /* grey+alpha, 2 pixels */
    write_png_direct(tmp_path(path, "ga.png"), 2, 1, 8, PNG_COLOR_TYPE_GRAY_ALPHA, 0, ga, 4, NULL,
                     0);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.channels, 1);
    assert_int_equal(((unsigned char *)img.data)[0], 50);
    assert_int_equal(((unsigned char *)img.data)[1], 60);
    image_free(&img);

    /* RGBA 16-bit: big-endian in the file */
    unsigned char rgba[8] = {0x12, 0x34, 0x00, 0x01, 0xff, 0xfe, 0x00, 0x00};
    write_png_direct(path, 1, 1, 16, PNG_COLOR_TYPE_RGB_ALPHA, 0, rgba, 8, NULL, 0);
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.channels, 3);
    assert_int_equal(img.depth, 16);
    const uint16_t *s = img.data;
    assert_true(s[0] == 0x1234 && s[1] == 0x0001 && s[2] == 0xfffe);
    image_free(&img);
    unlink(path);
}

static void png_1bit_grey_expands_to_0_and_255(void **state)
{
    char path[PATH_MAX], err[256];
    unsigned char row[1] = {0xa0}; /* 1,0,1,0 */
    write_png_direct(tmp_path(path, "b.png"), 4, 1, 1, PNG_COLOR_TYPE_GRAY, 0, row, 1, NULL, 0);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    static const unsigned char expect[4] = {255, 0, 255, 0};
    assert_memory_equal(img.data, expect, 4);
    image_free(&img);
    unlink(path);
}

static void png_interlaced_16bit_reads_exactly(void **state)
{
    char path[PATH_MAX], err[256];
    enum { W = 11, H = 9 };
    unsigned char rows[W * H * 2];
    for (int i = 0; i < W * H; i++) {
        rows[2 * i] = (unsigned char)(i * 7);
        rows[2 * i + 1] = (unsigned char)(i * 13 + 1);
    }
    write_png_direct(tmp_path(path, "i.png"), W, H, 16, PNG_COLOR_TYPE_GRAY, 1, rows, W * 2,
                     NULL, 0);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    for (int i = 0; i < W * H; i++)
        assert_int_equal(((uint16_t *)img.data)[i], rows[2 * i] << 8 | rows[2 * i + 1]);
    image_free(&img);
    unlink(path);
}

static void image_read8_reduces_16bit_by_shift(void **state)
{
    char path[PATH_MAX], err[256];
    image a, b;
    assert_int_equal(image_alloc(&a, 3, 1, 1, 16), 0);
    uint16_t v[3] = {0x12ff, 0xff00, 0x00ff};
    memcpy(a.data, v, sizeof v);
    assert_int_equal(image_write(tmp_path(path, "r8.png"), &a, err, sizeof err), 0);
    assert_int_equal(image_read8(path, &b, err, sizeof err), 0);
    assert_int_equal(b.depth, 8);
    static const unsigned char expect[3] = {0x12, 0xff, 0x00};
    assert_memory_equal(b.data, expect, 3);
    image_free(&a);
    image_free(&b);
    unlink(path);
}

/* ---- disparity_read ------------------------------------------------------------------------ */

static void disparity_read_scales_and_marks_zero_invalid(void **state)
{
    char path[PATH_MAX], err[256];
    image img;
    fmap m;
    assert_int_equal(image_alloc(&img, 3, 1, 1, 16), 0);
    uint16_t v[3] = {0, 256, 640};
    memcpy(img.data, v, sizeof v);
    assert_int_equal(image_write(tmp_path(path, "d16.png"), &img, err, sizeof err), 0);
    assert_int_equal(disparity_read(path, 0, &m, err, sizeof err), 0); /* default 256 */
    assert_true(isinf(m.data[0]) && m.data[1] == 1.0f && m.data[2] == 2.5f);
    fmap_free(&m);
    assert_int_equal(disparity_read(path, 64, &m, err, sizeof err), 0);
    assert_true(m.data[1] == 4.0f && m.data[2] == 10.0f);
    fmap_free(&m);
    image_free(&img);

    assert_int_equal(image_alloc(&img, 2, 1, 1, 8), 0);
    ((unsigned char *)img.data)[1] = 30;
    assert_int_equal(image_write(tmp_path(path, "d8.pgm"), &img, err, sizeof err), 0);
    assert_int_equal(disparity_read(path, 0, &m, err, sizeof err), 0); /* default 1 */
    assert_true(isinf(m.data[0]) && m.data[1] == 30.0f);
    fmap_free(&m);
    assert_int_equal(disparity_read(path, 4, &m, err, sizeof err), 0);
    assert_true(m.data[1] == 7.5f);
    fmap_free(&m);
    image_free(&img);
    unlink(path);
}

static void disparity_read_pfm_keeps_floats_and_nan_becomes_inf(void **state)
{
    char path[PATH_MAX], err[256];
    float v[3] = {0.0f, NAN, 3.5f};
    fmap w = {3, 1, v}, m;
    assert_int_equal(pfm_write(tmp_path(path, "d.pfm"), &w, err, sizeof err), 0);
    assert_int_equal(disparity_read(path, 0, &m, err, sizeof err), 0);
    assert_true(m.data[0] == 0.0f && isinf(m.data[1]) && m.data[1] > 0 && m.data[2] == 3.5f);
    fmap_free(&m);
    unlink(path);
}

/* A negative disparity (a negative minimum, stereo.h): kept in a .pfm; a 16-bit PNG cannot
 * hold it and is refused, naming the pixel, with no file left behind. */
static void disparity_write_negative_values(void **state)
{
    char path[PATH_MAX], err[256];
    const int16_t d[4] = {32, -8, STEREO_INVALID, 0};
    fmap m;
    assert_int_equal(disparity_write(tmp_path(path, "neg.pfm"), d, 4, 1, err, sizeof err), 0);
    assert_int_equal(disparity_read(path, 0, &m, err, sizeof err), 0);
    assert_true(m.data[0] == 2.0f && m.data[1] == -0.5f && isinf(m.data[2]) && m.data[3] == 0.0f);
    fmap_free(&m);
    unlink(path);
    assert_int_equal(disparity_write(tmp_path(path, "neg.png"), d, 4, 1, err, sizeof err), -1);
    assert_error_names(err, path);
    assert_non_null(strstr(err, "pixel (1, 0)"));
    assert_int_equal(access(path, F_OK), -1);
}

static void disparity_read_refuses_rgb_and_jpeg(void **state)
{
    char path[PATH_MAX], err[256];
    fmap m;
    image img;
    assert_int_equal(image_alloc(&img, 2, 2, 3, 8), 0);
    assert_int_equal(image_write(tmp_path(path, "rgb.png"), &img, err, sizeof err), 0);
    assert_int_equal(disparity_read(path, 0, &m, err, sizeof err), -1);
    assert_error_names(err, path);
    assert_non_null(strstr(err, "1 channel"));
    image_free(&img);
    unlink(path);

    unsigned char src[8 * 8];
    write_jpeg(tmp_path(path, "d.jpg"), 8, 8, 1, src);
    assert_int_equal(disparity_read(path, 0, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "JPEG"));
    assert_null(m.data);
    unlink(path);
}

/* ---- refusals ------------------------------------------------------------------------------ */

static void missing_file_is_refused(void **state)
{
    char path[PATH_MAX];
    expect_read_error(tmp_path(path, "does-not-exist.png"), "No such file");
}

static void empty_file_is_refused(void **state)
{
    char path[PATH_MAX];
    write_bytes(tmp_path(path, "empty.png"), "", 0);
    expect_read_error(path, "empty");
    unlink(path);
}

static void directory_is_refused(void **state)
{
    expect_read_error(tmpdir, "directory");
}

static void text_file_is_refused(void **state)
{
    char path[PATH_MAX];
    static const char text[] = "hello, this is not an image\n";
    write_bytes(tmp_path(path, "text.png"), text, sizeof text - 1);
    expect_read_error(path, "not an image");
    unlink(path);
}

static void truncated_png_is_refused(void **state)
{
    char path[PATH_MAX], err[256];
    image img;
    assert_int_equal(image_alloc(&img, 64, 64, 3, 8), 0);
    fill_pattern(&img);
    assert_int_equal(image_write(tmp_path(path, "cut.png"), &img, err, sizeof err), 0);
    image_free(&img);
    truncate_to_half(path);
    expect_read_error(path, "truncated");
    unlink(path);
}

static void corrupt_png_data_is_refused(void **state)
{
    char path[PATH_MAX], err[256];
    image img;
    assert_int_equal(image_alloc(&img, 32, 32, 1, 8), 0);
    fill_pattern(&img);
    assert_int_equal(image_write(tmp_path(path, "bad.png"), &img, err, sizeof err), 0);
    image_free(&img);
    size_t n;
    unsigned char *bytes = read_bytes(path, &n);
    bytes[n / 2] ^= 0x55; /* inside IDAT: the chunk CRC no longer matches */
    write_bytes(path, bytes, n);
    free(bytes);
    expect_read_error(path, "PNG");
    unlink(path);
}

static void truncated_jpeg_is_refused(void **state)
{
    char path[PATH_MAX];
    unsigned char src[64 * 64];
    write_jpeg(tmp_path(path, "cut.jpg"), 64, 64, 1, src);
    truncate_to_half(path);
    expect_read_error(path, "JPEG");
    unlink(path);
}

static void truncated_pgm_is_refused(void **state)
{
    char path[PATH_MAX];
    static const char file[] = "P5\n4 4\n255\n0123456789";
    write_bytes(tmp_path(path, "cut.pgm"), file, sizeof file - 1);
    expect_read_error(path, "truncated");
    static const char header_only[] = "P5\n4 4";
    write_bytes(path, header_only, sizeof header_only - 1);
    expect_read_error(path, "truncated");
    unlink(path);
}

static void pnm_maxval_0_and_above_65535_are_refused(void **state)
{
    char path[PATH_MAX];
    static const char zero[] = "P5\n1 1\n0\n\0";
    write_bytes(tmp_path(path, "m0.pgm"), zero, sizeof zero - 1);
    expect_read_error(path, "maxval");
    static const char big[] = "P5\n1 1\n65536\n\0\0";
    write_bytes(path, big, sizeof big - 1);
    expect_read_error(path, "maxval");
    unlink(path);
}

static void absurd_dimensions_are_refused_before_allocating(void **state)
{
    char path[PATH_MAX], err[256];
    static const char huge[] = "P6\n100000 100000\n255\n\0\0\0";
    write_bytes(tmp_path(path, "huge.ppm"), huge, sizeof huge - 1);
    expect_read_error(path, "100000x100000 is larger than the largest image the matcher takes "
                            "(8192x8192)");
    static const char overflow[] = "P5\n99999999999 1\n255\n\0";
    write_bytes(path, overflow, sizeof overflow - 1);
    expect_read_error(path, "dimensions");
    static const char zero[] = "P5\n0 5\n255\n\0";
    write_bytes(path, zero, sizeof zero - 1);
    expect_read_error(path, "dimensions");
    /* a size the stage takes that the file does not contain: refused without a 64 MB allocation */
    static const char lying[] = "P5\n8000 8000\n255\n\0\0\0\0";
    write_bytes(path, lying, sizeof lying - 1);
    expect_read_error(path, "truncated");
    static const char pfm[] = "Pf\n100000 100000\n-1\n\0\0\0\0";
    write_bytes(path, pfm, sizeof pfm - 1);
    fmap m;
    assert_int_equal(pfm_read(path, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "100000x100000 is larger than the largest image the matcher"));
    unlink(path);
}

/* ---- bombs: small files whose header announces a huge image (issue #15) -------------------- */

#define BOMB_MSG "is larger than the largest image the matcher takes (8192x8192)"

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Appends a PNG chunk (length, type, data, CRC) at out; returns its size. */
static size_t png_chunk(unsigned char *out, const char *type, const unsigned char *data,
                        size_t n)
{
    put_be32(out, (uint32_t)n);
    memcpy(out + 4, type, 4);
    if (n)
        memcpy(out + 8, data, n);
    put_be32(out + 8 + n, (uint32_t)crc32(0L, out + 4, (uInt)(n + 4)));
    return 12 + n;
}

/* A PNG with a valid w x h 8-bit grey IHDR, a short IDAT (a few zero rows' worth) and IEND. */
static void write_png_bomb(const char *path, uint32_t w, uint32_t h)
{
    static unsigned char file[8192];
    unsigned char ihdr[13] = {0}, raw[4096] = {0}, z[1024];
    put_be32(ihdr, w);
    put_be32(ihdr + 4, h);
    ihdr[8] = 8; /* bit depth; colour type 0 (grey), no interlace */
    uLongf zn = sizeof z;
    assert_int_equal(compress(z, &zn, raw, sizeof raw), Z_OK);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    size_t n = 0;
    memcpy(file, sig, 8);
    n += 8;
    n += png_chunk(file + n, "IHDR", ihdr, sizeof ihdr);
    n += png_chunk(file + n, "IDAT", z, zn);
    n += png_chunk(file + n, "IEND", NULL, 0);
    write_bytes(path, file, n);
}

static void png_bomb_is_refused_from_ihdr(void **state)
{
    char path[PATH_MAX];
    write_png_bomb(tmp_path(path, "bomb.png"), 46000, 46000);
    expect_read_error(path, "46000x46000 " BOMB_MSG);
    write_png_bomb(path, 8193, 1);
    expect_read_error(path, "8193x1 " BOMB_MSG);
    /* a header the stage takes goes on to the data, which is short here */
    write_png_bomb(path, 8192, 8192);
    expect_read_error(path, "Not enough image data");
    unlink(path);
}

/* A real JPEG whose SOF0 frame size is rewritten to 46000x46000 (tjDecompressHeader3 reads it). */
static void jpeg_bomb_is_refused_from_sof(void **state)
{
    char path[PATH_MAX];
    unsigned char pixels[16 * 16];
    size_t n = write_jpeg(tmp_path(path, "bomb.jpg"), 16, 16, 1, pixels);
    unsigned char *b = malloc(n);
    assert_non_null(b);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(b, 1, n, f), n);
    fclose(f);
    size_t sof = 0;
    for (size_t i = 2; i + 9 < n && !sof; i++)
        if (b[i] == 0xff && b[i + 1] == 0xc0)
            sof = i;
    assert_true(sof > 0);
    /* FF C0, length (2), precision (1), height (2), width (2) */
    b[sof + 5] = 46000 >> 8;
    b[sof + 6] = 46000 & 0xff;
    b[sof + 7] = 46000 >> 8;
    b[sof + 8] = 46000 & 0xff;
    write_bytes(path, b, n);
    free(b);
    expect_read_error(path, "46000x46000 " BOMB_MSG);
    unlink(path);
}

/* The limit is the stage's, inclusive: 8192 wide is read, 8193 is refused from the header. */
static void pnm_and_pfm_sides_are_limited_to_the_stage(void **state)
{
    char path[PATH_MAX], err[256];
    static char file[32 + 4 * 8193];
    int n = snprintf(file, 32, "P5\n8192 1\n255\n");
    write_bytes(tmp_path(path, "side.pgm"), file, (size_t)n + 8192);
    image img;
    assert_int_equal(image_read(path, &img, err, sizeof err), 0);
    assert_int_equal(img.width, 8192);
    image_free(&img);
    n = snprintf(file, 32, "P5\n1 8193\n255\n");
    write_bytes(path, file, (size_t)n + 8193);
    expect_read_error(path, "1x8193 " BOMB_MSG);
    static const char pgm[] = "P5\n46000 46000\n255\n\0\0\0\0";
    write_bytes(path, pgm, sizeof pgm - 1);
    expect_read_error(path, "46000x46000 " BOMB_MSG);
    n = snprintf(file, 32, "Pf\n8193 1\n-1\n");
    write_bytes(path, file, (size_t)n + 4 * 8193);
    fmap m;
    assert_int_equal(pfm_read(path, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "8193x1 " BOMB_MSG));
    assert_null(m.data);
    static const char pfm[] = "Pf\n46000 46000\n-1\n\0\0\0\0";
    write_bytes(path, pfm, sizeof pfm - 1);
    assert_int_equal(pfm_read(path, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "46000x46000 " BOMB_MSG));
    /* stereo-eval's ground truth goes through disparity_read: the same limit */
    assert_int_equal(disparity_read(path, 0, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "46000x46000 " BOMB_MSG));
    unlink(path);
}

static void ascii_pnm_is_refused_with_reason(void **state)
{
    char path[PATH_MAX];
    static const char p2[] = "P2\n1 1\n255\n7\n";
    write_bytes(tmp_path(path, "a.pgm"), p2, sizeof p2 - 1);
    expect_read_error(path, "ASCII");
    unlink(path);
}

/* ---- writing and atomicity ----------------------------------------------------------------- */

static void write_into_missing_directory_fails_and_leaves_nothing(void **state)
{
    char path[PATH_MAX], dir[PATH_MAX], err[256];
    image img;
    assert_int_equal(image_alloc(&img, 4, 4, 1, 8), 0);
    int before = count_entries();
    tmp_path(dir, "no-such-dir");
    tmp_path(path, "no-such-dir/x.png");
    assert_int_equal(image_write(path, &img, err, sizeof err), -1);
    assert_error_names(err, path);
    struct stat st;
    assert_int_equal(stat(dir, &st), -1);
    assert_int_equal(count_entries(), before);
    image_free(&img);
}

static void failed_write_leaves_existing_file_intact(void **state)
{
    char path[PATH_MAX], err[256];
    static const char old[] = "old contents";
    image img;
    assert_int_equal(image_alloc(&img, 4, 4, 3, 8), 0);
    int before = count_entries();

    write_bytes(tmp_path(path, "keep.bmp"), old, sizeof old - 1);
    assert_int_equal(image_write(path, &img, err, sizeof err), -1); /* unsupported extension */
    assert_non_null(strstr(err, "extension"));
    size_t n;
    unsigned char *bytes = read_bytes(path, &n);
    assert_int_equal(n, sizeof old - 1);
    assert_memory_equal(bytes, old, n);
    free(bytes);
    unlink(path);

    write_bytes(tmp_path(path, "keep.pgm"), old, sizeof old - 1);
    assert_int_equal(image_write(path, &img, err, sizeof err), -1); /* 3 channels to .pgm */
    bytes = read_bytes(path, &n);
    assert_int_equal(n, sizeof old - 1);
    assert_memory_equal(bytes, old, n);
    free(bytes);
    unlink(path);

    assert_int_equal(count_entries(), before);
    image_free(&img);
}

/* A writer that produces some bytes and then fails, as an encoder error midway would. */
static int write_half_then_fail(FILE *f, const char *path, const void *ctx, char *err,
                                size_t errlen)
{
    fputs("partial", f);
    imgio_error(err, errlen, path, "simulated encoder failure");
    return -1;
}

static int write_new_contents(FILE *f, const char *path, const void *ctx, char *err,
                              size_t errlen)
{
    fputs(ctx, f);
    return 0;
}

static void atomic_write_failing_midway_keeps_old_file_and_no_temp(void **state)
{
    char path[PATH_MAX], err[256];
    static const char old[] = "old contents";
    write_bytes(tmp_path(path, "atomic.dat"), old, sizeof old - 1);
    int before = count_entries();
    assert_int_equal(atomic_write_file(path, write_half_then_fail, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "simulated"));
    size_t n;
    unsigned char *bytes = read_bytes(path, &n);
    assert_int_equal(n, sizeof old - 1);
    assert_memory_equal(bytes, old, n);
    free(bytes);
    assert_int_equal(count_entries(), before);

    assert_int_equal(atomic_write_file(path, write_new_contents, "new", err, sizeof err), 0);
    bytes = read_bytes(path, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(bytes, "new", 3);
    free(bytes);
    assert_int_equal(count_entries(), before);
    unlink(path);
}

static void write_refuses_invalid_images(void **state)
{
    char path[PATH_MAX], err[256];
    image img = {4, 4, 2, 8, NULL};
    unsigned char data[32] = {0};
    img.data = data;
    assert_int_equal(image_write(tmp_path(path, "x.png"), &img, err, sizeof err), -1); /* 2 ch */
    img.channels = 1;
    img.depth = 12;
    assert_int_equal(image_write(path, &img, err, sizeof err), -1);
    assert_error_names(err, path);
    assert_int_equal(access(path, F_OK), -1);
}

/* ---- fixture ------------------------------------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int make_tmpdir(void **state)
{
    strcpy(tmpdir, "/tmp/test_image_io.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    return nftw(tmpdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(png_grey8_round_trip_is_exact),
        cmocka_unit_test(png_grey16_round_trip_is_exact),
        cmocka_unit_test(png_rgb8_round_trip_is_exact),
        cmocka_unit_test(png_rgb16_round_trip_is_exact),
        cmocka_unit_test(pgm8_and_pgm16_round_trips_are_exact),
        cmocka_unit_test(ppm8_and_ppm16_round_trips_are_exact),
        cmocka_unit_test(pgm16_file_holds_big_endian_samples),
        cmocka_unit_test(pnm_handwritten_with_comments_keeps_values_below_maxval),
        cmocka_unit_test(pnm_maxval_above_255_reads_16bit_host_order),
        cmocka_unit_test(pfm_round_trip_keeps_values_and_inf),
        cmocka_unit_test(pfm_handwritten_little_endian_is_bottom_up),
        cmocka_unit_test(pfm_handwritten_big_endian_positive_scale),
        cmocka_unit_test(pfm_write_emits_little_endian_bottom_up_bytes),
        cmocka_unit_test(pfm_refuses_colour_pf_and_truncation),
        cmocka_unit_test(image_read_refuses_pfm_as_float),
        cmocka_unit_test(jpeg_grey_decodes_to_one_channel_close_to_source),
        cmocka_unit_test(jpeg_colour_decodes_to_rgb),
        cmocka_unit_test(palette_png_with_grey_entries_reads_as_one_channel),
        cmocka_unit_test(palette_png_4bit_colour_reads_as_rgb),
        cmocka_unit_test(png_alpha_is_dropped_not_composited),
        cmocka_unit_test(png_1bit_grey_expands_to_0_and_255),
        cmocka_unit_test(png_interlaced_16bit_reads_exactly),
        cmocka_unit_test(image_read8_reduces_16bit_by_shift),
        cmocka_unit_test(disparity_read_scales_and_marks_zero_invalid),
        cmocka_unit_test(disparity_read_pfm_keeps_floats_and_nan_becomes_inf),
        cmocka_unit_test(disparity_write_negative_values),
        cmocka_unit_test(disparity_read_refuses_rgb_and_jpeg),
        cmocka_unit_test(missing_file_is_refused),
        cmocka_unit_test(empty_file_is_refused),
        cmocka_unit_test(directory_is_refused),
        cmocka_unit_test(text_file_is_refused),
        cmocka_unit_test(truncated_png_is_refused),
        cmocka_unit_test(corrupt_png_data_is_refused),
        cmocka_unit_test(truncated_jpeg_is_refused),
        cmocka_unit_test(truncated_pgm_is_refused),
        cmocka_unit_test(pnm_maxval_0_and_above_65535_are_refused),
        cmocka_unit_test(absurd_dimensions_are_refused_before_allocating),
        cmocka_unit_test(png_bomb_is_refused_from_ihdr),
        cmocka_unit_test(jpeg_bomb_is_refused_from_sof),
        cmocka_unit_test(pnm_and_pfm_sides_are_limited_to_the_stage),
        cmocka_unit_test(ascii_pnm_is_refused_with_reason),
        cmocka_unit_test(write_into_missing_directory_fails_and_leaves_nothing),
        cmocka_unit_test(failed_write_leaves_existing_file_intact),
        cmocka_unit_test(atomic_write_failing_midway_keeps_old_file_and_no_temp),
        cmocka_unit_test(write_refuses_invalid_images),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
