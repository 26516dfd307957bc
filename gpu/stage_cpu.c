/* SPDX-License-Identifier: Apache-2.0 */
/* stage_cpu.c — the CPU backend of the stereo stage (stage_cpu.h): its buffers and the pipeline
 * on the thread pool, and the host side of cost mi on the CUDA backend.
 *
 * The CPU pipeline (stage_cpu_process) is the specification the CUDA backend reproduces bit for
 * bit; each stage function it calls is documented in its header. All buffers are allocated by
 * stage_cpu_create; stage_cpu_process allocates nothing.
 */
#include "stage_cpu.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "band.h"
#include "block.h"
#include "colormap.h"
#include "cross.h"
#include "disparity.h"
#include "grey.h"
#include "mi.h"
#include "multiview.h"
#include "parallel.h"
#include "postfilter.h"
#include "rectify.h"
#include "sgm.h"
#include "sgm_simd.h"
#include "stereo_math.h"
#include "transform.h"

/* cost mi: at most this many tables computed at once (mi_tables) */
#define MI_SCRATCH_SLOTS 64

struct stage_cpu {
    stereo_params p;
    int have_maps;
    stereo_map maps[STEREO_MAX_VIEWS];  /* owned copies, one per view */
    parallel_pool *pool;
    uint8_t *raw[STEREO_MAX_VIEWS];     /* grey at camera size (only with maps) */
    uint8_t *grey[STEREO_MAX_VIEWS];    /* grey at stage size (rectified); [0] reference
                                           (left), [1] right (view 1), [2..] more views; with
                                           shift: [1] is the shifted right view R' */
    int shift;              /* m = -min_disparity for a negative minimum, else 0
                               (stereo_types.h): stages 3-8 run over min_disparity + shift ..
                               (disparity.h) */
    uint8_t *right_rect;    /* with shift: the rectified right view itself (the results') */
    uint8_t *valid[STEREO_MAX_VIEWS];   /* rectification validity (only with maps) */
    uint8_t *rank[STEREO_MAX_VIEWS];    /* rank transform, or */
    uint64_t *census[STEREO_MAX_VIEWS]; /* census transform, per view */
    uint8_t *cost;          /* w * h * D */
    uint8_t ad_lut[STEREO_MAX_VIEWS][256]; /* cost adcensus: view i's grey mapping onto the
                                              reference's, per frame (stereo_grey_match_lut;
                                              [1] the pair's) */
    uint16_t *S[2];         /* w * h * D each: the forward and backward sweeps' partial sums
                               (cross-based aggregation's row sums H in S[1] before them) */
    uint32_t *cross_arms;   /* cross > 0: each pixel's arms (cross.h), w * h */
    void *sweep_scratch[2];
    const sgm_simd_isa *simd; /* the fused SGM path (sgm_simd.h), or NULL: the reference */
    int16_t *disp, *disp_right, *tmp;
    uint8_t *conf;
    postfilter_cpu post;    /* stage 9's scratch and temporal state (postfilter.h) */
    /* cost mi (mi.h) */
    uint8_t *mi_table;      /* stereo_mi_tables(mi_tiles) tables of 65536 (mi_tables_compute) */
    void *mi_scratch;       /* MI_SCRATCH_BYTES per worker thread (mi_tables) */
    int mi_slots;           /* how many; mi_busy[i]: slot i taken by a running table */
    atomic_int mi_busy[MI_SCRATCH_SLOTS];
    uint8_t *mi_pyr[2];     /* one level of the pair (level 1 is the largest) */
    int16_t *mi_init;       /* w * h: the initial disparity of the level being matched */
    stereo_mi_info mi_info;
    double mi_valid_ref;    /* valid fraction of the last hierarchy frame */
    const int16_t *mi_prev; /* the previous frame's left disparity (mi_warm), or NULL */
    double mi_t0;           /* the CUDA backend's frame in flight: when it started (total_ms) */
    /* the asynchronous path (stereo.h): two result slots */
    struct {
        int16_t *disp, *right;
        uint8_t *conf, *rgba, *rect[2];
    } slot[2];
    int next_slot;
    /* progress of the running frame (stereo_progress): work units done of the frame's total,
     * added with relaxed atomics by the workers after each row band (and each sweep row) */
    uint64_t units_done, units_total;
    uint64_t sweep_rows[2];
    /* the coarse-to-fine mode (band.h; the CUDA stage has its own): the coarse level's stage,
     * its half-size pair and the band start of every pixel */
    stage_cpu *coarse;
    uint8_t *half[2];
    uint16_t *band;
};

/* ---- create / destroy --------------------------------------------------------------------- */

static int copy_map(const stereo_map *in, stereo_map *out)
{
    size_t n = (size_t)in->width * in->height;
    int16_t *xy = malloc(n * 2 * sizeof *xy);
    uint16_t *frac = malloc(n * sizeof *frac);
    if (!xy || !frac) {
        free(xy);
        free(frac);
        return -1;
    }
    memcpy(xy, in->xy, n * 2 * sizeof *xy);
    memcpy(frac, in->frac, n * sizeof *frac);
    *out = *in;
    out->xy = xy;
    out->frac = frac;
    return 0;
}

/* A sweep's scratch: enough for the reference's sweep and for the fused path's. */
static size_t sweep_scratch_size(const stereo_params *p)
{
    const sgm_config c = {.width = p->width, .height = p->height, .ndisp = p->num_disparities};
    if (p->band)
        return band_sweep_scratch_size(&c, p->band);
    size_t ref = sgm_sweep_scratch_size(&c), simd = sgm_simd_scratch_size(&c);
    return ref > simd ? ref : simd;
}

/* The disparities a pixel searches at full size: D, or the band's W (band.h). */
static int searched(const stereo_params *p) { return p->band ? p->band : p->num_disparities; }

/* Mirrors cpu_alloc (and copy_map) buffer by buffer: change both together. */
uint64_t stage_cpu_bytes(const stereo_params *p, const stereo_map *maps)
{
    uint64_t n = (uint64_t)p->width * (uint64_t)p->height, vol = n * (uint64_t)searched(p);
    uint64_t band = 0;
    if (p->band) { /* the band starts, the half-size pair and the coarse level's own stage */
        stereo_params q;
        band_coarse_params(p, &q);
        band = 2 * n + 2 * (uint64_t)q.width * q.height + stage_cpu_bytes(&q, NULL);
    }
    uint64_t per_view = n /* grey */ + (p->cost == STEREO_COST_RANK ? n
                                        : stereo_cost_has_census(p->cost) ? 8 * n
                                                                          : 0);
    uint64_t mapped = 0;
    if (maps)
        for (int i = 0; i < stereo_view_count(p); i++)
            mapped += (uint64_t)maps[i].src_width * (uint64_t)maps[i].src_height /* raw */ +
                        n /* valid */ + 6 * (uint64_t)maps[i].width * (uint64_t)maps[i].height;
    uint64_t sweep = sweep_scratch_size(p);
    uint64_t mi = 0;
    if (p->cost == STEREO_COST_MI) {
        mi_level l1;
        mi_level_geometry(p->width, p->height, p->min_disparity, p->num_disparities, 1, &l1);
        long cpus = p->threads > 0 ? p->threads : sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t slots = cpus < 1 ? 1 : cpus > MI_SCRATCH_SLOTS ? MI_SCRATCH_SLOTS : (uint64_t)cpus;
        mi = (uint64_t)stereo_mi_tables(p->mi_tiles) * MI_TABLE_SIZE +
             slots * MI_SCRATCH_BYTES /* one per worker (mi_tables) */ +
             2 * (uint64_t)l1.w * l1.h /* pyramid */ + 2 * n /* init */;
    }
    return (uint64_t)stereo_view_count(p) * per_view + mapped + vol /* cost */ +
           2 * 2 * vol /* S, one per sweep */ + 2 * sweep + 3 * 2 * n /* disp, disp_right, tmp */ +
           (p->confidence ? n : 0) + mi + band + (p->cross ? 4 * n : 0) +
           postfilter_cpu_bytes(p->width, p->height);
}

