/* SPDX-License-Identifier: Apache-2.0 */
/* stage_cuda.cu — the CUDA backend of the stereo stage (stage_cuda.h).
 *
 * DESIGN
 * - Every buffer is allocated at create: device memory (cudaMalloc) for the camera images, the
 *   grey/rectified images, the transforms, the aggregation's volumes (one byte volume per
 *   direction, sgm_dirs.cu, or the branches' 16-bit partial sums, sgm.cu) and the disparity maps.
 *   Processing a frame allocates nothing.
 * - One stream per stage (plus up to three more inside the frame, forked and joined by events,
 *   for the concurrent aggregation branches). The per-frame kernel sequence (run_kernels) is captured
 *   once into a CUDA graph and replayed each frame: one launch call for ~15 kernels. With
 *   profiling on, the kernels are launched one by one with events between the stages instead.
 * - A frame: copy both camera images into the stage's input buffers (from host memory, or
 *   device-to-device when the caller's pointer is device or managed memory), replay the graph,
 *   copy the results to the caller's host buffers, wait on the stream. No host synchronisation
 *   happens inside the frame's GPU work.
 * - With p->sms > 0 the stage lives in a green context of that many SMs (green_create): every
 *   public entry point that touches CUDA pushes it on the calling thread and pops it on return
 *   (green_scope). Push / pop rather than set: a green context may be current to one thread at
 *   a time (the live app calls submit / wait from its stage thread, create / destroy from the
 *   main one), and the caller's own CUDA work on the thread must keep the whole device.
 * - This file: the per-frame kernel sequence, its graph and a frame's entry points;
 *   stage_cuda_create.cu: create and destroy (the green context, the buffers); the state both
 *   share: stage_cuda_state.cuh.
 */
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "block.h"
#include "colormap.h"
#include "cross.h"
#include "cuda_check.cuh"
#include "launch.cuh"
#include "multiview.h"
#include "postfilter.h"
#include "stage_cuda.h"
#include "stage_cuda_state.cuh"
#include "stereo_math.h"
#include "transform.h"

/* The cost kinds of block.cu (block_args.cost_kind): 0 rank, 1 census, 2 table, 3 bt words,
 * COST_KIND_ADCENSUS. */
static int cost_kind(stereo_cost c)
{
    return c == STEREO_COST_CENSUS     ? 1
           : c == STEREO_COST_BT       ? 3
           : c == STEREO_COST_ADCENSUS ? COST_KIND_ADCENSUS
           : cost_uses_table(c)        ? 2
                                       : 0;
}


/* Why cudaGetDeviceCount failed, for the user. The runtime answers "CUDA driver version is
 * insufficient for CUDA runtime version" (cudaErrorInsufficientDriver) both when the driver is
 * older than the runtime and when there is no driver at all, as on a machine without an NVIDIA
 * GPU: only the first is a driver to update. With no driver library to ask,
 * cudaDriverGetVersion gives 0 (a check that also holds on a Jetson, which has no
 * /proc/driver/nvidia). */
static void unavailable_reason(cudaError_t e, char *why, size_t whylen)
{
    int driver = 0;
    if (e == cudaErrorInsufficientDriver &&
        (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0))
        snprintf(why, whylen, "no CUDA device found (no NVIDIA driver loaded)");
    else if (e == cudaErrorInsufficientDriver && driver < CUDART_VERSION)
        snprintf(why, whylen, "no usable CUDA device: the NVIDIA driver supports CUDA %d.%d, "
                 "this build needs %d.%d (%s; update the driver)", driver / 1000,
                 driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10,
                 cudaGetErrorString(e));
    else
        snprintf(why, whylen, "no usable CUDA device (%s)", cudaGetErrorString(e));
}

int stage_cuda_available(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        unavailable_reason(e, why, whylen);
        cudaGetLastError(); /* clear the sticky-free error state */
        return 0;
    }
    if (n == 0) {
        snprintf(why, whylen, "no CUDA device found");
        return 0;
    }
    return 1;
}

/* ---- the per-frame kernel sequence --------------------------------------------------------- */

