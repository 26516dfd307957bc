/* SPDX-License-Identifier: Apache-2.0 */
/* ros2_bridge.c — build/stereo-ros2-bridge: the live app's ros2:// output, the only process
 * that links Cyclone DDS. The app (output_ros2.c) starts it with the output's URI as its
 * one argument, the frame ring in shared memory as fd 3 and a socket as fd 4 (ros2_ring.h),
 * and starts it again when it dies: whatever a DDS peer does to this process, the app goes on.
 *
 * For each frame it reads (the newest in the ring; frames it is too slow for are skipped) it
 * publishes, under ROS 2's naming (topic rt/NAMESPACE/NAME, type PKG::msg::dds_::TYPE_,
 * ros2/ros2_msgs.idl), with the header stamp = the left frame's capture time:
 *   left/image_rect      sensor_msgs/Image, mono8: the rectified left view
 *   disparity            stereo_msgs/DisparityImage: 32FC1 pixels, invalid = min_disparity - 1
 *   and with the camera (f, B from the calibration, or --focal / --baseline):
 *   left/camera_info     sensor_msgs/CameraInfo of the rectified view: K, R = I, P, no
 *                        distortion; reliable, transient local (a late subscriber gets it)
 *   depth/image_rect     sensor_msgs/Image, REP 118: 32FC1 metres (NaN = no depth) or 16UC1
 *                        millimetres (0 = no depth), hal/depth.h's rule
 *   points2              sensor_msgs/PointCloud2 (?points=1): organised, x y z rgb float32,
 *                        NaN where there is no depth, grey as rgb
 * QoS: ?qos=sensor (the default) best effort, keep last 1 — a subscriber gets the newest
 * frame; ?qos=reliable: reliable, keep last 1, writes blocking at most 100 ms. The wire format
 * is XCDR1 (plain CDR), as ROS 2 uses. The types carry no XTypes type information (idlc -t):
 * peers match them by name, as ROS 2 nodes do, and have no type object to ask for — the
 * exchange whose handling crashes Debian's Cyclone DDS 0.10.2 when a Cyclone 11.x peer joins.
 *
 * Another publisher on one of its topics (a second app with the same namespace and domain, a
 * ROS 2 node) mixes its frames with this one's for every subscriber: the bridge reads DDS's
 * built-in DCPSPublication topic (every writer discovery reports, local or remote) and says
 * once on stderr the first topic it shares. Its own writers, which that topic lists too, carry
 * a token in their user data (this host, the app's pid, the ring's inode): the same for every
 * bridge the output starts, so that neither they nor an earlier bridge's of the same output
 * are taken for another app's.
 *
 * Exit status: 0 when the app closed the socket, 1 on a failure (said on stderr in one line).
 */
#include <dds/dds.h>

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "depth.h"
#include "stereo.h" /* stereo_disparity_valid */
#include "output_uri.h"
#include "ros2_msgs.h"
#include "ros2_ring.h"

#define PROGRAM "stereo-ros2-bridge"
#define POINTFIELD_FLOAT32 7 /* sensor_msgs/PointField FLOAT32 */

enum { T_LEFT, T_DISPARITY, T_INFO, T_DEPTH, T_POINTS, NTOPICS };
static const char *const topic_names[NTOPICS] = {"left/image_rect", "disparity",
                                                 "left/camera_info", "depth/image_rect",
                                                 "points2"};

