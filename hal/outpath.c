/* SPDX-License-Identifier: Apache-2.0 */
/* outpath.c — outputs checked before the work and written atomically, inputs opened without
 * blocking (outpath.h). libc only. */
#include "outpath.h"

#include "seq_pattern.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* paths may hold any byte: keep the message one printable line */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

/* "a/b/c.png" -> dir "a/b", base "c.png"; "c.png" -> "." and "c.png"; "/c" -> "/" and "c".
 * 0, or -1 when the path does not fit. */
static int split_path(const char *path, char dir[PATH_MAX], const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    int n = !slash ? snprintf(dir, PATH_MAX, ".")
                   : snprintf(dir, PATH_MAX, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* What makes two names the same file: device and inode when the file exists; the resolved path
 * (every link and ".." of the folder followed) either way, when it can be resolved. */
typedef struct {
    int exists, resolved;
    dev_t dev;
    ino_t ino;
    char path[PATH_MAX];
} file_identity;

static void identify(const char *path, file_identity *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (stat(path, &st) == 0) {
        id->exists = 1;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
    }
    if (realpath(path, id->path)) {
        id->resolved = 1;
        return;
    }
    char dir[PATH_MAX], real_dir[PATH_MAX];
    const char *base;
    if (split_path(path, dir, &base) == 0 && realpath(dir, real_dir)) {
        int n = snprintf(id->path, sizeof id->path, "%s/%s",
                         strcmp(real_dir, "/") ? real_dir : "", base);
        id->resolved = n > 0 && n < (int)sizeof id->path;
    }
}

static int same_file(const file_identity *a, const file_identity *b)
{
    if (a->exists && b->exists)
        return a->dev == b->dev && a->ino == b->ino;
    return a->resolved && b->resolved && strcmp(a->path, b->path) == 0;
}

/* One output on its own: a name for a regular file (or none yet) in a writable folder. */
static int temp_probe(const char *path);

static int check_one(const outpath_file *o, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    const char *base;
    if (split_path(o->path, dir, &base) != 0) {
        fail(err, errlen, "%s '%s': the name is too long", o->what, o->path);
        return -1;
    }
    struct stat st;
    if (lstat(o->path, &st) == 0) {
        /* rename would replace the link itself, not the file it points to */
        if (S_ISLNK(st.st_mode)) {
            fail(err, errlen, "%s '%s' is a symbolic link; outputs are not written through "
                 "links (name the file itself)", o->what, o->path);
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            fail(err, errlen, "%s '%s' is a directory; name a file", o->what, o->path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            fail(err, errlen, "%s '%s' exists and is not a regular file (a device, FIFO or "
                 "socket); name a file", o->what, o->path);
            return -1;
        }
    }
    if (!*base) {
        fail(err, errlen, "%s '%s' names a folder; name a file", o->what, o->path);
        return -1;
    }
    /* the temporary file is created beside the output, so the folder must take new files */
    errno = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        fail(err, errlen, "%s '%s': cannot write into the folder '%s': %s", o->what, o->path,
             dir, errno ? strerror(errno) : "not a directory");
        return -1;
    }
    /* the temporary name must fit too, or the work would be done and then lost */
    size_t tmp = sizeof OUTPATH_TMP_SUFFIX - 1;
    long name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max <= 0)
        name_max = NAME_MAX;
    if (strlen(base) + tmp > (size_t)name_max) {
        fail(err, errlen, "%s '%.60s...': the file name is %zu bytes; with the temporary suffix "
             "'%s' it must fit in %ld, so at most %zu", o->what, o->path, strlen(base),
             OUTPATH_TMP_SUFFIX, name_max, (size_t)name_max - tmp);
        return -1;
    }
    if (strlen(o->path) + tmp >= PATH_MAX) {
        fail(err, errlen, "%s '%.60s...': the path is %zu bytes; with the temporary suffix "
             "'%s' it must stay below %d", o->what, o->path, strlen(o->path), OUTPATH_TMP_SUFFIX,
             PATH_MAX);
        return -1;
    }
    /* access() says what the permissions allow, not whether the file system takes a new file:
     * root passes it on /proc or /sys, where every write would then fail. The temporary file
     * the write will make, made and removed now, is the one sure test. */
    int why = temp_probe(o->path);
    if (why) {
        fail(err, errlen, "%s '%s': cannot write into the folder '%s': creating a file there "
             "failed: %s", o->what, o->path, dir, strerror(why));
        return -1;
    }
    return 0;
}

/* The first of files[0..n-1] (unnamed ones left out) that is the file out identifies, or NULL. */
static const outpath_file *same_as_any(const file_identity *out, const outpath_file *files, int n)
{
    file_identity other;
    for (int j = 0; j < n; j++) {
        if (!files[j].path || !*files[j].path)
            continue;
        identify(files[j].path, &other);
        if (same_file(out, &other))
            return &files[j];
    }
    return NULL;
}

int outpath_check(const outpath_file *outputs, int n_out, const outpath_file *inputs, int n_in,
                  char *err, size_t errlen)
{
    for (int i = 0; i < n_out; i++) {
        const outpath_file *o = &outputs[i];
        if (!o->path || !*o->path)
            continue;
        if (check_one(o, err, errlen) != 0)
            return -1;
        file_identity out;
        identify(o->path, &out);
        /* an input first, then an earlier output of the same run */
        const outpath_file *same = same_as_any(&out, inputs, n_in);
        if (!same)
            same = same_as_any(&out, outputs, i);
        if (same) {
            fail(err, errlen, "%s '%s' is the same file as %s '%s'; choose another name",
                 o->what, o->path, same->what, same->path);
            return -1;
        }
    }
    return 0;
}

/* The literal text of pattern[from, to) ("%%" is one '%') into out; its length, or -1 when it
 * does not fit. */
static int literal(const char *from, const char *to, char *out, size_t len)
{
    size_t n = 0;
    for (const char *q = from; q < to; q++) {
        if (*q == '%' && q + 1 < to && q[1] == '%')
            q++;
        if (n + 1 >= len)
            return -1;
        out[n++] = *q;
    }
    out[n] = 0;
    return (int)n;
}

int outpath_pattern_frame(const char *pattern, const char *name, long first, long *k)
{
    const char *conv = pattern;
    while ((conv = strchr(conv, '%')) && conv[1] == '%')
        conv += 2;
    if (!conv)
        return 0;
    const char *end = conv + strcspn(conv, "diu");
    if (!*end)
        return 0;
    char prefix[4096], suffix[4096];
    int np = literal(pattern, conv, prefix, sizeof prefix);
    int ns = literal(end + 1, end + 1 + strlen(end + 1), suffix, sizeof suffix);
    size_t n = strlen(name);
    if (np < 0 || ns < 0 || n <= (size_t)np + (size_t)ns || strncmp(name, prefix, (size_t)np) ||
        strcmp(name + n - (size_t)ns, suffix))
        return 0;
    /* the number between them, as printf writes a non-negative int with any flags: an optional
     * '+' or ' ', then digits (padded with '0' or with spaces, on either side) */
    char mid[32];
    size_t nm = n - (size_t)np - (size_t)ns;
    if (nm >= sizeof mid)
        return 0;
    memcpy(mid, name + np, nm);
    mid[nm] = 0;
    const char *d = mid + strspn(mid, " +");
    if (!isdigit((unsigned char)*d))
        return 0;
    errno = 0;
    char *stop;
    long v = strtol(d, &stop, 10);
    if (errno || v < first || v > INT_MAX || stop[strspn(stop, " ")])
        return 0;
    /* exact: the pattern's own text for v */
    char again[4096];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    int na = snprintf(again, sizeof again, pattern, (int)v);
#pragma GCC diagnostic pop
    if (na < 0 || (size_t)na >= sizeof again || strcmp(again, name))
        return 0;
    *k = v;
    return 1;
}

int outpath_check_folder(const char *what, const char *dir, const outpath_file *files, int n,
                         char *err, size_t errlen)
{
    file_identity folder, parent;
    identify(dir, &folder);
    for (int i = 0; i < n; i++) {
        char up[PATH_MAX];
        const char *base;
        if (!files[i].path || !*files[i].path || split_path(files[i].path, up, &base) != 0)
            continue;
        identify(up, &parent);
        if (same_file(&folder, &parent)) {
            fail(err, errlen, "%s '%s' would hold %s '%s'; it takes a new or empty folder of "
                 "its own", what, dir, files[i].what, files[i].path);
            return -1;
        }
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT) {
            fail(err, errlen, "%s '%s': %s", what, dir, strerror(errno));
            return -1;
        }
        /* created by the program: its parent must take it ("rec/" is the folder "rec") */
        char name[PATH_MAX];
        size_t len = strlen(dir);
        while (len > 1 && dir[len - 1] == '/')
            len--;
        snprintf(name, sizeof name, "%.*s", (int)len, dir);
        outpath_file f = {what, name};
        return check_one(&f, err, errlen);
    }
    if (!S_ISDIR(st.st_mode)) {
        fail(err, errlen, "%s '%s' exists and is not a directory%s; name a new or empty folder",
             what, dir, S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fail(err, errlen, "%s '%s': cannot read the folder: %s", what, dir, strerror(errno));
        return -1;
    }
    char first[NAME_MAX + 1] = "";
    long count = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && count++ == 0)
            snprintf(first, sizeof first, "%s", e->d_name);
    closedir(d);
    if (count) {
        fail(err, errlen, "%s '%s' holds files already ('%s'%s); name a new or empty folder",
             what, dir, first, count > 1 ? " and more" : "");
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fail(err, errlen, "%s '%s': cannot write into the folder: %s", what, dir,
             strerror(errno));
        return -1;
    }
    return 0;
}

