/* SPDX-License-Identifier: Apache-2.0 */
/* sgm_paths_dump.c — the eight SGM paths' own winners of a pair, for the SGM-Forest prototype
 * (tools/sgm_forest_loso.py). CPU reference only, the default pipeline's stages 1-6 (grey,
 * census, adcensus cost with its grey mapping, aggregation, winner-takes-all), no rectification,
 * minimum disparity 0.
 *
 *   sgm_paths_dump [-d D] [--p1 N] [--p2 N] [--p2-adapt T] LEFT RIGHT OUT.bin
 *   sgm_paths_dump --finish W H LEFT.i16 RIGHT.i16 OUT.pfm
 *
 * The first form writes OUT.bin: the 8 bytes "SGMPATHS", then int32 w, h, D, n (planes), then n
 * planes of w * h int32 values, top row first:
 *   0  the SGM sum's left disparity (16ths, STEREO_INVALID = -32768), as stage 6 leaves it
 *      (subpixel, before the median and the LR check)
 *   1  the right disparity of the same sum (stage 7, before the median)
 *   2  S(k*), the sum at its winner k*
 *   3  C(k*), the matching cost at k*
 *   then for each direction r = 0..7 (sgm.h's order) six planes, at 4 + 6 r:
 *   +0 k_r = argmin_k L_r(p, k) (ties to the smaller k)
 *   +1 L_r(p, k_r)
 *   +2 L_r(p, k*)
 *   +3 S(p, k_r)
 *   +4 16 k_r + stereo_subpixel_offset(S(k_r - 1), S(k_r), S(k_r + 1)) (0 < k_r < D - 1; else
 *      16 k_r; the offset clamped to +-8, S need not be least at k_r): k_r with the sum's
 *      parabola, the way stage 6 refines k*
 *   +5 C(p, k_r)
 *   52 k* itself
 *   53 s2 = min S(k) over |k - k*| > 1 (stage 6's uniqueness second best; S(k*) when D < 4)
 * Each direction's L comes from sgm_aggregate_sweep with that direction's weight 1 and the
 * others 0 (per_dir), one direction at a time into one volume, so memory stays at the cost
 * volume plus two uint16 volumes whatever the number of paths.
 *
 * The second form finishes a left map as the default pipeline does, but with no uniqueness
 * test (stereo-match --uniqueness 0): the 3x3 median of the left and of the right map (int16
 * files of W * H values, 16ths), then the LR check (tolerance 1), written as stereo-match
 * writes a .pfm (+inf = invalid).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/disparity.h"
#include "../gpu/grey.h"
#include "../gpu/parse_num.h"
#include "../gpu/sgm.h"
#include "../gpu/stereo.h"
#include "../gpu/stereo_math.h"
#include "../gpu/transform.h"
#include "../hal/image_io.h"
#include "../hal/outpath.h"

#define USAGE                                                                                  \
    "usage: sgm_paths_dump [-d D] [--p1 N] [--p2 N] [--p2-adapt T] LEFT RIGHT OUT.bin\n"        \
    "       sgm_paths_dump --finish W H LEFT.i16 RIGHT.i16 OUT.pfm\n"

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "sgm_paths_dump: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

/* The file's n int16 values, or NULL (said on stderr) unless it holds exactly that many. */
static int16_t *read_i16(const char *path, size_t n)
{
    int16_t *d = xmalloc(n * sizeof *d);
    FILE *f = fopen(path, "rb");
    int extra = 0;
    if (!f || fread(d, sizeof *d, n, f) != n || (extra = fgetc(f) != EOF)) {
        fprintf(stderr, "sgm_paths_dump: %s: %s\n", path,
                !f ? "cannot open" : extra ? "holds more than W x H int16 values"
                                           : "holds fewer than W x H int16 values");
        if (f)
            fclose(f);
        free(d);
        return NULL;
    }
    fclose(f);
    return d;
}

