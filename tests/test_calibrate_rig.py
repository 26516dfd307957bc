# SPDX-License-Identifier: Apache-2.0
"""N-camera calibration, as TAP: tools/stereo-calibrate --view (a rig file and pair map files)
and its C side (hal/calib.c calib_rig_*, through build/calib-maps).

  generated rig    a 9x6 board rendered (as tests/test_calibrate.py does, with its renderer)
                   through 4 known cameras: different intrinsics and distortion, each turned by
                   up to 1.2 degrees, centres at -50, 0, 60 and 120 mm along x, the last 0.5 mm
                   above and 0.4 mm behind the line. The first 3 views and all 4 are calibrated:
                   baseline ratios within RATIO_TOL of the true ones (-0.8333 on the other
                   side), the collinearity report within OFFLINE_TOL_MM of the true distances of
                   the centres from their least-squares line, vertical residual below
                   VERTICAL_MAX; true 3D points (1 .. 4 m) projected through the true cameras
                   and rectified with the rig file land on one row (POINT_DY_*) at
                   x_k = x_ref - b_k * d (POINT_DX_MAX), and with the true cameras' rig_rectify
                   within what the off-line centre leaves; views in another order with
                   --reference 1 (a middle camera as the reference)
  C side           calib-maps RIG MAPS writes the same pair map files as the tool (in 1/32 px),
                   calib-maps --info reads the rig, a 3-camera rig refused where two maps are
                   wanted; a two-camera rig file holding a pair YAML's numbers gives its maps
                   byte for byte
  rig matching     3 cameras of the same kind on one line (0, +60, -60 mm; known poses, the
                   rig file from rig_rectify of the true cameras) see a textured wall and a
                   board in front of it (exact ground truth): stereo-match --maps RIG with the
                   3 raw images takes the baselines 1,-1 from the rig, scores bad-2 (stereo-eval)
                   below MATCH_BAD2_MAX and within MATCH_VS_PRE points of the same views
                   rendered already rectified (--baselines 1,-1), and beats the pair through
                   the rig's pair map file; --baselines equal to the rig's gives the same bytes;
                   bad input (a rig of 2 cameras with 3 images, 3 cameras with 4 images, a pair
                   map file with 3 images, a view of another size, --baselines other than the
                   rig's, a pair with a 3-camera rig): one line naming the file and view, exit
                   1, no output
  real pairs       ../shared/data/calib/opencv_samples through --view (N = 2; skipped when
                   absent): baseline within 1 % of the --left/--right calibration's, vertical
                   residual < 0.5 px, the C maps of the rig file equal to the tool's
  bad inputs       one view, unequal image counts, a view without the board, mixed sizes, the
                   first other view on the wrong side, --reference out of range, options that
                   --view does not take, outputs naming an input or each other: one line naming
                   the view or option, exit 1 or 2, no output left behind

Run by tests/run with /usr/bin/python3. Env: STEREO_BUILD (build), STEREO_DATA (../shared/data).
"""
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("STEREO_BUILD", "build")
DATA = os.environ.get("STEREO_DATA", os.path.join(ROOT, "..", "shared", "data"))
TOOL = os.path.join(ROOT, "tools", "stereo-calibrate")
CALIB_MAPS = os.path.join(ROOT, BUILD, "calib-maps")

# the generated rig, in camera 0's frame: centres (m), rotations (deg, Rodrigues), intrinsics
CENTRES = [(0.0, 0.0, 0.0), (0.060, 0.0, 0.0), (0.120, 0.0005, -0.0004), (-0.050, 0.0, 0.0)]
ROT_DEG = [(0, 0, 0), (0.5, -1.0, 0.3), (-0.4, 0.8, -0.5), (0.6, 1.2, 0.2)]
KS = [(600.0, 602.0, 322, 238), (606.0, 605.0, 316, 244), (596.0, 597.0, 326, 236),
      (603.0, 601.0, 318, 242)]
DS = [(-0.12, 0.05, 0.0008, -0.0005, 0.0), (-0.10, 0.03, -0.0006, 0.0004, 0.0),
      (-0.11, 0.04, 0.0003, 0.0006, 0.0), (-0.09, 0.02, -0.0004, -0.0003, 0.0)]
# board poses: rotation (deg) and centre in camera 0's frame (m), in front of the rig's middle
POSES = [((0, 0, 0), (0.035, 0.0, 0.5)), ((25, 0, 0), (0.035, 0.02, 0.55)),
         ((-25, 0, 5), (0.035, -0.02, 0.55)), ((0, 25, 0), (0.05, 0.0, 0.6)),
         ((0, -25, -5), (0.02, 0.0, 0.6)), ((15, 15, 10), (0.0, -0.05, 0.65)),
         ((-15, 20, -10), (0.07, -0.05, 0.65)), ((20, -15, 3), (0.0, 0.05, 0.65)),
         ((-20, -20, 0), (0.07, 0.05, 0.65)), ((10, 30, 20), (0.035, 0.0, 0.65)),
         ((-10, -30, -20), (0.035, 0.0, 0.65)), ((30, 10, 0), (0.035, 0.0, 0.75))]

