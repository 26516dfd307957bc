/* SPDX-License-Identifier: Apache-2.0 */
/* memload.cu — the memory-loaded Jetson proxy: an LD_PRELOAD library that, before main(), puts
 * the program's main thread on a CUDA green context of SM_LIMIT SMs (the proxy of an Orin's SM
 * count) and, with MEMLOAD set, keeps the GPU's other SMs streaming copies through DRAM on a
 * thread of their own, for the whole run: the program under test then shares the DRAM
 * bandwidth and the L2 with that traffic, as a stage on an Orin shares its much smaller DRAM
 * bandwidth (and a 4 MB L2) with the CPU and the rest of the system.
 *
 *   nvcc -O3 -shared -Xcompiler -fPIC -cudart shared -o memload.so tools/memload.cu -lcuda
 *   SM_LIMIT=16 MEMLOAD=8 LD_PRELOAD=./memload.so build/gpu/stereo-bench ...
 *   SM_LIMIT=16 MEMLOAD=8 MEMLOAD_PROBE=1 LD_PRELOAD=./memload.so true   # the probe alone
 *
 *   SM_LIMIT=N       the main thread's green context: N SMs (as the anchors' greenctx preload)
 *   MEMLOAD=B        the load: B blocks of 512 threads per SM on the other SMs, each streaming
 *                    16-byte copies between two 1 GiB buffers, relaunched until the program
 *                    exits; 0 or unset: no load. More blocks, more of the DRAM's bandwidth.
 *   MEMLOAD_PROBE=1  before main: a streaming copy (256 MiB each way) on the N-SM context
 *                    itself, with the load running; prints the bandwidth it gets: the figure
 *                    the load is tuned by (about 205 GB/s on 16 SMs for an Orin AGX, 68 GB/s on
 *                    8 for an Orin Nano). With MEMLOAD_PROBE=exit the process then exits.
 * Messages go to stderr with the prefix "memload: ". Any CUDA failure ends the process with
 * status 3 and the call that failed: a measurement without its load is worse than none.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_DRV(x)                                                                              \
    do {                                                                                          \
        CUresult r_ = (x);                                                                        \
        if (r_ != CUDA_SUCCESS) {                                                                 \
            const char *s_ = "?";                                                                 \
            cuGetErrorString(r_, &s_);                                                            \
            fprintf(stderr, "memload: %s: %s\n", #x, s_);                                         \
            exit(3);                                                                              \
        }                                                                                         \
    } while (0)
#define CHECK_RT(x)                                                                               \
    do {                                                                                          \
        cudaError_t r_ = (x);                                                                     \
        if (r_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "memload: %s: %s\n", #x, cudaGetErrorString(r_));                     \
            exit(3);                                                                              \
        }                                                                                         \
    } while (0)

/* dst[i] = src[i] over n 16-byte words, grid-stride */
__global__ void stream_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

static struct {
    CUcontext load_ctx;
    int load_sms, blocks;
    volatile int stop;
    pthread_t thread;
    int running;
} g;

