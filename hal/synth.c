/* SPDX-License-Identifier: Apache-2.0 */
/* synth.c — the generated stereo scene (see synth.h for the model and the guarantees).
 *
 * Rendering, per view and per image row:
 *   1. paint_owners: for each of SUB sample rows inside the pixel row, paint the index of the
 *      surface every sample point sees (far to near, so the nearest wins) into s->owner. A
 *      surface's footprint is an interval of u on each row; in the right view a sample at x'
 *      belongs to surface S when u_S(x') = (x' + b*v + c) / (1 - a) lies in that interval. A
 *      view at baseline ratio B (synth_render_view; the right view is B = 1) sees x' = u - B d:
 *      u_S(x') = (x' + B b v + B c) / (1 - B a), the same code with B folded in (set_baseline).
 *   2. pixel value: if all SUB x SUB samples see one surface (almost every pixel), the exact
 *      mean of its texture over the pixel's footprint; otherwise the same per run of equal
 *      samples within each sample row, weighted by the run's area (coverage).
 * Exactness of the integer-shift property rests on doing identical floating-point operations
 * in both views: sample positions (2k + 1)/8 and integer disparities are dyadic numbers, so
 * x' + k == x exactly and both views reach the same texture coordinates.
 */
#include "synth.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Samples per pixel side. 4 keeps sample offsets (2i + 1)/8 exact in binary, and lets a row of
 * a pixel's samples be compared as one 32-bit word. */
enum { SUB = 4 };
enum { VIEW_LEFT = 0, VIEW_RIGHT = 1 };

/* ---- texture constants --------------------------------------------------------------------- */

/* Value-noise octaves: lattice spacing in px and amplitude. Amplitudes fall slowly with
 * frequency so that a 9x9 window still sees strong structure from the 2..8 px octaves, and the
 * 16..32 px octaves keep larger windows unambiguous. Each octave's lattice is offset by a
 * hashed amount so no lattice lines coincide across octaves. */
static const int octave_spacing[] = {32, 16, 8, 4, 2};
static const float octave_amp[] = {1.0f, 0.8f, 0.7f, 0.6f, 0.5f};
#define N_OCTAVES ((int)(sizeof octave_spacing / sizeof octave_spacing[0]))
#define TEX_WHITE_AMP 0.45f /* independent per-texel noise: detail at the pixel scale */
#define TEX_GAIN 62.0f      /* grey = 128 + TEX_GAIN * noise (noise std ~0.7: grey std ~45) */
#define TEX_MARGIN 3        /* texels around a surface's footprint, for boxes that touch it */

/* Blobs: one candidate per BLOB_CELL x BLOB_CELL cell, placed at a hashed position in it, so they
 * are irregular, not periodic. A blob is a disc, square, or vertical or horizontal bar of size
 * BLOB_MIN..BLOB_MIN+BLOB_RANGE px, nearly black or nearly white (hard, high-contrast edges). */
#define BLOB_CELL 11
#define BLOB_CHANCE 100 /* out of 256 cells hold a blob */
#define BLOB_MIN 1.5
#define BLOB_RANGE 3.5
#define BLOB_REACH 10   /* > largest extent of a blob from its centre: 1.8 * 5 px */
#define BLOB_NOISE 0.3f /* fraction of the noise kept inside a blob */

/* ---- the scene ----------------------------------------------------------------------------- */

typedef enum { SHAPE_PLANE, SHAPE_RECT, SHAPE_DISC, SHAPE_QUAD } shape_kind;

/* Surfaces far to near (the painter's order: a later surface has the larger disparity wherever
 * it overlaps an earlier one). Positions are fractions of the image: a rectangle's corners
 * (x of width, y of height); a disc's centre and its radius as a fraction of the height. The
 * disparity is given in twelfths of D at the footprint's top-left, top-right and bottom-left
 * corners (three points fix the affine map d = a*u + b*v + c); integer surfaces have one value,
 * rounded. Only integer (fronto-parallel) surfaces move: x(t) = x + amp_x*W*sin(2*pi*t/period_x),
 * likewise y, so t = 0 is the rest position and the depth order never changes. */
typedef struct {
    shape_kind shape;
    double x0, y0, x1, y1;
    double d_tl, d_tr, d_bl;
    int integer;
    double amp_x, amp_y, period_x, period_y;
    float tint[3];
} surface_spec;

static const surface_spec scene_spec[] = {
    /* background: D/6 at top-left .. 5D/12 at bottom-right (60% of the rise along x) */
    {SHAPE_PLANE, 0.00, 0.00, 1.00, 1.00, 2.0, 3.8, 3.2, 0, 0, 0, 1, 1, {0.78f, 0.86f, 1.00f}},
    /* flat panel, d = D/2 */
    {SHAPE_RECT, 0.08, 0.52, 0.42, 0.92, 6.0, 6.0, 6.0, 1, 0, 0, 1, 1, {1.00f, 0.86f, 0.62f}},
    /* slanted panel: 7D/12 .. 3D/4 */
    {SHAPE_RECT, 0.52, 0.10, 0.88, 0.46, 7.0, 8.4, 7.6, 0, 0, 0, 1, 1, {0.68f, 1.00f, 0.72f}},
    /* occluders at 5D/6: one over the flat panel's corner, one over the background */
    {SHAPE_DISC, 0.36, 0.56, 0.11, 0, 10.0, 10.0, 10.0, 1, 0.05, 0.04, 6.0, 4.5,
     {1.00f, 0.62f, 0.60f}},
    {SHAPE_DISC, 0.82, 0.76, 0.08, 0, 10.0, 10.0, 10.0, 1, 0.06, 0.05, 5.0, 7.0,
     {0.95f, 0.95f, 0.55f}},
    /* occluders at D: a disc over the background, a rectangle over the slanted panel's edge */
    {SHAPE_DISC, 0.17, 0.26, 0.09, 0, 12.0, 12.0, 12.0, 1, 0.07, 0.05, 7.5, 5.5,
     {0.62f, 0.72f, 1.00f}},
    {SHAPE_RECT, 0.60, 0.36, 0.74, 0.62, 12.0, 12.0, 12.0, 1, 0.06, 0.04, 4.0, 6.5,
     {1.00f, 0.70f, 0.95f}},
};
#define N_OBJECT_SURFACES ((int)(sizeof scene_spec / sizeof scene_spec[0]))
#define MAX_SURFACES 8 /* the street layout's count is 7 too */

typedef struct {
    int ox, oy, w, h; /* texel (i, j) covers u in [ox+i, ox+i+1), v in [oy+j, oy+j+1) */
    uint8_t *texel;
    double mean;      /* of all texels: the centre of the contrast scaling */
} texture;

typedef struct {
    shape_kind shape;
    double x0, y0, x1, y1; /* footprint at t = 0 in left pixels; a disc: centre (x0, y0) */
    double r;              /* disc radius */
    double t0, t1, b0, b1; /* SHAPE_QUAD: u in [x0, x1) with t0 + t1 u <= v < b0 + b1 u */
    double a, b, c;        /* d(u, v) = a*u + b*v + c, left coordinates */
    double inv_1ma;        /* 1 / (1 - a): 1.0 exactly for fronto-parallel surfaces */
    double vb, vinv;       /* the non-left view being rendered: its baseline ratio B and
                              1 / (1 - B a) (B = 1: inv_1ma itself, so the right view keeps its
                              bits) */
    double amp_x, amp_y, omega_x, omega_y;
    double mx, my;         /* displacement at the current time */
    float tint[3];
    int vsplit;            /* the right view's mapping evaluated on 4 sub-rows (steep b) */
    double contrast;       /* texture contrast about tex.mean (1: the texels as they are) */
    texture tex;
} surface;

/* Camera effects after rendering (synth.h): vignetting, the right camera's response, noise. */
typedef struct {
    int on, response;         /* any effect; the right camera's gain/offset/gamma not identity */
    double vig, inv_r2;       /* V and 1 / rmax^2 */
    double cx[2], cy;         /* vignetting centres: left camera, right (and other) views */
    double gain, offset, gamma, sigma;
    uint32_t key_l, key_r;    /* noise keys of the left and right views */
} camera_fx;