# acceptance
RATIO_TOL = 0.005        # baseline ratios, relative
OFFLINE_TOL_MM = 0.15    # distance of a centre from the fitted line
VERTICAL_MAX = 0.35      # px: mean |y_k - y_ref| of the corners (boards at 0.5 .. 0.75 m)
# true 3D points at POINT_Z (m): from 1 m on the 0.5 mm offset of camera 2 alone moves a row by
# less than f * 0.26 mm / 1 m = 0.17 px (0.26 mm: its distance from the fitted line)
POINT_Z = (1.0, 4.0)
POINT_DY_MEAN = 0.2      # px: mean |y_k - y_ref|
POINT_DY_MAX = 0.4       # px: largest |y_k - y_ref|
POINT_DX_MAX = 0.5       # px: largest |x_k - (x_ref - b_k * d)|; 0.35 measured, of which the
                         # calibration error (a pose 0.03 degree off about y moves x by 0.35 px)
# the rectification of the true cameras (no calibration error): what the off-line camera alone
# leaves (measured 0.18 px in y, 0.07 px in x)
TRUE_DY_MAX, TRUE_DX_MAX, TRUE_RATIO_TOL = 0.2, 0.1, 1e-4
REAL_BASELINE_TOL = 0.01
REAL_VERTICAL_MAX = 0.5  # px


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def load(name, path):
    """A script as a module: the tool (its map file writer) and test_calibrate.py (renderer)."""
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402


# --- the generated rig -----------------------------------------------------------------------

def true_cameras():
    """Per camera: K, D, and the pose X_k = R X_0 + T."""
    cams = []
    for c, rot, k, d in zip(CENTRES, ROT_DEG, KS, DS):
        r = cv2.Rodrigues(np.radians(np.array(rot, np.float64)))[0]
        cams.append(dict(K=np.array([[k[0], 0, k[2]], [0, k[1], k[3]], [0, 0, 1.0]]),
                         D=np.array(d), R=r, T=-r @ np.array(c)))
    return cams


def generate(tc, out_dir):
    """cam<k>/shot<NN>.png for every pose and camera."""
    cams = true_cameras()
    tc.W, tc.H = 640, 480
    rng = np.random.default_rng(11)
    for k, cam in enumerate(cams):
        os.mkdir(os.path.join(out_dir, f"cam{k}"))
        rays = tc.camera_rays(cam["K"], cam["D"])
        for n, pose in enumerate(POSES):
            rb, tb = tc.board_pose(*pose)
            rc, tcam = cam["R"] @ rb, cam["R"] @ tb + cam["T"]
            if not tc.visible(cam["K"], cam["D"], rc, tcam):
                raise RuntimeError(f"generated pose {n + 1} leaves camera {k}'s image")
            cv2.imwrite(os.path.join(out_dir, f"cam{k}", f"shot{n + 1:02d}.png"),
                        tc.render_board(rays, rc, tcam, rng))


def true_line_figures(views, ref):
    """The true centres' least-squares line: distance of each from it (mm), ratios."""
    c = np.array([CENTRES[k] for k in views])
    mean = c.mean(axis=0)
    e = np.linalg.svd(c - mean)[2][0]
    e = e if e[0] > 0 else -e
    rel = c - mean
    off = np.linalg.norm(rel - np.outer(rel @ e, e), axis=1) * 1000
    along = (c - c[ref]) @ e
    first = next(i for i in range(len(views)) if i != ref)
    return off, along / along[first]


def read_rig(path):
    fs = cv2.FileStorage(path, cv2.FILE_STORAGE_READ)
    n = int(fs.getNode("rig_cameras").real())
    rig = dict(n=n, reference=int(fs.getNode("reference").real()),
               f=fs.getNode("focal_px").real(), cy=fs.getNode("cy").real())
    for key in ("M", "D", "R", "P", "pose_R", "pose_T"):
        rig[key] = [fs.getNode(f"cam{k}_{key}").mat() for k in range(n)]
    for key in ("baseline_ratio", "off_line", "vertical_error", "position"):
        rig[key] = np.array([fs.getNode(f"cam{k}_{key}").real() for k in range(n)])
    fs.release()
    return rig


def true_points_rectified(rig, views):
    """True 3D points (camera 0's frame, POINT_Z) projected through the true cameras of
    views and rectified with the rig file: (x, y) per view, N points each."""
    cams = true_cameras()
    rng = np.random.default_rng(5)
    z = rng.uniform(*POINT_Z, 200)
    pts = np.stack([(rng.uniform(-0.25, 0.25, 200)) * z + 0.035, rng.uniform(-0.2, 0.2, 200) * z,
                    z], 1)
    out = []
    for i, k in enumerate(views):
        cam = cams[k]
        p, _ = cv2.projectPoints(pts, cv2.Rodrigues(cam["R"])[0], cam["T"], cam["K"], cam["D"])
        u = cv2.undistortPoints(p, rig["M"][i], rig["D"][i], R=rig["R"][i], P=rig["P"][i])
        out.append(u.reshape(-1, 2))
    return out


