#!/usr/bin/env python3
"""End-to-end tests of the dashboard's semaphores and leaked permits pages
over plain HTTP, against real nginx, FastCGI workers and the sweeper
(run.sh): the pages with data and empty, changing a capacity (audited,
in the semaphore's history), releasing one leaked hold or permit and all
of them (audited, the seat and the room back as the API shows), CSRF,
a viewer's 403, another tenant's ids -> 404, bad input -> 400, and the
warning for a sweep job that has not run.

The sweeper runs release_leaked every second here: while this test needs
leaked rows to stay, it holds that job's lease (and staleness's) as
another sweeper would (admin_test.take_lease), and gives them back at the
end, after which the sweeper catches up.

Usage: admin_leases_test.py BASE_URL (environment as admin_test.py).
"""

import os
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import admin_test as A  # noqa: E402
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402

STALE = 24 * 3600  # the staleness job's limit
JOBS = ("release_leaked", "staleness")


class World:
    def __init__(self):
        run = L.RUN
        self.t = f"leases-{run}"
        A.ctl_in(["tenant", "create", self.t])
        self.key = A.ctl_in(["apikey", "create", "--tenant", self.t,
                             "--scope", "admin"]).strip()
        self.owner = A.admin_create(self.t, f"leases-owner-{run}@example.com",
                                    "owner")
        self.viewer = A.admin_create(
            self.t, f"leases-viewer-{run}@example.com", "viewer")
        self.camp = f"lk-{run}"
        A.ctl_in(["campaign", "create", "--tenant", self.t, "--name",
                  self.camp])
        self.sem = f"sem-{run}"
        # The default tenant's semaphore and hold: never visible here.
        self.other_sem = f"other-sem-{run}"
        L.expect_json_ok(L.api("PUT", f"/api/v1/semaphores/{self.other_sem}",
                               {"capacity": 3}), 200, "default semaphore")
        code = L.codes(L.campaign(name=f"lk-other-{run}"), 1)[0]
        j = L.expect_json_ok(L.api("POST", "/api/v1/holds", {
            "code": code, "account": L.account("lko"),
            "external_id": f"lk-other-{run}", "ttl_seconds": 300}),
            201, "default tenant's hold")
        self.other_hold = A.sql(
            "SELECT id FROM holds WHERE external_id = "
            f"{A.lit(j['hold']['external_id'])}")[0][0]
        L.expect_json_ok(L.api("POST", "/api/v1/permits", {
            "external_id": f"lk-other-{run}", "owner": "other",
            "ttl_seconds": 300, "semaphores": [
                {"name": self.other_sem, "count": 1}]}), 201,
            "default tenant's permit")
        self.other_permit = A.sql(
            "SELECT id FROM permits WHERE external_id = "
            f"{A.lit('lk-other-' + run)}")[0][0]
        self.c = A.signed_in(self.owner)
        self.v = A.signed_in(self.viewer)


W = None


def code():
    return A.ctl_in(["codes", "generate", "--tenant", W.t, "--campaign",
                     W.camp, "--count", "1", "--max-uses", "1"]).split()[0]


def hold(xid):
    c = code()
    L.expect_json_ok(L.api("POST", "/api/v1/holds", {
        "code": c, "account": L.account("lk"), "external_id": xid,
        "ttl_seconds": 300}, key=W.key), 201, f"hold {xid}")
    return c, A.sql(f"SELECT id FROM holds WHERE external_id = {A.lit(xid)}"
                    )[0][0]


def permit(xid):
    L.expect_json_ok(L.api("POST", "/api/v1/permits", {
        "external_id": xid, "owner": "e2e-worker", "ttl_seconds": 300,
        "semaphores": [{"name": W.sem, "count": 1}]}, key=W.key), 201,
        f"permit {xid}")
    return A.sql(f"SELECT id FROM permits WHERE external_id = {A.lit(xid)}"
                 )[0][0]


def lapse(table, xid):
    A.sql(f"UPDATE {table} SET expires_at = {int(time.time()) - 60} "
          f"WHERE external_id = {A.lit(xid)}")