static void mark(stage_cuda *s, const char *name)
{
    if (s->profile && s->n_ev < MAX_PROFILE) {
        s->ev_name[s->n_ev] = name;
        cudaEventRecord(s->ev[++s->n_ev], s->stream);
    }
}

#define LAUNCH(call, name)                                                             \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess)                                                         \
            return cuda_fail(err, errlen, "kernel " name, e_, __FILE__, __LINE__);      \
    } while (0)

static stereo_status run_kernels(stage_cuda *s, char *err, size_t errlen);

/* The rectified right view the results show: grey[1] unless it holds the shifted view. */
static const uint8_t *rectified_right(const stage_cuda *s)
{
    return s->shift ? s->right_rect : s->grey[1];
}

/* The coarse level (band.h step 1): the half-size pair into the coarse stage's grey images,
 * then its kernels on this stage's stream (inside this frame's graph). */
static stereo_status run_coarse(stage_cuda *s, char *err, size_t errlen)
{
    stage_cuda *c = s->coarse;
    const int w1 = c->p.width, h1 = c->p.height;
    for (int i = 0; i < 2; i++)
        LAUNCH(launch_band_half(s->grey[i], s->p.width, s->p.height, c->grey[i], w1, h1,
                                s->stream),
               "band_half");
    cudaStream_t own = c->stream;
    c->stream = c->branch_stream[0] = s->stream;
    stereo_status st = run_kernels(c, err, errlen);
    c->stream = c->branch_stream[0] = own;
    return st;
}

