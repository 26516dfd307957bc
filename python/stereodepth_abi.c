/* SPDX-License-Identifier: Apache-2.0 */
/* stereodepth_abi.c — build/libstereodepth.so's exported interface (stereodepth_abi.h): the
 * stage (gpu/stereo.h) behind opaque handles, its options through gpu/stereo_options.h (the
 * parser stereo-match uses), calibrations through hal/calib.h. */
#include "stereodepth_abi.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "mapfile.h"
#include "stereo.h"
#include "stereo_options.h"
#include "version.h"

#define SD_MAGIC 0x73646d74u /* "sdmt": a live handle */

struct sd_matcher {
    unsigned magic;
    int in_w, in_h;        /* camera images */
    stereo_stage *stage;   /* works on the rectified size (stereo_get_params) */
    int computed;          /* a pair was computed: sd_matcher_result has values to give */
};

static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

int sd_abi_version(void) { return SD_ABI_VERSION; }

const char *sd_version(void) { return version_number(); }

const char *sd_commit(void) { return version_commit(); }

static char option_names[512];

static void build_option_names(void)
{
    size_t n = 0;
    for (int i = 0; stereo_option_table[i].name && n < sizeof option_names; i++)
        n += (size_t)snprintf(option_names + n, sizeof option_names - n, "%s%s%s", i ? "," : "",
                              stereo_option_table[i].name,
                              stereo_option_table[i].metavar ? "=" : "");
}

const char *sd_option_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_option_names);
    return option_names;
}

/* each row's short flag as a string ("d"), for SD_OPT_SHORT */
static char short_flags[64][2];

static void build_short_flags(void)
{
    for (int i = 0; i < 64 && stereo_option_table[i].name; i++)
        short_flags[i][0] = stereo_option_table[i].short_flag;
}

const char *sd_option_field(int index, int field)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_short_flags);
    if (index < 0 || index >= stereo_option_count() || index >= 64)
        return NULL;
    const stereo_option_info *r = &stereo_option_table[index];
    switch (field) {
    case SD_OPT_NAME: return r->name;
    case SD_OPT_KWARG: return r->kwarg;
    case SD_OPT_METAVAR: return r->metavar;
    case SD_OPT_RANGE: return r->range;
    case SD_OPT_DEFAULT: return r->def;
    case SD_OPT_HELP: return r->help;
    case SD_OPT_MORE: return r->more;
    case SD_OPT_KEY: return r->key;
    case SD_OPT_SHORT: return r->short_flag ? short_flags[index] : NULL;
    }
    return NULL;
}

const char *sd_backends(void)
{
#ifdef STEREO_HAVE_CUDA
    return "cpu,cuda";
#else
    return "cpu";
#endif
}

static int live(const sd_matcher *m) { return m && m->magic == SD_MAGIC; }

/* The options and maps of sd_matcher_create / sd_auto_disparities, checked as stereo-match
 * checks them, and the stage's size; maps (two) loaded when maps_spec, freed by the caller
 * (mapfile_free) whatever the result. */
static int prepare(int width, int height, int n, const char *const *names,
                   const char *const *values, const char *maps_spec, int auto_ok,
                   stereo_options *o, stereo_map maps[2], char *err, size_t errlen)
{
    if (width < 1 || height < 1 || width > STEREO_MAX_SIDE || height > STEREO_MAX_SIDE)
        return fail(SD_EVALUE, err, errlen, "image size %dx%d: each side must be 1..%d", width,
                    height, STEREO_MAX_SIDE);
    if (n < 0 || (n > 0 && (!names || !values)))
        return fail(SD_EVALUE, err, errlen, "%d options without names", n);
    stereo_options_init(o);
    o->auto_ok = auto_ok;
    for (int i = 0; i < n; i++)
        if (stereo_option_set(o, names[i], values[i], err, errlen))
            return SD_EVALUE;
    if (auto_ok) /* the range is what sd_auto_disparities measures: no check against D yet */
        o->auto_disparities = 1;
    if (stereo_options_finish(o, err, errlen))
        return SD_EVALUE;
    if (maps_spec && calib_load_maps(maps_spec, width, height, maps, err, errlen))
        return SD_ERUNTIME; /* stereo-match exits 1 on an unreadable --maps */
    if (stereo_options_size(o, maps_spec ? maps[0].width : width,
                            maps_spec ? maps[0].height : height, err, errlen))
        return SD_EVALUE;
    return SD_OK;
}

