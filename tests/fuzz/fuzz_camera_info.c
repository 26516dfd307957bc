/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_camera_info.c — libFuzzer harness of the ROS camera_info pair reader through the public
 * functions of hal/calib.h (calib_read_camera_info, then calib_compute_maps on what it accepted,
 * at a small output size). An input is the left file, a NUL byte, the right file (no NUL: the
 * same bytes for both); the seeds in corpus/camera_info/ are built so. */
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "fuzz_input.h"
#include "mapfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    stereo_calib c;
    stereo_map maps[2];
    const uint8_t *nul = memchr(data, 0, size);
    size_t left_size = nul ? (size_t)(nul - data) : size;
    const char *left = fuzz_input_path(0, data, left_size);
    const char *right = nul ? fuzz_input_path(1, nul + 1, size - left_size - 1)
                            : fuzz_input_path(1, data, size);
    if (calib_read_camera_info(left, right, &c, err, sizeof err) != 0)
        return 0;
    if (c.image_width <= 0 || c.image_height <= 0)
        abort();
    if (calib_compute_maps(&c, 16, 12, maps, err, sizeof err) == 0)
        mapfile_free(maps);
    return 0;
}