def check_true_rectification(tap, tool, views):
    """rig_rectify on the true cameras: ratios, rows and x positions of true points exact but
    for what the centre off the line leaves."""
    true = true_cameras()
    cams = [dict(M=true[k]["K"], D=true[k]["D"].reshape(1, -1), R=true[k]["R"],
                 T=true[k]["T"].reshape(3, 1)) for k in views]
    rect = tool.rig_rectify(cams, 0, (640, 480), (640, 480), 0.0, ["view"] * len(views))
    rig = dict(M=[c["M"] for c in cams], D=[c["D"] for c in cams], R=rect["R"], P=rect["P"])
    xy = true_points_rectified(rig, views)
    others = range(1, len(views))
    _, ratio_true = true_line_figures(views, 0)
    d = xy[0][:, 0] - xy[1][:, 0]
    dy = max(float(np.abs(xy[i][:, 1] - xy[0][:, 1]).max()) for i in others)
    dx = max(float(np.abs(xy[i][:, 0] - (xy[0][:, 0] - rect["ratio"][i] * d)).max())
             for i in others)
    ratio_err = float(np.abs(rect["ratio"] - ratio_true).max())
    tap.ok(ratio_err < TRUE_RATIO_TOL and dy < TRUE_DY_MAX and dx < TRUE_DX_MAX,
           f"true cameras {','.join(map(str, views))} rectified (rig_rectify): ratios off by "
           f"{ratio_err:.1e} < {TRUE_RATIO_TOL:g}, true points' largest |dy| {dy:.3f} < "
           f"{TRUE_DY_MAX} px, x error {dx:.3f} < {TRUE_DX_MAX} px")


def check_rig(tap, tc, tool, work, gen, views, ref):
    """One --view calibration of the generated cameras `views`, reference `ref` (an index into
    views)."""
    label = f"generated, views {','.join(map(str, views))}, reference {ref}"
    out = os.path.join(work, f"rig-{''.join(map(str, views))}-{ref}")
    os.mkdir(out)
    yml, maps, preview = (os.path.join(out, n) for n in ("rig.yml", "rig.maps", "preview.png"))
    cmd = [sys.executable, TOOL, "--board", "9x6", "--square", "0.025", "--out", yml,
           "--maps", maps, "--preview", preview]
    for k in views:
        cmd += ["--view", os.path.join(gen, f"cam{k}", "shot*.png")]
    if ref:
        cmd += ["--reference", str(ref)]
    t0 = time.time()
    r = run(cmd)
    others = [i for i in range(len(views)) if i != ref]
    pair_files = [tool.rig_map_path(maps, ref, i) for i in others]
    if not tap.ok(r.returncode == 0 and all(os.path.isfile(p) for p in pair_files + [preview]),
                  f"{label}: runs ({time.time() - t0:.1f} s), writes the rig file, "
                  f"{len(pair_files)} pair map files and the preview", r.stdout, r.stderr):
        return None
    tap.note("report:\n" + r.stdout.rstrip())
    rig = read_rig(yml)
    off_true, ratio_true = true_line_figures(views, ref)
    ratio_err = np.abs(rig["baseline_ratio"][others] / ratio_true[others] - 1)
    tap.ok(rig["n"] == len(views) and rig["reference"] == ref and ratio_err.max() < RATIO_TOL,
           f"{label}: baseline ratios {np.round(rig['baseline_ratio'], 4).tolist()} vs true "
           f"{np.round(ratio_true, 4).tolist()} (worst {ratio_err.max():.3%} < {RATIO_TOL:.1%})")
    want = ",".join("1" if i == others[0] else f"{rig['baseline_ratio'][i]:.6g}" for i in others)
    tap.ok(f"stereo-match --baselines {want} " in r.stdout,
           f"{label}: the report prints --baselines {want}", r.stdout)
    off_err = np.abs(rig["off_line"] * 1000 - off_true)
    tap.ok(off_err.max() < OFFLINE_TOL_MM,
           f"{label}: centres' distances from the fitted line "
           f"{np.round(rig['off_line'] * 1000, 3).tolist()} mm vs true "
           f"{np.round(off_true, 3).tolist()} (worst {off_err.max():.3f} < {OFFLINE_TOL_MM} mm)")
    vert = rig["vertical_error"]
    tap.ok(vert[ref] == 0 and vert.max() < VERTICAL_MAX,
           f"{label}: vertical residual of the corners per view {np.round(vert, 4).tolist()} px "
           f"< {VERTICAL_MAX}")
    xy = true_points_rectified(rig, views)
    dy = np.concatenate([np.abs(xy[i][:, 1] - xy[ref][:, 1]) for i in others])
    d = xy[ref][:, 0] - xy[others[0]][:, 0]
    dx = np.concatenate([np.abs(xy[i][:, 0] - (xy[ref][:, 0] - rig["baseline_ratio"][i] * d))
                         for i in others])
    tap.ok(d.min() > 0 and dy.mean() < POINT_DY_MEAN and dy.max() < POINT_DY_MAX and
           dx.max() < POINT_DX_MAX,
           f"{label}: {len(d)} true points at {POINT_Z[0]:g}-{POINT_Z[1]:g} m rectified: on one "
           f"row (|dy| mean {dy.mean():.3f} < {POINT_DY_MEAN}, max {dy.max():.3f} < "
           f"{POINT_DY_MAX} px), at x_ref - b_k d (largest error {dx.max():.3f} < "
           f"{POINT_DX_MAX} px), d {d.min():.1f}..{d.max():.1f} px > 0")
    img = cv2.imread(preview)
    tap.ok(img is not None and img.shape[:2] == (480, 640 * len(views)),
           f"{label}: --preview is every view side by side ({640 * len(views)}x480)")
    return dict(yml=yml, maps=maps, pair_files=pair_files, rig=rig, ref=ref, others=others,
                out=out)


