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

static synth_scene render_p(const synth_params *p)
{
    synth_scene sc;
    char err[256] = "";
    int w = p->width, h = p->height;
    if (synth_render(p, &sc, err, sizeof err) != 0)
        fail_msg("synth_render %dx%d t=%g: %s", w, h, p->t, err);
    assert_int_equal(sc.left_grey.width, w);
    assert_int_equal(sc.left_grey.height, h);
    assert_int_equal(sc.right_rgb.channels, 3);
    assert_int_equal(sc.gt_left.width, w);
    return sc;
}

static synth_scene render(int w, int h, double t, unsigned seed, int edge_radius)
{
    synth_params p = {.width = w, .height = h, .t = t, .seed = seed, .edge_radius = edge_radius};
    return render_p(&p);
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

static void check_slanted_p(const synth_params *p)
{
    int w = p->width, h = p->height;
    double t = p->t;
    synth_scene sc = render_p(p);
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

static void check_slanted(int w, int h, double t)
{
    synth_params p = {.width = w, .height = h, .t = t, .seed = 3, .edge_radius = 2};
    check_slanted_p(&p);
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
    p = ok, p.layout = 3, expect_error(p, "synth: layout: 3");
    p = ok, p.layout = -1, expect_error(p, "layout");
    p = ok, p.contrast = 0.01, expect_error(p, "synth: contrast: 0.01");
    p = ok, p.contrast = 1.5, expect_error(p, "contrast");
    p = ok, p.contrast = NAN, expect_error(p, "contrast");
    p = ok, p.right_gain = 0.2, expect_error(p, "synth: right_gain: 0.2");
    p = ok, p.right_gain = 4.5, expect_error(p, "right_gain");
    p = ok, p.right_gain = -1, expect_error(p, "right_gain");
    p = ok, p.right_offset = 129, expect_error(p, "synth: right_offset: 129");
    p = ok, p.right_offset = NAN, expect_error(p, "right_offset");
    p = ok, p.right_gamma = 0.1, expect_error(p, "synth: right_gamma");
    p = ok, p.right_gamma = INFINITY, expect_error(p, "right_gamma");
    p = ok, p.vignette = 0.95, expect_error(p, "synth: vignette: 0.95");
    p = ok, p.vignette = -0.1, expect_error(p, "vignette");
    p = ok, p.noise = 33, expect_error(p, "synth: noise: 33");
    p = ok, p.noise = -1, expect_error(p, "noise");
    p = ok, p.noise = NAN, expect_error(p, "noise");

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

/* ---- (9) camera effects: each changes its views only, never the ground truth ---------------- */

static int same_truth(const synth_scene *a, const synth_scene *b)
{
    size_t np = (size_t)a->gt_left.width * a->gt_left.height;
    return memcmp(a->gt_left.data, b->gt_left.data, np * sizeof(float)) == 0 &&
           memcmp(a->gt_right.data, b->gt_right.data, np * sizeof(float)) == 0 &&
           same_image(&a->nonocc, &b->nonocc) && same_image(&a->near_edge, &b->near_edge) &&
           a->gt_min == b->gt_min && a->gt_max == b->gt_max;
}

static int same_views(const synth_scene *a, const synth_scene *b, int right)
{
    return right ? same_image(&a->right_grey, &b->right_grey) && same_image(&a->right_rgb, &b->right_rgb)
                 : same_image(&a->left_grey, &b->left_grey) && same_image(&a->left_rgb, &b->left_rgb);
}

static void test_defaults_explicit(void **state)
{
    (void)state;
    /* every new field at its documented neutral value renders today's scene bit for bit */
    synth_params z = {.width = 160, .height = 120, .t = 0.4, .seed = 2, .edge_radius = 1};
    synth_params e = z;
    e.layout = SYNTH_LAYOUT_OBJECTS, e.contrast = 1, e.right_gain = 1, e.right_offset = 0;
    e.right_gamma = 1, e.vignette = 0, e.noise = 0;
    synth_scene a = render_p(&z), b = render_p(&e);
    assert_true(same_truth(&a, &b) && same_views(&a, &b, 0) && same_views(&a, &b, 1));
    synth_free(&a);
    synth_free(&b);
}

static void test_camera_effects(void **state)
{
    (void)state;
    for (int layout = 0; layout < 3; layout++) {
        const int w = 240, h = 160;
        synth_params p0 = {.width = w, .height = h, .seed = 4, .edge_radius = 1, .layout = layout};
        synth_scene base = render_p(&p0);
        size_t np = (size_t)w * h;

        /* the right camera's response: the left view untouched, the right one mapped */
        synth_params p = p0;
        p.right_gain = 1.25, p.right_offset = -12;
        synth_scene g = render_p(&p);
        assert_true(same_truth(&base, &g) && same_views(&base, &g, 0));
        long off = 0;
        for (size_t i = 0; i < np; i++) {
            double want = 1.25 * ((uint8_t *)base.right_grey.data)[i] - 12;
            want = want < 0 ? 0 : want > 255 ? 255 : want;
            /* the mapping acts on the exact value: the 8-bit one is within 1/2 of it */
            off += fabs(((uint8_t *)g.right_grey.data)[i] - want) > 0.5 * 1.25 + 0.5 + 1e-9;
        }
        assert_int_equal(off, 0);
        p = p0, p.right_gamma = 2.0;
        synth_scene y = render_p(&p);
        assert_true(same_truth(&base, &y) && same_views(&base, &y, 0));
        for (size_t i = 0; i < np; i++) {
            double v = ((uint8_t *)base.right_grey.data)[i];
            assert_true(fabs(((uint8_t *)y.right_grey.data)[i] - 255 * pow(v / 255, 2)) <= 2.0);
        }

        /* vignetting: both views, darker toward the corners, about 1 - V at them */
        p = p0, p.vignette = 0.4;
        synth_scene v = render_p(&p);
        assert_true(same_truth(&base, &v));
        assert_false(same_views(&base, &v, 0));
        assert_false(same_views(&base, &v, 1));
        double corner = 0, corner0 = 0, mid = 0, mid0 = 0;
        for (int j = 0; j < 12; j++)
            for (int i = 0; i < 12; i++) {
                corner += at(&v.left_grey, i, j, 0), corner0 += at(&base.left_grey, i, j, 0);
                mid += at(&v.left_grey, w / 2 + i - 6, h / 2 + j - 6, 0);
                mid0 += at(&base.left_grey, w / 2 + i - 6, h / 2 + j - 6, 0);
            }
        print_message("# layout %d: vignette 0.4: corner ratio %.3f, centre %.3f\n", layout,
                      corner / corner0, mid / mid0);
        assert_true(corner / corner0 > 0.5 && corner / corner0 < 0.7);
        assert_true(mid / mid0 > 0.99);

        /* noise: independent per view, zero mean, sigma as asked; deterministic */
        p = p0, p.noise = 4;
        synth_scene n = render_p(&p), n2 = render_p(&p);
        assert_true(same_truth(&base, &n));
        assert_true(same_views(&n, &n2, 0) && same_views(&n, &n2, 1));
        double s1[2] = {0, 0}, s2[2] = {0, 0}, cross = 0;
        long cnt = 0;
        for (size_t i = 0; i < np; i++) {
            double a = ((uint8_t *)base.left_grey.data)[i], b = ((uint8_t *)base.right_grey.data)[i];
            if (a < 20 || a > 235 || b < 20 || b > 235)
                continue; /* away from the clamping */
            double dl = ((uint8_t *)n.left_grey.data)[i] - a, dr = ((uint8_t *)n.right_grey.data)[i] - b;
            s1[0] += dl, s2[0] += dl * dl, s1[1] += dr, s2[1] += dr * dr, cross += dl * dr;
            cnt++;
        }
        assert_true(cnt > (long)np / 2);
        for (int k = 0; k < 2; k++) {
            double mean = s1[k] / cnt, sd = sqrt(s2[k] / cnt - mean * mean);
            print_message("# layout %d: noise 4, view %d: mean %.3f sd %.3f\n", layout, k, mean, sd);
            assert_true(fabs(mean) < 0.1 && sd > 3.8 && sd < 4.3);
        }
        assert_true(fabs(cross / cnt) < 0.5); /* the two views' noise is not correlated */

        /* the frame path renders the same pixels with the effects on */
        p = p0, p.noise = 3, p.vignette = 0.3, p.right_gain = 0.8, p.right_gamma = 1.3;
        synth_scene all = render_p(&p);
        assert_true(same_truth(&base, &all));
        synth *sh;
        char err[256];
        assert_int_equal(synth_create(&p, &sh, err, sizeof err), 0);
        uint8_t *l = malloc(np * 3), *r = malloc(np * 3);
        assert_non_null(l);
        assert_non_null(r);
        assert_int_equal(synth_render_views(sh, 0, l, r, 1, w, err, sizeof err), 0);
        assert_memory_equal(l, all.left_grey.data, np);
        assert_memory_equal(r, all.right_grey.data, np);
        assert_int_equal(synth_render_views(sh, 0, l, r, 3, (size_t)w * 3, err, sizeof err), 0);
        assert_memory_equal(l, all.left_rgb.data, np * 3);
        assert_memory_equal(r, all.right_rgb.data, np * 3);
        assert_int_equal(synth_render_view(sh, 0, 1, r, 1, w, err, sizeof err), 0);
        assert_memory_equal(r, all.right_grey.data, np);
        assert_int_equal(synth_render_view(sh, 0, 0, l, 1, w, err, sizeof err), 0);
        assert_memory_equal(l, all.left_grey.data, np);
        /* a third view has its own noise: not the right view's */
        assert_int_equal(synth_render_view(sh, 0, 0.5, l, 1, w, err, sizeof err), 0);
        free(l), free(r);
        synth_destroy(sh);

        synth_free(&base), synth_free(&g), synth_free(&y), synth_free(&v);
        synth_free(&n), synth_free(&n2), synth_free(&all);
    }
}

/* ---- (10) contrast: the textures flatten about their means; shifts stay exact --------------- */

/* RMS of the horizontal differences away from depth edges: the texture's contrast within
 * surfaces (the means of the surfaces differ from each other, and stay). */
static double diff_rms(const synth_scene *sc)
{
    double s2 = 0;
    long n = 0;
    for (int y = 0; y < sc->left_grey.height; y++)
        for (int x = 0; x + 1 < sc->left_grey.width; x++)
            if (at(&sc->near_edge, x, y, 0) == 0 && at(&sc->near_edge, x + 1, y, 0) == 0) {
                double d = (double)at(&sc->left_grey, x + 1, y, 0) - at(&sc->left_grey, x, y, 0);
                s2 += d * d, n++;
            }
    return sqrt(s2 / n);
}

static void test_contrast(void **state)
{
    (void)state;
    const int w = 320, h = 240;
    synth_params p0 = {.width = w, .height = h, .seed = 1, .edge_radius = 1};
    synth_params p = p0;
    p.contrast = 0.1;
    synth_scene a = render_p(&p0), b = render_p(&p);
    assert_true(same_truth(&a, &b));
    double ra = diff_rms(&b) / diff_rms(&a);
    print_message("# contrast 0.1: RMS of neighbour differences, ratio %.3f\n", ra);
    assert_true(ra > 0.09 && ra < 0.12); /* 0.1 and the rounding to 8 bits */
    /* integer disparities still shift exactly */
    long checked = 0, bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!clean(&b, x, y) || !on_integer_surface(&b, x, y))
                continue;
            int xr = x - (int)gt(&b.gt_left, x, y);
            checked++;
            bad += at(&b.left_grey, x, y, 0) != at(&b.right_grey, xr, y, 0);
        }
    assert_true(checked > (long)w * h / 10);
    assert_int_equal(bad, 0);
    synth_free(&a);
    synth_free(&b);
}

/* ---- (11) the street layout ------------------------------------------------------------------ */

static void check_street(int w, int h, int D)
{
    synth_params p = {.width = w, .height = h, .seed = 5, .edge_radius = 1, .max_disparity = D,
                      .layout = SYNTH_LAYOUT_STREET};
    D = synth_max_disparity(&p);
    synth_scene sc = render_p(&p);
    double yh = 0.4 * h, ds = floor(D / 16.0 + 0.5) < 1 ? 1 : floor(D / 16.0 + 0.5);
    double bg = (D - ds) / (h - yh);
    assert_true(sc.gt_min == (float)ds && sc.gt_max <= D);
    /* the sky: constant ds over the top middle */
    for (int y = 0; y < (int)(0.2 * h); y++)
        for (int x = (int)(0.3 * w); x < (int)(0.7 * w); x++)
            assert_true(gt(&sc.gt_left, x, y) == (float)ds);
    /* every column: d never falls going down (sky, facade, ground, cars, all standing on the
     * ground), and the bottom row is ground near D */
    for (int x = 0; x < w; x++) {
        for (int y = 1; y < h; y++)
            if (gt(&sc.gt_left, x, y) < gt(&sc.gt_left, x, y - 1) - 1e-4f)
                fail_msg("%dx%d street: column %d falls from %.3f to %.3f at row %d", w, h, x,
                         gt(&sc.gt_left, x, y - 1), gt(&sc.gt_left, x, y), y);
        assert_true(gt(&sc.gt_left, x, h - 1) >= D - bg);
        assert_true(fabs(gt(&sc.gt_left, x, h - 1) - (ds + bg * (h - 0.5 - yh))) < 1e-3);
    }
    /* the ground in the middle column, from the horizon to the far car: the plane's formula,
     * strictly increasing */
    for (int y = (int)yh + 1; y < (int)(0.45 * h); y++) {
        float d = gt(&sc.gt_left, w / 2, y);
        assert_true(fabs(d - (ds + bg * (y + 0.5 - yh))) < 1e-3);
        assert_true(d > gt(&sc.gt_left, w / 2, y - 1));
    }
    /* left/right consistency and occlusions, as for the objects */
    long nonocc = 0, edge = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float d = gt(&sc.gt_left, x, y);
            edge += at(&sc.near_edge, x, y, 0) != 0;
            if (at(&sc.nonocc, x, y, 0) != 255)
                continue;
            nonocc++;
            int xm = x - (int)floorf(d + 0.5f);
            assert_true(xm >= 0);
            if (fabsf(gt(&sc.gt_right, xm, y) - d) >= 0.5f)
                fail_msg("street %dx%d: left (%d, %d) d=%.3f but right (%d, %d) d=%.3f", w, h, x,
                         y, d, xm, y, gt(&sc.gt_right, xm, y));
        }
    print_message("# street %dx%d D=%d: nonocc %.1f %%, near_edge %.1f %%\n", w, h, D,
                  100.0 * nonocc / ((double)w * h), 100.0 * edge / ((double)w * h));
    assert_true(nonocc > (long)w * h * 7 / 10 && nonocc < (long)w * h * 97 / 100);
    assert_true(edge > 0 && edge < (long)w * h / 4);
    /* the left strip a whole bottom-row disparity wide is occluded */
    assert_int_equal(at(&sc.nonocc, 0, h - 1, 0), 0);
    /* the horizon is marked */
    assert_int_equal(at(&sc.near_edge, w / 2, (int)yh, 0), 255);
    /* fronto-parallel integer surfaces (sky, cars): right(x - d) == left(x) bit for bit */
    long checked = 0, bad = 0, cars = 0;
    for (int y = 1; y + 1 < h; y++)
        for (int x = 1; x + 1 < w; x++) {
            float d = gt(&sc.gt_left, x, y);
            if (!clean(&sc, x, y) || !on_integer_surface(&sc, x, y) ||
                gt(&sc.gt_left, x, y - 1) != d || gt(&sc.gt_left, x, y + 1) != d)
                continue;
            checked++, cars += d > ds;
            bad += at(&sc.left_grey, x, y, 0) != at(&sc.right_grey, x - (int)d, y, 0);
        }
    assert_int_equal(bad, 0);
    assert_true(checked > (long)w * h / 5 && cars > (long)w * h / 20);
    synth_free(&sc);

    /* the slanted ground and facades: the warp by the GT is the photometric optimum */
    p.seed = 3;
    check_slanted_p(&p);
}

