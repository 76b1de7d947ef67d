#!/usr/bin/env python3
"""End-to-end tests of the admin dashboard over plain HTTP, against real
nginx and FastCGI workers (started by tests/e2e/run.sh): the session gate,
login and logout, the cookie's flags, token rotation, CSRF, roles, tenant
isolation, and the overview's numbers.

Usage: admin_test.py BASE_URL
Environment: E2E_BIN (holds redeemctl), REDEEM_DB (the service's database:
fixtures through redeemctl, and a few reads of what the dashboard wrote:
webhook_endpoints.enabled, audit_log, sweep_leases); E2E_ONLY=word,... runs
the checks whose name has a word.

Each client sends its own X-Forwarded-For address (run.sh trusts the
loopback proxy), so the login throttle of one check never reaches another.
Every check prints "ok NAME" or "FAIL NAME: why".
"""

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402

COOKIE = "redeem_admin"
TOKEN_LEN = 43
NAV = ["/admin/", "/admin/campaigns", "/admin/codes", "/admin/redemptions",
       "/admin/semaphores", "/admin/leaked", "/admin/webhooks",
       "/admin/keys", "/admin/audit"]
PASSWORD = "correct horse " + L.RUN  # every fixture admin's
BULK = 1000   # redemptions of tenant C's big campaign: "1,000"
SMALL = 4     # and of its small one (the last after the webhook exists)
LOGIN_LIMIT = int(os.environ.get("REDEEM_LOGIN_LIMIT", "10"))


# ------------------------------------------------------------ a browser

class Client:
    """A cookie jar and a client address, like one browser."""

    def __init__(self, ip=None):
        self.jar = {}
        self.ip = ip or L.client_ip()

    def req(self, method, path, fields=None, cookies=None, headers=None):
        h = {"X-Forwarded-For": self.ip}
        jar = self.jar if cookies is None else cookies
        if jar:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in jar.items())
        body = None
        if fields is not None:
            body = urllib.parse.urlencode(fields)
            h["Content-Type"] = "application/x-www-form-urlencoded"
        h.update(headers or {})
        r = L.request(method, path, body, h)
        if cookies is None:
            for name, (value, attrs) in set_cookies(r).items():
                if attrs.get("max-age") == "0" or value == "":
                    self.jar.pop(name, None)
                else:
                    self.jar[name] = value
        return r

    def get(self, path, **kw):
        return self.req("GET", path, **kw)

    def post(self, path, fields, **kw):
        return self.req("POST", path, fields, **kw)


def set_cookies(r):
    """name -> (value, {attribute (lower case): value}) of a response."""
    out = {}
    for h in r.headers.get_all("Set-Cookie") or []:
        parts = [p.strip() for p in h.split(";")]
        if "=" not in parts[0]:
            continue
        k, v = parts[0].split("=", 1)
        attrs = {}
        for p in parts[1:]:
            a, _, b = p.partition("=")
            attrs[a.strip().lower()] = b.strip()
        out[k.strip()] = (v.strip(), attrs)
    return out


def page(r):
    return L.Html(r.text())


def form_csrf(r, action):
    """The csrf field of the form posting to action."""
    h = page(r)
    for f in h.find("form"):
        if f.get("action") == action:
            for i in h.inside(f, "input"):
                if i.get("name") == "csrf":
                    return i.get("value")
    raise L.Failure(f"no form to {action} with a csrf field: "
                    f"{L.short(r.body)}")


def login(c, email, password=PASSWORD):
    """Fetches the form (its CSRF token) and posts it, with the session
    cookie the client has, if any (a signed-in client is sent past the
    form); the answer."""
    r = c.get("/admin/login",
              cookies={k: v for k, v in c.jar.items() if k != COOKIE})
    L.expect_status(r, 200, "GET /admin/login")
    for name, (value, _) in set_cookies(r).items():
        c.jar[name] = value
    return c.post("/admin/login", {"csrf": form_csrf(r, "/admin/login"),
                                   "email": email, "password": password})


def signed_in(email, password=PASSWORD):
    c = Client()
    r = login(c, email, password)
    L.expect_status(r, 303, f"login of {email}")
    expect(COOKIE in c.jar, f"login of {email} set no {COOKIE} cookie")
    return c


def overview(c):
    r = c.get("/admin/")
    L.expect_status(r, 200, "GET /admin/ with a session")
    return r


def session_csrf(c):
    return form_csrf(overview(c), "/admin/logout")


def expect_to_login(r, what):
    expect(r.status == 303 and r.header("Location", "").endswith(
        "/admin/login"), f"{what}: {r.status} Location "
        f"{r.header('Location')!r}, want 303 to /admin/login")


def expect_page_error(r, status, word, what):
    """An HTML page (never JSON) with the status and its word shown."""
    expect(r.status == status, f"{what}: status {r.status}, want {status}: "
           f"{L.short(r.body)}")
    ct = r.header("Content-Type", "")
    expect(ct.startswith("text/html"), f"{what}: Content-Type {ct!r}")
    res = page(r).by_id("result")
    expect(res is not None, f"{what}: no #result: {L.short(r.body)}")
    expect(res.get("data-result") == word,
           f"{what}: data-result {res.get('data-result')!r}, want {word!r}")
    expect(len(res.text()) > 20, f"{what}: no sentence: {res.text()!r}")
    return res


