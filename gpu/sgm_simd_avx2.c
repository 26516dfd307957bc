/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd_avx2.c — the fused SGM kernels (sgm_simd_kernels.h) for AVX2; build.ninja compiles
 * this file with -mavx2 on x86-64 (configure's avx2_cflags) and it is empty elsewhere.
 * sgm_simd.c calls it only on CPUs that have AVX2. */
#if defined(__x86_64__)
#if !defined(__AVX2__)
#error "sgm_simd_avx2.c needs -mavx2 (build.ninja: avx2_cflags)"
#endif
#define SGM_SIMD_NAME "avx2"
#define SGM_SIMD_TABLE sgm_simd_avx2
#include "sgm_simd_kernels.h"
#endif
