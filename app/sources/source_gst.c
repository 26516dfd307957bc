/* SPDX-License-Identifier: Apache-2.0 */
/* source_gst.c — GStreamer pipelines as a frame source: one side-by-side stream (input URI),
 * split into halves, or two streams (left, right URIs) paired by timestamp through
 * hal/frame_pairing.c, as the V4L2 pair is. Compiled to nothing unless ./configure found
 * GStreamer (STEREO_HAVE_GST; live_sources.c then refuses these URIs).
 *
 * Pipelines (hal/source_uri.h for the URIs; "! appsink" is the app's, below):
 *   gst://DESC     DESC as given
 *   file://PATH    filesrc location="PATH" ! decodebin ! videoconvert
 *   rtsp://...     rtspsrc location="URI" latency=100 ! decodebin ! videoconvert
 *   csi://N        nvarguscamerasrc sensor-id=N ! video/x-raw(memory:NVMM),width=W,height=H,
 *                  framerate=F/1 ! nvvidconv ! video/x-raw,format=GRAY8 (or YUY2): the Jetson's
 *                  ISP and its hardware converter, out to system memory ([camera] width, height,
 *                  fps, format; docs/jetson.md)
 *   v4l2:///dev/X  v4l2src device="/dev/X" (only beside a GStreamer URI: two v4l2 cameras are
 *                  the V4L2 pair, source_v4l2.c)
 * each followed by "! appsink" whose caps take only what the stage reads as it is: GRAY8, YUY2
 * or RGB (of [camera] format: auto = any of the three). So no conversion runs on the CPU where
 * the source gives one of them: videoconvert passes such buffers through, and a gst:// pipeline
 * that gives another format fails to negotiate (the message says to end it with a conversion).
 * Each frame is copied once, row by row, into the stage's frame (GStreamer pads its rows).
 *
 * Timestamps. All pipelines of a source run on GStreamer's system clock of type MONOTONIC
 * (gst_system_clock_obtain: its time is CLOCK_MONOTONIC in ns) with one base time that the
 * source sets itself (start time NONE, so the pipelines do not pick their own): a buffer's
 * timestamp is base time + its running time (the PTS through the sample's segment), i.e. when
 * it was captured (live sources stamp the clock's running time at capture) or when it is due
 * (files), on the CLOCK_MONOTONIC time line the rest of the app uses. The two sides of a pair
 * are therefore comparable and are paired as the V4L2 cameras are (frame_pairing.h): within
 * [camera] max_skew_ms, or half the frame period of the caps (20 ms if they give no rate).
 * A camera's pair carries that time (the left frame's) as its timestamp; a file's pair the time
 * it was read, as the image files source does, since files are decoded ahead of the clock.
 *
 * Ends and errors. Every wait is bounded: the first frame at open (GST_OPEN_TIMEOUT_MS), each
 * pull (the read's timeout), a running stream without frames (GST_STALL_MS). A pipeline that
 * cannot be built (a missing element, a syntax error) or does not start is refused at open with
 * the URI and GStreamer's own message. Afterwards, for a camera or stream URI (gst, rtsp, csi,
 * v4l2), an error on the bus, the end of the stream (EOS) or a stall is a lost camera: the
 * message names the URI and GStreamer's error, every pipeline of the source is stopped and all
 * are rebuilt every SOURCE_RETRY_MS, as hal/capture.h does with a V4L2 camera. For files
 * (every URI file://), EOS is the end (FRAME_END), or with [files] loop the pipelines start
 * again; an error stops the source (FRAME_ERROR). Files are decoded as fast as they are read
 * (the appsink blocks the decoder; paced by the caller at [files] fps, 0 = as fast as possible,
 * no frame dropped); a camera's appsink keeps its newest 2 frames and drops older ones.
 *
 * Threads: GStreamer's own streaming threads fill the appsinks; this file is called from the
 * app's capture thread only (live_sources.h) and pulls with timeouts; no GLib main loop runs.
 */
#if STEREO_HAVE_GST
#include "source_backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "frame_pairing.h"

