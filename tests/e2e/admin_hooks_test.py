#!/usr/bin/env python3
"""End-to-end tests of the dashboard's webhooks and API keys pages over
plain HTTP, against real nginx, FastCGI workers and the sweeper (run.sh):
adding an endpoint shows its secret once; rotating makes a new secret
that signs every delivery from then on (a local receiver checks); the
deliveries list shows state, attempts, response code and the last error
(escaped); a dead delivery redelivered one by one and all at once; API
keys created (shown once), used (last used shows), revoked (401 on the
API); CSRF missing -> 403, a viewer -> 403, another tenant's ids -> 404,
bad input -> 400; every action audited.

Usage: admin_hooks_test.py BASE_URL (environment as admin_test.py).
Fixtures live in a tenant of their own.
"""

import hashlib
import hmac
import http.server
import json
import os
import re
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import admin_test as A  # noqa: E402
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402

SIG = re.compile(r"^t=(\d+),v1=([0-9a-f]{64})$")


class Receiver:
    """Records every POST on a free loopback port and answers 200."""

    def __init__(self):
        self.lock = threading.Lock()
        self.got = []
        rec = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with rec.lock:
                    rec.got.append((self.headers.get("Redeem-Signature"),
                                    body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/hook"

    def for_account(self, acct):
        """The (signature, body) posts whose redemption is acct's."""
        with self.lock:
            return [(s, b) for s, b in self.got if acct.encode() in b]


def signed_by(sig, body, secret):
    m = SIG.match(sig or "")
    if not m:
        return False
    want = hmac.new(secret.encode(), m.group(1).encode() + b"." + body,
                    hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, m.group(2))


class World:
    def __init__(self):
        run = L.RUN
        self.t = f"hooks-{run}"
        A.ctl_in(["tenant", "create", self.t])
        self.key = A.ctl_in(["apikey", "create", "--tenant", self.t,
                             "--scope", "admin"]).strip()
        self.owner = A.admin_create(self.t, f"hooks-owner-{run}@example.com",
                                    "owner")
        self.viewer = A.admin_create(self.t,
                                     f"hooks-viewer-{run}@example.com",
                                     "viewer")
        self.camp = f"hooks-{run}"
        A.ctl_in(["campaign", "create", "--tenant", self.t, "--name",
                  self.camp])
        self.codes = A.ctl_in([
            "codes", "generate", "--tenant", self.t, "--campaign",
            self.camp, "--count", "12", "--max-uses", "1"]).split()
        self.rx = Receiver()
        self.c = A.signed_in(self.owner)
        self.v = A.signed_in(self.viewer)
        # The default tenant's endpoint and key: never reachable here.
        r = L.api("POST", "/api/v1/webhooks",
                  {"url": f"http://127.0.0.1:{A.closed_port()}/other"})
        self.other_hook = L.expect_json_ok(r, 201, "A's webhook")[
            "webhook"]["id"]
        okey = A.ctl_in(["apikey", "create", "--tenant", "default",
                         "--scope", "redeem"]).strip()
        self.other_key = A.sql("SELECT id FROM api_keys WHERE lookup = "
                               f"{A.lit(okey[4:12])}")[0][0]
        self.hook = None     # the receiver's endpoint, its id
        self.secret = None   # and its secret as last shown
        self.dead_hook = None  # an endpoint on a closed port


W = None


def redeem(acct):
    code = W.codes.pop()
    L.expect_status(L.redeem(code, acct, key=W.key), 200, "redeem")


def get_ok(c, path):
    r = c.get(path)
    L.expect_status(r, 200, f"GET {path}")
    return r


def audited(action, obj):
    return A.sql("SELECT a.detail FROM audit_log a JOIN tenants t ON "
                 f"t.id = a.tenant_id WHERE t.name = {A.lit(W.t)} AND "
                 f"a.action = {A.lit(action)} AND a.object = {A.lit(obj)}")


def shown_secret(r, prefix, what):
    L.expect_status(r, 200, what)
    cc = r.header("Cache-Control", "")
    expect("no-store" in cc, f"{what}: Cache-Control {cc!r}")
    h = A.page(r)
    box = h.by_id("secret")
    expect(box is not None, f"{what}: no #secret: {L.short(r.body)}")
    s = box.get("value")
    expect(s and s.startswith(prefix), f"{what}: secret {s!r}")
    note = h.by_id("secret-note")
    expect(note is not None and "only time" in note.text(),
           f"{what}: no shown-once note")
    return s


def t_add_endpoint():
    r = get_ok(W.c, "/admin/webhooks")
    expect(A.page(r).by_id("no-webhooks") is not None, "no empty state")
    csrf = A.form_csrf(r, "/admin/webhooks")
    A.expect_page_error(W.c.post("/admin/webhooks", {"url": W.rx.url}),
                        403, "forbidden", "add without CSRF")
    for bad in ({}, {"url": ""}, {"url": "ftp://example.com/x"},
                {"url": "http://user:pw@example.com/"},
                {"url": "https://" + "a" * 2100 + ".com/"},
                {"url": "http://exa mple.com/"}):
        A.expect_page_error(W.c.post("/admin/webhooks", {"csrf": csrf,
                                                         **bad}),
                            400, "bad_request", f"add {bad!r:.40}")
    expect(A.sql("SELECT COUNT(*) FROM webhook_endpoints w JOIN tenants t "
                 f"ON t.id = w.tenant_id WHERE t.name = {A.lit(W.t)}"
                 ) == [("0",)], "a refused endpoint was made")
    r = W.c.post("/admin/webhooks", {"csrf": csrf, "url": W.rx.url})
    W.secret = shown_secret(r, "whsec_", "add an endpoint")
    W.hook = int(A.sql("SELECT MAX(w.id) FROM webhook_endpoints w JOIN "
                       "tenants t ON t.id = w.tenant_id WHERE t.name = "
                       f"{A.lit(W.t)}")[0][0])
    expect(len(audited("webhook.create", f"webhook {W.hook}")) == 1,
           "no audit row for the new endpoint")
    for path in ("/admin/webhooks", f"/admin/webhooks/{W.hook}"):
        r = get_ok(W.c, path)
        expect(W.secret not in r.text(), f"{path} shows the secret again")
    r = get_ok(W.c, "/admin/webhooks")
    rows = [n for n in A.page(r).find("tr")
            if n.get("data-webhook") == str(W.hook)]
    expect(len(rows) == 1 and W.rx.url in rows[0].text(),
           "the endpoint is not listed with its URL")
    # Signed with it.
    acct = L.account("hk1")
    redeem(acct)
    got = L.wait_until(lambda: W.rx.for_account(acct), timeout=20, step=0.1)
    expect(got, "no delivery to the receiver within 20 s")
    expect(signed_by(got[0][0], got[0][1], W.secret),
           f"not signed with the shown secret: {got[0][0]}")


def t_rotate():
    path = f"/admin/webhooks/{W.hook}/rotate"
    A.expect_page_error(W.c.post(path, {}), 403, "forbidden",
                        "rotate without CSRF")
    csrf = A.form_csrf(get_ok(W.c, f"/admin/webhooks/{W.hook}"), path)
    old = W.secret
    new = shown_secret(W.c.post(path, {"csrf": csrf}), "whsec_", "rotate")
    expect(new != old, "rotate gave the same secret")
    W.secret = new
    expect(len(audited("webhook.rotate", f"webhook {W.hook}")) == 1,
           "no audit row for the rotation")
    acct = L.account("hk2")
    redeem(acct)
    got = L.wait_until(lambda: W.rx.for_account(acct), timeout=20, step=0.1)
    expect(got, "no delivery after the rotation within 20 s")
    sig, body = got[0]
    expect(signed_by(sig, body, new), "not signed with the new secret")
    expect(not signed_by(sig, body, old), "still signed with the old one")
    r = get_ok(W.c, f"/admin/webhooks/{W.hook}")
    expect(new not in r.text(), "the endpoint's page shows the secret")


def delivery_rows(r):
    return {n.get("data-delivery"): n for n in A.page(r).find("tr")
            if n.get("data-delivery")}


def t_deliveries_and_redeliver():
    csrf = A.session_csrf(W.c)
    url = f"http://127.0.0.1:{A.closed_port()}/closed"
    r = W.c.post("/admin/webhooks", {"csrf": csrf, "url": url})
    shown_secret(r, "whsec_", "add the closed-port endpoint")
    hid = A.sql("SELECT MAX(w.id) FROM webhook_endpoints w JOIN tenants t "
                f"ON t.id = w.tenant_id WHERE t.name = {A.lit(W.t)}")[0][0]
    W.dead_hook = hid
    for i in range(3):
        redeem(L.account(f"hk-dead{i}"))

    def tried():
        n = A.sql("SELECT COUNT(*) FROM webhook_deliveries WHERE "
                  f"endpoint_id = {hid} AND attempts >= 1 AND "
                  "last_error IS NOT NULL")[0][0]
        return n == "3"
    expect(L.wait_until(tried, timeout=20, step=0.2),
           "the closed port's deliveries were not tried within 20 s")
    A.sql("UPDATE webhook_deliveries SET state = 'dead' WHERE "
          f"endpoint_id = {hid}")
    did = A.sql("SELECT MIN(id) FROM webhook_deliveries WHERE "
                f"endpoint_id = {hid}")[0][0]
    A.sql("UPDATE webhook_deliveries SET last_status = 503, last_error = "
          f"'<b>busy</b>' WHERE id = {did}")
    r = get_ok(W.c, f"/admin/webhooks/{hid}")
    rows = delivery_rows(r)
    expect(len(rows) == 3, f"{len(rows)} deliveries listed, want 3")
    tr = rows[did]
    txt = tr.text()
    expect(tr.get("data-state") == "dead", f"state {tr.get('data-state')}")
    expect("503" in txt and "<b>busy</b>" in txt and
           "&lt;b&gt;busy" in r.text() and "<b>busy" not in r.text(),
           f"response code or escaped error missing: {txt!r}")
    expect("code.redeemed" in txt and "evt_" in txt, "no event shown")
    expect(A.page(r).inside(tr, "time"), "no <time> in the row")
    expect(A.page(r).by_id("webhook-dead").text().strip() == "3",
           "the dead count is not 3")
    r = get_ok(W.c, f"/admin/webhooks/{hid}?state=delivered")
    expect(not delivery_rows(r) and
           A.page(r).by_id("no-deliveries") is not None,
           "the delivered filter is not empty")
    for bad in ("state=bogus", "before=x", "before=-3",
                "state=dead&state=pending"):
        A.expect_page_error(W.c.get(f"/admin/webhooks/{hid}?{bad}"), 400,
                            "bad_request", f"deliveries?{bad}")

    path = f"/admin/webhooks/{hid}/deliveries/{did}/redeliver"
    A.expect_page_error(W.c.post(path, {}), 403, "forbidden",
                        "redeliver without CSRF")
    csrf = A.form_csrf(get_ok(W.c, f"/admin/webhooks/{hid}"), path)
    r = W.c.post(path, {"csrf": csrf})
    expect(r.status == 303, f"redeliver: {r.status} {L.short(r.body)}")
    st = A.sql("SELECT state FROM webhook_deliveries WHERE id = "
               f"{did}")[0][0]
    expect(st == "pending", f"redelivered delivery is {st}")
    expect(A.sql("SELECT COUNT(*) FROM webhook_deliveries WHERE "
                 f"endpoint_id = {hid} AND state = 'dead'")[0][0] == "2",
           "redelivering one moved others")
    det = audited("webhook.redeliver", f"webhook {hid}")
    expect(det == [(f"delivery {did}: 1 redelivered",)],
           f"audit of the redelivery: {det}")
    r = W.c.post(f"/admin/webhooks/{hid}/redeliver-dead", {"csrf": csrf})
    expect(r.status == 303, f"redeliver dead: {r.status}")
    expect(A.sql("SELECT COUNT(*) FROM webhook_deliveries WHERE "
                 f"endpoint_id = {hid} AND state = 'dead'")[0][0] == "0",
           "dead deliveries left after redeliver-dead")
    det = audited("webhook.redeliver_dead", f"webhook {hid}")
    expect(det == [("all dead: 2 redelivered",)],
           f"audit of redeliver-dead: {det}")
    r = get_ok(W.c, r.header("Location"))
    n = A.page(r).by_id("notice")
    expect(n is not None and "2 deliveries" in n.text(),
           "no notice of the redelivery")


def t_disable():
    path = f"/admin/webhooks/{W.dead_hook}/disable"
    csrf = A.form_csrf(get_ok(W.c, f"/admin/webhooks/{W.dead_hook}"), path)
    r = W.c.post(path, {"csrf": csrf, "next": "webhooks"})
    expect(r.status == 303 and "/admin/webhooks" in r.header("Location"),
           f"disable: {r.status} {r.header('Location')}")
    expect(A.sql("SELECT enabled FROM webhook_endpoints WHERE id = "
                 f"{W.dead_hook}") == [("0",)], "still enabled")
    r = W.c.post(f"/admin/webhooks/{W.dead_hook}/redeliver-dead",
                 {"csrf": csrf})
    A.expect_page_error(r, 409, "conflict", "redeliver on a disabled one")


def key_row(kid):
    """The keys page (its text, its Html) and the key's row."""
    r = get_ok(W.c, "/admin/keys")
    h = A.page(r)
    rows = [n for n in h.find("tr") if n.get("data-key") == kid]
    return r.text(), h, (rows[0] if rows else None)


def t_keys():
    r = get_ok(W.c, "/admin/keys")
    csrf = A.form_csrf(r, "/admin/keys")
    A.expect_page_error(W.c.post("/admin/keys", {"scope": "redeem"}), 403,
                        "forbidden", "a key without CSRF")
    for bad in ({}, {"scope": "root"}, {"scope": "redeem",
                                        "label": "x" * 101}):
        A.expect_page_error(W.c.post("/admin/keys", {"csrf": csrf, **bad}),
                            400, "bad_request", f"key {list(bad)}")
    r = W.c.post("/admin/keys", {"csrf": csrf, "scope": "redeem",
                                 "label": "ci <bot>"})
    key = shown_secret(r, "rdm_", "create a key")
    kid = A.sql(f"SELECT id FROM api_keys WHERE lookup = "
                f"{A.lit(key[4:12])}")[0][0]
    expect(len(audited("apikey.create", f"key {kid} {key[:13]}")) == 1,
           "no audit row for the key")
    text, h, tr = key_row(kid)
    expect(tr is not None, "the new key is not listed")
    expect(key not in text and key[13:] not in text,
           "the keys page shows the key")
    expect(key[:13] in tr.text() and "ci <bot>" in tr.text(),
           f"the row: {tr.text()!r}")
    expect("never" in tr.text(), "a fresh key was used")
    redeem_with = W.codes.pop()
    L.expect_status(L.redeem(redeem_with, L.account("hk-key"), key=key),
                    200, "redeem with the new key")
    _, h, tr = key_row(kid)
    expect(h.inside(tr, "time") and len(h.inside(tr, "time")) >= 2,
           "last used is not shown after a call")
    path = f"/admin/keys/{kid}/revoke"
    A.expect_page_error(W.c.post(path, {}), 403, "forbidden",
                        "revoke without CSRF")
    r = W.c.post(path, {"csrf": csrf})
    expect(r.status == 303, f"revoke: {r.status}")
    L.expect_error(L.redeem(W.codes.pop(), L.account("hk-key2"), key=key),
                   401, "unauthorized", "a revoked key on the API")
    expect(len(audited("apikey.revoke", f"key {kid}")) == 1,
           "no audit row for the revocation")
    A.expect_page_error(W.c.post("/admin/keys/x/revoke", {"csrf": csrf}),
                        404, "not_found", "revoke key x")


def t_viewer():
    csrf = A.session_csrf(W.v)
    for path in ("/admin/webhooks", "/admin/keys"):
        r = get_ok(W.v, path)
        expect(not [f for f in A.page(r).find("form")
                    if f.get("action") != "/admin/logout"],
               f"a viewer gets forms on {path}")
    for path, fields in (
            ("/admin/webhooks", {"url": W.rx.url}),
            (f"/admin/webhooks/{W.hook}/rotate", {}),
            (f"/admin/webhooks/{W.hook}/disable", {}),
            (f"/admin/webhooks/{W.hook}/redeliver-dead", {}),
            ("/admin/keys", {"scope": "admin"}),
            (f"/admin/keys/{W.other_key}/revoke", {})):
        A.expect_page_error(W.v.post(path, {"csrf": csrf, **fields}), 403,
                            "forbidden", f"a viewer's POST {path}")


def t_isolation():
    csrf = A.session_csrf(W.c)
    oh = W.other_hook
    A.expect_page_error(W.c.get(f"/admin/webhooks/{oh}"), 404, "not_found",
                        "A's endpoint page")
    A.expect_page_error(W.c.get("/admin/webhooks/abc"), 404, "not_found",
                        "endpoint abc")
    odid = A.sql("SELECT COALESCE(MIN(id), 1) FROM webhook_deliveries "
                 f"WHERE endpoint_id = {W.hook}")[0][0]
    for path in (f"/admin/webhooks/{oh}/rotate",
                 f"/admin/webhooks/{oh}/disable",
                 f"/admin/webhooks/{oh}/redeliver-dead",
                 f"/admin/webhooks/{oh}/deliveries/{odid}/redeliver",
                 f"/admin/keys/{W.other_key}/revoke"):
        A.expect_page_error(W.c.post(path, {"csrf": csrf}), 404,
                            "not_found", f"another tenant's {path}")
    expect(A.sql(f"SELECT enabled FROM webhook_endpoints WHERE id = {oh}"
                 ) == [("1",)], "A's endpoint was disabled")
    expect(A.sql(f"SELECT revoked_at FROM api_keys WHERE id = "
                 f"{W.other_key}") == [("",)], "A's key was revoked")
    r = get_ok(W.c, "/admin/keys")
    expect(not [n for n in A.page(r).find("tr")
                if n.get("data-key") == W.other_key], "A's key is listed")


TESTS = [
    ("admin hooks: add an endpoint, secret shown once, bad URL -> 400",
     t_add_endpoint),
    ("admin hooks: rotate, deliveries signed with the new secret",
     t_rotate),
    ("admin hooks: deliveries listed; redeliver one and all dead",
     t_deliveries_and_redeliver),
    ("admin hooks: disable from the page; redelivery then refused",
     t_disable),
    ("admin keys: create shown once, last used, revoke -> 401", t_keys),
    ("admin hooks: a viewer cannot change anything", t_viewer),
    ("admin hooks: another tenant's endpoints and keys -> 404",
     t_isolation),
]


def main():
    L.main("admin hooks: fixtures (a tenant, its admins, a receiver)",
           World, TESTS, sys.modules[__name__])


if __name__ == "__main__":
    main()