struct synth {
    synth_params p;
    int D;
    int n;                     /* surfaces in use, far to near */
    surface surf[MAX_SURFACES];
    camera_fx fx;
    double bl;                 /* baseline ratio of the non-left view being rendered */
    double yh, ds, bg;         /* street, facade: horizon row, sky disparity, ground d per row */
    double grid;               /* facade: window columns per unit of D / d */
    uint32_t key_view;         /* its noise key (key_r when bl = 1) */
    uint8_t *owner; /* SUB rows of width*SUB samples: the surface each sample point sees */
};

/* ---- small helpers ------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        int n = snprintf(err, errlen, "synth: ");
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < errlen)
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Integer hash of a lattice point (x, y) under key k: multiply-rotate rounds take in each
 * coordinate, then xor-shift-multiply steps spread every input bit over the output, so
 * neighbouring points give unrelated values. */
static uint32_t hash3(int32_t x, int32_t y, uint32_t k)
{
    uint32_t h = k * 0x9e3779b9u + 0x632be5abu;
    h ^= (uint32_t)x * 0xcc9e2d51u;
    h = (h << 13 | h >> 19) * 0x1b873593u;
    h ^= (uint32_t)y * 0x85ebca6bu;
    h = (h << 15 | h >> 17) * 0xc2b2ae35u;
    h ^= h >> 16;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return h;
}

static float unit_signed(uint32_t h) { return (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f; }
static double unit01(uint32_t h) { return (double)(h >> 8) / 16777216.0; }

static int floordiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static uint8_t to_u8(double v) { return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)(v + 0.5); }

/* ---- textures ------------------------------------------------------------------------------ */

static void texture_set_mean(texture *tx)
{
    double sum = 0;
    size_t n = (size_t)tx->w * (size_t)tx->h;
    for (size_t k = 0; k < n; k++)
        sum += tx->texel[k];
    tx->mean = n ? sum / (double)n : 128.0;
}

/* Does blob `kind` of size sz centred at (0, 0) contain the point (dx, dy)? */
static int blob_contains(int kind, double sz, double dx, double dy)
{
    switch (kind) {
    case 0: return dx * dx + dy * dy < sz * sz;
    case 1: return fabs(dx) < 0.8 * sz && fabs(dy) < 0.8 * sz;
    case 2: return fabs(dx) < 0.35 * sz && fabs(dy) < 1.8 * sz;  /* vertical bar */
    default: return fabs(dx) < 1.8 * sz && fabs(dy) < 0.35 * sz; /* horizontal bar */
    }
}

/* Fills tx with the texture of key `seed` over u in [u0, u1], v in [v0, v1] (plus a margin).
 * Every texel is a function of its global lattice position only, whatever the tile's extent. */
static int texture_build(texture *tx, uint32_t seed, double u0, double v0, double u1, double v1)
{
    tx->ox = (int)floor(u0) - TEX_MARGIN;
    tx->oy = (int)floor(v0) - TEX_MARGIN;
    tx->w = (int)ceil(u1) + TEX_MARGIN - tx->ox;
    tx->h = (int)ceil(v1) + TEX_MARGIN - tx->oy;
    int w = tx->w, h = tx->h;
    size_t n = (size_t)w * (size_t)h;
    /* Lattice values of the finest octave: (w/2 + 2) * (h/2 + 2) at most. */
    size_t glen = (size_t)(w / 2 + 3) * (size_t)(h / 2 + 3);
    float *acc = calloc(n, sizeof *acc);
    float *g = malloc(glen * sizeof *g);
    int *col_p = malloc((size_t)w * sizeof *col_p);
    float *col_f = malloc((size_t)w * sizeof *col_f);
    tx->texel = malloc(n);
    int status = -1;
    if (!acc || !g || !col_p || !col_f || !tx->texel) {
        free(tx->texel);
        tx->texel = NULL;
        goto done;
    }

    /* Value noise: hashed values on a lattice of spacing L, blended with the smoothstep
     * f^2 (3 - 2f) of the texel centre's position f in its cell (no creases at lattice lines). */
    for (int o = 0; o < N_OCTAVES; o++) {
        int L = octave_spacing[o];
        uint32_t key = hash3(o, 0x6f63, seed);
        int offx = (int)(hash3(1, o, key) % (uint32_t)L), offy = (int)(hash3(2, o, key) % (uint32_t)L);
        int p0 = floordiv(tx->ox + offx, L), q0 = floordiv(tx->oy + offy, L);
        int np = floordiv(tx->ox + w - 1 + offx, L) - p0 + 2;
        int nq = floordiv(tx->oy + h - 1 + offy, L) - q0 + 2;
        for (int qq = 0; qq < nq; qq++)
            for (int pp = 0; pp < np; pp++)
                g[(size_t)qq * np + pp] = unit_signed(hash3(p0 + pp, q0 + qq, key));
        for (int i = 0; i < w; i++) {
            int X = tx->ox + i + offx, p = floordiv(X, L);
            float f = ((float)(X - p * L) + 0.5f) / (float)L;
            col_p[i] = p - p0;
            col_f[i] = f * f * (3.0f - 2.0f * f);
        }
        for (int j = 0; j < h; j++) {
            int Y = tx->oy + j + offy, q = floordiv(Y, L);
            float f = ((float)(Y - q * L) + 0.5f) / (float)L;
            float fy = f * f * (3.0f - 2.0f * f);
            const float *g0 = g + (size_t)(q - q0) * np, *g1 = g0 + np;
            float *row = acc + (size_t)j * w;
            for (int i = 0; i < w; i++) {
                int p = col_p[i];
                float fx = col_f[i];
                float top = g0[p] + fx * (g0[p + 1] - g0[p]);
                float bot = g1[p] + fx * (g1[p + 1] - g1[p]);
                row[i] += octave_amp[o] * (top + fy * (bot - top));
            }
        }
    }
    uint32_t wkey = hash3(0x7768, 0x6974, seed);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            size_t k = (size_t)j * w + i;
            acc[k] += TEX_WHITE_AMP * unit_signed(hash3(tx->ox + i, tx->oy + j, wkey));
            tx->texel[k] = to_u8(128.0 + TEX_GAIN * acc[k]);
        }

    /* Blobs, painted cell by cell in raster order of the global cell grid (so overlaps resolve
     * the same way in every tile). */
    uint32_t bkey = hash3(0x626c, 0x6f62, seed);
    int cx0 = floordiv(tx->ox - BLOB_REACH, BLOB_CELL), cx1 = floordiv(tx->ox + w + BLOB_REACH, BLOB_CELL);
    int cy0 = floordiv(tx->oy - BLOB_REACH, BLOB_CELL), cy1 = floordiv(tx->oy + h + BLOB_REACH, BLOB_CELL);
    for (int cy = cy0; cy <= cy1; cy++)
        for (int cx = cx0; cx <= cx1; cx++) {
            uint32_t hb = hash3(cx, cy, bkey);
            if ((hb & 255u) >= BLOB_CHANCE)
                continue;
            double bx = (cx + unit01(hash3(cx, cy, bkey + 1))) * BLOB_CELL;
            double by = (cy + unit01(hash3(cx, cy, bkey + 2))) * BLOB_CELL;
            double sz = BLOB_MIN + BLOB_RANGE * unit01(hash3(cx, cy, bkey + 3));
            int kind = (int)((hb >> 8) & 3u);
            double level = ((hb >> 10) & 1u) ? 226.0 + (double)((hb >> 11) % 24u)
                                           : 6.0 + (double)((hb >> 11) % 24u);
            int i0 = (int)floor(bx - 1.8 * sz) - tx->ox, i1 = (int)ceil(bx + 1.8 * sz) - tx->ox;
            int j0 = (int)floor(by - 1.8 * sz) - tx->oy, j1 = (int)ceil(by + 1.8 * sz) - tx->oy;
            if (i0 < 0) i0 = 0;
            if (j0 < 0) j0 = 0;
            if (i1 > w - 1) i1 = w - 1;
            if (j1 > h - 1) j1 = h - 1;
            for (int j = j0; j <= j1; j++)
                for (int i = i0; i <= i1; i++) {
                    double dx = tx->ox + i + 0.5 - bx, dy = tx->oy + j + 0.5 - by;
                    if (blob_contains(kind, sz, dx, dy)) {
                        size_t k = (size_t)j * w + i;
                        tx->texel[k] = to_u8(level + BLOB_NOISE * TEX_GAIN * acc[k]);
                    }
                }
        }
    status = 0;
