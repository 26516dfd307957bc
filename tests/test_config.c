/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c — the live app's configuration (app/config.h): every key's bad values give
 * "FILE:LINE: KEY: ..." at the right line, unknown sections and keys, repeated keys, unreadable
 * files, the example files in config/, command-line overrides, the cross-field checks, and a
 * deterministic fuzzer over mutated example files.
 *
 * Run from the repository root (config/ is read): CMOCKA_MESSAGE_OUTPUT=TAP build/tests/test_config
 * The fuzzer runs 10000 iterations and stops early after 8 s; STEREO_FUZZ_ITERATIONS and
 * STEREO_FUZZ_SECONDS change both (a longer soak: both large, e.g. under ASan). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

static char tmpdir[64];
static char err[1024];

/* ---- helpers ------------------------------------------------------------------------------- */

static int setup_dir(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_config.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes len bytes into tmpdir/name; returns the path (static, valid until the next call). */
static const char *write_bytes(const char *name, const char *data, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}

static const char *write_text(const char *name, const char *text)
{
    return write_bytes(name, text, strlen(text));
}

/* Loads text over the defaults: the return value of live_config_load (err holds the message). */
static int load_text(const char *text, live_config *c, const char **path_out)
{
    const char *path = write_text("t.ini", text);
    if (path_out)
        *path_out = path;
    live_config_defaults(c);
    return live_config_load(path, c, err, sizeof err);
}

static void expect_in(const char *text, const char *want, const char *what)
{
    if (!strstr(text, want))
        fail_msg("%s: expected \"%s\" in \"%s\"", what, want, text);
}

/* Loads text that must fail at `line` with `key`: "PATH:LINE: KEY:". */
static void expect_load_error(const char *text, int line, const char *key)
{
    live_config c;
    const char *path;
    if (load_text(text, &c, &path) == 0)
        fail_msg("loaded without error:\n%s", text);
    char want[512];
    if (key)
        snprintf(want, sizeof want, "%s:%d: %s:", path, line, key);
    else
        snprintf(want, sizeof want, "%s:%d: ", path, line);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("expected \"%s...\", got \"%s\" for:\n%s", want, err, text);
}

/* The values only: where they came from (live_config_origin) forgotten, for comparisons. */
static void forget_origin(live_config *c)
{
    memset(c->config_file, 0, sizeof c->config_file);
    memset(c->key_line, 0, sizeof c->key_line);
}

static void load_ok(const char *text, live_config *c)
{
    if (load_text(text, c, NULL) != 0)
        fail_msg("%s\nfor:\n%s", err, text);
    assert_string_equal(err, "");
}

/* ---- defaults ------------------------------------------------------------------------------ */

static void test_defaults(void **state)
{
    live_config c;
    live_config_defaults(&c);
    assert_int_equal(c.source, SOURCE_SYNTH);
    assert_int_equal(c.synth_width, 640);
    assert_int_equal(c.synth_height, 480);
    assert_int_equal(c.synth_fps, 30);
    assert_int_equal(c.width, 640);
    assert_int_equal(c.height, 480);
    assert_int_equal(c.fps, 30);
    assert_int_equal(c.format, CAPTURE_FORMAT_AUTO);
    assert_int_equal(c.buffers, 4);
    assert_int_equal(c.max_skew_ms, 0);
    assert_int_equal(c.ncontrols, 0);
    assert_int_equal(c.files_fps, 0);
    assert_int_equal(c.files_loop, 1);
    stereo_params p;
    stereo_params_default(&p, 640, 480);
    assert_int_equal(c.stereo.num_disparities, 64);
    assert_int_equal(c.stereo.p1, p.p1);
    assert_int_equal(c.stereo.p2, p.p2);
    assert_int_equal(c.stereo.cost, p.cost);
    assert_int_equal(c.stereo.rank_window, p.rank_window);
    assert_int_equal(c.stereo.paths, p.paths);
    assert_int_equal(c.stereo.p2_adapt, p.p2_adapt);
    assert_int_equal(c.stereo.lr_check, 1);
    assert_int_equal(c.stereo.median, 1);
    assert_int_equal(c.stereo.subpixel, 1);
    assert_int_equal(c.stereo.backend, STEREO_BACKEND_AUTO);
    assert_int_equal(c.stereo.sms, 0);
    assert_int_equal(c.stage.p1_set, 0);
    assert_int_equal(c.stage.p2_set, 0);
    assert_int_equal(c.colormap, COLORMAP_TURBO);
    assert_int_equal(c.view, VIEW_DISPARITY);
    assert_string_equal(c.font, "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
    assert_int_equal(c.window_width, 0);
    assert_int_equal(c.window_height, 0);
    assert_int_equal(c.headless, 0);
    assert_string_equal(c.maps, "");
    assert_string_equal(c.record_dir, "");
    assert_int_equal(c.frames, 0);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    assert_string_equal(live_source_to_str(SOURCE_SBS), "sbs");
    assert_string_equal(live_view_to_str(VIEW_PAIR), "pair");
}

/* ---- every key: bad values at a known line ------------------------------------------------- */

#define LONG_NAME "a123456789b123456789c123456789d123456789" /* 40 characters */

static const struct {
    const char *section, *key;
    const char *bad[16]; /* NULL-terminated */
} bad_values[] = {
    {"source", "type", {"", "camera", "SYNTH", "synth2", "v4l2 sbs", "1"}},
    {"source", "left", {"video0", "v4l2://dev/video0", "csi://x", "gst://", "http://x/y"}},
    {"source", "right", {"/home/r.mp4", "rtsp://", "gst://videotestsrc !"}},
    {"source", "input", {"synth://?w=1", "file://", "synth://x", "csi://16"}},
    {"source", "view2", {"video4", "v4l2://dev/video4", "csi://x"}},
    {"source", "view3", {"gst://", "http://x/y"}},
    {"source", "view4", {"rtsp://"}},
    {"source", "view5", {"file://"}},
    {"source", "view6", {"synth://x"}},
    {"source", "view7", {"csi://16"}},
    {"camera", "left", {"", "\"/dev/video0\"", "/dev/video0 # the left one", "/dev/vi\001deo"}},
    {"camera", "right", {"", "'/dev/video1'", "/dev/video1\t# right"}},
    {"camera", "device", {"", "\"/dev/video0\""}},
    {"camera", "width", {"", "abc", "12abc", "-640", "0", "8193", "1e3", "0x10", "6 40",
                         "99999999999999999999", "640.0", "+"}},
    {"camera", "height", {"", "-1", "0", "8193", "480p"}},
    {"camera", "fps", {"", "-1", "1001", "30fps", "3.5", "thirty"}},
    {"camera", "format", {"", "mjpeg", "yuv", "rgb", "auto yuyv"}},
    {"camera", "buffers", {"", "3", "33", "four", "-4"}},
    {"camera", "max_skew_ms", {"", "-1", "1001", "5ms"}},
    {"files", "left", {"", "left_%s.png", "left_%d_%d.png", "left_%ld.png", "left_%", "left_%4",
                       "left_%123d.png", "left_%n.png", "left_%x.png", "\"left_%d.png\"",
                       "left_%.3d.png", "left.png", "left_%%.png"}},
    {"files", "right", {"", "right_%f.png", "r_%%_%d_%i.png"}},
    {"files", "fps", {"", "-1", "1001", "abc"}},
    {"files", "loop", {"", "maybe", "2", "TRUE", "Yes", "-1", "truee"}},
    {"synth", "width", {"", "31", "4097", "w", "-640"}},
    {"synth", "height", {"", "0", "31", "4097"}},
    {"synth", "fps", {"", "-1", "1001", "x"}},
    {"synth", "lose_view", {"2", "2,5", "0,1,2", "8,1,2", "2,5,4", "2,-1,3", "a,b,c", "2,1,2,3"}},
    {"stereo", "baselines", {"", "2", "2,-1", "1,0", "1,1", "1,-1,-1", "1,9", "1,0.3", "1,x",
                             "1,2,3,4,5,6,7,8", "1,,2", "-1"}},
    {"stereo", "combine", {"", "avg", "Sides", "min"}},
    {"stereo", "disparities", {"", "0", "8", "50", "65", "528", "-16", "64px", "1024"}},
    {"stereo", "min_disparity", {"", "-513", "2032", "a"}},
    {"stereo", "cost", {"", "ssd", "Rank", "census9x7", "mi2"}},
    {"stereo", "method", {"", "sgbm", "BM", "local"}},
    {"stereo", "block", {"", "1", "2", "33", "10", "9x9"}},
    {"stereo", "window", {"", "2", "4", "1", "17", "-3", "16", "9x9"}},
    {"stereo", "ad_weight", {"", "0", "17", "-3", "x"}},
    {"stereo", "paths", {"", "0", "5", "6", "16", "2", "eight"}},
    {"stereo", "p1", {"", "0", "1023", "-5", "p1", "8,0", "8,,8", "8,8,8,8,8,8,8,8,8"}},
    {"stereo", "p2", {"", "1", "0", "1024", "many", "90,1024", ",90"}},
    {"stereo", "path_weights", {"", "-1", "256", "0", "0,0,0,0,0,0,0,0", "1,,1", "a", "1,-1"}},
    {"stereo", "p2_adapt", {"", "-1", "256", "on"}},
    {"stereo", "mi_tiles", {"", "0", "9", "5x5"}},
    {"stereo", "uniqueness", {"", "-1", "100", "10%"}},
    {"stereo", "subpixel", {"", "2", "y", "enable", "onn"}},
    {"stereo", "lr_check", {"", "maybe", "01"}},
    {"stereo", "lr_tolerance", {"", "-1", "256", "1px"}},
    {"stereo", "median", {"", "3x3", "True"}},
    {"stereo", "band", {"", "-1", "65", "wide"}},
    {"stereo", "cross", {"", "-1", "35", "2px"}},
    {"stereo", "discontinuity", {"", "2", "adjust"}},
    {"stereo", "speckle_size", {"", "-1", "1048577", "100px"}},
    {"stereo", "speckle_diff", {"", "-1", "4096", "1.5"}},
    {"stereo", "vote", {"", "2", "majority"}},
    {"stereo", "interp", {"", "3", "median"}},
    {"stereo", "fill", {"", "2", "background"}},
    {"stereo", "temporal", {"", "maybe", "On1"}},
    {"stereo", "temporal_alpha", {"", "0", "17", "0.5"}},
    {"stereo", "temporal_delta", {"", "-1", "4096", "x"}},
    {"stereo", "temporal_persist", {"", "-1", "256", "3f"}},
    {"stereo", "backend", {"", "gpu", "CUDA", "opencl"}},
    {"stereo", "threads", {"", "-1", "257", "all"}},
    {"stereo", "sms", {"", "-1", "abc", "5000", "1025", "16 SMs", "8.5"}},
    {"stereo", "mi_warm", {"", "2", "warm", "True"}},
    {"stereo", "mi_restart", {"", "-1", "101", "50%", "0.5"}},
    {"calibration", "maps", {"\"rig.maps\"", "rig.maps # the rig", "'rig.yml'",
                             /* LEFT,RIGHT camera_info pairs */
                             "left.yaml,", ",right.yaml", " , ", "l.yaml,r.yaml,x.yaml",
                             "cam.yaml, cam.yaml"}},
    {"calibration", "focal", {"", "-1", "abc", "nan", "inf", "1e8", "500px", "0x"}},
    {"calibration", "baseline", {"", "-0.1", "x", "1e5", "0.1 m"}},
    {"calibration", "center", {"1", "1,", ",2", "a,b", "1,2,3", "1e7,0", "nan,1"}},
    {"display", "headless", {"", "maybe", "10"}},
    {"display", "fullscreen", {"", "nope"}},
    {"display", "width", {"", "-1", "8193", "wide"}},
    {"display", "height", {"", "-1", "8193", "tall"}},
    {"display", "colormap", {"", "rainbow", "Turbo", "viridis"}},
    {"display", "view", {"", "depthmap", "right", "both"}},
    {"display", "color_range", {"", "Auto", "percentile", "0,64"}},
    {"display", "legend", {"", "shown"}},
    {"display", "font", {"", "'DejaVuSans.ttf'", "x.ttf # bold"}},
    {"record", "dir", {"\"rec\"", "rec # today"}},
    {"record", "depth", {"", "maybe", "png"}},
    {"run", "frames", {"", "-1", "ten", "9223372036854775808", "1e6"}},
    {"run", "screenshot", {"'shot.png'", "shot.png # last frame"}},
    {"output", "uri", {"ftp://x", "out.pfm", "file://out.pfm", "ros2://?domain=233"}},
    {"output", "uri2", {"display://x", "file://a_%d.jpg", "ros2://9robot"}},
    {"output", "uri3", {"rtp://host", "rtsp://cam:8554/x", "gst://videotestsrc ! appsrc"}},
    {"output", "uri4", {"ros2://?qos=fast", "file://a_%d.ply?depth=1"}},
    {"output", "uri5", {"rtp://h:5000?bitrate=1"}},
    {"output", "uri6", {"ros2://?colour=1"}},
    {"output", "uri7", {"gst://appsrc"}},
    {"output", "uri8", {"rtsp://@:8554"}},
    /* [controls]: the control's name is the key */
    {"controls", "gain", {"", "x", "1.5", "2147483648", "-2147483649", "0x10"}},
};

static void test_bad_values(void **state)
{
    int cases = 0;
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
        const char *sec = bad_values[i].section, *key = bad_values[i].key;
        /* a valid key in another section first, so the bad one is on line 8 */
        const char *filler = strcmp(sec, "record") ? "[record]\ndir = rec" : "[run]\nframes = 5";
        for (int j = 0; bad_values[i].bad[j]; j++) {
            char text[512];
            snprintf(text, sizeof text, "# test\n%s\n\n[%s]\n; the bad one is next-but-one\n\n"
                     "%s = %s\n[display]\n", filler, sec, key, bad_values[i].bad[j]);
            expect_load_error(text, 8, key);
            /* the same through live_config_set: "KEY: ..." */
            live_config c;
            live_config_defaults(&c);
            if (live_config_set(&c, sec, key, bad_values[i].bad[j], err, sizeof err) == 0)
                fail_msg("live_config_set [%s] %s = '%s' succeeded", sec, key,
                         bad_values[i].bad[j]);
            char want[64];
            snprintf(want, sizeof want, "%s: ", key);
            if (strncmp(err, want, strlen(want)) != 0)
                fail_msg("set [%s] %s = '%s': \"%s\"", sec, key, bad_values[i].bad[j], err);
            cases++;
        }
    }
    printf("# %d bad values over %zu keys\n", cases, sizeof bad_values / sizeof bad_values[0]);
}

/* A failed load or set leaves the configuration as it was. */
static void test_failures_change_nothing(void **state)
{
    live_config a, b;
    live_config_defaults(&a);
    const char *path = write_text("t.ini", "[stereo]\ndisparities = 128\ncost = census\n"
                                           "[display]\nview = left\ncolormap = magenta\n");
    b = a;
    assert_int_equal(live_config_load(path, &b, err, sizeof err), -1);
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(live_config_set(&b, "stereo", "disparities", "100", err, sizeof err), -1);
    assert_string_equal(err, "disparities: 100 is not a multiple of 16 (try 96 or 112)");
    assert_int_equal(live_config_set(&b, "stereo", "disparities", "528", err, sizeof err), -1);
    assert_string_equal(err, "disparities: 528 is outside 16..512");
    assert_int_equal(live_config_set(&b, "controls", "gain", "lots", err, sizeof err), -1);
    assert_int_equal(live_config_set(&b, "files", "left", "l_%s", err, sizeof err), -1);
    assert_memory_equal(&a, &b, sizeof a);
}

/* ---- good values ----------------------------------------------------------------------------- */

static void test_good_values(void **state)
{
    live_config c;
    load_ok("[source]\ntype = files\n"
            "[camera]\nleft = /dev/v4l/by-id/usb-cam-L-video-index0\nright = /dev/video3\n"
            "device = /dev/video9\nwidth = 1280\nheight = 720\nfps = 0\nformat = GREY\n"
            "buffers = 32\nmax_skew_ms = 7\n"
            "[controls]\nauto_exposure = 1\nexposure_time_absolute = 250\ngain = -3\n"
            "0x00980913 = 2147483647\n"
            "[files]\nleft = rec/l_%06d.png\nright = rec/100%%_%-3u.pgm\nfps = 1000\nloop = off\n"
            "[synth]\nwidth = 32\nheight = 4096\nfps = 0\n"
            "[stereo]\ndisparities = 256\nmin_disparity = 16\ncost = census\nwindow = 15\n"
            "paths = 8\np2_adapt = 0\nuniqueness = 99\nsubpixel = no\nlr_check = 0\n"
            "lr_tolerance = 255\nmedian = false\nbackend = cpu\nthreads = 256\nsms = 1024\n"
            "[calibration]\nmaps = rig.yml\n"
            "[display]\nheadless = yes\nfullscreen = on\nwidth = 1920\nheight = 1080\n"
            "colormap = gray\nview = depth\nfont = /tmp/f.ttf\n"
            "[record]\ndir = /tmp/rec dir\n"
            "[run]\nframes = 9223372036854775807\nscreenshot = out.png\n",
            &c);
    assert_int_equal(c.source, SOURCE_FILES);
    assert_string_equal(c.left_device, "/dev/v4l/by-id/usb-cam-L-video-index0");
    assert_string_equal(c.right_device, "/dev/video3");
    assert_string_equal(c.sbs_device, "/dev/video9");
    assert_int_equal(c.width, 1280);
    assert_int_equal(c.height, 720);
    assert_int_equal(c.fps, 0);
    assert_int_equal(c.format, CAPTURE_FORMAT_GREY);
    assert_int_equal(c.buffers, 32);
    assert_int_equal(c.max_skew_ms, 7);
    assert_int_equal(c.ncontrols, 4);
    assert_string_equal(c.controls[0].name, "auto_exposure");
    assert_int_equal(c.controls[0].value, 1);
    assert_string_equal(c.controls[1].name, "exposure_time_absolute");
    assert_int_equal(c.controls[1].value, 250);
    assert_int_equal(c.controls[2].value, -3);
    assert_string_equal(c.controls[3].name, "0x00980913");
    assert_int_equal(c.controls[3].value, INT32_MAX);
    assert_string_equal(c.left_pattern, "rec/l_%06d.png");
    assert_string_equal(c.right_pattern, "rec/100%%_%-3u.pgm");
    assert_int_equal(c.files_fps, 1000);
    assert_int_equal(c.files_loop, 0);
    assert_int_equal(c.synth_width, 32);
    assert_int_equal(c.synth_height, 4096);
    assert_int_equal(c.synth_fps, 0);
    assert_int_equal(c.stereo.num_disparities, 256);
    assert_int_equal(c.stereo.min_disparity, 16);
    assert_int_equal(c.stereo.cost, STEREO_COST_CENSUS);
    assert_int_equal(c.stereo.rank_window, 15);
    assert_int_equal(c.stereo.paths, 8);
    assert_int_equal(c.stereo.p2_adapt, 0);
    assert_int_equal(c.stereo.uniqueness, 99);
    assert_int_equal(c.stereo.subpixel, 0);
    assert_int_equal(c.stereo.lr_check, 0);
    assert_int_equal(c.stereo.lr_tolerance, 255);
    assert_int_equal(c.stereo.median, 0);
    assert_int_equal(c.stereo.backend, STEREO_BACKEND_CPU);
    assert_int_equal(c.stereo.threads, 256);
    assert_int_equal(c.stereo.sms, 1024);
    /* census penalties, not given: tuned */
    assert_int_equal(c.stereo.p1, 32);
    assert_int_equal(c.stereo.p2, 128);
    assert_string_equal(c.maps, "rig.yml");
    assert_int_equal(c.headless, 1);
    assert_int_equal(c.fullscreen, 1);
    assert_int_equal(c.window_width, 1920);
    assert_int_equal(c.window_height, 1080);
    assert_int_equal(c.colormap, COLORMAP_GREY);
    assert_int_equal(c.view, VIEW_DEPTH);
    assert_string_equal(c.font, "/tmp/f.ttf");
    assert_string_equal(c.record_dir, "/tmp/rec dir");
    assert_int_equal(c.frames, 9223372036854775807L);
    assert_string_equal(c.screenshot, "out.png");

    /* every boolean word */
    const char *yes[] = {"true", "yes", "on", "1"}, *no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        live_config_defaults(&c);
        assert_int_equal(live_config_set(&c, "display", "headless", yes[i], err, sizeof err), 0);
        assert_int_equal(c.headless, 1);
        assert_int_equal(live_config_set(&c, "display", "headless", no[i], err, sizeof err), 0);
        assert_int_equal(c.headless, 0);
    }
    /* empty means "off" for these paths, and clears an earlier value */
    live_config_defaults(&c);
    assert_int_equal(live_config_set(&c, "calibration", "maps", "rig.maps", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "run", "screenshot", "a.png", err, sizeof err), 0);
    const char *path = write_text("empty.ini", "[calibration]\nmaps =\n[record]\ndir=\n[run]\n"
                                               "screenshot = ; none\n");
    assert_int_equal(live_config_load(path, &c, err, sizeof err), 0);
    assert_string_equal(c.maps, "");
    assert_string_equal(c.screenshot, "");
    /* a pair of ROS camera_info files, kept as written (hal/calib.c splits it) */
    path = write_text("pair.ini", "[calibration]\nmaps = ros/left.yaml, ros/right.yaml\n");
    assert_int_equal(live_config_load(path, &c, err, sizeof err), 0);
    assert_string_equal(c.maps, "ros/left.yaml, ros/right.yaml");
    assert_int_equal(live_config_set(&c, "calibration", "maps", "l.yaml,r.yaml", err, sizeof err),
                     0);
    assert_string_equal(c.maps, "l.yaml,r.yaml");
    assert_int_equal(live_config_set(&c, "calibration", "maps", "l.yaml,", err, sizeof err), -1);
    assert_string_equal(err, "maps: 'l.yaml,': the right camera's camera_info file is missing "
                             "(LEFT,RIGHT)");
    assert_string_equal(c.maps, "l.yaml,r.yaml");
}