typedef struct {
    output_uri uri;
    ros2_ring_header *ring;
    size_t ring_bytes;
    int w, h;
    depth_camera cam;
    dds_entity_t participant, writer[NTOPICS]; /* 0: not published */
    char topic[NTOPICS][OUTPUT_URI_MAX + 32];  /* rt/NAMESPACE/NAME */
    char token[128];            /* our writers' user data: "stereo-live HOST PID INODE" */
    dds_entity_t publications;  /* a reader of DCPSPublication */
    int other_said;             /* another publisher was said */
    /* one frame, copied out of the ring */
    int16_t *disparity;
    uint8_t *rectified;
    int64_t stamp_ns;
    /* message payloads, allocated once */
    float *disp_f, *depth_f;
    uint16_t *depth_mm;
    uint8_t *cloud;
} bridge;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(PROGRAM ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* The ring the app made: checked against its own header before anything is read. */
static void map_ring(bridge *b)
{
    struct stat st;
    if (fstat(ROS2_RING_SHM_FD, &st) != 0 || st.st_size < (off_t)sizeof(ros2_ring_header))
        die("fd %d is not the app's frame ring (start it from stereo-live --output ros2://)",
            ROS2_RING_SHM_FD);
    b->ring_bytes = (size_t)st.st_size;
    void *m = mmap(NULL, b->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ROS2_RING_SHM_FD, 0);
    if (m == MAP_FAILED)
        die("mmap of the frame ring: %s", strerror(errno));
    b->ring = m;
    const ros2_ring_header *h = b->ring;
    if (h->magic != ROS2_RING_MAGIC || h->version != ROS2_RING_VERSION ||
        h->slots != ROS2_RING_SLOTS || h->width == 0 || h->height == 0 ||
        h->slot_bytes != ros2_ring_slot_bytes(h->width, h->height) ||
        ros2_ring_bytes(h->width, h->height) > b->ring_bytes)
        die("the frame ring's header does not match this program (another version?)");
    b->w = (int)h->width;
    b->h = (int)h->height;
    b->cam = (depth_camera){h->focal_px, h->cx, h->cy, h->baseline, h->doffs_px};
}

static dds_entity_t make_writer(bridge *b, const dds_topic_descriptor_t *desc, int which,
                                int camera_info)
{
    char *topic = b->topic[which];
    snprintf(topic, sizeof b->topic[which], "rt/%s%s%s", b->uri.target,
             b->uri.target[0] ? "/" : "", topic_names[which]);
    dds_entity_t t = dds_create_topic(b->participant, desc, topic, NULL, NULL);
    if (t < 0)
        die("topic %s: %s", topic, dds_strretcode(t));
    dds_qos_t *q = dds_create_qos();
    dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
    dds_qset_data_representation(q, 1, &xcdr1);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    dds_qset_userdata(q, b->token, strlen(b->token));
    if (camera_info) { /* a late subscriber gets the calibration too */
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
        dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    } else if (b->uri.qos == OUT_QOS_RELIABLE) {
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
    } else {
        dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    }
    dds_entity_t w = dds_create_writer(b->participant, t, q, NULL);
    dds_delete_qos(q);
    if (w < 0)
        die("writer of %s: %s", topic, dds_strretcode(w));
    return w;
}

static void open_dds(bridge *b)
{
    char host[64] = "?";
    struct stat st;
    gethostname(host, sizeof host - 1);
    fstat(ROS2_RING_SHM_FD, &st); /* map_ring checked it */
    snprintf(b->token, sizeof b->token, "stereo-live %s %ld %llu", host, (long)getppid(),
             (unsigned long long)st.st_ino);
    b->participant = dds_create_participant((dds_domainid_t)b->uri.domain, NULL, NULL);
    if (b->participant < 0)
        die("DDS participant on domain %d: %s", b->uri.domain, dds_strretcode(b->participant));
    int cam = b->ring->have_cam != 0;
    b->writer[T_LEFT] = make_writer(b, &sensor_msgs_msg_dds__Image__desc, T_LEFT, 0);
    b->writer[T_DISPARITY] = make_writer(b, &stereo_msgs_msg_dds__DisparityImage__desc,
                                         T_DISPARITY, 0);
    if (cam) {
        b->writer[T_INFO] = make_writer(b, &sensor_msgs_msg_dds__CameraInfo__desc, T_INFO, 1);
        b->writer[T_DEPTH] = make_writer(b, &sensor_msgs_msg_dds__Image__desc, T_DEPTH, 0);
    }
    if (cam && b->uri.points)
        b->writer[T_POINTS] = make_writer(b, &sensor_msgs_msg_dds__PointCloud2__desc,
                                          T_POINTS, 0);
    b->publications = dds_create_reader(b->participant, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL,
                                        NULL);
    if (b->publications < 0)
        die("a reader of DCPSPublication: %s", dds_strretcode(b->publications));
}

/* The publications discovery has reported since the last call: the first one on one of our
 * topics that is not ours is said, once. */
static void watch_publishers(bridge *b)
{
    enum { N = 16 };
    void *buf[N] = {NULL};
    dds_sample_info_t info[N];
    int n;
    while ((n = dds_take(b->publications, buf, info, N, N)) > 0) {
        for (int i = 0; i < n && !b->other_said; i++) {
            const dds_builtintopic_endpoint_t *e = buf[i];
            if (!info[i].valid_data || info[i].instance_state != DDS_IST_ALIVE || !e->topic_name)
                continue;
            void *ud = NULL;
            size_t sz = 0;
            int ours = e->qos && dds_qget_userdata(e->qos, &ud, &sz) &&
                       sz == strlen(b->token) && memcmp(ud, b->token, sz) == 0;
            dds_free(ud);
            for (int t = 0; !ours && t < NTOPICS; t++)
                if (b->writer[t] && strcmp(e->topic_name, b->topic[t]) == 0) {
                    fprintf(stderr, PROGRAM ": ros2://%s: another publisher on %s (domain %d): "
                            "its messages and this app's mix for every subscriber (a second app "
                            "with the same namespace and domain?); give each its own namespace "
                            "or ?domain=\n", b->uri.target, b->topic[t], b->uri.domain);
                    b->other_said = 1;
                    break;
                }
        }
        dds_return_loan(b->publications, buf, n);
        if (b->other_said) /* the rest are not read again: nothing more to say */
            break;
    }
}

/* The newest complete frame not published yet into b (1), or 0 (none, or torn: the app
 * overwrote it while it was copied; the next one comes). */
static int take_frame(bridge *b, uint64_t *last)
{
    ros2_ring_header *h = b->ring;
    uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
    if (head == 0 || head == *last)
        return 0;
    uint64_t k = head - 1;
    const uint8_t *base = (const uint8_t *)h + sizeof *h + (k % h->slots) * h->slot_bytes;
    ros2_ring_slot *slot = (ros2_ring_slot *)base;
    uint64_t seq = atomic_load_explicit(&slot->seq, memory_order_acquire);
    if (seq != 2 * k + 2)
        return 0;
    size_t n = (size_t)b->w * b->h;
    b->stamp_ns = slot->stamp_ns;
    memcpy(b->disparity, base + sizeof *slot, n * 2);
    memcpy(b->rectified, base + sizeof *slot + n * 2, n);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&slot->seq, memory_order_relaxed) != seq)
        return 0;
    *last = head;
    return 1;
}

