/* SPDX-License-Identifier: Apache-2.0 */
/* rng.h — the tests' deterministic random numbers (xorshift64): one stream per test program,
 * started by rng_seed (a test program that seeds once in main gets the same numbers on every
 * run and every machine). Header-only. */
#ifndef STEREO_TESTS_RNG_H
#define STEREO_TESTS_RNG_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline void rng_seed(uint64_t seed) { rng_state = seed; }

static inline uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* uniform in lo..hi (hi - lo small against 2^32) */
static inline int rnd_range(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }

#endif
