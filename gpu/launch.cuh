/* SPDX-License-Identifier: Apache-2.0 */
/* launch.cuh — the host launchers of the CUDA kernels, one per stage (CUDA sources only).
 *
 * Each launcher checks nothing the caller has already validated (stereo.c checks parameters and
 * images), enqueues its kernel(s) on the given stream, and returns the launch error. The kernels
 * implement exactly the stage definitions in the matching C headers (grey.h, rectify.h,
 * transform.h, sgm.h, disparity.h, colormap.h) through the formulas in stereo_math.h.
 */
#ifndef STEREO_LAUNCH_CUH
#define STEREO_LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "stereo_types.h"

/* Per-frame pointers the captured graph reads from device memory. stage_cuda.cu writes them
 * (one small copy) before each replay, so a single graph serves every frame whichever buffers it
 * comes from and goes to. */
typedef struct {
    const uint8_t *in[STEREO_MAX_VIEWS]; /* camera images, one per view (device or managed
                                            memory) */
    size_t pitch[STEREO_MAX_VIEWS];      /* their row pitches in bytes */
    int16_t *disp_out;          /* where the final left / right disparity and confidence are */
    int16_t *right_out;         /* published; NULL: not published */
    uint8_t *conf_out;
    uint8_t *rgba_out;          /* colour image (pitch rgba_pitch); NULL: none */
    uint8_t *rect_out[2];       /* rectified grey images; NULL: not published */
    size_t rgba_pitch;
    const uint8_t *lut;         /* 256 RGB entries of the colour map */
    int color_lo, color_span;   /* the colour range (colormap.h): lo, hi - lo in 16ths of a px */
} frame_desc;

/* rectify.cu — stages 1 and 2 fused: grey conversion of the raw camera image, then (with a map)
 * bilinear rectification. Without a map (xy == NULL) the output is the grey image and valid is
 * not written. With a map, the four taps are converted to grey on the fly, which gives the same
 * values as converting the whole image first. */
cudaError_t launch_grey_rectify(const frame_desc *desc, int side, stereo_pixfmt fmt, int src_w,
                                int src_h, const int16_t *xy, const uint16_t *frac, uint8_t *grey,
                                uint8_t *valid, int w, int h, cudaStream_t stream);

/* transform.cu — stage 3. The rank buffers the aggregation reads are allocated with padding
 * around the w * h bytes (sgm.cu reads whole aligned words around each disparity window, also
 * left of the image where dmin + D reaches past column 0). */
#define RANK_PAD_FRONT 4096 /* >= max dmin + D (2047) + 8, a multiple of 256 */
#define RANK_PAD_BACK 16
cudaError_t launch_rank(const uint8_t *grey, int w, int h, int window, uint8_t *out,
                        cudaStream_t stream);
cudaError_t launch_census(const uint8_t *grey, int w, int h, uint64_t *out, cudaStream_t stream);
/* Cost adcensus: lut (256 bytes) = stereo_grey_match_lut of the n-pixel grey images left and
 * right; hist (512 uint32) is scratch; sms sizes the grid. */
cudaError_t launch_grey_match(const uint8_t *left, const uint8_t *right, size_t n, int sms,
                              uint32_t *hist, uint8_t *lut, cudaStream_t stream);
/* The bt cost's words in the census buffers: I | lo << 8 | hi << 16 (stereo_bt_range). */
cudaError_t launch_bt_words(const uint8_t *grey, int w, int h, uint64_t *out, cudaStream_t stream);

#define SGM_MAX_BRANCHES 4

/* sgm.cu — stages 4 to 7: cost on the fly, the aggregation along every direction, and in the
 * last direction's pass the winner-takes-all (uniqueness, subpixel, confidence) and the right
 * disparity; S itself stays a device-internal buffer. */
