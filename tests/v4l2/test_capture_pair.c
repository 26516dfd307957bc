/* SPDX-License-Identifier: Apache-2.0 */
/* test_capture_pair.c — the grouping of free-running cameras by timestamp (frame_pairing.h).
 * Two cameras: the skew boundary, which frame is dropped, out-of-order and repeated frames,
 * flushing a lost camera, and simulated streams (same rate with a phase offset, different rates,
 * jitter) where every frame must leave exactly once, pairs stay within the skew and come out in
 * time order; and the pair rule as it was before N cameras (a model of it here) against the
 * N-way code with n = 2, decision by decision on random streams.
 * N cameras (3..8): sets only when every camera has a frame within the skew of the reference's
 * (both edges, non-reference cameras 2 * skew apart), every arrival order of one instant's
 * frames, which frame is dropped when (stale, too new, closer to the reference), a camera that
 * stops, cameras taken out and back (partial sets, the reference moving), simulated streams of
 * 3, 4 and 8 cameras, and random offers / flushes / activations checked for the invariants.
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
    assert_int_equal(r.drop[0].camera, 0);
    assert_int_equal(r.drop[0].handle, 1);
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
    assert_int_equal(r.drop[0].camera, 1);
    assert_int_equal(r.drop[0].handle, 9);
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
    assert_int_equal(r.drop[0].camera, 1);
    assert_int_equal(r.drop[0].handle, 1);
    assert_int_equal(p.handle[1], 2);
    /* out of order on one camera: the one that arrives late but is older goes */
    offer(&p, 1, 3, 120 * MS, &r);
    assert_true(r.dropped);
    assert_int_equal(r.drop[0].handle, 3);
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
    assert_int_equal(r.drop[0].camera, 0);
    assert_int_equal(r.drop[0].handle, 4);
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
                assert_false(left[r.drop[0].handle]);
                left[r.drop[0].handle] = 1;
                s.dropped[1]++;
            }
            flushed = 1;
        }
        s.offered[f[i].camera]++;
        offer(&p, f[i].camera, f[i].handle, f[i].ts, &r);
        assert_true(r.dropped <= 1); /* two cameras: one drop at most per offer */
        if (r.dropped) {
            assert_false(left[r.drop[0].handle]);
            left[r.drop[0].handle] = 1;
            s.dropped[r.drop[0].camera]++;
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


/* ---- the pair rule before N cameras, as a model ------------------------------------------- */

typedef struct {
    int64_t skew;
    int waiting[2], handle[2];
    int64_t ts[2];
} model2;

/* The rule of the two-camera frame_pairing (its header's table): returns the pair / drop. */
static void model2_offer(model2 *m, int k, int h, int64_t t, int *paired, int pair_h[2],
                         int *drop_cam, int *drop_h)
{
    int o = 1 - k;
    *paired = 0;
    *drop_cam = *drop_h = -1;
    if (m->waiting[o]) {
        int64_t d = t - m->ts[o];
        if (d <= m->skew && -d <= m->skew) {
            *paired = 1;
            pair_h[k] = h;
            pair_h[o] = m->handle[o];
            m->waiting[o] = 0;
        } else if (d > 0) {
            *drop_cam = o, *drop_h = m->handle[o];
            m->waiting[o] = 0;
            m->waiting[k] = 1, m->handle[k] = h, m->ts[k] = t;
        } else
            *drop_cam = k, *drop_h = h;
        return;
    }
    if (m->waiting[k]) {
        if (t < m->ts[k]) {
            *drop_cam = k, *drop_h = h;
            return;
        }
        *drop_cam = k, *drop_h = m->handle[k];
    }
    m->waiting[k] = 1, m->handle[k] = h, m->ts[k] = t;
}

static void test_two_cameras_as_the_pair_rule(void **state)
{
    unsigned seed = 777;
    for (int run = 0; run < 200; run++) {
        seed = seed * 1103515245u + 12345u;
        int64_t skew = (int64_t)(1 + (seed >> 8) % 30) * MS;
        frame_pairing p;
        frame_pairing_result r;
        frame_pairing_init(&p, skew);
        model2 m;
        memset(&m, 0, sizeof m);
        m.skew = skew;
        int64_t t[2] = {0, (int64_t)((seed >> 4) % 50) * MS};
        for (int i = 0; i < 300; i++) {
            seed = seed * 1103515245u + 12345u;
            int k = (int)((seed >> 9) & 1);
            /* steps of 0..40 ms (each camera's frames in time order, as offers must be) */
            int64_t step = (int64_t)((seed >> 12) % 41) * MS;
            t[k] += step;
            int mp, mh[2] = {-1, -1}, mdc, mdh;
            model2_offer(&m, k, i, t[k], &mp, mh, &mdc, &mdh);
            offer(&p, k, i, t[k], &r);
            assert_int_equal(r.paired, mp);
            if (mp) {
                assert_int_equal(r.handle[0], mh[0]);
                assert_int_equal(r.handle[1], mh[1]);
                assert_int_equal(r.mask, 3);
                assert_int_equal(r.ref, 0);
            }
            assert_int_equal(r.dropped, mdc >= 0);
            if (mdc >= 0) {
                assert_int_equal(r.drop[0].camera, mdc);
                assert_int_equal(r.drop[0].handle, mdh);
            }
            for (int c = 0; c < 2; c++) {
                assert_int_equal(p.waiting[c], m.waiting[c]);
                if (m.waiting[c])
                    assert_int_equal(p.handle[c], m.handle[c]);
            }
        }
    }
}

/* ---- N cameras: single decisions --------------------------------------------------------- */

/* Offers and checks that no drop / set happened. */
static void offer_quiet(frame_pairing *p, int cam, int handle, int64_t ts)
{
    frame_pairing_result r;
    frame_pairing_offer(p, cam, handle, ts, &r);
    if (r.paired || r.dropped)
        fail_msg("camera %d frame %d at %lld: paired %d, dropped %d", cam, handle,
                 (long long)ts, r.paired, r.dropped);
}

static int dropped_handle(const frame_pairing_result *r, int handle)
{
    for (int i = 0; i < r->dropped; i++)
        if (r->drop[i].handle == handle)
            return 1;
    return 0;
}

static void test_three_need_all_three(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init_n(&p, 3, 10 * MS);
    assert_int_equal(p.n, 3);
    offer_quiet(&p, 0, 10, 100 * MS);
    offer_quiet(&p, 1, 11, 100 * MS);
    frame_pairing_offer(&p, 2, 12, 100 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.dropped, 0);
    assert_int_equal(r.mask, 7);
    assert_int_equal(r.ref, 0);
    assert_int_equal(r.handle[0], 10);
    assert_int_equal(r.handle[1], 11);
    assert_int_equal(r.handle[2], 12);
    assert_int_equal(r.handle[3], -1);
    for (int k = 0; k < 3; k++)
        assert_false(p.waiting[k]);
}

static void test_n_skew_edges(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    /* the other two cameras at -skew and +skew of the reference: 2 * skew apart, still a set */
    frame_pairing_init_n(&p, 3, 10 * MS);
    offer_quiet(&p, 1, 1, 90 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    frame_pairing_offer(&p, 2, 2, 110 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.ts[1] - r.ts[0], -10 * MS);
    assert_int_equal(r.ts[2] - r.ts[0], 10 * MS);
    /* one nanosecond over on the late side: the reference's frame can never get camera 2's,
     * it goes back with nothing else; camera 1's stays for the reference's next frame */
    frame_pairing_init_n(&p, 3, 10 * MS);
    offer_quiet(&p, 1, 1, 90 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    frame_pairing_offer(&p, 2, 2, 110 * MS + 1, &r);
    assert_false(r.paired);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].camera, 0);
    assert_int_equal(r.drop[0].handle, 0);
    assert_true(p.waiting[1] && p.waiting[2] && !p.waiting[0]);
    /* the reference's next frame at 110: camera 1's (90) is 20 ms behind and goes, camera 2's
     * waits within the skew */
    frame_pairing_offer(&p, 0, 3, 110 * MS, &r);
    assert_false(r.paired);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].camera, 1);
    assert_int_equal(r.drop[0].handle, 1);
    frame_pairing_offer(&p, 1, 4, 120 * MS, &r); /* exactly +skew */
    assert_true(r.paired);
    assert_int_equal(r.handle[0], 3);
    assert_int_equal(r.handle[1], 4);
    assert_int_equal(r.handle[2], 2);
    /* one nanosecond over on the early side: the late frame is dropped at once */
    frame_pairing_init_n(&p, 3, 10 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    frame_pairing_offer(&p, 1, 1, 90 * MS - 1, &r);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 1);
    assert_false(p.waiting[1]);
}

