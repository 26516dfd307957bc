/* SPDX-License-Identifier: Apache-2.0 */
/* live_sources.c — the live app's frame source interface (live_sources.h): the plan of which
 * backend reads the configured source (live_config_plan), the dispatch through the backend's
 * table (source_backend.h; one file per backend, source_*.c), the helpers the backends
 * share, and the pair recorder.
 *
 * Built with LIVE_LIBC_ONLY=1 (build/gpu/stereo-live-headless: CUDA and libc only) only the
 * generated scene is linked: the files source and the recorder (libpng, libturbojpeg), the
 * cameras (libv4l2) and GStreamer are left out and refused with "not built in this binary".
 * Without STEREO_HAVE_GST (./configure found no GStreamer development files, or --no-gst) the
 * GStreamer backend is refused the same way.
 */
#include "live_sources.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image_io.h"
#include "outpath.h"
#include "source_backend.h"

int64_t source_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

void source_log(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "stereo-live: %s\n", line);
}

stereo_image source_pack_rows(const uint8_t *src, size_t src_pitch, int width, int height,
                              stereo_pixfmt f, uint8_t *dst)
{
    size_t row = (size_t)width * stereo_pixfmt_bytes(f);
    for (int y = 0; y < height; y++)
        memcpy(dst + y * row, src + y * src_pitch, row);
    return (stereo_image){dst, width, height, row, f};
}

/* ---- the interface -------------------------------------------------------------------------- */

/* The backend of each plan kind; NULL where this binary has none, with why. */
static const source_ops *backend_of(source_plan_kind kind, const char **why)
{
    *why = NULL;
    switch (kind) {
    case PLAN_SYNTH:
        return &source_synth_ops;
#if LIVE_LIBC_ONLY
    case PLAN_FILES:
        *why = "image files need libpng and libturbojpeg";
        return NULL;
    case PLAN_V4L2_PAIR:
    case PLAN_SBS:
        *why = "cameras need libv4l2";
        return NULL;
    case PLAN_GST_ONE:
    case PLAN_GST_PAIR:
        *why = "GStreamer sources need libgstreamer1.0";
        return NULL;
#else
    case PLAN_FILES:
        return &source_files_ops;
    case PLAN_V4L2_PAIR:
        return &source_v4l2_ops;
    case PLAN_SBS:
        return &source_sbs_ops;
    case PLAN_GST_ONE:
    case PLAN_GST_PAIR:
#if STEREO_HAVE_GST
        return &source_gst_ops;
#else
        *why = "GStreamer sources need libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev "
               "when ./configure runs (setup.sh installs them)";
        return NULL;
#endif
#endif
    }
    *why = "unknown source";
    return NULL;
}

frame_status frame_source_open(const live_config *cfg, frame_source **out, char *err,
                               size_t errlen)
{
    *out = NULL;
    source_plan plan;
    if (live_config_plan(cfg, &plan, err, errlen) != 0)
        return FRAME_ERROR;
    const char *why;
    const source_ops *ops = backend_of(plan.kind, &why);
    if (!ops) {
        say(err, errlen, "not built in this binary: source %s (%s; build/stereo-live has it)",
            plan.uri[0].text, why);
        return FRAME_ERROR;
    }
    frame_source *s = calloc(1, sizeof *s);
    if (!s) {
        say(err, errlen, "source: out of memory");
        return FRAME_ERROR;
    }
    s->ops = ops;
    frame_status st = ops->open(s, cfg, &plan, err, errlen);
    if (st != FRAME_OK) {
        free(s);
        return st;
    }
    if (s->info.views == 0) /* the pair backends */
        s->info.views = 2;
    int want = cfg->stereo.views > 2 ? cfg->stereo.views : 2;
    if (s->info.views != want) {
        say(err, errlen, "baselines: %d views, but the %s source (%s) delivers %d in this build",
            want, ops->name, plan.uri[0].text, s->info.views);
        ops->close(s);
        free(s);
        return FRAME_ERROR;
    }
    *out = s;
    return FRAME_OK;
}

void frame_source_info_get(const frame_source *s, frame_source_info *out) { *out = s->info; }

const char *frame_source_kind(const frame_source *s) { return s->ops->name; }

