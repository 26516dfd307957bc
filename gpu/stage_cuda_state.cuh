/* SPDX-License-Identifier: Apache-2.0 */
/* stage_cuda_state.cuh — the CUDA stage's state, shared by its two files: stage_cuda.cu (the
 * per-frame kernel sequence, its graph and a frame's entry points) and stage_cuda_create.cu
 * (create and destroy: the green context, the buffers, the aggregation design). Internal to
 * the CUDA backend: stereo.c sees stage_cuda.h only. */
#ifndef STEREO_STAGE_CUDA_STATE_CUH
#define STEREO_STAGE_CUDA_STATE_CUH

#include <stdio.h>

#include "band.h"
#include "launch.cuh"
#include "postfilter.h"
#include "stage_cuda.h"
#include "stereo_math.h"

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
    uint8_t *cross_out;            /* cross 1..CROSS_TILE_CAP (cross.h 4b): the aggregated
                                      volume, w * h * D; longer arms: */
    uint32_t *cross_arms;          /* each pixel's arms, w * h, */
    uint16_t *cross_H;             /* and the row sums, w * h * D (cost_vol in place) */
    int16_t *adjusted;             /* discontinuity (cross.h 8b): the adjusted map, w * h */
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

/* Captures run_kernels into a graph (stage_cuda.cu): at create, and again when the input
 * format changes. */
stereo_status build_graph(stage_cuda *s, char *err, size_t errlen);

#endif
