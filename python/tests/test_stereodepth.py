# SPDX-License-Identifier: Apache-2.0
"""pytest tests of the stereodepth module (python/stereodepth) against stereo-match.

Run from the checkout root: tests/run test_python (part of `ninja test`), or directly with
PYTHONPATH=python /usr/bin/python3 -m pytest python/tests. $STEREO_BUILD (default build) is
the build folder with stereo-match, stereo-synth and libstereodepth.so; $STEREO_DATA (default
../shared/data) the shared stereo pairs (the cases on them skip when it is absent).

Equality with the CLI is exact: stereo-match writes a .pfm (float32, +inf invalid), the module
returns float32 with NaN there; both must hold the same bits everywhere else.
"""
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("STEREO_BUILD", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
DATA = Path(os.environ.get("STEREO_DATA", ROOT.parent / "shared" / "data"))
if not DATA.is_absolute():
    DATA = ROOT / DATA
MATCH, SYNTH = BUILD / "stereo-match", BUILD / "stereo-synth"
os.environ.setdefault("STEREODEPTH_LIB", str(BUILD / "libstereodepth.so"))
sys.path.insert(0, str(ROOT / "python"))
import stereodepth as sd  # noqa: E402

cv2 = pytest.importorskip("cv2")


def read_pfm(path):
    """A grey .pfm (Middlebury: "Pf", W H, negative scale = little-endian, bottom row first)."""
    with open(path, "rb") as f:
        assert f.readline().strip() == b"Pf"
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), dtype="<f4" if scale < 0 else ">f4")
    return data.reshape(h, w)[::-1].astype(np.float32)


