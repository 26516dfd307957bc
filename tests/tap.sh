# SPDX-License-Identifier: Apache-2.0
# tests/tap.sh — the TAP helpers of the shell tests that print as they go (test_live.sh,
# test_live_gst.sh, test_outputs.sh, ...); sourced, not run:  . tests/tap.sh
#   ok NAME / not_ok NAME [DIAGNOSTIC] / skip NAME WHY   one numbered TAP line (n counts them)
#   check NAME DIAGNOSTIC-FILE COMMAND...               ok if the command succeeds, else not ok
#                                                       with the file's last 15 lines
#   lines FILE                                          its line count
#   wait_for SECONDS COMMAND...   0 as soon as the command succeeds (tried every 0.1 s), 1 if
#                                 it still fails after SECONDS
#   ends_within PID SECONDS       0 once PID has ended (then collect its status with wait),
#                                 else kills it (SIGKILL) after SECONDS and returns 1
#   gone PID                      0 when PID has ended
# The tests wait on states (a line printed, a file written, a process gone), never on the clock;
# their limits only catch a hang: ten times the expected time or more, so that a loaded machine
# does not trip them. The time limits the app promises are measured by tools/timing.sh.
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && sed 's/^/#   /' <<<"$2"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() {
  local name=$1 diag=$2; shift 2
  if "$@"; then ok "$name"; else not_ok "$name" "$(tail -15 "$diag" 2>/dev/null)"; fi
}
lines() { grep -c '' "$1"; }
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -ge "$end" ] && return 1
    sleep 0.1
  done
}
gone() { ! kill -0 "$1" 2>/dev/null; }
ends_within() {
  wait_for "$2" gone "$1" && return 0
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 1
}