/* ---- structure: sections, keys, repeats, unparsable lines ---------------------------------- */

static void test_unknown_section(void **state)
{
    expect_load_error("[source]\ntype = synth\n[cameras]\nwidth = 640\n", 3, "[cameras]");
    /* empty, and at the end of the file */
    expect_load_error("[source]\ntype = synth\n\n[extra]\n", 4, "[extra]");
    expect_load_error("[ source ]\ntype = synth\n", 1, "[ source ]");
    expect_load_error("[Source]\ntype = synth\n", 1, "[Source]");
    expect_load_error("[source] type = synth\n", 1, "[source]");
    expect_load_error("[]\n", 1, "[]");
    expect_in(err, "unknown section", "[]");
    /* a comment after the header is fine */
    live_config c;
    load_ok("[source] ; where from\ntype = sbs\n[camera] # the camera\ndevice = /dev/video0\n",
            &c);
    assert_int_equal(c.source, SOURCE_SBS);
    /* a very long section name */
    char text[256];
    snprintf(text, sizeof text, "\n[%0150d]\n", 0);
    expect_load_error(text, 2, NULL);
    expect_in(err, "unknown section", "long section");

    live_config_defaults(&c);
    assert_int_equal(live_config_set(&c, "cameras", "width", "640", err, sizeof err), -1);
    expect_in(err, "[cameras]: unknown section", "set");
}

