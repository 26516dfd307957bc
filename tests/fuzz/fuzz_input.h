/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_input.h — hands a libFuzzer input to a reader that takes a path: the bytes go into an
 * anonymous in-memory file (memfd_create), named by /proc/self/fd/N, which the reader opens as
 * any file. Nothing touches the disk and nothing is left behind. One file per slot, rewritten for
 * every input. Included by the harnesses in tests/fuzz/ (tools/fuzz.sh runs them).
 */
#ifndef STEREO_FUZZ_INPUT_H
#define STEREO_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of slot (0 or 1) holding exactly data[0..size). Aborts (a harness failure, not a
 * finding in the reader) when the memory file cannot be made or written. */
static const char *fuzz_input_path(int slot, const uint8_t *data, size_t size)
{
    static int fd[2] = {-1, -1};
    static char path[2][32];
    if (fd[slot] < 0) {
        fd[slot] = memfd_create("fuzz-input", 0);
        if (fd[slot] < 0) {
            perror("fuzz: memfd_create");
            abort();
        }
        snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
    }
    if (ftruncate(fd[slot], 0) != 0 ||
        (size > 0 && pwrite(fd[slot], data, size, 0) != (ssize_t)size)) {
        perror("fuzz: writing the input");
        abort();
    }
    return path[slot];
}

#endif
