/* SPDX-License-Identifier: Apache-2.0 */
/* app/libc_only/not_built.c — stand-ins for what the CUDA-and-libc-only build of the live app
 * (build/gpu/stereo-live-headless) leaves out, as gpu/cuda_none.c stands in for CUDA: each
 * refuses with "not built in this binary". live_options.c refuses the options that would reach
 * them before anything is opened, so these are only the linker's due:
 *   - ini_parse_stream: app/config_file.c's live_config_load reads INI files through inih;
 *   - capture_v4l2_pair_ops: hal/capture.c (linked for capture_format_from_str and the other
 *     name tables the configuration uses) routes to the V4L2 backend (libv4l2).
 */
#include <stdio.h>

#include "capture_backend.h"
#include "ini.h" /* app/libc_only/ini.h */

int ini_parse_stream(ini_reader reader, void *stream, ini_handler handler, void *user)
{
    (void)reader, (void)stream, (void)handler, (void)user;
    fprintf(stderr, "stereo-live: not built in this binary: configuration files (inih)\n");
    return 1; /* config_file.c: "FILE:1: cannot parse this line" */
}

static capture_status v4l2_not_built(const capture_config *cfg, void **state, char *err,
                                     size_t errlen)
{
    (void)cfg;
    *state = NULL;
    snprintf(err, errlen, "not built in this binary: V4L2 cameras (libv4l2)");
    return CAPTURE_ERR_NODEV;
}

/* capture_open calls only open, which fails: the other members are never reached */
const capture_ops capture_v4l2_pair_ops = {.name = "v4l2 pair (not built)",
                                           .open = v4l2_not_built};
