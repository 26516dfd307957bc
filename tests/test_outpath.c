/* SPDX-License-Identifier: Apache-2.0 */
/* test_outpath.c — outpath_check: an output that names an input or another output (by the same
 * name, another path, a hard link, a link to its folder), a symbolic link, a directory, a device,
 * a missing folder, a folder that takes no file though access() says it may (/proc as root), a
 * name too long for its temporary file; a pattern whose later frames would
 * replace a file (outpath_check_pattern); atomic_write_file failing half-way
 * or ended by a signal; inputs that are FIFOs or devices (open_input_file). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "outpath.h"
#include "tmpdir.h"

static char err[1024];

static int check2(const char *out_what, const char *out, const char *in_what, const char *in)
{
    outpath_file o[] = {{out_what, out}}, i[] = {{in_what, in}};
    err[0] = '\0';
    return outpath_check(o, 1, i, 1, err, sizeof err);
}

static void setup_files(void)
{
    char p[PATH_MAX];
    write_text(tmp_path(p, "left.png"), "left", 4);
    write_text(tmp_path(p, "right.png"), "right", 5);
}

static void output_equal_to_input_by_name_is_refused(void **state)
{
    char in[PATH_MAX];
    setup_files();
    tmp_path(in, "left.png");
    assert_int_equal(check2("output", in, "input LEFT", in), -1);
    assert_non_null(strstr(err, "output '"));
    assert_non_null(strstr(err, "left.png' is the same file as input LEFT '"));
    assert_non_null(strstr(err, "choose another name"));
}

static void output_equal_to_input_by_another_path_is_refused(void **state)
{
    char in[PATH_MAX], out[PATH_MAX];
    setup_files();
    tmp_path(in, "left.png");
    snprintf(out, sizeof out, "%s/./left.png", tmpdir);
    assert_int_equal(check2("output", out, "input LEFT", in), -1);
    /* relative to the current folder */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    assert_int_equal(check2("--color", "./left.png", "input LEFT", in), -1);
    assert_non_null(strstr(err, "--color './left.png' is the same file as input LEFT"));
    assert_int_equal(check2("--color", "out.png", "input LEFT", in), 0);
    assert_int_equal(chdir(cwd), 0);
}

static void output_hard_linked_to_input_is_refused(void **state)
{
    char in[PATH_MAX], out[PATH_MAX];
    setup_files();
    tmp_path(in, "left.png");
    unlink(tmp_path(out, "link.png"));
    assert_int_equal(link(in, out), 0);
    assert_int_equal(check2("output", out, "input LEFT", in), -1);
    assert_non_null(strstr(err, "is the same file as input LEFT"));
    unlink(out);
}

static void output_through_a_linked_folder_is_refused(void **state)
{
    char in[PATH_MAX], dirlink[PATH_MAX], out[PATH_MAX + 16], new_in[PATH_MAX];
    setup_files();
    tmp_path(in, "left.png");
    unlink(tmp_path(dirlink, "dirlink"));
    assert_int_equal(symlink(tmpdir, dirlink), 0);
    snprintf(out, sizeof out, "%s/left.png", dirlink);
    assert_int_equal(check2("output", out, "input LEFT", in), -1);
    /* neither exists yet: compared by the resolved folder and the name */
    snprintf(out, sizeof out, "%s/new.png", dirlink);
    tmp_path(new_in, "new.png");
    assert_int_equal(check2("output", out, "input LEFT", new_in), -1);
    unlink(dirlink);
}

