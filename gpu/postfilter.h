/* SPDX-License-Identifier: Apache-2.0 */
/* postfilter.h — stage 9, the post-filters on the final left disparity (after the median and
 * the LR check), in this order: speckle removal, region voting, occlusion and mismatch
 * interpolation, the temporal filter, hole filling. Each works
 * in integers on the int16 map (value = 16 * d, negative too with a negative minimum disparity;
 * STEREO_INVALID marks the invalid pixels),
 * so the CPU reference (postfilter.c) and the CUDA kernels (postfilter.cu) give the same bits.
 * The settings are stereo_params.post (stereo_types.h); a stage changes them between frames with
 * stereo_set_postfilter. The right disparity is not filtered. The confidence map (when on) is
 * zeroed where the speckle filter invalidates a pixel; pixels that the voting, the
 * interpolation, the fill or the temporal persistence make valid were invalid, so their
 * confidence is already 0.
 *
 * 9a. Speckle removal (OpenCV's filterSpeckles rule): two 4-neighbours are connected when both
 *     are valid and their values differ by at most speckle_diff (16ths of a pixel, the map's own
 *     units: 16 = 1 px). Every connected region (a component of that relation) of fewer than
 *     speckle_size pixels becomes invalid; speckle_size = 0 turns the filter off. The regions are
 *     a property of the map alone (not of a scan order), so any labelling gives the same result:
 *     the CPU floods each region from its first pixel in row-major order, the GPU joins
 *     neighbours by a lock-free union-find (whose every loop strictly lowers an index, so it ends
 *     on any image) and counts each region's pixels with atomics.
 *
 * 9b. Region voting (vote = 1; the iterative region voting of Mei et al. 2011, "On building an
 *     accurate stereo matching system on graphics hardware"): each invalid pixel takes the
 *     disparity that most valid pixels of its support region agree on. The support region comes
 *     from the grey left view I (the rectified reference the stage matched). Pixel p's arm in
 *     each of the four directions e covers q_k = p + k e for k = 1, 2, ... as long as q_k is in
 *     the image, k <= POSTFILTER_VOTE_L1, |I(q_k) - I(p)| < POSTFILTER_VOTE_T1,
 *     |I(q_k) - I(q_k - e)| < POSTFILTER_VOTE_T1 and, for k > POSTFILTER_VOTE_L2, also
 *     |I(q_k) - I(p)| < POSTFILTER_VOTE_T2; its length is the last such k (0: none). p's region:
 *     for each pixel q of p's column from y - up(p) to y + down(p), q's row segment from
 *     x - left(q) to x + right(q). The votes are sampled every POSTFILTER_VOTE_STRIDE pixels
 *     both ways: the region's pixels (x', y') with x' - x and y' - y multiples of the stride (a
 *     quarter of the work, and a bounded one: at most 35 x 35 samples, for 0.03 points of bad-2
 *     on the tuning scenes). Each valid sampled pixel votes for its integer level
 *     k = ((v + 8) >> 4) - dmin (round half up), clamped to 0..D; with S valid samples and n votes
 *     for the level with the most (ties to the smaller k), p becomes 16 (dmin + k) when
 *     S > POSTFILTER_VOTE_MIN and 10 n > POSTFILTER_VOTE_SHARE10 S, and stays invalid otherwise.
 *     POSTFILTER_VOTE_ROUNDS rounds, each on the map the previous one left (a pixel filled in a
 *     round votes in the next; within a round the order does not matter). The arms' constants,
 *     the share and the rounds are the paper's; its 20 votes at the least are 5 here (a quarter,
 *     as the samples); none was tuned here. The confidence stays 0 (the pixel was invalid).
 *
 * 9c. Occlusion and mismatch interpolation (interp = 1; Hirschmueller 2008, "Stereo processing
 *     by semiglobal matching and mutual information", as Mei et al. 2011 take it up): each
 *     pixel p = (x, y) still invalid after 9b is told apart as a mismatch or an occlusion, and
 *     takes a value from the valid pixels around it. The map read is the one 9b left, whole (a
 *     pixel this step fills does not feed another: the order does not matter).
 *     - Class: p is a mismatch when a valid pixel xr of the same row of the right view's
 *       disparity R (the stage's right map, after its median; not post-filtered) names p as its
 *       match, x = xr + ((R(xr) + 8) >> 4): the right camera sees p, and the match failed. p is
 *       an occlusion when none does: the right camera does not see p (a hidden background, the
 *       left border). Without a right map (no LR check) every pixel is a mismatch.
 *     - An occlusion takes the background beside it in its row: the smaller of the first valid
 *       pixels p + k (dx, dy), k = 1 .. POSTFILTER_INTERP_REACH, inside the image, left and
 *       right of p, or the one of them found (an occluded region lies along the row, between a
 *       nearer surface and the background it hides).
 *     - A mismatch takes the lower median (element (n - 1) / 2 of the n sorted values) of the
 *       first valid pixels within the same reach in each of 16 directions
 *       (postfilter_interp_dir).
 *     - No pixel found: p stays invalid; 9e, when on, fills it afterwards (from its row, the
 *       values 9c gave included).
 *     Mei et al.'s own rule (the lowest of the 16 for an occlusion, the likest grey for a
 *     mismatch), the background of the whole row for an occlusion, and other reaches were
 *     measured worse; the reach, 16, was chosen leaving one kind of scene out (docs/tuning.md).
 *
 * 9d. Temporal filter (temporal = 1; sequences: the live app, stereo-match on a sequence). Per
 *     pixel p the stage keeps prev[p] (16ths, or STEREO_INVALID) and age[p] (frames since the
 *     value was last observed). On a frame with input d (after 9a):
 *     - Scene change: over the pixels with d and prev both valid (n_both), n_change counts those
 *       with |d - prev| > temporal_delta; over all pixels, n_now counts valid d and n_prev valid
 *       prev. The frame resets the state when
 *         100 * n_change > POSTFILTER_RESET_CHANGE * n_both,  or
 *         100 * n_now < POSTFILTER_RESET_VALID * n_prev;
 *       a reset frame passes d through and stores prev = d, age = 0 everywhere. The first frame
 *       (and the first after the filter is turned on or its settings change) meets an empty
 *       state (every prev invalid) and so passes d through too.
 *     - Otherwise per pixel:
 *       d and prev valid, |d - prev| <= delta:  out = prev + postfilter_blend(d - prev, alpha),
 *                                                (integer exponential smoothing, alpha in 16ths
 *                                                of the new value, rounded half away from 0);
 *       d valid otherwise:                      out = d;
 *       d invalid, prev valid, age < persist:   out = prev, age + 1 (the last value persists);
 *       else:                                   out = STEREO_INVALID;
 *       then prev = out, and age = 0 wherever d was valid.
 *     temporal_alpha 1..16 (16: no smoothing), temporal_delta 0..4095 (16ths), temporal_persist
 *     0..255 frames (0: an invalid pixel stays invalid).
 *
 * 9e. Hole filling (fill = 1; 0 keeps the holes): in each row, every run of invalid pixels
 *     between two valid pixels gets the smaller value of the two (the background: a hole beside
 *     an object is mostly occluded background), a run that touches the row's first or last
 *     pixel gets the one valid value beside it, and a row without a valid pixel stays invalid.
 *     This is the KITTI devkit's background interpolation, which stereo-eval applies before
 *     scoring: with the fill the stage's output is what the evaluator scores.
 */
