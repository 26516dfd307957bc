/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config.c — libFuzzer harness of the live app's INI reader (app/config.h): defaults, the
 * file (live_config_load), then the cross-field checks (live_config_check) on what it accepted,
 * and every section written back (live_config_write_section, as the recording's replay.ini). */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    live_config c;
    live_config_defaults(&c);
    if (live_config_load(fuzz_input_path(0, data, size), &c, err, sizeof err) != 0)
        return 0;
    if (live_config_check(&c, err, sizeof err) == 0) {
        FILE *f = fopen("/dev/null", "w");
        if (!f)
            abort();
        static const char *const sections[] = {"source", "camera", "files", "synth", "stereo",
                                               "calibration", "display", "record", "run"};
        for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
            live_config_write_section(f, &c, sections[i]);
        fclose(f);
    }
    return 0;
}
