# SPDX-License-Identifier: Apache-2.0
"""Depth in metres and point clouds (hal/depth.h; stereo-match --depth / --ply), as TAP.

  the rule        the 16-bit depth PNG equals round(f*B*1000*16 / (d16 + 16*doffs)) (half up,
                  0 when invalid or deeper than 65535 mm) for every pixel of the disparity the
                  same run wrote; the PFM equals float(f*B*16 / (d16 + 16*doffs)), +inf invalid;
                  also with --min-disparity (d is absolute) and where some pixels pass 65.535 m
  the PLY         header, one point per pixel with a depth in row-major order, every X Y Z
                  bit for bit the depth.h formula (x, y = column, row), colours = the left image
  geometry        the generated scene (hal/synth.h) has exact geometry: the background's points
                  lie near the plane its ground truth gives (distance / Z: median < 3 %, 90th
                  percentile < 6 %: the matcher's 0.16 px at d = 4..10 px), the plane fitted to
                  them within 0.5 deg and 0.5 % of it; the flat panel and the occluders at
                  f*B/d (median within 0.3 %)
  OpenCV          the PLY equals cv2.reprojectImageTo3D with Q on the same disparity (relative
                  1e-5), with doffs = 0 (--focal) and doffs != 0 (a calibration YAML's P1, P2, Q)
  calibrations    the camera from a YAML, from the version 2 map file calib-maps writes from it
                  (identical files), a version 1 map file refused without --focal / --baseline
                  and accepted with them; map files with a bad camera block refused
  sequences       patterns and folders: each frame's files equal the single-pair run's
  bad input       every bad option or combination: exit 2, one line naming it, nothing written

Run by tests/run with /usr/bin/python3 (numpy; cv2 for the PNG and OpenCV checks, which skip
visibly without it). Env: STEREO_BUILD (build).
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

try:
    import cv2
except ImportError:
    cv2 = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("STEREO_BUILD", "build"))
MATCH = os.path.join(BUILD, "stereo-match")
SYNTH = os.path.join(BUILD, "stereo-synth")
CALIB_MAPS = os.path.join(BUILD, "calib-maps")

W, H, D = 320, 240, 24          # scene size and its nearest disparity (hal/synth.h)
F, B = 500.0, 0.12              # the test camera: f in px, baseline in m
CX, CY = (W - 1) / 2, (H - 1) / 2


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402


def run(cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True)


def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), "<f4" if scale < 0 else ">f4").reshape(h, w)
    assert kind == b"Pf"
    return np.flipud(data).astype(np.float32)


PLY_DTYPE = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("r", "u1"), ("g", "u1"),
                      ("b", "u1")])


def read_ply(path):
    """(header lines, records): the layout hal/depth.h promises, checked on the way."""
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode().splitlines()
    n = int(next(ln for ln in header if ln.startswith("element vertex ")).split()[2])
    body = data[end:]
    assert len(body) == n * 15, f"{len(body)} bytes for {n} points"
    return header, np.frombuffer(body, PLY_DTYPE)


def rule_mm(d16, f, b, doffs=0.0):
    """hal/depth.h's millimetres, the same double operations in the same order."""
    d16 = d16.astype(np.float64)
    fb16 = f * b
    fb16 = fb16 * 1000
    fb16 = fb16 * 16
    den = d16 + 16.0 * doffs
    ok = (d16 >= 0) & (den > 0)
    q = np.where(ok, fb16 / np.where(ok, den, 1), 0)
    mm = np.floor(q + 0.5)
    return np.where(ok & (mm <= 65535), mm, 0).astype(np.uint16)


def rule_m(d16, f, b, doffs=0.0):
    d16 = d16.astype(np.float64)
    fb16 = f * b
    fb16 = fb16 * 1
    fb16 = fb16 * 16
    den = d16 + 16.0 * doffs
    ok = (d16 >= 0) & (den > 0)
    return np.where(ok, fb16 / np.where(ok, den, 1), np.inf)


