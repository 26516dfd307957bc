/* SPDX-License-Identifier: Apache-2.0 */
/* stereo.h — the stereo stage: raw or rectified image pair in, disparity out.
 *
 * One handle runs the whole pipeline (each stage is specified in its own header):
 *   1. grey conversion            grey.h       RGB24 / YUYV / GREY8 -> 8-bit grey
 *   2. rectification (optional)   rectify.h    OpenCV fixed-point maps, bilinear in integers
 *   3. rank or census transform   transform.h  rank 0..(w*w-1) or 64-bit census over 9x7 (none
 *                                              for the ad, bt and mi costs, which compare grey
 *                                              values)
 *      (mi: the MI table)        mi.h         hierarchical mutual information (tables on the host;
 *                                              CUDA: the levels on stages of their own)
 *   4. matching cost              sgm.h        |rankL - rankR|, Hamming distance, saturated
 *                                              absolute difference, Birchfield-Tomasi or MI
 *                                              table, uint8
 *   4b. cross-based aggregation   cross.h      (optional) the cost averaged over each pixel's
 *                                              support region, before the paths
 *   5. SGM aggregation            sgm.h        4 or 8 paths, P1/P2 per path (+ adaptive P2),
 *                                              weighted sum into S; or, with method bm, the
 *      (or block matching)        block.h      N x N box sum of the cost (SAD when cost = ad)
 *   6. winner-takes-all           disparity.h  uniqueness, fixed-point parabola subpixel (1/16 px)
 *   7. right disparity, median    disparity.h  diagonal search over S, 3x3 median on both maps,
 *      and left-right check                    LR consistency with a tolerance
 *   8. confidence (optional)      disparity.h  gap between best and second-best S
 *   8b. discontinuity adjustment  cross.h      (optional) edge pixels take the cheaper
 *                                              neighbour's disparity
 *   9. post-filters               postfilter.h speckle removal (default), region voting,
 *                                              interpolation, temporal filter, hole filling
 *
 * Everything is integer arithmetic, so the CPU reference (the *.c files in gpu/) and the CUDA
 * kernels (the *.cu files beside them) produce the same bits.
 *
 * Output convention: int16 per pixel, value = 16 * d (4 fractional bits) where d is the full
 * disparity (min_disparity included, so negative with a negative min_disparity);
 * STEREO_INVALID (-32768, below every disparity) marks pixels without a reliable match: test
 * with stereo_disparity_valid, not with a sign. A left pixel (x, y) with disparity d matches
 * the right pixel (x - d, y).
 *
 * Library code never exits: every call returns a stereo_status and, on failure, a one-line
 * message (stereo_error() for a live handle, the err buffer at create).
 */
#ifndef STEREO_STEREO_H
#define STEREO_STEREO_H

#include <stddef.h>
#include <stdint.h>

#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The limits (STEREO_INVALID, STEREO_MAX_VIEWS, ...), the enums, stereo_params, stereo_map,
 * stereo_image, stereo_result, stereo_mi_info and the names of the enums as text are in
 * stereo_types.h, included above. */

typedef struct stereo_stage stereo_stage;

/* Defaults: cost adcensus (for every count of views, chosen left out: docs/results.md; ad_weight 3; rank
 * window 9), SGM with 8
 * paths, its penalties (stereo_default_penalties: P1 = 32, P2 = 128) for every path with
 * adaptive P2 (T = 16), path weights 1, LR check (1 px), median, subpixel, min_disparity 0, D =
 * 64, no uniqueness test, no confidence; block 9 for method bm; mi_warm 0, mi_restart 50,
 * mi_tiles 5; views 2 (the pair), baseline[1] = 16, combine sides; the post-filters of
 * postfilter_default. */
void stereo_params_default(stereo_params *p, int width, int height);

/* The tuned P1/P2 defaults for a cost (they scale with the rank window's range). */
void stereo_default_penalties(stereo_cost cost, int rank_window, int *p1, int *p2);

/* The largest matching cost of p's cost (also the cost of a disparity outside the right image):
 * 62 for census, n*n - 1 for rank n x n, STEREO_GREY_COST_MAX for ad and bt, MI_MAX_COST for
 * mi (both 63). */
int stereo_max_cost(const stereo_params *p);

/* Whether D is a number of disparities the stage searches: a multiple of 16 in 16..512 (the
 * image width is checked with the other parameters). 0, or -1 with the condition that fails in
 * why: "528 is outside 16..512", or "100 is not a multiple of 16 (try 96 or 112)" with the
 * nearest valid values. The CPU backend runs every such D; the CUDA stage runs D up to 256 with
 * every option, 512 with SGM where its sweep design applies (stage_cuda.h), and every D in the
 * coarse-to-fine mode (band.h). */
int stereo_check_disparities(int D, char *why, size_t whylen);

