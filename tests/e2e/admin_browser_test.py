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
import subprocess
import sys
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402
from page_test import (ENTER, PHONE, TAB, browser_main,  # noqa: E402
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

    def revoke():
        code = L.codes(L.campaign(name=f"brv-{L.RUN}"), 1)[0]
        d.go(url("/admin/codes/" + urllib.parse.quote(code)))
        wait_for(lambda: d.find("#revoke"), "a code's page has Revoke")
        d.keys(d.one("#revoke"), ENTER)
        wait_for(lambda: d.find("#code-state") and "revoked" in
                 d.text(d.one("#code-state")) and not d.find("#revoke"),
                 "Revoke shows the code revoked, without the button")
        expect_clean(d, "a revoked code's page")
        j = L.expect_json_ok(L.api(
            "GET", "/api/v1/codes/" + urllib.parse.quote(code)), 200,
            "GET the revoked code")
        expect(j["code"]["state"] == "revoked",
               f"the API says {j['code']['state']}")
    L.run("admin browser: revoke a code with its button", revoke)

    step_release_leaked(d, art, tag)
    step_redeliver(d, art, tag)
    step_generate_export(d, art, tag)

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


def step_release_leaked(d, art, tag):
    """The semaphores page, then the leaked page: a permit past its TTL
    (the sweeper's release_leaked job held off meanwhile, as another
    sweeper would) is released with its own button and is gone."""
    import admin_test as A  # its SQL and sweeper-lease helpers

    def release():
        sem, xid = f"browser-sem-{L.RUN}", f"browser-leak-{L.RUN}"
        L.expect_json_ok(L.api("PUT", f"/api/v1/semaphores/{sem}",
                               {"capacity": 2}), 200, "a semaphore")
        expect(A.take_lease("release_leaked", 60),
               "could not take the release_leaked lease")
        try:
            L.expect_json_ok(L.api("POST", "/api/v1/permits", {
                "external_id": xid, "owner": "browser", "ttl_seconds": 300,
                "semaphores": [{"name": sem, "count": 1}]}), 201, "a permit")
            A.sql("UPDATE permits SET expires_at = expires_at - 400 "
                  f"WHERE external_id = {A.lit(xid)}")
            pid = A.sql("SELECT id FROM permits WHERE external_id = "
                        f"{A.lit(xid)}")[0][0]
            d.go(url("/admin/semaphores"))
            wait_for(lambda: d.find(f'tr[data-semaphore="{sem}"]'),
                     "the semaphores list shows the semaphore")
            expect_clean(d, "the semaphores list")
            fits_phone(d, "the semaphores list")
            shot(d, art, "semaphores", tag)
            d.go(url("/admin/leaked"))
            row = f'#leaked-permits tr[data-permit="{pid}"]'
            wait_for(lambda: d.find(row), "the leaked page lists the permit")
            expect_clean(d, "the leaked page")
            fits_phone(d, "the leaked page")
            shot(d, art, "leaked", tag)
            d.keys(d.one(row + " button"), ENTER)
            wait_for(lambda: d.find("#notice") and not d.find(row),
                     "Release takes the permit off the leaked page")
            expect("Released the permit" in d.text(d.one("#notice")),
                   "no notice after the release")
            expect_clean(d, "the leaked page after a release")
        finally:
            A.give_lease("release_leaked")
        j = L.expect_json_ok(L.api("GET", f"/api/v1/semaphores/{sem}"), 200,
                             "GET semaphore")
        expect(j["semaphore"]["in_use"] == 0, "the room did not come back")
    L.run("admin browser: the semaphores page, and a leaked permit "
          "released with its button", release)


def step_redeliver(d, art, tag):
    """The webhooks page, then an endpoint's deliveries: a dead delivery
    (an endpoint on a closed port, its delivery tried and then marked
    dead) is redelivered with its own button and is pending again; the
    API keys page loads clean."""
    import admin_test as A  # its SQL helpers

    def redeliver():
        r = L.api("POST", "/api/v1/webhooks",
                  {"url": f"http://127.0.0.1:{A.closed_port()}/browser"})
        hid = L.expect_json_ok(r, 201, "a webhook")["webhook"]["id"]
        code = L.codes(L.campaign(), 1)[0]
        L.expect_status(L.redeem(code, L.account("browser-hook")), 200,
                        "a redemption")
        q = f"SELECT id FROM webhook_deliveries WHERE endpoint_id = {hid}"
        wait_for(lambda: A.sql(q + " AND attempts >= 1"),
                 "the delivery is tried", timeout=20)
        did = A.sql(q)[0][0]
        A.sql("UPDATE webhook_deliveries SET state = 'dead' "
              f"WHERE id = {did}")
        d.go(url("/admin/webhooks"))
        wait_for(lambda: d.find(f'tr[data-webhook="{hid}"]'),
                 "the webhooks page lists the endpoint")
        expect_clean(d, "the webhooks page")
        fits_phone(d, "the webhooks page")
        shot(d, art, "webhooks", tag)
        d.go(url(f"/admin/webhooks/{hid}"))
        row = f'tr[data-delivery="{did}"]'
        wait_for(lambda: d.find(row + '[data-state="dead"]'),
                 "the endpoint's page shows the dead delivery")
        expect_clean(d, "an endpoint's deliveries")
        fits_phone(d, "an endpoint's deliveries")
        shot(d, art, "webhook", tag)
        d.keys(d.one(row + " button"), ENTER)
        wait_for(lambda: d.find("#notice") and
                 d.find(row) and not d.find(row + '[data-state="dead"]'),
                 "Redeliver takes the delivery out of dead")
        expect("1 delivery" in d.text(d.one("#notice")),
               "no notice after the redelivery")
        expect_clean(d, "the endpoint's page after a redelivery")
        d.go(url("/admin/keys"))
        wait_for(lambda: d.find("#keys"), "the keys page lists keys")
        expect_clean(d, "the API keys page")
        fits_phone(d, "the API keys page")
        shot(d, art, "keys", tag)
    L.run("admin browser: a dead webhook delivery redelivered with its "
          "button; the API keys page", redeliver)


def step_generate_export(d, art, tag):
    """Generate: the form (keyboard: Enter on Generate) starts a job, its
    page follows it to done by itself (the Refresh header, no script),
    and its export link gives the campaign's codes as CSV (fetched with
    the browser's session cookie: a download does not render)."""
    import admin_test as A  # its SQL helpers

    def generate():
        camp = L.campaign(name=f"browser-gen-{L.RUN}")
        d.go(url(f"/admin/codes/generate?campaign={camp}"))
        wait_for(lambda: d.find("#generate-form"), "the generate form")
        expect_clean(d, "the generate form")
        fits_phone(d, "the generate form")
        d.keys(d.one("#generate"), ENTER)
        wait_for(lambda: path_of(d).startswith("/admin/jobs/") and
                 d.find("#job"), "Generate goes to the job's page")
        wait_for(lambda: d.find('#job[data-state="done"]'),
                 "the job's page follows the job to done", timeout=30)
        expect(d.text(d.one("#job-count")) == "1,000 of 1,000",
               f"count: {d.text(d.one('#job-count'))!r}")
        expect_clean(d, "the job's page")
        fits_phone(d, "the job's page")
        shot(d, art, "job", tag)
        href = d.attr(d.one("#job-export"), "href") or ""
        path = "/" + href.split("/", 3)[3] if "://" in href else href
        cookie = d.s("GET", "/cookie/redeem_admin")["value"]
        r = L.request("GET", path, headers={
            "Cookie": f"redeem_admin={cookie}"})
        L.expect_status(r, 200, "the export link")
        lines = r.text().splitlines()
        want = sorted(x[0] for x in A.sql(
            "SELECT c.display FROM codes c JOIN campaigns k ON k.id = "
            f"c.campaign_id WHERE k.name = {A.lit(camp)}"))
        expect(lines[0].startswith("code,") and
               sorted(x.split(",")[0] for x in lines[1:]) == want and
               len(want) == 1000, f"the CSV: {len(lines)} lines")
    L.run("admin browser: generate 1,000 codes, the job page reaches "
          "done, its export link gives them", generate)


def main():
    browser_main("admin_browser_test.py", "admin browser", run_flow,
                 javascript=True, console=True)

if __name__ == "__main__":
    main()
