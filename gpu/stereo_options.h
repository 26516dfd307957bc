/* SPDX-License-Identifier: Apache-2.0 */
/* stereo_options.h — the stage's options, declared once (stereo_option_table): the long name,
 * the short flag, the live app's [stereo] key, the Python keyword argument, the value, its
 * range, its default and its help. Everything that takes or lists a stage option reads the
 * table: stereo-match's and stereo-live's command lines and --help (stereo_options_getopt,
 * stereo_options_print_help), the live app's [stereo] keys (app/config.c) and the Python
 * module's keyword arguments (python/stereodepth_abi.c), so that all accept the same names and
 * values and refuse bad ones with the same message.
 *
 * To add an option: see the comment at stereo_option_table (stereo_options.c).
 *
 * --maps, --baselines and --combine are not among them: a file and the views of a rig, which
 * each program takes in its own way.
 *
 * Use: stereo_options_init, stereo_option_set for each option in the order given, then
 * stereo_options_finish (the checks across options: min-disparity + D, the list lengths, the
 * penalties), then stereo_options_size once the image size is known. Each returns 0, or -1
 * with one line in err, "--NAME: what is wrong" (e.g. "--cost: 'foo' is not one of rank,
 * census, ad, bt, mi"); the caller adds its own prefix ("stereo-match: ... (see --help)";
 * Python's ValueError names the keyword argument instead of --NAME; a configuration file its
 * key, stereo_option_set_as).
 */
#ifndef STEREO_STEREO_OPTIONS_H
#define STEREO_STEREO_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    stereo_params p;              /* the result: stereo_params_default, then the options */
    int p1_set, p2_set;           /* --p1 / --p2 given */
    int np1, np2, nweights;       /* values in the --p1 / --p2 / --path-weights lists */
    int p1_list[STEREO_MAX_PATHS], p2_list[STEREO_MAX_PATHS], weights[STEREO_MAX_PATHS];
    int auto_ok;                  /* set by the caller: --disparities auto is taken (stereo-match,
                                     which measures the first pair: stereo_auto_disparities) */
    int auto_disparities;         /* --disparities auto given: p.num_disparities is a
                                     placeholder until stereo_options_set_disparities */
} stereo_options;

/* The --help section an option is listed in. */
typedef enum { STEREO_OPT_MATCHING, STEREO_OPT_BACKEND } stereo_option_group;

/* What the stereo_params field the option sets holds, for writing it back as text
 * (stereo_option_format): an int, a flag's int (1 unless the flag is given), a switch's int (1
 * when the switch is given: --fill, --temporal), an enum, a penalty with its per-path list
 * (p1 / p2), the path weights. */
typedef enum {
    STEREO_OPT_INT, STEREO_OPT_FLAG, STEREO_OPT_SWITCH, STEREO_OPT_COST, STEREO_OPT_METHOD, STEREO_OPT_BACKEND_NAME,
    STEREO_OPT_PENALTY, STEREO_OPT_WEIGHTS
} stereo_option_type;

typedef struct {
    const char *name;     /* the long option, without "--" */
    char short_flag;      /* 'd' for -d; 0: none */
    const char *key;      /* the live app's [stereo] key; a flag (no value) sets it to false,
                             a switch to true */
    const char *kwarg;    /* the Python keyword argument */
    const char *metavar;  /* the value in --help ("N", "NAME", "N[,N...]"); NULL: a flag */
    const char *range;    /* the values it takes (NULL for a flag) */
    const char *def;      /* the default (NULL for a flag: off) */
    const char *help;     /* what it does; --help prints "HELP: RANGE (default DEF); MORE" */
    const char *more;     /* what else to know, after range and default; NULL: nothing */
    stereo_option_group group;
    stereo_option_type type; /* and where in stereo_params: */
    size_t offset;           /* offsetof(stereo_params, FIELD) */
} stereo_option_info;

/* Every option, in --help order; the last entry's name is NULL. */
extern const stereo_option_info stereo_option_table[];

/* The row of a long name (without "--"), of a [stereo] key, or NULL. */
const stereo_option_info *stereo_option_find(const char *name);
const stereo_option_info *stereo_option_by_key(const char *key);

/* The number of rows. */
int stereo_option_count(void);

/* --disparities auto, once the first pair is measured: D into the options, then
 * stereo_options_finish's checks again (those that need D: --min-disparity, --band). */
int stereo_options_set_disparities(stereo_options *o, int D, char *err, size_t errlen);

/* The defaults (stereo_params_default with size 0 x 0) and no option given. */
void stereo_options_init(stereo_options *o);

/* One option: name without "--", value NULL for a flag. -1 with err for an unknown name
 * ("unknown option '--NAME'"), a missing value ("--NAME: needs a value"), a value for a flag
 * ("--NAME takes no value") or a bad value. A value is checked on its own here (range, a
 * multiple of 16, odd, 4 or 8); what depends on other options in stereo_options_finish. */
int stereo_option_set(stereo_options *o, const char *name, const char *value, char *err,
                      size_t errlen);

/* A flag (an option without a value: no-subpixel, no-lr, no-median; or a switch: fill,
 * temporal) given (1), or not (0: the default back), as a configuration file's boolean key sets
 * it. -1 with err for a name that is neither. */
int stereo_option_flag(stereo_options *o, const char *name, int given, char *err, size_t errlen);

/* The row's value in p as a configuration file's key takes it (the live app's replay.ini):
 * "64", "census", "true" / "false" for a flag's key (true: the flag not given), a penalty or
 * the weights as one value or one per path ("8,8,12,12"). buf is "" when it does not fit. */
const char *stereo_option_format(const stereo_params *p, const stereo_option_info *row,
                                 char *buf, size_t len);

/* The same, with messages naming the option as `label` instead of "--NAME" (a configuration
 * file's key: "disparities: 100 is not a multiple of 16 (try 96 or 112)"). */
int stereo_option_set_as(stereo_options *o, const char *name, const char *value,
                         const char *label, char *err, size_t errlen);

/* The checks that need all options, and the penalties: the cost's tuned P1 / P2 unless given,
 * a list of one value per path into p1_path / p2_path, the path weights. */
int stereo_options_finish(stereo_options *o, char *err, size_t errlen);

/* A message of these functions with each option named by its [stereo] key instead of --NAME,
 * as a configuration file names it ("--p2: 90 must be greater than --p1 100" -> "p2: 90 must
 * be greater than p1 100"), into out. */
void stereo_options_message_keys(const char *msg, char *out, size_t len);

/* Sets o->p's size to the (rectified) images the stage works on; refuses a D not smaller than
 * the width ("--disparities: 64 must be smaller than the image width 48"). */
int stereo_options_size(stereo_options *o, int width, int height, char *err, size_t errlen);

/* --help of one group: a line per option, "  -d, --disparities N" then the help from column
 * 25, wrapped at 80 columns (stereo-match and stereo-live print their sections with it). */
void stereo_options_print_help(FILE *f, stereo_option_group group);

/* getopt_long's view of the table, for a program's option parser: appends a struct option per
 * row to opts[0 .. *n) (val = base + the row's index; room for max entries, the terminating
 * zero entry included) and the short flags ("d:") to shortopts. 0, or -1 when there is no
 * room. stereo_option_from_getopt gives the row of what getopt_long returned (base + index, or
 * a short flag), NULL for another option. */
struct option;
int stereo_options_getopt(struct option *opts, size_t *n, size_t max, int base, char *shortopts,
                          size_t shortlen);
const stereo_option_info *stereo_option_from_getopt(int c, int base);

#ifdef __cplusplus
}
#endif
#endif
