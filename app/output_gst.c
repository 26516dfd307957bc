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

/* The first error on the bus since the last call, into err: 1, else 0. */
static int bus_error(gst_output *g, char *err, size_t errlen)
{
    if (!g->bus)
        return 0;
    GstMessage *m;
    int got = 0;
    while ((m = gst_bus_pop_filtered(g->bus, GST_MESSAGE_ERROR))) {
        if (!got) {
            GError *e = NULL;
            gst_message_parse_error(m, &e, NULL);
            snprintf(err, errlen, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)),
                     e ? e->message : "error");
            g_clear_error(&e);
            got = 1;
        }
        gst_message_unref(m);
    }
    return got;
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

static void gst_close(void *state)
{
    gst_output *g = state;
    if (g->pipeline && g->src && g->bus) { /* end of stream first: muxers finish their files */
        gst_app_src_end_of_stream(g->src);
        GstMessage *m = gst_bus_timed_pop_filtered(g->bus, EOS_WAIT_NS,
                                                   GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
        if (m)
            gst_message_unref(m);
    }
    if (g->pipeline) {
        gst_element_set_state(g->pipeline, GST_STATE_NULL);
        gst_object_unref(g->pipeline);
    }
    if (g->bus)
        gst_object_unref(g->bus);
    if (g->loop) {
        g_main_loop_quit(g->loop);
        if (g->loop_thread)
            g_thread_join(g->loop_thread);
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
#endif

const output_backend output_gst_backend = {
    OUT_GST, OUTPUT_NEEDS_COLOR, gst_open, gst_write, NULL, NULL, gst_close,
};