/* outpath_pattern_frame: a name is a frame exactly when the pattern writes that name */
static void pattern_frame_matches_only_what_the_pattern_writes(void **state)
{
    long k = -1;
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_000003.pfm", 1, &k), 1);
    assert_int_equal(k, 3);
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_1234567.pfm", 1, &k), 1);
    assert_int_equal(k, 1234567);
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_000000.pfm", 1, &k), 0); /* < first */
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_000000.pfm", 0, &k), 1);
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_3.pfm", 1, &k), 0);      /* padding */
    assert_int_equal(outpath_pattern_frame("c_%d.pfm", "c_0003.pfm", 1, &k), 0);
    assert_int_equal(outpath_pattern_frame("c_%d.pfm", "c_3.pfm", 1, &k), 1);
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_00000x.pfm", 1, &k), 0);
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "d_000003.pfm", 1, &k), 0);
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_000003.png", 1, &k), 0);
    assert_int_equal(outpath_pattern_frame("c_%06d.pfm", "c_99999999999.pfm", 1, &k), 0); /* > int */
    assert_int_equal(outpath_pattern_frame("c_%+d.pfm", "c_+7.pfm", 1, &k), 1);
    assert_int_equal(outpath_pattern_frame("c_%+d.pfm", "c_7.pfm", 1, &k), 0);
    assert_int_equal(outpath_pattern_frame("c_%4d.pfm", "c_   7.pfm", 1, &k), 1);
    assert_int_equal(outpath_pattern_frame("c_%-4d.pfm", "c_7   .pfm", 1, &k), 1);
    assert_int_equal(outpath_pattern_frame("100%%_%02d.pfm", "100%_12.pfm", 1, &k), 1);
    assert_int_equal(k, 12);
    assert_int_equal(outpath_pattern_frame("100%%_%02d.pfm", "100%%_12.pfm", 1, &k), 0);
}

/* a file:// output's pattern (from frame 1) in a registry: every frame against files by their
 * folder's real path, links to a file there followed, other patterns at the frames where
 * paddings meet */
static void pattern_output_onto_a_later_frame_is_refused(void **state)
{
    char pat[PATH_MAX], in[PATH_MAX], lnk[PATH_MAX], other[PATH_MAX], pat2[PATH_MAX];
    tmp_path(pat, "f_%04d.pfm");
    write_text(tmp_path(in, "f_0042.pfm"), "x", 1);
    unlink(tmp_path(lnk, "cfg.ini"));
    assert_int_equal(symlink(in, lnk), 0);
    outpath_registry r = {0};
    outpath_add(&r, 0, "--config", lnk);
    outpath_add_pattern(&r, "--output", pat, 1);
    assert_int_equal(outpath_registry_check(&r, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "frame 42 of --output '"));
    assert_non_null(strstr(err, "would replace --config '"));
    outpath_registry_free(&r);
    unlink(lnk);
    unlink(in);
    /* an output not written yet counts as well; frame 0 does not (the pattern starts at 1) */
    outpath_add_pattern(&r, "--output", pat, 1);
    outpath_add(&r, 1, "--stats-json", tmp_path(other, "f_0007.pfm"));
    assert_int_equal(outpath_registry_check(&r, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "frame 7 of"));
    outpath_registry_free(&r);
    outpath_add_pattern(&r, "--output", pat, 1);
    outpath_add(&r, 1, "--stats-json", tmp_path(other, "f_0000.pfm"));
    assert_int_equal(outpath_registry_check(&r, NULL, NULL, err, sizeof err), 0);
    outpath_registry_free(&r);
    /* two patterns that meet only at 100000 */
    outpath_add_pattern(&r, "--output", tmp_path(pat, "x_%d.pfm"), 1);
    outpath_add_pattern(&r, "--output", tmp_path(pat2, "x_%06d.pfm"), 1);
    assert_int_equal(outpath_registry_check(&r, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "frame 100000 of --output '"));
    outpath_registry_free(&r);
}

static void two_outputs_naming_one_file_are_refused(void **state)
{
    char a[PATH_MAX], b[PATH_MAX];
    tmp_path(a, "out.png");
    unlink(a);
    snprintf(b, sizeof b, "%s/../%s/out.png", tmpdir, strrchr(tmpdir, '/') + 1);
    outpath_file o[] = {{"output", a}, {"--color", NULL}, {"--confidence", b}};
    assert_int_equal(outpath_check(o, 3, NULL, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "--confidence '"));
    assert_non_null(strstr(err, "is the same file as output '"));
    /* different names: fine, whether they exist or not */
    tmp_path(b, "color.png");
    o[2].path = b;
    assert_int_equal(outpath_check(o, 3, NULL, 0, err, sizeof err), 0);
    write_text(a, "x", 1);
    assert_int_equal(outpath_check(o, 3, NULL, 0, err, sizeof err), 0);
    unlink(a);
}

