/* SPDX-License-Identifier: Apache-2.0 */
/* stereo.c — the stereo stage's front door (stereo.h): the parameters and their checks, the
 * backend choice, the images' checks, and the dispatch of every call to the active backend:
 * stage_cpu.h (the CPU pipeline, the specification) or stage_cuda.h (the CUDA kernels, bit for
 * bit the same). With cost mi on the CUDA backend, the CPU stage's host side computes the tables
 * and a CUDA stage per level of the hierarchy matches it (cuda_mi_alloc).
 */
#include "stereo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "colormap.h"
#include "cross.h"
#include "mi.h"
#include "postfilter.h"
#include "rectify.h"
#include "stage_cpu.h"
#include "stage_cuda.h"
#include "transform.h"

struct stereo_stage {
    stereo_params p;
    stereo_backend active;
    char note[256];
    char err[256];
    int have_maps;
    int src_w[STEREO_MAX_VIEWS], src_h[STEREO_MAX_VIEWS]; /* each view's images: its map's
                                                             source size, or the stage's */
    stage_cpu *cpu;         /* the CPU backend, or NULL */
    stage_cuda *cuda;       /* the CUDA backend, or NULL */
    /* CUDA backend: the results, copied back into host buffers */
    int16_t *disp, *disp_right;
    uint8_t *conf, *rect[2];
    /* cost mi on the CUDA backend: the tables on the host (the CPU stage's host side), the
     * hierarchy's levels f = F .. 1 (F = 0: the full size once more, level-style) each on a CUDA
     * stage of its own size (cuda_mi_alloc) */
    stage_cpu *mi_host;
    stage_cuda *mi_level[MI_LEVELS + 1];
    int in_flight;          /* a submitted frame waits for stereo_wait */
    colormap_range color;   /* stereo_set_color_range */
};

/* ---- parameters --------------------------------------------------------------------------- */

void stereo_default_penalties(stereo_cost cost, int rank_window, int *p1, int *p2)
{
    /* Chosen with tools/tune_penalties.py on the six shared Middlebury scenes, with the adaptive
     * P2 (T = 16) on, in the middle of a broad plateau (docs/tuning.md has the grids). */
    if (cost == STEREO_COST_ADCENSUS) {
        /* chosen leaving one kind of scene out, under the default's 4 paths and speckle removal
         * (tools/loso.py --by-kind --family candidate-penalties; docs/tuning.md) */
        *p1 = 40;
        *p2 = 160;
    } else if (cost == STEREO_COST_CENSUS) {
        /* chosen by leave-one-scene-out over the shared, re-exposed and generated scenes
         * (tools/loso.py --family census-penalties, inside its grid; docs/tuning.md) */
        *p1 = 32;
        *p2 = 128;
    } else if (cost == STEREO_COST_AD || cost == STEREO_COST_BT) {
        /* the middle of the plateau P1 12..16 x P2 96..128 of both (docs/tuning.md) */
        *p1 = 14;
        *p2 = 112;
    } else if (cost == STEREO_COST_MI) {
        /* the middle of the plateau P1 8..12, P2 48..64 (mean bad-2 4.10-4.15) */
        *p1 = 10;
        *p2 = 56;
    } else {
        /* for the 9x9 rank (costs 0..80); other windows scale with the rank range */
        int range = rank_window * rank_window - 1;
        *p1 = (24 * range + 40) / 80;
        *p2 = (128 * range + 40) / 80;
        if (*p1 < 1)
            *p1 = 1;
        if (*p2 <= *p1)
            *p2 = *p1 + 1;
    }
}

void stereo_params_default(stereo_params *p, int width, int height)
{
    memset(p, 0, sizeof *p);
    p->width = width;
    p->height = height;
    p->min_disparity = 0;
    p->num_disparities = 64;
    /* chosen for the pair by leave-one-scene-out within the Jetson budget; with more views
     * adcensus beats census too (docs/results.md, multi-baseline matching) */
    p->cost = STEREO_COST_ADCENSUS;
    p->rank_window = 9;
    p->ad_weight = 3;
    /* more accurate than 8 with speckle removal on every kind of scene left out, and faster on
     * both backends (docs/tuning.md) */
    p->paths = 4;
    stereo_default_penalties(p->cost, p->rank_window, &p->p1, &p->p2);
    p->p2_adapt = 16;
    p->uniqueness = 5; /* chosen leaving one kind of scene out (docs/tuning.md) */
    p->subpixel = 1;
    p->lr_check = 1;
    p->lr_tolerance = 1;
    p->median = 1;
    p->confidence = 0;
    p->backend = STEREO_BACKEND_AUTO;
    p->threads = 0;
    for (int r = 0; r < STEREO_MAX_PATHS; r++)
        p->path_weight[r] = 1;
    p->method = STEREO_METHOD_SGM;
    p->block = 9;
    p->mi_warm = 0;
    p->mi_restart = 50;
    p->mi_tiles = 5;
    p->views = 2;
    p->baseline[1] = STEREO_BASELINE_SCALE;
    p->combine = STEREO_COMBINE_SIDES;
    postfilter_default(&p->post);
}