static stereo_status run_kernels(stage_cuda *s, char *err, size_t errlen)
{
    const stereo_params *p = &s->p;
    int w = p->width, h = p->height, D = p->num_disparities;
    cudaStream_t st = s->stream;
    if (s->profile) {
        s->n_ev = 0;
        cudaEventRecord(s->ev[0], st);
    }
    /* 1.-3. grey, rectification, rank / census — per view (a nested stage's grey images are
     * its parent's, halved) */
    for (int i = 0; i < s->nv && !s->nested; i++)
        LAUNCH(launch_grey_rectify(s->d_desc, i, s->in_fmt, s->src_w[i], s->src_h[i],
                                   s->have_maps ? s->xy[i] : NULL, s->frac[i], s->grey[i],
                                   s->valid[i], w, h, st),
               "grey_rectify");
    if (s->shift && !s->nested) { /* a negative minimum disparity: the right view shifted */
        LAUNCH(launch_shift_rows(s->grey[1], s->right_rect, w, h, s->shift, st), "shift");
        if (s->have_maps)
            LAUNCH(launch_shift_rows(s->valid[1], NULL, w, h, s->shift, st), "shift");
        mark(s, "grey+rectify+shift");
    } else {
        mark(s, "grey+rectify");
    }
    for (int i = 0; i < s->nv; i++) {
        if (p->cost == STEREO_COST_RANK)
            LAUNCH(launch_rank(s->grey[i], w, h, p->rank_window, s->rank[i], st), "rank");
        else if (stereo_cost_has_census(p->cost))
            LAUNCH(launch_census(s->grey[i], w, h, s->census[i], st), "census");
        else if (p->cost == STEREO_COST_BT && s->nv == 2) /* more views read the grey rows */
            LAUNCH(launch_bt_words(s->grey[i], w, h, s->census[i], st), "bt words");
        /* table costs (ad): grey is the padded rows the walk reads (stage_cuda_create) */
    }
    /* adcensus: each other view's grey mapping onto the reference's, view v's at
     * ad_lut + 256 (v - 1) (the pair: the right view's); one histogram buffer, in stream order */
    for (int v = 1; v < s->nv && p->cost == STEREO_COST_ADCENSUS; v++)
        LAUNCH(launch_grey_match(s->grey[0], s->grey[v], (size_t)w * h, s->sms, s->ad_hist,
                                 s->ad_lut + 256 * (v - 1), st),
               "grey_match");
    mark(s, "transform");
    /* 4.-7. cost on the fly, aggregation per direction; the last direction's pass also picks
     * the left and right disparities (to the raw maps when the median filters them next) */
    int16_t *wta = p->median ? s->raw : s->disp;
    int16_t *wta_right = p->median ? s->raw_right : s->disp_right;
    sgm_args a = {w, h, p->min_disparity, D, p->p1, p->p2, p->p2_adapt,
                  transform_max_cost(p->cost, p->rank_window), p->cost, s->grey[0],
                  s->rank[0], s->rank[1], s->census[0], s->census[1], s->cost_table, {NULL}, s->branches,
                  s->have_maps ? s->valid[0] : NULL, s->have_maps ? s->valid[1] : NULL,
                  p->uniqueness, p->subpixel, wta, p->lr_check ? wta_right : NULL, s->conf};
    a.grey_r = s->grey[1];
    a.ad_lut = s->ad_lut;
    a.ad_weight = p->ad_weight;
    a.table_grid = p->cost == STEREO_COST_MI ? p->mi_tiles : 1; /* mi: a table per tile */
    for (int r = 0; r < 8; r++) {
        stereo_path_penalties(p, r, &a.dir_p1[r], &a.dir_p2[r]);
        a.dir_weight[r] = r < p->paths ? p->path_weight[r] : 0;
        a.weighted |= r < p->paths && p->path_weight[r] != 1;
    }
    if (s->nv > 2) { /* 4. the multi-baseline cost volume (multiview.h), then the volume walk */
        mview_args m = {w, h, p->min_disparity, D, a.max_cost, p->cost, s->nv, {0},
                        p->combine, {NULL}, {NULL}, {NULL}};
        for (int v = 0; v < s->nv; v++) {
            m.baseline[v] = p->baseline[v];
            m.vals[v] = p->cost == STEREO_COST_RANK ? s->rank[v] : s->grey[v];
            m.bits[v] = s->census[v];
            m.grey[v] = s->grey[v];
            m.ad_lut[v] = v > 0 && s->ad_lut ? s->ad_lut + 256 * (v - 1) : NULL;
        }
        m.ad_weight = p->ad_weight;
        LAUNCH(launch_mview_cost(&m, s->cost_vol, s->side_pos, s->side_neg, st), "mview cost");
        a.cost_vol = s->cost_vol;
        mark(s, "cost volume");
    } else if (s->cost_vol) { /* the costs first, then the volume walk reads them */
        LAUNCH(launch_cost_volume(&a, cost_kind(p->cost), s->cost_vol, st), "cost volume");
        a.cost_vol = s->cost_vol;
        mark(s, "cost volume");
    }
    if (p->cross) { /* 4b. cross-based cost aggregation (cross.h): the walks read its volume */
        LAUNCH(launch_cross_aggregate(s->grey[0], w, h, D, p->cross, s->cost_vol, s->cross_out,
                                      s->cross_arms, s->cross_H, st),
               "cross aggregate");
        if (s->cross_out)
            a.cost_vol = s->cross_out;
        mark(s, "cross aggregation");
    }
    if (p->band) {
        /* the coarse-to-fine mode (band.h): 1. the half-size level on its own stage, 2. the
         * bands, 3. their costs and walks, 4. the sum and the disparities */
        stereo_status cst = run_coarse(s, err, errlen);
        if (cst != STEREO_OK)
            return cst;
        mark(s, "coarse level");
        const stereo_params *q = &s->coarse->p;
        LAUNCH(launch_band_start(&a, &s->band, s->coarse->disp, q->width, q->height, st),
               "band_start");
        LAUNCH(launch_band_cost(&a, cost_kind(p->cost), &s->band, st), "band_cost");
        mark(s, "band cost");
        LAUNCH(launch_band_walk(&a, p->paths, &s->band, st), "band_walk");
        mark(s, "band sgm");
        LAUNCH(launch_band_wta(&a, p->paths, &s->band, st), "band_wta");
        mark(s, "band wta");
    } else if (s->bm) {
        /* 5. block matching: the N x N box sums of the cost (block.h), then 6.-7. on them */
        const block_args b = {p->block, block_shift(a.max_cost, p->block),
                              s->nv > 2 ? BLOCK_COST_VOLUME : cost_kind(p->cost)};
        a.S[0] = s->S[0];
        LAUNCH(launch_block_sum(&a, &b, s->S[1], s->S[0], st), "block_sum");
        mark(s, "box sum");
        LAUNCH(launch_wta_volume(&a, st), "wta_volume");
        mark(s, "wta");
    } else if (s->agg_sweep) {
        a.sweep_S = s->sweep_S;
        a.sweep_ring = s->sweep_ring;
        a.sweep_sync = s->sweep_sync;
        LAUNCH(launch_sgm_sweep(&a, p->paths, st), "sgm_sweep");
        mark(s, "sweeps+wta");
    } else if (s->agg_dirs) {
        a.L8 = s->L8;
        a.vol = (size_t)w * h * D;
        a.sms = s->sms;
        if (s->agg_strips) {
            a.strips = &s->strips;
            LAUNCH(launch_sgm_dirs(&a, p->paths, st), "sgm_dirs (rows)");
            mark(s, "sgm (rows)");
            LAUNCH(launch_sgm_strips(&a, p->paths, 0, st), "sgm_strips down");
            mark(s, "strips down");
            LAUNCH(launch_sgm_strips(&a, p->paths, 1, st), "sgm_strips up");
            mark(s, "strips up+wta");
        } else {
            LAUNCH(launch_sgm_dirs(&a, p->paths, st), "sgm_dirs");
            mark(s, "sgm (directions)");
            LAUNCH(launch_wta_dirs(&a, p->paths, st), "wta_dirs");
            mark(s, "sum+wta");
        }
    } else {
        for (int b = 0; b < s->branches; b++)
            a.S[b] = s->S[b];
        LAUNCH(launch_sgm(&a, p->paths, s->branch_stream, s->fork, s->join), "sgm");
        mark(s, "sgm (branches)");
        LAUNCH(launch_sgm_final(&a, st), "sgm_final");
        mark(s, "final+wta");
    }
    /* 7. median on both maps, then the LR check */
    if (p->median) {
        LAUNCH(launch_median(s->raw, w, h, s->disp, st), "median");
        if (p->lr_check)
            LAUNCH(launch_median(s->raw_right, w, h, s->disp_right, st), "median");
    }
    if (mview_lr_occlusion_test(p)) /* against view 1, with the occlusion test (disparity.h) */
        LAUNCH(launch_lr_finish_views(s->disp, p->lr_check ? s->disp_right : NULL, s->conf, w, h,
                                      p->lr_tolerance, st),
               "lr_finish_views");
    else
        LAUNCH(launch_lr_finish(s->disp, p->lr_check ? s->disp_right : NULL, s->conf, w, h,
                                p->lr_tolerance, st),
               "lr_finish");
    if (p->discontinuity) { /* 8b. depth-discontinuity adjustment (cross.h), shifted range */
        LAUNCH(launch_cross_adjust(s->disp, a.cost_vol, w, h, p->min_disparity, D, s->adjusted,
                                   st),
               "cross adjust");
        LAUNCH(cudaMemcpyAsync(s->disp, s->adjusted, (size_t)w * h * sizeof(int16_t),
                               cudaMemcpyDeviceToDevice, st),
               "cross adjust copy");
        mark(s, "lr+discontinuity");
    }
    if (s->shift && !s->nested) { /* both maps shifted back (disparity.h) */
        if (!p->discontinuity)
            mark(s, "lr");
        LAUNCH(launch_unshift(s->disp, p->lr_check ? s->disp_right : NULL, s->conf, w, h,
                              s->shift, st),
               "unshift");
        mark(s, "unshift");
    }
    /* 9. the post-filters: speckle, region voting, interpolation, temporal, fill
     * (postfilter.h; settings in device memory) */
    LAUNCH(launch_postfilter(&s->post, s->disp, s->conf, p->lr_check ? s->disp_right : NULL,
                             s->grey[0], p->min_disparity - s->shift, /* shifted back */
                             p->num_disparities, &p->post, w, h, st),
           "postfilter");
    mark(s, "postfilter");
    /* the results to wherever this frame's descriptor says (result slot, colour image) */
    if (s->nested)
        return STEREO_OK;
    LAUNCH(launch_publish(s->d_desc, s->disp, p->lr_check ? s->disp_right : NULL, s->conf,
                          s->grey[0], rectified_right(s), w, h, st),
           "publish");
    mark(s, "median+lr+publish");
    return STEREO_OK;
}

