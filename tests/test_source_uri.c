/* SPDX-License-Identifier: Apache-2.0 */
/* test_source_uri.c — hal/source_uri.c: every URI form parsed into its kind and target, bad URIs
 * refused with a message that names them and says what to write, and the plan of which backend
 * reads a pair or one stream (and what it refuses); a deterministic fuzzer that checks every
 * accepted URI round-trips to a known kind without crashing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source_uri.h"

static char err[1024];

static source_uri parse_ok(const char *text)
{
    source_uri u;
    err[0] = '\0';
    if (source_uri_parse(text, &u, err, sizeof err) != 0)
        fail_msg("'%s' refused: %s", text, err);
    assert_string_equal(u.text, text);
    return u;
}

/* refused, and the message contains `want` */
static void parse_bad(const char *text, const char *want)
{
    source_uri u;
    err[0] = '\0';
    if (source_uri_parse(text, &u, err, sizeof err) == 0)
        fail_msg("'%s' accepted", text ? text : "(null)");
    if (!strstr(err, want))
        fail_msg("'%s': message '%s' lacks '%s'", text ? text : "(null)", err, want);
    assert_null(strchr(err, '\n'));
}

static void every_form_parses(void **state)
{
    (void)state;
    source_uri u = parse_ok("v4l2:///dev/video0");
    assert_int_equal(u.kind, URI_V4L2);
    assert_string_equal(u.target, "/dev/video0");
    u = parse_ok("/dev/v4l/by-id/usb-cam-video-index0");
    assert_int_equal(u.kind, URI_V4L2);
    assert_string_equal(u.target, "/dev/v4l/by-id/usb-cam-video-index0");
    u = parse_ok("csi://1");
    assert_int_equal(u.kind, URI_CSI);
    assert_int_equal(u.sensor_id, 1);
    assert_true(source_uri_is_gst(&u));
    u = parse_ok("rtsp://192.168.1.2:8554/left");
    assert_int_equal(u.kind, URI_RTSP);
    assert_string_equal(u.target, "rtsp://192.168.1.2:8554/left");
    u = parse_ok("file:///data/left.mp4");
    assert_int_equal(u.kind, URI_FILE);
    assert_string_equal(u.target, "/data/left.mp4");
    assert_int_equal(u.is_pattern, 0);
    assert_true(source_uri_is_gst(&u));
    u = parse_ok("file://rec/left_%06d.png");
    assert_string_equal(u.target, "rec/left_%06d.png");
    assert_int_equal(u.is_pattern, 1);
    assert_false(source_uri_is_gst(&u));
    /* RFC 8089: localhost, percent-encoding; %% and %25 a literal '%', %04d a sequence (whose
     * target keeps a literal '%' doubled, as printf reads it) */
    static const struct {
        const char *uri, *target;
        int is_pattern;
    } files[] = {
        {"file://localhost/data/left.mp4", "/data/left.mp4", 0},
        {"file:///data/my%20video%2Fx.mp4", "/data/my video/x.mp4", 0},
        {"file://100%%.avi", "100%.avi", 0},
        {"file://100%25.avi", "100%.avi", 0},
        {"file://rec%25/left_%06d.png", "rec%%/left_%06d.png", 1},
        {"file://100%%/l_%2d.png", "100%%/l_%2d.png", 1},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        u = parse_ok(files[i].uri);
        assert_string_equal(u.target, files[i].target);
        assert_int_equal(u.is_pattern, files[i].is_pattern);
    }
    u = parse_ok("gst://  videotestsrc is-live=true ! video/x-raw,width=320  ");
    assert_int_equal(u.kind, URI_GST);
    assert_string_equal(u.target, "videotestsrc is-live=true ! video/x-raw,width=320");
    u = parse_ok("GST://videotestsrc"); /* schemes are case-insensitive */
    assert_int_equal(u.kind, URI_GST);
    u = parse_ok("synth://");
    assert_int_equal(u.kind, URI_SYNTH);
    assert_int_equal(u.width, -1);
    assert_int_equal(u.fps, -1);
    u = parse_ok("synth://?width=320&height=240&fps=0");
    assert_int_equal(u.width, 320);
    assert_int_equal(u.height, 240);
    assert_int_equal(u.fps, 0);
    assert_string_equal(source_uri_kind_name(URI_RTSP), "rtsp");
}