static void test_street(void **state)
{
    (void)state;
    check_street(640, 360, 96);
    check_street(333, 217, 0);
    check_street(200, 120, 8);
    /* t does not move the street */
    synth_params p = {.width = 200, .height = 120, .layout = SYNTH_LAYOUT_STREET};
    synth_scene a = render_p(&p);
    p.t = 2.5;
    synth_scene b = render_p(&p);
    assert_true(same_truth(&a, &b) && same_views(&a, &b, 0) && same_views(&a, &b, 1));
    /* camera effects and contrast leave its ground truth alone */
    p.noise = 5, p.vignette = 0.5, p.contrast = 0.2, p.right_gain = 2, p.right_gamma = 0.5;
    synth_scene c = render_p(&p);
    assert_true(same_truth(&a, &c));
    assert_false(same_views(&a, &c, 0));
    synth_free(&a), synth_free(&b), synth_free(&c);
    /* a view so far out that a facade would fold is refused */
    p = (synth_params){.width = 200, .height = 120, .layout = SYNTH_LAYOUT_STREET, .max_disparity = 100};
    synth *s;
    char err[256];
    uint8_t *buf = malloc(200 * 120);
    assert_non_null(buf);
    assert_int_equal(synth_create(&p, &s, err, sizeof err), 0);
    assert_int_equal(synth_render_view(s, 0, 4, buf, 1, 200, err, sizeof err), -1);
    assert_non_null(strstr(err, "baseline"));
    assert_int_equal(synth_render_view(s, 0, 0.5, buf, 1, 200, err, sizeof err), 0);
    free(buf);
    synth_destroy(s);
}

