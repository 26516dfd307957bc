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
 *    of one, and no temporary file behind (outpath_remove_temps_on_signals: not even when a
 *    signal ends the program mid-write).
 * 3. open_input_file: an input is opened without blocking and only when it is a regular file, so
 *    a FIFO or a device named as a file is refused rather than waited on forever.
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

/* The suffix of atomic_write_file's temporary files; outpath_check counts it in a name's length. */
#define OUTPATH_TMP_SUFFIX ".tmp.XXXXXX"

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
 *    file or directory"
 * A name is refused when it, with OUTPATH_TMP_SUFFIX added, is longer than its folder's file
 * system takes (NAME_MAX) or the path longer than PATH_MAX: the temporary file must fit. */
int outpath_check(const outpath_file *outputs, int n_out, const outpath_file *inputs, int n_in,
                  char *err, size_t errlen);

/* Whether name is frame k of a pattern (one frame-number conversion, as hal/sequence.h checks
 * them) for some k >= first: the pattern's own formatting of k (an int) gives name exactly.
 * 1 with *k set, else 0. */
int outpath_pattern_frame(const char *pattern, const char *name, long first, long *k);

/* A folder a program fills with files of its own (a recording): it must be missing (created later
 * by the program, in a folder that exists and takes new files) or an empty directory, and none of
 * files[0..n) (the run's inputs and outputs) may lie in it. Returns 0, or -1 with one line:
 *   "--record 'rec' holds files already ('left_000000.png' and 11 more); name a new or empty
 *    folder"
 *   "--record 'rec' would hold --screenshot 'rec/x.png'; it takes a new or empty folder of its own"
 */
int outpath_check_folder(const char *what, const char *dir, const outpath_file *files, int n,
                         char *err, size_t errlen);

/* Every file one run reads and writes, collected before any work and checked at once: the
 * names are copied (add), outputs checked against inputs and each other (outpath_check), then
 * against a folder of its own when one is named. An add that runs out of memory makes the
 * check fail. */
typedef struct {
    outpath_file *file;   /* inputs and outputs in the order added */
    unsigned char *is_out;      /* 0 an input, 1 an output, 2 / 3 an output pattern from
                                   frame 0 / 1 (outpath_add_pattern) */
    int n, cap, nomem;
} outpath_registry;

void outpath_add(outpath_registry *r, int is_output, const char *what, const char *path);
/* An output written as a printf pattern of a frame number, from first (0 or 1) on, without a
 * known end: a file:// output (frames 1, 2, ...) or a GStreamer multifilesink (0, 1, ...). Its
 * first frames are checked as outputs (the folder, links, the same file); then no file of the
 * run may be a name the pattern makes (outpath_pattern_frame: same resolved folder), whether it
 * exists or not, no other pattern in that folder may make one of its names (tried at the frame
 * numbers where different paddings meet), and no file that exists in the folder under such a
 * name may be a file of the run named elsewhere (device and inode: a link, a hard link):
 *   "frame 3 of --output 'cfg/c_%06d.pfm' would replace --config 'cfg/c_000003.pfm'; choose
 *    another name"
 * The pattern needs one frame-number conversion (seq_check_pattern), in the file's name. */
void outpath_add_pattern(outpath_registry *r, const char *what, const char *pattern, int first);
/* Each input that exists must be a regular file (input_is_regular); then outpath_check of the
 * outputs against the inputs, then the patterns' names, then (folder_what, folder non-NULL and
 * not empty) outpath_check_folder of every file. 0, or -1 with err. */
int outpath_registry_check(const outpath_registry *r, const char *folder_what,
                           const char *folder, char *err, size_t errlen);
void outpath_registry_free(outpath_registry *r);

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

/* Installs handlers of SIGINT, SIGTERM, SIGHUP and SIGQUIT that remove the temporary files of
 * atomic_write_file calls in progress, then end the program by the same signal (the default
 * action); a signal the program was started ignoring stays ignored. For programs that have no
 * handlers of their own (stereo-match, the tools). */
void outpath_remove_temps_on_signals(void);

/* The handler itself, async-signal-safe, for a program's own signal handler: removes the
 * temporary files of writes in progress, then sets sig's default action and raises it, so that
 * the program ends by sig once the handler returns. */
void outpath_remove_temps_and_die(int sig);

/* Opens path for reading, refusing anything but a regular file without blocking: the open is
 * O_NONBLOCK (a FIFO without a writer or a device would otherwise block in open or read), then
 * the file is checked and the flag cleared. NULL with why set to "cannot open: REASON" or "is a
 * FIFO, not a regular file" (directory, device, socket) when the file cannot be read as one. */
FILE *open_input_file(const char *path, char *why, size_t whylen);

/* 0 when path is a regular file or does not exist (its reader says so); -1 with why set as
 * open_input_file's when it exists and is something else (checked without opening it). */
int input_is_regular(const char *path, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
