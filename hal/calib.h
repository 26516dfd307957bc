/* SPDX-License-Identifier: Apache-2.0 */
/* calib.h — a stereo calibration read from OpenCV's FileStorage YAML (what tools/stereo-calibrate
 * and cv2.FileStorage write) or from the two ROS camera_info files of a stereo calibration, and
 * the rectification maps computed from it in C, so the app can start from a calibration file as
 * well as from a map file (hal/mapfile.h) without OpenCV.
 *
 * Both are read through libyaml by hal/calib_yaml.h, which says what a file may hold (OpenCV's
 * "%YAML:1.0" first line, !!opencv-matrix with rows cols dt data, plain finite numbers, one
 * document, keys once, no anchors or aliases, at most 4 MB) and gives every error as one line,
 * "<path>: line N: <key>: what is wrong" (or "<path>: missing key 'Q'"); libyaml's syntax errors
 * too.
 *
 * OpenCV calibration YAML (calib_read_yaml): the first line "%YAML:1.0" (or "%YAML 1.0", 1.1,
 * 1.2), then "---". Required keys: image_width, image_height (camera image size), M1 D1 M2 D2
 * (3x3 camera matrices; 4, 5 or 8 distortion coefficients k1 k2 p1 p2 [k3 [k4 k5 k6]], or 12 / 14
 * with the extra ones 0), R T (pose of the right camera in the left camera's frame), R1 R2 P1 P2
 * Q (stereoRectify's results), every matrix tagged !!opencv-matrix with dt d or f. Optional:
 * rectified_width, rectified_height (default: the image size), rms. Other keys (E, F,
 * calibration_time, ...) are checked for syntax and otherwise ignored.
 *
 * ROS camera_info (calib_read_camera_info), one file per camera, as ROS camera_calibration and
 * camera_info_manager write them: no header needed (a %YAML line then needs "---", as in YAML),
 * matrices untagged (a key followed by the indented fields rows, cols, data; an
 * "!!opencv-matrix" tag with dt is accepted too). Required: image_width,
 * image_height, camera_matrix (3x3), distortion_coefficients (one row or column: plumb_bob 5 or
 * 4, rational_polynomial 8), rectification_matrix (3x3, a rotation), projection_matrix (3x4).
 * distortion_model: plumb_bob (also when absent, as ROS's own parser) or rational_polynomial;
 * any other (equidistant, ...) is refused. camera_name and other keys are ignored. The two files
 * must come from one stereo calibration: R and P of each are stereoRectify's R1/P1 and R2/P2,
 * so the maps are those of the OpenCV YAML with the same numbers (M = camera_matrix, D,
 * R1 R2, P1 P2), for images of the camera size. Refused, naming the file at fault: different
 * image sizes; a left projection_matrix with a baseline (files swapped); a right one without
 * (P[0][3] = 0; with both rectification matrices identity: two mono calibrations, not a
 * stereo-rectified pair); a vertical pair; P[0][3] > 0 (swapped); fx, fy or cy of the two
 * projection matrices more than 0.01 px apart. The pose comes from the rectification: with
 * t = (P2[0][3] / P2[0][0], P2[1][3] / P2[1][1], 0) the shift between the rectified frames,
 * R = R2^T R1 and T = R2^T t (|T| = B, as P2[0][3] = -fx B); Q as stereoRectify; rms -1.
 *
 * Where a calibration is named by one string (calib_read, calib_load_maps, stereo-match --maps,
 * the live app's [calibration] maps), "LEFT,RIGHT" (one comma; blanks around it ignored) names
 * the camera_info pair; a map file or YAML whose name contains a comma cannot be given there.
 *
 * Maps (calib_compute_maps) follow OpenCV's initUndistortRectifyMap for CV_16SC2: for the output
 * pixel (u, v) of camera k,
 *   (x, y, w) = inv(P_k[:, 0:3] * R_k) * (u, v, 1),  x' = x / w,  y' = y / w,  r2 = x'^2 + y'^2,
 *   radial = (1 + k1 r2 + k2 r2^2 + k3 r2^3) / (1 + k4 r2 + k5 r2^2 + k6 r2^3),
 *   x'' = x' radial + 2 p1 x'y' + p2 (r2 + 2 x'^2),  y'' = y' radial + p1 (r2 + 2 y'^2) + 2 p2 x'y',
 *   source = (fx x'' + cx, fy y'' + cy)            (fx, fy, cx, cy from M_k; skew ignored, as OpenCV)
 * then each coordinate times 32 rounded to the nearest integer (ties to even, as cvRound), split
 * into the integer part (floor, >> 5) and the 5-bit fraction (& 31): xy = integer parts,
 * frac = fy * 32 + fx (stereo.h / rectify.h). Integer parts beyond int16 are clamped (OpenCV's
 * cast wraps them); such pixels are far outside the image, hence invalid either way.
 */
