/* SPDX-License-Identifier: Apache-2.0 */
/* output_web.c — http://@:PORT/?token=SECRET: a web page of the live view that any browser
 * opens, served by the app itself (docs/usage.md, Outputs).
 *
 *   /                  the page (index.html of the served folder, build/web/ beside the program)
 *   /ws                a WebSocket: one binary message per frame (below), the page's "next"
 *                      asks for the following one
 *   /frame.jpg         the next colour-mapped disparity, JPEG        (for plain HTTP clients:
 *   /left.jpg          the next rectified left view, JPEG             each waits, at most
 *   /disparity.bin     its 16-bit disparity (below), deflated         WAIT_FRAME_MS, for the
 *   /stats.json        the overlay numbers of that frame              next frame encoded;
 *                                                                     ?after=N: one newer than N)
 *   /three.min.js      Debian's three.js (libjs-three) for the 3D view, from its fixed place
 *   /NAME              another file of the served folder (letters, digits, - _ . only)
 *
 * Transport: libsoup-3.0, GLib's HTTP server, because it has the WebSocket server in the same
 * library (handshake, framing, message size limits) and runs on a GLib main loop as the RTSP
 * server of output_gst.c does; libmicrohttpd would need a WebSocket layer of our own.
 *
 * Threads. The output's thread (write) encodes each frame it takes once: both JPEGs
 * (libturbojpeg) and the disparity deflated (zlib), into one packet, and leaves the packet as
 * the newest; the server runs in a thread of its own (its GMainContext) and hands the newest
 * packet to each client that asked for one. A client holds at most one packet not yet
 * acknowledged: a WebSocket client gets the next frame after it says "next" (credit of one), so
 * a slow client drops frames for itself only, and one that never reads holds one packet, never
 * more. Nothing is encoded while nobody can take a frame (a write then is a drop, as rtsp://
 * counts a frame nobody watches).
 *
 * Packet: u32 little endian H, H bytes of JSON (frame number, sizes, the overlay numbers, the
 * camera, the capture time on the wall clock: capture_unix_ms, which the page compares with
 * its own clock to show how long after capture it painted the frame), then the colour JPEG,
 * the left JPEG and the deflated disparity (zlib format: int16 little endian, 16 * d, -32768 =
 * no match), their lengths in the JSON.
 *
 * Listening: @ is every interface, IPv4 and IPv6 (GLib's listener: one IPv6 socket that also
 * takes IPv4 where the system allows, else one of each); an address (127.0.0.1, [::1], [::])
 * only that one. https:// wraps each accepted connection in TLS (GIO's, glib-networking) with
 * the certificate and key of ?cert=&key=, checked when the output opens by a handshake of the
 * pair with itself (GIO accepts a key that is not the certificate's until a client fails).
 *
 * Safety. It listens on the address the URI names (@: every interface). With ?token= every
 * request must carry token=SECRET (else 403). Paths are taken raw (never decoded): '%', '..',
 * a second '/' or a leading '.' are not served; files are opened beside each other in the
 * served folder without following a symlink (O_NOFOLLOW), regular files only. Bounded: the
 * connections (MAX_CONNECTIONS, more are closed at once), the time one request may take
 * (REQUEST_DEADLINE_NS: a client that sends its request slowly is cut off), request headers
 * (libsoup's own limit), request bodies (never kept), WebSocket messages (MAX_WS_MESSAGE).
 *
 * Without libsoup-3.0 (./configure found none) the output is refused when opened, saying so.
 */
#include "output_backend.h"

#include <stdio.h>

#if STEREO_HAVE_SOUP
#include <errno.h>
#include <fcntl.h>
#include <libsoup/soup.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_CONNECTIONS 16            /* open sockets, WebSockets among them */
#define MAX_WS_CLIENTS 8
#define MAX_WS_MESSAGE 64             /* bytes of a message from the page ("next") */
#define REQUEST_DEADLINE_NS (10 * 1000000000LL) /* from accept to the response written */
#define WAIT_FRAME_MS 2000            /* ?after=N: at most this long for a newer frame */
#define MAX_FILE_BYTES (8 << 20)      /* a file of the served folder (three.min.js: 0.8 MB) */
#define JPEG_QUALITY 80
#define THREE_JS "/usr/share/javascript/three/three.min.js" /* libjs-three */
#define TLS_CHECK_TIMEOUT_S 10      /* the certificate's handshake with itself at open */
#define STATS_MAX 1024

typedef struct web_output web_output;

typedef struct {
    GBytes *all;                  /* the packet */
    uint64_t number;
    size_t json_off, json_len, color_off, color_len, left_off, left_len, disp_off, disp_len;
} packet;

typedef struct {                  /* a connection: the loop thread's only */
    GSocketConnection *conn;      /* weak: gone when libsoup (or the WebSocket) lets go */
    int64_t deadline_ns;
    int websocket;                /* upgraded: no deadline (its traffic is bounded by credit) */
    web_output *owner;
    GTlsConnection *tls;          /* https: its TLS connection while the handshake runs */
} conn_rec;

typedef struct {
    SoupWebsocketConnection *ws;
    uint64_t sent;                /* the last frame number sent */
    int credit;                   /* 1: it asked for the next frame */
    web_output *owner;
} ws_client;

typedef struct {                  /* an HTTP request paused until a frame newer than after */
    SoupServerMessage *msg;
    uint64_t after;
    int what;
    int64_t deadline_ns;
} waiter;

enum { PART_COLOR, PART_LEFT, PART_DISP, PART_STATS };

static void waiter_free(gpointer p);
static void on_waiter_gone(SoupServerMessage *msg, gpointer user);

