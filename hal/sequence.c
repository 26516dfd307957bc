/* SPDX-License-Identifier: Apache-2.0 */
/* sequence.c — see sequence.h. */
#include "sequence.h"

#include "outpath.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int failf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void seq_free(seq_list *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->left ? s->left[i] : NULL);
        free(s->right ? s->right[i] : NULL);
        free(s->stem ? s->stem[i] : NULL);
    }
    free(s->left);
    free(s->right);
    free(s->stem);
    free(s->index);
    memset(s, 0, sizeof *s);
}

/* Appends a frame (copies of the strings); -1 when out of memory. */
static int add_frame(seq_list *s, int *cap, const char *l, const char *r, long index,
                     const char *stem)
{
    if (s->n == *cap) {
        int c = *cap ? 2 * *cap : 64;
        char **nl = realloc(s->left, c * sizeof *nl);
        if (nl)
            s->left = nl;
        char **nr = realloc(s->right, c * sizeof *nr);
        if (nr)
            s->right = nr;
        char **ns = realloc(s->stem, c * sizeof *ns);
        if (ns)
            s->stem = ns;
        long *ni = realloc(s->index, c * sizeof *ni);
        if (ni)
            s->index = ni;
        if (!nl || !nr || !ns || !ni)
            return -1;
        *cap = c;
    }
    s->left[s->n] = strdup(l);
    s->right[s->n] = strdup(r);
    s->stem[s->n] = stem ? strdup(stem) : NULL;
    s->index[s->n] = index;
    s->n++;
    return s->left[s->n - 1] && s->right[s->n - 1] && (!stem || s->stem[s->n - 1]) ? 0 : -1;
}

int seq_from_patterns(const char *left, const char *right, seq_list *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (seq_check_pattern("LEFT", left, err, errlen) ||
        seq_check_pattern("RIGHT", right, err, errlen))
        return -1;
    char l[4096], r[4096];
    long first = -1;
    for (long k = 0; k <= 1 && first < 0; k++)
        if (seq_frame_path(left, k, l, sizeof l) == 0 && is_file(l))
            first = k;
    if (first < 0) {
        seq_frame_path(left, 0, l, sizeof l);
        return failf(err, errlen, "LEFT %s: no such file, nor the one numbered 1: a sequence "
                     "starts at 0 or 1", l);
    }
    int cap = 0;
    for (long k = first;; k++) {
        if (seq_frame_path(left, k, l, sizeof l) || seq_frame_path(right, k, r, sizeof r)) {
            seq_free(out);
            return failf(err, errlen, "LEFT / RIGHT: the path of frame %ld is too long", k);
        }
        char why[64]; /* a FIFO or a device in the sequence: refused, not taken for its end */
        const char *bad = input_is_regular(l, why, sizeof why) ? l
                          : input_is_regular(r, why, sizeof why) ? r : NULL;
        if (bad) {
            seq_free(out);
            return failf(err, errlen, "%s %s %s", bad == l ? "LEFT" : "RIGHT", bad, why);
        }
        int have_l = is_file(l), have_r = is_file(r);
        if (!have_l && !have_r)
            break;
        if (have_l != have_r) {
            seq_free(out);
            return failf(err, errlen, "%s %s has no partner: %s does not exist (the left and "
                         "right sequences must match)", have_l ? "LEFT" : "RIGHT",
                         have_l ? l : r, have_l ? r : l);
        }
        if (k > 0x7fffffffL || add_frame(out, &cap, l, r, k, NULL)) {
            seq_free(out);
            return failf(err, errlen, "out of memory listing the sequence");
        }
    }
    return 0;
}

static int image_name(const char *name)
{
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".pgm", ".ppm"};
    const char *dot = strrchr(name, '.');
    if (name[0] == '.' || !dot)
        return 0;
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++)
        if (!strcasecmp(dot, exts[i]))
            return 1;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted image file names of a folder (what: "LEFTDIR" / "RIGHTDIR"). */
