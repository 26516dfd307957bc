/* SPDX-License-Identifier: Apache-2.0 */
/* parse_num.h — strict number parsing for command lines (libc only).
 *
 * The whole string must be the number: no blanks, no trailing characters, no overflow, and the
 * value inside [lo, hi]. On failure the message names the option and the accepted range.
 */
#ifndef STEREO_PARSE_NUM_H
#define STEREO_PARSE_NUM_H

#include <stddef.h>

/* 0, or -1 with "OPT: 'TEXT' is not an integer in LO..HI" in err. */
int parse_long_arg(const char *opt, const char *text, long lo, long hi, long *out, char *err,
                   size_t errlen);

/* The same for an int. */
int parse_int_arg(const char *opt, const char *text, int lo, int hi, int *out, char *err,
                  size_t errlen);

/* A comma-separated list of 1..max ints in [lo, hi] ("24" or "24,24,30,30"): 0 with *n values
 * in out, or -1 with the option, the text and the accepted range in err. */
int parse_int_list(const char *opt, const char *text, int lo, int hi, int *out, int max, int *n,
                   char *err, size_t errlen);

#endif
