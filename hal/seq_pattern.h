/* SPDX-License-Identifier: Apache-2.0 */
/* seq_pattern.h — the printf pattern of an image sequence ('left_%04d.png'): one frame-number
 * conversion, checked, and a frame's name made from it. Shared by sequence.c (the frame lists),
 * outpath.c (outputs written as patterns) and the programs' option checks; sequence.h includes
 * it. libc only. Errors are one line in err; nothing is printed.
 */
#ifndef STEREO_SEQ_PATTERN_H
#define STEREO_SEQ_PATTERN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether pattern has exactly one frame-number conversion (%d, %i or %u with flags 0-+ and
 * a width of up to 2 digits; %% is a literal %). 0, or -1 with "what: 'pattern' ..." in err. */
int seq_check_pattern(const char *what, const char *pattern, char *err, size_t errlen);

/* Frame k's name from a checked pattern (one frame-number conversion). 0, or -1 when it does
 * not fit in buf. */
int seq_frame_path(const char *pattern, long k, char *buf, size_t len);

/* Whether the path holds a '%' (a pattern rather than one file). */
int seq_is_pattern(const char *path);

#ifdef __cplusplus
}
#endif
#endif
