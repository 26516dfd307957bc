/* SPDX-License-Identifier: Apache-2.0 */
/* test_output_uri.c — hal/output_uri.c: every output URI form parsed into its kind, target and
 * options (defaults included), bad URIs refused with one line that names them and says what to
 * write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "output_uri.h"

static char err[1024];

static output_uri parse_ok(const char *text)
{
    output_uri u;
    err[0] = '\0';
    if (output_uri_parse(text, &u, err, sizeof err) != 0)
        fail_msg("'%s' refused: %s", text, err);
    assert_string_equal(u.text, text);
    return u;
}

static void parse_bad(const char *text, const char *want)
{
    output_uri u;
    err[0] = '\0';
    if (output_uri_parse(text, &u, err, sizeof err) == 0)
        fail_msg("'%s' accepted", text ? text : "(null)");
    if (!strstr(err, want))
        fail_msg("'%s': message '%s' lacks '%s'", text ? text : "(null)", err, want);
    assert_null(strchr(err, '\n'));
}

static void every_form_parses(void **state)
{
    (void)state;
    output_uri u = parse_ok("display://");
    assert_int_equal(u.kind, OUT_DISPLAY);
    u = parse_ok("file://out/d_%06d.pfm");
    assert_int_equal(u.kind, OUT_FILE);
    assert_int_equal(u.format, OUT_FILE_PFM);
    assert_int_equal(u.depth, 0);
    assert_string_equal(u.target, "out/d_%06d.pfm");
    u = parse_ok("file:///abs/my%5Fdir/z_%04d.PNG?depth=1");
    assert_int_equal(u.format, OUT_FILE_PNG);
    assert_int_equal(u.depth, 1);
    assert_string_equal(u.target, "/abs/my_dir/z_%04d.PNG");
    u = parse_ok("file://100%%/c_%d.ply");
    assert_int_equal(u.format, OUT_FILE_PLY);
    assert_string_equal(u.target, "100%%/c_%d.ply");
    u = parse_ok("ros2://");
    assert_int_equal(u.kind, OUT_ROS2);
    assert_string_equal(u.target, "");
    assert_int_equal(u.domain, 0);
    assert_string_equal(u.frame_id, "stereo_optical_frame");
    assert_int_equal(u.qos, OUT_QOS_SENSOR);
    assert_int_equal(u.points, 0);
    assert_int_equal(u.depth_encoding, OUT_DEPTH_32FC1);
    assert_int_equal(u.min_confidence, 0);
    u = parse_ok("ros2:///robot/stereo?domain=232&frame_id=left_cam&qos=reliable&points=1&"
                 "depth=16UC1");
    assert_string_equal(u.target, "robot/stereo");
    assert_int_equal(u.domain, 232);
    assert_string_equal(u.frame_id, "left_cam");
    assert_int_equal(u.qos, OUT_QOS_RELIABLE);
    assert_int_equal(u.points, 1);
    assert_int_equal(u.depth_encoding, OUT_DEPTH_16UC1);
    u = parse_ok("rtp://192.168.1.20:5000?bitrate=2000");
    assert_int_equal(u.kind, OUT_RTP);
    assert_string_equal(u.target, "192.168.1.20");
    assert_int_equal(u.port, 5000);
    assert_int_equal(u.bitrate_kbps, 2000);
    u = parse_ok("rtp://[::1]:5000");
    assert_string_equal(u.target, "::1");
    assert_int_equal(u.port, 5000);
    u = parse_ok("rtp://[fe80::1%eth0]:5004?bitrate=1000");
    assert_string_equal(u.target, "fe80::1%eth0");
    assert_int_equal(u.port, 5004);
    u = parse_ok("rtp://[::ffff:192.168.1.20]:5000");
    assert_string_equal(u.target, "::ffff:192.168.1.20");
    u = parse_ok("rtp://ip6-localhost:5000"); /* a name: the resolver picks the family */
    assert_string_equal(u.target, "ip6-localhost");
    u = parse_ok("ros2:///");
    assert_string_equal(u.target, "");
    u = parse_ok("rtsp://@:8554/depth");
    assert_int_equal(u.kind, OUT_RTSP);
    assert_string_equal(u.target, "/depth");
    assert_int_equal(u.port, 8554);
    assert_int_equal(u.bitrate_kbps, 4000);
    u = parse_ok("rtsp://:8554/a/b");
    assert_string_equal(u.target, "/a/b");
    u = parse_ok("gst://appsrc ! videoconvert ! x264enc ! mp4mux ! filesink location=a?b&c.mp4");
    assert_int_equal(u.kind, OUT_GST);
    assert_string_equal(u.target, "appsrc ! videoconvert ! x264enc ! mp4mux ! filesink "
                                  "location=a?b&c.mp4");
    u = parse_ok("http://@:8080/?token=s3cret");
    assert_int_equal(u.kind, OUT_HTTP);
    assert_string_equal(u.target, "");
    assert_int_equal(u.port, 8080);
    assert_string_equal(u.token, "s3cret");
    assert_int_equal(u.tls, 0);
    u = parse_ok("http://localhost:0/");
    assert_string_equal(u.target, "127.0.0.1");
    assert_int_equal(u.port, 0);
    u = parse_ok("http://10.0.0.7:80");
    assert_string_equal(u.target, "10.0.0.7");
    u = parse_ok("http://[::1]:8080/");
    assert_string_equal(u.target, "::1");
    assert_int_equal(u.port, 8080);
    u = parse_ok("http://[::]:0/");
    assert_string_equal(u.target, "::");
    u = parse_ok("http://[fe80::2%eth0]:8080/");
    assert_string_equal(u.target, "fe80::2%eth0");
    u = parse_ok("https://@:8443/?cert=/etc/s/c.pem&key=my%20key.pem&token=t");
    assert_int_equal(u.kind, OUT_HTTP);
    assert_int_equal(u.tls, 1);
    assert_int_equal(u.port, 8443);
    assert_string_equal(u.cert, "/etc/s/c.pem");
    assert_string_equal(u.key, "my key.pem");
    assert_string_equal(u.token, "t");
    static const struct {
        const char *uri;
        int needs;
    } cam[] = {{"file://a_%d.ply", 1}, {"file://a_%d.pfm?depth=1", 1}, {"file://a_%d.pfm", 0},
               {"ros2://r", 0}, {"ros2://r?points=1", 1}, {"ros2://r?depth=32FC1", 1},
               {"ros2://r?points=0&qos=reliable", 0}};
    for (size_t i = 0; i < sizeof cam / sizeof cam[0]; i++) {
        u = parse_ok(cam[i].uri);
        assert_int_equal(output_uri_needs_camera(&u), cam[i].needs);
    }
}

