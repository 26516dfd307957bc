/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_calib_yaml.c — libFuzzer harness of the OpenCV calibration YAML reader through the public
 * functions of hal/calib.h (calib_read_yaml, then calib_compute_maps on what it accepted, at a
 * small output size), so that it holds whatever parser sits behind them. */
#include <stdlib.h>

#include "calib.h"
#include "fuzz_input.h"
#include "mapfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    stereo_calib c;
    stereo_map maps[2];
    if (calib_read_yaml(fuzz_input_path(0, data, size), &c, err, sizeof err) != 0)
        return 0;
    if (c.image_width <= 0 || c.image_height <= 0)
        abort();
    /* the maps of any accepted calibration, 16x12 so that an input takes microseconds */
    if (calib_compute_maps(&c, 16, 12, maps, err, sizeof err) == 0)
        mapfile_free(maps);
    return 0;
}
