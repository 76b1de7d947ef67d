#!/usr/bin/env python3
"""The redeem page in a real browser: Debian's headless Chromium driven
through chromedriver with the W3C WebDriver protocol (stdlib HTTP only),
at a phone's window size, keyboard only, with JavaScript switched off.

Usage: page_test.py BASE_URL ARTEFACT_DIR [TAG]
Environment: as api_test.py (E2E_BIN, REDEEM_DB, E2E_ADMIN_KEY) for the
fixtures. Saves ARTEFACT_DIR/redeem-page-TAG.png.
"""

import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402

CHROMEDRIVER = os.environ.get("E2E_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # W3C element key
TAB, ENTER = "\ue004", "\ue007"
PHONE = (390, 844)  # CSS pixels
WD_TIMEOUT = 60  # seconds for one WebDriver command (session start is slow)


class WebDriverError(Exception):
    pass


class Driver:
    """A chromedriver process and one session on it."""

    def __init__(self, profile, log):
        self.profile = profile
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.proc = subprocess.Popen(
            [CHROMEDRIVER, f"--port={self.port}", "--log-level=WARNING"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.sid = None

    def start(self, javascript=False, console=False):
        """javascript: let pages run scripts (off: the page must work
        without); console: keep the browser console for console()."""
        end = time.monotonic() + 20
        while True:
            try:
                if self.call("GET", "/status", timeout=2).get("ready"):
                    break
            except (OSError, WebDriverError, http.client.HTTPException):
                pass
            if self.proc.poll() is not None:
                raise WebDriverError(f"chromedriver exited {self.proc.returncode}")
            if time.monotonic() > end:
                raise WebDriverError("chromedriver not ready within 20 s")
            time.sleep(0.05)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "pageLoadStrategy": "normal",
            "timeouts": {"pageLoad": 30000, "script": 10000, "implicit": 0},
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless", "--no-sandbox", "--disable-gpu",
                         "--disable-quic", "--no-first-run",
                         "--disable-background-networking",
                         "--disable-component-update", "--disable-sync",
                         "--disable-dev-shm-usage", "--window-size=500,900",
                         "--lang=en-US", f"--user-data-dir={self.profile}"],
                # A phone's viewport (a headless window is at least 500
                # px wide).
                "mobileEmulation": {"deviceMetrics": {
                    "width": PHONE[0], "height": PHONE[1], "pixelRatio": 2,
                    # Touch emulation makes chromedriver's click hang.
                    "touch": False}},
                # No JavaScript at all: the page must work without it.
                "prefs": {} if javascript else
                {"profile.managed_default_content_settings.javascript": 2},
            }}}}
        if console:
            caps["capabilities"]["alwaysMatch"]["goog:loggingPrefs"] = {
                "browser": "ALL"}
        v = self.call("POST", "/session", caps, timeout=WD_TIMEOUT)
        self.sid = v["sessionId"]

    def call(self, method, path, body=None, timeout=WD_TIMEOUT):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            if data is None and method == "POST":
                data = b"{}"
            conn.request(method, path, data,
                         {"Content-Type": "application/json; charset=utf-8"})
            r = conn.getresponse()
            raw = r.read()
        finally:
            conn.close()
        try:
            v = json.loads(raw).get("value")
        except ValueError:
            raise WebDriverError(f"{method} {path}: {r.status} {raw[:200]!r}")
        if r.status != 200:
            msg = v.get("error", "") + ": " + v.get("message", "")[:300] \
                if isinstance(v, dict) else str(v)
            raise WebDriverError(f"{method} {path}: {r.status} {msg}")
        return v

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.sid}{path}", body)

    def go(self, url):
        self.s("POST", "/url", {"url": url})

    def find(self, css):
        """The elements matching css (maybe none)."""
        v = self.s("POST", "/elements", {"using": "css selector", "value": css})
        return [e[ELEMENT] for e in v]

    def one(self, css):
        f = self.find(css)
        expect(len(f) == 1, f"{len(f)} elements match {css!r}, want 1")
        return f[0]

    def attr(self, el, name):
        return self.s("GET", f"/element/{el}/attribute/{name}")

    def text(self, el):
        return self.s("GET", f"/element/{el}/text")

    def active(self):
        return self.s("GET", "/element/active")[ELEMENT]

    def keys(self, el, text):
        self.s("POST", f"/element/{el}/value", {"text": text})

    def console(self):
        """The browser console's entries since the last call (needs
        start(console=True)): [{"level", "message", ...}]."""
        return self.s("POST", "/se/log", {"type": "browser"})

    def close(self):
        try:
            if self.sid:
                self.call("DELETE", f"/session/{self.sid}", timeout=20)
        except Exception as e:  # the process is killed below anyway
            print(f"# deleting the session: {e}", flush=True)
        finally:
            self.sid = None
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
            # A browser the session did not take down: found by its profile.
            for d in os.listdir("/proc"):
                try:
                    with open(f"/proc/{d}/cmdline", "rb") as f:
                        if self.profile.encode() in f.read():
                            os.kill(int(d), 9)
                except (OSError, ValueError):
                    pass


def wait_for(fn, what, timeout=15):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            v = fn()
            if v:
                return v
        except WebDriverError as e:  # a page in the middle of loading
            last = e
        time.sleep(0.05)
    raise L.Failure(f"{what}: not within {timeout} s ({last})")