def d16_of(pfm):
    """The stage's 16ths back from the disparity PFM (d16 / 16 is exact in float32)."""
    d = read_pfm(pfm)
    return np.where(np.isfinite(d), np.round(d * 16), -1).astype(np.int64)


def expected_points(d16, f, cx, cy, b, doffs=0.0):
    """(mask, float32 X Y Z) as depth.c computes them: z = q, X = (x - cx) * z / f."""
    z = rule_m(d16, f, b, doffs)
    mask = np.isfinite(z)
    ys, xs = np.nonzero(mask)
    zz = z[mask]
    X = ((xs - cx) * zz / f).astype(np.float32)
    Y = ((ys - cy) * zz / f).astype(np.float32)
    return mask, X, Y, zz.astype(np.float32)


def read_png16(path):
    return cv2.imread(path, cv2.IMREAD_UNCHANGED) if cv2 is not None else None


def yaml_matrix(name, rows, cols, values):
    data = ", ".join(repr(float(v)) for v in np.asarray(values, np.float64).ravel())
    return (f"{name}: !!opencv-matrix\n   rows: {rows}\n   cols: {cols}\n   dt: d\n"
            f"   data: [ {data} ]\n")


def write_calibration(path, f, cx, cy, cx2, b):
    """A rectified rig whose maps are the identity (no distortion, R = I, P = M), with the
    right principal point at cx2: doffs = cx2 - cx. Returns Q as stereoRectify defines it."""
    m1 = [[f, 0, cx], [0, f, cy], [0, 0, 1]]
    m2 = [[f, 0, cx2], [0, f, cy], [0, 0, 1]]
    p1 = [[f, 0, cx, 0], [0, f, cy, 0], [0, 0, 1, 0]]
    p2 = [[f, 0, cx2, -f * b], [0, f, cy, 0], [0, 0, 1, 0]]
    tx = -b
    q = [[1, 0, 0, -cx], [0, 1, 0, -cy], [0, 0, 0, f], [0, 0, -1 / tx, (cx - cx2) / tx]]
    eye = np.eye(3)
    text = ("%YAML:1.0\n---\n" f"image_width: {W}\nimage_height: {H}\n"
            + yaml_matrix("M1", 3, 3, m1) + yaml_matrix("D1", 1, 5, [0] * 5)
            + yaml_matrix("M2", 3, 3, m2) + yaml_matrix("D2", 1, 5, [0] * 5)
            + yaml_matrix("R", 3, 3, eye) + yaml_matrix("T", 3, 1, [-b, 0, 0])
            + yaml_matrix("R1", 3, 3, eye) + yaml_matrix("R2", 3, 3, eye)
            + yaml_matrix("P1", 3, 4, p1) + yaml_matrix("P2", 3, 4, p2)
            + yaml_matrix("Q", 4, 4, q))
    with open(path, "w") as fh:
        fh.write(text)
    return np.array(q, np.float64)


