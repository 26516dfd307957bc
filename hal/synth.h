/* SPDX-License-Identifier: Apache-2.0 */
/* synth.h — a generated rectified stereo scene with exactly known geometry.
 *
 * Purpose: ground truth for testing matchers (every disparity, occlusion and depth edge is known
 * analytically) and an animated source for the live demo (time t moves the occluders).
 *
 * Convention (as everywhere in this project): a left pixel (x, y) with disparity d matches the
 * right pixel (x - d, y); rows are epipolar lines. Pixel (x, y) covers [x, x+1) x [y, y+1), its
 * centre is (x + 0.5, y + 0.5).
 *
 * Three layouts (synth_params.layout), each painted far to near (painter's order; a nearer surface
 * has the larger disparity wherever two overlap). D = max_disparity; positions are fractions of
 * the image size, so every size shows the same scene.
 *
 * The objects layout (SYNTH_LAYOUT_OBJECTS, the default):
 *   background    slanted plane covering everything, d = a*x + b*y + c in left coordinates,
 *                 D/6 at the top-left corner .. 5D/12 at the bottom-right (non-integer)
 *   flat panel    rectangle, fronto-parallel, d = round(D/2)        (integer)
 *   slanted panel rectangle, d from 7D/12 (top-left) to 3D/4 (bottom-right corner)
 *   occluders     two discs at d = round(5D/6), a disc and a rectangle at d = D (integers);
 *                 they move smoothly with t (t = 0 is the static test scene)
 * At D = 48 (the default for 640x480): background 8..20, panel 24, slanted 28..36, occluders 40
 * and 48. Every ground-truth disparity lies in [D/6, D].
 *
 * The street layout (SYNTH_LAYOUT_STREET; static: t moves nothing), with ds = round(D/16) (at
 * least 1) and the horizon at row yh = 0.4 height:
 *   sky           fronto-parallel plane covering everything, d = ds (integer); a smooth vertical
 *                 grey gradient (brighter toward the horizon) under thin low-contrast clouds
 *                 (value noise, 64 to 8 px, a few grey levels) and a faint haze of noise
 *   ground        the plane below the horizon, d = ds + (D - ds) (v - yh) / (height - yh): a
 *                 function of the row only, ds at the horizon, D at the bottom edge (non-integer);
 *                 weak asphalt texture (fine noise, about 8 grey levels) and four bright lane
 *                 markings (two dashed) converging to the vanishing point (width/2, yh)
 *   facades       one at each side, 22 % of the width, slanted in x: d = D/8 at the inner edge
 *                 rising to D/2 at the image border (the right one goes on D/2 px past it, for
 *                 the right view); the bottom edge is where the ground has the facade's
 *                 disparity (the facade stands on the ground), the top 0.1 height above the
 *                 image at the border; wall texture with rows and columns of windows
 *   cars          three fronto-parallel rectangles standing on the road, each at the ground's
 *                 disparity of its bottom row (rounded to an integer, the bottom row placed
 *                 where the ground has exactly that disparity), about 0.41 D, 0.66 D and 0.88 D,
 *                 sized in proportion to their disparity, with the objects' texture
 * At D = 96, 640x360: sky 6, ground 6..96, facades 12..48, cars 39, 63 and 84. Every
 * ground-truth disparity lies in [ds, D]: D/16 rounded, less than the objects' D/6.
 *
 * The facade layout (SYNTH_LAYOUT_FACADE; static), repeated structure and thin objects: the
 * street's sky and ground (the horizon at 0.45 height), then
 *   facade        one vertical wall standing on the ground along the whole width, receding to
 *                 the right: d = 0.6 D at the left border to 0.2 D at the right one (on past it
 *                 by D px for the right view), its top 0.06 height below the top row at the
 *                 left border and lower to the right in proportion to d; a weakly textured
 *                 render (about 5 grey levels) with identical dark windows on a regular grid,
 *                 7 floors, the columns D/5 px apart at the left border (within the search
 *                 range every window has neighbours one and two columns away) and nine times
 *                 closer at the far end
 *   poles         three fronto-parallel rectangles standing on the ground (rows 0.72, 0.83 and
 *                 0.95 height, rounded to an integer disparity), 0.55 height tall at d = D and
 *                 0.01 width wide (at least 2 px), nearly uniform grey
 * At D = 96, 640x360: sky 6, ground 6..96, facade 19..58, poles about 61, 77 and 93.
 *
 * In every layout a matcher searching 0..D (D + 1 levels, min_disparity 0) covers the scene;
 * synth_max_disparity() gives D.
 *
 * Texture: each surface carries its own non-periodic procedural texture (value noise over five
 * octaves from 2 to 32 px plus hard-edged dark/bright blobs and bars) fixed to the surface: a
 * surface point has texture coordinates (u, v) = its left-image position at t = 0. The texture is
 * piecewise constant on a 1-px lattice in (u, v), and a pixel's value is the exact mean of the
 * texture over the pixel's footprint on the surface (box filter, analytic), so:
 *   - a fronto-parallel surface with integer disparity k gives right(x - k, y) == left(x, y)
 *     bit for bit wherever the pixel sees only that surface in both views;
 *   - on a slanted surface the right pixel [x', x'+1) maps to u in [u(x'), u(x'+1)) with
 *     u(x') = (x' + b*v + c) / (1 - a), the exact solution of u - d(u, v) = x'; the footprint's
 *     shear over the pixel height, b/(1-a) px, is ignored (v is taken at the pixel's centre row;
 *     |b/(1-a)| < 0.17*D/height px: 0.017 px at 640x480). The street's ground has a steep b,
 *     (D - ds) / (0.6 height): its right-view footprint is followed in 4 sub-rows, each mapped at
 *     its centre row, so the shear ignored is b/4 < 0.42*D/height px per sub-row (0.11 px at
 *     D 96, 360 high); its left view, and the facades (b = 0), are exact.
 * Pixels straddling a surface boundary are resolved on a 4x4 grid of sub-cells (coverage).
 * Grey values use most of 0..255 (objects layout); the RGB views are the grey value times a
 * per-surface tint. contrast C scales every texture about its own mean grey m:
 * m + C (value - m), applied to the exact pixel mean (so integer shifts stay exact).
 *
 * Camera effects (all off by default; none changes the ground truth), applied to each exact
 * pixel value v (grey, and each RGB channel alike) in this order, before rounding to 8 bits:
 *   vignetting    both views: v * max(0, 1 - V (r/rmax)^2), r the distance of the pixel centre from
 *                 the view's centre, (0.52 width, height/2) in the left view and (0.48 width,
 *                 height/2) in the right one (and every other view), rmax half the image
 *                 diagonal; the centres differ so no single intensity map explains both views
 *   response      the right view only (baseline 1): v -> 255 * (max(0, G v + O) / 255)^Y, G =
 *                 right_gain, O = right_offset, Y = right_gamma
 *   noise         v + sigma * n, n a standard Gaussian (Box-Muller) from a counter-based hash
 *                 of (seed, view, x, y): independent per pixel and view, the same n for the grey
 *                 value and the three channels of one pixel, fixed for a given seed
 * then rounded and clamped to 0..255. With the effects on, the integer-shift promise above
 * holds for the exact values, not for the 8-bit pixels.
 *
 * Library code: never exits; every call that can fail returns 0 on success and -1 with a
 * one-line message in err ("synth: <name>: <what is wrong>").
 */
