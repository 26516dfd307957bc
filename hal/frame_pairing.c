/* SPDX-License-Identifier: Apache-2.0 */
/* frame_pairing.c — pairing by timestamp; the rule is in frame_pairing.h. */
#include "frame_pairing.h"

#include <string.h>

void frame_pairing_init(frame_pairing *p, int64_t max_skew_ns)
{
    memset(p, 0, sizeof *p);
    p->max_skew_ns = max_skew_ns;
    p->handle[0] = p->handle[1] = -1;
}

static void clear_result(frame_pairing_result *r)
{
    memset(r, 0, sizeof *r);
    r->handle[0] = r->handle[1] = r->drop_handle = r->drop_camera = -1;
}

static void drop(frame_pairing_result *r, int camera, int handle)
{
    r->dropped = 1;
    r->drop_camera = camera;
    r->drop_handle = handle;
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

void frame_pairing_offer(frame_pairing *p, int camera, int handle, int64_t ts_ns,
                         frame_pairing_result *r)
{
    int other = 1 - camera;
    clear_result(r);
    if (p->waiting[other]) {
        int64_t d = ts_ns - p->ts[other]; /* > 0: the new frame is the later one */
        if (d <= p->max_skew_ns && -d <= p->max_skew_ns) {
            r->paired = 1;
            r->handle[camera] = handle;
            r->ts[camera] = ts_ns;
            r->handle[other] = p->handle[other];
            r->ts[other] = p->ts[other];
            empty_slot(p, other);
        } else if (d > 0) {
            drop(r, other, p->handle[other]);
            empty_slot(p, other);
            wait_in_slot(p, camera, handle, ts_ns);
        } else {
            drop(r, camera, handle);
        }
        return;
    }
    if (p->waiting[camera]) {
        if (ts_ns < p->ts[camera]) { /* out of order: keep the newer one that waits */
            drop(r, camera, handle);
            return;
        }
        drop(r, camera, p->handle[camera]);
    }
    wait_in_slot(p, camera, handle, ts_ns);
}

void frame_pairing_flush(frame_pairing *p, int camera, frame_pairing_result *r)
{
    clear_result(r);
    if (p->waiting[camera])
        drop(r, camera, p->handle[camera]);
    empty_slot(p, camera);
}