/* ros2 ?min_confidence=N: 0..255, 0 masks nothing (the stage then makes no confidence map);
 * the other kinds do not take it. */
static void ros2_min_confidence(void **state)
{
    (void)state;
    static const struct {
        const char *uri;
        int value, needs;
    } ok[] = {{"ros2://r", 0, 0},
              {"ros2://r?min_confidence=0", 0, 0},
              {"ros2://r?min_confidence=1", 1, 1},
              {"ros2://r?min_confidence=128&qos=reliable", 128, 1},
              {"ros2://?domain=7&min_confidence=255&points=1", 255, 1},
              {"ros2://r?min_confidence=007", 7, 1}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        output_uri u = parse_ok(ok[i].uri);
        assert_int_equal(u.min_confidence, ok[i].value);
        assert_int_equal(output_uri_needs_confidence(&u), ok[i].needs);
        assert_int_equal(output_uri_needs_camera(&u), strstr(ok[i].uri, "points=1") != NULL);
    }
    output_uri u = parse_ok("file://a_%d.pfm");
    assert_int_equal(output_uri_needs_confidence(&u), 0);
    parse_bad("ros2://r?min_confidence=256",
              "'ros2://r?min_confidence=256': min_confidence = '256' is not a confidence "
              "threshold in 0..255 (pixels below it are published as invalid; 0: none)");
    parse_bad("ros2://r?min_confidence=-1", "min_confidence = '-1' is not a confidence threshold");
    parse_bad("ros2://r?min_confidence=", "min_confidence = '' is not a confidence threshold");
    parse_bad("ros2://r?min_confidence=1.5", "min_confidence = '1.5' is not");
    parse_bad("ros2://r?min_confidence=high", "min_confidence = 'high' is not");
    parse_bad("ros2://r?min_confidence=9999999999", "is not a confidence threshold in 0..255");
    parse_bad("ros2://r?min_confidence=5&min_confidence=6", "option 'min_confidence' given twice");
    parse_bad("ros2://?colour=1", "(options: domain, frame_id, qos, points, depth, "
                                  "min_confidence)");
    parse_bad("file://a_%d.pfm?min_confidence=5", "unknown option 'min_confidence' of file://");
    parse_bad("rtp://h:5000?min_confidence=5", "unknown option 'min_confidence' of rtp://");
}

