#!/usr/bin/env python3
"""The fault suite's checkers: what a run's history, webhooks and database
must satisfy once the faults are healed and the sweeper has caught up.

Usage: check.py --out OUT [--redeemctl BUILD/redeemctl] [--slack SECONDS]

Reads OUT/setup.json, OUT/history/client-*.jsonl, OUT/webhooks.jsonl,
OUT/faults.jsonl and the database named by setup.json's dsn (SQLite through
the sqlite3 module, MariaDB through the mysql command-line client on its
socket). Prints one PASS, FAIL or WARN line per checker (with the first few
offenders on failure), a summary, and exits 1 when any checker failed.
Standard library only.

The checkers (one function each, check_*):
 1  capacity: per semaphore, the permits' [created_at, ended_at) intervals
    never sum past the capacity in effect; per code, live holds plus
    seat-holding redemptions never pass max_uses; the same again from the
    history at sub-second resolution (what was held for certain).
 2  fencing: tokens unique per semaphore / per code, within the counter,
    grant times never going back in token order; and no grant asked after
    another's ok answer has a smaller token.
 3  one external_id, one permit (hold): every ok answer agrees and matches
    the DB's row; no acknowledged one missing; one row per tenant and id.
 4  one-way states: no live answer after an ended one, every ended answer
    agrees, the DB's final state is what the answers said; an ok confirm
    is the hold's redemption.
 5  all or nothing: DB items = the semaphores asked; ok answers list all.
 6  leaks: nothing live past its TTL; each expiry swept within the
    release_leaked interval + slack (+ faults that blocked the sweeper or
    the database, + the lease after a sweeper kill).
 7  acknowledged redemptions: present with the same values; one id per
    (code, account); never answered fresh twice.
 8  webhooks: one code.redeemed event per redemption; deliveries settled;
    delivered ones received, with the outbox's content and a valid
    signature; duplicates counted.
 9  redeemctl verify exits 0.
10  conservation: uses (+ code_shards) = seat-holding redemptions + live
    holds, within max_uses; fresh ok answers <= DB redemptions per code.

Times. The database stores every time as whole Unix seconds by its own
clock (SQLite: the host's time(); MariaDB: the statement's start time).
The history's times are the clients' float time.time() on the same host.
Where a checker orders database times it says how it treats equal seconds.
"""
import argparse
import calendar
import glob
import hashlib
import hmac
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import traceback
import urllib.parse
from collections import defaultdict

SHOW = 5  # offenders printed per failing checker

PERMIT_OPS = ("acquire", "heartbeat", "permit_release")
HOLD_OPS = ("hold", "hold_confirm", "hold_release")
REDEEM_OPS = ("redeem", "pool_claim", "hold_confirm")


# --- small helpers ---------------------------------------------------------

def norm_code(s):
    """A code's normalized text: upper case, no spaces or dashes."""
    return re.sub(r"[\s-]", "", str(s or "")).upper()


def canon_account(s):
    return str(s or "").strip().lower()


def rfc3339(s):
    """'2026-11-22T10:00:00Z' -> Unix seconds, or None."""
    if not isinstance(s, str):
        return None
    try:
        return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return None


def read_jsonl(path, problems):
    """The JSON objects of a file, one per line; bad lines are noted (a
    line cut by a kill at the end of a file is expected)."""
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    j = json.loads(line)
                except ValueError:
                    problems.append(f"{os.path.basename(path)}:{n}: not JSON")
                    continue
                if isinstance(j, dict):
                    out.append(j)
    except OSError as e:
        problems.append(f"{path}: {e.strerror}")
    return out


class Result:
    """One checker's verdict: counts, failures (with examples), warnings."""

    def __init__(self, name):
        self.name = name
        self.counts = {}
        self.fails = []     # (kind, example) in order found
        self.warns = []
        self.skipped = None

    def count(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n

    def fail(self, kind, example):
        self.fails.append((kind, example))

    def warn(self, msg):
        self.warns.append(msg)

    def skip(self, why):
        self.skipped = why

    def verdict(self):
        if self.fails:
            return "FAIL"
        if self.skipped:
            return "SKIP"
        return "WARN" if self.warns else "PASS"

    def report(self):
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        line = f"{self.verdict():4} {self.name}"
        if counts:
            line += f": {counts}"
        if self.skipped:
            line += f" ({self.skipped})"
        print(line)
        kinds = defaultdict(list)
        for kind, ex in self.fails:
            kinds[kind].append(ex)
        for kind, exs in kinds.items():
            print(f"     {len(exs)} x {kind}")
            for ex in exs[:SHOW]:
                print(f"       - {ex}")
        for w in self.warns[:SHOW]:
            print(f"     warning: {w}")
        if len(self.warns) > SHOW:
            print(f"     ... {len(self.warns) - SHOW} more warnings")


# --- the database ----------------------------------------------------------

# Columns read back from the mysql client's text as integers (SQLite gives
# typed values already): ids, times, counters.
INT_COLS = {"uses", "max_uses", "count", "capacity", "fencing_token", "fence",
            "in_use", "in_use_after", "capacity_at", "attempts", "shard",
            "shards", "seq", "n", "value", "enabled", "last_status",
            "to_capacity", "from_capacity", "now", "total", "budget",
            "redeemed", "at"}


def _is_int_col(name):
    return (name == "id" or name.endswith("_id") or name.endswith("_at")
            or name in INT_COLS)


class DB:
    """Read-only queries on either engine; rows come back as dicts. The
    statements are fixed text (no value of the run is spliced in except
    integers formatted by us)."""

    def __init__(self, dsn):
        self.dsn = dsn
        if dsn.startswith("sqlite:"):
            self.kind = "sqlite"
            path = dsn[len("sqlite:"):]
            if not os.path.exists(path):
                raise RuntimeError(f"no SQLite file {path}")
            self.conn = sqlite3.connect(path, timeout=30)
            self.conn.row_factory = sqlite3.Row
        elif dsn.startswith("mysql://"):
            self.kind = "mysql"
            u = urllib.parse.urlsplit(dsn)
            qs = urllib.parse.parse_qs(u.query)
            self.user = urllib.parse.unquote(u.username or "root")
            self.password = urllib.parse.unquote(u.password or "")
            self.database = u.path.lstrip("/")
            self.socket = (qs.get("socket") or [None])[0]
            self.host, self.port = u.hostname, u.port
            self.client = "mysql" if _which("mysql") else "mariadb"
        else:
            raise RuntimeError(f"unknown DSN form {dsn!r}")
        self._tables = None

    def query(self, sql):
        if self.kind == "sqlite":
            cur = self.conn.execute(sql)
            return [dict(r) for r in cur.fetchall()]
        cmd = [self.client, "--no-defaults", "-u", self.user, "--batch",
               "--raw", "-e", sql]
        if self.socket:
            cmd[2:2] = ["-S", self.socket]
        else:
            cmd[2:2] = ["-h", self.host or "127.0.0.1",
                        "-P", str(self.port or 3306)]
        cmd.insert(-2, self.database)
        env = dict(os.environ)
        if self.password:
            env["MYSQL_PWD"] = self.password
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=300)
        if p.returncode != 0:
            raise RuntimeError(f"mysql: {p.stderr.strip()[:300]}")
        lines = p.stdout.split("\n")
        if not lines or not lines[0]:
            return []
        head = lines[0].split("\t")
        rows = []
        for line in lines[1:]:
            if line == "":
                continue
            vals = line.split("\t")
            row = {}
            for k, v in zip(head, vals):
                if v == "NULL":
                    v = None
                elif _is_int_col(k):
                    try:
                        v = int(v)
                    except ValueError:
                        try:
                            v = int(float(v))
                        except ValueError:
                            pass
                row[k] = v
            rows.append(row)
        return rows

    def tables(self):
        if self._tables is None:
            if self.kind == "sqlite":
                rows = self.query("SELECT name FROM sqlite_master "
                                  "WHERE type = 'table'")
            else:
                rows = self.query("SELECT table_name AS name FROM "
                                  "information_schema.tables WHERE "
                                  "table_schema = DATABASE()")
            self._tables = {r["name"] for r in rows}
        return self._tables

    def has_column(self, table, col):
        if self.kind == "sqlite":
            rows = self.query(f"PRAGMA table_info({table})")
            return any(r["name"] == col for r in rows)
        rows = self.query("SELECT column_name AS name FROM "
                          "information_schema.columns WHERE table_schema = "
                          f"DATABASE() AND table_name = '{table}'")
        return any(r["name"] == col for r in rows)

    def now(self):
        """The database clock (what every stored time is by)."""
        if self.kind == "sqlite":
            return int(time.time())
        return int(self.query("SELECT UNIX_TIMESTAMP() AS now")[0]["now"])