/* The number of disparities a pair needs (--disparities auto): the pair rectified by maps (NULL:
 * as it is) with p's size, backend, threads and SMs, reduced to a quarter of its size
 * (mi_downscale_rows, f = STEREO_AUTO_LEVEL), matched there by the default stage over the widest
 * range that fits (128 disparities, 512 at full size, from p's min_disparity / 4); top = the
 * STEREO_AUTO_PERCENTILE-th percentile of the valid disparities, in whole pixels at full size
 * (rounded up); disparities = top - min_disparity plus an eighth of top (at least 8), rounded up
 * to a multiple of 16, at least 16 and, with p->band = W, at least W + 16 (the band must be
 * narrower than the range: for_band = 1 when that raised it), at most the largest D the stage
 * takes for this width and min_disparity (clamped = 1 then; a band wider than that largest D
 * fails, STEREO_ERR_PARAM). beyond = 1 when top reached the end of the range measured:
 * the scene may be nearer still. Fails (STEREO_ERR_PARAM, with why) on an image too narrow to
 * measure (about 64 px) and when fewer than 1 % of the pixels matched. Two views only. */
#define STEREO_AUTO_LEVEL 2
#define STEREO_AUTO_PERCENTILE 99
typedef struct {
    int disparities;  /* the D to use */
    int top;          /* the scene's largest disparity measured, px */
    int beyond;       /* 1: top is the end of the range measured */
    int clamped;      /* 1: disparities is the largest the stage takes, below what top asks */
    int for_band;     /* 1: disparities was raised above p's band (band.h: W < D), above
                         what top asks */
} stereo_auto_range;
stereo_status stereo_auto_disparities(const stereo_params *p, const stereo_map *maps,
                                      const stereo_image *left, const stereo_image *right,
                                      stereo_auto_range *out, char *err, size_t errlen);

/* Checks every parameter; on failure writes "name: what is wrong" into err. */
stereo_status stereo_params_check(const stereo_params *p, char *err, size_t errlen);

/* Bytes the CPU backend allocates for p (maps may be NULL): 5 per pixel and disparity (the uint8
 * cost volume and the two sweeps' uint16 S volumes; 5 MB per megapixel and disparity, 640 MB
 * for 1280x960 at D 128), plus about 19 per pixel (grey, rank or census, disparities, the
 * post-filters' scratch and state, postfilter.h; the grey
 * and transform once per view with more views) and, with maps, the source images and the maps'
 * copies. More views need no more volume: the sides rule keeps its two side means in S[1]'s
 * bytes until the backward sweep. */
uint64_t stereo_cpu_bytes(const stereo_params *p, const stereo_map *maps);

/* Creates a stage (allocates every buffer now; processing a frame allocates nothing).
 * maps may be NULL (inputs are already rectified) or point to one map per view (params.views;
 * two for the pair: left, right), copied into the stage; each view's images are then its map's
 * source size (the views' cameras may differ in size). With backend AUTO and no CUDA device, the CPU backend is used and
 * stereo_backend_note() says why. A CPU stage that needs more than 80 % of the machine's
 * physical memory (stereo_cpu_bytes) is refused before anything is allocated: STEREO_ERR_NOMEM,
 * with both figures in the message. */
stereo_status stereo_create(const stereo_params *p, const stereo_map *maps, stereo_stage **out,
                            char *err, size_t errlen);
void stereo_destroy(stereo_stage *s);

/* Runs the pipeline on one pair. Without maps the images must be width x height; with maps they
 * must be the maps' source size. Blocks until the result is ready (CPU backend). A stage made
 * for more than two views refuses it (stereo_process_views). */
stereo_status stereo_process(stereo_stage *s, const stereo_image *left, const stereo_image *right);

/* Runs the pipeline on n = params.views images (2 when views is 0): images[0] the reference,
 * images[i] the view at baseline[i]; every image width x height (with maps: its map's source
 * size). n = 2 is stereo_process. The
 * results are those of the reference view; the right disparity and the LR check are against
 * view 1 (the diagonal search over the combined S, disparity.h; with the sides rule and a view
 * on the other side of the reference the check has an occlusion test from the reference's own
 * map, stereo_lr_views_consistent: what view 1 cannot see, or sees hiding what the right map
 * found, is kept), stereo_rectified(s, 1) is view 1. */
stereo_status stereo_process_views(stereo_stage *s, const stereo_image *images, int n);

/* How far the stereo_process running now (in another thread) has got, in per mille (0..1000)
 * of its frame, for a progress display; 1000 once it is done. The CPU backend's workers count
 * their rows into an atomic counter as they go (one relaxed atomic add per row band, and per
 * row of the SGM sweeps), so reading it costs the pipeline nothing measurable. -1 on the CUDA
 * backend (a frame takes milliseconds there). */
int stereo_progress(const stereo_stage *s);