static void test_reference_drops_stale_and_yields_to_new(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init_n(&p, 4, 5 * MS);
    /* cameras 1..3 wait before the reference: a reference frame 20 ms later drops all that are
     * more than the skew behind it */
    offer_quiet(&p, 1, 1, 100 * MS);
    offer_quiet(&p, 2, 2, 116 * MS);
    offer_quiet(&p, 3, 3, 95 * MS);
    frame_pairing_offer(&p, 0, 0, 120 * MS, &r);
    assert_false(r.paired);
    assert_int_equal(r.dropped, 2);
    assert_true(dropped_handle(&r, 1) && dropped_handle(&r, 3));
    assert_true(p.waiting[0] && p.waiting[2] && !p.waiting[1] && !p.waiting[3]);
    /* a camera far ahead of a new reference frame: that frame and the waiting older one go */
    frame_pairing_init_n(&p, 3, 5 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    offer_quiet(&p, 1, 1, 103 * MS);
    frame_pairing_offer(&p, 2, 2, 140 * MS, &r); /* 40 ms after the reference's: it goes */
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 0);
    /* camera 1 (103) waits on; the reference's next frame (120) is checked against camera 2's
     * (140), which is more than the skew ahead: it can never get one, it goes */
    frame_pairing_offer(&p, 0, 5, 120 * MS, &r);
    assert_false(r.paired);
    assert_int_equal(r.dropped, 1); /* itself: camera 2 is 20 ms ahead */
    assert_int_equal(r.drop[0].handle, 5);
    assert_false(p.waiting[0]);
    frame_pairing_offer(&p, 0, 6, 138 * MS, &r); /* camera 1's 103 is now 35 ms behind */
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 1);
    frame_pairing_offer(&p, 1, 7, 139 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.handle[0], 6);
    assert_int_equal(r.handle[1], 7);
    assert_int_equal(r.handle[2], 2);
    /* the reference's own newer frame replaces its waiting one */
    frame_pairing_init_n(&p, 3, 5 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    frame_pairing_offer(&p, 0, 1, 140 * MS, &r);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 0);
    assert_int_equal(p.handle[0], 1);
    /* and an older one (out of order) is dropped, the newer stays */
    frame_pairing_offer(&p, 0, 2, 120 * MS, &r);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 2);
    assert_int_equal(p.handle[0], 1);
}

