#!/usr/bin/env python3
"""End-to-end tests of the dashboard's bulk work on codes, over plain
HTTP against real nginx, FastCGI workers and the sweeper (run.sh):
generate 5,000 codes as a job the sweeper runs while its page follows it
to done; import a CSV (multipart file and pasted text) with a report of
every refused line; export used / unused / all, streamed, compared with
the database; CSRF, a viewer's 403, another tenant's job 404, bad input
400, a 1 MB upload accepted and a bigger one 413.

Usage: admin_jobs_test.py BASE_URL (environment as admin_test.py).
Fixtures live in tenants of their own.
"""

import csv
import io
import os
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import admin_test as A  # noqa: E402
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402

GEN = 5000        # codes of the generate job: three batches
POLL_LIMIT = 60   # seconds a job may take before the test gives up


class World:
    def __init__(self):
        run = L.RUN
        self.t, self.t2 = f"jobs-{run}", f"jobs2-{run}"
        for t in (self.t, self.t2):
            A.ctl_in(["tenant", "create", t])
        self.key = A.ctl_in(["apikey", "create", "--tenant", self.t,
                             "--scope", "admin"]).strip()
        self.owner = A.admin_create(self.t, f"jobs-owner-{run}@example.com",
                                    "owner")
        self.viewer = A.admin_create(self.t, f"jobs-viewer-{run}@example.com",
                                     "viewer")
        self.other = A.admin_create(self.t2, f"jobs-other-{run}@example.com",
                                    "owner")
        self.gen, self.imp, self.exp = (f"gen-{run}", f"imp-{run}",
                                        f"exp-{run}")
        for name in (self.gen, self.imp, self.exp):
            A.ctl_in(["campaign", "create", "--tenant", self.t, "--name",
                      name])
        A.ctl_in(["campaign", "create", "--tenant", self.t2, "--name",
                  self.gen])
        self.exp_codes = A.ctl_in([
            "codes", "generate", "--tenant", self.t, "--campaign", self.exp,
            "--count", "30", "--max-uses", "1"]).split()
        for i, code in enumerate(self.exp_codes[:7]):
            L.expect_status(L.redeem(code, L.account(f"ex{i}"), key=self.key),
                            200, "redeem in the jobs tenant")
        self.c = A.signed_in(self.owner)
        self.v = A.signed_in(self.viewer)
        self.o = A.signed_in(self.other)


W = None


def count(q):
    return int(A.sql(q)[0][0])


def codes_of(tenant, campaign):
    return count("SELECT COUNT(*) FROM codes c JOIN campaigns k ON k.id = "
                 "c.campaign_id JOIN tenants t ON t.id = k.tenant_id WHERE "
                 f"t.name = {A.lit(tenant)} AND k.name = {A.lit(campaign)}")


def audited(action, obj):
    return count(f"SELECT COUNT(*) FROM audit_log WHERE action = "
                 f"{A.lit(action)} AND object = {A.lit(obj)}")


def csrf_of(c, path, action):
    r = c.get(path)
    L.expect_status(r, 200, f"GET {path}")
    return A.form_csrf(r, action)


def raw_post(c, path, ctype, body):
    """A POST of body as it is, with the client's cookies and address."""
    h = {"X-Forwarded-For": c.ip, "Content-Type": ctype}
    if c.jar:
        h["Cookie"] = "; ".join(f"{k}={v}" for k, v in c.jar.items())
    return L.request("POST", path, body, h)