static void test_unknown_key(void **state)
{
    expect_load_error("[source]\ntype = synth\n[camera]\nwidht = 640\n", 4, "widht");
    expect_in(err, "unknown key in [camera]", "widht");
    expect_in(err, "width", "the known keys are listed");
    expect_load_error("[stereo]\nDisparities = 64\n", 2, "Disparities");
    expect_load_error("[synth]\nformat = yuyv\n", 2, "format");  /* a key of another section */
    expect_load_error("[display]\nconfidence = 1\n", 2, "confidence");
    /* a key before any section */
    expect_load_error("# hello\ntype = synth\n[source]\n", 2, "type");
    expect_in(err, "before the first [section]", "no section");
    /* a key without a name */
    expect_load_error("[run]\n = 5\n", 2, NULL);
    /* a control name with characters v4l2-ctl never writes, or too long */
    expect_load_error("[controls]\nauto exposure = 1\n", 2, "auto exposure");
    expect_load_error("[controls]\nwhite-balance = 1\n", 2, "white-balance");
    expect_load_error("[controls]\n" LONG_NAME " = 1\n", 2, LONG_NAME);
}

static void test_controls(void **state)
{
    live_config c;
    /* 39 characters is the longest name */
    load_ok("[controls]\na123456789b123456789c123456789d12345678 = 1\n", &c);
    assert_int_equal(c.ncontrols, 1);
    /* CAPTURE_MAX_CONTROLS, then one too many */
    char text[2048] = "[controls]\n";
    for (int i = 0; i < CAPTURE_MAX_CONTROLS; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "c%d = %d\n", i, i);
    load_ok(text, &c);
    assert_int_equal(c.ncontrols, CAPTURE_MAX_CONTROLS);
    assert_int_equal(c.controls[15].value, 15);
    snprintf(text + strlen(text), sizeof text - strlen(text), "one_more = 1\n");
    expect_load_error(text, CAPTURE_MAX_CONTROLS + 2, "one_more");
    expect_in(err, "more than 16 controls", "too many");
    /* an override replaces a control's value, in place */
    load_ok("[controls]\nauto_exposure = 3\ngain = 1\n", &c);
    assert_int_equal(live_config_set(&c, "controls", "auto_exposure", "1", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "controls", "brightness", "-20", err, sizeof err), 0);
    assert_int_equal(c.ncontrols, 3);
    assert_string_equal(c.controls[0].name, "auto_exposure");
    assert_int_equal(c.controls[0].value, 1);
    assert_string_equal(c.controls[2].name, "brightness");
    assert_int_equal(c.controls[2].value, -20);
    /* a second file replaces too (only repeats within one file are errors) */
    const char *path = write_text("second.ini", "[controls]\ngain = 7\n");
    assert_int_equal(live_config_load(path, &c, err, sizeof err), 0);
    assert_int_equal(c.ncontrols, 3);
    assert_int_equal(c.controls[1].value, 7);
}

static void test_repeated_key(void **state)
{
    expect_load_error("[stereo]\ndisparities = 64\npaths = 8\ndisparities = 128\n", 4,
                      "disparities");
    expect_in(err, "repeated (first set on line 2)", "repeat");
    /* also across two headers of the same section, and with the same value */
    expect_load_error("[stereo]\npaths = 8\n[display]\nview = left\n[stereo]\npaths = 8\n", 6,
                      "paths");
    expect_load_error("[controls]\ngain = 1\nbrightness = 2\ngain = 1\n", 4, "gain");
    expect_in(err, "repeated (first set on line 2)", "repeated control");
    /* the same key name in different sections is not a repeat */
    live_config c;
    load_ok("[camera]\nwidth = 800\n[synth]\nwidth = 320\n[display]\nwidth = 100\nheight = 50\n",
            &c);
    assert_int_equal(c.width, 800);
    assert_int_equal(c.synth_width, 320);
    assert_int_equal(c.window_width, 100);
    /* a section header twice is fine */
    load_ok("[stereo]\npaths = 8\n[run]\nframes = 3\n[stereo]\nmedian = off\n", &c);
    assert_int_equal(c.stereo.paths, 8);
    assert_int_equal(c.stereo.median, 0);
}

static void test_cannot_parse(void **state)
{
    expect_load_error("[source]\ntype = synth\nthis line has no equals sign\n", 3, NULL);
    expect_in(err, "cannot parse this line", "no =");
    expect_load_error("[source\ntype = synth\n", 1, NULL);
    expect_in(err, "cannot parse this line", "no ]");
    /* the first bad line is reported, whatever kind of error comes later */
    expect_load_error("[run]\nframes = 1\nxyz\n[stereo]\npaths = 5\n", 3, NULL);
    expect_load_error("[run]\nframes = x\nxyz\n", 2, "frames");
    /* an indented line is an ordinary line, never the continuation of the previous value */
    live_config c;
    load_ok("[stereo]\n    disparities = 96\n\tpaths = 8\n", &c);
    assert_int_equal(c.stereo.num_disparities, 96);
    assert_int_equal(c.stereo.paths, 8);
    expect_load_error("[files]\nleft = a_%d.png\n   b_%d.png\n", 3, NULL);
    expect_in(err, "cannot parse this line", "continuation");
}

static void test_line_handling(void **state)
{
    live_config c;
    /* CR LF, a byte order mark, `key: value`, inline ';' comments, no newline at the end */
    load_ok("\xEF\xBB\xBF[stereo]\r\ndisparities: 32\r\npaths = 8 ; slower\r\n"
            "; comment\r\n# comment\r\n[display]\r\nview = left", &c);
    assert_int_equal(c.stereo.num_disparities, 32);
    assert_int_equal(c.stereo.paths, 8);
    assert_int_equal(c.view, VIEW_LEFT);
    /* an over-long line is refused at its own line, and the lines after it are not misnumbered */
    char text[4096];
    snprintf(text, sizeof text, "[run]\nframes = 1\nscreenshot = %0300d.png\n", 0);
    expect_load_error(text, 3, NULL);
    expect_in(err, "characters long", "long line");
    /* even a long comment is refused: inih would parse its second part as a line of its own */
    snprintf(text, sizeof text, "[run]\n# %0400d\nframes = -1\n", 0);
    expect_load_error(text, 2, NULL);
    snprintf(text, sizeof text, "[run]\n# %0190d\nframes = -1\n", 0);
    expect_load_error(text, 3, "frames"); /* a long comment that fits */
    /* a NUL byte */
    const char nul[] = "[run]\nframes = 1\0 2\n";
    const char *path = write_bytes("nul.ini", nul, sizeof nul - 1);
    live_config_defaults(&c);
    assert_int_equal(live_config_load(path, &c, err, sizeof err), -1);
    char want[300];
    snprintf(want, sizeof want, "%s:2: ", path);
    expect_in(err, want, "NUL");
    /* an empty file and a file of comments change nothing */
    live_config d;
    live_config_defaults(&d);
    load_ok("", &c);
    forget_origin(&c);
    assert_memory_equal(&c, &d, sizeof c);
    load_ok("# nothing\n\n; here\n", &c);
    forget_origin(&c);
    assert_memory_equal(&c, &d, sizeof c);
}