def check_rule(tap, work, scene):
    """--depth PNG and PFM against the rule, on the disparity of the same run."""
    left, right = scene["left"], scene["right"]
    disp, png, pfm = (os.path.join(work, n) for n in ("r.pfm", "r.png", "r_depth.pfm"))
    r = run([MATCH, "-q", "-d", 32, left, right, disp, "--depth", png, "--focal", F,
             "--baseline", B])
    if not tap.ok(r.returncode == 0, "--depth PNG with --focal / --baseline runs", r.stderr):
        return
    d16 = d16_of(disp)
    if cv2 is None:
        tap.skip("depth PNG == round(f*B*1000*16/d16)", "no cv2 to read 16-bit PNG")
    else:
        got, want = read_png16(png), rule_mm(d16, F, B)
        tap.ok(got.dtype == np.uint16 and np.array_equal(got, want),
               f"depth PNG == round(f*B*1000*16/d16) half up on all {d16.size} pixels "
               f"({int((want > 0).sum())} with a depth, {int((got != want).sum())} differ)")
    r = run([MATCH, "-q", "-d", 32, left, right, disp, "--depth", pfm, "--focal", F,
             "--baseline", B])
    got, want = read_pfm(pfm), rule_m(d16, F, B).astype(np.float32)
    tap.ok(r.returncode == 0 and np.array_equal(got, want),
           "depth PFM == float(f*B*16/d16) in metres, +inf where there is no disparity", r.stderr)

    # some pixels deeper than 65.535 m: 0 in the PNG, their metres still in the PFM
    fb = 655.0  # f*B: Z = 655 / d m, so d < 10 px (the background) is deeper than 65.535 m
    r1 = run([MATCH, "-q", "-d", 32, left, right, disp, "--depth", png, "--focal", fb,
              "--baseline", 1])
    r2 = run([MATCH, "-q", "-d", 32, left, right, disp, "--depth", pfm, "--focal", fb,
              "--baseline", 1])
    if cv2 is not None and r1.returncode == 0 and r2.returncode == 0:
        got, want, m = read_png16(png), rule_mm(d16, fb, 1), read_pfm(pfm)
        deep = (d16 > 0) & (got == 0)  # d = 0 has no depth: +inf in the PFM
        tap.ok(np.array_equal(got, want) and deep.sum() > 1000 and (got > 0).sum() > 1000
               and np.all(m[deep] > 65.535) and np.all(np.isfinite(m[deep]))
               and np.all(np.isinf(m[d16 == 0])),
               f"beyond 65535 mm: 0 in the PNG ({int(deep.sum())} pixels), their depth in the "
               f"PFM ({float(m[deep].min()) if deep.any() else 0:.3f} m and more)")
    else:
        tap.ok(cv2 is None and r1.returncode == 0 and r2.returncode == 0,
               "beyond 65535 mm (PNG not read: no cv2)", r1.stderr, r2.stderr)

    # --min-disparity: the disparity is absolute, and so is the depth
    r = run([MATCH, "-q", "-d", 32, "--min-disparity", 4, left, right, disp, "--depth", pfm,
             "--focal", F, "--baseline", B])
    d16m = d16_of(disp)
    z = read_pfm(pfm)
    panel = scene["panel"] & (d16m >= 0)
    med = float(np.median(z[panel])) if panel.any() else 0
    tap.ok(r.returncode == 0 and np.array_equal(z, rule_m(d16m, F, B).astype(np.float32))
           and abs(med / (F * B / (D / 2)) - 1) < 0.003,
           f"--min-disparity 4: depth of the absolute disparity (panel {med:.4f} m, f*B/d = "
           f"{F * B / (D / 2):.4f} m)", r.stderr)


def check_ply(tap, work, scene):
    left, right = scene["left"], scene["right"]
    disp, ply = os.path.join(work, "p.pfm"), os.path.join(work, "p.ply")
    r = run([MATCH, "-d", 32, left, right, disp, "--ply", ply, "--focal", F, "--baseline", B])
    if not tap.ok(r.returncode == 0, "--ply runs", r.stderr):
        return None
    header, pts = read_ply(ply)
    want_head = ["ply", "format binary_little_endian 1.0"]
    props = [ln for ln in header if ln.startswith("property")]
    tap.ok(header[:2] == want_head and props == [
        "property float x", "property float y", "property float z", "property uchar red",
        "property uchar green", "property uchar blue"] and header[-1] == "end_header",
        "PLY header: binary_little_endian 1.0, float x y z, uchar red green blue", header)
    d16 = d16_of(disp)
    mask, X, Y, Z = expected_points(d16, F, CX, CY, B)
    m = re.search(r"(\d+) points in the PLY", r.stdout)
    same = (len(pts) == mask.sum() and np.array_equal(pts["x"], X) and np.array_equal(pts["y"], Y)
            and np.array_equal(pts["z"], Z))
    tap.ok(same and m and int(m.group(1)) == len(pts),
           f"PLY: {len(pts)} points, one per pixel with a disparity, row-major, X Y Z bit for bit "
           "f*B*16/d16 and (x - cx) * Z / f, (y - cy) * Z / f", r.stdout,
           f"points {len(pts)}, valid pixels {int(mask.sum())}")
    rgb = scene["rgb"]
    if rgb is not None and len(pts) == mask.sum():
        col = rgb[mask]
        tap.ok(np.array_equal(pts["r"], col[:, 0]) and np.array_equal(pts["g"], col[:, 1])
               and np.array_equal(pts["b"], col[:, 2]),
               "PLY colours are the left image's R G B at each point's pixel")
    else:
        tap.skip("PLY colours", "no cv2 to read the left PNG" if rgb is None else "count differs")
    return dict(d16=d16, pts=pts, mask=mask)