static void *load_main(void *arg)
{
    (void)arg;
    CHECK_DRV(cuCtxSetCurrent(g.load_ctx));
    const size_t bytes = (size_t)1 << 30, n = bytes / sizeof(uint4);
    uint4 *a, *b;
    cudaStream_t st;
    CHECK_RT(cudaMalloc(&a, bytes));
    CHECK_RT(cudaMalloc(&b, bytes));
    CHECK_RT(cudaMemset(a, 1, bytes));
    CHECK_RT(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    while (!g.stop) {
        stream_copy<<<g.load_sms * g.blocks, 512, 0, st>>>(a, b, n);
        stream_copy<<<g.load_sms * g.blocks, 512, 0, st>>>(b, a, n);
        CHECK_RT(cudaStreamSynchronize(st));
    }
    cudaFree(a);
    cudaFree(b);
    cudaStreamDestroy(st);
    return NULL;
}

static void stop_load(void)
{
    if (g.running) {
        g.stop = 1;
        pthread_join(g.thread, NULL);
        g.running = 0;
    }
}

/* GB/s of a streaming copy on the current (N-SM) context, both directions counted */
static double probe(int sms)
{
    const size_t bytes = (size_t)256 << 20, n = bytes / sizeof(uint4);
    uint4 *a, *b;
    CHECK_RT(cudaMalloc(&a, bytes));
    CHECK_RT(cudaMalloc(&b, bytes));
    CHECK_RT(cudaMemset(a, 1, bytes));
    cudaEvent_t e0, e1;
    CHECK_RT(cudaEventCreate(&e0));
    CHECK_RT(cudaEventCreate(&e1));
    const int reps = 20;
    float best = 0;
    for (int round = 0; round < 3; round++) {
        CHECK_RT(cudaEventRecord(e0));
        for (int r = 0; r < reps; r++)
            stream_copy<<<sms * 4, 512>>>(a, b, n);
        CHECK_RT(cudaEventRecord(e1));
        CHECK_RT(cudaEventSynchronize(e1));
        float ms;
        CHECK_RT(cudaEventElapsedTime(&ms, e0, e1));
        float gbs = (float)(2.0 * bytes * reps / (ms * 1e-3) / 1e9);
        best = gbs > best ? gbs : best;
    }
    cudaFree(a);
    cudaFree(b);
    return best;
}

__attribute__((constructor)) static void memload_init(void)
{
    const char *lim = getenv("SM_LIMIT"), *load = getenv("MEMLOAD"), *pr = getenv("MEMLOAD_PROBE");
    if (!lim || !*lim)
        return;
    const unsigned want = (unsigned)atoi(lim);
    CUdevice dev;
    CHECK_DRV(cuInit(0));
    CHECK_DRV(cuDeviceGet(&dev, 0));
    CUdevResource all, part, rest;
    unsigned groups = 1;
    CHECK_DRV(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    CHECK_DRV(cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, want));
    CUdevResourceDesc desc;
    CUgreenCtx gc;
    CUcontext main_ctx;
    CHECK_DRV(cuDevResourceGenerateDesc(&desc, &part, 1));
    CHECK_DRV(cuGreenCtxCreate(&gc, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CHECK_DRV(cuCtxFromGreenCtx(&main_ctx, gc));
    g.blocks = load ? atoi(load) : 0;
    if (g.blocks > 0) {
        CUdevResourceDesc rdesc;
        CUgreenCtx rgc;
        CHECK_DRV(cuDevResourceGenerateDesc(&rdesc, &rest, 1));
        CHECK_DRV(cuGreenCtxCreate(&rgc, rdesc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CHECK_DRV(cuCtxFromGreenCtx(&g.load_ctx, rgc));
        g.load_sms = (int)rest.sm.smCount;
        if (pthread_create(&g.thread, NULL, load_main, NULL) != 0) {
            fprintf(stderr, "memload: cannot start the load thread\n");
            exit(3);
        }
        g.running = 1;
        atexit(stop_load);
    }
    CHECK_DRV(cuCtxSetCurrent(main_ctx));
    fprintf(stderr, "memload: %u SMs (asked %u); load: %s%d blocks of 512 on %d SMs\n",
            part.sm.smCount, want, g.blocks > 0 ? "" : "none, ", g.blocks > 0 ? g.blocks : 0,
            g.blocks > 0 ? g.load_sms : 0);
    if (pr && *pr) {
        double gbs = probe((int)part.sm.smCount);
        fprintf(stderr, "memload: probe: a streaming copy on the %u SMs gets %.1f GB/s (load %d)\n",
                part.sm.smCount, gbs, g.blocks);
        if (strcmp(pr, "exit") == 0) {
            stop_load();
            exit(0);
        }
    }
}
