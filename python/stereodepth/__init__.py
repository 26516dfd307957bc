# SPDX-License-Identifier: Apache-2.0
"""stereodepth: dense stereo disparity from NumPy arrays, over the project's C library.

    import cv2, stereodepth
    left, right = cv2.imread("left.png"), cv2.imread("right.png")       # BGR uint8
    d = stereodepth.match(left, right, disparities=64, cost="census")   # float32, NaN = invalid
    z = stereodepth.depth(d, f=700.0, B=0.12)                           # metres when B is

The options are stereo-match's matching and backend options, each as a keyword argument
(its name with '_' for '-'): stereodepth.options() lists them with their values, defaults and
help, from the one table stereo-match, stereo-live and this module read (help(stereodepth) and
print(stereodepth.options_help()) show it); maps adds a map file, a calibration YAML or
"LEFT,RIGHT" camera_info files (the inputs are rectified first). p1, p2 and path_weights take
an int, a list of one per path, or "24,24,...". Flags take True (False or None: the default);
subpixel=False, lr=False and median=False say the same as no_subpixel=True, no_lr=True and
no_median=True. min_confidence=N (0..255) masks the disparity by its confidence: NaN where the
confidence is below N (mask_by_confidence does it to a map and its confidence). A bad option
raises ValueError with stereo-match's message, naming the keyword argument; the results equal
stereo-match's bit for bit.

The library (libstereodepth.so, python/stereodepth_abi.h) is looked for in this order:
$STEREODEPTH_LIB, this package's folder (pip install ./python copies it there), then
build/libstereodepth.so of the checkout this file lies in (PYTHONPATH=python).
"""
import ctypes
import os
import re
import textwrap
import threading
from collections import namedtuple
from pathlib import Path

import numpy as np

__all__ = ["match", "Matcher", "auto_disparities", "AutoRange", "depth", "points", "calibration",
           "Calibration", "mask_by_confidence", "option_names", "options", "options_help", "Option", "backends",
           "library_path", "__version__"]

_ABI_VERSION = 5  # python/stereodepth_abi.h SD_ABI_VERSION
_SD_OK, _SD_EVALUE, _SD_ERUNTIME = 0, 1, 2
_ERRLEN = 1024


def _library_candidates():
    here = Path(__file__).resolve().parent
    env = os.environ.get("STEREODEPTH_LIB")
    if env:
        return [Path(env)]  # named explicitly: no fallback that would hide a wrong path
    return [here / "libstereodepth.so", here.parent.parent / "build" / "libstereodepth.so"]


def _load():
    tried = []
    for path in _library_candidates():
        if not path.is_file():
            tried.append(str(path))
            continue
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as e:
            raise ImportError(f"stereodepth: cannot load {path}: {e}") from None
        version = lib.sd_abi_version()
        if version != _ABI_VERSION:
            raise ImportError(f"stereodepth: {path} has ABI version {version}, this module "
                              f"needs {_ABI_VERSION}: rebuild it (ninja) or reinstall")
        return lib, path
    raise ImportError("stereodepth: libstereodepth.so not found (tried: " + ", ".join(tried) +
                      "); build it with ninja in the checkout, or set STEREODEPTH_LIB")


_lib, _lib_path = _load()
_c_char_pp = ctypes.POINTER(ctypes.c_char_p)
_lib.sd_option_names.restype = ctypes.c_char_p
_lib.sd_option_names.argtypes = []
_lib.sd_option_field.restype = ctypes.c_char_p
_lib.sd_option_field.argtypes = [ctypes.c_int, ctypes.c_int]
_lib.sd_backends.restype = ctypes.c_char_p
_lib.sd_backends.argtypes = []
_lib.sd_matcher_create.restype = ctypes.c_int
_lib.sd_matcher_create.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, _c_char_pp,
                                   _c_char_pp, ctypes.c_char_p,
                                   ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                   ctypes.c_size_t]
_lib.sd_matcher_compute.restype = ctypes.c_int
_lib.sd_matcher_compute.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                    ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                                    ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                    ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
_lib.sd_auto_disparities.restype = ctypes.c_int
_lib.sd_auto_disparities.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, _c_char_pp,
                                     _c_char_pp, ctypes.c_char_p, ctypes.c_void_p,
                                     ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p,
                                     ctypes.c_size_t, ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_int * 4), ctypes.c_char_p,
                                     ctypes.c_size_t]
