/* SPDX-License-Identifier: Apache-2.0 */
/* postfilter.c — the CPU reference of stage 9, the post-filters (postfilter.h). */
#include "postfilter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void postfilter_default(stereo_postfilter *f)
{
    memset(f, 0, sizeof *f);
    /* on: the largest accuracy gain left out by kind; the size and the step chosen leaving one
     * kind of scene out, with the default paths and uniqueness (docs/tuning.md) */
    f->speckle_size = POSTFILTER_SPECKLE_ON;
    f->speckle_diff = 16;
    /* off: with the holes filled as the evaluator fills them bad-2 is the same, and over the
     * pixels the matcher keeps it is lower without (docs/tuning.md) */
    f->fill = 0;
    /* off: see docs/tuning.md */
    f->vote = 0;
    f->interp = 0;
    /* off (sequences only); on, the settings chosen leaving one sequence out */
    f->temporal = 0;
    f->temporal_alpha = 2;
    f->temporal_delta = 64;
    f->temporal_persist = 0;
}

int postfilter_check(const stereo_postfilter *f, char *err, size_t errlen)
{
    const char *what = NULL;
    int v = 0, hi = 0;
    if (f->speckle_size < 0 || f->speckle_size > POSTFILTER_SPECKLE_MAX)
        what = "speckle size", v = f->speckle_size, hi = POSTFILTER_SPECKLE_MAX;
    else if (f->speckle_diff < 0 || f->speckle_diff > POSTFILTER_DIFF_MAX)
        what = "speckle diff", v = f->speckle_diff, hi = POSTFILTER_DIFF_MAX;
    else if (f->fill & ~1)
        what = "fill", v = f->fill, hi = 1;
    else if (f->vote & ~1)
        what = "vote", v = f->vote, hi = 1;
    else if (f->interp & ~1)
        what = "interp", v = f->interp, hi = 1;
    else if (f->temporal & ~1)
        what = "temporal", v = f->temporal, hi = 1;
    else if (f->temporal_alpha < 1 || f->temporal_alpha > 16) {
        snprintf(err, errlen, "temporal alpha: %d is outside 1..16 (16ths)", f->temporal_alpha);
        return -1;
    } else if (f->temporal_delta < 0 || f->temporal_delta > POSTFILTER_DIFF_MAX)
        what = "temporal delta", v = f->temporal_delta, hi = POSTFILTER_DIFF_MAX;
    else if (f->temporal_persist < 0 || f->temporal_persist > POSTFILTER_PERSIST_MAX)
        what = "temporal persist", v = f->temporal_persist, hi = POSTFILTER_PERSIST_MAX;
    if (!what)
        return 0;
    snprintf(err, errlen, "%s: %d is outside 0..%d", what, v, hi);
    return -1;
}

uint64_t postfilter_cpu_bytes(int w, int h)
{
    /* label, count; seen; prev, age; arms; round; then near */
    const uint64_t per_pixel = 2 * sizeof(int32_t) + 1 + sizeof(int16_t) + 1 + sizeof(uint32_t) +
                               sizeof(int16_t);
    return (uint64_t)w * (uint64_t)h * per_pixel +
           (uint64_t)(w + 1) * (uint64_t)(h + 1) * sizeof(int32_t);
}

int postfilter_cpu_init(postfilter_cpu *pc, int w, int h)
{
    size_t n = (size_t)w * h;
    memset(pc, 0, sizeof *pc);
    pc->w = w;
    pc->h = h;
    pc->label = malloc(n * sizeof *pc->label);
    pc->count = malloc(n * sizeof *pc->count);
    pc->seen = malloc(n);
    pc->prev = malloc(n * sizeof *pc->prev);
    pc->age = malloc(n);
    pc->arms = malloc(n * sizeof *pc->arms);
    pc->round = malloc(n * sizeof *pc->round);
    pc->near = malloc((size_t)(w + 1) * (size_t)(h + 1) * sizeof *pc->near);
    if (!pc->label || !pc->count || !pc->seen || !pc->prev || !pc->age || !pc->arms || !pc->round ||
        !pc->near) {
        postfilter_cpu_free(pc);
        return -1;
    }
    postfilter_temporal_clear(pc->prev, pc->age, n);
    return 0;
}

