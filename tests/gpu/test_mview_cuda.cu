/* SPDX-License-Identifier: Apache-2.0 */
/* test_mview_cuda.cu — the multi-view matching cost on the GPU (gpu/multiview.cu,
 * launch_mview_cost) against the CPU reference (gpu/multiview.c: mview_cost_rows, then for the
 * sides rule mview_select_rows), bit for bit (runs on a GPU machine):
 *
 *   build/gpu/test-mview-cuda
 *
 * Each case builds random view images for one cost (rank values of a 9 x 9 window, census
 * words, grey values for ad and bt, census words and grey values for adcensus) with some
 * structure: every other view is the reference seen
 * at a piecewise constant true disparity, with noise, and in stripes one side's views see
 * something else (an occlusion), so that the sides rule really picks a side at some voxels (the
 * test counts them and requires some for every cost). It runs the CPU reference on all rows and
 * launch_mview_cost on device buffers of exactly w * h (views) and w * h * D (volumes) bytes,
 * filled with garbage first, and compares the cost volume byte for byte; for the sides rule also
 * the two sides' means that the first kernel leaves in pos / neg, so that a failure names the
 * kernel that broke. The sum rule gets NULL for pos and neg. adcensus: each other view's grey
 * values pass through a response of its own (gain and offset), its grey mapping comes from
 * launch_grey_match on the device (compared with stereo_grey_match_lut of the host's histograms
 * first), and the weight varies from case to case (1..16). Cases: costs rank, census, ad, bt,
 * adcensus; rules sides and sum; 3, 4 and 8 views with baselines 1,-1 / 1,2,-1 / 1,0.5,-2.5
 * and random ones (16ths, distinct, not 0, within +-8); sizes 333x217, 64x48, 31x7, 640x1, 7x40; D
 * 16, 64, 128; dmin 0 and 13. Then the launcher's refusals.
 *
 * Needs only libc and CUDA: one line per failure and a closing "N passed, N failed" line;
 * exits non-zero on any failure.
 */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.cuh"
#include "multiview.h"
#include "sgm.h"
#include "stereo_math.h"
#include "transform.h"

#include "check.h"

static const stereo_cost costs[] = {STEREO_COST_RANK, STEREO_COST_CENSUS, STEREO_COST_AD,
                                    STEREO_COST_BT, STEREO_COST_ADCENSUS};
static const char *const cost_names[] = {"rank", "census", "ad", "bt", "adcensus"};
#define NCOSTS 5
#define RANK_MAX_COST 80 /* a 9 x 9 window's rank values 0..80 */

/* per cost: voxels where the sides rule took the positive / the negative side alone */
static long picked_pos[NCOSTS], picked_neg[NCOSTS];

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return n;
}

/* the views' structure: the true disparity of reference pixel (x, y), piecewise constant in
 * 16 x 16 tiles, within dmin .. dmin + D - 1 */
static int true_disparity(int x, int y, int dmin, int D)
{
    return dmin + D * (1 + (x / 16 + 2 * (y / 16)) % 3) / 4;
}

/* does side s (0: b > 0, 1: b < 0) see reference pixel (x, y)? Stripes of it do not. */
static int occluded(int x, int y, int s)
{
    return (x / 7 + y / 5 + 2 * s) % 4 == 0;
}

/* Fills view v's image (values vals or census words bits; adcensus both) of a w x h case: the
 * reference's pixel at the true disparity, with a little noise, where the view sees it; else
 * random. adcensus: view v > 0's grey values then pass through its response (gain and offset). */
