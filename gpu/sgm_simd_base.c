/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd_base.c — the fused SGM kernels (sgm_simd_kernels.h) for the baseline instruction set
 * of the target: SSE2 on x86-64, NEON on aarch64 (elsewhere sgm_simd_generic.c alone). */
#if defined(__SSE2__) || defined(__ARM_NEON)
#if defined(__SSE2__)
#define SGM_SIMD_NAME "sse2"
#else
#define SGM_SIMD_NAME "neon"
#endif
#define SGM_SIMD_TABLE sgm_simd_baseline
#include "sgm_simd_kernels.h"
#endif
