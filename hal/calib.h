/* calib.h — a stereo calibration read from OpenCV's FileStorage YAML (what tools/stereo-calibrate
 * and cv2.FileStorage write), and the rectification maps computed from it in C, so the app can
 * start from a calibration file as well as from a map file (hal/mapfile.h) without OpenCV.
 *
 * The YAML subset read (strictly):
 *   %YAML:1.0                      first line ("%YAML 1.0" too), then "---"
 *   key: scalar                    integers, reals (".Nan" / ".Inf" refused), quoted strings
 *   key: !!opencv-matrix           followed by the indented fields rows, cols, dt, data: [ ... ]
 *                                  (data may span lines; rows*cols numbers)
 * and "#" comments. Required keys: image_width, image_height (camera image size), M1 D1 M2 D2
 * (3x3 camera matrices; 4, 5 or 8 distortion coefficients k1 k2 p1 p2 [k3 [k4 k5 k6]]), R T (pose
 * of the right camera in the left camera's frame), R1 R2 P1 P2 Q (stereoRectify's results).
 * Optional: rectified_width, rectified_height (default: the image size), rms. Other keys are
 * checked for syntax and otherwise ignored. Errors are one line,
 * "<path>: line N: <key>: what is wrong" (or "<path>: missing key 'Q'").
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

/* Computes both maps (left, right) for an out_w x out_h output; 0 for either takes the
 * calibration's rectified size. Allocates; release with mapfile_free. 0, or -1 with err. */
int calib_compute_maps(const stereo_calib *c, int out_w, int out_h, stereo_map maps[2],
                       char *err, size_t errlen);

/* Reads rectification maps from either a map file (hal/mapfile.h) or a calibration YAML
 * (computing them), told apart by content. When cam_w > 0 the maps must be for cam_w x cam_h
 * camera images, else it fails naming the file and both sizes. Release with mapfile_free. */
int calib_load_maps(const char *path, int cam_w, int cam_h, stereo_map maps[2], char *err,
                    size_t errlen);

/* Distance between the camera centres, |T|, in the calibration's unit (stereo-calibrate: m). */
double calib_baseline(const stereo_calib *c);

/* Focal length of the rectified images in px (P1[0][0]): depth Z = f * B / disparity. */
double calib_focal_px(const stereo_calib *c);

#ifdef __cplusplus
}
#endif
#endif
