# SPDX-License-Identifier: Apache-2.0
"""tools/loso.py, the leave-one-scene-out choice of a setting. Prints TAP.

The choice itself on hand-made scores: a candidate best in-sample can lose a left-out scene to
another (the table must then name the other one, and score that scene by it, not by the best
candidate there); ties go to the candidate listed first. Then the tool end to end on two
generated scenes (no shared data needed): every candidate scored, one row per left-out scene,
the in-sample and left-out lines, and --json holding the same numbers. And the SGM-Forest
experiment's dump (sgm-paths-dump): its sum, finished, equals stereo-match's output.
"""
import array
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import loso  # noqa: E402

results = []


def check(ok, desc, diag=""):
    results.append((bool(ok), desc, diag))


# A is best in-sample (mean 1.4 against B's 1.7 and C's 6.17), but without s1 B wins (1.05
# against A's 1.6), and C, the best on s1 itself, is never chosen.
scores = {"A": {"s1": 1.0, "s2": 1.0, "s3": 2.2},
          "B": {"s1": 3.0, "s2": 1.1, "s3": 1.0},
          "C": {"s1": 0.5, "s2": 9.0, "s3": 9.0}}
rows, (best, best_mean), left_out = loso.leave_one_out(["s1", "s2", "s3"], scores)
by = {r[0]: r for r in rows}
check(best == "A" and abs(best_mean - 4.2 / 3) < 1e-12, "in-sample: A, the lowest mean over all",
      f"{best} {best_mean}")
check(by["s1"][1] == "B" and by["s1"][2] == 3.0 and by["s1"][3] == 0.5,
      "without s1, B is chosen (1.05 against A's 1.6) and s1 is scored by it (3.0; best there 0.5)",
      str(by["s1"]))
check(by["s2"][1] == "A" and by["s3"][1] == "A", "without s2 or s3, A is chosen", str(rows))
check(abs(left_out - (3.0 + 1.0 + 2.2) / 3) < 1e-12, "left-out mean: each scene by its own choice",
      str(left_out))
tie = {"X": {"a": 1.0, "b": 2.0}, "Y": {"a": 2.0, "b": 1.0}}
rows, (best, _), _ = loso.leave_one_out(["a", "b"], tie)
check(best == "X", "a tie goes to the candidate listed first", best)

# end to end on two small generated scenes
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "loso.json")
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "loso.py"), "--family",
                        "cost", "--generated-only", "--generated", "2", "--no-hard", "--json", out],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "loso.py --family cost on two generated scenes runs", r.stderr[-300:])
    text = r.stdout
    costs = {"rank", "census", "ad", "bt", "mi", "adcensus"}
    check(all(f"{c} " in text for c in costs),
          "every cost of the family is scored", text[:300])
    check("generated-a" in text and "generated-b" in text and "in-sample:" in text and
          "left-out:" in text, "a row per left-out scene and the two summary lines", text[-400:])
    try:
        data = json.load(open(out))
        ok = len(data["rows"]) == 2 and set(data["scores"]) == costs
        ok = ok and all(0 <= v <= 100 for c in data["scores"].values() for v in c.values())
        ok = ok and f"mean bad-2 {data['left_out']:.2f} %" in text
    except (OSError, ValueError, KeyError) as e:
        ok, data = False, str(e)
    check(ok, "--json holds the scores, the rows and the printed left-out mean", str(data)[:300])
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "loso.py"),
                        "--generated-only", "--generated", "9"], capture_output=True, text=True)
    check(r.returncode == 2 and "--generated: 9 is outside" in r.stderr,
          "--generated beyond the scenes it has is refused (exit 2)", r.stderr[-200:])

# the SGM-Forest experiment's dump: its sum, finished as the default pipeline finishes it (but
# with no uniqueness test), is stereo-match's output bit for bit (tools/sgm_paths_dump.c)
with tempfile.TemporaryDirectory() as tmp:
    name, left, right, _, _, d = loso.synth_scenes(tmp, 1)[0]
    build = os.environ.get("STEREO_BUILD", "build")
    dump, ref = os.path.join(tmp, "paths.bin"), os.path.join(tmp, "ref.pfm")
    r1 = subprocess.run([os.path.join(build, "sgm-paths-dump"), "-d", str(d), left, right, dump],
                        capture_output=True, text=True)
    r2 = subprocess.run([os.path.join(build, "stereo-match"), "--backend", "cpu", "-d", str(d),
                         "--uniqueness", "0", "--paths", "8", "--speckle-size", "0", left, right, ref],
                        capture_output=True, text=True)
    ok = r1.returncode == 0 and r2.returncode == 0
    diag = r1.stderr[-300:] + r2.stderr[-300:]
    if ok:
        raw = open(dump, "rb").read()
        w, h, dd, n = struct.unpack_from("<4i", raw, 8)
        planes = [array.array("i", raw[24 + 4 * w * h * k:24 + 4 * w * h * (k + 1)])
                  for k in range(2)]
        files = []
        for k, plane in enumerate(planes):
            path = os.path.join(tmp, f"p{k}.i16")
            array.array("h", plane).tofile(open(path, "wb"))
            files.append(path)
        fin = os.path.join(tmp, "fin.pfm")
        r3 = subprocess.run([os.path.join(build, "sgm-paths-dump"), "--finish", str(w), str(h),
                             *files, fin], capture_output=True, text=True)
        ok = (raw[:8] == b"SGMPATHS" and dd == d and n == 54 and r3.returncode == 0 and
              open(fin, "rb").read() == open(ref, "rb").read())
        diag = f"{raw[:8]} {w}x{h} D{dd} n{n} {r3.stderr[-300:]}"
    check(ok, f"sgm-paths-dump's sum on {name}, finished, equals stereo-match's output", diag)

print(f"1..{len(results)}")
for i, (ok, desc, diag) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {desc}")
    if not ok and diag:
        for line in str(diag).splitlines():
            print(f"#   {line}")
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