static void make_view(int ci, int v, int bq, int w, int h, int dmin, int D, uint8_t *const *vals,
                      uint64_t *const *bits)
{
    for (int y = 0; y < h; y++)
        for (int xv = 0; xv < w; xv++) {
            const size_t i = (size_t)y * w + xv;
            /* the reference pixel x whose point view v sees at xv: xv = x - b d, taking d at xv */
            int x = xv + (bq * true_disparity(xv, y, dmin, D) + 8) / 16;
            int seen = v == 0 || (x >= 0 && x < w && !occluded(x, y, bq < 0));
            const size_t j = (size_t)y * w + (v == 0 ? xv : x);
            if (stereo_cost_has_census(costs[ci])) {
                uint64_t r = ((uint64_t)rnd() << 32 | rnd()) & ((1ull << CENSUS_BITS) - 1);
                bits[v][i] = v == 0 || !seen ? r : bits[0][j] ^ (1ull << (rnd() % CENSUS_BITS));
            }
            if (costs[ci] == STEREO_COST_RANK) {
                int r = (int)(rnd() % (RANK_MAX_COST + 1));
                if (v > 0 && seen) {
                    r = vals[0][j] + (int)(rnd() % 3) - 1;
                    r = r < 0 ? 0 : r > RANK_MAX_COST ? RANK_MAX_COST : r;
                }
                vals[v][i] = (uint8_t)r;
            } else if (costs[ci] != STEREO_COST_CENSUS) { /* grey values */
                int r = (int)(rnd() & 255);
                if (v > 0 && seen) {
                    r = vals[0][j] + (int)(rnd() % 5) - 2;
                    r = r < 0 ? 0 : r > 255 ? 255 : r;
                }
                vals[v][i] = (uint8_t)r;
            }
        }
    if (costs[ci] == STEREO_COST_ADCENSUS && v > 0) /* the view's response: gain, offset */
        for (size_t i = 0; i < (size_t)w * h; i++) {
            int g = vals[v][i] * (16 - (v % 4)) / 16 + 5 * (v % 3) - 4;
            vals[v][i] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
        }
}

