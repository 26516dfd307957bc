/* SPDX-License-Identifier: Apache-2.0 */
/* test_synth.c — the generated stereo scene keeps the promises in synth.h: exact integer
 * shifts, photometric consistency of the ground truth on slanted surfaces, consistent left/right
 * ground truth and occlusions, determinism and motion in t, strong texture, and clean errors.
 *
 * Run: CMOCKA_MESSAGE_OUTPUT=TAP build/tests/test_synth */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "synth.h"

static synth_scene render(int w, int h, double t, unsigned seed, int edge_radius)
{
    synth_params p = {.width = w, .height = h, .t = t, .seed = seed, .edge_radius = edge_radius};
    synth_scene sc;
    char err[256] = "";
    if (synth_render(&p, &sc, err, sizeof err) != 0)
        fail_msg("synth_render %dx%d t=%g: %s", w, h, t, err);
    assert_int_equal(sc.left_grey.width, w);
    assert_int_equal(sc.left_grey.height, h);
    assert_int_equal(sc.right_rgb.channels, 3);
    assert_int_equal(sc.gt_left.width, w);
    return sc;
}

static uint8_t at(const image *img, int x, int y, int ch)
{
    return ((const uint8_t *)img->data)[((size_t)y * img->width + x) * img->channels + ch];
}

static float gt(const fmap *m, int x, int y) { return m->data[(size_t)y * m->width + x]; }

/* A left pixel we may hold to a promise: visible in both views and away from depth edges. */
static int clean(const synth_scene *sc, int x, int y)
{
    return at(&sc->nonocc, x, y, 0) == 255 && at(&sc->near_edge, x, y, 0) == 0;
}

/* On a fronto-parallel surface: integer disparity equal to both horizontal neighbours'
 * (a slanted surface changes by |a| > 0 from pixel to pixel). */
static int on_integer_surface(const synth_scene *sc, int x, int y)
{
    float d = gt(&sc->gt_left, x, y);
    int w = sc->gt_left.width;
    return x > 0 && x + 1 < w && d == floorf(d) && gt(&sc->gt_left, x - 1, y) == d &&
           gt(&sc->gt_left, x + 1, y) == d;
}

/* ---- (1) integer shifts are exact ---------------------------------------------------------- */

static void check_integer_shift(int w, int h, double t)
{
    synth_scene sc = render(w, h, t, 1, 0);
    long checked = 0, bad = 0;
    int bx = -1, by = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!clean(&sc, x, y) || !on_integer_surface(&sc, x, y))
                continue;
            int xr = x - (int)gt(&sc.gt_left, x, y);
            assert_true(xr >= 0); /* nonocc promises the match is inside the right image */
            checked++;
            int same = at(&sc.left_grey, x, y, 0) == at(&sc.right_grey, xr, y, 0);
            for (int ch = 0; ch < 3; ch++)
                same = same && at(&sc.left_rgb, x, y, ch) == at(&sc.right_rgb, xr, y, ch);
            if (!same && bad++ == 0)
                bx = x, by = y;
        }
    if (bad)
        fail_msg("%dx%d t=%g: %ld of %ld integer-disparity pixels differ, first at (%d, %d): "
                 "left %d right %d",
                 w, h, t, bad, checked, bx, by, at(&sc.left_grey, bx, by, 0),
                 at(&sc.right_grey, bx - (int)gt(&sc.gt_left, bx, by), by, 0));
    /* The flat panel and the four occluders cover about a fifth of the image. */
    assert_true(checked > (long)w * h / 10);
    synth_free(&sc);
}

static void test_integer_shift_exact(void **state)
{
    (void)state;
    check_integer_shift(333, 217, 0);
    check_integer_shift(640, 480, 0);
    check_integer_shift(64, 48, 0);
    check_integer_shift(333, 217, 0.7); /* occluders at non-integer positions */
    check_integer_shift(1001, 331, 3.1);
}

/* ---- (2) slanted surfaces: the GT warp reproduces the left view ----------------------------- */

