/* SPDX-License-Identifier: Apache-2.0 */
/* live_histogram.c — logarithmic time histogram (live_histogram.h). */
#include "live_histogram.h"

#include <math.h>
#include <string.h>

#define LO_MS 1e-3    /* the first bin starts here */
#define STEP 1.01     /* each bin is this much wider than the one before */

void live_histogram_clear(live_histogram *h) { memset(h, 0, sizeof *h); }

static int bin_of(double ms)
{
    if (!(ms > LO_MS)) /* also NaN */
        return 0;
    double b = log(ms / LO_MS) / log(STEP);
    return b >= LIVE_HISTOGRAM_BINS - 1 ? LIVE_HISTOGRAM_BINS - 1 : (int)b;
}

void live_histogram_add(live_histogram *h, double ms)
{
    if (ms < 0 || ms != ms)
        ms = 0;
    if (h->n == 0 || ms < h->min)
        h->min = ms;
    if (h->n == 0 || ms > h->max)
        h->max = ms;
    h->n++;
    h->sum += ms;
    uint32_t *c = &h->bin[bin_of(ms)];
    if (*c < UINT32_MAX)
        (*c)++;
}

double live_histogram_quantile(const live_histogram *h, double q)
{
    if (h->n == 0)
        return 0;
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    /* nearest rank: the k-th smallest time, k = ceil(q * n), at least 1 */
    uint64_t k = (uint64_t)ceil(q * (double)h->n), seen = 0;
    if (k < 1)
        k = 1;
    for (int b = 0; b < LIVE_HISTOGRAM_BINS; b++) {
        seen += h->bin[b];
        if (seen >= k) {
            double mid = LO_MS * pow(STEP, b + 0.5);
            return mid < h->min ? h->min : mid > h->max ? h->max : mid;
        }
    }
    return h->max; /* only when a bin saturated */
}

double live_histogram_mean(const live_histogram *h) { return h->n ? h->sum / (double)h->n : 0; }
