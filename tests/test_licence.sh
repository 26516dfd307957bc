#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/test_licence.sh — the licence is stated where a newcomer and a tool look for it, as TAP:
# LICENSE holds the Apache License 2.0 (byte for byte Debian's copy when it is installed), NOTICE
# the copyright line, README.md a Licence section, and every tracked source file (C, CUDA,
# Python, shell scripts and any other file starting with #!, the ninja files) the line
# "SPDX-License-Identifier: Apache-2.0" as its first line, or its second after a #! line.
# Run from the repo root (tests/run does): bash tests/test_licence.sh.
set -u
cd "$(dirname "$0")/.." || exit 1

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && sed 's/^/#   /' <<<"$2"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

DEBIAN_COPY=/usr/share/common-licenses/Apache-2.0
if [ -f LICENSE ] && grep -q '^ *Apache License$' LICENSE &&
   grep -q '^ *Version 2.0, January 2004$' LICENSE &&
   grep -q 'END OF TERMS AND CONDITIONS' LICENSE; then
  ok "LICENSE: the Apache License, Version 2.0"
else
  not_ok "LICENSE: the Apache License, Version 2.0" "$(head -5 LICENSE 2>&1)"
fi
if [ -f "$DEBIAN_COPY" ]; then
  if cmp -s LICENSE "$DEBIAN_COPY"; then
    ok "LICENSE is the licence text unchanged ($DEBIAN_COPY)"
  else
    not_ok "LICENSE is the licence text unchanged ($DEBIAN_COPY)" "$(diff LICENSE "$DEBIAN_COPY" | head -5)"
  fi
else
  skip "LICENSE is the licence text unchanged" "$DEBIAN_COPY is not installed"
fi
if grep -qx 'Copyright 2026 the stereo-depth authors' NOTICE 2>/dev/null; then
  ok "NOTICE: the copyright line"
else
  not_ok "NOTICE: the copyright line" "$(cat NOTICE 2>&1 | head -3)"
fi
section=$(sed -n '/^## Licence$/,/^## /p' README.md)
if grep -q 'Apache License, Version 2.0' <<<"$section" && grep -q 'LICENSE' <<<"$section" &&
   grep -q 'SPDX-License-Identifier: Apache-2.0' <<<"$section"; then
  ok "README.md: a Licence section naming Apache-2.0, LICENSE and the SPDX line"
else
  not_ok "README.md: a Licence section naming Apache-2.0, LICENSE and the SPDX line" "$section"
fi

# scripts that print their own top lines as their help skip the SPDX line
usage="# configure: writes build/config.ninja, the only machine-specific part of the build."
if [ "$(./configure --help | head -1)" = "$usage" ]; then
  ok "configure --help starts with its usage, not the SPDX line"
else
  not_ok "configure --help starts with its usage, not the SPDX line" "$(./configure --help | head -2)"
fi

# the source files git tracks: by their extension, or a #! first line
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
  skip "every tracked source file has the SPDX line" "not a git checkout: no list of tracked files"
else
  missing=() checked=0
  while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue    # deleted in the working tree
    case $f in
      *.c | *.h | *.cu | *.cuh | *.py | *.sh | *.ninja) ;;
      *) [ "$(head -c 2 "$f")" = '#!' ] || continue ;;
    esac
    checked=$((checked + 1))
    first=$(head -1 "$f")
    line=$first
    [[ $first == '#!'* ]] && line=$(sed -n 2p "$f")
    case $line in
      "/* SPDX-License-Identifier: Apache-2.0 */" | "# SPDX-License-Identifier: Apache-2.0") ;;
      *) missing+=("$f") ;;
    esac
  done < <(git ls-files -z)
  if [ ${#missing[@]} -eq 0 ] && [ $checked -gt 50 ]; then
    ok "every tracked source file ($checked) has the SPDX line at its top"
  else
    not_ok "every tracked source file has the SPDX line at its top (${#missing[@]} of $checked lack it)" \
      "$(printf '%s\n' "${missing[@]}")"
  fi
fi

echo "1..$n"
exit 0
