"""Helpers shared by the end-to-end tests: HTTP with a timeout on every
call, raw sockets for requests http.client refuses to send, JSON error
checks, a tiny HTML tree, fixtures through redeemctl, and the ok/FAIL
report that tests/e2e/run.sh counts.

Python 3 standard library only.
"""

import http.client
import html.parser
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse

TIMEOUT = 20  # seconds, for any single HTTP exchange

BASE = os.environ.get("E2E_BASE", "http://127.0.0.1:8080/")
ADMIN_KEY = os.environ.get("E2E_ADMIN_KEY", "")
REDEEM_KEY = os.environ.get("E2E_REDEEM_KEY", "")
BIN = os.environ.get("E2E_BIN", "build")
RUN = secrets.token_hex(3)  # keeps names unique even on a reused database

_u = urllib.parse.urlsplit(BASE)
HOST = _u.hostname or "127.0.0.1"
PORT = _u.port or 80

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def configure(base):
    """Points the helpers at another base URL (argv wins over env)."""
    global BASE, HOST, PORT
    BASE = base
    u = urllib.parse.urlsplit(base)
    HOST = u.hostname or "127.0.0.1"
    PORT = u.port or 80


# ---------------------------------------------------------------- report

class Failure(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Failure(msg)


_lock = threading.Lock()
counts = {"ok": 0, "fail": 0}


def report(ok, name, why=""):
    with _lock:
        if ok:
            counts["ok"] += 1
            print(f"ok   {name}", flush=True)
        else:
            counts["fail"] += 1
            print(f"FAIL {name}: {why}", flush=True)


def run(name, fn, *args):
    """Runs one named check; any exception is its failure, not the run's."""
    t0 = time.monotonic()
    try:
        fn(*args)
    except Failure as e:
        report(False, name, str(e))
        return False
    except Exception as e:  # a crash of the check itself, e.g. a timeout
        tb = traceback.format_exc(limit=3).strip().splitlines()
        report(False, name, f"{type(e).__name__}: {e} [{' | '.join(tb[-3:])}]")
        return False
    dt = time.monotonic() - t0
    report(True, name + (f" ({dt:.1f} s)" if dt >= 2 else ""))
    return True


def finish():
    print(f"{counts['ok']} passed, {counts['fail']} failed", flush=True)
    sys.exit(0 if counts["fail"] == 0 else 1)


def main(fixtures, make_world, tests, module):
    """A test script's main: configures from argv[1], runs the named
    fixtures check (make_world's result becomes module's W), then each
    (name, fn) of tests that E2E_ONLY (comma-separated parts of names)
    selects, then finishes."""
    if len(sys.argv) > 1:
        configure(sys.argv[1])
    only = [s for s in os.environ.get("E2E_ONLY", "").split(",") if s]

    def make():
        module.W = make_world()
    run(fixtures, make)
    for name, fn in tests:
        if only and not any(o in fn.__name__ or o in name for o in only):
            continue
        run(name, fn)
    finish()


def short(b, n=300):
    if isinstance(b, bytes):
        b = b.decode("utf-8", "replace")
    b = str(b)
    return b if len(b) <= n else b[:n] + f"...({len(b)} chars)"


# ------------------------------------------------------------------ HTTP

class Resp:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # http.client.HTTPMessage: case-insensitive
        self.body = body

    def header(self, name, default=None):
        return self.headers.get(name, default)

    def text(self):
        return self.body.decode("utf-8", "replace")

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError as e:
            raise Failure(f"status {self.status}: body is not JSON ({e}): "
                          f"{short(self.body)}")

    def __repr__(self):
        return f"<{self.status} {short(self.body, 200)}>"


def _read(conn):
    r = conn.getresponse()
    body = r.read()
    return Resp(r.status, r.msg, body)


def request(method, path, body=None, headers=None, timeout=TIMEOUT):
    if isinstance(body, str):
        body = body.encode()
    h = dict(headers or {})
    conn = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=h)
        return _read(conn)
    finally:
        conn.close()


