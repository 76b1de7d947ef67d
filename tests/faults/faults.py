#!/usr/bin/env python3
"""The fault suite's load generator and nemesis (tests/faults/run.sh
starts the database and the front ends, then this, then the checker).

It creates the tenant's data (campaigns, codes of several sizes, a pool,
semaphores, a webhook to a receiver it runs), forks FAULTS_CLIENTS client
processes that drive a seeded random mix of redemptions, holds, pool
claims and permits through nginx (and some straight through the service
layer with redeemctl), and meanwhile injects one fault at a time, each
bounded and healed: SIGKILL and SIGSTOP of workers, sweepers, clients and
(MariaDB) mariadbd, killed connections, a lock-wait storm on a hot code
row, (SQLite) a storm of worker kills, and the webhook receiver down.
Then it heals everything, lets leases lapse and sweeps and deliveries
finish, and leaves OUT for the checker:

  OUT/setup.json              what was set up (see write_setup)
  OUT/history/client-N.jsonl  every operation: an invoke line, then an
                              ok / fail / unknown line (none if killed)
  OUT/faults.jsonl            every fault with its start and heal time
  OUT/webhooks.jsonl          every delivery the receiver answered

Python 3 standard library only. Seeded: client N uses
random.Random(seed * 1000 + N), the nemesis random.Random(seed).
"""

import argparse
import http.client
import json
import mmap
import os
import random
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from e2elib import proc_info  # noqa: E402
HTTP_TIMEOUT = 10   # seconds; past it the outcome is unknown
CTL_TIMEOUT = 20
MAX_CLIENTS = 4096  # slots in the shared "seats held" table
WINDOW_CODES = [    # (max_uses, how many per window)
    (1, 2), (3, 3), (10, 2), (60, 1),
]
SEMAPHORES = [("sem-a", 2), ("sem-b", 4), ("sem-c", 8)]
SHARED_ACCOUNTS = 30

A = None            # the parsed arguments
SETUP = {}          # what write_setup writes
ENV = dict(os.environ)


