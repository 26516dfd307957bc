/* SPDX-License-Identifier: Apache-2.0 */
/* replay.c — a libFuzzer harness (LLVMFuzzerTestOneInput, tests/fuzz/fuzz_*.c) without libFuzzer:
 * each file named, and each file in each folder named (in name order), is given to the harness
 * once. Linked with the harnesses in the ASan+UBSan build (tools/fuzz.ninja: fuzz-replay), where
 * tests/test_fuzz.sh replays the seed corpus and every crasher kept in tests/fuzz/corpus/NAME/;
 * the fuzzing itself needs clang's libFuzzer (tools/fuzz.sh).
 *
 *   replay_NAME FILE-OR-FOLDER...    prints "replayed N inputs"; a finding aborts (the
 *                                    sanitizer's report), as under libFuzzer
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the file whole and hands it to the harness; -1 when it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *more = realloc(buf, cap * 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: cannot read it\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    long inputs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) != 0)
                return 2;
            inputs++;
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[i], &names, NULL, by_name);
        if (n < 0) {
            perror(argv[i]);
            return 2;
        }
        for (int k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
            if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (replay_file(path) != 0)
                    return 2;
                inputs++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("replayed %ld inputs\n", inputs);
    return 0;
}