def api(method, path, obj=None, key=None, raw=None, headers=None,
        timeout=TIMEOUT):
    """A JSON API call. key None means the admin key; "" sends none."""
    if key is None:
        key = ADMIN_KEY
    h = {"Accept": "application/json"}
    if key:
        h["Authorization"] = "Bearer " + key
    body = raw
    if obj is not None:
        body = json.dumps(obj).encode()
    if body is not None:
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    return request(method, path, body, h, timeout)


def raw_request(data, timeout=TIMEOUT, send_errors_ok=True):
    """Sends bytes as they are and parses the answer. A server that answers
    early (413) may reset the connection while we still send; then the
    answer is read if it is there."""
    s = socket.create_connection((HOST, PORT), timeout=timeout)
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            if not send_errors_ok:
                raise
        r = http.client.HTTPResponse(s, method="GET")
        r.begin()
        body = r.read()
        return Resp(r.status, r.msg, body)
    finally:
        s.close()


def path_q(path, **q):
    return path + ("?" + urllib.parse.urlencode(q) if q else "")


def qcode(code):
    return urllib.parse.quote(code, safe="")


# ----------------------------------------------------- response checks

def expect_status(r, status, what=""):
    expect(r.status == status,
           f"{what + ': ' if what else ''}status {r.status}, want {status}: "
           f"{short(r.body)}")


def expect_json_ok(r, status=200, what=""):
    expect_status(r, status, what)
    ct = r.header("Content-Type", "")
    expect(ct.startswith("application/json"),
           f"{what}: Content-Type {ct!r}, want application/json")
    j = r.json()
    expect(isinstance(j, dict) and j.get("ok") is True,
           f"{what}: body has not ok=true: {short(r.body)}")
    return j


def expect_error(r, status, word, what=""):
    """The contract's error shape: {"ok": false, "error": word,
    "detail": "<human sentence>"} with the status of the table."""
    p = what + ": " if what else ""
    expect(r.status == status,
           f"{p}status {r.status}, want {status} {word}: {short(r.body)}")
    ct = r.header("Content-Type", "")
    expect(ct.startswith("application/json"),
           f"{p}Content-Type {ct!r}, want application/json: {short(r.body)}")
    j = r.json()
    expect(isinstance(j, dict), f"{p}body is not an object: {short(r.body)}")
    expect(j.get("ok") is False, f"{p}ok is not false: {short(r.body)}")
    expect(j.get("error") == word,
           f"{p}error {j.get('error')!r}, want {word!r}: {short(r.body)}")
    d = j.get("detail")
    expect(isinstance(d, str) and d.strip() != "",
           f"{p}detail is not a non-empty string: {short(r.body)}")
    if status in (429, 503):
        ra = r.header("Retry-After")
        expect(ra is not None and ra.strip().isdigit() and int(ra) >= 1,
               f"{p}{status} without a Retry-After of whole seconds: {ra!r}")
    if status == 405:
        expect(r.header("Allow"), f"{p}405 without an Allow header")
    return j


def expect_not_5xx(r, what=""):
    expect(r.status < 500 or r.status == 503,
           f"{what + ': ' if what else ''}got {r.status}: {short(r.body)}")


# ------------------------------------------------------------- HTML tree

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children = []
        self.parts = []

    def text(self):
        return " ".join(" ".join(self.parts).split())

    def get(self, k, default=None):
        return self.attrs.get(k, default)


class _Builder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.all = []

    def handle_starttag(self, tag, attrs):
        n = Node(tag, {k: (v if v is not None else "") for k, v in attrs},
                 self.cur)
        self.cur.children.append(n)
        self.all.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, {k: (v if v is not None else "") for k, v in attrs},
                 self.cur)
        self.cur.children.append(n)
        self.all.append(n)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        n = self.cur
        while n is not None:
            n.parts.append(data)
            n = n.parent


# Elements whose end tag HTML lets a page leave out; ours close them all
# the same, except where the parser cannot tell (none of ours).
OPTIONAL_END = set()


