#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# tests/fuzz/make_corpus.py — writes the seed corpus of the fuzz harnesses, tests/fuzz/corpus/NAME/
# seed-*: small valid inputs of every reader (and a few near misses), a few KB in all. Crashers
# found later are added beside them by hand (crash-*), never rewritten here.
#   /usr/bin/python3 tests/fuzz/make_corpus.py     (needs numpy and cv2: Debian's python3-opencv)
import os, struct, sys, zlib
import numpy as np
import cv2

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

def put(name, fname, data):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + fname), "wb") as f:
        f.write(data)

def encoded(ext, im, params=()):
    ok, buf = cv2.imencode(ext, im, list(params))
    assert ok
    return buf.tobytes()

rng = np.random.default_rng(14)
grey = rng.integers(0, 256, (6, 8), dtype=np.uint8)
rgb = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
grey16 = rng.integers(0, 65536, (6, 8), dtype=np.uint16)

# images: PNG 8/16-bit grey, RGB, RGBA, palette; JPEG grey and colour; PGM 8/16-bit; PPM
def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
def png(width, height, colour_type, depth, rows, extra=b""):
    raw = b"".join(b"\0" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth,
            colour_type, 0, 0, 0)) + extra + png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))
put("image", "grey.png", encoded(".png", grey))
put("image", "rgb.png", encoded(".png", rgb))
put("image", "rgba.png", encoded(".png", np.dstack([rgb, grey])))
put("image", "grey16.png", encoded(".png", grey16))
put("image", "palette.png", png(4, 2, 3, 8, [bytes([0, 1, 2, 1]), bytes([2, 1, 0, 0])],
                                png_chunk(b"PLTE", bytes([0, 0, 0, 128, 128, 128, 255, 0, 0]))))
put("image", "grey-alpha.png", png(2, 2, 4, 8, [bytes([10, 255, 20, 0]), bytes([30, 9, 40, 99])]))
put("image", "grey.jpg", encoded(".jpg", grey, (cv2.IMWRITE_JPEG_QUALITY, 50)))
put("image", "rgb.jpg", encoded(".jpg", rgb, (cv2.IMWRITE_JPEG_QUALITY, 50)))
put("image", "grey.pgm", b"P5\n8 6\n255\n" + grey.tobytes())
put("image", "grey16.pgm", b"P5\n# a comment\n8 6\n65535\n" + grey16.astype(">u2").tobytes())
put("image", "rgb.ppm", b"P6\n8 6\n255\n" + rgb.tobytes())

# PFM: grey little- and big-endian with an invalid (+inf) sample; colour (refused); 16-bit PNG
disp = (rng.random((3, 4)) * 64).astype(np.float32)
disp[1, 2] = np.inf
put("pfm", "le.pfm", b"Pf\n4 3\n-1.0\n" + disp[::-1].astype("<f4").tobytes())
put("pfm", "be.pfm", b"Pf\n4 3\n1.0\n" + disp[::-1].astype(">f4").tobytes())
put("pfm", "colour.pfm", b"PF\n2 2\n-1\n" + np.ones((2, 2, 3), "<f4").tobytes())
put("pfm", "disp16.png", encoded(".png", (disp[np.isfinite(disp)].mean() * 256 * np.ones((3, 4))).astype(np.uint16)))

