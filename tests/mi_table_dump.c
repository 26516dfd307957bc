/* SPDX-License-Identifier: Apache-2.0 */
/* mi-table-dump — the MI table of gpu/mi.h for given inputs, for tests/test_mi.py.
 *
 *   build/tests/mi-table-dump < INPUT > OUTPUT
 *
 * INPUT (binary, little-endian): int32 w, int32 h, uint8 flags (bit 0: validity masks follow;
 * bits 4-7: the tile grid G minus 1, mi_tables_compute; 0 = one table), then w*h bytes left grey, w*h bytes right grey, w*h int16 initial disparities
 * (-32768 = none), and with flag bit 0 w*h bytes left validity and w*h bytes right validity.
 * OUTPUT: uint64 n (the histogram's count), T x 65536 float64 mi(i, k), T x 65536 uint8
 * table(i, k), T = stereo_mi_tables(G) (2 G^2; G = 1: one), table by table, index
 * t * 65536 + i * 256 + k. Writes to stdout only (no files). Exit 1 with one line on bad input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mi.h"
#include "stereo_math.h"

static int read_all(void *buf, size_t n)
{
    return fread(buf, 1, n, stdin) == n ? 0 : -1;
}

int main(void)
{
    int32_t wh[2];
    uint8_t flags;
    if (read_all(wh, sizeof wh) || read_all(&flags, 1)) {
        fprintf(stderr, "mi-table-dump: stdin: no header (int32 w, int32 h, uint8 flags)\n");
        return 1;
    }
    if (wh[0] < 1 || wh[1] < 1 || wh[0] > 8192 || wh[1] > 8192) {
        fprintf(stderr, "mi-table-dump: stdin: size %dx%d is outside 1x1..8192x8192\n", wh[0],
                wh[1]);
        return 1;
    }
    const int grid = (flags >> 4) + 1;
    if (grid > MI_TILES_MAX) {
        fprintf(stderr, "mi-table-dump: stdin: tile grid %d is outside 1..%d\n", grid, MI_TILES_MAX);
        return 1;
    }
    const size_t T = (size_t)stereo_mi_tables(grid);
    size_t n = (size_t)wh[0] * (size_t)wh[1];
    uint8_t *l = malloc(n), *r = malloc(n), *vl = NULL, *vr = NULL, *table = malloc(T * MI_TABLE_SIZE);
    int16_t *init = malloc(n * sizeof *init);
    double *mi = malloc(T * MI_TABLE_SIZE * sizeof *mi);
    void *scratch = malloc(MI_SCRATCH_BYTES);
    if (flags & 1) {
        vl = malloc(n);
        vr = malloc(n);
    }
    if (!l || !r || !table || !init || !mi || !scratch || ((flags & 1) && (!vl || !vr))) {
        fprintf(stderr, "mi-table-dump: out of memory\n");
        return 1;
    }
    if (read_all(l, n) || read_all(r, n) || read_all(init, n * sizeof *init) ||
        ((flags & 1) && (read_all(vl, n) || read_all(vr, n)))) {
        fprintf(stderr, "mi-table-dump: stdin: shorter than its %dx%d header announces\n", wh[0],
                wh[1]);
        return 1;
    }
    uint64_t count = mi_tables_compute(l, r, wh[0], wh[1], grid, init, vl, vr, table, mi, scratch);
    if (fwrite(&count, sizeof count, 1, stdout) != 1 ||
        fwrite(mi, sizeof *mi, T * MI_TABLE_SIZE, stdout) != T * MI_TABLE_SIZE ||
        fwrite(table, 1, T * MI_TABLE_SIZE, stdout) != T * MI_TABLE_SIZE || fflush(stdout) != 0) {
        fprintf(stderr, "mi-table-dump: stdout: write failed\n");
        return 1;
    }
    free(l), free(r), free(vl), free(vr), free(table), free(init), free(mi), free(scratch);
    return 0;
}