#ifndef STEREO_POSTFILTER_H
#define STEREO_POSTFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "cross.h"
#include "parallel.h"
#include "stereo_types.h"
#include "stereo_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 9b's constants (Mei et al. 2011): arm lengths, grey-level limits, votes */
#define POSTFILTER_VOTE_L1 CROSS_ARM_MAX
#define POSTFILTER_VOTE_L2 CROSS_ARM_L2
#define POSTFILTER_VOTE_T1 CROSS_T1
#define POSTFILTER_VOTE_T2 CROSS_T2
#define POSTFILTER_VOTE_STRIDE 2   /* votes sampled every 2 pixels both ways */
#define POSTFILTER_VOTE_MIN 5      /* more valid samples than this in the region */
#define POSTFILTER_VOTE_SHARE10 4  /* the winner's share above 4/10 */
#define POSTFILTER_VOTE_ROUNDS 5
#define POSTFILTER_VOTE_LEVELS 513 /* levels 0..D, D <= 512 */

/* 9b: the four arms of (x, y) packed as cross_arms does (cross.h: left | right << 8 | up << 16 |
 * down << 24), the paper's length */
STEREO_HD uint32_t postfilter_vote_arms(const uint8_t *g, int w, int h, int x, int y)
{
    return cross_arms(g, w, h, x, y, POSTFILTER_VOTE_L1);
}

