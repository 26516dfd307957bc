/* SPDX-License-Identifier: Apache-2.0 */
/* stage_cpu.h — the CPU backend of the stereo stage, as seen by stereo.c.
 *
 * The pipeline of stereo.h (stages 1-9) on a pool of worker threads (parallel.h), each stage's
 * rows through its module (grey.h, rectify.h, transform.h, sgm.h and sgm_simd.h, block.h,
 * disparity.h, band.h, mi.h, multiview.h, postfilter.h, colormap.h): the reference the CUDA
 * backend (stage_cuda.h) reproduces bit for bit. Also the host side of cost mi on the CUDA
 * backend (stage_cpu_mi_host_create): its tables are computed on the CPU.
 *
 * stereo.c checks the parameters, maps and images before they come here, so a frame cannot fail.
 * Every buffer is allocated at create (the asynchronous path's two result slots at its first
 * frame). The environment variable STEREO_CPU_KERNELS names the SGM kernels (sgm_simd.h:
 * "reference" or an instruction set; the fused SIMD path by default).
 */
#ifndef STEREO_STAGE_CPU_H
#define STEREO_STAGE_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "stereo_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stage_cpu stage_cpu;

/* The bytes stage_cpu_create allocates for p and maps (NULL: none): stereo_cpu_bytes. */
uint64_t stage_cpu_bytes(const stereo_params *p, const stereo_map *maps);

/* maps: NULL or one per view (stereo_view_count(p)), copied into the stage. A stage that needs
 * more than 80 % of the machine's physical memory (stage_cpu_bytes) is refused before anything
 * is allocated: STEREO_ERR_NOMEM, with both figures in the message. */
stereo_status stage_cpu_create(const stereo_params *p, const stereo_map *maps, stage_cpu **out,
                               char *err, size_t errlen);
void stage_cpu_destroy(stage_cpu *s);

/* The images of a frame, as stereo.c checked them: views[0] the reference (left), views[1] view 1
 * (right), ... one per view. */
typedef const stereo_image *const *stage_cpu_views;

/* Runs one frame; its results stay until the next one (stage_cpu_disparity, ...). */
void stage_cpu_process(stage_cpu *s, stage_cpu_views views);

/* The last frame's results, width * height row-major (stereo.h: stereo_disparity, ...):
 * disparity_right is written with the LR check only, confidence is NULL unless p->confidence,
 * rectified is the grey image matched (right: view 1 unshifted). */
const int16_t *stage_cpu_disparity(const stage_cpu *s);
const int16_t *stage_cpu_disparity_right(const stage_cpu *s);
const uint8_t *stage_cpu_confidence(const stage_cpu *s);
const uint8_t *stage_cpu_rectified(const stage_cpu *s, int right);

/* How far the frame running now (in another thread) has got, in per mille (stereo_progress). */
int stage_cpu_progress(const stage_cpu *s);

/* Stage 9's settings for the next frames (stereo_set_postfilter checked them); clear: empty the
 * temporal filter's state too. */
void stage_cpu_set_postfilter(stage_cpu *s, const stereo_postfilter *f, int clear);

/* Colour-maps the last left disparity into rgba (4 bytes per pixel, pitch a multiple of 4) with
 * the colormap.h rule over the colour range lo..hi (16ths of a pixel, lo < hi). */
void stage_cpu_colorize(const stage_cpu *s, int colormap, int lo, int hi, uint8_t *rgba,
                        size_t pitch);

/* The asynchronous path (stereo.h describes the ownership protocol): stage_cpu_submit runs the
 * frame and copies its results, coloured over lo..hi, into the next of two slots, which
 * stage_cpu_wait hands out. */
stereo_status stage_cpu_submit(stage_cpu *s, stage_cpu_views views, int colormap, int lo, int hi,
                               char *err, size_t errlen);
void stage_cpu_wait(stage_cpu *s, stereo_result *out);

/* Cost mi: what the last frame did (stereo_mi_status); -1 before the first frame. */
int stage_cpu_mi_status(const stage_cpu *s, stereo_mi_info *out);

/* ---- cost mi on the CUDA backend: the host side ----------------------------------------------
 * A stage of the host side only (no matching buffers): the pair's grey images (rectified by its
 * maps, NULL: none), the MI tables, the hierarchy's pyramid and the levels' disparities. Each
 * frame, stage_cpu_mi_prepare computes the full-size table (stage_cpu_mi_table) from the
 * hierarchy, whose levels `level` matches with the level's table into disp and disp_right
 * (f: the level of mi.h, views: its grey pair), or from the previous frame's disparity; after
 * the frame, stage_cpu_mi_finish takes its left disparity (kept for the next warm frame). */
typedef stereo_status (*stage_cpu_mi_level)(void *ctx, int f, stage_cpu_views views,
                                            const uint8_t *table, int16_t *disp,
                                            int16_t *disp_right, char *err, size_t errlen);
stereo_status stage_cpu_mi_host_create(const stereo_params *p, const stereo_map *maps,
                                       stage_cpu **out, char *err, size_t errlen);
stereo_status stage_cpu_mi_prepare(stage_cpu *s, stage_cpu_views views, stage_cpu_mi_level level,
                                   void *ctx, char *err, size_t errlen);
const uint8_t *stage_cpu_mi_table(const stage_cpu *s);
void stage_cpu_mi_finish(stage_cpu *s, const int16_t *disp);

#ifdef __cplusplus
}
#endif
#endif
