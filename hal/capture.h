/* SPDX-License-Identifier: Apache-2.0 */
/* capture.h — live stereo input: frame pairs, or sets of N cameras, from a camera rig (or a
 * stand-in for one).
 *
 * One interface, several backends chosen at run time by capture_config.backend:
 *   CAPTURE_V4L2_PAIR   2..CAPTURE_MAX_CAMERAS V4L2 cameras given by path (v4l2_pair.c,
 *                       v4l2_camera.c); two (ncameras 0 or 2) are the pair
 * (side-by-side camera, image files and the generated scene are to come, each in its own file).
 *
 * Use:
 *   capture *c;  char err[512];
 *   if (capture_open(&cfg, &c, err, sizeof err) != CAPTURE_OK) { report err; }
 *   for (;;) {
 *       capture_pair p;
 *       capture_status st = capture_next(c, &p, 100);
 *       if (st == CAPTURE_OK) { use p.left / p.right ...; capture_release(c, &p); }
 *       else if (st == CAPTURE_LOST) { show capture_message(c) ("... lost, retrying") }
 *       else if (st != CAPTURE_TIMEOUT) break;           // only bad arguments end up here
 *   }
 *   capture_close(c);
 * N cameras (capture_config.ncameras > 2) the same with capture_next_set / capture_release_set
 * (a capture_set: one frame per camera); capture_next and capture_release are the pair's (two
 * cameras: set frame 0 is left, 1 is right; for more cameras capture_next is an error).
 *
 * Buffers: a delivered frame points into a buffer the driver wrote (no copy). It stays valid, and
 * the driver does not write into it, until capture_release() — only then does it go back to the
 * driver. Each camera has `buffers` of them (at least 4): the backend holds one waiting for its
 * partner, so hold at most buffers - 2 pairs at a time or the cameras run dry (capture_next then
 * times out until pairs are released).
 *
 * Whose buffers (capture_config.io): MMAP (the default) streams into the driver's buffers, mapped
 * into the process; the caller copies what it keeps. USERPTR streams into the caller's own
 * buffers (V4L2_MEMORY_USERPTR), so a frame lands where the caller wants it, e.g. in the stereo
 * stage's frames (stereo_frame_alloc), and nobody copies it. AUTO takes USERPTR where the camera
 * allows it, else MMAP, per camera, and logs once which and why:
 *   "<role> camera <path>: zero-copy (USERPTR)" or "<role> camera <path>: mmap + copy: <reason>".
 * USERPTR is not possible when libv4l2 converts the format (MJPEG -> RGB24, ...: libv4l2 decodes
 * into buffers of its own and refuses USERPTR), when the driver refuses VIDIOC_REQBUFS with
 * V4L2_MEMORY_USERPTR, or when it refuses the caller's memory at VIDIOC_QBUF (drivers that need
 * physically contiguous memory do). libv4l2 refuses USERPTR even when it does not convert, so
 * the streaming ioctls of a USERPTR camera go to the driver directly (ioctl(2)); its frames are
 * then exactly what the driver wrote (libv4l2's software flip / white balance for the few webcams
 * that get one does not apply to them).
 *
 * USERPTR buffer ownership. A camera in USERPTR mode delivers nothing until the caller has given
 * it buffers (capture_give_buffers: n per camera, each at least capture_buffer_bytes() long).
 * From then on each buffer is in exactly one place, as with the driver's own:
 *   queued     the driver's until it is dequeued: it may write into it at any time (on a Jetson
 *              this is a CPU-side write into the memory: the buffer must not be attached to a GPU
 *              stream meanwhile — stereo.h attaches frames only while they are in flight, and a
 *              frame is in flight only while the caller holds it);
 *   waiting    dequeued, waiting in the pairing for its partner (the backend's); a frame that
 *              gets none is queued again at once;
 *   delivered  in a pair the caller holds, until capture_release queues it again.
 * Buffers stay the caller's memory: the caller must not free one until capture_take_back_buffers
 * or capture_close has returned (the driver lets go of every buffer in both: STREAMOFF and
 * VIDIOC_REQBUFS 0). A lost camera keeps its buffers: when it is reopened they are queued again,
 * those the caller still holds only once they are released, and frames the caller holds stay
 * readable (and unwritten) all along.
 *
 * Pairing (V4L2 pair): each camera's newest frame waits for a partner from the other camera
 * whose timestamp is within max_skew_ns; a frame that cannot get one any more (the other camera
 * already delivered a newer frame more than max_skew_ns away, or its own camera delivered a
 * newer frame) is given back and counted as unpaired. When capture_next finds several pairs
 * ready at once (the caller was slow) it delivers the newest and gives the others back (stale).
 * N cameras: the same against the reference camera (camera 0, the first device): a set is formed
 * when every camera has a frame within max_skew_ns of the reference's (the rule in full is in
 * frame_pairing.h); capture_set.skew_ns[k] is camera k's offset to the reference, and
 * capture_stats has each camera's last skew, unpaired and stale frames and losses.
 *
 * Lost cameras (unplugged, driver unbound: ENODEV, or any other streaming error): capture_next
 * returns CAPTURE_LOST at once, logs "<path>: lost (<reason>), retrying every 1 s", keeps the
 * other camera running (its frames are dropped as unpaired), reopens the lost one by path every
 * retry_ms and, once it is back with the same configuration, logs "reconnected" and resumes
 * pairing. With N cameras the others keep streaming too, and no set is formed while one is lost
 * unless capture_config.partial_sets is set: then the cameras that remain (at least two) form
 * sets of their own meanwhile (capture_set.mask says which; the reference is the lowest-numbered
 * camera up, so when camera 0 is lost camera 1 is the reference), and the full sets resume when
 * it is back. capture_cameras_up() says which cameras stream. A lost camera's buffers that the
 * caller still holds stay readable until released; its device is closed only then (a driver
 * frees the node, and can give the returning camera the same /dev/videoN, only when nobody
 * holds it) — a USERPTR camera's at once, since what the caller holds is its own memory (it may
 * hold its last frame until a new one comes). A reopen
 * runs inside capture_next and blocks it for as long as opening the camera takes (tens of ms).
 *
 * Threads: a capture handle is used from one thread at a time; it starts no threads of its own.
 * Library code never exits: failures come back as a capture_status with a one-line message
 * naming the device and the problem (in err at open, from capture_message() afterwards).
 */
