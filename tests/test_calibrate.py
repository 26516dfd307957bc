# SPDX-License-Identifier: Apache-2.0
"""Calibration, as TAP: tools/stereo-calibrate (OpenCV) and the C side (hal/calib.c through
build/calib-maps).

  generated views  a 9x6 board rendered through two known cameras (distortion, rotation,
                   baseline) with one unsynchronised pair: focal lengths and baseline within
                   0.5 %, RMS < 0.3 px, rectified epipolar error < 0.3 px (the tool's, and on
                   true corners of held-out poses), the bad pair flagged and dropped
  real pairs       ../shared/data/calib/opencv_samples (STEREO_DATA; skipped when absent): RMS
                   against OpenCV's stereo_calib sample pipeline re-done here, epipolar < 0.5 px
  maps             the Python-written map file read by C (hal/mapfile.c) with every value; the
                   C maps from the YAML against cv2.initUndistortRectifyMap (in 1/32 px)
  camera_info      ROS camera_info pairs written from both calibrations: maps in C identical
                   to the YAML's, equal to OpenCV's (also as ROS rounds the numbers), the same
                   disparity from stereo-match; mono, swapped, mismatched, truncated and
                   fisheye files refused
  whole chain      a textured plane seen through the distorting cameras, rectified by the
                   stage with the calibrated maps: disparity = f * B / Z
  bad inputs       each fails with exit status 1, one line naming the file, and no output
                   (nor temporary file) left behind; an existing output is not touched
  live capture     --live on two image sequences standing in for the cameras (the generated
                   views with new noise each frame, held, moving and board-less stretches):
                   the 12 steady poses auto-saved, without a window and with one under Xvfb,
                   then calibrated within the generated bounds; Space and q through scripted
                   window keys; cameras that cannot be opened, give no frame or differ in size

Run by tests/run with /usr/bin/python3 (Debian's python3-opencv). Env: STEREO_BUILD (build),
STEREO_DATA (../shared/data).
"""
import contextlib
import glob
import importlib.machinery
import importlib.util
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("STEREO_BUILD", "build")
DATA = os.environ.get("STEREO_DATA", os.path.join(ROOT, "..", "shared", "data"))
TOOL = os.path.join(ROOT, "tools", "stereo-calibrate")
TOOL_BUILT = os.path.join(ROOT, BUILD, "stereo-calibrate")  # the link `ninja` makes to TOOL
CALIB_MAPS = os.path.join(ROOT, BUILD, "calib-maps")
STEREO_MATCH = os.path.join(ROOT, BUILD, "stereo-match")

# the generated rig: image size, board, cameras (K, k1 k2 p1 p2 k3), right camera pose
W, H = 640, 480
BOARD, SQUARE, MARGIN = (9, 6), 0.025, 0.7  # inner corners, m, white border in squares
SUPERSAMPLE = 3                              # samples per pixel side when rendering
NOISE = 2.0                                  # grey levels
TRUE_K = [[[600.0, 0, 322], [0, 602.0, 238], [0, 0, 1]],
          [[606.0, 0, 316], [0, 605.0, 244], [0, 0, 1]]]
TRUE_D = [[-0.12, 0.05, 0.0008, -0.0005, 0.0], [-0.10, 0.03, -0.0006, 0.0004, 0.0]]
RIG_ROT_DEG = (0.5, -1.0, 0.3)
RIG_T = (-0.060, 0.0005, 0.001)
# board poses: rotation (deg, Rodrigues) and centre in the left camera frame (m)
POSES = [((0, 0, 0), (0.03, 0.0, 0.45)), ((25, 0, 0), (0.03, 0.02, 0.5)),
         ((-25, 0, 5), (0.03, -0.02, 0.5)), ((0, 25, 0), (0.05, 0.0, 0.5)),
         ((0, -25, -5), (0.01, 0.0, 0.5)), ((15, 15, 10), (-0.06, -0.06, 0.6)),
         ((-15, 20, -10), (0.12, -0.06, 0.6)), ((20, -15, 3), (-0.06, 0.06, 0.6)),
         ((-20, -20, 0), (0.12, 0.06, 0.6)), ((10, 30, 20), (0.03, 0.0, 0.6)),
         ((-10, -30, -20), (0.03, 0.0, 0.6)), ((30, 10, 0), (0.03, 0.0, 0.7))]
# one more pair whose board moved 3.6 mm between the left and the right exposure
MOVED_POSE, MOVED_BY = ((5, -10, 0), (0.03, 0.01, 0.55)), (0.003, 0.002, 0.0)
HELD_OUT = [((12, -8, 4), (0.0, 0.02, 0.5)), ((-18, 12, -6), (0.06, -0.03, 0.55)),
            ((6, 22, 12), (0.03, 0.04, 0.65))]

# acceptance
REL_TOL = 0.005          # focal lengths and baseline
RMS_MAX_GEN = 0.3        # px, generated views
EPI_MAX_GEN = 0.3        # px
RMS_VS_SAMPLE = 1.05     # real pairs: ours <= 1.05 x OpenCV's stereo_calib sample
EPI_MAX_REAL = 0.5       # px
MAP_DIFFER_MAX = 0.001   # C vs OpenCV maps: fraction of pixels off by 1/32 px at most


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402


def run(cmd, **kw):
    """The command's result; still running after 600 s (ten times the longest run here): a
    hang, which fails the test with TimeoutExpired."""
    kw.setdefault("timeout", 600)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def load_tool():
    """tools/stereo-calibrate as a module (its map file writer is under test too)."""
    loader = importlib.machinery.SourceFileLoader("stereo_calibrate", TOOL)
    spec = importlib.util.spec_from_loader("stereo_calibrate", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


# --- rendering the generated views ---------------------------------------------------------

def camera_rays(K, D):
    """Normalised ray (x, y) of every sample of the supersampled image (H*S x W*S), through the
    lens distortion: undistortPoints on a 2-px grid, interpolated (distortion is smooth)."""
    step = 2
    gx = np.arange(0, W + step, step, dtype=np.float64)
    gy = np.arange(0, H + step, step, dtype=np.float64)
    X, Y = np.meshgrid(gx, gy)
    pts = np.stack([X.ravel(), Y.ravel()], 1).reshape(-1, 1, 2)
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-15)
    und = cv2.undistortPointsIter(pts, K, D, None, None, crit).reshape(len(gy), len(gx), 2)
    s = SUPERSAMPLE
    fx = (((np.arange(W * s) + 0.5) / s - 0.5) / step).astype(np.float32)
    fy = (((np.arange(H * s) + 0.5) / s - 0.5) / step).astype(np.float32)
    mx, my = np.meshgrid(fx, fy)
    return [cv2.remap(und[:, :, c].astype(np.float32), mx, my, cv2.INTER_LINEAR,
                      borderMode=cv2.BORDER_REPLICATE) for c in (0, 1)]


def board_pose(rot_deg, centre, moved=(0, 0, 0)):
    """Board -> left camera: X = Rb * P + tb, the board's centre at `centre`."""
    rb = cv2.Rodrigues(np.radians(np.array(rot_deg, np.float64)))[0]
    mid = np.array([(BOARD[0] - 1) / 2 * SQUARE, (BOARD[1] - 1) / 2 * SQUARE, 0])
    return rb, np.array(centre, np.float64) + np.array(moved) - rb @ mid


def plane_coords(rays, rb, tb):
    """Where each ray meets the plane z = 0 of the (rb, tb) frame: plane (x, y) and the ray's
    side (> 0 in front)."""
    hi = np.linalg.inv(np.column_stack([rb[:, 0], rb[:, 1], tb])).astype(np.float32)
    xn, yn = rays
    q = [hi[r, 0] * xn + hi[r, 1] * yn + hi[r, 2] for r in range(3)]
    return q[0] / q[2], q[1] / q[2], q[2]


def render_board(rays, rb, tb, rng):
    bx, by, front = plane_coords(rays, rb, tb)
    bx, by = bx / SQUARE, by / SQUARE
    on_board = ((bx > -1 - MARGIN) & (bx < BOARD[0] + MARGIN) & (by > -1 - MARGIN) &
                (by < BOARD[1] + MARGIN) & (front > 0))
    squares = (bx > -1) & (bx < BOARD[0]) & (by > -1) & (by < BOARD[1])
    black = squares & ((np.floor(bx).astype(np.int32) + np.floor(by).astype(np.int32)) % 2 == 0)
    background = (90 + 60 * np.arange(W * SUPERSAMPLE) / (W * SUPERSAMPLE)).astype(np.float32)
    img = np.where(on_board, np.where(black, 25, 230), background[None, :])
    return finish(img, rng)


