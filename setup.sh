#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# setup.sh — installs the Debian packages the project needs (idempotent), configures and builds.
#
#   ./setup.sh            install what is missing, ./configure, ninja
#   ./setup.sh --no-build only the packages
#
# Needs root or sudo for apt-get. CUDA is not a Debian package here: when nvcc is on the PATH
# (or in /usr/local/cuda) the CUDA backend is built too, otherwise the CPU backend only.
# clang, libclang-rt-14-dev (its sanitizer and libFuzzer runtimes) and llvm (llvm-symbolizer, for
# readable reports) serve tests/test_tsan.sh and test_fuzz.sh; gcc's ASan/UBSan come with gcc.
# python3-pytest, -venv and -setuptools serve the Python module's tests (tests/test_python.py:
# pytest, and pip install ./python into a venv offline); python3-matplotlib its example.
# The GStreamer packages serve stereo-live's gst://, file:// video, rtsp:// and csi:// sources
# (app/sources/source_gst.c: the library, appsink and video info from -plugins-base; videotestsrc,
# decodebin and videoconvert from -base; rtspsrc, jpegenc/jpegdec, avimux and pngdec from -good)
# and tests/test_live_gst.sh, which encodes its test video with gst-launch-1.0 (-tools).
# stereo-live's rtp://, rtsp:// and gst:// outputs encode with x264enc (-plugins-ugly), serve RTSP
# with gst-rtsp-server (libgstrtspserver-1.0-dev); tests/test_outputs.sh receives them with
# h264parse (-plugins-bad) and avdec_h264 (-libav).
# libsoup-3.0-dev serves stereo-live's http:// output (a web page: HTTP and WebSocket server);
# glib-networking gives GIO the TLS of its https:// form, and the tests make their self-signed
# certificate with openssl; libjs-three its 3D view (three.js, served from
# /usr/share/javascript/three). chromium,
# chromium-driver and python3-selenium (about 135 MB) run tests/test_web_browser.py's real
# browser, headless.
# cyclonedds-dev and cyclonedds-tools (idlc) build stereo-live's ros2:// bridge
# (build/stereo-ros2-bridge) and the test subscriber; strace slows outputs down in the tests.
# tests/test_ros2.sh decodes the ROS 2 messages with the PyPI package rosbags, installed into
# build/venv-rosbags (pip; without a network the test is skipped, saying so); a subscriber of
# Cyclone DDS's newer 11.x line (PyPI cyclonedds) runs from build/venv-cyclonedds11.
# On an amd64 machine, tools/cross-aarch64.sh (tests/test_aarch64.sh) needs the aarch64 cross
# compiler, qemu-user, and the arm64 packages of the libraries the non-CUDA build links
# (Debian's multiarch: setup.sh adds the arm64 architecture to dpkg for them).
set -eu
cd "$(dirname "$0")"
packages="gcc ninja-build pkg-config zlib1g-dev libpng-dev libturbojpeg0-dev libcmocka-dev
python3 python3-numpy python3-opencv valgrind strace
libv4l-dev qemu-system-x86 busybox-static cpio libinih-dev libyaml-dev
libsdl2-dev libsdl2-ttf-dev fonts-dejavu-core xvfb xauth
clang libclang-rt-14-dev llvm
python3-pytest python3-matplotlib python3-venv python3-setuptools
libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base
gstreamer1.0-plugins-good gstreamer1.0-tools
gstreamer1.0-plugins-ugly gstreamer1.0-plugins-bad gstreamer1.0-libav libgstrtspserver-1.0-dev
cyclonedds-dev cyclonedds-tools
libsoup-3.0-dev glib-networking openssl libjs-three chromium chromium-driver python3-selenium"
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  packages="$packages gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user zlib1g-dev:arm64
libpng-dev:arm64 libturbojpeg0-dev:arm64 libcmocka-dev:arm64 libyaml-dev:arm64 libinih-dev:arm64
libv4l-dev:arm64 libsdl2-dev:arm64 libsdl2-ttf-dev:arm64"
fi
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing:$missing"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  case "$missing" in
    *:arm64*) dpkg --print-foreign-architectures | grep -qx arm64 ||
                $sudo dpkg --add-architecture arm64 ;;
  esac
  $sudo apt-get update -q
  # shellcheck disable=SC2086
  $sudo apt-get install -y -q --no-install-recommends $missing
fi
# a venv with one PyPI package (the tests that need it are skipped, saying so, without it)
pip_venv() { # folder, module to import, requirement
  if ! "$1/bin/python" -c "import $2" 2>/dev/null; then
    echo "setup: installing $3 (PyPI) into $1"
    { python3 -m venv "$1" && "$1/bin/pip" install -q "$3"; } ||
      echo "setup: could not install $3 into $1; the tests that need it will be skipped" >&2
  fi
}
pip_venv build/venv-rosbags rosbags.typesys rosbags==0.11.9
pip_venv build/venv-cyclonedds11 cyclonedds.domain cyclonedds==11.0.1  # the newer DDS line
[ "${1:-}" = "--no-build" ] && exit 0
./configure
ninja
