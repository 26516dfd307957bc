/* stage_cuda.h — the CUDA backend of the stereo stage, as seen by stereo.c.
 *
 * Exactly one implementation is linked: gpu/stage_cuda.cu (configured with CUDA) or
 * gpu/cuda_none.c (built without CUDA: every call reports that). The CUDA backend produces the
 * same bits as the CPU reference for the same parameters.
 */
#ifndef STEREO_STAGE_CUDA_H
#define STEREO_STAGE_CUDA_H

#include <stddef.h>
#include "stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stage_cuda stage_cuda;

/* 1 when a usable CUDA device exists; else 0 and why says why (e.g. "no CUDA device"). */
int stage_cuda_available(char *why, size_t whylen);

stereo_status stage_cuda_create(const stereo_params *p, const stereo_map maps[2],
                                stage_cuda **out, char *err, size_t errlen);
void stage_cuda_destroy(stage_cuda *s);

/* Runs one pair and waits for the results (copied into the host buffers given). */
stereo_status stage_cuda_process(stage_cuda *s, const stereo_image *left, const stereo_image *right,
                                 int16_t *disp, int16_t *disp_right, uint8_t *conf,
                                 uint8_t *rect_left, uint8_t *rect_right, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