def finish(img, rng):
    """Supersampled intensities -> 8-bit pixels (box filter), with sensor noise."""
    s = SUPERSAMPLE
    img = img.reshape(H, s, W, s).mean(axis=(1, 3)) + rng.normal(0, NOISE, (H, W))
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def visible(cam_k, cam_d, rb, tb):
    corners = np.array([[-1 - MARGIN, -1 - MARGIN, 0], [BOARD[0] + MARGIN, -1 - MARGIN, 0],
                        [BOARD[0] + MARGIN, BOARD[1] + MARGIN, 0],
                        [-1 - MARGIN, BOARD[1] + MARGIN, 0]]) * SQUARE
    p, _ = cv2.projectPoints(corners, cv2.Rodrigues(rb)[0], tb, cam_k, cam_d)
    p = p.reshape(-1, 2)
    return p.min() > 4 and p[:, 0].max() < W - 4 and p[:, 1].max() < H - 4


def rig():
    K = [np.array(k) for k in TRUE_K]
    D = [np.array(d) for d in TRUE_D]
    R = cv2.Rodrigues(np.radians(np.array(RIG_ROT_DEG)))[0]
    return K, D, R, np.array(RIG_T)


def generate_views(out_dir):
    """left01..13.png / right01..13.png: the 12 POSES, then the unsynchronised pair."""
    K, D, R, T = rig()
    rays = [camera_rays(K[c], D[c]) for c in (0, 1)]
    rng = np.random.default_rng(7)
    for n, (pose, moved) in enumerate([(p, (0, 0, 0)) for p in POSES] + [(MOVED_POSE, MOVED_BY)]):
        rb, tb = board_pose(*pose)
        rb2, tb2 = board_pose(*pose, moved=moved)
        views = [(rb, tb), (R @ rb2, R @ tb2 + T)]
        for c, (rc, tc) in enumerate(views):
            if not visible(K[c], D[c], rc, tc):
                raise RuntimeError(f"generated pose {n + 1} leaves camera {c}'s image")
            name = f"{'left' if c == 0 else 'right'}{n + 1:02d}.png"
            cv2.imwrite(os.path.join(out_dir, name), render_board(rays[c], rc, tc, rng))
    return rays


# --- reading outputs -------------------------------------------------------------------------

def read_yaml(path):
    fs = cv2.FileStorage(path, cv2.FILE_STORAGE_READ)
    out = {k: fs.getNode(k).mat() for k in ("M1", "D1", "M2", "D2", "R", "T", "R1", "R2", "P1",
                                            "P2", "Q")}
    for k in ("image_width", "image_height", "rectified_width", "rectified_height", "rms"):
        out[k] = fs.getNode(k).real()
    fs.release()
    return out


def write_yaml(path, cal):
    fs = cv2.FileStorage(path, cv2.FILE_STORAGE_WRITE)
    for k in ("image_width", "image_height", "rectified_width", "rectified_height"):
        fs.write(k, int(cal[k]))
    for k in ("M1", "D1", "M2", "D2", "R", "T", "R1", "R2", "P1", "P2", "Q"):
        fs.write(k, np.asarray(cal[k], np.float64))
    fs.release()


def decode_map_file(path):
    """hal/mapfile.h (version 1 or 2), decoded here independently of the tool: [(xy, frac)] * 2,
    src size."""
    return decode_map_file_camera(path)[:2]


def decode_map_file_camera(path):
    """decode_map_file and the camera of a version 2 file: (f, cx, cy, B, doffs) or None."""
    data = open(path, "rb").read()
    assert len(data) >= 40, "map file header"
    magic = data[:8]
    version, mtype, w, h, sw, sh = struct.unpack("<6I", data[8:32])
    assert magic == b"STMAPS\r\n" and version in (1, 2) and mtype == 1, "map file header"
    head = 40 if version == 1 else 84
    camera = None
    if version == 2:
        has = struct.unpack("<I", data[32:36])[0]
        camera = struct.unpack("<5d", data[36:76]) if has == 1 else None
    crc_payload, crc_head = struct.unpack("<2I", data[head - 8:head])
    assert zlib.crc32(data[:head - 4]) == crc_head and zlib.crc32(data[head:]) == crc_payload, "CRC"
    n = w * h
    assert len(data) == head + 12 * n, "map file size"
    maps, off = [], head
    for _ in range(2):
        xy = np.frombuffer(data, "<i2", 2 * n, off).reshape(h, w, 2)
        frac = np.frombuffer(data, "<u2", n, off + 4 * n).reshape(h, w)
        maps.append((xy, frac))
        off += 6 * n
    return maps, (sw, sh), camera


def positions32(xy, frac):
    """Map positions in 1/32 px (x, y), int64."""
    x = xy[..., 0].astype(np.int64) * 32 + (frac & 31)
    y = xy[..., 1].astype(np.int64) * 32 + ((frac >> 5) & 31)
    return x, y


def inside(xy, frac, src):
    """The sample reads only pixels inside the source image (gpu/rectify.h's rule)."""
    fx, fy = (frac & 31) != 0, ((frac >> 5) & 31) != 0
    x, y = xy[..., 0].astype(np.int64), xy[..., 1].astype(np.int64)
    return (x >= 0) & (y >= 0) & (x + fx < src[0]) & (y + fy < src[1])


def opencv_maps(cal, size):
    return [cv2.initUndistortRectifyMap(cal[f"M{k}"], cal[f"D{k}"], cal[f"R{k}"], cal[f"P{k}"],
                                        size, cv2.CV_16SC2) for k in (1, 2)]


def map_difference(ours, ref, src):
    """Largest difference (1/32 px) and fraction of differing pixels, over pixels where either
    map samples inside the image (elsewhere both are invalid whatever their value)."""
    worst, differ, count = 0, 0, 0
    for (a_xy, a_fr), (b_xy, b_fr) in zip(ours, ref):
        ax, ay = positions32(a_xy, a_fr)
        bx, by = positions32(b_xy, b_fr)
        used = inside(a_xy, a_fr, src) | inside(b_xy, b_fr, src)
        d = np.maximum(np.abs(ax - bx), np.abs(ay - by))[used]
        worst = max(worst, int(d.max()) if d.size else 0)
        differ += int((d > 0).sum())
        count += int(used.sum())
    return worst, differ / max(count, 1), count


def report_value(text, pattern):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else float("nan")


# --- checks ----------------------------------------------------------------------------------

def epipolar_held_out(cal):
    """Mean |y_left - y_right| after rectification with the estimated calibration, of true
    corners of poses the calibration never saw (projected with the true cameras)."""
    K, D, R, T = rig()
    obj = np.zeros((BOARD[0] * BOARD[1], 3))
    obj[:, :2] = np.mgrid[0:BOARD[0], 0:BOARD[1]].T.reshape(-1, 2) * SQUARE
    dys = []
    for pose in HELD_OUT:
        rb, tb = board_pose(*pose)
        ys = []
        for c, (rc, tc) in enumerate([(rb, tb), (R @ rb, R @ tb + T)]):
            p, _ = cv2.projectPoints(obj, cv2.Rodrigues(rc)[0], tc, K[c], D[c])
            u = cv2.undistortPoints(p, cal[f"M{c + 1}"], cal[f"D{c + 1}"], R=cal[f"R{c + 1}"],
                                    P=cal[f"P{c + 1}"])
            ys.append(u[:, 0, 1])
        dys.append(np.abs(ys[0] - ys[1]))
    return float(np.concatenate(dys).mean())