int stereo_max_cost(const stereo_params *p) { return transform_max_cost(p->cost, p->rank_window); }

int stereo_check_disparities(int D, char *why, size_t whylen)
{
    if (D < 16 || D > 512)
        snprintf(why, whylen, "%d is outside 16..512", D);
    else if (D % 16 != 0)
        snprintf(why, whylen, "%d is not a multiple of 16 (try %d or %d)", D, D / 16 * 16,
                 D / 16 * 16 + 16);
    else
        return 0;
    return -1;
}

/* The multi-view parameters (stereo.h); the pair (views 0 or 2) reads none of them. */
static stereo_status views_check(const stereo_params *p, char *err, size_t errlen)
{
    const stereo_status E = STEREO_ERR_PARAM;
    if (p->views < 0 || p->views == 1 || p->views > STEREO_MAX_VIEWS)
        return stereo_fail(err, errlen, E, "views: %d is outside 2..%d (0 = 2, the pair)", p->views,
                           STEREO_MAX_VIEWS);
    if (p->views <= 2)
        return STEREO_OK;
    if ((unsigned)p->combine > STEREO_COMBINE_SUM)
        return stereo_fail(err, errlen, E, "combine: %d is neither sides nor sum", (int)p->combine);
    if (p->cost == STEREO_COST_MI)
        return stereo_fail(err, errlen, E,
                           "cost mi: not with more than two views yet (its table is "
                           "learnt from one pair)");
    if (p->baseline[0] != 0)
        return stereo_fail(err, errlen, E, "baseline of the reference (view 0): %d, must be 0",
                           p->baseline[0]);
    if (p->baseline[1] != STEREO_BASELINE_SCALE)
        return stereo_fail(err, errlen, E,
                           "baseline of view 1: %d/%d, must be 1 (the disparity is "
                           "measured against view 1)",
                           p->baseline[1], STEREO_BASELINE_SCALE);
    const int bmax = STEREO_BASELINE_MAX * STEREO_BASELINE_SCALE;
    for (int i = 2; i < p->views; i++) {
        int b = p->baseline[i];
        if (b == 0)
            return stereo_fail(err, errlen, E,
                               "baseline of view %d: 0 (a view at the reference's "
                               "centre sees nothing new)",
                               i);
        if (b < -bmax || b > bmax)
            return stereo_fail(err, errlen, E, "baseline of view %d: %d/%d is outside -%d..%d", i,
                               b, STEREO_BASELINE_SCALE, STEREO_BASELINE_MAX, STEREO_BASELINE_MAX);
        for (int j = 1; j < i; j++)
            if (p->baseline[j] == b)
                return stereo_fail(err, errlen, E, "baseline of view %d: %d/%d repeats view %d's",
                                   i, b, STEREO_BASELINE_SCALE, j);
    }
    return STEREO_OK;
}

