/* SPDX-License-Identifier: Apache-2.0 */
/* stereodepth_abi.h — the C interface of build/libstereodepth.so, which the Python module
 * (python/stereodepth/__init__.py) calls through ctypes. It is the only thing the library
 * exports (python/stereodepth.map): a small, handle-based interface with plain C types, so that
 * the Python side needs no compiled extension and no knowledge of stereo_params' layout.
 *
 * Every call that can fail returns SD_OK, SD_EVALUE (a bad option, argument or image: the CLI
 * would exit 2, Python raises ValueError) or SD_ERUNTIME (no CUDA device for backend cuda, out
 * of memory, a file that cannot be read, a CUDA error: Python raises RuntimeError), with one
 * line in err — for the options the very line stereo-match prints between "stereo-match: " and
 * " (see --help)" (gpu/stereo_options.h).
 *
 * Lifetimes: sd_matcher_create gives a handle that owns its stage (all buffers allocated there;
 * sd_matcher_compute allocates nothing) until sd_matcher_destroy. A NULL handle is refused with
 * SD_EVALUE ("the matcher is closed"); a destroyed handle must not be used again (the Python
 * Matcher drops its handle on close and refuses calls after it). One call at a time per handle
 * (the Python Matcher holds a lock); different handles are independent.
 *
 * SD_ABI_VERSION changes whenever a signature or meaning here changes; the Python module refuses
 * a library whose sd_abi_version() differs from the one it was written for.
 */
#ifndef STEREODEPTH_ABI_H
#define STEREODEPTH_ABI_H

#include <stddef.h>
#include <stdint.h>

#define SD_ABI_VERSION 5

enum { SD_OK = 0, SD_EVALUE = 1, SD_ERUNTIME = 2 };

typedef struct sd_matcher sd_matcher;

int sd_abi_version(void);

/* The project version ("0.5.0", the file VERSION) and the git commit the library was built
 * from ("e30971e", "-dirty" with edits, "unknown"). */
const char *sd_version(void);
const char *sd_commit(void);

/* The stage option names, comma-separated in stereo-match --help order, each followed by '='
 * when it takes a value ("disparities=,min-disparity=,...,no-subpixel,no-lr,..."). */
const char *sd_option_names(void);

/* One field of the stage option table's row `index` (0, 1, ... in --help order;
 * gpu/stereo_options.h): the long name, the keyword argument, the value's metavar (NULL for a
 * flag), the range, the default (NULL for a flag), the help, what more to know (may be NULL),
 * the live app's [stereo] key, the short flag ("d"; NULL: none). NULL past the last row or for
 * an unknown field. */
enum { SD_OPT_NAME = 0, SD_OPT_KWARG, SD_OPT_METAVAR, SD_OPT_RANGE, SD_OPT_DEFAULT, SD_OPT_HELP,
       SD_OPT_MORE, SD_OPT_KEY, SD_OPT_SHORT };
const char *sd_option_field(int index, int field);

/* The backends built in: "cpu" or "cpu,cuda". */
const char *sd_backends(void);

/* A matcher for pairs of width x height camera images. names / values: n options by their CLI
 * names without "--" (values[i] NULL for a flag), applied in order as stereo-match applies its
 * command line. maps: NULL, or what stereo-match --maps takes (a map file, a calibration YAML,
 * or "LEFT,RIGHT" camera_info files; the output is then the rectified size). */
int sd_matcher_create(int width, int height, int n, const char *const *names,
                      const char *const *values, const char *maps, sd_matcher **out, char *err,
                      size_t errlen);

/* Matches one pair: 8-bit images of the matcher's input size, each with 1 (grey) or 3 channels
 * (RGB, in that byte order; the two may differ, as stereo-match's inputs may), pitch bytes
 * between rows (at least width * channels; pixels contiguous within a row). out: out_w * out_h
 * floats (sd_matcher_shape), row-major: the left disparity in pixels, NaN where invalid —
 * exactly the values stereo-match writes to a .pfm (which has +inf there). */
int sd_matcher_compute(sd_matcher *m, const uint8_t *left, size_t left_pitch,
                       int left_channels, const uint8_t *right, size_t right_pitch,
                       int right_channels, int width, int height, float *out, size_t out_count,
                       char *err, size_t errlen);

/* The number of disparities the pair needs (stereo-match -d auto: stereo_auto_disparities,
 * gpu/stereo.h): options and maps as sd_matcher_create takes them (disparities may be "auto";
 * min-disparity, backend, threads and sms are read), the pair as sd_matcher_compute.
 * out[0] = D, out[1] = the scene's top disparity in px, out[2] = 1 when that is the end of the
 * range measured, out[3] = 1 when D was clamped to the most the stage takes. */
int sd_auto_disparities(int width, int height, int n, const char *const *names,
                        const char *const *values, const char *maps, const uint8_t *left,
                        size_t left_pitch, int left_channels, const uint8_t *right,
                        size_t right_pitch, int right_channels, int out[4], char *err,
                        size_t errlen);

/* The other results of the last sd_matcher_compute, out_count = out_w * out_h values
 * (sd_matcher_shape) of the kind asked for:
 *   SD_RIGHT       the right view's disparity, floats in pixels, NaN where invalid (it exists
 *                  only with the left-right check on, the default; otherwise SD_EVALUE);
 *   SD_CONFIDENCE  the confidence of the left disparity, bytes 0..255, 0 where it is invalid
 *                  (stereo.h);
 *   SD_RECT_LEFT, SD_RECT_RIGHT  the rectified grey images, bytes (the inputs in grey when the
 *                  matcher has no maps).
 * SD_EVALUE before the first compute, for an unknown kind or a wrong count. The values stay
 * until the next compute. */
enum { SD_RIGHT = 0, SD_CONFIDENCE = 1, SD_RECT_LEFT = 2, SD_RECT_RIGHT = 3 };
int sd_matcher_result(const sd_matcher *m, int kind, void *out, size_t out_count, char *err,
                      size_t errlen);

/* Input (camera) size and output (rectified) size. SD_EVALUE on a NULL handle. */
int sd_matcher_shape(const sd_matcher *m, int *in_w, int *in_h, int *out_w, int *out_h);

/* The backend the stage runs on ("cpu" / "cuda"), and why AUTO fell back ("" if it did not).
 * "" for a NULL handle. */
const char *sd_matcher_backend(const sd_matcher *m);
const char *sd_matcher_note(const sd_matcher *m);

void sd_matcher_destroy(sd_matcher *m);

/* The rectified left camera of a calibration, as stereo-match --maps reads it for --depth and
 * --ply (hal/depth.h, calib_load_maps_camera): a calibration YAML, a camera_info pair or a
 * version 2 map file that carries the camera. out[0..4] = f (px), B (the calibration's unit),
 * cx, cy (px), doffs (px: the right principal point's x minus the left's); size[0..1] = the
 * rectified width, height. A version 1 map file (no camera) is a runtime error saying so. */
int sd_calibration(const char *spec, double out[5], int size[2], char *err, size_t errlen);

#endif
