/* SPDX-License-Identifier: Apache-2.0 */
/* version.c — see version.h. The only file that includes the generated header, so that a new
 * commit recompiles this file alone (and relinks the programs). */
#include "version.h"

#include <stdio.h>

#include "build_info.h" /* build/gen/build_info.h */

const char *version_number(void) { return STEREO_VERSION; }
const char *version_commit(void) { return STEREO_COMMIT; }
const char *version_backends(void) { return STEREO_BACKENDS; }

const char *version_line(const char *program, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s, commit %s, backends: %s", program, STEREO_VERSION, STEREO_COMMIT,
             STEREO_BACKENDS);
    return buf;
}

void version_print(const char *program)
{
    char line[256];
    puts(version_line(program, line, sizeof line));
}