/* Cost mi's scratch slots: one per worker thread of the pool (at most MI_SCRATCH_SLOTS and no
 * more than the tables of a level), so that mi_tables computes that many tables at once. */
static int mi_scratch_slots(const stage_cpu *s)
{
    int n = parallel_threads(s->pool), t = stereo_mi_tables(s->p.mi_tiles);
    n = n < t ? n : t;
    return n < 1 ? 1 : n > MI_SCRATCH_SLOTS ? MI_SCRATCH_SLOTS : n;
}

/* The machine's physical memory in bytes, 0 when unknown. */
static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static stereo_status cpu_alloc(stage_cpu *s, char *err, size_t errlen)
{
    const stereo_params *p = &s->p;
    size_t n = (size_t)p->width * p->height, vol = n * (size_t)searched(p);
    /* Refused before allocating: malloc would hand out the address space, and the first frame
     * would then push the machine into swap or the OOM killer (on a Jetson, CPU and GPU share
     * this memory). 20 % is left to the rest of the system and the program's own images. */
    uint64_t need = stage_cpu_bytes(p, s->have_maps ? s->maps : NULL), phys = physical_memory();
    if (phys > 0 && need > phys / 10 * 8)
        return stereo_fail(err, errlen, STEREO_ERR_NOMEM,
                           "the CPU backend needs %.1f GB for %dx%d with %d disparities (5 MB per "
                           "megapixel and disparity), more than 80 %% of this machine's %.1f GB of "
                           "memory: use smaller images or fewer disparities",
                           need / 1e9, p->width, p->height, p->num_disparities, phys / 1e9);
    /* the SGM kernels: the fused SIMD path unless STEREO_CPU_KERNELS names another (tests and
     * measurements: "reference" for the plain-C reference, or an instruction set) */
    const char *kernels = getenv("STEREO_CPU_KERNELS");
    char why[120];
    if (sgm_simd_select(kernels && *kernels ? kernels : NULL, &s->simd, why, sizeof why) != 0)
        return stereo_fail(err, errlen, STEREO_ERR_PARAM, "STEREO_CPU_KERNELS: %s", why);
    if (parallel_create(p->threads, &s->pool) != 0)
        return stereo_fail(err, errlen, STEREO_ERR_THREAD, "cannot start %d worker threads",
                           p->threads);
    int ok = postfilter_cpu_init(&s->post, p->width, p->height) == 0;
    for (int i = 0; i < stereo_view_count(p); i++) {
        if (s->have_maps) {
            ok &= !!(s->raw[i] = malloc((size_t)s->maps[i].src_width * s->maps[i].src_height));
            ok &= !!(s->valid[i] = malloc(n));
        }
        ok &= !!(s->grey[i] = malloc(n));
        if (p->cost == STEREO_COST_RANK)
            ok &= !!(s->rank[i] = malloc(n));
        else if (stereo_cost_has_census(p->cost))
            ok &= !!(s->census[i] = malloc(n * sizeof(uint64_t)));
    }
    if (p->cost == STEREO_COST_MI) {
        /* every level is smaller than the full size in pixels and in w * (D + 2), so the full
         * size's cost, S, sweep and disparity buffers serve the levels too (mi_level) */
        mi_level l1;
        mi_level_geometry(p->width, p->height, p->min_disparity, p->num_disparities, 1, &l1);
        ok &= !!(s->mi_table = malloc((size_t)stereo_mi_tables(p->mi_tiles) * MI_TABLE_SIZE));
        ok &= !!(s->mi_scratch = malloc((size_t)(s->mi_slots = mi_scratch_slots(s)) *
                                        MI_SCRATCH_BYTES));
        ok &= !!(s->mi_pyr[0] = malloc((size_t)l1.w * l1.h));
        ok &= !!(s->mi_pyr[1] = malloc((size_t)l1.w * l1.h));
        ok &= !!(s->mi_init = malloc(n * sizeof(int16_t)));
    }
    if (s->shift)
        ok &= !!(s->right_rect = malloc(n));
    if (p->band) {
        stereo_params q, core = *p; /* the range stages 3-8 search (s->shift) */
        core.min_disparity += s->shift;
        band_coarse_params(&core, &q);
        char cerr[200];
        stereo_status st = stage_cpu_create(&q, NULL, &s->coarse, cerr, sizeof cerr);
        if (st != STEREO_OK)
            return stereo_fail(err, errlen, st, "the coarse-to-fine mode's half-size level: %s",
                               cerr);
        ok &= !!(s->half[0] = malloc((size_t)q.width * q.height));
        ok &= !!(s->half[1] = malloc((size_t)q.width * q.height));
        ok &= !!(s->band = malloc(n * sizeof(uint16_t)));
    }
    /* 64-byte aligned: the fused path streams whole vectors of census costs into it */
    ok &= !!(s->cost = aligned_alloc(64, (vol + 63) / 64 * 64));
    for (int i = 0; i < 2; i++) {
        /* 64-byte aligned: the fused path streams whole vectors into S */
        ok &= !!(s->S[i] = aligned_alloc(64, (vol * sizeof(uint16_t) + 63) / 64 * 64));
        ok &= !!(s->sweep_scratch[i] = malloc(sweep_scratch_size(p)));
    }
    ok &= !!(s->disp = malloc(n * sizeof(int16_t)));
    ok &= !!(s->disp_right = malloc(n * sizeof(int16_t)));
    ok &= !!(s->tmp = malloc(n * sizeof(int16_t)));
    if (p->confidence)
        ok &= !!(s->conf = malloc(n));
    if (p->cross)
        ok &= !!(s->cross_arms = malloc(n * sizeof(uint32_t)));
    if (!ok)
        return stereo_fail(err, errlen, STEREO_ERR_NOMEM,
                           "cannot allocate the CPU buffers for %dx%d with %d disparities "
                           "(%.0f MB)", p->width, p->height, p->num_disparities, vol * 5.0 / 1e6);
    return STEREO_OK;
}

/* The caller's maps (NULL: none), n of them, into the stage's own copies. */
static stereo_status copy_maps(stage_cpu *s, const stereo_map *maps, int n, char *err,
                               size_t errlen)
{
    if (!maps)
        return STEREO_OK;
    s->have_maps = 1;
    for (int i = 0; i < n; i++)
        if (copy_map(&maps[i], &s->maps[i]) != 0)
            return stereo_fail(err, errlen, STEREO_ERR_NOMEM,
                               "cannot copy the rectification maps");
    return STEREO_OK;
}