def check_geometry(tap, scene, got):
    """The matched point cloud against the scene's exact geometry."""
    if got is None:
        tap.skip("scene geometry", "no PLY")
        return
    gt, good = scene["gt"], scene["good"]
    pts, mask = got["pts"], got["mask"]
    index = np.full(mask.shape, -1, np.int64)
    index[mask] = np.arange(mask.sum())
    # the background: d = a x + b y + c exactly (ground truth), so in 3D the plane
    # a f X + b f Y + (a cx + b cy + c) Z = f B (pixel indices as x, y: OpenCV's centres)
    bg = good & (gt <= 5 * D / 12 + 1e-3)
    ys, xs = np.nonzero(bg)
    a, b, c = np.linalg.lstsq(np.c_[xs, ys, np.ones(len(xs))], gt[bg].astype(np.float64),
                              rcond=None)[0]
    normal = np.array([a * F, b * F, a * CX + b * CY + c])
    sel = index[bg & mask]
    p = np.c_[pts["x"][sel], pts["y"][sel], pts["z"][sel]].astype(np.float64)
    dist = np.abs(p @ normal - F * B) / np.linalg.norm(normal)
    rel = dist / p[:, 2]
    med, p90 = float(np.median(rel)), float(np.percentile(rel, 90))
    # the plane fitted to the points (w . p = 1) against the true one: the matcher's error
    # (about 0.16 px median on this slanted surface at d = 4..10 px) is noise, not bias
    w_fit = np.linalg.lstsq(p, np.ones(len(p)), rcond=None)[0]
    w_true = normal / (F * B)
    angle = float(np.degrees(np.arccos(np.clip(
        w_fit @ w_true / np.linalg.norm(w_fit) / np.linalg.norm(w_true), -1, 1))))
    off = float(abs(np.linalg.norm(w_true) / np.linalg.norm(w_fit) - 1))
    tap.ok(len(sel) > 0.5 * bg.sum() and med < 0.03 and p90 < 0.06 and angle < 0.5
           and off < 0.005,
           f"background plane: {len(sel)} points, distance to the true plane / Z median "
           f"{med:.2%}, 90th percentile {p90:.2%} (limits 3 %, 6 %); the plane fitted to them "
           f"{angle:.3f} deg from the true one, its distance from the camera off by {off:.3%} "
           "(limits 0.5 deg, 0.5 %)")
    for name, dv in (("flat panel", D / 2), ("occluder discs", round(5 * D / 6)),
                     ("nearest occluders", D)):
        region = good & (np.abs(gt - dv) < 1e-6)
        sel = index[region & mask]
        z = pts["z"][sel].astype(np.float64)
        med = float(np.median(z)) if len(z) else 0.0
        want = F * B / dv
        tap.ok(len(z) > 0.5 * region.sum() and region.sum() > 100 and abs(med / want - 1) < 0.003,
               f"{name} (d = {dv:g} px): {len(z)} points, median Z {med:.4f} m, f*B/d = "
               f"{want:.4f} m (limit 0.3 %)")