static void test_closer_to_reference_waits(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    /* skew 20 ms, 25 fps: camera 1 has frames at 88 and 128 around the reference's 100+... */
    frame_pairing_init_n(&p, 3, 20 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    offer_quiet(&p, 1, 1, 85 * MS);       /* 15 ms before the reference */
    frame_pairing_offer(&p, 1, 2, 110 * MS, &r); /* 10 ms after: closer, it waits */
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 1);
    assert_int_equal(p.handle[1], 2);
    frame_pairing_offer(&p, 1, 3, 119 * MS, &r); /* 19 ms after: farther, it goes */
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 3);
    assert_int_equal(p.handle[1], 2);
    frame_pairing_offer(&p, 2, 4, 100 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.handle[1], 2);
    /* a tie: the newer one waits */
    frame_pairing_init_n(&p, 3, 20 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    offer_quiet(&p, 2, 1, 90 * MS);
    frame_pairing_offer(&p, 2, 2, 110 * MS, &r);
    assert_int_equal(r.drop[0].handle, 1);
    assert_int_equal(p.handle[2], 2);
    /* without a reference frame the newer one always waits */
    frame_pairing_init_n(&p, 3, 20 * MS);
    offer_quiet(&p, 2, 1, 90 * MS);
    frame_pairing_offer(&p, 2, 2, 130 * MS, &r);
    assert_int_equal(r.drop[0].handle, 1);
    assert_int_equal(p.handle[2], 2);
}

