/* SPDX-License-Identifier: Apache-2.0 */
/* source_files.c — two printf-patterned image sequences (left_%04d.png, ...) as a frame source
 * (left/right file://PATTERN, or the older [source] type = files with [files] left/right),
 * optionally looped ([files] loop), paced by the caller at [files] fps.
 *
 * More views ([stereo] baselines, [source] view2 ... file://PATTERN): one sequence per view.
 * The reference's sequence sets the frames: where it ends, the sequence ends (or loops). A
 * missing file of another view is that view lost for that frame (a camera that dropped out of
 * a recording): the frame is delivered with the view's lost bit and counted as its drop. All
 * views of one file index are one moment: they get one timestamp (skew 0). */
#include "source_backend.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image_io.h"
#include "outpath.h"
#include "sequence.h"

typedef struct {
    char pattern[FRAME_MAX_VIEWS][CONFIG_PATH_MAX];
    int views;
    long first, next;
    int loop, channels;
    uint64_t drops[FRAME_MAX_VIEWS]; /* files missing, per view */
} files_source;

static void file_path(const files_source *f, int side, long index, char *buf, size_t len)
{
    seq_frame_path(f->pattern[side], index, buf, len); /* checked by live_config_check_pattern */
}

/* 1: a regular file; 0: none; -1: something else (a FIFO, a device), with the message set:
 * refused rather than taken for the end of the sequence or waited on. */
static int file_exists(frame_source *s, const char *path)
{
    char why[64];
    if (input_is_regular(path, why, sizeof why) != 0) {
        say(s->message, sizeof s->message, "files: %s %s", path, why);
        return -1;
    }
    struct stat st;
    return stat(path, &st) == 0;
}

/* Reads one side into buf; the image must have the size and channels of the first one. */
static frame_status files_read_side(frame_source *s, int side, long index, uint8_t *buf)
{
    files_source *f = s->state;
    char path[PATH_MAX + CONFIG_PATH_MAX];
    image im = {0};
    file_path(f, side, index, path, sizeof path);
    if (image_read8(path, &im, s->message, sizeof s->message) != 0)
        return FRAME_ERROR;
    if (im.width != s->info.width || im.height != s->info.height || im.channels != f->channels) {
        say(s->message, sizeof s->message, "%s: %dx%d with %d channel(s), the sequence is %dx%d "
            "with %d", path, im.width, im.height, im.channels, s->info.width, s->info.height,
            f->channels);
        image_free(&im);
        return FRAME_ERROR;
    }
    memcpy(buf, im.data, (size_t)im.width * im.height * im.channels);
    image_free(&im);
    return FRAME_OK;
}

static frame_status files_read(frame_source *s, uint8_t *const buf[], frame_pair *out,
                               int timeout)
{
    files_source *f = s->state;
    char path[PATH_MAX + CONFIG_PATH_MAX];
    file_path(f, 0, f->next, path, sizeof path);
    int have = file_exists(s, path);
    if (have < 0)
        return FRAME_ERROR;
    if (!have) {
        if (!f->loop || f->next == f->first)
            return FRAME_END;
        f->next = f->first; /* loop */
    }
    frame_status st;
    int w = s->info.width, h = s->info.height;
    stereo_pixfmt fmt = f->channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8;
    int64_t now = source_now_ns();
    s->message[0] = '\0';
    for (int v = 0; v < f->views; v++) {
        if (v > 0 && f->views > 2) { /* a view's file missing: that view lost for this frame */
            file_path(f, v, f->next, path, sizeof path);
            int have_v = file_exists(s, path);
            if (have_v < 0)
                return FRAME_ERROR;
            if (!have_v) {
                f->drops[v]++;
                out->lost |= 1u << v;
                say(s->message, sizeof s->message, "files: view %d lost: no %s", v, path);
            }
        }
        if (!(out->lost & 1u << v) && (st = files_read_side(s, v, f->next, buf[v])) != FRAME_OK)
            return st;
        out->view[v] = (stereo_image){buf[v], w, h, (size_t)w * f->channels, fmt};
        out->view_timestamp_ns[v] = now;
        out->view_drops[v] = f->drops[v];
    }
    out->timestamp_ns = now;
    out->scene_t = 0;
    out->index = f->next++;
    return FRAME_OK;
}

static void files_close(frame_source *s) { free(s->state); }

static frame_status files_open(frame_source *s, const live_config *cfg, const source_plan *plan,
                               char *err, size_t errlen)
{
    files_source *f = calloc(1, sizeof *f);
    if (!f) {
        say(err, errlen, "files: out of memory");
        return FRAME_ERROR;
    }
    source_uri uris[FRAME_MAX_VIEWS];
    if (live_config_view_uris(cfg, plan, uris, err, errlen) != 0)
        goto fail;
    f->views = cfg->stereo.views > 2 ? cfg->stereo.views : 2;
    for (int i = 0; i < f->views; i++) {
        const char *pat = i < 2 ? plan->uri[i].target : uris[i].target;
        char why[256], key[16];
        say(key, sizeof key, i == 0 ? "left" : i == 1 ? "right" : "view%d", i);
        if (!pat[0]) {
            say(err, errlen, "files: %s pattern is empty (e.g. %s_%%04d.png)", key, key);
            goto fail;
        }
        if (live_config_check_pattern(key, pat, why, sizeof why)) {
            say(err, errlen, "files: %s", why);
            goto fail;
        }
        snprintf(f->pattern[i], sizeof f->pattern[i], "%s", pat);
    }
    /* sequences start at 0 or 1 */
    char path[PATH_MAX + CONFIG_PATH_MAX];
    f->first = -1;
    for (long k = 0; k <= 1 && f->first < 0; k++) {
        file_path(f, 0, k, path, sizeof path);
        int have = file_exists(s, path);
        if (have < 0) {
            say(err, errlen, "%s", s->message);
            goto fail;
        }
        if (have)
            f->first = k;
    }
    if (f->first < 0) {
        file_path(f, 0, 0, path, sizeof path);
        say(err, errlen, "files: no left image: neither %s nor the one numbered 1 exists", path);
        goto fail;
    }
    image im = {0};
    file_path(f, 0, f->first, path, sizeof path);
    if (image_read8(path, &im, err, errlen) != 0)
        goto fail;
    f->channels = im.channels;
    s->info = (frame_source_info){im.width, im.height,
                                  (size_t)im.width * im.height * im.channels, 0, cfg->files_fps, 0,
                                  f->views};
    image_free(&im);
    f->next = f->first;
    f->loop = cfg->files_loop;
    s->state = f;
    return FRAME_OK;
fail:
    free(f);
    return FRAME_ERROR;
}

const source_ops source_files_ops = {
    .name = "files", .open = files_open, .read = files_read, .close = files_close,
};