# map files (hal/mapfile.h): 4x3 output from 6x5 camera images; a 1x1 identity
def mapfile(w, h, sw, sh):
    payload = b""
    for cam in range(2):
        xy = np.stack([np.tile(np.arange(w), (h, 1)) + cam, np.tile(np.arange(h)[:, None], (1, w))], -1)
        frac = rng.integers(0, 1024, (h, w))
        payload += xy.astype("<i2").tobytes() + frac.astype("<u2").tobytes()
    head = b"STMAPS\r\n" + struct.pack("<6I", 1, 1, w, h, sw, sh) + struct.pack("<I", zlib.crc32(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + payload
put("mapfile", "4x3.maps", mapfile(4, 3, 6, 5))
put("mapfile", "1x1.maps", mapfile(1, 1, 1, 1))
# version 2: the same layout with the camera block (flag, f cx cy baseline doffs as doubles)
def mapfile_v2(w, h, sw, sh, camera):
    v1 = mapfile(w, h, sw, sh)
    payload = v1[40:]
    cam = struct.pack("<I5d", 1, *camera) if camera else struct.pack("<I5d", 0, *[0.0] * 5)
    head = b"STMAPS\r\n" + struct.pack("<6I", 2, 1, w, h, sw, sh) + cam + struct.pack("<I", zlib.crc32(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + payload
put("mapfile", "4x3-camera.maps", mapfile_v2(4, 3, 6, 5, (500.0, 1.5, 1.0, 0.12, 0.25)))
put("mapfile", "2x2-no-camera.maps", mapfile_v2(2, 2, 3, 3, None))

# calibration: a rectified pair from cv2.stereoRectify, as OpenCV YAML and as ROS camera_info
size = (64, 48)
M = [np.array([[60.0, 0, 31.5], [0, 61.0, 23.5], [0, 0, 1]]), np.array([[62.0, 0, 32.0], [0, 60.5, 24.0], [0, 0, 1]])]
D = [np.array([-0.1, 0.02, 0.001, -0.001, 0.0]), np.array([-0.12, 0.03, 0.0, 0.001, 0.0])]
R = cv2.Rodrigues(np.array([0.01, -0.02, 0.005]))[0]
T = np.array([-0.06, 0.001, 0.0005])
R1, R2, P1, P2, Q, _, _ = cv2.stereoRectify(M[0], D[0], M[1], D[1], size, R, T, alpha=0)

def mat(key, m, tagged, dt=True):
    m = np.atleast_2d(m)
    s = "%s:%s\n   rows: %d\n   cols: %d\n" % (key, " !!opencv-matrix" if tagged else "", m.shape[0], m.shape[1])
    if dt:
        s += "   dt: d\n"
    return s + "   data: [ " + ", ".join("%.10g" % v for v in m.ravel()) + " ]\n"
yaml = "%%YAML:1.0\n---\nimage_width: %d\nimage_height: %d\n" % size
for k, v in (("M1", M[0]), ("D1", D[0]), ("M2", M[1]), ("D2", D[1]), ("R", R), ("T", T.reshape(3, 1)),
             ("R1", R1), ("R2", R2), ("P1", P1), ("P2", P2), ("Q", Q)):
    yaml += mat(k, v, True)
yaml += "rms: 0.25\n# a comment\n"
put("calib_yaml", "rig.yml", yaml.encode())
put("calib_yaml", "rational.yml", yaml.replace("D1:", "X1:").replace("rms: 0.25", "rectified_width: 32\nrectified_height: 24").encode()
    + mat("D1", np.array([-0.1, 0.02, 0, 0, 0, 0.001, 0, 0]), True).encode())
# a rig file of 3 cameras (stereo-calibrate --view): the pair as cameras 0 and 1, a third twice
# as far along the baseline
P3 = P2.copy()
P3[0, 3] *= 2
rig3 = "%%YAML:1.0\n---\nrig_cameras: 3\nreference: 0\nimage_width: %d\nimage_height: %d\n" % size
rig3 += "focal_px: %.10g\ncy: %.10g\n" % (P1[0, 0], P1[1, 2])
for k, (m, d, r, p, ratio) in enumerate(((M[0], D[0], R1, P1, 0), (M[1], D[1], R2, P2, 1),
                                         (M[1], D[1], R2, P3, 2))):
    rig3 += "".join(mat("cam%d_%s" % (k, key), v, True) for key, v in (("M", m), ("D", d), ("R", r), ("P", p)))
    rig3 += "cam%d_baseline_ratio: %d\n" % (k, ratio)
put("calib_yaml", "rig3.yml", rig3.encode())
# the rig's size fields: a rectified size of its own, so mutations reach the size checks
rig3r = rig3.replace("focal_px:", "rectified_width: %d\nrectified_height: %d\nfocal_px:" % (size[0] * 2, size[1] * 2), 1)
put("calib_yaml", "rig3-rectified.yml", rig3r.encode())

def camera_info(k, model="plumb_bob", dist=None):
    d = D[k] if dist is None else dist
    s = "image_width: %d\nimage_height: %d\ncamera_name: seed/%s\n" % (size + ("left", "right")[k:k + 1])
    s += mat("camera_matrix", M[k], False, False) + "distortion_model: %s\n" % model
    s += mat("distortion_coefficients", d.reshape(1, -1), False, False)
    s += mat("rectification_matrix", (R1, R2)[k], False, False) + mat("projection_matrix", (P1, P2)[k], False, False)
    return s.encode()
put("camera_info", "pair", camera_info(0) + b"\0" + camera_info(1))
put("camera_info", "rational", b"%YAML:1.0\n---\n" + camera_info(0, "rational_polynomial", np.r_[D[0], 0, 0, 0])
    + b"\0" + camera_info(1))

# INI: the shipped examples and one that sets a key of every section
here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for f in sorted(os.listdir(os.path.join(here, "config"))):
    if f.endswith(".ini"):
        # comments dropped: the fuzzer mutates the keys, not the prose
        text = open(os.path.join(here, "config", f), "rb").read().split(b"\n")
        put("config", f, b"\n".join(l for l in text if not l.startswith(b"#")))
put("config", "every-section.ini", b"""[source]
type = files
[files]
left = l_%04d.png
right = r_%04d.png
fps = 10
loop = false
[controls]
gain = 10
[stereo]
disparities = 32
cost = census
paths = 4
p2_adapt = 1
[calibration]
maps = a.yaml,b.yaml
[display]
colormap = jet
view = pair
[record]
dir = rec
[run]
frames = 5 ; a comment
""")

# live input URIs (fuzz_uri: up to three lines, input / left / right)
for i, text in enumerate([b"v4l2:///dev/video0\n/dev/video2", b"csi://0\ncsi://1",
                          b"rtsp://cam/left\nrtsp://cam/right", b"file://localhost/data/my%20video.mp4",
                          b"\nfile://rec/left_%06d.png\nfile://rec%25/right_%06d.png",
                          b"file://100%%.avi", b"gst://videotestsrc is-live=true ! video/x-raw,width=320",
                          b"synth://?width=320&height=240&fps=0",
                          # outputs (output_uri_parse reads every line too)
                          b"display://\nfile://out/d_%06d.pfm?depth=1\nfile://c_%04d.ply",
                          b"ros2://robot/stereo?domain=7&frame_id=cam&qos=reliable&points=1&depth=16UC1",
                          b"rtp://192.168.1.20:5000?bitrate=2000\nrtsp://@:8554/depth\n"
                          b"gst://appsrc ! videoconvert ! fakesink"]):
    put("uri", "%d.txt" % i, text)