static void run_case(int w, int h, int D, int dmin, int ci, stereo_combine combine, int views,
                     const int *baseline)
{
    char what[200];
    int len = snprintf(what, sizeof what, "%dx%d D%d dmin%d %s %s views%d bq", w, h, D, dmin,
                       cost_names[ci], stereo_combine_to_str(combine), views);
    for (int v = 1; v < views && len < (int)sizeof what; v++)
        len += snprintf(what + len, sizeof what - len, "%s%d", v > 1 ? "," : " ", baseline[v]);
    const stereo_cost cost = costs[ci];
    const int census = stereo_cost_has_census(cost), sides = combine == STEREO_COMBINE_SIDES;
    const int adcensus = cost == STEREO_COST_ADCENSUS;
    /* adcensus: the weight varies from case to case over 1..16 */
    const int ad_weight = 1 + (w + 3 * D + dmin + 5 * views + 7 * (int)combine) % 16;
    if (adcensus && len < (int)sizeof what)
        snprintf(what + len, sizeof what - len, " weight %d", ad_weight);
    const int max_cost = cost == STEREO_COST_RANK ? RANK_MAX_COST
                         : census                 ? CENSUS_BITS
                                                  : STEREO_GREY_COST_MAX;
    const size_t n = (size_t)w * h, vol = n * D;
    uint8_t *vals[STEREO_MAX_VIEWS] = {0};
    uint64_t *bits[STEREO_MAX_VIEWS] = {0};
    uint8_t *d_vals[STEREO_MAX_VIEWS] = {0};
    uint64_t *d_bits[STEREO_MAX_VIEWS] = {0};
    uint8_t *cost_c = (uint8_t *)malloc(vol), *sum_c = (uint8_t *)malloc(vol);
    uint8_t *pos_c = (uint8_t *)malloc(vol), *neg_c = (uint8_t *)malloc(vol);
    uint8_t *cost_g = (uint8_t *)malloc(vol), *pos_g = (uint8_t *)malloc(vol);
    uint8_t *neg_g = (uint8_t *)malloc(vol);
    uint8_t *d_cost = NULL, *d_pos = NULL, *d_neg = NULL, *d_lut = NULL;
    uint32_t *d_hist = NULL;
    static uint8_t lut[STEREO_MAX_VIEWS][256]; /* adcensus: view v's grey mapping (host) */
    for (int v = 0; v < views; v++) {
        vals[v] = (uint8_t *)malloc(n);
        bits[v] = (uint64_t *)malloc(n * 8);
    }
    for (int v = 0; v < views; v++)
        make_view(ci, v, baseline[v], w, h, dmin, D, vals, bits);
    for (int v = 1; v < views && adcensus; v++) { /* stereo_grey_match_lut of views 0 and v */
        uint32_t hist[512] = {0};
        for (size_t i = 0; i < n; i++)
            hist[vals[0][i]]++, hist[256 + vals[v][i]]++;
        stereo_grey_match_lut(hist, hist + 256, lut[v]);
    }

    /* the CPU reference: the sum rule's volume and the sides' means, then the selection */
    {
        sgm_config c;
        memset(&c, 0, sizeof c);
        c.width = w, c.height = h, c.dmin = dmin, c.ndisp = D, c.max_cost = max_cost;
        mview_config m = {&c, cost, views, baseline, combine, (const uint8_t *const *)vals,
                          (const uint64_t *const *)bits, (const uint8_t *const *)vals,
                          (const uint8_t(*)[256])lut, ad_weight};
        mview_cost_rows(&m, cost_c, sides ? pos_c : NULL, sides ? neg_c : NULL, 0, h);
        if (sides) {
            memcpy(sum_c, cost_c, vol);
            mview_select_rows(&m, pos_c, neg_c, cost_c, 0, h);
            for (size_t i = 0; i < vol; i++)
                if (cost_c[i] != sum_c[i]) {
                    picked_pos[ci] += cost_c[i] == pos_c[i] && cost_c[i] != neg_c[i];
                    picked_neg[ci] += cost_c[i] == neg_c[i] && cost_c[i] != pos_c[i];
                }
        }
    }

    /* the GPU: views of exactly w * h pixels, volumes of w * h * D bytes, garbage first */
    {
        mview_args a;
        memset(&a, 0, sizeof a);
        a.width = w, a.height = h, a.dmin = dmin, a.ndisp = D, a.max_cost = max_cost;
        a.cost = cost, a.views = views, a.combine = combine, a.ad_weight = ad_weight;
        for (int v = 0; v < views; v++) {
            a.baseline[v] = baseline[v];
            if (census) {
                TRY(cudaMalloc((void **)&d_bits[v], n * 8));
                TRY(cudaMemcpy(d_bits[v], bits[v], n * 8, cudaMemcpyHostToDevice));
                a.bits[v] = d_bits[v];
            }
            if (cost != STEREO_COST_CENSUS) {
                TRY(cudaMalloc((void **)&d_vals[v], n));
                TRY(cudaMemcpy(d_vals[v], vals[v], n, cudaMemcpyHostToDevice));
                a.vals[v] = d_vals[v];
                if (cost == STEREO_COST_BT)
                    a.grey[v] = d_vals[v];
            }
        }
        if (adcensus) { /* each view's mapping on the device, as the stage computes it */
            TRY(cudaMalloc((void **)&d_hist, 512 * sizeof(uint32_t)));
            TRY(cudaMalloc((void **)&d_lut, 256 * (size_t)views));
            TRY(cudaMemset(d_lut, 0x77, 256 * (size_t)views));
            for (int v = 1; v < views; v++) {
                uint8_t got[256];
                TRY(launch_grey_match(d_vals[0], d_vals[v], n, 2, d_hist, d_lut + 256 * v, 0));
                TRY(cudaMemcpy(got, d_lut + 256 * v, 256, cudaMemcpyDeviceToHost));
                size_t d = first_diff(lut[v], got, 256);
                check(d == 256, "%s: view %d's grey mapping differs at level %d: cpu %d cuda %d",
                      what, v, (int)d, d < 256 ? lut[v][d] : 0, d < 256 ? got[d] : 0);
                a.ad_lut[v] = d_lut + 256 * v;
            }
        }
        TRY(cudaMalloc((void **)&d_cost, vol));
        TRY(cudaMemset(d_cost, 0xa5, vol));
        if (sides) {
            TRY(cudaMalloc((void **)&d_pos, vol));
            TRY(cudaMalloc((void **)&d_neg, vol));
            TRY(cudaMemset(d_pos, 0x5a, vol));
            TRY(cudaMemset(d_neg, 0x3c, vol));
        }
        TRY(launch_mview_cost(&a, d_cost, d_pos, d_neg, 0));
        TRY(cudaDeviceSynchronize());
        TRY(cudaMemcpy(cost_g, d_cost, vol, cudaMemcpyDeviceToHost));
        if (sides) {
            TRY(cudaMemcpy(pos_g, d_pos, vol, cudaMemcpyDeviceToHost));
            TRY(cudaMemcpy(neg_g, d_neg, vol, cudaMemcpyDeviceToHost));
        }
    }
    if (sides) {
        size_t d = first_diff(pos_c, pos_g, vol);
        check(d == vol, "%s: first kernel: positive side's mean differs at x %d y %d k %d: "
              "cpu %d cuda %d", what, (int)(d / D % w), (int)(d / D / w), (int)(d % D),
              d < vol ? pos_c[d] : 0, d < vol ? pos_g[d] : 0);
        d = first_diff(neg_c, neg_g, vol);
        check(d == vol, "%s: first kernel: negative side's mean differs at x %d y %d k %d: "
              "cpu %d cuda %d", what, (int)(d / D % w), (int)(d / D / w), (int)(d % D),
              d < vol ? neg_c[d] : 0, d < vol ? neg_g[d] : 0);
    }
    {
        size_t d = first_diff(cost_c, cost_g, vol);
        check(d == vol, "%s: cost volume differs at x %d y %d k %d: cpu %d cuda %d", what,
              (int)(d / D % w), (int)(d / D / w), (int)(d % D), d < vol ? cost_c[d] : 0,
              d < vol ? cost_g[d] : 0);
    }
done:
    for (int v = 0; v < views; v++) {
        cudaFree(d_vals[v]), cudaFree(d_bits[v]);
        free(vals[v]), free(bits[v]);
    }
    cudaFree(d_cost), cudaFree(d_pos), cudaFree(d_neg), cudaFree(d_lut), cudaFree(d_hist);
    free(cost_c), free(sum_c), free(pos_c), free(neg_c), free(cost_g), free(pos_g), free(neg_g);
}

