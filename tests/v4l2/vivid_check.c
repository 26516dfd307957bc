/* vivid_check.c — the V4L2 capture pair against the kernel's vivid driver, as TAP. Runs inside
 * the test VM (tests/v4l2/init.sh starts it after loading vivid with n_devs=2
 * node_types=0x1,0x1); tests/test_v4l2_vivid.sh boots that VM and collects these lines.
 *
 *   vivid-check LEFT RIGHT VIVID-PLATFORM-DEVICE      e.g. /dev/video0 /dev/video1 vivid.0
 *
 * Checks: both cameras open at 640x480 YUYV 25 fps with 4+ buffers and the controls applied;
 * 50 pairs within the skew with increasing timestamps; the vivid test pattern in the frames;
 * a second capture on the same cameras is refused as busy; vivid's "Disconnect" button on the
 * left camera is reported (CAPTURE_LOST, message, log) within 1 s while the right camera keeps
 * streaming, and the left comes back on a retry; unbinding vivid (its one platform device
 * holds both cameras) loses both, reopening fails until it is bound again, then pairs resume;
 * a buffer flagged V4L2_BUF_FLAG_ERROR is dropped and counted; a fatal streaming error
 * restarts the camera; errors for an impossible size, an impossible frame rate, a missing
 * device and a control the camera lacks name the device and list what it offers; the
 * automatic format choice and RGB24 stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "capture.h"

#define WIDTH 640
#define HEIGHT 480
#define FPS 25
#define VIVID_CID_DISCONNECT 0x00f0f041 /* vivid's "Disconnect" button (vivid-ctrls.c) */
#define WATCHDOG_S 100

static int test_no;
static const char *left_dev, *right_dev, *vivid_platform;

static void tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int ok, const char *fmt, ...)
{
    va_list ap;
    printf("%sok %d - ", ok ? "" : "not ", ++test_no);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "Bail out! vivid-check: watchdog expired\n";
    ssize_t r = write(1, msg, sizeof msg - 1);
    (void)r;
    _exit(2);
}

/* ---- log lines from the capture ------------------------------------------------------------ */

static char logged[64][512];
static int nlogged;

static void log_line(void *user, const char *line)
{
    (void)user;
    diag("log: %s", line);
    if (nlogged < 64)
        snprintf(logged[nlogged++], sizeof logged[0], "%s", line);
}

