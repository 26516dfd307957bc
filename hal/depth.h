/* SPDX-License-Identifier: Apache-2.0 */
/* depth.h — disparity to depth in metres: the depth image (16-bit millimetres or float metres)
 * and the point cloud (binary PLY), written by stereo-match (--depth, --ply) and the live app
 * (key p, --record with depth), and the depth the live app shows under the cursor. One rule
 * for all of them, so a file and the on-screen readout agree to the millimetre.
 *
 * The camera is the rectified left view (stereoRectify's P1, P2 and Q): focal length f in px,
 * principal point (cx, cy) in px, baseline B (the calibration's unit; stereo-calibrate writes
 * metres when --square is in metres) and doffs = cx_right - cx_left in px (0 with OpenCV's
 * default CALIB_ZERO_DISPARITY). Pixel coordinates follow OpenCV: the centre of pixel (x, y)
 * (column x, row y) is at (x, y), so the image centre is ((w - 1) / 2, (h - 1) / 2).
 *
 * A stage disparity d16 (int16, 16 * d, the full disparity with --min-disparity included,
 * STEREO_INVALID; gpu/stereo.h) gives, as OpenCV's reprojectImageTo3D with Q would:
 *   Z = f * B * 16 / (d16 + 16 * doffs)      X = (x - cx) * Z / f      Y = (y - cy) * Z / f
 * valid only where d16 is valid and d16 + 16 * doffs > 0 (a non-positive denominator is a point at
 * infinity or behind the camera: no depth). In double arithmetic, in exactly this order:
 *   fb16 = ((f * B) * 1000) * 16   (millimetres)   or   ((f * B) * 1) * 16   (metres),
 *   den  = d16 + 16 * doffs,  q = fb16 / den.
 * Millimetres (the 16-bit PNG, the RealSense / ROS depth-image convention, 0 = no depth):
 *   depth_mm = floor(q + 0.5) (half up), and 0 when that exceeds 65535 (deeper than 65.535 m:
 *   not representable, so no depth rather than a wrong one) or when the pixel has no depth.
 * Metres (PFM, float32, +inf = no depth; PLY): (float)q, without rounding to millimetres.
 *
 * Library code: nothing is printed, nothing exits; functions that can fail return 0, or -1 with
 * "<path>: what is wrong" in err.
 */
#ifndef STEREO_DEPTH_H
#define STEREO_DEPTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The rectified left camera. Valid (depth_camera_check): f > 0, B > 0, every field finite. */
typedef struct {
    double focal_px;   /* f, P1[0][0] */
    double cx, cy;     /* principal point of the rectified left view, px (P1[0][2], P1[1][2]) */
    double baseline;   /* B, |T| */
    double doffs_px;   /* cx_right - cx_left (P2[0][2] - P1[0][2]) */
} depth_camera;

#define DEPTH_MM_MAX 65535 /* deeper than this many millimetres: 0 in the 16-bit image */

/* 0 when cam is usable, else -1 with "what: why" in err (what: the caller's name for it). */
int depth_camera_check(const depth_camera *cam, const char *what, char *err, size_t errlen);

/* One pixel: millimetres by the rule above (0 = no depth), and metres (+inf = no depth; a
 * pixel deeper than DEPTH_MM_MAX mm still has its depth in metres). */
uint16_t depth_mm(const depth_camera *cam, int16_t d16);
double depth_m(const depth_camera *cam, int16_t d16);

/* Pixel (x, y)'s point X Y Z (float, the baseline's unit, as the PLY holds it): 1, or 0 when it
 * has no depth (xyz untouched). */
int depth_point(const depth_camera *cam, int x, int y, int16_t d16, float xyz[3]);

/* Writes the depth of a width x height disparity map (d16 as above) by the extension of
 * path: .png 16-bit millimetres (0 = no depth), .pfm float metres (+inf = no depth).
 * Atomic (outpath.h). */
int depth_write_image(const char *path, const int16_t *d16, int width, int height,
                      const depth_camera *cam, char *err, size_t errlen);

/* Writes the point cloud of a width x height disparity map: a binary little-endian PLY
 *   ply / format binary_little_endian 1.0 / comment ... / element vertex N /
 *   property float x / property float y / property float z /
 *   property uchar red / property uchar green / property uchar blue / end_header
 * then N records of 15 bytes, one per pixel with a depth, in row-major order: X Y Z in the
 * baseline's unit (float32, the camera frame of the rectified left view: x right, y down, z
 * forward) and the colour of that pixel of color (channels 1: grey, r = g = b; 3: R G B),
 * tightly packed rows of width * channels bytes. Atomic (outpath.h). *n_points (may be NULL)
 * gets N. */
int depth_write_ply(const char *path, const int16_t *d16, int width, int height,
                    const depth_camera *cam, const uint8_t *color, int channels,
                    size_t *n_points, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
