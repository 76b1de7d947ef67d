#!/usr/bin/env python3
"""The dashboard in a real browser: Debian's headless Chromium through
chromedriver (page_test.py's Driver), at a phone's window size. Signs in
with the keyboard alone, lands on the overview, visits every page of the
nav, signs out; no page may leave an error in the browser console (a CSP
violation, a missing stylesheet, a failed request), and none may be wider
than the phone. Scripts are allowed here (the dashboard has none, so a
stray inline one would show up as a CSP error in the console).

Usage: admin_browser_test.py BASE_URL ARTEFACT_DIR [TAG]
Environment: E2E_BIN, REDEEM_DB for the fixtures. Saves
ARTEFACT_DIR/admin-*-TAG.png.
"""

import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402
from page_test import (ENTER, PHONE, TAB, Driver, WebDriverError,  # noqa: E402
                       wait_for)

PASSWORD = "browser pass " + L.RUN
NAV = ["/admin/", "/admin/campaigns", "/admin/codes", "/admin/redemptions",
       "/admin/semaphores", "/admin/leaked", "/admin/webhooks",
       "/admin/keys", "/admin/audit"]


def admin_create(email):
    p = subprocess.run([os.path.join(L.BIN, "redeemctl"), "admin", "create",
                        "--email", email, "--role", "owner",
                        "--password-stdin"], input=PASSWORD + "\n",
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, f"admin create: {L.short(p.stderr)}")


def url(path):
    return L.BASE.rstrip("/") + path


def path_of(d):
    u = d.s("GET", "/url")
    return "/" + u.split("/", 3)[3] if u.count("/") >= 3 else u


def console_errors(d):
    return [e for e in d.console() if e.get("level") == "SEVERE"]


def expect_clean(d, what):
    errs = console_errors(d)
    expect(not errs, f"{what}: console errors: "
           f"{[e.get('message', '')[:200] for e in errs]}")


def fits_phone(d, what):
    """Nothing wider than the phone: the page does not scroll sideways
    (wide tables scroll inside their own box). Chromium widens the layout
    viewport (innerWidth) to the content, so the phone's width is the
    measure."""
    w = d.s("POST", "/execute/sync", {
        "script": "return document.documentElement.scrollWidth;",
        "args": []})
    expect(w <= PHONE[0], f"{what} is {w} px wide on a {PHONE[0]} px phone")


