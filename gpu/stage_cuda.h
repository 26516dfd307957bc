/* SPDX-License-Identifier: Apache-2.0 */
/* stage_cuda.h — the CUDA backend of the stereo stage, as seen by stereo.c.
 *
 * With p->sms > 0 the stage lives in a CUDA green context of that many SMs: every call below
 * makes it current on the calling thread for its length and gives the thread its own context
 * back at the end, so the calls may come from any thread (one at a time), and the caller's other
 * CUDA work keeps the whole device.
 *
 * Exactly one implementation is linked: gpu/stage_cuda.cu with stage_cuda_create.cu (configured
 * with CUDA) or gpu/cuda_none.c (built without CUDA: every call reports that). The CUDA backend
 * produces the same bits as the CPU reference for the same parameters.
 *
 * Errors: an allocation that fails at create names the buffer, its size and the device's free
 * memory, and returns STEREO_ERR_NOMEM (stereo_create then falls back to the CPU backend under
 * STEREO_BACKEND_AUTO). A kernel fault is sticky in CUDA: every later call of the stage fails
 * with the fault's message (STEREO_ERR_CUDA); the caller destroys the stage.
 * Fault injection, for the tests (tests/gpu/test_cuda.c, tests/test_gpu_faults.sh on the GPU
 * machine): the environment variable STEREO_CUDA_FAULT=alloc:NAME makes the allocation of
 * buffer NAME (as the messages name it: L8, grey, slot.disp, ...) ask for more than the device
 * has; STEREO_CUDA_FAULT=frame:N launches a trapping kernel after the N-th frame's kernels.
 */
#ifndef STEREO_STAGE_CUDA_H
#define STEREO_STAGE_CUDA_H

#include <stddef.h>
#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stage_cuda stage_cuda;

/* 1 when a usable CUDA device exists; else 0 and why says why (e.g. "no CUDA device"). */
int stage_cuda_available(char *why, size_t whylen);

/* maps: NULL or one per view (p->views, 2 for the pair). */
stereo_status stage_cuda_create(const stereo_params *p, const stereo_map *maps,
                                stage_cuda **out, char *err, size_t errlen);
void stage_cuda_destroy(stage_cuda *s);

/* The SMs the stage runs on: those of its green context (p->sms rounded up by the hardware), or
 * the device's count when p->sms = 0. */
int stage_cuda_sms(const stage_cuda *s);

/* The images of a frame, as stereo.c checked them: views[0] the reference (left), views[1] view 1
 * (right), ... one per view of p->views (2 for the pair). */
typedef const stereo_image *const *stage_cuda_views;

/* Runs one frame and waits for the results (copied into the host buffers given). */
stereo_status stage_cuda_process(stage_cuda *s, stage_cuda_views views,
                                 int16_t *disp, int16_t *disp_right, uint8_t *conf,
                                 uint8_t *rect_left, uint8_t *rect_right, char *err, size_t errlen);

/* Cost mi: the 256 x 256 cost tables (mi.h, C = table_t[IL * 256 + IR], t = stereo_mi_table:
 * the stage's stereo_mi_tables(mi_tiles) one after the other, as mi_tables_compute writes them)
 * the next frames match with; the CPU stage's host side computes them (stage_cpu_mi_prepare:
 * the hierarchy, or the previous frame's disparity) and stereo.c sets them before each frame.
 * Refused while a frame is in flight and for other costs. */
stereo_status stage_cuda_set_table(stage_cuda *s, const uint8_t *table, char *err, size_t errlen);

/* Stage 9's settings for the next frames (stereo_set_postfilter checked them); clear: empty the
 * temporal filter's state too. Refused while a frame is in flight. */
stereo_status stage_cuda_set_postfilter(stage_cuda *s, const stereo_postfilter *f, int clear,
                                        char *err, size_t errlen);

/* For benchmarks: stage_cuda_upload copies a frame's images into the stage's input buffers (rebuilding the
 * graph if the format changed); stage_cuda_replay then runs the frame's kernels (rectification to
 * the LR check) on it and returns their GPU time in ms, measured with events around the graph
 * (or, with profiling on, around the kernel-by-kernel launches). */
stereo_status stage_cuda_upload(stage_cuda *s, stage_cuda_views views, char *err, size_t errlen);
stereo_status stage_cuda_replay(stage_cuda *s, float *ms, char *err, size_t errlen);

/* The asynchronous path (stereo.h describes the ownership protocol). */
stereo_status stage_cuda_frame_alloc(stage_cuda *s, size_t bytes, void **out, char *err,
                                     size_t errlen);
void stage_cuda_frame_free(stage_cuda *s, void *frame);
stereo_status stage_cuda_submit(stage_cuda *s, stage_cuda_views views, int colormap, int lo, int hi, char *err, size_t errlen);
stereo_status stage_cuda_wait(stage_cuda *s, stereo_result *out, char *err, size_t errlen);

/* Profiling: when on, frames run kernel by kernel with events between the stages (slower than
 * the graph); stage_cuda_profile then gives each stage's time of the last frame. */
void stage_cuda_set_profiling(stage_cuda *s, int on);
int stage_cuda_profile(const stage_cuda *s, const char **names, float *ms, int max);

/* Colour-maps the last disparity into rgba (4 bytes per pixel, pitch a multiple of 4) on the
 * GPU with the colormap.h rule over the colour range lo..hi (16ths of a pixel, lo < hi); rgba is
 * host memory. stage_cuda_submit colours its frame over lo..hi the same way. */
stereo_status stage_cuda_colorize(stage_cuda *s, int colormap, int lo, int hi, uint8_t *rgba,
                                  size_t pitch, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
