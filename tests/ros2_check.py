# SPDX-License-Identifier: Apache-2.0
"""tests/ros2_check.py — decodes the samples tests/ros2_sub.c saved with an independent ROS 2
deserialiser (the rosbags package's typestore, ROS 2 Humble's message definitions) and checks
them against what the stage computed (the file:// output's PFM disparity of the same run) and
the camera given (f 200 px, B 0.1 m, centre (79.5, 59.5), 160x120). Run by tests/test_ros2.sh
with the venv that has rosbags:

    ros2_check.py CHECK DIR...     prints one line per failure, exit 1 on any

PFM_DROPS (environment, default 0): the frames the run's file:// output dropped (its thread late:
a loaded machine), whose samples then have no PFM to equal; that many may go unmatched.
"""
import glob
import os
import sys

import numpy as np
from rosbags.typesys import Stores, get_typestore

F, B, CX, CY, W, H = 200.0, 0.1, 79.5, 59.5, 160, 120
TS = get_typestore(Stores.ROS2_HUMBLE)


def samples(d, msgtype):
    return [TS.deserialize_cdr(open(p, "rb").read(), msgtype)
            for p in sorted(glob.glob(os.path.join(d, "*.cdr")))]


def stamp(m):
    return m.header.stamp.sec * 10**9 + m.header.stamp.nanosec


def increasing(ms):
    s = [stamp(m) for m in ms]
    assert all(b > a for a, b in zip(s, s[1:])), s


PFM_DROPS = int(os.environ.get("PFM_DROPS", "0"))


def pfms(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "*.pfm"))):
        raw = open(p, "rb").read().split(b"\n", 3)
        out.append(np.frombuffer(raw[3], "<f4").reshape(H, W)[::-1].copy())
    return out


def image(m, dtype):
    assert (m.width, m.height) == (W, H), (m.width, m.height)
    a = np.frombuffer(bytes(m.data), dtype)
    assert m.step == W * a.itemsize and a.size == W * H and m.is_bigendian == 0
    return a.reshape(H, W)


def check_disparity(d, pfm_dir):
    ms = samples(d, "stereo_msgs/msg/DisparityImage")
    assert len(ms) >= 5, len(ms)
    increasing(ms)
    files = pfms(pfm_dir)
    unmatched = 0
    for m in ms:
        assert m.image.encoding == "32FC1" and m.header.frame_id == "stereo_optical_frame"
        assert (m.f, round(m.t, 6), m.min_disparity, m.max_disparity, m.delta_d) == \
            (F, B, 0.0, 31.0, 0.0625), (m.f, m.t, m.min_disparity, m.max_disparity, m.delta_d)
        disp = image(m.image, "<f4")
        # the stage's frame with the same bits: invalid is -1 here, +inf in the PFM
        as_pfm = np.where(disp < m.min_disparity, np.inf, disp).astype("<f4")
        same = [f for f in files if f.tobytes() == as_pfm.tobytes()]
        unmatched += not same
        assert np.isfinite(as_pfm).mean() > 0.5
    assert unmatched <= min(PFM_DROPS, len(ms) - 1), \
        f"{unmatched} received disparities equal no PFM of the run bit for bit"
    return (f"{len(ms)} disparities, {len(ms) - unmatched} bit for bit one of the run's "
            f"{len(files)} PFMs ({PFM_DROPS} frames the file output dropped)")


def pgm(path):
    """A binary 8-bit PGM (P5) as a uint8 array."""
    raw = open(path, "rb").read()
    magic, w, h, maxval = raw.split(maxsplit=4)[:4]
    assert magic == b"P5" and int(maxval) == 255, (magic, maxval)
    w, h = int(w), int(h)
    return np.frombuffer(raw[len(raw) - w * h:], np.uint8).reshape(h, w)


def check_masked(d, pfm_dir, cli_pfm, conf_pgm, min_conf):
    """ros2://...?min_confidence=N on a pair looped unchanged: every frame of the run (its
    file:// PFMs, unmasked) is stereo-match's disparity of the pair (cli_pfm) bit for bit, whose
    confidence map conf_pgm is then the frame's; each received disparity is that disparity with
    exactly the pixels of confidence below N invalid (min_disparity - 1), the others unchanged."""
    n = int(min_conf)
    ms = samples(d, "stereo_msgs/msg/DisparityImage")
    assert len(ms) >= 3, len(ms)
    cli = pfms(os.path.dirname(cli_pfm))
    assert len(cli) == 1, len(cli)
    cli = cli[0]
    conf = pgm(conf_pgm)
    files = pfms(pfm_dir)
    assert files and all(f.tobytes() == cli.tobytes() for f in files), \
        "the run's unmasked disparities are not stereo-match's of the pair"
    want = np.where(conf < n, np.float32(np.inf), cli).astype("<f4")
    masked = int((np.isfinite(cli) & (conf < n)).sum())
    kept = int(np.isfinite(want).sum())
    assert masked > 0 and kept > 0, (masked, kept)  # the threshold masks some, keeps others
    for m in ms:
        disp = image(m.image, "<f4")
        got = np.where(disp < m.min_disparity, np.inf, disp).astype("<f4")
        bad = int((got.view(np.uint32) != want.view(np.uint32)).sum())
        assert bad == 0, f"{bad} pixels differ from the disparity masked where confidence < {n}"
    return (f"{len(ms)} disparities: {masked} valid pixels of confidence < {n} invalid, "
            f"{kept} kept bit for bit")