def check_opencv(tap, work, scene, got):
    """The PLY against cv2.reprojectImageTo3D on the same disparity, doffs 0 and not."""
    if cv2 is None:
        tap.skip("PLY == cv2.reprojectImageTo3D (--focal)", "no cv2")
        tap.skip("PLY == cv2.reprojectImageTo3D (calibration with doffs)", "no cv2")
        return
    cases = []
    if got is not None:
        q = np.array([[1, 0, 0, -CX], [0, 1, 0, -CY], [0, 0, 0, F], [0, 0, 1 / B, 0]])
        cases.append(("--focal / --baseline", got["d16"], got["pts"], q))
    yml = os.path.join(work, "rig.yml")
    cx2 = CX + 3.25
    q = write_calibration(yml, F, CX, CY, cx2, B)
    disp, ply = os.path.join(work, "c.pfm"), os.path.join(work, "c.ply")
    r = run([MATCH, "-d", 32, "--maps", yml, scene["left"], scene["right"], disp, "--ply", ply])
    if r.returncode == 0:
        cases.append(("calibration YAML, doffs 3.25 px", d16_of(disp), read_ply(ply)[1], q))
        # its maps are the identity: the colours rectified channel by channel are the input's
        pts, d16 = cases[-1][2], cases[-1][1]
        mask = np.isfinite(rule_m(d16, F, B, cx2 - CX))
        tap.ok(len(pts) == mask.sum() and np.array_equal(
            np.c_[pts["r"], pts["g"], pts["b"]], scene["rgb"][mask]),
            "--maps (identity rectification): PLY colours = the left image's, channel by channel")
    else:
        tap.ok(False, "stereo-match --maps rig.yml --ply", r.stderr)
    for name, d16, pts, q in cases:
        disp32 = np.where(d16 >= 0, d16 / 16.0, -1).astype(np.float32)
        xyz = cv2.reprojectImageTo3D(disp32, q)
        z_ok = np.isfinite(rule_m(d16, F, B, q[3, 3] * B))  # Q[3][3] = doffs / B
        ref = xyz[z_ok]
        mine = np.c_[pts["x"], pts["y"], pts["z"]] if len(pts) == z_ok.sum() else None
        err = (np.max(np.abs(mine - ref) / np.maximum(np.abs(ref[:, 2:3]), 1e-9))
               if mine is not None else np.inf)
        tap.ok(mine is not None and err < 1e-5,
               f"PLY == cv2.reprojectImageTo3D with Q ({name}): {len(pts)} points, largest "
               f"difference {err:.2g} of Z (limit 1e-5)")