frame_status frame_source_read(frame_source *s, uint8_t *const buf[], frame_pair *out,
                               int timeout_ms)
{
    memset(out, 0, sizeof *out);
    frame_status st = s->ops->read(s, buf, out, timeout_ms);
    if (st == FRAME_OK) {
        out->views = s->info.views;
        out->lost &= ~1u; /* the reference is never lost in a delivery */
        for (int i = 0; i < out->views; i++) /* a pair backend: one time for both */
            if (!out->view_timestamp_ns[i])
                out->view_timestamp_ns[i] = out->timestamp_ns;
    }
    return st;
}

const char *frame_source_message(const frame_source *s) { return s->message; }

void frame_source_stats_line(const frame_source *s, char *buf, size_t len)
{
    if (s->ops->stats_line)
        s->ops->stats_line(s, buf, len);
    else if (len)
        buf[0] = 0;
}

void frame_source_lend(frame_source *s, uint8_t *const frame[], size_t bytes)
{
    if (s && s->ops->lend)
        s->ops->lend(s, frame, bytes);
}

void frame_source_release(frame_source *s, const frame_pair *p)
{
    if (s && p && s->ops->release)
        s->ops->release(s, p);
}

void frame_source_reclaim(frame_source *s)
{
    if (s && s->ops->reclaim)
        s->ops->reclaim(s);
}

void frame_source_close(frame_source *s)
{
    if (!s)
        return;
    s->ops->close(s);
    free(s);
}

/* ---- recording ------------------------------------------------------------------------------ */
#if !LIVE_LIBC_ONLY

struct pair_recorder {
    char dir[PATH_MAX];
    FILE *stamps;
    long count;
    int64_t first_ns, last_ns;
    int width, height, channels; /* of the first pair's images */
    int views;             /* images per delivery (2: the pair) */
    uint64_t lost[FRAME_MAX_VIEWS]; /* deliveries with view i lost (not written) */
    uint8_t *row;          /* YUYV -> Y conversion, one image */
    size_t row_bytes;
    live_config settings;  /* of the recording, for replay.ini ([calibration] maps absolute) */
};

/* [calibration] maps made absolute, one file or LEFT,RIGHT, so that replay.ini works from any
 * directory; a part that cannot be resolved stays as given (the app loaded it already). */
static void absolute_maps(const char *maps, char *out, size_t len)
{
    char part[2][CONFIG_PATH_MAX], abs[2][PATH_MAX];
    const char *comma = strchr(maps, ',');
    snprintf(part[0], sizeof part[0], "%.*s", comma ? (int)(comma - maps) : (int)strlen(maps),
             maps);
    snprintf(part[1], sizeof part[1], "%s", comma ? comma + 1 : "");
    for (int k = 0; k < 2; k++) { /* blanks around the comma are ignored by the config */
        char *s = part[k], *e = s + strlen(s);
        while (*s == ' ' || *s == '\t')
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        if (!*s || !realpath(s, abs[k]))
            snprintf(abs[k], sizeof abs[k], "%s", s);
    }
    if (comma)
        say(out, len, "%s,%s", abs[0], abs[1]);
    else
        say(out, len, "%s", abs[0]);
}

/* What the recorder keeps of cfg: the settings for replay.ini, with [calibration] maps made
 * absolute, and the views per delivery. run (NULL before the session): the stage's parameters,
 * whose D replaces disparities = auto: the replay must search the range the recording measured
 * on a pair it did not record, not measure its own first pair again. 0, or -1 with err. */
static int recorder_settings(pair_recorder *r, const live_config *cfg, const stereo_params *run,
                             char *err, size_t errlen)
{
    r->settings = *cfg;
    r->views = cfg->stereo.views > 2 ? cfg->stereo.views : 2;
    if (cfg->maps[0]) {
        char maps[CONFIG_PATH_MAX];
        absolute_maps(cfg->maps, maps, sizeof maps);
        snprintf(r->settings.maps, sizeof r->settings.maps, "%s", maps);
    }
    if (run && cfg->stage.auto_disparities) {
        char d[16], why[256];
        snprintf(d, sizeof d, "%d", run->num_disparities);
        if (live_config_set(&r->settings, "stereo", "disparities", d, why, sizeof why) != 0) {
            say(err, errlen, "%s: replay.ini cannot hold the measured disparities: %s", r->dir,
                why);
            return -1;
        }
    }
    return 0;
}

