/* SPDX-License-Identifier: Apache-2.0 */
/* live_options.h — stereo-live's command line: --help, the options (the app's own and the
 * matching and backend options of gpu/stereo_options.c's table, each as its configuration key),
 * applied over the defaults and --config's file, then the cross-checks and the files the session
 * reads and writes, all before anything is opened (live_options.c). Messages go through
 * report(); built with LIVE_LIBC_ONLY=1 what the binary leaves out is refused here.
 */
#ifndef STEREO_APP_LIVE_OPTIONS_H
#define STEREO_APP_LIVE_OPTIONS_H

#include "config.h"

/* Options that are not configuration keys. */
typedef struct {
    const char *config_path;    /* --config */
    const char *stats_json;     /* --stats-json FILE */
    int prerender;              /* --synth-prerender K; 0 = render every frame */
    int help, version;          /* --help, --version: print, exit 0 */
    int list_cameras;           /* --list-cameras: list the V4L2 devices, exit */
    int outputs;                /* --output given N times: they replace the file's [output] */
} app_options;

/* --help: the app's own options, then the matching and backend options of the one table */
void print_usage(void);

/* Defaults, the file, the options, the cross-checks: 0, or -1 after printing one line. */
int load_config(int argc, char **argv, live_config *cfg, app_options *o);

#endif