#define GST_OPEN_TIMEOUT_MS 10000 /* the first frame of each stream after open */
#define GST_STALL_MS 5000         /* a running stream without a frame this long is lost */
#define GST_SLICE_MS 20           /* one pull while the bus is watched */
#define GST_SINK_BUFFERS 2        /* frames an appsink queues */
#define GST_HELD 4                /* samples in the pairing at once (at most 2 are) */
#define SINK_NAME "stereo_sink"

typedef struct {
    char uri[SOURCE_URI_MAX];       /* as given, for messages */
    char launch[2 * SOURCE_URI_MAX + 256];
    GstElement *pipeline;           /* NULL while stopped */
    GstAppSink *sink;
    GstBus *bus;
} gst_stream;

typedef struct {
    gst_stream st[2];
    int n;                  /* 1: one side-by-side stream, split; 2: a pair */
    int camera;             /* 1: EOS / errors are a lost camera; 0: files (end, or loop) */
    int loop;
    GstCaps *caps;          /* what the appsinks take */
    GstClock *clock;
    int width, height;      /* of one side */
    stereo_pixfmt format;
    frame_pairing pairing;
    GstSample *held[GST_HELD];
    GstSample *first[2];    /* each stream's first frame, from open until the first read takes it */
    int lost, lost_k;       /* lost_k: the stream that was lost (messages) */
    int64_t skew_ns, max_skew_ns; /* of the last pair / the largest so far (right - left) */
    int64_t retry_at_ns, last_frame_ns, last_ts;
    long index;
    uint64_t frames[2], pairs, unpaired[2], losses, reconnects, restarts;
} gst_source;

static const char *const role_name[2] = {"left", "right"};

static pthread_once_t gst_once = PTHREAD_ONCE_INIT;
static char gst_init_error[256];

static void init_gst(void)
{
    GError *e = NULL;
    if (!gst_init_check(NULL, NULL, &e))
        snprintf(gst_init_error, sizeof gst_init_error, "%s", e ? e->message : "unknown error");
    g_clear_error(&e);
}

/* "left gst://..." or "gst://..." for messages */
static void stream_name(const gst_source *g, int k, char *buf, size_t len)
{
    if (g->n == 2)
        say(buf, len, "%s %s", role_name[k], g->st[k].uri);
    else
        say(buf, len, "%s", g->st[k].uri);
}

/* The pipeline description of a URI, without the app's appsink. 0, or -1 with err. */
static int describe(const live_config *cfg, const source_uri *u, char *out, size_t len,
                    char *err, size_t errlen)
{
    switch (u->kind) {
    case URI_GST:
        say(out, len, "%s", u->target);
        return 0;
    case URI_FILE:
        say(out, len, "filesrc location=\"%s\" ! decodebin ! videoconvert", u->target);
        return 0;
    case URI_RTSP:
        say(out, len, "rtspsrc location=\"%s\" latency=100 ! decodebin ! videoconvert",
            u->target);
        return 0;
    case URI_V4L2:
        if (strchr(u->target, '"') || strchr(u->target, '\\')) {
            say(err, errlen, "%s: a device path with '\"' or '\\' is not supported", u->text);
            return -1;
        }
        say(out, len, "v4l2src device=\"%s\"", u->target);
        return 0;
    case URI_CSI: {
        /* nvvidconv writes GRAY8 and YUY2 to system memory, but no 3-byte RGB */
        const char *fmt = cfg->format == CAPTURE_FORMAT_YUYV ? "YUY2" : "GRAY8";
        if (cfg->format == CAPTURE_FORMAT_RGB24) {
            say(err, errlen, "%s: format rgb24: nvvidconv gives no 3-byte RGB; use format grey "
                "or yuyv", u->text);
            return -1;
        }
        say(out, len, "nvarguscamerasrc sensor-id=%d ! video/x-raw(memory:NVMM),width=%d,"
            "height=%d,framerate=%d/1 ! nvvidconv ! video/x-raw,format=%s", u->sensor_id,
            cfg->width, cfg->height, cfg->fps > 0 ? cfg->fps : 30, fmt);
        return 0;
    }
    case URI_SYNTH:
        break;
    }
    say(err, errlen, "%s: not a GStreamer source", u->text);
    return -1;
}

/* GStreamer's error on the stream's bus, if any: 1 with "element: message (last debug line)"
 * in why, 2 at EOS (only when eos_too), 0 when none. */
