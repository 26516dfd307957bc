/* SPDX-License-Identifier: Apache-2.0 */
/* mapfile.c — see mapfile.h. */
#include "mapfile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "pnm.h"

static const char magic[8] = {'S', 'T', 'M', 'A', 'P', 'S', '\r', '\n'};

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* payload bytes of one map: xy then frac, little-endian 16-bit */
static void encode_map(const stereo_map *m, uint8_t *out)
{
    size_t n = (size_t)m->width * m->height;
    for (size_t i = 0; i < 2 * n; i++) {
        out[2 * i] = (uint8_t)m->xy[i];
        out[2 * i + 1] = (uint8_t)((uint16_t)m->xy[i] >> 8);
    }
    out += 4 * n;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = (uint8_t)m->frac[i];
        out[2 * i + 1] = (uint8_t)(m->frac[i] >> 8);
    }
}

static void decode_map(const uint8_t *in, stereo_map *m)
{
    size_t n = (size_t)m->width * m->height;
    int16_t *xy = (int16_t *)m->xy;
    uint16_t *frac = (uint16_t *)m->frac;
    for (size_t i = 0; i < 2 * n; i++)
        xy[i] = (int16_t)(uint16_t)(in[2 * i] | in[2 * i + 1] << 8);
    in += 4 * n;
    for (size_t i = 0; i < n; i++)
        frac[i] = (uint16_t)(in[2 * i] | in[2 * i + 1] << 8);
}