struct web_output {
    output_uri uri;
    output_setup setup;
    char folder[600];             /* the served folder */
    int folder_fd;
    /* the loop thread */
    GMainContext *context;
    GMainLoop *loop;
    GThread *loop_thread;
    SoupServer *server;
    GSocketService *service;
    int port;                     /* the one bound (port 0: the one the system chose) */
    GPtrArray *conns, *clients, *waiters;
    GSource *tick;
    GTlsCertificate *cert;        /* https */
    GCancellable *cancel;         /* handshakes in progress, cancelled at close */
    int handshakes;               /* in progress */
    /* shared, under lock */
    GMutex lock;
    packet newest;                /* .all NULL: none yet */
    char stats[STATS_MAX + 2];    /* the newest frame's overlay numbers, JSON */
    int dispatch_pending;         /* a dispatch of the newest is queued on the loop */
    /* atomics: whether anyone can take a frame now */
    int want;                     /* WebSocket clients with credit + waiting requests */
    uint64_t ws_sent, bytes_sent, refused; /* counters for the stats */
    int nclients;
    /* the output's thread */
    tjhandle tj;
    unsigned char *zbuf;
    uLongf zcap;
    uint64_t first_number, last_number, frames;
    int64_t first_done_ns, last_done_ns;
    double stage_sum, latency_sum, encode_sum;
    uint64_t latency_n;           /* frames encoded */
    uint64_t win_number;          /* the 1 s window of the overlay numbers */
    int64_t win_done_ns;
    double win_stage_sum, win_latency_sum;
    uint64_t win_n, win_latency_n;
    double fps, stage_ms, latency_ms; /* of the last full window */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A CLOCK_MONOTONIC time on the wall clock (CLOCK_REALTIME), in ms since 1970: what a browser's
 * Date.now() on the same machine compares with. */
static double unix_ms_of(int64_t mono_ns)
{
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    int64_t now = now_ns();
    return (double)rt.tv_sec * 1e3 + (double)rt.tv_nsec * 1e-6 - (double)(now - mono_ns) * 1e-6;
}

static void packet_clear(packet *p)
{
    if (p->all)
        g_bytes_unref(p->all);
    memset(p, 0, sizeof *p);
}

/* ---- the loop thread ------------------------------------------------------------------------ */

static void update_want(web_output *w)
{
    int n = (int)w->waiters->len;
    for (guint i = 0; i < w->clients->len; i++)
        n += ((ws_client *)g_ptr_array_index(w->clients, i))->credit;
    __atomic_store_n(&w->want, n, __ATOMIC_RELEASE);
    __atomic_store_n(&w->nclients, (int)w->clients->len, __ATOMIC_RELAXED);
}

static void ws_send(web_output *w, ws_client *c, const packet *p)
{
    if (soup_websocket_connection_get_state(c->ws) != SOUP_WEBSOCKET_STATE_OPEN)
        return;
    soup_websocket_connection_send_message(c->ws, SOUP_WEBSOCKET_DATA_BINARY, p->all);
    c->sent = p->number;
    c->credit = 0;
    __atomic_add_fetch(&w->ws_sent, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&w->bytes_sent, g_bytes_get_size(p->all), __ATOMIC_RELAXED);
}

/* The newest packet, with a reference (all NULL: none yet). */
static packet newest_packet(web_output *w)
{
    g_mutex_lock(&w->lock);
    packet p = w->newest;
    if (p.all)
        g_bytes_ref(p.all);
    g_mutex_unlock(&w->lock);
    return p;
}

static void respond_part(web_output *w, SoupServerMessage *msg, const packet *p, int what)
{
    static const char *const types[] = {"image/jpeg", "image/jpeg", "application/octet-stream",
                                        "application/json"};
    size_t off = what == PART_COLOR ? p->color_off : what == PART_LEFT ? p->left_off
               : what == PART_DISP  ? p->disp_off  : p->json_off;
    size_t len = what == PART_COLOR ? p->color_len : what == PART_LEFT ? p->left_len
               : what == PART_DISP  ? p->disp_len  : p->json_len;
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)p->number);
    soup_message_headers_replace(h, "X-Frame-Number", num);
    soup_message_headers_replace(h, "Cache-Control", "no-store");
    if (what == PART_DISP) { /* HTTP's "deflate" is the zlib format: browsers inflate it */
        char size[32];
        snprintf(size, sizeof size, "%dx%d", w->setup.width, w->setup.height);
        soup_message_headers_replace(h, "Content-Encoding", "deflate");
        soup_message_headers_replace(h, "X-Size", size);
    }
    GBytes *part = g_bytes_new_from_bytes(p->all, off, len);
    soup_server_message_set_response(msg, types[what], SOUP_MEMORY_COPY, NULL, 0);
    soup_message_body_append_bytes(soup_server_message_get_response_body(msg), part);
    g_bytes_unref(part);
    soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
    __atomic_add_fetch(&w->bytes_sent, len, __ATOMIC_RELAXED);
}

/* The newest packet to the clients and requests waiting for it. */
static gboolean dispatch_newest(gpointer user)
{
    web_output *w = user;
    g_mutex_lock(&w->lock);
    w->dispatch_pending = 0;
    g_mutex_unlock(&w->lock);
    packet p = newest_packet(w);
    if (!p.all)
        return G_SOURCE_REMOVE;
    for (guint i = 0; i < w->clients->len; i++) {
        ws_client *c = g_ptr_array_index(w->clients, i);
        if (c->credit && c->sent < p.number)
            ws_send(w, c, &p);
    }
    for (guint i = 0; i < w->waiters->len;) {
        waiter *q = g_ptr_array_index(w->waiters, i);
        if (q->after < p.number) {
            g_ptr_array_steal_index_fast(w->waiters, i);
            g_signal_handlers_disconnect_matched(q->msg, G_SIGNAL_MATCH_FUNC, 0, 0, NULL,
                                                 (gpointer)on_waiter_gone, NULL);
            respond_part(w, q->msg, &p, q->what);
            soup_server_message_unpause(q->msg);
            waiter_free(q);
        } else {
            i++;
        }
    }
    g_bytes_unref(p.all);
    update_want(w);
    return G_SOURCE_REMOVE;
}

/* Once a second: requests that waited too long for a frame (503), connections past their
 * deadline (shut down: libsoup then sees the end and lets go of them). */
