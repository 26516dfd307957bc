/* SPDX-License-Identifier: Apache-2.0 */
/* display.h — stereo-live's window (display://, the default output): the colour-mapped
 * disparity, the left view, the rectified pair or the depth, scaled to the window; the overlay
 * (rates, settings, the views, the cursor's disparity and depth), the colour bar, the keys
 * (--help lists them), the screenshots and key p's point cloud. SDL wants the main thread: the
 * app's main thread runs display_run, the pipeline wakes it when a result is ready. Not in the
 * CUDA-and-libc-only build (LIVE_LIBC_ONLY), whose consumer is the headless loop.
 *
 *   display_open    the window, its renderer, textures and font
 *   display_run     shows results and handles input until the end of the run
 *   display_close   undoes display_open
 */
#ifndef STEREO_APP_DISPLAY_H
#define STEREO_APP_DISPLAY_H

#include <stddef.h>

#include "live_app.h"

typedef struct display display;

/* Opens the window with the settings of a->cfg at the stage's size (a->params). 0 and *out;
 * -1 when there is no display (err says why: the app then runs headless). */
int display_open(display **out, const app *a, char *err, size_t errlen);
/* The video driver and renderer ("x11 opengl"), for the log. */
const char *display_renderer(const display *d);
/* The pipeline's wake-up (live_pipeline_start's callback, user = the display): a result is
 * ready. Any thread. */
void display_wake(void *user);
/* Shows each new result, handles the keys and the mouse, until the window is closed, q/Esc,
 * the signal (got_signal) or the end of the pipeline; then --screenshot of the last frame. */
void display_run(display *d, app *a);
void display_close(display *d);

#endif