def _which(prog):
    return any(os.access(os.path.join(d, prog), os.X_OK)
               for d in os.environ.get("PATH", "").split(os.pathsep))


# --- the run's files -------------------------------------------------------

class Op:
    """One client operation: its invoke and its completion (if any)."""
    __slots__ = ("c", "i", "op", "args", "inv", "done", "t", "status",
                 "res", "err")

    def __init__(self, c, i):
        self.c, self.i = c, i
        self.op = None
        self.args = {}
        self.inv = self.done = None
        self.t = "unknown"
        self.status = self.res = self.err = None

    @property
    def ok(self):
        return (self.t == "ok" and isinstance(self.res, dict)
                and self.res.get("ok") is True)

    @property
    def error(self):
        """The API's error word of a definite failure, else None."""
        if self.t == "fail" and isinstance(self.res, dict):
            return self.res.get("error")
        return None

    def xid(self):
        a = self.args or {}
        return a.get("external_id")

    def __repr__(self):
        return f"client {self.c} #{self.i} {self.op}"


class Run:
    def __init__(self, out):
        self.out = out
        self.problems = []
        self.setup = {}
        p = os.path.join(out, "setup.json")
        try:
            with open(p, encoding="utf-8") as f:
                self.setup = json.load(f)
        except (OSError, ValueError) as e:
            self.problems.append(f"setup.json unreadable: {e}")
        self.ops = self._history()
        self.webhooks = read_jsonl(os.path.join(out, "webhooks.jsonl"),
                                   self.problems) if os.path.exists(
            os.path.join(out, "webhooks.jsonl")) else []
        fp = os.path.join(out, "faults.jsonl")
        self.faults = read_jsonl(fp, self.problems) \
            if os.path.exists(fp) else []

    def get(self, key, default, note=True):
        v = self.setup.get(key)
        if v is None:
            if note:
                self.problems.append(f"setup.json has no {key!r}; "
                                     f"using {default!r}")
            return default
        return v

    def interval(self, job, default):
        """A sweep job's interval in seconds: top level, or under
        sweep_intervals / sweep / intervals."""
        for v in (self.setup.get(job),
                  *((self.setup.get(k) or {}).get(job)
                    for k in ("sweep_intervals", "sweep", "intervals")
                    if isinstance(self.setup.get(k), dict))):
            if isinstance(v, (int, float)):
                return v
        self.problems.append(f"setup.json names no {job} interval; "
                             f"using {default} s")
        return default

    def _history(self):
        files = sorted(glob.glob(os.path.join(self.out, "history",
                                              "client-*.jsonl")))
        if not files:
            self.problems.append("no history/client-*.jsonl")
        ops = {}
        for path in files:
            for j in read_jsonl(path, self.problems):
                key = (j.get("c"), j.get("i"))
                o = ops.get(key)
                if o is None:
                    o = ops[key] = Op(*key)
                o.op = o.op or j.get("op")
                if j.get("t") == "invoke":
                    o.inv = j.get("at")
                    o.args = j.get("args") or {}
                else:
                    o.done = j.get("at")
                    o.t = j.get("t") or "unknown"
                    o.status = j.get("status")
                    o.res = j.get("res")
                    o.err = j.get("err")
        for o in ops.values():
            if o.inv is None:  # a completion without its invoke
                o.inv = o.done
        return sorted(ops.values(), key=lambda o: (o.inv or 0, o.c or 0,
                                                   o.i or 0))


class Ctx:
    """What every checker reads: the run, the database and its rows."""

    def __init__(self, run, db, slack, redeemctl):
        self.run, self.db = run, db
        self.slack = slack
        self.redeemctl = redeemctl
        self.now = db.now() if db else int(time.time())
        self.tenant_name = run.get("tenant", "default")
        self.tenant = None
        if db:
            t = db.query("SELECT id, name FROM tenants")
            for r in t:
                if r["name"] == self.tenant_name:
                    self.tenant = int(r["id"])
            if self.tenant is None:
                raise RuntimeError(f"no tenant {self.tenant_name!r}")
        self._cache = {}

    def q(self, sql):
        """A query with {T} standing for the tenant's id, cached."""
        sql = sql.replace("{T}", str(self.tenant))
        if sql not in self._cache:
            self._cache[sql] = self.db.query(sql)
        return self._cache[sql]

    # The rows most checkers look at.
    def semaphores(self):
        return self.q("SELECT id, name, capacity, in_use, fence, created_at "
                      "FROM semaphores WHERE tenant_id = {T}")

    def permits(self):
        return self.q("SELECT id, external_id, owner, state, fencing_token, "
                      "expires_at, created_at, ended_at FROM permits "
                      "WHERE tenant_id = {T}")

    def permit_items(self):
        return self.q("SELECT i.permit_id, i.semaphore_id, s.name, i.count, "
                      "i.fencing_token, i.in_use_after, i.capacity_at, "
                      "i.created_at FROM permit_items i JOIN semaphores s "
                      "ON s.id = i.semaphore_id WHERE s.tenant_id = {T}")

    def holds(self):
        return self.q("SELECT h.id, h.external_id, h.code_id, c.code, "
                      "h.account, h.state, h.fencing_token, h.expires_at, "
                      "h.created_at, h.ended_at, h.redemption_id, "
                      "k.name AS campaign FROM holds h JOIN codes c ON "
                      "c.id = h.code_id JOIN campaigns k ON "
                      "k.id = h.campaign_id WHERE h.tenant_id = {T}")

    def codes(self):
        return self.q("SELECT id, code, display, max_uses, uses, state, "
                      "fence FROM codes WHERE tenant_id = {T}")

    def redemptions(self):
        return self.q("SELECT r.id, r.code_id, c.code, r.account, "
                      "k.name AS campaign, r.seq, r.redeemed_at, "
                      "r.reversed_at, r.reversal_policy FROM redemptions r "
                      "JOIN codes c ON c.id = r.code_id JOIN campaigns k "
                      "ON k.id = r.campaign_id WHERE r.tenant_id = {T}")

    def ops(self, *names):
        return [o for o in self.run.ops if o.op in names]


