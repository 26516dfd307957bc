/* SPDX-License-Identifier: Apache-2.0 */
/* frame_pairing.h — pairs the frames of two free-running cameras by timestamp (pure logic, no I/O).
 *
 * Each camera's newest frame waits in a slot for a partner from the other camera. Frames are
 * offered one at a time, each camera's in increasing timestamp order (the caller sorts frames it
 * dequeued together by timestamp, so the two cameras interleave as they were captured). For a
 * frame f from camera k, with the other camera o:
 *
 *   o waits with frame g, |f.ts - g.ts| <= max_skew   -> pair (g, f)        both slots empty
 *   o waits with g, f.ts - g.ts > max_skew            -> drop g, f waits    (g can only get farther)
 *   o waits with g, g.ts - f.ts > max_skew            -> drop f             (f can only get farther)
 *   o's slot empty, k waits with h                    -> drop the older of h and f, the newer waits
 *   both slots empty                                  -> f waits
 *
 * So at most one slot is full between offers, every offered frame leaves exactly once (in a pair,
 * dropped, or by frame_pairing_flush), and pairs come out in increasing timestamp order. With
 * max_skew at most half the frame period, the pair formed is the closest one available: the
 * next frame of either camera is at least a period away.
 *
 * A frame is an opaque handle (the caller's buffer index) with its timestamp.
 */
#ifndef STEREO_FRAME_PAIRING_H
#define STEREO_FRAME_PAIRING_H

#include <stdint.h>

typedef struct {
    int64_t max_skew_ns;
    int waiting[2];     /* 1 if the camera's slot holds a frame */
    int handle[2];
    int64_t ts[2];
} frame_pairing;

/* What one offer (or flush) decided. */
typedef struct {
    int paired;                 /* 1: handle[0] (camera 0) and handle[1] (camera 1) form a pair */
    int handle[2];
    int64_t ts[2];
    int dropped;                /* 1: drop_handle of camera drop_camera goes back unpaired */
    int drop_camera;
    int drop_handle;
} frame_pairing_result;

void frame_pairing_init(frame_pairing *p, int64_t max_skew_ns);

/* Offers camera `camera`'s (0 or 1) frame `handle` captured at ts_ns. */
void frame_pairing_offer(frame_pairing *p, int camera, int handle, int64_t ts_ns,
                         frame_pairing_result *r);

/* Empties a camera's slot (its camera was lost or stops): the frame comes back as a drop. */
void frame_pairing_flush(frame_pairing *p, int camera, frame_pairing_result *r);

#endif