done:
    if (status == 0)
        texture_set_mean(tx);
    free(acc);
    free(g);
    free(col_p);
    free(col_f);
    return status;
}

/* Mean of the texture over the box [s0, s1) x [t0, t1) (texture coordinates): the texture is
 * constant on each texel, so the integral is sum over texels of value * overlap area. */
static double box_mean(const texture *tx, double s0, double s1, double t0, double t1)
{
    /* To texel units, clamped to the tile (a footprint leaves it only by rounding). */
    double W = tx->w, H = tx->h;
    s0 -= tx->ox, s1 -= tx->ox, t0 -= tx->oy, t1 -= tx->oy;
    s0 = s0 < 0 ? 0 : s0 > W ? W : s0;
    s1 = s1 < 0 ? 0 : s1 > W ? W : s1;
    t0 = t0 < 0 ? 0 : t0 > H ? H : t0;
    t1 = t1 < 0 ? 0 : t1 > H ? H : t1;
    if (!(s1 > s0) || !(t1 > t0)) {
        int i = s0 >= W ? tx->w - 1 : (int)s0, j = t0 >= H ? tx->h - 1 : (int)t0;
        return tx->texel[(size_t)j * tx->w + i];
    }
    int i0 = (int)s0, i1 = (int)s1, j0 = (int)t0, j1 = (int)t1;
    if (i1 == s1) i1--; /* the last texel the box reaches into */
    if (j1 == t1) j1--;
    double sum = 0;
    for (int j = j0; j <= j1; j++) {
        double hi = t1 < j + 1 ? t1 : j + 1, lo = t0 > j ? t0 : j;
        const uint8_t *row = tx->texel + (size_t)j * tx->w;
        double rs = 0;
        for (int i = i0; i <= i1; i++) {
            double r = s1 < i + 1 ? s1 : i + 1, l = s0 > i ? s0 : i;
            rs += (r - l) * row[i];
        }
        sum += (hi - lo) * rs;
    }
    return sum / ((s1 - s0) * (t1 - t0));
}

/* ---- geometry ------------------------------------------------------------------------------ */

static double disparity_at(const surface *sf, double u, double v) { return sf->a * u + sf->b * v + sf->c; }

/* The surface point seen at right-image x' on row v: solve u - d(u, v) = x' for u. */
static double right_to_u(const surface *sf, double xr, double v)
{
    return (xr + sf->vb * sf->b * v + sf->vb * sf->c) * sf->vinv;
}

/* The non-left view that right_to_u and first_sample describe: baseline ratio bl (1: the right
 * view; with bl = 1 every product with vb is exact, so the right view's bits do not change). */
static void set_baseline(synth *s, double bl)
{
    s->bl = bl;
    if (bl == 1.0) {
        s->key_view = s->fx.key_r;
    } else {
        uint64_t bits;
        memcpy(&bits, &bl, sizeof bits);
        s->key_view = hash3((int32_t)(uint32_t)bits, (int32_t)(uint32_t)(bits >> 32), s->fx.key_r);
    }
    for (int L = 0; L < s->n; L++) {
        surface *sf = &s->surf[L];
        sf->vb = bl;
        sf->vinv = bl == 1.0 ? sf->inv_1ma : 1.0 / (1.0 - bl * sf->a);
    }
}

/* The surface's footprint on row v (left coordinates, at the current time): [*ua, *ub).
 * Returns 0 when the row misses it. */
static int span_at(const surface *sf, double v, double *ua, double *ub)
{
    switch (sf->shape) {
    case SHAPE_RECT:
        if (v < sf->y0 + sf->my || v >= sf->y1 + sf->my)
            return 0;
        *ua = sf->x0 + sf->mx;
        *ub = sf->x1 + sf->mx;
        return 1;
    case SHAPE_DISC: {
        double dy = v - (sf->y0 + sf->my), q = sf->r * sf->r - dy * dy;
        if (q <= 0)
            return 0;
        double half = sqrt(q);
        *ua = sf->x0 + sf->mx - half;
        *ub = sf->x0 + sf->mx + half;
        return 1;
    }
    case SHAPE_QUAD: {
        /* the intersection of four half-planes: an interval of u on every row */
        double a = sf->x0, b = sf->x1;
        if (sf->t1 == 0) {
            if (v < sf->t0)
                return 0;
        } else if (sf->t1 > 0) {
            b = fmin(b, (v - sf->t0) / sf->t1);
        } else {
            a = fmax(a, (v - sf->t0) / sf->t1);
        }
        if (sf->b1 == 0) {
            if (v >= sf->b0)
                return 0;
        } else if (sf->b1 > 0) {
            a = fmax(a, (v - sf->b0) / sf->b1);
        } else {
            b = fmin(b, (v - sf->b0) / sf->b1);
        }
        *ua = a, *ub = b;
        return a < b;
    }
    default:
        *ua = -INFINITY;
        *ub = INFINITY;
        return 1;
    }
}

static int contains(const surface *sf, double u, double v)
{
    double ua, ub;
    return span_at(sf, v, &ua, &ub) && ua <= u && u < ub;
}

/* u of sample k (x = (2k + 1)/8) on row v as seen from `view`. */
static double sample_u(const surface *sf, int view, int k, double v)
{
    double x = (double)(2 * k + 1) * 0.125;
    return view == VIEW_LEFT ? x : right_to_u(sf, x, v);
}

/* The first sample k in [0, n] whose u is >= bound: an estimate from the inverse map, then
 * corrected with the exact predicate, so painted ranges agree bit for bit with contains(). */
static int first_sample(const surface *sf, int view, double v, double bound, int n)
{
    double x = view == VIEW_LEFT ? bound
                                 : bound * (1.0 - sf->vb * sf->a) - sf->vb * sf->b * v - sf->vb * sf->c;
    double e = ceil(x * SUB - 0.5);
    int k = e < 0 ? 0 : e > n ? n : (int)e;
    while (k > 0 && sample_u(sf, view, k - 1, v) >= bound)
        k--;
    while (k < n && sample_u(sf, view, k, v) < bound)
        k++;
    return k;
}

/* Step 1: for the SUB sample rows of pixel row y, the surface each sample sees. */
static void paint_owners(synth *s, int view, int y)
{
    int n = s->p.width * SUB;
    for (int j = 0; j < SUB; j++) {
        double v = y + (2 * j + 1) * 0.125;
        uint8_t *row = s->owner + (size_t)j * n;
        memset(row, 0, (size_t)n);
        for (int L = 1; L < s->n; L++) {
            const surface *sf = &s->surf[L];
            double ua, ub;
            if (!span_at(sf, v, &ua, &ub))
                continue;
            int k0 = first_sample(sf, view, v, ua, n), k1 = first_sample(sf, view, v, ub, n);
            if (k1 > k0)
                memset(row + k0, L, (size_t)(k1 - k0));
        }
    }
}

/* Mean texture of surface sf over view columns [xa, xb) and rows [ya, yb); vc is the row at which
 * the right view's mapping x' -> u is evaluated. Texture coordinates = u, v minus the motion. */
