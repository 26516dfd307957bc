/* SPDX-License-Identifier: Apache-2.0 */
/* test_live_cameras.c — the text of stereo-live --list-cameras (app/live_cameras.c) for camera
 * lists made up here as drivers report them: a UVC pair with MJPEG and libv4l2's conversions
 * (the whole text), the settings chosen for pairs without 640x480 in common, with 29.97 fps,
 * with only a converted format in common, with a stepwise size range, with nothing in common,
 * one side-by-side camera, a path that needs shell quoting, and a list without cameras.
 * (Real devices: tests/test_v4l2_vivid.sh lists vivid's in a VM.)
 *
 *   CMOCKA_MESSAGE_OUTPUT=TAP build/tests/test_live_cameras
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "live_cameras.h"

#define MAX_NODES 4

static camera_node nodes[MAX_NODES];
static camera_list list;
static char *text;

/* ---- making up a list ----------------------------------------------------------------------- */

static void reset(void)
{
    memset(nodes, 0, sizeof nodes);
    list = (camera_list){0, nodes, 0};
    free(text);
    text = NULL;
}

static camera_node *add_node(const char *path, const char *card, const char *bus, int is_capture)
{
    camera_node *n = &nodes[list.n++];
    snprintf(n->path, sizeof n->path, "%s", path);
    snprintf(n->card, sizeof n->card, "%s", card);
    snprintf(n->bus_info, sizeof n->bus_info, "%s", bus);
    snprintf(n->driver, sizeof n->driver, "uvcvideo");
    n->capture = is_capture;
    snprintf(n->kind, sizeof n->kind, "%s", is_capture ? "video capture" : "metadata capture");
    return n;
}

static void add_link(camera_node *n, const char *link)
{
    snprintf(n->link[n->nlinks++], sizeof n->link[0], "%s", link);
}

/* A format with room for 8 sizes (static storage: the test's lists live until the next reset). */
static camera_format *add_format(camera_node *n, const char *fourcc, const char *desc,
                                 capture_format takes, int emulated, int compressed)
{
    static camera_format formats[MAX_NODES][8];
    static camera_size sizes[MAX_NODES][8][8];
    int k = (int)(n - nodes);
    camera_format *f = &formats[k][n->nformats];
    memset(f, 0, sizeof *f);
    f->fourcc = v4l2_fourcc(fourcc[0], fourcc[1], fourcc[2], fourcc[3]);
    snprintf(f->description, sizeof f->description, "%s", desc);
    f->takes = takes;
    f->emulated = emulated;
    f->compressed = compressed;
    f->sizes = sizes[k][n->nformats];
    n->formats = formats[k];
    n->nformats++;
    return f;
}

/* A discrete size with its rates, ended by 0. */
static void add_size(camera_format *f, unsigned w, unsigned h, ...)
{
    camera_size *s = &f->sizes[f->nsizes++];
    memset(s, 0, sizeof *s);
    s->width = w;
    s->height = h;
    va_list ap;
    va_start(ap, h);
    for (double r; (r = va_arg(ap, double)) > 0;)
        s->rate[s->nrates++] = r;
    va_end(ap);
}

static void print_list(int want_cameras)
{
    size_t len;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    int n = live_cameras_print(&list, out);
    fclose(out);
    assert_int_equal(n, want_cameras);
}