/* The launcher's refusals. The base arguments (real device buffers) must be accepted, so that
 * each refusal below is of the one thing it changes. */
static void refusals(void)
{
    const char *what = "refusals";
    const int w = 8, h = 4, D = 16;
    uint8_t *d_img = NULL, *d_cost = NULL, *d_pos = NULL, *d_neg = NULL, *d_lut = NULL;
    uint64_t *d_bits = NULL;
    TRY(cudaMalloc((void **)&d_img, (size_t)w * h));
    TRY(cudaMalloc((void **)&d_lut, 256));
    TRY(cudaMemset(d_lut, 0, 256));
    TRY(cudaMalloc((void **)&d_bits, (size_t)w * h * 8));
    TRY(cudaMalloc((void **)&d_cost, (size_t)w * h * D));
    TRY(cudaMalloc((void **)&d_pos, (size_t)w * h * D));
    TRY(cudaMalloc((void **)&d_neg, (size_t)w * h * D));
    TRY(cudaMemset(d_img, 0, (size_t)w * h));
    TRY(cudaMemset(d_bits, 0, (size_t)w * h * 8));
    {
        mview_args base;
        memset(&base, 0, sizeof base);
        base.width = w, base.height = h, base.dmin = 0, base.ndisp = D, base.max_cost = 63;
        base.cost = STEREO_COST_BT, base.views = STEREO_MAX_VIEWS;
        base.combine = STEREO_COMBINE_SIDES;
        for (int v = 0; v < STEREO_MAX_VIEWS; v++) {
            base.baseline[v] = v == 0 ? 0 : v % 2 ? 16 * v : -16 * v;
            base.vals[v] = d_img, base.bits[v] = d_bits, base.grey[v] = d_img;
            base.ad_lut[v] = d_lut;
        }
        base.ad_weight = 3;
        cudaError_t e = launch_mview_cost(&base, d_cost, d_pos, d_neg, 0);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        check(e == cudaSuccess, "refusals: the base arguments must be accepted: %s",
              cudaGetErrorString(e));
        mview_args m;
#define REFUSED(change, cost, pos, neg, text)                                              \
    do {                                                                                   \
        m = base;                                                                          \
        change;                                                                            \
        check(launch_mview_cost(&m, cost, pos, neg, 0) == cudaErrorInvalidValue,          \
              "refusals: %s must be refused", text);                                       \
    } while (0)
        REFUSED(m.views = 2, d_cost, d_pos, d_neg, "views 2");
        REFUSED(m.views = STEREO_MAX_VIEWS + 1, d_cost, d_pos, d_neg, "views STEREO_MAX_VIEWS + 1");
        REFUSED(m.views = -1, d_cost, d_pos, d_neg, "views -1");
        REFUSED((void)0, NULL, d_pos, d_neg, "a NULL cost volume");
        REFUSED((void)0, d_cost, NULL, d_neg, "sides with a NULL pos");
        REFUSED((void)0, d_cost, d_pos, NULL, "sides with a NULL neg");
        REFUSED(m.vals[STEREO_MAX_VIEWS - 1] = NULL, d_cost, d_pos, d_neg, "bt without view 7's values");
        REFUSED(m.grey[0] = NULL, d_cost, d_pos, d_neg, "bt without the reference's grey");
        REFUSED((m.cost = STEREO_COST_CENSUS, m.bits[1] = NULL), d_cost, d_pos, d_neg,
                "census without view 1's words");
        REFUSED((m.cost = STEREO_COST_RANK, m.views = 3, m.vals[2] = NULL), d_cost, d_pos, d_neg,
                "rank without view 2's values");
        REFUSED((m.cost = STEREO_COST_AD, m.vals[0] = NULL), d_cost, d_pos, d_neg,
                "ad without the reference's values");
        REFUSED((m.cost = STEREO_COST_ADCENSUS, m.ad_lut[2] = NULL), d_cost, d_pos, d_neg,
                "adcensus without view 2's grey mapping");
        REFUSED((m.cost = STEREO_COST_ADCENSUS, m.bits[0] = NULL), d_cost, d_pos, d_neg,
                "adcensus without the reference's census words");
        REFUSED((m.cost = STEREO_COST_ADCENSUS, m.vals[3] = NULL), d_cost, d_pos, d_neg,
                "adcensus without view 3's grey values");
        REFUSED(m.cost = STEREO_COST_MI, d_cost, d_pos, d_neg, "cost mi");
        REFUSED(m.width = 0, d_cost, d_pos, d_neg, "width 0");
        REFUSED(m.height = 0, d_cost, d_pos, d_neg, "height 0");
        REFUSED(m.ndisp = 0, d_cost, d_pos, d_neg, "ndisp 0");
        REFUSED(m.ndisp = 18, d_cost, d_pos, d_neg, "ndisp 18 (not a multiple of 4)");
#undef REFUSED
        check(launch_mview_cost(NULL, d_cost, d_pos, d_neg, 0) == cudaErrorInvalidValue,
              "refusals: NULL arguments must be refused");
        /* what is not read may be NULL: sum without pos / neg, census without values */
        m = base;
        m.combine = STEREO_COMBINE_SUM, m.cost = STEREO_COST_CENSUS;
        for (int v = 0; v < STEREO_MAX_VIEWS; v++)
            m.vals[v] = NULL, m.grey[v] = NULL;
        e = launch_mview_cost(&m, d_cost, NULL, NULL, 0);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        check(e == cudaSuccess, "refusals: sum / census without pos, neg, vals, grey must be "
              "accepted: %s", cudaGetErrorString(e));
        /* adcensus reads no mapping of the reference (view 0) and no bt grey rows */
        m = base;
        m.cost = STEREO_COST_ADCENSUS, m.ad_lut[0] = NULL;
        for (int v = 0; v < STEREO_MAX_VIEWS; v++)
            m.grey[v] = NULL;
        e = launch_mview_cost(&m, d_cost, d_pos, d_neg, 0);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        check(e == cudaSuccess, "refusals: adcensus without view 0's mapping and without grey "
              "must be accepted: %s", cudaGetErrorString(e));
    }
done:
    cudaFree(d_img), cudaFree(d_bits), cudaFree(d_cost), cudaFree(d_pos), cudaFree(d_neg);
    cudaFree(d_lut);
}