static gboolean on_tick(gpointer user)
{
    web_output *w = user;
    int64_t now = now_ns();
    for (guint i = 0; i < w->waiters->len;) {
        waiter *q = g_ptr_array_index(w->waiters, i);
        if (now >= q->deadline_ns) {
            g_ptr_array_steal_index_fast(w->waiters, i);
            g_signal_handlers_disconnect_matched(q->msg, G_SIGNAL_MATCH_FUNC, 0, 0, NULL,
                                                 (gpointer)on_waiter_gone, NULL);
            soup_server_message_set_status(q->msg, SOUP_STATUS_SERVICE_UNAVAILABLE,
                                           "no new frame");
            soup_server_message_unpause(q->msg);
            waiter_free(q);
        } else {
            i++;
        }
    }
    for (guint i = 0; i < w->conns->len; i++) {
        conn_rec *r = g_ptr_array_index(w->conns, i);
        if (r->conn && !r->websocket && now >= r->deadline_ns) {
            g_socket_shutdown(g_socket_connection_get_socket(r->conn), TRUE, TRUE, NULL);
            r->deadline_ns = INT64_MAX; /* once */
        }
    }
    update_want(w);
    return G_SOURCE_CONTINUE;
}

static void conn_gone(gpointer user, GObject *where_the_object_was)
{
    conn_rec *r = user;
    r->conn = NULL; /* its weak reference is spent */
    g_ptr_array_remove_fast(r->owner->conns, r); /* frees r */
}

static void conn_rec_free(gpointer p)
{
    conn_rec *r = p;
    if (r->conn)
        g_object_weak_unref(G_OBJECT(r->conn), conn_gone, r);
    g_free(r);
}

/* The connection's stream (itself, or its TLS connection) to libsoup. */
static void accept_stream(web_output *w, GIOStream *stream, GSocketConnection *conn)
{
    GSocketAddress *local = g_socket_connection_get_local_address(conn, NULL);
    GSocketAddress *remote = g_socket_connection_get_remote_address(conn, NULL);
    if (local && remote)
        soup_server_accept_iostream(w->server, stream, local, remote, NULL);
    else /* gone already (reset before it was accepted) */
        g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
    if (local)
        g_object_unref(local);
    if (remote)
        g_object_unref(remote);
}

/* https: the TLS handshake of a new connection done (or failed: a client that does not trust
 * the certificate, a plain-HTTP request, the deadline's shutdown, the output closing). */
static void on_handshake(GObject *source, GAsyncResult *res, gpointer user)
{
    conn_rec *r = user; /* alive: the TLS connection holds r->conn, so conn_gone has not run */
    web_output *w = r->owner;
    GTlsConnection *tls = G_TLS_CONNECTION(source);
    int ok = g_tls_connection_handshake_finish(tls, res, NULL);
    r->tls = NULL;
    w->handshakes--;
    if (ok && !g_cancellable_is_cancelled(w->cancel))
        accept_stream(w, G_IO_STREAM(tls), r->conn);
    else /* the socket itself: closing the TLS stream would try to say goodbye first */
        g_io_stream_close(G_IO_STREAM(r->conn), NULL, NULL);
    g_object_unref(tls);
}

/* A new connection: refused (closed at once) beyond MAX_CONNECTIONS, else handed to libsoup
 * with a deadline (https: once its TLS handshake is done, the deadline covering it). */
static gboolean on_incoming(GSocketService *service, GSocketConnection *conn, GObject *source,
                            gpointer user)
{
    web_output *w = user;
    if (w->conns->len >= MAX_CONNECTIONS || g_cancellable_is_cancelled(w->cancel)) {
        __atomic_add_fetch(&w->refused, 1, __ATOMIC_RELAXED);
        g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
        return TRUE;
    }
    conn_rec *r = g_new0(conn_rec, 1);
    r->conn = conn;
    r->owner = w;
    r->deadline_ns = now_ns() + REQUEST_DEADLINE_NS;
    g_object_weak_ref(G_OBJECT(conn), conn_gone, r);
    g_ptr_array_add(w->conns, r);
    if (!w->cert) {
        accept_stream(w, G_IO_STREAM(conn), conn);
        return TRUE;
    }
    GIOStream *tls = g_tls_server_connection_new(G_IO_STREAM(conn), w->cert, NULL);
    if (!tls) {
        g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
        return TRUE;
    }
    static const char *const alpn[] = {"http/1.1", NULL};
    g_tls_connection_set_advertised_protocols(G_TLS_CONNECTION(tls), alpn);
    g_tls_connection_set_require_close_notify(G_TLS_CONNECTION(tls), FALSE);
    r->tls = G_TLS_CONNECTION(tls);
    w->handshakes++;
    g_tls_connection_handshake_async(r->tls, G_PRIORITY_DEFAULT, w->cancel, on_handshake, r);
    return TRUE;
}

/* Constant time, so that the answer's timing does not tell how much of a guess was right. */
static int token_ok(const web_output *w, GHashTable *query)
{
    if (!w->uri.token[0])
        return 1;
    const char *t = query ? g_hash_table_lookup(query, "token") : NULL;
    if (!t)
        return 0;
    size_t n = strlen(w->uri.token), m = strlen(t);
    unsigned diff = n != m;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)w->uri.token[i] ^ (unsigned char)(i < m ? t[i] : 0);
    return diff == 0;
}

/* A waiting request whose client went away: dropped, never answered (libsoup 3.2 must not be
 * asked to resume a message whose connection is gone). */
static void on_waiter_gone(SoupServerMessage *msg, gpointer user)
{
    web_output *w = user;
    for (guint i = 0; i < w->waiters->len; i++)
        if (((waiter *)g_ptr_array_index(w->waiters, i))->msg == msg) {
            g_ptr_array_remove_index_fast(w->waiters, i); /* frees it */
            break;
        }
    update_want(w);
}

static void respond_text(SoupServerMessage *msg, guint status, const char *text)
{
    soup_server_message_set_status(msg, status, NULL);
    soup_server_message_set_response(msg, "text/plain; charset=utf-8", SOUP_MEMORY_COPY, text,
                                     strlen(text));
}

