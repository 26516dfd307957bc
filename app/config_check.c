/* SPDX-License-Identifier: Apache-2.0 */
/* config_check.c — the live app's settings across keys (config.h): a source without the keys it
 * needs, the views of more than two cameras, the stage options together (as stereo-match checks
 * them, or as the file's keys at their lines), and the plan of which source backend reads the
 * configuration (live_config_plan). config.c has the keys one by one.
 */
#include "config.h"
#include "config_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_uri.h"
#include "synth.h"

/* A source without the keys it needs: names the keys still empty and how to give them, e.g.
 * "[source] type = v4l2 needs [camera] left and right (device paths), e.g. --set
 * camera.left=/dev/video0 --set camera.right=/dev/video2". key2 may be NULL. */
static int missing_keys(char *err, size_t errlen, const char *type, const char *section,
                        const char *what, const char *key1, const char *example1, int have1,
                        const char *key2, const char *example2, int have2)
{
    char names[64], set[600];
    int both = !have1 && key2 && !have2;
    if (both) {
        snprintf(names, sizeof names, "%s and %s", key1, key2);
        snprintf(set, sizeof set, "--set %s.%s=%s --set %s.%s=%s", section, key1, example1,
                 section, key2, example2);
    } else {
        snprintf(names, sizeof names, "%s", have1 ? key2 : key1);
        snprintf(set, sizeof set, "--set %s.%s=%s", section, have1 ? key2 : key1,
                 have1 ? example2 : example1);
    }
    return failf(err, errlen, "[source] type = %s needs [%s] %s (%s%s), e.g. %s", type, section,
                 names, what, both ? "s" : "", set);
}

int live_config_view_uris(const live_config *c, const source_plan *plan,
                          source_uri out[STEREO_MAX_VIEWS], char *err, size_t errlen)
{
    int n = c->stereo.views > 2 ? c->stereo.views : 2;
    char baselines[64] = "";
    for (int i = 1, used = 0; i < n; i++) {
        char b[16];
        used += snprintf(baselines + used, sizeof baselines - (size_t)used, "%s%s", i > 1 ? "," : "",
                         stereo_baseline_str(c->stereo.baseline[i], b, sizeof b));
        if ((size_t)used >= sizeof baselines)
            break;
    }
    for (int i = 2; i < STEREO_MAX_VIEWS; i++) {
        const char *v = c->source_view[i];
        if (i >= n) {
            if (v[0])
                return failf(err, errlen, "view%d: set, but [stereo] baselines '%s' gives %d "
                             "views (left, right%s%s): give the ratio of view %d there, or "
                             "remove view%d", i, n > 2 ? baselines : "1", n, n > 2 ? ", view2" : "",
                             n > 3 ? " ..." : "", i, i);
            continue;
        }
        if (plan->kind == PLAN_SYNTH) {
            if (v[0])
                return failf(err, errlen, "view%d: the generated scene (synth://) renders every "
                             "view itself at the [stereo] baselines ratios; remove view%d", i, i);
            continue;
        }
        if (!v[0]) {
            char example[64];
            snprintf(example, sizeof example, plan->kind == PLAN_FILES
                     ? "file://rec/view%d_%%06d.png" : "/dev/video%d", plan->kind == PLAN_FILES
                     ? i : 2 * i);
            return failf(err, errlen, "view%d: missing: [stereo] baselines '%s' gives %d views, "
                         "so [source] view%d names view %d's %s after left and right (e.g. "
                         "--view %s, or --set source.view%d=%s)", i, baselines, n, i, i,
                         plan->kind == PLAN_FILES ? "image sequence" : "camera", example, i,
                         example);
        }
        char why[SOURCE_URI_MAX + 200];
        if (source_uri_parse(v, &out[i], why, sizeof why) != 0)
            return failf(err, errlen, "view%d: %s", i, why);
        int same = plan->kind == PLAN_FILES ? out[i].kind == URI_FILE && out[i].is_pattern
                                            : out[i].kind == URI_V4L2;
        if (!same)
            return failf(err, errlen, "view%d: '%s' is not %s, as left and right are (the views "
                         "of one rig come from one kind of source)", i, v,
                         plan->kind == PLAN_FILES ? "an image sequence (file://..._%06d.png)"
                                                  : "a V4L2 camera (/dev/videoN)");
        for (int j = 0; j < i; j++) {
            const char *other = j < 2 ? plan->uri[j].target : out[j].target;
            if (strcmp(other, out[i].target) == 0)
                return failf(err, errlen, "view%d: %s is also %s", i, out[i].target,
                             j == 0 ? "left" : j == 1 ? "right" : "an earlier view");
        }
    }
    return 0;
}

/* A source of more than two views ([stereo] baselines) and [synth] lose_view against the
 * source: 0, or -1 with "KEY: what is wrong". */
