#!/usr/bin/env python3
"""End-to-end tests of the dashboard's campaign pages and audit log over
plain HTTP, against real nginx and FastCGI workers (tests/e2e/run.sh):
create, edit, close and reopen through the forms with the session's CSRF
token; bad input answered 400 with the form shown again; a viewer's POSTs
refused 403; another tenant's campaign 404; the audit rows each change
writes, and the log's filter and paging.

Usage: admin_campaigns_test.py BASE_URL
Environment: as admin_test.py (whose helpers this uses).
"""

import os
import sys
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402
import admin_test as A  # noqa: E402


class World:
    """A fresh tenant with an owner and a viewer; tenant A's campaign."""

    def __init__(self):
        run = L.RUN
        self.t = f"camp-{run}"
        A.ctl_in(["tenant", "create", self.t])
        self.owner = A.admin_create(self.t, f"camp-owner-{run}@example.com",
                                    "owner")
        self.viewer = A.admin_create(self.t,
                                     f"camp-viewer-{run}@example.com",
                                     "viewer")
        self.a_camp = L.campaign(name=f"camp-a-{run}")
        self.name = f"spring-{run}"


W = None


def state(name):
    return A.sql("SELECT k.state, k.budget, k.per_account_limit, "
                 "k.starts_at, k.ends_at FROM campaigns k JOIN tenants t "
                 f"ON t.id = k.tenant_id WHERE t.name = {A.lit(W.t)} AND "
                 f"k.name = {A.lit(name)}")


def audit_rows(action):
    return A.sql("SELECT a.email, a.ip, a.object, a.detail FROM audit_log a "
                 "JOIN tenants t ON t.id = a.tenant_id WHERE t.name = "
                 f"{A.lit(W.t)} AND a.action = {A.lit(action)} "
                 "ORDER BY a.id")


def csrf(c, path="/admin/campaigns"):
    r = c.get(path)
    L.expect_status(r, 200, f"GET {path}")
    return A.form_csrf(r, "/admin/logout")


def expect_form_error(r, status, what):
    expect(r.status == status, f"{what}: status {r.status}, want {status}: "
           f"{L.short(r.body)}")
    err = A.page(r).by_id("form-error")
    expect(err is not None and len(err.text()) > 10,
           f"{what}: no error in the form: {L.short(r.body)}")
    return err


def t_empty_list():
    c = A.signed_in(W.owner)
    r = c.get("/admin/campaigns")
    L.expect_status(r, 200, "the list")
    h = A.page(r)
    expect(h.by_id("no-campaigns") is not None,
           f"no empty state: {L.short(r.body)}")
    expect(W.a_camp.encode() not in r.body, "tenant A's campaign is listed")
    r = c.get("/admin/campaigns/new")
    L.expect_status(r, 200, "the form")
    A.form_csrf(r, "/admin/campaigns")


def t_create():
    c = A.signed_in(W.owner)
    tok = csrf(c)
    fields = {"csrf": tok, "name": W.name, "kind": "shared",
              "budget": "100", "starts_at": "2026-01-01T10:00",
              "ends_at": "2036-01-01T10:00", "per_account_limit": "2"}
    r = c.post("/admin/campaigns", fields)
    expect(r.status == 303 and r.header("Location", "").endswith(
        f"/admin/campaigns/{W.name}"), f"create: {r.status} "
        f"{r.header('Location')!r} {L.short(r.body)}")
    expect(state(W.name) == [("open", "100", "2", "1767261600",
                              "2082794400")], f"row: {state(W.name)}")
    rows = audit_rows("campaign.create")
    expect(len(rows) == 1 and rows[0][0] == W.owner and
           rows[0][1] == c.ip and rows[0][2] == W.name,
           f"audit of the create: {rows}")
    r = c.get("/admin/campaigns")
    h = A.page(r)
    row = [t for t in h.find("tr") if t.get("data-campaign") == W.name]
    expect(row, f"not listed: {L.short(r.body)}")
    expect("0 / 100" in row[0].text(), f"budget cell: {row[0].text()!r}")
    r = c.get(f"/admin/campaigns/{W.name}")
    L.expect_status(r, 200, "the campaign page")
    expect(b"<svg" in r.body, "no chart")
    expect(A.page(r).by_id("c-budget").text().strip() == "0 / 100",
           "budget on the page")
    # The same name again: refused with the form.
    r = c.post("/admin/campaigns", fields)
    expect_form_error(r, 409, "a duplicate name")