stereo_status stereo_params_check(const stereo_params *p, char *err, size_t errlen)
{
    const stereo_status E = STEREO_ERR_PARAM;
    if (p->width < 1 || p->height < 1 || p->width > STEREO_MAX_SIDE || p->height > STEREO_MAX_SIDE)
        return stereo_fail(err, errlen, E, "image size: %dx%d is outside 1x1..%dx%d", p->width,
                           p->height, STEREO_MAX_SIDE, STEREO_MAX_SIDE);
    int D = p->num_disparities;
    char why[80];
    if (stereo_check_disparities(D, why, sizeof why) != 0)
        return stereo_fail(err, errlen, E, "disparities: %s", why);
    if (D >= p->width)
        return stereo_fail(err, errlen, E,
                           "disparities: %d must be smaller than the image width %d", D, p->width);
    if (p->min_disparity < STEREO_MIN_DISPARITY || p->min_disparity + D > 2047)
        return stereo_fail(err, errlen, E, "min disparity: %d must be >= %d with min + D <= 2047",
                           p->min_disparity, STEREO_MIN_DISPARITY);
    if (p->min_disparity < 0 && -p->min_disparity + D >= p->width)
        return stereo_fail(err, errlen, E,
                           "min disparity: %d with %d disparities needs an image wider "
                           "than %d (%d)", p->min_disparity, D, D - p->min_disparity, p->width);
    if ((unsigned)p->cost > STEREO_COST_ADCENSUS)
        return stereo_fail(err, errlen, E, "cost: %d is not one of %s", (int)p->cost,
                           stereo_cost_names());
    if ((unsigned)p->method > STEREO_METHOD_BM)
        return stereo_fail(err, errlen, E, "method: %d is not one of %s", (int)p->method,
                           stereo_method_names());
    if (p->method == STEREO_METHOD_BM &&
        (p->block < STEREO_BLOCK_MIN || p->block > STEREO_BLOCK_MAX || p->block % 2 == 0))
        return stereo_fail(err, errlen, E, "block: %d is not odd in %d..%d", p->block,
                           STEREO_BLOCK_MIN, STEREO_BLOCK_MAX);
    if (p->cost == STEREO_COST_RANK &&
        (p->rank_window < 3 || p->rank_window > RANK_WINDOW_MAX || p->rank_window % 2 == 0))
        return stereo_fail(err, errlen, E, "rank window: %d is not odd in 3..%d", p->rank_window,
                           RANK_WINDOW_MAX);
    if (p->min_disparity < 0 && (p->cost == STEREO_COST_MI || stereo_view_count(p) > 2))
        return stereo_fail(err, errlen, E, "min disparity: %d is negative, which %s does not take",
                           p->min_disparity,
                           p->cost == STEREO_COST_MI ? "cost mi" : "more than two views");
    if (p->cost == STEREO_COST_ADCENSUS && (p->ad_weight < 1 || p->ad_weight > 16))
        return stereo_fail(err, errlen, E, "ad weight: %d is outside 1..16", p->ad_weight);
    if (p->paths != 4 && p->paths != 8)
        return stereo_fail(err, errlen, E, "paths: %d is neither 4 nor 8", p->paths);
    if (p->p1 < 1 || p->p1 > 1022)
        return stereo_fail(err, errlen, E, "p1: %d is outside 1..1022", p->p1);
    if (p->p2 <= p->p1 || p->p2 > 1023)
        return stereo_fail(err, errlen, E, "p2: %d must be greater than p1 (%d) and at most 1023",
                           p->p2, p->p1);
    /* each path's own pair, and the weighted sum's range (sgm.h) */
    long range = 0;
    int wsum = 0;
    for (int r = 0; r < p->paths; r++) {
        int q1, q2;
        stereo_path_penalties(p, r, &q1, &q2);
        if (p->p1_path[r] < 0 || q1 < 1 || q1 > 1022)
            return stereo_fail(err, errlen, E, "p1 of path %d: %d is outside 1..1022", r,
                               p->p1_path[r] < 0 ? p->p1_path[r] : q1);
        if (p->p2_path[r] < 0 || q2 <= q1 || q2 > 1023)
            return stereo_fail(err, errlen, E,
                               "p2 of path %d: %d must be greater than its p1 (%d) and at "
                               "most 1023", r, p->p2_path[r] < 0 ? p->p2_path[r] : q2, q1);
        if (p->path_weight[r] < 0 || p->path_weight[r] > 255)
            return stereo_fail(err, errlen, E, "path weight %d: %d is outside 0..255", r,
                               p->path_weight[r]);
        wsum += p->path_weight[r];
        range += (long)p->path_weight[r] * (stereo_max_cost(p) + q2);
    }
    if (wsum == 0)
        return stereo_fail(err, errlen, E,
                           "path weights: all %d are 0 (at least one must be positive)", p->paths);
    if (p->method == STEREO_METHOD_SGM && range > 65535)
        return stereo_fail(err, errlen, E,
                           "path weights: the sum of w_r * (max cost %d + P2_r) over the paths "
                           "is %ld, more than the 65535 the 16-bit sum S holds; lower the "
                           "weights or P2", stereo_max_cost(p), range);
    if (p->p2_adapt < 0 || p->p2_adapt > 255)
        return stereo_fail(err, errlen, E, "p2 adapt: %d is outside 0..255", p->p2_adapt);
    if (p->uniqueness < 0 || p->uniqueness > 99)
        return stereo_fail(err, errlen, E, "uniqueness: %d is outside 0..99", p->uniqueness);
    if ((p->subpixel | p->lr_check | p->median | p->confidence) & ~1)
        return stereo_fail(err, errlen, E, "subpixel/lr_check/median/confidence must be 0 or 1");
    if (p->lr_tolerance < 0 || p->lr_tolerance > 255)
        return stereo_fail(err, errlen, E, "lr tolerance: %d is outside 0..255", p->lr_tolerance);
    if ((unsigned)p->backend > STEREO_BACKEND_CUDA)
        return stereo_fail(err, errlen, E, "backend: %d is not auto, cpu or cuda", (int)p->backend);
    if (p->threads < 0 || p->threads > 256)
        return stereo_fail(err, errlen, E, "threads: %d is outside 0..256", p->threads);
    if (p->sms < 0 || p->sms > STEREO_MAX_SMS)
        return stereo_fail(err, errlen, E, "sms: %d is outside 0..%d (0 = every SM of the device)",
                           p->sms, STEREO_MAX_SMS);
    if (p->mi_warm & ~1)
        return stereo_fail(err, errlen, E, "mi warm: %d is neither 0 nor 1", p->mi_warm);
    if (p->mi_restart < 0 || p->mi_restart > 100)
        return stereo_fail(err, errlen, E, "mi restart: %d is outside 0..100 (percent)",
                           p->mi_restart);
    if (p->mi_tiles < 1 || p->mi_tiles > MI_TILES_MAX)
        return stereo_fail(err, errlen, E, "mi tiles: %d is outside 1..%d", p->mi_tiles,
                           MI_TILES_MAX);
    if (p->cross < 0 || p->cross > CROSS_ARM_MAX)
        return stereo_fail(err, errlen, E, "cross: %d is outside 0..%d (0 = off)", p->cross,
                           CROSS_ARM_MAX);
    if (p->discontinuity & ~1)
        return stereo_fail(err, errlen, E, "discontinuity: %d is neither 0 nor 1",
                           p->discontinuity);
    if ((p->cross || p->discontinuity) && (p->method != STEREO_METHOD_SGM || p->band))
        return stereo_fail(err, errlen, E,
                           "%s: refines SGM over the full cost volume, not %s",
                           p->cross ? "cross" : "discontinuity",
                           p->band ? "the coarse-to-fine mode (band)" : "method bm");
    if (postfilter_check(&p->post, err, errlen) != 0)
        return E;
    stereo_status st = views_check(p, err, errlen);
    if (st != STEREO_OK || p->band == 0)
        return st;
    if (band_check(p->band, D, why, sizeof why) != 0)
        return stereo_fail(err, errlen, E, "band: %s", why);
    if (p->method != STEREO_METHOD_SGM || p->cost == STEREO_COST_MI || stereo_view_count(p) > 2)
        return stereo_fail(err, errlen, E,
                           "band: the coarse-to-fine mode is for SGM with two views and "
                           "a cost other than mi (%s)",
                           p->method != STEREO_METHOD_SGM ? "method bm"
                           : p->cost == STEREO_COST_MI    ? "cost mi"
                                                          : "more views");
    stereo_params q;
    band_coarse_params(p, &q);
    char cerr[200];
    if (stereo_params_check(&q, cerr, sizeof cerr) != STEREO_OK)
        return stereo_fail(err, errlen, E, "band: the half-size level (%dx%d, %d disparities): %s",
                           q.width, q.height, q.num_disparities, cerr);
    return STEREO_OK;
}


