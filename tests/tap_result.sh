# SPDX-License-Identifier: Apache-2.0
# tests/tap_result.sh — sourced by the sanitizer test scripts (test_asan.sh, test_tsan.sh):
# result DESC appends "ok N - DESC" to the array tap when the array why is empty, else
# "not ok N - DESC" followed by why's lines as TAP diagnostics. The caller sets n=0 and tap=()
# and prints tap at the end.
result() {
  n=$((n + 1))
  if [ ${#why[@]} -eq 0 ]; then
    tap+=("ok $n - $1")
  else
    tap+=("not ok $n - $1")
    local l
    while IFS= read -r l; do tap+=("#   $l"); done < <(printf '%s\n' "${why[@]}")
  fi
}