/* 3x3 box mean (clamped at the border): the pixels are box integrals of a texture with detail
 * down to 1 px, which linear interpolation cannot reproduce at fractional shifts; the prefilter
 * removes that detail from both images so the comparison measures the geometry. */
static double *box3(const image *img)
{
    int w = img->width, h = img->height;
    double *out = malloc((size_t)w * h * sizeof *out);
    assert_non_null(out);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double s = 0;
            int n = 0;
            for (int j = -1; j <= 1; j++)
                for (int i = -1; i <= 1; i++)
                    if (y + j >= 0 && y + j < h && x + i >= 0 && x + i < w)
                        s += at(img, x + i, y + j, 0), n++;
            out[(size_t)y * w + x] = s / n;
        }
    return out;
}

/* Mean |left - right warped by gt + delta| over clean slanted pixels: the left centre x + 0.5
 * lands at right x + 0.5 - d, i.e. between right pixels floor(x - d) and floor(x - d) + 1. */
static double warp_mad(const synth_scene *sc, const double *L, const double *R, double delta)
{
    int w = sc->gt_left.width, h = sc->gt_left.height;
    double sum = 0;
    long n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!clean(sc, x, y) || on_integer_surface(sc, x, y))
                continue;
            double xr = x - gt(&sc->gt_left, x, y) - delta;
            int x0 = (int)floor(xr);
            if (x0 < 0 || x0 + 1 >= w)
                continue;
            double f = xr - x0;
            double r = (1 - f) * R[(size_t)y * w + x0] + f * R[(size_t)y * w + x0 + 1];
            sum += fabs(r - L[(size_t)y * w + x]);
            n++;
        }
    assert_true(n > (long)w * h / 3); /* background and slanted panel: most of the image */
    return sum / n;
}

static void check_slanted(int w, int h, double t)
{
    synth_scene sc = render(w, h, t, 3, 2);
    double *L = box3(&sc.left_grey), *R = box3(&sc.right_grey);
    double m0 = warp_mad(&sc, L, R, 0);
    double mq = fmin(warp_mad(&sc, L, R, -0.25), warp_mad(&sc, L, R, 0.25));
    double m1 = fmin(warp_mad(&sc, L, R, -1), warp_mad(&sc, L, R, 1));
    print_message("# %dx%d t=%g: warp MAD at GT %.2f, GT+-0.25 %.2f, GT+-1 %.2f\n", w, h, t, m0,
                  mq, m1);
    assert_true(m0 < 3.0);
    assert_true(mq > m0 * 1.3); /* the GT is the photometric optimum to a quarter pixel */
    assert_true(m1 > m0 * 3.0);
    free(L), free(R);
    synth_free(&sc);
}

static void test_slanted_photometric(void **state)
{
    (void)state;
    check_slanted(640, 480, 0);
    check_slanted(333, 217, 1.9);
}

/* ---- (3) ground truth: left/right agree, occlusions where geometry puts them ----------------- */

