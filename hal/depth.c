/* SPDX-License-Identifier: Apache-2.0 */
/* depth.c — see depth.h. */
#include "depth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image_io.h"
#include "pnm.h"

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) ? dot : "";
}

int depth_write_image(const char *path, const int16_t *d16, int width, int height,
                      const depth_camera *cam, char *err, size_t errlen)
{
    size_t n = (size_t)width * height;
    if (!strcasecmp(extension(path), ".pfm")) {
        fmap m = {width, height, malloc(n * sizeof(float))};
        if (!m.data) {
            imgio_error(err, errlen, path, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            m.data[i] = (float)depth_m(cam, d16[i]);
        int rc = pfm_write(path, &m, err, errlen);
        free(m.data);
        return rc;
    }
    if (strcasecmp(extension(path), ".png") != 0) {
        imgio_error(err, errlen, path, "a depth image is .png (16-bit mm) or .pfm (float m)");
        return -1;
    }
    image im;
    if (image_alloc(&im, width, height, 1, 16) != 0) {
        imgio_error(err, errlen, path, "out of memory");
        return -1;
    }
    uint16_t *mm = im.data;
    for (size_t i = 0; i < n; i++)
        mm[i] = depth_mm(cam, d16[i]);
    int rc = image_write(path, &im, err, errlen);
    image_free(&im);
    return rc;
}

/* ---- PLY ------------------------------------------------------------------------------------- */

typedef struct {
    const int16_t *d16;
    int width, height, channels;
    const depth_camera *cam;
    const uint8_t *image;
    size_t n;
} ply_job;

static void put_f32le(uint8_t *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    p[0] = (uint8_t)u, p[1] = (uint8_t)(u >> 8), p[2] = (uint8_t)(u >> 16), p[3] = (uint8_t)(u >> 24);
}

enum { PLY_RECORD = 15, PLY_CHUNK = 4096 };

static int write_ply(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const ply_job *j = ctx;
    const depth_camera *c = j->cam;
    fprintf(f, "ply\nformat binary_little_endian 1.0\n"
               "comment stereo-depth: X Y Z of the rectified left camera (x right, y down, z "
               "forward), baseline unit\n"
               "comment f %.17g cx %.17g cy %.17g baseline %.17g doffs %.17g\n"
               "element vertex %zu\n"
               "property float x\nproperty float y\nproperty float z\n"
               "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n",
            c->focal_px, c->cx, c->cy, c->baseline, c->doffs_px, j->n);
    uint8_t *buf = malloc((size_t)PLY_RECORD * PLY_CHUNK);
    if (!buf) {
        imgio_error(err, errlen, path, "out of memory");
        return -1;
    }
    size_t used = 0;
    for (int y = 0; y < j->height; y++)
        for (int x = 0; x < j->width; x++) {
            size_t i = (size_t)y * j->width + x;
            float p[3];
            if (!depth_point(c, x, y, j->d16[i], p))
                continue;
            uint8_t *r = buf + (size_t)PLY_RECORD * used;
            put_f32le(r, p[0]);
            put_f32le(r + 4, p[1]);
            put_f32le(r + 8, p[2]);
            const uint8_t *px = j->image + i * j->channels;
            r[12] = px[0];
            r[13] = px[j->channels == 3 ? 1 : 0];
            r[14] = px[j->channels == 3 ? 2 : 0];
            if (++used == PLY_CHUNK) {
                fwrite(buf, PLY_RECORD, used, f);
                used = 0;
            }
        }
    fwrite(buf, PLY_RECORD, used, f);
    free(buf);
    return 0;
}

int depth_write_ply(const char *path, const int16_t *d16, int width, int height,
                    const depth_camera *cam, const uint8_t *color, int channels,
                    size_t *n_points, char *err, size_t errlen)
{
    if (channels != 1 && channels != 3) {
        imgio_error(err, errlen, path, "the colour image has %d channels (1 or 3)", channels);
        return -1;
    }
    ply_job j = {d16, width, height, channels, cam, color, 0};
    for (size_t i = 0; i < (size_t)width * height; i++)
        j.n += isfinite(depth_m(cam, d16[i]));
    if (n_points)
        *n_points = j.n;
    return atomic_write_file(path, write_ply, &j, err, errlen);
}