static int stream_bus_error(gst_stream *t, int eos_too, char *why, size_t len)
{
    GstMessage *m;
    int found = 0;
    while (!found && (m = gst_bus_pop_filtered(t->bus, GST_MESSAGE_ERROR | GST_MESSAGE_EOS))) {
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
            GError *e = NULL;
            gchar *dbg = NULL;
            gst_message_parse_error(m, &e, &dbg);
            const char *tail = dbg ? strrchr(dbg, '\n') : NULL;
            say(why, len, "%s: %s%s%s%s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)),
                e ? e->message : "error", tail ? " (" : "", tail ? tail + 1 : "",
                tail ? ")" : "");
            if (dbg && strstr(dbg, "not-negotiated")) {
                size_t n = strlen(why);
                say(why + n, len - n, "; the app takes GRAY8, YUY2 or RGB ([camera] format) "
                    "of up to %dx%d (side by side: %d wide): end the pipeline with videoconvert "
                    "or caps the source can give", STEREO_MAX_SIDE, STEREO_MAX_SIDE,
                    2 * STEREO_MAX_SIDE);
            }
            g_clear_error(&e);
            g_free(dbg);
            found = 1;
        } else if (eos_too) {
            say(why, len, "end of stream");
            found = 2;
        }
        gst_message_unref(m);
    }
    return found;
}

static void stream_stop(gst_stream *t)
{
    if (!t->pipeline)
        return;
    gst_element_set_state(t->pipeline, GST_STATE_NULL);
    gst_object_unref(t->sink);
    gst_object_unref(t->bus);
    gst_object_unref(t->pipeline);
    t->pipeline = NULL;
    t->sink = NULL;
    t->bus = NULL;
}

/* Builds the stream's pipeline and sets it playing at base time `base`. 0, or -1 with err
 * naming the stream and GStreamer's error. */
static int stream_start(gst_source *g, int k, GstClockTime base, char *err, size_t errlen)
{
    gst_stream *t = &g->st[k];
    char name[SOURCE_URI_MAX + 8];
    stream_name(g, k, name, sizeof name);
    GError *e = NULL;
    GstElement *p = gst_parse_launch_full(t->launch, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &e);
    if (!p || !GST_IS_PIPELINE(p)) {
        say(err, errlen, "%s: cannot build the GStreamer pipeline: %s", name,
            e ? e->message : "not a pipeline");
        g_clear_error(&e);
        if (p)
            gst_object_unref(p);
        return -1;
    }
    g_clear_error(&e);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(p), SINK_NAME);
    if (!sink || !GST_IS_APP_SINK(sink)) {
        say(err, errlen, "%s: the pipeline has no appsink named " SINK_NAME, name);
        if (sink)
            gst_object_unref(sink);
        gst_object_unref(p);
        return -1;
    }
    /* files: the sink blocks the decoder (nothing dropped); cameras: the newest frames */
    g_object_set(sink, "caps", g->caps, "max-buffers", (guint)GST_SINK_BUFFERS, "drop",
                 (gboolean)g->camera, "sync", FALSE, "enable-last-sample", FALSE, NULL);
    gst_pipeline_use_clock(GST_PIPELINE(p), g->clock);
    gst_element_set_start_time(p, GST_CLOCK_TIME_NONE);
    gst_element_set_base_time(p, base);
    t->pipeline = p;
    t->sink = GST_APP_SINK(sink);
    t->bus = gst_element_get_bus(p);
    if (gst_element_set_state(p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        char why[512] = "the state change failed";
        stream_bus_error(t, 0, why, sizeof why);
        say(err, errlen, "%s: the GStreamer pipeline does not start: %s", name, why);
        stream_stop(t);
        return -1;
    }
    return 0;
}

static void streams_stop(gst_source *g)
{
    frame_pairing_result r;
    for (int k = 0; k < g->n; k++) {
        stream_stop(&g->st[k]);
        frame_pairing_flush(&g->pairing, k, &r);
    }
    for (int i = 0; i < GST_HELD; i++)
        if (g->held[i]) {
            gst_sample_unref(g->held[i]);
            g->held[i] = NULL;
        }
    for (int k = 0; k < 2; k++)
        if (g->first[k]) {
            gst_sample_unref(g->first[k]);
            g->first[k] = NULL;
        }
}