/* ---- (12) the facade layout ------------------------------------------------------------------ */

static void check_facade(int w, int h, int D)
{
    synth_params p = {.width = w, .height = h, .seed = 7, .edge_radius = 1, .max_disparity = D,
                      .layout = SYNTH_LAYOUT_FACADE};
    D = synth_max_disparity(&p);
    synth_scene sc = render_p(&p);
    double yh = 0.45 * h, ds = floor(D / 16.0 + 0.5) < 1 ? 1 : floor(D / 16.0 + 0.5);
    double bg = (D - ds) / (h - yh);
    assert_true(sc.gt_min == (float)ds && sc.gt_max <= D);
    /* the top right corner is sky; the facade at the left border's middle row is 0.6 D,
     * falling linearly to the right (0.2 D at the border) wherever no pole stands */
    assert_true(gt(&sc.gt_left, w - 1, 0) == (float)ds);
    int y = (int)(0.2 * h);
    assert_true(fabs(gt(&sc.gt_left, 0, y) - 0.6 * D * (1 - 0.5 / w * (2.0 / 3.0))) < 1e-3 * D);
    /* every column: d never falls going down, and the bottom row is the ground near D */
    for (int x = 0; x < w; x++) {
        for (int yy = 1; yy < h; yy++)
            if (gt(&sc.gt_left, x, yy) < gt(&sc.gt_left, x, yy - 1) - 1e-4f)
                fail_msg("%dx%d facade: column %d falls from %.3f to %.3f at row %d", w, h, x,
                         gt(&sc.gt_left, x, yy - 1), gt(&sc.gt_left, x, yy), yy);
        assert_true(fabs(gt(&sc.gt_left, x, h - 1) - (ds + bg * (h - 0.5 - yh))) < 1e-3 ||
                    gt(&sc.gt_left, x, h - 1) == floorf(gt(&sc.gt_left, x, h - 1)));
    }
    /* three poles: on the row 0.6 h, exactly three runs of integer disparity above the
     * facade's, each at least 2 px wide */
    int runs = 0;
    for (int x = 0, in = 0; x < w; x++) {
        float d = gt(&sc.gt_left, x, (int)(0.6 * h)), f = 0.6f * D + (0.2f - 0.6f) * D * (x + 0.5f) / w;
        int pole = d == floorf(d) && d > f + 0.5f;
        runs += pole && !in;
        in = pole;
    }
    assert_int_equal(runs, 3);
    /* left/right consistency */
    for (int yy = 0; yy < h; yy++)
        for (int x = 0; x < w; x++) {
            float d = gt(&sc.gt_left, x, yy);
            if (at(&sc.nonocc, x, yy, 0) != 255)
                continue;
            int xm = x - (int)floorf(d + 0.5f);
            assert_true(xm >= 0);
            assert_true(fabsf(gt(&sc.gt_right, xm, yy) - d) < 0.5f);
        }
    synth_free(&sc);
    /* the slanted ground and facade: the warp by the GT is the photometric optimum */
    p.seed = 4;
    check_slanted_p(&p);
}