def permit_items_by_permit(ctx):
    out = defaultdict(list)
    for it in ctx.permit_items():
        out[it["permit_id"]].append(it)
    return out


# --- 1. capacity never exceeded --------------------------------------------

def max_overlap(intervals, cap_at):
    """intervals: (start, end, weight, ident) in whole seconds, end None for
    open. Sweeps them and returns the moments where the sum of weights of
    the intervals alive exceeds cap_at(start second) at a start.

    Equal seconds: every end at second t is applied before every start at
    t. The stored times are floor(real time) of statements that run after
    the seat was taken (start) and before it was given back (end, the
    commit comes later), so a recorded interval lies inside the real one
    up to the rounding. An overlap found with ends first at second t means
    every start's real time < t+1 <= every end's real time: a real
    overlap, never an artefact of the rounding. The price: two intervals
    that really overlapped within one second (an end and a start in the
    same second, the start first) are not seen; the workers' own
    in_use_after/capacity_at rows (checked by redeemctl verify) cover
    that case exactly."""
    ev = []
    for s, e, w, ident in intervals:
        ev.append((s, 1, w, ident))
        if e is not None:
            ev.append((e, 0, -w, ident))
    ev.sort(key=lambda x: (x[0], x[1]))
    cur, peak, bad = 0, 0, []
    live = {}
    for t, kind, w, ident in ev:
        cur += w
        if kind == 0:
            live.pop(ident, None)
            continue
        live[ident] = w
        peak = max(peak, cur)
        cap = cap_at(t)
        if cap is not None and cur > cap:
            bad.append((t, cur, cap, sorted(live)[:8]))
    return peak, bad


def check_capacity(ctx):
    r = Result("1 capacity never exceeded (DB timestamps; history)")
    items = defaultdict(list)
    permits = {p["id"]: p for p in ctx.permits()}
    for it in ctx.permit_items():
        items[it["semaphore_id"]].append(it)
    hist = defaultdict(list)
    if "semaphore_history" in ctx.db.tables():
        for h in ctx.q("SELECT y.semaphore_id, y.at, y.to_capacity FROM "
                       "semaphore_history y JOIN semaphores s ON "
                       "s.id = y.semaphore_id WHERE s.tenant_id = {T} "
                       "ORDER BY y.id"):
            hist[h["semaphore_id"]].append((h["at"], h["to_capacity"]))
    setup_caps = {s.get("name"): s.get("capacity")
                  for s in ctx.run.get("semaphores", [])}
    for sem in ctx.semaphores():
        changes = hist.get(sem["id"], [])

        def cap_at(t, changes=changes, cur=sem["capacity"]):
            # The capacity a grant in second t could have seen: the last
            # one set before t, or any set within t (lenient: equal
            # seconds cannot be ordered).
            if not changes:
                return cur
            before = [c for a, c in changes if a < t]
            within = [c for a, c in changes if a == t]
            cands = ([before[-1]] if before else []) + within
            return max(cands) if cands else changes[0][1]
        ivs = []
        for it in items.get(sem["id"], []):
            p = permits.get(it["permit_id"])
            if p is None:
                continue
            start = p["created_at"]
            end = p["ended_at"] if p["state"] != "acquired" else None
            ivs.append((start, end, it["count"], p["external_id"]))
        peak, bad = max_overlap(ivs, cap_at)
        r.count("semaphores")
        r.count("permit rows", len(ivs))
        want = setup_caps.get(sem["name"])
        if want is not None and want != sem["capacity"] and not changes:
            r.warn(f"semaphore {sem['name']}: capacity {sem['capacity']} in "
                   f"the DB, {want} in setup.json")
        for t, cur, cap, live in bad:
            r.fail("semaphore over capacity",
                   f"{sem['name']} at {t}: {cur} held > capacity {cap}; "
                   f"permits {live}")
        if ivs:
            r.count(f"peak {sem['name']}/{sem['capacity']}", peak)

    # Codes: live holds + redemptions that hold a seat <= max_uses at every
    # moment (G1 over time; verify checks it at the end only).
    reds = {x["id"]: x for x in ctx.redemptions()}
    ivs = defaultdict(list)
    for x in reds.values():
        end = x["reversed_at"] if x["reversal_policy"] == "return_seat" \
            else None
        ivs[x["code_id"]].append((x["redeemed_at"], end, 1, f"r{x['id']}"))
    for h in ctx.holds():
        end = h["ended_at"] if h["state"] != "held" else None
        # A confirmed hold's seat becomes its redemption's in the same
        # transaction; the two statements may read different seconds, so
        # the hold's interval ends where the redemption's begins (when
        # the redemption is the hold's own, not an older one).
        red = reds.get(h["redemption_id"])
        if red is not None and red["redeemed_at"] >= h["created_at"]:
            end = red["redeemed_at"] if end is None \
                else min(end, red["redeemed_at"])
        ivs[h["code_id"]].append((h["created_at"], end, 1, h["external_id"]))
    codes = {c["id"]: c for c in ctx.codes()}
    for cid, iv in ivs.items():
        c = codes.get(cid)
        if c is None:
            continue
        _, bad = max_overlap(iv, lambda t, m=c["max_uses"]: m)
        r.count("codes with seats taken")
        for t, cur, cap, live in bad:
            r.fail("code over max_uses",
                   f"{c['code']} at {t}: {cur} seats > max_uses {cap}; "
                   f"{live}")
    check_capacity_history(ctx, r)
    return r


def surely_held(first_ok, first_end_invoke, expires_at):
    """The interval in which a lease was held for certain, in the clients'
    float seconds: from its first ok answer that says it is live (granted
    before that answer was read) to the first invoke that may have ended
    it (release, confirm) or its stored expires_at (a whole second E
    lapses at the first real time >= E, by the same host clock; heartbeats
    only ever move it later, each while the lease was live)."""
    if first_ok is None:
        return None
    ends = [t for t in (first_end_invoke, expires_at) if t is not None]
    end = min(ends) if ends else None
    if end is not None and end <= first_ok:
        return None
    return first_ok, end