/* Starts every stream on one base time: now, but after the last frame delivered, so that the
 * timestamps go on increasing when files start again. */
static int streams_start(gst_source *g, char *err, size_t errlen)
{
    GstClockTime base = gst_clock_get_time(g->clock);
    if (g->last_ts > 0 && (GstClockTime)g->last_ts + GST_MSECOND > base)
        base = (GstClockTime)g->last_ts + GST_MSECOND;
    for (int k = 0; k < g->n; k++)
        if (stream_start(g, k, base, err, errlen) != 0) {
            streams_stop(g);
            return -1;
        }
    g->last_frame_ns = source_now_ns();
    return 0;
}

/* A sample's time on the CLOCK_MONOTONIC line: base time + running time (see the top). */
static int64_t sample_time(const gst_stream *t, GstSample *s)
{
    GstBuffer *b = gst_sample_get_buffer(s);
    const GstSegment *seg = gst_sample_get_segment(s);
    if (b && seg && seg->format == GST_FORMAT_TIME && GST_BUFFER_PTS_IS_VALID(b)) {
        guint64 rt = gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(b));
        if (GST_CLOCK_TIME_IS_VALID(rt))
            return (int64_t)(gst_element_get_base_time(t->pipeline) + rt);
    }
    return source_now_ns();
}

static int pixfmt_of(GstVideoFormat f, stereo_pixfmt *out)
{
    switch (f) {
    case GST_VIDEO_FORMAT_GRAY8: *out = STEREO_PIX_GREY8; return 0;
    case GST_VIDEO_FORMAT_YUY2: *out = STEREO_PIX_YUYV; return 0;
    case GST_VIDEO_FORMAT_RGB: *out = STEREO_PIX_RGB24; return 0;
    default: return -1;
    }
}

/* The sample's size and format: 0, or -1 with why. */
static int sample_info(GstSample *s, GstVideoInfo *vi, stereo_pixfmt *f, char *why, size_t len)
{
    GstCaps *caps = gst_sample_get_caps(s);
    if (!caps || !gst_video_info_from_caps(vi, caps)) {
        say(why, len, "a frame without video caps");
        return -1;
    }
    if (pixfmt_of(GST_VIDEO_INFO_FORMAT(vi), f) != 0) {
        say(why, len, "format %s is not GRAY8, YUY2 or RGB",
            gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(vi)));
        return -1;
    }
    return 0;
}

/* Copies columns x0 .. x0 + g->width of the sample into dst, packed. 0, or -1 with why. */
static int copy_side(gst_source *g, GstSample *s, int x0, uint8_t *dst, stereo_image *im,
                     char *why, size_t len)
{
    GstVideoInfo vi;
    stereo_pixfmt f;
    if (sample_info(s, &vi, &f, why, len) != 0)
        return -1;
    if (f != g->format || GST_VIDEO_INFO_WIDTH(&vi) != g->width * (g->n == 1 ? 2 : 1) ||
        GST_VIDEO_INFO_HEIGHT(&vi) != g->height) {
        say(why, len, "the frames changed to %dx%d %s (were %dx%d %s)", GST_VIDEO_INFO_WIDTH(&vi),
            GST_VIDEO_INFO_HEIGHT(&vi), gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi)),
            g->width * (g->n == 1 ? 2 : 1), g->height,
            g->format == STEREO_PIX_GREY8 ? "GRAY8" : g->format == STEREO_PIX_YUYV ? "YUY2"
                                                                                   : "RGB");
        return -1;
    }
    GstVideoFrame vf;
    if (!gst_video_frame_map(&vf, &vi, gst_sample_get_buffer(s), GST_MAP_READ)) {
        say(why, len, "cannot map a frame");
        return -1;
    }
    const uint8_t *data = GST_VIDEO_FRAME_PLANE_DATA(&vf, 0);
    size_t stride = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0);
    *im = source_pack_rows(data + (size_t)x0 * stereo_pixfmt_bytes(f), stride, g->width,
                           g->height, f, dst);
    gst_video_frame_unmap(&vf);
    return 0;
}

