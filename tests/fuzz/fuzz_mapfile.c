/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_mapfile.c — libFuzzer harness of mapfile_read (hal/mapfile.h). Both CRCs of an input of
 * 40 bytes or more are recomputed before it is read (a mutated byte would almost always fail
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
    if (size >= MAPFILE_HEADER_SIZE) {
        put_le32(copy + 32, (uint32_t)crc32(0, copy + MAPFILE_HEADER_SIZE,
                                            (uInt)(size - MAPFILE_HEADER_SIZE)));
        put_le32(copy + 36, (uint32_t)crc32(0, copy, 36));
    }
    const char *path = fuzz_input_path(0, copy, size);
    free(copy);
    if (mapfile_read(path, maps, err, sizeof err) == 0) {
        if (maps[0].width <= 0 || maps[0].width != maps[1].width || maps[0].height != maps[1].height)
            abort();
        for (int k = 0; k < 2; k++) /* every entry read: a short buffer shows up under ASan */
            for (size_t i = 0; i < (size_t)maps[k].width * maps[k].height; i++)
                sink += (unsigned)maps[k].xy[2 * i] + (unsigned)maps[k].xy[2 * i + 1] + maps[k].frac[i];
        mapfile_free(maps);
    }
    return 0;
}