static int check_views(const live_config *c, char *err, size_t errlen)
{
    int n = c->stereo.views > 2 ? c->stereo.views : 2;
    source_plan plan;
    if (live_config_plan(c, &plan, err, errlen) != 0)
        return -1;
    if (n > 2) {
        if (plan.kind == PLAN_SYNTH)
            for (int i = 2; i < n; i++)
                if (abs(c->stereo.baseline[i]) > SYNTH_MAX_BASELINE * STEREO_BASELINE_SCALE) {
                    char b[16];
                    return failf(err, errlen, "baselines: view %d's ratio %s: the generated "
                                 "scene renders views at -%d..%d", i,
                                 stereo_baseline_str(c->stereo.baseline[i], b, sizeof b),
                                 SYNTH_MAX_BASELINE, SYNTH_MAX_BASELINE);
                }
        if (plan.kind != PLAN_SYNTH && plan.kind != PLAN_FILES && plan.kind != PLAN_V4L2_PAIR)
            return failf(err, errlen, "baselines: %d views, but the source %s gives two (%s); "
                         "more views come from V4L2 cameras or file:// image sequences ([source] "
                         "left, right, view2 ...) or from synth://", n, plan.uri[0].text,
                         plan.kind == PLAN_SBS || plan.kind == PLAN_GST_ONE
                             ? "one side-by-side stream" : "a GStreamer pair");
        if (plan.from_type && plan.kind != PLAN_SYNTH)
            return failf(err, errlen, "baselines: %d views need the cameras as URIs, [source] "
                         "left, right, view2 ... ([source] type = %s names two)", n,
                         live_source_to_str(c->source));
    }
    source_uri uris[STEREO_MAX_VIEWS];
    if (live_config_view_uris(c, &plan, uris, err, errlen) != 0)
        return -1;
    if (c->synth_lose[0]) {
        if (plan.kind != PLAN_SYNTH)
            return failf(err, errlen, "lose_view: only the generated scene (synth) loses a view "
                         "on purpose; the source is %s", plan.uri[0].text);
        if (c->synth_lose[0] >= n)
            return failf(err, errlen, "lose_view: view %d, but there are %d views (0 .. %d)",
                         c->synth_lose[0], n, n - 1);
    }
    return 0;
}

/* The checks across the stage options (stereo_options_finish on the keys as given). Its
 * message names options as stereo-match does ("--p1: 3 values for 8 paths ..."), unless the
 * keys it names were set in `file` and none on the command line (lines: each key's line there,
 * -1: live_config_set, 0: neither): then as the file's keys at the latest of their lines
 * ("FILE:LINE: p1: 3 values ..."). always = 0: only that second case fails (a file read before
 * the command line's keys: the others wait for live_config_check). */