def t_bad_input():
    c = A.signed_in(W.owner)
    tok = csrf(c)
    good = {"csrf": tok, "name": f"bad-{L.RUN}", "kind": "pool"}
    for what, extra in (
            ("a bad name", {"name": "two words"}),
            ("an empty name", {"name": ""}),
            ("a bad kind", {"kind": "lottery"}),
            ("a negative budget", {"budget": "-1"}),
            ("a word for a budget", {"budget": "lots"}),
            ("a bad time", {"starts_at": "tomorrow"}),
            ("an end before the start", {"starts_at": "2030-01-02",
                                         "ends_at": "2030-01-01"}),
            ("a zero limit", {"per_account_limit": "0"})):
        r = c.post("/admin/campaigns", {**good, **extra})
        expect_form_error(r, 400, what)
        A.form_csrf(r, "/admin/campaigns")  # the form is shown again
    expect(state(f"bad-{L.RUN}") == [], "a bad form made a campaign")
    # Fields sent back as typed (escaped).
    r = c.post("/admin/campaigns", {**good, "budget": "<b>x"})
    expect(b"&lt;b&gt;x" in r.body and b"<b>x" not in r.body,
           "the typed budget is not shown back escaped")
    # Edit: an end before the start, and a budget below what was used.
    path = f"/admin/campaigns/{W.name}"
    r = c.post(path, {"csrf": tok, "starts_at": "2030-01-02T00:00",
                      "ends_at": "2030-01-01T00:00"})
    expect_form_error(r, 400, "an edit with the end first")
    A.form_csrf(r, path)


def t_edit_close_reopen():
    c = A.signed_in(W.owner)
    path = f"/admin/campaigns/{W.name}"
    tok = csrf(c, path)
    r = c.post(path, {"csrf": tok, "budget": "50", "per_account_limit": "",
                      "starts_at": "", "ends_at": "2040-01-01T00:00"})
    expect(r.status == 303, f"edit: {r.status} {L.short(r.body)}")
    expect(state(W.name) == [("open", "50", "", "", "2208988800")],
           f"after the edit: {state(W.name)}")
    rows = audit_rows("campaign.update")
    expect(len(rows) == 1 and "budget 50" in rows[0][3],
           f"audit of the edit: {rows}")
    r = c.post(path + "/close", {"csrf": tok})
    expect(r.status == 303, f"close: {r.status} {L.short(r.body)}")
    expect(state(W.name)[0][0] == "closed", "not closed")
    r = c.get(path)
    A.form_csrf(r, path + "/reopen")
    r = c.post(path + "/reopen", {"csrf": tok})
    expect(r.status == 303, f"reopen: {r.status} {L.short(r.body)}")
    expect(state(W.name)[0][0] == "open", "not reopened")
    for action in ("campaign.close", "campaign.reopen"):
        rows = audit_rows(action)
        expect(len(rows) == 1 and rows[0][2] == W.name,
               f"audit of {action}: {rows}")


def t_csrf_and_viewer():
    c = A.signed_in(W.owner)
    path = f"/admin/campaigns/{W.name}"
    posts = [("/admin/campaigns", {"name": f"v-{L.RUN}", "kind": "shared"}),
             (path, {"budget": "7"}), (path + "/close", {}),
             (path + "/reopen", {})]
    for p, f in posts:
        r = c.post(p, f)
        A.expect_page_error(r, 403, "forbidden", f"{p} without csrf")
        r = c.post(p, {**f, "csrf": "y" * A.TOKEN_LEN})
        A.expect_page_error(r, 403, "forbidden", f"{p} with a wrong csrf")
    v = A.signed_in(W.viewer)
    r = v.get(path)
    L.expect_status(r, 200, "a viewer's campaign page")
    expect(not [f for f in A.page(r).find("form")
                if (f.get("action") or "").startswith(path)],
           "a viewer is offered the edit forms")
    tok = csrf(v)
    for p, f in posts:
        r = v.post(p, {**f, "csrf": tok})
        A.expect_page_error(r, 403, "forbidden", f"a viewer's POST {p}")
    expect(state(W.name)[0][0:2] == ("open", "50"),
           f"a forged or viewer POST changed it: {state(W.name)}")
    expect(state(f"v-{L.RUN}") == [], "a viewer created a campaign")