static void bad_uris_are_refused(void **state)
{
    (void)state;
    parse_bad(NULL, "empty");
    parse_bad("", "empty");
    parse_bad("out.pfm", "not a URI");
    parse_bad("ftp://x", "unknown output scheme 'ftp'");
    parse_bad("display://x", "takes nothing");
    parse_bad("file://out.pfm", "needs a frame number");
    parse_bad("file://a_%d_%d.pfm", "2 frame-number conversions");
    parse_bad("file://a_%d.jpg", "must end in .pfm");
    parse_bad("file://a.pfm/b_%d", "must end in .pfm");
    parse_bad("file://a_%d.pfm?depth=2", "depth = '2' is not 0 or 1");
    parse_bad("file://a_%d.ply?depth=1", "always the point cloud");
    parse_bad("file://a_%d.pfm?colour=1", "unknown option 'colour' of file:// (options: depth)");
    parse_bad("file://a_%d.pfm?depth=1&depth=0", "option 'depth' given twice");
    parse_bad("ros2://?domain=233", "domain = '233' is not a DDS domain id in 0..232");
    parse_bad("ros2://?domain=-1", "is not a DDS domain id");
    parse_bad("ros2://?domain=", "is not a DDS domain id");
    parse_bad("ros2://9robot", "is not a ROS 2 namespace");
    parse_bad("ros2://a//b", "is not a ROS 2 namespace");
    parse_bad("ros2://a-b", "is not a ROS 2 namespace");
    parse_bad("ros2://a/b/", "'a/b/' is not a ROS 2 namespace");
    parse_bad("ros2://a/b/?domain=1", "no / at the end");
    parse_bad("ros2://a/", "is not a ROS 2 namespace");
    parse_bad("ros2:////a", "'//a' is not a ROS 2 namespace");
    parse_bad("ros2://a//", "is not a ROS 2 namespace");
    parse_bad("ros2://?qos=fast", "qos = 'fast'");
    parse_bad("ros2://?points=yes", "points = 'yes' is not 0 or 1");
    parse_bad("ros2://?depth=8UC1", "depth = '8UC1'");
    parse_bad("ros2://?frame_id=a%20b", "letters, digits and _ / - . only");
    parse_bad("ros2://?frame_id=", "frame_id: 1..127 characters");
    parse_bad("ros2://?x", "'x' is not KEY=VALUE");
    parse_bad("ros2://?colour=1", "unknown option 'colour' of ros2://");
    parse_bad("rtp://host", "expected HOST:PORT");
    parse_bad("rtp://host:0", "a port in 1..65535");
    parse_bad("rtp://host:65536", "a port in 1..65535");
    parse_bad("rtp://:5000", "expected rtp://HOST:PORT");
    parse_bad("rtp://ho st:5000", "is not a host name");
    parse_bad("rtp://h:5000?bitrate=50", "bitrate = '50' is not kbit/s in 100..100000");
    parse_bad("rtp://::1:5000", "an IPv6 address goes in brackets: rtp://[::1]:PORT");
    parse_bad("rtp://fe80::2:5000", "rtp://[fe80::2]:PORT");
    parse_bad("rtp://::", "expected HOST:PORT");
    parse_bad("rtp://host:5000:", "expected HOST:PORT");
    parse_bad("rtp://[::1:5000", "no ']' after the IPv6 address");
    parse_bad("rtp://[::1]", "expected HOST:PORT");
    parse_bad("rtp://[::1]5000", "expected HOST:PORT");
    parse_bad("rtp://[::1]:0", "a port in 1..65535");
    parse_bad("rtp://[]:5000", "'[]' is not an IPv6 address");
    parse_bad("rtp://[host]:5000", "'[host]' is not an IPv6 address");
    parse_bad("rtp://[::1%]:5000", "is not an IPv6 address");
    parse_bad("rtp://[::1]:5000/x", "expected rtp://HOST:PORT");
    parse_bad("rtsp://[::1]:8554/depth", "listens on every interface");
    parse_bad("rtsp://cam:8554/depth", "listens on every interface");
    parse_bad("rtsp://@:8554", "no mount path");
    parse_bad("rtsp://@:8554/a b", "letters, digits and _ - . / only");
    parse_bad("http://[::1:8080/", "no ']' after the IPv6 address");
    parse_bad("http://::1:8080/", "an IPv6 address goes in brackets: http://[::1]:PORT/");
    parse_bad("http://fe80::2:8080/", "http://[fe80::2]:PORT/");
    parse_bad("http://[zz]:8080/", "'[zz]' is not an IPv6 address");
    parse_bad("http://[::1]/", "expected http://@:PORT/");
    parse_bad("http://[::1]8080/", "expected http://@:PORT/");
    parse_bad("http://[::1%]:8080/", "is not an IPv6 address");
    parse_bad("http://[1.2.3.4]:8080/", "is not an IPv6 address");
    parse_bad("http://[::1]:65536/", "a port in 0..65535");
    parse_bad("http://robot:8080/", "'robot' is not where to listen");
    parse_bad("http://1.2.3.256:8080/", "is not where to listen");
    parse_bad("http://@:8080/x", "nothing may follow the '/'");
    parse_bad("http://@:8080/?cert=c.pem", "cert= is for https:// (TLS), not http://");
    parse_bad("https://@:8443/", "https:// needs the certificate and its key");
    parse_bad("https://@:8443/?cert=c.pem", "?cert=FILE&key=FILE");
    parse_bad("https://@:8443/?key=k.pem&cert=", "cert= names no file");
    parse_bad("https://@:8443/?cert=a&key=b&cert=c", "option 'cert' given twice");
    parse_bad("https://@:8443/?cert=a&key=b&nope=1", "unknown option 'nope' of https://");
    parse_bad("display://?depth=1", "unknown option 'depth' of display:// (it takes none)");
    parse_bad("gst://videotestsrc ! appsrc", "starts with the appsrc");
    parse_bad("gst://appsrc", "nothing after the appsrc");
    parse_bad("file://a\tb_%d.pfm", "control character");
    char longer[OUTPUT_URI_MAX + 8];
    memset(longer, 'a', sizeof longer - 1);
    memcpy(longer, "ros2://", 7);
    longer[sizeof longer - 1] = '\0';
    parse_bad(longer, "at most 511 fit");
}

