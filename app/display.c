/* SPDX-License-Identifier: Apache-2.0 */
/* display.c — stereo-live's window (display.h): SDL2 textures written row by row at the pitch
 * SDL_LockTexture returns, the overlay and the colour bar drawn with SDL2_ttf, the keys (and
 * STEREO_LIVE_KEYS, the tests' keys), the screenshots and key p's point cloud and depth image.
 * Runs on the main thread; the pipeline only wakes it (display_wake).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "colormap.h"
#include "depth.h"
#include "display.h"
#include "image_io.h"
#include "legend.h"
#include "live_summary.h"
#include "rectify.h"

#define MIN_WINDOW_WIDTH 640    /* small images are scaled up by an integer factor to this */
#define P2_STEP 16              /* +/- keys */
#define GRID_LINES 16           /* horizontal lines of the pair view */

struct display {
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *disp;   /* stage size: the colour-mapped disparity */
    SDL_Texture *pair;   /* 2 x source width: left | right input */
    TTF_Font *font;
    int font_px, ttf_up;
    Uint32 wake_event;
    live_view view;
    colormap_id colormap;
    int auto_range, legend;      /* [display] color_range = auto, legend; keys a, l */
    colormap_range range;        /* the smoothed automatic range asked of the pipeline */
    int have_range;              /* range holds a value (else the next one is taken as is) */
    int paused, help, fullscreen;
    int mouse_x, mouse_y, mouse_in;
    int shown_any;
    int screenshots;
    int depth_saves;     /* key p */
    char note[OVERLAY_LINE];     /* key p's result on screen until note_until_ns */
    int64_t note_until_ns;
    int note_bad;
    char renderer[64];   /* video driver and renderer, for the log */
};

void display_wake(void *user)
{
    display *d = user;
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = d->wake_event;
    SDL_PushEvent(&e); /* thread-safe; a full queue only delays the next frame */
}

static void open_font(display *d, const live_config *cfg)
{
    int w, h;
    SDL_GetRendererOutputSize(d->ren, &w, &h);
    int px = h / 34;
    px = px < 11 ? 11 : px > 22 ? 22 : px;
    if (d->font && px == d->font_px)
        return;
    if (d->font)
        TTF_CloseFont(d->font);
    d->font = TTF_OpenFont(cfg->font, px);
    d->font_px = px;
    if (!d->font)
        report("font %s: %s (no overlay text)", cfg->font, TTF_GetError());
}

static void close_window(display *d)
{
    if (d->font)
        TTF_CloseFont(d->font);
    if (d->ttf_up)
        TTF_Quit();
    if (d->disp)
        SDL_DestroyTexture(d->disp);
    if (d->pair)
        SDL_DestroyTexture(d->pair);
    if (d->ren)
        SDL_DestroyRenderer(d->ren);
    if (d->win)
        SDL_DestroyWindow(d->win);
    SDL_Quit();
    memset(d, 0, sizeof *d);
}

/* SDL tries its Wayland driver when there is no X display. It connects through
 * libwayland-client, which prints "error: XDG_RUNTIME_DIR is invalid or not set in the
 * environment." when that variable is missing, although no compositor can be reached then (its
 * socket lives there, unless WAYLAND_DISPLAY is an absolute path). So in that case the Wayland
 * driver is left out of the drivers SDL tries: an SDL_VIDEODRIVER hint that lists SDL's own
 * order without it (a list, and a hint rather than only the environment variable, from SDL
 * 2.0.22 on; the environment, and a choice made there, stay as they are). 1 when the line may
 * still come (an older SDL), so that the "no display" message can explain it; else 0. */
static int leave_out_unreachable_wayland(void)
{
    const char *asked = SDL_getenv("SDL_VIDEODRIVER"), *run = SDL_getenv("XDG_RUNTIME_DIR"),
               *socket = SDL_getenv("WAYLAND_DISPLAY");
    if ((asked && asked[0]) || (run && run[0] == '/') || (socket && socket[0] == '/'))
        return 0;
    char others[256] = "";
    int wayland = 0;
    for (int i = 0; i < SDL_GetNumVideoDrivers(); i++) {
        const char *name = SDL_GetVideoDriver(i);
        if (strcmp(name, "wayland") == 0)
            wayland = 1;
        else if (strlen(others) + strlen(name) + 2 < sizeof others)
            snprintf(others + strlen(others), sizeof others - strlen(others), "%s%s",
                     others[0] ? "," : "", name);
    }
    SDL_version v;
    SDL_GetVersion(&v);
    if (!wayland)
        return 0;
    if (SDL_VERSIONNUM(v.major, v.minor, v.patch) < SDL_VERSIONNUM(2, 0, 22))
        return 1;
    SDL_SetHint("SDL_VIDEODRIVER", others); /* SDL_HINT_VIDEODRIVER, from 2.0.22 */
    return 0;
}

