/* SPDX-License-Identifier: Apache-2.0 */
/* config.h — the live app's settings: defaults, the INI file, command-line overrides.
 *
 * The file (examples in config/) is INI: [section] headers, `key = value` lines, `#` or `;`
 * comments. Every value is validated; an unknown section or key, a bad value, or a repeated key is
 * an error reported as "FILE:LINE: KEY: what is wrong", and nothing is opened before the whole file
 * has been read. Command-line options override the file through live_config_set, with the same
 * checks ("--KEY: what is wrong").
 *
 * Sections and keys (the header of each field names its key):
 *   [source]       left, right (two URIs: one per camera) or input (one side-by-side stream):
 *                  v4l2:///dev/video0, csi://0, rtsp://..., file://PATH, gst://PIPELINE, synth://
 *                  (hal/source_uri.h); or, the older way, type = synth | v4l2 | sbs | files with
 *                  the devices in [camera] and the patterns in [files]; view2 .. view7: the
 *                  URIs of the views after left (the reference) and right (view 1) when [stereo]
 *                  baselines gives more than two views (v4l2 cameras or file:// sequences, the
 *                  kind of left and right; synth:// renders every view itself)
 *   [camera]       left, right (v4l2: device paths), device (sbs: one side-by-side camera),
 *                  width, height, fps, format = auto|yuyv|grey|rgb24, buffers, max_skew_ms
 *   [controls]     any V4L2 control by name = integer (e.g. auto_exposure = 1, gain = 10)
 *   [files]        left, right (printf patterns such as left_%04d.png), fps (0 = as fast as
 *                  possible), loop = true|false
 *   [synth]        width, height, fps, lose_view (VIEW,FIRST,LAST: view VIEW is lost for the
 *                  frames FIRST..LAST, a camera unplugged and back, for testing; empty: none)
 *   [stereo]       baselines (1,B2,...: the views' baseline ratios, 2 + the count after the
 *                  first views; "1": the pair), combine = sides|sum, mi_warm, mi_restart (cost
 *                  mi: the previous frame's disparity as the initial one, the hierarchy again
 *                  when the valid fraction collapses), and the key of each stage option
 *                  (gpu/stereo_options.c's table: disparities, min_disparity, cost, ...,
 *                  subpixel, lr_check, median, backend, threads, sms), whose values and
 *                  messages are stereo-match's
 *   [calibration]  maps (a map file, a calibration YAML, or LEFT,RIGHT: the two ROS camera_info
 *                  files of a stereo calibration; empty: inputs already rectified); focal (px),
 *                  baseline (m), center (CX,CY px): the camera for depth (hal/depth.h) when
 *                  maps gives none (no maps, or a version 1 map file); 0 / empty: not given
 *   [display]      headless, fullscreen, width, height (window), colormap = turbo|jet|grey,
 *                  view = disparity|left|pair|depth, color_range = fixed|auto, legend (the
 *                  colour bar in the overlay), font (a TTF path)
 *   [record]       dir (write synchronised raw pairs + timestamps there; empty = off), depth
 *                  (also each pair's depth, depth_NNNNNN.png, 16-bit mm; needs a camera)
 *   [run]          frames (stop after N, 0 = until closed), screenshot (PNG after the last frame)
 *   [output]       uri, uri2 .. uri8: outputs as URIs (hal/output_uri.h: display://, file://,
 *                  ros2://, rtp://, rtsp://, gst://); none: the window
 */
#ifndef STEREO_APP_CONFIG_H
#define STEREO_APP_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "capture.h"
#include "colormap.h"
#include "output_uri.h"
#include "source_uri.h"
#include "stereo.h"
#include "stereo_options.h"

#define CONFIG_PATH_MAX 512
#define LIVE_CONFIG_MAX_KEYS 96 /* room for the keys of app/config.c's table */

typedef enum { SOURCE_SYNTH = 0, SOURCE_V4L2, SOURCE_SBS, SOURCE_FILES } live_source;
typedef enum { VIEW_DISPARITY = 0, VIEW_LEFT, VIEW_PAIR, VIEW_DEPTH } live_view;