/* ---- create / destroy --------------------------------------------------------------------- */

/* The bytes of the CPU backend: its own count, which mirrors its allocation. */
uint64_t stereo_cpu_bytes(const stereo_params *p, const stereo_map *maps)
{
    return stage_cpu_bytes(p, maps);
}

/* The parameters of level lv of the MI hierarchy (mi.h) as a stage of its own: the stage's
 * penalties (per path), path weights and paths, always SGM, the median and the LR check (1 px),
 * integer disparities, no uniqueness, no confidence, no maps: what mi_level_job (stage_cpu.c)
 * sets for the CPU's levels. */
static void mi_level_params(const stereo_params *p, const mi_level *lv, stereo_params *q)
{
    *q = *p;
    q->width = lv->w, q->height = lv->h;
    q->min_disparity = lv->dmin, q->num_disparities = lv->ndisp;
    q->method = STEREO_METHOD_SGM;
    q->median = q->lr_check = 1, q->lr_tolerance = 1;
    q->subpixel = q->uniqueness = q->confidence = 0;
    q->views = 2, q->mi_warm = 0;
    q->post.speckle_size = q->post.fill = q->post.temporal = q->post.vote =
        q->post.interp = 0;
    q->cross = q->discontinuity = 0; /* the full size's refinements (cross.h) */
}