static void bad_uris_are_refused_clearly(void **state)
{
    (void)state;
    parse_bad(NULL, "empty");
    parse_bad("", "empty");
    parse_bad("video0", "not a URI");
    parse_bad("left.mp4", "not a URI");
    parse_bad("/home/me/left.mp4", "file:///home/me/left.mp4");
    parse_bad("http://host/x", "unknown scheme 'http'");
    parse_bad("://x", "unknown scheme ''");
    parse_bad("v4l2://dev/video0", "three slashes");
    parse_bad("v4l2://", "three slashes");
    parse_bad("csi://", "sensor id");
    parse_bad("csi://x", "sensor id");
    parse_bad("csi://16", "0..15");
    parse_bad("csi://-1", "sensor id");
    parse_bad("rtsp://", "no host");
    parse_bad("rtsp:///path", "no host");
    parse_bad("file://", "no path");
    parse_bad("file://a\"b.mp4", "not supported");
    parse_bad("file://a%22b.mp4", "not supported"); /* decoded, then checked */
    parse_bad("file://100%.avi", "neither a frame number");
    parse_bad("file://100%", "neither a frame number");
    parse_bad("file://l_%s.png", "neither a frame number");
    parse_bad("file://a%0Ab.avi", "control character");
    parse_bad("file://a%00b.avi", "control character");
    parse_bad("file://l_%04d_%04d.png", "2 frame-number conversions");
    parse_bad("gst://", "no pipeline");
    parse_bad("gst://   ", "no pipeline");
    parse_bad("gst://videotestsrc !", "ends with '!'");
    parse_bad("synth://x", "query");
    parse_bad("synth://?width", "KEY=VALUE");
    parse_bad("synth://?depth=3", "unknown synth option 'depth'");
    parse_bad("synth://?width=0", "32..4096");
    parse_bad("synth://?width=17", "32..4096"); /* the scene's range, not only at run time */
    parse_bad("synth://?height=4097", "32..4096");
    parse_bad("synth://?width=abc", "not an integer");
    parse_bad("synth://?fps=1001", "0..1000");
    parse_bad("synth://?width=64&width=64", "given twice");
    parse_bad("gst://videotestsrc\n! fakesink", "control character");
    char longer[SOURCE_URI_MAX + 8];
    memset(longer, 'a', sizeof longer - 1);
    memcpy(longer, "gst://", 6);
    longer[sizeof longer - 1] = '\0';
    parse_bad(longer, "at most 511");
}

static source_plan plan_ok(const char *in, const char *l, const char *r, source_plan_kind want)
{
    source_plan p;
    err[0] = '\0';
    if (source_plan_make(in, l, r, &p, err, sizeof err) != 0)
        fail_msg("input '%s' left '%s' right '%s' refused: %s", in ? in : "", l ? l : "",
                 r ? r : "", err);
    assert_int_equal(p.kind, want);
    assert_int_equal(p.nuri, in && *in ? 1 : 2);
    assert_int_equal(p.from_type, 0);
    return p;
}

static void plan_bad(const char *in, const char *l, const char *r, const char *want)
{
    source_plan p;
    err[0] = '\0';
    if (source_plan_make(in, l, r, &p, err, sizeof err) == 0)
        fail_msg("input '%s' left '%s' right '%s' accepted", in ? in : "", l ? l : "",
                 r ? r : "");
    if (!strstr(err, want))
        fail_msg("message '%s' lacks '%s'", err, want);
}