def log(msg):
    print(f"faults: {msg}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# ------------------------------------------------------------ the database

def dsn_parts(dsn):
    """(socket, database) of a mysql:// DSN with ?socket=."""
    u = urllib.parse.urlsplit(dsn)
    q = urllib.parse.parse_qs(u.query)
    return q.get("socket", [""])[0], u.path.lstrip("/")


def mysql(sql, timeout=30, database=True):
    """Runs SQL with the mariadb client as root; (rc, stdout)."""
    sock, db = dsn_parts(A.dsn)
    cmd = ["mariadb", "--no-defaults", "-S", sock, "-uroot", "-N", "-B"]
    if database:
        cmd.append(db)
    try:
        p = subprocess.run(cmd + ["-e", sql], capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return -1, "timeout"


def db_scalar(sql):
    """One number from the service's database, or None."""
    try:
        if A.engine == "sqlite":
            path = A.dsn[len("sqlite:"):]
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                  timeout=10)
            try:
                return int(con.execute(sql).fetchone()[0])
            finally:
                con.close()
        rc, out = mysql(sql)
        return int(out.split()[0]) if rc == 0 else None
    except Exception:
        return None


# --------------------------------------------------------------- clients

def http_call(port, method, path, obj, key):
    """(status, parsed JSON or None, error text)."""
    body = json.dumps(obj).encode() if obj is not None else None
    h = {"Accept": "application/json", "Authorization": "Bearer " + key}
    if body is not None:
        h["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection("127.0.0.1", port,
                                      timeout=HTTP_TIMEOUT)
    try:
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        raw = r.read()
    finally:
        conn.close()
    try:
        res = json.loads(raw)
    except ValueError:
        res = None
    err = ""
    if isinstance(res, dict) and res.get("ok") is False:
        err = str(res.get("error", ""))
    elif res is None:
        err = "not JSON: " + raw[:120].decode("utf-8", "replace")
    return r.status, res, err


def classify_http(status, res):
    if status is None:
        return "unknown"
    if 200 <= status < 300 and isinstance(res, dict) and \
            res.get("ok") is True:
        return "ok"
    if 400 <= status < 500 and isinstance(res, dict) and \
            res.get("ok") is False and res.get("error") and \
            res.get("error") != "unavailable":
        return "fail"
    return "unknown"


def ctl_call(args):
    """redeemctl ARGS: (exit status, parsed JSON or None, error text)."""
    p = subprocess.run([os.path.join(A.bin, "redeemctl")] + args,
                       capture_output=True, text=True, timeout=CTL_TIMEOUT,
                       env=ENV, stdin=subprocess.DEVNULL)
    try:
        res = json.loads(p.stdout)
    except ValueError:
        res = None
    if isinstance(res, dict) and res.get("ok") is False:
        err = str(res.get("error", ""))
    else:
        err = p.stderr.strip()[-200:]
    return p.returncode, res, err


def classify_ctl(status, res):
    if status == 0 and isinstance(res, dict) and res.get("ok") is True:
        return "ok"
    if status == 1 and isinstance(res, dict) and res.get("ok") is False \
            and res.get("error") and res.get("error") != "unavailable":
        return "fail"
    return "unknown"


class Client:
    def __init__(self, n, end, seats, mode):
        self.n = n
        self.end = end
        self.seats = seats
        self.mode = mode
        self.rng = random.Random(A.seed * 1000 + n)
        self.fd = os.open(os.path.join(A.out, "history",
                                       f"client-{n}.jsonl"),
                          os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.seq = 0
        self.k = 0
        self.holds = []      # (external_id, body) held, as far as we know
        self.old_holds = []  # confirmed or released: for double releases
        self.permits = []    # (external_id, body)
        self.old_permits = []
        self.key = SETUP["api_key_redeem"]
        self.t0 = SETUP["load_start"]

    def write(self, rec):
        os.write(self.fd, (json.dumps(rec, sort_keys=True) + "\n").encode())

    def publish(self):
        struct.pack_into("i", self.seats, 4 * (self.n % MAX_CLIENTS),
                         len(self.holds) + len(self.permits))

    def op(self, op, args, call, via="http"):
        i = self.seq
        self.seq += 1
        self.write({"c": self.n, "i": i, "t": "invoke", "at": time.time(),
                    "op": op, "args": args})
        status = res = None
        try:
            status, res, err = call()
            t = classify_http(status, res) if via == "http" else \
                classify_ctl(status, res)
        except Exception as e:  # timeouts, refused, reset: unknown
            t, err = "unknown", f"{type(e).__name__}: {e}"
        self.write({"c": self.n, "i": i, "t": t, "at": time.time(),
                    "op": op, "status": status, "res": res, "err": err})
        return t, res

    # ---- choices

    def port(self):
        return self.rng.choice(SETUP["ports"])

    def account(self):
        if self.rng.random() < (0.05 if self.mode == "race" else 0.4):
            return f"u{self.rng.randrange(SHARED_ACCOUNTS)}@faults.test"
        self.k += 1
        return f"c{self.n}-{self.k}@faults.test"

    def code(self):
        codes = SETUP["codes"]
        w = int((time.time() - self.t0) // SETUP["window_seconds"])
        if self.mode == "race":  # every client on the same few codes
            big = [c for c in codes if c["max_uses"] >= 10 and
                   c["window"] in (w, None)]
            return self.rng.choice(big)["text"]
        r = self.rng.random()
        if r < 0.1:
            return self.rng.choice(
                [c for c in codes if c["campaign"] == "budget"])["text"]
        if r < 0.8:
            cur = [c for c in codes if c.get("window") == w]
            if cur:
                return self.rng.choice(cur)["text"]
        return self.rng.choice(codes)["text"]

    def ttl(self):
        return self.rng.randint(*SETUP["ttl_range"])

    # ---- operations

    def redeem(self):
        code, acct = self.code(), self.account()
        if self.rng.random() < 0.12 and self.mode != "race":
            self.op("redeem", {"code": code, "account": acct, "via": "svc",
                               "port": None},
                    lambda: ctl_call(["redeem", code, acct]), via="svc")
            return
        port = self.port()
        self.op("redeem", {"code": code, "account": acct, "via": "http",
                           "port": port},
                lambda: http_call(port, "POST", "/api/v1/redeem",
                                  {"code": code, "account": acct},
                                  self.key))

    def pool_claim(self):
        camp, acct = SETUP["pool"]["campaign"], self.account()
        if self.rng.random() < 0.2:
            self.op("pool_claim", {"campaign": camp, "account": acct,
                                   "via": "svc", "port": None},
                    lambda: ctl_call(["pool", "claim", camp, acct]),
                    via="svc")
            return
        port = self.port()
        self.op("pool_claim", {"campaign": camp, "account": acct,
                               "via": "http", "port": port},
                lambda: http_call(port, "POST",
                                  f"/api/v1/pools/{camp}/claim",
                                  {"account": acct}, self.key))

    def hold(self, retry=None):
        if retry is None:
            body = {"code": self.code(), "account": self.account(),
                    "external_id": f"h{A.seed}-{self.n}-{self.seq}",
                    "ttl_seconds": self.ttl()}
        else:
            body = retry
        port = self.port()
        t, res = self.op("hold", {"code": body["code"],
                                  "account": body["account"],
                                  "external_id": body["external_id"],
                                  "ttl": body["ttl_seconds"], "port": port},
                         lambda: http_call(port, "POST", "/api/v1/holds",
                                           body, self.key))
        if retry is None and t != "fail":
            self.holds.append((body["external_id"], body))

    def hold_end(self, verb):
        ext, body = self.holds.pop(self.rng.randrange(len(self.holds)))
        port = self.port()
        op = "hold_confirm" if verb == "confirm" else "hold_release"
        self.op(op, {"external_id": ext, "port": port},
                lambda: http_call(port, "POST", "/api/v1/holds/"
                                  + urllib.parse.quote(ext, safe="")
                                  + "/" + verb, None, self.key))
        self.old_holds.append((ext, body))
        del self.old_holds[:-20]

    def hold_again(self):
        ext, body = self.rng.choice(self.old_holds)
        if self.rng.random() < 0.5:  # a retry of the create, same body
            return self.hold(retry=body)
        port = self.port()
        self.op("hold_release", {"external_id": ext, "port": port},
                lambda: http_call(port, "POST", "/api/v1/holds/"
                                  + urllib.parse.quote(ext, safe="")
                                  + "/release", None, self.key))

    def acquire(self, retry=None):
        if retry is None:
            k = self.rng.choice([1, 1, 1, 2, 2, 3])
            sems = [{"name": s, "count": self.rng.choice([1, 1, 2])}
                    for s, _ in self.rng.sample(SEMAPHORES, k)]
            body = {"external_id": f"p{A.seed}-{self.n}-{self.seq}",
                    "owner": f"client-{self.n}", "ttl_seconds": self.ttl(),
                    "semaphores": sems}
        else:
            body = retry
        port = self.port()
        t, res = self.op("acquire", {"external_id": body["external_id"],
                                     "owner": body["owner"],
                                     "ttl": body["ttl_seconds"],
                                     "semaphores": body["semaphores"],
                                     "port": port},
                         lambda: http_call(port, "POST", "/api/v1/permits",
                                           body, self.key))
        if retry is None and t != "fail":
            self.permits.append((body["external_id"], body))

    def heartbeat(self):
        idx = self.rng.randrange(len(self.permits))
        ext, _ = self.permits[idx]
        ttl, port = self.ttl(), self.port()
        t, res = self.op("heartbeat", {"external_id": ext, "ttl": ttl,
                                       "port": port},
                         lambda: http_call(port, "POST", "/api/v1/permits/"
                                           + urllib.parse.quote(ext, safe="")
                                           + "/heartbeat",
                                           {"ttl_seconds": ttl}, self.key))
        if t == "fail":  # lost the lease: expired (or never had it)
            self.old_permits.append(self.permits.pop(idx))

    def permit_release(self, old=False):
        if old:
            ext, body = self.rng.choice(self.old_permits)
        else:
            ext, body = self.permits.pop(self.rng.randrange(
                len(self.permits)))
            self.old_permits.append((ext, body))
            del self.old_permits[:-20]
        port = self.port()
        self.op("permit_release", {"external_id": ext, "port": port},
                lambda: http_call(port, "POST", "/api/v1/permits/"
                                  + urllib.parse.quote(ext, safe="")
                                  + "/release", None, self.key))

    def forget(self):
        """Walks away from a lease: it leaks until the sweeper takes it."""
        if self.holds and self.rng.random() < 0.5:
            self.holds.pop(self.rng.randrange(len(self.holds)))
        elif self.permits:
            self.permits.pop(self.rng.randrange(len(self.permits)))

    def step(self):
        if self.mode == "race":
            return self.redeem()
        choices = [(self.redeem, 30), (self.pool_claim, 6), (self.hold, 12),
                   (self.acquire, 10)]
        if self.holds:
            choices += [(lambda: self.hold_end("confirm"), 6),
                        (lambda: self.hold_end("release"), 6)]
        if self.old_holds:
            choices.append((self.hold_again, 4))
        if self.permits:
            choices += [(self.heartbeat, 6), (self.permit_release, 6),
                        (lambda: self.acquire(
                            retry=self.rng.choice(self.permits)[1]), 2)]
        if self.old_permits:
            choices.append((lambda: self.permit_release(old=True), 2))
        if self.holds or self.permits:
            choices.append((self.forget, 2))
        total = sum(w for _, w in choices)
        x = self.rng.uniform(0, total)
        for fn, w in choices:
            x -= w
            if x <= 0:
                return fn()
        return choices[-1][0]()

    def run(self):
        while time.time() < self.end:
            self.step()
            self.publish()
            if self.mode != "race":
                time.sleep(self.rng.uniform(0, 0.05))


def spawn_client(n, end, seats, mode):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            Client(n, end, seats, mode).run()
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    return pid


# ----------------------------------------------------------- processes

def procs():
    """{pid: (ppid, comm, cmdline, state)} of every process we can read."""
    out = {}
    for d in os.listdir("/proc"):
        p = proc_info(int(d)) if d.isdigit() else None
        if p is not None:
            out[p["pid"]] = (p["ppid"], p["comm"], p["cmd"], p["state"])
    return out


def workers():
    """Our FastCGI workers: redeem-fcgi children of a redeem-fcgi master
    that serves one of our state directories."""
    ps = procs()
    socks = [os.path.join(v, "run", "fcgi.sock") for v in A.var]
    masters = {p for p, (pp, comm, cmd, _) in ps.items()
               if comm == "redeem-fcgi" and any(s in cmd for s in socks)
               and ps.get(pp, (0, ""))[1] != "redeem-fcgi"}
    return sorted(p for p, (pp, comm, _, st) in ps.items()
                  if pp in masters and comm == "redeem-fcgi" and st != "Z")


def serve_sweepers():
    ps = procs()
    return sorted(p for p, (pp, comm, _, _) in ps.items()
                  if comm == "redeem-sweep" and pp in A.serve_pids)


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


class Service:
    """What the nemesis starts and restarts itself: the webhook receiver
    and a sweeper of its own (serve.sh ends the whole front end when its
    sweeper dies, so that one is only ever stopped, never killed)."""

    def __init__(self):
        self.receiver = None
        self.sweeper = None
        self.stopped = set()   # pids under SIGSTOP, for the final heal

    def start_receiver(self):
        self.receiver = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "receiver.py"),
             str(SETUP["webhook_port"]), SETUP["webhook_log"]],
            stdin=subprocess.DEVNULL, start_new_session=True)
        for _ in range(100):
            try:
                socket.create_connection(
                    ("127.0.0.1", SETUP["webhook_port"]), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)

    def stop_receiver(self):
        if self.receiver is not None:
            self.receiver.kill()
            self.receiver.wait()
            self.receiver = None

    def start_sweeper(self):
        logf = open(os.path.join(A.out, "sweep-nemesis.log"), "ab")
        self.sweeper = subprocess.Popen(
            [os.path.join(A.bin, "redeem-sweep")], env=ENV,
            stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
            start_new_session=True)
        logf.close()

    def stop_sweeper(self, sig=signal.SIGTERM):
        if self.sweeper is not None:
            self.sweeper.send_signal(sig)
            try:
                self.sweeper.wait(15)
            except subprocess.TimeoutExpired:
                self.sweeper.kill()
                self.sweeper.wait()
            self.sweeper = None

    def stop(self, pid):
        os.kill(pid, signal.SIGSTOP)
        self.stopped.add(pid)

    def cont(self, pid):
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
        self.stopped.discard(pid)

    # ---- MariaDB

    def mariadb_pid(self):
        for f in ("mysqld.pid", "server.pid"):
            try:
                with open(os.path.join(A.mariadb_dir, f)) as fh:
                    pid = int(fh.read().strip())
                with open(f"/proc/{pid}/comm") as fh:
                    if fh.read().strip() == "mariadbd":
                        return pid
            except (OSError, ValueError):
                continue
        return None

    def mariadb_ping(self):
        sock, _ = dsn_parts(A.dsn)
        return subprocess.run(
            ["mariadb-admin", "--no-defaults", "-S", sock, "-uroot",
             "ping"], capture_output=True).returncode == 0

    def mariadb_tune(self):
        """Lock waits give up after 2 s (the storm outlasts them);
        commits are durable: a SIGKILL of mariadbd keeps every
        acknowledged transaction."""
        return mysql("SET GLOBAL innodb_lock_wait_timeout = 2; "
                     "SET GLOBAL innodb_flush_log_at_trx_commit = 1",
                     database=False)

    def mariadb_start(self):
        """Restarts mariadbd with the command line tests/mariadb.sh gave
        it, on the same data directory."""
        logf = open(os.path.join(A.mariadb_dir, "mysqld.out"), "ab")
        p = subprocess.Popen(SETUP["mariadbd_cmdline"], stdin=subprocess.DEVNULL,
                             stdout=logf, stderr=logf, start_new_session=True)
        logf.close()
        with open(os.path.join(A.mariadb_dir, "server.pid"), "w") as f:
            f.write(f"{p.pid}\n")
        for _ in range(600):
            if self.mariadb_ping():
                self.mariadb_tune()
                return True
            if p.poll() is not None:
                return False
            time.sleep(0.1)
        return False

    def heal(self):
        for pid in list(self.stopped):
            self.cont(pid)
        if self.receiver is None or self.receiver.poll() is not None:
            self.start_receiver()
        if self.sweeper is None or self.sweeper.poll() is not None:
            self.start_sweeper()
        if A.engine == "mariadb" and not self.mariadb_ping():
            pid = self.mariadb_pid()
            if pid is None:
                for _ in range(3):
                    if self.mariadb_start():
                        break


