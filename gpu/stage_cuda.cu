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
 */
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "block.h"
#include "colormap.h"
#include "cuda_check.cuh"
#include "launch.cuh"
#include "multiview.h"
#include "postfilter.h"
#include "stage_cuda.h"
#include "stereo_math.h"
#include "transform.h"

#if CUDART_VERSION >= 12040
/* only for the driver API's types: its functions come through the runtime's entry-point lookup
 * (driver_symbol), so the programs link the static runtime alone and still start (and fall back
 * to the CPU) on a machine without a driver */
#include <cuda.h>

typedef struct {
    decltype(&cuInit) init;
    decltype(&cuDeviceGet) device_get;
    decltype(&cuDeviceGetDevResource) device_resource;
    decltype(&cuDevSmResourceSplitByCount) split_sms;
    decltype(&cuDevResourceGenerateDesc) generate_desc;
    decltype(&cuGreenCtxCreate) green_create;
    decltype(&cuCtxFromGreenCtx) from_green;
    decltype(&cuGreenCtxDestroy) green_destroy;
    decltype(&cuCtxPushCurrent) push;
    decltype(&cuCtxPopCurrent) pop;
    decltype(&cuGetErrorString) error_string;
} driver_api;
#endif

/* The costs the walk evaluates by table lookup over grey values (-DSGM_TABLE=1, sgm_walk.cuh):
 * ad's fixed table, and mi's, which stereo.c computes on the host for every frame
 * (stage_cuda_set_table). */
static int cost_uses_table(stereo_cost c) { return c == STEREO_COST_AD || c == STEREO_COST_MI; }
/* The bytes of the table buffer: ad's one table, mi's stereo_mi_tables(mi_tiles) (mi.h) */
static size_t table_bytes(const stereo_params *p)
{
    return (p->cost == STEREO_COST_MI ? (size_t)stereo_mi_tables(p->mi_tiles) : 1) * 256 * 256;
}
/* The costs the walk evaluates on 64-bit words per pixel (the census path, sgm_walk.cuh
 * word_cost): census, and bt's packed I, lo, hi (launch_bt_words). */
static int cost_uses_words(stereo_cost c)
{
    return stereo_cost_has_census(c) || c == STEREO_COST_BT;
}
/* The costs that have no walk of their own (sgm_walk.cuh): the volume walk reads them from the
 * cost volume, built first by launch_cost_volume, whatever STEREO_CUDA_COST_VOLUME says. */
static int cost_needs_volume(stereo_cost c) { return c == STEREO_COST_ADCENSUS; }
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

#define MAX_PROFILE 16

#define MV STEREO_MAX_VIEWS