static void symlink_output_is_refused(void **state)
{
    char target[PATH_MAX], out[PATH_MAX];
    tmp_path(target, "target.png");
    write_text(target, "t", 1);
    unlink(tmp_path(out, "sym.png"));
    assert_int_equal(symlink(target, out), 0);
    assert_int_equal(check2("--screenshot", out, "input", NULL), -1);
    assert_non_null(strstr(err, "is a symbolic link"));
    unlink(out);
    /* a dangling link too */
    assert_int_equal(symlink("/nonexistent/x.png", out), 0);
    assert_int_equal(check2("--screenshot", out, "input", NULL), -1);
    assert_non_null(strstr(err, "is a symbolic link"));
    unlink(out);
    unlink(target);
}

static void directory_device_and_missing_folder_are_refused(void **state)
{
    assert_int_equal(check2("output", tmpdir, "input", NULL), -1);
    assert_non_null(strstr(err, "is a directory"));
    assert_int_equal(check2("--stats-json", "/dev/null", "input", NULL), -1);
    assert_non_null(strstr(err, "--stats-json '/dev/null' exists and is not a regular file"));
    assert_int_equal(check2("--stats-json", "/nonexistent/x.json", "input", NULL), -1);
    assert_string_equal(err, "--stats-json '/nonexistent/x.json': cannot write into the folder "
                             "'/nonexistent': No such file or directory");
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/", tmpdir);
    assert_int_equal(check2("output", p, "input", NULL), -1);
    char file_as_dir[PATH_MAX];
    setup_files();
    snprintf(file_as_dir, sizeof file_as_dir, "%s/left.png/x.png", tmpdir);
    assert_int_equal(check2("output", file_as_dir, "input", NULL), -1);
    assert_non_null(strstr(err, "cannot write into the folder"));
}

static void read_only_folder_is_refused(void **state)
{
    if (geteuid() == 0)
        skip(); /* root writes anywhere */
    char dir[PATH_MAX], out[PATH_MAX + 16];
    tmp_path(dir, "ro");
    assert_int_equal(mkdir(dir, 0555), 0);
    snprintf(out, sizeof out, "%s/x.png", dir);
    int rc = check2("output", out, "input", NULL);
    rmdir(dir);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "Permission denied"));
}

static void missing_input_is_left_to_its_reader(void **state)
{
    char in[PATH_MAX], out[PATH_MAX];
    tmp_path(in, "missing.png");
    tmp_path(out, "out.png");
    assert_int_equal(check2("output", out, "input LEFT", in), 0);
}

static int write_half_then_fail(FILE *f, const char *path, const void *ctx, char *e, size_t n)
{
    fputs("partial", f);
    snprintf(e, n, "%s: simulated encoder failure", path);
    return -1;
}

static int count_entries(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* access() lets root "write" where no file can be made (/proc); the check makes the temporary
 * file the write would make, and removes it: refused there, nothing left where it passes */
static void folder_that_takes_no_file_is_refused(void **state)
{
    struct stat st;
    if (stat("/proc/self", &st) != 0)
        skip(); /* no procfs */
    assert_int_equal(check2("--output", "/proc/000001.pfm", "input", NULL), -1);
    assert_non_null(strstr(err, "--output '/proc/000001.pfm': cannot write into the folder "
                                "'/proc': "));
    if (geteuid() == 0) /* else access() refuses it first */
        assert_non_null(strstr(err, "creating a file there failed"));
    char out[PATH_MAX];
    int before = count_entries();
    assert_int_equal(check2("--output", tmp_path(out, "probe.pfm"), "input", NULL), 0);
    assert_int_equal(count_entries(), before);
}

static void failed_write_keeps_old_file_and_leaves_no_temp(void **state)
{
    char path[PATH_MAX], buf[64];
    write_text(tmp_path(path, "old.json"), "old", 3);
    int before = count_entries();
    assert_int_equal(atomic_write_file(path, write_half_then_fail, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "simulated encoder failure"));
    assert_int_equal(count_entries(), before);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "old", 3);
    unlink(path);
}