#ifndef STEREO_CALIB_H
#define STEREO_CALIB_H

#include <stddef.h>

#include "depth.h"
#include "stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CALIB_MAX_DIST 8  /* k1 k2 p1 p2 k3 k4 k5 k6 */

typedef struct {
    int image_width, image_height; /* camera images */
    int rect_width, rect_height;   /* rectified output (the size P1, P2 were computed for) */
    double M[2][3][3];             /* camera matrices M1, M2 */
    double D[2][CALIB_MAX_DIST];   /* distortion k1 k2 p1 p2 k3 k4 k5 k6, absent ones 0 */
    int ndist[2];                  /* how many the file gave: 4, 5 or 8 */
    double R[3][3], T[3];          /* right camera pose: X_right = R X_left + T */
    double Rrect[2][3][3];         /* R1, R2: rotations into the rectified frames */
    double P[2][3][4];             /* P1, P2: projections in the rectified frames */
    double Q[4][4];                /* disparity-to-depth mapping */
    double rms;                    /* stereo reprojection error in px, -1 when absent */
} stereo_calib;

/* Reads a calibration YAML. 0, or -1 with "<path>: ..." in err; *out is then zeroed. */
int calib_read_yaml(const char *path, stereo_calib *out, char *err, size_t errlen);

/* Reads the two ROS camera_info files of a stereo calibration (left, right) into *out (see
 * above). 0, or -1 with "<path of the file at fault>: ..." in err; *out is then zeroed. */
int calib_read_camera_info(const char *left_path, const char *right_path, stereo_calib *out,
                           char *err, size_t errlen);

/* A calibration named by spec: "LEFT,RIGHT" camera_info files, or an OpenCV calibration YAML.
 * 0, or -1 with err; *out is then zeroed. */
int calib_read(const char *spec, stereo_calib *out, char *err, size_t errlen);

/* Computes both maps (left, right) for an out_w x out_h output; 0 for either takes the
 * calibration's rectified size. Allocates; release with mapfile_free. 0, or -1 with err. */
int calib_compute_maps(const stereo_calib *c, int out_w, int out_h, stereo_map maps[2],
                       char *err, size_t errlen);

/* Reads rectification maps from a map file (hal/mapfile.h) or a calibration YAML (computing
 * them), told apart by content, or from a "LEFT,RIGHT" pair of camera_info files. When
 * cam_w > 0 the maps must be for cam_w x cam_h camera images, else it fails naming the file and
 * both sizes. Release with mapfile_free. */
int calib_load_maps(const char *path, int cam_w, int cam_h, stereo_map maps[2], char *err,
                    size_t errlen);

/* calib_load_maps, and the rectified left camera for depth (hal/depth.h) where the calibration
 * gives one: a YAML or camera_info pair always (calib_camera), a map file of version 2 when
 * written with one (hal/mapfile.h); *has_camera says which (0: a version 1 map file, or one
 * without a camera). cam and has_camera may be NULL. */
int calib_load_maps_camera(const char *path, int cam_w, int cam_h, stereo_map maps[2],
                           depth_camera *cam, int *has_camera, char *err, size_t errlen);

/* The rectified left camera of a calibration: f = P1[0][0], (cx, cy) = (P1[0][2], P1[1][2]),
 * B = calib_baseline, doffs = P2[0][2] - P1[0][2]. 0, or -1 with err when it fails
 * depth_camera_check (e.g. a zero baseline). */
int calib_camera(const stereo_calib *c, depth_camera *cam, char *err, size_t errlen);

