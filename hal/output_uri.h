/* SPDX-License-Identifier: Apache-2.0 */
/* output_uri.h — one way to name where the live app's results go, a URI per output, the
 * outputs' counterpart of source_uri.h (pure parsing, no I/O):
 *
 *   display://                 the window (the default when no output is named)
 *   file://DIR/%06d.pfm        one file per frame: .pfm (float disparity, +inf = invalid) or
 *                              .png (16-bit, 256 * disparity, 0 = invalid), as stereo-match
 *                              writes them; ?depth=1: depth instead (.pfm float metres, .png
 *                              16-bit millimetres); .ply: the point cloud (hal/depth.h)
 *   ros2://[NAMESPACE]?domain=N&frame_id=ID&qos=sensor|reliable&points=1&depth=32FC1|16UC1
 *                 &min_confidence=N
 *                              ROS 2 topics through DDS (app/outputs/output_ros2.c);
 *                              min_confidence (0..255, 0: off) publishes the pixels whose
 *                              confidence (stereo.h) is below N as invalid
 *   rtp://HOST:PORT            the colour-mapped view as H.264 over RTP (GStreamer); HOST a
 *                              name, an IPv4 address or an IPv6 one in brackets ([::1])
 *   rtsp://@:PORT/PATH         the same from an RTSP server the app runs (gst-rtsp-server)
 *   gst://appsrc ! ...         any GStreamer pipeline that starts with an appsrc the app feeds
 *                              (RGB frames of the colour-mapped view)
 *   http://@:PORT/?token=T     a web page of the live view (app/outputs/output_web.c), served on
 *                              every interface, IPv4 and IPv6 (@), or on the one address named
 *                              (http://127.0.0.1:PORT/, http://[::1]:PORT/); port 0: any free one
 *   https://@:PORT/?cert=C&key=K  the same over TLS, with a PEM certificate and its key
 *
 * Every query key is checked here, so a bad output is refused with the other settings, before
 * anything runs.
 */
#ifndef STEREO_OUTPUT_URI_H
#define STEREO_OUTPUT_URI_H

#include <stddef.h>

#define OUTPUT_URI_MAX 512     /* bytes of a URI, with its NUL (CONFIG_PATH_MAX) */
#define OUTPUT_MAX 8           /* outputs of one run ([output] uri .. uri8) */
#define OUTPUT_DOMAIN_MAX 232  /* DDS domain ids 0..232 (the RTPS port mapping's limit) */
#define OUTPUT_CONFIDENCE_MAX 255 /* the confidence map's values (stereo.h) */

typedef enum {
    OUT_DISPLAY = 0,
    OUT_FILE,
    OUT_ROS2,
    OUT_RTP,
    OUT_RTSP,
    OUT_GST,
    OUT_HTTP,
} output_kind;

typedef enum { OUT_FILE_PFM = 0, OUT_FILE_PNG, OUT_FILE_PLY } output_file_format;
typedef enum { OUT_QOS_SENSOR = 0, OUT_QOS_RELIABLE } output_qos;
typedef enum { OUT_DEPTH_32FC1 = 0, OUT_DEPTH_16UC1 } output_depth_encoding;

typedef struct {
    output_kind kind;
    char text[OUTPUT_URI_MAX];     /* the URI as given, for messages */
    /* file: the printf pattern (one frame-number conversion, '%' doubled elsewhere);
     * ros2: the namespace ("" or "a/b", no leading or trailing '/');
     * rtp: the host (an IPv6 address without its brackets); rtsp: the mount path ("/depth"); gst: the description;
     * http: the address listened on ("" for every interface; IPv6 without its brackets) */
    char target[OUTPUT_URI_MAX];
    /* file */
    output_file_format format;
    int depth;                     /* ?depth=1: depth rather than disparity (.pfm, .png) */
    /* ros2 */
    int domain;                    /* 0..OUTPUT_DOMAIN_MAX, default 0 */
    char frame_id[128];            /* default "stereo_optical_frame" */
    output_qos qos;                /* sensor (best effort, keep last 1: the default), reliable */
    int points;                    /* ?points=1: also sensor_msgs/PointCloud2 */
    output_depth_encoding depth_encoding; /* 32FC1 metres (default) or 16UC1 millimetres */
    int depth_given;               /* ?depth= was given: the URI asks for depth by name */
    int min_confidence;            /* 0..OUTPUT_CONFIDENCE_MAX, 0 (default): nothing masked */
    /* rtp, rtsp, http (http: the address listened on, "" for every interface, in target) */
    int port;
    int bitrate_kbps;              /* ?bitrate=KBPS, default 4000 */
    /* http */
    char token[65];                /* ?token=SECRET: required on every request ("": none) */
    int tls;                       /* https://: TLS with the certificate and key below */
    char cert[256], key[256];      /* https: ?cert=FILE&key=FILE, PEM (%XX decoded) */
} output_uri;

/* Parses one URI. 0, or -1 with "'TEXT': what is wrong (what to write instead)" in err. */
int output_uri_parse(const char *text, output_uri *out, char *err, size_t errlen);

/* "display", "file", "ros2", "rtp", "rtsp", "gst", "http" (https:// is OUT_HTTP with tls) */
const char *output_uri_kind_name(output_kind k);

/* A file a gst:// description writes: a filesink's, multifilesink's or splitmuxsink's location
 * (or a file:// URI at a sink's place, of which GStreamer makes a filesink). */
#define OUTPUT_GST_FILES_MAX 8
typedef struct {
    char element[16];              /* "filesink", "multifilesink", "splitmuxsink" */
    char location[OUTPUT_URI_MAX]; /* as GStreamer sets it: quotes and escapes removed */
    int is_pattern;                /* multi/splitmuxsink with a '%': a printf pattern of the
                                      file's index (0, 1, ... by default) */
} output_gst_file;

/* The files a gst:// description (output_uri.target) writes, read as gst_parse_launch reads the
 * text: location=a.png, location = "a b.png", location=a\ b.png (single quotes stay
 * part of the name, as GStreamer keeps them); the last location of an element counts; a caps
 * filter between links is skipped. Other elements' locations are not files it writes (sources
 * read theirs; a location of "" or NULL names no file: GStreamer refuses it at start). The
 * count (0..max), or -1 with one line in err: more than max files, or a name too long. */
int output_gst_files(const char *desc, output_gst_file *files, int max, char *err,
                     size_t errlen);

/* Whether the output needs the camera (f, B: hal/depth.h): file depth and .ply; ros2 with
 * ?points=1 or ?depth=ENCODING (what it asks for by name would not go out). A plain ros2 output
 * uses the camera where given (depth, CameraInfo) and publishes the rest without it. */
int output_uri_needs_camera(const output_uri *u);

/* Whether the output masks by confidence (ros2 with ?min_confidence=N, N > 0): the stage must
 * compute the confidence map (stereo_params.confidence) and the frames carry it. */
int output_uri_needs_confidence(const output_uri *u);

#endif
