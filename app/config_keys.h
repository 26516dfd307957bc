/* SPDX-License-Identifier: Apache-2.0 */
/* config_keys.h — what the three parts of the live app's settings share, private to them:
 * config.c (the key table, one key at a time), config_check.c (across keys) and config_file.c
 * (the INI file). Everything else includes config.h. The names are those the functions had
 * while the three were one file.
 */
#ifndef STEREO_APP_CONFIG_KEYS_H
#define STEREO_APP_CONFIG_KEYS_H

#include <stddef.h>

#include "config.h"

/* The keys of the table and of the stage options (the indices of live_config.key_line). */
int config_key_count(void);
/* A key's index, or -1 when SECTION has no such key. */
int find_key(const char *section, const char *key);
/* 1 for a section the file may have. */
int known_section(const char *s);
/* "source, camera, ..." — the sections, for the unknown-section message. */
const char *section_list(char *out, size_t n);
/* The message into err (when err is not NULL); returns -1. */
int failf(char *err, size_t errlen, const char *fmt, ...);

/* The checks across the stage options (config_check.c): 0, or -1 with err. */
int check_stage(const live_config *c, const int *lines, const char *file, int always,
                char *err, size_t errlen);

#endif
