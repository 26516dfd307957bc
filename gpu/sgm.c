/* sgm.c — CPU reference of stages 4 and 5 (see sgm.h). */
#include "sgm.h"

#include <string.h>

#include "stereo_math.h"

void sgm_direction(int dir, int *dx, int *dy) { stereo_sgm_direction(dir, dx, dy); }

STEREO_HOT void sgm_cost_rank_rows(const sgm_config *c, const uint8_t *rank_l, const uint8_t *rank_r,
                        uint8_t *cost, int y0, int y1)
{
    int w = c->width, D = c->ndisp;
    for (int y = y0; y < y1; y++) {
        const uint8_t *rl = rank_l + (size_t)y * w, *rr = rank_r + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + ((size_t)y * w + x) * D;
            int inside = x - c->dmin + 1; /* disparities k < inside have x - d >= 0 */
            if (inside > D)
                inside = D;
            if (inside < 0)
                inside = 0;
            int base = rl[x];
            const uint8_t *q = rr + x - c->dmin; /* q[-k] = rankR(x - d) */
            for (int k = 0; k < inside; k++) {
                int v = base - q[-k];
                cp[k] = (uint8_t)(v < 0 ? -v : v);
            }
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

void sgm_cost_census_rows(const sgm_config *c, const uint64_t *census_l, const uint64_t *census_r,
                          uint8_t *cost, int y0, int y1)
{
    int w = c->width, D = c->ndisp;
    for (int y = y0; y < y1; y++) {
        const uint64_t *cl = census_l + (size_t)y * w, *cr = census_r + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            uint8_t *cp = cost + ((size_t)y * w + x) * D;
            int inside = x - c->dmin + 1;
            if (inside > D)
                inside = D;
            if (inside < 0)
                inside = 0;
            uint64_t base = cl[x];
            for (int k = 0; k < inside; k++)
                cp[k] = (uint8_t)__builtin_popcountll(base ^ cr[x - c->dmin - k]);
            memset(cp + inside, c->max_cost, (size_t)(D - inside));
        }
    }
}

int sgm_line_count(const sgm_config *c, int dir)
{
    return stereo_sgm_line_count(dir, c->width, c->height);
}

void sgm_line_start(const sgm_config *c, int dir, int line, int *x, int *y)
{
    stereo_sgm_line_start(dir, line, c->width, c->height, x, y);
}

STEREO_HOT void sgm_aggregate_lines(const sgm_config *c, int dir, const uint8_t *cost, const uint8_t *grey,
                         uint16_t *S, int store, int line0, int line1)
{
    int w = c->width, h = c->height, D = c->ndisp;
    int dx, dy;
    sgm_direction(dir, &dx, &dy);
    /* prev/cur hold L_r with one sentinel on each side: index k + 1 */
    uint16_t buf_a[D + 2], buf_b[D + 2];
    for (int line = line0; line < line1; line++) {
        uint16_t *prev = buf_a, *cur = buf_b;
        prev[0] = prev[D + 1] = cur[0] = cur[D + 1] = STEREO_SGM_FAR;
        int x, y;
        sgm_line_start(c, dir, line, &x, &y);
        int min_prev = 0, grey_prev = 0;
        for (int first = 1; x >= 0 && x < w && y >= 0 && y < h; x += dx, y += dy, first = 0) {
            size_t p = (size_t)y * w + x;
            const uint8_t *cp = cost + p * D;
            uint16_t *sp = S + p * D;
            int g = grey[p];
            int min_cur = STEREO_SGM_FAR;
            if (first) {
                for (int k = 0; k < D; k++)
                    cur[k + 1] = cp[k];
            } else {
                int p2 = stereo_p2_adaptive(c->p1, c->p2, c->p2_adapt, g - grey_prev);
                int jump = min_prev + p2, p1 = c->p1;
                for (int k = 1; k <= D; k++)
                    cur[k] = (uint16_t)stereo_sgm_step(cp[k - 1], prev[k], prev[k - 1],
                                                       prev[k + 1], p1, jump, min_prev);
            }
            for (int k = 1; k <= D; k++)
                min_cur = cur[k] < min_cur ? cur[k] : min_cur;
            if (store)
                memcpy(sp, cur + 1, (size_t)D * sizeof *sp);
            else
                for (int k = 0; k < D; k++)
                    sp[k] = (uint16_t)(sp[k] + cur[k + 1]);
            min_prev = min_cur;
            grey_prev = g;
            uint16_t *t = prev;
            prev = cur;
            cur = t;
        }
    }
}