int pair_recorder_open(const live_config *cfg, const stereo_params *run, pair_recorder **out,
                       char *err, size_t errlen)
{
    const char *dir = cfg->record_dir;
    *out = NULL;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        say(err, errlen, "%s: cannot create the recording folder: %s", dir, strerror(errno));
        return -1;
    }
    pair_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        say(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    /* absolute, so replay.ini works from any directory */
    if (!realpath(dir, r->dir)) {
        say(err, errlen, "%s: %s", dir, strerror(errno));
        free(r);
        return -1;
    }
    if (recorder_settings(r, cfg, run, err, errlen) != 0) {
        free(r);
        return -1;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/timestamps.txt", r->dir);
    if (!(r->stamps = fopen(path, "w"))) {
        say(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        free(r);
        return -1;
    }
    fprintf(r->stamps, "# index t_ns (CLOCK_MONOTONIC, relative to the first pair)\n");
    *out = r;
    return 0;
}

/* One side as an image_io image: GREY8 / RGB24 rows as they are, YUYV's Y plane. */
static int write_side(pair_recorder *r, const stereo_image *im, const char *path, char *err,
                      size_t errlen)
{
    int channels = im->format == STEREO_PIX_RGB24 ? 3 : 1;
    size_t need = (size_t)im->width * im->height * channels;
    if (need > r->row_bytes) {
        uint8_t *p = realloc(r->row, need);
        if (!p) {
            say(err, errlen, "%s: out of memory", path);
            return -1;
        }
        r->row = p;
        r->row_bytes = need;
    }
    for (int y = 0; y < im->height; y++) {
        const uint8_t *src = im->data + y * im->pitch;
        uint8_t *dst = r->row + (size_t)y * im->width * channels;
        if (im->format == STEREO_PIX_YUYV)
            for (int x = 0; x < im->width; x++)
                dst[x] = src[2 * x];
        else
            memcpy(dst, src, (size_t)im->width * channels);
    }
    image img = {im->width, im->height, channels, 8, r->row};
    return image_write(path, &img, err, errlen);
}

/* The file name pattern of view v's images: left, right, view2, view3, ... */
static const char *view_name(int v, char *buf, size_t len)
{
    say(buf, len, v == 0 ? "left" : v == 1 ? "right" : "view%d", v);
    return buf;
}

int pair_recorder_write(pair_recorder *r, const frame_pair *p, char *err, size_t errlen)
{
    char path[PATH_MAX + 32], name[16];
    for (int v = 0; v < r->views; v++) {
        if (p->lost & 1u << v) { /* no file: the replay loses the view on the same frame */
            r->lost[v]++;
            continue;
        }
        snprintf(path, sizeof path, "%s/%s_%06ld.png", r->dir, view_name(v, name, sizeof name),
                 r->count);
        if (write_side(r, &p->view[v], path, err, errlen) != 0)
            return -1;
    }
    if (r->count == 0) {
        r->first_ns = p->timestamp_ns;
        r->width = p->left.width;
        r->height = p->left.height;
        r->channels = p->left.format == STEREO_PIX_RGB24 ? 3 : 1;
    }
    r->last_ns = p->timestamp_ns;
    fprintf(r->stamps, "%ld %lld\n", r->count, (long long)(p->timestamp_ns - r->first_ns));
    if (fflush(r->stamps) != 0) {
        say(err, errlen, "%s/timestamps.txt: %s", r->dir, strerror(errno));
        return -1;
    }
    r->count++;
    return 0;
}

long pair_recorder_count(const pair_recorder *r) { return r->count; }

/* A path for a printf pattern: '%' doubled. */
static void escape_percent(const char *in, char *out, size_t len)
{
    size_t k = 0;
    for (; *in && k + 2 < len; in++) {
        if (*in == '%')
            out[k++] = '%';
        out[k++] = *in;
    }
    out[k] = 0;
}

typedef struct {
    const pair_recorder *r;
    const char *path, *dir; /* dir with '%' doubled */
    int fps;
} replay_ini;

/* replay.ini (a file_writer for atomic_write_file): the files source over the recording, and
 * every setting that shaped its disparities, so that the replay computes the same ones: the
 * whole [stereo] section as used and [calibration] (the pairs are recorded as the source gave
 * them, before rectification: the stage rectifies them with the same maps again). */
static int write_replay_ini(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const replay_ini *ini = ctx;
    const pair_recorder *r = ini->r;
    if (r->views == 2) /* the pair: the older form, which every version reads */
        fprintf(f, "# written by stereo-live --record: %ld pairs of %dx%d %s images (as the "
                   "source gave them,\n# before rectification) at %d pairs/s, with the settings "
                   "below; replay with\n#   stereo-live --config %s\n"
                   "[source]\ntype = files\n\n[files]\nleft = %s/left_%%06d.png\n"
                   "right = %s/right_%%06d.png\nfps = %d\nloop = false\n\n",
                r->count, r->width, r->height, r->channels == 3 ? "RGB" : "grey", ini->fps,
                ini->path, ini->dir, ini->dir, ini->fps);
    else { /* one file:// sequence per view; a view lost while recording has no file there */
        fprintf(f, "# written by stereo-live --record: %ld deliveries of %d views of %dx%d %s "
                   "images (as the\n# source gave them, before rectification) at %d per second, "
                   "with the settings below;\n# replay with\n#   stereo-live --config %s\n",
                r->count, r->views, r->width, r->height, r->channels == 3 ? "RGB" : "grey",
                ini->fps, ini->path);
        for (int v = 1; v < r->views; v++)
            if (r->lost[v])
                fprintf(f, "# view %d was lost in %llu of them (no file: lost again on replay)\n",
                        v, (unsigned long long)r->lost[v]);
        fprintf(f, "[source]\n");
        for (int v = 0; v < r->views; v++) {
            char name[16];
            view_name(v, name, sizeof name);
            fprintf(f, "%s = file://%s/%s_%%06d.png\n", name, ini->dir, name);
        }
        fprintf(f, "\n[files]\nfps = %d\nloop = false\n\n", ini->fps);
    }
    if (live_config_write_section(f, &r->settings, "stereo") != 0) {
        say(err, errlen, "%s: cannot write the [stereo] settings", path);
        return -1;
    }
    fputc('\n', f);
    if (live_config_write_section(f, &r->settings, "calibration") != 0) {
        say(err, errlen, "%s: [calibration] maps '%s' cannot be written as one INI value", path,
            r->settings.maps);
        return -1;
    }
    return 0;
}

/* The largest [files] fps the configuration takes (config/README.md). */
#define REPLAY_MAX_FPS 1000

/* replay.ini's path, its folder with '%' doubled (a printf pattern's), and the recorded rate
 * (1 .. REPLAY_MAX_FPS: the configuration's range) for r. */
static void replay_ini_of(const pair_recorder *r, char path[PATH_MAX + 32], char dir[2 * PATH_MAX],
                          replay_ini *ini)
{
    snprintf(path, PATH_MAX + 32, "%s/replay.ini", r->dir);
    escape_percent(r->dir, dir, 2 * PATH_MAX);
    double fps = 1;
    if (r->count > 1 && r->last_ns > r->first_ns)
        fps = (double)(r->count - 1) * 1e9 / (double)(r->last_ns - r->first_ns) + 0.5;
    *ini = (replay_ini){r, path, dir,
                        fps < 1 ? 1 : fps > REPLAY_MAX_FPS ? REPLAY_MAX_FPS : (int)fps};
}

int pair_recorder_check(const live_config *cfg, char *err, size_t errlen)
{
    const char *dir = cfg->record_dir;
    if (!dir[0])
        return 0;
    pair_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        say(err, errlen, "--record / record.dir '%s': out of memory", dir);
        return -1;
    }
    /* the absolute path the recorder will take: the folder's, or its parent's and its name */
    char parent[PATH_MAX], real_parent[PATH_MAX];
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    const char *slash = memrchr(dir, '/', len);
    snprintf(parent, sizeof parent, "%.*s", !slash ? 1 : slash == dir ? 1 : (int)(slash - dir),
             !slash ? "." : dir);
    int rc = -1;
    if (!realpath(dir, r->dir)) {
        const char *base = slash ? slash + 1 : dir;
        int n = realpath(parent, real_parent)
                    ? snprintf(r->dir, sizeof r->dir, "%s/%.*s", strcmp(real_parent, "/")
                               ? real_parent : "", (int)(len - (size_t)(base - dir)), base)
                    : -1;
        if (n < 0 || (size_t)n >= sizeof r->dir) {
            rc = 0; /* the folder check says what is wrong with it */
            goto done;
        }
    }
    recorder_settings(r, cfg, NULL, NULL, 0); /* cannot fail without run */
    /* the widest numbers the comments can hold */
    r->count = LONG_MAX;
    r->first_ns = 0, r->last_ns = 1; /* the largest rate */
    r->width = r->height = 8192;
    for (int v = 0; v < r->views; v++)
        r->lost[v] = UINT64_MAX;
    char path[PATH_MAX + 32], esc[2 * PATH_MAX], why[512] = "";
    replay_ini ini;
    replay_ini_of(r, path, esc, &ini);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) {
        say(err, errlen, "--record / record.dir '%s': out of memory", dir);
        goto done;
    }
    int wrote = write_replay_ini(f, path, &ini, why, sizeof why);
    fclose(f);
    live_config back;
    live_config_defaults(&back);
    FILE *in = wrote == 0 ? fmemopen(text, size, "r") : NULL;
    if (in && live_config_load_stream(in, "replay.ini", &back, why, sizeof why) == 0) {
        char want[2 * PATH_MAX + 32];
        snprintf(want, sizeof want, "%s%s/left_%%06d.png", r->views == 2 ? "" : "file://", esc);
        rc = strcmp(r->views == 2 ? back.left_pattern : back.source_left, want) == 0 ? 0 : -1;
        if (rc)
            say(why, sizeof why, "left would read back as '%s'",
                r->views == 2 ? back.left_pattern : back.source_left);
    }
    if (in)
        fclose(in);
    free(text);
    if (rc)
        say(err, errlen, "--record / record.dir '%s': its replay.ini would not read back whole "
            "(%s); record into a folder with a shorter path, without ' ;' or ' #'", dir, why);
done:
    free(r);
    return rc;
}