def check_capacity_history(ctx, r):
    """Capacity from the clients' side, at sub-second resolution: the
    leases and redemptions held for certain at one instant (see
    surely_held) never exceed the capacity or max_uses. Independent of
    the database's whole-second times; unknown outcomes count for
    nothing, so it never raises a false alarm, and it sees what the
    second-resolution sweep cannot (an end and a start in one second)."""
    permits = {p["external_id"]: p for p in ctx.permits()}
    first_ok, first_end, sems = {}, {}, {}
    for o in ctx.ops(*PERMIT_OPS):
        x = o.xid()
        if x is None:
            continue
        if o.op == "permit_release" and o.inv is not None:
            first_end[x] = min(first_end.get(x, o.inv), o.inv)
        if o.ok and isinstance(o.res.get("permit"), dict) and \
                o.res["permit"].get("state") == "acquired" and \
                o.done is not None:
            first_ok[x] = min(first_ok.get(x, o.done), o.done)
            sems.setdefault(x, o.res["permit"].get("semaphores") or [])
    caps = {s["name"]: s["capacity"] for s in ctx.semaphores()}
    ivs = defaultdict(list)
    for x, t in first_ok.items():
        p = permits.get(x)
        iv = surely_held(t, first_end.get(x),
                         p["expires_at"] if p else None)
        if iv is None:
            continue
        for s in sems[x]:
            ivs[s.get("name")].append((iv[0], iv[1], s.get("count") or 1, x))
    for name, iv in ivs.items():
        r.count("permits surely held (history)", len(iv))
        peak, bad = max_overlap(iv, lambda t, c=caps.get(name): c)
        for t, cur, cap, live in bad:
            r.fail("semaphore over capacity (history)",
                   f"{name} at {t:.3f}: {cur} surely held > capacity {cap}; "
                   f"{live}")
    # Codes: holds until their release or confirm is asked, redemptions
    # from their first ok answer on (until a reversal that returned it).
    holds = {h["external_id"]: h for h in ctx.holds()}
    first_ok, first_end, code_of = {}, {}, {}
    for o in ctx.ops(*HOLD_OPS):
        x = o.xid()
        if x is None:
            continue
        if o.op in ("hold_release", "hold_confirm") and o.inv is not None:
            first_end[x] = min(first_end.get(x, o.inv), o.inv)
        if o.op == "hold" and o.ok and isinstance(o.res.get("hold"), dict) \
                and o.res["hold"].get("state") == "held" and \
                o.done is not None:
            first_ok[x] = min(first_ok.get(x, o.done), o.done)
            code_of.setdefault(x, norm_code(o.res["hold"].get("code")))
    ivs = defaultdict(list)
    for x, t in first_ok.items():
        h = holds.get(x)
        iv = surely_held(t, first_end.get(x), h["expires_at"] if h else None)
        if iv is not None:
            ivs[code_of[x]].append((iv[0], iv[1], 1, x))
    reds = {x["id"]: x for x in ctx.redemptions()}
    seen = {}
    for o in ctx.ops(*REDEEM_OPS):
        if o.ok and isinstance(o.res.get("redemption"), dict) and \
                o.done is not None:
            rid = o.res["redemption"].get("id")
            if rid not in seen or o.done < seen[rid][0]:
                seen[rid] = (o.done, norm_code(o.res["redemption"].get(
                    "code")))
    for rid, (t, code) in seen.items():
        d = reds.get(rid)
        end = d["reversed_at"] if d and d["reversal_policy"] == \
            "return_seat" else None
        if end is None or end > t:
            ivs[code].append((t, end, 1, f"r{rid}"))
    max_uses = {c["code"]: c["max_uses"] for c in ctx.codes()}
    for code, iv in ivs.items():
        _, bad = max_overlap(iv, lambda t, m=max_uses.get(code): m)
        for t, cur, cap, live in bad:
            r.fail("code over max_uses (history)",
                   f"{code} at {t:.3f}: {cur} seats surely held > "
                   f"max_uses {cap}; {live}")


# --- 2. fencing tokens in grant order --------------------------------------

def db_grant_order(r, what, owners, label, grants_in):
    """Checker 2 in the database: grants_in yields (owner id, (token,
    row id), external_id, created_at) of one semaphore's or code's grants;
    per owner the tokens are unique, within its counter (`fence`), and in
    token order the grant times never go back."""
    by_owner = defaultdict(list)
    for oid, key, xid, at in grants_in:
        by_owner[oid].append((key, xid, at))
    for oid, gs in by_owner.items():
        o = owners[oid]
        gs.sort(key=lambda g: g[0])
        r.count(f"{what} grants", len(gs))
        for (ka, xa, ta), (kb, xb, tb) in zip(gs, gs[1:]):
            if ka[0] == kb[0]:
                r.fail(f"token repeats on a {what}",
                       f"{o[label]}: token {ka[0]} for {xa} and {xb}")
            elif tb < ta:
                r.fail("token order against grant time",
                       f"{what} {o[label]}: {xa} token {ka[0]} at {ta}, "
                       f"{xb} token {kb[0]} at {tb}")
        if gs and gs[-1][0][0] > o["fence"]:
            r.fail(f"token past the {what}'s counter",
                   f"{o[label]}: token {gs[-1][0][0]} > fence {o['fence']}")


def history_grant_order(r, what, of, times, grants_in):
    """Checker 2 against the history: grants_in yields (external_id, the
    semaphore or code, token) from the database; a grant answered before
    another was asked must have the smaller token."""
    grants = defaultdict(list)
    for x, key, token in grants_in:
        if x in times:
            inv, ok = times[x]
            grants[key].append((x, inv, ok, token))
    for key, g in grants.items():
        r.count(f"{what} pairs checked against history", len(g))
        for a, b in grant_order_violations(g):
            r.fail(f"later {what} got a smaller token (history)",
                   f"{of} {key}: {a[0]} answered at {a[2]:.3f} token "
                   f"{a[3]}, {b[0]} asked at {b[1]:.3f} token {b[3]}")


def grant_order_violations(grants):
    """grants: (ident, first_invoke, first_ok_done or None, token). If A's
    first ok answer came before B's first invoke, A was granted before B
    was even asked for: A's token < B's. Returns the offending pairs."""
    done = sorted((g for g in grants if g[2] is not None),
                  key=lambda g: g[2])
    asked = sorted((g for g in grants if g[1] is not None),
                   key=lambda g: g[1])
    bad, j, best = [], 0, None
    for b in asked:
        while j < len(done) and done[j][2] < b[1]:
            if best is None or done[j][3] > best[3]:
                best = done[j]
            j += 1
        if best is not None and best[0] != b[0] and best[3] >= b[3]:
            bad.append((best, b))
    return bad


def first_times(ops):
    """external_id -> (first invoke, first ok completion) of its grant ops."""
    out = {}
    for o in ops:
        x = o.xid()
        if x is None:
            continue
        inv, ok = out.get(x, (None, None))
        if o.inv is not None and (inv is None or o.inv < inv):
            inv = o.inv
        if o.ok and o.done is not None and (ok is None or o.done < ok):
            ok = o.done
        out[x] = (inv, ok)
    return out


def check_fencing(ctx):
    r = Result("2 fencing tokens strictly increasing in grant order")
    # Database: per semaphore and per code, tokens unique, within the
    # counter, and in token order the grant times never go back.
    pid_xid = {p["id"]: p["external_id"] for p in ctx.permits()}
    sems = {s["id"]: s for s in ctx.semaphores()}
    db_grant_order(
        r, "semaphore", sems, "name",
        ((it["semaphore_id"], (it["fencing_token"], it["permit_id"]),
          pid_xid.get(it["permit_id"]), it["created_at"])
         for it in ctx.permit_items()))
    # A permit's own token is its first semaphore's (name order).
    items = permit_items_by_permit(ctx)
    for p in ctx.permits():
        its = sorted(items.get(p["id"], []), key=lambda i: i["name"])
        if its and its[0]["fencing_token"] != p["fencing_token"]:
            r.fail("permit token is not its first semaphore's",
                   f"{p['external_id']}: {p['fencing_token']} vs "
                   f"{its[0]['name']} {its[0]['fencing_token']}")
    db_grant_order(
        r, "code", {c["id"]: c for c in ctx.codes()}, "code",
        ((h["code_id"], (h["fencing_token"], h["id"]), h["external_id"],
          h["created_at"]) for h in ctx.holds()))

    # History: real-time order of grants against their tokens (from the
    # database's rows; an answer's token is checked against them in 3).
    history_grant_order(
        r, "grant", "semaphore", first_times(ctx.ops("acquire")),
        ((pid_xid.get(it["permit_id"]), it["name"], it["fencing_token"])
         for it in ctx.permit_items()))
    history_grant_order(
        r, "hold", "code", first_times(ctx.ops("hold")),
        ((h["external_id"], h["code"], h["fencing_token"])
         for h in ctx.holds()))
    return r


