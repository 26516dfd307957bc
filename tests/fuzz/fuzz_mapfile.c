/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_mapfile.c — libFuzzer harness of mapfile_read_camera (hal/mapfile.h, versions 1 and 2).
 * Both CRCs of an input as long as its version's header (40 bytes, 84 for version 2) are
 * recomputed before it is read (a mutated byte would almost always fail
 * them, and the fuzzer would never get past the checksums into the sizes and the payload); the
 * checksum tests themselves are in tests/test_image_io.c and test_cli.sh. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_input.h"
#include "mapfile.h"

static volatile unsigned sink; /* unsigned: the sum wraps, defined */

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    stereo_map maps[2];
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    /* the header's length follows the version (bytes 8..11): 40 for 1, 84 for 2 (with the
     * camera); any other version keeps the version 1 positions */
    size_t head = size >= 12 && copy[8] == 2 && !copy[9] && !copy[10] && !copy[11]
                      ? MAPFILE_HEADER_SIZE_V2 : MAPFILE_HEADER_SIZE;
    if (size >= head) {
        put_le32(copy + head - 8, (uint32_t)crc32(0, copy + head, (uInt)(size - head)));
        put_le32(copy + head - 4, (uint32_t)crc32(0, copy, (uInt)(head - 4)));
    }
    const char *path = fuzz_input_path(0, copy, size);
    free(copy);
    depth_camera cam;
    int has_cam = -1;
    if (mapfile_read_camera(path, maps, &cam, &has_cam, err, sizeof err) == 0) {
        if (maps[0].width <= 0 || maps[0].width != maps[1].width || maps[0].height != maps[1].height)
            abort();
        /* a camera handed out passes the check the writers make */
        if (has_cam != 0 && (has_cam != 1 || depth_camera_check(&cam, "camera", err, sizeof err)))
            abort();
        for (int k = 0; k < 2; k++) /* every entry read: a short buffer shows up under ASan */
            for (size_t i = 0; i < (size_t)maps[k].width * maps[k].height; i++)
                sink += (unsigned)maps[k].xy[2 * i] + (unsigned)maps[k].xy[2 * i + 1] + maps[k].frac[i];
        mapfile_free(maps);
    }
    return 0;
}