static double surface_mean(const surface *sf, int view, double xa, double xb, double ya, double yb,
                           double vc)
{
    double u0 = xa, u1 = xb, m;
    if (view == VIEW_RIGHT && sf->vsplit) {
        /* a steep b (the street's ground): the footprint's shear over the pixel height is
         * followed in 4 steps, each with the mapping at its own centre row */
        double h = (yb - ya) / 4;
        m = 0;
        for (int j = 0; j < 4; j++) {
            double a = ya + j * h, c = a + 0.5 * h;
            m += box_mean(&sf->tex, right_to_u(sf, xa, c) - sf->mx, right_to_u(sf, xb, c) - sf->mx,
                          a - sf->my, a + h - sf->my);
        }
        m *= 0.25;
    } else {
        if (view == VIEW_RIGHT) {
            u0 = right_to_u(sf, xa, vc);
            u1 = right_to_u(sf, xb, vc);
        }
        m = box_mean(&sf->tex, u0 - sf->mx, u1 - sf->mx, ya - sf->my, yb - sf->my);
    }
    if (sf->contrast != 1.0)
        m = sf->tex.mean + sf->contrast * (m - sf->tex.mean);
    return m;
}

/* Camera effects at pixel (x, y) of `view`: the vignetting factor and the noise (grey levels). */
static void camera_pixel(const synth *s, int view, int x, int y, double *vig, double *n)
{
    const camera_fx *f = &s->fx;
    *vig = 1.0;
    if (f->vig > 0) {
        double dx = x + 0.5 - f->cx[view], dy = y + 0.5 - f->cy;
        *vig = 1.0 - f->vig * (dx * dx + dy * dy) * f->inv_r2;
        if (*vig < 0)
            *vig = 0;
    }
    *n = 0;
    if (f->sigma > 0) {
        /* Box-Muller from two hashes of the pixel under the view's key: a counter-based
         * generator, so every pixel's noise is fixed by (seed, view, x, y) whatever the order */
        uint32_t key = view == VIEW_LEFT ? f->key_l : s->key_view;
        double u1 = ((double)(hash3(x, y, key) >> 8) + 0.5) / 16777216.0;
        double u2 = (double)(hash3(x, y, key ^ 0x5bd1e995u) >> 8) / 16777216.0;
        *n = f->sigma * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
    }
}

/* Vignetting, then the right camera's response (the right view only: baseline 1), then noise,
 * then rounding and clamping to 0..255. */
static uint8_t camera_u8(const synth *s, int view, double v, double vig, double n)
{
    const camera_fx *f = &s->fx;
    v *= vig;
    if (view == VIEW_RIGHT && s->bl == 1.0 && f->response) {
        double q = (v * f->gain + f->offset) / 255.0;
        v = q <= 0 ? 0 : 255.0 * pow(q, f->gamma);
    }
    return to_u8(v + n);
}

/* Steps 1 and 2 for one row. grey, rgb: output rows or NULL; mixed (or NULL): 1 where the pixel's
 * samples see more than one surface. */
static void render_row(synth *s, int view, int y, uint8_t *grey, uint8_t *rgb, uint8_t *mixed)
{
    int W = s->p.width, n = W * SUB;
    paint_owners(s, view, y);
    const uint8_t *own = s->owner;
    for (int x = 0; x < W; x++) {
        uint32_t r0, r1, r2, r3;
        memcpy(&r0, own + (size_t)x * SUB, 4);
        memcpy(&r1, own + n + (size_t)x * SUB, 4);
        memcpy(&r2, own + 2 * (size_t)n + (size_t)x * SUB, 4);
        memcpy(&r3, own + 3 * (size_t)n + (size_t)x * SUB, 4);
        double val, c[3];
        int pure = r0 == r1 && r0 == r2 && r0 == r3 && r0 == (r0 & 255u) * 0x01010101u;
        if (pure) {
            const surface *sf = &s->surf[r0 & 255u];
            val = surface_mean(sf, view, x, x + 1, y, y + 1, y + 0.5);
            for (int ch = 0; ch < 3; ch++)
                c[ch] = val * sf->tint[ch];
        } else {
            /* Coverage: each run of equal samples in a sample row is a box of (run length)/SUB
             * by 1/SUB px, contributing its mean times its area. */
            val = c[0] = c[1] = c[2] = 0;
            for (int j = 0; j < SUB; j++) {
                const uint8_t *o = own + (size_t)j * n + (size_t)x * SUB;
                double ya = y + j * (1.0 / SUB), yb = ya + 1.0 / SUB;
                for (int i = 0; i < SUB;) {
                    int e = i + 1;
                    while (e < SUB && o[e] == o[i])
                        e++;
                    const surface *sf = &s->surf[o[i]];
                    double m = surface_mean(sf, view, x + i * (1.0 / SUB), x + e * (1.0 / SUB), ya,
                                            yb, ya + 0.5 / SUB);
                    double area = (double)(e - i) / (SUB * SUB);
                    val += area * m;
                    for (int ch = 0; ch < 3; ch++)
                        c[ch] += area * m * sf->tint[ch];
                    i = e;
                }
            }
        }
        if (s->fx.on) {
            double vig, nz;
            camera_pixel(s, view, x, y, &vig, &nz);
            if (grey)
                grey[x] = camera_u8(s, view, val, vig, nz);
            if (rgb)
                for (int ch = 0; ch < 3; ch++)
                    rgb[3 * x + ch] = camera_u8(s, view, c[ch], vig, nz);
        } else {
            if (grey)
                grey[x] = to_u8(val);
            if (rgb)
                for (int ch = 0; ch < 3; ch++)
                    rgb[3 * x + ch] = to_u8(c[ch]);
        }
        if (mixed)
            mixed[x] = !pure;
    }
}

static void set_time(synth *s, double t)
{
    for (int L = 0; L < s->n; L++) {
        surface *sf = &s->surf[L];
        sf->mx = sf->amp_x * sin(sf->omega_x * t);
        sf->my = sf->amp_y * sin(sf->omega_y * t);
    }
}

/* ---- parameters ---------------------------------------------------------------------------- */

static int resolve_disparity(const synth_params *p)
{
    if (p->max_disparity != 0)
        return p->max_disparity;
    /* A multiple of 12 keeps the integer surfaces (D/2, 5D/6, D) exact: 48 at 640 wide. */
    int d = 12 * (int)floor(p->width / 144.0 + 0.5);
    return d < 12 ? 12 : d;
}

int synth_params_check(const synth_params *p, char *err, size_t errlen)
{
    if (!p)
        return fail(err, errlen, "params: NULL");
    if (p->width < SYNTH_MIN_SIZE || p->width > SYNTH_MAX_SIZE)
        return fail(err, errlen, "width: %d is outside %d..%d", p->width, SYNTH_MIN_SIZE,
                    SYNTH_MAX_SIZE);
    if (p->height < SYNTH_MIN_SIZE || p->height > SYNTH_MAX_SIZE)
        return fail(err, errlen, "height: %d is outside %d..%d", p->height, SYNTH_MIN_SIZE,
                    SYNTH_MAX_SIZE);
    if (!isfinite(p->t))
        return fail(err, errlen, "t: not a finite number");
    if (p->max_disparity < 0)
        return fail(err, errlen, "max_disparity: %d is negative (0 = default)", p->max_disparity);
    if (p->max_disparity != 0 &&
        (p->max_disparity < SYNTH_MIN_DISPARITY || p->max_disparity > p->width / 2))
        return fail(err, errlen, "max_disparity: %d is outside %d..%d (width / 2)", p->max_disparity,
                    SYNTH_MIN_DISPARITY, p->width / 2);
    if (p->edge_radius < 0 || p->edge_radius > 64)
        return fail(err, errlen, "edge_radius: %d is outside 0..64", p->edge_radius);
    if (p->layout != SYNTH_LAYOUT_OBJECTS && p->layout != SYNTH_LAYOUT_STREET &&
        p->layout != SYNTH_LAYOUT_FACADE)
        return fail(err, errlen, "layout: %d is none of %d (objects), %d (street), %d (facade)",
                    p->layout, SYNTH_LAYOUT_OBJECTS, SYNTH_LAYOUT_STREET, SYNTH_LAYOUT_FACADE);
    if (!(p->contrast == 0 || (p->contrast >= SYNTH_MIN_CONTRAST && p->contrast <= 1)))
        return fail(err, errlen, "contrast: %g is outside %g..1 (0 = 1)", p->contrast,
                    SYNTH_MIN_CONTRAST);
    if (!(p->right_gain == 0 || (p->right_gain >= 0.25 && p->right_gain <= 4)))
        return fail(err, errlen, "right_gain: %g is outside 0.25..4 (0 = 1)", p->right_gain);
    if (!(p->right_offset >= -128 && p->right_offset <= 128))
        return fail(err, errlen, "right_offset: %g is outside -128..128", p->right_offset);
    if (!(p->right_gamma == 0 || (p->right_gamma >= 0.25 && p->right_gamma <= 4)))
        return fail(err, errlen, "right_gamma: %g is outside 0.25..4 (0 = 1)", p->right_gamma);
    if (!(p->vignette >= 0 && p->vignette <= 0.9))
        return fail(err, errlen, "vignette: %g is outside 0..0.9", p->vignette);
    if (!(p->noise >= 0 && p->noise <= 32))
        return fail(err, errlen, "noise: %g is outside 0..32", p->noise);
    return 0;
}

