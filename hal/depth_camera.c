/* SPDX-License-Identifier: Apache-2.0 */
/* depth_camera.c — the depth rule of depth.h (the camera check, millimetres, metres): libc
 * only, so that the map-file and calibration readers (and build/libstereodepth.so) use it
 * without the image writers of depth.c. */
#include "depth.h"
#include "stereo.h" /* stereo_disparity_valid */

#include <math.h>
#include <stdio.h>

int depth_camera_check(const depth_camera *cam, const char *what, char *err, size_t errlen)
{
    const char *why = NULL;
    if (!isfinite(cam->focal_px) || !isfinite(cam->cx) || !isfinite(cam->cy) ||
        !isfinite(cam->baseline) || !isfinite(cam->doffs_px))
        why = "a value is not a finite number";
    else if (!(cam->focal_px > 0))
        why = "the focal length must be positive";
    else if (!(cam->baseline > 0))
        why = "the baseline must be positive";
    if (why && errlen)
        snprintf(err, errlen, "%s: %s", what, why);
    return why ? -1 : 0;
}

/* q = fb16 / (d16 + 16 doffs), or 0 when the pixel has no depth (the order of depth.h). */
static double depth_quotient(const depth_camera *cam, int16_t d16, double unit)
{
    if (!stereo_disparity_valid(d16))
        return 0;
    double den = d16 + 16.0 * cam->doffs_px; /* 16 * doffs is exact: no rounding to fuse */
    if (!(den > 0))
        return 0;
    double fb16 = cam->focal_px * cam->baseline;
    fb16 = fb16 * unit;
    fb16 = fb16 * 16;
    return fb16 / den;
}

uint16_t depth_mm(const depth_camera *cam, int16_t d16)
{
    double q = depth_quotient(cam, d16, 1000);
    double mm = floor(q + 0.5);
    return mm > DEPTH_MM_MAX ? 0 : (uint16_t)mm;
}

double depth_m(const depth_camera *cam, int16_t d16)
{
    double q = depth_quotient(cam, d16, 1);
    return q > 0 ? q : INFINITY;
}

int depth_point(const depth_camera *cam, int x, int y, int16_t d16, float xyz[3])
{
    double z = depth_m(cam, d16);
    if (!isfinite(z))
        return 0;
    xyz[0] = (float)((x - cam->cx) * z / cam->focal_px);
    xyz[1] = (float)((y - cam->cy) * z / cam->focal_px);
    xyz[2] = (float)z;
    return 1;
}