void postfilter_cpu_free(postfilter_cpu *pc)
{
    free(pc->label);
    free(pc->count);
    free(pc->seen);
    free(pc->prev);
    free(pc->age);
    free(pc->arms);
    free(pc->round);
    free(pc->near);
    memset(pc, 0, sizeof *pc);
}

void postfilter_temporal_clear(int16_t *prev, uint8_t *age, size_t n)
{
    for (size_t i = 0; i < n; i++)
        prev[i] = STEREO_INVALID;
    memset(age, 0, n);
}

/* 9a's forest: label[x] is x's parent (a smaller index), a root its own; path halving. */
static int32_t speckle_find(int32_t *label, int32_t x)
{
    while (label[x] != x) {
        label[x] = label[label[x]];
        x = label[x];
    }
    return x;
}

/* Joins the regions of a and b: the larger root goes under the smaller, with its count. */
static void speckle_union(int32_t *label, int32_t *count, int32_t a, int32_t b)
{
    a = speckle_find(label, a);
    b = speckle_find(label, b);
    if (a == b)
        return;
    if (a < b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    label[a] = b;
    count[b] += count[a];
}

/* 9a in one pass over the rows, then one over the pixels. Each row's runs of joined pixels take
 * their first pixel as parent; a run's pixels are counted at its root when it ends; a pixel
 * joined to the one above unions the two regions, except where the pixel before it in the run
 * was joined upwards to a pixel of the same run above (the union is made already). The regions
 * are the flood fill's, whatever order they are found in. */
void postfilter_speckle(int16_t *disp, uint8_t *conf, int w, int h, int size, int diff,
                        int32_t *label, int32_t *count)
{
    if (size <= 0)
        return;
    for (int y = 0; y < h; y++) {
        const int16_t *row = disp + (size_t)y * w, *up = y > 0 ? row - w : NULL;
        const int32_t base = (int32_t)((size_t)y * w);
        int32_t start = -1, run = 0;
        int up_joined = 0; /* the pixel before was joined to the one above it */
        for (int x = 0; x < w; x++) {
            const int v = row[x];
            if (!stereo_disparity_valid(v)) {
                if (start >= 0)
                    count[speckle_find(label, start)] += run;
                start = -1, up_joined = 0;
                continue;
            }
            const int32_t p = base + x;
            const int same_run = start >= 0 && postfilter_speckle_joined(v, row[x - 1], diff);
            if (same_run) {
                label[p] = start;
                run++;
            } else {
                if (start >= 0)
                    count[speckle_find(label, start)] += run;
                start = p, run = 1;
                label[p] = p;
                count[p] = 0;
            }
            const int joined = up && postfilter_speckle_joined(v, up[x], diff);
            if (joined &&
                !(same_run && up_joined && postfilter_speckle_joined(up[x - 1], up[x], diff)))
                speckle_union(label, count, p, p - w);
            up_joined = joined;
        }
        if (start >= 0)
            count[speckle_find(label, start)] += run;
    }
    const size_t n = (size_t)w * h;
    for (size_t p = 0; p < n; p++)
        if (stereo_disparity_valid(disp[p]) && count[speckle_find(label, (int32_t)p)] < size) {
            disp[p] = STEREO_INVALID;
            if (conf)
                conf[p] = 0;
        }
}

/* 9b. A pixel whose box of radius L1 saw no fill in the last round would count the same votes
 * again and fail again, so rounds after the first look only at invalid pixels with a fill of
 * the last round within that box (pc->near, a summed-area table of pc->seen): the result is the
 * rule's (every invalid pixel, every round), at a fraction of the work. Rows run in parallel on
 * the pool when there is one (a round reads disp and writes pc->round and pc->seen, each pixel
 * its own). */
typedef struct {
    postfilter_cpu *pc;
    const int16_t *disp;
    const uint8_t *grey;
    int dmin, ndisp, round;
    long filled; /* added to atomically by the row jobs */
} vote_job;

static int vote_pixel(const postfilter_cpu *pc, const int16_t *disp, int x, int y, int dmin,
                      int ndisp, int32_t *votes)
{
    const int w = pc->w;
    const uint32_t a = pc->arms[(size_t)y * w + x];
    memset(votes, 0, (size_t)(ndisp + 1) * sizeof *votes);
    int S = 0;
    const int st = POSTFILTER_VOTE_STRIDE;
    for (int yy = y - (int)(a >> 16 & 0xff) / st * st; yy <= y + (int)(a >> 24); yy += st) {
        const uint32_t b = pc->arms[(size_t)yy * w + x];
        const int16_t *row = disp + (size_t)yy * w;
        for (int xx = x - (int)(b & 0xff) / st * st; xx <= x + (int)(b >> 8 & 0xff); xx += st)
            if (row[xx] != STEREO_INVALID) {
                votes[postfilter_vote_level(row[xx], dmin, ndisp)]++;
                S++;
            }
    }
    int best = 0;
    for (int k = 1; k <= ndisp; k++)
        if (votes[k] > votes[best])
            best = k;
    return postfilter_vote_result(S, votes[best], best, dmin);
}

static void vote_arms_rows(void *ctx, int y0, int y1)
{
    const vote_job *j = ctx;
    const int w = j->pc->w, h = j->pc->h;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++)
            j->pc->arms[(size_t)y * w + x] = postfilter_vote_arms(j->grey, w, h, x, y);
}