class _Checker(html.parser.HTMLParser):
    """The page-level rules of HTML a parser can check: a doctype, <html
    lang>, one <title>, a charset; every element closed in order; ids
    unique; each label's for= names an element; each form control has a
    label (for=, wrapping, aria-label or aria-labelledby); each image an
    alt; no inline script, event handler or style attribute (the CSP
    forbids them)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.stack = []
        self.ids = {}
        self.label_for = []
        self.controls = []  # (id or None, labelled)
        self.doctype = False
        self.titles = 0
        self.charset = False
        self.lang = False

    def handle_decl(self, decl):
        if decl.lower() == "doctype html":
            self.doctype = True

    def _start(self, tag, attrs, void):
        a = {k: (v if v is not None else "") for k, v in attrs}
        where = f"<{tag}> at line {self.getpos()[0]}"
        if "id" in a:
            if a["id"] in self.ids:
                self.problems.append(f"id {a['id']!r} twice ({where})")
            self.ids[a["id"]] = tag
        for k in a:
            if k.startswith("on") or k == "style":
                self.problems.append(f"inline {k}= on {where}")
        if tag == "script" and "src" not in a:
            self.problems.append(f"inline script ({where})")
        if tag == "html":
            self.lang = bool(a.get("lang"))
        if tag == "meta" and a.get("charset", "").lower() == "utf-8":
            self.charset = True
        if tag == "title" and any(t == "head" for t, _ in self.stack):
            self.titles += 1  # not an SVG's <title>
        if tag == "img" and "alt" not in a:
            self.problems.append(f"no alt on {where}")
        if tag == "label" and a.get("for"):
            self.label_for.append(a["for"])
        if tag in ("input", "select", "textarea") and \
                a.get("type") not in ("hidden", "submit", "button",
                                      "reset"):
            labelled = bool(a.get("aria-label") or a.get("aria-labelledby")
                            or any(t == "label" for t, _ in self.stack))
            self.controls.append((a.get("id"), labelled, where))
        if not void:
            self.stack.append((tag, where))

    def handle_starttag(self, tag, attrs):
        self._start(tag, attrs, tag in VOID)

    def handle_startendtag(self, tag, attrs):
        self._start(tag, attrs, True)

    def handle_endtag(self, tag):
        if tag in VOID:
            self.problems.append(f"</{tag}> of a void element")
            return
        while self.stack and self.stack[-1][0] != tag and \
                self.stack[-1][0] in OPTIONAL_END:
            self.stack.pop()
        if not self.stack or self.stack[-1][0] != tag:
            top = self.stack[-1][1] if self.stack else "nothing"
            self.problems.append(f"</{tag}> at line {self.getpos()[0]} "
                                 f"closes {top}")
            # Resynchronise on the nearest open element of that name.
            for i in range(len(self.stack) - 1, -1, -1):
                if self.stack[i][0] == tag:
                    del self.stack[i:]
                    break
            return
        self.stack.pop()


def html_problems(text):
    """What is wrong with a page's HTML by _Checker's rules ([] if
    nothing)."""
    c = _Checker()
    c.feed(text)
    c.close()
    p = list(c.problems)
    if not c.doctype:
        p.append("no <!doctype html>")
    if not c.lang:
        p.append("no <html lang>")
    if c.titles != 1:
        p.append(f"{c.titles} <title> elements")
    if not c.charset:
        p.append("no <meta charset=utf-8>")
    for tag, where in c.stack:
        p.append(f"{where} never closed")
    for f in c.label_for:
        if f not in c.ids:
            p.append(f"<label for={f!r}> names no element")
    labelled = set(c.label_for)
    for id_, wrapped, where in c.controls:
        if not wrapped and id_ not in labelled:
            p.append(f"{where} has no label")
    return p


class Html:
    def __init__(self, text):
        b = _Builder()
        b.feed(text)
        b.close()
        self.nodes = b.all
        self.root = b.root

    def find(self, tag=None, **attrs):
        out = []
        for n in self.nodes:
            if tag and n.tag != tag:
                continue
            if all(n.attrs.get(k.rstrip("_")) == v for k, v in attrs.items()):
                out.append(n)
        return out

    def by_id(self, id_):
        f = [n for n in self.nodes if n.attrs.get("id") == id_]
        return f[0] if f else None

    def inside(self, node, tag=None):
        """The descendants of node (with the tag)."""
        out = []

        def walk(n):
            for c in n.children:
                if tag is None or c.tag == tag:
                    out.append(c)
                walk(c)
        walk(node)
        return out


def cookies_from(r):
    """name -> value from the Set-Cookie headers of a response."""
    out = {}
    for h in r.headers.get_all("Set-Cookie") or []:
        pair = h.split(";", 1)[0]
        if "=" in pair:
            k, v = pair.split("=", 1)
            out[k.strip()] = v.strip()
    return out


# ------------------------------------------------- fixtures via redeemctl

def ctl(*args, ok_codes=(0,), timeout=60):
    p = subprocess.run([os.path.join(BIN, "redeemctl"), *args],
                       capture_output=True, timeout=timeout, text=True,
                       env=os.environ.copy())
    if p.returncode not in ok_codes:
        raise Failure(f"redeemctl {' '.join(args)}: exit {p.returncode}: "
                      f"{short(p.stdout + p.stderr)}")
    return p


def verify():
    p = ctl("verify", ok_codes=(0, 1, 2, 3))
    expect(p.returncode == 0,
           f"redeemctl verify exit {p.returncode}: {short(p.stdout + p.stderr, 800)}")


_n = [0]
_nlock = threading.Lock()


def _next():
    with _nlock:
        _n[0] += 1
        return _n[0]


def uniq(prefix="c"):
    return f"{prefix}-{RUN}-{_next()}"


def account(prefix="u"):
    return f"{prefix}{_next()}-{RUN}@example.com"


def client_ip():
    """A fresh address for the abuse gate's client key, so one check's
    counted failures never throttle another."""
    n = _next() + int(RUN, 16) % 200 * 60000
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def campaign(*opts, name=None):
    name = name or uniq("camp")
    ctl("campaign", "create", "--name", name, *opts)
    return name


def codes(camp, count=1, max_uses=1, *opts):
    p = ctl("codes", "generate", "--campaign", camp, "--count", str(count),
            "--max-uses", str(max_uses), *opts)
    out = p.stdout.split()
    expect(len(out) == count, f"codes generate printed {len(out)} codes")
    return out


def code_info(code):
    r = api("GET", "/api/v1/codes/" + qcode(code))
    j = expect_json_ok(r, 200, f"GET code {code}")
    expect(isinstance(j.get("code"), dict), f"no code object: {short(r.body)}")
    return j["code"]


def redeem(code, acct, ip=None, key=None):
    body = {"code": code, "account": acct}
    body["client_ip"] = ip or client_ip()
    return api("POST", "/api/v1/redeem", body,
               key=REDEEM_KEY if key is None else key)


# ------------------------------------------------------------ concurrency

def race(reqs, timeout=60, ports=None):
    """Sends every request of reqs (method, path, body bytes, headers) on
    its own connection, all released at once by a barrier; request i goes
    to ports[i] on HOST when ports is given (another front end), else to
    PORT. Returns a list of Resp or exception, in order."""
    n = len(reqs)
    barrier = threading.Barrier(n)
    res = [None] * n

    def one(i):
        method, path, body, headers = reqs[i]
        conn = http.client.HTTPConnection(
            HOST, ports[i] if ports else PORT, timeout=timeout)
        try:
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            barrier.wait(timeout=timeout)
            conn.request(method, path, body=body, headers=headers)
            res[i] = _read(conn)
        except Exception as e:  # reported by the caller
            barrier.abort()
            res[i] = e
        finally:
            conn.close()

    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout + 10)
    return res


def redeem_req(code, acct, ip=None, key=None):
    body = json.dumps({"code": code, "account": acct,
                       "client_ip": ip or client_ip()}).encode()
    return ("POST", "/api/v1/redeem", body,
            {"Content-Type": "application/json",
             "Authorization": "Bearer " + (key or REDEEM_KEY)})


def wait_until(fn, timeout=10.0, step=0.05):
    """Polls fn until it returns a true value; returns it, or the last
    false value after timeout."""
    end = time.monotonic() + timeout
    v = fn()
    while not v and time.monotonic() < end:
        time.sleep(step)
        v = fn()
    return v


def proc_info(pid):
    """A process as /proc shows it (pid, comm, state, ppid, sid, cmd), or
    None when it is gone or not ours to read."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return None
    comm = st[st.index("(") + 1:st.rindex(")")]
    rest = st[st.rindex(")") + 2:].split()
    return {"pid": pid, "comm": comm, "state": rest[0], "ppid": int(rest[1]),
            "sid": int(rest[3]), "cmd": cmd}
