/* SPDX-License-Identifier: Apache-2.0 */
/* frame_pairing.c — grouping by timestamp; the rule is in frame_pairing.h. */
#include "frame_pairing.h"

#include <string.h>

static int lowest_active(const frame_pairing *p)
{
    for (int k = 0; k < p->n; k++)
        if (p->active & (1u << k))
            return k;
    return -1;
}

static int count_active(const frame_pairing *p)
{
    int c = 0;
    for (int k = 0; k < p->n; k++)
        c += (p->active >> k) & 1;
    return c;
}

void frame_pairing_init_n(frame_pairing *p, int n, int64_t max_skew_ns)
{
    memset(p, 0, sizeof *p);
    p->n = n < 2 ? 2 : n > FRAME_PAIRING_MAX ? FRAME_PAIRING_MAX : n;
    p->max_skew_ns = max_skew_ns;
    p->active = (1u << p->n) - 1;
    p->ref = 0;
    for (int k = 0; k < FRAME_PAIRING_MAX; k++)
        p->handle[k] = -1;
}

void frame_pairing_init(frame_pairing *p, int64_t max_skew_ns)
{
    frame_pairing_init_n(p, 2, max_skew_ns);
}

static void clear_result(frame_pairing_result *r)
{
    memset(r, 0, sizeof *r);
    r->ref = -1;
    for (int k = 0; k < FRAME_PAIRING_MAX; k++)
        r->handle[k] = -1;
}

static void drop(frame_pairing_result *r, int camera, int handle, int64_t ts)
{
    if (r->dropped < (int)(sizeof r->drop / sizeof r->drop[0]))
        r->drop[r->dropped++] = (frame_pairing_drop){camera, handle, ts};
}

static void wait_in_slot(frame_pairing *p, int camera, int handle, int64_t ts_ns)
{
    p->waiting[camera] = 1;
    p->handle[camera] = handle;
    p->ts[camera] = ts_ns;
}

static void empty_slot(frame_pairing *p, int camera)
{
    p->waiting[camera] = 0;
    p->handle[camera] = -1;
}

/* The waiting frame of `camera` goes back unpaired. */
static void drop_slot(frame_pairing *p, frame_pairing_result *r, int camera)
{
    if (p->waiting[camera])
        drop(r, camera, p->handle[camera], p->ts[camera]);
    empty_slot(p, camera);
}

/* A set when every active camera waits within max_skew of the reference's frame. */
static void try_complete(frame_pairing *p, frame_pairing_result *r)
{
    int R = p->ref;
    if (R < 0 || !p->waiting[R] || count_active(p) < 2)
        return;
    for (int k = 0; k < p->n; k++) {
        if (!(p->active & (1u << k)))
            continue;
        int64_t d = p->ts[k] - p->ts[R];
        if (!p->waiting[k] || d > p->max_skew_ns || -d > p->max_skew_ns)
            return;
    }
    r->paired = 1;
    r->mask = p->active;
    r->ref = R;
    for (int k = 0; k < p->n; k++)
        if (p->active & (1u << k)) {
            r->handle[k] = p->handle[k];
            r->ts[k] = p->ts[k];
            empty_slot(p, k);
        }
}

void frame_pairing_offer(frame_pairing *p, int camera, int handle, int64_t ts_ns,
                         frame_pairing_result *r)
{
    clear_result(r);
    int k = camera, R = p->ref;
    if (k < 0 || k >= p->n) { /* not ours: nothing to keep it in */
        drop(r, camera, handle, ts_ns);
        return;
    }
    if (p->offered[k] && ts_ns < p->last_ts[k]) { /* out of order */
        drop(r, k, handle, ts_ns);
        return;
    }
    p->offered[k] = 1;
    p->last_ts[k] = ts_ns;
    if (!(p->active & (1u << k)) || count_active(p) < 2) {
        drop(r, k, handle, ts_ns);
        return;
    }
    if (k == R) {
        for (int j = 0; j < p->n; j++)
            if (j != R && p->waiting[j] && p->ts[j] - ts_ns > p->max_skew_ns) {
                drop(r, k, handle, ts_ns);
                drop_slot(p, r, k);
                return;
            }
        drop_slot(p, r, k);
        wait_in_slot(p, k, handle, ts_ns);
        for (int j = 0; j < p->n; j++)
            if (j != R && p->waiting[j] && ts_ns - p->ts[j] > p->max_skew_ns)
                drop_slot(p, r, j);
    } else if (R >= 0 && p->waiting[R]) {
        int64_t d = ts_ns - p->ts[R];
        if (-d > p->max_skew_ns) {
            drop(r, k, handle, ts_ns);
            return;
        }
        if (d > p->max_skew_ns) {
            drop_slot(p, r, R);
            drop_slot(p, r, k);
            wait_in_slot(p, k, handle, ts_ns);
            return;
        }
        if (p->waiting[k]) {
            int64_t dh = p->ts[k] - p->ts[R];
            if (dh < 0)
                dh = -dh;
            if (d < 0)
                d = -d;
            if (dh < d) { /* the waiting one is closer to the reference's frame */
                drop(r, k, handle, ts_ns);
                return;
            }
            drop_slot(p, r, k);
        }
        wait_in_slot(p, k, handle, ts_ns);
    } else {
        drop_slot(p, r, k);
        wait_in_slot(p, k, handle, ts_ns);
    }
    try_complete(p, r);
}

void frame_pairing_flush(frame_pairing *p, int camera, frame_pairing_result *r)
{
    clear_result(r);
    if (camera >= 0 && camera < p->n) {
        drop_slot(p, r, camera);
        p->offered[camera] = 0;
    }
}

void frame_pairing_set_active(frame_pairing *p, int camera, int active, frame_pairing_result *r)
{
    clear_result(r);
    if (camera < 0 || camera >= p->n)
        return;
    unsigned bit = 1u << camera;
    if (active)
        p->active |= bit;
    else {
        p->active &= ~bit;
        drop_slot(p, r, camera);
    }
    int ref = lowest_active(p);
    if (ref != p->ref) {
        p->ref = ref;
        for (int k = 0; k < p->n; k++)
            drop_slot(p, r, k);
    }
    if (count_active(p) < 2)
        for (int k = 0; k < p->n; k++)
            drop_slot(p, r, k);
    try_complete(p, r);
}
