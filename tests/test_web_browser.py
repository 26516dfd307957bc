# SPDX-License-Identifier: Apache-2.0
"""tests/test_web_browser.py — stereo-live's http:// page in a real browser (Debian's chromium,
headless, driven by python3-selenium), as TAP: the page loads, the image updates (the frame
number it shows rises), the readout under the pointer shows a number (metres: the run has a
camera), how long after capture the page paints a frame (the median and 95th percentile as a
TAP comment: a figure, not a check), the 3D view draws points; a screenshot is written to
$STEREO_BUILD/test-logs/web-view.png; then the same page over https:// (a self-signed
certificate made here with openssl, wss:// for its frames). Skipped, saying so, without
chromium, chromium-driver or selenium (https: without openssl). Every wait is on a state the
page shows; its limit catches a hang only. Every process it starts (the apps, chromium through
its driver) is stopped whatever ends the test. Env: STEREO_BUILD (build)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from tap import Tap  # noqa: E402

B = os.environ.get("STEREO_BUILD", "build")
LIVE = os.path.join(B, "stereo-live")
TOKEN = "browser-test"
t = Tap()


def done(code=0):
    print(f"1..{t.n}")
    sys.exit(code)


chromium = shutil.which("chromium")
driver = shutil.which("chromedriver")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    webdriver = None
if not chromium or not driver or not webdriver:
    t.skip("the page in a browser", "needs chromium, chromium-driver and python3-selenium "
           "(setup.sh installs them)")
    done()
if not os.access(LIVE, os.X_OK):
    print(f"Bail out! {LIVE} is not built")
    sys.exit(1)

started = []  # every app started: stopped at the end whatever happens


def start_app(uri):
    """stereo-live at 640x480 with the output uri: (process, port or None, stderr lines)."""
    app = subprocess.Popen([LIVE, "--input", "synth://?width=640&height=480", "-d", "64",
                            "--backend", "cpu", "--headless", "--focal", "600", "--baseline",
                            "0.12", "--output", uri],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started.append(app)
    port = []
    got_port = threading.Event()

    def read_out():
        for line in app.stdout:
            m = re.search(r"port (\d+),", line)
            if m and not port:
                port.append(int(m.group(1)))
                got_port.set()
        got_port.set()
    threading.Thread(target=read_out, daemon=True).start()
    err = []
    threading.Thread(target=lambda: err.extend(app.stderr), daemon=True).start()
    got_port.wait(60)
    return app, (port[0] if port else None), err


def stop_app(app):
    if app.poll() is None:
        app.send_signal(signal.SIGINT)
    try:
        return app.wait(60)
    except subprocess.TimeoutExpired:
        app.kill()
        app.wait()
        return "hung"


app_start = time.time()
app, port, err = start_app(f"http://127.0.0.1:0/?token={TOKEN}")
if not port:
    t.ok(False, "the app prints its port", "".join(err))
    stop_app(app)
    done(1)
if "not built in this binary" in "".join(err):
    t.skip("the page in a browser", "the http:// output is not built in this binary")
    stop_app(app)
    done()

opts = webdriver.ChromeOptions()
opts.binary_location = chromium
for a in ["--headless", "--no-sandbox", "--disable-gpu", "--use-gl=swiftshader",
          "--enable-unsafe-swiftshader", "--window-size=1400,1100", "--disable-dev-shm-usage"]:
    opts.add_argument(a)
opts.set_capability("acceptInsecureCerts", True)  # the https:// part's self-signed certificate
browser = None
T = tempfile.mkdtemp()
rc = None
try:
    browser = webdriver.Chrome(service=Service(executable_path=driver),
                               options=opts)
    browser.set_page_load_timeout(60)
    browser.get(f"http://127.0.0.1:{port}/?token={TOKEN}")
    wait = WebDriverWait(browser, 60)
    t.ok("stereo-live" in browser.title, "the page loads", browser.title)

    def frame():
        v = browser.find_element(By.ID, "disp").get_attribute("data-frame")
        return int(v) if v else 0
    wait.until(lambda b: frame() > 0)
    first = frame()
    wait.until(lambda b: frame() > first)
    t.ok(frame() > first, f"the image updates (frame {first} -> {frame()})")
    overlay = browser.find_element(By.ID, "overlay").text
    t.ok(re.search(r"frame \d+ .* fps .*stage [\d.]+ ms", overlay) and "cpu" in overlay and
         "D64" in overlay, "the overlay numbers are shown", overlay)

    img = browser.find_element(By.ID, "disp")
    readout = ""
    for dx, dy in [(40, 20), (-60, 30), (80, -40), (0, 0), (-100, -60), (120, 60), (20, -80)]:
        # offsets from the centre; a pixel without a match says so, the next one is tried
        ActionChains(browser).move_to_element_with_offset(img, dx, dy).perform()
        ActionChains(browser).move_to_element_with_offset(img, dx, dy + 1).perform()
        wait.until(lambda b: re.search(r"\d+\.\d+ m|no match|no depth",
                                       b.find_element(By.ID, "readout").text))
        readout = browser.find_element(By.ID, "readout").text
        if re.search(r"[\d.]+ m ", readout):
            break
    t.ok(re.search(r"[\d.]+ m ", readout), f"the readout shows the depth under the pointer "
         f"('{readout}')")

    # capture -> paint: the page notes, for each frame it paints, Date.now() after the
    # rendering update that drew it against the capture time in the frame's header (the app's
    # CLOCK_REALTIME: one machine, one clock). The 100 frames after this point, pointer still.
    def painted():
        return browser.execute_script("return window.stereoPaint.samples.length")
    base = painted()
    wait.until(lambda b: painted() >= min(base + 100, 2000))
    samples = browser.execute_script("return window.stereoPaint.samples")[-100:]
    elapsed_ms = (time.time() - app_start) * 1e3
    s_ = sorted(samples)
    med, p95 = s_[len(s_) // 2], s_[min(len(s_) - 1, int(len(s_) * 0.95))]
    h = browser.execute_script("return last.h")
    t.note(f"capture -> paint in chromium (headless, SwiftShader, loopback, 640x480, the app on "
           f"the CPU backend): median {med:.0f} ms, p95 {p95:.0f} ms, min {s_[0]:.0f}, max "
           f"{s_[-1]:.0f} ({len(s_)} frames); of which capture -> ready to send in the app "
           f"{h['latency_ms']:.0f} ms (the last second's mean; stage {h['stage_ms']:.0f} ms, "
           f"{h['fps']:.1f} fps)")
    t.ok(len(s_) == 100 and s_[0] >= 0 and s_[-1] <= elapsed_ms,
         f"the page measures capture -> paint for each frame (100 frames, each between 0 and "
         f"the app's age: median {med:.0f} ms, p95 {p95:.0f} ms)", s_[:5], s_[-5:])
    overlay = browser.find_element(By.ID, "overlay").text
    t.ok(re.search(r"painted \d+ ms after capture", overlay), "the overlay shows it", overlay)

    browser.find_element(By.ID, "toggle3d").click()
    wait.until(lambda b: re.search(r"\d+ points|not installed",
                                   b.find_element(By.ID, "note3d").text))
    note = browser.find_element(By.ID, "note3d").text
    if "not installed" in note:
        t.skip("the 3D view draws points", note)
    else:
        t.ok(re.search(r"[1-9]\d* points", note), f"the 3D view draws points ({note})")
    shot = os.path.join(B, "test-logs", "web-view.png")
    os.makedirs(os.path.dirname(shot), exist_ok=True)
    t.ok(browser.save_screenshot(shot) and os.path.getsize(shot) > 10000,
         f"a screenshot ({shot})")
    logs = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    t.ok(not logs, "no errors in the page's console", logs)
    rc = stop_app(app)
    t.ok(rc == 0, "the app ends with status 0", rc)

    # ---- https:// with a self-signed certificate made now -------------------------------
    openssl = shutil.which("openssl")
    if not openssl:
        t.skip("the page over https://", "needs openssl to make a certificate (setup.sh "
               "installs it)")
    else:
        cert, key = os.path.join(T, "cert.pem"), os.path.join(T, "key.pem")
        made = subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                               "-keyout", key, "-out", cert, "-days", "2", "-subj",
                               "/CN=127.0.0.1"], capture_output=True, text=True, timeout=120)
        app, port, err = start_app(f"https://127.0.0.1:0/?token={TOKEN}&cert={cert}&key={key}")
        if made.returncode != 0 or not port:
            t.ok(False, "the app serves https:// with a self-signed certificate",
                 made.stderr, "".join(err))
        else:
            browser.get(f"https://127.0.0.1:{port}/?token={TOKEN}")
            wait.until(lambda b: frame() > 0)
            first = frame()
            wait.until(lambda b: frame() > first)
            proto = browser.execute_script("return location.protocol")
            t.ok(proto == "https:" and frame() > first, f"the page over https:// (wss:// for "
                 f"its frames) updates: frame {first} -> {frame()}")
        rc = stop_app(app)
        t.ok(rc == 0, "the https:// app ends with status 0", rc)
except Exception as e:  # a failure of the browser's set-up is a failure, said in one line
    t.ok(False, f"the browser runs the page: {type(e).__name__}: {str(e).splitlines()[0]}")
finally:
    if browser:
        browser.quit()
    for a in started:  # none left running, whatever ended the test
        stop_app(a)
    shutil.rmtree(T, ignore_errors=True)
done(1 if t.failed else 0)