# --- 3. one external_id, one permit (one hold) -----------------------------

def permit_identity(p):
    """The parts of a permit answer that never change after the grant."""
    sems = sorted((s.get("name"), s.get("count"), s.get("fencing_token"))
                  for s in (p.get("semaphores") or []))
    return (p.get("external_id"), p.get("fencing_token"), p.get("owner"),
            p.get("created_at"), tuple(sems))


def hold_identity(h):
    return (h.get("external_id"), h.get("fencing_token"),
            norm_code(h.get("code")), h.get("account"), h.get("campaign"),
            h.get("created_at"))


def check_external_ids(ctx):
    r = Result("3 one external_id = one permit / one hold")
    for table in ("permits", "holds"):
        for row in ctx.q(f"SELECT external_id, COUNT(*) AS n FROM {table} "
                         "WHERE tenant_id = {T} GROUP BY external_id "
                         "HAVING COUNT(*) > 1"):
            r.fail(f"several {table} rows for one external_id",
                   f"{row['external_id']}: {row['n']} rows")
    permits = {p["external_id"]: p for p in ctx.permits()}
    items = permit_items_by_permit(ctx)
    answers = defaultdict(list)
    for o in ctx.ops(*PERMIT_OPS):
        if o.ok and isinstance(o.res.get("permit"), dict):
            answers[o.xid() or o.res["permit"].get("external_id")].append(o)
    for x, os_ in answers.items():
        r.count("permit external_ids answered ok")
        ids = {permit_identity(o.res["permit"]) for o in os_}
        if len(ids) > 1:
            r.fail("ok answers of one permit disagree",
                   f"{x}: {len(ids)} different permits, e.g. "
                   f"{sorted(ids, key=str)[:2]}")
        if any(o.res["permit"].get("external_id") != x for o in os_):
            r.fail("answer names another external_id", f"{x}")
        p = permits.get(x)
        if p is None:
            r.fail("acknowledged permit missing from the DB",
                   f"{x} ({len(os_)} ok answers, first {os_[0]!r})")
            continue
        db_sems = tuple(sorted((i["name"], i["count"], i["fencing_token"])
                               for i in items.get(p["id"], [])))
        want = (x, p["fencing_token"], p["owner"], db_sems)
        for ident in ids:
            got = (ident[0], ident[1], ident[2], ident[4])
            if got != want:
                r.fail("ok answer differs from the DB's permit",
                       f"{x}: answer {got}, DB {want}")
                break
    holds = {h["external_id"]: h for h in ctx.holds()}
    answers = defaultdict(list)
    for o in ctx.ops("hold", "hold_release"):
        if o.ok and isinstance(o.res.get("hold"), dict):
            answers[o.xid() or o.res["hold"].get("external_id")].append(o)
    for x, os_ in answers.items():
        r.count("hold external_ids answered ok")
        ids = {hold_identity(o.res["hold"]) for o in os_}
        if len(ids) > 1:
            r.fail("ok answers of one hold disagree",
                   f"{x}: {sorted(ids, key=str)[:2]}")
        h = holds.get(x)
        if h is None:
            r.fail("acknowledged hold missing from the DB",
                   f"{x} ({len(os_)} ok answers, first {os_[0]!r})")
            continue
        want = (x, h["fencing_token"], h["code"], h["account"])
        for ident in ids:
            if ident[:4] != want:
                r.fail("ok answer differs from the DB's hold",
                       f"{x}: answer {ident[:4]}, DB {want}")
                break
    return r


# --- 4. one-way states -----------------------------------------------------

PERMIT_LIVE, HOLD_LIVE = "acquired", "held"


def observation(o):
    """What one completed op says of its external_id's state: (set of
    possible states, is it terminal), or None when it says nothing."""
    if o.ok:
        if o.op == "hold_confirm":
            return {"confirmed"}
        obj = o.res.get("permit") or o.res.get("hold")
        if isinstance(obj, dict) and obj.get("state"):
            return {obj["state"]}
        return None
    err = o.error
    if err == "expired":
        if o.op == "heartbeat":       # released or expired: lost either way
            return {"released", "expired"}
        if o.op == "hold_confirm":    # lapsed (now expired) or released
            return {"released", "expired"}
    return None


def check_one_way(ctx):
    r = Result("4 one-way states (history and DB)")
    groups = (("permit", PERMIT_OPS, PERMIT_LIVE,
               {p["external_id"]: p for p in ctx.permits()}),
              ("hold", HOLD_OPS, HOLD_LIVE,
               {h["external_id"]: h for h in ctx.holds()}))
    for kind, names, live, rows in groups:
        obs = defaultdict(list)
        for o in ctx.ops(*names):
            s = observation(o)
            if s is not None and o.xid():
                obs[o.xid()].append((o, s))
        for x, lst in obs.items():
            r.count(f"{kind} external_ids observed")
            # Every terminal observation must agree (one transition only).
            term = None
            for o, s in lst:
                if live not in s:
                    term = set(s) if term is None else term & s
            if term is not None and not term:
                r.fail(f"{kind} ended two ways",
                       f"{x}: " + ", ".join(f"{o.op}->{sorted(s)}"
                                            for o, s in lst if live not in s))
                continue
            # Real-time order: nothing live after an ended answer.
            ended = sorted(((o.done, o, s) for o, s in lst
                            if live not in s and o.done is not None),
                           key=lambda e: e[0])
            for o, s in lst:
                if live in s and ended and ended[0][0] < (o.inv or 0):
                    e = ended[0]
                    r.fail(f"{kind} live again after it ended",
                           f"{x}: {e[1].op} answered {sorted(e[2])} at "
                           f"{e[0]:.3f}, then {o.op} asked at {o.inv:.3f} "
                           f"answered {live}")
                    break
            # The database's final state agrees with what was answered.
            row = rows.get(x)
            if row is None:
                continue  # an acknowledged one missing: checker 3 names it
            if term is not None and row["state"] not in term:
                r.fail(f"{kind} DB state against the answers",
                       f"{x}: DB {row['state']}, answers said "
                       f"{sorted(term)}")
        # Stored rows: an ended row has ended_at, a live one has not.
        for x, row in rows.items():
            if (row["state"] == live) != (row["ended_at"] is None):
                r.fail(f"{kind} row state against ended_at",
                       f"{x}: state {row['state']}, ended_at "
                       f"{row['ended_at']}")
    # An ok confirm is the hold's redemption.
    holds = {h["external_id"]: h for h in ctx.holds()}
    for o in ctx.ops("hold_confirm"):
        if not o.ok:
            continue
        h = holds.get(o.xid())
        red = o.res.get("redemption") or {}
        if h is None:
            r.fail("confirmed hold missing from the DB", f"{o.xid()}")
        elif h["state"] != "confirmed" or \
                h["redemption_id"] != red.get("id"):
            r.fail("ok confirm but the hold is not its redemption's",
                   f"{o.xid()}: DB state {h['state']}, redemption "
                   f"{h['redemption_id']}, answer {red.get('id')}")
    return r