typedef struct {
    int width, height, dmin, ndisp;
    int p1, p2, p2_adapt, max_cost;
    stereo_cost cost;
    const uint8_t *grey;                 /* left, rectified */
    const uint8_t *rank_l, *rank_r;      /* rank cost */
    const uint64_t *census_l, *census_r; /* census cost; bt: its words (launch_bt_words) */
    const uint8_t *cost_table;           /* costs ad and mi: 256 x 256 bytes, C = table[IL * 256
                                            + IR], with grey values in rank_l / rank_r; else NULL;
                                            mi with table_grid G > 1: stereo_mi_tables(G) such
                                            tables, pixel (x, y) reading stereo_mi_table's */
    uint16_t *S[SGM_MAX_BRANCHES];       /* the branches' partial sums, w * h * D each */
    int branches;                        /* 2 or SGM_MAX_BRANCHES */
    /* outputs of the final pass */
    const uint8_t *valid, *valid_right;  /* rectification validity, NULL = all valid */
    int uniqueness, subpixel;
    int16_t *disp;
    int16_t *disp_right;                 /* NULL: no right disparity (no LR check) */
    uint8_t *conf;                       /* NULL: no confidence */
    /* per-direction design (sgm_dirs.cu): direction i's L in bytes at L8 + i * vol */
    uint8_t *L8;
    size_t vol;                          /* w * h * D */
    int sms;                             /* the device's multiprocessors (the walk's split) */
    int dir_p1[8], dir_p2[8];            /* each direction's P1 / P2 (stereo_path_penalties) */
    int dir_weight[8];                   /* each direction's weight w_r in S (sgm.h), 0..255 */
    int weighted;                        /* 1 when some w_r != 1: the sum multiplies (a pass
                                            that assumes S < 2048 is not used) */
    const uint8_t *cost_vol;             /* NULL, or the complete cost volume (w * h * D, sgm.h)
                                            that the walk reads instead of computing costs
                                            (the volume build, SGM_VOLUME in sgm_walk.cuh) */
    /* sweep design (sgm_sweep.cu) */
    uint32_t *sweep_S;                   /* the forward sweep's partial sums, w * h * D / 2 words */
    uint32_t *sweep_ring;                /* sweep_ring_words(w, D) words: the rows between warps */
    int *sweep_sync;                     /* 8 bytes, zeroed once: the ticket counter (uint64) */
    /* cost adcensus (COST_KIND_ADCENSUS): census words in census_l / census_r, and the grey
     * values of both views */
    const uint8_t *grey_r;               /* the right grey image (grey is the left one) */
    const uint8_t *ad_lut;               /* the right grey values' mapping (launch_grey_match) */
    int ad_weight;                       /* stereo_adcensus_cost's weight */
    int table_grid;                      /* cost_table's tile grid G (mi_tiles); 0 or 1: one */
    /* strip design (sgm_strips.cu): its state; non-NULL also makes launch_sgm_dirs walk only
     * directions 0 and 1 (into L8's first two volumes) */
    const struct sgm_strips_state *strips;
} sgm_args;
/* The branches run concurrently on streams[0..branches-1] (streams[0] is the frame's stream),
 * forked from and joined into streams[0] with the events given. */
cudaError_t launch_sgm(const sgm_args *a, int paths, cudaStream_t *streams, cudaEvent_t fork,
                       cudaEvent_t *join);
/* The last direction, with the winner-takes-all and the right disparity (after launch_sgm). */
cudaError_t launch_sgm_final(const sgm_args *a, cudaStream_t stream);
/* One direction of the branch design for one cost (sgm.cu is compiled once per cost): mode
 * MODE_STORE, MODE_ADD or MODE_FINAL (sgm_walk.cuh). */
cudaError_t launch_sgm_dir_rank(const sgm_args *a, int dir, int mode, cudaStream_t stream);
cudaError_t launch_sgm_dir_census(const sgm_args *a, int dir, int mode, cudaStream_t stream);
cudaError_t launch_sgm_dir_table(const sgm_args *a, int dir, int mode, cudaStream_t stream);
cudaError_t launch_sgm_dir_bt(const sgm_args *a, int dir, int mode, cudaStream_t stream);
cudaError_t launch_sgm_dir_volume(const sgm_args *a, int dir, int mode, cudaStream_t stream);

/* sgm_dirs.cu — the per-direction design, used when every L fits a byte (max_cost +
 * max(P2, P1 + 1) <= 255, sgm_fits_bytes) and paths * vol bytes fit: every direction's walk
 * stores its L into its own byte volume, all in one launch; then one kernel per row adds the
 * volumes and picks the left and right disparities. */