_lib.sd_matcher_shape.restype = ctypes.c_int
_lib.sd_matcher_shape.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_int)] * 4
_lib.sd_matcher_backend.restype = ctypes.c_char_p
_lib.sd_matcher_backend.argtypes = [ctypes.c_void_p]
_lib.sd_matcher_note.restype = ctypes.c_char_p
_lib.sd_matcher_note.argtypes = [ctypes.c_void_p]
_lib.sd_matcher_destroy.restype = None
_lib.sd_matcher_destroy.argtypes = [ctypes.c_void_p]
_lib.sd_version.restype = ctypes.c_char_p
_lib.sd_version.argtypes = []
_lib.sd_commit.restype = ctypes.c_char_p
_lib.sd_commit.argtypes = []
_lib.sd_matcher_result.restype = ctypes.c_int
_lib.sd_matcher_result.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_char_p, ctypes.c_size_t]
_SD_RIGHT, _SD_CONFIDENCE, _SD_RECT_LEFT, _SD_RECT_RIGHT = 0, 1, 2, 3
_lib.sd_calibration.restype = ctypes.c_int
_lib.sd_calibration.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_double * 5),
                                ctypes.POINTER(ctypes.c_int * 2), ctypes.c_char_p,
                                ctypes.c_size_t]

# the library's option table (gpu/stereo_options.c), a row per option in stereo-match --help
# order: python/stereodepth_abi.h SD_OPT_NAME ... SD_OPT_KEY
Option = namedtuple("Option", "kwarg name metavar range default help more key short")
Option.__doc__ = ("A stage option: kwarg (the keyword argument), name (stereo-match's --NAME), "
                  "metavar (its value; None: a flag, True or False), range, default (None for a "
                  "flag: off), help and more (text), key (stereo-live's [stereo] key), short "
                  "(the short flag's letter, or None).")


def _table():
    rows, i = [], 0
    while _lib.sd_option_field(i, 0) is not None:
        f = [_lib.sd_option_field(i, k) for k in range(9)]
        f = [None if v is None else v.decode() for v in f]
        rows.append(Option(kwarg=f[1], name=f[0], metavar=f[2], range=f[3], default=f[4],
                           help=f[5], more=f[6], key=f[7], short=f[8]))
        i += 1
    return rows


_ROWS = _table()
_OPTIONS = {r.name: r.metavar is not None for r in _ROWS}  # CLI name -> takes a value
_KWARGS = {r.name: r.kwarg for r in _ROWS}


__version__ = _lib.sd_version().decode()  # the project's VERSION the library was built from


def library_path():
    """The libstereodepth.so this module loaded."""
    return str(_lib_path)


def backends():
    """The backends built into the library: ["cpu"] or ["cpu", "cuda"]."""
    return _lib.sd_backends().decode().split(",")


def option_names():
    """Every keyword option Matcher and match take, in stereo-match --help order, then
    min_confidence, maps and the positive spellings subpixel, lr and median (False: no_subpixel,
    no_lr, no_median)."""
    return [r.kwarg for r in _ROWS] + ["min_confidence", "maps"] + list(_POSITIVE)


# the keyword arguments beside the table's (Matcher, match and auto_disparities take them)
_EXTRA = [
    Option(kwarg="maps", name="maps", metavar="FILE", range=None, default=None,
           help="rectify both images first: a map file, a calibration YAML or \"LEFT,RIGHT\" "
                "camera_info files (stereo-match --maps, stereo-live --maps)",
           more="the disparity is then of the rectified size", key=None, short=None),
    Option(kwarg="min_confidence", name=None, metavar="N", range="0..255", default="0",
           help="NaN where the pair's confidence is below N",
           more="stereo-match writes the confidence with --confidence FILE, stereo-live masks "
                "by it in ros2://...?min_confidence=N", key=None, short=None),
]