static const char *const layout_names[] = {"objects", "street", "facade"};

int synth_layout_from_name(const char *name)
{
    for (int k = 0; k < (int)(sizeof layout_names / sizeof *layout_names); k++)
        if (name && !strcmp(name, layout_names[k]))
            return k; /* SYNTH_LAYOUT_OBJECTS, _STREET, _FACADE in order */
    return -1;
}

const char *synth_layout_name(int layout)
{
    return layout >= 0 && layout < (int)(sizeof layout_names / sizeof *layout_names)
               ? layout_names[layout]
               : "?";
}

int synth_max_disparity(const synth_params *p)
{
    return synth_params_check(p, NULL, 0) == 0 ? resolve_disparity(p) : -1;
}

/* ---- the street layout -------------------------------------------------------------------- */

enum { TEX_SKY, TEX_ROAD, TEX_FACADE, TEX_GRID, TEX_POLE };

/* Value noise of one octave (spacing L) at the centre of texel (X, Y), in -1..1. */
static double vnoise(int X, int Y, int L, uint32_t key)
{
    int p = floordiv(X, L), q = floordiv(Y, L);
    double fx = ((double)(X - p * L) + 0.5) / L, fy = ((double)(Y - q * L) + 0.5) / L;
    fx = fx * fx * (3 - 2 * fx), fy = fy * fy * (3 - 2 * fy);
    double g00 = unit_signed(hash3(p, q, key)), g10 = unit_signed(hash3(p + 1, q, key));
    double g01 = unit_signed(hash3(p, q + 1, key)), g11 = unit_signed(hash3(p + 1, q + 1, key));
    double top = g00 + fx * (g10 - g00), bot = g01 + fx * (g11 - g01);
    return top + fy * (bot - top);
}

/* Lane markings on the road (texture coordinates = left-image positions): lines through the
 * vanishing point (W/2, horizon) that meet the bottom row at these fractions of the width;
 * dashed ones alternate in depth (1/d). */
static const double lane_x[] = {0.06, 0.38, 0.70, 1.02};
static const int lane_dashed[] = {0, 1, 1, 0};

/* The texel value of a street texture at texel (X, Y) (centre (X + 0.5, Y + 0.5)). */
static double street_texel(const synth *s, const surface *sf, int kind, int X, int Y, uint32_t key)
{
    int W = s->p.width, H = s->p.height;
    double u = X + 0.5, v = Y + 0.5, white = unit_signed(hash3(X, Y, key ^ 0x77686974u));
    switch (kind) {
    case TEX_SKY: {
        /* a smooth vertical gradient, brighter toward the horizon, thin clouds (low-contrast
         * value noise from 64 down to 8 px) and a faint haze */
        double f = v / s->yh;
        f = f < 0 ? 0 : f > 1 ? 1 : f;
        return 165.0 + 40.0 * f + 7.0 * vnoise(X, Y, 64, key) + 5.0 * vnoise(X, Y, 24, key + 1) +
               3.0 * vnoise(X, Y, 8, key + 2) + 1.5 * white;
    }
    case TEX_ROAD: {
        double val = 96.0 + 7.0 * vnoise(X, Y, 4, key) + 5.0 * vnoise(X, Y, 16, key + 1) +
                     6.0 * white;
        double t = (v - s->yh) / (H - s->yh);
        if (t <= 0)
            return val;
        double d = s->ds + s->bg * (v - s->yh); /* the ground's disparity on this row */
        for (size_t k = 0; k < sizeof lane_x / sizeof lane_x[0]; k++) {
            double uc = 0.5 * W + (lane_x[k] - 0.5) * W * t, hw = 0.008 * W * t;
            if (fabs(u - uc) >= hw)
                continue;
            if (lane_dashed[k]) {
                double z = 2.0 * s->D / d; /* depth in dash periods */
                if (z - floor(z) >= 0.5)
                    continue;
            }
            val = 212.0 + 8.0 * white;
        }
        return val;
    }
    case TEX_GRID: {
        /* the facade layout's wall: weakly textured render with identical windows on a regular
         * grid (columns evenly spaced along the wall: affine in 1/d for any vertical wall;
         * floors evenly spaced in height above the ground), so that a window matches its
         * neighbours nearly as well as itself */
        double d = sf->a * u + sf->c;
        double wall = 158.0 + 5.0 * vnoise(X, Y, 8, key) + 3.0 * white;
        if (d <= 0)
            return wall;
        double h = (sf->b0 + sf->b1 * u - v) / d;
        double hf = (sf->b0 - sf->t0) / sf->c;
        double fl = h / (hf / 7.0), col = s->grid * s->D / d;
        double ff = fl - floor(fl), fc = col - floor(col);
        if (fl < 0.5 || ff < 0.3 || ff > 0.75 || fc < 0.25 || fc > 0.75)
            return wall;
        return 58.0 + 3.0 * white;
    }
    case TEX_POLE: /* painted metal: nearly uniform */
        return 72.0 + 4.0 * vnoise(X, Y, 4, key) + 2.0 * white;
    default: {
        /* facade: wall with rows and columns of windows, spaced evenly on the wall (columns in
         * depth 1/d, floors in height above the ground per unit of d) */
        double d = sf->a * u + sf->c;
        double wall = 150.0 + 14.0 * vnoise(X, Y, 8, key) + 5.0 * white;
        if (d <= 0)
            return wall;
        double h = (sf->b0 + sf->b1 * u - v) / d;  /* height above the ground */
        double hf = (sf->b0 - sf->t0) / sf->c;      /* the facade's height, same unit */
        double fl = h / (hf / 8.0), col = 1.3 * s->D / d;
        double ff = fl - floor(fl), fc = col - floor(col);
        if (fl < 0.6 || ff < 0.3 || ff > 0.78 || fc < 0.22 || fc > 0.72)
            return wall;
        uint32_t hw = hash3((int)floor(col), (int)floor(fl), key ^ 0x77696e64u);
        return (hw & 7u) == 0 ? 196.0 + 20.0 * unit01(hw >> 3) + 3.0 * white
                              : 34.0 + 40.0 * unit01(hw >> 3) + 3.0 * white;
    }
    }
}

static int street_texture(texture *tx, const synth *s, const surface *sf, int kind, uint32_t key,
                          double u0, double v0, double u1, double v1)
{
    tx->ox = (int)floor(u0) - TEX_MARGIN;
    tx->oy = (int)floor(v0) - TEX_MARGIN;
    tx->w = (int)ceil(u1) + TEX_MARGIN - tx->ox;
    tx->h = (int)ceil(v1) + TEX_MARGIN - tx->oy;
    tx->texel = malloc((size_t)tx->w * (size_t)tx->h);
    if (!tx->texel)
        return -1;
    for (int j = 0; j < tx->h; j++)
        for (int i = 0; i < tx->w; i++)
            tx->texel[(size_t)j * tx->w + i] =
                to_u8(street_texel(s, sf, kind, tx->ox + i, tx->oy + j, key));
    texture_set_mean(tx);
    return 0;
}

