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
 *   5. SGM aggregation            sgm.h        4 or 8 paths, P1/P2 per path (+ adaptive P2),
 *                                              weighted sum into S; or, with method bm, the
 *      (or block matching)        block.h      N x N box sum of the cost (SAD when cost = ad)
 *   6. winner-takes-all           disparity.h  uniqueness, fixed-point parabola subpixel (1/16 px)
 *   7. right disparity, median    disparity.h  diagonal search over S, 3x3 median on both maps,
 *      and left-right check                    LR consistency with a tolerance
 *   8. confidence (optional)      disparity.h  gap between best and second-best S
 *   9. post-filters (optional)    postfilter.h speckle removal, temporal filter, hole filling
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

#ifdef __cplusplus
extern "C" {
#endif

#define STEREO_INVALID ((int16_t)-32768)
#define STEREO_SUBPIXEL_BITS 4
#define STEREO_SUBPIXEL_SCALE 16
#define STEREO_MAX_SMS 1024   /* stereo_params.sms: no GPU has more SMs than this */
/* The largest image side the stage takes (stereo_params.width / height, a map's source size).
 * The image, map and calibration readers refuse anything larger from its header, before they
 * allocate, so that a small file announcing a huge image costs no memory. */
#define STEREO_MAX_SIDE 8192
/* The most negative min_disparity (stereo_params.min_disparity): -512 .. . A negative minimum
 * is matched as the range 0 .. D - 1 against the right view shifted by -min_disparity pixels
 * (its columns past the image edge repeat the last one), and the results are shifted back: a
 * left pixel whose match falls right of the right image (x - d > width - 1) is invalid. */
#define STEREO_MIN_DISPARITY (-512)

#ifdef __CUDACC__
__host__ __device__
#endif
static inline int stereo_disparity_valid(int v) { return v != STEREO_INVALID; }

typedef enum {
    STEREO_OK = 0,
    STEREO_ERR_PARAM,   /* a parameter or argument is out of range */
    STEREO_ERR_NOMEM,   /* an allocation failed */
    STEREO_ERR_NODEV,   /* the requested backend is not available (no CUDA device, or built without) */
    STEREO_ERR_CUDA,    /* a CUDA call or kernel failed */
    STEREO_ERR_THREAD,  /* a worker thread could not be started */
} stereo_status;

typedef enum {
    STEREO_COST_RANK = 0,
    STEREO_COST_CENSUS = 1,
    STEREO_COST_AD = 2,       /* min(|IL - IR|, STEREO_GREY_COST_MAX) on grey values */
    STEREO_COST_BT = 3,       /* Birchfield-Tomasi on grey values, same cap (sgm.h) */
    STEREO_COST_MI = 4,       /* hierarchical mutual information on grey values (mi.h) */
    STEREO_COST_ADCENSUS = 5, /* census 9x7 plus ad_weight/8 of |IL - M(IR)|, M the right
                                 view's histogram matched to the left's (more views: each
                                 view's own onto the reference's), at most census's 62
                                 (stereo_adcensus_cost in stereo_math.h; after Mei et al. 2011) */
} stereo_cost;
/* sgm: semi-global matching (default); bm: block matching, winner-takes-all over an N x N box
 * sum of the matching cost (block.h), the local method beside SGM. */
typedef enum { STEREO_METHOD_SGM = 0, STEREO_METHOD_BM = 1 } stereo_method;
#define STEREO_MAX_PATHS 8
#define STEREO_BLOCK_MIN 3
#define STEREO_BLOCK_MAX 31
typedef enum { STEREO_BACKEND_AUTO = 0, STEREO_BACKEND_CPU = 1, STEREO_BACKEND_CUDA = 2 } stereo_backend;
typedef enum { STEREO_PIX_GREY8 = 0, STEREO_PIX_RGB24 = 1, STEREO_PIX_YUYV = 2 } stereo_pixfmt;

/* Multi-baseline matching (multiview.h has the cost rule): the reference view and up to
 * STEREO_MAX_VIEWS - 1 other views, rectified to one image plane with collinear centres. View i
 * sits at the signed baseline ratio b_i relative to view 1 (b_1 = 1; negative: on the other side
 * of the reference), held exactly as b_i * STEREO_BASELINE_SCALE, an integer (16ths, so 0.5,
 * 1.25 or -1.5 are exact). The disparity d is measured against view 1: reference pixel x has its
 * candidate in view i at x - b_i d. */
#define STEREO_MAX_VIEWS 8
#define STEREO_BASELINE_SCALE 16
#define STEREO_BASELINE_MAX 8     /* |b_i| <= 8 */
/* How the per-view costs of (x, d) become one (multiview.h): sides (default), the mean over every
 * view that sees the position, except where the views on one side of the reference look
 * occluded over a 5 x 5 window: then the other side's mean alone; sum, that mean everywhere.
 * Sides is the default: with rank, ad and bt it beat the pair on every scene measured (tsukuba
 * and two generated ones), census on the generated ones; sum did not on tsukuba (docs/results.md,
 * multi-baseline matching). */
typedef enum { STEREO_COMBINE_SIDES = 0, STEREO_COMBINE_SUM = 1 } stereo_combine;

/* Stage 9, the post-filters on the left disparity (postfilter.h has their exact rules). */
typedef struct {
    int speckle_size;         /* regions of fewer pixels become invalid; 0 = off */
    int speckle_diff;         /* neighbours within this many 16ths of a pixel are connected */
    int fill;                 /* 1: fill the holes along each row, background first; 0: keep */
    int temporal;             /* 1: the temporal filter (sequences) */
    int temporal_alpha;       /* weight of the new value in 16ths, 1..16 */
    int temporal_delta;       /* smooth only changes of at most this many 16ths of a pixel */
    int temporal_persist;     /* an invalid pixel keeps the last value this many frames */
} stereo_postfilter;

typedef struct {
    int width, height;        /* size of the (rectified) images the matcher works on */
    int min_disparity;        /* dmin: the smallest disparity searched, STEREO_MIN_DISPARITY ..
                                 2047 - D; negative (the right camera's image content left of
                                 the left camera's, e.g. a rig whose rectification keeps the
                                 principal points apart) with two views, not with cost mi
                                 (stereo_params_check says why) */
    int num_disparities;      /* D: a multiple of 16 in [16, 512], D < width
                                 (stereo_check_disparities) */
    stereo_cost cost;         /* adcensus (the default, stereo_params_default), census 9x7, rank,
                                 ad, bt, or mi (hierarchical mutual information, mi.h; both backends: on CUDA the hierarchy's
                                 levels run on CUDA stages of their own and the tables on the
                                 host, stereo.c cuda_mi_prepare) */
    int rank_window;          /* odd window side for the rank transform, 3..15 (default 9) */
    int ad_weight;            /* cost adcensus: eighths of a cost unit per grey level of
                                 |IL - M(IR)| added to the census distance, 1..16 (default 3) */
    int paths;                /* 4 or 8 (default 8) */
    int p1, p2;               /* SGM penalties of every path: 1 <= p1 < p2 <= 1023 */
    int p2_adapt;             /* 0 = off; T > 0: P2' = max(P1+1, P2*T / (T + |dI|)), see sgm.h;
                                 applies to each path's own P2 */
    /* Per path, in the direction order of sgm.h (0: +x, 1: -x, 2: +y, 3: -y, 4: +x+y, 5: -x+y,
     * 6: +x-y, 7: -x-y; 4 paths use 0..3): 0 = the path takes p1 / p2 above. Each path's pair
     * obeys 1 <= P1 < P2 <= 1023. */
    int p1_path[STEREO_MAX_PATHS], p2_path[STEREO_MAX_PATHS];
    /* Weight of each path's L in S = sum_r w_r L_r: 0..255, not all 0 (default 1 each).
     * The sum must stay exact in uint16: sum over the used paths of w_r (max_cost + P2_r) must
     * be below 65536 (stereo_params_check refuses otherwise, with the figure). */
    int path_weight[STEREO_MAX_PATHS];
    stereo_method method;     /* sgm (default) or bm */
    int block;                /* bm: odd box side 3..31 (default 9); sgm ignores it */
    int uniqueness;           /* percent 0..99, 0 = off (OpenCV's uniquenessRatio rule) */
    int subpixel;             /* 1 = parabola subpixel in 1/16 px, 0 = integer disparities */
    int lr_check;             /* 1 = left-right consistency check */
    int lr_tolerance;         /* px, >= 0 (default 1) */
    int median;               /* 1 = 3x3 median on both maps (before the LR check) */
    int confidence;           /* 1 = compute the confidence map */
    stereo_backend backend;   /* auto: CUDA when a device is present, else CPU */
    int threads;              /* CPU backend worker threads, 0 = one per online core */
    int sms;                  /* CUDA backend: run the stage on this many streaming
                                 multiprocessors, 0..STEREO_MAX_SMS, 0 = all (default). A CUDA
                                 green context (CUDA 12.4 or later, toolkit and driver) holds them;
                                 the hardware may round the count up (Hopper: to a multiple of 8),
                                 see stereo_stage_sms. More than the device has, or a build or
                                 driver without green contexts, fails stereo_create. The rest of
                                 the GPU is left to other work (a Jetson's neural network). The
                                 CPU backend ignores it (also when AUTO falls back to the CPU). */
    int mi_warm;              /* cost mi, a sequence of frames (the live app): 1 = take the
                                 previous frame's left disparity as the initial disparity of the
                                 full-size table instead of running the hierarchy (a "warm"
                                 frame); 0 (default) = the whole hierarchy on every frame */
    int mi_restart;           /* with mi_warm: percent 0..100 (default 50). The hierarchy runs
                                 again ("restart") on the first frame, and on the frame after one
                                 whose valid fraction fell below mi_restart % of the valid
                                 fraction of the last hierarchy frame (a scene cut, a camera
                                 swap: the table no longer fits the pair) */
    int mi_tiles;             /* cost mi: one MI table per tile of a mi_tiles x mi_tiles grid
                                 of the image (1..MI_TILES_MAX, mi.h; 1 = one table for the
                                 frame); default 5 */
    /* Multi-baseline matching (above; stereo_process_views): the number of images, 2 (default;
     * 0 counts as 2: the pair, stereo_process) .. STEREO_MAX_VIEWS. With more than 2: one map
     * per view (stereo_create), the images through stereo_process_views / stereo_submit_views,
     * no cost mi. */
    int views;
    /* baseline[i] = b_i * STEREO_BASELINE_SCALE of view i (images[i] of stereo_process_views):
     * baseline[0] = 0 (the reference), baseline[1] = 16 (b_1 = 1), the others non-zero, distinct,
     * |b_i| <= STEREO_BASELINE_MAX. Read only with views > 2. */
    int baseline[STEREO_MAX_VIEWS];
    stereo_combine combine;   /* views > 2: sides (default) or sum */
    /* The coarse-to-fine mode (band.h): 0 = off (default), the full range at every pixel; W =
     * 32 or 64 (< num_disparities): match at half size over half the range first, then search
     * W disparities per pixel around that result. SGM only, not with cost mi or more views. */
    int band;
    stereo_postfilter post;   /* stage 9 (postfilter.h); stereo_set_postfilter changes it */
} stereo_params;

/* A rectification map pair in OpenCV's fixed-point layout (CV_16SC2 + CV_16UC1), for one camera.
 * For each output pixel i (row-major, width*height): xy[2i], xy[2i+1] = integer source x, y;
 * frac[i] = fy*32 + fx, the 5-bit fractional parts (0..1023). The source image is
 * src_width x src_height. See rectify.h for the exact sampling rule. */
typedef struct {
    int width, height;          /* output (rectified) size = stereo_params width/height */
    int src_width, src_height;  /* camera image size */
    const int16_t *xy;
    const uint16_t *frac;
} stereo_map;

/* An input image: `pitch` bytes between rows (>= width * bytes per pixel). */
typedef struct {
    const uint8_t *data;
    int width, height;
    size_t pitch;
    stereo_pixfmt format;
} stereo_image;

typedef struct stereo_stage stereo_stage;

/* Defaults: cost adcensus (for every count of views, chosen left out: docs/results.md; ad_weight 3; rank
 * window 9), SGM with 8
 * paths, its penalties (stereo_default_penalties: P1 = 32, P2 = 128) for every path with
 * adaptive P2 (T = 16), path weights 1, LR check (1 px), median, subpixel, min_disparity 0, D =
 * 64, no uniqueness test, no confidence; block 9 for method bm; mi_warm 0, mi_restart 50,
 * mi_tiles 5; views 2 (the pair), baseline[1] = 16, combine sides; the post-filters of
 * postfilter_default. */
void stereo_params_default(stereo_params *p, int width, int height);

/* Whether the cost compares census words (census, adcensus): the stage keeps their transform. */
static inline int stereo_cost_has_census(stereo_cost c)
{
    return c == STEREO_COST_CENSUS || c == STEREO_COST_ADCENSUS;
}

/* The tuned P1/P2 defaults for a cost (they scale with the rank window's range). */
void stereo_default_penalties(stereo_cost cost, int rank_window, int *p1, int *p2);

/* The P1 / P2 that path `dir` (0..7) uses: p1_path[dir] / p2_path[dir], or p1 / p2 where 0. */
void stereo_path_penalties(const stereo_params *p, int dir, int *p1, int *p2);

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
typedef struct {
    const int16_t *disparity;        /* 16 * d or STEREO_INVALID */
    const int16_t *disparity_right;  /* NULL without the LR check */
    const uint8_t *confidence;       /* NULL unless params.confidence */
    const uint8_t *rgba;             /* colour-mapped disparity, 4 bytes per pixel, alpha 255 */
    size_t rgba_pitch;
    const uint8_t *rectified[2];     /* the grey images matched (left, right; after the maps),
                                        width bytes per row */
} stereo_result;

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

/* Cost mi: what the last stereo_process / stereo_submit did. */
typedef struct {
    int warm;              /* 1: the table came from the previous frame's disparity (mi_warm);
                              0: the whole hierarchy ran ("restart": the first frame, or the
                              valid fraction collapsed, or mi_warm is off) */
    int levels;            /* hierarchy levels below full size (F of mi.h: 0..4) */
    uint64_t frames;       /* frames this stage has processed */
    uint64_t restarts;     /* of which ran the hierarchy */
    double hierarchy_ms;   /* the levels below full size, tables included (0 on a warm frame) */
    double table_ms;       /* the full-size table (histogram, Parzen, entropies, quantisation) */
    double total_ms;       /* the whole frame */
    double valid;          /* fraction of valid left disparities, 0..1 */
} stereo_mi_info;
/* 0 and *out filled on a stage with cost mi that has processed a frame, else -1. */
int stereo_mi_status(const stereo_stage *s, stereo_mi_info *out);

/* Parses a list of baseline ratios, "1,2,-1" or "1,0.5,-1.25" (decimals that are whole 16ths),
 * into baseline[1..n] in 16ths (baseline[0] = 0, the reference): n = the count given, 1 ..
 * STEREO_MAX_VIEWS - 1. 0, or -1 with why: "value 3 ('0.3'): not a whole number of 16ths",
 * naming the view by its position (view 1 is the first value). Checks the count and the format;
 * stereo_params_check checks the values. */
int stereo_baselines_from_str(const char *s, int baseline[STEREO_MAX_VIEWS], int *n, char *why,
                              size_t whylen);
/* baseline (16ths) as a short decimal, "-1.25", into buf (>= 16 bytes). */
const char *stereo_baseline_str(int baseline, char *buf, size_t len);
const char *stereo_combine_to_str(stereo_combine c);
int stereo_combine_from_str(const char *s, stereo_combine *out);  /* 0 on success */

/* Bytes per pixel of a pixel format: 1 (GREY8), 2 (YUYV), 3 (RGB24). */
int stereo_pixfmt_bytes(stereo_pixfmt f);

const char *stereo_status_str(stereo_status st);
const char *stereo_cost_to_str(stereo_cost c);
int stereo_cost_from_str(const char *s, stereo_cost *out);          /* 0 on success */
const char *stereo_backend_to_str(stereo_backend b);
int stereo_backend_from_str(const char *s, stereo_backend *out);    /* 0 on success */
const char *stereo_method_to_str(stereo_method m);
int stereo_method_from_str(const char *s, stereo_method *out);      /* 0 on success */
/* The allowed names, for messages: "rank, census, ad, bt, mi" and "sgm, bm". */
const char *stereo_cost_names(void);
const char *stereo_method_names(void);

#ifdef __cplusplus
}
#endif
#endif
