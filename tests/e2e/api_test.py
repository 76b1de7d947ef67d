#!/usr/bin/env python3
"""End-to-end tests of the JSON API and the redeem page over plain HTTP,
against real nginx and FastCGI workers (started by tests/e2e/run.sh).

Usage: api_test.py BASE_URL
Environment: E2E_ADMIN_KEY, E2E_REDEEM_KEY (API keys of tenant default),
E2E_BIN (holds redeemctl), REDEEM_DB (the service's database, for fixtures
and `redeemctl verify`), E2E_VAR and E2E_SID (the run's state directory and
the session of serve.sh, to find its workers), E2E_OTHER_ADMIN_KEY (an admin
key of another tenant). E2E_ONLY=name,name runs a subset.

Every check prints "ok NAME" or "FAIL NAME: why"; the exit status is 0 only
when all pass. Checks never share codes, accounts or client addresses, so
the abuse gate of one never throttles another.
"""

import json
import os
import random
import re
import signal
import sqlite3
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect, expect_error, expect_json_ok  # noqa: E402

MiB = 1 << 20
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
ABUSE_LIMIT = int(os.environ.get("E2E_ABUSE_LIMIT", "20"))
MAKEFILE_MARK = "CFLAGS_COMMON"  # a string of the repository's Makefile


def norm(code):
    return re.sub(r"[\s-]", "", code).upper()


def fresh_code(max_uses=1, *opts):
    camp = L.campaign()
    return camp, L.codes(camp, 1, max_uses, *opts)[0]


def redeem_ok(code, acct, ip=None, key=None, already=False):
    r = L.redeem(code, acct, ip, key)
    j = expect_json_ok(r, 200, f"redeem {code} for {acct}")
    expect(j.get("already") is already,
           f"already={j.get('already')!r}, want {already}: {L.short(r.body)}")
    return j["redemption"]


def check_redemption(red, code, acct, camp):
    expect(isinstance(red, dict), f"redemption is not an object: {red!r}")
    expect(isinstance(red.get("id"), int), f"id not an integer: {red!r}")
    expect(isinstance(red.get("seq"), int), f"seq not an integer: {red!r}")
    expect(norm(red.get("code", "")) == norm(code),
           f"code {red.get('code')!r}, want {code!r}")
    expect(red.get("account") == acct.strip().lower(),
           f"account {red.get('account')!r}, want {acct!r}")
    expect(red.get("campaign") == camp,
           f"campaign {red.get('campaign')!r}, want {camp!r}")
    expect(L.RFC3339.match(str(red.get("redeemed_at"))),
           f"redeemed_at not RFC 3339 UTC: {red.get('redeemed_at')!r}")


# ----------------------------------------------------------------- basics

def t_healthz():
    r = L.request("GET", "/healthz")
    L.expect_status(r, 200, "GET /healthz")
    expect(r.text().strip() == "ok", f"body {L.short(r.body)!r}, want ok")
    r = L.request("GET", "/ping")
    L.expect_status(r, 200, "GET /ping")
    expect(r.text().strip() == "pong", f"body {L.short(r.body)!r}, want pong")


def t_redeem_shape():
    camp, code = fresh_code(2)
    acct = L.account()
    r = L.redeem(code, acct)
    j = expect_json_ok(r, 200, "redeem")
    expect(j.get("already") is False, f"already not false: {L.short(r.body)}")
    red = j.get("redemption")
    check_redemption(red, code, acct, camp)
    # A replay, with the code typed as a user would (lower case, no dash,
    # spaces) and the account in another case: the same redemption.
    typed = " " + norm(code).lower()[:4] + " " + norm(code).lower()[4:] + " "
    r2 = L.redeem(typed, acct.upper())
    j2 = expect_json_ok(r2, 200, "replay")
    expect(j2.get("already") is True, f"replay already not true: {L.short(r2.body)}")
    expect(j2["redemption"] == red,
           f"replay redemption differs: {j2['redemption']} vs {red}")
    info = L.code_info(code)
    expect(info.get("uses") == 1, f"uses {info.get('uses')}, want 1 after a replay")
    # Scope admin implies redeem.
    red2 = redeem_ok(code, L.account(), key=L.ADMIN_KEY)
    expect(red2["id"] != red["id"], "a second account got the same id")


# ------------------------------------------------------------ concurrency

def t_race_one_seat():
    camp, code = fresh_code(1)
    a, b = L.account("a"), L.account("b")
    ipa, ipb = L.client_ip(), L.client_ip()
    reqs = [L.redeem_req(code, a if i % 2 == 0 else b,
                         ipa if i % 2 == 0 else ipb) for i in range(64)]
    res = L.race(reqs)
    errs = [r for r in res if not isinstance(r, L.Resp)]
    expect(not errs, f"{len(errs)} requests failed: {errs[:3]}")
    by = {a: [], b: []}
    for i, r in enumerate(res):
        by[a if i % 2 == 0 else b].append(r)
    fresh = []
    for acct, rs in by.items():
        for r in rs:
            if r.status == 200 and r.json().get("already") is False:
                fresh.append((acct, r.json()["redemption"]))
    expect(len(fresh) == 1, f"{len(fresh)} fresh wins, want exactly 1; "
           f"statuses {sorted(r.status for r in res)}")
    winner, red = fresh[0]
    loser = b if winner == a else a
    check_redemption(red, code, winner, camp)
    for r in by[winner]:
        j = expect_json_ok(r, 200, "winner's request")
        expect(j["redemption"]["id"] == red["id"],
               f"winner got redemption {j['redemption']['id']}, want {red['id']}")
    expect(sum(1 for r in by[winner] if r.json()["already"] is True) == 31,
           "the winner's other 31 answers are not all already=true")
    for r in by[loser]:
        expect_error(r, 409, "exhausted", "loser's request")
    info = L.code_info(code)
    expect(info.get("uses") == 1 and info.get("state") == "redeemed",
           f"code after the race: {info}")
    L.verify()


def t_race_twenty_seats():
    camp, code = fresh_code(20)
    accts = [L.account("r") for _ in range(200)]
    res = L.race([L.redeem_req(code, a) for a in accts])
    errs = [r for r in res if not isinstance(r, L.Resp)]
    expect(not errs, f"{len(errs)} requests failed: {errs[:3]}")
    ok = [r for r in res if r.status == 200]
    statuses = {}
    for r in res:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    expect(len(ok) == 20, f"{len(ok)} answers 200, want 20; statuses {statuses}")
    ids = set()
    for r in ok:
        j = r.json()
        expect(j.get("already") is False, f"a 200 with already {j.get('already')}")
        ids.add(j["redemption"]["id"])
    expect(len(ids) == 20, f"{len(ids)} distinct redemption ids, want 20")
    for r in res:
        if r.status != 200:
            expect_error(r, 409, "exhausted", "a late request")
    info = L.code_info(code)
    expect(info.get("uses") == 20 and info.get("state") == "exhausted",
           f"code after the race: {info}")
    L.verify()


# ------------------------------------------------------------ error words