def check_calibrations(tap, work, scene):
    left, right = scene["left"], scene["right"]
    yml, maps = os.path.join(work, "rig.yml"), os.path.join(work, "rig.maps")
    cx2 = CX + 3.25
    write_calibration(yml, F, CX, CY, cx2, B)
    r = run([CALIB_MAPS, yml, maps])
    if not tap.ok(r.returncode == 0, "calib-maps writes a version 2 map file", r.stderr):
        return
    outs = {}
    for name, spec in (("yaml", yml), ("maps", maps)):
        files = [os.path.join(work, f"{name}{ext}") for ext in (".pfm", "_d.png", "_d.ply")]
        r = run([MATCH, "-d", 32, "--maps", spec, left, right, files[0], "--depth", files[1],
                 "--ply", files[2]])
        outs[name] = (r, [open(f, "rb").read() if os.path.exists(f) else None for f in files])
    ry, rm = outs["yaml"][0], outs["maps"][0]
    tap.ok(ry.returncode == 0 and rm.returncode == 0 and outs["yaml"][1] == outs["maps"][1]
           and "doffs 3.25 px" in rm.stdout and "--maps" in rm.stdout,
           "--maps: the YAML and the version 2 map file from it give identical depth and PLY "
           "files (f, centre, baseline, doffs 3.25 px)", ry.stdout, ry.stderr, rm.stdout,
           rm.stderr)
    if cv2 is not None and ry.returncode == 0:
        d16 = d16_of(os.path.join(work, "yaml.pfm"))
        got = read_png16(os.path.join(work, "yaml_d.png"))
        tap.ok(np.array_equal(got, rule_mm(d16, F, B, cx2 - CX)),
               "depth PNG with doffs: round(f*B*1000*16 / (d16 + 16*doffs))")
    else:
        tap.skip("depth PNG with doffs", "no cv2 to read 16-bit PNG")

    # a version 1 map file (the same maps, no camera): refused without --focal, fine with it
    data = open(maps, "rb").read()
    payload = data[84:]
    v1 = bytearray(b"STMAPS\r\n" + struct.pack("<6I", 1, 1, W, H, W, H)
                   + struct.pack("<I", zlib.crc32(payload)))
    v1 += struct.pack("<I", zlib.crc32(bytes(v1))) + payload
    v1path = os.path.join(work, "v1.maps")
    open(v1path, "wb").write(bytes(v1))
    out = os.path.join(work, "v1_depth.png")
    r = run([MATCH, "-d", 32, "--maps", v1path, left, right, os.path.join(work, "v1.pfm"),
             "--depth", out])
    tap.ok(r.returncode == 2 and "--depth needs the camera" in r.stderr and "v1.maps" in r.stderr
           and "--focal" in r.stderr and len(r.stderr.strip().splitlines()) == 1
           and not os.path.exists(out),
           "version 1 map file + --depth: refused (exit 2), naming the file and --focal / "
           "--baseline, nothing written", r.stderr)
    r = run([MATCH, "-d", 32, "--maps", v1path, left, right, os.path.join(work, "v1.pfm"),
             "--depth", out, "--focal", F, "--baseline", B])
    tap.ok(r.returncode == 0 and os.path.exists(out), "version 1 map file + --focal / --baseline: "
           "depth written", r.stderr)
    r = run([MATCH, "-d", 32, "--maps", maps, left, right, os.path.join(work, "v2.pfm"),
             "--depth", out, "--focal", F, "--baseline", B])
    tap.ok(r.returncode == 2 and "gives the camera already" in r.stderr,
           "version 2 map file + --focal: refused (exit 2), one camera only", r.stderr)

    # camera blocks that are not a camera (CRCs recomputed, so the camera check answers)
    def with_camera(flag, cam):
        head = bytearray(data[:84])
        head[32:76] = struct.pack("<I5d", flag, *cam)
        head[80:84] = struct.pack("<I", zlib.crc32(bytes(head[:80])))
        return bytes(head) + payload
    bad = [("camera flag 2", with_camera(2, (F, CX, CY, B, 0)), "neither 0 (none) nor 1"),
           ("focal NaN", with_camera(1, (float("nan"), CX, CY, B, 0)), "not a finite number"),
           ("baseline 0", with_camera(1, (F, CX, CY, 0, 0)), "baseline must be positive"),
           ("no camera but values", with_camera(0, (F, 0, 0, 0, 0)), "values that are not 0"),
           ("truncated v2 header", data[:60], "too short")]
    for name, blob, msg in bad:
        path = os.path.join(work, "bad.maps")
        open(path, "wb").write(blob)
        r = run([MATCH, "-d", 32, "--maps", path, left, right, os.path.join(work, "bad.pfm")])
        tap.ok(r.returncode == 1 and msg in r.stderr and "bad.maps" in r.stderr
               and len(r.stderr.strip().splitlines()) == 1,
               f"map file with {name}: refused, one line naming the file", r.stderr)