static inline int sgm_fits_bytes(int max_cost, int p1, int p2)
{
    return max_cost + (p2 > p1 + 1 ? p2 : p1 + 1) <= 255;
}
cudaError_t launch_sgm_dirs(const sgm_args *a, int paths, cudaStream_t stream);
/* The walks of one cost (sgm_dirs.cu is compiled once per cost); launch_sgm_dirs picks. */
cudaError_t launch_sgm_dirs_rank(const sgm_args *a, int paths, cudaStream_t stream);
cudaError_t launch_sgm_dirs_census(const sgm_args *a, int paths, cudaStream_t stream);
cudaError_t launch_sgm_dirs_table(const sgm_args *a, int paths, cudaStream_t stream);
cudaError_t launch_sgm_dirs_bt(const sgm_args *a, int paths, cudaStream_t stream);
cudaError_t launch_sgm_dirs_volume(const sgm_args *a, int paths, cudaStream_t stream);
cudaError_t launch_wta_dirs(const sgm_args *a, int paths, cudaStream_t stream);
/* The same winner-takes-all (left and right disparity, confidence) on a complete 16-bit S volume
 * in a->S[0] (w * h * D, S(x, y, k) at (y * w + x) * D + k): block matching's box sums. */
cudaError_t launch_wta_volume(const sgm_args *a, cudaStream_t stream);

/* sgm_sweep.cu — the sweep design: the eight (or four) directions in two wavefront sweeps, the
 * forward one writing a 16-bit partial sum once, the backward one adding it and finishing every
 * pixel (4 bytes of memory traffic per voxel). Used when every L fits a byte (sgm_fits_bytes), no
 * path weights are set and sgm_sweep_supports(D); the cost is rank's (computed on the fly) or
 * a->cost_vol. */
static inline int sgm_sweep_supports(int ndisp)
{
    return ndisp == 16 || ndisp == 32 || ndisp == 64 || ndisp == 128 || ndisp == 256 || ndisp == 512;
}
/* the ring of records between warps: two rows of w + 1 records of 3 * D / 2 + 4 words, every
 * byte set to 0xff once (a tag no ticket writes before both rows are written) */
static inline size_t sweep_ring_words(int w, int ndisp)
{
    return 2 * ((size_t)w + 1) * (3 * (size_t)ndisp / 2 + 4);
}
cudaError_t launch_sgm_sweep(const sgm_args *a, int paths, cudaStream_t stream);
cudaError_t launch_sgm_sweep_rank(const sgm_args *a, int paths, cudaStream_t stream);
cudaError_t launch_sgm_sweep_volume(const sgm_args *a, int paths, cudaStream_t stream);

/* sgm_strips.cu — the strip design, for the cost volume's walk (SGM_VOLUME), every L in a byte,
 * no path weights, D = 64, 128 or 256: directions 0 and 1 by the per-direction walk (two byte
 * volumes), the three downward directions (2, 4, 5) in one row-synchronous sweep over column
 * strips writing their 16-bit sum once, the three upward ones (3, 6, 7) likewise, adding that sum
 * and the two byte volumes and finishing every pixel: 12 bytes of traffic per voxel instead of
 * the per-direction design's 16, with the cost read 4 times instead of 8. */
typedef struct sgm_strips_state {
    int nstrips, sw, nw, j;     /* strips, columns a strip, warps a block, column groups a warp
                                   walks in each row */
    size_t smem;                /* dynamic shared memory of a block */
    int *flags;                 /* 2 * nstrips row counters, zeroed before each sweep */
    uint32_t *ring;             /* the records between strips: sgm_strips_ring_words */
    uint32_t *keys;             /* w * h right keys, KEY_EMPTY (all ones) between frames */
    uint32_t *S;                /* the downward sweep's sum: w * h * D / 2 words */
} sgm_strips_state;
/* Whether the strip design runs a frame of w x h with D disparities and paths on sms SMs of
 * the current device, and its layout (into st: the sizes, no buffers); 0: it does not. */
int sgm_strips_plan(int w, int ndisp, int sms, sgm_strips_state *st);
static inline size_t sgm_strips_ring_words(int nstrips, int ndisp)
{
    return (size_t)nstrips * 2 * 4 * ((size_t)ndisp / 4 + 4);
}
/* After launch_sgm_dirs has walked directions 0 and 1: part 0 the downward sweep, part 1 the
 * upward sweep and the right disparity. */
cudaError_t launch_sgm_strips(const sgm_args *a, int paths, int part, cudaStream_t stream);

