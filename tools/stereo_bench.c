/* SPDX-License-Identifier: Apache-2.0 */
/* stereo-bench — GPU timing of the CUDA stage (a benchmark, not a test).
 *
 *   stereo-bench [--size WxH --disparities D --paths P [--cost C]] [--runs N]
 *                [--frames N] [--csv FILE] [--sms N]
 *
 * The cost, the paths and the post-filters are the stage's defaults (stereo_params_default:
 * adcensus, 4 paths, speckle removal) unless --cost, --paths or --post say others, in both
 * modes, so that the bare stage and the live app (tools/gpu-check.sh) time the same work.
 *   stereo-bench --async [--backend cpu|cuda] [--cost NAME|all] [--method sgm|bm] [--block N] ...
 *
 * --baselines 1,B2,... [--combine sides|sum] (both modes) matches more views of the generated
 * scene (the camera at each ratio, stereo.h), one map each; without --size, 640x480 D128.
 * Without --size it runs the four issue configurations: 640x480 D128 8 paths, 1024x440 D128
 * 4 paths, 1280x960 D128 8 paths, 1920x1080 D256 8 paths; always with rectification (a generated
 * similarity map), subpixel, LR check and median, from YUYV camera frames.
 *
 * For each: 4 different generated frame pairs rotate (so repeated runs do not replay one input
 * from the cache); each is uploaded (not timed), then the frame's kernels run and are timed with
 * CUDA events around the graph: median of --runs (default 200) after 20 warm-up runs. Per-stage
 * times come from a second series with kernel-by-kernel launches and events between stages.
 * Bytes per frame are those the design moves through device memory (counted per stage below);
 * GB/s is set against a measured device-to-device copy (bytes read + written).
 * --frames N runs N untimed frames and exits (for profilers: ncu, compute-sanitizer).
 *
 * --async measures instead what the live app gets from the stage: its sustained throughput
 * through the public asynchronous API (stereo.h: stereo_frame_alloc, stereo_submit,
 * stereo_wait; one frame in flight, the results double-buffered), with the live app's
 * defaults (stereo_params_default, tuned penalties, D 64 and 640x480 unless given; turbo colour
 * map; no maps) on the generated scene the app's synth source renders (grey frames), rendered
 * beforehand into ASYNC_PAIRS frame pairs that rotate as the app's pool slots do. --runs N
 * frames (default 200) are submitted and waited for back to back; it reports
 *   fps        (N - 1) / (time the last result came out - time the first did)
 *   stage ms   submit -> wait of each frame: median, p95 (nearest rank)
 * the same definitions as stereo-live's summary, so `stereo-live-headless --synth-prerender K
 * --set synth.fps=0 ...` on the same size and options is comparable (tools/gpu-check.sh runs
 * both). --rewrite copies each pair into its frame before submitting it, as the app's capture
 * thread does (in this thread: counted in the fps, not in the stage time), to see what the
 * CPU's writes into managed memory cost the stage. --backend cpu runs it without a GPU.
 * --json FILE writes the result as JSON. --cost all (with --async) runs every cost (rank, census,
 * ad, bt, mi) with SGM and then with block matching (--block N, default 9), one line each.
 * Cost mi (gpu/mi.h; on CUDA the levels run on the GPU, the tables on the host, stage_cpu.c):
 * only with --async (the timed mode replays the stage's graph, and mi needs the host's table
 * before every frame); it also prints
 * how many frames ran the MI hierarchy and its median time as a share of the median frame (JSON:
 * "mi"). Without --mi-warm every frame runs it (the stage's default); with --mi-warm the live
 * app's policy: the previous frame's disparity as the initial one, the hierarchy only on the
 * first frame and after a collapse of the valid fraction.
 *
 * --sms N (both modes) runs the stage on N SMs, a CUDA green context (stereo_params.sms): a
 * Jetson's SM count on a big GPU (Orin AGX 16, Nano 8; not its clock or memory bandwidth). The
 * device line then says how many SMs the stage really got (the hardware may round N up).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "band.h"
#include "colormap.h"
#include "cross.h"
#include "mapgen.h"
#include "outpath.h"
#include "parse_num.h"
#include "postfilter.h"
#include "stage_cuda.h"
#include "synth.h"
#include "version.h"

#define N_INPUTS 4
#define WARMUP 20
#define ASYNC_PAIRS 6 /* frame pairs rotated in --async: the live app's pool has 6 slots */

typedef struct {
    int w, h, D, paths;
    stereo_cost cost;
    stereo_method method;   /* sgm (0) unless given */
    int block;              /* bm: box side, 0 = the default 9 */
    int mi_warm;            /* --async, cost mi: stereo_params.mi_warm (--mi-warm) */
    int views;              /* --baselines: 2 + the views beyond view 1 (0 = the pair) */
    int baseline[STEREO_MAX_VIEWS];  /* 16ths, [0] = 0, [1] = 16 (stereo_params.baseline) */
    stereo_combine combine;
    int band;               /* --band W: the coarse-to-fine mode (band.h), 0 = off */
    int post;               /* --post: POST_SPECKLE | POST_FILL | POST_TEMPORAL | POST_VOTE |
                               POST_INTERP (postfilter.h) */
    int dmin;               /* --min-disparity (stereo_params.min_disparity), 0 unless given */
    int layout;             /* --layout: the generated scene's (synth.h), objects by default */
    double contrast;        /* --contrast: its texture contrast, 0 = 1 */
    int cross;              /* --cross N: cross-based aggregation's arm cap (cross.h), 0 = off */
    int discontinuity;      /* --discontinuity: the depth-discontinuity adjustment (cross.h) */
} config;
enum { POST_SPECKLE = 1, POST_FILL = 2, POST_TEMPORAL = 4, POST_VOTE = 8, POST_INTERP = 16 };
#define N_POST 5
static const char *const post_names[N_POST] = {"speckle", "fill", "temporal", "vote", "interp"};