# stereo-match's and stereo-live's options that are no keyword arguments here: where each is
_ELSEWHERE = {
    "colormap": "the colour image's map (stereo-match, stereo-live): match() returns the "
                "disparity; colour it yourself (e.g. cv2.applyColorMap)",
    "color_range": "the colour image's range (stereo-match, stereo-live): match() returns the "
                   "disparity; colour it yourself (e.g. cv2.applyColorMap)",
    "legend": "the colour image's bar (stereo-match, stereo-live): match() returns the "
              "disparity; colour it yourself (e.g. cv2.applyColorMap)",
    "color": "stereo-match's colour image: match() returns the disparity; colour it yourself "
             "(e.g. cv2.applyColorMap)",
    "quiet": "stereo-match's: this module prints nothing",
    "stats_json": "stereo-live's summary: time the calls yourself",
    "confidence": "stereo-match's confidence file: Matcher.confidence() returns the map, "
                  "min_confidence=N masks by it",
    "right": "stereo-match's right-view file: Matcher.right_disparity() returns it",
    "depth": "stereo-match's depth file: depth(disparity, f, B) computes it",
    "ply": "stereo-match's point cloud file: points(disparity, f, B, cx, cy) computes it",
    "focal": "the camera for depth: depth() and points() take f (or calibration=)",
    "baseline": "the camera for depth: depth() and points() take B (or calibration=)",
    "center": "the camera for depth: points() takes cx, cy (or calibration=)",
}


def options():
    """The options as Option tuples (kwarg, name, metavar, range, default, help, more, key,
    short): the stage options in stereo-match --help order, from the table stereo-match and
    stereo-live read (the texts name other options by their keyword arguments), then maps and
    min_confidence (key None: not a [stereo] key). stereo-match's and stereo-live's colour and
    output options are no keyword arguments: options_help() says where each is, and passing
    one raises ValueError saying so."""
    text = lambda t: None if t is None else _kwarg_text(t)
    return [r._replace(range=text(r.range), default=text(r.default), help=text(r.help),
                       more=text(r.more)) for r in _ROWS] + list(_EXTRA)


def options_help():
    """options() as text: a paragraph per keyword argument, "kwarg=VALUE: help: range (default
    ...); more", as stereo-match --help words it."""
    out = []
    for r in options():
        head = r.kwarg + ("=True" if r.metavar is None else "=" + r.metavar)
        body = r.help + (f": {r.range}" if r.range else "") + \
            (f" (default {r.default})" if r.default else "") + (f"; {r.more}" if r.more else "")
        out.append(head + "\n" + textwrap.fill(body, 80, initial_indent="    ",
                                              subsequent_indent="    "))
    out.append(textwrap.fill("Not keyword arguments (stereo-match's and stereo-live's "
                             "options; passing one raises ValueError saying where it is):", 80))
    out += [textwrap.fill(f"{k}: {why}", 80, initial_indent="    ", subsequent_indent="      ")
            for k, why in _ELSEWHERE.items()]
    return "\n".join(out)



def _kwarg(cli):
    return _KWARGS.get(cli, cli.replace("-", "_"))


def _kwarg_text(msg):
    """The library's message (stereo-match's, naming its flags) with each option named as the
    keyword argument: "--p2: 100 must be greater than --p1 200" -> "p2: 100 must be greater
    than p1 200"."""
    return re.sub(r"--([a-z][a-z0-9-]*)",
                  lambda m: _kwarg(m.group(1)) if m.group(1) in _OPTIONS or m.group(1) == "maps"
                  else m.group(0), msg)


def _raise(code, err):
    msg = _kwarg_text(err.value.decode(errors="replace"))
    raise (ValueError if code == _SD_EVALUE else RuntimeError)(msg)


def _option_text(cli, value):
    """A keyword's value as the command-line text stereo-match would get; None: not given."""
    flag = not _OPTIONS[cli]
    if flag:
        if value is True:
            return None, True
        if value is False or value is None:
            return None, False
        raise ValueError(f"{_kwarg(cli)} takes no value: give {_kwarg(cli)}=True "
                         f"(not {value!r})")
    if value is None:
        return None, False
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{_kwarg(cli)}: needs a value, not {value!r}")
    if isinstance(value, (list, tuple, np.ndarray)):
        items = np.asarray(value).ravel().tolist() if isinstance(value, np.ndarray) else value
        return ",".join(str(v) for v in items), True
    if isinstance(value, (int, np.integer)):
        return str(int(value)), True
    if isinstance(value, (str, float, np.floating)):
        return str(value), True
    raise ValueError(f"{_kwarg(cli)}: {value!r} is not a number, a list or a string")


def _c_string(text, what):
    """text (str, bytes or a path) as the NUL-terminated bytes the library reads; a NUL inside
    would end the C string there and cut the value silently, so it is refused."""
    b = os.fsencode(text) if isinstance(text, (os.PathLike, bytes)) else str(text).encode()
    if b"\0" in b:
        raise ValueError(f"{what}: {text!r} contains a NUL character")
    return b