def check_sequences(tap, work, scene):
    seq = os.path.join(work, "seq")
    os.makedirs(os.path.join(seq, "L")), os.makedirs(os.path.join(seq, "R"))
    for i, t in enumerate((0, 0.4)):
        tmp = os.path.join(work, f"synth{i}")
        r = run([SYNTH, "--size", f"{W}x{H}", "--max-disp", D, "--rgb", "--t", t, tmp])
        if r.returncode != 0:
            tap.ok(False, "stereo-synth for the sequence", r.stderr)
            return
        shutil.copy(os.path.join(tmp, "left.png"), os.path.join(seq, f"left_{i}.png"))
        shutil.copy(os.path.join(tmp, "right.png"), os.path.join(seq, f"right_{i}.png"))
        shutil.copy(os.path.join(tmp, "left.png"), os.path.join(seq, "L", f"f{i}.png"))
        shutil.copy(os.path.join(tmp, "right.png"), os.path.join(seq, "R", f"f{i}.png"))
    cam = ["--focal", F, "--baseline", B]
    r = run([MATCH, "-d", 32, os.path.join(seq, "left_%d.png"), os.path.join(seq, "right_%d.png"),
             os.path.join(seq, "d_%d.pfm"), "--depth", os.path.join(seq, "z_%d.png"), "--ply",
             os.path.join(seq, "c_%d.ply")] + cam)
    same = r.returncode == 0
    for i in range(2):
        one = [os.path.join(work, f"one{i}{e}") for e in (".pfm", ".png", ".ply")]
        r1 = run([MATCH, "-q", "-d", 32, os.path.join(seq, f"left_{i}.png"),
                  os.path.join(seq, f"right_{i}.png"), one[0], "--depth", one[1], "--ply",
                  one[2]] + cam)
        for a, b in ((one[1], f"z_{i}.png"), (one[2], f"c_{i}.ply")):
            b = os.path.join(seq, b)
            same &= (r1.returncode == 0 and os.path.exists(b)
                     and open(a, "rb").read() == open(b, "rb").read())
    tap.ok(same and "depth camera" in r.stdout,
           "sequence of patterns: --depth / --ply patterns, each frame's files equal the "
           "single-pair run's", r.stdout, r.stderr)
    outs = [os.path.join(seq, n) for n in ("od", "oz", "oc")]
    for o in outs:
        os.makedirs(o)
    r = run([MATCH, "-q", "-d", 32, os.path.join(seq, "L"), os.path.join(seq, "R"), outs[0],
             "--depth", outs[1], "--ply", outs[2]] + cam)
    tap.ok(r.returncode == 0 and all(
        open(os.path.join(outs[1], f"f{i}.png"), "rb").read()
        == open(os.path.join(seq, f"z_{i}.png"), "rb").read()
        and open(os.path.join(outs[2], f"f{i}.ply"), "rb").read()
        == open(os.path.join(seq, f"c_{i}.ply"), "rb").read() for i in range(2)),
        "sequence of folders: --depth DIR gets NAME.png, --ply DIR NAME.ply, equal to the "
        "pattern run's", r.stderr)