stereo_status stage_cpu_create(const stereo_params *p, const stereo_map *maps, stage_cpu **out,
                               char *err, size_t errlen)
{
    *out = NULL;
    stage_cpu *s = calloc(1, sizeof *s);
    if (!s)
        return stereo_fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate the stage");
    s->p = *p;
    s->shift = p->min_disparity < 0 ? -p->min_disparity : 0;
    stereo_status st = copy_maps(s, maps, stereo_view_count(p), err, errlen);
    if (st == STEREO_OK)
        st = cpu_alloc(s, err, errlen);
    if (st != STEREO_OK) {
        stage_cpu_destroy(s);
        return st;
    }
    *out = s;
    return STEREO_OK;
}

/* Cost mi on the CUDA backend: the host side of every frame (stage_cpu_mi_prepare) — the worker
 * pool, the grey images and, with maps, the camera-size ones and the validity for the host's
 * own rectification, the table buffers, the pyramid and the levels' disparities. */
stereo_status stage_cpu_mi_host_create(const stereo_params *p, const stereo_map *maps,
                                       stage_cpu **out, char *err, size_t errlen)
{
    *out = NULL;
    stage_cpu *s = calloc(1, sizeof *s);
    if (!s)
        return stereo_fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate the MI host buffers");
    s->p = *p;
    size_t n = (size_t)p->width * p->height;
    stereo_status st = copy_maps(s, maps, 2, err, errlen);
    if (st == STEREO_OK && parallel_create(p->threads, &s->pool) != 0)
        st = stereo_fail(err, errlen, STEREO_ERR_THREAD, "cannot start %d worker threads",
                         p->threads);
    if (st != STEREO_OK) {
        stage_cpu_destroy(s);
        return st;
    }
    mi_level l1;
    mi_level_geometry(p->width, p->height, p->min_disparity, p->num_disparities, 1, &l1);
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        if (s->have_maps) {
            ok &= !!(s->raw[i] = malloc((size_t)s->maps[i].src_width * s->maps[i].src_height));
            ok &= !!(s->valid[i] = malloc(n));
        }
        ok &= !!(s->grey[i] = malloc(n));
    }
    ok &= !!(s->mi_table = malloc((size_t)stereo_mi_tables(p->mi_tiles) * MI_TABLE_SIZE));
    ok &= !!(s->mi_scratch = malloc((size_t)(s->mi_slots = mi_scratch_slots(s)) * MI_SCRATCH_BYTES));
    ok &= !!(s->mi_pyr[0] = malloc((size_t)l1.w * l1.h));
    ok &= !!(s->mi_pyr[1] = malloc((size_t)l1.w * l1.h));
    ok &= !!(s->mi_init = malloc(n * sizeof(int16_t)));
    ok &= !!(s->disp = malloc(n * sizeof(int16_t)));
    ok &= !!(s->disp_right = malloc(n * sizeof(int16_t)));
    if (!ok) {
        stage_cpu_destroy(s);
        return stereo_fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate the MI host buffers");
    }
    *out = s;
    return STEREO_OK;
}

void stage_cpu_destroy(stage_cpu *s)
{
    if (!s)
        return;
    free(s->right_rect);
    parallel_destroy(s->pool);
    for (int i = 0; i < 2; i++)
        free(s->mi_pyr[i]);
    for (int i = 0; i < STEREO_MAX_VIEWS; i++) {
        free((void *)s->maps[i].xy);
        free((void *)s->maps[i].frac);
        free(s->raw[i]);
        free(s->valid[i]);
        free(s->grey[i]);
        free(s->rank[i]);
        free(s->census[i]);
    }
    stage_cpu_destroy(s->coarse);
    free(s->half[0]);
    free(s->half[1]);
    free(s->band);
    free(s->mi_table);
    free(s->mi_scratch);
    free(s->mi_init);
    free(s->cost);
    for (int i = 0; i < 2; i++) {
        free(s->S[i]);
        free(s->sweep_scratch[i]);
    }
    free(s->disp);
    free(s->disp_right);
    free(s->tmp);
    free(s->conf);
    free(s->cross_arms);
    postfilter_cpu_free(&s->post);
    for (int k = 0; k < 2; k++) {
        free(s->slot[k].disp);
        free(s->slot[k].right);
        free(s->slot[k].conf);
        free(s->slot[k].rgba);
        free(s->slot[k].rect[0]);
        free(s->slot[k].rect[1]);
    }
    free(s);
}

/* ---- the CPU pipeline -------------------------------------------------------------------- */

/* One context for every row-parallel job; each job reads the fields it needs. The matching jobs
 * (stages 4-8) work on one level: the full size, or a level of the MI hierarchy (mi.h), whose
 * size, range and images are in sgm / wta / grey. */
typedef struct {
    stage_cpu *s;
    const stereo_image *img;
    int side;                 /* 0 left, 1 right (more views: the view's index) */
    sgm_config sgm;
    block_config block;
    wta_config wta;
    int bm;                   /* method bm: S[0] alone holds the sum */
    const uint8_t *grey[2];   /* the level's grey images */
    const uint8_t *valid[2];  /* rectification validity (full size with maps), else NULL */
    uint8_t *conf;            /* full size only */
    int median, lr_check, lr_tolerance;
    int f;                    /* MI: the level being downscaled */
    int count;                /* 1: the rows count for stereo_progress (the full-size frame);
                                 0: a level of the MI hierarchy, which the progress leaves out */
    const int16_t *in;
    int16_t *out;
    sgm_fused fused;          /* the fused SGM path's frame (sgm_simd.h) */
    int part;                 /* and its part, 0 or 1 */
    parallel_fn stage;        /* run_rows: the stage's row function, */
    uint64_t row_units;       /* and the work units one of its rows counts for the progress */
} job;

/* Progress units, roughly proportional to the time each part takes: per row, the image width
 * times a weight; the stages over the cost volume weigh D times more. Measured on 1280x960
 * D 256, 2 cores, first frame (page faults included): cost volume ~2.0 s, both sweeps ~1.2 s,
 * winner-takes-all with the right disparity (both S volumes read) ~2.3 s, hence 4 : 3 + 3 : 8.
 * Only the fraction matters (stereo_progress). Cost mi: the hierarchy's levels (mi.h) and the
 * tables are left out of both the total and the count (the levels run with job.count = 0), so an
 * MI frame's progress waits during its hierarchy and still ends at 1000 with the full size. */
enum { UNITS_GREY = 1, UNITS_RECTIFY = 2, UNITS_TRANSFORM = 8, UNITS_MEDIAN = 2, UNITS_FINISH = 1 };
static uint64_t units_vol(const stereo_params *p) { return (uint64_t)p->width * searched(p); }
static uint64_t units_cost(const stereo_params *p) { return 4 * units_vol(p); }
static uint64_t units_sweep_row(const stereo_params *p) { return 3 * units_vol(p); }
static uint64_t units_wta(const stereo_params *p) { return units_vol(p) * (p->lr_check ? 8 : 4); }
/* more views, the sides rule's second pass: two 5 x 5 box sums per voxel */
static uint64_t units_select(const stereo_params *p) { return 4 * units_vol(p); }
/* one of bm's two box-sum passes (running sums: cheaper per voxel than a sweep's row) */
static uint64_t units_block(const stereo_params *p) { return units_vol(p); }

