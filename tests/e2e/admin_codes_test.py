#!/usr/bin/env python3
"""End-to-end tests of the dashboard's codes and redemptions pages over
plain HTTP, against real nginx and FastCGI workers (run.sh): search by
any spelling of a code, filters, keyset pages without duplicates or gaps,
the query time, revoking one code and a selection (CSRF, audit), a
viewer's 403, another tenant's code -> 404, reversing a redemption with
a reason and a policy, bad input -> 400.

Usage: admin_codes_test.py BASE_URL (environment as admin_test.py).
Fixtures live in a tenant of their own, so nothing here depends on or
disturbs admin_test.py's numbers.
"""

import os
import re
import sys
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import admin_test as A  # noqa: E402
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402

BIG = 120  # codes of the paged campaign: pages of 50, 50, 20


class World:
    def __init__(self):
        run = L.RUN
        self.t = f"codes-{run}"
        A.ctl_in(["tenant", "create", self.t])
        self.key = A.ctl_in(["apikey", "create", "--tenant", self.t,
                             "--scope", "admin"]).strip()
        self.owner = A.admin_create(self.t, f"codes-owner-{run}@example.com",
                                    "owner")
        self.viewer = A.admin_create(self.t,
                                     f"codes-viewer-{run}@example.com",
                                     "viewer")
        self.big, self.small = f"big-{run}", f"small-{run}"
        for name in (self.big, self.small):
            A.ctl_in(["campaign", "create", "--tenant", self.t, "--name",
                      name])
        self.big_codes = A.ctl_in([
            "codes", "generate", "--tenant", self.t, "--campaign", self.big,
            "--count", str(BIG), "--max-uses", "1"]).split()
        self.small_codes = A.ctl_in([
            "codes", "generate", "--tenant", self.t, "--campaign",
            self.small, "--count", "6", "--max-uses", "2"]).split()
        self.accounts = []
        for i, code in enumerate(self.small_codes[:3]):
            acct = L.account(f"cr{i}")
            L.expect_status(L.redeem(code, acct, key=self.key), 200,
                            "redeem in the codes tenant")
            self.accounts.append(acct)
        # The default tenant's code and redemption: never visible here.
        camp = L.campaign(name=f"other-{run}")
        self.other_code = L.codes(camp, 1)[0]
        L.expect_status(L.redeem(self.other_code, L.account("o")), 200,
                        "redeem in the default tenant")
        self.other_red = A.sql(
            "SELECT r.id FROM redemptions r JOIN codes c ON c.id = "
            f"r.code_id WHERE c.display = {A.lit(self.other_code)}")[0][0]
        self.c = A.signed_in(self.owner)
        self.v = A.signed_in(self.viewer)


W = None


def rows(r):
    """The data-code of each row of the codes table, in order."""
    return [n.get("data-code") for n in A.page(r).find("tr")
            if n.get("data-code")]


def get_ok(c, path):
    r = c.get(path)
    L.expect_status(r, 200, f"GET {path}")
    return r


def q(**kw):
    return "/admin/codes?" + urllib.parse.urlencode(kw)


def state_of(code):
    return A.sql(f"SELECT state FROM codes WHERE display = {A.lit(code)}"
                 )[0][0]


def audited(action, obj):
    return A.sql(f"SELECT COUNT(*) FROM audit_log WHERE action = "
                 f"{A.lit(action)} AND object = {A.lit(obj)}")[0][0]


def t_search():
    code = W.big_codes[7]
    bare = code.replace("-", "")
    for spelling in (code, code.lower(), bare, " ".join(bare),
                     "  " + code.lower() + " "):
        r = get_ok(W.c, q(q=spelling))
        expect(rows(r) == [code], f"search {spelling!r}: {rows(r)}")
    r = get_ok(W.c, q(q="NOPE-NOPE-NOPE"))
    expect(rows(r) == [] and A.page(r).by_id("no-codes") is not None,
           "an unknown code: rows or no empty state")
    r = get_ok(W.c, q(q=W.other_code))
    expect(rows(r) == [], "another tenant's code was found")
    qt = A.page(r).by_id("query-time")
    expect(qt is not None and re.fullmatch(r"query \d+\.\d ms",
                                           qt.text().strip()),
           f"query time: {qt.text() if qt else None!r}")


def t_filters():
    r = get_ok(W.c, q(campaign=W.small))
    expect(rows(r) == W.small_codes, f"campaign filter: {rows(r)}")
    r = get_ok(W.c, q(campaign=W.small, state="exhausted"))
    expect(rows(r) == [], f"no code of small is exhausted: {rows(r)}")
    r = get_ok(W.c, q(campaign=W.small, state="active"))
    expect(rows(r) == W.small_codes, f"campaign + state: {rows(r)}")
    r = get_ok(W.c, q(campaign="no-such-campaign"))
    expect(rows(r) == [], "an unknown campaign lists codes")
    for bad in (q(state="bogus"), q(after="x"), q(after="-1"),
                q(q="x" * 300), "/admin/codes?state=active&state=revoked"):
        A.expect_page_error(W.c.get(bad), 400, "bad_request", f"GET {bad}")