int check_stage(const live_config *c, const int *lines, const char *file, int always,
                       char *err, size_t errlen)
{
    stereo_options o = c->stage;
    char why[400], as_keys[400];
    if (stereo_options_finish(&o, why, sizeof why) == 0)
        return 0;
    int line = 0, command_line = 0;
    for (const char *m = strstr(why, "--"); m; m = strstr(m + 2, "--")) {
        char name[32];
        int len = (int)strspn(m + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
        snprintf(name, sizeof name, "%.*s", len, m + 2);
        const stereo_option_info *row = stereo_option_find(name);
        int k = row ? find_key("stereo", row->key) : -1;
        if (k >= 0 && lines[k] > line)
            line = lines[k];
        command_line |= k >= 0 && lines[k] < 0;
    }
    if (command_line || !line || !file || !file[0])
        return always ? failf(err, errlen, "%s", why) : 0;
    stereo_options_message_keys(why, as_keys, sizeof as_keys);
    return failf(err, errlen, "%s:%d: %s", file, line, as_keys);
}

int live_config_check(const live_config *c, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    /* the size of each view the matcher sees (the maps may change it; the app checks the
     * stage's parameters again once it knows) */
    int w, h;
    source_plan plan;
    int uris = c->source_left[0] || c->source_right[0] || c->source_input[0];
    if (uris && source_plan_make(c->source_input, c->source_left, c->source_right, &plan, err,
                                 errlen) != 0)
        return -1;
    if (uris) {
        switch (plan.kind) {
        case PLAN_SYNTH:
            w = plan.uri[0].width >= 0 ? plan.uri[0].width : c->synth_width;
            h = plan.uri[0].height >= 0 ? plan.uri[0].height : c->synth_height;
            break;
        case PLAN_SBS:
            if (c->width % 2)
                return failf(err, errlen, "width: %d: a side-by-side frame has an even width "
                             "(two views side by side)", c->width);
            w = c->width / 2, h = c->height;
            break;
        case PLAN_V4L2_PAIR:
            w = c->width, h = c->height;
            break;
        default: /* image files and GStreamer: known from the first frame only */
            w = 4096, h = 1;
        }
    } else switch (c->source) {
    case SOURCE_SYNTH:
        w = c->synth_width, h = c->synth_height;
        break;
    case SOURCE_V4L2:
        if (!c->left_device[0] || !c->right_device[0])
            return missing_keys(err, errlen, "v4l2", "camera", "device path",
                                "left", "/dev/video0", c->left_device[0] != 0, "right",
                                "/dev/video2", c->right_device[0] != 0);
        if (strcmp(c->left_device, c->right_device) == 0)
            return failf(err, errlen, "right: %s is also the left camera", c->right_device);
        w = c->width, h = c->height;
        break;
    case SOURCE_SBS:
        if (!c->sbs_device[0])
            return missing_keys(err, errlen, "sbs", "camera", "device path",
                                "device", "/dev/video0", 0, NULL, NULL, 0);
        if (c->width % 2)
            return failf(err, errlen, "width: %d: a side-by-side frame has an even width (two "
                         "views side by side)", c->width);
        w = c->width / 2, h = c->height;
        break;
    case SOURCE_FILES:
        if (!c->left_pattern[0] || !c->right_pattern[0])
            return missing_keys(err, errlen, "files", "files", "file name pattern",
                                "left", "rec/left_%06d.png", c->left_pattern[0] != 0, "right",
                                "rec/right_%06d.png", c->right_pattern[0] != 0);
        w = 4096, h = 1; /* known from the first image only */
        break;
    default:
        return failf(err, errlen, "type: %d is not a source", (int)c->source);
    }
    if ((unsigned)c->format > CAPTURE_FORMAT_RGB24)
        return failf(err, errlen, "format: %d is not a capture format", (int)c->format);
    if ((unsigned)c->colormap >= COLORMAP_COUNT)
        return failf(err, errlen, "colormap: %d is not a colour map", (int)c->colormap);
    if ((unsigned)c->view > VIEW_DEPTH)
        return failf(err, errlen, "view: %d is not a view", (int)c->view);
    if (c->ncontrols < 0 || c->ncontrols > CAPTURE_MAX_CONTROLS)
        return failf(err, errlen, "controls: %d controls (at most %d)", c->ncontrols,
                     CAPTURE_MAX_CONTROLS);
    if ((c->focal_px > 0) != (c->baseline > 0))
        return failf(err, errlen, "%s: give [calibration] focal and baseline together (the "
                     "camera for depth), or neither", c->focal_px > 0 ? "baseline" : "focal");
    if (c->center[0] && !(c->focal_px > 0))
        return failf(err, errlen, "center: goes with [calibration] focal and baseline");
    if (c->record_depth && !c->record_dir[0])
        return failf(err, errlen, "depth: [record] depth records into [record] dir: give "
                     "--record DIR");
    if (c->record_depth && !c->maps[0] && !(c->focal_px > 0))
        return failf(err, errlen, "depth: [record] depth needs the camera: [calibration] maps "
                     "(a calibration) or focal and baseline (--focal PX --baseline M)");
    if ((c->window_width == 0) != (c->window_height == 0))
        return failf(err, errlen, "%s: give [display] width and height together (or neither: "
                     "the image size)", c->window_width ? "height" : "width");

    if (check_stage(c, c->key_line, c->config_file, 1, err, errlen) != 0)
        return -1;
    if (check_views(c, err, errlen) != 0)
        return -1;
    stereo_params p = c->stereo;
    p.width = w;
    p.height = h;
    char why[200];
    if (stereo_params_check(&p, why, sizeof why) != STEREO_OK)
        return failf(err, errlen, "%s", why);
    return 0;
}

/* A source_uri made from an older [camera] / [files] key (not parsed: such paths need no
 * scheme). */
static void legacy_uri(source_uri *u, source_uri_kind kind, const char *path)
{
    memset(u, 0, sizeof *u);
    u->kind = kind;
    u->width = u->height = u->fps = -1;
    snprintf(u->text, sizeof u->text, "%s", path);
    snprintf(u->target, sizeof u->target, "%s", path);
    u->is_pattern = kind == URI_FILE;
}

int live_config_plan(const live_config *c, source_plan *plan, char *err, size_t errlen)
{
    if (c->source_left[0] || c->source_right[0] || c->source_input[0])
        return source_plan_make(c->source_input, c->source_left, c->source_right, plan, err,
                                errlen);
    memset(plan, 0, sizeof *plan);
    plan->from_type = 1;
    switch (c->source) {
    case SOURCE_SYNTH:
        plan->kind = PLAN_SYNTH, plan->nuri = 1;
        legacy_uri(&plan->uri[0], URI_SYNTH, "synth://");
        plan->uri[0].is_pattern = 0;
        return 0;
    case SOURCE_V4L2:
        plan->kind = PLAN_V4L2_PAIR, plan->nuri = 2;
        legacy_uri(&plan->uri[0], URI_V4L2, c->left_device);
        legacy_uri(&plan->uri[1], URI_V4L2, c->right_device);
        return 0;
    case SOURCE_SBS:
        plan->kind = PLAN_SBS, plan->nuri = 1;
        legacy_uri(&plan->uri[0], URI_V4L2, c->sbs_device);
        return 0;
    case SOURCE_FILES:
        plan->kind = PLAN_FILES, plan->nuri = 2;
        legacy_uri(&plan->uri[0], URI_FILE, c->left_pattern);
        legacy_uri(&plan->uri[1], URI_FILE, c->right_pattern);
        return 0;
    }
    return failf(err, errlen, "type: %d is not a source", (int)c->source);
}