/* Captures run_kernels into a graph (rebuilt when the input format changes). */
stereo_status build_graph(stage_cuda *s, char *err, size_t errlen)
{
    if (s->graph_exec) {
        cudaGraphExecDestroy(s->graph_exec);
        cudaGraphDestroy(s->graph);
        s->graph_exec = NULL;
        s->graph = NULL;
    }
    int profile = s->profile;
    s->profile = 0; /* no events inside the graph */
    CUDA_TRY(cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal));
    stereo_status st = run_kernels(s, err, errlen);
    s->profile = profile;
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(s->stream, &g);
    if (st != STEREO_OK) {
        if (g)
            cudaGraphDestroy(g);
        return st;
    }
    if (e != cudaSuccess)
        return cuda_fail(err, errlen, "cudaStreamEndCapture", e, __FILE__, __LINE__);
    s->graph = g;
#if CUDART_VERSION >= 12000
    CUDA_TRY(cudaGraphInstantiate(&s->graph_exec, g, 0));
#else /* CUDA 11.x (JetPack 5) */
    CUDA_TRY(cudaGraphInstantiate(&s->graph_exec, g, NULL, NULL, 0));
#endif
    return STEREO_OK;
}

/* ---- a frame -------------------------------------------------------------------------------- */

/* Where a caller's image lives, for the copy it needs (or not). */
static cudaMemoryType memory_type(const void *ptr)
{
    cudaPointerAttributes attr;
    cudaMemoryType t = cudaMemoryTypeHost;
    if (cudaPointerGetAttributes(&attr, ptr) == cudaSuccess)
        t = attr.type == cudaMemoryTypeUnregistered ? cudaMemoryTypeHost : attr.type;
    cudaGetLastError(); /* an unregistered host pointer is not an error */
    return t;
}