def cli(*args, expect=0):
    r = subprocess.run([str(MATCH), "-q", *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == expect, r.stderr
    return r


def cli_disparity(tmp_path, left, right, *args):
    out = tmp_path / "cli.pfm"
    cli(*args, left, right, out)
    d = read_pfm(out)
    return np.where(np.isinf(d), np.float32(np.nan), d)


def assert_same(a, b):
    """Same shape, same NaNs, and the same float32 bits elsewhere."""
    assert a.dtype == np.float32 and b.dtype == np.float32
    assert a.shape == b.shape
    assert np.array_equal(np.isnan(a), np.isnan(b)), "the invalid pixels differ"
    assert np.array_equal(a.view(np.uint32)[~np.isnan(a)], b.view(np.uint32)[~np.isnan(b)])


@pytest.fixture(scope="session")
def scene(tmp_path_factory):
    """The generated scene, 320x240, RGB PNGs (stereo-synth), read as OpenCV's BGR arrays."""
    d = tmp_path_factory.mktemp("scene")
    subprocess.run([str(SYNTH), "--rgb", "--size", "320x240", str(d)], check=True,
                   capture_output=True)
    left, right = cv2.imread(str(d / "left.png")), cv2.imread(str(d / "right.png"))
    assert left.shape == (240, 320, 3) and left.dtype == np.uint8
    return dict(dir=d, left=left, right=right, lp=d / "left.png", rp=d / "right.png")


# (stereo-match arguments, the same as keyword arguments)
OPTION_SETS = [
    ([], {}),
    (["--cost", "census", "--paths", "8", "--no-median", "--speckle-size", "0"],
     dict(cost="census", paths=8, no_median=True, speckle_size=0)),
    (["--cost", "ad", "--paths", "8", "--p1", "8,8,4,4,8,8,8,8", "--p2", "90,90,40,40,90,90,90,90",
      "--p2-adapt", "0", "--uniqueness", "10", "--lr-tolerance", "2", "--min-disparity", "4"],
     dict(cost="ad", paths=8, p1=[8, 8, 4, 4, 8, 8, 8, 8], p2=(90, 90, 40, 40, 90, 90, 90, 90),
          p2_adapt=0, uniqueness=10, lr_tolerance=2, min_disparity=4)),
    (["--path-weights", "2,1,2,1", "--window", "7", "--no-subpixel"],
     dict(path_weights="2,1,2,1", window=7, no_subpixel=True)),
    (["--method", "bm", "--block", "7", "--no-lr"], dict(method="bm", block=np.int64(7),
                                                         no_lr=True)),
    (["--cost", "bt", "--threads", "2"], dict(cost="bt", threads=2)),
    (["--cost", "mi"], dict(cost="mi")),
    (["--speckle-size", "60", "--speckle-diff", "8", "--fill"],
     dict(speckle_size=60, speckle_diff=8, fill=True)),
    (["--speckle-size", "200", "--temporal", "--temporal-alpha", "4", "--temporal-delta", "32",
      "--temporal-persist", "0"],
     dict(speckle_size=200, temporal=True, temporal_alpha=4, temporal_delta=32,
          temporal_persist=0)),
]


@pytest.mark.parametrize("args,kwargs", OPTION_SETS, ids=[" ".join(a) or "defaults"
                                                           for a, _ in OPTION_SETS])
def test_generated_scene_equals_cli(scene, tmp_path, args, kwargs):
    ref = cli_disparity(tmp_path, scene["lp"], scene["rp"], "-d", 32, "--backend", "cpu", *args)
    got = sd.match(scene["left"], scene["right"], disparities=32, backend="cpu", **kwargs)
    assert_same(got, ref)
    assert np.isfinite(got).mean() > 0.5  # a real result, not all invalid


SHARED_PAIRS = [("middlebury2003/teddy", "im2.png", "im6.png", 64),
                ("middlebury2001/tsukuba", "scene1.row3.col3.ppm", "scene1.row3.col4.ppm", 16)]


@pytest.mark.parametrize("folder,lname,rname,ndisp", SHARED_PAIRS,
                         ids=[p[0] for p in SHARED_PAIRS])
def test_shared_pair_equals_cli(tmp_path, folder, lname, rname, ndisp):
    lp, rp = DATA / folder / lname, DATA / folder / rname
    if not lp.is_file() or not rp.is_file():
        pytest.skip(f"{lp} not found (shared data absent)")
    ref = cli_disparity(tmp_path, lp, rp, "-d", ndisp, "--cost", "census")
    left, right = cv2.imread(str(lp)), cv2.imread(str(rp))
    assert_same(sd.match(left, right, disparities=ndisp, cost="census"), ref)
    # the stage's grey conversion of the colour pair is not OpenCV's: grey inputs give another
    # result, and the module must not have converted to grey on the way
    grey = sd.match(cv2.cvtColor(left, cv2.COLOR_BGR2GRAY), cv2.cvtColor(right, cv2.COLOR_BGR2GRAY),
                    disparities=ndisp, cost="census")
    assert np.isfinite(grey).mean() > 0.5


def test_grey_and_mixed_inputs_equal_cli(scene, tmp_path):
    gl = cv2.cvtColor(scene["left"], cv2.COLOR_BGR2GRAY)
    cv2.imwrite(str(tmp_path / "gl.png"), gl)
    ref = cli_disparity(tmp_path, tmp_path / "gl.png", scene["rp"], "-d", 32)
    assert_same(sd.match(gl, scene["right"], disparities=32), ref)            # grey + colour
    assert_same(sd.match(gl[:, :, None], scene["right"], disparities=32), ref)  # HxWx1


def test_any_strides(scene):
    left, right = scene["left"], scene["right"]
    ref = sd.match(left, right, disparities=32)
    h, w = left.shape[:2]
    big = np.zeros((h + 10, w + 30, 3), np.uint8)   # a view with padding (pitch > width * 3)
    big[5:5 + h, 7:7 + w] = left
    assert_same(sd.match(big[5:5 + h, 7:7 + w], right, disparities=32), ref)
    assert_same(sd.match(np.asfortranarray(left), right, disparities=32), ref)
    flipped = np.ascontiguousarray(left[::-1])[::-1]   # negative row stride
    assert flipped.strides[0] < 0
    assert_same(sd.match(flipped, right, disparities=32), ref)
    bgra = np.dstack([left, np.full((h, w), 255, np.uint8)])   # a BGRA frame's BGR part
    assert_same(sd.match(bgra[:, :, :3], right, disparities=32), ref)
    grey = cv2.cvtColor(left, cv2.COLOR_BGR2GRAY)
    gref = sd.match(grey, cv2.cvtColor(right, cv2.COLOR_BGR2GRAY), disparities=32)
    wide = np.zeros((h, 2 * w), np.uint8)
    wide[:, ::2] = grey                                       # pixel stride 2: copied
    assert_same(sd.match(wide[:, ::2], cv2.cvtColor(right, cv2.COLOR_BGR2GRAY),
                         disparities=32), gref)
    # the inputs are left as they were
    assert np.array_equal(big[5:5 + h, 7:7 + w], left)


def test_matcher_reuses_its_stage(scene, tmp_path):
    left, right = scene["left"], scene["right"]
    swapped = (right[:, ::-1].copy(), left[:, ::-1].copy())  # another pair of the same size
    with sd.Matcher(320, 240, disparities=32, cost="census") as m:
        assert m.shape == (240, 320) and m.input_size == (320, 240) and m.backend == "cpu"
        a = m.compute(left, right)
        b = m.compute(*swapped)
        c = m.compute(left, right)
    assert m.closed
    assert_same(a, sd.match(left, right, disparities=32, cost="census"))
    assert_same(b, sd.match(*swapped, disparities=32, cost="census"))
    assert_same(a, c)
    assert not np.array_equal(np.isnan(a), np.isnan(b))  # the second pair really was matched
    assert not np.shares_memory(a, c)  # each call returns its own array


def test_matcher_temporal_equals_cli_sequence(tmp_path):
    """temporal=True: a Matcher carries the filter's state from pair to pair, as stereo-match
    does through a sequence (three frames of the moving generated scene)."""
    seq = tmp_path / "seq"
    seq.mkdir()
    for k in range(3):
        frame = tmp_path / f"f{k}"
        subprocess.run([str(SYNTH), "--size", "160x120", "--t", str(0.5 + k / 15), str(frame)],
                       check=True, capture_output=True)
        for side in ("left", "right"):
            shutil.copy(frame / f"{side}.png", seq / f"{side}_{k:04d}.png")
    opts = ["--temporal", "--temporal-alpha", "3", "--temporal-persist", "2", "--speckle-size",
            "30"]
    cli("-d", 32, "--backend", "cpu", *opts, seq / "left_%04d.png", seq / "right_%04d.png",
        seq / "d_%04d.pfm")
    with sd.Matcher(160, 120, disparities=32, backend="cpu", temporal=True, temporal_alpha=3,
                    temporal_persist=2, speckle_size=30) as m:
        for k in range(3):
            got = m.compute(cv2.imread(str(seq / f"left_{k:04d}.png")),
                            cv2.imread(str(seq / f"right_{k:04d}.png")))
            ref = read_pfm(seq / f"d_{k:04d}.pfm")
            assert_same(got, np.where(np.isinf(ref), np.float32(np.nan), ref))
    first = sd.match(cv2.imread(str(seq / "left_0002.png")), cv2.imread(str(seq / "right_0002.png")),
                     disparities=32, backend="cpu", speckle_size=30)
    assert not np.array_equal(np.nan_to_num(first), np.nan_to_num(got))  # the state did count


def test_matcher_lock_across_threads(scene):
    left, right = scene["left"], scene["right"]
    ref = sd.match(left, right, disparities=32)
    m = sd.Matcher(320, 240, disparities=32, threads=1)
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                results.append(m.compute(left, right))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 9
    for r in results:
        assert_same(r, ref)
    # close while another thread computes: that compute finishes or says closed, no crash
    t = threading.Thread(target=work)
    t.start()
    m.close()
    t.join()
    assert all(isinstance(e, ValueError) and "closed" in str(e) for e in errors)


def cli_error(*args):
    """stereo-match's one-line message for bad arguments, without its prefix and suffix."""
    r = subprocess.run([str(MATCH), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    line = r.stderr.strip()
    assert "\n" not in line
    assert line.startswith("stereo-match: ")
    line = line[len("stereo-match: "):]
    return r.returncode, line[:-len(" (see --help)")] if line.endswith(" (see --help)") else line


# (stereo-match arguments, keyword arguments): both refused with the same message
BAD_OPTIONS = [
    (["-d", "100"], dict(disparities=100)),
    (["-d", "528"], dict(disparities=528)),
    (["-d", "abc"], dict(disparities="abc")),
    (["-d", "320"], dict(disparities=320)),   # not below the width
    (["--cost", "sad"], dict(cost="sad")),
    (["--method", "sgbm"], dict(method="sgbm")),
    (["--backend", "gpu"], dict(backend="gpu")),
    (["--paths", "6"], dict(paths=6)),
    (["--window", "8"], dict(window=8)),
    (["--block", "33"], dict(block=33)),
    (["--p1", "0"], dict(p1=0)),
    (["--p1", "8,8,8"], dict(p1=[8, 8, 8])),
    (["--p1", "10", "--p2", "10"], dict(p1=10, p2=10)),
    (["--paths", "4", "--p1", "8,x,8,8"], dict(paths=4, p1="8,x,8,8")),
    (["--paths", "4", "--p1", "8,8,30,8", "--p2", "90,90,20,90"],
     dict(paths=4, p1=[8, 8, 30, 8], p2=[90, 90, 20, 90])),
    (["--path-weights", "0,0,0,0,0,0,0,0"], dict(path_weights=[0] * 8)),
    (["--path-weights", "44,44,44,44,44,44,44,44"], dict(path_weights=[44] * 8)),
    (["--min-disparity", "2040"], dict(min_disparity=2040)),
    (["--uniqueness", "100"], dict(uniqueness=100)),
    (["--p1", "24.5"], dict(p1=24.5)),
    (["--threads", "-1"], dict(threads=-1)),
]


@pytest.mark.parametrize("args,kwargs", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_bad_options_raise_the_cli_message(scene, tmp_path, args, kwargs):
    status, message = cli_error(*args, scene["lp"], scene["rp"], tmp_path / "o.pfm")
    assert status == 2
    with pytest.raises(ValueError) as e:
        sd.match(scene["left"], scene["right"], **kwargs)
    # the same message, each flag named as the keyword argument (--p2 -> p2, --min-disparity ->
    # min_disparity)
    assert str(e.value) == re.sub(r"--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"),
                                  message)
    assert "--" not in str(e.value)


def test_no_cuda_device_is_a_runtime_error(scene, tmp_path):
    if "cuda" in sd.backends():
        pytest.skip("built with CUDA: whether a device is present decides")
    status, message = cli_error("--backend", "cuda", scene["lp"], scene["rp"],
                                tmp_path / "o.pfm")
    assert status == 1
    with pytest.raises(RuntimeError) as e:
        sd.Matcher(320, 240, backend="cuda")
    # stereo-match's line, with the option named as the keyword argument (backend, not
    # --backend), as the module names every option
    assert str(e.value) == message.replace("--backend", "backend", 1)


@pytest.mark.parametrize("kwargs,text", [
    (dict(foo=1), "unknown option 'foo'"),
    (dict(min_disparity=True), "min_disparity: needs a value, not True"),
    (dict(no_lr=3), "no_lr takes no value"),
    (dict(no_lr="yes"), "no_lr takes no value"),
    (dict(cost=object()), "cost: <object"),
    (dict(p2_adapt=[]), "p2_adapt: '' is not"),
    (dict(subpixel="no"), "subpixel: True or False, not 'no'"),
    (dict(lr=False, no_lr=True), "give lr or no_lr, not both"),
    (dict(disparities="auto"), "disparities: 'auto' measures a pair"),
])
def test_python_side_option_errors(scene, kwargs, text):
    with pytest.raises(ValueError) as e:
        sd.Matcher(320, 240, **kwargs)
    assert text in str(e.value)


def test_positive_flag_spellings(scene):
    """subpixel=False, lr=False, median=False: the same as the no_* flags; True the default."""
    for pos, neg in (("subpixel", "no_subpixel"), ("lr", "no_lr"), ("median", "no_median")):
        assert_same(sd.match(scene["left"], scene["right"], disparities=32, **{pos: False}),
                    sd.match(scene["left"], scene["right"], disparities=32, **{neg: True}))
        assert_same(sd.match(scene["left"], scene["right"], disparities=32, **{pos: True}),
                    sd.match(scene["left"], scene["right"], disparities=32))
    assert {"subpixel", "lr", "median", "maps"} <= set(sd.option_names())


def test_flags_false_and_none_are_the_defaults(scene):
    ref = sd.match(scene["left"], scene["right"], disparities=32)
    got = sd.match(scene["left"], scene["right"], disparities=32, no_lr=False, no_median=None,
                   cost=None, maps=None)
    assert_same(got, ref)


@pytest.mark.parametrize("make,text", [
    (lambda l: l.astype(np.float32), "dtype float32, expected uint8"),
    (lambda l: l.astype(np.uint16), "dtype uint16"),
    (lambda l: l[:, :, :2], "shape (240, 320, 2)"),
    (lambda l: l[None], "shape (1, 240, 320, 3)"),
    (lambda l: l[:, :, 0].ravel(), "shape (76800,)"),
    (lambda l: l[:, :0], "an empty image"),
    (lambda l: l.tolist(), "a NumPy array, not list"),
    (lambda l: l[:200], "left is 320x200 but right is 320x240"),
])
def test_bad_images_raise_value_error(scene, make, text):
    with pytest.raises(ValueError) as e:
        sd.match(make(scene["left"]), scene["right"], disparities=32)
    assert text in str(e.value)


def test_matcher_misuse(scene):
    left, right = scene["left"], scene["right"]
    with pytest.raises(ValueError, match="images of 320x240 for a matcher of 160x240"):
        sd.Matcher(160, 240, disparities=32).compute(left, right)
    for w, h, text in [(0, 240, "each side must be 1..8192"), (320, 9000, "1..8192"),
                       ("320", 240, "width: '320' is not an integer"),
                       (True, 240, "width: True is not an integer"),
                       (320.0, 240, "width: 320.0 is not an integer")]:
        with pytest.raises(ValueError, match=text.replace(".", r"\.").replace("(", r"\(")):
            sd.Matcher(w, h)
    m = sd.Matcher(320, 240, disparities=32)
    m.close()
    m.close()   # twice: harmless
    with pytest.raises(ValueError, match="the matcher is closed"):
        m.compute(left, right)
    assert "closed" in repr(m)
    # the C interface itself refuses a NULL handle instead of crashing
    err = sd.ctypes.create_string_buffer(256)
    out = np.empty((240, 320), np.float32)
    g = np.zeros((240, 320), np.uint8)
    rc = sd._lib.sd_matcher_compute(None, g.ctypes.data, 320, 1, g.ctypes.data, 320, 1, 320,
                                    240, out.ctypes.data, out.size, err, 256)
    assert rc == 1 and err.value == b"the matcher is closed"
    sd._lib.sd_matcher_destroy(None)
    assert sd._lib.sd_matcher_backend(None) == b""
    # and a short pitch or a wrong output size
    m = sd.Matcher(320, 240, disparities=32)
    rc = sd._lib.sd_matcher_compute(m._handle, g.ctypes.data, 100, 1, g.ctypes.data, 320, 1,
                                    320, 240, out.ctypes.data, out.size, err, 256)
    assert rc == 1 and b"row pitch 100 is below 320" in err.value
    rc = sd._lib.sd_matcher_compute(m._handle, g.ctypes.data, 320, 1, g.ctypes.data, 320, 1,
                                    320, 240, out.ctypes.data, out.size - 1, err, 256)
    assert rc == 1 and b"output of 76799 values" in err.value
    m.close()


def write_calibration(path, size=(320, 240), baseline=0.1, zero_disparity=True):
    """A small OpenCV stereo calibration (cv2.stereoRectify) as stereo-calibrate writes it."""
    w, h = size
    M1 = np.array([[300.0, 0, 158.0], [0, 301.0, 121.0], [0, 0, 1]])
    M2 = np.array([[302.0, 0, 161.0], [0, 300.0, 119.0], [0, 0, 1]])
    D1 = np.array([[-0.05, 0.01, 0.0, 0.0, 0.0]])
    D2 = np.array([[-0.04, 0.01, 0.0, 0.0, 0.0]])
    R, _ = cv2.Rodrigues(np.array([0.0, 0.01, 0.002]))
    T = np.array([[-baseline], [0.001], [0.0]])
    R1, R2, P1, P2, Q, _, _ = cv2.stereoRectify(
        M1, D1, M2, D2, size, R, T, alpha=0,
        flags=cv2.CALIB_ZERO_DISPARITY if zero_disparity else 0)
    fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
    fs.write("image_width", w)
    fs.write("image_height", h)
    for k, v in dict(M1=M1, D1=D1, M2=M2, D2=D2, R=R, T=T, R1=R1, R2=R2, P1=P1, P2=P2,
                     Q=Q).items():
        fs.write(k, v)
    fs.release()
    return dict(P1=P1, T=T)


def test_sizes_and_strings_are_never_truncated(tmp_path):
    """A size beyond the library's C int raises OverflowError (ctypes would wrap 2**32 + 64 to
    64); a NUL inside an option, maps or a calibration path raises ValueError (the C string
    would end there: cost='rank\\0census' would be rank)."""
    for w, h, what in [(2**32 + 64, 48, "width"), (64, 2**32 + 48, "height"),
                       (np.int64(2**31), 48, "width"), (-2**31 - 1, 48, "width")]:
        with pytest.raises(OverflowError, match=f"{what}: .* does not fit"):
            sd.Matcher(w, h)
    for kwargs in [dict(cost="rank\0census"), dict(disparities="64\0"),
                   dict(maps=str(tmp_path / "a\0b.yml")), dict(maps=b"x\0y")]:
        key = next(iter(kwargs))
        with pytest.raises(ValueError, match=f"{key}: .* contains a NUL character"):
            sd.Matcher(64, 48, **kwargs)
    with pytest.raises(ValueError, match="contains a NUL character"):
        sd.calibration("rig.yml\0ignored")


def test_maps_and_calibration_equal_cli(scene, tmp_path):
    yml = tmp_path / "rig.yml"
    truth = write_calibration(yml)
    ref = cli_disparity(tmp_path, scene["lp"], scene["rp"], "-d", 32, "--maps", yml)
    with sd.Matcher(320, 240, disparities=32, maps=yml) as m:
        got = m.compute(scene["left"], scene["right"])
    assert_same(got, ref)
    c = sd.calibration(yml)
    P1 = truth["P1"]
    assert (c.width, c.height) == (320, 240)
    assert c.f == pytest.approx(P1[0, 0], rel=1e-12)
    assert (c.cx, c.cy) == (pytest.approx(P1[0, 2], rel=1e-12), pytest.approx(P1[1, 2], rel=1e-12))
    assert c.B == pytest.approx(np.linalg.norm(truth["T"]), rel=1e-12)
    with pytest.raises(RuntimeError, match="nothing.yml"):
        sd.calibration(tmp_path / "nothing.yml")
    with pytest.raises(RuntimeError, match="nothing.yml"):
        sd.Matcher(320, 240, maps=str(tmp_path / "nothing.yml"))
    with pytest.raises(RuntimeError, match="640x480|320x240"):
        sd.Matcher(640, 480, maps=yml)   # a calibration for another camera size


def test_other_results_equal_cli(scene, tmp_path):
    """right_disparity(), confidence() and rectified() of the last pair: what stereo-match
    --right and --confidence write, and the inputs in grey (no maps); refused before a compute,
    and the right disparity without the left-right check."""
    right, conf = tmp_path / "right.pfm", tmp_path / "conf.png"
    cli("-d", 32, "--backend", "cpu", "--right", right, "--confidence", conf, scene["lp"],
        scene["rp"], tmp_path / "o.pfm")
    want_right = cv2.imread(str(right), cv2.IMREAD_UNCHANGED)
    want_right[np.isinf(want_right)] = np.nan
    with sd.Matcher(320, 240, disparities=32, backend="cpu") as m:
        with pytest.raises(ValueError, match="no pair computed yet"):
            m.confidence()
        m.compute(scene["left"], scene["right"])
        assert_same(m.right_disparity(), want_right)
        c = m.confidence()
        assert c.dtype == np.uint8 and np.array_equal(c, cv2.imread(str(conf), cv2.IMREAD_UNCHANGED))
        rl, rr = m.rectified()
        for got, bgr in ((rl, scene["left"]), (rr, scene["right"])):  # gpu/grey.h's Y
            b, g, r = (bgr[:, :, i].astype(np.int32) for i in range(3))
            assert got.dtype == np.uint8
            assert np.array_equal(got, ((77 * r + 150 * g + 29 * b + 128) >> 8).astype(np.uint8))
    with sd.Matcher(320, 240, disparities=32, no_lr=True) as m:
        m.compute(scene["left"], scene["right"])
        with pytest.raises(ValueError, match="left-right check is off"):
            m.right_disparity()
    with pytest.raises(ValueError, match="closed"):
        m.confidence()


def test_min_confidence_masks_exactly_the_pixels_below_it(scene, tmp_path):
    """match(min_confidence=N) and Matcher(min_confidence=N): NaN exactly where the pair's
    confidence (what stereo-match --confidence writes) is below N, the other pixels unchanged;
    mask_by_confidence does the same to a map and its confidence."""
    conf_png = tmp_path / "conf.png"
    plain = cli_disparity(tmp_path, scene["lp"], scene["rp"], "-d", 32, "--backend", "cpu",
                          "--confidence", conf_png)
    conf = cv2.imread(str(conf_png), cv2.IMREAD_UNCHANGED)
    assert conf.dtype == np.uint8 and conf.shape == plain.shape
    valid = ~np.isnan(plain)
    assert np.all(conf[~valid] == 0)
    for n in (0, 1, 60, 128, 200, 255):
        want = plain.copy()
        want[conf < n] = np.nan
        if 60 <= n <= 200:  # the threshold masks valid pixels and keeps others
            assert np.any(valid & (conf < n)) and np.any(valid & (conf >= n))
        got = sd.match(scene["left"], scene["right"], disparities=32, backend="cpu",
                       min_confidence=n)
        assert_same(got, want)
        assert np.array_equal(np.isnan(got), ~valid | (conf < n))
        assert_same(sd.mask_by_confidence(plain, conf, n), want)
        with sd.Matcher(320, 240, disparities=32, backend="cpu", min_confidence=n) as m:
            assert m.min_confidence == n
            assert_same(m.compute(scene["left"], scene["right"]), want)
            assert np.array_equal(m.confidence(), conf)  # the map itself is not masked
    assert_same(sd.match(scene["left"], scene["right"], disparities=32, backend="cpu",
                         min_confidence=None), plain)
    assert "min_confidence" in sd.option_names()


@pytest.mark.parametrize("value", [-1, 256, 1.5, True, "10", [3], np.float32(4)])
def test_min_confidence_bad_values(scene, value):
    with pytest.raises(ValueError, match=r"min_confidence: .* is not an integer in 0\.\.255"):
        sd.Matcher(320, 240, min_confidence=value)
    with pytest.raises(ValueError, match="min_confidence"):
        sd.match(scene["left"], scene["right"], disparities=32, min_confidence=value)
    with pytest.raises(ValueError, match="min_confidence"):
        sd.mask_by_confidence(np.zeros((2, 2), np.float32), np.zeros((2, 2), np.uint8), value)


def test_mask_by_confidence_checks_its_arrays():
    d, c = np.ones((2, 3), np.float32), np.full((2, 3), 9, np.uint8)
    with pytest.raises(ValueError, match="confidence: a uint8 array of the disparity's shape"):
        sd.mask_by_confidence(d, c[:, :2], 5)
    with pytest.raises(ValueError, match="confidence: a uint8"):
        sd.mask_by_confidence(d, c.astype(np.int32), 5)
    with pytest.raises(ValueError, match="disparity: a float HxW"):
        sd.mask_by_confidence(c, c, 5)
    out = sd.mask_by_confidence(d, c, 10)
    assert np.all(np.isnan(out)) and np.all(d == 1)  # a copy: the input is left as it was
    assert np.array_equal(sd.mask_by_confidence(d, c, 9), d)


def test_version_and_option_names():
    version = (Path(__file__).resolve().parents[2] / "VERSION").read_text().strip()
    assert sd.__version__ == version
    names = sd.option_names()
    assert names[-4:] == ["maps", "subpixel", "lr", "median"]
    assert "disparities" in names and "no_lr" in names
    with pytest.raises(ValueError, match="maps"):
        sd.Matcher(64, 48, foo=1)


def test_depth_and_points():
    d = np.array([[10.0, 20.0, np.nan], [0.0, -1.0, 2.5]], np.float32)
    f, B, cx, cy = 500.0, 0.12, 1.0, 0.5
    z = sd.depth(d, f, B)
    assert z.dtype == np.float32 and z.shape == d.shape
    np.testing.assert_array_equal(z[0, :2], np.float32([6.0, 3.0]))
    assert z[1, 2] == np.float32(500 * 0.12 / 2.5)
    assert np.isnan(z[0, 2]) and np.isnan(z[1, 0]) and np.isnan(z[1, 1])  # NaN, 0, negative
    p = sd.points(d, f, B, cx, cy)
    assert p.shape == (2, 3, 3) and p.dtype == np.float32
    for y in range(2):
        for x in range(3):
            Z = np.float64(f * B / d[y, x]) if d[y, x] > 0 else np.nan
            want = [(x - cx) * Z / f, (y - cy) * Z / f, Z]
            np.testing.assert_array_equal(p[y, x], np.float32(want))
    for kw, text in [(dict(f=None, B=0.1), "f: a finite number"),
                     (dict(f=500, B=float("nan")), "B: a finite number"),
                     (dict(f=-5, B=0.1), "f: -5 must be positive"),
                     (dict(f="x", B=0.1), "f: a finite number")]:
        with pytest.raises(ValueError, match=text):
            sd.depth(d, **kw)
    # cx, cy default to the image centre, as stereo-match --center
    assert_same(sd.points(d, f, B), sd.points(d, f, B, (3 - 1) / 2, (2 - 1) / 2))
    assert_same(sd.points(d, f, B, cy=0.25), sd.points(d, f, B, 1.0, 0.25))
    with pytest.raises(ValueError, match="cx: a finite number"):
        sd.points(d, f, B, cx="x")
    with pytest.raises(ValueError, match="a float HxW array"):
        sd.depth(np.zeros((2, 3), np.int16), f, B)


def test_depth_from_a_calibration(tmp_path):
    yml = tmp_path / "rig.yml"
    write_calibration(yml)
    c = sd.calibration(yml)
    d = np.full((240, 320), 8.0, np.float32)
    d[0, 0] = np.nan
    assert_same(sd.depth(d, calibration=yml), sd.depth(d, c.f, c.B))
    assert_same(sd.points(d, calibration=c), sd.points(d, c.f, c.B, c.cx, c.cy))
    with pytest.raises(ValueError, match="rectified size is 320x240"):
        sd.depth(d[:100], calibration=yml)
    with pytest.raises(ValueError, match="not both"):
        sd.depth(d, f=1.0, calibration=yml)


def test_depth_as_the_cli_writes_it(scene, tmp_path):
    """calibration() reads what --maps reads for --depth (a YAML, a version 2 map file with the
    camera) and depth() follows the same rule f B / (d + doffs): equal to stereo-match --depth
    .pfm within float32 rounding; a map file without the camera is refused by name."""
    yml = tmp_path / "rig.yml"
    write_calibration(yml, zero_disparity=False)
    maps = tmp_path / "rig.maps"
    r = subprocess.run([str(BUILD / "calib-maps"), str(yml), str(maps)], capture_output=True)
    assert r.returncode == 0, r.stderr
    a, b = sd.calibration(yml), sd.calibration(maps)
    assert a == b
    assert a.doffs != 0  # stereoRectify without CALIB_ZERO_DISPARITY: the principal points differ
    out, dout = tmp_path / "d.pfm", tmp_path / "z.pfm"
    cli("-d", 32, "--maps", maps, "--depth", dout, scene["lp"], scene["rp"], out)
    d = read_pfm(out)
    d = np.where(np.isinf(d), np.float32(np.nan), d)
    z_cli = read_pfm(dout)
    z = sd.depth(d, calibration=maps)
    assert np.array_equal(np.isnan(z), np.isinf(z_cli) | np.isnan(d))
    ok = ~np.isnan(z)
    assert ok.sum() > 1000
    np.testing.assert_allclose(z[ok], z_cli[ok], rtol=2e-7)
    bare = tmp_path / "bare.maps"
    shutil.copy(ROOT / "tests/fuzz/corpus/mapfile/seed-2x2-no-camera.maps", bare)
    with pytest.raises(RuntimeError, match="without the camera"):
        sd.calibration(bare)


def test_library_lookup(tmp_path):
    """$STEREODEPTH_LIB wins and, when it names nothing, the import says so (no fallback)."""
    env = dict(os.environ, STEREODEPTH_LIB=str(tmp_path / "missing.so"),
               PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, "-c", "import stereodepth"], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode != 0 and "missing.so" in r.stderr and "ImportError" in r.stderr
    env.pop("STEREODEPTH_LIB")   # then the checkout's build/
    if not (ROOT / "build" / "libstereodepth.so").is_file():
        pytest.skip("no build/libstereodepth.so in the checkout (STEREO_BUILD elsewhere)")
    r = subprocess.run([sys.executable, "-c", "import stereodepth; print(stereodepth.library_path())"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(ROOT / "build" / "libstereodepth.so")


def test_pip_install_in_a_venv(scene, tmp_path):
    """pip install ./python into a fresh venv (offline: Debian's numpy and setuptools through
    --system-site-packages, --no-build-isolation), then the installed module, away from the
    checkout, finds its own copy of the library and matches as the checkout's does."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=60)
    py = venv / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-build-isolation",
                        "--no-index", str(ROOT / "python")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    np.save(tmp_path / "l.npy", scene["left"])
    np.save(tmp_path / "r.npy", scene["right"])
    code = ("import numpy as np, stereodepth as s; print(s.library_path()); "
            "np.save('d.npy', s.match(np.load('l.npy'), np.load('r.npy'), disparities=32))")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STEREODEPTH_LIB")}
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(venv)), r.stdout
    assert_same(np.load(tmp_path / "d.npy"), sd.match(scene["left"], scene["right"],
                                                      disparities=32))


def test_example_depth_plot(scene, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "plot.png"
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, str(ROOT / "python" / "examples" / "depth_plot.py"),
                        str(scene["lp"]), str(scene["rp"]), str(out), "-d", "32", "--focal",
                        "300", "--baseline", "0.1"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    img = cv2.imread(str(out))
    assert img is not None and img.shape[0] > 200 and img.shape[1] > 300
    assert img.std() > 10   # a figure, not a blank page
    r = subprocess.run([sys.executable, str(ROOT / "python" / "examples" / "depth_plot.py"),
                        str(tmp_path / "none.png"), str(scene["rp"]), str(out)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0 and "none.png" in r.stderr and "Traceback" not in r.stderr


def test_auto_disparities_as_stereo_match(scene, tmp_path):
    """disparities="auto": the range stereo-match -d auto picks, and the same disparity."""
    r = sd.auto_disparities(scene["left"], scene["right"])
    assert r.disparities % 16 == 0 and 16 <= r.disparities < scene["left"].shape[1]
    assert r.top > 0 and not r.clamped
    out = tmp_path / "a.pfm"
    run = subprocess.run([str(MATCH), "-d", "auto", "--backend", "cpu", str(scene["lp"]),
                          str(scene["rp"]), str(out)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"--disparities auto: {r.disparities} (the scene reaches {r.top} px" in run.stderr
    d = read_pfm(out)
    assert_same(sd.match(scene["left"], scene["right"], disparities="auto", backend="cpu"),
                np.where(np.isinf(d), np.float32(np.nan), d))
    with pytest.raises(ValueError, match="too narrow"):
        sd.auto_disparities(scene["left"][:, :40], scene["right"][:, :40])


def test_auto_disparities_with_a_band(scene):
    """band=W with disparities="auto": the range chosen is one the band takes (above W), though
    the 320x240 scene needs 32."""
    assert sd.auto_disparities(scene["left"], scene["right"]).disparities == 32
    r = sd.auto_disparities(scene["left"], scene["right"], band=32)
    assert r.disparities == 48 and not r.clamped
    d = sd.match(scene["left"], scene["right"], disparities="auto", band=32, backend="cpu")
    assert d.shape == (240, 320) and np.isfinite(d).mean() > 0.5