static std_msgs_msg_dds__Header_ header(const bridge *b)
{
    int64_t s = b->stamp_ns / 1000000000LL, ns = b->stamp_ns % 1000000000LL;
    if (ns < 0)
        s--, ns += 1000000000LL;
    return (std_msgs_msg_dds__Header_){{(int32_t)s, (uint32_t)ns}, (char *)b->uri.frame_id};
}

static sensor_msgs_msg_dds__Image_ image(const bridge *b, const char *encoding, int bytes_per_px,
                                         void *data)
{
    sensor_msgs_msg_dds__Image_ m = {header(b), (uint32_t)b->h, (uint32_t)b->w,
                                     (char *)encoding, 0, (uint32_t)(b->w * bytes_per_px),
                                     {0, 0, NULL, false}};
    m.data._length = m.data._maximum = (uint32_t)((size_t)b->w * b->h * bytes_per_px);
    m.data._buffer = data;
    return m;
}

static void write_or_die(dds_entity_t w, const void *msg, const char *what)
{
    dds_return_t rc = dds_write(w, msg);
    /* a reliable reader that does not read: the frame is dropped for it after 100 ms */
    if (rc < 0 && rc != DDS_RETCODE_TIMEOUT)
        die("publishing %s: %s", what, dds_strretcode(rc));
}

