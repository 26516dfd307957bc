/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_image.c — libFuzzer harness of image_read and image_read8 (hal/image_io.h): PNG (libpng),
 * JPEG (libturbojpeg), PGM/PPM (hal/pnm.c), told apart by their magic bytes. A refused input is
 * fine; a crash, leak or sanitizer report is a finding. A decoded image must have the geometry
 * image_io.h promises. */
#include <stdlib.h>

#include "fuzz_input.h"
#include "image_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    image img;
    const char *path = fuzz_input_path(0, data, size);
    if (image_read(path, &img, err, sizeof err) == 0) {
        if (img.width <= 0 || img.height <= 0 || (img.channels != 1 && img.channels != 3) ||
            (img.depth != 8 && img.depth != 16) || !img.data)
            abort();
        image_free(&img);
    }
    if (image_read8(path, &img, err, sizeof err) == 0) {
        if (img.depth != 8)
            abort();
        image_free(&img);
    }
    return 0;
}
