/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_simd.c — the fused SGM path's scratch size and the choice of its instruction set
 * (sgm_simd.h); the kernels are in sgm_simd_kernels.h. */
#include "sgm_simd.h"

#include <stdio.h>
#include <string.h>

void sgm_simd_layout_of(const sgm_config *c, sgm_simd_layout *l)
{
    const size_t w = (size_t)c->width, D = (size_t)c->ndisp;
    const size_t V = 32; /* the widest vector (AVX2) in bytes: loads may pass an end by one */
    size_t at = 0;
    l->B = D + SGM_SIMD_PAD;
    l->nblk = w + 2;
    l->sts = (w + D + 16 + 31) / 32 * 32;
#define TAKE(field, n) (l->field = at, at += ((size_t)(n) + 31) / 32 * 32)
    TAKE(rows, 3 * l->nblk * l->B + SGM_SIMD_PAD);
    TAKE(zero, l->B + SGM_SIMD_PAD);
    TAKE(hz, 2 * D);
    TAKE(mins, 6 * w);
    TAKE(cost, D / 2 + V);       /* bytes */
    TAKE(rrev, (w + D) / 2 + V); /* bytes */
    l->nibs = (w + D + 2 * V + 63) / 64 * 64;
    TAKE(nib, 16 * l->nibs / 2); /* bytes: census's 16 nibble planes */
    TAKE(st, D * l->sts);
    TAKE(grp, 8 * D);
#undef TAKE
    l->total = at;
}

size_t sgm_simd_scratch_size(const sgm_config *c)
{
    sgm_simd_layout l;
    sgm_simd_layout_of(c, &l);
    return l.total * 2 + 64; /* + the alignment of the start */
}

int sgm_simd_bytes_fit(const sgm_config *c, int paths)
{
    for (int r = 0; r < paths; r++)
        if (c->max_cost + (c->per_dir ? c->dir_p2[r] : c->p2) > 255)
            return 0;
    return 1;
}

/* The compiled instruction sets, best first, each with whether this CPU runs it. */
static int isa_count(const sgm_simd_isa *list[3], int runs[3])
{
    int n = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    list[n] = &sgm_simd_avx2, runs[n++] = __builtin_cpu_supports("avx2");
#endif
#if defined(__SSE2__) || defined(__ARM_NEON)
    list[n] = &sgm_simd_baseline, runs[n++] = 1;
#endif
    list[n] = &sgm_simd_generic, runs[n++] = 1;
    return n;
}

const char *sgm_simd_names(void)
{
#if defined(__x86_64__)
    return "auto, reference, avx2, sse2, generic";
#elif defined(__ARM_NEON)
    return "auto, reference, neon, generic";
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
        if (any) {
            /* the best this CPU runs, but not the generic vectors: lowered to scalar code where
             * neither SSE2 nor NEON is, they are slower than the reference's loops */
            if (!runs[i] || list[i] == &sgm_simd_generic)
                continue;
        } else if (strcmp(name, list[i]->name) != 0) {
            continue;
        } else if (!runs[i]) {
            snprintf(err, errlen, "'%s': this CPU does not run it", name);
            return -1;
        }
        *out = list[i];
        return 0;
    }
    if (any)
        return 0; /* the reference */
    snprintf(err, errlen, "'%s' is not one of %s", name, sgm_simd_names());
    return -1;
}