/* The settings lines of the configuration-file snippet, one string. */
static void assert_settings(const char *want)
{
    const char *at = strstr(text, "\t[camera]\n");
    assert_non_null(at);
    if (!strstr(at, want))
        fail_msg("settings: want\n%s\nin\n%s", want, text);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void uvc_pair(camera_node **a, camera_node **b)
{
    for (int i = 0; i < 2; i++) {
        char path[32], bus[40];
        snprintf(path, sizeof path, "/dev/video%d", 2 * i);
        snprintf(bus, sizeof bus, "usb-0000:00:14.0-%d", i + 1);
        camera_node *n = add_node(path, "USB Camera: USB Camera", bus, 1);
        n->number = 2 * i;
        add_link(n, i ? "/dev/v4l/by-id/usb-Cam_Right_22-video-index0"
                      : "/dev/v4l/by-id/usb-Cam_Left_11-video-index0");
        add_link(n, i ? "/dev/v4l/by-path/pci-0000:00:14.0-usb-0:2:1.0-video-index0"
                      : "/dev/v4l/by-path/pci-0000:00:14.0-usb-0:1:1.0-video-index0");
        camera_format *f = add_format(n, "YUYV", "YUYV 4:2:2", CAPTURE_FORMAT_YUYV, 0, 0);
        add_size(f, 640, 480, 30.0, 15.0, 0.0);
        add_size(f, 1280, 720, 10.0, 0.0);
        f = add_format(n, "MJPG", "Motion-JPEG", CAPTURE_FORMAT_AUTO, 0, 1);
        add_size(f, 640, 480, 30.0, 15.0, 0.0);
        add_size(f, 1280, 720, 30.0, 0.0);
        f = add_format(n, "RGB3", "RGB3", CAPTURE_FORMAT_RGB24, 1, 0);
        add_size(f, 640, 480, 30.0, 15.0, 0.0);
        f = add_format(n, "YU12", "YU12", CAPTURE_FORMAT_AUTO, 1, 0);
        add_size(f, 640, 480, 30.0, 15.0, 0.0);
        *(i ? b : a) = n;
        /* the UVC metadata node beside each camera */
        snprintf(path, sizeof path, "/dev/video%d", 2 * i + 1);
        add_node(path, "USB Camera: USB Camera", bus, 0)->number = 2 * i + 1;
    }
}

static void test_uvc_pair_whole_text(void **state)
{
    camera_node *a, *b;
    reset();
    uvc_pair(&a, &b);
    print_list(2);
    const char *want =
        "USB Camera: USB Camera (usb-0000:00:14.0-1), driver uvcvideo:\n"
        "\t/dev/video0: video capture\n"
        "\t    /dev/v4l/by-id/usb-Cam_Left_11-video-index0\n"
        "\t    /dev/v4l/by-path/pci-0000:00:14.0-usb-0:1:1.0-video-index0\n"
        "\t    YUYV 'YUYV 4:2:2' (format = yuyv)\n"
        "\t        640x480: 30, 15 fps\n"
        "\t        1280x720: 10 fps\n"
        "\t    MJPG 'Motion-JPEG' (compressed)\n"
        "\t        640x480: 30, 15 fps\n"
        "\t        1280x720: 30 fps\n"
        "\t    converted by libv4l2 from the formats above: RGB3 (format = rgb24), YU12\n"
        "\t/dev/video1: metadata capture\n"
        "\n"
        "USB Camera: USB Camera (usb-0000:00:14.0-2), driver uvcvideo:\n"
        "\t/dev/video2: video capture\n"
        "\t    /dev/v4l/by-id/usb-Cam_Right_22-video-index0\n"
        "\t    /dev/v4l/by-path/pci-0000:00:14.0-usb-0:2:1.0-video-index0\n"
        "\t    YUYV 'YUYV 4:2:2' (format = yuyv)\n"
        "\t        640x480: 30, 15 fps\n"
        "\t        1280x720: 10 fps\n"
        "\t    MJPG 'Motion-JPEG' (compressed)\n"
        "\t        640x480: 30, 15 fps\n"
        "\t        1280x720: 30 fps\n"
        "\t    converted by libv4l2 from the formats above: RGB3 (format = rgb24), YU12\n"
        "\t/dev/video3: metadata capture\n"
        "\n"
        "The first two cameras (left and right as seen from behind the rig: swap them if "
        "needed), for the configuration file:\n"
        "\t[source]\n"
        "\ttype = v4l2\n"
        "\t[camera]\n"
        "\tleft = /dev/v4l/by-id/usb-Cam_Left_11-video-index0\n"
        "\tright = /dev/v4l/by-id/usb-Cam_Right_22-video-index0\n"
        "\twidth = 640\n"
        "\theight = 480\n"
        "\tfps = 30\n"
        "\tformat = yuyv\n"
        "or on the command line:\n"
        "\tstereo-live --source v4l2 --set camera.left=/dev/v4l/by-id/usb-Cam_Left_11-video-index0"
        " --set camera.right=/dev/v4l/by-id/usb-Cam_Right_22-video-index0 \\\n"
        "\t    --set camera.width=640 --set camera.height=480 --set camera.fps=30 "
        "--set camera.format=yuyv\n";
    assert_string_equal(text, want);
}

/* by-path when there is no by-id link, /dev/videoN when neither */
static void test_config_path_without_by_id(void **state)
{
    camera_node *a, *b;
    reset();
    uvc_pair(&a, &b);
    memmove(a->link[0], a->link[1], sizeof a->link[0]);
    a->nlinks = 1;
    b->nlinks = 0;
    print_list(2);
    assert_settings("\tleft = /dev/v4l/by-path/pci-0000:00:14.0-usb-0:1:1.0-video-index0\n"
                    "\tright = /dev/video2\n");
}

/* no 640x480 in common: the largest size both list up to 1280 wide, at the fastest rate both
 * list there */
static void test_largest_common_size(void **state)
{
    reset();
    camera_format *f = add_format(add_node("/dev/video0", "A", "usb-1", 1), "YUYV", "YUYV 4:2:2",
                                  CAPTURE_FORMAT_YUYV, 0, 0);
    add_size(f, 320, 240, 30.0, 0.0);
    add_size(f, 1280, 720, 10.0, 5.0, 0.0);
    add_size(f, 1920, 1080, 5.0, 0.0);
    f = add_format(add_node("/dev/video2", "B", "usb-2", 1), "YUYV", "YUYV 4:2:2",
                   CAPTURE_FORMAT_YUYV, 0, 0);
    add_size(f, 1280, 720, 10.0, 7.5, 0.0);
    add_size(f, 1920, 1080, 5.0, 0.0);
    print_list(2);
    assert_settings("\twidth = 1280\n\theight = 720\n\tfps = 10\n\tformat = yuyv\n");
    assert_non_null(strstr(text, "\t        1280x720: 10, 7.5 fps\n"));
}

/* 30000/1001 fps is what camera.fps = 30 captures (CAPTURE_FPS_TOLERANCE); 29.97 against 25
 * has no rate in common, so no size either */
static void test_ntsc_rate(void **state)
{
    for (int other = 30; other >= 25; other -= 5) {
        reset();
        camera_format *f = add_format(add_node("/dev/video0", "A", "usb-1", 1), "GREY",
                                      "8-bit Greyscale", CAPTURE_FORMAT_GREY, 0, 0);
        add_size(f, 640, 480, 30000.0 / 1001, 0.0);
        f = add_format(add_node("/dev/video2", "B", "usb-2", 1), "GREY", "8-bit Greyscale",
                       CAPTURE_FORMAT_GREY, 0, 0);
        add_size(f, 640, 480, (double)other, 0.0);
        print_list(2);
        assert_non_null(strstr(text, "\t        640x480: 29.97 fps\n"));
        if (other == 30)
            assert_settings("\twidth = 640\n\theight = 480\n\tfps = 30\n\tformat = grey\n");
        else {
            assert_settings("\t# found no format, size and rate that both offer: choose them "
                            "from the list above (format = auto lets libv4l2 convert)\n");
            assert_null(strstr(text, "camera.width"));
        }
    }
}

/* only libv4l2's RGB24 in common (one YUYV camera, one MJPEG camera) */
static void test_converted_format(void **state)
{
    reset();
    camera_node *a = add_node("/dev/video0", "A", "usb-1", 1);
    add_size(add_format(a, "YUYV", "YUYV 4:2:2", CAPTURE_FORMAT_YUYV, 0, 0), 640, 480, 30.0, 0.0);
    add_size(add_format(a, "RGB3", "RGB3", CAPTURE_FORMAT_RGB24, 1, 0), 640, 480, 30.0, 0.0);
    camera_node *b = add_node("/dev/video2", "B", "usb-2", 1);
    add_size(add_format(b, "MJPG", "Motion-JPEG", CAPTURE_FORMAT_AUTO, 0, 1), 640, 480, 30.0, 0.0);
    add_size(add_format(b, "RGB3", "RGB3", CAPTURE_FORMAT_RGB24, 1, 0), 640, 480, 30.0, 0.0);
    print_list(2);
    assert_settings("\twidth = 640\n\theight = 480\n\tfps = 30\n\tformat = rgb24\n");
}

/* a stepwise size range with a rate range: printed as a range; 640x480 lies in it; 30 is not in
 * the other camera's list, so the fastest both offer (50) */
static void test_stepwise(void **state)
{
    reset();
    camera_format *f = add_format(add_node("/dev/video0", "A", "platform:a", 1), "YUYV",
                                  "YUYV 4:2:2", CAPTURE_FORMAT_YUYV, 0, 0);
    camera_size *s = &f->sizes[f->nsizes++];
    memset(s, 0, sizeof *s);
    *s = (camera_size){.stepwise = 1, .width = 1920, .height = 1080, .min_width = 16,
                       .min_height = 16, .step_width = 2, .step_height = 2, .rate_range = 1,
                       .rate_min = 1, .rate_max = 60};
    f = add_format(add_node("/dev/video2", "B", "usb-2", 1), "YUYV", "YUYV 4:2:2",
                   CAPTURE_FORMAT_YUYV, 0, 0);
    add_size(f, 640, 480, 25.0, 50.0, 0.0);
    add_size(f, 641, 480, 60.0, 0.0); /* odd width: off the range's step of 2 */
    print_list(2);
    assert_non_null(strstr(text, "\t    YUYV 'YUYV 4:2:2' (format = yuyv)\n"
                                 "\t        16x16..1920x1080, step 2x2: 1..60 fps at 1920x1080\n"));
    assert_settings("\twidth = 640\n\theight = 480\n\tfps = 50\n\tformat = yuyv\n");
}

/* one capture node: the side-by-side settings, the largest size up to 2560 wide */
static void test_one_camera_side_by_side(void **state)
{
    reset();
    camera_node *a = add_node("/dev/video0", "ZED", "usb-1", 1);
    add_link(a, "/dev/v4l/by-id/usb-ZED-video-index0");
    camera_format *f = add_format(a, "YUYV", "YUYV 4:2:2", CAPTURE_FORMAT_YUYV, 0, 0);
    add_size(f, 1344, 376, 100.0, 60.0, 30.0, 15.0, 0.0);
    add_size(f, 2560, 720, 60.0, 30.0, 15.0, 0.0);
    add_size(f, 3840, 1080, 30.0, 15.0, 0.0);
    print_list(1);
    assert_non_null(strstr(text, "One camera: if it is a side-by-side stereo camera"));
    assert_settings("\tdevice = /dev/v4l/by-id/usb-ZED-video-index0\n\twidth = 2560\n"
                    "\theight = 720\n\tfps = 30\n\tformat = yuyv\n");
    assert_non_null(strstr(text, "\tstereo-live --source sbs --set camera.device="
                                 "/dev/v4l/by-id/usb-ZED-video-index0 \\\n"));
    assert_non_null(strstr(text, "\t[source]\n\ttype = sbs\n"));
}

/* a name with a blank and a quote: as it is in the file, one quoted word on the command line */
static void test_shell_quoting(void **state)
{
    camera_node *a, *b;
    reset();
    uvc_pair(&a, &b);
    snprintf(a->link[0], sizeof a->link[0], "/dev/v4l/by-id/usb-Bob's Cam-video-index0");
    print_list(2);
    assert_settings("\tleft = /dev/v4l/by-id/usb-Bob's Cam-video-index0\n");
    assert_non_null(strstr(text, " --set camera.left='/dev/v4l/by-id/usb-Bob'\\''s "
                                 "Cam-video-index0' --set camera.right="
                                 "/dev/v4l/by-id/usb-Cam_Right_22-video-index0 \\\n"));
}

/* nodes that could not be asked, and non-capture nodes: listed, no settings, 0 cameras */
static void test_no_camera(void **state)
{
    reset();
    camera_node *a = add_node("/dev/video0", "", "", 0);
    snprintf(a->error, sizeof a->error, "device is busy (another program is using it)");
    add_link(a, "/dev/v4l/by-id/usb-Busy-video-index0");
    add_node("/dev/video1", "M", "usb-3", 0);
    print_list(0);
    assert_string_equal(text, "M (usb-3), driver uvcvideo:\n"
                              "\t/dev/video1: metadata capture\n"
                              "\n"
                              "Not listed:\n"
                              "\t/dev/video0: device is busy (another program is using it)\n"
                              "\t    /dev/v4l/by-id/usb-Busy-video-index0\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uvc_pair_whole_text),
        cmocka_unit_test(test_config_path_without_by_id),
        cmocka_unit_test(test_largest_common_size),
        cmocka_unit_test(test_ntsc_rate),
        cmocka_unit_test(test_converted_format),
        cmocka_unit_test(test_stepwise),
        cmocka_unit_test(test_one_camera_side_by_side),
        cmocka_unit_test(test_shell_quoting),
        cmocka_unit_test(test_no_camera),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    reset();
    return r;
}
