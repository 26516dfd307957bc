/* stereo-bench — GPU timing of the CUDA stage (a benchmark, not a test).
 *
 *   stereo-bench [--size WxH --disparities D --paths P [--cost rank|census]] [--runs N]
 *                [--frames N] [--csv FILE]
 *
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
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapgen.h"
#include "parse_num.h"
#include "stage_cuda.h"
#include "synth.h"

#define N_INPUTS 4
#define WARMUP 20

typedef struct {
    int w, h, D, paths;
    stereo_cost cost;
} config;

static const config issue_configs[] = {
    {640, 480, 128, 8, STEREO_COST_RANK},
    {1024, 440, 128, 4, STEREO_COST_RANK},
    {1280, 960, 128, 8, STEREO_COST_RANK},
    {1920, 1080, 256, 8, STEREO_COST_RANK},
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

/* Bytes the design moves through device memory for one frame (see the kernels' comments). */
static double frame_bytes(const config *c, int yuyv)
{
    double n = (double)c->w * c->h, D = c->D, t = c->cost == STEREO_COST_CENSUS ? 8 : 1;
    double grey_rect = 2 * (n * (yuyv ? 2 : 1) + 6 * n + 2 * n); /* camera, maps, grey + valid */
    double transform = 2 * (n + t * n);
    double aggregate = 2 * n * D + (c->paths - 1) * 4 * n * D + c->paths * (1 + 2 * t) * n;
    double wta = 2 * n * D + 2 * n, right = 2 * n * D + 2 * n;
    double median_lr = 2 * 4 * n + 6 * n;
    return grey_rect + transform + aggregate + wta + right + median_lr;
}