/* A name that fits alone but not with ".tmp.XXXXXX" is refused before the work, not lost after
 * it; one that fits with the suffix passes. */
static void name_too_long_for_its_temporary_file_is_refused(void **state)
{
    char name[300], path[PATH_MAX + 300];
    long name_max = pathconf(tmpdir, _PC_NAME_MAX);
    assert_true(name_max > 20 && name_max < 290);
    size_t fits = (size_t)name_max - (sizeof OUTPATH_TMP_SUFFIX - 1);
    memset(name, 'a', fits + 1);
    name[fits + 1] = '\0';
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    assert_int_equal(check2("output", path, "input LEFT", NULL), -1);
    assert_non_null(strstr(err, "with the temporary suffix '.tmp.XXXXXX'"));
    name[fits] = '\0';
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    assert_int_equal(check2("output", path, "input LEFT", NULL), 0);
    assert_int_equal(atomic_write_bytes(path, "x", 1, err, sizeof err), 0);
    unlink(path);
}

/* A FIFO without a writer, a device and a directory are refused at once, not waited on. */
static void input_fifo_and_device_are_refused_without_blocking(void **state)
{
    char fifo[PATH_MAX], why[160];
    tmp_path(fifo, "in.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(5); /* a blocking open would end the test here */
    assert_null(open_input_file(fifo, why, sizeof why));
    assert_string_equal(why, "is a FIFO, not a regular file");
    assert_int_equal(input_is_regular(fifo, why, sizeof why), -1);
    assert_null(open_input_file("/dev/zero", why, sizeof why));
    assert_string_equal(why, "is a device, not a regular file");
    assert_null(open_input_file(tmpdir, why, sizeof why));
    assert_null(open_input_file("/nonexistent/x", why, sizeof why));
    assert_non_null(strstr(why, "cannot open: "));
    alarm(0);
    char reg[PATH_MAX];
    write_text(tmp_path(reg, "reg.txt"), "abc", 3);
    FILE *f = open_input_file(reg, why, sizeof why);
    assert_non_null(f);
    char buf[4] = {0};
    assert_int_equal(fread(buf, 1, 3, f), 3); /* blocking reads again */
    assert_string_equal(buf, "abc");
    fclose(f);
    assert_int_equal(input_is_regular(reg, why, sizeof why), 0);
    unlink(fifo);
    unlink(reg);
}

static int write_half_then_signal(FILE *f, const char *path, const void *ctx, char *e, size_t n)
{
    fputs("half", f);
    fflush(f);
    raise(*(const int *)ctx);
    return 0;
}

/* SIGTERM or SIGINT in the middle of a write: the program ends by the signal and leaves neither
 * the temporary file nor a partial output. */
static void signal_mid_write_leaves_no_temporary_file(void **state)
{
    static const int sigs[] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        char path[PATH_MAX];
        tmp_path(path, "signalled.png");
        int before = count_entries();
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            outpath_remove_temps_on_signals();
            atomic_write_file(path, write_half_then_signal, &sigs[k], err, sizeof err);
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), sigs[k]);
        assert_int_equal(count_entries(), before);
        assert_int_equal(access(path, F_OK), -1);
    }
}

/* pattern outputs (a multifilesink's location): against names of the run it would make, files
 * there that are files of the run, and its own frames 0 and 1 */
static int check_pattern(const char *pattern, const char *in, const char *out)
{
    outpath_registry r = {0};
    outpath_add(&r, 0, "input", in);
    outpath_add(&r, 1, "--stats-json", out);
    outpath_add_pattern(&r, "--output multifilesink", pattern, 0);
    err[0] = '\0';
    int rc = outpath_registry_check(&r, NULL, NULL, err, sizeof err);
    outpath_registry_free(&r);
    return rc;
}

