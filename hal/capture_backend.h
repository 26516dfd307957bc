/* SPDX-License-Identifier: Apache-2.0 */
/* capture_backend.h — what a capture backend provides (private to hal/capture*.c and backends).
 *
 * Each backend lives in its own file and exports one capture_ops table; its functions are static
 * and carry the same names in every backend (backend_open, backend_next, ...), so the files read
 * alike. capture.c checks the configuration and fills in its defaults before backend_open sees
 * it, and routes every public call through the table.
 */
#ifndef STEREO_CAPTURE_BACKEND_H
#define STEREO_CAPTURE_BACKEND_H

#include <stdarg.h>

#include "capture.h"

typedef struct {
    const char *name;
    /* cfg has its defaults applied (buffers, retry_ms, max_skew_ns) and is checked. */
    capture_status (*open)(const capture_config *cfg, void **state, char *err, size_t errlen);
    capture_status (*next)(void *state, capture_set *out, int timeout_ms);
    void (*release)(void *state, capture_set *s);
    void (*stats)(const void *state, capture_stats *out);
    const char *(*message)(const void *state);
    void (*close)(void *state);
    /* USERPTR (capture.h); camera is 0..ncameras-1, checked */
    capture_io (*io_mode)(const void *state, int camera, const char **why);
    size_t (*buffer_bytes)(const void *state, int camera);
    capture_status (*give_buffers)(void *state, int camera, void *const *buffers, int n,
                                   size_t bytes, char *err, size_t errlen);
    void (*take_back_buffers)(void *state);
} capture_ops;

extern const capture_ops capture_v4l2_pair_ops;

/* One log line through cfg->log (or stderr as "capture: <line>"). */
void capture_log(const capture_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* An empty frame / pair / set (data NULL, buffer -1). */
void capture_frame_clear(capture_frame *f);
void capture_pair_clear(capture_pair *p);
void capture_set_clear(capture_set *s, int n);

#endif
