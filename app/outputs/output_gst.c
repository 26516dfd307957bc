/* SPDX-License-Identifier: Apache-2.0 */
/* output_gst.c — the colour-mapped view through GStreamer:
 *   rtp://HOST:PORT        H.264 over RTP/UDP (payload type 96) to HOST:PORT
 *   rtsp://@:PORT/PATH     an RTSP server (gst-rtsp-server) on every interface serving PATH;
 *                          one shared stream, encoded only while a client watches
 *   gst://appsrc ! ...     any pipeline that starts with an appsrc, fed RGBA frames
 * The encoder is the Jetson's nvv4l2h264enc where GStreamer has it (through nvvidconv), else
 * x264enc (ultrafast, zerolatency); ?bitrate=KBPS (default 4000).
 *
 * The appsrc is live and timestamps each frame as it is pushed; it queues at most QUEUE_MAX
 * frames: a pipeline that is behind drops this output's frames (counted by live_outputs.c),
 * never anything upstream, and a push never blocks. An error on the pipeline's bus is reported
 * once and the output goes on trying (a receiver that comes back).
 *
 * Without GStreamer (./configure --no-gst, or none found) these outputs are refused when
 * opened, saying so.
 */
#include "output_backend.h"

#include <stdio.h>

#if STEREO_HAVE_GST
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if STEREO_HAVE_RTSP_SERVER
#include <gst/rtsp-server/rtsp-server.h>
#endif

#define QUEUE_MAX 2
#define EOS_WAIT_NS (2 * GST_SECOND) /* at the end, for the pipeline to finish its stream */

#define QUEUES_WATCHED 16

/* A queue of the pipeline: frames in and out of a leaky one (pad probes, streaming threads);
 * what it holds is its current-level-buffers. */
typedef struct {
    GstElement *queue;
    int leaky;
    uint64_t in, out;           /* atomics */
} watched_queue;

typedef struct {
    output_uri uri;
    int width, height;
    GstElement *pipeline;       /* rtp, gst */
    GstAppSrc *src;             /* rtp, gst; rtsp: the current client's, under lock */
    GstBus *bus;
    /* rtsp: the server's main loop in a thread of its own */
    GMainContext *context;
    GMainLoop *loop;
    GThread *loop_thread;
    GObject *server;
    guint server_id;
    GMutex lock;
    /* rtp, gst: what becomes of the frames pushed (output_backend.lost) */
    watched_queue queue[QUEUES_WATCHED];
    int nqueue;
    uint64_t left;              /* frames still queued when the stream was stopped */
    uint64_t leaked_final;
    int finished;               /* atomic: left and leaked_final are set */
} gst_output;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char init_error[256];

static void init_gst(void)
{
    GError *e = NULL;
    if (!gst_init_check(NULL, NULL, &e))
        snprintf(init_error, sizeof init_error, "GStreamer does not start: %s",
                 e ? e->message : "unknown error");
    g_clear_error(&e);
}

/* videoconvert ! ENCODER ! rtph264pay: the Jetson's hardware encoder where present. */
static void encoder_description(const output_uri *u, char *buf, size_t len)
{
    GstElementFactory *nv = gst_element_factory_find("nvv4l2h264enc");
    if (nv) {
        gst_object_unref(nv);
        snprintf(buf, len, "nvvidconv ! video/x-raw(memory:NVMM),format=I420 ! nvv4l2h264enc "
                 "bitrate=%d insert-sps-pps=true idrinterval=30 ! h264parse",
                 u->bitrate_kbps * 1000);
    } else {
        snprintf(buf, len, "videoconvert ! video/x-raw,format=I420 ! x264enc tune=zerolatency "
                 "speed-preset=ultrafast bitrate=%d key-int-max=30 ! "
                 "video/x-h264,profile=constrained-baseline", u->bitrate_kbps);
    }
}

static void configure_src(GstAppSrc *src, int w, int h)
{
    GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGBA", "width",
                                        G_TYPE_INT, w, "height", G_TYPE_INT, h, "framerate",
                                        GST_TYPE_FRACTION, 0, 1, NULL);
    g_object_set(src, "caps", caps, "is-live", TRUE, "format", GST_FORMAT_TIME, "do-timestamp",
                 TRUE, "max-buffers", (guint64)QUEUE_MAX, "block", FALSE, NULL);
    gst_caps_unref(caps);
}