/* input_h: the heights of the input images together (every view's) */
static uint64_t units_frame(const stage_cpu *s, int input_h)
{
    const stereo_params *p = &s->p;
    uint64_t w = (uint64_t)p->width, h = (uint64_t)p->height, nv = (uint64_t)stereo_view_count(p);
    uint64_t per_side = w * h * (UNITS_TRANSFORM + (s->have_maps ? UNITS_RECTIFY : 0));
    uint64_t grey = (s->have_maps ? (uint64_t)s->maps[0].src_width : w) * (uint64_t)input_h *
                    UNITS_GREY;
    uint64_t aggregate = p->method == STEREO_METHOD_BM ? units_block(p) : units_sweep_row(p);
    uint64_t select = nv > 2 && p->combine == STEREO_COMBINE_SIDES ? units_select(p) : 0;
    return grey + nv * per_side +
           h * ((nv - 1) * units_cost(p) + select + 2 * aggregate + units_wta(p)) +
           w * h * ((p->median ? (p->lr_check ? 2 : 1) * UNITS_MEDIAN : 0) + UNITS_FINISH);
}

static void job_counted(void *ctx, int y0, int y1)
{
    job *j = ctx;
    j->stage(ctx, y0, y1);
    __atomic_add_fetch(&j->s->units_done, (uint64_t)(y1 - y0) * j->row_units, __ATOMIC_RELAXED);
}

/* parallel_for over rows [0, n) of one stage, counting its progress. */
static void run_rows(stage_cpu *s, job *j, int n, parallel_fn stage, uint64_t row_units)
{
    j->stage = stage;
    j->row_units = row_units;
    parallel_for(s->pool, n, 0, job_counted, j);
}

static void job_grey(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    grey_convert_rows(j->img, s->have_maps ? s->raw[j->side] : s->grey[j->side], y0, y1);
}

static void job_rectify(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    const stereo_map *m = &s->maps[j->side];
    rectify_rows(m, s->raw[j->side], (size_t)m->src_width, s->grey[j->side], s->valid[j->side],
                 y0, y1);
}

static void job_transform(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    if (s->p.cost == STEREO_COST_RANK)
        rank_transform_rows(s->grey[j->side], s->p.width, s->p.height, s->p.rank_window,
                            s->rank[j->side], y0, y1);
    else if (stereo_cost_has_census(s->p.cost))
        census_transform_rows(s->grey[j->side], s->p.width, s->p.height, s->census[j->side], y0,
                              y1);
}

static mview_config mview_of(stage_cpu *s, job *j)
{
    return (mview_config){&j->sgm, s->p.cost, s->p.views, s->p.baseline, s->p.combine,
                          (const uint8_t *const *)s->rank, (const uint64_t *const *)s->census,
                          (const uint8_t *const *)s->grey, (const uint8_t(*)[256])s->ad_lut,
                          s->p.ad_weight};
}

/* The sides rule's two side means live in the bytes of S[1] (two bytes per voxel), which nothing
 * reads before the backward sweep writes it. */
static uint8_t *side_means(stage_cpu *s, int neg)
{
    size_t vol = (size_t)s->p.width * s->p.height * s->p.num_disparities;
    return (uint8_t *)s->S[1] + (neg ? vol : 0);
}

static void job_side_select(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    mview_config m = mview_of(s, j);
    mview_select_rows(&m, side_means(s, 0), side_means(s, 1), s->cost, y0, y1);
}

static void job_cost(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    if (s->p.band) {
        const band_inputs in = {s->p.cost,
                                {s->rank[0], s->rank[1]},
                                {s->census[0], s->census[1]},
                                {j->grey[0], j->grey[1]},
                                s->ad_lut[1], s->p.ad_weight};
        band_cost_rows(&j->sgm, s->p.band, s->band, &in, s->cost, y0, y1);
        return;
    }
    if (stereo_view_count(&s->p) > 2) { /* full size only: more views exclude mi and its levels */
        mview_config m = mview_of(s, j);
        int sides = s->p.combine == STEREO_COMBINE_SIDES;
        mview_cost_rows(&m, s->cost, sides ? side_means(s, 0) : NULL,
                        sides ? side_means(s, 1) : NULL, y0, y1);
        return;
    }
    switch (s->p.cost) {
    case STEREO_COST_RANK: sgm_cost_rank_rows(&j->sgm, s->rank[0], s->rank[1], s->cost, y0, y1); break;
    case STEREO_COST_CENSUS:
        sgm_cost_census_rows(&j->sgm, s->census[0], s->census[1], s->cost, y0, y1);
        break;
    case STEREO_COST_ADCENSUS:
        sgm_cost_adcensus_rows(&j->sgm, s->census[0], s->census[1], j->grey[0], j->grey[1],
                               s->ad_lut[1], s->p.ad_weight, s->cost, y0, y1);
        break;
    case STEREO_COST_AD: sgm_cost_ad_rows(&j->sgm, j->grey[0], j->grey[1], s->cost, y0, y1); break;
    case STEREO_COST_BT: sgm_cost_bt_rows(&j->sgm, j->grey[0], j->grey[1], s->cost, y0, y1); break;
    case STEREO_COST_MI:
        sgm_cost_table_rows(&j->sgm, j->grey[0], j->grey[1], s->mi_table, s->p.mi_tiles, s->cost,
                            y0, y1);
        break;
    }
}

/* 4b. cross-based cost aggregation (cross.h): the arms, then H into S[1], then the means back
 * into the cost volume */
static void job_cross_arms(void *ctx, int y0, int y1)
{
    job *j = ctx;
    cross_arms_rows(j->grey[0], j->sgm.width, j->sgm.height, j->s->p.cross, j->s->cross_arms, y0,
                    y1);
}

static void job_cross_hsum(void *ctx, int y0, int y1)
{
    job *j = ctx;
    cross_hsum_rows(j->s->cost, j->s->cross_arms, j->sgm.width, j->sgm.ndisp, j->s->S[1], y0, y1);
}

static void job_cross_vsum(void *ctx, int y0, int y1)
{
    job *j = ctx;
    cross_vsum_rows(j->s->S[1], j->s->cross_arms, j->sgm.width, j->sgm.ndisp, j->s->cost, y0,
                    y1);
}

/* 8b. depth-discontinuity adjustment (cross.h): the map into tmp, which becomes the live one */
static void job_adjust(void *ctx, int y0, int y1)
{
    job *j = ctx;
    cross_adjust_rows(j->s->disp, j->s->cost, j->sgm.width, j->sgm.dmin, j->sgm.ndisp, j->s->tmp,
                      y0, y1);
}

/* stereo_grey_match_lut of two w * h grey images */
static void grey_match(const uint8_t *left, const uint8_t *right, size_t n, uint8_t *lut)
{
    uint32_t hl[256] = {0}, hr[256] = {0};
    for (size_t i = 0; i < n; i++)
        hl[left[i]]++, hr[right[i]]++;
    stereo_grey_match_lut(hl, hr, lut);
}

/* BM: the box sum's vertical pass into S[1], the horizontal one into S[0] (block.h) */
static void job_block_vertical(void *ctx, int y0, int y1)
{
    job *j = ctx;
    block_vertical_rows(&j->block, j->s->cost, j->s->S[1], y0, y1);
}

