/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd.h — the CPU backend's fast path for SGM: aggregation and winner-takes-all fused, on
 * SIMD vectors, bit for bit the reference's results (sgm.h, disparity.h).
 *
 * The reference runs the forward and the backward sweep (sgm.h) on two threads, each into a
 * 16-bit volume of its own, then reads both volumes back for the left and the right
 * winner-takes-all: three passes over 2 bytes per voxel, and a right disparity that walks the
 * volume diagonally. Here the two sweeps meet in the middle instead. In part 0 the forward sweep
 * walks rows 0 .. m-1 and the backward sweep rows h-1 .. m (m = h / 2), each leaving its partial
 * sum in its own rows of one volume S. In part 1 the forward sweep goes on with rows m .. h-1
 * and the backward sweep with rows m-1 .. 0: each row's partial sum meets the other sweep's,
 * written in part 0, so the row's total is complete and its left and right disparities are
 * computed at once from a row buffer (transposed so that both searches run along contiguous
 * pixels). S is written once and read once, and the volume of totals never exists. Both parts
 * split evenly over two threads (one sweep each); part 1 must start after part 0 has ended.
 *
 * Every vector operation is an exact integer operation on uint16 lanes (L and the sums fit, as
 * sgm.h shows), so the order of operations cannot change a bit. The kernels are compiled once
 * per instruction set (sgm_simd_kernels.h): the baseline one (SSE2 on x86-64, NEON on aarch64),
 * on x86-64 AVX2, chosen at run time by the CPU, and GCC's generic vectors (the only one on
 * other targets).
 */
#ifndef STEREO_SGM_SIMD_H
#define STEREO_SGM_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "disparity.h"
#include "sgm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the fused path takes each pixel's D costs from. */
typedef enum {
    SGM_FUSED_VOLUME = 0, /* the cost volume `cost` (sgm.h), computed before */
    SGM_FUSED_ABSDIFF,    /* min(|A0(x) - A1(x - d)|, max_cost) of absdiff[]: rank transforms
                             (cost rank) or grey images (ad), computed by each sweep */
    SGM_FUSED_BT,         /* stereo_bt_cost of the grey images absdiff[] (sgm_cost_bt_rows),
                             computed by each sweep */
    SGM_FUSED_CENSUS,     /* popcount(census[0](x) ^ census[1](x - d)) (sgm_cost_census_rows) */
    SGM_FUSED_ADCENSUS    /* stereo_adcensus_cost of that with the grey images absdiff[] and
                             the right view's mapping ad_lut (sgm_cost_adcensus_rows) */
} sgm_fused_cost;

/* One frame (or one level of the MI hierarchy) for the fused path. */
typedef struct {
    const sgm_config *sgm;
    const wta_config *wta;    /* same width, height, dmin and ndisp as sgm */
    int paths;                /* 4 or 8 */
    sgm_fused_cost kind;
    const uint8_t *cost;      /* SGM_FUSED_VOLUME: the cost volume */
    const uint8_t *absdiff[2]; /* the rank transforms (cost rank) or the grey images (ad, bt,
                                 adcensus) */
    const uint64_t *census[2]; /* the census transforms (census, adcensus) */
    const uint8_t *ad_lut;    /* adcensus: the right view's grey mapping onto the left's */
    int ad_weight;            /* adcensus: the grey term's weight (eighths) */
    uint8_t *cost_rows;       /* census, adcensus: w * h * D bytes. In part 0 each sweep
                                 computes its rows' costs into it; in part 1 the other sweep,
                                 which walks those rows then, reads them back: every cost is
                                 computed once (rank's, ad's and bt's, cheap, are computed
                                 twice). */
    const uint8_t *grey;      /* the left grey image, for the adaptive P2 */
    uint16_t *S;              /* w * h * D: the sweeps' partial sums between the parts */
    const uint8_t *valid[2];  /* rectification validity of the left / right image, or NULL */
    int16_t *disp;            /* the left disparity (disparity.h, stage 6) */
    int16_t *disp_right;      /* the right disparity (stage 7), or NULL: not computed */
    uint8_t *conf;            /* confidence, or NULL */
} sgm_fused;

/* One instruction set's kernels. */
typedef struct {
    const char *name;         /* "avx2", "sse2", "neon", "generic" */
    /* sweep `backward` (0 / 1), part 0 or 1 (above); scratch: sgm_simd_scratch_size bytes per
     * sweep, kept between the two parts; rows_done (may be NULL) counts rows as
     * sgm_aggregate_sweep does */
    void (*sweep_part)(const sgm_fused *f, int backward, int part, void *scratch,
                       uint64_t *rows_done);
} sgm_simd_isa;

size_t sgm_simd_scratch_size(const sgm_config *c);

/* Whether every direction's L fits a byte: max_cost + P2_r <= 255 for each of the paths (L <=
 * max_cost + P2_r, sgm.h); the kernels then run on uint8 lanes. */
int sgm_simd_bytes_fit(const sgm_config *c, int paths);

/* Where each part of a sweep's scratch starts (uint16 elements from its 64-byte aligned start;
 * sgm_simd_kernels.h says what each holds), B = D + SGM_SIMD_PAD the size of a block of rows,
 * nblk the blocks per direction, sts the row stride of st. */
#define SGM_SIMD_PAD 16
typedef struct {
    size_t rows, zero, hz, mins, cost, rrev, nib, st, grp, total;
    size_t nibs;              /* the stride of nib's planes, in bytes */
    size_t B, nblk, sts;
} sgm_simd_layout;
void sgm_simd_layout_of(const sgm_config *c, sgm_simd_layout *l);

/* The instruction set by name: "auto" (or NULL) the best this CPU runs (NULL, the reference,
 * on a target with neither SSE2 nor NEON); "reference" gives NULL with 0 returned (the plain-C
 * reference, sgm.h); "generic" GCC's generic vectors. Returns -1 with a message in err for a name
 * that is unknown, or not built in, or that this CPU cannot run. */
int sgm_simd_select(const char *name, const sgm_simd_isa **out, char *err, size_t errlen);

/* The names sgm_simd_select accepts here, for messages: "auto, reference, avx2, sse2". */
const char *sgm_simd_names(void);

/* One table per compiled instruction set (sgm_simd_*.c). */
extern const sgm_simd_isa sgm_simd_generic;
#if defined(__SSE2__) || defined(__ARM_NEON)
extern const sgm_simd_isa sgm_simd_baseline;
#endif
#if defined(__x86_64__)
extern const sgm_simd_isa sgm_simd_avx2;
#endif

#ifdef __cplusplus
}
#endif
#endif