void outpath_add(outpath_registry *r, int is_output, const char *what, const char *path)
{
    if (!path || !*path || r->nomem)
        return;
    if (r->n == r->cap) {
        int c = r->cap ? 2 * r->cap : 32;
        outpath_file *f = realloc(r->file, (size_t)c * sizeof *f);
        if (f)
            r->file = f;
        unsigned char *o = realloc(r->is_out, (size_t)c);
        if (o)
            r->is_out = o;
        if (!f || !o) {
            r->nomem = 1;
            return;
        }
        r->cap = c;
    }
    char *w = strdup(what), *p = strdup(path);
    if (!w || !p) {
        free(w), free(p);
        r->nomem = 1;
        return;
    }
    r->file[r->n] = (outpath_file){w, p};
    r->is_out[r->n++] = is_output >= 2 && is_output <= 3 ? (unsigned char)is_output : is_output != 0;
}

void outpath_add_pattern(outpath_registry *r, const char *what, const char *pattern, int first)
{
    outpath_add(r, first ? 3 : 2, what, pattern);
}

/* is_out: 0 an input, 1 an output, 2 / 3 an output pattern from frame 0 / 1 */
#define IS_PATTERN(v) ((v) >= 2)
#define FIRST_FRAME(v) ((v) - 2)

/* Frame numbers where differently padded patterns of one name begin to meet (x_%d and x_%06d
 * at 100000), and the ends of the int range: the frames of one pattern tried against another. */
