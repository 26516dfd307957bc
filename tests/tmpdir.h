/* SPDX-License-Identifier: Apache-2.0 */
/* tmpdir.h — a cmocka test's scratch folder: tmpdir_make in the group setup, tmpdir_remove
 * (every file in it, then the folder) in the teardown, and the helpers that write files into it.
 * Header-only; include it after cmocka.h in one test file. */
#ifndef STEREO_TESTS_TMPDIR_H
#define STEREO_TESTS_TMPDIR_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

/* tmpdir/name in buf (PATH_MAX bytes) */
static inline const char *tmp_path(char *buf, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
    return buf;
}

static inline void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* /tmp/PREFIX.XXXXXX; 0, or -1 (cmocka then fails the group) */
static inline int tmpdir_make(const char *prefix)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/%s.XXXXXX", prefix);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int tmpdir_remove(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return -1;
    char path[PATH_MAX];
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(tmp_path(path, e->d_name));
    closedir(d);
    return rmdir(tmpdir);
}

#endif
