/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd.c — the fused SGM path's scratch size and the choice of its instruction set
 * (sgm_simd.h); the kernels are in sgm_simd_kernels.h. */
#include "sgm_simd.h"

#include <stdio.h>
#include <string.h>

size_t sgm_simd_scratch_size(const sgm_config *c)
{
    /* sgm_simd_kernels.h's layout_of, each part rounded up to 64 bytes, plus the alignment of
     * the start */
    const size_t w = (size_t)c->width, D = (size_t)c->ndisp, w8 = (w + 7) / 8 * 8;
    const size_t sts = (w8 + D + 16 + 31) / 32 * 32;
    const size_t parts[6] = {6 * w * D, 2 * D, D, 6 * w, w8 * D, D * sts};
    size_t n = 64;
    for (int i = 0; i < 6; i++)
        n += (parts[i] * 2 + 63) / 64 * 64;
    return n;
}

/* The compiled instruction sets, best first, each with whether this CPU runs it. */
static int isa_count(const sgm_simd_isa *list[3], int runs[3])
{
    int n = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    list[n] = &sgm_simd_avx2, runs[n++] = __builtin_cpu_supports("avx2");
#endif
    list[n] = &sgm_simd_baseline, runs[n++] = 1;
    return n;
}

const char *sgm_simd_names(void)
{
#if defined(__x86_64__)
    return "auto, reference, avx2, sse2";
#elif defined(__ARM_NEON)
    return "auto, reference, neon";
#else
    return "auto, reference, generic";
#endif
}

int sgm_simd_select(const char *name, const sgm_simd_isa **out, char *err, size_t errlen)
{
    const sgm_simd_isa *list[3];
    int runs[3], n = isa_count(list, runs);
    *out = NULL;
    if (name && strcmp(name, "reference") == 0)
        return 0;
    const int any = !name || strcmp(name, "auto") == 0;
    for (int i = 0; i < n; i++) {
        if (!any && strcmp(name, list[i]->name) != 0)
            continue;
        if (runs[i]) {
            *out = list[i];
            return 0;
        }
        snprintf(err, errlen, "'%s': this CPU does not run it", name);
        return -1;
    }
    snprintf(err, errlen, "'%s' is not one of %s", name, sgm_simd_names());
    return -1;
}
