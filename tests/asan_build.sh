# SPDX-License-Identifier: Apache-2.0
# tests/asan_build.sh — the ASan+UBSan build folder that tests/test_asan.sh and test_fuzz.sh
# share (gcc, CPU backend: ./configure --no-cuda --sanitize=address,undefined --out=$D); sourced,
# not run. asan_build TARGET... configures $D and builds the targets there, holding a lock on the
# folder, so that the two scripts, which tests/run may start at once, never build it together.
asan_build() {
  mkdir -p "$D" || return 1
  flock "$D/.build-lock" bash -c 'd=$1; shift
    ./configure --no-cuda --sanitize=address,undefined --out="$d" && ninja -C "$d" "$@"' _ "$D" "$@"
}