static int list_dir(const char *what, const char *dir, char ***names, int *n, char *err,
                    size_t errlen)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return failf(err, errlen, "%s %s: cannot open the folder: %s", what, dir,
                     strerror(errno));
    int cap = 0, rc = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (!image_name(e->d_name))
            continue;
        int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len < 0 || (size_t)len >= sizeof path || !is_file(path))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            char **m = realloc(*names, cap * sizeof *m);
            if (!m) {
                rc = -1;
                break;
            }
            *names = m;
        }
        if (!((*names)[(*n)++] = strdup(e->d_name))) {
            (*n)--;
            rc = -1;
            break;
        }
    }
    closedir(d);
    if (rc)
        return failf(err, errlen, "%s %s: out of memory listing the folder", what, dir);
    if (*n == 0)
        return failf(err, errlen, "%s %s: no image files (.png, .jpg, .jpeg, .pgm, .ppm)",
                     what, dir);
    qsort(*names, (size_t)*n, sizeof **names, cmp_names);
    return 0;
}

static int contains(char **names, int n, const char *name)
{
    return bsearch(&name, names, (size_t)n, sizeof *names, cmp_names) != NULL;
}

int seq_from_dirs(const char *left, const char *right, seq_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->from_dirs = 1;
    char **ln = NULL, **rn = NULL;
    int nl = 0, nr = 0, rc = -1, cap = 0;
    if (list_dir("LEFTDIR", left, &ln, &nl, err, errlen) ||
        list_dir("RIGHTDIR", right, &rn, &nr, err, errlen))
        goto done;
    int shared = 0;
    for (int i = 0; i < nl && !shared; i++)
        shared = contains(rn, nr, ln[i]);
    /* the first file without a partner: by name where the folders share names, else by count */
    for (int i = 0, j = 0; i < nl || j < nr;) {
        const char *lonely = NULL, *side = NULL, *in = NULL;
        if (shared) {
            int c = i >= nl ? 1 : j >= nr ? -1 : strcmp(ln[i], rn[j]);
            if (c < 0)
                lonely = ln[i], side = "LEFTDIR", in = right;
            else if (c > 0)
                lonely = rn[j], side = "RIGHTDIR", in = left;
        } else if (i >= nl || j >= nr) {
            lonely = i < nl ? ln[i] : rn[j];
            side = i < nl ? "LEFTDIR" : "RIGHTDIR";
            in = i < nl ? right : left;
        }
        if (lonely) {
            failf(err, errlen, "%s %s/%s has no partner in %s (%d left and %d right images%s)",
                  side, side[0] == 'L' ? left : right, lonely, in, nl, nr,
                  shared ? "; the folders share names, so pairs must have the same name" : "");
            seq_free(out);
            goto done;
        }
        char lp[4096], rp[4096], stem[4096];
        snprintf(lp, sizeof lp, "%s/%s", left, ln[i]);
        snprintf(rp, sizeof rp, "%s/%s", right, rn[j]);
        snprintf(stem, sizeof stem, "%.*s", (int)(strrchr(ln[i], '.') - ln[i]), ln[i]);
        if (add_frame(out, &cap, lp, rp, i, stem)) {
            failf(err, errlen, "out of memory listing the sequence");
            seq_free(out);
            goto done;
        }
        i++, j++;
    }
    out->from_dirs = 1;
    rc = 0;
done:
    for (int i = 0; i < nl; i++)
        free(ln[i]);
    for (int i = 0; i < nr; i++)
        free(rn[i]);
    free(ln);
    free(rn);
    return rc;
}

int seq_output_path(const seq_list *s, int i, const char *target, const char *ext, char *buf,
                    size_t len)
{
    if (!s->from_dirs)
        return seq_frame_path(target, s->index[i], buf, len);
    size_t t = strlen(target);
    int n = snprintf(buf, len, "%s%s%s%s", target, t && target[t - 1] == '/' ? "" : "/",
                     s->stem[i], ext);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