/* A name of the served folder: letters, digits, '-', '_' and '.', not starting with '.' (so
 * never "." or ".."), no '/', no '%' (paths are never decoded: an encoded form is no name). */
static int servable_name(const char *name)
{
    if (!name[0] || name[0] == '.' || strlen(name) > 64)
        return 0;
    for (const char *c = name; *c; c++)
        if (!g_ascii_isalnum(*c) && *c != '-' && *c != '_' && *c != '.')
            return 0;
    return 1;
}

static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return "application/octet-stream";
    if (!strcmp(dot, ".html"))
        return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js"))
        return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css"))
        return "text/css; charset=utf-8";
    if (!strcmp(dot, ".png"))
        return "image/png";
    return "application/octet-stream";
}

/* A regular file: dirfd and name (a name of the folder: never through a symlink), or a fixed
 * absolute path of the app's (dirfd -1: Debian's own links followed). */
static void respond_file(web_output *w, SoupServerMessage *msg, int dirfd, const char *name)
{
    int fd = dirfd >= 0 ? openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
                        : open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a fixed path */
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE_BYTES) {
        if (fd >= 0)
            close(fd);
        respond_text(msg, SOUP_STATUS_NOT_FOUND, "not found\n");
        return;
    }
    char *buf = g_malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
    soup_server_message_set_response(msg, content_type(name), SOUP_MEMORY_TAKE, buf, got);
    __atomic_add_fetch(&w->bytes_sent, got, __ATOMIC_RELAXED);
}

static void on_request(SoupServer *server, SoupServerMessage *msg, const char *path,
                       GHashTable *query, gpointer user)
{
    web_output *w = user;
    const char *method = soup_server_message_get_method(msg);
    if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD) {
        respond_text(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "GET only\n");
        return;
    }
    if (!token_ok(w, query)) {
        respond_text(msg, SOUP_STATUS_FORBIDDEN, "forbidden: this page needs ?token=...\n");
        return;
    }
    if (!path || path[0] != '/') {
        respond_text(msg, SOUP_STATUS_BAD_REQUEST, "bad path\n");
        return;
    }
    const char *name = path + 1;
    static const char *const parts[] = {"frame.jpg", "left.jpg", "disparity.bin", "stats.json"};
    for (int what = 0; what < 4; what++) {
        if (strcmp(name, parts[what]))
            continue;
        /* frames are encoded only while someone waits for one: without ?after=N a request
         * waits for the next frame, so that a client polling now and then never sees a frame
         * encoded long ago, and never makes the output encode frames nobody takes */
        const char *a = query ? g_hash_table_lookup(query, "after") : NULL;
        char *end = NULL;
        packet p = newest_packet(w);
        uint64_t after = a ? g_ascii_strtoull(a, &end, 10) : p.number;
        if (a && (!*a || *end)) {
            respond_text(msg, SOUP_STATUS_BAD_REQUEST, "after=N: a frame number\n");
            if (p.all)
                g_bytes_unref(p.all);
            return;
        }
        if (p.all && p.number > after) {
            respond_part(w, msg, &p, what);
        } else if (w->waiters->len >= MAX_CONNECTIONS) {
            respond_text(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, "too many waiting\n");
        } else { /* the next frame answers it (dispatch_newest), or on_tick after the wait */
            waiter *q = g_new0(waiter, 1);
            q->msg = g_object_ref(msg);
            q->after = after;
            q->what = what;
            q->deadline_ns = now_ns() + WAIT_FRAME_MS * 1000000LL;
            g_signal_connect(msg, "disconnected", G_CALLBACK(on_waiter_gone), w);
            g_ptr_array_add(w->waiters, q);
            soup_server_message_pause(msg);
            update_want(w);
        }
        if (p.all)
            g_bytes_unref(p.all);
        return;
    }
    if (!strcmp(name, "three.min.js"))
        respond_file(w, msg, -1, THREE_JS);
    else if (!strcmp(name, "ws"))
        respond_text(msg, SOUP_STATUS_BAD_REQUEST, "/ws is a WebSocket\n");
    else if (!name[0])
        respond_file(w, msg, w->folder_fd, "index.html");
    else if (servable_name(name))
        respond_file(w, msg, w->folder_fd, name);
    else
        respond_text(msg, SOUP_STATUS_NOT_FOUND, "not found\n");
}

/* Request bodies are never needed: not kept, whatever their size. */
static void on_request_started(SoupServer *server, SoupServerMessage *msg, gpointer user)
{
    soup_message_body_set_accumulate(soup_server_message_get_request_body(msg), FALSE);
}