typedef struct {
    /* [source] type */
    live_source source;
    /* [source] left, right, input: URIs (hal/source_uri.h); when any is set it names the source
     * and type is not used. Setting type empties them; setting input empties left and right,
     * and left or right empties input (the last given wins: a file, then the command line);
     * an empty one names nothing and empties no other. */
    char source_left[CONFIG_PATH_MAX], source_right[CONFIG_PATH_MAX];
    char source_input[CONFIG_PATH_MAX];
    /* [source] view2 .. view7: source_view[i] is view i's URI ([0] and [1] unused: left and
     * right); used up to stereo.views - 1, the rest must be empty (live_config_check) */
    char source_view[STEREO_MAX_VIEWS][CONFIG_PATH_MAX];
    /* [camera] */
    char left_device[CONFIG_PATH_MAX], right_device[CONFIG_PATH_MAX]; /* left, right */
    char sbs_device[CONFIG_PATH_MAX];                                 /* device */
    int width, height, fps;      /* camera frames (sbs: the whole left|right frame) */
    capture_format format;
    int buffers;                 /* 4..32 */
    int max_skew_ms;             /* 0 = half a frame period */
    /* [controls] */
    int ncontrols;
    capture_control controls[CAPTURE_MAX_CONTROLS];
    /* [files] left, right, fps, loop */
    char left_pattern[CONFIG_PATH_MAX], right_pattern[CONFIG_PATH_MAX];
    int files_fps;
    int files_loop;
    /* [synth] width, height, fps */
    int synth_width, synth_height, synth_fps;
    /* [synth] lose_view VIEW,FIRST,LAST (source frame numbers, from 0): that view is reported
     * lost for those frames; synth_lose[0] = 0: none */
    int synth_lose[3];
    /* [stereo] as given: the keys of the stage option table (gpu/stereo_options.h, the parser
     * of stereo-match's options) set through it, baselines, combine, mi_warm and mi_restart
     * into stage.p; penalties not given follow the cost and window, as in stereo-match */
    stereo_options stage;
    /* the stage's parameters: stage resolved (stereo_options_finish) after every key;
     * width/height are set by the app from the source (or the maps) */
    stereo_params stereo;
    /* [calibration] maps: a map file, a calibration YAML or "LEFT,RIGHT" camera_info files */
    char maps[CONFIG_PATH_MAX];
    /* [calibration] focal, baseline (0: not given), center ("" or "CX,CY") */
    double focal_px, baseline;
    char center[64];
    /* [display] */
    int headless, fullscreen;
    int window_width, window_height; /* 0 = the image size */
    colormap_id colormap;
    live_view view;
    int color_range_auto;   /* color_range: 0 fixed (the search range), 1 auto (percentiles) */
    int legend;             /* the colour bar with ticks in the overlay */
    char font[CONFIG_PATH_MAX];
    /* [record] dir */
    char record_dir[CONFIG_PATH_MAX];
    int record_depth;            /* [record] depth */
    /* [run] frames, screenshot */
    long frames;
    char screenshot[CONFIG_PATH_MAX];
    /* [output] uri, uri2 .. uri8: where the results go (hal/output_uri.h), "" = unused; none
     * given: the window (display://), or nothing without a display */
    char output[OUTPUT_MAX][CONFIG_PATH_MAX];
    /* where each key's value came from, for messages about it (live_config_origin): the file
     * live_config_load read and the line of each key set there; 0 = the default, -1 =
     * live_config_set (the command line) */
    char config_file[CONFIG_PATH_MAX];
    int key_line[LIVE_CONFIG_MAX_KEYS];
} live_config;

/* Defaults: the generated scene at 640x480 / 30 fps, stage defaults with D = 64, turbo,
 * the disparity view, DejaVu Sans from fonts-dejavu-core, window sized to the image. */
void live_config_defaults(live_config *c);

/* Reads FILE over the current values. 0, or -1 with "FILE:LINE: KEY: what is wrong" in err. */
int live_config_load(const char *path, live_config *c, char *err, size_t errlen);

/* The same from an open stream (left open), named path in messages. */
int live_config_load_stream(FILE *f, const char *path, live_config *c, char *err, size_t errlen);

/* Sets one key (as in the file) from text; the command line uses it for overrides.
 * 0, or -1 with "KEY: what is wrong" in err (unknown section/key, bad value). */
int live_config_set(live_config *c, const char *section, const char *key, const char *value,
                    char *err, size_t errlen);

/* [calibration] center as numbers: 1 with out filled, 0 when not given. */
int live_config_center(const live_config *c, double out[2]);

/* Cross-field checks after everything is set (e.g. v4l2 needs both devices, files both
 * patterns, D < width). 0, or -1 with the reason. */
int live_config_check(const live_config *c, char *err, size_t errlen);

/* A files-source pattern: exactly one integer conversion (%d, %i, %u; flags 0 - + space, width
 * up to 99) for the frame number, "%%" for a literal percent sign. 0, or -1 with
 * "KEY: what is wrong" in err. */
int live_config_check_pattern(const char *key, const char *pattern, char *err, size_t errlen);

/* Where SECTION.KEY was set: "FILE:LINE" into buf and 1 when a configuration file set it
 * (and no live_config_set since), else "" and 0 (the default or the command line). */
int live_config_origin(const live_config *c, const char *section, const char *key, char *buf,
                       size_t len);

/* Writes every key of [SECTION] (not [controls]) with its current value as INI lines: the
 * "[SECTION]" header, then "key = value" in the order of config/README.md. What it writes loads
 * back (live_config_load) to the same values. 0, or -1 for an unknown section or a value that
 * cannot be written as one line (a path with a newline or a misplaced comment). */
int live_config_write_section(FILE *f, const live_config *c, const char *section);

/* The URIs of views 2 .. stereo.views - 1 ([source] view2 ...), parsed, into out[2 ..]; for a
 * source of more than two views (plan from live_config_plan). 0, or -1 with "viewN: what is
 * wrong". */
int live_config_view_uris(const live_config *c, const source_plan *plan,
                          source_uri out[STEREO_MAX_VIEWS], char *err, size_t errlen);

/* Which backend reads the configured source, and its URIs: from [source] left/right/input when
 * set, else from type with the [camera] / [files] keys (v4l2 -> left/right v4l2 devices, sbs ->
 * input v4l2 device, files -> left/right image sequences, synth -> input synth://; plan->
 * from_type is then 1). 0, or -1 with "KEY: what is wrong". */
int live_config_plan(const live_config *c, source_plan *plan, char *err, size_t errlen);

const char *live_source_to_str(live_source s);
const char *live_view_to_str(live_view v);

#endif