/* Cost mi on the CUDA backend: the host side of every frame (the CPU stage's, cuda_mi_prepare)
 * and a CUDA stage per level of the hierarchy. */
static stereo_status cuda_mi_alloc(stereo_stage *s, const stereo_map *maps, char *err,
                                   size_t errlen)
{
    const stereo_params *p = &s->p;
    stereo_status st = stage_cpu_mi_host_create(p, maps, &s->mi_host, err, errlen);
    if (st != STEREO_OK)
        return st;
    const int F = mi_coarsest_level(p->width, p->height, p->min_disparity, p->num_disparities);
    for (int f = F; f >= (F > 0 ? 1 : 0); f--) {
        mi_level lv;
        stereo_params q;
        mi_level_geometry(p->width, p->height, p->min_disparity, p->num_disparities, f, &lv);
        mi_level_params(p, &lv, &q);
        char why[200];
        st = stage_cuda_create(&q, NULL, &s->mi_level[f], why, sizeof why);
        if (st != STEREO_OK)
            return stereo_fail(err, errlen, st, "mi level %d (%dx%d, D %d): %s", f, lv.w, lv.h,
                               lv.ndisp, why);
    }
    return STEREO_OK;
}

stereo_status stereo_create(const stereo_params *p, const stereo_map *maps, stereo_stage **out,
                            char *err, size_t errlen)
{
    *out = NULL;
    stereo_status st = stereo_params_check(p, err, errlen);
    if (st != STEREO_OK)
        return st;
    if (maps) {
        char why[160];
        for (int i = 0; i < stereo_view_count(p); i++)
            if (rectify_map_check(&maps[i], p->width, p->height, why, sizeof why) != 0) {
                if (stereo_view_count(p) > 2)
                    return stereo_fail(err, errlen, STEREO_ERR_PARAM, "view %d map: %s", i, why);
                return stereo_fail(err, errlen, STEREO_ERR_PARAM, "%s map: %s",
                                   i ? "right" : "left", why);
            }
    }
    stereo_stage *s = calloc(1, sizeof *s);
    if (!s)
        return stereo_fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate the stage");
    s->p = *p;
    s->color = colormap_fixed_range(p->min_disparity, p->num_disparities);
    s->have_maps = maps != NULL;
    for (int i = 0; i < stereo_view_count(p); i++) {
        s->src_w[i] = maps ? maps[i].src_width : p->width;
        s->src_h[i] = maps ? maps[i].src_height : p->height;
    }

    s->active = p->backend;
    if (s->active != STEREO_BACKEND_CPU) {
        char why[200];
        int have = stage_cuda_available(why, sizeof why);
        if (p->backend == STEREO_BACKEND_CUDA && !have) {
            st = stereo_fail(err, errlen, STEREO_ERR_NODEV, "CUDA backend unavailable: %s", why);
            goto err;
        }
        s->active = have ? STEREO_BACKEND_CUDA : STEREO_BACKEND_CPU;
        if (!have)
            snprintf(s->note, sizeof s->note, "using the CPU backend: %s", why);
    }
    if (s->active == STEREO_BACKEND_CUDA) {
        st = stage_cuda_create(p, maps, &s->cuda, err, errlen);
        if ((st == STEREO_ERR_NOMEM || st == STEREO_ERR_NODEV) &&
            p->backend == STEREO_BACKEND_AUTO) {
            /* the GPU is there but too small (or too full) for this size, or the CUDA stage
             * has no kernels for these options (more than 256 disparities outside the sweep
             * design): the CPU backend may still fit (checked by stage_cpu_create below) */
            snprintf(s->note, sizeof s->note, "using the CPU backend: %s", err);
            s->active = STEREO_BACKEND_CPU;
            st = STEREO_OK;
        } else if (st != STEREO_OK) {
            goto err;
        }
    }
    if (s->active == STEREO_BACKEND_CUDA) {
        /* results are copied back into the host buffers below */
        size_t n = (size_t)p->width * p->height;
        int ok = !!(s->disp = malloc(n * sizeof(int16_t)));
        ok &= !!(s->disp_right = malloc(n * sizeof(int16_t)));
        ok &= !!(s->rect[0] = malloc(n)) & !!(s->rect[1] = malloc(n));
        if (p->confidence)
            ok &= !!(s->conf = malloc(n));
        if (!ok) {
            st = stereo_fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate the result buffers");
            goto err;
        }
        if (p->cost == STEREO_COST_MI && (st = cuda_mi_alloc(s, maps, err, errlen)) != STEREO_OK)
            goto err;
    } else {
        st = stage_cpu_create(p, maps, &s->cpu, err, errlen);
        if (st != STEREO_OK)
            goto err;
    }
    *out = s;
    return STEREO_OK;
err:
    stereo_destroy(s);
    return st;
}

