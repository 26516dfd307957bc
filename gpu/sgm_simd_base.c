/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd_base.c — the fused SGM kernels (sgm_simd_kernels.h) for the baseline instruction set
 * of the target: SSE2 on x86-64, NEON on aarch64, GCC's generic vectors elsewhere. */
#if defined(__x86_64__) || defined(__SSE2__)
#define SGM_SIMD_NAME "sse2"
#elif defined(__ARM_NEON)
#define SGM_SIMD_NAME "neon"
#else
#define SGM_SIMD_NAME "generic"
#endif
#define SGM_SIMD_TABLE sgm_simd_baseline
#include "sgm_simd_kernels.h"
