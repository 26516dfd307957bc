/* SPDX-License-Identifier: Apache-2.0 */
/* calib-maps — rectification maps from a calibration YAML (or a LEFT,RIGHT pair of ROS
 * camera_info files), computed in C (hal/calib.h), and checks of map files.
 *
 *   calib-maps [--size WxH] CALIB.yml MAPS            write the map file computed from CALIB.yml
 *   calib-maps --compare MAPS CALIB.yml [--tolerance N]
 *                                                     compare a map file with CALIB.yml's maps
 *   calib-maps --info FILE                            check a map file or calibration, describe it
 * CALIB.yml may be "LEFT.yaml,RIGHT.yaml": the two ROS camera_info files of a stereo calibration,
 * or a rig file of N cameras (stereo-calibrate --view): MAPS then names the pair map files, one
 * per camera other than the reference R, MAPS with "-R-K" before its extension (rig.maps ->
 * rig-0-1.maps, rig-0-2.maps, ...), each holding the maps of cameras R (left) and K (right).
 *
 * Exit status: 0 success, 1 bad input (one line naming the file) or maps that differ by more
 * than the tolerance, 2 bad usage (MAPS naming CALIB, a link, a directory or a device, or in a
 * folder that cannot be written: checked before anything is read).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "mapfile.h"
#include "outpath.h"
#include "rectify.h"
#include "version.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: calib-maps [--size WxH] CALIB.yml MAPS\n"
    "       calib-maps --compare MAPS CALIB.yml [--tolerance N]\n"
    "       calib-maps --info FILE\n"
    "\n"
    "Computes the rectification maps of a stereo calibration (OpenCV YAML: M1 D1 M2 D2 R T R1\n"
    "R2 P1 P2 Q, image_width, image_height) the way OpenCV's initUndistortRectifyMap does, and\n"
    "writes them as a map file for stereo-match --maps, with the rectified left camera (focal\n"
    "length, centre, baseline: version 2, for --depth / --ply). CALIB.yml may also be the pair\n"
    "LEFT.yaml,RIGHT.yaml of ROS camera_info files written by a stereo calibration, or a\n"
    "rig file of N cameras (stereo-calibrate --view): then one pair map file per camera K\n"
    "other than the reference R, named MAPS with -R-K before the extension (rig.maps ->\n"
    "rig-0-1.maps, ...), holding the maps of cameras R (left) and K (right).\n"
    "  --size WxH       output size (default: the calibration's rectified size)\n"
    "  --compare        compare MAPS (e.g. from stereo-calibrate --maps) with the maps computed\n"
    "                   from CALIB.yml; fails when a pixel differs by more than the tolerance\n"
    "  --tolerance N    largest accepted difference in 1/32 px (default 1)\n"
    "  --info           check FILE (map file or calibration) and print what its maps cover\n"
    "                   and its camera\n"
    "  --version        print the version, git commit and the backends built in\n"
    "MAPS is written to a temporary file beside it and renamed into place; a MAPS that names\n"
    "CALIB, a link, a directory or a device is refused (exit status 2).\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "calib-maps: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see --help)\n");
    return EXIT_USAGE;
}

/* Map position of pixel i in 1/32 px. */
static int32_t pos32(const stereo_map *m, size_t i, int axis)
{
    int f = axis == 0 ? m->frac[i] & 31 : (m->frac[i] >> 5) & 31;
    return (int32_t)m->xy[2 * i + axis] * 32 + f;
}

/* Does the sample at pixel i read only source pixels inside the camera image? (rectify.h) */
static int inside(const stereo_map *m, size_t i)
{
    int x = m->xy[2 * i], y = m->xy[2 * i + 1];
    int fx = m->frac[i] & 31, fy = (m->frac[i] >> 5) & 31;
    return x >= 0 && y >= 0 && x + (fx != 0) < m->src_width && y + (fy != 0) < m->src_height;
}