/* Copies a view (in memory of type t, memory_type) into the stage's input buffer and points
 * the descriptor at it. */
static stereo_status upload(stage_cuda *s, int i, const stereo_image *im, cudaMemoryType t,
                            frame_desc *d, char *err, size_t errlen)
{
    size_t row = (size_t)im->width * stereo_pixfmt_bytes(im->format);
    cudaMemcpyKind kind = t == cudaMemoryTypeDevice || t == cudaMemoryTypeManaged
                              ? cudaMemcpyDeviceToDevice
                              : cudaMemcpyHostToDevice;
    CUDA_TRY(cudaMemcpy2DAsync(s->in[i], row, im->data, im->pitch, row, im->height, kind,
                               s->stream));
    d->in[i] = s->in[i];
    d->pitch[i] = row;
    return STEREO_OK;
}

/* The graph bakes in the input pixel format: rebuild it when that changes. */
static stereo_status check_format(stage_cuda *s, stage_cuda_views views, char *err,
                                  size_t errlen)
{
    for (int i = 1; i < s->nv; i++)
        if (views[i]->format != views[0]->format) {
            if (s->nv == 2)
                snprintf(err, errlen, "left and right images must have the same pixel format");
            else
                snprintf(err, errlen, "view %d image: every view must have the reference's "
                         "pixel format", i);
            return STEREO_ERR_PARAM;
        }
    if (s->in_fmt != views[0]->format || !s->graph_exec) {
        s->in_fmt = views[0]->format;
        return build_graph(s, err, errlen);
    }
    return STEREO_OK;
}

/* Starts a frame: refused while another is in flight; returns the cleared staging descriptor
 * (0: the synchronous path, 1 + slot: a result slot of the asynchronous path). */
static stereo_status begin_frame(stage_cuda *s, stage_cuda_views views, int index,
                                 frame_desc **d, char *err, size_t errlen)
{
    if (s->in_flight) {
        snprintf(err, errlen, "a submitted frame is still in flight: call stereo_wait first");
        return STEREO_ERR_PARAM;
    }
    stereo_status st = check_format(s, views, err, errlen);
    *d = &s->h_desc[index];
    memset(*d, 0, sizeof **d);
    return st;
}