static void publish(bridge *b)
{
    size_t n = (size_t)b->w * b->h;
    const ros2_ring_header *h = b->ring;
    sensor_msgs_msg_dds__Image_ left = image(b, "mono8", 1, b->rectified);
    write_or_die(b->writer[T_LEFT], &left, topic_names[T_LEFT]);

    float invalid = (float)h->min_disparity - 1.0f;
    for (size_t i = 0; i < n; i++)
        b->disp_f[i] = !stereo_disparity_valid(b->disparity[i]) ? invalid : b->disparity[i] / 16.0f;
    stereo_msgs_msg_dds__DisparityImage_ d = {
        header(b), image(b, "32FC1", 4, b->disp_f),
        h->have_cam ? (float)b->cam.focal_px : 0.0f, h->have_cam ? (float)b->cam.baseline : 0.0f,
        {0, 0, (uint32_t)b->h, (uint32_t)b->w, false}, (float)h->min_disparity,
        (float)(h->min_disparity + h->num_disparities - 1), 1.0f / 16.0f};
    write_or_die(b->writer[T_DISPARITY], &d, topic_names[T_DISPARITY]);
    if (!h->have_cam)
        return;

    const depth_camera *c = &b->cam;
    sensor_msgs_msg_dds__CameraInfo_ info = {
        header(b), (uint32_t)b->h, (uint32_t)b->w, "plumb_bob", {0, 0, NULL, false},
        {c->focal_px, 0, c->cx, 0, c->focal_px, c->cy, 0, 0, 1},
        {1, 0, 0, 0, 1, 0, 0, 0, 1},
        {c->focal_px, 0, c->cx, 0, 0, c->focal_px, c->cy, 0, 0, 0, 1, 0},
        0, 0, {0, 0, 0, 0, false}};
    double dist[5] = {0};
    info.d._length = info.d._maximum = 5;
    info.d._buffer = dist;
    write_or_die(b->writer[T_INFO], &info, topic_names[T_INFO]);

    sensor_msgs_msg_dds__Image_ depth;
    if (b->uri.depth_encoding == OUT_DEPTH_16UC1) {
        for (size_t i = 0; i < n; i++)
            b->depth_mm[i] = depth_mm(c, b->disparity[i]);
        depth = image(b, "16UC1", 2, b->depth_mm);
    } else {
        for (size_t i = 0; i < n; i++) {
            double z = depth_m(c, b->disparity[i]);
            b->depth_f[i] = isfinite(z) ? (float)z : NAN;
        }
        depth = image(b, "32FC1", 4, b->depth_f);
    }
    write_or_die(b->writer[T_DEPTH], &depth, topic_names[T_DEPTH]);
    if (!b->writer[T_POINTS])
        return;

    for (int y = 0; y < b->h; y++)
        for (int x = 0; x < b->w; x++) {
            size_t i = (size_t)y * b->w + x;
            float p[4] = {NAN, NAN, NAN, 0};
            uint32_t g = b->rectified[i], rgb = g << 16 | g << 8 | g;
            depth_point(c, x, y, b->disparity[i], p);
            memcpy(&p[3], &rgb, 4); /* PCL's packed rgb: 0x00RRGGBB in a float's bits */
            memcpy(b->cloud + i * 16, p, 16);
        }
    sensor_msgs_msg_dds__PointField_ fields[4] = {{"x", 0, POINTFIELD_FLOAT32, 1},
                                                  {"y", 4, POINTFIELD_FLOAT32, 1},
                                                  {"z", 8, POINTFIELD_FLOAT32, 1},
                                                  {"rgb", 12, POINTFIELD_FLOAT32, 1}};
    sensor_msgs_msg_dds__PointCloud2_ pc = {header(b), (uint32_t)b->h, (uint32_t)b->w,
                                            {4, 4, fields, false}, false, 16,
                                            (uint32_t)(16 * b->w), {0, 0, NULL, false}, false};
    pc.data._length = pc.data._maximum = (uint32_t)(n * 16);
    pc.data._buffer = b->cloud;
    write_or_die(b->writer[T_POINTS], &pc, topic_names[T_POINTS]);
}

int main(int argc, char **argv)
{
    bridge b;
    memset(&b, 0, sizeof b);
    char err[600];
    if (argc != 2)
        die("usage: " PROGRAM " ros2://... (started by stereo-live --output ros2://...)");
    if (output_uri_parse(argv[1], &b.uri, err, sizeof err) != 0)
        die("%s", err);
    if (b.uri.kind != OUT_ROS2)
        die("'%s' is not a ros2:// output", argv[1]);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the app gone, so is the bridge */
    close_range(ROS2_RING_SOCK_FD + 1, ~0u, 0); /* nothing else of the app's (sockets, files) */
    map_ring(&b);
    size_t n = (size_t)b.w * b.h;
    if (!(b.disparity = malloc(n * 2)) || !(b.rectified = malloc(n)) ||
        !(b.disp_f = malloc(n * 4)) || !(b.depth_f = malloc(n * 4)) ||
        !(b.depth_mm = malloc(n * 2)) || !(b.cloud = malloc(n * 16)))
        die("out of memory for %dx%d frames", b.w, b.h);
    open_dds(&b);
    uint64_t last = 0;
    for (int closing = 0; !closing;) {
        struct pollfd pfd = {ROS2_RING_SOCK_FD, POLLIN, 0};
        int r = poll(&pfd, 1, 1000);
        if (r < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
        if (r > 0) { /* drain the wake-ups; the ring's head says which frame is newest */
            uint64_t k;
            ssize_t got;
            while ((got = recv(ROS2_RING_SOCK_FD, &k, sizeof k, MSG_DONTWAIT)) > 0) {
            }
            /* the app closed its end: the newest frame still goes out, then the bridge ends */
            closing = got == 0 || (pfd.revents & (POLLHUP | POLLERR));
        }
        closing |= getppid() == 1;
        if (!b.other_said)
            watch_publishers(&b);
        if (take_frame(&b, &last)) {
            publish(&b);
            atomic_fetch_add(&b.ring->published, 1);
            atomic_store(&b.ring->taken, last);
        }
    }
    dds_delete(b.participant);
    return 0;
}