struct stage_cuda {
    stereo_params p;
    int nv;                  /* views: 2 for the pair, else p.views (multiview.h) */
    int have_maps;
    int src_w[MV], src_h[MV]; /* each view's camera image size (its map's source size) */
    cudaStream_t stream;
    /* device buffers, per view: [0] the reference (left), [1] view 1 (right), [2..] more */
    uint8_t *in[MV];          /* camera images copied from host memory (tightly packed rows) */
    stereo_pixfmt in_fmt;     /* the format the graph was built for (every view's) */
    int16_t *xy[MV];
    uint16_t *frac[MV];
    uint8_t *grey[MV], *valid[MV];
    int shift;                /* a negative minimum disparity -m: m (disparity.h); grey[1] and
                                 valid[1] hold the shifted right view, p.min_disparity is 0 */
    uint8_t *right_rect;      /* with shift: the rectified right view itself (the results') */
    uint8_t *rank[MV];        /* inside rank_alloc, after RANK_PAD_FRONT bytes */
    uint8_t *rank_alloc[MV];
    uint64_t *census[MV];
    /* aggregation: per-direction byte volumes (sgm_dirs.cu) when L fits a byte and they fit in
     * memory, else the branches' 16-bit partial sums (sgm.cu) */
    int agg_dirs;
    int agg_sweep;                 /* the sweep design (sgm_sweep.cu): sweep_S, ring, sync */
    uint32_t *sweep_S, *sweep_ring;
    int *sweep_sync;
    int agg_strips;                /* the strip design (sgm_strips.cu), with agg_dirs: L8 holds
                                      directions 0 and 1 only */
    sgm_strips_state strips;
    int bm;                        /* method bm: the box sums in S[0], their vertical pass in
                                      S[1] (block.h, launch_block_sum), no aggregation */
    uint8_t *cost_vol;             /* the cost volume, computed first and read by the volume
                                      walk (every cost but rank; more views always;
                                      STEREO_CUDA_COST_VOLUME=0 / 1 overrides for the pair) */
    uint8_t *side_pos, *side_neg;  /* more views, rule sides: the two sides' means
                                      (launch_mview_cost's scratch), in the bytes of the
                                      aggregation's volumes, which are written only after */
    int sms;                       /* the SMs the stage runs on (sgm_args.sms): its green
                                      context's, else the device's */
    uint8_t *L8;                        /* paths volumes of w * h * D bytes */
    /* the coarse-to-fine mode (band.h, band.cu): the coarse level's stage, which runs inside
     * this one's frame on its stream (nested: its grey images come from k_band_half, nothing
     * is published), and the band's buffers */
    stage_cuda *coarse;
    int nested;
    band_args band;
    uint16_t *S[SGM_MAX_BRANCHES];      /* the aggregation branches' partial sums (sgm.cu) */
    int branches;
    cudaStream_t branch_stream[SGM_MAX_BRANCHES]; /* [0] is `stream` */
    cudaEvent_t fork, join[SGM_MAX_BRANCHES];
    int16_t *disp, *disp_right;          /* final maps */
    int16_t *raw, *raw_right;            /* before the median (only with median on) */
    uint8_t *conf;
    postfilter_cuda post;    /* stage 9's settings, scratch and temporal state (postfilter.h) */
    uint8_t *cost_table;     /* table costs (cost_uses_table): 256 x 256 (mi: one per tile and
                                row parity, table_bytes), else NULL */
    uint32_t *ad_hist;       /* cost adcensus: the histograms (512) and the grey mappings, */
    uint8_t *ad_lut;         /* 256 per other view (view v's at 256 (v - 1); the pair: one) */
    uint8_t *lut;            /* 3 colour maps x 256 x RGB */
    uint8_t *rgba;           /* colour image for stage_cuda_colorize */
    /* per-frame pointers (launch.cuh): the graph reads d_desc; h_desc[0] stages the synchronous
     * path's, h_desc[1 + slot] each result slot's (pinned, so the copy is truly asynchronous) */
    frame_desc *d_desc, *h_desc;
    /* asynchronous path: two result slots in managed memory (double buffering), the frames the
     * frame in flight has attached to the stream, and the event that ends it */
    struct {
        int16_t *disp, *right;
        uint8_t *conf, *rgba, *rect[2];
    } slot[2];
    int next_slot, in_flight, last_slot;
    void *attached[MV];
    cudaEvent_t done;
    /* frames from stage_cuda_frame_alloc: managed memory read in place (no concurrent managed
     * access: every Jetson, one physical memory), or pinned host memory copied to the device
     * at submit (a discrete GPU, where CPU writes to managed frames migrate pages back and
     * forth; STEREO_CUDA_FRAMES=managed|pinned overrides, for measurements) */
    int pinned_frames;
    /* the captured per-frame sequence */
    cudaGraph_t graph;
    cudaGraphExec_t graph_exec;
    /* profiling */
    int profile;
    cudaEvent_t ev[MAX_PROFILE + 1];  /* stage marks ev[0..n_ev] */
    cudaEvent_t frame_ev[2];          /* around a whole frame (stage_cuda_replay) */
    const char *ev_name[MAX_PROFILE];
    int n_ev;
    float stage_ms[MAX_PROFILE];
    /* fault injection for the tests (STEREO_CUDA_FAULT, stage_cuda.h): the buffer whose
     * allocation asks for more than the device has, and the frame whose kernels trap */
    char fault_alloc[32];
    long fault_frame, frames_enqueued;
#if CUDART_VERSION >= 12040
    /* the green context (p->sms > 0), else NULL: the stage runs in the caller's context */
    driver_api drv;
    CUgreenCtx green;
    CUcontext ctx;  /* green, as a context to push */
#endif
};

/* ---- the green context (p->sms > 0) ------------------------------------------------------- */

/* The stage's green context current on the calling thread from construction to the end of the
 * enclosing scope, the thread's own context current again after it; nothing without one. */
struct green_scope {
    const stage_cuda *pushed = nullptr;
    bool ok = true;
    explicit green_scope(const stage_cuda *s)
    {
#if CUDART_VERSION >= 12040
        if (s->ctx) {
            ok = s->drv.push(s->ctx) == CUDA_SUCCESS;
            pushed = ok ? s : nullptr;
        }
#endif
    }
    ~green_scope()
    {
#if CUDART_VERSION >= 12040
        CUcontext popped;
        if (pushed)
            pushed->drv.pop(&popped);
#endif
    }
    stereo_status fail(char *err, size_t errlen) const
    {
        snprintf(err, errlen, "sms: cannot make the stage's green context current");
        return STEREO_ERR_CUDA;
    }
};

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
    if (s->shift && !s->nested) { /* both maps shifted back (disparity.h) */
        mark(s, "lr");
        LAUNCH(launch_unshift(s->disp, p->lr_check ? s->disp_right : NULL, s->conf, w, h,
                              s->shift, st),
               "unshift");
        mark(s, "unshift");
    }
    /* 9. the post-filters: speckle, temporal, fill (postfilter.h; settings in device memory) */
    LAUNCH(launch_postfilter(&s->post, s->disp, s->conf, w, h, st), "postfilter");
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
static stereo_status build_graph(stage_cuda *s, char *err, size_t errlen)
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
            if (s->nv > 2 || (cost_needs_volume(p->cost) && !s->bm))
                want_vol = 1;
            else if (s->bm) /* bm's box sums compute the pair's costs on the fly */
                want_vol = 0;
            if (want_vol)
                DEV_ALLOC(s->cost_vol, vol);
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
    CUDA_TRY(postfilter_cuda_set(&s->post, f, clear, s->p.width, s->p.height, s->stream));
    s->p.post = *f;
    return STEREO_OK;
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