static void test_files_that_cannot_be_read(void **state)
{
    live_config c;
    live_config_defaults(&c);
    char path[300];
    snprintf(path, sizeof path, "%s/no-such-file.ini", tmpdir);
    assert_int_equal(live_config_load(path, &c, err, sizeof err), -1);
    char want[400];
    snprintf(want, sizeof want, "%s: cannot open: %s", path, strerror(ENOENT));
    assert_string_equal(err, want);
    /* a directory */
    assert_int_equal(live_config_load(tmpdir, &c, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: cannot open: %s", tmpdir, strerror(EISDIR));
    assert_string_equal(err, want);
    /* a device that never ends, and a FIFO without a writer (which used to block in open):
     * refused before reading, without blocking */
    live_config d;
    live_config_defaults(&d);
    assert_int_equal(live_config_load("/dev/zero", &c, err, sizeof err), -1);
    assert_string_equal(err, "/dev/zero: is a device, not a regular file");
    assert_memory_equal(&c, &d, sizeof c);
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo.ini", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(live_config_load(fifo, &c, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: is a FIFO, not a regular file", fifo);
    assert_string_equal(err, want);
    unlink(fifo);
    /* a line without an end */
    size_t big = 3u << 20;
    char *buf = malloc(big);
    assert_non_null(buf);
    memset(buf, 'x', big);
    const char *p = write_bytes("endless.ini", buf, 5000);
    assert_int_equal(live_config_load(p, &c, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:1: the line is longer than 4096 bytes", p);
    assert_string_equal(err, want);
    /* a file far larger than a configuration, of short lines */
    for (size_t i = 0; i < big; i += 64)
        memcpy(buf + i, "# a comment line of sixty-four bytes, as many as fit in 3 MB ..\n", 64);
    p = write_bytes("huge.ini", buf, big);
    free(buf);
    assert_int_equal(live_config_load(p, &c, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: larger than 1048576 bytes: not a configuration", p);
    expect_in(err, want, "huge file");
    assert_memory_equal(&c, &d, sizeof c);
    /* no permission (root reads anything: skipped then) */
    p = write_text("secret.ini", "[run]\nframes = 1\n");
    assert_int_equal(chmod(p, 0), 0);
    if (geteuid() != 0) {
        assert_int_equal(live_config_load(p, &c, err, sizeof err), -1);
        snprintf(want, sizeof want, "%s: cannot open: %s", p, strerror(EACCES));
        assert_string_equal(err, want);
    }
}

/* ---- the example files ---------------------------------------------------------------------- */

static void load_example(const char *name, live_config *c)
{
    char path[256];
    snprintf(path, sizeof path, "config/%s", name);
    live_config_defaults(c);
    if (live_config_load(path, c, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (live_config_check(c, err, sizeof err) != 0)
        fail_msg("%s: check: %s", path, err);
}

static void test_examples(void **state)
{
    live_config c, d;
    load_example("generated-scene.ini", &c);
    live_config_defaults(&d);
    forget_origin(&c);
    assert_memory_equal(&c, &d, sizeof c); /* the defaults, written out */

    load_example("two-usb-cameras.ini", &c);
    assert_int_equal(c.source, SOURCE_V4L2);
    assert_non_null(strstr(c.left_device, "/dev/v4l/by-id/"));
    assert_non_null(strstr(c.right_device, "/dev/v4l/by-id/"));
    assert_int_equal(c.width, 640);
    assert_int_equal(c.height, 480);
    assert_int_equal(c.fps, 30);
    assert_int_equal(c.format, CAPTURE_FORMAT_YUYV);
    assert_string_equal(c.maps, "rig.maps");
    assert_true(c.ncontrols >= 2);
    assert_string_equal(c.controls[0].name, "auto_exposure");
    assert_int_equal(c.controls[0].value, 1);
    assert_string_equal(c.controls[1].name, "exposure_time_absolute");

    load_example("side-by-side.ini", &c);
    assert_int_equal(c.source, SOURCE_SBS);
    assert_int_equal(c.width, 2560);
    assert_int_equal(c.height, 720);
    assert_non_null(strstr(c.sbs_device, "/dev/v4l/by-id/"));

    load_example("jetson-csi.ini", &c);
    assert_string_equal(c.source_left, "csi://0");
    assert_string_equal(c.source_right, "csi://1");
    assert_int_equal(c.format, CAPTURE_FORMAT_GREY);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);

    load_example("three-cameras.ini", &c);
    assert_int_equal(c.stereo.views, 3);
    assert_int_equal(c.stereo.baseline[1], STEREO_BASELINE_SCALE);
    assert_int_equal(c.stereo.baseline[2], -STEREO_BASELINE_SCALE);
    assert_int_equal(c.stereo.combine, STEREO_COMBINE_SIDES);
    assert_non_null(strstr(c.source_view[2], "REPLACE_WITH_LEFT_CAMERA"));
    assert_string_equal(c.maps, "rig.yml");

    load_example("file-replay.ini", &c);
    assert_int_equal(c.source, SOURCE_FILES);
    assert_non_null(strstr(c.left_pattern, "left_%04d.png"));
    assert_non_null(strstr(c.right_pattern, "right_%04d.png"));
    assert_int_equal(c.files_fps, 30);
    assert_int_equal(c.files_loop, 1);
}

/* config/README.md's key table lists exactly the keys tested above (and every one loads), and
 * among them every [stereo] key of the stage option table, which replay.ini writes. */
static void test_readme_lists_every_key(void **state)
{
    FILE *f = fopen("config/README.md", "r");
    assert_non_null(f);
    char line[1024];
    int rows = 0;
    int listed[128] = {0}; /* per row of stereo_option_table */
    assert_true(stereo_option_count() <= (int)NELEMS(listed));
    while (fgets(line, sizeof line, f)) {
        char sec[64], key[64];
        int end = 0;
        if (sscanf(line, "| %63[a-z] | %63[a-z0-9_*] |%n", sec, key, &end) != 2 || !end ||
            !strcmp(sec, "section"))
            continue;
        rows++;
        const stereo_option_info *row = strcmp(sec, "stereo") ? NULL : stereo_option_by_key(key);
        if (row)
            listed[row - stereo_option_table]++;
        int found = 0;
        for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++)
            found |= !strcmp(bad_values[i].section, sec) &&
                     (!strcmp(bad_values[i].key, key) || !strcmp(sec, "controls"));
        if (!found)
            fail_msg("config/README.md lists [%s] %s, which the test does not know", sec, key);
    }
    fclose(f);
    assert_int_equal(rows, (int)(sizeof bad_values / sizeof bad_values[0]));
    for (int i = 0; i < stereo_option_count(); i++)
        if (listed[i] != 1)
            fail_msg("config/README.md lists [stereo] %s %d times", stereo_option_table[i].key,
                     listed[i]);
}

/* ---- overrides and cross-field checks ------------------------------------------------------- */

static void test_set_overrides(void **state)
{
    live_config c;
    load_example("two-usb-cameras.ini", &c);
    assert_int_equal(live_config_set(&c, "stereo", "disparities", "128", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "display", "headless", "true", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "calibration", "maps", "", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "camera", "left", "/dev/video4", err, sizeof err), 0);
    assert_int_equal(c.stereo.num_disparities, 128);
    assert_int_equal(c.headless, 1);
    assert_string_equal(c.maps, "");
    assert_string_equal(c.left_device, "/dev/video4");
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);

    /* errors name the key, with no file or line */
    assert_int_equal(live_config_set(&c, "stereo", "paths", "6", err, sizeof err), -1);
    assert_string_equal(err, "paths: 6 is neither 4 nor 8");
    assert_int_equal(live_config_set(&c, "stereo", "dispariteis", "64", err, sizeof err), -1);
    expect_in(err, "dispariteis: unknown key in [stereo]; did you mean disparities?", "unknown key");
    /* the whole key list, not cut short; no suggestion for a name far from every key */
    assert_int_equal(live_config_set(&c, "stereo", "disparity", "64", err, sizeof err), -1);
    expect_in(err, "did you mean disparities?", "a near miss");
    expect_in(err, "temporal_persist, backend, threads, sms)", "the list to its end");
    assert_int_equal(live_config_set(&c, "stereo", "zzz", "64", err, sizeof err), -1);
    assert_null(strstr(err, "did you mean"));
    assert_int_equal(live_config_set(&c, "stereo", "disparities", NULL, err, sizeof err), -1);
    assert_int_equal(live_config_set(&c, NULL, "disparities", "64", err, sizeof err), -1);
    /* a path longer than the buffers (only the command line can give one: a file line cannot) */
    char path[CONFIG_PATH_MAX + 10];
    memset(path, 'a', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    assert_int_equal(live_config_set(&c, "calibration", "maps", path, err, sizeof err), -1);
    expect_in(err, "maps: the path is 521 characters long; at most 511 fit", "long path");
    path[CONFIG_PATH_MAX - 1] = '\0';
    assert_int_equal(live_config_set(&c, "calibration", "maps", path, err, sizeof err), 0);
    assert_int_equal(strlen(c.maps), CONFIG_PATH_MAX - 1);
    path[CONFIG_PATH_MAX] = '\0';
    path[CONFIG_PATH_MAX - 1] = 'a';
    assert_int_equal(live_config_set(&c, "record", "dir", path, err, sizeof err), -1);

    /* penalties not given follow the cost and window; given ones stay */
    live_config_defaults(&c);
    int p1, p2;
    assert_int_equal(live_config_set(&c, "stereo", "cost", "census", err, sizeof err), 0);
    stereo_default_penalties(STEREO_COST_CENSUS, 9, &p1, &p2);
    assert_int_equal(c.stereo.p1, p1);
    assert_int_equal(c.stereo.p2, p2);
    assert_int_equal(live_config_set(&c, "stereo", "cost", "mi", err, sizeof err), 0);
    stereo_default_penalties(STEREO_COST_MI, 9, &p1, &p2);
    assert_int_equal(c.stereo.p1, p1);
    assert_int_equal(c.stereo.p2, p2);
    assert_int_equal(c.stereo.mi_warm, 1); /* the app's default: warm frames */
    assert_int_equal(live_config_set(&c, "stereo", "cost", "rank", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "stereo", "window", "5", err, sizeof err), 0);
    stereo_default_penalties(STEREO_COST_RANK, 5, &p1, &p2);
    assert_int_equal(c.stereo.p1, p1);
    assert_int_equal(c.stereo.p2, p2);
    assert_int_equal(live_config_set(&c, "stereo", "p1", "40", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "stereo", "cost", "census", err, sizeof err), 0);
    assert_int_equal(c.stereo.p1, 40);
    assert_int_equal(c.stereo.p2, 128);
    assert_int_equal(live_config_set(&c, "stereo", "p1", "200", err, sizeof err), 0);
    assert_int_equal(c.stereo.p2, 201); /* kept above p1 while not given */
    assert_int_equal(live_config_set(&c, "stereo", "p2", "300", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "stereo", "cost", "rank", err, sizeof err), 0);
    assert_int_equal(c.stereo.p1, 200);
    assert_int_equal(c.stereo.p2, 300);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    /* p2 <= p1 from the command line: the cross check catches it (options come in any order) */
    assert_int_equal(live_config_set(&c, "stereo", "p2", "100", err, sizeof err), 0);
    assert_int_equal(live_config_check(&c, err, sizeof err), -1);
    /* worded as stereo-match words it (the keys came from the command line) */
    assert_string_equal(err, "--p2: 100 must be greater than --p1 200");
}

/* [stereo] sms: the messages in full, from the file (FILE:LINE) and from --set */
static void test_sms(void **state)
{
    live_config c;
    const char *path;
    static const struct {
        const char *value, *msg;
    } bad[] = {
        {"-1", "sms: '-1' is not an integer in 0..1024"},
        {"abc", "sms: 'abc' is not an integer in 0..1024"},
        {"5000", "sms: '5000' is not an integer in 0..1024"},
    };
    for (size_t i = 0; i < NELEMS(bad); i++) {
        char text[64], want[512];
        snprintf(text, sizeof text, "[stereo]\npaths = 4\nsms = %s\n", bad[i].value);
        assert_int_equal(load_text(text, &c, &path), -1);
        snprintf(want, sizeof want, "%s:3: %s", path, bad[i].msg);
        assert_string_equal(err, want);
        live_config_defaults(&c);
        assert_int_equal(live_config_set(&c, "stereo", "sms", bad[i].value, err, sizeof err), -1);
        assert_string_equal(err, bad[i].msg);
        assert_int_equal(c.stereo.sms, 0);
    }
    load_ok("[stereo]\nsms = 16\n", &c);
    assert_int_equal(c.stereo.sms, 16);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "stereo", "sms", "0", err, sizeof err), 0);
    assert_int_equal(c.stereo.sms, 0);
}

static void test_penalties_in_file(void **state)
{
    live_config c;
    expect_load_error("[stereo]\np2 = 20\n", 2, "p2");
    expect_in(err, "p2: 20 must be greater than p1 40", "p2 below the default p1");
    expect_load_error("[stereo]\np1 = 50\n\np2 = 50\n", 4, "p2");
    /* at the later line of the two, worded as stereo-match words it with the keys' names */
    expect_load_error("[stereo]\np2 = 50\n\np1 = 60\n", 4, "p2");
    expect_in(err, "p2: 50 must be greater than p1 60", "p1 above p2");
    /* order does not matter when both are right */
    load_ok("[stereo]\np2 = 20\np1 = 10\n", &c);
    assert_int_equal(c.stereo.p1, 10);
    assert_int_equal(c.stereo.p2, 20);
    assert_int_equal(c.stage.p1_set + c.stage.p2_set, 2);
    /* census set after the penalties keeps them */
    load_ok("[stereo]\np1 = 30\ncost = census\n", &c);
    assert_int_equal(c.stereo.p1, 30);
    assert_int_equal(c.stereo.p2, 128);
}

/* issue #11: cost, method, block, per-path p1 / p2 lists and path weights */
static void test_costs_methods_and_path_lists(void **state)
{
    live_config c;
    load_ok("[stereo]\ncost = bt\nmethod = bm\nblock = 15\n", &c);
    assert_int_equal(c.stereo.cost, STEREO_COST_BT);
    assert_int_equal(c.stereo.method, STEREO_METHOD_BM);
    assert_int_equal(c.stereo.block, 15);
    expect_load_error("[stereo]\nmethod = sgbm\n", 2, "method");
    expect_in(err, "'sgbm' is not one of sgm, bm", "method");
    expect_load_error("[stereo]\ncost = sad\n", 2, "cost");
    expect_in(err, "'sad' is not one of rank, census, ad, bt, mi", "cost");
    expect_load_error("[stereo]\nblock = 33\n", 2, "block");
    expect_load_error("[stereo]\nblock = 10\n", 2, "block");
    expect_in(err, "10 is not odd", "block");
    /* p1 / p2: one value, or one per path; the scalar takes the first */
    load_ok("[stereo]\npaths = 8\np1 = 8, 8,12,12,10,10,10,10\np2 = 90\n", &c);
    assert_int_equal(c.stereo.p1, 8);
    assert_int_equal(c.stereo.p1_path[2], 12);
    assert_int_equal(c.stereo.p1_path[7], 10);
    assert_int_equal(c.stereo.p2, 90);
    assert_int_equal(c.stereo.p2_path[0], 0);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    expect_load_error("[stereo]\np1 = 8,8,8\n", 2, "p1"); /* 3 values for 4 paths */
    expect_in(err, "p1: 3 values for 4 paths", "penalty list of the wrong length");
    load_ok("[stereo]\npaths = 4\np2 = 90,90,90,90\n", &c);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "stereo", "paths", "8", err, sizeof err), 0);
    assert_int_equal(live_config_check(&c, err, sizeof err), -1);
    expect_in(err, "p2: 4 values for 8 paths", "paths changed under a list");
    expect_load_error("[stereo]\np1 = 8,x\n", 2, "p1");
    expect_in(err, "'x' (in '8,x') is not an integer in 1..1022", "p1");
    expect_load_error("[stereo]\np1 = 8,,8\n", 2, "p1");
    expect_in(err, "'8,,8' is not a comma-separated list", "p1");
    expect_load_error("[stereo]\np2 = 90,2000\n", 2, "p2");
    expect_in(err, "'2000' (in '90,2000') is not an integer in 2..1023", "p2");
    expect_load_error("[stereo]\npaths = 4\np1 = 8,8,100,8\np2 = 90,90,50,90\n", 4, "p2");
    expect_in(err, "p2: 50 must be greater than p1 100 (on each path)", "a path's own pair");
    /* blanks around a list's commas, as in every list of the file */
    load_ok("[stereo]\npaths = 4\np1 = 8 , 8,  9 ,8\n", &c);
    assert_int_equal(c.stereo.p1_path[2], 9);
    /* weights */
    load_ok("[stereo]\npaths = 4\npath_weights = 1,2,0,3\n", &c);
    assert_int_equal(c.stereo.path_weight[1], 2);
    assert_int_equal(c.stereo.path_weight[2], 0);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    load_ok("[stereo]\npath_weights = 2\n", &c);
    for (int r = 0; r < 8; r++)
        assert_int_equal(c.stereo.path_weight[r], 2);
    expect_load_error("[stereo]\npaths = 8\npath_weights = 0,0,0,0,0,0,0,0\n", 3, "path_weights");
    expect_in(err, "'0,0,0,0,0,0,0,0' are all 0", "path_weights");
    expect_load_error("[stereo]\npath_weights = 1,-1,1,1\n", 2, "path_weights");
    expect_in(err, "'-1' (in '1,-1,1,1') is not an integer in 0..255", "path_weights");
    expect_load_error("[stereo]\npath_weights = 1,1,1\n", 2, "path_weights");
    expect_in(err, "path_weights: 3 values for 4 paths", "weights of the wrong length");
    load_ok("[stereo]\npaths = 8\np2 = 128\npath_weights = 44\n", &c); /* 8 x 44 x (62 + 128) */
    assert_int_equal(live_config_check(&c, err, sizeof err), -1);
    expect_in(err, "66880", "the weighted sum past 16 bits, with the figure");
    /* --set takes the same values */
    live_config_defaults(&c);
    assert_int_equal(live_config_set(&c, "stereo", "method", "bm", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "stereo", "paths", "8", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "stereo", "p2", "100,100,100,100,60,60,60,60", err, sizeof err), 0);
    assert_int_equal(c.stereo.p2_path[5], 60);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
}

/* [source] left/right/input: URIs checked as they are set, one way to name the source per file,
 * the last given wins across layers, and live_config_plan (URIs, or the older type keys). */
static void test_source_uris(void **state)
{
    (void)state;
    live_config c;
    source_plan p;
    load_ok("[source]\nleft = v4l2:///dev/video0\nright = /dev/video2\n", &c);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    assert_int_equal(live_config_plan(&c, &p, err, sizeof err), 0);
    assert_int_equal(p.kind, PLAN_V4L2_PAIR);
    assert_int_equal(p.from_type, 0);
    assert_string_equal(p.uri[1].target, "/dev/video2");
    load_ok("[source]\ninput = gst://videotestsrc is-live=true\n", &c);
    assert_int_equal(live_config_plan(&c, &p, err, sizeof err), 0);
    assert_int_equal(p.kind, PLAN_GST_ONE);
    load_ok("[source]\ninput = synth://?width=320&height=200\n", &c);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    assert_int_equal(live_config_plan(&c, &p, err, sizeof err), 0);
    assert_int_equal(p.kind, PLAN_SYNTH);
    assert_int_equal(p.uri[0].width, 320);
    /* bad URIs and two ways in one file: FILE:LINE: KEY */
    expect_load_error("[source]\nleft = v4l2://dev/video0\n", 2, "left");
    expect_in(err, "three slashes", "v4l2 without an absolute path");
    expect_load_error("[source]\ninput = nosuch://x\n", 2, "input");
    expect_load_error("[source]\ntype = v4l2\nleft = /dev/video0\n", 3, "left");
    expect_in(err, "already named on line 2", "type, then left");
    expect_load_error("[source]\ninput = synth://\ntype = synth\n", 3, "type");
    expect_load_error("[source]\nright = /dev/video2\ninput = /dev/video0\n", 3, "input");
    /* left without right: the cross-check says what is missing */
    load_ok("[source]\nleft = /dev/video0\n", &c);
    assert_int_equal(live_config_check(&c, err, sizeof err), -1);
    expect_in(err, "right: missing", "left alone");
    /* later layers: type empties the URIs, input empties left/right and the other way round */
    load_ok("[source]\nleft = /dev/video0\nright = /dev/video2\n", &c);
    assert_int_equal(live_config_set(&c, "source", "input", "synth://", err, sizeof err), 0);
    assert_string_equal(c.source_left, "");
    assert_int_equal(live_config_plan(&c, &p, err, sizeof err), 0);
    assert_int_equal(p.kind, PLAN_SYNTH);
    assert_int_equal(live_config_set(&c, "source", "type", "files", err, sizeof err), 0);
    assert_string_equal(c.source_input, "");
    assert_int_equal(live_config_set(&c, "files", "left", "l_%04d.png", err, sizeof err), 0);
    assert_int_equal(live_config_set(&c, "files", "right", "r_%04d.png", err, sizeof err), 0);
    assert_int_equal(live_config_plan(&c, &p, err, sizeof err), 0);
    assert_int_equal(p.kind, PLAN_FILES);
    assert_int_equal(p.from_type, 1);
    assert_string_equal(p.uri[0].target, "l_%04d.png");
    /* the older keys: sbs is one V4L2 stream, v4l2 the pair */
    load_ok("[source]\ntype = sbs\n[camera]\ndevice = /dev/video7\n", &c);
    assert_int_equal(live_config_plan(&c, &p, err, sizeof err), 0);
    assert_int_equal(p.kind, PLAN_SBS);
    assert_string_equal(p.uri[0].target, "/dev/video7");
}

static void test_check_cross_field(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[source]\ntype = v4l2\n",
         "[source] type = v4l2 needs [camera] left and right (device paths), e.g. --set "
         "camera.left=/dev/video0 --set camera.right=/dev/video2"},
        {"[source]\ntype = v4l2\n[camera]\nleft = /dev/video0\n",
         "[source] type = v4l2 needs [camera] right (device path), e.g. --set "
         "camera.right=/dev/video2"},
        {"[source]\ntype = v4l2\n[camera]\nright = /dev/video2\n",
         "needs [camera] left (device path), e.g. --set camera.left=/dev/video0"},
        {"[source]\ntype = v4l2\n[camera]\nleft = /dev/video0\nright = /dev/video0\n",
         "right: /dev/video0 is also the left camera"},
        {"[source]\ntype = sbs\n",
         "[source] type = sbs needs [camera] device (device path), e.g. --set "
         "camera.device=/dev/video0"},
        {"[source]\ntype = sbs\n[camera]\ndevice = /dev/video0\nwidth = 1279\n", "width: 1279"},
        {"[source]\ntype = files\n[files]\nleft = l%d.png\n",
         "[source] type = files needs [files] right (file name pattern), e.g. --set "
         "files.right=rec/right_%06d.png"},
        {"[source]\ntype = files\n[files]\nright = r%d.png\n", "needs [files] left ("},
        {"[source]\ntype = files\n", "needs [files] left and right (file name patterns), e.g. "
         "--set files.left=rec/left_%06d.png --set files.right=rec/right_%06d.png"},
        {"[synth]\nwidth = 64\n", "disparities: 64 must be smaller than the image width 64"},
        /* more views ([stereo] baselines): the inputs must give them */
        {"[stereo]\nbaselines = 1,-1\n[source]\nleft = /dev/video0\nright = /dev/video2\n",
         "view2: missing: [stereo] baselines '1,-1' gives 3 views"},
        {"[source]\nleft = /dev/video0\nright = /dev/video2\nview2 = /dev/video4\n",
         "view2: set, but [stereo] baselines '1' gives 2 views"},
        {"[stereo]\nbaselines = 1,-1\n[source]\nleft = /dev/video0\nright = /dev/video2\n"
         "view2 = file://c_%d.png\n", "view2: 'file://c_%d.png' is not a V4L2 camera"},
        {"[stereo]\nbaselines = 1,-1\n[source]\nleft = /dev/video0\nright = /dev/video2\n"
         "view2 = /dev/video2\n", "view2: /dev/video2 is also right"},
        {"[stereo]\nbaselines = 1,-1,2\n[source]\nleft = /dev/video0\nright = /dev/video2\n"
         "view2 = /dev/video4\nview4 = /dev/video8\n", "view3: missing"},
        {"[stereo]\nbaselines = 1,-1\n[source]\ninput = /dev/video0\n",
         "baselines: 3 views, but the source /dev/video0 gives two (one side-by-side stream)"},
        {"[stereo]\nbaselines = 1,-1\n[source]\ntype = v4l2\n[camera]\nleft = /dev/video0\n"
         "right = /dev/video2\n", "baselines: 3 views need the cameras as URIs"},
        {"[stereo]\nbaselines = 1,-4.5\n", "baselines: view 2's ratio -4.5: the generated scene"},
        {"[stereo]\nbaselines = 1,-1\n[source]\ninput = synth://\nview2 = /dev/video4\n",
         "view2: the generated scene (synth://) renders every view itself"},
        {"[synth]\nlose_view = 2,1,3\n", "lose_view: view 2, but there are 2 views (0 .. 1)"},
        {"[stereo]\nbaselines = 1,-1\n[synth]\nlose_view = 2,1,3\n[source]\nleft = "
         "file://l_%d.png\nright = file://r_%d.png\nview2 = file://c_%d.png\n",
         "lose_view: only the generated scene (synth) loses a view"},
        {"[source]\ntype = sbs\n[camera]\ndevice = /dev/video0\nwidth = 256\n[stereo]\n"
         "disparities = 128\n",
         "disparities: 128 must be smaller than the image width 128"},
        {"[display]\nwidth = 800\n", "height: give [display] width and height together"},
        {"[display]\nheight = 600\n", "width: give"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        live_config c;
        load_ok(cases[i].text, &c);
        if (live_config_check(&c, err, sizeof err) == 0)
            fail_msg("check passed for:\n%s", cases[i].text);
        expect_in(err, cases[i].want, cases[i].text);
    }
    /* and the passing neighbours */
    live_config c;
    load_ok("[source]\ntype = sbs\n[camera]\ndevice = /dev/video0\nwidth = 2560\n[stereo]\n"
            "disparities = 256\n", &c);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    load_ok("[source]\ntype = files\n[files]\nleft = l%d.png\nright = r%d.png\n[stereo]\n"
            "disparities = 256\n", &c);
    assert_int_equal(live_config_check(&c, err, sizeof err), 0);
    /* the checks across the stage options (gpu/stereo_options.c, stereo-match's): the file's
     * keys alone at the later line, as keys; with a key from the command line, as stereo-match
     * words them */
    expect_load_error("[stereo]\ndisparities = 256\nmin_disparity = 1800\n", 3, "min_disparity");
    expect_in(err, "min_disparity: 1800 plus 256 disparities exceeds 2047", "min + D");
    load_ok("[stereo]\ndisparities = 256\n", &c);
    assert_int_equal(live_config_set(&c, "stereo", "min_disparity", "1800", err, sizeof err), 0);
    assert_int_equal(live_config_check(&c, err, sizeof err), -1);
    assert_string_equal(err, "--min-disparity: 1800 plus 256 disparities exceeds 2047");
}

