/* SPDX-License-Identifier: Apache-2.0 */
/* parallel.h — a small fixed thread pool for the CPU reference backend.
 *
 * DESIGN: the pool owns n-1 worker threads; parallel_for() hands them one job (a range [0, n)
 * cut into chunks), the calling thread works on the same job, and the call returns when every
 * chunk is done. Chunks are claimed through one atomic counter, so work is balanced without a
 * queue. Workers sleep on a condition variable between jobs and are stopped by a flag, a
 * broadcast and a join (never cancelled). One job at a time: parallel_for is not re-entrant and
 * must be called from one thread.
 */
#ifndef STEREO_PARALLEL_H
#define STEREO_PARALLEL_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct parallel_pool parallel_pool;

/* fn processes items [begin, end) of the job. */
typedef void (*parallel_fn)(void *ctx, int begin, int end);

/* nthreads <= 0: one per online CPU. Returns 0, or -1 when a thread cannot be started. */
int parallel_create(int nthreads, parallel_pool **out);
void parallel_destroy(parallel_pool *pool);
int parallel_threads(const parallel_pool *pool);

/* Runs fn over [0, n) in chunks of at most `grain` items (grain <= 0: automatic). */
void parallel_for(parallel_pool *pool, int n, int grain, parallel_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