/* Opens the window in d. 0; -1 when there is no display (err says why). */
static int open_window(display *d, const app *a, char *err, size_t errlen)
{
    const live_config *cfg = &a->cfg;
    memset(d, 0, sizeof *d);
    d->view = cfg->view;
    d->colormap = cfg->colormap;
    d->auto_range = cfg->color_range_auto;
    d->legend = cfg->legend;
    d->fullscreen = cfg->fullscreen;
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1"); /* SIGINT/SIGTERM are ours */
    const char *wayland_line = leave_out_unreachable_wayland()
                                   ? "; the XDG_RUNTIME_DIR line above is SDL's Wayland driver "
                                     "finding no Wayland display either"
                                   : "";
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        snprintf(err, errlen, "%s%s", SDL_GetError(), wayland_line);
        SDL_Quit();
        return -1;
    }
    /* SDL falls back to a window in memory when there is no screen: that is "no display",
     * unless asked for by name (SDL_VIDEODRIVER=offscreen, for tests) */
    const char *driver = SDL_GetCurrentVideoDriver(), *asked = SDL_getenv("SDL_VIDEODRIVER");
    if (driver && (!strcmp(driver, "offscreen") || !strcmp(driver, "dummy")) &&
        !(asked && asked[0])) {
        snprintf(err, errlen, "SDL found no screen, only its %s driver%s", driver, wayland_line);
        SDL_Quit();
        return -1;
    }
    int w = cfg->window_width, h = cfg->window_height;
    if (w <= 0 || h <= 0) {
        int k = a->params.width < MIN_WINDOW_WIDTH ? MIN_WINDOW_WIDTH / a->params.width : 1;
        w = a->params.width * (k < 1 ? 1 : k);
        h = a->params.height * (k < 1 ? 1 : k);
    }
    Uint32 flags = SDL_WINDOW_RESIZABLE | (d->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
    if (!(d->win = SDL_CreateWindow("stereo-live", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                    w, h, flags))) {
        snprintf(err, errlen, "%s", SDL_GetError());
        close_window(d);
        return -1;
    }
    if (!(d->ren = SDL_CreateRenderer(d->win, -1, 0)) &&
        !(d->ren = SDL_CreateRenderer(d->win, -1, SDL_RENDERER_SOFTWARE))) {
        snprintf(err, errlen, "renderer: %s", SDL_GetError());
        close_window(d);
        return -1;
    }
    SDL_RendererInfo ri;
    snprintf(d->renderer, sizeof d->renderer, "%s %s", driver ? driver : "?",
             SDL_GetRendererInfo(d->ren, &ri) == 0 ? ri.name : "?");
    d->disp = SDL_CreateTexture(d->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                a->params.width, a->params.height);
    d->pair = SDL_CreateTexture(d->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                2 * a->params.width, a->params.height);
    if (!d->disp || !d->pair) {
        snprintf(err, errlen, "texture: %s", SDL_GetError());
        close_window(d);
        return -1;
    }
    if (TTF_Init() != 0)
        report("SDL_ttf: %s (no overlay text)", TTF_GetError());
    else {
        d->ttf_up = 1;
        open_font(d, cfg);
    }
    d->wake_event = SDL_RegisterEvents(1);
    return 0;
}

/* One input image's rows into RGBA texture rows (grey, RGB24, or YUYV's luma). */
static void input_to_rgba(const stereo_image *im, uint8_t *pixels, int pitch, int x0)
{
    for (int y = 0; y < im->height; y++) {
        const uint8_t *s = im->data + y * im->pitch;
        uint8_t *o = pixels + (size_t)y * pitch + (size_t)x0 * 4;
        for (int x = 0; x < im->width; x++, o += 4) {
            if (im->format == STEREO_PIX_RGB24) {
                o[0] = s[3 * x];
                o[1] = s[3 * x + 1];
                o[2] = s[3 * x + 2];
            } else {
                o[0] = o[1] = o[2] = s[im->format == STEREO_PIX_YUYV ? 2 * x : x];
            }
            o[3] = 255;
        }
    }
}