/* ---- the fuzzer ----------------------------------------------------------------------------- */

static uint64_t rng_state = 0x5eed5eed12345678ull;

static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

typedef struct {
    char *data;
    size_t len, cap;
} buffer;

static void buf_insert(buffer *b, size_t at, const char *src, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->data = realloc(b->data, b->cap);
        assert_non_null(b->data);
    }
    memmove(b->data + at + n, b->data + at, b->len - at);
    memcpy(b->data + at, src, n);
    b->len += n;
}

static void buf_erase(buffer *b, size_t at, size_t n)
{
    memmove(b->data + at, b->data + at + n, b->len - at - n);
    b->len -= n;
}

/* start of the line holding position at, and one past its end (after the '\n', if any) */
static void line_bounds(const buffer *b, size_t at, size_t *start, size_t *end)
{
    size_t s = at, e = at;
    while (s > 0 && b->data[s - 1] != '\n')
        s--;
    while (e < b->len && b->data[e] != '\n')
        e++;
    *start = s;
    *end = e < b->len ? e + 1 : e;
}

static const char *const fuzz_keys[] = {
    "type", "left", "right", "device", "width", "height", "fps", "format", "buffers",
    "max_skew_ms", "loop", "disparities", "min_disparity", "cost", "window", "paths", "p1", "p2",
    "p2_adapt", "uniqueness", "subpixel", "lr_check", "lr_tolerance", "median", "backend",
    "threads", "sms", "speckle_size", "vote", "interp", "fill", "temporal", "temporal_alpha", "maps", "headless", "fullscreen", "colormap", "view", "color_range",
    "legend", "font", "dir", "frames",
    "screenshot", "gain", "[source]", "[camera]", "[controls]", "[files]", "[synth]", "[stereo]",
    "[calibration]", "[display]", "[record]", "[run]", "[bogus]"};