static void check_ground_truth(int w, int h, double t)
{
    synth_params p = {.width = w, .height = h};
    int D = synth_max_disparity(&p);
    synth_scene sc = render(w, h, t, 1, 1);
    long nonocc = 0;
    float lo = INFINITY, hi = -INFINITY;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float d = gt(&sc.gt_left, x, y), dr = gt(&sc.gt_right, x, y);
            lo = fminf(lo, fminf(d, dr));
            hi = fmaxf(hi, fmaxf(d, dr));
            /* the promised range [D/6, D] (float rounding aside) */
            assert_true(d >= D / 6.0 - 1e-3 && d <= D + 1e-3);
            assert_true(dr >= D / 6.0 - 1e-3 && dr <= D + 1e-3);
            if (x + 1 <= floorf(d)) /* the whole pixel lands left of the right image */
                assert_int_equal(at(&sc.nonocc, x, y, 0), 0);
            if (at(&sc.nonocc, x, y, 0) != 255)
                continue;
            nonocc++;
            int xm = x - (int)floorf(d + 0.5f);
            assert_true(xm >= 0);
            float e = fabsf(gt(&sc.gt_right, xm, y) - d);
            if (e >= 0.5f)
                fail_msg("%dx%d: left (%d, %d) d=%.3f but right (%d, %d) d=%.3f", w, h, x, y, d, xm,
                         y, gt(&sc.gt_right, xm, y));
        }
    assert_true(lo == sc.gt_min && hi == sc.gt_max);
    if (t == 0)
        assert_true(sc.gt_max == (float)D); /* the nearest occluders are in view */
    /* Conservative, not wholesale: most pixels are visible in both views. */
    assert_true(nonocc > (long)w * h * 8 / 10 && nonocc < (long)w * h * 98 / 100);

    /* Going right onto a nearer surface by a step of s px hides the s - 1 or so pixels before
     * the edge from the right camera, provided the nearer surface is at least s px wide on
     * this row (near a disc's top or bottom it is narrower and hides nothing). Count the rows
     * where that happens for each occluder level. */
    int level[2] = {(int)floor(D * 10 / 12.0 + 0.5), D};
    long rows[2] = {0, 0};
    for (int y = 0; y < h; y++) {
        int seen[2] = {0, 0};
        for (int x = 3; x < w; x++) {
            float d = gt(&sc.gt_left, x, y), step = d - gt(&sc.gt_left, x - 1, y);
            if (step <= 3)
                continue;
            int wide = 1;
            for (int k = 1; k <= (int)step + 1; k++)
                wide = wide && x + k < w && gt(&sc.gt_left, x + k, y) >= d - 1;
            if (!wide)
                continue;
            assert_int_equal(at(&sc.nonocc, x - 1, y, 0), 0);
            assert_int_equal(at(&sc.nonocc, x - 2, y, 0), 0);
            for (int k = 0; k < 2; k++)
                if (d == level[k])
                    seen[k] = 1;
        }
        rows[0] += seen[0], rows[1] += seen[1];
    }
    /* Two occluders per level, each over a tenth of the height or more. */
    assert_true(rows[0] > h / 8 && rows[1] > h / 8);
    synth_free(&sc);
}

static void test_ground_truth_consistent(void **state)
{
    (void)state;
    check_ground_truth(640, 480, 0);
    check_ground_truth(333, 217, 0);
    check_ground_truth(333, 217, 2.3);
}

static void test_near_edge_radius(void **state)
{
    (void)state;
    synth_scene a = render(200, 150, 0, 1, 0), b = render(200, 150, 0, 1, 3);
    long na = 0, nb = 0;
    for (int y = 0; y < 150; y++)
        for (int x = 0; x < 200; x++) {
            int ea = at(&a.near_edge, x, y, 0), eb = at(&b.near_edge, x, y, 0);
            assert_true(ea == 0 || ea == 255);
            if (ea)
                assert_int_equal(eb, 255); /* a wider radius marks a superset */
            na += ea != 0, nb += eb != 0;
            /* the radius changes nothing else */
            assert_int_equal(at(&a.nonocc, x, y, 0), at(&b.nonocc, x, y, 0));
        }
    assert_true(na > 0 && nb > 3 * na);
    synth_free(&a);
    synth_free(&b);
}

/* ---- (4) time moves the occluders, renders are deterministic -------------------------------- */

static int same_image(const image *a, const image *b)
{
    size_t n = (size_t)a->width * a->height * a->channels;
    return a->width == b->width && a->height == b->height && a->channels == b->channels &&
           memcmp(a->data, b->data, n) == 0;
}

static long count_diff(const image *a, const image *b)
{
    long n = 0;
    for (size_t i = 0; i < (size_t)a->width * a->height * a->channels; i++)
        n += ((const uint8_t *)a->data)[i] != ((const uint8_t *)b->data)[i];
    return n;
}

