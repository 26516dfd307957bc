/* SPDX-License-Identifier: Apache-2.0 */
/* version.h — what a program was built from, for --version, the live app's log and its
 * --stats-json: the project version (the file VERSION), the git commit ("-dirty" when tracked
 * files differed from it, "unknown" outside a git checkout) and the backends compiled in. The
 * values come from build/gen/build_info.h, which tools/gen-version.sh writes on every build. */
#ifndef STEREO_VERSION_H
#define STEREO_VERSION_H

const char *version_number(void);   /* "0.5.0" */
const char *version_commit(void);   /* "e30971e", "e30971e-dirty" or "unknown" */
const char *version_backends(void); /* "cpu" or "cpu, cuda 13.0 (sm_87 sm_90, PTX compute_90)" */

#include <stddef.h>

/* "PROGRAM 0.5.0, commit e30971e, backends: cpu, cuda 13.0 (...)" into buf; returns buf. */
const char *version_line(const char *program, char *buf, size_t len);

/* --version: the line above on stdout. */
void version_print(const char *program);

#endif