static void plans_pick_the_backend(void **state)
{
    (void)state;
    plan_ok("synth://", NULL, NULL, PLAN_SYNTH);
    plan_ok("/dev/video4", "", "", PLAN_SBS);
    plan_ok("gst://videotestsrc", NULL, NULL, PLAN_GST_ONE);
    plan_ok("file://sbs.mp4", NULL, NULL, PLAN_GST_ONE);
    plan_ok("csi://0", NULL, NULL, PLAN_GST_ONE);
    source_plan p = plan_ok(NULL, "v4l2:///dev/video0", "/dev/video2", PLAN_V4L2_PAIR);
    assert_string_equal(p.uri[1].target, "/dev/video2");
    plan_ok(NULL, "file://l_%04d.png", "file://r_%04d.png", PLAN_FILES);
    plan_ok(NULL, "file://l.mp4", "file://r.mp4", PLAN_GST_PAIR);
    plan_ok(NULL, "csi://0", "csi://1", PLAN_GST_PAIR);
    plan_ok(NULL, "rtsp://cam/l", "gst://videotestsrc", PLAN_GST_PAIR);
    plan_ok(NULL, "v4l2:///dev/video0", "gst://videotestsrc", PLAN_GST_PAIR);
    /* two pipelines of one description are two streams */
    plan_ok(NULL, "gst://videotestsrc", "gst://videotestsrc", PLAN_GST_PAIR);

    plan_bad(NULL, NULL, NULL, "left: missing");
    plan_bad("", "", "/dev/video2", "left: missing");
    plan_bad(NULL, "/dev/video0", NULL, "right: missing");
    plan_bad("synth://", "/dev/video0", "/dev/video2", "not both");
    plan_bad("file://l_%04d.png", NULL, NULL, "image sequence");
    plan_bad(NULL, "synth://", "/dev/video2", "--input synth://");
    plan_bad(NULL, "/dev/video0", "v4l2:///dev/video0", "also the left camera");
    plan_bad(NULL, "csi://0", "csi://0", "also the left camera");
    plan_bad(NULL, "file://l_%04d.png", "file://r.mp4", "image sequence");
    plan_bad(NULL, "gst://", "csi://0", "left: 'gst://': no pipeline");
    plan_bad(NULL, "csi://0", "csi://99", "right: 'csi://99'");
}

/* Random strings over the characters URIs are made of: never a crash; an accepted one has a
 * known kind and its text, and the message of a refused one is one line naming what it is. */
static void fuzz_parse(void **state)
{
    (void)state;
    static const char *const parts[] = {"v4l2://", "csi://", "rtsp://", "file://", "gst://",
                                        "synth://", "/dev/", "?", "width=", "&", "=", "%d",
                                        "0", "15", "99", "/", "!", " ", "x", "\"", ":"};
    unsigned seed = 12345;
    int accepted = 0;
    for (int it = 0; it < 20000; it++) {
        char text[96] = "";
        int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            strncat(text, parts[(seed >> 16) % (sizeof parts / sizeof parts[0])],
                    sizeof text - strlen(text) - 1);
        }
        source_uri u;
        err[0] = '\0';
        if (source_uri_parse(text, &u, err, sizeof err) == 0) {
            accepted++;
            assert_true((unsigned)u.kind <= URI_SYNTH);
            assert_string_equal(u.text, text);
        } else {
            assert_true(err[0] != '\0');
            assert_null(strchr(err, '\n'));
        }
    }
    print_message("# fuzz: 20000 strings, %d accepted\n", accepted);
    assert_true(accepted > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_form_parses),
        cmocka_unit_test(bad_uris_are_refused_clearly),
        cmocka_unit_test(plans_pick_the_backend),
        cmocka_unit_test(fuzz_parse),
    };
    return cmocka_run_group_tests_name("source_uri", tests, NULL, NULL);
}
