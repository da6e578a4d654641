#!/usr/bin/env python3
"""A hostile HTTP peer for the agent's sinks and fleet template (issue 29),
run inside the campaign's namespace:

  http_peer.py PORT LOG MODE [ARG]

  ok               200 to everything
  redirect URL     302 to URL
  slow SECONDS     200 after SECONDS
  stall            read the request, answer nothing for 60 s
  template FILE    FILE's text with ETag "v1"; 304 to If-None-Match: "v1"

Every request's head goes to LOG, one JSON line each. Runs until killed."""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, LOG, MODE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ARG = sys.argv[4] if len(sys.argv) > 4 else ""
lock = threading.Lock()


class Peer(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(min(n, 64 << 20))
        with lock, open(LOG, "a") as f:
            f.write(json.dumps({"t": time.time(), "line": self.requestline,
                                "headers": dict(self.headers)}) + "\n")
        if MODE == "stall":
            time.sleep(60)
            return
        if MODE == "slow":
            time.sleep(float(ARG))
        if MODE == "redirect":
            self.send_response(302)
            self.send_header("Location", ARG)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"Ok.\n"
        etag = None
        if MODE == "template":
            if self.headers.get("If-None-Match") == '"v1"':
                self.send_response(304)
                self.send_header("ETag", '"v1"')
                self.end_headers()
                return
            body = open(ARG, "rb").read()
            etag = '"v1"'
        self.send_response(200)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = answer
    do_POST = answer


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Peer).serve_forever()