static void test_facade(void **state)
{
    (void)state;
    check_facade(640, 360, 96);
    check_facade(331, 219, 0);
    check_facade(160, 96, 8);
    /* windows repeat: along the facade's middle floor band at the left, the left view's
     * autocorrelation has a second peak one window column away (within the search range) */
    synth_params p = {.width = 640, .height = 360, .max_disparity = 96, .layout = SYNTH_LAYOUT_FACADE};
    synth_scene sc = render_p(&p);
    /* the columns are d^2 / (3 * 0.6 D) px apart where the facade has disparity d (D/5 at
     * the left border); here d is taken at x = 68, the middle of the compared pixels */
    double dl = 0.6 * 96, dm = dl - 0.4 * 96 * 68.5 / 640;
    int period = (int)(dm * dm / (3 * dl) + 0.5), y0 = (int)(0.15 * 360), best = 0;
    double best_sad = 1e30, zero_sad = 1e30;
    for (int s = 0; s <= period + period / 2; s++) {
        double sad = 0;
        for (int y = y0; y < y0 + 40; y++)
            for (int x = 20; x < 100; x++)
                sad += abs((int)at(&sc.left_grey, x, y, 0) - (int)at(&sc.left_grey, x + s, y, 0));
        if (s == 0)
            zero_sad = sad;
        else if (s >= period / 2 && sad < best_sad)
            best_sad = sad, best = s;
    }
    print_message("# facade: window period near the left border %d px, %d expected (SAD %.0f "
                  "against %.0f at 0)\n", best, period, best_sad, zero_sad);
    assert_true(abs(best - period) <= 2);
    synth_free(&sc);
    /* camera effects leave its ground truth alone; a bad layout number is refused */
    p = (synth_params){.width = 200, .height = 120, .layout = SYNTH_LAYOUT_FACADE};
    synth_scene a = render_p(&p);
    p.noise = 4, p.vignette = 0.4, p.right_gain = 1.5;
    synth_scene b = render_p(&p);
    assert_true(same_truth(&a, &b));
    synth_free(&a), synth_free(&b);
    char err[256];
    p.layout = 3;
    assert_int_equal(synth_params_check(&p, err, sizeof err), -1);
    assert_non_null(strstr(err, "facade"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_shift_exact),
        cmocka_unit_test(test_facade),
        cmocka_unit_test(test_slanted_photometric),
        cmocka_unit_test(test_ground_truth_consistent),
        cmocka_unit_test(test_near_edge_radius),
        cmocka_unit_test(test_time_and_determinism),
        cmocka_unit_test(test_texture_contrast),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_more_views),
        cmocka_unit_test(test_defaults_explicit),
        cmocka_unit_test(test_camera_effects),
        cmocka_unit_test(test_contrast),
        cmocka_unit_test(test_street),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