# subpixel=False, lr=False, median=False: the positive spellings of the no_* flags
_POSITIVE = {"subpixel": "no_subpixel", "lr": "no_lr", "median": "no_median"}


def _positive_flags(options):
    """options with subpixel / lr / median (True: the default, False: off) as their no_* flag."""
    out = {}
    for key, value in options.items():
        if key not in _POSITIVE:
            out[key] = value
            continue
        neg = _POSITIVE[key]
        if neg in options:
            raise ValueError(f"give {key} or {neg}, not both")
        if value is None or isinstance(value, (bool, np.bool_)):
            out[neg] = value is not None and not value
        else:
            raise ValueError(f"{key}: True or False, not {value!r}")
    return out


def _split_options(options):
    """(CLI names, values as bytes or None, maps) for the library, in the order given."""
    names, values, maps = [], [], None
    options = _positive_flags(options)
    for key, value in options.items():
        if key == "maps":
            if value is not None:
                maps = _c_string(value, "maps")
            continue
        if key in _ELSEWHERE:
            raise ValueError(f"{key} is not an option of this module: {_ELSEWHERE[key]}")
        cli = key.replace("_", "-")
        if cli not in _OPTIONS or "-" in key:
            raise ValueError(f"unknown option '{key}' (the options are "
                             f"{', '.join(option_names())})")
        text, given = _option_text(cli, value)
        if given:
            names.append(cli.encode())
            values.append(None if text is None else _c_string(text, key))
    return names, values, maps


def _image(a, what):
    """An image as the library takes it: (array, channels), pixels contiguous within rows.
    Grey HxW (or HxWx1) or BGR HxWx3 uint8, any strides; BGR becomes RGB (a copy)."""
    if not isinstance(a, np.ndarray):
        raise ValueError(f"{what}: a NumPy array, not {type(a).__name__}")
    if a.dtype != np.uint8:
        raise ValueError(f"{what}: dtype {a.dtype}, expected uint8 (grey HxW or BGR HxWx3)")
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim == 3 and a.shape[2] == 3:
        a, channels = a[:, :, ::-1], 3  # OpenCV's BGR to the stage's RGB (stereo.h, grey.h)
    elif a.ndim == 2:
        channels = 1
    else:
        raise ValueError(f"{what}: shape {a.shape}, expected HxW (grey) or HxWx3 (BGR)")
    if a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"{what}: an empty image ({a.shape[1]}x{a.shape[0]})")
    rows_ok = a.strides[0] >= a.shape[1] * channels and a.strides[1] == channels and \
        (channels == 1 or a.strides[2] == 1)
    if not rows_ok:
        a = np.ascontiguousarray(a)
    return a, channels


_INT_MIN, _INT_MAX = -2**31, 2**31 - 1   # the library's C int
CONFIDENCE_MAX = 255                     # the confidence map's values are 0..255


def _min_confidence(v):
    """min_confidence as an int 0..255 (None: 0, no masking); ValueError otherwise."""
    if v is None:
        return 0
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or \
            not 0 <= int(v) <= CONFIDENCE_MAX:
        raise ValueError(f"min_confidence: {v!r} is not an integer in 0..{CONFIDENCE_MAX} (the "
                         f"confidence map's values; 0 masks nothing)")
    return int(v)


def mask_by_confidence(disparity, confidence, min_confidence):
    """A copy of disparity (float HxW) with NaN wherever confidence (uint8 HxW, as
    Matcher.confidence() gives it) is below min_confidence (0..255; 0 masks nothing). The
    confidence is 0 where the disparity is already invalid, so any N >= 1 keeps those invalid."""
    n = _min_confidence(min_confidence)
    d = np.asarray(disparity)
    c = np.asarray(confidence)
    if d.ndim != 2 or not np.issubdtype(d.dtype, np.floating):
        raise ValueError(f"disparity: a float HxW array expected, not {d.dtype} {d.shape}")
    if c.dtype != np.uint8 or c.shape != d.shape:
        raise ValueError(f"confidence: a uint8 array of the disparity's shape {d.shape} "
                         f"expected, not {c.dtype} {c.shape}")
    out = d.copy()
    out[c < n] = np.nan
    return out


