/* SPDX-License-Identifier: Apache-2.0 */
/* sequence.h — stereo image sequences: two printf patterns ('left_%04d.png') or two folders.
 *
 * Patterns: frames are numbered from 0 or 1 (whichever left file exists first) and run while the
 * left file of the next number exists; every left frame needs its right one, and a right frame
 * beyond the last left one is refused too (the lists must match).
 * Folders: the image files (.png, .jpg, .jpeg, .pgm, .ppm, any case; regular files, hidden ones
 * left out) of each folder, sorted by name (bytewise). Folders that share file names (KITTI's
 * image_2 / image_3) pair by name, and every name must be in both; folders with names of their
 * own (left_0001.png / right_0001.png) pair in sorted order, and the counts must be equal. A
 * mismatch names the first file without a partner.
 * libc only. Errors are one line in err; nothing is printed.
 */
#ifndef STEREO_SEQUENCE_H
#define STEREO_SEQUENCE_H

#include <stddef.h>

#include "seq_pattern.h" /* seq_check_pattern, seq_frame_path, seq_is_pattern */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int n;            /* frames */
    int from_dirs;    /* 1: folders, 0: patterns */
    char **left, **right;
    long *index;      /* patterns: each frame's number */
    char **stem;      /* folders: each left file's name without its extension */
} seq_list;

/* The frame list of two patterns or two folders (see the top). 0, or -1 with err. */
int seq_from_patterns(const char *left, const char *right, seq_list *out, char *err,
                      size_t errlen);
int seq_from_dirs(const char *left, const char *right, seq_list *out, char *err, size_t errlen);
void seq_free(seq_list *s);

/* Frame i's name for an output: with patterns, target is a pattern and gets the frame's
 * number; with folders, target is a folder and the file is TARGET/<left stem><ext>. 0, or -1
 * when the path does not fit in buf. */
int seq_output_path(const seq_list *s, int i, const char *target, const char *ext, char *buf,
                    size_t len);

#ifdef __cplusplus
}
#endif
#endif