def check_c_side(tap, tc, work, res):
    """calib-maps on the rig file: the same pair maps as the tool's, --info, refusals."""
    n = res["rig"]["n"]
    cmaps = os.path.join(res["out"], "c.maps")
    r = run([CALIB_MAPS, res["yml"], cmaps])
    worst, frac = 0, 0.0
    ok = r.returncode == 0
    for i, py_file in zip(res["others"], res["pair_files"]):
        c_file = os.path.join(res["out"], f"c-{res['ref']}-{i}.maps")
        if not (ok and os.path.isfile(c_file)):
            ok = False
            break
        a, src = tc.decode_map_file(c_file)
        b, _ = tc.decode_map_file(py_file)
        w, f, _ = tc.map_difference(a, b, src)
        worst, frac = max(worst, w), max(frac, f)
    tap.ok(ok and worst <= 1 and frac < 0.001,
           f"C, {n} cameras: calib-maps RIG MAPS writes {n - 1} pair map files equal to the "
           f"tool's (max difference {worst}/32 px, {frac:.4%} of pixels differ)",
           r.stdout, r.stderr)
    r = run([CALIB_MAPS, "--info", res["yml"]])
    ratios = [float(m) for m in re.findall(r"baseline ratio (-?[\d.e+-]+),", r.stdout)]
    tap.ok(r.returncode == 0 and f"rig of {n} cameras" in r.stdout and len(ratios) == n and
           np.allclose(ratios, res["rig"]["baseline_ratio"], rtol=1e-5, atol=1e-9),
           f"C, {n} cameras: calib-maps --info reads the rig ({ratios})", r.stdout, r.stderr)
    # a pair map file that would overwrite the rig file: refused before anything is written
    odd = os.path.join(res["out"], f"x-{res['ref']}-{res['others'][-1]}.yml")
    shutil.copy(res["yml"], odd)
    before = sorted(os.listdir(res["out"]))
    r = run([CALIB_MAPS, odd, os.path.join(res["out"], "x.yml")])
    tap.ok(r.returncode == 2 and f"MAPS '{odd}' is the same file as RIG" in r.stderr and
           sorted(os.listdir(res["out"])) == before,
           f"C, {n} cameras: calib-maps refuses a pair map file named as the rig file (exit "
           f"{r.returncode}), writes nothing", r.stdout, r.stderr)
    if n > 2:
        r = run([CALIB_MAPS, "--compare", res["pair_files"][0], res["yml"]])
        tap.ok(r.returncode == 1 and f"a rig file of {n} cameras" in r.stderr,
               f"C, {n} cameras: where two maps are wanted (calib_load_maps) the rig is refused: "
               f"{r.stderr.strip()}", r.stdout, r.stderr)


def check_pair_as_rig(tap, work, pair_yml):
    """A two-camera rig file holding a pair YAML's numbers gives its maps byte for byte."""
    fs = cv2.FileStorage(pair_yml, cv2.FILE_STORAGE_READ)
    cal = {k: fs.getNode(k).mat() for k in ("M1", "D1", "M2", "D2", "R1", "R2", "P1", "P2")}
    size = [int(fs.getNode(k).real()) for k in ("image_width", "image_height",
                                                "rectified_width", "rectified_height")]
    fs.release()
    rig_yml = os.path.join(work, "pair-as-rig.yml")
    out = cv2.FileStorage(rig_yml, cv2.FILE_STORAGE_WRITE)
    out.write("rig_cameras", 2)
    out.write("reference", 0)
    for key, v in zip(("image_width", "image_height", "rectified_width", "rectified_height"),
                      size):
        out.write(key, v)
    out.write("focal_px", float(cal["P1"][0, 0]))
    out.write("cy", float(cal["P1"][1, 2]))
    for k in (0, 1):
        for key in ("M", "D", "R", "P"):
            out.write(f"cam{k}_{key}", cal[f"{key}{k + 1}"])
        out.write(f"cam{k}_baseline_ratio", float(k))
    out.release()
    a, b = os.path.join(work, "pair.maps"), os.path.join(work, "pair-as-rig.maps")
    r1 = run([CALIB_MAPS, pair_yml, a])
    r2 = run([CALIB_MAPS, rig_yml, b])
    b01 = os.path.join(work, "pair-as-rig-0-1.maps")
    # both version 2 map files (hal/mapfile.h: an 84-byte header with the camera block, whose
    # baseline the pair YAML takes from |T| and the rig file from its projections): the maps,
    # everything after the header, byte for byte
    same = (r1.returncode == 0 and r2.returncode == 0 and os.path.isfile(b01) and
            open(a, "rb").read(12) == open(b01, "rb").read(12) and
            open(a, "rb").read()[84:] == open(b01, "rb").read()[84:])
    r3 = run([CALIB_MAPS, "--compare", a, rig_yml, "--tolerance", "0"])
    tap.ok(same and r3.returncode == 0,
           "C: a two-camera rig file with a pair YAML's numbers gives the same maps, byte for "
           "byte (calib-maps), and through calib_load_maps (--compare, tolerance 0)",
           r1.stdout, r1.stderr, r2.stdout, r2.stderr, r3.stdout, r3.stderr)


