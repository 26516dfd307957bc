/* SPDX-License-Identifier: Apache-2.0 */
/* stage_cuda_create.cu — the CUDA stage's create and destroy (stage_cuda.h): the green context
 * (p->sms > 0), every buffer the stage needs (the aggregation design chosen by what fits in the
 * device's memory, see stage_cuda_create) and the first capture of the per-frame graph
 * (build_graph, stage_cuda.cu). The state both files share: stage_cuda_state.cuh.
 */
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "colormap.h"
#include "cross.h"
#include "cuda_check.cuh"
#include "launch.cuh"
#include "postfilter.h"
#include "stage_cuda_state.cuh"
#include "stereo_math.h"
#include "transform.h"

/* The costs the walk evaluates on 64-bit words per pixel (the census path, sgm_walk.cuh
 * word_cost): census, and bt's packed I, lo, hi (launch_bt_words). */
static int cost_uses_words(stereo_cost c)
{
    return stereo_cost_has_census(c) || c == STEREO_COST_BT;
}
/* The costs that have no walk of their own (sgm_walk.cuh): the volume walk reads them from the
 * cost volume, built first by launch_cost_volume, whatever STEREO_CUDA_COST_VOLUME says. */
static int cost_needs_volume(stereo_cost c) { return c == STEREO_COST_ADCENSUS; }

/* ---- the green context (p->sms > 0) ------------------------------------------------------- */

#if CUDART_VERSION >= 12040
/* A driver function by name, in its CUDA 12.4 form (the one cuda.h declares for the green
 * context calls); -1 when the driver has none (older than 12.4, or no driver). */
static int driver_symbol(const char *name, void **fn)
{
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    *fn = NULL;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, 12040, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, fn, cudaEnableDefault, &q);
#endif
    cudaGetLastError(); /* a missing symbol must not surface as a later kernel's error */
    return e == cudaSuccess && q == cudaDriverEntryPointSuccess && *fn ? 0 : -1;
}

static stereo_status driver_fail(const stage_cuda *s, char *err, size_t errlen, int want,
                                 const char *what, CUresult r)
{
    const char *why = NULL;
    if (s->drv.error_string(r, &why) != CUDA_SUCCESS || !why)
        why = "unknown driver error";
    snprintf(err, errlen, "sms: %d: %s: %s (%d)", want, what, why, (int)r);
    return STEREO_ERR_CUDA;
}

/* Creates the green context of `want` SMs on the runtime's current device and records the SMs
 * it really got in s->sms (the split rounds up to the hardware's granularity: the walk must
 * divide its work by what it runs on). */