#ifndef STEREO_SYNTH_H
#define STEREO_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "image_io.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNTH_MIN_SIZE 32     /* width and height at least this */
#define SYNTH_MAX_SIZE 4096   /* width and height at most this */
#define SYNTH_MIN_DISPARITY 8 /* smallest D that keeps the surfaces' depth order strict */
#define SYNTH_MAX_BASELINE 4  /* synth_render_view: baseline ratios in -4..4 */
#define SYNTH_MIN_CONTRAST 0.02

enum { SYNTH_LAYOUT_OBJECTS = 0, SYNTH_LAYOUT_STREET = 1, SYNTH_LAYOUT_FACADE = 2 };

typedef struct {
    int width, height;  /* SYNTH_MIN_SIZE..SYNTH_MAX_SIZE */
    double t;           /* seconds; moves the occluders (synth_render only; see synth_render_views) */
    unsigned seed;      /* selects the textures; the geometry does not depend on it */
    int max_disparity;  /* D, the nearest occluder's disparity: 0 = default, a multiple of 12
                           near width/12 (48 at 640 wide); else SYNTH_MIN_DISPARITY..width/2 */
    int edge_radius;    /* near_edge marks pixels within this many pixels (Chebyshev) of a
                           depth edge; 0..64 (0 = only the edge pixels themselves) */
    /* Every field below is off when zero (a zeroed struct renders the objects scene above). */
    int layout;          /* SYNTH_LAYOUT_OBJECTS (0), SYNTH_LAYOUT_STREET or SYNTH_LAYOUT_FACADE */
    double contrast;     /* texture contrast about each texture's mean: 0 = 1 (full), else
                            SYNTH_MIN_CONTRAST..1 */
    double right_gain;   /* right camera's response (see above): 0 = 1, else 0.25..4 */
    double right_offset; /* grey levels, -128..128 */
    double right_gamma;  /* 0 = 1, else 0.25..4 */
    double vignette;     /* V, 0..0.9 */
    double noise;        /* sigma of the Gaussian sensor noise in grey levels, 0..32 */
} synth_params;