def check_generated(tap, work):
    gen = os.path.join(work, "gen")
    os.mkdir(gen)
    t0 = time.time()
    rays = generate_views(gen)
    tap.note(f"generated 13 pairs {W}x{H} in {time.time() - t0:.1f} s")
    K, D, R, T = rig()
    left, right = os.path.join(gen, "left*.png"), os.path.join(gen, "right*.png")
    base = [sys.executable, TOOL, "--left", left, "--right", right, "--board", "9x6",
            "--square", str(SQUARE)]

    # all 13 pairs: the moved pair must be flagged
    out = os.path.join(work, "gen-all")
    os.mkdir(out)
    r = run(base + ["--out", os.path.join(out, "calib.yml")])
    flagged = re.search(r"^\s*13\s+left13\.png / right13\.png\s+[\d.]+\s+OUTLIER", r.stdout, re.M)
    others = len(re.findall(r"OUTLIER \(", r.stdout)) - 1
    rms_all = report_value(r.stdout, r"RMS reprojection error\s+([\d.]+)")
    tap.ok(r.returncode == 0 and flagged and others == 0,
           f"generated, 13 pairs: the unsynchronised pair 13 is flagged as the only outlier "
           f"(RMS with it {rms_all:.3f} px)", r.stdout, r.stderr)

    # --drop-outliers: the calibration the accuracy checks use
    out = os.path.join(work, "gen-drop")
    os.mkdir(out)
    yml, maps, preview = (os.path.join(out, n) for n in ("calib.yml", "maps.bin", "preview.png"))
    r = run(base + ["--drop-outliers", "--out", yml, "--maps", maps, "--preview", preview])
    if not tap.ok(r.returncode == 0 and "dropped as an outlier" in r.stdout,
                  "generated, --drop-outliers: runs, drops pair 13", r.stdout, r.stderr):
        return None
    tap.note("report:\n" + r.stdout.rstrip())
    cal = read_yaml(yml)
    errs = {"left fx": cal["M1"][0, 0] / K[0][0, 0] - 1, "left fy": cal["M1"][1, 1] / K[0][1, 1] - 1,
            "right fx": cal["M2"][0, 0] / K[1][0, 0] - 1,
            "right fy": cal["M2"][1, 1] / K[1][1, 1] - 1}
    worst = max(abs(e) for e in errs.values())
    tap.ok(worst < REL_TOL, f"generated: focal lengths within {REL_TOL:.1%} (worst "
           f"{worst:.3%}: " + ", ".join(f"{k} {v:+.3%}" for k, v in errs.items()) + ")")
    base_err = np.linalg.norm(cal["T"]) / np.linalg.norm(T) - 1
    tap.ok(abs(base_err) < REL_TOL, f"generated: baseline {np.linalg.norm(cal['T']) * 1000:.3f} "
           f"mm vs true {np.linalg.norm(T) * 1000:.3f} mm ({base_err:+.3%}, limit {REL_TOL:.1%})")
    tap.ok(cal["rms"] < RMS_MAX_GEN, f"generated: RMS {cal['rms']:.4f} px < {RMS_MAX_GEN} "
           f"(with the moved pair: {rms_all:.4f})")
    epi_tool = report_value(r.stdout, r"epipolar error\s+mean ([\d.]+)")
    epi_true = epipolar_held_out(cal)
    tap.ok(epi_tool < EPI_MAX_GEN and epi_true < EPI_MAX_GEN,
           f"generated: rectified epipolar error {epi_tool:.4f} px (detected corners), "
           f"{epi_true:.4f} px (true corners of 3 held-out poses), both < {EPI_MAX_GEN}")
    img = cv2.imread(preview)
    tap.ok(img is not None and img.shape[:2] == (H, 2 * W),
           f"generated: --preview is a {2 * W}x{H} side-by-side PNG")
    return dict(dir=gen, yml=yml, maps=maps, cal=cal, rays=rays)


def sample_reference(pairs, board):
    """OpenCV's samples/cpp/stereo_calib.cpp, step by step: corners (scales 1 and 2, adaptive
    threshold + normalise), cornerSubPix 11x11, initCameraMatrix2D, stereoCalibrate with the
    sample's flags and criteria. Returns its RMS and the number of pairs used."""
    obj1 = np.zeros((board[0] * board[1], 3), np.float32)
    obj1[:, :2] = np.mgrid[0:board[0], 0:board[1]].T.reshape(-1, 2)  # square size 1, as the sample
    pts = [[], []]
    size = None
    for lp, rp in pairs:
        found = []
        for path in (lp, rp):
            img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
            size = img.shape[::-1]
            corners = None
            for scale in (1, 2):
                timg = img if scale == 1 else cv2.resize(img, None, fx=scale, fy=scale,
                                                         interpolation=cv2.INTER_LINEAR)
                ok, c = cv2.findChessboardCorners(
                    timg, board, flags=cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE)
                if ok:
                    corners = (c / scale).astype(np.float32)
                    break
            if corners is None:
                break
            found.append(cv2.cornerSubPix(img, corners, (11, 11), (-1, -1),
                                          (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 30,
                                           0.01)))
        if len(found) == 2:
            pts[0].append(found[0])
            pts[1].append(found[1])
    obj = [obj1] * len(pts[0])
    m1 = cv2.initCameraMatrix2D(obj, pts[0], size, 0)
    m2 = cv2.initCameraMatrix2D(obj, pts[1], size, 0)
    flags = (cv2.CALIB_FIX_ASPECT_RATIO | cv2.CALIB_ZERO_TANGENT_DIST |
             cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_SAME_FOCAL_LENGTH |
             cv2.CALIB_RATIONAL_MODEL | cv2.CALIB_FIX_K3 | cv2.CALIB_FIX_K4 | cv2.CALIB_FIX_K5)
    rms = cv2.stereoCalibrate(obj, pts[0], pts[1], m1, None, m2, None, size, flags=flags,
                              criteria=(cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 100,
                                        1e-5))[0]
    return rms, len(obj)


def check_real(tap, work):
    src = os.path.join(DATA, "calib", "opencv_samples")
    names = ["real: tool runs on the 13 opencv_samples pairs",
             "real: RMS against OpenCV's stereo_calib sample pipeline",
             "real: rectified epipolar error",
             "real: --sample-model RMS within 5 % of OpenCV's stereo_calib sample"]
    if not glob.glob(os.path.join(src, "left*.jpg")):
        for n in names:
            tap.skip(n, f"calibration pairs not found at {src} (set STEREO_DATA)")
        return None
    out = os.path.join(work, "real")
    os.mkdir(out)
    yml, maps = os.path.join(out, "calib.yml"), os.path.join(out, "maps.bin")
    left, right = os.path.join(src, "left*.jpg"), os.path.join(src, "right*.jpg")
    t0 = time.time()
    r = run([sys.executable, TOOL, "--left", left, "--right", right, "--board", "9x6",
             "--square", "0.025", "--out", yml, "--maps", maps])
    used = re.search(r"(\d+) of (\d+) pairs used", r.stdout)
    if not tap.ok(r.returncode == 0 and used and used.group(1) == "13",
                  names[0] + f" ({time.time() - t0:.1f} s)", r.stdout, r.stderr):
        return None
    tap.note("report:\n" + r.stdout.rstrip())
    rms = report_value(r.stdout, r"RMS reprojection error\s+([\d.]+)")
    pairs = list(zip(sorted(glob.glob(left)), sorted(glob.glob(right))))
    ref, n_ref = sample_reference(pairs, BOARD)
    tap.ok(rms <= RMS_VS_SAMPLE * ref,
           f"{names[1]}: ours {rms:.4f} px, sample {ref:.4f} px ({n_ref} pairs), ratio "
           f"{rms / ref:.3f} <= {RMS_VS_SAMPLE} (ours models tangential distortion, k3 and "
           "two focal lengths per camera; the sample fixes them)")
    epi = report_value(r.stdout, r"epipolar error\s+mean ([\d.]+)")
    tap.ok(epi < EPI_MAX_REAL, f"{names[2]} {epi:.4f} px < {EPI_MAX_REAL}")
    # the same camera model as the sample: the "within 5 %" taken literally
    r2 = run([sys.executable, TOOL, "--left", left, "--right", right, "--board", "9x6",
              "--square", "0.025", "--out", os.path.join(out, "sample.yml"), "--sample-model"])
    rms2 = report_value(r2.stdout, r"RMS reprojection error\s+([\d.]+)")
    tap.ok(r2.returncode == 0 and abs(rms2 / ref - 1) <= 0.05,
           f"{names[3]}: ours {rms2:.4f} px, sample {ref:.4f} px, ratio {rms2 / ref:.3f}",
           r2.stdout, r2.stderr)
    return dict(yml=yml, maps=maps, cal=read_yaml(yml))


