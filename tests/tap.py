# SPDX-License-Identifier: Apache-2.0
"""TAP output for the Python test scripts (tests/run counts "ok", "not ok" and "# SKIP")."""


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, *diag):
        """One TAP line; the diagnostics are printed only when the check fails."""
        self.n += 1
        self.failed += not cond
        print(f"{'ok' if cond else 'not ok'} {self.n} - {name}", flush=True)
        for d in diag if not cond else ():
            for line in str(d).splitlines():
                print(f"# {line}", flush=True)
        return cond

    def skip(self, name, reason):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {reason}", flush=True)

    def note(self, text):
        for line in text.splitlines():
            print(f"# {line}", flush=True)