int sd_matcher_create(int width, int height, int n, const char *const *names,
                      const char *const *values, const char *maps_spec, sd_matcher **out,
                      char *err, size_t errlen)
{
    if (!out)
        return fail(SD_EVALUE, err, errlen, "sd_matcher_create: no place for the handle");
    *out = NULL;
    stereo_options o;
    stereo_map maps[2] = {{0}};
    sd_matcher *m = NULL;
    int rc = prepare(width, height, n, names, values, maps_spec, 0, &o, maps, err, errlen);
    if (rc != SD_OK)
        goto done;
    o.p.confidence = 1; /* sd_matcher_result's SD_CONFIDENCE (the disparities do not change) */
    if (!(m = calloc(1, sizeof *m))) {
        rc = fail(SD_ERUNTIME, err, errlen, "out of memory");
        goto done;
    }
    char serr[512];
    stereo_status st = stereo_create(&o.p, maps_spec ? maps : NULL, &m->stage, serr, sizeof serr);
    if (st != STEREO_OK) { /* stereo-match's message and its exit status 2 / 1 */
        rc = fail(st == STEREO_ERR_PARAM ? SD_EVALUE : SD_ERUNTIME, err, errlen, "%s%s",
                  o.p.backend == STEREO_BACKEND_CUDA && st != STEREO_ERR_PARAM
                      ? "--backend cuda: " : "", serr);
        goto done;
    }
    m->magic = SD_MAGIC;
    m->in_w = width;
    m->in_h = height;
    *out = m;
    m = NULL;
done:
    free(m);
    mapfile_free(maps);
    return rc;
}

int sd_matcher_shape(const sd_matcher *m, int *in_w, int *in_h, int *out_w, int *out_h)
{
    if (!live(m))
        return SD_EVALUE;
    const stereo_params *p = stereo_get_params(m->stage);
    *in_w = m->in_w, *in_h = m->in_h, *out_w = p->width, *out_h = p->height;
    return SD_OK;
}

/* One image of a pair as the stage takes it: SD_OK, or SD_EVALUE with the message. */
static int image_arg(const char *what, const uint8_t *data, size_t pitch, int width, int height,
                     int channels, stereo_image *im, char *err, size_t errlen)
{
    if (!data)
        return fail(SD_EVALUE, err, errlen, "%s image: no data", what);
    if (channels != 1 && channels != 3)
        return fail(SD_EVALUE, err, errlen, "%s image: %d channels, grey (1) or colour (3) only",
                    what, channels);
    if (pitch < (size_t)width * channels)
        return fail(SD_EVALUE, err, errlen, "%s image: row pitch %zu is below %d bytes", what,
                    pitch, width * channels);
    *im = (stereo_image){data, width, height, pitch,
                         channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8};
    return SD_OK;
}

/* A disparity map (16ths, STEREO_INVALID = invalid) as floats in pixels, NaN where invalid: what
 * stereo-match writes to a .pfm (which has +inf there). */
static void disparity_floats(const int16_t *d, size_t count, float *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = !stereo_disparity_valid(d[i]) ? NAN : d[i] / (float)STEREO_SUBPIXEL_SCALE;
}

int sd_matcher_compute(sd_matcher *m, const uint8_t *left, size_t left_pitch,
                       int left_channels, const uint8_t *right, size_t right_pitch,
                       int right_channels, int width, int height, float *out, size_t out_count,
                       char *err, size_t errlen)
{
    if (!live(m))
        return fail(SD_EVALUE, err, errlen, "the matcher is closed");
    if (width != m->in_w || height != m->in_h)
        return fail(SD_EVALUE, err, errlen, "images of %dx%d for a matcher of %dx%d", width,
                    height, m->in_w, m->in_h);
    stereo_image l, r;
    int rc;
    if ((rc = image_arg("left", left, left_pitch, width, height, left_channels, &l, err,
                        errlen)) != SD_OK ||
        (rc = image_arg("right", right, right_pitch, width, height, right_channels, &r, err,
                        errlen)) != SD_OK)
        return rc;
    if (!out)
        return fail(SD_EVALUE, err, errlen, "no output buffer");
    const stereo_params *p = stereo_get_params(m->stage);
    size_t count = (size_t)p->width * p->height;
    if (out_count != count)
        return fail(SD_EVALUE, err, errlen, "output of %zu values for %dx%d disparities",
                    out_count, p->width, p->height);
    stereo_status st = stereo_process(m->stage, &l, &r);
    if (st != STEREO_OK)
        return fail(st == STEREO_ERR_PARAM ? SD_EVALUE : SD_ERUNTIME, err, errlen, "%s",
                    stereo_error(m->stage));
    disparity_floats(stereo_disparity(m->stage), count, out);
    m->computed = 1;
    return SD_OK;
}

