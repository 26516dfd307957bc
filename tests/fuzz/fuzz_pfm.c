/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_pfm.c — libFuzzer harness of pfm_read (hal/image_io.h, hal/pnm.c) and of disparity_read
 * on the same bytes (PFM, or a PNG / PGM disparity). Every sample of a map read is touched, so
 * that a short buffer shows up under ASan. */
#include <stdlib.h>

#include "fuzz_input.h"
#include "image_io.h"

static volatile float sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    fmap m;
    const char *path = fuzz_input_path(0, data, size);
    if (pfm_read(path, &m, err, sizeof err) == 0) {
        if (m.width <= 0 || m.height <= 0 || !m.data)
            abort();
        for (size_t i = 0; i < (size_t)m.width * m.height; i++)
            sink = m.data[i];
        fmap_free(&m);
    }
    if (disparity_read(path, 0, &m, err, sizeof err) == 0)
        fmap_free(&m);
    return 0;
}