static const config issue_configs[] = {
    {640, 480, 128, 8, STEREO_COST_RANK, STEREO_METHOD_SGM, 0, 0, 0, {0}, STEREO_COMBINE_SIDES, 0, 0, 0, 0, 0, 0, 0},
    {1024, 440, 128, 4, STEREO_COST_RANK, STEREO_METHOD_SGM, 0, 0, 0, {0}, STEREO_COMBINE_SIDES, 0, 0, 0, 0, 0, 0, 0},
    {1280, 960, 128, 8, STEREO_COST_RANK, STEREO_METHOD_SGM, 0, 0, 0, {0}, STEREO_COMBINE_SIDES, 0, 0, 0, 0, 0, 0, 0},
    {1920, 1080, 256, 8, STEREO_COST_RANK, STEREO_METHOD_SGM, 0, 0, 0, {0}, STEREO_COMBINE_SIDES, 0, 0, 0, 0, 0, 0, 0},
};

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return v[n / 2];
}

/* Device-to-device copy bandwidth, bytes read + written per second (GB/s). */
static double copy_bandwidth(void)
{
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    if (cudaMalloc(&a, bytes) != cudaSuccess)
        return 0;
    if (cudaMalloc(&b, bytes) != cudaSuccess) {
        cudaFree(a);
        return 0;
    }
    cudaMemset(a, 1, bytes);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float t[11];
    for (int i = 0; i < 11; i++) {
        cudaEventRecord(e0, 0);
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&t[i], e0, e1);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * bytes / (median(t, 11) * 1e-3) / 1e9;
}

/* Bytes the design moves through device memory for one frame (see the kernels' comments).
 * design 1: the per-direction design (sgm_dirs.cu: every direction writes its L as one byte per
 * voxel, the sum+wta pass reads them all); 2: the sweep design (sgm_sweep.cu: the forward sweep
 * writes a 16-bit partial sum, the backward sweep reads it; each sweep reads the inputs once);
 * 0: the branch design (sgm.cu: 16-bit partial sums, 4 branches: each stored once, the other
 * directions read-modify-write, the final pass reads all four). */
enum { DESIGN_BRANCHES, DESIGN_DIRS, DESIGN_SWEEP };
static double frame_bytes(const config *c, int yuyv, int design)
{
    double n = (double)c->w * c->h, D = c->D, t = c->cost == STEREO_COST_CENSUS || c->cost == STEREO_COST_BT ? 8 : 1;
    double grey_rect = 2 * (n * (yuyv ? 2 : 1) + 6 * n + 2 * n); /* camera, maps, grey + valid */
    double transform = 2 * (n + t * n);
    double inputs = c->paths * (1 + 2 * t) * n; /* each direction reads both transforms + grey */
    int branches = c->paths - 1 < 4 ? c->paths - 1 : 4;
    const int dirs = design == DESIGN_DIRS;
    double aggregate = dirs ? c->paths * n * D + inputs
                            : branches * 2 * n * D + (c->paths - 1 - branches) * 4 * n * D + inputs;
    double wta = (dirs ? c->paths * n * D : branches * 2 * n * D) + 2 * n;
    if (design == DESIGN_SWEEP) {
        aggregate = 2 * n * D + 2 * (1 + 2 * t) * n;
        wta = 2 * n * D + 2 * n;
    }
    if (c->method == STEREO_METHOD_BM) { /* block.cu: V written, read; S written; S read */
        aggregate = 3 * 2 * n * D + 2 * (1 + 2 * t) * n;
        wta = 2 * n * D + 2 * n;
    }
    double right = 2 * n;
    double median_lr = 2 * 4 * n + 6 * n;
    /* more views (multiview.cu): each view's camera image, grey and transform; the combined cost
     * volume written once (sides: the two side means written and read back, and the volume
     * rewritten by the select pass), then the volume walk reads the volume instead of the
     * transforms (each direction once) */
    int nv = c->views > 2 ? c->views : 2;
    double views = 0;
    if (nv > 2) {
        double vol = n * D;
        views = (nv - 2) * (grey_rect + transform) / 2 + vol +
                (c->combine == STEREO_COMBINE_SIDES ? 2 * vol + 2 * vol + 2 * vol : 0);
        if (c->method != STEREO_METHOD_BM)
            views += c->paths * vol - inputs;
    }
    return grey_rect + transform + aggregate + wta + right + median_lr + views;
}

/* The stage parameters of a configuration: the defaults, with its D, paths and cost, on `sms`
 * SMs (0 = all). */