/* Lost (camera): everything stopped, rebuilt every SOURCE_RETRY_MS from the next read. */
static frame_status lose(frame_source *s, int k, const char *why)
{
    gst_source *g = s->state;
    char name[SOURCE_URI_MAX + 8];
    stream_name(g, k, name, sizeof name);
    streams_stop(g);
    g->lost = 1;
    g->lost_k = k;
    g->losses++;
    g->retry_at_ns = source_now_ns() + SOURCE_RETRY_MS * 1000000LL;
    say(s->message, sizeof s->message, "%s: lost (%s), retrying every %d s", name, why,
        SOURCE_RETRY_MS / 1000);
    source_log(NULL, s->message);
    return FRAME_LOST;
}

/* A problem with stream k: a lost camera, or for files the end of the source. */
static frame_status fail_stream(frame_source *s, int k, const char *why)
{
    gst_source *g = s->state;
    if (g->camera)
        return lose(s, k, why);
    char name[SOURCE_URI_MAX + 8];
    stream_name(g, k, name, sizeof name);
    say(s->message, sizeof s->message, "%s: %s", name, why);
    return FRAME_ERROR;
}

/* The end of stream k: lost (camera), the end, or the files again from the start (loop). */
static frame_status end_of_stream(frame_source *s, int k)
{
    gst_source *g = s->state;
    if (g->camera)
        return lose(s, k, "end of stream");
    if (!g->loop)
        return FRAME_END;
    streams_stop(g);
    g->restarts++;
    return streams_start(g, s->message, sizeof s->message) == 0 ? FRAME_TIMEOUT : FRAME_ERROR;
}

/* Lost: waits for the retry time (at most timeout_ms), then rebuilds. FRAME_OK once running. */
static frame_status retry(frame_source *s, int timeout_ms)
{
    gst_source *g = s->state;
    int64_t wait_ms = (g->retry_at_ns - source_now_ns()) / 1000000;
    if (wait_ms > 0) {
        if (wait_ms > timeout_ms)
            wait_ms = timeout_ms;
        g_usleep((gulong)wait_ms * 1000);
        return FRAME_LOST;
    }
    char why[1024];
    if (streams_start(g, why, sizeof why) != 0) {
        g->retry_at_ns = source_now_ns() + SOURCE_RETRY_MS * 1000000LL;
        say(s->message, sizeof s->message, "%s, retrying every %d s", why,
            SOURCE_RETRY_MS / 1000);
        return FRAME_LOST;
    }
    g->lost = 0;
    g->reconnects++;
    char name[SOURCE_URI_MAX + 8];
    stream_name(g, g->lost_k, name, sizeof name);
    say(s->message, sizeof s->message, "%s: reconnected", name);
    source_log(NULL, s->message);
    s->message[0] = 0;
    return FRAME_OK;
}

static int free_slot(const gst_source *g)
{
    for (int i = 0; i < GST_HELD; i++)
        if (!g->held[i])
            return i;
    return -1; /* cannot happen: the pairing holds at most one frame between offers */
}

