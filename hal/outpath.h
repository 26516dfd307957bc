/* SPDX-License-Identifier: Apache-2.0 */
/* outpath.h — the two promises every program makes about the files it writes:
 *
 * 1. outpath_check, called before any work: an output never names an input or another output
 *    of the same run (compared as files: device and inode where the file exists, else the
 *    resolved folder plus the file name), is never a symbolic link, a directory, or anything else
 *    that exists and is not a regular file (devices, FIFOs and sockets, /dev/null included), and
 *    its folder exists and is writable.
 * 2. atomic_write_file: an output is written to "<path>.tmp.XXXXXX" in its own folder and renamed
 *    into place, so an interrupted or failed run leaves the old file or the new one, never half
 *    of one, and no temporary file behind.
 *
 * libc only (built into libhal_core for the GPU machine too). Library code returns the error;
 * the programs print it after their name and exit (status 2 for a refused output).
 */
#ifndef STEREO_OUTPATH_H
#define STEREO_OUTPATH_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A file a program reads or writes, with the name the user knows it by in messages: an option
 * ("--color") or an argument ("output", "input LEFT"). A NULL or empty path is skipped. */
typedef struct {
    const char *what;
    const char *path;
} outpath_file;

/* Checks outputs[0..n_out) against each other and against inputs[0..n_in) (inputs may be
 * missing: their own reader reports that). Returns 0, or -1 with one line in err such as
 *   "output 'left.png' is the same file as input LEFT 'left.png'; choose another name"
 *   "--screenshot 'shot.png' is a symbolic link; outputs are not written through links"
 *   "--stats-json '/nonexistent/x.json': cannot write into the folder '/nonexistent': No such
 *    file or directory"  */
int outpath_check(const outpath_file *outputs, int n_out, const outpath_file *inputs, int n_in,
                  char *err, size_t errlen);

/* Writes one file's contents to f; returns 0 or -1 with err set. Need not check fwrite: the
 * caller checks the stream's error flag afterwards. */
typedef int (*file_writer)(FILE *f, const char *path, const void *ctx, char *err, size_t errlen);

/* Writes path atomically: write(f, path, ctx, ...) fills "<path>.tmp.XXXXXX" (mkstemp, same
 * directory, so rename cannot cross file systems), which is then renamed over path. On any
 * failure the temporary file is removed and an existing file at path is left untouched. Errors
 * read "<path>: <what failed>". */
int atomic_write_file(const char *path, file_writer write, const void *ctx, char *err,
                      size_t errlen);

/* atomic_write_file of a buffer already in memory: len bytes from data. */
int atomic_write_bytes(const char *path, const void *data, size_t len, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