static void test_time_and_determinism(void **state)
{
    (void)state;
    const int w = 333, h = 217;
    synth_scene s0 = render(w, h, 0, 1, 2), s1 = render(w, h, 1, 1, 2), s1b = render(w, h, 1, 1, 2);
    size_t np = (size_t)w * h;
    assert_true(same_image(&s1.left_grey, &s1b.left_grey));
    assert_true(same_image(&s1.right_grey, &s1b.right_grey));
    assert_true(same_image(&s1.left_rgb, &s1b.left_rgb));
    assert_true(same_image(&s1.right_rgb, &s1b.right_rgb));
    assert_true(same_image(&s1.nonocc, &s1b.nonocc));
    assert_true(same_image(&s1.near_edge, &s1b.near_edge));
    assert_memory_equal(s1.gt_left.data, s1b.gt_left.data, np * sizeof(float));
    assert_memory_equal(s1.gt_right.data, s1b.gt_right.data, np * sizeof(float));

    /* The occluders moved: GT and pixels change, but only around them. */
    long dgt = 0;
    for (size_t i = 0; i < np; i++)
        dgt += s0.gt_left.data[i] != s1.gt_left.data[i];
    assert_true(dgt > (long)np / 100 && dgt < (long)np / 3);
    assert_true(count_diff(&s0.left_grey, &s1.left_grey) > (long)np / 100);
    assert_true(count_diff(&s0.right_grey, &s1.right_grey) > (long)np / 100);

    /* Another seed changes the textures, not the geometry. */
    synth_scene s2 = render(w, h, 1, 2, 2);
    assert_memory_equal(s1.gt_left.data, s2.gt_left.data, np * sizeof(float));
    assert_true(same_image(&s1.nonocc, &s2.nonocc));
    assert_true(count_diff(&s1.left_grey, &s2.left_grey) > (long)np / 2);

    /* The frame path renders the same pixels, honours the pitch and writes nothing past a row. */
    synth_params p = {.width = w, .height = h, .seed = 1};
    synth *s;
    char err[256];
    assert_int_equal(synth_create(&p, &s, err, sizeof err), 0);
    for (int ch = 1; ch <= 3; ch += 2) {
        size_t pitch = (size_t)w * ch + 13;
        uint8_t *l = malloc(pitch * h), *r = malloc(pitch * h);
        assert_non_null(l);
        assert_non_null(r);
        memset(l, 0xa5, pitch * h);
        memset(r, 0xa5, pitch * h);
        assert_int_equal(synth_render_views(s, 1.0, l, r, ch, pitch, err, sizeof err), 0);
        const image *L = ch == 1 ? &s1.left_grey : &s1.left_rgb;
        const image *R = ch == 1 ? &s1.right_grey : &s1.right_rgb;
        for (int y = 0; y < h; y++) {
            assert_memory_equal(l + y * pitch, (uint8_t *)L->data + (size_t)y * w * ch, (size_t)w * ch);
            assert_memory_equal(r + y * pitch, (uint8_t *)R->data + (size_t)y * w * ch, (size_t)w * ch);
            for (size_t k = (size_t)w * ch; k < pitch; k++)
                assert_true(l[y * pitch + k] == 0xa5 && r[y * pitch + k] == 0xa5);
        }
        free(l), free(r);
    }
    synth_destroy(s);
    synth_free(&s0);
    synth_free(&s1);
    synth_free(&s1b);
    synth_free(&s2);
}

/* ---- (5) texture: contrast everywhere, most of the grey range used -------------------------- */