static void street_surface(surface *sf, shape_kind shape, double a, double b, double c,
                           float r, float g, float bl)
{
    memset(sf, 0, sizeof *sf);
    sf->shape = shape;
    sf->a = a, sf->b = b, sf->c = c;
    sf->inv_1ma = 1.0 / (1.0 - a);
    sf->omega_x = sf->omega_y = 1.0; /* amplitudes 0: the street does not move with t */
    sf->tint[0] = r, sf->tint[1] = g, sf->tint[2] = bl;
}

/* Surfaces 0 and 1 of the street and facade layouts: the sky (d = ds) and the ground plane from
 * the horizon (row horizon * H, d = ds) to the bottom row (d = D). */
static int sky_and_ground(synth *s, double horizon)
{
    int W = s->p.width, H = s->p.height;
    double D = s->D;
    s->yh = horizon * H;
    s->ds = floor(D / 16.0 + 0.5);
    if (s->ds < 1)
        s->ds = 1;
    s->bg = (D - s->ds) / (H - s->yh);
    uint32_t seed = s->p.seed;
    double mu = -SYNTH_MAX_BASELINE * D, mU = W + SYNTH_MAX_BASELINE * D;
    surface *sf = &s->surf[0];
    street_surface(sf, SHAPE_PLANE, 0, 0, s->ds, 0.80f, 0.90f, 1.00f);
    if (street_texture(&sf->tex, s, sf, TEX_SKY, hash3(0, 0x736b79, seed), mu, 0, mU, H) != 0)
        return -1;
    sf = &s->surf[1];
    street_surface(sf, SHAPE_RECT, 0, s->bg, s->ds - s->bg * s->yh, 0.92f, 0.92f, 0.96f);
    sf->x0 = -INFINITY, sf->x1 = INFINITY, sf->y0 = s->yh, sf->y1 = INFINITY;
    sf->vsplit = 1;
    return street_texture(&sf->tex, s, sf, TEX_ROAD, hash3(1, 0x726f6164, seed), mu, s->yh, mU, H);
}

/* A vertical wall standing on the ground: d = a u + c over u in [x0, x1), its bottom edge where
 * the ground has its disparity, its top hf * d(u) rows above that (a height proportional to d:
 * level in the world). */
static void wall_on_ground(synth *s, surface *sf, double a, double c, double x0, double x1,
                           double hf)
{
    sf->x0 = x0, sf->x1 = x1;
    sf->b1 = a / s->bg;
    sf->b0 = s->yh + (c - s->ds) / s->bg;
    sf->t0 = sf->b0 - hf * c;
    sf->t1 = sf->b1 - hf * a;
}

/* The integer disparity of the ground nearest row `row` (its bottom row moved to match, into
 * *bottom): a fronto-parallel object standing there has it. */
static double ground_d(const synth *s, double row, double *bottom)
{
    const double d = floor(s->ds + s->bg * (row - s->yh) + 0.5);
    *bottom = s->yh + (d - s->ds) / s->bg;
    return d;
}

/* The street (synth.h), far to near: sky, ground, the two facades, three cars. */
static int street_create(synth *s)
{
    int W = s->p.width, H = s->p.height;
    double D = s->D;
    s->n = 7;
    uint32_t seed = s->p.seed;

    if (sky_and_ground(s, 0.4) != 0)
        return -1;
    surface *sf;

    /* Facades: d from D/8 at the inner edge (22 % of the width from the border) to D/2 at the
     * image border (the right one goes on past it by D/2 px for the right view); the bottom
     * edge is where the ground has the facade's disparity, the top 0.1 H above the image at
     * the border and lower inward by the same height per unit of d. */
    double xi = 0.22 * W, dI = D / 8.0, dB = D / 2.0;
    for (int side = 0; side < 2; side++) {
        sf = &s->surf[2 + side];
        double a = side == 0 ? (dI - dB) / xi : (dB - dI) / xi;
        double c = side == 0 ? dB : dI - a * (W - xi);
        street_surface(sf, SHAPE_QUAD, a, 0, c, side ? 0.80f : 1.00f, side ? 0.86f : 0.88f,
                       side ? 1.00f : 0.74f);
        wall_on_ground(s, sf, a, c, side == 0 ? 0 : W - xi, side == 0 ? xi : W + dB,
                       (s->yh + (dB - s->ds) / s->bg + 0.1 * H) / dB);
        double vt = fmin(sf->t0 + sf->t1 * sf->x0, sf->t0 + sf->t1 * sf->x1);
        double vb = fmax(sf->b0 + sf->b1 * sf->x0, sf->b0 + sf->b1 * sf->x1);
        if (street_texture(&sf->tex, s, sf, TEX_FACADE, hash3(2 + side, 0x66616364, seed), sf->x0,
                           fmax(vt, -1.0), sf->x1, fmin(vb, H + 1.0)) != 0)
            return -1;
    }

    /* Cars: fronto-parallel boxes at the ground's disparity on their bottom row (rounded to an
     * integer, the bottom row moved to match), sized in proportion to d; far to near. */
    static const double car[3][2] = {{0.55, 0.62}, {0.72, 0.78}, {0.30, 0.92}};
    static const float car_tint[3][3] = {{0.62f, 0.72f, 1.00f}, {1.00f, 0.60f, 0.56f},
                                         {0.95f, 0.95f, 0.58f}};
    for (int k = 0; k < 3; k++) {
        sf = &s->surf[4 + k];
        double vb, dc = ground_d(s, car[k][1] * H, &vb);
        double w = 0.36 * W * dc / D, h = 0.36 * H * dc / D;
        street_surface(sf, SHAPE_RECT, 0, 0, dc, car_tint[k][0], car_tint[k][1], car_tint[k][2]);
        sf->x0 = car[k][0] * W - 0.5 * w, sf->x1 = sf->x0 + w;
        sf->y0 = vb - h, sf->y1 = vb;
        if (texture_build(&sf->tex, hash3(4 + k, 0x73757266, seed), sf->x0, sf->y0, sf->x1,
                          sf->y1) != 0)
            return -1;
    }
    return 0;
}

/* The facade layout (synth.h), far to near: sky, ground, one long facade receding to the right,
 * three thin poles standing on the ground. */
static int facade_create(synth *s)
{
    int W = s->p.width, H = s->p.height;
    double D = s->D;
    if (sky_and_ground(s, 0.45) != 0)
        return -1;
    s->n = 6;
    uint32_t seed = s->p.seed;
    /* the facade: d from 0.6 D at the left border to 0.2 D at the right one (and on past it
     * by D px for the right view), its top 0.06 H below the top row at the left border; the
     * window columns are a third of the disparity apart at the left border (grid: D / d per
     * column, d^2 / (grid D |a|) px apart), so that within the search range every window has
     * neighbours one and two columns away, and nine times closer at the far end */
    double dL = 0.6 * D, dR = 0.2 * D, a = (dR - dL) / W;
    s->grid = dL * dL / (dL / 3.0 * D * fabs(a));
    surface *sf = &s->surf[2];
    street_surface(sf, SHAPE_QUAD, a, 0, dL, 1.00f, 0.90f, 0.78f);
    wall_on_ground(s, sf, a, dL, 0, W + D, (s->yh + (dL - s->ds) / s->bg - 0.06 * H) / dL);
    double vt = fmin(sf->t0, sf->t0 + sf->t1 * sf->x1), vb = fmax(sf->b0, sf->b0 + sf->b1 * sf->x1);
    if (street_texture(&sf->tex, s, sf, TEX_GRID, hash3(2, 0x67726964, seed), sf->x0,
                       fmax(vt, -1.0), sf->x1, fmin(vb, H + 1.0)) != 0)
        return -1;
    /* poles: fronto-parallel, standing on the ground at rows 0.72, 0.83 and 0.95 H (rounded to
     * the row of an integer disparity), 0.55 H tall and 0.01 W wide at d = D (at least 2 px) */
    static const double pole[3][2] = {{0.78, 0.72}, {0.47, 0.83}, {0.16, 0.95}};
    for (int k = 0; k < 3; k++) {
        sf = &s->surf[3 + k];
        double bottom, dc = ground_d(s, pole[k][1] * H, &bottom);
        double w = fmax(2.0, 0.01 * W * dc / D), h = 0.55 * H * dc / D;
        street_surface(sf, SHAPE_RECT, 0, 0, dc, 0.86f, 0.90f, 0.92f);
        sf->x0 = pole[k][0] * W - 0.5 * w, sf->x1 = sf->x0 + w;
        sf->y0 = bottom - h, sf->y1 = bottom;
        if (street_texture(&sf->tex, s, sf, TEX_POLE, hash3(3 + k, 0x706f6c65, seed), sf->x0,
                           sf->y0, sf->x1, sf->y1) != 0)
            return -1;
    }
    return 0;
}

