#!/usr/bin/env python3
"""End-to-end tests of holds, semaphores and permits, and webhooks over
plain HTTP, against real nginx, FastCGI workers and the sweeper (started
by tests/e2e/run.sh through nginx/serve.sh).

Usage: leases_test.py BASE_URL
Environment: as api_test.py (E2E_ADMIN_KEY, E2E_REDEEM_KEY,
E2E_OTHER_ADMIN_KEY, E2E_BIN, REDEEM_DB; E2E_ONLY=name,name runs a subset),
and REDEEM_SWEEP_RELEASE_LEAKED (the sweeper's interval for leaked holds
and permits, seconds; run.sh sets it short) to bound the polling.

Webhook checks start an HTTP receiver on a free loopback port in this
process; the sweeper must be allowed to deliver to loopback
(REDEEM_WEBHOOK_ALLOW_PRIVATE=1, which run.sh exports).

Every check prints "ok NAME" or "FAIL NAME: why"; the exit status is 0 only
when all pass. Checks never share codes, accounts, semaphores or client
addresses. No check depends on timing except through bounded polling.
"""

import hashlib
import hmac
import http.server
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect, expect_error, expect_json_ok  # noqa: E402

OTHER_KEY = os.environ.get("E2E_OTHER_ADMIN_KEY", "")
# The sweeper's release_leaked interval (its default is 30 s; run.sh sets 1).
SWEEP_LEAKED = int(os.environ.get("REDEEM_SWEEP_RELEASE_LEAKED", "30") or 30)
# A leaked hold or permit must be swept within TTL + interval + this.
SWEEP_SLACK = 20
# A webhook delivery: the deliver job runs every second (run.sh); the
# first retry comes about 1 s (within 20%) after a failed attempt.
DELIVERY_DEADLINE = 30
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


def norm(code):
    return re.sub(r"[\s-]", "", code).upper()


def fresh_code(max_uses=1, *opts):
    camp = L.campaign()
    return camp, L.codes(camp, 1, max_uses, *opts)[0]


def uses(code):
    return L.code_info(code).get("uses")


def xid(prefix="h"):
    # external_id: 1-128 of [A-Za-z0-9._~:@-]
    return L.uniq(prefix) + ":" + "x.y~z@1"


def sem_name(prefix="sem"):
    return L.uniq(prefix)


# ------------------------------------------------------------------ holds

def hold_req(code, acct, ext, ttl=60, key=None, ip=None, **extra):
    body = {"code": code, "account": acct, "external_id": ext,
            "ttl_seconds": ttl, "client_ip": ip or L.client_ip()}
    body.update(extra)
    return L.api("POST", "/api/v1/holds", body,
                 key=L.REDEEM_KEY if key is None else key)


def check_hold(h, ext, state, what=""):
    p = what + ": " if what else ""
    expect(isinstance(h, dict), f"{p}hold is not an object: {h!r}")
    expect(h.get("external_id") == ext,
           f"{p}external_id {h.get('external_id')!r}, want {ext!r}")
    expect(h.get("state") == state,
           f"{p}state {h.get('state')!r}, want {state!r}: {h}")
    expect(L.RFC3339.match(str(h.get("expires_at"))),
           f"{p}expires_at not RFC 3339 UTC: {h.get('expires_at')!r}")
    tok = h.get("fencing_token")
    expect(isinstance(tok, int) and not isinstance(tok, bool) and tok >= 1,
           f"{p}fencing_token not a positive integer: {tok!r}")
    return h


def hold_ok(code, acct, ext, ttl=60, status=201, key=None, ip=None):
    r = hold_req(code, acct, ext, ttl, key, ip)
    j = expect_json_ok(r, status, f"hold {ext} on {code}")
    return check_hold(j.get("hold"), ext, "held", "new hold")


def hold_get(ext, key=None):
    return L.api("GET", "/api/v1/holds/" + urllib.parse.quote(ext, safe=""),
                 key=L.REDEEM_KEY if key is None else key)


def hold_state(ext):
    j = expect_json_ok(hold_get(ext), 200, f"GET hold {ext}")
    return check_hold(j.get("hold"), ext, j.get("hold", {}).get("state"))


def hold_post(ext, verb, key=None, body=None):
    return L.api("POST", "/api/v1/holds/" + urllib.parse.quote(ext, safe="")
                 + "/" + verb, body, key=L.REDEEM_KEY if key is None else key)


def check_redemption(red, code, acct, camp, what=""):
    p = what + ": " if what else ""
    expect(isinstance(red, dict), f"{p}redemption is not an object: {red!r}")
    expect(isinstance(red.get("id"), int), f"{p}id not an integer: {red!r}")
    expect(isinstance(red.get("seq"), int), f"{p}seq not an integer: {red!r}")
    expect(norm(red.get("code", "")) == norm(code),
           f"{p}code {red.get('code')!r}, want {code!r}")
    expect(red.get("account") == acct.strip().lower(),
           f"{p}account {red.get('account')!r}, want {acct!r}")
    expect(red.get("campaign") == camp,
           f"{p}campaign {red.get('campaign')!r}, want {camp!r}")
    expect(L.RFC3339.match(str(red.get("redeemed_at"))),
           f"{p}redeemed_at not RFC 3339 UTC: {red.get('redeemed_at')!r}")


def confirm_ok(ext, already):
    r = hold_post(ext, "confirm")
    j = expect_json_ok(r, 200, f"confirm {ext}")
    expect(j.get("already") is already,
           f"confirm {ext}: already={j.get('already')!r}, want {already}: "
           f"{L.short(r.body)}")
    return j.get("redemption")


def t_hold_create():
    camp, code = fresh_code(3)
    a, b = L.account("ha"), L.account("hb")
    ea, eb = xid(), xid()
    expect(uses(code) == 0, "a fresh code has uses")
    ha = hold_ok(code, a, ea, 60)
    expect(uses(code) == 1, f"uses {uses(code)} after one hold, want 1 (G2)")
    # The same external_id again: 200, the same hold, no second seat.
    r = hold_req(code, a, ea, 60)
    j = expect_json_ok(r, 200, "the same external_id again")
    again = check_hold(j.get("hold"), ea, "held", "replay")
    for k in ("fencing_token", "expires_at"):
        expect(again.get(k) == ha.get(k),
               f"replay {k} {again.get(k)!r}, first {ha.get(k)!r}")
    expect(uses(code) == 1, "a replayed hold took another seat")
    got = hold_state(ea)
    expect(got.get("fencing_token") == ha["fencing_token"] and
           got.get("expires_at") == ha["expires_at"],
           f"GET differs from the create answer: {got} vs {ha}")
    # Fencing tokens of the code's holds grow in grant order.
    hb = hold_ok(code, b, eb, 60)
    expect(hb["fencing_token"] > ha["fencing_token"],
           f"second hold's token {hb['fencing_token']} not above "
           f"{ha['fencing_token']}")
    expect(uses(code) == 2, f"uses {uses(code)} after two holds, want 2")
    # Release one, take another: still a larger token.
    r = hold_post(eb, "release")
    expect_json_ok(r, 200, "release b")
    hc = hold_ok(code, L.account("hc"), xid(), 60)
    expect(hc["fencing_token"] > hb["fencing_token"],
           f"token after a release {hc['fencing_token']} not above "
           f"{hb['fencing_token']}")
    # The same external_id for another code or account is a conflict,
    # not the first hold.
    _, other = fresh_code(1)
    expect_error(hold_req(other, a, ea), 409, "conflict",
                 "same external_id, another code")
    expect_error(hold_req(code, L.account("hz"), ea), 409, "conflict",
                 "same external_id, another account")
    expect(uses(other) == 0, "a conflicting hold took a seat of the other code")
    expect(uses(code) == 2, f"uses {uses(code)}, want 2 (holds a and c)")
    # ttl_seconds is honoured: expires_at is about ttl from now (server
    # clock); a 60 s hold does not expire within the minute.
    hd = hold_ok(L.codes(camp, 1, 1)[0], L.account(), xid(), 3600)
    expect(hd["expires_at"] > ha["expires_at"],
           f"a 3600 s hold expires {hd['expires_at']}, not after the 60 s "
           f"one's {ha['expires_at']}")
    L.verify()


