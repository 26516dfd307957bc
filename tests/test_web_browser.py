# SPDX-License-Identifier: Apache-2.0
"""tests/test_web_browser.py — stereo-live's http:// page in a real browser (Debian's chromium,
headless, driven by python3-selenium), as TAP: the page loads, the image updates (the frame
number it shows rises), the readout under the pointer shows a number (metres: the run has a
camera), the 3D view draws points; a screenshot is written to $STEREO_BUILD/test-logs/web-view.png.
Skipped, saying so, without chromium, chromium-driver or selenium. Every wait is on a state the
page shows; its limit catches a hang only. Env: STEREO_BUILD (build)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

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

app = subprocess.Popen([LIVE, "--input", "synth://?width=320&height=240", "-d", "32",
                        "--backend", "cpu", "--headless", "--focal", "300", "--baseline", "0.12",
                        "--output", f"http://127.0.0.1:0/?token={TOKEN}"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
if not port:
    t.ok(False, "the app prints its port", "".join(err))
    app.kill()
    done(1)
if "not built in this binary" in "".join(err):
    t.skip("the page in a browser", "the http:// output is not built in this binary")
    app.kill()
    done()

opts = webdriver.ChromeOptions()
opts.binary_location = chromium
for a in ["--headless", "--no-sandbox", "--disable-gpu", "--use-gl=swiftshader",
          "--enable-unsafe-swiftshader", "--window-size=1400,1100", "--disable-dev-shm-usage"]:
    opts.add_argument(a)
browser = None
try:
    browser = webdriver.Chrome(service=Service(executable_path=driver),
                               options=opts)
    browser.set_page_load_timeout(60)
    browser.get(f"http://127.0.0.1:{port[0]}/?token={TOKEN}")
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
         "D32" in overlay, "the overlay numbers are shown", overlay)

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
except Exception as e:  # a failure of the browser's set-up is a failure, said in one line
    t.ok(False, f"the browser runs the page: {type(e).__name__}: {str(e).splitlines()[0]}")
finally:
    if browser:
        browser.quit()
    app.send_signal(signal.SIGINT)
    try:
        rc = app.wait(60)
    except subprocess.TimeoutExpired:
        app.kill()
        rc = "hung"
t.ok(rc == 0, "the app ends with status 0", rc)
done(1 if t.failed else 0)