def check_maps(tap, work, tool, gen, real):
    """The map file between Python and C, and the C maps against OpenCV's."""
    # 1. random values through the tool's writer, read by C (every value, signs, both cameras)
    rng = np.random.default_rng(3)
    w, h, src = 37, 23, (50, 40)
    maps = [(rng.integers(-60, 90, (h, w, 2)).astype(np.int16),
             rng.integers(0, 1024, (h, w)).astype(np.uint16)) for _ in range(2)]
    path = os.path.join(work, "random.maps")
    with open(path, "wb") as f:
        f.write(tool.map_file_bytes(maps, src))
    r = run([CALIB_MAPS, "--info", path])
    want = []
    for name, (xy, frac) in zip(("left", "right"), maps):
        x, y = positions32(xy, frac)
        want.append(f"{name}: {int(inside(xy, frac, src).sum())} of {w * h} pixels sample inside"
                    f" the image")
        want.append(f"x/32 {x.min()}..{x.max()} sum {x.sum()}; y/32 {y.min()}..{y.max()} sum "
                    f"{y.sum()}")
    tap.ok(r.returncode == 0 and all(s in r.stdout for s in want),
           "map file: random values written by stereo-calibrate's writer are read by C "
           "(hal/mapfile.c) exactly (ranges, sums, valid counts per camera)",
           r.stdout, r.stderr, *(f"expected: {s}" for s in want if s not in r.stdout))

    cases = []
    if gen:
        cases.append(("generated", gen))
    if real:
        cases.append(("real", real))
    for label, c in cases:
        # 2. the tool's map file is OpenCV's map of the YAML it wrote (YAML and layout lossless)
        file_maps, src, camera = decode_map_file_camera(c["maps"])
        size = (int(c["cal"]["rectified_width"]), int(c["cal"]["rectified_height"]))
        # the camera for depth (version 2): the YAML's P1, P2 and |T| (hal/depth.h), as C
        # takes it from the YAML (calib-maps --info prints both with every digit)
        cal = c["cal"]
        want = (cal["P1"][0, 0], cal["P1"][0, 2], cal["P1"][1, 2], np.linalg.norm(cal["T"]),
                cal["P2"][0, 2] - cal["P1"][0, 2])
        info = [run([CALIB_MAPS, "--info", f]).stdout for f in (c["maps"], c["yml"])]
        cam_lines = [next((ln for ln in t.splitlines() if ln.startswith("camera: f ")), None)
                     for t in info]
        c_cams = [[float(v) for v in re.findall(r"-?\d[\d.e+-]*", ln)] if ln else None
                  for ln in cam_lines]
        tap.ok(camera is not None and np.allclose(camera, want, rtol=1e-12, atol=1e-9)
               and c_cams[0] is not None and np.allclose(c_cams[0], camera, rtol=0, atol=0)
               and c_cams[1] is not None and np.allclose(c_cams[1], want, rtol=1e-9, atol=1e-9),
               f"{label}: the --maps file (version 2) carries the YAML's rectified camera "
               f"(f {want[0]:.2f} px, centre {want[1]:.2f},{want[2]:.2f}, B {want[3]:.5f} m, "
               f"doffs {want[4]:.3f} px), read back by C bit for bit", camera, want, *info)
        ref = opencv_maps(c["cal"], size)
        same = all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                   for a, b in zip(file_maps, ref))
        tap.ok(same, f"{label}: the --maps file equals cv2.initUndistortRectifyMap of the "
               "--out YAML read back")
        # 3. C reads that file and computes the same maps from the YAML
        r = run([CALIB_MAPS, "--compare", c["maps"], c["yml"]])
        tap.ok(r.returncode == 0, f"{label}: map file (Python) vs YAML maps computed in C: "
               + "; ".join(r.stdout.strip().splitlines()), r.stderr)

    # 4. the C path against OpenCV on more shapes: other sizes, alpha 1, the rational model
    variants = []
    if real:
        cal = dict(real["cal"])
        variants.append(("real, as calibrated", cal, None))
        size = (int(cal["image_width"]), int(cal["image_height"]))
        r1, r2, p1, p2, q, _, _ = cv2.stereoRectify(cal["M1"], cal["D1"], cal["M2"], cal["D2"],
                                                    size, cal["R"], cal["T"],
                                                    flags=cv2.CALIB_ZERO_DISPARITY, alpha=1,
                                                    newImageSize=(800, 600))
        variants.append(("real, alpha 1, 800x600", dict(cal, R1=r1, R2=r2, P1=p1, P2=p2, Q=q,
                                                         rectified_width=800,
                                                         rectified_height=600), None))
    if gen:
        cal = dict(gen["cal"])
        variants.append(("generated, --size 631x479", cal, (631, 479)))
        rational = [np.hstack([cal[d].reshape(1, -1)[:, :5], [[0.02, -0.01, 0.003]]])
                    for d in ("D1", "D2")]
        variants.append(("generated, rational k1..k6", dict(cal, D1=rational[0], D2=rational[1]),
                         None))
    for label, cal, size in variants:
        yml = os.path.join(work, "variant.yml")
        out = os.path.join(work, "variant.maps")
        write_yaml(yml, cal)
        cmd = [CALIB_MAPS] + (["--size", f"{size[0]}x{size[1]}"] if size else []) + [yml, out]
        r = run(cmd)
        if r.returncode != 0:
            tap.ok(False, f"C maps vs OpenCV, {label}: calib-maps failed", r.stderr)
            continue
        ours, src = decode_map_file(out)
        size = size or (int(cal["rectified_width"]), int(cal["rectified_height"]))
        worst, frac, count = map_difference(ours, opencv_maps(cal, size), src)
        tap.ok(worst <= 1 and frac <= MAP_DIFFER_MAX,
               f"C maps vs cv2.initUndistortRectifyMap, {label}: max difference {worst}/32 px, "
               f"{frac:.4%} of {count} pixels differ (limits 1/32 px, {MAP_DIFFER_MAX:.1%})")


def check_chain(tap, work, gen):
    """A textured plane at a known depth through the true (distorting) cameras, rectified by
    the stage with the calibrated maps: the disparity must be f * B / Z of the rectified frame."""
    name = "whole chain: generated distorted pair, rectified by stereo-match --maps, disparity"
    if not gen:
        tap.skip(name, "no generated calibration")
        return
    K, D, R, T = rig()
    cal = gen["cal"]
    rng = np.random.default_rng(11)
    texture = cv2.GaussianBlur(rng.uniform(0, 255, (600, 800)).astype(np.float32), (0, 0), 1.2)
    texture = cv2.normalize(texture, None, 10, 245, cv2.NORM_MINMAX)
    # plane z = 0 of this frame: 1.2 m ahead of the left camera, tilted a little
    prot = cv2.Rodrigues(np.radians([4.0, -6.0, 0.0]))[0]
    pt = np.array([0.03, 0.0, 1.2])
    tex_scale = 800 / 1.6  # texture px per m: the texture spans 1.6 m x 1.2 m
    paths = []
    for c, (rc, tc) in enumerate([(prot, pt), (R @ prot, R @ pt + T)]):
        px, py, front = plane_coords(gen["rays"][c], rc, tc)
        mx = (px * tex_scale + 400).astype(np.float32)
        my = (py * tex_scale + 300).astype(np.float32)
        img = cv2.remap(texture, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        paths.append(os.path.join(work, f"plane_{c}.png"))
        cv2.imwrite(paths[-1], finish(img, rng))
    disp = os.path.join(work, "plane.pfm")
    r = run([STEREO_MATCH, "--maps", gen["maps"], "-d", "64", paths[0], paths[1], disp])
    if r.returncode != 0:
        tap.ok(False, name, r.stderr)
        return
    d = cv2.imread(disp, cv2.IMREAD_UNCHANGED)
    if d is None:  # the PFM reader of this OpenCV may be missing; read it here
        d = read_pfm(disp)
    # expected: rectified left pixel -> ray in the left camera frame -> plane -> depth
    size = (int(cal["rectified_width"]), int(cal["rectified_height"]))
    u, v = np.meshgrid(np.arange(size[0], dtype=np.float64), np.arange(size[1], dtype=np.float64))
    p1 = cal["P1"]
    ray_rect = np.stack([(u - p1[0, 2]) / p1[0, 0], (v - p1[1, 2]) / p1[1, 1], np.ones_like(u)], -1)
    ray_cam = ray_rect @ cal["R1"]  # R1^T applied to each ray (row vectors)
    normal = prot[:, 2]
    s = (normal @ pt) / (ray_cam @ normal)
    z_rect = s * ray_rect[..., 2]  # depth along the rectified optical axis
    expected = -cal["P2"][0, 3] / z_rect
    valid = np.isfinite(d)
    err = np.abs(d - expected)[valid]
    med, p95 = float(np.median(err)), float(np.percentile(err, 95))
    tap.ok(valid.mean() > 0.5 and med < 0.25,
           f"{name} within {med:.3f} px median, {p95:.3f} px 95th percentile of f*B/Z "
           f"(expected {expected[valid].min():.1f}..{expected[valid].max():.1f} px; "
           f"{valid.mean():.0%} of pixels valid)")


def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), "<f4" if scale < 0 else ">f4").reshape(h, w)
    assert kind == b"Pf"
    return np.flipud(data).astype(np.float32)