static void config_params(const config *c, stereo_backend backend, int sms, stereo_params *p)
{
    stereo_params_default(p, c->w, c->h);
    p->num_disparities = c->D;
    p->paths = c->paths;
    p->cost = c->cost;
    p->method = c->method;
    if (c->block)
        p->block = c->block;
    if (c->views > 2) {
        p->views = c->views;
        memcpy(p->baseline, c->baseline, sizeof p->baseline);
        p->combine = c->combine;
    }
    stereo_default_penalties(p->cost, p->rank_window, &p->p1, &p->p2);
    p->backend = backend;
    p->sms = sms;
    p->mi_warm = c->mi_warm;
    p->band = c->band;
    p->cross = c->cross;
    p->discontinuity = c->discontinuity;
    p->min_disparity = c->dmin;
    p->post.speckle_size = c->post & POST_SPECKLE ? POSTFILTER_SPECKLE_ON : 0; /* the default's */
    p->post.fill = !!(c->post & POST_FILL);
    p->post.temporal = !!(c->post & POST_TEMPORAL);
    p->post.vote = !!(c->post & POST_VOTE);
    p->post.interp = !!(c->post & POST_INTERP);
}

/* The SMs a stage asked for `sms` really gets (the hardware may round up), from a small stage
 * made for the purpose; 0 after printing why none can be made (too many, no green contexts). */
static int stage_sms(int sms)
{
    config small = {64, 32, 16, 4, STEREO_COST_RANK, STEREO_METHOD_SGM, 0, 0, 0, {0},
                    STEREO_COMBINE_SIDES, 0, 0, 0, 0, 0, 0, 0};
    stereo_params p;
    config_params(&small, STEREO_BACKEND_CUDA, sms, &p);
    stage_cuda *s;
    char err[512];
    if (stage_cuda_create(&p, NULL, &s, err, sizeof err) != STEREO_OK) {
        fprintf(stderr, "stereo-bench: %s\n", err);
        return 0;
    }
    int got = stage_cuda_sms(s);
    stage_cuda_destroy(s);
    return got;
}

/* "8 paths", "bm 9x9", with more views " 3v sides" after it: the method column of a line. */
static void method_label(const config *c, char *buf, size_t len)
{
    const int block = c->block ? c->block : 9; /* stereo_params_default's */
    if (c->method == STEREO_METHOD_BM)
        snprintf(buf, len, "bm %dx%d", block, block);
    else
        snprintf(buf, len, "%d paths", c->paths);
    if (c->band) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, " band %d", c->band);
    }
    if (c->cross) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, " cross %d", c->cross);
    }
    if (c->discontinuity) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, " +discontinuity");
    }
    for (int k = 0; k < N_POST; k++)
        if (c->post & 1 << k) {
            size_t l = strlen(buf);
            snprintf(buf + l, len - l, " +%s", post_names[k]);
        }
    if (c->views > 2) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, " %dv %s", c->views, stereo_combine_to_str(c->combine));
    }
}

/* Uploads the YUYV frames of views 0..nv-1 into the stage; 0, or -1 with err. */
static int upload_frame(stage_cuda *s, uint8_t *const *yuyv, int nv, const config *c, char *err,
                        size_t errlen)
{
    stereo_image im[STEREO_MAX_VIEWS];
    const stereo_image *views[STEREO_MAX_VIEWS];
    for (int v = 0; v < nv; v++) {
        im[v] = (stereo_image){yuyv[v], c->w, c->h, (size_t)c->w * 2, STEREO_PIX_YUYV};
        views[v] = &im[v];
    }
    return stage_cuda_upload(s, views, err, errlen) == STEREO_OK ? 0 : -1;
}