def t_hold_exhausted_and_errors():
    camp, code = fresh_code(1)
    a = L.account()
    ea = xid()
    hold_ok(code, a, ea)
    info = L.code_info(code)
    expect(info.get("uses") == 1 and info.get("state") == "exhausted",
           f"a 1-use code whose seat is held: {info}, want uses 1 exhausted")
    expect_error(hold_req(code, L.account(), xid()), 409, "exhausted",
                 "a hold on a code whose seat is held")
    expect_error(L.redeem(code, L.account()), 409, "exhausted",
                 "a redemption of a code whose seat is held")
    _, used = fresh_code(1)
    expect_json_ok(L.redeem(used, L.account()), 200, "redeem the one seat")
    expect_error(hold_req(used, L.account(), xid()), 409, "exhausted",
                 "a hold on a code whose seat is redeemed")
    expect(uses(used) == 1, f"uses {uses(used)} of a redeemed code, want 1")
    # The other refusals of a redemption apply to holds too.
    expect_error(hold_req("ZZZZ-ZZZZ-ZZZZ", L.account(), xid()), 404,
                 "invalid", "an unknown code")
    _, rc = fresh_code(1)
    expect_json_ok(L.api("POST", "/api/v1/codes/" + L.qcode(rc) + "/revoke",
                         {}), 200, "revoke")
    expect_error(hold_req(rc, L.account(), xid()), 410, "revoked",
                 "a revoked code")
    _, ec = fresh_code(1, "--expires", "2001-01-01T00:00:00Z")
    expect_error(hold_req(ec, L.account(), xid()), 410, "expired",
                 "an expired code")
    # A per-account limit counts held seats.
    camp2 = L.campaign("--per-account-limit", "1")
    c1, c2 = L.codes(camp2, 2, 1)
    b = L.account()
    eb = xid()
    hold_ok(c1, b, eb)
    expect_error(L.redeem(c2, b), 403, "ineligible",
                 "redeeming past the per-account limit, one seat held")
    expect_json_ok(hold_post(eb, "release"), 200, "release")
    expect_json_ok(L.redeem(c2, b), 200, "redeem after the hold's release")
    for c in (rc, ec):
        expect(uses(c) == 0, f"a refused hold took a seat of {c}")
    L.verify()


def t_hold_race():
    # 24 holds at once on a 1-seat code, 24 accounts: exactly one wins.
    _, code = fresh_code(1)
    reqs = []
    for _ in range(24):
        body = json.dumps({"code": code, "account": L.account("r"),
                           "external_id": xid("race"), "ttl_seconds": 60,
                           "client_ip": L.client_ip()}).encode()
        reqs.append(("POST", "/api/v1/holds", body,
                     {"Content-Type": "application/json",
                      "Authorization": "Bearer " + L.REDEEM_KEY}))
    res = L.race(reqs)
    errs = [r for r in res if not isinstance(r, L.Resp)]
    expect(not errs, f"{len(errs)} requests failed: {errs[:3]}")
    won = [r for r in res if r.status == 201]
    expect(len(won) == 1, f"{len(won)} holds granted on a 1-seat code; "
           f"statuses {sorted(r.status for r in res)}")
    for r in res:
        if r.status != 201:
            expect_error(r, 409, "exhausted", "a losing hold")
    expect(uses(code) == 1, f"uses {uses(code)} after the race, want 1")
    # 12 at once with one external_id: one hold, one seat, one token.
    _, code2 = fresh_code(5)
    body = json.dumps({"code": code2, "account": L.account("same"),
                       "external_id": xid("same"), "ttl_seconds": 60,
                       "client_ip": L.client_ip()}).encode()
    res = L.race([("POST", "/api/v1/holds", body,
                   {"Content-Type": "application/json",
                    "Authorization": "Bearer " + L.REDEEM_KEY})] * 12)
    errs = [r for r in res if not isinstance(r, L.Resp)]
    expect(not errs, f"{len(errs)} requests failed: {errs[:3]}")
    st = sorted(r.status for r in res)
    expect(st.count(201) == 1 and st.count(200) == 11,
           f"same external_id at once: statuses {st}, want one 201 and 200s")
    toks = {r.json()["hold"]["fencing_token"] for r in res}
    expect(len(toks) == 1, f"one external_id, several tokens: {toks}")
    expect(uses(code2) == 1, f"uses {uses(code2)}, want 1")
    L.verify()


def t_hold_confirm():
    camp, code = fresh_code(1)
    a = L.account("conf")
    e = xid()
    h = hold_ok(code, a, e)
    red = confirm_ok(e, False)
    check_redemption(red, code, a, camp, "confirm")
    info = L.code_info(code)
    expect(info.get("uses") == 1 and info.get("state") == "redeemed",
           f"after confirm: {info}, want uses 1 redeemed (no second claim)")
    got = hold_state(e)
    expect(got.get("state") == "confirmed", f"hold after confirm: {got}")
    expect(got.get("fencing_token") == h["fencing_token"],
           "confirm changed the fencing token")
    # Idempotent: the same redemption, already true, nothing taken.
    red2 = confirm_ok(e, True)
    expect(red2 == red, f"second confirm: {red2}, first {red}")
    # The redemption is real: redeeming for the account replays it (G3).
    r = L.redeem(code, a)
    j = expect_json_ok(r, 200, "redeem after confirm")
    expect(j.get("already") is True and j["redemption"]["id"] == red["id"],
           f"redeem after confirm is not the confirmed redemption: "
           f"{L.short(r.body)}")
    # Release after confirm changes nothing: 200, state confirmed.
    r = hold_post(e, "release")
    j = expect_json_ok(r, 200, "release after confirm")
    check_hold(j.get("hold"), e, "confirmed", "release after confirm")
    expect(uses(code) == 1, "release after confirm gave the seat back")
    expect(hold_state(e)["state"] == "confirmed", "release undid confirm")
    # A hold can be confirmed without a body as well as with {}.
    _, code3 = fresh_code(1)
    e3 = xid()
    hold_ok(code3, L.account(), e3)
    r = L.request("POST", "/api/v1/holds/" + e3 + "/confirm", None,
                  {"Authorization": "Bearer " + L.REDEEM_KEY})
    expect_json_ok(r, 200, "confirm without a body")
    expect_error(hold_post(L.uniq("nohold"), "confirm"), 404, "not_found",
                 "confirm an unknown hold")
    L.verify()