static void vote_round_rows(void *ctx, int y0, int y1)
{
    vote_job *j = ctx;
    postfilter_cpu *pc = j->pc;
    const int w = pc->w, h = pc->h, r = POSTFILTER_VOTE_L1;
    const size_t W = (size_t)w + 1;
    int32_t votes[POSTFILTER_VOTE_LEVELS];
    long filled = 0;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
            const size_t p = (size_t)y * w + x;
            if (j->disp[p] != STEREO_INVALID)
                continue;
            if (j->round > 0) {
                const int bx0 = x - r < 0 ? 0 : x - r, bx1 = x + r + 1 > w ? w : x + r + 1;
                const int by0 = y - r < 0 ? 0 : y - r, by1 = y + r + 1 > h ? h : y + r + 1;
                const int32_t *t = pc->near;
                if (t[by1 * W + bx1] - t[by0 * W + bx1] - t[by1 * W + bx0] + t[by0 * W + bx0] == 0)
                    continue;
            }
            const int v = vote_pixel(pc, j->disp, x, y, j->dmin, j->ndisp, votes);
            if (v != STEREO_INVALID) {
                pc->round[p] = (int16_t)v;
                pc->seen[p] = 1;
                filled++;
            }
        }
    __atomic_add_fetch(&j->filled, filled, __ATOMIC_RELAXED);
}

static void vote_run(parallel_pool *pool, int h, parallel_fn fn, vote_job *j)
{
    if (pool)
        parallel_for(pool, h, 0, fn, j);
    else
        fn(j, 0, h);
}

long postfilter_vote(postfilter_cpu *pc, int16_t *disp, const uint8_t *grey, int dmin, int ndisp,
                     parallel_pool *pool)
{
    const int w = pc->w, h = pc->h;
    const size_t n = (size_t)w * h;
    vote_job j = {pc, disp, grey, dmin, ndisp, 0, 0};
    vote_run(pool, h, vote_arms_rows, &j);
    long total = 0;
    for (int round = 0; round < POSTFILTER_VOTE_ROUNDS; round++) {
        if (round > 0) { /* the summed-area table of the last round's fills */
            int32_t *t = pc->near;
            memset(t, 0, (size_t)(w + 1) * sizeof *t);
            for (int y = 0; y < h; y++) {
                int32_t acc = 0;
                t[(size_t)(y + 1) * (w + 1)] = 0;
                for (int x = 0; x < w; x++) {
                    acc += pc->seen[(size_t)y * w + x];
                    t[(size_t)(y + 1) * (w + 1) + x + 1] = t[(size_t)y * (w + 1) + x + 1] + acc;
                }
            }
        }
        memcpy(pc->round, disp, n * sizeof *disp);
        memset(pc->seen, 0, n);
        j.round = round, j.filled = 0;
        vote_run(pool, h, vote_round_rows, &j);
        memcpy(disp, pc->round, n * sizeof *disp);
        total += j.filled;
        if (!j.filled)
            break;
    }
    return total;
}