/* Copies a held frame into the textures, row by row at the pitch SDL gives. */
static void upload(display *d, const live_frame *f)
{
    void *px;
    int pitch;
    if (SDL_LockTexture(d->disp, NULL, &px, &pitch) == 0) {
        int w, h;
        SDL_QueryTexture(d->disp, NULL, NULL, &w, &h);
        for (int y = 0; y < h; y++)
            memcpy((uint8_t *)px + (size_t)y * pitch, f->result.rgba + y * f->result.rgba_pitch,
                   (size_t)w * 4);
        SDL_UnlockTexture(d->disp);
    }
    if (SDL_LockTexture(d->pair, NULL, &px, &pitch) == 0) {
        /* the rectified grey images the stage matched: rows are epipolar lines */
        int w, h;
        SDL_QueryTexture(d->pair, NULL, NULL, &w, &h);
        w /= 2;
        for (int i = 0; i < 2; i++) {
            stereo_image im = {f->result.rectified[i], w, h, (size_t)w, STEREO_PIX_GREY8};
            input_to_rgba(&im, px, pitch, i * w);
        }
        SDL_UnlockTexture(d->pair);
    }
}

/* The largest rect of the image's aspect centred in the output. */
static SDL_Rect fit_rect(SDL_Renderer *ren, int iw, int ih)
{
    int ow, oh;
    SDL_GetRendererOutputSize(ren, &ow, &oh);
    SDL_Rect r;
    if ((int64_t)ow * ih <= (int64_t)oh * iw) {
        r.w = ow;
        r.h = (int)((int64_t)ow * ih / iw);
    } else {
        r.h = oh;
        r.w = (int)((int64_t)oh * iw / ih);
    }
    r.x = (ow - r.w) / 2;
    r.y = (oh - r.h) / 2;
    return r;
}

/* The view's image size and where it is drawn. */
static SDL_Rect view_rect(const display *d, const app *a, int *iw, int *ih)
{
    *iw = d->view == VIEW_PAIR ? 2 * a->params.width : a->params.width;
    *ih = a->params.height;
    return fit_rect(d->ren, *iw, *ih);
}

/* The stage pixel under the mouse (the left image in the pair view). 0 if outside. */
static int cursor_pixel(const display *d, const app *a, int *x, int *y)
{
    int iw, ih;
    SDL_Rect r = view_rect(d, a, &iw, &ih);
    if (!d->mouse_in || d->mouse_x < r.x || d->mouse_y < r.y || d->mouse_x >= r.x + r.w ||
        d->mouse_y >= r.y + r.h)
        return 0;
    double u = (double)(d->mouse_x - r.x) / r.w, v = (double)(d->mouse_y - r.y) / r.h;
    if (d->view == VIEW_PAIR) {
        if (u >= 0.5)
            return 0;
        u *= 2;
    }
    *x = (int)(u * a->params.width);
    *y = (int)(v * a->params.height);
    return *x < a->params.width && *y < a->params.height;
}

static int text_width(display *d, const char *s)
{
    int w = 0, h = 0;
    if (d->font)
        TTF_SizeUTF8(d->font, s, &w, &h);
    return w;
}

static void draw_text(display *d, int x, int y, const char *s, SDL_Color c)
{
    if (!d->font || !s[0])
        return;
    SDL_Surface *surf = TTF_RenderUTF8_Blended(d->font, s, c);
    if (!surf)
        return;
    SDL_Texture *t = SDL_CreateTextureFromSurface(d->ren, surf);
    if (t) {
        SDL_Rect dst = {x, y, surf->w, surf->h};
        SDL_RenderCopy(d->ren, t, NULL, &dst);
        SDL_DestroyTexture(t);
    }
    SDL_FreeSurface(surf);
}