static void ws_client_free(gpointer p)
{
    ws_client *c = p;
    g_signal_handlers_disconnect_by_data(c->ws, c);
    if (soup_websocket_connection_get_state(c->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close(c->ws, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
    g_object_unref(c->ws);
    g_free(c);
}

static void on_ws_message(SoupWebsocketConnection *ws, gint type, GBytes *message, gpointer user)
{
    ws_client *c = user;
    gsize n = 0;
    const char *d = g_bytes_get_data(message, &n);
    if (type != SOUP_WEBSOCKET_DATA_TEXT || n != 4 || memcmp(d, "next", 4))
        return; /* nothing else is asked of the server */
    c->credit = 1;
    packet p = newest_packet(c->owner);
    if (p.all && p.number > c->sent)
        ws_send(c->owner, c, &p);
    if (p.all)
        g_bytes_unref(p.all);
    update_want(c->owner);
}

static void on_ws_closed(SoupWebsocketConnection *ws, gpointer user)
{
    ws_client *c = user;
    web_output *w = c->owner;
    g_ptr_array_remove_fast(w->clients, c); /* frees c */
    update_want(w);
}

/* /ws: the token and the client count are checked before the handshake (a status set here
 * ends the request before libsoup upgrades it). */
static void on_ws_request(SoupServer *server, SoupServerMessage *msg, const char *path,
                          GHashTable *query, gpointer user)
{
    web_output *w = user;
    if (!token_ok(w, query))
        respond_text(msg, SOUP_STATUS_FORBIDDEN, "forbidden: this page needs ?token=...\n");
    else if (w->clients->len >= MAX_WS_CLIENTS)
        respond_text(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, "too many viewers\n");
}

/* Whether stream is conn or wraps it, a few layers down: libsoup hands the WebSocket its own
 * stream around the one it was given ("base-iostream"), and that is a TLS connection around
 * the socket's with https ("base-io-stream"). */
static int stream_wraps(GIOStream *stream, GSocketConnection *conn)
{
    GIOStream *s = stream;
    for (int depth = 0; s && depth < 4; depth++) {
        if (s == G_IO_STREAM(conn))
            return 1;
        GParamSpec *base = g_object_class_find_property(G_OBJECT_GET_CLASS(s), "base-iostream");
        if (!base)
            base = g_object_class_find_property(G_OBJECT_GET_CLASS(s), "base-io-stream");
        if (!base || !(base->flags & G_PARAM_READABLE))
            return 0;
        GIOStream *under = NULL;
        g_object_get(s, base->name, &under, NULL);
        if (under)
            g_object_unref(under); /* s holds it */
        s = under;
    }
    return 0;
}

static void on_ws(SoupServer *server, SoupServerMessage *msg, const char *path,
                  SoupWebsocketConnection *ws, gpointer user)
{
    web_output *w = user;
    GIOStream *s = soup_websocket_connection_get_io_stream(ws);
    for (guint i = 0; i < w->conns->len; i++) { /* its connection: no deadline from now on */
        conn_rec *r = g_ptr_array_index(w->conns, i);
        if (r->conn && stream_wraps(s, r->conn))
            r->websocket = 1;
    }
    soup_websocket_connection_set_max_incoming_payload_size(ws, MAX_WS_MESSAGE);
    ws_client *c = g_new0(ws_client, 1);
    c->ws = g_object_ref(ws);
    c->owner = w;
    g_signal_connect(ws, "message", G_CALLBACK(on_ws_message), c);
    g_signal_connect(ws, "closed", G_CALLBACK(on_ws_closed), c);
    g_ptr_array_add(w->clients, c);
    update_want(w);
}

static void waiter_free(gpointer p)
{
    waiter *q = p;
    g_signal_handlers_disconnect_matched(q->msg, G_SIGNAL_MATCH_FUNC, 0, 0, NULL,
                                         (gpointer)on_waiter_gone, NULL);
    g_object_unref(q->msg);
    g_free(q);
}

static gpointer run_loop(gpointer user)
{
    web_output *w = user;
    g_main_context_push_thread_default(w->context);
    g_main_loop_run(w->loop);
    g_main_context_pop_thread_default(w->context);
    return NULL;
}

static gboolean quit_loop(gpointer user)
{
    web_output *w = user;
    /* the server's state is the loop thread's: torn down here, where it lives */
    if (w->service) {
        g_socket_service_stop(w->service);
        g_socket_listener_close(G_SOCKET_LISTENER(w->service));
    }
    if (w->tick)
        g_source_destroy(w->tick);
    g_cancellable_cancel(w->cancel); /* TLS handshakes in progress end (web_close waits) */
    while (w->waiters->len) {
        waiter *q = g_ptr_array_steal_index_fast(w->waiters, 0);
        soup_server_message_set_status(q->msg, SOUP_STATUS_SERVICE_UNAVAILABLE, "stopping");
        soup_server_message_unpause(q->msg);
        waiter_free(q);
    }
    g_ptr_array_set_size(w->clients, 0);
    if (w->server)
        soup_server_disconnect(w->server);
    g_main_loop_quit(w->loop);
    return G_SOURCE_REMOVE;
}

/* ---- the output's thread -------------------------------------------------------------------- */

static void web_close(void *state);

static gboolean tls_accept_any(GTlsConnection *c, GTlsCertificate *peer,
                               GTlsCertificateFlags errors, gpointer user)
{
    return TRUE; /* the check below is of the pair, not of who signed the certificate */
}

typedef struct {
    GIOStream *stream;
    char error[256];
} tls_client;

static gpointer tls_client_side(gpointer user)
{
    tls_client *c = user;
    GError *e = NULL;
    GIOStream *tls = g_tls_client_connection_new(c->stream, NULL, &e);
    if (tls) {
        g_signal_connect(tls, "accept-certificate", G_CALLBACK(tls_accept_any), NULL);
        g_tls_connection_handshake(G_TLS_CONNECTION(tls), NULL, &e);
    }
    if (e)
        snprintf(c->error, sizeof c->error, "%s", e->message);
    g_clear_error(&e);
    if (tls)
        g_object_unref(tls);
    g_io_stream_close(c->stream, NULL, NULL); /* the server side, if it still waits, ends */
    return NULL;
}

static GIOStream *stream_of_fd(int fd)
{
    GSocket *sock = g_socket_new_from_fd(fd, NULL);
    if (!sock) {
        close(fd);
        return NULL;
    }
    g_socket_set_timeout(sock, TLS_CHECK_TIMEOUT_S); /* never a hang */
    GIOStream *st = G_IO_STREAM(g_socket_connection_factory_create_connection(sock));
    g_object_unref(sock);
    return st;
}

/* https: the certificate and key of the URI, loaded and checked by a TLS handshake of the pair
 * with itself over a socket pair (GIO loads a key that is not the certificate's, and the
 * first browser would fail). 0, or -1 with what is wrong, naming the file, in err. */
static int load_tls(web_output *w, const output_uri *u, char *err, size_t errlen)
{
    if (!g_tls_backend_supports_tls(g_tls_backend_get_default())) {
        snprintf(err, errlen, "https:// needs GIO's TLS support, which is not installed "
                 "(glib-networking)");
        return -1;
    }
    const char *files[2] = {u->cert, u->key};
    const char *what[2] = {"certificate", "private key"};
    const char *key[2] = {"cert", "key"};
    const char *mark[2] = {"-----BEGIN CERTIFICATE-----", "PRIVATE KEY-----"};
    const char *block[2] = {"-----BEGIN CERTIFICATE-----",
                            "-----BEGIN PRIVATE KEY----- or -----BEGIN RSA PRIVATE KEY-----"};
    for (int i = 0; i < 2; i++) {
        gchar *text = NULL;
        gsize len = 0;
        GError *e = NULL;
        if (!g_file_get_contents(files[i], &text, &len, &e)) {
            snprintf(err, errlen, "https: %s=%s (the %s) cannot be read: %s", key[i],
                     files[i], what[i], e->message);
            g_error_free(e);
            return -1;
        }
        int found = g_strstr_len(text, (gssize)len, mark[i]) != NULL;
        g_free(text);
        if (!found) {
            snprintf(err, errlen, "https: %s=%s holds no PEM %s (%s)", key[i], files[i],
                     what[i], block[i]);
            return -1;
        }
    }
    GError *e = NULL;
    w->cert = g_tls_certificate_new_from_files(u->cert, u->key, &e);
    if (!w->cert) {
        snprintf(err, errlen, "https: cert=%s with key=%s: %s", u->cert, u->key, e->message);
        g_error_free(e);
        return -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "https: checking the certificate: socketpair: %s", strerror(errno));
        return -1;
    }
    GIOStream *mine = stream_of_fd(sv[0]);
    tls_client c = {stream_of_fd(sv[1]), ""};
    if (!mine || !c.stream) {
        snprintf(err, errlen, "https: checking the certificate: no socket");
        if (mine)
            g_object_unref(mine);
        if (c.stream)
            g_object_unref(c.stream);
        return -1;
    }
    GThread *client = g_thread_new("web-tls-check", tls_client_side, &c);
    GIOStream *tls = g_tls_server_connection_new(mine, w->cert, &e);
    if (tls)
        g_tls_connection_handshake(G_TLS_CONNECTION(tls), NULL, &e);
    g_io_stream_close(mine, NULL, NULL);
    g_thread_join(client);
    int rc = 0;
    if (e || c.error[0]) {
        snprintf(err, errlen, "https: a TLS handshake with cert=%s and key=%s fails (is the "
                 "key the certificate's own?): %s%s%s",
                 u->cert, u->key, c.error[0] ? c.error : "", c.error[0] && e ? "; " : "",
                 e ? e->message : "");
        rc = -1;
    }
    g_clear_error(&e);
    if (tls)
        g_object_unref(tls);
    g_object_unref(mine);
    g_object_unref(c.stream);
    return rc;
}

/* "[::1]:8080", "127.0.0.1:8080", "*:8080": where the URI listens, for messages. */
static void where(const output_uri *u, char *buf, size_t len)
{
    if (!u->target[0])
        snprintf(buf, len, "every interface, port %d", u->port);
    else if (strchr(u->target, ':'))
        snprintf(buf, len, "[%s]:%d", u->target, u->port);
    else
        snprintf(buf, len, "%s:%d", u->target, u->port);
}

static int web_open(const output_uri *u, const output_setup *s, void **state, char *err,
                    size_t errlen)
{
    web_output *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    g_mutex_init(&w->lock);
    w->uri = *u;
    w->setup = *s;
    w->folder_fd = -1;
    *state = w;
    snprintf(w->folder, sizeof w->folder, "%s/web", s->program_dir);
    w->folder_fd = open(w->folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w->folder_fd < 0) {
        snprintf(err, errlen, "the page's folder %s: %s (it is built beside the program: "
                 "ninja)", w->folder, strerror(errno));
        web_close(w);
        return -1;
    }
    w->tj = tjInitCompress();
    w->zcap = compressBound((uLong)s->width * s->height * 2);
    w->zbuf = malloc(w->zcap);
    if (!w->tj || !w->zbuf) {
        snprintf(err, errlen, "cannot start the JPEG encoder");
        web_close(w);
        return -1;
    }
    if (u->tls && load_tls(w, u, err, errlen) != 0) {
        web_close(w);
        return -1;
    }
    w->cancel = g_cancellable_new();
    w->conns = g_ptr_array_new_with_free_func(conn_rec_free);
    w->clients = g_ptr_array_new_with_free_func(ws_client_free);
    w->waiters = g_ptr_array_new_with_free_func(waiter_free);
    w->context = g_main_context_new();
    w->loop = g_main_loop_new(w->context, FALSE);
    g_main_context_push_thread_default(w->context); /* what the server attaches to */
    w->server = soup_server_new("server-header", "stereo-live", "raw-paths", TRUE, NULL);
    soup_server_add_handler(w->server, NULL, on_request, w, NULL);
    soup_server_add_handler(w->server, "/ws", on_ws_request, w, NULL);
    soup_server_add_websocket_handler(w->server, "/ws", NULL, NULL, on_ws, w, NULL);
    g_signal_connect(w->server, "request-started", G_CALLBACK(on_request_started), w);
    /* the sockets are ours (GSocketService), so that the connections can be counted and
     * given a deadline; libsoup gets each one accepted */
    w->service = g_socket_service_new();
    GError *e = NULL;
    int ok;
    if (u->target[0]) {
        /* an IPv4 or IPv6 address, an IPv6 one with its %ZONE (the interface's scope id) */
        GSocketAddress *sa = g_inet_socket_address_new_from_string(u->target, (guint)u->port);
        GSocketAddress *bound = NULL;
        if (!sa)
            g_set_error(&e, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "'%s' is not an address "
                        "to listen on (is the interface after %% one of this machine's?)",
                        u->target);
        ok = sa && g_socket_listener_add_address(G_SOCKET_LISTENER(w->service), sa,
                                                 G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                                 NULL, &bound, &e);
        if (ok)
            w->port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
        if (bound)
            g_object_unref(bound);
        if (sa)
            g_object_unref(sa);
    } else if (u->port) {
        ok = g_socket_listener_add_inet_port(G_SOCKET_LISTENER(w->service), (guint16)u->port,
                                             NULL, &e);
        w->port = u->port;
    } else {
        w->port = g_socket_listener_add_any_inet_port(G_SOCKET_LISTENER(w->service), NULL, &e);
        ok = w->port != 0;
    }
    g_main_context_pop_thread_default(w->context);
    if (!ok) {
        char at[OUTPUT_URI_MAX + 32];
        where(u, at, sizeof at);
        snprintf(err, errlen, "cannot listen on %s: %s", at, e ? e->message : "unknown error");
        g_clear_error(&e);
        web_close(w);
        return -1;
    }
    g_signal_connect(w->service, "incoming", G_CALLBACK(on_incoming), w);
    g_main_context_push_thread_default(w->context);
    g_socket_service_start(w->service);
    w->tick = g_timeout_source_new(1000);
    g_source_set_callback(w->tick, on_tick, w, NULL);
    g_source_attach(w->tick, w->context);
    g_main_context_pop_thread_default(w->context);
    w->loop_thread = g_thread_new("web-server", run_loop, w);
    return 0;
}

/* The overlay numbers: the last full second's, and the run's (frames this output took). */
static void frame_stats(web_output *w, const output_frame *f, char *buf, size_t len)
{
    const output_setup *s = &w->setup;
    double run_fps = w->last_done_ns > w->first_done_ns
        ? (double)(w->last_number - w->first_number) / ((double)(w->last_done_ns -
                                                                 w->first_done_ns) * 1e-9)
        : 0;
    snprintf(buf, len,
             "{\"frame\": %llu, \"capture_ns\": %lld, \"done_ns\": %lld, "
             "\"capture_unix_ms\": %.3f, \"width\": %d, "
             "\"height\": %d, \"fps\": %.3f, \"stage_ms\": %.3f, \"latency_ms\": %.3f, "
             "\"backend\": \"%s\", \"cost\": \"%s\", \"min_disparity\": %d, "
             "\"disparities\": %d, \"have_camera\": %d, \"focal_px\": %.9g, \"baseline\": %.9g, "
             "\"doffs_px\": %.9g, \"cx\": %.9g, \"cy\": %.9g, \"clients\": %d, "
             "\"run\": {\"frames\": %llu, \"fps\": %.3f, \"stage_ms_mean\": %.4f, "
             "\"latency_ms_mean\": %.4f, \"encode_ms_mean\": %.4f}",
             (unsigned long long)f->number, (long long)f->capture_ns, (long long)f->done_ns,
             unix_ms_of(f->capture_ns), f->width, f->height, w->fps, w->stage_ms, w->latency_ms, s->backend, s->cost,
             s->min_disparity, s->num_disparities, s->have_cam, s->cam.focal_px,
             s->cam.baseline, s->cam.doffs_px, s->cam.cx, s->cam.cy,
             __atomic_load_n(&w->nclients, __ATOMIC_RELAXED), (unsigned long long)w->frames,
             run_fps, w->frames ? w->stage_sum / (double)w->frames : 0,
             w->latency_n ? w->latency_sum / (double)w->latency_n : 0,
             w->latency_n ? w->encode_sum / (double)w->latency_n : 0);
}

static void count_frame(web_output *w, const output_frame *f)
{
    if (w->frames++ == 0) {
        w->first_number = w->win_number = f->number;
        w->first_done_ns = w->win_done_ns = f->done_ns;
    }
    w->last_number = f->number;
    w->last_done_ns = f->done_ns;
    w->stage_sum += f->stage_ms;
    w->win_stage_sum += f->stage_ms;
    w->win_n++;
    if (f->done_ns - w->win_done_ns >= 1000000000LL) {
        w->fps = (double)(f->number - w->win_number) /
                 ((double)(f->done_ns - w->win_done_ns) * 1e-9);
        w->stage_ms = w->win_stage_sum / (double)w->win_n;
        if (w->win_latency_n)
            w->latency_ms = w->win_latency_sum / (double)w->win_latency_n;
        w->win_number = f->number;
        w->win_done_ns = f->done_ns;
        w->win_stage_sum = w->win_latency_sum = 0;
        w->win_n = w->win_latency_n = 0;
    }
}

static int web_write(void *state, const output_frame *f, char *err, size_t errlen)
{
    web_output *w = state;
    count_frame(w, f);
    char stats[STATS_MAX];
    frame_stats(w, f, stats, sizeof stats);
    g_mutex_lock(&w->lock);
    snprintf(w->stats, sizeof w->stats, "%s}", stats);
    g_mutex_unlock(&w->lock);
    if (__atomic_load_n(&w->want, __ATOMIC_ACQUIRE) == 0)
        return 1; /* nobody can take it */

    int64_t t0 = now_ns();
    unsigned char *color = NULL, *left = NULL;
    unsigned long color_len = 0, left_len = 0;
    if (tjCompress2(w->tj, f->rgba, f->width, f->width * 4, f->height, TJPF_RGBX, &color,
                    &color_len, TJSAMP_420, JPEG_QUALITY, TJFLAG_FASTDCT) != 0 ||
        tjCompress2(w->tj, f->rectified, f->width, f->width, f->height, TJPF_GRAY, &left,
                    &left_len, TJSAMP_GRAY, JPEG_QUALITY, TJFLAG_FASTDCT) != 0) {
        snprintf(err, errlen, "JPEG: %s", tjGetErrorStr2(w->tj));
        tjFree(color);
        tjFree(left);
        return -1;
    }
    /* int16 little endian whatever the host's order (x86-64 and aarch64 are little endian:
     * the copy is the array as it is) */
    uLongf zlen = w->zcap;
    size_t n = (size_t)f->width * f->height;
    int zrc;
    if (G_BYTE_ORDER == G_LITTLE_ENDIAN) {
        zrc = compress2(w->zbuf, &zlen, (const Bytef *)f->disparity, (uLong)(n * 2), 1);
    } else {
        int16_t *le = g_malloc(n * 2);
        for (size_t i = 0; i < n; i++)
            le[i] = (int16_t)GINT16_TO_LE(f->disparity[i]);
        zrc = compress2(w->zbuf, &zlen, (const Bytef *)le, (uLong)(n * 2), 1);
        g_free(le);
    }
    if (zrc != Z_OK) {
        snprintf(err, errlen, "zlib: error %d", zrc);
        tjFree(color);
        tjFree(left);
        return -1;
    }
    int64_t t1 = now_ns();
    double latency = (double)(t1 - f->capture_ns) * 1e-6; /* capture -> ready to send */
    w->encode_sum += (double)(t1 - t0) * 1e-6;            /* this thread's work on the frame */
    w->latency_sum += latency;
    w->latency_n++;
    w->win_latency_sum += latency;
    w->win_latency_n++;
    char json[STATS_MAX + 160];
    int jlen = snprintf(json, sizeof json, "%s, \"color_bytes\": %lu, \"left_bytes\": %lu, "
                        "\"disparity_bytes\": %lu}", stats, color_len, left_len,
                        (unsigned long)zlen);
    size_t total = 4 + (size_t)jlen + color_len + left_len + zlen;
    unsigned char *buf = g_malloc(total);
    buf[0] = (unsigned char)jlen;
    buf[1] = (unsigned char)(jlen >> 8);
    buf[2] = buf[3] = 0;
    packet p = {0};
    p.number = f->number;
    p.json_off = 4;
    p.json_len = (size_t)jlen;
    p.color_off = p.json_off + p.json_len;
    p.color_len = color_len;
    p.left_off = p.color_off + color_len;
    p.left_len = left_len;
    p.disp_off = p.left_off + left_len;
    p.disp_len = zlen;
    memcpy(buf + p.json_off, json, p.json_len);
    memcpy(buf + p.color_off, color, color_len);
    memcpy(buf + p.left_off, left, left_len);
    memcpy(buf + p.disp_off, w->zbuf, zlen);
    tjFree(color);
    tjFree(left);
    p.all = g_bytes_new_take(buf, total);
    g_mutex_lock(&w->lock);
    packet_clear(&w->newest);
    w->newest = p;
    int queue = !w->dispatch_pending;
    w->dispatch_pending = 1;
    g_mutex_unlock(&w->lock);
    if (queue) { /* one dispatch queued at a time: it sends whatever is newest by then */
        GSource *src = g_idle_source_new();
        g_source_set_callback(src, dispatch_newest, w, NULL);
        g_source_attach(src, w->context);
        g_source_unref(src);
    }
    return 0;
}

static void web_stats(void *state, char *buf, size_t len)
{
    web_output *w = state;
    snprintf(buf, len, ", port %d, %d viewers, %llu frames to viewers, %.1f MB sent%s", w->port,
             __atomic_load_n(&w->nclients, __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&w->ws_sent, __ATOMIC_RELAXED),
             (double)__atomic_load_n(&w->bytes_sent, __ATOMIC_RELAXED) * 1e-6,
             __atomic_load_n(&w->refused, __ATOMIC_RELAXED) ? ", connections refused" : "");
}

static gboolean wake_once(gpointer user)
{
    return G_SOURCE_REMOVE;
}

static void web_close(void *state)
{
    web_output *w = state;
    if (w->loop_thread) {
        /* quit from inside the loop (output_gst.c's close says why) */
        GSource *quit = g_idle_source_new();
        g_source_set_callback(quit, quit_loop, w, NULL);
        g_source_attach(quit, w->context);
        g_source_unref(quit);
        g_thread_join(w->loop_thread);
    }
    if (w->context) {
        /* what is left (closing sockets, queued sends) finishes or is dropped here; TLS
         * handshakes, cancelled, call back from GIO's thread: waited for (a bound of 5 s
         * against a backend that never answers: their connections then stay unfreed) */
        g_main_context_push_thread_default(w->context);
        int64_t until = now_ns() + 5000000000LL;
        while (w->handshakes > 0 && now_ns() < until) {
            GSource *wake = g_timeout_source_new(100);
            g_source_set_callback(wake, wake_once, NULL, NULL);
            g_source_attach(wake, w->context);
            g_main_context_iteration(w->context, TRUE);
            g_source_destroy(wake);
            g_source_unref(wake);
        }
        while (g_main_context_iteration(w->context, FALSE))
            ;
        if (w->clients)
            g_ptr_array_unref(w->clients);
        if (w->waiters)
            g_ptr_array_unref(w->waiters);
        if (w->service)
            g_object_unref(w->service);
        if (w->server)
            g_object_unref(w->server);
        if (w->tick)
            g_source_unref(w->tick);
        while (g_main_context_iteration(w->context, FALSE))
            ;
        if (w->conns)
            g_ptr_array_unref(w->conns);
        g_main_context_pop_thread_default(w->context);
    }
    if (w->loop)
        g_main_loop_unref(w->loop);
    if (w->context)
        g_main_context_unref(w->context);
    packet_clear(&w->newest);
    if (w->cert)
        g_object_unref(w->cert);
    if (w->cancel)
        g_object_unref(w->cancel);
    if (w->tj)
        tjDestroy(w->tj);
    free(w->zbuf);
    if (w->folder_fd >= 0)
        close(w->folder_fd);
    g_mutex_clear(&w->lock);
    free(w);
}

#else /* no libsoup */

static int web_open(const output_uri *u, const output_setup *s, void **state, char *err,
                    size_t errlen)
{
    snprintf(err, errlen, "http:// outputs are not built in this binary (./configure found no "
             "libsoup-3.0: libsoup-3.0-dev)");
    return -1;
}

static int web_write(void *state, const output_frame *f, char *err, size_t errlen) { return -1; }
static void web_close(void *state) {}
#define web_stats NULL
#endif

const output_backend output_web_backend = {
    OUT_HTTP, OUTPUT_NEEDS_DISPARITY | OUTPUT_NEEDS_RECTIFIED | OUTPUT_NEEDS_COLOR, web_open,
    web_write, web_stats, NULL, web_close, NULL, NULL,
};