/* Stream k's sample: offered to the pairing (a pair), or delivered split (one stream). */
static frame_status take(frame_source *s, int k, GstSample *smp, uint8_t *l, uint8_t *r,
                         frame_pair *out)
{
    gst_source *g = s->state;
    char why[256];
    int64_t ts = sample_time(&g->st[k], smp);
    g->frames[k]++;
    int a, b;
    if (g->n == 1) {
        int rc = copy_side(g, smp, 0, l, &out->left, why, sizeof why) ||
                 copy_side(g, smp, g->width, r, &out->right, why, sizeof why);
        gst_sample_unref(smp);
        if (rc)
            return fail_stream(s, 0, why);
    } else {
        int slot = free_slot(g);
        if (slot < 0) {
            gst_sample_unref(smp);
            return fail_stream(s, k, "no room for a frame in the pairing");
        }
        g->held[slot] = smp;
        frame_pairing_result res;
        frame_pairing_offer(&g->pairing, k, slot, ts, &res);
        for (int d = 0; d < res.dropped; d++) {
            gst_sample_unref(g->held[res.drop[d].handle]);
            g->held[res.drop[d].handle] = NULL;
            g->unpaired[res.drop[d].camera]++;
        }
        if (!res.paired)
            return FRAME_TIMEOUT;
        a = res.handle[0], b = res.handle[1];
        int rc = copy_side(g, g->held[a], 0, l, &out->left, why, sizeof why) ||
                 copy_side(g, g->held[b], 0, r, &out->right, why, sizeof why);
        gst_sample_unref(g->held[a]);
        gst_sample_unref(g->held[b]);
        g->held[a] = g->held[b] = NULL;
        if (rc)
            return fail_stream(s, 0, why);
        ts = res.ts[0];
        g->skew_ns = res.ts[1] - res.ts[0];
        int64_t mag = g->skew_ns < 0 ? -g->skew_ns : g->skew_ns;
        if (mag > g->max_skew_ns)
            g->max_skew_ns = mag;
    }
    /* a camera's frame: when it was captured; a file's: when it was read, as the image files
     * source says (its own time line runs ahead of the clock: decoded as fast as it is read) */
    out->timestamp_ns = g->camera ? ts : source_now_ns();
    out->scene_t = 0;
    out->index = g->index++;
    g->pairs++;
    g->last_ts = ts;
    return FRAME_OK;
}

static frame_status gst_read(frame_source *s, uint8_t *const buf[], frame_pair *out,
                             int timeout)
{
    gst_source *g = s->state;
    uint8_t *l = buf[0], *r = buf[1];
    int64_t deadline = source_now_ns() + (int64_t)timeout * 1000000;
    if (g->lost) {
        frame_status st = retry(s, timeout);
        if (st != FRAME_OK)
            return st;
    }
    char why[1024];
    for (;;) {
        for (int k = 0; k < g->n; k++)
            if (stream_bus_error(&g->st[k], 0, why, sizeof why) == 1)
                return fail_stream(s, k, why);
        /* the side whose partner waits in the pairing, else the left */
        int k = g->n == 2 && g->pairing.waiting[0] ? 1 : 0;
        int64_t now = source_now_ns();
        int64_t slice = (deadline - now) / 1000000;
        if (slice > GST_SLICE_MS)
            slice = GST_SLICE_MS;
        if (slice < 0)
            slice = 0;
        GstSample *smp = g->first[k];
        g->first[k] = NULL;
        if (!smp)
            smp = gst_app_sink_try_pull_sample(g->st[k].sink, (GstClockTime)slice * GST_MSECOND);
        if (smp) {
            g->last_frame_ns = source_now_ns();
            frame_status st = take(s, k, smp, l, r, out);
            if (st != FRAME_TIMEOUT)
                return st;
            if (source_now_ns() >= deadline) /* frames that do not pair: still bounded */
                return FRAME_TIMEOUT;
            continue;
        }
        if (gst_app_sink_is_eos(g->st[k].sink)) {
            if (stream_bus_error(&g->st[k], 0, why, sizeof why) == 1) /* the error, then EOS */
                return fail_stream(s, k, why);
            frame_status st = end_of_stream(s, k);
            if (st != FRAME_TIMEOUT)
                return st;
        }
        now = source_now_ns();
        if (now - g->last_frame_ns > GST_STALL_MS * 1000000LL) {
            say(why, sizeof why, "no frame for %d s", GST_STALL_MS / 1000);
            return fail_stream(s, k, why);
        }
        if (now >= deadline)
            return FRAME_TIMEOUT;
    }
}

static void gst_close(frame_source *s)
{
    gst_source *g = s->state;
    if (!g)
        return;
    streams_stop(g);
    if (g->caps)
        gst_caps_unref(g->caps);
    if (g->clock)
        gst_object_unref(g->clock);
    free(g);
}

