/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_types.h — the stereo stage's vocabulary: its limits, its enums, the parameter, image,
 * map and result types, the small rules on them and their names as text (stereo_types.c).
 *
 * stereo.h, the public interface, includes it, so its users see one header. The rooms of the
 * stage below stereo.c (stage_cpu.c, stage_cuda.cu and the modules they call: grey, rectify,
 * transform, sgm, block, disparity, band, multiview, postfilter, colormap, ...) include this one
 * instead of stereo.h, so that every dependency runs one way: stereo.c -> stage_cpu.c /
 * stage_cuda.cu -> the modules -> stereo_types.h and stereo_math.h. It includes nothing of the
 * project.
 */
#ifndef STEREO_TYPES_H
#define STEREO_TYPES_H

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
    int vote;                 /* 1: invalid pixels take their support region's majority */
    int interp;               /* 1: the holes left filled by class: occlusions with the
                                 background, mismatches with the likest pixel's value */
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
                                 host, stage_cpu_mi_prepare) */
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
    /* Mei et al. 2011's refinements around SGM (cross.h): cross = N > 0 averages each pixel's
     * cost over its support region, arms up to N px (1..34), before the paths; discontinuity = 1
     * moves a pixel on a disparity edge to the neighbour's disparity that costs less there,
     * after the LR check. Both off (0) by default; SGM only, not with band. */
    int cross;
    int discontinuity;
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

/* Whether the cost compares census words (census, adcensus): the stage keeps their transform. */
static inline int stereo_cost_has_census(stereo_cost c)
{
    return c == STEREO_COST_CENSUS || c == STEREO_COST_ADCENSUS;
}

/* The number of images the stage matches: params.views, where 0 means the pair. */
static inline int stereo_view_count(const stereo_params *p) { return p->views > 2 ? p->views : 2; }

/* The P1 / P2 that path `dir` (0..7) uses: p1_path[dir] / p2_path[dir], or p1 / p2 where 0. */
void stereo_path_penalties(const stereo_params *p, int dir, int *p1, int *p2);

/* A frame's results (stereo_wait; stereo.h has the ownership protocol). */
typedef struct {
    const int16_t *disparity;        /* 16 * d or STEREO_INVALID */
    const int16_t *disparity_right;  /* NULL without the LR check */
    const uint8_t *confidence;       /* NULL unless params.confidence */
    const uint8_t *rgba;             /* colour-mapped disparity, 4 bytes per pixel, alpha 255 */
    size_t rgba_pitch;
    const uint8_t *rectified[2];     /* the grey images matched (left, right; after the maps),
                                        width bytes per row */
} stereo_result;

/* Cost mi: what the last stereo_process / stereo_submit did (stereo_mi_status). */
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

/* How the library's calls fail (stereo.h): writes the printf-style message into err (when err
 * and errlen are given) and returns st. */
stereo_status stereo_fail(char *err, size_t errlen, stereo_status st, const char *fmt, ...);

#ifdef __cplusplus
}
#endif
#endif