def t_hold_confirm_one_per_account():
    # G3: the account redeems the code on its own while holding a seat of
    # it; confirm then answers that redemption and gives the seat back.
    camp, code = fresh_code(3)
    a = L.account("g3")
    e = xid()
    hold_ok(code, a, e)
    red = expect_json_ok(L.redeem(code, a), 200, "direct redeem")["redemption"]
    expect(uses(code) == 2, f"uses {uses(code)}, want 2 (hold + redemption)")
    r = hold_post(e, "confirm")
    j = expect_json_ok(r, 200, "confirm after a direct redemption")
    expect(j.get("already") is True and j["redemption"]["id"] == red["id"],
           f"confirm made another redemption: {L.short(r.body)} "
           f"(direct one {red['id']})")
    expect(uses(code) == 1, f"uses {uses(code)} after confirm, want 1: the "
           "hold's seat goes back")
    # An account with a redemption of the code cannot hold a seat of it.
    expect_error(hold_req(code, a, xid()), 409, "conflict",
                 "a hold for an account that redeemed the code")
    expect(uses(code) == 1, "a refused hold took a seat")
    # Two holds of one account on one code (two external_ids): the second
    # is refused and takes no seat; the first confirms as usual.
    _, code2 = fresh_code(3)
    b = L.account("g3b")
    e1, e2 = xid(), xid()
    hold_ok(code2, b, e1)
    expect_error(hold_req(code2, b, e2), 409, "conflict",
                 "a second live hold of one account on one code")
    expect(uses(code2) == 1, f"uses {uses(code2)} after a refused second "
           "hold, want 1")
    confirm_ok(e1, False)
    expect(uses(code2) == 1, f"uses {uses(code2)} after the account's holds "
           "were confirmed, want 1")
    L.verify()


def t_hold_release():
    _, code = fresh_code(1)
    a = L.account("rel")
    e = xid()
    hold_ok(code, a, e)
    expect(L.code_info(code).get("state") == "exhausted", "not exhausted")
    r = hold_post(e, "release")
    j = expect_json_ok(r, 200, "release")
    check_hold(j.get("hold"), e, "released", "release")
    info = L.code_info(code)
    expect(info.get("uses") == 0 and info.get("state") == "active",
           f"after release: {info}, want uses 0 active")
    r = hold_post(e, "release")
    j = expect_json_ok(r, 200, "release again")
    check_hold(j.get("hold"), e, "released", "release again")
    expect(uses(code) == 0, "a second release returned a seat again")
    expect(hold_state(e)["state"] == "released", "GET after release")
    # A released hold cannot be confirmed, and the seat is free for others.
    r = hold_post(e, "confirm")
    expect(400 <= r.status < 500 and r.json().get("ok") is False,
           f"confirm of a released hold: {r}")
    expect(uses(code) == 0, "confirm of a released hold took a seat")
    expect_json_ok(L.redeem(code, L.account()), 200, "redeem the freed seat")
    expect_error(hold_post(L.uniq("nohold"), "release"), 404, "not_found",
                 "release an unknown hold")
    expect_error(hold_get(L.uniq("nohold")), 404, "not_found",
                 "GET an unknown hold")
    L.verify()


def t_hold_expired_confirm():
    _, code = fresh_code(1)
    a = L.account("exp")
    e = xid()
    hold_ok(code, a, e, ttl=1)
    st = L.wait_until(lambda: hold_state(e)["state"] == "expired",
                      timeout=1 + 10, step=0.2)
    expect(st, f"a 1 s hold still reads {hold_state(e)['state']!r} after 11 s")
    expect_error(hold_post(e, "confirm"), 410, "expired",
                 "confirm of a hold past its expires_at")
    # Its seat is back whether the sweeper or that confirm returned it.
    info = L.code_info(code)
    expect(info.get("uses") == 0 and info.get("state") == "active",
           f"after the expired confirm: {info}")
    expect(hold_state(e)["state"] == "expired", "hold not expired")
    r = hold_post(e, "release")
    j = expect_json_ok(r, 200, "release after expiry")
    check_hold(j.get("hold"), e, "expired", "release after expiry")
    expect(uses(code) == 0, "release after expiry returned a seat again")
    j = expect_json_ok(L.redeem(code, a), 200, "redeem after expiry")
    expect(j.get("already") is False, "the expired hold left a redemption")
    L.verify()


def t_hold_leaked():
    """The holder is gone: a 2 s hold never confirmed or released. The
    sweeper returns its seat; the code can be redeemed again."""
    _, code = fresh_code(1)
    a = L.account("leak")
    e = xid("leak")
    ttl = 2
    hold_ok(code, a, e, ttl=ttl)
    expect(uses(code) == 1, "the hold took no seat")
    deadline = ttl + SWEEP_LEAKED + SWEEP_SLACK
    # Only reads: GET does not change state, so the seat coming back is the
    # sweeper's work.
    back = L.wait_until(lambda: uses(code) == 0, timeout=deadline, step=0.25)
    expect(back, f"the leaked hold's seat not back {deadline} s after it was "
           f"taken: {L.code_info(code)}")
    expect(L.code_info(code).get("state") == "active",
           f"code after the sweep: {L.code_info(code)}")
    expect(hold_state(e)["state"] == "expired", "swept hold not expired")
    b = L.account("leak2")
    j = expect_json_ok(L.redeem(code, b), 200, "redeem the swept seat")
    expect(j.get("already") is False, "not a fresh redemption")
    expect_error(hold_post(e, "confirm"), 410, "expired",
                 "the gone holder confirms late")
    expect(uses(code) == 1, f"uses {uses(code)}, want 1")
    L.verify()