def make_stale(xid):
    A.sql(f"UPDATE permits SET created_at = {int(time.time()) - STALE - 60}"
          f" WHERE external_id = {A.lit(xid)}")


def in_use():
    j = L.expect_json_ok(L.api("GET", f"/api/v1/semaphores/{W.sem}",
                               key=W.key), 200, "GET semaphore")
    return j["semaphore"]["in_use"]


def uses(c):
    r = L.api("GET", "/api/v1/codes/" + L.qcode(c), key=W.key)
    return L.expect_json_ok(r, 200, "GET code")["code"]["uses"]


def get_ok(c, path):
    r = c.get(path)
    L.expect_status(r, 200, f"GET {path}")
    return r


def text_of(h, id_):
    n = h.by_id(id_)
    return n.text() if n is not None else None


def data_rows(h, table, attr):
    t = h.by_id(table)
    if t is None:
        return []
    return [n.get(attr) for n in h.inside(t, "tr") if n.get(attr)]


def audits(action):
    return int(A.sql("SELECT COUNT(*) FROM audit_log a JOIN tenants t ON "
                     f"t.id = a.tenant_id WHERE t.name = {A.lit(W.t)} AND "
                     f"a.action = {A.lit(action)}")[0][0])


def expect_see_other(r, want, what):
    loc = r.header("Location", "")
    expect(r.status == 303 and want in loc,
           f"{what}: {r.status} Location {loc!r}, want 303 with {want!r}: "
           f"{L.short(r.body)}")


# ------------------------------------------------------------------ tests

def t_empty():
    h = A.page(get_ok(W.c, "/admin/semaphores"))
    expect(h.by_id("no-semaphores") is not None, "no empty state")
    h = A.page(get_ok(W.c, "/admin/leaked"))
    for id_ in ("no-holds", "no-permits", "no-stale"):
        expect(h.by_id(id_) is not None, f"leaked: no #{id_}")
    expect(text_of(h, "n-total") == "0", f"total {text_of(h, 'n-total')!r}")
    expect(h.by_id("release-all") is None, "release all with nothing")
    jobs = data_rows(h, "sweep-jobs", "data-job")
    expect(jobs[:5] == ["expire", "release_leaked", "staleness", "deliver",
                        "cleanup"], f"sweep jobs {jobs}")


def t_semaphores():
    L.expect_json_ok(L.api("PUT", f"/api/v1/semaphores/{W.sem}",
                           {"capacity": 5}, key=W.key), 200, "semaphore")
    permit(f"lk-live-1-{L.RUN}")
    permit(f"lk-live-2-{L.RUN}")
    h = A.page(get_ok(W.c, "/admin/semaphores"))
    expect(data_rows(h, "semaphores", "data-semaphore") == [W.sem],
           "the list is this tenant's semaphore alone: "
           f"{data_rows(h, 'semaphores', 'data-semaphore')}")
    row = [n for n in h.find("tr") if n.get("data-semaphore") == W.sem][0]
    cells = [td.text() for td in h.inside(row, "td")]
    expect(cells[1:5] == ["5", "2", "2", "0"],
           f"capacity, in use, holders, leaked: {cells}")
    path = f"/admin/semaphores/{W.sem}"
    r = get_ok(W.c, path)
    h = A.page(r)
    expect(len(data_rows(h, "holders", "data-permit")) == 2, "holders")
    expect(h.by_id("holders").text().count("e2e-worker") == 2, "owners")
    expect(len(A.page(r).find("time")) >= 4, "times are <time> elements")
    hist0 = len(h.inside(h.by_id("history"), "tr"))
    csrf = A.form_csrf(r, path + "/capacity")
    a0 = audits("semaphore.capacity")
    r = W.c.post(path + "/capacity", {"csrf": csrf, "capacity": "7"})
    expect_see_other(r, "changed=1", "change the capacity")
    h = A.page(get_ok(W.c, path))
    expect(text_of(h, "semaphore-capacity") == "7", "capacity not 7")
    expect(len(h.inside(h.by_id("history"), "tr")) == hist0 + 1,
           "the change is not in the history")
    expect(W.owner in h.by_id("history").text(), "who changed it")
    expect(audits("semaphore.capacity") == a0 + 1, "no audit row")
    j = L.expect_json_ok(L.api("GET", f"/api/v1/semaphores/{W.sem}",
                               key=W.key), 200, "GET semaphore")
    expect(j["semaphore"]["capacity"] == 7, "the API disagrees")
    for bad in ("x", "-1", "", "1000000001", "1e3"):
        r = W.c.post(path + "/capacity", {"csrf": csrf, "capacity": bad})
        A.expect_page_error(r, 400, "bad_request", f"capacity {bad!r}")
    r = W.c.post(path + "/capacity", {"capacity": "8"})
    A.expect_page_error(r, 403, "forbidden", "no csrf")
    r = W.v.post(path + "/capacity",
                 {"csrf": A.session_csrf(W.v), "capacity": "8"})
    A.expect_page_error(r, 403, "forbidden", "viewer")
    h = A.page(get_ok(W.v, path))
    expect(h.by_id("capacity-form") is None, "a viewer sees the form")
    for p in (f"/admin/semaphores/{W.other_sem}", "/admin/semaphores/nope"):
        A.expect_page_error(W.c.get(p), 404, "not_found", p)
        r = W.c.post(p + "/capacity", {"csrf": csrf, "capacity": "1"})
        A.expect_page_error(r, 404, "not_found", p + "/capacity")
    expect(audits("semaphore.capacity") == a0 + 1, "a refusal was audited")


