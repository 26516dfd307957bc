/* SPDX-License-Identifier: Apache-2.0 */
/* frame_pairing.h — groups the frames of N (2..8) free-running cameras by timestamp (pure logic,
 * no I/O). Two cameras are the pair: frame_pairing_init.
 *
 * Each camera's newest frame waits in a slot. The reference camera is the lowest-numbered
 * camera that takes part (camera 0 unless frame_pairing_set_active took it out); a set is formed
 * as soon as every camera that takes part waits with a frame within max_skew of the reference's
 * frame (so two other cameras may be up to 2 * max_skew apart). Frames are offered one at a
 * time, each camera's in increasing timestamp order (the caller sorts frames it dequeued together
 * by timestamp, so the cameras interleave as they were captured). For a frame f from camera k,
 * with R the reference camera and r its waiting frame:
 *
 *   f.ts < the last frame k offered               -> drop f (out of order: a newer one of k
 *                                                    waits or has left already)
 *   k does not take part (set_active 0)           -> drop f
 *   k == R:
 *     some j waits with g, g.ts - f.ts > max_skew -> drop f and h  (j's frames only get later)
 *     otherwise                                   -> drop h, f waits; drop every g_j with
 *                                                    f.ts - g_j.ts > max_skew (they only get
 *                                                    farther from the reference's frames)
 *   k != R, R waits with r:
 *     r.ts - f.ts > max_skew                      -> drop f        (f can only get farther)
 *     f.ts - r.ts > max_skew                      -> drop r and h, f waits (r gets no k frame)
 *     otherwise                                   -> of h and f the one closer to r waits (the
 *                                                    newer on a tie), the other is dropped
 *   k != R, R's slot empty                        -> drop h, f waits (the newer one waits)
 *
 * and then, when every taking-part camera waits within max_skew of r: a set, all slots empty.
 * With two cameras this is exactly the pair rule (a pair as soon as the two are within
 * max_skew; at most one slot full between offers).
 *
 * So every offered frame leaves exactly once (in a set, dropped, or by frame_pairing_flush /
 * frame_pairing_set_active), each camera's frames leave in increasing timestamp order, and sets
 * come out in increasing timestamp order of every camera (and of the reference while it stays
 * the same camera). With max_skew at most half the frame period, the set formed is the closest
 * one available: the next frame of any camera is at least a period away.
 *
 * Fewer than two cameras taking part form no sets: their frames are dropped.
 *
 * A frame is an opaque handle (the caller's buffer index) with its timestamp.
 */
#ifndef STEREO_FRAME_PAIRING_H
#define STEREO_FRAME_PAIRING_H

#include <stdint.h>

#define FRAME_PAIRING_MAX 8 /* cameras (STEREO_MAX_VIEWS) */

typedef struct {
    int64_t max_skew_ns;
    int n;                                /* cameras */
    unsigned active;                      /* bit k: camera k takes part in sets */
    int ref;                              /* the reference: lowest active camera (-1: none) */
    int waiting[FRAME_PAIRING_MAX];       /* 1 if the camera's slot holds a frame */
    int handle[FRAME_PAIRING_MAX];
    int64_t ts[FRAME_PAIRING_MAX];
    int offered[FRAME_PAIRING_MAX];       /* 1 once the camera offered a frame (since a flush) */
    int64_t last_ts[FRAME_PAIRING_MAX];   /* the newest timestamp it offered */
} frame_pairing;

typedef struct {
    int camera, handle;
    int64_t ts;
} frame_pairing_drop;

/* What one offer (or flush / set_active) decided: at most one set, and the frames that go back
 * unpaired (at most one per camera plus the offered frame). */
typedef struct {
    int paired;                 /* 1: a set: handle[k] for each camera k in mask (else -1) */
    unsigned mask;              /* the cameras of the set (all taking part) */
    int ref;                    /* its reference camera */
    int handle[FRAME_PAIRING_MAX];
    int64_t ts[FRAME_PAIRING_MAX];
    int dropped;                /* frames that go back unpaired: drop[0 .. dropped-1] */
    frame_pairing_drop drop[FRAME_PAIRING_MAX + 1];
} frame_pairing_result;

/* Two cameras (the pair). */
void frame_pairing_init(frame_pairing *p, int64_t max_skew_ns);
/* n cameras, 2..FRAME_PAIRING_MAX (clamped), all taking part. */
void frame_pairing_init_n(frame_pairing *p, int n, int64_t max_skew_ns);

/* Offers camera `camera`'s (0..n-1) frame `handle` captured at ts_ns. */
void frame_pairing_offer(frame_pairing *p, int camera, int handle, int64_t ts_ns,
                         frame_pairing_result *r);

/* Empties a camera's slot (its camera was lost or stops): the frame comes back as a drop. The
 * camera keeps taking part: no set forms until it delivers again; its next frame may be older
 * than those before the flush (a reopened camera starts over). */
void frame_pairing_flush(frame_pairing *p, int camera, frame_pairing_result *r);

/* Takes camera out of the sets (active 0: its slot is flushed, its later offers are dropped) or
 * back in. When that moves the reference, every slot is flushed (the waiting frames were matched
 * against the old one). Taking a camera out may complete a set of those that remain. */
void frame_pairing_set_active(frame_pairing *p, int camera, int active, frame_pairing_result *r);

#endif