#ifndef STEREO_CAPTURE_H
#define STEREO_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "stereo.h" /* stereo_pixfmt, stereo_image */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CAPTURE_OK = 0,      /* capture_next: a pair was delivered (release it) */
    CAPTURE_TIMEOUT,     /* capture_next: no pair within the timeout; call again */
    CAPTURE_LOST,        /* capture_next: a camera is lost and being reopened; call again */
    CAPTURE_ERR_PARAM,   /* a configuration value or argument is invalid */
    CAPTURE_ERR_NOMEM,   /* an allocation failed */
    CAPTURE_ERR_NODEV,   /* a device is missing (no such file) or not a capture device */
    CAPTURE_ERR_BUSY,    /* a device is in use by another program */
    CAPTURE_ERR_FORMAT,  /* a device cannot do the configured size / format / fps / control */
    CAPTURE_ERR_IO,      /* any other device error */
} capture_status;

typedef enum { CAPTURE_V4L2_PAIR = 0 } capture_backend;

/* Cameras in one handle (the views of a multi-view rig: STEREO_MAX_VIEWS). */
#define CAPTURE_MAX_CAMERAS STEREO_MAX_VIEWS

/* The pixel format to capture. AUTO takes the first the camera offers natively of YUYV, GREY,
 * then RGB24 (which libv4l2 converts to from anything, MJPEG included). */
typedef enum {
    CAPTURE_FORMAT_AUTO = 0,
    CAPTURE_FORMAT_YUYV,
    CAPTURE_FORMAT_GREY,
    CAPTURE_FORMAT_RGB24,
} capture_format;

/* A frame rate within this fraction of the configured one counts as met (drivers round the
 * frame interval to their clock: 30000/1001 fps is fps = 30). */
#define CAPTURE_FPS_TOLERANCE 0.005

#define CAPTURE_MAX_CONTROLS 16
#define CAPTURE_MIN_BUFFERS 4
#define CAPTURE_MAX_BUFFERS 32

/* Whose memory a camera streams into (see Buffers above). */
typedef enum {
    CAPTURE_IO_MMAP = 0,  /* the driver's buffers, mapped (the default) */
    CAPTURE_IO_AUTO,      /* the caller's buffers where the camera allows it, else the driver's */
    CAPTURE_IO_USERPTR,   /* the caller's buffers, or capture_open fails */
} capture_io;

/* A camera control by its v4l2-ctl name ("brightness", "gain", "auto_exposure" (1 = manual),
 * "exposure_time_absolute" (100 us units), ...; the table is in v4l2_camera.c) or as a numeric
 * id ("0x00980913"). Applied in the given order to every camera: put auto_exposure=1 before
 * exposure_time_absolute. */
typedef struct {
    char name[40];
    int32_t value;
} capture_control;

