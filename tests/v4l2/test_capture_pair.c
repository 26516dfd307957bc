/* SPDX-License-Identifier: Apache-2.0 */
/* test_capture_pair.c — the pairing of two free-running cameras by timestamp (frame_pairing.h):
 * the skew boundary, which frame is dropped, out-of-order and repeated frames, flushing a lost
 * camera, and simulated streams (same rate with a phase offset, different rates, jitter) where
 * every frame must leave exactly once, pairs stay within the skew and come out in time order.
 *
 * Run: CMOCKA_MESSAGE_OUTPUT=TAP build/tests/test_capture_pair */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frame_pairing.h"

#define MS 1000000LL

/* ---- single decisions ---------------------------------------------------------------------- */

static void offer(frame_pairing *p, int cam, int handle, int64_t ts, frame_pairing_result *r)
{
    frame_pairing_offer(p, cam, handle, ts, r);
    if (p->waiting[0] && p->waiting[1])
        fail_msg("both cameras wait after offering camera %d frame %d", cam, handle);
}

static void test_equal_timestamps_pair(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init(&p, 10 * MS);
    offer(&p, 0, 7, 1000 * MS, &r);
    assert_false(r.paired);
    assert_false(r.dropped);
    offer(&p, 1, 3, 1000 * MS, &r);
    assert_true(r.paired);
    assert_false(r.dropped);
    assert_int_equal(r.handle[0], 7);
    assert_int_equal(r.handle[1], 3);
    assert_false(p.waiting[0] || p.waiting[1]);
}

static void test_skew_boundary(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    /* exactly max_skew apart pairs, in either order */
    for (int first = 0; first < 2; first++) {
        frame_pairing_init(&p, 10 * MS);
        offer(&p, first, 1, 100 * MS, &r);
        offer(&p, 1 - first, 2, 110 * MS, &r);
        assert_true(r.paired);
        assert_int_equal(r.handle[first], 1);
        assert_int_equal(r.handle[1 - first], 2);
        assert_int_equal(r.ts[first], 100 * MS);
    }
    /* one nanosecond more: the older (waiting) frame is dropped, the newer waits */
    frame_pairing_init(&p, 10 * MS);
    offer(&p, 0, 1, 100 * MS, &r);
    offer(&p, 1, 2, 110 * MS + 1, &r);
    assert_false(r.paired);
    assert_true(r.dropped);
    assert_int_equal(r.drop_camera, 0);
    assert_int_equal(r.drop_handle, 1);
    assert_true(p.waiting[1]);
    assert_false(p.waiting[0]);
}

static void test_late_old_frame_is_dropped(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init(&p, 5 * MS);
    offer(&p, 0, 1, 200 * MS, &r);
    /* camera 1 delivers a frame far older than camera 0's: it can never pair, drop it */
    offer(&p, 1, 9, 150 * MS, &r);
    assert_false(r.paired);
    assert_true(r.dropped);
    assert_int_equal(r.drop_camera, 1);
    assert_int_equal(r.drop_handle, 9);
    assert_true(p.waiting[0]);
    assert_int_equal(p.handle[0], 1);
    /* camera 0's frame still pairs with camera 1's next one */
    offer(&p, 1, 10, 203 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.handle[0], 1);
    assert_int_equal(r.handle[1], 10);
}

static void test_newer_frame_replaces_waiting(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init(&p, 5 * MS);
    offer(&p, 1, 1, 100 * MS, &r);
    offer(&p, 1, 2, 140 * MS, &r); /* no partner came: the older one goes back */
    assert_true(r.dropped);
    assert_int_equal(r.drop_camera, 1);
    assert_int_equal(r.drop_handle, 1);
    assert_int_equal(p.handle[1], 2);
    /* out of order on one camera: the one that arrives late but is older goes */
    offer(&p, 1, 3, 120 * MS, &r);
    assert_true(r.dropped);
    assert_int_equal(r.drop_handle, 3);
    assert_int_equal(p.handle[1], 2);
    assert_int_equal(p.ts[1], 140 * MS);
}

static void test_flush(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init(&p, 5 * MS);
    frame_pairing_flush(&p, 0, &r);
    assert_false(r.dropped);
    assert_false(r.paired);
    offer(&p, 0, 4, 100 * MS, &r);
    frame_pairing_flush(&p, 1, &r); /* the other camera's flush leaves camera 0 alone */
    assert_false(r.dropped);
    assert_true(p.waiting[0]);
    frame_pairing_flush(&p, 0, &r);
    assert_true(r.dropped);
    assert_int_equal(r.drop_camera, 0);
    assert_int_equal(r.drop_handle, 4);
    assert_false(p.waiting[0]);
    /* a later frame of camera 1 does not pair with the flushed one */
    offer(&p, 1, 5, 101 * MS, &r);
    assert_false(r.paired);
    assert_false(r.dropped);
}

/* ---- simulated streams --------------------------------------------------------------------- */

typedef struct {
    int64_t ts;
    int camera, handle;
} sim_frame;

typedef struct {
    long offered[2], pairs, dropped[2];
    int64_t last_pair_ts;
    int64_t worst_skew;
} sim_result;

