/* SPDX-License-Identifier: Apache-2.0 */
/* source_synth.c — the generated scene (hal/synth.h) as a frame source (input synth://),
 * rendered straight into the stage's frames; animated: the scene time is the time since the
 * first read, or the pre-rendered loop of frame_source_prerender.
 *
 * More than two views ([stereo] baselines): the reference and view 1 as the pair renders them
 * (synth_render_views), every other view i from a camera at the ratio b_i on the same bar
 * (synth_render_view), all at one scene time: exact ground truth for every view. Each view's
 * timestamp is the scene time it shows (so the skew the overlay shows is computed, and 0).
 * [synth] lose_view VIEW,FIRST,LAST reports that view lost for the source frames FIRST..LAST
 * (not rendered, counted as that view's drops): a camera unplugged and back, for testing. */
#include "source_backend.h"

#include <stdlib.h>
#include <string.h>

#include "synth.h"

typedef struct {
    synth *scene;
    int64_t t0_ns;
    long count;
    int views;
    double ratio[FRAME_MAX_VIEWS]; /* b_i of each view (0 the reference, 1 view 1) */
    int lose[3];                   /* [synth] lose_view: view, first, last (view 0: none) */
    uint64_t drops[FRAME_MAX_VIEWS];
    uint8_t *ring;             /* frame_source_prerender: ring_n frames of `views` images, or NULL */
    int ring_n;
    double ring_period;        /* scene time between two ring frames, s */
} synth_source;

/* Renders every view of scene time t into buf[] (view `skip` left out; -1: none). */
static int render(frame_source *s, double t, uint8_t *const buf[], int skip, char *err,
                  size_t errlen)
{
    synth_source *g = s->state;
    size_t pitch = (size_t)s->info.width;
    if (skip == 1) { /* the pair renderer draws both: the reference alone */
        if (synth_render_view(g->scene, t, 0.0, buf[0], 1, pitch, err, errlen) != 0)
            return -1;
    } else if (synth_render_views(g->scene, t, buf[0], buf[1], 1, pitch, err, errlen) != 0) {
        return -1;
    }
    for (int i = 2; i < g->views; i++)
        if (i != skip &&
            synth_render_view(g->scene, t, g->ratio[i], buf[i], 1, pitch, err, errlen) != 0)
            return -1;
    return 0;
}

static frame_status synth_read(frame_source *s, uint8_t *const buf[], frame_pair *out,
                               int timeout)
{
    synth_source *g = s->state;
    int w = s->info.width, h = s->info.height;
    int64_t now = source_now_ns();
    if (g->count == 0)
        g->t0_ns = now;
    int lost = g->lose[0] && g->count >= g->lose[1] && g->count <= g->lose[2] ? g->lose[0] : -1;
    double t;
    if (g->ring) { /* pre-rendered: a copy, the scene time of the ring frame */
        size_t n = (size_t)w * h;
        long i = g->count % g->ring_n;
        for (int v = 0; v < g->views; v++)
            if (v != lost)
                memcpy(buf[v], g->ring + n * ((size_t)i * g->views + v), n);
        t = (double)i * g->ring_period;
    } else {
        t = (double)(now - g->t0_ns) * 1e-9;
        if (render(s, t, buf, lost, s->message, sizeof s->message) != 0)
            return FRAME_ERROR;
    }
    if (lost > 0) {
        g->drops[lost]++;
        out->lost = 1u << lost;
        say(s->message, sizeof s->message, "synth: view %d lost (lose_view, frames %d..%d)", lost,
            g->lose[1], g->lose[2]);
    } else {
        s->message[0] = '\0';
    }
    for (int v = 0; v < g->views; v++) {
        out->view[v] = (stereo_image){buf[v], w, h, (size_t)w, STEREO_PIX_GREY8};
        /* the moment each view shows: the same scene time for all of them */
        out->view_timestamp_ns[v] = v == lost ? 0 : g->t0_ns + (int64_t)(t * 1e9);
        out->view_drops[v] = g->drops[v];
    }
    if (lost > 0) /* a lost view has no time of its own: the reference's, skew 0 */
        out->view_timestamp_ns[lost] = out->view_timestamp_ns[0];
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
    size_t n = (size_t)s->info.width * s->info.height * g->views; /* one frame of every view */
    if (frames < 1 || (size_t)frames > SIZE_MAX / n) {
        say(err, errlen, "--synth-prerender: %d frames: at least 1", frames);
        return -1;
    }
    uint8_t *ring = malloc(n * (size_t)frames);
    if (!ring) {
        say(err, errlen, "--synth-prerender: %d frames of %d views of %dx%d: out of memory "
            "(%.0f MB)", frames, g->views, s->info.width, s->info.height, (double)n * frames / 1e6);
        return -1;
    }
    /* the animation at the source's rate (30 frames per second of scene time when unpaced) */
    double period = 1.0 / (s->info.fps > 0 ? s->info.fps : 30.0);
    size_t one = (size_t)s->info.width * s->info.height;
    for (int i = 0; i < frames; i++) {
        uint8_t *views[FRAME_MAX_VIEWS];
        for (int v = 0; v < g->views; v++)
            views[v] = ring + n * (size_t)i + one * (size_t)v;
        if (render(s, i * period, views, -1, err, errlen) != 0) {
            free(ring);
            return -1;
        }
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
    g->views = cfg->stereo.views > 2 ? cfg->stereo.views : 2;
    g->ratio[1] = 1.0;
    for (int i = 2; i < g->views; i++)
        g->ratio[i] = cfg->stereo.baseline[i] / (double)STEREO_BASELINE_SCALE;
    memcpy(g->lose, cfg->synth_lose, sizeof g->lose);
    if (g->lose[0] >= g->views) {
        say(err, errlen, "lose_view: view %d, but there are %d views", g->lose[0], g->views);
        free(g);
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
    s->info = (frame_source_info){w, h, (size_t)w * h, fps > 0, fps, 1, g->views};
    return FRAME_OK;
}

const source_ops source_synth_ops = {
    .name = "synth", .open = synth_open, .read = synth_read, .close = synth_close,
};