def _size(v, what):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{what}: {v!r} is not an integer")
    if not _INT_MIN <= int(v) <= _INT_MAX:  # ctypes would wrap it (2**32 + 64 -> 64)
        raise OverflowError(f"{what}: {int(v)} does not fit the library's int "
                            f"({_INT_MIN}..{_INT_MAX})")
    return int(v)


class Matcher:
    """A stage for pairs of width x height images, created once; compute() reuses its buffers.

    Matcher(640, 480, disparities=96, cost="census").compute(left, right) -> float32 HxW
    disparity in pixels (NaN where invalid); with maps, of the rectified size; with
    min_confidence=N (0..255), NaN also where the pair's confidence is below N. The same pair's
    other results then come from right_disparity(), confidence() and rectified(). close() (or a
    with block) frees the stage now; a closed Matcher raises ValueError. One compute at a time
    per Matcher (a lock); the library's own threads do the work (threads option).
    """

    def __init__(self, width, height, **options):
        width, height = _size(width, "width"), _size(height, "height")
        self._lock = threading.Lock()
        self._handle = None
        options = dict(options)
        self.min_confidence = _min_confidence(options.pop("min_confidence", None))
        names, values, maps = _split_options(options)
        n = len(names)
        c_names = (ctypes.c_char_p * max(n, 1))(*names)
        c_values = (ctypes.c_char_p * max(n, 1))(*values)
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERRLEN)
        rc = _lib.sd_matcher_create(width, height, n, c_names, c_values, maps,
                                    ctypes.byref(handle), err, _ERRLEN)
        if rc != _SD_OK:
            _raise(rc, err)
        self._handle = handle.value
        dims = [ctypes.c_int() for _ in range(4)]
        _lib.sd_matcher_shape(self._handle, *[ctypes.byref(x) for x in dims])
        self.input_size = (dims[0].value, dims[1].value)      # width, height of the inputs
        self.shape = (dims[3].value, dims[2].value)           # rows, columns of the output
        self.backend = _lib.sd_matcher_backend(self._handle).decode()
        self.note = _lib.sd_matcher_note(self._handle).decode()  # why auto fell back, or ""

    def compute(self, left, right):
        """The left disparity of one pair (grey HxW or BGR HxWx3 uint8 arrays, any strides);
        with min_confidence, NaN where its confidence is below it."""
        left, lc = _image(left, "left")
        right, rc_ = _image(right, "right")
        if left.shape[:2] != right.shape[:2]:
            raise ValueError(f"left is {left.shape[1]}x{left.shape[0]} but right is "
                             f"{right.shape[1]}x{right.shape[0]}: the pair must match")
        out = np.empty(self.shape, np.float32)
        err = ctypes.create_string_buffer(_ERRLEN)
        with self._lock:
            if self._handle is None:
                raise ValueError("the matcher is closed")
            rc = _lib.sd_matcher_compute(self._handle, left.ctypes.data, left.strides[0], lc,
                                         right.ctypes.data, right.strides[0], rc_,
                                         left.shape[1], left.shape[0], out.ctypes.data,
                                         out.size, err, _ERRLEN)
            if rc == _SD_OK and self.min_confidence:  # the same pair's, under the same lock
                conf = np.empty(self.shape, np.uint8)
                rc = _lib.sd_matcher_result(self._handle, _SD_CONFIDENCE, conf.ctypes.data,
                                            conf.size, err, _ERRLEN)
                out[conf < self.min_confidence] = np.nan
        if rc != _SD_OK:
            _raise(rc, err)
        return out

    def _result(self, kind, dtype):
        out = np.empty(self.shape, dtype)
        err = ctypes.create_string_buffer(_ERRLEN)
        with self._lock:
            if self._handle is None:
                raise ValueError("the matcher is closed")
            rc = _lib.sd_matcher_result(self._handle, kind, out.ctypes.data, out.size, err,
                                        _ERRLEN)
        if rc != _SD_OK:
            _raise(rc, err)
        return out

    def right_disparity(self):
        """The right view's disparity of the last pair computed: float32 HxW in pixels, NaN where
        invalid (what stereo-match --right writes). It is computed for the left-right check:
        with no_lr=True there is none (ValueError). ValueError before the first compute."""
        return self._result(_SD_RIGHT, np.float32)

    def confidence(self):
        """The confidence of the last pair's left disparity: uint8 HxW, 0..255 (higher: the best
        cost stands out more from the second best, stereo.h), 0 where the disparity is invalid
        (what stereo-match --confidence writes)."""
        return self._result(_SD_CONFIDENCE, np.uint8)

    def rectified(self):
        """The last pair as the stage matched it: (left, right) uint8 HxW grey images, rectified
        when the Matcher has maps."""
        return self._result(_SD_RECT_LEFT, np.uint8), self._result(_SD_RECT_RIGHT, np.uint8)

    def close(self):
        """Frees the stage; later calls raise ValueError. Closing twice is harmless."""
        lock = getattr(self, "_lock", None)
        if lock is None:  # __init__ failed before the lock
            return
        with lock:
            if self._handle is not None:
                _lib.sd_matcher_destroy(self._handle)
                self._handle = None

    @property
    def closed(self):
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"backend {self.backend}"
        return f"<stereodepth.Matcher {self.input_size[0]}x{self.input_size[1]}, {state}>"