def t_pages():
    seen, path, pages = [], q(campaign=W.big), 0
    while path:
        r = get_ok(W.c, path)
        seen += rows(r)
        pages += 1
        n = A.page(r).by_id("next-page")
        path = n.get("href").replace("&amp;", "&") if n is not None else None
        expect(pages <= 5, "the pages do not end")
    expect(pages == 3, f"{pages} pages for {BIG} codes, want 3")
    expect(len(seen) == len(set(seen)), "a code on two pages")
    expect(seen == W.big_codes, f"pages differ from the codes: "
           f"{len(seen)} seen, {len(set(W.big_codes) - set(seen))} missing")


def t_revoke_one():
    code = W.big_codes[0]
    path = f"/admin/codes/{code}/revoke"
    A.expect_page_error(W.c.post(path, {}), 403, "forbidden", "no CSRF")
    A.expect_page_error(W.c.post(path, {"csrf": "x" * 43}), 403,
                        "forbidden", "a wrong CSRF")
    expect(state_of(code) == "active", "revoked without a CSRF token")
    r = get_ok(W.c, f"/admin/codes/{code}")
    csrf = A.form_csrf(r, f"/admin/codes/{code}/revoke")
    r = W.c.post(path, {"csrf": csrf})
    expect(r.status == 303, f"revoke: {r.status} {L.short(r.body)}")
    expect(state_of(code) == "revoked", "the code is not revoked")
    expect(audited("code.revoke", code) == "1", "no audit row")
    r = get_ok(W.c, f"/admin/codes/{code.lower()}")
    expect(A.page(r).by_id("code-state").text().strip() == "revoked",
           "the code page does not say revoked")


def t_revoke_selection():
    sel = W.big_codes[10:13]
    csrf = A.session_csrf(W.c)
    r = W.c.post("/admin/codes/revoke", [("code", c) for c in sel])
    A.expect_page_error(r, 403, "forbidden", "a selection without CSRF")
    r = W.c.post("/admin/codes/revoke",
                 [("csrf", csrf)] + [("code", c) for c in sel])
    expect(r.status == 303, f"revoke selected: {r.status}")
    for c in sel:
        expect(state_of(c) == "revoked", f"{c} not revoked")
        expect(audited("code.revoke", c) == "1", f"{c}: no audit row")
    r = get_ok(W.c, q(campaign=W.big, state="revoked"))
    expect(set(sel) <= set(rows(r)), "the revoked filter misses some")
    # One code of another tenant: nothing revoked at all.
    keep = W.big_codes[20]
    r = W.c.post("/admin/codes/revoke", [("csrf", csrf), ("code", keep),
                                         ("code", W.other_code)])
    A.expect_page_error(r, 404, "not_found", "a selection with A's code")
    expect(state_of(keep) == "active", "part of a refused selection done")
    r = W.c.post("/admin/codes/revoke", [("csrf", csrf)])
    A.expect_page_error(r, 400, "bad_request", "an empty selection")


def t_viewer():
    r = get_ok(W.v, q(campaign=W.small))
    expect(not A.page(r).find("input", type="checkbox"),
           "a viewer gets checkboxes")
    csrf = A.session_csrf(W.v)
    code = W.small_codes[5]
    A.expect_page_error(
        W.v.post(f"/admin/codes/{code}/revoke", {"csrf": csrf}), 403,
        "forbidden", "a viewer's revoke")
    A.expect_page_error(
        W.v.post("/admin/codes/revoke", {"csrf": csrf, "code": code}), 403,
        "forbidden", "a viewer's selection")
    rid = A.sql("SELECT MIN(r.id) FROM redemptions r JOIN codes c ON "
                f"c.id = r.code_id WHERE c.display = "
                f"{A.lit(W.small_codes[0])}")[0][0]
    A.expect_page_error(
        W.v.post(f"/admin/redemptions/{rid}/reverse",
                 {"csrf": csrf, "reason": "x", "policy": "keep_seat"}),
        403, "forbidden", "a viewer's reverse")
    expect(state_of(code) == "active", "a viewer revoked")


def t_isolation():
    csrf = A.session_csrf(W.c)
    A.expect_page_error(W.c.get(f"/admin/codes/{W.other_code}"), 404,
                        "not_found", "another tenant's code page")
    A.expect_page_error(
        W.c.post(f"/admin/codes/{W.other_code}/revoke", {"csrf": csrf}),
        404, "not_found", "another tenant's code revoked")
    expect(state_of(W.other_code) == "redeemed", "A's code was changed")
    A.expect_page_error(
        W.c.post(f"/admin/redemptions/{W.other_red}/reverse",
                 {"csrf": csrf, "reason": "guess", "policy": "keep_seat"}),
        404, "not_found", "another tenant's redemption reversed")
    r = get_ok(W.c, "/admin/redemptions")
    expect(W.other_code not in r.text(), "A's redemption is listed")


