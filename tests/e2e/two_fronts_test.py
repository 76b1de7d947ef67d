#!/usr/bin/env python3
"""Two independent front ends (each its own nginx, workers and sweeper,
on its own loopback port) on one MariaDB: requests split between them
race on the same codes and semaphores, and every guarantee holds (one
fresh win of a 1-seat code, exactly 20 of a 20-seat code, a semaphore
never past its capacity, one permit per external_id whichever front end
answers, verify clean).

Usage: two_fronts_test.py BASE_URL_A BASE_URL_B (environment as
api_test.py; run.sh starts the second front end on MariaDB runs).
"""

import json
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as L  # noqa: E402
from e2elib import expect  # noqa: E402

PORT_B = None


def split(n):
    """Request i goes to front end A when i is even, else to B."""
    return [L.PORT if i % 2 == 0 else PORT_B for i in range(n)]


def ok_results(res):
    errs = [r for r in res if not isinstance(r, L.Resp)]
    expect(not errs, f"{len(errs)} requests failed: {errs[:3]}")
    return res


def t_one_seat():
    camp = L.campaign()
    code = L.codes(camp, 1, 1)[0]
    a, b = L.account("a"), L.account("b")
    ipa, ipb = L.client_ip(), L.client_ip()
    # Accounts alternate in pairs, so each account reaches both fronts.
    who = [a if (i // 2) % 2 == 0 else b for i in range(64)]
    reqs = [L.redeem_req(code, who[i], ipa if who[i] == a else ipb)
            for i in range(64)]
    res = ok_results(L.race(reqs, ports=split(64)))
    fresh = [(who[i], r) for i, r in enumerate(res)
             if r.status == 200 and r.json().get("already") is False]
    expect(len(fresh) == 1, f"{len(fresh)} fresh wins over two front ends, "
           f"want 1; statuses {sorted(r.status for r in res)}")
    winner = fresh[0][0]
    rid = fresh[0][1].json()["redemption"]["id"]
    for i, r in enumerate(res):
        if who[i] == winner:
            j = L.expect_json_ok(r, 200, "the winner's request")
            expect(j["redemption"]["id"] == rid, "two redemptions of one "
                   "account and code")
        else:
            L.expect_error(r, 409, "exhausted", "the other account")
    info = L.code_info(code)
    expect(info.get("uses") == 1, f"code after the race: {info}")


def t_twenty_seats():
    camp = L.campaign()
    code = L.codes(camp, 1, 20)[0]
    reqs = [L.redeem_req(code, L.account(f"s{i}")) for i in range(200)]
    res = ok_results(L.race(reqs, ports=split(200)))
    won = [r for r in res if r.status == 200]
    expect(len(won) == 20, f"{len(won)} redemptions of a 20-seat code "
           "over two front ends")
    for r in res:
        if r.status != 200:
            L.expect_error(r, 409, "exhausted", "a loser")
    fronts = {i % 2 for i, r in enumerate(res) if r.status == 200}
    expect(L.code_info(code).get("uses") == 20, "uses is not 20")
    print(f"# winners answered by front ends {sorted(fronts)}", flush=True)


def permit_req(name, ext):
    body = json.dumps({"external_id": ext, "owner": "two-fronts",
                       "ttl_seconds": 60,
                       "semaphores": [{"name": name, "count": 1}]}).encode()
    return ("POST", "/api/v1/permits", body,
            {"Content-Type": "application/json",
             "Authorization": "Bearer " + L.REDEEM_KEY})


def semaphore(name):
    r = L.api("GET", "/api/v1/semaphores/" + urllib.parse.quote(name))
    return L.expect_json_ok(r, 200, f"GET semaphore {name}")["semaphore"]


def t_permits():
    name = L.uniq("fronts")
    L.expect_json_ok(L.api("PUT", "/api/v1/semaphores/" + name,
                           {"capacity": 5}), 200, "PUT semaphore")
    reqs = [permit_req(name, L.uniq("p") + ":x") for _ in range(40)]
    res = ok_results(L.race(reqs, ports=split(40)))
    won = [r for r in res if r.status == 201]
    expect(len(won) == 5, f"{len(won)} permits on capacity 5 over two "
           f"front ends; statuses {sorted(r.status for r in res)}")
    for r in res:
        if r.status != 201:
            L.expect_error(r, 409, "exhausted", "a refused permit")
    toks = sorted(r.json()["permit"]["fencing_token"] for r in won)
    expect(len(set(toks)) == 5, f"fencing tokens repeat: {toks}")
    expect(semaphore(name).get("in_use") == 5, "in use is not 5")
    # One external_id sent to both at once: one permit, one token.
    ext = L.uniq("same") + ":x"
    L.expect_json_ok(L.api("PUT", "/api/v1/semaphores/" + name + "-2",
                           {"capacity": 3}), 200, "PUT semaphore")
    res = ok_results(L.race([permit_req(name + "-2", ext)] * 12,
                            ports=split(12)))
    st = sorted(r.status for r in res)
    expect(st.count(201) == 1 and st.count(200) == 11,
           f"one external_id on both front ends: statuses {st}")
    toks = {r.json()["permit"]["fencing_token"] for r in res}
    expect(len(toks) == 1, f"one external_id, several tokens: {toks}")
    expect(semaphore(name + "-2").get("in_use") == 1, "in use is not 1")


TESTS = [
    ("two fronts: 64 requests, 2 accounts, 1 seat: one fresh win",
     t_one_seat),
    ("two fronts: 200 accounts, 20 seats: exactly 20", t_twenty_seats),
    ("two fronts: 40 permits on capacity 5; one external_id on both",
     t_permits),
    ("two fronts: redeemctl verify", L.verify),
]


def main():
    global PORT_B
    if len(sys.argv) != 3:
        print("usage: two_fronts_test.py BASE_URL_A BASE_URL_B",
              file=sys.stderr)
        sys.exit(2)
    L.configure(sys.argv[1])
    PORT_B = urllib.parse.urlsplit(sys.argv[2]).port
    for name, fn in TESTS:
        L.run(name, fn)
    L.finish()


if __name__ == "__main__":
    main()