/* Everything synth_render produces, each width x height. */
typedef struct {
    image left_grey, right_grey; /* 8-bit, 1 channel: what tests and matchers use */
    image left_rgb, right_rgb;   /* 8-bit, 3 channels: grey times the surface's tint */
    fmap gt_left;   /* disparity of the surface seen at each left pixel's centre */
    fmap gt_right;  /* the same for the right view (right pixel x' sees that point at x' + d) */
    image nonocc;   /* left view, 255 = visible in both views, 0 = occluded; 255 requires every
                       sample point of the pixel (4x4 grid) to be visible in the right view (not
                       hidden by a nearer surface, x - d >= 0) and the right pixel
                       x - round(d) to show the same surface at its centre — conservative by up
                       to one pixel at occlusion boundaries, so no evaluated pixel straddles one */
    image near_edge; /* left view, 255 = within edge_radius of a depth edge, else 0. Edge pixels:
                       those whose samples see more than one surface, or whose centre's surface
                       differs from a 4-neighbour's (every surface boundary is a depth jump) */
    float gt_min, gt_max; /* range of gt_left and gt_right together */
} synth_scene;

/* The layouts' names ("objects", "street", "facade"): the layout a name gives, or -1; and the
 * name of a layout ("?" for none). The programs' --layout options take them. */
int synth_layout_from_name(const char *name);
const char *synth_layout_name(int layout);

/* The D that p resolves to (the default applied), or -1 when p is invalid. */
int synth_max_disparity(const synth_params *p);

/* Checks every field; on failure writes "synth: name: what is wrong" into err. */
int synth_params_check(const synth_params *p, char *err, size_t errlen);

/* One-shot: renders both views in grey and RGB at time p->t with full ground truth. Allocates
 * every field of out (free with synth_free); on failure out is left empty. Builds the textures
 * and the ground truth each call (~0.1 s at 640x480): use a synth handle for frames. */
int synth_render(const synth_params *p, synth_scene *out, char *err, size_t errlen);
void synth_free(synth_scene *s);

/* For animation: the handle holds the textures and all scratch memory, so rendering a frame
 * allocates nothing. One frame at a time per handle (the scratch is shared). */
typedef struct synth synth;
int synth_create(const synth_params *p, synth **out, char *err, size_t errlen);
void synth_destroy(synth *s);

/* Renders the two views at time t (seconds; p->t is not used) into caller buffers of
 * width x height pixels, `pitch` bytes between rows (>= width * channels); channels 1 = grey,
 * 3 = RGB. Same pixels as synth_render at that t. */
int synth_render_views(synth *s, double t, uint8_t *left, uint8_t *right, int channels,
                       size_t pitch, char *err, size_t errlen);

/* More views of the same scene (multi-baseline matching, stereo.h): the view whose camera sits
 * at baseline ratio `baseline` times the left-right baseline along the same line, rectified to
 * the same image plane: the point the left view sees at x with disparity d is at
 * x - baseline * d there (0: the left view, 1: the right view, bit for bit as
 * synth_render_views; negative: left of the left camera). |baseline| <= SYNTH_MAX_BASELINE.
 * Same pixel model (exact texture means, 4x4 coverage at surface boundaries); the ground truth
 * of the left view (gt_left of synth_render) holds for every view: d is against the right view. */
/* Views at other baselines get the right view's vignetting and their own noise, not the right
 * camera's response; a baseline at which a slanted surface would fold (1 - baseline * its x slope
 * at most 0.1: the street's facades at large D and |baseline|) is refused. */
int synth_render_view(synth *s, double t, double baseline, uint8_t *out, int channels,
                      size_t pitch, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