static int run_config(const config *c, int runs, int frames, double copy_gbs, FILE *csv)
{
    char err[512];
    stereo_params p;
    stereo_params_default(&p, c->w, c->h);
    p.num_disparities = c->D;
    p.paths = c->paths;
    p.cost = c->cost;
    stereo_default_penalties(p.cost, p.rank_window, &p.p1, &p.p2);
    p.backend = STEREO_BACKEND_CUDA;

    /* generated camera frames (YUYV: Y = the scene's grey, chroma flat) */
    synth_params sp = {c->w, c->h, 0, 3, 0, 0};
    if (synth_max_disparity(&sp) >= c->D)
        sp.max_disparity = c->D - 16 - (c->D - 16) % 12;
    synth *syn;
    if (synth_create(&sp, &syn, err, sizeof err)) {
        fprintf(stderr, "stereo-bench: %s\n", err);
        return 1;
    }
    size_t n = (size_t)c->w * c->h;
    uint8_t *grey = malloc(2 * n), *yuyv[N_INPUTS][2];
    for (int i = 0; i < N_INPUTS; i++) {
        if (synth_render_views(syn, 0.25 * i, grey, grey + n, 1, (size_t)c->w, err, sizeof err)) {
            fprintf(stderr, "stereo-bench: %s\n", err);
            return 1;
        }
        for (int v = 0; v < 2; v++) {
            yuyv[i][v] = malloc(2 * n);
            for (size_t k = 0; k < n; k++) {
                yuyv[i][v][2 * k] = grey[v * n + k];
                yuyv[i][v][2 * k + 1] = 128;
            }
        }
    }
    synth_destroy(syn);
    free(grey);

    stereo_map maps[2];
    mapgen_similarity(&maps[0], c->w, c->h, c->w, c->h, 0.002, 1.003, 0.4, -0.3);
    mapgen_similarity(&maps[1], c->w, c->h, c->w, c->h, -0.0015, 0.998, -0.6, 0.2);
    stage_cuda *s;
    if (stage_cuda_create(&p, maps, &s, err, sizeof err) != STEREO_OK) {
        fprintf(stderr, "stereo-bench: %dx%d D%d: %s\n", c->w, c->h, c->D, err);
        return 1;
    }
    int rc = 0;
    float *t = malloc(sizeof(float) * (size_t)(runs > 1 ? runs : 1));
    float stage_t[16][64];
    const char *names[16];
    int n_stages = 0, n_prof = 0;
    for (int i = 0; i < (frames > 0 ? frames : WARMUP + runs); i++) {
        stereo_image l = {yuyv[i % N_INPUTS][0], c->w, c->h, (size_t)c->w * 2, STEREO_PIX_YUYV};
        stereo_image r = {yuyv[i % N_INPUTS][1], c->w, c->h, (size_t)c->w * 2, STEREO_PIX_YUYV};
        float ms;
        if (stage_cuda_upload(s, &l, &r, err, sizeof err) != STEREO_OK ||
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
        stereo_image l = {yuyv[i % N_INPUTS][0], c->w, c->h, (size_t)c->w * 2, STEREO_PIX_YUYV};
        stereo_image r = {yuyv[i % N_INPUTS][1], c->w, c->h, (size_t)c->w * 2, STEREO_PIX_YUYV};
        float ms, sm[16];
        if (stage_cuda_upload(s, &l, &r, err, sizeof err) != STEREO_OK ||
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
        float total = median(t, runs);
        double bytes = frame_bytes(c, 1);
        double gbs = bytes / (total * 1e-3) / 1e9;
        printf("%4dx%-4d D%-3d %d paths %-6s  %7.3f ms  %7.1f fps  %7.1f MB/frame  %6.0f GB/s "
               "(%3.0f%% of copy)  |", c->w, c->h, c->D, c->paths, stereo_cost_to_str(c->cost),
               total, 1e3 / total, bytes / 1e6, gbs, copy_gbs > 0 ? 100 * gbs / copy_gbs : 0);
        for (int k = 0; k < n_stages; k++)
            printf(" %s %.3f", names[k], median(stage_t[k], n_prof));
        printf("\n");
        if (csv) {
            fprintf(csv, "%d,%d,%d,%d,%s,%.4f,%.1f,%.0f", c->w, c->h, c->D, c->paths,
                    stereo_cost_to_str(c->cost), total, bytes / 1e6, gbs);
            for (int k = 0; k < n_stages; k++)
                fprintf(csv, ",%s=%.4f", names[k], median(stage_t[k], n_prof));
            fprintf(csv, "\n");
        }
    }
done:
    free(t);
    stage_cuda_destroy(s);
    mapgen_free(&maps[0]);
    mapgen_free(&maps[1]);
    for (int i = 0; i < N_INPUTS; i++)
        free(yuyv[i][0]), free(yuyv[i][1]);
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
    config custom = {0, 0, 128, 8, STEREO_COST_RANK};
    int runs = 200, frames = 0;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: stereo-bench [--size WxH --disparities D --paths P --cost rank|census] "
                   "[--runs N] [--frames N] [--csv FILE]\n");
            return 0;
        }
        if (!v) {
            fprintf(stderr, "stereo-bench: %s: missing value or unknown option\n", a);
            return 2;
        }
        if (!strcmp(a, "--size")) {
            if (sscanf(v, "%dx%d", &custom.w, &custom.h) != 2 || custom.w < 32 || custom.h < 32) {
                fprintf(stderr, "stereo-bench: --size: '%s' is not WxH (at least 32x32)\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--disparities")) {
            bad = parse_int(a, v, 16, 256, &custom.D);
        } else if (!strcmp(a, "--paths")) {
            bad = parse_int(a, v, 4, 8, &custom.paths);
        } else if (!strcmp(a, "--cost")) {
            bad = stereo_cost_from_str(v, &custom.cost);
            if (bad)
                fprintf(stderr, "stereo-bench: --cost: '%s' is not rank or census\n", v);
        } else if (!strcmp(a, "--runs")) {
            bad = parse_int(a, v, 1, 100000, &runs);
        } else if (!strcmp(a, "--frames")) {
            bad = parse_int(a, v, 1, 100000, &frames);
        } else if (!strcmp(a, "--csv")) {
            csv_path = v;
        } else {
            fprintf(stderr, "stereo-bench: unknown option '%s'\n", a);
            return 2;
        }
        if (bad)
            return 2;
        i++;
    }
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        fprintf(stderr, "stereo-bench: no CUDA device\n");
        return 1;
    }
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv) {
        fprintf(stderr, "stereo-bench: %s: %s\n", csv_path, strerror(errno));
        return 1;
    }
    double copy = frames ? 0 : copy_bandwidth();
    if (!frames)
        printf("device: %s, %d SMs, %.0f MB L2, CUDA runtime %d.%d, driver %d.%d; "
               "device-to-device copy %.0f GB/s\n",
               prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6, rt / 1000,
               rt % 1000 / 10, drv / 1000, drv % 1000 / 10, copy);
    int rc = 0;
    if (custom.w)
        rc |= run_config(&custom, runs, frames, copy, csv);
    else
        for (size_t i = 0; i < sizeof issue_configs / sizeof *issue_configs; i++)
            rc |= run_config(&issue_configs[i], runs, frames, copy, csv);
    if (csv)
        fclose(csv);
    return rc;
}
