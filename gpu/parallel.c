/* SPDX-License-Identifier: Apache-2.0 */
/* parallel.c — see parallel.h for the design. */
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct parallel_pool {
    int nthreads;          /* including the caller */
    pthread_t *workers;    /* nthreads - 1 */
    pthread_mutex_t lock;
    pthread_cond_t wake;   /* a new job, or stop */
    pthread_cond_t done;   /* a worker finished its part of the job */
    unsigned long job_id;  /* incremented per job; workers wait for a change */
    int stop;
    int busy;              /* workers still inside the current job */
    /* the current job */
    parallel_fn fn;
    void *ctx;
    int n, grain;
    atomic_int next;
};

static void run_chunks(parallel_pool *p)
{
    for (;;) {
        int begin = atomic_fetch_add(&p->next, p->grain);
        if (begin >= p->n)
            return;
        int end = begin + p->grain < p->n ? begin + p->grain : p->n;
        p->fn(p->ctx, begin, end);
    }
}

static void *worker_main(void *arg)
{
    parallel_pool *p = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && p->job_id == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop)
            break;
        seen = p->job_id;
        pthread_mutex_unlock(&p->lock);
        run_chunks(p);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int parallel_create(int nthreads, parallel_pool **out)
{
    *out = NULL;
    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    if (nthreads > 256)
        nthreads = 256;
    parallel_pool *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->nthreads = nthreads;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    if (nthreads > 1) {
        p->workers = calloc((size_t)nthreads - 1, sizeof *p->workers);
        if (!p->workers)
            goto err;
        for (int i = 0; i < nthreads - 1; i++) {
            if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0) {
                p->nthreads = i + 1; /* join only the ones that started */
                goto err;
            }
        }
    }
    *out = p;
    return 0;
err:
    parallel_destroy(p);
    return -1;
}

void parallel_destroy(parallel_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads - 1 && p->workers; i++)
        pthread_join(p->workers[i], NULL);
    free(p->workers);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int parallel_threads(const parallel_pool *p) { return p->nthreads; }

void parallel_for(parallel_pool *p, int n, int grain, parallel_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (grain <= 0) {
        grain = n / (p->nthreads * 8);
        if (grain < 1)
            grain = 1;
    }
    if (p->nthreads == 1 || n <= grain) {
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->grain = grain;
    atomic_store(&p->next, 0);
    p->busy = p->nthreads - 1;
    p->job_id++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);

    run_chunks(p);

    pthread_mutex_lock(&p->lock);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