static void pattern_output_making_a_file_of_the_run_is_refused(void **state)
{
    char p[PATH_MAX], in[PATH_MAX], out[PATH_MAX], hard[PATH_MAX];
    write_text(tmp_path(in, "right_000002.png"), "r", 1);
    tmp_path(p, "right_%06d.png");
    assert_int_equal(check_pattern(p, in, NULL), -1);
    assert_non_null(strstr(err, "--output multifilesink '"));
    assert_non_null(strstr(err, "frame 2 of --output multifilesink '"));
    assert_non_null(strstr(err, "right_%06d.png' would replace input '"));
    assert_non_null(strstr(err, "right_000002.png'; choose another name"));
    /* an output not written yet: by name */
    assert_int_equal(check_pattern(tmp_path(p, "s_%d.json"), NULL, tmp_path(out, "s_12.json")), -1);
    assert_non_null(strstr(err, "frame 12 of --output multifilesink '"));
    assert_non_null(strstr(err, "would replace --stats-json '"));
    /* names the pattern does not make */
    assert_int_equal(check_pattern(tmp_path(p, "right_%04d.png"), in, tmp_path(out, "right_x.png")),
                     0);
    assert_int_equal(check_pattern(tmp_path(p, "%06d.png"), in, tmp_path(out, "1.png")), 0);
    /* a hard link of the input under a name the pattern makes */
    assert_int_equal(link(in, tmp_path(hard, "h_7.png")), 0);
    assert_int_equal(check_pattern(tmp_path(p, "h_%d.png"), in, NULL), -1);
    assert_non_null(strstr(err, "frame 7 of --output multifilesink '"));
    assert_non_null(strstr(err, "h_%d.png' would replace input '"));
    /* its frame 0 is checked as any output: here, the input itself */
    write_text(tmp_path(in, "z_0.png"), "z", 1);
    assert_int_equal(check_pattern(tmp_path(p, "z_%d.png"), in, NULL), -1);
    assert_non_null(strstr(err, "z_0.png' is the same file as input '"));
    /* no conversion, or one in the folder */
    assert_int_equal(check_pattern(tmp_path(p, "%d/x.png"), NULL, NULL), -1);
    assert_int_equal(check_pattern(tmp_path(p, "x_%s.png"), NULL, NULL), -1);
    assert_non_null(strstr(err, "frame-number conversion"));
}

static int make_tmpdir(void **state) { return tmpdir_make("test_outpath"); }
static int remove_tmpdir(void **state) { return tmpdir_remove(); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(output_equal_to_input_by_name_is_refused),
        cmocka_unit_test(output_equal_to_input_by_another_path_is_refused),
        cmocka_unit_test(output_hard_linked_to_input_is_refused),
        cmocka_unit_test(output_through_a_linked_folder_is_refused),
        cmocka_unit_test(pattern_frame_matches_only_what_the_pattern_writes),
        cmocka_unit_test(pattern_output_onto_a_later_frame_is_refused),
        cmocka_unit_test(two_outputs_naming_one_file_are_refused),
        cmocka_unit_test(symlink_output_is_refused),
        cmocka_unit_test(directory_device_and_missing_folder_are_refused),
        cmocka_unit_test(read_only_folder_is_refused),
        cmocka_unit_test(folder_that_takes_no_file_is_refused),
        cmocka_unit_test(missing_input_is_left_to_its_reader),
        cmocka_unit_test(failed_write_keeps_old_file_and_leaves_no_temp),
        cmocka_unit_test(name_too_long_for_its_temporary_file_is_refused),
        cmocka_unit_test(input_fifo_and_device_are_refused_without_blocking),
        cmocka_unit_test(signal_mid_write_leaves_no_temporary_file),
        cmocka_unit_test(pattern_output_making_a_file_of_the_run_is_refused),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