typedef struct {
    capture_backend backend;
    const char *device[CAPTURE_MAX_CAMERAS]; /* /dev/videoN or /dev/v4l/by-id/... (by-id keeps
                                naming the same camera when a replug renumbers the nodes);
                                the pair: left, right; N cameras: device[0] is the reference */
    int ncameras;            /* 2..CAPTURE_MAX_CAMERAS; 0 = 2 (the pair). Messages name the
                                pair's cameras "left" / "right", more as "camera K" */
    int width, height;       /* > 0: exactly this size or capture_open fails */
    int fps;                 /* > 0: exactly this rate or capture_open fails; 0 = driver's */
    capture_format format;
    int buffers;             /* mmap buffers per camera, 4..32 (0 = 4); with USERPTR the caller
                                gives its own (capture_give_buffers) */
    capture_io io;           /* MMAP (0), AUTO or USERPTR */
    int64_t max_skew_ns;     /* pairing tolerance; 0 = half a frame period (20 ms if fps is 0) */
    int retry_ms;            /* reopen interval for a lost camera (0 = 1000) */
    int partial_sets;        /* 1: while cameras are lost, the others (two or more) still form
                                sets (capture_set.mask); 0: no sets until all are back */
    int ncontrols;
    capture_control controls[CAPTURE_MAX_CONTROLS];
    /* Log lines (lost, reconnected, fallbacks), one per call, no newline; NULL = stderr. */
    void (*log)(void *user, const char *line);
    void *log_user;
} capture_config;

typedef struct {
    const uint8_t *data;     /* first pixel of the first row; NULL in an empty frame */
    int width, height;
    size_t pitch;            /* bytes between rows (the driver's bytesperline) */
    size_t bytes;            /* bytes the driver filled (bytesused), >= pitch * (height-1) + row */
    stereo_pixfmt format;
    int64_t timestamp_ns;    /* CLOCK_MONOTONIC, when the driver captured the frame */
    uint32_t sequence;       /* the driver's frame counter (gaps: frames it dropped; restarts
                                after a reconnect) */
    int buffer;              /* backend's buffer index; -1 in an empty frame. USERPTR: the index
                                into the buffers the caller gave for this camera */
    capture_io io;           /* MMAP: data is in a driver buffer; USERPTR: data is the start of
                                the caller's buffer `buffer` */
} capture_frame;

typedef struct {
    capture_frame left, right;
    int64_t skew_ns;         /* right.timestamp_ns - left.timestamp_ns */
} capture_pair;

/* One frame per camera, captured within max_skew_ns of the reference's. */
typedef struct {
    int n;                   /* cameras of the handle */
    unsigned mask;           /* bit k: frame[k] is in the set (every camera, unless partial_sets
                                delivered a set while some are lost) */
    int ref;                 /* the reference camera of this set: 0, or the lowest one up */
    capture_frame frame[CAPTURE_MAX_CAMERAS]; /* empty (data NULL, buffer -1) if not in mask */
    int64_t skew_ns[CAPTURE_MAX_CAMERAS];     /* frame[k].timestamp_ns - frame[ref]'s; 0 if not
                                                 in mask */
} capture_set;

/* Counters per camera k < ncameras (the pair: 0 left, 1 right). */
typedef struct {
    int ncameras;
    uint64_t frames[CAPTURE_MAX_CAMERAS];   /* good frames dequeued */
    uint64_t errors[CAPTURE_MAX_CAMERAS];   /* frames the driver flagged as corrupt or short, dropped */
    uint64_t unpaired[CAPTURE_MAX_CAMERAS]; /* good frames dropped without a set (incl. while
                                               another is lost) */
    uint64_t stale[CAPTURE_MAX_CAMERAS];    /* its frames in sets given back as stale */
    uint64_t pairs;          /* sets (pairs) delivered */
    uint64_t partial_sets;   /* of those, sets that lack a lost camera (partial_sets) */
    uint64_t stale_pairs;    /* sets given back because a newer one was ready in the same call */
    uint64_t losses[CAPTURE_MAX_CAMERAS];     /* times the camera was lost */
    uint64_t reconnects[CAPTURE_MAX_CAMERAS]; /* times it came back */
    uint64_t retries[CAPTURE_MAX_CAMERAS];    /* reopen attempts that failed */
    int lost[CAPTURE_MAX_CAMERAS];          /* 1 while the camera is lost */
    unsigned up;             /* bit k: camera k is not lost (capture_cameras_up) */
    int buffers[CAPTURE_MAX_CAMERAS];       /* buffers in use, mmap or the caller's (0 while lost
                                               or while a USERPTR camera waits for buffers) */
    double fps[CAPTURE_MAX_CAMERAS];        /* frame rate the driver set (0 if it does not say) */
    int64_t skew_ns;         /* skew of the last delivered pair: camera 1's to camera 0's */
    int64_t cam_skew_ns[CAPTURE_MAX_CAMERAS]; /* camera k's skew to the reference in the last
                                                 set it was in (0 for the reference) */
    unsigned last_mask;      /* the cameras of the last delivered set */
    int last_ref;            /* its reference (-1 before the first set) */
    int64_t max_skew_ns;     /* the tolerance in use */
} capture_stats;