stereo_status stage_cuda_upload(stage_cuda *s, stage_cuda_views views, char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    frame_desc *d; /* synchronous path: results stay in the stage's device buffers */
    stereo_status st = begin_frame(s, views, 0, &d, err, errlen);
    if (st != STEREO_OK)
        return st;
    for (int i = 0; i < s->nv; i++)
        if ((st = upload(s, i, views[i], memory_type(views[i]->data), d, err, errlen)) !=
            STEREO_OK)
            return st;
    CUDA_TRY(cudaMemcpyAsync(s->d_desc, d, sizeof *d, cudaMemcpyHostToDevice, s->stream));
    return STEREO_OK;
}

/* The injected kernel fault (STEREO_CUDA_FAULT=frame:N): a trap, which like a real fault
 * (an illegal address) is sticky: every later call in the context fails. */
static __global__ void k_fault(void) { __trap(); }

/* Enqueues the frame's kernels: the graph, or kernel by kernel with events when profiling. */
static stereo_status enqueue_frame(stage_cuda *s, char *err, size_t errlen)
{
    stereo_status st = STEREO_OK;
    if (s->profile)
        st = run_kernels(s, err, errlen);
    else
        CUDA_TRY(cudaGraphLaunch(s->graph_exec, s->stream));
    if (st == STEREO_OK && ++s->frames_enqueued == s->fault_frame) {
        k_fault<<<1, 1, 0, s->stream>>>();
        CUDA_TRY(cudaGetLastError());
    }
    return st;
}

static void read_profile(stage_cuda *s)
{
    for (int i = 0; i < s->n_ev; i++)
        cudaEventElapsedTime(&s->stage_ms[i], s->ev[i], s->ev[i + 1]);
}

stereo_status stage_cuda_replay(stage_cuda *s, float *ms, char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    stereo_status st;
    cudaEvent_t t0 = s->frame_ev[0], t1 = s->frame_ev[1];
    CUDA_TRY(cudaEventRecord(t0, s->stream));
    if ((st = enqueue_frame(s, err, errlen)) != STEREO_OK)
        return st;
    CUDA_TRY(cudaEventRecord(t1, s->stream));
    CUDA_TRY(cudaEventSynchronize(t1));
    if (s->profile)
        read_profile(s);
    CUDA_TRY(cudaEventElapsedTime(ms, t0, t1));
    return STEREO_OK;
}

stereo_status stage_cuda_process(stage_cuda *s, stage_cuda_views views,
                                 int16_t *disp, int16_t *disp_right, uint8_t *conf,
                                 uint8_t *rect_left, uint8_t *rect_right, char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    const stereo_params *p = &s->p;
    size_t n = (size_t)p->width * p->height;
    stereo_status st;
    if ((st = stage_cuda_upload(s, views, err, errlen)) != STEREO_OK ||
        (st = enqueue_frame(s, err, errlen)) != STEREO_OK)
        return st;
    CUDA_TRY(cudaMemcpyAsync(disp, s->disp, n * 2, cudaMemcpyDeviceToHost, s->stream));
    if (disp_right)
        CUDA_TRY(cudaMemcpyAsync(disp_right, s->disp_right, n * 2, cudaMemcpyDeviceToHost,
                                 s->stream));
    if (conf && s->conf)
        CUDA_TRY(cudaMemcpyAsync(conf, s->conf, n, cudaMemcpyDeviceToHost, s->stream));
    if (rect_left)
        CUDA_TRY(cudaMemcpyAsync(rect_left, s->grey[0], n, cudaMemcpyDeviceToHost, s->stream));
    if (rect_right)
        CUDA_TRY(cudaMemcpyAsync(rect_right, rectified_right(s), n, cudaMemcpyDeviceToHost,
                                 s->stream));
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    if (s->profile)
        read_profile(s);
    return STEREO_OK;
}