int pair_recorder_close(pair_recorder *r, char *err, size_t errlen)
{
    if (!r)
        return 0;
    int rc = 0;
    if (fclose(r->stamps) != 0) {
        say(err, errlen, "%s/timestamps.txt: %s", r->dir, strerror(errno));
        rc = -1;
    }
    char path[PATH_MAX + 32], dir[2 * PATH_MAX];
    replay_ini ini;
    replay_ini_of(r, path, dir, &ini);
    char werr[2 * PATH_MAX + 128];
    if (atomic_write_file(path, write_replay_ini, &ini, werr, sizeof werr) != 0) {
        if (rc == 0)
            say(err, errlen, "%s", werr);
        rc = -1;
    }
    free(r->row);
    free(r);
    return rc;
}
#else /* LIVE_LIBC_ONLY */
int pair_recorder_check(const live_config *cfg, char *err, size_t errlen)
{
    (void)cfg, (void)err, (void)errlen;
    return 0; /* pair_recorder_open says it is not built in */
}

int pair_recorder_open(const live_config *cfg, const stereo_params *run, pair_recorder **out,
                       char *err, size_t errlen)
{
    (void)run;
    *out = NULL;
    say(err, errlen, "not built in this binary: recording to %s (PNG files need libpng; "
        "build/stereo-live has it)", cfg->record_dir);
    return -1;
}

int pair_recorder_write(pair_recorder *r, const frame_pair *p, char *err, size_t errlen)
{
    (void)r, (void)p;
    say(err, errlen, "not built in this binary: recording");
    return -1;
}

long pair_recorder_count(const pair_recorder *r)
{
    (void)r;
    return 0;
}

int pair_recorder_close(pair_recorder *r, char *err, size_t errlen)
{
    (void)r, (void)err, (void)errlen;
    return 0;
}
#endif
