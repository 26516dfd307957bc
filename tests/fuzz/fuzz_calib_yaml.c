/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_calib_yaml.c — libFuzzer harness of the OpenCV calibration YAML reader through the public
 * functions of hal/calib.h (calib_read_yaml, then calib_compute_maps on what it accepted, at a
 * small output size), so that it holds whatever parser sits behind them; the same input also
 * through the rig file reader (calib_rig_read, calib_rig_compute_maps), which shares the YAML
 * reader and the map code. */
#include <stdlib.h>

#include "calib.h"
#include "fuzz_input.h"
#include "mapfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    stereo_calib c;
    stereo_map maps[2];
    const char *path = fuzz_input_path(0, data, size);
    calib_rig rig;
    stereo_map rig_maps[CALIB_RIG_MAX];
    if (calib_rig_read(path, &rig, err, sizeof err) == 0) {
        if (rig.ncams < 2 || rig.ncams > CALIB_RIG_MAX || rig.reference >= rig.ncams ||
            rig.first == rig.reference || rig.image_width <= 0)
            abort();
        if (calib_rig_compute_maps(&rig, 16, 12, rig_maps, err, sizeof err) == 0)
            calib_rig_free_maps(rig_maps);
    }
    if (calib_read_yaml(path, &c, err, sizeof err) != 0)
        return 0;
    if (c.image_width <= 0 || c.image_height <= 0)
        abort();
    /* the maps of any accepted calibration, 16x12 so that an input takes microseconds */
    if (calib_compute_maps(&c, 16, 12, maps, err, sizeof err) == 0)
        mapfile_free(maps);
    return 0;
}