static stereo_status green_create(stage_cuda *s, int want, char *err, size_t errlen)
{
    driver_api *d = &s->drv;
    const struct {
        const char *name;
        void **fn;
    } syms[] = {
        {"cuInit", (void **)&d->init},
        {"cuDeviceGet", (void **)&d->device_get},
        {"cuDeviceGetDevResource", (void **)&d->device_resource},
        {"cuDevSmResourceSplitByCount", (void **)&d->split_sms},
        {"cuDevResourceGenerateDesc", (void **)&d->generate_desc},
        {"cuGreenCtxCreate", (void **)&d->green_create},
        {"cuCtxFromGreenCtx", (void **)&d->from_green},
        {"cuGreenCtxDestroy", (void **)&d->green_destroy},
        {"cuCtxPushCurrent", (void **)&d->push},
        {"cuCtxPopCurrent", (void **)&d->pop},
        {"cuGetErrorString", (void **)&d->error_string},
    };
    for (const auto &sym : syms)
        if (driver_symbol(sym.name, sym.fn) != 0) {
            int drv = 0;
            cudaDriverGetVersion(&drv);
            cudaGetLastError();
            snprintf(err, errlen,
                     "sms: %d: green contexts need a CUDA 12.4 or later driver; this one is "
                     "%d.%d (%s not found)",
                     want, drv / 1000, drv % 1000 / 10, sym.name);
            return STEREO_ERR_NODEV;
        }
    int device = 0;
    CUDA_TRY(cudaGetDevice(&device));
    CUdevice dev;
    CUdevResource all, part, rest;
    CUresult r;
    if ((r = d->init(0)) != CUDA_SUCCESS || (r = d->device_get(&dev, device)) != CUDA_SUCCESS ||
        (r = d->device_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS)
        return driver_fail(s, err, errlen, want, "reading the device's SMs", r);
    if ((unsigned)want > all.sm.smCount) {
        snprintf(err, errlen, "sms: %d is more than the device's %u SMs", want, all.sm.smCount);
        return STEREO_ERR_PARAM;
    }
    unsigned groups = 1;
    r = d->split_sms(&part, &groups, &all, &rest, 0, (unsigned)want);
    if (r != CUDA_SUCCESS || groups != 1) { /* e.g. rounded up past the device's count */
        const char *why = "no such group";
        if (r != CUDA_SUCCESS && (d->error_string(r, &why) != CUDA_SUCCESS || !why))
            why = "unknown driver error";
        snprintf(err, errlen,
                 "sms: %d: the device's %u SMs cannot be split into a group of that many (%s; "
                 "the hardware groups SMs, e.g. by 8 on Hopper, by 2 on Orin): ask for fewer, "
                 "or 0 for all",
                 want, all.sm.smCount, why);
        return r != CUDA_SUCCESS ? STEREO_ERR_CUDA : STEREO_ERR_PARAM;
    }
    CUdevResourceDesc desc;
    if ((r = d->generate_desc(&desc, &part, 1)) != CUDA_SUCCESS)
        return driver_fail(s, err, errlen, want, "cuDevResourceGenerateDesc", r);
    if ((r = d->green_create(&s->green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)) != CUDA_SUCCESS)
        return driver_fail(s, err, errlen, want, "cuGreenCtxCreate", r);
    if ((r = d->from_green(&s->ctx, s->green)) != CUDA_SUCCESS)
        return driver_fail(s, err, errlen, want, "cuCtxFromGreenCtx", r);
    s->sms = (int)part.sm.smCount;
    return STEREO_OK;
}
#else /* CUDA 11.x (JetPack 5): the toolkit has no green contexts */
static stereo_status green_create(stage_cuda *s, int want, char *err, size_t errlen)
{
    snprintf(err, errlen, "sms: %d: green contexts need CUDA 12.4 or later; this build has %d.%d",
             want, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    return STEREO_ERR_NODEV;
}
#endif

/* ---- create / destroy ---------------------------------------------------------------------- */

/* STEREO_CUDA_FAULT (tests only, see stage_cuda.h): "alloc:NAME" or "frame:N". */
static void read_fault_env(stage_cuda *s)
{
    const char *f = getenv("STEREO_CUDA_FAULT");
    if (!f)
        return;
    if (!strncmp(f, "alloc:", 6))
        snprintf(s->fault_alloc, sizeof s->fault_alloc, "%s", f + 6);
    else if (!strncmp(f, "frame:", 6))
        s->fault_frame = atol(f + 6);
}

/* A buffer's name for messages: the member expression without "s->" and without an index
 * ("s->slot[k].disp" -> "slot.disp", "s->grey[i]" -> "grey"). */
static void buffer_name(const char *expr, char *out, size_t outlen)
{
    size_t j = 0;
    if (!strncmp(expr, "s->", 3))
        expr += 3;
    for (int depth = 0; *expr && j + 1 < outlen; expr++) {
        if (*expr == '[')
            depth++;
        else if (*expr == ']')
            depth--;
        else if (!depth)
            out[j++] = *expr;
    }
    out[j] = 0;
}

/* Every allocation of the stage goes through here, so that a failure names the buffer and its
 * size with the device's free memory (STEREO_ERR_NOMEM, which lets AUTO fall back to the CPU).
 * managed: cudaMallocManaged(..., cudaMemAttachHost), host: cudaMallocHost, else cudaMalloc. */
enum { ALLOC_DEVICE, ALLOC_MANAGED, ALLOC_HOST };
static stereo_status stage_alloc(const stage_cuda *s, void **ptr, size_t bytes, int kind,
                                 const char *expr, char *err, size_t errlen)
{
    char name[32];
    buffer_name(expr, name, sizeof name);
    size_t free_b = 0, total_b = 0;
    size_t ask = bytes;
    if (s->fault_alloc[0] && !strcmp(s->fault_alloc, name)) {
        ask = bytes + ((size_t)1 << 50); /* 1 PB: more than any device has, also for managed
                                            memory, which may oversubscribe the device */
    }
    cudaError_t e = kind == ALLOC_MANAGED ? cudaMallocManaged(ptr, ask, cudaMemAttachHost)
                    : kind == ALLOC_HOST  ? cudaMallocHost(ptr, ask)
                                          : cudaMalloc(ptr, ask);
    if (e == cudaSuccess)
        return STEREO_OK;
    *ptr = NULL;
    cudaGetLastError(); /* an allocation failure is not sticky: clear it for the next call */
    cudaMemGetInfo(&free_b, &total_b);
    snprintf(err, errlen,
             "cannot allocate the stage's %s buffer '%s' (%.1f MB): %s; the device has %.0f MB "
             "free of %.0f MB",
             kind == ALLOC_MANAGED ? "managed" : kind == ALLOC_HOST ? "pinned host" : "device",
             name, ask / 1e6, cudaGetErrorString(e), free_b / 1e6, total_b / 1e6);
    return e == cudaErrorMemoryAllocation ? STEREO_ERR_NOMEM : STEREO_ERR_CUDA;
}
#define STAGE_ALLOC(ptr, bytes, kind)                                                     \
    do {                                                                                  \
        stereo_status st_ = stage_alloc(s, (void **)&(ptr), (bytes), kind, #ptr, err, errlen); \
        if (st_ != STEREO_OK)                                                             \
            return st_;                                                                   \
    } while (0)
#define DEV_ALLOC(ptr, bytes) STAGE_ALLOC(ptr, bytes, ALLOC_DEVICE)
#define MANAGED_ALLOC(ptr, bytes) STAGE_ALLOC(ptr, bytes, ALLOC_MANAGED)

/* The coarse-to-fine mode's buffers and its coarse level's stage, nested (in this stage's
 * context: the caller's green scope). The paths' volumes are bytes when every L fits one. */
static stereo_status band_create(stage_cuda *s, size_t free_b, char *err, size_t errlen)
{
    const stereo_params *p = &s->p;
    const size_t n = (size_t)p->width * p->height, W = (size_t)p->band;
    int bytes = 1;
    for (int r = 0; r < p->paths; r++) {
        int q1, q2;
        stereo_path_penalties(p, r, &q1, &q2);
        bytes &= sgm_fits_bytes(transform_max_cost(p->cost, p->rank_window), q1, q2);
    }
    const size_t need = n * W * (1 + (size_t)p->paths * (bytes ? 1 : 2) + 2) + n * 2;
    if (need > free_b / 2) {
        snprintf(err, errlen, "the coarse-to-fine mode needs %.0f MB of device memory for "
                 "%dx%d with a band of %d, more than half of the %.0f MB free",
                 need / 1e6, p->width, p->height, p->band, free_b / 1e6);
        return STEREO_ERR_NOMEM;
    }
    s->band.W = p->band;
    s->band.bytes = bytes;
    DEV_ALLOC(s->band.start, n * 2);
    DEV_ALLOC(s->band.cost, n * W);
    DEV_ALLOC(s->band.L, n * W * (size_t)p->paths * (bytes ? 1 : 2));
    DEV_ALLOC(s->band.S, n * W * 2);
    stereo_params q;
    band_coarse_params(p, &q);
    q.sms = 0; /* inside this stage's context, green or not */
    char why[200];
    stereo_status st = stage_cuda_create(&q, NULL, &s->coarse, why, sizeof why);
    if (st != STEREO_OK) {
        snprintf(err, errlen, "the coarse-to-fine mode's half-size level: %s", why);
        return st;
    }
    s->coarse->nested = 1;
    s->coarse->sms = s->sms;
    return STEREO_OK;
}

stereo_status stage_cuda_create(const stereo_params *p, const stereo_map *maps,
                                stage_cuda **out, char *err, size_t errlen)
{
    *out = NULL;
    stage_cuda *s = (stage_cuda *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "cannot allocate the CUDA stage");
        return STEREO_ERR_NOMEM;
    }
    stereo_status st = STEREO_OK;
    read_fault_env(s);
    /* every failure below goes through fail: so the partial stage is released */
    {
        if (p->sms > 0 && (st = green_create(s, p->sms, err, errlen)) != STEREO_OK)
            goto fail;
        green_scope in_ctx(s); /* everything below is created in the green context */
        if (!in_ctx.ok) {
            st = in_ctx.fail(err, errlen);
            goto fail;
        }
        s->p = *p;
        s->shift = p->min_disparity < 0 ? -p->min_disparity : 0;
        s->p.min_disparity += s->shift; /* stages 3-8 search 0 .. D - 1 (disparity.h) */
        s->nv = p->views > 2 ? p->views : 2;
        s->have_maps = maps != NULL;
        for (int i = 0; i < s->nv; i++) {
            s->src_w[i] = maps ? maps[i].src_width : p->width;
            s->src_h[i] = maps ? maps[i].src_height : p->height;
        }
        size_t n = (size_t)p->width * p->height, vol = n * (size_t)p->num_disparities;
        size_t free_b = 0, total_b = 0;
        cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
        if (e != cudaSuccess) {
            st = cuda_fail(err, errlen, "cudaMemGetInfo", e, __FILE__, __LINE__);
            goto fail;
        }
        if (vol * 4 + n * 72 > free_b) {
            snprintf(err, errlen,
                     "the CUDA stage needs %.0f MB of device memory for %dx%d with %d "
                     "disparities, %.0f MB are free",
                     (vol * 4 + n * 72) / 1e6, p->width, p->height, p->num_disparities,
                     free_b / 1e6);
            st = STEREO_ERR_NOMEM;
            goto fail;
        }
        if ((e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != cudaSuccess) {
            st = cuda_fail(err, errlen, "cudaStreamCreate", e, __FILE__, __LINE__);
            goto fail;
        }
        st = [&]() -> stereo_status {
            int device = 0, concurrent = 0;
            CUDA_TRY(cudaGetDevice(&device));
            CUDA_TRY(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess,
                                            device));
            if (!s->sms) /* else the green context's count */
                CUDA_TRY(cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, device));
            const char *frames = getenv("STEREO_CUDA_FRAMES");
            s->pinned_frames = frames && !strcmp(frames, "managed")  ? 0
                               : frames && !strcmp(frames, "pinned") ? 1
                                                                     : concurrent;
            for (int i = 0; i < s->nv; i++) {
                /* widest format: RGB24 */
                DEV_ALLOC(s->in[i], (size_t)s->src_w[i] * 3 * s->src_h[i]);
                if (!cost_uses_table(p->cost)) /* else grey lives in the padded rows, below */
                    DEV_ALLOC(s->grey[i], n);
                if (maps) {
                    DEV_ALLOC(s->valid[i], n);
                    DEV_ALLOC(s->xy[i], n * 4);
                    DEV_ALLOC(s->frac[i], n * 2);
                    CUDA_TRY(cudaMemcpy(s->xy[i], maps[i].xy, n * 4, cudaMemcpyHostToDevice));
                    CUDA_TRY(cudaMemcpy(s->frac[i], maps[i].frac, n * 2, cudaMemcpyHostToDevice));
                }
                if (!cost_uses_words(p->cost)) { /* rank, or the grey values of a table cost */
                    DEV_ALLOC(s->rank_alloc[i], RANK_PAD_FRONT + n + RANK_PAD_BACK);
                    CUDA_TRY(cudaMemset(s->rank_alloc[i], 0, RANK_PAD_FRONT + n + RANK_PAD_BACK));
                    s->rank[i] = s->rank_alloc[i] + RANK_PAD_FRONT;
                    if (cost_uses_table(p->cost)) /* the walk reads the grey values there */
                        s->grey[i] = s->rank[i];
                }
                else if (stereo_cost_has_census(p->cost) || s->nv == 2) /* bt: words (pair) */
                    DEV_ALLOC(s->census[i], n * sizeof(uint64_t));
            }
            if (s->shift)
                DEV_ALLOC(s->right_rect, n);
            s->in_fmt = STEREO_PIX_GREY8;
            /* The aggregation's volumes may take a quarter of the device memory and half of
             * what is free. Per-direction byte volumes (paths * vol bytes) when every L fits a
             * byte and they fit; else 4 branches' 16-bit partial sums when they fit, else 2.
             * For measurements and tests: STEREO_CUDA_AGG=branches forces the branches,
             * STEREO_CUDA_BRANCHES=2|4 their number. */
            size_t budget = total_b / 4 < free_b / 2 ? total_b / 4 : free_b / 2;
            if (p->band) {
                stereo_status bst = band_create(s, free_b, err, errlen);
                if (bst != STEREO_OK)
                    return bst;
                goto common;
            }
            {
            const char *agg = getenv("STEREO_CUDA_AGG");
            int max_cost = transform_max_cost(p->cost, p->rank_window);
            int fits = 1; /* every direction's L in a byte */
            for (int r = 0; r < p->paths; r++) {
                int q1, q2;
                stereo_path_penalties(p, r, &q1, &q2);
                fits &= sgm_fits_bytes(max_cost, q1, q2);
            }
            s->bm = p->method == STEREO_METHOD_BM;
            /* The sweep design (sgm_sweep.cu) needs 2 * vol bytes (the per-direction design
             * paths * vol, the branches 2 * vol per branch) but runs slower wherever those fit:
             * its rows form a wavefront, at most w / 2 of them at once, and on 16 SMs it is
             * latency-bound (docs/cuda-notes.md). So it runs where nothing else fits or has
             * kernels: more than 256 disparities, or volumes too large for the others.
             * STEREO_CUDA_AGG=sweep forces it where it applies (measurements, tests). It
             * reads every cost but rank from the cost volume. */
            const char *cvs = getenv("STEREO_CUDA_COST_VOLUME");
            const int big = p->num_disparities > 256;
            int weighted = 0;
            for (int r = 0; r < p->paths; r++)
                weighted |= p->path_weight[r] != 1;
            const int sweep_ok = !s->bm && fits && !weighted &&
                                 sgm_sweep_supports(p->num_disparities) &&
                                 (p->cost == STEREO_COST_RANK || s->nv > 2 || big ||
                                  cost_needs_volume(p->cost) || !(cvs && !strcmp(cvs, "0")));
            const size_t ring_bytes = sweep_ring_words(p->width, p->num_disparities) * 4;
            const size_t sweep_bytes = vol * 2 + ring_bytes;
            const int others_fit = !big && ((fits && (size_t)p->paths * vol <= budget) ||
                                            4 * vol <= budget);
            /* more than 256 disparities have no other design: the sweep may take half of what
             * is free (1920x1080 D512, rank: 2.1 GB; an 8 GB Orin Nano has ~6 GB free) */
            const size_t sweep_budget = big ? free_b / 2 : budget;
            s->agg_sweep = sweep_ok &&
                           sweep_bytes + (p->cost == STEREO_COST_RANK ? 0 : vol) <= sweep_budget &&
                           (agg && !strcmp(agg, "sweep") ? 1 : big || (!agg && !others_fit));
            if (big && !s->agg_sweep) {
                snprintf(err, errlen,
                         "%d disparities: the CUDA stage runs more than 256 only as SGM in its "
                         "sweep design (D = 512, every L within a byte as with the default "
                         "penalties, no path weights, %.0f MB of device memory) or with the "
                         "coarse-to-fine mode (band)%s",
                         p->num_disparities, (sweep_bytes + vol) / 1e6,
                         s->bm ? "; block matching has no such kernels" : "");
                return STEREO_ERR_NODEV;
            }
            if (s->agg_sweep) {
                DEV_ALLOC(s->sweep_S, vol * 2);
                DEV_ALLOC(s->sweep_ring, ring_bytes);
                CUDA_TRY(cudaMemset(s->sweep_ring, 0xff, ring_bytes));
                DEV_ALLOC(s->sweep_sync, 8);
                CUDA_TRY(cudaMemset(s->sweep_sync, 0, 8));
            }
            s->agg_dirs = !s->bm && !s->agg_sweep && fits &&
                          (size_t)p->paths * vol <= budget && !(agg && !strcmp(agg, "branches"));
            /* The strip design (sgm_strips.cu): 12 bytes of traffic per voxel instead of 16,
             * 4 * vol bytes instead of paths * vol, for the costs read from the volume. It is
             * latency-bound and measured slower than the per-direction design on 16 and 8 SMs
             * (docs/cuda-notes.md), so only STEREO_CUDA_AGG=strips takes it (measurements,
             * tests). */
            const int strips_ok =
                s->agg_dirs && !weighted && (p->paths == 4 || p->paths == 8) &&
                p->cost != STEREO_COST_RANK && !(cvs && !strcmp(cvs, "0")) &&
                4 * vol + (size_t)n * 4 + vol <= budget &&
                sgm_strips_plan(p->width, p->num_disparities, s->sms, &s->strips);
            s->agg_strips = strips_ok && agg && !strcmp(agg, "strips");
            if (s->agg_strips) {
                const size_t ring = sgm_strips_ring_words(s->strips.nstrips, p->num_disparities);
                DEV_ALLOC(s->L8, 2 * vol);
                DEV_ALLOC(s->strips.S, 2 * vol);
                DEV_ALLOC(s->strips.keys, (size_t)n * 4);
                CUDA_TRY(cudaMemset(s->strips.keys, 0xff, (size_t)n * 4));
                DEV_ALLOC(s->strips.ring, ring * 4);
                DEV_ALLOC(s->strips.flags, (size_t)s->strips.nstrips * 2 * sizeof(int));
            } else if (s->agg_dirs)
                DEV_ALLOC(s->L8, (size_t)p->paths * vol);
            s->branches = s->agg_dirs || s->agg_sweep || s->bm ? 0 : 4 * vol * 2 <= budget ? 4 : 2;
            const char *env = getenv("STEREO_CUDA_BRANCHES");
            if (!s->agg_dirs && !s->agg_sweep && !s->bm && env && (!strcmp(env, "2") || !strcmp(env, "4")))
                s->branches = atoi(env);
            if (s->bm) {
                DEV_ALLOC(s->S[0], vol * sizeof(uint16_t));
                DEV_ALLOC(s->S[1], vol * sizeof(uint16_t));
            }
            /* The cost volume first, then the volume walk (SGM_VOLUME), for every cost but
             * rank: their own walks compute each cost once per direction, and census's and bt's
             * 64-bit words make those walks 3x slower than rank's (docs/results-gpu.md, session
             * 7: census 640x480 D128 8 paths on 16 SMs 7.70 ms on the fly, 2.48 ms with the
             * volume; rank 1.75 on the fly, 2.35 with it). It costs w * h * D bytes more; when
             * they do not fit beside the aggregation's volumes the walk computes the costs.
             * STEREO_CUDA_COST_VOLUME=0 / 1 (tests, measurements) turns it off / on for every
             * cost. */
            const char *cv = getenv("STEREO_CUDA_COST_VOLUME");
            const size_t agg_bytes = s->agg_sweep ? sweep_bytes
                                     : s->agg_strips ? 4 * vol + (size_t)n * 4
                                     : s->agg_dirs ? (size_t)p->paths * vol
                                                   : (size_t)s->branches * vol * 2;
            int want_vol = p->cost != STEREO_COST_RANK && agg_bytes + vol <= budget;
            if (cv && (!strcmp(cv, "0") || !strcmp(cv, "1")))
                want_vol = cv[0] == '1';
            if ((s->agg_sweep || s->agg_strips) && p->cost != STEREO_COST_RANK)
                want_vol = 1; /* their only way to other costs */
            /* the multi-baseline cost exists only as a volume (bm too); adcensus has no walk */
            if (s->nv > 2 || (cost_needs_volume(p->cost) && !s->bm) || p->cross ||
                p->discontinuity) /* cross.h's refinements read and write the volume */
                want_vol = 1;
            else if (s->bm) /* bm's box sums compute the pair's costs on the fly */
                want_vol = 0;
            if (want_vol)
                DEV_ALLOC(s->cost_vol, vol);
            if (p->cross && cross_tiled(p->cross)) { /* 4b's output (cross.h) */
                DEV_ALLOC(s->cross_out, vol);
            } else if (p->cross) { /* 4b's arms and row sums, the volume in place */
                DEV_ALLOC(s->cross_arms, n * sizeof(uint32_t));
                DEV_ALLOC(s->cross_H, vol * sizeof(uint16_t));
            }
            if (p->discontinuity) /* 8b's output, copied back onto disp */
                DEV_ALLOC(s->adjusted, n * sizeof(int16_t));
            }
        common:
            s->branch_stream[0] = s->stream;
            CUDA_TRY(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
            for (int b = 0; b < s->branches; b++) {
                DEV_ALLOC(s->S[b], vol * sizeof(uint16_t));
                if (b > 0) {
                    CUDA_TRY(cudaStreamCreateWithFlags(&s->branch_stream[b], cudaStreamNonBlocking));
                    CUDA_TRY(cudaEventCreateWithFlags(&s->join[b], cudaEventDisableTiming));
                }
            }
            if (s->nv > 2 && p->combine == STEREO_COMBINE_SIDES) {
                /* 2 * vol bytes that nothing reads before launch_mview_cost is done with them:
                 * the first direction volumes, or the first 16-bit volume */
                s->side_pos = s->agg_sweep ? (uint8_t *)s->sweep_S
                              : s->agg_dirs ? s->L8 : (uint8_t *)s->S[0];
                s->side_neg = s->side_pos + vol;
            }
            DEV_ALLOC(s->disp, n * 2);
            DEV_ALLOC(s->disp_right, n * 2);
            if (p->median) {
                DEV_ALLOC(s->raw, n * 2);
                DEV_ALLOC(s->raw_right, n * 2);
            }
            if (p->confidence)
                DEV_ALLOC(s->conf, n);
            DEV_ALLOC(s->post.dev, sizeof(postfilter_dev));
            DEV_ALLOC(s->post.parent, n * sizeof(int32_t));
            DEV_ALLOC(s->post.count, n * sizeof(int32_t));
            DEV_ALLOC(s->post.prev, n * sizeof(int16_t));
            DEV_ALLOC(s->post.age, n);
            DEV_ALLOC(s->post.arms, n * sizeof(uint32_t));
            DEV_ALLOC(s->post.vote_a, n * sizeof(int16_t));
            DEV_ALLOC(s->post.vote_b, n * sizeof(int16_t));
            CUDA_TRY(postfilter_cuda_set(&s->post, &p->post, 1, p->width, p->height, s->stream));
            DEV_ALLOC(s->d_desc, sizeof(frame_desc));
            STAGE_ALLOC(s->h_desc, 3 * sizeof(frame_desc), ALLOC_HOST);
            memset(s->h_desc, 0, 3 * sizeof(frame_desc));
            CUDA_TRY(cudaMemcpy(s->d_desc, s->h_desc, sizeof(frame_desc), cudaMemcpyHostToDevice));
            for (int k = 0; k < 2; k++) {
                /* host-attached: the CPU may read a slot whenever no frame writing it is in flight */
                MANAGED_ALLOC(s->slot[k].disp, n * 2);
                if (p->lr_check)
                    MANAGED_ALLOC(s->slot[k].right, n * 2);
                if (p->confidence)
                    MANAGED_ALLOC(s->slot[k].conf, n);
                MANAGED_ALLOC(s->slot[k].rgba, n * 4);
                for (int i = 0; i < 2; i++)
                    MANAGED_ALLOC(s->slot[k].rect[i], n);
            }
            CUDA_TRY(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
            if (p->cost == STEREO_COST_ADCENSUS) {
                DEV_ALLOC(s->ad_hist, 512 * sizeof(uint32_t));
                DEV_ALLOC(s->ad_lut, 256 * (size_t)(s->nv - 1)); /* one per other view */
            }
            if (cost_uses_table(p->cost)) {
                /* the table costs' C = table[IL * 256 + IR] (sgm.h); ad's is fixed; mi has
                 * stereo_mi_tables(mi_tiles) (mi.h) */
                const size_t bytes = table_bytes(p);
                DEV_ALLOC(s->cost_table, bytes);
                uint8_t *t = (uint8_t *)calloc(bytes, 1); /* mi: 0 until stage_cuda_set_table */
                if (!t) {
                    snprintf(err, errlen, "cannot allocate the cost tables (%zu KB)", bytes >> 10);
                    return STEREO_ERR_NOMEM;
                }
                if (p->cost == STEREO_COST_AD)
                    for (int il = 0; il < 256; il++)
                        for (int ir = 0; ir < 256; ir++)
                            t[il * 256 + ir] = (uint8_t)stereo_ad_cost(il, ir, STEREO_GREY_COST_MAX);
                cudaError_t ce = cudaMemcpy(s->cost_table, t, bytes, cudaMemcpyHostToDevice);
                free(t);
                CUDA_TRY(ce);
            }
            DEV_ALLOC(s->lut, 3 * 256 * 3);
            uint8_t lut[3 * 256 * 3];
            for (int c = 0; c < 3; c++)
                colormap_lut((colormap_id)c, lut + c * 768);
            CUDA_TRY(cudaMemcpy(s->lut, lut, sizeof lut, cudaMemcpyHostToDevice));
            for (int i = 0; i <= MAX_PROFILE; i++)
                CUDA_TRY(cudaEventCreate(&s->ev[i]));
            for (int i = 0; i < 2; i++)
                CUDA_TRY(cudaEventCreate(&s->frame_ev[i]));
            return build_graph(s, err, errlen);
        }();
        if (st != STEREO_OK)
            goto fail;
    }
    *out = s;
    return STEREO_OK;
fail:
    stage_cuda_destroy(s);
    return st == STEREO_OK ? STEREO_ERR_CUDA : st;
}

int stage_cuda_sms(const stage_cuda *s) { return s->sms; }

/* The buffers, streams and events, in the stage's context (destroy). */
static void release(stage_cuda *s)
{
    green_scope in_ctx(s);
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    if (s->graph_exec)
        cudaGraphExecDestroy(s->graph_exec);
    if (s->graph)
        cudaGraphDestroy(s->graph);
    cudaFree(s->right_rect);
    for (int i = 0; i < MV; i++) {
        cudaFree(s->in[i]);
        if (s->grey[i] != s->rank[i]) /* a table cost's grey is inside rank_alloc */
            cudaFree(s->grey[i]);
        cudaFree(s->valid[i]);
        cudaFree(s->xy[i]);
        cudaFree(s->frac[i]);
        cudaFree(s->rank_alloc[i]);
        cudaFree(s->census[i]);
    }
    cudaFree(s->cost_table);
    cudaFree(s->ad_hist);
    cudaFree(s->ad_lut);
    cudaFree(s->L8);
    stage_cuda_destroy(s->coarse);
    cudaFree(s->band.start);
    cudaFree(s->band.cost);
    cudaFree(s->band.L);
    cudaFree(s->band.S);
    cudaFree(s->strips.S);
    cudaFree(s->strips.keys);
    cudaFree(s->strips.ring);
    cudaFree(s->strips.flags);
    cudaFree(s->sweep_S);
    cudaFree(s->sweep_ring);
    cudaFree(s->sweep_sync);
    cudaFree(s->cost_vol);
    cudaFree(s->cross_arms);
    cudaFree(s->cross_H);
    cudaFree(s->cross_out);
    cudaFree(s->adjusted);
    for (int b = 0; b < SGM_MAX_BRANCHES; b++) {
        cudaFree(s->S[b]);
        if (s->join[b])
            cudaEventDestroy(s->join[b]);
        if (b > 0 && s->branch_stream[b])
            cudaStreamDestroy(s->branch_stream[b]);
    }
    if (s->fork)
        cudaEventDestroy(s->fork);
    cudaFree(s->disp);
    cudaFree(s->disp_right);
    cudaFree(s->raw);
    cudaFree(s->raw_right);
    cudaFree(s->conf);
    cudaFree(s->post.dev);
    cudaFree(s->post.parent);
    cudaFree(s->post.count);
    cudaFree(s->post.prev);
    cudaFree(s->post.age);
    cudaFree(s->post.arms);
    cudaFree(s->post.vote_a);
    cudaFree(s->post.vote_b);
    cudaFree(s->lut);
    cudaFree(s->rgba);
    cudaFree(s->d_desc);
    if (s->h_desc)
        cudaFreeHost(s->h_desc);
    for (int k = 0; k < 2; k++) {
        cudaFree(s->slot[k].disp);
        cudaFree(s->slot[k].right);
        cudaFree(s->slot[k].conf);
        cudaFree(s->slot[k].rgba);
        cudaFree(s->slot[k].rect[0]);
        cudaFree(s->slot[k].rect[1]);
    }
    if (s->done)
        cudaEventDestroy(s->done);
    for (int i = 0; i <= MAX_PROFILE; i++)
        if (s->ev[i])
            cudaEventDestroy(s->ev[i]);
    for (int i = 0; i < 2; i++)
        if (s->frame_ev[i])
            cudaEventDestroy(s->frame_ev[i]);
    if (s->stream)
        cudaStreamDestroy(s->stream);
}

void stage_cuda_destroy(stage_cuda *s)
{
    if (!s)
        return;
    release(s);
#if CUDART_VERSION >= 12040
    if (s->green) /* after its buffers and streams, and no longer current anywhere */
        s->drv.green_destroy(s->green);
#endif
    free(s);
}