/* band.cu — the coarse-to-fine mode (band.h) on the GPU, bit for bit as band.c. */
typedef struct {
    int W;              /* the band width (32 or 64) */
    uint16_t *start;    /* w * h band starts s */
    uint8_t *cost;      /* w * h * W: C(p, s(p) + j) */
    void *L;            /* paths volumes of w * h * W: bytes (sgm_fits_bytes) or uint16 */
    int bytes;
    uint16_t *S;        /* w * h * W: the sum, for the right disparity */
} band_args;
/* Step 1's half-size image (mi_downscale_rows, f = 1): grey w x h -> half w1 x h1. */
cudaError_t launch_band_half(const uint8_t *grey, int w, int h, uint8_t *half, int w1, int h1,
                             cudaStream_t stream);
/* Step 2 (band_from_coarse_rows) from the coarse level's left disparity (w1 x h1) into
 * b->start, for a's size and range. */
cudaError_t launch_band_start(const sgm_args *a, const band_args *b, const int16_t *coarse,
                              int w1, int h1, cudaStream_t stream);
/* Step 3: the band's costs (cost_kind as block_args: 0 rank, 1 census, 2 table, 3 bt words),
 * then every path's walk into b->L. */
cudaError_t launch_band_cost(const sgm_args *a, int cost_kind, const band_args *b,
                             cudaStream_t stream);
cudaError_t launch_band_walk(const sgm_args *a, int paths, const band_args *b,
                             cudaStream_t stream);
/* Step 4: the sum, the left disparity (a->disp, a->conf) and, when a->disp_right, the right
 * disparity. */
cudaError_t launch_band_wta(const sgm_args *a, int paths, const band_args *b, cudaStream_t stream);

/* disparity.cu — stage 7: median and the LR check */
cudaError_t launch_median(const int16_t *in, int w, int h, int16_t *out, cudaStream_t stream);
/* LR check (when disp_right != NULL) and zeroing of conf where disp is invalid (when conf). */
cudaError_t launch_lr_finish(int16_t *disp, const int16_t *disp_right, uint8_t *conf, int w,
                             int h, int tolerance, cudaStream_t stream);
/* launch_lr_finish where mview_lr_occlusion_test holds (more than two views, the sides rule, one
 * view on the other side): the LR check with the occlusion test, lr_check_views_rows. */
cudaError_t launch_lr_finish_views(int16_t *disp, const int16_t *disp_right, uint8_t *conf,
                                   int w, int h, int tolerance, cudaStream_t stream);

/* A negative minimum disparity (disparity.h): the right view shifted in place, row by row
 * (disparity_shift_rows; copy, when not NULL, gets each row as it was), and the two maps
 * shifted back (disparity_unshift_rows; disp_right and conf may be NULL). */
cudaError_t launch_shift_rows(uint8_t *img, uint8_t *copy, int w, int h, int m,
                              cudaStream_t stream);
cudaError_t launch_unshift(int16_t *disp, int16_t *disp_right, uint8_t *conf, int w, int h,
                           int m, cudaStream_t stream);

/* colormap.cu — disparity to RGBA through a 256-entry RGB table in device memory. */
cudaError_t launch_colormap(const int16_t *disp, int w, int h, int lo, int hi,
                            const uint8_t *lut, uint8_t *rgba, size_t pitch, cudaStream_t stream);
/* The frame's last kernel: copies the final maps to desc's outputs and colour-maps the
 * disparity into desc->rgba_out over desc's colour range (each only where desc gives a
 * destination; the range is read per frame, so the captured graph serves any range). */
cudaError_t launch_publish(const frame_desc *desc, const int16_t *disp, const int16_t *disp_right,
                           const uint8_t *conf, const uint8_t *grey_l, const uint8_t *grey_r,
                           int w, int h, cudaStream_t stream);

/* block.cu — stage 5 of method bm (block.h): the N x N box sum of the cost volume C, computed
 * on the fly from a's transformed images (a's width, height, dmin, ndisp, max_cost, the cost
 * inputs cost_kind names, and sms for the split; nothing else of a is read), into S (uint16,
 * w * h * D, S[(y * w + x) * D + k], the CPU layout) exactly as block_vertical_rows +
 * block_horizontal_rows on the CPU's cost volume; V (uint16, w * h * D) is scratch (the
 * vertical sums). cost_kind: 0 rank (|rank_l - rank_r|), 1 census (census_l / census_r),
 * 2 table (cost_table[rank_l * 256 + rank_r], grey values in the rank rows: ad, mi), 3 bt (words
 * I | lo << 8 | hi << 16 in census_l / census_r, stereo_bt_cost with cap max_cost), 4 adcensus
 * (COST_KIND_ADCENSUS). Right pixels
 * are read only where x - d >= 0, so the rows need no padding. Returns cudaErrorInvalidValue for
 * an even block, a shift outside 0..31 or an unknown cost_kind. */