def t_other_tenant():
    c = A.signed_in(W.owner)
    tok = csrf(c)
    other = f"/admin/campaigns/{W.a_camp}"
    q = ("SELECT state, budget, per_account_limit, closed_at FROM campaigns "
         f"WHERE name = {A.lit(W.a_camp)}")
    before = A.sql(q)
    A.expect_page_error(c.get(other), 404, "not_found", "A's campaign")
    for suffix, f in (("", {"budget": "1"}), ("/close", {}),
                      ("/reopen", {})):
        r = c.post(other + suffix, {**f, "csrf": tok})
        A.expect_page_error(r, 404, "not_found", f"POST A's {suffix}")
    expect(A.sql(q) == before and before[0][0] == "open",
           f"A's campaign changed: {before} -> {A.sql(q)}")
    A.expect_page_error(c.get("/admin/campaigns/no-such-campaign"), 404,
                        "not_found", "an unknown campaign")


def audit_actions(r, logins=True):
    h = A.page(r)
    acts = [t.text().strip() for t in h.find("td")
            if "action" in (t.get("class") or "").split()]
    return acts if logins else [a for a in acts if
                                not a.startswith("login")]


def t_audit_page():
    c = A.signed_in(W.owner)
    r = c.get("/admin/audit")
    L.expect_status(r, 200, "the audit log")
    acts = audit_actions(r, logins=False)
    expect(acts[:4] == ["campaign.reopen", "campaign.close",
                        "campaign.update", "campaign.create"],
           f"newest first: {acts[:6]}")
    expect(b"<time datetime=" in r.body, "times not in <time>")
    r = c.get("/admin/audit?action=campaign.close")
    acts = audit_actions(r)
    expect(acts == ["campaign.close"], f"action filter: {acts}")
    q = urllib.parse.urlencode({"email": W.viewer})
    acts = audit_actions(c.get(f"/admin/audit?{q}"))
    expect("campaign.create" not in acts, f"e-mail filter: {acts}")
    r = c.get("/admin/audit?since=2000-01-01&until=2000-01-02")
    expect(audit_actions(r) == [] and A.page(r).by_id("no-audit"),
           "a time range with nothing in it")
    r = c.get("/admin/audit?since=yesterday")
    expect_form_error(r, 400, "a bad time in the filter")
    # Paging: more rows than a page, each seen once.
    for i in range(55):
        A.ctl_in(["campaign", "create", "--tenant", W.t, "--name",
                  f"pg-{i}-{L.RUN}"])
    ids = A.sql("SELECT a.id FROM audit_log a JOIN tenants t ON t.id = "
                f"a.tenant_id WHERE t.name = {A.lit(W.t)}")
    seen, path = 0, "/admin/audit"
    for _ in range(10):
        r = c.get(path)
        L.expect_status(r, 200, path)
        seen += len(audit_actions(r))
        older = A.page(r).by_id("older")
        if older is None:
            break
        path = older.get("href").replace("&amp;", "&")
    expect(seen == len(ids), f"paged through {seen} rows of {len(ids)}")


TESTS = [
    ("campaigns: empty list, the new form", t_empty_list),
    ("campaigns: create through the form, audited", t_create),
    ("campaigns: bad input -> 400 with the form", t_bad_input),
    ("campaigns: edit, close, reopen, audited", t_edit_close_reopen),
    ("campaigns: CSRF and viewer -> 403", t_csrf_and_viewer),
    ("campaigns: another tenant's campaign -> 404", t_other_tenant),
    ("audit: newest first, filters, paging", t_audit_page),
]


def main():
    L.main("campaigns: fixtures (a tenant, an owner, a viewer)",
           World, TESTS, sys.modules[__name__])


if __name__ == "__main__":
    main()