void stereo_destroy(stereo_stage *s)
{
    if (!s)
        return;
    stage_cpu_destroy(s->cpu);
    stage_cuda_destroy(s->cuda);
    stage_cpu_destroy(s->mi_host);
    for (int f = 0; f <= MI_LEVELS; f++)
        stage_cuda_destroy(s->mi_level[f]);
    free(s->disp);
    free(s->disp_right);
    free(s->conf);
    free(s->rect[0]);
    free(s->rect[1]);
    free(s);
}

/* ---- processing --------------------------------------------------------------------------- */

/* Image v of a frame (0 the reference / left, 1 view 1 / right, ...): the stage's size, or its
 * map's source size; `name` for messages ("left", "view 2", ...; " image" is added). */
static stereo_status check_image(stereo_stage *s, const stereo_image *im, int v, const char *name)
{
    int w = s->src_w[v], h = s->src_h[v];
    if (!im || !im->data)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM, "%s image: no data", name);
    if ((unsigned)im->format > STEREO_PIX_YUYV)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "%s image: unknown pixel format %d", name, (int)im->format);
    if (im->width != w || im->height != h)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "%s image: size %dx%d, the %s expects %dx%d", name, im->width,
                           im->height, s->have_maps ? "view's map" : "stage", w, h);
    if (im->pitch < (size_t)im->width * stereo_pixfmt_bytes(im->format))
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "%s image: pitch %zu is smaller than a row", name, im->pitch);
    return STEREO_OK;
}

/* The n images of a frame (stereo_process_views, stereo_submit_views) into list[]: n must be
 * the stage's view count, each image checked; refused while a frame is in flight. */
static stereo_status check_views(stereo_stage *s, const stereo_image *images, int n,
                                 const char *call, const stereo_image *list[STEREO_MAX_VIEWS])
{
    const int nv = stereo_view_count(&s->p);
    if (!images || n != nv)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "%s: %d images for a stage of %d views (the reference and %d more)",
                           call, images ? n : 0, nv, nv - 1);
    for (int v = 0; v < nv; v++) {
        char name[32];
        if (nv == 2)
            snprintf(name, sizeof name, "%s", v ? "right" : "left");
        else if (v == 0)
            snprintf(name, sizeof name, "reference");
        else
            snprintf(name, sizeof name, "view %d", v);
        stereo_status st = check_image(s, &images[v], v, name);
        if (st != STEREO_OK)
            return st;
        list[v] = &images[v];
    }
    if (s->in_flight)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "a submitted frame is still in flight: call stereo_wait first");
    return STEREO_OK;
}

/* A stage for more than two views takes them through the *_views calls only. */
static stereo_status check_two_views(stereo_stage *s, const char *call)
{
    if (stereo_view_count(&s->p) > 2)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "%s: this stage matches %d views: use %s_views", call,
                           stereo_view_count(&s->p), call);
    return STEREO_OK;
}

stereo_status stereo_process(stereo_stage *s, const stereo_image *left, const stereo_image *right)
{
    stereo_status st = check_two_views(s, "stereo_process");
    if (st != STEREO_OK)
        return st;
    const stereo_image pair[2] = {left ? *left : (stereo_image){0}, right ? *right : (stereo_image){0}};
    return stereo_process_views(s, pair, 2);
}

/* Cost mi on the CUDA backend: level f of the hierarchy on its CUDA stage, with its table
 * (stage_cpu_mi_level). */