/* 9c: per row, the marks from the right map (pc->seen), then the holes, reading pc->round (the
 * map before 9c, whole) and writing disp; each row job its own rows of pc->seen and disp. */
typedef struct {
    postfilter_cpu *pc;
    int16_t *disp;
    const int16_t *right;
    long filled;
} interp_job;

static void interp_rows(void *ctx, int y0, int y1)
{
    interp_job *j = ctx;
    const postfilter_cpu *pc = j->pc;
    const int w = pc->w, h = pc->h;
    long filled = 0;
    for (int y = y0; y < y1; y++) {
        const size_t row = (size_t)y * w;
        if (j->right)
            postfilter_interp_marks(j->right + row, pc->seen + row, w);
        for (int x = 0; x < w; x++) {
            if (pc->round[row + x] != STEREO_INVALID)
                continue;
            const int v = postfilter_interp_pixel(pc->round, w, h, x, y,
                                                  j->right && !pc->seen[row + x]);
            if (v != STEREO_INVALID) {
                j->disp[row + x] = (int16_t)v;
                filled++;
            }
        }
    }
    __atomic_add_fetch(&j->filled, filled, __ATOMIC_RELAXED);
}

long postfilter_interp(postfilter_cpu *pc, int16_t *disp, const int16_t *right,
                       parallel_pool *pool)
{
    interp_job j = {pc, disp, right, 0};
    memcpy(pc->round, disp, (size_t)pc->w * pc->h * sizeof *disp);
    if (pool)
        parallel_for(pool, pc->h, 0, interp_rows, &j);
    else
        interp_rows(&j, 0, pc->h);
    return j.filled;
}

int postfilter_temporal(int16_t *disp, int16_t *prev, uint8_t *age, size_t n, int alpha,
                        int delta, int persist)
{
    uint32_t n_both = 0, n_change = 0, n_now = 0, n_prev = 0;
    for (size_t i = 0; i < n; i++) {
        int d = disp[i], q = prev[i];
        n_now += stereo_disparity_valid(d);
        n_prev += stereo_disparity_valid(q);
        if (stereo_disparity_valid(d) && stereo_disparity_valid(q)) {
            n_both++;
            n_change += d - q > delta || q - d > delta;
        }
    }
    if (postfilter_temporal_reset(n_both, n_change, n_now, n_prev)) {
        memcpy(prev, disp, n * sizeof *prev);
        memset(age, 0, n);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        disp[i] = postfilter_temporal_pixel(disp[i], &prev[i], &age[i], alpha, delta, persist);
    return 0;
}

void postfilter_fill_rows(int16_t *disp, int w, int y0, int y1)
{
    for (int y = y0; y < y1; y++)
        postfilter_fill_span(disp + (size_t)y * w, disp + (size_t)y * w, w, 0, w, -1, w);
}

void postfilter_apply(const stereo_postfilter *f, postfilter_cpu *pc, int16_t *disp,
                      uint8_t *conf, const int16_t *right, const uint8_t *grey, int dmin,
                      int ndisp, parallel_pool *pool)
{
    if (f->speckle_size > 0)
        postfilter_speckle(disp, conf, pc->w, pc->h, f->speckle_size, f->speckle_diff,
                           pc->label, pc->count);
    if (f->vote)
        postfilter_vote(pc, disp, grey, dmin, ndisp, pool);
    if (f->interp)
        postfilter_interp(pc, disp, right, pool);
    if (f->temporal)
        postfilter_temporal(disp, pc->prev, pc->age, (size_t)pc->w * pc->h, f->temporal_alpha,
                            f->temporal_delta, f->temporal_persist);
    if (f->fill)
        postfilter_fill_rows(disp, pc->w, 0, pc->h);
}