/* Next permutation of a[0..n-1] in lexicographic order; 0 after the last. */
static int next_perm(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (a[j] <= a[i])
        j--;
    int t = a[i];
    a[i] = a[j], a[j] = t;
    for (int x = i + 1, y = n - 1; x < y; x++, y--)
        t = a[x], a[x] = a[y], a[y] = t;
    return 1;
}

static void test_every_arrival_order(void **state)
{
    /* one instant's frames of n cameras, each within the skew of the reference's, offered in
     * every order (the caller sorts by time only within what one poll dequeued): one set with
     * every frame, nothing dropped, whatever the order */
    for (int n = 2; n <= 5; n++) {
        int order[8];
        for (int i = 0; i < n; i++)
            order[i] = i;
        int perms = 0;
        do {
            frame_pairing p;
            frame_pairing_result r;
            frame_pairing_init_n(&p, n, 8 * MS);
            int sets = 0;
            for (int i = 0; i < n; i++) {
                int k = order[i];
                frame_pairing_offer(&p, k, 100 + k, 1000 * MS + (k % 2 ? 1 : -1) * k * MS, &r);
                assert_int_equal(r.dropped, 0);
                if (r.paired) {
                    assert_int_equal(i, n - 1);
                    for (int c = 0; c < n; c++)
                        assert_int_equal(r.handle[c], 100 + c);
                    sets++;
                }
            }
            assert_int_equal(sets, 1);
            perms++;
        } while (next_perm(order, n));
        assert_int_equal(perms, n == 2 ? 2 : n == 3 ? 6 : n == 4 ? 24 : 120);
    }
}

static void test_set_active_partial_sets(void **state)
{
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init_n(&p, 3, 10 * MS);
    offer_quiet(&p, 0, 0, 100 * MS);
    offer_quiet(&p, 1, 1, 101 * MS);
    /* camera 2 lost: its slot is empty; taking it out completes the set of 0 and 1 */
    frame_pairing_set_active(&p, 2, 0, &r);
    assert_true(r.paired);
    assert_int_equal(r.mask, 3);
    assert_int_equal(r.ref, 0);
    assert_int_equal(r.handle[0], 0);
    assert_int_equal(r.handle[1], 1);
    assert_int_equal(r.handle[2], -1);
    /* its frames (one that was in flight) are dropped while it is out */
    frame_pairing_offer(&p, 2, 9, 102 * MS, &r);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].camera, 2);
    /* sets of two go on */
    offer_quiet(&p, 1, 2, 141 * MS);
    frame_pairing_offer(&p, 0, 3, 140 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.mask, 3);
    /* back in: sets need all three again */
    frame_pairing_set_active(&p, 2, 1, &r);
    assert_false(r.paired);
    assert_int_equal(r.dropped, 0);
    offer_quiet(&p, 0, 4, 180 * MS);
    offer_quiet(&p, 1, 5, 180 * MS);
    frame_pairing_offer(&p, 2, 6, 181 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.mask, 7);
    /* the reference (camera 0) out: camera 1 becomes it, every waiting frame goes back */
    offer_quiet(&p, 1, 7, 220 * MS);
    offer_quiet(&p, 2, 8, 221 * MS);
    frame_pairing_set_active(&p, 0, 0, &r);
    assert_false(r.paired);
    assert_int_equal(r.dropped, 2);
    assert_true(dropped_handle(&r, 7) && dropped_handle(&r, 8));
    assert_int_equal(p.ref, 1);
    offer_quiet(&p, 2, 10, 259 * MS);
    frame_pairing_offer(&p, 1, 11, 260 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.mask, 6);
    assert_int_equal(r.ref, 1);
    assert_int_equal(r.handle[0], -1);
    assert_int_equal(r.handle[1], 11);
    assert_int_equal(r.handle[2], 10);
    /* only one camera left: no sets, its frames go back */
    frame_pairing_set_active(&p, 2, 0, &r);
    frame_pairing_offer(&p, 1, 12, 300 * MS, &r);
    assert_false(r.paired);
    assert_int_equal(r.dropped, 1);
    /* camera 0 back: it is the reference again (the slots are flushed: none wait) */
    frame_pairing_set_active(&p, 0, 1, &r);
    assert_int_equal(p.ref, 0);
    assert_int_equal(r.dropped, 0);
    offer_quiet(&p, 0, 13, 340 * MS);
    frame_pairing_offer(&p, 1, 14, 342 * MS, &r);
    assert_true(r.paired);
    assert_int_equal(r.mask, 3);
    /* flush keeps the camera in: nothing forms until it delivers again */
    frame_pairing_set_active(&p, 2, 1, &r);
    offer_quiet(&p, 0, 15, 380 * MS);
    offer_quiet(&p, 2, 16, 380 * MS);
    frame_pairing_flush(&p, 2, &r);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.drop[0].handle, 16);
    offer_quiet(&p, 1, 17, 381 * MS);
    assert_true(p.waiting[0] && p.waiting[1]);
}