static const long probe_frames[] = {0, 1, 2, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999,
                                    100000, 999999, 1000000, 9999999, 10000000, 99999999,
                                    100000000, 999999999, 1000000000, 2147483647};

/* A pattern output against every other file of the run (outpath_add_pattern). */
static int check_pattern(const outpath_registry *r, int p, char *err, size_t errlen)
{
    const outpath_file *pf = &r->file[p];
    const long first = FIRST_FRAME(r->is_out[p]);
    char dir[PATH_MAX], real_dir[PATH_MAX], other_dir[PATH_MAX], real_other[PATH_MAX];
    const char *base, *obase;
    long k;
    if (split_path(pf->path, dir, &base) != 0 || strchr(dir, '%')) {
        fail(err, errlen, "%s '%s': the frame number belongs in the file's name, not its folder",
             pf->what, pf->path);
        return -1;
    }
    if (!realpath(dir, real_dir))
        return 0; /* no folder: check_one said so for its frames */
    for (int i = 0; i < r->n; i++) {
        if (i == p || split_path(r->file[i].path, other_dir, &obase) != 0 ||
            !realpath(other_dir, real_other) || strcmp(real_dir, real_other) != 0)
            continue;
        int hit = 0;
        if (!IS_PATTERN(r->is_out[i]))
            hit = outpath_pattern_frame(base, obase, first, &k);
        else /* two patterns in one folder: the other's names at the probe frames */
            for (size_t j = 0; j < sizeof probe_frames / sizeof *probe_frames && !hit; j++) {
                char made[PATH_MAX];
                hit = probe_frames[j] >= FIRST_FRAME(r->is_out[i]) &&
                      seq_frame_path(obase, probe_frames[j], made, sizeof made) == 0 &&
                      outpath_pattern_frame(base, made, first, &k);
            }
        if (hit) {
            fail(err, errlen, "frame %ld of %s '%s' would replace %s '%s'; choose another name",
                 k, pf->what, pf->path, r->file[i].what, r->file[i].path);
            return -1;
        }
    }
    /* files there already under the pattern's names: a link or hard link to a file of the run
     * named elsewhere, a folder named two ways */
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        char path[PATH_MAX];
        if (!outpath_pattern_frame(base, e->d_name, first, &k) ||
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        file_identity made, other;
        identify(path, &made);
        for (int i = 0; i < r->n && rc == 0; i++) {
            if (i == p || IS_PATTERN(r->is_out[i]))
                continue;
            identify(r->file[i].path, &other);
            if (made.exists && same_file(&made, &other)) {
                fail(err, errlen, "frame %ld of %s '%s' would replace %s '%s'; choose another "
                     "name", k, pf->what, pf->path, r->file[i].what, r->file[i].path);
                rc = -1;
            }
        }
    }
    closedir(d);
    return rc;
}