AutoRange = namedtuple("AutoRange", "disparities top beyond clamped")
AutoRange.__doc__ = """The range a pair needs (auto_disparities): disparities, the D to search;
top, the scene's largest disparity measured (px); beyond, True when top is the end of the range
measured (the scene may be nearer still); clamped, True when disparities is the most the stage
takes for this width, below what top asks."""


def auto_disparities(left, right, **options):
    """The number of disparities the pair needs, as stereo-match -d auto measures it (the pair
    at a quarter of its size over up to 512 disparities, the 99th percentile of its valid
    disparities and an eighth more, in steps of 16): an AutoRange. The options are match()'s
    (min_disparity, maps, backend, threads and sms are read)."""
    left, lc = _image(left, "left")
    right, rc_ = _image(right, "right")
    if left.shape[:2] != right.shape[:2]:
        raise ValueError(f"left is {left.shape[1]}x{left.shape[0]} but right is "
                         f"{right.shape[1]}x{right.shape[0]}: the pair must match")
    options = dict(options)
    _min_confidence(options.pop("min_confidence", None))  # checked, not used by the measurement
    names, values, maps = _split_options(options)
    n = len(names)
    c_names = (ctypes.c_char_p * max(n, 1))(*names)
    c_values = (ctypes.c_char_p * max(n, 1))(*values)
    out = (ctypes.c_int * 4)()
    err = ctypes.create_string_buffer(_ERRLEN)
    rc = _lib.sd_auto_disparities(left.shape[1], left.shape[0], n, c_names, c_values, maps,
                                  left.ctypes.data, left.strides[0], lc, right.ctypes.data,
                                  right.strides[0], rc_, ctypes.byref(out), err, _ERRLEN)
    if rc != _SD_OK:
        _raise(rc, err)
    return AutoRange(out[0], out[1], bool(out[2]), bool(out[3]))


def match(left, right, disparities=64, **options):
    """The left disparity of one pair: float32 HxW in pixels, NaN where invalid.

    left, right: grey HxW or BGR HxWx3 uint8 arrays of one size (any strides). disparities and
    the options are stereo-match's (see the module's help); disparities="auto" measures the
    range first (auto_disparities). The values equal stereo-match's .pfm output bit for bit
    (which writes +inf where this gives NaN). min_confidence=N (0..255): NaN also where the
    confidence (Matcher.confidence()) is below N."""
    if isinstance(disparities, str) and disparities == "auto":
        disparities = auto_disparities(left, right, **options).disparities
    left_img, _ = _image(left, "left")
    with Matcher(left_img.shape[1], left_img.shape[0], disparities=disparities,
                 **options) as m:
        return m.compute(left, right)


Calibration = namedtuple("Calibration", "f B cx cy width height doffs", defaults=(0.0,))
Calibration.__doc__ = """A rectified stereo geometry: f (px), B (baseline, the calibration's
unit), cx, cy (px, the left rectified principal point), width, height (the rectified size),
doffs (px: the right principal point's x minus the left's; 0 for OpenCV's default
rectification). Depth is f B / (d + doffs), as hal/depth.h and stereo-match --depth."""