/* ---- N cameras: simulated streams --------------------------------------------------------- */

typedef struct {
    long offered[8], sets, dropped[8];
    int64_t worst_skew[8];  /* per camera: |ts - reference ts| in sets */
} simn_result;

/* n cameras, frames per camera: camera c's frame i at offset[c] + i * period[c] + jitter. Camera
 * `stop` (>= 0) delivers nothing for its frames stop_from .. stop_from + stop_len - 1 (it just
 * stops, nobody tells the pairing). Checks every invariant of the header. */
static simn_result simulate_n(int n, int frames, const int64_t *period, const int64_t *offset,
                              int64_t jitter, int64_t skew, int stop, int stop_from, int stop_len)
{
    simn_result s;
    memset(&s, 0, sizeof s);
    sim_frame *f = calloc((size_t)(n * frames), sizeof *f);
    char *left = calloc((size_t)(n * frames), 1);
    assert_non_null(f);
    assert_non_null(left);
    int m = 0;
    unsigned seed = 4242 + (unsigned)n;
    for (int c = 0; c < n; c++)
        for (int i = 0; i < frames; i++) {
            if (c == stop && i >= stop_from && i < stop_from + stop_len)
                continue;
            seed = seed * 1103515245u + 12345u;
            int64_t j = jitter ? (int64_t)((seed >> 8) % (uint64_t)(2 * jitter + 1)) - jitter : 0;
            f[m] = (sim_frame){offset[c] + i * period[c] + j, c, m};
            m++;
        }
    qsort(f, (size_t)m, sizeof *f, by_time);
    frame_pairing p;
    frame_pairing_result r;
    frame_pairing_init_n(&p, n, skew);
    int64_t last[8];
    for (int c = 0; c < 8; c++)
        last[c] = INT64_MIN;
    for (int i = 0; i < m; i++) {
        s.offered[f[i].camera]++;
        frame_pairing_offer(&p, f[i].camera, f[i].handle, f[i].ts, &r);
        for (int d = 0; d < r.dropped; d++) {
            assert_false(left[r.drop[d].handle]);
            left[r.drop[d].handle] = 1;
            s.dropped[r.drop[d].camera]++;
        }
        if (r.paired) {
            assert_int_equal(r.mask, (1u << n) - 1);
            for (int c = 0; c < n; c++) {
                assert_false(left[r.handle[c]]);
                left[r.handle[c]] = 1;
                int64_t d = r.ts[c] - r.ts[0];
                d = d < 0 ? -d : d;
                assert_true(d <= skew);
                if (d > s.worst_skew[c])
                    s.worst_skew[c] = d;
                assert_true(r.ts[c] > last[c]); /* sets in time order, per camera */
                last[c] = r.ts[c];
            }
            s.sets++;
        }
    }
    long offered = 0, out = n * s.sets;
    for (int c = 0; c < n; c++) {
        offered += s.offered[c];
        out += s.dropped[c] + p.waiting[c];
    }
    assert_int_equal(offered, out);
    free(f);
    free(left);
    return s;
}