# ------------------------------------------------------------- fixtures

def ctl_in(args, stdin=None):
    p = subprocess.run([os.path.join(L.BIN, "redeemctl"), *args],
                       input=stdin, capture_output=True, text=True,
                       timeout=60, env=os.environ.copy())
    if p.returncode != 0:
        raise L.Failure(f"redeemctl {' '.join(args)}: exit {p.returncode}: "
                        f"{L.short(p.stdout + p.stderr)}")
    return p.stdout


def admin_create(tenant, email, role):
    ctl_in(["admin", "create", "--tenant", tenant, "--email", email,
            "--role", role, "--password-stdin"], PASSWORD + "\n")
    return email


def sql(query):
    """Rows (tuples of strings) of a query on the service's database."""
    dsn = os.environ.get("REDEEM_DB", "")
    if dsn.startswith("sqlite:"):
        con = sqlite3.connect(dsn[len("sqlite:"):], timeout=10)
        try:
            rows = con.execute(query).fetchall()
            con.commit()
        finally:
            con.close()
        return [tuple("" if v is None else str(v) for v in r) for r in rows]
    u = urllib.parse.urlsplit(dsn)
    q = urllib.parse.parse_qs(u.query)
    args = ["mariadb", "--no-defaults", "-N", "-B", "-u",
            urllib.parse.unquote(u.username or "root")]
    if u.password:
        args.append("-p" + urllib.parse.unquote(u.password))
    if "socket" in q:
        args += ["-S", q["socket"][0]]
    else:
        args += ["-h", u.hostname or "127.0.0.1", "-P", str(u.port or 3306)]
    args += [u.path.lstrip("/"), "-e", query]
    p = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise L.Failure(f"mariadb: {L.short(p.stderr)}")
    return [tuple("" if v == "NULL" else v for v in line.split("\t"))
            for line in p.stdout.splitlines()]


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def api(method, path, obj, key):
    return L.api(method, path, obj, key=key)