/* The first appsrc of a parsed pipeline (gst://: the description starts with it). */
static GstAppSrc *find_appsrc(GstElement *pipeline)
{
    if (GST_IS_APP_SRC(pipeline))
        return GST_APP_SRC(gst_object_ref(pipeline));
    GstIterator *it = gst_bin_iterate_sources(GST_BIN(pipeline));
    GValue v = G_VALUE_INIT;
    GstAppSrc *found = NULL;
    while (!found && gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
        GstElement *e = g_value_get_object(&v);
        if (GST_IS_APP_SRC(e))
            found = GST_APP_SRC(gst_object_ref(e));
        g_value_reset(&v);
    }
    g_value_unset(&v);
    gst_iterator_free(it);
    return found;
}

/* Every element of a bin and of the bins in it, one at a time (with a reference), to fn until
 * it returns nonzero: that value, else 0. */
static int each_element(GstElement *pipeline, int (*fn)(GstElement *e, void *ctx), void *ctx)
{
    if (!GST_IS_BIN(pipeline))
        return fn(pipeline, ctx);
    GstIterator *it = gst_bin_iterate_recurse(GST_BIN(pipeline));
    GValue v = G_VALUE_INIT;
    int rc = 0;
    GstIteratorResult r;
    while (!rc && (r = gst_iterator_next(it, &v)) != GST_ITERATOR_DONE) {
        if (r == GST_ITERATOR_RESYNC) {
            gst_iterator_resync(it);
            continue;
        }
        if (r != GST_ITERATOR_OK)
            break;
        rc = fn(g_value_get_object(&v), ctx);
        g_value_reset(&v);
    }
    g_value_unset(&v);
    gst_iterator_free(it);
    return rc;
}

static const char *factory_name(GstElement *e)
{
    GstElementFactory *f = gst_element_get_factory(e);
    return f ? gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(f)) : "";
}

/* The files a gst:// pipeline writes were checked before the run from its text
 * (output_gst_files, app/stereo_live.c): each location GStreamer set must be one of those, so
 * a description read differently there is refused rather than written unchecked. */
typedef struct {
    output_gst_file f[OUTPUT_GST_FILES_MAX];
    int n;
    char *err;
    size_t errlen;
} checked_files;

static int location_checked(GstElement *e, void *ctx)
{
    checked_files *c = ctx;
    const char *name = factory_name(e);
    if (strcmp(name, "filesink") && strcmp(name, "multifilesink") && strcmp(name, "splitmuxsink"))
        return 0;
    gchar *loc = NULL;
    g_object_get(e, "location", &loc, NULL);
    int found = !loc || !*loc;
    for (int i = 0; !found && i < c->n; i++)
        found = strcmp(c->f[i].location, loc) == 0;
    if (!found)
        snprintf(c->err, c->errlen, "%s location '%s' was not among the files checked before "
                 "the run (write it as location=\"PATH\")", GST_ELEMENT_NAME(e), loc);
    g_free(loc);
    return !found;
}

/* A queue without any limit (max-size-buffers, -bytes and -time all 0) grows for as long as
 * the pipeline is behind: the app's own bound (the appsrc's QUEUE_MAX frames) ends where a
 * queue takes every frame at once. */
static int unbounded_queue(GstElement *e, void *ctx)
{
    const char *name = factory_name(e);
    checked_files *c = ctx;
    if (strcmp(name, "queue") && strcmp(name, "queue2") && strcmp(name, "multiqueue"))
        return 0;
    guint buffers = 1, bytes = 1;
    guint64 time = 1;
    g_object_get(e, "max-size-buffers", &buffers, "max-size-bytes", &bytes, "max-size-time",
                 &time, NULL);
    if (buffers || bytes || time)
        return 0;
    snprintf(c->err, c->errlen, "%s has no limit (max-size-buffers, max-size-bytes and "
             "max-size-time all 0): its frames would pile up in memory while the pipeline is "
             "behind; give it one (e.g. max-size-buffers=4, with leaky=downstream to keep the "
             "newest)", GST_ELEMENT_NAME(e));
    return 1;
}

static GstPadProbeReturn count_buffers(GstPad *pad, GstPadProbeInfo *info, gpointer counter)
{
    uint64_t n = 1;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST)
        n = gst_buffer_list_length(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
    __atomic_add_fetch((uint64_t *)counter, n, __ATOMIC_RELAXED);
    return GST_PAD_PROBE_OK;
}

static void probe_pad(GstElement *e, const char *pad_name, uint64_t *counter)
{
    GstPad *pad = gst_element_get_static_pad(e, pad_name);
    if (!pad)
        return;
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                      count_buffers, counter, NULL);
    gst_object_unref(pad);
}

/* Each queue and queue2 of the pipeline, watched: a leaky queue's frames in and out, so that
 * what it threw away is known (in - out - what it holds). */
