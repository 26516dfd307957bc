/* SPDX-License-Identifier: Apache-2.0 */
/* mapgen.h — generated rectification maps (stereo.h's fixed-point layout), for tests and
 * benchmarks: a similarity transform from the output to the camera image, the shape a real
 * rectification map takes for a nearly aligned rig.
 *
 *   source(x, y) = scale * R(angle) * (x, y) + (dx, dy)
 * split into integer part and 5-bit fraction (floor, then the fraction truncated to 1/32).
 */
#ifndef STEREO_MAPGEN_H
#define STEREO_MAPGEN_H

#include "stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocates m->xy / m->frac (free with mapgen_free); 0, or -1 when out of memory. */
int mapgen_similarity(stereo_map *m, int width, int height, int src_width, int src_height,
                      double angle, double scale, double dx, double dy);
void mapgen_free(stereo_map *m);

#ifdef __cplusplus
}
#endif
#endif