def check_depth(d, pfm_dir):
    """Each depth image is f B / d of one of the run's disparities (its file:// PFMs), within
    float rounding, NaN where d is invalid or 0."""
    ms = samples(d, "sensor_msgs/msg/Image")
    assert len(ms) >= 5, len(ms)
    increasing(ms)
    files = pfms(pfm_dir)
    unmatched = 0
    for m in ms:
        assert m.encoding == "32FC1", m.encoding
        z = image(m, "<f4")
        same = 0
        for dd in files:
            valid = np.isfinite(dd) & (dd > 0)
            if not (np.isnan(z) == ~valid).all():
                continue
            want = (F * B * 16) / (dd[valid].astype(np.float64) * 16)
            same += np.allclose(z[valid], want, rtol=2e-7, atol=0)
        unmatched += not same
    assert unmatched <= min(PFM_DROPS, len(ms) - 1), \
        f"{unmatched} received depth images are f B / d of no PFM of the run"
    return (f"{len(ms)} depth images, {len(ms) - unmatched} f B / d of one of the run's "
            f"{len(files)} PFMs (float)")


def check_depth_mm(d):
    ms = samples(d, "sensor_msgs/msg/Image")
    assert len(ms) >= 2
    for m in ms:
        assert m.encoding == "16UC1", m.encoding
        z = image(m, "<u2")
        assert (z > 0).mean() > 0.5 and z.max() < 65535
    return f"{len(ms)} depth images in 16UC1 mm"


def check_left(d):
    ms = samples(d, "sensor_msgs/msg/Image")
    assert len(ms) >= 3
    increasing(ms)
    for m in ms:
        assert m.encoding == "mono8"
        g = image(m, "u1")
        assert g.std() > 5
    return f"{len(ms)} mono8 left images"


def check_info(d):
    ms = samples(d, "sensor_msgs/msg/CameraInfo")
    assert len(ms) >= 1
    m = ms[0]
    assert (m.width, m.height, m.distortion_model) == (W, H, "plumb_bob")
    assert list(m.k) == [F, 0, CX, 0, F, CY, 0, 0, 1], m.k
    assert list(m.p) == [F, 0, CX, 0, 0, F, CY, 0, 0, 0, 1, 0], m.p
    assert list(m.r) == [1, 0, 0, 0, 1, 0, 0, 0, 1] and not any(m.d)
    return f"{len(ms)} CameraInfo, K and P from f {F} cx {CX} cy {CY}"


def check_points(d, depth_dir):
    ms = samples(d, "sensor_msgs/msg/PointCloud2")
    assert len(ms) >= 1
    depth = {stamp(m): image(m, "<f4") for m in samples(depth_dir, "sensor_msgs/msg/Image")}
    for m in ms:
        assert [(f.name, f.offset, f.datatype, f.count) for f in m.fields] == \
            [("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1), ("rgb", 12, 7, 1)]
        assert (m.width, m.height, m.point_step, m.row_step) == (W, H, 16, 16 * W)
        p = np.frombuffer(bytes(m.data), "<f4").reshape(H, W, 4)
        z = p[:, :, 2]
        if stamp(m) in depth:
            dz = depth[stamp(m)]
            assert ((np.isnan(z) == np.isnan(dz)).all() and
                    (z[~np.isnan(z)] == dz[~np.isnan(dz)]).all())
        y, x = np.mgrid[0:H, 0:W]
        ok = ~np.isnan(z)
        assert np.allclose(p[:, :, 0][ok], ((x - CX) * z / F)[ok], rtol=1e-5, atol=1e-6)
    return f"{len(ms)} point clouds (x y z rgb), z = the depth image's"


def main():
    check, dirs = sys.argv[1], sys.argv[2:]
    fn = globals()["check_" + check]
    try:
        print(fn(*dirs))
    except AssertionError as e:
        print(f"{check}: {e!r}")
        sys.exit(1)


if __name__ == "__main__":
    main()