static void job_block_horizontal(void *ctx, int y0, int y1)
{
    job *j = ctx;
    block_horizontal_rows(&j->block, j->s->S[1], j->s->S[0], y0, y1);
}

static void job_sweep(void *ctx, int b0, int b1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    for (int backward = b0; backward < b1; backward++)
        if (s->p.band)
            band_aggregate_sweep(&j->sgm, s->p.band, s->band, backward, s->p.paths, s->cost,
                                 j->grey[0], s->S[backward], s->sweep_scratch[backward]);
        else
            sgm_aggregate_sweep(&j->sgm, backward, s->p.paths, s->cost, j->grey[0],
                                s->S[backward], s->sweep_scratch[backward],
                                j->count ? &s->sweep_rows[backward] : NULL);
}

static void job_fused(void *ctx, int b0, int b1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    for (int backward = b0; backward < b1; backward++)
        s->simd->sweep_part(&j->fused, backward, j->part, s->sweep_scratch[backward],
                            j->count ? &s->sweep_rows[backward] : NULL);
}

static void job_wta(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    const uint16_t *S2 = j->bm ? NULL : s->S[1];
    if (s->p.band) {
        band_wta_rows(&j->wta, s->p.band, s->band, s->S[0], S2, j->valid[0], s->disp, j->conf,
                      y0, y1);
        if (j->lr_check)
            band_right_rows(&j->wta, s->p.band, s->band, s->S[0], S2, j->valid[1],
                            s->disp_right, y0, y1);
        return;
    }
    disparity_wta_rows(&j->wta, s->S[0], S2, j->valid[0], s->disp, j->conf, y0, y1);
    if (j->lr_check)
        disparity_right_rows(&j->wta, s->S[0], S2, j->valid[1], s->disp_right, y0, y1);
}

static void job_median(void *ctx, int y0, int y1)
{
    job *j = ctx;
    median3x3_rows(j->in, j->sgm.width, j->sgm.height, j->out, y0, y1);
}

static void job_finish(void *ctx, int y0, int y1)
{
    job *j = ctx;
    if (j->lr_check && mview_lr_occlusion_test(&j->s->p)) /* view 1, with the occlusion test */
        lr_check_views_rows(j->s->disp, j->s->disp_right, j->sgm.width, j->lr_tolerance, y0, y1);
    else if (j->lr_check)
        lr_check_rows(j->s->disp, j->s->disp_right, j->sgm.width, j->lr_tolerance, y0, y1);
    if (j->conf)
        confidence_mask_rows(j->s->disp, j->conf, j->sgm.width, y0, y1);
}

static void job_shift(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    disparity_shift_rows(s->grey[1], s->p.width, s->shift, y0, y1);
    if (s->valid[1])
        disparity_shift_rows(s->valid[1], s->p.width, s->shift, y0, y1);
}

static void job_unshift(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    disparity_unshift_rows(s->disp, s->p.lr_check ? s->disp_right : NULL, s->conf, s->p.width,
                           s->shift, y0, y1);
}

static void job_downscale(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    for (int v = 0; v < 2; v++)
        mi_downscale_rows(s->grey[v], s->p.width, s->p.height, j->f, s->mi_pyr[v], y0, y1);
}

static void job_half(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    for (int v = 0; v < 2; v++)
        mi_downscale_rows(s->grey[v], s->p.width, s->p.height, 1, s->half[v], y0, y1);
}

static void job_band(void *ctx, int y0, int y1)
{
    job *j = ctx;
    stage_cpu *s = j->s;
    const stereo_params *q = &s->coarse->p;
    band_from_coarse_rows(s->coarse->disp, q->width, q->height, s->p.width,
                          s->p.min_disparity + s->shift,
                          s->p.num_disparities, s->p.band, s->band, y0, y1);
}

/* The coarse-to-fine mode's steps 1 and 2 (band.h) on the CPU: the half-size pair, its match
 * on the coarse level's stage, the band of every pixel. */
static void cpu_band(stage_cpu *s, job *j)
{
    const stereo_params *q = &s->coarse->p;
    parallel_for(s->pool, q->height, 0, job_half, j);
    const stereo_image im[2] = {{s->half[0], q->width, q->height, (size_t)q->width, STEREO_PIX_GREY8},
                                {s->half[1], q->width, q->height, (size_t)q->width, STEREO_PIX_GREY8}};
    const stereo_image *views[2] = {&im[0], &im[1]};
    stage_cpu_process(s->coarse, views);
    run_rows(s, j, s->p.height, job_band, 0);
}

static void cpu_median(stage_cpu *s, job *j, int16_t **map)
{
    j->in = *map;
    j->out = s->tmp;
    run_rows(s, j, j->sgm.height, job_median,
             (uint64_t)j->count * (uint64_t)j->sgm.width * UNITS_MEDIAN);
    s->tmp = *map; /* swap: the filtered map becomes the live one */
    *map = j->out;
}

/* Stages 4-8 on the level j describes: cost volume, aggregation (SGM, or BM's box sum),
 * winner-takes-all, right disparity, median, LR check. Results in s->disp (and s->disp_right).
 * The progress units (units_frame) are those of the full size; a level (j->count = 0) counts
 * none. */
static void cpu_match(stage_cpu *s, job *j)
{
    const stereo_params *p = &s->p;
    int h = j->sgm.height;
    uint64_t c = (uint64_t)j->count;
    /* 4. matching cost volume (the fused SGM path computes the costs of rank, ad, bt, census
     * and adcensus itself) */
    const int fused = s->simd && !j->bm && !p->band;
    /* the full size's refinements around SGM (cross.h) need the whole volume */
    const int cross = j->count && p->cross, refine = j->count && (p->cross || p->discontinuity);
    const int on_the_fly = fused && !refine && stereo_view_count(p) == 2 &&
                           (p->cost == STEREO_COST_RANK || p->cost == STEREO_COST_AD ||
                            p->cost == STEREO_COST_BT || stereo_cost_has_census(p->cost));
    if (!on_the_fly)
        run_rows(s, j, h, job_cost, c * (uint64_t)(stereo_view_count(p) - 1) * units_cost(p));
    else
        __atomic_add_fetch(&s->units_done, c * (uint64_t)h * units_cost(p), __ATOMIC_RELAXED);
    if (stereo_view_count(p) > 2 && p->combine == STEREO_COMBINE_SIDES) /* its second pass */
        run_rows(s, j, h, job_side_select, c * units_select(p));
    if (cross) { /* 4b. cross-based cost aggregation */
        run_rows(s, j, h, job_cross_arms, 0);
        run_rows(s, j, h, job_cross_hsum, 0);
        run_rows(s, j, h, job_cross_vsum, 0);
    }
    if (j->bm) {
        /* 5. BM: the N x N box sum, vertical then horizontal running sums (block.h) */
        run_rows(s, j, h, job_block_vertical, c * units_block(p));
        run_rows(s, j, h, job_block_horizontal, c * units_block(p));
    } else if (fused) {
        /* 5.-6. SGM fused with the winner-takes-all and the right disparity (sgm_simd.h): the
         * two sweeps' first parts, then their second parts, one sweep per thread */
        const int rank = p->cost == STEREO_COST_RANK;
        const sgm_fused_cost kind = !on_the_fly                        ? SGM_FUSED_VOLUME
                                    : p->cost == STEREO_COST_CENSUS   ? SGM_FUSED_CENSUS
                                    : p->cost == STEREO_COST_ADCENSUS ? SGM_FUSED_ADCENSUS
                                    : p->cost == STEREO_COST_BT       ? SGM_FUSED_BT
                                                                      : SGM_FUSED_ABSDIFF;
        j->fused = (sgm_fused){.sgm = &j->sgm,
                               .wta = &j->wta,
                               .paths = p->paths,
                               .kind = kind,
                               .cost = s->cost,
                               .absdiff = {rank ? s->rank[0] : j->grey[0],
                                           rank ? s->rank[1] : j->grey[1]},
                               .census = {s->census[0], s->census[1]},
                               .ad_lut = s->ad_lut[1],
                               .ad_weight = p->ad_weight,
                               .cost_rows = s->cost,
                               .grey = j->grey[0],
                               .S = s->S[0],
                               .valid = {j->valid[0], j->valid[1]},
                               .disp = s->disp,
                               .disp_right = j->lr_check ? s->disp_right : NULL,
                               .conf = j->conf};
        for (j->part = 0; j->part < 2; j->part++)
            parallel_for(s->pool, 2, 1, job_fused, j);
        __atomic_add_fetch(&s->units_done, c * (uint64_t)h * units_wta(p), __ATOMIC_RELAXED);
    } else {
        /* 5. SGM: the forward and the backward sweep, one job each (sgm.h; at full size they
         * count their rows in sweep_rows, which stereo_progress adds to units_done) */
        parallel_for(s->pool, 2, 1, job_sweep, j);
    }
    /* 6.-8. winner-takes-all (+ subpixel, uniqueness, confidence) and right disparity */
    if (!fused)
        run_rows(s, j, h, job_wta, c * units_wta(p));
    /* 7. 3x3 median on both maps, then the left-right check */
    if (j->median) {
        cpu_median(s, j, &s->disp);
        if (j->lr_check)
            cpu_median(s, j, &s->disp_right);
    }
    run_rows(s, j, h, job_finish, c * (uint64_t)j->sgm.width * UNITS_FINISH);
}