# -------------------------------------------------------------- nemesis

class Nemesis:
    def __init__(self, svc, clients, end, seats, mode):
        self.svc = svc
        self.clients = clients      # pid -> client number
        self.next_client = max(clients.values()) + 1
        self.end = end
        self.seats = seats
        self.mode = mode
        self.rng = random.Random(A.seed)
        self.fd = os.open(os.path.join(A.out, "faults.jsonl"),
                          os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    # Faults that can hold up the sweeper's jobs (it waits on the same
    # database); "blocks" names them so a checker widens its deadlines.
    BLOCKS = {"sweeper_kill": ["sweeper"], "sweeper_stop": ["sweeper"],
              "db_kill": ["database", "sweeper"],
              "db_stop": ["database", "sweeper"],
              "kill_connections": ["database"],
              "lock_storm": ["database"]}

    def record(self, fault, start, **kw):
        rec = {"fault": fault, "start": start, "heal": time.time()}
        blocks = self.BLOCKS.get(fault)
        if A.engine == "sqlite" and fault in ("worker_stop",
                                              "worker_kill_storm"):
            # A stopped worker may hold SQLite's write lock.
            blocks = ["database", "sweeper"]
        if blocks:
            rec["blocks"] = blocks
        rec.update(kw)
        os.write(self.fd, (json.dumps(rec, sort_keys=True) + "\n").encode())
        log(f"fault {fault} {kw} ({rec['heal'] - start:.1f} s)")

    def sleep(self, s):
        """Sleeps, replacing any client that died meanwhile."""
        t_end = time.time() + s
        while True:
            self.reap()
            left = t_end - time.time()
            if left <= 0:
                return
            time.sleep(min(left, 0.2))

    def reap(self):
        """Only our clients: the Popen children are waited by Popen."""
        for pid in list(self.clients):
            try:
                got, st = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                got, st = pid, 0
            if got == 0:
                continue
            n = self.clients.pop(pid)
            if st != 0:
                log(f"client {n} (pid {pid}) ended with status {st}")
            if time.time() < self.end - 1:
                self.respawn(n, st)

    def respawn(self, n, st):
        struct.pack_into("i", self.seats, 4 * (n % MAX_CLIENTS), 0)
        m = self.next_client
        self.next_client += 1
        self.clients[spawn_client(m, self.end, self.seats, self.mode)] = m
        return m

    # ---- the faults: each returns when healed

    def f_worker_kill(self):
        ws = workers()
        if ws:
            t, w = time.time(), self.rng.choice(ws)
            os.kill(w, signal.SIGKILL)
            self.sleep(0.5)
            self.record("worker_kill", t, pid=w)

    def f_worker_stop(self):
        ws = workers()
        if ws:
            t, w, d = time.time(), self.rng.choice(ws), self.rng.uniform(2, 5)
            self.svc.stop(w)
            self.sleep(d)
            self.svc.cont(w)
            self.record("worker_stop", t, pid=w, seconds=round(d, 1))

    def f_worker_kill_storm(self):
        """SQLite: workers killed every 50-250 ms for a few seconds, so
        some die inside a commit."""
        t, d, n = time.time(), self.rng.uniform(3, 6), 0
        while time.time() < t + d:
            ws = workers()
            if ws:
                os.kill(self.rng.choice(ws), signal.SIGKILL)
                n += 1
            self.sleep(self.rng.uniform(0.05, 0.25))
        self.record("worker_kill_storm", t, kills=n, seconds=round(d, 1))

    def f_sweeper_kill(self):
        t = time.time()
        pid = self.svc.sweeper.pid if self.svc.sweeper else None
        self.svc.stop_sweeper(signal.SIGKILL)
        d = self.rng.uniform(1, 4)
        self.sleep(d)
        self.svc.start_sweeper()
        self.record("sweeper_kill", t, pid=pid, down=round(d, 1))

    def f_sweeper_stop(self):
        ps = serve_sweepers()
        if self.svc.sweeper:
            ps.append(self.svc.sweeper.pid)
        if ps:
            t, p, d = time.time(), self.rng.choice(ps), self.rng.uniform(2, 8)
            self.svc.stop(p)
            self.sleep(d)
            self.svc.cont(p)
            self.record("sweeper_stop", t, pid=p, seconds=round(d, 1))

    def seat_holder(self):
        held = [(pid, n) for pid, n in self.clients.items()
                if struct.unpack_from("i", self.seats,
                                      4 * (n % MAX_CLIENTS))[0] > 0]
        return self.rng.choice(held or list(self.clients.items()))

    def f_client_kill(self):
        if not self.clients:
            return
        t, (pid, n) = time.time(), self.seat_holder()
        held = struct.unpack_from("i", self.seats, 4 * (n % MAX_CLIENTS))[0]
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        del self.clients[pid]
        m = self.respawn(n, None)
        self.record("client_kill", t, client=n, leases=held,
                    replaced_by=m)

    def f_client_stop(self):
        if not self.clients:
            return
        t, (pid, n) = time.time(), self.seat_holder()
        d = self.rng.uniform(2, 9)
        self.svc.stop(pid)
        self.sleep(d)
        self.svc.cont(pid)
        self.record("client_stop", t, client=n, seconds=round(d, 1))

    def f_receiver_down(self):
        t, d = time.time(), self.rng.uniform(5, 15)
        self.svc.stop_receiver()
        self.sleep(d)
        self.svc.start_receiver()
        self.record("receiver_down", t, seconds=round(d, 1))

    def f_db_kill(self):
        pid = self.svc.mariadb_pid()
        if pid is None:
            return
        t = time.time()
        os.kill(pid, signal.SIGKILL)
        while alive(pid) and time.time() < t + 10:
            time.sleep(0.05)
        d = self.rng.uniform(0.5, 3)
        self.sleep(d)
        ok = False
        for _ in range(3):
            if self.svc.mariadb_start():
                ok = True
                break
        self.record("db_kill", t, pid=pid, down=round(d, 1), restarted=ok)

    def f_db_stop(self):
        pid = self.svc.mariadb_pid()
        if pid is None:
            return
        t, d = time.time(), self.rng.uniform(2, 5)
        self.svc.stop(pid)
        self.sleep(d)
        self.svc.cont(pid)
        self.record("db_stop", t, pid=pid, seconds=round(d, 1))

    def f_kill_connections(self):
        t = time.time()
        _, db = dsn_parts(A.dsn)
        rc, out = mysql("SELECT id FROM information_schema.processlist "
                        f"WHERE db = '{db}' AND id <> CONNECTION_ID() "
                        "AND command <> 'Daemon'", database=False)
        ids = [int(x) for x in out.split() if x.isdigit()] if rc == 0 else []
        victims = self.rng.sample(ids, max(1, len(ids) // 2)) if ids else []
        if victims:
            mysql("; ".join(f"KILL CONNECTION {i}" for i in victims),
                  database=False)
        self.record("kill_connections", t, killed=len(victims),
                    of=len(ids))

    def hot_code(self):
        w = int((time.time() - SETUP["load_start"])
                // SETUP["window_seconds"])
        hot = [c for c in SETUP["codes"] if c.get("window") == w
               and c["max_uses"] >= 10] or \
            [c for c in SETUP["codes"] if c["max_uses"] >= 10]
        return self.rng.choice(hot)["text"]

    def f_lock_storm(self):
        """A session holds a hot code's row lock longer than
        innodb_lock_wait_timeout (2 s): claims on it time out."""
        text = self.hot_code()
        d = self.rng.randint(3, 6)
        # A code split over counter rows (REDEEM_SPLIT_MIN_USES) is
        # claimed on those: they are locked too, when the table exists.
        rc, out = mysql("SHOW TABLES LIKE 'code_shards'")
        shards = "code_shards" in out
        t = time.time()
        sql = ("BEGIN; SELECT id FROM codes WHERE display = "
               f"'{text}' OR code = '{text}' FOR UPDATE; ")
        if shards:
            sql += ("SELECT COUNT(*) FROM code_shards WHERE code_id IN "
                    "(SELECT id FROM codes WHERE display = "
                    f"'{text}' OR code = '{text}') FOR UPDATE; ")
        rc, out = mysql(sql + f"SELECT SLEEP({d}); ROLLBACK", timeout=d + 30)
        self.record("lock_storm", t, code=text, seconds=d, rc=rc,
                    shards=shards)

    def choose(self):
        left = self.end - time.time()
        fs = [(self.f_worker_kill, 4), (self.f_worker_stop, 3),
              (self.f_sweeper_kill, 2), (self.f_sweeper_stop, 2),
              (self.f_client_kill, 3), (self.f_client_stop, 2)]
        # A receiver down late would leave deliveries waiting for their
        # 30 s or 2 min retry past the settle time.
        if left > 40:
            fs.append((self.f_receiver_down, 2))
        if A.engine == "sqlite":
            fs.append((self.f_worker_kill_storm, 3))
        else:
            fs += [(self.f_db_kill, 2), (self.f_db_stop, 2),
                   (self.f_kill_connections, 3), (self.f_lock_storm, 3)]
        total = sum(w for _, w in fs)
        x = self.rng.uniform(0, total)
        for fn, w in fs:
            x -= w
            if x <= 0:
                return fn
        return fs[-1][0]

    def run(self):
        while time.time() < self.end:
            self.sleep(self.rng.uniform(1, 4))
            if self.mode == "race" or time.time() >= self.end - 2:
                continue
            fn = self.choose()
            try:
                fn()
            except Exception as e:
                log(f"fault {fn.__name__} failed: {type(e).__name__}: {e}")
            self.svc.heal()


# ---------------------------------------------------------------- setup

def ctl(*args):
    p = subprocess.run([os.path.join(A.bin, "redeemctl")] + list(args),
                       capture_output=True, text=True, env=ENV, timeout=120)
    if p.returncode != 0:
        raise SystemExit(f"faults: redeemctl {' '.join(args)}: "
                         f"exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def admin(method, path, obj):
    st, res, err = http_call(SETUP["ports"][0], method, path, obj,
                             SETUP["api_key_admin"])
    if not (200 <= st < 300 and isinstance(res, dict) and res.get("ok")):
        raise SystemExit(f"faults: {method} {path}: {st} {res}")
    return res


def setup():
    windows = SETUP["windows"]
    SETUP["api_key_admin"] = ctl("apikey", "create", "--tenant", "default",
                                 "--scope", "admin").strip()
    SETUP["api_key_redeem"] = ctl("apikey", "create", "--tenant", "default",
                                  "--scope", "redeem").strip()
    ctl("campaign", "create", "--name", "hot")
    budget = 40 + A.seconds // 5
    ctl("campaign", "create", "--name", "budget", "--budget", str(budget))
    ctl("campaign", "create", "--name", "pool", "--kind", "pool")
    codes = []
    for max_uses, per in WINDOW_CODES:
        out = ctl("codes", "generate", "--campaign", "hot", "--count",
                  str(per * windows), "--max-uses", str(max_uses)).split()
        for i, text in enumerate(out):
            codes.append({"text": text, "code": text,
                          "max_uses": max_uses, "campaign": "hot",
                          "window": i // per})
    for text in ctl("codes", "generate", "--campaign", "budget", "--count",
                    "4", "--max-uses", "20").split():
        codes.append({"text": text, "code": text, "max_uses": 20,
                      "campaign": "budget", "window": None})
    pool = ctl("codes", "generate", "--campaign", "pool", "--count",
               str(60 + 2 * A.seconds), "--max-uses", "1").split()
    SETUP["codes"] = codes
    SETUP["campaigns"] = [{"name": "hot", "kind": "shared", "budget": None},
                          {"name": "budget", "kind": "shared",
                           "budget": budget},
                          {"name": "pool", "kind": "pool", "budget": None}]
    SETUP["pool"] = {"campaign": "pool", "codes": pool}
    SETUP["semaphores"] = [{"name": n, "capacity": c}
                           for n, c in SEMAPHORES]
    for n, c in SEMAPHORES:
        admin("PUT", f"/api/v1/semaphores/{n}", {"capacity": c})
    hook = admin("POST", "/api/v1/webhooks",
                 {"url": SETUP["webhook_url"]})["webhook"]
    SETUP["webhook_secret"] = hook.get("secret")
    SETUP["webhook_id"] = hook.get("id")


def write_setup():
    tmp = os.path.join(A.out, "setup.json.tmp")
    with open(tmp, "w") as f:
        json.dump(SETUP, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(A.out, "setup.json"))


def settle(svc):
    """One TTL, two sweep intervals and a sweeper lease (a killed
    sweeper's job is free again after it), then the due webhook
    deliveries, for at most a minute more."""
    wait = SETUP["ttl_range"][1] + 2 * SETUP["sweep"]["release_leaked"] \
        + SETUP["sweep"]["lease"] + 1
    if A.mode == "race":  # redemptions only: no lease to lapse
        wait = 0
    log(f"settling: {wait} s, then pending webhook deliveries")
    time.sleep(wait)
    t_end = time.time() + 60
    while time.time() < t_end:
        n = db_scalar("SELECT COUNT(*) FROM webhook_deliveries "
                      "WHERE state = 'pending'")
        if n == 0:
            break
        time.sleep(1)
    else:
        log(f"deliveries still pending after settling: {n}")
    SETUP["pending_deliveries_after_settle"] = n


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--engine", choices=["sqlite", "mariadb"],
                    required=True)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ports", required=True)
    ap.add_argument("--var", required=True, help="state dirs, comma list")
    ap.add_argument("--serve-pids", required=True)
    ap.add_argument("--mariadb-dir", default="")
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--mode", choices=["faults", "race"], default="faults")
    A = ap.parse_args()
    A.var = A.var.split(",")
    A.serve_pids = {int(p) for p in A.serve_pids.split(",")}
    os.makedirs(os.path.join(A.out, "history"), exist_ok=True)

    win = 30 if A.seconds >= 120 else 15
    wport = free_port()
    SETUP.update({
        "engine": A.engine, "dsn": A.dsn, "bin": A.bin, "mode": A.mode,
        "ports": [int(p) for p in A.ports.split(",")], "tenant": "default",
        "seed": A.seed, "seconds": A.seconds, "clients": A.clients,
        "window_seconds": win, "windows": A.seconds // win + 2,
        "ttl_range": [3, 6],
        "sweep": {"release_leaked": int(ENV["REDEEM_SWEEP_RELEASE_LEAKED"]),
                  "deliver": int(ENV["REDEEM_SWEEP_DELIVER"]),
                  "lease": int(ENV["REDEEM_SWEEP_LEASE"]),
                  "batch": int(ENV.get("REDEEM_SWEEP_BATCH", "800"))},
        "sweep_lease": int(ENV["REDEEM_SWEEP_LEASE"]),
        "split_min_uses": int(ENV["REDEEM_SPLIT_MIN_USES"]),
        "webhook_port": wport,
        "webhook_url": f"http://127.0.0.1:{wport}/hook",
        "webhook_log": os.path.join(A.out, "webhooks.jsonl"),
        "history_dir": os.path.join(A.out, "history"),
        "faults_log": os.path.join(A.out, "faults.jsonl"),
        "mariadb_dir": A.mariadb_dir or None,
    })
    svc = Service()
    nem = None

    def on_signal(sig, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    try:
        nem = run(svc)
    except BaseException as e:
        # Interrupted or broken: nothing of ours may outlive us (the
        # clients would go on until the deadline, the receiver and the
        # sweeper for ever).
        log("stopping early: killing clients, receiver and sweeper")
        if nem is None:
            nem = RUNNING[0] if RUNNING else None
        if nem is not None:
            nem.end = 0  # no more respawns
            for pid in list(nem.clients):
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass
        for pid in list(svc.stopped):
            svc.cont(pid)
        svc.stop_sweeper(signal.SIGKILL)
        svc.stop_receiver()
        if isinstance(e, KeyboardInterrupt):
            sys.exit(130)
        raise


RUNNING = []


def run(svc):
    if A.engine == "mariadb":
        pid = svc.mariadb_pid()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            SETUP["mariadbd_cmdline"] = [
                a.decode() for a in f.read().split(b"\0") if a]
        svc.mariadb_tune()
    # The receiver first: the webhook's first deliveries find it up.
    open(SETUP["webhook_log"], "a").close()
    svc.start_receiver()
    setup()
    svc.start_sweeper()

    seats = mmap.mmap(-1, 4 * MAX_CLIENTS)
    SETUP["load_start"] = time.time()
    end = SETUP["load_start"] + A.seconds
    SETUP["load_end_planned"] = end
    write_setup()
    log(f"seed {A.seed}: {A.clients} clients for {A.seconds} s on "
        f"{A.engine} ({A.mode}), ports {SETUP['ports']}")
    clients = {}
    for n in range(A.clients):
        clients[spawn_client(n, end, seats, A.mode)] = n
    nem = Nemesis(svc, clients, end, seats, A.mode)
    RUNNING.append(nem)
    nem.run()  # an interruption goes to main's clean-up
    svc.heal()
    # Clients stop by themselves at the deadline (after their current
    # call, at most HTTP_TIMEOUT or CTL_TIMEOUT later).
    t = time.time()
    while nem.clients and time.time() < t + CTL_TIMEOUT + 10:
        nem.reap()
        time.sleep(0.1)
    for pid in list(nem.clients):
        log(f"client pid {pid} still running; killed")
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        del nem.clients[pid]
    SETUP["load_end"] = SETUP["end"] = time.time()
    SETUP["clients_total"] = nem.next_client
    write_setup()
    svc.heal()
    settle(svc)
    SETUP["settled"] = time.time()
    write_setup()
    svc.stop_sweeper()
    svc.stop_receiver()
    ops = 0
    for name in os.listdir(os.path.join(A.out, "history")):
        with open(os.path.join(A.out, "history", name)) as f:
            ops += sum(1 for line in f if '"t": "invoke"' in line)
    with open(os.path.join(A.out, "faults.jsonl")) as f:
        nf = sum(1 for _ in f)
    log(f"{ops} operations by {nem.next_client} clients, {nf} faults")
    return nem


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    main()