/* ---- handle -------------------------------------------------------------------------------- */

static void surface_setup(surface *sf, const surface_spec *sp, int W, int H, int D)
{
    memset(sf, 0, sizeof *sf);
    sf->shape = sp->shape;
    if (sp->shape == SHAPE_DISC) {
        sf->x0 = sp->x0 * W, sf->y0 = sp->y0 * H, sf->r = sp->x1 * H;
    } else {
        sf->x0 = sp->x0 * W, sf->y0 = sp->y0 * H, sf->x1 = sp->x1 * W, sf->y1 = sp->y1 * H;
    }
    double unit = D / 12.0;
    if (sp->integer) {
        sf->c = floor(sp->d_tl * unit + 0.5);
    } else {
        sf->a = (sp->d_tr - sp->d_tl) * unit / (sf->x1 - sf->x0);
        sf->b = (sp->d_bl - sp->d_tl) * unit / (sf->y1 - sf->y0);
        sf->c = sp->d_tl * unit - sf->a * sf->x0 - sf->b * sf->y0;
    }
    sf->inv_1ma = 1.0 / (1.0 - sf->a);
    sf->amp_x = sp->amp_x * W, sf->amp_y = sp->amp_y * H;
    sf->omega_x = 2.0 * M_PI / sp->period_x, sf->omega_y = 2.0 * M_PI / sp->period_y;
    memcpy(sf->tint, sp->tint, sizeof sf->tint);
}

void synth_destroy(synth *s)
{
    if (!s)
        return;
    for (int L = 0; L < s->n; L++)
        free(s->surf[L].tex.texel);
    free(s->owner);
    free(s);
}

int synth_create(const synth_params *p, synth **out, char *err, size_t errlen)
{
    if (!out)
        return fail(err, errlen, "out: NULL");
    *out = NULL;
    if (synth_params_check(p, err, errlen) != 0)
        return -1;
    synth *s = calloc(1, sizeof *s);
    if (!s)
        return fail(err, errlen, "out of memory");
    s->p = *p;
    s->D = resolve_disparity(p);
    int W = p->width, H = p->height;
    s->owner = malloc((size_t)W * SUB * SUB);
    if (!s->owner)
        goto nomem;
    s->n = N_OBJECT_SURFACES;
    if ((p->layout == SYNTH_LAYOUT_STREET && street_create(s) != 0) ||
        (p->layout == SYNTH_LAYOUT_FACADE && facade_create(s) != 0))
        goto nomem;
    for (int L = 0; L < s->n && p->layout == SYNTH_LAYOUT_OBJECTS; L++) {
        surface *sf = &s->surf[L];
        surface_setup(sf, &scene_spec[L], W, H, s->D);
        /* The texture tile covers the footprint at rest; the background's also covers what a
         * view at baseline ratio B sees past the left image's edges (u = x' + B d with d < D:
         * up to W + B D, down to B D for B < 0), for every |B| <= SYNTH_MAX_BASELINE. A texel
         * depends on its lattice position only, so the larger tile changes no pixel. */
        double u0, v0, u1, v1;
        if (sf->shape == SHAPE_PLANE)
            u0 = -SYNTH_MAX_BASELINE * s->D, v0 = 0, u1 = W + SYNTH_MAX_BASELINE * s->D, v1 = H;
        else if (sf->shape == SHAPE_DISC)
            u0 = sf->x0 - sf->r, v0 = sf->y0 - sf->r, u1 = sf->x0 + sf->r, v1 = sf->y0 + sf->r;
        else
            u0 = sf->x0, v0 = sf->y0, u1 = sf->x1, v1 = sf->y1;
        if (texture_build(&sf->tex, hash3(L, 0x73757266, p->seed), u0, v0, u1, v1) != 0)
            goto nomem;
    }
    for (int L = 0; L < s->n; L++)
        s->surf[L].contrast = p->contrast == 0 ? 1.0 : p->contrast;
    camera_fx *f = &s->fx;
    f->gain = p->right_gain == 0 ? 1.0 : p->right_gain;
    f->offset = p->right_offset;
    f->gamma = p->right_gamma == 0 ? 1.0 : p->right_gamma;
    f->response = f->gain != 1.0 || f->offset != 0 || f->gamma != 1.0;
    f->vig = p->vignette;
    f->sigma = p->noise;
    f->on = f->response || f->vig > 0 || f->sigma > 0;
    f->cx[VIEW_LEFT] = 0.52 * W, f->cx[VIEW_RIGHT] = 0.48 * W, f->cy = 0.5 * H;
    f->inv_r2 = 1.0 / (0.25 * ((double)W * W + (double)H * H));
    f->key_l = hash3(0, 0x6e6f6973, p->seed);
    f->key_r = hash3(1, 0x6e6f6973, p->seed);
    set_baseline(s, 1.0);
    *out = s;
    return 0;
nomem:
    synth_destroy(s);
    return fail(err, errlen, "out of memory for a %dx%d scene", W, H);
}

/* The arguments synth_render_views and synth_render_view share: 0, or -1 with err. */
static int check_render(const synth *s, int channels, size_t pitch, double t, char *err,
                        size_t errlen)
{
    if (channels != 1 && channels != 3)
        return fail(err, errlen, "channels: %d (1 = grey or 3 = RGB)", channels);
    if (pitch < (size_t)s->p.width * (size_t)channels)
        return fail(err, errlen, "pitch: %zu is less than width * channels = %zu", pitch,
                    (size_t)s->p.width * (size_t)channels);
    if (!isfinite(t))
        return fail(err, errlen, "t: not a finite number");
    return 0;
}

int synth_render_views(synth *s, double t, uint8_t *left, uint8_t *right, int channels,
                       size_t pitch, char *err, size_t errlen)
{
    if (!s || !left || !right)
        return fail(err, errlen, "render_views: NULL handle or buffer");
    if (check_render(s, channels, pitch, t, err, errlen) != 0)
        return -1;
    set_time(s, t);
    set_baseline(s, 1.0);
    for (int view = VIEW_LEFT; view <= VIEW_RIGHT; view++) {
        uint8_t *dst = view == VIEW_LEFT ? left : right;
        for (int y = 0; y < s->p.height; y++) {
            uint8_t *row = dst + (size_t)y * pitch;
            render_row(s, view, y, channels == 1 ? row : NULL, channels == 3 ? row : NULL, NULL);
        }
    }
    return 0;
}

int synth_render_view(synth *s, double t, double baseline, uint8_t *out, int channels,
                      size_t pitch, char *err, size_t errlen)
{
    if (!s || !out)
        return fail(err, errlen, "render_view: NULL handle or buffer");
    if (check_render(s, channels, pitch, t, err, errlen) != 0)
        return -1;
    if (!(fabs(baseline) <= SYNTH_MAX_BASELINE))
        return fail(err, errlen, "baseline: %g is outside -%d..%d", baseline, SYNTH_MAX_BASELINE,
                    SYNTH_MAX_BASELINE);
    for (int L = 0; L < s->n; L++)
        if (!(1.0 - baseline * s->surf[L].a > 0.1))
            return fail(err, errlen, "baseline: %g is too wide for this scene's slanted surfaces "
                        "(surface %d: 1 - baseline * %.3f must stay above 0.1)", baseline, L,
                        s->surf[L].a);
    set_time(s, t);
    int view = baseline == 0.0 ? VIEW_LEFT : VIEW_RIGHT;
    set_baseline(s, view == VIEW_LEFT ? 1.0 : baseline);
    for (int y = 0; y < s->p.height; y++) {
        uint8_t *row = out + (size_t)y * pitch;
        render_row(s, view, y, channels == 1 ? row : NULL, channels == 3 ? row : NULL, NULL);
    }
    set_baseline(s, 1.0);
    return 0;
}