static void gst_stats_line(const frame_source *s, char *buf, size_t len)
{
    const gst_source *g = s->state;
    if (g->n == 2)
        say(buf, len, "gst: %llu pairs of %llu+%llu frames, skew %.1f ms (max %.1f of %.1f), "
            "%llu+%llu unpaired, %llu losses, %llu reconnects, %llu restarts",
            (unsigned long long)g->pairs, (unsigned long long)g->frames[0],
            (unsigned long long)g->frames[1], g->skew_ns / 1e6, g->max_skew_ns / 1e6,
            g->pairing.max_skew_ns / 1e6,
            (unsigned long long)g->unpaired[0], (unsigned long long)g->unpaired[1],
            (unsigned long long)g->losses, (unsigned long long)g->reconnects,
            (unsigned long long)g->restarts);
    else
        say(buf, len, "gst: %llu frames, %llu losses, %llu reconnects, %llu restarts",
            (unsigned long long)g->frames[0], (unsigned long long)g->losses,
            (unsigned long long)g->reconnects, (unsigned long long)g->restarts);
}

/* Waits (bounded) for each stream's first frame into first[k] and learns the size and format
 * from it. 0, or -1 with err (first[] may hold frames: the caller unrefs them). */
static int first_frames(gst_source *g, GstSample *first[2], char *err, size_t errlen)
{
    int64_t deadline = source_now_ns() + GST_OPEN_TIMEOUT_MS * 1000000LL;
    char why[1024], name[SOURCE_URI_MAX + 8];
    for (int k = 0; k < g->n; k++) {
        stream_name(g, k, name, sizeof name);
        while (!first[k]) {
            int e = stream_bus_error(&g->st[k], 1, why, sizeof why);
            if (e) {
                say(err, errlen, "%s: %s%s", name, e == 2 ? "ended before its first frame: "
                    : "", why);
                return -1;
            }
            first[k] = gst_app_sink_try_pull_sample(g->st[k].sink, GST_SLICE_MS * GST_MSECOND);
            if (!first[k] && gst_app_sink_is_eos(g->st[k].sink)) {
                /* an error stops the stream with an EOS after it: say the error */
                e = stream_bus_error(&g->st[k], 0, why, sizeof why);
                say(err, errlen, "%s: ended before its first frame%s%s", name, e ? ": " : "",
                    e ? why : "");
                return -1;
            }
            if (!first[k] && source_now_ns() > deadline) {
                say(err, errlen, "%s: no frame within %d s of starting (a camera that does not "
                    "deliver, or a pipeline waiting for something)", name,
                    GST_OPEN_TIMEOUT_MS / 1000);
                return -1;
            }
        }
    }
    GstVideoInfo vi[2];
    stereo_pixfmt f[2] = {STEREO_PIX_GREY8, STEREO_PIX_GREY8};
    for (int k = 0; k < g->n; k++) {
        stream_name(g, k, name, sizeof name);
        if (sample_info(first[k], &vi[k], &f[k], why, sizeof why) != 0) {
            say(err, errlen, "%s: %s", name, why);
            return -1;
        }
    }
    int w = GST_VIDEO_INFO_WIDTH(&vi[0]), h = GST_VIDEO_INFO_HEIGHT(&vi[0]);
    if (g->n == 2 && (w != GST_VIDEO_INFO_WIDTH(&vi[1]) || h != GST_VIDEO_INFO_HEIGHT(&vi[1]) ||
                      f[0] != f[1])) {
        say(err, errlen, "the left stream gives %dx%d %s, the right %dx%d %s: both sides need "
            "the same size and format", w, h,
            gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi[0])),
            GST_VIDEO_INFO_WIDTH(&vi[1]), GST_VIDEO_INFO_HEIGHT(&vi[1]),
            gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi[1])));
        return -1;
    }
    if (g->n == 1 && w % (f[0] == STEREO_PIX_YUYV ? 4 : 2) != 0) {
        say(err, errlen, "%s: width %d: a side-by-side frame splits into two halves of whole "
            "pixels%s", g->st[0].uri, w, f[0] == STEREO_PIX_YUYV ? " pairs (YUY2)" : "");
        return -1;
    }
    g->width = g->n == 1 ? w / 2 : w;
    g->height = h;
    g->format = f[0];
    return 0;
}

