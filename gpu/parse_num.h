/* SPDX-License-Identifier: Apache-2.0 */
/* parse_num.h — strict number parsing for command lines, and the long options an abbreviation
 * could mean (libc only).
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

/* The long options of opts (getopt_long's table, ended by a NULL name) that arg ("--name" or
 * "--name=value") abbreviates, as "--a, --b" into buf (cut to len); how many. getopt_long
 * refuses an abbreviation of more than one as if it were unknown: the caller can say which. */
struct option;
int long_option_matches(const char *arg, const struct option *opts, char *buf, size_t len);

#endif