static int watch_queue(GstElement *e, void *ctx)
{
    gst_output *g = ctx;
    const char *name = factory_name(e);
    if ((strcmp(name, "queue") && strcmp(name, "queue2")) || g->nqueue == QUEUES_WATCHED)
        return 0;
    watched_queue *q = &g->queue[g->nqueue++];
    q->queue = GST_ELEMENT(gst_object_ref(e));
    if (!strcmp(name, "queue")) {
        gint leaky = 0;
        g_object_get(e, "leaky", &leaky, NULL);
        q->leaky = leaky != 0;
    }
    if (q->leaky) {
        probe_pad(e, "sink", &q->in);
        probe_pad(e, "src", &q->out);
    }
    return 0;
}

static uint64_t queue_level(GstElement *e)
{
    guint n = 0;
    g_object_get(e, "current-level-buffers", &n, NULL);
    return n;
}

/* Frames the leaky queues threw away so far. */
static uint64_t leaked(gst_output *g)
{
    uint64_t sum = 0;
    for (int i = 0; i < g->nqueue; i++) {
        watched_queue *q = &g->queue[i];
        if (!q->leaky)
            continue;
        /* out first: a frame counted out was counted in before */
        uint64_t out = __atomic_load_n(&q->out, __ATOMIC_ACQUIRE);
        uint64_t in = __atomic_load_n(&q->in, __ATOMIC_ACQUIRE);
        uint64_t held = queue_level(q->queue);
        if (in > out + held)
            sum += in - out - held;
    }
    return sum;
}

/* An error message as one line: "element: what" */
static void error_text(GstMessage *m, char *err, size_t errlen)
{
    GError *e = NULL;
    gst_message_parse_error(m, &e, NULL);
    snprintf(err, errlen, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "error");
    g_clear_error(&e);
}

/* The first error on the bus since the last call, into err: 1, else 0. */
static int bus_error(gst_output *g, char *err, size_t errlen)
{
    if (!g->bus)
        return 0;
    GstMessage *m;
    int got = 0;
    while ((m = gst_bus_pop_filtered(g->bus, GST_MESSAGE_ERROR))) {
        if (!got)
            error_text(m, err, errlen);
        got = 1;
        gst_message_unref(m);
    }
    return got;
}

static gboolean quit_loop(gpointer loop)
{
    g_main_loop_quit(loop);
    return G_SOURCE_REMOVE;
}

#if STEREO_HAVE_RTSP_SERVER
static void on_media_unprepared(GstRTSPMedia *media, gpointer user)
{
    gst_output *g = user;
    g_mutex_lock(&g->lock);
    if (g->src)
        gst_object_unref(g->src);
    g->src = NULL;
    g_mutex_unlock(&g->lock);
}

/* A client asked for the stream: its appsrc is the one fed from now on. */
static void on_media_configure(GstRTSPMediaFactory *f, GstRTSPMedia *media, gpointer user)
{
    gst_output *g = user;
    GstElement *bin = gst_rtsp_media_get_element(media);
    GstElement *src = gst_bin_get_by_name_recurse_up(GST_BIN(bin), "src");
    gst_object_unref(bin);
    if (!src)
        return;
    configure_src(GST_APP_SRC(src), g->width, g->height);
    g_signal_connect(media, "unprepared", G_CALLBACK(on_media_unprepared), g);
    g_mutex_lock(&g->lock);
    if (g->src)
        gst_object_unref(g->src);
    g->src = GST_APP_SRC(src);
    g_mutex_unlock(&g->lock);
}

static gpointer run_loop(gpointer user)
{
    gst_output *g = user;
    g_main_context_push_thread_default(g->context);
    g_main_loop_run(g->loop);
    g_main_context_pop_thread_default(g->context);
    return NULL;
}

