/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_options.h — the stage's options by their command-line names, one (name, value) at a
 * time, into stereo_params: the one parser behind stereo-match's matching and backend options
 * and the Python module's keyword arguments (python/stereodepth_abi.c), so that both accept the
 * same names and values and refuse bad ones with the same message.
 *
 * Names are the long options without "--": disparities, min-disparity, cost, window, method,
 * block, paths, p1, p2, p2-adapt, path-weights, uniqueness, no-subpixel, no-lr, lr-tolerance,
 * no-median, speckle-size, speckle-diff, fill, temporal, temporal-alpha, temporal-delta,
 * temporal-persist, backend, threads, sms (stereo_option_table). The flags (no-*, fill,
 * temporal) take no value (NULL), every other name one. --maps is not among them: it names a file (hal/calib.h), not a parameter.
 *
 * Use: stereo_options_init, stereo_option_set for each option in the order given, then
 * stereo_options_finish (the checks across options: paths, disparities, min-disparity + D,
 * the odd window and block, the list lengths, the penalties), then stereo_options_size once the
 * image size is known. Each returns 0, or -1 with one line in err, "--NAME: what is wrong"
 * (e.g. "--cost: 'foo' is not one of rank, census, ad, bt, mi"); the caller adds its own
 * prefix ("stereo-match: ... (see --help)"; Python's ValueError has the line alone).
 */
#ifndef STEREO_STEREO_OPTIONS_H
#define STEREO_STEREO_OPTIONS_H

#include <stddef.h>

#include "stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    stereo_params p;              /* the result: stereo_params_default, then the options */
    int p1_set, p2_set;           /* --p1 / --p2 given */
    int np1, np2, nweights;       /* values in the --p1 / --p2 / --path-weights lists */
    int p1_list[STEREO_MAX_PATHS], p2_list[STEREO_MAX_PATHS], weights[STEREO_MAX_PATHS];
} stereo_options;

typedef struct {
    const char *name;   /* without "--" */
    int takes_value;    /* 0 for a flag */
} stereo_option_info;

/* Every option, in --help order; the last entry's name is NULL. */
extern const stereo_option_info stereo_option_table[];

/* 1 when the option takes a value, 0 for a flag, -1 for a name that is not an option. */
int stereo_option_takes_value(const char *name);

/* The defaults (stereo_params_default with size 0 x 0) and no option given. */
void stereo_options_init(stereo_options *o);

/* One option: name without "--", value NULL for a flag. -1 with err for an unknown name
 * ("unknown option '--NAME'"), a missing value ("--NAME: needs a value"), a value for a flag
 * ("--NAME takes no value") or a bad value. */
int stereo_option_set(stereo_options *o, const char *name, const char *value, char *err,
                      size_t errlen);

/* The checks that need all options, and the penalties: the cost's tuned P1 / P2 unless given,
 * a list of one value per path into p1_path / p2_path, the path weights. */
int stereo_options_finish(stereo_options *o, char *err, size_t errlen);

/* Sets o->p's size to the (rectified) images the stage works on; refuses a D not smaller than
 * the width ("--disparities: 64 must be smaller than the image width 48"). */
int stereo_options_size(stereo_options *o, int width, int height, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