def t_code_page():
    code = W.small_codes[0]
    r = get_ok(W.c, f"/admin/codes/{code.replace('-', '').lower()}")
    h = A.page(r)
    expect(h.by_id("code").text().strip() == code, "the code's title")
    reds = [n for n in h.find("tr") if n.get("data-redemption")]
    expect(len(reds) == 1, f"{len(reds)} redemptions shown, want 1")
    expect(h.by_id("no-holds") is not None, "no empty state for holds")
    A.expect_page_error(W.c.get("/admin/codes/NOPE-NOPE"), 404, "not_found",
                        "an unknown code")


def t_redemptions():
    r = get_ok(W.c, "/admin/redemptions?" + urllib.parse.urlencode(
        {"account": W.accounts[1].upper()}))
    h = A.page(r)
    trs = [n for n in h.find("tr") if n.get("data-redemption")]
    expect(len(trs) == 1 and W.small_codes[1] in r.text(),
           f"the account filter: {len(trs)} rows")
    r = get_ok(W.c, "/admin/redemptions?" + urllib.parse.urlencode(
        {"campaign": W.small}))
    trs = [n for n in A.page(r).find("tr") if n.get("data-redemption")]
    expect(len(trs) == 3, f"the campaign filter: {len(trs)} rows, want 3")
    r = get_ok(W.c, "/admin/redemptions?since=2999-01-01&campaign=" +
               W.small)
    expect(A.page(r).by_id("no-redemptions") is not None,
           "a future range is not empty")
    for bad in ("since=2026-13-01", "until=yesterday", "before=x",
                "account=" + "a" * 300):
        A.expect_page_error(W.c.get("/admin/redemptions?" + bad), 400,
                            "bad_request", f"redemptions?{bad}")


def t_reverse():
    code = W.small_codes[2]
    rid = A.sql("SELECT r.id FROM redemptions r JOIN codes c ON c.id = "
                f"r.code_id WHERE c.display = {A.lit(code)}")[0][0]
    path = f"/admin/redemptions/{rid}/reverse"
    r = get_ok(W.c, "/admin/redemptions?campaign=" + W.small)
    csrf = A.form_csrf(r, path)
    A.expect_page_error(W.c.post(path, {"reason": "x",
                                        "policy": "keep_seat"}),
                        403, "forbidden", "a reverse without CSRF")
    for bad in ({"policy": "keep_seat"}, {"reason": "x"},
                {"reason": "x", "policy": "bogus"},
                {"reason": "", "policy": "keep_seat"},
                {"reason": "x" * 501, "policy": "return_seat"}):
        A.expect_page_error(W.c.post(path, {"csrf": csrf, **bad}), 400,
                            "bad_request", f"reverse {list(bad)}")
    A.expect_page_error(
        W.c.post("/admin/redemptions/x/reverse",
                 {"csrf": csrf, "reason": "y", "policy": "keep_seat"}),
        404, "not_found", "a reverse of id x")
    r = W.c.post(path, {"csrf": csrf, "reason": "customer <refund>",
                        "policy": "return_seat"})
    expect(r.status == 303, f"reverse: {r.status} {L.short(r.body)}")
    got = A.sql(f"SELECT reversal_policy, reversal_reason FROM redemptions "
                f"WHERE id = {rid}")[0]
    expect(got == ("return_seat", "customer <refund>"), f"stored {got}")
    expect(A.sql(f"SELECT uses FROM codes WHERE display = {A.lit(code)}"
                 )[0][0] == "0", "the seat was not returned")
    expect(audited("redemption.reverse", f"redemption {rid}") == "1",
           "no audit row")
    r = get_ok(W.c, "/admin/redemptions?campaign=" + W.small)
    expect("customer &lt;refund&gt;" in r.text(),
           "the reason is not shown, escaped")


TESTS = [
    ("admin codes: search by any spelling, query time", t_search),
    ("admin codes: filters by campaign and state; bad input -> 400",
     t_filters),
    ("admin codes: keyset pages, no duplicates or gaps", t_pages),
    ("admin codes: revoke one, CSRF, audited", t_revoke_one),
    ("admin codes: revoke a selection, all or nothing", t_revoke_selection),
    ("admin codes: a viewer cannot revoke or reverse", t_viewer),
    ("admin codes: another tenant's code and redemption -> 404",
     t_isolation),
    ("admin codes: a code's page, redemptions and holds", t_code_page),
    ("admin redemptions: filters; bad input -> 400", t_redemptions),
    ("admin redemptions: reverse with a reason and a policy", t_reverse),
]


def main():
    L.main("admin codes: fixtures (a tenant, 126 codes, 4 redemptions)",
           World, TESTS, sys.modules[__name__])


if __name__ == "__main__":
    main()