int sd_auto_disparities(int width, int height, int n, const char *const *names,
                        const char *const *values, const char *maps_spec, const uint8_t *left,
                        size_t left_pitch, int left_channels, const uint8_t *right,
                        size_t right_pitch, int right_channels, int out[4], char *err,
                        size_t errlen)
{
    stereo_options o;
    stereo_map maps[2] = {{0}};
    stereo_image l, r;
    int rc = prepare(width, height, n, names, values, maps_spec, 1, &o, maps, err, errlen);
    if (rc == SD_OK)
        rc = image_arg("left", left, left_pitch, width, height, left_channels, &l, err, errlen);
    if (rc == SD_OK)
        rc = image_arg("right", right, right_pitch, width, height, right_channels, &r, err,
                       errlen);
    if (rc == SD_OK && !out)
        rc = fail(SD_EVALUE, err, errlen, "no output buffer");
    if (rc == SD_OK) {
        stereo_auto_range a;
        char serr[512];
        stereo_status st = stereo_auto_disparities(&o.p, maps_spec ? maps : NULL, &l, &r, &a,
                                                   serr, sizeof serr);
        if (st != STEREO_OK)
            rc = fail(st == STEREO_ERR_PARAM ? SD_EVALUE : SD_ERUNTIME, err, errlen,
                      "disparities auto: %s", serr);
        else
            out[0] = a.disparities, out[1] = a.top, out[2] = a.beyond, out[3] = a.clamped;
    }
    mapfile_free(maps);
    return rc;
}

int sd_matcher_result(const sd_matcher *m, int kind, void *out, size_t out_count, char *err,
                      size_t errlen)
{
    if (!live(m))
        return fail(SD_EVALUE, err, errlen, "the matcher is closed");
    if (!m->computed)
        return fail(SD_EVALUE, err, errlen, "no pair computed yet");
    const stereo_params *p = stereo_get_params(m->stage);
    size_t count = (size_t)p->width * p->height;
    if (!out || out_count != count)
        return fail(SD_EVALUE, err, errlen, "output of %zu values for %dx%d results", out_count,
                    p->width, p->height);
    switch (kind) {
    case SD_RIGHT:
        if (!p->lr_check)
            return fail(SD_EVALUE, err, errlen,
                        "no right disparity: the left-right check is off (no_lr), and it is "
                        "computed for that check");
        disparity_floats(stereo_disparity_right(m->stage), count, out);
        return SD_OK;
    case SD_CONFIDENCE:
        memcpy(out, stereo_confidence(m->stage), count);
        return SD_OK;
    case SD_RECT_LEFT:
    case SD_RECT_RIGHT:
        memcpy(out, stereo_rectified(m->stage, kind == SD_RECT_RIGHT), count);
        return SD_OK;
    }
    return fail(SD_EVALUE, err, errlen, "unknown result kind %d", kind);
}

const char *sd_matcher_backend(const sd_matcher *m)
{
    return live(m) ? stereo_backend_to_str(stereo_active_backend(m->stage)) : "";
}

const char *sd_matcher_note(const sd_matcher *m)
{
    return live(m) ? stereo_backend_note(m->stage) : "";
}

void sd_matcher_destroy(sd_matcher *m)
{
    if (!live(m))
        return;
    m->magic = 0;
    stereo_destroy(m->stage);
    free(m);
}

int sd_calibration(const char *spec, double out[5], int size[2], char *err, size_t errlen)
{
    if (!spec || !out || !size)
        return fail(SD_EVALUE, err, errlen, "sd_calibration: a NULL argument");
    stereo_map maps[2];
    depth_camera cam;
    int has_camera = 0;
    if (calib_load_maps_camera(spec, 0, 0, maps, &cam, &has_camera, err, errlen))
        return SD_ERUNTIME;
    size[0] = maps[0].width;
    size[1] = maps[0].height;
    mapfile_free(maps);
    if (!has_camera)
        return fail(SD_ERUNTIME, err, errlen,
                    "%s: a map file without the camera (version 1): give f and B instead", spec);
    out[0] = cam.focal_px;
    out[1] = cam.baseline;
    out[2] = cam.cx;
    out[3] = cam.cy;
    out[4] = cam.doffs_px;
    return SD_OK;
}