/* Random baselines for views 2..views-1 (view 1 is 1, 16 sixteenths): distinct, not 0, within
 * +-STEREO_BASELINE_MAX, in 16ths (fractional ones included), as stereo_params_check wants. */
static void random_baselines(int views, int *bq)
{
    const int lim = STEREO_BASELINE_MAX * STEREO_BASELINE_SCALE;
    bq[0] = 0, bq[1] = STEREO_BASELINE_SCALE;
    for (int v = 2; v < views; v++) {
        int ok;
        do {
            bq[v] = (int)(rnd() % (2 * lim + 1)) - lim;
            ok = bq[v] != 0;
            for (int j = 1; j < v; j++)
                ok = ok && bq[j] != bq[v];
        } while (!ok);
    }
}

int main(void)
{
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices < 1) {
        printf("no CUDA device: %s\n0 passed, 1 failed\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 1;
    }
    { /* the kernels' division-free mean against stereo_view_mean over its whole range */
        int *d_tab = NULL, *tab = (int *)malloc(9 * 8192 * sizeof(int));
        long bad = 0, first_n = 0, first_x = 0;
        if (tab && cudaMalloc(&d_tab, 9 * 8192 * sizeof(int)) == cudaSuccess &&
            mview_mean_table(d_tab) == cudaSuccess &&
            cudaMemcpy(tab, d_tab, 9 * 8192 * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess) {
            for (int n = 1; n <= 8; n++)
                for (int x = n / 2; x < 8192; x++)
                    if (tab[n * 8192 + x] != stereo_view_mean(x - n / 2, n, 255) && !bad++)
                        first_n = n, first_x = x;
            check(bad == 0, "division-free mean: %ld of 65520 differ (first n %ld, sum %ld)", bad,
                  first_n, first_x - first_n / 2);
        } else {
            check(0, "division-free mean: the table kernel did not run");
        }
        cudaFree(d_tab);
        free(tab);
    }
    static const struct { int w, h; } sizes[] = {{333, 217}, {64, 48}, {31, 7}, {640, 1}, {7, 40}};
    static const int Ds[] = {16, 64, 128}, dmins[] = {0, 13};
    /* the baseline sets: 1,-1 / 1,2,-1 / 1,0.5,-2.5; then random ones of 3, 4 and 8 views */
    static const struct { int views, bq[STEREO_MAX_VIEWS]; } fixed[] = {
        {3, {0, 16, -16}}, {4, {0, 16, 32, -16}}, {4, {0, 16, 8, -40}},
    };
    static const int random_views[] = {3, 4, 8};
    const int nsets = 3 + 3;
    /* every baseline set on the small sizes; on the large one (most of the CPU reference's
     * time) one set per case in turn: each set once per cost and rule, on varying D and dmin */
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int ci = 0; ci < NCOSTS; ci++)
            for (int rule = 0; rule < 2; rule++)
                for (size_t di = 0; di < sizeof Ds / sizeof *Ds; di++)
                    for (size_t mi = 0; mi < sizeof dmins / sizeof *dmins; mi++)
                        for (int set = 0; set < nsets; set++) {
                            const int large = sizes[si].w * sizes[si].h > 10000;
                            if (large && set != (int)(ci + rule + di * 2 + mi) % nsets)
                                continue;
                            int views, bq[STEREO_MAX_VIEWS] = {0};
                            if (set < 3) {
                                views = fixed[set].views;
                                memcpy(bq, fixed[set].bq, sizeof bq);
                            } else {
                                views = random_views[set - 3];
                                random_baselines(views, bq);
                            }
                            run_case(sizes[si].w, sizes[si].h, Ds[di], dmins[mi], ci,
                                     rule ? STEREO_COMBINE_SUM : STEREO_COMBINE_SIDES, views, bq);
                        }
    /* the structure must make the sides rule pick a side somewhere, for every cost */
    for (int ci = 0; ci < NCOSTS; ci++) {
        printf("# %s: the sides rule took the positive side alone at %ld voxels, the negative at "
               "%ld\n", cost_names[ci], picked_pos[ci], picked_neg[ci]);
        check(picked_pos[ci] > 0 && picked_neg[ci] > 0,
              "%s: the cases never make the sides rule pick a side (positive %ld, negative %ld)",
              cost_names[ci], picked_pos[ci], picked_neg[ci]);
    }
    refusals();
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