/* 9b: a valid value's level, 0..D */
STEREO_HD int postfilter_vote_level(int v, int dmin, int ndisp)
{
    const int k = ((v + 8) >> 4) - dmin;
    return k < 0 ? 0 : k > ndisp ? ndisp : k;
}

/* 9b's outcome from S valid pixels and the winner's n votes for level k: the new value, or
 * STEREO_INVALID */
STEREO_HD int postfilter_vote_result(int S, int n, int k, int dmin)
{
    return S > POSTFILTER_VOTE_MIN && 10 * n > POSTFILTER_VOTE_SHARE10 * S ? 16 * (dmin + k)
                                                                           : STEREO_INVALID;
}

/* 9c's reach: steps searched in each direction */
#define POSTFILTER_INTERP_REACH 16
#define POSTFILTER_INTERP_DIRS 16

/* 9c's direction i (0..15), by growing angle atan2(dy, dx) from (1, 0): (1, 0), (2, 1),
 * (1, 1), (1, 2), (0, 1), (-1, 2), ..., (2, -1); each coordinate + 2 is a nibble of a
 * constant. */
STEREO_HD void postfilter_interp_dir(int i, int *dx, int *dy)
{
    *dx = (int)(0x4332110101123343ull >> (4 * i) & 15) - 2;
    *dy = (int)(0x1101011233434332ull >> (4 * i) & 15) - 2;
}

/* 9c's and 9e's background from the nearest valid values left and right (STEREO_INVALID:
 * none): the smaller of two, the one of one. */
STEREO_HD int postfilter_background(int left, int right)
{
    if (left == STEREO_INVALID)
        return right;
    if (right == STEREO_INVALID)
        return left;
    return left < right ? left : right;
}

/* 9c: the first valid value of the map m (w x h, as 9b left it) from (x, y) along direction i
 * within the reach, or STEREO_INVALID (a ray that has left the image stays out). */
STEREO_HD int postfilter_interp_walk(const int16_t *m, int w, int h, int x, int y, int i)
{
    int dx, dy;
    postfilter_interp_dir(i, &dx, &dy);
    for (int k = 0; k < POSTFILTER_INTERP_REACH; k++) {
        x += dx, y += dy;
        if (x < 0 || x >= w || y < 0 || y >= h)
            break;
        const int u = m[(size_t)y * w + x];
        if (u != STEREO_INVALID)
            return u;
    }
    return STEREO_INVALID;
}

/* 9c: hole (x, y)'s value, by its class; STEREO_INVALID when none is found. The CPU's rule;
 * the GPU walks a tile in shared memory instead (postfilter.cu), to the same values. */
STEREO_HD int postfilter_interp_pixel(const int16_t *m, int w, int h, int x, int y, int occluded)
{
    if (occluded) /* directions 8 (-1, 0) and 0 (1, 0) */
        return postfilter_background(postfilter_interp_walk(m, w, h, x, y, 8),
                                     postfilter_interp_walk(m, w, h, x, y, 0));
    int v[POSTFILTER_INTERP_DIRS], n = 0;
    for (int i = 0; i < POSTFILTER_INTERP_DIRS; i++) {
        const int u = postfilter_interp_walk(m, w, h, x, y, i);
        if (u == STEREO_INVALID)
            continue;
        int j = n++; /* insertion: v[0 .. n) stays sorted */
        for (; j > 0 && v[j - 1] > u; j--)
            v[j] = v[j - 1];
        v[j] = u;
    }
    return n ? v[(n - 1) / 2] : STEREO_INVALID;
}

/* 9c: the row's marks from the right map's row r (w values): seen[x] = 1 where a valid right
 * pixel names x as its match, 0 elsewhere (seen has w bytes). */
STEREO_HD void postfilter_interp_marks(const int16_t *r, uint8_t *seen, int w)
{
    for (int x = 0; x < w; x++)
        seen[x] = 0;
    for (int xr = 0; xr < w; xr++) {
        const int v = r[xr];
        if (v == STEREO_INVALID)
            continue;
        const int x = xr + ((v + 8) >> 4);
        if (x >= 0 && x < w)
            seen[x] = 1;
    }
}

