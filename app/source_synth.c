/* SPDX-License-Identifier: Apache-2.0 */
/* source_synth.c — the generated scene (hal/synth.h) as a frame source (input synth://),
 * rendered straight into the stage's frames; animated: the scene time is the time since the
 * first read, or the pre-rendered loop of frame_source_prerender. */
#include "source_backend.h"

#include <stdlib.h>
#include <string.h>

#include "synth.h"

typedef struct {
    synth *scene;
    int64_t t0_ns;
    long count;
    uint8_t *ring;             /* frame_source_prerender: ring_n pairs (left, right), or NULL */
    int ring_n;
    double ring_period;        /* scene time between two ring frames, s */
} synth_source;

static frame_status synth_read(frame_source *s, uint8_t *l, uint8_t *r, frame_pair *out,
                               int timeout)
{
    synth_source *g = s->state;
    int w = s->info.width, h = s->info.height;
    int64_t now = source_now_ns();
    if (g->count == 0)
        g->t0_ns = now;
    double t;
    if (g->ring) { /* pre-rendered: a copy, the scene time of the ring frame */
        size_t n = (size_t)w * h;
        long i = g->count % g->ring_n;
        memcpy(l, g->ring + 2 * n * (size_t)i, n);
        memcpy(r, g->ring + 2 * n * (size_t)i + n, n);
        t = (double)i * g->ring_period;
    } else {
        t = (double)(now - g->t0_ns) * 1e-9;
        if (synth_render_views(g->scene, t, l, r, 1, (size_t)w, s->message,
                               sizeof s->message) != 0)
            return FRAME_ERROR;
    }
    out->left = (stereo_image){l, w, h, (size_t)w, STEREO_PIX_GREY8};
    out->right = (stereo_image){r, w, h, (size_t)w, STEREO_PIX_GREY8};
    out->timestamp_ns = now;
    out->scene_t = t;
    out->index = g->count++;
    return FRAME_OK;
}

static void synth_close(frame_source *s)
{
    synth_source *g = s->state;
    synth_destroy(g->scene);
    free(g->ring);
    free(g);
}

int frame_source_prerender(frame_source *s, int frames, char *err, size_t errlen)
{
    if (s->ops != &source_synth_ops) {
        say(err, errlen, "--synth-prerender: only the generated scene (source synth) is rendered");
        return -1;
    }
    synth_source *g = s->state;
    size_t n = (size_t)s->info.width * s->info.height;
    if (frames < 1 || (size_t)frames > SIZE_MAX / (2 * n)) {
        say(err, errlen, "--synth-prerender: %d frames: at least 1", frames);
        return -1;
    }
    uint8_t *ring = malloc(2 * n * (size_t)frames);
    if (!ring) {
        say(err, errlen, "--synth-prerender: %d frames of %dx%d: out of memory (%.0f MB)", frames,
            s->info.width, s->info.height, 2.0 * n * frames / 1e6);
        return -1;
    }
    /* the animation at the source's rate (30 frames per second of scene time when unpaced) */
    double period = 1.0 / (s->info.fps > 0 ? s->info.fps : 30.0);
    for (int i = 0; i < frames; i++)
        if (synth_render_views(g->scene, i * period, ring + 2 * n * (size_t)i,
                               ring + 2 * n * (size_t)i + n, 1, (size_t)s->info.width, err,
                               errlen) != 0) {
            free(ring);
            return -1;
        }
    free(g->ring);
    g->ring = ring;
    g->ring_n = frames;
    g->ring_period = period;
    return 0;
}

/* synth://?width=W&height=H&fps=F overrides [synth] width, height, fps. */
static frame_status synth_open(frame_source *s, const live_config *cfg, const source_plan *plan,
                               char *err, size_t errlen)
{
    const source_uri *u = &plan->uri[0];
    int w = u->width >= 0 ? u->width : cfg->synth_width;
    int h = u->height >= 0 ? u->height : cfg->synth_height;
    int fps = u->fps >= 0 ? u->fps : cfg->synth_fps;
    synth_source *g = calloc(1, sizeof *g);
    if (!g) {
        say(err, errlen, "synth: out of memory");
        return FRAME_ERROR;
    }
    synth_params p = {.width = w, .height = h, .seed = 1};
    if (synth_create(&p, &g->scene, err, errlen) != 0) {
        free(g);
        return FRAME_ERROR;
    }
    s->state = g;
    /* paced, it is live (the stage gets the newest pair, older ones are dropped); unpaced
     * (fps 0) it is delivered on demand, as fast files are: nothing dropped, nothing wasted */
    s->info = (frame_source_info){w, h, (size_t)w * h, fps > 0, fps, 1};
    return FRAME_OK;
}

const source_ops source_synth_ops = {
    .name = "synth", .open = synth_open, .read = synth_read, .close = synth_close,
};