static stereo_status cuda_mi_level(void *ctx, int f, stage_cpu_views views, const uint8_t *table,
                                   int16_t *disp, int16_t *disp_right, char *err, size_t errlen)
{
    stereo_stage *s = ctx;
    stereo_status st = stage_cuda_set_table(s->mi_level[f], table, err, errlen);
    if (st == STEREO_OK)
        st = stage_cuda_process(s->mi_level[f], views, disp, disp_right, NULL, NULL, NULL, err,
                                errlen);
    return st;
}

/* Cost mi on the CUDA backend, before each frame: the full-size table from the host side (its
 * hierarchy's levels on their CUDA stages, cuda_mi_level) to the stage. */
static stereo_status cuda_mi_prepare(stereo_stage *s, const stereo_image *const *images)
{
    stereo_status st = stage_cpu_mi_prepare(s->mi_host, images, cuda_mi_level, s, s->err,
                                            sizeof s->err);
    if (st == STEREO_OK)
        st = stage_cuda_set_table(s->cuda, stage_cpu_mi_table(s->mi_host), s->err, sizeof s->err);
    return st;
}

stereo_status stereo_process_views(stereo_stage *s, const stereo_image *images, int n)
{
    const stereo_image *list[STEREO_MAX_VIEWS];
    stereo_status st = check_views(s, images, n, "stereo_process_views", list);
    if (st != STEREO_OK)
        return st;
    if (s->active == STEREO_BACKEND_CUDA) {
        const int mi = s->p.cost == STEREO_COST_MI;
        if (mi && (st = cuda_mi_prepare(s, list)) != STEREO_OK)
            return st;
        st = stage_cuda_process(s->cuda, list, s->disp, s->p.lr_check ? s->disp_right : NULL,
                                s->conf, s->rect[0], s->rect[1], s->err, sizeof s->err);
        if (mi && st == STEREO_OK)
            stage_cpu_mi_finish(s->mi_host, s->disp);
        return st;
    }
    stage_cpu_process(s->cpu, list);
    return STEREO_OK;
}

int stereo_progress(const stereo_stage *s)
{
    return s->active == STEREO_BACKEND_CPU ? stage_cpu_progress(s->cpu) : -1;
}

stereo_status stereo_set_postfilter(stereo_stage *s, const stereo_postfilter *f)
{
    if (!f || postfilter_check(f, s->err, sizeof s->err) != 0)
        return f ? STEREO_ERR_PARAM
                 : stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                               "post-filter: no settings given");
    if (s->in_flight)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "a submitted frame is still in flight: call stereo_wait first");
    const stereo_postfilter *o = &s->p.post;
    int clear = f->temporal != o->temporal || f->temporal_alpha != o->temporal_alpha ||
                f->temporal_delta != o->temporal_delta ||
                f->temporal_persist != o->temporal_persist;
    if (s->active == STEREO_BACKEND_CUDA) {
        stereo_status st = stage_cuda_set_postfilter(s->cuda, f, clear, s->err, sizeof s->err);
        if (st != STEREO_OK)
            return st;
    } else {
        stage_cpu_set_postfilter(s->cpu, f, clear);
    }
    s->p.post = *f;
    return STEREO_OK;
}

stereo_status stereo_colorize(stereo_stage *s, int colormap, uint8_t *rgba, size_t pitch)
{
    const stereo_params *p = &s->p;
    if ((unsigned)colormap >= COLORMAP_COUNT || !rgba || pitch < (size_t)p->width * 4 || pitch % 4)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "colorize: colour map %d or pitch %zu is invalid", colormap, pitch);
    if (s->active == STEREO_BACKEND_CUDA)
        return stage_cuda_colorize(s->cuda, colormap, s->color.lo, s->color.hi, rgba, pitch,
                                   s->err, sizeof s->err);
    stage_cpu_colorize(s->cpu, colormap, s->color.lo, s->color.hi, rgba, pitch);
    return STEREO_OK;
}

stereo_status stereo_set_color_range(stereo_stage *s, int lo, int hi)
{
    if (lo == 0 && hi == 0) {
        s->color = colormap_fixed_range(s->p.min_disparity, s->p.num_disparities);
        return STEREO_OK;
    }
    if (lo >= hi || lo < -32768 || hi > 32767)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "colour range: %d..%d (16ths of a pixel) is not lo < hi within an int16",
                           lo, hi);
    s->color = (colormap_range){lo, hi};
    return STEREO_OK;
}

/* ---- asynchronous API (stereo.h) ------------------------------------------------------------ */