/* 9d's scene-change limits, in percent */
#define POSTFILTER_RESET_CHANGE 50  /* more than half of the pixels seen twice jumped */
#define POSTFILTER_RESET_VALID 50   /* the valid pixels fell below half */
#define POSTFILTER_SPECKLE_MAX (1 << 20)  /* speckle_size: 0..this */
#define POSTFILTER_DIFF_MAX 4095          /* speckle_diff, temporal_delta: 0..this (16ths) */
#define POSTFILTER_PERSIST_MAX 255
/* The default speckle size, and the one the live app's toggle (key k) turns on when [stereo]
 * speckle_size is 0: the choice of seven of the eight kinds of scene left out, with 4 paths and
 * steps of 16 (docs/tuning.md) */
#define POSTFILTER_SPECKLE_ON 100

/* 9a: whether two 4-neighbours are joined (both valid, values at most diff 16ths apart). */
STEREO_HD int postfilter_speckle_joined(int u, int v, int diff)
{
    const int dv = u - v;
    return stereo_disparity_valid(u) && stereo_disparity_valid(v) && dv <= diff && -dv <= diff;
}

/* 9d's step toward the new value: round(diff * alpha / 16), halves away from zero. */
STEREO_HD int postfilter_blend(int diff, int alpha)
{
    int t = diff * alpha;
    return t >= 0 ? (t + 8) >> 4 : -((-t + 8) >> 4);
}

/* 9d's per-pixel rule (out, and the state updated in place) for a frame without reset. */
STEREO_HD int16_t postfilter_temporal_pixel(int d, int16_t *prev, uint8_t *age, int alpha,
                                            int delta, int persist)
{
    int q = *prev, out;
    if (d != STEREO_INVALID) {
        int diff = d - q;
        out = q != STEREO_INVALID && diff <= delta && -diff <= delta
                  ? q + postfilter_blend(diff, alpha)
                  : d;
        *age = 0;
    } else if (q != STEREO_INVALID && *age < persist) {
        out = q;
        *age = (uint8_t)(*age + 1);
    } else {
        out = STEREO_INVALID;
    }
    *prev = (int16_t)out;
    return (int16_t)out;
}

/* 9d's reset rule from the frame's counts. */
STEREO_HD int postfilter_temporal_reset(uint32_t n_both, uint32_t n_change, uint32_t n_now,
                                        uint32_t n_prev)
{
    return 100ull * n_change > (unsigned long long)POSTFILTER_RESET_CHANGE * n_both ||
           100ull * n_now < (unsigned long long)POSTFILTER_RESET_VALID * n_prev;
}

/* 9e on pixels [x0, x1) of a row of w values: in the row as it was before filling, left is the
 * last valid x before x0 (-1: none) and right the first valid x at or after x1 (w: none); the
 * filled values go to out (out = row: in place, as only invalid pixels are written). The CPU
 * fills a row as one span (postfilter_fill_rows), each thread of the GPU's block its chunk. */
STEREO_HD void postfilter_fill_span(const int16_t *row, int16_t *out, int w, int x0, int x1,
                                    int left, int right)
{
    for (int x = x0; x < x1; x++) {
        if (row[x] != STEREO_INVALID) {
            left = x;
            continue;
        }
        int r = x;
        while (r < x1 && row[r] == STEREO_INVALID)
            r++;
        const int rv = r < x1 ? r : right;
        if (left < 0 && rv == w)
            return; /* no valid pixel in the row */
        const int v = postfilter_background(left < 0 ? STEREO_INVALID : row[left],
                                            rv == w ? STEREO_INVALID : row[rv]);
        for (; x < r; x++)
            out[x] = (int16_t)v;
        x = r - 1;
    }
}

/* The defaults (stereo_params_default; docs/tuning.md says how they were chosen). */
void postfilter_default(stereo_postfilter *f);

/* Whether the settings are in range (stereo_params_check, stereo_set_postfilter): 0, or -1 with
 * "post-filter: what is wrong" in err. */
int postfilter_check(const stereo_postfilter *f, char *err, size_t errlen);

/* The CPU's scratch and temporal state for a w x h map (allocated once, at create). */
typedef struct {
    int w, h;
    int32_t *label;    /* 9a: each pixel's parent in the regions' forest, w * h */
    int32_t *count;    /* 9a: each root's pixel count, w * h */
    uint8_t *seen;     /* 9b: the pixels a round filled, w * h; 9c: the
                          marks (postfilter_interp_marks), a row each */
    int16_t *prev;     /* 9d: the state, w * h */
    uint8_t *age;
    uint32_t *arms;    /* 9b: each pixel's arms (postfilter_vote_arms), w * h */
    int16_t *round;    /* 9b: the map a round writes, w * h; 9c: the map it reads */
    int32_t *near;     /* 9b: summed-area table of the last round's fills, (w + 1) * (h + 1) */
} postfilter_cpu;