def t_invalid_unknown():
    code = "".join(random.choice(ALPHABET) for _ in range(8))
    r = L.redeem(code[:4] + "-" + code[4:], L.account())
    expect_error(r, 404, "invalid", "unknown code")


def t_invalid_check_character():
    _, code = fresh_code(1)
    last = code[-1]
    bad = code[:-1] + (ALPHABET[(ALPHABET.index(last) + 1) % len(ALPHABET)])
    r = L.redeem(bad, L.account())
    expect_error(r, 404, "invalid", f"{code} with a wrong check character")
    info = L.code_info(code)
    expect(info.get("uses") == 0, f"the real code was touched: {info}")


def t_expired():
    _, code = fresh_code(1, "--expires", "2020-01-01T00:00:00Z")
    expect_error(L.redeem(code, L.account()), 410, "expired", "expired code")
    camp = L.campaign("--ends", "2020-01-01T00:00:00Z")
    code = L.codes(camp)[0]
    expect_error(L.redeem(code, L.account()), 410, "expired",
                 "campaign past its end")


def t_exhausted():
    _, code = fresh_code(1)
    redeem_ok(code, L.account())
    expect_error(L.redeem(code, L.account()), 409, "exhausted", "second account")


def t_revoked():
    _, code = fresh_code(3)
    L.ctl("revoke", code)
    expect_error(L.redeem(code, L.account()), 410, "revoked", "revoked code")
    camp = L.campaign()
    code = L.codes(camp)[0]
    L.ctl("campaign", "close", camp)
    expect_error(L.redeem(code, L.account()), 410, "revoked", "closed campaign")


def t_ineligible():
    camp = L.campaign("--per-account-limit", "1")
    c1, c2 = L.codes(camp, 2, 5)
    acct = L.account()
    redeem_ok(c1, acct)
    expect_error(L.redeem(c2, acct), 403, "ineligible", "per-account limit")
    expect_error(L.redeem(c2, acct.upper()), 403, "ineligible",
                 "per-account limit, the account in upper case")
    redeem_ok(c2, L.account())  # another account still may
    camp = L.campaign("--starts", "2099-01-01T00:00:00Z")
    code = L.codes(camp)[0]
    expect_error(L.redeem(code, L.account()), 403, "ineligible",
                 "campaign not started")


def t_rate_limited_client():
    ip = L.client_ip()
    for i in range(ABUSE_LIMIT):
        r = L.redeem("NOPE" + str(i) + L.RUN.upper(), L.account(), ip)
        expect_error(r, 404, "invalid", f"failure {i + 1} of {ABUSE_LIMIT}")
    # Past the limit even a good code is refused: the gate comes first.
    _, code = fresh_code(1)
    r = L.redeem(code, L.account(), ip)
    expect_error(r, 429, "rate_limited", "after the limit")
    info = L.code_info(code)
    expect(info.get("uses") == 0, f"a throttled request used the code: {info}")
    # The gate keyed on the forwarded client_ip, not on the peer address.
    redeem_ok(code, L.account(), L.client_ip())


def t_rate_limited_account():
    acct = L.account("victim")
    for i in range(ABUSE_LIMIT):
        r = L.redeem("NOPE" + str(i) + L.RUN.upper(), acct, L.client_ip())
        expect_error(r, 404, "invalid", f"failure {i + 1} of {ABUSE_LIMIT}")
    _, code = fresh_code(1)
    expect_error(L.redeem(code, acct, L.client_ip()), 429, "rate_limited",
                 "after the limit, from a new address")
    redeem_ok(code, L.account(), L.client_ip())


def post_redeem_raw(body, ctype="application/json"):
    return L.request("POST", "/api/v1/redeem", body,
                     {"Authorization": "Bearer " + L.REDEEM_KEY,
                      "Content-Type": ctype})


def t_bad_request():
    _, code = fresh_code(1)
    ip = L.client_ip()
    cases = [
        ("malformed JSON", b'{"code": "' + code.encode() + b'", "account": '),
        ("missing account", json.dumps({"code": code, "client_ip": ip})),
        ("missing code", json.dumps({"account": L.account(), "client_ip": ip})),
        ("empty body", b""),
        ("empty object", b"{}"),
        ("code a number", json.dumps({"code": 12345678, "account": L.account()})),
        ("code a list", json.dumps({"code": [code], "account": L.account()})),
        ("account an object",
         json.dumps({"code": code, "account": {"a": 1}, "client_ip": ip})),
        ("client_ip a number",
         json.dumps({"code": code, "account": L.account(), "client_ip": 7})),
        ("invalid UTF-8 in a string",
         b'{"code": "\xff\xfe\xfd", "account": "x@example.com", "client_ip": "'
         + ip.encode() + b'"}'),
        ("invalid UTF-8 in the account",
         b'{"code": "' + code.encode() + b'", "account": "a\xc3\x28@example.com"}'),
        ("overlong UTF-8", b'{"code": "\xc0\xaf", "account": "x@example.com"}'),
        ("a \\u0000 in the code",
         '{"code": "' + code[:4] + '\\u0000' + code[4:] + '", "account": "x@example.com"}'),
        ("a \\u0000 in the account",
         '{"code": "' + code + '", "account": "x\\u0000@example.com"}'),
        ("a raw NUL byte", b'{"code": "AB\x00CD", "account": "x@example.com"}'),
        ("a lone surrogate escape",
         '{"code": "\\ud800", "account": "x@example.com"}'),
        ("a JSON array", b'["' + code.encode() + b'", "x@example.com"]'),
        ("a JSON string", b'"hello"'),
        ("trailing garbage", json.dumps({"code": code, "account": "x@example.com"}) + "}}"),
        ("two objects", json.dumps({"code": code, "account": "x@example.com"}) * 2),
    ]
    for what, body in cases:
        expect_error(post_redeem_raw(body), 400, "bad_request", what)
    info = L.code_info(code)
    expect(info.get("uses") == 0, f"a bad request used the code: {info}")


def big_body(code, acct, size):
    """A valid redeem request padded with JSON whitespace to size bytes."""
    b = json.dumps({"code": code, "account": acct,
                    "client_ip": L.client_ip()}).encode()
    return b[:-1] + b" " * (size - len(b)) + b"}"


