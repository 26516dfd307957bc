/* SPDX-License-Identifier: Apache-2.0 */
/* app/libc_only/ini.h — stands in for inih's <ini.h> in the CUDA-and-libc-only build of the live
 * app (build/gpu/stereo-live-headless, app/live.ninja), where libinih-dev is not installed.
 *
 * The configuration is compiled unchanged for that build: config.c's defaults, key table and
 * setter and config_check.c's checks are what --set uses. Only config_file.c's live_config_load
 * reads files through inih, and that binary refuses --config before anything would call it.
 * This header declares the one function config_file.c calls, with inih's documented types;
 * not_built.c defines it as a refusal. The normal build uses the real <ini.h> (this directory is
 * on the include path of that one object only).
 */
#ifndef STEREO_APP_LIBC_ONLY_INI_H
#define STEREO_APP_LIBC_ONLY_INI_H

typedef int (*ini_handler)(void *user, const char *section, const char *name, const char *value);
typedef char *(*ini_reader)(char *str, int num, void *stream);

int ini_parse_stream(ini_reader reader, void *stream, ini_handler handler, void *user);

#endif