def calibration(path):
    """The rectified left camera of a calibration, as stereo-match --maps reads it for --depth:
    an OpenCV YAML (stereo-calibrate --out), "LEFT,RIGHT" ROS camera_info files, or a map file
    of version 2 (stereo-calibrate --maps, calib-maps). f = P1[0][0], B = |T|, cx, cy = P1's
    principal point, doffs = P2's cx - P1's. RuntimeError (the reader's message) when it cannot
    be read or has no camera (a version 1 map file)."""
    spec = _c_string(path, "path")
    out, size = (ctypes.c_double * 5)(), (ctypes.c_int * 2)()
    err = ctypes.create_string_buffer(_ERRLEN)
    rc = _lib.sd_calibration(spec, ctypes.byref(out), ctypes.byref(size), err, _ERRLEN)
    if rc != _SD_OK:
        _raise(rc, err)
    return Calibration(out[0], out[1], out[2], out[3], size[0], size[1], out[4])


def _geometry(disparity, f, B, cx, cy, calib, need_centre):
    d = np.asarray(disparity)
    if d.ndim != 2 or not np.issubdtype(d.dtype, np.floating):
        raise ValueError(f"disparity: a float HxW array expected, not {d.dtype} {d.shape}")
    if calib is not None:
        if any(v is not None for v in (f, B, cx, cy)):
            raise ValueError("give either calibration or f, B (cx, cy), not both")
        c = calib if isinstance(calib, Calibration) else calibration(calib)
        if d.shape != (c.height, c.width):
            raise ValueError(f"disparity is {d.shape[1]}x{d.shape[0]} but the calibration's "
                             f"rectified size is {c.width}x{c.height}")
        f, B, cx, cy = c.f, c.B, c.cx, c.cy
        doffs = c.doffs
    else:
        doffs = 0.0
    vals = {"doffs": float(doffs)}
    if need_centre and calib is None:  # the image centre by default, as stereo-match --center
        cx = (d.shape[1] - 1) / 2.0 if cx is None else cx
        cy = (d.shape[0] - 1) / 2.0 if cy is None else cy
    for k, v in (("f", f), ("B", B)) + ((("cx", cx), ("cy", cy)) if need_centre else ()):
        try:
            vals[k] = float(v) if not isinstance(v, (bool, np.bool_)) else None
        except (TypeError, ValueError):
            vals[k] = None
        if vals[k] is None or not np.isfinite(vals[k]):
            raise ValueError(f"{k}: a finite number is needed (or calibration=PATH), not {v!r}")
    if not vals["f"] > 0:
        raise ValueError(f"f: {f!r} must be positive")
    return d, vals


def _depth64(d, g):
    """f * B / (d + doffs) in float64, NaN where d is NaN or d + doffs <= 0."""
    d64 = d.astype(np.float64) + g["doffs"]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = g["f"] * g["B"] / d64
    z[~(d64 > 0)] = np.nan
    return z


def depth(disparity, f=None, B=None, *, calibration=None):
    """Depth Z = f * B / (d + doffs) per pixel (computed in float64, returned as float32, in B's
    unit; doffs from a calibration, else 0), NaN where d is NaN or d + doffs <= 0 (no match, or a
    point at infinity).

    f: focal length of the rectified images in px; B: baseline; or calibration: a path (or a
    Calibration) that gives both (its rectified size must be the disparity's)."""
    d, g = _geometry(disparity, f, B, None, None, calibration, False)
    return _depth64(d, g).astype(np.float32)


def points(disparity, f=None, B=None, cx=None, cy=None, *, calibration=None):
    """The 3-D point of every pixel: float32 HxWx3 (X, Y, Z), NaN where d is NaN or
    d + doffs <= 0.

    Z = f * B / (d + doffs), X = (x - cx) * Z / f, Y = (y - cy) * Z / f with x, y the pixel's column and
    row (the left rectified camera's frame: X right, Y down, Z forward). f, B, cx, cy (default:
    the image centre, ((width - 1) / 2, (height - 1) / 2), as stereo-match --center), or
    calibration (a path or a Calibration)."""
    d, g = _geometry(disparity, f, B, cx, cy, calibration, True)
    z = _depth64(d, g)
    h, w = d.shape
    x = (np.arange(w, dtype=np.float64)[None, :] - g["cx"]) * z / g["f"]
    y = (np.arange(h, dtype=np.float64)[:, None] - g["cy"]) * z / g["f"]
    return np.stack([x, y, z], axis=-1).astype(np.float32)


# help(stereodepth) lists the options
__doc__ += "\nThe options (options_help()):\n\n" + options_help() + "\n"