static int run_config(const config *c, int sms, int runs, int frames, double copy_gbs, FILE *csv)
{
    char err[512];
    stereo_params p;
    config_params(c, STEREO_BACKEND_CUDA, sms, &p);

    /* generated camera frames (YUYV: Y = the scene's grey, chroma flat) */
    synth_params sp = {.width = c->w, .height = c->h, .seed = 3, .layout = c->layout,
                       .contrast = c->contrast};
    if (synth_max_disparity(&sp) >= c->D)
        sp.max_disparity = c->D - 16 - (c->D - 16) % 12;
    synth *syn;
    if (synth_create(&sp, &syn, err, sizeof err)) {
        fprintf(stderr, "stereo-bench: %s\n", err);
        return 1;
    }
    size_t n = (size_t)c->w * c->h;
    const int nv = c->views > 2 ? c->views : 2;
    uint8_t *grey = malloc(n), *yuyv[N_INPUTS][STEREO_MAX_VIEWS];
    for (int i = 0; i < N_INPUTS; i++)
        for (int v = 0; v < nv; v++) {
            /* view v of the scene at its baseline ratio (0 the left, 1 the right view) */
            double b = v == 0 ? 0 : v == 1 ? 1 : c->baseline[v] / (double)STEREO_BASELINE_SCALE;
            if (synth_render_view(syn, 0.25 * i, b, grey, 1, (size_t)c->w, err, sizeof err)) {
                fprintf(stderr, "stereo-bench: %s\n", err);
                return 1;
            }
            yuyv[i][v] = malloc(2 * n);
            for (size_t k = 0; k < n; k++) {
                yuyv[i][v][2 * k] = grey[k];
                yuyv[i][v][2 * k + 1] = 128;
            }
        }
    synth_destroy(syn);
    free(grey);

    /* a similarity map per view: the pair's two, then slight variations for more views */
    stereo_map maps[STEREO_MAX_VIEWS];
    for (int v = 0; v < nv; v++)
        mapgen_similarity(&maps[v], c->w, c->h, c->w, c->h, v == 1 ? -0.0015 : 0.002 - 0.0005 * v,
                          v == 1 ? 0.998 : 1.003 - 0.001 * v, v == 1 ? -0.6 : 0.4 - 0.1 * v,
                          v == 1 ? 0.2 : -0.3 + 0.1 * v);
    stage_cuda *s;
    size_t free0 = 0, free1 = 0, total = 0; /* the stage's device memory: free before and after */
    cudaMemGetInfo(&free0, &total);
    if (stage_cuda_create(&p, maps, &s, err, sizeof err) != STEREO_OK) {
        fprintf(stderr, "stereo-bench: %dx%d D%d: %s\n", c->w, c->h, c->D, err);
        return 1;
    }
    cudaMemGetInfo(&free1, &total);
    int rc = 0;
    float *t = malloc(sizeof(float) * (size_t)(runs > 1 ? runs : 1));
    float stage_t[16][64];
    const char *names[16];
    int n_stages = 0, n_prof = 0;
    for (int i = 0; i < (frames > 0 ? frames : WARMUP + runs); i++) {
        float ms;
        if (upload_frame(s, yuyv[i % N_INPUTS], nv, c, err, sizeof err) ||
            stage_cuda_replay(s, &ms, err, sizeof err) != STEREO_OK) {
            fprintf(stderr, "stereo-bench: %s\n", err);
            rc = 1;
            goto done;
        }
        if (frames <= 0 && i >= WARMUP)
            t[i - WARMUP] = ms;
    }
    if (frames > 0)
        goto done;
    /* per-stage series */
    stage_cuda_set_profiling(s, 1);
    for (int i = 0; i < 64; i++) {
        float ms, sm[16];
        if (upload_frame(s, yuyv[i % N_INPUTS], nv, c, err, sizeof err) ||
            stage_cuda_replay(s, &ms, err, sizeof err) != STEREO_OK) {
            fprintf(stderr, "stereo-bench: %s\n", err);
            rc = 1;
            goto done;
        }
        n_stages = stage_cuda_profile(s, names, sm, 16);
        for (int k = 0; k < n_stages; k++)
            stage_t[k][n_prof] = sm[k];
        n_prof++;
    }
    {
        float frame_ms = median(t, runs);
        int design = DESIGN_BRANCHES; /* which one the stage chose: its profile marks say */
        for (int k = 0; k < n_stages; k++)
            design = strstr(names[k], "directions") ? DESIGN_DIRS
                     : strstr(names[k], "sweeps")   ? DESIGN_SWEEP
                                                    : design;
        double bytes = frame_bytes(c, 1, design);
        double gbs = bytes / (frame_ms * 1e-3) / 1e9;
        char how[32];
        method_label(c, how, sizeof how);
        printf("%4dx%-4d D%-3d %-7s %-6s  %7.3f ms  %7.1f fps  %7.1f MB/frame  %6.0f GB/s "
               "(%3.0f%% of copy)  |", c->w, c->h, c->D, how, stereo_cost_to_str(c->cost),
               frame_ms, 1e3 / frame_ms, bytes / 1e6, gbs, copy_gbs > 0 ? 100 * gbs / copy_gbs : 0);
        for (int k = 0; k < n_stages; k++)
            printf(" %s %.3f", names[k], median(stage_t[k], n_prof));
        printf(" | device memory %.0f MB\n", free0 > free1 ? (free0 - free1) / 1e6 : 0.0);
        if (csv) {
            fprintf(csv, "%d,%d,%d,%d,%s,%.4f,%.1f,%.0f", c->w, c->h, c->D, c->paths,
                    stereo_cost_to_str(c->cost), frame_ms, bytes / 1e6, gbs);
            for (int k = 0; k < n_stages; k++)
                fprintf(csv, ",%s=%.4f", names[k], median(stage_t[k], n_prof));
            fprintf(csv, "\n");
        }
    }
done:
    free(t);
    stage_cuda_destroy(s);
    for (int v = 0; v < nv; v++)
        mapgen_free(&maps[v]);
    for (int i = 0; i < N_INPUTS; i++)
        for (int v = 0; v < nv; v++)
            free(yuyv[i][v]);
    return rc;
}

/* ---- --async: the live app's path ----------------------------------------------------------- */

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank of sorted v[0..n-1]: the smallest value with at least q * n values <= it. */
static double rank_quantile(const double *v, int n, double q)
{
    int k = (int)ceil(q * n);
    return v[(k < 1 ? 1 : k > n ? n : k) - 1];
}

typedef struct {
    const config *c;
    const char *backend;
    int rewrite, frames;
    double fps, mean, median, p95, max;
    int mi;                      /* cost mi: the hierarchy's part */
    double mi_hierarchy_median;  /* ms, over the frames that ran it */
    uint64_t mi_restarts;
} bench_json;