def check_real(tap, work):
    src = os.path.join(DATA, "calib", "opencv_samples")
    names = ["real, --view N = 2: runs on the 13 opencv_samples pairs",
             "real, --view N = 2: baseline against the --left/--right calibration",
             "real, --view N = 2: vertical residual",
             "real, --view N = 2: C maps of the rig file equal the tool's",
             "C: a two-camera rig file with a pair YAML's numbers gives the same maps"]
    if not glob.glob(os.path.join(src, "left*.jpg")):
        for n in names:
            tap.skip(n, f"calibration pairs not found at {src} (set STEREO_DATA)")
        return
    out = os.path.join(work, "real")
    os.mkdir(out)
    left, right = os.path.join(src, "left*.jpg"), os.path.join(src, "right*.jpg")
    yml, maps = os.path.join(out, "rig.yml"), os.path.join(out, "rig.maps")
    r = run([sys.executable, TOOL, "--view", left, "--view", right, "--board", "9x6",
             "--square", "0.025", "--out", yml, "--maps", maps])
    if not tap.ok(r.returncode == 0, names[0], r.stdout, r.stderr):
        return
    tap.note("report:\n" + r.stdout.rstrip())
    pair = os.path.join(out, "pair.yml")
    r2 = run([sys.executable, TOOL, "--left", left, "--right", right, "--board", "9x6",
              "--square", "0.025", "--out", pair])
    rig = read_rig(yml)
    fs = cv2.FileStorage(pair, cv2.FILE_STORAGE_READ)
    b_pair = float(np.linalg.norm(fs.getNode("T").mat()))
    fs.release()
    b_rig = float(rig["position"][1])
    tap.ok(r2.returncode == 0 and abs(b_rig / b_pair - 1) < REAL_BASELINE_TOL,
           f"{names[1]}: {b_rig * 1000:.3f} mm vs {b_pair * 1000:.3f} mm "
           f"({b_rig / b_pair - 1:+.3%}, limit {REAL_BASELINE_TOL:.0%})", r2.stdout, r2.stderr)
    tap.ok(rig["vertical_error"][1] < REAL_VERTICAL_MAX,
           f"{names[2]} {rig['vertical_error'][1]:.4f} px < {REAL_VERTICAL_MAX}")
    r3 = run([CALIB_MAPS, "--compare", os.path.join(out, "rig-0-1.maps"), yml, "--tolerance",
              "1"])
    tap.ok(r3.returncode == 0, f"{names[3]}: " + " / ".join(r3.stdout.strip().splitlines()),
           r3.stdout, r3.stderr)
    check_pair_as_rig(tap, out, pair)


# --- matching through a rig file: stereo-match --maps RIG REF VIEW1 VIEW2 OUT ----------------

# three cameras of the generated rig's kind (intrinsics, distortion and turns of cameras 0, 1 and
# 3 above) on one line: the reference at 0, view 1 at +60 mm (ratio 1), view 2 at -60 mm (-1)
MATCH_CENTRES = [(0.0, 0.0, 0.0), (0.060, 0.0, 0.0), (-0.060, 0.0, 0.0)]
MATCH_CAMS = [0, 1, 3]
# the scene, in camera 0's frame: a textured wall at Z = 1.5 m, a textured board at 0.75 m in
# front of it (X -0.12 .. 0.10, Y -0.10 .. 0.12 m); disparities about 24 and 48 px against view 1
WALL_Z, BOARD_Z, BOARD_XY = 1.5, 0.75, (-0.12, 0.10, -0.10, 0.12)
TEXELS_PER_M, TEX_SIZE = 800, 2048
MATCH_D = 64
# acceptance: bad-2 (% of all pixels, invalid ones filled, stereo-eval) of the 3 views matched
# through the rig at most MATCH_BAD2_MAX, within MATCH_VS_PRE points of the same views rendered
# already rectified, and below the pair through the rig's pair map file
MATCH_BAD2_MAX, MATCH_VS_PRE = 1.0, 0.5


def match_cameras():
    cams = true_cameras()
    out = []
    for c, k in zip(MATCH_CENTRES, MATCH_CAMS):
        r = cams[k]["R"]
        out.append(dict(K=cams[k]["K"], D=cams[k]["D"], R=r, T=-r @ np.array(c)))
    return out