def fill_and_submit(d, code, acct):
    """Keyboard only: focus the code field, type, Tab to the account field,
    type, Enter submits the form."""
    d.go(L.BASE.rstrip("/") + "/redeem")
    code_in = d.one("input[name=code]")
    acct_in = d.one("input[name=account]")
    d.s("POST", f"/element/{code_in}/click")
    expect(d.active() == code_in, "clicking the code field did not focus it")
    d.keys(code_in, code + TAB)
    expect(d.active() == acct_in, "Tab from the code field does not reach "
           "the account field")
    old = d.s("GET", "/url")
    d.keys(acct_in, acct + ENTER)

    def result():
        if d.s("GET", "/url") == old and not d.find("#result[data-result]"):
            return None
        f = d.find("#result")
        return f and d.attr(f[0], "data-result") and f[0]
    return wait_for(result, "a #result after Enter")


def run_flow(d, art, tag):
    camp = L.campaign()
    code = L.codes(camp)[0]
    acct = L.account("page")

    def labels():
        d.go(L.BASE.rstrip("/") + "/redeem")
        src = d.s("GET", "/source")
        expect("<script" not in src.lower(), "the page has a <script>")
        for name in ("code", "account"):
            el = d.one(f"input[name={name}]")
            iid = d.attr(el, "id")
            expect(iid, f"input {name} has no id")
            lab = d.find(f'label[for="{iid}"]')
            expect(lab, f"no label[for={iid}] for input {name}")
            expect(d.text(lab[0]).strip(), f"the label of {name} is empty")
            try:
                cl = d.s("GET", f"/element/{el}/computedlabel")
                expect(cl.strip(), f"input {name}: empty accessible name")
            except WebDriverError as e:
                if "unknown command" not in str(e):
                    raise
        expect(d.attr(d.one("input[name=account]"), "type") == "email",
               "account is not type=email")
        # Nothing too wide for a phone: no horizontal scrolling.
        page = d.s("GET", f"/element/{d.one('html')}/rect")
        expect(page["width"] <= PHONE[0], f"viewport not a phone's: {page}")
        for css in ("form", "input[name=code]", "input[name=account]",
                    "form button, form input[type=submit]", "#result"):
            for el in d.find(css):
                r = d.s("GET", f"/element/{el}/rect")
                expect(r["x"] >= 0 and r["x"] + r["width"] <= page["width"],
                       f"{css} does not fit {page['width']} px: {r}")
    L.run("browser: labels tied to inputs, no script, fits a phone", labels)

    def redeem():
        res = fill_and_submit(d, code, acct)
        expect(d.attr(res, "aria-live") == "polite", "#result has no aria-live=polite")
        dr = d.attr(res, "data-result")
        t = d.text(res)
        expect(dr == "ok", f"data-result {dr!r}: {t!r}")
        expect(camp in t, f"the result does not name the campaign {camp}: {t!r}")
        expect(re.search(r"\d{1,2}:\d\d", t), f"the result gives no time: {t!r}")
        info = L.code_info(code)
        expect(info.get("uses") == 1, f"code after the page: {info}")
        shot = d.s("GET", "/screenshot")
        png = base64.b64decode(shot)
        expect(png[:8] == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
        path = os.path.join(art, f"redeem-page-{tag}.png")
        with open(path, "wb") as f:
            f.write(png)
        print(f"# screenshot: {path}", flush=True)
    L.run("browser: keyboard-only redeem, result names the campaign", redeem)

    def wrong():
        res = fill_and_submit(d, "ZZZZ-" + L.RUN.upper(), L.account("page"))
        dr = d.attr(res, "data-result")
        t = d.text(res)
        expect(dr == "invalid", f"data-result {dr!r}: {t!r}")
        expect(len(t) > 10 and " " in t and "code" in t.lower(),
               f"not a plain-words error: {t!r}")
        expect(d.attr(res, "aria-live") == "polite", "no aria-live on the error")
        shot = base64.b64decode(d.s("GET", "/screenshot"))
        with open(os.path.join(art, f"redeem-page-{tag}-error.png"), "wb") as f:
            f.write(shot)
    L.run("browser: a wrong code says so in plain words", wrong)


def browser_main(script, label, run_flow, **start):
    """A browser test's main: argv BASE_URL ARTEFACT_DIR [TAG]; starts
    chromedriver and Chromium (Driver.start(**start)), reports that as
    "LABEL: chromedriver and Chromium start", runs run_flow(driver,
    artefact_dir, tag), and always takes the browser down."""
    if len(sys.argv) < 3:
        print(f"usage: {script} BASE_URL ARTEFACT_DIR [TAG]", file=sys.stderr)
        sys.exit(2)
    L.configure(sys.argv[1])
    art = sys.argv[2]
    tag = sys.argv[3] if len(sys.argv) > 3 else "e2e"
    os.makedirs(art, exist_ok=True)
    # SIGTERM (run.sh interrupted) unwinds through the finally below, so
    # the browser and chromedriver are never left behind.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    profile = tempfile.mkdtemp(prefix="e2e-chromium.")
    d = None
    log = tempfile.NamedTemporaryFile(prefix="e2e-chromedriver.", suffix=".log",
                                      delete=False)
    try:
        try:
            d = Driver(profile, log)
            d.start(**start)
        except Exception as e:
            log.flush()
            with open(log.name, "rb") as f:
                tail = f.read()[-1500:].decode("utf-8", "replace")
            L.report(False, f"{label}: chromedriver and Chromium start",
                     f"{e}\n{tail}")
        else:
            L.report(True, f"{label}: chromedriver and Chromium start")
            run_flow(d, art, tag)
    finally:
        if d:
            d.close()
        log.close()
        shutil.rmtree(profile, ignore_errors=True)
        try:
            os.unlink(log.name)
        except OSError:
            pass
    L.finish()


def main():
    browser_main("page_test.py", "browser", run_flow)

if __name__ == "__main__":
    main()
