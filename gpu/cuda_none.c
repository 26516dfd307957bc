/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_none.c — the CUDA backend when the build was configured without CUDA (./configure
 * --no-cuda, or no nvcc found). Every entry point says so. */
#include "stage_cuda.h"

#include <stdio.h>

static const char why_none[] = "this build has no CUDA backend (configured without nvcc)";

int stage_cuda_available(char *why, size_t whylen)
{
    snprintf(why, whylen, "%s", why_none);
    return 0;
}

stereo_status stage_cuda_create(const stereo_params *p, const stereo_map *maps,
                                stage_cuda **out, char *err, size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}

void stage_cuda_destroy(stage_cuda *s) { (void)s; }

int stage_cuda_sms(const stage_cuda *s) { return 0; }

stereo_status stage_cuda_process(stage_cuda *s, stage_cuda_views views,
                                 int16_t *disp, int16_t *disp_right, uint8_t *conf,
                                 uint8_t *rect_left, uint8_t *rect_right, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}

stereo_status stage_cuda_set_table(stage_cuda *s, const uint8_t *table, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}

stereo_status stage_cuda_set_postfilter(stage_cuda *s, const stereo_postfilter *f, int clear,
                                        char *err, size_t errlen)
{
    (void)s, (void)f, (void)clear;
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}

void stage_cuda_set_profiling(stage_cuda *s, int on) { (void)s, (void)on; }

int stage_cuda_profile(const stage_cuda *s, const char **names, float *ms, int max) { return 0; }

stereo_status stage_cuda_colorize(stage_cuda *s, int colormap, int lo, int hi, uint8_t *rgba,
                                  size_t pitch, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}

stereo_status stage_cuda_frame_alloc(stage_cuda *s, size_t bytes, void **out, char *err,
                                     size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}

void stage_cuda_frame_free(stage_cuda *s, void *frame) { (void)s, (void)frame; }

stereo_status stage_cuda_submit(stage_cuda *s, stage_cuda_views views, int colormap, int lo, int hi, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}

stereo_status stage_cuda_wait(stage_cuda *s, stereo_result *out, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", why_none);
    return STEREO_ERR_NODEV;
}
