# SPDX-License-Identifier: Apache-2.0
"""The Python module's pytest tests (python/tests) as TAP, for tests/run: one line per pytest
case ("ok N - test_x[param]", "not ok N - ..." with the failure's text as # lines, skips as
"# SKIP reason"). pytest runs in a subprocess with a JUnit XML report, read back here. A
missing pytest fails (setup.sh installs python3-pytest).
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    try:
        import pytest  # noqa: F401
    except ImportError:
        print("not ok 1 - pytest is not installed (./setup.sh installs python3-pytest)")
        return 1
    with tempfile.TemporaryDirectory(prefix="stereodepth-pytest-") as tmp:
        report = os.path.join(tmp, "report.xml")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            f"--junitxml={report}", f"--basetemp={tmp}/t",
                            os.path.join(ROOT, "python", "tests")],
                           cwd=ROOT, env=env, capture_output=True, text=True)
        if not os.path.exists(report):
            print("not ok 1 - pytest ran no tests (status %d)" % r.returncode)
            for line in (r.stdout + r.stderr).splitlines()[-30:]:
                print("#   " + line)
            return 1
        cases = ET.parse(report).getroot().iter("testcase")
        n = failed = 0
        for case in cases:
            n += 1
            name = case.get("name")
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            skipped = case.find("skipped")
            if bad is not None:
                failed += 1
                print(f"not ok {n} - {name}")
                text = (bad.get("message") or "") + "\n" + (bad.text or "")
                for line in text.strip().splitlines()[-25:]:
                    print("#   " + line)
            elif skipped is not None:
                reason = (skipped.get("message") or "skipped").replace("\n", " ")
                print(f"ok {n} - {name} # SKIP {reason}")
            else:
                print(f"ok {n} - {name}")
        if n == 0:
            print("not ok 1 - pytest found no tests in python/tests")
            return 1
        print(f"1..{n}")
        return 1 if failed or r.returncode not in (0,) else 0


if __name__ == "__main__":
    sys.exit(main())