def t_hold_abuse_gate():
    """Holds pass through the redemption's abuse gate: counted failures
    from one client_ip end in 429 with Retry-After."""
    limit = int(os.environ.get("E2E_ABUSE_LIMIT", "20"))
    _, code = fresh_code(2)
    ip = L.client_ip()
    hold_ok(code, L.account(), xid(), ip=ip)
    first = None
    for i in range(limit + 1):
        unknown = "ZZZZ-ZZZZ-Z" + ALPHABET[i % 31] + ALPHABET[i // 31 % 31]
        r = hold_req(unknown, L.account("gate"), xid(), ip=ip)
        if r.status == 429:
            first = i
            break
        expect_error(r, 404, "invalid", f"unknown code, attempt {i + 1}")
    expect(first is not None, f"{limit + 1} failed holds from one client_ip "
           "were never rate_limited")
    expect_error(hold_req(code, L.account(), xid(), ip=ip), 429,
                 "rate_limited", "a good hold from the limited client_ip")
    expect(uses(code) == 1, "a rate-limited hold took a seat")
    # Another address is not limited.
    hold_ok(code, L.account(), xid(), ip=L.client_ip())


def t_hold_bad_request():
    _, code = fresh_code(1)
    a = L.account()
    good = {"code": code, "account": a, "external_id": xid(),
            "ttl_seconds": 60}
    bads = [
        ("missing code", {k: v for k, v in good.items() if k != "code"}),
        ("missing account", {k: v for k, v in good.items() if k != "account"}),
        ("missing external_id",
         {k: v for k, v in good.items() if k != "external_id"}),
        ("missing ttl_seconds",
         {k: v for k, v in good.items() if k != "ttl_seconds"}),
        ("ttl 0", dict(good, ttl_seconds=0)),
        ("ttl negative", dict(good, ttl_seconds=-5)),
        ("ttl a string", dict(good, ttl_seconds="60")),
        ("ttl a float", dict(good, ttl_seconds=1.5)),
        ("ttl over a day", dict(good, ttl_seconds=86401)),
        ("code a number", dict(good, code=12345)),
        ("external_id empty", dict(good, external_id="")),
        ("external_id with a space", dict(good, external_id="a b")),
        ("external_id with a slash", dict(good, external_id="a/b")),
        ("external_id 129 bytes", dict(good, external_id="x" * 129)),
        ("external_id a number", dict(good, external_id=7)),
        ("client_ip not an address", dict(good, client_ip="not-an-ip")),
    ]
    for what, body in bads:
        body = dict(body)
        body.setdefault("client_ip", L.client_ip())
        r = L.api("POST", "/api/v1/holds", body, key=L.REDEEM_KEY)
        expect_error(r, 400, "bad_request", what)
    for what, raw in [("not JSON", b"{code:"), ("an array", b"[1]"),
                      ("bad UTF-8", b'{"code": "\xff\xfe"}')]:
        r = L.api("POST", "/api/v1/holds", raw=raw, key=L.REDEEM_KEY)
        expect_error(r, 400, "bad_request", what)
    expect(uses(code) == 0, "a bad request took a seat")
    # 128 bytes of every allowed character is a valid external_id.
    ok_id = ("Az09._~:@-" * 13)[:128]
    ok_id = L.uniq("m")[:20] + ok_id[20:]
    hold_ok(code, a, ok_id)


# ------------------------------------------------- semaphores and permits

def sem_put(name, capacity, key=None):
    return L.api("PUT", "/api/v1/semaphores/" + name, {"capacity": capacity},
                 key=key)


def sem_put_ok(name, capacity, key=None):
    j = expect_json_ok(sem_put(name, capacity, key), 200,
                       f"PUT semaphore {name} capacity {capacity}")
    s = j.get("semaphore")
    expect(isinstance(s, dict) and s.get("name") == name and
           s.get("capacity") == capacity,
           f"PUT {name}: semaphore {s!r}, want capacity {capacity}")
    return s


def sem_get(name, key=None):
    j = expect_json_ok(L.api("GET", "/api/v1/semaphores/" + name,
                             key=L.REDEEM_KEY if key is None else key),
                       200, f"GET semaphore {name}")
    s = j.get("semaphore")
    expect(isinstance(s, dict), f"no semaphore object: {j}")
    for k in ("capacity", "in_use", "leaked"):
        expect(isinstance(s.get(k), int), f"semaphore {k} not an integer: {s}")
    expect(s.get("name") == name, f"semaphore name {s.get('name')!r}")
    return s


def permit_req(ext, sems, ttl=60, owner="e2e-worker", key=None):
    body = {"external_id": ext, "owner": owner, "ttl_seconds": ttl,
            "semaphores": [{"name": n, "count": c} for n, c in sems]}
    return L.api("POST", "/api/v1/permits", body,
                 key=L.REDEEM_KEY if key is None else key)


def check_permit(p, ext, state, what=""):
    pre = what + ": " if what else ""
    expect(isinstance(p, dict), f"{pre}permit is not an object: {p!r}")
    expect(p.get("external_id") == ext,
           f"{pre}external_id {p.get('external_id')!r}, want {ext!r}")
    expect(p.get("state") == state,
           f"{pre}state {p.get('state')!r}, want {state!r}: {p}")
    expect(L.RFC3339.match(str(p.get("expires_at"))),
           f"{pre}expires_at not RFC 3339 UTC: {p.get('expires_at')!r}")
    tok = p.get("fencing_token")
    expect(isinstance(tok, int) and not isinstance(tok, bool) and tok >= 1,
           f"{pre}fencing_token not a positive integer: {tok!r}")
    return p


def permit_ok(ext, sems, ttl=60, status=201, owner="e2e-worker"):
    r = permit_req(ext, sems, ttl, owner)
    j = expect_json_ok(r, status, f"permit {ext} on {sems}")
    return check_permit(j.get("permit"), ext, "acquired", "permit")


def permit_post(ext, verb, body=None, key=None):
    return L.api("POST", "/api/v1/permits/" + urllib.parse.quote(ext, safe="")
                 + "/" + verb, body, key=L.REDEEM_KEY if key is None else key)


def db_rows(sql):
    """Rows of a read-only query on the service's database (sqlite3 or
    the mariadb client), as tuples of strings or None."""
    dsn = os.environ.get("REDEEM_DB", "")
    if dsn.startswith("sqlite:"):
        con = sqlite3.connect("file:" + dsn[len("sqlite:"):] + "?mode=ro",
                              uri=True, timeout=10)
        try:
            return [tuple(None if v is None else str(v) for v in row)
                    for row in con.execute(sql)]
        finally:
            con.close()
    u = urllib.parse.urlsplit(dsn)
    q = urllib.parse.parse_qs(u.query)
    cmd = ["mariadb", "--no-defaults", "-N", "-B", "-u", u.username or "root"]
    if u.password:
        cmd.append("-p" + urllib.parse.unquote(u.password))
    if "socket" in q:
        cmd += ["-S", q["socket"][0]]
    else:
        cmd += ["-h", u.hostname or "127.0.0.1", "-P", str(u.port or 3306)]
    cmd += ["-e", sql, u.path.lstrip("/")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    expect(p.returncode == 0, f"mariadb: {L.short(p.stderr)}")
    return [tuple(None if v == "NULL" else v for v in ln.split("\t"))
            for ln in p.stdout.splitlines()]


def t_semaphore_put_get():
    name = sem_name()
    s = sem_put_ok(name, 3)
    expect(s.get("in_use") == 0, f"a new semaphore has in_use {s}")
    g = sem_get(name)
    expect(g["capacity"] == 3 and g["in_use"] == 0 and g["leaked"] == 0,
           f"GET after create: {g}")
    sem_put_ok(name, 5)
    expect(sem_get(name)["capacity"] == 5, "capacity change not kept")
    # Every change is recorded: who, when, from, to (the contract names
    # no route for the history, so it is read from the database).
    sem_put_ok(name, 2)
    rows = db_rows(
        "SELECT h.from_capacity, h.to_capacity, h.who, h.at "
        "FROM semaphore_history h JOIN semaphores s ON s.id = h.semaphore_id "
        f"WHERE s.name = '{name}' ORDER BY h.id")
    got = [(f, t) for f, t, _, _ in rows]
    expect(got == [(None, "3"), ("3", "5"), ("5", "2")],
           f"capacity history {got}, want created 3, 3->5, 5->2")
    expect(all(w and at and int(at) > 0 for _, _, w, at in rows),
           f"history rows without who or when: {rows}")
    # Capacity below in_use is allowed and admits nobody until released.
    sem_put_ok(name, 2)
    p1, p2 = xid("p"), xid("p")
    permit_ok(p1, [(name, 1)])
    permit_ok(p2, [(name, 1)])
    s = sem_put_ok(name, 1)
    expect(s.get("in_use") == 2, f"lowering the capacity changed in_use: {s}")
    expect_error(permit_req(xid("p"), [(name, 1)]), 409, "exhausted",
                 "capacity 1, in_use 2")
    expect_json_ok(permit_post(p1, "release"), 200, "release p1")
    expect_error(permit_req(xid("p"), [(name, 1)]), 409, "exhausted",
                 "capacity 1, in_use 1")
    expect_json_ok(permit_post(p2, "release"), 200, "release p2")
    permit_ok(xid("p"), [(name, 1)])
    g = sem_get(name)
    expect(g["in_use"] == 1 and g["capacity"] == 1, f"at the end: {g}")
    expect_error(L.api("GET", "/api/v1/semaphores/" + sem_name("none"),
                       key=L.REDEEM_KEY), 404, "not_found",
                 "GET an unknown semaphore")
    for what, body in [("capacity negative", {"capacity": -1}),
                       ("capacity a string", {"capacity": "10"}),
                       ("capacity missing", {}),
                       ("capacity a float", {"capacity": 2.5})]:
        r = L.api("PUT", "/api/v1/semaphores/" + name, body)
        expect_error(r, 400, "bad_request", what)
    r = L.api("PUT", "/api/v1/semaphores/" + "s" * 65, {"capacity": 1})
    expect_error(r, 400, "bad_request", "a 65-byte name")
    r = L.api("PUT", "/api/v1/semaphores/" + name, raw=b"{capacity")
    expect_error(r, 400, "bad_request", "not JSON")
    expect(sem_get(name)["capacity"] == 1, "a bad PUT changed the capacity")
    L.verify()


def t_permit_acquire():
    name = sem_name()
    sem_put_ok(name, 3)
    e1, e2 = xid("p"), xid("p")
    p1 = permit_ok(e1, [(name, 2)])
    expect(sem_get(name)["in_use"] == 2, "the permit took no room")
    r = permit_req(e1, [(name, 2)])
    j = expect_json_ok(r, 200, "the same external_id again")
    again = check_permit(j.get("permit"), e1, "acquired", "replay")
    expect(again["fencing_token"] == p1["fencing_token"] and
           again["expires_at"] == p1["expires_at"],
           f"replay differs: {again} vs {p1}")
    expect(sem_get(name)["in_use"] == 2, "a replayed permit took room")
    expect_error(permit_req(e1, [(name, 1)]), 409, "conflict",
                 "same external_id, other count")
    p2 = permit_ok(e2, [(name, 1)])
    expect(p2["fencing_token"] > p1["fencing_token"],
           f"tokens {p1['fencing_token']} then {p2['fencing_token']}: "
           "not increasing")
    r = permit_req(xid("p"), [(name, 1)])
    j = expect_error(r, 409, "exhausted", "a full semaphore")
    expect(j.get("semaphore") == name,
           f"409 names {j.get('semaphore')!r}, want {name!r}")
    # Release: room back, idempotent, a later grant's token is larger.
    r = permit_post(e1, "release")
    j = expect_json_ok(r, 200, "release")
    check_permit(j.get("permit"), e1, "released", "release")
    expect(sem_get(name)["in_use"] == 1, "release gave no room back")
    r = permit_post(e1, "release")
    j = expect_json_ok(r, 200, "release again")
    check_permit(j.get("permit"), e1, "released", "release again")
    expect(sem_get(name)["in_use"] == 1, "a second release gave room again")
    expect_error(permit_post(e1, "heartbeat", {"ttl_seconds": 60}), 410,
                 "expired", "heartbeat of a released permit")
    p3 = permit_ok(xid("p"), [(name, 2)])
    expect(p3["fencing_token"] > p2["fencing_token"],
           f"token after release {p3['fencing_token']} not above "
           f"{p2['fencing_token']}")
    expect(sem_get(name)["in_use"] == 3, "in_use is not 3")
    expect_error(permit_post(xid("none"), "release"), 404, "not_found",
                 "release an unknown permit")
    expect_error(permit_post(xid("none"), "heartbeat", {"ttl_seconds": 5}),
                 404, "not_found", "heartbeat an unknown permit")
    L.verify()


def t_permit_all_or_nothing():
    a, b, c = sem_name("a"), sem_name("b"), sem_name("c")
    sem_put_ok(a, 2)
    sem_put_ok(b, 1)
    sem_put_ok(c, 5)
    permit_ok(xid("p"), [(b, 1)])
    # b is full: nothing is taken from a or c, whatever the order.
    for order in ([(a, 1), (b, 1), (c, 1)], [(c, 2), (b, 1), (a, 2)]):
        r = permit_req(xid("p"), order)
        j = expect_error(r, 409, "exhausted", f"permit over {order}")
        expect(j.get("semaphore") == b,
               f"409 names {j.get('semaphore')!r}, want the full one {b!r}")
        for n in (a, c):
            expect(sem_get(n)["in_use"] == 0,
                   f"a refused permit took room on {n}: {sem_get(n)}")
    # An unknown semaphore: refused, nothing taken.
    ghost = sem_name("ghost")
    r = permit_req(xid("p"), [(a, 1), (ghost, 1)])
    j = expect_error(r, 404, "not_found", "a permit naming no semaphore")
    expect(j.get("semaphore") == ghost, f"404 names {j.get('semaphore')!r}")
    expect(sem_get(a)["in_use"] == 0, "a refused permit took room on a")
    # All there: taken from each, one permit.
    e = xid("p")
    p = permit_ok(e, [(a, 2), (c, 3)])
    expect(sem_get(a)["in_use"] == 2 and sem_get(c)["in_use"] == 3,
           f"after a two-semaphore permit: {sem_get(a)} {sem_get(c)}")
    expect(isinstance(p.get("fencing_token"), int), "no token")
    expect_json_ok(permit_post(e, "release"), 200, "release")
    expect(sem_get(a)["in_use"] == 0 and sem_get(c)["in_use"] == 0,
           "release gave back only part of the room")
    L.verify()


def t_permit_race():
    # G5/G6: 20 permits at once on a semaphore of capacity 6.
    name = sem_name("race")
    sem_put_ok(name, 6)
    reqs = []
    for _ in range(20):
        body = json.dumps({"external_id": xid("race"), "owner": "racer",
                           "ttl_seconds": 60,
                           "semaphores": [{"name": name, "count": 1}]}).encode()
        reqs.append(("POST", "/api/v1/permits", body,
                     {"Content-Type": "application/json",
                      "Authorization": "Bearer " + L.REDEEM_KEY}))
    res = L.race(reqs)
    errs = [r for r in res if not isinstance(r, L.Resp)]
    expect(not errs, f"{len(errs)} requests failed: {errs[:3]}")
    won = [r for r in res if r.status == 201]
    expect(len(won) == 6, f"{len(won)} permits granted on capacity 6; "
           f"statuses {sorted(r.status for r in res)}")
    for r in res:
        if r.status != 201:
            j = expect_error(r, 409, "exhausted", "a losing permit")
            expect(j.get("semaphore") == name, f"409 names {j}")
    toks = [r.json()["permit"]["fencing_token"] for r in won]
    expect(len(set(toks)) == 6, f"fencing tokens not distinct: {toks}")
    g = sem_get(name)
    expect(g["in_use"] == 6, f"in_use after the race: {g}")
    L.verify()


def t_permit_heartbeat_and_leak():
    """Two 2 s permits: one heartbeats to a long TTL and survives, the
    other's owner is gone. The sweeper returns the leaked room; the lost
    permit's heartbeat and release say expired."""
    name = sem_name("hb")
    sem_put_ok(name, 2)
    alive, lost = xid("alive"), xid("lost")
    ttl = 2
    pa = permit_ok(alive, [(name, 1)], ttl=ttl + 1)
    permit_ok(lost, [(name, 1)], ttl=ttl)
    r = permit_post(alive, "heartbeat", {"ttl_seconds": 600})
    j = expect_json_ok(r, 200, "heartbeat")
    hb = check_permit(j.get("permit"), alive, "acquired", "heartbeat")
    expect(hb["expires_at"] > pa["expires_at"],
           f"heartbeat did not extend: {pa['expires_at']} -> "
           f"{hb['expires_at']}")
    expect(hb["fencing_token"] == pa["fencing_token"],
           "a heartbeat changed the fencing token")
    expect_error(permit_post(alive, "heartbeat", {}), 400, "bad_request",
                 "heartbeat without ttl_seconds")
    expect_error(permit_post(alive, "heartbeat", {"ttl_seconds": 0}), 400,
                 "bad_request", "heartbeat with ttl 0")
    deadline = ttl + SWEEP_LEAKED + SWEEP_SLACK
    back = L.wait_until(lambda: sem_get(name)["in_use"] == 1,
                        timeout=deadline, step=0.25)
    expect(back, f"the leaked permit's room not back after {deadline} s: "
           f"{sem_get(name)}")
    g = sem_get(name)
    expect(g["leaked"] == 0, f"a swept permit still counts as leaked: {g}")
    # The lost lease learns it: heartbeat 410, release says expired.
    expect_error(permit_post(lost, "heartbeat", {"ttl_seconds": 60}), 410,
                 "expired", "heartbeat of a swept permit")
    r = permit_post(lost, "release")
    j = expect_json_ok(r, 200, "release of a swept permit")
    check_permit(j.get("permit"), lost, "expired", "release after the sweep")
    r = permit_post(lost, "release")
    j = expect_json_ok(r, 200, "release of a swept permit again")
    check_permit(j.get("permit"), lost, "expired", "release again")
    # The heartbeated one outlived its first TTL and still holds its room.
    r = permit_post(alive, "heartbeat", {"ttl_seconds": 600})
    j = expect_json_ok(r, 200, "heartbeat after the first TTL")
    check_permit(j.get("permit"), alive, "acquired", "alive permit")
    expect(sem_get(name)["in_use"] == 1, f"in_use {sem_get(name)}")
    # The leaked room is usable again.
    p = permit_ok(xid("after"), [(name, 1)])
    expect(p["fencing_token"] > hb["fencing_token"], "token not increasing")
    expect_error(permit_req(xid("over"), [(name, 1)]), 409, "exhausted",
                 "full again")
    L.verify()


def t_permit_bad_request():
    name = sem_name()
    sem_put_ok(name, 5)
    good = {"external_id": xid("p"), "owner": "o", "ttl_seconds": 60,
            "semaphores": [{"name": name, "count": 1}]}
    bads = [
        ("missing external_id",
         {k: v for k, v in good.items() if k != "external_id"}),
        ("missing owner", {k: v for k, v in good.items() if k != "owner"}),
        ("missing ttl_seconds",
         {k: v for k, v in good.items() if k != "ttl_seconds"}),
        ("missing semaphores",
         {k: v for k, v in good.items() if k != "semaphores"}),
        ("semaphores empty", dict(good, semaphores=[])),
        ("semaphores an object", dict(good, semaphores={"name": name})),
        ("semaphores of strings", dict(good, semaphores=[name])),
        ("count 0", dict(good, semaphores=[{"name": name, "count": 0}])),
        ("count a string", dict(good, semaphores=[{"name": name,
                                                   "count": "1"}])),
        ("name missing", dict(good, semaphores=[{"count": 1}])),
        ("a name twice", dict(good, semaphores=[{"name": name, "count": 1},
                                                {"name": name, "count": 1}])),
        ("17 semaphores", dict(good, semaphores=[
            {"name": f"{name}-{i}", "count": 1} for i in range(17)])),
        ("ttl 0", dict(good, ttl_seconds=0)),
        ("ttl over a day", dict(good, ttl_seconds=86401)),
        ("external_id with a space", dict(good, external_id="a b")),
        ("external_id 129 bytes", dict(good, external_id="p" * 129)),
    ]
    for what, body in bads:
        r = L.api("POST", "/api/v1/permits", body, key=L.REDEEM_KEY)
        expect_error(r, 400, "bad_request", what)
    r = L.api("POST", "/api/v1/permits", raw=b"[", key=L.REDEEM_KEY)
    expect_error(r, 400, "bad_request", "not JSON")
    expect(sem_get(name)["in_use"] == 0, "a bad request took room")
    permit_ok(good["external_id"], [(name, 1)], owner="o")


# ---------------------------------------------------- auth and isolation

def t_auth():
    _, code = fresh_code(1)
    name = sem_name()
    sem_put_ok(name, 1)
    e = xid()
    hold_ok(code, L.account(), e)
    pe = xid("p")
    permit_ok(pe, [(name, 1)])
    routes = [
        ("POST", "/api/v1/holds", {"code": code, "account": L.account(),
                                   "external_id": xid(), "ttl_seconds": 60}),
        ("GET", "/api/v1/holds/" + e, None),
        ("POST", f"/api/v1/holds/{e}/confirm", {}),
        ("POST", f"/api/v1/holds/{e}/release", {}),
        ("PUT", "/api/v1/semaphores/" + name, {"capacity": 9}),
        ("GET", "/api/v1/semaphores/" + name, None),
        ("POST", "/api/v1/permits", {"external_id": xid("p"), "owner": "o",
                                     "ttl_seconds": 60, "semaphores": [
                                         {"name": name, "count": 1}]}),
        ("POST", f"/api/v1/permits/{pe}/heartbeat", {"ttl_seconds": 60}),
        ("POST", f"/api/v1/permits/{pe}/release", {}),
        ("POST", "/api/v1/webhooks", {"url": "http://127.0.0.1:9/x"}),
    ]
    k = L.REDEEM_KEY
    wrong = k[:-1] + ("A" if k[-1] != "A" else "B")
    for m, p, body in routes:
        r = L.api(m, p, body, key="")
        expect_error(r, 401, "unauthorized", f"{m} {p} without a key")
        r = L.api(m, p, body, key=wrong)
        expect_error(r, 401, "unauthorized", f"{m} {p} with a wrong key")
    # Scope admin only: creating semaphores and webhooks.
    for m, p, body in routes:
        if (m, p) in (("PUT", "/api/v1/semaphores/" + name),
                      ("POST", "/api/v1/webhooks")):
            r = L.api(m, p, body, key=k)
            expect_error(r, 403, "forbidden", f"{m} {p} with a redeem key")
    expect(sem_get(name)["capacity"] == 1, "a refused PUT changed capacity")
    expect(hold_state(e)["state"] == "held", "a refused request ended the hold")
    expect(sem_get(name)["in_use"] == 1, "a refused request took or gave room")
    expect(uses(code) == 1, f"uses {uses(code)}, want 1")
    # Scope admin implies redeem.
    r = permit_req(xid("p"), [(name, 1)], key=L.ADMIN_KEY)
    expect_error(r, 409, "exhausted", "admin key acquires (semaphore full)")
    r = L.api("GET", "/api/v1/holds/" + e, key=L.ADMIN_KEY)
    expect_json_ok(r, 200, "admin key reads a hold")


def t_methods():
    for m, p, allow in [("GET", "/api/v1/holds", "POST"),
                        ("DELETE", "/api/v1/holds/x1", "GET"),
                        ("GET", "/api/v1/holds/x1/confirm", "POST"),
                        ("GET", "/api/v1/permits", "POST"),
                        ("POST", "/api/v1/semaphores/s1", "PUT"),
                        ("GET", "/api/v1/webhooks", "POST"),
                        ("PUT", "/api/v1/permits/x1/release", "POST")]:
        r = L.api(m, p, key=L.ADMIN_KEY)
        expect_error(r, 405, "method_not_allowed", f"{m} {p}")
        expect(allow in r.header("Allow", ""),
               f"{m} {p}: Allow {r.header('Allow')!r} lacks {allow}")


def t_tenant_isolation():
    expect(OTHER_KEY, "no E2E_OTHER_ADMIN_KEY given")
    _, code = fresh_code(2)
    e = xid()
    hold_ok(code, L.account(), e)
    for m, p in [("GET", "/api/v1/holds/" + e),
                 ("POST", f"/api/v1/holds/{e}/confirm"),
                 ("POST", f"/api/v1/holds/{e}/release")]:
        expect_error(L.api(m, p, {} if m == "POST" else None, key=OTHER_KEY),
                     404, "not_found", f"another tenant: {m} {p}")
    expect(hold_state(e)["state"] == "held", "another tenant ended the hold")
    expect(uses(code) == 1, "another tenant changed the code's uses")
    r = hold_req(code, L.account(), xid(), key=OTHER_KEY)
    expect_error(r, 404, "invalid", "another tenant holds our code")
    # The same external_id in another tenant is another hold.
    oc = "E2ESW" + L.RUN.upper().replace("0", "Z").replace("1", "Y")
    camp = L.uniq("iso")
    expect_json_ok(L.api("POST", "/api/v1/campaigns",
                         {"name": camp, "kind": "shared"}, key=OTHER_KEY),
                   201, "other tenant: campaign")
    expect_json_ok(L.api("POST", f"/api/v1/campaigns/{camp}/codes",
                         {"codes": [oc], "max_uses": 1}, key=OTHER_KEY),
                   201, "other tenant: code")
    r = hold_req(oc, L.account(), e, key=OTHER_KEY)
    j = expect_json_ok(r, 201, "other tenant: a hold with our external_id")
    expect(norm(j["hold"].get("code", oc)) == norm(oc),
           f"other tenant's hold is on {j['hold'].get('code')!r}")
    expect(hold_state(e)["state"] == "held", "our hold changed")
    # Semaphores: same name, separate capacity and room.
    name = sem_name("iso")
    sem_put_ok(name, 1)
    pe = xid("p")
    permit_ok(pe, [(name, 1)])
    expect_error(L.api("GET", "/api/v1/semaphores/" + name, key=OTHER_KEY),
                 404, "not_found", "another tenant's semaphore")
    r = permit_req(xid("p"), [(name, 1)], key=OTHER_KEY)
    expect_error(r, 404, "not_found", "a permit on another tenant's semaphore")
    for verb, body in [("heartbeat", {"ttl_seconds": 60}), ("release", {})]:
        expect_error(permit_post(pe, verb, body, key=OTHER_KEY), 404,
                     "not_found", f"another tenant: permit {verb}")
    sem_put_ok(name, 3, key=OTHER_KEY)
    permit_ok_other = permit_req(xid("p"), [(name, 2)], key=OTHER_KEY)
    expect_json_ok(permit_ok_other, 201, "other tenant's own semaphore")
    g = sem_get(name)
    expect(g["capacity"] == 1 and g["in_use"] == 1,
           f"our semaphore after the other tenant's: {g}")


# --------------------------------------------------------------- webhooks

class Receiver:
    """An HTTP server on a free loopback port that records every POST and
    answers 200, or 500 to the first attempt of an event whose redemption
    account is in flaky."""

    def __init__(self):
        self.lock = threading.Lock()
        self.got = []  # dicts: path, headers, body, json, status, at
        self.flaky = set()
        self.seen = {}  # (path, event id) -> attempts
        rec = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                try:
                    j = json.loads(body)
                except ValueError:
                    j = None
                status = rec.answer(self.path, j)
                with rec.lock:
                    rec.got.append({"path": self.path,
                                    "headers": dict(self.headers.items()),
                                    "hdrs": self.headers,
                                    "body": body, "json": j,
                                    "status": status,
                                    "at": time.time()})
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        self.t = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.t.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, path, j):
        ev = j.get("id") if isinstance(j, dict) else None
        acct = None
        try:
            acct = j["data"]["redemption"]["account"]
        except (TypeError, KeyError):
            pass
        with self.lock:
            n = self.seen[(path, ev)] = self.seen.get((path, ev), 0) + 1
            if acct in self.flaky and n == 1:
                return 500
        return 200

    def posts(self, path, pred=lambda j: True):
        with self.lock:
            return [g for g in self.got if g["path"] == path and
                    isinstance(g["json"], dict) and pred(g["json"])]

    def wait(self, path, pred, n=1, timeout=DELIVERY_DEADLINE):
        got = L.wait_until(lambda: len(self.posts(path, pred)) >= n,
                           timeout=timeout, step=0.1)
        return self.posts(path, pred) if got else None

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


_hook = {}
_hook_lock = threading.Lock()


def hook():
    """The receiver and this run's webhook of tenant default (path /main),
    made once: (receiver, secret)."""
    with _hook_lock:
        if "rx" not in _hook:
            _hook["rx"] = Receiver()
        rx = _hook["rx"]
        if "secret" not in _hook:
            r = L.api("POST", "/api/v1/webhooks", {"url": rx.url("/main")})
            j = expect_json_ok(r, 201, "create the webhook")
            _hook["secret"] = j["webhook"]["secret"]
        return rx, _hook["secret"]


SIG = re.compile(r"^t=(\d+),v1=([0-9a-f]{64})$")


def check_signed(post, secret, what):
    ct = post["hdrs"].get("Content-Type", "")
    expect(ct.startswith("application/json"),
           f"{what}: Content-Type {ct!r}, want application/json")
    sig = post["hdrs"].get("Redeem-Signature")
    expect(sig is not None, f"{what}: no Redeem-Signature header: "
           f"{sorted(post['headers'])}")
    m = SIG.match(sig)
    expect(m, f"{what}: Redeem-Signature {sig!r} is not t=<secs>,v1=<hex>")
    t, mac = m.group(1), m.group(2)
    want = hmac.new(secret.encode(), t.encode() + b"." + post["body"],
                    hashlib.sha256).hexdigest()
    expect(hmac.compare_digest(want, mac),
           f"{what}: v1 is not HMAC-SHA256(secret, t.body): {sig}")
    wrong = hmac.new(b"not-the-secret", t.encode() + b"." + post["body"],
                     hashlib.sha256).hexdigest()
    expect(wrong != mac, f"{what}: the signature does not depend on the key")


def check_event(j, typ, what):
    expect(isinstance(j.get("id"), str) and j["id"].startswith("evt_"),
           f"{what}: event id {j.get('id')!r}, want a string evt_...")
    expect(j.get("type") == typ, f"{what}: type {j.get('type')!r}")
    expect(L.RFC3339.match(str(j.get("created_at"))),
           f"{what}: created_at {j.get('created_at')!r}")
    expect(isinstance(j.get("data"), dict), f"{what}: no data object")


def is_event(typ, red_id=None, hold_xid=None):
    """A predicate on a received body: the event of that type about that
    redemption id or hold."""
    def pred(j):
        d = j.get("data") if isinstance(j.get("data"), dict) else {}
        if j.get("type") != typ:
            return False
        if red_id is not None:
            red = d.get("redemption")
            return isinstance(red, dict) and red.get("id") == red_id
        h = d.get("hold")
        return isinstance(h, dict) and h.get("external_id") == hold_xid
    return pred


def t_webhook_create():
    rx, _ = hook()
    for what, body in [("missing url", {}), ("url a number", {"url": 5}),
                       ("ftp url", {"url": "ftp://127.0.0.1/x"}),
                       ("no scheme", {"url": "127.0.0.1:8/x"}),
                       ("user in url", {"url": "http://u:p@127.0.0.1/x"}),
                       ("spaces", {"url": "http://exa mple.com/"}),
                       ("bad port", {"url": "http://127.0.0.1:99999/x"})]:
        r = L.api("POST", "/api/v1/webhooks", body)
        expect_error(r, 400, "bad_request", what)
    url = rx.url("/created-" + L.uniq("w"))
    r = L.api("POST", "/api/v1/webhooks", {"url": url})
    j = expect_json_ok(r, 201, "create")
    w = j.get("webhook")
    expect(isinstance(w, dict), f"no webhook object: {j}")
    expect(w.get("url") == url, f"url {w.get('url')!r}, want {url!r}")
    expect(w.get("id") is not None, f"no id: {w}")
    sec = w.get("secret")
    expect(isinstance(sec, str) and len(sec) >= 16,
           f"secret {sec!r} is not a string of some length")
    r2 = L.api("POST", "/api/v1/webhooks", {"url": url + "2"})
    w2 = expect_json_ok(r2, 201, "create another")["webhook"]
    expect(w2.get("secret") != sec and w2.get("id") != w.get("id"),
           f"two webhooks share a secret or an id: {w} {w2}")


def t_webhook_redeemed():
    rx, secret = hook()
    camp, code = fresh_code(1)
    a = L.account("wh")
    r = L.redeem(code, a)
    red = expect_json_ok(r, 200, "redeem")["redemption"]
    mine = is_event("code.redeemed", red["id"])
    got = rx.wait("/main", mine)
    expect(got, f"no code.redeemed for redemption {red['id']} within "
           f"{DELIVERY_DEADLINE} s; received {len(rx.posts('/main'))} POSTs")
    p = got[0]
    check_signed(p, secret, "code.redeemed")
    check_event(p["json"], "code.redeemed", "code.redeemed")
    expect(p["json"]["data"]["redemption"] == red,
           f"event redemption {p['json']['data']['redemption']} differs from "
           f"the redeem answer {red}")
    # A confirmed hold is a redemption: one event too.
    _, code2 = fresh_code(1)
    b = L.account("whh")
    e = xid()
    hold_ok(code2, b, e)
    red2 = confirm_ok(e, False)
    got = rx.wait("/main", is_event("code.redeemed", red2["id"]))
    expect(got, f"no code.redeemed for the confirmed hold {red2['id']}")
    check_signed(got[0], secret, "code.redeemed of a hold")
    expect(got[0]["json"]["data"]["redemption"] == red2,
           "the confirm's event differs from its answer")


def t_webhook_retry():
    rx, secret = hook()
    _, code = fresh_code(1)
    a = L.account("flaky")
    rx.flaky.add(a.strip().lower())
    red = expect_json_ok(L.redeem(code, a), 200, "redeem")["redemption"]
    mine = is_event("code.redeemed", red["id"])
    got = rx.wait("/main", mine, n=2)
    n = len(rx.posts("/main", mine))
    expect(got, f"{n} attempt(s) of a delivery answered 500 first, want a "
           f"retry within {DELIVERY_DEADLINE} s")
    first, second = got[0], got[1]
    expect(first["status"] == 500 and second["status"] == 200,
           f"attempts answered {first['status']}, {second['status']}")
    expect(first["json"]["id"] == second["json"]["id"],
           f"the retry has another event id: {first['json']['id']} then "
           f"{second['json']['id']}")
    expect(first["json"]["data"] == second["json"]["data"] and
           first["json"]["created_at"] == second["json"]["created_at"],
           "the retry carries another event")
    check_signed(first, secret, "first attempt")
    check_signed(second, secret, "retry")


def t_webhook_other_events():
    rx, secret = hook()
    # redemption.reversed
    _, code = fresh_code(1)
    red = expect_json_ok(L.redeem(code, L.account("rev")), 200,
                         "redeem")["redemption"]
    expect_json_ok(L.api("POST", f"/api/v1/redemptions/{red['id']}/reverse",
                         {"reason": "e2e", "policy": "return_seat"}),
                   200, "reverse")
    got = rx.wait("/main", is_event("redemption.reversed", red["id"]))
    expect(got, f"no redemption.reversed for {red['id']}")
    check_signed(got[0], secret, "redemption.reversed")
    check_event(got[0]["json"], "redemption.reversed", "redemption.reversed")
    # hold.expired, once the sweeper takes a lost hold back.
    _, code2 = fresh_code(1)
    e = xid("whexp")
    hold_ok(code2, L.account(), e, ttl=1)
    got = rx.wait("/main", is_event("hold.expired", hold_xid=e),
                  timeout=1 + SWEEP_LEAKED + DELIVERY_DEADLINE)
    expect(got, f"no hold.expired for hold {e}")
    check_signed(got[0], secret, "hold.expired")
    check_event(got[0]["json"], "hold.expired", "hold.expired")


def t_webhook_tenants():
    """Another tenant's webhook gets its events only, and ours none of
    its."""
    expect(OTHER_KEY, "no E2E_OTHER_ADMIN_KEY given")
    rx, _ = hook()
    path = "/other-" + L.uniq("t")
    r = L.api("POST", "/api/v1/webhooks", {"url": rx.url(path)},
              key=OTHER_KEY)
    osecret = expect_json_ok(r, 201, "other tenant's webhook")["webhook"][
        "secret"]
    camp = L.uniq("whiso")
    oc = "E2EWH" + L.RUN.upper().replace("0", "Z").replace("1", "Y")
    expect_json_ok(L.api("POST", "/api/v1/campaigns",
                         {"name": camp, "kind": "shared"}, key=OTHER_KEY),
                   201, "other tenant: campaign")
    expect_json_ok(L.api("POST", f"/api/v1/campaigns/{camp}/codes",
                         {"codes": [oc], "max_uses": 1}, key=OTHER_KEY),
                   201, "other tenant: code")
    x = expect_json_ok(L.redeem(oc, L.account("ox"), key=OTHER_KEY), 200,
                       "other tenant redeems")["redemption"]
    _, code = fresh_code(1)
    y = expect_json_ok(L.redeem(code, L.account("oy")), 200,
                       "we redeem")["redemption"]

    def is_red(rid):
        return is_event("code.redeemed", rid)
    gx = rx.wait(path, is_red(x["id"]))
    expect(gx, f"the other tenant's webhook got no event of its redemption")
    check_signed(gx[0], osecret, "other tenant's event")
    expect(rx.wait("/main", is_red(y["id"])), "our webhook got no event")
    # One later redemption of ours, delivered in a later round than X's
    # fan-out: by the time it arrives, every attempt for X has been made.
    _, code2 = fresh_code(1)
    z = expect_json_ok(L.redeem(code2, L.account("oz")), 200,
                       "we redeem again")["redemption"]
    expect(rx.wait("/main", is_red(z["id"])), "our webhook got no event")
    expect(not rx.posts("/main", is_red(x["id"])),
           "our webhook received the other tenant's event")
    expect(not rx.posts(path, is_red(y["id"])) and
           not rx.posts(path, is_red(z["id"])),
           "the other tenant's webhook received our events")


TESTS = [
    ("holds: create, same external_id, fencing, uses", t_hold_create),
    ("holds: exhausted, invalid, revoked, expired, per-account limit",
     t_hold_exhausted_and_errors),
    ("holds: 24 at once on 1 seat; 12 with one external_id", t_hold_race),
    ("holds: confirm, idempotent, release after confirm", t_hold_confirm),
    ("holds: confirm respects one redemption per account (G3)",
     t_hold_confirm_one_per_account),
    ("holds: release, idempotent, seat back", t_hold_release),
    ("holds: confirm past expires_at is 410 expired", t_hold_expired_confirm),
    ("holds: a leaked hold's seat comes back by the sweeper", t_hold_leaked),
    ("holds: abuse gate, 429 rate_limited", t_hold_abuse_gate),
    ("holds: bad_request", t_hold_bad_request),
    ("semaphores: PUT, GET, history, capacity below in_use",
     t_semaphore_put_get),
    ("permits: acquire, same external_id, 409 names it, release, tokens",
     t_permit_acquire),
    ("permits: all or nothing across semaphores", t_permit_all_or_nothing),
    ("permits: 20 at once on capacity 6 (G5, G6)", t_permit_race),
    ("permits: heartbeat extends; a leaked permit is swept, says expired",
     t_permit_heartbeat_and_leak),
    ("permits: bad_request", t_permit_bad_request),
    ("leases and webhooks: 401 without key, 403 for redeem scope", t_auth),
    ("leases and webhooks: 405 with Allow", t_methods),
    ("leases: tenants do not see each other", t_tenant_isolation),
    ("webhooks: create, admin only, bad urls", t_webhook_create),
    ("webhooks: code.redeemed arrives signed (redeem, confirm)",
     t_webhook_redeemed),
    ("webhooks: a 500 is retried with the same event id", t_webhook_retry),
    ("webhooks: redemption.reversed and hold.expired",
     t_webhook_other_events),
    ("webhooks: tenants get only their own events", t_webhook_tenants),
]


def main():
    if len(sys.argv) > 1:
        L.configure(sys.argv[1])
    only = [s for s in os.environ.get("E2E_ONLY", "").split(",") if s]
    for name, fn in TESTS:
        if only and not any(o in fn.__name__ or o in name for o in only):
            continue
        L.run(name, fn)
    if "rx" in _hook:
        _hook["rx"].close()
    L.finish()


if __name__ == "__main__":
    main()