# --- 5. multi-semaphore all-or-nothing -------------------------------------

def requested(o):
    out = defaultdict(int)
    for s in (o.args or {}).get("semaphores") or []:
        out[s.get("name")] += int(s.get("count") or 1)
    return dict(out)


def check_all_or_nothing(ctx):
    r = Result("5 multi-semaphore permits all or nothing")
    permits = {p["external_id"]: p for p in ctx.permits()}
    items = permit_items_by_permit(ctx)
    want = {}
    for o in ctx.ops("acquire"):
        x = o.xid()
        req = requested(o)
        if x is None:
            continue
        if x in want and want[x] != req:
            r.warn(f"{x}: asked with different semaphores ({want[x]} vs "
                   f"{req}); the first is checked")
            continue
        want.setdefault(x, req)
        if o.ok:
            got = {}
            for s in o.res["permit"].get("semaphores") or []:
                got[s.get("name")] = got.get(s.get("name"), 0) + \
                    (s.get("count") or 0)
            if got != req:
                r.fail("ok answer does not list every semaphore asked",
                       f"{x}: asked {req}, answered {got}")
    multi = 0
    for x, req in want.items():
        if len(req) > 1:
            multi += 1
        p = permits.get(x)
        if p is None:
            continue
        got = {i["name"]: i["count"] for i in items.get(p["id"], [])}
        if got != req:
            r.fail("DB permit not all of its semaphores",
                   f"{x}: asked {req}, DB holds {got}")
    r.count("external_ids asked", len(want))
    r.count("multi-semaphore", multi)
    r.count("in DB", sum(1 for x in want if x in permits))
    for p in ctx.permits():
        if not items.get(p["id"]):
            r.fail("permit row without items", p["external_id"])
    for row in ctx.q("SELECT i.permit_id FROM permit_items i JOIN semaphores "
                     "s ON s.id = i.semaphore_id WHERE s.tenant_id = {T} AND "
                     "NOT EXISTS (SELECT 1 FROM permits p WHERE "
                     "p.id = i.permit_id)"):
        r.fail("permit items without their permit", row["permit_id"])
    return r


# --- 6. every leaked seat back ---------------------------------------------

def fault_windows(ctx):
    """(start, end, extra) of the faults that hold up the sweeper or the
    database; extra: how long after the heal a job may still wait.

    faults.py writes {"fault", "start", "heal", "blocks": [...]}: a fault
    excuses lateness when it blocks "sweeper" or "database". A killed
    sweeper's lease row stays taken until it runs out (setup's
    sweep.lease, default 60 s), so a sweeper kill adds the lease. Lines of
    another form are read by their words (sweep, database names)."""
    run = ctx.run
    sweep = run.setup.get("sweep") if isinstance(run.setup.get("sweep"),
                                                 dict) else {}
    lease = sweep.get("lease") or run.setup.get("sweep_lease") or 60
    end_default = run.setup.get("end") or ctx.now
    with_blocks = any("blocks" in f for f in run.faults)
    out = []
    for f in run.faults:
        name = str(f.get("fault") or f.get("kind") or f.get("name") or "")
        if with_blocks:
            blocks = f.get("blocks") or []
            if "sweeper" not in blocks and "database" not in blocks:
                continue
        else:
            text = json.dumps(f).lower()
            if not any(w in text for w in ("sweep", "mariadb", "mysql",
                                           "database", "\"db", "sqlite")):
                continue
        extra = lease if "sweep" in name and "kill" in name else 0
        start = next((f[k] for k in ("start", "started_at", "t0", "at")
                      if isinstance(f.get(k), (int, float))), None)
        end = next((f[k] for k in ("heal", "end", "healed_at", "ended_at",
                                   "t1") if isinstance(f.get(k),
                                                       (int, float))), None)
        if start is None:
            continue
        if end is None:
            end = end_default
        out.append((start, end, extra))
    return sorted(out)


def sweep_deadline(expires_at, interval, slack, windows):
    """The latest time the sweeper may take back a seat that lapsed at
    expires_at: one interval plus slack after it, pushed past every fault
    window that began before that deadline and ended after the lapse."""
    deadline = expires_at + interval + slack
    for s, e, extra in windows:
        if s <= deadline and e >= expires_at:
            deadline = max(deadline, e + extra + interval + slack)
    return deadline


def check_leaks(ctx):
    r = Result("6 every leaked seat back")
    interval = ctx.run.interval("release_leaked", 30)
    windows = fault_windows(ctx)
    r.count("excusing fault windows", len(windows))
    for kind, rows, live in (("permit", ctx.permits(), "acquired"),
                             ("hold", ctx.holds(), "held")):
        late = 0
        for row in rows:
            x = row["external_id"]
            if row["state"] == live:
                if row["expires_at"] <= ctx.now:
                    r.fail(f"{kind} still {live} past its TTL",
                           f"{x}: expired at {row['expires_at']}, now "
                           f"{ctx.now}")
                else:
                    r.count(f"{kind}s still live (TTL ahead)")
                continue
            if row["state"] == "expired":
                r.count(f"{kind}s expired")
                # The sweep (or a late call) flips it only once lapsed.
                if row["ended_at"] < row["expires_at"]:
                    r.fail(f"{kind} expired before its TTL",
                           f"{x}: ended {row['ended_at']} < expires "
                           f"{row['expires_at']}")
                dl = sweep_deadline(row["expires_at"], interval, ctx.slack,
                                    windows)
                if row["ended_at"] > dl:
                    late += 1
                    r.fail(f"{kind} swept late",
                           f"{x}: lapsed {row['expires_at']}, swept "
                           f"{row['ended_at']} (+"
                           f"{row['ended_at'] - row['expires_at']} s; "
                           f"allowed until {dl})")
            elif row["state"] == "released":
                # A release needs expires_at > now at the WHERE; SQLite may
                # read the next second in the SET, hence <=.
                if row["ended_at"] > row["expires_at"]:
                    r.fail(f"{kind} released after its TTL",
                           f"{x}: ended {row['ended_at']} > expires "
                           f"{row['expires_at']}")
    return r


# --- 7. every acknowledged redemption present ------------------------------