typedef struct {
    int block, shift; /* N (odd, block.h), block_shift(max_cost, N) */
    int cost_kind;    /* 0 rank, 1 census, 2 table, 3 bt words, COST_KIND_ADCENSUS,
                         BLOCK_COST_VOLUME */
} block_args;
/* cost kind 4: adcensus, stereo_adcensus_cost of census_l / census_r and grey / grey_r with
 * a->ad_weight (no walk of its own: the stage always builds its cost volume) */
#define COST_KIND_ADCENSUS 4
/* block_args.cost_kind: the costs read from a->cost_vol, a complete cost volume (sgm.h's layout,
 * every voxel as it stands: more views' combined cost, which may be below max_cost where
 * x - d < 0, since another view sees the point) */
#define BLOCK_COST_VOLUME 5
cudaError_t launch_block_sum(const sgm_args *a, const block_args *b, uint16_t *V, uint16_t *S,
                             cudaStream_t stream);
/* The two-view cost volume C (w * h * D bytes, sgm.h) of cost_kind (as block_args), for the
 * volume walk (sgm_args.cost_vol). */
cudaError_t launch_cost_volume(const sgm_args *a, int cost_kind, uint8_t *out, cudaStream_t stream);

/* multiview.cu — stage 4 with more than two views (multiview.h): the multi-baseline matching
 * cost volume, bit for bit as mview_cost_rows over all rows followed (sides rule) by
 * mview_select_rows over all rows. The view images are w * h each, without padding (only pixels
 * inside the image are read); cost, pos and neg are w * h * D bytes in sgm.h's layout
 * (cost[(y * w + x) * D + k]). The sum rule writes only cost (pos, neg may be NULL); the sides
 * rule also uses pos and neg as scratch (the two sides' means, then a second kernel does the box
 * sums and stereo_view_select). Returns cudaErrorInvalidValue for views outside
 * 3..STEREO_MAX_VIEWS, a size below 1, ndisp not a multiple of 4, a cost other than rank,
 * census, ad, bt, adcensus, an unknown combine rule, or a NULL pointer among m, cost, pos / neg
 * (sides) and the inputs the cost reads for views 0..views-1 (vals: rank, ad, bt, adcensus;
 * bits: census, adcensus; grey: bt; ad_lut: adcensus, views 1..views-1). */
typedef struct {
    int width, height, dmin, ndisp, max_cost;
    stereo_cost cost;                       /* rank, census, ad, bt or adcensus */
    int views;                              /* 3..STEREO_MAX_VIEWS */
    int baseline[STEREO_MAX_VIEWS];         /* bq_i as stereo_params.baseline (16ths), [0] = 0 */
    stereo_combine combine;                 /* sum or sides */
    const uint8_t *vals[STEREO_MAX_VIEWS];  /* rank (rank) or grey (ad, bt, adcensus) rows,
                                               w * h each */
    const uint64_t *bits[STEREO_MAX_VIEWS]; /* census (census, adcensus), w * h each */
    const uint8_t *grey[STEREO_MAX_VIEWS];  /* grey (bt's ranges), w * h each */
    const uint8_t *ad_lut[STEREO_MAX_VIEWS]; /* adcensus: view i's grey mapping M_i, 256 bytes
                                                (launch_grey_match of views 0 and i; [0] unused) */
    int ad_weight;                          /* adcensus: stereo_params.ad_weight */
} mview_args;
cudaError_t launch_mview_cost(const mview_args *m, uint8_t *cost, uint8_t *pos, uint8_t *neg,
                              cudaStream_t stream);
/* test-mview-cuda: the kernels' division-free mean (multiview.cu) over its whole range, device
 * memory of 9 * 8192 ints, out[n * 8192 + x] for n = 1..8, x = n / 2 .. 8191 */
cudaError_t mview_mean_table(int *out);

#endif