static uint32_t crc(const uint8_t *p, size_t n)
{
    uLong c = crc32(0L, Z_NULL, 0);
    while (n > 0) { /* zlib takes uInt lengths */
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
}

static void put64f(uint8_t *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    put32(p, (uint32_t)u);
    put32(p + 4, (uint32_t)(u >> 32));
}

static double get64f(const uint8_t *p)
{
    uint64_t u = get32(p) | (uint64_t)get32(p + 4) << 32;
    double v;
    memcpy(&v, &u, 8);
    return v;
}

int mapfile_write_camera(const char *path, const stereo_map maps[2], const depth_camera *cam,
                         char *err, size_t errlen)
{
    const stereo_map *l = &maps[0], *r = &maps[1];
    if (l->width != r->width || l->height != r->height || l->src_width != r->src_width ||
        l->src_height != r->src_height || l->width < 1 || l->height < 1) {
        imgio_error(err, errlen, path, "left and right maps differ in size or are empty");
        return -1;
    }
    char why[128];
    if (cam && depth_camera_check(cam, "camera", why, sizeof why) != 0) {
        imgio_error(err, errlen, path, "%s", why);
        return -1;
    }
    const size_t head = MAPFILE_HEADER_SIZE_V2;
    size_t n = (size_t)l->width * l->height, one = 6 * n, size = head + 2 * one;
    uint8_t *buf = calloc(size, 1);
    if (!buf) {
        imgio_error(err, errlen, path, "out of memory for %zu bytes", size);
        return -1;
    }
    encode_map(l, buf + head);
    encode_map(r, buf + head + one);
    memcpy(buf, magic, 8);
    put32(buf + 8, MAPFILE_VERSION);
    put32(buf + 12, MAPFILE_TYPE_FIXED16);
    put32(buf + 16, (uint32_t)l->width);
    put32(buf + 20, (uint32_t)l->height);
    put32(buf + 24, (uint32_t)l->src_width);
    put32(buf + 28, (uint32_t)l->src_height);
    if (cam) { /* else camera 0 and five zeros (calloc) */
        put32(buf + 32, 1);
        put64f(buf + 36, cam->focal_px);
        put64f(buf + 44, cam->cx);
        put64f(buf + 52, cam->cy);
        put64f(buf + 60, cam->baseline);
        put64f(buf + 68, cam->doffs_px);
    }
    put32(buf + head - 8, crc(buf + head, 2 * one));
    put32(buf + head - 4, crc(buf, head - 4));
    int rc = atomic_write_bytes(path, buf, size, err, errlen);
    free(buf);
    return rc;
}

int mapfile_write(const char *path, const stereo_map maps[2], char *err, size_t errlen)
{
    return mapfile_write_camera(path, maps, NULL, err, errlen);
}

int mapfile_read(const char *path, stereo_map maps[2], char *err, size_t errlen)
{
    return mapfile_read_camera(path, maps, NULL, NULL, err, errlen);
}

int mapfile_read_camera(const char *path, stereo_map maps[2], depth_camera *cam,
                        int *has_camera, char *err, size_t errlen)
{
    memset(maps, 0, 2 * sizeof *maps);
    if (has_camera)
        *has_camera = 0;
    FILE *f = imgio_open(path, err, errlen);
    if (!f)
        return -1;
    uint8_t h[MAPFILE_HEADER_SIZE_V2];
    uint8_t *payload = NULL;
    /* the first 12 bytes say which version, hence how long the header is */
    if (fread(h, 1, 12, f) != 12) {
        imgio_error(err, errlen, path, "too short for a map file header (%d bytes)",
                    MAPFILE_HEADER_SIZE);
        goto fail;
    }
    if (memcmp(h, magic, 8) != 0) {
        imgio_error(err, errlen, path, "not a stereo map file (bad magic)");
        goto fail;
    }
    uint32_t version = get32(h + 8);
    if (version != 1 && version != 2) {
        imgio_error(err, errlen, path, "map file version %u, this program reads versions 1 "
                    "and 2", version);
        goto fail;
    }
    const size_t head = version == 1 ? MAPFILE_HEADER_SIZE : MAPFILE_HEADER_SIZE_V2;
    if (fread(h + 12, 1, head - 12, f) != head - 12) {
        imgio_error(err, errlen, path, "too short for a version %u map file header (%zu bytes)",
                    version, head);
        goto fail;
    }
    if (crc(h, head - 4) != get32(h + head - 4)) {
        imgio_error(err, errlen, path, "header checksum mismatch (corrupt file)");
        goto fail;
    }
    if (version == 2) {
        uint32_t has = get32(h + 32);
        depth_camera c = {get64f(h + 36), get64f(h + 44), get64f(h + 52), get64f(h + 60),
                          get64f(h + 68)};
        char why[128];
        if (has > 1) {
            imgio_error(err, errlen, path, "camera field %u is neither 0 (none) nor 1", has);
            goto fail;
        }
        if (has == 0 && (c.focal_px != 0 || c.cx != 0 || c.cy != 0 || c.baseline != 0 ||
                         c.doffs_px != 0)) {
            imgio_error(err, errlen, path, "no camera, but camera values that are not 0");
            goto fail;
        }
        if (has == 1 && depth_camera_check(&c, "camera", why, sizeof why) != 0) {
            imgio_error(err, errlen, path, "%s", why);
            goto fail;
        }
        if (has && cam)
            *cam = c;
        if (has && has_camera)
            *has_camera = 1;
    }
    if (get32(h + 12) != MAPFILE_TYPE_FIXED16) {
        imgio_error(err, errlen, path, "map type %u is not supported (expected %d)",
                    get32(h + 12), MAPFILE_TYPE_FIXED16);
        goto fail;
    }
    uint32_t w = get32(h + 16), hh = get32(h + 20), sw = get32(h + 24), sh = get32(h + 28);
    if (w < 1 || hh < 1 || sw < 1 || sh < 1) {
        imgio_error(err, errlen, path, "map sizes %ux%u from %ux%u are out of range", w, hh, sw,
                    sh);
        goto fail;
    }
    if (image_check_side(path, w, hh, err, errlen) != 0 ||
        image_check_side(path, sw, sh, err, errlen) != 0)
        goto fail;
    size_t n = (size_t)w * hh, one = 6 * n;
    /* The payload the header announces must be in the file before it is allocated: a 40-byte
     * file with valid checksums must not cost 12 * w * h bytes of memory. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        (unsigned long long)st.st_size != head + 2ULL * one) {
        imgio_error(err, errlen, path, "%s: the header announces %ux%u maps (%llu bytes), "
                    "the file has %llu", (unsigned long long)st.st_size < head + 2ULL * one
                    ? "truncated" : "trailing bytes", w, hh, head + 2ULL * one,
                    (unsigned long long)st.st_size);
        goto fail;
    }
    payload = malloc(2 * one);
    if (!payload) {
        imgio_error(err, errlen, path, "out of memory for %zu bytes", 2 * one);
        goto fail;
    }
    size_t got = fread(payload, 1, 2 * one, f);
    if (got != 2 * one) {
        imgio_error(err, errlen, path, "truncated: %zu of %zu payload bytes", got, 2 * one);
        goto fail;
    }
    if (fgetc(f) != EOF) {
        imgio_error(err, errlen, path, "trailing bytes after the %zu-byte payload", 2 * one);
        goto fail;
    }
    if (crc(payload, 2 * one) != get32(h + head - 8)) {
        imgio_error(err, errlen, path, "payload checksum mismatch (corrupt file)");
        goto fail;
    }
    for (int i = 0; i < 2; i++) {
        maps[i] = (stereo_map){(int)w, (int)hh, (int)sw, (int)sh, malloc(4 * n), malloc(2 * n)};
        if (!maps[i].xy || !maps[i].frac) {
            imgio_error(err, errlen, path, "out of memory");
            goto fail;
        }
        decode_map(payload + i * one, &maps[i]);
    }
    free(payload);
    fclose(f);
    return 0;
fail:
    if (has_camera)
        *has_camera = 0;
    free(payload);
    mapfile_free(maps);
    fclose(f);
    return -1;
}

void mapfile_free(stereo_map maps[2])
{
    for (int i = 0; i < 2; i++) {
        free((void *)maps[i].xy);
        free((void *)maps[i].frac);
        maps[i].xy = NULL;
        maps[i].frac = NULL;
    }
}

int mapfile_identity(stereo_map *m, int width, int height)
{
    size_t n = (size_t)width * height;
    int16_t *xy = malloc(4 * n);
    uint16_t *frac = calloc(n, 2);
    if (!xy || !frac) {
        free(xy);
        free(frac);
        return -1;
    }
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            xy[2 * ((size_t)y * width + x)] = (int16_t)x;
            xy[2 * ((size_t)y * width + x) + 1] = (int16_t)y;
        }
    *m = (stereo_map){width, height, width, height, xy, frac};
    return 0;
}