static void test_n_streams_phase_offsets(void **state)
{
    /* 25 fps, every camera within half a period of the reference (either side): all sets */
    for (int n = 3; n <= 8; n++) {
        int64_t period[8], offset[8];
        for (int c = 0; c < n; c++) {
            period[c] = 40 * MS;
            offset[c] = 1000 * MS + (c % 2 ? 1 : -1) * (int64_t)(c * 19 / (n - 1)) * MS;
        }
        simn_result s = simulate_n(n, 200, period, offset, 0, 20 * MS, -1, 0, 0);
        assert_int_equal(s.sets, 200);
        for (int c = 0; c < n; c++) {
            assert_int_equal(s.dropped[c], 0);
            int64_t want = offset[c] - offset[0];
            assert_true(s.worst_skew[c] == (want < 0 ? -want : want));
        }
    }
}

static void test_n_streams_jitter_and_rates(void **state)
{
    /* jitter of +-3 ms around offsets of up to 12 ms: (almost) every instant forms a set */
    int64_t period[4] = {40 * MS, 40 * MS, 40 * MS, 40 * MS};
    int64_t offset[4] = {0, 7 * MS, -5 * MS, 12 * MS};
    simn_result s = simulate_n(4, 500, period, offset, 3 * MS, 20 * MS, -1, 0, 0);
    assert_true(s.sets >= 495);
    /* a 30 fps camera among two 25 fps ones, 4 ms skew: sets only where all three line up
     * (every 200 ms: 6 and 5 frames) */
    int64_t p3[3] = {40 * MS, 100 * MS / 3, 40 * MS};
    int64_t o3[3] = {0, 0, 1 * MS};
    s = simulate_n(3, 150, p3, o3, 0, 4 * MS, -1, 0, 0);
    assert_true(s.sets >= 24 && s.sets <= 31);
    for (int c = 0; c < 3; c++)
        assert_true(s.worst_skew[c] <= 4 * MS);
    /* a skew no camera meets: nothing, everything dropped or waiting */
    int64_t o4[3] = {0, 15 * MS, 30 * MS};
    s = simulate_n(3, 100, period, o4, 0, 10 * MS, -1, 0, 0);
    assert_int_equal(s.sets, 0);
}

static void test_n_camera_stops(void **state)
{
    int64_t period[3] = {40 * MS, 40 * MS, 40 * MS};
    int64_t offset[3] = {0, 5 * MS, -6 * MS};
    /* a non-reference camera stops for 10 frames: no sets meanwhile; the others' frames of
     * those 10 instants are dropped (camera 0's as replaced by its next, camera 1's as stale) */
    simn_result s = simulate_n(3, 100, period, offset, 0, 20 * MS, 2, 40, 10);
    assert_int_equal(s.sets, 90);
    assert_int_equal(s.dropped[0], 10);
    assert_int_equal(s.dropped[1], 10);
    assert_int_equal(s.dropped[2], 0);
    /* the reference stops: the same from the other side */
    s = simulate_n(3, 100, period, offset, 0, 20 * MS, 0, 40, 10);
    assert_int_equal(s.sets, 90);
    assert_int_equal(s.dropped[0], 0);
    assert_int_equal(s.dropped[1], 10);
    assert_int_equal(s.dropped[2], 10);
}