# --- bad inputs ------------------------------------------------------------------------------

def listing(d):
    return sorted(os.listdir(d))


def expect_failure(tap, name, cmd, must_name, out_dir, status=1):
    """Exit status, one stderr line naming `must_name`, the output directory unchanged; returns
    the run."""
    def contents(d):  # a folder's files and what they hold (None: not a regular file)
        return {n: open(os.path.join(d, n), "rb").read()
                if os.path.isfile(os.path.join(d, n)) else None for n in listing(d)}
    before = contents(out_dir)
    r = run(cmd)
    err_lines = [l for l in r.stderr.splitlines() if l.strip()]
    after = contents(out_dir)
    good = (r.returncode == status and len(err_lines) == 1 and must_name in err_lines[0]
            and after == before)
    tap.ok(good, f"bad input: {name} -> exit {r.returncode}: "
           f"{err_lines[0] if err_lines else '(no message)'}",
           f"want exit {status}, one line naming {must_name}, outputs unchanged "
           f"({sorted(before)} -> {sorted(after)})", r.stdout, r.stderr)
    return r


def check_outputs_refused(tap, work, gen, tool, pair_dir, out, yml):
    """An output that names an input image or another output, a link, a directory, a device:
    exit 2 before any work, one line, the inputs and outputs unchanged, no temporary file."""
    d = pair_dir("collide", 6)
    images = {n: open(os.path.join(d, n), "rb").read() for n in listing(d)}
    left1, right2 = os.path.join(d, "left01.png"), os.path.join(d, "right02.png")
    os.link(left1, os.path.join(out, "hard.png"))
    os.symlink(yml, os.path.join(out, "link.yml"))
    os.mkdir(os.path.join(out, "dir.yml"))
    cases = [
        ("--out = an input image (the same name)", ["--out", left1],
         f"--out '{left1}' is the same file as --left '{left1}'; choose another name"),
        ("--preview = an input image by another path",
         ["--out", yml, "--preview", os.path.join(d, ".", "right02.png")],
         f"--preview '{os.path.join(d, '.', 'right02.png')}' is the same file as --right "
         f"'{right2}'"),
        ("--maps = a hard link to an input image",
         ["--out", yml, "--maps", os.path.join(out, "hard.png")],
         f"--maps '{os.path.join(out, 'hard.png')}' is the same file as --left '{left1}'"),
        ("--maps = --out (another spelling)",
         ["--out", yml, "--maps", os.path.join(out, "..", os.path.basename(out), "calib.yml")],
         "is the same file as --out"),
        ("--preview = --maps (neither exists yet)",
         ["--out", yml, "--maps", os.path.join(out, "x.png"), "--preview",
          os.path.join(out, ".", "x.png")], "--preview '"),
        ("--out a symbolic link", ["--out", os.path.join(out, "link.yml")],
         f"--out '{os.path.join(out, 'link.yml')}' is a symbolic link"),
        ("--out a directory", ["--out", os.path.join(out, "dir.yml")],
         f"--out '{os.path.join(out, 'dir.yml')}' is a directory"),
        ("--maps a device (/dev/null)", ["--out", yml, "--maps", "/dev/null"],
         "--maps '/dev/null' exists and is not a regular file (a device, FIFO or socket)"),
    ]
    for name, extra, says in cases:
        t0 = time.time()
        r = expect_failure(tap, f"{name} (exit 2)", tool(d, *extra), says, out, status=2)
        after = {n: open(os.path.join(d, n), "rb").read() for n in listing(d)}
        temps = glob.glob(os.path.join(out, ".*.tmp.*")) + glob.glob(os.path.join(d, ".*.tmp.*"))
        # before any work: the calibration logs its steps on stdout, a refusal says nothing there
        tap.ok(after == images and not temps and not r.stdout.strip(),
               f"{name}: the images unchanged, no temporary file, refused before the work "
               f"(nothing logged; {time.time() - t0:.1f} s)",
               f"temps {temps}, stdout {r.stdout[:300]!r}")
    # --live: an output named as a pair --save-dir will hold; refused before the cameras open
    save = os.path.join(work, "collide-save")
    expect_failure(tap, "--live: --preview named as a pair --save-dir saves (exit 2)",
                   [sys.executable, TOOL, "--live", "/dev/no-such-cam0", "/dev/no-such-cam1",
                    "--save-dir", save, "--board", "9x6", "--square", "0.025", "--out", yml,
                    "--preview", os.path.join(save, "left_01.png")],
                   "is a name --save-dir", out, status=2)
    for n in ("hard.png", "link.yml"):
        os.remove(os.path.join(out, n))
    os.rmdir(os.path.join(out, "dir.yml"))

    # write_all failing half-way (the second output's folder vanished): the first output is
    # left as it was and no temporary file stays behind
    wa = os.path.join(work, "write-all")
    os.mkdir(wa)
    first = os.path.join(wa, "calib.yml")
    open(first, "w").write("old\n")
    module = load_tool()
    try:
        module.write_all([(first, b"new\n"), (os.path.join(wa, "gone", "maps.bin"), b"x")])
        raised = None
    except module.InputError as e:
        raised = str(e)
    tap.ok(raised is not None and open(first).read() == "old\n" and listing(wa) == ["calib.yml"],
           "write_all failing on its second output: the first unchanged, no temporary file",
           f"raised {raised!r}, listing {listing(wa)}")


