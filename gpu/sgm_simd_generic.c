/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd_generic.c — the fused SGM kernels (sgm_simd_kernels.h) on GCC's generic vectors
 * only, no intrinsics: what a target without SSE2 or NEON runs, and on the others a third
 * implementation for the tests (STEREO_CPU_KERNELS=generic). */
#define SGM_SIMD_GENERIC 1
#define SGM_SIMD_NAME "generic"
#define SGM_SIMD_TABLE sgm_simd_generic
#include "sgm_simd_kernels.h"