static int by_time(const void *a, const void *b)
{
    const sim_frame *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* n frames per camera: camera c's frame i at offset[c] + i * period[c] + jitter; feeds them in
 * time order and checks the invariants: each frame leaves once, pairs within the skew and in
 * increasing time. `lost` (>= 0): camera 1 is flushed and silent for frames lost..lost+9. */
static sim_result simulate(int n, const int64_t period[2], const int64_t offset[2],
                           int64_t jitter, int64_t max_skew, int lost)
{
    sim_result s;
    memset(&s, 0, sizeof s);
    s.last_pair_ts = INT64_MIN;
    sim_frame *f = calloc((size_t)(2 * n), sizeof *f);
    char *left = calloc((size_t)(2 * n), 1); /* 1 once a frame has left the pairing */
    assert_non_null(f);
    assert_non_null(left);
    int m = 0;
    unsigned seed = 12345;
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < n; i++) {
            if (c == 1 && lost >= 0 && i >= lost && i < lost + 10)
                continue;
            seed = seed * 1103515245u + 12345u;
            int64_t j = jitter ? (int64_t)((seed >> 8) % (uint64_t)(2 * jitter + 1)) - jitter : 0;
            f[m] = (sim_frame){offset[c] + i * period[c] + j, c, m};
            m++;
        }
    qsort(f, (size_t)m, sizeof *f, by_time);
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init(&p, max_skew);
    int flushed = 0;
    for (int i = 0; i < m; i++) {
        if (lost >= 0 && !flushed && f[i].ts >= offset[1] + lost * period[1]) {
            frame_pairing_flush(&p, 1, &r);
            if (r.dropped) {
                assert_false(left[r.drop_handle]);
                left[r.drop_handle] = 1;
                s.dropped[1]++;
            }
            flushed = 1;
        }
        s.offered[f[i].camera]++;
        offer(&p, f[i].camera, f[i].handle, f[i].ts, &r);
        if (r.dropped) {
            assert_false(left[r.drop_handle]);
            left[r.drop_handle] = 1;
            s.dropped[r.drop_camera]++;
        }
        if (r.paired) {
            for (int c = 0; c < 2; c++) {
                assert_false(left[r.handle[c]]);
                left[r.handle[c]] = 1;
            }
            int64_t d = r.ts[1] - r.ts[0];
            if (d < 0)
                d = -d;
            assert_true(d <= max_skew);
            if (d > s.worst_skew)
                s.worst_skew = d;
            int64_t t = r.ts[0] < r.ts[1] ? r.ts[0] : r.ts[1];
            assert_true(t > s.last_pair_ts);
            s.last_pair_ts = t;
            s.pairs++;
        }
    }
    /* conservation: every offered frame paired, dropped, or still waiting */
    long waiting = p.waiting[0] + p.waiting[1];
    assert_int_equal(s.offered[0] + s.offered[1],
                     2 * s.pairs + s.dropped[0] + s.dropped[1] + waiting);
    free(f);
    free(left);
    return s;
}

static void test_same_rate_phase_offset(void **state)
{
    /* 25 fps with the right camera up to half a period behind: with max skew = half a period,
     * every frame pairs (the first may wait alone) */
    int64_t period[2] = {40 * MS, 40 * MS};
    for (int64_t off = 0; off <= 20 * MS; off += 5 * MS) {
        int64_t offset[2] = {1000 * MS, 1000 * MS + off};
        sim_result s = simulate(200, period, offset, 0, 20 * MS, -1);
        assert_int_equal(s.pairs, 200);
        assert_true(s.worst_skew == off);
    }
    /* the same, right camera ahead */
    int64_t offset[2] = {1000 * MS + 13 * MS, 1000 * MS};
    sim_result s = simulate(200, period, offset, 0, 20 * MS, -1);
    assert_int_equal(s.pairs, 200);
    assert_int_equal(s.dropped[0] + s.dropped[1], 0);
}

static void test_tight_skew_drops_everything_out_of_reach(void **state)
{
    int64_t period[2] = {40 * MS, 40 * MS};
    int64_t offset[2] = {0, 15 * MS};
    sim_result s = simulate(100, period, offset, 0, 10 * MS, -1);
    assert_int_equal(s.pairs, 0);
    assert_true(s.dropped[0] + s.dropped[1] >= 199);
}

static void test_different_rates(void **state)
{
    /* 30 fps and 25 fps: they line up every 200 ms (6 and 5 frames); within 4 ms only then
     * and at the near misses (+-6.7 ms apart is too far) */
    int64_t period[2] = {100 * MS / 3, 40 * MS};
    int64_t offset[2] = {0, 0};
    sim_result s = simulate(150, period, offset, 0, 4 * MS, -1);
    assert_true(s.pairs >= 24 && s.pairs <= 26);
    assert_true(s.worst_skew <= 4 * MS);
}

static void test_jitter(void **state)
{
    int64_t period[2] = {40 * MS, 40 * MS};
    int64_t offset[2] = {0, 7 * MS};
    sim_result s = simulate(500, period, offset, 3 * MS, 20 * MS, -1);
    assert_true(s.pairs >= 495);
}

static void test_camera_lost_and_back(void **state)
{
    int64_t period[2] = {40 * MS, 40 * MS};
    int64_t offset[2] = {0, 3 * MS};
    sim_result s = simulate(100, period, offset, 0, 20 * MS, 40);
    /* 10 frames of camera 1 missing: their 10 partners are dropped, the rest pair */
    assert_int_equal(s.pairs, 90);
    assert_int_equal(s.dropped[0], 10);
    assert_int_equal(s.dropped[1], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_timestamps_pair),
        cmocka_unit_test(test_skew_boundary),
        cmocka_unit_test(test_late_old_frame_is_dropped),
        cmocka_unit_test(test_newer_frame_replaces_waiting),
        cmocka_unit_test(test_flush),
        cmocka_unit_test(test_same_rate_phase_offset),
        cmocka_unit_test(test_tight_skew_drops_everything_out_of_reach),
        cmocka_unit_test(test_different_rates),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_camera_lost_and_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