def multipart(c, path, fields, filename="codes.csv", data=b"",
              boundary="----jobsTestBoundary7MA4YWxk"):
    """A multipart/form-data POST as a browser sends it."""
    out = io.BytesIO()
    for k, v in fields:
        out.write(f"--{boundary}\r\nContent-Disposition: form-data; "
                  f"name=\"{k}\"\r\n\r\n{v}\r\n".encode())
    if filename is not None:
        out.write(f"--{boundary}\r\nContent-Disposition: form-data; "
                  f"name=\"file\"; filename=\"{filename}\"\r\nContent-Type: "
                  "text/csv\r\n\r\n".encode() + data + b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return raw_post(c, path, f"multipart/form-data; boundary={boundary}",
                    out.getvalue())


def job_page(c, path):
    r = c.get(path)
    L.expect_status(r, 200, f"GET {path}")
    h = A.page(r)
    job = h.by_id("job")
    prog = h.by_id("job-progress")
    expect(job is not None and prog is not None, "no #job or <progress>")
    return r, h, job, prog


def t_generate():
    csrf = csrf_of(W.c, f"/admin/codes/generate?campaign={W.gen}",
                   "/admin/codes/generate")
    r = W.c.post("/admin/codes/generate", {
        "csrf": csrf, "campaign": W.gen, "count": str(GEN),
        "max_uses": "2", "expires": ""})
    expect(r.status == 303, f"generate: {r.status} {L.short(r.body)}")
    path = urllib.parse.urlsplit(r.header("Location")).path
    expect(path.startswith("/admin/jobs/"), f"Location {path}")
    expect(audited("codes.generate", W.gen) == 1, "no audit row")
    seen, until = [], time.time() + POLL_LIMIT
    while True:
        r, h, job, prog = job_page(W.c, path)
        state, done = job.get("data-state"), int(prog.get("value"))
        expect(int(prog.get("max")) == GEN, f"max {prog.get('max')}")
        seen.append((state, done))
        active = state in ("queued", "running")
        expect((r.header("Refresh") == "1") == active,
               f"Refresh {r.header('Refresh')!r} in state {state}")
        if not active:
            break
        expect(time.time() < until, f"the job is not done: {seen[-3:]}")
        time.sleep(0.2)
    expect(state == "done", f"the job ended {state}: {seen[-3:]}")
    dones = [d for _, d in seen]
    expect(dones == sorted(dones), f"done went back: {dones}")
    expect(seen[0][0] in ("queued", "running") or len(seen) == 1,
           f"states: {seen}")
    expect(done == GEN and h.by_id("job-count").text().strip() ==
           "5,000 of 5,000", f"count {h.by_id('job-count').text()!r}")
    expect(h.by_id("job-rate").text().strip().endswith("codes/s"), "rate")
    link = h.by_id("job-export")
    expect(link is not None and "which=all" in link.get("href"),
           "no export link when done")
    expect(h.by_id("job-codes") is not None, "no codes link when done")
    expect(codes_of(W.t, W.gen) == GEN, f"{codes_of(W.t, W.gen)} codes")
    expect(count("SELECT COUNT(*) FROM codes c JOIN campaigns k ON k.id = "
                 "c.campaign_id JOIN tenants t ON t.id = k.tenant_id WHERE "
                 f"t.name = {A.lit(W.t)} AND k.name = {A.lit(W.gen)} AND "
                 "c.max_uses <> 2") == 0, "max_uses not 2")
    W.job_path = path


def t_generate_refused():
    csrf = A.session_csrf(W.c)
    good = {"csrf": csrf, "campaign": W.gen, "count": "5", "max_uses": "1"}
    before = count("SELECT COUNT(*) FROM admin_jobs")
    for bad in ({"count": "0"}, {"count": "1000001"}, {"count": "x"},
                {"max_uses": "0"}, {"campaign": ""},
                {"expires": "2001-01-01T00:00"}, {"expires": "soon"}):
        A.expect_page_error(W.c.post("/admin/codes/generate",
                                     {**good, **bad}), 400, "bad_request",
                            f"generate {bad}")
    A.expect_page_error(W.c.post("/admin/codes/generate",
                                 {**good, "campaign": "no-such"}), 404,
                        "not_found", "an unknown campaign")
    no_csrf = {k: v for k, v in good.items() if k != "csrf"}
    A.expect_page_error(W.c.post("/admin/codes/generate", no_csrf), 403,
                        "forbidden", "generate without CSRF")
    A.expect_page_error(
        W.v.post("/admin/codes/generate",
                 {**good, "csrf": A.session_csrf(W.v)}), 403, "forbidden",
        "a viewer's generate")
    expect(count("SELECT COUNT(*) FROM admin_jobs") == before,
           "a refused generate queued a job")


def t_job_isolation():
    r = W.o.post("/admin/codes/generate", {
        "csrf": A.session_csrf(W.o), "campaign": W.gen, "count": "3",
        "max_uses": "1"})
    expect(r.status == 303, f"other tenant's generate: {r.status}")
    other = urllib.parse.urlsplit(r.header("Location")).path
    L.expect_status(W.o.get(other), 200, "its own job")
    A.expect_page_error(W.c.get(other), 404, "not_found",
                        "another tenant's job")
    for p in ("/admin/jobs/x", "/admin/jobs/0", "/admin/jobs/99999999999"):
        A.expect_page_error(W.c.get(p), 404, "not_found", p)
    L.expect_status(W.v.get(W.job_path), 200, "a viewer sees the job")


REPORT_CSV = ("code,max_uses\n"
              "IMPORT-GOOD-ONE\n"            # 2 created
              "<b>bad</b>\n"                 # 3 bad characters
              "IMPORT-GOOD-TWO,4\n"          # 4 created, max_uses 4
              "IMPORT-GOOD-ONE\n"            # 5 duplicate (in the file)
              "IMPORT-BAD-USES,0\n"          # 6 bad max_uses
              "a,1,2,3\n"                    # 7 too many columns
              "\n"                           # 8 blank: skipped
              "IMPORT-GOOD-THREE\n")         # 9 created


def report_rows(r):
    h = A.page(r)
    t = h.by_id("refused")
    expect(t is not None, f"no #refused table: {L.short(r.body)}")
    out = []
    for tr in h.inside(t, "tr"):
        tds = [n.text().strip() for n in h.inside(tr, "td")]
        if tds:
            out.append(tds)
    return out


def card(r, id_):
    n = A.page(r).by_id(id_)
    expect(n is not None, f"no #{id_}")
    return n.text().strip()


def t_import_file():
    csrf = csrf_of(W.c, "/admin/codes/import", "/admin/codes/import")
    r = multipart(W.c, "/admin/codes/import", [
        ("csrf", csrf), ("campaign", W.imp), ("max_uses", "2")],
        data=REPORT_CSV.encode())
    L.expect_status(r, 200, "import")
    expect((card(r, "n-created"), card(r, "n-duplicates"),
            card(r, "n-refused")) == ("3", "1", "4"),
           f"counts {card(r, 'n-created')} {card(r, 'n-duplicates')} "
           f"{card(r, 'n-refused')}")
    rows = report_rows(r)
    expect([x[0] for x in rows] == ["3", "6", "7", "5"],
           f"refused lines {rows}")
    expect(rows[0][1] == "<b>bad</b>" and "&lt;b&gt;" in r.text(),
           "the refused text is not shown escaped")
    expect("letters and digits" in rows[0][2] and "max_uses" in rows[1][2]
           and "columns" in rows[2][2] and "duplicate" in rows[3][2],
           f"reasons {rows}")
    expect(A.sql("SELECT max_uses FROM codes WHERE code = 'IMPORTGOODTWO'")
           == [("4",)], "max_uses of a line")
    expect(A.sql("SELECT max_uses FROM codes WHERE code = 'IMPORTGOODONE'")
           == [("2",)], "the default max_uses")
    expect(codes_of(W.t, W.imp) == 3, "codes created")
    got = A.sql("SELECT detail FROM audit_log WHERE action = "
                f"'codes.import' AND object = {A.lit(W.imp)}")
    expect(got == [("3 created, 4 refused",)], f"audit {got}")


def t_import_paste():
    r = W.c.post("/admin/codes/import", {
        "csrf": A.session_csrf(W.c), "campaign": W.imp, "max_uses": "1",
        "csv": "IMPORT-PASTED-ONE\r\nIMPORT-GOOD-ONE\r\n"})
    L.expect_status(r, 200, "pasted import")
    expect((card(r, "n-created"), card(r, "n-refused")) == ("1", "1"),
           "pasted counts")
    expect(report_rows(r)[0][0] == "2", "the duplicate's line")
    # And the same through multipart with no file chosen.
    r = multipart(W.c, "/admin/codes/import", [
        ("csrf", A.session_csrf(W.c)), ("campaign", W.imp),
        ("max_uses", "1"), ("csv", "IMPORT-PASTED-TWO\n")], filename="")
    L.expect_status(r, 200, "multipart with the text field")
    expect(card(r, "n-created") == "1", "multipart pasted count")
    expect(A.page(r).by_id("none-refused") is not None, "no empty state")


def t_import_refused():
    fields = [("campaign", W.imp), ("max_uses", "1")]
    before = codes_of(W.t, W.imp)
    A.expect_page_error(
        multipart(W.c, "/admin/codes/import", fields, data=b"IMPORT-X\n"),
        403, "forbidden", "multipart without CSRF")
    A.expect_page_error(
        multipart(W.v, "/admin/codes/import",
                  [("csrf", A.session_csrf(W.v))] + fields,
                  data=b"IMPORT-X\n"), 403, "forbidden", "a viewer's import")
    csrf = A.session_csrf(W.c)
    r = raw_post(W.c, "/admin/codes/import",
                 "multipart/form-data; boundary=zzz",
                 b"--zzz\r\nContent-Disposition: form-data; "
                 b"name=\"csrf\"\r\n\r\n" + csrf.encode() + b"\r\n--zz")
    A.expect_page_error(r, 400, "bad_request", "a truncated multipart")
    A.expect_page_error(
        multipart(W.c, "/admin/codes/import", [("csrf", csrf)] + fields,
                  filename=""), 400, "bad_request", "no file, no text")
    A.expect_page_error(
        multipart(W.c, "/admin/codes/import",
                  [("csrf", csrf), ("campaign", "no-such"),
                   ("max_uses", "1")], data=b"IMPORT-Y\n"),
        404, "not_found", "an unknown campaign")
    expect(codes_of(W.t, W.imp) == before, "a refused import wrote codes")
    # 1 MB of file (blank lines but two) is taken; a body past 1 MiB not.
    big = b"IMPORT-BIG-ONE\n" + b"\n" * (1000000 - 32) + b"IMPORT-BIG-TWO\n"
    r = multipart(W.c, "/admin/codes/import", [("csrf", csrf)] + fields,
                  data=big)
    L.expect_status(r, 200, "a 1 MB file")
    expect(card(r, "n-created") == "2", "the big file's codes")
    r = multipart(W.c, "/admin/codes/import", [("csrf", csrf)] + fields,
                  data=b"\n" * (1024 * 1024 + 1))
    A.expect_page_error(r, 413, "too_large", "a body past 1 MiB")


def export(c, streamed=False, **q):
    """The rows of an export; streamed: more than one page of codes, so
    sent as it is read (no Content-Length)."""
    r = c.get("/admin/codes/export?" + urllib.parse.urlencode(q))
    L.expect_status(r, 200, f"export {q}")
    expect(r.header("Content-Type", "").startswith("text/csv"),
           f"Content-Type {r.header('Content-Type')}")
    cd = r.header("Content-Disposition", "")
    expect(cd.startswith("attachment;") and "filename=" in cd, f"CD {cd}")
    expect((r.header("Content-Length") is None) == streamed,
           f"streamed: want {streamed}")
    rows = list(csv.reader(io.StringIO(r.text())))
    expect(rows[0] == ["code", "state", "uses", "max_uses", "expires_at",
                       "created_at"], f"header {rows[0]}")
    return rows[1:]


def db_codes(campaign, where):
    return sorted(r[0] for r in A.sql(
        "SELECT c.display FROM codes c JOIN campaigns k ON k.id = "
        "c.campaign_id JOIN tenants t ON t.id = k.tenant_id WHERE "
        f"t.name = {A.lit(W.t)} AND k.name = {A.lit(campaign)} AND "
        f"{where}"))


def t_export():
    every = export(W.c, campaign=W.exp, which="all")
    expect(sorted(r[0] for r in every) == sorted(W.exp_codes),
           "all != the campaign's codes")
    used = export(W.c, campaign=W.exp, which="used")
    expect(sorted(r[0] for r in used) == db_codes(W.exp, "c.uses > 0") ==
           sorted(W.exp_codes[:7]), f"used: {len(used)}")
    expect(all(r[1] == "redeemed" and r[2] == "1" for r in used),
           "used rows' state and uses")
    unused = export(W.v, campaign=W.exp, which="unused")  # a viewer may
    expect(sorted(r[0] for r in unused) == db_codes(W.exp, "c.uses = 0"),
           f"unused: {len(unused)}")
    big = export(W.c, streamed=True, campaign=W.gen)
    expect(len(big) == GEN and len({r[0] for r in big}) == GEN,
           f"the generated campaign: {len(big)} rows")
    expect(sorted(r[0] for r in big) == db_codes(W.gen, "1 = 1"),
           "the generated campaign's export differs from the database")
    expect(audited("codes.export", W.exp) == 3, "export not audited")
    A.expect_page_error(W.c.get(f"/admin/codes/export?campaign={W.exp}"
                                "&which=some"), 400, "bad_request",
                        "a bad which")
    A.expect_page_error(W.c.get("/admin/codes/export?campaign=no-such"),
                        404, "not_found", "an unknown campaign")
    A.expect_page_error(W.o.get(f"/admin/codes/export?campaign={W.exp}"),
                        404, "not_found", "another tenant's campaign")


def t_links():
    r = W.c.get(f"/admin/codes?campaign={W.exp}")
    h = A.page(r)
    for id_ in ("generate-link", "import-link", "export-all",
                "export-used", "export-unused"):
        expect(h.by_id(id_) is not None, f"codes page: no #{id_}")
    h = A.page(W.v.get(f"/admin/codes?campaign={W.exp}"))
    expect(h.by_id("generate-link") is None and
           h.by_id("export-all") is not None, "a viewer's links")
    h = A.page(W.c.get(f"/admin/campaigns/{W.exp}"))
    expect(h.by_id("campaign-generate") is not None and
           h.by_id("campaign-export") is not None, "campaign page links")


TESTS = [
    ("admin jobs: generate 5,000 codes, the page follows the job",
     t_generate),
    ("admin jobs: generate refused (400, 404, CSRF, viewer)",
     t_generate_refused),
    ("admin jobs: another tenant's job -> 404", t_job_isolation),
    ("admin import: a CSV file, every refused line reported",
     t_import_file),
    ("admin import: pasted text", t_import_paste),
    ("admin import: refused (CSRF, viewer, malformed, 413)",
     t_import_refused),
    ("admin export: used, unused, all, streamed", t_export),
    ("admin codes: generate, import, export links", t_links),
]


def main():
    L.main("admin jobs: fixtures (two tenants, 30 codes, 7 redemptions)",
           World, TESTS, sys.modules[__name__])


if __name__ == "__main__":
    main()
