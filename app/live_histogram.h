/* SPDX-License-Identifier: Apache-2.0 */
/* live_histogram.h — times in milliseconds, counted in logarithmic bins, for the live app's
 * summary (stage time, end-to-end latency): median and 95th percentile over a run of any length
 * in fixed memory (about 7 kB), no allocation, libc and libm only.
 *
 * Bins are 1 % wide from 1 us to 100 s (a time outside lands in the first or last bin); a
 * quantile is the geometric middle of the bin that holds it (within 0.5 % of an exact one),
 * clamped to the exact minimum and maximum, which are kept beside the bins with the sum.
 * Not thread-safe: the owner adds under its own lock and hands out copies.
 */
#ifndef STEREO_APP_LIVE_HISTOGRAM_H
#define STEREO_APP_LIVE_HISTOGRAM_H

#include <stdint.h>

#define LIVE_HISTOGRAM_BINS 1852 /* ceil(ln(1e5 / 1e-3) / ln(1.01)) */

typedef struct {
    uint64_t n;
    double sum, min, max;        /* ms; min and max are 0 while n = 0 */
    uint32_t bin[LIVE_HISTOGRAM_BINS];
} live_histogram;

void live_histogram_clear(live_histogram *h);
void live_histogram_add(live_histogram *h, double ms);
/* q in 0..1 (0.5 the median, 0.95 the 95th percentile): the smallest time t with at least
 * q * n of the times <= t, to the bin's precision; 0 when empty. */
double live_histogram_quantile(const live_histogram *h, double q);
double live_histogram_mean(const live_histogram *h);

#endif
