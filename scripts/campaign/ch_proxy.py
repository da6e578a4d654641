#!/usr/bin/env python3
"""A hostile HTTP proxy in front of ClickHouse (issue 29, item 2): every
EVERY-th INSERT, up to MAX times, reaches ClickHouse without its last byte,
and then either the client's connection is reset at once and the last byte
follows DELAY s later (mode `reset`: the reply is lost, the commit comes
later), or the last byte follows DELAY s later while the client waits
(mode `slow`: an insert slower than the client's timeout). Every other
request passes through, one per connection.

  ch_proxy.py LISTEN_PORT UPSTREAM_PORT MODE DELAY EVERY MAX STATS_FILE

Writes {"inserts": N, "troubled": K} to STATS_FILE after each request.
Bounded: every socket has a 30 s timeout; it runs until killed."""

import json
import socket
import struct
import sys
import threading
import time

LISTEN, UPSTREAM, MODE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
DELAY, EVERY, MAX, STATS = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
lock = threading.Lock()
stats = {"inserts": 0, "troubled": 0}


def read_request(c):
    data = b""
    while b"\r\n\r\n" not in data:
        b = c.recv(65536)
        if not b:
            return None, None
        data += b
        if len(data) > 1 << 20:
            return None, None
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    length = 0
    kept = [lines[0]]
    for l in lines[1:]:
        k = l.split(b":", 1)[0].strip().lower()
        if k == b"content-length":
            length = int(l.split(b":", 1)[1])
        if k in (b"connection", b"keep-alive"):
            continue
        kept.append(l)
    kept.append(b"Connection: close")
    while len(body) < length:
        b = c.recv(1 << 20)
        if not b:
            return None, None
        body += b
    return b"\r\n".join(kept) + b"\r\n\r\n", body


def relay_reply(up, c):
    while True:
        b = up.recv(65536)
        if not b:
            return
        if c is not None:
            try:
                c.sendall(b)
            except OSError:
                c = None


def handle(c):
    c.settimeout(30)
    try:
        head, body = read_request(c)
        if head is None:
            return
        up = socket.create_connection(("127.0.0.1", UPSTREAM), timeout=30)
        insert = b"query=INSERT" in head.split(b"\r\n")[0] or body.lstrip()[:6].upper() == b"INSERT"
        trouble = False
        with lock:
            if insert:
                stats["inserts"] += 1
                trouble = stats["inserts"] % EVERY == 0 and stats["troubled"] < MAX
                stats["troubled"] += trouble
            with open(STATS, "w") as f:
                json.dump(stats, f)
        if not trouble:
            up.sendall(head + body)
            relay_reply(up, c)
            return
        up.sendall(head + body[:-1])
        if MODE == "reset":
            # RST: the client sees its request fail, the server carries on.
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.close()
            c = None
        time.sleep(DELAY)
        up.sendall(body[-1:])
        relay_reply(up, c)
    except OSError:
        pass
    finally:
        if c is not None:
            c.close()


def main():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", LISTEN))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