static frame_status gst_open(frame_source *s, const live_config *cfg, const source_plan *plan,
                             char *err, size_t errlen)
{
    pthread_once(&gst_once, init_gst);
    if (gst_init_error[0]) {
        say(err, errlen, "%s: GStreamer does not start: %s", plan->uri[0].text, gst_init_error);
        return FRAME_ERROR;
    }
    gst_source *g = calloc(1, sizeof *g);
    if (!g) {
        say(err, errlen, "%s: out of memory", plan->uri[0].text);
        return FRAME_ERROR;
    }
    s->state = g;
    g->n = plan->kind == PLAN_GST_PAIR ? 2 : 1;
    g->camera = 0;
    for (int k = 0; k < g->n; k++) {
        const source_uri *u = &plan->uri[k];
        g->camera |= u->kind != URI_FILE;
        snprintf(g->st[k].uri, sizeof g->st[k].uri, "%s", u->text);
        char desc[sizeof g->st[k].launch - 64];
        if (describe(cfg, u, desc, sizeof desc, err, errlen) != 0)
            goto fail;
        say(g->st[k].launch, sizeof g->st[k].launch, "%s ! appsink name=" SINK_NAME, desc);
    }
    g->loop = cfg->files_loop;
    const char *formats = cfg->format == CAPTURE_FORMAT_GREY ? "GRAY8"
                          : cfg->format == CAPTURE_FORMAT_YUYV ? "YUY2"
                          : cfg->format == CAPTURE_FORMAT_RGB24 ? "RGB"
                                                                : "{ GRAY8, YUY2, RGB }";
    /* the size too, so that a frame the stage cannot take is refused by the caps negotiation
     * before the first buffer is allocated (16384x16384 used to reach 540 MB first) */
    char caps[192];
    say(caps, sizeof caps, "video/x-raw, format=(string)%s, width=(int)[1, %d], "
        "height=(int)[1, %d]", formats, g->n == 1 ? 2 * STEREO_MAX_SIDE : STEREO_MAX_SIDE,
        STEREO_MAX_SIDE);
    g->caps = gst_caps_from_string(caps);
    g->clock = gst_system_clock_obtain();
    g_object_set(g->clock, "clock-type", GST_CLOCK_TYPE_MONOTONIC, NULL);
    if (!g->caps || !g->clock) {
        say(err, errlen, "%s: GStreamer: cannot make the caps or the clock", plan->uri[0].text);
        goto fail;
    }
    if (streams_start(g, err, errlen) != 0)
        goto fail;
    GstSample *first[2] = {NULL, NULL};
    if (first_frames(g, first, err, errlen) != 0) {
        for (int k = 0; k < 2; k++)
            if (first[k])
                gst_sample_unref(first[k]);
        goto fail;
    }
    /* pairing tolerance: [camera] max_skew_ms, else half the frame period of the caps */
    int64_t skew = (int64_t)cfg->max_skew_ms * 1000000;
    if (skew == 0) {
        GstVideoInfo vi;
        gst_video_info_from_caps(&vi, gst_sample_get_caps(first[0]));
        skew = vi.fps_n > 0 && vi.fps_d > 0 ? (int64_t)500000000 * vi.fps_d / vi.fps_n
                                            : 20000000;
    }
    frame_pairing_init(&g->pairing, skew);
    /* the first frames are the first the reads take */
    for (int k = 0; k < g->n; k++)
        g->first[k] = first[k];
    size_t side = (size_t)g->width * g->height * stereo_pixfmt_bytes(g->format);
    s->info = (frame_source_info){g->width, g->height, side, g->camera,
                                  g->camera ? 0 : cfg->files_fps, 0, 2};
    for (int k = 0; k < g->n; k++) {
        char name[SOURCE_URI_MAX + 8];
        stream_name(g, k, name, sizeof name);
        fprintf(stderr, "stereo-live: %s: GStreamer, %dx%d %s%s, copied once: %s\n", name,
                g->n == 1 ? 2 * g->width : g->width, g->height,
                g->format == STEREO_PIX_GREY8 ? "GRAY8" : g->format == STEREO_PIX_YUYV ? "YUY2"
                                                                                       : "RGB",
                g->n == 1 ? " (split into halves)" : "", g->st[k].launch);
    }
    return FRAME_OK;
fail:
    gst_close(s);
    s->state = NULL;
    return FRAME_ERROR;
}

const source_ops source_gst_ops = {
    .name = "gst", .open = gst_open, .read = gst_read, .close = gst_close,
    .stats_line = gst_stats_line,
};
#endif