def check_acknowledged(ctx):
    r = Result("7 every acknowledged redemption present")
    reds = {x["id"]: x for x in ctx.redemptions()}
    by_key = {}
    fresh = defaultdict(list)
    for o in ctx.ops(*REDEEM_OPS):
        if not o.ok:
            continue
        red = o.res.get("redemption")
        if not isinstance(red, dict):
            r.fail("ok answer without a redemption", repr(o))
            continue
        r.count("ok answers")
        rid = red.get("id")
        d = reds.get(rid)
        if d is None:
            r.fail("acknowledged redemption missing from the DB",
                   f"{o!r}: id {rid} {red.get('code')} {red.get('account')}")
            continue
        got = (norm_code(red.get("code")), red.get("account"),
               red.get("campaign"), red.get("seq"),
               rfc3339(red.get("redeemed_at")))
        want = (d["code"], d["account"], d["campaign"], d["seq"],
                d["redeemed_at"])
        if got != want:
            r.fail("answer differs from the DB's redemption",
                   f"{o!r} id {rid}: answer {got}, DB {want}")
        a = o.args or {}
        if o.op == "redeem" and (norm_code(a.get("code")) != got[0] or
                                 canon_account(a.get("account")) !=
                                 canon_account(got[1])):
            r.fail("redemption of another code or account",
                   f"{o!r}: asked {a.get('code')} {a.get('account')}, "
                   f"got {got[0]} {got[1]}")
        if o.op == "pool_claim":
            if norm_code(o.res.get("code")) != got[0]:
                r.fail("pool answer's code is not its redemption's",
                       f"{o!r}: {o.res.get('code')} vs {got[0]}")
            if canon_account(a.get("account")) != canon_account(got[1]):
                r.fail("pool redemption of another account", f"{o!r}")
        key = (got[0], canon_account(got[1]))
        if by_key.setdefault(key, rid) != rid:
            r.fail("two redemption ids for one (code, account)",
                   f"{key}: {by_key[key]} and {rid}")
        if o.res.get("already") is False:
            fresh[rid].append(o)
        else:
            r.count("already")
    for rid, os_ in fresh.items():
        if len(os_) > 1:
            r.fail("one redemption answered fresh twice",
                   f"id {rid}: {os_[:3]}")
    r.count("fresh", len(fresh))
    r.count("DB redemptions", len(reds))
    return r


# --- 8. one webhook event per fresh redemption -----------------------------

def receipt_body(w):
    """The event a receiver line holds: its parsed body."""
    for k in ("json", "body", "event"):
        b = w.get(k)
        if isinstance(b, str):
            try:
                b = json.loads(b)
            except ValueError:
                continue
        if isinstance(b, dict) and "id" in b:
            return b
    return w if "id" in w and "type" in w else None


def check_webhooks(ctx):
    r = Result("8 one webhook event per fresh redemption")
    events = ctx.q("SELECT e.id, e.event_id, e.type, e.redemption_id, "
                   "e.created_at, e.enqueued_at, e.payload FROM events e "
                   "WHERE e.tenant_id = {T}")
    reds = {x["id"] for x in ctx.redemptions()}
    per_red = defaultdict(list)
    for e in events:
        if e["type"] == "code.redeemed":
            per_red[e["redemption_id"]].append(e["event_id"])
    r.count("code.redeemed events", sum(len(v) for v in per_red.values()))
    for rid in reds:
        n = len(per_red.get(rid, []))
        if n != 1:
            r.fail("redemption without exactly one event",
                   f"redemption {rid}: {n} code.redeemed events")
    for rid, evs in per_red.items():
        if rid not in reds:
            r.fail("event without its redemption", f"{evs[0]} -> {rid}")

    url = ctx.run.setup.get("webhook_url") or ctx.run.setup.get("webhook")
    if isinstance(url, dict):
        url = url.get("url")
    eps = ctx.q("SELECT id, url, enabled, created_at FROM webhook_endpoints "
                "WHERE tenant_id = {T}")
    ours = [e for e in eps if url is None or e["url"] == url]
    if url is not None and not ours:
        r.fail("the test's webhook endpoint is not in the DB", url)
    ours_ids = {e["id"] for e in ours}
    dels = ctx.q("SELECT d.id, d.event_id, d.endpoint_id, d.state, "
                 "d.attempts, d.next_attempt_at, d.last_status, "
                 "d.last_error, e.event_id AS event_text FROM "
                 "webhook_deliveries d JOIN events e ON e.id = d.event_id "
                 "WHERE d.tenant_id = {T}")
    deliver = ctx.run.interval("deliver", 1)
    by_event = defaultdict(list)
    states = defaultdict(int)
    later = 0
    for d in dels:
        if d["endpoint_id"] not in ours_ids:
            continue
        by_event[d["event_id"]].append(d)
        states[d["state"]] += 1
        if d["state"] == "pending":
            if d["next_attempt_at"] > ctx.now:
                later += 1
            elif d["next_attempt_at"] < ctx.now - deliver - ctx.slack:
                r.fail("delivery overdue and still pending",
                       f"{d['event_text']}: due {d['next_attempt_at']}, now "
                       f"{ctx.now}, attempts {d['attempts']}, last "
                       f"{d['last_status']} {d['last_error']}")
            else:
                later += 1
    for k, v in sorted(states.items()):
        r.count(f"deliveries {k}", v)
    if later:
        r.warn(f"{later} deliveries pending with a retry scheduled (due "
               f"within {deliver + ctx.slack} s of now or later)")
    if states.get("dead"):
        r.warn(f"{states['dead']} deliveries dead-lettered")
    # Every event the endpoint existed for was fanned out to it.
    for e in events:
        for ep in ours:
            if not ep["enabled"] or ep["created_at"] > e["created_at"]:
                continue
            if not any(d["endpoint_id"] == ep["id"]
                       for d in by_event.get(e["id"], [])):
                if e["created_at"] < ctx.now - deliver - ctx.slack:
                    r.fail("event never fanned out to the endpoint",
                           f"{e['event_id']} ({e['type']}), enqueued_at "
                           f"{e['enqueued_at']}")
    # The receiver's side.
    received = defaultdict(list)
    for w in ctx.run.webhooks:
        b = receipt_body(w)
        if b is None:
            r.warn(f"receiver line without an event: {str(w)[:80]}")
            continue
        received[b.get("id")].append(b)
    r.count("received", sum(len(v) for v in received.values()))
    r.count("duplicates received",
            sum(len(v) - 1 for v in received.values()))
    secret = ctx.run.setup.get("webhook_secret")
    if secret is None and ours:
        secret = ctx.q("SELECT secret FROM webhook_endpoints WHERE id = "
                       f"{int(ours[0]['id'])}")[0]["secret"]
    bad_sig = 0
    for w in ctx.run.webhooks:
        raw = w.get("body")
        hdrs = {str(k).lower(): v for k, v in (w.get("headers") or {}).items()}
        sig = hdrs.get("redeem-signature")
        if secret is None or not isinstance(raw, str) or sig is None:
            continue
        parts = dict(p.split("=", 1) for p in sig.split(",") if "=" in p)
        mac = hmac.new(secret.encode(), f"{parts.get('t')}.{raw}".encode(),
                       hashlib.sha256).hexdigest()
        r.count("signatures checked")
        if not hmac.compare_digest(mac, parts.get("v1", "")):
            bad_sig += 1
            if bad_sig <= SHOW:
                b = receipt_body(w) or {}
                r.fail("bad Redeem-Signature", f"{b.get('id')}")
    by_text = {e["event_id"]: e for e in events}
    for eid, bodies in received.items():
        if len({json.dumps(b, sort_keys=True) for b in bodies}) > 1:
            r.fail("one event id received with different content", eid)
        e = by_text.get(eid)
        if e is None:
            r.fail("received an event the DB does not have", eid)
            continue
        try:
            payload = json.loads(e["payload"])
        except (TypeError, ValueError):
            payload = None
        b = bodies[0]
        if b.get("type") != e["type"] or b.get("data") != payload:
            r.fail("received content differs from the outbox",
                   f"{eid}: type {b.get('type')}/{e['type']}")
    for d in dels:
        if d["endpoint_id"] in ours_ids and d["state"] == "delivered" and \
                d["event_text"] not in received:
            r.fail("delivered but never received", d["event_text"])
    return r


