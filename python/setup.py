# SPDX-License-Identifier: Apache-2.0
"""Builds the stereodepth package (pyproject.toml has its metadata).

The package is the pure-Python module python/stereodepth plus the C library it loads through
ctypes, build/libstereodepth.so. build_py runs `ninja -C <checkout> build/libstereodepth.so`
(so the library is the one of the checkout's own configuration: CPU only, or with CUDA) and
copies it into the package; the wheel is therefore platform-specific. The checkout must be
configured first (./setup.sh, or ./configure).
"""
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIB = "libstereodepth.so"


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        if not (ROOT / "build" / "config.ninja").is_file():
            raise SystemExit(f"stereodepth: {ROOT}/build/config.ninja is missing: run ./setup.sh "
                             f"(or ./configure) in {ROOT} first")
        subprocess.run(["ninja", "-C", str(ROOT), f"build/{LIB}"], check=True)
        target = Path(self.build_lib) / "stereodepth"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "build" / LIB, target / LIB)


class BinaryDistribution(Distribution):
    """A wheel with a shared library in it is not pure Python: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(version=(ROOT / "VERSION").read_text().strip(),
      cmdclass={"build_py": BuildWithLibrary},
      distclass=BinaryDistribution)