stereo_status stage_cuda_set_table(stage_cuda *s, const uint8_t *table, char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    if (s->p.cost != STEREO_COST_MI || !s->cost_table) {
        snprintf(err, errlen, "set_table: the stage's cost is %s, not mi",
                 stereo_cost_to_str(s->p.cost));
        return STEREO_ERR_PARAM;
    }
    if (s->in_flight) {
        snprintf(err, errlen, "a submitted frame is still in flight: call stereo_wait first");
        return STEREO_ERR_PARAM;
    }
    /* ordered before the next frame's kernels on the stage's stream; from pageable memory the
     * call returns once the table has been staged, so the caller may reuse its buffer */
    CUDA_TRY(cudaMemcpyAsync(s->cost_table, table, table_bytes(&s->p), cudaMemcpyHostToDevice,
                             s->stream));
    return STEREO_OK;
}

stereo_status stage_cuda_set_postfilter(stage_cuda *s, const stereo_postfilter *f, int clear,
                                        char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    if (s->in_flight) {
        snprintf(err, errlen, "a submitted frame is still in flight: call stereo_wait first");
        return STEREO_ERR_PARAM;
    }
    /* region voting's and the interpolation's kernels are in the graph only while they are on:
     * capture it again */
    const int regraph =
        (f->vote != s->p.post.vote || f->interp != s->p.post.interp) && s->graph_exec;
    CUDA_TRY(postfilter_cuda_set(&s->post, f, clear, s->p.width, s->p.height, s->stream));
    s->p.post = *f;
    return regraph ? build_graph(s, err, errlen) : STEREO_OK;
}

void stage_cuda_set_profiling(stage_cuda *s, int on) { s->profile = on; }

int stage_cuda_profile(const stage_cuda *s, const char **names, float *ms, int max)
{
    int n = s->n_ev < max ? s->n_ev : max;
    for (int i = 0; i < n; i++) {
        names[i] = s->ev_name[i];
        ms[i] = s->stage_ms[i];
    }
    return n;
}

stereo_status stage_cuda_colorize(stage_cuda *s, int colormap, int lo, int hi, uint8_t *rgba,
                                  size_t pitch, char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    const stereo_params *p = &s->p;
    size_t row = (size_t)p->width * 4;
    if ((unsigned)colormap >= COLORMAP_COUNT || pitch < row || pitch % 4) {
        snprintf(err, errlen, "colorize: bad colour map %d or pitch %zu", colormap, pitch);
        return STEREO_ERR_PARAM;
    }
    if (!s->rgba)
        CUDA_TRY(cudaMalloc((void **)&s->rgba, row * p->height));
    CUDA_TRY(launch_colormap(s->disp, p->width, p->height, lo, hi, s->lut + 768 * colormap,
                             s->rgba, row, s->stream));
    CUDA_TRY(cudaMemcpy2DAsync(rgba, pitch, s->rgba, row, row, p->height, cudaMemcpyDeviceToHost,
                               s->stream));
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    return STEREO_OK;
}

/* ---- the asynchronous path: managed frames in, managed results out ------------------------ */

stereo_status stage_cuda_frame_alloc(stage_cuda *s, size_t bytes, void **out, char *err,
                                     size_t errlen)
{
    *out = NULL;
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (bytes == 0 || bytes > free_b / 2) {
        snprintf(err, errlen, "frame of %zu bytes: %s (%.0f MB of device memory free)", bytes,
                 bytes ? "more than half the free device memory" : "empty", free_b / 1e6);
        return STEREO_ERR_NOMEM;
    }
    if (s->pinned_frames) /* copied in at submit (upload), by DMA from page-locked memory */
        CUDA_TRY(cudaHostAlloc(out, bytes, cudaHostAllocDefault));
    else /* attached to the host: the capture thread may write it until it is submitted */
        CUDA_TRY(cudaMallocManaged(out, bytes, cudaMemAttachHost));
    return STEREO_OK;
}

void stage_cuda_frame_free(stage_cuda *s, void *frame)
{
    green_scope in_ctx(s);
    if (s->pinned_frames)
        cudaFreeHost(frame);
    else
        cudaFree(frame);
}