static const char *const fuzz_values[] = {
    "0", "1", "-1", "16", "64", "640", "4096", "99999999999", "true", "off", "census", "yuyv",
    "left_%04d.png", "%s", "%", "", "\"x\"", "a # b", "x ; y", "2147483648", "8", "auto"};

static void mutate(buffer *b, const buffer *bases, int nbases)
{
    char tmp[8192];
    size_t at = below(b->len + 1), s, e, n;
    switch (below(8)) {
    case 0: /* flip bits of a few bytes */
        for (int i = 0, k = 1 + (int)below(4); i < k && b->len; i++)
            b->data[below(b->len)] ^= (char)(1u << below(8));
        break;
    case 1: /* insert random bytes, biased towards the syntax */
        n = 1 + below(8);
        for (size_t i = 0; i < n; i++) {
            static const char syntax[] = "=[]#;:%\n\r\t \\\"'0123456789-";
            tmp[i] = below(2) ? syntax[below(sizeof syntax)] : (char)below(256);
        }
        buf_insert(b, at, tmp, n);
        break;
    case 2: /* delete a range */
        if (b->len) {
            n = 1 + below(below(2) ? 4 : 64);
            if (at >= b->len)
                at = b->len - 1;
            if (n > b->len - at)
                n = b->len - at;
            buf_erase(b, at, n);
        }
        break;
    case 3: /* duplicate a line somewhere */
        if (b->len) {
            line_bounds(b, below(b->len), &s, &e);
            n = e - s < sizeof tmp ? e - s : sizeof tmp;
            memcpy(tmp, b->data + s, n);
            line_bounds(b, below(b->len), &s, &e);
            buf_insert(b, below(2) ? s : e, tmp, n);
        }
        break;
    case 4: /* a garbage line */
        n = below(120);
        for (size_t i = 0; i < n; i++)
            tmp[i] = (char)(below(4) ? 32 + below(95) : below(256));
        tmp[n++] = '\n';
        line_bounds(b, at < b->len ? at : (b->len ? b->len - 1 : 0), &s, &e);
        buf_insert(b, s, tmp, n);
        break;
    case 5: /* a very long line: a key with a long value, or a long comment */
        n = (size_t)snprintf(tmp, sizeof tmp, "%s = ", fuzz_keys[below(NELEMS(fuzz_keys))]);
        for (size_t k = 150 + below(sizeof tmp - 200); n < k;)
            tmp[n++] = below(2) ? 'a' : (char)('0' + below(10));
        if (below(3) == 0)
            tmp[0] = '#';
        tmp[n++] = '\n';
        line_bounds(b, at < b->len ? at : (b->len ? b->len - 1 : 0), &s, &e);
        buf_insert(b, s, tmp, n);
        break;
    case 6: /* a plausible key = value line (keys in the wrong section too) */
        n = (size_t)snprintf(tmp, sizeof tmp, "%s%s%s\n", fuzz_keys[below(NELEMS(fuzz_keys))],
                             below(4) ? " = " : "=", fuzz_values[below(NELEMS(fuzz_values))]);
        line_bounds(b, at < b->len ? at : (b->len ? b->len - 1 : 0), &s, &e);
        buf_insert(b, s, tmp, n);
        break;
    case 7: /* a line from another example */
        {
            const buffer *o = &bases[below((size_t)nbases)];
            line_bounds(o, below(o->len), &s, &e);
            size_t s2, e2;
            line_bounds(b, at < b->len ? at : (b->len ? b->len - 1 : 0), &s2, &e2);
            buf_insert(b, s2, o->data + s, e - s);
        }
        break;
    }
}