/* The job of a level of the MI hierarchy (mi.h): the stage's penalties (per path) and path
 * weights, always SGM (also with method bm: the hierarchy only chooses the table), always the
 * median and the LR check (its failures are the occlusions the next table leaves out),
 * integer disparities, no uniqueness, no confidence, no validity masks, no progress count. */
static void mi_level_job(stage_cpu *s, const mi_level *lv, job *j)
{
    const stereo_params *p = &s->p;
    j->sgm = (sgm_config){.width = lv->w, .height = lv->h, .dmin = lv->dmin, .ndisp = lv->ndisp,
                          .p1 = p->p1, .p2 = p->p2, .p2_adapt = p->p2_adapt,
                          .max_cost = MI_MAX_COST, .per_dir = 1};
    for (int r = 0; r < STEREO_MAX_PATHS; r++) {
        stereo_path_penalties(p, r, &j->sgm.dir_p1[r], &j->sgm.dir_p2[r]);
        j->sgm.dir_weight[r] = p->path_weight[r];
    }
    j->bm = 0;
    j->count = 0;
    j->wta = (wta_config){lv->w, lv->h, lv->dmin, lv->ndisp, 0, 0};
    j->grey[0] = s->mi_pyr[0];
    j->grey[1] = s->mi_pyr[1];
    j->valid[0] = j->valid[1] = NULL;
    j->conf = NULL;
    j->median = j->lr_check = 1;
    j->lr_tolerance = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* mi_tables: the tables of one level (mi_tables_compute's), the whole-frame histogram first (in
 * slot 0's first counts, which mi_table_of leaves alone), then the tables on the pool, each call
 * on a free scratch slot: the same bits as mi_tables_compute, in any order. */
typedef struct {
    stage_cpu *s;
    const uint8_t *left, *right, *valid_left, *valid_right;
    const int16_t *init;
    int w, h;
    uint64_t n;
} mi_tables_job;

static void job_mi_tables(void *ctx, int begin, int end)
{
    mi_tables_job *j = ctx;
    stage_cpu *s = j->s;
    int slot = 0;
    for (;; slot = (slot + 1) % s->mi_slots) /* a free slot: at most mi_slots calls run at once */
        if (!atomic_exchange(&s->mi_busy[slot], 1))
            break;
    void *scratch = (char *)s->mi_scratch + (size_t)slot * MI_SCRATCH_BYTES;
    for (int i = begin; i < end; i++)
        mi_table_of(j->left, j->right, j->w, j->h, s->p.mi_tiles, j->init, j->valid_left,
                    j->valid_right, s->mi_scratch, j->n, i, s->mi_table + (size_t)i * MI_TABLE_SIZE,
                    NULL, scratch);
    atomic_store(&s->mi_busy[slot], 0);
}

static void mi_tables(stage_cpu *s, const uint8_t *left, const uint8_t *right, int w, int h,
                      const int16_t *init, const uint8_t *valid_left, const uint8_t *valid_right)
{
    mi_tables_job j = {s, left, right, valid_left, valid_right, init, w, h, 0};
    j.n = mi_frame_histogram(left, right, w, h, init, valid_left, valid_right, s->mi_scratch);
    parallel_for(s->pool, stereo_mi_tables(s->p.mi_tiles), 1, job_mi_tables, &j);
}

/* Who matches the levels of the MI hierarchy: NULL, the CPU (cpu_match); else, on the CUDA
 * backend, stereo.c's function (stage_cpu_mi_level) with its context and error buffer. */
typedef struct {
    stage_cpu_mi_level level;
    void *ctx;
    char *err;
    size_t errlen;
} mi_matcher;

/* Matches level lv of the MI hierarchy (j from mi_level_job, its images in j->grey) with the
 * table in s->mi_table: on the CPU (cpu_match, m NULL), or through m (the level's CUDA stage).
 * The left disparity ends in s->disp either way. */
static stereo_status mi_match_level(stage_cpu *s, job *j, const mi_level *lv, const mi_matcher *m)
{
    if (!m) {
        cpu_match(s, j);
        return STEREO_OK;
    }
    const stereo_image im[2] = {{j->grey[0], lv->w, lv->h, (size_t)lv->w, STEREO_PIX_GREY8},
                                {j->grey[1], lv->w, lv->h, (size_t)lv->w, STEREO_PIX_GREY8}};
    const stereo_image *views[2] = {&im[0], &im[1]};
    return m->level(m->ctx, lv->f, views, s->mi_table, s->disp, s->disp_right, m->err, m->errlen);
}

/* The MI hierarchy (mi.h) below full size: levels F .. 1, ending with the full-size initial
 * disparity in s->mi_init. With F = 0 the full size is the coarsest level: the random
 * disparity, matched MI_COARSE_ITERATIONS - 1 times here (the stage's own match is the last).
 * Each level's table on the host, its matching on the active backend (mi_match_level). */
static stereo_status mi_hierarchy(stage_cpu *s, const mi_matcher *m)
{
    const stereo_params *p = &s->p;
    int F = mi_coarsest_level(p->width, p->height, p->min_disparity, p->num_disparities);
    s->mi_info.levels = F;
    for (int f = F; f >= 0; f--) {
        mi_level lv;
        mi_level_geometry(p->width, p->height, p->min_disparity, p->num_disparities, f, &lv);
        job j = {.s = s, .f = f};
        mi_level_job(s, &lv, &j);
        if (f == 0) { /* F = 0: the full-size images themselves */
            j.grey[0] = s->grey[0];
            j.grey[1] = s->grey[1];
        } else {
            parallel_for(s->pool, lv.h, 0, job_downscale, &j);
        }
        if (f == F)
            mi_random_disparity(&lv, s->mi_init);
        int iterations = f == F ? MI_COARSE_ITERATIONS : 1;
        if (f == 0)
            iterations--; /* the stage's match is the last */
        for (int it = 0; it < iterations; it++) {
            if (it > 0)
                mi_disparity_to_init(s->disp, lv.w, lv.h, s->mi_init);
            mi_tables(s, j.grey[0], j.grey[1], lv.w, lv.h, s->mi_init, NULL, NULL);
            stereo_status st = mi_match_level(s, &j, &lv, m);
            if (st != STEREO_OK)
                return st;
        }
        if (f > 0) {
            mi_level next;
            mi_level_geometry(p->width, p->height, p->min_disparity, p->num_disparities, f - 1,
                              &next);
            mi_upscale_disparity(s->disp, lv.w, lv.h, s->mi_init, next.w, next.h);
        } else if (iterations > 0) {
            mi_disparity_to_init(s->disp, lv.w, lv.h, s->mi_init);
        }
        if (f == 1)
            break;
    }
    return STEREO_OK;
}

/* Cost mi: the full-size table in s->mi_table, from the hierarchy or (mi_warm) the previous
 * frame's result, over the rectified pair in s->grey (valid: the rectification's validity or
 * NULL). Policy (stereo.h, mi_warm / mi_restart): warm when allowed, a previous result exists
 * and its valid fraction held at least mi_restart % of the last hierarchy frame's; else the
 * hierarchy ("restart"). A collapse is thus seen on the frame it happens and the hierarchy runs
 * on the next one: no frame costs more than one hierarchy frame. m: who matches the levels. */
static stereo_status mi_prepare(stage_cpu *s, const uint8_t *valid0, const uint8_t *valid1,
                                const mi_matcher *m)
{
    const stereo_params *p = &s->p;
    stereo_mi_info *mi = &s->mi_info;
    double t0 = now_ms();
    int warm = p->mi_warm && mi->frames > 0 && s->mi_prev &&
               mi->valid * 100.0 >= p->mi_restart * s->mi_valid_ref;
    if (warm) {
        mi_disparity_to_init(s->mi_prev, p->width, p->height, s->mi_init);
        mi->hierarchy_ms = 0;
    } else {
        stereo_status st = mi_hierarchy(s, m);
        if (st != STEREO_OK)
            return st;
        mi->restarts++;
        mi->hierarchy_ms = now_ms() - t0;
    }
    mi->warm = warm;
    double t1 = now_ms();
    mi_tables(s, s->grey[0], s->grey[1], p->width, p->height, s->mi_init, valid0, valid1);
    mi->table_ms = now_ms() - t1;
    return STEREO_OK;
}

/* ---- cost mi on the CUDA backend ----------------------------------------------------------
 * The matching runs on the GPU at every level; the tables, as on the CPU, in double precision
 * on the host (mi.h: the matching only ever sees the uint8 table, so both backends match with
 * the same integer costs). Per frame (stage_cpu_mi_prepare): the host converts and rectifies
 * the pair itself (the same rows functions as the CPU backend, so the same bits as the GPU's
 * own rectification) for the full-size table; then mi_prepare (the hierarchy with each level
 * on its CUDA stage, or, on a warm frame, the previous frame's disparity); stereo.c gives the
 * full-size table to the stage (stage_cuda_set_table) before the frame's kernels. The host
 * waits for each level, so a hierarchy frame costs its levels' round trips; a warm frame only
 * the host's rectification and one table. */
stereo_status stage_cpu_mi_prepare(stage_cpu *s, stage_cpu_views images, stage_cpu_mi_level level,
                                   void *ctx, char *err, size_t errlen)
{
    const stereo_params *p = &s->p;
    s->mi_t0 = now_ms();
    job j = {.s = s};
    for (j.side = 0; j.side < 2; j.side++) {
        j.img = images[j.side];
        run_rows(s, &j, j.img->height, job_grey, (uint64_t)j.img->width * UNITS_GREY);
        if (s->have_maps)
            run_rows(s, &j, p->height, job_rectify, (uint64_t)p->width * UNITS_RECTIFY);
    }
    const mi_matcher m = {level, ctx, err, errlen};
    return mi_prepare(s, s->valid[0], s->valid[1], &m);
}

const uint8_t *stage_cpu_mi_table(const stage_cpu *s) { return s->mi_table; }

/* After a frame of cost mi (either backend): its valid fraction, the policy's reference and
 * the counts; disp is the frame's left disparity (kept for the next warm frame). */
static void mi_finish(stage_cpu *s, const int16_t *disp, double t0)
{
    stereo_mi_info *mi = &s->mi_info;
    size_t n = (size_t)s->p.width * s->p.height, valid = 0;
    for (size_t i = 0; i < n; i++)
        valid += stereo_disparity_valid(disp[i]);
    mi->valid = (double)valid / (double)n;
    if (!mi->warm)
        s->mi_valid_ref = mi->valid;
    mi->frames++;
    mi->total_ms = now_ms() - t0;
    s->mi_prev = disp;
}

/* images[0..view_count) : the reference (left), view 1 (right), more views */
void stage_cpu_process(stage_cpu *s, stage_cpu_views images)
{
    const stereo_params *p = &s->p;
    int h = p->height;
    double t0 = now_ms();
    job j = {.s = s};
    const int dmin = p->min_disparity + s->shift; /* 0 with a negative minimum (disparity.h) */
    const int max_cost = transform_max_cost(p->cost, p->rank_window); /* stereo_max_cost */
    j.sgm = (sgm_config){.width = p->width, .height = p->height, .dmin = dmin,
                         .ndisp = p->num_disparities, .p1 = p->p1, .p2 = p->p2,
                         .p2_adapt = p->p2_adapt, .max_cost = max_cost, .per_dir = 1};
    for (int r = 0; r < STEREO_MAX_PATHS; r++) {
        stereo_path_penalties(p, r, &j.sgm.dir_p1[r], &j.sgm.dir_p2[r]);
        j.sgm.dir_weight[r] = p->path_weight[r];
    }
    j.bm = p->method == STEREO_METHOD_BM;
    j.block = (block_config){p->width, p->height, p->num_disparities, p->block,
                             block_shift(max_cost, p->block)};
    j.wta = (wta_config){p->width, p->height, dmin, p->num_disparities, p->uniqueness,
                         p->subpixel};
    j.grey[0] = s->grey[0];
    j.grey[1] = s->grey[1];
    j.valid[0] = s->valid[0];
    j.valid[1] = s->valid[1];
    j.conf = s->conf;
    j.median = p->median;
    j.lr_check = p->lr_check;
    j.lr_tolerance = p->lr_tolerance;
    j.count = 1;

    uint64_t w = (uint64_t)p->width;
    __atomic_store_n(&s->units_done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sweep_rows[0], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sweep_rows[1], 0, __ATOMIC_RELAXED);
    const int nv = stereo_view_count(p);
    int input_h = 0;
    for (int v = 0; v < nv; v++)
        input_h += images[v]->height;
    __atomic_store_n(&s->units_total, units_frame(s, input_h), __ATOMIC_RELAXED);

    for (j.side = 0; j.side < nv; j.side++) {
        j.img = images[j.side];
        /* 1. grey */
        run_rows(s, &j, j.img->height, job_grey, (uint64_t)j.img->width * UNITS_GREY);
        /* 2. rectification by the maps */
        if (s->have_maps)
            run_rows(s, &j, h, job_rectify, w * UNITS_RECTIFY);
        /* 2a. a negative minimum disparity: the right view (and its validity) shifted */
        if (j.side == 1 && s->shift) {
            memcpy(s->right_rect, s->grey[1], (size_t)p->width * h);
            run_rows(s, &j, h, job_shift, 0);
        }
        /* 3. rank / census transform (none for ad, bt and mi: a no-op counted like one) */
        run_rows(s, &j, h, job_transform, w * UNITS_TRANSFORM);
    }
    /* 3a. adcensus: each other view's grey mapping onto the reference's (the pair: the right
     * view's onto the left's) */
    if (p->cost == STEREO_COST_ADCENSUS)
        for (int v = 1; v < nv; v++)
            grey_match(s->grey[0], s->grey[v], (size_t)p->width * p->height, s->ad_lut[v]);
    /* 3b. mi: the table of the full-size cost, from the hierarchy or the previous frame */
    if (p->cost == STEREO_COST_MI)
        mi_prepare(s, j.valid[0], j.valid[1], NULL); /* the CPU's levels do not fail */
    /* 3c. the coarse-to-fine mode: the half-size level and each pixel's band (band.h) */
    if (p->band)
        cpu_band(s, &j);
    /* 4.-8. matching at full size (4. with more views: the combined cost, multiview.h) */
    cpu_match(s, &j);
    /* 8b. depth-discontinuity adjustment (cross.h), on the range the volume holds */
    if (p->discontinuity) {
        run_rows(s, &j, h, job_adjust, 0);
        int16_t *t = s->disp;
        s->disp = s->tmp;
        s->tmp = t;
    }
    /* 8a. a negative minimum disparity: both maps shifted back (disparity.h) */
    if (s->shift)
        run_rows(s, &j, h, job_unshift, 0);
    /* 9. post-filters: speckle removal, region voting, interpolation, temporal filter, hole
     * filling (postfilter.h) */
    postfilter_apply(&p->post, &s->post, s->disp, s->conf, p->lr_check ? s->disp_right : NULL,
                     s->grey[0], p->min_disparity, p->num_disparities, s->pool);

    if (p->cost == STEREO_COST_MI)
        mi_finish(s, s->disp, t0);
}

int stage_cpu_progress(const stage_cpu *s)
{
    uint64_t total = __atomic_load_n(&s->units_total, __ATOMIC_RELAXED);
    if (!total)
        return 0;
    /* the sweeps count their rows apart (sgm.c adds one per row) */
    uint64_t rows = __atomic_load_n(&s->sweep_rows[0], __ATOMIC_RELAXED) +
                    __atomic_load_n(&s->sweep_rows[1], __ATOMIC_RELAXED);
    uint64_t done = __atomic_load_n(&s->units_done, __ATOMIC_RELAXED) +
                    rows * units_sweep_row(&s->p);
    return done >= total ? 1000 : (int)(done * 1000 / total);
}

/* ---- results and settings ----------------------------------------------------------------- */

const int16_t *stage_cpu_disparity(const stage_cpu *s) { return s->disp; }
const int16_t *stage_cpu_disparity_right(const stage_cpu *s) { return s->disp_right; }
const uint8_t *stage_cpu_confidence(const stage_cpu *s) { return s->conf; }
const uint8_t *stage_cpu_rectified(const stage_cpu *s, int right)
{
    return right && s->right_rect ? s->right_rect : s->grey[right ? 1 : 0];
}

void stage_cpu_set_postfilter(stage_cpu *s, const stereo_postfilter *f, int clear)
{
    if (clear)
        postfilter_temporal_clear(s->post.prev, s->post.age, (size_t)s->p.width * s->p.height);
    s->p.post = *f;
}

void stage_cpu_colorize(const stage_cpu *s, int colormap, int lo, int hi, uint8_t *rgba,
                        size_t pitch)
{
    uint8_t lut[256 * 3];
    colormap_lut((colormap_id)colormap, lut);
    colormap_disparity_rows(s->disp, s->p.width, (colormap_range){lo, hi}, lut, rgba, 4, pitch, 0,
                            s->p.height);
}

void stage_cpu_mi_finish(stage_cpu *s, const int16_t *disp) { mi_finish(s, disp, s->mi_t0); }

int stage_cpu_mi_status(const stage_cpu *s, stereo_mi_info *out)
{
    if (!s->mi_info.frames)
        return -1;
    *out = s->mi_info;
    return 0;
}

/* ---- the asynchronous path (stereo.h) ------------------------------------------------------ */

/* The result slots, allocated on first use. */
static stereo_status cpu_slots(stage_cpu *s, char *err, size_t errlen)
{
    size_t n = (size_t)s->p.width * s->p.height;
    for (int k = 0; k < 2; k++) {
        if (s->slot[k].disp)
            continue;
        int ok = !!(s->slot[k].disp = malloc(n * 2)) & !!(s->slot[k].rgba = malloc(n * 4)) &
                 !!(s->slot[k].rect[0] = malloc(n)) & !!(s->slot[k].rect[1] = malloc(n));
        if (s->p.lr_check)
            ok &= !!(s->slot[k].right = malloc(n * 2));
        if (s->p.confidence)
            ok &= !!(s->slot[k].conf = malloc(n));
        if (!ok)
            return stereo_fail(err, errlen, STEREO_ERR_NOMEM, "cannot allocate result buffers");
    }
    return STEREO_OK;
}

stereo_status stage_cpu_submit(stage_cpu *s, stage_cpu_views views, int colormap, int lo, int hi,
                               char *err, size_t errlen)
{
    stereo_status st = cpu_slots(s, err, errlen);
    if (st != STEREO_OK)
        return st;
    stage_cpu_process(s, views);
    size_t px = (size_t)s->p.width * s->p.height;
    int k = s->next_slot;
    memcpy(s->slot[k].disp, s->disp, px * 2);
    if (s->slot[k].right)
        memcpy(s->slot[k].right, s->disp_right, px * 2);
    if (s->slot[k].conf)
        memcpy(s->slot[k].conf, s->conf, px);
    memcpy(s->slot[k].rect[0], s->grey[0], px);
    memcpy(s->slot[k].rect[1], stage_cpu_rectified(s, 1), px);
    stage_cpu_colorize(s, colormap, lo, hi, s->slot[k].rgba, (size_t)s->p.width * 4);
    return STEREO_OK;
}

void stage_cpu_wait(stage_cpu *s, stereo_result *out)
{
    int k = s->next_slot;
    *out = (stereo_result){s->slot[k].disp, s->slot[k].right, s->slot[k].conf, s->slot[k].rgba,
                           (size_t)s->p.width * 4, {s->slot[k].rect[0], s->slot[k].rect[1]}};
    s->next_slot = k ^ 1;
}