def shot(d, art, name, tag):
    png = base64.b64decode(d.s("GET", "/screenshot"))
    expect(png[:8] == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
    path = os.path.join(art, f"admin-{name}-{tag}.png")
    with open(path, "wb") as f:
        f.write(png)
    print(f"# screenshot: {path}", flush=True)


def run_flow(d, art, tag):
    email = f"browser-{L.RUN}@example.com"
    admin_create(email)

    def sign_in():
        d.go(url("/admin/"))
        wait_for(lambda: path_of(d) == "/admin/login",
                 "/admin/ without a session goes to the login form")
        expect_clean(d, "the login form")
        fits_phone(d, "the login form")
        shot(d, art, "login", tag)
        em = d.one("input[name=email]")
        pw = d.one("input[name=password]")
        # autofocus: the e-mail field has the keyboard at once.
        expect(d.active() == em, "the e-mail field is not focused at load")
        d.keys(em, email + TAB)
        expect(d.active() == pw, "Tab from the e-mail does not reach the "
               "password")
        d.keys(pw, PASSWORD + ENTER)
        wait_for(lambda: path_of(d) == "/admin/" and d.find("h1"),
                 "Enter signs in and lands on the overview")
        expect(d.text(d.one("h1")) == "Overview", "not the overview")
        expect(d.text(d.one("#who-email")) == email,
               "the overview does not say who is signed in")
        expect_clean(d, "the overview")
        fits_phone(d, "the overview")
        src = d.s("GET", "/source")
        expect("<script" not in src.lower(), "a <script> on the overview")
        shot(d, art, "overview", tag)
    L.run("admin browser: keyboard sign-in lands on the overview, "
          "no console errors", sign_in)

    def keyboard_nav():
        d.go(url("/admin/"))
        body = d.one("body")
        d.keys(body, TAB)
        first = d.active()
        expect(d.attr(first, "class") == "skip",
               "the first Tab does not reach the skip link")
        # Tab on through the header to the nav: every link is reachable.
        got = set()
        for _ in range(40):
            d.keys(d.active(), TAB)
            href = d.attr(d.active(), "href") or ""
            # As written (/admin/x) or absolute (http://host/admin/x).
            got.add("/" + href.split("://", 1)[-1].split("/", 1)[-1]
                    if "://" in href else href)
            if set(NAV) <= got:
                break
        missing = [p for p in NAV if p not in got]
        expect(not missing, f"Tab never reaches {missing}")
    L.run("admin browser: Tab reaches the skip link and every nav link",
          keyboard_nav)

    def pages():
        for p in NAV:
            d.go(url(p))
            wait_for(lambda: d.find("h1"), f"{p} loads")
            expect(path_of(d) == p, f"{p} went to {path_of(d)}")
            cur = d.find('nav a[aria-current="page"]')
            expect(len(cur) == 1, f"{p}: {len(cur)} current nav links")
            expect_clean(d, p)
            fits_phone(d, p)
        d.go(url("/admin/nope"))
        wait_for(lambda: d.find("#result"), "the 404 page")
        expect(d.attr(d.one("#result"), "data-result") == "not_found",
               "/admin/nope is not a not_found page")
        # The 404 itself is a console error (a failed load): drain it.
        d.console()
        d.go(url("/admin/"))
        expect_clean(d, "the overview after the 404")
    L.run("admin browser: every nav page loads clean and fits a phone", pages)

    def campaigns():
        name = f"browser-{L.RUN}"
        d.go(url("/admin/campaigns"))
        wait_for(lambda: d.find("h1"), "the campaigns list loads")
        expect_clean(d, "the campaigns list")
        shot(d, art, "campaigns", tag)
        d.go(url("/admin/campaigns/new"))
        wait_for(lambda: d.find("#f-name"), "the new campaign form loads")
        expect_clean(d, "the new campaign form")
        fits_phone(d, "the new campaign form")
        shot(d, art, "campaign-new", tag)
        d.keys(d.one("#f-name"), name)
        d.keys(d.one("#f-budget"), "250")
        d.keys(d.one("#f-limit"), "1" + ENTER)
        want = f"/admin/campaigns/{name}"
        wait_for(lambda: path_of(d) == want and d.find("#c-budget"),
                 "Enter creates the campaign and shows its page")
        expect(d.text(d.one("#c-budget")).strip() == "0 / 250",
               "the new campaign's budget")
        expect(d.find("svg"), "no chart on the campaign page")
        expect_clean(d, "the campaign page")
        fits_phone(d, "the campaign page")
        shot(d, art, "campaign", tag)
        d.go(url("/admin/campaigns"))
        wait_for(lambda: d.find("#campaigns"), "the list shows a table")
        expect_clean(d, "the campaigns list with a campaign")
        fits_phone(d, "the campaigns list")
        d.go(url("/admin/audit"))
        wait_for(lambda: d.find("#audit"), "the audit log shows a table")
        expect_clean(d, "the audit log")
        fits_phone(d, "the audit log")
        shot(d, art, "audit", tag)
    L.run("admin browser: create a campaign, its page and the audit log "
          "load clean", campaigns)

    def codes():
        d.go(url("/admin/codes"))
        wait_for(lambda: d.find("h1") and d.find("#query-time"),
                 "the codes list loads")
        expect_clean(d, "the codes list")
        fits_phone(d, "the codes list")
        shot(d, art, "codes", tag)
        links = d.find("#codes td.code a")
        expect(links, "the codes list shows no code")
        href = d.attr(links[0], "href") or ""
        d.go(href if "://" in href else url(href))
        wait_for(lambda: d.find("#code-facts"), "a code's page loads")
        expect_clean(d, "a code's page")
        fits_phone(d, "a code's page")
        shot(d, art, "code", tag)
        d.go(url("/admin/redemptions"))
        wait_for(lambda: d.find("#query-time"), "the redemptions list loads")
        expect_clean(d, "the redemptions list")
        fits_phone(d, "the redemptions list")
        shot(d, art, "redemptions", tag)
    L.run("admin browser: the codes list, a code's page and the "
          "redemptions load clean", codes)

    def sign_out():
        d.go(url("/admin/"))
        btn = d.one("form.logout button")
        d.keys(btn, ENTER)
        wait_for(lambda: path_of(d) == "/admin/login",
                 "Enter on Sign out goes to the login form")
        d.go(url("/admin/"))
        wait_for(lambda: path_of(d) == "/admin/login",
                 "signed out: /admin/ goes to the login form")
        expect_clean(d, "after signing out")
    L.run("admin browser: keyboard sign-out ends the session", sign_out)


def main():
    if len(sys.argv) < 3:
        print("usage: admin_browser_test.py BASE_URL ARTEFACT_DIR [TAG]",
              file=sys.stderr)
        sys.exit(2)
    L.configure(sys.argv[1])
    art = sys.argv[2]
    tag = sys.argv[3] if len(sys.argv) > 3 else "e2e"
    os.makedirs(art, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    profile = tempfile.mkdtemp(prefix="e2e-chromium.")
    d = None
    log = tempfile.NamedTemporaryFile(prefix="e2e-chromedriver.",
                                      suffix=".log", delete=False)
    try:
        try:
            d = Driver(profile, log)
            d.start(javascript=True, console=True)
        except (OSError, WebDriverError) as e:
            log.flush()
            with open(log.name, "rb") as f:
                tail = f.read()[-1500:].decode("utf-8", "replace")
            L.report(False, "admin browser: chromedriver and Chromium start",
                     f"{e}\n{tail}")
        else:
            L.report(True, "admin browser: chromedriver and Chromium start")
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


if __name__ == "__main__":
    main()