# --- 9. redeemctl verify ---------------------------------------------------

def check_verify(ctx):
    r = Result("9 redeemctl verify clean")
    exe = ctx.redeemctl
    if not os.access(exe, os.X_OK):
        r.fail("no redeemctl", exe)
        return r
    env = dict(os.environ, REDEEM_DB=ctx.db.dsn)
    try:
        p = subprocess.run([exe, "verify"], capture_output=True, text=True,
                           env=env, timeout=600)
    except subprocess.TimeoutExpired:
        r.fail("verify did not finish in 600 s", exe)
        return r
    if p.returncode != 0:
        for line in ((p.stdout or "") + (p.stderr or "")).splitlines():
            if line.strip():
                r.fail(f"verify exited {p.returncode}", line.strip())
    return r


# --- 10. conservation per code ---------------------------------------------

def check_conservation(ctx):
    r = Result("10 conservation per code (split-aware)")
    shards = {}
    if "code_shards" in ctx.db.tables():
        for row in ctx.q("SELECT s.code_id, s.shard, s.uses, s.max_uses FROM "
                         "code_shards s JOIN codes c ON c.id = s.code_id "
                         "WHERE c.tenant_id = {T}"):
            cur = shards.setdefault(row["code_id"], [0, 0])
            cur[0] += row["uses"]
            cur[1] += 1
            if not 0 <= row["uses"] <= row["max_uses"]:
                r.fail("shard uses outside 0..max_uses",
                       f"code {row['code_id']} shard {row['shard']}: "
                       f"{row['uses']}/{row['max_uses']}")
        r.counts["split codes"] = len(shards)
    seats = defaultdict(int)
    dbreds = defaultdict(int)
    for x in ctx.redemptions():
        dbreds[x["code"]] += 1
        if x["reversal_policy"] != "return_seat":
            seats[x["code_id"]] += 1
    for h in ctx.holds():
        if h["state"] == "held":
            seats[h["code_id"]] += 1
    for c in ctx.codes():
        uses = c["uses"] + shards.get(c["id"], [0])[0]
        if uses != seats.get(c["id"], 0):
            r.fail("uses differ from seats held",
                   f"{c['code']}: uses {uses} ({c['uses']} + shards "
                   f"{shards.get(c['id'], [0])[0]}), redemptions and live "
                   f"holds {seats.get(c['id'], 0)}")
        if not 0 <= uses <= c["max_uses"]:
            r.fail("uses outside 0..max_uses",
                   f"{c['code']}: {uses}/{c['max_uses']}")
        r.count("codes")
    setup = {norm_code(s.get("code")): s for s in ctx.run.get("codes", [])}
    codes = {c["code"]: c for c in ctx.codes()}
    for k, s in setup.items():
        c = codes.get(k)
        if c is None:
            r.fail("setup's code missing from the DB", k)
        elif s.get("max_uses") is not None and \
                s["max_uses"] != c["max_uses"]:
            r.warn(f"{k}: max_uses {c['max_uses']} in the DB, "
                   f"{s['max_uses']} in setup.json")
    fresh = defaultdict(set)
    for o in ctx.ops(*REDEEM_OPS):
        if o.ok and o.res.get("already") is False and \
                isinstance(o.res.get("redemption"), dict):
            red = o.res["redemption"]
            fresh[norm_code(red.get("code"))].add(red.get("id"))
    for code, ids in fresh.items():
        if len(ids) > dbreds.get(code, 0):
            r.fail("more fresh answers than DB redemptions",
                   f"{code}: {len(ids)} fresh ok answers, "
                   f"{dbreds.get(code, 0)} redemptions")
    r.count("fresh answers", sum(len(v) for v in fresh.values()))
    return r


# --- main ------------------------------------------------------------------

CHECKERS = [check_capacity, check_fencing, check_external_ids, check_one_way,
            check_all_or_nothing, check_leaks, check_acknowledged,
            check_webhooks, check_verify, check_conservation]


def summarize_run(run):
    ops = run.ops
    by = defaultdict(lambda: defaultdict(int))
    for o in ops:
        by[o.op][o.t if not (o.t == "ok" and not o.ok) else "ok?"] += 1
    print(f"history: {len(ops)} ops in "
          f"{len(glob.glob(os.path.join(run.out, 'history', '*.jsonl')))} "
          f"files; " + "; ".join(
              f"{op} " + " ".join(f"{k} {v}" for k, v in sorted(d.items()))
              for op, d in sorted(by.items(), key=lambda x: str(x[0]))))
    print(f"webhooks received: {len(run.webhooks)}; faults: "
          f"{len(run.faults)}")
    for f in run.faults[:20]:
        print(f"  fault: {json.dumps(f)[:160]}")


def print_notes(run):
    for p in run.problems[:20]:
        print(f"note: {p}")
    if len(run.problems) > 20:
        print(f"note: ... {len(run.problems) - 20} more")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--redeemctl", default="build/redeemctl")
    ap.add_argument("--slack", type=float, default=5.0)
    ap.add_argument("--only", default="",
                    help="comma-separated checker numbers to run")
    args = ap.parse_args(argv)

    run = Run(args.out)
    engine = run.get("engine", "sqlite")
    dsn = run.get("dsn", None)
    print(f"== checking {args.out} ({engine}, {dsn})")
    summarize_run(run)
    db = ctx = None
    try:
        if dsn is None:
            raise RuntimeError("no dsn")
        db = DB(dsn)
        ctx = Ctx(run, db, args.slack, os.path.abspath(args.redeemctl))
    except (RuntimeError, OSError, sqlite3.Error,
            subprocess.SubprocessError) as e:
        print(f"FAIL database: {e}")
    if ctx is None:
        print_notes(run)
        return 1
    only = {int(x) for x in args.only.split(",") if x.strip()}
    results = []
    for n, fn in enumerate(CHECKERS, 1):
        if only and n not in only:
            continue
        t0 = time.time()
        try:
            res = fn(ctx)
        except Exception as e:  # one checker's bug must not hide the rest
            res = Result(f"{n} {fn.__name__}")
            where = traceback.extract_tb(e.__traceback__)[-1]
            res.fail("checker crashed", f"{type(e).__name__}: {e} (line "
                     f"{where.lineno}, {where.name})")
        res.report()
        if time.time() - t0 > 10:
            print(f"     ({time.time() - t0:.1f} s)")
        results.append(res)
    print_notes(run)
    failed = [x.name for x in results if x.verdict() == "FAIL"]
    warned = [x.name for x in results if x.verdict() == "WARN"]
    print(f"== {len(results) - len(failed)}/{len(results)} checkers passed"
          + (f"; FAILED: {', '.join(failed)}" if failed else "")
          + (f"; warnings: {len(warned)}" if warned else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