typedef struct capture capture;

/* Opens and starts every camera. On failure *out is NULL and err holds one line naming the
 * device and the problem (for a size/format the device cannot do: what it offers). */
capture_status capture_open(const capture_config *cfg, capture **out, char *err, size_t errlen);

/* Waits up to timeout_ms (>= 0) for the next pair. CAPTURE_OK: *out holds it (release it);
 * otherwise *out is empty. Returns CAPTURE_LOST promptly when a camera goes away, then at each
 * timeout while one is still lost (capture_message() says which and why). */
capture_status capture_next(capture *c, capture_pair *out, int timeout_ms);

/* Gives the pair's buffers back to the drivers and empties *p (an empty pair is a no-op). */
void capture_release(capture *c, capture_pair *p);

/* N cameras (any count, the pair too): as capture_next / capture_release for a set. A set's
 * frames go back together; hold at most buffers - 2 sets at a time. */
capture_status capture_next_set(capture *c, capture_set *out, int timeout_ms);
void capture_release_set(capture *c, capture_set *s);

/* How messages name camera k of cfg: the pair's (ncameras 0 or 2) "left camera PATH" / "right
 * camera PATH", more cameras' "camera K PATH". */
void capture_camera_name(const capture_config *cfg, int k, char *buf, size_t len);

/* The cameras of the handle (2..CAPTURE_MAX_CAMERAS; 0 for NULL), and which of them stream:
 * bit k is set while camera k is not lost. */
int capture_cameras(const capture *c);
unsigned capture_cameras_up(const capture *c);

void capture_stats_get(const capture *c, capture_stats *out);

/* The latest state or problem as one line ("" while all is well): what a UI shows. */
const char *capture_message(const capture *c);

/* Stops the cameras and frees everything. Frames still held become invalid (mmap) or stay the
 * caller's memory (USERPTR). NULL is a no-op. */
void capture_close(capture *c);

/* ---- USERPTR: the caller's buffers ---------------------------------------------------------- */

/* The mode camera (0 left, 1 right; 0..ncameras-1) streams in: MMAP or USERPTR, never AUTO (decided at open; a
 * USERPTR camera whose driver refuses the caller's buffers becomes MMAP under AUTO). *why (may be
 * NULL) gets the reason for MMAP under AUTO/USERPTR, "" otherwise. */
capture_io capture_io_mode(const capture *c, int camera, const char **why);

/* The least size of a caller's buffer for camera: the driver's image size (sizeimage). */
size_t capture_buffer_bytes(const capture *c, int camera);

/* Gives a USERPTR camera the caller's buffers: n (4..32) distinct buffers of `bytes` each
 * (>= capture_buffer_bytes), any alignment the driver accepts, and starts it streaming into them
 * (see Buffers above for who owns a buffer when). For an MMAP camera it does nothing. n = 0 means
 * the caller has none: under AUTO the camera then streams into mmap buffers (logged); under
 * USERPTR that is an error. If the driver refuses the memory (VIDIOC_QBUF fails), AUTO falls back
 * to mmap for that camera (logged; capture_io_mode says so) and USERPTR fails with
 * CAPTURE_ERR_FORMAT; in both cases the driver holds none of the buffers afterwards. A lost
 * camera gets them when it is reopened. Giving a camera buffers while it has some is an error. */
capture_status capture_give_buffers(capture *c, int camera, void *const *buffers, int n,
                                    size_t bytes, char *err, size_t errlen);

/* Takes every buffer given with capture_give_buffers back: USERPTR cameras stop streaming and
 * forget them (the driver holds none afterwards), a frame waiting for its partner is dropped, and
 * the caller may free the buffers. Frames of those buffers that the caller holds are its memory;
 * releasing such a pair afterwards is a no-op. USERPTR cameras then deliver nothing until they
 * are given buffers again; MMAP cameras go on as they are. */
void capture_take_back_buffers(capture *c);

/* Config helpers: "auto" / "yuyv" / "grey" / "rgb24" (case-insensitive); -1 if unknown. */
int capture_format_from_str(const char *s);
const char *capture_format_to_str(capture_format f);
/* "mmap" / "auto" / "userptr" (case-insensitive); -1 if unknown. */
int capture_io_from_str(const char *s);
const char *capture_io_to_str(capture_io io);

/* "YUYV" from a V4L2 fourcc (unprintable bytes as '.'): camera listings and format messages. */
void camera_fourcc_str(uint32_t fourcc, char s[5]);

/* A frame as the stereo stage's input image. */
static inline stereo_image capture_frame_image(const capture_frame *f)
{
    stereo_image im = {f->data, f->width, f->height, f->pitch, f->format};
    return im;
}

#ifdef __cplusplus
}
#endif
#endif