/* desc -> "ELEMENT:LOCATION[*]|..." (* a pattern): the locations gst_parse_launch sets (each
 * expectation checked against GStreamer 1.22's own parse when written) */
static void gst_files_are(const char *desc, const char *want)
{
    output_gst_file f[OUTPUT_GST_FILES_MAX];
    err[0] = '\0';
    int n = output_gst_files(desc, f, OUTPUT_GST_FILES_MAX, err, sizeof err);
    if (n < 0)
        fail_msg("'%s' refused: %s", desc, err);
    char got[OUTPUT_GST_FILES_MAX * (OUTPUT_URI_MAX + 32)] = "";
    for (int i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s:%s%s", i ? "|" : "",
                 f[i].element, f[i].location, f[i].is_pattern ? "*" : "");
    if (strcmp(got, want) != 0)
        fail_msg("'%s': got '%s', want '%s'", desc, got, want);
}

static void gst_files_found(void **state)
{
    (void)state;
    gst_files_are("appsrc ! pngenc ! filesink location=in/right_000002.png",
                  "filesink:in/right_000002.png");
    gst_files_are("appsrc ! filesink location = \"a b.png\" sync=false", "filesink:a b.png");
    gst_files_are("appsrc ! filesink location=a\\ b.png", "filesink:a b.png");
    gst_files_are("appsrc ! filesink location='a b.png'", "filesink:'a b.png'");
    gst_files_are("appsrc ! filesink location=\"a\\\"b.png\"", "filesink:a\"b.png");
    gst_files_are("appsrc ! filesink location=\"\\101.png\"", "filesink:101.png");
    gst_files_are("appsrc ! filesink location=x.png!fakesink", "filesink:x.png!fakesink");
    gst_files_are("appsrc ! filesink location=\"x.png\"!fakesink",
                  "filesink:\"x.png\"!fakesink");
    gst_files_are("appsrc ! filesink location=\"a.png", "filesink:\"a.png");
    gst_files_are("appsrc ! filesink location=a.png location=b.png", "filesink:b.png");
    gst_files_are("appsrc ! videoconvert ! video/x-raw, format=RGB, location=x ! pngenc ! "
                  "multifilesink location=out/%05d.png",
                  "multifilesink:out/%05d.png*");
    gst_files_are("appsrc ! tee name=t ! queue ! filesink location=1.png t. ! queue ! "
                  "splitmuxsink location=v%02d.mp4 t. ! queue ! multifilesink location=one.png",
                  "filesink:1.png|splitmuxsink:v%02d.mp4*|multifilesink:one.png");
    gst_files_are("appsrc ! bin.( filesink location=z.png )", "filesink:z.png");
    gst_files_are("appsrc ! pngenc ! file:///tmp/u%20v.png", "filesink:/tmp/u v.png");
    gst_files_are("appsrc ! pngenc ! file://localhost/tmp/w.png", "filesink:/tmp/w.png");
}

static void gst_files_left_out(void **state)
{
    (void)state;
    gst_files_are("appsrc ! videoconvert ! autovideosink", "");
    gst_files_are("appsrc ! filesink location=NULL", "");
    gst_files_are("appsrc ! filesink location=\"\"", "");
    gst_files_are("appsrc ! fakesink location=a.png", "");  /* not an element that writes */
    gst_files_are("appsrc ! queue name=filesink ! fakesink sync=false", "");
    gst_files_are("multifilesrc location=in/%05d.png ! fakesink", "");
    char many[OUTPUT_URI_MAX] = "appsrc ! tee name=t";
    for (int i = 0; i <= OUTPUT_GST_FILES_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), " t. ! filesink location=%d", i);
    output_gst_file f[OUTPUT_GST_FILES_MAX];
    assert_int_equal(output_gst_files(many, f, OUTPUT_GST_FILES_MAX, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than 8 files"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_form_parses),
        cmocka_unit_test(bad_uris_are_refused),
        cmocka_unit_test(ros2_min_confidence),
        cmocka_unit_test(gst_files_found),
        cmocka_unit_test(gst_files_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