static int finish(char **argv)
{
    int w, h;
    char err[512];
    if (parse_int_arg("W", argv[2], 1, STEREO_MAX_SIDE, &w, err, sizeof err) ||
        parse_int_arg("H", argv[3], 1, STEREO_MAX_SIDE, &h, err, sizeof err)) {
        fprintf(stderr, "sgm_paths_dump: --finish %s\n", err);
        return 2;
    }
    size_t n = (size_t)w * h;
    int16_t *l = read_i16(argv[4], n), *r = l ? read_i16(argv[5], n) : NULL;
    if (!r) {
        free(l);
        return 1;
    }
    const char *out = argv[6];
    int16_t *lm = xmalloc(n * sizeof *lm), *rm = xmalloc(n * sizeof *rm);
    median3x3_rows(l, w, h, lm, 0, h);
    median3x3_rows(r, w, h, rm, 0, h);
    lr_check_rows(lm, rm, w, 1, 0, h); /* tolerance in pixels */
    if (disparity_write(out, lm, w, h, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    free(l), free(r), free(lm), free(rm);
    return 0;
}

static void grey_of(const image *im, uint8_t *out)
{
    stereo_image s = {im->data, im->width, im->height, (size_t)im->width * im->channels,
                      im->channels == 3 ? STEREO_PIX_RGB24 : STEREO_PIX_GREY8};
    grey_convert_rows(&s, out, 0, im->height);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--finish")) {
        if (argc != 7) {
            fprintf(stderr, USAGE);
            return 2;
        }
        return finish(argv);
    }
    int D = 64, p1 = -1, p2 = -1, p2_adapt = -1, a = 1;
    char err[512];
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        const char *o = argv[a], *v = argv[a + 1];
        int bad = !strcmp(o, "-d")           ? parse_int_arg(o, v, 16, 256, &D, err, sizeof err)
                  : !strcmp(o, "--p1")       ? parse_int_arg(o, v, 1, 1022, &p1, err, sizeof err)
                  : !strcmp(o, "--p2")       ? parse_int_arg(o, v, 2, 1023, &p2, err, sizeof err)
                  : !strcmp(o, "--p2-adapt") ? parse_int_arg(o, v, 0, 255, &p2_adapt, err,
                                                             sizeof err)
                                             : (snprintf(err, sizeof err, "%s: unknown option", o), 1);
        if (bad) {
            fprintf(stderr, "sgm_paths_dump: %s\n", err);
            return 2;
        }
    }
    if (argc - a != 3) {
        fprintf(stderr, USAGE);
        return 2;
    }
    image im[2];
    for (int v = 0; v < 2; v++)
        if (image_read8(argv[a + v], &im[v], err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    const int w = im[0].width, h = im[0].height;
    if (im[1].width != w || im[1].height != h) {
        fprintf(stderr, "sgm_paths_dump: the views differ in size\n");
        return 1;
    }
    stereo_params p;
    stereo_params_default(&p, w, h);
    p.num_disparities = D;
    if (p1 > 0)
        p.p1 = p1;
    if (p2 > 0)
        p.p2 = p2;
    if (p2_adapt >= 0)
        p.p2_adapt = p2_adapt;
    p.backend = STEREO_BACKEND_CPU;
    if (stereo_params_check(&p, err, sizeof err) != STEREO_OK) {
        fprintf(stderr, "sgm_paths_dump: %s\n", err);
        return 2;
    }
    const size_t n = (size_t)w * h, vol = n * D;
    uint8_t *grey[2];
    uint64_t *census[2];
    for (int v = 0; v < 2; v++) {
        grey[v] = xmalloc(n);
        grey_of(&im[v], grey[v]);
        census[v] = xmalloc(n * sizeof(uint64_t));
        census_transform_rows(grey[v], w, h, census[v], 0, h);
        image_free(&im[v]);
    }
    uint8_t lut[256];
    {
        uint32_t hl[256] = {0}, hr[256] = {0};
        for (size_t i = 0; i < n; i++)
            hl[grey[0][i]]++, hr[grey[1][i]]++;
        stereo_grey_match_lut(hl, hr, lut);
    }
    sgm_config c = {.width = w, .height = h, .dmin = 0, .ndisp = D, .p1 = p.p1, .p2 = p.p2,
                    .p2_adapt = p.p2_adapt, .max_cost = stereo_max_cost(&p), .per_dir = 1};
    for (int r = 0; r < 8; r++) {
        stereo_path_penalties(&p, r, &c.dir_p1[r], &c.dir_p2[r]);
        c.dir_weight[r] = 1;
    }
    uint8_t *cost = xmalloc(vol);
    sgm_cost_adcensus_rows(&c, census[0], census[1], grey[0], grey[1], lut, p.ad_weight, cost, 0,
                           h);
    uint16_t *S = xmalloc(vol * sizeof *S), *L = xmalloc(vol * sizeof *L);
    void *scratch = xmalloc(sgm_sweep_scratch_size(&c));
    sgm_aggregate_sweep(&c, 0, 8, cost, grey[0], S, scratch, NULL);
    sgm_aggregate_sweep(&c, 1, 8, cost, grey[0], L, scratch, NULL);
    for (size_t i = 0; i < vol; i++)
        S[i] = (uint16_t)(S[i] + L[i]);

    const int planes = 4 + 6 * 8 + 2;
    int32_t *out = xmalloc((size_t)planes * n * sizeof *out);
    int16_t *dl = xmalloc(n * sizeof *dl), *dr = xmalloc(n * sizeof *dr);
    wta_config wc = {w, h, 0, D, 0, p.subpixel};
    disparity_wta_rows(&wc, S, NULL, NULL, dl, NULL, 0, h);
    disparity_right_rows(&wc, S, NULL, NULL, dr, 0, h);
    int *kstar = xmalloc(n * sizeof *kstar);
    for (size_t i = 0; i < n; i++) {
        const uint16_t *s = S + i * D;
        int best = 0;
        for (int k = 1; k < D; k++)
            if (s[k] < s[best])
                best = k;
        kstar[i] = best;
        out[(size_t)52 * n + i] = best;
        int s2 = s[best];
        for (int k = 0, first = 1; k < D; k++)
            if ((k < best - 1 || k > best + 1) && (first || s[k] < s2))
                s2 = s[k], first = 0;
        out[(size_t)53 * n + i] = s2;
        out[0 * n + i] = dl[i];
        out[1 * n + i] = dr[i];
        out[2 * n + i] = s[best];
        out[3 * n + i] = cost[i * D + best];
    }
    for (int r = 0; r < 8; r++) {
        sgm_config one = c;
        for (int q = 0; q < 8; q++)
            one.dir_weight[q] = q == r;
        const int backward = r == 1 || r == 3 || r == 6 || r == 7;
        sgm_aggregate_sweep(&one, backward, 8, cost, grey[0], L, scratch, NULL);
        int32_t *o = out + (size_t)(4 + 6 * r) * n;
        for (size_t i = 0; i < n; i++) {
            const uint16_t *l = L + i * D, *s = S + i * D;
            int best = 0;
            for (int k = 1; k < D; k++)
                if (l[k] < l[best])
                    best = k;
            int v = STEREO_SUBPIXEL_SCALE * best;
            if (p.subpixel && best > 0 && best < D - 1) { /* S need not be least at k_r */
                int off = stereo_subpixel_offset(s[best - 1], s[best], s[best + 1]);
                v += off < -8 ? -8 : off > 8 ? 8 : off;
            }
            o[0 * n + i] = best;
            o[1 * n + i] = l[best];
            o[2 * n + i] = l[kstar[i]];
            o[3 * n + i] = s[best];
            o[4 * n + i] = v;
            o[5 * n + i] = cost[i * D + best];
        }
    }
    /* the header before the planes, in place (written whole or not at all) */
    const size_t bytes = 24 + (size_t)planes * n * sizeof *out;
    uint8_t *file = xmalloc(bytes);
    const int32_t head[4] = {w, h, D, planes};
    memcpy(file, "SGMPATHS", 8);
    memcpy(file + 8, head, sizeof head);
    memcpy(file + 24, out, bytes - 24);
    if (atomic_write_bytes(argv[a + 2], file, bytes, err, sizeof err)) {
        fprintf(stderr, "sgm_paths_dump: %s\n", err);
        return 1;
    }
    return 0;
}
