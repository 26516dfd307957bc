/* SPDX-License-Identifier: Apache-2.0 */
/* ros2_ring.h — the shared memory between the live app's ros2:// output (output_ros2.c,
 * the writer) and build/stereo-ros2-bridge (ros2_bridge.c, the reader, the only process
 * that talks DDS). A DDS peer that crashes the DDS library crashes the bridge, not the app.
 *
 * Layout: one ros2_ring_header, then ROS2_RING_SLOTS slots of slot_bytes each: a
 * ros2_ring_slot, then the disparity (int16, width * height: 16 * d or STEREO_INVALID),
 * then the rectified left view (grey, width * height bytes).
 *
 * Each slot is a sequence lock, so that neither side ever waits for the other:
 *   writer: seq = 2k + 1 (writing), a release fence, the data, seq = 2k + 2 (release);
 *           then head = k + 1 (release), then one datagram on the socket to wake the reader
 *           (sent without blocking: a reader that is behind just reads the newest slot).
 *   reader: slot (head - 1) % SLOTS: seq (acquire), even and > what it published last; copy;
 *           an acquire fence; seq again: unchanged, or the copy is dropped (torn).
 * The reader writes `published` (frames it sent to DDS) and `taken` (the head of the newest
 * frame it published) after each frame: the app's stats, its end (it waits, bounded, until the
 * newest frame is taken) and its watch for a bridge that stops taking frames.
 * The bridge gets the memory as file descriptor 3 and its end of the socket as 4; the socket
 * closing (the app ended) ends the bridge.
 */
#ifndef STEREO_APP_ROS2_RING_H
#define STEREO_APP_ROS2_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define ROS2_RING_MAGIC 0x32534f52u /* "ROS2" */
#define ROS2_RING_VERSION 2u
#define ROS2_RING_SLOTS 4
#define ROS2_RING_SHM_FD 3
#define ROS2_RING_SOCK_FD 4

typedef struct {
    uint32_t magic, version;
    uint32_t width, height;
    uint32_t slots;
    uint32_t have_cam;          /* the camera below is valid: depth, CameraInfo, points */
    uint64_t slot_bytes;        /* a slot with its ros2_ring_slot header */
    double focal_px, cx, cy, baseline, doffs_px;  /* hal/depth.h's depth_camera */
    int32_t min_disparity, num_disparities;
    _Atomic uint64_t head;      /* frames written (the newest is slot (head - 1) % slots) */
    _Atomic uint64_t published; /* frames the bridge published */
    _Atomic uint64_t taken;     /* head when the bridge took the frame it published last */
} ros2_ring_header;

typedef struct {
    _Atomic uint64_t seq;       /* odd: being written */
    uint64_t number;            /* the frame's number in the app */
    int64_t stamp_ns;           /* CLOCK_REALTIME of the left frame's capture */
    uint64_t pad;               /* the data starts 8-byte aligned */
} ros2_ring_slot;

static inline uint64_t ros2_ring_slot_bytes(uint32_t width, uint32_t height)
{
    uint64_t n = (uint64_t)width * height;
    return (sizeof(ros2_ring_slot) + n * 3 + 7) & ~(uint64_t)7;
}

static inline uint64_t ros2_ring_bytes(uint32_t width, uint32_t height)
{
    return sizeof(ros2_ring_header) + ROS2_RING_SLOTS * ros2_ring_slot_bytes(width, height);
}

#endif