/* --json (a file_writer for atomic_write_file) */
static int write_bench_json(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const bench_json *j = ctx;
    fprintf(f, "{\n  \"program\": \"stereo-bench --async\",\n  \"backend\": \"%s\",\n"
               "  \"width\": %d,\n  \"height\": %d,\n  \"disparities\": %d,\n"
               "  \"paths\": %d,\n  \"cost\": \"%s\",\n  \"rewrite\": %d,\n"
               "  \"frames\": %d,\n  \"fps\": %.3f,\n  \"stage_ms\": {\"mean\": %.4f, "
               "\"median\": %.4f, \"p95\": %.4f, \"max\": %.4f}",
            j->backend, j->c->w, j->c->h, j->c->D, j->c->paths, stereo_cost_to_str(j->c->cost),
            j->rewrite, j->frames, j->fps, j->mean, j->median, j->p95, j->max);
    if (j->mi)
        fprintf(f, ",\n  \"mi\": {\"warm\": %d, \"restarts\": %llu, "
                   "\"hierarchy_ms_median\": %.4f}",
                j->c->mi_warm, (unsigned long long)j->mi_restarts, j->mi_hierarchy_median);
    fprintf(f, "\n}\n");
    return 0;
}

static int run_async(const config *c, stereo_backend backend, int sms, int frames, int rewrite,
                     const char *json_path)
{
    char err[512];
    stereo_params p;
    config_params(c, backend, sms, &p);
    stereo_stage *s = NULL;
    synth *syn = NULL;
    uint8_t *frame[ASYNC_PAIRS][STEREO_MAX_VIEWS] = {{0}}, *host = NULL;
    double *ms = NULL, *hier = NULL;
    int rc = 1, done = 0, n_hier = 0;
    size_t n = (size_t)c->w * c->h;
    const int nv = c->views > 2 ? c->views : 2;
    if (stereo_create(&p, NULL, &s, err, sizeof err) != STEREO_OK) {
        fprintf(stderr, "stereo-bench: --async %dx%d D%d: %s\n", c->w, c->h, c->D, err);
        return 1;
    }
    synth_params sp = {.width = c->w, .height = c->h, .seed = 1}; /* as the app's synth source */
    if (synth_create(&sp, &syn, err, sizeof err) != 0) {
        fprintf(stderr, "stereo-bench: %s\n", err);
        goto out;
    }
    if (!(ms = malloc(sizeof *ms * (size_t)frames)) || !(hier = malloc(sizeof *hier * (size_t)frames)) ||
        (rewrite && !(host = malloc(nv * n * ASYNC_PAIRS)))) {
        fprintf(stderr, "stereo-bench: out of memory\n");
        goto out;
    }
    for (int i = 0; i < ASYNC_PAIRS; i++)
        for (int v = 0; v < nv; v++) {
            if (stereo_frame_alloc(s, n, (void **)&frame[i][v]) != STEREO_OK) {
                fprintf(stderr, "stereo-bench: frames: %s\n", stereo_error(s));
                goto out;
            }
            /* the scene at 30 frames per second of scene time, as --synth-prerender renders
             * it; view v at its baseline ratio (0 the left, 1 the right view) */
            double b = v == 0 ? 0 : v == 1 ? 1 : c->baseline[v] / (double)STEREO_BASELINE_SCALE;
            if (synth_render_view(syn, i / 30.0, b, frame[i][v], 1, (size_t)c->w, err,
                                  sizeof err) != 0) {
                fprintf(stderr, "stereo-bench: %s\n", err);
                goto out;
            }
            if (host)
                memcpy(host + n * (nv * i + v), frame[i][v], n);
        }
    int64_t first = 0, last = 0;
    for (; done < frames; done++) {
        int k = done % ASYNC_PAIRS;
        stereo_image im[STEREO_MAX_VIEWS];
        for (int v = 0; v < nv; v++) {
            if (host)
                memcpy(frame[k][v], host + n * (nv * k + v), n);
            im[v] = (stereo_image){frame[k][v], c->w, c->h, (size_t)c->w, STEREO_PIX_GREY8};
        }
        stereo_result res;
        int64_t t0 = monotonic_ns();
        stereo_status st = stereo_submit_views(s, im, nv, COLORMAP_TURBO);
        if (st == STEREO_OK)
            st = stereo_wait(s, &res);
        int64_t t1 = monotonic_ns();
        if (st != STEREO_OK) {
            fprintf(stderr, "stereo-bench: frame %d: %s\n", done + 1, stereo_error(s));
            goto out;
        }
        ms[done] = (double)(t1 - t0) * 1e-6;
        stereo_mi_info mi;
        if (stereo_mi_status(s, &mi) == 0 && !mi.warm)
            hier[n_hier++] = mi.hierarchy_ms;
        if (done == 0)
            first = t1;
        last = t1;
    }
    double fps = frames > 1 && last > first ? (frames - 1) / ((double)(last - first) * 1e-9) : 0;
    double mean = 0;
    for (int i = 0; i < frames; i++)
        mean += ms[i] / frames;
    qsort(ms, (size_t)frames, sizeof *ms, cmp_double);
    double med = rank_quantile(ms, frames, 0.5), p95 = rank_quantile(ms, frames, 0.95);
    const char *be = stereo_backend_to_str(stereo_active_backend(s));
    char method[32];
    method_label(c, method, sizeof method);
    printf("async %4dx%-4d D%-3d %-8s %-6s %s backend%s: %d frames, %8.1f fps, stage ms "
           "median %.3f p95 %.3f max %.3f\n", c->w, c->h, c->D, method,
           stereo_cost_to_str(c->cost), be, rewrite ? ", rewritten" : "", frames, fps, med, p95,
           ms[frames - 1]);
    bench_json j = {c, be, rewrite, frames, fps, mean, med, p95, ms[frames - 1], 0, 0, 0};
    stereo_mi_info mi;
    if (stereo_mi_status(s, &mi) == 0) { /* the MI hierarchy's share (gpu/mi.h) */
        j.mi = 1;
        j.mi_restarts = mi.restarts;
        qsort(hier, (size_t)n_hier, sizeof *hier, cmp_double);
        j.mi_hierarchy_median = n_hier ? rank_quantile(hier, n_hier, 0.5) : 0;
        printf("mi (%s): %llu of %d frames ran the hierarchy (%d levels below full size), "
               "its median %.3f ms = %.0f%% of the median frame\n",
               c->mi_warm ? "--mi-warm: the previous frame's disparity, restart on collapse"
                          : "the hierarchy on every frame",
               (unsigned long long)mi.restarts, frames, mi.levels, j.mi_hierarchy_median,
               med > 0 ? 100 * j.mi_hierarchy_median / med : 0);
    }
    rc = 0;
    if (json_path && atomic_write_file(json_path, write_bench_json, &j, err, sizeof err) != 0) {
        fprintf(stderr, "stereo-bench: --json %s\n", err);
        rc = 1;
    }
out:
    for (int i = 0; i < ASYNC_PAIRS; i++)
        for (int v = 0; v < nv; v++)
            if (frame[i][v])
                stereo_frame_free(s, frame[i][v]);
    stereo_destroy(s);
    synth_destroy(syn);
    free(host);
    free(ms);
    free(hier);
    return rc;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char err[256];
    if (parse_int_arg(opt, s, lo, hi, out, err, sizeof err)) {
        fprintf(stderr, "stereo-bench: %s\n", err);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    config custom = {0, 0, 128, 8, STEREO_COST_RANK, STEREO_METHOD_SGM, 0, 0, 0, {0},
                     STEREO_COMBINE_SIDES, 0, 0, 0, 0, 0, 0, 0};
    { /* the cost, paths and post-filters the stage takes by default, as the live app and
       * stereo-match do */
        stereo_params def;
        stereo_params_default(&def, 640, 480);
        custom.cost = def.cost;
        custom.paths = def.paths;
        custom.post = def.post.speckle_size ? POST_SPECKLE : 0;
    }
    int runs = 200, frames = 0, async = 0, rewrite = 0, d_given = 0, sms = 0, all_costs = 0;
    int combine_given = 0;
    stereo_backend backend = STEREO_BACKEND_CUDA;
    const char *csv_path = NULL, *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--version")) {
            version_print("stereo-bench");
            return 0;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: stereo-bench [--size WxH --disparities D --paths P --cost C] "
                   "[--baselines 1,B2,.. [--combine R]] [--runs N] [--frames N] [--csv FILE] "
                   "[--sms N] [--band W] [--cross N] [--discontinuity] [--post F,...] "
                   "[--min-disparity N]\n"
                   "       stereo-bench --async [--size WxH --disparities D --paths P --cost C] "
                   "[--runs N] [--backend cuda|cpu] [--rewrite] [--json FILE] [--sms N] "
                   "[--mi-warm]\n"
                   "  --cost C  %s; with --async also 'all': every cost with SGM, then with bm "
                   "(mi: --async only; it prints the MI hierarchy's median time and share of a "
                   "frame)\n"
                   "  --method sgm|bm, --block N (odd 3..31, default 9): block matching\n"
                   "  --mi-warm cost mi: the live app's policy (the previous frame's disparity as "
                   "the initial one, the hierarchy again when the valid fraction collapses); "
                   "without it every frame runs the hierarchy\n"
                   "  --baselines 1,B2,..  more views (stereo.h, multiview.h): the generated scene "
                   "seen from a camera at each baseline ratio, matched together (default: the "
                   "pair); --combine sides|sum (default sides)\n"
                   "  --band W  the coarse-to-fine mode: half size first, then W (32 or 64) "
                   "disparities per pixel around it (default 0: the full range)\n"
                   "  --cross N, --discontinuity  Mei et al.'s cross-based aggregation (arms up to "
                   "N px) and depth-discontinuity adjustment (cross.h; default off)\n"
                   "  --post F,...  post-filters after the LR check (postfilter.h): speckle "
                   "(at the default's size), vote, interp, fill, temporal, all, or none "
                   "(default: the defaults', speckle)\n"
                   "  --layout objects|street|facade, --contrast C  the generated scene "
                   "(stereo-synth's; default objects at full contrast)\n"
                   "  --min-disparity N  the smallest disparity searched (default 0; negative: the "
                   "right view shifted inside the stage, stereo.h)\n"
                   "  --sms N   run the stage on N SMs (a CUDA green context, CUDA 12.4+; the "
                   "hardware may round N up), 0 = all (default)\n"
                   "  --version print the version, git commit and the backends built in\n",
                   stereo_cost_names());
            return 0;
        }
        if (!strcmp(a, "--async") || !strcmp(a, "--rewrite")) {
            *(!strcmp(a, "--async") ? &async : &rewrite) = 1;
            continue;
        }
        if (!strcmp(a, "--mi-warm")) {
            custom.mi_warm = 1;
            continue;
        }
        if (!strcmp(a, "--discontinuity")) {
            custom.discontinuity = 1;
            continue;
        }
        static const char *const with_value[] = {"--size", "--disparities", "--paths", "--cost",
                                                 "--sms", "--runs", "--frames", "--csv",
                                                 "--json", "--backend", "--method", "--block",
                                                 "--baselines", "--combine", "--band",
                                                 "--post", "--min-disparity", "--layout",
                                                 "--contrast", "--cross"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
            known |= !strcmp(a, with_value[k]);
        if (!known) {
            fprintf(stderr, "stereo-bench: unknown option '%s' (see --help)\n", a);
            return 2;
        }
        if (!v) {
            fprintf(stderr, "stereo-bench: %s: needs a value (see --help)\n", a);
            return 2;
        }
        if (!strcmp(a, "--size")) {
            if (sscanf(v, "%dx%d", &custom.w, &custom.h) != 2 || custom.w < 32 || custom.h < 32) {
                fprintf(stderr, "stereo-bench: --size: '%s' is not WxH (at least 32x32)\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--disparities")) {
            bad = parse_int(a, v, 16, 512, &custom.D);
            d_given = 1;
        } else if (!strcmp(a, "--paths")) {
            bad = parse_int(a, v, 4, 8, &custom.paths);
        } else if (!strcmp(a, "--cost")) {
            all_costs = !strcmp(v, "all");
            bad = !all_costs && stereo_cost_from_str(v, &custom.cost);
            if (bad)
                fprintf(stderr, "stereo-bench: --cost: '%s' is not one of %s, all\n", v,
                        stereo_cost_names());
        } else if (!strcmp(a, "--method")) {
            bad = stereo_method_from_str(v, &custom.method);
            if (bad)
                fprintf(stderr, "stereo-bench: --method: '%s' is not one of %s\n", v,
                        stereo_method_names());
        } else if (!strcmp(a, "--block")) {
            bad = parse_int(a, v, STEREO_BLOCK_MIN, STEREO_BLOCK_MAX, &custom.block);
            if (!bad && custom.block % 2 == 0) {
                fprintf(stderr, "stereo-bench: --block: %d is not odd in %d..%d\n", custom.block,
                        STEREO_BLOCK_MIN, STEREO_BLOCK_MAX);
                bad = 1;
            }
        } else if (!strcmp(a, "--baselines")) {
            char why[256];
            int nb = 0;
            bad = stereo_baselines_from_str(v, custom.baseline, &nb, why, sizeof why) != 0;
            if (bad)
                fprintf(stderr, "stereo-bench: --baselines: %s\n", why);
            else if (nb < 2) {
                fprintf(stderr, "stereo-bench: --baselines: '%s' gives one view; more views "
                        "need at least two ratios (1,B2,...)\n", v);
                bad = 1;
            }
            custom.views = nb + 1;
        } else if (!strcmp(a, "--combine")) {
            bad = stereo_combine_from_str(v, &custom.combine) != 0;
            combine_given = 1;
            if (bad)
                fprintf(stderr, "stereo-bench: --combine: '%s' is not sides or sum\n", v);
        } else if (!strcmp(a, "--sms")) {
            bad = parse_int(a, v, 0, STEREO_MAX_SMS, &sms);
        } else if (!strcmp(a, "--cross")) {
            bad = parse_int(a, v, 0, CROSS_ARM_MAX, &custom.cross);
        } else if (!strcmp(a, "--min-disparity")) {
            bad = parse_int(a, v, STEREO_MIN_DISPARITY, 2047 - 16, &custom.dmin);
        } else if (!strcmp(a, "--band")) {
            char why[128];
            bad = parse_int(a, v, 0, 64, &custom.band);
            if (!bad && custom.band && band_check(custom.band, 512, why, sizeof why) != 0) {
                fprintf(stderr, "stereo-bench: --band: %s\n", why);
                bad = 1;
            }
        } else if (!strcmp(a, "--layout")) {
            if ((custom.layout = synth_layout_from_name(v)) < 0) {
                fprintf(stderr, "stereo-bench: --layout: '%s' is not objects, street or facade\n",
                        v);
                return 2;
            }
        } else if (!strcmp(a, "--contrast")) {
            char *end;
            custom.contrast = strtod(v, &end);
            if (*end || end == v || !(custom.contrast >= SYNTH_MIN_CONTRAST && custom.contrast <= 1)) {
                fprintf(stderr, "stereo-bench: --contrast: '%s' is not a number in %g..1\n", v,
                        SYNTH_MIN_CONTRAST);
                return 2;
            }
        } else if (!strcmp(a, "--post")) {
            custom.post = 0;
            char list[64];
            snprintf(list, sizeof list, "%s", v);
            for (char *save = NULL, *t = strtok_r(list, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                int k = 0;
                while (k < N_POST && strcmp(t, post_names[k]))
                    k++;
                if (k == N_POST && strcmp(t, "all") && strcmp(t, "none")) {
                    fprintf(stderr, "stereo-bench: --post: '%s' is not speckle, fill, temporal, "
                            "vote, interp, all or none\n", t);
                    return 2;
                }
                if (k < N_POST)
                    custom.post |= 1 << k;
                else if (!strcmp(t, "all"))
                    custom.post |= (1 << N_POST) - 1;
            }
        } else if (!strcmp(a, "--runs")) {
            bad = parse_int(a, v, 1, 100000, &runs);
        } else if (!strcmp(a, "--frames")) {
            bad = parse_int(a, v, 1, 100000, &frames);
        } else if (!strcmp(a, "--csv")) {
            csv_path = v;
        } else if (!strcmp(a, "--json")) {
            json_path = v;
        } else if (!strcmp(a, "--backend")) {
            bad = stereo_backend_from_str(v, &backend) || backend == STEREO_BACKEND_AUTO;
            if (bad)
                fprintf(stderr, "stereo-bench: --backend: '%s' is not cuda or cpu\n", v);
        }
        if (bad)
            return 2;
        i++;
    }
    if (!async && (rewrite || json_path || backend != STEREO_BACKEND_CUDA || custom.mi_warm)) {
        fprintf(stderr, "stereo-bench: --rewrite, --json, --backend and --mi-warm go with --async\n");
        return 2;
    }
    if (async && (frames || csv_path)) {
        fprintf(stderr, "stereo-bench: --frames and --csv do not go with --async\n");
        return 2;
    }
    if (all_costs && !async) {
        fprintf(stderr, "stereo-bench: --cost all goes with --async\n");
        return 2;
    }
    if (!async && custom.cost == STEREO_COST_MI) {
        fprintf(stderr, "stereo-bench: cost mi: --async only (its table comes from the host "
                        "before every frame; the timed mode replays the graph alone)\n");
        return 2;
    }
    if (combine_given && !custom.views) {
        fprintf(stderr, "stereo-bench: --combine goes with --baselines (more than two views)\n");
        return 2;
    }
    if (custom.views && custom.cost == STEREO_COST_MI) {
        fprintf(stderr, "stereo-bench: --baselines: cost mi is not matched with more views\n");
        return 2;
    }
    if (custom.views && !custom.w && !async) { /* the issue's size for three views */
        custom.w = 640;
        custom.h = 480;
    }
    if (async && runs < 2) {
        fprintf(stderr, "stereo-bench: --async needs --runs of at least 2 (a rate)\n");
        return 2;
    }
    /* before the runs: each output a file we may write, the two not one (outpath.h) */
    const outpath_file outs[] = {{"--csv", csv_path}, {"--json", json_path}};
    char oerr[1024];
    if (outpath_check(outs, 2, NULL, 0, oerr, sizeof oerr) != 0) {
        fprintf(stderr, "stereo-bench: %s\n", oerr);
        return 2;
    }
    if (async && !custom.w) { /* the live app's defaults */
        custom.w = 640;
        custom.h = 480;
        if (!d_given)
            custom.D = 64;
    }
    if (async && all_costs) { /* every cost with SGM, then with bm */
        if (json_path) {
            fprintf(stderr, "stereo-bench: --json takes one configuration, not --cost all\n");
            return 2;
        }
        int rc = 0;
        for (int m = 0; m < 2; m++)
            for (int k = 0; k <= STEREO_COST_MI; k++) {
                config c = custom;
                c.cost = (stereo_cost)k;
                c.method = (stereo_method)m;
                rc |= run_async(&c, backend, sms, runs, rewrite, NULL);
            }
        return rc;
    }
    if (async && backend == STEREO_BACKEND_CPU)
        return run_async(&custom, backend, sms, runs, rewrite, json_path);
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        fprintf(stderr, "stereo-bench: no CUDA device\n");
        return 1;
    }
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    char green[64] = "";
    if (sms > 0) {
        int got = stage_sms(sms);
        if (!got)
            return 1;
        snprintf(green, sizeof green, "; stage on %d SMs (green context)", got);
    }
    /* the CSV rows are collected in memory and written at the end through atomic_write_file,
     * so an interrupted run leaves the old file or none, never half of one */
    char *csv_buf = NULL;
    size_t csv_len = 0;
    FILE *csv = csv_path ? open_memstream(&csv_buf, &csv_len) : NULL;
    if (csv_path && !csv) {
        fprintf(stderr, "stereo-bench: %s: %s\n", csv_path, strerror(errno));
        return 1;
    }
    if (async) {
        printf("device: %s, %d SMs, CUDA runtime %d.%d, driver %d.%d%s\n", prop.name,
               prop.multiProcessorCount, rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10,
               green);
        return run_async(&custom, backend, sms, runs, rewrite, json_path);
    }
    double copy = frames ? 0 : copy_bandwidth();
    if (!frames)
        printf("device: %s, %d SMs, %.0f MB L2, CUDA runtime %d.%d, driver %d.%d; "
               "device-to-device copy %.0f GB/s%s\n",
               prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6, rt / 1000,
               rt % 1000 / 10, drv / 1000, drv % 1000 / 10, copy, green);
    int rc = 0;
    if (custom.w)
        rc |= run_config(&custom, sms, runs, frames, copy, csv);
    else
        for (size_t i = 0; i < sizeof issue_configs / sizeof *issue_configs; i++) {
            config c = issue_configs[i];
            c.post = custom.post; /* --post and the scene apply to the default configurations too */
            c.cross = custom.cross, c.discontinuity = custom.discontinuity;
            c.layout = custom.layout, c.contrast = custom.contrast;
            rc |= run_config(&c, sms, runs, frames, copy, csv);
        }
    if (csv) {
        char err[512];
        int bad = fclose(csv) != 0;
        if (bad || atomic_write_bytes(csv_path, csv_buf, csv_len, err, sizeof err) != 0) {
            fprintf(stderr, "stereo-bench: %s\n", bad ? "--csv: out of memory" : err);
            rc = 1;
        }
        free(csv_buf);
    }
    return rc;
}