static int open_rtsp(gst_output *g, char *err, size_t errlen)
{
    char enc[512], launch[1024], port[16];
    encoder_description(&g->uri, enc, sizeof enc);
    snprintf(launch, sizeof launch, "( appsrc name=src ! queue leaky=downstream max-size-buffers=2"
             " ! %s ! rtph264pay name=pay0 pt=96 config-interval=1 )", enc);
    snprintf(port, sizeof port, "%d", g->uri.port);
    GstRTSPServer *server = gst_rtsp_server_new();
    g->server = G_OBJECT(server);
    gst_rtsp_server_set_address(server, "0.0.0.0");
    gst_rtsp_server_set_service(server, port);
    GstRTSPMountPoints *mounts = gst_rtsp_server_get_mount_points(server);
    GstRTSPMediaFactory *factory = gst_rtsp_media_factory_new();
    gst_rtsp_media_factory_set_launch(factory, launch);
    gst_rtsp_media_factory_set_shared(factory, TRUE);
    g_signal_connect(factory, "media-configure", G_CALLBACK(on_media_configure), g);
    gst_rtsp_mount_points_add_factory(mounts, g->uri.target, factory);
    g_object_unref(mounts);
    g->context = g_main_context_new();
    g->loop = g_main_loop_new(g->context, FALSE);
    g->server_id = gst_rtsp_server_attach(server, g->context);
    if (g->server_id == 0) {
        snprintf(err, errlen, "the RTSP server cannot listen on port %d (in use?)", g->uri.port);
        return -1;
    }
    g->loop_thread = g_thread_new("rtsp-server", run_loop, g);
    return 0;
}
#endif

