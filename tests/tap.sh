# SPDX-License-Identifier: Apache-2.0
# tests/tap.sh — the TAP helpers of the shell tests that print as they go (test_live.sh,
# test_live_gst.sh, test_live_views.sh); sourced, not run:  . tests/tap.sh
#   ok NAME / not_ok NAME [DIAGNOSTIC] / skip NAME WHY   one numbered TAP line (n counts them)
#   check NAME DIAGNOSTIC-FILE COMMAND...               ok if the command succeeds, else not ok
#                                                       with the file's last 15 lines
#   lines FILE                                          its line count
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && sed 's/^/#   /' <<<"$2"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() {
  local name=$1 diag=$2; shift 2
  if "$@"; then ok "$name"; else not_ok "$name" "$(tail -15 "$diag" 2>/dev/null)"; fi
}
lines() { grep -c '' "$1"; }
