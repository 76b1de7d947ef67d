#!/usr/bin/env python3
"""The fault suite's webhook receiver: answers 200 to every POST and
appends each delivery, headers and raw body, as one JSON line to LOG.
The nemesis kills and restarts it; a restarted one appends to the same
log, so the log holds every delivery it ever answered.

Usage: receiver.py PORT LOG   (Python 3 standard library only)
"""

import http.server
import json
import os
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else b""
        rec = {"at": time.time(), "path": self.path,
               "headers": {k: v for k, v in self.headers.items()},
               "body": body.decode("utf-8", "replace")}
        line = (json.dumps(rec, sort_keys=True) + "\n").encode()
        # One write(2) per line on an O_APPEND descriptor: a kill leaves
        # no half line, and threads never interleave.
        fd = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                     0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *a):
        pass


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])),
                                          Handler)
    srv.daemon_threads = True
    srv.serve_forever()


if __name__ == "__main__":
    main()
