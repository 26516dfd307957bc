/* SPDX-License-Identifier: Apache-2.0 */
/* check.h — what the GPU test programs (test_cuda.c, test_block_cuda.cu, test_mview_cuda.cu)
 * share: counting checks (a failure prints "FAIL: <what>"; main prints "N passed, N failed"
 * from n_pass / n_fail) and deterministic random numbers (xorshift64; define TEST_RNG_SEED
 * before including this header for another sequence); in the CUDA programs TRY(call). Included
 * once per program. */
#ifndef STEREO_TESTS_GPU_CHECK_H
#define STEREO_TESTS_GPU_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 0x9e3779b97f4a7c15ull
#endif

static int n_pass, n_fail;

static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        n_pass++;
        return;
    }
    n_fail++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static uint64_t rng = TEST_RNG_SEED;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

#ifdef __CUDACC__
/* TRY(call) in a CUDA test case: a failing CUDA call is a failed check naming the case (a
 * string `what` in scope), the call and where; then the case ends at its label `done`. */
#define TRY(call)                                                                          \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            check(0, "%s: %s: %s (%s:%d)", what, #call, cudaGetErrorString(e_), __FILE__, \
                  __LINE__);                                                               \
            goto done;                                                                     \
        }                                                                                  \
    } while (0)
#endif

#endif
