#!/usr/bin/env python3
"""Self-test of tests/faults/check.py on synthetic runs: a tiny SQLite
database built from migrations/sqlite/*.sql with crafted rows, a history,
webhook receipts; the good run must pass every checker, and each planted
violation must fail the checker it targets.

Usage: python3 tests/faults/check_selftest.py   (exit 0: all as expected)
"""
import glob
import hashlib
import hmac
import io
import json
import os
import sqlite3
import sys
import tempfile
import time
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, HERE)
import check  # noqa: E402

T0 = int(time.time()) - 2000  # the run's start, seconds
URL = "http://127.0.0.1:9/hook"


def rfc(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class World:
    """A good run: rows, history and receipts, before they are written."""

    def __init__(self, d):
        self.d = d
        self.db_path = os.path.join(d, "redeem.db")
        self.conn = sqlite3.connect(self.db_path)
        self.conn.create_function("UNIX_TIMESTAMP", 0,
                                  lambda: int(time.time()))
        for f in sorted(glob.glob(os.path.join(ROOT, "migrations", "sqlite",
                                               "*.sql"))):
            with open(f) as fh:
                self.conn.executescript(fh.read())
        self.hist = []   # lines of client-0.jsonl
        self.hooks = []  # lines of webhooks.jsonl
        self.faults = []
        self.seq = 0
        self.build()

    def x(self, sql, *a):
        return self.conn.execute(sql, a)

    def op(self, op, args, inv, done, t="ok", res=None, status=200):
        self.seq += 1
        self.hist.append({"c": 0, "i": self.seq, "t": "invoke", "at": inv,
                          "op": op, "args": args})
        if t is not None:
            self.hist.append({"c": 0, "i": self.seq, "t": t, "at": done,
                              "op": op, "status": status, "res": res,
                              "err": ""})

    def build(self):
        x = self.x
        x("INSERT INTO campaigns (id, tenant_id, name, kind, created_at) "
          "VALUES (1, 1, 'spring', 'shared', ?), (2, 1, 'pool1', 'pool', ?)",
          T0, T0)
        for cid, code, camp, mx, uses, state, fence in (
                (1, "AAAA", 1, 2, 1, "active", 0),
                (2, "BBBB", 1, 1, 1, "redeemed", 1),
                (3, "PPPP", 2, 1, 1, "redeemed", 0)):
            x("INSERT INTO codes (id, tenant_id, campaign_id, code, display, "
              "max_uses, uses, state, created_at, fence) VALUES "
              "(?, 1, ?, ?, ?, ?, ?, ?, ?, ?)", cid, camp, code, code, mx,
              uses, state, T0, fence)
        self.code_names = {1: "AAAA", 2: "BBBB", 3: "PPPP"}
        # Redemptions: r1 a redeem, r2 a confirmed hold, r3 a pool claim.
        self.reds = {}
        for rid, cid, camp, acct, at in ((1, 1, 1, "x@e.com", T0 + 100),
                                         (2, 2, 1, "y@e.com", T0 + 105),
                                         (3, 3, 2, "z@e.com", T0 + 107)):
            x("INSERT INTO redemptions (id, tenant_id, code_id, campaign_id, "
              "account, seq, redeemed_at) VALUES (?, 1, ?, ?, ?, ?, ?)",
              rid, cid, camp, acct, rid, at)
            red = {"id": rid, "code": self.code_names[cid], "account": acct,
                   "campaign": "spring" if camp == 1 else "pool1",
                   "redeemed_at": rfc(at), "seq": rid}
            self.reds[rid] = red
            eid = f"evt_{rid:04d}"
            payload = json.dumps({"redemption": red})
            x("INSERT INTO events (id, tenant_id, event_id, type, "
              "redemption_id, created_at, payload, enqueued_at) VALUES "
              "(?, 1, ?, 'code.redeemed', ?, ?, ?, ?)", rid, eid, rid, at,
              payload, at)
            x("INSERT INTO webhook_deliveries (tenant_id, event_id, "
              "endpoint_id, state, attempts, next_attempt_at, created_at, "
              "delivered_at) VALUES (1, ?, 1, 'delivered', 1, ?, ?, ?)",
              rid, at, at, at + 1)
            body = json.dumps({"id": eid, "type": "code.redeemed",
                               "created_at": rfc(at),
                               "data": {"redemption": red}})
            mac = hmac.new(b"s", f"{at + 1}.{body}".encode(),
                           hashlib.sha256).hexdigest()
            self.hooks.append({"at": at + 1.0, "body": body, "headers": {
                "Redeem-Signature": f"t={at + 1},v1={mac}"}})
        x("UPDATE counters SET value = 3")
        x("INSERT INTO webhook_endpoints (id, tenant_id, url, secret, "
          "created_at) VALUES (1, 1, ?, 's', ?)", URL, T0)
        self.op("redeem", {"code": "aaaa", "account": "X@e.com", "via": 0,
                           "port": 1}, T0 + 99.5, T0 + 100.2,
                res={"ok": True, "already": False, "redemption":
                     self.reds[1]})
        self.op("redeem", {"code": "AAAA", "account": "x@e.com", "via": 1,
                           "port": 2}, T0 + 101.0, T0 + 101.1,
                res={"ok": True, "already": True, "redemption":
                     self.reds[1]})
        self.op("pool_claim", {"campaign": "pool1", "account": "z@e.com"},
                T0 + 106.9, T0 + 107.3,
                res={"ok": True, "already": False, "code": "PPPP",
                     "redemption": self.reds[3]})
        # A hold on BBBB, confirmed into r2.
        x("INSERT INTO holds (id, tenant_id, external_id, code_id, "
          "campaign_id, account, state, fencing_token, expires_at, "
          "created_at, ended_at, redemption_id) VALUES (1, 1, 'h1', 2, 1, "
          "'y@e.com', 'confirmed', 1, ?, ?, ?, 2)", T0 + 130, T0 + 100,
          T0 + 105)
        hold = {"external_id": "h1", "state": "held", "expires_at":
                rfc(T0 + 130), "fencing_token": 1, "code": "BBBB",
                "campaign": "spring", "account": "y@e.com",
                "created_at": rfc(T0 + 100)}
        self.op("hold", {"code": "BBBB", "account": "y@e.com",
                         "external_id": "h1", "ttl": 30},
                T0 + 99.8, T0 + 100.1, res={"ok": True, "hold": hold},
                status=201)
        self.op("hold_confirm", {"external_id": "h1"}, T0 + 104.9,
                T0 + 105.2, res={"ok": True, "already": False,
                                 "redemption": self.reds[2]})
        self.op("hold_release", {"external_id": "h1"}, T0 + 106.0,
                T0 + 106.1, res={"ok": True, "hold": dict(
                    hold, state="confirmed", redemption_id=2)})
        # Semaphores a (2) and b (1). p1 a+b [100,110) released; p3 a+b
        # from 110 (the second p1 gave b back: ends before starts) released
        # at 130; p2 a [105, expired at 120, swept 125).
        x("INSERT INTO semaphores (id, tenant_id, name, capacity, in_use, "
          "fence, created_at, updated_at) VALUES (1, 1, 'a', 2, 0, 3, ?, ?),"
          " (2, 1, 'b', 1, 0, 2, ?, ?)", T0, T0, T0, T0)
        x("INSERT INTO semaphore_history (semaphore_id, who, at, "
          "from_capacity, to_capacity) VALUES (1, 'api', ?, NULL, 2), "
          "(2, 'api', ?, NULL, 1)", T0, T0)
        self.permit(1, "p1", [("a", 1, 1), ("b", 1, 1)], T0 + 100,
                    T0 + 160, "released", T0 + 110, T0 + 99.6, T0 + 100.3,
                    T0 + 109.8, T0 + 110.2)
        self.permit(2, "p2", [("a", 1, 2)], T0 + 105, T0 + 120, "expired",
                    T0 + 125, T0 + 104.7, T0 + 105.1, None, None)
        self.permit(3, "p3", [("a", 1, 3), ("b", 1, 2)], T0 + 110,
                    T0 + 170, "released", T0 + 130, T0 + 109.9, T0 + 110.4,
                    T0 + 129.9, T0 + 130.3)
        # p2's lease lost: a heartbeat after it lapsed says expired.
        self.op("heartbeat", {"external_id": "p2", "ttl": 10}, T0 + 121.0,
                T0 + 121.1, t="fail", status=410,
                res={"ok": False, "error": "expired", "detail": "."})
        # An acquire refused: nothing in the DB.
        self.op("acquire", {"external_id": "p9", "owner": "o", "ttl": 30,
                            "semaphores": [{"name": "b", "count": 1}]},
                T0 + 111.0, T0 + 111.1, t="fail", status=409,
                res={"ok": False, "error": "exhausted", "semaphore": "b"})
        self.conn.commit()

    def permit(self, pid, xid, items, created, expires, state, ended,
               inv, done, rel_inv, rel_done):
        x = self.x
        x("INSERT INTO permits (id, tenant_id, external_id, owner, state, "
          "fencing_token, expires_at, created_at, ended_at) VALUES "
          "(?, 1, ?, 'o', ?, ?, ?, ?, ?)", pid, xid, state, items[0][2],
          expires, created, ended)
        for name, count, tok in items:
            x("INSERT INTO permit_items (permit_id, semaphore_id, count, "
              "fencing_token, in_use_after, capacity_at, created_at) "
              "VALUES (?, (SELECT id FROM semaphores WHERE name = ?), ?, ?, "
              "1, 2, ?)", pid, name, count, tok, created)
        ans = {"external_id": xid, "state": "acquired", "fencing_token":
               items[0][2], "expires_at": rfc(expires), "owner": "o",
               "created_at": rfc(created), "semaphores": [
                   {"name": n, "count": c, "fencing_token": t}
                   for n, c, t in items]}
        self.op("acquire", {"external_id": xid, "owner": "o", "ttl": 60,
                            "semaphores": [{"name": n, "count": c}
                                           for n, c, _ in items]},
                inv, done, res={"ok": True, "permit": ans}, status=201)
        if rel_inv is not None:
            self.op("permit_release", {"external_id": xid}, rel_inv,
                    rel_done, res={"ok": True, "permit": dict(
                        ans, state="released")})
        self.answers = getattr(self, "answers", {})
        self.answers[xid] = ans

    def write(self):
        self.conn.commit()
        self.conn.close()
        d = self.d
        os.makedirs(os.path.join(d, "history"), exist_ok=True)
        with open(os.path.join(d, "history", "client-0.jsonl"), "w") as f:
            for line in self.hist:
                f.write(json.dumps(line) + "\n")
        with open(os.path.join(d, "webhooks.jsonl"), "w") as f:
            for line in self.hooks:
                f.write(json.dumps(line) + "\n")
        with open(os.path.join(d, "faults.jsonl"), "w") as f:
            for line in self.faults:
                f.write(json.dumps(line) + "\n")
        setup = {"engine": "sqlite", "dsn": "sqlite:" + self.db_path,
                 "tenant": "default", "codes": [
                     {"code": "AAAA", "max_uses": 2, "campaign": "spring"},
                     {"code": "BBBB", "max_uses": 1, "campaign": "spring"}],
                 "pool": {"campaign": "pool1", "codes": ["PPPP"]},
                 "semaphores": [{"name": "a", "capacity": 2},
                                {"name": "b", "capacity": 1}],
                 "ttl": {"hold": 30, "permit": 60},
                 "sweep_intervals": {"release_leaked": 2, "deliver": 1},
                 "webhook_url": URL, "seed": 1, "start": T0,
                 "end": T0 + 200}
        with open(os.path.join(d, "setup.json"), "w") as f:
            json.dump(setup, f)


# --- the planted violations: (name, checker numbers that must fail, fn) ---

def v_capacity(w):
    # p4 takes b (capacity 1) while p3 holds it; its token follows.
    w.permit(4, "p4", [("b", 1, 3)], w_t(115), w_t(175), "released",
             w_t(118), w_t(114.8), w_t(115.2), w_t(117.9), w_t(118.3))
    w.x("UPDATE semaphores SET fence = 3 WHERE name = 'b'")


def v_capacity_same_second_start_first(w):
    # p5 starts at 130 on b, p3 ended at 130 as well: ends first, no
    # overlap -> must PASS (not a violation).
    w.permit(5, "p5", [("b", 1, 3)], w_t(130), w_t(190), "released",
             w_t(140), w_t(129.95), w_t(130.5), w_t(139.9), w_t(140.2))
    w.x("UPDATE semaphores SET fence = 3 WHERE name = 'b'")


def v_capacity_history_only(w):
    # p6 starts on b in the second p3 gave it back (the DB's times show
    # no overlap), but its ok answer came before p3's release was even
    # asked: only the history can tell.
    w.permit(6, "p6", [("b", 1, 3)], w_t(130), w_t(190), "released",
             w_t(140), w_t(129.0), w_t(129.5), w_t(139.9), w_t(140.2))
    w.x("UPDATE semaphores SET fence = 3 WHERE name = 'b'")


def v_code_over(w):
    # A second live hold on BBBB (max_uses 1) while r2 holds the seat.
    w.x("INSERT INTO holds (id, tenant_id, external_id, code_id, "
        "campaign_id, account, state, fencing_token, expires_at, "
        "created_at, ended_at) VALUES (2, 1, 'h2', 2, 1, 'q@e.com', "
        "'released', 2, ?, ?, ?)", w_t(150), w_t(120), w_t(125))
    w.x("UPDATE codes SET fence = 2 WHERE id = 2")


def v_token_repeat(w):
    w.x("UPDATE permit_items SET fencing_token = 1 WHERE permit_id = 2")
    w.x("UPDATE permits SET fencing_token = 1 WHERE id = 2")
    for line in w.hist:
        res = line.get("res") or {}
        p = res.get("permit") if isinstance(res, dict) else None
        if p and p["external_id"] == "p2":
            p["fencing_token"] = 1
            p["semaphores"][0]["fencing_token"] = 1


def v_token_history(w):
    # In the DB p2 (token 2) and p1 (token 1) were granted in the same
    # second, but the history says p2 answered before p1 was asked.
    w.x("UPDATE permits SET created_at = ? WHERE id IN (1, 2)", w_t(100))
    w.x("UPDATE permit_items SET created_at = ? WHERE permit_id IN (1, 2)",
        w_t(100))
    xid_of = {}
    for line in w.hist:
        if line["t"] == "invoke":
            xid_of[line["i"]] = line["args"].get("external_id")
    for line in w.hist:
        if line["op"] != "acquire":
            continue
        x = xid_of.get(line["i"])
        if x == "p2":
            line["at"] = w_t(99.0) if line["t"] == "invoke" else w_t(99.2)
        elif x == "p1":
            line["at"] = w_t(99.6) if line["t"] == "invoke" else w_t(100.3)
        if x in ("p1", "p2") and line["t"] == "ok":
            line["res"]["permit"]["created_at"] = rfc(w_t(100))


def v_answers_disagree(w):
    ans = dict(w.answers["p1"], fencing_token=7)
    w.op("acquire", {"external_id": "p1", "owner": "o", "ttl": 60,
                     "semaphores": [{"name": "a", "count": 1},
                                    {"name": "b", "count": 1}]},
         w_t(100.5), w_t(100.6), res={"ok": True, "permit": ans})


def v_two_rows(w):
    # A second tenant row is not the planted case: the UNIQUE key forbids
    # two rows; an acknowledged hold that is missing is.
    w.op("hold", {"code": "AAAA", "account": "k@e.com",
                  "external_id": "hX", "ttl": 30}, w_t(140), w_t(140.1),
         res={"ok": True, "hold": {"external_id": "hX", "state": "held",
                                   "fencing_token": 1, "code": "AAAA",
                                   "account": "k@e.com"}}, status=201)


def v_live_again(w):
    # p1 released, then a heartbeat asked later answers acquired.
    w.op("heartbeat", {"external_id": "p1", "ttl": 30}, w_t(111.0),
         w_t(111.1), res={"ok": True, "permit": w.answers["p1"]})


def v_db_state(w):
    w.x("UPDATE permits SET state = 'expired' WHERE id = 3")


def v_partial(w):
    w.x("DELETE FROM permit_items WHERE permit_id = 3 AND semaphore_id = 2")


def v_answer_lists_one(w):
    ans = dict(w.answers["p3"], semaphores=w.answers["p3"]["semaphores"][:1])
    w.op("acquire", {"external_id": "p3", "owner": "o", "ttl": 60,
                     "semaphores": [{"name": "a", "count": 1},
                                    {"name": "b", "count": 1}]},
         w_t(111), w_t(111.1), res={"ok": True, "permit": ans})


def v_leak(w):
    w.x("UPDATE permits SET state = 'acquired', ended_at = NULL WHERE id = 2")


def v_swept_late(w):
    w.x("UPDATE permits SET ended_at = ? WHERE id = 2", w_t(160))


def v_swept_late_excused(w):
    # The same lateness inside a window where the sweeper was stopped:
    # must PASS.
    w.x("UPDATE permits SET ended_at = ? WHERE id = 2", w_t(160))
    w.faults.append({"fault": "sweeper_stop", "start": w_t(118),
                     "heal": w_t(155), "blocks": ["sweeper"], "pid": 1})
    w.faults.append({"fault": "worker_kill", "start": w_t(119),
                     "heal": w_t(119.5), "pid": 2})


def v_swept_late_other_fault(w):
    # A fault that blocks neither the sweeper nor the database excuses
    # nothing.
    w.x("UPDATE permits SET ended_at = ? WHERE id = 2", w_t(160))
    w.faults.append({"fault": "sweeper_stop", "start": w_t(10),
                     "heal": w_t(12), "blocks": ["sweeper"]})
    w.faults.append({"fault": "receiver_down", "start": w_t(118),
                     "heal": w_t(155)})


def v_swept_late_after_kill(w):
    # A killed sweeper's lease (60 s here) runs out before another
    # sweeper takes the job: PASS.
    w.x("UPDATE permits SET ended_at = ? WHERE id = 2", w_t(185))
    w.faults.append({"fault": "sweeper_kill", "start": w_t(118),
                     "heal": w_t(121), "blocks": ["sweeper"]})


def v_lost_redemption(w):
    red = dict(w.reds[1], id=99, account="lost@e.com", seq=99)
    w.op("redeem", {"code": "AAAA", "account": "lost@e.com"}, w_t(150),
         w_t(150.1), res={"ok": True, "already": False, "redemption": red})


def v_redemption_differs(w):
    w.x("UPDATE redemptions SET account = 'other@e.com' WHERE id = 3")
    w.x("UPDATE events SET payload = ? WHERE id = 3", json.dumps(
        {"redemption": dict(w.reds[3], account="other@e.com")}))
    for h in w.hooks:
        b = json.loads(h["body"])
        if b["id"] == "evt_0003":
            b["data"]["redemption"]["account"] = "other@e.com"
            h["body"] = json.dumps(b)
            h["headers"] = {}  # unsigned: only the content is at stake


def v_two_events(w):
    w.x("INSERT INTO events (tenant_id, event_id, type, redemption_id, "
        "created_at, payload, enqueued_at) VALUES (1, 'evt_dup', "
        "'code.redeemed', 1, ?, '{}', ?)", w_t(100), w_t(100))
    w.x("INSERT INTO webhook_deliveries (tenant_id, event_id, endpoint_id, "
        "state, attempts, next_attempt_at, created_at) VALUES (1, "
        "(SELECT id FROM events WHERE event_id = 'evt_dup'), 1, 'dead', 9, "
        "?, ?)", w_t(100), w_t(100))


def v_not_received(w):
    w.hooks = w.hooks[1:]


def v_received_different(w):
    b = json.loads(w.hooks[0]["body"])
    b["data"]["redemption"]["seq"] = 42
    w.hooks.append({"headers": {}, "body": json.dumps(b)})


def v_bad_signature(w):
    h = dict(w.hooks[1])
    h["headers"] = {"Redeem-Signature": "t=1,v1=00"}
    w.hooks.append(h)


def v_pending_overdue(w):
    w.x("UPDATE webhook_deliveries SET state = 'pending', delivered_at = "
        "NULL, next_attempt_at = ? WHERE id = 2", w_t(150))


def v_duplicate_receipt(w):
    # At least once: a duplicate receipt is counted, not a failure: PASS.
    w.hooks.append(dict(w.hooks[0]))


def v_uses(w):
    w.x("UPDATE codes SET uses = 2, state = 'exhausted' WHERE id = 1")


def v_shards(w):
    # A split code (migration 013): uses = codes.uses + SUM(code_shards.uses):
    # AAAA's one use moved to a shard must PASS.
    w.x("UPDATE codes SET uses = 0, shards = 2 WHERE id = 1")
    w.x("INSERT INTO code_shards (code_id, shard, uses, max_uses) "
        "VALUES (1, 0, 1, 1), (1, 1, 0, 1)")


def v_shards_bad(w):
    v_shards(w)
    w.x("UPDATE code_shards SET uses = 1 WHERE shard = 1")


def v_verify(w):
    w.verify_rc = 1


def w_t(s):
    return T0 + s


CASES = [
    ("good run", set(), None),
    ("capacity: two permits on b (capacity 1) at once", {1}, v_capacity),
    ("capacity: end and start in one second (ends first)", set(),
     v_capacity_same_second_start_first),
    ("capacity: over capacity within one second (history only)", {1},
     v_capacity_history_only),
    ("capacity: a hold beside the redemption on a 1-use code", {1},
     v_code_over),
    ("fencing: a token given twice", {2}, v_token_repeat),
    ("fencing: grant order against the history", {2}, v_token_history),
    ("external_id: two ok answers disagree", {3}, v_answers_disagree),
    ("external_id: an acknowledged hold missing", {3}, v_two_rows),
    ("one-way: acquired again after release", {4}, v_live_again),
    ("one-way: DB expired, answers said released", {4, 6}, v_db_state),
    ("all-or-nothing: a permit row missing a semaphore", {3, 5},
     v_partial),
    ("all-or-nothing: an answer lists one of two", {3, 5},
     v_answer_lists_one),
    ("leaks: a permit still acquired past its TTL", {4, 6}, v_leak),
    ("leaks: swept late", {6}, v_swept_late),
    ("leaks: swept late while the sweeper was stopped", set(),
     v_swept_late_excused),
    ("leaks: swept late, the faults then blocked no sweeper", {6},
     v_swept_late_other_fault),
    ("leaks: swept late after a sweeper kill (its lease)", set(),
     v_swept_late_after_kill),
    ("durability: an acknowledged redemption missing", {7, 10},
     v_lost_redemption),
    ("durability: an answer differs from the DB", {7}, v_redemption_differs),
    ("webhooks: two events for one redemption", {8}, v_two_events),
    ("webhooks: delivered, never received", {8}, v_not_received),
    ("webhooks: one id, different content", {8}, v_received_different),
    ("webhooks: pending and overdue", {8}, v_pending_overdue),
    ("webhooks: a receipt with a bad signature", {8}, v_bad_signature),
    ("webhooks: a duplicate receipt is fine", set(), v_duplicate_receipt),
    ("verify: redeemctl verify fails", {9}, v_verify),
    ("conservation: uses off by one", {10}, v_uses),
    ("conservation: split code counted with its shards", set(), v_shards),
    ("conservation: split code over by a shard", {10}, v_shards_bad),
]


def run_case(mutate, tmp):
    w = World(tmp)
    w.verify_rc = 0
    if mutate:
        mutate(w)
    w.write()
    fake = os.path.join(tmp, "redeemctl")
    with open(fake, "w") as f:
        f.write(f"#!/bin/sh\n[ $1 = verify ] || exit 2\n"
                f"[ {w.verify_rc} = 0 ] || echo 'G1 safety: code 1'\n"
                f"exit {w.verify_rc}\n")
    os.chmod(fake, 0o755)
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = check.main(["--out", tmp, "--redeemctl", fake])
    failed = set()
    for line in buf.getvalue().splitlines():
        if line.startswith("FAIL "):
            try:
                failed.add(int(line.split()[1]))
            except (IndexError, ValueError):
                failed.add(0)
    return rc, failed, buf.getvalue()


def main():
    bad = 0
    for name, want, fn in CASES:
        with tempfile.TemporaryDirectory(prefix="checkself.") as tmp:
            rc, failed, out = run_case(fn, tmp)
        good = failed == want and (rc == 1) == bool(want)
        if good:
            print(f"ok   {name}: " +
                  (f"fails {sorted(failed)}" if failed else "passes"))
        else:
            bad += 1
            print(f"FAIL {name}: want failing {sorted(want)}, got "
                  f"{sorted(failed)} (exit {rc})")
            print("".join("  | " + line + "\n"
                          for line in out.splitlines()))
    print(f"{len(CASES) - bad} of {len(CASES)} cases as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