int outpath_registry_check(const outpath_registry *r, const char *folder_what,
                           const char *folder, char *err, size_t errlen)
{
    if (r->nomem) {
        fail(err, errlen, "out of memory listing the inputs and outputs");
        return -1;
    }
    outpath_file *in = malloc(((size_t)r->n + 1) * sizeof *in);
    outpath_file *out = malloc((2 * (size_t)r->n + 1) * sizeof *out);
    char (*frames)[PATH_MAX] = NULL;
    int n_in = 0, n_out = 0, rc = -1;
    if (!in || !out) {
        fail(err, errlen, "out of memory listing the inputs and outputs");
        goto done;
    }
    /* a pattern's frames 0 and 1 as outputs: their folder, and the same file as another */
    frames = calloc(2 * (size_t)r->n + 1, PATH_MAX);
    if (!frames) {
        fail(err, errlen, "out of memory listing the inputs and outputs");
        goto done;
    }
    int nf = 0;
    for (int i = 0; i < r->n; i++) {
        char why[64];
        if (IS_PATTERN(r->is_out[i])) {
            char what[96];
            snprintf(what, sizeof what, "%s", r->file[i].what);
            if (seq_check_pattern(what, r->file[i].path, err, errlen) != 0)
                goto done;
            for (int k = FIRST_FRAME(r->is_out[i]); k < 2; k++)
                if (seq_frame_path(r->file[i].path, k, frames[nf], PATH_MAX) == 0)
                    out[n_out++] = (outpath_file){r->file[i].what, frames[nf++]};
        } else if (r->is_out[i])
            out[n_out++] = r->file[i];
        else if (input_is_regular(r->file[i].path, why, sizeof why) == 0)
            in[n_in++] = r->file[i];
        else { /* a FIFO would block the reader, a device never end */
            fail(err, errlen, "%s '%s' %s; name a file", r->file[i].what, r->file[i].path, why);
            goto done;
        }
    }
    rc = outpath_check(out, n_out, in, n_in, err, errlen);
    for (int i = 0; rc == 0 && i < r->n; i++)
        if (IS_PATTERN(r->is_out[i]))
            rc = check_pattern(r, i, err, errlen);
    if (rc == 0 && folder && *folder)
        rc = outpath_check_folder(folder_what, folder, r->file, r->n, err, errlen);
done:
    free(frames);
    free(in);
    free(out);
    return rc;
}

void outpath_registry_free(outpath_registry *r)
{
    for (int i = 0; i < r->n; i++) {
        free((char *)r->file[i].what);
        free((char *)r->file[i].path);
    }
    free(r->file);
    free(r->is_out);
    memset(r, 0, sizeof *r);
}

/* The temporary files being written, for outpath_remove_temps_and_die in a signal handler: a
 * slot is claimed (1), its name filled, then live (2) while the file may exist, and freed (0)
 * after the rename or the unlink. A write that finds every slot taken goes on unregistered. */
#define TEMP_SLOTS 8
static int temp_state[TEMP_SLOTS];
static char temp_name[TEMP_SLOTS][PATH_MAX];