stereo_status stage_cuda_submit(stage_cuda *s, stage_cuda_views views, int colormap, int lo,
                                int hi, char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    int k = s->next_slot;
    frame_desc *d;
    stereo_status st = begin_frame(s, views, 1 + k, &d, err, errlen);
    if (st != STEREO_OK)
        return st;
    stage_cuda_views im = views;
    for (int i = 0; i < s->nv; i++) {
        s->attached[i] = NULL;
        cudaMemoryType t = memory_type(im[i]->data);
        if (t == cudaMemoryTypeManaged) {
            /* zero copy: the kernels read the frame in place, attached to this stream while the
             * frame is in flight (a Jetson has no concurrent managed access) */
            CUDA_TRY(cudaStreamAttachMemAsync(s->stream, (void *)im[i]->data, 0,
                                              cudaMemAttachSingle));
            s->attached[i] = (void *)im[i]->data;
            d->in[i] = im[i]->data;
            d->pitch[i] = im[i]->pitch;
        } else if (t == cudaMemoryTypeDevice) {
            d->in[i] = im[i]->data;
            d->pitch[i] = im[i]->pitch;
        } else if ((st = upload(s, i, im[i], t, d, err, errlen)) != STEREO_OK) {
            return st;
        }
    }
    /* the result slot: attached to the stream while written, to the host afterwards */
    void *outs[6] = {s->slot[k].disp, s->slot[k].right, s->slot[k].conf, s->slot[k].rgba,
                     s->slot[k].rect[0], s->slot[k].rect[1]};
    for (int i = 0; i < 6; i++)
        if (outs[i])
            CUDA_TRY(cudaStreamAttachMemAsync(s->stream, outs[i], 0, cudaMemAttachSingle));
    d->disp_out = s->slot[k].disp;
    d->right_out = s->slot[k].right;
    d->conf_out = s->slot[k].conf;
    d->rgba_out = s->slot[k].rgba;
    d->rect_out[0] = s->slot[k].rect[0];
    d->rect_out[1] = s->slot[k].rect[1];
    d->rgba_pitch = (size_t)s->p.width * 4;
    d->lut = s->lut + 768 * ((unsigned)colormap < COLORMAP_COUNT ? colormap : 0);
    d->color_lo = lo;
    d->color_span = hi - lo;
    CUDA_TRY(cudaMemcpyAsync(s->d_desc, d, sizeof *d, cudaMemcpyHostToDevice, s->stream));
    if ((st = enqueue_frame(s, err, errlen)) != STEREO_OK)
        return st;
    for (int i = 0; i < s->nv; i++)
        if (s->attached[i])
            CUDA_TRY(cudaStreamAttachMemAsync(s->stream, s->attached[i], 0, cudaMemAttachHost));
    for (int i = 0; i < 6; i++)
        if (outs[i])
            CUDA_TRY(cudaStreamAttachMemAsync(s->stream, outs[i], 0, cudaMemAttachHost));
    CUDA_TRY(cudaEventRecord(s->done, s->stream));
    s->in_flight = 1;
    s->last_slot = k;
    s->next_slot = k ^ 1;
    return STEREO_OK;
}

stereo_status stage_cuda_wait(stage_cuda *s, stereo_result *out, char *err, size_t errlen)
{
    green_scope in_ctx(s);
    if (!in_ctx.ok)
        return in_ctx.fail(err, errlen);
    if (!s->in_flight) {
        snprintf(err, errlen, "no submitted frame to wait for");
        return STEREO_ERR_PARAM;
    }
    s->in_flight = 0;
    CUDA_TRY(cudaEventSynchronize(s->done));
    if (s->profile)
        read_profile(s);
    int k = s->last_slot;
    out->disparity = s->slot[k].disp;
    out->disparity_right = s->slot[k].right;
    out->confidence = s->slot[k].conf;
    out->rgba = s->slot[k].rgba;
    out->rgba_pitch = (size_t)s->p.width * 4;
    out->rectified[0] = s->slot[k].rect[0];
    out->rectified[1] = s->slot[k].rect[1];
    return STEREO_OK;
}