/* Bytes postfilter_cpu_init allocates (stereo_cpu_bytes adds them). */
uint64_t postfilter_cpu_bytes(int w, int h);
int postfilter_cpu_init(postfilter_cpu *pc, int w, int h);   /* 0, or -1: no memory */
void postfilter_cpu_free(postfilter_cpu *pc);
/* Empties 9d's state (every prev invalid). */
void postfilter_temporal_clear(int16_t *prev, uint8_t *age, size_t n);

/* 9a in place; conf (may be NULL) zeroed where a pixel is invalidated; label and count are
 * scratch of w * h each. */
void postfilter_speckle(int16_t *disp, uint8_t *conf, int w, int h, int size, int diff,
                        int32_t *label, int32_t *count);
/* 9b in place on disp (w x h), with grey the rectified left view (pitch w); the search range
 * dmin .. dmin + ndisp - 1; rows on the pool's threads (NULL: this thread alone; the same
 * result). Returns the pixels it filled. */
long postfilter_vote(postfilter_cpu *pc, int16_t *disp, const uint8_t *grey, int dmin, int ndisp,
                     parallel_pool *pool);
/* 9c in place on disp (w x h), with right the right view's map (NULL: none, every hole a
 * mismatch); rows on the pool's threads (NULL: this thread alone; the same result). Returns the
 * pixels it filled. */
long postfilter_interp(postfilter_cpu *pc, int16_t *disp, const int16_t *right,
                       parallel_pool *pool);
/* 9d in place on disp, with the state prev / age; returns 1 when the frame reset the state. */
int postfilter_temporal(int16_t *disp, int16_t *prev, uint8_t *age, size_t n, int alpha,
                        int delta, int persist);
/* 9e in place on rows [y0, y1). */
void postfilter_fill_rows(int16_t *disp, int w, int y0, int y1);

/* 9a, 9b, 9c, 9d, 9e as f says, in order (pc from postfilter_cpu_init); grey (the rectified
 * left view, pitch w), dmin and ndisp are 9b's, right (the right view's map, or NULL) 9c's,
 * pool 9b's and 9c's (grey may be NULL when f->vote is 0, pool NULL for this thread alone). */
void postfilter_apply(const stereo_postfilter *f, postfilter_cpu *pc, int16_t *disp,
                      uint8_t *conf, const int16_t *right, const uint8_t *grey, int dmin,
                      int ndisp, parallel_pool *pool);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>
/* The CUDA twins (postfilter.cu). The kernels read the settings from device memory (pf->dev), so
 * the stage's captured graph serves every setting: stage_cuda_set_postfilter copies new ones
 * there between frames. */
typedef struct {
    stereo_postfilter f;
    uint32_t n_both, n_change, n_now, n_prev; /* 9d's counts of the frame */
} postfilter_dev;

typedef struct {
    postfilter_dev *dev;       /* the settings and counts */
    int32_t *parent, *count;   /* 9a: the union-find forest, each root's pixel count (w * h) */
    int16_t *prev;             /* 9d: the state (w * h) */
    uint8_t *age;
    uint32_t *arms;            /* 9b: each pixel's arms (w * h) */
    int16_t *vote_a, *vote_b;  /* 9b: the maps of the rounds between (w * h each); 9c: a the
                                  map it writes */
    /* 9c's marks (w * h bytes) live in arms, which 9b no longer needs by then */
} postfilter_cuda;

/* 9a, 9b, 9c, 9d, 9e on disp (device), conf (device or NULL) as pf->dev's settings say; right
 * (the right view's map, device, or NULL), grey (the rectified left view, device), dmin and
 * ndisp as postfilter_apply's. 9b's and 9c's kernels are launched only when the host's copy of
 * the settings, on, turns them on (on->vote, on->interp). */
cudaError_t launch_postfilter(const postfilter_cuda *pf, int16_t *disp, uint8_t *conf,
                              const int16_t *right, const uint8_t *grey, int dmin, int ndisp,
                              const stereo_postfilter *on, int w, int h, cudaStream_t stream);
/* New settings, ordered before the next frame on stream; clear: empty 9d's state too. */
cudaError_t postfilter_cuda_set(const postfilter_cuda *pf, const stereo_postfilter *f, int clear,
                                int w, int h, cudaStream_t stream);
#endif
#endif