static int temp_claim(void)
{
    for (int k = 0; k < TEMP_SLOTS; k++) {
        int free_slot = 0;
        if (__atomic_compare_exchange_n(&temp_state[k], &free_slot, 1, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return k;
    }
    return -1;
}

/* Creates path's temporary file and removes it (registered meanwhile, so that a signal does not
 * leave it behind): 0, or the errno of the creation. path + OUTPATH_TMP_SUFFIX fits PATH_MAX. */
static int temp_probe(const char *path)
{
    int slot = temp_claim();
    char local[PATH_MAX];
    char *tmp = slot >= 0 ? temp_name[slot] : local;
    snprintf(tmp, PATH_MAX, "%s%s", path, OUTPATH_TMP_SUFFIX);
    if (slot >= 0)
        __atomic_store_n(&temp_state[slot], 2, __ATOMIC_RELEASE);
    int fd = mkstemp(tmp), why = fd < 0 ? errno : 0;
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    if (slot >= 0)
        __atomic_store_n(&temp_state[slot], 0, __ATOMIC_RELEASE);
    return why;
}

void outpath_remove_temps_and_die(int sig)
{
    for (int k = 0; k < TEMP_SLOTS; k++)
        if (__atomic_load_n(&temp_state[k], __ATOMIC_ACQUIRE) == 2)
            unlink(temp_name[k]);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* pending until the handler returns */
}

void outpath_remove_temps_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = outpath_remove_temps_and_die;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction was;
        /* a signal ignored from the start stays ignored (nohup, a shell's background job) */
        if (sigaction(sigs[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

int atomic_write_file(const char *path, file_writer write, const void *ctx, char *err,
                      size_t errlen)
{
    static const char suffix[] = OUTPATH_TMP_SUFFIX;
    size_t len = strlen(path);
    if (len + sizeof suffix > PATH_MAX) {
        fail(err, errlen, "%s: the name is too long for its temporary file", path);
        return -1;
    }
    int slot = temp_claim();
    char local[PATH_MAX];
    char *tmp = slot >= 0 ? temp_name[slot] : local;
    memcpy(tmp, path, len);
    memcpy(tmp + len, suffix, sizeof suffix);
    if (slot >= 0) /* from here a signal may remove it (a name not yet created: no harm) */
        __atomic_store_n(&temp_state[slot], 2, __ATOMIC_RELEASE);

    int fd = mkstemp(tmp);
    if (fd < 0) {
        fail(err, errlen, "%s: cannot create temporary file: %s", path, strerror(errno));
        goto done;
    }
    /* mkstemp creates mode 0600; a file written by us should be as readable as one written
     * with fopen. Keep the mode of a file we replace, else use the usual 0644. */
    struct stat st;
    mode_t mode = 0644;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        mode = st.st_mode & 07777;
    if (fchmod(fd, mode) != 0) {
        fail(err, errlen, "%s: cannot set permissions of temporary file: %s", path,
             strerror(errno));
        close(fd);
        goto fail;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        fail(err, errlen, "%s: cannot open temporary file: %s", path, strerror(errno));
        close(fd);
        goto fail;
    }

    /* No fsync: what we promise is "never a partial file from a failed write", which rename
     * gives; forcing every disparity frame to the medium would stall slow SD cards. */
    int rc = write(f, path, ctx, err, errlen);
    if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
        fail(err, errlen, "%s: write failed: %s", path, strerror(errno));
        rc = -1;
    }
    if (fclose(f) != 0 && rc == 0) {
        fail(err, errlen, "%s: write failed on close: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        goto fail;
    if (rename(tmp, path) != 0) {
        fail(err, errlen, "%s: cannot rename temporary file into place: %s", path,
             strerror(errno));
        goto fail;
    }
    if (slot >= 0)
        __atomic_store_n(&temp_state[slot], 0, __ATOMIC_RELEASE);
    return 0;

fail:
    unlink(tmp);
done:
    if (slot >= 0)
        __atomic_store_n(&temp_state[slot], 0, __ATOMIC_RELEASE);
    return -1;
}

typedef struct {
    const void *data;
    size_t len;
} byte_span;

static int write_span(FILE *f, const char *path, const void *ctx, char *err, size_t errlen)
{
    const byte_span *b = ctx;
    fwrite(b->data, 1, b->len, f);
    return 0;
}

int atomic_write_bytes(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    byte_span b = {data, len};
    return atomic_write_file(path, write_span, &b, err, errlen);
}

/* Why an existing file that is not a regular one cannot be read as one. */
static const char *not_regular(mode_t m)
{
    return S_ISDIR(m) ? "cannot open: Is a directory" : S_ISFIFO(m) ? "is a FIFO, not a regular file"
           : S_ISCHR(m) || S_ISBLK(m) ? "is a device, not a regular file"
           : S_ISSOCK(m) ? "is a socket, not a regular file" : "is not a regular file";
}

static void say_why(char *why, size_t whylen, const char *fmt, const char *arg)
{
    if (why && whylen)
        snprintf(why, whylen, fmt, arg);
}

FILE *open_input_file(const char *path, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        say_why(why, whylen, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        say_why(why, whylen, "cannot open: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        say_why(why, whylen, "%s", not_regular(st.st_mode));
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        say_why(why, whylen, "cannot open: %s", strerror(errno));
        close(fd);
    }
    return f;
}

int input_is_regular(const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0;
    say_why(why, whylen, "%s", not_regular(st.st_mode));
    return -1;
}