static void test_texture_contrast(void **state)
{
    (void)state;
    const int w = 640, h = 480;
    synth_scene sc = render(w, h, 0, 1, 0);
    for (int view = 0; view < 2; view++) {
        const image *img = view ? &sc.right_grey : &sc.left_grey;
        long low = 0, n = 0, hist[256] = {0};
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                hist[at(img, x, y, 0)]++;
        for (int y = 4; y < h - 4; y++)
            for (int x = 4; x < w - 4; x++) {
                double s = 0, s2 = 0;
                for (int j = -4; j <= 4; j++)
                    for (int i = -4; i <= 4; i++) {
                        double v = at(img, x + i, y + j, 0);
                        s += v, s2 += v * v;
                    }
                double var = s2 / 81 - (s / 81) * (s / 81);
                low += var < 12.0 * 12.0;
                n++;
            }
        /* 9x9 standard deviation of at least 12 grey levels at 99.5% of the pixels */
        if (low > n / 200)
            fail_msg("view %d: %ld of %ld 9x9 windows have std dev < 12", view, low, n);
        /* 2nd and 98th percentiles near the ends of the range */
        long cum = 0;
        int p2 = -1, p98 = -1;
        for (int v = 0; v < 256; v++) {
            cum += hist[v];
            if (p2 < 0 && cum >= (long)w * h * 2 / 100)
                p2 = v;
            if (p98 < 0 && cum >= (long)w * h * 98 / 100)
                p98 = v;
        }
        assert_true(p2 < 30 && p98 > 225);
    }
    synth_free(&sc);
}

/* ---- (6) bad parameters are errors ----------------------------------------------------------- */

static void expect_error(synth_params p, const char *field)
{
    synth_scene sc;
    memset(&sc, 0x5a, sizeof sc);
    char err[256] = "";
    assert_int_equal(synth_render(&p, &sc, err, sizeof err), -1);
    if (!strstr(err, field))
        fail_msg("error \"%s\" does not name %s", err, field);
    assert_null(sc.left_grey.data);
    assert_null(sc.gt_left.data);
    static char dummy;
    synth *s = (synth *)(void *)&dummy; /* must come back NULL */
    assert_int_equal(synth_create(&p, &s, err, sizeof err), -1);
    assert_null(s);
    assert_int_equal(synth_max_disparity(&p), -1);
}

/* ---- (8) more views (synth_render_view): 0 and 1 are the left and right views bit for bit; at
 * other baselines an integer surface point x of the left view is at x - b d exactly ----------- */
static void test_more_views(void **state)
{
    (void)state;
    const int w = 333, h = 217;
    synth_scene sc = render(w, h, 0.7, 1, 0);
    synth_params p = {.width = w, .height = h, .seed = 1, .edge_radius = 0};
    synth *s;
    char err[256];
    assert_int_equal(synth_create(&p, &s, err, sizeof err), 0);
    uint8_t *v = malloc((size_t)w * h * 3);
    assert_non_null(v);
    assert_int_equal(synth_render_view(s, 0.7, 0, v, 1, (size_t)w, err, sizeof err), 0);
    assert_memory_equal(v, sc.left_grey.data, (size_t)w * h);
    assert_int_equal(synth_render_view(s, 0.7, 1, v, 1, (size_t)w, err, sizeof err), 0);
    assert_memory_equal(v, sc.right_grey.data, (size_t)w * h);
    assert_int_equal(synth_render_view(s, 0.7, 1, v, 3, (size_t)w * 3, err, sizeof err), 0);
    assert_memory_equal(v, sc.right_rgb.data, (size_t)w * h * 3);
    static const double baselines[] = {2, -1, -2.5, 0.5};
    for (size_t i = 0; i < sizeof baselines / sizeof baselines[0]; i++) {
        double b = baselines[i];
        assert_int_equal(synth_render_view(s, 0.7, b, v, 1, (size_t)w, err, sizeof err), 0);
        long checked = 0, same = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                if (!clean(&sc, x, y) || !on_integer_surface(&sc, x, y))
                    continue;
                double xv = x - b * gt(&sc.gt_left, x, y);
                if (xv != floor(xv) || xv < 0 || xv >= w)
                    continue;
                checked++;
                same += at(&sc.left_grey, x, y, 0) == v[(size_t)y * w + (int)xv];
            }
        print_message("# baseline %g: %ld of %ld integer-surface pixels equal at x - b d\n", b,
                      same, checked);
        /* the rest: points hidden from that view (the occlusions grow with |b|) */
        assert_true(checked > (long)w * h / 20);
        assert_true(same > checked * 9 / 10);
    }
    /* the wrong side: the same comparison at x + b d finds almost nothing */
    assert_int_equal(synth_render_view(s, 0.7, 2, v, 1, (size_t)w, err, sizeof err), 0);
    long checked = 0, same = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int xv = x + 2 * (int)gt(&sc.gt_left, x, y);
            if (clean(&sc, x, y) && on_integer_surface(&sc, x, y) && xv < w)
                checked++, same += at(&sc.left_grey, x, y, 0) == v[(size_t)y * w + xv];
        }
    assert_true(same < checked / 10);
    err[0] = 0;
    assert_int_equal(synth_render_view(s, 0, SYNTH_MAX_BASELINE + 0.5, v, 1, (size_t)w, err,
                                       sizeof err), -1);
    assert_non_null(strstr(err, "baseline"));
    assert_int_equal(synth_render_view(s, 0, 1, v, 2, (size_t)w, err, sizeof err), -1);
    free(v);
    synth_destroy(s);
    synth_free(&sc);
}

