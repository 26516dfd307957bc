/* SPDX-License-Identifier: Apache-2.0 */
/* match_options.h — stereo-match's command line (match_options.c): --help, the options (its own
 * and the matching and backend options of gpu/stereo_options.c's table) and the positional
 * arguments, checked before any work, into one options struct that stereo_match.c runs.
 */
#ifndef STEREO_APP_MATCH_OPTIONS_H
#define STEREO_APP_MATCH_OPTIONS_H

#include <stddef.h>

#include "colormap.h"
#include "depth.h"
#include "image_io.h"
#include "stereo.h"
#include "stereo_options.h"

#define EXIT_USAGE 2

enum { RANGE_FIXED, RANGE_AUTO, RANGE_GIVEN };

typedef struct {
    stereo_options stage;       /* the matching and backend options (gpu/stereo_options.h) */
    stereo_params p;            /* stage.p once stereo_options_finish has checked it */
    const char *maps, *color, *right, *confidence, *demo;
    colormap_id cmap;
    int range_mode;             /* RANGE_*: --color-range */
    colormap_range range_given; /* 16ths of a pixel */
    colormap_range range_used;  /* the last --color image's range (for the summary) */
    int legend, progress, progress_tty;
    int repeat, quiet;
    int sequence;               /* 0: one pair; 1: patterns; 2: folders */
    const char *left_path, *right_path, *out_path;
    /* depth outputs (hal/depth.h): the camera from --maps or --focal / --baseline / --center */
    const char *depth, *ply;
    double focal, baseline, center[2];
    int focal_set, baseline_set, center_set;
    depth_camera cam;
    const char *cam_from;         /* where cam came from, for the summary */
    const image *left_in;         /* the pair's left input (colour of the points) */
    const stereo_map *maps_in;    /* its rectification (NULL: none) */
    size_t ply_points;            /* points in the last --ply file */
    /* --baselines: nviews other views (1 = the pair), view_path[1..nviews] (view_path[0] =
     * left_path); combine_set: --combine was given */
    int nviews, combine_set;
    const char *view_path[STEREO_MAX_VIEWS];
    /* more than two views with --maps RIG: the baselines come from the rig (no --baselines),
     * or --baselines is checked against it; rig_camera[i]: the rig's camera of view i */
    int baselines_from_rig, rig_camera[STEREO_MAX_VIEWS];
    double rig_ratio[STEREO_MAX_VIEWS];
} options;

/* "stereo-match: MESSAGE (see --help)" on stderr; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The options and arguments into o (zeroed by the caller): 0, or the exit status after one
 * line (EXIT_USAGE, or 1 for an input that cannot be read). --help and --version print and
 * exit 0 here. */
int parse_options(int argc, char **argv, options *o);

#endif