/* Lines of text on a dark box at (x, y). */
static void draw_box(display *d, int x, int y, char lines[][OVERLAY_LINE],
                     const SDL_Color *colors, int n)
{
    if (!d->font)
        return;
    int lh = TTF_FontLineSkip(d->font), w = 0, pad = d->font_px / 2;
    for (int i = 0; i < n; i++) {
        int tw = text_width(d, lines[i]);
        w = tw > w ? tw : w;
    }
    SDL_Rect box = {x, y, w + 2 * pad, n * lh + 2 * pad};
    SDL_SetRenderDrawBlendMode(d->ren, SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(d->ren, 0, 0, 0, 190);
    SDL_RenderFillRect(d->ren, &box);
    for (int i = 0; i < n; i++)
        draw_text(d, x + pad, y + pad + i * lh, lines[i], colors[i]);
}

static void draw_overlay(display *d, app *a, const live_stats *s)
{
    static const SDL_Color white = {235, 235, 235, 255}, red = {255, 96, 96, 255},
                           yellow = {255, 220, 90, 255};
    char lines[16][OVERLAY_LINE];
    SDL_Color colors[16];
    int n = 0;
    snprintf(lines[n], OVERLAY_LINE, "capture %.1f fps   stage %.1f fps  %.1f ms",
             a->rt.capture_fps, a->rt.stage_fps, a->rt.stage_ms);
    colors[n++] = white;
    snprintf(lines[n], OVERLAY_LINE, "latency %.0f ms   dropped %llu   frame %llu",
             a->rt.latency_ms, (unsigned long long)s->dropped, (unsigned long long)a->shown);
    colors[n++] = white;
    char method[48];
    if (a->method == STEREO_METHOD_BM)
        snprintf(method, sizeof method, "BM %dx%d %s", a->params.block, a->params.block,
                 stereo_cost_to_str(a->params.cost));
    else
        snprintf(method, sizeof method, "SGM %s %dp   P2 %d", stereo_cost_to_str(a->params.cost),
                 a->params.paths, a->p2);
    char band[16] = "";
    if (a->params.band)
        snprintf(band, sizeof band, "   band %d", a->params.band);
    snprintf(lines[n], OVERLAY_LINE, "%s%s   %dx%d   D %d   %s%s", live_pipeline_backend(a->pipe),
             live_pipeline_backend_note(a->pipe)[0] ? " (fallback)" : "", a->params.width,
             a->params.height, a->params.num_disparities, method, band);
    colors[n++] = white;
    const stereo_postfilter *pf = &a->params.post; /* as the keys k / o / n / i / t left them */
    if (pf->speckle_size || pf->vote || pf->interp || pf->fill || pf->temporal) {
        char speckle[32] = "";
        if (pf->speckle_size)
            snprintf(speckle, sizeof speckle, "   speckle < %d px", pf->speckle_size);
        snprintf(lines[n], OVERLAY_LINE, "post-filters%s%s%s%s%s", speckle,
                 pf->vote ? "   vote" : "", pf->interp ? "   interp" : "",
                 pf->fill ? "   fill" : "", pf->temporal ? "   temporal" : "");
        colors[n++] = white;
    }
    snprintf(lines[n], OVERLAY_LINE, "view %s   %s %s range%s", live_view_to_str(d->view),
             colormap_to_str(d->colormap), d->auto_range ? "auto" : "fixed",
             d->paused ? "   PAUSED" : "");
    colors[n++] = d->paused ? yellow : white;
    int vl = views_lines(a, s, lines[n], lines[n + 1], OVERLAY_LINE);
    if (vl) { /* more views: the rule, a lost view, each camera's skew and drops */
        colors[n++] = vl > 1 ? yellow : white;
        colors[n++] = white;
    }
    if (s->mi) { /* cost mi: did this frame start from the previous one, or from 1/16 */
        mi_counts(s, lines[n], OVERLAY_LINE);
        colors[n++] = s->mi_warm_last ? white : yellow;
    }
    if (s->source_stats[0]) { /* cameras: pairing skew and drops, to check the two are paired */
        /* a long line (a GStreamer pair's) in two, at the ", " nearest its middle, so that a
         * small window does not cut it off */
        const char *st = s->source_stats, *cut = NULL;
        const size_t len = strlen(st);
        for (const char *q = strstr(st, ", "); len > 60 && q; q = strstr(q + 2, ", "))
            if (!cut || labs((long)(q - st) - (long)len / 2) < labs((long)(cut - st) - (long)len / 2))
                cut = q;
        if (cut) {
            snprintf(lines[n], OVERLAY_LINE, "%.*s,", (int)(cut - st), st);
            colors[n++] = white;
            snprintf(lines[n], OVERLAY_LINE, "  %s", cut + 2);
        } else
            snprintf(lines[n], OVERLAY_LINE, "%s", st);
        colors[n++] = white;
    }
    if (s->recording) { /* the writer thread: pairs written, pairs it could not keep up with */
        snprintf(lines[n], OVERLAY_LINE, "recorded %llu   record drops %llu",
                 (unsigned long long)s->recorded, (unsigned long long)s->record_drops);
        colors[n++] = s->record_drops ? yellow : white;
    }
    int x, y;
    if (a->shown && cursor_pixel(d, a, &x, &y)) {
        int16_t v = a->disparity[(size_t)y * a->params.width + x];
        if (v == STEREO_INVALID)
            snprintf(lines[n], OVERLAY_LINE, "(%d, %d)  no disparity", x, y);
        else if (a->have_cam) { /* the millimetres of the depth PNG (hal/depth.h's rule) */
            unsigned mm = depth_mm(&a->cam, v);
            char z[48];
            if (mm)
                snprintf(z, sizeof z, "Z %u.%03u m", mm / 1000, mm % 1000);
            else
                snprintf(z, sizeof z, isfinite(depth_m(&a->cam, v)) ? "Z > 65.535 m"
                                                                    : "Z: no depth (d <= 0)");
            snprintf(lines[n], OVERLAY_LINE, "(%d, %d)  d %.2f px   %s", x, y,
                     v / (double)STEREO_SUBPIXEL_SCALE, z);
        }
        else
            snprintf(lines[n], OVERLAY_LINE, "(%d, %d)  d %.2f px%s", x, y,
                     v / (double)STEREO_SUBPIXEL_SCALE,
                     d->view == VIEW_DEPTH ? "   (depth needs a calibration or --focal/--baseline)" : "");
        colors[n++] = d->view == VIEW_DEPTH ? yellow : white;
    }
    if (s->message[0]) {
        snprintf(lines[n], OVERLAY_LINE, "%s", s->message);
        colors[n++] = red;
    }
    if (d->note[0] && monotonic_ns() < d->note_until_ns) { /* what key p did, for a while */
        snprintf(lines[n], OVERLAY_LINE, "%s", d->note);
        colors[n++] = d->note_bad ? yellow : white;
    }
    if (s->error[0]) {
        snprintf(lines[n], OVERLAY_LINE, "stopped: %s", s->error);
        colors[n++] = red;
    }
    int pad = d->font_px / 2;
    draw_box(d, pad, pad, lines, colors, n);

    if (d->help) {
        static const char *const keys[] = {
            "q / Esc   quit",      "Space     pause",
            "v         view: disparity, left, pair, depth",
            "c         colour map: turbo, jet, grey (next frame)",
            "a         colour range: fixed (search range) / auto",
            "l         legend (colour bar) on / off",
            "s         screenshot (PNG in the current folder)",
            "p         point cloud (PLY) and depth PNG (mm) of the frame",
            "f         full screen",
            "+ / -     P2 up / down, every path's (recreates the stage)",
            "m         method: SGM <-> block matching (recreates the stage)",
            "k / o / n speckle removal / region voting / interpolation on / off",
            "i / t     hole filling / temporal filter on / off",
            "h         this help",
        };
        enum { NK = sizeof keys / sizeof *keys };
        char help[NK][OVERLAY_LINE];
        SDL_Color hc[NK];
        for (int i = 0; i < NK; i++) {
            snprintf(help[i], OVERLAY_LINE, "%s", keys[i]);
            hc[i] = white;
        }
        int ow, oh;
        SDL_GetRendererOutputSize(d->ren, &ow, &oh);
        draw_box(d, ow / 4, oh / 3, help, hc, NK);
    }
}

/* The colour bar of the frame shown, bottom right of the image: its range (fixed, or the
 * automatic one the frame was coloured with) through the current map, ticks from legend_ticks
 * in pixels, or in metres with a calibration that gives the focal length and baseline (the
 * depth readout's). */
static void draw_legend(display *d, app *a)
{
    if (!d->legend || !d->font || !a->shown || (d->view != VIEW_DISPARITY && d->view != VIEW_DEPTH))
        return;
    int iw, ih;
    SDL_Rect v = view_rect(d, a, &iw, &ih);
    const int pad = d->font_px / 2, lh = TTF_FontLineSkip(d->font), bh = d->font_px;
    int bw = v.w * 2 / 5;
    bw = bw > 520 ? 520 : bw;
    if (bw < 60)
        return;
    const colormap_range r = a->shown_color;
    const double fb = a->have_cam ? a->cam.focal_px * a->cam.baseline : 0;
    const int bx = v.x + v.w - bw - 3 * pad, by = v.y + v.h - bh - lh - 4 * pad;
    SDL_Rect box = {bx - 2 * pad, by - pad, bw + 4 * pad, bh + lh + 3 * pad};
    SDL_SetRenderDrawBlendMode(d->ren, SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(d->ren, 0, 0, 0, 190);
    SDL_RenderFillRect(d->ren, &box);
    uint8_t lut[256 * 3], c[3];
    colormap_lut(d->colormap, lut);
    for (int x = 0; x < bw; x++) { /* the image's own rule: the ends are entries 0 and 255 */
        int16_t val = (int16_t)(r.lo + (int)((int64_t)x * (r.hi - r.lo) / (bw - 1)));
        colormap_disparity_rows(&val, 1, r, lut, c, 3, 3, 0, 1);
        SDL_SetRenderDrawColor(d->ren, c[0], c[1], c[2], 255);
        SDL_RenderDrawLine(d->ren, bx + x, by, bx + x, by + bh - 1);
    }
    static const SDL_Color white = {235, 235, 235, 255};
    legend_tick t[LEGEND_MAX_TICKS];
    int n = legend_ticks(r, fb, 2 + bw / (4 * d->font_px), t);
    int left_free = box.x, last_x = box.x + box.w; /* labels drawn so far end / start there */
    /* the last label (with the unit) first, then left to right where they do not touch */
    for (int k = 0; k < n; k++) {
        int i = k == 0 ? n - 1 : k - 1;
        if (k > 0 && i == n - 1)
            continue;
        int tx = bx + (int)lround(t[i].pos * (bw - 1));
        SDL_SetRenderDrawColor(d->ren, 235, 235, 235, 255);
        SDL_RenderDrawLine(d->ren, tx, by + bh, tx, by + bh + pad / 2);
        char label[32];
        snprintf(label, sizeof label, "%s%s", t[i].label, i == n - 1 ? (fb > 0 ? " m" : " px") : "");
        int tw = text_width(d, label), lx = tx - tw / 2;
        lx = lx + tw > box.x + box.w ? box.x + box.w - tw : lx < box.x ? box.x : lx;
        if (k == 0)
            last_x = lx;
        else if (lx < left_free || lx + tw + pad > last_x)
            continue;
        draw_text(d, lx, by + bh + pad / 2, label, white);
        if (k > 0)
            left_free = lx + tw + pad;
    }
}

/* The automatic colour range follows the frames shown: each frame's 1st-99th percentile range
 * (colormap_auto_range) is the target, and each end moves an eighth of the way towards it per
 * frame shown (at least 1/16 px), but not while it is within half a pixel of it. So the colours
 * neither flicker with the percentiles' frame-to-frame noise nor lag far behind a change of
 * scene (most of the way in about 16 frames); the pipeline colours the next frames with it. */
static int smooth_end(int cur, int target)
{
    int diff = target - cur;
    if (diff > -8 && diff < 8)
        return cur;
    int step = diff / 8;
    return cur + (step ? step : diff > 0 ? 1 : -1);
}

static void update_auto_range(display *d, app *a)
{
    colormap_range t;
    const stereo_params *p = &a->params;
    if (colormap_auto_range(a->disparity, (size_t)p->width * p->height, p->min_disparity,
                            p->num_disparities, &t) != 0)
        return; /* nothing valid: keep the range */
    if (!d->have_range) {
        d->range = t;
        d->have_range = 1;
    } else {
        d->range.lo = smooth_end(d->range.lo, t.lo);
        d->range.hi = smooth_end(d->range.hi, t.hi);
        if (d->range.hi - d->range.lo < 16)
            d->range.hi = d->range.lo + 16;
    }
    live_pipeline_set_color_range(a->pipe, d->range.lo, d->range.hi);
}

static void render(display *d, app *a, const live_stats *s)
{
    SDL_SetRenderDrawColor(d->ren, 0, 0, 0, 255);
    SDL_RenderClear(d->ren);
    if (d->shown_any) {
        int iw, ih;
        SDL_Rect dst = view_rect(d, a, &iw, &ih);
        if (d->view == VIEW_DISPARITY || d->view == VIEW_DEPTH) {
            SDL_RenderCopy(d->ren, d->disp, NULL, &dst);
        } else {
            SDL_Rect src = {0, 0, iw, ih}; /* left: the pair texture's left half */
            SDL_RenderCopy(d->ren, d->pair, &src, &dst);
        }
        SDL_SetRenderDrawBlendMode(d->ren, SDL_BLENDMODE_BLEND);
        if (d->view == VIEW_PAIR) { /* rows are epipolar lines once rectified: check by eye */
            SDL_SetRenderDrawColor(d->ren, 0, 255, 0, 150);
            for (int i = 0; i < GRID_LINES; i++) {
                int y = dst.y + (int)((i + 0.5) * dst.h / GRID_LINES);
                SDL_RenderDrawLine(d->ren, dst.x, y, dst.x + dst.w - 1, y);
            }
            SDL_RenderDrawLine(d->ren, dst.x + dst.w / 2, dst.y, dst.x + dst.w / 2,
                               dst.y + dst.h - 1);
        }
        if (d->view == VIEW_DEPTH && d->mouse_in) {
            SDL_SetRenderDrawColor(d->ren, 255, 255, 255, 200);
            SDL_RenderDrawLine(d->ren, d->mouse_x - 12, d->mouse_y, d->mouse_x + 12, d->mouse_y);
            SDL_RenderDrawLine(d->ren, d->mouse_x, d->mouse_y - 12, d->mouse_x, d->mouse_y + 12);
        }
    }
    draw_legend(d, a);
    draw_overlay(d, a, s);
}

/* The rendered (not yet presented) window as a PNG. */
static int save_window(display *d, const char *path)
{
    int w, h;
    char err[512];
    SDL_GetRendererOutputSize(d->ren, &w, &h);
    image img;
    if (image_alloc(&img, w, h, 3, 8) != 0) {
        report("%s: out of memory", path);
        return -1;
    }
    int rc = -1;
    if (SDL_RenderReadPixels(d->ren, NULL, SDL_PIXELFORMAT_RGB24, img.data, w * 3) != 0)
        report("%s: cannot read the window: %s", path, SDL_GetError());
    else if (image_write(path, &img, err, sizeof err) != 0)
        report("%s", err);
    else
        rc = 0;
    image_free(&img);
    return rc;
}

/* Key p: the shown frame's point cloud and depth image in the current folder, named as the
 * screenshots are: stereo-live-YYYYmmdd-HHMMSS-N.ply and ...-N-depth.png (16-bit mm). The
 * colours are the rectified left view: the input's RGB rectified by the stage's rule, or the
 * grey the stage matched. What happened goes to the log and on screen (why nothing was saved
 * without a camera). */
static void save_depth(display *d, app *a)
{
    d->note_until_ns = monotonic_ns() + 4000000000LL;
    d->note_bad = 1;
    if (!a->have_cam) {
        snprintf(d->note, sizeof d->note, "p: nothing saved: depth needs the camera (a "
                 "calibration in [calibration] maps, or --focal and --baseline)");
        report("%s", d->note);
        return;
    }
    if (!a->shown) {
        snprintf(d->note, sizeof d->note, "p: nothing saved: no frame shown yet");
        report("%s", d->note);
        return;
    }
    int w = a->params.width, h = a->params.height;
    const uint8_t *color = a->shown_grey;
    int channels = 1;
    uint8_t *rgb = NULL;
    if (a->shown_is_rgb) {
        const uint8_t *src = a->shown_rgb;
        if (a->have_maps) { /* the stage's bilinear rule, per channel */
            if ((rgb = malloc((size_t)w * h * 3)) != NULL)
                rectify_rows_interleaved(&a->maps[0], src, (size_t)a->info.width * 3, 3, rgb, 0,
                                         h);
            src = rgb;
        }
        if (src) {
            color = src;
            channels = 3;
        }
    }
    char name[64], ply[96], png[96], err[512];
    time_t t = time(NULL);
    strftime(name, sizeof name, "stereo-live-%Y%m%d-%H%M%S", localtime(&t));
    d->depth_saves++;
    snprintf(ply, sizeof ply, "%s-%d.ply", name, d->depth_saves);
    snprintf(png, sizeof png, "%s-%d-depth.png", name, d->depth_saves);
    size_t points = 0;
    if (depth_write_ply(ply, a->disparity, w, h, &a->cam, color, channels, &points, err,
                        sizeof err) != 0 ||
        depth_write_image(png, a->disparity, w, h, &a->cam, err, sizeof err) != 0) {
        snprintf(d->note, sizeof d->note, "p: %s", err);
    } else {
        snprintf(d->note, sizeof d->note, "saved %s (%zu points) and %s (frame %llu)", ply,
                 points, png, (unsigned long long)a->shown);
        d->note_bad = 0;
    }
    report("%s", d->note);
    free(rgb);
}

static void handle_key(display *d, app *a, SDL_Keycode k, int *quit, int *want_shot)
{
    switch (k) {
    case SDLK_q:
    case SDLK_ESCAPE: *quit = 1; break;
    case SDLK_SPACE:
        d->paused = !d->paused;
        live_pipeline_set_paused(a->pipe, d->paused);
        break;
    case SDLK_v: d->view = (live_view)((d->view + 1) % (VIEW_DEPTH + 1)); break;
    case SDLK_c:
        d->colormap = (colormap_id)((d->colormap + 1) % COLORMAP_COUNT);
        live_pipeline_set_colormap(a->pipe, d->colormap);
        break;
    case SDLK_a:
        d->auto_range = !d->auto_range;
        d->have_range = 0; /* auto: start from the next frame's range as it is */
        if (!d->auto_range)
            live_pipeline_set_color_range(a->pipe, 0, 0);
        report("colour range %s", d->auto_range ? "auto (1st-99th percentile)" : "fixed");
        break;
    case SDLK_l: d->legend = !d->legend; break;
    case SDLK_s: *want_shot = 1; break;
    case SDLK_p: save_depth(d, a); break;
    case SDLK_f:
        d->fullscreen = !d->fullscreen;
        SDL_SetWindowFullscreen(d->win, d->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        break;
    case SDLK_PLUS:
    case SDLK_EQUALS:
    case SDLK_KP_PLUS:
    case SDLK_MINUS:
    case SDLK_KP_MINUS: {
        int up = k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS;
        int p2 = live_pipeline_change_p2(a->pipe, up ? P2_STEP : -P2_STEP);
        report("P2 %d (the stage is recreated with it)", p2);
        break;
    }
    case SDLK_m: {
        stereo_method m = live_pipeline_toggle_method(a->pipe);
        report("method %s (the stage is recreated with it)", stereo_method_to_str(m));
        break;
    }
    case SDLK_k:
    case SDLK_o:
    case SDLK_n:
    case SDLK_i:
    case SDLK_t: {
        live_post which = k == SDLK_k   ? LIVE_POST_SPECKLE
                          : k == SDLK_o ? LIVE_POST_VOTE
                          : k == SDLK_n ? LIVE_POST_INTERP
                          : k == SDLK_i ? LIVE_POST_FILL
                                        : LIVE_POST_TEMPORAL;
        stereo_postfilter f = live_pipeline_toggle_post(a->pipe, which);
        a->params.post = f; /* for the overlay */
        if (which == LIVE_POST_SPECKLE && f.speckle_size)
            report("speckle removal on (regions under %d px, steps up to %d/16 px)",
                   f.speckle_size, f.speckle_diff);
        else if (which == LIVE_POST_SPECKLE)
            report("speckle removal off");
        else if (which == LIVE_POST_FILL)
            report("hole filling %s", f.fill ? "on" : "off");
        else if (which == LIVE_POST_VOTE)
            report("region voting %s", f.vote ? "on" : "off");
        else if (which == LIVE_POST_INTERP)
            report("occlusion and mismatch interpolation %s", f.interp ? "on" : "off");
        else
            report("temporal filter %s", f.temporal ? "on (starts afresh)" : "off");
        break;
    }
    case SDLK_h: d->help = !d->help; break;
    default: break;
    }
}

void display_run(display *d, app *a)
{
    int quit = 0, want_shot = 0;
    /* tests (tests/test_live.sh): STEREO_LIVE_KEYS="vp" presses those keys (letters as typed),
     * one per new frame once one is shown, through SDL's event queue as the keyboard does */
    const char *script = getenv("STEREO_LIVE_KEYS");
    int64_t next_stats = monotonic_ns() + 1000000000LL;
    live_stats s;
    live_pipeline_stats(a->pipe, &s);
    while (!quit && !got_signal) {
        int dirty = 0;
        SDL_Event e;
        if (SDL_WaitEventTimeout(&e, 50)) {
            do {
                dirty = 1;
                if (e.type == SDL_QUIT)
                    quit = 1;
                else if (e.type == SDL_KEYDOWN)
                    handle_key(d, a, e.key.keysym.sym, &quit, &want_shot);
                else if (e.type == SDL_MOUSEMOTION) {
                    d->mouse_x = e.motion.x;
                    d->mouse_y = e.motion.y;
                    d->mouse_in = 1;
                } else if (e.type == SDL_WINDOWEVENT) {
                    if (e.window.event == SDL_WINDOWEVENT_LEAVE)
                        d->mouse_in = 0;
                    if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
                        open_font(d, &a->cfg);
                }
            } while (SDL_PollEvent(&e));
        }
        live_frame f;
        int fresh = live_pipeline_acquire(a->pipe, &f);
        if (fresh) {
            upload(d, &f);
            take_frame(a, &f, 1);
            if (d->auto_range)
                update_auto_range(d, a);
            live_pipeline_release(a->pipe);
            d->shown_any = dirty = 1;
            if (script && *script) {
                SDL_Event key;
                memset(&key, 0, sizeof key);
                key.type = SDL_KEYDOWN;
                key.key.keysym.sym = (SDL_Keycode)(unsigned char)*script++;
                SDL_PushEvent(&key);
            }
        }
        int64_t now = monotonic_ns();
        if (now >= next_stats) {
            live_pipeline_stats(a->pipe, &s);
            rates_update(&a->rt, &s, now);
            keep_up_check(a);
            next_stats = now + 1000000000LL;
            dirty = 1;
        }
        if (dirty) {
            render(d, a, &s);
            if (want_shot) {
                char name[64];
                time_t t = time(NULL);
                strftime(name, sizeof name, "stereo-live-%Y%m%d-%H%M%S", localtime(&t));
                char path[96];
                snprintf(path, sizeof path, "%s-%d.png", name, ++d->screenshots);
                if (save_window(d, path) == 0)
                    report("screenshot %s", path);
                want_shot = 0;
            }
            SDL_RenderPresent(d->ren);
            if (fresh)
                rates_latency(&a->rt, f.capture_ns, monotonic_ns());
        }
        if (live_pipeline_finished(a->pipe))
            break;
    }
    if (a->cfg.screenshot[0] && d->shown_any) { /* the window after the last frame */
        live_pipeline_stats(a->pipe, &s);
        render(d, a, &s);
        if (save_window(d, a->cfg.screenshot) == 0)
            log_screenshot(a);
        SDL_RenderPresent(d->ren);
    }
}

int display_open(display **out, const app *a, char *err, size_t errlen)
{
    display *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (open_window(d, a, err, errlen) != 0) {
        free(d);
        return -1;
    }
    *out = d;
    return 0;
}

const char *display_renderer(const display *d)
{
    return d->renderer;
}

void display_close(display *d)
{
    if (!d)
        return;
    close_window(d);
    free(d);
}