static void test_bad_params(void **state)
{
    (void)state;
    synth_params ok = {.width = 64, .height = 48};
    synth_params p = ok;
    p.width = 0, expect_error(p, "width");
    p = ok, p.height = 0, expect_error(p, "height");
    p = ok, p.width = 31, expect_error(p, "width");
    p = ok, p.width = 100000, p.height = 100000, expect_error(p, "width");
    p = ok, p.height = SYNTH_MAX_SIZE + 1, expect_error(p, "height");
    p = ok, p.max_disparity = -1, expect_error(p, "max_disparity");
    p = ok, p.max_disparity = SYNTH_MIN_DISPARITY - 1, expect_error(p, "max_disparity");
    p = ok, p.max_disparity = 33, expect_error(p, "max_disparity"); /* > width / 2 */
    p = ok, p.edge_radius = -1, expect_error(p, "edge_radius");
    p = ok, p.edge_radius = 65, expect_error(p, "edge_radius");
    p = ok, p.t = NAN, expect_error(p, "t:");
    p = ok, p.t = INFINITY, expect_error(p, "t:");

    char err[256];
    synth_scene sc;
    assert_int_equal(synth_render(NULL, &sc, err, sizeof err), -1);
    assert_int_equal(synth_render(&ok, NULL, err, sizeof err), -1);
    assert_int_equal(synth_render(&ok, &sc, NULL, 0), 0); /* no err buffer is fine */
    synth_free(&sc);
    synth_free(&sc); /* freeing twice (emptied) is harmless */
    synth_free(NULL);
    synth_destroy(NULL);

    assert_int_equal(synth_max_disparity(&ok), 12);
    synth_params vga = {.width = 640, .height = 480};
    assert_int_equal(synth_max_disparity(&vga), 48);
    vga.max_disparity = 50;
    assert_int_equal(synth_max_disparity(&vga), 50);

    synth *s;
    assert_int_equal(synth_create(&ok, &s, err, sizeof err), 0);
    uint8_t buf[64 * 48 * 3], buf2[64 * 48 * 3];
    assert_int_equal(synth_render_views(s, 0, buf, buf2, 2, 64 * 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "channels"));
    assert_int_equal(synth_render_views(s, 0, buf, buf2, 3, 64 * 3 - 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "pitch"));
    assert_int_equal(synth_render_views(s, 0, NULL, buf2, 1, 64, err, sizeof err), -1);
    assert_int_equal(synth_render_views(s, NAN, buf, buf2, 1, 64, err, sizeof err), -1);
    assert_int_equal(synth_render_views(NULL, 0, buf, buf2, 1, 64, err, sizeof err), -1);
    assert_int_equal(synth_render_views(s, 0, buf, buf2, 3, 64 * 3, err, sizeof err), 0);
    synth_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_shift_exact),
        cmocka_unit_test(test_slanted_photometric),
        cmocka_unit_test(test_ground_truth_consistent),
        cmocka_unit_test(test_near_edge_radius),
        cmocka_unit_test(test_time_and_determinism),
        cmocka_unit_test(test_texture_contrast),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_more_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