static int gst_open(const output_uri *u, const output_setup *s, void **state, char *err,
                    size_t errlen)
{
    pthread_once(&once, init_gst);
    if (init_error[0]) {
        snprintf(err, errlen, "%s", init_error);
        return -1;
    }
    gst_output *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    g_mutex_init(&g->lock);
    g->uri = *u;
    g->width = s->width;
    g->height = s->height;
    *state = g;
    if (u->kind == OUT_RTSP) {
#if STEREO_HAVE_RTSP_SERVER
        if (open_rtsp(g, err, errlen) == 0)
            return 0;
#else
        snprintf(err, errlen, "rtsp:// outputs are not built in this binary (./configure found "
                 "no gstreamer-rtsp-server-1.0: libgstrtspserver-1.0-dev)");
#endif
        output_gst_backend.close(g);
        return -1;
    }
    char desc[OUTPUT_URI_MAX + 1024], enc[512];
    if (u->kind == OUT_RTP) {
        encoder_description(u, enc, sizeof enc);
        snprintf(desc, sizeof desc, "appsrc name=src ! %s ! rtph264pay pt=96 config-interval=1 ! "
                 "udpsink host=%s port=%d sync=false async=false", enc, u->target, u->port);
    } else {
        snprintf(desc, sizeof desc, "%s", u->target);
    }
    GError *e = NULL;
    g->pipeline = gst_parse_launch(desc, &e);
    if (!g->pipeline || e) {
        snprintf(err, errlen, "%s", e ? e->message : "the pipeline does not parse");
        g_clear_error(&e);
        output_gst_backend.close(g);
        return -1;
    }
    if (u->kind == OUT_GST) {
        checked_files c = {.err = err, .errlen = errlen};
        c.n = output_gst_files(u->target, c.f, OUTPUT_GST_FILES_MAX, err, errlen);
        if (c.n < 0 || each_element(g->pipeline, location_checked, &c) ||
            each_element(g->pipeline, unbounded_queue, &c)) {
            output_gst_backend.close(g);
            return -1;
        }
    }
    each_element(g->pipeline, watch_queue, g);
    g->src = find_appsrc(g->pipeline);
    if (!g->src) {
        snprintf(err, errlen, "no appsrc in the pipeline");
        output_gst_backend.close(g);
        return -1;
    }
    configure_src(g->src, s->width, s->height);
    g->bus = gst_element_get_bus(g->pipeline);
    if (gst_element_set_state(g->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        if (!bus_error(g, err, errlen))
            snprintf(err, errlen, "the pipeline does not start");
        output_gst_backend.close(g);
        return -1;
    }
    return 0;
}

static int gst_write(void *state, const output_frame *f, char *err, size_t errlen)
{
    gst_output *g = state;
    if (bus_error(g, err, errlen))
        return -1;
    g_mutex_lock(&g->lock);
    GstAppSrc *src = g->src ? GST_APP_SRC(gst_object_ref(g->src)) : NULL;
    g_mutex_unlock(&g->lock);
    if (!src) /* rtsp: nobody watches */
        return 1;
    int rc = 1;
    if (gst_app_src_get_current_level_buffers(src) < QUEUE_MAX) { /* else: behind, dropped */
        size_t n = (size_t)f->width * f->height * 4;
        GstBuffer *b = gst_buffer_new_allocate(NULL, n, NULL);
        gst_buffer_fill(b, 0, f->rgba, n);
        GstFlowReturn fr = gst_app_src_push_buffer(src, b); /* takes b */
        rc = fr == GST_FLOW_OK ? 0 : g->uri.kind == OUT_RTSP ? 1 : -1;
        if (rc < 0)
            snprintf(err, errlen, "appsrc: %s", gst_flow_get_name(fr));
    }
    gst_object_unref(src);
    return rc;
}

/* The end of the stream (muxers finish their files), within EOS_WAIT_NS. Frames still queued
 * when it does not come in time (a sink behind) are thrown away with the pipeline: counted. An
 * error on the bus that no write saw (it came after the last frame) is returned: -1. */
static int gst_finish(void *state, char *err, size_t errlen)
{
    gst_output *g = state;
    if (!g->pipeline || !g->src || !g->bus || __atomic_load_n(&g->finished, __ATOMIC_ACQUIRE))
        return 0;
    int failed = bus_error(g, err, errlen);
    gst_app_src_end_of_stream(g->src);
    GstMessage *m = failed ? NULL
                           : gst_bus_timed_pop_filtered(g->bus, EOS_WAIT_NS,
                                                        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    int ended = m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS;
    if (m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        error_text(m, err, errlen);
        failed = 1;
    }
    if (m)
        gst_message_unref(m);
    uint64_t left = 0;
    if (!ended) {
        left = gst_app_src_get_current_level_buffers(g->src);
        for (int i = 0; i < g->nqueue; i++)
            left += queue_level(g->queue[i].queue);
    }
    g->left = left;
    g->leaked_final = leaked(g);
    __atomic_store_n(&g->finished, 1, __ATOMIC_RELEASE);
    gst_element_set_state(g->pipeline, GST_STATE_NULL);
    return failed ? -1 : 0;
}

static uint64_t gst_lost(void *state)
{
    gst_output *g = state;
    if (__atomic_load_n(&g->finished, __ATOMIC_ACQUIRE))
        return g->leaked_final + g->left;
    return g->pipeline ? leaked(g) : 0;
}

static void gst_stats(void *state, char *buf, size_t len)
{
    gst_output *g = state;
    int fin = __atomic_load_n(&g->finished, __ATOMIC_ACQUIRE);
    uint64_t leak = fin ? g->leaked_final : g->pipeline ? leaked(g) : 0;
    uint64_t left = fin ? g->left : 0;
    int n = 0;
    if (len)
        buf[0] = '\0';
    if (leak)
        n = snprintf(buf, len, ", %llu of them leaked by its queues", (unsigned long long)leak);
    if (left && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", %llu of them still queued at the end (its sink "
                 "was behind)", (unsigned long long)left);
}

static void gst_close(void *state)
{
    gst_output *g = state;
    gst_finish(g, NULL, 0); /* when the run ended before its thread did (an open that failed):
                               nothing is left to report */
    if (g->pipeline) {
        gst_element_set_state(g->pipeline, GST_STATE_NULL);
        gst_object_unref(g->pipeline);
    }
    if (g->bus)
        gst_object_unref(g->bus);
    if (g->loop) {
        /* quit from inside the loop: g_main_loop_quit before the thread has entered
         * g_main_loop_run is lost (run sets the loop running again) and the join waits for
         * ever; a source on the loop's context is dispatched once it runs, whenever that is */
        if (g->loop_thread) {
            GSource *quit = g_idle_source_new();
            g_source_set_callback(quit, quit_loop, g->loop, NULL);
            g_source_attach(quit, g->context);
            g_source_unref(quit);
            g_thread_join(g->loop_thread);
        }
        g_main_loop_unref(g->loop);
    }
    if (g->server_id && g->context) {
        GSource *src = g_main_context_find_source_by_id(g->context, g->server_id);
        if (src)
            g_source_destroy(src);
    }
    if (g->server)
        g_object_unref(g->server);
    if (g->context)
        g_main_context_unref(g->context);
    if (g->src)
        gst_object_unref(g->src);
    for (int i = 0; i < g->nqueue; i++)
        gst_object_unref(g->queue[i].queue);
    g_mutex_clear(&g->lock);
    free(g);
}

#else /* no GStreamer */

static int gst_open(const output_uri *u, const output_setup *s, void **state, char *err,
                    size_t errlen)
{
    snprintf(err, errlen, "%s:// outputs are not built in this binary (./configure found no "
             "GStreamer)", output_uri_kind_name(u->kind));
    return -1;
}

static int gst_write(void *state, const output_frame *f, char *err, size_t errlen) { return -1; }
static void gst_close(void *state) {}
#define gst_stats NULL
#define gst_finish NULL
#define gst_lost NULL
#endif

const output_backend output_gst_backend = {
    OUT_GST, OUTPUT_NEEDS_COLOR, gst_open, gst_write, gst_stats, NULL, gst_close, gst_finish,
    gst_lost,
};
