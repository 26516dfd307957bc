/* SPDX-License-Identifier: Apache-2.0 */
/* output_file.c — file://DIR/NAME_%06d.EXT: one file per frame, named by the frame's number,
 * written atomically (hal/outpath.h: a temporary file beside it, renamed into place), so a
 * reader of the folder, or a run killed mid-write, never sees half a file:
 *   .pfm  the disparity in pixels, float (+inf = invalid); ?depth=1: depth in metres
 *   .png  16-bit, 256 * disparity (0 = invalid); ?depth=1: depth in millimetres (hal/depth.h)
 *   .ply  the point cloud, grey from the rectified left view (hal/depth.h)
 * the same files stereo-match writes. The folder is checked with the other outputs before the
 * run (stereo_live.c). A kill -9 cannot remove the temporary file of the write it interrupts;
 * opening the output removes such leftovers of its own pattern (NAME_NNNNNN.EXT.tmp.XXXXXX).
 */
#include "output_backend.h"

#include <limits.h>
#include <dirent.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_io.h"
#include "outpath.h"
#include "sequence.h"

typedef struct {
    output_uri uri;
    output_setup setup;
} file_output;

/* Whether name is one of the pattern's frames (base: its basename) with OUTPATH_TMP_SUFFIX
 * after it (".tmp." and 6 characters): a temporary file of this output's own writes. */
static int is_own_temp(const char *name, const char *base)
{
    size_t n = strlen(name), tlen = strlen(OUTPATH_TMP_SUFFIX);
    char frame[NAME_MAX + 1];
    long k;
    if (n <= tlen || n - tlen > NAME_MAX || strncmp(name + n - tlen, ".tmp.", 5) != 0)
        return 0;
    memcpy(frame, name, n - tlen);
    frame[n - tlen] = '\0';
    return outpath_pattern_frame(base, frame, 0, &k);
}

static void remove_stale_temps(const char *pattern)
{
    char dir[OUTPUT_URI_MAX];
    snprintf(dir, sizeof dir, "%s", pattern);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : pattern;
    if (slash)
        *slash = '\0';
    DIR *d = opendir(slash ? (dir[0] ? dir : "/") : ".");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_own_temp(e->d_name, base))
            continue;
        char path[2 * OUTPUT_URI_MAX];
        snprintf(path, sizeof path, "%s%s%s", slash ? (dir[0] ? dir : "") : "", slash ? "/" : "",
                 e->d_name);
        unlink(path);
    }
    closedir(d);
}

static int file_open(const output_uri *u, const output_setup *s, void **state, char *err,
                     size_t errlen)
{
    if (u->format == OUT_FILE_PNG && !u->depth && s->min_disparity < 0) {
        snprintf(err, errlen,
                 "%s: min_disparity %d gives negative disparities, which a 16-bit PNG (256 * d, "
                 "0 = invalid) cannot hold: write .pfm files",
                 u->target, s->min_disparity);
        return -1;
    }
    file_output *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    f->uri = *u;
    f->setup = *s;
    remove_stale_temps(u->target);
    *state = f;
    return 0;
}

static int file_write(void *state, const output_frame *fr, char *err, size_t errlen)
{
    const file_output *f = state;
    char path[OUTPUT_URI_MAX + 32];
    if (seq_frame_path(f->uri.target, (long)fr->number, path, sizeof path) != 0) {
        snprintf(err, errlen, "frame %llu: the name does not fit", (unsigned long long)fr->number);
        return -1;
    }
    if (f->uri.format == OUT_FILE_PLY)
        return depth_write_ply(path, fr->disparity, fr->width, fr->height, &f->setup.cam,
                               fr->rectified, 1, NULL, err, errlen);
    if (f->uri.depth)
        return depth_write_image(path, fr->disparity, fr->width, fr->height, &f->setup.cam, err,
                                 errlen);
    return disparity_write(path, fr->disparity, fr->width, fr->height, err, errlen);
}

static void file_close(void *state) { free(state); }

const output_backend output_file_backend = {
    OUT_FILE, OUTPUT_NEEDS_DISPARITY | OUTPUT_NEEDS_RECTIFIED, file_open, file_write, NULL, NULL,
    file_close, NULL, NULL,
};