def check_bad_inputs(tap, work, gen):
    out = os.path.join(work, "bad-out")
    os.mkdir(out)
    yml, maps = os.path.join(out, "calib.yml"), os.path.join(out, "maps.bin")
    with open(yml, "w") as f:
        f.write("an existing calibration that a failed run must not touch\n")
    outs = ["--out", yml, "--maps", maps]

    def tool(d, *extra, left="left*.png", right="right*.png"):
        return [sys.executable, TOOL, "--left", os.path.join(d, left), "--right",
                os.path.join(d, right), "--board", "9x6", "--square", "0.025", *extra]

    def pair_dir(name, count):
        d = os.path.join(work, name)
        os.mkdir(d)
        for k in range(1, count + 1):
            for side in ("left", "right"):
                shutil.copy(os.path.join(gen["dir"], f"{side}{k:02d}.png"), d)
        return d

    if gen:
        d = pair_dir("four", 4)
        expect_failure(tap, "4 pairs", tool(d, *outs), os.path.join(d, "left*.png"), out)
        d = pair_dir("sizes", 6)
        small = cv2.resize(cv2.imread(os.path.join(d, "right04.png")), (320, 240))
        cv2.imwrite(os.path.join(d, "right04.png"), small)
        expect_failure(tap, "images of different sizes", tool(d, *outs),
                       os.path.join(d, "right04.png"), out)
        d = pair_dir("garbage", 6)
        with open(os.path.join(d, "left03.png"), "w") as f:
            f.write("not an image\n")
        expect_failure(tap, "unreadable image", tool(d, *outs), os.path.join(d, "left03.png"),
                       out)
        d = pair_dir("truncated", 6)
        p = os.path.join(d, "right05.png")
        data = open(p, "rb").read()
        open(p, "wb").write(data[:len(data) * 2 // 3])
        expect_failure(tap, "truncated image", tool(d, *outs), p, out)
        d = pair_dir("count", 6)
        os.remove(os.path.join(d, "right06.png"))
        expect_failure(tap, "6 left but 5 right images", tool(d, *outs),
                       os.path.join(d, "left*.png"), out)
        expect_failure(tap, "no file matches", tool(d, *outs, left="nothing*.png"),
                       os.path.join(d, "nothing*.png"), out)
        d = pair_dir("swapped", 6)
        expect_failure(tap, "left and right swapped",
                       tool(d, *outs, left="right*.png", right="left*.png"), "swap", out)
        expect_failure(tap, "output directory missing (refused before any work: exit 2)",
                       tool(d, "--out", os.path.join(out, "no", "calib.yml")),
                       f"--out '{os.path.join(out, 'no', 'calib.yml')}': cannot write into the "
                       f"folder '{os.path.join(out, 'no')}': No such file or directory", out,
                       status=2)
        expect_failure(tap, "usage: --board 9",
                       tool(d, "--out", yml, "--board", "9"),  # the last --board counts
                       "--board", out, status=2)

        check_outputs_refused(tap, work, gen, tool, pair_dir, out, yml)

        # a pair without the board is skipped, named, and the run goes on with the rest
        d = pair_dir("noboard", 6)
        blank = np.full((H, W), 128, np.uint8)
        cv2.imwrite(os.path.join(d, "right02.png"), blank)
        ok_out = os.path.join(work, "noboard-out")
        os.mkdir(ok_out)
        r = run(tool(d, "--out", os.path.join(ok_out, "calib.yml")))
        said = re.search(r"skipping pair 2 .*not found in .*right02\.png", r.stdout)
        tap.ok(r.returncode == 0 and said and "5 of 6 pairs used" in r.stdout,
               "a pair without the board is skipped and named; 5 of 6 pairs used",
               r.stdout, r.stderr)
    else:
        tap.skip("stereo-calibrate bad inputs", "no generated views")

    # the C side: corrupt and truncated files, sizes that do not match
    src = gen or {}
    if not src:
        tap.skip("calib-maps bad inputs", "no generated calibration")
        return
    good = open(src["maps"], "rb").read()
    bad = os.path.join(work, "bad-in")
    os.mkdir(bad)
    p = os.path.join(bad, "truncated.maps")
    open(p, "wb").write(good[:len(good) - 1000])
    expect_failure(tap, "truncated map file", [CALIB_MAPS, "--compare", p, src["yml"]], p, out)
    p = os.path.join(bad, "corrupt.maps")
    flipped = bytearray(good)
    flipped[5000] ^= 0x10
    open(p, "wb").write(bytes(flipped))
    expect_failure(tap, "corrupt map file (one bit)", [CALIB_MAPS, "--compare", p, src["yml"]],
                   p, out)
    text = open(src["yml"]).read()
    p = os.path.join(bad, "truncated.yml")
    open(p, "w").write(text[:text.index("P2:") + 60])
    expect_failure(tap, "truncated YAML", [CALIB_MAPS, p, maps], p, out)
    p = os.path.join(bad, "badnumber.yml")
    open(p, "w").write(text.replace("rows: 3\n   cols: 4", "rows: 3\n   cols: 4x", 1))
    expect_failure(tap, "YAML with a bad number", [CALIB_MAPS, p, maps], p + ": line ", out)
    # a calibration of another camera size against the map file
    cal = dict(src["cal"], image_width=320, image_height=240)
    p = os.path.join(bad, "other-camera.yml")
    write_yaml(p, cal)
    expect_failure(tap, "maps for another camera size (calib-maps --compare)",
                   [CALIB_MAPS, "--compare", src["maps"], p], src["maps"], out)
    # ... and the app given images of another size than the maps
    small = os.path.join(bad, "small.png")
    cv2.imwrite(small, np.zeros((240, 320), np.uint8))
    expect_failure(tap, "images of another size than the maps (stereo-match --maps)",
                   [STEREO_MATCH, "--maps", src["maps"], small, small,
                    os.path.join(out, "d.pfm")], src["maps"], out)


# --- ROS camera_info ---------------------------------------------------------------------------

def camera_info_text(cal, k, rounded=False):
    """Camera k (0 left, 1 right) of an OpenCV calibration as a ROS camera_info file, in the
    layout ROS camera_calibration writes (rows of a matrix on their own lines). Numbers exact
    (repr), or rounded=True as ROS prints them: K and P 5 decimals, D 6, R 8."""
    def mat(m, decimals):
        m = np.atleast_2d(np.asarray(m, np.float64))
        rows, cols = m.shape
        fmt = (lambda v: repr(float(v))) if not rounded else (lambda v: f"{v:.{decimals}f}")
        lines = [", ".join(fmt(v) for v in row) for row in m]
        return f"  rows: {rows}\n  cols: {cols}\n  data: [" + ",\n         ".join(lines) + "]\n"
    d = np.asarray(cal[f"D{k + 1}"]).ravel()
    model = "rational_polynomial" if d.size == 8 else "plumb_bob"
    return (f"image_width: {int(cal['image_width'])}\nimage_height: {int(cal['image_height'])}\n"
            f"camera_name: narrow_stereo/{'right' if k else 'left'}\n"
            "camera_matrix:\n" + mat(cal[f"M{k + 1}"], 5) +
            f"distortion_model: {model}\n"
            "distortion_coefficients:\n" + mat(d.reshape(1, -1), 6) +
            "rectification_matrix:\n" + mat(cal[f"R{k + 1}"], 8) +
            "projection_matrix:\n" + mat(cal[f"P{k + 1}"], 5))


def write_camera_info(d, cal, rounded=False, names=("left.yaml", "right.yaml")):
    paths = [os.path.join(d, n) for n in names]
    for k, p in enumerate(paths):
        with open(p, "w") as f:
            f.write(camera_info_text(cal, k, rounded))
    return paths


def rounded_cal(cal):
    """The calibration with the numbers a ROS camera_info file holds (rounded as printed)."""
    out = dict(cal)
    for k in (1, 2):
        for key, decimals in (("M", 5), ("D", 6), ("R", 8), ("P", 5)):
            out[f"{key}{k}"] = np.array([[float(f"{v:.{decimals}f}") for v in row]
                                         for row in np.atleast_2d(cal[f"{key}{k}"])])
    return out


def check_camera_info(tap, work, tool, gen, real):
    """ROS camera_info pairs written from the calibrations: the maps computed in C are those of
    the OpenCV YAML (byte for byte) and of cv2.initUndistortRectifyMap; stereo-match gives the
    same disparity; bad pairs are refused."""
    cases = [(label, c) for label, c in (("generated", gen), ("real", real)) if c]
    if not cases:
        tap.skip("camera_info pairs", "no calibration to write them from")
        return
    d = os.path.join(work, "camera_info")
    os.mkdir(d)
    for label, c in cases:
        cal = c["cal"]
        left, right = write_camera_info(d, cal)
        spec = f"{left},{right}"
        # 1. the same maps in C as from the OpenCV YAML of the same calibration
        a, b = os.path.join(d, "yaml.maps"), os.path.join(d, "info.maps")
        ra, rb = run([CALIB_MAPS, c["yml"], a]), run([CALIB_MAPS, spec, b])
        # the maps byte for byte; the cameras (map file version 2) to 1e-9: the camera_info
        # baseline is |R2^T t| from P2, the YAML's |T| (the same number, rounded otherwise)
        same = ra.returncode == 0 and rb.returncode == 0
        if same:
            (ma, _, ca), (mb, _, cb) = decode_map_file_camera(a), decode_map_file_camera(b)
            same = (all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
                        for x, y in zip(ma, mb))
                    and ca is not None and cb is not None and np.allclose(ca, cb, rtol=1e-9,
                                                                          atol=1e-9))
        pixels = 2 * int(cal["rectified_width"]) * int(cal["rectified_height"])
        tap.ok(same, f"{label}: camera_info pair -> maps in C identical to the OpenCV YAML's "
               f"({pixels} pixels, both cameras; baseline and focal: "
               f"{rb.stdout.strip().split('(')[-1].rstrip(')')})", ra.stderr, rb.stderr, rb.stdout)
        # 2. against OpenCV, and the pair as ROS prints it (rounded)
        r = run([CALIB_MAPS, "--compare", c["maps"], spec])
        tap.ok(r.returncode == 0, f"{label}: camera_info maps vs cv2.initUndistortRectifyMap "
               "(stereo-calibrate --maps): " + "; ".join(r.stdout.strip().splitlines()), r.stderr)
        rl, rr = write_camera_info(d, cal, rounded=True, names=("ros_left.yaml", "ros_right.yaml"))
        rcal = rounded_cal(cal)
        size = (int(cal["rectified_width"]), int(cal["rectified_height"]))
        ref = os.path.join(d, "ros.maps")
        with open(ref, "wb") as f:
            f.write(tool.map_file_bytes(opencv_maps(rcal, size),
                                        (int(cal["image_width"]), int(cal["image_height"]))))
        r = run([CALIB_MAPS, "--compare", ref, f"{rl},{rr}"])
        tap.ok(r.returncode == 0, f"{label}: camera_info as ROS writes it (rounded) vs OpenCV's "
               "maps of the same numbers: " + "; ".join(r.stdout.strip().splitlines()), r.stderr)

    # 3. stereo-match: the same disparity from the pair as from the YAML
    c = cases[0][1]
    left, right = write_camera_info(d, c["cal"])
    imgs = sorted(glob.glob(os.path.join(gen["dir"], "*01.png"))) if gen else []
    if len(imgs) == 2:
        outs = [os.path.join(d, n) for n in ("yaml.pfm", "info.pfm")]
        runs = [run([STEREO_MATCH, "-q", "--maps", m, "-d", "64", imgs[0], imgs[1], o])
                for m, o in zip((c["yml"], f"{left}, {right}"), outs)]
        same = all(r.returncode == 0 for r in runs) and \
            open(outs[0], "rb").read() == open(outs[1], "rb").read()
        tap.ok(same, "stereo-match --maps LEFT,RIGHT (camera_info) gives the disparity of "
               "--maps calib.yml, byte for byte", *(r.stderr for r in runs))

    # 4. bad pairs through the programs: exit 1, one line naming the file at fault
    out = os.path.join(work, "camera-info-out")
    os.mkdir(out)
    maps_out = os.path.join(out, "x.maps")
    cal = c["cal"]
    mono = dict(cal)
    for k in (1, 2):
        mono[f"R{k}"] = np.eye(3)
        mono[f"P{k}"] = np.hstack([cal[f"M{k}"], np.zeros((3, 1))])
    ml, mr = write_camera_info(d, mono, names=("mono_left.yaml", "mono_right.yaml"))
    expect_failure(tap, "camera_info of two mono calibrations (calib-maps)",
                   [CALIB_MAPS, f"{ml},{mr}", maps_out], mr + ": not stereo-rectified", out)
    if gen:
        expect_failure(tap, "camera_info pair swapped (stereo-match --maps RIGHT,LEFT)",
                       [STEREO_MATCH, "--maps", f"{right},{left}",
                        os.path.join(gen["dir"], "left01.png"),
                        os.path.join(gen["dir"], "right01.png"), os.path.join(out, "d.pfm")],
                       right + ": projection_matrix has a baseline", out)
    small = dict(cal, image_width=320, image_height=240)
    sl, sr = write_camera_info(d, small, names=("small_left.yaml", "small_right.yaml"))
    expect_failure(tap, "camera_info files of different sizes",
                   [CALIB_MAPS, f"{left},{sr}", maps_out], sr + ": image size 320x240", out)
    text = open(right).read()
    cut = os.path.join(d, "cut_right.yaml")
    open(cut, "w").write(text[:text.index("projection_matrix") + 40])
    expect_failure(tap, "truncated camera_info", [CALIB_MAPS, f"{left},{cut}", maps_out],
                   cut + ": ", out)
    fisheye = os.path.join(d, "fisheye_right.yaml")
    lines = [l.replace("plumb_bob", "equidistant").replace("rational_polynomial", "equidistant")
             for l in text.splitlines()]
    open(fisheye, "w").write("\n".join(lines) + "\n")
    line = 1 + next(i for i, l in enumerate(lines) if l.startswith("distortion_model"))
    expect_failure(tap, "camera_info with the equidistant (fisheye) model",
                   [CALIB_MAPS, f"{left},{fisheye}", maps_out],
                   f"{fisheye}: line {line}: distortion_model: 'equidistant' is not supported", out)
    expect_failure(tap, "one camera's camera_info alone (calib-maps --info)",
                   [CALIB_MAPS, "--info", left], left + ": one camera's ROS camera_info", out)
    expect_failure(tap, "the OpenCV YAML given as a camera_info file",
                   [CALIB_MAPS, f"{c['yml']},{right}", maps_out],
                   c["yml"] + ": an OpenCV stereo calibration", out)
    expect_failure(tap, "--maps 'LEFT,' (the right file missing)",
                   [CALIB_MAPS, f"{left},", maps_out], "the right camera's camera_info file is "
                   "missing", out)


# --- live capture (stereo-calibrate --live) ------------------------------------------------------

LIVE_HOLD = 5  # frames each pose is held in the generated "camera" streams


def live_streams(gen_dir, seq_dir):
    """Two image sequences (left_NNN.png, right_NNN.png) standing in for the cameras, built from
    the generated views with new sensor noise in every frame: pose 1 held 3 x LIVE_HOLD frames
    (saved once: --min-move), the right camera without the board (never saved), pair 13 moving
    3 px a frame (never steady), then poses 2..12 held LIVE_HOLD frames each. Auto-capture with
    --auto-frames LIVE_HOLD - 1 must save the 12 poses, pose k as pair k. Returns the frame
    count."""
    os.mkdir(seq_dir)
    view = {(s, k): cv2.imread(os.path.join(gen_dir, f"{s}{k:02d}.png"), cv2.IMREAD_GRAYSCALE)
            for s in ("left", "right") for k in range(1, 14)}
    frames = [(view["left", 1], view["right", 1])] * (3 * LIVE_HOLD)
    frames += [(view["left", 2], np.full((H, W), 128, np.uint8))] * LIVE_HOLD
    frames += [(np.roll(view["left", 13], 3 * i, 1), np.roll(view["right", 13], 3 * i, 1))
               for i in range(2 * LIVE_HOLD)]
    for k in range(2, 13):
        frames += [(view["left", k], view["right", k])] * LIVE_HOLD
    rng = np.random.default_rng(17)
    for i, pair in enumerate(frames):
        for side, img in zip(("left", "right"), pair):
            noisy = np.clip(img + rng.normal(0, NOISE, img.shape), 0, 255).astype(np.uint8)
            cv2.imwrite(os.path.join(seq_dir, f"{side}_{i:03d}.png"), noisy)
    return len(frames)


def calibration_error(cal):
    """Worst relative error of the four focal lengths and of the baseline against the true rig."""
    K, D, R, T = rig()
    errs = [cal["M1"][0, 0] / K[0][0, 0], cal["M1"][1, 1] / K[0][1, 1],
            cal["M2"][0, 0] / K[1][0, 0], cal["M2"][1, 1] / K[1][1, 1],
            np.linalg.norm(cal["T"]) / np.linalg.norm(T)]
    return max(abs(e - 1) for e in errs)


def check_live_result(tap, name, r, save, out, frames, extra=""):
    """Pairs 01..12 saved (and nothing else), and the calibration from them within the
    generated checks' bounds."""
    files = listing(save) if os.path.isdir(save) else []
    want = [f"{s}_{k:02d}.png" for s in ("left", "right") for k in range(1, 13)]
    yml = os.path.join(out, "calib.yml")
    if not tap.ok(r.returncode == 0 and files == want and os.path.exists(yml),
                  f"{name}: 12 pairs auto-captured from {frames} frames (held, board-less and "
                  f"moving frames not saved){extra}", r.stdout, r.stderr, f"saved: {files}"):
        return
    cal = read_yaml(yml)
    worst, epi = calibration_error(cal), epipolar_held_out(cal)
    tap.ok(worst < REL_TOL and cal["rms"] < RMS_MAX_GEN and epi < EPI_MAX_GEN,
           f"{name}: calibration from the captured pairs: focal lengths and baseline within "
           f"{worst:.3%} (< {REL_TOL:.1%}), RMS {cal['rms']:.4f} px (< {RMS_MAX_GEN}), held-out "
           f"epipolar error {epi:.4f} px (< {EPI_MAX_GEN})", r.stdout)


def scripted_keys(tool, keys):
    """Runs the tool's window code without a display: imshow does nothing, waitKey returns
    keys[frame] (a character, or -1). Returns a restore function."""
    cv = tool.cv2
    saved = {n: getattr(cv, n) for n in ("namedWindow", "imshow", "waitKey", "getWindowProperty",
                                         "destroyAllWindows")}
    count = [0]

    def wait_key(delay):
        count[0] += 1
        k = keys.get(count[0], -1)
        return ord(k) if isinstance(k, str) else k
    cv.namedWindow = lambda *a: None
    cv.imshow = lambda *a: None
    cv.waitKey = wait_key
    cv.getWindowProperty = lambda *a: 1.0
    cv.destroyAllWindows = lambda: None
    display = tool.display_available
    tool.display_available = lambda: True

    def restore():
        for n, f in saved.items():
            setattr(cv, n, f)
        tool.display_available = display
    return restore


def check_live(tap, work, tool, gen):
    names = ["live: --no-window auto-capture", "live: --no-window calibration",
             "live: window under Xvfb", "live: window calibration", "live: keys",
             "live: bad cameras"]
    if not gen:
        for n in names:
            tap.skip(n, "no generated views")
        return
    seq = os.path.join(work, "live-seq")
    t0 = time.time()
    frames = live_streams(gen["dir"], seq)
    tap.note(f"live: {frames} frames per camera generated in {time.time() - t0:.1f} s")
    cams = [os.path.join(seq, "left_%03d.png"), os.path.join(seq, "right_%03d.png")]

    def tool_cmd(save, out, *extra, cameras=cams):
        return [sys.executable, TOOL, "--live", *cameras, "--save-dir", save, "--board", "9x6",
                "--square", str(SQUARE), "--auto-frames", str(LIVE_HOLD - 1),
                "--out", os.path.join(out, "calib.yml"), *extra]

    # 1. no window: auto-capture only
    save, out = os.path.join(work, "live-save"), os.path.join(work, "live-out")
    os.mkdir(out)
    t0 = time.time()
    r = run(tool_cmd(save, out, "--no-window"))
    check_live_result(tap, "live, --no-window", r, save, out, frames,
                      f" in {time.time() - t0:.1f} s")
    # the same pairs calibrate again offline: the same result
    if os.path.isdir(save):
        again = os.path.join(out, "again.yml")
        r2 = run([sys.executable, TOOL, "--left", os.path.join(save, "left_*.png"), "--right",
                  os.path.join(save, "right_*.png"), "--board", "9x6", "--square", str(SQUARE),
                  "--out", again])
        same = r2.returncode == 0 and os.path.exists(os.path.join(out, "calib.yml")) and \
            np.array_equal(read_yaml(again)["P2"], read_yaml(os.path.join(out, "calib.yml"))["P2"])
        tap.ok(same, "live: the saved pairs calibrate again offline (--left/--right) to the same "
               "result", r2.stdout, r2.stderr)

    # 2. the window (preview with the corners drawn) under Xvfb
    if shutil.which("xvfb-run"):
        save, out = os.path.join(work, "live-save-x"), os.path.join(work, "live-out-x")
        os.mkdir(out)
        env = dict(os.environ, XDG_RUNTIME_DIR=work)
        env.pop("WAYLAND_DISPLAY", None)
        r = run(["xvfb-run", "-a", "-s", "-screen 0 1600x900x24"] + tool_cmd(save, out), env=env)
        shown = "Space saves a pair" in r.stdout
        check_live_result(tap, "live, window under Xvfb", r, save, out, frames,
                          "" if shown else " [the window was not used]")
    else:
        tap.skip(names[2], "xvfb-run not installed")

    # 3. keys, with the window's functions scripted: Space in a frame without the board in the
    #    right view saves that pair (the calibration skips it), q ends the capture
    save, out = os.path.join(work, "live-save-keys"), os.path.join(work, "live-out-keys")
    os.mkdir(out)
    # frames 16..20 have no board on the right; pose 7 is saved at frame 59 (see live_streams)
    assert LIVE_HOLD == 5
    restore = scripted_keys(tool, {17: " ", 60: "q"})
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            rc = tool.main(tool_cmd(save, out)[2:])
    finally:
        restore()
    text = buf.getvalue()
    space = re.search(r"saved pair  2 \(Space, frame 17\); board not seen in the right view", text)
    ended = "end of the input" not in text
    used = re.search(r"(\d+) of (\d+) pairs used", text)
    tap.ok(rc == 0 and space and ended and used and used.groups() == ("7", "8") and
           "skipping pair 2" in text,
           "live, keys: Space saves the current pair (board missing on the right: noted, then "
           "skipped by the calibration), q ends the capture and calibrates the 8 pairs saved",
           text)

    # 4. cameras that cannot be opened or give no frame, sizes that differ, a used directory
    bad = os.path.join(work, "live-bad")
    os.mkdir(bad)
    with open(os.path.join(bad, "broken_000.png"), "w") as f:
        f.write("not an image\n")
    small = os.path.join(bad, "small_%03d.png")
    for i in range(3):
        cv2.imwrite(small % i, np.zeros((240, 320), np.uint8))
    out = os.path.join(work, "live-bad-out")
    os.mkdir(out)
    missing_dev = "/dev/video-missing"
    cases = [("a camera device that does not exist", [missing_dev, cams[1]], missing_dev),
             ("an image sequence with no file", [cams[0], os.path.join(bad, "none_%03d.png")],
              os.path.join(bad, "none_%03d.png") + ": cannot open"),
             ("a camera that gives no frame", [cams[0], os.path.join(bad, "broken_%03d.png")],
              os.path.join(bad, "broken_%03d.png") + ": the camera opened but gave no frame"),
             ("cameras of different sizes", [cams[0], small], small + ": 320x240 frames, but")]
    for label, cameras, must in cases:
        save = os.path.join(bad, "save")
        expect_failure(tap, f"live: {label}", tool_cmd(save, out, "--no-window", cameras=cameras),
                       must, out)
        if os.path.exists(save):
            tap.ok(False, f"live: {label}: --save-dir {save} was left behind")
    used_dir = os.path.join(work, "live-save")
    expect_failure(tap, "live: --save-dir that already holds pairs",
                   tool_cmd(used_dir, out, "--no-window"), used_dir + ": already holds pairs", out)
    expect_failure(tap, "live: --live without --save-dir",
                   [sys.executable, TOOL, "--live", *cams, "--board", "9x6", "--square", "0.025",
                    "--out", os.path.join(out, "c.yml")], "--save-dir", out, status=2)
    save = os.path.join(bad, "save-none")
    expect_failure(tap, "live: no pair saved (--auto-frames longer than any pose is held)",
                   tool_cmd(save, out, "--no-window", "--auto-frames", "50"), "no pair saved", out)
    tap.ok(not os.path.exists(save), "live: no pair saved: the --save-dir it made is removed")
    save = os.path.join(bad, "save-one")
    expect_failure(tap, "live: fewer than 5 pairs (--min-move larger than any pose change)",
                   tool_cmd(save, out, "--no-window", "--min-move", "100000"),
                   save + ": only 1 pair saved; at least 5 are needed", out)


def main():
    global cv2, np
    tap = Tap()
    try:
        import cv2
        import numpy as np
    except ImportError:
        tap.skip("calibration tests", "python3-opencv / numpy missing (run ./setup.sh)")
        print(f"1..{tap.n}")
        return 0
    missing = [p for p in (CALIB_MAPS, STEREO_MATCH, TOOL_BUILT) if not os.access(p, os.X_OK)]
    if missing:
        print(f"Bail out! {', '.join(missing)} not built (ninja {' '.join(missing)})")
        return 1
    r = run([TOOL_BUILT, "--help"])
    tap.ok(r.returncode == 0 and "--left" in r.stdout and "--live" in r.stdout,
           f"{BUILD}/stereo-calibrate runs the tool (--help)", r.stdout, r.stderr)
    t0 = time.time()
    tool = load_tool()
    work = tempfile.mkdtemp(prefix="test_calibrate.")
    try:
        gen = check_generated(tap, work)
        real = check_real(tap, work)
        check_maps(tap, work, tool, gen, real)
        check_camera_info(tap, work, tool, gen, real)
        check_chain(tap, work, gen)
        check_bad_inputs(tap, work, gen)
        check_live(tap, work, tool, gen)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.note(f"{time.time() - t0:.1f} s")
    print(f"1..{tap.n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