/* Results of the last stereo_process, width*height row-major, valid until the next call. */
const int16_t *stereo_disparity(const stereo_stage *s);        /* left view, 16*d or STEREO_INVALID */
const int16_t *stereo_disparity_right(const stereo_stage *s);  /* right view (integer d, 16*d) */
const uint8_t *stereo_confidence(const stereo_stage *s);       /* NULL unless params.confidence */
const uint8_t *stereo_rectified(const stereo_stage *s, int right); /* grey, after rectification */

/* Colour-maps the last left disparity into rgba (4 bytes per pixel, alpha 255, invalid black;
 * pitch >= 4 * width, a multiple of 4) on the active backend; colormap is a colormap_id
 * (colormap.h: turbo, jet, grey), over the colour range of stereo_set_color_range. */
stereo_status stereo_colorize(stereo_stage *s, int colormap, uint8_t *rgba, size_t pitch);

/* Stage 9's settings (postfilter.h) from the next frame on: the live app's toggles. A change of
 * the temporal filter's settings (on / off, alpha, delta, persistence) empties its state, so
 * the next frame starts it afresh. STEREO_ERR_PARAM for settings out of range (the message
 * names the field) or while a submitted frame is in flight. */
stereo_status stereo_set_postfilter(stereo_stage *s, const stereo_postfilter *f);

/* The disparity range the colour map spans from now on (stereo_colorize, stereo_submit), in
 * 16ths of a pixel: lo gets the map's first colour, hi its last (colormap.h's rule; e.g.
 * colormap_auto_range of an earlier frame). lo = hi = 0: the search range (the default).
 * STEREO_ERR_PARAM unless lo < hi, both within -32768..32767. */
stereo_status stereo_set_color_range(stereo_stage *s, int lo, int hi);

/* ---- zero-copy frames and asynchronous processing (the live app) ---------------------------
 *
 * Ownership protocol. It holds on a Jetson, where the CPU and the GPU must never touch the same
 * managed memory at the same time (concurrentManagedAccess = 0), and on discrete GPUs alike:
 *  - stereo_frame_alloc gives a frame buffer. CUDA backend without concurrent managed access
 *    (every Jetson: one physical memory): managed memory attached to the host. CUDA backend on
 *    a GPU with it (a discrete GPU): pinned host memory — CPU writes into managed frames would
 *    migrate their pages back to the host and the kernels would fault them in again, which
 *    costs more than one DMA copy (docs/cuda-notes.md). CPU backend: ordinary memory. The
 *    capture thread may write a frame whenever it is not submitted.
 *  - stereo_submit hands a pair to the stage. With the CUDA backend, managed frames from
 *    stereo_frame_alloc (data = the pointer it returned) are read in place — attached to the
 *    stage's stream for the frame, back to the host at its end; host memory (pinned frames
 *    among it) is copied in asynchronously on the stage's stream.
 *    From stereo_submit until stereo_wait returns, the caller must not touch the two frames.
 *  - stereo_wait blocks until the frame is done and fills a stereo_result: the disparity, right
 *    disparity, confidence, the colour image and both rectified grey images, which the GPU
 *    wrote in place (managed memory,
 *    attached to the host again once the frame is done). Results are double-buffered: a result
 *    stays valid and readable until the second stereo_submit after the one that produced it, so
 *    a display thread may show frame N while frame N+1 is being computed.
 *  - One frame is in flight at a time: stereo_submit before stereo_wait is refused, and so is
 *    stereo_process while a frame is in flight.
 * The CPU backend computes in stereo_submit and copies its results into the same two slots. */

stereo_status stereo_frame_alloc(stereo_stage *s, size_t bytes, void **frame);
void stereo_frame_free(stereo_stage *s, void *frame);
stereo_status stereo_submit(stereo_stage *s, const stereo_image *left, const stereo_image *right,
                            int colormap);
/* stereo_submit for a stage of n = params.views images (images as stereo_process_views; n = 2
 * is stereo_submit). Every image is under the same ownership rule as the pair's frames. The
 * result's rectified[] are the reference and view 1. A stage of more than two views refuses
 * stereo_submit and stereo_process (it names the *_views call). */
stereo_status stereo_submit_views(stereo_stage *s, const stereo_image *images, int n,
                                  int colormap);
stereo_status stereo_wait(stereo_stage *s, stereo_result *out);

const stereo_params *stereo_get_params(const stereo_stage *s);
stereo_backend stereo_active_backend(const stereo_stage *s);
/* The SMs the CUDA stage really runs on: params.sms as the hardware rounded it, or the device's
 * count with sms = 0; 0 for the CPU backend. */
int stereo_stage_sms(const stereo_stage *s);
const char *stereo_backend_note(const stereo_stage *s);  /* e.g. why AUTO fell back; "" if none */
const char *stereo_error(const stereo_stage *s);          /* message of the last failed call */

/* Cost mi: what the last stereo_process / stereo_submit did (stereo_mi_info, stereo_types.h):
 * 0 and *out filled on a stage with cost mi that has processed a frame, else -1. */
int stereo_mi_status(const stereo_stage *s, stereo_mi_info *out);

#ifdef __cplusplus
}
#endif
#endif
