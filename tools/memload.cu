/* SPDX-License-Identifier: Apache-2.0 */
/* memload.cu — the memory-loaded Jetson proxy: an LD_PRELOAD library that, before main(), puts
 * the program's main thread on a CUDA green context of SM_LIMIT SMs (the proxy of an Orin's SM
 * count) and, with MEMLOAD set, keeps the GPU's other SMs streaming copies through DRAM on a
 * thread of their own, for the whole run: the program under test then shares the DRAM
 * bandwidth and the L2 with that traffic, as a stage on an Orin shares its much smaller DRAM
 * bandwidth (and a 4 MB L2) with the CPU and the rest of the system.
 *
 *   nvcc -O3 -shared -Xcompiler -fPIC -cudart shared -o memload.so tools/memload.cu -lcuda
 *   nvcc -O3 -DMEMLOAD_PROBE_MAIN -o memload-probe tools/memload.cu -lcuda
 *   SM_LIMIT=16 MEMLOAD=8 LD_PRELOAD=./memload.so build/gpu/stereo-bench ...
 *   SM_LIMIT=16 MEMLOAD=8 ./memload-probe      # the bandwidth left to the 16 SMs under that load
 *
 *   SM_LIMIT=N       the main thread's green context: N SMs (as the anchors' greenctx preload)
 *   MEMLOAD=B        the load: B blocks of 512 threads per SM on the other SMs, each streaming
 *                    16-byte copies between two 1 GiB buffers, relaunched until the program
 *                    exits; 0 or unset: no load. More blocks, more of the DRAM's bandwidth.
 * memload-probe sets up the same and times a streaming copy (256 MiB each way) on the N-SM
 * context itself, with the load running, and prints the bandwidth it gets: the figure the load
 * is tuned by (about 205 GB/s on 16 SMs for an Orin AGX, 68 GB/s on 8 for an Orin Nano).
 * Messages go to stderr with the prefix "memload: ". Any CUDA failure ends the process with
 * status 3 and the call that failed: a measurement without its load is worse than none.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    CUfunction copy; /* stream_copy as a context-independent kernel (cudaGetKernel) */
    int load_sms, blocks;
    volatile int stop;
    pthread_t thread;
    int running;
} g;

/* stream_copy's handle. In the preload the library's constructor can run before the
 * runtime has registered this file's kernels (both are constructors of one library): until it
 * has, cudaGetKernel fails, and this waits (up to 5 s) rather than racing it. */
static CUfunction copy_kernel(void)
{
    if (!g.copy) {
        cudaKernel_t k;
        cudaError_t e = cudaErrorInvalidDeviceFunction;
        for (int i = 0; i < 500 && (e = cudaGetKernel(&k, stream_copy)) != cudaSuccess; i++) {
            cudaGetLastError();
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        CHECK_RT(e);
        g.copy = (CUfunction)k;
    }
    return g.copy;
}

/* n 16-byte words from src to dst on stream st of the current context: grid blocks of 512 */
static void launch_copy(CUdeviceptr src, CUdeviceptr dst, size_t n, unsigned grid, CUstream st)
{
    void *args[] = {&src, &dst, &n};
    copy_kernel();
    CHECK_DRV(cuLaunchKernel(g.copy, grid, 1, 1, 512, 1, 1, 0, st, args, NULL));
}

/* Everything below runs through the driver API in the current green context (the runtime's
 * default stream is not that context's): memory, streams, events, launches. */
static void *load_main(void *arg)
{
    (void)arg;
    CHECK_DRV(cuCtxSetCurrent(g.load_ctx));
    const size_t bytes = (size_t)1 << 30, n = bytes / sizeof(uint4);
    CUdeviceptr a, b;
    CUstream st;
    CHECK_DRV(cuMemAlloc(&a, bytes));
    CHECK_DRV(cuMemAlloc(&b, bytes));
    CHECK_DRV(cuMemsetD8(a, 1, bytes));
    CHECK_DRV(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    while (!g.stop) {
        launch_copy(a, b, n, (unsigned)(g.load_sms * g.blocks), st);
        launch_copy(b, a, n, (unsigned)(g.load_sms * g.blocks), st);
        CHECK_DRV(cuStreamSynchronize(st));
    }
    cuMemFree(a);
    cuMemFree(b);
    cuStreamDestroy(st);
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

#ifdef MEMLOAD_PROBE_MAIN
/* GB/s of a streaming copy on the current (N-SM) context, both directions counted */
static double probe(int sms)
{
    const size_t bytes = (size_t)256 << 20, n = bytes / sizeof(uint4);
    CUdeviceptr a, b;
    CUstream st;
    CUevent e0, e1;
    CHECK_DRV(cuMemAlloc(&a, bytes));
    CHECK_DRV(cuMemAlloc(&b, bytes));
    CHECK_DRV(cuMemsetD8(a, 1, bytes));
    CHECK_DRV(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    CHECK_DRV(cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CHECK_DRV(cuEventCreate(&e1, CU_EVENT_DEFAULT));
    const int reps = 20;
    float best = 0;
    for (int round = 0; round < 3; round++) {
        CHECK_DRV(cuEventRecord(e0, st));
        for (int r = 0; r < reps; r++)
            launch_copy(a, b, n, (unsigned)sms * 4, st);
        CHECK_DRV(cuEventRecord(e1, st));
        CHECK_DRV(cuEventSynchronize(e1));
        float ms;
        CHECK_DRV(cuEventElapsedTime(&ms, e0, e1));
        float gbs = (float)(2.0 * bytes * reps / (ms * 1e-3) / 1e9);
        best = gbs > best ? gbs : best;
    }
    uint32_t last;
    CHECK_DRV(cuMemcpyDtoH(&last, b + bytes - 4, 4));
    if (last != 0x01010101u) {
        fprintf(stderr, "memload: the probe's copy did not happen\n");
        exit(3);
    }
    cuMemFree(a);
    cuMemFree(b);
    cuStreamDestroy(st);
    return best;
}
#endif

/* The green contexts and the load, from the environment; returns the main context's SMs (0:
 * SM_LIMIT unset, nothing done). */
static unsigned memload_setup(void)
{
    const char *lim = getenv("SM_LIMIT"), *load = getenv("MEMLOAD");
    if (!lim || !*lim)
        return 0;
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
    return part.sm.smCount;
}

#ifdef MEMLOAD_PROBE_MAIN
/* memload-probe: the load as the preload sets it up, and the probe on the main context */
int main(void)
{
    unsigned sms = memload_setup();
    if (!sms) {
        fprintf(stderr, "memload-probe: set SM_LIMIT (and MEMLOAD)\n");
        return 2;
    }
    double gbs = probe((int)sms);
    fprintf(stderr, "memload: probe: a streaming copy on the %u SMs gets %.1f GB/s (load %d)\n",
            sms, gbs, g.blocks);
    stop_load();
    return 0;
}
#else
__attribute__((constructor)) static void memload_init(void) { memload_setup(); }
#endif