static int logged_with(const char *a, const char *b)
{
    for (int i = 0; i < nlogged; i++)
        if (strstr(logged[i], a) && strstr(logged[i], b))
            return 1;
    return 0;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static capture_config base_config(void)
{
    capture_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.backend = CAPTURE_V4L2_PAIR;
    cfg.device[0] = left_dev;
    cfg.device[1] = right_dev;
    cfg.width = WIDTH;
    cfg.height = HEIGHT;
    cfg.fps = FPS;
    cfg.format = CAPTURE_FORMAT_YUYV;
    cfg.buffers = 4;
    cfg.log = log_line;
    return cfg;
}

static void add_control(capture_config *cfg, const char *name, int value)
{
    capture_control *c = &cfg->controls[cfg->ncontrols++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->value = value;
}

/* A control's value read through a separate descriptor; -1000000 if it cannot be read. */
static int read_control(const char *dev, uint32_t id)
{
    int fd = open(dev, O_RDWR);
    if (fd < 0)
        return -1000000;
    struct v4l2_control c = {.id = id};
    int r = ioctl(fd, VIDIOC_G_CTRL, &c);
    close(fd);
    return r == 0 ? c.value : -1000000;
}

/* The id of the control the driver calls `name` (vivid's error injection buttons); 0 if none. */
static uint32_t find_control(int fd, const char *name)
{
    struct v4l2_queryctrl qc = {.id = V4L2_CTRL_FLAG_NEXT_CTRL};
    while (ioctl(fd, VIDIOC_QUERYCTRL, &qc) == 0) {
        if (strcmp((const char *)qc.name, name) == 0)
            return qc.id;
        qc.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
    }
    return 0;
}

/* Presses the button control called `name` on dev through a descriptor of its own. */
static int press_button(const char *dev, const char *name)
{
    int fd = open(dev, O_RDWR);
    if (fd < 0) {
        diag("open %s: %s", dev, strerror(errno));
        return -1;
    }
    uint32_t id = find_control(fd, name);
    struct v4l2_control c = {.id = id, .value = 0};
    int r = id ? ioctl(fd, VIDIOC_S_CTRL, &c) : -1;
    if (r != 0)
        diag("pressing \"%s\" (0x%08x) on %s: %s", name, id, dev, id ? strerror(errno) : "no such control");
    close(fd);
    return r;
}

static int press_disconnect(const char *dev)
{
    int fd = open(dev, O_RDWR);
    if (fd < 0) {
        diag("open %s: %s", dev, strerror(errno));
        return -1;
    }
    struct v4l2_control c = {.id = VIVID_CID_DISCONNECT, .value = 0};
    int r = ioctl(fd, VIDIOC_S_CTRL, &c);
    if (r != 0)
        diag("VIDIOC_S_CTRL Disconnect on %s: %s", dev, strerror(errno));
    close(fd); /* nobody may hold the node, or the driver cannot free it */
    return r;
}

static int write_sysfs(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0) {
        diag("open %s: %s", path, strerror(errno));
        return -1;
    }
    ssize_t n = write(fd, value, strlen(value));
    if (n != (ssize_t)strlen(value))
        diag("write %s to %s: %s", value, path, strerror(errno));
    close(fd);
    return n == (ssize_t)strlen(value) ? 0 : -1;
}

typedef struct {
    int pairs;
    int64_t worst_skew;
    int monotonic;      /* timestamps and sequence numbers increase, per camera */
    int format_ok;      /* every frame 640x480 in the expected format, sane pitch and size */
    stereo_pixfmt want; /* the expected format */
    int64_t last_ts[2];
    long last_seq[2];
    double seconds;
} pair_run;

static void check_frame(pair_run *r, const capture_frame *f, int k)
{
    size_t row = WIDTH * (size_t)(r->want == STEREO_PIX_YUYV ? 2 : r->want == STEREO_PIX_RGB24 ? 3 : 1);
    if (f->width != WIDTH || f->height != HEIGHT || f->format != r->want || f->pitch < row ||
        f->bytes < f->pitch * (HEIGHT - 1) + row || !f->data)
        r->format_ok = 0;
    if (f->timestamp_ns <= r->last_ts[k] || (long)f->sequence <= r->last_seq[k])
        r->monotonic = 0;
    r->last_ts[k] = f->timestamp_ns;
    r->last_seq[k] = (long)f->sequence;
}

/* Takes n pairs of format `want` (releasing each at once) within limit_s; last: keep the last
 * one there. */
static void take_pairs_as(capture *c, stereo_pixfmt want, int n, double limit_s, pair_run *r,
                          capture_pair *last)
{
    memset(r, 0, sizeof *r);
    r->want = want;
    r->monotonic = r->format_ok = 1;
    r->last_ts[0] = r->last_ts[1] = INT64_MIN;
    r->last_seq[0] = r->last_seq[1] = -1;
    double t0 = now_s();
    capture_status last_st = CAPTURE_OK;
    while (r->pairs < n && now_s() - t0 < limit_s) {
        capture_pair p;
        capture_status st = capture_next(c, &p, 200);
        if (st != CAPTURE_OK) {
            if (st != CAPTURE_TIMEOUT && st != last_st)
                diag("capture_next: status %d (%s)", (int)st, capture_message(c));
            last_st = st;
            continue;
        }
        r->pairs++;
        int64_t s = p.skew_ns < 0 ? -p.skew_ns : p.skew_ns;
        if (s > r->worst_skew)
            r->worst_skew = s;
        check_frame(r, &p.left, 0);
        check_frame(r, &p.right, 1);
        if (last && r->pairs == n)
            *last = p;
        else
            capture_release(c, &p);
    }
    r->seconds = now_s() - t0;
}

static void take_pairs(capture *c, int n, double limit_s, pair_run *r, capture_pair *last)
{
    take_pairs_as(c, STEREO_PIX_YUYV, n, limit_s, r, last);
}

/* Distinct luma values (YUYV: every even byte) over the frame, and whether rows differ: the
 * vivid pattern (colour bars plus a text overlay) has many of both. */
static int distinct_luma(const capture_frame *f, int *rows_differ, int *range)
{
    int seen[256] = {0}, n = 0, lo = 255, hi = 0;
    *rows_differ = 0;
    for (int y = 0; y < f->height; y++) {
        const uint8_t *row = f->data + (size_t)y * f->pitch;
        for (int x = 0; x < f->width; x++)
            if (!seen[row[2 * x]]++) {
                n++;
                lo = row[2 * x] < lo ? row[2 * x] : lo;
                hi = row[2 * x] > hi ? row[2 * x] : hi;
            }
        if (y > 0 && memcmp(row, f->data, (size_t)f->width * 2) != 0)
            *rows_differ = 1;
    }
    *range = hi - lo;
    return n;
}

static void print_stats(capture *c, const char *when)
{
    capture_stats s;
    capture_stats_get(c, &s);
    diag("%s: frames %llu/%llu, pairs %llu, unpaired %llu/%llu, stale %llu, errors %llu/%llu, "
         "losses %llu/%llu, retries %llu/%llu, reconnects %llu/%llu, lost %d/%d, skew %.2f ms",
         when, (unsigned long long)s.frames[0], (unsigned long long)s.frames[1],
         (unsigned long long)s.pairs, (unsigned long long)s.unpaired[0],
         (unsigned long long)s.unpaired[1], (unsigned long long)s.stale_pairs,
         (unsigned long long)s.errors[0], (unsigned long long)s.errors[1],
         (unsigned long long)s.losses[0], (unsigned long long)s.losses[1],
         (unsigned long long)s.retries[0], (unsigned long long)s.retries[1],
         (unsigned long long)s.reconnects[0], (unsigned long long)s.reconnects[1], s.lost[0],
         s.lost[1], s.skew_ns / 1e6);
}

/* Opens with cfg, expecting failure `want` and a message holding every string in need[]. */
static void expect_open_error(const char *name, const capture_config *cfg, capture_status want,
                              const char *const *need)
{
    capture *c = NULL;
    char err[1024] = "";
    capture_status st = capture_open(cfg, &c, err, sizeof err);
    int ok = st == want && c == NULL && !strchr(err, '\n');
    for (int i = 0; need[i]; i++)
        if (!strstr(err, need[i])) {
            diag("message lacks \"%s\"", need[i]);
            ok = 0;
        }
    diag("status %d (want %d): %s", (int)st, (int)want, err);
    tap(ok, "%s", name);
    capture_close(c);
}

/* ---- the tests ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: vivid-check LEFT-DEVICE RIGHT-DEVICE VIVID-PLATFORM-DEVICE\n");
        return 2;
    }
    left_dev = argv[1];
    right_dev = argv[2];
    vivid_platform = argv[3];
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_alarm);
    alarm(WATCHDOG_S);
    printf("1..16\n");

    /* 1. open */
    capture_config cfg = base_config();
    add_control(&cfg, "brightness", 140);
    add_control(&cfg, "autogain", 0);
    add_control(&cfg, "gain", 120);
    capture *c = NULL;
    char err[1024] = "";
    double t0 = now_s();
    capture_status st = capture_open(&cfg, &c, err, sizeof err);
    capture_stats s;
    capture_stats_get(c, &s);
    if (st != CAPTURE_OK)
        diag("capture_open: %s", err);
    diag("open took %.2f s; buffers %d/%d, fps %g/%g, max skew %.1f ms", now_s() - t0,
         s.buffers[0], s.buffers[1], s.fps[0], s.fps[1], s.max_skew_ns / 1e6);
    tap(st == CAPTURE_OK && s.buffers[0] >= 4 && s.buffers[1] >= 4 && s.fps[0] == FPS &&
            s.fps[1] == FPS,
        "both devices open at 640x480 YUYV 25 fps with 4+ buffers");

    if (st != CAPTURE_OK) {
        for (int i = 2; i <= 10; i++)
            tap(0, "needs the open capture of test 1");
    } else {
        /* 2. controls */
        int b0 = read_control(left_dev, V4L2_CID_BRIGHTNESS);
        int b1 = read_control(right_dev, V4L2_CID_BRIGHTNESS);
        int g0 = read_control(left_dev, V4L2_CID_GAIN), a0 = read_control(left_dev, V4L2_CID_AUTOGAIN);
        diag("brightness %d/%d, gain %d, autogain %d", b0, b1, g0, a0);
        tap(b0 == 140 && b1 == 140 && g0 == 120 && a0 == 0,
            "controls from the configuration are set on both cameras");

        /* 3. 50 pairs */
        pair_run r;
        capture_pair kept;
        take_pairs(c, 50, 10.0, &r, &kept);
        diag("%d pairs in %.2f s (%.1f pairs/s), worst skew %.2f ms (max %.1f)", r.pairs,
             r.seconds, r.pairs / r.seconds, r.worst_skew / 1e6, s.max_skew_ns / 1e6);
        print_stats(c, "after 50 pairs");
        tap(r.pairs == 50 && r.worst_skew <= s.max_skew_ns && r.monotonic && r.format_ok,
            "50 pairs within the max skew, timestamps and sequences increasing");

        /* 4. content */
        if (r.pairs == 50) {
            int dl, dr, rl, rr;
            int nl = distinct_luma(&kept.left, &dl, &rl), nr = distinct_luma(&kept.right, &dr, &rr);
            diag("distinct luma values %d / %d, luma range %d / %d, rows differ %d / %d", nl, nr,
                 rl, rr, dl, dr);
            tap(nl >= 6 && nr >= 6 && rl >= 100 && rr >= 100 && dl && dr,
                "frames carry the vivid test pattern");
            capture_release(c, &kept);
        } else
            tap(0, "frames carry the vivid test pattern (no pair to look at)");

        /* 5. busy */
        {
            capture_config again = base_config();
            const char *need[] = {left_dev, "busy", NULL};
            expect_open_error("a second capture on streaming cameras: busy, naming the device",
                              &again, CAPTURE_ERR_BUSY, need);
        }

        /* 6. disconnect */
        int pressed = press_disconnect(left_dev);
        t0 = now_s();
        double lost_after = -1;
        while (now_s() - t0 < 3.0) {
            capture_pair p;
            st = capture_next(c, &p, 100);
            if (st == CAPTURE_OK)
                capture_release(c, &p);
            else if (st == CAPTURE_LOST) {
                lost_after = now_s() - t0;
                break;
            }
        }
        const char *msg = capture_message(c);
        diag("disconnect reported after %.3f s: \"%s\"", lost_after, msg);
        tap(pressed == 0 && lost_after >= 0 && lost_after <= 1.0 && strstr(msg, left_dev) &&
                strstr(msg, "lost") && logged_with(left_dev, "lost"),
            "disconnect of the left camera reported within 1 s (status, message, log)");

        /* 7. keeps running, retries, comes back: vivid registers a disconnected device again
         * once its last user has closed it, which the capture does as soon as it holds none
         * of its buffers; the retry a second later then finds it. */
        capture_stats before, after;
        capture_stats_get(c, &before);
        t0 = now_s();
        int errors = 0, pairs_before_back = 0;
        double back_after = -1;
        while (now_s() - t0 < 4.0 && back_after < 0) {
            capture_pair p;
            st = capture_next(c, &p, 100);
            capture_stats_get(c, &after);
            if (st == CAPTURE_OK) {
                capture_release(c, &p);
                if (after.reconnects[0] > before.reconnects[0])
                    back_after = now_s() - t0;
                else
                    pairs_before_back++;
            } else if (st != CAPTURE_LOST && st != CAPTURE_TIMEOUT)
                errors++;
        }
        print_stats(c, "after the disconnect");
        diag("first pair after the disconnect %.2f s later", back_after + lost_after);
        tap(!errors && !pairs_before_back && back_after >= 0.5 && !after.lost[0] &&
                after.frames[1] >= before.frames[1] + 20 && after.unpaired[1] > before.unpaired[1] &&
                logged_with(left_dev, "reconnected"),
            "while lost the capture runs on and the right camera streams; the left is reopened "
            "after 1 s and pairs resume");

        /* 8. unbind / bind: vivid's one platform device holds both cameras, so both go; the
         * capture must see that (and close them) before the driver is bound again, or the
         * new nodes get other numbers — as a replugged USB camera would */
        capture_stats_get(c, &before);
        int ub = write_sysfs("/sys/bus/platform/drivers/vivid/unbind", vivid_platform);
        t0 = now_s();
        while (now_s() - t0 < 1.5) {
            capture_pair p;
            if (capture_next(c, &p, 100) == CAPTURE_OK)
                capture_release(c, &p);
        }
        capture_stats_get(c, &after);
        print_stats(c, "unbound");
        int both_lost = after.lost[0] && after.lost[1] && after.retries[0] > before.retries[0] &&
                        after.retries[1] > before.retries[1];
        diag("after unbind: lost %d/%d, message \"%s\"", after.lost[0], after.lost[1],
             capture_message(c));
        int bd = write_sysfs("/sys/bus/platform/drivers/vivid/bind", vivid_platform);
        diag("unbind %s: %d, bind: %d; %s present: %d", vivid_platform, ub, bd, left_dev,
             access(left_dev, F_OK) == 0);
        t0 = now_s();
        back_after = -1;
        while (now_s() - t0 < 5.0) {
            capture_pair p;
            st = capture_next(c, &p, 100);
            if (st == CAPTURE_OK) {
                back_after = now_s() - t0;
                capture_release(c, &p);
                break;
            }
        }
        take_pairs(c, 20, 5.0, &r, NULL);
        capture_stats_get(c, &after);
        print_stats(c, "after rebind");
        diag("first pair %.2f s after bind; then %d pairs in %.2f s, worst skew %.2f ms",
             back_after, r.pairs, r.seconds, r.worst_skew / 1e6);
        tap(ub == 0 && bd == 0 && both_lost && back_after >= 0 &&
                after.reconnects[0] == before.reconnects[0] + 1 &&
                after.reconnects[1] == before.reconnects[1] + 1 && !after.lost[0] &&
                !after.lost[1] && r.pairs == 20 && r.worst_skew <= s.max_skew_ns &&
                r.monotonic && capture_message(c)[0] == 0,
            "unbind/bind of %s: both cameras lost, retried, reconnected and pairing again",
            vivid_platform);

        /* 9. a frame the driver flags as bad is dropped and counted */
        capture_stats_get(c, &before);
        int pressed_err = press_button(right_dev, "Inject V4L2_BUF_FLAG_ERROR");
        take_pairs(c, 10, 3.0, &r, NULL);
        capture_stats_get(c, &after);
        diag("errors %llu -> %llu; %d pairs after it", (unsigned long long)before.errors[1],
             (unsigned long long)after.errors[1], r.pairs);
        tap(pressed_err == 0 && after.errors[1] == before.errors[1] + 1 && r.pairs == 10 &&
                r.monotonic,
            "a buffer flagged V4L2_BUF_FLAG_ERROR is dropped and counted, pairing goes on");

        /* 10. a fatal streaming error (vb2 queue error: POLLERR, DQBUF fails) restarts the camera */
        capture_stats_get(c, &before);
        int pressed_fatal = press_button(right_dev, "Inject Fatal Streaming Error");
        t0 = now_s();
        back_after = -1;
        while (now_s() - t0 < 4.0) {
            capture_pair p;
            st = capture_next(c, &p, 100);
            if (st == CAPTURE_OK) {
                capture_release(c, &p);
                capture_stats_get(c, &after);
                if (after.reconnects[1] > before.reconnects[1]) {
                    back_after = now_s() - t0;
                    break;
                }
            }
        }
        capture_stats_get(c, &after);
        print_stats(c, "after the streaming error");
        diag("pairs again %.2f s after the streaming error", back_after);
        tap(pressed_fatal == 0 && after.losses[1] == before.losses[1] + 1 && back_after >= 0 &&
                !after.lost[1],
            "a fatal streaming error on the right camera: reported, camera reopened, pairs resume");
        capture_close(c);
    }

    /* 11. impossible size */
    {
        capture_config bad = base_config();
        bad.width = 123;
        bad.height = 45;
        const char *need[] = {left_dev, "123x45", "640x480", "YUYV", NULL};
        expect_open_error("impossible size: error names the device and lists what it offers",
                          &bad, CAPTURE_ERR_FORMAT, need);
    }
    /* 12. impossible frame rate */
    {
        capture_config bad = base_config();
        bad.fps = 1000;
        const char *need[] = {left_dev, "1000 fps", "25", NULL};
        expect_open_error("impossible frame rate: error names the device and lists its rates",
                          &bad, CAPTURE_ERR_FORMAT, need);
    }
    /* 13. missing device */
    {
        capture_config bad = base_config();
        bad.device[1] = "/dev/video9";
        const char *need[] = {"/dev/video9", "no such device", "connected", NULL};
        expect_open_error("missing device: clear error naming it", &bad, CAPTURE_ERR_NODEV, need);
    }
    /* 14. control the camera lacks */
    {
        capture_config bad = base_config();
        add_control(&bad, "auto_exposure", 1);
        const char *need[] = {left_dev, "auto_exposure", "brightness", NULL};
        expect_open_error("unknown control: error names the device and lists its controls", &bad,
                          CAPTURE_ERR_FORMAT, need);
    }
    /* 15, 16. after all that, clean opens again: the automatic choice (YUYV first), RGB24 */
    const struct {
        capture_format format;
        stereo_pixfmt want;
    } formats[] = {{CAPTURE_FORMAT_AUTO, STEREO_PIX_YUYV}, {CAPTURE_FORMAT_RGB24, STEREO_PIX_RGB24}};
    for (int i = 0; i < 2; i++) {
        capture_config again = base_config();
        again.format = formats[i].format;
        capture *c2 = NULL;
        st = capture_open(&again, &c2, err, sizeof err);
        pair_run r = {0};
        if (st == CAPTURE_OK)
            take_pairs_as(c2, formats[i].want, 5, 3.0, &r, NULL);
        else
            diag("capture_open: %s", err);
        tap(st == CAPTURE_OK && r.pairs == 5 && r.format_ok && r.monotonic,
            "reopening after the errors with format %s streams pairs in %s",
            capture_format_to_str(formats[i].format), i ? "RGB24" : "YUYV");
        capture_close(c2);
    }
    return 0;
}