def texture(seed):
    """A random texture at two scales, 0..255 float32 (TEX_SIZE square)."""
    rng = np.random.default_rng(seed)
    fine = cv2.GaussianBlur(rng.uniform(0, 255, (TEX_SIZE, TEX_SIZE)).astype(np.float32),
                            (0, 0), 1.2)
    coarse = cv2.resize(rng.uniform(0, 255, (TEX_SIZE // 32, TEX_SIZE // 32)).astype(np.float32),
                        (TEX_SIZE, TEX_SIZE), interpolation=cv2.INTER_CUBIC)
    return np.clip(0.5 * (fine - 128) * 2.2 + 0.5 * coarse, 0, 255).astype(np.float32)


def trace(origin, dirs):
    """Where rays (origin, dirs[..., 3] in camera 0's frame) meet the scene: X, Y, Z and whether
    the board was hit."""
    t_board = (BOARD_Z - origin[2]) / dirs[..., 2]
    bx, by = origin[0] + t_board * dirs[..., 0], origin[1] + t_board * dirs[..., 1]
    x0, x1, y0, y1 = BOARD_XY
    on_board = (bx >= x0) & (bx <= x1) & (by >= y0) & (by <= y1)
    t_wall = (WALL_Z - origin[2]) / dirs[..., 2]
    t = np.where(on_board, t_board, t_wall)
    return [origin[i] + t * dirs[..., i] for i in range(3)] + [on_board]


def shade(tex, X, Y, on_board):
    """Texture lookup (bilinear) at the scene points; the board has a texture of its own."""
    off = TEX_SIZE / 2
    mx = (X * TEXELS_PER_M + off).astype(np.float32)
    my = (Y * TEXELS_PER_M + off).astype(np.float32)
    wall = cv2.remap(tex[0], mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    board = cv2.remap(tex[1], mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return np.where(on_board, board, wall)


def render_camera(tc, tex, cam, rng):
    """The camera's raw image (its lens distortion), supersampled and finished as the board
    shots are."""
    xn, yn = tc.camera_rays(cam["K"], cam["D"])
    rt = cam["R"].T
    dirs = np.stack([rt[:, 0][i] * xn + rt[:, 1][i] * yn + rt[:, 2][i] for i in range(3)], -1)
    X, Y, _, on_board = trace(-rt @ cam["T"], dirs)
    return tc.finish(shade(tex, X, Y, on_board), rng)


def rectified_dirs(rect, k, s):
    """Rays of rectified camera k's pixels (s samples per side) in camera 0's frame."""
    f, cx, cy = rect["f"], rect["cx"], rect["cy"]
    u = (np.arange(640 * s) + 0.5) / s - 0.5
    v = (np.arange(480 * s) + 0.5) / s - 0.5
    U, V = np.meshgrid((u - cx) / f, (v - cy) / f)
    r = np.stack([U, V, np.ones_like(U)], -1)
    return r @ rect["common"]  # rows: r_common^T r


def check_rig_match(tap, tc, tool, work):
    """A generated 3-camera rig with known poses: raw views rectified and matched through the
    rig file, scored against the exact ground truth, against the same views rendered already
    rectified (--baselines) and against the pair."""
    out = os.path.join(work, "match")
    os.mkdir(out)
    cams = match_cameras()
    tc.W, tc.H = 640, 480
    rect = tool.rig_rectify([dict(M=c["K"], D=c["D"].reshape(1, -1), R=c["R"],
                                  T=c["T"].reshape(3, 1)) for c in cams], 0, (640, 480),
                            (640, 480), 0.0, ["view"] * 3)
    rect["common"] = rect["R"][0] @ cams[0]["R"]  # camera 0's frame -> the common frame
    yml = os.path.join(out, "rig.yml")
    fs = cv2.FileStorage(yml, cv2.FILE_STORAGE_WRITE)
    for key, v in (("rig_cameras", 3), ("reference", 0), ("image_width", 640),
                   ("image_height", 480), ("rectified_width", 640), ("rectified_height", 480)):
        fs.write(key, v)
    fs.write("focal_px", float(rect["f"]))
    fs.write("cy", float(rect["cy"]))
    for k, c in enumerate(cams):
        fs.write(f"cam{k}_M", c["K"])
        fs.write(f"cam{k}_D", c["D"].reshape(1, -1))
        fs.write(f"cam{k}_R", rect["R"][k])
        fs.write(f"cam{k}_P", rect["P"][k])
        fs.write(f"cam{k}_baseline_ratio", float(rect["ratio"][k]))
    fs.release()
    tex = [texture(21), texture(22)]
    rng = np.random.default_rng(3)
    raw, pre = [], []
    for k, c in enumerate(cams):
        raw.append(os.path.join(out, f"raw{k}.png"))
        cv2.imwrite(raw[-1], render_camera(tc, tex, c, rng))
        X, Y, _, on_board = trace(-c["R"].T @ c["T"], rectified_dirs(rect, k, 3))
        pre.append(os.path.join(out, f"rect{k}.png"))
        cv2.imwrite(pre[-1], tc.finish(shade(tex, X, Y, on_board), rng))
    # ground truth of the rectified reference: d = f B_1 / Z, Z along the common optical axis
    X, Y, Z, _ = trace(np.zeros(3), rectified_dirs(rect, 0, 1))
    zc = np.stack([X, Y, Z], -1) @ rect["common"][2]
    gt = rect["f"] * rect["along"][1] / zc
    gt_path = os.path.join(out, "gt.pfm")
    write_pfm(gt_path, gt)
    tap.note(f"rig match scene: ratios {np.round(rect['ratio'], 6).tolist()}, f "
             f"{rect['f']:.1f} px, ground truth {gt.min():.1f} .. {gt.max():.1f} px")
    match = os.path.join(ROOT, BUILD, "stereo-match")
    # without speckle removal, which on the pair removes what the third view fixes (the
    # wrong regions beside occlusions): the comparison below is of the views
    base = [match, "--backend", "cpu", "-d", str(MATCH_D), "--speckle-size", "0"]
    runs = {"rig, 3 views": base + ["--maps", yml] + raw,
            "rig --baselines 1,-1": base + ["--maps", yml, "--baselines", "1,-1"] + raw,
            "pre-rectified, 3 views": base + ["--baselines", "1,-1"] + pre,
            "pre-rectified, pair": base + pre[:2]}
    pair_maps = os.path.join(out, "pair.maps")
    r = run([CALIB_MAPS, yml, pair_maps])
    pair_file = os.path.join(out, "pair-0-1.maps")
    runs["rig, pair (pair map file 0-1)"] = base + ["--maps", pair_file] + raw[:2]
    score, outs = {}, {}
    for i, (label, cmd) in enumerate(runs.items()):
        disp = os.path.join(out, f"d{i}.pfm")
        r = run(cmd + [disp])
        outs[label] = r
        ev = run([os.path.join(ROOT, BUILD, "stereo-eval"), disp, gt_path])
        m = dict(re.findall(r"(\w+)=([-\d.]+)", ev.stdout))
        score[label] = (float(m["bad2"]), float(m["density"])) if r.returncode == 0 and \
            "bad2" in m else None
        tap.note(f"{label}: " + (f"bad-2 {score[label][0]:.2f} %, density "
                                 f"{score[label][1]:.1f} %" if score[label] else
                                 f"failed: {r.stderr.strip()} {ev.stderr.strip()}"))
    rig3, given = score["rig, 3 views"], score["rig --baselines 1,-1"]
    pre3, pair = score["pre-rectified, 3 views"], score["rig, pair (pair map file 0-1)"]
    summary = outs["rig, 3 views"].stdout
    tap.ok(rig3 is not None and "3 views (baselines 1,-1; sides)" in summary and
           "rig " + yml + ": cameras 0,1,2" in summary and "taken in 16ths" in summary,
           "rig match: --maps RIG with 3 raw images runs, takes the baselines 1,-1 from the rig "
           "and says so", summary, outs["rig, 3 views"].stderr)
    if None in (rig3, given, pre3, pair):
        tap.ok(False, "rig match: every run scored", *[o.stderr for o in outs.values()])
        return
    same = open(os.path.join(out, "d0.pfm"), "rb").read() == \
        open(os.path.join(out, "d1.pfm"), "rb").read()
    tap.ok(same, "rig match: --baselines 1,-1 equal to the rig's gives the same bytes")
    tap.ok(rig3[0] < MATCH_BAD2_MAX and abs(rig3[0] - pre3[0]) < MATCH_VS_PRE,
           f"rig match: 3 views through the rig bad-2 {rig3[0]:.2f} % < {MATCH_BAD2_MAX} %, "
           f"within {MATCH_VS_PRE} point of the views rendered rectified ({pre3[0]:.2f} %)")
    tap.ok(rig3[0] < pair[0],
           f"rig match: 3 views through the rig beat the pair through its pair map file: bad-2 "
           f"{rig3[0]:.2f} % < {pair[0]:.2f} % (pre-rectified pair "
           f"{score['pre-rectified, pair'][0]:.2f} %)")
    check_rig_match_bad(tap, out, yml, raw, pair_file, base)


def write_pfm(path, disp):
    h, w = disp.shape
    with open(path, "wb") as f:
        f.write(f"Pf\n{w} {h}\n-1\n".encode())
        f.write(np.flipud(disp).astype("<f4").tobytes())


def check_rig_match_bad(tap, out, yml, raw, pair_file, base):
    """stereo-match --maps RIG: each bad input one line naming the file and view, exit 1 (2 for
    usage), no output."""
    od = os.path.join(out, "bad")
    os.mkdir(od)
    o = os.path.join(od, "d.pfm")
    two = os.path.join(out, "rig2.yml")  # the rig's first two cameras alone
    text = open(yml).read()
    fs = cv2.FileStorage(yml, cv2.FILE_STORAGE_READ)
    w = cv2.FileStorage(two, cv2.FILE_STORAGE_WRITE)
    for key in ("rig_cameras", "reference", "image_width", "image_height", "rectified_width",
                "rectified_height", "focal_px", "cy"):
        v = fs.getNode(key).real()
        w.write(key, 2 if key == "rig_cameras" else (int(v) if key not in ("focal_px", "cy")
                                                     else v))
    for k in (0, 1):
        for key in ("M", "D", "R", "P"):
            w.write(f"cam{k}_{key}", fs.getNode(f"cam{k}_{key}").mat())
        w.write(f"cam{k}_baseline_ratio", fs.getNode(f"cam{k}_baseline_ratio").real())
    w.release()
    fs.release()
    assert "rig_cameras: 3" in text
    small = os.path.join(out, "small.png")
    cv2.imwrite(small, cv2.imread(raw[2], cv2.IMREAD_GRAYSCALE)[:400, :600])
    expect_failure(tap, "--maps RIG of 2 cameras with 3 images", base + ["--maps", two] + raw +
                   [o], f"--maps {two}: a rig of 2 cameras, but 3 images", od)
    expect_failure(tap, "--maps RIG of 3 cameras with 4 images",
                   base + ["--maps", yml] + raw + [raw[1], o],
                   f"--maps {yml}: a rig of 3 cameras, but 4 images", od)
    expect_failure(tap, "--maps a pair map file with 3 images",
                   base + ["--maps", pair_file] + raw + [o],
                   f"--maps {pair_file}: a pair map file", od)
    expect_failure(tap, "--maps RIG: a view of another size", base + ["--maps", yml] + raw[:2] +
                   [small, o], f"view 2 {small} is 600x400, but --maps {yml} maps camera 2", od)
    expect_failure(tap, "--maps RIG: --baselines other than the rig's",
                   base + ["--maps", yml, "--baselines", "1,-0.5"] + raw + [o],
                   f"view 2 ({raw[2]}) has -0.5, but --maps {yml} puts its camera 2 at -1", od)
    expect_failure(tap, "--maps RIG: a pair with a rig of 3 cameras",
                   base + ["--maps", yml] + raw[:2] + [o], "a rig file of 3 cameras", od)


# --- bad inputs ------------------------------------------------------------------------------

def expect_failure(tap, name, cmd, must_name, out_dir, status=1):
    before = sorted(os.listdir(out_dir))
    r = run(cmd)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    after = sorted(os.listdir(out_dir))
    tap.ok(r.returncode == status and len(lines) == 1 and must_name in lines[0] and
           after == before,
           f"bad input: {name} -> exit {r.returncode}: {lines[0] if lines else '(no message)'}",
           f"want exit {status}, one line naming '{must_name}', no output ({before} -> {after})",
           r.stdout, r.stderr)


def check_bad_inputs(tap, work, gen):
    out = os.path.join(work, "bad-out")
    os.mkdir(out)
    bad = os.path.join(work, "bad-in")
    os.mkdir(bad)
    v = [os.path.join(gen, f"cam{k}", "shot*.png") for k in range(4)]
    # fewer images in one view; a view of board-less images; a view of another size
    os.mkdir(os.path.join(bad, "short"))
    for n in range(1, 12):
        shutil.copy(os.path.join(gen, "cam1", f"shot{n:02d}.png"), os.path.join(bad, "short"))
    os.mkdir(os.path.join(bad, "blank"))
    os.mkdir(os.path.join(bad, "small"))
    for n in range(1, 13):
        cv2.imwrite(os.path.join(bad, "blank", f"shot{n:02d}.png"),
                    np.full((480, 640), 128, np.uint8))
        img = cv2.imread(os.path.join(gen, "cam1", f"shot{n:02d}.png"), cv2.IMREAD_GRAYSCALE)
        cv2.imwrite(os.path.join(bad, "small", f"shot{n:02d}.png"), img[:400, :600])
    base = [sys.executable, TOOL, "--board", "9x6", "--square", "0.025", "--out",
            os.path.join(out, "rig.yml"), "--maps", os.path.join(out, "rig.maps")]

    def views(*globs):
        return [a for g in globs for a in ("--view", g)]

    expect_failure(tap, "one --view", base + views(v[0]), "--view", out, 2)
    expect_failure(tap, "--reference 3 of 3 views", base + views(*v[:3]) + ["--reference", "3"],
                   "--reference 3", out, 2)
    expect_failure(tap, "--reference without --view",
                   base + ["--left", v[0], "--right", v[1], "--reference", "1"], "--reference",
                   out, 2)
    expect_failure(tap, "--view with --left", base + views(*v[:2]) + ["--left", v[2]], "--view",
                   out, 2)
    expect_failure(tap, "--view with --drop-outliers", base + views(*v[:2]) + ["--drop-outliers"],
                   "--drop-outliers", out, 2)
    short = os.path.join(bad, "short", "shot*.png")
    expect_failure(tap, "a view with fewer images", base + views(v[0], v[2], short),
                   f"view 2 ({short}): 11 images", out)
    nomatch = os.path.join(bad, "none", "*.png")
    expect_failure(tap, "a view matching no file", base + views(v[0], nomatch),
                   f"view 1 ({nomatch}): no file matches", out)
    blank = os.path.join(bad, "blank", "shot*.png")
    expect_failure(tap, "a view where the board is never found", base + views(v[0], v[1], blank),
                   f"view 2 ({blank}): board 9x6 not found in any of its 12 images", out)
    small = os.path.join(bad, "small", "shot*.png")
    expect_failure(tap, "a view of another image size", base + views(v[0], small),
                   "(view 1), but", out)
    expect_failure(tap, "the first other view left of the reference", base + views(v[0], v[3]),
                   "view 1 (" + v[3] + "): the first view after the reference lies to the left",
                   out)
    expect_failure(tap, "a view given twice", base + views(v[0], v[1], v[0]),
                   "matched by view 0", out)
    # outputs refused before any work (exit 2): an input image, a pair map file named as --out
    image = os.path.join(gen, "cam1", "shot03.png")
    expect_failure(tap, "--out names an input image",
                   [a if a != os.path.join(out, "rig.yml") else image for a in base] +
                   views(v[0], v[1]), f"--out '{image}' is the same file as --view 1", out, 2)
    clash = os.path.join(out, "rig-0-1.maps")
    expect_failure(tap, "--out names a pair map file of --maps",
                   [a if a != os.path.join(out, "rig.yml") else clash for a in base] +
                   views(v[0], v[1]), f"--maps (views 0, 1) '{clash}' is the same file as --out",
                   out, 2)


def main():
    global cv2, np
    tap = Tap()
    try:
        import cv2
        import numpy as np
    except ImportError:
        tap.skip("rig calibration tests", "python3-opencv / numpy missing (run ./setup.sh)")
        print(f"1..{tap.n}")
        return 0
    if not os.access(CALIB_MAPS, os.X_OK):
        print(f"Bail out! {CALIB_MAPS} not built")
        return 1
    tool = load("stereo_calibrate", TOOL)
    tc = load("test_calibrate", os.path.join(ROOT, "tests", "test_calibrate.py"))
    tc.cv2, tc.np = cv2, np  # its main() imports them; its renderer and map decoder need them
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="test_calibrate_rig.")
    try:
        gen = os.path.join(work, "gen")
        os.mkdir(gen)
        generate(tc, gen)
        tap.note(f"generated {len(POSES)} shots x {len(CENTRES)} cameras in "
                 f"{time.time() - t0:.1f} s")
        check_true_rectification(tap, tool, [0, 1, 2])
        check_true_rectification(tap, tool, [0, 1, 2, 3])
        res3 = check_rig(tap, tc, tool, work, gen, [0, 1, 2], 0)
        if res3:
            check_c_side(tap, tc, work, res3)
        res4 = check_rig(tap, tc, tool, work, gen, [0, 1, 2, 3], 0)
        if res4:
            check_c_side(tap, tc, work, res4)
        check_rig(tap, tc, tool, work, gen, [2, 0, 3, 1], 1)
        check_rig_match(tap, tc, tool, work)
        check_real(tap, work)
        check_bad_inputs(tap, work, gen)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.note(f"{time.time() - t0:.1f} s")
    print(f"1..{tap.n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