def t_too_large():
    camp, code = fresh_code(1)
    acct = L.account()
    over = big_body(code, acct, MiB + 1)
    head = (f"POST /api/v1/redeem HTTP/1.1\r\nHost: {L.HOST}\r\n"
            f"Authorization: Bearer {L.REDEEM_KEY}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(over)}\r\nConnection: close\r\n\r\n")
    r = L.raw_request(head.encode() + over)
    expect_error(r, 413, "too_large", "1 MiB + 1 byte")
    # The same, chunked: the limit is on the body, not on a header.
    chunked = (f"POST /api/v1/redeem HTTP/1.1\r\nHost: {L.HOST}\r\n"
               f"Authorization: Bearer {L.REDEEM_KEY}\r\n"
               "Content-Type: application/json\r\n"
               "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               ).encode()
    for i in range(0, len(over), 65536):
        part = over[i:i + 65536]
        chunked += b"%x\r\n" % len(part) + part + b"\r\n"
    chunked += b"0\r\n\r\n"
    r = L.raw_request(chunked)
    expect_error(r, 413, "too_large", "1 MiB + 1 byte, chunked")
    expect(L.code_info(code).get("uses") == 0, "a too-large body used the code")
    # Exactly 1 MiB is accepted and served.
    r = post_redeem_raw(big_body(code, acct, MiB))
    j = expect_json_ok(r, 200, "exactly 1 MiB")
    check_redemption(j["redemption"], code, acct, camp)


def t_not_found():
    for m, p in [("GET", "/api/v1/nope"), ("POST", "/api/v1/nope"),
                 ("GET", "/api/v2/redeem"), ("GET", "/api/"),
                 ("GET", "/api/v1/campaigns/" + L.uniq("none")),
                 ("GET", "/api/v1/codes/ZZZZZZZZZZ" + L.RUN.upper()),
                 ("POST", "/api/v1/codes/ZZZZZZZZZZ" + L.RUN.upper() + "/revoke"),
                 ("POST", "/api/v1/campaigns/" + L.uniq("none") + "/close"),
                 ("POST", "/api/v1/redemptions/987654321/reverse")]:
        body = {} if m == "POST" else None
        if p.endswith("/reverse"):
            body = {"reason": "x", "policy": "return_seat"}
        expect_error(L.api(m, p, body), 404, "not_found", f"{m} {p}")
    # Without credentials an unknown path is still not found (or refused).
    r = L.api("GET", "/api/v1/nope", key="")
    expect(r.status in (401, 404), f"GET /api/v1/nope without a key: {r}")
    expect_error(r, r.status, "not_found" if r.status == 404 else "unauthorized")


def t_method_not_allowed():
    _, code = fresh_code(1)
    q = "/api/v1/redeem?" + urllib.parse.urlencode(
        {"code": code, "account": L.account()})
    for m, p, need in [("GET", "/api/v1/redeem", "POST"), ("GET", q, "POST"),
                       ("PUT", "/api/v1/redeem", "POST"),
                       ("DELETE", "/api/v1/campaigns", "GET"),
                       ("PATCH", "/api/v1/codes/" + code, "GET"),
                       ("GET", "/api/v1/codes/" + code + "/revoke", "POST")]:
        r = L.api(m, p, {} if m in ("PUT", "PATCH") else None,
                  key=L.REDEEM_KEY if "/redeem" in p else None)
        expect_error(r, 405, "method_not_allowed", f"{m} {p}")
        allow = [a.strip() for a in r.header("Allow", "").split(",")]
        expect(need in allow, f"{m} {p}: Allow {r.header('Allow')!r} lacks {need}")
    expect(L.code_info(code).get("uses") == 0, "GET /api/v1/redeem used a code")


def t_conflict():
    name = L.uniq("dup")
    r = L.api("POST", "/api/v1/campaigns", {"name": name, "kind": "shared"})
    expect_json_ok(r, 201, "first create")
    r = L.api("POST", "/api/v1/campaigns", {"name": name, "kind": "shared"})
    expect_error(r, 409, "conflict", "the same campaign again")
    code = "E2EDUP" + "".join(random.choice(ALPHABET) for _ in range(6))
    r = L.api("POST", f"/api/v1/campaigns/{name}/codes",
              {"codes": [code], "max_uses": 1})
    expect_json_ok(r, 201, "first import")
    r = L.api("POST", f"/api/v1/campaigns/{name}/codes",
              {"codes": [code.lower()], "max_uses": 1})
    expect_error(r, 409, "conflict", "the same code imported again")


def t_unauthorized():
    _, code = fresh_code(1)
    body = json.dumps({"code": code, "account": L.account(),
                       "client_ip": L.client_ip()}).encode()
    k = L.REDEEM_KEY
    wrong = k[:-1] + ("A" if k[-1] != "A" else "B")
    cases = [("no header", None), ("wrong secret", "Bearer " + wrong),
             ("unknown key", "Bearer rdm_zzzzzzzz_" + "a" * 32),
             ("empty bearer", "Bearer "), ("scheme only", "Bearer"),
             ("basic auth", "Basic " + "dXNlcjpwYXNz"),
             ("key without scheme", k), ("two keys", f"Bearer {k} {k}"),
             ("garbage", "Bearer \x7f\x01;DROP TABLE"),
             ("overlong", "Bearer " + "x" * 4000)]
    for what, h in cases:
        hdr = {"Content-Type": "application/json"}
        if h is not None:
            hdr["Authorization"] = h
        r = L.request("POST", "/api/v1/redeem", body, hdr)
        expect_error(r, 401, "unauthorized", what)
    for m, p in [("GET", "/api/v1/campaigns"), ("GET", "/api/v1/codes/" + code),
                 ("POST", "/api/v1/codes/" + code + "/revoke")]:
        expect_error(L.api(m, p, key=""), 401, "unauthorized", f"{m} {p} no key")
    expect(L.code_info(code).get("uses") == 0, "an unauthorized request used a code")
    expect(L.code_info(code).get("state") == "active", "an unauthorized revoke worked")


def t_unauthorized_revoked_key():
    key = L.ctl("apikey", "create", "--tenant", "default", "--scope",
                "redeem", "--label", "e2e-revoked").stdout.strip()
    _, code = fresh_code(2)
    redeem_ok(code, L.account(), key=key)
    # `apikey list`: ID LOOKUP SCOPE ...; the lookup is the key's public part.
    lookup = "_".join(key.split("_")[:2])
    ids = [ln.split()[0] for ln in L.ctl("apikey", "list").stdout.splitlines()
           if len(ln.split()) > 1 and ln.split()[1] == lookup]
    expect(len(ids) == 1, f"apikey list shows {lookup} {len(ids)} times")
    L.ctl("apikey", "revoke", ids[0])
    r = L.redeem(code, L.account(), key=key)
    expect_error(r, 401, "unauthorized", "a revoked key")
    r = L.api("GET", "/api/v1/campaigns", key=key)
    expect_error(r, 401, "unauthorized", "a revoked key on an admin endpoint")


def t_forbidden():
    _, code = fresh_code(1)
    k = L.REDEEM_KEY
    for m, p, body in [
            ("GET", "/api/v1/campaigns", None),
            ("POST", "/api/v1/campaigns", {"name": L.uniq("f"), "kind": "shared"}),
            ("GET", "/api/v1/codes/" + code, None),
            ("POST", "/api/v1/codes/" + code + "/revoke", {}),
            ("POST", "/api/v1/redemptions/1/reverse",
             {"reason": "x", "policy": "return_seat"})]:
        expect_error(L.api(m, p, body, key=k), 403, "forbidden", f"{m} {p}")
    info = L.code_info(code)
    expect(info.get("state") == "active", f"a forbidden revoke worked: {info}")


def t_tenant_isolation():
    other = os.environ.get("E2E_OTHER_ADMIN_KEY")
    expect(other, "no E2E_OTHER_ADMIN_KEY given")
    camp, code = fresh_code(2)
    expect_error(L.api("GET", "/api/v1/codes/" + code, key=other), 404,
                 "not_found", "another tenant's code")
    expect_error(L.api("GET", "/api/v1/campaigns/" + camp, key=other), 404,
                 "not_found", "another tenant's campaign")
    expect_error(L.redeem(code, L.account(), key=other), 404, "invalid",
                 "redeeming another tenant's code")
    expect(L.code_info(code).get("uses") == 0, "another tenant used the code")


# --------------------------------------------------------- administration

def t_admin_campaigns():
    name = L.uniq("adm")
    r = L.api("POST", "/api/v1/campaigns",
              {"name": name, "kind": "shared", "per_account_limit": 2,
               "budget": 100, "ends_at": "2099-12-31T00:00:00Z"})
    j = expect_json_ok(r, 201, "create")
    c = j.get("campaign")
    expect(isinstance(c, dict) and c.get("name") == name and
           c.get("kind") == "shared", f"campaign {c}")
    r = L.api("GET", "/api/v1/campaigns/" + name)
    j = expect_json_ok(r, 200, "get")
    expect(j.get("campaign", {}).get("name") == name, f"get: {L.short(r.body)}")
    r = L.api("GET", "/api/v1/campaigns")
    j = expect_json_ok(r, 200, "list")
    lists = [v for v in j.values() if isinstance(v, list)]
    expect(any(isinstance(x, dict) and x.get("name") == name
               for lst in lists for x in lst), f"list lacks {name}: {L.short(r.body)}")
    for what, body in [("no name", {"kind": "shared"}),
                       ("bad kind", {"name": L.uniq("x"), "kind": "bogus"}),
                       ("bad name", {"name": "a b/<c>", "kind": "shared"}),
                       ("bad time", {"name": L.uniq("x"), "ends_at": "tomorrow"}),
                       ("negative budget", {"name": L.uniq("x"), "budget": -1}),
                       ("name a number", {"name": 5})]:
        expect_error(L.api("POST", "/api/v1/campaigns", body), 400,
                     "bad_request", what)


def t_admin_generate():
    camp = L.campaign()
    r = L.api("POST", f"/api/v1/campaigns/{camp}/codes",
              {"count": 5, "max_uses": 2})
    j = expect_json_ok(r, 201, "generate")
    cs = j.get("codes")
    expect(j.get("created") == 5 and isinstance(cs, list) and len(cs) == 5 and
           len(set(map(norm, cs))) == 5, f"generate: {L.short(r.body)}")
    for c in cs:
        info = L.code_info(c)
        want = {"campaign": camp, "state": "active", "uses": 0, "max_uses": 2,
                "expires_at": None}
        for k, v in want.items():
            expect(info.get(k) == v, f"{c}: {k}={info.get(k)!r}, want {v!r}")
        expect(norm(info.get("code", "")) == norm(c), f"lookup code {info}")
    red = redeem_ok(cs[0], L.account())
    check_redemption(red, cs[0], red["account"], camp)
    expect(L.code_info(cs[0]).get("uses") == 1, "uses not 1 after a redeem")
    r = L.api("POST", f"/api/v1/campaigns/{camp}/codes",
              {"count": 2, "max_uses": 1, "prefix": "E2E", "length": 10,
               "expires_at": "2099-01-02T03:04:05Z"})
    j = expect_json_ok(r, 201, "generate with prefix, length, expiry")
    for c in j.get("codes", []):
        expect(norm(c).startswith("E2E"), f"{c} lacks the prefix")
        expect(len(norm(c)) == 13, f"{c}: length {len(norm(c))}, want 3 + 10")
        info = L.code_info(c)
        expect(info.get("expires_at") == "2099-01-02T03:04:05Z",
               f"expires_at {info.get('expires_at')!r}")
    expect(j.get("created") == 2, f"created {j.get('created')}")
    for what, body in [("no count", {"max_uses": 1}),
                       ("zero count", {"count": 0, "max_uses": 1}),
                       ("negative max_uses", {"count": 1, "max_uses": -1}),
                       ("count a string", {"count": "5", "max_uses": 1}),
                       ("huge count", {"count": 10 ** 12, "max_uses": 1})]:
        expect_error(L.api("POST", f"/api/v1/campaigns/{camp}/codes", body),
                     400, "bad_request", what)
    r = L.api("POST", f"/api/v1/campaigns/{L.uniq('none')}/codes",
              {"count": 1, "max_uses": 1})
    expect_error(r, 404, "not_found", "codes for an unknown campaign")


def t_admin_import_and_list():
    camp = L.campaign()
    given = ["e2e-" + "".join(random.choice(ALPHABET) for _ in range(8)).lower()
             for _ in range(3)]
    r = L.api("POST", f"/api/v1/campaigns/{camp}/codes",
              {"codes": given, "max_uses": 3})
    j = expect_json_ok(r, 201, "import")
    expect(j.get("created") == 3, f"created {j.get('created')}")
    got = j.get("codes") or []
    expect(sorted(map(norm, got)) == sorted(map(norm, given)),
           f"imported {got}, gave {given}")
    for c in given:
        info = L.code_info(c)
        expect(info.get("max_uses") == 3 and info.get("campaign") == camp,
               f"imported {c}: {info}")
    redeem_ok(given[0], L.account())  # as typed: lower case, with a dash
    r = L.api("GET", f"/api/v1/campaigns/{camp}/codes")
    j = expect_json_ok(r, 200, "list codes")
    listed = set()
    for v in j.values():
        if isinstance(v, list):
            for x in v:
                listed.add(norm(x if isinstance(x, str) else x.get("code", "")))
    expect(set(map(norm, given)) <= listed,
           f"list lacks imported codes: {L.short(r.body)}")
    for what, body in [("empty list", {"codes": [], "max_uses": 1}),
                       ("a number in the list", {"codes": [5], "max_uses": 1}),
                       ("an empty code", {"codes": [""], "max_uses": 1}),
                       ("a NUL in a code", {"codes": ["AB\u0000CD"], "max_uses": 1}),
                       ("markup in a code", {"codes": ["<b>x</b>"], "max_uses": 1}),
                       ("an overlong code", {"codes": ["A" * 5000], "max_uses": 1})]:
        expect_error(L.api("POST", f"/api/v1/campaigns/{camp}/codes", body),
                     400, "bad_request", what)


def t_admin_revoke():
    _, code = fresh_code(2)
    r = L.api("POST", f"/api/v1/codes/{code}/revoke", {})
    j = expect_json_ok(r, 200, "revoke")
    expect(j.get("code", {}).get("state") == "revoked", f"revoke: {L.short(r.body)}")
    expect(L.code_info(code).get("state") == "revoked", "lookup not revoked")
    expect_error(L.redeem(code, L.account()), 410, "revoked", "redeem after revoke")
    r = L.api("POST", f"/api/v1/codes/{code}/revoke", {})
    j = expect_json_ok(r, 200, "revoke again")
    expect(j.get("code", {}).get("state") == "revoked", "second revoke")


def t_admin_close():
    camp = L.campaign()
    code = L.codes(camp)[0]
    r = L.api("POST", f"/api/v1/campaigns/{camp}/close", {})
    j = expect_json_ok(r, 200, "close")
    c = j.get("campaign", {})
    expect(c.get("name") == camp and c.get("state") == "closed",
           f"close: {L.short(r.body)}")
    r = L.api("GET", f"/api/v1/campaigns/{camp}")
    expect(expect_json_ok(r).get("campaign", {}).get("state") == "closed",
           f"get after close: {L.short(r.body)}")
    expect_error(L.redeem(code, L.account()), 410, "revoked", "redeem after close")


def t_admin_reverse():
    camp, code = fresh_code(1)
    a = L.account()
    red = redeem_ok(code, a)
    info = L.code_info(code)
    expect(info.get("uses") == 1 and info.get("state") == "redeemed", f"{info}")
    path = f"/api/v1/redemptions/{red['id']}/reverse"
    body = {"reason": "e2e refund", "policy": "return_seat"}
    r = L.api("POST", path, body)
    j = expect_json_ok(r, 200, "reverse")
    rv = j.get("redemption", {})
    expect(rv.get("id") == red["id"], f"reversed id {rv.get('id')}")
    expect(L.RFC3339.match(str(rv.get("reversed_at"))), f"reversed_at {rv}")
    expect(rv.get("reversal_reason") == "e2e refund", f"reason {rv}")
    info = L.code_info(code)
    expect(info.get("uses") == 0 and info.get("state") == "active",
           f"after return_seat: {info}")
    r = L.api("POST", path, body)
    j2 = expect_json_ok(r, 200, "reverse again")
    expect(j2.get("redemption", {}).get("reversed_at") == rv["reversed_at"],
           f"second reverse changed the redemption: {L.short(r.body)}")
    expect(L.code_info(code).get("uses") == 0, "second reverse returned a seat again")
    redeem_ok(code, L.account())  # the seat is really back
    expect(L.code_info(code).get("state") == "redeemed", "not redeemed again")
    # keep_seat (a chargeback): the use is not given back.
    _, code2 = fresh_code(2)
    red2 = redeem_ok(code2, L.account())
    r = L.api("POST", f"/api/v1/redemptions/{red2['id']}/reverse",
              {"reason": "chargeback", "policy": "keep_seat"})
    expect_json_ok(r, 200, "reverse keep_seat")
    expect(L.code_info(code2).get("uses") == 1, "keep_seat gave the use back")
    r = L.api("POST", f"/api/v1/redemptions/{red2['id']}/reverse",
              {"reason": "x", "policy": "sideways"})
    expect(r.status == 400 or r.status == 200, f"a bad policy: {r}")
    if r.status == 400:
        expect_error(r, 400, "bad_request", "bad policy")
    L.verify()


def t_pool_claim():
    camp = L.campaign("--kind", "pool")
    pool = L.codes(camp, 2, 1)
    a, b, c = L.account(), L.account(), L.account()

    def claim(acct):
        return L.api("POST", f"/api/v1/pools/{camp}/claim",
                     {"account": acct, "client_ip": L.client_ip()},
                     key=L.REDEEM_KEY)
    j = expect_json_ok(claim(a), 200, "first claim")
    x = j.get("code")
    expect(j.get("already") is False and isinstance(x, str) and
           norm(x) in map(norm, pool), f"first claim: {j}")
    check_redemption(j.get("redemption"), x, a, camp)
    j2 = expect_json_ok(claim(a.upper()), 200, "same account again")
    expect(j2.get("already") is True and j2.get("code") == x and
           j2["redemption"]["id"] == j["redemption"]["id"], f"again: {j2}")
    j3 = expect_json_ok(claim(b), 200, "second account")
    expect(norm(j3.get("code", "")) != norm(x), f"b got a's code: {j3}")
    expect_error(claim(c), 409, "exhausted", "empty pool")
    info = L.code_info(x)
    expect(info.get("uses") == 1 and info.get("state") == "redeemed", f"{info}")
    r = L.api("POST", f"/api/v1/pools/{L.uniq('none')}/claim",
              {"account": a}, key=L.REDEEM_KEY)
    expect(r.status in (404,), f"claim on an unknown pool: {r}")
    L.verify()


# --------------------------------------------------------- hostile input

def t_hostile_bodies():
    rnd = random.Random(7)
    cases = [("random bytes", bytes(rnd.randrange(256) for _ in range(4096))),
             ("a JSON array", b'[{"code": "X", "account": "y"}]'),
             ("nested arrays", b"[" * 100000 + b"]" * 100000),
             ("nested objects",
              b'{"a":' * 50000 + b"1" + b"}" * 50000),
             ("deep inside a field",
              b'{"code": ' + b"[" * 5000 + b"]" * 5000 + b', "account": "x"}'),
             ("a huge number", b'{"code": 1' + b"0" * 5000 + b', "account": "x"}'),
             ("unterminated string", b'{"code": "' + b"A" * 10000),
             ("null", b"null"), ("NaN", b'{"code": NaN, "account": "x"}')]
    for what, body in cases:
        r = post_redeem_raw(body)
        expect_error(r, 400, "bad_request", what)
    for what, body in [("form-encoded", b"code=X&account=y"),
                       ("text", b"hello")]:
        r = post_redeem_raw(body, "text/plain")
        L.expect_not_5xx(r, what)
        expect(400 <= r.status < 500, f"{what}: {r}")
    for path in ["/api/v1/campaigns", "/api/v1/campaigns/x/codes"]:
        r = L.api("POST", path, raw=b"[" * 100000)
        expect_error(r, 400, "bad_request", f"nested arrays to {path}")


def t_hostile_headers():
    big = "x" * 65536
    for path in ["/api/v1/redeem", "/redeem", "/healthz"]:
        r = L.raw_request(
            (f"GET {path} HTTP/1.1\r\nHost: {L.HOST}\r\nX-Big: {big}\r\n"
             "Connection: close\r\n\r\n").encode())
        expect(400 <= r.status < 500, f"64 KiB header on {path}: {r.status}")
        if path.startswith("/api/"):
            expect_error(r, r.status, "bad_request", f"64 KiB header on {path}")
    r = L.raw_request(
        (f"GET /redeem HTTP/1.1\r\nHost: {L.HOST}\r\n" +
         "".join(f"X-H{i}: {i}\r\n" for i in range(500)) +
         "Connection: close\r\n\r\n").encode())
    L.expect_not_5xx(r, "500 headers")
    r = L.raw_request(
        (f"GET /redeem HTTP/1.1\r\nHost: {L.HOST}\r\nCookie: " +
         "; ".join(f"c{i}=v" for i in range(400)) +
         "; redeem_csrf=\x01\x02\r\nConnection: close\r\n\r\n").encode())
    L.expect_not_5xx(r, "400 cookies")


def t_path_traversal():
    for p in ["/static/../Makefile", "/static/..%2f..%2fMakefile",
              "/static/%2e%2e/Makefile", "/static/%2e%2e%2fMakefile",
              "/static/..%2fMakefile", "/static//../../Makefile",
              "/static/%2e%2e/%2e%2e/Makefile", "/static/..\\Makefile",
              "/static/....//Makefile", "/static/%252e%252e/Makefile",
              "/static/../../../../../../etc/passwd", "/static/./../Makefile",
              "/static../Makefile", "/static..%2fMakefile", "/static.%2e/Makefile",
              "/../Makefile", "/Makefile", "/static/../tests/e2e/run.sh"]:
        r = L.raw_request((f"GET {p} HTTP/1.1\r\nHost: {L.HOST}\r\n"
                           "Connection: close\r\n\r\n").encode())
        L.expect_not_5xx(r, p)
        t = r.text()
        expect(MAKEFILE_MARK not in t and "root:x:0:0" not in t and
               "set -uo pipefail" not in t,
               f"{p} answered {r.status} with a file's contents")


def t_bad_utf8_path_query():
    admin = f"Authorization: Bearer {L.ADMIN_KEY}\r\n"
    problems = []
    for target in [b"/redeem?code=%ff%fe", b"/redeem?code=\xff\xfe",
                   b"/redeem?code=%c0%af&account=%ed%a0%80",
                   b"/redeem?%ff=%ff", b"/redeem?code=%", b"/redeem?code=%zz",
                   b"/\xff\xfe", b"/redeem/%ff", b"/redeem%00",
                   b"/redeem?code=AB%00CD",
                   b"/api/v1/codes/%ff%fe", b"/api/v1/codes/\xff",
                   b"/api/v1/codes/AB%00CD", b"/api/v1/campaigns/%c3%28",
                   b"/api/v1/campaigns/x%00y/codes", b"/api/v1/codes/%",
                   b"/static/%ff.css"]:
        for extra in (b"", admin.encode()):
            r = L.raw_request(b"GET " + target + b" HTTP/1.1\r\nHost: " +
                              L.HOST.encode() + b"\r\n" + extra +
                              b"Connection: close\r\n\r\n")
            what = f"GET {target.decode('latin-1')!r}" + (" (admin key)" if extra else "")
            if not (400 <= r.status < 500 or r.status in (200, 503)):
                problems.append(f"{what}: status {r.status}")
            if target.startswith(b"/api/") and extra:
                try:
                    expect(400 <= r.status < 500, f"status {r.status}")
                    expect(r.header("Content-Type", "").startswith(
                        "application/json"), f"{r.status} is not JSON")
                    expect_error(r, r.status, r.json().get("error"))
                except L.Failure as e:
                    problems.append(f"{what}: {e}")
    expect(not problems, "; ".join(problems))


class PageSession:
    """A browser without a browser: a cookie jar and the form's token."""

    def __init__(self, query=""):
        r = L.request("GET", "/redeem" + query, headers={"Accept": "text/html"})
        L.expect_status(r, 200, "GET /redeem")
        self.first = r
        self.cookies = L.cookies_from(r)
        self.doc = L.Html(r.text())
        f = self.doc.find("input", name="csrf")
        self.token = f[0].get("value", "") if f else ""

    def post(self, fields, token=True, cookie=True, raw=None):
        f = dict(fields)
        if token:
            f["csrf"] = self.token if token is True else token
        h = {"Content-Type": "application/x-www-form-urlencoded",
             "Accept": "text/html"}
        if cookie and self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = raw if raw is not None else urllib.parse.urlencode(f)
        return L.request("POST", "/redeem", body, h)


def result_of(r):
    doc = L.Html(r.text())
    res = doc.by_id("result")
    expect(res is not None, f"status {r.status}: no id=result in {L.short(r.body, 500)}")
    return res


def t_page_form():
    s = PageSession()
    r = s.first
    expect(r.header("Content-Type", "").startswith("text/html"),
           f"Content-Type {r.header('Content-Type')!r}")
    expect("redeem_csrf" in s.cookies and s.cookies["redeem_csrf"],
           f"no redeem_csrf cookie: {r.headers.get_all('Set-Cookie')}")
    forms = [f for f in s.doc.find("form")
             if f.get("method", "").lower() == "post" and f.get("action") == "/redeem"]
    expect(len(forms) == 1, "no <form method=post action=/redeem>")
    inputs = s.doc.inside(forms[0], "input")
    names = {i.get("name"): i for i in inputs}
    expect("code" in names, "no input name=code in the form")
    expect(names.get("account", L.Node("x", {}, None)).get("type") == "email",
           "no input name=account type=email in the form")
    csrf = names.get("csrf")
    expect(csrf is not None and csrf.get("type") == "hidden" and
           len(csrf.get("value", "")) >= 16, f"hidden csrf field: {csrf and csrf.attrs}")
    submit = [b for b in s.doc.inside(forms[0], "button")
              if b.get("type", "submit") == "submit"] + \
        [i for i in inputs if i.get("type") == "submit"]
    expect(submit, "no submit button in the form")
    for n in ("code", "account"):
        iid = names[n].get("id")
        expect(iid and s.doc.find("label", for_=iid), f"input {n} has no label[for]")
    expect("<script" not in r.text().lower(), "the page has a <script>")


def t_page_csrf():
    camp, code = fresh_code(1)
    s = PageSession()
    acct = L.account()
    fields = {"code": code, "account": acct}
    for what, kw in [("no token, no cookie", dict(token=False, cookie=False)),
                     ("cookie but no token", dict(token=False)),
                     ("token but no cookie", dict(cookie=False)),
                     ("wrong token", dict(token="A" * len(s.token or "x"))),
                     ("empty token", dict(token=""))]:
        r = s.post(fields, **kw)
        expect(r.status == 403, f"{what}: status {r.status}, want 403")
        expect(r.header("Content-Type", "").startswith("text/html"),
               f"{what}: Content-Type {r.header('Content-Type')!r}")
    other = PageSession()  # another visitor's valid token
    r = s.post(fields, token=other.token)
    expect(r.status == 403, f"another session's token: status {r.status}")
    expect(L.code_info(code).get("uses") == 0, "a refused POST used the code")


def t_page_redeem():
    camp, code = fresh_code(1)
    s = PageSession()
    acct = L.account()
    r = s.post({"code": code.lower(), "account": acct})
    L.expect_status(r, 200, "POST /redeem")
    expect(r.header("Content-Type", "").startswith("text/html"),
           f"Content-Type {r.header('Content-Type')!r}")
    res = result_of(r)
    expect(res.get("data-result") == "ok", f"data-result {res.get('data-result')!r}")
    expect(res.get("aria-live") == "polite", f"aria-live {res.get('aria-live')!r}")
    expect(camp in res.text(), f"result does not name {camp}: {res.text()!r}")
    expect(L.code_info(code).get("uses") == 1, "the page did not use the code")
    r = s.post({"code": code, "account": acct.upper()})
    L.expect_status(r, 200, "replay")
    expect(result_of(r).get("data-result") == "already",
           f"replay data-result {result_of(r).get('data-result')!r}")
    for c, status, word in [(code, 409, "exhausted"),
                            ("ZZZZ" + L.RUN.upper(), 404, "invalid")]:
        r = s.post({"code": c, "account": L.account()})
        expect(r.status == status, f"{word}: status {r.status}, want {status}")
        res = result_of(r)
        expect(res.get("data-result") == word,
               f"{word}: data-result {res.get('data-result')!r}")
        expect(len(res.text()) > 10, f"{word}: no plain words: {res.text()!r}")
    r = s.post({"code": code})  # no account
    expect(r.status == 400, f"missing account: status {r.status}, want 400")


def t_page_escaping():
    s = PageSession()
    evil = "<script>alert(1)</script>"
    attr = '"><img src=x onerror=alert(1)>'
    for fields in [{"code": evil, "account": evil + "@x.com"},
                   {"code": attr, "account": "a" + attr + "@x.com"},
                   {"code": "ABCD'\"&<>", "account": "x'\"<>@example.com"}]:
        r = s.post(fields)
        L.expect_not_5xx(r, str(fields))
        t = r.text().lower()
        expect("<script" not in t, f"raw <script> echoed ({r.status})")
        doc = L.Html(r.text())
        expect(not any("onerror" in n.attrs for n in doc.nodes),
               f"an injected onerror attribute ({r.status})")
        expect(not doc.find("img", src="x"), "an injected <img>")
    for q in [evil, attr]:
        r = L.request("GET", "/redeem?" + urllib.parse.urlencode({"code": q}))
        L.expect_not_5xx(r, "GET ?code=" + q)
        t = r.text()
        expect("<script" not in t.lower(), "raw <script> from ?code=")
        doc = L.Html(t)
        expect(not any("onerror" in n.attrs for n in doc.nodes),
               "an injected onerror attribute from ?code=")


def t_page_prefill():
    camp, code = fresh_code(1)
    acct = L.account()
    q = "?" + urllib.parse.urlencode({"code": code, "account": acct})
    for _ in range(3):  # a mail scanner following the link, repeatedly
        s = PageSession(q)
        f = s.doc.find("input", name="code")
        expect(f and norm(f[0].get("value", "")) == norm(code),
               f"code not pre-filled: {f and f[0].attrs}")
        expect(s.doc.by_id("result") is None or
               s.doc.by_id("result").get("data-result") in (None, ""),
               "GET shows a result")
    r = L.request("HEAD", "/redeem" + q)
    L.expect_not_5xx(r, "HEAD")
    info = L.code_info(code)
    expect(info.get("uses") == 0 and info.get("state") == "active",
           f"a GET changed the code: {info}")


def t_page_nul_fields():
    _, code = fresh_code(1)
    s = PageSession()
    for raw in [f"code={code[:4]}%00{code[4:]}&account=a%40example.com",
                f"code={code}&account=a%00%40example.com",
                f"code={code}&account=a%40example.com%ff",
                f"code={code}&code={code}&account=b%40example.com",
                "code=%zz&account=b%40example.com"]:
        raw += "&csrf=" + urllib.parse.quote(s.token)
        r = s.post({}, raw=raw)
        expect(r.status == 400, f"{raw}: status {r.status}, want 400")
        expect("<script" not in r.text().lower(), "a script on the error page")
    expect(L.code_info(code).get("uses") == 0, "a refused form used the code")


def t_root_redirect():
    r = L.request("GET", "/")
    expect(r.status in (301, 302, 303, 307, 308), f"GET /: status {r.status}")
    loc = r.header("Location", "")
    expect(urllib.parse.urlsplit(loc).path == "/redeem", f"Location {loc!r}")


def t_static_405():
    r = L.request("POST", "/static/redeem.css", b"x",
                  {"Content-Type": "text/plain"})
    expect(r.status == 405, f"POST /static/redeem.css: status {r.status}")
    expect(r.header("Allow"), "405 without an Allow header")
    r = L.request("HEAD", "/redeem")
    expect(r.status == 200, f"HEAD /redeem: {r.status}")


def t_html_errors():
    r = L.request("GET", "/no-such-page-" + L.RUN, headers={"Accept": "text/html"})
    expect(r.status == 404, f"unknown page: {r.status}")
    expect(r.header("Content-Type", "").startswith("text/html"),
           f"unknown page Content-Type {r.header('Content-Type')!r}")
    r = L.request("PUT", "/redeem", b"x", {"Content-Type": "text/plain"})
    expect(r.status == 405 and r.header("Allow"), f"PUT /redeem: {r.status} "
           f"Allow {r.header('Allow')!r}")


# ------------------------------------------------------- security headers

def check_sec_headers(r, what):
    expect(r.header("X-Content-Type-Options", "").lower() == "nosniff",
           f"{what}: X-Content-Type-Options {r.header('X-Content-Type-Options')!r}")
    expect(r.header("X-Frame-Options", "").upper() == "DENY",
           f"{what}: X-Frame-Options {r.header('X-Frame-Options')!r}")
    csp = r.header("Content-Security-Policy")
    expect(csp, f"{what}: no Content-Security-Policy")
    dirs = {}
    for d in csp.split(";"):
        parts = d.strip().split()
        if parts:
            dirs[parts[0].lower()] = [p.lower() for p in parts[1:]]
    src = dirs.get("script-src", dirs.get("default-src"))
    expect(src is not None, f"{what}: CSP without script-src or default-src: {csp}")
    expect("'unsafe-inline'" not in src and "*" not in src,
           f"{what}: scripts not restricted: {csp}")


def t_security_headers():
    r = L.request("GET", "/redeem")
    check_sec_headers(r, "page")
    doc = L.Html(r.text())
    links = [n.get("href") for n in doc.find("link") if n.get("href")] + \
        [n.get("src") for n in doc.nodes if n.tag in ("img", "script") and n.get("src")]
    static = [u for u in links if u.startswith("/static/")]
    expect(static, "the page links no /static/ file")
    rs = L.request("GET", static[0])
    L.expect_status(rs, 200, static[0])
    check_sec_headers(rs, "static " + static[0])
    check_sec_headers(L.api("GET", "/api/v1/campaigns"), "API answer")
    check_sec_headers(L.redeem("NOPE" + L.RUN.upper(), L.account()), "API error")
    check_sec_headers(L.api("GET", "/api/v1/nope"), "API 404")
    check_sec_headers(L.request("GET", "/no-such-page-" + L.RUN), "page 404")
    check_sec_headers(L.request("GET", "/static/nope-" + L.RUN + ".css"),
                      "static 404")
    check_sec_headers(PageSession().post({"code": "X", "account": "a@b.c"},
                                         token=False), "page 403")
    check_sec_headers(L.api("GET", "/api/v1/redeem", key=L.REDEEM_KEY), "API 405")
    check_sec_headers(L.request("GET", "/healthz"), "healthz")
    check_sec_headers(L.request("GET", "/"), "redirect")


# ------------------------------------------------------- worker recovery

def run_workers():
    """The redeem-fcgi processes of this run (in serve.sh's session or
    naming its state directory), zombies excluded."""
    var = os.environ.get("E2E_VAR", "")
    sid = int(os.environ.get("E2E_SID", "0") or 0)
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        p = L.proc_info(int(d))
        if not p or p["state"] == "Z" or "redeem-fcgi" not in (p["comm"] + p["cmd"]):
            continue
        if (sid and p["sid"] == sid) or (var and var in p["cmd"]):
            out.append(p)
    return out


def t_worker_killed():
    before = run_workers()
    expect(before, "no redeem-fcgi process of this run found")
    pids = {p["pid"] for p in before}
    leaves = [p for p in before if not any(q["ppid"] == p["pid"] for q in before)]
    want = int(os.environ.get("E2E_WORKERS", "0") or 0)
    if want:
        expect(len(leaves) == want, f"{len(leaves)} workers, want REDEEM_WORKERS={want}")
    victim = leaves[0]["pid"]
    os.kill(victim, signal.SIGKILL)

    def back():
        now = run_workers()
        return (len(now) == len(before) and
                victim not in {p["pid"] for p in now}) and now
    now = L.wait_until(back, timeout=10)
    expect(now, f"workers {sorted(pids)} -> {sorted(p['pid'] for p in run_workers())}"
           f" 10 s after killing {victim}")

    def healthy():
        return all(L.request("GET", "/healthz", timeout=5).status == 200
                   for _ in range(6))
    expect(L.wait_until(healthy, timeout=10, step=0.2), "/healthz not 200 again")
    # Every worker serves: enough requests that each sees some.
    _, code = fresh_code(40)
    res = L.race([L.redeem_req(code, L.account()) for _ in range(24)])
    bad = [r for r in res if not isinstance(r, L.Resp) or r.status != 200]
    expect(not bad, f"{len(bad)} of 24 redeems failed after the kill: {bad[:3]}")


def t_unavailable_sqlite():
    """A database busy past the workers' timeout: the SQLite file held in
    an exclusive transaction. The API says unavailable (503, Retry-After),
    the page says so in HTML, and all is well once the lock goes."""
    db = os.environ.get("REDEEM_DB", "")
    _, code = fresh_code(1)
    acct = L.account()
    s = PageSession()
    page = ("POST", "/redeem", urllib.parse.urlencode(
        {"code": code, "account": acct, "csrf": s.token}).encode(),
        {"Content-Type": "application/x-www-form-urlencoded",
         "Cookie": "; ".join(f"{k}={v}" for k, v in s.cookies.items())})
    con = sqlite3.connect(db[len("sqlite:"):], timeout=10, isolation_level=None)
    try:
        con.execute("BEGIN EXCLUSIVE")
        t0 = time.monotonic()
        # The hang guard is nginx's own read timeout (60 s): an answer
        # must come, and be 503, not nginx giving up.
        api_r, page_r = L.race([L.redeem_req(code, acct), page], timeout=70)
        dt = time.monotonic() - t0
    finally:
        con.execute("ROLLBACK")
        con.close()
    expect(isinstance(api_r, L.Resp), f"API request: {api_r}")
    expect_error(api_r, 503, "unavailable", "API while the database is locked")
    expect(isinstance(page_r, L.Resp), f"page request: {page_r}")
    expect(page_r.status == 503 and page_r.header("Retry-After") and
           page_r.header("Content-Type", "").startswith("text/html"),
           f"page while locked: {page_r.status} Retry-After "
           f"{page_r.header('Retry-After')!r} {page_r.header('Content-Type')!r}")
    expect(dt < 59, f"unavailable took {dt:.1f} s: nginx's timeout, not ours")
    expect(L.code_info(code).get("uses") == 0, "a 503 used the code")
    redeem_ok(code, acct)


def t_still_healthy():
    r = L.request("GET", "/healthz")
    L.expect_status(r, 200, "healthz after hostile input")
    camp, code = fresh_code(1)
    acct = L.account()
    check_redemption(redeem_ok(code, acct), code, acct, camp)
    L.verify()


TESTS = [
    ("healthz and ping", t_healthz),
    ("redeem answer shape, replay, normalization", t_redeem_shape),
    ("1-seat code, 64 concurrent connections, 2 accounts", t_race_one_seat),
    ("20-seat code, 200 accounts at once", t_race_twenty_seats),
    ("invalid: unknown code", t_invalid_unknown),
    ("invalid: bad check character", t_invalid_check_character),
    ("expired: code and campaign", t_expired),
    ("exhausted", t_exhausted),
    ("revoked: code and closed campaign", t_revoked),
    ("ineligible: per-account limit and not started", t_ineligible),
    ("rate_limited per client_ip, 429 + Retry-After", t_rate_limited_client),
    ("rate_limited per account", t_rate_limited_account),
    ("bad_request: malformed, missing, wrong type, bad UTF-8, NUL", t_bad_request),
    ("too_large: 1 MiB + 1 is 413 JSON, 1 MiB is served", t_too_large),
    ("not_found", t_not_found),
    ("method_not_allowed with Allow", t_method_not_allowed),
    ("conflict: campaign and code that exist", t_conflict),
    ("unauthorized: missing, wrong, malformed", t_unauthorized),
    ("unauthorized: revoked key", t_unauthorized_revoked_key),
    ("forbidden: redeem key on admin endpoints", t_forbidden),
    ("tenants do not see each other", t_tenant_isolation),
    ("admin: campaigns create, get, list, validation", t_admin_campaigns),
    ("admin: generate codes, lookup fields", t_admin_generate),
    ("admin: import and list codes", t_admin_import_and_list),
    ("admin: revoke", t_admin_revoke),
    ("admin: close", t_admin_close),
    ("admin: reverse return_seat, idempotent, keep_seat", t_admin_reverse),
    ("pool claim: same account same code, empty pool 409", t_pool_claim),
    ("hostile bodies", t_hostile_bodies),
    ("hostile headers: 64 KiB header is 4xx", t_hostile_headers),
    ("static path traversal", t_path_traversal),
    ("invalid UTF-8 and NUL in path and query", t_bad_utf8_path_query),
    ("page: form, cookie, hidden token, labels, no script", t_page_form),
    ("page: CSRF refused with 403", t_page_csrf),
    ("page: redeem, replay, errors", t_page_redeem),
    ("page: hostile values echoed only escaped", t_page_escaping),
    ("page: ?code= pre-fills and changes nothing", t_page_prefill),
    ("page: NUL and bad bytes in form fields", t_page_nul_fields),
    ("page: GET / redirects to /redeem", t_root_redirect),
    ("page: HTML 404 and 405", t_html_errors),
    ("static: POST is 405 with Allow", t_static_405),
    ("security headers everywhere", t_security_headers),
    ("healthy after hostile input", t_still_healthy),
    ("unavailable: SQLite locked past the timeout is 503", t_unavailable_sqlite),
    ("a worker killed with SIGKILL is replaced", t_worker_killed),
]


def main():
    if len(sys.argv) > 1:
        L.configure(sys.argv[1])
    only = [s for s in os.environ.get("E2E_ONLY", "").split(",") if s]
    sqlite_db = os.environ.get("REDEEM_DB", "").startswith("sqlite:")
    for name, fn in TESTS:
        if fn is t_unavailable_sqlite and not sqlite_db:
            continue
        if only and not any(o in fn.__name__ or o in name for o in only):
            continue
        L.run(name, fn)
    L.finish()


if __name__ == "__main__":
    main()
