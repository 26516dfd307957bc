/* SPDX-License-Identifier: Apache-2.0 */
/* auto_range.c — the number of disparities a pair needs (stereo_auto_disparities, stereo.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mi.h"
#include "stereo.h"

static stereo_status fail(char *err, size_t errlen, stereo_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static stereo_status fail(char *err, size_t errlen, stereo_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

static int cmp_i16(const void *a, const void *b)
{
    return *(const int16_t *)a - *(const int16_t *)b;
}

/* A stage of q's parameters run once on the pair; the caller destroys *out. */
static stereo_status run_once(const stereo_params *q, const stereo_map *maps,
                              const stereo_image *left, const stereo_image *right,
                              stereo_stage **out, char *err, size_t errlen)
{
    stereo_status st = stereo_create(q, maps, out, err, errlen);
    if (st == STEREO_OK && (st = stereo_process(*out, left, right)) != STEREO_OK)
        snprintf(err, errlen, "%s", stereo_error(*out));
    return st;
}

/* x / d rounded up, d > 0, x of either sign */
static int ceil_div(int x, int d) { return x >= 0 ? (x + d - 1) / d : -(-x / d); }

stereo_status stereo_auto_disparities(const stereo_params *p, const stereo_map *maps,
                                      const stereo_image *left, const stereo_image *right,
                                      stereo_auto_range *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const int w = p->width, h = p->height, dmin = p->min_disparity;
    mi_level q4;
    mi_level_geometry(w, h, dmin, 16, STEREO_AUTO_LEVEL, &q4);
    /* disparities below the quarter width (a negative minimum takes its own width too) */
    const int room = q4.w - 1 - (q4.dmin < 0 ? -q4.dmin : q4.dmin);
    const int Dq = room >= 128 ? 128 : room / 16 * 16;
    if (w < 17 || Dq < 16)
        return fail(err, errlen, STEREO_ERR_PARAM,
                    "the image (%d px wide) is too narrow to measure its range at a quarter "
                    "of its size: give the number of disparities", w);
    /* 1. the rectified grey pair, from a stage of the smallest range */
    stereo_params r;
    stereo_params_default(&r, w, h);
    r.num_disparities = 16, r.paths = 4;
    r.backend = p->backend, r.threads = p->threads, r.sms = p->sms;
    stereo_stage *s = NULL, *sq = NULL;
    uint8_t *small[2] = {NULL, NULL};
    int16_t *vals = NULL;
    stereo_status st = run_once(&r, maps, left, right, &s, err, errlen);
    if (st != STEREO_OK)
        goto done;
    /* 2. both at a quarter of the size, matched over the widest range that fits */
    for (int i = 0; i < 2; i++) {
        if (!(small[i] = malloc((size_t)q4.w * q4.h))) {
            st = fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate the quarter-size pair");
            goto done;
        }
        mi_downscale_rows(stereo_rectified(s, i), w, h, STEREO_AUTO_LEVEL, small[i], 0, q4.h);
    }
    stereo_params q;
    stereo_params_default(&q, q4.w, q4.h);
    q.min_disparity = q4.dmin, q.num_disparities = Dq;
    q.backend = p->backend, q.threads = p->threads, q.sms = p->sms;
    const stereo_image im[2] = {{small[0], q4.w, q4.h, (size_t)q4.w, STEREO_PIX_GREY8},
                                {small[1], q4.w, q4.h, (size_t)q4.w, STEREO_PIX_GREY8}};
    if ((st = run_once(&q, NULL, &im[0], &im[1], &sq, err, errlen)) != STEREO_OK)
        goto done;
    /* 3. the top of the valid disparities: their 99th percentile */
    const size_t n = (size_t)q4.w * q4.h;
    const int16_t *d = stereo_disparity(sq);
    if (!(vals = malloc(n * sizeof *vals))) {
        st = fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate the disparity list");
        goto done;
    }
    size_t nv = 0;
    for (size_t i = 0; i < n; i++)
        if (stereo_disparity_valid(d[i]))
            vals[nv++] = d[i];
    if (nv * 100 < n) {
        st = fail(err, errlen, STEREO_ERR_PARAM,
                  "fewer than 1 %% of the pixels matched at a quarter of the size (%zu of %zu): "
                  "the pair gives no range; give the number of disparities", nv, n);
        goto done;
    }
    qsort(vals, nv, sizeof *vals, cmp_i16);
    const int v = vals[(nv - 1) * STEREO_AUTO_PERCENTILE / 100]; /* 16ths at a quarter */
    const int scale = 1 << STEREO_AUTO_LEVEL;
    const int top = ceil_div(v * scale, STEREO_SUBPIXEL_SCALE); /* px, rounded up */
    out->top = top;
    out->beyond = v >= STEREO_SUBPIXEL_SCALE * (q4.dmin + Dq - 2);
    /* 4. the range: up to the top and a margin of an eighth (at least 8 px), in 16s, within
     * what the stage takes */
    int margin = top / 8 > 8 ? top / 8 : 8; /* (top may be negative: then 8) */
    int D = (top - dmin + margin + 15) / 16 * 16;
    int most = 512;
    while (most >= w || dmin + most > 2047 || (dmin < 0 && most - dmin >= w))
        most -= 16;
    D = D < 16 ? 16 : D;
    /* the coarse-to-fine band must be narrower than the range (band_check): the next multiple
     * of 16 above it at least, though the scene needs less */
    const int least = p->band > 0 ? (p->band / 16 + 1) * 16 : 16;
    if (least > most) {
        st = fail(err, errlen, STEREO_ERR_PARAM,
                  "a band of %d needs more than %d disparities; at %d px wide and minimum "
                  "disparity %d the stage takes at most %d: use a smaller band or none", p->band,
                  p->band, w, dmin, most);
        goto done;
    }
    out->for_band = D < least;
    D = D < least ? least : D;
    out->clamped = D > most;
    out->disparities = D > most ? most : D;
done:
    free(vals);
    free(small[0]);
    free(small[1]);
    stereo_destroy(sq);
    stereo_destroy(s);
    return st;
}
