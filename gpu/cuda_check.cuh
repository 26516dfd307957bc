/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_check.cuh — checking CUDA calls without losing the error (CUDA sources only).
 *
 * CUDA_TRY(call) evaluates the call once; on failure it writes "<call text>: <CUDA error> (file:
 * line)" into the enclosing function's err/errlen and returns STEREO_ERR_CUDA from it. Launchers
 * return the launch's cudaError_t, so the message names the kernel that failed.
 */
#ifndef STEREO_CUDA_CHECK_CUH
#define STEREO_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>

#include "stereo_types.h"

static inline stereo_status cuda_fail(char *err, size_t errlen, const char *what, cudaError_t e,
                                      const char *file, int line)
{
    if (err && errlen)
        snprintf(err, errlen, "%s: %s (%s:%d)", what, cudaGetErrorString(e), file, line);
    return STEREO_ERR_CUDA;
}

#define CUDA_TRY(call)                                                          \
    do {                                                                        \
        cudaError_t e_ = (call);                                                \
        if (e_ != cudaSuccess)                                                  \
            return cuda_fail(err, errlen, #call, e_, __FILE__, __LINE__);       \
    } while (0)

/* Integer ceil-division for grid sizes. */
static inline unsigned div_up(size_t a, size_t b) { return (unsigned)((a + b - 1) / b); }

#endif