stereo_status stereo_frame_alloc(stereo_stage *s, size_t bytes, void **frame)
{
    if (s->active == STEREO_BACKEND_CUDA)
        return stage_cuda_frame_alloc(s->cuda, bytes, frame, s->err, sizeof s->err);
    *frame = bytes ? malloc(bytes) : NULL;
    if (!*frame)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_NOMEM,
                           "cannot allocate a frame of %zu bytes", bytes);
    return STEREO_OK;
}

void stereo_frame_free(stereo_stage *s, void *frame)
{
    if (s->active == STEREO_BACKEND_CUDA)
        stage_cuda_frame_free(s->cuda, frame);
    else
        free(frame);
}

stereo_status stereo_submit(stereo_stage *s, const stereo_image *left, const stereo_image *right,
                            int colormap)
{
    stereo_status st = check_two_views(s, "stereo_submit");
    if (st != STEREO_OK)
        return st;
    const stereo_image pair[2] = {left ? *left : (stereo_image){0}, right ? *right : (stereo_image){0}};
    return stereo_submit_views(s, pair, 2, colormap);
}

stereo_status stereo_submit_views(stereo_stage *s, const stereo_image *images, int n, int colormap)
{
    const stereo_image *list[STEREO_MAX_VIEWS];
    stereo_status st = check_views(s, images, n, "stereo_submit_views", list);
    if (st != STEREO_OK)
        return st;
    if ((unsigned)colormap >= COLORMAP_COUNT)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM, "colour map %d is unknown",
                           colormap);
    if (s->active == STEREO_BACKEND_CUDA) {
        if (s->p.cost == STEREO_COST_MI && (st = cuda_mi_prepare(s, list)) != STEREO_OK)
            return st;
        st = stage_cuda_submit(s->cuda, list, colormap, s->color.lo, s->color.hi, s->err,
                               sizeof s->err);
    } else {
        st = stage_cpu_submit(s->cpu, list, colormap, s->color.lo, s->color.hi, s->err,
                              sizeof s->err);
    }
    s->in_flight = st == STEREO_OK;
    return st;
}

stereo_status stereo_wait(stereo_stage *s, stereo_result *out)
{
    if (!s->in_flight)
        return stereo_fail(s->err, sizeof s->err, STEREO_ERR_PARAM,
                           "no submitted frame to wait for");
    s->in_flight = 0;
    if (s->active == STEREO_BACKEND_CUDA) {
        stereo_status st = stage_cuda_wait(s->cuda, out, s->err, sizeof s->err);
        if (st == STEREO_OK && s->p.cost == STEREO_COST_MI) /* the slot stays readable until
                                                              the second submit after this */
            stage_cpu_mi_finish(s->mi_host, out->disparity);
        return st;
    }
    stage_cpu_wait(s->cpu, out);
    return STEREO_OK;
}

/* ---- results and state --------------------------------------------------------------------- */

const int16_t *stereo_disparity(const stereo_stage *s)
{
    return s->cpu ? stage_cpu_disparity(s->cpu) : s->disp;
}
const int16_t *stereo_disparity_right(const stereo_stage *s)
{
    if (!s->p.lr_check)
        return NULL;
    return s->cpu ? stage_cpu_disparity_right(s->cpu) : s->disp_right;
}
const uint8_t *stereo_confidence(const stereo_stage *s)
{
    return s->cpu ? stage_cpu_confidence(s->cpu) : s->conf;
}
const uint8_t *stereo_rectified(const stereo_stage *s, int right)
{
    return s->cpu ? stage_cpu_rectified(s->cpu, right) : s->rect[right ? 1 : 0];
}
const stereo_params *stereo_get_params(const stereo_stage *s) { return &s->p; }
stereo_backend stereo_active_backend(const stereo_stage *s) { return s->active; }
int stereo_stage_sms(const stereo_stage *s)
{
    return s->active == STEREO_BACKEND_CUDA ? stage_cuda_sms(s->cuda) : 0;
}
const char *stereo_backend_note(const stereo_stage *s) { return s->note; }
const char *stereo_error(const stereo_stage *s) { return s->err; }

int stereo_mi_status(const stereo_stage *s, stereo_mi_info *out)
{
    const stage_cpu *c = s->cpu ? s->cpu : s->mi_host;
    if (s->p.cost != STEREO_COST_MI || !c)
        return -1;
    return stage_cpu_mi_status(c, out);
}