def bulk_redeem(code, n, key, prefix):
    """n redemptions of code by n accounts, over 4 connections."""
    errors = []

    def worker(lo, hi):
        import http.client
        conn = http.client.HTTPConnection(L.HOST, L.PORT, timeout=L.TIMEOUT)
        try:
            for i in range(lo, hi):
                conn.request("POST", "/api/v1/redeem", json.dumps({
                    "code": code, "account": f"{prefix}{i}@example.com",
                    "client_ip": "10.250.0.1"}),
                    {"Authorization": "Bearer " + key,
                     "Content-Type": "application/json"})
                r = conn.getresponse()
                body = r.read()
                if r.status != 200:
                    errors.append(f"{r.status} {L.short(body)}")
                    return
        except Exception as e:  # reported below
            errors.append(repr(e))
        finally:
            conn.close()
    step = (n + 3) // 4
    ts = [threading.Thread(target=worker, args=(k, min(n, k + step)))
          for k in range(0, n, step)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    expect(not errors, f"bulk redemptions failed: {errors[:3]}")


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class World:
    """Tenant A (default) and a fresh tenant C, their admins, data."""

    def __init__(self):
        run = L.RUN
        self.a = "default"
        self.c = f"adm-{run}"
        ctl_in(["tenant", "create", self.c])
        self.c_key = ctl_in(["apikey", "create", "--tenant", self.c,
                             "--scope", "admin"]).strip()
        self.a_admin = admin_create(self.a, f"a-admin-{run}@example.com",
                                    "admin")
        self.a_viewer = admin_create(self.a, f"a-viewer-{run}@example.com",
                                     "viewer")
        self.c_owner = admin_create(self.c, f"c-owner-{run}@example.com",
                                    "owner")
        self.c_viewer = admin_create(self.c, f"c-viewer-{run}@example.com",
                                     "viewer")
        # A's own campaign and redemptions: a name C must never see.
        self.a_camp = L.campaign(name=f"a-only-{run}")
        for code in L.codes(self.a_camp, 2):
            L.expect_status(L.redeem(code, L.account("a")), 200, "A redeem")
        # C: 1,000 redemptions of one campaign, 4 of another.
        self.day = time.gmtime().tm_yday
        self.c_big, self.c_small = f"c-big-{run}", f"c-small-{run}"
        for name in (self.c_big, self.c_small):
            ctl_in(["campaign", "create", "--tenant", self.c, "--name", name])
        big = ctl_in(["codes", "generate", "--tenant", self.c, "--campaign",
                      self.c_big, "--count", "1", "--max-uses",
                      str(BULK)]).split()[0]
        small = ctl_in(["codes", "generate", "--tenant", self.c, "--campaign",
                        self.c_small, "--count", str(SMALL), "--max-uses",
                        "1"]).split()
        bulk_redeem(big, BULK, self.c_key, f"bulk-{run}-")
        for code in small[:-1]:
            L.expect_status(L.redeem(code, L.account("c"), key=self.c_key),
                            200, "C redeem")
        # A webhook that cannot be reached, made after those events (an
        # endpoint gets only events newer than itself), then one event.
        time.sleep(1.1)
        r = api("POST", "/api/v1/webhooks",
                {"url": f"http://127.0.0.1:{closed_port()}/e2e-{run}"},
                self.c_key)
        self.c_hook = L.expect_json_ok(r, 201, "C webhook")["webhook"]["id"]
        L.expect_status(L.redeem(small[-1], L.account("c"), key=self.c_key),
                        200, "C redeem after the webhook")
        # A's webhook, for guessed ids from C.
        r = L.api("POST", "/api/v1/webhooks",
                  {"url": f"http://127.0.0.1:{closed_port()}/a-{run}"})
        self.a_hook = L.expect_json_ok(r, 201, "A webhook")["webhook"]["id"]
        # A live hold in C.
        hold_code = ctl_in(["codes", "generate", "--tenant", self.c,
                            "--campaign", self.c_small, "--count", "1",
                            "--max-uses", "1"]).split()[0]
        r = api("POST", "/api/v1/holds", {
            "code": hold_code, "account": L.account("hold"),
            "external_id": f"adm-hold-{run}", "ttl_seconds": 3600},
            self.c_key)
        L.expect_json_ok(r, 201, "C live hold")


W = None


def world():
    expect(W is not None, "the fixtures were not made")
    return W


# ------------------------------------------------------------ the checks

def t_no_page_without_session():
    c = Client()
    for path in NAV + ["/admin/nope", "/admin/webhooks/1/disable"]:
        for m in ("GET", "HEAD"):
            r = c.req(m, path)
            expect_to_login(r, f"{m} {path} without a session")
            expect(b"Overview" not in r.body, f"{m} {path} leaked a page")
    r = c.get("/admin")
    expect(r.status in (301, 302, 303) and
           r.header("Location", "").endswith("/admin/"),
           f"GET /admin: {r.status} {r.header('Location')!r}")


def t_no_action_without_session():
    c = Client()
    for path in ("/admin/logout", f"/admin/webhooks/{world().c_hook}/disable",
                 "/admin/", "/admin/nope"):
        r = c.post(path, {"csrf": "x" * TOKEN_LEN})
        expect_page_error(r, 401, "unauthorized", f"POST {path}, no session")
    expect(sql(f"SELECT enabled FROM webhook_endpoints WHERE id = "
               f"{world().c_hook}") == [("1",)],
           "a POST without a session changed the webhook")


def t_stale_cookie():
    c = Client()
    fake = "A" * TOKEN_LEN
    r = c.get("/admin/", cookies={COOKIE: fake})
    expect_to_login(r, "GET /admin/ with a made-up token")
    sc = set_cookies(r).get(COOKIE)
    expect(sc is not None and sc[0] == "" and sc[1].get("max-age") == "0",
           f"the stale cookie is not cleared: {r.headers.get_all('Set-Cookie')}")
    r = c.post("/admin/logout", {"csrf": "x"}, cookies={COOKIE: fake})
    expect_page_error(r, 401, "unauthorized", "POST with a made-up token")


def t_login_form():
    c = Client()
    r = c.get("/admin/login")
    L.expect_status(r, 200, "GET /admin/login")
    h = page(r)
    forms = [f for f in h.find("form") if f.get("action") == "/admin/login"]
    expect(len(forms) == 1 and forms[0].get("method") == "post",
           "no POST form to /admin/login")
    names = {i.get("name"): i for i in h.inside(forms[0], "input")}
    expect(set(names) == {"csrf", "email", "password"},
           f"fields {sorted(names)}, want csrf, email, password")
    expect(names["password"].get("type") == "password", "password not hidden")
    expect(names["csrf"].get("type") == "hidden", "csrf not a hidden field")
    for f in ("email", "password"):
        iid = names[f].get("id")
        expect(iid and h.find("label", for_=iid), f"no label for {f}")
    expect("redeem_csrf" in c.jar, "the form set no CSRF cookie")
    expect(c.jar["redeem_csrf"] == names["csrf"].get("value"),
           "the form's token is not the cookie's")
    expect(b"<script" not in r.body.lower(), "a <script> on the login page")


def t_login_wrong_password():
    c = Client()
    r = login(c, world().a_admin, "wrong " + PASSWORD)
    res = expect_page_error(r, 401, "unauthorized", "a wrong password")
    expect(res.get("role") == "alert", "the error is not role=alert")
    expect("password" in res.text().lower(),
           f"the error does not say what was wrong: {res.text()!r}")
    expect(COOKIE not in set_cookies(r), "a failed login set a session cookie")
    email = page(r).find("input", name="email")
    expect(email and email[0].get("value") == world().a_admin,
           "the form does not keep the e-mail")
    r = login(c, "nobody-" + L.RUN + "@example.com")
    expect_page_error(r, 401, "unauthorized", "an unknown e-mail")


def t_login_needs_form_csrf():
    c = Client()
    r = c.get("/admin/login")
    tok = form_csrf(r, "/admin/login")
    for what, fields, jar in (
            ("no csrf field", {"email": world().a_admin,
                               "password": PASSWORD}, None),
            ("a wrong csrf field", {"csrf": "0" * len(tok),
                                    "email": world().a_admin,
                                    "password": PASSWORD}, None),
            ("no CSRF cookie", {"csrf": tok, "email": world().a_admin,
                                "password": PASSWORD}, {})):
        r = c.post("/admin/login", fields, cookies=jar)
        expect_page_error(r, 403, "forbidden", f"login with {what}")
        expect(COOKIE not in set_cookies(r), f"login with {what} signed in")


def t_login_cookie_flags():
    c = Client()
    r = login(c, world().a_admin)
    L.expect_status(r, 303, "login")
    expect(r.header("Location", "").endswith("/admin/"),
           f"login sends to {r.header('Location')!r}, want /admin/")
    sc = set_cookies(r).get(COOKIE)
    expect(sc is not None, f"no {COOKIE} cookie: "
           f"{r.headers.get_all('Set-Cookie')}")
    value, attrs = sc
    expect(len(value) == TOKEN_LEN and re.fullmatch(r"[A-Za-z0-9_-]+", value),
           f"token {value!r} is not {TOKEN_LEN} base64url characters")
    expect("httponly" in attrs, f"not HttpOnly: {attrs}")
    expect(attrs.get("samesite", "").lower() == "strict",
           f"not SameSite=Strict: {attrs}")
    expect(attrs.get("path") == "/admin", f"Path {attrs.get('path')!r}")
    expect("domain" not in attrs, f"a Domain attribute: {attrs}")
    secure = os.environ.get("REDEEM_COOKIE_SECURE") == "1"
    expect(("secure" in attrs) == secure,
           f"Secure {'missing' if secure else 'set'} with "
           f"REDEEM_COOKIE_SECURE={os.environ.get('REDEEM_COOKIE_SECURE')}")


def t_session_works():
    c = signed_in(world().a_admin)
    r = overview(c)
    h = page(r)
    expect(h.by_id("who-email") and
           h.by_id("who-email").text() == world().a_admin,
           "the page does not show who is signed in")
    expect(h.by_id("who-role") and h.by_id("who-role").text() == "admin",
           "the page does not show the role")
    nav = [a.get("href") for n in h.find("nav") for a in h.inside(n, "a")]
    expect(nav == NAV, f"nav {nav}")
    cur = [a.get("href") for a in h.find("a") if a.get("aria-current")]
    expect(cur == ["/admin/"], f"aria-current on {cur}")
    expect(len(session_csrf(c)) == TOKEN_LEN, "the logout form's token")
    for k in ("Content-Security-Policy", "X-Frame-Options",
              "X-Content-Type-Options"):
        expect(r.header(k), f"no {k} header")
    expect(b"<script" not in r.body.lower(), "a <script> on the overview")
    expect(r.header("Cache-Control") == "no-store", "cacheable admin page")
    for path in NAV[1:]:
        r = c.get(path)
        L.expect_status(r, 200, f"GET {path}")
        cur = [a.get("href") for a in page(r).find("a")
               if a.get("aria-current")]
        expect(cur == [path], f"{path}: aria-current on {cur}")
    r = c.get("/admin/nope")
    expect_page_error(r, 404, "not_found", "an unknown admin page")
    r = c.get("/admin/login")
    expect(r.status == 303 and r.header("Location", "").endswith("/admin/"),
           f"login form with a session: {r.status}")


def t_rotation():
    c = signed_in(world().a_admin)
    first = c.jar[COOKIE]
    r = login(c, world().a_admin)  # sends the first cookie with the form
    L.expect_status(r, 303, "second login")
    second = c.jar[COOKIE]
    expect(second != first, "a login over a session kept its token")
    expect_to_login(c.get("/admin/", cookies={COOKIE: first}),
                    "the token from before the login")
    overview(c)
    # Fixation: a token chosen before the login is never the session's.
    c2 = Client()
    planted = "P" * TOKEN_LEN
    c2.jar[COOKIE] = planted
    r = login(c2, world().a_admin)
    L.expect_status(r, 303, "login with a planted cookie")
    expect(c2.jar.get(COOKIE) not in (None, planted),
           "the planted token became the session's")
    overview(c2)


def t_logout_csrf():
    c = signed_in(world().a_admin)
    other = signed_in(world().a_admin)
    for what, fields in (("no csrf", {}),
                         ("an empty csrf", {"csrf": ""}),
                         ("a made-up csrf", {"csrf": "x" * TOKEN_LEN}),
                         ("another session's csrf",
                          {"csrf": session_csrf(other)}),
                         ("two csrf fields", None)):
        if fields is None:  # the right token and a second one
            body = urllib.parse.urlencode(
                [("csrf", session_csrf(c)), ("csrf", "x" * TOKEN_LEN)])
            r = L.request("POST", "/admin/logout", body, {
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"{COOKIE}={c.jar[COOKIE]}",
                "X-Forwarded-For": c.ip})
        else:
            r = c.post("/admin/logout", fields)
        expect_page_error(r, 403, "forbidden", f"logout with {what}")
        overview(c)  # still signed in


def t_logout_ends_session():
    c = signed_in(world().a_admin)
    old = c.jar[COOKIE]
    tok = session_csrf(c)
    r = c.post("/admin/logout", {"csrf": tok})
    expect_to_login(r, "logout")
    sc = set_cookies(r).get(COOKIE)
    expect(sc is not None and sc[0] == "" and sc[1].get("max-age") == "0"
           and sc[1].get("path") == "/admin",
           f"logout does not clear the cookie: "
           f"{r.headers.get_all('Set-Cookie')}")
    expect(COOKIE not in c.jar, "the jar kept the cookie")
    # The old cookie, replayed, is worth nothing.
    expect_to_login(c.get("/admin/", cookies={COOKIE: old}),
                    "GET with the logged-out cookie")
    r = c.post("/admin/logout", {"csrf": tok}, cookies={COOKIE: old})
    expect_page_error(r, 401, "unauthorized", "POST with the logged-out cookie")


def t_viewer():
    w = world()
    v = signed_in(w.c_viewer)
    r = overview(v)
    h = page(r)
    expect(h.by_id("who-role").text() == "viewer", "role not shown: viewer")
    disable = f"/admin/webhooks/{w.c_hook}/disable"
    expect(not [f for f in h.find("form") if f.get("action") == disable],
           "a viewer is offered the disable button")
    r = v.post(disable, {"csrf": session_csrf(v)})
    expect_page_error(r, 403, "forbidden", "a viewer's POST")
    expect(sql(f"SELECT enabled FROM webhook_endpoints WHERE id = "
               f"{w.c_hook}") == [("1",)], "a viewer disabled a webhook")
    r = v.post("/admin/logout", {"csrf": session_csrf(v)})
    expect_to_login(r, "a viewer's logout")


def failing_rows(c):
    t = page(overview(c)).by_id("failing-webhooks")
    if t is None:
        return {}
    return {tr.get("data-webhook"): tr for tr in
            page(overview(c)).inside(t, "tr") if tr.get("data-webhook")}


def t_failing_webhook_listed():
    w = world()
    c = signed_in(w.c_owner)
    rows = L.wait_until(lambda: failing_rows(c).get(str(w.c_hook)),
                        timeout=30, step=0.5)
    expect(rows, "the unreachable endpoint is not listed as failing "
           "within 30 s")
    h = page(overview(c))
    t = h.by_id("failing-webhooks")
    tr = [x for x in h.inside(t, "tr")
          if x.get("data-webhook") == str(w.c_hook)][0]
    txt = tr.text()
    expect(f"e2e-{L.RUN}" in txt, f"the row does not show the URL: {txt!r}")
    expect("No answer" in txt, f"the row does not say no answer: {txt!r}")
    expect(h.inside(tr, "time"), "the last attempt has no <time>")
    expect(h.by_id("no-failing") is None, "empty state beside a failing row")


def t_action_csrf_and_audit():
    w = world()
    c = signed_in(w.c_owner)
    path = f"/admin/webhooks/{w.c_hook}/disable"
    for what, fields in (("no csrf", {}),
                         ("a wrong csrf", {"csrf": "y" * TOKEN_LEN})):
        r = c.post(path, fields)
        expect_page_error(r, 403, "forbidden", f"disable with {what}")
    expect(sql(f"SELECT enabled FROM webhook_endpoints WHERE id = "
               f"{w.c_hook}") == [("1",)], "a forged POST disabled it")
    r = c.post(path, {"csrf": session_csrf(c)})
    expect(r.status == 303 and r.header("Location", "").endswith("/admin/"),
           f"disable: {r.status} {L.short(r.body)}")
    expect(sql(f"SELECT enabled FROM webhook_endpoints WHERE id = "
               f"{w.c_hook}") == [("0",)], "the webhook is still enabled")
    expect(str(w.c_hook) not in failing_rows(c),
           "a disabled endpoint is still listed as failing")
    rows = sql("SELECT a.email, a.ip, a.object, a.detail FROM audit_log a "
               "JOIN tenants t ON t.id = a.tenant_id WHERE t.name = "
               f"{lit(w.c)} AND a.action = 'webhook.disable'")
    expect(len(rows) == 1, f"audit rows for the disable: {rows}")
    email, ip, obj, detail = rows[0]
    expect(email == w.c_owner and ip == c.ip and
           obj == f"webhook {w.c_hook}" and f"e2e-{L.RUN}" in detail,
           f"the audit row: {rows[0]} (want {w.c_owner}, {c.ip})")


def card(h, id_):
    n = h.by_id(id_)
    expect(n is not None, f"no #{id_}")
    return n.text()


def t_overview_numbers():
    w = world()
    c = signed_in(w.c_owner)
    r = overview(c)
    h = page(r)
    total = BULK + SMALL
    want = f"{total:,}"
    same_day = time.gmtime().tm_yday == w.day
    expect(card(h, "n-month") == want, f"30 days {card(h, 'n-month')!r}, "
           f"want {want!r}")
    expect(card(h, "n-week") == want, f"7 days {card(h, 'n-week')!r}")
    if same_day:
        expect(card(h, "n-today") == want, f"today {card(h, 'n-today')!r}")
    expect(card(h, "n-holds") == "1", f"live holds {card(h, 'n-holds')!r}")
    expect(card(h, "n-leaked") == "0", f"leaked {card(h, 'n-leaked')!r}")
    # Top campaigns: C's two, most redeemed first, formatted.
    t = h.by_id("top-campaigns")
    expect(t is not None, "no top campaigns table")
    rows = [[td.text() for td in h.inside(tr, "td")]
            for tr in h.inside(t, "tr") if h.inside(tr, "td")]
    expect(rows == [[w.c_big, f"{BULK:,}"], [w.c_small, str(SMALL)]],
           f"top campaigns {rows}")
    # The chart: 30 bars, today's the tallest, each with its tooltip.
    svg = [n for n in h.find("svg") if "chart" in n.get("class", "")]
    expect(len(svg) == 1, "no chart")
    expect(svg[0].get("role") == "img" and svg[0].get("aria-labelledby"),
           "the chart is not an image with a name")
    bars = h.inside(svg[0], "rect")
    expect(len(bars) == 30, f"{len(bars)} bars, want 30")
    if same_day:
        last = bars[-1]
        expect(last.get("class") == "bar" and last.get("height") == "100",
               f"today's bar: {last.attrs}")
        expect(f"{total:,} redemptions" in last.text(),
               f"today's tooltip {last.text()!r}")
        expect(all(b.get("class") == "bar-zero" for b in bars[:-1]),
               "a bar for a day without redemptions")
    # The table of the same numbers, and no empty states beside data.
    days = h.by_id("per-day")
    rows = [[td.text() for td in h.inside(tr, "td")]
            for tr in h.inside(days, "tr") if h.inside(tr, "td")]
    expect(len(rows) == 30, f"{len(rows)} rows in the per-day table")
    if same_day:
        expect(rows[0][1] == want, f"today's row {rows[0]}")
    for eid in ("no-redemptions", "no-top"):
        expect(h.by_id(eid) is None, f"#{eid} shown beside data")
    times = [t for t in h.find("time") if t.get("datetime")]
    expect(times and all(re.fullmatch(r"\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\dZ)?",
                                      t.get("datetime")) for t in times),
           "a <time> without a machine-readable datetime")
    expect("UTC" in card(h, "main"), "times are not said to be UTC")


def t_empty_states():
    """A tenant with nothing: zeros and the empty states, no tables."""
    t = f"empty-{L.RUN}"
    ctl_in(["tenant", "create", t])
    email = admin_create(t, f"empty-{L.RUN}@example.com", "admin")
    h = page(overview(signed_in(email)))
    for eid in ("n-today", "n-week", "n-month", "n-holds", "n-leaked"):
        expect(card(h, eid) == "0", f"#{eid} {card(h, eid)!r}")
    for eid in ("no-redemptions", "no-top", "no-failing"):
        expect(h.by_id(eid) is not None, f"no empty state #{eid}")
    for eid in ("top-campaigns", "failing-webhooks"):
        expect(h.by_id(eid) is None, f"an empty #{eid} table")


def t_isolation():
    w = world()
    a = signed_in(w.a_admin)
    c = signed_in(w.c_owner)
    ra, rc = overview(a), overview(c)
    expect(w.c_big.encode() not in ra.body and w.c_small.encode() not in
           ra.body, "tenant A's overview names C's campaigns")
    expect(w.a_camp.encode() not in rc.body,
           "tenant C's overview names A's campaign")
    expect(card(page(rc), "n-month") == f"{BULK + SMALL:,}",
           "C's count is not its own")
    expect(card(page(ra), "n-month") != card(page(rc), "n-month"),
           "A and C show the same count")
    expect(f"a-{L.RUN}".encode() not in rc.body, "C sees A's webhook")
    # A guessed id of the other tenant's webhook is not found, unchanged.
    r = c.post(f"/admin/webhooks/{w.a_hook}/disable",
               {"csrf": session_csrf(c)})
    expect_page_error(r, 404, "not_found", "C disabling A's webhook")
    expect(sql(f"SELECT enabled FROM webhook_endpoints WHERE id = "
               f"{w.a_hook}") == [("1",)], "C disabled A's webhook")
    for bad in ("0", "-1", "x", "99999999999999999999"):
        r = c.post(f"/admin/webhooks/{bad}/disable",
                   {"csrf": session_csrf(c)})
        expect_page_error(r, 404, "not_found", f"webhook id {bad!r}")


def take_lease(job, seconds):
    """Holds a sweeper job's lease as another sweeper would, so the job
    skips its runs; 1 when taken."""
    now = int(time.time())
    holder = f"e2e-admin-{L.RUN}"
    for _ in range(100):
        sql(f"UPDATE sweep_leases SET holder = {lit(holder)}, expires_at = "
            f"{now + seconds} WHERE job = {lit(job)} AND (expires_at <= "
            f"{now} OR holder = {lit(holder)})")
        if sql(f"SELECT holder FROM sweep_leases WHERE job = {lit(job)}") == \
                [(holder,)]:
            return True
        time.sleep(0.1)
        now = int(time.time())
    return False


def give_lease(job):
    sql(f"UPDATE sweep_leases SET expires_at = 0 WHERE job = {lit(job)} AND "
        f"holder = {lit('e2e-admin-' + L.RUN)}")


def t_leaked():
    w = world()
    c = signed_in(w.c_owner)
    expect(take_lease("release_leaked", 60),
           "could not take the release_leaked lease from the sweeper")
    try:
        sem = f"adm-sem-{L.RUN}"
        L.expect_json_ok(api("PUT", f"/api/v1/semaphores/{sem}",
                             {"capacity": 5}, w.c_key), 200, "semaphore")
        L.expect_json_ok(api("POST", "/api/v1/permits", {
            "external_id": f"adm-leak-{L.RUN}", "owner": "e2e",
            "ttl_seconds": 1, "semaphores": [{"name": sem, "count": 1}]},
            w.c_key), 201, "a 1 s permit")
        code = ctl_in(["codes", "generate", "--tenant", w.c, "--campaign",
                       w.c_small, "--count", "1", "--max-uses", "1"]).split()[0]
        L.expect_json_ok(api("POST", "/api/v1/holds", {
            "code": code, "account": L.account("leak"),
            "external_id": f"adm-leak-hold-{L.RUN}", "ttl_seconds": 1},
            w.c_key), 201, "a 1 s hold")
        time.sleep(2.2)
        h = page(overview(c))
        expect(card(h, "n-leaked") == "2", f"leaked {card(h, 'n-leaked')!r}"
               ", want 2 (a permit and a hold past their TTL)")
        expect(card(h, "n-holds") == "1", "the leaked hold counts as live")
        sub = [d for d in h.find("dd") if "sub" in d.get("class", "")]
        expect(sub and "1 permits and 1 holds" in sub[0].text(),
               f"the breakdown: {sub[0].text() if sub else None!r}")
        warn = [d for d in h.find("div") if "card-warn" in d.get("class", "")]
        expect(warn, "leaked > 0 is not marked")
    finally:
        give_lease("release_leaked")
    # Swept: no longer leaked.
    ok = L.wait_until(lambda: card(page(overview(c)), "n-leaked") == "0",
                      timeout=20, step=0.5)
    expect(ok, "still leaked 20 s after the sweeper could run again")


def t_login_throttled():
    """Per address: the limit's failures from one address, then even the
    right password from it is refused; per e-mail: from another address
    too. Others still sign in."""
    email = admin_create(world().c, f"throttle-{L.RUN}@example.com", "admin")
    c = Client()
    statuses = []
    for _ in range(LOGIN_LIMIT + 5):
        r = login(c, email, "wrong " + PASSWORD)
        statuses.append(r.status)
        if r.status == 429:
            break
    expect(statuses[-1] == 429,
           f"no 429 after {len(statuses)} failed logins: {statuses}")
    expect(len(statuses) == LOGIN_LIMIT + 1 and
           set(statuses[:-1]) == {401},
           f"429 after {len(statuses) - 1} failures, want {LOGIN_LIMIT}: "
           f"{statuses}")
    res = expect_page_error(r, 429, "rate_limited", "a throttled login")
    ra = r.header("Retry-After")
    expect(ra and ra.isdigit() and int(ra) >= 1, f"Retry-After {ra!r}")
    expect("wait" in res.text().lower(), f"the page does not say to wait: "
           f"{res.text()!r}")
    r = login(c, email)
    expect_page_error(r, 429, "rate_limited", "the right password, throttled")
    expect(COOKIE not in set_cookies(r), "a throttled login signed in")
    r = login(Client(), email)
    expect_page_error(r, 429, "rate_limited",
                      "the same e-mail from another address")
    # Not a lockout of everyone: another admin from another address.
    signed_in(world().c_owner)


def crawl_key(path):
    """Pages of one kind (a code's, a campaign's...) share a key."""
    parts = path.split("?")[0].strip("/").split("/")
    return "/".join(parts[:2]) + ("/*" * min(len(parts) - 2, 2))


def t_pages_valid_html():
    """Every dashboard page an admin can reach by following links from
    the overview (up to 3 of each kind, 80 in all), in tenant A, which
    the other suites have filled: valid HTML by e2elib's rules."""
    c = signed_in(world().a_admin)
    seen, todo, per_kind, bad = set(), ["/admin/"], {}, []
    while todo and len(seen) < 80:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        r = c.get(path)
        if r.status != 200 or not r.header("Content-Type", "").startswith(
                "text/html"):
            continue
        bad += [f"{path}: {p}" for p in L.html_problems(r.text())]
        for a in page(r).find("a"):
            href = a.get("href", "")
            if not href.startswith("/admin/") or "export" in href or \
                    href in seen:
                continue
            k = crawl_key(href)
            if per_kind.get(k, 0) < 3:
                per_kind[k] = per_kind.get(k, 0) + 1
                todo.append(href)
    expect(len(seen) >= 12, f"only {len(seen)} pages reached")
    expect(not bad, f"{len(bad)} problems in {len(seen)} pages: "
           + "; ".join(bad[:8]))
    for path in ("/admin/login", "/admin/nope"):
        r = Client().get(path) if path == "/admin/login" else c.get(path)
        probs = L.html_problems(r.text())
        expect(not probs, f"{path}: {'; '.join(probs[:5])}")


def t_logout_audit_and_time_zone():
    """An admin in America/New_York (set by redeemctl admin time-zone)
    sees the audit log's times in New York time, UTC in the title; their
    logout is an audit row."""
    t = f"tz-{L.RUN}"
    ctl_in(["tenant", "create", t])
    email = admin_create(t, f"tz-{L.RUN}@example.com", "owner")
    c = signed_in(email)
    r = c.post("/admin/logout", {"csrf": session_csrf(c)})
    L.expect_status(r, 303, "logout")
    rows = sql("SELECT action, object FROM audit_log a JOIN tenants t ON "
               f"t.id = a.tenant_id WHERE t.name = {lit(t)} AND "
               "action = 'admin.logout'")
    expect(rows == [("admin.logout", email)], f"logout audit rows {rows}")
    ctl_in(["admin", "time-zone", "--tenant", t, "--email", email,
            "America/New_York"])
    c = signed_in(email)
    r = c.get("/admin/audit")
    L.expect_status(r, 200, "GET /admin/audit")
    times = [n for n in page(r).find("time") if n.get("datetime")]
    expect(times, "no <time> on the audit page")
    for n in times:
        utc = time.strptime(n.get("datetime"), "%Y-%m-%dT%H:%M:%SZ")
        m = re.fullmatch(r"(\d{4}-\d\d-\d\d \d\d:\d\d) (EST|EDT)",
                         n.text().strip())
        expect(m, f"time {n.text()!r} not in New York time")
        expect(n.get("title") == time.strftime("%Y-%m-%d %H:%M UTC", utc),
               f"title {n.get('title')!r} is not the UTC time")
        local = time.strptime(m.group(1), "%Y-%m-%d %H:%M")
        minute = time.strptime(n.get("title"), "%Y-%m-%d %H:%M UTC")
        behind = (time.mktime(minute) - time.mktime(local)) / 3600
        expect(behind == (4 if m.group(2) == "EDT" else 5),
               f"{n.text()!r} is {behind} h behind {n.get('title')!r}")


TESTS = [
    ("admin: no page without a session (GET -> 303 /admin/login)",
     t_no_page_without_session),
    ("admin: no action without a session (POST -> 401)",
     t_no_action_without_session),
    ("admin: a stale cookie is cleared", t_stale_cookie),
    ("admin: login form: email, password, CSRF token", t_login_form),
    ("admin: wrong password -> 401 with the error shown",
     t_login_wrong_password),
    ("admin: login without the form's CSRF token -> 403",
     t_login_needs_form_csrf),
    ("admin: login -> 303, cookie HttpOnly, SameSite=Strict, Path=/admin",
     t_login_cookie_flags),
    ("admin: a session sees the overview, who, the nav", t_session_works),
    ("admin: login rotates the token, a planted one is not kept",
     t_rotation),
    ("admin: logout without the session's CSRF token -> 403",
     t_logout_csrf),
    ("admin: logout ends the session, clears the cookie",
     t_logout_ends_session),
    ("admin: a viewer cannot change anything", t_viewer),
    ("admin: a failing webhook endpoint is listed", t_failing_webhook_listed),
    ("admin: an action needs the CSRF token and is audited",
     t_action_csrf_and_audit),
    ("admin: overview numbers, formatting, chart, top campaigns",
     t_overview_numbers),
    ("admin: empty states", t_empty_states),
    ("admin: tenant isolation", t_isolation),
    ("admin: leaked permits and holds counted until swept", t_leaked),
    ("admin: login throttled -> 429 with Retry-After", t_login_throttled),
    ("admin: every page reached from the overview is valid HTML",
     t_pages_valid_html),
    ("admin: logout is audited; times in the admin's zone, UTC on hover",
     t_logout_audit_and_time_zone),
]


def main():
    L.main("admin: fixtures (two tenants, admins, 1,004 redemptions)",
           World, TESTS, sys.modules[__name__])


if __name__ == "__main__":
    main()