static int compare(const char *maps_path, const char *calib_path, int tolerance)
{
    char err[512];
    stereo_map file[2], ours[2];
    if (mapfile_read(maps_path, file, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return 1;
    }
    if (calib_load_maps(calib_path, 0, 0, ours, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        mapfile_free(file);
        return 1;
    }
    int rc = 0;
    if (ours[0].src_width != file[0].src_width || ours[0].src_height != file[0].src_height) {
        fprintf(stderr, "calib-maps: %s: maps for %dx%d camera images, but %s calibrates "
                "%dx%d images\n", maps_path, file[0].src_width, file[0].src_height, calib_path,
                ours[0].src_width, ours[0].src_height);
        rc = 1;
    } else if (ours[0].width != file[0].width || ours[0].height != file[0].height) {
        fprintf(stderr, "calib-maps: %s: maps are %dx%d, but %s gives %dx%d\n", maps_path,
                file[0].width, file[0].height, calib_path, ours[0].width, ours[0].height);
        rc = 1;
    }
    for (int k = 0; k < 2 && rc == 0; k++) {
        size_t n = (size_t)file[k].width * file[k].height, compared = 0, differ = 0;
        int32_t worst = 0;
        for (size_t i = 0; i < n; i++) {
            /* where both sample outside the image both are invalid, whatever the position */
            if (!inside(&file[k], i) && !inside(&ours[k], i))
                continue;
            compared++;
            int32_t dx = abs(pos32(&file[k], i, 0) - pos32(&ours[k], i, 0));
            int32_t dy = abs(pos32(&file[k], i, 1) - pos32(&ours[k], i, 1));
            int32_t d = dx > dy ? dx : dy;
            differ += d != 0;
            worst = d > worst ? d : worst;
        }
        printf("%s: %zu pixels compared, %zu differ (%.4f %%), max difference %d/32 px\n",
               k ? "right" : "left", compared, differ, compared ? 100.0 * differ / compared : 0.0,
               worst);
        if (worst > tolerance) {
            fprintf(stderr, "calib-maps: %s: %s map differs from %s by up to %d/32 px "
                    "(tolerance %d/32)\n", maps_path, k ? "right" : "left", calib_path, worst,
                    tolerance);
            rc = 1;
        }
    }
    mapfile_free(file);
    mapfile_free(ours);
    return rc;
}

/* --info of a rig file: each camera's map. */
static int rig_info(const char *path)
{
    char err[512];
    calib_rig g;
    stereo_map m[CALIB_RIG_MAX];
    if (calib_rig_load(path, 0, 0, &g, m, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return 1;
    }
    printf("%s: rig of %d cameras, reference %d, %dx%d maps from %dx%d camera images, focal "
           "length %.2f px, cx %.2f, cy %.2f\n", path, g.ncams, g.reference, m[0].width,
           m[0].height, m[0].src_width, m[0].src_height, g.focal, g.cx, g.cy);
    int rc = 0;
    for (int k = 0; k < g.ncams; k++) {
        if (rectify_map_check(&m[k], m[k].width, m[k].height, err, sizeof err)) {
            fprintf(stderr, "calib-maps: %s: camera %d map: %s\n", path, k, err);
            rc = 1;
            break;
        }
        size_t n = (size_t)m[k].width * m[k].height, valid = 0;
        for (size_t i = 0; i < n; i++)
            valid += inside(&m[k], i);
        printf("camera %d: baseline ratio %.6g, %zu of %zu pixels sample inside the image "
               "(%.1f %%)\n", k, g.ratio[k], valid, n, 100.0 * valid / n);
    }
    calib_rig_free_maps(m);
    return rc;
}

static int info(const char *path)
{
    char err[512];
    stereo_map m[2];
    int rig = strchr(path, ',') ? 0 : calib_is_rig(path, err, sizeof err);
    if (rig > 0)
        return rig_info(path);
    depth_camera cam;
    int has_cam;
    if (calib_load_maps_camera(path, 0, 0, m, &cam, &has_cam, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return 1;
    }
    printf("%s: %dx%d maps from %dx%d camera images\n", path, m[0].width, m[0].height,
           m[0].src_width, m[0].src_height);
    if (has_cam) /* %.17g: every bit of the stored doubles */
        printf("camera: f %.17g px, centre %.17g,%.17g px, baseline %.17g, doffs %.17g px\n",
               cam.focal_px, cam.cx, cam.cy, cam.baseline, cam.doffs_px);
    else
        printf("camera: none (a version 1 map file, or one written without a calibration: "
               "depth needs --focal and --baseline)\n");
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        if (rectify_map_check(&m[k], m[k].width, m[k].height, err, sizeof err)) {
            fprintf(stderr, "calib-maps: %s: %s map: %s\n", path, k ? "right" : "left", err);
            rc = 1;
            break;
        }
        size_t n = (size_t)m[k].width * m[k].height, valid = 0;
        int64_t sum[2] = {0, 0};
        int32_t lo[2] = {INT32_MAX, INT32_MAX}, hi[2] = {INT32_MIN, INT32_MIN};
        for (size_t i = 0; i < n; i++) {
            valid += inside(&m[k], i);
            for (int a = 0; a < 2; a++) {
                int32_t p = pos32(&m[k], i, a);
                sum[a] += p;
                lo[a] = p < lo[a] ? p : lo[a];
                hi[a] = p > hi[a] ? p : hi[a];
            }
        }
        /* positions in 1/32 px, exact, so that tests can check every value got through */
        printf("%s: %zu of %zu pixels sample inside the image (%.1f %%); x/32 %" PRId32
               "..%" PRId32 " sum %" PRId64 "; y/32 %" PRId32 "..%" PRId32 " sum %" PRId64 "\n",
               k ? "right" : "left", valid, n, 100.0 * valid / n, lo[0], hi[0], sum[0], lo[1],
               hi[1], sum[1]);
    }
    mapfile_free(m);
    return rc;
}

/* A rig file: one pair map file (reference, camera k) per other camera, named as
 * calib_rig_map_path says; every name checked (outpath.h) before the first is written, once the
 * rig file has said how many there are. */
static int write_rig_maps(const char *rig_path, const char *maps_path, int w, int h)
{
    char err[2 * 4096 + 256];
    calib_rig g;
    stereo_map m[CALIB_RIG_MAX];
    if (calib_rig_read(rig_path, &g, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return 1;
    }
    char names[CALIB_RIG_MAX][4096];
    outpath_file out[CALIB_RIG_MAX];
    int nout = 0;
    for (int k = 0; k < g.ncams; k++) {
        if (k == g.reference)
            continue;
        if (calib_rig_map_path(maps_path, g.reference, k, names[nout], sizeof names[0]))
            return usage_error("MAPS '%s' is too long", maps_path);
        out[nout] = (outpath_file){"MAPS", names[nout]};
        nout++;
    }
    outpath_file in = {"RIG", rig_path};
    if (outpath_check(out, nout, &in, 1, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return EXIT_USAGE;
    }
    if (calib_rig_compute_maps(&g, w, h, m, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s: %s\n", rig_path, err);
        return 1;
    }
    int rc = 0;
    for (int i = 0, k = 0; k < g.ncams && rc == 0; k++) {
        if (k == g.reference)
            continue;
        stereo_map pair[2] = {m[g.reference], m[k]};
        /* the pair's rectified left camera (depth.h) where camera k is right of the reference
         * (positive disparities): B from the projections, P[0][3] = -f B */
        const int r = g.reference;
        depth_camera cam = {g.P[r][0][0], g.P[r][0][2], g.P[r][1][2],
                            (g.P[r][0][3] - g.P[k][0][3]) / g.P[k][0][0],
                            g.P[k][0][2] - g.P[r][0][2]};
        const int with_cam = cam.baseline > 0 && depth_camera_check(&cam, "", NULL, 0) == 0;
        rc = with_cam ? mapfile_write_camera(names[i], pair, &cam, err, sizeof err)
                      : mapfile_write(names[i], pair, err, sizeof err);
        if (rc)
            fprintf(stderr, "calib-maps: %s\n", err);
        else
            printf("%s: %dx%d maps of cameras %d (reference) and %d from %dx%d camera images "
                   "(baseline ratio %.6g, rectified focal length %.2f px; %s)\n", names[i],
                   m[k].width, m[k].height, g.reference, k, m[k].src_width, m[k].src_height,
                   g.ratio[k], g.focal,
                   with_cam ? "with the camera for depth" : "left of the reference: no camera");
        i++;
    }
    calib_rig_free_maps(m);
    return rc ? 1 : 0;
}

static int write_maps(const char *calib_path, const char *maps_path, int w, int h)
{
    char err[2 * 4096 + 256];
    stereo_calib c;
    stereo_map m[2];
    /* MAPS must not name the calibration (either file of a camera_info pair), nor a link, a
     * directory or a device; refused before anything is read (outpath.h) */
    char calib_files[2][4096] = {"", ""};
    const char *comma = strchr(calib_path, ',');
    snprintf(calib_files[0], sizeof calib_files[0], "%.*s",
             comma ? (int)(comma - calib_path) : 4095, calib_path);
    if (comma)
        snprintf(calib_files[1], sizeof calib_files[1], "%s", comma + 1);
    outpath_file out = {"MAPS", maps_path};
    outpath_file in[2] = {{"CALIB", calib_files[0]}, {"CALIB", calib_files[1]}};
    if (outpath_check(&out, 1, in, 2, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return EXIT_USAGE;
    }
    /* a rig file: MAPS (checked above like any output) names the pair map files */
    int rig = comma ? 0 : calib_is_rig(calib_path, err, sizeof err);
    if (rig < 0) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return 1;
    }
    if (rig)
        return write_rig_maps(calib_path, maps_path, w, h);
    if (calib_read(calib_path, &c, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s\n", err);
        return 1;
    }
    if (calib_compute_maps(&c, w, h, m, err, sizeof err)) {
        fprintf(stderr, "calib-maps: %s: %s\n", calib_path, err);
        return 1;
    }
    /* the rectified left camera goes into the file (version 2), for depth (hal/depth.h) */
    depth_camera cam;
    int rc = calib_camera(&c, &cam, err, sizeof err);
    if (rc)
        fprintf(stderr, "calib-maps: %s: %s\n", calib_path, err);
    else if ((rc = mapfile_write_camera(maps_path, m, &cam, err, sizeof err)) != 0)
        fprintf(stderr, "calib-maps: %s\n", err);
    else
        printf("%s: %dx%d maps from %dx%d camera images (baseline %.6g, rectified focal length "
               "%.2f px, centre %.2f,%.2f px, doffs %.2f px)\n", maps_path, m[0].width,
               m[0].height, m[0].src_width, m[0].src_height, cam.baseline, cam.focal_px, cam.cx,
               cam.cy, cam.doffs_px);
    mapfile_free(m);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    enum { O_COMPARE = 256, O_INFO, O_SIZE, O_TOL, O_HELP, O_VERSION };
    outpath_remove_temps_on_signals(); /* no temporary file left by a signal */
    static const struct option opts[] = {
        {"compare", no_argument, 0, O_COMPARE}, {"info", no_argument, 0, O_INFO},
        {"size", required_argument, 0, O_SIZE}, {"tolerance", required_argument, 0, O_TOL},
        {"help", no_argument, 0, O_HELP},       {"version", no_argument, 0, O_VERSION},
        {0, 0, 0, 0}};
    int mode = 0, w = 0, h = 0, tolerance = 1, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        char tail;
        switch (c) {
        case O_COMPARE:
        case O_INFO:
            if (mode && mode != c)
                return usage_error("%s", "--compare and --info exclude each other");
            mode = c;
            break;
        case O_SIZE:
            if (sscanf(optarg, "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1)
                return usage_error("--size '%s' is not WxH", optarg);
            break;
        case O_TOL:
            if (sscanf(optarg, "%d%c", &tolerance, &tail) != 1 || tolerance < 0)
                return usage_error("--tolerance '%s' is not an integer >= 0", optarg);
            break;
        case O_HELP:
            fputs(usage_text, stdout);
            return 0;
        case O_VERSION:
            version_print("calib-maps");
            return 0;
        case ':':
            return usage_error("%s: needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    int nargs = argc - optind;
    if (mode == O_INFO) {
        if (nargs != 1)
            return usage_error("%s", "--info takes one file");
        return info(argv[optind]);
    }
    if (nargs != 2)
        return usage_error("%s", "expected two files");
    if (mode == O_COMPARE)
        return compare(argv[optind], argv[optind + 1], tolerance);
    return write_maps(argv[optind], argv[optind + 1], w, h);
}