/* ---- rig files: N cameras rectified to one common plane (stereo-calibrate --view) -------------
 *
 * An OpenCV FileStorage YAML ("%YAML:1.0", read by hal/calib_yaml.h as the pair YAML is; format
 * in docs/calibration.md). Required: rig_cameras (2 .. CALIB_RIG_MAX), reference (0 ..
 * rig_cameras - 1), image_width, image_height, focal_px and cy (common to every camera), and per
 * camera K = 0 .. rig_cameras - 1: camK_M (3x3), camK_D (4, 5 or 8 coefficients, as D1),
 * camK_R (3x3 rectifying rotation: camera K -> the common rectified frame), camK_P (3x4: [f 0 cx
 * -f*B_K; 0 f cy 0; 0 0 1 0], B_K the signed position of camera K along the rig relative to the
 * reference) and camK_baseline_ratio (B_K / B_first, the first other camera being camera 0, or 1
 * when the reference is 0: its ratio is 1, the reference's 0; what stereo-match --baselines
 * takes). Optional: rectified_width, rectified_height (default the image size); other keys (cx,
 * camK_position, camK_off_line, camK_pose_R, camK_pose_T, camK_rms, ...) are ignored. Refused,
 * with "<path>: line N: <key>: ...": a camK_ key of a camera K >= rig_cameras, a missing key of
 * a camera below it, a reference outside the rig, a camK_R that is not a rotation, a camK_P whose
 * f or cy differ from focal_px, cy (more than 0.01 px) or that is not of the form above, a ratio
 * that disagrees with the projections (P[0][3] / P_first[0][3]), a first other camera that is
 * not to the right of the reference (P[0][3] >= 0: negative disparities). Each camera's map is
 * computed as calib_compute_maps computes one (the same formula, exactly), so a two-camera rig
 * file with the numbers of a pair YAML (M1 D1 R1 P1 = cam0, M2 D2 R2 P2 = cam1) gives its maps
 * bit for bit. calib_load_maps takes a two-camera rig file (maps: reference, other camera); for
 * more, the pair map files (calib_rig_map_path) hold two cameras' maps each. */

#define CALIB_RIG_MAX 8

typedef struct {
    int ncams, reference;
    int first;                     /* the first other camera: ratio 1, to the right */
    int image_width, image_height; /* camera images (all the same size) */
    int rect_width, rect_height;   /* rectified output */
    double focal, cx, cy;          /* the common camera matrix (cx: the first other camera's) */
    double M[CALIB_RIG_MAX][3][3];
    double D[CALIB_RIG_MAX][CALIB_MAX_DIST];
    int ndist[CALIB_RIG_MAX];
    double R[CALIB_RIG_MAX][3][3]; /* rectifying rotations */
    double P[CALIB_RIG_MAX][3][4]; /* projections in the common rectified frame */
    double ratio[CALIB_RIG_MAX];   /* baseline ratios: reference 0, first other camera 1 */
} calib_rig;

/* Reads a rig file. 0, or -1 with "<path>: ..." in err; *out is then zeroed. */
int calib_rig_read(const char *path, calib_rig *out, char *err, size_t errlen);

/* 1 when path is a YAML with the key rig_cameras (a rig file, to be read by calib_rig_read), 0
 * when it has none, -1 with err when it is no readable calibration YAML. */
int calib_is_rig(const char *path, char *err, size_t errlen);

/* Every camera's map (maps[0 .. ncams - 1]) for an out_w x out_h output (0x0: the rectified
 * size). Release with calib_rig_free_maps. 0, or -1 with err (nothing then allocated). */
int calib_rig_compute_maps(const calib_rig *rig, int out_w, int out_h,
                           stereo_map maps[CALIB_RIG_MAX], char *err, size_t errlen);

/* calib_rig_read + calib_rig_compute_maps at the rectified size; when cam_w > 0 the rig must be
 * for cam_w x cam_h camera images. 0, or -1 with err (nothing then allocated). */
int calib_rig_load(const char *path, int cam_w, int cam_h, calib_rig *rig,
                   stereo_map maps[CALIB_RIG_MAX], char *err, size_t errlen);

/* Frees all CALIB_RIG_MAX maps (zeroed entries are fine). */
void calib_rig_free_maps(stereo_map maps[CALIB_RIG_MAX]);

/* The pair map file of (reference, camera k) for the map file name maps, as stereo-calibrate
 * --view --maps names it: "-R-K" before the extension ("rig.maps" -> "rig-0-2.maps", "rig" ->
 * "rig-0-2"). 0, or -1 when it does not fit in n bytes. */
int calib_rig_map_path(const char *maps, int reference, int k, char *out, size_t n);

/* Distance between the camera centres, |T|, in the calibration's unit (stereo-calibrate: m). */
double calib_baseline(const stereo_calib *c);

/* Focal length of the rectified images in px (P1[0][0]): depth Z = f * B / disparity. */
double calib_focal_px(const stereo_calib *c);

#ifdef __cplusplus
}
#endif
#endif