static int count_lines(const buffer *b)
{
    int n = 1;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void test_fuzz(void **state)
{
    static const char *const examples[] = {"generated-scene.ini", "two-usb-cameras.ini",
                                           "side-by-side.ini", "file-replay.ini"};
    enum { NB = sizeof examples / sizeof examples[0] };
    buffer bases[NB];
    for (int i = 0; i < NB; i++) {
        char path[256];
        snprintf(path, sizeof path, "config/%s", examples[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        bases[i].cap = 1 << 16;
        bases[i].data = malloc(bases[i].cap);
        assert_non_null(bases[i].data);
        bases[i].len = fread(bases[i].data, 1, bases[i].cap, f);
        fclose(f);
    }
    long iterations = 10000;
    const char *env = getenv("STEREO_FUZZ_ITERATIONS");
    if (env && atol(env) > 0)
        iterations = atol(env);
    double budget_s = 8.0;
    env = getenv("STEREO_FUZZ_SECONDS");
    if (env && atof(env) > 0)
        budget_s = atof(env);

    char path[256];
    snprintf(path, sizeof path, "%s/fuzz.ini", tmpdir);
    buffer b = {0};
    long done = 0, loaded = 0, checked_ok = 0;
    double t0 = now_s();
    for (; done < iterations && now_s() - t0 < budget_s; done++) {
        const buffer *base = &bases[below(NB)];
        b.len = 0;
        buf_insert(&b, 0, base->data, base->len);
        for (int m = 0, k = 1 + (int)below(below(4) ? 3 : 12); m < k; m++)
            mutate(&b, bases, NB);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
        assert_int_equal(fclose(f), 0);

        live_config c;
        live_config_defaults(&c);
        memset(err, 'x', sizeof err);
        int rc = live_config_load(path, &c, err, sizeof err);
        if (rc == 0) {
            assert_string_equal(err, "");
            loaded++;
            checked_ok += live_config_check(&c, err, sizeof err) == 0;
            continue;
        }
        assert_int_equal(rc, -1);
        /* "PATH:LINE: ..." with LINE within the file */
        size_t plen = strlen(path);
        if (strncmp(err, path, plen) != 0 || err[plen] != ':')
            fail_msg("iteration %ld: \"%s\"", done, err);
        char *end;
        long line = strtol(err + plen + 1, &end, 10);
        if (end == err + plen + 1 || *end != ':' || end[1] != ' ' || line < 1 ||
            line > count_lines(&b))
            fail_msg("iteration %ld: \"%s\" (the file has %d lines)", done, err,
                     count_lines(&b));
    }
    double dt = now_s() - t0;
    printf("# fuzz: %ld iterations in %.2f s: %ld loaded (%ld also passed the cross checks), "
           "%ld errors\n", done, dt, loaded, checked_ok, done - loaded);
    assert_true(done >= 100);
    assert_true(loaded > 0);
    assert_true(done - loaded > 0);
    free(b.data);
    for (int i = 0; i < NB; i++)
        free(bases[i].data);
}

/* ---- live_config_write_section: what it writes loads back to the same values ---------------- */

typedef struct {
    const char *section, *key, *value;
} key_value;

/* Every key but [controls] given a value other than its default: the base below, then each
 * variant over it for what the base rules out (the source named by URIs instead of type, the
 * band with SGM where the base has block matching, disparities = auto). */
static const key_value round_trip_base[] = {
    {"source", "type", "files"},         {"camera", "left", "/dev/video4"},
    {"camera", "right", "/dev/v4l/by-id/usb-x-video-index0"},
    {"camera", "device", "/dev/video6"}, {"camera", "width", "320"},
    {"camera", "height", "240"},         {"camera", "fps", "15"},
    {"camera", "format", "rgb24"},       {"camera", "buffers", "7"},
    {"camera", "max_skew_ms", "5"},      {"files", "left", "rec dir/l_%04d.png"},
    {"files", "right", "rec dir/r_100%%_%d.png"},
    {"files", "fps", "12"},              {"files", "loop", "no"},
    {"synth", "width", "64"},            {"synth", "height", "48"},
    {"synth", "fps", "0"},               {"stereo", "disparities", "48"},
    {"synth", "lose_view", "2,10,19"},   {"stereo", "baselines", "1,-1.5,2"},
    {"stereo", "combine", "sum"},
    {"stereo", "min_disparity", "3"},    {"stereo", "cost", "census"},
    {"stereo", "window", "7"},           {"stereo", "ad_weight", "5"},
    {"stereo", "paths", "8"},
    {"stereo", "p1", "11"},              {"stereo", "p2", "77,77,60,60,70,70,70,70"},
    {"stereo", "p2_adapt", "0"},         {"stereo", "mi_tiles", "3"},
    {"stereo", "uniqueness", "15"},
    {"stereo", "subpixel", "off"},       {"stereo", "lr_check", "false"},
    {"stereo", "lr_tolerance", "2"},     {"stereo", "median", "0"},
    {"stereo", "speckle_size", "400"},   {"stereo", "speckle_diff", "32"},
    {"stereo", "fill", "true"},          {"stereo", "temporal", "yes"},
    {"stereo", "vote", "on"},          {"stereo", "interp", "yes"},
    {"stereo", "temporal_alpha", "5"},   {"stereo", "temporal_delta", "100"},
    {"stereo", "temporal_persist", "3"},
    {"stereo", "backend", "cpu"},        {"stereo", "threads", "3"},
    {"stereo", "sms", "8"},              {"calibration", "maps", "a.yaml,b.yaml"},
    {"stereo", "mi_warm", "off"},        {"stereo", "mi_restart", "35"},
    {"stereo", "method", "bm"},          {"stereo", "block", "21"},
    {"stereo", "path_weights", "1,2,0,3,1,1,1,1"},
    {"display", "headless", "yes"},      {"display", "fullscreen", "on"},
    {"display", "width", "800"},         {"display", "height", "600"},
    {"display", "colormap", "gray"},     {"display", "view", "depth"},
    {"display", "color_range", "auto"},  {"display", "legend", "off"},
    {"display", "font", "/f.ttf"},       {"record", "dir", "out"},
    {"calibration", "focal", "612.25"},  {"calibration", "baseline", "0.06"},
    {"calibration", "center", "320.5, 240"}, {"record", "depth", "true"},
    {"run", "frames", "9000000000"},     {"run", "screenshot", "s.png"},
    {"output", "uri", "ros2://robot?domain=3&points=1"},
    {"output", "uri2", "file://out/d_%06d.pfm?depth=1"},
    {"output", "uri3", "rtp://127.0.0.1:5000"},
    {"output", "uri4", "file://o4/%06d.png"},
    {"output", "uri5", "file://o5/%06d.ply"},
    {"output", "uri6", "rtsp://@:8554/depth"},
    {"output", "uri7", "display://"},
    {"output", "uri8", "file://o8/d_%06d.pfm"},
};
static const key_value round_trip_variants[][11] = {
    /* type back to its default: with URIs it is not written (they name the source) */
    {{"source", "type", "synth"}, {"source", "left", "file://rec/left_%06d.png"}, {"source", "right", "/dev/video2"},
     {"source", "view2", "file://rec/view2_%06d.png"}, {"source", "view3", "/dev/video8"},
     {"source", "view4", "/dev/video10"}, {"source", "view5", "/dev/video12"},
     {"source", "view6", "/dev/video14"}, {"source", "view7", "/dev/video16"},
     {"stereo", "method", "sgm"}, {"stereo", "band", "32"}},
    {{"source", "type", "synth"}, {"source", "input", "synth://?width=96&height=64"}},
    /* auto keeps the last D given until a pair is measured; the file holds auto alone, so the
     * reader's is the default's */
    {{"stereo", "disparities", "64"}, {"stereo", "disparities", "auto"}},
    /* Mei et al.'s refinements refine SGM (the base is bm) */
    {{"stereo", "method", "sgm"}, {"stereo", "cross", "2"}, {"stereo", "discontinuity", "on"}},
};
static const char *const written_sections[] = {"source", "camera", "files", "synth", "stereo",
                                               "calibration", "display", "record", "run",
                                               "output"};

static void set_all(live_config *c, const key_value *kv, size_t n)
{
    for (size_t i = 0; i < n && kv[i].section; i++)
        if (live_config_set(c, kv[i].section, kv[i].key, kv[i].value, err, sizeof err))
            fail_msg("%s.%s = %s: %s", kv[i].section, kv[i].key, kv[i].value, err);
}

/* Every written section of c as text (live_config_write_section), into buf. */
static void write_all(const live_config *c, char *buf, size_t len)
{
    FILE *f = fmemopen(buf, len, "w");
    assert_non_null(f);
    for (size_t i = 0; i < NELEMS(written_sections); i++)
        assert_int_equal(live_config_write_section(f, c, written_sections[i]), 0);
    assert_int_equal(fclose(f), 0);
}

/* "[section] key = value" lines of text whose value differs from that of the same key in
 * defaults: a mark per line of defaults (changed[i] set for its i-th "key = " line). */
static void mark_changed(const char *text, const char *defaults, int *changed, int n)
{
    char sec[64] = "", dsec[64] = "";
    const char *t = text;
    while (*t) {
        size_t len = strcspn(t, "\n");
        if (*t == '[')
            snprintf(sec, sizeof sec, "%.*s", (int)len, t);
        const char *eq = memchr(t, '=', len);
        if (eq) {
            size_t klen = (size_t)(eq - t);
            int i = 0;
            dsec[0] = '\0';
            for (const char *d = defaults; *d && i < n;) {
                size_t dlen = strcspn(d, "\n");
                if (*d == '[')
                    snprintf(dsec, sizeof dsec, "%.*s", (int)dlen, d);
                else if (memchr(d, '=', dlen)) {
                    if (!strcmp(sec, dsec) && !strncmp(d, t, klen + 1) &&
                        (dlen != len || strncmp(d, t, len) != 0))
                        changed[i] = 1;
                    i++;
                }
                d += dlen + (d[dlen] == '\n');
            }
        }
        t += len + (t[len] == '\n');
    }
}

/* Every key written (every section but [controls], the [stereo] keys of the stage option table
 * among them), set to a value other than its default, is written, read back, and makes the same
 * live_config, byte for byte. */
static void test_write_section_round_trip(void **state)
{
    static char text[16384], defaults_text[16384];
    live_config want, got, defaults;
    live_config_defaults(&defaults);
    write_all(&defaults, defaults_text, sizeof defaults_text);
    int changed[160] = {0}, nkeys = 0;
    for (const char *d = defaults_text; *d; d += strcspn(d, "\n") + (d[strcspn(d, "\n")] != 0))
        nkeys += memchr(d, '=', strcspn(d, "\n")) != NULL;
    assert_true(nkeys > 60 && nkeys <= (int)NELEMS(changed));

    char path[128];
    snprintf(path, sizeof path, "%s/written.ini", tmpdir);
    for (int v = -1; v < (int)NELEMS(round_trip_variants); v++) {
        live_config_defaults(&want);
        set_all(&want, round_trip_base, NELEMS(round_trip_base));
        if (v >= 0)
            set_all(&want, round_trip_variants[v], NELEMS(round_trip_variants[v]));
        write_all(&want, text, sizeof text);
        mark_changed(text, defaults_text, changed, nkeys);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        live_config_defaults(&got);
        if (live_config_load(path, &got, err, sizeof err) != 0)
            fail_msg("variant %d: %s\nfor:\n%s", v, err, text);
        /* the same values; only where they came from differs */
        memcpy(got.config_file, want.config_file, sizeof got.config_file);
        memcpy(got.key_line, want.key_line, sizeof got.key_line);
        if (memcmp(&got, &want, sizeof got) != 0) {
            char again[16384];
            write_all(&got, again, sizeof again);
            fail_msg("variant %d: read back differently:\n%s\nagainst:\n%s", v, again, text);
        }
    }
    /* each key was given a non-default value (by the base or a variant) */
    int i = 0;
    for (const char *d = defaults_text; *d;) {
        size_t len = strcspn(d, "\n");
        if (memchr(d, '=', len) && !changed[i++])
            fail_msg("the test gives '%.*s' no other value", (int)len, d);
        d += len + (d[len] == '\n');
    }
    /* the whole stage option table is among them */
    FILE *f = fmemopen(text, sizeof text, "w");
    assert_int_equal(live_config_write_section(f, &defaults, "stereo"), 0);
    assert_int_equal(fclose(f), 0);
    for (const stereo_option_info *row = stereo_option_table; row->name; row++) {
        char line[64];
        snprintf(line, sizeof line, "\n%s = ", row->key);
        if (!strstr(text, line))
            fail_msg("[stereo] %s is not written", row->key);
    }
    /* disparities = auto is written as such (the D of stereo is the default until measured) */
    live_config_defaults(&want);
    set_all(&want, round_trip_variants[2], NELEMS(round_trip_variants[2]));
    f = fmemopen(text, sizeof text, "w");
    assert_int_equal(live_config_write_section(f, &want, "stereo"), 0);
    assert_int_equal(fclose(f), 0);
    expect_in(text, "\ndisparities = auto\n", "[stereo] with disparities = auto");

    /* the [stereo] section alone, as stereo-live --record writes it into replay.ini */
    live_config_defaults(&want);
    set_all(&want, round_trip_base, NELEMS(round_trip_base));
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(live_config_write_section(f, &want, "stereo"), 0);
    assert_int_equal(fclose(f), 0);
    live_config_defaults(&got);
    if (live_config_load(path, &got, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(memcmp(&got.stereo, &want.stereo, sizeof got.stereo) == 0);
    assert_true(memcmp(&got.stage, &want.stage, sizeof got.stage) == 0);
    assert_int_equal(got.stereo.p1, 11);
    assert_int_equal(got.stereo.cost, STEREO_COST_CENSUS);
    assert_int_equal(got.stereo.post.speckle_size, 400);

    /* what cannot be written: [controls], an unknown section, a value the reader would cut */
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(live_config_write_section(f, &want, "controls"), -1);
    assert_int_equal(live_config_write_section(f, &want, "nosuch"), -1);
    snprintf(want.record_dir, sizeof want.record_dir, "a ;b");
    assert_int_equal(live_config_write_section(f, &want, "record"), -1);
    assert_int_equal(fclose(f), 0);
}

/* live_config_origin: FILE:LINE of a key set by the file; "" for defaults and --set overrides */
static void test_origin(void **state)
{
    live_config c;
    const char *path;
    assert_int_equal(load_text("[source]\ntype = v4l2\n\n[camera]\n# the left one\n"
                               "left = /dev/video0\nright = /dev/video2\n", &c, &path), 0);
    char buf[300], want[300];
    assert_int_equal(live_config_origin(&c, "camera", "left", buf, sizeof buf), 1);
    snprintf(want, sizeof want, "%s:6", path);
    assert_string_equal(buf, want);
    assert_int_equal(live_config_origin(&c, "camera", "right", buf, sizeof buf), 1);
    snprintf(want, sizeof want, "%s:7", path);
    assert_string_equal(buf, want);
    assert_int_equal(live_config_origin(&c, "camera", "width", buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(live_config_origin(&c, "camera", "nosuch", buf, sizeof buf), 0);
    /* overridden on the command line: no longer the file's */
    assert_int_equal(live_config_set(&c, "camera", "left", "/dev/video4", err, sizeof err), 0);
    assert_int_equal(live_config_origin(&c, "camera", "left", buf, sizeof buf), 0);
    assert_int_equal(live_config_origin(&c, "camera", "right", buf, sizeof buf), 1);
    /* a failed set leaves the origin alone */
    assert_int_equal(live_config_set(&c, "camera", "right", "", err, sizeof err), -1);
    assert_int_equal(live_config_origin(&c, "camera", "right", buf, sizeof buf), 1);
    /* a second file: its own lines; keys it does not set are no longer "from a file" */
    const char *second = write_text("second.ini", "[camera]\nwidth = 320\n");
    assert_int_equal(live_config_load(second, &c, err, sizeof err), 0);
    assert_int_equal(live_config_origin(&c, "camera", "right", buf, sizeof buf), 0);
    assert_int_equal(live_config_origin(&c, "camera", "width", buf, sizeof buf), 1);
    snprintf(want, sizeof want, "%s:2", second);
    assert_string_equal(buf, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_failures_change_nothing),
        cmocka_unit_test(test_good_values),
        cmocka_unit_test(test_unknown_section),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_controls),
        cmocka_unit_test(test_repeated_key),
        cmocka_unit_test(test_cannot_parse),
        cmocka_unit_test(test_line_handling),
        cmocka_unit_test(test_files_that_cannot_be_read),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_readme_lists_every_key),
        cmocka_unit_test(test_set_overrides),
        cmocka_unit_test(test_sms),
        cmocka_unit_test(test_penalties_in_file),
        cmocka_unit_test(test_costs_methods_and_path_lists),
        cmocka_unit_test(test_check_cross_field),
        cmocka_unit_test(test_source_uris),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_write_section_round_trip),
        cmocka_unit_test(test_origin),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