def check_bad_input(tap, work, scene):
    left, right = scene["left"], scene["right"]
    out = os.path.join(work, "bad_out.pfm")
    dep, ply = os.path.join(work, "bad_depth.png"), os.path.join(work, "bad.ply")
    cam = ["--focal", F, "--baseline", B]
    seq = os.path.join(work, "seq")
    cases = [
        ("--depth without a camera", ["--depth", dep], "--depth needs the camera"),
        ("--ply without a camera", ["--ply", ply], "--ply needs the camera"),
        ("--focal without --baseline", ["--depth", dep, "--focal", F], "--focal without --baseline"),
        ("--baseline without --focal", ["--depth", dep, "--baseline", B],
         "--baseline without --focal"),
        ("--center without --focal", ["--depth", dep, "--center", "1,2"],
         "--center goes with --focal"),
        ("--focal without --depth / --ply", cam, "used only by --depth and --ply"),
        ("--depth .jpg", ["--depth", os.path.join(work, "x.jpg")] + cam, "must end in .png"),
        ("--ply .txt", ["--ply", os.path.join(work, "x.txt")] + cam, "must end in .ply"),
        ("--focal -1", ["--depth", dep, "--focal", -1, "--baseline", B], "--focal: '-1'"),
        ("--focal abc", ["--depth", dep, "--focal", "abc", "--baseline", B], "--focal: 'abc'"),
        ("--baseline 0", ["--depth", dep, "--focal", F, "--baseline", 0], "--baseline: '0'"),
        ("--baseline inf", ["--depth", dep, "--focal", F, "--baseline", "inf"], "--baseline: 'inf'"),
        ("--center 5", ["--depth", dep, "--center", "5"] + cam, "--center: '5' is not CX,CY"),
        ("--center 5,x", ["--depth", dep, "--center", "5,x"] + cam, "--center (CY): 'x'"),
        ("--depth naming the output", ["--depth", out.replace(".pfm", ".png")] + cam, None),
        ("--depth naming input LEFT", ["--depth", left] + cam, "same file as input LEFT"),
        ("--ply in a missing folder", ["--ply", "/nonexistent/x.ply"] + cam, "/nonexistent"),
    ]
    for name, extra, msg in cases:
        target = out.replace(".pfm", ".png") if msg is None else out
        r = run([MATCH, "-d", 32, left, right, target] + extra)
        written = [p for p in (dep, ply, out) if os.path.exists(p)]
        tap.ok(r.returncode == 2 and (msg is None or msg in r.stderr)
               and len(r.stderr.strip().splitlines()) == 1 and not written,
               f"{name}: exit 2, one line{' (' + msg + ')' if msg else ''}, nothing written",
               r.returncode, r.stderr, written)
    # sequences: --depth must be a pattern (patterns) or a folder (folders)
    if os.path.isdir(os.path.join(seq, "L")):
        r = run([MATCH, "-d", 32, os.path.join(seq, "left_%d.png"),
                 os.path.join(seq, "right_%d.png"), os.path.join(seq, "e_%d.pfm"), "--depth",
                 dep] + cam)
        tap.ok(r.returncode == 2 and "--depth" in r.stderr and not os.path.exists(dep),
               "sequence of patterns, --depth without a frame number: refused", r.stderr)
        r = run([MATCH, "-d", 32, os.path.join(seq, "L"), os.path.join(seq, "R"),
                 os.path.join(seq, "od"), "--ply", ply] + cam)
        tap.ok(r.returncode == 2 and "--ply" in r.stderr and "not a folder" in r.stderr,
               "sequence of folders, --ply a file: refused", r.stderr)


def main():
    tap = Tap()
    if not all(os.access(p, os.X_OK) for p in (MATCH, SYNTH, CALIB_MAPS)):
        print("1..1")
        tap.skip("depth outputs", "build/stereo-match, stereo-synth or calib-maps not built")
        return 0
    work = tempfile.mkdtemp(prefix="test_depth.")
    try:
        sdir = os.path.join(work, "scene")
        r = run([SYNTH, "--size", f"{W}x{H}", "--max-disp", D, "--rgb", "--edge-radius", 2, sdir])
        if not tap.ok(r.returncode == 0, "stereo-synth renders the scene", r.stderr):
            return 1
        gt = read_pfm(os.path.join(sdir, "disp_left.pfm"))
        if cv2 is not None:
            nonocc = cv2.imread(os.path.join(sdir, "nonocc.png"), cv2.IMREAD_UNCHANGED) > 0
            near = cv2.imread(os.path.join(sdir, "near_edge.png"), cv2.IMREAD_UNCHANGED) > 0
            rgb = cv2.cvtColor(cv2.imread(os.path.join(sdir, "left.png")), cv2.COLOR_BGR2RGB)
        else:  # without cv2: every pixel whose 5x5 neighbourhood has one ground truth
            nonocc = np.ones(gt.shape, bool)
            pad = np.pad(gt, 2, mode="edge")
            near = np.zeros(gt.shape, bool)
            for dy in range(5):
                for dx in range(5):
                    near |= np.abs(pad[dy:dy + H, dx:dx + W] - gt) > 0.5
            rgb = None
        good = nonocc & ~near
        scene = dict(left=os.path.join(sdir, "left.png"), right=os.path.join(sdir, "right.png"),
                     gt=gt, good=good, rgb=rgb, panel=good & (np.abs(gt - D / 2) < 1e-6))
        check_rule(tap, work, scene)
        got = check_ply(tap, work, scene)
        check_geometry(tap, scene, got)
        check_opencv(tap, work, scene, got)
        check_calibrations(tap, work, scene)
        check_sequences(tap, work, scene)
        check_bad_input(tap, work, scene)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