/* ---- one-shot render with ground truth ------------------------------------------------------ */

/* The nearest surface whose footprint holds right-image point (xr, v); *u = its u there. */
static int visible_right(const synth *s, double xr, double v, double *u)
{
    for (int L = s->n - 1; L > 0; L--) {
        *u = right_to_u(&s->surf[L], xr, v);
        if (contains(&s->surf[L], *u, v))
            return L;
    }
    *u = right_to_u(&s->surf[0], xr, v);
    return 0;
}

static int visible_left(const synth *s, double u, double v)
{
    for (int L = s->n - 1; L > 0; L--)
        if (contains(&s->surf[L], u, v))
            return L;
    return 0;
}

/* near_edge = edge pixels dilated by r (Chebyshev): a box count over prefix sums, rows then
 * columns (a pixel is near when its (2r+1)^2 neighbourhood holds an edge pixel). */
static void dilate(const uint8_t *edge, uint8_t *out, int W, int H, int r, int *tmp, int *pre)
{
    for (int y = 0; y < H; y++) {
        pre[0] = 0;
        for (int x = 0; x < W; x++)
            pre[x + 1] = pre[x] + (edge[(size_t)y * W + x] != 0);
        for (int x = 0; x < W; x++) {
            int lo = x - r < 0 ? 0 : x - r, hi = x + r + 1 > W ? W : x + r + 1;
            tmp[(size_t)y * W + x] = pre[hi] - pre[lo] > 0;
        }
    }
    for (int x = 0; x < W; x++) {
        pre[0] = 0;
        for (int y = 0; y < H; y++)
            pre[y + 1] = pre[y] + tmp[(size_t)y * W + x];
        for (int y = 0; y < H; y++) {
            int lo = y - r < 0 ? 0 : y - r, hi = y + r + 1 > H ? H : y + r + 1;
            out[(size_t)y * W + x] = pre[hi] - pre[lo] > 0 ? 255 : 0;
        }
    }
}

void synth_free(synth_scene *sc)
{
    if (!sc)
        return;
    image_free(&sc->left_grey), image_free(&sc->right_grey);
    image_free(&sc->left_rgb), image_free(&sc->right_rgb);
    fmap_free(&sc->gt_left), fmap_free(&sc->gt_right);
    image_free(&sc->nonocc), image_free(&sc->near_edge);
    memset(sc, 0, sizeof *sc);
}

int synth_render(const synth_params *p, synth_scene *out, char *err, size_t errlen)
{
    if (!out)
        return fail(err, errlen, "out: NULL");
    memset(out, 0, sizeof *out);
    synth *s;
    if (synth_create(p, &s, err, errlen) != 0)
        return -1;
    int W = p->width, H = p->height;
    size_t np = (size_t)W * (size_t)H;
    uint8_t *id_l = malloc(np), *id_r = malloc(np), *edge = malloc(np), *mixed = malloc((size_t)W);
    int *tmp = malloc(np * sizeof *tmp), *pre = malloc(((size_t)(W > H ? W : H) + 1) * sizeof *pre);
    int status = -1;
    out->gt_left.data = malloc(np * sizeof(float));
    out->gt_right.data = malloc(np * sizeof(float));
    if (!id_l || !id_r || !edge || !mixed || !tmp || !pre || !out->gt_left.data ||
        !out->gt_right.data || image_alloc(&out->left_grey, W, H, 1, 8) != 0 ||
        image_alloc(&out->right_grey, W, H, 1, 8) != 0 ||
        image_alloc(&out->left_rgb, W, H, 3, 8) != 0 ||
        image_alloc(&out->right_rgb, W, H, 3, 8) != 0 ||
        image_alloc(&out->nonocc, W, H, 1, 8) != 0 ||
        image_alloc(&out->near_edge, W, H, 1, 8) != 0) {
        fail(err, errlen, "out of memory for a %dx%d scene", W, H);
        goto done;
    }
    out->gt_left.width = out->gt_right.width = W;
    out->gt_left.height = out->gt_right.height = H;
    set_time(s, p->t);
    set_baseline(s, 1.0);

    /* Ground truth at pixel centres, both views, and the right view's pixels. */
    float *gl = out->gt_left.data, *gr = out->gt_right.data;
    for (int y = 0; y < H; y++) {
        double v = y + 0.5;
        for (int x = 0; x < W; x++) {
            size_t i = (size_t)y * W + x;
            double xc = x + 0.5, u;
            int L = visible_left(s, xc, v);
            id_l[i] = (uint8_t)L;
            gl[i] = (float)disparity_at(&s->surf[L], xc, v);
            int R = visible_right(s, xc, v, &u);
            id_r[i] = (uint8_t)R;
            gr[i] = (float)disparity_at(&s->surf[R], u, v);
        }
        render_row(s, VIEW_RIGHT, y, (uint8_t *)out->right_grey.data + (size_t)y * W,
                   (uint8_t *)out->right_rgb.data + (size_t)y * W * 3, NULL);
    }

    /* Left view; with its sample owners at hand, occlusion per sample point: the point of
     * surface L at (u, v) lands on the right image at x' = u - d(u, v); it is visible there
     * unless x' < 0 or a nearer surface M holds u_M(x'). */
    uint8_t *nonocc = out->nonocc.data;
    for (int y = 0; y < H; y++) {
        render_row(s, VIEW_LEFT, y, (uint8_t *)out->left_grey.data + (size_t)y * W,
                   (uint8_t *)out->left_rgb.data + (size_t)y * W * 3, mixed);
        for (int x = 0; x < W; x++) {
            size_t i = (size_t)y * W + x;
            int visible = 1;
            for (int j = 0; j < SUB && visible; j++) {
                double v = y + (2 * j + 1) * 0.125;
                for (int k = x * SUB; k < (x + 1) * SUB && visible; k++) {
                    int L = s->owner[(size_t)j * W * SUB + k];
                    double us = (double)(2 * k + 1) * 0.125;
                    double xr = us - disparity_at(&s->surf[L], us, v);
                    if (xr < 0)
                        visible = 0;
                    for (int M = s->n - 1; M > L && visible; M--)
                        if (contains(&s->surf[M], right_to_u(&s->surf[M], xr, v), v))
                            visible = 0;
                }
            }
            /* ...and the right pixel holding the match must show the same surface. */
            int xm = x - (int)floor(gl[i] + 0.5);
            if (xm < 0 || id_r[(size_t)y * W + xm] != id_l[i])
                visible = 0;
            nonocc[i] = visible ? 255 : 0;
            /* Edge pixels: mixed, or a 4-neighbour's centre on another surface. */
            edge[i] = mixed[x] || (x > 0 && id_l[i - 1] != id_l[i]) ||
                      (x + 1 < W && id_l[i + 1] != id_l[i]) ||
                      (y > 0 && id_l[i - W] != id_l[i]) || (y + 1 < H && id_l[i + W] != id_l[i]);
        }
    }
    dilate(edge, out->near_edge.data, W, H, p->edge_radius, tmp, pre);

    out->gt_min = INFINITY, out->gt_max = -INFINITY;
    for (size_t i = 0; i < np; i++) {
        float a = gl[i] < gr[i] ? gl[i] : gr[i], b = gl[i] > gr[i] ? gl[i] : gr[i];
        if (a < out->gt_min) out->gt_min = a;
        if (b > out->gt_max) out->gt_max = b;
    }
    status = 0;
done:
    free(id_l);
    free(id_r);
    free(edge);
    free(mixed);
    free(tmp);
    free(pre);
    synth_destroy(s);
    if (status != 0)
        synth_free(out);
    return status;
}