def t_leaked():
    run = L.RUN
    for job in JOBS:
        expect(A.take_lease(job, 120), f"could not take the {job} lease")
    try:
        leaked_pages(run)
    finally:
        for job in JOBS:
            A.give_lease(job)


def leaked_pages(run):
    c1, h1 = hold(f"lk-h1-{run}")
    c2, h2 = hold(f"lk-h2-{run}")
    p1 = permit(f"lk-p1-{run}")
    p2 = permit(f"lk-p2-{run}")
    lapse("holds", f"lk-h1-{run}")
    lapse("permits", f"lk-p1-{run}")
    make_stale(f"lk-p2-{run}")
    r = get_ok(W.c, "/admin/leaked")
    h = A.page(r)
    expect(text_of(h, "n-total") == "3", f"total {text_of(h, 'n-total')!r}")
    expect(data_rows(h, "leaked-holds", "data-hold") == [h1],
           f"holds {data_rows(h, 'leaked-holds', 'data-hold')}")
    expect(data_rows(h, "leaked-permits", "data-permit") == [p1], "permits")
    expect(data_rows(h, "stale-permits", "data-permit") == [p2], "stale")
    expect(W.sem in h.by_id("leaked-permits").text(), "semaphore names")
    # The overview counts the same.
    ov = A.page(A.overview(W.c))
    expect(text_of(ov, "n-leaked") == "3",
           f"overview leaked {text_of(ov, 'n-leaked')!r}, page 3")
    # Release one hold: expired as the sweeper does, the seat back.
    act = f"/admin/leaked/holds/{h1}/release"
    csrf = A.form_csrf(r, act)
    expect(uses(c1) == 1, "the hold took no seat")
    a0 = audits("hold.release")
    expect_see_other(W.c.post(act, {"csrf": csrf}), "released=hold",
                     "release a hold")
    expect(uses(c1) == 0, "the seat did not come back")
    j = L.expect_json_ok(L.api("GET", f"/api/v1/holds/lk-h1-{run}",
                               key=W.key), 200, "GET hold")
    expect(j["hold"]["state"] == "expired", f"hold {j['hold']['state']}")
    expect(audits("hold.release") == a0 + 1, "no audit row")
    expect(int(A.sql("SELECT COUNT(*) FROM events WHERE type = "
                     "'hold.expired' AND payload LIKE "
                     f"{A.lit('%lk-h1-' + run + '%')}")[0][0]) == 1,
           "no hold.expired event")
    # Again: no longer leaked, said so, nothing written.
    expect_see_other(W.c.post(act, {"csrf": csrf}), "already=hold", "again")
    expect(audits("hold.release") == a0 + 1, "a no-op was audited")
    # A live hold, another tenant's, no number: 409-free 303, 404, 404.
    expect_see_other(W.c.post(f"/admin/leaked/holds/{h2}/release",
                              {"csrf": csrf}), "already=hold", "live hold")
    expect(uses(c2) == 1, "a live hold was released")
    for bad in (W.other_hold, "x", "0"):
        r = W.c.post(f"/admin/leaked/holds/{bad}/release", {"csrf": csrf})
        A.expect_page_error(r, 404, "not_found", f"hold {bad}")
    for bad in (W.other_permit, "x", "-1"):
        r = W.c.post(f"/admin/leaked/permits/{bad}/release", {"csrf": csrf})
        A.expect_page_error(r, 404, "not_found", f"permit {bad}")
    # CSRF and role.
    act = f"/admin/leaked/permits/{p1}/release"
    A.expect_page_error(W.c.post(act, {}), 403, "forbidden", "no csrf")
    A.expect_page_error(W.v.post(act, {"csrf": A.session_csrf(W.v)}), 403,
                        "forbidden", "viewer")
    A.expect_page_error(W.v.post("/admin/leaked/release-all",
                                 {"csrf": A.session_csrf(W.v)}), 403,
                        "forbidden", "viewer release all")
    expect(A.page(get_ok(W.v, "/admin/leaked")).by_id("release-all") is None,
           "a viewer sees release all")
    # Release the leaked permit: its room back on the semaphore.
    n0 = in_use()
    expect_see_other(W.c.post(act, {"csrf": csrf}), "released=permit",
                     "release a permit")
    expect(in_use() == n0 - 1, "the room did not come back")
    # Release all: the stale permit and two more lapsed.
    c3, h3 = hold(f"lk-h3-{run}")
    permit(f"lk-p3-{run}")
    lapse("holds", f"lk-h3-{run}")
    lapse("permits", f"lk-p3-{run}")
    h = A.page(get_ok(W.c, "/admin/leaked"))
    expect(text_of(h, "n-total") == "3", "before release all")
    p0, n0 = audits("permit.release"), in_use()
    r = W.c.post("/admin/leaked/release-all", {"csrf": csrf})
    expect_see_other(r, "released=all&holds=1&permits=2", "release all")
    h = A.page(get_ok(W.c, urllib.parse.urlsplit(r.header("Location")).path
                      + "?" + urllib.parse.urlsplit(r.header("Location")).query))
    expect(text_of(h, "n-total") == "0", "leaked after release all")
    expect("Released 1 hold and 2 permits" in (text_of(h, "notice") or ""),
           f"notice {text_of(h, 'notice')!r}")
    expect(uses(c3) == 0 and uses(c2) == 1, "seats after release all")
    expect(in_use() == n0 - 2, "room after release all")
    expect(audits("permit.release") == p0 + 2, "one audit row per permit")
    # A sweep job that has not run for long is flagged.
    A.sql("UPDATE sweep_leases SET last_run_at = "
          f"{int(time.time()) - 3600} WHERE job = 'release_leaked'")
    h = A.page(get_ok(W.c, "/admin/leaked"))
    warn = h.by_id("sweep-warning")
    expect(warn is not None and warn.get("role") == "alert",
           "no role=alert warning for a job an hour late")
    row = [n for n in h.find("tr") if n.get("data-job") == "release_leaked"]
    expect(row and "late" in row[0].text(), "the late job is not marked")


TESTS = [
    ("leases: empty pages", t_empty),
    ("leases: semaphores, holders, capacity change", t_semaphores),
    ("leases: leaked lists, release one and all, sweeper warning", t_leaked),
]


def main():
    L.main("leases: fixtures (a tenant, an owner and a viewer)",
           World, TESTS, sys.modules[__name__])


if __name__ == "__main__":
    main()