static void test_n_random_offers_keep_invariants(void **state)
{
    /* random cameras, timestamps (sometimes going back), flushes and activations: every frame
     * leaves exactly once, a set holds exactly the cameras taking part at that moment, all
     * within the skew of its reference, and each camera's frames leave in time order */
    unsigned seed = 99;
    enum { OFFERS = 4000 };
    long total_sets = 0;
    for (int run = 0; run < 20; run++) {
        int n = 2 + run % 7;
        int64_t skew = (int64_t)(5 + run) * MS;
        frame_pairing p;
        frame_pairing_result r;
        frame_pairing_init_n(&p, n, skew);
        static char left[OFFERS];
        static int cam_of[OFFERS];
        memset(left, 0, sizeof left);
        int64_t t[8] = {0}, last_out[8], clock = 0;
        for (int c = 0; c < 8; c++)
            last_out[c] = INT64_MIN;
        long sets = 0;
        for (int i = 0; i < OFFERS; i++) {
            seed = seed * 1103515245u + 12345u;
            int k = (int)((seed >> 8) % (unsigned)n);
            int what = (int)((seed >> 16) % 100);
            if (what < 3) {
                frame_pairing_flush(&p, k, &r);
                last_out[k] = INT64_MIN; /* starts over */
            } else if (what < 8) {
                frame_pairing_set_active(&p, k, (seed >> 24) & 1, &r);
            } else {
                /* a common clock moving on, each frame within +-2 skew of it (a camera's
                 * frames then go back in time now and then) */
                seed = seed * 1103515245u + 12345u;
                clock += (int64_t)((seed >> 8) % 8) * MS;
                seed = seed * 1103515245u + 12345u;
                t[k] = clock + (int64_t)((seed >> 8) % (uint64_t)(4 * skew + 1)) - 2 * skew;
                cam_of[i] = k;
                unsigned active = p.active;
                frame_pairing_offer(&p, k, i, t[k], &r);
                if (r.paired)
                    assert_int_equal(r.mask, active);
            }
            for (int d = 0; d < r.dropped; d++) {
                int h = r.drop[d].handle;
                assert_false(left[h]);
                assert_int_equal(cam_of[h], r.drop[d].camera);
                left[h] = 1;
            }
            if (r.paired) {
                int nset = 0;
                assert_true(r.mask & (1u << r.ref));
                for (int c = 0; c < n; c++) {
                    if (!(r.mask & (1u << c))) {
                        assert_int_equal(r.handle[c], -1);
                        continue;
                    }
                    nset++;
                    int h = r.handle[c];
                    assert_false(left[h]);
                    assert_int_equal(cam_of[h], c);
                    left[h] = 1;
                    int64_t d = r.ts[c] - r.ts[r.ref];
                    assert_true(d <= skew && -d <= skew);
                    assert_true(r.ts[c] >= last_out[c]);
                    last_out[c] = r.ts[c];
                }
                assert_true(nset >= 2);
                sets++;
            }
            /* at most one frame waits per camera, and only for cameras taking part */
            for (int c = 0; c < n; c++)
                if (p.waiting[c]) {
                    assert_true(p.active & (1u << c));
                    assert_false(left[p.handle[c]]);
                }
        }
        assert_true(sets > 0);
        total_sets += sets;
    }
    print_message("random offers: %ld sets\n", total_sets);
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
        cmocka_unit_test(test_two_cameras_as_the_pair_rule),
        cmocka_unit_test(test_three_need_all_three),
        cmocka_unit_test(test_n_skew_edges),
        cmocka_unit_test(test_reference_drops_stale_and_yields_to_new),
        cmocka_unit_test(test_closer_to_reference_waits),
        cmocka_unit_test(test_every_arrival_order),
        cmocka_unit_test(test_set_active_partial_sets),
        cmocka_unit_test(test_n_streams_phase_offsets),
        cmocka_unit_test(test_n_streams_jitter_and_rates),
        cmocka_unit_test(test_n_camera_stops),
        cmocka_unit_test(test_n_random_offers_keep_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
